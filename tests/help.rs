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

/// What bash completes for `line` (the cursor at its end) with the
/// generated script loaded, as `complete -F` or git's completion calls it.
fn bash_completions(script: &std::path::Path, function: &str, line: &str) -> Vec<String> {
    let mut words: Vec<&str> = line.split(' ').collect();
    if line.ends_with(' ') {
        words.pop();
        words.push("");
    }
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let cword = words.len() - 1;
    let call = if function == "_git__diffidx" {
        format!(
            "_git__diffidx git-diffidx '{}' '{}'",
            words[cword],
            words.get(cword.wrapping_sub(1)).copied().unwrap_or("")
        )
    } else {
        function.to_owned()
    };
    let program = format!(
        "source '{}'; COMP_WORDS=({}); COMP_CWORD={cword}; {call}; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        quoted.join(" ")
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &program])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn bash_completes_both_git_diffidx_and_git_hyphen_diffidx() {
    let repo = TestRepo::new();
    let dir = tempfile::tempdir().unwrap();
    let out = repo.diffidx(&["generate", "bash", "--dir", dir.path().to_str().unwrap()]);
    assert!(out.status.success());
    let script = std::fs::read_dir(dir.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    // The form git's own completion hands over: `git diffidx lo<TAB>`.
    let subcommands = bash_completions(&script, "_git_diffidx", "git diffidx lo");
    assert_eq!(subcommands, ["log"]);
    let flags = bash_completions(&script, "_git_diffidx", "git -C . diffidx log --al");
    assert_eq!(flags, ["--all"]);
    // And the command's own name.
    let direct = bash_completions(&script, "_git__diffidx", "git-diffidx sh");
    assert_eq!(direct, ["show"]);
}
