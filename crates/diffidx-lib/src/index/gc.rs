//! `gc`: forgets the commits no ref reaches any more.
//!
//! A rebase or an amend leaves the old commits behind, with their notes and
//! their rows in the store. `log` already hides them (it answers for one
//! history); `gc` removes their notes in one notes commit and rebuilds the
//! store from the notes that remain, so what is indexed is again exactly
//! what the refs reach.

use std::collections::HashSet;

use diffidx_core::git::Repo;
use diffidx_core::{DiffOptions, ObjectId};

use super::{rebuild_locked, Progress, Result};
use crate::state::{StateDir, WriterLock};

/// What a `gc` run found and did.
#[derive(Debug, Default)]
pub struct GcReport {
    /// Noted commits no ref reaches (pruned unless this was a dry run).
    pub unreachable: Vec<String>,
    /// Commits loaded into the rebuilt store (0 when nothing was pruned).
    pub loaded: usize,
}

/// Finds the noted commits no ref reaches and, unless `dry_run`, removes
/// their notes and rebuilds the store without them.
pub fn gc(
    repo: &Repo,
    diff: &DiffOptions,
    dry_run: bool,
    progress: &mut dyn Progress,
) -> Result<GcReport> {
    let state = StateDir::of(repo);
    let _lock = WriterLock::acquire(&state, WriterLock::default_wait(), &mut |holder| {
        progress.waiting_for(holder)
    })?;
    let mut notes = repo.notes()?;
    let noted: HashSet<ObjectId> = notes.list()?.into_iter().map(|(c, _)| c).collect();
    let reachable = repo.reachable_among(&repo.ref_tips()?, &noted)?;
    let mut unreachable: Vec<ObjectId> = noted.difference(&reachable).copied().collect();
    unreachable.sort();
    let mut report = GcReport {
        unreachable: unreachable.iter().map(ToString::to_string).collect(),
        loaded: 0,
    };
    if dry_run || unreachable.is_empty() {
        return Ok(report);
    }
    for commit in &unreachable {
        notes.remove(*commit)?;
    }
    notes.commit(&format!(
        "diffidx: gc {} commits no ref reaches",
        unreachable.len()
    ))?;
    if state.store().exists() {
        report.loaded = rebuild_locked(repo, diff, &state)?.loaded;
    }
    Ok(report)
}
