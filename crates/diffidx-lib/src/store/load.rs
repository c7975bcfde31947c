//! Writing: a batch of commit records becomes `crate::graph` rows, written in
//! one transaction of `UNWIND`-batched `MERGE`s.

use std::collections::{HashMap, HashSet};

use ::kuzu::Connection;
use diffidx_core::CommitRecord;

use super::kuzu::{
    as_i64, as_string, execute, prepare, query, row, row_of, run, string_list, upsert,
};
use super::{set_meta, Result, Store};
use crate::graph::{GraphRows, MovedTo, Parent, Prop, Row};

impl Store {
    /// Loads commit records (oldest first) in one transaction and records
    /// `notes_tip` as loaded. Loading a commit twice changes nothing.
    pub fn load(&self, records: &[CommitRecord], notes_tip: Option<&str>) -> Result<()> {
        let conn = self.conn()?;
        run(&conn, "begin", "BEGIN TRANSACTION")?;
        match load_in_transaction(&conn, records, notes_tip) {
            Ok(()) => {
                crate::fault::point("store-uncommitted");
                run(&conn, "commit", "COMMIT")?;
                crate::fault::point("store-committed");
                Ok(())
            }
            Err(e) => {
                let _ = run(&conn, "rollback", "ROLLBACK");
                Err(e)
            }
        }
    }
}

fn load_in_transaction(
    conn: &Connection<'_>,
    records: &[CommitRecord],
    notes_tip: Option<&str>,
) -> Result<()> {
    // A commit is loaded whole or not at all (one transaction), so one that
    // is already here is skipped: loading twice changes nothing.
    let shas: HashSet<String> = records.iter().map(|r| r.info.id.to_string()).collect();
    let mut stmt = prepare(conn, "MATCH (c:Commit) WHERE c.sha IN $shas RETURN c.sha")?;
    let present: HashSet<String> = execute(
        conn,
        "find loaded commits",
        &mut stmt,
        vec![("shas", string_list(&shas))],
    )?
    .iter()
    .filter_map(|r| as_string(&r[0]))
    .collect();
    let fresh = records
        .iter()
        .filter(|r| !present.contains(&r.info.id.to_string()));
    let rows = GraphRows::from_records(fresh);
    write(conn, &rows)?;
    if let Some(tip) = notes_tip {
        set_meta(conn, "notes_tip", tip)?;
    }
    Ok(())
}

fn write(conn: &Connection<'_>, rows: &GraphRows) -> Result<()> {
    let base_seq = next_seq(conn)?;
    let commits = rows
        .commits
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut props = c.props();
            props.push(("seq", Prop::Int(base_seq + i as i64)));
            row_of(props)
        })
        .collect();
    upsert(
        conn,
        "commits",
        "UNWIND $rows AS r MERGE (c:Commit {sha: r.sha}) SET c.parent = r.parent, c.time = r.time, \
         c.date = r.date, c.author = r.author, c.subject = r.subject, c.seq = r.seq",
        commits,
    )?;
    upsert(
        conn,
        "files",
        "UNWIND $rows AS r MERGE (f:File {path: r.path}) SET f.language = r.language",
        rows.files.iter().map(row).collect(),
    )?;
    upsert(
        conn,
        "symbols",
        "UNWIND $rows AS r MERGE (s:Symbol {id: r.id}) SET s.path = r.path, s.qualname = r.qualname, \
         s.name = r.name, s.kind = r.kind, s.sig = r.sig, s.language = r.language, s.deleted = r.deleted, \
         s.start_line = r.start_line, s.end_line = r.end_line, s.content_hash = r.content_hash",
        rows.symbols.values().map(row).collect(),
    )?;
    upsert(
        conn,
        "deleted symbols",
        "UNWIND $rows AS r MERGE (s:Symbol {id: r.id}) ON CREATE SET s.path = r.path, \
         s.qualname = r.qualname, s.name = r.name, s.kind = r.kind, s.sig = r.sig, \
         s.language = r.language, s.content_hash = r.content_hash \
         SET s.deleted = true, s.start_line = r.start_line, s.end_line = r.end_line",
        rows.deleted.values().map(row).collect(),
    )?;
    let (to_symbols, to_files): (Vec<_>, Vec<_>) = rows
        .child_of
        .iter()
        .partition(|e| matches!(e.parent, Parent::Symbol(_)));
    upsert(
        conn,
        "hierarchy",
        "UNWIND $rows AS r MERGE (a:Symbol {id: r.child}) MERGE (b:Symbol {id: r.parent}) \
         MERGE (a)-[:CHILD_OF]->(b)",
        to_symbols.into_iter().map(row).collect(),
    )?;
    upsert(
        conn,
        "files of symbols",
        "UNWIND $rows AS r MERGE (a:Symbol {id: r.child}) MERGE (f:File {path: r.parent}) \
         MERGE (a)-[:CHILD_OF]->(f)",
        to_files.into_iter().map(row).collect(),
    )?;
    upsert(
        conn,
        "changes",
        // Commits already in the store were skipped, so every change is new.
        "UNWIND $rows AS r MERGE (s:Symbol {id: r.id}) MERGE (c:Commit {sha: r.sha}) \
         CREATE (s)-[:CHANGED_IN {status: r.status, old_path: r.old_path, modified: r.modified, \
         start_line: r.start_line, end_line: r.end_line}]->(c)",
        rows.changed_in.iter().map(row).collect(),
    )?;
    link_moves(conn, &rows.moved_to)?;
    upsert(
        conn,
        "lineage",
        // Like the changes: only commits not loaded yet get here, so each
        // link is new. Both ends are deltas of the same commit, written
        // above; `MERGE` on the key finds them by its index (`MATCH` planned
        // a scan: 0.55 ms a row on App-vNext/Polly, nine times a change's).
        "UNWIND $rows AS r MERGE (a:Symbol {id: r.from}) MERGE (b:Symbol {id: r.to}) \
         CREATE (a)-[:CONTINUES {sha: r.sha, similarity: r.similarity}]->(b)",
        rows.continues.iter().map(row).collect(),
    )?;
    Ok(())
}

