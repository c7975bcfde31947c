//! Handing freed memory back to the system where a run's phase ends.
//!
//! An allocator keeps pages a program freed for a while, to serve the next
//! allocations without asking the system again (jemalloc, as the binary
//! configures it, for half a second). At the end of a backfill's diffing
//! the parse cache is freed at once, and the store's load that follows
//! allocates on Kuzu's own threads and size classes: the freed pages and the
//! load's were resident together (App-vNext/Polly: 190 MiB of freed pages
//! under the load, which made the run's peak). The library does not know
//! the allocator, so the binary registers how to release ([`set_release`])
//! and a run calls [`release`] where a phase has freed much.

use std::sync::OnceLock;

static RELEASE: OnceLock<fn()> = OnceLock::new();

/// Registers how the process's allocator returns freed pages to the system.
/// The first registration holds; without one, [`release`] does nothing.
pub fn set_release(release: fn()) {
    let _ = RELEASE.set(release);
}

/// Returns the pages the allocator holds free to the system, if the
/// process said how ([`set_release`]).
pub fn release() {
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
        super::release();
        super::release();
        assert_eq!(CALLS.load(Ordering::SeqCst), 2);
    }
}
