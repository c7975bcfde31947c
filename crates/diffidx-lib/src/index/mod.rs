//! Indexing: commits → notes (the source of truth) → store (the cache).
//!
//! Order matters for crash safety: notes are written first, in one notes
//! commit per batch, then loaded into the store in one transaction. A run
//! killed at any point leaves notes that are complete for every commit they
//! name; the next run loads whatever the store is missing from the notes and
//! carries on. One writer at a time (`state::WriterLock`).

mod gc;
mod run_store;
mod walk;

pub use gc::{gc, GcReport};

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use diffidx_core::differ::Diffed;
use diffidx_core::differ::{BlobCounts, DiffStats};
use diffidx_core::git::notes::Notes;
use diffidx_core::git::Repo;
use diffidx_core::{CommitRecord, DiffOptions, ObjectId, SymbolDiffer};

use crate::codegraph::Known;
use crate::open;
use crate::state::{StateDir, StateError, WriterLock};
use crate::store::{self, StoreError};

pub use walk::{commits_since, unindexed_count};

/// The most commits written per notes commit and store transaction: what
/// a killed run can lose, and the notes held in memory until written.
pub const BATCH: usize = 5000;

/// The most store rows (nodes and edges) a batch holds before it is
/// loaded, whatever its commits: what bounds a batch's memory. Each load
/// has a large fixed cost (Kuzu checkpoints after every `COPY`, rewriting
/// the relationship lists it touched), so a batch is as large as these two
/// bounds allow: App-vNext/Polly's whole history makes about 144,000 rows,
/// sharkdp/fd's about 4,700.
const BATCH_ROWS: usize = 200_000;

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error(transparent)]
    Core(#[from] diffidx_core::Error),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    State(#[from] StateError),
    #[error("updating the code graph: {0}")]
    Graph(#[from] crate::codegraph::GraphError),
    #[error("starting the diffing thread: {0}")]
    Thread(String),
    #[error("updating the search index: {0}")]
    Search(#[from] crate::search::SearchError),
}

impl From<open::OpenError> for IndexError {
    fn from(e: open::OpenError) -> IndexError {
        match e {
            open::OpenError::Store(e) => IndexError::Store(e),
            open::OpenError::State(e) => IndexError::State(e),
        }
    }
}

type Result<T, E = IndexError> = std::result::Result<T, E>;

/// What to index.
#[derive(Debug, Clone, Default)]
pub struct IndexOptions {
    /// Tips to walk back from (default `HEAD`); `A..B` excludes what A reaches.
    pub revs: Vec<String>,
    /// How far back to look.
    pub window: Window,
    pub diff: DiffOptions,
}

/// How far back an index run looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Window {
    /// Back to the commits already noted (what the hooks and a plain
    /// `index` do: everything new since the last run).
    #[default]
    New,
    /// Every commit the tips reach, through those already noted.
    All,
    /// Commits from this time on (seconds since the epoch), through those
    /// already noted.
    Since(i64),
    /// Commits of the last N days before the newest commit the tips reach
    /// (a repository idle for a year still has its last N days indexed).
    Days(u64),
}

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexReport {
    /// Commits whose note this run computed.
    pub computed: usize,
    /// Commits whose existing note (from an earlier run or a remote) was used.
    pub imported: usize,
    /// Notes that failed validation and were recomputed: (commit, reason).
    pub rejected: Vec<(String, String)>,
    /// Commits loaded into the store.
    pub loaded: usize,
    /// Commits a killed writer had loaded only in part, loaded again.
    pub reloaded: usize,
    /// Commits at a shallow clone's boundary, skipped (their parent is missing).
    pub shallow: Vec<String>,
    pub notes_commits: usize,
    /// Batches loaded into the store, one transaction each.
    pub store_loads: usize,
    /// The store was rewritten compactly: its size before and after, or
    /// why that failed (the store is then as it was).
    pub compacted: Option<Result<(u64, u64), String>>,
    /// The code graph moved to `HEAD`.
    pub graph: Option<crate::codegraph::GraphReport>,
    /// The search index caught up with the store.
    pub search: Option<crate::search::SearchReport>,
    /// The semantic index caught up with the graph's commit (with
    /// `diffidx.embed.model` set), or why it could not: the records and
    /// the other indexes are written all the same.
    pub semantic: Option<std::result::Result<crate::semantic::SemanticReport, String>>,
    /// Fusion weights fitted to this repository's history (once per
    /// embedding model), or why they could not be.
    pub fusion: Option<std::result::Result<crate::semantic::tune::Fitted, String>>,
    /// Change summaries written by the chat model (with
    /// `diffidx.llm.model` set), or why none could be: a warning, like
    /// `semantic`.
    pub change_summaries: Option<std::result::Result<crate::semantic::deltas::DeltaReport, String>>,
    /// File and directory summaries (with both models set), or why not.
    pub summary_tree: Option<std::result::Result<crate::semantic::tree::TreeReport, String>>,
    /// Where the time went, per stage.
    pub times: IndexTimes,
    /// Blobs parsed diffing the computed commits, and cache hits.
    pub blobs: BlobCounts,
    /// Threads the commits were diffed on (0 when none was computed).
    pub diff_threads: usize,
    /// File versions this run's computed notes skipped whole (binary, too
    /// large, over a per-file budget, missing), by problem.
    pub skipped: BTreeMap<diffidx_core::note::Problem, Skips>,
    /// Paths of the deltas loaded (where search documents may change).
    pub(crate) touched: BTreeSet<String>,
}

/// Time per stage of a run. The diff stages are those of the commits the
/// run computed, on the diffing thread beside the writer (so the stages
/// add up to more than the run); the code graph's own parsing is in
/// `graph`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IndexTimes {
    /// Loading notes the store lacked (a fetch, a rebuild, a crash).
    pub sync: Duration,
    /// Finding the commits to index.
    pub walk: Duration,
    /// Diffing the computed commits (tree diff, read, parse, extract, label).
    pub diff: diffidx_core::differ::DiffTimes,
    /// Serializing and writing notes (blobs, trees, notes commits).
    pub notes: Duration,
    /// Opening the store and loading batches into it.
    pub store: Duration,
    pub graph: Duration,
    pub search: Duration,
    /// Chunking and embedding for the semantic index.
    pub semantic: Duration,
    /// Asking the chat model (change summaries, file and directory
    /// summaries).
    pub llm: Duration,
    /// Packing notes and compacting the store after a large run.
    pub compact: Duration,
    /// The writer, idle until the next commit was diffed (diffing is the
    /// bottleneck when this is large).
    pub waiting_for_diffs: Duration,
    /// The diffing thread, blocked until the writer took a record (the
    /// notes and the store are the bottleneck when this is large).
    pub waiting_for_writer: Duration,
    pub total: Duration,
}

