//! The status rules of DESIGN.md §3: from the symbols of both sides of each
//! changed file to [`SymbolDelta`]s.
//!
//! Hunks decide which symbols are candidates; the normalized text (its hash)
//! decides the label, so comment- and whitespace-only edits stay unchanged.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::git::hunks::LineChange;
use crate::symbol::{symbol_id, FileSymbols, Symbol, SymbolKey, SymbolKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    Added,
    Modified,
    Deleted,
    Moved,
    Unchanged,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Added => "ADDED",
            Status::Modified => "MODIFIED",
            Status::Deleted => "DELETED",
            Status::Moved => "MOVED",
            Status::Unchanged => "UNCHANGED",
        }
    }
}

impl Status {
    pub fn parse(s: &str) -> Option<Status> {
        [
            Status::Added,
            Status::Modified,
            Status::Deleted,
            Status::Moved,
            Status::Unchanged,
        ]
        .into_iter()
        .find(|status| status.as_str() == s)
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One symbol's change in one commit: a delta of the note format (§4).
/// Field order is the serialized order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SymbolDelta {
    pub id: String,
    pub status: Status,
    pub kind: SymbolKind,
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    pub qualname: String,
    pub sig: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    pub start_line: u32,
    pub end_line: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_hash: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified: Option<bool>,
}

/// One version of a file: its path and symbols.
#[derive(Debug, Clone, Copy)]
pub struct FileVersion<'a> {
    pub path: &'a str,
    pub symbols: &'a FileSymbols,
}

/// A symbol with its status, before cross-file move matching.
#[derive(Debug, Clone, Copy)]
pub struct Labeled<'a> {
    pub status: Status,
    /// The side that exists (the new side unless DELETED).
    pub file: FileVersion<'a>,
    pub index: usize,
    pub old_path: Option<&'a str>,
    pub modified: Option<bool>,
}

impl<'a> Labeled<'a> {
    pub fn symbol(&self) -> &'a Symbol {
        &self.file.symbols.symbols[self.index]
    }

    pub fn to_delta(&self) -> SymbolDelta {
        let s = self.symbol();
        let path = self.file.path;
        SymbolDelta {
            id: symbol_id(path, s.kind, &s.qualname, &s.sig),
            status: self.status,
            kind: s.kind,
            path: path.to_owned(),
            old_path: self.old_path.map(str::to_owned),
            qualname: s.qualname.clone(),
            sig: s.sig.clone(),
            parent_id: s.parent.map(|p| {
                let parent = &self.file.symbols.symbols[p];
                symbol_id(path, parent.kind, &parent.qualname, &parent.sig)
            }),
            start_line: s.start_line,
            end_line: s.end_line,
            content_hash: (self.status != Status::Deleted).then(|| s.content_hash.to_hex()),
            modified: self.modified,
        }
    }
}

/// Labels every symbol of one changed file, in source order (deleted ones
/// after the new side's). `changes` are the file's line hunks (ignored for
/// renames, where every shared key is MOVED).
pub fn label_file<'a>(
    old: Option<FileVersion<'a>>,
    new: Option<FileVersion<'a>>,
    changes: &[LineChange],
) -> Vec<Labeled<'a>> {
    let mut out = Vec::new();
    let label = |status, file, index, old_path, modified| Labeled {
        status,
        file,
        index,
        old_path,
        modified,
    };
    match (old, new) {
        (None, None) => {}
        (None, Some(new)) => {
            for i in 0..new.symbols.symbols.len() {
                out.push(label(Status::Added, new, i, None, None));
            }
        }
        (Some(old), None) => {
            for i in 0..old.symbols.symbols.len() {
                out.push(label(Status::Deleted, old, i, None, None));
            }
        }
        (Some(old), Some(new)) => {
            let renamed = old.path != new.path;
            let old_keys: HashMap<SymbolKey<'_>, usize> = old
                .symbols
                .symbols
                .iter()
                .enumerate()
                .map(|(i, s)| (s.key(), i))
                .collect();
            let mut matched = vec![false; old.symbols.symbols.len()];
            for (i, n) in new.symbols.symbols.iter().enumerate() {
                let Some(&j) = old_keys.get(&n.key()) else {
                    out.push(label(Status::Added, new, i, None, None));
                    continue;
                };
                matched[j] = true;
                let o = &old.symbols.symbols[j];
                let differs = o.content_hash != n.content_hash;
                if renamed {
                    out.push(label(Status::Moved, new, i, Some(old.path), Some(differs)));
                    continue;
                }
                let candidate = changes.iter().any(|c| {
                    c.touches_old(o.start_line, o.end_line)
                        || c.touches_new(n.start_line, n.end_line)
                });
                let status = if candidate && differs {
                    Status::Modified
                } else {
                    Status::Unchanged
                };
                out.push(label(status, new, i, None, None));
            }
            for (j, seen) in matched.iter().enumerate() {
                if !seen {
                    out.push(label(Status::Deleted, old, j, None, None));
                }
            }
        }
    }
    out
}

