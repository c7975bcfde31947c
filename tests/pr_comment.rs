//! `git diffidx pr-comment` end to end: a real repository with a pull
//! request branch, the real binary in a simulated Actions environment (the
//! standard `GITHUB_*` variables and an event file), and a loopback server
//! speaking GitHub's REST wire format (`common::github`).

mod common;

use std::path::Path;

use common::github::{FakeGitHub, NAME, OWNER, TOKEN};
use common::{fixtures, succeeded, TestRepo};

const MARKER: &str = "<!-- diffidx:pr-comment -->";
const PR: u64 = 7;

/// `main` and a `topic` branch whose net change has every group: the
/// `files_rename_move_delete` fixture (a modified, a deleted, an added and
/// moved symbols), an edit made and undone on the branch (not in the net
/// change), and a commit on `main` after the branch point (not in the PR).
fn pull_request_repo() -> TestRepo {
    let dir = fixtures().join("files_rename_move_delete");
    let mut repo = TestRepo::new();
    repo.replace_tree_with(&dir.join("before"));
    repo.commit("the shop");
    repo.git(&["checkout", "-q", "-b", "topic"]);
    repo.replace_tree_with(&dir.join("after"));
    let orders = std::fs::read_to_string(repo.path().join("src/Orders.cs")).unwrap();
    repo.write(
        "src/Orders.cs",
        orders.replace("Console.WriteLine(id);", "Console.WriteLine(id + 1);"),
    );
    repo.commit("rework the shop");
    repo.write("src/Orders.cs", orders);
    repo.commit("undo the change to Place");
    repo.git(&["checkout", "-q", "main"]);
    repo.write(
        "src/Inventory.cs",
        "namespace Shop { public class Inventory { public int Stock() => 3; } }\n",
    );
    repo.commit("main moves on");
    repo
}

fn rev(repo: &TestRepo, name: &str) -> String {
    repo.git(&["rev-parse", name]).trim().to_string()
}

/// A `pull_request` event payload, trimmed to what GitHub always sends.
fn write_event(repo: &TestRepo, dir: &Path) -> std::path::PathBuf {
    let (base, head) = (rev(repo, "main"), rev(repo, "topic"));
    let event = serde_json::json!({
        "action": "synchronize",
        "number": PR,
        "pull_request": {
            "number": PR,
            "state": "open",
            "title": "Rework the shop",
            "base": {"ref": "main", "sha": base, "repo": {"full_name": format!("{OWNER}/{NAME}")}},
            "head": {"ref": "topic", "sha": head, "repo": {"full_name": format!("{OWNER}/{NAME}")}}
        },
        "repository": {"full_name": format!("{OWNER}/{NAME}")}
    });
    let path = dir.join("event.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&event).unwrap()).unwrap();
    path
}

struct Actions {
    dir: tempfile::TempDir,
    api: String,
    token: Option<&'static str>,
}

impl Actions {
    fn new(server: &FakeGitHub) -> Actions {
        Actions {
            dir: tempfile::tempdir().unwrap(),
            api: server.base.clone(),
            token: Some(TOKEN),
        }
    }

    fn summary(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("summary.md")).unwrap_or_default()
    }

    /// Runs `pr-comment` the way the action does, with the event file for
    /// the repository's current branches.
    fn run(&self, repo: &TestRepo, extra: &[&str]) -> std::process::Output {
        let event = write_event(repo, self.dir.path());
        let summary = self.dir.path().join("summary.md");
        let merge_sha = rev(repo, "main"); // GITHUB_SHA is GitHub's test merge, not the head
        let mut env = vec![
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_EVENT_NAME", "pull_request"),
            ("GITHUB_API_URL", self.api.as_str()),
            ("GITHUB_SERVER_URL", "https://github.com"),
            ("GITHUB_REPOSITORY", "acme/widgets"),
            ("GITHUB_EVENT_PATH", event.to_str().unwrap()),
            ("GITHUB_SHA", merge_sha.as_str()),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
        ];
        if let Some(token) = self.token {
            env.push(("GITHUB_TOKEN", token));
        }
        let mut args = vec!["pr-comment"];
        args.extend_from_slice(extra);
        repo.diffidx_env(&args, &env)
    }
}

