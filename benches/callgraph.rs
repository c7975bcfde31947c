//! Call-graph quality against public ground truth: `cargo bench --bench callgraph`.
//!
//! PyCG's micro-benchmark (`vitsalis/PyCG`, `micro-benchmark/snippets/<category>/<case>`):
//! each case is a few Python files and a hand-written `callgraph.json`
//! (caller → callees, by dotted module path). Every case is resolved the way
//! the graph resolves a tree (parse, facts, resolution; no store), its CALLS
//! edges named the same way, and scored: precision and recall per resolution
//! level (each level with the more certain ones), per category, and for
//! module-level callers apart.
//!
//! Only edges between code of the case count: a callee under `<builtin>` or
//! in a module the case does not hold is outside any repository's graph.
//! Functions nested in functions are no symbols (DESIGN.md §2): their calls
//! belong to the enclosing function, and truth edges that name one are
//! counted apart ("nested"), never silently dropped.
//!
//! `BENCH_CALLGRAPH_TREE` (a checkout of any repository) prints, for that
//! tree, the graph's build time (parse and facts, then resolution), the
//! peak memory of the process and the CALLS edges per resolution level:
//! how much each level adds on real code; `BENCH_CALLGRAPH_DUMP=file`
//! writes each edge (level, caller, callee, call site) for a reading.
//!
//! `BENCH_CALLGRAPH_PYCG` is a checkout or a bare clone of the PyCG
//! repository, `BENCH_CALLGRAPH_JARVIS` one of Jarvis's site
//! (`pythonJaRvis/pythonJaRvis.github.io`: its micro-benchmark, code in
//! `Jarvis/dataset/micro_benchmark`, truth in `Jarvis/ground_truth/...`, in
//! PyCG's format); no benchmark data is kept in this project. Only the
//! micro-benchmarks are read: Jarvis's macro-benchmark is left for
//! independent checking. `BENCH_CALLGRAPH_SHOW=1` prints each case's
//! missed and wrong edges.
//!
//! `BENCH_CALLGRAPH_JCG` is a checkout or a bare clone of JCG (`opalj/JCG`):
//! its test cases for JavaScript, Java and Python
//! (`jcg_testcases/src/main/resources/<language>/<category>.md`), each `##`
//! section a case, read as JCG's extractors read them, resolved as PyCG's
//! cases are and scored per language ([`JcgTruth::score`] says how). An
//! expected edge to or from a builtin (`Native.*`) or a JDK type is outside
//! the case's code and left out, as PyCG's `<builtin>` ones are. Beside
//! precision and recall it prints JCG's own verdict: the cases where every
//! expected edge is found and no edge goes to a prohibited target (JCG
//! judges no other edge, so this is laxer than the precision above).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use diffidx_core::codegraph::{DefIndex, EdgeKind, Resolution, SourceFile};
use diffidx_core::{symbol_id, Extractor, Language};

#[path = "callgraph/jcg.rs"]
mod jcg;
use jcg::{score_jcg, Jcg, JCG_CASES};

/// One scored edge: (caller, callee) by PyCG's names.
type Pair = (String, String);

struct Case {
    category: String,
    name: String,
    files: Vec<(String, String)>,
    truth: BTreeSet<Pair>,
}

/// The found edges of a case: each pair with its most certain level.
struct Found {
    edges: BTreeMap<Pair, Resolution>,
    /// Every name the graph has a node for (symbols and modules).
    nodes: BTreeSet<String>,
    modules: BTreeSet<String>,
    /// Calls of a class that declares no `__init__`: the graph links the
    /// class (the instantiation); PyCG's graph has no node for a class.
    instantiations: usize,
}