impl IndexTimes {
    /// The diffing thread's stages and their times.
    pub fn diffing_stages(&self) -> [(&'static str, Duration); 6] {
        [
            ("tree diff", self.diff.tree_diff),
            ("read blobs", self.diff.read),
            ("parse", self.diff.parse),
            ("extract", self.diff.extract),
            ("label", self.diff.label),
            ("blocked", self.waiting_for_writer),
        ]
    }

    /// The writer's stages (the run's own thread), in the order they run.
    pub fn writer_stages(&self) -> [(&'static str, Duration); 10] {
        [
            ("sync", self.sync),
            ("walk", self.walk),
            ("notes", self.notes),
            ("store", self.store),
            ("idle", self.waiting_for_diffs),
            ("graph", self.graph),
            ("search", self.search),
            ("semantic", self.semantic),
            ("llm", self.llm),
            ("compact", self.compact),
        ]
    }
}

/// How many file versions were skipped for one reason, and the first one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skips {
    pub count: usize,
    /// The commit and path of the first.
    pub first: (String, String),
}

impl IndexReport {
    /// Counts the files a computed note skipped.
    fn count_skips(&mut self, note: &diffidx_core::NoteDocument) {
        for diagnostic in note.diagnostics.iter().filter(|d| d.problem.is_skip()) {
            self.skipped
                .entry(diagnostic.problem)
                .and_modify(|s| s.count += 1)
                .or_insert_with(|| Skips {
                    count: 1,
                    first: (
                        note.commit.clone().unwrap_or_default(),
                        diagnostic.path.clone(),
                    ),
                });
        }
    }
}

/// Progress callbacks for a terminal front end.
pub trait Progress {
    fn start(&mut self, _total: usize) {}
    fn advance(&mut self, _done: usize) {}
    /// Another writer holds the lock (its pid, when known): this waits.
    fn waiting_for(&mut self, _holder: Option<u32>) {}
}

impl Progress for () {}

/// Indexes every commit reachable from the options' revisions that has no
/// note yet (oldest first), after bringing the store up to date with the
/// notes (a crash, a fetch, a rebuild).
pub fn index(
    repo: &Repo,
    options: &IndexOptions,
    progress: &mut dyn Progress,
) -> Result<IndexReport> {
    let _lock = WriterLock::acquire(
        &StateDir::of(repo),
        WriterLock::default_wait(),
        &mut |holder| progress.waiting_for(holder),
    )?;
    index_locked_with(repo, options, progress)
}

/// A run of this many commits writes its notes as packs; a run that
/// imported or wrote this many notes as loose objects packs them at its end.
pub const PACK_AFTER: usize = 200;

pub(crate) fn index_locked(repo: &Repo, options: &IndexOptions) -> Result<IndexReport> {
    index_locked_with(repo, options, &mut ())
}

fn index_locked_with(
    repo: &Repo,
    options: &IndexOptions,
    progress: &mut dyn Progress,
) -> Result<IndexReport> {
    let run_started = Instant::now();
    let mut report = IndexReport::default();
    let mut notes = repo.notes()?;
    import_remote_notes(repo, &mut notes, &mut report)?;
    let mut differ = SymbolDiffer::new(repo, options.diff.clone())?;
    // One handle for the run: each close checkpoints the store and seals it
    // (a hash of every byte), so it is closed at the end, and while diffing
    // only by a long run (`run_store`).
    let state = StateDir::of(repo);
    let mut store = run_store::RunStore::open(&state)?;
    // Nothing loaded yet: whatever this run loads makes the whole store.
    let fresh_store = store.get()?.loaded_notes_tip()?.is_none();
    let (before, synced) = sync_from_notes(
        &mut store,
        &mut notes,
        &mut differ,
        &options.diff,
        &mut report,
    )?;
    report.times.sync = run_started
        .elapsed()
        .saturating_sub(report.times.notes + report.times.store);
    let walk_started = Instant::now();

    // Notes made elsewhere may cover parts of history only: then walk all of
    // it once instead of trusting that a noted commit's ancestors are noted.
    // A window that reaches further back than the notes walks through them.
    let trust_noted =
        options.window == Window::New && report.imported == 0 && report.rejected.is_empty();
    let (todo, shallow) = walk::commits_to_index(repo, &mut notes, options, trust_noted)?;
    report.times.walk = walk_started.elapsed();
    report.shallow = shallow;
    progress.start(todo.len());
    // A long run writes its notes a pack per batch rather than a file per
    // object; a short one (a hook) keeps loose objects, not a pack each.
    let packed_notes = todo.len() >= PACK_AFTER;
    if packed_notes {
        notes.pack_writes();
    }
    let mut known = diff_and_write(
        &mut store,
        &todo,
        &options.diff,
        NoteSource::Computed,
        &mut notes,
        &mut report,
        progress,
    )?;
    known.files = known.files.or(synced.files);
    known.facts.extend(synced.facts);
    let search = update_views(&mut differ, store.get()?, before, known, &mut report)?;
    drop(store);
    let large_run = report.computed + report.imported >= PACK_AFTER;
    if large_run && !packed_notes {
        // Packed, the notes take a fraction of the room; a failure costs
        // only that room (git gc packs them later).
        let packing = Instant::now();
        let _ = repo.pack_loose_objects();
        report.times.compact += packing.elapsed();
    }
    // Compacting costs a fifth of a medium backfill (sharkdp/fd: 0.6 s of
    // 3.5) and saved it 0.4 MiB, so a run compacts only a store past the
    // bloat rule, large run or not. A store one load made from nothing
    // has little slack (App-vNext/Polly's backfill: 52.4 MiB, 43 compacted,
    // at a cost of 1.1 s of 9.4): its size is where the rule measures growth
    // from, as if compacted. Slack comes with later loads, each of which
    // rewrites the relationship lists it adds to.
    if fresh_store && report.store_loads == 1 {
        remember_compact_size(&state, store::disk_size(&state.store()));
    }
    finish_views(search, bloated(&state).then_some(&state), &mut report)?;
    // Every note is loaded now: a rebuild that was killed is finished.
    let _ = std::fs::remove_file(state.rebuilding());
    report.times.total = run_started.elapsed();
    Ok(report)
}

/// Records in flight between the diffing thread and the writer: enough to
/// smooth out a slow commit or a store load, few enough to bound memory.
const IN_FLIGHT: usize = 1000;

/// Diffs `todo` (oldest first) on other threads while this one writes
/// their notes and loads them into the store in batches, in order. Diffing
/// is the larger half of a backfill, so it gets two threads sharing one
/// cache ([`diffidx_core::differ::parallel`]) and the writer shares a core.
///
/// When either side fails the other stops: records already diffed are
/// still written (each note is whole), then the first error is returned.
///
/// Returns `HEAD`'s source files and the code-graph facts of those the
/// diffing parsed, so that the graph after the run lists and parses none
/// of them again.
fn diff_and_write(
    store: &mut run_store::RunStore<'_>,
    todo: &[diffidx_core::git::CommitInfo],
    options: &DiffOptions,
    source: NoteSource,
    notes: &mut Notes<'_>,
    report: &mut IndexReport,
    progress: &mut dyn Progress,
) -> Result<Known> {
    if todo.is_empty() {
        return Ok(Known::default());
    }
    // A long run reads much of the packs: through a store of its own their
    // pages are let go when the diffing ends (`Repo::share_apart`). A short
    // one (a hook's) reads a few objects, not worth a second open.
    let shared = if todo.len() >= PACK_AFTER {
        notes.repo().share_apart()?
    } else {
        notes.repo().share()
    };
    let threads = crate::settings::diff_threads();
    report.diff_threads = threads;
    let files = graph_files(notes.repo());
    let facts_of = files
        .as_ref()
        .map(|(_, files)| Arc::new(files.iter().map(|f| f.blob).collect::<HashSet<ObjectId>>()));
    std::thread::scope(|scope| {
        let (sender, receiver) = std::sync::mpsc::sync_channel::<CommitRecord>(IN_FLIGHT);
        let differ = std::thread::Builder::new().name("diffidx-diff".into());
        let differ = differ.spawn_scoped(scope, move || -> Result<(Diffed, Duration)> {
            let mut blocked = Duration::ZERO;
            let diffed = diffidx_core::differ::parallel::diff_commits(
                &shared,
                options,
                todo,
                threads,
                facts_of,
                &mut |record| {
                    let sending = Instant::now();
                    let sent = sender.send(record).is_ok(); // not sent: the writer failed
                    blocked += sending.elapsed();
                    sent
                },
            )?;
            Ok((diffed, blocked))
        });
        let differ = match differ {
            Ok(differ) => differ,
            Err(e) => return Err(IndexError::Thread(e.to_string())),
        };
        let written = write_records(store, todo, source, receiver, notes, report, progress);
        let diffed = match differ.join() {
            Ok(diffed) => diffed,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        written?;
        let (diffed, blocked) = diffed?;
        // Added up: a run may diff twice (the notes it loads, then the
        // commits it indexes).
        let stats = DiffStats {
            blobs: report.blobs,
            time: report.times.diff,
        } + diffed.stats;
        report.blobs = stats.blobs;
        report.times.diff = stats.time;
        report.times.waiting_for_writer += blocked;
        Ok(Known {
            files,
            facts: diffed.facts,
        })
    })
}

/// `HEAD` and its source files, where the code graph goes after the run
/// (`None` without a graph or a `HEAD`).
fn graph_files(repo: &Repo) -> Option<(ObjectId, Vec<diffidx_core::git::FileSide>)> {
    if !crate::settings::code_graph_enabled(repo) {
        return None;
    }
    let head = repo.resolve_commit("HEAD").ok()?;
    Some((head, crate::codegraph::source_files(repo, head).ok()?))
}

/// Where the note of a diffed commit comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NoteSource {
    /// The differ's: written as the commit's note.
    Computed,
    /// The note the commit has (fetched, or kept through a `rebuild`): the
    /// differ gives only the files it touched, unless that note fails
    /// validation and is replaced by the computed one.
    Stored,
}

/// The writer's half of [`diff_and_write`]: stages each record's note (or
/// takes the stored one, see [`NoteSource`]) and makes its rows, then lets
/// the record go; writes the notes and loads the rows whenever a batch is
/// full ([`BATCH`], [`BATCH_ROWS`]), and what is left when the differ stops.
fn write_records(
    store: &mut run_store::RunStore<'_>,
    todo: &[diffidx_core::git::CommitInfo],
    source: NoteSource,
    receiver: std::sync::mpsc::Receiver<CommitRecord>,
    notes: &mut Notes<'_>,
    report: &mut IndexReport,
    progress: &mut dyn Progress,
) -> Result<()> {
    let mut batch = Batch::of(store.get()?, todo)?;
    // Read what the batches rely on; the first load opens it again.
    store.close_for(todo.len());
    let mut done = 0;
    loop {
        let waiting = Instant::now();
        let Ok(record) = receiver.recv() else {
            break; // every commit is diffed, or the differ failed
        };
        report.times.waiting_for_diffs += waiting.elapsed();
        let staging = Instant::now();
        let record = match source {
            NoteSource::Computed => Some(keep_computed(notes, record, report)?),
            NoteSource::Stored => take_stored_note(notes, record, report)?,
        };
        report.times.notes += staging.elapsed();
        done += 1;
        progress.advance(done);
        let Some(record) = record else {
            continue;
        };
        let adding = Instant::now();
        batch.add(&record, report);
        report.times.store += adding.elapsed();
        if batch.is_full() {
            flush(store.get()?, notes, &mut batch, report)?;
        }
    }
    // The diffing has ended and freed its cache: its pages go back before
    // the load allocates its own, and the load's as it frees them (see
    // `crate::memory`).
    crate::memory::release_from_now_on();
    flush(store.get()?, notes, &mut batch, report)
}

/// A computed record, its note staged.
fn keep_computed(
    notes: &mut Notes<'_>,
    record: CommitRecord,
    report: &mut IndexReport,
) -> Result<CommitRecord> {
    notes.stage(record.info.id, &record.note.to_json())?;
    report.computed += 1;
    report.count_skips(&record.note);
    Ok(record)
}

/// A computed record with the note its commit has, if that is valid; else
/// the computed one, staged in its place (and the stored one reported).
/// `None` when the commit has no note (any more).
fn take_stored_note(
    notes: &mut Notes<'_>,
    record: CommitRecord,
    report: &mut IndexReport,
) -> Result<Option<CommitRecord>> {
    Ok(match notes.read_validated(&record.info)? {
        Some(Ok(note)) => {
            report.imported += 1;
            Some(CommitRecord { note, ..record })
        }
        Some(Err(reason)) => {
            report.rejected.push((record.info.id.to_string(), reason));
            Some(keep_computed(notes, record, report)?)
        }
        None => None,
    })
}

/// The commits of one notes commit and store transaction, as the rows the
/// store will load: each record's rows are made as it comes, so a batch
/// does not keep a thousand records (every touched file's symbols) alive.
struct Batch {
    rows: crate::graph::RowsBuilder,
    /// Commits added since the last flush.
    commits: usize,
    /// The most commits a batch takes ([`BATCH`], or
    /// `DIFFIDX_BATCH_COMMITS`, which tests set to cut a short history in
    /// batches).
    max_commits: usize,
    /// Commits the store holds or this run made rows for: their rows are
    /// not made again (loading a commit twice must change nothing).
    stored: HashSet<String>,
}

impl Batch {
    /// An empty batch for a run that will add `commits`.
    fn of<'a>(
        store: &store::Store,
        commits: impl IntoIterator<Item = &'a diffidx_core::git::CommitInfo>,
    ) -> Result<Batch> {
        let shas: Vec<String> = commits.into_iter().map(|c| c.id.to_string()).collect();
        let max_commits = std::env::var("DIFFIDX_BATCH_COMMITS")
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|&n| n > 0)
            .unwrap_or(BATCH);
        Ok(Batch {
            rows: crate::graph::RowsBuilder::default(),
            commits: 0,
            max_commits,
            stored: store.stored_commits(shas.iter().map(String::as_str))?,
        })
    }

    /// Whether the batch is to be written now.
    fn is_full(&self) -> bool {
        self.commits >= self.max_commits || self.rows.row_count() >= BATCH_ROWS
    }

    fn add(&mut self, record: &CommitRecord, report: &mut IndexReport) {
        // Once: a commit met twice is loaded by its first record.
        if self.stored.insert(record.info.id.to_string()) {
            self.rows.add(record);
        }
        self.commits += 1;
        for delta in &record.note.deltas {
            report.touched.insert(delta.path.clone());
            if let Some(old) = &delta.old_path {
                report.touched.insert(old.clone());
            }
        }
    }
}

