//! `index`, `log --symbol`, `status`, `rebuild`, `init` and the hooks, end to
//! end on real repositories with the real binary and a real store.

mod common;

use std::time::{Duration, Instant};

use common::TestRepo;

fn note_of(repo: &TestRepo, sha: &str) -> String {
    repo.git(&["notes", "--ref", "diffidx", "show", sha])
}

/// A repository of `times` commits, each changing the body of `f` in
/// `src/lib.rs`.
fn one_function_edited(times: u32) -> TestRepo {
    let mut repo = TestRepo::new();
    for i in 0..times {
        repo.write("src/lib.rs", format!("pub fn f() -> u32 {{ {i} }}\n"));
        repo.commit(&format!("c{i}"));
    }
    repo
}

/// A clone of `repo` that fetched its notes (not yet loaded into a store).
fn clone_with_notes(repo: &TestRepo) -> TestRepo {
    let clone = TestRepo::clone_of(repo.path(), 100);
    clone.git(&[
        "fetch",
        "-q",
        "origin",
        "refs/notes/diffidx:refs/notes/diffidx",
    ]);
    clone
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// `status|kind|qualname|path` of each history entry, newest first (none
/// when no indexed symbol matches, which `log` reports with exit 1).
fn history(repo: &TestRepo, name: &str) -> Vec<String> {
    let out = repo.diffidx(&["log", "--symbol", name, "--json"]);
    let code = out.status.code();
    let out = json(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(
        code,
        Some(if out.as_array().unwrap().is_empty() {
            1
        } else {
            0
        }),
        "{name}"
    );
    out.as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{} {} {} {}{}",
                e["status"].as_str().unwrap(),
                e["kind"].as_str().unwrap(),
                e["qualname"].as_str().unwrap(),
                e["path"].as_str().unwrap(),
                e.get("old_path")
                    .map(|p| format!(" <- {}", p.as_str().unwrap()))
                    .unwrap_or_default()
            )
        })
        .collect()
}

/// `index A..B` notes the commits `git rev-list A..B` lists: a merged side
/// branch's too, and none that `A` reaches.
#[test]
fn a_range_indexes_what_rev_list_lists() {
    let mut repo = TestRepo::new();
    repo.write("src/lib.rs", "pub fn f() -> u32 { 0 }\n");
    let old = repo.commit("old");
    repo.write("src/lib.rs", "pub fn f() -> u32 { 1 }\n");
    let base = repo.commit("base");
    repo.git(&["checkout", "-q", "-b", "side"]);
    repo.write("src/side.rs", "pub fn s() -> u32 { 1 }\n");
    repo.commit("side");
    repo.git(&["checkout", "-q", "-"]);
    repo.write("src/lib.rs", "pub fn f() -> u32 { 2 }\n");
    repo.commit("main");
    repo.git(&["merge", "-q", "--no-edit", "side"]);
    let range = format!("{base}..HEAD");
    repo.ok(&["index", "-q", &range]);
    let mut listed: Vec<String> = repo
        .git(&["rev-list", &range])
        .lines()
        .map(String::from)
        .collect();
    listed.sort();
    let mut noted: Vec<String> = repo
        .git(&["notes", "--ref", "diffidx", "list"])
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1).map(String::from))
        .collect();
    noted.sort();
    assert_eq!(listed.len(), 3, "{listed:?}");
    assert_eq!(noted, listed);
    assert!(!noted.contains(&old) && !noted.contains(&base));
}

/// A history with an edit, a file rename, a cross-file move and a deletion.
fn eventful_repo() -> (TestRepo, Vec<String>) {
    let mut repo = TestRepo::new();
    let mut shas = Vec::new();
    repo.write("src/Billing.cs", "namespace Shop\n{\n    class Billing\n    {\n        decimal Tax(decimal net) { return net * 0.2m; }\n        void Other() { }\n    }\n}\n");
    shas.push(repo.commit("add billing"));
    repo.write("src/Billing.cs", "namespace Shop\n{\n    class Billing\n    {\n        decimal Tax(decimal net) { return net * 0.25m; }\n        void Other() { }\n    }\n}\n");
    shas.push(repo.commit("raise tax"));
    repo.git(&["mv", "src/Billing.cs", "src/Invoicing.cs"]);
    shas.push(repo.commit("rename file"));
    repo.write(
        "src/Invoicing.cs",
        "namespace Shop\n{\n    class Billing\n    {\n        void Other() { }\n    }\n}\n",
    );
    repo.write("src/Taxes.cs", "namespace Shop\n{\n    class Taxes\n    {\n        decimal Tax(decimal net) { return net * 0.25m; }\n    }\n}\n");
    shas.push(repo.commit("move tax"));
    repo.remove("src/Taxes.cs");
    shas.push(repo.commit("drop taxes"));
    (repo, shas)
}

/// A branch `side` off the current commit with a class of its own, `main`
/// checked out again: merged later, it is older than the main line.
fn side_branch(repo: &mut TestRepo) {
    repo.git(&["checkout", "-q", "-b", "side"]);
    repo.write(
        "src/Audit.cs",
        "namespace Shop\n{\n    class Audit\n    {\n        void Log() { }\n    }\n}\n",
    );
    repo.commit("audit");
    repo.git(&["checkout", "-q", "main"]);
}

#[test]
fn notes_equal_show_json_and_reindexing_is_a_no_op() {
    let (repo, shas) = eventful_repo();
    let out = repo.diffidx(&["index"]);
    common::succeeded(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("indexed 5 commits"));
    for sha in &shas {
        assert_eq!(
            note_of(&repo, sha),
            repo.ok(&["show", "--json", sha]),
            "{sha}"
        );
    }
    // One run, one notes commit.
    assert_eq!(
        repo.git(&["rev-list", "--count", "refs/notes/diffidx"])
            .trim(),
        "1"
    );
    let tip = repo.git(&["rev-parse", "refs/notes/diffidx"]);
    let counts = |repo: &TestRepo| {
        let s = json(&repo.ok(&["status", "--json"]));
        (
            s["indexed_commits"].clone(),
            s["symbols"].clone(),
            s["changes"].clone(),
        )
    };
    let before = counts(&repo);
    let again = repo.diffidx(&["index"]);
    assert!(again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already up to date"));
    assert_eq!(repo.git(&["rev-parse", "refs/notes/diffidx"]), tip);
    assert_eq!(counts(&repo), before);
    // Every delta of every note is one change in the store.
    let deltas: usize = shas
        .iter()
        .map(|sha| {
            json(&note_of(&repo, sha))["deltas"]
                .as_array()
                .unwrap()
                .len()
        })
        .sum();
    assert_eq!(before.2, deltas);
    repo.ok(&["rebuild"]);
    assert_eq!(counts(&repo), before);
    let status = json(&repo.ok(&["status", "--json"]));
    assert_eq!(status["indexed_commits"], 5);
    assert_eq!(status["notes"], 5);
    assert_eq!(status["unindexed_commits"], 0);
}

#[test]
fn log_follows_renames_moves_and_deletion() {
    let (repo, _) = eventful_repo();
    repo.ok(&["index", "-q"]);
    assert_eq!(
        history(&repo, "Tax"),
        [
            "DELETED method Shop.Taxes.Tax src/Taxes.cs",
            "MOVED method Shop.Taxes.Tax src/Taxes.cs <- src/Invoicing.cs",
            "MOVED method Shop.Billing.Tax src/Invoicing.cs <- src/Billing.cs",
            "MODIFIED method Shop.Billing.Tax src/Billing.cs",
            "ADDED method Shop.Billing.Tax src/Billing.cs",
        ]
    );
    // Suffix at a boundary, exact names, signatures, kind and path filters;
    // from any of its names, a symbol's history follows it where it went.
    assert_eq!(history(&repo, "Billing.Tax").len(), 5);
    assert_eq!(history(&repo, "Shop.Billing.Tax(decimal)").len(), 5);
    assert!(history(&repo, "ax").is_empty());
    assert!(history(&repo, "Tax(int)").is_empty());
    let classes = json(&repo.ok(&["log", "--symbol", "Billing", "--kind", "class", "--json"]));
    assert!(classes
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["kind"] == "class"));
    let elsewhere = repo.diffidx(&[
        "log",
        "--symbol",
        "Other",
        "--path",
        "src/Taxes.cs",
        "--json",
    ]);
    assert_eq!(elsewhere.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&elsewhere.stdout), "[]\n");
    let err = String::from_utf8_lossy(&elsewhere.stderr);
    assert!(
        err.contains("no indexed symbol matches 'Other' under src/Taxes.cs"),
        "{err}"
    );
    assert_eq!(
        history(&repo, "Other"),
        [
            "MOVED method Shop.Billing.Other src/Invoicing.cs <- src/Billing.cs",
            "ADDED method Shop.Billing.Other src/Billing.cs",
        ]
    );
    let in_src = json(&repo.ok(&["log", "--symbol", "Other", "--path", "src", "--json"]));
    assert_eq!(in_src.as_array().unwrap().len(), 2);
    // The documented JSON fields.
    let entry = &json(&repo.ok(&["log", "--symbol", "Tax", "--json"]))[0];
    for field in [
        "commit",
        "date",
        "author",
        "subject",
        "status",
        "kind",
        "path",
        "qualname",
        "sig",
        "start_line",
        "end_line",
    ] {
        assert!(entry.get(field).is_some(), "missing {field} in {entry}");
    }
    assert_eq!(entry["subject"], "drop taxes");
    assert_eq!(entry["author"], "Ada Lovelace");
    // Human output and -p.
    let text = repo.ok(&["log", "--symbol", "Billing.Tax", "-p"]);
    assert!(text.contains("MODIFIED"), "{text}");
    assert!(
        text.contains("    -        decimal Tax(decimal net) { return net * 0.2m; }"),
        "{text}"
    );
    assert!(
        text.contains("    +        decimal Tax(decimal net) { return net * 0.25m; }"),
        "{text}"
    );
}

