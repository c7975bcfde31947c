//! `git diffidx context`: a service map leads to a repository, the window's
//! commits are indexed lazily, and the answer is ranked symbol-level
//! records (deletions first), never diff text.

mod common;

use common::{succeeded, TestRepo};
use serde_json::Value;

const T0: u64 = 1_700_000_000;

/// A Rust repository: one commit before the window, two in it.
fn shop() -> TestRepo {
    let mut repo = TestRepo::new();
    repo.write(
        "src/cart.rs",
        "pub fn total() -> u32 { 1 }\npub fn tax() -> u32 { total() / 10 }\npub fn old_helper() {}\n",
    );
    repo.write(
        "src/pay/charge.rs",
        "use crate::cart::total;\npub fn charge() -> u32 { total() }\n",
    );
    repo.commit_at("first", T0);
    repo.write(
        "src/cart.rs",
        "pub fn total() -> u32 { 2 }\npub fn tax() -> u32 { total() / 10 }\n",
    );
    repo.commit_at("new total, no helper", T0 + 3600);
    repo.write(
        "src/pay/charge.rs",
        "use crate::cart::total;\npub fn charge() -> u32 { total() }\npub fn refund() -> u32 { 0 }\n",
    );
    repo.commit_at("refunds", T0 + 7200);
    repo
}

/// A service map in a temp dir of its own, and its path.
fn map_file(text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("services.toml");
    std::fs::write(&path, text).unwrap();
    let path = path.to_str().unwrap().to_owned();
    (dir, path)
}

/// Runs `context` in `repo` with a clean environment for map discovery.
fn context(repo: &TestRepo, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = repo.command(common::bin());
    cmd.arg("context")
        .args(args)
        .env_remove("DIFFIDX_SERVICE_MAP");
    cmd.envs(env.iter().copied());
    cmd.output().unwrap()
}

