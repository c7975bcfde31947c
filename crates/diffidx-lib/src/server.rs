//! The query server: a long-lived reader that answers history, code-graph,
//! impact and search queries from an open store (`git diffidx serve`); its
//! client is `crate::client`. With the semantic layer on it also keeps the
//! embedding model and the vectors loaded (loading them costs 100-400 ms).
//!
//! Opening the store costs about 30 ms and the first query about 10 ms
//! more: most of a `log --symbol` run. A process that keeps the store open
//! answers in a few milliseconds. The engine lets one process write or several
//! read, never both, so the reader yields to writers: every read-write open
//! first asks it to close the store (`client::release`); it tries to reopen
//! on the next query and every 100 ms after a release, which fails
//! (harmlessly) while a writer has the store. It never takes the writer
//! lock, so the hooks' hand-over between writers is not disturbed.
//!
//! The server exits when idle, when its socket is removed or replaced
//! (the repository was deleted, another server took over), or when its
//! executable is replaced (diffidx was upgraded: the next query starts
//! the new one, instead of the old one answering until it idles out).

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use diffidx_core::git::Repo;
use diffidx_core::SymbolQuery;

use crate::client::{self, MAX_SOCKET_PATH};
use crate::protocol::{HistoryRequest, ImpactRequest, Request, Response};
use crate::semantic::{configured_source, SemanticError, SemanticSearcher, SemanticStamp};
use crate::state::{StateDir, StateError};
use crate::store::{HeldHistory, NamesNear, Reader, Store, StoreError};

