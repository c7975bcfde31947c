//! `git diffidx push`: the notes to the shared Neo4j.

use clap::Args;
use diffidx_lib::sync::{push, Neo4jConfig};

use super::util::{push_summary, terminal_safe, Context, UsageError};

#[derive(Args)]
pub struct PushArgs {
    /// Print nothing on success.
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn run(ctx: &Context, args: &PushArgs) -> anyhow::Result<()> {
    let repo = ctx.open_repo()?;
    let Some(config) = Neo4jConfig::from_env(&repo)? else {
        return Err(UsageError(
            "no Neo4j credentials: set NEO4J_URI (or git config diffidx.neo4j.uri) and NEO4J_PASSWORD".into(),
        )
        .into());
    };
    let started = std::time::Instant::now();
    let report = push(&repo, &config)?;
    if !args.quiet || !report.invalid.is_empty() {
        eprintln!("{}", push_summary(&report, &config, started.elapsed()));
    }
    for (commit, reason) in report.invalid.iter().take(5) {
        eprintln!("  invalid note {commit}: {}", terminal_safe(reason));
    }
    if report.invalid.is_empty() {
        Ok(())
    } else {
        Err(anyhow::anyhow!(
            "{} notes were not pushed; `git diffidx rebuild` recomputes them, then push again",
            report.invalid.len()
        ))
    }
}
