//! The GitHub Action: `action.yml` and the workflows pass actionlint, its
//! script passes shellcheck, and the script (`action/run.sh`, what the
//! action's steps run) does its job on real repositories: on push it indexes
//! and publishes the notes (merging when the remote's notes moved, retrying
//! when a push is rejected), on a pull request it keeps the one comment.
//! `scripts/test` installs actionlint and shellcheck and puts them on PATH.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::github::{FakeGitHub, TOKEN};
use common::release::{fake_release, StaticFiles};
use common::{succeeded, TestRepo};

fn project() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn tool(name: &str) -> PathBuf {
    let found = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join(name))
        .find(|p| p.is_file());
    found.unwrap_or_else(|| {
        panic!("{name} is not on PATH: run the tests with scripts/test, which installs it")
    })
}

fn output_text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn the_workflows_and_the_action_metadata_pass_actionlint() {
    let out = Command::new(tool("actionlint"))
        .arg("-shellcheck")
        .arg(tool("shellcheck"))
        .current_dir(project())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", output_text(&out));

    // The linter really reads action.yml through `uses: ./`: an input the
    // action does not declare is an error.
    let copy = tempfile::tempdir().unwrap();
    Command::new("git")
        .args(["init", "-q"])
        .current_dir(copy.path())
        .status()
        .unwrap();
    std::fs::copy(project().join("action.yml"), copy.path().join("action.yml")).unwrap();
    std::fs::create_dir_all(copy.path().join(".github/workflows")).unwrap();
    std::fs::write(
        copy.path().join(".github/workflows/use.yml"),
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: ./\n        with:\n          fail-on-eror: true\n",
    )
    .unwrap();
    let out = Command::new(tool("actionlint"))
        .current_dir(copy.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        output_text(&out).contains("input \"fail-on-eror\" is not defined"),
        "{}",
        output_text(&out)
    );
}

#[test]
fn the_shell_scripts_pass_shellcheck() {
    let scripts = [
        "action/run.sh",
        ".ci/run",
        "scripts/env.sh",
        "scripts/install",
        "scripts/test",
        "scripts/bolt-server",
        "scripts/lint-tools",
        "scripts/release.sh",
        "scripts/packages",
        "packaging/npm/stage",
    ];
    let out = Command::new(tool("shellcheck"))
        .args(["--shell=bash", "--severity=style", "--external-sources"])
        .args(scripts)
        .current_dir(project())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", output_text(&out));
}

#[test]
fn the_hook_scripts_pass_shellcheck_as_posix_sh() {
    let out = Command::new(tool("shellcheck"))
        .args(["--shell=sh", "--severity=style"])
        .args([
            "hooks/post-commit",
            "hooks/post-merge",
            "hooks/post-rewrite",
        ])
        .current_dir(project())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", output_text(&out));
}

