//! `git diffidx index [REV | RANGE]... [--days N | --since DATE | --all]`

use clap::Args;
use diffidx_lib::index::{index, IndexOptions};

use super::util::{
    index_summary, push_summary, timings_table, Bar, Context, LimitArgs, WindowArgs,
};

#[derive(Args)]
pub struct IndexArgs {
    /// Revisions to index back from (default HEAD); `A..B` indexes what B
    /// reaches and A does not.
    #[arg(value_name = "REV|RANGE")]
    pub revs: Vec<String>,

    /// How far back (default: back to the commits already indexed).
    #[command(flatten)]
    pub window: WindowArgs,

    /// Print nothing on success.
    #[arg(short, long)]
    pub quiet: bool,

    /// Print where the time went, per stage, on stderr (even with --quiet).
    #[arg(long)]
    pub timings: bool,

    #[command(flatten)]
    pub limits: LimitArgs,
}

pub fn run(ctx: &Context, args: &IndexArgs) -> anyhow::Result<()> {
    let repo = ctx.open_repo()?;
    let options = IndexOptions {
        revs: args.revs.clone(),
        window: args.window.window()?.unwrap_or_default(),
        diff: args.limits.options(&repo),
    };
    let mut progress = Bar::new(!args.quiet && ctx.stderr_is_terminal);
    let report = index(&repo, &options, &mut progress)?;
    progress.finish();
    if !args.quiet {
        eprint!("{}", index_summary(&report));
    }
    if args.timings {
        eprint!("{}", timings_table(&report));
    }
    // With Neo4j credentials, push too; a Neo4j that is down does not fail indexing.
    let started = std::time::Instant::now();
    match diffidx_lib::sync::push_if_configured(&repo)? {
        Some((config, Ok(pushed))) if !args.quiet => {
            eprintln!("{}", push_summary(&pushed, &config, started.elapsed()))
        }
        Some((_, Err(e))) => eprintln!("warning: {e}; run `git diffidx push` to retry"),
        _ => {}
    }
    Ok(())
}
