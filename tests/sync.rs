//! `git diffidx push` against a real Bolt server (ArcadeDB's Neo4j plugin),
//! which `scripts/test` starts and describes in NEO4J_URI, NEO4J_USERNAME,
//! NEO4J_PASSWORD and DIFFIDX_BOLT_HTTP. Each test uses its own database.

mod common;

use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use common::TestRepo;

struct Server {
    uri: String,
    user: String,
    password: String,
    http: String,
}

fn server() -> Server {
    let var = |k: &str| {
        std::env::var(k).unwrap_or_else(|_| {
            panic!("{k} is not set: run the tests with scripts/test, which starts the Bolt server")
        })
    };
    Server {
        uri: var("NEO4J_URI"),
        user: var("NEO4J_USERNAME"),
        password: var("NEO4J_PASSWORD"),
        http: var("DIFFIDX_BOLT_HTTP"),
    }
}

static NEXT_DB: AtomicU32 = AtomicU32::new(0);

/// A fresh database on the server, for one test.
fn fresh_database(server: &Server, tag: &str) -> String {
    let name = format!(
        "t{}{}{}",
        std::process::id(),
        tag,
        NEXT_DB.fetch_add(1, Ordering::SeqCst)
    );
    let out = Command::new("curl")
        .args([
            "-sf",
            "-u",
            &format!("{}:{}", server.user, server.password),
            "-H",
            "Content-Type: application/json",
            "-d",
            &format!("{{\"command\":\"create database {name}\"}}"),
            &format!("{}/api/v1/server", server.http),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cannot create database {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    name
}

/// Runs git-diffidx with the server's credentials for `db`.
fn with_neo4j(
    repo: &TestRepo,
    server: &Server,
    db: &str,
    password: &str,
    args: &[&str],
) -> std::process::Output {
    Command::new(common::bin())
        .args(args)
        .current_dir(repo.path())
        .env("NEO4J_URI", &server.uri)
        .env("NEO4J_USERNAME", &server.user)
        .env("NEO4J_PASSWORD", password)
        .env("NEO4J_DATABASE", db)
        .output()
        .unwrap()
}

/// The `n` a counting query returns.
fn count(server: &Server, db: &str, cypher: &str) -> i64 {
    let rows = fetch(server, db, cypher, &[]);
    rows.first().expect("a row").get::<i64>("n").unwrap()
}

/// Every row a query returns, on a connection and runtime of its own.
fn fetch(
    server: &Server,
    db: &str,
    cypher: &str,
    params: &[(&str, neo4rs::BoltType)],
) -> Vec<neo4rs::Row> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let config = neo4rs::ConfigBuilder::default()
            .uri(server.uri.as_str())
            .user(server.user.as_str())
            .password(server.password.as_str())
            .db(db)
            .build()
            .unwrap();
        let graph = neo4rs::Graph::connect(config).await.unwrap();
        let mut q = neo4rs::query(cypher);
        for (k, v) in params {
            q = q.param(k, v.clone());
        }
        let mut stream = graph.execute(q).await.unwrap();
        let mut rows = Vec::new();
        while let Some(row) = stream.next().await.unwrap() {
            rows.push(row);
        }
        rows
    })
}

fn repo_with(commits: usize, prefix: &str) -> TestRepo {
    let mut repo = TestRepo::new();
    for i in 0..commits {
        repo.write(
            &format!("src/{prefix}{}.cs", i % 5),
            format!(
                "namespace {prefix} {{ class C{} {{ void M{i}() {{ }} void Keep() {{ }} }} }}\n",
                i % 5
            ),
        );
        repo.commit(&format!("{prefix} {i}"));
    }
    repo
}

fn note_deltas(repo: &TestRepo) -> i64 {
    repo.git(&["rev-list", "HEAD"])
        .lines()
        .map(|sha| {
            let note = repo.git(&["notes", "--ref", "diffidx", "show", sha]);
            let doc: serde_json::Value = serde_json::from_str(&note).unwrap();
            doc["deltas"].as_array().unwrap().len() as i64
        })
        .sum()
}

