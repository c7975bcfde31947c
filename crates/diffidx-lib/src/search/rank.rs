//! Ranking a question: the symbols an issue, a stack trace or a sentence
//! is about.
//!
//! A name query has one right answer and the name tier finds it. A question
//! ("redirects lose the original method", an issue with a traceback) has
//! evidence spread over several signals, none enough alone, so each is
//! scored on its own, scaled to its best candidate, and the scores are added
//! with weights chosen by measurement (`cargo bench --bench localization`;
//! docs/search.md has the table and the evidence):
//!
//! - **text**: BM25 over the symbols' words for all the question's terms,
//!   over their names alone, for its strong terms, and for the words of its
//!   code blocks ([`Question`]);
//! - **names**: the symbol's own name is a word of the question (the less
//!   common the name, the more it says), or its `Class.method` a dotted name
//!   of it;
//! - **paths**: a traceback frame runs through the symbol, or the
//!   question names its file;
//! - **files**: the symbol's file, as one document, matches the question
//!   (BM25 over whole files: an issue describes a module as much as a
//!   function);
//! - **priors**: a container (class, interface, ...) ranks below the
//!   members that hold the code, a longer symbol a little above a one-liner;
//! - **tests**: code in test files ranks down, unless the question names a
//!   test file (a question about behaviour is answered by the code under
//!   test; the test code an issue quotes reproduces it);
//! - **graph**: the callees of the best hits, and the members of a class
//!   among them, take a share of their score (off by default: measured,
//!   it lowered every figure but Acc@10; [`GRAPH_SHARES`]).

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::question::Question;
use super::text::{Bag, Form};
use super::{FileHit, SearchAnswer, SearchQuery, Searcher, Tier, Why};
use crate::store::{Reader, StoreError};

/// The signals of a question's ranking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    Text,
    Names,
    Paths,
    Files,
    Priors,
    Tests,
    Graph,
    /// The semantic index's similarity (only when its vectors are given;
    /// not in [`Signal::ALL`]).
    Vectors,
}

impl Signal {
    pub const ALL: [Signal; 7] = [
        Signal::Text,
        Signal::Names,
        Signal::Paths,
        Signal::Files,
        Signal::Priors,
        Signal::Tests,
        Signal::Graph,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Signal::Text => "text",
            Signal::Names => "names",
            Signal::Paths => "paths",
            Signal::Files => "files",
            Signal::Priors => "priors",
            Signal::Tests => "tests",
            Signal::Graph => "graph",
            Signal::Vectors => "vectors",
        }
    }
}

/// The weights of a question's ranking (the defaults are the bench's best;
/// docs/search.md). Read from JSON with the defaults for what is left out
/// (the bench's `BENCH_LOCALIZATION_VARIANTS`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RankParams {
    /// BM25 for all terms, for all terms over names alone, for the strong
    /// terms, for the terms of code blocks.
    pub text: [f64; 4],
    /// An own name that is a strong or code word of the question; one that
    /// is a word of its prose only (a share of the first); a `Class.method`
    /// in a dotted name.
    pub names: [f64; 3],
    /// A traceback frame's function in its file; a file named by its stem.
    pub paths: [f64; 2],
    /// The file's BM25 for all terms, and for the strong terms; the sum of
    /// the scores of the file's best few symbols.
    pub files: [f64; 3],
    /// How many of a file's best symbols its sum counts.
    pub file_best: usize,
    /// What a container keeps of its score; how much size adds.
    pub priors: [f64; 2],
    /// What a symbol in a test file keeps of its score.
    pub tests: f64,
    /// Whether a first line that says "test" or "tests" lifts the test-file
    /// prior (as naming a test file does).
    pub title_tests: bool,
    /// The semantic index's similarity, when vectors are given.
    pub vectors: f64,
    /// Its weight in the ranking the files are read from, when that is not
    /// `vectors` (`None`: the same).
    pub file_vectors: Option<f64>,
    /// The share of a hit's score its callees take, and a class's members.
    pub graph: [f64; 2],
    /// The best hits whose neighbours take a share.
    pub graph_top: usize,
    /// BM25 for the terms of the first line, over symbols and over files.
    pub title: [f64; 2],
    /// How many hits each BM25 ranking gives.
    pub candidates: usize,
    /// How the question's terms meet the index's: as written or by stems.
    pub form: Form,
    /// BM25 for the question's adjacent word pairs, over the pairs of
    /// parts in symbols' names and in their words.
    pub pairs: [f64; 2],
}