/// Asserts success; returns stdout.
fn stdout(out: &std::process::Output) -> String {
    succeeded(out);
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn records(out: &std::process::Output) -> Vec<Value> {
    serde_json::from_str::<Vec<Value>>(&stdout(out)).unwrap()
}

fn window() -> (String, String) {
    ((T0 + 1800).to_string(), (T0 + 10_000).to_string())
}

#[test]
fn a_window_is_indexed_lazily_and_ranked_deletions_first_with_callers() {
    let shop = shop();
    let (_maps, map) = map_file(&format!(
        "[services.shop]\nrepo = {:?}\nowners = [\"ada\"]\n",
        shop.path()
    ));
    let map = map.as_str();
    let (since, until) = window();
    let args = [
        "--service",
        "shop",
        "--since",
        &since,
        "--until",
        &until,
        "--map",
        map,
        "--json",
    ];
    let out = context(&shop, &args, &[]);
    let got = records(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("2 commits in the window, 2 indexed now"),
        "{stderr}"
    );
    let rows: Vec<(String, String)> = got
        .iter()
        .map(|r| {
            (
                r["status"].as_str().unwrap().to_owned(),
                r["qualname"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("DELETED".to_owned(), "old_helper".to_owned()),
            ("MODIFIED".to_owned(), "total".to_owned()),
            ("ADDED".to_owned(), "refund".to_owned()),
        ]
    );
    // Every documented field, and no diff text.
    let total = &got[1];
    for key in [
        "service",
        "repo",
        "commit",
        "time",
        "author",
        "subject",
        "status",
        "kind",
        "path",
        "qualname",
        "sig",
        "start_line",
        "end_line",
        "score",
    ] {
        assert!(total.get(key).is_some(), "{key} missing in {total}");
    }
    assert_eq!(total["service"], "shop");
    assert_eq!(total["subject"], "new total, no helper");
    assert_eq!(total["time"], "2023-11-14T23:13:20+00:00");
    assert_eq!(total["author"], "Ada Lovelace");
    assert_eq!(total["path"], "src/cart.rs");
    assert_eq!(total["kind"], "function");
    assert_eq!(total["callers"], 2, "{total}");
    assert_eq!(
        total["nearest_callers"],
        serde_json::json!(["charge", "tax"])
    );
    assert!(
        got[0].get("callers").is_none(),
        "a deleted symbol has no graph"
    );
    let scores: Vec<f64> = got.iter().map(|r| r["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    assert!(!out.stdout.windows(2).any(|w| w == b"@@"));

    // Only the window was indexed: the commit before it has no note.
    let noted = shop.git(&["notes", "--ref", "diffidx", "list"]);
    assert_eq!(noted.lines().count(), 2, "{noted}");

    // Warm: nothing to index, the same answer.
    let again = context(&shop, &args, &[]);
    assert_eq!(records(&again), got);
    assert!(!String::from_utf8_lossy(&again.stderr).contains("indexed now"));

    // A readable table too.
    let table = context(&shop, &args[..args.len() - 1], &[]);
    let table = stdout(&table);
    let first = table.lines().next().unwrap();
    assert!(
        first.contains("DELETED") && first.contains("old_helper"),
        "{table}"
    );
    assert!(table.contains("← charge and 1 more"), "{table}");
}

#[test]
fn unknown_services_missing_repositories_and_empty_windows_say_so() {
    let shop = shop();
    let (_maps, map) = map_file(&format!(
        "[services.shop]\nrepo = {:?}\n\n[services.gone]\nrepo = \"nowhere/at/all\"\n",
        shop.path()
    ));
    let map = map.as_str();
    // A usage or configuration error: exit 2, and what stderr says.
    let refused = |service: &str| -> String {
        let out = context(
            &shop,
            &["--service", service, "--since", "0", "--map", map],
            &[],
        );
        assert_eq!(out.status.code(), Some(2));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let stderr = refused("checkout");
    assert!(
        stderr.contains("unknown service \"checkout\"") && stderr.contains("gone, shop"),
        "{stderr}"
    );

    let stderr = refused("gone");
    assert!(
        stderr.contains("nowhere/at/all") && stderr.contains("does not exist"),
        "{stderr}"
    );

    // Before the first commit: nothing, and that is no error.
    let before = (T0 - 100).to_string();
    let args = [
        "--service",
        "shop",
        "--since",
        "0",
        "--until",
        &before,
        "--map",
        map,
        "--json",
    ];
    let out = context(&shop, &args, &[]);
    assert_eq!(stdout(&out).trim(), "[]");

    let out = context(
        &shop,
        &[
            "--service",
            "shop",
            "--since",
            "yesterday-ish",
            "--map",
            map,
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_map_is_found_by_flag_then_environment_then_git_config_then_home() {
    let shop = shop();
    let dirs = tempfile::tempdir().unwrap();
    let one = |name: &str| format!("[services.{name}]\nrepo = {:?}\n", shop.path());
    let mk = |file: &str, name: &str| {
        let path = dirs.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, one(name)).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let flag = mk("flag.toml", "by-flag");
    let env = mk("env.toml", "by-env");
    let config = mk("config.toml", "by-config");
    mk("home/.config/diffidx/services.toml", "by-home");
    let home = dirs.path().join("home");
    let home = home.to_str().unwrap();
    let (since, until) = window();
    let known = |args: &[&str], vars: &[(&str, &str)]| -> String {
        let mut all = vec!["--service", "none", "--since", &since, "--until", &until];
        all.extend_from_slice(args);
        let out = context(&shop, &all, vars);
        assert_eq!(out.status.code(), Some(2));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    shop.git(&["config", "diffidx.serviceMap", &config]);
    let vars = [("DIFFIDX_SERVICE_MAP", env.as_str()), ("HOME", home)];
    assert!(known(&["--map", &flag], &vars).contains("are: by-flag"));
    assert!(known(&[], &vars).contains("are: by-env"));
    assert!(known(&[], &[("HOME", home)]).contains("are: by-config"));
    shop.git(&["config", "--unset", "diffidx.serviceMap"]);
    assert!(known(&[], &[("HOME", home)]).contains("are: by-home"));
    let nowhere = dirs.path().join("empty");
    let out = known(&[], &[("HOME", nowhere.to_str().unwrap())]);
    assert!(out.contains("no service map found"), "{out}");
}

#[test]
fn a_url_service_is_cloned_then_fetched_and_a_monorepo_narrowed_to_its_paths() {
    let mut shop = shop();
    let url = format!("file://{}", shop.path().display());
    let (maps, map) = map_file(&format!(
        "[services.cart]\nrepo = {url:?}\nclone = \"clones/shop\"\nbranch = \"main\"\n\
             paths = [\"src/cart.rs\"]\n\n\
             [services.pay]\nrepo = {url:?}\nclone = \"clones/shop\"\npaths = [\"src/pay\"]\n",
    ));
    let map = map.as_str();
    let (since, _) = window();
    let until = (T0 + 20_000).to_string();
    let args = [
        "--service",
        "pay",
        "--since",
        &since,
        "--until",
        &until,
        "--map",
        map,
        "--json",
    ];
    let got = records(&context(&shop, &args, &[]));
    assert!(maps.path().join("clones/shop/.git").exists());
    let names: Vec<&str> = got
        .iter()
        .map(|r| r["qualname"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["refund"]);
    assert_eq!(got[0]["repo"], url.as_str());

    // A new commit upstream arrives by fetch.
    shop.write(
        "src/cart.rs",
        "pub fn total() -> u32 { 3 }\npub fn tax() -> u32 { total() / 10 }\n",
    );
    shop.commit_at("three", T0 + 10_800);
    let both = [
        "--service",
        "cart,pay",
        "--since",
        &since,
        "--until",
        &until,
        "--map",
        map,
        "--json",
    ];
    let got = records(&context(&shop, &both, &[]));
    let mut seen: Vec<(&str, &str, &str)> = got
        .iter()
        .map(|r| {
            (
                r["service"].as_str().unwrap(),
                r["qualname"].as_str().unwrap(),
                r["subject"].as_str().unwrap(),
            )
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            ("cart", "old_helper", "new total, no helper"),
            ("cart", "total", "new total, no helper"),
            ("cart", "total", "three"),
            ("pay", "refund", "refunds"),
        ]
    );
}

#[test]
fn relative_and_rfc3339_times_read_as_users_write_them() {
    let mut repo = TestRepo::new();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    repo.write("src/lib.rs", "pub fn old() {}\n");
    repo.commit_at("long ago", now - 30 * 3600);
    repo.write("src/lib.rs", "pub fn old() {}\npub fn fresh() {}\n");
    repo.commit_at("just now", now - 2 * 3600);
    let (_maps, map) = map_file(&format!("[services.lib]\nrepo = {:?}\n", repo.path()));
    let map = map.as_str();
    let names = |since: &str| -> Vec<String> {
        let args = ["--service", "lib", "--since", since, "--map", map, "--json"];
        records(&context(&repo, &args, &[]))
            .iter()
            .map(|r| r["qualname"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names("5 hours ago"), ["fresh"]);
    assert_eq!(names("2 days ago"), ["fresh", "old"]);
    let rfc = diffidx_core::git::rfc3339((now - 5 * 3600) as i64, 0);
    assert_eq!(names(&rfc), ["fresh"]);
}

#[test]
fn a_query_lifts_the_changes_that_match_it() {
    let shop = shop();
    let (_maps, map) = map_file(&format!("[services.shop]\nrepo = {:?}\n", shop.path()));
    let (since, until) = window();
    let args = |query: Option<&str>| {
        let mut args = vec![
            "--service".to_owned(),
            "shop".into(),
            "--since".into(),
            since.clone(),
            "--until".into(),
            until.clone(),
            "--map".into(),
            map.clone(),
            "--json".into(),
        ];
        if let Some(q) = query {
            args.extend(["--query".to_owned(), q.to_owned()]);
        }
        args
    };
    let run = |query: Option<&str>| {
        let args = args(query);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        context(&shop, &args, &[])
    };
    let plain = records(&run(None));
    assert!(plain.iter().all(|r| r.get("relevance").is_none()));
    let out = run(Some("refund"));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let got = records(&out);
    assert!(
        stderr.contains("matched to the query by names, text"),
        "{stderr}"
    );
    let relevance = |name: &str| {
        got.iter()
            .find(|r| r["qualname"] == name)
            .map(|r| r["relevance"].as_f64().unwrap())
            .unwrap()
    };
    assert_eq!(relevance("refund"), 1.0);
    assert_eq!(relevance("old_helper"), 0.0);
    let score = |records: &[Value], name: &str| {
        records
            .iter()
            .find(|r| r["qualname"] == name)
            .map(|r| r["score"].as_f64().unwrap())
            .unwrap()
    };
    // The match keeps its score; the rest count half.
    assert_eq!(score(&got, "refund"), score(&plain, "refund"));
    assert!(score(&got, "old_helper") < score(&plain, "old_helper") * 0.51);
    assert_eq!(got[0]["qualname"], "refund", "{got:?}");
}

/// Commits everything with these author and commit times: a branch merged
/// long after it was written, a rebase or a cherry-pick keeps the author's.
fn commit_dated(repo: &TestRepo, message: &str, author: u64, committed: u64) -> String {
    repo.git(&["add", "-A"]);
    let out = repo
        .command("git")
        .args(["commit", "-q", "-m", message])
        .env("GIT_AUTHOR_DATE", format!("{author} +0000"))
        .env("GIT_COMMITTER_DATE", format!("{committed} +0000"))
        .output()
        .unwrap();
    succeeded(&out);
    repo.git(&["rev-parse", "HEAD"]).trim().to_owned()
}

/// `(commit, status, kind, qualname, path)` of every delta these commits'
/// notes record, sorted.
fn noted_changes(repo: &TestRepo, shas: &[&str]) -> Vec<(String, String, String, String, String)> {
    let mut all = Vec::new();
    for sha in shas {
        let note: Value = serde_json::from_str(&repo.ok(&["show", sha, "--json"])).unwrap();
        for d in note["deltas"].as_array().unwrap() {
            let field = |k: &str| d[k].as_str().unwrap().to_owned();
            all.push((
                (*sha).to_owned(),
                field("status"),
                field("kind"),
                field("qualname"),
                field("path"),
            ));
        }
    }
    all.sort();
    all
}

/// The same of records.
fn recorded_changes(got: &[Value]) -> Vec<(String, String, String, String, String)> {
    let mut all: Vec<_> = got
        .iter()
        .map(|r| {
            let field = |k: &str| r[k].as_str().unwrap().to_owned();
            (
                field("commit"),
                field("status"),
                field("kind"),
                field("qualname"),
                field("path"),
            )
        })
        .collect();
    all.sort();
    all
}

/// A Rust repository whose newest commits are authored in the window, with
/// two authored before it on top of others authored in it: an old branch
/// merged late (made in the window), and a commit from a wrong clock (made
/// before the window too).
fn late_history() -> (TestRepo, Vec<String>, Vec<String>) {
    let cart = |total: &str, tax: &str, extra: &str| {
        format!(
            "pub struct Cart {{ items: u32 }}\nimpl Cart {{\n    pub fn total(&self) -> u32 {{ {total} }}\n    \
             pub fn tax(&self) -> u32 {{ {tax} }}\n{extra}}}\n"
        )
    };
    let mut repo = TestRepo::new();
    repo.write("src/cart.rs", cart("self.items", "1", ""));
    repo.write("src/pay.rs", "pub fn charge() -> u32 { 1 }\n");
    repo.commit_at("first", T0);
    let mut window = Vec::new();
    let mut before = Vec::new();
    repo.write("src/cart.rs", cart("self.items * 2", "1", ""));
    window.push(commit_dated(&repo, "double totals", T0 + 3600, T0 + 3600));
    repo.write("src/pay.rs", "pub fn charge() -> u32 { 2 }\n");
    before.push(commit_dated(
        &repo,
        "old branch",
        T0 - 30 * 86_400,
        T0 + 5000,
    ));
    repo.write(
        "src/cart.rs",
        cart(
            "self.items * 2",
            "self.total() / 10",
            "    pub fn empty(&self) -> bool { true }\n",
        ),
    );
    window.push(commit_dated(&repo, "tax from totals", T0 + 7200, T0 + 7200));
    repo.write(
        "src/pay.rs",
        "pub fn charge() -> u32 { 3 }\npub fn refund() {}\n",
    );
    before.push(commit_dated(&repo, "wrong clock", T0 - 60, T0 - 60));
    repo.write(
        "src/cart.rs",
        cart("self.items * 3", "self.total() / 10", ""),
    );
    window.push(commit_dated(&repo, "triple totals", T0 + 9000, T0 + 9000));
    (repo, window, before)
}

#[test]
fn every_change_of_the_window_is_there_behind_commits_authored_before_it() {
    let (repo, window_commits, before) = late_history();
    let (_maps, map) = map_file(&format!("[services.cart]\nrepo = {:?}\n", repo.path()));
    let (since, until) = window();
    let args = [
        "--service",
        "cart",
        "--since",
        &since,
        "--until",
        &until,
        "--map",
        map.as_str(),
        "--json",
        "--limit",
        "10000",
    ];
    let out = context(&repo, &args, &[]);
    let got = records(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("3 commits in the window, 3 indexed now"),
        "{stderr}"
    );
    let shas: Vec<&str> = window_commits.iter().map(String::as_str).collect();
    let expected = noted_changes(&repo, &shas);
    // MODIFIED methods of each commit, the struct's members added and
    // deleted, in all three commits.
    assert!(
        expected
            .iter()
            .filter(|c| c.1 == "MODIFIED" && c.2 == "method")
            .count()
            >= 3,
        "{expected:?}"
    );
    assert_eq!(recorded_changes(&got), expected);
    assert!(
        got.iter()
            .all(|r| !before.iter().any(|b| b == r["commit"].as_str().unwrap())),
        "commits authored before the window are not in it"
    );
    // Warm, the same answer.
    assert_eq!(records(&context(&repo, &args, &[])), got);
}

#[test]
fn notes_fetched_for_commits_the_store_lacks_are_loaded_before_the_answer() {
    let source = shop();
    let window_commits = source.git(&["rev-list", "HEAD~2..HEAD"]);
    let window_commits: Vec<&str> = window_commits.lines().collect();
    // The source notes its whole history; a clone indexes only its newest
    // commit, then fetches the source's notes over its own: every commit
    // is noted, but the clone's store holds one.
    source.ok(&["index", "--all", "-q"]);
    let clone = TestRepo::clone_of(source.path(), 100);
    let (_maps, map) = map_file(&format!("[services.shop]\nrepo = {:?}\n", clone.path()));
    let run = |since: &str| {
        let args = [
            "--service",
            "shop",
            "--since",
            since,
            "--until",
            "2000000000",
            "--map",
            map.as_str(),
            "--json",
        ];
        context(&clone, &args, &[])
    };
    let newest = records(&run(&(T0 + 5000).to_string()));
    assert_eq!(
        recorded_changes(&newest),
        noted_changes(&clone, &window_commits[..1])
    );
    clone.git(&[
        "fetch",
        "-q",
        "origin",
        "+refs/notes/diffidx:refs/notes/diffidx",
    ]);
    let (since, _) = window();
    let out = run(&since);
    let got = records(&out);
    assert_eq!(
        recorded_changes(&got),
        noted_changes(&clone, &window_commits)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("warning"), "{stderr}");
}
