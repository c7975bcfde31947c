//! The note document of DESIGN.md §4: one per commit, deterministic, versioned.
//!
//! Serialization is plain serde with struct field order, so the same deltas
//! always give byte-identical JSON.

use serde::{Deserialize, Serialize};

use crate::delta::SymbolDelta;

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
}

impl Problem {
    pub fn describe(self) -> &'static str {
        match self {
            Problem::ParseErrors => "has syntax errors; indexed as far as it parses",
            Problem::InvalidUtf8 => "is not valid UTF-8; invalid bytes were replaced",
            Problem::Binary => "is binary; skipped",
            Problem::TooLarge => "is over the size limit; skipped",
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
