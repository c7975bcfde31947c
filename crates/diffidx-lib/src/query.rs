//! Answering queries: from a running query server when there is one (fast),
//! else from the store directly, after which a server is started for the
//! next query. Answers are the same either way.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use diffidx_core::git::Repo;
use diffidx_core::{Status, SymbolDiffer, SymbolQuery};

use crate::codegraph::{GraphAnswer, GraphQuery, ImpactAnswer};
use crate::open::{self, OpenError};
use crate::protocol::ImpactRequest;
pub use crate::protocol::Relevance;
use crate::search::{HybridParams, SearchAnswer, SearchQuery};
use crate::state::{StateDir, StateError, Wait, WriterLock};
use crate::store::{HistoryEntry, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    #[error("this repository has no diffidx index yet; run `git diffidx init` (or `git diffidx index`) first")]
    NoIndex,
    #[error("the index is being rebuilt from the notes{}; queries answer when that finishes",
        holder.map(|p| format!(" (by pid {p})")).unwrap_or_default())]
    Rebuilding { holder: Option<u32> },
    #[error("a rebuild of the index was interrupted; run `git diffidx rebuild` (or `git diffidx index`) to finish it")]
    RebuildInterrupted,
    #[error(transparent)]
    State(#[from] crate::state::StateError),
    #[error(transparent)]
    Open(#[from] OpenError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Core(#[from] diffidx_core::Error),
    #[error(transparent)]
    Semantic(#[from] crate::semantic::SemanticError),
}

/// A symbol's history, and whether the commit asked about is indexed.
pub struct History {
    pub entries: Vec<HistoryEntry>,
    pub head_indexed: Option<bool>,
    /// History before this date is not indexed (`None`: it all is).
    pub indexed_from: Option<String>,
    /// When no symbol matched: indexed names close to the one asked for.
    pub suggestions: Vec<String>,
    /// With no entries: the name is a stored symbol all the same, unchanged
    /// in the indexed commits.
    pub known: bool,
    /// Changes left out for being on commits outside `head`'s history.
    pub hidden: usize,
}

/// The history of the symbols matching `query`, newest first, and whether
/// `head` is indexed; with `in_history`, only the changes on commits in
/// `head`'s history. `server` is the program to start as the query server
/// (`None`: keep to the direct path).
pub fn history(
    repo: &Repo,
    query: &SymbolQuery,
    head: Option<String>,
    in_history: bool,
    server: Option<&Path>,
) -> Result<History, QueryError> {
    let state = answerable(repo)?;
    let in_history = in_history && head.is_some();
    let server = server.filter(|_| crate::settings::query_server_enabled(repo));
    if server.is_some() {
        if let Some(answer) =
            crate::client::history(&state.socket(), query, head.clone(), in_history)
        {
            return Ok(History {
                entries: answer.entries,
                head_indexed: answer.head_indexed,
                indexed_from: answer.indexed_from,
                suggestions: answer.suggestions,
                known: answer.known,
                hidden: answer.hidden,
            });
        }
    }
    let store = open::for_reading(repo, Duration::from_secs(10))?;
    let reader = store.reader()?;
    let entries = reader.history(query)?;
    let head_indexed = head.as_ref().and_then(|h| reader.has_commit(h).ok());
    let indexed_from = reader.history_start()?;
    let near = if entries.is_empty() {
        reader.names_near(query, crate::protocol::SUGGESTIONS)?
    } else {
        crate::store::NamesNear::default()
    };
    drop(reader);
    drop(store);
    if let Some(program) = server {
        let work_dir = repo.work_dir().unwrap_or_else(|| repo.common_dir());
        crate::client::spawn(&state.socket(), program, &work_dir);
    }
    let tip = head
        .filter(|_| in_history)
        .and_then(|h| diffidx_core::ObjectId::from_hex(h.as_bytes()).ok());
    let (entries, hidden) = match tip {
        Some(tip) => in_history_of(repo, tip, entries)?,
        None => (entries, 0),
    };
    Ok(History {
        entries,
        head_indexed,
        indexed_from,
        suggestions: near.suggestions,
        known: near.known,
        hidden,
    })
}

/// The state directory, once it is known that a store is there to answer.
fn answerable(repo: &Repo) -> Result<StateDir, QueryError> {
    let state = StateDir::of(repo);
    if state.rebuilding().exists() {
        // Running (it holds the writer lock), or killed (nobody does).
        return Err(match WriterLock::acquire(&state, Wait::No, &mut |_| {}) {
            Err(StateError::Busy { holder, .. }) => QueryError::Rebuilding { holder },
            Err(e) => e.into(),
            Ok(_lock) => QueryError::RebuildInterrupted,
        });
    }
    if !state.store().exists() {
        return Err(QueryError::NoIndex);
    }
    Ok(state)
}

/// Asks the query server (`ask`), else opens the store and answers
/// (`direct`), then starts a server for the next query. `server` is the
/// program to start (`None`: keep to the direct path).
fn from_server_or_store<T>(
    repo: &Repo,
    server: Option<&Path>,
    ask: impl FnOnce(&Path) -> Option<T>,
    direct: impl FnOnce(&crate::store::Reader<'_>) -> Result<T, StoreError>,
) -> Result<T, QueryError> {
    from_server_or_here(repo, server, ask, || {
        let store = open::for_reading(repo, Duration::from_secs(10))?;
        let answer = direct(&store.reader()?)?;
        Ok(answer)
    })
}

/// [`from_server_or_store`] with an answer that opens what it needs itself.
fn from_server_or_here<T>(
    repo: &Repo,
    server: Option<&Path>,
    ask: impl FnOnce(&Path) -> Option<T>,
    here: impl FnOnce() -> Result<T, QueryError>,
) -> Result<T, QueryError> {
    let state = answerable(repo)?;
    let server = server.filter(|_| crate::settings::query_server_enabled(repo));
    if server.is_some() {
        if let Some(answer) = ask(&state.socket()) {
            return Ok(answer);
        }
    }
    let answer = here()?;
    if let Some(program) = server {
        let work_dir = repo.work_dir().unwrap_or_else(|| repo.common_dir());
        crate::client::spawn(&state.socket(), program, &work_dir);
    }
    Ok(answer)
}

/// The code graph around the symbols `query` names (`graph`).
pub fn code_graph(
    repo: &Repo,
    query: &GraphQuery,
    server: Option<&Path>,
) -> Result<GraphAnswer, QueryError> {
    from_server_or_store(
        repo,
        server,
        |socket| crate::client::graph(socket, query),
        |reader| crate::codegraph::graph(reader, query),
    )
}

/// What calls, inherits or implements what `request.deltas` touched
/// (`impact`).
pub fn impact(
    repo: &Repo,
    request: &ImpactRequest,
    server: Option<&Path>,
) -> Result<ImpactAnswer, QueryError> {
    from_server_or_store(
        repo,
        server,
        |socket| crate::client::impact(socket, request),
        |reader| {
            crate::codegraph::impact(
                reader,
                &request.deltas,
                request.depth,
                request.min_resolution,
            )
        },
    )
}

/// Symbols by name, then by the words of their code (`search`); a question
/// by every signal the index has (`search::rank`).
///
/// A text index that is missing, torn or behind the store is rebuilt here
/// when no writer is busy (it is derived from the store and the files), and
/// the answer says so when it cannot be: its hits are then by name only.
pub fn search(
    repo: &Repo,
    query: &SearchQuery,
    server: Option<&Path>,
) -> Result<SearchAnswer, QueryError> {
    let mut answer = ranked_search(repo, query, server)?;
    if answer.files.is_empty() {
        // A name query's files: those of its hits, in their order.
        answer.files = crate::search::files_of(&answer.hits);
    }
    if query.snippets && !answer.hits.is_empty() {
        let store = open::for_reading(repo, Duration::from_secs(10))?;
        let commit = store
            .reader()?
            .graph_commit()?
            .and_then(|c| diffidx_core::ObjectId::from_hex(c.as_bytes()).ok());
        for hit in &mut answer.hits {
            hit.snippet = crate::search::snippet::snippet_of(repo, commit, hit);
        }
    }
    Ok(answer)
}

fn ranked_search(
    repo: &Repo,
    query: &SearchQuery,
    server: Option<&Path>,
) -> Result<SearchAnswer, QueryError> {
    if query.semantic {
        // The query server keeps the model loaded; the chat model's steps
        // (HyDE, rerank) are taken here.
        let semantic = || {
            let server = server
                .filter(|_| !query.hyde && query.rerank == 0 && !answers_on_demand(repo, query));
            crate::semantic::configured_source(repo)
                .ok_or(crate::semantic::SemanticError::NotConfigured)??;
            from_server_or_here(
                repo,
                server,
                |socket| crate::client::search(socket, query),
                || semantic_search(repo, query),
            )
        };
        let answer = semantic()?;
        if answer.text_unavailable.is_none() || !repair_search_index(repo)? {
            return Ok(answer);
        }
        return semantic();
    }
    let ask = |socket: &Path| crate::client::search(socket, query);
    let direct = |reader: &crate::store::Reader<'_>| {
        crate::search::Searcher::load(reader, &StateDir::of(repo))?.search(reader, query)
    };
    let answer = from_server_or_store(repo, server, ask, direct)?;
    if answer.text_unavailable.is_none() || !repair_search_index(repo)? {
        return Ok(answer);
    }
    from_server_or_store(repo, server, ask, direct)
}

/// `search --semantic`, answered in this process: the model is loaded here
/// (for the chat model's steps, or when no query server answers).
fn semantic_search(repo: &Repo, query: &SearchQuery) -> Result<SearchAnswer, QueryError> {
    use crate::semantic::chat::{configured_chat, model_name, open_service, Asker};
    use crate::semantic::{configured_source, steps, OnDemand, SemanticError, SemanticSearcher};
    let source = configured_source(repo).ok_or(SemanticError::NotConfigured)??;
    let chat = match query.hyde || query.rerank > 0 {
        true => Some(configured_chat(repo).ok_or(SemanticError::ChatNotConfigured)??),
        false => None,
    };
    let state = answerable(repo)?;
    let store = open::for_reading(repo, Duration::from_secs(10))?;
    let reader = store.reader()?;
    let searcher = crate::search::Searcher::load(&reader, &state)?;
    let mut semantic = match answers_on_demand(repo, query) {
        true => None,
        false => Some(SemanticSearcher::load(&state, &source)?),
    };
    // A rerank may lift hits from below the limit: rank as many as it sees.
    let ranked = SearchQuery {
        limit: query.limit.max(query.rerank),
        ..query.clone()
    };
    let service = chat.as_ref().map(open_service);
    let mut asker = match (&chat, &service) {
        (Some(chat), Some(service)) => {
            Some(Asker::open(&state, service, model_name(&chat.service))?)
        }
        _ => None,
    };
    let mut model_steps = crate::search::ModelSteps::default();
    let mut text_query = query.query.clone();
    let mut code = None;
    if let (true, Some(asker), Some(_)) = (query.hyde, asker.as_mut(), &semantic) {
        match steps::hyde(asker, &query.query, &searcher.languages()) {
            Ok(written) => {
                text_query = format!("{}\n{written}", query.query);
                code = Some(written);
                model_steps.expanded_by = Some(asker.name().to_owned());
            }
            Err(e) => model_steps
                .warnings
                .push(format!("the query was not expanded (HyDE): {e}")),
        }
    }
    let mut answer = match semantic.as_mut() {
        Some(semantic) => {
            let params = crate::semantic::tune::params(&state, &semantic.model().label());
            semantic.search(
                &reader,
                &searcher,
                params,
                &ranked,
                &text_query,
                code.as_deref(),
            )?
        }
        None => {
            let mut on_demand = OnDemand::open(&state, &source)?;
            let options = crate::settings::diff_options(repo, None);
            let mut differ = diffidx_core::SymbolDiffer::new(repo, options)?;
            let answer = on_demand.search(&reader, &searcher, &mut differ, &ranked)?;
            model_steps.read_on_demand_by = Some(on_demand.model().label());
            model_steps.embedded_now = on_demand.embedded;
            answer
        }
    };
    if let (Some(chat), Some(asker)) = (&chat, asker.as_mut()) {
        if query.rerank > 0 {
            let commit = reader
                .graph_commit()?
                .and_then(|c| diffidx_core::ObjectId::from_hex(c.as_bytes()).ok());
            let shown = query.rerank;
            match steps::rerank(
                repo,
                asker,
                &query.query,
                &mut answer,
                shown,
                commit,
                chat.rerank_chars,
            ) {
                Ok(n) => {
                    model_steps.reranked_by = Some(asker.name().to_owned());
                    model_steps.reranked = n;
                }
                Err(e) => model_steps
                    .warnings
                    .push(format!("the hits were not reranked: {e}")),
            }
        }
    }
    answer.hits.truncate(query.limit);
    answer.model_steps = model_steps;
    Ok(answer)
}

/// Whether `search --semantic` answers `query` from vectors made on demand
/// (`semantic::OnDemand`): a question without HyDE, when the semantic
/// layer embeds on demand only or there is no semantic index yet. Names
/// and HyDE compare the query with every symbol, so they need the index.
fn answers_on_demand(repo: &Repo, query: &SearchQuery) -> bool {
    !query.hyde
        && !crate::search::Question::is_short(&query.query)
        && (crate::semantic::embeds_on_demand(repo)
            || !crate::semantic::SemanticIndex::path(&StateDir::of(repo)).exists())
}

/// How many fused candidates `relevance` ranks before it keeps those asked
/// about: enough that a window's symbols are rarely past it.
const RELEVANCE_CANDIDATES: usize = 400;

/// How well each of `ids` (live or deleted) matches `text`: the name, BM25
/// and, with the semantic layer on, vector rankings fused as
/// `search --semantic` fuses them (without graph expansion). A semantic
/// layer that cannot be used is a warning, and the others answer. Asked of
/// the query server when there is one (it keeps the indexes and the model
/// loaded), else answered here.
pub fn relevance(
    repo: &Repo,
    text: &str,
    ids: &[&str],
    server: Option<&Path>,
) -> Result<Relevance, QueryError> {
    let request = crate::protocol::RelevanceRequest {
        text: text.to_owned(),
        ids: ids.iter().map(|id| (*id).to_owned()).collect(),
    };
    from_server_or_here(
        repo,
        server,
        |socket| crate::client::relevance(socket, &request),
        || relevance_here(repo, text, ids),
    )
}

fn relevance_here(repo: &Repo, text: &str, ids: &[&str]) -> Result<Relevance, QueryError> {
    use crate::semantic::{configured_source, SemanticSearcher};
    let state = answerable(repo)?;
    let store = open::for_reading(repo, Duration::from_secs(10))?;
    let reader = store.reader()?;
    let searcher = crate::search::Searcher::load(&reader, &state)?;
    let mut loaded = configured_source(repo).map(|source| {
        source.and_then(|source| {
            let semantic = SemanticSearcher::load(&state, &source)?;
            let params = crate::semantic::tune::params(&state, &semantic.model().label());
            Ok((semantic, params))
        })
    });
    let semantic = loaded.as_mut().map(|loaded| {
        loaded
            .as_mut()
            .map(|(semantic, params)| (semantic, *params))
            .map_err(|e| e.to_string())
    });
    Ok(rank_relevance(&reader, &searcher, semantic, text, ids)?)
}

/// [`relevance`] from loaded parts: the name and text indexes, and the
/// semantic layer with its fitted weights when it is configured (or why it
/// could not be loaded).
pub(crate) fn rank_relevance(
    reader: &crate::store::Reader<'_>,
    searcher: &crate::search::Searcher,
    semantic: Option<Result<(&mut crate::semantic::SemanticSearcher, HybridParams), String>>,
    text: &str,
    ids: &[&str],
) -> Result<Relevance, crate::store::StoreError> {
    let mut found = Relevance {
        matched_by: vec!["names".into(), "text".into()],
        ..Relevance::default()
    };
    let query = SearchQuery::everywhere(text, RELEVANCE_CANDIDATES);
    let mut vectors = Vec::new();
    let mut params = HybridParams {
        expand_top: 0,
        ..HybridParams::default()
    };
    let ranked = semantic.map(|loaded| {
        loaded.and_then(|(semantic, fitted)| {
            // The fitted weights; context never expands.
            params.weights = fitted.weights;
            semantic
                .rank(text, RELEVANCE_CANDIDATES)
                .map_err(|e| e.to_string())
        })
    });
    match ranked {
        Some(Ok(ranked)) => {
            vectors = ranked;
            found.matched_by.push("vectors".into());
        }
        Some(Err(e)) => found
            .warnings
            .push(format!("matched without the semantic layer: {e}")),
        None => {}
    }
    let answer = searcher.hybrid_with(reader, &query, &vectors, params)?;
    if let Some(why) = answer.text_unavailable {
        found.matched_by.retain(|r| r != "text");
        found
            .warnings
            .push(format!("matched without the text index: {why}"));
    }
    let wanted: HashSet<&str> = ids.iter().copied().collect();
    found.scores = answer
        .hits
        .into_iter()
        .filter(|h| wanted.contains(h.id.as_str()))
        .map(|h| (h.id, h.score))
        .collect();
    Ok(found)
}

/// The changes of these commits, and the callers of the changed symbols
/// (`context`).
pub fn window(
    repo: &Repo,
    shas: &[String],
    nearest: usize,
    server: Option<&Path>,
) -> Result<crate::store::WindowAnswer, QueryError> {
    let request = crate::protocol::WindowRequest {
        shas: shas.to_vec(),
        nearest,
    };
    from_server_or_store(
        repo,
        server,
        |socket| crate::client::window(socket, &request),
        |reader| reader.window(shas, nearest),
    )
}

/// Rebuilds the text index of search from the store, unless a writer is
/// busy (it brings the index up to date itself). True when it did.
fn repair_search_index(repo: &Repo) -> Result<bool, QueryError> {
    let state = StateDir::of(repo);
    let _lock = match WriterLock::acquire(&state, Wait::No, &mut |_| {}) {
        Ok(lock) => lock,
        Err(StateError::Busy { .. }) => return Ok(false),
        Err(e) => return Err(e.into()),
    };
    let store = open::for_reading(repo, Duration::from_secs(10))?;
    let mut differ = SymbolDiffer::new(repo, Default::default())?;
    let fresh = Default::default();
    let prepared = crate::search::prepare(
        &store,
        &state,
        &mut differ,
        None,
        &Default::default(),
        &fresh,
    );
    match prepared.and_then(|p| p.map(crate::search::PreparedSearch::write).transpose()) {
        Ok(_) => Ok(true),
        Err(crate::search::SearchError::Store(e)) => Err(e.into()),
        Err(crate::search::SearchError::Core(e)) => Err(e.into()),
        // An index that cannot be written (a full disk, permissions):
        // names still answer.
        Err(crate::search::SearchError::Text(_)) => Ok(false),
    }
}

/// Keeps the entries whose commit is in `history`; returns them and how
/// many were left out.
pub fn keep_in(
    history: &HashSet<diffidx_core::ObjectId>,
    entries: Vec<HistoryEntry>,
) -> (Vec<HistoryEntry>, usize) {
    let before = entries.len();
    let kept: Vec<HistoryEntry> = entries
        .into_iter()
        .filter(|e| {
            diffidx_core::ObjectId::from_hex(e.commit.as_bytes())
                .is_ok_and(|id| history.contains(&id))
        })
        .collect();
    let hidden = before - kept.len();
    (kept, hidden)
}

/// Keeps the entries whose commit is in the history of `tip` (commits of
/// other branches, and those a rebase or amend left behind, are not); returns
/// them and how many were left out.
pub fn in_history_of(
    repo: &Repo,
    tip: diffidx_core::ObjectId,
    entries: Vec<HistoryEntry>,
) -> Result<(Vec<HistoryEntry>, usize), diffidx_core::Error> {
    let commits: HashSet<diffidx_core::ObjectId> = entries
        .iter()
        .filter_map(|e| diffidx_core::ObjectId::from_hex(e.commit.as_bytes()).ok())
        .collect();
    let reachable = repo.reachable_among(&[tip], &commits)?;
    Ok(keep_in(&reachable, entries))
}

/// The diff of one symbol between a history entry's commit and its first
/// parent (`log -p`).
pub fn symbol_patch(repo: &Repo, entry: &HistoryEntry) -> Result<String, String> {
    let commit = repo
        .resolve_commit(&entry.commit)
        .map_err(|e| e.to_string())?;
    let info = repo.commit(commit).map_err(|e| e.to_string())?;
    let mut differ = SymbolDiffer::new(repo, Default::default()).map_err(|e| e.to_string())?;
    let source = |differ: &mut SymbolDiffer<'_>, at, path: &str| {
        differ
            .symbol_source(at, path, &entry.qualname, entry.kind, &entry.sig)
            .map_err(|e| e.to_string())
    };
    let new = match entry.status {
        Status::Deleted => None,
        _ => source(&mut differ, commit, &entry.path)?,
    };
    let old_path = entry.old_path.as_deref().unwrap_or(&entry.path);
    let old = match info.parents.first() {
        Some(&parent) if repo.gix().has_object(parent) => source(&mut differ, parent, old_path)?,
        _ => None,
    };
    Ok(diffidx_core::git::hunks::unified_diff(
        old.as_deref().unwrap_or(""),
        new.as_deref().unwrap_or(""),
    ))
}
