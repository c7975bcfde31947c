//! `git diffidx init [--days N | --since DATE | --all] [--no-hooks]`

use clap::Args;
use diffidx_lib::index::{index, IndexOptions, Window};

use super::util::{describe_window, index_summary, Bar, Context, LimitArgs, WindowArgs};

#[derive(Args)]
pub struct InitArgs {
    /// How far back to index (default: the last `diffidx.backfillDays`
    /// days, else 90, before the newest commit).
    #[command(flatten)]
    pub window: WindowArgs,

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
    let window = match args.window.window()? {
        Some(window) => window,
        None => Window::Days(
            repo.config_integer("diffidx.backfillDays")
                .and_then(|d| u64::try_from(d).ok())
                .unwrap_or(DEFAULT_BACKFILL_DAYS),
        ),
    };
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
        window,
        diff: args.limits.options(&repo),
    };
    let started = std::time::Instant::now();
    let mut bar = Bar::new(ctx.stderr_is_terminal);
    let report = index(&repo, &options, &mut bar)?;
    bar.finish();
    eprint!(
        "backfill of {}: {}",
        describe_window(window),
        index_summary(&report)
    );
    let (older, complete) = diffidx_lib::index::unindexed_count(&repo, 100_000)?;
    if older > 0 {
        eprintln!(
            "{older}{} older commits are not indexed; `git diffidx index --all` (or --days N, --since DATE) indexes them",
            if complete { "" } else { "+" }
        );
    }
    eprintln!("took {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}
