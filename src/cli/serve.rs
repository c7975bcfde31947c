//! `git diffidx serve [--idle SECONDS]`: the long-lived reader of
//! `diffidx_lib::server`, in the foreground; prints one line per request.

use std::time::Duration;

use clap::Args;

use super::util::Context;

#[derive(Args)]
pub struct ServeArgs {
    /// Exit after this many seconds without a query.
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    pub idle: u64,
}

pub fn run(ctx: &Context, args: &ServeArgs) -> anyhow::Result<()> {
    let repo = ctx.open_repo()?;
    diffidx_lib::server::serve(&repo, Duration::from_secs(args.idle), |event| {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{event}").and_then(|_| out.flush());
    })?;
    Ok(())
}
