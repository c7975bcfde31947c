//! The store handle of one index run, closed while a long diffing needs
//! none of it.
//!
//! Why: an open Kuzu database holds about 40 MiB however little it stores
//! (the hash indexes of its seven keyed node tables, 256 parts each), and a
//! backfill's diffing runs for seconds to minutes between reading which
//! commits are stored and loading the first batch. Closing costs a
//! checkpoint and the seal's hash of the store's bytes, and opening again a
//! few milliseconds: nothing beside a long run, too much for a hook's. So
//! only a run of [`CLOSE_AFTER`] commits or more closes it, and opens it again
//! for its first load; after that it stays open to the end of the run, or
//! until the store outgrows the buffer pool it was opened with (a backfill
//! of a large history: the pool is sized by the store, see
//! `Store::outgrown`).

use super::Result;
use crate::open;
use crate::state::StateDir;
use crate::store::Store;

/// Runs of at least this many commits close the store while they diff.
const CLOSE_AFTER: usize = super::PACK_AFTER;

pub(super) struct RunStore<'s> {
    state: &'s StateDir,
    store: Option<Store>,
}

impl<'s> RunStore<'s> {
    /// The store, opened for writing (the caller holds the writer lock).
    pub(super) fn open(state: &'s StateDir) -> Result<RunStore<'s>> {
        Ok(RunStore {
            state,
            store: Some(open::for_writing(state)?),
        })
    }

    /// The store, opened again if [`RunStore::close_for`] closed it or it
    /// has outgrown its buffer pool.
    pub(super) fn get(&mut self) -> Result<&Store> {
        let store = match self.store.take() {
            Some(store) if !store.outgrown() => store,
            // Closed first: one writer at a time.
            Some(outgrown) => {
                drop(outgrown);
                open::again_for_writing(self.state)?
            }
            None => open::again_for_writing(self.state)?,
        };
        Ok(self.store.insert(store))
    }

    /// Closes the store (checkpointed and sealed) if a run of `commits` is
    /// long enough to gain from it; [`RunStore::get`] opens it again.
    pub(super) fn close_for(&mut self, commits: usize) {
        if commits >= CLOSE_AFTER {
            self.store = None;
        }
    }
}