fn main() {
    if let Ok(tree) = std::env::var("BENCH_CALLGRAPH_TREE") {
        measure_tree(Path::new(&tree));
    }
    let mut any = false;
    if let Ok(source) = std::env::var("BENCH_CALLGRAPH_PYCG") {
        let root = checkout(Path::new(&source), &["micro-benchmark"]);
        let snippets = root.join("micro-benchmark/snippets");
        score(
            "PyCG micro-benchmark",
            &root,
            read_cases(&snippets, &snippets),
        );
        any = true;
    }
    if let Ok(source) = std::env::var("BENCH_CALLGRAPH_JARVIS") {
        let root = checkout(
            Path::new(&source),
            &[
                "Jarvis/dataset/micro_benchmark",
                "Jarvis/ground_truth/micro_benchmark",
            ],
        );
        let cases = read_cases(
            &root.join("Jarvis/dataset/micro_benchmark"),
            &root.join("Jarvis/ground_truth/micro_benchmark"),
        );
        score("Jarvis micro-benchmark", &root, cases);
        any = true;
    }
    if let Ok(source) = std::env::var("BENCH_CALLGRAPH_JCG") {
        let root = checkout(Path::new(&source), &[JCG_CASES]);
        for language in Jcg::ALL {
            score_jcg(&root, language);
        }
        any = true;
    }
    if !any {
        println!(
            "callgraph: set BENCH_CALLGRAPH_PYCG to a checkout or bare clone of \
             github.com/vitsalis/PyCG, BENCH_CALLGRAPH_JARVIS to one of \
             github.com/pythonJaRvis/pythonJaRvis.github.io, BENCH_CALLGRAPH_JCG to one of \
             github.com/opalj/JCG (their test cases are the ground truth)"
        );
    }
}

/// Scores every case and prints the tables.
fn score(title: &str, root: &Path, cases: Vec<Case>) {
    let commit = git_head(root);
    let show = std::env::var("BENCH_CALLGRAPH_SHOW").is_ok_and(|v| v == "1");
    println!(
        "\n# {title} at {commit}: {} cases, {} edges between the cases' own code",
        cases.len(),
        cases.iter().map(|c| c.truth.len()).sum::<usize>()
    );
    let mut extractor = Extractor::new().expect("grammars");
    let mut total = Score::default();
    let mut instantiations = 0;
    let mut by_category: BTreeMap<String, Score> = BTreeMap::new();
    for case in &cases {
        let found = resolve_case(&mut extractor, case);
        let score = Score::of(case, &found);
        instantiations += found.instantiations;
        if show && (score.missed(Resolution::Scoped) > 0 || score.wrong(Resolution::Scoped) > 0) {
            print_case(case, &found);
        }
        by_category
            .entry(case.category.clone())
            .or_default()
            .add(&score);
        total.add(&score);
    }
    println!();
    println!("| level | precision | recall | recall, module callers | recall, function callers | recall without nested |");
    println!("|---|---|---|---|---|---|");
    for level in Resolution::ALL {
        println!(
            "| ≤ {} | {} | {} | {} | {} | {} |",
            level.as_str(),
            ratio(total.right(level), total.found(level)),
            ratio(total.right(level), total.truth),
            ratio(total.right_module(level), total.truth_module),
            ratio(
                total.right(level) - total.right_module(level),
                total.truth - total.truth_module
            ),
            ratio(total.right(level), total.truth - total.truth_nested),
        );
    }
    println!(
        "\ntruth edges: {} ({} from module-level code, {} naming a nested function); \
         {instantiations} calls of a class without `__init__` linked to the class, not scored",
        total.truth, total.truth_module, total.truth_nested
    );
    println!("\n| category | edges | precision ≤ scoped | recall ≤ scoped | precision, all | recall, all |");
    println!("|---|---|---|---|---|---|");
    for (category, s) in &by_category {
        println!(
            "| {category} | {} | {} | {} | {} | {} |",
            s.truth,
            ratio(s.right(Resolution::Scoped), s.found(Resolution::Scoped)),
            ratio(s.right(Resolution::Scoped), s.truth),
            ratio(
                s.right(Resolution::Ambiguous),
                s.found(Resolution::Ambiguous)
            ),
            ratio(s.right(Resolution::Ambiguous), s.truth),
        );
    }
}

