//! Diffing a history on two threads, which share the files of each commit
//! and one cache, gives the same records as one differ, commit for commit:
//! moves between files, renames, deletions, a merge and an unreadable file.
//! So does diffing it file by file, in windows of commits.

mod common;

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use common::git;
use diffidx_core::differ::{by_file, parallel, Diffed};
use diffidx_core::git::{CommitInfo, Repo};
use diffidx_core::{CommitRecord, DiffOptions, Language, SymbolDiffer};

fn commit(dir: &Path, message: &str) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "--allow-empty", "-m", message]);
}

/// A C# class with `methods` (name, body) in a namespace of its own.
fn class(name: &str, methods: &[(String, String)]) -> String {
    let mut out = format!("namespace N.{name}\n{{\n    public class {name}\n    {{\n");
    for (method, body) in methods {
        out.push_str(&format!("        public int {method}() {{ {body} }}\n"));
    }
    out.push_str("    }\n}\n");
    out
}

/// A history of 12 C# and 4 Rust files over 40 commits; every commit
/// touches several files, some move a method from one file to another.
fn history(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    let names: Vec<String> = (0..12).map(|i| format!("C{i}")).collect();
    let mut files: Vec<Vec<(String, String)>> = (0..12)
        .map(|i| {
            (0..6)
                .map(|m| (format!("M{i}x{m}"), format!("return {m};")))
                .collect()
        })
        .collect();
    let write = |files: &[Vec<(String, String)>]| {
        for (i, methods) in files.iter().enumerate() {
            std::fs::write(dir.join(format!("C{i}.cs")), class(&names[i], methods)).unwrap();
        }
    };
    for r in 0..4 {
        std::fs::write(dir.join(format!("r{r}.rs")), format!("fn r{r}() {{}}\n")).unwrap();
    }
    write(&files);
    commit(dir, "start");
    for step in 0..40usize {
        // Edit the body of a method in three files.
        for k in 0..3 {
            let file = (step * 5 + k * 7) % 12;
            let method = (step + k) % files[file].len().max(1);
            if let Some(entry) = files[file].get_mut(method) {
                entry.1 = format!("return {step} + {k};");
            }
        }
        // Every third commit moves a method to another file.
        if step % 3 == 0 {
            let (from, to) = (step % 12, (step * 7 + 5) % 12);
            if from != to && files[from].len() > 1 {
                let moved = files[from].remove(0);
                files[to].push(moved);
            }
        }
        if step % 4 == 1 {
            let r = step % 4;
            std::fs::write(
                dir.join(format!("r{r}.rs")),
                format!("fn r{r}() {{ let _ = {step}; }}\nfn s{step}() {{}}\n"),
            )
            .unwrap();
        }
        write(&files);
        commit(dir, &format!("step {step}"));
    }
    // A rename, a deletion, a binary source file.
    git(dir, &["mv", "C3.cs", "Renamed.cs"]);
    std::fs::remove_file(dir.join("C4.cs")).unwrap();
    std::fs::write(dir.join("Binary.cs"), b"class B {}\0\0").unwrap();
    commit(dir, "rename, delete, binary");
    // A merge whose side branch edits other files.
    git(dir, &["checkout", "-q", "-b", "side", "HEAD~5"]);
    std::fs::write(
        dir.join("C7.cs"),
        class("C7", &[("Side".into(), "return 7;".into())]),
    )
    .unwrap();
    commit(dir, "side");
    git(dir, &["checkout", "-q", "main"]);
    git(
        dir,
        &[
            "merge",
            "-q",
            "--no-edit",
            "-s",
            "ort",
            "-X",
            "theirs",
            "side",
        ],
    );
}

fn commits(repo: &Repo, dir: &Path) -> Vec<CommitInfo> {
    git(dir, &["rev-list", "--reverse", "--topo-order", "HEAD"])
        .lines()
        .map(|sha| repo.commit(repo.resolve_commit(sha).unwrap()).unwrap())
        .collect()
}

/// How a run is diffed: in commit order (the history is shorter than a
/// run that goes file by file), or file by file in windows of this many
/// commits.
#[derive(Debug, Clone, Copy)]
enum Order {
    ByCommit,
    ByFile(usize),
}

/// Every order a test runs: windows of 7 commits cut the history in several.
const ORDERS: [Order; 3] = [Order::ByCommit, Order::ByFile(1000), Order::ByFile(7)];

/// `commits` diffed in `order` on `threads` with the default options.
fn diff_commits(
    order: Order,
    repo: &Repo,
    commits: &[CommitInfo],
    threads: usize,
    facts_of: Option<Arc<HashSet<gix::ObjectId>>>,
    sink: &mut dyn FnMut(CommitRecord) -> bool,
) -> diffidx_core::Result<Diffed> {
    let (shared, options) = (repo.share(), DiffOptions::default());
    match order {
        Order::ByCommit => {
            parallel::diff_commits(&shared, &options, commits, threads, facts_of, sink)
        }
        Order::ByFile(window) => {
            by_file::diff_commits(&shared, &options, commits, threads, window, facts_of, sink)
        }
    }
}

/// `commits` diffed in `order` on two threads.
fn on_two_threads(
    order: Order,
    repo: &Repo,
    commits: &[CommitInfo],
    sink: &mut dyn FnMut(CommitRecord) -> bool,
) -> diffidx_core::Result<Diffed> {
    diff_commits(order, repo, commits, 2, None, sink)
}

