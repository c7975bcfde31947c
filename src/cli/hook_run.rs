//! `git diffidx hook-run HOOK`: what the hook scripts start in the
//! background. It never prints and never fails visibly: outcomes go to
//! `.git/diffidx/hook.log` and `status`.

use clap::Args;
use diffidx_lib::index::IndexOptions;

use super::util::Context;

#[derive(Args)]
pub struct HookRunArgs {
    /// The hook that started this run.
    pub hook: String,
    /// The hook's own arguments (ignored).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub rest: Vec<String>,
}

pub fn run(ctx: &Context, _args: &HookRunArgs) -> anyhow::Result<()> {
    let Ok(repo) = ctx.open_repo() else {
        return Ok(());
    };
    let options = IndexOptions {
        revs: Vec::new(),
        window: diffidx_lib::index::Window::New,
        diff: diffidx_lib::settings::diff_options(&repo, None),
    };
    let _ = diffidx_lib::hooks::run(&repo, &options);
    Ok(())
}
