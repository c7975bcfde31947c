//! `git diffidx show [REV | A..B | A...B] [--first-parent] [--json] [--patch FILE|-]`

use std::io::Read;

use anyhow::Context as _;
use diffidx_core::git::Target;
use diffidx_core::lang::parts::ChangeType;
use diffidx_core::note::{tool_name, NoteDocument, NOTE_VERSION};
use diffidx_core::symbol::display_name;
use diffidx_core::{Status, SymbolDiffer};

use clap::Args;

use super::pager::print_paged;
use super::util::{
    change_list, describe_lineage, print, terminal_safe, Context, LimitArgs, UsageError,
};

#[derive(Args)]
pub struct ShowArgs {
    /// A commit (default HEAD), `A..B` (tree A against tree B) or `A...B`
    /// (merge base of A and B against B, what a pull request shows).
    #[arg(value_name = "REV|A..B", default_value = "HEAD")]
    pub rev: String,

    /// Print the note document (DESIGN.md §4) instead of text.
    #[arg(long)]
    pub json: bool,

    /// Label the symbols a unified diff touches (FILE, or - for stdin), e.g.
    /// `git diff | git diffidx show --patch -`. Pre-images are read from REV
    /// (default HEAD), or from the index when the patch does not apply there.
    #[arg(long, value_name = "FILE|-")]
    pub patch: Option<String>,

    /// For a merge commit: what it brought to its first parent (the net
    /// change of REV^1..REV), instead of its note, which holds only its own
    /// conflict resolutions.
    #[arg(long, conflicts_with = "patch")]
    pub first_parent: bool,

    /// Compute the record even when the commit has a note this version
    /// wrote (which is otherwise printed as it is: the same bytes, faster).
    #[arg(long)]
    pub compute: bool,

    #[command(flatten)]
    pub limits: LimitArgs,
}

pub fn run(ctx: &Context, args: &ShowArgs) -> anyhow::Result<()> {
    let repo = ctx.open_repo()?;
    let (note, heading) = if let Some(source) = &args.patch {
        let mut differ = SymbolDiffer::new(&repo, args.limits.options(&repo))?;
        let Target::Commit(base) = repo.resolve_target(&args.rev)? else {
            return Err(UsageError("--patch takes one base revision, not a range".into()).into());
        };
        let text = read_patch(source)?;
        let diff = differ.diff_patch(base, &text)?;
        let note = NoteDocument {
            v: NOTE_VERSION,
            commit: None,
            parent: Some(base.to_string()),
            tool: tool_name(),
            deltas: diff.deltas,
            diagnostics: diff.diagnostics,
        };
        (
            note,
            format!("patch {source} against {}", short(&base.to_string())),
        )
    } else if let Some(merged) = args
        .first_parent
        .then(|| diffidx_lib::api::merge_note(&repo, &args.rev, args.limits.options(&repo)))
        .transpose()?
        .flatten()
    {
        merged
    } else {
        // A limit given on the command line may differ from the note's.
        let stored = !args.compute && args.limits.max_file_size.is_none();
        diffidx_lib::api::note(&repo, &args.rev, args.limits.options(&repo), stored)?
    };
    if args.json {
        return print(&note.to_json());
    }
    if !args.first_parent && args.patch.is_none() && diffidx_lib::api::is_merge(&repo, &args.rev) {
        eprintln!(
            "note: a merge's record holds only its own conflict resolutions; \
             `git diffidx show --first-parent {}` shows what it brought to its first parent",
            terminal_safe(&args.rev)
        );
    }
    let changes = diffidx_lib::api::changes::note_changes(&repo, &note);
    print_paged(ctx, Some(&repo), &render(&note, &changes, &heading, ctx))
}

fn read_patch(source: &str) -> anyhow::Result<String> {
    let mut bytes = Vec::new();
    if source == "-" {
        std::io::stdin()
            .read_to_end(&mut bytes)
            .context("cannot read the patch from standard input")?;
    } else {
        bytes = std::fs::read(source)
            .with_context(|| format!("cannot read the patch file {source}"))?;
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}

/// Human output: a heading, counts, then one group per status; `changes`
/// are the change types of each delta.
fn render(
    note: &NoteDocument,
    changes: &[Vec<ChangeType>],
    heading: &str,
    ctx: &Context,
) -> String {
    let style = &ctx.style();
    let mut out = format!("{}\n", style.bold(&terminal_safe(heading)));
    const ORDER: [Status; 4] = [
        Status::Modified,
        Status::Added,
        Status::Deleted,
        Status::Moved,
    ];
    let counts: Vec<String> = ORDER
        .iter()
        .filter_map(|s| {
            let n = note.deltas.iter().filter(|d| d.status == *s).count();
            (n > 0).then(|| format!("{n} {}", s.as_str().to_lowercase()))
        })
        .collect();
    if counts.is_empty() {
        out.push_str("no symbol changes\n");
    } else {
        out.push_str(&format!("{}\n", counts.join(", ")));
    }
    let name_width = note
        .deltas
        .iter()
        .map(|d| display_name(&d.qualname, &d.sig).chars().count())
        .max()
        .unwrap_or(0)
        .min(60);
    for status in ORDER {
        let group: Vec<_> = note
            .deltas
            .iter()
            .zip(
                changes
                    .iter()
                    .map(Vec::as_slice)
                    .chain(std::iter::repeat(&[][..])),
            )
            .filter(|(d, _)| d.status == status)
            .collect();
        if group.is_empty() {
            continue;
        }
        out.push_str(&format!("\n{}\n", style.status(status, status.as_str())));
        for (d, types) in group {
            let lines = if d.start_line == d.end_line {
                format!("{}", d.start_line)
            } else {
                format!("{}-{}", d.start_line, d.end_line)
            };
            let mut line = format!(
                "  {:<11} {:<width$}  {}",
                d.kind.as_str(),
                terminal_safe(&display_name(&d.qualname, &d.sig)),
                style.dim(&format!("{}:{}", terminal_safe(&d.path), lines)),
                width = name_width
            );
            if let Some(old) = &d.old_path {
                let edited = if d.modified == Some(true) {
                    ", modified"
                } else {
                    ""
                };
                line.push_str(&format!("  (from {}{edited})", terminal_safe(old)));
            }
            if let Some(from) = &d.from {
                line.push_str(&format!(" {}", describe_lineage(from, &d.path)));
            }
            line.push_str(&change_list(types));
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    if !note.diagnostics.is_empty() {
        out.push('\n');
        for diag in &note.diagnostics {
            let detail = diag
                .detail
                .as_deref()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default();
            out.push_str(&style.warn(&format!(
                "warning: {} {}{}",
                terminal_safe(&diag.path),
                diag.problem.describe(),
                terminal_safe(&detail)
            )));
            out.push('\n');
        }
    }
    out
}
