//! `search`: symbols by name first, by the words of their code second.
//!
//! The upper tier ([`names`]) compares the query with the name of every
//! symbol the store holds, deleted ones included: people look for code by
//! a name they half remember, and an exact rule beats a ranking model
//! there. When it finds nothing strong, or when asked, the lower tier
//! ([`text`]) ranks symbols by BM25 over their name parts, signature, and
//! the identifiers, strings and comments of their code, which finds code
//! by what it does ("retry backoff jitter").
//!
//! The text index is derived from the store and the files at the code
//! graph's commit, and carries a stamp of the store state it was made from
//! ([`Stamp`]). Index runs update it for the files they touched; anything
//! else (a missing, torn or older index) is rebuilt, never served.

pub mod names;
pub mod parts;
pub mod question;
pub mod rank;
pub mod snippet;
pub mod text;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use diffidx_core::codegraph::FileFacts;
use diffidx_core::symbol::symbol_id;
use diffidx_core::{Language, SymbolDiffer};
use serde::{Deserialize, Serialize};

use crate::state::StateDir;
pub use crate::store::{DeletedIn, SymbolEntry};
use crate::store::{Reader, Store, StoreError};

pub use names::NameIndex;
pub use question::Question;
pub use rank::{RankParams, Signal};
pub use text::{Bag, TextDoc, TextIndex, TextIndexError, TextReader};

/// Changes when what the text index holds changes meaning: an older index
/// is rebuilt.
pub const SEARCH_VERSION: &str = "2";

/// The default number of results.
pub const DEFAULT_LIMIT: usize = 20;

/// Text-tier hits a query reads beyond its limit, for the filters.
const TEXT_OVERFETCH: usize = 5;

/// Which symbols a search considers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Those that exist (at the latest indexed commit that has them).
    #[default]
    Live,
    /// Those deleted.
    Deleted,
    All,
}

/// What `search` asks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchQuery {
    pub query: String,
    #[serde(default)]
    pub kind: Option<String>,
    /// A path prefix (a directory) or a whole path.
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub lang: Option<String>,
    #[serde(default)]
    pub scope: Scope,
    pub limit: usize,
    /// Consult the text tier even when names match strongly.
    #[serde(default)]
    pub text: bool,
    /// Fuse names, text and vectors (`Searcher::hybrid`).
    #[serde(default)]
    pub semantic: bool,
    /// With `semantic`: also rank by the vector of code the chat model
    /// writes for the query (HyDE).
    #[serde(default)]
    pub hyde: bool,
    /// With `semantic`: the chat model reorders this many best hits
    /// (0: none).
    #[serde(default)]
    pub rerank: usize,
    /// Each hit with its signature and first lines.
    #[serde(default)]
    pub snippets: bool,
}

impl SearchQuery {
    /// `query` over the live symbols, with no filter.
    pub fn new(query: &str, limit: usize) -> SearchQuery {
        SearchQuery {
            query: query.to_owned(),
            kind: None,
            path: None,
            lang: None,
            scope: Scope::Live,
            limit,
            text: false,
            semantic: false,
            hyde: false,
            rerank: 0,
            snippets: false,
        }
    }

    /// A query over every symbol, live or deleted, with no filter, ranked
    /// by names, text and vectors (no model steps): what the retrieval
    /// task and `context --query` ask.
    pub fn everywhere(query: &str, limit: usize) -> SearchQuery {
        SearchQuery {
            query: query.to_owned(),
            kind: None,
            path: None,
            lang: None,
            scope: Scope::All,
            limit,
            text: true,
            semantic: true,
            hyde: false,
            rerank: 0,
            snippets: false,
        }
    }

    fn keeps(&self, e: &SymbolEntry) -> bool {
        let scope = match self.scope {
            Scope::Live => !e.deleted,
            Scope::Deleted => e.deleted,
            Scope::All => true,
        };
        scope
            && self.kind.as_deref().is_none_or(|k| k == e.kind)
            && self
                .lang
                .as_deref()
                .is_none_or(|l| l.eq_ignore_ascii_case(&e.language))
            && self.path.as_deref().is_none_or(|p| within(&e.path, p))
    }
}

