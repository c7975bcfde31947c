//! The embedded Kuzu graph under `.git/diffidx/`: the queryable cache of the
//! notes. Only this module knows Kuzu.
//!
//! Kuzu lets one process hold a database read-write at a time (a second open
//! fails at once), so writers hold it only while they write and every open
//! retries for a bounded time. Each load is one transaction: a crash leaves
//! the store as it was before the load, and the notes can always rebuild it.

mod schema;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use diffidx_core::symbol::symbol_id;
use diffidx_core::{CommitRecord, Status};
use kuzu::{Connection, Database, LogicalType, SystemConfig, Value};

pub use schema::SCHEMA_VERSION;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "the store {} is in use by another diffidx process (waited {waited:?}); try again in a moment",
        path.display()
    )]
    Locked { path: PathBuf, waited: Duration },
    #[error("the store {} cannot be opened: {reason}; run `git diffidx rebuild` to recreate it from the notes", path.display())]
    Unusable { path: PathBuf, reason: String },
    /// A writer left changes to replay (it stopped, or is finishing); only a
    /// read-write open replays them.
    #[error("the store {} has changes to replay; run `git diffidx index` to recover it", path.display())]
    NeedsReplay { path: PathBuf },
    #[error("store query failed ({what}): {reason}")]
    Query { what: &'static str, reason: String },
}

type Result<T, E = StoreError> = std::result::Result<T, E>;

/// How a store is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    ReadOnly,
    ReadWrite,
}

pub struct Store {
    db: Database,
    path: PathBuf,
}

/// Where the store of a repository lives.
pub fn store_path(git_dir: &Path) -> PathBuf {
    git_dir.join("diffidx").join("graph.kuzu")
}

