//! `context`: what changed in a service during an incident window, as
//! ranked symbol-level records, never diff text (DESIGN.md §5).
//!
//! A service name leads through the service map ([`map`]) to a repository
//! and branch. The window's commits that have no note yet are indexed
//! first (only when some are missing, so a warm query costs a walk of the
//! window and one store read). The records come from the store, with each
//! symbol's direct callers from the code graph, and are ranked by
//! [`rank`]: what breaks callers (deletions, signature changes) first,
//! then recent and central changes.

pub mod map;
pub mod rank;

use std::path::{Path, PathBuf};

use diffidx_core::git::Repo;
use serde::{Deserialize, Serialize};

use crate::index::{IndexError, IndexOptions, Window};
use crate::query::QueryError;

pub use map::{Location, Service, ServiceMap};

/// How many of a symbol's callers a record names.
pub const NEAREST_CALLERS: usize = 3;

#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    #[error(
        "no service map found (looked at {}); write one (docs/context.md) and name it with \
         --map FILE, {} or git config {}",
        looked.join(", "), map::MAP_VARIABLE, map::MAP_CONFIG
    )]
    NoMap { looked: Vec<String> },
    #[error("{0}")]
    Map(String),
    #[error("unknown service {name:?} in {}; the known services are: {}", map.display(),
        if known.is_empty() { "(none)".to_owned() } else { known.join(", ") })]
    UnknownService {
        name: String,
        known: Vec<String>,
        map: PathBuf,
    },
    #[error("{0}")]
    Usage(String),
    #[error("service {service:?}: {problem}")]
    Repository { service: String, problem: String },
    #[error("service {service:?}: cannot reach {url}: {detail}; check the URL and your access, or run `git clone {url} {}` yourself", clone.display())]
    Unreachable {
        service: String,
        url: String,
        clone: PathBuf,
        detail: String,
    },
    #[error("service {service:?}: indexing the window: {source}")]
    Index {
        service: String,
        #[source]
        source: IndexError,
    },
    #[error("service {service:?}: {source}")]
    Query {
        service: String,
        #[source]
        source: QueryError,
    },
}

impl ContextError {
    /// An error in what was asked or configured (exit code 2), as opposed
    /// to a failure.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            ContextError::NoMap { .. }
                | ContextError::Map(_)
                | ContextError::UnknownService { .. }
                | ContextError::Usage(_)
                | ContextError::Repository { .. }
        )
    }
}

/// What `context` is asked (the JSON-RPC and MCP parameters too).
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextQuery {
    /// One or more service names of the service map (several: merged by score).
    #[serde(deserialize_with = "crate::values::one_or_many")]
    #[schemars(with = "crate::values::OneOrMany")]
    pub service: Vec<String>,
    /// Start of the window: RFC 3339, epoch seconds, or "2 hours ago".
    pub since: String,
    /// End of the window (default now).
    #[serde(default)]
    pub until: Option<String>,
    /// The service map file (default: DIFFIDX_SERVICE_MAP, git config
    /// diffidx.serviceMap, ~/.config/diffidx/services.toml).
    #[serde(default)]
    pub map: Option<String>,
    /// At most this many records, best first (default: all).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Do not fetch services whose repository is a URL.
    #[serde(default)]
    pub no_fetch: bool,
    /// What the incident looks like, in words ("totals are rounded
    /// wrong"): records of symbols that match it by name, words and, with
    /// the semantic layer on, meaning rank higher.
    #[serde(default)]
    pub query: Option<String>,
}

/// One ranked change record (DESIGN.md §5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextRecord {
    pub service: String,
    pub repo: String,
    pub commit: String,
    /// Author time, RFC 3339.
    pub time: String,
    pub author: String,
    pub subject: String,
    pub status: String,
    pub kind: String,
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    pub qualname: String,
    pub sig: String,
    pub start_line: u32,
    pub end_line: u32,
    pub score: f64,
    /// How many symbols call it directly (absent: not in the code graph,
    /// e.g. deleted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callers: Option<u32>,
    /// With `--query`: how well the symbol matches it, 0 to 1 (the best
    /// match of the window is 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relevance: Option<f64>,
    /// A few of those callers, the surest-resolved first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nearest_callers: Vec<String>,
}

/// What happened per service (for the human summary).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServiceReport {
    pub service: String,
    pub repo: String,
    /// The commits in the window, and how many of them were indexed now.
    pub commits: usize,
    pub indexed: usize,
    /// A fetch that failed: the records are of the local clone.
    pub fetch_failed: Option<String>,
    /// With `--query`, the rankings it was matched by (`names`, `text`,
    /// `vectors`), and why one was left out.
    pub matched_by: Vec<String>,
    pub warnings: Vec<String>,
}

/// The records, best first, and what was done to get them.
#[derive(Debug, Clone, Default)]
pub struct ContextAnswer {
    pub records: Vec<ContextRecord>,
    pub services: Vec<ServiceReport>,
    pub since: i64,
    pub until: i64,
}

