//! `git diffidx push`: the notes to the shared Neo4j.

use diffidx::sync::{push, Neo4jConfig};

use super::{Context, PushArgs, UsageError};

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
    if !args.quiet {
        eprintln!("{}", summary(&report, &config, started.elapsed()));
    }
    Ok(())
}

pub fn summary(
    report: &diffidx::sync::PushReport,
    config: &Neo4jConfig,
    took: std::time::Duration,
) -> String {
    if report.commits == 0 {
        format!(
            "Neo4j at {} is up to date ({} commits pushed before)",
            config.uri, report.already
        )
    } else {
        format!(
            "pushed {} commits ({} rows in {} transactions) to {} as {} in {:.1} s",
            report.commits,
            report.rows,
            report.transactions,
            config.uri,
            config.repo_id,
            took.as_secs_f64()
        )
    }
}
