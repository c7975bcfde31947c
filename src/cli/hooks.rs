//! `git diffidx hooks install|uninstall`, and the hidden `hook-run`.

use diffidx::index::{run_for_hook, IndexOptions};

use super::{Context, HookRunArgs, HooksAction, HooksArgs};

pub fn run(ctx: &Context, args: &HooksArgs) -> anyhow::Result<()> {
    let repo = ctx.open_repo()?;
    match args.action {
        HooksAction::Install => {
            for path in diffidx::hooks::install(&repo)? {
                eprintln!("installed {}", path.display());
            }
        }
        HooksAction::Uninstall => {
            let removed = diffidx::hooks::uninstall(&repo)?;
            if removed.is_empty() {
                eprintln!("no diffidx hooks were installed");
            }
            for path in removed {
                eprintln!("removed {}", path.display());
            }
        }
    }
    Ok(())
}

/// Installed hooks, for `status`.
pub fn installed(repo: &diffidx_core::git::Repo) -> Vec<String> {
    diffidx::hooks::installed(repo)
}

/// Runs from a hook, in the background: never prints, never fails visibly
/// (errors go to `.git/diffidx/hook.log` and `status`).
pub fn hook_run(ctx: &Context, _args: &HookRunArgs) -> anyhow::Result<()> {
    let Ok(repo) = ctx.open_repo() else {
        return Ok(());
    };
    let options = IndexOptions {
        revs: Vec::new(),
        since: None,
        diff: super::LimitArgs {
            max_file_size: None,
        }
        .options(&repo),
    };
    let _ = run_for_hook(&repo, &options);
    Ok(())
}
