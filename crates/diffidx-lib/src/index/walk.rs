//! Which commits to index, in which order: a walk of the commit graph.

use std::collections::{BinaryHeap, HashMap, HashSet};

use diffidx_core::git::notes::Notes;
use diffidx_core::git::{CommitInfo, Repo};
use diffidx_core::ObjectId;

use super::{IndexOptions, Result, Window};

/// The commits to index, oldest first (parents before children), and the
/// shallow-boundary commits that cannot be. Walks back from the tips (a
/// [`WindowWalk`]) and stops past the window, at commits excluded by
/// `A..B`, or (when `trust_noted`) at those that already have a note, since
/// this clone noted their ancestors before them.
pub(super) fn commits_to_index(
    repo: &Repo,
    notes: &mut Notes<'_>,
    options: &IndexOptions,
    trust_noted: bool,
) -> Result<(Vec<CommitInfo>, Vec<String>)> {
    let repo = &repo.for_one_pass();
    let revs = if options.revs.is_empty() {
        vec!["HEAD".to_owned()]
    } else {
        options.revs.clone()
    };
    let mut tips = Vec::new();
    let mut bases = Vec::new();
    for rev in &revs {
        if let Some((a, b)) = rev.split_once("..") {
            let b = b.trim_start_matches('.');
            bases.push(repo.resolve_commit(if a.is_empty() { "HEAD" } else { a })?);
            tips.push(repo.resolve_commit(if b.is_empty() { "HEAD" } else { b })?);
        } else {
            match repo.resolve_commit(rev) {
                Ok(tip) => tips.push(tip),
                // Nothing to index yet: the hooks will index the first commit.
                Err(diffidx_core::Error::EmptyRepository) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
    // What the ranges leave in; everything without a range.
    let in_range = if bases.is_empty() {
        None
    } else {
        Some(in_ranges(repo, &tips, &bases)?)
    };
    let since = match options.window {
        Window::New | Window::All => None,
        Window::Since(time) => Some(time),
        Window::Days(days) => {
            let mut newest = None;
            for tip in &tips {
                let time = repo.commit(*tip)?.time;
                newest = newest.max(Some(time));
            }
            newest.map(|t| t.saturating_sub((days as i64).saturating_mul(86_400)))
        }
    };
    let mut seen: HashMap<ObjectId, CommitInfo> = HashMap::new();
    let mut shallow = Vec::new();
    let mut walk = WindowWalk::new(repo, &tips, since)?;
    while let Some(info) = walk.next() {
        let id = info.id;
        if in_range.as_ref().is_some_and(|ids| !ids.contains(&id)) {
            continue;
        }
        let noted = notes.get_id(id)?.is_some();
        if noted && trust_noted {
            continue;
        }
        // A commit authored before the window is walked through, not
        // indexed: its parents may be authored in the window.
        if noted || since.is_some_and(|since| info.time < since) {
            walk.parents(&info)?;
            continue;
        }
        if info.parents.iter().any(|p| !repo.gix().has_object(*p)) {
            shallow.push(id.to_string());
            continue;
        }
        walk.parents(&info)?;
        seen.insert(id, info);
    }
    Ok((topological(seen, &tips), shallow))
}

/// How many commits in a row, all made and authored before the window, a
/// walk goes through before it stops. Author times do not follow the
/// history: a branch merged months after it was written, a rebase or a
/// cherry-pick keeps them, so a commit authored before the window can sit
/// on top of commits authored in it. Commit times mostly do, but not
/// always: a committer's wrong clock puts a commit before its parents, and
/// on App-vNext/Polly, astropy, flask, fd, pylint, pytest, requests,
/// seaborn, sphinx, sympy and xarray (windows starting at 60 points of
/// each history, 400 for pylint and sphinx) a walk needed up to 500 of them
/// in a row to reach every commit authored in the window. Stopping at the
/// first commit authored before the window missed 6% of pylint's window
/// commits (17,700 of 313,000) and all of some windows; stopping at the
/// first one made before it still missed 692 of sphinx's 685,000. A
/// window's walk so reads up to this many commits more than it keeps.
pub(super) const PAST_THE_WINDOW: usize = 1000;

/// A walk back from some tips, newest first (by the later of a commit's
/// author and commit times), that finds every commit authored from a time
/// on: it goes through commits authored earlier (to their parents, which
/// may be authored in the window) and stops only once [`PAST_THE_WINDOW`]
/// commits in a row were both authored and made before it. Without a time
/// it walks every commit it is led to.
pub(super) struct WindowWalk<'r> {
    repo: &'r Repo,
    since: Option<i64>,
    queue: BinaryHeap<Pending>,
    queued: HashSet<ObjectId>,
    /// Commits before the window, in a row.
    before: usize,
}

/// A commit waiting in a [`WindowWalk`], ordered by its later time.
struct Pending(CommitInfo);

impl Pending {
    fn key(&self) -> (i64, ObjectId) {
        (self.0.time.max(self.0.commit_time), self.0.id)
    }
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Pending {}

impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Pending {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

impl<'r> WindowWalk<'r> {
    pub(super) fn new(repo: &'r Repo, tips: &[ObjectId], since: Option<i64>) -> Result<Self> {
        let mut walk = WindowWalk {
            repo,
            since,
            queue: BinaryHeap::new(),
            queued: HashSet::new(),
            before: 0,
        };
        for tip in tips {
            walk.push(*tip)?;
        }
        Ok(walk)
    }

    fn push(&mut self, id: ObjectId) -> Result<()> {
        if self.repo.gix().has_object(id) && self.queued.insert(id) {
            self.queue.push(Pending(self.repo.commit(id)?));
        }
        Ok(())
    }

    /// The next commit, each once; `None` when there are no more, or the
    /// walk is past the window.
    pub(super) fn next(&mut self) -> Option<CommitInfo> {
        let Pending(info) = self.queue.pop()?;
        if let Some(since) = self.since {
            if info.time.max(info.commit_time) < since {
                self.before += 1;
                if self.before > PAST_THE_WINDOW {
                    self.queue.clear();
                    return None;
                }
            } else {
                self.before = 0;
            }
        }
        Some(info)
    }

    /// Goes on to the parents of `info` (those the repository has).
    pub(super) fn parents(&mut self, info: &CommitInfo) -> Result<()> {
        for parent in &info.parents {
            self.push(*parent)?;
        }
        Ok(())
    }
}

/// Every commit reachable from `tip`.
/// The commits `tips` reach and `bases` do not. A history with missing
/// commits (a shallow clone) is walked by hand, as far as it goes.
fn in_ranges(repo: &Repo, tips: &[ObjectId], bases: &[ObjectId]) -> Result<HashSet<ObjectId>> {
    if let Ok(ids) = repo.reachable_not_hidden(tips, bases) {
        return Ok(ids);
    }
    let mut hidden = HashSet::new();
    for base in bases {
        hidden.extend(ancestors(repo, *base)?);
    }
    let mut out = HashSet::new();
    for tip in tips {
        out.extend(
            ancestors(repo, *tip)?
                .into_iter()
                .filter(|id| !hidden.contains(id)),
        );
    }
    Ok(out)
}

fn ancestors(repo: &Repo, tip: ObjectId) -> Result<HashSet<ObjectId>> {
    let mut out = HashSet::new();
    let mut stack = vec![tip];
    while let Some(id) = stack.pop() {
        if !repo.gix().has_object(id) || !out.insert(id) {
            continue;
        }
        stack.extend(repo.commit(id)?.parents);
    }
    Ok(out)
}

/// Orders commits as an index run from `tips` would (see [`topological`]):
/// parents first, then from the tips' side, else oldest first. A store
/// loaded from notes then numbers its commits as the run that made them did.
pub(super) fn in_graph_order(commits: Vec<CommitInfo>, tips: &[ObjectId]) -> Vec<CommitInfo> {
    let commits: HashMap<ObjectId, CommitInfo> = commits.into_iter().map(|c| (c.id, c)).collect();
    topological(commits, tips)
}

/// Orders commits so that every parent comes before its children. Commits
/// not reachable from a tip through the set itself (the set may have holes
/// where commits are already noted) are ordered from the oldest.
fn topological(mut commits: HashMap<ObjectId, CommitInfo>, tips: &[ObjectId]) -> Vec<CommitInfo> {
    let mut starts: Vec<ObjectId> = tips.to_vec();
    let mut rest: Vec<(i64, ObjectId)> = commits.values().map(|c| (c.time, c.id)).collect();
    rest.sort();
    starts.extend(rest.into_iter().map(|(_, id)| id));
    let mut out = Vec::with_capacity(commits.len());
    // Iterative post-order DFS.
    for start in starts {
        let mut stack = vec![(start, false)];
        while let Some((id, expanded)) = stack.pop() {
            if expanded {
                if let Some(info) = commits.remove(&id) {
                    out.push(info);
                }
                continue;
            }
            let Some(info) = commits.get(&id) else {
                continue;
            };
            stack.push((id, true));
            for parent in info.parents.iter().rev() {
                if commits.contains_key(parent) {
                    stack.push((*parent, false));
                }
            }
        }
    }
    out
}

/// Commits reachable from HEAD without a note (outside the backfill window
/// too), looking at no more than `limit` commits. Returns (count, complete).
pub fn unindexed_count(repo: &Repo, limit: usize) -> Result<(usize, bool)> {
    let mut notes = repo.notes()?;
    let head = match repo.resolve_commit("HEAD") {
        Ok(head) => head,
        Err(diffidx_core::Error::EmptyRepository) => return Ok((0, true)),
        Err(e) => return Err(e.into()),
    };
    let mut seen = HashSet::new();
    let mut unindexed = 0;
    let mut stack = vec![head];
    while let Some(id) = stack.pop() {
        if seen.len() >= limit {
            return Ok((unindexed, false));
        }
        if !repo.gix().has_object(id) || !seen.insert(id) {
            continue;
        }
        if notes.get_id(id)?.is_none() {
            unindexed += 1;
        }
        stack.extend(repo.commit(id)?.parents);
    }
    Ok((unindexed, true))
}

/// The commits `tip` reaches whose author time is at or after `since`,
/// newest first: a [`WindowWalk`], the walk a `Window::Since` index run
/// makes, so both see the same commits.
pub fn commits_since(repo: &Repo, tip: ObjectId, since: i64) -> Result<Vec<CommitInfo>> {
    let mut out = Vec::new();
    let mut walk = WindowWalk::new(repo, &[tip], Some(since))?;
    while let Some(info) = walk.next() {
        walk.parents(&info)?;
        if info.time >= since {
            out.push(info);
        }
    }
    out.sort_by(|a, b| b.time.cmp(&a.time).then(a.id.cmp(&b.id)));
    Ok(out)
}
