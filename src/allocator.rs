//! The process's allocator: jemalloc on Linux (glibc), for every allocation
//! of the process, since the unprefixed build also answers the `malloc` of
//! tree-sitter's C and Kuzu's C++.
//!
//! Why: a backfill allocates and frees syntax trees, tokens and rows by the
//! million on two diffing threads beside the store's own. glibc's malloc
//! spent about 15% of the run in its own bookkeeping (consolidating fast
//! bins, unlinking chunks) and kept freed memory in per-thread arenas. On
//! App-vNext/Polly's whole history (2,942 commits) jemalloc with the options
//! below indexes 9% faster at 20% less peak memory (README, Performance).
//!
//! The options: two arenas (the diffing threads and the writer share them
//! instead of each keeping its own free pages), and freed pages go back to
//! the system after half a second instead of ten. `MALLOC_CONF` in the
//! environment still overrides them, as jemalloc documents.
//!
//! Half a second is long at the end of a phase that frees most of what it
//! held (a backfill's parse cache, before the store's load), so the library
//! asks for freed pages back there ([`register_release`],
//! `diffidx_lib::memory`).

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

/// Lets the library return freed pages at the end of a phase: jemalloc
/// purges the unused dirty pages of every arena.
pub fn register_release() {
    diffidx_lib::memory::set_release(purge_all_arenas);
}

fn purge_all_arenas() {
    // `MALLCTL_ARENAS_ALL`: the pseudo-index that names every arena.
    const NAME: &std::ffi::CStr = c"arena.4096.purge";
    // SAFETY: a void control (no value read or written); a failure (an
    // unknown name) returns an error code and changes nothing.
    unsafe {
        tikv_jemalloc_sys::mallctl(
            NAME.as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        );
    }
}
