//! Change summaries (`semantic_delta`): one line per symbol a commit
//! modified, written by the chat model, kept in their own notes ref
//! `refs/notes/diffidx-semantic` beside the record, never inside it.
//!
//! The record is deterministic and validated byte for byte; a model's
//! prose is neither, so it must not be able to change a note. Its own ref
//! still travels with the repository (`git push origin
//! refs/notes/diffidx-semantic`), and every summary note names its model.
//!
//! An index run asks for the commits that modified symbols and have no
//! summary note yet, newest first, within the run's question budget; a
//! commit is written only when every one of its symbols is answered, so a
//! run cut short by the budget or an outage leaves no half note, and the
//! next run goes on. Answers are cached under the symbol's text before and
//! after (`answers`), so a rebased or cherry-picked change is not asked
//! again. Containers are left out: a class is modified whenever one of its
//! members is, and the member's summary says it better.

use std::collections::HashMap;

use diffidx_core::git::Repo;
use diffidx_core::symbol::SymbolKind;
use diffidx_core::{ObjectId, SymbolDiffer};
use diffidx_semantic::prompts::{delta_request, one_line};
use serde::{Deserialize, Serialize};

use super::chat::Asker;
use super::SemanticError;
use crate::store::{Reader, WindowChange};

/// The notes ref of change summaries.
pub const SUMMARY_NOTES_REF: &str = "refs/notes/diffidx-semantic";
/// The version of [`SummaryNote`].
pub const SUMMARY_NOTE_VERSION: u32 = 1;
/// A summary note larger than this (from a remote) is not read.
const MAX_SUMMARY_NOTE_BYTES: u64 = 512 * 1024;
/// What the answer cache files change summaries under.
const PURPOSE: &str = "delta";

/// One commit's change summaries (the note in [`SUMMARY_NOTES_REF`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummaryNote {
    pub v: u32,
    pub commit: String,
    /// The model that wrote the summaries (`provider:model`).
    pub model: String,
    pub symbols: Vec<SymbolSummary>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SymbolSummary {
    /// The symbol's id, as in the record.
    pub id: String,
    pub qualname: String,
    pub path: String,
    pub summary: String,
}

/// A change summary as queries show it (kept with the history entries it
/// annotates, so the store needs nothing of this module).
pub use crate::store::ChangeSummary;

/// What an index run did about change summaries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeltaReport {
    /// Commits given a summary note, and their symbols summarized.
    pub commits: usize,
    pub symbols: usize,
    /// Questions asked of the model, and answered from the cache.
    pub asked: usize,
    pub cached: usize,
    /// Commits still without summaries (the budget ran out, or the model
    /// failed: `failed` says why).
    pub left: usize,
    pub failed: Option<String>,
    pub model: String,
}

/// Writes the summary notes of commits that lack one, newest first, within
/// the asker's limit.
pub fn update(
    repo: &Repo,
    reader: &Reader<'_>,
    differ: &mut SymbolDiffer<'_>,
    asker: &mut Asker<'_>,
) -> Result<DeltaReport, SemanticError> {
    let mut report = DeltaReport {
        model: asker.name().to_owned(),
        ..DeltaReport::default()
    };
    let mut notes = repo.notes_at(SUMMARY_NOTES_REF)?;
    let mut pending = Vec::new();
    for (sha, parent) in reader.commits_modifying()? {
        let Ok(id) = ObjectId::from_hex(sha.as_bytes()) else {
            continue;
        };
        if notes.get_id(id)?.is_none() {
            pending.push((id, sha, parent));
        }
    }
    let asked_before = asker.asked;
    let cached_before = asker.cached;
    let mut done = 0;
    for (id, sha, parent) in &pending {
        let changes = summarized_changes(reader.changes_in(std::slice::from_ref(sha))?);
        let parent = parent
            .as_deref()
            .and_then(|p| ObjectId::from_hex(p.as_bytes()).ok())
            .filter(|p| repo.gix().has_object(*p));
        let mut symbols = Vec::with_capacity(changes.len());
        let mut complete = true;
        for change in &changes {
            let Some(kind) = SymbolKind::parse(&change.kind) else {
                continue;
            };
            let source = |differ: &mut SymbolDiffer<'_>, at: ObjectId, path: &str| {
                differ.symbol_source(at, path, &change.qualname, kind, &change.sig)
            };
            let before = match parent {
                Some(p) => source(
                    differ,
                    p,
                    change.old_path.as_deref().unwrap_or(&change.path),
                )?,
                None => None,
            };
            let after = source(differ, *id, &change.path)?;
            let (Some(before), Some(after)) = (before, after) else {
                continue; // a side not readable here (a shallow clone)
            };
            let request = delta_request(
                &change.kind,
                &change.qualname,
                &change.path,
                &before,
                &after,
            );
            let Some(answer) = asker.ask_within(PURPOSE, &request) else {
                complete = false;
                break;
            };
            if let Some(summary) = one_line(&answer.text) {
                symbols.push(SymbolSummary {
                    id: change.id.clone(),
                    qualname: change.qualname.clone(),
                    path: change.path.clone(),
                    summary,
                });
            }
        }
        if !complete {
            break;
        }
        report.symbols += symbols.len();
        let note = SummaryNote {
            v: SUMMARY_NOTE_VERSION,
            commit: sha.clone(),
            model: asker.name().to_owned(),
            symbols,
        };
        let json =
            serde_json::to_string(&note).map_err(|e| SemanticError::Setting(e.to_string()))?;
        notes.stage(*id, &json)?;
        done += 1;
    }
    if done > 0 {
        notes.commit(&format!(
            "diffidx: change summaries of {done} commits by {}",
            asker.name()
        ))?;
    }
    report.commits = done;
    report.failed = asker.failed.clone();
    report.left = pending.len() - done;
    report.asked = asker.asked - asked_before;
    report.cached = asker.cached - cached_before;
    Ok(report)
}

