//! `git diffidx log [--symbol] NAME|FILE:LINE [REV] [--all|--first-parent|--full-history] [--kind K] [--path P] [--since D] [--until D] [--author A] [--json] [-p]`

use anyhow::Context as _;
use clap::Args;
use diffidx_lib::api::history::{walk_history, HistoryWalk};
use diffidx_lib::store::HistoryEntry;

use super::pager::print_paged;
use super::util::{
    change_list, describe_lineage, fit, print, terminal_safe, terminal_width, Context, UsageError,
};

#[derive(Args)]
pub struct LogArgs {
    /// A qualified name, or a suffix of one at a `.`/`::` boundary
    /// (`Foo.Bar` matches `Acme.Foo.Bar`); `Foo.Bar(int,string)` picks one overload.
    /// Or FILE:LINE: the innermost symbol at that line of the file as of REV
    /// (`src/Money.cs:42`).
    #[arg(
        long = "symbol",
        value_name = "NAME",
        required_unless_present = "positional"
    )]
    pub symbol: Option<String>,

    /// NAME (the same as `--symbol NAME`), then REV: answer for the history
    /// of REV (default HEAD): `git diffidx log Foo.Bar main`.
    #[arg(value_name = "NAME [REV]", num_args = 0..=2)]
    pub positional: Vec<String>,

    /// Every indexed commit, whatever history it is in (other branches, and
    /// commits a rebase or amend left behind).
    #[arg(long, conflicts_with = "first_parent")]
    pub all: bool,

    /// Follow only the first parent of merges, as `git log --first-parent`:
    /// a side branch's changes are shown at the merge that brought them in
    /// (`--json`: `side_commits` lists them).
    #[arg(long, conflicts_with = "full_history")]
    pub first_parent: bool,

    /// Every change, also those of a side branch whose merge kept the other
    /// side's version of the files, as `git log --full-history`; by default
    /// they are left out, as `git log -- FILE` leaves them out.
    #[arg(long, conflicts_with = "all")]
    pub full_history: bool,

    /// Only symbols of this kind (method, class, function, ...).
    #[arg(long, value_name = "KIND")]
    pub kind: Option<String>,

    /// Only symbols in this file or directory.
    #[arg(long, value_name = "PATH")]
    pub path: Option<String>,

    /// Only changes made at or after DATE (2024-01-31, RFC 3339, "2 weeks ago", @EPOCH).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,

    /// Only changes made at or before DATE.
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,

    /// Only changes by an author whose name contains TEXT (any case).
    #[arg(long, value_name = "TEXT")]
    pub author: Option<String>,

    /// Print a JSON array, newest first.
    #[arg(long)]
    pub json: bool,

    /// Show each version's own diff of the symbol.
    #[arg(short = 'p', long = "patch")]
    pub patch: bool,
}

