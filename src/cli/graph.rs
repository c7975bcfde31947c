//! `git diffidx graph NAME [--callers] [--callees] [--imports] [--inherits] [--depth N] [--min-resolution R] [--json]`

use clap::Args;
use diffidx_core::codegraph::Resolution;
use diffidx_core::symbol::display_name;
use diffidx_lib::api::GraphParams;
use diffidx_lib::codegraph::Reached;
use diffidx_lib::store::codegraph::{TreeSymbolRow, UnresolvedCallCount};

use super::pager::print_paged;
use super::util::{terminal_safe, Context};

#[derive(Args)]
pub struct GraphArgs {
    /// A qualified name, or a suffix of one at a `.`/`::` boundary;
    /// `Foo.Bar(int)` picks one overload.
    #[arg(value_name = "NAME")]
    pub symbol: String,

    /// What calls it.
    #[arg(long)]
    pub callers: bool,

    /// What it calls.
    #[arg(long)]
    pub callees: bool,

    /// What its file imports.
    #[arg(long)]
    pub imports: bool,

    /// What it inherits or implements, and what inherits or implements it.
    #[arg(long)]
    pub inherits: bool,

    /// Follow edges this many hops (default 1).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub depth: u32,

    /// Follow only edges resolved at least this surely: exact, scoped
    /// (the default), unique_name or ambiguous (every edge, also those
    /// found by name only).
    #[arg(long, value_name = "LEVEL", value_parser = parse_resolution)]
    pub min_resolution: Option<Resolution>,

    /// Only symbols of this kind.
    #[arg(long, value_name = "KIND")]
    pub kind: Option<String>,

    /// Only symbols in this file or directory.
    #[arg(long, value_name = "PATH")]
    pub path: Option<String>,

    /// Print JSON (the `GraphAnswer` schema of docs/graph.md).
    #[arg(long)]
    pub json: bool,
}

pub fn parse_resolution(text: &str) -> Result<Resolution, String> {
    diffidx_lib::api::params::parse_resolution(text).map_err(|e| e.message)
}

pub fn run(ctx: &Context, args: &GraphArgs) -> anyhow::Result<()> {
    let repo = ctx.open_repo()?;
    let mut direction = Vec::new();
    for (asked, name) in [
        (args.callers, "callers"),
        (args.callees, "callees"),
        (args.imports, "imports"),
        (args.inherits, "inherits"),
    ] {
        if asked {
            direction.push(name.to_owned());
        }
    }
    let params = GraphParams {
        symbol: args.symbol.clone(),
        direction,
        depth: Some(args.depth),
        min_resolution: args.min_resolution.map(|r| r.as_str().to_owned()),
        kind: args.kind.clone(),
        path: args.path.clone(),
    };
    let query = params.to_query()?;
    // The query server answers faster; this binary is what it runs.
    let program = std::env::current_exe().ok();
    let answer = diffidx_lib::api::graph(&repo, &params, program.as_deref())?;
    if args.json {
        super::util::print(&format!("{}\n", serde_json::to_string_pretty(&answer)?))?;
        return Ok(());
    }
    let style = ctx.style();
    let mut out = String::new();
    for s in &answer.symbols {
        out.push_str(&format!(
            "{}  {}  {}:{}{}\n",
            style.bold(&terminal_safe(&display_name(&s.qualname, &s.sig))),
            s.kind,
            terminal_safe(&s.path),
            s.start_line,
            unresolved_note(s),
        ));
    }
    let sections = [
        ("callers", &answer.callers),
        ("callees", &answer.callees),
        ("inherits or implements", &answer.bases),
        ("inherited or implemented by", &answer.derived),
    ];
    for (title, reached) in sections {
        let asked = match title {
            "callers" => query.callers,
            "callees" => query.callees,
            _ => query.inherits,
        };
        if asked {
            let callers = title == "callers";
            let unknown = callers && !answer.unresolved_calls.is_empty();
            let more = if callers {
                answer.more_at_lower_levels
            } else {
                0
            };
            let at_least = if unknown || more > 0 { "at least " } else { "" };
            out.push_str(&format!("{title} ({at_least}{}):\n", reached.len()));
            for r in reached {
                out.push_str(&reached_line(r));
            }
            out.push_str(&lower_levels_line(more));
            if unknown {
                out.push_str(&lower_bound_line(&answer.unresolved_calls));
            }
        }
    }
    if query.imports {
        out.push_str(&format!("imports ({}):\n", answer.imports.len()));
        for i in &answer.imports {
            let alias = if i.alias.is_empty() {
                String::new()
            } else {
                format!(" as {}", terminal_safe(&i.alias))
            };
            out.push_str(&format!(
                "  {}:{}  {} {}{alias}\n",
                terminal_safe(&i.file),
                i.line,
                i.kind,
                terminal_safe(&i.target)
            ));
        }
    }
    print_paged(ctx, Some(&repo), &out)
}

fn unresolved_note(s: &TreeSymbolRow) -> String {
    match s.unresolved {
        0 => String::new(),
        1 => "  (1 call outside the repository or unresolved)".into(),
        n => format!("  ({n} calls outside the repository or unresolved)"),
    }
}

/// `  + 5 more found by name only (...)`, or nothing when there are none.
pub fn lower_levels_line(more: usize) -> String {
    match more {
        0 => String::new(),
        n => format!(
            "  + {n} more found by name only, left out as less certain \
             (`--min-resolution ambiguous` lists them)\n"
        ),
    }
}

/// Why a caller count is a lower bound: `  + 14 calls named bar, in 6
/// files, matched no declaration (9 on receivers of unknown type, 5 by bare
/// names not in scope); some may be callers`.
pub fn lower_bound_line(unresolved: &[UnresolvedCallCount]) -> String {
    let sum = |f: fn(&UnresolvedCallCount) -> u64| unresolved.iter().map(f).sum::<u64>();
    let (qualified, bare, files) = (sum(|u| u.qualified), sum(|u| u.bare), sum(|u| u.files));
    let names: Vec<String> = unresolved
        .iter()
        .map(|u| terminal_safe(&u.name).into_owned())
        .collect();
    let mut why = Vec::new();
    if qualified > 0 {
        why.push(format!("{qualified} on receivers of unknown type"));
    }
    if bare > 0 {
        why.push(format!("{bare} by bare names not in scope"));
    }
    let s = |n: u64| if n == 1 { "" } else { "s" };
    format!(
        "  + {} call{} named {}, in {files} file{}, matched no declaration ({}); some may be callers\n",
        qualified + bare,
        s(qualified + bare),
        names.join(" or "),
        s(files),
        why.join(", "),
    )
}

/// `  1  Foo.Bar(int)  src/Foo.cs:12  scoped` (with the candidate count
/// when ambiguous, the declaration a call through an interface or a base
/// type names, and `no body` for a callee declared without one, whose
/// implementations are what runs).
pub fn reached_line(r: &Reached) -> String {
    let mut how = if r.resolution == "ambiguous" {
        format!("ambiguous, 1 of {}", r.candidates)
    } else {
        r.resolution.clone()
    };
    if let Some(through) = &r.through {
        how.push_str(&format!(", through {}", terminal_safe(through)));
    }
    if r.symbol.bodiless {
        how.push_str(", no body");
    }
    let edge = if r.edge == "CALLS" {
        String::new()
    } else {
        format!("{}  ", r.edge)
    };
    format!(
        "  {}  {edge}{}  {}:{}  {how}\n",
        r.distance,
        terminal_safe(&display_name(&r.symbol.qualname, &r.symbol.sig)),
        terminal_safe(&r.symbol.path),
        r.symbol.start_line,
    )
}
