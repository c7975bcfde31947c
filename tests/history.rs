//! What `log` answers: lineage across renames and edited moves, and only
//! the history of the revision asked about. End to end on real repositories
//! with the real binary and a real store.

mod common;

use common::TestRepo;

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The entries of `log --json ARGS`, newest first.
fn log_entries(repo: &TestRepo, args: &[&str]) -> Vec<serde_json::Value> {
    let mut all = vec!["log", "--json"];
    all.extend_from_slice(args);
    let out = json(&repo.ok(&all));
    out.as_array().unwrap().clone()
}

/// `status qualname path [<- from]` of each history entry, newest first.
fn history(repo: &TestRepo, args: &[&str]) -> Vec<String> {
    log_entries(repo, args)
        .iter()
        .map(|e| {
            let from = e
                .get("from")
                .map(|f| format!(" <- {}", f["qualname"].as_str().unwrap()))
                .unwrap_or_default();
            format!(
                "{} {} {}{from}",
                e["status"].as_str().unwrap(),
                e["qualname"].as_str().unwrap(),
                e["path"].as_str().unwrap(),
            )
        })
        .collect()
}

/// The `from` links of a commit's note: `new <- old (similarity)`.
fn lineage(repo: &TestRepo, rev: &str) -> Vec<String> {
    let note = json(&repo.ok(&["show", rev, "--json"]));
    note["deltas"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| {
            let from = d.get("from")?;
            assert_eq!(d["status"], "ADDED", "{d}");
            let similarity = from["similarity"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&similarity), "{d}");
            Some(format!(
                "{} <- {} {}",
                d["qualname"].as_str().unwrap(),
                from["qualname"].as_str().unwrap(),
                from["path"].as_str().unwrap()
            ))
        })
        .collect()
}

const BUFFER: &str = "pub struct Buffer {\n    data: Vec<u8>,\n    pos: usize,\n}\n\nimpl Buffer {\n    pub fn roll(&mut self) {\n        let n = self.data.len() - self.pos;\n        self.data.copy_within(self.pos.., 0);\n        self.data.truncate(n);\n        self.pos = 0;\n    }\n\n    pub fn len(&self) -> usize {\n        self.data.len()\n    }\n}\n";

#[test]
fn a_renamed_and_edited_method_continues_its_history() {
    let mut repo = TestRepo::new();
    repo.write("src/buffer.rs", BUFFER);
    repo.commit("buffer");
    let renamed = BUFFER.replace("fn roll(", "fn roll_to_front(").replace(
        "self.pos = 0;",
        "self.pos = 0;\n        self.data.shrink_to_fit();",
    );
    repo.write("src/buffer.rs", renamed);
    let rename = repo.commit("rename roll");
    repo.ok(&["index", "-q"]);
    // The statuses stay the contract's: a DELETED and an ADDED, linked.
    assert_eq!(
        lineage(&repo, &rename),
        ["Buffer::roll_to_front <- Buffer::roll src/buffer.rs"]
    );
    let expected = [
        "ADDED Buffer::roll_to_front src/buffer.rs <- Buffer::roll",
        "DELETED Buffer::roll src/buffer.rs",
        "ADDED Buffer::roll src/buffer.rs",
    ];
    // From either name, the whole history.
    assert_eq!(history(&repo, &["roll_to_front"]), expected);
    assert_eq!(history(&repo, &["Buffer::roll"]), expected);
    let text = repo.ok(&["log", "roll_to_front"]);
    assert!(text.contains("(was Buffer::roll, "), "{text}");
    let shown = repo.ok(&["show", &rename]);
    assert!(shown.contains("(was Buffer::roll, "), "{shown}");
    // The store is rebuilt from the notes with the same links.
    repo.ok(&["rebuild"]);
    assert_eq!(history(&repo, &["roll_to_front"]), expected);
}

