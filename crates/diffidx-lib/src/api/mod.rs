//! The query layer that the CLI's `--json`, JSON-RPC (`serve`) and MCP
//! (`mcp`) share: one function per query method, one parameter struct per
//! method named after the long flags ([`params`]), and one JSON answer per
//! method, versioned by [`SCHEMA_VERSION`] (docs/api.md).
//!
//! Why one layer: an agent asking over MCP and a person running the CLI
//! must get the same answer, and a fix to one must reach the others. The
//! CLI adds only what a terminal wants (tables, hints on stderr).

pub mod changes;
pub mod history;
pub mod params;
pub mod status;

use std::path::Path;

use diffidx_core::git::{Repo, Target};
use diffidx_core::note::{tool_name, NoteDocument, NOTE_VERSION};
use diffidx_core::{DiffOptions, ObjectId, SymbolDiffer};
use serde_json::Value;

use crate::codegraph::{GraphAnswer, GraphQuery, ImpactAnswer};
use crate::context::{ContextError, ContextQuery, ContextRecord};
use crate::protocol::ImpactRequest;
use crate::query::QueryError;
use crate::search::{Scope, SearchAnswer, SearchQuery, DEFAULT_LIMIT};
use crate::store::HistoryEntry;
pub use params::{GraphParams, ImpactParams, LogParams, SearchParams, ShowParams, StatusParams};

/// The version of the answers' JSON schemas (docs/api.md). A field added
/// keeps it; a field renamed, removed or retyped bumps it.
pub const SCHEMA_VERSION: &str = "1";

/// What kind of failure an [`ApiError`] is: the CLI's exit code, the
/// JSON-RPC error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad parameters or configuration (exit 2, JSON-RPC -32602).
    Usage,
    /// Nothing matches what was named (exit 1, JSON-RPC -32001).
    NotFound,
    /// Anything else (exit 1, JSON-RPC -32000).
    Failed,
}

/// A failed query: what failed, on what input, and what to do.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    pub kind: ErrorKind,
    pub message: String,
}

impl ApiError {
    pub fn usage(message: impl Into<String>) -> ApiError {
        ApiError {
            kind: ErrorKind::Usage,
            message: message.into(),
        }
    }

    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError {
            kind: ErrorKind::NotFound,
            message: message.into(),
        }
    }

    pub fn failed(error: &dyn std::error::Error) -> ApiError {
        ApiError {
            kind: ErrorKind::Failed,
            message: chain(error),
        }
    }

    /// The JSON-RPC 2.0 error code.
    pub fn code(&self) -> i64 {
        match self.kind {
            ErrorKind::Usage => -32602,
            ErrorKind::NotFound => -32001,
            ErrorKind::Failed => -32000,
        }
    }
}

/// An error and its causes, `: `-joined (what anyhow's `{:#}` prints).
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
}

impl From<diffidx_core::Error> for ApiError {
    fn from(e: diffidx_core::Error) -> ApiError {
        use diffidx_core::Error as E;
        match e {
            E::UnknownRevision { .. } | E::OpenRepository { .. } => ApiError::usage(chain(&e)),
            e => ApiError::failed(&e),
        }
    }
}

impl From<QueryError> for ApiError {
    fn from(e: QueryError) -> ApiError {
        match e {
            QueryError::NoIndex => ApiError::usage(e.to_string()),
            QueryError::Semantic(ref s) if s.is_usage() => ApiError::usage(e.to_string()),
            QueryError::Core(e) => e.into(),
            e => ApiError::failed(&e),
        }
    }
}

impl From<ContextError> for ApiError {
    fn from(e: ContextError) -> ApiError {
        if e.is_usage() {
            ApiError::usage(chain(&e))
        } else {
            ApiError::failed(&e)
        }
    }
}

/// The query methods, named like the commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Search,
    Log,
    Show,
    Graph,
    Impact,
    Context,
    Status,
}

