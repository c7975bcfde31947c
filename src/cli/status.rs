//! `git diffidx status [--json]`

use clap::Args;

use super::util::{print, Context};

#[derive(Args)]
pub struct StatusArgs {
    /// Print a JSON object.
    #[arg(long)]
    pub json: bool,
}

pub fn run(ctx: &Context, args: &StatusArgs) -> anyhow::Result<()> {
    let repo = ctx.open_repo()?;
    let status = diffidx_lib::api::status::status(&repo)?;
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
