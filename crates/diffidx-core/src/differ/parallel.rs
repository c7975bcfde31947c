//! Diffing a run of commits on two threads.
//!
//! Parsing and extracting file versions is most of a backfill's work, and
//! each file's versions must meet the same cache: the new side of one commit
//! is the old side of the next, and its syntax tree is the base the version
//! after it is reparsed from incrementally. Split by commit, each thread
//! would parse again at every boundary what the other parsed last. So the
//! work is split by file path instead: a helper thread diffs the trees and
//! loads the files whose path falls to it, the calling thread loads the
//! others, labels each tree diff (moves cross files, so labelling sees every
//! file) and hands the records on in order. Each thread has its own
//! [`SymbolDiffer`] and half the cache budget; the records are the same, byte
//! for byte, as one differ's.

use std::collections::HashSet;
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;

use gix::ObjectId;

use super::{
    record_of, DiffOptions, DiffStats, FileChange, LoadedChange, ParsedFacts, SymbolDiffer,
    TreePair,
};
use crate::error::{Error, Result};
use crate::git::{CommitInfo, SharedRepo};
use crate::CommitRecord;

/// Commits a partial clone fetches the missing blobs of at once.
const PREFETCH: usize = 1000;

/// Commits the helper may run ahead of the labelling thread.
const AHEAD: usize = 64;

/// What a run of [`diff_commits`] did, and the facts it kept.
#[derive(Default)]
pub struct Diffed {
    /// What the differs did, added up.
    pub stats: DiffStats,
    /// The code-graph facts of the wanted blobs the run parsed.
    pub facts: ParsedFacts,
}

impl Diffed {
    fn of(differ: &mut SymbolDiffer<'_>) -> Diffed {
        Diffed {
            stats: differ.stats(),
            facts: differ.take_facts(),
        }
    }

    fn and(mut self, other: Diffed) -> Diffed {
        self.stats = self.stats + other.stats;
        self.facts.extend(other.facts);
        self
    }
}

/// Diffs `commits` in order and hands each record to `sink`, which returns
/// false to stop early. On two `threads` if asked, except in a partial clone
/// (whose fetches of missing blobs are made in batches, one at a time). An
/// error stops the run after every earlier record was handed on. The parse
/// of a blob in `facts_of` keeps its code-graph facts as well
/// ([`SymbolDiffer::want_facts_of`]).
pub fn diff_commits(
    shared: &SharedRepo,
    options: &DiffOptions,
    commits: &[CommitInfo],
    threads: usize,
    facts_of: Option<Arc<HashSet<ObjectId>>>,
    sink: &mut dyn FnMut(CommitRecord) -> bool,
) -> Result<Diffed> {
    let repo = shared.to_local();
    if threads < 2 || repo.promisor_remote().is_some() {
        let mut differ = new_differ(&repo, options.clone(), &facts_of)?;
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
    let half = DiffOptions {
        cache_bytes: options.cache_bytes / 2,
        ..options.clone()
    };
    std::thread::scope(|scope| {
        let (sender, receiver) = sync_channel::<Result<Vec<Planned>>>(AHEAD);
        let helper_options = half.clone();
        let helper_facts = facts_of.clone();
        let helper = std::thread::Builder::new()
            .name("diffidx-parse".into())
            .spawn_scoped(scope, move || -> Result<Diffed> {
                let repo = shared.to_local();
                let mut differ = new_differ(&repo, helper_options, &helper_facts)?;
                for commit in commits {
                    let planned = differ
                        .tree_pairs(commit)
                        .and_then(|pairs| plan(&mut differ, pairs));
                    let failed = planned.is_err();
                    if sender.send(planned).is_err() || failed {
                        break; // the labelling thread stopped, or this one failed
                    }
                }
                Ok(Diffed::of(&mut differ))
            })
            .map_err(|e| Error::Thread {
                name: "diffidx-parse".into(),
                reason: e.to_string(),
            })?;
        let labelled = new_differ(&repo, half, &facts_of)
            .and_then(|differ| label_in_order(differ, commits, &receiver, sink));
        drop(receiver); // a helper still sending stops
        let helped = match helper.join() {
            Ok(helped) => helped,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        Ok(labelled?.and(helped?))
    })
}

/// A differ that keeps the facts of `facts_of`, if any.
fn new_differ<'r>(
    repo: &'r crate::git::Repo,
    options: DiffOptions,
    facts_of: &Option<Arc<HashSet<ObjectId>>>,
) -> Result<SymbolDiffer<'r>> {
    let mut differ = SymbolDiffer::new(repo, options)?;
    if let Some(blobs) = facts_of {
        differ.want_facts_of(Arc::clone(blobs));
    }
    Ok(differ)
}

