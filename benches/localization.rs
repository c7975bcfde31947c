//! Issue text → the code its fix changed: `cargo bench --bench localization`.
//!
//! The task LocAgent, Agentless and SweRank report on, over a development
//! set of SWE-bench Verified instances (JSON lines with `instance_id`,
//! `repo`, `base_commit`, `problem_statement`, the gold `files` and
//! `functions` as `path:Qual.name`). For each instance: a clone checked out
//! at the base commit, indexed as a user would (`git diffidx index
//! HEAD~1..HEAD`, which builds the code graph and the search index at
//! `HEAD`), then `search` asked the problem statement, and beside it a
//! plain BM25 over the same symbols and words (`process::baseline`), in the
//! same run. Printed: file Acc@1/3/5, module Acc@5/10, function Acc@5/10
//! (LocAgent's definition: a hit when all min(|gold|, k) gold items are in
//! the top k), MRR of the first gold function, per repository and in all;
//! then what each signal of the ranking gives (each turned off in turn);
//! then the latency of issue-length and name queries through the query
//! server.
//!
//! Nothing of the benchmark is in this repository: it is read from a path.
//!
//! - `BENCH_LOCALIZATION_SET`: the JSON lines (default
//!   `../shared/benchmarks/localization-dev.jsonl` beside the checkout).
//! - `BENCH_LOCALIZATION_REPOS`: a directory holding a clone (bare or not)
//!   of each repository, as `OWNER+NAME/repo`, `OWNER+NAME`, `OWNER/NAME`
//!   or `NAME`. Required: the bench fetches nothing.
//! - `BENCH_LOCALIZATION_WORK`: where the indexed checkouts are kept, so a
//!   second run reuses them (default: a temporary directory).
//! - `BENCH_LOCALIZATION_ONLY`: only instances whose id contains this (or
//!   one of these, comma-separated).
//! - `BENCH_LOCALIZATION_SEMANTIC=MODEL_DIR`: also the semantic layer with
//!   that model (`scripts/model`): each checkout's semantic index is built
//!   (one vector cache per repository under the work directory, so a
//!   checkout embeds only what the previous ones did not), and the
//!   vectors are measured alone and as a signal of the ranking.
//! - `BENCH_LOCALIZATION_ONDEMAND=MODEL_DIR`: also `search --semantic`
//!   without a semantic index, as a user with `diffidx.embed.onDemand` gets
//!   it: the chunks of each question's first candidates embedded then
//!   (cached per repository under the work directory, as above);
//!   `BENCH_LOCALIZATION_ONDEMAND_VARIANTS`: other candidate counts and
//!   weights beside the defaults, as JSON (`{"label": [100, 1.0]}`).
//! - `BENCH_LOCALIZATION_ABLATION=0`: skip the per-signal table.
//! - `BENCH_LOCALIZATION_LATENCY=0`: skip the latency through the server;
//!   `BENCH_LOCALIZATION_LATENCY_REPO=OWNER/NAME`: measure it there
//!   (default: the repository with the most instances).
//! - `BENCH_LOCALIZATION_VARIANTS`: other weights to measure beside the
//!   defaults, as JSON (`{"label": {"files": [0.5, 0.5, 1.0]}}`; what a
//!   variant leaves out is the default).
//! - `BENCH_LOCALIZATION_DUMP=FILE`: one JSON line per instance (gold,
//!   the top 20 of each ranking and of each variant, the top 10 files),
//!   for reading failures.
//!
//! The baseline's ranking of an instance is kept in its checkout, keyed by
//! the baseline's source and the question, so reruns skip re-parsing.

#[path = "process/mod.rs"]
#[allow(dead_code)] // shared by the benches; each uses part of it
mod process;

use std::collections::{BTreeMap, HashSet};
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use diffidx_lib::search::{RankParams, SearchQuery, Searcher, Signal};
use process::baseline::Baseline;
use process::{bin, git, percentile_ms, run};

#[derive(serde::Deserialize)]
struct Instance {
    instance_id: String,
    repo: String,
    base_commit: String,
    problem_statement: String,
    files: Vec<String>,
    functions: Vec<String>,
}

