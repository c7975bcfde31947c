//! The change types of history entries: which parts of a declaration each
//! change touched, and whether it was renamed, moved or re-housed.
//!
//! Computed when asked, from the two file versions an entry names (the
//! first parent's, or the side its lineage names, and the commit's), so the
//! notes stay as they are. Each file version is parsed once per call, and
//! incrementally from the version read before it
//! (`SymbolDiffer::symbol_parts`): consecutive entries of one history are
//! close versions of the same few files.

use diffidx_core::delta::Lineage;
use diffidx_core::git::Repo;
use diffidx_core::lang::parts::ChangeType;
use diffidx_core::note::NoteDocument;
use diffidx_core::qualname::own_name;
use diffidx_core::{ObjectId, Status, Symbol, SymbolDelta, SymbolDiffer, SymbolKind};

use crate::store::HistoryEntry;

/// One recorded change of one symbol: what a history entry and a note's
/// delta both say.
pub struct Change<'a> {
    pub status: Status,
    pub kind: SymbolKind,
    pub path: &'a str,
    pub old_path: Option<&'a str>,
    pub qualname: &'a str,
    pub sig: &'a str,
    pub from: Option<&'a Lineage>,
}

impl<'a> From<&'a HistoryEntry> for Change<'a> {
    fn from(e: &'a HistoryEntry) -> Change<'a> {
        Change {
            status: e.status,
            kind: e.kind,
            path: &e.path,
            old_path: e.old_path.as_deref(),
            qualname: &e.qualname,
            sig: &e.sig,
            from: e.from.as_ref(),
        }
    }
}

impl<'a> From<&'a SymbolDelta> for Change<'a> {
    fn from(d: &'a SymbolDelta) -> Change<'a> {
        Change {
            status: d.status,
            kind: d.kind,
            path: &d.path,
            old_path: d.old_path.as_deref(),
            qualname: &d.qualname,
            sig: &d.sig,
            from: d.from.as_ref(),
        }
    }
}

/// Gives each entry its change types, against its commit's first parent
/// (a merge's entry in the first-parent view stands for that diff too); an
/// entry whose versions cannot be read keeps none (the answer is still
/// right, only less detailed).
pub fn attach_changes(repo: &Repo, entries: &mut [HistoryEntry]) {
    // Two halves on two threads: parsing is most of the work, and each
    // half still reads its versions in history order.
    const ALONE: usize = 8;
    let two = std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
    if !two || entries.len() < ALONE {
        return attach_in_order(repo, entries);
    }
    let shared = repo.share();
    let (newer, older) = entries.split_at_mut(entries.len() / 2);
    // Taken by the helper, or here when no thread can be started.
    let older = std::sync::Mutex::new(older);
    let take = |repo: &Repo| {
        if let Ok(mut older) = older.lock() {
            attach_in_order(repo, &mut older);
        }
    };
    std::thread::scope(|scope| {
        let helper = std::thread::Builder::new()
            .name("diffidx-changes".into())
            .spawn_scoped(scope, || take(&shared.to_local()));
        attach_in_order(repo, newer);
        match helper {
            Ok(helper) => {
                if let Err(panic) = helper.join() {
                    std::panic::resume_unwind(panic);
                }
            }
            Err(_) => take(repo),
        }
    });
}

fn attach_in_order(repo: &Repo, entries: &mut [HistoryEntry]) {
    let Ok(mut differ) = SymbolDiffer::new(repo, Default::default()) else {
        return;
    };
    for entry in entries {
        let versions = repo.resolve_commit(&entry.commit).and_then(|commit| {
            let parent = repo.commit(commit)?.parents.first().copied();
            Ok(parent.map(|parent| (parent, commit)))
        });
        if let Ok(Some((old, new))) = versions {
            let change = Change::from(&*entry);
            entry.changes = change_types(repo, &mut differ, old, new, &change).unwrap_or_default();
        }
    }
}

/// The change types of each delta of a note, in order (none when the note
/// names no two commits: a root commit, a patch).
pub fn note_changes(repo: &Repo, note: &NoteDocument) -> Vec<Vec<ChangeType>> {
    let commit = |hex: &Option<String>| {
        hex.as_deref()
            .and_then(|h| ObjectId::from_hex(h.as_bytes()).ok())
    };
    let none = || vec![Vec::new(); note.deltas.len()];
    let (Some(old), Some(new)) = (commit(&note.parent), commit(&note.commit)) else {
        return none();
    };
    let Ok(mut differ) = SymbolDiffer::new(repo, Default::default()) else {
        return none();
    };
    note.deltas
        .iter()
        .map(|d| change_types(repo, &mut differ, old, new, &Change::from(d)).unwrap_or_default())
        .collect()
}

/// The change types of one change from the `old` commit to the `new` one:
/// none for an addition (unless its lineage names what it continues) or a
/// deletion.
pub fn change_types(
    repo: &Repo,
    differ: &mut SymbolDiffer<'_>,
    old: ObjectId,
    new: ObjectId,
    change: &Change<'_>,
) -> diffidx_core::Result<Vec<ChangeType>> {
    let (old_path, old_qualname, old_sig) = match (change.status, change.from) {
        (Status::Added, Some(from)) => (
            from.path.as_str(),
            from.qualname.as_str(),
            from.sig.as_str(),
        ),
        (Status::Modified | Status::Moved, _) => (
            change.old_path.unwrap_or(change.path),
            change.qualname,
            change.sig,
        ),
        _ => return Ok(Vec::new()),
    };
    if !repo.gix().has_object(old) {
        return Ok(Vec::new());
    }
    let new_side = differ.symbol_parts(new, change.path, |s| {
        s.qualname == change.qualname && s.kind == change.kind && s.sig == change.sig
    })?;
    let same_key = |s: &Symbol| s.qualname == old_qualname && s.sig == old_sig;
    // A symbol moved to another file keeps its own name, kind and text,
    // not always its qualname (its class was renamed).
    let same_declaration = |s: &Symbol| {
        s.kind == change.kind && s.sig == old_sig && s.name == own_name(change.qualname)
    };
    let old_side = match differ.symbol_parts(old, old_path, same_key)? {
        Some(found) => Some(found),
        // Of several (`Call.execute` and `Call.AsyncCall.execute`), the one
        // whose text it has: a move across files keeps the text.
        None if change.status == Status::Moved => {
            let text = new_side.as_ref().map(|(s, _)| s.content_hash);
            let same_text = |s: &Symbol| same_declaration(s) && Some(s.content_hash) == text;
            match differ.symbol_parts(old, old_path, same_text)? {
                Some(found) => Some(found),
                None => differ.symbol_parts(old, old_path, same_declaration)?,
            }
        }
        None => None,
    };
    let old_qualname = old_side
        .as_ref()
        .map_or(old_qualname, |(s, _)| s.qualname.as_str());
    let mut types = Vec::new();
    if own_name(old_qualname) != own_name(change.qualname) {
        types.push(ChangeType::Rename);
    }
    if container(old_qualname) != container(change.qualname) {
        types.push(ChangeType::Container);
    }
    if old_path != change.path {
        types.push(ChangeType::Move);
    }
    if let (Some((_, Some(old))), Some((_, Some(new)))) = (&old_side, &new_side) {
        types.extend(ChangeType::of_parts(&old.changed(new), change.kind));
    }
    types.sort();
    types.dedup();
    Ok(types)
}

/// What encloses a qualname's own name (`a.B` of `a.B.f`, `a.B.f#2`).
fn container(qualname: &str) -> &str {
    let own = own_name(qualname);
    qualname.rfind(own).map_or("", |at| &qualname[..at])
}
