//! One query layer, three doors: the CLI's `--json`, JSON-RPC 2.0 (on the
//! query server's socket and over HTTP) and MCP over stdio give the same
//! answers, method for method.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::{succeeded, TestRepo};
use serde_json::{json, Value};

const T0: u64 = 1_700_000_000;

/// A C# repository with a call, an edit and a deletion, indexed, and a
/// service map naming it.
fn repo() -> (TestRepo, tempfile::TempDir) {
    let mut repo = TestRepo::new();
    repo.write(
        "src/Cart.cs",
        "namespace Shop { class Cart { int Total() => 1; int Tax() => Total() / 10; void Old() {} } }\n",
    );
    repo.commit_at("cart", T0);
    repo.write(
        "src/Cart.cs",
        "namespace Shop { class Cart { int Total() => 2; int Tax() => Total() / 10; } }\n",
    );
    repo.commit_at("total changes, old goes", T0 + 3600);
    succeeded(&repo.diffidx(&["index"]));
    let maps = tempfile::tempdir().unwrap();
    std::fs::write(
        maps.path().join("services.toml"),
        format!("[services.shop]\nrepo = {:?}\n", repo.path()),
    )
    .unwrap();
    (repo, maps)
}

/// Each method's params, and the CLI arguments that ask the same.
fn cases(map: &str) -> Vec<(&'static str, Value, Vec<String>)> {
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        (
            "search",
            json!({"query": "totl"}),
            args(&["search", "totl", "--json"]),
        ),
        (
            "log",
            json!({"symbol": "Cart.Total"}),
            args(&["log", "--symbol", "Cart.Total", "--json"]),
        ),
        (
            "show",
            json!({"rev": "HEAD"}),
            args(&["show", "HEAD", "--json"]),
        ),
        (
            "graph",
            json!({"symbol": "Cart.Total", "direction": "callers"}),
            args(&["graph", "Cart.Total", "--callers", "--json"]),
        ),
        ("impact", json!({}), args(&["impact", "--json"])),
        (
            "context",
            json!({"service": "shop", "since": (T0 + 1).to_string(), "map": map}),
            args(&[
                "context",
                "--service",
                "shop",
                "--since",
                &(T0 + 1).to_string(),
                "--map",
                map,
                "--json",
            ]),
        ),
    ]
}

