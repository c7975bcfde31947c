//! Link settings of `git-diffidx` on Linux, both for a process's start:
//! `show`, `log` and every hook start a process that needs none of the
//! store, and pays for loading all of it.
//!
//! - A position-dependent executable: the binary carries Kuzu's and the
//!   grammars' tables, and as a PIE the dynamic loader applied 118,000
//!   relocations to them at every start (about 5 ms of a `show` process). A
//!   position-dependent executable has them resolved at link time.
//! - The C++ runtime linked in (`libstdc++.a`, as `-static-libstdc++` would):
//!   Kuzu asks for `-lstdc++`, and as a shared library its own 2,000-odd
//!   symbol relocations were resolved at every start (2 of a `show`'s 5
//!   million instructions, about 1 ms). A directory holding only the
//!   archive is searched before the system's, so `-lstdc++` finds it there.
//!   Without the archive (no `libstdc++-dev`), the shared library is used.
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CC");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    println!("cargo:rustc-link-arg-bins=-no-pie");
    let Some(out) = std::env::var_os("OUT_DIR") else {
        return;
    };
    let dir = PathBuf::from(out).join("static-cxx");
    match static_cxx_runtime() {
        Some(archive) if link_into(&dir, &archive).is_ok() => {
            println!("cargo:rustc-link-search=native={}", dir.display());
        }
        _ => {
            println!("cargo:warning=no libstdc++.a: the C++ runtime is linked as a shared library")
        }
    }
}

/// Where the C compiler's `libstdc++.a` is, if it has one.
fn static_cxx_runtime() -> Option<PathBuf> {
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let printed = std::process::Command::new(compiler)
        .arg("-print-file-name=libstdc++.a")
        .output()
        .ok()?;
    // Without the archive the compiler prints the bare name back.
    let path = PathBuf::from(String::from_utf8(printed.stdout).ok()?.trim());
    (path.is_absolute() && path.is_file()).then_some(path)
}

/// `dir` with `libstdc++.a` in it (a link to `archive`) and nothing else.
fn link_into(dir: &Path, archive: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let link = dir.join("libstdc++.a");
    match std::fs::remove_file(&link) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    std::os::unix::fs::symlink(archive, link)
}
