//! Backfill on real histories: `cargo bench --bench backfill`.
//!
//! For each repository in `BENCH_BACKFILL_REPOS` (comma-separated paths of
//! git repositories, bare mirrors too), in one run: a fresh clone of it
//! (`--shared`) indexed whole with `git diffidx index --all --timings`
//! (commits/s, peak RSS, and the time of each stage, so a regression shows
//! which stage grew), then `git diffidx show --json REV` as one process per
//! commit for `BENCH_SHOW_COMMITS` commits spread over the history (default
//! 300), printing the notes and with `--compute`: p50 / p95 per process and
//! the rate it gives, beside the p50 of a process that does nothing
//! (`/bin/true`), the machine's floor for any process.
//!
//! With `BENCH_PLAIN_PYTHON` (a Python with the `tree-sitter`,
//! `tree-sitter-c-sharp` and `tree-sitter-rust` packages), the same clone's
//! history also goes through `benches/reference/plain_script.py`, and the
//! bench prints how many times faster the backfill is: the machine-relative
//! form of issue 15's goal (400 commits/s against such a script's 57-66 on
//! the machine the goal was set on, 6.1-7.0 times).
//!
//! Without repositories it says how to give them and exits: figures on
//! generated histories are `cargo bench --bench index`.

#[path = "process/mod.rs"]
#[allow(dead_code)] // shared by the benches; each uses part of it
mod process;

use std::process::Command;
use std::time::{Duration, Instant};

use process::{bin, git, percentile_ms, run, run_sampling};

fn main() {
    let Ok(repos) = std::env::var("BENCH_BACKFILL_REPOS") else {
        println!(
            "set BENCH_BACKFILL_REPOS=PATH[,PATH...] (git repositories, bare mirrors too) \
             to time backfills of real histories"
        );
        return;
    };
    let show_commits: usize = std::env::var("BENCH_SHOW_COMMITS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    for source in repos.split(',').filter(|s| !s.is_empty()) {
        let dir = tempfile::tempdir().unwrap();
        let clone = dir.path().join("clone");
        let status = Command::new("git")
            .args(["clone", "--quiet", "--shared", source])
            .arg(&clone)
            .status()
            .unwrap();
        assert!(status.success(), "cannot clone {source}");
        let head = git(&clone, &["rev-parse", "--short=12", "HEAD"]);
        let commits: Vec<String> = git(&clone, &["rev-list", "HEAD"])
            .lines()
            .map(str::to_owned)
            .collect();
        println!("{source} at {} ({} commits)", head.trim(), commits.len());

        let backfill = run_sampling(&clone, &["index", "--all", "--quiet", "--timings"]);
        let backfill_rate = commits.len() as f64 / backfill.took.as_secs_f64();
        println!(
            "  index --all: {:.2} s, {backfill_rate:.0} commits/s, peak RSS {:.0} MiB",
            backfill.took.as_secs_f64(),
            backfill.peak_mib
        );
        for line in backfill.stderr.lines() {
            println!("    {line}");
        }
        if let Ok(python) = std::env::var("BENCH_PLAIN_PYTHON") {
            plain_script(&python, &clone, commits.len(), backfill_rate);
        }

        // One `show` process per commit, as a script or an agent runs it:
        // printing the notes the backfill wrote, and computing them again.
        let step = (commits.len() / show_commits.max(1)).max(1);
        let sample: Vec<&String> = commits.iter().step_by(step).take(show_commits).collect();
        let mut floor: Vec<Duration> = Vec::with_capacity(sample.len());
        for _ in &sample {
            let started = Instant::now();
            run(&clone, "/bin/true", &[], &[]);
            floor.push(started.elapsed());
        }
        println!(
            "  /bin/true, one process each ({} times): p50 {:.1} ms, p95 {:.1} ms",
            floor.len(),
            percentile_ms(&mut floor, 0.5),
            percentile_ms(&mut floor, 0.95)
        );
        for (what, extra) in [("from notes", None), ("--compute", Some("--compute"))] {
            let mut times: Vec<Duration> = Vec::with_capacity(sample.len());
            for sha in &sample {
                let mut args = vec!["show", "--json", sha.as_str()];
                args.extend(extra);
                let started = Instant::now();
                run(&clone, bin(), &args, &[]);
                times.push(started.elapsed());
            }
            let total: Duration = times.iter().sum();
            println!(
                "  show --json {what}, one process per commit ({} commits): p50 {:.1} ms, p95 {:.1} ms, {:.0} commits/s",
                times.len(),
                percentile_ms(&mut times, 0.5),
                percentile_ms(&mut times, 0.95),
                times.len() as f64 / total.as_secs_f64()
            );
        }
    }
}

/// Runs the plain-script reference over `clone`'s history and prints its
/// rate and the backfill's multiple of it.
fn plain_script(python: &str, clone: &std::path::Path, commits: usize, backfill_rate: f64) {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benches/reference/plain_script.py"
    );
    let started = Instant::now();
    let clone_arg = clone.to_string_lossy();
    let printed = run(clone, python, &[script, clone_arg.as_ref()], &[]);
    let rate = commits as f64 / started.elapsed().as_secs_f64();
    println!("  plain script: {}", printed.trim());
    println!(
        "  index --all is {:.1} times the plain script's {rate:.1} commits/s (goal: 6.1-7.0 times)",
        backfill_rate / rate
    );
}