fn cli(repo: &TestRepo, args: &[String]) -> Value {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = repo.diffidx_env(&args, &[("DIFFIDX_SERVER", "off")]);
    succeeded(&out);
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `serve` in the background, and the address its HTTP side listens on.
struct Server {
    child: Child,
    http: String,
}

impl Server {
    fn start(repo: &TestRepo) -> Server {
        let mut child = repo
            .command(common::bin())
            .args(["serve", "--http", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let http = first
            .trim()
            .strip_prefix("serving JSON-RPC on http://")
            .unwrap_or_else(|| panic!("{first}"))
            .to_owned();
        repo.wait_for_socket(Duration::from_secs(10));
        Server { child, http }
    }

    /// POSTs a body; returns the status code and the body of the answer.
    fn post(&self, body: &str) -> (u16, String) {
        let mut stream = std::net::TcpStream::connect(&self.http).unwrap();
        write!(
            stream,
            "POST / HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.http,
            body.len()
        )
        .unwrap();
        let mut reply = String::new();
        stream.read_to_string(&mut reply).unwrap();
        let (head, body) = reply.split_once("\r\n\r\n").unwrap();
        let status = head.split(' ').nth(1).unwrap().parse().unwrap();
        (status, body.to_owned())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn json_rpc_on_the_socket_and_over_http_answers_like_the_cli() {
    let (repo, maps) = repo();
    let map = maps.path().join("services.toml");
    let cases = cases(map.to_str().unwrap());
    let server = Server::start(&repo);

    // The socket: every request on one connection, answered in order.
    let stream = UnixStream::connect(repo.socket()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut lines = BufReader::new(stream.try_clone().unwrap());
    let mut writer = &stream;
    for (n, (method, params, args)) in cases.iter().enumerate() {
        let request = json!({"jsonrpc": "2.0", "id": n, "method": method, "params": params});
        writeln!(writer, "{request}").unwrap();
        let mut line = String::new();
        lines.read_line(&mut line).unwrap();
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(answer["id"], n, "{answer}");
        assert_eq!(
            answer["result"],
            cli(&repo, args),
            "{method} over the socket"
        );
        // Over HTTP, the same.
        let (status, body) = server.post(&request.to_string());
        assert_eq!(status, 200);
        let answer: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(answer["result"], cli(&repo, args), "{method} over HTTP");
    }
    // A non-empty answer each, so that equality means something.
    assert!(cli(&repo, &cases[0].2)[0]["qualname"] == "Shop.Cart.Total");
    // Old deleted; Total, and so Cart and Shop, modified.
    let context = cli(&repo, &cases[5].2);
    assert_eq!(context.as_array().unwrap().len(), 4, "{context}");
    assert_eq!(context[0]["qualname"], "Shop.Cart.Old");

    // Status agrees but for who answered.
    let (_, body) = server.post(r#"{"jsonrpc":"2.0","id":"s","method":"status"}"#);
    let status: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(status["result"]["indexed_commits"], 2);
    assert_eq!(status["result"]["query_server"], true);

    // Errors: a batch with a notification, a name that matches nothing,
    // an unknown method, a misspelt parameter.
    let (status, body) = server.post(
        r#"[{"jsonrpc":"2.0","method":"status"},
            {"jsonrpc":"2.0","id":1,"method":"log","params":{"symbol":"Nope"}},
            {"jsonrpc":"2.0","id":2,"method":"blame"},
            {"jsonrpc":"2.0","id":3,"method":"search","params":{"qurey":"x"}}]"#,
    );
    assert_eq!(status, 200);
    let batch: Value = serde_json::from_str(&body).unwrap();
    let codes: Vec<i64> = batch
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["error"]["code"].as_i64().unwrap())
        .collect();
    assert_eq!(codes, [-32001, -32601, -32602], "{batch}");
    let (status, _) = server.post(r#"{"jsonrpc":"2.0","method":"status"}"#);
    assert_eq!(status, 204);
}

/// `git diffidx mcp` and a line-oriented JSON-RPC conversation with it.
struct Mcp {
    child: Child,
    lines: BufReader<std::process::ChildStdout>,
}

impl Mcp {
    fn start(repo: &TestRepo) -> Mcp {
        let mut child = repo
            .command(common::bin())
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap());
        Mcp { child, lines }
    }

    fn send(&mut self, message: Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    fn ask(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut line = String::new();
        self.lines.read_line(&mut line).unwrap();
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn mcp_over_stdio_lists_the_tools_and_answers_like_the_cli() {
    let (repo, maps) = repo();
    let map = maps.path().join("services.toml");
    let mut mcp = Mcp::start(&repo);
    let init = mcp.ask(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "diffidx-test", "version": "1"}}),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "diffidx", "{init}");
    assert!(
        init["result"]["capabilities"]["tools"].is_object(),
        "{init}"
    );
    mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let list = mcp.ask(2, "tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["search", "log", "show", "graph", "impact", "context", "status"]
    );
    for tool in tools {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert!(tool["description"].as_str().unwrap().len() > 20);
    }
    let search = &tools[0]["inputSchema"];
    assert_eq!(search["required"], json!(["query"]));
    assert!(search["properties"]["limit"].is_object());
    let context = &tools[5]["inputSchema"];
    assert!(context["required"]
        .as_array()
        .unwrap()
        .contains(&json!("service")));

    let mut id = 10;
    for (method, params, args) in cases(map.to_str().unwrap()) {
        id += 1;
        let answer = mcp.ask(
            id,
            "tools/call",
            json!({"name": method, "arguments": params}),
        );
        let result = &answer["result"];
        assert_eq!(result["isError"], false, "{answer}");
        let text = result["content"][0]["text"].as_str().unwrap();
        let value: Value = serde_json::from_str(text).unwrap();
        let expected = cli(&repo, &args);
        assert_eq!(value, expected, "{method} over MCP");
        if expected.is_object() {
            assert_eq!(result["structuredContent"], expected, "{method}");
        }
    }

    // A query that fails is the tool's answer, for the model to read.
    let answer = mcp.ask(
        30,
        "tools/call",
        json!({"name": "log", "arguments": {"symbol": "Nope"}}),
    );
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("no indexed symbol matches"), "{text}");
    let unknown = mcp.ask(31, "tools/call", json!({"name": "blame", "arguments": {}}));
    assert!(unknown["error"]["message"]
        .as_str()
        .unwrap()
        .contains("unknown tool"));

    // Closing stdin ends the server.
    drop(mcp.child.stdin.take());
    let started = Instant::now();
    while mcp.child.try_wait().unwrap().is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "mcp did not exit"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
