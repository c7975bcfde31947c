//! `git diffidx show [REV | A..B | A...B] [--json] [--patch FILE|-]`

use std::io::Read;

use anyhow::Context as _;
use diffidx_core::git::Target;
use diffidx_core::note::{tool_name, NoteDocument, NOTE_VERSION};
use diffidx_core::{Status, SymbolDiffer};

use super::{Context, ShowArgs, UsageError};

pub fn run(ctx: &Context, args: &ShowArgs) -> anyhow::Result<()> {
    let repo = ctx.open_repo()?;
    let mut differ = SymbolDiffer::new(&repo, args.limits.options(&repo))?;
    let (note, heading) = if let Some(source) = &args.patch {
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
    } else {
        match repo.resolve_target(&args.rev)? {
            Target::Commit(id) => {
                let commit = repo.commit(id)?;
                let note = differ.commit_note(&commit)?;
                let heading = format!("commit {}  {}", short(&id.to_string()), commit.subject);
                (note, heading)
            }
            Target::Range { base, head } => {
                let (b, h) = (repo.commit(base)?, repo.commit(head)?);
                let diff = differ.diff_trees(Some(b.tree), h.tree)?;
                let note = NoteDocument {
                    v: NOTE_VERSION,
                    commit: Some(head.to_string()),
                    parent: Some(base.to_string()),
                    tool: tool_name(),
                    deltas: diff.deltas,
                    diagnostics: diff.diagnostics,
                };
                let heading = format!("{}..{}", short(&base.to_string()), short(&head.to_string()));
                (note, heading)
            }
        }
    };
    let out = if args.json {
        note.to_json()
    } else {
        render(&note, &heading, ctx)
    };
    super::print(&out)
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

/// Human output: a heading, counts, then one group per status.
fn render(note: &NoteDocument, heading: &str, ctx: &Context) -> String {
    let style = &ctx.style;
    let mut out = format!("{}\n", style.bold(heading));
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
        .map(|d| d.qualname.chars().count() + d.sig.chars().count())
        .max()
        .unwrap_or(0)
        .min(60);
    for status in ORDER {
        let group: Vec<_> = note.deltas.iter().filter(|d| d.status == status).collect();
        if group.is_empty() {
            continue;
        }
        out.push_str(&format!("\n{}\n", style.status(status, status.as_str())));
        for d in group {
            let lines = if d.start_line == d.end_line {
                format!("{}", d.start_line)
            } else {
                format!("{}-{}", d.start_line, d.end_line)
            };
            let mut line = format!(
                "  {:<11} {:<width$}  {}",
                d.kind.as_str(),
                format!("{}{}", d.qualname, d.sig),
                style.dim(&format!("{}:{}", d.path, lines)),
                width = name_width
            );
            if let Some(old) = &d.old_path {
                let edited = if d.modified == Some(true) {
                    ", modified"
                } else {
                    ""
                };
                line.push_str(&format!("  (from {old}{edited})"));
            }
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
                diag.path,
                diag.problem.describe(),
                detail
            )));
            out.push('\n');
        }
    }
    out
}

/// `log -p`: the diff of one symbol between the entry's commit and its first
/// parent, indented under the entry.
pub fn symbol_patch(
    repo: &diffidx_core::git::Repo,
    entry: &diffidx::store::HistoryEntry,
) -> Result<String, String> {
    use diffidx_core::symbol::SymbolKind;
    let kind = SymbolKind::parse(&entry.kind).ok_or("unknown kind")?;
    let commit = repo
        .resolve_commit(&entry.commit)
        .map_err(|e| e.to_string())?;
    let info = repo.commit(commit).map_err(|e| e.to_string())?;
    let mut differ = SymbolDiffer::new(repo, Default::default()).map_err(|e| e.to_string())?;
    let deleted = entry.status == "DELETED";
    let new = if deleted {
        None
    } else {
        differ
            .symbol_source(commit, &entry.path, &entry.qualname, kind, &entry.sig)
            .map_err(|e| e.to_string())?
    };
    let old_path = entry.old_path.as_deref().unwrap_or(&entry.path);
    let old = match info.parents.first() {
        Some(&parent) if repo.gix().has_object(parent) => differ
            .symbol_source(parent, old_path, &entry.qualname, kind, &entry.sig)
            .map_err(|e| e.to_string())?,
        _ => None,
    };
    let diff = diffidx_core::git::hunks::unified_diff(
        old.as_deref().unwrap_or(""),
        new.as_deref().unwrap_or(""),
    );
    Ok(diff.lines().map(|l| format!("    {l}\n")).collect())
}
