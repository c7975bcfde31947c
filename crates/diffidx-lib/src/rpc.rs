//! JSON-RPC 2.0 over the query server's Unix socket (one request or batch
//! a line, as many lines as the client likes) and over HTTP (`serve
//! --http`, one request or batch per POST). Methods and params are those of
//! [`crate::api`]; a result is the JSON the command prints with `--json`.
//!
//! Both front ends are clients of the query layer like the CLI is: a call
//! runs on its own thread and asks the query server for what needs the
//! store, so the server's loop, which owns the store, never waits on them.

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;

use serde_json::{json, Value};

use crate::api::{self, ApiError, ErrorKind};

/// Where calls run: the repository's directory, and the program to start
/// as its query server.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub dir: PathBuf,
    pub server: Option<PathBuf>,
}

impl Endpoint {
    /// The response to one line (or HTTP body) of JSON-RPC; `None` when it
    /// held only notifications.
    pub fn answer(&self, text: &str) -> Option<String> {
        let response = match serde_json::from_str::<Value>(text) {
            Err(e) => Some(error(Value::Null, -32700, &format!("parse error: {e}"))),
            Ok(Value::Array(batch)) if batch.is_empty() => Some(error(
                Value::Null,
                -32600,
                "invalid request: an empty batch",
            )),
            Ok(Value::Array(batch)) => {
                let answers: Vec<Value> = batch.into_iter().filter_map(|r| self.one(r)).collect();
                (!answers.is_empty()).then_some(Value::Array(answers))
            }
            Ok(request) => self.one(request),
        };
        response.map(|r| r.to_string())
    }

    /// The response to one request object (`None` for a notification).
    fn one(&self, request: Value) -> Option<Value> {
        let Value::Object(mut request) = request else {
            return Some(error(Value::Null, -32600, "invalid request: not an object"));
        };
        let id = request.remove("id");
        let notification = id.is_none();
        let id = id.unwrap_or(Value::Null);
        if request.get("jsonrpc") != Some(&json!("2.0")) {
            return Some(error(
                id,
                -32600,
                "invalid request: jsonrpc must be \"2.0\"",
            ));
        }
        let Some(Value::String(method)) = request.remove("method") else {
            return Some(error(id, -32600, "invalid request: no method"));
        };
        let params = request.remove("params").unwrap_or(Value::Null);
        if !matches!(params, Value::Object(_) | Value::Null) {
            return Some(error(
                id,
                -32602,
                "invalid params: give them by name, as an object",
            ));
        }
        if api::Method::parse(&method).is_none() {
            let methods = api::Method::ALL.map(api::Method::name).join(", ");
            let message = format!("method not found: {method:?}; the methods are {methods}");
            return (!notification).then(|| error(id, -32601, &message));
        }
        let repo = diffidx_core::git::Repo::discover(&self.dir).ok();
        let outcome = api::call(repo.as_ref(), &method, params, self.server.as_deref());
        if notification {
            return None;
        }
        Some(match outcome {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(e) => failure(id, &e),
        })
    }

    /// Answers the lines of one socket client until it hangs up; `first`
    /// is the line already read.
    pub fn serve_stream(&self, stream: UnixStream, first: String) {
        let _ = stream.set_read_timeout(None);
        let _ = stream.set_write_timeout(None);
        let mut writer = &stream;
        let mut reader = BufReader::new(&stream);
        let mut line = first;
        loop {
            if !line.trim().is_empty() {
                if let Some(mut response) = self.answer(&line) {
                    response.push('\n');
                    if writer.write_all(response.as_bytes()).is_err() {
                        return;
                    }
                }
            }
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    }
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn failure(id: Value, e: &ApiError) -> Value {
    let kind = match e.kind {
        ErrorKind::Usage => "usage",
        ErrorKind::NotFound => "not_found",
        ErrorKind::Failed => "failed",
    };
    json!({"jsonrpc": "2.0", "id": id,
           "error": {"code": e.code(), "message": e.message, "data": {"kind": kind}}})
}

/// True when a line read from the socket is JSON-RPC rather than the
/// server's own protocol.
pub fn is_json_rpc(line: &str) -> bool {
    match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(request)) => request.contains_key("jsonrpc"),
        Ok(Value::Array(_)) => true,
        // Not JSON: a JSON-RPC client gets its parse error, if it was one.
        _ => line.trim_start().starts_with('['),
    }
}

