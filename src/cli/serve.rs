//! `git diffidx serve [--idle SECONDS] [--http ADDR [--allow-remote]]`: the
//! long-lived reader of `diffidx_lib::server`, in the foreground; prints one
//! line per request. Its Unix socket speaks JSON-RPC 2.0 besides the
//! internal protocol, and `--http` serves the same JSON-RPC over HTTP.

use std::time::Duration;

use clap::Args;

use super::util::{Context, UsageError};

#[derive(Args)]
pub struct ServeArgs {
    /// Exit after this many seconds without a query; 0: never (default 600,
    /// or 0 with --http).
    #[arg(long, value_name = "SECONDS")]
    pub idle: Option<u64>,

    /// Also serve JSON-RPC 2.0 over HTTP at PORT or HOST:PORT (a bare port
    /// binds 127.0.0.1; port 0 picks a free one, printed at start).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,

    /// Let --http bind an address other hosts can reach (there is no
    /// authentication).
    #[arg(long, requires = "http")]
    pub allow_remote: bool,
}

pub fn run(ctx: &Context, args: &ServeArgs) -> anyhow::Result<()> {
    let repo = ctx.open_repo()?;
    let program = std::env::current_exe().ok();
    let say = |event: &str| {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{event}").and_then(|_| out.flush());
    };
    let http = match &args.http {
        None => None,
        Some(text) => {
            let address =
                diffidx_lib::rpc::http_address(text, args.allow_remote).map_err(UsageError)?;
            let listener = std::net::TcpListener::bind(address)
                .map_err(|e| anyhow::anyhow!("cannot listen on {address}: {e}"))?;
            say(&format!(
                "serving JSON-RPC on http://{}",
                listener.local_addr()?
            ));
            let endpoint = diffidx_lib::rpc::Endpoint {
                dir: diffidx_lib::rpc::dir_of(&repo),
                server: program.clone(),
            };
            Some(std::thread::spawn(move || {
                diffidx_lib::rpc::serve_http(endpoint, listener)
            }))
        }
    };
    let idle = args.idle.unwrap_or(if http.is_some() { 0 } else { 600 });
    diffidx_lib::server::serve(&repo, Duration::from_secs(idle), program.as_deref(), say)?;
    // Another server has the socket (or went idle): HTTP goes on, a client
    // of that server like any other.
    if let Some(http) = http {
        match http.join() {
            Ok(result) => result?,
            Err(_) => anyhow::bail!("the HTTP service stopped unexpectedly"),
        }
    }
    Ok(())
}
