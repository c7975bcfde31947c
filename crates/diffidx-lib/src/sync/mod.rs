//! Push to a shared Neo4j (DESIGN.md §6). Only this module knows Bolt.
//!
//! The notes are what is pushed: every noted commit not yet pushed to this
//! target, in batches of commits. Each batch becomes `crate::graph` rows (the
//! same rows the store holds), written in one transaction of `UNWIND`
//! `MERGE`s under uniqueness constraints, so a retried or repeated batch
//! changes nothing. After a batch commits, its commits are appended to a
//! per-target watermark file; a push that dies resumes from there.
//! Credentials never appear in errors, logs or status.

mod bolt;
mod config;

use std::collections::HashSet;
use std::io::Write as _;
use std::path::PathBuf;

use diffidx_core::git::Repo;
use diffidx_core::{CommitRecord, SymbolDiffer};

pub use config::{normalize_url, repository_identity, without_userinfo, Neo4jConfig};

use crate::graph::GraphRows;
use crate::state::StateDir;

#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error("Neo4j configuration: {0}")]
    Config(String),
    #[error("cannot reach Neo4j at {uri}: {reason}; the push will resume from here next time")]
    Unreachable { uri: String, reason: String },
    #[error("Neo4j at {uri} refused the credentials of user '{user}' (or it is no Bolt server); check NEO4J_USERNAME and NEO4J_PASSWORD")]
    Auth { uri: String, user: String },
    #[error("Neo4j at {uri} failed ({what}): {reason}; the push will resume from here next time")]
    Query {
        uri: String,
        what: &'static str,
        reason: String,
    },
    #[error(transparent)]
    State(#[from] crate::state::StateError),
    #[error(transparent)]
    Core(#[from] diffidx_core::Error),
    #[error("cannot use {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

type Result<T, E = SyncError> = std::result::Result<T, E>;

/// What a push did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PushReport {
    pub commits: usize,
    pub rows: usize,
    pub transactions: usize,
    pub already: usize,
    /// Notes that fail validation, not pushed: (commit, reason).
    pub invalid: Vec<(String, String)>,
    /// Notes for commits this clone does not have (nothing to push them with).
    pub absent: usize,
    /// The code graph was pushed (it changed since the last push): its
    /// commit and the rows sent.
    pub graph: Option<(String, usize)>,
    /// The symbols' vectors were pushed (the semantic index changed since
    /// the last push): how many, and whether the server has a vector index
    /// on them (`Err`: why not, e.g. a server without vector indexes).
    pub vectors: Option<(usize, std::result::Result<(), String>)>,
}

/// Noted commits not pushed to a target yet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Backlog {
    /// Waiting for the next push.
    pub pending: usize,
    /// Skipped by the last push: invalid notes (see `fsck`), or notes of
    /// commits this clone lacks. They stay out until they change.
    pub skipped: usize,
}

/// Noted commits not pushed to this target yet.
pub fn backlog(repo: &Repo, config: &Neo4jConfig) -> Result<Backlog> {
    let watermark = config.watermark_path(&StateDir::of(repo));
    let pushed = read_watermark(&watermark)?;
    let skipped = read_watermark(&skipped_path(&watermark))?;
    let notes = repo.notes()?;
    let mut backlog = Backlog::default();
    for (commit, _) in notes.list()? {
        let sha = commit.to_string();
        if skipped.contains(&sha) {
            backlog.skipped += 1;
        } else if !pushed.contains(&sha) {
            backlog.pending += 1;
        }
    }
    Ok(backlog)
}

/// Where a push lists the notes it could not push (rewritten by every push).
fn skipped_path(watermark: &std::path::Path) -> PathBuf {
    watermark.with_extension("skipped")
}

/// What `index` and the hooks do after indexing: push when credentials are
/// configured. `Ok(None)` without credentials; `Err` for a configuration
/// error; otherwise the target and how the push went (a Neo4j that is down
/// must not fail the indexing that came before, so the caller decides).
pub fn push_if_configured(repo: &Repo) -> Result<Option<(Neo4jConfig, Result<PushReport>)>> {
    Ok(Neo4jConfig::from_env(repo)?.map(|config| {
        let pushed = push(repo, &config);
        (config, pushed)
    }))
}

/// Pushes every noted commit not pushed yet, in order of commit time.
pub fn push(repo: &Repo, config: &Neo4jConfig) -> Result<PushReport> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|source| SyncError::Io {
            path: PathBuf::from("tokio runtime"),
            source,
        })?;
    runtime.block_on(push_async(repo, config))
}