/// The clone of `repo` (`owner/name`) under `root`.
fn source_of(root: &Path, repo: &str) -> PathBuf {
    let (owner, name) = repo.split_once('/').unwrap_or(("", repo));
    let joined = format!("{owner}+{name}");
    [
        root.join(&joined).join("repo"),
        root.join(&joined),
        root.join(owner).join(name),
        root.join(name),
    ]
    .into_iter()
    .find(|p| p.join("HEAD").is_file() || p.join(".git").exists())
    .unwrap_or_else(|| panic!("no clone of {repo} under {}", root.display()))
}

/// A checkout of `instance` at its base commit, indexed; reused when a
/// previous run left it indexed at that commit (and indexed again, which
/// costs nothing unless this diffidx stores differently: its time is then
/// not counted).
fn checkout(work: &Path, sources: &Path, instance: &Instance) -> (PathBuf, Option<Duration>) {
    let dir = work.join(&instance.instance_id);
    let done = dir.join(".git/diffidx-bench-indexed");
    if std::fs::read_to_string(&done).ok().as_deref() == Some(instance.base_commit.as_str()) {
        run(&dir, bin(), &["index", "-q", "HEAD~1..HEAD"], &[]);
        return (dir, None);
    }
    let checked_out = dir.join(".git").is_dir()
        && git(&dir, &["rev-parse", "HEAD"]).trim() == instance.base_commit;
    if !checked_out {
        let _ = std::fs::remove_dir_all(&dir);
        let source = source_of(sources, &instance.repo);
        git(
            work,
            &[
                "clone",
                "-q",
                "--shared",
                "--no-checkout",
                source.to_str().unwrap(),
                dir.to_str().unwrap(),
            ],
        );
        git(&dir, &["checkout", "-q", "--detach", &instance.base_commit]);
    }
    let start = Instant::now();
    run(&dir, bin(), &["index", "-q", "HEAD~1..HEAD"], &[]);
    let took = start.elapsed();
    std::fs::write(&done, &instance.base_commit).unwrap();
    (dir, Some(took))
}

/// The plain BM25 ranking of `question` (`path:qualname`s), read from the
/// checkout's cache when the baseline's source and the question are those
/// it was computed with.
fn baseline_ranking(
    repo: &diffidx_core::git::Repo,
    live: &[diffidx_lib::search::SymbolEntry],
    question: &str,
) -> Vec<String> {
    // SipHash with fixed keys: stable from run to run of one toolchain.
    let mut hasher = std::hash::DefaultHasher::new();
    (include_str!("process/baseline.rs"), question).hash(&mut hasher);
    let stamp = format!("{:016x}", hasher.finish());
    let cache = repo.common_dir().join("diffidx-bench-baseline");
    if let Ok(text) = std::fs::read_to_string(&cache) {
        let mut lines = text.lines();
        if lines.next() == Some(stamp.as_str()) {
            return lines.map(str::to_owned).collect();
        }
    }
    let by_id: std::collections::HashMap<&str, &diffidx_lib::search::SymbolEntry> =
        live.iter().map(|e| (e.id.as_str(), e)).collect();
    let ranked: Vec<String> = Baseline::new(repo, live)
        .search(question, 50)
        .iter()
        .filter_map(|id| by_id.get(id.as_str()))
        .map(|e| key(&e.path, &e.qualname))
        .collect();
    let _ = std::fs::write(&cache, format!("{stamp}\n{}", ranked.join("\n")));
    ranked
}

/// The semantic index's ranking of the question (symbol ids, best first),
/// the index built first when the checkout has none.
fn semantic_ranking(
    work: &Path,
    dir: &Path,
    instance: &Instance,
    model: &Path,
) -> Vec<(String, f32)> {
    let repo = diffidx_core::git::Repo::discover(dir).unwrap();
    let state = diffidx_lib::state::StateDir::of(&repo);
    let semantic = state.semantic();
    let model_dir = model.to_str().expect("a UTF-8 model path");
    if !semantic.join("index.json").exists() {
        // One cache per repository: the checkouts share most of their code.
        let shared = work.join("vectors").join(instance.repo.replace('/', "+"));
        std::fs::create_dir_all(shared.parent().unwrap()).unwrap();
        std::fs::create_dir_all(&semantic).unwrap();
        let link = semantic.join("vectors");
        if std::fs::symlink_metadata(&link).is_err() {
            std::os::unix::fs::symlink(&shared, &link).unwrap();
        }
        git(dir, &["config", "diffidx.embed.model", model_dir]);
        run(dir, bin(), &["index", "-q", "HEAD~1..HEAD"], &[]);
        git(dir, &["config", "--unset", "diffidx.embed.model"]);
    }
    let source = diffidx_lib::semantic::EmbedSource::Local(model.to_owned());
    let mut searcher = diffidx_lib::semantic::SemanticSearcher::load(&state, &source)
        .unwrap_or_else(|e| panic!("{}: {e}", instance.instance_id));
    searcher.rank(&instance.problem_statement, 200).unwrap()
}