/// Serves queries until idle for `idle` (zero: never), or until the socket
/// is removed or replaced. `on_request` hears of every request (for
/// `serve`'s output). JSON-RPC clients of the socket are answered on threads
/// of their own, which start `program` as the query server if need be.
/// Returns at once when another server is already running.
pub fn serve(
    repo: &Repo,
    idle: Duration,
    program: Option<&Path>,
    mut on_request: impl FnMut(&str),
) -> Result<(), StateError> {
    let endpoint = crate::rpc::Endpoint {
        dir: crate::rpc::dir_of(repo),
        server: program.map(Path::to_owned),
    };
    let state = StateDir::of(repo);
    let path = state.socket();
    let io_error = |source| StateError::Io {
        path: path.clone(),
        source,
    };
    if path.as_os_str().len() > MAX_SOCKET_PATH {
        return Err(io_error(std::io::Error::other(
            "the socket path is too long for a Unix socket",
        )));
    }
    if client::is_running(&path) {
        on_request("another server is already running");
        return Ok(());
    }
    // Never create anything where there is no store: the repository may be
    // on its way out (a temp dir being deleted).
    let store = state.store();
    if !store.exists() {
        return Err(StateError::Io {
            path: store,
            source: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no index here yet; run `git diffidx init` or `git diffidx index` first",
            ),
        });
    }
    let _ = std::fs::remove_file(&path); // a dead server's
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(io_error)?;
    runtime.block_on(async {
        let listener = tokio::net::UnixListener::bind(&path).map_err(io_error)?;
        let inode = std::fs::metadata(&path).map_err(io_error)?.ino();
        let executable = std::env::current_exe()
            .ok()
            .and_then(|exe| Some((file_identity(&exe)?, exe)));
        let mut clients = Clients {
            listener,
            path: &path,
            store: &store,
            inode,
            executable,
            idle,
            last: Instant::now(),
            reopen_when_free: false,
        };
        // Closed: answer what needs no store; open it for a query, or
        // (tried on ticks) once the writer that asked for it is done.
        let mut last_query: Option<Request> = None;
        let mut ancestors = AncestorCache::default();
        let mut searcher = SearchCache::default();
        while let Some(event) = clients.next().await {
            let pending = match event {
                Event::Reopen => None,
                Event::Rpc(stream, line) => {
                    rpc_client(&endpoint, stream, line, &mut on_request);
                    continue;
                }
                Event::Client(stream, Ok(request)) if request.reads_the_store() => {
                    Some((stream, request))
                }
                Event::Client(stream, other) => {
                    answer_closed(&stream, other, &mut on_request);
                    continue;
                }
            };
            let store = match open_read_only(&state) {
                Ok(store) => store,
                Err(response) => {
                    match pending {
                        Some((stream, request)) => {
                            reply(&stream, &request, *response, &mut on_request)
                        }
                        // Released to a writer: keep trying on ticks. A
                        // store caught mid-write may fail other ways than
                        // "busy" (changes to replay, files being replaced).
                        None => {
                            if !response.busy {
                                on_request(&format!(
                                    "could not reopen the store yet: {}",
                                    response.error.as_deref().unwrap_or("unknown")
                                ));
                            }
                            clients.reopen_when_free = true;
                        }
                    }
                    continue;
                }
            };
            let reader = match store.reader() {
                Ok(reader) => reader,
                Err(e) => {
                    match pending {
                        Some((stream, request)) => {
                            let failure = Response::failure(e.to_string());
                            reply(&stream, &request, failure, &mut on_request);
                        }
                        None => clients.reopen_when_free = true,
                    }
                    continue;
                }
            };
            clients.reopen_when_free = false;
            searcher.store_opened();
            if pending.is_none() {
                // Warm the statements the last query used.
                if let Some(request) = &last_query {
                    let _ = answer_open(
                        repo,
                        &reader,
                        &mut ancestors,
                        &mut searcher,
                        request.clone(),
                    );
                }
                on_request("reopened the store after a writer");
            }
            // Open: answer from the reader until a writer asks for the store
            // (or a query fails: reopen for the next one).
            let mut pending = pending;
            loop {
                if let Some((stream, request)) = pending.take() {
                    let response = answer_open(
                        repo,
                        &reader,
                        &mut ancestors,
                        &mut searcher,
                        request.clone(),
                    );
                    let failed = !response.ok;
                    reply(&stream, &request, response, &mut on_request);
                    last_query = Some(request);
                    if failed {
                        break;
                    }
                }
                let Some(event) = clients.next().await else {
                    return Ok(());
                };
                match event {
                    Event::Reopen => {}
                    Event::Rpc(stream, line) => {
                        rpc_client(&endpoint, stream, line, &mut on_request)
                    }
                    Event::Client(stream, Ok(request)) if request.reads_the_store() => {
                        pending = Some((stream, request))
                    }
                    Event::Client(stream, Ok(Request::Release)) => {
                        drop(reader);
                        drop(store);
                        send(&stream, &Response::success());
                        on_request("released the store to a writer");
                        clients.reopen_when_free = true;
                        break;
                    }
                    Event::Client(stream, other) => answer_closed(&stream, other, &mut on_request),
                }
            }
        }
        Ok(())
    })
}

/// Answers a JSON-RPC client on a thread of its own.
fn rpc_client(
    endpoint: &crate::rpc::Endpoint,
    stream: UnixStream,
    line: String,
    on_request: &mut impl FnMut(&str),
) {
    on_request("a JSON-RPC client connected");
    let endpoint = endpoint.clone();
    std::thread::spawn(move || endpoint.serve_stream(stream, line));
}

/// What wakes the server.
enum Event {
    Client(UnixStream, Result<Request, String>),
    /// A JSON-RPC client and its first line.
    Rpc(UnixStream, String),
    /// Time to try reopening the store a writer had closed.
    Reopen,
}

/// Accepts clients and reads their request, minding idleness, the socket,
/// and the writer the store was released to.
struct Clients<'p> {
    listener: tokio::net::UnixListener,
    path: &'p Path,
    /// The store file: gone means the repository (or its index) is gone.
    store: &'p Path,
    inode: u64,
    /// This program's file and what it was when the server started.
    executable: Option<(FileIdentity, std::path::PathBuf)>,
    idle: Duration,
    last: Instant,
    /// The store was released to a writer: try to reopen it on every tick
    /// (the open fails while the writer has it).
    reopen_when_free: bool,
}