/// Moves the code graph to `HEAD` once `HEAD` is indexed (an unborn or
/// unindexed `HEAD` leaves it where it is), then brings the search index
/// to the store's state, reading the words of the files the graph parsed,
/// and runs the semantic stages that are configured.
///
/// `before` is the store's search stamp before the run loaded anything.
/// Returns the search index's documents when they are still to be written
/// (no semantic stage needed them): writing needs no store, so
/// [`finish_views`] writes them beside the compaction.
fn update_views(
    differ: &mut SymbolDiffer<'_>,
    store: &store::Store,
    before: Option<crate::search::Stamp>,
    known: Known,
    report: &mut IndexReport,
) -> Result<Option<crate::search::PreparedSearch>> {
    let repo = differ.repo();
    let state = StateDir::of(repo);
    let mut fresh = BTreeMap::new();
    let started = Instant::now();
    if crate::settings::code_graph_enabled(repo) {
        if let Ok(head) = repo.resolve_commit("HEAD") {
            if store.has_commit(&head.to_string())? {
                report.graph = crate::codegraph::update(store, differ, head, known, &mut fresh)?;
            }
        }
    }
    let searching = Instant::now();
    report.times.graph += searching - started;
    let prepared = crate::search::prepare(
        store,
        &state,
        differ,
        before.as_ref(),
        &report.touched,
        &fresh,
    )?;
    report.times.search += searching.elapsed();
    // Embedding on demand only: searches embed what they read.
    let semantic = crate::semantic::configured_source(repo)
        .filter(|_| !crate::semantic::embeds_on_demand(repo));
    let chat = crate::semantic::chat::configured_chat(repo);
    // The semantic stages search the text index: it is written first.
    // Without them, the caller writes it beside the compaction.
    let prepared = match prepared {
        Some(prepared) if semantic.is_some() || chat.is_some() => {
            let writing = Instant::now();
            report.search = Some(prepared.write()?);
            report.times.search += writing.elapsed();
            None
        }
        prepared => prepared,
    };
    if let Some(source) = semantic {
        let embedding = Instant::now();
        report.semantic = source
            .as_ref()
            .map_err(|e| crate::semantic::SemanticError::Setting(e.to_string()))
            .and_then(|source| crate::semantic::update(store, &state, differ, source, &fresh))
            .map_err(|e| e.to_string())
            .transpose();
        // Fusion weights fitted to this history, once per model.
        if let (Ok(source), false) = (&source, matches!(report.semantic, Some(Err(_)))) {
            report.fusion = store
                .reader()
                .map_err(crate::semantic::SemanticError::from)
                .and_then(|reader| crate::semantic::tune::update(&reader, &state, source))
                .map_err(|e| e.to_string())
                .transpose();
        }
        report.times.semantic += embedding.elapsed();
    }
    if let Some(chat) = chat {
        let asking = Instant::now();
        ask_chat_model(differ, store, &state, chat, report);
        report.times.llm += asking.elapsed();
    }
    Ok(prepared)
}