/// What a record says, in a form that compares.
fn summary(record: &CommitRecord) -> (String, Vec<(String, usize)>) {
    (
        record.note.to_json(),
        record
            .files
            .iter()
            .map(|f| (f.path.clone(), f.symbols.symbols.len()))
            .collect(),
    )
}

#[test]
fn two_threads_make_the_records_one_differ_makes() {
    let dir = tempfile::tempdir().unwrap();
    history(dir.path());
    let repo = Repo::discover(dir.path()).unwrap();
    let commits = commits(&repo, dir.path());
    assert!(commits.len() > 40);
    assert!(commits.iter().any(|c| c.parents.len() == 2), "a merge");

    let mut one = SymbolDiffer::new(&repo, DiffOptions::default()).unwrap();
    let expected: Vec<_> = commits
        .iter()
        .map(|c| summary(&one.commit_record(c).unwrap()))
        .collect();
    let moves = expected
        .iter()
        .filter(|(json, _)| json.contains("\"MOVED\""))
        .count();
    assert!(moves >= 5, "only {moves} commits with moves");

    for order in ORDERS {
        for threads in [1, 2] {
            let mut got = Vec::new();
            let stats = diff_commits(order, &repo, &commits, threads, None, &mut |r| {
                got.push(summary(&r));
                true
            })
            .unwrap()
            .stats;
            assert_eq!(got.len(), expected.len(), "{order:?}, {threads}");
            for (i, (got, expected)) in got.iter().zip(&expected).enumerate() {
                assert_eq!(got, expected, "commit {i}, {order:?}, {threads}");
            }
            // One cache: in commit order each file version is parsed once,
            // as by one differ (a version one thread is parsing is waited
            // for by the other).
            if let (Order::ByCommit, 2) = (order, threads) {
                assert_eq!(stats.blobs.parsed, one.stats().blobs.parsed);
            }
        }
    }
}

/// A commit whose tree cannot be read stops the run with its error, after
/// every record before it was handed on.
#[test]
fn a_failed_commit_ends_the_run_after_the_records_before_it() {
    let dir = tempfile::tempdir().unwrap();
    history(dir.path());
    let repo = Repo::discover(dir.path()).unwrap();
    let mut commits = commits(&repo, dir.path());
    let broken = 20;
    commits[broken].tree =
        gix::ObjectId::from_hex(b"0123456789012345678901234567890123456789").unwrap();
    for order in ORDERS {
        let mut seen = Vec::new();
        let result = on_two_threads(order, &repo, &commits, &mut |r| {
            seen.push(r.info.id);
            true
        });
        assert!(
            result.is_err(),
            "the broken commit's tree was read ({order:?})"
        );
        let before: Vec<_> = commits[..broken].iter().map(|c| c.id).collect();
        assert_eq!(seen, before, "{order:?}");
    }
}

#[test]
fn a_sink_that_stops_ends_the_run() {
    let dir = tempfile::tempdir().unwrap();
    history(dir.path());
    let repo = Repo::discover(dir.path()).unwrap();
    let commits = commits(&repo, dir.path());
    for order in ORDERS {
        let mut seen = 0;
        on_two_threads(order, &repo, &commits, &mut |_| {
            seen += 1;
            seen < 10
        })
        .unwrap();
        assert_eq!(seen, 10, "{order:?}");
    }
}

/// The files of the last commit, parsed during the walk, keep their
/// code-graph facts (the graph after an index run reads them instead of
/// parsing again): the same facts a parse of each file on its own gives,
/// and the same records as a walk that keeps none.
#[test]
fn the_walk_keeps_the_graph_facts_of_the_last_trees_files() {
    let dir = tempfile::tempdir().unwrap();
    history(dir.path());
    let repo = Repo::discover(dir.path()).unwrap();
    let commits = commits(&repo, dir.path());
    let head = repo.resolve_commit("HEAD").unwrap();
    let files: Vec<_> = repo
        .tree_files(head)
        .unwrap()
        .into_iter()
        .filter(|f| Language::from_path(&f.path).is_some())
        .collect();
    let wanted: HashSet<_> = files.iter().map(|f| f.blob).collect();

    let walk = |order: Order, facts_of: Option<Arc<HashSet<_>>>, threads: usize| {
        let mut records = Vec::new();
        let diffed = diff_commits(order, &repo, &commits, threads, facts_of, &mut |r| {
            records.push(summary(&r));
            true
        })
        .unwrap();
        (records, diffed.facts)
    };
    let (plain, none) = walk(Order::ByCommit, None, 2);
    assert!(none.is_empty());
    let mut alone = SymbolDiffer::new(&repo, DiffOptions::default()).unwrap();
    for (order, threads) in ORDERS.into_iter().flat_map(|o| [(o, 1), (o, 2)]) {
        let (records, facts) = walk(order, Some(Arc::new(wanted.clone())), threads);
        assert_eq!(records, plain, "{order:?}, {threads} thread(s)");
        let mut readable = 0;
        for file in &files {
            let language = Language::from_path(&file.path).unwrap();
            let kept = facts.get(&(file.blob, language)).map(|held| held.facts());
            match alone.file_facts(file.blob, &file.path).unwrap() {
                Some(expected) => {
                    readable += 1;
                    assert!(!expected.defs.is_empty(), "{}", file.path);
                    assert_eq!(kept, Some(Some(expected)), "{} ({threads})", file.path);
                }
                // The binary file has none.
                None => assert_eq!(kept, None, "{}", file.path),
            }
        }
        assert!(readable + 1 >= files.len() && readable > 10, "{readable}");
        assert_eq!(facts.len(), readable, "only the last tree's blobs");
    }
}
