//! `status`: the state of a repository's index, as one JSON object.

use std::time::Duration;

use diffidx_core::git::Repo;
use serde::Serialize;

use super::ApiError;
use crate::state::StateDir;

/// How many unindexed commits `status` counts before it stops.
pub const COUNT_LIMIT: usize = 100_000;

#[derive(Debug, Clone, Serialize)]
pub struct StatusReport {
    pub indexed_commits: u64,
    /// Where the indexed history begins: the oldest indexed commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oldest_indexed: Option<OldestIndexed>,
    pub notes: usize,
    pub unindexed_commits: usize,
    /// True when the count stopped at its limit (of commits looked at).
    pub unindexed_more: bool,
    pub symbols: u64,
    pub changes: u64,
    pub store_bytes: u64,
    pub store: String,
    pub hooks_installed: Vec<String>,
    /// A `serve` process is answering queries for this repository.
    pub query_server: bool,
    pub last_error: Option<String>,
    /// Noted commits not pushed to the configured Neo4j yet (absent without credentials).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub neo4j_backlog: Option<crate::sync::Backlog>,
}

#[derive(Debug, Clone, Serialize)]
pub struct OldestIndexed {
    pub commit: String,
    pub date: String,
}

/// Reads the state of `repo`'s index.
pub fn status(repo: &Repo) -> Result<StatusReport, ApiError> {
    let failed = |e: &dyn std::error::Error| ApiError::failed(e);
    let state = StateDir::of(repo);
    let path = state.store();
    let (counts, oldest) = if path.exists() {
        let store =
            crate::open::for_reading(repo, Duration::from_secs(10)).map_err(|e| failed(&e))?;
        (
            Some(store.counts().map_err(|e| failed(&e))?),
            store.oldest_commit().map_err(|e| failed(&e))?,
        )
    } else {
        (None, None)
    };
    let (unindexed, complete) =
        crate::index::unindexed_count(repo, COUNT_LIMIT).map_err(|e| failed(&e))?;
    let neo4j_backlog = match crate::sync::Neo4jConfig::from_env(repo).map_err(|e| failed(&e))? {
        Some(config) => Some(crate::sync::backlog(repo, &config).map_err(|e| failed(&e))?),
        None => None,
    };
    Ok(StatusReport {
        indexed_commits: counts.map_or(0, |c| c.commits),
        oldest_indexed: oldest.map(|(commit, date)| OldestIndexed { commit, date }),
        notes: repo.notes()?.list()?.len(),
        unindexed_commits: unindexed,
        unindexed_more: !complete,
        symbols: counts.map_or(0, |c| c.symbols),
        changes: counts.map_or(0, |c| c.changes),
        store_bytes: crate::store::disk_size(&path),
        store: path
            .canonicalize()
            .unwrap_or(path.clone())
            .display()
            .to_string(),
        hooks_installed: crate::hooks::installed(repo),
        query_server: crate::client::is_running(&state.socket()),
        last_error: state.last_error(),
        neo4j_backlog,
    })
}