async fn push_async(repo: &Repo, config: &Neo4jConfig) -> Result<PushReport> {
    let watermark = config.watermark_path(&StateDir::of(repo));
    let pushed = read_watermark(&watermark)?;
    let mut notes = repo.notes()?;
    let mut todo = Vec::new();
    let mut skipped = Vec::new();
    let mut report = PushReport::default();
    for (commit, _) in notes.list()? {
        if pushed.contains(&commit.to_string()) {
            report.already += 1;
            continue;
        }
        let Ok(info) = repo.commit(commit) else {
            report.absent += 1;
            skipped.push(commit.to_string());
            continue;
        };
        match notes.read_validated(&info)? {
            Some(Ok(note)) => todo.push((info, note)),
            Some(Err(reason)) => {
                skipped.push(commit.to_string());
                report.invalid.push((commit.to_string(), reason));
            }
            None => {}
        }
    }
    write_skipped(&skipped_path(&watermark), &skipped)?;
    let code_graph = code_graph_to_push(repo, &watermark);
    let vectors = vectors_to_push(repo, &watermark);
    if todo.is_empty() && code_graph.is_none() && vectors.is_none() {
        return Ok(report);
    }
    todo.sort_by_key(|(info, _)| (info.time, info.id));
    let graph = bolt::connect(config).await?;
    bolt::ensure_constraints(&graph, config).await?;
    // The files each note touched, as of its commit: the hierarchy around
    // every change, as the store has it.
    let mut differ = SymbolDiffer::new(repo, crate::settings::diff_options(repo, None))?;
    let mut todo = todo.into_iter().peekable();
    while todo.peek().is_some() {
        // Commits per transaction: as many as fit the row budget, at least one.
        let mut batch: Vec<CommitRecord> = Vec::new();
        let mut rows = 0;
        while let Some((info, note)) = todo.next_if(|(_, n)| {
            batch.is_empty() || rows + n.deltas.len() * 3 + 2 <= config.batch_rows
        }) {
            rows += note.deltas.len() * 3 + 2;
            let files = differ.snapshot_files(&info, &note)?;
            batch.push(CommitRecord { info, note, files });
        }
        let graph_rows = GraphRows::from_records(&batch);
        let sent =
            bolt::with_retries(config, || bolt::write_rows(&graph, config, &graph_rows)).await?;
        append_watermark(&watermark, batch.iter().map(|r| r.info.id.to_string()))?;
        report.commits += batch.len();
        report.rows += sent;
        report.transactions += 1;
        crate::fault::point(crate::fault::PUSH_BATCH_DONE);
    }
    if let Some(snapshot) = code_graph {
        let sent = bolt::with_retries(config, || bolt::write_code_graph(&graph, config, &snapshot))
            .await?;
        write_graph_watermark(&watermark, &snapshot.commit)?;
        report.rows += sent;
        report.transactions += 1;
        report.graph = Some((snapshot.commit, sent));
    }
    if let Some(vectors) = vectors {
        let sent =
            bolt::with_retries(config, || bolt::write_vectors(&graph, config, &vectors)).await?;
        let index = bolt::ensure_vector_index(&graph, config, vectors.dim).await;
        std::fs::write(
            vectors_watermark(&watermark),
            format!("{}\n", vectors.stamp),
        )
        .map_err(|source| SyncError::Io {
            path: vectors_watermark(&watermark),
            source,
        })?;
        report.rows += sent;
        report.transactions += 1;
        report.vectors = Some((vectors.rows.len(), index));
    }
    Ok(report)
}

/// Where a push records the semantic index it pushed vectors of.
fn vectors_watermark(watermark: &std::path::Path) -> PathBuf {
    watermark.with_extension("vectors")
}

/// The symbols' vectors when the semantic index changed since the last
/// push (none without the semantic layer; an index that cannot be read is
/// pushed next time).
fn vectors_to_push(
    repo: &Repo,
    watermark: &std::path::Path,
) -> Option<crate::semantic::SymbolVectors> {
    let vectors = crate::semantic::symbol_vectors(&StateDir::of(repo)).ok()??;
    let pushed = std::fs::read_to_string(vectors_watermark(watermark)).unwrap_or_default();
    (pushed.trim() != vectors.stamp && !vectors.rows.is_empty()).then_some(vectors)
}

/// Where a push records the commit of the code graph it pushed.
fn graph_watermark(watermark: &std::path::Path) -> PathBuf {
    watermark.with_extension("graph")
}

/// The store's code graph when it differs from the one pushed last (a
/// store that cannot be read now is pushed next time).
fn code_graph_to_push(
    repo: &Repo,
    watermark: &std::path::Path,
) -> Option<crate::store::codegraph::GraphSnapshot> {
    let pushed = std::fs::read_to_string(graph_watermark(watermark)).unwrap_or_default();
    let store = crate::open::for_reading(repo, crate::open::WAIT).ok()?;
    let commit = store.meta("graph_commit").ok()??;
    if commit == pushed.trim() {
        return None;
    }
    store.graph_snapshot().ok()?
}

fn write_graph_watermark(watermark: &std::path::Path, commit: &str) -> Result<()> {
    let path = graph_watermark(watermark);
    std::fs::write(&path, format!("{commit}\n")).map_err(|source| SyncError::Io { path, source })
}

fn read_watermark(path: &std::path::Path) -> Result<HashSet<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text
            .lines()
            .map(str::to_owned)
            .filter(|l| l.len() == 40)
            .collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(HashSet::new()),
        Err(source) => Err(SyncError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

fn write_skipped(path: &std::path::Path, shas: &[String]) -> Result<()> {
    if shas.is_empty() {
        return match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(SyncError::Io {
                path: path.to_owned(),
                source: e,
            }),
            _ => Ok(()),
        };
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|source| SyncError::Io {
            path: dir.to_owned(),
            source,
        })?;
    }
    let text: String = shas.iter().map(|s| format!("{s}\n")).collect();
    std::fs::write(path, text).map_err(|source| SyncError::Io {
        path: path.to_owned(),
        source,
    })
}

fn append_watermark(path: &std::path::Path, shas: impl Iterator<Item = String>) -> Result<()> {
    let io = |source| SyncError::Io {
        path: path.to_owned(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let mut file = std::fs::File::options()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io)?;
    let mut text = String::new();
    for sha in shas {
        text.push_str(&sha);
        text.push('\n');
    }
    file.write_all(text.as_bytes()).map_err(io)?;
    file.sync_data().map_err(io)
}
