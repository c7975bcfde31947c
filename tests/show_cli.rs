//! `git diffidx show` behaviour beyond single fixtures: determinism, ranges,
//! merges, patches, limits and errors.

mod common;

use common::{summarize, TestRepo};

const CLASS_V1: &str =
    "namespace N\n{\n    class C\n    {\n        void A() { }\n        void B() { }\n    }\n}\n";
const CLASS_V2: &str = "namespace N\n{\n    class C\n    {\n        void A() { Run(); }\n        void B() { }\n    }\n}\n";
const CLASS_V3: &str = "namespace N\n{\n    class C\n    {\n        void A() { Run(); }\n        void B() { Stop(); }\n    }\n}\n";

fn repo_with_history() -> (TestRepo, Vec<String>) {
    let mut repo = TestRepo::new();
    repo.write("C.cs", CLASS_V1);
    let c1 = repo.commit("v1");
    repo.write("C.cs", CLASS_V2);
    let c2 = repo.commit("v2");
    repo.write("C.cs", CLASS_V3);
    let c3 = repo.commit("v3");
    (repo, vec![c1, c2, c3])
}

#[test]
fn json_is_deterministic_and_sorted() {
    let (repo, commits) = repo_with_history();
    let a = repo.ok(&["show", "--json", &commits[2]]);
    let b = repo.ok(&["show", "--json", &commits[2]]);
    assert_eq!(a, b);
    let note: serde_json::Value = serde_json::from_str(&a).unwrap();
    assert_eq!(note["v"], 1);
    assert_eq!(note["commit"], commits[2].as_str());
    assert_eq!(note["parent"], commits[1].as_str());
    assert!(note["tool"].as_str().unwrap().starts_with("diffidx "));
    let deltas = note["deltas"].as_array().unwrap();
    let keys: Vec<(String, u64, String)> = deltas
        .iter()
        .map(|d| {
            (
                d["path"].as_str().unwrap().to_owned(),
                d["start_line"].as_u64().unwrap(),
                d["id"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    // The method's parent is the class, by id.
    let class_id = deltas.iter().find(|d| d["kind"] == "class").unwrap()["id"].clone();
    let method = deltas.iter().find(|d| d["kind"] == "method").unwrap();
    assert_eq!(method["parent_id"], class_id);
    assert_eq!(method["content_hash"].as_str().unwrap().len(), 64);
}

#[test]
fn range_is_the_net_change_between_trees() {
    let (repo, commits) = repo_with_history();
    let range = format!("{}..{}", commits[0], commits[2]);
    assert_eq!(
        summarize(&repo.ok(&["show", "--json", &range])),
        [
            "MODIFIED namespace N C.cs:1-8",
            "MODIFIED class N.C C.cs:3-7",
            "MODIFIED method N.C.A() C.cs:5-5",
            "MODIFIED method N.C.B() C.cs:6-6",
        ]
    );
    // A change undone within the range is no change at all.
    let mut repo = repo;
    repo.write("C.cs", CLASS_V1);
    let c4 = repo.commit("revert");
    let range = format!("{}..{}", commits[0], c4);
    assert!(summarize(&repo.ok(&["show", "--json", &range])).is_empty());
}

#[test]
fn three_dot_range_starts_at_the_merge_base() {
    let (mut repo, commits) = repo_with_history();
    repo.git(&["checkout", "-q", "-b", "feature", &commits[1]]);
    repo.write("D.cs", "class D { void E() { } }\n");
    repo.commit("feature");
    // main moved on (v3 changed B); the PR view shows only the feature's change.
    let out = repo.ok(&["show", "--json", "main...feature"]);
    assert_eq!(
        summarize(&out),
        ["ADDED class D D.cs:1-1", "ADDED method D.E() D.cs:1-1"]
    );
    let note: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(note["parent"], commits[1].as_str());
}

#[test]
fn merge_commits_add_only_their_own_resolutions() {
    let mut repo = TestRepo::new();
    repo.write("A.cs", "class A { void One() { } }\n");
    repo.write("B.cs", "class B { void Two() { } }\n");
    repo.commit("base");
    repo.git(&["checkout", "-q", "-b", "side"]);
    repo.write("B.cs", "class B { void Two() { Side(); } }\n");
    repo.commit("side edit");
    repo.git(&["checkout", "-q", "main"]);
    repo.write("A.cs", "class A { void One() { Main(); } }\n");
    repo.commit("main edit");
    repo.git(&["merge", "-q", "--no-edit", "--no-ff", "side"]);
    assert!(summarize(&repo.ok(&["show", "--json"])).is_empty());

    // An "evil" merge that changes a symbol neither parent had keeps that change.
    repo.git(&["checkout", "-q", "-b", "side2", "HEAD~1"]);
    repo.write(
        "A.cs",
        "class A { void One() { Main(); } void Three() { } }\n",
    );
    repo.commit("side2");
    repo.git(&["checkout", "-q", "main"]);
    repo.git(&["merge", "-q", "--no-commit", "--no-ff", "side2"]);
    repo.write("B.cs", "class B { void Two() { Resolved(); } }\n");
    repo.commit("evil merge");
    let mut summary = summarize(&repo.ok(&["show", "--json"]));
    summary.sort();
    assert_eq!(
        summary,
        [
            "MODIFIED class B B.cs:1-1",
            "MODIFIED method B.Two() B.cs:1-1"
        ]
    );
}

#[test]
fn patch_from_stdin_labels_like_a_commit() {
    let (mut repo, _) = repo_with_history();
    let v4 = CLASS_V3.replace(
        "void B() { Stop(); }",
        "void B() { Stop(); }\n        int D => 1;",
    );
    repo.write("C.cs", &v4);
    repo.write("New.rs", "fn fresh() {}\n");
    repo.git(&["add", "-N", "New.rs"]);
    let patch = repo.git(&["diff"]);
    let from_patch =
        repo.diffidx_with_stdin(&["show", "--json", "--patch", "-"], Some(patch.as_bytes()));
    common::succeeded(&from_patch);
    let from_patch = String::from_utf8(from_patch.stdout).unwrap();
    let note: serde_json::Value = serde_json::from_str(&from_patch).unwrap();
    assert_eq!(note["commit"], serde_json::Value::Null);
    repo.commit("v4");
    assert_eq!(
        summarize(&from_patch),
        summarize(&repo.ok(&["show", "--json"]))
    );
    assert!(summarize(&from_patch).contains(&"ADDED property N.C.D C.cs:7-7".to_string()));
}

#[test]
fn patch_that_does_not_apply_is_refused() {
    let (repo, _) = repo_with_history();
    let patch =
        "--- a/C.cs\n+++ b/C.cs\n@@ -5,1 +5,1 @@\n-        void Z() { }\n+        void Y() { }\n";
    let out = repo.diffidx_with_stdin(&["show", "--patch", "-"], Some(patch.as_bytes()));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("does not apply to C.cs"), "{err}");
    assert!(err.contains("git diffidx show --patch FILE REV"), "{err}");
}

#[test]
fn a_patch_from_another_base_applies_there_and_other_files_are_not_read() {
    let (repo, commits) = repo_with_history();
    // `git diff v1 v2` plus a lock file the history never had.
    let mut patch = repo.git(&["diff", &commits[0], &commits[1]]);
    patch.push_str(
        "diff --git a/Cargo.lock b/Cargo.lock\n--- a/Cargo.lock\n+++ b/Cargo.lock\n@@ -1,1 +1,1 @@\n-version = 1\n+version = 2\n",
    );
    let from_commit = summarize(&repo.ok(&["show", "--json", &commits[1]]));
    // git's `index` lines name the pre-images: the patch applies at HEAD (v3)
    // too, and the lock file is skipped.
    let out = repo.diffidx_with_stdin(&["show", "--patch", "-", "--json"], Some(patch.as_bytes()));
    common::succeeded(&out);
    assert_eq!(
        summarize(&String::from_utf8_lossy(&out.stdout)),
        from_commit
    );
    // Without them, at HEAD the C# hunk does not apply; the message names the fix.
    let bare: String = patch
        .lines()
        .filter(|l| !l.starts_with("index "))
        .map(|l| format!("{l}\n"))
        .collect();
    let out = repo.diffidx_with_stdin(&["show", "--patch", "-", "--json"], Some(bare.as_bytes()));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("C.cs") && err.contains("REV is A"), "{err}");
    assert!(!err.contains("Cargo.lock"), "{err}");
    // Against the commit it was made from, it applies.
    let out = repo.diffidx_with_stdin(
        &["show", "--patch", "-", &commits[0], "--json"],
        Some(bare.as_bytes()),
    );
    common::succeeded(&out);
    assert_eq!(
        summarize(&String::from_utf8_lossy(&out.stdout)),
        from_commit
    );
}

#[test]
fn size_limit_from_flag_and_git_config() {
    let mut repo = TestRepo::new();
    repo.write(
        "Big.cs",
        format!("class Big {{\n{}}}\n", "    int f;\n".repeat(200)),
    );
    repo.write("Small.cs", "class Small { }\n");
    repo.commit("files");
    let json = repo.ok(&["show", "--json", "--max-file-size", "1000"]);
    assert_eq!(summarize(&json), ["ADDED class Small Small.cs:1-1"]);
    assert!(json.contains("\"problem\":\"too_large\""));
    repo.git(&["config", "diffidx.maxFileSize", "1k"]);
    let json = repo.ok(&["show", "--json"]);
    assert!(
        json.contains("\"path\":\"Big.cs\",\"problem\":\"too_large\""),
        "{json}"
    );
    repo.git(&["config", "--unset", "diffidx.maxFileSize"]);
    assert!(!repo.ok(&["show", "--json"]).contains("too_large"));
}

#[test]
fn symlinks_and_submodules_are_ignored() {
    let mut repo = TestRepo::new();
    repo.write("Real.cs", "class Real { }\n");
    std::os::unix::fs::symlink("Real.cs", repo.path().join("Link.cs")).unwrap();
    // A gitlink entry, as a submodule leaves in the tree.
    let sha = repo.commit("real and link");
    repo.git(&[
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("160000,{sha},Sub.cs"),
    ]);
    repo.git(&["commit", "-q", "-m", "submodule"]);
    assert!(summarize(&repo.ok(&["show", "--json"])).is_empty());
    assert_eq!(
        summarize(&repo.ok(&["show", "--json", "HEAD~1"])),
        ["ADDED class Real Real.cs:1-1"]
    );
}

#[test]
fn errors_say_what_failed_and_exit_with_the_right_code() {
    let (repo, _) = repo_with_history();
    let out = repo.diffidx(&["show", "no-such-branch"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown revision 'no-such-branch': no branch, tag or commit of that name"),
        "{err}"
    );
    // Past the start of history: git's words, not the parser's.
    let out = repo.diffidx(&["show", "HEAD~99999"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("the history is not that long"), "{err}");
    assert!(!err.contains("NthAncestor"), "{err}");

    let out = repo.diffidx(&["show", "--bogus-flag"]);
    assert_eq!(out.status.code(), Some(2));

    let empty = TestRepo::new();
    let out = empty.diffidx(&["show"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no commits yet"));

    let not_a_repo = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(common::bin())
        .args(["-C", not_a_repo.path().to_str().unwrap(), "show"])
        .env(
            "GIT_CEILING_DIRECTORIES",
            not_a_repo.path().parent().unwrap(),
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot open a git repository"));
}

#[test]
fn shallow_clone_with_missing_parent_explains_itself() {
    let (repo, _) = repo_with_history();
    let clone = tempfile::tempdir().unwrap();
    let url = format!("file://{}", repo.path().display());
    let status = std::process::Command::new("git")
        .args([
            "clone",
            "-q",
            "--depth",
            "1",
            &url,
            clone.path().to_str().unwrap(),
        ])
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .unwrap();
    assert!(status.success());
    let out = std::process::Command::new(common::bin())
        .args(["-C", clone.path().to_str().unwrap(), "show"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("shallow clone"), "{err}");
    assert!(err.contains("git fetch --deepen"), "{err}");
}

#[test]
fn colors_only_when_asked_or_on_a_terminal() {
    let (repo, _) = repo_with_history();
    let plain = repo.ok(&["show"]);
    assert!(!plain.contains('\x1b'));
    let colored = repo.ok(&["show", "--color", "always"]);
    assert!(colored.contains("\x1b[1;33mMODIFIED"));
}

#[test]
fn control_and_bidi_characters_from_the_repository_are_printed_escaped() {
    let mut repo = TestRepo::new();
    // A file name and a commit subject that would clear the screen and
    // reverse the text if printed raw.
    let evil = "src/x\u{1b}[2J\u{202e}sr.rs";
    repo.write(evil, "fn run() {}\n");
    repo.commit("add \u{1b}]0;pwned\u{7} run");
    repo.write(evil, "fn run() { go(); }\n");
    repo.commit("edit run");
    repo.ok(&["index", "-q"]);
    for args in [
        &["show", "HEAD~1"][..],
        &["show", "HEAD"],
        &["log", "--symbol", "run"],
        &["log", "--symbol", "run", "-p"],
    ] {
        let out = repo.ok(args);
        assert!(
            !out.contains('\u{1b}') && !out.contains('\u{202e}') && !out.contains('\u{7}'),
            "{args:?}: {out:?}"
        );
        assert!(
            out.contains("src/x\\u{1b}[2J\\u{202e}sr.rs"),
            "{args:?}: {out}"
        );
    }
    let log = repo.ok(&["log", "--symbol", "run"]);
    assert!(log.contains("add \\u{1b}]0;pwned\\u{7} run"), "{log}");
    // --json keeps the exact text (JSON escapes it).
    let json = repo.ok(&["log", "--symbol", "run", "--json"]);
    assert!(json.contains("src/x\\u001b[2J\u{202e}sr.rs"), "{json}");
}

#[test]
fn long_output_goes_through_the_pager_only_on_a_terminal() {
    let (repo, _) = repo_with_history();
    repo.ok(&["index", "-q"]);
    let on_terminal = |args: &str, env: &[(&str, &str)]| {
        let command = format!("{} {args}", common::bin().display());
        let mut script = std::process::Command::new("script");
        script
            .args(["-qc", &command, "/dev/null"])
            .current_dir(repo.path())
            .env_remove("GIT_PAGER")
            .env_remove("PAGER");
        for (k, v) in env {
            script.env(k, v);
        }
        let out = script.output().unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).replace('\r', "")
    };
    let paged = on_terminal("show --color never", &[("GIT_PAGER", "sed s/^/PAGED:/")]);
    assert!(paged.contains("PAGED:MODIFIED"), "{paged}");
    let log = on_terminal("log C.B --color never", &[("PAGER", "sed s/^/VIA-PAGER:/")]);
    assert!(log.contains("VIA-PAGER:"), "{log}");
    let unpaged = on_terminal(
        "--no-pager show --color never",
        &[("GIT_PAGER", "sed s/^/PAGED:/")],
    );
    assert!(
        !unpaged.contains("PAGED:") && unpaged.contains("MODIFIED"),
        "{unpaged}"
    );
    repo.git(&["config", "core.pager", "sed s/^/CONFIGURED:/"]);
    let configured = on_terminal("show --color never", &[]);
    assert!(configured.contains("CONFIGURED:MODIFIED"), "{configured}");
    // Off a terminal (a pipe, a CI log) there is no pager.
    let piped = repo.diffidx_env(
        &["show", "--color", "never"],
        &[("GIT_PAGER", "sed s/^/PAGED:/")],
    );
    assert!(!String::from_utf8_lossy(&piped.stdout).contains("PAGED:"));
}

/// A minified bundle (every function on one line) and a file over the parse
/// budget are reported and skipped; the commit's other files are indexed.
#[test]
fn minified_code_and_files_over_the_parse_budget_are_reported_and_skipped() {
    let mut repo = TestRepo::new();
    let bundle: Vec<String> = (0..300)
        .map(|i| format!("function f{i}(a){{return a+{i}}}"))
        .collect();
    repo.write("dist/app.min.js", bundle.join(";") + "\n");
    repo.write("src/app.js", "function main() {\n  return 1;\n}\n");
    repo.commit("bundle");
    let json = repo.ok(&["show", "--json"]);
    assert_eq!(summarize(&json), ["ADDED function main src/app.js:1-3"]);
    assert!(
        json.contains("\"path\":\"dist/app.min.js\",\"problem\":\"minified\""),
        "{json}"
    );
    assert!(json.contains("300 symbols start on line 1"), "{json}");
    let human = repo.ok(&["show"]);
    assert!(human.contains("dist/app.min.js"), "{human}");
    assert!(human.contains("minified"), "{human}");

    // The limit is a setting.
    repo.git(&["config", "diffidx.maxSymbolsPerLine", "1000"]);
    let json = repo.ok(&["show", "--json"]);
    assert_eq!(summarize(&json).len(), 301, "{json}");
    assert!(!json.contains("minified"), "{json}");

    // So is the parse budget (a step is 100 parse operations: the bundle
    // takes many, the three-line file none).
    repo.git(&["config", "diffidx.maxParseSteps", "1"]);
    let json = repo.ok(&["show", "--json"]);
    assert_eq!(summarize(&json), ["ADDED function main src/app.js:1-3"]);
    assert!(
        json.contains("\"path\":\"dist/app.min.js\",\"problem\":\"parse_budget\""),
        "{json}"
    );
    // And `index` records the same note, and says what it skipped.
    let out = repo.diffidx(&["index"]);
    common::succeeded(&out);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("skipped 1 file version (1 parse_budget); the first, dist/app.min.js in "),
        "{said}"
    );
    let note = repo.ok(&["show", "--json"]);
    assert!(note.contains("parse_budget"), "{note}");
}

/// An indexed commit's note, written by this version, is what `show`
/// prints (without parsing anything); `--compute` computes it again, and a
/// note of another version is never printed as ours.
#[test]
fn show_prints_the_note_this_version_wrote_and_compute_recomputes() {
    let mut repo = TestRepo::new();
    repo.write("src/Cart.cs", "class Cart { int Total() => 1; }\n");
    repo.commit("cart");
    repo.write("src/Cart.cs", "class Cart { int Total() => 2; }\n");
    let sha = repo.commit("total");
    let computed = repo.ok(&["show", "--json"]);
    common::succeeded(&repo.diffidx(&["index"]));
    let note = repo.git(&["notes", "--ref", "diffidx", "show", &sha]);
    assert_eq!(repo.ok(&["show", "--json"]), computed);
    assert_eq!(note, computed);

    // A note that says something else: printed when this version wrote
    // it (it is the record), recomputed with --compute.
    let mut doc: serde_json::Value = serde_json::from_str(&note).unwrap();
    doc["deltas"] = serde_json::json!([]);
    let replace =
        |doc: &serde_json::Value| repo.put_note(&sha, &serde_json::to_string(doc).unwrap());
    replace(&doc);
    assert!(summarize(&repo.ok(&["show", "--json"])).is_empty());
    assert_eq!(repo.ok(&["show", "--json", "--compute"]), computed);
    // The same from another version is computed again.
    doc["tool"] = serde_json::json!("diffidx 0.0.0");
    replace(&doc);
    assert_eq!(repo.ok(&["show", "--json"]), computed);
}
