//! The embedded graph under `.git/diffidx/`: the queryable cache of the
//! notes, a LadybugDB database (`lbug`, the maintained continuation of Kuzu,
//! whose storage and Cypher it keeps; comments that name Kuzu record
//! what was measured on it before the move). Only this module knows the
//! engine.
//!
//! One process at a time holds the store read-write, and none reads beside
//! it (the store's own lock, [`OpenLock`]: a second open fails at once), so
//! writers hold it only while they write and every open retries for a
//! bounded time (`crate::open` adds the query server's
//! hand-over and recovery on top). Each load is one transaction: a crash
//! leaves the store as it was before the load, and the notes can always
//! rebuild it. What is written comes from `crate::graph`, as for Neo4j.

pub mod codegraph;
mod engine;
mod load;
mod read;
mod schema;
pub mod seal;
mod search;
mod window;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ::lbug::{Connection, Database, SystemConfig};

pub use read::{
    ChangeSummary, Counts, HeldHistory, HistoryEntry, NamesNear, Reader, StoreContents,
};
pub use schema::SCHEMA_VERSION;
pub use search::{DeletedIn, SymbolEntry};
pub use window::{Callers, WindowAnswer, WindowChange};

use self::engine::{as_string, execute, prepare, query, run, string, string_list};

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
    /// Always `Some` until dropped (a writer closes it before sealing).
    db: Option<Database>,
    path: PathBuf,
    access: Access,
    /// Opened for writing without a seal over an existing store: the last
    /// writer was killed (or was an older diffidx), so its last load may be
    /// partial.
    unclean: bool,
    /// The engine's buffer pool, sized by the store when opened.
    pool: u64,
    /// Held while `db` is open (see [`OpenLock`]); released after it.
    _open_lock: Option<OpenLock>,
}

/// Kuzu refused a second process's open while one held the database
/// read-write, and the store's protocol stands on that: a reader waits for
/// a writer, the query server reopens only once the writer has closed. The
/// engine now lets a reader open beside a writer (and keeps it on the view
/// it opened), so the store keeps that rule itself: every open holds a lock
/// on `<store>.open` for as long as the database is open, shared for a
/// reader, exclusive for a writer. The file stays (removing it while held
/// would let the next open lock another file).
struct OpenLock {
    _file: std::fs::File,
}

impl OpenLock {
    /// `Ok(None)`: the lock file cannot be opened (a read-only checkout of
    /// someone else's repository), so the engine alone decides.
    fn take(path: &Path, access: Access) -> std::io::Result<Option<OpenLock>> {
        let file = match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(PathBuf::from(format!("{}.open", path.display())))
        {
            Ok(file) => file,
            Err(_) => return Ok(None),
        };
        let taken = match access {
            Access::ReadOnly => file.try_lock_shared(),
            Access::ReadWrite => file.try_lock(),
        };
        match taken {
            Ok(()) => Ok(Some(OpenLock { _file: file })),
            Err(std::fs::TryLockError::WouldBlock) => Err(std::io::ErrorKind::WouldBlock.into()),
            Err(std::fs::TryLockError::Error(e)) => Err(e),
        }
    }
}

/// A writer seals the store when it closes: the blake3 of its bytes, so that
/// `fsck` can tell a store changed by anything but diffidx (readers do not
/// change the file).
///
/// Closing checkpoints, and the engine aborts the process when a write fails
/// while it closes (a full disk: its log writer flushes in a destructor).
/// So a writer checkpoints first, where a failure is only an error, and
/// when that fails leaves the files as they are, unsealed and unclosed:
/// the next writer finds them unclean and recovers (the process is about
/// to report the error that got it here).
impl Drop for Store {
    fn drop(&mut self) {
        let Some(db) = self.db.take() else {
            return;
        };
        if self.access == Access::ReadOnly {
            return;
        }
        let checkpointed = Connection::new(&db)
            .and_then(|conn| conn.query("CHECKPOINT").map(|_| ()))
            .is_ok();
        if !checkpointed {
            std::mem::forget(db);
            return;
        }
        drop(db);
        seal::write(&self.path);
    }
}

