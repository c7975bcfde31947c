//! Figures for the README: `cargo bench -p diffidx-core --bench show`.
//!
//! 1. One commit that changes one method of a 2,000-line C# file: the time to
//!    label it, cold (a fresh differ parses both sides) and warm (the old side
//!    is already parsed, as when indexing consecutive commits).
//! 2. A generated repository of 1,000+ commits in C# and Rust: commits per
//!    second for labelling every commit in order with one differ.
//!
//! Repositories are generated with `git fast-import` in a temp dir.

#[path = "gen/mod.rs"]
mod gen;

use std::process::Command;
use std::time::{Duration, Instant};

use diffidx_core::git::Repo;
use diffidx_core::{DiffOptions, SymbolDiffer};
use gen::{commit_header, cs_file, fast_import, file_op, Method};

fn main() {
    let commits: usize = std::env::var("BENCH_COMMITS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    big_file();
    history(commits);
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn big_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut methods: Vec<Method> = (0..166)
        .map(|i| Method {
            name: format!("Compute{i}"),
            variant: i,
        })
        .collect();
    let before = cs_file("Bench.Big", "Calculator", &methods);
    methods[80].variant += 1000;
    let after = cs_file("Bench.Big", "Calculator", &methods);
    let mut stream = Vec::new();
    commit_header(&mut stream, 0, "big file");
    file_op(&mut stream, "src/Calculator.cs", &before);
    commit_header(&mut stream, 1, "change one method");
    file_op(&mut stream, "src/Calculator.cs", &after);
    fast_import(dir.path(), &stream);

    let repo = Repo::discover(dir.path()).unwrap();
    let head = repo.resolve_commit("HEAD").unwrap();
    let commit = repo.commit(head).unwrap();
    let lines = after.lines().count();

    let mut cold = Vec::new();
    let mut note = None;
    for _ in 0..30 {
        let start = Instant::now();
        let mut differ = SymbolDiffer::new(&repo, DiffOptions::default()).unwrap();
        note = Some(differ.commit_note(&commit).unwrap());
        cold.push(start.elapsed());
    }
    let note = note.unwrap();
    assert_eq!(note.deltas.len(), 3, "namespace, class and one method");

    // Warm: the parent's blob is already parsed, as in a run over consecutive commits.
    let mut warm = Vec::new();
    for _ in 0..30 {
        let mut differ = SymbolDiffer::new(&repo, DiffOptions::default()).unwrap();
        let parent = repo.commit(commit.parents[0]).unwrap();
        differ.commit_note(&parent).unwrap();
        let start = Instant::now();
        differ.commit_note(&commit).unwrap();
        warm.push(start.elapsed());
    }
    println!(
        "one commit changing one method of a {lines}-line C# file ({} KiB): cold {:.1} ms, warm {:.1} ms (median of 30)",
        after.len() / 1024,
        median(cold).as_secs_f64() * 1e3,
        median(warm).as_secs_f64() * 1e3
    );
}

fn history(commits: usize) {
    let dir = tempfile::tempdir().unwrap();
    let generated = gen::history_repo(dir.path(), commits);
    let repo = Repo::discover(dir.path()).unwrap();
    // Oldest first, as `index` walks.
    let out = Command::new("git")
        .args(["rev-list", "--reverse", "HEAD"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let ids: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let infos: Vec<_> = ids
        .iter()
        .map(|id| repo.commit(repo.resolve_commit(id).unwrap()).unwrap())
        .collect();
    let mut differ = SymbolDiffer::new(&repo, DiffOptions::default()).unwrap();
    let start = Instant::now();
    let mut deltas = 0;
    for commit in &infos {
        deltas += differ.commit_note(commit).unwrap().deltas.len();
    }
    let elapsed = start.elapsed();
    println!(
        "show over {} commits (C# and Rust, 40 files, generated in {:.1} s): {:.0} commits/s, {deltas} deltas, {} blobs parsed ({:.1} MiB), {} cache hits",
        infos.len(),
        generated.as_secs_f64(),
        infos.len() as f64 / elapsed.as_secs_f64(),
        differ.stats.blobs.parsed,
        differ.stats.blobs.bytes as f64 / (1024.0 * 1024.0),
        differ.stats.blobs.cache_hits
    );
}
