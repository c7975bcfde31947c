//! `git diffidx serve [--idle SECONDS]`: the long-lived reader of
//! `diffidx::serve`, in the foreground; prints one line per request.

use std::time::Duration;

use super::{Context, ServeArgs};

pub fn run(ctx: &Context, args: &ServeArgs) -> anyhow::Result<()> {
    let repo = ctx.open_repo()?;
    diffidx::serve::serve(&repo, Duration::from_secs(args.idle), |event| {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{event}").and_then(|_| out.flush());
    })?;
    Ok(())
}