/// The chat model's part of an index run: change summaries, then file and
/// directory summaries (with embeddings on), sharing one question budget.
/// Failures are warnings in `report`; nothing else depends on them.
fn ask_chat_model(
    differ: &mut SymbolDiffer<'_>,
    store: &store::Store,
    state: &StateDir,
    chat: std::result::Result<crate::semantic::chat::ChatSettings, crate::semantic::SemanticError>,
    report: &mut IndexReport,
) {
    use crate::semantic::chat::{model_name, open_service, Asker};
    let repo = differ.repo();
    let chat = match chat {
        Ok(chat) => chat,
        Err(e) => {
            report.change_summaries = Some(Err(e.to_string()));
            return;
        }
    };
    let service = open_service(&chat);
    let mut asker = match Asker::open(state, &service, model_name(&chat.service)) {
        Ok(asker) => asker,
        Err(e) => {
            report.change_summaries = Some(Err(e.to_string()));
            return;
        }
    };
    let embedding = match crate::semantic::configured_source(repo) {
        Some(Ok(source)) if !matches!(report.semantic, Some(Err(_))) => Some(source),
        _ => None,
    };
    let tree = chat.summaries && embedding.is_some();
    // With both uses on, change summaries get half the budget, so a long
    // history to summarize never starves the tree; the tree gets the rest.
    asker.limit(match tree {
        true => chat.budget / 2,
        false => chat.budget,
    });
    if chat.deltas {
        let done = store
            .reader()
            .map_err(crate::semantic::SemanticError::from)
            .and_then(|reader| crate::semantic::deltas::update(repo, &reader, differ, &mut asker));
        report.change_summaries = Some(done.map_err(|e| e.to_string()));
    }
    if let (true, Some(source)) = (tree, embedding) {
        asker.limit(chat.budget.saturating_sub(asker.asked));
        report.summary_tree = crate::semantic::tree::update(repo, state, &source, &mut asker)
            .map_err(|e| e.to_string())
            .transpose();
    }
}

