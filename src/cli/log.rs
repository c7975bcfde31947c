//! `git diffidx log --symbol NAME [--kind K] [--path P] [--json] [-p]`

use std::time::Duration;

use anyhow::Context as _;
use diffidx::store::{store_path, HistoryEntry, HistoryQuery, Store};
use diffidx_core::git::Repo;

use super::{Context, LogArgs, UsageError};

pub fn run(ctx: &Context, args: &LogArgs) -> anyhow::Result<()> {
    let repo = ctx.open_repo()?;
    let path = store_path(&repo.common_dir());
    if !path.exists() {
        return Err(UsageError(
            "this repository has no diffidx index yet; run `git diffidx init` (or `git diffidx index`) first"
                .into(),
        )
        .into());
    }
    let store = diffidx::index::open_for_reading(&repo, Duration::from_secs(10))?;
    let mut query = HistoryQuery::parse(&args.symbol);
    query.kind = args.kind.clone();
    query.path = args.path.clone();
    let entries = store.history(&query)?;
    warn_if_behind(&repo, &store);
    if args.json {
        let json = serde_json::to_string(&entries).context("cannot serialize the history")?;
        return super::print(&format!("{json}\n"));
    }
    if entries.is_empty() {
        eprintln!(
            "no recorded change of a symbol matching '{}' (indexed commits only; see `git diffidx status`)",
            args.symbol
        );
        return Ok(());
    }
    let mut out = String::new();
    for entry in &entries {
        out.push_str(&render(entry, ctx));
        if args.patch {
            out.push_str(
                &super::show::symbol_patch(&repo, entry).unwrap_or_else(|e| format!("    ({e})\n")),
            );
        }
    }
    super::print(&out)
}

fn render(e: &HistoryEntry, ctx: &Context) -> String {
    let style = &ctx.style;
    let status = diffidx_core::Status::parse(&e.status);
    let lines = if e.start_line == e.end_line {
        e.start_line.to_string()
    } else {
        format!("{}-{}", e.start_line, e.end_line)
    };
    let moved = e
        .old_path
        .as_ref()
        .map(|p| format!(" (from {p})"))
        .unwrap_or_default();
    let label = status
        .map(|s| style.status(s, &format!("{:<8}", e.status)))
        .unwrap_or_else(|| e.status.clone());
    format!(
        "{} {} {} {} {}{}  {}:{}{}  {}\n",
        style.dim(&e.commit[..e.commit.len().min(12)]),
        &e.date[..e.date.len().min(10)],
        label,
        e.kind,
        e.qualname,
        if e.sig.starts_with('(') || e.sig.is_empty() {
            e.sig.clone()
        } else {
            format!(" [{}]", e.sig)
        },
        e.path,
        lines,
        moved,
        style.dim(&format!("{} — {}", e.author, e.subject)),
    )
}

/// Tells the user (on stderr) when HEAD is not in the store yet.
fn warn_if_behind(repo: &Repo, store: &Store) {
    let Ok(head) = repo.resolve_commit("HEAD") else {
        return;
    };
    if let Ok(false) = store.has_commit(&head.to_string()) {
        eprintln!(
            "note: HEAD ({}) is not indexed yet; run `git diffidx index` for an up-to-date history",
            &head.to_string()[..12]
        );
    }
}