/// Why the engine would not open a store, read from its message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OpenFailure {
    /// Another process holds it, or its writer is finishing: waited for.
    /// That includes a change log that was there when the engine looked
    /// and gone when it opened it (another process's writer checkpointed
    /// and removed it in between; a query beside a busy hook met it).
    Busy,
    /// A writer left changes that only a read-write open replays.
    Replay,
    /// Anything else: the store cannot be used as it is.
    Unusable,
}

impl OpenFailure {
    fn of(reason: &str) -> OpenFailure {
        let log_vanished = reason.contains("Cannot open file")
            && reason.contains(".wal")
            && reason.contains("No such file");
        // "Cannot open database in read-only mode while checkpoint recovery
        // is pending": with the open lock no writer is checkpointing, so a
        // killed one left it.
        if reason.contains("replay")
            || reason.contains("shadow")
            || reason.contains("recovery is pending")
        {
            OpenFailure::Replay
        } else if reason.contains("lock") || log_vanished {
            OpenFailure::Busy
        } else {
            OpenFailure::Unusable
        }
    }
}

/// The engine's buffer pool for a store of `store` bytes: eight times the
/// store, at least 256 MiB, at most half the machine's memory. What a write
/// holds in the pool grows with the store, so a fixed pool that fits a small
/// store fails on a large one: hibernate/hibernate-orm's
/// history failed its fourth batch at 256 MiB (a store of about 200 MB) and
/// passes at 512. The engine takes pages from the pool as it uses them, so
/// a larger pool costs only its frames' bookkeeping (about 2 MiB per GiB).
fn pool_bytes(store: u64) -> u64 {
    const FLOOR: u64 = 256 << 20;
    let wanted = store.saturating_mul(8).max(FLOOR);
    match physical_memory() {
        Some(total) => wanted.min((total / 2).max(FLOOR)),
        None => wanted,
    }
}