/// Copies into our notes the notes fetched from remotes
/// (`refs/notes/diffidx-remote/*`, see `init --share`) for commits we have
/// and have no note for, after validating each; invalid ones are reported
/// and left behind (the commits get computed instead). Notes computed by the
/// same version for the same commit are identical, so nothing conflicts.
fn import_remote_notes(repo: &Repo, notes: &mut Notes<'_>, report: &mut IndexReport) -> Result<()> {
    for name in repo.remote_notes_refs()? {
        let mut theirs = repo.notes_at(&name)?;
        for (commit, _) in theirs.list()? {
            if !repo.gix().has_object(commit) || notes.get_id(commit)?.is_some() {
                continue;
            }
            let info = repo.commit(commit)?;
            match theirs.read_validated(&info)? {
                Some(Ok(note)) => notes.stage(commit, &note.to_json())?,
                Some(Err(reason)) => report
                    .rejected
                    .push((commit.to_string(), format!("{reason} (from {name})"))),
                None => {}
            }
        }
    }
    if notes.staged() > 0 {
        notes.commit("diffidx: import notes fetched from remotes")?;
        report.notes_commits += 1;
    }
    Ok(())
}

/// Loads into the store every noted commit it lacks. Notes are untrusted
/// (they may come from a remote): a valid one is loaded as it is, an invalid
/// one is reported and its commit recomputed, replacing the note.
///
/// The commits are diffed all the same, on the run's threads as an index
/// run diffs them: the store keeps every symbol of each file a commit
/// touched, and which files those are (a comment-only edit touches a file
/// and moves its symbols' lines) only the diff says. So a store loaded
/// from notes is the store the run that wrote them loaded, and as fast to
/// make. Commits at a shallow clone's boundary cannot be diffed: theirs
/// are the files their note names, parsed alone.
///
/// Returns the store's search stamp before it loaded anything (`None` for
/// a store that cannot say), and what the diffing parsed of `HEAD`.
fn sync_from_notes(
    store: &mut run_store::RunStore<'_>,
    notes: &mut Notes<'_>,
    differ: &mut SymbolDiffer<'_>,
    diff: &DiffOptions,
    report: &mut IndexReport,
) -> Result<(Option<crate::search::Stamp>, Known)> {
    let repo = differ.repo();
    let tip = notes.tip().map(|t| t.to_string());
    let before = store
        .get()?
        .reader()
        .and_then(|r| crate::search::Stamp::of(&r))
        .ok();
    let unclean = store.get()?.opened_unclean();
    if !unclean && (tip.is_none() || store.get()?.loaded_notes_tip()? == tip) {
        return Ok((before, Known::default()));
    }
    let mut have = store.get()?.commits()?;
    if unclean {
        // The last writer was killed: its last load may hold a commit but
        // not all of its changes, or even a commit whose note it never
        // committed (the two are written side by side). Such commits are
        // forgotten, then loaded again from their notes below or, without
        // one, computed again by the run.
        let partial = partly_loaded(notes, store.get()?)?;
        store.get()?.forget_commits(&partial)?;
        for sha in &partial {
            have.remove(sha);
        }
        report.reloaded = partial.len();
    }
    let mut missing = Vec::new();
    for (commit, _) in notes.list()? {
        if have.contains(&commit.to_string()) {
            continue;
        }
        // A note for a commit this clone does not have is left alone.
        if let Ok(info) = repo.commit(commit) {
            missing.push(info);
        }
    }
    // Parents before children, in the order an index run from `HEAD`
    // loads them: the store's load order breaks ties between commits of
    // the same second.
    let head: Vec<ObjectId> = repo.resolve_commit("HEAD").into_iter().collect();
    let (boundary, diffable): (Vec<_>, Vec<_>) = walk::in_graph_order(missing, &head)
        .into_iter()
        .partition(|info| info.parents.iter().any(|p| !repo.gix().has_object(*p)));
    load_boundary_notes(store.get()?, notes, differ, &boundary, report)?;
    if diffable.len() >= PACK_AFTER {
        notes.pack_writes(); // for the notes that fail validation
    }
    let known = diff_and_write(
        store,
        &diffable,
        diff,
        NoteSource::Stored,
        notes,
        report,
        &mut (),
    )?;
    // Nothing was staged: record the tip as loaded all the same.
    let tip = notes.tip().map(|t| t.to_string());
    let store = store.get()?;
    if store.loaded_notes_tip()? != tip {
        store.load(&[], tip.as_deref())?;
    }
    Ok((before, known))
}

