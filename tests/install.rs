//! `scripts/install` takes the quickest way to this version: a build already
//! in the target directory, else the release binary for this platform
//! (checked against SHA256SUMS), else a source build, saying which. The
//! release is served over loopback HTTP as the release workflow lays it out;
//! cargo is kept off PATH, so a source build shows as its first step failing
//! instead of 40 minutes of compiling.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::release::{fake_release, StaticFiles};

fn project() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn release_tag() -> String {
    format!("v{}", env!("CARGO_PKG_VERSION"))
}

struct Install {
    home: tempfile::TempDir,
    target_dir: PathBuf,
}

impl Install {
    fn new() -> Install {
        let home = tempfile::tempdir().unwrap();
        let target_dir = home.path().join("target");
        Install { home, target_dir }
    }

    fn cargo_bin(&self) -> PathBuf {
        self.home.path().join("cargo/bin/git-diffidx")
    }

    /// `scripts/install ARGS` with everything it writes under the temp home,
    /// and no cargo on PATH.
    fn run(&self, base: &str, args: &[&str]) -> (Output, String) {
        let home = self.home.path();
        let out = Command::new(project().join("scripts/install"))
            .args(args)
            .env("HOME", home)
            .env("CARGO_HOME", home.join("cargo"))
            .env("CARGO_TARGET_DIR", &self.target_dir)
            .env("XDG_DATA_HOME", home.join("data"))
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("DIFFIDX_RELEASE_BASE", base)
            .env("PATH", "/usr/bin:/bin")
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out, text)
    }
}

/// This version's release, served over loopback: the server (kept alive by
/// the caller), its base address and the archive's path.
fn served_release(root: &Path) -> (StaticFiles, String, PathBuf) {
    let tag = release_tag();
    let name = fake_release(root, &tag);
    let server = StaticFiles::serve(root);
    let base = format!("http://127.0.0.1:{}", server.port);
    (server, base, root.join(&tag).join(format!("{name}.tar.gz")))
}

fn head_is_the_release(tag: &str) -> bool {
    let rev = |spec: &str| {
        Command::new("git")
            .args(["rev-parse", "--quiet", "--verify", spec])
            .current_dir(project())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| o.stdout)
    };
    let head = rev("HEAD");
    head.is_some() && head == rev(&format!("{tag}^{{commit}}"))
}

#[test]
fn with_nothing_built_it_installs_the_verified_release_binary_with_its_man_page() {
    let root = tempfile::tempdir().unwrap();
    let (_server, base, _) = served_release(root.path());
    let tag = release_tag();

    let install = Install::new();
    let (out, text) = install.run(&base, &[]);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains(&format!("installed the release {tag} binary for")),
        "{text}"
    );
    assert!(text.contains("sha256 verified"), "{text}");
    assert!(!text.contains("building from source"), "{text}");
    // A checkout past the release is told that the binary is the release's.
    assert_eq!(
        text.contains("scripts/install --from-source builds it instead"),
        !head_is_the_release(&tag),
        "{text}"
    );
    let version = Command::new(install.cargo_bin())
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("git-diffidx {}", env!("CARGO_PKG_VERSION"))
    );
    let home = install.home.path();
    assert!(home.join("cargo/share/man/man1/git-diffidx.1").is_file());
    assert!(home
        .join("data/bash-completion/completions/git-diffidx.bash")
        .is_file());
}

#[test]
fn a_tampered_or_missing_release_falls_back_to_the_source_build() {
    let root = tempfile::tempdir().unwrap();
    let (_server, base, archive) = served_release(root.path());
    let mut bytes = std::fs::read(&archive).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&archive, bytes).unwrap();

    let install = Install::new();
    let (out, text) = install.run(&base, &[]);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("checksum mismatch"), "{text}");
    assert!(text.contains("building from source"), "{text}");
    assert!(says_how_long_the_engine_takes(&text), "{text}");
    assert!(text.contains("cargo not found"), "{text}");
    assert!(!install.cargo_bin().exists());

    // No release of this version at all.
    let empty = tempfile::tempdir().unwrap();
    let server = StaticFiles::serve(empty.path());
    let base = format!("http://127.0.0.1:{}", server.port);
    let (out, text) = install.run(&base, &[]);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("cannot download"), "{text}");
    assert!(text.contains("building from source"), "{text}");
    assert!(!install.cargo_bin().exists());
}

#[test]
fn a_build_in_the_target_directory_or_from_source_comes_before_the_release() {
    let root = tempfile::tempdir().unwrap();
    let (_server, base, _) = served_release(root.path());

    // Asked for the source build, it does not download.
    let install = Install::new();
    let (out, text) = install.run(&base, &["--from-source"]);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(!text.contains("sha256 verified"), "{text}");
    assert!(says_how_long_the_engine_takes(&text), "{text}");
    assert!(!install.cargo_bin().exists());

    // With a build in the target directory, cargo updates it.
    let built = install.target_dir.join("release/git-diffidx");
    std::fs::create_dir_all(built.parent().unwrap()).unwrap();
    std::fs::copy(common::bin(), &built).unwrap();
    let (out, text) = install.run(&base, &[]);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("updating the build in"), "{text}");
    assert!(!text.contains("sha256 verified"), "{text}");
    assert!(text.contains("cargo not found"), "{text}");

    let (out, text) = install.run(&base, &["--bogus"]);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("usage: scripts/install"), "{text}");
}

/// The source build says what the engine costs: compiled here (no route to
/// LadybugDB's releases), or linked from its prebuilt library.
fn says_how_long_the_engine_takes(text: &str) -> bool {
    text.contains("about 50 minutes on 2 cores") || text.contains("prebuilt library;")
}