/// The machine's memory, from `/proc/meminfo` (`None` where there is none).
fn physical_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
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
        let unclean = access == Access::ReadWrite
            && path.exists()
            && seal::check_quickly(path) == seal::SealState::Absent;
        let started = Instant::now();
        let pool = pool_bytes(disk_size(path));
        let (db, open_lock) = loop {
            let open_lock = match OpenLock::take(path, access) {
                Ok(lock) => lock,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if started.elapsed() >= wait {
                        return Err(StoreError::Locked {
                            path: path.to_owned(),
                            waited: started.elapsed(),
                        });
                    }
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
                Err(e) => {
                    return Err(StoreError::Unusable {
                        path: path.to_owned(),
                        reason: format!("cannot lock it: {e}"),
                    })
                }
            };
            let config = SystemConfig::default()
                .read_only(access == Access::ReadOnly)
                .buffer_pool_size(pool)
                .max_num_threads(2);
            match Database::new(path, config) {
                Ok(db) => break (db, open_lock),
                Err(e) => {
                    let reason = e.to_string();
                    let failure = OpenFailure::of(&reason);
                    if failure == OpenFailure::Unusable {
                        return Err(StoreError::Unusable {
                            path: path.to_owned(),
                            reason,
                        });
                    }
                    if started.elapsed() >= wait {
                        return Err(if failure == OpenFailure::Replay {
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
            db: Some(db),
            path: path.to_owned(),
            access,
            unclean,
            pool,
            _open_lock: open_lock,
        };
        match access {
            Access::ReadWrite => {
                // Until this writer closes, the seal no longer vouches.
                seal::remove(path);
                store.ensure_schema()?
            }
            Access::ReadOnly => store.check_schema()?,
        }
        Ok(store)
    }

    fn conn(&self) -> Result<Connection<'_>> {
        let db = self.db.as_ref().ok_or(StoreError::Query {
            what: "connect",
            reason: "the store is closed".into(),
        })?;
        Connection::new(db).map_err(|e| StoreError::Query {
            what: "connect",
            reason: e.to_string(),
        })
    }

    fn ensure_schema(&self) -> Result<()> {
        let conn = self.conn()?;
        create_tables(&conn)?;
        match self.meta("schema")? {
            None => set_meta(&conn, "schema", SCHEMA_VERSION),
            Some(v) if v == SCHEMA_VERSION => Ok(()),
            Some(v) => Err(StoreError::Unusable {
                path: self.path.clone(),
                reason: format!("it has schema version {v}, this diffidx writes {SCHEMA_VERSION}"),
            }),
        }
    }

    /// A reader cannot create tables: a store without them (emptied or
    /// damaged) or of another version is unusable, with what to run.
    fn check_schema(&self) -> Result<()> {
        let unusable = |reason: String| StoreError::Unusable {
            path: self.path.clone(),
            reason,
        };
        match self.meta("schema") {
            Ok(Some(v)) if v == SCHEMA_VERSION => Ok(()),
            Ok(Some(v)) => Err(unusable(format!(
                "it has schema version {v}, this diffidx reads {SCHEMA_VERSION}"
            ))),
            Ok(None) => Err(unusable("it records no schema version".into())),
            Err(e) => Err(unusable(format!(
                "it holds no diffidx tables (emptied or damaged: {e})"
            ))),
        }
    }

    /// A value from the `Meta` table.
    pub fn meta(&self, key: &str) -> Result<Option<String>> {
        let conn = self.conn()?;
        let mut stmt = prepare(&conn, "MATCH (m:Meta {key: $key}) RETURN m.value")?;
        let rows = execute(&conn, "read meta", &mut stmt, vec![("key", string(key))])?;
        Ok(rows.into_iter().next().and_then(|r| as_string(&r[0])))
    }

    /// The notes commit whose notes are all loaded.
    pub fn loaded_notes_tip(&self) -> Result<Option<String>> {
        self.meta("notes_tip")
    }

    /// Whether the last writer did not close the store (see `unclean`).
    pub fn opened_unclean(&self) -> bool {
        self.unclean
    }

    /// Whether the store has grown past what its buffer pool was sized for
    /// (under four times its size, where opening again would give more): a
    /// writer that loads batch after batch opens it again, or a backfill of
    /// a large history fails partway ([`pool_bytes`]).
    pub fn outgrown(&self) -> bool {
        let size = disk_size(&self.path);
        size.saturating_mul(4) > self.pool && pool_bytes(size) > self.pool
    }

    /// Per commit in the store, how many changes it holds.
    pub fn change_counts(&self) -> Result<HashMap<String, usize>> {
        let conn = self.conn()?;
        let rows = query(
            &conn,
            "count changes per commit",
            "MATCH (c:Commit) OPTIONAL MATCH (:Symbol)-[e:CHANGED_IN]->(c) RETURN c.sha, count(e)",
        )?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                let n = engine::as_i64(&r[1]).and_then(|n| usize::try_from(n).ok())?;
                Some((as_string(&r[0])?, n))
            })
            .collect())
    }

    /// Removes these commits and what they recorded (changes, moves,
    /// lineage), in one transaction, so they can be loaded again whole.
    /// Symbols stay: loading merges them.
    pub fn forget_commits(&self, shas: &[String]) -> Result<()> {
        if shas.is_empty() {
            return Ok(());
        }
        let conn = self.conn()?;
        run(&conn, "begin", "BEGIN TRANSACTION")?;
        let statements = [
            "MATCH (:Symbol)-[e:CHANGED_IN]->(c:Commit) WHERE c.sha IN $shas DELETE e",
            "MATCH (:Symbol)-[m:MOVED_TO]->(:Symbol) WHERE m.sha IN $shas DELETE m",
            "MATCH (:Symbol)-[l:CONTINUES]->(:Symbol) WHERE l.sha IN $shas DELETE l",
            "MATCH (c:Commit) WHERE c.sha IN $shas DETACH DELETE c",
        ];
        for text in statements {
            let done = prepare(&conn, text).and_then(|mut stmt| {
                execute(
                    &conn,
                    "forget partly loaded commits",
                    &mut stmt,
                    vec![("shas", string_list(shas))],
                )
            });
            if let Err(e) = done {
                let _ = run(&conn, "rollback", "ROLLBACK");
                return Err(e);
            }
        }
        run(&conn, "commit", "COMMIT")
    }

    /// Shas of every commit in the store.
    pub fn commits(&self) -> Result<HashSet<String>> {
        let conn = self.conn()?;
        let rows = query(&conn, "list commits", "MATCH (c:Commit) RETURN c.sha")?;
        Ok(rows.iter().filter_map(|r| as_string(&r[0])).collect())
    }

    /// A connection for queries that keeps its prepared statements, for a
    /// process that answers many (the `serve` reader).
    pub fn reader(&self) -> Result<Reader<'_>> {
        Ok(Reader::new(self.conn()?))
    }
}

