//! Opening the store the way every command must: writers first ask the
//! query server to let go of it, a store that cannot be opened is set aside
//! and refilled from the notes, and readers recover what a killed writer
//! left behind (as a writer, under the writer lock).

use std::time::{Duration, Instant};

use diffidx_core::git::Repo;

use crate::state::{StateDir, StateError, Wait, WriterLock};
use crate::store::{self, Access, Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    State(#[from] StateError),
}

/// How long a command waits for another process to let go of the store.
pub const WAIT: Duration = Duration::from_secs(30);

/// Opens the store read-write (the caller holds the writer lock). A store
/// that cannot be opened (corrupt, of another schema, or changed since its
/// seal) is moved aside and recreated, to be refilled from the notes.
pub fn for_writing(state: &StateDir) -> Result<Store, StoreError> {
    retire_old_stores(state);
    // A file changed behind diffidx's back may crash the engine on open:
    // it is set aside before anything reads it.
    let opened = if store::seal::check_quickly(&state.store()) == store::seal::SealState::Differs {
        Err(StoreError::Unusable {
            path: state.store(),
            reason: "its bytes changed since diffidx wrote it".into(),
        })
    } else {
        read_write(state, WAIT)
    };
    match opened {
        Err(StoreError::Unusable { .. }) => {
            let path = state.store();
            let stamp = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            // Only the latest broken store is kept, for a post-mortem.
            if let Some(dir) = path.parent() {
                for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                    if entry
                        .file_name()
                        .to_string_lossy()
                        .starts_with("graph.broken-")
                    {
                        let _ = std::fs::remove_file(entry.path())
                            .or_else(|_| std::fs::remove_dir_all(entry.path()));
                    }
                }
            }
            store::remove_files(&path, Some(&path.with_extension(format!("broken-{stamp}"))));
            read_write(state, WAIT)
        }
        other => other,
    }
}

/// Removes the stores an earlier engine wrote: a cache of the notes like
/// this one, which the new engine cannot read (a run with none loaded
/// refills the new store from the notes). Kept, they would only take disk.
fn retire_old_stores(state: &StateDir) {
    for old in state.retired_stores() {
        if old.exists() {
            store::remove_files(&old, None);
            let _ = std::fs::remove_file(format!("{}.compacted", old.display()));
            state.log(&format!(
                "removed {}, a store of an earlier engine; the notes refill {}",
                old.display(),
                state.store().display()
            ));
        }
    }
}

/// Opens again, read-write, a store this writer closed cleanly during its
/// run (the caller holds the writer lock): the query server is asked to let
/// go as for [`for_writing`], but a store that cannot be opened is an error,
/// not set aside, since the run has read from it what it relies on.
pub fn again_for_writing(state: &StateDir) -> Result<Store, StoreError> {
    read_write(state, WAIT)
}

/// Opens the store read-write, retrying for up to `wait` while it is in use.
/// The engine refuses a writer while anyone reads, so before every attempt a query
/// server holding the store open is asked to close it.
fn read_write(state: &StateDir, wait: Duration) -> Result<Store, StoreError> {
    let started = Instant::now();
    loop {
        if let crate::client::Released::Killed { pid, stopped } =
            crate::client::release(&state.socket())
        {
            let why = if stopped {
                "was stopped"
            } else {
                "did not answer"
            };
            state.log(&format!(
                "killed the query server (pid {pid}): it {why} and held the store"
            ));
        }
        match Store::open(&state.store(), Access::ReadWrite, Duration::ZERO) {
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
pub fn for_reading(repo: &Repo, wait: Duration) -> Result<Store, OpenError> {
    let state = StateDir::of(repo);
    let path = state.store();
    let started = Instant::now();
    loop {
        let error = match Store::open(&path, Access::ReadOnly, Duration::ZERO) {
            Ok(store) => return Ok(store),
            Err(StoreError::NeedsReplay { .. }) => {
                match WriterLock::acquire(&state, Wait::No, &mut |_| {}) {
                    Ok(_lock) => {
                        drop(Store::open(&path, Access::ReadWrite, wait)?);
                        continue;
                    }
                    Err(StateError::Busy { .. }) => StoreError::NeedsReplay { path: path.clone() },
                    Err(e) => return Err(e.into()),
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

/// Opens the store read-only once, without waiting or recovering (the query
/// server, which must never take the writer lock).
pub fn read_only_now(state: &StateDir) -> Result<Store, StoreError> {
    Store::open(&state.store(), Access::ReadOnly, Duration::ZERO)
}
