//! Links `git-diffidx` as a position-dependent executable on Linux.
//!
//! Why: the binary carries Kuzu's and the grammars' tables, and as a PIE
//! the dynamic loader applied 118,000 relocations to them at every start
//! (about 5 ms of a `show` process that needs none of the store). A
//! position-dependent executable has them resolved at link time.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