pub use crate::values::parse_time;

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// The window `query` asks about, `(since, until)` in epoch seconds.
pub fn window(query: &ContextQuery) -> Result<(i64, i64), ContextError> {
    let time = |flag: &str, text: &str| {
        parse_time(text).ok_or_else(|| {
            ContextError::Usage(format!(
                "{flag} {text:?} is not a time (try 2024-01-31T14:05:00Z, 1706709900 or \
                 \"2 hours ago\")"
            ))
        })
    };
    let since = time("--since", &query.since)?;
    let until = match &query.until {
        Some(text) => time("--until", text)?,
        None => now(),
    };
    if since > until {
        return Err(ContextError::Usage(format!(
            "--since ({}) is after --until ({}); the window is empty the wrong way round",
            diffidx_core::git::rfc3339(since, 0),
            diffidx_core::git::rfc3339(until, 0)
        )));
    }
    Ok((since, until))
}

/// Answers `query`. `git_config` is `diffidx.serviceMap` where the command
/// runs; `server` the program to start as each repository's query server.
pub fn context(
    query: &ContextQuery,
    git_config: Option<String>,
    server: Option<&Path>,
) -> Result<ContextAnswer, ContextError> {
    if query.service.is_empty() {
        return Err(ContextError::Usage("name at least one service".into()));
    }
    let (since, until) = window(query)?;
    let map = ServiceMap::locate(query.map.as_deref().map(Path::new), git_config)?;
    // Every name is checked before any work is done.
    let names: Vec<String> = query
        .service
        .iter()
        .flat_map(|s| s.split(','))
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect();
    for name in &names {
        map.service(name)?;
    }
    let mut answer = ContextAnswer {
        since,
        until,
        ..ContextAnswer::default()
    };
    for name in &names {
        let service = map.service(name)?;
        let (mut records, report) =
            service_records(name, service, &map, since, until, query, server)?;
        answer.records.append(&mut records);
        answer.services.push(report);
    }
    rank::sort(&mut answer.records);
    if let Some(limit) = query.limit.filter(|&l| l > 0) {
        answer.records.truncate(limit);
    }
    Ok(answer)
}

/// The records of one service.
fn service_records(
    name: &str,
    service: &Service,
    map: &ServiceMap,
    since: i64,
    until: i64,
    query: &ContextQuery,
    server: Option<&Path>,
) -> Result<(Vec<ContextRecord>, ServiceReport), ContextError> {
    let location = service.location(name, &map.base())?;
    let mut report = ServiceReport {
        service: name.to_owned(),
        ..ServiceReport::default()
    };
    let (repo, label) = match &location {
        Location::Local(path) => {
            let repo = open_local(name, path, &map.path)?;
            (repo, path.display().to_string())
        }
        Location::Remote { url, clone } => {
            report.fetch_failed = fetch_or_clone(name, url, clone, query.no_fetch)?;
            let repo = open_local(name, clone, &map.path)?;
            (repo, url.clone())
        }
    };
    report.repo = label.clone();
    let tip = branch_tip(name, service, &location, &repo)?;
    let repo_error = |e: diffidx_core::Error| ContextError::Repository {
        service: name.to_owned(),
        problem: e.to_string(),
    };
    let commits =
        crate::index::commits_since(&repo, tip, since).map_err(|e| ContextError::Index {
            service: name.to_owned(),
            source: e,
        })?;
    // Lazily: index only when a commit of the window has no note, or there
    // is no store yet. (The run then indexes from `since` to the tip, the
    // way every index run walks, so the commits after `until` come along.)
    let mut notes = repo.notes().map_err(repo_error)?;
    let mut missing = 0;
    for commit in commits.iter().filter(|c| c.time <= until) {
        if notes.get_id(commit.id).map_err(repo_error)?.is_none() {
            missing += 1;
        }
    }
    let has_store = crate::state::StateDir::of(&repo).store().exists();
    drop(notes);
    let index = |report: &mut ServiceReport| -> Result<(), ContextError> {
        let options = IndexOptions {
            revs: vec![tip.to_string()],
            window: Window::Since(since),
            diff: crate::settings::diff_options(&repo, None),
        };
        let run =
            crate::index::index(&repo, &options, &mut ()).map_err(|e| ContextError::Index {
                service: name.to_owned(),
                source: e,
            })?;
        report.indexed += run.computed;
        Ok(())
    };
    let indexed = missing > 0 || !has_store;
    if indexed {
        index(&mut report)?;
    }
    let shas: Vec<String> = commits
        .iter()
        .filter(|c| c.time <= until)
        .map(|c| c.id.to_string())
        .collect();
    report.commits = shas.len();
    let ask = || {
        crate::query::window(&repo, &shas, NEAREST_CALLERS, server).map_err(|e| {
            ContextError::Query {
                service: name.to_owned(),
                source: e,
            }
        })
    };
    let absent = |window: &crate::store::WindowAnswer| {
        let held: std::collections::HashSet<&str> =
            window.commits.iter().map(String::as_str).collect();
        shas.iter().filter(|s| !held.contains(s.as_str())).count()
    };
    let mut window = ask()?;
    // Noted but not in the store: notes that came from elsewhere (a fetch
    // of the notes ref), or a run stopped between writing the notes and
    // loading them. An index run loads the notes the store lacks.
    if absent(&window) > 0 && !indexed {
        index(&mut report)?;
        window = ask()?;
    }
    let absent = absent(&window);
    if absent > 0 {
        report.warnings.push(format!(
            "{absent} commit{} of the window could not be indexed, so {} changes are \
             missing (a shallow clone cannot diff its oldest commits; else try `git diffidx \
             rebuild`)",
            if absent == 1 { "" } else { "s" },
            if absent == 1 { "its" } else { "their" },
        ));
    }
    let relevance = match query.query.as_deref().map(str::trim) {
        Some(text) if !text.is_empty() => {
            let ids: Vec<&str> = window.changes.iter().map(|c| c.id.as_str()).collect();
            let found = crate::query::relevance(&repo, text, &ids, server).map_err(|e| {
                ContextError::Query {
                    service: name.to_owned(),
                    source: e,
                }
            })?;
            report.matched_by = found.matched_by;
            report.warnings.extend(found.warnings);
            Some(found.scores)
        }
        _ => None,
    };
    let records = rank::records(
        name,
        &label,
        service,
        (since, until),
        window,
        relevance.as_ref(),
    );
    Ok((records, report))
}

