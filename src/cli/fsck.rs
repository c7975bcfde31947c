//! `git diffidx fsck [--json]`: every note, and the store against the notes.
//! Exit 0 when all is well, 1 when something needs repair (and what to run).

use clap::Args;
use diffidx_lib::fsck::{check, FsckReport, StoreCheck, StoreScan};
use diffidx_lib::store::seal::SealState;

use super::util::{print, terminal_safe, Context};

#[derive(Args)]
pub struct FsckArgs {
    /// Print a JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Set in the child that reads the store (see [`run`]).
const CHILD: &str = "DIFFIDX_FSCK_CHILD";

/// A damaged store can crash the storage engine itself (a C++ library), so
/// the whole check first runs in a child process; when that dies from a
/// signal, the notes are checked here and the store reported as damaged.
pub fn run(ctx: &Context, args: &FsckArgs) -> anyhow::Result<()> {
    let repo = ctx.open_repo()?;
    let scan = if std::env::var_os(CHILD).is_some() {
        StoreScan::Compare
    } else {
        match in_child()? {
            ChildOutcome::Exited(code) => return exit_with(code),
            ChildOutcome::Crashed(signal) => StoreScan::Skip(format!(
                "reading it crashed the storage engine (signal {signal}): it is damaged"
            )),
        }
    };
    let report = check(&repo, scan)?;
    if args.json {
        print(&format!("{}\n", serde_json::to_string_pretty(&report)?))?;
    } else {
        print(&human(&report))?;
    }
    if report.is_clean() {
        Ok(())
    } else {
        Err(anyhow::anyhow!(
            "fsck found problems; {}",
            report.repairs().join("; ")
        ))
    }
}

fn human(report: &FsckReport) -> String {
    let mut out = format!(
        "notes:  {} checked, {} invalid, {} for commits not in this clone\n",
        report.notes, report.invalid_note_count, report.notes_for_absent_commits
    );
    for (commit, reason) in &report.invalid_notes {
        out.push_str(&format!(
            "  invalid note {commit}: {}\n",
            terminal_safe(reason)
        ));
    }
    match &report.store {
        StoreCheck::Absent => out.push_str("store:  none yet (run `git diffidx index`)\n"),
        StoreCheck::Unreadable { reason } => {
            out.push_str(&format!("store:  unreadable: {}\n", terminal_safe(reason)))
        }
        StoreCheck::Checked(f) => {
            out.push_str(&format!(
                "store:  {} commits, {} symbols, {} changes checked\n",
                f.commits, f.symbols, f.changes
            ));
            out.push_str(match f.seal {
                SealState::Matches => "  its bytes are as diffidx last wrote them\n",
                SealState::Differs => "  its bytes were changed by something other than diffidx\n",
                SealState::Absent => {
                    "  no seal (an older diffidx or a killed writer wrote it last)\n"
                }
            });
            let lines = [
                (f.missing_commit_count, "noted commits not loaded"),
                (
                    f.unnoted_commit_count,
                    "loaded commits without a valid note",
                ),
                (
                    f.mismatched_commit_count,
                    "commits whose changes differ from the note",
                ),
                (f.damaged_symbol_count, "damaged symbols"),
            ];
            for (count, what) in lines.into_iter().filter(|(n, _)| *n > 0) {
                out.push_str(&format!("  {count} {what}\n"));
            }
            for commit in f.missing_commits.iter().chain(&f.unnoted_commits) {
                out.push_str(&format!("  commit {commit}\n"));
            }
            for (commit, what) in &f.mismatched_commits {
                out.push_str(&format!("  commit {commit}: {what}\n"));
            }
            for (id, what) in &f.damaged_symbols {
                out.push_str(&format!("  symbol {id}: {what}\n"));
            }
        }
    }
    if report.is_clean() {
        out.push_str("ok: the notes are valid and the store agrees with them\n");
    }
    out
}

enum ChildOutcome {
    Exited(i32),
    Crashed(i32),
}

/// Runs this same command in a child (its output passes straight through).
fn in_child() -> anyhow::Result<ChildOutcome> {
    use std::os::unix::process::ExitStatusExt;
    let exe = std::env::current_exe()?;
    let status = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env(CHILD, "1")
        .status()?;
    Ok(match (status.code(), status.signal()) {
        (Some(code), _) => ChildOutcome::Exited(code),
        (None, signal) => ChildOutcome::Crashed(signal.unwrap_or(0)),
    })
}

/// Ends this process with the child's exit code (its output is printed).
fn exit_with(code: i32) -> anyhow::Result<()> {
    if code == 0 {
        Ok(())
    } else {
        std::process::exit(code)
    }
}