/// Cross-file moves: a DELETED symbol in file A and an ADDED symbol in file
/// B ≠ A with the same kind, own name and normalized text become one MOVED
/// (path B, old_path A, modified false). Greedy and one-to-one: ADDED symbols
/// in the given (diff, then source) order each take the first unmatched
/// DELETED candidate in the same order.
pub fn match_moves(labeled: &mut Vec<Labeled<'_>>) {
    type Candidate<'s> = (SymbolKind, &'s str, crate::symbol::ContentHash);
    let mut deleted: HashMap<Candidate<'_>, Vec<usize>> = HashMap::new();
    for (i, l) in labeled.iter().enumerate() {
        if l.status == Status::Deleted {
            let s = l.symbol();
            deleted
                .entry((s.kind, s.name.as_str(), s.content_hash))
                .or_default()
                .push(i);
        }
    }
    if deleted.is_empty() {
        return;
    }
    let mut taken = vec![false; labeled.len()];
    let mut moves: Vec<(usize, usize)> = Vec::new();
    for (i, l) in labeled.iter().enumerate() {
        if l.status != Status::Added {
            continue;
        }
        let s = l.symbol();
        let Some(candidates) = deleted.get(&(s.kind, s.name.as_str(), s.content_hash)) else {
            continue;
        };
        if let Some(&j) = candidates
            .iter()
            .find(|&&j| !taken[j] && labeled[j].file.path != l.file.path)
        {
            taken[j] = true;
            moves.push((i, j));
        }
    }
    for &(i, j) in &moves {
        let old_path = labeled[j].file.path;
        let added = &mut labeled[i];
        added.status = Status::Moved;
        added.old_path = Some(old_path);
        added.modified = Some(false);
    }
    let mut index = 0;
    labeled.retain(|_| {
        let keep = !taken[index];
        index += 1;
        keep
    });
}

