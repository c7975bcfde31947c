//! `fsck`: checks every note and the store against the notes, and says what
//! repairs what.
//!
//! The notes are the record and the store is a cache of them, so every check
//! compares the cache with the record: which commits are loaded, each
//! commit's changes (symbol, status, lines), and each stored symbol's id
//! against its own path, kind, qualname and signature (an id is their
//! blake3, so damaged strings show). Engines notice broken pages, not wrong
//! values; this notices wrong values. Nothing is changed here.

use std::collections::{HashMap, HashSet};

use diffidx_core::git::Repo;
use diffidx_core::{symbol_id, SymbolKind};

use crate::open;
use crate::state::StateDir;
use crate::store::seal::SealState;
use crate::store::{StoreContents, StoreError};

/// At most this many examples of each kind of problem are kept.
const EXAMPLES: usize = 20;

#[derive(Debug, Default, serde::Serialize)]
pub struct FsckReport {
    /// Notes read (for commits in this clone).
    pub notes: usize,
    /// Notes for commits this clone does not have (fine: another branch).
    pub notes_for_absent_commits: usize,
    /// Notes that fail validation: (commit, reason).
    pub invalid_notes: Vec<(String, String)>,
    pub invalid_note_count: usize,
    pub store: StoreCheck,
}

#[derive(Debug, Default, serde::Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum StoreCheck {
    /// No store yet (nothing indexed here).
    #[default]
    Absent,
    /// The store cannot be read: the engine's error.
    Unreadable {
        reason: String,
    },
    Checked(StoreFindings),
}

#[derive(Debug, serde::Serialize)]
pub struct StoreFindings {
    /// Whether the file is as diffidx last wrote it.
    pub seal: SealState,
    pub commits: usize,
    pub symbols: usize,
    pub changes: usize,
    /// Validly noted commits the store has not loaded.
    pub missing_commits: Vec<String>,
    pub missing_commit_count: usize,
    /// Loaded commits with no valid note.
    pub unnoted_commits: Vec<String>,
    pub unnoted_commit_count: usize,
    /// Commits whose changes differ from their note: (commit, what differs).
    pub mismatched_commits: Vec<(String, String)>,
    pub mismatched_commit_count: usize,
    /// Symbols whose id is not the blake3 of their own fields, or whose
    /// kind or hash is malformed: (id, what).
    pub damaged_symbols: Vec<(String, String)>,
    pub damaged_symbol_count: usize,
}

impl FsckReport {
    pub fn is_clean(&self) -> bool {
        self.invalid_note_count == 0
            && match &self.store {
                StoreCheck::Absent => true,
                StoreCheck::Unreadable { .. } => false,
                StoreCheck::Checked(f) => {
                    f.seal != SealState::Differs
                        && f.missing_commit_count
                            + f.unnoted_commit_count
                            + f.mismatched_commit_count
                            + f.damaged_symbol_count
                            == 0
                }
            }
    }

    /// What to run, for each problem found.
    pub fn repairs(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.invalid_note_count > 0 {
            out.push(format!(
                "{} invalid notes: `git diffidx rebuild` recomputes those commits and replaces their notes",
                self.invalid_note_count
            ));
        }
        match &self.store {
            StoreCheck::Absent => {}
            StoreCheck::Unreadable { .. } => out.push(
                "the store cannot be read: `git diffidx rebuild` recreates it from the notes"
                    .into(),
            ),
            StoreCheck::Checked(f) => {
                if f.seal == SealState::Differs {
                    out.push(
                        "the store file was changed by something other than diffidx: \
                         `git diffidx rebuild` recreates it from the notes"
                            .into(),
                    );
                }
                if f.missing_commit_count > 0
                    && f.damaged_symbol_count + f.mismatched_commit_count == 0
                {
                    out.push(format!(
                        "{} noted commits are not in the store: `git diffidx index` loads them",
                        f.missing_commit_count
                    ));
                }
                if f.unnoted_commit_count + f.mismatched_commit_count + f.damaged_symbol_count > 0 {
                    out.push(
                        "the store disagrees with the notes: `git diffidx rebuild` recreates it from them"
                            .into(),
                    );
                }
            }
        }
        out
    }
}

