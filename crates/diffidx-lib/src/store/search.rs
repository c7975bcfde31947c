//! What `search` reads from the store: every symbol's name, the meta
//! values its index is stamped with, and the commits that deleted symbols.

use std::collections::HashMap;

use lbug::Value;
use serde::{Deserialize, Serialize};

use super::engine::{as_string, as_u32, string_list};
use super::{Reader, Result};

/// A symbol as search knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolEntry {
    pub id: String,
    pub qualname: String,
    pub name: String,
    pub kind: String,
    pub path: String,
    pub language: String,
    pub sig: String,
    pub deleted: bool,
    pub start_line: u32,
    pub end_line: u32,
}

impl SymbolEntry {
    /// The order of hits with equal scores: by name, file and place, and
    /// last by id, so that it never depends on the order the store lists
    /// them in (overloads share a name and a file).
    pub fn tie_order(&self, other: &SymbolEntry) -> std::cmp::Ordering {
        self.qualname
            .cmp(&other.qualname)
            .then(self.path.cmp(&other.path))
            .then(self.start_line.cmp(&other.start_line))
            .then(self.sig.cmp(&other.sig))
            .then(self.id.cmp(&other.id))
    }
}

/// The commit that deleted a symbol.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeletedIn {
    pub commit: String,
    pub date: String,
}

const ENTRY_COLUMNS: &str = "s.id, s.qualname, s.name, s.kind, s.path, s.language, s.sig, \
     s.deleted, s.start_line, s.end_line";

fn entry(r: &[Value]) -> Option<SymbolEntry> {
    let text = |i: usize| as_string(&r[i]).unwrap_or_default();
    Some(SymbolEntry {
        id: as_string(&r[0])?,
        qualname: text(1),
        name: text(2),
        kind: text(3),
        path: text(4),
        language: text(5),
        sig: text(6),
        deleted: matches!(r[7], Value::Bool(true)),
        start_line: as_u32(&r[8]),
        end_line: as_u32(&r[9]),
    })
}

impl Reader<'_> {
    /// Every symbol the store holds, deleted ones included.
    pub fn search_entries(&self) -> Result<Vec<SymbolEntry>> {
        self.run_map(
            &format!("MATCH (s:Symbol) RETURN {ENTRY_COLUMNS}"),
            "list symbols",
            Vec::new(),
            |r| entry(&r),
        )
    }

    /// The symbols of these files.
    pub fn search_entries_at(&self, paths: &[String]) -> Result<Vec<SymbolEntry>> {
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        self.run_map(
            &format!("MATCH (s:Symbol) WHERE s.path IN $paths RETURN {ENTRY_COLUMNS}"),
            "list symbols of files",
            vec![("paths", string_list(paths))],
            |r| entry(&r),
        )
    }

    /// The meta values that say which store state a search index is of.
    pub fn search_meta(&self) -> Result<HashMap<String, String>> {
        let rows = self.run(
            "MATCH (m:Meta) WHERE m.key IN ['notes_tip', 'graph_commit', 'graph_version'] \
             RETURN m.key, m.value",
            "read meta",
            Vec::new(),
        )?;
        Ok(rows
            .iter()
            .filter_map(|r| Some((as_string(&r[0])?, as_string(&r[1])?)))
            .collect())
    }

    /// The commit (the latest, for a symbol deleted more than once) that
    /// deleted each of these symbols.
    pub fn deleted_in(&self, ids: &[String]) -> Result<HashMap<String, DeletedIn>> {
        if ids.is_empty() {
            return Ok(HashMap::new());
        }
        let rows = self.run(
            "MATCH (s:Symbol)-[e:CHANGED_IN]->(c:Commit) \
             WHERE s.id IN $ids AND e.status = 'DELETED' \
             RETURN s.id, c.sha, c.date ORDER BY c.time, c.seq",
            "find deleting commits",
            vec![("ids", string_list(ids))],
        )?;
        let mut found = HashMap::new();
        for r in &rows {
            if let (Some(id), Some(commit), Some(date)) =
                (as_string(&r[0]), as_string(&r[1]), as_string(&r[2]))
            {
                found.insert(id, DeletedIn { commit, date });
            }
        }
        Ok(found)
    }
}
