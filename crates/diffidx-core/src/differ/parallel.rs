//! Diffing a run of commits on two threads.
//!
//! Parsing and extracting file versions is most of a backfill's work, and
//! each file's versions must meet the same cache: the new side of one commit
//! is the old side of the next, and its syntax tree is the base the version
//! after it is reparsed from incrementally. So the two threads share one
//! cache, and a version one thread is loading is waited for by the other
//! (see `super::cache`).
//!
//! A planning thread diffs the trees of the next commits; the calling
//! thread labels each commit once its files are loaded (moves cross files,
//! so labelling sees every file) and hands the records on in order. Both
//! load files, each taking the next its path gives it and else the next the
//! other left: a fixed split by path let one thread wait while the other
//! had a run of commits to itself (App-vNext/Polly: 1.1 s of 6.6 on each
//! side). Each thread has its own [`SymbolDiffer`] (parsers, repository
//! handle); the records are the same, byte for byte, as one differ's.
//!
//! A long run (a backfill) is loaded file by file instead (`super::by_file`):
//! in commit order the cache must keep a tree of every file that changes
//! again, most of a backfill's memory.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use gix::ObjectId;

use super::cache::SharedCache;
use super::{
    join, record_of, spawn, DiffOptions, Diffed, FileChange, LoadedChange, SymbolDiffer, TreePair,
};
use crate::error::{Error, Result};
use crate::git::{CommitInfo, SharedRepo};
use crate::CommitRecord;

/// Commits a partial clone fetches the missing blobs of at once.
const PREFETCH: usize = 1000;

/// Commits whose tree diffs may wait to be labelled: the planning thread
/// stops there, so loaded sides held for labelling stay bounded.
const AHEAD: usize = 64;

/// Files loaded and waiting to be labelled past which no commit is
/// planned (a history of commits of thousands of files each).
const FILES_AHEAD: usize = 4096;

/// Files not yet taken below which the planning thread plans the next
/// commit rather than load one: the labelling thread never runs dry, and
/// planning runs no further ahead than that.
const TAKE_AHEAD: usize = 32;

/// Diffs `commits` in order and hands each record to `sink`, which returns
/// false to stop early. On two `threads` if asked, except in a partial clone
/// (whose fetches of missing blobs are made in batches, one at a time). An
/// error stops the run after every earlier record was handed on. The parse
/// of a blob in `facts_of` keeps its code-graph facts as well
/// ([`SymbolDiffer::want_facts_of`]).
///
/// A run of 200 commits or more is diffed file by file, a window of commits
/// at a time (`super::by_file`), with the same records.
///
/// On two threads, one plans (diffs the trees of the next commits) and the
/// other labels each commit in order once its files are loaded; both load
/// files, each the next whose path falls to it and else the next the other
/// left (see `Plan::take`), so neither waits while there is work. They share
/// one cache.
pub fn diff_commits(
    shared: &SharedRepo,
    options: &DiffOptions,
    commits: &[CommitInfo],
    threads: usize,
    facts_of: Option<Arc<HashSet<ObjectId>>>,
    sink: &mut dyn FnMut(CommitRecord) -> bool,
) -> Result<Diffed> {
    let repo = shared.to_local();
    if super::by_file::suits(&repo, commits.len()) {
        let window = super::by_file::window();
        return super::by_file::diff_commits(
            shared, options, commits, threads, window, facts_of, sink,
        );
    }
    if threads < 2 || repo.promisor_remote().is_some() {
        let mut differ = SymbolDiffer::for_run(&repo, options.clone(), &facts_of, None)?;
        for chunk in commits.chunks(PREFETCH) {
            differ.prefetch(chunk)?;
            for commit in chunk {
                if !sink(differ.commit_record(commit)?) {
                    return Ok(Diffed::of(&mut differ));
                }
            }
        }
        return Ok(Diffed::of(&mut differ));
    }
    let cache = SharedCache::new(options.cache_bytes);
    let board = Board::new();
    std::thread::scope(|scope| {
        let (board, cache) = (&board, &cache);
        let planner_facts = facts_of.clone();
        let planner = spawn(scope, "diffidx-parse", move || -> Result<Diffed> {
            // However it ends, the labelling thread must not wait for it.
            let _done = board.on_drop(|plan| plan.planner_done = true);
            let repo = shared.to_local();
            let differ =
                SymbolDiffer::for_run(&repo, options.clone(), &planner_facts, Some(cache))?;
            plan_and_load(differ, commits, board)
        })?;
        let labelled = {
            let _stop = board.on_drop(|plan| plan.stop = true);
            SymbolDiffer::for_run(&repo, options.clone(), &facts_of, Some(cache))
                .and_then(|differ| label_in_order(differ, commits, board, sink))
        };
        // The planner's own failure explains the labeller's.
        let planned = join(planner)?;
        Ok(labelled?.and(planned))
    })
}

