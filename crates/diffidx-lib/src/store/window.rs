//! What `context` reads from the store: the changes of a set of commits
//! (an incident window), and the direct callers of the changed symbols in
//! the code graph.

use std::collections::HashMap;

use lbug::Value;
use serde::{Deserialize, Serialize};

use super::codegraph::Direction;
use super::engine::{as_i64, as_string, as_u32, string_list};
use super::{Reader, Result};

/// One recorded change of one symbol in one commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowChange {
    pub commit: String,
    /// Author time, seconds since the epoch, and as RFC 3339.
    pub time: i64,
    pub date: String,
    pub author: String,
    pub subject: String,
    pub status: String,
    pub id: String,
    pub kind: String,
    pub language: String,
    pub path: String,
    pub old_path: Option<String>,
    pub qualname: String,
    pub sig: String,
    pub start_line: u32,
    pub end_line: u32,
    /// A move that also edited the text.
    pub modified: bool,
}

/// One symbol a commit modified, with the commit's subject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Modification {
    pub commit: String,
    /// Author time, seconds since the epoch.
    pub time: i64,
    pub subject: String,
    pub symbol: String,
    pub kind: String,
}

/// The symbols that call one symbol directly, in the code graph.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Callers {
    pub count: u32,
    /// The surest-resolved first (then by name), at most a few.
    pub nearest: Vec<String>,
}

/// What the store says about a window: its changes, the callers of the
/// changed symbols, and which of the window's commits it holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowAnswer {
    pub changes: Vec<WindowChange>,
    pub callers: HashMap<String, Callers>,
    /// The asked commits the store holds (each loaded whole, changes or
    /// none): a commit missing here has changes the answer cannot give.
    pub commits: Vec<String>,
}

impl Reader<'_> {
    /// The changes of these commits, the direct callers (up to `nearest`
    /// named) of the changed symbols, and which of the commits are here.
    pub fn window(&self, shas: &[String], nearest: usize) -> Result<WindowAnswer> {
        let changes = self.changes_in(shas)?;
        let mut ids: Vec<String> = changes.iter().map(|c| c.id.clone()).collect();
        ids.sort();
        ids.dedup();
        let callers = self.callers_of(&ids, nearest)?;
        let commits = self.commits_among(shas)?;
        Ok(WindowAnswer {
            changes,
            callers,
            commits,
        })
    }

    /// Which of these commits the store holds.
    pub fn commits_among(&self, shas: &[String]) -> Result<Vec<String>> {
        if shas.is_empty() {
            return Ok(Vec::new());
        }
        let rows = self.run(
            "MATCH (c:Commit) WHERE c.sha IN $shas RETURN c.sha",
            "read the window's commits",
            vec![("shas", string_list(shas))],
        )?;
        Ok(rows.iter().filter_map(|r| as_string(&r[0])).collect())
    }

    /// Every change recorded on these commits.
    pub fn changes_in(&self, shas: &[String]) -> Result<Vec<WindowChange>> {
        if shas.is_empty() {
            return Ok(Vec::new());
        }
        let rows = self.run(
            "MATCH (s:Symbol)-[e:CHANGED_IN]->(c:Commit) WHERE c.sha IN $shas \
             RETURN c.sha, c.time, c.date, c.author, c.subject, e.status, s.id, s.kind, \
             s.language, s.path, e.old_path, s.qualname, s.sig, e.start_line, e.end_line, e.modified",
            "read window changes",
            vec![("shas", string_list(shas))],
        )?;
        let text = |v: &Value| as_string(v).unwrap_or_default();
        Ok(rows
            .iter()
            .map(|r| WindowChange {
                commit: text(&r[0]),
                time: as_i64(&r[1]).unwrap_or_default(),
                date: text(&r[2]),
                author: text(&r[3]),
                subject: text(&r[4]),
                status: text(&r[5]),
                id: text(&r[6]),
                kind: text(&r[7]),
                language: text(&r[8]),
                path: text(&r[9]),
                old_path: as_string(&r[10]).filter(|p| !p.is_empty()),
                qualname: text(&r[11]),
                sig: text(&r[12]),
                start_line: as_u32(&r[13]),
                end_line: as_u32(&r[14]),
                modified: matches!(r[15], Value::Bool(true)),
            })
            .collect())
    }

    /// The commits that modified a symbol's text (`MODIFIED`, or a move
    /// that edited it), newest first, with their first parent: what change
    /// summaries are asked for.
    pub fn commits_modifying(&self) -> Result<Vec<(String, Option<String>)>> {
        let rows = self.run(
            "MATCH (:Symbol)-[e:CHANGED_IN]->(c:Commit) \
             WHERE e.status = 'MODIFIED' OR (e.status = 'MOVED' AND e.modified) \
             RETURN DISTINCT c.sha, c.parent, c.time, c.seq ORDER BY c.time DESC, c.seq DESC",
            "read the commits that modified symbols",
            vec![],
        )?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                let sha = as_string(&r[0])?;
                Some((sha, as_string(&r[1]).filter(|p| !p.is_empty())))
            })
            .collect())
    }

    /// Every `MODIFIED` change, for the fusion fit's task.
    pub fn modifications(&self) -> Result<Vec<Modification>> {
        let rows = self.run(
            "MATCH (s:Symbol)-[e:CHANGED_IN]->(c:Commit) WHERE e.status = 'MODIFIED' \
             RETURN c.sha, c.time, c.subject, s.id, s.kind",
            "read the modifications",
            vec![],
        )?;
        let text = |v: &Value| as_string(v).unwrap_or_default();
        Ok(rows
            .iter()
            .map(|r| Modification {
                commit: text(&r[0]),
                time: as_i64(&r[1]).unwrap_or_default(),
                subject: text(&r[2]),
                symbol: text(&r[3]),
                kind: text(&r[4]),
            })
            .collect())
    }

    /// The direct callers of each of these symbols that the code graph
    /// holds (symbols absent from the graph's tree have no entry).
    pub fn callers_of(&self, ids: &[String], nearest: usize) -> Result<HashMap<String, Callers>> {
        let present: Vec<String> = self.tree_symbols(ids)?.into_iter().map(|s| s.id).collect();
        let levels: Vec<String> = diffidx_core::codegraph::Resolution::ALL
            .iter()
            .map(|r| r.as_str().to_owned())
            .collect();
        let mut found: HashMap<String, Vec<(usize, String)>> =
            present.iter().map(|id| (id.clone(), Vec::new())).collect();
        for edge in self.edges(&present, "CALLS", Direction::In, &levels)? {
            let rank = levels
                .iter()
                .position(|l| *l == edge.resolution)
                .unwrap_or(levels.len());
            if let Some(callers) = found.get_mut(&edge.at) {
                callers.push((rank, edge.other.qualname));
            }
        }
        Ok(found
            .into_iter()
            .map(|(id, mut callers)| {
                callers.sort();
                callers.dedup_by(|a, b| a.1 == b.1);
                let count = callers.len() as u32;
                let mut names: Vec<String> = Vec::new();
                for (_, name) in callers {
                    if names.len() < nearest && !names.contains(&name) {
                        names.push(name);
                    }
                }
                (
                    id,
                    Callers {
                        count,
                        nearest: names,
                    },
                )
            })
            .collect())
    }
}