fn open_local(name: &str, path: &Path, map: &Path) -> Result<Repo, ContextError> {
    if !path.exists() {
        return Err(ContextError::Repository {
            service: name.to_owned(),
            problem: format!(
                "its repository {} does not exist; fix `repo` in {} or clone the repository there",
                path.display(),
                map.display()
            ),
        });
    }
    Repo::discover(path).map_err(|e| ContextError::Repository {
        service: name.to_owned(),
        problem: format!(
            "{} is not a git repository ({e}); fix `repo` in {}",
            path.display(),
            map.display()
        ),
    })
}

/// Brings the local copy of a URL service up to date: clones it when it is
/// missing, else fetches (unless `no_fetch`). A failed fetch is reported,
/// not fatal: the local copy still answers.
fn fetch_or_clone(
    name: &str,
    url: &str,
    clone: &Path,
    no_fetch: bool,
) -> Result<Option<String>, ContextError> {
    let git = |args: &[&std::ffi::OsStr]| {
        std::process::Command::new("git")
            .args(args)
            .env("GIT_TERMINAL_PROMPT", "0")
            .stdin(std::process::Stdio::null())
            .output()
    };
    let outcome = |output: std::io::Result<std::process::Output>| match output {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(String::from_utf8_lossy(&o.stderr).trim().to_owned()),
        Err(e) => Err(format!("cannot run git: {e}")),
    };
    if !clone.exists() {
        let result = outcome(git(&[
            "clone".as_ref(),
            "--quiet".as_ref(),
            url.as_ref(),
            clone.as_os_str(),
        ]));
        return match result {
            Ok(()) => Ok(None),
            Err(detail) => Err(ContextError::Unreachable {
                service: name.to_owned(),
                url: url.to_owned(),
                clone: clone.to_owned(),
                detail,
            }),
        };
    }
    if no_fetch {
        return Ok(None);
    }
    Ok(outcome(git(&[
        "-C".as_ref(),
        clone.as_os_str(),
        "fetch".as_ref(),
        "--quiet".as_ref(),
        "origin".as_ref(),
    ]))
    .err())
}

/// The commit the service's branch points at: for a URL service the
/// remote-tracking branch (what was just fetched), else the local one;
/// without `branch`, `HEAD` (of the remote, for a URL service).
fn branch_tip(
    name: &str,
    service: &Service,
    location: &Location,
    repo: &Repo,
) -> Result<diffidx_core::ObjectId, ContextError> {
    let remote = matches!(location, Location::Remote { .. });
    let candidates: Vec<String> = match (&service.branch, remote) {
        (Some(b), true) => vec![format!("refs/remotes/origin/{b}"), b.clone()],
        (Some(b), false) => vec![format!("refs/heads/{b}"), b.clone()],
        (None, true) => vec!["refs/remotes/origin/HEAD".into(), "HEAD".into()],
        (None, false) => vec!["HEAD".into()],
    };
    for rev in &candidates {
        if let Ok(id) = repo.resolve_commit(rev) {
            return Ok(id);
        }
    }
    Err(ContextError::Repository {
        service: name.to_owned(),
        problem: match &service.branch {
            Some(b) => format!(
                "branch {b:?} is not in {}; fix `branch` in the service map",
                repo.work_dir()
                    .unwrap_or_else(|| repo.common_dir())
                    .display()
            ),
            None => format!(
                "{} has no commits yet",
                repo.work_dir()
                    .unwrap_or_else(|| repo.common_dir())
                    .display()
            ),
        },
    })
}
