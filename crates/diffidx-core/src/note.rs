//! The note document of DESIGN.md §4: one per commit, deterministic, versioned.
//!
//! Serialization is plain serde with struct field order, so the same deltas
//! always give byte-identical JSON.

use serde::{Deserialize, Serialize};

use crate::delta::SymbolDelta;
use crate::symbol::MAX_NAME_BYTES;

/// The format version written in `v`.
pub const NOTE_VERSION: u32 = 1;

/// The `tool` field: `diffidx <version>`.
pub fn tool_name() -> String {
    format!("diffidx {}", env!("CARGO_PKG_VERSION"))
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoteDocument {
    pub v: u32,
    /// The commit (or, for a range, the head); `null` for a patch.
    pub commit: Option<String>,
    /// The first parent (or, for a range, the base); `null` for a root commit.
    pub parent: Option<String>,
    pub tool: String,
    pub deltas: Vec<SymbolDelta>,
    /// Files that were skipped or only partly parsed; absent when none were.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<Diagnostic>,
}

/// Why a file's record is incomplete.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub path: String,
    pub problem: Problem,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Problem {
    /// tree-sitter reported syntax errors; symbols are those that parsed.
    ParseErrors,
    /// Invalid UTF-8 was replaced before parsing.
    InvalidUtf8,
    /// Skipped: binary content.
    Binary,
    /// Skipped: over the size limit.
    TooLarge,
    /// Symbols nest deeper than the walker goes; the deeper ones are part
    /// of their enclosing symbol.
    TooDeep,
    /// Symbols whose qualname or signature is too long for a note; they are
    /// part of their enclosing symbol.
    NameTooLong,
    /// Skipped: its content is not in this clone and could not be fetched.
    Missing,
    /// Skipped: parsing it took more work than the per-file budget.
    ParseBudget,
    /// Skipped: so many symbols on one line that it is minified or
    /// generated code.
    Minified,
}

impl Problem {
    /// The file was skipped whole (not indexed as far as it could be read).
    pub fn is_skip(self) -> bool {
        matches!(
            self,
            Problem::Binary
                | Problem::TooLarge
                | Problem::Missing
                | Problem::ParseBudget
                | Problem::Minified
        )
    }

    /// The snake_case name notes use.
    pub fn as_str(self) -> &'static str {
        match self {
            Problem::ParseErrors => "parse_errors",
            Problem::InvalidUtf8 => "invalid_utf8",
            Problem::Binary => "binary",
            Problem::TooLarge => "too_large",
            Problem::TooDeep => "too_deep",
            Problem::NameTooLong => "name_too_long",
            Problem::Missing => "missing",
            Problem::ParseBudget => "parse_budget",
            Problem::Minified => "minified",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Problem::ParseErrors => "has syntax errors; indexed as far as it parses",
            Problem::InvalidUtf8 => "is not valid UTF-8; invalid bytes were replaced",
            Problem::Binary => "is binary; skipped",
            Problem::TooLarge => "is over the size limit; skipped",
            Problem::TooDeep => {
                "nests symbols too deeply; the deepest are indexed as part of their container"
            }
            Problem::NameTooLong => {
                "has names too long to record; those symbols are indexed as part of their container"
            }
            Problem::Missing => "could not be read (not in this clone); skipped",
            Problem::ParseBudget => "took too long to parse; skipped",
            Problem::Minified => {
                "looks minified or generated (too many symbols on one line); skipped"
            }
        }
    }
}

impl NoteDocument {
    /// The canonical serialization: compact JSON and a final newline.
    pub fn to_json(&self) -> String {
        let mut json = serde_json::to_string(self).expect("a note always serializes");
        json.push('\n');
        json
    }
}

/// The largest note accepted from a repository (a remote may have sent it).
pub const MAX_NOTE_BYTES: u64 = 8 * 1024 * 1024;

