//! `git diffidx serve`, the long-lived reader behind fast `log` answers: it
//! answers exactly what the store answers directly, yields the store to
//! writers, and a dead or missing server changes nothing but speed.

mod common;

use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use common::query_server::Server;
use common::{succeeded, TestRepo};

fn repo_with_history() -> TestRepo {
    let mut repo = TestRepo::new();
    repo.write(
        "src/Cart.cs",
        "namespace Shop { class Cart { int Total() => 1; } }\n",
    );
    repo.commit("cart");
    repo.write(
        "src/Cart.cs",
        "namespace Shop { class Cart { int Total() => 2; } }\n",
    );
    repo.commit("total");
    succeeded(&repo.diffidx(&["index"]));
    repo
}

/// What `args` print, through the query server or (`server` false) not.
fn answer(repo: &TestRepo, args: &[&str], server: bool) -> String {
    let env: &[(&str, &str)] = if server {
        &[]
    } else {
        &[("DIFFIDX_SERVER", "off")]
    };
    let out = repo.diffidx_env(args, env);
    succeeded(&out);
    String::from_utf8(out.stdout).unwrap()
}

fn log_json(repo: &TestRepo, server: bool) -> String {
    answer(repo, &["log", "--symbol", "Cart.Total", "--json"], server)
}

#[test]
fn the_server_answers_like_the_store_and_yields_to_writers() {
    let mut repo = repo_with_history();
    let direct = log_json(&repo, false);
    assert!(direct.contains("\"subject\":\"total\""), "{direct}");

    let status = |repo: &TestRepo| -> serde_json::Value {
        serde_json::from_str(&repo.ok(&["status", "--json"])).unwrap()
    };
    assert_eq!(status(&repo)["query_server"], false);
    let server = Server::start(&repo, "60");
    assert_eq!(log_json(&repo, true), direct);
    assert_eq!(server.next_line(), "history of Cart.Total: 2 entries");
    assert_eq!(status(&repo)["query_server"], true);

    // A writer gets the store at once: the server closes it when asked.
    repo.write(
        "src/Cart.cs",
        "namespace Shop { class Cart { int Total() => 3; } }\n",
    );
    repo.commit("three");
    let started = Instant::now();
    succeeded(&repo.diffidx(&["index"]));
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    let before = server.lines_until("reopened the store after a writer");
    assert_eq!(
        before.first().map(String::as_str),
        Some("released the store to a writer")
    );

    // ...and reopens it once the writer is done, with the new commit in it.
    let after = log_json(&repo, true);
    server.lines_until("history of Cart.Total: 3 entries");
    assert!(after.contains("\"subject\":\"three\""), "{after}");
    assert_eq!(after, log_json(&repo, false));
    // `rebuild` (which deletes the store files) gets it too.
    succeeded(&repo.diffidx(&["rebuild"]));
    server.lines_until("released the store to a writer");
    assert_eq!(log_json(&repo, true), after);
}

#[test]
fn a_dead_server_changes_nothing() {
    let repo = repo_with_history();
    let direct = log_json(&repo, false);
    let mut server = Server::start(&repo, "60");
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    let socket = repo.socket();
    assert!(socket.exists(), "a killed server leaves its socket");
    assert_eq!(log_json(&repo, true), direct);
    succeeded(&repo.diffidx(&["index"]));
    assert_eq!(log_json(&repo, true), direct);
}

#[test]
fn an_idle_server_exits_and_removes_its_socket() {
    let repo = repo_with_history();
    let mut idle = Server::start(&repo, "1");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = idle.child.try_wait().unwrap() {
            break status;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "still running");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success());
    assert!(!repo.socket().exists());
}

