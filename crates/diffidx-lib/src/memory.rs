//! Handing freed memory back to the system once a run's diffing ends.
//!
//! An allocator keeps pages a program freed for a while, to serve the next
//! allocations without asking the system again (jemalloc, as the binary
//! configures it, for half a second). At the end of a backfill's diffing
//! the parse cache is freed at once, and the store's load that follows
//! allocates on Kuzu's own threads and size classes: the freed pages and the
//! load's were resident together (App-vNext/Polly: 190 MiB of freed pages
//! under the load, which made the run's peak). The phases after it (the
//! load, the code graph, the search index) allocate and free tens of MiB
//! in a few large blocks each (a `COPY`'s columns), so keeping freed pages
//! for half a second there only stacks one block's pages under the next;
//! from then on they go back as they are freed. The library does not know
//! the allocator, so the binary registers how ([`set_release`]) and a run
//! calls [`release_from_now_on`] when its diffing has ended.

use std::sync::OnceLock;

static RELEASE: OnceLock<fn()> = OnceLock::new();

/// Registers how the process's allocator returns the pages it holds free to
/// the system and returns each page as soon as it is freed from then on.
/// The first registration holds; without one, [`release_from_now_on`] does
/// nothing.
pub fn set_release(release: fn()) {
    let _ = RELEASE.set(release);
}

/// Returns the pages the allocator holds free to the system, and from now
/// on every page as soon as it is freed, if the process said how
/// ([`set_release`]). For the end of a phase that allocated many small
/// blocks, before phases that allocate few large ones.
pub fn release_from_now_on() {
    if let Some(release) = RELEASE.get() {
        release();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    static CALLS: AtomicUsize = AtomicUsize::new(0);

    fn count() {
        CALLS.fetch_add(1, Ordering::SeqCst);
    }

    #[test]
    fn release_calls_what_was_registered_first() {
        super::set_release(count);
        super::set_release(|| panic!("a second registration must not replace the first"));
        super::release_from_now_on();
        super::release_from_now_on();
        assert_eq!(CALLS.load(Ordering::SeqCst), 2);
    }
}