fn set_meta(conn: &Connection<'_>, key: &str, value: &str) -> Result<()> {
    let mut stmt = prepare(conn, "MERGE (m:Meta {key: $key}) SET m.value = $value")?;
    execute(
        conn,
        "write meta",
        &mut stmt,
        vec![("key", string(key)), ("value", string(value))],
    )?;
    Ok(())
}

/// The schema's tables, where they are missing.
fn create_tables(conn: &Connection<'_>) -> Result<()> {
    schema::CREATE
        .iter()
        .try_for_each(|statement| run(conn, "create schema", statement))
}

impl Store {
    /// Rewrites the store at `path` compactly: copied table by table into a
    /// new file (`engine::TableCopies`), checked to hold the same counts, and renamed over the old
    /// one. Kuzu keeps the pages a transaction's copy-on-write freed, so a
    /// store written in many transactions holds several times its data
    /// (sharkdp/fd's 2,005 commits: 52 MiB, 14 MiB after this). The caller
    /// holds the writer lock and has no store open. Returns the sizes before
    /// and after; on any failure the old store stays as it was.
    pub fn compact(path: &Path, wait: Duration) -> Result<(u64, u64)> {
        let before = disk_size(path);
        let unusable = |reason: String| StoreError::Unusable {
            path: path.to_owned(),
            reason,
        };
        let export = PathBuf::from(format!("{}.export", path.display()));
        let fresh = PathBuf::from(format!("{}.compact", path.display()));
        let literal = |p: &Path| -> Result<String> {
            let text = p.to_string_lossy().into_owned();
            if text.contains('\'') || text.contains('\\') {
                return Err(unusable("its path has a quote or backslash".into()));
            }
            Ok(text)
        };
        let _ = std::fs::remove_dir_all(&export);
        remove_files(&fresh, None);
        std::fs::create_dir_all(&export).map_err(|e| unusable(e.to_string()))?;
        let exported = (|| -> Result<_> {
            let store = Store::open(path, Access::ReadWrite, wait)?;
            let counts = store.counts()?;
            let conn = store.conn()?;
            let copies = engine::TableCopies::plan(&conn, &literal(&export)?)?;
            copies.export(&conn)?;
            Ok((counts, copies))
        })();
        let (counts, copies) = match exported {
            Ok(exported) => exported,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&export);
                return Err(e);
            }
        };
        // Closed cleanly, the store has no log left to replay; one that
        // is left would be replayed into the new file.
        if PathBuf::from(format!("{}.wal", path.display())).exists() {
            let _ = std::fs::remove_dir_all(&export);
            return Err(unusable(
                "its write-ahead log is still there after closing".into(),
            ));
        }
        let imported = (|| -> Result<()> {
            let db = Database::new(&fresh, SystemConfig::default().max_num_threads(2))
                .map_err(|e| unusable(e.to_string()))?;
            let conn = Connection::new(&db).map_err(|e| unusable(e.to_string()))?;
            create_tables(&conn)?;
            copies.import(&conn)
        })();
        let _ = std::fs::remove_dir_all(&export);
        let checked = imported.and_then(|()| {
            let copy = Store::open(&fresh, Access::ReadOnly, wait)?;
            let copied = copy.counts()?;
            if copied == counts {
                Ok(())
            } else {
                Err(unusable(format!(
                    "the compacted copy holds {copied:?}, not {counts:?}"
                )))
            }
        });
        // The check's open lock, which no one else knows of.
        let _ = std::fs::remove_file(format!("{}.open", fresh.display()));
        if let Err(e) = checked {
            remove_files(&fresh, None);
            return Err(e);
        }
        std::fs::rename(&fresh, path).map_err(|e| unusable(e.to_string()))?;
        remove_files(&fresh, None);
        seal::write(path);
        Ok((before, disk_size(path)))
    }
}

