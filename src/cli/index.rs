//! `git diffidx index [REV | RANGE]... [--days N]`

use diffidx::index::{index, IndexOptions, IndexReport, Progress};

use super::{Context, IndexArgs};

pub fn run(ctx: &Context, args: &IndexArgs) -> anyhow::Result<()> {
    let repo = ctx.open_repo()?;
    let options = IndexOptions {
        revs: args.revs.clone(),
        since: args.days.map(days_ago),
        diff: args.limits.options(&repo),
    };
    let mut progress = Bar::new(!args.quiet && ctx.stderr_is_terminal);
    let report = index(&repo, &options, &mut progress)?;
    progress.finish();
    if !args.quiet {
        eprint!("{}", summary(&report));
    }
    // With Neo4j credentials, push too; a Neo4j that is down does not fail indexing.
    if let Some(config) = diffidx::sync::Neo4jConfig::from_env(&repo)? {
        let started = std::time::Instant::now();
        match diffidx::sync::push(&repo, &config) {
            Ok(pushed) if !args.quiet => eprintln!(
                "{}",
                super::push::summary(&pushed, &config, started.elapsed())
            ),
            Ok(_) => {}
            Err(e) => eprintln!("warning: {e}; run `git diffidx push` to retry"),
        }
    }
    Ok(())
}

/// Seconds since the epoch `days` days ago.
pub fn days_ago(days: u64) -> i64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    now - (days as i64) * 86_400
}

/// The end-of-run summary (also used by `init`).
pub fn summary(report: &IndexReport) -> String {
    let mut out = String::new();
    let indexed = report.computed + report.imported;
    if indexed == 0 && report.loaded == 0 {
        out.push_str("already up to date\n");
    } else {
        out.push_str(&format!(
            "indexed {indexed} commits ({} computed, {} from existing notes), {} loaded into the store\n",
            report.computed, report.imported, report.loaded
        ));
    }
    for (commit, reason) in &report.rejected {
        out.push_str(&format!(
            "warning: the note of {commit} was rejected and recomputed: {reason}\n"
        ));
    }
    if !report.shallow.is_empty() {
        out.push_str(&format!(
            "warning: {} commits at the shallow clone's boundary were not indexed (their parents are missing); \
             run `git fetch --unshallow` to index them\n",
            report.shallow.len()
        ));
    }
    out
}

/// A progress bar on a terminal's stderr, nothing elsewhere.
pub struct Bar {
    enabled: bool,
    total: usize,
    last_percent: usize,
}

impl Bar {
    pub fn new(enabled: bool) -> Bar {
        Bar {
            enabled,
            total: 0,
            last_percent: usize::MAX,
        }
    }

    pub fn finish(&self) {
        if self.enabled && self.total > 0 {
            eprintln!();
        }
    }
}

impl Progress for Bar {
    fn start(&mut self, total: usize) {
        self.total = total;
    }

    fn advance(&mut self, done: usize) {
        if !self.enabled || self.total == 0 {
            return;
        }
        let percent = done * 100 / self.total;
        if percent != self.last_percent {
            self.last_percent = percent;
            let filled = percent / 4;
            eprint!(
                "\rindexing [{}{}] {done}/{} commits",
                "#".repeat(filled),
                " ".repeat(25 - filled),
                self.total
            );
        }
    }
}
