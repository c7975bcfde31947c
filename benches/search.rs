//! Figures for the README's search rows: `cargo bench --bench search`.
//!
//! On a real repository (`BENCH_SEARCH_REPO`, a path to a clone; default:
//! a generated history of 12,000 symbols, which gives the speed figures
//! only):
//!
//! 1. Build: the clone indexed whole (`index --all`) with the search index
//!    and without it (its time is the difference), and the index's size.
//! 2. Latency: `git diffidx search` as a whole process through the query
//!    server, p50/p95, for name queries (own names of random symbols, some
//!    misspelled) and word queries (commit subjects).
//! 3. Quality (`BENCH_SEARCH_VARIANTS`: other weights of a question's
//!    ranking to measure, as JSON): for each of the last `BENCH_SEARCH_COMMITS` (default 300)
//!    commits that modified a member (method, function, property, ...), the
//!    commit's subject (a GitHub merge's: the pull request's title) as the
//!    query: is a symbol it modified among the first
//!    5 and 10 results (Acc@5, Acc@10)? Against a plain BM25 over the same
//!    symbols and the same words (one field, tantivy's default tokenizer,
//!    no name tier) as the baseline to beat. `BENCH_SEARCH_DUMP=FILE`: one
//!    JSON line per query (the gold, both rankings' first 10).

#[path = "process/mod.rs"]
#[allow(dead_code)] // shared by the benches; each uses part of it
mod process;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use diffidx_lib::search::{RankParams, SearchQuery, Searcher, Signal};
use process::baseline::Baseline;
use process::{bin, git, percentile_ms, run};

/// What a commit is about, in its author's words: its subject, or for a
/// GitHub merge ("Merge pull request #12 from user/branch") the pull
/// request's title, which GitHub writes as the body's first line.
fn what_it_is_about<'a>(subject: &'a str, body: &'a str) -> &'a str {
    let title = body.lines().map(str::trim).find(|l| !l.is_empty());
    match title {
        Some(title) if subject.starts_with("Merge pull request #") => title,
        _ => subject,
    }
}