#[test]
fn rebuild_from_notes_gives_the_same_answers() {
    let (repo, _) = eventful_repo();
    repo.ok(&["index", "-q"]);
    let before = repo.ok(&["log", "--symbol", "Tax", "--json"]);
    let other = repo.ok(&["log", "--symbol", "Other", "--json"]);
    repo.ok(&["rebuild"]);
    assert_eq!(repo.ok(&["log", "--symbol", "Tax", "--json"]), before);
    assert_eq!(repo.ok(&["log", "--symbol", "Other", "--json"]), other);
    // A store deleted outright is also rebuilt by the next index.
    std::fs::remove_file(repo.path().join(".git/diffidx/graph.lbdb")).unwrap();
    let _ = std::fs::remove_file(repo.path().join(".git/diffidx/graph.lbdb.wal"));
    repo.ok(&["index", "-q"]);
    assert_eq!(repo.ok(&["log", "--symbol", "Tax", "--json"]), before);
}

#[test]
fn a_store_of_the_earlier_engine_is_removed_and_the_notes_refill_the_new_one() {
    let (repo, _) = eventful_repo();
    repo.ok(&["index", "-q"]);
    let before = repo.ok(&["log", "--symbol", "Tax", "--json"]);
    // As a clone indexed by a diffidx on Kuzu leaves it: its store under
    // the old name, the notes, and no LadybugDB store.
    let state = repo.path().join(".git/diffidx");
    for suffix in ["", ".wal", ".seal"] {
        let _ = std::fs::remove_file(state.join(format!("graph.lbdb{suffix}")));
        std::fs::write(state.join(format!("graph.kuzu{suffix}")), b"kuzu pages").unwrap();
    }
    std::fs::write(state.join("graph.kuzu.compacted"), b"123").unwrap();
    repo.ok(&["index", "-q"]);
    let left: Vec<String> = std::fs::read_dir(&state)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("graph.kuzu"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(repo.ok(&["log", "--symbol", "Tax", "--json"]), before);
    let log = std::fs::read_to_string(state.join("hook.log")).unwrap();
    assert!(log.contains("a store of an earlier engine"), "{log}");
}

#[test]
fn log_without_an_index_says_what_to_run() {
    let (repo, _) = eventful_repo();
    let out = repo.diffidx(&["log", "--symbol", "Tax"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("git diffidx init"));
}

#[test]
fn log_says_when_the_index_is_behind_head() {
    let (mut repo, _) = eventful_repo();
    repo.ok(&["index", "-q"]);
    repo.write("src/New.cs", "class New { }\n");
    repo.commit("new");
    let out = repo.diffidx(&["log", "--symbol", "Tax"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("is not indexed yet; run `git diffidx index`"));
}

#[test]
fn malformed_notes_from_a_remote_are_rejected_and_recomputed() {
    let (repo, shas) = eventful_repo();
    // A "remote" note: garbage for one commit, a lie about another.
    repo.put_note(&shas[1], "{not json");
    let lie = repo
        .ok(&["show", "--json", &shas[0]])
        .replace(&shas[0], &shas[2]);
    repo.put_note(&shas[2], lie.trim());
    let out = repo.diffidx(&["index"]);
    common::succeeded(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("the note of {} was rejected", shas[1])),
        "{err}"
    );
    assert!(
        err.contains(&format!("the note of {} was rejected", shas[2])),
        "{err}"
    );
    for sha in &shas {
        assert_eq!(
            note_of(&repo, sha),
            repo.ok(&["show", "--json", sha]),
            "{sha}"
        );
    }
    assert_eq!(history(&repo, "Tax").len(), 5);
}

#[test]
fn valid_notes_from_elsewhere_are_imported_not_recomputed() {
    let (repo, shas) = eventful_repo();
    repo.ok(&["index", "-q"]);
    // A clone that fetches the notes gets the same answers without parsing history.
    let clone = tempfile::tempdir().unwrap();
    let url = format!("file://{}", repo.path().display());
    repo.git(&["clone", "-q", &url, clone.path().to_str().unwrap()]);
    let run = |args: &[&str]| {
        std::process::Command::new(common::bin())
            .args(args)
            .current_dir(clone.path())
            .output()
            .unwrap()
    };
    let fetch = std::process::Command::new("git")
        .args([
            "fetch",
            "-q",
            "origin",
            "refs/notes/diffidx:refs/notes/diffidx",
        ])
        .current_dir(clone.path())
        .status()
        .unwrap();
    assert!(fetch.success());
    let out = run(&["index"]);
    common::succeeded(&out);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("(0 computed, 5 from existing notes)"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs = run(&["log", "--symbol", "Tax", "--json"]);
    assert_eq!(
        String::from_utf8_lossy(&theirs.stdout),
        repo.ok(&["log", "--symbol", "Tax", "--json"])
    );
    let _ = shas;
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn all_noted(repo: &TestRepo) -> bool {
    let all = repo.git(&["rev-list", "HEAD"]);
    all.lines().all(|sha| {
        std::process::Command::new("git")
            .args(["notes", "--ref", "diffidx", "show", sha])
            .current_dir(repo.path())
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    })
}

/// Runs git with the built binary's directory on PATH, as a user would have it.
fn git_with_diffidx(repo: &TestRepo, args: &[&str]) -> std::process::Output {
    std::process::Command::new("git")
        .args(args)
        .current_dir(repo.path())
        .env("PATH", common::path_with_bin())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Ada Lovelace")
        .env("GIT_AUTHOR_EMAIL", "ada@example.com")
        .env("GIT_COMMITTER_NAME", "Ada Lovelace")
        .env("GIT_COMMITTER_EMAIL", "ada@example.com")
        .output()
        .unwrap()
}

#[test]
fn hooks_index_commits_amends_and_rebases_in_the_background() {
    let mut repo = TestRepo::new();
    repo.write("a.rs", "fn a() {}\n");
    repo.commit("a");
    // A hook the user already had is kept and still runs.
    repo.write(
        ".git/hooks/post-commit",
        "#!/bin/sh\necho ran >> \"$(git rev-parse --git-dir)/user-hook-ran\"\n",
    );
    std::os::unix::fs::PermissionsExt::set_mode(
        &mut std::fs::metadata(repo.path().join(".git/hooks/post-commit"))
            .unwrap()
            .permissions(),
        0o755,
    );
    std::fs::set_permissions(
        repo.path().join(".git/hooks/post-commit"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    repo.ok(&["hooks", "install"]);
    let status = json(&repo.ok(&["status", "--json"]));
    assert_eq!(
        status["hooks_installed"],
        serde_json::json!(["post-commit", "post-merge", "post-rewrite"])
    );

    for i in 0..3 {
        repo.write("a.rs", format!("fn a() {{ {i} }}\n"));
        let started = Instant::now();
        let out = git_with_diffidx(&repo, &["commit", "-qam", &format!("edit {i}")]);
        common::succeeded(&out);
        assert!(
            out.stderr.is_empty(),
            "a hook printed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the commit waited for indexing"
        );
    }
    assert!(repo.path().join(".git/user-hook-ran").exists());
    wait_until("the hooks to index every commit", || all_noted(&repo));

    // A merge: post-merge indexes the merge commit (no deltas of its own).
    repo.git(&["checkout", "-q", "-b", "side", "HEAD~1"]);
    repo.write("side.rs", "fn side() {}\n");
    repo.git(&["add", "side.rs"]);
    repo.git(&["commit", "-qm", "side"]);
    repo.git(&["checkout", "-q", "main"]);
    let out = git_with_diffidx(&repo, &["merge", "-q", "--no-ff", "--no-edit", "side"]);
    common::succeeded(&out);
    wait_until("the merge to be indexed", || all_noted(&repo));
    let merge_note = json(&note_of(&repo, repo.git(&["rev-parse", "HEAD"]).trim()));
    assert_eq!(merge_note["deltas"], serde_json::json!([]));

    // Amend and rebase rewrite commits; post-rewrite indexes the new ones.
    repo.write("b.rs", "fn b() {}\n");
    repo.git(&["add", "b.rs"]);
    assert!(
        git_with_diffidx(&repo, &["commit", "-q", "--amend", "--no-edit"])
            .status
            .success()
    );
    assert!(
        git_with_diffidx(&repo, &["rebase", "-q", "--exec", "true", "HEAD~3"])
            .status
            .success()
    );
    wait_until("the rewritten commits to be indexed", || all_noted(&repo));
    let status = json(&repo.ok(&["status", "--json"]));
    assert_eq!(status["last_error"], serde_json::Value::Null);

    repo.ok(&["hooks", "uninstall"]);
    let restored = std::fs::read_to_string(repo.path().join(".git/hooks/post-commit")).unwrap();
    assert!(restored.contains("user-hook-ran"));
    assert!(!repo.path().join(".git/hooks/post-merge").exists());
}

#[test]
fn concurrent_hook_runs_end_with_everything_indexed() {
    let mut repo = TestRepo::new();
    for i in 0..30 {
        repo.write(&format!("f{}.rs", i % 4), format!("fn f{i}() {{}}\n"));
        repo.commit(&format!("c{i}"));
    }
    let children: Vec<_> = (0..6)
        .map(|_| {
            std::process::Command::new(common::bin())
                .args(["hook-run", "post-commit"])
                .current_dir(repo.path())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    wait_until("every commit to be indexed", || all_noted(&repo));
    let status = json(&repo.ok(&["status", "--json"]));
    assert_eq!(status["indexed_commits"], 30);
    assert_eq!(status["last_error"], serde_json::Value::Null);
}

#[test]
fn a_killed_index_run_is_caught_up_by_the_next() {
    let mut repo = TestRepo::new();
    for i in 0..400 {
        repo.write(
            &format!("src/m{}.rs", i % 7),
            format!("pub fn f{i}() -> u32 {{ {i} }}\npub fn g() {{}}\n"),
        );
        repo.commit(&format!("c{i}"));
    }
    for delay_ms in [50u64, 300] {
        // Batches of 100 commits, so that a kill can fall between batches
        // (a history this small is one batch otherwise).
        let mut child = std::process::Command::new(common::bin())
            .args(["index", "-q"])
            .env("DIFFIDX_BATCH_COMMITS", "100")
            .current_dir(repo.path())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        // The kill must interrupt a running index, or this proves nothing.
        assert!(
            child.try_wait().unwrap().is_none(),
            "index finished within {delay_ms} ms"
        );
        child.kill().unwrap(); // SIGKILL
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(child.wait().unwrap().signal(), Some(9));
    }
    let out = repo.diffidx(&["index"]);
    common::succeeded(&out);
    let status = json(&repo.ok(&["status", "--json"]));
    assert_eq!(status["notes"], 400);
    assert_eq!(status["indexed_commits"], 400);
    assert_eq!(status["unindexed_commits"], 0);
    // Same answers as a clean index of the same history.
    let clean = tempfile::tempdir().unwrap();
    let url = format!("file://{}", repo.path().display());
    repo.git(&["clone", "-q", &url, clean.path().to_str().unwrap()]);
    let run = |dir: &std::path::Path, args: &[&str]| {
        let out = std::process::Command::new(common::bin())
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        common::succeeded(&out);
        String::from_utf8(out.stdout).unwrap()
    };
    run(clean.path(), &["index", "-q"]);
    let expected = run(clean.path(), &["log", "--symbol", "g", "--json"]);
    let got = repo.diffidx(&["log", "--symbol", "g", "--json"]);
    if String::from_utf8_lossy(&got.stdout) != expected {
        // What a rare failure needs to be understood (it was seen in CI).
        let all = repo.diffidx(&["log", "--all", "--symbol", "g", "--json"]);
        panic!(
            "log differs from a clean index\nexpected: {expected}\ngot: {}\nstderr: {}\n\
             --all: {}\nstatus: {status}\nfirst index: {}",
            String::from_utf8_lossy(&got.stdout),
            String::from_utf8_lossy(&got.stderr),
            String::from_utf8_lossy(&all.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
    }
}

#[test]
fn init_installs_hooks_and_backfills_a_bounded_window() {
    let mut repo = TestRepo::new();
    repo.write("old.rs", "fn old() {}\n");
    repo.commit_at("ancient", 1_000_000_000);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    repo.write("new.rs", "fn new() {}\n");
    repo.commit_at("recent", now);
    let out = repo.diffidx(&["init", "--days", "30"]);
    common::succeeded(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("installed hooks: post-commit, post-merge, post-rewrite"),
        "{err}"
    );
    assert!(
        err.contains("backfill of the last 30 days before the newest commit: indexed 1 commits"),
        "{err}"
    );
    assert!(err.contains("1 older commits are not indexed"), "{err}");
    let status = json(&repo.ok(&["status", "--json"]));
    assert_eq!(status["indexed_commits"], 1);
    assert_eq!(status["unindexed_commits"], 1);
    assert_eq!(history(&repo, "new"), ["ADDED function new new.rs"]);
    // `old` is in the tree (the code graph knows it), but no indexed
    // commit changed it: an empty history, and a note that says why.
    let out = repo.diffidx(&["log", "old", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[]");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no recorded change of 'old'"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn init_share_fetches_and_imports_a_remotes_notes() {
    let (origin, shas) = eventful_repo();
    origin.ok(&["index", "-q"]);
    // A bad note on the remote side for one commit: never trusted.
    let bad_target = &shas[4];
    let clone = tempfile::tempdir().unwrap();
    let url = format!("file://{}", origin.path().display());
    origin.git(&["clone", "-q", &url, clone.path().to_str().unwrap()]);
    origin.put_note(bad_target, "{\"v\":1,\"garbage\":true}");
    let in_clone = |program: &str, args: &[&str]| {
        let out = std::process::Command::new(program)
            .args(args)
            .current_dir(clone.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let bin = common::bin();
    let bin = bin.to_str().unwrap();
    let (_, err) = in_clone(bin, &["init", "--share", "--no-hooks", "--days", "100000"]);
    assert!(
        err.contains("`git fetch origin` now brings origin's notes"),
        "{err}"
    );
    // Saying it twice adds nothing.
    in_clone(bin, &["init", "--share", "--no-hooks", "--days", "100000"]);
    let (fetch_specs, _) = in_clone("git", &["config", "--get-all", "remote.origin.fetch"]);
    assert_eq!(
        fetch_specs
            .matches("refs/notes/diffidx-remote/origin")
            .count(),
        1
    );
    in_clone("git", &["fetch", "-q", "origin"]);
    // Drop the clone's own notes and store, so the remote's are all it has.
    in_clone("git", &["update-ref", "-d", "refs/notes/diffidx"]);
    std::fs::remove_dir_all(clone.path().join(".git/diffidx")).unwrap();
    let (_, err) = in_clone(bin, &["index"]);
    assert!(
        err.contains(&format!("the note of {bad_target} was rejected")),
        "{err}"
    );
    assert!(
        err.contains("(from refs/notes/diffidx-remote/origin)"),
        "{err}"
    );
    assert!(err.contains("(1 computed, 4 from existing notes)"), "{err}");
    for sha in &shas[..4] {
        let (ours, _) = in_clone("git", &["notes", "--ref", "diffidx", "show", sha]);
        assert_eq!(ours, origin.ok(&["show", "--json", sha]));
    }
    let (ours, _) = in_clone("git", &["notes", "--ref", "diffidx", "show", bad_target]);
    assert_eq!(ours, origin.ok(&["show", "--json", bad_target]));
}

#[test]
fn hooks_install_writes_the_scripts_of_the_hooks_directory() {
    let repo = TestRepo::new();
    repo.ok(&["hooks", "install"]);
    for hook in ["post-commit", "post-merge", "post-rewrite"] {
        let installed = std::fs::read_to_string(repo.path().join(".git/hooks").join(hook)).unwrap();
        let shipped = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("hooks")
                .join(hook),
        )
        .unwrap();
        assert_eq!(installed, shipped, "{hook}");
    }
    // The scripts find this binary through git config when it is not on PATH.
    let program = repo.git(&["config", "--get", "diffidx.program"]);
    assert!(std::path::Path::new(program.trim()).is_file(), "{program}");
    repo.ok(&["hooks", "uninstall"]);
    assert!(!repo.path().join(".git/hooks/post-commit").exists());
}

#[test]
fn log_orders_a_signature_change_the_same_way_every_time() {
    let mut repo = TestRepo::new();
    repo.write("A.cs", "class Foo {\n void Bar(int x) { }\n}\n");
    repo.commit("add");
    repo.write("A.cs", "class Foo {\n void Bar(long x) { }\n}\n");
    repo.commit("change the signature");
    repo.ok(&["index", "-q"]);
    for _ in 0..10 {
        let out = repo.ok(&["log", "--symbol", "Foo.Bar", "--json"]);
        let statuses: Vec<String> = json(&out)
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                format!(
                    "{} {}",
                    e["status"].as_str().unwrap(),
                    e["sig"].as_str().unwrap()
                )
            })
            .collect();
        // Newest first; within the commit, ADDED before DELETED on the same line.
        assert_eq!(statuses, ["ADDED (long)", "DELETED (int)", "ADDED (int)"]);
    }
}

#[test]
fn log_rejects_names_that_name_no_symbol_and_unknown_kinds() {
    let mut repo = TestRepo::new();
    repo.write("A.cs", "class Foo { void Bar() { } }\n");
    repo.commit("add");
    repo.ok(&["index", "-q"]);
    for name in ["", "   ", "::", ".", "Foo.", "#2"] {
        let out = repo.diffidx(&["log", "--symbol", name]);
        assert_eq!(out.status.code(), Some(2), "{name:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("names no symbol"),
            "{name:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = repo.diffidx(&["log", "--symbol", "Foo.Bar", "--kind", "lambda"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("unknown kind \"lambda\"") && stderr.contains("method"),
        "{stderr}"
    );
    // A valid name and kind still answer.
    assert!(repo
        .ok(&["log", "--symbol", "Foo.Bar", "--kind", "method"])
        .contains("ADDED"));
    // The name may also come without `--symbol`, as in `git log PATH`; one of
    // the two is required, not both.
    assert_eq!(
        repo.ok(&["log", "Foo.Bar", "--json"]),
        repo.ok(&["log", "--symbol", "Foo.Bar", "--json"])
    );
    for args in [&["log"][..], &["log", "Foo.Bar", "--symbol", "Foo.Bar"]] {
        assert_eq!(repo.diffidx(args).status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn index_says_who_holds_the_writer_lock_and_gives_up_after_its_bound() {
    let mut repo = TestRepo::new();
    repo.write("A.cs", "class Foo { void Bar() { } }\n");
    repo.commit("add");
    repo.ok(&["index", "-q"]);
    repo.write("A.cs", "class Foo { void Bar() { Go(); } }\n");
    repo.commit("edit");
    // Another writer: this test process, holding the lock with its pid in it.
    let path = repo.path().join(".git/diffidx/index.lock");
    let lock = std::fs::File::options().write(true).open(&path).unwrap();
    lock.lock().unwrap();
    std::fs::write(&path, format!("{}\n", std::process::id())).unwrap();

    let mut child = repo
        .command(common::bin())
        .args(["index"])
        .env("DIFFIDX_LOCK_WAIT", "2")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("index waited for the lock without a bound");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let pid = format!("pid {}", std::process::id());
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("waiting for another diffidx ({pid})")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("another diffidx ({pid}) is indexing")),
        "{stderr}"
    );

    // Once the lock is free, the same command indexes the new commit.
    drop(lock);
    assert!(repo.ok(&["log", "--symbol", "Foo.Bar"]).contains("ADDED"));
    let out = repo.diffidx(&["index"]);
    assert!(out.status.success());
    assert!(repo
        .ok(&["log", "--symbol", "Foo.Bar"])
        .contains("MODIFIED"));
}

#[test]
fn hostile_nesting_is_indexed_to_a_limit_by_show_hooks_index_and_rebuild() {
    let mut repo = TestRepo::new();
    let depth = |n: usize, open: &str, inner: &str| {
        let opens: String = (0..n)
            .map(|i| open.replace("{i}", &i.to_string()))
            .collect();
        format!("{opens}{inner}{}", "}\n".repeat(n))
    };
    repo.write("deep.rs", depth(5_000, "mod m{i} {\n", "fn f() {}\n"));
    repo.write("deep.cs", depth(6_000, "class C{i} {\n", "void F() {}\n"));
    // Names that would make qualnames over 4 KiB within the nesting limit.
    let long = "n".repeat(200);
    repo.write(
        "long.rs",
        depth(40, &format!("mod {long}{{i}} {{\n"), "fn f() {}\n"),
    );
    let sha = repo.commit("hostile nesting");
    let note = json(&repo.ok(&["show", "--json", &sha]));
    assert_eq!(
        common::problems(&note),
        [
            "deep.cs too_deep",
            "deep.rs too_deep",
            "long.rs name_too_long"
        ]
    );
    let hook = repo.diffidx(&["hook-run", "post-commit"]);
    assert!(hook.status.success());
    wait_until("the hook to index the commit", || all_noted(&repo));
    assert_eq!(note_of(&repo, &sha), repo.ok(&["show", "--json", &sha]));
    let status = json(&repo.ok(&["status", "--json"]));
    assert_eq!(status["last_error"], serde_json::Value::Null);
    // The reader accepts every note the writer made.
    let rebuilt = repo.diffidx(&["rebuild"]);
    common::succeeded(&rebuilt);
    assert_eq!(
        history(&repo, "m0::m1::m2"),
        ["ADDED module m0::m1::m2 deep.rs"]
    );
}

#[test]
fn commits_of_one_second_keep_their_graph_order_after_rebuild_and_import() {
    let mut repo = TestRepo::new();
    let at = 1_700_000_000;
    for i in 0..8 {
        repo.write(
            "Calc.cs",
            format!("class Calc\n{{\n    int Add() {{ return {i}; }}\n}}\n"),
        );
        repo.commit_at(&format!("edit {i}"), at);
    }
    let statuses = |repo: &TestRepo| -> Vec<String> {
        let out = json(&repo.ok(&["log", "--symbol", "Calc.Add", "--json"]));
        out.as_array()
            .unwrap()
            .iter()
            .map(|e| {
                format!(
                    "{} {}",
                    e["status"].as_str().unwrap(),
                    e["subject"].as_str().unwrap_or("")
                )
            })
            .collect()
    };
    repo.ok(&["index", "-q", "--days", "100000"]);
    let indexed = statuses(&repo);
    assert_eq!(indexed.len(), 8);
    assert!(indexed[7].starts_with("ADDED"), "{indexed:?}");
    repo.ok(&["rebuild"]);
    assert_eq!(statuses(&repo), indexed, "after rebuild");
    // A clone that imports the notes loads them in the same order.
    let clone = clone_with_notes(&repo);
    clone.ok(&["index", "-q", "--days", "100000"]);
    assert_eq!(statuses(&clone), indexed, "in a clone");
}

#[test]
fn the_backfill_window_counts_from_the_newest_commit_and_can_be_widened() {
    // Ten commits 30 days apart, the newest two years before today.
    let mut repo = TestRepo::new();
    let newest = 1_700_000_000u64;
    let mut shas = Vec::new();
    for i in 0..10u64 {
        repo.write(
            "src/lib.rs",
            format!("pub fn f() -> u64 {{ {i} }}\npub fn g{i}() {{}}\n"),
        );
        shas.push(repo.commit_at(&format!("c{i}"), newest - (9 - i) * 30 * 86_400));
    }
    let indexed =
        |repo: &TestRepo| json(&repo.ok(&["status", "--json"]))["indexed_commits"].clone();
    let out = repo.diffidx(&["init", "--no-hooks"]);
    let err = common::succeeded(&out);
    // Days 0, 30, 60 and 90 before the newest commit.
    assert_eq!(indexed(&repo), 4, "{err}");
    assert!(
        err.contains("the last 90 days before the newest commit"),
        "{err}"
    );
    assert!(err.contains("6 older commits are not indexed"), "{err}");
    let status = json(&repo.ok(&["status", "--json"]));
    assert_eq!(status["unindexed_commits"], 6);
    assert_eq!(status["oldest_indexed"]["commit"], shas[6].as_str());

    // `log` says where the indexed history begins, so that a truncated
    // answer is not taken for a symbol's whole life.
    let log = repo.diffidx(&["log", "f"]);
    let err = common::succeeded(&log);
    let start = repo.git(&["log", "-1", "--format=%aI", &shas[6]]);
    assert!(
        err.contains(&format!("history before {}", &start[..19])) && err.contains("is not indexed"),
        "{err} {start}"
    );
    // A plain index has nothing new; a wider window goes past the notes.
    assert!(common::succeeded(&repo.diffidx(&["index"])).contains("already up to date"));
    common::succeeded(&repo.diffidx(&["index", "--days", "150"]));
    assert_eq!(indexed(&repo), 6);
    let date = repo.git(&["log", "-1", "--format=%aI", &shas[2]]);
    common::succeeded(&repo.diffidx(&["index", "--since", date.trim()]));
    assert_eq!(indexed(&repo), 8);
    common::succeeded(&repo.diffidx(&["index", "--all"]));
    assert_eq!(indexed(&repo), 10);
    let status = json(&repo.ok(&["status", "--json"]));
    assert_eq!(status["unindexed_commits"], 0);
    assert_eq!(status["oldest_indexed"]["commit"], shas[0].as_str());
    let err = common::succeeded(&repo.diffidx(&["log", "f"]));
    assert!(!err.contains("is not indexed"), "{err}");
    assert_eq!(
        history(&repo, "g0"),
        [
            "DELETED function g0 src/lib.rs",
            "ADDED function g0 src/lib.rs"
        ]
    );

    let bad = repo.diffidx(&["index", "--since", "the day before"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is not a date"));
    let both = repo.diffidx(&["index", "--all", "--days", "3"]);
    assert_eq!(both.status.code(), Some(2));
}

#[test]
fn progress_shows_rate_and_eta_on_a_terminal_and_nothing_off_one() {
    let repo = one_function_edited(40);
    let plain = repo.diffidx(&["index"]);
    let err = common::succeeded(&plain);
    assert!(!err.contains('\r') && !err.contains("ETA"), "{err}");

    repo.git(&["update-ref", "-d", "refs/notes/diffidx"]);
    std::fs::remove_dir_all(repo.path().join(".git/diffidx")).unwrap();
    // `script` gives the run a terminal; a terminal of a known kind, since
    // progress stays off on `TERM=dumb`, which the test's caller may have.
    let command = format!("{} index", common::bin().display());
    let out = std::process::Command::new("script")
        .args(["-qc", &command, "/dev/null"])
        .env("TERM", "xterm-256color")
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("/40 commits"), "{shown}");
    assert!(
        shown.contains("commits/s") && shown.contains("ETA"),
        "{shown}"
    );
}

#[test]
fn log_filters_by_date_and_author() {
    let repo = TestRepo::new();
    let base = 1_700_000_000u64;
    for (i, name) in ["Ada Lovelace", "Grace Hopper", "Ada Lovelace"]
        .iter()
        .enumerate()
    {
        repo.write("src/lib.rs", format!("pub fn f() -> u32 {{ {i} }}\n"));
        repo.git(&["add", "-A"]);
        let date = format!("{} +0000", base + i as u64 * 86_400);
        let out = repo
            .command("git")
            .args(["commit", "-q", "-m", &format!("c{i}")])
            .env("GIT_AUTHOR_NAME", name)
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date)
            .output()
            .unwrap();
        assert!(out.status.success());
    }
    repo.ok(&["index", "-q"]);
    let count = |args: &[&str]| -> usize {
        let mut all = vec!["log", "f", "--json"];
        all.extend_from_slice(args);
        json(&repo.ok(&all)).as_array().unwrap().len()
    };
    assert_eq!(count(&[]), 3);
    assert_eq!(count(&["--author", "grace"]), 1);
    assert_eq!(count(&["--author", "LOVELACE"]), 2);
    assert_eq!(count(&["--since", "@1700086400"]), 2);
    assert_eq!(count(&["--until", "@1700086400"]), 2);
    assert_eq!(
        count(&["--since", "@1700086400", "--until", "@1700086400"]),
        1
    );
    let bad = repo.diffidx(&["log", "f", "--since", "last blue moon"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is not a date"));
}

#[test]
fn log_during_a_rebuild_says_so_and_after_a_killed_one_says_what_to_run() {
    let repo = one_function_edited(5);
    repo.ok(&["index", "-q"]);
    let expected = repo.ok(&["log", "f", "--json"]);
    // A rebuild stopped after loading its batch, before it finished.
    let rebuild = repo
        .command(common::bin())
        .args(["rebuild"])
        .env("DIFFIDX_FAULT", "store-committed:stop")
        .spawn()
        .unwrap();
    common::wait_until_stopped(rebuild.id(), "the rebuild never stopped");
    let out = repo.diffidx(&["log", "f"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "being rebuilt from the notes (by pid {})",
            rebuild.id()
        )),
        "{err}"
    );
    // Killed there instead: log names the repair, and index finishes it.
    std::process::Command::new("kill")
        .args(["-9", &rebuild.id().to_string()])
        .status()
        .unwrap();
    let mut rebuild = rebuild;
    let _ = rebuild.wait();
    let out = repo.diffidx(&["log", "f"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("rebuild of the index was interrupted"));
    common::succeeded(&repo.diffidx(&["index"]));
    assert_eq!(repo.ok(&["log", "f", "--json"]), expected);
}

/// A run of many commits writes its notes as packs (no object file each,
/// no repack), with the same blobs as runs that write them loose.
#[test]
fn a_large_index_run_leaves_its_notes_packed() {
    let mut repo = one_function_edited(210);
    let loose = |repo: &TestRepo| {
        repo.git(&["count-objects", "-v"])
            .lines()
            .find_map(|l| l.strip_prefix("count: "))
            .unwrap()
            .parse::<u32>()
            .unwrap()
    };
    // The same history indexed in two short runs (150 commits, then 60),
    // whose notes are loose objects: the notes to expect.
    let short_runs = TestRepo::clone_of(repo.path(), 0);
    short_runs.git(&["reset", "-q", "--hard", "HEAD~60"]);
    common::succeeded(&short_runs.diffidx(&["index"]));
    short_runs.git(&["merge", "-q", "--ff-only", "origin/main"]);
    common::succeeded(&short_runs.diffidx(&["index"]));
    let loose_before = loose(&repo);
    assert!(loose_before > 600);
    let out = repo.diffidx(&["index", "--all"]);
    let err = common::succeeded(&out);
    // A store this small is not worth compacting, large run or not.
    assert!(!err.contains("compacted"), "{err}");
    // The notes went to packs, none of them kept from `git gc`: not one
    // loose object more, and each note is the same blob as the short runs'.
    assert_eq!(loose(&repo), loose_before);
    let packs: Vec<String> = std::fs::read_dir(repo.path().join(".git/objects/pack"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(packs.iter().any(|p| p.ends_with(".pack")), "{packs:?}");
    assert!(!packs.iter().any(|p| p.ends_with(".keep")), "{packs:?}");
    let noted = repo.git(&["notes", "--ref", "diffidx", "list"]);
    assert_eq!(noted.lines().count(), 210);
    assert_eq!(
        noted,
        short_runs.git(&["notes", "--ref", "diffidx", "list"])
    );
    repo.git(&["fsck", "--strict", "--no-dangling"]);
    repo.ok(&["fsck"]);
    assert_eq!(history(&repo, "f").len(), 210);
    // A small run leaves git's own housekeeping to git.
    repo.write("src/lib.rs", "pub fn f() -> u32 { 0 }\n");
    repo.commit("one more");
    let err = common::succeeded(&repo.diffidx(&["index"]));
    assert!(!err.contains("compacted"), "{err}");
    assert!(loose(&repo) > 0);
    assert_eq!(history(&repo, "f").len(), 211);
    repo.ok(&["fsck"]);

    // A rebuild rewrites the store compactly, and the compacted store takes
    // writes as before.
    let err = common::succeeded(&repo.diffidx(&["rebuild"]));
    assert!(err.contains("compacted the store from"), "{err}");
    repo.write("src/lib.rs", "pub fn f() -> u32 { 1 }\n");
    repo.commit("after the rebuild");
    common::succeeded(&repo.diffidx(&["index"]));
    assert_eq!(history(&repo, "f").len(), 212);
    repo.ok(&["fsck"]);

    // When compaction fails (here its export directory cannot be made),
    // it says so and the store is intact.
    std::fs::write(
        repo.path().join(".git/diffidx/graph.lbdb.export"),
        b"in the way",
    )
    .unwrap();
    let err = common::succeeded(&repo.diffidx(&["rebuild"]));
    assert!(
        err.contains("could not be compacted") && err.contains("it is intact"),
        "{err}"
    );
    assert_eq!(history(&repo, "f").len(), 212);
    repo.ok(&["fsck"]);
}

/// A store that one load made from nothing is left as it is, its size
/// the base the bloat rule measures growth from; one made by several loads,
/// past the floor, is compacted. (The floor is lowered to 0 so a small
/// history shows both.)
#[test]
fn a_store_made_by_one_load_is_not_compacted_one_of_several_loads_is() {
    let repo = one_function_edited(30);
    let floor = ("DIFFIDX_COMPACT_FLOOR", "0");
    let baseline = |repo: &TestRepo| {
        std::fs::read_to_string(repo.path().join(".git/diffidx/graph.lbdb.compacted")).ok()
    };

    let one_load = TestRepo::clone_of(repo.path(), 0);
    let err = common::succeeded(&one_load.diffidx_env(&["index", "--all"], &[floor]));
    assert!(!err.contains("compacted"), "{err}");
    let size = std::fs::metadata(one_load.path().join(".git/diffidx/graph.lbdb"))
        .unwrap()
        .len();
    assert_eq!(baseline(&one_load), Some(format!("{size}\n")));
    assert_eq!(history(&one_load, "f").len(), 30);

    let loads = TestRepo::clone_of(repo.path(), 0);
    let err = common::succeeded(&loads.diffidx_env(
        &["index", "--all"],
        &[floor, ("DIFFIDX_BATCH_COMMITS", "10")],
    ));
    assert!(err.contains("compacted the store from"), "{err}");
    assert_eq!(history(&loads, "f").len(), 30);
    loads.ok(&["fsck"]);
    // Growth is measured from there: the next small run compacts nothing.
    let mut loads = loads;
    loads.write("src/lib.rs", "pub fn g() {}\n");
    loads.commit("one more");
    let err = common::succeeded(&loads.diffidx_env(&["index"], &[floor]));
    assert!(!err.contains("compacted"), "{err}");
}

/// `rebuild --timings` breaks a rebuild down as `index --timings` does a
/// run, the code graph built from scratch included.
#[test]
fn rebuild_timings_break_a_rebuild_down_by_stage() {
    let mut repo = TestRepo::new();
    repo.write("src/Cart.cs", "class Cart { int Total() => 1; }\n");
    repo.commit("cart");
    common::succeeded(&repo.diffidx(&["index", "--quiet"]));
    let said = common::succeeded(&repo.diffidx(&["rebuild", "--timings"]));
    assert!(
        said.lines()
            .any(|l| l.starts_with("timings: 0 commits computed in ")),
        "{said}"
    );
    let graph = said
        .lines()
        .find(|l| l.trim_start().starts_with("code graph:"))
        .unwrap_or_default();
    assert!(
        graph.contains("1 of 1 files read") && graph.ends_with("1 derived, 1 of them written"),
        "{said}"
    );
    for stage in ["load", "parse", "resolve", "write"] {
        assert!(
            said.lines().any(|l| l.trim_start().starts_with(stage)),
            "{stage}: {said}"
        );
    }
    // Without the flag, none of it.
    let said = common::succeeded(&repo.diffidx(&["rebuild"]));
    assert!(!said.contains("timings:"), "{said}");
}

/// `index --timings` says where the run's time went, stage by stage: the
/// run's own thread (its stages add up to the run), then the diffing
/// thread beside it.
#[test]
fn timings_break_a_run_down_by_stage() {
    let mut repo = TestRepo::new();
    repo.write("src/Cart.cs", "class Cart { int Total() => 1; }\n");
    repo.commit("cart");
    repo.write("src/Cart.cs", "class Cart { int Total() => 2; }\n");
    repo.commit("total");
    let out = repo.diffidx(&["index", "--quiet", "--timings"]);
    common::succeeded(&out);
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    let mut lines = said.lines();
    let head = lines.next().unwrap_or_default();
    assert!(
        head.starts_with("timings: 2 commits computed in "),
        "{said}"
    );
    let parse = |line: &str| {
        let (name, rest) = line.trim().split_at(11);
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let secs: f64 = fields[0].parse().unwrap();
        let share: f64 = fields[2].trim_end_matches('%').parse().unwrap();
        (name.trim().to_owned(), secs, share)
    };
    let writer: Vec<&str> = lines.by_ref().take_while(|l| l.starts_with("  ")).collect();
    let stages: Vec<(String, f64, f64)> = writer.iter().map(|l| parse(l)).collect();
    let names: Vec<&str> = stages.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["sync", "walk", "notes", "store", "idle", "graph", "search", "compact", "other"],
        "{said}"
    );
    // The run's own thread: its stages add up to the run.
    let total_share: f64 = stages.iter().map(|(_, _, share)| share).sum();
    assert!((total_share - 100.0).abs() < 1.0, "{said}");
    let diffing: Vec<&str> = lines.collect();
    let names: Vec<String> = diffing[..6].iter().map(|l| parse(l).0).collect();
    assert_eq!(
        names,
        [
            "tree diff",
            "read blobs",
            "parse",
            "extract",
            "label",
            "blocked"
        ],
        "{said}"
    );
    // Each version of Cart.cs parsed once, the second incrementally from
    // the first, which the second commit found parsed.
    assert_eq!(
        diffing[6].trim(),
        "2 file versions parsed (0.0 MiB, 1 incrementally), 1 found parsed in the cache",
        "{said}"
    );
    // The code graph read Cart.cs with the facts its last parse found,
    // not by parsing it again.
    assert_eq!(
        diffing[7].trim(),
        "code graph: 1 of 1 files read (1 with the facts the diffing found, 0 with facts kept \
         from an earlier graph), 1 derived, 1 of them written",
        "{said}"
    );
    // Then the graph's stages, each timed.
    let graph_stages: Vec<&str> = diffing[8..12]
        .iter()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(
        graph_stages,
        ["load", "parse", "resolve", "write"],
        "{said}"
    );
    // Opening and writing the store takes milliseconds at least.
    let store = stages.iter().find(|(n, _, _)| n == "store").unwrap();
    assert!(store.1 > 0.0, "{said}");
}

fn history_dump(repo: &TestRepo) -> Vec<String> {
    let git = diffidx_core::git::Repo::discover(repo.path()).unwrap();
    let store = diffidx_lib::open::for_reading(&git, std::time::Duration::from_secs(10)).unwrap();
    store.history_dump().unwrap()
}

/// One run loads a history in one batch; a run per commit loads it in as
/// many. Row for row the stores are the same: new symbols and links are
/// copied in, stored ones updated, a move undone and redone links the same
/// pair again with the later commit, and a move that also renames the
/// enclosing type finds the old symbol by its text. The one batch finds
/// what is stored by scanning the tables, the runs per commit by looking
/// their keys up.
#[test]
fn a_history_loaded_commit_by_commit_equals_one_loaded_at_once() {
    let (mut repo, mut shas) = eventful_repo();
    let tax = "        decimal Tax(decimal net) { return net * 0.25m; }\n";
    let billing = |members: &str| {
        format!("namespace Shop\n{{\n    class Billing\n    {{\n{members}        void Other() {{ }}\n    }}\n}}\n")
    };
    let taxes =
        |class: &str| format!("namespace Shop\n{{\n    class {class}\n    {{\n{tax}    }}\n}}\n");
    for (message, invoicing, taxes_file) in [
        ("tax back to billing", billing(tax), None),
        ("tax out again", billing(""), Some(taxes("Taxes"))),
        ("tax back", billing(tax), None),
        (
            "tax out again, to a renamed class",
            billing(""),
            Some(taxes("Levies")),
        ),
    ] {
        repo.write("src/Invoicing.cs", invoicing);
        match taxes_file {
            Some(text) => repo.write("src/Taxes.cs", text),
            None if repo.path().join("src/Taxes.cs").exists() => repo.remove("src/Taxes.cs"),
            None => {}
        }
        shas.push(repo.commit(message));
    }
    let stepwise = TestRepo::clone_of(repo.path(), 100);
    common::succeeded(&repo.diffidx_env(&["index"], &[("DIFFIDX_LOOKUPS_AT_MOST", "0")]));
    for sha in &shas {
        common::succeeded(&stepwise.diffidx(&["index", sha]));
    }
    let at_once = history_dump(&repo);
    let one_by_one = history_dump(&stepwise);
    let moves = at_once.iter().filter(|l| l.starts_with("moved ")).count();
    assert!(moves >= 3, "{at_once:#?}");
    let only = |a: &[String], b: &[String]| -> Vec<String> {
        a.iter().filter(|l| !b.contains(l)).cloned().collect()
    };
    assert_eq!(
        (only(&at_once, &one_by_one), only(&one_by_one, &at_once)),
        (Vec::new(), Vec::new()),
        "rows only loaded at once, rows only loaded one by one"
    );
    assert_eq!(at_once.len(), one_by_one.len());
}

/// A store loaded from notes (a `rebuild`, or a clone that fetched them) is
/// the store the run that wrote the notes loaded, row for row: the same
/// files, the lines a comment-only edit moved (kept by the symbols a rename
/// left at the old path), and the commits numbered in the same order
/// around a merge of a branch older than the main line.
#[test]
fn a_store_loaded_from_notes_equals_the_one_the_indexing_run_loaded() {
    let (mut repo, _) = eventful_repo();
    side_branch(&mut repo);
    // A licence header: no symbol changes, but every line moves.
    repo.write(
        "src/Invoicing.cs",
        "// Copyright Shop.\n// All rights reserved.\nnamespace Shop\n{\n    class Billing\n    {\n        void Other() { }\n    }\n}\n",
    );
    repo.commit("licence header");
    repo.git(&["merge", "-q", "--no-ff", "side", "-m", "merge side"]);
    // The symbols at the old path stay, where the header moved them.
    repo.git(&["mv", "src/Invoicing.cs", "src/Ledger.cs"]);
    repo.commit("rename invoicing");
    repo.ok(&["index", "-q"]);
    let indexed = history_dump(&repo);
    assert!(
        indexed.iter().any(|l| l.starts_with("symbol ")
            && l.contains("src/Invoicing.cs | Shop.Billing.Other | Other")
            && l.contains("| 7 | 7 |")),
        "{indexed:#?}"
    );
    let only = |a: &[String], b: &[String]| -> Vec<String> {
        a.iter().filter(|l| !b.contains(l)).cloned().collect()
    };
    repo.ok(&["rebuild"]);
    let rebuilt = history_dump(&repo);
    assert_eq!(
        (only(&indexed, &rebuilt), only(&rebuilt, &indexed)),
        (Vec::new(), Vec::new()),
        "rows only indexed, rows only rebuilt"
    );
    let clone = clone_with_notes(&repo);
    let out = clone.diffidx(&["index"]);
    let said = common::succeeded(&out);
    assert!(said.contains("0 computed, 9 from existing notes"), "{said}");
    let imported = history_dump(&clone);
    assert_eq!(
        (only(&indexed, &imported), only(&imported, &indexed)),
        (Vec::new(), Vec::new()),
        "rows only indexed, rows only imported"
    );
}

/// A long run is diffed file by file, a short one commit by commit; both
/// give the same notes, byte for byte, and the same store, on a history
/// with renames, a move across files, a merge of an older branch, a
/// comment-only edit, a change of language and a rename linked only
/// through its rewritten caller (which the file-by-file run reads without
/// the texts), on one thread or two and with the run cut into windows of
/// two commits.
#[test]
fn a_history_diffed_file_by_file_equals_one_diffed_commit_by_commit() {
    let (mut repo, _) = eventful_repo();
    side_branch(&mut repo);
    repo.git(&["checkout", "-q", "side"]);
    repo.write(
        "src/Audit.cs",
        "namespace Shop\n{\n    class Audit\n    {\n        void Log() { Flush(); }\n        void Flush() { }\n    }\n}\n",
    );
    repo.commit("audit flushes");
    repo.git(&["checkout", "-q", "main"]);
    repo.write(
        "src/Invoicing.cs",
        "// Copyright Shop.\nnamespace Shop\n{\n    class Billing\n    {\n        void Other() { }\n    }\n}\n",
    );
    repo.commit("licence header");
    let checker = |method: &str, params: &str, body: &str, call: &str| {
        format!(
            "class Checker {{\n    void {method}({params}) {{\n        for (Object e : errors) {{ {body} }}\n    }}\n    void process(File f) {{\n        {method}({call});\n    }}\n}}\n"
        )
    };
    repo.write(
        "src/Checker.java",
        checker(
            "displayErrors",
            "String file, List errors",
            "log.println(file + e);",
            "f.getName(), errors",
        ),
    );
    repo.commit("checker");
    repo.write(
        "src/Checker.java",
        checker(
            "fireErrors",
            "List errors, String file",
            "listeners.fire(new Event(file, e));",
            "errors, f.getName()",
        ),
    );
    let fired = repo.commit("errors go to listeners");
    repo.write("src/calc.rs", "pub fn total(a: u32) -> u32 { a * 2 }\n");
    repo.commit("calc");
    repo.git(&["merge", "-q", "--no-ff", "side", "-m", "merge side"]);
    repo.git(&["mv", "src/Invoicing.cs", "src/Ledger.cs"]);
    repo.write(
        "src/calc.rs",
        "pub fn total(a: u32) -> u32 { a * 3 }\npub fn half(a: u32) -> u32 { a / 2 }\n",
    );
    repo.commit("rename invoicing, change calc");
    repo.git(&["mv", "src/calc.rs", "src/Calc.cs"]);
    repo.write(
        "src/Calc.cs",
        "namespace Shop\n{\n    class Calc\n    {\n        int Total(int a) { return a * 3; }\n    }\n}\n",
    );
    repo.commit("calc in C#");
    let run = |env: &[(&str, &str)]| {
        let clone = TestRepo::clone_of(repo.path(), 100);
        common::succeeded(&clone.diffidx_env(&["index", "-q"], env));
        let notes = clone.git(&["rev-parse", "refs/notes/diffidx^{tree}"]);
        // The rename's evidence is the caller: its texts share too little.
        let note = json(&clone.ok(&["show", "--json", &fired]));
        let from = note["deltas"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["qualname"] == "Checker.fireErrors")
            .map(|d| {
                (
                    d["from"]["qualname"].clone(),
                    d["from"]["similarity"].clone(),
                )
            });
        let similarity = from.as_ref().and_then(|(_, s)| s.as_f64());
        assert!(
            from.as_ref()
                .is_some_and(|(q, _)| q == "Checker.displayErrors")
                && similarity.is_some_and(|s| s < 0.3),
            "{env:?}: {from:?}"
        );
        (notes, history_dump(&clone))
    };
    let (by_commit, by_commit_rows) = run(&[("DIFFIDX_BY_FILE", "never")]);
    for env in [
        &[("DIFFIDX_BY_FILE", "always")][..],
        &[("DIFFIDX_BY_FILE", "always"), ("DIFFIDX_DIFF_THREADS", "1")],
        &[
            ("DIFFIDX_BY_FILE", "always"),
            ("DIFFIDX_BY_FILE_WINDOW", "2"),
        ],
    ] {
        let (notes, rows) = run(env);
        assert_eq!(notes, by_commit, "notes trees, {env:?}");
        assert_eq!(rows, by_commit_rows, "{env:?}");
    }
    // Not a history without changes: the notes say what moved.
    let moves = by_commit_rows
        .iter()
        .filter(|l| l.starts_with("moved "))
        .count();
    assert!(moves >= 2, "{by_commit_rows:#?}");
}

/// A merge that resolves a modify/delete conflict by renaming the method
/// keeps the addition (the branch that deleted it lacks both names) but
/// not the deletion (the other parent had it): its note links the addition
/// to no deletion, and so passes the validation every fetched note gets.
#[test]
fn a_merge_links_no_lineage_to_a_deletion_it_does_not_keep() {
    let mut repo = TestRepo::new();
    let body = "{ var total = 0; for (var i = 0; i < 10; i++) { total += i * i; } return total; }";
    repo.write(
        "Calc.cs",
        format!("class Calc\n{{\n    int Sum() {body}\n}}\n"),
    );
    repo.commit("calc");
    repo.git(&["checkout", "-q", "-b", "side"]);
    repo.write("Calc.cs", "class Calc\n{\n}\n");
    repo.commit("drop sum");
    repo.git(&["checkout", "-q", "main"]);
    repo.write(
        "Calc.cs",
        format!("class Calc\n{{\n    int Sum() {body}\n    void Keep() {{ }}\n}}\n"),
    );
    repo.commit("keep");
    repo.git(&["merge", "-q", "-s", "ours", "--no-commit", "side"]);
    repo.write(
        "Calc.cs",
        format!("class Calc\n{{\n    int Total() {body}\n    void Keep() {{ }}\n}}\n"),
    );
    let merge = repo.commit("merge: sum is total now");
    repo.ok(&["index", "-q"]);
    let note = json(&note_of(&repo, &merge));
    let deltas: Vec<String> = note["deltas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            format!(
                "{} {} {}",
                d["status"],
                d["qualname"],
                d.get("from").is_some()
            )
        })
        .collect();
    assert_eq!(
        deltas,
        [
            r#""MODIFIED" "Calc" false"#,
            r#""ADDED" "Calc.Total" false"#
        ],
        "{note}"
    );
    let out = repo.diffidx(&["rebuild"]);
    let said = common::succeeded(&out);
    assert!(!said.contains("rejected"), "{said}");
}

/// The diffing thread fails on a commit whose blob is damaged: the commits
/// it diffed before are written (notes and store), the run says what
/// failed, and once the object is whole again the next run finishes.
#[test]
fn a_diff_that_fails_mid_run_keeps_what_was_diffed_before_it() {
    let mut repo = TestRepo::new();
    let mut shas = Vec::new();
    for i in 0..3 {
        repo.write("src/lib.rs", format!("pub fn f() -> u32 {{ {i} }}\n"));
        shas.push(repo.commit(&format!("f {i}")));
    }
    let blob = repo.git(&["rev-parse", &format!("{}:src/lib.rs", shas[2])]);
    let blob = blob.trim();
    let object = repo
        .path()
        .join(".git/objects")
        .join(&blob[..2])
        .join(&blob[2..]);
    let whole = std::fs::read(&object).unwrap();
    let mut permissions = std::fs::metadata(&object).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    permissions.set_readonly(false);
    std::fs::set_permissions(&object, permissions).unwrap();
    std::fs::write(&object, b"not a zlib stream").unwrap();
    let out = repo.diffidx(&["index"]);
    assert!(!out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains(&blob[..7]), "{said}");
    let noted: Vec<bool> = shas
        .iter()
        .map(|sha| {
            repo.command("git")
                .args(["notes", "--ref=diffidx", "show", sha])
                .output()
                .unwrap()
                .status
                .success()
        })
        .collect();
    assert_eq!(noted, [true, true, false]);
    assert_eq!(history(&repo, "f").len(), 2);
    std::fs::write(&object, whole).unwrap();
    common::succeeded(&repo.diffidx(&["index"]));
    assert_eq!(history(&repo, "f").len(), 3);
}
