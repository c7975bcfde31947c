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

use crate::codegraph::{GraphAnswer, GraphQuery, ImpactAnswer};
use crate::protocol::{HistoryRequest, ImpactRequest, Request, Response, WindowRequest};
use crate::search::{SearchAnswer, SearchQuery};
use crate::store::HistoryEntry;
use crate::store::WindowAnswer;

/// Unix socket paths are limited to about 100 bytes.
pub const MAX_SOCKET_PATH: usize = 100;

/// What a server answered to a history query.
pub struct Answer {
    pub entries: Vec<HistoryEntry>,
    pub head_indexed: Option<bool>,
    pub indexed_from: Option<String>,
    pub suggestions: Vec<String>,
    pub known: bool,
    pub hidden: usize,
}

/// One request, one response.
fn call(socket: &Path, request: &Request, timeout: Duration) -> std::io::Result<Response> {
    call_on(UnixStream::connect(socket)?, request, timeout)
}

fn call_on(stream: UnixStream, request: &Request, timeout: Duration) -> std::io::Result<Response> {
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    let mut line = serde_json::to_string(request).map_err(std::io::Error::other)?;
    line.push('\n');
    (&stream).write_all(line.as_bytes())?;
    let mut reply = String::new();
    BufReader::new(&stream).read_line(&mut reply)?;
    serde_json::from_str(&reply).map_err(std::io::Error::other)
}

/// How long a query may take on the server before the client answers it
/// itself.
const QUERY_WAIT: Duration = Duration::from_secs(10);

/// How long a server may take to close the store when asked.
const RELEASE_WAIT: Duration = Duration::from_secs(3);

/// What [`release`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Released {
    /// No server was listening.
    NoServer,
    /// The server closed the store.
    Closed,
    /// The server could not answer (stopped, or wedged past [`RELEASE_WAIT`])
    /// and was killed: a reader is only a cache, and it held the store.
    Killed { pid: i32, stopped: bool },
}

/// Asks a running server to close the store, and waits until it has (or
/// there is none). Called before every read-write open of the store. A
/// server that cannot answer would hold the store for good, so one that is
/// stopped (found at once, from the socket's peer) or does not answer in
/// time is killed instead.
pub fn release(socket: &Path) -> Released {
    if !socket.exists() {
        return Released::NoServer;
    }
    let Ok(stream) = UnixStream::connect(socket) else {
        return Released::NoServer;
    };
    let pid = rustix::net::sockopt::socket_peercred(&stream)
        .ok()
        .map(|cred| cred.pid)
        .filter(|&pid| pid != rustix::process::getpid());
    if let Some(pid) = pid.filter(|&pid| is_stopped(pid)) {
        return kill(pid, true);
    }
    match call_on(stream, &Request::Release, RELEASE_WAIT) {
        Ok(_) => Released::Closed,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            match pid {
                Some(pid) => kill(pid, false),
                None => Released::NoServer,
            }
        }
        Err(_) => Released::NoServer,
    }
}

/// A process's state letter from `/proc/PID/stat` (`R`, `S`, `T`, `Z`, ...).
fn process_state(pid: rustix::process::Pid) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.as_raw_nonzero())).ok()?;
    // `pid (comm) state ...`; comm may hold spaces and parentheses.
    stat.rsplit_once(") ")?.1.chars().next()
}

/// Stopped by SIGSTOP or a debugger.
fn is_stopped(pid: rustix::process::Pid) -> bool {
    matches!(process_state(pid), Some('T' | 't'))
}

fn kill(pid: rustix::process::Pid, stopped: bool) -> Released {
    let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
    // Wait for it to be gone, so that its hold on the store is released.
    let started = std::time::Instant::now();
    while started.elapsed() < RELEASE_WAIT
        && process_state(pid).is_some_and(|state| !matches!(state, 'Z' | 'X'))
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    Released::Killed {
        pid: pid.as_raw_nonzero().get(),
        stopped,
    }
}
/// The history from a running server; `None` when there is no usable one.
pub fn history(
    socket: &Path,
    query: &SymbolQuery,
    head: Option<String>,
    in_history: bool,
) -> Option<Answer> {
    let request = Request::History(HistoryRequest {
        query: query.clone(),
        head,
        in_history,
    });
    match call(socket, &request, QUERY_WAIT) {
        Ok(Response {
            ok: true,
            entries,
            head_indexed,
            indexed_from,
            suggestions,
            known,
            hidden,
            in_history: kept_to_history,
            ..
        }) if kept_to_history || !in_history => Some(Answer {
            entries,
            head_indexed,
            indexed_from,
            suggestions,
            known,
            hidden,
        }),
        _ => None,
    }
}

/// Asks a running server `request` and takes one boxed part of a
/// successful answer with `part`; `None` when there is no usable server.
fn ask<T>(
    socket: &Path,
    request: Request,
    part: impl FnOnce(Response) -> Option<Box<T>>,
) -> Option<T> {
    call(socket, &request, QUERY_WAIT)
        .ok()
        .filter(|response| response.ok)
        .and_then(part)
        .map(|answer| *answer)
}

/// The code graph around a symbol from a running server; `None` when
/// there is no usable one.
pub fn graph(socket: &Path, query: &GraphQuery) -> Option<GraphAnswer> {
    ask(socket, Request::Graph(query.clone()), |r| r.graph)
}

/// A search from a running server; `None` when there is no usable one.
pub fn search(socket: &Path, query: &SearchQuery) -> Option<SearchAnswer> {
    ask(socket, Request::Search(query.clone()), |r| r.search)
}

/// An incident window's changes from a running server; `None` when there
/// is no usable one.
pub fn window(socket: &Path, request: &WindowRequest) -> Option<WindowAnswer> {
    ask(socket, Request::Window(request.clone()), |r| r.window)
}

/// How well symbols match words, from a running server; `None` when there
/// is no usable one.
pub fn relevance(
    socket: &Path,
    request: &crate::protocol::RelevanceRequest,
) -> Option<crate::protocol::Relevance> {
    ask(socket, Request::Relevance(request.clone()), |r| r.relevance)
}

/// The blast radius of a change from a running server; `None` when there
/// is no usable one.
pub fn impact(socket: &Path, request: &ImpactRequest) -> Option<ImpactAnswer> {
    ask(socket, Request::Impact(request.clone()), |r| r.impact)
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