impl Store {
    /// Opens (creating if needed, for read-write) the store at `path`, retrying
    /// while another process holds it, for at most `wait`.
    pub fn open(path: &Path, access: Access, wait: Duration) -> Result<Store> {
        if access == Access::ReadWrite {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| StoreError::Unusable {
                    path: path.to_owned(),
                    reason: e.to_string(),
                })?;
            }
        }
        let started = Instant::now();
        let db = loop {
            let config = SystemConfig::default()
                .read_only(access == Access::ReadOnly)
                .buffer_pool_size(256 * 1024 * 1024)
                .max_num_threads(2);
            match Database::new(path, config) {
                Ok(db) => break db,
                Err(e) => {
                    let reason = e.to_string();
                    let replay = reason.contains("replay") || reason.contains("shadow");
                    if !reason.contains("lock") && !replay {
                        return Err(StoreError::Unusable {
                            path: path.to_owned(),
                            reason,
                        });
                    }
                    if started.elapsed() >= wait {
                        return Err(if replay {
                            StoreError::NeedsReplay {
                                path: path.to_owned(),
                            }
                        } else {
                            StoreError::Locked {
                                path: path.to_owned(),
                                waited: started.elapsed(),
                            }
                        });
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        };
        let store = Store {
            db,
            path: path.to_owned(),
        };
        if access == Access::ReadWrite {
            store.ensure_schema()?;
        }
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn conn(&self) -> Result<Connection<'_>> {
        Connection::new(&self.db).map_err(|e| StoreError::Query {
            what: "connect",
            reason: e.to_string(),
        })
    }

    fn ensure_schema(&self) -> Result<()> {
        let conn = self.conn()?;
        for statement in schema::CREATE {
            run(&conn, "create schema", statement)?;
        }
        match self.meta("schema")? {
            None => self.set_meta(&conn, "schema", SCHEMA_VERSION),
            Some(v) if v == SCHEMA_VERSION => Ok(()),
            Some(v) => Err(StoreError::Unusable {
                path: self.path.clone(),
                reason: format!("it has schema version {v}, this diffidx writes {SCHEMA_VERSION}"),
            }),
        }
    }

    /// A value from the `Meta` table.
    pub fn meta(&self, key: &str) -> Result<Option<String>> {
        let conn = self.conn()?;
        let mut stmt = prepare(&conn, "MATCH (m:Meta {key: $key}) RETURN m.value")?;
        let rows = execute(&conn, "read meta", &mut stmt, vec![("key", string(key))])?;
        Ok(rows.into_iter().next().and_then(|r| as_string(&r[0])))
    }

    fn set_meta(&self, conn: &Connection<'_>, key: &str, value: &str) -> Result<()> {
        let mut stmt = prepare(conn, "MERGE (m:Meta {key: $key}) SET m.value = $value")?;
        execute(
            conn,
            "write meta",
            &mut stmt,
            vec![("key", string(key)), ("value", string(value))],
        )?;
        Ok(())
    }

    /// The notes commit whose notes are all loaded.
    pub fn loaded_notes_tip(&self) -> Result<Option<String>> {
        self.meta("notes_tip")
    }

    /// Shas of every commit in the store.
    pub fn commits(&self) -> Result<HashSet<String>> {
        let conn = self.conn()?;
        let rows = query(&conn, "list commits", "MATCH (c:Commit) RETURN c.sha")?;
        Ok(rows.iter().filter_map(|r| as_string(&r[0])).collect())
    }

    /// True when the store has loaded `sha`.
    pub fn has_commit(&self, sha: &str) -> Result<bool> {
        self.reader()?.has_commit(sha)
    }

    /// A connection for queries that keeps its prepared statements, for a
    /// process that answers many (the `serve` reader).
    pub fn reader(&self) -> Result<Reader<'_>> {
        Ok(Reader {
            conn: self.conn()?,
            statements: std::cell::RefCell::new(HashMap::new()),
        })
    }

    /// Loads commit records (oldest first) in one transaction and records
    /// `notes_tip` as loaded. Loading a commit twice changes nothing.
    pub fn load(&self, records: &[CommitRecord], notes_tip: Option<&str>) -> Result<()> {
        let conn = self.conn()?;
        run(&conn, "begin", "BEGIN TRANSACTION")?;
        let result = self.load_in_transaction(&conn, records, notes_tip);
        match result {
            Ok(()) => run(&conn, "commit", "COMMIT").map(|_| ()),
            Err(e) => {
                let _ = run(&conn, "rollback", "ROLLBACK");
                Err(e)
            }
        }
    }

    fn load_in_transaction(
        &self,
        conn: &Connection<'_>,
        records: &[CommitRecord],
        notes_tip: Option<&str>,
    ) -> Result<()> {
        // A commit is loaded whole or not at all (one transaction), so one
        // that is already here is skipped: loading twice changes nothing.
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
        let fresh: Vec<&CommitRecord> = records
            .iter()
            .filter(|r| !present.contains(&r.info.id.to_string()))
            .collect();
        let base_seq = self.next_seq(conn)?;
        let batch = Batch::new(&fresh, base_seq);
        upsert(
            conn,
            "commits",
            "UNWIND $rows AS r MERGE (c:Commit {sha: r.sha}) SET c.parent = r.parent, c.time = r.time, \
             c.date = r.date, c.author = r.author, c.subject = r.subject, c.seq = r.seq",
            &batch.commits,
        )?;
        upsert(
            conn,
            "files",
            "UNWIND $rows AS r MERGE (f:File {path: r.path}) SET f.language = r.language",
            &batch.files,
        )?;
        upsert(
            conn,
            "symbols",
            "UNWIND $rows AS r MERGE (s:Symbol {id: r.id}) SET s.path = r.path, s.qualname = r.qualname, \
             s.name = r.name, s.kind = r.kind, s.sig = r.sig, s.language = r.language, s.deleted = r.deleted, \
             s.start_line = r.start_line, s.end_line = r.end_line, s.content_hash = r.content_hash",
            &batch.symbols.values().cloned().collect::<Vec<_>>(),
        )?;
        upsert(
            conn,
            "deleted symbols",
            "UNWIND $rows AS r MERGE (s:Symbol {id: r.id}) ON CREATE SET s.path = r.path, \
             s.qualname = r.qualname, s.name = r.name, s.kind = r.kind, s.sig = r.sig, \
             s.language = r.language, s.content_hash = r.content_hash \
             SET s.deleted = true, s.start_line = r.start_line, s.end_line = r.end_line",
            &batch.deleted.values().cloned().collect::<Vec<_>>(),
        )?;
        upsert(
            conn,
            "hierarchy",
            "UNWIND $rows AS r MERGE (a:Symbol {id: r.child}) MERGE (b:Symbol {id: r.parent}) \
             MERGE (a)-[:CHILD_OF]->(b)",
            &batch.children,
        )?;
        upsert(
            conn,
            "files of symbols",
            "UNWIND $rows AS r MERGE (a:Symbol {id: r.id}) MERGE (f:File {path: r.path}) MERGE (a)-[:IN_FILE]->(f)",
            &batch.in_file,
        )?;
        upsert(
            conn,
            "changes",
            // Commits already in the store were skipped above, so every change is new.
            "UNWIND $rows AS r MERGE (s:Symbol {id: r.id}) MERGE (c:Commit {sha: r.sha}) \
             CREATE (s)-[:CHANGED_IN {status: r.status, old_path: r.old_path, modified: r.modified, \
             start_line: r.start_line, end_line: r.end_line}]->(c)",
            &batch.changes,
        )?;
        for m in &batch.moves {
            self.link_move(conn, m)?;
        }
        if let Some(tip) = notes_tip {
            self.set_meta(conn, "notes_tip", tip)?;
        }
        Ok(())
    }

    fn next_seq(&self, conn: &Connection<'_>) -> Result<i64> {
        let rows = query(conn, "read seq", "MATCH (c:Commit) RETURN max(c.seq)")?;
        Ok(rows
            .first()
            .and_then(|r| match r[0] {
                Value::Int64(n) => Some(n + 1),
                _ => None,
            })
            .unwrap_or(0))
    }

    /// Links a moved symbol's old identity to its new one. The old identity is
    /// the same qualname at the old path when the store has it; otherwise
    /// (the enclosing type was renamed too) the live symbol at the old path
    /// with the same kind, own name and text.
    fn link_move(&self, conn: &Connection<'_>, m: &Move) -> Result<()> {
        let mut stmt = prepare(
            conn,
            "MATCH (s:Symbol) WHERE s.path = $path AND s.kind = $kind AND s.name = $name \
             AND s.content_hash = $hash AND s.id <> $to RETURN s.id LIMIT 1",
        )?;
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
            let found = execute(
                conn,
                "find moved symbol",
                &mut stmt,
                vec![
                    ("path", string(&m.old_path)),
                    ("kind", string(&m.kind)),
                    ("name", string(&m.name)),
                    ("hash", string(&m.hash)),
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
        execute(
            conn,
            "link move",
            &mut link,
            vec![
                ("to", string(&m.to)),
                ("from", string(&from)),
                ("old_path", string(&m.old_path)),
                ("qualname", string(&m.qualname)),
                ("name", string(&m.name)),
                ("kind", string(&m.kind)),
                ("sig", string(&m.sig)),
                ("sha", string(&m.sha)),
            ],
        )?;
        Ok(())
    }

    /// The history of the symbols matching `query`, following moves, newest first.
    pub fn history(&self, query: &HistoryQuery) -> Result<Vec<HistoryEntry>> {
        self.reader()?.history(query)
    }

    /// Node and relationship counts, for `status`.
    pub fn counts(&self) -> Result<Counts> {
        let conn = self.conn()?;
        let count = |what: &'static str, q: &str| -> Result<u64> {
            let rows = query(&conn, what, q)?;
            Ok(rows.first().map(|r| as_u32(&r[0]) as u64).unwrap_or(0))
        };
        Ok(Counts {
            commits: count("count commits", "MATCH (c:Commit) RETURN count(c)")?,
            symbols: count("count symbols", "MATCH (s:Symbol) RETURN count(s)")?,
            changes: count(
                "count changes",
                "MATCH ()-[e:CHANGED_IN]->() RETURN count(e)",
            )?,
        })
    }
}

/// Read queries on one connection, each statement prepared once (Kuzu's
/// parse and plan cost several milliseconds per statement).
pub struct Reader<'s> {
    conn: Connection<'s>,
    statements: std::cell::RefCell<HashMap<String, kuzu::PreparedStatement>>,
}