/// The commits planned and not yet labelled, shared by the two threads.
struct Board {
    plan: Mutex<Plan>,
    /// Signalled on every change of the plan.
    changed: Condvar,
}

struct Plan {
    /// Planned commits not yet labelled, oldest first.
    commits: VecDeque<PlannedCommit>,
    /// The position (in the run) of the first of `commits`.
    first: usize,
    /// Files planned that no thread took yet.
    untaken: usize,
    /// Files loaded, not yet labelled.
    loaded: usize,
    /// The planning thread stopped: every commit is planned, one failed,
    /// or the run stops.
    planner_done: bool,
    /// The labelling thread stopped.
    stop: bool,
}

/// One commit's tree diffs (or why they failed), with each file's loaded
/// sides as they come in.
struct PlannedCommit {
    pairs: Result<Vec<PlannedPair>>,
    /// Files not loaded yet.
    missing: usize,
}

/// One tree pair's changed files, and where each stands.
struct PlannedPair {
    files: Vec<FileChange>,
    /// The files no thread took yet, in order: those that fall to the
    /// labelling thread first, and those that fall to the planning thread.
    untaken: [VecDeque<usize>; 2],
    loaded: Vec<Option<Result<LoadedChange>>>,
}

/// A file one thread took to load.
struct Taken {
    /// Position of its commit in the run, tree pair, file.
    at: (usize, usize, usize),
    change: FileChange,
}

/// Runs a closure on the plan when dropped, panicking or not.
struct OnDrop<'b, F: FnMut(&mut Plan)> {
    board: &'b Board,
    then: F,
}

impl<F: FnMut(&mut Plan)> Drop for OnDrop<'_, F> {
    fn drop(&mut self) {
        (self.then)(&mut self.board.lock());
        self.board.changed.notify_all();
    }
}

impl Board {
    fn new() -> Board {
        Board {
            plan: Mutex::new(Plan {
                commits: VecDeque::new(),
                first: 0,
                untaken: 0,
                loaded: 0,
                planner_done: false,
                stop: false,
            }),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Plan> {
        // Every change to the plan is made whole before anything can panic.
        self.plan.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'g>(&self, plan: MutexGuard<'g, Plan>) -> MutexGuard<'g, Plan> {
        self.changed
            .wait(plan)
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn on_drop<F: FnMut(&mut Plan)>(&self, then: F) -> OnDrop<'_, F> {
        OnDrop { board: self, then }
    }
}

impl Plan {
    /// Takes the first file no thread took that falls to the `planner`
    /// (or else to the labeller; see [`falls_to_planner`]), in commit order,
    /// else the first the other thread left: each file's versions mostly
    /// meet the thread that parsed the last one, and neither thread waits
    /// while the other has work. Costs a look at each planned tree pair,
    /// not at each file (a commit may change tens of thousands).
    fn take(&mut self, planner: bool) -> Option<Taken> {
        if self.untaken == 0 {
            return None;
        }
        let (ours, theirs) = (usize::from(planner), usize::from(!planner));
        let mut left = None;
        let mut found = None;
        'scan: for (index, planned) in self.commits.iter().enumerate() {
            let Ok(pairs) = &planned.pairs else { break };
            for (at, pair) in pairs.iter().enumerate() {
                if !pair.untaken[ours].is_empty() {
                    found = Some((index, at, ours));
                    break 'scan;
                }
                if !pair.untaken[theirs].is_empty() {
                    left.get_or_insert((index, at, theirs));
                }
            }
        }
        let (index, at, side) = found.or(left)?;
        let pair = match &mut self.commits[index].pairs {
            Ok(pairs) => &mut pairs[at],
            Err(_) => return None,
        };
        let file = pair.untaken[side].pop_front()?;
        self.untaken -= 1;
        Some(Taken {
            at: (self.first + index, at, file),
            change: pair.files[file].clone(),
        })
    }

