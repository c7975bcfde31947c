//! Writing: a batch of commit records becomes `crate::graph` rows, written in
//! one transaction: new nodes and every relationship with `COPY`, nodes
//! already stored with `UNWIND`-batched `MERGE`s.
//!
//! Why not `MERGE` everything: Kuzu 0.11 plans `UNWIND $rows ... MERGE
//! (s:Symbol {id: r.id})` as a scan of the whole table joined with the
//! rows, so each row costs a comparison with every stored symbol and a
//! backfill grows quadratic. `COPY` looks both ends of a relationship up
//! by their primary key. So what is new is copied, and only what is
//! already stored pays for a `MERGE`.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use ::lbug::Connection;
use diffidx_core::CommitRecord;

use super::engine::{
    as_i64, as_string, execute, insert_rels, lookup, prepare, query, row, row_of, run, stage_nodes,
    stage_rels, string_list, upsert, Insert, StagedCopy,
};
use super::{set_meta, Result, Store};
use crate::graph::{ChildOf, GraphRows, MovedTo, Parent, Prop, Row, RowList, SymbolNode};

impl Store {
    /// Loads commit records (oldest first) in one transaction and records
    /// `notes_tip` as loaded. Loading a commit twice changes nothing.
    pub fn load(&self, records: &[CommitRecord], notes_tip: Option<&str>) -> Result<()> {
        self.in_transaction(|conn| load_in_transaction(conn, records, notes_tip).map(|()| true))
            .map(drop)
    }

    /// Loads rows made from records of commits that are not in the store
    /// ([`Store::stored_commits`]; the caller holds the writer lock, so
    /// that cannot change) in one transaction, letting each kind of row go
    /// once it is written, and records the notes tip as loaded. The tip is
    /// asked for only once the rows are written, so that the caller can
    /// commit the notes meanwhile; `None` for it (the notes failed) rolls
    /// the load back, and this returns false.
    pub fn load_rows_then(
        &self,
        rows: GraphRows,
        notes_tip: impl FnOnce() -> Option<Option<String>>,
    ) -> Result<bool> {
        let mut notes_tip = Some(notes_tip);
        let mut tip_of_notes = || notes_tip.take().and_then(|tip| tip());
        // The injected half commit models a kill after the notes are in.
        let waited =
            crate::fault::armed(crate::fault::STORE_HALF_COMMITTED).then(&mut tip_of_notes);
        self.in_transaction(|conn| {
            write(conn, rows)?;
            let Some(tip) = waited.unwrap_or_else(tip_of_notes) else {
                return Ok(false);
            };
            if let Some(tip) = tip {
                set_meta(conn, "notes_tip", &tip)?;
            }
            Ok(true)
        })
    }