impl NoteDocument {
    /// Parses and validates a note that may come from anywhere (a fetch from
    /// a remote included): the version, the commit it claims to describe, and
    /// every delta's shape, order and id are checked before it is used.
    pub fn from_untrusted(
        bytes: &[u8],
        commit: &str,
        parent: Option<&str>,
    ) -> Result<NoteDocument, String> {
        let doc: NoteDocument =
            serde_json::from_slice(bytes).map_err(|e| format!("not a diffidx note: {e}"))?;
        if doc.v != NOTE_VERSION {
            return Err(format!(
                "note format v{} is not supported (this diffidx reads v{NOTE_VERSION}); upgrade diffidx",
                doc.v
            ));
        }
        if doc.commit.as_deref() != Some(commit) {
            return Err(format!(
                "it describes commit {:?}, not {commit}",
                doc.commit.as_deref().unwrap_or("null")
            ));
        }
        if doc.parent.as_deref() != parent {
            return Err(format!(
                "it names parent {:?}, but the commit's first parent is {:?}",
                doc.parent.as_deref().unwrap_or("null"),
                parent.unwrap_or("null")
            ));
        }
        let mut previous: Option<(&str, u32, &str)> = None;
        let deleted: std::collections::HashSet<&str> = doc
            .deltas
            .iter()
            .filter(|d| d.status == crate::delta::Status::Deleted)
            .map(|d| d.id.as_str())
            .collect();
        for (i, d) in doc.deltas.iter().enumerate() {
            let at = |what: String| format!("delta {i} ({}): {what}", d.qualname);
            validate_path(&d.path).map_err(&at)?;
            if let Some(old) = &d.old_path {
                validate_path(old).map_err(&at)?;
            }
            if d.qualname.is_empty()
                || d.qualname.len() > MAX_NAME_BYTES
                || d.sig.len() > MAX_NAME_BYTES
            {
                return Err(at("qualname or sig is empty or too long".into()));
            }
            if d.id != crate::symbol::symbol_id(&d.path, d.kind, &d.qualname, &d.sig) {
                return Err(at(
                    "id does not match blake3(path, kind, qualname, sig)".into()
                ));
            }
            if let Some(parent) = &d.parent_id {
                if !is_hex(parent, 64) {
                    return Err(at("parent_id is not a symbol id".into()));
                }
            }
            if d.start_line == 0 || d.end_line < d.start_line {
                return Err(at(format!("bad lines {}-{}", d.start_line, d.end_line)));
            }
            use crate::delta::Status;
            match (d.status, &d.content_hash) {
                (Status::Unchanged, _) => return Err(at("UNCHANGED is never recorded".into())),
                (Status::Deleted, Some(_)) => {
                    return Err(at("a DELETED delta has no content_hash".into()))
                }
                (Status::Deleted, None) => {}
                (_, Some(h)) if is_hex(h, 64) => {}
                _ => return Err(at("content_hash missing or malformed".into())),
            }
            if (d.status == Status::Moved) != d.old_path.is_some()
                || (d.status == Status::Moved) != d.modified.is_some()
            {
                return Err(at(
                    "old_path and modified belong to MOVED deltas only".into()
                ));
            }
            if let Some(from) = &d.from {
                if d.status != Status::Added {
                    return Err(at("only an ADDED delta may name what it continues".into()));
                }
                validate_path(&from.path).map_err(&at)?;
                if from.id
                    != crate::symbol::symbol_id(&from.path, d.kind, &from.qualname, &from.sig)
                {
                    return Err(at(
                        "from.id does not match its path, kind, qualname and sig".into(),
                    ));
                }
                if !deleted.contains(from.id.as_str()) {
                    return Err(at("from names no DELETED delta of this commit".into()));
                }
            }
            let key = (d.path.as_str(), d.start_line, d.id.as_str());
            if previous.is_some_and(|p| p > key) {
                return Err(at("deltas are not sorted by (path, start_line, id)".into()));
            }
            previous = Some(key);
        }
        Ok(doc)
    }
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len
        && s.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

fn validate_path(path: &str) -> Result<(), String> {
    let bad = path.is_empty()
        || path.len() > 4096
        || path.starts_with('/')
        || path.contains('\0')
        || path
            .split('/')
            .any(|c| c.is_empty() || c == "." || c == "..");
    if bad {
        Err(format!("path {path:?} is not a repository path"))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delta::{Status, SymbolDelta};
    use crate::symbol::{symbol_id, SymbolKind};

    const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

    fn delta(path: &str, line: u32, qualname: &str) -> SymbolDelta {
        SymbolDelta {
            id: symbol_id(path, SymbolKind::Method, qualname, "()"),
            status: Status::Modified,
            kind: SymbolKind::Method,
            path: path.into(),
            old_path: None,
            qualname: qualname.into(),
            sig: "()".into(),
            parent_id: None,
            start_line: line,
            end_line: line + 2,
            content_hash: Some("ab".repeat(32)),
            modified: None,
            from: None,
        }
    }

    fn doc(deltas: Vec<SymbolDelta>) -> NoteDocument {
        NoteDocument {
            v: 1,
            commit: Some(COMMIT.into()),
            parent: None,
            tool: tool_name(),
            deltas,
            diagnostics: vec![],
        }
    }

    #[test]
    fn a_valid_note_round_trips() {
        let d = doc(vec![delta("a.cs", 1, "A.M"), delta("a.cs", 5, "A.N")]);
        let parsed = NoteDocument::from_untrusted(d.to_json().as_bytes(), COMMIT, None).unwrap();
        assert_eq!(parsed, d);
        assert_eq!(parsed.to_json(), d.to_json());
    }

    #[test]
    fn invalid_notes_are_rejected_with_a_reason() {
        let ok = doc(vec![delta("a.cs", 1, "A.M")]);
        let reject = |d: NoteDocument, needle: &str| {
            let err =
                NoteDocument::from_untrusted(d.to_json().as_bytes(), COMMIT, None).unwrap_err();
            assert!(err.contains(needle), "{err}");
        };
        assert!(NoteDocument::from_untrusted(b"{not json", COMMIT, None).is_err());
        let mut d = ok.clone();
        d.v = 2;
        reject(d, "v2 is not supported");
        let mut d = ok.clone();
        d.commit = Some("ffffffffffffffffffffffffffffffffffffffff".into());
        reject(d, "describes commit");
        let mut d = ok.clone();
        d.parent = Some("ab".repeat(20));
        reject(d, "first parent");
        let mut d = ok.clone();
        d.deltas[0].qualname = "A.Other".into();
        reject(d, "id does not match");
        let mut d = ok.clone();
        d.deltas[0].path = "../etc/passwd".into();
        reject(d, "not a repository path");
        let mut d = ok.clone();
        d.deltas[0].content_hash = None;
        reject(d, "content_hash");
        let mut d = ok.clone();
        d.deltas[0].start_line = 0;
        reject(d, "bad lines");
        let d = doc(vec![delta("b.cs", 1, "B.M"), delta("a.cs", 1, "A.M")]);
        reject(d, "not sorted");
        let mut d = ok.clone();
        d.deltas[0].status = Status::Moved;
        reject(d, "MOVED deltas only");
        // Lineage names a DELETED delta of the same note, from an ADDED one.
        let mut gone = delta("a.cs", 9, "A.Old");
        gone.status = Status::Deleted;
        gone.content_hash = None;
        let mut added = delta("a.cs", 1, "A.New");
        added.status = Status::Added;
        added.from = Some(crate::delta::Lineage {
            id: gone.id.clone(),
            qualname: "A.Old".into(),
            sig: "()".into(),
            path: "a.cs".into(),
            similarity: crate::delta::Similarity::from_ratio(0.8),
        });
        let linked = doc(vec![added.clone(), gone.clone()]);
        let parsed =
            NoteDocument::from_untrusted(linked.to_json().as_bytes(), COMMIT, None).unwrap();
        assert_eq!(parsed, linked);
        assert!(linked.to_json().contains(r#""similarity":0.8}"#));
        reject(doc(vec![added.clone()]), "names no DELETED delta");
        let mut d = linked.clone();
        d.deltas[0].status = Status::Modified;
        reject(d, "only an ADDED delta");
        let mut d = linked.clone();
        d.deltas[0].from.as_mut().unwrap().qualname = "A.Other".into();
        reject(d, "from.id does not match");
        let too_similar = linked
            .to_json()
            .replace(r#""similarity":0.8"#, r#""similarity":1.5"#);
        assert!(NoteDocument::from_untrusted(too_similar.as_bytes(), COMMIT, None).is_err());
    }
}
