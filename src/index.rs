//! Indexing: commits → notes (the source of truth) → store (the cache).
//!
//! Order matters for crash safety: notes are written first, in one notes
//! commit per batch, then loaded into the store in one transaction. A run
//! killed at any point leaves notes that are complete for every commit they
//! name; the next run loads whatever the store is missing from the notes and
//! carries on. One writer at a time: the lock is an OS file lock, released by
//! the kernel even when a writer is killed.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

use diffidx_core::git::notes::{NoteBytes, Notes};
use diffidx_core::git::{CommitInfo, Repo};
use diffidx_core::note::MAX_NOTE_BYTES;
use diffidx_core::ObjectId;
use diffidx_core::{CommitRecord, DiffOptions, NoteDocument, SymbolDiffer};

use crate::store::{store_path, Access, Store, StoreError};

/// Commits written per notes commit and store transaction.
pub const BATCH: usize = 1000;

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error(transparent)]
    Core(#[from] diffidx_core::Error),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot use {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("another diffidx is indexing this repository")]
    Busy,
}

type Result<T, E = IndexError> = std::result::Result<T, E>;

/// `.git/diffidx/`: the store, the lock, the hook log.
pub fn state_dir(repo: &Repo) -> PathBuf {
    repo.common_dir().join("diffidx")
}

/// The writer lock. Dropping it releases it.
pub struct WriterLock {
    _file: File,
}

impl WriterLock {
    /// Takes the lock, waiting for another writer when `wait` is true.
    pub fn acquire(dir: &Path, wait: bool) -> Result<WriterLock> {
        std::fs::create_dir_all(dir).map_err(|source| IndexError::Io {
            path: dir.to_owned(),
            source,
        })?;
        let path = dir.join("index.lock");
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|source| IndexError::Io {
                path: path.clone(),
                source,
            })?;
        if wait {
            file.lock()
                .map_err(|source| IndexError::Io { path, source })?;
        } else if let Err(e) = file.try_lock() {
            return match e {
                std::fs::TryLockError::WouldBlock => Err(IndexError::Busy),
                std::fs::TryLockError::Error(source) => Err(IndexError::Io { path, source }),
            };
        }
        Ok(WriterLock { _file: file })
    }
}

/// What to index.
#[derive(Debug, Clone, Default)]
pub struct IndexOptions {
    /// Tips to walk back from (default `HEAD`); `A..B` excludes what A reaches.
    pub revs: Vec<String>,
    /// Do not index commits older than this (seconds since the epoch).
    pub since: Option<i64>,
    pub diff: DiffOptions,
}

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexReport {
    /// Commits whose note this run computed.
    pub computed: usize,
    /// Commits whose existing note (from an earlier run or a remote) was used.
    pub imported: usize,
    /// Notes that failed validation and were recomputed: (commit, reason).
    pub rejected: Vec<(String, String)>,
    /// Commits loaded into the store.
    pub loaded: usize,
    /// Commits at a shallow clone's boundary, skipped (their parent is missing).
    pub shallow: Vec<String>,
    pub notes_commits: usize,
}

/// Progress callbacks for a terminal front end.
pub trait Progress {
    fn start(&mut self, _total: usize) {}
    fn advance(&mut self, _done: usize) {}
}

impl Progress for () {}

/// Indexes every commit reachable from the options' revisions that has no
/// note yet (oldest first), after bringing the store up to date with the
/// notes (a crash, a fetch, a rebuild).
pub fn index(
    repo: &Repo,
    options: &IndexOptions,
    progress: &mut dyn Progress,
) -> Result<IndexReport> {
    let _lock = WriterLock::acquire(&state_dir(repo), true)?;
    index_locked_with(repo, options, progress)
}

fn index_locked(repo: &Repo, options: &IndexOptions) -> Result<IndexReport> {
    index_locked_with(repo, options, &mut ())
}

fn index_locked_with(
    repo: &Repo,
    options: &IndexOptions,
    progress: &mut dyn Progress,
) -> Result<IndexReport> {
    let mut report = IndexReport::default();
    let mut notes = repo.notes()?;
    import_remote_notes(repo, &mut notes, &mut report)?;
    let mut differ = SymbolDiffer::new(repo, options.diff.clone())?;
    sync_from_notes(&mut notes, &mut differ, &mut report)?;

    // Notes made elsewhere may cover parts of history only: then walk all of
    // it once instead of trusting that a noted commit's ancestors are noted.
    let trust_noted = report.imported == 0 && report.rejected.is_empty();
    let (todo, shallow) = commits_to_index(repo, &mut notes, options, trust_noted)?;
    report.shallow = shallow;
    progress.start(todo.len());
    let mut batch: Vec<CommitRecord> = Vec::new();
    for (done, commit) in todo.iter().enumerate() {
        let record = differ.commit_record(commit)?;
        notes.stage(commit.id, &record.note.to_json())?;
        report.computed += 1;
        batch.push(record);
        if batch.len() >= BATCH {
            flush(repo, &mut notes, &mut batch, &mut report)?;
        }
        progress.advance(done + 1);
    }
    flush(repo, &mut notes, &mut batch, &mut report)?;
    Ok(report)
}

