//! Link settings of `git-diffidx` on Linux, for a process's start: `show`,
//! `log` and every hook start a process that needs none of the store, and
//! pays for loading all of it.
//!
//! A position-dependent executable: the binary carries the store engine's
//! and the grammars' tables, and as a PIE the dynamic loader applied
//! 118,000 relocations to them at every start (about 5 ms of a `show`
//! process). A position-dependent executable has them resolved at link
//! time. (The C++ runtime linked in is `diffidx-lib`'s build script's.)
//!
//! `OPENSSL_init_ssl` wrapped: the engine's call of it before `main` is
//! skipped (`src/openssl_init.rs`, about 1.8 ms of every start).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
        if std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu") {
            println!("cargo:rustc-link-arg-bins=-Wl,--wrap=OPENSSL_init_ssl");
        }
    }
}
