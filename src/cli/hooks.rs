//! `git diffidx hooks install|uninstall`: the scripts of `hooks/`.

use clap::Args;

use super::util::Context;

#[derive(Args)]
pub struct HooksArgs {
    #[arg(value_enum)]
    pub action: HooksAction,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum HooksAction {
    Install,
    Uninstall,
}

pub fn run(ctx: &Context, args: &HooksArgs) -> anyhow::Result<()> {
    let repo = ctx.open_repo()?;
    match args.action {
        HooksAction::Install => {
            for path in diffidx_lib::hooks::install(&repo)? {
                eprintln!("installed {}", path.display());
            }
        }
        HooksAction::Uninstall => {
            let removed = diffidx_lib::hooks::uninstall(&repo)?;
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