/// Runs `action/run.sh run` in `repo` as a workflow step would.
fn run_action(repo: &TestRepo, env: &[(&str, &str)]) -> Output {
    let home = tempfile::tempdir().unwrap();
    repo.command(project().join("action/run.sh"))
        .arg("run")
        .env("DIFFIDX_HOME", home.path())
        .env("GITHUB_ACTIONS", "true")
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

fn notes_in(git_dir: &Path) -> Vec<String> {
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(git_dir)
        .args(["notes", "--ref=diffidx", "list"])
        .output()
        .unwrap();
    let mut commits: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
        .collect();
    commits.sort();
    commits
}

fn all_commits(repo: &TestRepo) -> Vec<String> {
    let mut commits: Vec<String> = repo
        .git(&["rev-list", "--branches"])
        .lines()
        .map(str::to_string)
        .collect();
    commits.sort();
    commits
}

fn is_ancestor(git_dir: &Path, a: &str, b: &str) -> bool {
    Command::new("git")
        .arg("--git-dir")
        .arg(git_dir)
        .args(["merge-base", "--is-ancestor", a, b])
        .status()
        .unwrap()
        .success()
}

fn ref_of(git_dir: &Path, name: &str) -> String {
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(git_dir)
        .args(["rev-parse", name])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

const PUSH: &[(&str, &str)] = &[("GITHUB_EVENT_NAME", "push")];

#[test]
fn on_push_the_notes_are_published_merged_and_retried() {
    let remote = tempfile::tempdir().unwrap();
    let origin = remote.path().join("origin.git");
    Command::new("git")
        .args(["init", "-q", "--bare", "-b", "main"])
        .arg(&origin)
        .status()
        .unwrap();

    // Clone A: two commits, pushed; the action publishes their notes.
    let mut a = TestRepo::new();
    a.write(
        "src/Cart.cs",
        "namespace Shop { class Cart { int Total() => 1; } }\n",
    );
    a.commit("cart");
    a.write(
        "src/Cart.cs",
        "namespace Shop { class Cart { int Total() => 2; } }\n",
    );
    a.commit("total");
    a.git(&["remote", "add", "origin", origin.to_str().unwrap()]);
    a.git(&["push", "-q", "origin", "main"]);
    succeeded(&run_action(&a, PUSH));
    assert_eq!(notes_in(&origin), all_commits(&a));
    let first_notes = ref_of(&origin, "refs/notes/diffidx");

    // Clone B adds a commit; its run imports A's notes and publishes its own.
    let mut b = TestRepo::clone_of(&origin, 100);
    b.write("src/Pay.rs", "pub fn pay(amount: u32) -> u32 { amount }\n");
    b.commit("pay");
    b.git(&["push", "-q", "origin", "main"]);
    let stderr = succeeded(&run_action(&b, PUSH));
    assert!(
        stderr.contains("(1 computed, 2 from existing notes)"),
        "B reuses A's notes:\n{stderr}"
    );
    assert_eq!(notes_in(&origin), all_commits(&b));
    assert!(is_ancestor(&origin, &first_notes, "refs/notes/diffidx"));

    // A, behind on the notes, pulls and commits; the remote's notes moved
    // since A's last run, so A merges them before pushing.
    a.git(&["pull", "-q", "--ff-only", "origin", "main"]);
    a.write(
        "src/Cart.cs",
        "namespace Shop { class Cart { int Total() => 3; } }\n",
    );
    a.commit("total 3");
    a.git(&["push", "-q", "origin", "main"]);
    let b_notes = ref_of(&origin, "refs/notes/diffidx");
    // And the first push of the notes is rejected, as when another job
    // published between our fetch and our push.
    let hook = origin.join("hooks/pre-receive");
    let flag = remote.path().join("rejected-once");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\nwhile read -r old new ref; do\n  if [ \"$ref\" = refs/notes/diffidx ] && [ ! -e '{0}' ]; then\n    touch '{0}'; echo 'rejected: fetch first' >&2; exit 1\n  fi\ndone\nexit 0\n",
            flag.display()
        ),
    )
    .unwrap();
    make_executable(&hook);
    let stderr = succeeded(&run_action(&a, PUSH));
    assert!(flag.exists(), "the hook rejected a push");
    assert!(stderr.contains("attempt 1"), "{stderr}");
    assert!(stderr.contains("published refs/notes/diffidx"), "{stderr}");
    assert_eq!(notes_in(&origin), all_commits(&a));
    assert!(is_ancestor(&origin, &b_notes, "refs/notes/diffidx"));

    // A clone that fetches the notes gets the same record `show` computes.
    let c = TestRepo::clone_of(&origin, 200);
    c.git(&[
        "fetch",
        "-q",
        "origin",
        "refs/notes/diffidx:refs/notes/diffidx",
    ]);
    let head = c.git(&["rev-parse", "HEAD"]).trim().to_string();
    let note = c.git(&["notes", "--ref=diffidx", "show", &head]);
    assert_eq!(note, c.ok(&["show", "--json", &head]));
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut perms = std::fs::metadata(path).unwrap().permissions();
    perms.set_mode(0o755);
    std::fs::set_permissions(path, perms).unwrap();
}

/// A repository with `main` and a `topic` branch, and a pull_request event.
fn pull_request(dir: &Path) -> (TestRepo, PathBuf) {
    let mut repo = TestRepo::new();
    repo.write(
        "src/Cart.cs",
        "namespace Shop { class Cart { int Total() => 1; } }\n",
    );
    repo.commit("cart");
    repo.git(&["checkout", "-q", "-b", "topic"]);
    repo.write(
        "src/Cart.cs",
        "namespace Shop { class Cart { int Total() => 2; int Count() => 0; } }\n",
    );
    repo.commit("count");
    repo.git(&["checkout", "-q", "main"]);
    let sha = |r: &str| repo.git(&["rev-parse", r]).trim().to_string();
    let event = serde_json::json!({
        "number": 7,
        "pull_request": {"number": 7, "base": {"sha": sha("main")}, "head": {"sha": sha("topic")}}
    });
    let path = dir.join("event.json");
    std::fs::write(&path, event.to_string()).unwrap();
    (repo, path)
}

/// The variables Actions sets on a pull_request event.
fn pull_request_env(event: &Path) -> Vec<(&'static str, &str)> {
    vec![
        ("GITHUB_EVENT_NAME", "pull_request"),
        ("GITHUB_EVENT_PATH", event.to_str().unwrap()),
        ("GITHUB_REPOSITORY", "acme/widgets"),
    ]
}

#[test]
fn on_a_pull_request_the_action_keeps_one_comment() {
    let server = FakeGitHub::start();
    let dir = tempfile::tempdir().unwrap();
    let (repo, event) = pull_request(dir.path());
    let mut env = pull_request_env(&event);
    env.push(("GITHUB_API_URL", server.base.as_str()));
    env.push(("GITHUB_TOKEN", TOKEN));
    succeeded(&run_action(&repo, &env));
    succeeded(&run_action(&repo, &env));
    let comments = server.comments(7);
    assert_eq!(comments.len(), 1);
    assert!(
        comments[0].body.contains("`Shop.Cart.Count()`"),
        "{}",
        comments[0].body
    );
    assert!(comments[0].body.contains("`Shop.Cart.Total()`"));

    // comment: false does nothing at all.
    server.clear_requests();
    let mut quiet = env.clone();
    quiet.push(("INPUT_COMMENT", "false"));
    succeeded(&run_action(&repo, &quiet));
    assert!(server.requests().is_empty());
}

#[test]
fn a_failure_is_a_warning_unless_fail_on_error() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, event) = pull_request(dir.path());
    // No token and no server: pr-comment fails.
    let env = pull_request_env(&event);
    let out = run_action(&repo, &env);
    assert!(out.status.success(), "{}", output_text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("::warning title=diffidx::git diffidx pr-comment failed"),
        "{stdout}"
    );

    let mut strict = env.clone();
    strict.push(("INPUT_FAIL_ON_ERROR", "true"));
    let out = run_action(&repo, &strict);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("::error title=diffidx::"));
}