/// Loads the noted commits at a shallow clone's boundary (their parent is
/// missing), with the files their note names: an invalid note is reported
/// and skipped, since its commit cannot be diffed here.
fn load_boundary_notes(
    store: &store::Store,
    notes: &mut Notes<'_>,
    differ: &mut SymbolDiffer<'_>,
    boundary: &[diffidx_core::git::CommitInfo],
    report: &mut IndexReport,
) -> Result<()> {
    if boundary.is_empty() {
        return Ok(());
    }
    let mut batch = Batch::of(store, boundary)?;
    for info in boundary {
        match notes.read_validated(info)? {
            Some(Ok(note)) => {
                let files = differ.snapshot_files(info, &note)?;
                let record = CommitRecord {
                    info: info.clone(),
                    note,
                    files,
                };
                batch.add(&record, report);
                report.imported += 1;
            }
            Some(Err(reason)) => report.rejected.push((info.id.to_string(), reason)),
            None => {}
        }
        if batch.is_full() {
            flush(store, notes, &mut batch, report)?;
        }
    }
    flush(store, notes, &mut batch, report)
}

/// The commits in the store that lack a note, or whose changes differ in
/// number from their note's deltas (one change per delta). Reads the note of
/// every stored commit: only after a writer was killed.
fn partly_loaded(notes: &mut Notes<'_>, store: &store::Store) -> Result<Vec<String>> {
    let counts = store.change_counts()?;
    let repo = notes.repo();
    let mut partial = Vec::new();
    for (sha, stored) in counts {
        let Some(info) = ObjectId::from_hex(sha.as_bytes())
            .ok()
            .and_then(|id| repo.commit(id).ok())
        else {
            continue; // not a commit of this clone: nothing to load it from
        };
        match notes.read_validated(&info)? {
            None => partial.push(sha),
            Some(Ok(note)) if note.deltas.len() != stored => partial.push(sha),
            // A note that fails validation is reported when it is loaded.
            Some(_) => {}
        }
    }
    Ok(partial)
}

