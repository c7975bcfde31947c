//! Fusion weights fitted to the repository.
//!
//! How much the vectors should count depends on how well the model reads
//! the code: measured on the same task, the general-purpose model beats
//! BM25 on fd's Rust and loses to it on Polly's C#, and no fixed weighting
//! beat both rankings on both repositories (README, Performance). But every
//! indexed repository carries the task with it: a commit's subject is a
//! question ("retry when the circuit is half open") whose answer is the
//! members the commit modified. So when the semantic index is made, the
//! weights are chosen on the repository's own history — on half of its
//! commits, and measured on the other half, so the figures it reports are
//! not those it was chosen by — and `search --semantic` and `context
//! --query` use them.
//!
//! The result lives in `.git/diffidx/semantic/fusion.json`, of one model.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{SemanticError, SemanticSearcher};
use crate::search::{candidates, HybridParams, SearchQuery, Searcher};
use crate::state::StateDir;
use crate::store::Reader;

/// The weightings tried (names, BM25, vectors); the first is the default,
/// which wins ties.
pub const GRID: [[f64; 3]; 6] = [
    [1.0, 2.0, 1.0],
    [1.0, 1.0, 1.0],
    [1.0, 4.0, 1.0],
    [1.0, 1.0, 2.0],
    [1.0, 2.0, 2.0],
    [2.0, 2.0, 1.0],
];

/// The graph expansions tried: the callers and container of the best 3
/// hits, or none (expansion helps where hits lack context, and costs a
/// slot in the first ten where they do not).
pub const EXPANSIONS: [usize; 2] = [3, 0];

/// The variants tried, the default first.
pub fn variants() -> Vec<HybridParams> {
    GRID.iter()
        .flat_map(|&weights| {
            EXPANSIONS.iter().map(move |&expand_top| HybridParams {
                weights,
                expand_top,
                ..HybridParams::default()
            })
        })
        .collect()
}

/// Fewer task queries than this: the defaults stay (a fit on a handful of
/// commits would only fit noise).
pub const MIN_QUERIES: usize = 40;
/// The newest commits the task takes.
pub const MAX_QUERIES: usize = 300;

/// Member kinds: what a commit subject is about when it names code (the
/// answers of the retrieval task, here and in the search and semantic
/// benches).
pub const MEMBER_KINDS: &[&str] = &[
    "method",
    "constructor",
    "property",
    "function",
    "operator",
    "indexer",
    "event",
    "field",
    "const",
    "static",
    "macro",
    "destructor",
    "delegate",
];

/// One question of the task and its answers.
#[derive(Debug, Clone)]
pub struct TaskQuery {
    pub subject: String,
    pub modified: HashSet<String>,
}

/// Acc@5 and Acc@10, in percent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Accuracy {
    pub at5: f64,
    pub at10: f64,
}

/// `fusion.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fitted {
    /// The embedding model (`ModelPin::label`) the fit is of.
    pub model: String,
    pub weights: [f64; 3],
    /// The best hits whose callers and container join (0: none).
    pub expand_top: usize,
    /// Queries fitted on, and measured on (the other half).
    pub fitted_on: usize,
    pub measured_on: usize,
    /// On the measured half: BM25 alone, vectors alone, the default
    /// weights and the fitted ones.
    pub bm25: Accuracy,
    pub vectors: Accuracy,
    pub default: Accuracy,
    pub fitted: Accuracy,
}

// Percentages and weights are finite numbers (never NaN), so equality is
// an equivalence, as the index report (which derives `Eq`) needs.
impl Eq for Accuracy {}
impl Eq for Fitted {}

/// `fitted on N commits of this history: names/BM25/vectors …; on M
/// others, Acc@5/@10: …` (what `index` and the bench print).
impl std::fmt::Display for Fitted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [n, t, v] = self.weights;
        let pair = |a: &Accuracy| format!("{:.1}/{:.1}%", a.at5, a.at10);
        write!(
            f,
            "fitted on {} commits of this history: names/BM25/vectors {n}/{t}/{v}, graph \
             expansion of the top {}; on {} others, Acc@5/@10: BM25 {}, vectors {}, default {}, \
             fitted {}",
            self.fitted_on,
            self.expand_top,
            self.measured_on,
            pair(&self.bm25),
            pair(&self.vectors),
            pair(&self.default),
            pair(&self.fitted)
        )
    }
}

impl Fitted {
    fn path(state: &StateDir) -> PathBuf {
        state.semantic().join("fusion.json")
    }

    /// The fit of `model`, if there is one.
    pub fn read(state: &StateDir, model: &str) -> Option<Fitted> {
        let bytes = std::fs::read(Self::path(state)).ok()?;
        serde_json::from_slice::<Fitted>(&bytes)
            .ok()
            .filter(|f| f.model == model)
    }

    fn write(&self, state: &StateDir) -> Result<(), SemanticError> {
        let path = Self::path(state);
        let failed = |reason: String| SemanticError::Index {
            path: path.clone(),
            reason,
        };
        let bytes = serde_json::to_vec_pretty(self).map_err(|e| failed(e.to_string()))?;
        let part = path.with_extension("json.part");
        std::fs::write(&part, bytes).map_err(|e| failed(e.to_string()))?;
        std::fs::rename(&part, &path).map_err(|e| failed(e.to_string()))
    }
}

