//! The parsed-blob cache, and its sharing between the threads of one run.
//!
//! Two threads that diff one history load the versions of the same files:
//! with one cache, the new side one thread parsed is the old side the other
//! finds, and its syntax tree the base the other reparses the next version
//! from. A blob one thread is loading is waited for, not loaded twice.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use gix::ObjectId;

use super::{Loaded, ParsedBlob};
use crate::lang::{Language, ParseState};

/// A blob as the cache knows it: one blob is parsed once per language.
pub(crate) type Key = (ObjectId, Language);

/// The cache of one differ, or of the differs of one run's threads.
pub(crate) struct SharedCache {
    blobs: Mutex<BlobCache>,
    /// Signalled whenever a blob a thread was loading is in (or given up).
    loaded: Condvar,
}

/// What [`SharedCache::claim`] found: the entry, or the caller's duty to
/// load it (the claim is released when dropped, loaded or not).
pub(crate) enum Claim<'c> {
    Hit(Loaded),
    Load(LoadClaim<'c>),
}

/// A blob the holder is loading; other threads wait for it.
pub(crate) struct LoadClaim<'c> {
    cache: &'c SharedCache,
    key: Key,
}

impl SharedCache {
    /// A cache that holds about `budget` bytes (see [`BlobCache`]).
    pub(crate) fn new(budget: usize) -> Arc<SharedCache> {
        SharedCache::with_budgets(budget / 2, budget)
    }

