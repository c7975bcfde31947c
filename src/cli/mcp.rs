//! `git diffidx mcp`: a Model Context Protocol server over stdin/stdout
//! for code agents (`diffidx_lib::mcp`); the tools are the query commands.

use clap::Args;

use super::util::Context;

#[derive(Args)]
pub struct McpArgs {}

pub fn run(ctx: &Context, _args: &McpArgs) -> anyhow::Result<()> {
    let dir = ctx.dir.canonicalize().unwrap_or_else(|_| ctx.dir.clone());
    diffidx_lib::mcp::serve_stdio(diffidx_lib::mcp::Tools {
        dir,
        server: std::env::current_exe().ok(),
    })?;
    Ok(())
}