impl Default for RankParams {
    fn default() -> Self {
        RankParams {
            text: [1.0, 0.5, 1.0, 0.25],
            names: [0.25, 0.5, 1.0],
            paths: [1.0, 0.5],
            files: [1.0, 1.0, 0.0],
            file_best: 3,
            priors: [0.5, 0.5],
            tests: 0.3,
            title_tests: true,
            vectors: 0.5,
            // Measured on the localization bench's instances with vectors:
            // functions rank best at 0.5, files at 1 (docs/search.md).
            file_vectors: Some(1.0),
            // Measured on: with the call graph the dev set's function
            // Acc@5 was 42.7, without it 44.6 (docs/search.md).
            graph: [0.0, 0.0],
            graph_top: 20,
            // Measured on the localization bench (docs/search.md, The
            // title): 1 and 1 lift every figure; 2 lowers file Acc@1.
            title: [1.0, 1.0],
            candidates: 200,
            form: Form::Written,
            pairs: [0.0, 0.0],
        }
    }
}

impl RankParams {
    /// These weights with `signal` off (for `text`: BM25 for all terms
    /// only, so that something still ranks).
    pub fn without(mut self, signal: Signal) -> RankParams {
        match signal {
            Signal::Text => self.text = [1.0, 0.0, 0.0, 0.0],
            Signal::Names => self.names = [0.0; 3],
            Signal::Paths => self.paths = [0.0; 2],
            Signal::Files => self.files = [0.0; 3],
            Signal::Priors => self.priors = [1.0, 0.0],
            Signal::Tests => self.tests = 1.0,
            Signal::Graph => self.graph = [0.0; 2],
            Signal::Vectors => {
                self.vectors = 0.0;
                self.file_vectors = None;
            }
        }
        self
    }

    /// BM25 for all terms and `signal`, the others off (the graph at the
    /// shares it was measured with).
    pub fn only(signal: Signal) -> RankParams {
        let all = RankParams {
            graph: GRAPH_SHARES,
            ..RankParams::default()
        };
        let mut params = Signal::ALL.iter().fold(all.clone(), |p, &s| p.without(s));
        match signal {
            Signal::Text => params.text = all.text,
            Signal::Names => params.names = all.names,
            Signal::Paths => params.paths = all.paths,
            Signal::Files => params.files = all.files,
            Signal::Priors => params.priors = all.priors,
            Signal::Tests => params.tests = all.tests,
            Signal::Graph => params.graph = all.graph,
            Signal::Vectors => {
                params.vectors = all.vectors;
                params.file_vectors = all.file_vectors;
            }
        }
        params
    }
}

/// The graph's shares as measured (callees, members): off by default,
/// since they lowered the bench's figures (docs/search.md).
pub const GRAPH_SHARES: [f64; 2] = [0.1, 0.2];

/// Names too common to say which code is meant.
const GENERIC_NAMES: &[&str] = &[
    "__init__",
    "__call__",
    "__str__",
    "__repr__",
    "__eq__",
    "__hash__",
    "__new__",
    "__getattr__",
    "__getitem__",
    "main",
    "run",
    "get",
    "set",
    "test",
    "setup",
    "call",
    "name",
    "value",
    "data",
    "args",
    "new",
    "default",
    "from",
    "into",
    "clone",
    "fmt",
    "drop",
    "equals",
    "toString",
    "hashCode",
    "constructor",
    "String",
];

/// Kinds whose own text is their declaration, not their members' code.
const CONTAINERS: &[&str] = &[
    "class",
    "struct",
    "interface",
    "trait",
    "enum",
    "record",
    "namespace",
    "module",
    "union",
    "annotation",
];

/// One candidate's evidence.
#[derive(Debug, Clone, Default)]
struct Evidence {
    vectors: f64,
    text: f64,
    names: f64,
    paths: f64,
    files: f64,
    graph: f64,
}

/// A path's file name without its extension; a package's `__init__` is
/// its directory's name.
fn file_stem(path: &str) -> &str {
    let mut segments = path.rsplit('/');
    let file = segments.next().unwrap_or(path);
    let stem = file.split_once('.').map_or(file, |(s, _)| s);
    match stem {
        "__init__" | "mod" | "index" => segments.next().unwrap_or(stem),
        _ => stem,
    }
}