/// The fusion `search --semantic` uses: the fitted weights and expansion of
/// `model`, else the defaults.
pub fn params(state: &StateDir, model: &str) -> HybridParams {
    let mut params = HybridParams::default();
    if let Some(fitted) = Fitted::read(state, model) {
        params.weights = fitted.weights;
        params.expand_top = fitted.expand_top;
    }
    params
}

/// The task from the store: the newest commits (at most `limit`) with a
/// subject and a modified member.
pub fn task(reader: &Reader<'_>, limit: usize) -> Result<Vec<TaskQuery>, SemanticError> {
    let mut by_commit: BTreeMap<(i64, String), TaskQuery> = BTreeMap::new();
    for m in reader.modifications()? {
        if !MEMBER_KINDS.contains(&m.kind.as_str()) || m.subject.trim().is_empty() {
            continue;
        }
        by_commit
            .entry((-m.time, m.commit))
            .or_insert_with(|| TaskQuery {
                subject: m.subject,
                modified: HashSet::new(),
            })
            .modified
            .insert(m.symbol);
    }
    Ok(by_commit.into_values().take(limit).collect())
}

/// Where the first answer of `query` is in `ids`: counts for Acc@5, Acc@10.
fn hits(ids: &[String], query: &TaskQuery) -> (usize, usize) {
    let rank = ids.iter().position(|id| query.modified.contains(id));
    (
        usize::from(rank.is_some_and(|r| r < 5)),
        usize::from(rank.is_some_and(|r| r < 10)),
    )
}

/// Fits the weights on the even queries of the task and measures them on
/// the odd ones; `None` with too few queries.
pub fn fit(
    reader: &Reader<'_>,
    searcher: &Searcher,
    semantic: &mut SemanticSearcher,
    queries: &[TaskQuery],
) -> Result<Option<Fitted>, SemanticError> {
    if queries.len() < MIN_QUERIES {
        return Ok(None);
    }
    // Per query: hits of BM25, vectors, and each variant.
    let variants = variants();
    let mut counts: Vec<Vec<(usize, usize)>> = Vec::with_capacity(queries.len());
    for q in queries {
        let search = SearchQuery::everywhere(&q.subject, 10);
        let vectors = semantic.rank(&q.subject, candidates(10))?;
        let mut row = vec![
            hits(&searcher.text_ranking(&q.subject, 10)?, q),
            hits(
                &vectors
                    .iter()
                    .take(10)
                    .map(|(id, _)| id.clone())
                    .collect::<Vec<_>>(),
                q,
            ),
        ];
        for params in &variants {
            let params = *params;
            let ids: Vec<String> = searcher
                .hybrid_with(reader, &search, &vectors, params)?
                .hits
                .into_iter()
                .map(|h| h.id)
                .collect();
            row.push(hits(&ids, q));
        }
        counts.push(row);
    }
    let sum = |half: usize, column: usize| {
        counts
            .iter()
            .skip(half)
            .step_by(2)
            .fold((0, 0), |(a, b), row| (a + row[column].0, b + row[column].1))
    };
    // The best variant on the fitting half (Acc@5 + Acc@10; the earlier on
    // ties, so the default unless another does better).
    let best = (0..variants.len())
        .max_by_key(|&k| {
            let (a, b) = sum(0, 2 + k);
            (a + b, std::cmp::Reverse(k))
        })
        .unwrap_or(0);
    let measured_on = counts.len() / 2;
    let pct = |(a, b): (usize, usize)| Accuracy {
        at5: 100.0 * a as f64 / measured_on.max(1) as f64,
        at10: 100.0 * b as f64 / measured_on.max(1) as f64,
    };
    Ok(Some(Fitted {
        model: semantic.model().label(),
        weights: variants[best].weights,
        expand_top: variants[best].expand_top,
        fitted_on: counts.len() - measured_on,
        measured_on,
        bm25: pct(sum(1, 0)),
        vectors: pct(sum(1, 1)),
        default: pct(sum(1, 2)),
        fitted: pct(sum(1, 2 + best)),
    }))
}

/// Fits and keeps the weights of the semantic index's model unless a fit
/// of that model is there; `None` when there was nothing to do or too few
/// queries.
pub fn update(
    reader: &Reader<'_>,
    state: &StateDir,
    source: &super::EmbedSource,
) -> Result<Option<Fitted>, SemanticError> {
    // Checked by the index's pin: the model is loaded only to fit.
    let Some(index) = super::SemanticIndex::read(state) else {
        return Ok(None);
    };
    if Fitted::read(state, &index.model.label()).is_some() {
        return Ok(None);
    }
    let queries = task(reader, MAX_QUERIES)?;
    if queries.len() < MIN_QUERIES {
        return Ok(None);
    }
    let mut semantic = SemanticSearcher::load(state, source)?;
    let searcher = Searcher::load(reader, state)?;
    let fitted = fit(reader, &searcher, &mut semantic, &queries)?;
    if let Some(fitted) = &fitted {
        fitted.write(state)?;
    }
    Ok(fitted)
}
