//! Figures for the README's semantic rows: `cargo bench --bench semantic`.
//!
//! Needs the model `scripts/model` installs (`DIFFIDX_TEST_MODEL`, or its
//! default directory). On a real repository (`BENCH_SEMANTIC_REPO`, a path
//! to a clone; default: a small generated one, which gives the speed
//! figures only):
//!
//! 1. Embedding: the clone indexed whole, then the semantic layer turned
//!    on and `index` run: chunks, chunks/s on this machine's cores.
//! 2. The cached re-run: the semantic index deleted, then `index`: chunks
//!    embedded (must be 0), and its time.
//! 3. Latency: `search --semantic` as a whole process, p50/p95.
//! 4. Quality: the commit-subject → modified-member task of the search
//!    bench (`BENCH_SEMANTIC_COMMITS`, default 300 first-parent commits),
//!    Acc@5 and Acc@10 of BM25 alone, vectors alone, and the hybrid.

#[path = "process/mod.rs"]
#[allow(dead_code)] // shared by the benches; each uses part of it
mod process;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use diffidx_lib::search::{HybridParams, SearchQuery, Searcher};
use diffidx_lib::semantic::SemanticSearcher;
use process::{bin, git, percentile_ms, run, run_sampling};

fn model_dir() -> PathBuf {
    let dir = diffidx_semantic::embed::installed_model_dir();
    assert!(
        dir.join("model.safetensors").is_file(),
        "no embedding model in {}; run scripts/model",
        dir.display()
    );
    dir
}

/// The numbers of `index`'s semantic line: (chunks, embedded, seconds, cached).
fn semantic_figures(stderr: &str) -> (usize, usize, f64, usize) {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("semantic index"))
        .unwrap_or_else(|| panic!("no semantic line in: {stderr}"));
    let numbers: Vec<f64> = line
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter_map(|w| w.trim_matches('.').parse().ok())
        .collect();
    // "N chunks of F files re-chunked (D dropped); E embedded in S s, C from the cache"
    (
        numbers[0] as usize,
        numbers[3] as usize,
        numbers[4],
        numbers[5] as usize,
    )
}

/// A small history of C# services, for the speed figures.
fn generated(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.name", "Bench"]);
    git(dir, &["config", "user.email", "bench@example.com"]);
    let words = [
        "retry", "backoff", "cache", "token", "payment", "invoice", "user", "session",
    ];
    for f in 0..40 {
        let mut s = format!("namespace Gen\n{{\n    public class Service{f}\n    {{\n");
        for m in 0..25 {
            let (a, b) = (words[(f + m) % 8], words[(f * 3 + m) % 8]);
            s.push_str(&format!(
                "        /// Handles the {a} of each {b}.\n        public int Handle{a}{b}{m}(int x)\n        {{\n            var y = x * {m};\n            return y + {f};\n        }}\n"
            ));
        }
        s.push_str("    }\n}\n");
        std::fs::write(dir.join(format!("Service{f}.cs")), s).unwrap();
    }
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "services"]);
}