impl Clients<'_> {
    /// The next event; `None` when the server should stop.
    async fn next(&mut self) -> Option<Event> {
        loop {
            let tick = if self.reopen_when_free { 100 } else { 500 };
            match tokio::time::timeout(Duration::from_millis(tick), self.listener.accept()).await {
                Ok(Ok((stream, _))) => {
                    self.last = Instant::now();
                    let Ok(stream) = stream.into_std() else {
                        continue;
                    };
                    if stream.set_nonblocking(false).is_err() {
                        continue;
                    }
                    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
                    let Some(line) = read_first_line(&stream) else {
                        continue;
                    };
                    if crate::rpc::is_json_rpc(&line) {
                        return Some(Event::Rpc(stream, line));
                    }
                    let request =
                        serde_json::from_str(&line).map_err(|e| format!("not a request: {e}"));
                    return Some(Event::Client(stream, request));
                }
                Ok(Err(_)) => {} // a client that went away
                Err(_elapsed) => {
                    let ours = std::fs::metadata(self.path).is_ok_and(|m| m.ino() == self.inode);
                    if !ours {
                        return None;
                    }
                    let idle = !self.idle.is_zero() && self.last.elapsed() >= self.idle;
                    let replaced = self
                        .executable
                        .as_ref()
                        .is_some_and(|(was, exe)| file_identity(exe).as_ref() != Some(was));
                    if idle || replaced || !self.store.exists() {
                        let _ = std::fs::remove_file(self.path);
                        return None;
                    }
                    if self.reopen_when_free {
                        self.reopen_when_free = false;
                        return Some(Event::Reopen);
                    }
                }
            }
        }
    }
}

/// A file's device, inode, size and modification time: which file a path
/// names, and whether it was rewritten.
type FileIdentity = (u64, u64, u64, i64, i64);

fn file_identity(path: &Path) -> Option<FileIdentity> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.dev(), m.ino(), m.len(), m.mtime(), m.mtime_nsec()))
}

