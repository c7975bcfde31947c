//! Syntax trees in a jemalloc arena of their own.
//!
//! Why: tree-sitter's nodes are the run's most churned allocation (a
//! backfill of App-vNext/Polly makes about ten million of 96 bytes), and
//! they die with their trees, while rows, notes and code-graph facts made
//! meanwhile live until the store's load. Sharing the arenas of the rest,
//! those few survivors kept the nodes' slabs (4 KiB pages of one size
//! class) from going back: at the end of the diffing, 1 MiB of live
//! 96-byte objects held 10.8 MiB of pages. In an arena of their own, the
//! nodes' slabs are empty once the trees are freed, and go back whole.
//!
//! Each thread that allocates for tree-sitter gets its own cache for this
//! arena (jemalloc's automatic cache serves the thread's default arena), so
//! allocating stays as fast as before; a thread whose cache is gone (in its
//! exit) or could not be made goes to the arena directly.

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Once;

use tikv_jemalloc_sys as jemalloc;

/// The arena's index, once made.
static ARENA: AtomicU32 = AtomicU32::new(NO_ARENA);
const NO_ARENA: u32 = u32::MAX;

/// Sends tree-sitter's allocations to an arena of their own, from now on.
/// Blocks allocated before stay valid: jemalloc frees a block to the arena
/// it came from, whatever the call. Without a new arena (jemalloc refused),
/// tree-sitter keeps its default, the process's `malloc`.
pub fn keep_apart() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let Some(arena) = super::read_u32(c"arenas.create") else {
            return;
        };
        ARENA.store(arena, Ordering::Relaxed);
        // SAFETY: the four functions allocate and free through jemalloc,
        // which also serves the default `malloc`/`free` (the unprefixed
        // build), so blocks tree-sitter allocated before stay freeable.
        unsafe {
            tree_sitter::set_allocator(
                Some(syntax_malloc),
                Some(syntax_calloc),
                Some(syntax_realloc),
                Some(syntax_free),
            );
        }
    });
}

/// A thread's cache for the syntax arena, given back when the thread ends.
struct ThreadCache(Option<u32>);

impl Drop for ThreadCache {
    fn drop(&mut self) {
        let Some(mut id) = self.0 else {
            return;
        };
        // SAFETY: writes an `unsigned` from a value of its size: the id of
        // a cache this thread made and uses no more.
        unsafe {
            jemalloc::mallctl(
                c"tcache.destroy".as_ptr(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                (&mut id as *mut u32).cast(),
                std::mem::size_of::<u32>(),
            );
        }
    }
}

thread_local! {
    static THREAD_CACHE: ThreadCache = ThreadCache(super::read_u32(c"tcache.create"));
}

/// The cache flag for this thread's calls.
fn cache_flags() -> c_int {
    THREAD_CACHE
        .try_with(|cache| cache.0)
        .ok()
        .flatten()
        .map_or(jemalloc::MALLOCX_TCACHE_NONE, |id| {
            jemalloc::MALLOCX_TCACHE(id as usize)
        })
}

fn allocation_flags() -> c_int {
    jemalloc::MALLOCX_ARENA(ARENA.load(Ordering::Relaxed) as usize) | cache_flags()
}

// `mallocx` and `rallocx` take no size 0; `malloc(0)` may return a unique
// pointer, so a byte is asked for instead.

unsafe extern "C" fn syntax_malloc(size: usize) -> *mut c_void {
    jemalloc::mallocx(size.max(1), allocation_flags())
}

unsafe extern "C" fn syntax_calloc(count: usize, size: usize) -> *mut c_void {
    match count.checked_mul(size) {
        Some(bytes) => jemalloc::mallocx(bytes.max(1), allocation_flags() | jemalloc::MALLOCX_ZERO),
        None => std::ptr::null_mut(),
    }
}

unsafe extern "C" fn syntax_realloc(block: *mut c_void, size: usize) -> *mut c_void {
    if block.is_null() {
        return syntax_malloc(size);
    }
    jemalloc::rallocx(block, size.max(1), allocation_flags())
}

unsafe extern "C" fn syntax_free(block: *mut c_void) {
    if !block.is_null() {
        jemalloc::dallocx(block, cache_flags());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The arena a block came from.
    fn arena_of(block: *mut c_void) -> u32 {
        let mut arena: u32 = NO_ARENA;
        let mut len = std::mem::size_of::<u32>();
        let mut block = block;
        // SAFETY: writes a pointer and reads an `unsigned`, each from or
        // into a value of its size.
        let rc = unsafe {
            jemalloc::mallctl(
                c"arenas.lookup".as_ptr(),
                (&mut arena as *mut u32).cast(),
                &mut len,
                (&mut block as *mut *mut c_void).cast(),
                std::mem::size_of::<*mut c_void>(),
            )
        };
        assert_eq!(rc, 0, "jemalloc knows the block");
        arena
    }

    #[test]
    fn syntax_blocks_come_from_their_own_arena_and_keep_their_bytes() {
        keep_apart();
        let arena = ARENA.load(Ordering::Relaxed);
        assert_ne!(arena, NO_ARENA, "an arena was made");
        // SAFETY: each block is used within its size and freed once.
        unsafe {
            let block = syntax_malloc(96).cast::<u8>();
            assert!(!block.is_null());
            assert_eq!(arena_of(block.cast()), arena);
            std::ptr::write_bytes(block, 7, 96);
            let grown = syntax_realloc(block.cast(), 5000).cast::<u8>();
            assert_eq!(arena_of(grown.cast()), arena);
            assert!(
                (0..96).all(|i| *grown.add(i) == 7),
                "realloc keeps the bytes"
            );
            syntax_free(grown.cast());
            let zeroed = syntax_calloc(10, 30).cast::<u8>();
            assert!((0..300).all(|i| *zeroed.add(i) == 0));
            syntax_free(zeroed.cast());
            // The process's own allocations stay in the other arenas.
            let other = Box::new([0u8; 96]);
            assert_ne!(
                arena_of((&*other as *const [u8; 96]).cast_mut().cast()),
                arena
            );
        }
        // tree-sitter itself works through it.
        let mut parser = tree_sitter::Parser::new();
        assert!(parser.parse("", None).is_none(), "no language, no tree");
    }
}
