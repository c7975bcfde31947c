//! Diffing a long run of commits one file at a time.
//!
//! In commit order, the version of a file that one commit changes is the
//! base its next version is reparsed from, often hundreds of commits later,
//! so the cache must keep a syntax tree for every file that changes again
//! (App-vNext/Polly: about 75 MiB of trees at the default budget), and a
//! smaller cache parses many versions whole. Loaded file by file, each
//! version comes right after the one it is reparsed from, and the cache
//! needs to hold little more than the version just parsed.
//!
//! The price: a commit is labelled only once every file of its window is
//! loaded, so what the labelling needs of each change is held until then:
//! the symbols of both sides and the line changes between them, never a
//! text or a tree. Windows of [`WINDOW`] commits bound that, and the first
//! version of a file in a window is parsed whole unless the cache still
//! holds the last one before it. A window is labelled on the calling thread
//! while the next one loads.
//!
//! The records are those of [`super::parallel::diff_commits`]'s commit
//! order, byte for byte: the same sides, labelled by the same code.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use gix::ObjectId;

use super::cache::SharedCache;
use super::{
    join, record_of, spawn, DiffOptions, Diffed, FileChange, LoadedChange, ParsedBlob, Side,
    SymbolDiffer,
};
use crate::delta::ReplacedLines;
use crate::error::{Error, Result};
use crate::git::hunks::diff_lines;
use crate::git::{CommitInfo, Repo, SharedRepo};
use crate::CommitRecord;

/// Bytes of syntax trees the shared cache may hold: the version each
/// thread just parsed, and room for a file renamed into another's place.
/// Measured on Polly: 4 MiB parsed 206 more versions whole than 96 (of
/// 11,750, in one window).
const TREE_BYTES: usize = 16 << 20;

/// Bytes of texts and symbols the shared cache may hold. A file's first
/// version in a window has the last one before it as its old side, which
/// is then still here. The versions a window will not ask for again are
/// dropped as it loads (see [`load`]), so the cache holds little more than
/// those last versions: on Polly, 16 MiB parsed as few versions as 48
/// (11,059); before that dropping, 48 MiB were needed (8 MiB parsed 792
/// more).
const ENTRY_BYTES: usize = 16 << 20;

/// What loading a history file by file needs to know of each commit: its
/// tree pairs' changes, as ranges of one list in commit order.
struct Plan {
    changes: Vec<FileChange>,
    /// Per commit, per tree pair, where its changes are in `changes` (or why
    /// its trees could not be diffed).
    commits: Vec<Result<Vec<Range<usize>>>>,
}

/// Diffs `commits` file by file (see the module's doc), `window` commits
/// at a time (the last windows shorter), and hands each record to `sink` in order (false
/// stops the run). An error stops the run after every earlier record was
/// handed on.
///
/// A loading thread plans and loads each window, with a helper when
/// `threads` allows; the calling thread labels a window while the next one
/// loads, so at most two windows' sides are held.
pub fn diff_commits(
    shared: &SharedRepo,
    options: &DiffOptions,
    commits: &[CommitInfo],
    threads: usize,
    window: usize,
    facts_of: Option<Arc<HashSet<ObjectId>>>,
    sink: &mut dyn FnMut(CommitRecord) -> bool,
) -> Result<Diffed> {
    let repo = shared.to_local();
    // The labelling parses nothing: no cache of its own to speak of.
    let mut labeller = SymbolDiffer::new(
        &repo,
        DiffOptions {
            cache_bytes: 0,
            ..options.clone()
        },
    )?;
    let cache = SharedCache::with_budgets(ENTRY_BYTES, TREE_BYTES);
    let loading = Loading {
        shared,
        options,
        facts_of: &facts_of,
        cache: &cache,
        threads,
    };
    let windows = windows(commits, window.max(1));
    std::thread::scope(|scope| {
        let (sender, receiver) = std::sync::mpsc::sync_channel::<LoadedWindow>(0);
        let (facts_of, cache, windows, loading) = (&facts_of, &cache, &windows, &loading);
        let loader = spawn(scope, "diffidx-parse", move || -> Result<Diffed> {
            let repo = shared.to_local();
            let mut differ = SymbolDiffer::for_run(&repo, options.clone(), facts_of, Some(cache))?;
            let mut helped = Diffed::default();
            for commits in windows {
                let (window, diffed) = loading.load(&mut differ, commits)?;
                helped = helped.and(diffed);
                if sender.send(window).is_err() {
                    break; // the labelling stopped
                }
            }
            Ok(Diffed::of(&mut differ).and(helped))
        })?;
        let labelled = label_windows(&mut labeller, windows, receiver, sink);
        let loaded = join(loader);
        // A window the loader could not load stops the labelling; an
        // earlier commit's failure explains the loader's stop.
        let finished = labelled?;
        let loaded = loaded?;
        if !finished {
            return Err(unloaded());
        }
        Ok(Diffed::of(&mut labeller).and(loaded))
    })
}

