//! Figures for the README's code-graph rows: `cargo bench --bench graph`.
//!
//! 1. A generated tree of 1,000 files (500 C#, 500 Rust) whose methods call
//!    each other (same type, typed fields, constructors, module paths) and
//!    the standard library: the graph built from scratch, in process (parse,
//!    facts, resolution) and as `git diffidx index` builds it (the same
//!    index run with and without the graph).
//! 2. A history of `BENCH_GRAPH_COMMITS` (default 300) commits editing that
//!    tree: the backfill rate with and without the graph, and the update per
//!    commit as the hooks run it (`index` after each commit, p50/p95).
//!
//! The graph is switched off with git config `diffidx.graph false`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
#[path = "process/mod.rs"]
#[allow(dead_code)] // shared by the benches; each uses part of it
mod process;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use process::{bin, percentile_ms};

use diffidx_core::codegraph::{DefIndex, SourceFile};
use diffidx_core::{Extractor, Language};

const CS_FILES: usize = 500;
const RS_FILES: usize = 500;
const METHODS: usize = 8;

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn diffidx(dir: &Path, args: &[&str]) -> Duration {
    let start = Instant::now();
    let out = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .env_remove("NEO4J_URI")
        .env_remove("NEO4J_PASSWORD")
        .output()
        .unwrap();
    if !out.status.success() {
        // Kept for a look: the temporary directory is not removed.
        let kept = dir.to_owned();
        std::mem::forget(tempfile::TempDir::new());
        panic!(
            "{args:?} in {}: {}",
            kept.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    start.elapsed()
}

fn cs_file(i: usize, edit: usize) -> String {
    let next = (i + 1) % CS_FILES;
    let mut s = format!(
        "using System;\nusing Bench.Mod{};\n\nnamespace Bench.Mod{}\n{{\n    public class Type{i}\n    {{\n        private readonly Type{next} _next = new Type{next}();\n\n",
        next / 50,
        i / 50
    );
    for k in 0..METHODS {
        let extra = if k == edit % METHODS && edit > 0 {
            format!("            Console.WriteLine({edit});\n")
        } else {
            String::new()
        };
        let _ = write!(
            s,
            "        public int M{k}(int x)\n        {{\n            var y = M{}(x) + _next.M{k}(x);\n            Console.WriteLine(y);\n{extra}            return y + new Type{next}().Count();\n        }}\n\n",
            (k + 1) % METHODS
        );
    }
    s.push_str("        public int Count() => 1;\n    }\n}\n");
    s
}

fn rs_file(i: usize, edit: usize) -> String {
    let next = (i + 1) % RS_FILES;
    let mut s = format!(
        "use crate::m{}::f{next}::S{next};\n\npub struct S{i} {{ n: usize }}\n\nimpl S{i} {{\n    pub fn new() -> S{i} {{ S{i} {{ n: helper{i}() }} }}\n",
        next / 50
    );
    for k in 0..METHODS {
        let extra = if k == edit % METHODS && edit > 0 {
            format!("        println!(\"{{}}\", {edit});\n")
        } else {
            String::new()
        };
        let _ = write!(
            s,
            "    pub fn m{k}(&self) -> usize {{\n        let next = S{next}::new();\n{extra}        self.m{}() + next.count() + format!(\"{{}}\", self.n).len()\n    }}\n",
            (k + 1) % METHODS
        );
    }
    let _ = write!(
        s,
        "    pub fn count(&self) -> usize {{ self.n }}\n}}\n\nfn helper{i}() -> usize {{ 1 }}\n"
    );
    s
}

fn write_tree(dir: &Path, edits: &BTreeMap<usize, usize>) {
    let edit = |i: usize| edits.get(&i).copied().unwrap_or(0);
    for i in 0..CS_FILES {
        let path = dir.join(format!("cs/Mod{}/Type{i}.cs", i / 50));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, cs_file(i, edit(i))).unwrap();
    }
    let mut lib = String::new();
    for m in 0..RS_FILES / 50 {
        let _ = writeln!(lib, "pub mod m{m};");
        let mut module = String::new();
        for i in m * 50..(m + 1) * 50 {
            let _ = writeln!(module, "pub mod f{i};");
            std::fs::create_dir_all(dir.join(format!("rs/src/m{m}"))).unwrap();
            std::fs::write(
                dir.join(format!("rs/src/m{m}/f{i}.rs")),
                rs_file(i, edit(CS_FILES + i)),
            )
            .unwrap();
        }
        std::fs::write(dir.join(format!("rs/src/m{m}/mod.rs")), module).unwrap();
    }
    std::fs::write(dir.join("rs/src/lib.rs"), lib).unwrap();
}

/// Parse, facts and resolution of every file, in process.
fn in_process(dir: &Path) -> (Duration, Duration, usize) {
    let mut files = Vec::new();
    for entry in walk(dir) {
        let rel = entry
            .strip_prefix(dir)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if Language::from_path(&rel).is_some() {
            files.push((rel, std::fs::read_to_string(&entry).unwrap()));
        }
    }
    let mut extractor = Extractor::new().unwrap();
    let start = Instant::now();
    let mut tree = BTreeMap::new();
    for (path, text) in &files {
        let language = Language::from_path(path).unwrap();
        let facts = extractor.extract_facts(language, text, None).facts.unwrap();
        tree.insert(
            path.clone(),
            SourceFile {
                language,
                facts: Arc::new(facts),
            },
        );
    }
    let parsed = start.elapsed();
    let start = Instant::now();
    let index = DefIndex::new(&tree);
    let edges: usize = tree.keys().map(|p| index.resolve_file(p).edges.len()).sum();
    (parsed, start.elapsed(), edges)
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out
}

fn copy_repo(from: &Path, to: &Path, graph: bool) {
    let out = Command::new("git")
        .args(["clone", "-q", "--no-local"])
        .arg(from)
        .arg(to)
        .output()
        .unwrap();
    assert!(out.status.success());
    git(
        to,
        &[
            "config",
            "diffidx.graph",
            if graph { "true" } else { "false" },
        ],
    );
}

/// Removes the benchmark's directory at the end unless it is to be kept.
struct Cleanup(Option<std::path::PathBuf>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Some(dir) = &self.0 {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn main() {
    let commits: usize = std::env::var("BENCH_GRAPH_COMMITS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let root = tempfile::tempdir().unwrap();
    // BENCH_KEEP keeps the repositories (for profiling a failure or a figure).
    let root_path = root.path().to_owned();
    let root = if std::env::var_os("BENCH_KEEP").is_some() {
        eprintln!("keeping {}", root_path.display());
        std::mem::ManuallyDrop::new(root)
    } else {
        std::mem::ManuallyDrop::new(root)
    };
    let _cleanup = Cleanup(if std::env::var_os("BENCH_KEEP").is_some() {
        None
    } else {
        Some(root_path)
    });
    let source = root.path().join("source");
    std::fs::create_dir_all(&source).unwrap();
    git(&source, &["init", "-q", "-b", "main"]);
    git(&source, &["config", "user.name", "Bench"]);
    git(&source, &["config", "user.email", "bench@example.com"]);
    let mut edits = BTreeMap::new();
    write_tree(&source, &edits);
    git(&source, &["add", "-A"]);
    git(&source, &["commit", "-q", "-m", "tree"]);

    let (parsed, resolved, edges) = in_process(&source);
    println!(
        "1,000 files in process: parse and facts {:.0} ms, resolution {:.0} ms ({edges} edges)",
        parsed.as_secs_f64() * 1e3,
        resolved.as_secs_f64() * 1e3
    );
    let with = root.path().join("with");
    let without = root.path().join("without");
    copy_repo(&source, &with, true);
    copy_repo(&source, &without, false);
    let a = diffidx(&with, &["index", "-q"]);
    let b = diffidx(&without, &["index", "-q"]);
    println!(
        "1,000 files, `index` of the one commit: {:.2} s with the graph, {:.2} s without: the graph from scratch adds {:.2} s",
        a.as_secs_f64(),
        b.as_secs_f64(),
        a.as_secs_f64() - b.as_secs_f64()
    );

    // A history editing the tree: one or two files a commit.
    let mut state: u64 = 42;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for c in 1..=commits {
        for _ in 0..1 + (next() % 2) {
            let file = (next() % (CS_FILES + RS_FILES) as u64) as usize;
            edits.insert(file, c);
        }
        write_tree(&source, &edits);
        git(&source, &["add", "-A"]);
        git(&source, &["commit", "-q", "-m", &format!("edit {c}")]);
    }
    // Backfill: every commit in one run, with and without the graph.
    let with = root.path().join("backfill-with");
    let without = root.path().join("backfill-without");
    copy_repo(&source, &with, true);
    copy_repo(&source, &without, false);
    let a = diffidx(&with, &["index", "-q"]);
    let b = diffidx(&without, &["index", "-q"]);
    let total = commits + 1;
    println!(
        "backfill of {total} commits: {:.0} commits/s with the graph ({:.1} s), {:.0} without ({:.1} s)",
        total as f64 / a.as_secs_f64(),
        a.as_secs_f64(),
        total as f64 / b.as_secs_f64(),
        b.as_secs_f64()
    );

    // Per commit, as the hooks run it: `index` after each commit.
    for graph in [true, false] {
        let dir = root.path().join(format!("steps-{graph}"));
        copy_repo(&source, &dir, graph);
        git(
            &dir,
            &["checkout", "-q", "--detach", &format!("HEAD~{commits}")],
        );
        diffidx(&dir, &["index", "-q"]);
        let list = Command::new("git")
            .args(["rev-list", "--reverse", "main"])
            .current_dir(&dir)
            .output()
            .unwrap();
        let shas: Vec<String> = String::from_utf8(list.stdout)
            .unwrap()
            .lines()
            .skip(1)
            .take(100)
            .map(str::to_owned)
            .collect();
        let mut times = Vec::new();
        for sha in &shas {
            git(&dir, &["checkout", "-q", "--detach", sha]);
            times.push(diffidx(&dir, &["index", "-q"]));
        }
        times.sort();
        println!(
            "`index` of one new commit ({} steps), {} the graph: p50 {:.0} ms, p95 {:.0} ms",
            times.len(),
            if graph { "with" } else { "without" },
            percentile_ms(&mut times, 0.5),
            percentile_ms(&mut times, 0.95)
        );
    }
}
