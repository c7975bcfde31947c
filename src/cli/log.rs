//! `git diffidx log --symbol NAME [--kind K] [--path P] [--json] [-p]`

use std::time::Duration;

use anyhow::Context as _;
use diffidx::index::state_dir;
use diffidx::serve;
use diffidx::store::{store_path, HistoryEntry, HistoryQuery};
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
    let mut query = HistoryQuery::parse(&args.symbol);
    query.kind = args.kind.clone();
    query.path = args.path.clone();
    let head = repo.resolve_commit("HEAD").ok().map(|h| h.to_string());
    let (entries, head_indexed) = history(&repo, &query, head.clone())?;
    if let (Some(false), Some(head)) = (head_indexed, &head) {
        eprintln!(
            "note: HEAD ({}) is not indexed yet; run `git diffidx index` for an up-to-date history",
            &head[..12]
        );
    }
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
/// The history and whether HEAD is indexed: from a running `serve` process
/// when there is one (fast), else from the store directly, after which a
/// server is started for the next query. `DIFFIDX_SERVER=off` or git config
/// `diffidx.server false` keep to the direct path.
fn history(
    repo: &Repo,
    query: &HistoryQuery,
    head: Option<String>,
) -> anyhow::Result<(Vec<HistoryEntry>, Option<bool>)> {
    let dir = state_dir(repo);
    let off = |v: &str| matches!(v.trim(), "off" | "false" | "0" | "no");
    let use_server = !std::env::var("DIFFIDX_SERVER").is_ok_and(|v| off(&v))
        && !repo
            .config_string("diffidx.server")
            .is_some_and(|v| off(&v));
    if use_server {
        if let Some(answer) = serve::history(&dir, query, head.clone()) {
            return Ok((answer.entries, answer.head_indexed));
        }
    }
    let store = diffidx::index::open_for_reading(repo, Duration::from_secs(10))?;
    let entries = store.history(query)?;
    let head_indexed = head.and_then(|h| store.has_commit(&h).ok());
    drop(store);
    if use_server {
        if let Ok(program) = std::env::current_exe() {
            serve::spawn(repo, &program);
        }
    }
    Ok((entries, head_indexed))
}
