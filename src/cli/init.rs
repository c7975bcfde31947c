//! `git diffidx init [--days N] [--no-hooks]`

use clap::Args;
use diffidx_lib::index::{index, IndexOptions};

use super::util::{days_ago, index_summary, Bar, Context, LimitArgs};

#[derive(Args)]
pub struct InitArgs {
    /// Index the last N days (default: git config `diffidx.backfillDays`, else 90).
    #[arg(long, value_name = "N")]
    pub days: Option<u64>,

    /// Do not install the hooks.
    #[arg(long)]
    pub no_hooks: bool,

    /// Also fetch the notes of REMOTE (default origin) on `git fetch`, to be
    /// imported by `index`; publish yours with `git push REMOTE refs/notes/diffidx`.
    #[arg(long, value_name = "REMOTE", num_args = 0..=1, default_missing_value = "origin")]
    pub share: Option<String>,

    #[command(flatten)]
    pub limits: LimitArgs,
}

pub const DEFAULT_BACKFILL_DAYS: u64 = 90;

pub fn run(ctx: &Context, args: &InitArgs) -> anyhow::Result<()> {
    let repo = ctx.open_repo()?;
    let days = args
        .days
        .or_else(|| {
            repo.config_integer("diffidx.backfillDays")
                .and_then(|d| u64::try_from(d).ok())
        })
        .unwrap_or(DEFAULT_BACKFILL_DAYS);
    if !args.no_hooks {
        let installed = diffidx_lib::hooks::install(&repo)?;
        eprintln!(
            "installed hooks: {}",
            installed
                .iter()
                .filter_map(|p| p.file_name())
                .map(|n| n.to_string_lossy())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if let Some(remote) = &args.share {
        if diffidx_lib::share::share_via(&repo, remote)? {
            eprintln!(
                "`git fetch {remote}` now brings {remote}'s notes; publish yours with `git push {remote} refs/notes/diffidx`"
            );
        }
    }
    let options = IndexOptions {
        revs: Vec::new(),
        since: Some(days_ago(days)),
        diff: args.limits.options(&repo),
    };
    let started = std::time::Instant::now();
    let mut bar = Bar::new(ctx.stderr_is_terminal);
    let report = index(&repo, &options, &mut bar)?;
    bar.finish();
    eprint!(
        "backfill of the last {days} days: {}",
        index_summary(&report)
    );
    eprintln!("took {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}