fn timed(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

fn dir_size(path: &Path) -> u64 {
    std::fs::read_dir(path)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => dir_size(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

/// A history whose tree holds `files` C# files of 30 members each.
fn generated(dir: &Path, files: usize) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.name", "Bench"]);
    git(dir, &["config", "user.email", "bench@example.com"]);
    let words = [
        "retry", "backoff", "cache", "token", "payment", "invoice", "user", "session", "queue",
        "batch", "limit", "timeout", "parse", "render", "schema", "index",
    ];
    for round in 0..4 {
        for f in (round..files).step_by(4) {
            let mut s = format!(
                "namespace Gen.Area{}\n{{\n    public class Service{f}\n    {{\n",
                f % 20
            );
            for m in 0..30 {
                let (a, b) = (
                    words[(f + m) % words.len()],
                    words[(f * 7 + m) % words.len()],
                );
                s.push_str(&format!(
                    "        /// Handles the {a} of each {b}.\n        public int Handle{a}{b}{m}(int x) {{ return x + {round}; }}\n"
                ));
            }
            s.push_str("    }\n}\n");
            std::fs::write(dir.join(format!("Service{f}.cs")), s).unwrap();
        }
        git(dir, &["add", "-A"]);
        git(
            dir,
            &[
                "commit",
                "-qm",
                &format!("round {round}: handle more requests"),
            ],
        );
    }
}

fn main() {
    let source = std::env::var("BENCH_SEARCH_REPO").ok();
    let commits: usize = std::env::var("BENCH_SEARCH_COMMITS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    let tmp = tempfile::tempdir().unwrap();
    let repo_dir = tmp.path().join("repo");
    match &source {
        Some(path) => {
            git(
                tmp.path(),
                &["clone", "-q", path, repo_dir.to_str().unwrap()],
            );
            let head = git(&repo_dir, &["rev-parse", "HEAD"]);
            println!("repository: {path} at {}", &head[..12]);
        }
        None => {
            std::fs::create_dir_all(&repo_dir).unwrap();
            generated(&repo_dir, 400);
            println!("repository: generated, 400 C# files of 30 members, 4 commits");
        }
    }
    let dir = repo_dir.as_path();

    // 1. Build.
    let with = timed(|| {
        run(dir, bin(), &["index", "--all", "-q"], &[]);
    });
    let search_dir = dir.join(".git/diffidx/search");
    let size = dir_size(&search_dir);
    let stats = run(dir, bin(), &["status", "--json"], &[]);
    let stats: serde_json::Value = serde_json::from_str(&stats).unwrap();
    let rebuild = timed(|| {
        run(dir, bin(), &["rebuild"], &[]);
    });
    println!(
        "index --all: {:.1} s for {} commits, {} symbols; rebuild (store, graph and search index from the notes): {:.1} s",
        with.as_secs_f64(),
        stats["indexed_commits"],
        stats["symbols"],
        rebuild.as_secs_f64()
    );
    println!("search index on disk: {:.1} MiB", size as f64 / 1048576.0);

    // The symbols and the history, from the store.
    let git_repo = diffidx_core::git::Repo::discover(dir).unwrap();
    let store = diffidx_lib::open::for_reading(&git_repo, Duration::from_secs(10)).unwrap();
    let reader = store.reader().unwrap();
    let state = diffidx_lib::state::StateDir::of(&git_repo);
    let load = Instant::now();
    let searcher = Searcher::load(&reader, &state).unwrap();
    println!(
        "both tiers loaded in process: {:.1} ms",
        load.elapsed().as_secs_f64() * 1000.0
    );
    assert!(
        searcher.text_ready(),
        "the text index is not of the store's state"
    );
    let entries = reader.search_entries().unwrap();
    let contents = store.contents().unwrap();

    // 2. Latency through the server (the first search starts it).
    let mut rng = 0x2545F4914F6CDD1Du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let names: Vec<String> = (0..100)
        .map(|i| {
            let e = &entries[next() as usize % entries.len()];
            let mut name = e.name.clone();
            if i % 4 == 0 && name.len() > 5 {
                name.remove(name.len() / 2); // misspelled
            }
            name
        })
        .collect();
    let subjects: Vec<String> = git(dir, &["log", "-100", "--format=%s"])
        .lines()
        .map(str::to_owned)
        .collect();
    run(dir, bin(), &["search", "warm up"], &[]);
    std::thread::sleep(Duration::from_millis(300));
    for (label, queries) in [("names", &names), ("subjects", &subjects)] {
        let mut times: Vec<Duration> = queries
            .iter()
            .map(|q| {
                timed(|| {
                    run(dir, bin(), &["search", "--json", q], &[]);
                })
            })
            .collect();
        println!(
            "search through the server, {label} ({} queries): p50 {:.1} ms, p95 {:.1} ms",
            times.len(),
            percentile_ms(&mut times, 0.5),
            percentile_ms(&mut times, 0.95)
        );
    }
    let mut direct: Vec<Duration> = names
        .iter()
        .take(30)
        .map(|q| {
            timed(|| {
                run(
                    dir,
                    bin(),
                    &["search", "--json", q],
                    &[("DIFFIDX_SERVER", "off")],
                );
            })
        })
        .collect();
    println!(
        "search without the server (opens the store, reads every name): p50 {:.1} ms",
        percentile_ms(&mut direct, 0.5)
    );

    // 3. Quality.
    if source.is_none() {
        println!("retrieval quality: set BENCH_SEARCH_REPO to a real repository");
        return;
    }
    let by_id: HashMap<&str, &diffidx_lib::search::SymbolEntry> =
        entries.iter().map(|e| (e.id.as_str(), e)).collect();
    let members: HashSet<&str> = diffidx_lib::semantic::tune::MEMBER_KINDS
        .iter()
        .copied()
        .collect();
    let baseline = Baseline::new(&git_repo, &entries);
    let log = git(
        dir,
        &["log", "--first-parent", "--format=%H%x09%s%x09%b%x1e"],
    );
    // The defaults, and each signal of a question's ranking turned off.
    let mut variants: Vec<(String, RankParams)> =
        std::iter::once(("diffidx".to_owned(), RankParams::default()))
            .chain(Signal::ALL.iter().map(|&s| {
                (
                    format!("without {}", s.as_str()),
                    RankParams::default().without(s),
                )
            }))
            .collect();
    if let Ok(json) = std::env::var("BENCH_SEARCH_VARIANTS") {
        let tried: std::collections::BTreeMap<String, RankParams> =
            serde_json::from_str(&json).unwrap_or_else(|e| panic!("BENCH_SEARCH_VARIANTS: {e}"));
        variants.extend(tried);
    }
    let mut others = vec![[0usize; 2]; variants.len()];
    let (mut asked, mut ours, mut plain) = (0usize, [0usize; 2], [0usize; 2]);
    let mut named = 0usize;
    // `BENCH_SEARCH_DUMP=FILE`: one JSON line per query, for reading misses.
    let mut dump = std::env::var_os("BENCH_SEARCH_DUMP")
        .map(|path| std::fs::File::create(path).expect("the dump file"));
    for record in log.split('\x1e') {
        if asked >= commits {
            break;
        }
        let mut fields = record.trim_start_matches('\n').splitn(3, '\t');
        let (Some(sha), Some(subject)) = (fields.next(), fields.next()) else {
            continue;
        };
        let subject = what_it_is_about(subject, fields.next().unwrap_or(""));
        let Some(changes) = contents.changes.get(sha) else {
            continue;
        };
        let modified: BTreeSet<&str> = changes
            .iter()
            .filter(|c| c.1 == "MODIFIED")
            .map(|c| c.0.as_str())
            .filter(|id| {
                by_id
                    .get(id)
                    .is_some_and(|e| members.contains(e.kind.as_str()))
            })
            .collect();
        if modified.is_empty() || subject.trim().is_empty() {
            continue;
        }
        // A subject that names a symbol it modified is a name query, not
        // a question: left out.
        let words: HashSet<String> = subject
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map(|w| w.to_lowercase())
            .collect();
        if modified.iter().any(|id| {
            by_id
                .get(id)
                .is_some_and(|e| words.contains(&e.name.to_lowercase()))
        }) {
            named += 1;
            continue;
        }
        asked += 1;
        let query = SearchQuery {
            text: false,
            semantic: false,
            ..SearchQuery::everywhere(subject, 10)
        };
        let ranked = |params: &RankParams| -> Vec<String> {
            searcher
                .search_with(&reader, &query, params)
                .unwrap()
                .hits
                .into_iter()
                .map(|h| h.id)
                .collect()
        };
        let hits = ranked(&RankParams::default());
        let plain_hits = baseline.search(subject, 10);
        let mut lists: Vec<(&mut [usize; 2], Vec<String>)> = others
            .iter_mut()
            .zip(&variants)
            .map(|(counts, (_, params))| (counts, ranked(params)))
            .collect();
        lists.push((&mut ours, hits));
        lists.push((&mut plain, plain_hits));
        // The symbols modified, as they are named at the commit and at every
        // place their moves took them since (a file moved under `src/`):
        // the symbol's place now is the same code.
        let mut places: HashSet<(String, String)> = reader
            .history_of(modified.iter().map(|id| (*id).to_owned()).collect())
            .unwrap()
            .into_iter()
            .flat_map(|e| {
                let old = e.old_path.map(|p| (p, e.qualname.clone()));
                std::iter::once((e.path, e.qualname)).chain(old)
            })
            .collect();
        places.extend(
            modified
                .iter()
                .filter_map(|id| by_id.get(id))
                .map(|e| (e.path.clone(), e.qualname.clone())),
        );
        let same_code = |id: &str| {
            modified.contains(id)
                || by_id
                    .get(id)
                    .is_some_and(|e| places.contains(&(e.path.clone(), e.qualname.clone())))
        };
        if let Some(dump) = dump.as_mut() {
            let names = |ids: &[String]| -> Vec<String> {
                ids.iter()
                    .filter_map(|id| by_id.get(id.as_str()))
                    .map(|e| format!("{}:{}", e.path, e.qualname))
                    .collect()
            };
            let gold: Vec<String> = modified.iter().map(|id| (*id).to_owned()).collect();
            let line = serde_json::json!({
                "sha": sha,
                "query": subject,
                "gold": names(&gold),
                "diffidx": names(&lists[lists.len() - 2].1),
                "bm25": names(&lists[lists.len() - 1].1),
            });
            let _ = writeln!(dump, "{line}");
        }
        for (counts, ids) in lists {
            let rank = ids.iter().position(|id| same_code(id));
            if rank.is_some_and(|r| r < 5) {
                counts[0] += 1;
            }
            if rank.is_some_and(|r| r < 10) {
                counts[1] += 1;
            }
        }
    }
    let pct = |n: usize| 100.0 * n as f64 / asked.max(1) as f64;
    println!(
        "retrieval, commit subject -> a member it modified, {asked} commits \
         ({named} whose subject names one left out): \
         diffidx Acc@5 {:.1}% Acc@10 {:.1}%; plain BM25 Acc@5 {:.1}% Acc@10 {:.1}%",
        pct(ours[0]),
        pct(ours[1]),
        pct(plain[0]),
        pct(plain[1])
    );
    for ((label, _), counts) in variants.iter().zip(&others) {
        println!(
            "  {label:<20} Acc@5 {:.1}% Acc@10 {:.1}%",
            pct(counts[0]),
            pct(counts[1])
        );
    }
}