    /// Which of `shas` the store holds.
    pub fn stored_commits<'a>(
        &self,
        shas: impl IntoIterator<Item = &'a str>,
    ) -> Result<HashSet<String>> {
        let conn = self.conn()?;
        let shas: Vec<&str> = shas.into_iter().collect();
        let mut stored = HashSet::new();
        for chunk in shas.chunks(1000) {
            stored.extend(present_commits(&conn, chunk.iter().copied())?);
        }
        Ok(stored)
    }

    /// Runs `load` in one transaction, committed when it returns true and
    /// rolled back when it returns false or fails.
    ///
    /// On one of the engine's threads: a `COPY` on two held about 10 MiB
    /// more at once for no measurable gain in time (App-vNext/Polly's
    /// backfill, whose load is copies of 5,000 to 74,000 rows).
    fn in_transaction(&self, load: impl FnOnce(&Connection<'_>) -> Result<bool>) -> Result<bool> {
        let mut conn = self.conn()?;
        conn.set_max_num_threads_for_exec(1);
        run(&conn, "begin", "BEGIN TRANSACTION")?;
        match load(&conn) {
            Ok(true) => {
                crate::fault::point("store-uncommitted");
                run(&conn, "commit", "COMMIT")?;
                crate::fault::point("store-committed");
                Ok(true)
            }
            Ok(false) => {
                run(&conn, "rollback", "ROLLBACK")?;
                Ok(false)
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
    let shas: Vec<String> = records.iter().map(|r| r.info.id.to_string()).collect();
    let present = present_commits(conn, shas.iter().map(String::as_str))?;
    let fresh = records
        .iter()
        .filter(|r| !present.contains(&r.info.id.to_string()));
    let rows = GraphRows::from_records(fresh);
    write(conn, rows)?;
    if let Some(tip) = notes_tip {
        set_meta(conn, "notes_tip", tip)?;
    }
    Ok(())
}

/// Which of `shas` the store holds.
fn present_commits<'a>(
    conn: &Connection<'_>,
    shas: impl IntoIterator<Item = &'a str>,
) -> Result<HashSet<String>> {
    let shas: HashSet<String> = shas.into_iter().map(str::to_owned).collect();
    if shas.is_empty() {
        return Ok(HashSet::new());
    }
    let mut stmt = prepare(conn, "MATCH (c:Commit) WHERE c.sha IN $shas RETURN c.sha")?;
    Ok(execute(
        conn,
        "find loaded commits",
        &mut stmt,
        vec![("shas", string_list(&shas))],
    )?
    .iter()
    .filter_map(|r| as_string(&r[0]))
    .collect())
}

/// Writes `rows`, letting each kind of row go once written (the symbols
/// and the changes once staged for their `COPY`s, before these run): the
/// `COPY`s and the commit hold tens of MiB each, and the symbols were the
/// largest part of what the rows hold (App-vNext/Polly: 27,000 of them,
/// about 20 MiB).
fn write(conn: &Connection<'_>, mut rows: GraphRows) -> Result<()> {
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
    let half_commit = [
        crate::fault::STORE_HALF_COMMITTED,
        crate::fault::STORE_HALF_COMMITTED_BEFORE_NOTES,
    ]
    .into_iter()
    .find(|fault| crate::fault::armed(fault));
    if let Some(fault) = half_commit {
        run(conn, "commit", "COMMIT")?;
        crate::fault::point(fault);
    }
    upsert(
        conn,
        "files",
        "UNWIND $rows AS r MERGE (f:File {path: r.path}) SET f.language = r.language",
        rows.files.iter().map(row).collect(),
    )?;
    outdate_graph_rows(conn, &rows)?;
    // New symbols go in with `COPY`; only those already stored are
    // updated with a `MERGE`, whose cost grows with the table.
    let mut stored = symbol_ids(conn, &rows)?;
    // All the moves need of the symbols is the language of their targets.
    let languages = move_languages(&rows);
    // Each kind of symbol is staged for its `COPY`s, and its rows go
    // before the copies run: they hold the most at once.
    let (updated, created): (Vec<&SymbolNode>, Vec<&SymbolNode>) =
        rows.symbols.values().partition(|s| stored.contains(&*s.id));
    let copy = stage_symbols("symbols", &created, &mut stored)?;
    upsert(
        conn,
        "symbols",
        "UNWIND $rows AS r MERGE (s:Symbol {id: r.id}) SET s.path = r.path, s.qualname = r.qualname, \
         s.name = r.name, s.kind = r.kind, s.sig = r.sig, s.language = r.language, s.deleted = r.deleted, \
         s.start_line = r.start_line, s.end_line = r.end_line, s.content_hash = r.content_hash",
        updated.into_iter().map(row).collect(),
    )?;
    drop(created);
    rows.symbols = BTreeMap::new();
    copy.run(conn)?;
    let (updated, created): (Vec<&SymbolNode>, Vec<&SymbolNode>) =
        rows.deleted.values().partition(|s| stored.contains(&*s.id));
    let copy = stage_symbols("deleted symbols", &created, &mut stored)?;
    upsert(
        conn,
        "deleted symbols",
        "UNWIND $rows AS r MERGE (s:Symbol {id: r.id}) \
         SET s.deleted = true, s.start_line = r.start_line, s.end_line = r.end_line",
        updated.into_iter().map(row).collect(),
    )?;
    drop(created);
    rows.deleted = BTreeMap::new();
    copy.run(conn)?;
    // Relationships go in with `COPY`, which finds both ends by their key
    // (an `UNWIND ... MERGE` compares each row with every node of the
    // table). A symbol a relationship names that no row wrote is created
    // bare, as a `MERGE` would.
    let named = rows
        .child_of
        .iter()
        .flat_map(|e| match &e.parent {
            Parent::Symbol(parent) => [Some(&*e.child), Some(&**parent)],
            Parent::File(_) => [Some(&*e.child), None],
        })
        .chain(rows.changed_in.iter().map(|c| Some(&*c.id)))
        .chain(
            rows.continues
                .iter()
                .flat_map(|c| [Some(&*c.from), Some(&*c.to)]),
        )
        .flatten();
    insert_bare_symbols(conn, named, &mut stored)?;
    let edges = child_edges(conn, &rows)?;
    let (to_symbols, to_files): (Vec<_>, Vec<_>) = rows
        .child_of
        .iter()
        .filter(|e| !edges.contains(*e))
        .partition(|e| matches!(e.parent, Parent::Symbol(_)));
    for (what, to, edges) in [
        ("hierarchy", "Symbol", to_symbols),
        ("files of symbols", "File", to_files),
    ] {
        insert_rels(
            conn,
            what,
            "CHILD_OF",
            ("Symbol", to),
            &["child", "parent"],
            edges,
            Insert::Bulk,
        )?;
    }
    rows.child_of = RowList::default();
    // Commits already in the store were skipped, so every change is new.
    let copy = stage_rels(
        "changes",
        "CHANGED_IN",
        ("Symbol", "Commit"),
        &[
            "id",
            "sha",
            "status",
            "old_path",
            "modified",
            "start_line",
            "end_line",
        ],
        rows.changed_in.iter().collect(),
    )?;
    rows.changed_in = RowList::default();
    copy.run(conn)?;
    link_moves(conn, &rows, &languages, &mut stored)?;
    rows.moved_to = RowList::default();
    // Like the changes: only commits not loaded yet get here, so each
    // link is new.
    insert_rels(
        conn,
        "lineage",
        "CONTINUES",
        ("Symbol", "Symbol"),
        &["from", "to", "sha", "similarity"],
        rows.continues.iter().collect(),
        Insert::Bulk,
    )?;
    Ok(())
}

/// Past this many keys a batch reads a whole table (one scan) instead of
/// looking its keys up one by one: a lookup costs about 10 µs, a scan
/// about 0.3 µs a row (Kuzu 0.11), and a hook run's few keys should not
/// pay for reading every symbol of the repository. `DIFFIDX_LOOKUPS_AT_MOST`
/// sets it (a test loads one history both ways).
fn lookups_at_most() -> usize {
    static AT_MOST: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *AT_MOST.get_or_init(|| {
        std::env::var("DIFFIDX_LOOKUPS_AT_MOST")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(500)
    })
}

/// The stored symbols among those `rows` name (every stored symbol, when
/// they name many): one scan, where asking for a batch's ids (`IN $ids`)
/// compares every row with every id.
fn symbol_ids(conn: &Connection<'_>, rows: &GraphRows) -> Result<HashSet<Arc<str>>> {
    let mut named: HashSet<&str> = HashSet::new();
    named.extend(rows.symbols.keys().map(|id| &**id));
    named.extend(rows.deleted.keys().map(|id| &**id));
    for e in &rows.child_of {
        named.insert(&e.child);
        if let Parent::Symbol(parent) = &e.parent {
            named.insert(parent);
        }
    }
    named.extend(rows.changed_in.iter().map(|c| &*c.id));
    named.extend(rows.continues.iter().flat_map(|c| [&*c.from, &*c.to]));
    named.extend(rows.moved_to.iter().flat_map(|m| [&*m.from, &*m.to]));
    let found = if named.len() <= lookups_at_most() {
        lookup(
            conn,
            "find stored symbols",
            "UNWIND $rows AS r MATCH (s:Symbol {id: r.id}) RETURN s.id",
            named.into_iter().map(id_row).collect(),
        )?
    } else {
        query(conn, "list symbols", "MATCH (s:Symbol) RETURN s.id")?
    };
    Ok(found
        .iter()
        .filter_map(|r| as_string(&r[0]))
        .map(Arc::from)
        .collect())
}

/// The hierarchy edges already stored among those of `rows` (none when
/// every child is new: a symbol's edges are written with it).
fn child_edges(conn: &Connection<'_>, rows: &GraphRows) -> Result<HashSet<ChildOf>> {
    if rows.child_of.is_empty() {
        return Ok(HashSet::new());
    }
    let children: HashSet<&str> = rows.child_of.iter().map(|e| &*e.child).collect();
    let few = children.len() <= lookups_at_most();
    let child_rows = || children.iter().map(|id| id_row(id)).collect::<Vec<_>>();
    let mut edges = HashSet::new();
    for (parent, key, file) in [("Symbol", "id", false), ("File", "path", true)] {
        let found = if few {
            lookup(
                conn,
                "find hierarchy",
                &format!(
                    "UNWIND $rows AS r MATCH (a:Symbol {{id: r.id}})-[:CHILD_OF]->(b:{parent}) \
                     RETURN a.id, b.{key}"
                ),
                child_rows(),
            )?
        } else {
            query(
                conn,
                "list hierarchy",
                &format!("MATCH (a:Symbol)-[:CHILD_OF]->(b:{parent}) RETURN a.id, b.{key}"),
            )?
        };
        for r in found {
            let (Some(child), Some(parent)) = (as_string(&r[0]), as_string(&r[1])) else {
                continue;
            };
            let parent = if file {
                Parent::File(parent.into())
            } else {
                Parent::Symbol(parent.into())
            };
            let child = child.into();
            edges.insert(ChildOf { child, parent });
        }
    }
    Ok(edges)
}

/// `COPY`s symbols none of which is stored yet; `stored` learns them.
fn insert_symbols(
    conn: &Connection<'_>,
    what: &'static str,
    symbols: &[&SymbolNode],
    stored: &mut HashSet<Arc<str>>,
) -> Result<()> {
    stage_symbols(what, symbols, stored)?.run(conn)
}

/// Stages symbols none of which is stored yet for their `COPY`s;
/// `stored` learns them.
fn stage_symbols(
    what: &'static str,
    symbols: &[&SymbolNode],
    stored: &mut HashSet<Arc<str>>,
) -> Result<StagedCopy> {
    let copy = stage_nodes(
        what,
        "Symbol",
        &SYMBOL_COLUMNS,
        &["CAST(NULL AS INT64)", "CAST(NULL AS BOOLEAN)"],
        symbols.to_vec(),
    )?;
    stored.extend(symbols.iter().map(|s| Arc::clone(&s.id)));
    Ok(copy)
}

/// The columns of `Symbol` a history row fills, in the table's order (the
/// code graph's `unresolved` and `bodiless` follow).
pub(super) const SYMBOL_COLUMNS: [&str; 11] = [
    "id",
    "path",
    "qualname",
    "name",
    "kind",
    "sig",
    "language",
    "deleted",
    "start_line",
    "end_line",
    "content_hash",
];

/// A row of a symbol id alone.
fn id_row(id: &str) -> ::lbug::Value {
    row_of(vec![("id", Prop::Str(id))])
}

/// Drops the digest of the code graph's rows (`Source.rows`) of the files
/// whose symbols `rows` write: history and graph share each symbol's node,
/// so those rows are no longer what the digest describes, and the graph's
/// next update writes them again. A few files are looked up by key; many
/// are first matched against the graph's files, read whole.
fn outdate_graph_rows(conn: &Connection<'_>, rows: &GraphRows) -> Result<()> {
    let mut paths: BTreeSet<&str> = rows
        .symbols
        .values()
        .chain(rows.deleted.values())
        .map(|s| &*s.path)
        .collect();
    if paths.len() > lookups_at_most() {
        let graphed: HashSet<String> =
            query(conn, "list graph files", "MATCH (s:Source) RETURN s.path")?
                .iter()
                .filter_map(|r| as_string(&r[0]))
                .collect();
        paths.retain(|p| graphed.contains(*p));
    }
    upsert(
        conn,
        "outdate graph rows",
        "UNWIND $rows AS r MATCH (s:Source {path: r.path}) SET s.rows = NULL",
        paths
            .into_iter()
            .map(|p| row_of(vec![("path", Prop::Str(p))]))
            .collect(),
    )
}

/// Creates, with their id alone, the symbols among `ids` not stored yet.
fn insert_bare_symbols<'a>(
    conn: &Connection<'_>,
    ids: impl Iterator<Item = &'a str>,
    stored: &mut HashSet<Arc<str>>,
) -> Result<()> {
    let mut bare: Vec<&str> = ids.filter(|id| !stored.contains(*id)).collect();
    bare.sort_unstable();
    bare.dedup();
    let rows = bare.iter().map(|id| id_row(id)).collect();
    upsert(
        conn,
        "bare symbols",
        "UNWIND $rows AS r MERGE (s:Symbol {id: r.id})",
        rows,
    )?;
    stored.extend(bare.into_iter().map(Arc::from));
    Ok(())
}

fn next_seq(conn: &Connection<'_>) -> Result<i64> {
    let rows = query(conn, "read seq", "MATCH (c:Commit) RETURN max(c.seq)")?;
    Ok(rows
        .first()
        .and_then(|r| as_i64(&r[0]))
        .map_or(0, |n| n + 1))
}

/// The language of each symbol a move of `rows` goes to, where the rows
/// know it.
fn move_languages(rows: &GraphRows) -> HashMap<Arc<str>, &'static str> {
    rows.moved_to
        .iter()
        .filter_map(|m| {
            let node = rows
                .symbols
                .get(&m.to)
                .or_else(|| rows.deleted.get(&m.to))?;
            Some((Arc::clone(&m.to), node.language))
        })
        .collect()
}