impl Reader<'_> {
    fn run(
        &self,
        text: &str,
        what: &'static str,
        params: Vec<(&str, Value)>,
    ) -> Result<Vec<Vec<Value>>> {
        let mut statements = self.statements.borrow_mut();
        let stmt = match statements.entry(text.to_owned()) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(prepare(&self.conn, text)?),
        };
        execute(&self.conn, what, stmt, params)
    }

    /// True when the store has loaded `sha`.
    pub fn has_commit(&self, sha: &str) -> Result<bool> {
        let rows = self.run(
            "MATCH (c:Commit {sha: $sha}) RETURN c.sha",
            "find commit",
            vec![("sha", string(sha))],
        )?;
        Ok(!rows.is_empty())
    }

    /// The history of the symbols matching `query`, following moves, newest first.
    pub fn history(&self, query: &HistoryQuery) -> Result<Vec<HistoryEntry>> {
        // Candidates by own name (an equality scan), then the qualname rule.
        let mut filters = vec!["s.name = $name".to_owned()];
        let mut params = vec![("name", string(own_name(&query.name)))];
        if let Some(sig) = &query.sig {
            filters.push("s.sig = $sig".into());
            params.push(("sig", string(sig)));
        }
        if let Some(kind) = &query.kind {
            filters.push("s.kind = $kind".into());
            params.push(("kind", string(kind)));
        }
        if let Some(path) = &query.path {
            filters.push("(s.path = $path OR s.path STARTS WITH $dir)".into());
            params.push(("path", string(path.trim_end_matches('/'))));
            params.push(("dir", string(&format!("{}/", path.trim_end_matches('/')))));
        }
        let matching = format!(
            "MATCH (s:Symbol) WHERE {} RETURN s.id, s.qualname",
            filters.join(" AND ")
        );
        let mut ids: HashSet<String> = self
            .run(&matching, "match symbols", params)?
            .iter()
            .filter(|r| as_string(&r[1]).is_some_and(|q| query.matches(&q)))
            .filter_map(|r| as_string(&r[0]))
            .collect();
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        // Follow moves both ways, one hop at a time: earlier and later identities.
        let hop = "MATCH (a:Symbol)-[:MOVED_TO]-(b:Symbol) WHERE a.id IN $ids RETURN DISTINCT b.id";
        let mut frontier = ids.clone();
        for _ in 0..16 {
            let next: HashSet<String> = self
                .run(hop, "follow moves", vec![("ids", string_list(&frontier))])?
                .iter()
                .filter_map(|r| as_string(&r[0]))
                .filter(|id| !ids.contains(id))
                .collect();
            if next.is_empty() {
                break;
            }
            ids.extend(next.iter().cloned());
            frontier = next;
        }
        let rows = self.run(
            "MATCH (s:Symbol)-[e:CHANGED_IN]->(c:Commit) WHERE s.id IN $ids \
             RETURN c.sha, c.date, c.author, c.subject, e.status, s.kind, s.path, e.old_path, \
             s.qualname, s.sig, e.start_line, e.end_line, s.id \
             ORDER BY c.time DESC, c.seq DESC, s.path, e.start_line",
            "read history",
            vec![("ids", string_list(&ids))],
        )?;
        Ok(rows
            .into_iter()
            .map(|r| HistoryEntry {
                commit: as_string(&r[0]).unwrap_or_default(),
                date: as_string(&r[1]).unwrap_or_default(),
                author: as_string(&r[2]).unwrap_or_default(),
                subject: as_string(&r[3]).unwrap_or_default(),
                status: as_string(&r[4]).unwrap_or_default(),
                kind: as_string(&r[5]).unwrap_or_default(),
                path: as_string(&r[6]).unwrap_or_default(),
                old_path: as_string(&r[7]).filter(|p| !p.is_empty()),
                qualname: as_string(&r[8]).unwrap_or_default(),
                sig: as_string(&r[9]).unwrap_or_default(),
                start_line: as_u32(&r[10]),
                end_line: as_u32(&r[11]),
                symbol_id: as_string(&r[12]).unwrap_or_default(),
            })
            .collect())
    }
}

