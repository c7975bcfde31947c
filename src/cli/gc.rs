//! `git diffidx gc [--dry-run]`: forget commits no ref reaches any more.

use clap::Args;

use super::util::{Bar, Context, LimitArgs};

#[derive(Args)]
pub struct GcArgs {
    /// Only list the commits that would be forgotten.
    #[arg(short = 'n', long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub limits: LimitArgs,
}

pub fn run(ctx: &Context, args: &GcArgs) -> anyhow::Result<()> {
    let repo = ctx.open_repo()?;
    let report = diffidx_lib::index::gc(
        &repo,
        &args.limits.options(&repo),
        args.dry_run,
        &mut Bar::new(false),
    )?;
    let n = report.unreachable.len();
    if n == 0 {
        eprintln!("every indexed commit is in the history of a ref; nothing to forget");
        return Ok(());
    }
    if args.dry_run {
        for commit in &report.unreachable {
            super::util::print(&format!("{commit}\n"))?;
        }
        eprintln!(
            "{n} indexed commit{} no ref reaches; `git diffidx gc` forgets {}",
            if n == 1 { "" } else { "s" },
            if n == 1 { "it" } else { "them" }
        );
        return Ok(());
    }
    eprintln!(
        "forgot {n} indexed commit{} no ref reaches; the store was rebuilt from the other notes ({} commits)",
        if n == 1 { "" } else { "s" },
        report.loaded
    );
    Ok(())
}