pub fn run(ctx: &Context, args: &LogArgs) -> anyhow::Result<()> {
    let repo = ctx.open_repo()?;
    let (symbol, rev) = match (&args.symbol, args.positional.as_slice()) {
        (Some(symbol), []) => (symbol.as_str(), None),
        (Some(symbol), [rev]) => (symbol.as_str(), Some(rev.as_str())),
        (None, [name]) => (name.as_str(), None),
        (None, [name, rev]) => (name.as_str(), Some(rev.as_str())),
        _ => {
            return Err(UsageError(
                "give one NAME (positionally or with --symbol) and at most one REV".into(),
            )
            .into())
        }
    };
    if args.all && rev.is_some() {
        return Err(UsageError("--all and a REV contradict each other; give one".into()).into());
    }
    // The history asked about: REV's, else HEAD's (none in an empty repository).
    let tip = match rev {
        Some(rev) => Some(repo.resolve_commit(rev)?),
        None => repo.resolve_commit("HEAD").ok(),
    };
    let cwd = std::env::current_dir().ok();
    let (query, located) = diffidx_lib::api::history::log_query(
        &repo,
        symbol,
        args.kind.as_deref(),
        args.path.as_deref(),
        tip,
        cwd.as_deref(),
    )?;
    if let Some(at) = &located {
        eprintln!(
            "note: {} is in {} {} ({}:{}-{})",
            terminal_safe(symbol),
            at.kind,
            terminal_safe(&at.name),
            terminal_safe(&at.path),
            at.start_line,
            at.end_line
        );
    }
    let head = tip.map(|h| h.to_string());
    // The query server answers faster; this binary is what it runs.
    let program = std::env::current_exe().ok();
    let history =
        diffidx_lib::query::history(&repo, &query, head.clone(), !args.all, program.as_deref())?;
    let rev_name = rev.unwrap_or("HEAD");
    if let (Some(false), Some(head)) = (history.head_indexed, &head) {
        let index = if rev.is_some() {
            format!("git diffidx index {}", terminal_safe(rev_name))
        } else {
            "git diffidx index".to_owned()
        };
        eprintln!(
            "note: {} ({}) is not indexed yet; run `{index}` for an up-to-date history",
            terminal_safe(rev_name),
            &head[..12]
        );
    }
    if let Some(date) = &history.indexed_from {
        eprintln!(
            "note: history before {date} is not indexed; `git diffidx index --all` indexes it"
        );
    }
    if history.entries.is_empty() && history.hidden == 0 {
        if args.json {
            print("[]\n")?;
        }
        if history.known {
            // The symbol is there, unchanged in every indexed commit.
            eprintln!(
                "no recorded change of '{}' in the indexed commits",
                terminal_safe(symbol)
            );
            return Ok(());
        }
        let hint = match history.suggestions.as_slice() {
            [] => String::new(),
            names => format!(
                "; did you mean {}?",
                names
                    .iter()
                    .map(|n| format!("'{}'", terminal_safe(n)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let mut narrowed = String::new();
        if let Some(kind) = query.kind {
            narrowed.push_str(&format!(" of kind {kind}"));
        }
        if let Some(path) = &query.path {
            narrowed.push_str(&format!(" under {}", terminal_safe(path)));
        }
        anyhow::bail!(
            "no indexed symbol matches '{}'{narrowed}{hint} (only indexed commits are searched; \
             see `git diffidx status`)",
            terminal_safe(symbol)
        );
    }
    let hidden = history.hidden;
    if hidden > 0 {
        eprintln!(
            "note: {hidden} change{} on commits outside {}'s history {} hidden; `--all` shows {}",
            if hidden == 1 { "" } else { "s" },
            terminal_safe(rev_name),
            if hidden == 1 { "is" } else { "are" },
            if hidden == 1 { "it" } else { "them" },
        );
    }
    let walk = HistoryWalk::from_flags(args.first_parent, args.full_history);
    let entries = match tip {
        Some(tip) if !args.all => {
            let (entries, dropped) = walk_history(&repo, tip, history.entries, walk)?;
            if dropped > 0 {
                eprintln!(
                    "note: {dropped} change{} on side branches whose merge kept the other side's \
                     files {} hidden, as `git log` hides {}; `--full-history` shows {}",
                    if dropped == 1 { "" } else { "s" },
                    if dropped == 1 { "is" } else { "are" },
                    if dropped == 1 { "it" } else { "them" },
                    if dropped == 1 { "it" } else { "them" },
                );
            }
            entries
        }
        _ => history.entries,
    };
    let mut entries = diffidx_lib::api::filter_history(
        entries,
        args.since.as_deref(),
        args.until.as_deref(),
        args.author.as_deref(),
    )?;
    diffidx_lib::api::attach_summaries(&repo, &mut entries);
    diffidx_lib::api::changes::attach_changes(&repo, &mut entries);
    if args.json {
        let json = serde_json::to_string(&entries).context("cannot serialize the history")?;
        return print(&format!("{json}\n"));
    }
    if entries.is_empty() {
        eprintln!(
            "no recorded change of a symbol matching '{}' passes the filters given",
            terminal_safe(symbol)
        );
        return Ok(());
    }
    let mut out = String::new();
    // One entry a line: the tail (author and subject) gives way on a narrow terminal.
    let width = terminal_width();
    for entry in &entries {
        out.push_str(&fit(&render(entry, ctx), width));
        out.push('\n');
        if let Some(summary) = &entry.summary {
            let line = format!("    {} ({})", summary.text, summary.model);
            out.push_str(&ctx.style().dim(&fit(&terminal_safe(&line), width)));
            out.push('\n');
        }
        if args.patch {
            match diffidx_lib::query::symbol_patch(&repo, entry) {
                Ok(diff) => out.extend(
                    diff.lines()
                        .map(|l| format!("    {}\n", ctx.style().diff_line(&terminal_safe(l)))),
                ),
                Err(e) => out.push_str(&format!("    ({e})\n")),
            }
        }
    }
    print_paged(ctx, Some(&repo), &out)
}

fn render(e: &HistoryEntry, ctx: &Context) -> String {
    let style = &ctx.style();
    let lines = if e.start_line == e.end_line {
        e.start_line.to_string()
    } else {
        format!("{}-{}", e.start_line, e.end_line)
    };
    let moved = e
        .old_path
        .as_ref()
        .map(|p| format!(" (from {})", terminal_safe(p)))
        .unwrap_or_default()
        + &e.from
            .as_ref()
            .map(|from| describe_lineage(from, &e.path))
            .unwrap_or_default();
    let label = style.status(e.status, &format!("{:<8}", e.status.as_str()));
    let side = match e.side_commits.len() {
        0 => String::new(),
        1 => " (1 side-branch commit)".to_owned(),
        n => format!(" ({n} side-branch commits)"),
    };
    let changes = change_list(&e.changes);
    format!(
        "{} {} {} {} {}  {}:{}{}{}{}  {}",
        style.dim(&e.commit[..e.commit.len().min(12)]),
        &e.date[..e.date.len().min(10)],
        label,
        e.kind,
        terminal_safe(&diffidx_core::symbol::display_name(&e.qualname, &e.sig)),
        terminal_safe(&e.path),
        lines,
        moved,
        side,
        changes,
        style.dim(&terminal_safe(&format!("{} — {}", e.author, e.subject))),
    )
}