/// One tree diff as the helper leaves it: every changed file, and the ones
/// it loaded, by position.
struct Planned {
    files: Vec<FileChange>,
    loaded: Vec<(usize, LoadedChange)>,
}

/// The helper's part of one commit: per tree pair, the changed files and
/// the loads that fall to it.
fn plan(differ: &mut SymbolDiffer<'_>, pairs: Vec<TreePair>) -> Result<Vec<Planned>> {
    let mut planned = Vec::with_capacity(pairs.len());
    for pair in pairs {
        let files = differ.changed_files(pair.0, pair.1)?;
        let mut loaded = Vec::new();
        for (position, change) in files.iter().enumerate() {
            if falls_to_helper(change) {
                loaded.push((position, differ.load_change(change)?));
            }
        }
        planned.push(Planned { files, loaded });
    }
    Ok(planned)
}

/// The labelling thread's part: loads the rest of each tree diff, labels
/// it, and hands the records on in order.
fn label_in_order(
    mut differ: SymbolDiffer<'_>,
    commits: &[CommitInfo],
    receiver: &Receiver<Result<Vec<Planned>>>,
    sink: &mut dyn FnMut(CommitRecord) -> bool,
) -> Result<Diffed> {
    for commit in commits {
        let planned = receiver.recv().map_err(|_| Error::Thread {
            name: "diffidx-parse".into(),
            reason: "it stopped before the end of the run".into(),
        })??;
        let mut diffs = Vec::with_capacity(planned.len());
        for diff in planned {
            let mut theirs = diff.loaded.into_iter().peekable();
            let mut loaded = Vec::with_capacity(diff.files.len());
            for (position, change) in diff.files.iter().enumerate() {
                loaded.push(match theirs.next_if(|(at, _)| *at == position) {
                    Some((_, change)) => change,
                    None => differ.load_change(change)?,
                });
            }
            diffs.push(differ.label(loaded));
        }
        if !sink(record_of(commit, diffs)) {
            break;
        }
    }
    Ok(Diffed::of(&mut differ))
}

/// Whether the helper loads a change: by a hash of its path (the new one,
/// else the old), so a file's versions always meet the same cache.
fn falls_to_helper(change: &FileChange) -> bool {
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
        let helper = std::thread::Builder::new()
            .name("diffidx-facts".into())
            .spawn_scoped(scope, move || -> Result<Vec<_>> {
                let repo = shared.to_local();
                let mut helper = SymbolDiffer::new(&repo, options)?;
                files
                    .iter()
                    .skip(1)
                    .step_by(2)
                    .map(|f| helper.file_facts(f.blob, &f.path))
                    .collect()
            })
            .map_err(|e| Error::Thread {
                name: "diffidx-facts".into(),
                reason: e.to_string(),
            })?;
        let own: Result<Vec<_>> = files
            .iter()
            .step_by(2)
            .map(|f| differ.file_facts(f.blob, &f.path))
            .collect();
        let theirs = match helper.join() {
            Ok(theirs) => theirs,
            Err(panic) => std::panic::resume_unwind(panic),
        };
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