    /// Keeps what loading a taken file gave.
    fn put(&mut self, at: (usize, usize, usize), loaded: Result<LoadedChange>) {
        let (commit, pair, file) = at;
        let Some(planned) = self.commits.get_mut(commit - self.first) else {
            return;
        };
        if let Ok(pairs) = &mut planned.pairs {
            pairs[pair].loaded[file] = Some(loaded);
            planned.missing -= 1;
            self.loaded += 1;
        }
    }

    /// Commits planned so far.
    fn planned(&self) -> usize {
        self.first + self.commits.len()
    }

    /// Whether the planning thread may plan another commit now.
    fn may_plan(&self, total: usize) -> bool {
        self.planned() < total
            && self.commits.len() < AHEAD
            && self.loaded < FILES_AHEAD
            && self.untaken < TAKE_AHEAD
    }
}

/// The planning thread: diffs the trees of each commit in turn, staying a
/// little ahead of the loading, and loads files in between.
fn plan_and_load(
    mut differ: SymbolDiffer<'_>,
    commits: &[CommitInfo],
    board: &Board,
) -> Result<Diffed> {
    let mut plan = board.lock();
    loop {
        if plan.stop {
            break;
        }
        if plan.may_plan(commits.len()) {
            let commit = &commits[plan.planned()];
            drop(plan);
            let pairs = differ
                .tree_pairs(commit)
                .and_then(|pairs| plan_pairs(&mut differ, pairs));
            plan = board.lock();
            let failed = pairs.is_err();
            let missing = pairs.as_ref().map_or(0, |pairs| {
                pairs.iter().map(|p| p.files.len()).sum::<usize>()
            });
            plan.commits.push_back(PlannedCommit { pairs, missing });
            plan.untaken += missing;
            board.changed.notify_all();
            if failed {
                break; // the labelling thread reports it, after the commits before it
            }
            continue;
        }
        let loaded;
        (plan, loaded) = load_next(board, plan, &mut differ, true);
        if loaded {
            continue;
        }
        if plan.planned() == commits.len() {
            break; // the rest is being loaded by the labelling thread
        }
        plan = board.wait(plan);
    }
    drop(plan);
    Ok(Diffed::of(&mut differ))
}

/// Takes a file ([`Plan::take`]) and loads it outside the lock: the lock
/// again, and whether there was a file to take.
fn load_next<'b>(
    board: &'b Board,
    mut plan: MutexGuard<'b, Plan>,
    differ: &mut SymbolDiffer<'_>,
    planner: bool,
) -> (MutexGuard<'b, Plan>, bool) {
    let Some(taken) = plan.take(planner) else {
        return (plan, false);
    };
    drop(plan);
    let loaded = differ.load_change(&taken.change);
    let mut plan = board.lock();
    plan.put(taken.at, loaded);
    board.changed.notify_all();
    (plan, true)
}

/// The files each tree pair changes.
fn plan_pairs(differ: &mut SymbolDiffer<'_>, pairs: Vec<TreePair>) -> Result<Vec<PlannedPair>> {
    pairs
        .into_iter()
        .map(|pair| {
            let files = differ.changed_files(pair.0, pair.1)?;
            Ok(PlannedPair {
                untaken: {
                    let (to_planner, to_labeller): (VecDeque<usize>, VecDeque<usize>) =
                        (0..files.len()).partition(|&file| falls_to_planner(&files[file]));
                    [to_labeller, to_planner]
                },
                loaded: files.iter().map(|_| None).collect(),
                files,
            })
        })
        .collect()
}