/// Every `[name](url)` link of the body: its blob URL points at lines of a
/// file at a commit of the repository, and those lines declare the name.
fn check_links(repo: &TestRepo, body: &str) -> usize {
    let prefix = format!("](https://github.com/{OWNER}/{NAME}/blob/");
    let mut checked = 0;
    for item in body.lines().filter(|l| l.starts_with("- ")) {
        let Some(start) = item.find(&prefix) else {
            continue;
        };
        let url = &item[start + prefix.len()..];
        let url = &url[..url.find(')').unwrap()];
        let (sha, rest) = url.split_once('/').unwrap();
        let (path, lines) = rest.split_once("#L").unwrap();
        let (first, last) = match lines.split_once("-L") {
            Some((a, b)) => (a.parse::<usize>().unwrap(), b.parse::<usize>().unwrap()),
            None => (lines.parse().unwrap(), lines.parse().unwrap()),
        };
        let text = repo.git(&["show", &format!("{sha}:{path}")]);
        let declared: Vec<&str> = text.lines().collect();
        assert!(
            first >= 1 && last <= declared.len() && first <= last,
            "{item}: lines {first}-{last} of {path} at {sha}"
        );
        let name = item.split('`').nth(1).unwrap();
        let own = name
            .split(['(', ' '])
            .next()
            .unwrap()
            .rsplit(['.', ':'])
            .next()
            .unwrap();
        let span = declared[first - 1..last].join("\n");
        assert!(span.contains(own), "{item}: {own} not in\n{span}");
        checked += 1;
    }
    checked
}

#[test]
fn dry_run_prints_every_group_of_the_net_change() {
    let repo = pull_request_repo();
    let out = repo.diffidx_env(
        &[
            "pr-comment",
            "--dry-run",
            "--repo",
            "acme/widgets",
            "--base",
            "main",
            "--head",
            "topic",
        ],
        &[],
    );
    let body = String::from_utf8(out.stdout.clone()).unwrap();
    succeeded(&out);
    insta::assert_snapshot!("pr_comment_every_group", body);

    assert!(body.starts_with(MARKER));
    for group in ["Modified (", "Deleted (", "Added (", "Moved ("] {
        assert!(body.contains(group), "{group} missing:\n{body}");
    }
    // The net change of the PR: neither the undone edit nor main's commit.
    assert!(!body.contains("Orders.Place"), "{body}");
    assert!(!body.contains("Inventory"), "{body}");
    assert!(body.contains("`Shop.Legacy.Old()`"), "{body}");
    assert!(
        body.contains("from `src/Customers.cs` to `src/Clients.cs`, modified"),
        "{body}"
    );
    let head = rev(&repo, "topic");
    assert!(
        body.contains(&format!("/blob/{head}/src/Clients.cs#L")),
        "{body}"
    );
    let items = body.lines().filter(|l| l.starts_with("- ")).count();
    assert_eq!(
        check_links(&repo, &body),
        items,
        "every entry links to its lines"
    );

    // Without --repo, a local dry run links into the repository `origin` names.
    let dry_run = || {
        repo.diffidx_env(
            &[
                "pr-comment",
                "--dry-run",
                "--base",
                "main",
                "--head",
                "topic",
            ],
            &[],
        )
    };
    repo.git(&["remote", "add", "origin", "git@github.com:Acme/Widgets.git"]);
    let out = dry_run();
    let inferred = String::from_utf8(out.stdout.clone()).unwrap();
    succeeded(&out);
    assert!(
        inferred.contains(&format!(
            "](https://github.com/acme/widgets/blob/{head}/src/Clients.cs#L"
        )),
        "{inferred}"
    );
    repo.git(&[
        "remote",
        "set-url",
        "origin",
        "https://gitlab.example/acme/widgets",
    ]);
    let out = dry_run();
    let unlinked = String::from_utf8(out.stdout.clone()).unwrap();
    assert!(
        !unlinked.contains("/blob/"),
        "not a repository of the server: no links"
    );
}

