//! `git diffidx rebuild`: the store from the notes alone.

use clap::Args;

use super::util::{Bar, Context, LimitArgs};

#[derive(Args)]
pub struct RebuildArgs {
    /// Print where the time went, per stage, on stderr.
    #[arg(long)]
    pub timings: bool,

    #[command(flatten)]
    pub limits: LimitArgs,
}

pub fn run(ctx: &Context, args: &RebuildArgs) -> anyhow::Result<()> {
    let repo = ctx.open_repo()?;
    let report =
        diffidx_lib::index::rebuild(&repo, &args.limits.options(&repo), &mut Bar::new(false))?;
    eprintln!(
        "rebuilt the store from the notes: {} commits loaded",
        report.loaded
    );
    eprint!("{}", super::util::compaction_summary(&report));
    if args.timings {
        eprint!("{}", super::util::timings_table(&report));
    }
    for (commit, reason) in &report.rejected {
        eprintln!("warning: the note of {commit} was rejected and recomputed: {reason}");
    }
    Ok(())
}