/// The labelling thread: labels each commit once its files are loaded and
/// hands the records on in order; loads files while the next commit waits.
fn label_in_order(
    mut differ: SymbolDiffer<'_>,
    commits: &[CommitInfo],
    board: &Board,
    sink: &mut dyn FnMut(CommitRecord) -> bool,
) -> Result<Diffed> {
    let mut plan = board.lock();
    while plan.first < commits.len() {
        if plan.commits.front().is_some_and(|c| c.missing == 0) {
            let Some(ready) = plan.commits.pop_front() else {
                break;
            };
            let position = plan.first;
            plan.first += 1;
            let pairs = ready.pairs?;
            plan.loaded -= pairs.iter().map(|p| p.files.len()).sum::<usize>();
            board.changed.notify_all();
            drop(plan);
            let mut diffs = Vec::with_capacity(pairs.len());
            for pair in pairs {
                // Every file is in (none missing): flattening drops nothing.
                let loaded = pair.loaded.into_iter().flatten().collect::<Result<_>>()?;
                diffs.push(differ.label(loaded));
            }
            if !sink(record_of(&commits[position], diffs)) {
                break;
            }
            plan = board.lock();
            continue;
        }
        let loaded;
        (plan, loaded) = load_next(board, plan, &mut differ, false);
        if loaded {
            continue;
        }
        if plan.planner_done && plan.commits.is_empty() {
            return Err(Error::Thread {
                name: "diffidx-parse".into(),
                reason: "it stopped before the end of the run".into(),
            });
        }
        plan = board.wait(plan);
    }
    Ok(Diffed::of(&mut differ))
}

/// Whether a file falls to the planning thread first: by a hash of its
/// path (the new one, else the old), so a file's versions mostly meet the
/// same thread.
fn falls_to_planner(change: &FileChange) -> bool {
    let path = change
        .new
        .as_ref()
        .or(change.old.as_ref())
        .map_or("", |side| side.path.as_str());
    // FNV-1a: stable across runs and platforms, and spreads paths that
    // differ in one character.
    let hash = path.bytes().fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    hash & 1 == 1
}

/// Files fewer than this have their facts read on the calling thread: a
/// second thread pays for its own parsers and repository handle.
const FACTS_ON_TWO_THREADS: usize = 64;

/// The code-graph facts of `files` (see [`SymbolDiffer::file_facts`]), in
/// order. Many files (a graph built from scratch reads every file of the
/// tree) are split between `differ` and a helper on a second thread, if
/// `threads` allows one: every other file goes to the helper, which parses
/// afresh what `differ` may hold parsed already.
pub fn file_facts(
    differ: &mut SymbolDiffer<'_>,
    files: &[crate::git::FileSide],
    threads: usize,
) -> Result<Vec<Option<crate::codegraph::FileFacts>>> {
    if threads < 2 || files.len() < FACTS_ON_TWO_THREADS || differ.repo.promisor_remote().is_some()
    {
        return files
            .iter()
            .map(|f| differ.file_facts(f.blob, &f.path))
            .collect();
    }
    let shared = differ.repo.share();
    let options = differ.options.clone();
    std::thread::scope(|scope| {
        let helper = spawn(scope, "diffidx-facts", move || -> Result<Vec<_>> {
            let repo = shared.to_local();
            let mut helper = SymbolDiffer::new(&repo, options)?;
            files
                .iter()
                .skip(1)
                .step_by(2)
                .map(|f| helper.file_facts(f.blob, &f.path))
                .collect()
        })?;
        let own: Result<Vec<_>> = files
            .iter()
            .step_by(2)
            .map(|f| differ.file_facts(f.blob, &f.path))
            .collect();
        let theirs = join(helper);
        let (own, theirs) = (own?, theirs?);
        let mut facts = Vec::with_capacity(files.len());
        let mut theirs = theirs.into_iter();
        for mine in own {
            facts.push(mine);
            facts.extend(theirs.next());
        }
        Ok(facts)
    })
}