fn next_seq(conn: &Connection<'_>) -> Result<i64> {
    let rows = query(conn, "read seq", "MATCH (c:Commit) RETURN max(c.seq)")?;
    Ok(rows
        .first()
        .and_then(|r| as_i64(&r[0]))
        .map_or(0, |n| n + 1))
}

/// Links each moved symbol's old identity to its new one, in one statement
/// per chunk (one statement per move took 3 ms each: 38 of the 86 s of a
/// backfill of App-vNext/Polly). The old identity is the same qualname at
/// the old path when the store has it; otherwise (the enclosing type was
/// renamed too) a symbol at the old path with the same kind, own name and
/// text: a live one first (the one this commit moves away is live until
/// linked; one deleted earlier is not it), then the smallest id. Without
/// one, a deleted placeholder.
fn link_moves(conn: &Connection<'_>, moves: &[MovedTo]) -> Result<()> {
    if moves.is_empty() {
        return Ok(());
    }
    let ids: HashSet<String> = moves.iter().map(|m| m.from.clone()).collect();
    let mut stmt = prepare(conn, "MATCH (s:Symbol) WHERE s.id IN $ids RETURN s.id")?;
    let mut known: HashSet<String> = execute(
        conn,
        "find moved symbols",
        &mut stmt,
        vec![("ids", string_list(&ids))],
    )?
    .iter()
    .filter_map(|r| as_string(&r[0]))
    .collect();
    let paths: HashSet<String> = moves
        .iter()
        .filter(|m| !known.contains(&m.from))
        .map(|m| m.old_path.clone())
        .collect();
    // (path, kind, name, content hash) → ids, live ones first.
    let mut by_text: HashMap<(String, String, String, String), Vec<String>> = HashMap::new();
    if !paths.is_empty() {
        let mut stmt = prepare(
            conn,
            "MATCH (s:Symbol) WHERE s.path IN $paths \
             RETURN s.id, s.path, s.kind, s.name, s.content_hash ORDER BY s.deleted, s.id",
        )?;
        for r in execute(
            conn,
            "find moved symbols by text",
            &mut stmt,
            vec![("paths", string_list(&paths))],
        )? {
            let field = |i: usize| as_string(&r[i]).unwrap_or_default();
            by_text
                .entry((field(1), field(2), field(3), field(4)))
                .or_default()
                .push(field(0));
        }
    }
    let mut froms = Vec::with_capacity(moves.len());
    for m in moves {
        let from = if known.contains(&m.from) {
            m.from.clone()
        } else {
            let key = (
                m.old_path.clone(),
                m.kind.to_owned(),
                m.name.clone(),
                m.content_hash.clone(),
            );
            by_text
                .get(&key)
                .and_then(|ids| ids.iter().find(|id| **id != m.to))
                .cloned()
                .unwrap_or_else(|| m.from.clone())
        };
        // A later move of this batch finds what this one links (as when
        // they were written one by one).
        known.insert(from.clone());
        froms.push(from);
    }
    let mut rows = Vec::with_capacity(moves.len());
    for (m, from) in moves.iter().zip(&froms) {
        rows.push(row_of(vec![
            ("to", Prop::Str(&m.to)),
            ("from", Prop::Str(from)),
            ("old_path", Prop::Str(&m.old_path)),
            ("qualname", Prop::Str(&m.qualname)),
            ("name", Prop::Str(&m.name)),
            ("kind", Prop::Str(m.kind)),
            ("sig", Prop::Str(&m.sig)),
            ("sha", Prop::Str(&m.sha)),
        ]));
    }
    upsert(
        conn,
        "link moves",
        "UNWIND $rows AS r MATCH (b:Symbol {id: r.to}) \
         MERGE (a:Symbol {id: r.from}) ON CREATE SET a.path = r.old_path, a.qualname = r.qualname, \
         a.name = r.name, a.kind = r.kind, a.sig = r.sig, a.language = b.language, a.start_line = 0, \
         a.end_line = 0, a.content_hash = '' \
         SET a.deleted = true \
         MERGE (a)-[l:MOVED_TO]->(b) SET l.sha = r.sha",
        rows,
    )
}