#[test]
fn run_twice_in_actions_creates_one_comment_then_updates_it_in_place() {
    let server = FakeGitHub::start();
    // 130 comments by others: ours lands on the second page of 100.
    for i in 0..130 {
        let body = if i == 5 {
            format!("quoting the bot: {MARKER}")
        } else {
            format!("review comment {i}")
        };
        server.seed(PR, "octocat", &body);
    }
    server.seed(
        PR + 1,
        "octocat",
        &format!("{MARKER}\nanother PR's comment"),
    );
    let mut repo = pull_request_repo();
    let actions = Actions::new(&server);

    let stderr = succeeded(&actions.run(&repo, &[]));
    assert!(
        stderr.contains("created the diffidx comment on acme/widgets#7"),
        "{stderr}"
    );
    let comments = server.comments(PR);
    assert_eq!(comments.len(), 131);
    let ours: Vec<_> = comments
        .iter()
        .filter(|c| c.body.starts_with(MARKER))
        .collect();
    assert_eq!(ours.len(), 1);
    let (id, first_body) = (ours[0].id, ours[0].body.clone());
    assert!(first_body.contains("`Shop.Legacy.Old()`"));
    assert!(!first_body.contains("Pricing"));
    let requests = server.requests();
    assert!(requests
        .iter()
        .all(|r| r.authorization.as_deref() == Some(&format!("Bearer {TOKEN}"))));
    let methods: Vec<_> = requests.iter().map(|r| r.method.as_str()).collect();
    assert_eq!(methods, ["GET", "GET", "GET", "POST"], "{requests:#?}");
    assert_eq!(requests[0].target, "/user", "who the token writes as");
    assert!(requests[2].target.contains("page=2"), "{requests:#?}");

    // Another push to the PR adds a symbol.
    repo.git(&["checkout", "-q", "topic"]);
    repo.write(
        "src/Pricing.cs",
        "namespace Shop\n{\n    public class Pricing\n    {\n        public decimal Discount(decimal p) => p;\n    }\n}\n",
    );
    repo.commit("add pricing");
    repo.git(&["checkout", "-q", "main"]);
    server.clear_requests();

    let stderr = succeeded(&actions.run(&repo, &[]));
    assert!(stderr.contains("updated the diffidx comment"), "{stderr}");
    let comments = server.comments(PR);
    assert_eq!(comments.len(), 131, "updated in place, not added");
    let ours: Vec<_> = comments
        .iter()
        .filter(|c| c.body.starts_with(MARKER))
        .collect();
    assert_eq!(ours.len(), 1);
    assert_eq!(ours[0].id, id);
    assert!(
        ours[0].body.contains("`Shop.Pricing.Discount(decimal)`"),
        "{}",
        ours[0].body
    );
    assert_ne!(ours[0].body, first_body);
    let methods: Vec<_> = server.requests().iter().map(|r| r.method.clone()).collect();
    assert_eq!(methods, ["GET", "GET", "GET", "PATCH"]);
    assert!(server.requests()[3]
        .target
        .ends_with(&format!("/issues/comments/{id}")));
    // Every modified and deleted member, with links that resolve.
    for name in [
        "`Shop.Customers.Count()`",
        "`Shop.Taxes.Tax(decimal)`](",
        "from `src/Orders.cs` to `src/Taxes.cs`",
        "`Shop.Legacy`",
    ] {
        assert!(ours[0].body.contains(name), "{name}");
    }
    let items = ours[0].body.lines().filter(|l| l.starts_with("- ")).count();
    assert_eq!(check_links(&repo, &ours[0].body), items);

    // Nothing new: the comment is left alone.
    server.clear_requests();
    let stderr = succeeded(&actions.run(&repo, &[]));
    assert!(stderr.contains("left unchanged"), "{stderr}");
    assert!(server.requests().iter().all(|r| r.method == "GET"));
    assert!(
        actions.summary().is_empty(),
        "the job summary is only a fallback"
    );
}

#[test]
fn a_duplicate_comment_is_removed_so_one_remains() {
    let server = FakeGitHub::start();
    let repo = pull_request_repo();
    let first = server.seed(PR, "github-actions[bot]", &format!("{MARKER}\nold"));
    server.seed(PR, "octocat", "lgtm");
    let second = server.seed(PR, "github-actions[bot]", &format!("{MARKER}\nolder race"));
    succeeded(&Actions::new(&server).run(&repo, &[]));
    let ours: Vec<_> = server
        .comments(PR)
        .into_iter()
        .filter(|c| c.body.starts_with(MARKER))
        .collect();
    assert_eq!(ours.len(), 1);
    assert_eq!(ours[0].id, first);
    assert!(server.comments(PR).iter().all(|c| c.id != second));
    assert_eq!(server.comments(PR).len(), 2);
}

#[test]
fn a_marker_comment_by_someone_else_is_never_edited_or_deleted() {
    let server = FakeGitHub::start();
    let repo = pull_request_repo();
    let planted = format!("{MARKER}\nplease click https://evil.example");
    let theirs = server.seed(PR, "mallory", &planted);
    succeeded(&Actions::new(&server).run(&repo, &[]));
    let comments = server.comments(PR);
    assert_eq!(comments.len(), 2, "ours is created beside theirs");
    let kept = comments.iter().find(|c| c.id == theirs).unwrap();
    assert_eq!(kept.body, planted);
    let ours = comments.iter().find(|c| c.id != theirs).unwrap();
    assert_eq!(ours.login, "github-actions[bot]");
    assert!(ours.body.contains("`Shop.Legacy.Old()`"));
    assert!(server
        .requests()
        .iter()
        .all(|r| !r.target.ends_with(&format!("/comments/{theirs}"))));

    // With a personal token, its own login is the identity: the bot's
    // comment is someone else's now, and a new one is made.
    server.set_user("octo-dev");
    succeeded(&Actions::new(&server).run(&repo, &[]));
    let comments = server.comments(PR);
    assert_eq!(comments.len(), 3);
    assert!(comments.iter().any(|c| c.login == "octo-dev"));
    // Named explicitly, the bot is the identity again: its comment is found.
    let out = Actions::new(&server).run(&repo, &["--comment-author", "github-actions[bot]"]);
    let stderr = succeeded(&out);
    assert!(stderr.contains("left unchanged"), "{stderr}");
    assert_eq!(server.comments(PR).len(), 3);
}