/// The files beside a database: the engine's log, shadow pages and
/// scratch (Kuzu's too), the log a checkpoint froze and the checkpoint's
/// locks (LadybugDB's), and the seal.
const SIDECARS: [&str; 7] = [
    ".wal",
    ".shadow",
    ".tmp",
    ".wal.checkpoint",
    ".checkpoint.intent.lock",
    ".checkpoint.apply.lock",
    seal::SUFFIX,
];

/// Removes (or moves aside, to `aside`) the store at `path` and the files
/// beside it. The store must not be open.
pub fn remove_files(path: &Path, aside: Option<&Path>) {
    for suffix in std::iter::once("").chain(SIDECARS) {
        let file = PathBuf::from(format!("{}{suffix}", path.display()));
        if !file.exists() {
            continue;
        }
        match aside {
            Some(aside) => {
                let _ = std::fs::rename(&file, format!("{}{suffix}", aside.display()));
            }
            None => {
                let _ = std::fs::remove_file(&file).or_else(|_| std::fs::remove_dir_all(&file));
            }
        }
    }
}

/// The bytes the store takes on disk (the database and its log).
pub fn disk_size(path: &Path) -> u64 {
    ["", ".wal"]
        .iter()
        .filter_map(|s| std::fs::metadata(format!("{}{s}", path.display())).ok())
        .map(|m| m.len())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::{physical_memory, pool_bytes, OpenFailure};

    #[test]
    fn the_buffer_pool_grows_with_the_store_within_half_the_memory() {
        let half = physical_memory().unwrap() / 2;
        assert_eq!(pool_bytes(0), 256 << 20, "no store yet");
        assert_eq!(pool_bytes(10 << 20), 256 << 20, "a small store");
        assert_eq!(pool_bytes(200 << 20), (1600 << 20).min(half.max(256 << 20)));
        assert_eq!(pool_bytes(1 << 40), half.max(256 << 20), "capped");
    }

    #[test]
    fn only_a_lock_a_pending_replay_or_a_vanished_log_is_waited_for() {
        let of = OpenFailure::of;
        assert_eq!(
            of("IO exception: Cannot open file /r/.git/diffidx/graph.lbdb.wal: No such file or directory"),
            OpenFailure::Busy
        );
        assert_eq!(
            of("IO exception: Could not set lock on file : /r/.git/diffidx/graph.lbdb"),
            OpenFailure::Busy
        );
        assert_eq!(
            of("Runtime exception: the shadow file must be replayed"),
            OpenFailure::Replay
        );
        // The store itself missing, or a log that cannot be read, is a real error.
        assert_eq!(
            of("IO exception: Cannot open file /r/.git/diffidx/graph.lbdb: No such file or directory"),
            OpenFailure::Unusable
        );
        assert_eq!(
            of("IO exception: Cannot open file /r/.git/diffidx/graph.lbdb.wal: Permission denied"),
            OpenFailure::Unusable
        );
    }
}