impl Method {
    pub const ALL: [Method; 7] = [
        Method::Search,
        Method::Log,
        Method::Show,
        Method::Graph,
        Method::Impact,
        Method::Context,
        Method::Status,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Method::Search => "search",
            Method::Log => "log",
            Method::Show => "show",
            Method::Graph => "graph",
            Method::Impact => "impact",
            Method::Context => "context",
            Method::Status => "status",
        }
    }

    pub fn parse(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.name() == name)
    }

    /// What the method answers (the MCP tool description).
    pub fn description(self) -> &'static str {
        match self {
            Method::Search => "Find symbols (classes, methods, functions) by name — exact, suffix, split into words, prefix, misspelled — then by the words of their code and comments. Returns ranked hits with path, lines, status (live or deleted) and score.",
            Method::Log => "The history of a symbol, newest first, following moves and renames, including its deletion: commit, date, author, subject, status, path and lines of each change.",
            Method::Show => "The symbols one commit (or A..B, A...B) added, modified, deleted or moved: the commit's note document.",
            Method::Graph => "The code graph around a symbol: what calls it, what it calls, what its file imports, what it inherits or implements.",
            Method::Impact => "The blast radius of a commit or range: the symbols it touched and what calls, inherits or implements them.",
            Method::Context => "Incident context: the ranked symbol-level changes of a service (named in the service map) in a time window, with callers; deletions and signature changes first. Never diff text.",
            Method::Status => "The state of this repository's index: indexed commits, backlog, symbols, store size, hooks.",
        }
    }

    /// The JSON schema of the method's parameters.
    pub fn input_schema(self) -> Value {
        let schema = match self {
            Method::Search => schemars::schema_for!(SearchParams),
            Method::Log => schemars::schema_for!(LogParams),
            Method::Show => schemars::schema_for!(ShowParams),
            Method::Graph => schemars::schema_for!(GraphParams),
            Method::Impact => schemars::schema_for!(ImpactParams),
            Method::Context => schemars::schema_for!(ContextQuery),
            Method::Status => schemars::schema_for!(StatusParams),
        };
        let mut value = serde_json::to_value(schema).unwrap_or_default();
        if let Some(object) = value.as_object_mut() {
            object.insert("type".into(), "object".into());
        }
        value
    }
}

/// Calls `method` with JSON `params` (absent or `null`: none) and returns
/// the same JSON its command prints with `--json`. `repo` is the
/// repository the service runs in (`None`: only `context` answers);
/// `server` the program to start as a query server.
pub fn call(
    repo: Option<&Repo>,
    method: &str,
    params: Value,
    server: Option<&Path>,
) -> Result<Value, ApiError> {
    let Some(method) = Method::parse(method) else {
        return Err(ApiError {
            kind: ErrorKind::Usage,
            message: format!(
                "unknown method {method:?}; the methods are {}",
                Method::ALL.map(Method::name).join(", ")
            ),
        });
    };
    let params = match params {
        Value::Null => Value::Object(Default::default()),
        p => p,
    };
    fn read<T: serde::de::DeserializeOwned>(method: Method, params: Value) -> Result<T, ApiError> {
        serde_json::from_value(params)
            .map_err(|e| ApiError::usage(format!("invalid params for {}: {e}", method.name())))
    }
    let in_repo = || {
        repo.ok_or_else(|| {
            ApiError::usage(format!(
                "{} needs a repository; start the service inside one (or with -C DIR)",
                method.name()
            ))
        })
    };
    let json = |v: Result<Value, serde_json::Error>| v.map_err(|e| ApiError::failed(&e));
    match method {
        Method::Search => {
            let params: SearchParams = read(method, params)?;
            let answer = search(in_repo()?, &params, server)?;
            match params.files {
                true => json(serde_json::to_value(answer.files)),
                false => json(serde_json::to_value(answer.hits)),
            }
        }
        Method::Log => json(serde_json::to_value(log(
            in_repo()?,
            &read(method, params)?,
            server,
        )?)),
        Method::Show => {
            let p: ShowParams = read(method, params)?;
            let repo = in_repo()?;
            let rev = p.rev.as_deref().unwrap_or("HEAD");
            let (note, _) = note(repo, rev, crate::settings::diff_options(repo, None), true)?;
            json(serde_json::from_str(&note.to_json()))
        }
        Method::Graph => json(serde_json::to_value(graph(
            in_repo()?,
            &read(method, params)?,
            server,
        )?)),
        Method::Impact => {
            let repo = in_repo()?;
            let options = crate::settings::diff_options(repo, None);
            let (answer, _) = impact(repo, &read(method, params)?, options, server)?;
            json(serde_json::to_value(answer))
        }
        Method::Context => json(serde_json::to_value(context(
            repo,
            &read(method, params)?,
            server,
        )?)),
        Method::Status => {
            let _: StatusParams = read(method, params)?;
            json(serde_json::to_value(status::status(in_repo()?)?))
        }
    }
}