/// Links each moved symbol's old identity to its new one, in one statement
/// per chunk (one statement per move took 3 ms each: 38 of the 86 s of a
/// backfill of App-vNext/Polly). The old identity is the same qualname at
/// the old path when the store has it; otherwise (the enclosing type was
/// renamed too) a symbol at the old path with the same kind, own name and
/// text: a live one first (the one this commit moves away is live until
/// linked; one deleted earlier is not it), then the smallest id. Without
/// one, a deleted placeholder.
fn link_moves(
    conn: &Connection<'_>,
    rows: &GraphRows,
    languages: &HashMap<Arc<str>, &'static str>,
    stored: &mut HashSet<Arc<str>>,
) -> Result<()> {
    let moves = &rows.moved_to;
    if moves.is_empty() {
        return Ok(());
    }
    let mut known: HashSet<String> = moves
        .iter()
        .filter(|m| stored.contains(&*m.from))
        .map(|m| m.from.to_string())
        .collect();
    let paths: HashSet<String> = moves
        .iter()
        .filter(|m| !known.contains(&*m.from))
        .map(|m| m.old_path.to_string())
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
            // Read from the store: stored, whether or not the batch named it.
            stored.insert(field(0).into());
            by_text
                .entry((field(1), field(2), field(3), field(4)))
                .or_default()
                .push(field(0));
        }
    }
    let mut froms = Vec::with_capacity(moves.len());
    for m in moves {
        let from = if known.contains(&*m.from) {
            m.from.to_string()
        } else {
            let key = (
                m.old_path.to_string(),
                m.kind.to_owned(),
                m.name.clone(),
                m.content_hash.clone(),
            );
            by_text
                .get(&key)
                .and_then(|ids| ids.iter().find(|id| id.as_str() != &*m.to))
                .cloned()
                .unwrap_or_else(|| m.from.to_string())
        };
        // A later move of this batch finds what this one links (as when
        // they were written one by one).
        known.insert(from.clone());
        froms.push(from);
    }
    // An old identity not stored yet is created deleted, with what the
    // move says of it and the language of the new one; a stored one is
    // marked deleted. (A new identity with no language, created bare,
    // leaves the rest to the `MERGE` that did it all before.)
    let mut created: HashMap<&str, SymbolNode> = HashMap::new();
    let mut marked: Vec<&str> = Vec::new();
    let mut unusual: Vec<(&MovedTo, &String)> = Vec::new();
    for (m, from) in moves.iter().zip(&froms) {
        if stored.contains(from.as_str()) || created.contains_key(from.as_str()) {
            marked.push(from);
            continue;
        }
        let language = match created.get(&*m.to) {
            Some(to) => to.language,
            None => match languages.get(&*m.to) {
                Some(language) => language,
                None => {
                    unusual.push((m, from));
                    continue;
                }
            },
        };
        created.insert(
            from,
            SymbolNode {
                id: from.as_str().into(),
                path: Arc::clone(&m.old_path),
                qualname: m.qualname.clone(),
                name: m.name.clone(),
                kind: m.kind,
                sig: m.sig.clone(),
                language,
                deleted: true,
                start_line: 0,
                end_line: 0,
                content_hash: String::new(),
            },
        );
    }
    let created: Vec<&SymbolNode> = created.values().collect();
    insert_symbols(conn, "moved symbols", &created, stored)?;
    upsert(
        conn,
        "moved symbols",
        "UNWIND $rows AS r MATCH (b:Symbol {id: r.to}) \
         MERGE (a:Symbol {id: r.from}) ON CREATE SET a.path = r.old_path, a.qualname = r.qualname, \
         a.name = r.name, a.kind = r.kind, a.sig = r.sig, a.language = b.language, a.start_line = 0, \
         a.end_line = 0, a.content_hash = '' \
         SET a.deleted = true",
        unusual
            .iter()
            .map(|(m, from)| {
                row_of(vec![
                    ("to", Prop::Str(&m.to)),
                    ("from", Prop::Str(from)),
                    ("old_path", Prop::Str(&m.old_path)),
                    ("qualname", Prop::Str(&m.qualname)),
                    ("name", Prop::Str(&m.name)),
                    ("kind", Prop::Str(m.kind)),
                    ("sig", Prop::Str(&m.sig)),
                ])
            })
            .collect(),
    )?;
    stored.extend(unusual.iter().map(|(_, from)| Arc::from(from.as_str())));
    marked.sort_unstable();
    marked.dedup();
    upsert(
        conn,
        "moved symbols",
        "UNWIND $rows AS r MERGE (s:Symbol {id: r.id}) SET s.deleted = true",
        marked.iter().map(|id| id_row(id)).collect(),
    )?;
    // One link per pair, with the last move's commit; a pair linked by an
    // earlier batch gets that commit.
    let mut links: Vec<(&str, &str, &str)> = Vec::new();
    let mut at: HashMap<(&str, &str), usize> = HashMap::new();
    for (m, from) in moves.iter().zip(&froms) {
        let key = (from.as_str(), &*m.to);
        match at.get(&key) {
            Some(&i) => links[i].2 = &m.sha,
            None => {
                at.insert(key, links.len());
                links.push((from, &m.to, &m.sha));
            }
        }
    }
    let linked = moved_links(conn, &links)?;
    let (relinked, fresh): (Vec<_>, Vec<_>) = links
        .into_iter()
        .partition(|(from, to, _)| linked.contains(&(from.to_string(), to.to_string())));
    let link_row = |(from, to, sha): (&str, &str, &str)| {
        row_of(vec![
            ("from", Prop::Str(from)),
            ("to", Prop::Str(to)),
            ("sha", Prop::Str(sha)),
        ])
    };
    upsert(
        conn,
        "link moves again",
        "UNWIND $rows AS r MATCH (a:Symbol {id: r.from})-[l:MOVED_TO]->(b:Symbol {id: r.to}) \
         SET l.sha = r.sha",
        relinked.into_iter().map(link_row).collect(),
    )?;
    insert_rels(
        conn,
        "link moves",
        "MOVED_TO",
        ("Symbol", "Symbol"),
        &["from", "to", "sha"],
        fresh.into_iter().map(link_row).collect(),
        Insert::Bulk,
    )
}

/// The (from, to) pairs of the stored moves among `links` (every stored
/// move, when they are many).
fn moved_links(
    conn: &Connection<'_>,
    links: &[(&str, &str, &str)],
) -> Result<HashSet<(String, String)>> {
    let found = if links.len() <= lookups_at_most() {
        let mut froms: Vec<&str> = links.iter().map(|(from, _, _)| *from).collect();
        froms.sort_unstable();
        froms.dedup();
        lookup(
            conn,
            "find moves",
            "UNWIND $rows AS r MATCH (a:Symbol {id: r.id})-[:MOVED_TO]->(b:Symbol) \
             RETURN a.id, b.id",
            froms.into_iter().map(id_row).collect(),
        )?
    } else {
        query(
            conn,
            "list moves",
            "MATCH (a:Symbol)-[:MOVED_TO]->(b:Symbol) RETURN a.id, b.id",
        )?
    };
    Ok(found
        .iter()
        .filter_map(|r| Some((as_string(&r[0])?, as_string(&r[1])?)))
        .collect())
}