/// The changes of one commit worth a summary: modified text, and not a
/// container of another such change (its member's summary says it).
fn summarized_changes(changes: Vec<WindowChange>) -> Vec<WindowChange> {
    let modified: Vec<WindowChange> = changes
        .into_iter()
        .filter(|c| c.status == "MODIFIED" || (c.status == "MOVED" && c.modified))
        .collect();
    let contains = |outer: &WindowChange, inner: &WindowChange| {
        outer.path == inner.path
            && inner.qualname.len() > outer.qualname.len()
            && inner.qualname.starts_with(&outer.qualname)
            && matches!(
                inner.qualname[outer.qualname.len()..].chars().next(),
                Some('.' | ':')
            )
    };
    let mut kept: Vec<WindowChange> = modified
        .iter()
        .filter(|c| !modified.iter().any(|m| contains(c, m)))
        .cloned()
        .collect();
    kept.sort_by(|a, b| (&a.path, a.start_line, &a.id).cmp(&(&b.path, b.start_line, &b.id)));
    kept
}

/// The summary note of `commit`, if there is a valid one (notes may come
/// from a remote: a malformed or oversized one, or one of another commit,
/// is ignored).
pub fn read_note(
    notes: &mut diffidx_core::git::notes::Notes<'_>,
    commit: ObjectId,
) -> Option<SummaryNote> {
    let bytes = match notes.get(commit, MAX_SUMMARY_NOTE_BYTES).ok()?? {
        diffidx_core::git::notes::NoteBytes::Read { bytes, .. } => bytes,
        diffidx_core::git::notes::NoteBytes::TooLarge { .. } => return None,
    };
    let note: SummaryNote = serde_json::from_slice(&bytes).ok()?;
    (note.v == SUMMARY_NOTE_VERSION
        && ObjectId::from_hex(note.commit.as_bytes()).ok() == Some(commit))
    .then_some(note)
}

/// The change summaries of these `(commit, symbol id)` pairs that summary
/// notes hold. Nothing is read when there are no summary notes.
pub fn summaries_of(
    repo: &Repo,
    wanted: &[(&str, &str)],
) -> HashMap<(String, String), ChangeSummary> {
    let mut found = HashMap::new();
    let Ok(mut notes) = repo.notes_at(SUMMARY_NOTES_REF) else {
        return found;
    };
    if notes.tip().is_none() {
        return found;
    }
    let mut read: HashMap<&str, Option<SummaryNote>> = HashMap::new();
    for &(commit, id) in wanted {
        let note = read.entry(commit).or_insert_with(|| {
            ObjectId::from_hex(commit.as_bytes())
                .ok()
                .and_then(|c| read_note(&mut notes, c))
        });
        let Some(note) = note else { continue };
        if let Some(s) = note.symbols.iter().find(|s| s.id == id) {
            found.insert(
                (commit.to_owned(), id.to_owned()),
                ChangeSummary {
                    text: s.summary.clone(),
                    model: note.model.clone(),
                },
            );
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(status: &str, qualname: &str, modified: bool) -> WindowChange {
        WindowChange {
            commit: "c".into(),
            time: 0,
            date: String::new(),
            author: String::new(),
            subject: String::new(),
            status: status.into(),
            id: qualname.into(),
            kind: "method".into(),
            language: "C#".into(),
            path: "a.cs".into(),
            old_path: None,
            qualname: qualname.into(),
            sig: "()".into(),
            start_line: 1,
            end_line: 1,
            modified,
        }
    }

    #[test]
    fn members_are_summarized_not_their_containers() {
        let kept = summarized_changes(vec![
            change("MODIFIED", "Acme.Billing", false),
            change("MODIFIED", "Acme.Billing.Retry", false),
            change("MODIFIED", "Acme.BillingTools", false),
            change("ADDED", "Acme.Billing.New", false),
            change("MOVED", "Acme.Moved", true),
            change("MOVED", "Acme.Same", false),
        ]);
        let names: Vec<&str> = kept.iter().map(|c| c.qualname.as_str()).collect();
        assert_eq!(
            names,
            ["Acme.Billing.Retry", "Acme.BillingTools", "Acme.Moved"]
        );
    }
}
