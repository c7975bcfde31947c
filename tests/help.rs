//! The manual and completions: `git diffidx --help` (git's way: it opens the
//! man page `git-diffidx(1)`) shows the page `generate man` writes, and the
//! completions know every subcommand.

mod common;

use common::TestRepo;

#[test]
fn git_help_opens_the_generated_manual_page() {
    let repo = TestRepo::new();
    let man = tempfile::tempdir().unwrap();
    let err = common::succeeded(&repo.diffidx(&[
        "generate",
        "man",
        "--dir",
        man.path().to_str().unwrap(),
    ]));
    assert!(err.contains("man1"), "{err}");
    for page in ["git-diffidx.1", "git-diffidx-log.1", "git-diffidx-fsck.1"] {
        assert!(man.path().join("man1").join(page).exists(), "{page}");
    }
    // `command` puts the binary's directory first on PATH, as an install does.
    let out = repo
        .command("git")
        .args(["diffidx", "--help"])
        .env("MANPATH", man.path())
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .env("MANWIDTH", "100")
        .output()
        .unwrap();
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(page.contains("git-diffidx"), "{page}");
    for command in ["show", "index", "log", "fsck", "pr-comment"] {
        assert!(
            page.contains(command),
            "{command} is missing from the page:\n{page}"
        );
    }
}

#[test]
fn completions_name_every_subcommand() {
    let repo = TestRepo::new();
    for (shell, needle) in [
        ("bash", "complete -F _git__diffidx"),
        ("zsh", "#compdef git-diffidx"),
        ("fish", "complete -c git-diffidx"),
    ] {
        let out = repo.diffidx(&["generate", shell]);
        assert!(out.status.success());
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(script.contains(needle), "{shell}: {script}");
        for command in ["show", "fsck", "pr-comment"] {
            assert!(script.contains(command), "{shell}: {command}");
        }
    }
}
