//! The README's examples run as printed. Every ```console block is a
//! session on the repository built from `fixtures/readme` (one commit per
//! directory, in name order, the message after the number): each `$ `
//! command runs there and must print exactly the lines below it. Every
//! `git diffidx` line of a ```sh block must succeed there too (with the
//! semantic layer on, as the README's setup line turns it on).
//! `DIFFIDX_README_PRINT=1` prints the sessions as they run instead.

mod common;

use std::path::Path;

use common::TestRepo;

/// The fixture history, indexed, with an `origin/main` at its first commit
/// (what a pull request's base looks like).
fn readme_repo() -> TestRepo {
    let mut repo = TestRepo::new();
    let root = common::fixtures().join("readme");
    let mut steps: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    steps.sort();
    for step in steps {
        let name = step.file_name().unwrap().to_string_lossy().into_owned();
        let (_, message) = name.split_once(' ').unwrap();
        repo.replace_tree_with(&step);
        repo.commit(message);
    }
    repo.git(&["update-ref", "refs/remotes/origin/main", "HEAD~3"]);
    repo.ok(&["index", "-q"]);
    repo
}

/// Runs `line` with `sh` in the repository, `git diffidx` being the binary
/// under test; returns (exit code, stdout and stderr).
fn run(repo: &TestRepo, line: &str) -> (Option<i32>, String) {
    let out = repo
        .command("sh")
        .args(["-c", &format!("{line} 2>&1")])
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// The blocks of one kind (`console`, `sh`) of a markdown file.
fn blocks(path: &Path, kind: &str) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let fence = format!("```{kind}\n");
    text.split(&fence)
        .skip(1)
        .map(|rest| rest.split("```").next().unwrap().to_owned())
        .collect()
}

#[test]
fn the_readme_sessions_print_what_the_readme_shows() {
    let repo = readme_repo();
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let sessions = blocks(&readme, "console");
    assert!(!sessions.is_empty());
    let mut commands = 0;
    for session in sessions {
        let mut lines = session.lines().peekable();
        while let Some(line) = lines.next() {
            let command = line
                .strip_prefix("$ ")
                .unwrap_or_else(|| panic!("a session line outside a command's output: {line:?}"));
            let mut expected = String::new();
            while let Some(next) = lines.next_if(|l| !l.starts_with("$ ")) {
                expected.push_str(next);
                expected.push('\n');
            }
            let (code, printed) = run(&repo, command);
            if std::env::var_os("DIFFIDX_README_PRINT").is_some() {
                // To update the README: the sessions as they run now.
                eprint!("$ {command}\n{printed}");
                continue;
            }
            assert_eq!(code, Some(0), "{command}: {printed}");
            assert_eq!(
                printed, expected,
                "`{command}` prints what the README shows"
            );
            commands += 1;
        }
    }
    assert!(commands >= 3, "{commands}");
}

#[test]
fn the_readme_shell_examples_run() {
    let repo = readme_repo();
    // What the semantic example's `git config` line does, with the model
    // scripts/model installed for the tests.
    let model = std::env::var("DIFFIDX_TEST_MODEL").unwrap_or_else(|_| {
        format!(
            "{}/.cache/diffidx-models/all-MiniLM-L6-v2",
            std::env::var("HOME").unwrap_or_else(|_| "/root".into())
        )
    });
    repo.git(&["config", "diffidx.embed.model", &model]);
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let mut ran = 0;
    for block in blocks(&readme, "sh") {
        for line in block.lines().filter(|l| l.starts_with("git diffidx")) {
            let (code, printed) = run(&repo, line);
            assert_eq!(code, Some(0), "{line}: {printed}");
            ran += 1;
        }
    }
    assert!(ran >= 1);
}