/// `path` is `prefix` or inside the directory `prefix`.
fn within(path: &str, prefix: &str) -> bool {
    let prefix = prefix.trim_end_matches('/');
    prefix.is_empty()
        || path == prefix
        || (path.starts_with(prefix) && path.as_bytes().get(prefix.len()) == Some(&b'/'))
}

/// Which tier found a hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    Name,
    Text,
    /// Similar in meaning (`--semantic`).
    Vector,
    /// A caller or container of a hit (`--semantic`).
    Graph,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Name => "name",
            Tier::Text => "text",
            Tier::Vector => "vector",
            Tier::Graph => "graph",
        }
    }
}

/// The candidates each ranking gives a fused search of `limit` hits.
pub fn candidates(limit: usize) -> usize {
    limit.max(1) * TEXT_OVERFETCH
}

/// How `search --semantic` fuses and expands (the defaults are what the
/// semantic bench measured best; README, Performance).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HybridParams {
    /// Reciprocal-rank weights of the name, text and vector rankings.
    pub weights: [f64; 3],
    /// The fused hits whose callers and container join the results.
    pub expand_top: usize,
    /// The share of a hit's score its callers and container get.
    pub expand_share: f64,
}

impl Default for HybridParams {
    fn default() -> Self {
        HybridParams {
            weights: [1.0, 2.0, 1.0],
            expand_top: 3,
            expand_share: 0.9,
        }
    }
}

/// One result (the elements of `search --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchHit {
    pub qualname: String,
    pub kind: String,
    pub path: String,
    pub language: String,
    pub sig: String,
    pub start_line: u32,
    pub end_line: u32,
    /// `live` or `deleted`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted_in: Option<DeletedIn>,
    /// 0 to 1: name rules score 0.45 to 1 by class, text hits at most 0.6.
    pub score: f64,
    pub tier: Tier,
    pub id: String,
    /// The chat model that placed this hit (`--rerank`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reranked_by: Option<String>,
    /// Why a question's hit ranked where it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<Why>,
    /// Its code, folded (`--snippets`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<snippet::Snippet>,
}

/// The evidence behind a hit of a question ([`rank`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Why {
    /// Each signal that found it, with its score from 0 to 1.
    pub signals: BTreeMap<String, f64>,
    /// The question's terms its text matched, in the order the question has them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub terms: Vec<String>,
}

/// A file of a question's answer, by its best symbol's score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileHit {
    pub path: String,
    pub score: f64,
}

/// What a search answers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchAnswer {
    pub hits: Vec<SearchHit>,
    /// The text tier could not be used (why); the hits are by name only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_unavailable: Option<String>,
    /// What the chat model did to this answer (`--hyde`, `--rerank`).
    #[serde(default, skip_serializing_if = "ModelSteps::is_empty")]
    pub model_steps: ModelSteps,
    /// The files of a question's hits, best first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileHit>,
}

