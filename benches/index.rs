//! Figures for the README: `cargo bench --bench index`.
//!
//! On a generated repository (default 5,000 commits, C# and Rust; set
//! `BENCH_COMMITS`): backfill commits per second with `git diffidx index`,
//! `log --symbol` latency (p50/p95, whole process as a user runs it), the
//! time a hook takes to return to git, store size per 1,000 commits, and
//! (with NEO4J_* set) rows per second pushed to a Bolt server.

#[path = "../crates/diffidx-core/benches/gen/mod.rs"]
mod gen;

#[path = "process/mod.rs"]
#[allow(dead_code)] // shared by the benches; each uses part of it
mod process;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use process::{bin, percentile_ms};

fn run(dir: &Path, args: &[&str]) -> Duration {
    run_with(dir, args, &[])
}

/// Runs `git-diffidx ARGS` with `env` set; returns how long the process took.
fn run_with(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Duration {
    let start = Instant::now();
    let out = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    start.elapsed()
}

fn main() {
    let commits: usize = std::env::var("BENCH_COMMITS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5000);
    let dir = tempfile::tempdir().unwrap();
    gen::history_repo(dir.path(), commits);
    // BENCH_KEEP=DIR keeps the indexed repository there for profiling.
    let keep = std::env::var_os("BENCH_KEEP");

    // The backfill alone: without Neo4j settings, `index` does not push.
    let start = Instant::now();
    let out = Command::new(bin())
        .args(["index", "-q"])
        .current_dir(dir.path())
        .env_remove("NEO4J_URI")
        .env_remove("NEO4J_URL")
        .env_remove("NEO4J_PASSWORD")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let backfill = start.elapsed();
    let store = dir.path().join(".git/diffidx/graph.lbdb");
    let size: u64 = ["", ".wal"]
        .iter()
        .filter_map(|s| std::fs::metadata(format!("{}{s}", store.display())).ok())
        .map(|m| m.len())
        .sum();
    println!(
        "backfill of {commits} commits: {:.1} s, {:.0} commits/s; store {:.1} MiB ({:.2} MiB per 1,000 commits)",
        backfill.as_secs_f64(),
        commits as f64 / backfill.as_secs_f64(),
        size as f64 / 1_048_576.0,
        size as f64 / 1_048_576.0 / (commits as f64 / 1000.0)
    );

    let names = [
        "Run3",
        "run_7",
        "Service4.Run1",
        "Service7::run_2",
        "Added10024",
        "Run12",
    ];
    // `log` as a user runs it: a whole process. First each run opening the
    // store itself, then answered by the `serve` process the first run
    // starts in the background.
    let log_runs = |server: bool| {
        let env: &[(&str, &str)] = if server {
            &[]
        } else {
            &[("DIFFIDX_SERVER", "off")]
        };
        let mut latencies: Vec<Duration> = (0..60)
            .map(|i| {
                let name = names[i % names.len()];
                run_with(dir.path(), &["log", "--symbol", name, "--json"], env)
            })
            .collect();
        latencies.sort();
        latencies
    };
    let mut direct = log_runs(false);
    println!(
        "log --symbol, opening the store (whole process, 60 runs): p50 {:.1} ms, p95 {:.1} ms",
        percentile_ms(&mut direct, 0.5),
        percentile_ms(&mut direct, 0.95)
    );
    run(dir.path(), &["log", "--symbol", names[0]]); // starts the server
    let socket = dir.path().join(".git/diffidx/query.sock");
    let waited = Instant::now();
    while !socket.exists() && waited.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut served = log_runs(true);
    println!(
        "log --symbol, answered by `serve` (whole process, 60 runs): p50 {:.1} ms, p95 {:.1} ms",
        percentile_ms(&mut served, 0.5),
        percentile_ms(&mut served, 0.95)
    );
    if let Some(keep) = &keep {
        let status = Command::new("cp")
            .arg("-a")
            .arg(dir.path())
            .arg(keep)
            .status()
            .unwrap();
        assert!(status.success(), "cannot keep the repository");
        println!(
            "kept the indexed repository in {}",
            Path::new(keep).display()
        );
    }

    // With a Bolt server described in NEO4J_* (scripts/bolt-server start), push it all.
    if std::env::var("NEO4J_URI").is_ok() && std::env::var("NEO4J_PASSWORD").is_ok() {
        let out = Command::new(bin())
            .args(["push"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{text}");
        // "pushed N commits (R rows in T transactions) to URI as REPO in S s"
        let rows: f64 = text
            .split(" rows")
            .next()
            .and_then(|s| s.rsplit('(').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0.0);
        let secs: f64 = text
            .rsplit(" in ")
            .next()
            .and_then(|s| s.trim().trim_end_matches(" s").parse().ok())
            .unwrap_or(f64::NAN);
        println!(
            "push to Neo4j (Bolt): {} -> {:.0} rows/s",
            text.trim(),
            rows / secs
        );
    }

    // The hook as git runs it: it must return at once, indexing in the background.
    run(dir.path(), &["hooks", "install"]);
    let bin_dir = Path::new(bin()).parent().unwrap().to_owned();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let hook = dir.path().join(".git/hooks/post-commit");
    let mut hook_times: Vec<Duration> = (0..20)
        .map(|_| {
            let start = Instant::now();
            let status = Command::new(&hook)
                .current_dir(dir.path())
                .env("PATH", &path)
                .status()
                .unwrap();
            assert!(status.success());
            start.elapsed()
        })
        .collect();
    hook_times.sort();
    println!(
        "post-commit hook, time until it returns to git (20 runs): p50 {:.1} ms, p95 {:.1} ms",
        percentile_ms(&mut hook_times, 0.5),
        percentile_ms(&mut hook_times, 0.95)
    );
    // Let the background runs finish before the temp dir goes away.
    std::thread::sleep(Duration::from_secs(2));
}
