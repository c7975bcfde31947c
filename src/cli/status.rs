//! `git diffidx status [--json]`

use std::time::Duration;

use clap::Args;
use diffidx_lib::state::StateDir;

use super::util::{print, Context};

#[derive(Args)]
pub struct StatusArgs {
    /// Print a JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(serde::Serialize)]
struct Status {
    indexed_commits: u64,
    /// Where the indexed history begins: the oldest indexed commit.
    #[serde(skip_serializing_if = "Option::is_none")]
    oldest_indexed: Option<OldestIndexed>,
    notes: usize,
    unindexed_commits: usize,
    /// True when the count stopped at its limit (of commits looked at).
    unindexed_more: bool,
    symbols: u64,
    changes: u64,
    store_bytes: u64,
    store: String,
    hooks_installed: Vec<String>,
    /// A `serve` process is answering `log` queries for this repository.
    query_server: bool,
    last_error: Option<String>,
    /// Noted commits not pushed to the configured Neo4j yet (absent without credentials).
    #[serde(skip_serializing_if = "Option::is_none")]
    neo4j_backlog: Option<diffidx_lib::sync::Backlog>,
}

#[derive(serde::Serialize)]
struct OldestIndexed {
    commit: String,
    date: String,
}

const COUNT_LIMIT: usize = 100_000;

pub fn run(ctx: &Context, args: &StatusArgs) -> anyhow::Result<()> {
    let repo = ctx.open_repo()?;
    let state = StateDir::of(&repo);
    let path = state.store();
    let (counts, oldest) = if path.exists() {
        let store = diffidx_lib::open::for_reading(&repo, Duration::from_secs(10))?;
        (Some(store.counts()?), store.oldest_commit()?)
    } else {
        (None, None)
    };
    let (unindexed, complete) = diffidx_lib::index::unindexed_count(&repo, COUNT_LIMIT)?;
    let status = Status {
        indexed_commits: counts.map_or(0, |c| c.commits),
        oldest_indexed: oldest.map(|(commit, date)| OldestIndexed { commit, date }),
        notes: repo.notes()?.list()?.len(),
        unindexed_commits: unindexed,
        unindexed_more: !complete,
        symbols: counts.map_or(0, |c| c.symbols),
        changes: counts.map_or(0, |c| c.changes),
        store_bytes: diffidx_lib::store::disk_size(&path),
        store: path
            .canonicalize()
            .unwrap_or(path.clone())
            .display()
            .to_string(),
        hooks_installed: diffidx_lib::hooks::installed(&repo),
        query_server: diffidx_lib::client::is_running(&state.socket()),
        last_error: state.last_error(),
        neo4j_backlog: match diffidx_lib::sync::Neo4jConfig::from_env(&repo)? {
            Some(config) => Some(diffidx_lib::sync::backlog(&repo, &config)?),
            None => None,
        },
    };
    if args.json {
        return print(&format!("{}\n", serde_json::to_string(&status)?));
    }
    let mut out = format!(
        "indexed commits:   {} ({} notes){}\nnot yet indexed:   {}{}{}\nsymbols:           {} ({} changes)\nstore:             {} ({})\nhooks:             {}\n",
        status.indexed_commits,
        status.notes,
        status
            .oldest_indexed
            .as_ref()
            .map(|o| format!(", from {} ({})", &o.date, &o.commit[..o.commit.len().min(12)]))
            .unwrap_or_default(),
        status.unindexed_commits,
        if status.unindexed_more { "+" } else { "" },
        if status.unindexed_commits > 0 {
            " (`git diffidx index --all`, or --days N / --since DATE, indexes them)"
        } else {
            ""
        },
        status.symbols,
        status.changes,
        status.store,
        human_bytes(status.store_bytes),
        if status.hooks_installed.is_empty() {
            "not installed (run `git diffidx hooks install`)".to_owned()
        } else {
            status.hooks_installed.join(", ")
        },
    );
    out.push_str(if status.query_server {
        "query server:      running (answers `log`)\n"
    } else {
        "query server:      not running (the next `log` starts one)\n"
    });
    if let Some(backlog) = status.neo4j_backlog {
        out.push_str(&format!(
            "neo4j backlog:     {} commits not pushed yet\n",
            backlog.pending
        ));
        if backlog.skipped > 0 {
            out.push_str(&format!(
                "                   {} notes the last push skipped (invalid, or of commits not here; see `git diffidx fsck`)\n",
                backlog.skipped
            ));
        }
    }
    if let Some(err) = &status.last_error {
        out.push_str(&format!("last error:        {err}\n"));
    }
    print(&out)
}

fn human_bytes(n: u64) -> String {
    match n {
        0..1024 => format!("{n} B"),
        1024..1_048_576 => format!("{:.1} KiB", n as f64 / 1024.0),
        _ => format!("{:.1} MiB", n as f64 / 1_048_576.0),
    }
}