/// Which symbols `log --symbol` asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HistoryQuery {
    /// A qualname or a suffix of one at a `.`/`::` boundary.
    pub name: String,
    /// `Foo.Bar(int,string)` picks one overload.
    pub sig: Option<String>,
    pub kind: Option<String>,
    pub path: Option<String>,
}

impl HistoryQuery {
    /// Splits a trailing signature off `NAME(...)`.
    pub fn parse(name: &str) -> HistoryQuery {
        match name.find('(') {
            Some(i) if name.ends_with(')') && !name[..i].ends_with("operator ") => HistoryQuery {
                name: name[..i].to_owned(),
                sig: Some(name[i..].chars().filter(|c| !c.is_whitespace()).collect()),
                ..HistoryQuery::default()
            },
            _ => HistoryQuery {
                name: name.to_owned(),
                ..HistoryQuery::default()
            },
        }
    }

    /// True when `qualname` is the name, or ends with it after a `.`/`::`
    /// boundary, optionally followed by a twin's `#n` suffix (`Foo.Bar`
    /// matches every twin, `Foo.Bar#2` only that one).
    pub fn matches(&self, qualname: &str) -> bool {
        let ends_with_name = |text: &str| match text.strip_suffix(self.name.as_str()) {
            Some("") => true,
            Some(prefix) => prefix.ends_with('.') || prefix.ends_with("::"),
            None => false,
        };
        let base = match qualname.rfind('#') {
            Some(i)
                if !qualname[i + 1..].is_empty()
                    && qualname[i + 1..].bytes().all(|b| b.is_ascii_digit()) =>
            {
                &qualname[..i]
            }
            _ => qualname,
        };
        ends_with_name(qualname) || ends_with_name(base)
    }
}