/// Copies into our notes the notes fetched from remotes
/// (`refs/notes/diffidx-remote/*`, see `init --share`) for commits we have
/// and have no note for, after validating each; invalid ones are reported
/// and left behind (the commits get computed instead). Notes computed by the
/// same version for the same commit are identical, so nothing conflicts.
fn import_remote_notes(repo: &Repo, notes: &mut Notes<'_>, report: &mut IndexReport) -> Result<()> {
    for name in repo.remote_notes_refs()? {
        let mut theirs = repo.notes_at(&name)?;
        for (commit, _) in theirs.list()? {
            if !repo.gix().has_object(commit) || notes.get_id(commit)?.is_some() {
                continue;
            }
            let info = repo.commit(commit)?;
            match read_note(&mut theirs, &info)? {
                Some(Ok(note)) => notes.stage(commit, &note.to_json())?,
                Some(Err(reason)) => report
                    .rejected
                    .push((commit.to_string(), format!("{reason} (from {name})"))),
                None => {}
            }
        }
    }
    if notes.staged() > 0 {
        notes.commit("diffidx: import notes fetched from remotes")?;
        report.notes_commits += 1;
    }
    Ok(())
}

/// Loads into the store every noted commit it lacks. Notes are untrusted
/// (they may come from a remote): a valid one is loaded as it is, an invalid
/// one is reported and its commit recomputed, replacing the note.
fn sync_from_notes(
    notes: &mut Notes<'_>,
    differ: &mut SymbolDiffer<'_>,
    report: &mut IndexReport,
) -> Result<()> {
    let repo = differ.repo();
    let tip = notes.tip().map(|t| t.to_string());
    let store = open_store_for_writing(repo)?;
    if tip.is_none() || store.loaded_notes_tip()? == tip {
        return Ok(());
    }
    let have = store.commits()?;
    drop(store);
    let mut records = Vec::new();
    for (commit, _) in notes.list()? {
        if have.contains(&commit.to_string()) {
            continue;
        }
        let Ok(info) = repo.commit(commit) else {
            continue; // a note for a commit this clone does not have
        };
        match read_note(notes, &info)? {
            Some(Ok(note)) => {
                let files = differ.snapshot_files(&info, &note)?;
                records.push(CommitRecord { info, note, files });
                report.imported += 1;
            }
            Some(Err(reason)) => {
                report.rejected.push((commit.to_string(), reason));
                if info.parents.iter().any(|p| !repo.gix().has_object(*p)) {
                    continue; // a shallow boundary: cannot be recomputed here
                }
                let record = differ.commit_record(&info)?;
                notes.stage(commit, &record.note.to_json())?;
                report.computed += 1;
                records.push(record);
            }
            None => {}
        }
    }
    records.sort_by_key(|r| (r.info.time, r.info.id));
    let mut batch = Vec::new();
    for record in records {
        batch.push(record);
        if batch.len() >= BATCH {
            flush(repo, notes, &mut batch, report)?;
        }
    }
    flush(repo, notes, &mut batch, report)?;
    // Nothing was staged: record the tip as loaded all the same.
    let tip = notes.tip().map(|t| t.to_string());
    let store = open_store_for_writing(repo)?;
    if store.loaded_notes_tip()? != tip {
        store.load(&[], tip.as_deref())?;
    }
    Ok(())
}

/// Writes the staged notes (one notes commit), then loads the batch into the
/// store, which is held open only for that.
fn flush(
    repo: &Repo,
    notes: &mut Notes<'_>,
    batch: &mut Vec<CommitRecord>,
    report: &mut IndexReport,
) -> Result<()> {
    if batch.is_empty() && notes.staged() == 0 {
        return Ok(());
    }
    let message = format!("diffidx: index {} commits", batch.len());
    if notes.commit(&message)?.is_some() {
        report.notes_commits += 1;
    }
    let tip = notes.tip().map(|t| t.to_string());
    open_store_for_writing(repo)?.load(batch, tip.as_deref())?;
    report.loaded += batch.len();
    batch.clear();
    Ok(())
}