/// Build time, peak memory and edges per level for one tree.
fn measure_tree(root: &Path) {
    let mut files = Vec::new();
    for file in walk(root) {
        let rel = file
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if rel.starts_with(".git/") {
            continue;
        }
        if Language::from_path(&rel).is_some() {
            if let Ok(text) = std::fs::read_to_string(&file) {
                files.push((rel, text));
            }
        }
    }
    let mut extractor = Extractor::new().expect("grammars");
    let start = std::time::Instant::now();
    let tree = source_tree(&mut extractor, &files);
    let parsed = start.elapsed();
    let start = std::time::Instant::now();
    let index = DefIndex::new(&tree);
    let mut per_level = [0usize; 4];
    let mut from_modules = 0usize;
    let mut unresolved = 0u32;
    let module_ids: BTreeSet<String> = tree
        .iter()
        .flat_map(|(path, f)| {
            f.facts
                .defs
                .iter()
                .filter(|d| d.qualname == diffidx_core::codegraph::MODULE_QUALNAME)
                .map(move |d| symbol_id(path, d.kind, &d.qualname, &d.sig))
        })
        .collect();
    let names: BTreeMap<String, String> = tree
        .iter()
        .flat_map(|(path, f)| {
            f.facts.defs.iter().map(move |d| {
                (
                    symbol_id(path, d.kind, &d.qualname, &d.sig),
                    format!("{path}:{}:{}", d.lines.0, d.qualname),
                )
            })
        })
        .collect();
    let mut dump = String::new();
    for path in tree.keys() {
        let edges = index.resolve_file(path);
        unresolved += edges.unresolved.values().sum::<u32>();
        for e in edges.edges.iter().filter(|e| e.kind == EdgeKind::Calls) {
            let name = |id: &str| names.get(id).cloned().unwrap_or_default();
            dump.push_str(&format!(
                "{}\t{}\t{}\t{path}:{}\n",
                e.resolution.as_str(),
                name(&e.from),
                name(&e.to),
                e.line
            ));
            per_level[at(e.resolution)] += 1;
            if module_ids.contains(&e.from) {
                from_modules += 1;
            }
        }
    }
    let resolved = start.elapsed();
    if let Ok(file) = std::env::var("BENCH_CALLGRAPH_DUMP") {
        std::fs::write(&file, &dump).expect("dump");
    }
    println!(
        "tree {} at {}: {} files; parse and facts {:.2} s, resolution {:.2} s ({:.2} s per 1,000 files), \
         peak memory {} MiB",
        root.display(),
        git_head(root),
        tree.len(),
        parsed.as_secs_f64(),
        resolved.as_secs_f64(),
        (parsed + resolved).as_secs_f64() * 1000.0 / tree.len().max(1) as f64,
        peak_mib(),
    );
    println!(
        "CALLS edges: exact {}, scoped {}, unique_name {}, ambiguous {} ({} from module code); \
         {} references unresolved\n",
        per_level[0], per_level[1], per_level[2], per_level[3], from_modules, unresolved
    );
}

/// The graph's input for `files` (path, text): each file of a language the
/// core reads, with its facts.
fn source_tree(
    extractor: &mut Extractor,
    files: &[(String, String)],
) -> BTreeMap<String, SourceFile> {
    let mut tree = BTreeMap::new();
    for (path, text) in files {
        let Some(language) = Language::from_path(path) else {
            continue;
        };
        if let Some(facts) = extractor.extract_facts(language, text, None).facts {
            let facts = Arc::new(facts);
            tree.insert(path.clone(), SourceFile { language, facts });
        }
    }
    tree
}

/// The process's peak resident memory (Linux), in MiB.
fn peak_mib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb / 1024)
}

/// The repository's files: `source` itself if it is a checkout, else the
/// directories `wanted` checked out of a clone of it in a temporary
/// directory (a snapshot may lack blobs the bench does not read).
fn checkout(source: &Path, wanted: &[&str]) -> PathBuf {
    if wanted.iter().all(|w| source.join(w).is_dir()) {
        return source.to_owned();
    }
    let name = source
        .to_string_lossy()
        .replace(|c: char| !c.is_alphanumeric(), "_");
    let dir = std::env::temp_dir().join(format!("diffidx-callgraph-{name}-{}", std::process::id()));
    let git = |args: &[&str], at: Option<&Path>| {
        let mut command = Command::new("git");
        command.args(args);
        if let Some(at) = at {
            command.current_dir(at);
        }
        let status = command.status().expect("git");
        assert!(status.success(), "git {args:?} failed");
    };
    let (from, to) = (source.to_string_lossy(), dir.to_string_lossy());
    git(&["clone", "--quiet", "--no-checkout", &from, &to], None);
    let mut args = vec!["checkout", "--quiet", "HEAD", "--"];
    args.extend(wanted);
    git(&args, Some(&dir));
    dir
}

