//! The client side of the query server (`crate::server`): ask it for a
//! history, ask it to let go of the store, see whether it runs, start it.
//!
//! Whatever goes wrong (no server, a dead one, a busy one, a protocol
//! mismatch) reads as "no answer", and the caller answers the query itself,
//! so a server only ever makes answers faster, never different.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use diffidx_core::SymbolQuery;

use crate::protocol::{Request, Response};
use crate::store::HistoryEntry;

/// Unix socket paths are limited to about 100 bytes.
pub const MAX_SOCKET_PATH: usize = 100;

/// What a server answered to a history query.
pub struct Answer {
    pub entries: Vec<HistoryEntry>,
    pub head_indexed: Option<bool>,
}

/// One request, one response.
fn call(socket: &Path, request: &Request, timeout: Duration) -> std::io::Result<Response> {
    let stream = UnixStream::connect(socket)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    let mut line = serde_json::to_string(request).map_err(std::io::Error::other)?;
    line.push('\n');
    (&stream).write_all(line.as_bytes())?;
    let mut reply = String::new();
    BufReader::new(&stream).read_line(&mut reply)?;
    serde_json::from_str(&reply).map_err(std::io::Error::other)
}

/// Asks a running server to close the store, and waits until it has (or
/// there is none). Called before every read-write open of the store.
pub fn release(socket: &Path) {
    if socket.exists() {
        let _ = call(socket, &Request::Release, Duration::from_secs(10));
    }
}

/// The history from a running server; `None` when there is no usable one.
pub fn history(socket: &Path, query: &SymbolQuery, head: Option<String>) -> Option<Answer> {
    let request = Request::History {
        query: query.clone(),
        head,
    };
    match call(socket, &request, Duration::from_secs(10)) {
        Ok(Response {
            ok: true,
            entries,
            head_indexed,
            ..
        }) => Some(Answer {
            entries,
            head_indexed,
        }),
        _ => None,
    }
}

/// Whether a server answers on this socket.
pub fn is_running(socket: &Path) -> bool {
    socket.exists() && call(socket, &Request::Ping, Duration::from_secs(2)).is_ok_and(|r| r.ok)
}

/// Starts `program serve` in `work_dir`, in the background and in its own
/// process group, unless a server already answers on `socket` or the
/// socket's path would be too long.
pub fn spawn(socket: &Path, program: &Path, work_dir: &Path) {
    if socket.as_os_str().len() > MAX_SOCKET_PATH || is_running(socket) {
        return;
    }
    use std::os::unix::process::CommandExt;
    let _ = std::process::Command::new(program)
        .arg("serve")
        .current_dir(work_dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn();
}