/// Opens the store read-write; a store that cannot be opened (corrupt, or of
/// another schema) is moved aside and recreated, to be refilled from the notes.
fn open_store_for_writing(repo: &Repo) -> Result<Store> {
    let path = store_path(&repo.common_dir());
    match open_read_write(repo, &path, Duration::from_secs(30)) {
        Ok(store) => Ok(store),
        Err(StoreError::Unusable { .. }) => {
            let aside = path.with_extension(format!(
                "broken-{}",
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or(0)
            ));
            remove_store_files(&path, Some(&aside));
            Ok(open_read_write(repo, &path, Duration::from_secs(30))?)
        }
        Err(e) => Err(e.into()),
    }
}

/// Opens the store read-write, retrying for up to `wait` while it is in use.
/// Kuzu refuses a writer while anyone reads, so before every attempt a query
/// server (`serve`) holding the store open is asked to close it.
fn open_read_write(repo: &Repo, path: &Path, wait: Duration) -> Result<Store, StoreError> {
    let dir = state_dir(repo);
    let started = std::time::Instant::now();
    loop {
        crate::serve::release(&dir);
        match Store::open(path, Access::ReadWrite, Duration::ZERO) {
            Err(StoreError::Locked { .. }) if started.elapsed() < wait => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(StoreError::Locked { path, .. }) => {
                return Err(StoreError::Locked {
                    path,
                    waited: started.elapsed(),
                })
            }
            other => return other,
        }
    }
}