/// `long` ends with `short` at a `/` (or is it).
fn ends_at_slash(long: &str, short: &str) -> bool {
    !short.is_empty()
        && long.ends_with(short)
        && (long.len() == short.len() || long.as_bytes()[long.len() - short.len() - 1] == b'/')
}

/// A path named in a question (`/site-packages/pkg/mod.py`, `pkg/mod.py`)
/// is this repository's `path`: one ends with the other at a `/`, or they
/// share their last two segments (an installed copy elsewhere).
fn names_file(named: &str, path: &str) -> bool {
    let last_two = |p: &str| -> String {
        let segments: Vec<&str> = p.rsplit('/').take(2).collect();
        segments.into_iter().rev().collect::<Vec<_>>().join("/")
    };
    ends_at_slash(named, path)
        || ends_at_slash(path, named)
        || (named.contains('/') && path.contains('/') && last_two(named) == last_two(path))
}

/// A test file by the conventions of the languages indexed: a `test`,
/// `tests`, `testing` or `__tests__` directory, or a file named `test_*`,
/// `*_test.*`, `*.test.*`, `*.spec.*`, `*Test(s).*`, `conftest.py`.
pub fn is_test_path(path: &str) -> bool {
    let mut segments = path.split('/');
    let file = segments.next_back().unwrap_or_default();
    if segments.any(|d| matches!(d, "test" | "tests" | "testing" | "__tests__")) {
        return true;
    }
    let name = file.split('.').next().unwrap_or_default();
    name.starts_with("test_")
        || name.ends_with("_test")
        || name.ends_with("Test")
        || name.ends_with("Tests")
        || file.contains(".test.")
        || file.contains(".spec.")
        || file == "conftest.py"
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

impl Searcher {
    /// A question's ranking ([module docs](self)).
    pub(super) fn rank_question(
        &self,
        reader: &Reader<'_>,
        query: &SearchQuery,
        params: &RankParams,
        vectors: &[(String, f32)],
    ) -> Result<SearchAnswer, StoreError> {
        let q = Question::read(&query.query);
        let entries = self.names.entries();
        let keep = |i: usize| query.keeps(&entries[i]);
        let mut answer = SearchAnswer::default();
        let mut evidence: HashMap<usize, Evidence> = HashMap::new();
        let mut file_scores: HashMap<String, f64> = HashMap::new();

        // Text, and files as documents: each ranking scaled to its best.
        match &self.text {
            Ok(text) => {
                let search = |terms: &[(String, f32)], bag: Bag| {
                    text.search_weighted(terms, bag, params.form, params.candidates)
                        .map_err(|e| StoreError::Query {
                            what: "search the text index",
                            reason: e.to_string(),
                        })
                };
                let symbol_rankings = [
                    (&q.terms, Bag::Symbols, params.text[0]),
                    (&q.terms, Bag::Names, params.text[1]),
                    (&q.strong, Bag::Symbols, params.text[2]),
                    (&q.code, Bag::Symbols, params.text[3]),
                    (&q.title, Bag::Symbols, params.title[0]),
                    (&q.pairs, Bag::NamePairs, params.pairs[0]),
                    (&q.pairs, Bag::WordPairs, params.pairs[1]),
                ];
                for (terms, bag, weight) in symbol_rankings {
                    if weight == 0.0 {
                        continue;
                    }
                    let found = search(terms, bag)?;
                    let top = f64::from(found.first().map_or(1.0, |h| h.1).max(f32::EPSILON));
                    for (id, score) in found {
                        if let Some(i) = self.names.position(&id).filter(|&i| keep(i)) {
                            evidence.entry(i).or_default().text += weight * f64::from(score) / top;
                        }
                    }
                }
                for (terms, weight) in [
                    (&q.terms, params.files[0]),
                    (&q.strong, params.files[1]),
                    (&q.title, params.title[1]),
                ] {
                    if weight == 0.0 {
                        continue;
                    }
                    let found = search(terms, Bag::Files)?;
                    let top = f64::from(found.first().map_or(1.0, |h| h.1).max(f32::EPSILON));
                    for (id, score) in found {
                        if let Some(path) = id.strip_prefix("file:") {
                            *file_scores.entry(path.to_owned()).or_default() +=
                                weight * f64::from(score) / top;
                        }
                    }
                }
            }
            Err(why) => answer.text_unavailable = Some(why.clone()),
        }

        // Vectors: the semantic index's similarity, from its worst to its
        // best candidate (cosines of one model bunch together).
        if params.vectors > 0.0 && !vectors.is_empty() {
            let found = &vectors[..vectors.len().min(params.candidates)];
            let best = found.iter().map(|v| v.1).fold(f32::MIN, f32::max);
            let worst = found.iter().map(|v| v.1).fold(f32::MAX, f32::min);
            let span = f64::from((best - worst).max(f32::EPSILON));
            for (id, score) in found {
                if let Some(i) = self.names.position(id).filter(|&i| keep(i)) {
                    evidence.entry(i).or_default().vectors +=
                        params.vectors * f64::from(score - worst) / span;
                }
            }
        }

        // Names: an own name among the question's words, the less common
        // the more it says; a `Class.method` among its dotted names.
        if params.names.iter().any(|&w| w > 0.0) {
            let pairs: HashSet<String> = q
                .dotted
                .iter()
                .flat_map(|d| {
                    let segments: Vec<&str> = d.split('.').collect();
                    segments.windows(2).map(|w| w.join(".")).collect::<Vec<_>>()
                })
                .collect();
            for word in &q.words {
                if word.len() < 3 || GENERIC_NAMES.contains(&word.as_str()) {
                    continue;
                }
                let named = self.names.with_own_name(word);
                let spread = (named.len() as f64).sqrt().max(1.0);
                let weight = match q.code_words.contains(word) {
                    true => params.names[0],
                    false => params.names[0] * params.names[1],
                };
                for &i in named.iter().filter(|&&i| keep(i)) {
                    let e = &entries[i];
                    let qual = diffidx_core::qualname::split_twin(&e.qualname).0;
                    let segments: Vec<&str> =
                        qual.split(['.', ':']).filter(|s| !s.is_empty()).collect();
                    let pair = segments.len() >= 2
                        && pairs.contains(&segments[segments.len() - 2..].join("."));
                    evidence.entry(i).or_default().names +=
                        weight / spread + if pair { params.names[2] } else { 0.0 };
                }
            }
        }

        // Paths: traceback frames, and files named by their stem.
        if params.paths.iter().any(|&w| w > 0.0) {
            let mut stems: HashMap<&str, usize> = HashMap::new();
            let mut paths: Vec<&str> = Vec::new();
            for e in entries.iter().filter(|e| !e.deleted) {
                if paths.last() != Some(&e.path.as_str()) {
                    paths.push(&e.path);
                }
            }
            paths.sort_unstable();
            paths.dedup();
            for p in &paths {
                *stems.entry(file_stem(p)).or_default() += 1;
            }
            let stem_score: HashMap<&str, f64> = paths
                .iter()
                .filter_map(|p| {
                    let stem = file_stem(p);
                    (stem.len() >= 4 && q.words.contains(stem))
                        .then(|| (*p, 1.0 / (stems[stem] as f64).sqrt()))
                })
                .collect();
            for (i, e) in entries.iter().enumerate() {
                if !keep(i) {
                    continue;
                }
                let in_frame = q
                    .frames
                    .iter()
                    .any(|f| f.function == e.name && names_file(&f.path, &e.path));
                let stem = stem_score.get(e.path.as_str()).copied().unwrap_or(0.0);
                let score =
                    params.paths[0] * f64::from(u8::from(in_frame)) + params.paths[1] * stem;
                if score > 0.0 && (in_frame || evidence.contains_key(&i)) {
                    evidence.entry(i).or_default().paths += score;
                }
            }
        }
        let about_tests = (params.title_tests && Question::title_speaks_of_tests(&query.query))
            || q.paths
                .iter()
                .any(|p| is_test_path(p) && entries.iter().any(|e| names_file(p, &e.path)));

        // Files as documents.
        let best_file = file_scores.values().copied().fold(f64::EPSILON, f64::max);
        for (&i, ev) in evidence.iter_mut() {
            ev.files = file_scores.get(&entries[i].path).map_or(0.0, |f| {
                f / best_file * (params.files[0] + params.files[1]) / 2.0
            });
        }

        let total = |i: usize, ev: &Evidence| -> f64 {
            let e = &entries[i];
            let mut sum = ev.text + ev.names + ev.paths + ev.files + ev.vectors;
            if CONTAINERS.contains(&e.kind.as_str()) {
                sum *= params.priors[0];
            }
            let lines = f64::from((e.end_line + 1).saturating_sub(e.start_line).max(1));
            sum *= 1.0 + params.priors[1] * lines.log2().min(10.0) / 10.0;
            if !about_tests && is_test_path(&e.path) {
                sum *= params.tests;
            }
            sum + ev.graph
        };
        let rank = |evidence: &HashMap<usize, Evidence>| {
            let mut ranked: Vec<(usize, f64)> =
                evidence.iter().map(|(&i, ev)| (i, total(i, ev))).collect();
            ranked.sort_by(|a, b| {
                b.1.total_cmp(&a.1)
                    .then(entries[a.0].tie_order(&entries[b.0]))
            });
            ranked
        };
        let mut ranked = rank(&evidence);

        // Files, as the sum of their best few symbols: a file that many of
        // the question's words hit ranks its symbols up.
        if params.files[2] > 0.0 {
            let mut per_file: HashMap<&str, (usize, f64)> = HashMap::new();
            for &(i, score) in &ranked {
                let slot = per_file.entry(entries[i].path.as_str()).or_default();
                if slot.0 < params.file_best {
                    *slot = (slot.0 + 1, slot.1 + score);
                }
            }
            let best = per_file.values().map(|v| v.1).fold(f64::EPSILON, f64::max);
            for (&i, ev) in evidence.iter_mut() {
                if let Some(&(_, sum)) = per_file.get(entries[i].path.as_str()) {
                    ev.files += params.files[2] * sum / best;
                }
            }
            ranked = rank(&evidence);
        }

        // Graph: the callees of the best hits, and a class's members.
        if params.graph.iter().any(|&w| w > 0.0) && params.graph_top > 0 {
            let top: Vec<(usize, f64)> = ranked.iter().take(params.graph_top).copied().collect();
            let mut shares: HashMap<usize, f64> = HashMap::new();
            for (hit, other, share) in self.neighbours(reader, &top, params)? {
                if keep(other) && other != hit {
                    let slot = shares.entry(other).or_default();
                    *slot = slot.max(share);
                }
            }
            for (i, share) in shares {
                evidence.entry(i).or_default().graph = share;
            }
            ranked = rank(&evidence);
        }

        // Files, by their best symbol.
        let mut files: Vec<FileHit> = Vec::new();
        let mut seen: HashSet<&str> = HashSet::new();
        let best = ranked.first().map_or(1.0, |h| h.1).max(f64::EPSILON);
        for &(i, score) in &ranked {
            if seen.insert(entries[i].path.as_str()) {
                files.push(FileHit {
                    path: entries[i].path.clone(),
                    score: round(score / best),
                });
            }
        }
        files.truncate(query.limit.max(1));
        answer.files = files;
        // Files read off a ranking that weighs the vectors otherwise.
        if let Some(weight) = params.file_vectors.filter(|&w| w != params.vectors) {
            if params.vectors > 0.0 && !vectors.is_empty() {
                let for_files = RankParams {
                    vectors: weight,
                    file_vectors: None,
                    ..params.clone()
                };
                answer.files = self
                    .rank_question(reader, query, &for_files, vectors)?
                    .files;
            }
        }

        ranked.truncate(query.limit.max(1));
        let tiered: Vec<(usize, f64, Tier)> = ranked
            .iter()
            .map(|&(i, score)| {
                let ev = &evidence[&i];
                let tier = if ev.names > 0.0 {
                    Tier::Name
                } else if ev.text > 0.0 {
                    Tier::Text
                } else {
                    Tier::Graph
                };
                (i, score / best, tier)
            })
            .collect();
        answer.hits = self.hits(reader, tiered)?;
        let matched = match &self.text {
            Ok(text) => {
                let ids: Vec<&str> = answer.hits.iter().map(|h| h.id.as_str()).collect();
                text.matched_terms(&ids, &q.telling_terms())
                    .map_err(|e| StoreError::Query {
                        what: "search the text index",
                        reason: e.to_string(),
                    })?
            }
            Err(_) => HashMap::new(),
        };
        for (hit, (i, _)) in answer.hits.iter_mut().zip(&ranked) {
            let ev = &evidence[i];
            let signals: BTreeMap<String, f64> = [
                (Signal::Text, ev.text),
                (Signal::Names, ev.names),
                (Signal::Paths, ev.paths),
                (Signal::Files, ev.files),
                (Signal::Graph, ev.graph),
                (Signal::Vectors, ev.vectors),
            ]
            .into_iter()
            .filter(|(_, v)| *v > 0.0)
            .map(|(s, v)| (s.as_str().to_owned(), round(v)))
            .collect();
            hit.why = Some(Why {
                signals,
                terms: matched.get(hit.id.as_str()).cloned().unwrap_or_default(),
            });
        }
        Ok(answer)
    }

    /// The callees of `top` (each with a share of the hit's score: an
    /// ambiguous call of up to 5 candidates counts, one in another file
    /// half), and the members of a container among them.
    fn neighbours(
        &self,
        reader: &Reader<'_>,
        top: &[(usize, f64)],
        params: &RankParams,
    ) -> Result<Vec<(usize, usize, f64)>, StoreError> {
        let entries = self.names.entries();
        let score: HashMap<usize, f64> = top.iter().copied().collect();
        let mut out = Vec::new();
        if params.graph[0] > 0.0 {
            let ids: Vec<String> = top.iter().map(|(i, _)| entries[*i].id.clone()).collect();
            let levels: Vec<String> = diffidx_core::codegraph::Resolution::ALL
                .iter()
                .map(|r| r.as_str().to_owned())
                .collect();
            let edges = reader.edges(
                &ids,
                "CALLS",
                crate::store::codegraph::Direction::Out,
                &levels,
            )?;
            for edge in edges.iter().filter(|e| e.candidates <= 5) {
                if let (Some(at), Some(other)) = (
                    self.names.position(&edge.at),
                    self.names.position(&edge.other.id),
                ) {
                    let apart = if entries[at].path == entries[other].path {
                        1.0
                    } else {
                        0.5
                    };
                    out.push((at, other, params.graph[0] * apart * score[&at]));
                }
            }
        }
        if params.graph[1] > 0.0 {
            for &(i, s) in top {
                let e = &entries[i];
                if !CONTAINERS.contains(&e.kind.as_str()) {
                    continue;
                }
                let prefix = format!("{}.", e.qualname);
                for j in self.names.in_file(&e.path) {
                    if entries[j].qualname.starts_with(&prefix) {
                        out.push((i, j, params.graph[1] * s));
                    }
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_files_by_every_convention() {
        for path in [
            "tests/a.py",
            "pkg/testing/b.py",
            "src/test_x.py",
            "x_test.go",
            "a/b.test.ts",
            "a/b.spec.js",
            "src/FooTest.java",
            "FooTests.cs",
            "conftest.py",
        ] {
            assert!(is_test_path(path), "{path}");
        }
        for path in [
            "src/_pytest/python.py",
            "latest.py",
            "contest.py",
            "src/testament.rs",
        ] {
            assert!(!is_test_path(path), "{path}");
        }
    }

    #[test]
    fn named_files_match_installed_copies_and_stems_read_packages() {
        assert!(names_file(
            "/usr/lib/python3/site-packages/requests/sessions.py",
            "requests/sessions.py"
        ));
        assert!(names_file(
            "requests/sessions.py",
            "src/requests/sessions.py"
        ));
        assert!(names_file(
            "/opt/venv/lib/requests/sessions.py",
            "src/requests/sessions.py"
        ));
        assert!(!names_file("requests/models.py", "requests/sessions.py"));
        assert!(!names_file("sessions.py", "old_sessions.py"));
        assert_eq!(file_stem("xarray/core/variable.py"), "variable");
        assert_eq!(file_stem("requests/__init__.py"), "requests");
        assert_eq!(file_stem("src/store/mod.rs"), "store");
    }

    #[test]
    fn without_and_only_switch_signals() {
        let all = RankParams::default();
        assert_eq!(all.clone().without(Signal::Tests).tests, 1.0);
        assert_eq!(all.clone().without(Signal::Names).names, [0.0; 3]);
        let names = RankParams::only(Signal::Names);
        assert_eq!(names.names, all.names);
        assert_eq!(RankParams::only(Signal::Graph).graph, GRAPH_SHARES);
        assert_eq!(names.text, [1.0, 0.0, 0.0, 0.0]);
        assert_eq!(names.graph, [0.0; 2]);
        assert_eq!(names.tests, 1.0);
    }
}