    /// A cache whose texts and symbols take about `entries` bytes and whose
    /// syntax trees take about `trees` (see [`BlobCache`]).
    pub(crate) fn with_budgets(entries: usize, trees: usize) -> Arc<SharedCache> {
        Arc::new(SharedCache {
            blobs: Mutex::new(BlobCache::new(entries, trees)),
            loaded: Condvar::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, BlobCache> {
        // A thread that panicked holding the lock left the cache whole:
        // every change to it is made before anything can panic.
        self.blobs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The entry of `key`, if cached.
    pub(crate) fn get(&self, key: &Key) -> Option<Loaded> {
        self.lock().get(key)
    }

    /// The entry of `key`, waiting while another thread loads it; else a
    /// claim on loading it.
    pub(crate) fn claim(&self, key: Key) -> Claim<'_> {
        let mut blobs = self.lock();
        loop {
            if let Some(hit) = blobs.get(&key) {
                return Claim::Hit(hit);
            }
            if blobs.loading.insert(key) {
                return Claim::Load(LoadClaim { cache: self, key });
            }
            blobs = self
                .loaded
                .wait(blobs)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Ends a claim, keeping `value` for the blob at `path` if given.
    fn finish(&self, key: &Key, value: Option<(Loaded, &str)>) {
        let dropped = {
            let mut blobs = self.lock();
            blobs.loading.remove(key);
            if let Some((value, path)) = value {
                blobs.insert(*key, value, path);
            }
            std::mem::take(&mut blobs.dropped)
        };
        self.loaded.notify_all();
        drop(dropped);
    }

    /// Drops the entry of `key`, if cached: a version nothing will ask
    /// for again.
    pub(crate) fn forget(&self, key: &Key) {
        let dropped = {
            let mut blobs = self.lock();
            blobs.remove(key);
            std::mem::take(&mut blobs.dropped)
        };
        drop(dropped);
    }

    /// The tree of `key`, the version at `path` a next version is parsed
    /// from (see [`BlobCache::take_tree`]).
    pub(crate) fn take_tree(&self, key: Key, path: &str) -> Option<TakenTree> {
        self.lock().take_tree(&key, path)
    }
}

/// A cached tree to reparse a file's next version from.
pub(crate) enum TakenTree {
    /// Taken out of the cache: nothing else held it.
    Owned(ParseState),
    /// Still held elsewhere (the other thread reparses from it too): the
    /// entry, whose tree is to be copied.
    Shared(Arc<ParsedBlob>),
}

impl LoadClaim<'_> {
    /// Keeps the loaded blob, found at `path`, and ends the claim.
    pub(crate) fn keep(self, value: Loaded, path: &str) {
        let this = std::mem::ManuallyDrop::new(self);
        this.cache.finish(&this.key, Some((value, path)));
    }
}

impl Drop for LoadClaim<'_> {
    /// Not loaded (an error, or a side not to cache): the next to ask loads it.
    fn drop(&mut self) {
        self.cache.finish(&self.key, None);
    }
}

/// Parsed blobs by (blob id, language), evicting the least recently used half
/// when the text and symbols they hold pass their budget (in commit order,
/// half the cache's).
///
/// Syntax trees are kept apart, for the latest version parsed at each path
/// only (the base the next version of that file is parsed from
/// incrementally), and within a budget of their own (in commit order, the
/// whole cache's), the least recently used dropped first: a tree takes about 18 times its text (measured on
/// App-vNext/Polly, where the trees of every version once held most of a
/// backfill's heap). Trees get the larger share because a version whose
/// base lost its tree is parsed whole, four times slower than an
/// incremental reparse; on Polly, giving texts half and trees all instead
/// of the reverse made 2,100 more reparses incremental, cut the parse time
/// by a quarter and left the peak memory where it was.
struct BlobCache {
    entries: HashMap<Key, (Loaded, u64)>,
    /// The entry that keeps its tree, per path.
    trees: HashMap<String, Key>,
    /// Blobs a thread is loading; the others wait for them.
    loading: HashSet<Key>,
    /// Trees dropped under the lock, freed after it (freeing a tree walks it).
    dropped: Vec<ParseState>,
    clock: u64,
    bytes: usize,
    budget: usize,
    tree_bytes: usize,
    tree_budget: usize,
}

impl BlobCache {
    fn new(budget: usize, tree_budget: usize) -> BlobCache {
        BlobCache {
            entries: HashMap::new(),
            trees: HashMap::new(),
            loading: HashSet::new(),
            dropped: Vec::new(),
            clock: 0,
            bytes: 0,
            budget,
            tree_bytes: 0,
            tree_budget,
        }
    }

    fn get(&mut self, key: &Key) -> Option<Loaded> {
        self.clock += 1;
        let clock = self.clock;
        self.entries.get_mut(key).map(|(value, used)| {
            *used = clock;
            value.clone()
        })
    }

    fn insert(&mut self, key: Key, value: Loaded, path: &str) {
        if self.entries.contains_key(&key) {
            return; // entries are inserted after a miss; twice would count twice
        }
        if let Some(tree) = value.as_ref().ok().and_then(|blob| tree_weight(blob)) {
            if let Some(older) = self.trees.insert(path.to_owned(), key) {
                self.drop_tree(&older);
            }
            self.tree_bytes += tree;
        }
        self.clock += 1;
        self.bytes += weight(&value);
        self.entries.insert(key, (value, self.clock));
        let mut dropped = false;
        if self.bytes > self.budget && self.entries.len() > 1 {
            let cutoff = median(self.entries.values().map(|(_, used)| *used));
            let evicted: Vec<Key> = self
                .entries
                .iter()
                .filter(|(_, (_, used))| *used < cutoff)
                .map(|(key, _)| *key)
                .collect();
            for key in &evicted {
                self.drop_tree(key);
                self.entries.remove(key);
            }
            self.bytes = self.entries.values().map(|(v, _)| weight(v)).sum();
            dropped = true;
        }
        if self.tree_bytes > self.tree_budget && self.trees.len() > 1 {
            let entries = &self.entries;
            let age = |key: &Key| entries.get(key).map_or(0, |(_, used)| *used);
            let cutoff = median(self.trees.values().map(age));
            let old: Vec<Key> = self
                .trees
                .values()
                .filter(|key| age(key) < cutoff)
                .copied()
                .collect();
            for key in &old {
                self.drop_tree(key);
            }
            dropped = true;
        }
        if dropped {
            let entries = &self.entries;
            self.trees
                .retain(|_, key| matches!(entries.get(key), Some((Ok(b), _)) if b.state.is_some()));
        }
    }

    fn remove(&mut self, key: &Key) {
        self.drop_tree(key);
        if let Some((value, _)) = self.entries.remove(key) {
            self.bytes = self.bytes.saturating_sub(weight(&value));
            self.trees.retain(|_, kept| kept != key);
        }
    }

    /// Keeps an entry's text and symbols, without its tree.
    fn drop_tree(&mut self, key: &Key) {
        let Some((Ok(blob), _)) = self.entries.get_mut(key) else {
            return;
        };
        let Some(weight) = tree_weight(blob) else {
            return;
        };
        self.tree_bytes = self.tree_bytes.saturating_sub(weight);
        // Held by the cache alone (the usual case), the tree goes in place;
        // else (the base of the parse that replaces it) the entry becomes a
        // copy without it, and the tree goes with the last holder.
        match Arc::get_mut(blob) {
            Some(only) => self.dropped.extend(only.state.take()),
            None => *blob = ParsedBlob::without_tree(blob),
        }
    }

    /// The tree of `key`, the version at `path` a next version is parsed
    /// from: taken out of its entry when the cache is its only holder, so
    /// that it can be edited in place (the cache would drop it for the next
    /// version's anyway), else the entry. `None` when it has none.
    fn take_tree(&mut self, key: &Key, path: &str) -> Option<TakenTree> {
        let Some((Ok(blob), _)) = self.entries.get_mut(key) else {
            return None;
        };
        let weight = tree_weight(blob)?;
        let Some(only) = Arc::get_mut(blob) else {
            return Some(TakenTree::Shared(Arc::clone(blob)));
        };
        let state = only.state.take()?;
        self.tree_bytes = self.tree_bytes.saturating_sub(weight);
        if self.trees.get(path) == Some(key) {
            self.trees.remove(path);
        }
        Some(TakenTree::Owned(state))
    }
}

/// The middle of some ages (0 for none).
fn median(ages: impl Iterator<Item = u64>) -> u64 {
    let mut ages: Vec<u64> = ages.collect();
    ages.sort_unstable();
    ages.get(ages.len() / 2).copied().unwrap_or(0)
}

/// The room an entry's text and symbols take.
fn weight(value: &Loaded) -> usize {
    match value {
        Ok(blob) => {
            blob.text.len() + blob.symbols.symbols.len() * (160 + 4 * crate::symbol::SKETCH_SIZE)
        }
        Err(_) => 64,
    }
}

/// The room a blob's syntax tree takes, if it has one.
fn tree_weight(blob: &ParsedBlob) -> Option<usize> {
    blob.state.as_ref().map(|s| s.weight(blob.text.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Unreadable;

    fn key(byte: u8) -> Key {
        (
            ObjectId::from([byte; 20]),
            Language::from_path("a.cs").expect("C# is known"),
        )
    }

    #[test]
    fn a_forgotten_version_is_gone_and_gives_its_room_back() {
        let cache = SharedCache::with_budgets(1 << 20, 1 << 20);
        for byte in 1..=3 {
            let Claim::Load(claim) = cache.claim(key(byte)) else {
                panic!("an empty cache holds nothing");
            };
            claim.keep(Err(Unreadable::Binary), "a.cs");
        }
        assert_eq!(cache.lock().bytes, 3 * 64);
        cache.forget(&key(2));
        assert!(cache.get(&key(2)).is_none(), "forgotten");
        assert!(cache.get(&key(1)).is_some() && cache.get(&key(3)).is_some());
        assert_eq!(cache.lock().bytes, 2 * 64, "its room is free again");
        cache.forget(&key(9)); // never cached: nothing happens
        assert_eq!(cache.lock().entries.len(), 2);
    }
}