#[test]
fn the_cache_key_names_the_platform_and_hashes_the_sources() {
    let key = |root: &Path| {
        let out = Command::new(root.join("action/run.sh"))
            .arg("cache-key")
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", "X64")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", output_text(&out));
        String::from_utf8(out.stdout).unwrap()
    };
    let first = key(project());
    assert!(first.starts_with("key=diffidx-Linux-X64-"), "{first}");
    assert_eq!(first.trim().len(), "key=diffidx-Linux-X64-".len() + 16);
    assert_eq!(key(project()), first, "deterministic");

    // A copy of the inputs has the same key; the key follows every input
    // (a source file, the lock, a hook script) and nothing else.
    let copy = tempfile::tempdir().unwrap();
    for input in [
        "Cargo.toml",
        "Cargo.lock",
        "src",
        "crates",
        "action",
        "hooks",
        "README.md",
    ] {
        let status = Command::new("cp")
            .args(["-a"])
            .arg(project().join(input))
            .arg(copy.path())
            .status()
            .unwrap();
        assert!(status.success());
    }
    let copied = copy.path();
    assert_eq!(key(copied), first, "the key depends on content, not place");
    let edit = |path: &str, extra: &str| {
        let mut text = std::fs::read_to_string(copied.join(path)).unwrap();
        text.push_str(extra);
        std::fs::write(copied.join(path), text).unwrap();
    };
    edit("README.md", "\nnot a build input\n");
    assert_eq!(
        key(copied),
        first,
        "a file outside the build leaves the key"
    );
    let mut seen = vec![first];
    for (path, extra) in [
        ("crates/diffidx-core/src/lib.rs", "\n// changed\n"),
        ("Cargo.lock", "\n"),
        ("hooks/post-commit", "\n# changed\n"),
    ] {
        edit(path, extra);
        let changed = key(copied);
        assert!(!seen.contains(&changed), "{path} did not change the key");
        seen.push(changed);
    }
}