/// `search --semantic` by vectors made on demand (no semantic index), the
/// checkout's vector cache shared by the repository's checkouts: an answer
/// for each (candidates, weight), and the chunks embedded.
#[allow(clippy::too_many_arguments)]
fn on_demand_answers(
    work: &Path,
    git_repo: &diffidx_core::git::Repo,
    reader: &diffidx_lib::store::Reader<'_>,
    searcher: &Searcher,
    instance: &Instance,
    model: &Path,
    query: &SearchQuery,
    variants: &[(usize, f64)],
) -> (Vec<diffidx_lib::search::SearchAnswer>, usize) {
    let state = diffidx_lib::state::StateDir::of(git_repo);
    let semantic = state.semantic();
    let shared = work.join("vectors").join(instance.repo.replace('/', "+"));
    std::fs::create_dir_all(shared.parent().unwrap()).unwrap();
    std::fs::create_dir_all(&semantic).unwrap();
    let link = semantic.join("vectors");
    if std::fs::symlink_metadata(&link).is_err() {
        std::os::unix::fs::symlink(&shared, &link).unwrap();
    }
    let source = diffidx_lib::semantic::EmbedSource::Local(model.to_owned());
    let mut on_demand = diffidx_lib::semantic::OnDemand::open(&state, &source)
        .unwrap_or_else(|e| panic!("{}: {e}", instance.instance_id));
    let mut differ = diffidx_core::SymbolDiffer::new(git_repo, Default::default()).unwrap();
    let answers = variants
        .iter()
        .map(|&(candidates, weight)| {
            on_demand.candidates = candidates;
            on_demand.weight = weight;
            on_demand
                .search(reader, searcher, &mut differ, query)
                .unwrap_or_else(|e| panic!("{}: {e}", instance.instance_id))
        })
        .collect();
    (answers, on_demand.embedded)
}

/// An answer's hits as `path:qualname`s, and its ranked files.
fn keys_of(answer: &diffidx_lib::search::SearchAnswer) -> (Vec<String>, Vec<String>) {
    let hits = answer
        .hits
        .iter()
        .map(|h| key(&h.path, &h.qualname))
        .collect();
    let files = answer.files.iter().map(|f| f.path.clone()).collect();
    (hits, files)
}

/// `path:Qual.name` without a twin's `#2`.
fn key(path: &str, qualname: &str) -> String {
    format!("{path}:{}", diffidx_core::qualname::split_twin(qualname).0)
}

/// `path:Outer`: the class or function a function belongs to.
fn module_of(function: &str) -> String {
    let (path, qual) = function.split_once(':').unwrap_or((function, ""));
    format!("{path}:{}", qual.split('.').next().unwrap_or(qual))
}

fn dedup(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut seen = HashSet::new();
    items
        .into_iter()
        .filter(|i| seen.insert(i.clone()))
        .collect()
}

/// LocAgent's Acc@k: all min(|gold|, k) gold items are in the top k.
fn acc(ranked: &[String], gold: &[String], k: usize) -> bool {
    let top: HashSet<&String> = ranked.iter().take(k).collect();
    let found = gold.iter().filter(|g| top.contains(g)).count();
    found >= gold.len().min(k)
}

/// The figures of one ranking over the instances asked.
#[derive(Default, Clone)]
struct Score {
    n: usize,
    file: [usize; 3],
    module: [usize; 2],
    function: [usize; 2],
    rr: f64,
}