/// What the chat model did to a search's answer, and what it could not do
/// (the answer is then as without that step).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelSteps {
    /// The model whose code for the query was embedded too (HyDE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expanded_by: Option<String>,
    /// The model that reordered the best hits, and how many it was shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reranked_by: Option<String>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reranked: usize,
    /// With no semantic index: the model that read the first candidates'
    /// chunks, and how many of those it embedded now (the others were in
    /// the vector cache).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_on_demand_by: Option<String>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub embedded_now: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl ModelSteps {
    pub fn is_empty(&self) -> bool {
        *self == ModelSteps::default()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Text(#[from] TextIndexError),
    #[error(transparent)]
    Core(#[from] diffidx_core::Error),
}

/// The store state an index was made from: it changes whenever the store
/// loads notes or moves the code graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp(pub String);

impl Stamp {
    pub fn of(reader: &Reader<'_>) -> Result<Stamp, StoreError> {
        let meta = reader.search_meta()?;
        let get = |key: &str| meta.get(key).map(String::as_str).unwrap_or("-");
        Ok(Stamp(format!(
            "search {SEARCH_VERSION} notes {} graph {} {}",
            get("notes_tip"),
            get("graph_commit"),
            get("graph_version")
        )))
    }
}

/// Both tiers over one store state (a query server keeps one while the
/// store does not change).
pub struct Searcher {
    pub stamp: Stamp,
    names: NameIndex,
    text: Result<TextReader, String>,
}

impl Searcher {
    /// Reads every symbol's name, and opens the text index if it is of
    /// this store state.
    pub fn load(reader: &Reader<'_>, state: &StateDir) -> Result<Searcher, StoreError> {
        let stamp = Stamp::of(reader)?;
        let names = NameIndex::new(reader.search_entries()?);
        let text = match TextIndex::open(&state.search()) {
            None => Err("there is no search index yet; `git diffidx index` makes it".to_owned()),
            Some(index) if index.stamp().as_deref() != Some(stamp.0.as_str()) => {
                Err("the search index is behind the store; `git diffidx index` updates it".into())
            }
            Some(index) => index.reader().map_err(|e| e.to_string()),
        };
        Ok(Searcher { stamp, names, text })
    }

    /// The text tier is of this store state.
    pub fn text_ready(&self) -> bool {
        self.text.is_ok()
    }

    /// Answers `query`; `reader` says which commit deleted a deleted hit.
    pub fn search(
        &self,
        reader: &Reader<'_>,
        query: &SearchQuery,
    ) -> Result<SearchAnswer, StoreError> {
        self.search_with(reader, query, &RankParams::default())
    }

    /// A question ranked with `params` and the semantic index's ranking
    /// (`vectors`: symbol ids and similarities, best first) as one more
    /// signal; a name query as [`search`](Self::search) answers it.
    pub fn search_with_vectors(
        &self,
        reader: &Reader<'_>,
        query: &SearchQuery,
        params: &RankParams,
        vectors: &[(String, f32)],
    ) -> Result<SearchAnswer, StoreError> {
        if Question::is_short(&query.query) {
            return self.search_with(reader, query, params);
        }
        self.rank_question(reader, query, params, vectors)
    }

    /// [`search`](Self::search), a question ranked with `params`.
    pub fn search_with(
        &self,
        reader: &Reader<'_>,
        query: &SearchQuery,
        params: &RankParams,
    ) -> Result<SearchAnswer, StoreError> {
        if !Question::is_short(&query.query) {
            return self.rank_question(reader, query, params, &[]);
        }
        let limit = query.limit.max(1);
        let mut ranked: Vec<(usize, f64, Tier)> = self
            .names
            .find(&query.query, |e| query.keeps(e))
            .into_iter()
            .map(|(i, score)| (i, score, Tier::Name))
            .collect();
        let strong = ranked.first().is_some_and(|h| h.1 >= names::STRONG);
        let mut answer = SearchAnswer::default();
        if !strong || query.text {
            match &self.text {
                Ok(text) => {
                    let found = text
                        .search(&query.query, limit * TEXT_OVERFETCH)
                        .map_err(|e| StoreError::Query {
                            what: "search the text index",
                            reason: e.to_string(),
                        })?;
                    let top = found.first().map_or(1.0, |h| h.1).max(f32::EPSILON);
                    let named: BTreeSet<usize> = ranked.iter().map(|h| h.0).collect();
                    for (id, score) in found {
                        let Some(i) = self.names.position(&id) else {
                            continue;
                        };
                        if named.contains(&i) || !query.keeps(&self.names.entries()[i]) {
                            continue;
                        }
                        ranked.push((i, 0.6 * f64::from(score / top), Tier::Text));
                    }
                }
                Err(why) => answer.text_unavailable = Some(why.clone()),
            }
        }
        let entries = self.names.entries();
        ranked.sort_by(|a, b| {
            let (x, y) = (&entries[a.0], &entries[b.0]);
            b.1.total_cmp(&a.1)
                .then(x.deleted.cmp(&y.deleted))
                .then(x.tie_order(y))
        });
        ranked.truncate(limit);
        answer.hits = self.hits(reader, ranked)?;
        Ok(answer)
    }
}

impl Searcher {
    /// The ids of the symbols matching a `log` query, from the names held
    /// (see [`NameIndex::matching`]).
    pub fn matching(&self, query: &diffidx_core::SymbolQuery) -> std::collections::HashSet<String> {
        self.names.matching(query)
    }

    /// The text tier's ranking alone (symbol ids, best first), for
    /// comparisons.
    pub fn text_ranking(&self, query: &str, limit: usize) -> Result<Vec<String>, StoreError> {
        match &self.text {
            Ok(text) => Ok(text
                .search(query, limit)
                .map_err(|e| StoreError::Query {
                    what: "search the text index",
                    reason: e.to_string(),
                })?
                .into_iter()
                .map(|(id, _)| id)
                .collect()),
            Err(_) => Ok(Vec::new()),
        }
    }

    /// `search --semantic`: the name, text and vector rankings fused by
    /// reciprocal rank; then the callers and the container of the best
    /// few hits join with a share of their score (a graph + vector hybrid:
    /// code that calls the retry loop is as much the answer to "where do
    /// we retry" as the loop). `vectors` is the semantic index's ranking,
    /// symbol ids best first.
    pub fn hybrid(
        &self,
        reader: &Reader<'_>,
        query: &SearchQuery,
        vectors: &[(String, f32)],
    ) -> Result<SearchAnswer, StoreError> {
        self.hybrid_with(reader, query, vectors, HybridParams::default())
    }

    /// [`hybrid`](Self::hybrid) with other weights (for the bench).
    pub fn hybrid_with(
        &self,
        reader: &Reader<'_>,
        query: &SearchQuery,
        vectors: &[(String, f32)],
        params: HybridParams,
    ) -> Result<SearchAnswer, StoreError> {
        self.hybrid_expanded(reader, query, &query.query, vectors, params)
    }

    /// [`hybrid_with`](Self::hybrid_with), the text ranking asked
    /// `text_query` (HyDE: the question and the code written for it).
    pub fn hybrid_expanded(
        &self,
        reader: &Reader<'_>,
        query: &SearchQuery,
        text_query: &str,
        vectors: &[(String, f32)],
        params: HybridParams,
    ) -> Result<SearchAnswer, StoreError> {
        let limit = query.limit.max(1);
        let wanted = candidates(limit);
        let entries = self.names.entries();
        let keep = |id: &str| {
            self.names
                .position(id)
                .filter(|&i| query.keeps(&entries[i]))
        };
        let mut answer = SearchAnswer::default();
        let names: Vec<usize> = self
            .names
            .find(&query.query, |e| query.keeps(e))
            .into_iter()
            .map(|(i, _)| i)
            .take(wanted)
            .collect();
        let text: Vec<usize> = match &self.text {
            Ok(text) => text
                .search(text_query, wanted)
                .map_err(|e| StoreError::Query {
                    what: "search the text index",
                    reason: e.to_string(),
                })?
                .iter()
                .filter_map(|(id, _)| keep(id))
                .collect(),
            Err(why) => {
                answer.text_unavailable = Some(why.clone());
                Vec::new()
            }
        };
        let vector: Vec<usize> = vectors
            .iter()
            .filter_map(|(id, _)| keep(id))
            .take(wanted)
            .collect();
        let [wn, wt, wv] = params.weights;
        let lists = [(&names[..], wn), (&text[..], wt), (&vector[..], wv)];
        let best_possible: f64 = lists
            .iter()
            .map(|(_, w)| w / (diffidx_semantic::fuse::RRF_K + 1.0))
            .sum();
        let mut scored: Vec<(usize, f64, Tier)> = diffidx_semantic::reciprocal_rank_fusion(&lists)
            .into_iter()
            .map(|(i, score)| {
                let rank_in = |list: &[usize]| list.iter().position(|&j| j == i);
                let tier = [
                    (rank_in(&names), Tier::Name),
                    (rank_in(&text), Tier::Text),
                    (rank_in(&vector), Tier::Vector),
                ]
                .into_iter()
                .filter_map(|(r, t)| r.map(|r| (r, t)))
                .min_by_key(|(r, _)| *r)
                .map_or(Tier::Vector, |(_, t)| t);
                (i, score / best_possible, tier)
            })
            .collect();
        self.expand(reader, query, &mut scored, params)?;
        scored.sort_by(|a, b| {
            let (x, y) = (&entries[a.0], &entries[b.0]);
            b.1.total_cmp(&a.1).then(x.tie_order(y))
        });
        scored.truncate(limit);
        answer.hits = self.hits(reader, scored)?;
        Ok(answer)
    }

    /// Adds the callers and the container of the best hits, each with a
    /// share of the score of the hit that brought it (the best such share);
    /// neighbours that are hits already keep their own score.
    fn expand(
        &self,
        reader: &Reader<'_>,
        query: &SearchQuery,
        scored: &mut Vec<(usize, f64, Tier)>,
        params: HybridParams,
    ) -> Result<(), StoreError> {
        if params.expand_top == 0 {
            return Ok(());
        }
        let entries = self.names.entries();
        let top: Vec<(usize, f64)> = scored
            .iter()
            .take(params.expand_top)
            .map(|h| (h.0, h.1))
            .collect();
        let ids: Vec<String> = top.iter().map(|(i, _)| entries[*i].id.clone()).collect();
        let levels: Vec<String> = diffidx_core::codegraph::Resolution::ALL
            .iter()
            .map(|r| r.as_str().to_owned())
            .collect();
        let mut neighbours: Vec<(usize, usize)> = Vec::new(); // (hit, neighbour)
        for edge in reader.edges(
            &ids,
            "CALLS",
            crate::store::codegraph::Direction::In,
            &levels,
        )? {
            if let (Some(at), Some(other)) = (
                self.names.position(&edge.at),
                self.names.position(&edge.other.id),
            ) {
                neighbours.push((at, other));
            }
        }
        let by_name: HashMap<(&str, &str), usize> = entries
            .iter()
            .enumerate()
            .filter(|(_, e)| !e.deleted)
            .map(|(i, e)| ((e.path.as_str(), e.qualname.as_str()), i))
            .collect();
        for &(i, _) in &top {
            let e = &entries[i];
            let container = e
                .qualname
                .strip_suffix(e.name.as_str())
                .map(|q| q.trim_end_matches(['.', ':']))
                .filter(|q| !q.is_empty());
            if let Some(&c) = container.and_then(|q| by_name.get(&(e.path.as_str(), q))) {
                neighbours.push((i, c));
            }
        }
        let hits: BTreeSet<usize> = scored.iter().map(|h| h.0).collect();
        let share: HashMap<usize, f64> = top.into_iter().collect();
        let mut joined: BTreeMap<usize, f64> = BTreeMap::new();
        for (hit, other) in neighbours {
            if hits.contains(&other) || !query.keeps(&entries[other]) {
                continue;
            }
            let score = params.expand_share * share[&hit];
            let entry = joined.entry(other).or_insert(0.0);
            *entry = entry.max(score);
        }
        scored.extend(joined.into_iter().map(|(i, s)| (i, s, Tier::Graph)));
        Ok(())
    }

    /// The hits for ranked entries, with the commits that deleted them.
    fn hits(
        &self,
        reader: &Reader<'_>,
        ranked: Vec<(usize, f64, Tier)>,
    ) -> Result<Vec<SearchHit>, StoreError> {
        let entries = self.names.entries();
        let deleted: Vec<String> = ranked
            .iter()
            .map(|h| &entries[h.0])
            .filter(|e| e.deleted)
            .map(|e| e.id.clone())
            .collect();
        let deleted_in = reader.deleted_in(&deleted)?;
        Ok(ranked
            .into_iter()
            .map(|(i, score, tier)| {
                let e = &entries[i];
                SearchHit {
                    qualname: e.qualname.clone(),
                    kind: e.kind.clone(),
                    path: e.path.clone(),
                    language: e.language.clone(),
                    sig: e.sig.clone(),
                    start_line: e.start_line,
                    end_line: e.end_line,
                    status: if e.deleted { "deleted" } else { "live" }.to_owned(),
                    deleted_in: deleted_in.get(&e.id).cloned(),
                    score: (score.min(1.0) * 1000.0).round() / 1000.0,
                    tier,
                    id: e.id.clone(),
                    reranked_by: None,
                    why: None,
                    snippet: None,
                }
            })
            .collect())
    }

    /// The languages of the live symbols, the most common first (what
    /// HyDE writes its code in).
    pub fn languages(&self) -> Vec<String> {
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for e in self.names.entries().iter().filter(|e| !e.deleted) {
            *counts.entry(e.language.as_str()).or_default() += 1;
        }
        let mut languages: Vec<(&str, usize)> = counts.into_iter().collect();
        languages.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        languages.into_iter().map(|(l, _)| l.to_owned()).collect()
    }
}

/// The files of `hits` in the order of their first hit, each with its
/// best score.
pub fn files_of(hits: &[SearchHit]) -> Vec<FileHit> {
    let mut files: Vec<FileHit> = Vec::new();
    for hit in hits {
        if !files.iter().any(|f| f.path == hit.path) {
            files.push(FileHit {
                path: hit.path.clone(),
                score: hit.score,
            });
        }
    }
    files
}

/// What an update of the text index did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchReport {
    /// Rebuilt whole (no index, a torn or older one).
    pub full: bool,
    /// Files whose documents were written, and documents written.
    pub files: usize,
    pub docs: usize,
    /// Files parsed for their words (beyond those the graph parsed).
    pub parsed: usize,
}

/// The documents of an update of the text index, made and not yet
/// written: writing needs neither the store nor the repository, so an
/// index run writes them while the store is being compacted.
pub struct PreparedSearch {
    index: TextIndex,
    /// The paths whose documents are replaced (`None`: all of them).
    paths: Option<Vec<String>>,
    docs: Vec<TextDoc>,
    stamp: Stamp,
    report: SearchReport,
}

impl PreparedSearch {
    /// Writes the documents and the stamp.
    pub fn write(self) -> Result<SearchReport, SearchError> {
        self.index
            .write(self.paths.as_deref(), &self.docs, &self.stamp.0)?;
        Ok(self.report)
    }
}

/// What brings the text index to the store's current state, up to the
/// writing ([`PreparedSearch::write`]); `None` when the index is of that
/// state already.
///
/// `before` is the store's stamp before this run loaded anything; an index
/// of that stamp is updated for `touched` (the paths of the run's deltas
/// and of the files the graph re-read), any other is rebuilt. `fresh` holds
/// the declarations (with words) of files the run parsed at the graph's
/// commit.
pub fn prepare(
    store: &Store,
    state: &StateDir,
    differ: &mut SymbolDiffer<'_>,
    before: Option<&Stamp>,
    touched: &BTreeSet<String>,
    fresh: &BTreeMap<String, Arc<FileFacts>>,
) -> Result<Option<PreparedSearch>, SearchError> {
    let reader = store.reader()?;
    let stamp = Stamp::of(&reader)?;
    let path = state.search();
    let existing = TextIndex::open(&path);
    let existing_stamp = existing.as_ref().and_then(TextIndex::stamp);
    if existing_stamp.as_deref() == Some(stamp.0.as_str()) {
        return Ok(None);
    }
    let incremental =
        existing.is_some() && before.is_some_and(|b| existing_stamp == Some(b.0.clone()));
    let (index, entries, paths) = if incremental {
        let paths: Vec<String> = touched
            .iter()
            .chain(fresh.keys())
            .cloned()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let entries = reader.search_entries_at(&paths)?;
        (existing.expect("checked above"), entries, Some(paths))
    } else {
        (TextIndex::create(&path)?, reader.search_entries()?, None)
    };
    let graph_commit = reader.graph_commit()?;
    drop(reader);
    let mut report = SearchReport {
        full: !incremental,
        ..SearchReport::default()
    };
    let words = words_of_live_files(
        differ,
        graph_commit.as_deref(),
        &entries,
        fresh,
        &mut report,
    )?;
    let mut docs: Vec<TextDoc> = entries
        .iter()
        .map(|e| {
            let raw_words = words.get(&e.id).cloned().unwrap_or_default();
            TextDoc {
                id: e.id.clone(),
                path: e.path.clone(),
                names: text::indexed_text(&e.qualname),
                sig: text::indexed_text(&e.sig),
                words: text::indexed_text(&raw_words),
                raw_names: e.qualname.clone(),
                raw_words,
                file: false,
            }
        })
        .collect();
    // A document per live file: its path and the words of all its symbols.
    let mut files: BTreeMap<&str, String> = BTreeMap::new();
    for (e, doc) in entries.iter().zip(&docs) {
        if !e.deleted {
            let text = files.entry(e.path.as_str()).or_default();
            text.push_str(&doc.words);
        }
    }
    let file_docs: Vec<TextDoc> = files
        .into_iter()
        .map(|(path, words)| TextDoc {
            id: text::file_id(path),
            path: path.to_owned(),
            names: text::indexed_text(path),
            sig: String::new(),
            words,
            raw_names: String::new(),
            raw_words: String::new(),
            file: true,
        })
        .collect();
    docs.extend(file_docs);
    report.docs = docs.len();
    report.files = entries
        .iter()
        .map(|e| &e.path)
        .collect::<BTreeSet<_>>()
        .len();
    Ok(Some(PreparedSearch {
        index,
        paths,
        docs,
        stamp,
        report,
    }))
}

/// The words of each live symbol of `entries`, by id: from `fresh` where the
/// run parsed the file, else from the file at the graph's commit.
fn words_of_live_files(
    differ: &mut SymbolDiffer<'_>,
    graph_commit: Option<&str>,
    entries: &[SymbolEntry],
    fresh: &BTreeMap<String, Arc<FileFacts>>,
    report: &mut SearchReport,
) -> Result<HashMap<String, String>, SearchError> {
    let live: BTreeSet<&str> = entries
        .iter()
        .filter(|e| !e.deleted)
        .map(|e| e.path.as_str())
        .collect();
    let mut words = HashMap::new();
    let mut add = |path: &str, facts: &FileFacts| {
        for def in &facts.defs {
            if !def.words.is_empty() {
                words.insert(
                    symbol_id(path, def.kind, &def.qualname, &def.sig),
                    def.words.clone(),
                );
            }
        }
    };
    let mut unread: Vec<&str> = Vec::new();
    for path in live {
        match fresh.get(path) {
            Some(facts) => add(path, facts),
            None => unread.push(path),
        }
    }
    let commit = graph_commit.and_then(|c| diffidx_core::ObjectId::from_hex(c.as_bytes()).ok());
    if let (Some(commit), false) = (commit, unread.is_empty()) {
        let repo = differ.repo();
        let blobs: BTreeMap<String, diffidx_core::ObjectId> = repo
            .tree_files(commit)?
            .into_iter()
            .map(|f| (f.path, f.blob))
            .collect();
        for path in unread {
            let (Some(blob), Some(_)) = (blobs.get(path), Language::from_path(path)) else {
                continue;
            };
            if let Some(facts) = differ.file_facts(*blob, path)? {
                report.parsed += 1;
                add(path, &facts);
            }
        }
    }
    Ok(words)
}