/// The address `--http` binds: `PORT` means loopback; a host that is not
/// loopback needs `allow_remote` (the service has no authentication).
pub fn http_address(text: &str, allow_remote: bool) -> Result<SocketAddr, String> {
    let address: SocketAddr = match text.parse::<u16>() {
        Ok(port) => SocketAddr::from(([127, 0, 0, 1], port)),
        Err(_) => text.parse().map_err(|_| {
            format!("--http {text:?} is not PORT or HOST:PORT (e.g. 8417 or 127.0.0.1:8417)")
        })?,
    };
    if !address.ip().is_loopback() && !allow_remote {
        return Err(format!(
            "--http {address} is not a loopback address; the service has no authentication, \
             so serving other hosts needs --allow-remote"
        ));
    }
    Ok(address)
}

/// Serves JSON-RPC over HTTP on `listener` until the process ends: POST a
/// request or batch (any path) and get the response (204 for notifications).
pub fn serve_http(endpoint: Endpoint, listener: std::net::TcpListener) -> std::io::Result<()> {
    use http_body_util::{BodyExt, Full};
    use hyper::body::Bytes;
    use hyper::{Method, Request, Response, StatusCode};

    listener.set_nonblocking(true)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        loop {
            let (stream, _) = match listener.accept().await {
                Ok(pair) => pair,
                Err(_) => continue,
            };
            let endpoint = endpoint.clone();
            tokio::spawn(async move {
                let service =
                    hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
                        let endpoint = endpoint.clone();
                        async move {
                            let reply = |status: StatusCode, body: String| {
                                Response::builder()
                                    .status(status)
                                    .header("content-type", "application/json")
                                    .body(Full::new(Bytes::from(body)))
                            };
                            if request.method() != Method::POST {
                                return reply(
                                    StatusCode::METHOD_NOT_ALLOWED,
                                    error(Value::Null, -32600, "POST a JSON-RPC 2.0 request")
                                        .to_string(),
                                );
                            }
                            let body = match request.into_body().collect().await {
                                Ok(body) => body.to_bytes(),
                                Err(e) => {
                                    return reply(
                                        StatusCode::BAD_REQUEST,
                                        error(Value::Null, -32700, &e.to_string()).to_string(),
                                    )
                                }
                            };
                            let text = String::from_utf8_lossy(&body).into_owned();
                            let answer =
                                tokio::task::spawn_blocking(move || endpoint.answer(&text)).await;
                            match answer {
                                Ok(Some(body)) => reply(StatusCode::OK, body),
                                Ok(None) => reply(StatusCode::NO_CONTENT, String::new()),
                                Err(e) => reply(
                                    StatusCode::INTERNAL_SERVER_ERROR,
                                    error(Value::Null, -32603, &e.to_string()).to_string(),
                                ),
                            }
                        }
                    });
                let io = hyper_util::rt::TokioIo::new(stream);
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service)
                    .await;
            });
        }
    })
}

/// The directory calls on behalf of `repo` run in.
pub fn dir_of(repo: &diffidx_core::git::Repo) -> PathBuf {
    repo.work_dir().unwrap_or_else(|| repo.common_dir())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint() -> Endpoint {
        Endpoint {
            dir: std::env::temp_dir(),
            server: None,
        }
    }

    #[test]
    fn protocol_errors_have_their_codes_and_notifications_no_answer() {
        let e = endpoint();
        let code = |text: &str| -> i64 {
            let v: Value = serde_json::from_str(&e.answer(text).unwrap()).unwrap();
            v["error"]["code"].as_i64().unwrap()
        };
        assert_eq!(code("{not json"), -32700);
        assert_eq!(code("[]"), -32600);
        assert_eq!(
            code(r#"{"jsonrpc":"1.0","id":1,"method":"status"}"#),
            -32600
        );
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1,"method":"nope"}"#), -32601);
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"search","params":["x"]}"#),
            -32602
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"search","params":{"quer":"x"}}"#),
            -32602
        );
        assert!(e.answer(r#"{"jsonrpc":"2.0","method":"nope"}"#).is_none());
    }

    #[test]
    fn json_rpc_is_told_from_the_servers_own_requests() {
        assert!(is_json_rpc(r#"{"jsonrpc":"2.0","id":1,"method":"status"}"#));
        assert!(is_json_rpc(
            r#"[{"jsonrpc":"2.0","id":1,"method":"status"}]"#
        ));
        assert!(!is_json_rpc(
            r#"{"op":"search","query":"\"jsonrpc\"","limit":1}"#
        ));
        assert!(!is_json_rpc(r#"{"op":"ping"}"#));
    }

    #[test]
    fn http_binds_loopback_unless_told_otherwise() {
        assert_eq!(
            http_address("8417", false).unwrap(),
            "127.0.0.1:8417".parse::<SocketAddr>().unwrap()
        );
        assert!(http_address("0.0.0.0:8417", false).is_err());
        assert!(http_address("0.0.0.0:8417", true).is_ok());
        assert!(http_address("[::1]:8417", false).is_ok());
        assert!(http_address("localhost", false).is_err());
    }
}