#[test]
fn a_read_only_token_writes_the_job_summary_instead() {
    let server = FakeGitHub::start();
    server.set_writable(false);
    let repo = pull_request_repo();
    let actions = Actions::new(&server);
    let out = actions.run(&repo, &[]);
    let stderr = succeeded(&out);
    assert!(stderr.contains("403"), "{stderr}");
    assert!(stderr.contains("job summary"), "{stderr}");
    assert!(server.comments(PR).is_empty());
    let summary = actions.summary();
    assert!(summary.starts_with(MARKER), "{summary}");
    assert!(summary.contains("`Shop.Legacy.Old()`"));
}

#[test]
fn nothing_is_posted_without_a_token() {
    let server = FakeGitHub::start();
    let repo = pull_request_repo();
    let mut actions = Actions::new(&server);
    actions.token = None;
    let out = actions.run(&repo, &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no GitHub token"), "{stderr}");
    assert!(server.requests().is_empty());
    assert!(actions.summary().contains("`Shop.Legacy.Old()`"));
}

#[test]
fn bad_credentials_and_unknown_repositories_fail_clearly() {
    let server = FakeGitHub::start();
    let repo = pull_request_repo();
    let mut actions = Actions::new(&server);
    actions.token = Some("ghs_wrong");
    let out = actions.run(&repo, &[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("401") && stderr.contains("GITHUB_TOKEN"),
        "{stderr}"
    );
    assert!(!stderr.contains("ghs_wrong"), "the token is never shown");

    let out = Actions::new(&server).run(&repo, &["--repo", "acme/gadgets"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("404") && stderr.contains("acme/gadgets#7"),
        "{stderr}"
    );
    assert!(server.comments(PR).is_empty());
}

#[test]
fn a_formatting_only_pull_request_says_so() {
    let mut repo = TestRepo::new();
    let source = "namespace Shop\n{\n    public class Cart\n    {\n        public int Total() => 1;\n    }\n}\n";
    repo.write("src/Cart.cs", source);
    repo.commit("cart");
    repo.git(&["checkout", "-q", "-b", "topic"]);
    repo.write(
        "src/Cart.cs",
        source.replace(
            "public int Total() => 1;",
            "// the total\n        public int Total()   =>   1;",
        ),
    );
    repo.commit("reformat");
    let body = repo.ok(&[
        "pr-comment",
        "--dry-run",
        "--base",
        "main",
        "--head",
        "topic",
    ]);
    assert!(
        body.contains(
            "No symbol changed: the edits to 1 source file only touch comments or formatting."
        ),
        "{body}"
    );
    let body = repo.ok(&[
        "pr-comment",
        "--dry-run",
        "--base",
        "main",
        "--head",
        "topic",
        "--languages",
        "rust",
    ]);
    assert!(
        body.contains("This pull request changes no Rust source files."),
        "{body}"
    );
}

/// Runs `pr-comment ARGS` outside Actions; asserts exit 2 and that stderr
/// names `hint`.
fn assert_usage_error(repo: &TestRepo, args: &[&str], hint: &str) {
    let mut full = vec!["pr-comment"];
    full.extend_from_slice(args);
    let out = repo.diffidx_env(&full, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(stderr.contains(hint), "{args:?}: {stderr}");
}

#[test]
fn missing_inputs_are_usage_errors() {
    let repo = pull_request_repo();
    let missing = "0123456789012345678901234567890123456789";
    assert_usage_error(&repo, &["--dry-run"], "--base");
    assert_usage_error(&repo, &["--dry-run", "--base", missing], "fetch-depth: 0");
    assert_usage_error(&repo, &["--base", "main", "--head", "topic"], "--pr");
    let cobol = ["--dry-run", "--base", "main", "--languages", "cobol"];
    assert_usage_error(&repo, &cobol, "known: csharp, rust");
}

#[test]
fn the_stand_in_writes_iso_8601_timestamps() {
    assert_eq!(common::github::timestamp(0), "1970-01-01T00:00:00Z");
    assert_eq!(
        common::github::timestamp(1_790_000_000),
        "2026-09-21T14:13:20Z"
    );
}