/// One line of a symbol's history.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HistoryEntry {
    pub commit: String,
    pub date: String,
    pub author: String,
    pub subject: String,
    pub status: String,
    pub kind: String,
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    pub qualname: String,
    pub sig: String,
    pub start_line: u32,
    pub end_line: u32,
    #[serde(skip)]
    pub symbol_id: String,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub commits: u64,
    pub symbols: u64,
    pub changes: u64,
}

/// Rows for one load, with the latest state of each symbol across the batch.
struct Batch {
    commits: Vec<Value>,
    files: Vec<Value>,
    symbols: BTreeMap<String, Value>,
    deleted: BTreeMap<String, Value>,
    children: Vec<Value>,
    in_file: Vec<Value>,
    changes: Vec<Value>,
    moves: Vec<Move>,
}

struct Move {
    from: String,
    to: String,
    old_path: String,
    qualname: String,
    name: String,
    kind: String,
    sig: String,
    hash: String,
    sha: String,
}

impl Batch {
    fn new(records: &[&CommitRecord], base_seq: i64) -> Batch {
        let mut batch = Batch {
            commits: Vec::new(),
            files: Vec::new(),
            symbols: BTreeMap::new(),
            deleted: BTreeMap::new(),
            children: Vec::new(),
            in_file: Vec::new(),
            changes: Vec::new(),
            moves: Vec::new(),
        };
        let mut files_seen = HashSet::new();
        // Hierarchy edges repeat across commits; send each once per batch.
        let mut edges_seen: HashSet<(String, String)> = HashSet::new();
        for (i, record) in records.iter().enumerate() {
            let info = &record.info;
            let sha = info.id.to_string();
            batch.commits.push(row(vec![
                ("sha", string(&sha)),
                (
                    "parent",
                    string(record.note.parent.as_deref().unwrap_or("")),
                ),
                ("time", Value::Int64(info.time)),
                ("date", string(&info.date)),
                ("author", string(&info.author)),
                ("subject", string(&info.subject)),
                ("seq", Value::Int64(base_seq + i as i64)),
            ]));
            // Every symbol of every touched file, as of this commit.
            for file in &record.files {
                let language = file.language.name();
                if files_seen.insert(file.path.clone()) {
                    batch.files.push(row(vec![
                        ("path", string(&file.path)),
                        ("language", string(language)),
                    ]));
                }
                let symbols = &file.symbols.symbols;
                let ids: Vec<String> = symbols
                    .iter()
                    .map(|s| symbol_id(&file.path, s.kind, &s.qualname, &s.sig))
                    .collect();
                for (s, id) in symbols.iter().zip(&ids) {
                    batch.deleted.remove(id);
                    batch.symbols.insert(
                        id.clone(),
                        symbol_row(
                            id,
                            &file.path,
                            &s.qualname,
                            &s.name,
                            s.kind.as_str(),
                            &s.sig,
                            language,
                            false,
                            (s.start_line, s.end_line),
                            &s.content_hash.to_hex(),
                        ),
                    );
                    if edges_seen.insert((id.clone(), file.path.clone())) {
                        batch
                            .in_file
                            .push(row(vec![("id", string(id)), ("path", string(&file.path))]));
                    }
                    if let Some(p) = s.parent {
                        if edges_seen.insert((id.clone(), ids[p].clone())) {
                            batch.children.push(row(vec![
                                ("child", string(id)),
                                ("parent", string(&ids[p])),
                            ]));
                        }
                    }
                }
            }
            for d in &record.note.deltas {
                let own_name = own_name(&d.qualname);
                if d.status == Status::Deleted {
                    // Kept forever: marked deleted, its last known text hash kept.
                    let language = diffidx_core::Language::from_path(&d.path)
                        .map(|l| l.name())
                        .unwrap_or("");
                    let existing = batch.symbols.remove(&d.id);
                    let hash = existing
                        .as_ref()
                        .and_then(|v| struct_field(v, "content_hash"))
                        .unwrap_or_default();
                    batch.deleted.insert(
                        d.id.clone(),
                        symbol_row(
                            &d.id,
                            &d.path,
                            &d.qualname,
                            own_name,
                            d.kind.as_str(),
                            &d.sig,
                            language,
                            true,
                            (d.start_line, d.end_line),
                            &hash,
                        ),
                    );
                }
                batch.changes.push(row(vec![
                    ("id", string(&d.id)),
                    ("sha", string(&sha)),
                    ("status", string(d.status.as_str())),
                    ("old_path", string(d.old_path.as_deref().unwrap_or(""))),
                    ("modified", Value::Bool(d.modified.unwrap_or(false))),
                    ("start_line", Value::Int64(d.start_line as i64)),
                    ("end_line", Value::Int64(d.end_line as i64)),
                ]));
                if let (Status::Moved, Some(old_path)) = (d.status, &d.old_path) {
                    batch.moves.push(Move {
                        from: symbol_id(old_path, d.kind, &d.qualname, &d.sig),
                        to: d.id.clone(),
                        old_path: old_path.clone(),
                        qualname: d.qualname.clone(),
                        name: own_name.to_owned(),
                        kind: d.kind.as_str().to_owned(),
                        sig: d.sig.clone(),
                        hash: d.content_hash.clone().unwrap_or_default(),
                        sha: sha.clone(),
                    });
                }
            }
        }
        batch
    }
}