impl SearchParams {
    /// The search these parameters ask for, checked.
    pub fn to_query(&self) -> Result<SearchQuery, ApiError> {
        if self.query.trim().is_empty() {
            return Err(ApiError::usage("give something to search for"));
        }
        let limit = self.limit.unwrap_or(DEFAULT_LIMIT);
        if limit == 0 {
            return Err(ApiError::usage("--limit must be at least 1"));
        }
        if self.deleted && self.all {
            return Err(ApiError::usage(
                "--deleted and --all contradict each other; give one",
            ));
        }
        if let Some(kind) = &self.kind {
            params::parse_kind(kind)?;
        }
        let rerank = self.rerank.unwrap_or(0);
        if (self.hyde || rerank > 0) && !self.semantic {
            return Err(ApiError::usage(
                "--hyde and --rerank refine --semantic; add --semantic",
            ));
        }
        if rerank > MAX_RERANK {
            return Err(ApiError::usage(format!(
                "--rerank shows the model at most {MAX_RERANK} hits"
            )));
        }
        let lang = match &self.lang {
            None => None,
            Some(name) => Some(params::parse_language(name)?.name().to_owned()),
        };
        Ok(SearchQuery {
            query: self.query.clone(),
            kind: self.kind.clone(),
            path: self.path.clone(),
            lang,
            scope: if self.all {
                Scope::All
            } else if self.deleted {
                Scope::Deleted
            } else {
                Scope::Live
            },
            limit,
            text: self.text,
            semantic: self.semantic,
            hyde: self.hyde,
            rerank,
            snippets: self.snippets,
        })
    }
}

/// The most hits `--rerank` shows the chat model at once.
pub const MAX_RERANK: usize = 50;

/// `search`.
pub fn search(
    repo: &Repo,
    params: &SearchParams,
    server: Option<&Path>,
) -> Result<SearchAnswer, ApiError> {
    Ok(crate::query::search(repo, &params.to_query()?, server)?)
}

/// The history entries that pass the date and author filters.
pub fn filter_history(
    entries: Vec<HistoryEntry>,
    since: Option<&str>,
    until: Option<&str>,
    author: Option<&str>,
) -> Result<Vec<HistoryEntry>, ApiError> {
    let since = since
        .map(|t| params::parse_date("--since", t))
        .transpose()?;
    let until = until
        .map(|t| params::parse_date("--until", t))
        .transpose()?;
    let author = author.map(str::to_lowercase);
    Ok(entries
        .into_iter()
        .filter(|e| {
            let time = diffidx_core::git::parse_date(&e.date);
            since.is_none_or(|s| time.is_some_and(|t| t >= s))
                && until.is_none_or(|u| time.is_some_and(|t| t <= u))
                && author
                    .as_deref()
                    .is_none_or(|a| e.author.to_lowercase().contains(a))
        })
        .collect())
}

/// `log`: the history of the symbols `params` names in the history of its
/// revision (default HEAD; every indexed commit with `all`), filtered.
pub fn log(
    repo: &Repo,
    params: &LogParams,
    server: Option<&Path>,
) -> Result<Vec<HistoryEntry>, ApiError> {
    if params.all && params.rev.is_some() {
        return Err(ApiError::usage(
            "--all and a REV contradict each other; give one",
        ));
    }
    if params.all && params.first_parent {
        return Err(ApiError::usage(
            "--all and --first-parent contradict each other; give one",
        ));
    }
    if params.all && params.full_history {
        return Err(ApiError::usage(
            "--all and --full-history contradict each other; give one",
        ));
    }
    if params.first_parent && params.full_history {
        return Err(ApiError::usage(
            "--first-parent and --full-history contradict each other; give one",
        ));
    }
    let tip = match &params.rev {
        Some(rev) => Some(repo.resolve_commit(rev)?),
        None => repo.resolve_commit("HEAD").ok(),
    };
    let (query, _) = history::log_query(
        repo,
        &params.symbol,
        params.kind.as_deref(),
        params.path.as_deref(),
        tip,
        None,
    )?;
    let head = tip.map(|t| t.to_string());
    let history = crate::query::history(repo, &query, head, !params.all, server)?;
    if history.entries.is_empty() && history.hidden == 0 && !history.known {
        let hint = match history.suggestions.as_slice() {
            [] => String::new(),
            names => format!("; did you mean {}?", names.join(", ")),
        };
        return Err(ApiError::not_found(format!(
            "no indexed symbol matches {:?}{hint} (only indexed commits are searched)",
            params.symbol
        )));
    }
    let walk = history::HistoryWalk::from_flags(params.first_parent, params.full_history);
    let entries = match tip {
        Some(tip) if !params.all => history::walk_history(repo, tip, history.entries, walk)?.0,
        _ => history.entries,
    };
    let mut entries = filter_history(
        entries,
        params.since.as_deref(),
        params.until.as_deref(),
        params.author.as_deref(),
    )?;
    attach_summaries(repo, &mut entries);
    changes::attach_changes(repo, &mut entries);
    Ok(entries)
}

