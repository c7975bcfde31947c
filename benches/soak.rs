//! Soak figures: `cargo bench --bench soak`.
//!
//! A generated history (default 50,000 commits; `SOAK_COMMITS`) backfilled
//! with `git diffidx index`, sampling the process's peak RSS (`VmHWM`), then
//! a `serve` process under a loop of `log` queries (default 3,000;
//! `SOAK_QUERIES`), its resident memory sampled after warm-up and at the
//! end. Prints the figures and exits non-zero past the documented ceilings
//! (`SOAK_RSS_CEILING_MB`, default 600; growth of the server over 10%).

#[path = "../crates/diffidx-core/benches/gen/mod.rs"]
mod gen;

#[path = "process/mod.rs"]
#[allow(dead_code)] // shared by the benches; each uses part of it
mod process;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use process::{bin, run_sampling, status_kib};

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let commits = env_or("SOAK_COMMITS", 50_000) as usize;
    let queries = env_or("SOAK_QUERIES", 3_000);
    let ceiling = env_or("SOAK_RSS_CEILING_MB", 600) as f64;
    let dir = tempfile::tempdir().unwrap();
    let generated = gen::history_repo(dir.path(), commits);
    println!(
        "generated {commits} commits in {:.1} s",
        generated.as_secs_f64()
    );

    let backfill = run_sampling(dir.path(), &["index", "-q", "--days", "1000000"]);
    let (took, peak) = (backfill.took, backfill.peak_mib);
    println!(
        "backfill of {commits} commits: {:.1} s ({:.0} commits/s), peak RSS {peak:.0} MiB (ceiling {ceiling:.0} MiB)",
        took.as_secs_f64(),
        commits as f64 / took.as_secs_f64()
    );

    // The query server under a loop of `log` queries.
    let mut server = Command::new(bin())
        .args(["serve", "--idle", "600"])
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let socket = dir.path().join(".git/diffidx/query.sock");
    while !socket.exists() {
        std::thread::sleep(Duration::from_millis(20));
    }
    let names = ["Run3", "run_7", "Run12", "run_1", "Run0", "run_20"];
    let query = |i: u64| {
        let out = Command::new(bin())
            .args(["log", "--symbol", names[i as usize % names.len()], "--json"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success());
    };
    let warm_up = (queries / 10).max(50);
    for i in 0..warm_up {
        query(i);
    }
    let after_warm_up = status_kib(server.id(), "VmRSS:").unwrap_or(0);
    let start = Instant::now();
    for i in 0..queries {
        query(i);
    }
    let at_end = status_kib(server.id(), "VmRSS:").unwrap_or(0);
    let _ = server.kill();
    let _ = server.wait();
    let growth = (at_end as f64 - after_warm_up as f64) / after_warm_up.max(1) as f64 * 100.0;
    println!(
        "serve under {queries} log queries ({:.1} ms each, whole process): RSS {:.0} MiB after warm-up, {:.0} MiB at the end ({growth:+.1}%)",
        start.elapsed().as_secs_f64() * 1e3 / queries as f64,
        after_warm_up as f64 / 1024.0,
        at_end as f64 / 1024.0
    );
    let mut failed = false;
    if peak > ceiling {
        println!("FAIL: backfill peak RSS {peak:.0} MiB is over the ceiling of {ceiling:.0} MiB");
        failed = true;
    }
    if growth > 10.0 {
        println!("FAIL: the query server grew by {growth:.1}%");
        failed = true;
    }
    if failed {
        std::process::exit(1);
    }
}