impl Score {
    /// Adds one instance: `functions` are the ranked `path:qualname`s,
    /// `files` a ranking of files (empty: the files of `functions`).
    fn add(&mut self, instance: &Instance, functions: &[String], files: &[String]) {
        let functions = dedup(functions.iter().cloned());
        let files = if files.is_empty() {
            dedup(
                functions
                    .iter()
                    .map(|f| f.split_once(':').map_or(f.clone(), |p| p.0.to_owned())),
            )
        } else {
            dedup(files.iter().cloned())
        };
        let modules = dedup(functions.iter().map(|f| module_of(f)));
        let gold_modules = dedup(instance.functions.iter().map(|f| module_of(f)));
        self.n += 1;
        for (i, k) in [1, 3, 5].into_iter().enumerate() {
            self.file[i] += usize::from(acc(&files, &instance.files, k));
        }
        for (i, k) in [5, 10].into_iter().enumerate() {
            self.module[i] += usize::from(acc(&modules, &gold_modules, k));
            self.function[i] += usize::from(acc(&functions, &instance.functions, k));
        }
        let gold: HashSet<&String> = instance.functions.iter().collect();
        if let Some(rank) = functions.iter().position(|f| gold.contains(f)) {
            self.rr += 1.0 / (rank as f64 + 1.0);
        }
    }

    fn pct(&self, x: usize) -> f64 {
        100.0 * x as f64 / self.n.max(1) as f64
    }

    fn row(&self, label: &str) -> String {
        format!(
            "{label:<24} {:>4} | {:>5.1} {:>5.1} {:>5.1} | {:>5.1} {:>5.1} | {:>5.1} {:>5.1} | {:>5.3}",
            self.n,
            self.pct(self.file[0]),
            self.pct(self.file[1]),
            self.pct(self.file[2]),
            self.pct(self.module[0]),
            self.pct(self.module[1]),
            self.pct(self.function[0]),
            self.pct(self.function[1]),
            self.rr / self.n.max(1) as f64,
        )
    }
}

const HEADER: &str =
    "                            n | file@1   @3    @5 | mod@5  @10 | fn@5   @10 |   MRR";

