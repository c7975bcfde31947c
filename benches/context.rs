//! Figures for the README's `context` rows: `cargo bench --bench context`.
//!
//! On a real repository (`BENCH_CONTEXT_REPO`, a path to a clone or a bare
//! mirror; default: a generated history of 600 commits over 60 days), for a
//! 48-hour and a 30-day window ending at the newest commit:
//!
//! - cold: a fresh clone with nothing indexed; `context` indexes the window
//!   (and builds the store, the code graph and the search index) and answers;
//! - warm: the same query again, as a whole process, p50 and p95 over 20
//!   runs (the first cold run has started the query server).

#[path = "process/mod.rs"]
#[allow(dead_code)] // shared by the benches; each uses part of it
mod process;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use process::{bin, git, percentile_ms, run};

/// A Rust history: 600 commits, 10 a day, each editing, adding or
/// deleting functions in one of 40 files.
fn generated(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    let start: u64 = 1_700_000_000;
    let mut files: Vec<Vec<String>> = (0..40).map(|_| Vec::new()).collect();
    for n in 0..600u64 {
        let file = (n * 7 % 40) as usize;
        let fns = &mut files[file];
        match n % 5 {
            0..=2 => fns.push(format!(
                "pub fn f{n}() -> u64 {{ {} }}",
                fns.last()
                    .map(|l| format!("{}() + 1", &l[7..l.find('(').unwrap()]))
                    .unwrap_or("0".into())
            )),
            3 if !fns.is_empty() => {
                let i = n as usize % fns.len();
                fns[i] = fns[i].replace("{ ", "{ 1 + ");
            }
            _ if fns.len() > 1 => {
                fns.remove(0);
            }
            _ => {}
        }
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join(format!("src/m{file}.rs")), fns.join("\n") + "\n").unwrap();
        git(dir, &["add", "-A"]);
        let date = format!("{} +0000", start + n * 8640);
        let out = Command::new("git")
            .args([
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                &format!("change {n}"),
            ])
            .current_dir(dir)
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date)
            .env("GIT_AUTHOR_NAME", "bench")
            .env("GIT_AUTHOR_EMAIL", "bench@example.com")
            .env("GIT_COMMITTER_NAME", "bench")
            .env("GIT_COMMITTER_EMAIL", "bench@example.com")
            .output()
            .unwrap();
        assert!(out.status.success());
    }
}

fn main() {
    let scratch = tempfile::tempdir().unwrap();
    let source = match std::env::var("BENCH_CONTEXT_REPO") {
        Ok(path) => std::path::PathBuf::from(path),
        Err(_) => {
            let dir = scratch.path().join("generated");
            std::fs::create_dir_all(&dir).unwrap();
            generated(&dir);
            dir
        }
    };
    let tip = git(&source, &["rev-parse", "HEAD"]).trim().to_owned();
    let tip_time: i64 = git(&source, &["log", "-1", "--format=%at", "HEAD"])
        .trim()
        .parse()
        .unwrap();
    println!(
        "repository: {} at {}",
        source.display(),
        &tip[..12.min(tip.len())]
    );
    println!("| window | commits | records | cold (index + answer) | warm p50 | warm p95 |");
    println!("|---|---|---|---|---|---|");
    for (label, seconds) in [("48 hours", 48 * 3600), ("30 days", 30 * 86_400)] {
        let clone = scratch.path().join(format!("clone-{seconds}"));
        git(
            scratch.path(),
            &[
                "clone",
                "-q",
                "--shared",
                source.to_str().unwrap(),
                clone.to_str().unwrap(),
            ],
        );
        let map = scratch.path().join(format!("map-{seconds}.toml"));
        std::fs::write(
            &map,
            format!("[services.bench]\nrepo = {:?}\n", clone.display()),
        )
        .unwrap();
        let since = (tip_time - seconds).to_string();
        let until = tip_time.to_string();
        let args = [
            "context",
            "--service",
            "bench",
            "--since",
            &since,
            "--until",
            &until,
            "--map",
            map.to_str().unwrap(),
            "--json",
        ];
        let started = Instant::now();
        let answer = run(&clone, bin(), &args, &[]);
        let cold = started.elapsed();
        let records: Vec<serde_json::Value> = serde_json::from_str(&answer).unwrap();
        let commits = git(
            &clone,
            &[
                "rev-list",
                "--count",
                &format!("--since={since}"),
                &format!("--until={until}"),
                "HEAD",
            ],
        );
        let mut warm: Vec<Duration> = (0..20)
            .map(|_| {
                let started = Instant::now();
                run(&clone, bin(), &args, &[]);
                started.elapsed()
            })
            .collect();
        println!(
            "| {label} | {} | {} | {:.0} ms | {:.1} ms | {:.1} ms |",
            commits.trim(),
            records.len(),
            cold.as_secs_f64() * 1000.0,
            percentile_ms(&mut warm, 0.5),
            percentile_ms(&mut warm, 0.95),
        );
    }
}