#[test]
fn push_stores_one_change_per_delta_and_pushing_again_changes_nothing() {
    let server = server();
    let db = fresh_database(&server, "a");
    let repo = repo_with(12, "Alpha");
    repo.git(&["config", "diffidx.repo", "example/alpha"]);
    // `index` pushes by itself when credentials are present.
    let out = with_neo4j(&repo, &server, &db, &server.password, &["index"]);
    common::succeeded(&out);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("pushed 12 commits"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let deltas = note_deltas(&repo);
    let changes = "MATCH ()-[r:CHANGED_IN]->() RETURN count(r) AS n";
    assert_eq!(count(&server, &db, changes), deltas);
    assert_eq!(
        count(&server, &db, "MATCH (c:Commit) RETURN count(c) AS n"),
        12
    );
    assert_eq!(count(&server, &db, "MATCH (c:Commit)-[:IN_REPO]->(r:Repository {id: 'example/alpha'}) RETURN count(c) AS n"), 12);
    let symbols = count(&server, &db, "MATCH (s:Symbol) RETURN count(s) AS n");

    let again = with_neo4j(&repo, &server, &db, &server.password, &["push"]);
    assert!(again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("has every pushable commit"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(count(&server, &db, changes), deltas);
    assert_eq!(
        count(&server, &db, "MATCH (s:Symbol) RETURN count(s) AS n"),
        symbols
    );

    // A second repository shares the database without colliding.
    let other = repo_with(7, "Alpha");
    other.git(&["config", "diffidx.repo", "example/beta"]);
    let out = with_neo4j(&other, &server, &db, &server.password, &["index", "-q"]);
    common::succeeded(&out);
    assert_eq!(count(&server, &db, changes), deltas + note_deltas(&other));
    assert_eq!(
        count(&server, &db, "MATCH (r:Repository) RETURN count(r) AS n"),
        2
    );
}

#[test]
fn bad_credentials_and_an_unreachable_server_fail_clearly_and_lose_nothing() {
    // Wrong passwords make the server lock the account out for a while: use
    // a server of this test's own for them.
    let dir = tempfile::tempdir().unwrap();
    let own = OwnServer::start(dir.path(), None, (7698, 2498));
    let repo = repo_with(6, "Gamma");
    repo.ok(&["index", "-q"]);
    let run = |uri: &str, password: &str, args: &[&str]| {
        Command::new(common::bin())
            .args(args)
            .current_dir(repo.path())
            .env("NEO4J_URI", uri)
            .env("NEO4J_USERNAME", "root")
            .env("NEO4J_PASSWORD", password)
            .output()
            .unwrap()
    };

    let wrong = run(own.get("NEO4J_URI"), "not-the-password", &["push"]);
    assert_eq!(wrong.status.code(), Some(1));
    let err = String::from_utf8_lossy(&wrong.stderr);
    assert!(err.contains("refused the credentials"), "{err}");
    assert!(
        !err.contains("not-the-password"),
        "the password leaked: {err}"
    );

    let down = run("bolt://127.0.0.1:9", "secret-value", &["push"]);
    assert_eq!(down.status.code(), Some(1));
    let err = String::from_utf8_lossy(&down.stderr);
    assert!(
        err.contains("cannot reach Neo4j at bolt://127.0.0.1:9"),
        "{err}"
    );
    assert!(!err.contains("secret-value"));
    // `index` with Neo4j down still succeeds, with a warning.
    let index = run("bolt://127.0.0.1:9", "secret-value", &["index"]);
    assert!(index.status.success());
    assert!(String::from_utf8_lossy(&index.stderr).contains("run `git diffidx push` to retry"));
    // A hook's push to a server that is down is this run's error in `status`.
    assert!(run(
        "bolt://127.0.0.1:9",
        "secret-value",
        &["hook-run", "post-commit"]
    )
    .status
    .success());
    let status = run("bolt://127.0.0.1:9", "secret-value", &["status", "--json"]);
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    let last_error = status["last_error"].as_str().unwrap_or_default();
    assert!(
        last_error.contains("push failed: cannot reach Neo4j"),
        "{status}"
    );
    assert!(!last_error.contains("secret-value"));

    // Nothing was lost: a push to a working server sends everything.
    let server = server();
    let db = fresh_database(&server, "b");
    let status = with_neo4j(&repo, &server, &db, &server.password, &["status", "--json"]);
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["neo4j_backlog"]["pending"], 6);
    assert!(!status.to_string().contains(&server.password));
    let ok = with_neo4j(&repo, &server, &db, &server.password, &["push"]);
    common::succeeded(&ok);
    assert_eq!(
        count(
            &server,
            &db,
            "MATCH ()-[r:CHANGED_IN]->() RETURN count(r) AS n"
        ),
        note_deltas(&repo)
    );
}

/// How many rows a query returns.
fn rows(server: &Server, db: &str, cypher: &str, params: &[(&str, neo4rs::BoltType)]) -> usize {
    fetch(server, db, cypher, params).len()
}

/// A repository `repo_id` whose second commit edits `Cart.Add` and deletes
/// `Cart.Drop`; returns it and that commit.
fn cart_repo(repo_id: &str) -> (TestRepo, String) {
    let mut repo = TestRepo::new();
    repo.git(&["config", "diffidx.repo", repo_id]);
    repo.write(
        "Shop.cs",
        "namespace Shop { class Cart { void Add() { } void Drop() { } } }\n",
    );
    repo.commit("cart");
    repo.write(
        "Shop.cs",
        "namespace Shop { class Cart { void Add() { Log(); } } }\n",
    );
    let sha = repo.commit("edit and delete");
    (repo, sha)
}

#[test]
fn the_readme_queries_answer_on_pushed_data() {
    let server = server();
    let db = fresh_database(&server, "q");
    let (repo, sha) = cart_repo("example/queries");
    let out = with_neo4j(&repo, &server, &db, &server.password, &["index", "-q"]);
    common::succeeded(&out);
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let block = readme
        .split("```cypher")
        .nth(1)
        .expect("a cypher block")
        .split("```")
        .next()
        .unwrap();
    let queries: Vec<String> = block
        .split("\n\n")
        .map(|q| {
            q.lines()
                .filter(|l| !l.starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect();
    assert_eq!(queries.len(), 4);
    use neo4rs::BoltType as B;
    // The test commits are dated 2023 (see tests/common); "now" is the second one's time.
    let commit_time = 1_700_000_000 + 2 * 3600;
    assert!(
        rows(
            &server,
            &db,
            &queries[0],
            &[
                ("repo", B::from("example/queries")),
                ("now", B::from(commit_time as i64))
            ]
        ) >= 2
    );
    assert_eq!(
        rows(&server, &db, &queries[1], &[("name", B::from("Cart.Add"))]),
        2
    );
    assert_eq!(
        rows(
            &server,
            &db,
            &queries[2],
            &[("from", B::from(0i64)), ("to", B::from(i64::MAX))]
        ),
        1
    );
    assert!(rows(&server, &db, &queries[3], &[("sha", B::from(sha.as_str()))]) >= 2);
}

/// A second server of the test's own, so that it can be killed.
struct OwnServer {
    env: Vec<(String, String)>,
    pidfile: std::path::PathBuf,
}

impl OwnServer {
    fn start(dir: &std::path::Path, data: Option<&str>, ports: (u16, u16)) -> OwnServer {
        let pidfile = dir.join("server.pid");
        let mut cmd = Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/bolt-server"));
        cmd.arg("start")
            .env("DIFFIDX_BOLT_PIDFILE", &pidfile)
            .env("BOLT_PORT", ports.0.to_string())
            .env("BOLT_HTTP_PORT", ports.1.to_string());
        match data {
            Some(data) => cmd.env("DIFFIDX_BOLT_DATA", data),
            None => cmd.env_remove("DIFFIDX_BOLT_DATA"),
        };
        let out = cmd.output().unwrap();
        common::succeeded(&out);
        let line = String::from_utf8(out.stdout).unwrap();
        let env = line
            .trim()
            .trim_start_matches("export ")
            .split(' ')
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        OwnServer { env, pidfile }
    }

    fn get(&self, key: &str) -> &str {
        &self.env.iter().find(|(k, _)| k == key).unwrap().1
    }

    fn kill(&self) {
        let pid = std::fs::read_to_string(&self.pidfile).unwrap();
        Command::new("kill")
            .args(["-9", pid.trim()])
            .status()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

impl Drop for OwnServer {
    fn drop(&mut self) {
        if let Ok(pid) = std::fs::read_to_string(&self.pidfile) {
            let _ = Command::new("kill").args(["-9", pid.trim()]).status();
        }
    }
}

#[test]
fn a_server_killed_mid_push_ends_with_exact_counts_after_the_next_push() {
    let dir = tempfile::tempdir().unwrap();
    let first = OwnServer::start(dir.path(), None, (7697, 2497));
    let server = Server {
        uri: first.get("NEO4J_URI").to_owned(),
        user: "root".into(),
        password: first.get("NEO4J_PASSWORD").to_owned(),
        http: first.get("DIFFIDX_BOLT_HTTP").to_owned(),
    };
    let data = first.get("DIFFIDX_BOLT_DATA").to_owned();
    let repo = repo_with(60, "Delta");
    repo.git(&["config", "diffidx.neo4j.batchSize", "1"]);
    repo.ok(&["index", "-q"]);
    // `index` pushed to the shared test server if NEO4J_* is set here:
    // only this test's own server's watermark may count.
    let _ = std::fs::remove_dir_all(repo.path().join(".git/diffidx/neo4j"));
    // The push stops itself after its first transaction; the server is
    // killed while it is stopped, then the push goes on against it.
    let push = Command::new(common::bin())
        .args(["push"])
        .current_dir(repo.path())
        .env("NEO4J_URI", &server.uri)
        .env("NEO4J_USERNAME", &server.user)
        .env("NEO4J_PASSWORD", &server.password)
        .env("NEO4J_DATABASE", "neo4j")
        .env("DIFFIDX_FAULT", "push-batch-done:stop")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    common::wait_until_stopped(push.id(), "the push never reached its first transaction");
    first.kill();
    let resumed = Command::new("kill")
        .args(["-CONT", &push.id().to_string()])
        .status()
        .unwrap();
    assert!(resumed.success());
    let out = push.wait_with_output().unwrap();
    let watermark_dir = repo.path().join(".git/diffidx/neo4j");
    let pushed_before = std::fs::read_dir(&watermark_dir)
        .unwrap()
        .map(|e| {
            std::fs::read_to_string(e.unwrap().path())
                .unwrap()
                .lines()
                .count()
        })
        .sum::<usize>();
    // The kill interrupted the push after exactly one transaction.
    assert!(!out.status.success(), "the push survived the kill");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the push will resume from here next time"),
        "{err}"
    );
    assert_eq!(pushed_before, 1, "one commit a transaction");
    drop(first);
    let second = OwnServer::start(dir.path(), Some(&data), (7697, 2497));
    assert_eq!(second.get("NEO4J_URI"), server.uri);
    let again = with_neo4j(&repo, &server, "neo4j", &server.password, &["push"]);
    common::succeeded(&again);
    assert_eq!(
        count(
            &server,
            "neo4j",
            "MATCH ()-[r:CHANGED_IN]->() RETURN count(r) AS n"
        ),
        note_deltas(&repo)
    );
    assert_eq!(
        count(&server, "neo4j", "MATCH (c:Commit) RETURN count(c) AS n"),
        60
    );
}

#[test]
fn hooks_push_in_the_background_with_settings_from_git_config() {
    let server = server();
    let db = fresh_database(&server, "h");
    let repo = repo_with(3, "Hooked");
    repo.git(&["config", "diffidx.neo4j.uri", &server.uri]);
    repo.git(&["config", "diffidx.neo4j.database", &db]);
    repo.git(&["config", "diffidx.neo4j.username", &server.user]);
    repo.ok(&["hooks", "install"]);
    repo.write("src/Late.cs", "class Late { void M() { } }\n");
    repo.git(&["add", "-A"]);
    // A commit as a user makes it: git-diffidx on PATH, the password in the environment.
    let out = Command::new("git")
        .args(["commit", "-qm", "late"])
        .current_dir(repo.path())
        .env("PATH", common::path_with_bin())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "A")
        .env("GIT_AUTHOR_EMAIL", "a@example.com")
        .env("GIT_COMMITTER_NAME", "A")
        .env("GIT_COMMITTER_EMAIL", "a@example.com")
        .env_remove("NEO4J_URI")
        .env_remove("NEO4J_USERNAME")
        .env("NEO4J_PASSWORD", &server.password)
        .output()
        .unwrap();
    common::succeeded(&out);
    assert!(
        out.stderr.is_empty(),
        "the hook printed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let started = std::time::Instant::now();
    while count(&server, &db, "MATCH (c:Commit) RETURN count(c) AS n") < 4 {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "the hook did not push"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert_eq!(
        count(
            &server,
            &db,
            "MATCH ()-[r:CHANGED_IN]->() RETURN count(r) AS n"
        ),
        note_deltas(&repo)
    );
}

#[test]
fn a_pushed_symbol_carries_the_same_properties_as_the_stores() {
    let server = server();
    let db = fresh_database(&server, "props");
    let (repo, _) = cart_repo("example/props");
    let out = with_neo4j(&repo, &server, &db, &server.password, &["index", "-q"]);
    common::succeeded(&out);

    let git = diffidx_core::git::Repo::discover(repo.path()).unwrap();
    let store = diffidx_lib::open::for_reading(&git, std::time::Duration::from_secs(10)).unwrap();
    let reader = store.reader().unwrap();
    let note = repo.git(&["notes", "--ref", "diffidx", "show", "HEAD"]);
    let note: serde_json::Value = serde_json::from_str(&note).unwrap();
    let mut compared = 0;
    // A modified method, its class, its namespace (unchanged ones are rows
    // too) and the deleted method.
    for delta in note["deltas"].as_array().unwrap() {
        let id = delta["id"].as_str().unwrap();
        let ours = reader
            .symbol(id)
            .unwrap()
            .expect("the symbol is in the store");
        let rows = fetch(
            &server,
            &db,
            "MATCH (s:Symbol {id: $id}) RETURN s",
            &[("id", neo4rs::BoltType::from(format!("example/props:{id}")))],
        );
        let node: neo4rs::Node = rows
            .first()
            .expect("the symbol is in Neo4j")
            .get("s")
            .unwrap();
        let mut theirs: std::collections::BTreeMap<String, serde_json::Value> = node.to().unwrap();
        assert_eq!(theirs.remove("repo"), Some("example/props".into()));
        assert_eq!(
            theirs.remove("id"),
            Some(format!("example/props:{id}").into())
        );
        let mut ours = ours;
        ours.remove("id");
        assert_eq!(ours, theirs, "{}", delta["qualname"]);
        compared += 1;
    }
    assert_eq!(compared, 4, "{note}");
}

#[test]
fn credentials_in_urls_are_never_stored_printed_or_logged() {
    let server = server();
    let db = fresh_database(&server, "secrets");
    let repo = repo_with(2, "Secret");
    repo.git(&[
        "remote",
        "add",
        "origin",
        "https://ci-bot:ghp_PLANTEDTOKEN@example.com/acme/shop.git",
    ]);
    // Pushed normally: the repository's URL is stored without its userinfo.
    let out = with_neo4j(&repo, &server, &db, &server.password, &["index"]);
    let mut seen = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    common::succeeded(&out);
    let rows = fetch(
        &server,
        &db,
        "MATCH (r:Repository) RETURN r.url AS url, r.id AS id",
        &[],
    );
    let url: String = rows[0].get("url").unwrap();
    let id: String = rows[0].get("id").unwrap();
    assert_eq!(url, "https://example.com/acme/shop.git");
    assert_eq!(id, "example.com/acme/shop");

    // A password inside NEO4J_URI (a server that is not there): not in
    // errors, warnings, status or the hook log.
    let uri = "bolt://root:PLANTEDPASSWORD@127.0.0.1:7699";
    let env = [("NEO4J_URI", uri), ("NEO4J_PASSWORD", "PLANTEDSECRET2")];
    for args in [
        &["index"][..],
        &["push"],
        &["status"],
        &["hook-run", "post-commit"],
    ] {
        let out = repo.diffidx_env(args, &env);
        seen.push_str(&String::from_utf8_lossy(&out.stdout));
        seen.push_str(&String::from_utf8_lossy(&out.stderr));
    }
    let log = std::fs::read_to_string(repo.path().join(".git/diffidx/hook.log")).unwrap();
    assert!(
        log.contains("push failed") && log.contains("bolt://127.0.0.1:7699"),
        "{log}"
    );
    seen.push_str(&log);
    assert!(seen.contains("bolt://127.0.0.1:7699"), "{seen}");
    for secret in [
        "PLANTEDTOKEN",
        "PLANTEDPASSWORD",
        "PLANTEDSECRET2",
        "ci-bot",
    ] {
        assert!(!seen.contains(secret), "{secret} leaked: {seen}");
    }
}

#[test]
fn an_invalid_note_is_counted_shown_and_fails_push_and_the_hook_until_repaired() {
    let server = server();
    let db = fresh_database(&server, "i");
    let repo = repo_with(5, "Invalid");
    repo.ok(&["index", "-q"]);
    let target = repo.git(&["rev-parse", "HEAD~2"]).trim().to_owned();
    repo.put_note(&target, "{\"v\":7}");

    let out = with_neo4j(&repo, &server, &db, &server.password, &["push"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("pushed 4 commits"), "{err}");
    assert!(err.contains(&format!("invalid note {target}")), "{err}");
    assert!(err.contains("`git diffidx rebuild`"), "{err}");
    let status = with_neo4j(&repo, &server, &db, &server.password, &["status", "--json"]);
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["neo4j_backlog"]["pending"], 0, "{status}");
    assert_eq!(status["neo4j_backlog"]["skipped"], 1, "{status}");

    // The hook's push skips it too, and says so in `status`.
    let hook = with_neo4j(
        &repo,
        &server,
        &db,
        &server.password,
        &["hook-run", "post-commit"],
    );
    assert!(hook.status.success());
    let status = with_neo4j(&repo, &server, &db, &server.password, &["status", "--json"]);
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    let last_error = status["last_error"].as_str().unwrap_or_default();
    assert!(last_error.contains("1 invalid notes were not"), "{status}");

    common::succeeded(&repo.diffidx(&["rebuild"]));
    let out = with_neo4j(&repo, &server, &db, &server.password, &["push"]);
    common::succeeded(&out);
    let status = with_neo4j(&repo, &server, &db, &server.password, &["status", "--json"]);
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["neo4j_backlog"]["skipped"], 0, "{status}");
    assert_eq!(
        count(&server, &db, "MATCH (c:Commit) RETURN count(c) AS n"),
        5
    );
}

#[test]
fn lineage_is_pushed_as_continues_once() {
    let server = server();
    let db = fresh_database(&server, "lineage");
    let mut repo = TestRepo::new();
    repo.git(&["config", "diffidx.repo", "example/lineage"]);
    let body = "{ var total = 0; foreach (var line in lines) { total += line.Price * line.Count; } return total; }";
    repo.write(
        "Cart.cs",
        format!("namespace Shop {{ class Cart {{ int Sum(Line[] lines) {body} }} }}\n"),
    );
    repo.commit("cart");
    repo.write(
        "Cart.cs",
        format!("namespace Shop {{ class Cart {{ int Total(Line[] lines) {body} }} }}\n"),
    );
    repo.commit("rename sum");
    for _ in 0..2 {
        let out = with_neo4j(&repo, &server, &db, &server.password, &["index", "-q"]);
        common::succeeded(&out);
        let out = with_neo4j(&repo, &server, &db, &server.password, &["push"]);
        common::succeeded(&out);
        let links = fetch(
            &server,
            &db,
            "MATCH (a:Symbol {repo: 'example/lineage'})-[l:CONTINUES]->(b:Symbol) \
             RETURN a.qualname AS old, b.qualname AS new, l.similarity AS similarity",
            &[],
        );
        assert_eq!(links.len(), 1);
        assert_eq!(links[0].get::<String>("old").unwrap(), "Shop.Cart.Sum");
        assert_eq!(links[0].get::<String>("new").unwrap(), "Shop.Cart.Total");
        let similarity = links[0].get::<f64>("similarity").unwrap();
        assert!(similarity > 0.6 && similarity <= 1.0, "{similarity}");
    }
}

/// `(caller, callee, resolution)` of every CALLS edge, from the store.
fn store_calls(repo: &TestRepo) -> Vec<String> {
    let git = diffidx_core::git::Repo::discover(repo.path()).unwrap();
    let store = diffidx_lib::open::for_reading(&git, std::time::Duration::from_secs(10)).unwrap();
    let mut calls: Vec<String> = store
        .graph_snapshot()
        .unwrap()
        .expect("a code graph")
        .rows
        .edges
        .iter()
        .filter(|e| e.edge.kind.as_str() == "CALLS")
        .map(|e| {
            format!(
                "{} {} {}",
                e.edge.from,
                e.edge.to,
                e.edge.resolution.as_str()
            )
        })
        .collect();
    calls.sort();
    calls
}

fn neo4j_calls(server: &Server, db: &str, repo_id: &str) -> Vec<String> {
    let prefix = format!("{repo_id}:");
    let mut calls: Vec<String> = fetch(
        server,
        db,
        "MATCH (a:Symbol {repo: $repo})-[r:CALLS]->(b:Symbol) \
         RETURN a.id AS a, b.id AS b, r.resolution AS how",
        &[("repo", neo4rs::BoltType::from(repo_id))],
    )
    .iter()
    .map(|row| {
        let id = |k: &str| {
            let v: String = row.get(k).unwrap();
            v.strip_prefix(&prefix).unwrap().to_owned()
        };
        format!(
            "{} {} {}",
            id("a"),
            id("b"),
            row.get::<String>("how").unwrap()
        )
    })
    .collect();
    calls.sort();
    calls
}

#[test]
fn the_code_graph_is_pushed_with_the_stores_rows_and_replaced_when_it_changes() {
    let server = server();
    let db = fresh_database(&server, "graph");
    let mut repo = TestRepo::new();
    repo.write(
        "src/Pay.cs",
        "namespace Pay { interface ICharge { void Go(); } \
         class Card : ICharge { public void Go() { Check(); Log(); } \
         void Check() { System.Console.WriteLine(1); } void Log() { } } }\n",
    );
    repo.write(
        "src/Shop.cs",
        "using Pay;\nnamespace Shop { class Cart { void Buy(ICharge c) { c.Go(); new Card().Go(); } } }\n",
    );
    repo.commit("shop");
    let push = |repo: &TestRepo| {
        let out = with_neo4j(repo, &server, &db, &server.password, &["index"]);
        common::succeeded(&out)
    };
    let said = push(&repo);
    assert!(said.contains("the code graph at"), "{said}");
    // The database is fresh, so the one repository in it is this one.
    let repo_id = fetch(&server, &db, "MATCH (r:Repository) RETURN r.id AS id", &[])[0]
        .get::<String>("id")
        .unwrap();
    let ours = store_calls(&repo);
    // Go → Check, Go → Log, Buy → ICharge.Go (through the parameter's
    // type), Buy → Card (no constructor declared), Buy → Card.Go.
    assert_eq!(ours.len(), 5, "{ours:?}");
    assert_eq!(neo4j_calls(&server, &db, &repo_id), ours);
    for (label, rel, n) in [
        ("Symbol", "IMPLEMENTS", 1),
        ("File", "IMPORTS", 1),
        ("Directory", "CONTAINS", 3),
        ("File", "CONTAINS", 2),
        ("Symbol", "CONTAINS", 8),
    ] {
        let found = count(
            &server,
            &db,
            &format!("MATCH (:{label})-[r:{rel}]->() RETURN count(r) AS n"),
        );
        assert_eq!(found, n, "{label} {rel}");
    }
    // The call that matched nothing goes too, counted by name.
    let unresolved = count(
        &server,
        &db,
        "MATCH (u:UnresolvedCall {name: 'WriteLine', path: 'src/Pay.cs'}) \
         WHERE u.qualified = 1 AND u.bare = 0 RETURN count(u) AS n",
    );
    assert_eq!(unresolved, 1);

    // Pushed again: nothing to send.
    let again = with_neo4j(&repo, &server, &db, &server.password, &["push"]);
    let said = common::succeeded(&again);
    assert!(!said.contains("the code graph at"), "{said}");

    // A change: the edges it removed go from Neo4j too.
    repo.write(
        "src/Pay.cs",
        "namespace Pay { interface ICharge { void Go(); } \
         class Card : ICharge { public void Go() { Check(); } void Check() { } } }\n",
    );
    repo.commit("no logging");
    push(&repo);
    let ours = store_calls(&repo);
    assert_eq!(ours.len(), 4, "{ours:?}");
    assert_eq!(neo4j_calls(&server, &db, &repo_id), ours);
}

#[test]
fn symbol_vectors_are_pushed_with_their_model_when_the_semantic_index_changes() {
    let server = server();
    let db = fresh_database(&server, "v");
    let mut repo = repo_with(3, "Vec");
    repo.git(&["config", "diffidx.repo", "example/vectors"]);
    let model = diffidx_semantic::embed::installed_model_dir();
    repo.git(&["config", "diffidx.embed.model", model.to_str().unwrap()]);
    let out = with_neo4j(&repo, &server, &db, &server.password, &["index"]);
    let stderr = common::succeeded(&out);
    let line = stderr
        .lines()
        .find(|l| l.contains("symbol vectors"))
        .unwrap_or_else(|| panic!("{stderr}"));
    let symbols = embedded_symbols(&repo);
    assert!(
        line.contains(&format!("{} symbol vectors", symbols.len())),
        "{line}"
    );
    let with = "MATCH (s:Symbol) WHERE s.embedding IS NOT NULL RETURN count(s) AS n";
    assert_eq!(count(&server, &db, with), symbols.len() as i64);
    let rows = fetch(
        &server,
        &db,
        "MATCH (s:Symbol) WHERE s.embedding IS NOT NULL RETURN s.embedding AS e, s.embedding_model AS m LIMIT 1",
        &[],
    );
    let embedding: Vec<f64> = rows[0].get("e").unwrap();
    assert_eq!(embedding.len(), 384);
    let norm: f64 = embedding.iter().map(|x| x * x).sum::<f64>().sqrt();
    assert!((norm - 1.0).abs() < 1e-3, "{norm}");
    let model: String = rows[0].get("m").unwrap();
    assert!(model.starts_with("all-MiniLM-L6-v2@"), "{model}");

    // Nothing new: nothing pushed. A new commit: the vectors again.
    let again = with_neo4j(&repo, &server, &db, &server.password, &["push"]);
    assert!(!common::succeeded(&again).contains("symbol vectors"));
    repo.write(
        "src/Extra.cs",
        "namespace Vec { class Extra { void Fresh() { } } }\n",
    );
    repo.commit("extra");
    let out = with_neo4j(&repo, &server, &db, &server.password, &["index"]);
    assert!(common::succeeded(&out).contains("symbol vectors"));
    let now = embedded_symbols(&repo);
    assert!(now.len() > symbols.len());
    assert_eq!(count(&server, &db, with), now.len() as i64);
}

/// The symbols the semantic index has chunks of.
fn embedded_symbols(repo: &TestRepo) -> std::collections::BTreeSet<String> {
    let path = repo.path().join(".git/diffidx/semantic/index.json");
    let index: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    index["files"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|f| f["chunks"].as_array().unwrap())
        .map(|c| c["symbol"].as_str().unwrap().to_owned())
        .collect()
}
