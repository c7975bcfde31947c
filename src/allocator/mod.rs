//! The process's allocator: jemalloc on Linux (glibc), for every allocation
//! of the process, since the unprefixed build also answers the `malloc` of
//! tree-sitter's C and the store engine's C++.
//!
//! Why: a backfill allocates and frees syntax trees, tokens and rows by the
//! million on two diffing threads beside the store's own. glibc's malloc
//! spent about 15% of the run in its own bookkeeping (consolidating fast
//! bins, unlinking chunks) and kept freed memory in per-thread arenas. On
//! App-vNext/Polly's whole history (2,942 commits) jemalloc with the options
//! below indexes 9% faster at 20% less peak memory (docs/performance-log.md).
//!
//! The options: two arenas (the diffing threads and the writer share them
//! instead of each keeping its own free pages), and freed pages go back to
//! the system after half a second instead of ten. `MALLOC_CONF` in the
//! environment still overrides them, as jemalloc documents.
//!
//! Half a second is long at the end of a phase that frees most of what it
//! held (a backfill's parse cache, before the store's load), and for the
//! phases after it, which free a few large blocks each: there the library
//! asks for freed pages back at once, and from then on as they are freed
//! ([`register_release`], `diffidx_lib::memory`).
//!
//! Syntax trees are allocated in an arena of their own ([`syntax_trees`]).

pub mod syntax_trees;

#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's compiled-in default options: a NUL-terminated string behind
/// the `malloc_conf` symbol, which jemalloc reads once, at its first use.
#[repr(transparent)]
pub struct MallocConf(*const std::ffi::c_char);

// SAFETY: the pointer is to a static, immutable string.
unsafe impl Sync for MallocConf {}

#[used]
#[export_name = "malloc_conf"]
static MALLOC_CONF: MallocConf =
    MallocConf(c"narenas:2,dirty_decay_ms:500,muzzy_decay_ms:0".as_ptr());

/// Lets the library return freed pages once a run's diffing has ended:
/// every arena's unused dirty pages now, and each page as it is freed from
/// then on.
pub fn register_release() {
    diffidx_lib::memory::set_release(release_from_now_on);
}

fn release_from_now_on() {
    // Arenas are made on demand (two at most with the options above, more
    // if `MALLOC_CONF` says so); one not made yet takes the default, which
    // stays as it was.
    // A failure reads as none, and no arena is changed.
    let arenas = read_u32(c"arenas.narenas").unwrap_or(0);
    for arena in 0..arenas {
        let Ok(name) = std::ffi::CString::new(format!("arena.{arena}.dirty_decay_ms")) else {
            continue;
        };
        let mut at_once: isize = 0;
        // SAFETY: writes a `ssize_t` from a value of its size; an arena not
        // initialized yet returns an error code and nothing changes.
        unsafe {
            tikv_jemalloc_sys::mallctl(
                name.as_ptr(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                (&mut at_once as *mut isize).cast(),
                std::mem::size_of::<isize>(),
            );
        }
    }
    // `MALLCTL_ARENAS_ALL`: the pseudo-index that names every arena.
    const PURGE: &std::ffi::CStr = c"arena.4096.purge";
    // SAFETY: a void control (no value read or written); a failure (an
    // unknown name) returns an error code and changes nothing.
    unsafe {
        tikv_jemalloc_sys::mallctl(
            PURGE.as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        );
    }
}

/// An `unsigned` read from jemalloc's control interface (`None` if the
/// name is unknown or the read fails).
fn read_u32(name: &std::ffi::CStr) -> Option<u32> {
    let mut value: u32 = 0;
    let mut len = std::mem::size_of::<u32>();
    // SAFETY: reads an `unsigned` into a buffer of its size.
    let rc = unsafe {
        tikv_jemalloc_sys::mallctl(
            name.as_ptr(),
            (&mut value as *mut u32).cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    (rc == 0).then_some(value)
}

#[cfg(test)]
mod tests {
    fn dirty_decay_ms_of_arena_0() -> isize {
        let mut ms: isize = -2;
        let mut len = std::mem::size_of::<isize>();
        // SAFETY: reads a `ssize_t` into a buffer of its size.
        let rc = unsafe {
            tikv_jemalloc_sys::mallctl(
                c"arena.0.dirty_decay_ms".as_ptr(),
                (&mut ms as *mut isize).cast(),
                &mut len,
                std::ptr::null_mut(),
                0,
            )
        };
        assert_eq!(rc, 0, "arena 0 answers");
        ms
    }

    #[test]
    fn after_the_release_freed_pages_go_back_at_once() {
        // The harness has allocated, so arena 0 exists, with the options
        // compiled in.
        assert_eq!(dirty_decay_ms_of_arena_0(), 500);
        super::release_from_now_on();
        assert_eq!(dirty_decay_ms_of_arena_0(), 0);
    }
}