/// Sorts deltas as the note format requires: by `(path, start_line, id)`.
pub fn sort_deltas(deltas: &mut [SymbolDelta]) {
    deltas.sort_by(|a, b| {
        (a.path.as_str(), a.start_line, a.id.as_str()).cmp(&(
            b.path.as_str(),
            b.start_line,
            b.id.as_str(),
        ))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbol::ContentHash;

    fn sym(kind: SymbolKind, qualname: &str, lines: (u32, u32), text: u8) -> Symbol {
        Symbol {
            kind,
            name: qualname.rsplit('.').next().unwrap().to_owned(),
            qualname: qualname.to_owned(),
            sig: String::new(),
            parent: None,
            start_line: lines.0,
            end_line: lines.1,
            content_hash: ContentHash([text; 32]),
        }
    }

    fn file(symbols: Vec<Symbol>) -> FileSymbols {
        FileSymbols {
            symbols,
            ..FileSymbols::default()
        }
    }

    fn summary(labeled: &[Labeled<'_>]) -> Vec<String> {
        labeled
            .iter()
            .map(|l| {
                format!(
                    "{} {} {}{}",
                    l.status,
                    l.file.path,
                    l.symbol().qualname,
                    l.old_path.map(|p| format!(" <- {p}")).unwrap_or_default()
                )
            })
            .collect()
    }

    #[test]
    fn hunks_select_and_text_decides() {
        let old = file(vec![
            sym(SymbolKind::Method, "C.A", (1, 3), 1),
            sym(SymbolKind::Method, "C.B", (4, 6), 2),
            sym(SymbolKind::Method, "C.Gone", (7, 8), 3),
        ]);
        let new = file(vec![
            sym(SymbolKind::Method, "C.A", (1, 3), 9), // text changed, in a hunk
            sym(SymbolKind::Method, "C.B", (4, 6), 2), // in a hunk, same text (comment edit)
            sym(SymbolKind::Method, "C.New", (7, 7), 4),
        ]);
        let changes = [
            LineChange {
                old: 2..3,
                new: 2..3,
            },
            LineChange {
                old: 5..9,
                new: 5..8,
            },
        ];
        let labeled = label_file(
            Some(FileVersion {
                path: "c.cs",
                symbols: &old,
            }),
            Some(FileVersion {
                path: "c.cs",
                symbols: &new,
            }),
            &changes,
        );
        assert_eq!(
            summary(&labeled),
            [
                "MODIFIED c.cs C.A",
                "UNCHANGED c.cs C.B",
                "ADDED c.cs C.New",
                "DELETED c.cs C.Gone"
            ]
        );
    }

    #[test]
    fn text_change_outside_every_hunk_is_not_a_candidate() {
        let old = file(vec![sym(SymbolKind::Method, "C.A", (1, 3), 1)]);
        let new = file(vec![sym(SymbolKind::Method, "C.A", (1, 3), 2)]);
        let labeled = label_file(
            Some(FileVersion {
                path: "c.cs",
                symbols: &old,
            }),
            Some(FileVersion {
                path: "c.cs",
                symbols: &new,
            }),
            &[LineChange {
                old: 10..11,
                new: 10..11,
            }],
        );
        assert_eq!(labeled[0].status, Status::Unchanged);
    }

    #[test]
    fn renamed_file_moves_every_shared_key() {
        let old = file(vec![
            sym(SymbolKind::Class, "C", (1, 9), 1),
            sym(SymbolKind::Method, "C.A", (2, 3), 2),
        ]);
        let new = file(vec![
            sym(SymbolKind::Class, "C", (1, 9), 5),
            sym(SymbolKind::Method, "C.A", (2, 3), 2),
        ]);
        let labeled = label_file(
            Some(FileVersion {
                path: "a.cs",
                symbols: &old,
            }),
            Some(FileVersion {
                path: "b.cs",
                symbols: &new,
            }),
            &[],
        );
        assert_eq!(
            summary(&labeled),
            ["MOVED b.cs C <- a.cs", "MOVED b.cs C.A <- a.cs"]
        );
        assert_eq!(labeled[0].modified, Some(true));
        assert_eq!(labeled[1].modified, Some(false));
    }

    #[test]
    fn cross_file_moves_are_greedy_and_one_to_one() {
        let a = file(vec![
            sym(SymbolKind::Method, "X.Run", (1, 2), 7),
            sym(SymbolKind::Method, "X.Run2", (3, 4), 7),
        ]);
        let b = file(vec![sym(SymbolKind::Method, "Y.Run", (1, 2), 7)]);
        let c = file(vec![sym(SymbolKind::Method, "Z.Run", (1, 2), 7)]);
        let same = file(vec![sym(SymbolKind::Method, "W.Run", (1, 2), 7)]);
        let mut labeled = Vec::new();
        labeled.extend(label_file(
            Some(FileVersion {
                path: "a.cs",
                symbols: &a,
            }),
            None,
            &[],
        ));
        labeled.extend(label_file(
            None,
            Some(FileVersion {
                path: "b.cs",
                symbols: &b,
            }),
            &[],
        ));
        labeled.extend(label_file(
            None,
            Some(FileVersion {
                path: "c.cs",
                symbols: &c,
            }),
            &[],
        ));
        // An ADDED in the same file as the DELETED never matches it.
        labeled.extend(label_file(
            None,
            Some(FileVersion {
                path: "a.cs",
                symbols: &same,
            }),
            &[],
        ));
        match_moves(&mut labeled);
        assert_eq!(
            summary(&labeled),
            [
                "DELETED a.cs X.Run2",
                "MOVED b.cs Y.Run <- a.cs",
                "ADDED c.cs Z.Run",
                "ADDED a.cs W.Run"
            ]
        );
    }

    #[test]
    fn delta_serializes_in_note_field_order() {
        let f = file(vec![sym(SymbolKind::Method, "C.A", (2, 3), 1)]);
        let labeled = label_file(
            None,
            Some(FileVersion {
                path: "c.cs",
                symbols: &f,
            }),
            &[],
        );
        let json = serde_json::to_string(&labeled[0].to_delta()).unwrap();
        let keys: Vec<&str> = json
            .split('"')
            .enumerate()
            .filter(|(i, _)| i % 4 == 1)
            .map(|(_, k)| k)
            .collect();
        assert!(json.starts_with("{\"id\":\""), "{json}");
        assert!(keys.contains(&"content_hash"));
        assert!(
            !json.contains("old_path") && !json.contains("modified") && !json.contains("parent_id")
        );
        let back: SymbolDelta = serde_json::from_str(&json).unwrap();
        assert_eq!(back, labeled[0].to_delta());
    }
}