/// Writes the staged notes (one notes commit), then loads the batch into the
/// store, which is held open only for that; returns it, for a caller that
/// writes more right after (the code graph), else it closes when dropped.
fn flush(
    store: &store::Store,
    notes: &mut Notes<'_>,
    batch: &mut Batch,
    report: &mut IndexReport,
) -> Result<()> {
    if batch.commits == 0 && notes.staged() == 0 {
        return Ok(());
    }
    let message = format!("diffidx: index {} commits", batch.commits);
    crate::fault::point("notes-staged");
    let rows = batch.rows.finish();
    // The notes are committed while the store writes the batch's rows on
    // another thread (App-vNext/Polly: 0.2 s beside 0.9); the store's
    // transaction commits only after the notes did, with their tip, so a
    // commit the store holds always has its note.
    let (tip_sender, tip) = std::sync::mpsc::channel();
    let (committed, loaded) = std::thread::scope(|scope| {
        let loader = scope.spawn(move || {
            let loading = Instant::now();
            let loaded = store.load_rows_then(rows, || tip.recv().ok().flatten());
            (loaded, loading.elapsed())
        });
        let started = Instant::now();
        crate::fault::stall(crate::fault::STORE_HALF_COMMITTED_BEFORE_NOTES);
        let committed = notes.commit(&message);
        if committed.is_ok() {
            crate::fault::point("notes-committed");
        }
        let tip = committed
            .is_ok()
            .then(|| notes.tip().map(|t| t.to_string()));
        report.times.notes += started.elapsed();
        // A loader that failed already hung up: its error is reported below.
        let _ = tip_sender.send(tip);
        let loaded = match loader.join() {
            Ok(loaded) => loaded,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        (committed, loaded)
    });
    if committed?.is_some() {
        report.notes_commits += 1;
    }
    let (loaded, took) = loaded;
    report.times.store += took;
    loaded?;
    report.loaded += batch.commits;
    report.store_loads += 1;
    batch.commits = 0;
    Ok(())
}

/// Recreates the store from the notes alone (no commit is recomputed unless
/// its note fails validation).
pub fn rebuild(
    repo: &Repo,
    diff: &DiffOptions,
    progress: &mut dyn Progress,
) -> Result<IndexReport> {
    let state = StateDir::of(repo);
    let _lock = WriterLock::acquire(&state, WriterLock::default_wait(), &mut |holder| {
        progress.waiting_for(holder)
    })?;
    rebuild_locked(repo, diff, &state)
}

/// Writes the search index's `prepared` documents on a thread of their own
/// while this one compacts the store in `compact_store`, if given: the two
/// touch different files, and the compaction leaves a core free.
fn finish_views(
    prepared: Option<crate::search::PreparedSearch>,
    compact_store: Option<&StateDir>,
    report: &mut IndexReport,
) -> Result<()> {
    let written = std::thread::scope(|scope| {
        let writer = prepared.map(|prepared| {
            scope.spawn(move || {
                let started = Instant::now();
                (prepared.write(), started.elapsed())
            })
        });
        if let Some(state) = compact_store {
            let compacting = Instant::now();
            report.compacted = Some(compact(state));
            report.times.compact += compacting.elapsed();
        }
        writer.map(|writer| match writer.join() {
            Ok(written) => written,
            Err(panic) => std::panic::resume_unwind(panic),
        })
    });
    if let Some((written, took)) = written {
        report.times.search += took;
        report.search = Some(written?);
    }
    Ok(())
}

/// Rewrites the store compactly after a large run (see
/// [`store::Store::compact`]); the writer lock is held.
fn compact(state: &StateDir) -> std::result::Result<(u64, u64), String> {
    crate::client::release(&state.socket());
    let sizes = store::Store::compact(&state.store(), open::WAIT).map_err(|e| e.to_string())?;
    remember_compact_size(state, sizes.1);
    Ok(sizes)
}

/// Keeps `size` as the store's compact size, the base of [`bloated`] (a
/// failure only makes the next run compact sooner).
fn remember_compact_size(state: &StateDir, size: u64) {
    let _ = std::fs::write(compacted_size_path(state), format!("{size}\n"));
}

/// A store this many times its size after its last compaction (or after
/// the one load that made it), and over [`bloat_floor`], is compacted by
/// the next index run. Kuzu keeps the
/// pages each transaction's copy-on-write freed, so a store written one
/// hook run per commit grows without bound: this repository's own history,
/// replayed one commit per run, made a 314 MB store in 149 runs, and the
/// 150th failed with Kuzu's buffer pool full.
const BLOAT_FACTOR: u64 = 3;

/// Below this a store is not worth compacting: 32 MiB, or
/// `DIFFIDX_COMPACT_FLOOR` bytes (tests compact small stores).
fn bloat_floor() -> u64 {
    std::env::var("DIFFIDX_COMPACT_FLOOR")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(32 << 20)
}

/// Where the store's size after its last compaction (or its one load) is
/// kept.
fn compacted_size_path(state: &StateDir) -> std::path::PathBuf {
    state.store().with_extension("lbdb.compacted")
}

/// Whether the store has grown [`BLOAT_FACTOR`] times since it was last
/// compacted (or past [`bloat_floor`] when it never was).
fn bloated(state: &StateDir) -> bool {
    let size = store::disk_size(&state.store());
    let base: u64 = std::fs::read_to_string(compacted_size_path(state))
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0);
    size > bloat_floor().max(base.saturating_mul(BLOAT_FACTOR))
}

/// [`rebuild`], with the writer lock already held.
fn rebuild_locked(repo: &Repo, diff: &DiffOptions, state: &StateDir) -> Result<IndexReport> {
    let started = Instant::now();
    crate::client::release(&state.socket()); // a query server must not hold the files we delete
    let marker = state.rebuilding();
    std::fs::write(&marker, b"").map_err(|source| StateError::Io {
        path: marker.clone(),
        source,
    })?;
    store::remove_files(&state.store(), None);
    let _ = std::fs::remove_dir_all(state.search());
    crate::codegraph::FactFiles::new(state.graph_facts()).clear();
    let mut report = IndexReport::default();
    let mut notes = repo.notes()?;
    let mut differ = SymbolDiffer::new(repo, diff.clone())?;
    let mut store = run_store::RunStore::open(state)?;
    let (_, known) = sync_from_notes(&mut store, &mut notes, &mut differ, diff, &mut report)?;
    let search = update_views(&mut differ, store.get()?, None, known, &mut report)?;
    drop(store);
    finish_views(
        search,
        (report.loaded >= PACK_AFTER).then_some(state),
        &mut report,
    )?;
    let _ = std::fs::remove_file(&marker);
    report.times.total = started.elapsed();
    Ok(report)
}