fn git_head(dir: &Path) -> String {
    let out = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(dir)
        .output()
        .expect("git");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// The cases under `code` (`<category>/<case>/*.py`), each with the
/// `callgraph.json` at the same place under `truth`.
fn read_cases(code: &Path, truth: &Path) -> Vec<Case> {
    let mut cases = Vec::new();
    let mut categories: Vec<PathBuf> = list(code).into_iter().filter(|p| p.is_dir()).collect();
    categories.sort();
    for category in categories {
        let mut dirs: Vec<PathBuf> = list(&category).into_iter().filter(|p| p.is_dir()).collect();
        dirs.sort();
        for dir in dirs {
            let rel = dir.strip_prefix(code).unwrap();
            let Ok(json) = std::fs::read_to_string(truth.join(rel).join("callgraph.json")) else {
                continue;
            };
            let graph: BTreeMap<String, Vec<String>> =
                serde_json::from_str(&json).expect("callgraph.json");
            let mut files = Vec::new();
            for file in walk(&dir) {
                let rel = file
                    .strip_prefix(&dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                if rel.ends_with(".py") {
                    files.push((rel, std::fs::read_to_string(&file).unwrap_or_default()));
                }
            }
            let modules: BTreeSet<String> = files.iter().map(|(p, _)| module_name(p)).collect();
            let internal = |name: &str| {
                modules.iter().any(|m| {
                    name == m || (name.starts_with(m.as_str()) && name[m.len()..].starts_with('.'))
                })
            };
            let truth = graph
                .iter()
                .flat_map(|(from, tos)| tos.iter().map(move |to| (from.clone(), to.clone())))
                .filter(|(from, to)| internal(from) && internal(to))
                .collect();
            cases.push(Case {
                category: file_name(&category),
                name: file_name(&dir),
                files,
                truth,
            });
        }
    }
    cases
}

fn list(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default()
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in list(dir) {
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

fn file_name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// `a/b.py` → `a.b`; `a/__init__.py` → `a`.
fn module_name(path: &str) -> String {
    let stem = path.trim_end_matches(".py").replace('/', ".");
    match stem.strip_suffix(".__init__") {
        Some(package) => package.to_owned(),
        None => stem,
    }
}

fn resolve_case(extractor: &mut Extractor, case: &Case) -> Found {
    let tree = source_tree(extractor, &case.files);
    // Every node's id, by PyCG's name for it.
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    let mut classes: BTreeSet<String> = BTreeSet::new();
    let mut modules = BTreeSet::new();
    for (path, file) in &tree {
        let module = module_name(path);
        modules.insert(module.clone());
        for def in &file.facts.defs {
            let id = symbol_id(path, def.kind, &def.qualname, &def.sig);
            let name = if def.qualname == diffidx_core::codegraph::MODULE_QUALNAME {
                module.clone()
            } else {
                format!("{module}.{}", def.qualname)
            };
            if def.kind == diffidx_core::SymbolKind::Class {
                classes.insert(id.clone());
            }
            names.insert(id, name);
        }
    }
    pycg_lambda_names(&mut names);
    let index = DefIndex::new(&tree);
    let mut edges: BTreeMap<Pair, Resolution> = BTreeMap::new();
    let mut instantiations = 0;
    for path in tree.keys() {
        for edge in index.resolve_file(path).edges {
            if edge.kind != EdgeKind::Calls {
                continue;
            }
            if classes.contains(&edge.to) {
                instantiations += 1;
                continue;
            }
            let (Some(from), Some(to)) = (names.get(&edge.from), names.get(&edge.to)) else {
                continue;
            };
            let level = edges
                .entry((from.clone(), to.clone()))
                .or_insert(edge.resolution);
            *level = (*level).min(edge.resolution);
        }
    }
    Found {
        edges,
        nodes: names.into_values().chain(modules.iter().cloned()).collect(),
        modules,
        instantiations,
    }
}

/// Renames lambdas from diffidx's names (`<lambda:LINE:COL>`, by position)
/// to PyCG's (`<lambdaN>`, numbered from 1 in order within what holds them).
fn pycg_lambda_names(names: &mut BTreeMap<String, String>) {
    let position = |segment: &str| -> Option<(u32, u32)> {
        let (line, column) = segment
            .strip_prefix("<lambda:")?
            .strip_suffix('>')?
            .split_once(':')?;
        Some((line.parse().ok()?, column.parse().ok()?))
    };
    // Per holder (the name's segments before the lambda), its lambdas.
    let mut held: BTreeMap<String, BTreeSet<(u32, u32)>> = BTreeMap::new();
    for name in names.values() {
        let segments: Vec<&str> = name.split('.').collect();
        for (i, segment) in segments.iter().enumerate() {
            if let Some(at) = position(segment) {
                held.entry(segments[..i].join(".")).or_default().insert(at);
            }
        }
    }
    for name in names.values_mut() {
        let segments: Vec<&str> = name.split('.').collect();
        let renamed: Vec<String> = segments
            .iter()
            .enumerate()
            .map(|(i, segment)| match position(segment) {
                Some(at) => {
                    let n = held[&segments[..i].join(".")].range(..at).count() + 1;
                    format!("<lambda{n}>")
                }
                None => (*segment).to_owned(),
            })
            .collect();
        *name = renamed.join(".");
    }
}

#[derive(Default)]
struct Score {
    truth: usize,
    truth_module: usize,
    truth_nested: usize,
    /// Per level (index in `Resolution::ALL`): edges found, right ones,
    /// right ones from module-level code.
    found: [usize; 4],
    right: [usize; 4],
    right_module: [usize; 4],
}

fn at(level: Resolution) -> usize {
    Resolution::ALL.iter().position(|l| *l == level).unwrap()
}

impl Score {
    fn of(case: &Case, found: &Found) -> Score {
        let mut s = Score {
            truth: case.truth.len(),
            ..Score::default()
        };
        for (from, to) in &case.truth {
            if found.modules.contains(from) {
                s.truth_module += 1;
            }
            if !found.nodes.contains(from) || !found.nodes.contains(to) {
                s.truth_nested += 1;
            }
        }
        for (pair, level) in &found.edges {
            for l in at(*level)..4 {
                s.found[l] += 1;
                if case.truth.contains(pair) {
                    s.right[l] += 1;
                    if found.modules.contains(&pair.0) {
                        s.right_module[l] += 1;
                    }
                }
            }
        }
        s
    }

    fn add(&mut self, o: &Score) {
        self.truth += o.truth;
        self.truth_module += o.truth_module;
        self.truth_nested += o.truth_nested;
        for l in 0..4 {
            self.found[l] += o.found[l];
            self.right[l] += o.right[l];
            self.right_module[l] += o.right_module[l];
        }
    }

    fn found(&self, level: Resolution) -> usize {
        self.found[at(level)]
    }

    fn right(&self, level: Resolution) -> usize {
        self.right[at(level)]
    }

    fn right_module(&self, level: Resolution) -> usize {
        self.right_module[at(level)]
    }

    fn missed(&self, level: Resolution) -> usize {
        self.truth - self.right(level)
    }

    fn wrong(&self, level: Resolution) -> usize {
        self.found(level) - self.right(level)
    }
}

fn print_case(case: &Case, found: &Found) {
    println!("\n## {}/{}", case.category, case.name);
    for pair in &case.truth {
        match found.edges.get(pair) {
            Some(level) if *level <= Resolution::Scoped => {}
            Some(level) => println!("  weak    {} -> {} ({})", pair.0, pair.1, level.as_str()),
            None => println!("  missed  {} -> {}", pair.0, pair.1),
        }
    }
    for (pair, level) in &found.edges {
        if !case.truth.contains(pair) {
            println!("  wrong   {} -> {} ({})", pair.0, pair.1, level.as_str());
        }
    }
}

fn ratio(a: usize, b: usize) -> String {
    if b == 0 {
        "–".to_owned()
    } else {
        format!("{:.2} ({a}/{b})", a as f64 / b as f64)
    }
}