#[test]
fn a_type_renamed_with_its_file_and_a_function_moved_with_a_new_visibility_keep_their_lineage() {
    let mut repo = TestRepo::new();
    repo.write(
        "src/Reader.cs",
        "namespace Io\n{\n    public class LineReader\n    {\n        private int count;\n        public string Next(int limit) { count++; return Read(limit).Trim(); }\n        string Read(int n) { return new string('x', n); }\n    }\n}\n",
    );
    repo.write(
        "src/util.rs",
        "fn checksum(data: &[u8]) -> u32 {\n    let mut sum = 0u32;\n    for b in data {\n        sum = sum.wrapping_mul(31).wrapping_add(u32::from(*b));\n    }\n    sum\n}\n\nfn other() {}\n",
    );
    repo.commit("start");
    repo.git(&["mv", "src/Reader.cs", "src/TextReader.cs"]);
    repo.write(
        "src/TextReader.cs",
        "namespace Io\n{\n    public class TextLineReader\n    {\n        private int count;\n        public string Next(int limit) { count++; return Read(limit).Trim(); }\n        string Read(int n) { return new string('x', n); }\n    }\n}\n",
    );
    repo.write("src/util.rs", "fn other() {}\n");
    repo.write(
        "src/hash.rs",
        "pub fn checksum(data: &[u8]) -> u32 {\n    let mut sum = 0u32;\n    for b in data {\n        sum = sum.wrapping_mul(31).wrapping_add(u32::from(*b));\n    }\n    sum\n}\n",
    );
    let change = repo.commit("rename the reader, move checksum");
    repo.ok(&["index", "-q"]);
    let mut links = lineage(&repo, &change);
    links.sort();
    assert_eq!(
        links,
        [
            "Io.TextLineReader <- Io.LineReader src/Reader.cs",
            "checksum <- checksum src/util.rs",
        ]
    );
    assert_eq!(
        history(&repo, &["TextLineReader"]),
        // One commit's entries are in path order.
        [
            "DELETED Io.LineReader src/Reader.cs",
            "ADDED Io.TextLineReader src/TextReader.cs <- Io.LineReader",
            "ADDED Io.LineReader src/Reader.cs",
        ]
    );
    assert_eq!(
        history(&repo, &["checksum", "--path", "src/hash.rs"]),
        [
            "ADDED checksum src/hash.rs <- checksum",
            "DELETED checksum src/util.rs",
            "ADDED checksum src/util.rs",
        ]
    );
}

#[test]
fn unrelated_symbols_added_and_deleted_together_are_not_linked() {
    let mut repo = TestRepo::new();
    repo.write(
        "src/a.rs",
        "fn parse_header(line: &str) -> Option<(String, String)> {\n    let (k, v) = line.split_once(':')?;\n    Some((k.trim().to_lowercase(), v.trim().to_owned()))\n}\n",
    );
    repo.commit("one");
    repo.write(
        "src/a.rs",
        "fn render_table(rows: &[Vec<String>]) -> String {\n    let mut out = String::new();\n    for row in rows {\n        out.push_str(&row.join(\" | \"));\n        out.push('\\n');\n    }\n    out\n}\n",
    );
    let replaced = repo.commit("two");
    repo.ok(&["index", "-q"]);
    assert!(lineage(&repo, &replaced).is_empty());
    assert_eq!(
        history(&repo, &["render_table"]),
        ["ADDED render_table src/a.rs"]
    );
}

fn statuses(repo: &TestRepo, args: &[&str]) -> Vec<String> {
    history(repo, args)
        .iter()
        .map(|line| line.split(' ').next().unwrap().to_owned())
        .collect()
}

const SHOP: &str = "namespace Shop\n{\n    class Cart\n    {\n        int Total(int a) { return a; }\n        void Clear() { }\n    }\n}\n";

