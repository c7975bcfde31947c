//! Which commits to index, in which order: a walk of the commit graph.

use std::collections::{HashMap, HashSet};

use diffidx_core::git::notes::Notes;
use diffidx_core::git::{CommitInfo, Repo};
use diffidx_core::ObjectId;

use super::{IndexOptions, Result, Window};

/// The commits to index, oldest first (parents before children), and the
/// shallow-boundary commits that cannot be. Walks back from the tips and
/// stops at commits older than the window, excluded by `A..B`, or (when
/// `trust_noted`) that already have a note, since this clone noted their
/// ancestors before them.
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
    let mut excluded: HashSet<ObjectId> = HashSet::new();
    for rev in &revs {
        if let Some((a, b)) = rev.split_once("..") {
            let b = b.trim_start_matches('.');
            let base = repo.resolve_commit(if a.is_empty() { "HEAD" } else { a })?;
            excluded.extend(ancestors(repo, base)?);
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
    let mut stack: Vec<ObjectId> = tips.clone();
    let mut visited: HashSet<ObjectId> = HashSet::new();
    while let Some(id) = stack.pop() {
        if excluded.contains(&id) || !visited.insert(id) || !repo.gix().has_object(id) {
            continue;
        }
        let noted = notes.get_id(id)?.is_some();
        if noted && trust_noted {
            continue;
        }
        let info = repo.commit(id)?;
        if since.is_some_and(|since| info.time < since) {
            continue;
        }
        if noted {
            stack.extend(info.parents.iter().copied());
            continue;
        }
        if info.parents.iter().any(|p| !repo.gix().has_object(*p)) {
            shallow.push(id.to_string());
            continue;
        }
        stack.extend(info.parents.iter().copied());
        seen.insert(id, info);
    }
    Ok((topological(seen, &tips), shallow))
}

/// Every commit reachable from `tip`.
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
/// newest first, walking back no further than the window (the rule a
/// `Window::Since` index run follows, so both see the same commits).
pub fn commits_since(repo: &Repo, tip: ObjectId, since: i64) -> Result<Vec<CommitInfo>> {
    let mut out = Vec::new();
    let mut stack = vec![tip];
    let mut visited: HashSet<ObjectId> = HashSet::new();
    while let Some(id) = stack.pop() {
        if !visited.insert(id) || !repo.gix().has_object(id) {
            continue;
        }
        let info = repo.commit(id)?;
        if info.time < since {
            continue;
        }
        stack.extend(info.parents.iter().copied());
        out.push(info);
    }
    out.sort_by(|a, b| b.time.cmp(&a.time).then(a.id.cmp(&b.id)));
    Ok(out)
}