/// Gives each entry the change summary its commit's summary note holds for
/// it, if any (`crate::semantic::deltas`).
pub fn attach_summaries(repo: &Repo, entries: &mut [HistoryEntry]) {
    let ids: Vec<String> = entries
        .iter()
        .map(|e| diffidx_core::symbol::symbol_id(&e.path, e.kind, &e.qualname, &e.sig))
        .collect();
    let wanted: Vec<(&str, &str)> = entries
        .iter()
        .zip(&ids)
        .map(|(e, id)| (e.commit.as_str(), id.as_str()))
        .collect();
    let mut found = crate::semantic::deltas::summaries_of(repo, &wanted);
    if found.is_empty() {
        return;
    }
    for (entry, id) in entries.iter_mut().zip(&ids) {
        entry.summary = found.remove(&(entry.commit.clone(), id.clone()));
    }
}

/// `show`: the note of a commit (computed when it is not indexed), or the
/// net change of `A..B` / `A...B`, and a heading for it.
///
/// With `stored`, a commit's note that this same version wrote (and that
/// passes validation) is returned as it is instead of being computed again:
/// notes are deterministic, so it is what computing gives, in a fraction of
/// the time (no blob is parsed).
pub fn note(
    repo: &Repo,
    rev: &str,
    options: DiffOptions,
    stored: bool,
) -> Result<(NoteDocument, String), ApiError> {
    Ok(match repo.resolve_target(rev)? {
        Target::Commit(id) => {
            let commit = repo.commit(id)?;
            let heading = format!("commit {}  {}", short(&id.to_string()), commit.subject);
            if stored {
                if let Some(note) = stored_note(repo, &commit) {
                    return Ok((note, heading));
                }
            }
            let note = SymbolDiffer::new(repo, options)?.commit_note(&commit)?;
            (note, heading)
        }
        Target::Range { base, head } => {
            let note = range_note(repo, options, base, head)?;
            let heading = format!("{}..{}", short(&base.to_string()), short(&head.to_string()));
            (note, heading)
        }
    })
}

/// What a merge commit brought to its first parent: the net change of
/// `REV^1..REV`, computed from the two trees (a merge's own note holds only
/// its conflict resolutions, as the record's rule has it). `None` when REV
/// is not a single merge commit.
pub fn merge_note(
    repo: &Repo,
    rev: &str,
    options: DiffOptions,
) -> Result<Option<(NoteDocument, String)>, ApiError> {
    let Target::Commit(id) = repo.resolve_target(rev)? else {
        return Ok(None);
    };
    let commit = repo.commit(id)?;
    let (Some(&first), true) = (commit.parents.first(), commit.parents.len() > 1) else {
        return Ok(None);
    };
    let note = range_note(repo, options, first, id)?;
    let heading = format!(
        "merge {}  {}  (against its first parent {})",
        short(&id.to_string()),
        commit.subject,
        short(&first.to_string())
    );
    Ok(Some((note, heading)))
}

/// The net change from `base`'s tree to `head`'s, as a note document.
fn range_note(
    repo: &Repo,
    options: DiffOptions,
    base: ObjectId,
    head: ObjectId,
) -> Result<NoteDocument, ApiError> {
    let (b, h) = (repo.commit(base)?, repo.commit(head)?);
    let diff = SymbolDiffer::new(repo, options)?.diff_trees(Some(b.tree), h.tree)?;
    Ok(NoteDocument {
        v: NOTE_VERSION,
        commit: Some(head.to_string()),
        parent: Some(base.to_string()),
        tool: tool_name(),
        deltas: diff.deltas,
        diagnostics: diff.diagnostics,
    })
}

/// Whether REV names one commit with more than one parent.
pub fn is_merge(repo: &Repo, rev: &str) -> bool {
    match repo.resolve_target(rev) {
        Ok(Target::Commit(id)) => repo.commit(id).is_ok_and(|c| c.parents.len() > 1),
        _ => false,
    }
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}