/// `action/run.sh install` as the action's install step runs it, with no
/// cargo on PATH (a build would be the fallback, and is not wanted here).
fn install_step(home: &Path, base: &str, reference: &str) -> Output {
    Command::new(project().join("action/run.sh"))
        .arg("install")
        .env("DIFFIDX_HOME", home)
        .env("DIFFIDX_RELEASE_BASE", base)
        .env("DIFFIDX_ACTION_REF", reference)
        .env("DIFFIDX_ACTION_REPOSITORY", "example/diffidx")
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap()
}

#[test]
fn at_a_release_tag_the_action_installs_the_verified_prebuilt_binary() {
    let root = tempfile::tempdir().unwrap();
    let name = fake_release(root.path(), "v9.9.9");
    let server = StaticFiles::serve(root.path());
    let base = format!("http://127.0.0.1:{}", server.port);

    let home = tempfile::tempdir().unwrap();
    let out = install_step(home.path(), &base, "v9.9.9");
    let text = output_text(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("sha256 verified"), "{text}");
    let installed = home.path().join("bin/git-diffidx");
    let version = Command::new(&installed).arg("--version").output().unwrap();
    assert!(version.status.success());

    // A tampered archive is refused; with no cargo to build, the step says
    // so as a warning and installs nothing.
    let archive = root.path().join(format!("v9.9.9/{name}.tar.gz"));
    let mut bytes = std::fs::read(&archive).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&archive, bytes).unwrap();
    let home = tempfile::tempdir().unwrap();
    let out = install_step(home.path(), &base, "v9.9.9");
    let text = output_text(&out);
    assert!(text.contains("checksum mismatch"), "{text}");
    assert!(text.contains("cargo is not installed"), "{text}");
    assert!(!home.path().join("bin/git-diffidx").exists());

    // A branch, or a release without this archive, builds instead.
    for reference in ["main", "v0.0.1"] {
        let out = install_step(home.path(), &base, reference);
        let text = output_text(&out);
        assert!(text.contains("building from source"), "{reference}: {text}");
        assert!(!home.path().join("bin/git-diffidx").exists());
    }
}

#[test]
fn binstall_looks_for_the_archives_the_release_workflow_publishes() {
    let manifest = std::fs::read_to_string(project().join("Cargo.toml")).unwrap();
    let workflow =
        std::fs::read_to_string(project().join(".github/workflows/release.yml")).unwrap();
    // The workflow names archives git-diffidx-<tag>-<target>, tags being v<version>.
    assert!(workflow.contains(r#"name="git-diffidx-$TAG-$TARGET""#));
    assert!(workflow.contains(r#"tags: ["v*"]"#));
    for needle in [
        "/releases/download/v{ version }/git-diffidx-v{ version }-{ target }{ archive-suffix }",
        r#"bin-dir = "git-diffidx-v{ version }-{ target }/{ bin }{ binary-ext }""#,
    ] {
        assert!(manifest.contains(needle), "{needle}");
    }
}