#[derive(Debug, thiserror::Error)]
pub enum FsckError {
    #[error(transparent)]
    Core(#[from] diffidx_core::Error),
    #[error(transparent)]
    Open(#[from] open::OpenError),
}

/// One note's changes, as the store keeps them.
type Changes = Vec<(String, String, u32, u32)>;

/// What of the store to check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreScan {
    /// Read it and compare it with the notes.
    Compare,
    /// Do not read it; it is known to be unreadable, for this reason (a
    /// reader crashed on it).
    Skip(String),
}

/// Checks every note, then the store against the valid ones.
pub fn check(repo: &Repo, scan: StoreScan) -> Result<FsckReport, FsckError> {
    let mut report = FsckReport::default();
    let mut notes = repo.notes()?;
    let mut noted: HashMap<String, Changes> = HashMap::new();
    for (commit, _) in notes.list()? {
        let Ok(info) = repo.commit(commit) else {
            report.notes_for_absent_commits += 1;
            continue;
        };
        report.notes += 1;
        match notes.read_validated(&info)? {
            Some(Ok(note)) => {
                let mut changes: Changes = note
                    .deltas
                    .iter()
                    .map(|d| {
                        (
                            d.id.clone(),
                            d.status.as_str().to_owned(),
                            d.start_line,
                            d.end_line,
                        )
                    })
                    .collect();
                changes.sort();
                noted.insert(commit.to_string(), changes);
            }
            Some(Err(reason)) => {
                report.invalid_note_count += 1;
                if report.invalid_notes.len() < EXAMPLES {
                    report.invalid_notes.push((commit.to_string(), reason));
                }
            }
            None => {}
        }
    }
    let state = StateDir::of(repo);
    if !state.store().exists() {
        return Ok(report);
    }
    if let StoreScan::Skip(reason) = scan {
        report.store = StoreCheck::Unreadable { reason };
        return Ok(report);
    }
    let contents = open::for_reading(repo, open::WAIT)
        .map_err(|e| e.to_string())
        .and_then(|store| store.contents().map_err(|e: StoreError| e.to_string()));
    // After the open: a store left to replay is replayed (and sealed) by it.
    let seal = crate::store::seal::check(&state.store());
    report.store = match contents {
        Ok(contents) => StoreCheck::Checked(compare(&noted, contents, seal)),
        Err(reason) => StoreCheck::Unreadable { reason },
    };
    Ok(report)
}

fn compare(
    noted: &HashMap<String, Changes>,
    mut store: StoreContents,
    seal: SealState,
) -> StoreFindings {
    let mut f = StoreFindings {
        seal,
        commits: store.commits.len(),
        symbols: store.symbols.len(),
        changes: store.changes.values().map(Vec::len).sum(),
        missing_commits: Vec::new(),
        missing_commit_count: 0,
        unnoted_commits: Vec::new(),
        unnoted_commit_count: 0,
        mismatched_commits: Vec::new(),
        mismatched_commit_count: 0,
        damaged_symbols: Vec::new(),
        damaged_symbol_count: 0,
    };
    let keep = |list: &mut Vec<String>, count: &mut usize, item: String| {
        *count += 1;
        if list.len() < EXAMPLES {
            list.push(item);
        }
    };
    let mut missing: Vec<&String> = noted
        .keys()
        .filter(|c| !store.commits.contains(*c))
        .collect();
    missing.sort();
    for commit in missing {
        keep(
            &mut f.missing_commits,
            &mut f.missing_commit_count,
            commit.clone(),
        );
    }
    let mut loaded: Vec<&String> = store.commits.iter().collect();
    loaded.sort();
    for commit in loaded {
        let mut actual = store.changes.remove(commit).unwrap_or_default();
        let Some(expected) = noted.get(commit) else {
            keep(
                &mut f.unnoted_commits,
                &mut f.unnoted_commit_count,
                commit.clone(),
            );
            continue;
        };
        actual.sort();
        if &actual != expected {
            f.mismatched_commit_count += 1;
            if f.mismatched_commits.len() < EXAMPLES {
                let what = describe_difference(expected, &actual);
                f.mismatched_commits.push((commit.clone(), what));
            }
        }
    }
    // Changes that point at a commit node that is gone.
    let mut orphans: Vec<String> = store.changes.into_keys().collect();
    orphans.sort();
    for commit in orphans {
        f.mismatched_commit_count += 1;
        if f.mismatched_commits.len() < EXAMPLES {
            f.mismatched_commits
                .push((commit, "changes without their commit".into()));
        }
    }
    for [id, path, kind, qualname, sig, hash] in &store.symbols {
        let problem = match SymbolKind::parse(kind) {
            None => Some(format!("unknown kind {kind:?}")),
            Some(k) if symbol_id(path, k, qualname, sig) != *id => {
                Some("id does not match its path, kind, qualname and sig".to_owned())
            }
            Some(_) if !hash.is_empty() && !is_hex64(hash) => {
                Some("content hash is malformed".to_owned())
            }
            Some(_) => None,
        };
        if let Some(what) = problem {
            f.damaged_symbol_count += 1;
            if f.damaged_symbols.len() < EXAMPLES {
                f.damaged_symbols.push((id.clone(), what));
            }
        }
    }
    f
}

fn describe_difference(expected: &Changes, actual: &Changes) -> String {
    let want: HashSet<&(String, String, u32, u32)> = expected.iter().collect();
    let have: HashSet<&(String, String, u32, u32)> = actual.iter().collect();
    let lacking = want.difference(&have).count();
    let extra = have.difference(&want).count();
    format!(
        "the note has {} changes, the store {}: {lacking} missing, {extra} not in the note",
        expected.len(),
        actual.len()
    )
}

fn is_hex64(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}
