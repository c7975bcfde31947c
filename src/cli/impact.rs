//! `git diffidx impact [REV | A..B | A...B] [--depth N] [--min-resolution R] [--json]`

use clap::Args;
use diffidx_core::codegraph::Resolution;
use diffidx_core::symbol::display_name;
use diffidx_lib::api::ImpactParams;

use super::graph::{lower_bound_line, lower_levels_line, parse_resolution, reached_line};
use super::pager::print_paged;
use super::util::{terminal_safe, Context, LimitArgs};

#[derive(Args)]
pub struct ImpactArgs {
    /// A commit (default HEAD), `A..B` or `A...B` (what a pull request changes).
    #[arg(value_name = "REV|A..B", default_value = "HEAD")]
    pub rev: String,

    /// Follow callers, subtypes and implementers this many hops (default 2).
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub depth: u32,

    /// Follow only edges resolved at least this surely: exact, scoped
    /// (the default), unique_name or ambiguous (every edge, also those
    /// found by name only).
    #[arg(long, value_name = "LEVEL", value_parser = parse_resolution)]
    pub min_resolution: Option<Resolution>,

    /// Print JSON (the `ImpactAnswer` schema of docs/graph.md).
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub limits: LimitArgs,
}

pub fn run(ctx: &Context, args: &ImpactArgs) -> anyhow::Result<()> {
    let repo = ctx.open_repo()?;
    let params = ImpactParams {
        rev: Some(args.rev.clone()),
        depth: Some(args.depth),
        min_resolution: args.min_resolution.map(|r| r.as_str().to_owned()),
    };
    // The query server answers faster; this binary is what it runs.
    let program = std::env::current_exe().ok();
    let (answer, heading) = diffidx_lib::api::impact(
        &repo,
        &params,
        args.limits.options(&repo),
        program.as_deref(),
    )?;
    let commit = answer.commit.clone().unwrap_or_default();
    if args.json {
        super::util::print(&format!("{}\n", serde_json::to_string_pretty(&answer)?))?;
        return Ok(());
    }
    let style = ctx.style();
    let mut out = format!(
        "{}  (graph at {})\n",
        style.bold(&terminal_safe(&heading)),
        &commit[..12]
    );
    out.push_str(&format!("touched ({}):\n", answer.touched.len()));
    for t in &answer.touched {
        let absent = if t.in_graph {
            ""
        } else {
            "  (not in the graph's tree)"
        };
        out.push_str(&format!(
            "  {}  {}  {}  {}:{}{absent}\n",
            style.status(t.status, t.status.as_str()),
            t.kind,
            terminal_safe(&display_name(&t.qualname, &t.sig)),
            terminal_safe(&t.path),
            t.start_line,
        ));
    }
    let unknown = !answer.unresolved_calls.is_empty();
    let more = answer.more_at_lower_levels;
    out.push_str(&format!(
        "reached within {} hop{} ({}{} symbol{} in {} file{}):\n",
        args.depth,
        plural(args.depth as usize),
        if unknown || more > 0 { "at least " } else { "" },
        answer.reached.len(),
        plural(answer.reached.len()),
        answer.files,
        plural(answer.files),
    ));
    for r in &answer.reached {
        out.push_str(&reached_line(r));
    }
    out.push_str(&lower_levels_line(more));
    if unknown {
        out.push_str(&lower_bound_line(&answer.unresolved_calls));
    }
    print_paged(ctx, Some(&repo), &out)
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
