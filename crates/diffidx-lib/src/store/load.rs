//! Writing: a batch of commit records becomes `crate::graph` rows, written in
//! one transaction of `UNWIND`-batched `MERGE`s.

use std::collections::HashSet;

use ::kuzu::{Connection, Value};
use diffidx_core::CommitRecord;

use super::kuzu::{
    as_i64, as_string, execute, prepare, query, row, row_of, run, string, string_list, upsert,
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
    for m in &rows.moved_to {
        link_move(conn, m)?;
    }
    upsert(
        conn,
        "lineage",
        // Like the changes: only commits not loaded yet get here, so each
        // link is new.
        "UNWIND $rows AS r MATCH (a:Symbol {id: r.from}) MATCH (b:Symbol {id: r.to}) \
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

/// Links a moved symbol's old identity to its new one. The old identity is
/// the same qualname at the old path when the store has it; otherwise (the
/// enclosing type was renamed too) the live symbol at the old path with the
/// same kind, own name and text.
fn link_move(conn: &Connection<'_>, m: &MovedTo) -> Result<()> {
    let exact_exists = !execute(
        conn,
        "find moved symbol",
        &mut prepare(conn, "MATCH (s:Symbol {id: $id}) RETURN s.id")?,
        vec![("id", string(&m.from))],
    )?
    .is_empty();
    let from = if exact_exists {
        m.from.clone()
    } else {
        let mut stmt = prepare(
            conn,
            "MATCH (s:Symbol) WHERE s.path = $path AND s.kind = $kind AND s.name = $name \
             AND s.content_hash = $hash AND s.id <> $to RETURN s.id LIMIT 1",
        )?;
        let found = execute(
            conn,
            "find moved symbol",
            &mut stmt,
            vec![
                ("path", string(&m.old_path)),
                ("kind", string(m.kind)),
                ("name", string(&m.name)),
                ("hash", string(&m.content_hash)),
                ("to", string(&m.to)),
            ],
        )?;
        found
            .first()
            .and_then(|r| as_string(&r[0]))
            .unwrap_or_else(|| m.from.clone())
    };
    let mut link = prepare(
        conn,
        "MATCH (b:Symbol {id: $to}) \
         MERGE (a:Symbol {id: $from}) ON CREATE SET a.path = $old_path, a.qualname = $qualname, \
         a.name = $name, a.kind = $kind, a.sig = $sig, a.language = b.language, a.start_line = 0, \
         a.end_line = 0, a.content_hash = '' \
         SET a.deleted = true \
         MERGE (a)-[l:MOVED_TO]->(b) SET l.sha = $sha",
    )?;
    let params: Vec<(&str, Value)> = vec![
        ("to", string(&m.to)),
        ("from", string(&from)),
        ("old_path", string(&m.old_path)),
        ("qualname", string(&m.qualname)),
        ("name", string(&m.name)),
        ("kind", string(m.kind)),
        ("sig", string(&m.sig)),
        ("sha", string(&m.sha)),
    ];
    execute(conn, "link move", &mut link, params)?;
    Ok(())
}