/// Opens the store for reading, waiting for a writer for up to `wait`. When
/// no writer is running but one left changes to replay (it was killed), this
/// replays them, as a writer under the writer lock, and opens again.
pub fn open_for_reading(repo: &Repo, wait: Duration) -> Result<Store> {
    let path = store_path(&repo.common_dir());
    let started = std::time::Instant::now();
    loop {
        let error = match Store::open(&path, Access::ReadOnly, Duration::ZERO) {
            Ok(store) => return Ok(store),
            Err(StoreError::NeedsReplay { .. }) => {
                match WriterLock::acquire(&state_dir(repo), false) {
                    Ok(_lock) => {
                        drop(Store::open(&path, Access::ReadWrite, wait)?);
                        continue;
                    }
                    Err(IndexError::Busy) => StoreError::NeedsReplay { path: path.clone() },
                    Err(e) => return Err(e),
                }
            }
            Err(e @ StoreError::Locked { .. }) => e,
            Err(e) => return Err(e.into()),
        };
        if started.elapsed() >= wait {
            return Err(error.into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Removes (or moves aside) a store and its write-ahead log.
pub fn remove_store_files(path: &Path, aside: Option<&Path>) {
    for suffix in ["", ".wal", ".shadow", ".tmp"] {
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

/// The validated note of `commit`: `None` without a note, `Some(Err(reason))`
/// when the note is malformed or oversized.
pub fn read_note(
    notes: &mut Notes<'_>,
    commit: &CommitInfo,
) -> Result<Option<Result<NoteDocument, String>>> {
    let parent = commit.parents.first().map(|p| p.to_string());
    Ok(match notes.get(commit.id, MAX_NOTE_BYTES)? {
        None => None,
        Some(NoteBytes::TooLarge { size, .. }) => Some(Err(format!(
            "the note is {size} bytes, over the {MAX_NOTE_BYTES}-byte limit"
        ))),
        Some(NoteBytes::Read { bytes, .. }) => Some(NoteDocument::from_untrusted(
            &bytes,
            &commit.id.to_string(),
            parent.as_deref(),
        )),
    })
}

/// The commits to index, oldest first (parents before children), and the
/// shallow-boundary commits that cannot be. Walks back from the tips and
/// stops at commits older than `since`, excluded by `A..B`, or (when
/// `trust_noted`) that already have a note, since this clone noted their
/// ancestors before them.
fn commits_to_index(
    repo: &Repo,
    notes: &mut Notes<'_>,
    options: &IndexOptions,
    trust_noted: bool,
) -> Result<(Vec<CommitInfo>, Vec<String>)> {
    let revs = if options.revs.is_empty() {
        vec!["HEAD".to_owned()]
    } else {
        options.revs.clone()
    };
    let mut tips = Vec::new();
    let mut excluded: HashSet<ObjectId> = HashSet::new();
    for rev in &revs {
        if let Some((a, b)) = rev.split_once("..") {
            let b = b.trim_start_matches('.');
            let base = repo.resolve_commit(if a.is_empty() { "HEAD" } else { a })?;
            excluded.extend(ancestors(repo, base)?);
            tips.push(repo.resolve_commit(if b.is_empty() { "HEAD" } else { b })?);
        } else {
            match repo.resolve_commit(rev) {
                Ok(tip) => tips.push(tip),
                // Nothing to index yet: the hooks will index the first commit.
                Err(diffidx_core::Error::EmptyRepository) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
    let mut seen: HashMap<ObjectId, CommitInfo> = HashMap::new();
    let mut shallow = Vec::new();
    let mut stack: Vec<ObjectId> = tips.clone();
    let mut visited: HashSet<ObjectId> = HashSet::new();
    while let Some(id) = stack.pop() {
        if excluded.contains(&id) || !visited.insert(id) || !repo.gix().has_object(id) {
            continue;
        }
        let noted = notes.get_id(id)?.is_some();
        if noted && trust_noted {
            continue;
        }
        let info = repo.commit(id)?;
        if options.since.is_some_and(|since| info.time < since) {
            continue;
        }
        if noted {
            stack.extend(info.parents.iter().copied());
            continue;
        }
        if info.parents.iter().any(|p| !repo.gix().has_object(*p)) {
            shallow.push(id.to_string());
            continue;
        }
        stack.extend(info.parents.iter().copied());
        seen.insert(id, info);
    }
    Ok((topological(seen, &tips), shallow))
}

/// Every commit reachable from `tip`.
fn ancestors(repo: &Repo, tip: ObjectId) -> Result<HashSet<ObjectId>> {
    let mut out = HashSet::new();
    let mut stack = vec![tip];
    while let Some(id) = stack.pop() {
        if !repo.gix().has_object(id) || !out.insert(id) {
            continue;
        }
        stack.extend(repo.commit(id)?.parents);
    }
    Ok(out)
}

/// Orders commits so that every parent comes before its children. Commits
/// not reachable from a tip through the set itself (the set may have holes
/// where commits are already noted) are ordered from the oldest.
fn topological(mut commits: HashMap<ObjectId, CommitInfo>, tips: &[ObjectId]) -> Vec<CommitInfo> {
    let mut starts: Vec<ObjectId> = tips.to_vec();
    let mut rest: Vec<(i64, ObjectId)> = commits.values().map(|c| (c.time, c.id)).collect();
    rest.sort();
    starts.extend(rest.into_iter().map(|(_, id)| id));
    let mut out = Vec::with_capacity(commits.len());
    // Iterative post-order DFS.
    for start in starts {
        let mut stack = vec![(start, false)];
        while let Some((id, expanded)) = stack.pop() {
            if expanded {
                if let Some(info) = commits.remove(&id) {
                    out.push(info);
                }
                continue;
            }
            let Some(info) = commits.get(&id) else {
                continue;
            };
            stack.push((id, true));
            for parent in info.parents.iter().rev() {
                if commits.contains_key(parent) {
                    stack.push((*parent, false));
                }
            }
        }
    }
    out
}

/// Recreates the store from the notes alone (no commit is recomputed unless
/// its note fails validation).
pub fn rebuild(repo: &Repo, diff: &DiffOptions) -> Result<IndexReport> {
    let dir = state_dir(repo);
    let _lock = WriterLock::acquire(&dir, true)?;
    crate::serve::release(&dir); // a query server must not hold the files we delete
    remove_store_files(&store_path(&repo.common_dir()), None);
    let mut report = IndexReport::default();
    let mut notes = repo.notes()?;
    let mut differ = SymbolDiffer::new(repo, diff.clone())?;
    sync_from_notes(&mut notes, &mut differ, &mut report)?;
    Ok(report)
}

/// Commits reachable from HEAD without a note (outside the backfill window
/// too), looking at no more than `limit` commits. Returns (count, complete).
pub fn unindexed_count(repo: &Repo, limit: usize) -> Result<(usize, bool)> {
    let mut notes = repo.notes()?;
    let head = match repo.resolve_commit("HEAD") {
        Ok(head) => head,
        Err(diffidx_core::Error::EmptyRepository) => return Ok((0, true)),
        Err(e) => return Err(e.into()),
    };
    let mut seen = HashSet::new();
    let mut unindexed = 0;
    let mut stack = vec![head];
    while let Some(id) = stack.pop() {
        if seen.len() >= limit {
            return Ok((unindexed, false));
        }
        if !repo.gix().has_object(id) || !seen.insert(id) {
            continue;
        }
        if notes.get_id(id)?.is_none() {
            unindexed += 1;
        }
        stack.extend(repo.commit(id)?.parents);
    }
    Ok((unindexed, true))
}

/// The last error a background (hook) run recorded, if the latest run failed.
pub fn last_error(repo: &Repo) -> Option<String> {
    std::fs::read_to_string(state_dir(repo).join("last-error"))
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

/// What a hook runs, in the background: index, handing over to a running
/// writer instead of waiting for it. A run that finds the lock taken leaves a
/// `pending` mark; the writer checks for it after releasing the lock and runs
/// again, so every commit ends up indexed and no run ever waits or fails
/// visibly. Errors go to `.git/diffidx/hook.log` and `last-error`.
pub fn run_for_hook(repo: &Repo, options: &IndexOptions) -> Result<()> {
    let dir = state_dir(repo);
    std::fs::create_dir_all(&dir).map_err(|source| IndexError::Io {
        path: dir.clone(),
        source,
    })?;
    let pending = dir.join("pending");
    let _ = std::fs::write(&pending, b"");
    loop {
        let lock = match WriterLock::acquire(&dir, false) {
            Ok(lock) => lock,
            Err(IndexError::Busy) => return Ok(()), // the writer will see `pending`
            Err(e) => return Err(e),
        };
        let _ = std::fs::remove_file(&pending);
        let result = index_locked(repo, options);
        drop(lock);
        // Credentials present: push as well; failures are logged, never shown.
        if result.is_ok() {
            if let Ok(Some(config)) = crate::sync::Neo4jConfig::from_env(repo) {
                if let Err(e) = crate::sync::push(repo, &config) {
                    log_line(&dir, &format!("push failed: {e}"));
                }
            }
        }
        log_hook_run(&dir, &result);
        result?;
        if !pending.exists() {
            return Ok(());
        }
    }
}

fn log_line(dir: &Path, line: &str) {
    use std::io::Write;
    if let Ok(mut f) = File::options()
        .create(true)
        .append(true)
        .open(dir.join("hook.log"))
    {
        let _ = writeln!(f, "{line}");
    }
}

fn log_hook_run(dir: &Path, result: &Result<IndexReport>) {
    use std::io::Write;
    let log = dir.join("hook.log");
    if std::fs::metadata(&log).is_ok_and(|m| m.len() > 1024 * 1024) {
        let _ = std::fs::rename(&log, dir.join("hook.log.old"));
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let line = match result {
        Ok(r) => format!(
            "{now} ok: {} computed, {} imported, {} loaded\n",
            r.computed, r.imported, r.loaded
        ),
        Err(e) => format!("{now} error: {e}\n"),
    };
    if let Ok(mut f) = File::options().create(true).append(true).open(&log) {
        let _ = f.write_all(line.as_bytes());
    }
    match result {
        Ok(_) => {
            let _ = std::fs::remove_file(dir.join("last-error"));
        }
        Err(e) => {
            let _ = std::fs::write(dir.join("last-error"), format!("{e}\n"));
        }
    }
}

/// `init --share`: makes `git fetch REMOTE` bring the remote's notes into
/// `refs/notes/diffidx-remote/REMOTE`, from where `index` imports them.
/// Returns false when the refspec was already configured.
pub fn share_via(repo: &Repo, remote: &str) -> Result<bool> {
    let refspec = format!(
        "+refs/notes/diffidx:{}{remote}",
        diffidx_core::git::notes::REMOTE_NOTES_PREFIX
    );
    let key = format!("remote.{remote}.fetch");
    let dir = repo.work_dir().unwrap_or_else(|| repo.common_dir());
    let current = std::process::Command::new("git")
        .args(["config", "--get-all", &key])
        .current_dir(&dir)
        .output()
        .map_err(|source| IndexError::Io {
            path: dir.clone(),
            source,
        })?;
    if String::from_utf8_lossy(&current.stdout)
        .lines()
        .any(|l| l == refspec)
    {
        return Ok(false);
    }
    let status = std::process::Command::new("git")
        .args(["config", "--add", &key, &refspec])
        .current_dir(&dir)
        .status()
        .map_err(|source| IndexError::Io {
            path: dir.clone(),
            source,
        })?;
    if !status.success() {
        return Err(IndexError::Io {
            path: dir,
            source: std::io::Error::other(format!("`git config --add {key} {refspec}` failed")),
        });
    }
    Ok(true)
}