#[test]
fn a_server_leaves_when_its_program_is_replaced() {
    let repo = repo_with_history();
    // A copy of the program, replaced as an upgrade replaces it: a new file
    // renamed over the old one.
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("git-diffidx");
    std::fs::copy(common::bin(), &program).unwrap();
    let mut server = repo
        .command(&program)
        .args(["serve", "--idle", "600"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    repo.wait_for_socket(Duration::from_secs(10));
    std::thread::sleep(Duration::from_millis(1200));
    assert!(
        server.try_wait().unwrap().is_none(),
        "left before the upgrade"
    );
    let upgrade = dir.path().join("git-diffidx.new");
    std::fs::copy(common::bin(), &upgrade).unwrap();
    std::fs::rename(&upgrade, &program).unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = server.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(10) {
            let _ = server.kill();
            panic!("the old server still runs 10 s after its program was replaced");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success());
    assert!(!repo.socket().exists());
    // The next query is answered, by a server of the new program.
    assert_eq!(log_json(&repo, true), log_json(&repo, false));
}

#[test]
fn a_server_leaves_when_the_index_does() {
    let repo = repo_with_history();
    let mut server = Server::start(&repo, "600");
    std::fs::remove_file(repo.path().join(".git/diffidx/graph.lbdb")).unwrap();
    let started = Instant::now();
    while server.child.try_wait().unwrap().is_none() {
        assert!(started.elapsed() < Duration::from_secs(10), "still running");
        std::thread::sleep(Duration::from_millis(50));
    }
    // And none starts where there is no index.
    let out = repo.diffidx(&["serve", "--idle", "1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no index here yet"));
    assert!(!repo.socket().exists());
}

#[test]
fn hook_runs_beside_a_busy_server_index_every_commit() {
    let mut repo = repo_with_history();
    let _server = Server::start(&repo, "60");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let queries = {
        let (stop, dir) = (stop.clone(), repo.path().to_owned());
        std::thread::spawn(move || {
            let mut answered = 0;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                succeeded(
                    &std::process::Command::new(common::bin())
                        .args(["log", "--symbol", "Cart.Total", "--json"])
                        .current_dir(&dir)
                        .output()
                        .unwrap(),
                );
                answered += 1;
            }
            answered
        })
    };
    for i in 0..12 {
        repo.write(
            "src/Cart.cs",
            format!("namespace Shop {{ class Cart {{ int Total() => {i}; }} }}\n"),
        );
        repo.commit(&format!("edit {i}"));
        let runs: Vec<_> = (0..2)
            .map(|_| {
                repo.command(common::bin())
                    .args(["hook-run", "post-commit"])
                    .spawn()
                    .unwrap()
            })
            .collect();
        for mut run in runs {
            assert!(run.wait().unwrap().success());
        }
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    assert!(queries.join().unwrap() > 0);
    let status: serde_json::Value = serde_json::from_str(&repo.ok(&["status", "--json"])).unwrap();
    assert_eq!(status["indexed_commits"], 14, "{status}");
    assert_eq!(status["unindexed_commits"], 0, "{status}");
    assert_eq!(status["last_error"], serde_json::Value::Null, "{status}");
}

/// Sends `signal` to a process with the `kill` command.
fn signal(pid: u32, signal: &str) {
    let status = std::process::Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn a_stopped_server_is_found_at_once_and_does_not_hold_the_writer() {
    let mut repo = repo_with_history();
    let mut server = Server::start(&repo, "600");
    // It has the store open once it has answered.
    assert_eq!(log_json(&repo, true), log_json(&repo, false));
    let pid = server.child.id();
    signal(pid, "-STOP");
    repo.write(
        "src/Cart.cs",
        "namespace Shop { class Cart { int Total() => 3; } }\n",
    );
    repo.commit("three");
    let started = Instant::now();
    let out = repo.diffidx(&["index"]);
    let took = started.elapsed();
    succeeded(&out);
    // Not a speed check: the store's open wait is 30 s, and a stopped
    // server used to hold the writer for all of it.
    assert!(took < Duration::from_secs(20), "index waited {took:?}");
    let status = server.child.wait().unwrap();
    assert!(!status.success(), "the stopped server was killed");
    let log = std::fs::read_to_string(repo.path().join(".git/diffidx/hook.log")).unwrap();
    assert!(
        log.contains(&format!(
            "killed the query server (pid {pid}): it was stopped"
        )),
        "{log}"
    );
    assert!(log_json(&repo, false).contains("three"));
}

/// `graph` and `impact` go through the server too, with the answers the
/// store gives directly.
#[test]
fn the_server_answers_graph_and_impact_like_the_store() {
    let mut repo = TestRepo::new();
    repo.write(
        "src/Cart.cs",
        "namespace Shop { class Cart { int Total() => Sum(); int Sum() => 1; } \
         class Till { int Ring(Cart c) => c.Total(); } }\n",
    );
    repo.commit("cart");
    repo.write(
        "src/Cart.cs",
        "namespace Shop { class Cart { int Total() => Sum(); int Sum() => 2; } \
         class Till { int Ring(Cart c) => c.Total(); } }\n",
    );
    repo.commit("sum");
    succeeded(&repo.diffidx(&["index"]));
    let run = |args: &[&str], server: bool| answer(&repo, args, server);
    let graph = ["graph", "Cart.Total", "--json"];
    let impact = ["impact", "HEAD", "--json"];
    let direct_graph = run(&graph, false);
    let direct_impact = run(&impact, false);
    // Sum changed; Total calls it, Ring calls Total: two hops.
    assert!(direct_impact.contains("Shop.Till.Ring"), "{direct_impact}");
    assert!(direct_graph.contains("Shop.Cart.Sum"), "{direct_graph}");

    let server = Server::start(&repo, "60");
    assert_eq!(run(&graph, true), direct_graph);
    assert_eq!(
        server.next_line(),
        "graph of Cart.Total: 1 symbols, 2 reached"
    );
    assert_eq!(run(&impact, true), direct_impact);
    // Sum, and Cart and Shop that contain it.
    assert_eq!(server.next_line(), "impact of 3 touched symbols: 2 reached");
}

#[test]
fn the_server_answers_search_like_the_store() {
    let mut repo = TestRepo::new();
    repo.write(
        "src/Cart.cs",
        "namespace Shop { class Cart { /* tally the basket */ int Total() => Sum(); \
         int Sum() => 1; int Gone() => 0; } }\n",
    );
    repo.commit("cart");
    repo.write(
        "src/Cart.cs",
        "namespace Shop { class Cart { /* tally the basket */ int Total() => Sum(); \
         int Sum() => 2; } }\n",
    );
    repo.commit("gone");
    succeeded(&repo.diffidx(&["index"]));
    let run = |args: &[&str], server: bool| answer(&repo, args, server);
    let by_name = ["search", "--all", "Gone", "--json"];
    let by_text = ["search", "basket", "--json"];
    let direct_name = run(&by_name, false);
    let direct_text = run(&by_text, false);
    assert!(direct_name.contains("\"deleted_in\""), "{direct_name}");
    assert!(direct_text.contains("\"tier\": \"text\""), "{direct_text}");

    let server = Server::start(&repo, "60");
    assert_eq!(run(&by_name, true), direct_name);
    assert!(
        server.next_line().starts_with("search for \"Gone\": "),
        "the server did not answer"
    );
    assert_eq!(run(&by_text, true), direct_text);
    assert!(server.next_line().starts_with("search for \"basket\": "));
}

/// A store caught mid-write may fail to open for other reasons than "a
/// writer holds it" (changes to replay, files being replaced). The server
/// must keep trying until it opens: it once gave up after one such failure
/// and answered nothing from the store again.
#[test]
fn a_server_keeps_trying_to_reopen_a_store_it_released() {
    let repo = repo_with_history();
    let server = Server::start(&repo, "60");
    let direct = log_json(&repo, false);
    assert_eq!(log_json(&repo, true), direct);
    server.lines_until("history of Cart.Total: 2 entries");

    // Ask for the store as a writer does, then let the server find an
    // unreadable file in its place for a while.
    let store = repo.path().join(".git/diffidx/graph.lbdb");
    let saved = repo.path().join(".git/diffidx/graph.lbdb.saved");
    let mut stream = std::os::unix::net::UnixStream::connect(repo.socket()).unwrap();
    std::fs::rename(&store, &saved).unwrap();
    std::fs::write(&store, vec![0x5a; 8192]).unwrap();
    std::io::Write::write_all(&mut stream, b"{\"op\":\"release\"}\n").unwrap();
    let mut reply = String::new();
    BufReader::new(&stream).read_line(&mut reply).unwrap();
    assert!(reply.contains("\"ok\":true"), "{reply}");
    assert_eq!(server.next_line(), "released the store to a writer");
    let failed = server.next_line();
    assert!(
        failed.starts_with("could not reopen the store yet: "),
        "{failed}"
    );

    std::fs::rename(&saved, &store).unwrap();
    server.lines_until("reopened the store after a writer");
    assert_eq!(log_json(&repo, true), direct);
}

/// The server finds the symbols a query names in its name index, not with
/// a scan of the store: every kind of query gets the store's answer.
#[test]
fn the_server_finds_the_symbols_of_every_query_like_the_store() {
    let mut repo = TestRepo::new();
    repo.write(
        "src/Shop/Cart.cs",
        "namespace Shop { class Cart { int Total() => 1; int Total(int tax) => tax; \
         void Add(string item) { } } class Order { int Total() => 5; } }\n",
    );
    repo.write(
        "src/util.rs",
        "pub fn total() -> u32 { 1 }\nmod inner { pub fn total() -> u32 { 2 } }\n",
    );
    repo.commit("first");
    repo.write(
        "src/Shop/Cart.cs",
        "namespace Shop { class Cart { int Total() => 2; int Total(int tax) => tax + 1; } \
         class Order { int Total() => 6; } }\n",
    );
    repo.write(
        "src/util.rs",
        "pub fn total() -> u32 { 3 }\nmod inner { pub fn total() -> u32 { 2 } }\n",
    );
    repo.commit("second");
    // A move: Order goes to its own file.
    repo.write(
        "src/Shop/Cart.cs",
        "namespace Shop { class Cart { int Total() => 2; int Total(int tax) => tax + 1; } }\n",
    );
    repo.write(
        "src/Shop/Order.cs",
        "namespace Shop { class Order { int Total() => 6; } }\n",
    );
    repo.commit("move order");
    succeeded(&repo.diffidx(&["index"]));

    let queries: [&[&str]; 8] = [
        &["log", "--symbol", "Total", "--json"],
        &["log", "--symbol", "Cart.Total", "--json"],
        &["log", "--symbol", "Shop.Cart.Total(int)", "--json"],
        &["log", "--symbol", "Order.Total", "--json"],
        &["log", "--symbol", "Total", "--kind", "method", "--json"],
        &[
            "log",
            "--symbol",
            "total",
            "--path",
            "src/util.rs",
            "--json",
        ],
        &["log", "--symbol", "inner::total", "--json"],
        &["log", "--symbol", "Add", "--all", "--json"],
    ];
    let direct: Vec<String> = queries.iter().map(|q| answer(&repo, q, false)).collect();
    assert!(direct[3].contains("move order"), "{}", direct[3]);
    assert_ne!(
        direct[1], direct[2],
        "an overload is picked by its signature"
    );
    let _server = Server::start(&repo, "60");
    for (query, direct) in queries.iter().zip(&direct) {
        assert_eq!(&answer(&repo, query, true), direct, "{query:?}");
    }
}

/// The server walks moves and lineage in memory: a chain of moves longer
/// than the walk's 16 hops and a renamed method that continues the old
/// one get the store's answer, and a new state's moves are read again.
#[test]
fn the_server_follows_moves_and_lineage_like_the_store() {
    let body = "int Total(int a, int b) { var sum = a + b; if (sum > 100) { sum = 100; } \
                var twice = sum * 2; return twice - a; }";
    let mut repo = TestRepo::new();
    repo.write(
        "src/O0.cs",
        format!("namespace Shop {{ class Order {{ {body} }} }}\n"),
    );
    repo.commit("order");
    for i in 1..=18 {
        repo.remove(&format!("src/O{}.cs", i - 1));
        repo.write(
            &format!("src/O{i}.cs"),
            format!("namespace Shop {{ class Order {{ {body} }} }}\n"),
        );
        repo.commit(&format!("move {i}"));
    }
    let renamed = body.replace("Total", "Sum");
    repo.write(
        "src/O18.cs",
        format!("namespace Shop {{ class Order {{ {renamed} }} }}\n"),
    );
    repo.commit("rename");
    succeeded(&repo.diffidx(&["index"]));

    let queries: [&[&str]; 4] = [
        &["log", "--symbol", "Order.Total", "--json"],
        &["log", "--symbol", "Order.Sum", "--json"],
        &["log", "--symbol", "Shop.Order", "--json"],
        &["log", "--symbol", "Order.Total", "--all", "--json"],
    ];
    let direct: Vec<String> = queries.iter().map(|q| answer(&repo, q, false)).collect();
    assert!(direct[0].contains("move 18"), "{}", direct[0]);
    assert!(direct[0].contains("\"old_path\""), "{}", direct[0]);
    assert!(direct[1].contains("\"from\""), "{}", direct[1]);
    let _server = Server::start(&repo, "60");
    for (query, direct) in queries.iter().zip(&direct) {
        assert_eq!(&answer(&repo, query, true), direct, "{query:?}");
    }
    // One more move: the server reads the new state's moves.
    repo.remove("src/O18.cs");
    repo.write(
        "src/O19.cs",
        format!("namespace Shop {{ class Order {{ {renamed} }} }}\n"),
    );
    repo.commit("move 19");
    succeeded(&repo.diffidx(&["index"]));
    let moved = answer(&repo, queries[1], true);
    assert!(moved.contains("move 19"), "{moved}");
    assert_eq!(moved, answer(&repo, queries[1], false));
}

/// The server holds each commit's columns by the commit's place in the
/// store's table, which holds only while the store stays open: after it
/// yields the store to a `rebuild` and opens it again, its histories are
/// still the store's, before and after.
#[test]
fn after_a_rebuild_the_server_answers_like_the_store() {
    let mut repo = TestRepo::new();
    for i in 1..=6 {
        repo.write(
            "src/Cart.cs",
            format!("namespace Shop {{ class Cart {{ int Total() => {i}; }} }}\n"),
        );
        repo.commit(&format!("total {i}"));
    }
    // Loaded in two runs, then rebuilt from the notes in one.
    succeeded(&repo.diffidx(&["index", "HEAD~3"]));
    succeeded(&repo.diffidx(&["index"]));
    let direct = log_json(&repo, false);
    assert_eq!(direct.matches("\"status\"").count(), 6, "{direct}");
    let _server = Server::start(&repo, "60");
    assert_eq!(log_json(&repo, true), direct);
    succeeded(&repo.diffidx(&["rebuild"]));
    assert_eq!(log_json(&repo, false), direct);
    assert_eq!(log_json(&repo, true), direct);
}
