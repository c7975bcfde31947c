//! The fault matrix: a writer killed at every stage of a batch, hook runs
//! racing a long rebase, a full disk, a read-only repository. Each case
//! proves the fault happened, then that the next run completes and answers
//! exactly what a clean index of the same history answers.

mod common;

use std::io::Write as _;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::TestRepo;

/// `n` commits on `main` in one `git fast-import`: seven Rust files whose
/// functions are added, edited and removed, a commit a second.
fn history(n: usize) -> TestRepo {
    let repo = TestRepo::new();
    let mut stream = Vec::new();
    for i in 0..n {
        let file = i % 7;
        let body: String = (0..=(i / 7) % 12)
            .map(|k| format!("pub fn f{k}() -> u64 {{ {} }}\n", i * k))
            .collect();
        let text = format!("pub fn stable{file}() {{}}\n{body}");
        writeln!(stream, "commit refs/heads/main").unwrap();
        writeln!(
            stream,
            "committer A <a@example.com> {} +0000",
            1_600_000_000 + i
        )
        .unwrap();
        writeln!(stream, "data 3\nc{}", i % 10).unwrap();
        writeln!(stream, "M 100644 inline src/m{file}.rs").unwrap();
        writeln!(stream, "data {}", text.len()).unwrap();
        stream.extend_from_slice(text.as_bytes());
        stream.push(b'\n');
    }
    let mut child = repo
        .command("git")
        .args(["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&stream).unwrap();
    assert!(child.wait().unwrap().success());
    repo.git(&["reset", "-q", "--hard", "main"]);
    repo
}

fn dx(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(common::bin());
    cmd.args(args).current_dir(dir).env("DIFFIDX_SERVER", "off");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let out = dx(dir, args, &[]);
    common::succeeded(&out);
    String::from_utf8(out.stdout).unwrap()
}

fn status(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&ok(dir, &["status", "--json"])).unwrap()
}

/// The answers that must not depend on what happened before.
/// `log --json` for a few names (`f11` exists only in long histories):
/// each answer's exit code and output.
fn answers(dir: &Path) -> Vec<String> {
    ["stable3", "f0", "f5", "f11"]
        .iter()
        .map(|name| {
            let out = dx(dir, &["log", "--symbol", name, "--json"], &[]);
            let stdout = String::from_utf8(out.stdout).unwrap();
            format!("{:?} {stdout}", out.status.code())
        })
        .collect()
}

fn copy_repo(from: &Path) -> tempfile::TempDir {
    let to = tempfile::tempdir().unwrap();
    let status = Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", from.display()))
        .arg(to.path())
        .status()
        .unwrap();
    assert!(status.success());
    to
}

#[test]
fn a_writer_killed_at_every_stage_of_a_batch_loses_nothing() {
    // 1,250 commits: two batches of the backfill at 1,000 commits a batch
    // (a history this small would be one batch otherwise).
    let repo = history(1_250);
    let clean = copy_repo(repo.path());
    ok(clean.path(), &["index", "-q", "--days", "100000"]);
    let expected = answers(clean.path());
    assert_eq!(status(clean.path())["indexed_commits"], 1_250);

    for point in diffidx_lib::fault::POINTS {
        let dir = copy_repo(repo.path());
        let killed = dx(
            dir.path(),
            &["index", "-q", "--days", "100000"],
            &[("DIFFIDX_FAULT", point), ("DIFFIDX_BATCH_COMMITS", "1000")],
        );
        assert_eq!(
            killed.status.signal(),
            Some(9),
            "{point}: it was not killed"
        );
        // What the kill left: the first batch's notes and store, or not.
        let notes = Command::new("git")
            .args(["notes", "--ref", "diffidx", "list"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let noted = String::from_utf8_lossy(&notes.stdout).lines().count();
        let expected_notes = if point == "notes-staged" { 0 } else { 1_000 };
        assert_eq!(noted, expected_notes, "{point}");

        let out = dx(dir.path(), &["index", "--days", "100000"], &[]);
        common::succeeded(&out);
        let s = status(dir.path());
        assert_eq!(s["indexed_commits"], 1_250, "{point}: {s}");
        assert_eq!(s["notes"], 1_250, "{point}");
        assert_eq!(answers(dir.path()), expected, "{point}");
        let fsck = dx(dir.path(), &["fsck"], &[]);
        common::succeeded(&fsck);
    }
}

#[test]
fn commits_a_killed_writer_left_without_their_changes_are_loaded_again() {
    let noted = repaired_after(diffidx_lib::fault::STORE_HALF_COMMITTED);
    assert!(noted, "the fault struck before the notes were committed");
}

#[test]
fn commits_a_killed_writer_left_without_their_notes_are_computed_again() {
    let noted = repaired_after(diffidx_lib::fault::STORE_HALF_COMMITTED_BEFORE_NOTES);
    assert!(!noted, "the notes were committed before the fault");
}

/// Kills a backfill of 300 commits with the engine `fault` that leaves the
/// store holding commits without their changes, checks that the next run
/// repairs it to what a clean run answers; returns whether the killed run
/// had committed its notes.
fn repaired_after(fault: &str) -> bool {
    let repo = history(300);
    let clean = copy_repo(repo.path());
    ok(clean.path(), &["index", "-q", "--days", "100000"]);
    let expected = answers(clean.path());
    let full = status(clean.path());

    let dir = copy_repo(repo.path());
    let killed = dx(
        dir.path(),
        &["index", "-q", "--days", "100000"],
        &[("DIFFIDX_FAULT", fault)],
    );
    assert_eq!(killed.status.signal(), Some(9), "it was not killed");
    let noted = Command::new("git")
        .args(["notes", "--ref", "diffidx", "list"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let noted = !noted.stdout.is_empty();
    // The state the engine was seen to leave: every commit, no change.
    let half = status(dir.path());
    assert_eq!(half["changes"], 0, "{half}");

    let out = dx(dir.path(), &["index", "--days", "100000"], &[]);
    let stderr = common::succeeded(&out);
    assert!(
        stderr.contains("300 commits it held only in part were loaded again"),
        "{stderr}"
    );
    let s = status(dir.path());
    assert_eq!(s["indexed_commits"], 300, "{s}");
    assert_eq!(s["changes"], full["changes"], "{s}");
    assert_eq!(s["symbols"], full["symbols"], "{s}");
    assert_eq!(answers(dir.path()), expected);
    // Repaired once: the next run trusts the store again.
    let again = dx(dir.path(), &["index"], &[]);
    assert!(!common::succeeded(&again).contains("in part"));
    common::succeeded(&dx(dir.path(), &["fsck"], &[]));
    noted
}

#[test]
fn fifty_hook_runs_during_a_300_commit_rebase_end_with_the_rebased_history_indexed() {
    let mut repo = history(300);
    repo.ok(&["hooks", "install"]);
    repo.ok(&["index", "-q", "--days", "100000"]);
    // A new root commit under the whole history: every commit is rewritten.
    repo.git(&["checkout", "-q", "--orphan", "base"]);
    repo.git(&["rm", "-rqf", "."]);
    repo.write("README.md", "base\n");
    repo.git(&["add", "README.md"]);
    repo.commit("base");
    repo.git(&["checkout", "-q", "-f", "main"]);
    // `command` puts the binary's directory first on PATH, so the hooks
    // the rebase fires find it.
    let rebase = repo
        .command("git")
        .args(["rebase", "-q", "base"])
        .spawn()
        .unwrap();
    let hooks: Vec<_> = (0..50)
        .map(|_| {
            repo.command(common::bin())
                .args(["hook-run", "post-commit"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    let rebased = rebase.wait_with_output().unwrap();
    assert!(rebased.status.success());
    for mut hook in hooks {
        assert!(hook.wait().unwrap().success(), "a hook run failed");
    }
    // The post-rewrite hook's run may still be going: wait for the history.
    let started = std::time::Instant::now();
    loop {
        let s = status(repo.path());
        if s["unindexed_commits"] == 0 && s["last_error"].is_null() {
            break;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(120),
            "not indexed: {s}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let clean = TestRepo::clone_of(repo.path(), 10_000);
    clean.ok(&["index", "-q", "--days", "100000"]);
    let entries = |repo: &TestRepo, name: &str| -> Vec<String> {
        let log: serde_json::Value =
            serde_json::from_str(&repo.ok(&["log", "--symbol", name, "--json"])).unwrap();
        log.as_array()
            .unwrap()
            .iter()
            .map(|e| {
                format!(
                    "{} {} {} {}",
                    e["commit"], e["status"], e["path"], e["qualname"]
                )
            })
            .collect()
    };
    let mut checked = 0;
    for name in ["stable3", "f5", "f0"] {
        let ours = entries(&repo, name);
        let theirs = entries(&clean, name);
        checked += theirs.len();
        // Every change of the rebased history is recorded as a clean index
        // records it (the commits rebase replaced are still listed too).
        for entry in &theirs {
            assert!(ours.contains(entry), "{name}: {entry} missing");
        }
    }
    assert!(checked > 50, "only {checked} changes compared");
}

/// Mounts a filesystem for a test (root only); `None` when not permitted.
struct Mount(std::path::PathBuf);

impl Mount {
    fn tmpfs(at: &Path, size: &str) -> Mount {
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "this test mounts a small tmpfs and needs root: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Mount(at.to_owned())
    }

    fn read_only_bind(at: &Path) -> Mount {
        for args in [
            vec![
                "--bind".to_owned(),
                at.display().to_string(),
                at.display().to_string(),
            ],
            vec![
                "-o".to_owned(),
                "remount,ro,bind".to_owned(),
                at.display().to_string(),
            ],
        ] {
            let out = Command::new("mount").args(&args).output().unwrap();
            assert!(
                out.status.success(),
                "this test remounts a directory read-only and needs root: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Mount(at.to_owned())
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_during_index_is_a_clear_error_and_the_next_run_completes() {
    let repo = history(400);
    let expected = {
        let clean = copy_repo(repo.path());
        ok(clean.path(), &["index", "-q", "--days", "100000"]);
        answers(clean.path())
    };
    // The state directory on a filesystem too small for the store.
    let state = repo.path().join(".git/diffidx");
    std::fs::create_dir_all(&state).unwrap();
    let mount = Mount::tmpfs(&state, "1m");
    let out = dx(repo.path(), &["index", "--days", "100000"], &[]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.to_lowercase().contains("space") || err.contains("No space"),
        "the error says the disk is full: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    // The notes are outside the full filesystem: nothing computed is lost.
    let noted = repo
        .git(&["notes", "--ref", "diffidx", "list"])
        .lines()
        .count();
    drop(mount);
    let out = dx(repo.path(), &["index", "--days", "100000"], &[]);
    common::succeeded(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{noted} from existing notes")),
        "the notes written before the disk filled are reused: {err}"
    );
    assert_eq!(answers(repo.path()), expected);
}

#[test]
fn a_read_only_repository_is_a_clear_error_and_reads_still_answer() {
    let repo = history(50);
    ok(repo.path(), &["index", "-q", "--days", "100000"]);
    let expected = answers(repo.path());
    let git_dir = repo.path().join(".git");
    let mount = Mount::read_only_bind(&git_dir);
    let out = dx(repo.path(), &["index"], &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Read-only file system"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // `log` reads the store without writing.
    assert_eq!(answers(repo.path()), expected);
    drop(mount);
    ok(repo.path(), &["index", "-q"]);
    assert_eq!(answers(repo.path()), expected);
}

/// A history whose C# file changes and is renamed, beside a binary that
/// changes too: what a partial or damaged clone lacks.
fn history_with_a_binary() -> TestRepo {
    let mut repo = TestRepo::new();
    for i in 1..=3 {
        repo.write(
            "Tool.cs",
            format!("class Tool {{ int Run() {{ return {i}; }} int Keep() {{ return 0; }} }}\n"),
        );
        repo.write("vendor/tool.exe", vec![i as u8; 4096]);
        repo.commit(&format!("c{i}"));
    }
    repo.git(&["mv", "Tool.cs", "Runner.cs"]);
    repo.commit("rename");
    repo
}

/// `(status, qualname)` of every delta of every note, by commit subject.
fn all_deltas(dir: &Path) -> Vec<String> {
    let log = Command::new("git")
        .args(["log", "--format=%H %s"])
        .current_dir(dir)
        .output()
        .unwrap();
    let mut out = Vec::new();
    for line in String::from_utf8(log.stdout).unwrap().lines() {
        let (sha, subject) = line.split_once(' ').unwrap();
        let note: serde_json::Value =
            serde_json::from_str(&ok(dir, &["show", sha, "--json"])).unwrap();
        for d in note["deltas"].as_array().unwrap() {
            out.push(format!("{subject} {} {}", d["status"], d["qualname"]));
        }
    }
    out
}

#[test]
fn a_partial_clone_fetches_the_source_blobs_it_needs_and_nothing_else() {
    let source = history_with_a_binary();
    source.git(&["config", "uploadpack.allowFilter", "true"]);
    source.git(&["config", "uploadpack.allowAnySHA1InWant", "true"]);
    let expected = {
        ok(source.path(), &["index", "-q", "--all"]);
        all_deltas(source.path())
    };
    let clone = tempfile::tempdir().unwrap();
    let url = format!("file://{}", source.path().display());
    let status = Command::new("git")
        .args(["clone", "-q", "--filter=blob:none", &url])
        .arg(clone.path())
        .status()
        .unwrap();
    assert!(status.success());
    let missing = |dir: &Path| {
        let out = Command::new("git")
            .args(["rev-list", "--objects", "--missing=print", "--all"])
            .current_dir(dir)
            .output()
            .unwrap();
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .filter(|l| l.starts_with('?'))
            .count()
    };
    // Old versions of both files are not here yet.
    assert_eq!(missing(clone.path()), 4);
    let out = dx(clone.path(), &["index", "--all"], &[]);
    common::succeeded(&out);
    assert_eq!(all_deltas(clone.path()), expected);
    // The C# blobs were fetched; the binary's were not needed.
    assert_eq!(missing(clone.path()), 2);
    ok(clone.path(), &["fsck"]);
}

#[test]
fn a_blob_missing_from_a_damaged_clone_is_a_diagnostic_not_an_abort() {
    let repo = history_with_a_binary();
    // Delete the first versions of both files from the object database.
    let first = repo.git(&["rev-list", "--max-parents=0", "HEAD"]);
    let first = first.trim();
    for path in ["Tool.cs", "vendor/tool.exe"] {
        let blob = repo.git(&["rev-parse", &format!("{first}:{path}")]);
        let blob = blob.trim();
        let loose = repo
            .path()
            .join(".git/objects")
            .join(&blob[..2])
            .join(&blob[2..]);
        std::fs::remove_file(&loose).unwrap();
    }
    let out = dx(repo.path(), &["index", "--all"], &[]);
    let err = common::succeeded(&out);
    assert!(!err.contains("panicked"), "{err}");
    let note: serde_json::Value =
        serde_json::from_str(&ok(repo.path(), &["show", "HEAD~2", "--json"])).unwrap();
    let diagnostics = common::problems(&note);
    assert_eq!(diagnostics, ["Tool.cs missing"], "{note}");
    let detail = note["diagnostics"][0]["detail"].as_str().unwrap();
    assert!(detail.contains("not a partial clone"), "{detail}");
    // The other commits are whole: the rename is still found.
    let renamed: serde_json::Value =
        serde_json::from_str(&ok(repo.path(), &["show", "HEAD", "--json"])).unwrap();
    assert!(renamed["deltas"]
        .as_array()
        .unwrap()
        .iter()
        .all(|d| d["status"] == "MOVED"));
    // The store agrees with the notes.
    ok(repo.path(), &["fsck"]);
}

#[test]
fn a_missing_binary_does_not_stop_rename_detection_from_indexing_the_commit() {
    let mut repo = TestRepo::new();
    repo.write("A.cs", "class A { void M() { } }\n");
    repo.write("vendor/old.bin", vec![7u8; 8192]);
    repo.commit("start");
    repo.git(&["rm", "-q", "vendor/old.bin"]);
    repo.write("vendor/new.bin", vec![7u8; 8192 + 16]);
    repo.write("A.cs", "class A { void M() { } void N() { } }\n");
    repo.commit("swap the binary, add N");
    let blob = repo.git(&["rev-parse", "HEAD~1:vendor/old.bin"]);
    let blob = blob.trim();
    std::fs::remove_file(
        repo.path()
            .join(".git/objects")
            .join(&blob[..2])
            .join(&blob[2..]),
    )
    .unwrap();
    common::succeeded(&dx(repo.path(), &["index", "--all"], &[]));
    let note: serde_json::Value =
        serde_json::from_str(&ok(repo.path(), &["show", "--json"])).unwrap();
    assert_eq!(
        common::summarize(&note.to_string()),
        ["MODIFIED class A A.cs:1-1", "ADDED method A.N() A.cs:1-1"]
    );
}
