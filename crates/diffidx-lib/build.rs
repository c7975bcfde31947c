//! The C++ runtime that every binary linking the store's engine gets, on
//! Linux: its own (as `-static-libstdc++` would), and one of them.
//!
//! - Linked in: the engine asks for `-lstdc++`, and as a shared library its
//!   own 2,000-odd symbol relocations were resolved at every start (2 of a
//!   `show`'s 5 million instructions, about 1 ms). A directory holding only a
//!   `libstdc++.a` is searched before the system's, so `-lstdc++` finds it
//!   there. This crate's search path reaches every binary that links it:
//!   `git-diffidx`, the benches and every test binary.
//! - One runtime. Built from source here, the engine needs C++20's
//!   `<format>`, which GCC 12 lacks, so `scripts/env.sh` compiles every C++
//!   crate with clang and libc++ (`CXXFLAGS=-stdlib=libc++`). Then that
//!   `libstdc++.a` is a linker script naming libc++ and libc++abi, so the
//!   engine's `-lstdc++` links libc++ and nothing links GCC's runtime
//!   beside it.
//!
//! - OpenSSL linked in too: the engine asks for `-lssl -lcrypto` (its
//!   extension installer's HTTPS client), and as shared libraries their
//!   loading and relocations took about 1 ms of every start; the binary
//!   also needed `libssl.so.3` wherever it ran. The same directory holds a
//!   `libssl.so` and a `libcrypto.so` that are linker scripts naming the
//!   archives (`libssl-dev` has them), found before the shared ones.
//!
//! Without the archives, the shared libraries are used.
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    for var in ["CC", "CXX", "CXXFLAGS"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let Some(out) = std::env::var_os("OUT_DIR") else {
        return;
    };
    let dir = PathBuf::from(out).join("static-cxx");
    let runtime = if uses_libcxx() {
        libcxx_runtime()
    } else {
        compiler_file("CC", "cc", &[], "libstdc++.a").map(Runtime::Archive)
    };
    let cxx = match runtime.map(|r| put_in(&dir, "libstdc++.a", &r)) {
        Some(Ok(())) => true,
        _ => {
            println!("cargo:warning=no static C++ runtime: it is linked as a shared library");
            false
        }
    };
    let mut openssl = true;
    for (name, archive) in [("libssl.so", "libssl.a"), ("libcrypto.so", "libcrypto.a")] {
        let found = compiler_file("CC", "cc", &[], archive).map(|a| Runtime::Script(vec![a]));
        if !matches!(found.map(|r| put_in(&dir, name, &r)), Some(Ok(()))) {
            openssl = false;
        }
    }
    if !openssl {
        let _ = std::fs::remove_file(dir.join("libssl.so"));
        let _ = std::fs::remove_file(dir.join("libcrypto.so"));
        println!("cargo:warning=no static OpenSSL: it is linked as shared libraries");
    }
    if cxx || openssl {
        println!("cargo:rustc-link-search=native={}", dir.display());
    }
}

/// What a `-l` name is to find.
enum Runtime {
    /// GCC's own archive.
    Archive(PathBuf),
    /// A linker script that names these archives instead.
    Script(Vec<PathBuf>),
}

/// Whether the C++ crates are compiled against libc++.
fn uses_libcxx() -> bool {
    std::env::var("CXXFLAGS").is_ok_and(|flags| flags.contains("-stdlib=libc++"))
}

fn libcxx_runtime() -> Option<Runtime> {
    let flags = ["-stdlib=libc++"];
    let runtime = compiler_file("CXX", "c++", &flags, "libc++.a")?;
    let abi = compiler_file("CXX", "c++", &flags, "libc++abi.a")?;
    Some(Runtime::Script(vec![runtime, abi]))
}

/// Where the compiler named by `var` (else `default`) finds `file`.
fn compiler_file(var: &str, default: &str, flags: &[&str], file: &str) -> Option<PathBuf> {
    let compiler = std::env::var(var).unwrap_or_else(|_| default.to_owned());
    let printed = std::process::Command::new(compiler)
        .args(flags)
        .arg(format!("-print-file-name={file}"))
        .output()
        .ok()?;
    // Without the archive the compiler prints the bare name back.
    let path = PathBuf::from(String::from_utf8(printed.stdout).ok()?.trim());
    (path.is_absolute() && path.is_file()).then_some(path)
}

/// `dir` with `name` in it, a link to the archive or a linker script.
fn put_in(dir: &Path, name: &str, runtime: &Runtime) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let target = dir.join(name);
    match std::fs::remove_file(&target) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    match runtime {
        Runtime::Archive(archive) => std::os::unix::fs::symlink(archive, target),
        Runtime::Script(archives) => {
            let names: Vec<String> = archives.iter().map(|a| a.display().to_string()).collect();
            std::fs::write(target, format!("INPUT({})\n", names.join(" ")))
        }
    }
}