fn main() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let set = std::env::var_os("BENCH_LOCALIZATION_SET")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../shared/benchmarks/localization-dev.jsonl"));
    let Some(sources) = std::env::var_os("BENCH_LOCALIZATION_REPOS").map(PathBuf::from) else {
        println!(
            "set BENCH_LOCALIZATION_REPOS to a directory of clones of the set's repositories \
             (OWNER+NAME/repo, OWNER+NAME, OWNER/NAME or NAME)"
        );
        return;
    };
    let only = std::env::var("BENCH_LOCALIZATION_ONLY").ok();
    let ablation = std::env::var("BENCH_LOCALIZATION_ABLATION").as_deref() != Ok("0");
    let text = std::fs::read_to_string(&set)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", set.display()));
    let instances: Vec<Instance> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a localization instance"))
        .filter(|i: &Instance| {
            only.as_deref()
                .is_none_or(|o| o.split(',').any(|o| i.instance_id.contains(o)))
        })
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let work = std::env::var_os("BENCH_LOCALIZATION_WORK")
        .map(PathBuf::from)
        .unwrap_or_else(|| tmp.path().to_owned());
    std::fs::create_dir_all(&work).unwrap();
    println!(
        "set: {} ({} instances); repositories from {}",
        set.display(),
        instances.len(),
        sources.display()
    );

    let mut variants: Vec<(String, RankParams)> = if ablation {
        std::iter::once(("diffidx".to_owned(), RankParams::default()))
            .chain(Signal::ALL.iter().map(|&s| {
                (
                    format!("  without {}", s.as_str()),
                    RankParams::default().without(s),
                )
            }))
            .chain(
                Signal::ALL
                    .iter()
                    .map(|&s| (format!("  {} alone", s.as_str()), RankParams::only(s))),
            )
            .collect()
    } else {
        vec![("diffidx".to_owned(), RankParams::default())]
    };
    // Other weights to try: {"label": {"files": [0.5, 0.5, 1.0]}, ...}.
    if let Ok(json) = std::env::var("BENCH_LOCALIZATION_VARIANTS") {
        let tried: BTreeMap<String, RankParams> = serde_json::from_str(&json)
            .unwrap_or_else(|e| panic!("BENCH_LOCALIZATION_VARIANTS: {e}"));
        variants.extend(tried.into_iter().map(|(l, p)| (format!("  {l}"), p)));
    }
    let mut plain: BTreeMap<String, Score> = BTreeMap::new();
    let mut ours: Vec<BTreeMap<String, Score>> = vec![BTreeMap::new(); variants.len()];
    let mut index_times: Vec<Duration> = Vec::new();
    let mut query_times: Vec<Duration> = Vec::new();
    let mut dirs: Vec<(String, PathBuf)> = Vec::new();
    let model = std::env::var_os("BENCH_LOCALIZATION_SEMANTIC").map(PathBuf::from);
    let mut semantic: BTreeMap<&str, Score> = BTreeMap::new();
    let on_demand_model = std::env::var_os("BENCH_LOCALIZATION_ONDEMAND").map(PathBuf::from);
    let mut on_demand: BTreeMap<String, Score> = BTreeMap::new();
    let mut on_demand_times: Vec<Duration> = Vec::new();
    let mut on_demand_chunks = 0usize;
    let mut on_demand_variants: Vec<(String, (usize, f64))> = vec![(
        "on demand (the defaults)".into(),
        (
            diffidx_lib::semantic::ON_DEMAND_CANDIDATES,
            diffidx_lib::semantic::ON_DEMAND_WEIGHT,
        ),
    )];
    if let Ok(json) = std::env::var("BENCH_LOCALIZATION_ONDEMAND_VARIANTS") {
        let tried: BTreeMap<String, (usize, f64)> = serde_json::from_str(&json)
            .unwrap_or_else(|e| panic!("BENCH_LOCALIZATION_ONDEMAND_VARIANTS: {e}"));
        on_demand_variants.extend(tried.into_iter().map(|(l, v)| (format!("  {l}"), v)));
    }
    let mut on_demand_tried: Vec<Score> = vec![Score::default(); on_demand_variants.len()];
    let mut dump = std::env::var_os("BENCH_LOCALIZATION_DUMP").map(|p| {
        std::fs::File::create(&p)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", Path::new(&p).display()))
    });
    for instance in &instances {
        let (dir, took) = checkout(&work, &sources, instance);
        index_times.extend(took);
        // Before the store is opened here: building the index writes it.
        let vectors = model
            .as_ref()
            .map(|model| semantic_ranking(&work, &dir, instance, model));
        let git_repo = diffidx_core::git::Repo::discover(&dir).unwrap();
        let store = diffidx_lib::open::for_reading(&git_repo, Duration::from_secs(30)).unwrap();
        let reader = store.reader().unwrap();
        let state = diffidx_lib::state::StateDir::of(&git_repo);
        let searcher = Searcher::load(&reader, &state).unwrap();
        assert!(
            searcher.text_ready(),
            "{}: no text index",
            instance.instance_id
        );
        let live: Vec<_> = reader
            .search_entries()
            .unwrap()
            .into_iter()
            .filter(|e| !e.deleted)
            .collect();
        let plain_ranked = baseline_ranking(&git_repo, &live, &instance.problem_statement);
        for group in ["all", instance.repo.as_str()] {
            plain
                .entry(group.to_owned())
                .or_default()
                .add(instance, &plain_ranked, &[]);
        }
        let query = SearchQuery::new(&instance.problem_statement, 50);
        let mut dumped: Option<(Vec<String>, Vec<String>)> = None;
        let mut dumped_variants = serde_json::Map::new();
        for (v, (label, params)) in variants.iter().enumerate() {
            let start = Instant::now();
            let answer = searcher.search_with(&reader, &query, params).unwrap();
            if v == 0 {
                query_times.push(start.elapsed());
            }
            let (ranked, files) = keys_of(&answer);
            if v == 0 {
                dumped = Some((ranked.clone(), files.clone()));
            } else if dump.is_some() {
                let top: Vec<String> = dedup(ranked.clone()).into_iter().take(20).collect();
                dumped_variants.insert(label.trim().to_owned(), top.into());
            }
            for group in ["all", instance.repo.as_str()] {
                ours[v]
                    .entry(group.to_owned())
                    .or_default()
                    .add(instance, &ranked, &files);
            }
        }
        if let Some(vectors) = &vectors {
            let by_id: std::collections::HashMap<&str, &diffidx_lib::search::SymbolEntry> =
                live.iter().map(|e| (e.id.as_str(), e)).collect();
            let alone: Vec<String> = vectors
                .iter()
                .filter_map(|(id, _)| by_id.get(id.as_str()))
                .map(|e| key(&e.path, &e.qualname))
                .collect();
            semantic
                .entry("vectors alone")
                .or_default()
                .add(instance, &alone, &[]);
            semantic.entry("diffidx, same instances").or_default().add(
                instance,
                &dumped.as_ref().unwrap().0,
                &dumped.as_ref().unwrap().1,
            );
            // `search --semantic` before questions had a ranking of their
            // own: names, BM25 and vectors fused by reciprocal rank.
            // (It ranks no files: they are read off its hits.)
            let (ranked, files) = keys_of(&searcher.hybrid(&reader, &query, vectors).unwrap());
            semantic
                .entry("hybrid (reciprocal rank)")
                .or_default()
                .add(instance, &ranked, &files);
            for (label, weight, files) in [
                ("diffidx + vectors 0.5", 0.5, None),
                ("diffidx + vectors 1", 1.0, None),
                ("diffidx + vectors 2", 2.0, None),
                (
                    "diffidx + vectors 0.5, files at 1 (`--semantic`)",
                    0.5,
                    Some(1.0),
                ),
            ] {
                let params = RankParams {
                    vectors: weight,
                    file_vectors: files,
                    ..RankParams::default()
                };
                let answer = searcher
                    .search_with_vectors(&reader, &query, &params, vectors)
                    .unwrap();
                let (ranked, files) = keys_of(&answer);
                semantic
                    .entry(label)
                    .or_default()
                    .add(instance, &ranked, &files);
            }
        }
        if let Some(model) = &on_demand_model {
            let start = Instant::now();
            let (first, embedded_first) = on_demand_answers(
                &work,
                &git_repo,
                &reader,
                &searcher,
                instance,
                model,
                &query,
                &[on_demand_variants[0].1],
            );
            on_demand_times.push(start.elapsed());
            let (ranked, files) = keys_of(&first[0]);
            for group in ["all", instance.repo.as_str()] {
                on_demand
                    .entry(group.to_owned())
                    .or_default()
                    .add(instance, &ranked, &files);
            }
            let tried: Vec<(usize, f64)> = on_demand_variants.iter().map(|v| v.1).collect();
            let (answers, embedded) = on_demand_answers(
                &work, &git_repo, &reader, &searcher, instance, model, &query, &tried,
            );
            on_demand_chunks += embedded_first + embedded;
            for (score, answer) in on_demand_tried.iter_mut().zip(&answers) {
                let (ranked, files) = keys_of(answer);
                score.add(instance, &ranked, &files);
            }
        }
        if let (Some(out), Some((ranked, files))) = (dump.as_mut(), dumped) {
            let line = serde_json::json!({
                "instance_id": instance.instance_id,
                "repo": instance.repo,
                "gold_functions": instance.functions,
                "gold_files": instance.files,
                "ranked": dedup(ranked).into_iter().take(20).collect::<Vec<_>>(),
                "files": files.into_iter().take(10).collect::<Vec<_>>(),
                "baseline": dedup(plain_ranked).into_iter().take(20).collect::<Vec<_>>(),
                "variants": dumped_variants,
            });
            writeln!(out, "{line}").unwrap();
        }
        dirs.push((instance.repo.clone(), dir));
    }

    println!("\n{HEADER}");
    for group in plain.keys() {
        println!("{}", ours[0][group].row(&format!("diffidx {group}")));
        println!("{}", plain[group].row(&format!("plain BM25 {group}")));
    }
    let (o, p) = (&ours[0]["all"], &plain["all"]);
    println!(
        "\nfunction Acc@5: diffidx {:.1} against plain BM25 {:.1} ({:.2}x); file Acc@1 {:.1} against {:.1}",
        o.pct(o.function[0]),
        p.pct(p.function[0]),
        o.function[0] as f64 / p.function[0].max(1) as f64,
        o.pct(o.file[0]),
        p.pct(p.file[0]),
    );
    if !semantic.is_empty() {
        println!("\nthe semantic layer (instances with vectors)\n{HEADER}");
        for (label, score) in &semantic {
            println!("{}", score.row(label));
        }
    }
    if !on_demand.is_empty() {
        println!(
            "\n`search --semantic` by vectors made on demand (the first {} candidates)\n{HEADER}",
            diffidx_lib::semantic::ON_DEMAND_CANDIDATES
        );
        for group in on_demand.keys() {
            println!("{}", on_demand[group].row(&format!("on demand {group}")));
            println!("{}", ours[0][group].row(&format!("diffidx {group}")));
            println!("{}", plain[group].row(&format!("plain BM25 {group}")));
        }
        let (d, p) = (&on_demand["all"], &plain["all"]);
        println!(
            "function Acc@5: on demand {:.1} against plain BM25 {:.1} ({:.2}x); file Acc@1 {:.1} against {:.1}",
            d.pct(d.function[0]),
            p.pct(p.function[0]),
            d.function[0] as f64 / p.function[0].max(1) as f64,
            d.pct(d.file[0]),
            p.pct(p.file[0]),
        );
        println!(
            "on demand, in process (the model loaded, chunks embedded): p50 {:.0} ms, p95 {:.0} ms, max {:.0} ms; {} chunks embedded in all (a warm cache embeds none)",
            percentile_ms(&mut on_demand_times, 0.5),
            percentile_ms(&mut on_demand_times, 0.95),
            percentile_ms(&mut on_demand_times, 1.0),
            on_demand_chunks,
        );
        if on_demand_variants.len() > 1 {
            println!("\non demand: candidates and weights (all instances)\n{HEADER}");
            for ((label, _), score) in on_demand_variants.iter().zip(&on_demand_tried) {
                println!("{}", score.row(label));
            }
        }
    }
    if variants.len() > 1 {
        println!("\nwhat each signal gives (all instances)\n{HEADER}");
        for (v, (label, _)) in variants.iter().enumerate() {
            println!("{}", ours[v]["all"].row(label));
        }
    }
    if !index_times.is_empty() {
        println!(
            "\nindex HEAD~1..HEAD at a base commit (whole graph and search index): p50 {:.0} ms, max {:.0} ms over {} checkouts",
            percentile_ms(&mut index_times, 0.5),
            percentile_ms(&mut index_times, 1.0),
            index_times.len()
        );
    }
    println!(
        "ranking in process (store open, issue text): p50 {:.1} ms, p95 {:.1} ms",
        percentile_ms(&mut query_times, 0.5),
        percentile_ms(&mut query_times, 0.95)
    );

    // Latency through the query server, on the largest repository's checkouts.
    if std::env::var("BENCH_LOCALIZATION_LATENCY").as_deref() == Ok("0") {
        return;
    }
    // The repository with the most checkouts (sympy on the dev set), or
    // BENCH_LOCALIZATION_LATENCY_REPO.
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for (repo, _) in &dirs {
        *counts.entry(repo.as_str()).or_default() += 1;
    }
    let chosen = std::env::var("BENCH_LOCALIZATION_LATENCY_REPO").ok();
    let Some(largest) = chosen.or_else(|| {
        counts
            .iter()
            .max_by_key(|(_, n)| **n)
            .map(|(r, _)| (*r).to_owned())
    }) else {
        return;
    };
    let largest = &largest;
    let (mut issues, mut cold, mut names) = (Vec::new(), Vec::new(), Vec::new());
    for (instance, (_, dir)) in instances
        .iter()
        .zip(&dirs)
        .filter(|(_, (r, _))| r == largest)
    {
        // The first search starts the server and loads both tiers; the
        // first question reads the text index's pages from disk.
        let searched = |query: &str| {
            let start = Instant::now();
            run(dir, bin(), &["search", "--json", query], &[]);
            start.elapsed()
        };
        searched("warm up");
        cold.push(searched(&instance.problem_statement));
        issues.push(searched(&instance.problem_statement));
        let name = instance
            .functions
            .first()
            .and_then(|f| f.rsplit(['.', ':']).next())
            .unwrap_or("main");
        names.push(searched(name));
        // A server exits when its socket is gone: one at a time, not 45.
        let _ = std::fs::remove_file(dir.join(".git/diffidx/query.sock"));
    }
    println!(
        "through the query server on {largest} ({} checkouts): issue text p50 {:.0} ms, p95 {:.0} ms \
         (the first question of a server: p50 {:.0} ms, p95 {:.0} ms); names p50 {:.1} ms",
        issues.len(),
        percentile_ms(&mut issues, 0.5),
        percentile_ms(&mut issues, 0.95),
        percentile_ms(&mut cold, 0.5),
        percentile_ms(&mut cold, 0.95),
        percentile_ms(&mut names, 0.5),
    );
}