/// The note of `commit` if this version wrote it and it validates; any
/// other (none, unreadable, another version's) means "compute it".
fn stored_note(repo: &Repo, commit: &diffidx_core::git::CommitInfo) -> Option<NoteDocument> {
    let mut notes = repo.notes().ok()?;
    let note = notes.read_validated(commit).ok()??.ok()?;
    (note.tool == tool_name()).then_some(note)
}

impl GraphParams {
    /// The graph query these parameters ask for, checked.
    pub fn to_query(&self) -> Result<GraphQuery, ApiError> {
        let symbol =
            params::symbol_query(&self.symbol, self.kind.as_deref(), self.path.as_deref())?;
        let depth = self.depth.unwrap_or(1);
        if depth == 0 {
            return Err(ApiError::usage("--depth must be at least 1"));
        }
        let mut query = GraphQuery {
            symbol,
            callers: false,
            callees: false,
            imports: false,
            inherits: false,
            depth,
            min_resolution: match &self.min_resolution {
                Some(r) => params::parse_resolution(r)?,
                None => diffidx_core::codegraph::Resolution::DEFAULT_MIN,
            },
        };
        for direction in &self.direction {
            match direction.as_str() {
                "callers" => query.callers = true,
                "callees" => query.callees = true,
                "imports" => query.imports = true,
                "inherits" => query.inherits = true,
                other => {
                    return Err(ApiError::usage(format!(
                        "unknown direction {other:?}; the directions are callers, callees, \
                         imports, inherits"
                    )))
                }
            }
        }
        // No direction asked: both call directions.
        if !(query.callers || query.callees || query.imports || query.inherits) {
            query.callers = true;
            query.callees = true;
        }
        Ok(query)
    }
}

/// `graph`.
pub fn graph(
    repo: &Repo,
    params: &GraphParams,
    server: Option<&Path>,
) -> Result<GraphAnswer, ApiError> {
    let query = params.to_query()?;
    let answer = crate::query::code_graph(repo, &query, server)?;
    let Some(commit) = &answer.commit else {
        return Err(no_graph());
    };
    if answer.symbols.is_empty() {
        return Err(ApiError::not_found(format!(
            "no symbol in the code graph (at {}) matches '{}'",
            short(commit),
            params.symbol
        )));
    }
    Ok(answer)
}

fn no_graph() -> ApiError {
    ApiError::not_found("there is no code graph yet; run `git diffidx index` to build it")
}

/// `impact`: what the change at `params.rev` touched, and what reaches it;
/// and a heading for it.
pub fn impact(
    repo: &Repo,
    params: &ImpactParams,
    options: DiffOptions,
    server: Option<&Path>,
) -> Result<(ImpactAnswer, String), ApiError> {
    let min_resolution = match &params.min_resolution {
        Some(r) => params::parse_resolution(r)?,
        None => diffidx_core::codegraph::Resolution::DEFAULT_MIN,
    };
    let rev = params.rev.as_deref().unwrap_or("HEAD");
    // A merge puts at risk what it brought to its first parent, not only
    // its own conflict resolutions.
    let (note, heading) = match merge_note(repo, rev, options.clone())? {
        Some(merged) => merged,
        None => note(repo, rev, options, true)?,
    };
    let request = ImpactRequest {
        deltas: note.deltas,
        depth: params.depth.unwrap_or(2).max(1),
        min_resolution,
    };
    let answer = crate::query::impact(repo, &request, server)?;
    if answer.commit.is_none() {
        return Err(no_graph());
    }
    Ok((answer, heading))
}

/// `context`: `repo` (where the command runs, if in a repository) supplies
/// git config `diffidx.serviceMap`; without one, the user's git config does.
pub fn context(
    repo: Option<&Repo>,
    query: &ContextQuery,
    server: Option<&Path>,
) -> Result<Vec<ContextRecord>, ApiError> {
    Ok(crate::context::context(query, service_map_config(repo), server)?.records)
}

/// git config `diffidx.serviceMap`: the repository's, else the user's.
pub fn service_map_config(repo: Option<&Repo>) -> Option<String> {
    match repo {
        Some(repo) => repo.config_string(crate::context::map::MAP_CONFIG),
        None => gix::config::File::from_globals().ok().and_then(|config| {
            config
                .string(crate::context::map::MAP_CONFIG)
                .map(|s| s.to_string())
        }),
    }
}