/// The own name of a qualname: after the last `.` or `::`, without `#n`.
/// (C# conversion operators keep their type: `implicit operator int`.)
fn own_name(qualname: &str) -> &str {
    let base = match qualname.rfind('#') {
        Some(i) if qualname[i + 1..].bytes().all(|b| b.is_ascii_digit()) => &qualname[..i],
        _ => qualname,
    };
    let start = if let Some(op) = base.find("operator ") {
        // `Foo.implicit operator Bar.Baz`: the name starts at the keyword.
        base[..op]
            .trim_end_matches("implicit ")
            .trim_end_matches("explicit ")
            .len()
    } else {
        let dot = base.rfind('.').map_or(0, |i| i + 1);
        let colons = base.rfind("::").map_or(0, |i| i + 2);
        dot.max(colons)
    };
    &base[start..]
}

#[allow(clippy::too_many_arguments)]
fn symbol_row(
    id: &str,
    path: &str,
    qualname: &str,
    name: &str,
    kind: &str,
    sig: &str,
    language: &str,
    deleted: bool,
    lines: (u32, u32),
    content_hash: &str,
) -> Value {
    row(vec![
        ("id", string(id)),
        ("path", string(path)),
        ("qualname", string(qualname)),
        ("name", string(name)),
        ("kind", string(kind)),
        ("sig", string(sig)),
        ("language", string(language)),
        ("deleted", Value::Bool(deleted)),
        ("start_line", Value::Int64(lines.0 as i64)),
        ("end_line", Value::Int64(lines.1 as i64)),
        ("content_hash", string(content_hash)),
    ])
}

fn string(s: &str) -> Value {
    Value::String(s.to_owned())
}

