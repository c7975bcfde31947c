//! `git diffidx context --service NAME --since T [--until T] [--map FILE] [--limit N] [--query TEXT] [--no-fetch] [--json]`

use clap::Args;
use diffidx_core::symbol::display_name;
use diffidx_lib::context::{ContextQuery, ContextRecord};

use super::pager::print_paged;
use super::util::{fit, print, terminal_safe, terminal_width, Context};

#[derive(Args)]
pub struct ContextArgs {
    /// A service of the service map; repeat it (or give a comma-separated
    /// list) to merge several by score.
    #[arg(long, value_name = "NAME", required = true)]
    pub service: Vec<String>,

    /// Start of the window: RFC 3339, epoch seconds, or "2 hours ago".
    #[arg(long, value_name = "TIME")]
    pub since: String,

    /// End of the window (default now).
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,

    /// The service map (default: $DIFFIDX_SERVICE_MAP, git config
    /// diffidx.serviceMap, ~/.config/diffidx/services.toml).
    #[arg(long, value_name = "FILE")]
    pub map: Option<String>,

    /// At most N records, best first (default: all).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,

    /// Do not fetch services whose repository is a URL (use the local clone).
    #[arg(long)]
    pub no_fetch: bool,

    /// What the incident looks like, in words ("totals rounded wrong"):
    /// changes of symbols that match it by name, words and, with the
    /// semantic layer on, meaning rank higher.
    #[arg(long, value_name = "TEXT")]
    pub query: Option<String>,

    /// Print a JSON array of records, best first (docs/context.md).
    #[arg(long)]
    pub json: bool,
}

pub fn run(ctx: &Context, args: &ContextArgs) -> anyhow::Result<()> {
    let query = ContextQuery {
        service: args.service.clone(),
        since: args.since.clone(),
        until: args.until.clone(),
        map: args.map.clone(),
        limit: args.limit,
        no_fetch: args.no_fetch,
        query: args.query.clone(),
    };
    // A repository where the command runs only supplies git config.
    let here = ctx.open_repo().ok();
    let program = std::env::current_exe().ok();
    let answer = diffidx_lib::context::context(
        &query,
        diffidx_lib::api::service_map_config(here.as_ref()),
        program.as_deref(),
    )
    .map_err(diffidx_lib::api::ApiError::from)?;
    for service in &answer.services {
        let indexed = if service.indexed > 0 {
            format!(", {} indexed now", service.indexed)
        } else {
            String::new()
        };
        eprintln!(
            "{}: {} ({} commit{} in the window{indexed})",
            terminal_safe(&service.service),
            terminal_safe(&service.repo),
            service.commits,
            if service.commits == 1 { "" } else { "s" },
        );
        if !service.matched_by.is_empty() {
            eprintln!(
                "  matched to the query by {}",
                service.matched_by.join(", ")
            );
        }
        for warning in &service.warnings {
            eprintln!(
                "{}",
                ctx.style()
                    .warn(&format!("warning: {}", terminal_safe(warning)))
            );
        }
        if let Some(why) = &service.fetch_failed {
            eprintln!(
                "{}",
                ctx.style().warn(&format!(
                    "warning: fetching {} failed, answering from the local clone: {}",
                    terminal_safe(&service.service),
                    terminal_safe(why)
                ))
            );
        }
    }
    if args.json {
        return print(&format!("{}\n", serde_json::to_string(&answer.records)?));
    }
    if answer.records.is_empty() {
        eprintln!(
            "no symbol changes between {} and {}",
            diffidx_core::git::rfc3339(answer.since, 0),
            diffidx_core::git::rfc3339(answer.until, 0)
        );
        return Ok(());
    }
    let several = answer.services.len() > 1;
    let width = terminal_width();
    let mut out = String::new();
    for record in &answer.records {
        out.push_str(&fit(&render(record, several, ctx), width));
        out.push('\n');
    }
    print_paged(ctx, None, &out)
}

/// One record a line: score, time, status, symbol, place, callers, then
/// the commit (which gives way on a narrow terminal).
fn render(r: &ContextRecord, several: bool, ctx: &Context) -> String {
    let style = &ctx.style();
    let status = diffidx_core::Status::parse(&r.status);
    let label = format!("{:<8}", r.status);
    let label = match status {
        Some(s) => style.status(s, &label),
        None => label,
    };
    let lines = if r.start_line == r.end_line {
        r.start_line.to_string()
    } else {
        format!("{}-{}", r.start_line, r.end_line)
    };
    let service = if several {
        format!("[{}] ", terminal_safe(&r.service))
    } else {
        String::new()
    };
    let callers = match (r.callers, r.nearest_callers.first()) {
        (Some(n), Some(first)) if n > 1 => {
            format!("  ← {} and {} more", terminal_safe(first), n - 1)
        }
        (Some(_), Some(first)) => format!("  ← {}", terminal_safe(first)),
        _ => String::new(),
    };
    let moved = r
        .old_path
        .as_ref()
        .map(|p| format!(" (from {})", terminal_safe(p)))
        .unwrap_or_default();
    format!(
        "{:.2} {}{} {} {} {}  {}:{}{}{}  {}",
        r.score,
        service,
        r.time.get(..16).unwrap_or(&r.time).replace('T', " "),
        label,
        r.kind,
        style.bold(&terminal_safe(&display_name(&r.qualname, &r.sig))),
        terminal_safe(&r.path),
        lines,
        moved,
        style.dim(&callers),
        style.dim(&terminal_safe(&format!(
            "{} {} — {}",
            &r.commit[..r.commit.len().min(12)],
            r.author,
            r.subject
        ))),
    )
}