/// Reads one line a byte at a time: a buffered reader could take more than
/// the line, and a JSON-RPC client's next requests would be lost with it.
/// `None` also for a connection closed before its first byte: a probe
/// that only checks that the server listens, not a malformed request.
fn read_first_line(mut stream: &UnixStream) -> Option<String> {
    use std::io::Read;
    const MAX_LINE: usize = 64 << 20;
    let mut bytes = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        match stream.read(&mut byte) {
            Ok(0) if bytes.is_empty() => return None,
            Ok(0) => break,
            Ok(_) if byte[0] == b'\n' => break,
            Ok(_) if bytes.len() < MAX_LINE => bytes.push(byte[0]),
            Ok(_) => return None,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    String::from_utf8(bytes).ok()
}

/// Opens the store for reading, unless a writer has it (the engine refuses then):
/// that is "busy". Changes a killed writer left to replay are not replayed
/// here (that takes the writer lock); the client's direct path does it.
fn open_read_only(state: &StateDir) -> Result<Store, Box<Response>> {
    match crate::open::read_only_now(state) {
        Ok(store) => Ok(store),
        Err(StoreError::Locked { .. }) => Err(Box::new(Response {
            busy: true,
            ..Response::default()
        })),
        Err(e) => Err(Box::new(Response::failure(e.to_string()))),
    }
}

/// The history of the last HEAD asked about: commits are immutable, so
/// the set stays right for that sha, and `log` asks about HEAD again and
/// again. Walking a 5,000-commit history takes ~15 ms; a lookup, nothing.
#[derive(Default)]
struct AncestorCache {
    head: String,
    commits: std::collections::HashSet<diffidx_core::ObjectId>,
}

impl AncestorCache {
    fn of(
        &mut self,
        repo: &Repo,
        head: &str,
    ) -> Option<&std::collections::HashSet<diffidx_core::ObjectId>> {
        if self.head != head {
            let tip = diffidx_core::ObjectId::from_hex(head.as_bytes()).ok()?;
            self.commits = repo.ancestors(tip).ok()?;
            self.head = head.to_owned();
        }
        Some(&self.commits)
    }
}

/// Both search tiers of the store state last asked about: reading every
/// name costs tens of milliseconds, a search over them a few. Beside them,
/// once a history is asked for, that state's moves, lineage and commits.
#[derive(Default)]
struct SearchCache {
    searcher: Option<crate::search::Searcher>,
    history: Option<(crate::search::Stamp, HeldHistory)>,
    /// Once a semantic search is asked: the model, the vectors and the
    /// fusion weights, while their files stay as they were.
    semantic: Option<LoadedSemantic>,
}

struct LoadedSemantic {
    stamp: SemanticStamp,
    searcher: SemanticSearcher,
    params: crate::search::HybridParams,
}

impl SearchCache {
    fn of(
        &mut self,
        reader: &Reader<'_>,
        state: &StateDir,
    ) -> Result<&crate::search::Searcher, StoreError> {
        let stamp = crate::search::Stamp::of(reader)?;
        // A text index repaired since (by a client) is worth a reload.
        let current = self
            .searcher
            .as_ref()
            .is_some_and(|s| s.stamp == stamp && s.text_ready());
        if !current {
            self.searcher = Some(crate::search::Searcher::load(reader, state)?);
        }
        Ok(self.searcher.as_ref().expect("loaded above"))
    }

    /// `search --semantic` without the chat model's steps (the client takes
    /// those itself).
    fn semantic(
        &mut self,
        repo: &Repo,
        reader: &Reader<'_>,
        query: &crate::search::SearchQuery,
    ) -> Result<crate::search::SearchAnswer, String> {
        if query.hyde || query.rerank > 0 {
            return Err("the chat model's steps are taken by the client".into());
        }
        let (names, loaded) = self.with_semantic(repo, reader)?;
        let loaded = loaded.ok_or_else(|| SemanticError::NotConfigured.to_string())?;
        let mut answer = loaded
            .searcher
            .search(reader, names, loaded.params, query, &query.query, None)
            .map_err(|e| e.to_string())?;
        answer.hits.truncate(query.limit);
        Ok(answer)
    }

    /// `context --query`'s relevance, from the indexes and (when it is
    /// configured) the model this server holds. A semantic layer that
    /// cannot be loaded here fails the request: the client then answers
    /// itself (with its own environment, which a service's key may need).
    fn relevance(
        &mut self,
        repo: &Repo,
        reader: &Reader<'_>,
        request: &crate::protocol::RelevanceRequest,
    ) -> Result<crate::query::Relevance, String> {
        let (names, loaded) = self.with_semantic(repo, reader)?;
        let semantic = loaded.map(|loaded| Ok((&mut loaded.searcher, loaded.params)));
        let ids: Vec<&str> = request.ids.iter().map(String::as_str).collect();
        crate::query::rank_relevance(reader, names, semantic, &request.text, &ids)
            .map_err(|e| e.to_string())
    }

    /// The name index of the store state `reader` sees and, when one is
    /// configured now, the semantic layer as its files are now.
    fn with_semantic(
        &mut self,
        repo: &Repo,
        reader: &Reader<'_>,
    ) -> Result<(&crate::search::Searcher, Option<&mut LoadedSemantic>), String> {
        self.load_semantic(repo)?;
        self.of(reader, &StateDir::of(repo))
            .map_err(|e| e.to_string())?;
        let names = self
            .searcher
            .as_ref()
            .ok_or("the search index is not loaded")?;
        Ok((names, self.semantic.as_mut()))
    }

    /// Loads the configured semantic layer unless what is loaded is it, as
    /// it is on disk now; with none configured, lets go of what is loaded.
    fn load_semantic(&mut self, repo: &Repo) -> Result<(), String> {
        let state = StateDir::of(repo);
        let now = current_config(repo).map_err(|e| e.to_string())?;
        let Some(source) = configured_source(&now) else {
            self.semantic = None;
            return Ok(());
        };
        let source = source.map_err(|e| e.to_string())?;
        let stamp = SemanticStamp::of(&state, &source);
        if !self.semantic.as_ref().is_some_and(|l| l.stamp == stamp) {
            self.semantic = None; // the old model goes before the new one loads
            let searcher = SemanticSearcher::load(&state, &source).map_err(|e| e.to_string())?;
            let params = crate::semantic::tune::params(&state, &searcher.model().label());
            self.semantic = Some(LoadedSemantic {
                stamp,
                searcher,
                params,
            });
        }
        Ok(())
    }

    /// A new opening of the store: the commits held for histories were
    /// of the last one.
    fn store_opened(&mut self) {
        if let Some((_, held)) = &mut self.history {
            held.forget_commits();
        }
    }

    /// The name index and the held history of the store state `reader` sees, each
    /// when it could be read (a history is then read from the store alone).
    fn for_history(
        &mut self,
        reader: &Reader<'_>,
        state: &StateDir,
    ) -> (Option<&crate::search::Searcher>, Option<&HeldHistory>) {
        let Ok(stamp) = self.of(reader, state).map(|s| s.stamp.clone()) else {
            return (None, None);
        };
        match &mut self.history {
            Some((held_stamp, held)) if *held_stamp == stamp => {
                if held.hold_commits(reader).is_err() {
                    self.history = None;
                }
            }
            _ => self.history = reader.held_history().ok().map(|held| (stamp, held)),
        }
        (
            self.searcher.as_ref(),
            self.history.as_ref().map(|(_, held)| held),
        )
    }
}

/// The repository as a process started now sees it: this one read the git
/// config when it started, and the model may have been configured since.
fn current_config(repo: &Repo) -> Result<Repo, diffidx_core::Error> {
    let place = repo.work_dir().unwrap_or_else(|| repo.git_dir().to_owned());
    Repo::discover(&place)
}

/// `names`, the name index of the store state (when it could be read),
/// finds the matching symbols without a scan of the store.
fn read_history(
    reader: &Reader<'_>,
    names: Option<&crate::search::Searcher>,
    held: Option<&HeldHistory>,
    query: &SymbolQuery,
    head: Option<&str>,
    history: Option<&std::collections::HashSet<diffidx_core::ObjectId>>,
) -> Response {
    let entries = match names {
        Some(names) => reader.history_with(names.matching(query), held),
        None => reader.history(query),
    };
    match entries {
        Ok(entries) => {
            let near = if entries.is_empty() {
                reader
                    .names_near(query, crate::protocol::SUGGESTIONS)
                    .unwrap_or_default()
            } else {
                NamesNear::default()
            };
            let (entries, hidden) = match history {
                Some(history) => crate::query::keep_in(history, entries),
                None => (entries, 0),
            };
            Response {
                ok: true,
                suggestions: near.suggestions,
                known: near.known,
                hidden,
                in_history: history.is_some(),
                entries,
                head_indexed: head.and_then(|sha| {
                    held.and_then(|held| held.has_commit(sha))
                        .or_else(|| reader.has_commit(sha).ok())
                }),
                indexed_from: reader.history_start().ok().flatten(),
                ..Response::default()
            }
        }
        Err(e) => Response::failure(e.to_string()),
    }
}

/// Answers a store-reading request from the open store.
fn answer_open(
    repo: &Repo,
    reader: &Reader<'_>,
    ancestors: &mut AncestorCache,
    searcher: &mut SearchCache,
    request: Request,
) -> Response {
    match request {
        Request::History(HistoryRequest {
            query,
            head,
            in_history,
        }) => {
            let (names, held) = searcher.for_history(reader, &StateDir::of(repo));
            match head.as_deref().filter(|_| in_history) {
                Some(tip) => match ancestors.of(repo, tip) {
                    Some(history) => {
                        read_history(reader, names, held, &query, Some(tip), Some(history))
                    }
                    // The client walks the history itself.
                    None => Response::failure(format!("cannot walk the history of {tip}")),
                },
                None => read_history(reader, names, held, &query, head.as_deref(), None),
            }
        }
        Request::Graph(query) => match crate::codegraph::graph(reader, &query) {
            Ok(answer) => Response {
                graph: Some(Box::new(answer)),
                ..Response::success()
            },
            Err(e) => Response::failure(e.to_string()),
        },
        Request::Impact(ImpactRequest {
            deltas,
            depth,
            min_resolution,
        }) => match crate::codegraph::impact(reader, &deltas, depth, min_resolution) {
            Ok(answer) => Response {
                impact: Some(Box::new(answer)),
                ..Response::success()
            },
            Err(e) => Response::failure(e.to_string()),
        },
        Request::Search(query) => {
            let answer = match query.semantic {
                true => searcher.semantic(repo, reader, &query),
                false => searcher
                    .of(reader, &StateDir::of(repo))
                    .and_then(|s| s.search(reader, &query))
                    .map_err(|e| e.to_string()),
            };
            match answer {
                Ok(answer) => Response {
                    search: Some(Box::new(answer)),
                    ..Response::success()
                },
                Err(e) => Response::failure(e),
            }
        }
        Request::Relevance(request) => match searcher.relevance(repo, reader, &request) {
            Ok(answer) => Response {
                relevance: Some(Box::new(answer)),
                ..Response::success()
            },
            Err(e) => Response::failure(e),
        },
        Request::Window(request) => match reader.window(&request.shas, request.nearest) {
            Ok(answer) => Response {
                window: Some(Box::new(answer)),
                ..Response::success()
            },
            Err(e) => Response::failure(e.to_string()),
        },
        Request::Ping | Request::Release => Response::failure("unexpected".into()),
    }
}

/// Sends the response, and tells `on_request` what was asked and answered.
fn reply(
    stream: &UnixStream,
    request: &Request,
    response: Response,
    on_request: &mut impl FnMut(&str),
) {
    send(stream, &response);
    let outcome = if response.busy {
        "busy (a writer holds the store)".to_string()
    } else if !response.ok {
        response.error.unwrap_or_default()
    } else if let Some(graph) = &response.graph {
        let reached =
            graph.callers.len() + graph.callees.len() + graph.bases.len() + graph.derived.len();
        format!("{} symbols, {reached} reached", graph.symbols.len())
    } else if let Some(impact) = &response.impact {
        format!("{} reached", impact.reached.len())
    } else if let Some(search) = &response.search {
        format!("{} hits", search.hits.len())
    } else if let Some(window) = &response.window {
        format!("{} changes", window.changes.len())
    } else if let Some(relevance) = &response.relevance {
        format!(
            "{} match, by {}",
            relevance.scores.len(),
            relevance.matched_by.join(", ")
        )
    } else {
        format!("{} entries", response.entries.len())
    };
    let asked = match request {
        Request::History(h) => format!("history of {}", h.query.name),
        Request::Graph(q) => format!("graph of {}", q.symbol.name),
        Request::Impact(i) => format!("impact of {} touched symbols", i.deltas.len()),
        Request::Search(q) if q.semantic => format!("semantic search for {:?}", q.query),
        Request::Search(q) => format!("search for {:?}", q.query),
        Request::Window(w) => format!("changes of {} commits", w.shas.len()),
        Request::Relevance(r) => format!("relevance of {} symbols to {:?}", r.ids.len(), r.text),
        Request::Ping | Request::Release => String::new(),
    };
    on_request(&format!("{asked}: {outcome}"));
}

/// Requests that need no open store.
fn answer_closed(
    stream: &UnixStream,
    request: Result<Request, String>,
    on_request: &mut impl FnMut(&str),
) {
    match request {
        Ok(Request::Ping) => send(stream, &Response::success()),
        Ok(Request::Release) => {
            send(stream, &Response::success());
            on_request("release: the store was not open");
        }
        Ok(_) => send(stream, &Response::failure("unexpected".into())),
        Err(error) => {
            on_request(&error);
            send(stream, &Response::failure(error));
        }
    }
}

fn send(mut stream: &UnixStream, response: &Response) {
    if let Ok(mut text) = serde_json::to_string(response) {
        text.push('\n');
        let _ = stream.write_all(text.as_bytes());
    }
}
