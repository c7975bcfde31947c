//! The binary's allocator (`src/allocator.rs`): jemalloc with the options it
//! compiles in, serving the whole process.

#![cfg(all(target_os = "linux", target_env = "gnu"))]

mod common;

use common::TestRepo;

/// jemalloc prints its options at exit when `MALLOC_CONF` asks for it. It
/// reads that variable only when built unprefixed, the build in which it
/// also answers `malloc` for tree-sitter's C and the store engine's C++; under glibc's
/// malloc or a prefixed jemalloc nothing is printed.
#[test]
fn an_index_run_allocates_with_jemalloc_and_the_compiled_in_options() {
    let mut repo = TestRepo::new();
    repo.write(
        "src/lib.rs",
        "pub fn parse(input: &str) -> usize { input.len() }\n",
    );
    repo.commit("add parse");
    let out = repo.diffidx_env(
        &["index", "--quiet"],
        &[("MALLOC_CONF", "stats_print:true")],
    );
    let stats = common::succeeded(&out);
    for option in [
        "opt.narenas: 2",
        "opt.dirty_decay_ms: 500",
        "opt.muzzy_decay_ms: 0",
    ] {
        assert!(stats.contains(option), "{option} missing from:\n{stats}");
    }
}