#[test]
fn log_answers_for_one_history_and_all_shows_every_branch() {
    let mut repo = TestRepo::new();
    repo.write("Cart.cs", SHOP);
    repo.commit("cart");
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo.write(
        "Cart.cs",
        SHOP.replace("        int Total(int a) { return a; }\n", ""),
    );
    repo.commit("drop total on a branch");
    repo.git(&["checkout", "-q", "-"]);
    repo.write("Cart.cs", SHOP.replace("return a;", "return a + 1;"));
    repo.commit("fix total on main");
    repo.ok(&["index", "-q", "--all", "feature", "HEAD"]);
    // HEAD's history: the branch's deletion is not in it.
    let out = repo.diffidx(&["log", "Total"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout
            .lines()
            .map(|l| l.split_whitespace().nth(2).unwrap())
            .collect::<Vec<_>>(),
        ["MODIFIED", "ADDED"],
        "{stdout}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("1 change on commits outside HEAD's history is hidden; `--all` shows it"),
        "{stderr}"
    );
    // The query server (the first `log` started it) answers the same, and
    // says the same of what it left out.
    repo.wait_for_socket(std::time::Duration::from_secs(20));
    let direct = repo.diffidx_env(&["log", "Total", "--json"], &[("DIFFIDX_SERVER", "off")]);
    let served = repo.diffidx(&["log", "Total", "--json"]);
    assert_eq!(served.stdout, direct.stdout);
    assert_eq!(served.stderr, direct.stderr);
    assert_eq!(statuses(&repo, &["Total", "feature"]), ["DELETED", "ADDED"]);
    assert_eq!(
        statuses(&repo, &["--symbol", "Total", "feature"]),
        ["DELETED", "ADDED"]
    );
    let mut all = statuses(&repo, &["Total", "--all"]);
    all.sort();
    assert_eq!(all, ["ADDED", "DELETED", "MODIFIED"]);
    let bad = repo.diffidx(&["log", "Total", "no-such-branch"]);
    // As for every command: an unknown revision is a usage error.
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no-such-branch"));
    let both = repo.diffidx(&["log", "Total", "feature", "--all"]);
    assert_eq!(both.status.code(), Some(2));
}

#[test]
fn commits_a_rebase_left_behind_are_hidden_then_forgotten_by_gc() {
    let mut repo = TestRepo::new();
    repo.write("Cart.cs", SHOP);
    repo.commit("cart");
    repo.write("Cart.cs", SHOP.replace("return a;", "return a * 2;"));
    let old = repo.commit("double the total");
    repo.ok(&["index", "-q"]);
    repo.git(&[
        "commit",
        "-q",
        "--amend",
        "-m",
        "double the total, reworded",
    ]);
    repo.ok(&["index", "-q"]);
    assert_eq!(statuses(&repo, &["Total"]), ["MODIFIED", "ADDED"]);
    assert_eq!(statuses(&repo, &["Total", "--all"]).len(), 3);
    // The left-behind commit is listed, then forgotten: notes and store.
    let listed = repo.ok(&["gc", "--dry-run"]);
    assert_eq!(listed.lines().collect::<Vec<_>>(), [old.as_str()]);
    repo.ok(&["gc"]);
    assert_eq!(statuses(&repo, &["Total", "--all"]), ["MODIFIED", "ADDED"]);
    let noted = repo.git(&["notes", "--ref", "diffidx", "list"]);
    assert!(!noted.contains(&old), "{noted}");
    assert_eq!(noted.lines().count(), 2);
    repo.ok(&["fsck"]);
    assert_eq!(repo.ok(&["gc", "--dry-run"]), "");
}

#[test]
fn a_name_nothing_matches_fails_with_the_names_it_may_have_meant() {
    let mut repo = TestRepo::new();
    repo.write("Cart.cs", SHOP);
    repo.commit("cart");
    repo.ok(&["index", "-q"]);
    for args in [
        &["log", "Totl"][..],
        &["log", "Shop.Basket.Total"],
        &["log", "total", "--json"],
    ] {
        let out = repo.diffidx(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("no indexed symbol matches")
                && stderr.contains("did you mean 'Shop.Cart.Total'"),
            "{args:?}: {stderr}"
        );
    }
    // JSON readers still get an array.
    let out = repo.diffidx(&["log", "Totl", "--json"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "[]\n");
    let out = repo.diffidx(&["log", "Zzzzzz"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("did you mean"));
    // A name that exists but whose changes are all filtered out is no error.
    let out = repo.diffidx(&["log", "Total", "--author", "nobody"]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn log_fits_the_terminal_and_colors_follow_git_config() {
    let mut repo = TestRepo::new();
    repo.write("Cart.cs", SHOP);
    repo.commit(&format!("cart {}", "with a long subject ".repeat(8)));
    repo.write("Cart.cs", SHOP.replace("return a;", "return a + 1;"));
    repo.commit("fix");
    repo.ok(&["index", "-q"]);
    // On a 100-column terminal every line fits; the subject gives way.
    let command = format!("{} --no-pager log Total", common::bin().display());
    let on_terminal = |columns: &str| {
        let out = repo
            .command("script")
            .args(["-qc", &command, "/dev/null"])
            .env("COLUMNS", columns)
            .env_remove("NO_COLOR")
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let shown = on_terminal("100");
    let lines: Vec<&str> = shown.lines().filter(|l| l.contains("Total")).collect();
    assert_eq!(lines.len(), 2, "{shown}");
    for line in &lines {
        assert!(console::measure_text_width(line) <= 100, "{line:?}");
        assert!(line.contains("Cart.cs:5"), "{line:?}");
    }
    assert!(
        lines
            .iter()
            .any(|l| console::strip_ansi_codes(l).ends_with('…')),
        "{shown}"
    );
    assert!(shown.contains("\x1b["), "a terminal gets colors: {shown:?}");
    // Piped output is neither cut nor colored...
    let piped = repo.ok(&["log", "Total"]);
    assert!(piped.contains("with a long subject with") && !piped.contains('\x1b'));
    // ...unless git config says always; `never` holds on a terminal too.
    repo.git(&["config", "color.ui", "always"]);
    assert!(repo.ok(&["log", "Total"]).contains("\x1b["));
    repo.git(&["config", "color.diffidx", "never"]);
    assert!(!repo.ok(&["log", "Total"]).contains('\x1b'));
    assert!(!on_terminal("200").contains('\x1b'));
    // `--color` wins over both; -p diffs are colored as git colors them.
    let patch = repo.ok(&["--color", "always", "log", "-p", "Total"]);
    assert!(
        patch.contains("\x1b[32m+") && patch.contains("\x1b[31m-"),
        "{patch:?}"
    );
}

#[test]
fn a_symbol_unchanged_in_the_indexed_commits_is_no_error_and_not_its_own_suggestion() {
    let mut repo = TestRepo::new();
    repo.write("Cart.cs", SHOP);
    repo.commit("cart");
    repo.write(
        "Cart.cs",
        SHOP.replace(
            "void Clear() { }",
            "void Clear() { }\n        void Empty() { }",
        ),
    );
    repo.commit("empty");
    // Only the second commit: `Total` is stored (its file was touched) but
    // never changed there.
    repo.ok(&["index", "-q", "HEAD~1..HEAD"]);
    let out = repo.diffidx(&["log", "Total"]);
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("history before") && stderr.contains("no recorded change of 'Total'"),
        "{stderr}"
    );
    assert!(!stderr.contains("did you mean"), "{stderr}");
    let out = repo.diffidx(&["log", "Totl"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("did you mean 'Shop.Cart.Total'"));
}

const SHAPES: &str = "class Shape:\n    def area(self):\n        def half(x):\n            return x / 2\n        return half(self.w * self.h)\n\n    def name(self):\n        return 'shape'\n";

#[test]
fn log_at_a_file_and_line_answers_for_the_innermost_symbol_there() {
    let mut repo = TestRepo::new();
    repo.write("geo/shapes.py", SHAPES);
    repo.commit("shapes");
    repo.write("geo/shapes.py", SHAPES.replace("x / 2", "x / 2.0"));
    repo.commit("halve in floats");
    repo.write("geo/shapes.py", SHAPES.replace("'shape'", "'Shape'"));
    repo.commit("capital name");
    repo.ok(&["index", "-q", "--all"]);

    // A line of a nested function is its method's; a method's line is the
    // method's, not the class's.
    let out = repo.diffidx(&["log", "geo/shapes.py:4"]);
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("note: geo/shapes.py:4 is in method Shape.area (geo/shapes.py:2-5)"),
        "{stderr}"
    );
    assert_eq!(
        history(&repo, &["geo/shapes.py:4"]),
        [
            "MODIFIED Shape.area geo/shapes.py",
            "MODIFIED Shape.area geo/shapes.py",
            "ADDED Shape.area geo/shapes.py"
        ]
    );
    // As of REV: at the first commit the method had one change.
    let first = repo.git(&["rev-list", "--max-parents=0", "HEAD"]);
    assert_eq!(
        history(&repo, &["geo/shapes.py:4", first.trim()]),
        ["ADDED Shape.area geo/shapes.py"]
    );
    assert_eq!(
        statuses(&repo, &["geo/shapes.py:1"]),
        ["MODIFIED", "MODIFIED", "ADDED"],
        "line 1 is the class's"
    );
    // From a subdirectory, a path from there.
    let out = repo
        .command(common::bin())
        .args(["log", "shapes.py:8", "--json"])
        .current_dir(repo.path().join("geo"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let entries = json(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(entries[0]["qualname"], "Shape.name");

    for (args, code, says) in [
        (
            &["log", "geo/shapes.py:99"][..],
            1,
            "no symbol holds line 99 of geo/shapes.py",
        ),
        (&["log", "geo/nope.py:3"][..], 1, "geo/nope.py is not in"),
        (
            &["log", "geo/shapes.py:4", "--kind", "method"][..],
            2,
            "--kind and --path do not apply",
        ),
    ] {
        let out = repo.diffidx(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

#[test]
fn log_leaves_out_a_side_branch_change_its_merge_did_not_keep() {
    let mut repo = TestRepo::new();
    repo.write("Cart.cs", SHOP);
    repo.commit("cart");
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo.write("Cart.cs", SHOP.replace("return a;", "return a + 1;"));
    repo.commit("total on the branch");
    repo.git(&["checkout", "-q", "-"]);
    repo.write("Cart.cs", SHOP.replace("return a;", "return a + 5;"));
    repo.commit("total on main");
    // The merge keeps main's files: the branch's change never arrived.
    repo.git(&[
        "merge",
        "-q",
        "-s",
        "ours",
        "-m",
        "merge feature",
        "feature",
    ]);
    repo.git(&["checkout", "-q", "-b", "kept", "feature"]);
    repo.write("Other.cs", "class Other { }\n");
    repo.commit("other on kept");
    repo.git(&["checkout", "-q", "-"]);
    repo.ok(&["index", "-q", "--all"]);

    let subjects = |args: &[&str]| -> Vec<String> {
        log_entries(&repo, args)
            .iter()
            .map(|e| e["subject"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(subjects(&["Total"]), ["total on main", "cart"]);
    assert_eq!(
        subjects(&["Total", "--full-history"]),
        ["total on main", "total on the branch", "cart"]
    );
    // Read from git's commit-graph file as from the commits.
    repo.git(&["commit-graph", "write", "--reachable"]);
    assert_eq!(subjects(&["Total"]), ["total on main", "cart"]);
    // As git log lists them for the file.
    let git_log = repo.git(&["log", "--format=%s", "--", "Cart.cs"]);
    assert_eq!(
        git_log.lines().collect::<Vec<_>>(),
        ["total on main", "cart"]
    );
    let out = repo.diffidx(&["log", "Total"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "1 change on side branches whose merge kept the other side's files is hidden"
        ),
        "{stderr}"
    );
    // On a branch that kept it, the change is there.
    assert_eq!(
        subjects(&["Total", "kept"]),
        ["total on the branch", "cart"]
    );
    let both = repo.diffidx(&["log", "Total", "--first-parent", "--full-history"]);
    assert_eq!(both.status.code(), Some(2));
}

#[test]
fn first_parent_log_credits_a_side_branch_to_its_merge() {
    let mut repo = TestRepo::new();
    repo.write("Cart.cs", SHOP);
    repo.commit("cart");
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo.write("Cart.cs", SHOP.replace("return a;", "return a + 1;"));
    repo.commit("fix total");
    repo.write("Cart.cs", SHOP.replace("return a;", "return a + 2;"));
    repo.commit("fix total again");
    repo.write(
        "Cart.cs",
        SHOP.replace("return a;", "return a + 2;").replace(
            "        void Clear() { }\n",
            "        void Clear() { }\n        void Undo() { }\n",
        ),
    );
    repo.commit("undo, added and kept");
    repo.git(&["checkout", "-q", "-"]);
    repo.write("Other.cs", "class Other { }\n");
    repo.commit("other on main");
    repo.git(&["merge", "-q", "--no-ff", "-m", "merge feature", "feature"]);
    repo.ok(&["index", "-q", "--all"]);

    let subjects = |args: &[&str]| -> Vec<String> {
        log_entries(&repo, args)
            .iter()
            .map(|e| {
                format!(
                    "{} {} {}",
                    e["status"].as_str().unwrap(),
                    e["subject"].as_str().unwrap(),
                    e["side_commits"].as_array().map_or(0, |s| s.len())
                )
            })
            .collect()
    };
    assert_eq!(
        subjects(&["Total"]),
        [
            "MODIFIED fix total again 0",
            "MODIFIED fix total 0",
            "ADDED cart 0"
        ]
    );
    assert_eq!(
        subjects(&["Total", "--first-parent"]),
        ["MODIFIED merge feature 2", "ADDED cart 0"]
    );
    // Added on the branch: ADDED at the merge.
    assert_eq!(
        subjects(&["Undo", "--first-parent"]),
        ["ADDED merge feature 1"]
    );
    let text = repo.ok(&["log", "Total", "--first-parent"]);
    assert!(text.contains("(2 side-branch commits)"), "{text}");
    let both = repo.diffidx(&["log", "Total", "--first-parent", "--all"]);
    assert_eq!(both.status.code(), Some(2));

    // The merge's record holds no change of its own; show says where to look,
    // and --first-parent (as impact, for a merge) answers what it brought.
    let out = repo.diffidx(&["show", "HEAD"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("no symbol changes"));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("git diffidx show --first-parent HEAD"),
        "{out:?}"
    );
    assert_eq!(
        json(&repo.ok(&["show", "HEAD", "--json"]))["deltas"],
        serde_json::json!([])
    );
    let changed = |args: &[&str]| -> Vec<String> {
        let note = json(&repo.ok(args));
        let mut names: Vec<String> = note["deltas"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                format!(
                    "{} {}",
                    d["status"].as_str().unwrap(),
                    d["qualname"].as_str().unwrap()
                )
            })
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        changed(&["show", "--first-parent", "HEAD", "--json"]),
        [
            "ADDED Shop.Cart.Undo",
            "MODIFIED Shop",
            "MODIFIED Shop.Cart",
            "MODIFIED Shop.Cart.Total"
        ]
    );
    // A commit that is no merge shows its own record either way.
    assert_eq!(
        changed(&["show", "--first-parent", "HEAD^2", "--json"]),
        changed(&["show", "HEAD^2", "--json"])
    );
    let impact = json(&repo.ok(&["impact", "HEAD", "--json"]));
    let mut touched: Vec<&str> = impact["touched"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["qualname"].as_str().unwrap())
        .collect();
    touched.sort();
    assert_eq!(
        touched,
        ["Shop", "Shop.Cart", "Shop.Cart.Total", "Shop.Cart.Undo"]
    );
}

/// `status [types]` of each entry of `log --json`, newest first.
fn typed(repo: &TestRepo, args: &[&str]) -> Vec<String> {
    log_entries(repo, args)
        .iter()
        .map(|e| {
            let types: Vec<&str> = e
                .get("changes")
                .and_then(|c| c.as_array())
                .into_iter()
                .flatten()
                .map(|t| t.as_str().unwrap())
                .collect();
            format!("{} [{}]", e["status"].as_str().unwrap(), types.join(","))
        })
        .collect()
}

#[test]
fn each_change_of_a_method_says_which_parts_changed() {
    let mut repo = TestRepo::new();
    let v1 = "package p;\n\nclass Cart {\n    /** The total. */\n    int total(int n) {\n        int sum = 0;\n        for (int i = 0; i < n; i++) {\n            sum += price(i) * count(i);\n        }\n        return n;\n    }\n}\n";
    repo.write("src/p/Cart.java", v1);
    repo.commit("cart");
    // A comment and the doc comment: no record, nothing to type.
    let v2 = v1
        .replace("The total.", "The sum.")
        .replace("return n;", "return n; // as is");
    repo.write("src/p/Cart.java", &v2);
    repo.commit("docs");
    let v3 = v2.replace("return n;", "return n * 2;");
    repo.write("src/p/Cart.java", &v3);
    repo.commit("body");
    let v4 = v3.replace(
        "    int total(int n) {",
        "    @Deprecated\n    public int total(int n) throws Exception {",
    );
    repo.write("src/p/Cart.java", &v4);
    repo.commit("annotations, modifiers, exceptions");
    let v5 = v4.replace("int total(int n)", "long sum(long n)");
    repo.write("src/p/Cart.java", &v5);
    repo.commit("rename, re-sign");
    repo.git(&["mv", "src/p/Cart.java", "src/p/Basket.java"]);
    let v6 = v5.replace("class Cart", "class Basket");
    repo.write("src/p/Basket.java", &v6);
    repo.commit("rename the class and its file");
    repo.ok(&["index", "-q"]);

    assert_eq!(
        typed(&repo, &["Basket.sum"]),
        [
            "MOVED [move,container]",
            "ADDED [rename,signature,parameters,return_type]",
            "DELETED []",
            "MODIFIED [signature,exceptions,modifiers,annotations]",
            "MODIFIED [body]",
            "ADDED []",
        ]
    );
    // `show` says the same of one commit; its JSON stays the note.
    let show = repo.ok(&["show", "HEAD~1", "--color", "never"]);
    assert!(
        show.contains("(was p.Cart.total(int), ")
            && show.contains("[rename, signature, parameters, return_type]"),
        "{show}"
    );
    assert!(!repo
        .ok(&["show", "HEAD~1", "--json"])
        .contains("\"changes\""));
}