fn string_list(items: &HashSet<String>) -> Value {
    let mut sorted: Vec<&String> = items.iter().collect();
    sorted.sort();
    Value::List(
        LogicalType::String,
        sorted.into_iter().map(|s| string(s)).collect(),
    )
}

fn row(fields: Vec<(&str, Value)>) -> Value {
    Value::Struct(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

fn struct_field(value: &Value, name: &str) -> Option<String> {
    match value {
        Value::Struct(fields) => fields
            .iter()
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| as_string(v)),
        _ => None,
    }
}

fn as_string(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

fn as_u32(value: &Value) -> u32 {
    match value {
        Value::Int64(n) => *n as u32,
        Value::Int32(n) => *n as u32,
        Value::UInt64(n) => *n as u32,
        _ => 0,
    }
}

fn kuzu_error(what: &'static str, e: kuzu::Error) -> StoreError {
    StoreError::Query {
        what,
        reason: e.to_string(),
    }
}

fn prepare<'c>(conn: &Connection<'c>, q: &str) -> Result<kuzu::PreparedStatement> {
    conn.prepare(q).map_err(|e| kuzu_error("prepare", e))
}

fn execute(
    conn: &Connection<'_>,
    what: &'static str,
    stmt: &mut kuzu::PreparedStatement,
    params: Vec<(&str, Value)>,
) -> Result<Vec<Vec<Value>>> {
    let result = conn
        .execute(stmt, params)
        .map_err(|e| kuzu_error(what, e))?;
    Ok(result.collect())
}

fn query(conn: &Connection<'_>, what: &'static str, q: &str) -> Result<Vec<Vec<Value>>> {
    let result = conn.query(q).map_err(|e| kuzu_error(what, e))?;
    Ok(result.collect())
}

fn run(conn: &Connection<'_>, what: &'static str, q: &str) -> Result<()> {
    conn.query(q).map_err(|e| kuzu_error(what, e))?;
    Ok(())
}

/// `UNWIND`-batched upsert of `rows`, in chunks.
fn upsert(conn: &Connection<'_>, what: &'static str, q: &str, rows: &[Value]) -> Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let mut stmt = prepare(conn, q)?;
    for chunk in rows.chunks(2000) {
        let ty = LogicalType::from(&chunk[0]);
        let list = Value::List(ty, chunk.to_vec());
        execute(conn, what, &mut stmt, vec![("rows", list)])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_twin_is_named_with_or_without_its_number() {
        let all = HistoryQuery::parse("Lite::fmt");
        let one = HistoryQuery::parse("Lite::fmt#2");
        assert!(all.matches("syn::Lite::fmt#2") && all.matches("Lite::fmt"));
        assert!(one.matches("Lite::fmt#2") && one.matches("syn::Lite::fmt#2"));
        assert!(!one.matches("Lite::fmt#3") && !one.matches("Lite::fmt"));
    }

    #[test]
    fn own_names() {
        assert_eq!(own_name("Acme.Foo.Bar"), "Bar");
        assert_eq!(own_name("a::b::c#2"), "c");
        assert_eq!(own_name("Foo.operator +"), "operator +");
        assert_eq!(
            own_name("Foo.implicit operator System.Int32"),
            "implicit operator System.Int32"
        );
        assert_eq!(own_name("Top"), "Top");
    }

    #[test]
    fn history_query_splits_signatures() {
        let q = HistoryQuery::parse("Foo.Bar(int, string)");
        assert_eq!(
            (q.name.as_str(), q.sig.as_deref()),
            ("Foo.Bar", Some("(int,string)"))
        );
        let q = HistoryQuery::parse("Labeled::fmt");
        assert_eq!((q.name.as_str(), q.sig), ("Labeled::fmt", None));
        let q = HistoryQuery::parse("Foo.Bar");
        assert!(q.matches("Foo.Bar"));
        assert!(q.matches("Acme.Foo.Bar"));
        assert!(q.matches("Acme.Foo.Bar#2"));
        assert!(!q.matches("Acme.XFoo.Bar"));
        assert!(!q.matches("Acme.Foo.Barn"));
        assert!(HistoryQuery::parse("fmt").matches("Wrapper::fmt"));
    }
}