fn main() {
    let model = model_dir();
    let source = std::env::var("BENCH_SEMANTIC_REPO").ok();
    let commits: usize = std::env::var("BENCH_SEMANTIC_COMMITS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    // BENCH_SEMANTIC_WORKDIR keeps the clone; one indexed already skips to
    // the quality figures (for comparing rankers without re-embedding).
    let tmp = tempfile::tempdir().unwrap();
    let dir = std::env::var_os("BENCH_SEMANTIC_WORKDIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| tmp.path().join("repo"));
    let reuse = dir.join(".git/diffidx/semantic/index.json").is_file();
    if reuse {
        println!("reusing the indexed clone in {}", dir.display());
    } else {
        match &source {
            Some(path) => {
                git(
                    dir.parent().unwrap(),
                    &["clone", "-q", path, dir.to_str().unwrap()],
                );
                let head = git(&dir, &["rev-parse", "HEAD"]);
                println!("repository: {path} at {}", &head[..12]);
            }
            None => {
                std::fs::create_dir_all(&dir).unwrap();
                generated(&dir);
                println!("repository: generated, 40 C# files of 25 methods");
            }
        }
        embed_figures(&dir, &model);
    }
    let dir = dir.as_path();

    // 4. Quality.
    if source.is_none() {
        println!("retrieval quality: set BENCH_SEMANTIC_REPO to a real repository");
        return;
    }
    let repo = diffidx_core::git::Repo::discover(dir).unwrap();
    let state = diffidx_lib::state::StateDir::of(&repo);
    let store = diffidx_lib::open::for_reading(&repo, Duration::from_secs(10)).unwrap();
    let reader = store.reader().unwrap();
    let searcher = Searcher::load(&reader, &state).unwrap();
    let load = Instant::now();
    let source = diffidx_lib::semantic::EmbedSource::Local(model.clone());
    let mut semantic = SemanticSearcher::load(&state, &source).unwrap();
    println!(
        "semantic index and model loaded in process: {:.0} ms",
        load.elapsed().as_secs_f64() * 1000.0
    );
    let entries = reader.search_entries().unwrap();
    let contents = store.contents().unwrap();
    let kinds: HashMap<&str, &str> = entries
        .iter()
        .map(|e| (e.id.as_str(), e.kind.as_str()))
        .collect();
    let members: HashSet<&str> = diffidx_lib::semantic::tune::MEMBER_KINDS
        .iter()
        .copied()
        .collect();
    let log = git(dir, &["log", "--first-parent", "--format=%H%x09%s"]);
    let variant = |weights: [f64; 3], expand_top: usize, expand_share: f64| HybridParams {
        weights,
        expand_top,
        expand_share,
    };
    let variants: Vec<(String, HybridParams)> = [
        variant([1.0, 1.0, 1.0], 0, 0.0),
        variant([1.0, 1.0, 1.0], 3, 0.9),
        variant([1.0, 2.0, 1.0], 0, 0.0),
        variant([1.0, 4.0, 1.0], 3, 0.9),
    ]
    .into_iter()
    .map(|p| {
        let label = format!(
            "weights {}/{}/{}, expand {}x{}",
            p.weights[0], p.weights[1], p.weights[2], p.expand_top, p.expand_share
        );
        (label, p)
    })
    .collect();
    let mut variant_counts = vec![[0usize; 2]; variants.len()];
    // Against BM25 and against vectors, at Acc@5 and Acc@10: queries only
    // the hybrid answers, and queries only the other answers.
    let mut discordant = [[[(0usize, 0usize); 2]; 2]; 2];
    // What `search --semantic` uses: the weights the index run fitted to
    // this history (on its newest commits), else the defaults.
    let fitted = diffidx_lib::semantic::tune::params(&state, &semantic.model().label());
    let (mut asked, mut counts) = (0usize, [[0usize; 2]; 5]);
    let mut rank_times = Vec::new();
    for line in log.lines() {
        if asked >= commits {
            break;
        }
        let Some((sha, subject)) = line.split_once('\t') else {
            continue;
        };
        let Some(changes) = contents.changes.get(sha) else {
            continue;
        };
        let modified: BTreeSet<&str> = changes
            .iter()
            .filter(|c| c.1 == "MODIFIED")
            .map(|c| c.0.as_str())
            .filter(|id| kinds.get(id).is_some_and(|k| members.contains(k)))
            .collect();
        if modified.is_empty() || subject.trim().is_empty() {
            continue;
        }
        asked += 1;
        let query = SearchQuery::everywhere(subject, 10);
        let start = Instant::now();
        let vectors = semantic
            .rank(subject, diffidx_lib::search::candidates(10))
            .unwrap();
        let hybrid: Vec<String> = searcher
            .hybrid(&reader, &query, &vectors)
            .unwrap()
            .hits
            .into_iter()
            .map(|h| h.id)
            .collect();
        rank_times.push(start.elapsed());
        let hybrid_fitted: Vec<String> = searcher
            .hybrid_with(&reader, &query, &vectors, fitted)
            .unwrap()
            .hits
            .into_iter()
            .map(|h| h.id)
            .collect();
        let names_only: Vec<String> = searcher
            .search(
                &reader,
                &SearchQuery {
                    semantic: false,
                    text: false,
                    ..query.clone()
                },
            )
            .unwrap()
            .hits
            .into_iter()
            .map(|h| h.id)
            .collect();
        for (k, (_, params)) in variants.iter().enumerate() {
            let ids: Vec<String> = searcher
                .hybrid_with(&reader, &query, &vectors, *params)
                .unwrap()
                .hits
                .into_iter()
                .map(|h| h.id)
                .collect();
            let rank = ids.iter().position(|id| modified.contains(id.as_str()));
            variant_counts[k][0] += usize::from(rank.is_some_and(|r| r < 5));
            variant_counts[k][1] += usize::from(rank.is_some_and(|r| r < 10));
        }
        let text = searcher.text_ranking(subject, 10).unwrap();
        let vector: Vec<String> = vectors.into_iter().take(10).map(|v| v.0).collect();
        let mut found = [[false; 2]; 5];
        for (k, ids) in [&text, &vector, &hybrid, &names_only, &hybrid_fitted]
            .into_iter()
            .enumerate()
        {
            let rank = ids.iter().position(|id| modified.contains(id.as_str()));
            found[k] = [rank.is_some_and(|r| r < 5), rank.is_some_and(|r| r < 10)];
            for (at, hit) in found[k].iter().enumerate() {
                counts[k][at] += usize::from(*hit);
            }
        }
        // Each hybrid (default, fitted) against each ranking alone, query
        // by query.
        for (hybrid, against) in [2, 4].into_iter().zip(discordant.iter_mut()) {
            for (other, pair) in [0, 1].into_iter().zip(against.iter_mut()) {
                for at in 0..2 {
                    pair[at].0 += usize::from(found[hybrid][at] && !found[other][at]);
                    pair[at].1 += usize::from(found[other][at] && !found[hybrid][at]);
                }
            }
        }
    }
    let pct = |n: usize| 100.0 * n as f64 / asked.max(1) as f64;
    println!("retrieval, commit subject -> a member it modified, {asked} commits:");
    let fitted_label = format!(
        "hybrid, fitted {}/{}/{}, expand {}",
        fitted.weights[0], fitted.weights[1], fitted.weights[2], fitted.expand_top
    );
    for (k, label) in [
        "BM25 alone",
        "vectors alone",
        "hybrid (--semantic)",
        "search (names, then BM25)",
        fitted_label.as_str(),
    ]
    .iter()
    .enumerate()
    {
        println!(
            "  {label:<32} Acc@5 {:>5.1}%  Acc@10 {:>5.1}%",
            pct(counts[k][0]),
            pct(counts[k][1])
        );
    }
    // Whether a difference is more than chance: the queries where exactly
    // one of the two finds an answer, and a two-sided sign test on them.
    for (hybrid, against) in ["hybrid", "fitted hybrid"].iter().zip(discordant) {
        for (label, pair) in ["BM25 alone", "vectors alone"].iter().zip(against) {
            for (at, (only_hybrid, only_other)) in ["Acc@5", "Acc@10"].iter().zip(pair) {
                println!(
                    "  {hybrid} against {label}, {at}: {only_hybrid} queries found by the \
                     {hybrid} only, {only_other} by {label} only (sign test p = {:.2})",
                    sign_test(only_hybrid, only_other)
                );
            }
        }
    }
    println!("hybrid variants (names/text/vector weights; expansion of the top N at a share):");
    for (k, (label, _)) in variants.iter().enumerate() {
        println!(
            "  {label:<34} Acc@5 {:>5.1}%  Acc@10 {:>5.1}%",
            pct(variant_counts[k][0]),
            pct(variant_counts[k][1])
        );
    }
    println!(
        "hybrid ranking in process (embed the query, scan, fuse, expand): p50 {:.1} ms, p95 {:.1} ms",
        percentile_ms(&mut rank_times, 0.5),
        percentile_ms(&mut rank_times, 0.95)
    );

    // 5. Weights fitted to this history (what index runs do), held out.
    let fitting = Instant::now();
    let task = diffidx_lib::semantic::tune::task(&reader, commits).unwrap();
    match diffidx_lib::semantic::tune::fit(&reader, &searcher, &mut semantic, &task).unwrap() {
        Some(f) => println!("weights {f} (in {:.1} s)", fitting.elapsed().as_secs_f64()),
        None => println!("weights: too few commits to fit ({})", task.len()),
    }
}

/// The two-sided exact sign test of `a` successes against `b` (the chance
/// of a split at least this uneven when both sides are equally likely).
fn sign_test(a: usize, b: usize) -> f64 {
    let n = a + b;
    if n == 0 {
        return 1.0;
    }
    // log C(n, i) - n log 2, summed over the tail i <= min(a, b).
    let ln_choose = |n: usize, k: usize| -> f64 {
        (1..=k)
            .map(|i| ((n - k + i) as f64).ln() - (i as f64).ln())
            .sum()
    };
    let tail: f64 = (0..=a.min(b))
        .map(|i| (ln_choose(n, i) - n as f64 * std::f64::consts::LN_2).exp())
        .sum();
    (2.0 * tail).min(1.0)
}

/// Steps 1-3: embedding throughput, the cached re-run, latency.
fn embed_figures(dir: &Path, model: &Path) {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());

    // 1. Embedding.
    run(dir, bin(), &["index", "--all", "-q"], &[]);
    git(
        dir,
        &["config", "diffidx.embed.model", model.to_str().unwrap()],
    );
    let first = run_sampling(dir, &["index"]);
    let (chunks, embedded, secs, _) = semantic_figures(&first.stderr);
    println!(
        "embedding: {chunks} chunks, {embedded} embedded in {secs:.1} s ({:.0} chunks/s on {threads} cores); \
         the run {:.1} s, peak RSS {:.0} MiB",
        embedded as f64 / secs.max(1e-9),
        first.took.as_secs_f64(),
        first.peak_mib
    );
    let size = std::fs::metadata(dir.join(".git/diffidx/semantic/vectors")).map_or(0, |m| m.len())
        + std::fs::metadata(dir.join(".git/diffidx/semantic/index.json")).map_or(0, |m| m.len());
    println!("semantic index on disk: {:.1} MiB", size as f64 / 1048576.0);

    // 2. The cached re-run: the index lost, remade from the cache.
    std::fs::remove_file(dir.join(".git/diffidx/semantic/index.json")).unwrap();
    let again = run_sampling(dir, &["index"]);
    let (_, embedded_again, _, cached) = if again.stderr.contains("semantic index") {
        semantic_figures(&again.stderr)
    } else {
        (0, 0, 0.0, 0)
    };
    println!(
        "index remade from the cache: {embedded_again} embedded, {cached} from the cache, {:.2} s",
        again.took.as_secs_f64()
    );
    assert_eq!(embedded_again, 0, "unchanged code was embedded again");

    // 3. Latency.
    let subjects: Vec<String> = git(dir, &["log", "-30", "--format=%s"])
        .lines()
        .filter(|s| !s.trim().is_empty())
        .map(str::to_owned)
        .collect();
    let mut times: Vec<Duration> = subjects
        .iter()
        .map(|q| {
            let start = Instant::now();
            run(dir, bin(), &["search", "--semantic", "--json", q], &[]);
            start.elapsed()
        })
        .collect();
    println!(
        "search --semantic as a whole process ({} queries): p50 {:.0} ms, p95 {:.0} ms",
        times.len(),
        percentile_ms(&mut times, 0.5),
        percentile_ms(&mut times, 0.95)
    );
}