/// Labels the windows as they come in; false when fewer came than
/// `windows` (the loader stopped) and `sink` did not stop the run.
fn label_windows(
    labeller: &mut SymbolDiffer<'_>,
    windows: &[&[CommitInfo]],
    receiver: std::sync::mpsc::Receiver<LoadedWindow>,
    sink: &mut dyn FnMut(CommitRecord) -> bool,
) -> Result<bool> {
    let mut labelled = 0;
    for (commits, window) in windows.iter().zip(receiver) {
        if !window.label(labeller, commits, sink)? {
            return Ok(true);
        }
        labelled += 1;
    }
    Ok(labelled == windows.len())
}

/// `commits` cut into windows of at most `size` commits, the last ones
/// smaller (a half, a quarter, an eighth of `size`): the labelling of the
/// last window is the one that no loading hides, so it is kept short.
fn windows(commits: &[CommitInfo], size: usize) -> Vec<&[CommitInfo]> {
    let mut tail = Vec::new();
    let mut end = commits.len();
    let mut last = size / 8;
    while last > 0 && last < size && end > last {
        tail.push(&commits[end - last..end]);
        end -= last;
        last *= 2;
    }
    // The rest in full windows, the first of them taking what is left over.
    let head = &commits[..end];
    let first = match head.len() % size {
        0 => size.min(head.len()),
        short => short,
    };
    let mut windows = Vec::new();
    if !head.is_empty() {
        windows.push(&head[..first]);
        windows.extend(head[first..].chunks(size));
    }
    windows.extend(tail.into_iter().rev());
    windows
}

/// [`WINDOW`], or `DIFFIDX_BY_FILE_WINDOW`.
pub(crate) fn window() -> usize {
    std::env::var("DIFFIDX_BY_FILE_WINDOW")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(WINDOW)
}

/// Commits loaded file by file at a time: what the labelling holds grows
/// with them, and each window parses whole the first version of a file the
/// cache no longer holds. On Polly, windows of 500 and 250 commits took
/// 0.3 and 1.0 s longer for 10 and 20 MiB less peak memory.
const WINDOW: usize = 1000;

/// What the loading of each window shares.
struct Loading<'a> {
    shared: &'a SharedRepo,
    options: &'a DiffOptions,
    facts_of: &'a Option<Arc<HashSet<ObjectId>>>,
    cache: &'a Arc<SharedCache>,
    threads: usize,
}

/// A window's changes, loaded: for each commit, its tree pairs' changes
/// (or why its trees could not be diffed), in commit order.
struct LoadedWindow {
    commits: Vec<Result<Vec<Vec<Result<LoadedChange>>>>>,
}

