//! What a process start costs: `show`, `log` and every hook start
//! `git-diffidx` afresh, so the link settings of the build scripts are part of their
//! speed. A change to the build that loses them fails here, not only in a
//! benchmark.

/// `readelf ARGS` (binutils, which the C++ toolchain the build needs brings).
#[cfg(target_os = "linux")]
fn readelf(args: &[&str]) -> String {
    let out = std::process::Command::new("readelf")
        .args(args)
        .output()
        .expect("readelf runs");
    assert!(out.status.success(), "readelf {args:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[cfg(target_os = "linux")]
#[test]
fn the_binary_is_position_dependent_and_carries_its_cpp_runtime_and_openssl() {
    let bin = env!("CARGO_BIN_EXE_git-diffidx");
    let header = readelf(&["--file-header", bin]);
    let kind = header
        .lines()
        .find(|line| line.trim_start().starts_with("Type:"))
        .unwrap_or_default();
    assert!(kind.contains("EXEC"), "not position-dependent: {kind}");
    let dynamic = readelf(&["--dynamic", bin]);
    let needed: Vec<&str> = dynamic
        .lines()
        .filter(|line| line.contains("(NEEDED)"))
        .collect();
    assert!(
        needed.iter().any(|line| line.contains("libc.so")),
        "{dynamic}"
    );
    // Neither GCC's runtime nor LLVM's (libc++ and its unwinder, when the
    // engine is built from source with clang).
    for runtime in ["libstdc++", "libc++", "libunwind"] {
        assert!(
            !needed.iter().any(|line| line.contains(runtime)),
            "the C++ runtime is a shared library: {needed:?}"
        );
    }
    // OpenSSL, which the engine links, is linked in as well.
    for library in ["libssl", "libcrypto"] {
        assert!(
            !needed.iter().any(|line| line.contains(library)),
            "OpenSSL is a shared library: {needed:?}"
        );
    }
    // The engine's call of OpenSSL's initialisation before `main` comes to
    // the binary's own wrapper, which skips it.
    let symbols = readelf(&["--syms", "--wide", bin]);
    assert!(symbols.contains("__wrap_OPENSSL_init_ssl"), "not wrapped");
}