impl Loading<'_> {
    /// Plans and loads one window of commits, file by file, on two threads
    /// if the run has them; returns what the helper thread did as well.
    fn load(
        &self,
        differ: &mut SymbolDiffer<'_>,
        commits: &[CommitInfo],
    ) -> Result<(LoadedWindow, Diffed)> {
        let two = self.threads >= 2 && commits.len() >= 2;
        // The trees of the second half are diffed beside the first's.
        let half = if two {
            commits.len() / 2
        } else {
            commits.len()
        };
        let (mut plan, later, planned) = self.beside(
            two,
            differ,
            |differ| plan(differ, &commits[..half]),
            |helper| plan(helper, &commits[half..]),
        )?;
        // After a commit that failed nothing is labelled, so nothing is loaded.
        if let Some(later) = later.filter(|_| plan.commits.iter().all(Result::is_ok)) {
            plan.append(later);
        }
        let groups = groups(&plan);
        let uses = uses(&plan);
        let next = AtomicUsize::new(0);
        let each = |differ: &mut SymbolDiffer<'_>| load(differ, &plan, &next, &groups, &uses);
        let (mut loaded, theirs, helped) = self.beside(two, differ, each, each)?;
        loaded.extend(theirs.into_iter().flatten());
        let mut slots: Vec<Option<Result<LoadedChange>>> =
            plan.changes.iter().map(|_| None).collect();
        for (at, change) in loaded {
            slots[at] = Some(change);
        }
        let mut slots = slots.into_iter();
        let commits = plan
            .commits
            .into_iter()
            .map(|pairs| {
                pairs.map(|pairs| {
                    pairs
                        .into_iter()
                        .map(|range| {
                            slots
                                .by_ref()
                                .take(range.len())
                                .map(|slot| slot.unwrap_or_else(|| Err(unloaded())))
                                .collect()
                        })
                        .collect()
                })
            })
            .collect();
        Ok((LoadedWindow { commits }, planned.and(helped)))
    }

    /// Runs `mine` with `differ` and, if `two`, `theirs` at the same time
    /// on a second thread with a differ of its own: both results, and what
    /// the second thread's differ did.
    fn beside<T: Send>(
        &self,
        two: bool,
        differ: &mut SymbolDiffer<'_>,
        mine: impl FnOnce(&mut SymbolDiffer<'_>) -> T,
        theirs: impl FnOnce(&mut SymbolDiffer<'_>) -> T + Send,
    ) -> Result<(T, Option<T>, Diffed)> {
        std::thread::scope(|scope| {
            let helper = two
                .then(|| {
                    spawn(scope, "diffidx-parse", || -> Result<(T, Diffed)> {
                        let repo = self.shared.to_local();
                        let mut helper = SymbolDiffer::for_run(
                            &repo,
                            self.options.clone(),
                            self.facts_of,
                            Some(self.cache),
                        )?;
                        let result = theirs(&mut helper);
                        Ok((result, Diffed::of(&mut helper)))
                    })
                })
                .transpose()?;
            let own = mine(differ);
            match helper {
                Some(helper) => {
                    let (result, diffed) = join(helper)?;
                    Ok((own, Some(result), diffed))
                }
                None => Ok((own, None, Diffed::default())),
            }
        })
    }
}

impl LoadedWindow {
    /// Labels the window's commits in order, letting each one's sides go
    /// once labelled; false when `sink` stopped the run.
    fn label(
        self,
        labeller: &mut SymbolDiffer<'_>,
        commits: &[CommitInfo],
        sink: &mut dyn FnMut(CommitRecord) -> bool,
    ) -> Result<bool> {
        for (commit, pairs) in commits.iter().zip(self.commits) {
            let mut diffs = Vec::new();
            for pair in pairs? {
                let loaded = pair.into_iter().collect::<Result<Vec<_>>>()?;
                diffs.push(labeller.label(loaded));
            }
            if !sink(record_of(commit, diffs)) {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// A change no thread loaded: only when a loader stopped early.
fn unloaded() -> Error {
    Error::Thread {
        name: "diffidx-parse".into(),
        reason: "it stopped before loading every file".into(),
    }
}

impl Plan {
    fn empty() -> Plan {
        Plan {
            changes: Vec::new(),
            commits: Vec::new(),
        }
    }

    /// The plan of the commits after these.
    fn append(&mut self, later: Plan) {
        let offset = self.changes.len();
        self.changes.extend(later.changes);
        self.commits.extend(later.commits.into_iter().map(|pairs| {
            pairs.map(|pairs| {
                pairs
                    .into_iter()
                    .map(|r| r.start + offset..r.end + offset)
                    .collect()
            })
        }));
    }
}

/// Diffs the trees of `commits`. A commit that fails ends the plan (the
/// labelling reports it after the records before it).
fn plan(differ: &mut SymbolDiffer<'_>, commits: &[CommitInfo]) -> Plan {
    let mut plan = Plan::empty();
    for commit in commits {
        let pairs = differ.tree_pairs(commit).and_then(|pairs| {
            pairs
                .into_iter()
                .map(|(old, new)| {
                    let files = differ.changed_files(old, new)?;
                    let start = plan.changes.len();
                    plan.changes.extend(files);
                    Ok(start..plan.changes.len())
                })
                .collect::<Result<Vec<_>>>()
        });
        let failed = pairs.is_err();
        plan.commits.push(pairs);
        if failed {
            break;
        }
    }
    plan
}

/// The changes grouped by file (the new path, else the old), each group in
/// commit order, the groups in the order their files first change.
fn groups(plan: &Plan) -> Vec<Vec<usize>> {
    let mut at: HashMap<&str, usize> = HashMap::new();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (index, change) in plan.changes.iter().enumerate() {
        let path = change
            .new
            .as_ref()
            .or(change.old.as_ref())
            .map_or("", |side| side.path.as_str());
        let group = *at.entry(path).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[group].push(index);
    }
    groups
}

/// How many of the window's changes name each blob, as either side.
fn uses(plan: &Plan) -> HashMap<ObjectId, AtomicUsize> {
    let mut uses: HashMap<ObjectId, AtomicUsize> = HashMap::new();
    for change in &plan.changes {
        for side in [&change.old, &change.new].into_iter().flatten() {
            *uses.entry(side.blob).or_default().get_mut() += 1;
        }
    }
    uses
}

/// Loads the groups `next` hands out, one after another, until none is
/// left: each change's sides without their texts ([`without_texts`]).
///
/// A version whose last use in the window was as an old side is dropped
/// from the cache at once: the next version of its file was just parsed
/// from it. What the cache keeps is then mostly the last version of each
/// file, the old side of its first change in the next window; left to the
/// cache's own eviction, the dead versions took most of its room.
fn load(
    differ: &mut SymbolDiffer<'_>,
    plan: &Plan,
    next: &AtomicUsize,
    groups: &[Vec<usize>],
    uses: &HashMap<ObjectId, AtomicUsize>,
) -> Vec<(usize, Result<LoadedChange>)> {
    // Counts one use of `blob` off; true when it was the window's last.
    let last_use = |blob: &ObjectId| {
        uses.get(blob)
            .is_some_and(|left| left.fetch_sub(1, Ordering::Relaxed) == 1)
    };
    let mut loaded = Vec::new();
    loop {
        let group = next.fetch_add(1, Ordering::Relaxed);
        let Some(group) = groups.get(group) else {
            return loaded;
        };
        for &at in group {
            let change = &plan.changes[at];
            let sides = differ
                .load_change(change)
                .map(|change| change.map(without_texts));
            loaded.push((at, sides));
            if let Some(old) = &change.old {
                if last_use(&old.blob) {
                    differ.forget(old);
                }
            }
            // A new side's last use keeps it: the next window may need it.
            if let Some(new) = &change.new {
                last_use(&new.blob);
            }
        }
    }
}

/// A change's sides as the labelling needs them: symbols, the line
/// changes from the old side to the new, and the lines those replaced (the
/// texts' only uses), so that the texts need not be held until the
/// labelling.
fn without_texts((old, new): (Option<Side>, Option<Side>)) -> (Option<Side>, Option<Side>) {
    let lines = match (&old, &new) {
        (Some(o), Some(n)) if o.path == n.path => o.id.map(|base| {
            let changes: Arc<[_]> = match n.blob.line_changes_from(Some(base)) {
                Some(reparsed) => reparsed.into(),
                None => diff_lines(&o.blob.text, &n.blob.text).into(),
            };
            let replaced = Arc::new(ReplacedLines::of(&o.blob.text, &n.blob.text, &changes));
            ((base, changes), replaced)
        }),
        _ => None,
    };
    let strip = |side: Side, lines: Option<(_, Arc<ReplacedLines>)>| {
        let (lines_from, replaced_lines) = lines.unzip();
        Side {
            blob: Arc::new(ParsedBlob {
                text: Arc::default(),
                symbols: Arc::clone(&side.blob.symbols),
                lossy: side.blob.lossy,
                state: None,
                lines_from,
                replaced_lines,
            }),
            ..side
        }
    };
    let old = old.map(|side| strip(side, None));
    let new = new.map(|side| strip(side, lines));
    (old, new)
}

/// Whether `diff_commits` here is the way to diff `commits`: a long run,
/// not in a partial clone (whose missing blobs are fetched a commit range
/// at a time, in commit order). `DIFFIDX_BY_FILE` (`always`, `never`)
/// overrides the length, for tests.
pub fn suits(repo: &Repo, commits: usize) -> bool {
    if repo.promisor_remote().is_some() {
        return false;
    }
    match std::env::var("DIFFIDX_BY_FILE").as_deref() {
        Ok("always") => true,
        Ok("never") => false,
        _ => commits >= FROM_COMMITS,
    }
}

/// Runs at least this long are diffed file by file.
const FROM_COMMITS: usize = 200;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::FileSide;

    fn sizes(total: usize, size: usize) -> Vec<usize> {
        let commits: Vec<CommitInfo> = (0..total)
            .map(|i| CommitInfo {
                id: ObjectId::null(gix::hash::Kind::Sha1),
                tree: ObjectId::null(gix::hash::Kind::Sha1),
                parents: Vec::new(),
                time: i as i64,
                date: String::new(),
                commit_time: i as i64,
                author: String::new(),
                subject: String::new(),
            })
            .collect();
        windows(&commits, size).iter().map(|w| w.len()).collect()
    }

    #[test]
    fn each_blob_counts_every_change_that_names_it() {
        let side = |byte: u8| FileSide {
            path: "a.cs".into(),
            blob: ObjectId::from([byte; 20]),
        };
        let change = |old: Option<u8>, new: Option<u8>| FileChange {
            old: old.map(side),
            new: new.map(side),
        };
        let plan = Plan {
            // Added, modified twice, reverted to the first version, deleted.
            changes: vec![
                change(None, Some(1)),
                change(Some(1), Some(2)),
                change(Some(2), Some(1)),
                change(Some(1), None),
            ],
            commits: Vec::new(),
        };
        let uses = uses(&plan);
        let count = |byte: u8| uses[&ObjectId::from([byte; 20])].load(Ordering::Relaxed);
        assert_eq!((count(1), count(2)), (4, 2));
    }

    #[test]
    fn windows_cover_the_run_in_order_and_end_short() {
        assert_eq!(sizes(2942, 1000), [67, 1000, 1000, 500, 250, 125]);
        assert_eq!(
            sizes(5000, 1000),
            [125, 1000, 1000, 1000, 1000, 500, 250, 125]
        );
        assert_eq!(sizes(300, 1000), [175, 125]);
        assert_eq!(sizes(1000, 1000), [125, 500, 250, 125]);
        assert_eq!(sizes(5, 2), [1, 2, 2]);
        assert_eq!(sizes(0, 1000), Vec::<usize>::new());
    }
}
