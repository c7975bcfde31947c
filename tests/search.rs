//! `search` on real repositories built in temp dirs: both tiers, deleted
//! symbols, filters, the text index kept by index runs equal to a rebuilt
//! one, and a torn or damaged text index rebuilt rather than served.

mod common;

use common::{succeeded, TestRepo};
use serde_json::Value;

const STORE: &str = r#"namespace Acme.Users
{
    public class UserStore
    {
        public User GetUserById(int id) { return Find(id); }
        public User GetUser(string name) { return null; }
        User Find(int id) { return null; }
    }
}
"#;

const RETRY: &str = r#"namespace Acme.Net
{
    public class Client
    {
        /// <summary>Waits with exponential backoff and jitter between attempts.</summary>
        public void Send()
        {
            var delay = Pause(3);
        }

        int Pause(int attempt) { return attempt * 2; }
    }
}
"#;

const READER: &str = "pub mod store {\n    pub fn open_reader(path: &str) -> u32 {\n        \
    // refuses a torn checkpoint\n        path.len() as u32\n    }\n}\n";

fn repo_with_code() -> TestRepo {
    let mut repo = TestRepo::new();
    repo.write("src/UserStore.cs", STORE);
    repo.write("src/Client.cs", RETRY);
    repo.write("src/store.rs", READER);
    repo.commit("code");
    succeeded(&repo.diffidx(&["index"]));
    repo
}

fn search(repo: &TestRepo, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["search", "--json"];
    all.extend_from_slice(args);
    let out = repo.diffidx_env(&all, &[("DIFFIDX_SERVER", "off")]);
    succeeded(&out);
    assert!(
        out.stderr.is_empty(),
        "search warned: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hits: Value = serde_json::from_slice(&out.stdout).unwrap();
    hits.as_array().unwrap().clone()
}

fn first(repo: &TestRepo, args: &[&str]) -> Value {
    search(repo, args)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("nothing found for {args:?}"))
}

#[test]
fn names_are_found_exactly_by_suffix_parts_prefix_and_misspelled() {
    let repo = repo_with_code();
    let hit = first(&repo, &["Acme.Users.UserStore.GetUserById"]);
    assert_eq!(hit["qualname"], "Acme.Users.UserStore.GetUserById");
    assert_eq!(hit["score"], 1.0);
    assert_eq!(hit["tier"], "name");
    assert_eq!(hit["kind"], "method");
    assert_eq!(hit["path"], "src/UserStore.cs");
    assert_eq!(hit["start_line"], 5);
    assert_eq!(hit["status"], "live");
    assert_eq!(hit["language"], "csharp");
    for query in [
        "UserStore.GetUserById",
        "get user by id",
        "get_user_by_id",
        "GetUsrById",
    ] {
        assert_eq!(
            first(&repo, &[query])["qualname"],
            "Acme.Users.UserStore.GetUserById",
            "{query}"
        );
    }
    // A prefix finds the shorter name first; a Rust path reads with `.` too.
    let found: Vec<Value> = search(&repo, &["GetUs"])
        .into_iter()
        .map(|h| h["qualname"].clone())
        .collect();
    assert_eq!(
        found,
        [
            "Acme.Users.UserStore.GetUser",
            "Acme.Users.UserStore.GetUserById"
        ]
    );
    assert_eq!(
        first(&repo, &["store.open_reader"])["qualname"],
        "store::open_reader"
    );
    assert_eq!(
        first(&repo, &["open read"])["qualname"],
        "store::open_reader"
    );
}

#[test]
fn words_of_code_and_comments_find_what_names_do_not() {
    let repo = repo_with_code();
    // From the doc comment.
    let hit = first(&repo, &["backoff jitter"]);
    assert_eq!(hit["qualname"], "Acme.Net.Client.Send");
    assert_eq!(hit["tier"], "text");
    // From a comment inside a Rust function.
    assert_eq!(
        first(&repo, &["torn checkpoint"])["qualname"],
        "store::open_reader"
    );
    // From a call in the body: Send calls Pause, so both say "pause".
    let pause: Vec<Value> = search(&repo, &["--text", "Pause"])
        .into_iter()
        .map(|h| h["qualname"].clone())
        .collect();
    assert_eq!(pause[0], "Acme.Net.Client.Pause");
    assert!(
        pause.contains(&Value::from("Acme.Net.Client.Send")),
        "{pause:?}"
    );
    // Nothing anywhere says this.
    assert!(search(&repo, &["zeppelin"]).is_empty());
}

#[test]
fn filters_narrow_by_kind_path_and_language() {
    let repo = repo_with_code();
    let kinds: Vec<Value> = search(&repo, &["--kind", "class", "User"])
        .into_iter()
        .map(|h| h["kind"].clone())
        .collect();
    assert!(
        !kinds.is_empty() && kinds.iter().all(|k| k == "class"),
        "{kinds:?}"
    );
    assert!(search(&repo, &["--lang", "rust", "GetUserById"]).is_empty());
    assert_eq!(
        first(&repo, &["--lang", "rs", "open_reader"])["qualname"],
        "store::open_reader"
    );
    assert!(search(&repo, &["--path", "src/Client.cs", "GetUserById"]).is_empty());
    assert_eq!(search(&repo, &["--path", "src/", "GetUserById"]).len(), 1);
    assert!(search(&repo, &["--path", "sr", "GetUserById"]).is_empty());

    for (args, says) in [
        (vec!["search", "--kind", "widget", "X"], "unknown kind"),
        (vec!["search", "--lang", "cobol", "X"], "unknown language"),
        (vec!["search", "--limit", "0", "X"], "--limit"),
        (vec!["search", "  "], "search for"),
    ] {
        let out = repo.diffidx(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(says),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn deleted_symbols_are_found_with_the_commit_that_deleted_them() {
    let mut repo = repo_with_code();
    repo.write(
        "src/UserStore.cs",
        STORE.replace(
            "        public User GetUser(string name) { return null; }\n",
            "",
        ),
    );
    let deleting = repo.commit("drop GetUser");
    succeeded(&repo.diffidx(&["index"]));
    let live = search(&repo, &["GetUser"]);
    assert!(
        live.iter()
            .all(|h| h["qualname"] != "Acme.Users.UserStore.GetUser"),
        "{live:?}"
    );
    let deleted = search(&repo, &["--deleted", "GetUser"]);
    assert_eq!(deleted.len(), 1, "{deleted:?}");
    assert_eq!(deleted[0]["qualname"], "Acme.Users.UserStore.GetUser");
    assert_eq!(deleted[0]["status"], "deleted");
    assert_eq!(deleted[0]["deleted_in"]["commit"], deleting.as_str());
    let all = search(&repo, &["--all", "GetUser"]);
    assert_eq!(all.len(), 2, "{all:?}");
    // The human form says the same.
    let out = repo.diffidx(&["search", "--deleted", "GetUser"]);
    succeeded(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("deleted in {}", &deleting[..12])),
        "{text}"
    );
}

/// What a few searches find, for comparing two states of the index: the
/// name tier's hits in order, the text tier's as a set (BM25 statistics
/// count replaced documents until segments merge, so text scores and the
/// order of near ties may differ slightly).
fn answers(repo: &TestRepo) -> Vec<(Vec<Value>, Vec<String>)> {
    ["Acme", "user", "zebra quasar", "backoff", "reader", "Pause"]
        .iter()
        .map(|q| {
            let hits = search(repo, &["--all", "--text", q]);
            let named = hits
                .iter()
                .filter(|h| h["tier"] == "name")
                .cloned()
                .collect();
            let mut texts: Vec<String> = hits
                .iter()
                .filter(|h| h["tier"] == "text")
                .map(|h| format!("{} {} {}", h["qualname"], h["path"], h["status"]))
                .collect();
            texts.sort();
            (named, texts)
        })
        .collect()
}

#[test]
fn index_runs_keep_the_text_index_equal_to_a_rebuilt_one() {
    let mut repo = repo_with_code();
    repo.write(
        "src/Client.cs",
        RETRY.replace("var delay = Pause(3);", "var delay = Pause(3); Zebra();"),
    );
    repo.write("src/Zoo.cs", "class Zoo { void Quasar() { } }\n");
    repo.commit("zebra");
    succeeded(&repo.diffidx(&["index"]));
    assert_eq!(first(&repo, &["zebra"])["qualname"], "Acme.Net.Client.Send");
    assert_eq!(first(&repo, &["quasar"])["qualname"], "Zoo.Quasar");
    repo.remove("src/store.rs");
    repo.git(&["mv", "src/Zoo.cs", "src/Zoo2.cs"]);
    repo.commit("move and delete");
    succeeded(&repo.diffidx(&["index"]));
    assert_eq!(first(&repo, &["quasar"])["path"], "src/Zoo2.cs");
    assert!(search(&repo, &["torn checkpoint"]).is_empty());
    let updated = answers(&repo);
    succeeded(&repo.diffidx(&["rebuild"]));
    assert_eq!(answers(&repo), updated);
}

#[test]
fn a_torn_or_damaged_text_index_is_rebuilt_not_served() {
    let mut repo = repo_with_code();
    // Killed between writing the documents and committing them. Only the
    // text tier knows the word: the search must rebuild it to answer.
    repo.write("src/Zoo.cs", "class Zoo { void Feed() { /* nebula */ } }\n");
    repo.commit("zoo");
    let out = repo.diffidx_env(&["index"], &[("DIFFIDX_FAULT", "search-uncommitted")]);
    assert!(!out.status.success());
    assert_eq!(first(&repo, &["nebula"])["qualname"], "Zoo.Feed");

    // Damaged files: every file of the index overwritten.
    let dir = repo.path().join(".git/diffidx/search");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::write(&path, b"not tantivy").unwrap();
        }
    }
    assert_eq!(first(&repo, &["nebula"])["qualname"], "Zoo.Feed");
    assert_eq!(
        first(&repo, &["backoff jitter"])["qualname"],
        "Acme.Net.Client.Send"
    );

    // Gone altogether (a store from before search): made again.
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        first(&repo, &["backoff jitter"])["qualname"],
        "Acme.Net.Client.Send"
    );
}

#[test]
fn search_without_an_index_says_what_to_run() {
    let mut repo = TestRepo::new();
    repo.write("a.rs", "fn a() {}\n");
    repo.commit("a");
    let out = repo.diffidx(&["search", "a"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("git diffidx init"));
}

/// Overloads share a name and a file, so they score the same: they are
/// listed by their place in the file, not in the order the store happens
/// to hold them (here, the one added later sits above the first).
#[test]
fn hits_of_equal_score_are_listed_by_place_whatever_the_store_order() {
    let mut repo = TestRepo::new();
    let class = |methods: &str| {
        format!("namespace Acme\n{{\n    public class Cache\n    {{\n{methods}    }}\n}}\n")
    };
    let by_name = "        public int Fetch(string key) { return 1; }\n";
    repo.write("src/Cache.cs", class(by_name));
    repo.commit("fetch by name");
    let by_id = "        public int Fetch(int id) { return 2; }\n";
    repo.write("src/Cache.cs", class(&format!("{by_id}{by_name}")));
    repo.commit("fetch by id, above");
    succeeded(&repo.diffidx(&["index"]));
    let hits = search(&repo, &["Fetch"]);
    let listed: Vec<(&str, f64)> = hits
        .iter()
        .map(|h| (h["sig"].as_str().unwrap(), h["score"].as_f64().unwrap()))
        .collect();
    assert_eq!(listed.len(), 2, "{hits:?}");
    assert_eq!(listed[0].1, listed[1].1, "equal scores: {hits:?}");
    assert_eq!(
        [listed[0].0, listed[1].0],
        ["(int)", "(string)"],
        "{hits:?}"
    );
}

/// A small Python package where each question has one right answer, and
/// the words of the question alone point elsewhere too.
fn python_package() -> TestRepo {
    let mut repo = TestRepo::new();
    repo.write(
        "shop/sessions.py",
        "class Session:\n    def send(self, request):\n        \"\"\"Sends a request and follows redirects.\"\"\"\n        \
         return self.resolve_redirects(request)\n\n    \
         def resolve_redirects(self, response):\n        # keeps the method of the original request\n        \
         return response\n",
    );
    repo.write(
        "shop/models.py",
        "class Request:\n    def prepare_body(self, data):\n        \"\"\"Sets the body and its content length.\"\"\"\n        \
         self.body = data\n        self.headers = {}\n\n    \
         def prepare_method(self, method):\n        self.method = method.upper()\n",
    );
    repo.write(
        "tests/test_sessions.py",
        "from shop.sessions import Session\n\ndef test_redirect_keeps_method():\n    \
         session = Session()\n    assert session.send('request') == 'request'\n    \
         # the method of the request after a redirect\n",
    );
    repo.commit("code");
    succeeded(&repo.diffidx(&["index"]));
    repo
}

#[test]
fn a_question_is_answered_by_names_paths_and_words_with_its_evidence() {
    let repo = python_package();
    // Prose alone: the method the comment describes, not the test that
    // quotes the same words.
    let issue = "Redirects lose the method of the original request\n\n\
                 After a redirect the method of the original request is not kept.";
    let hits = search(&repo, &[issue]);
    assert_eq!(
        hits[0]["qualname"], "Session.resolve_redirects",
        "{hits:#?}"
    );
    let why = &hits[0]["why"]["signals"];
    assert!(why["text"].as_f64().unwrap() > 0.0, "{why}");
    let terms: Vec<&str> = hits[0]["why"]["terms"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        terms.contains(&"method") && terms.contains(&"original"),
        "{terms:?}"
    );
    assert!(!terms.contains(&"the"), "{terms:?}");
    let test_rank = hits
        .iter()
        .position(|h| h["path"] == "tests/test_sessions.py")
        .unwrap_or(usize::MAX);
    assert!(test_rank > 0, "{hits:#?}");

    // A traceback names the frame's function and file.
    let traceback = "Setting a body fails\n\nTraceback (most recent call last):\n  \
                     File \"/site-packages/shop/models.py\", line 5, in prepare_body\n    \
                     self.headers = {}\nTypeError: boom";
    let hits = search(&repo, &[traceback]);
    assert_eq!(hits[0]["qualname"], "Request.prepare_body", "{hits:#?}");
    assert!(hits[0]["why"]["signals"]["paths"].as_f64().unwrap() > 0.0);
    assert!(hits[0]["why"]["signals"]["names"].as_f64().unwrap() > 0.0);

    // The files, ranked by their best symbol.
    let out = repo.diffidx_env(
        &["search", "--files", "--json", traceback],
        &[("DIFFIDX_SERVER", "off")],
    );
    succeeded(&out);
    let files: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(files[0]["path"], "shop/models.py", "{files:#}");

    // A name query is answered as before: by the name tier, no evidence.
    let hit = first(&repo, &["resolve_redirects"]);
    assert_eq!(hit["tier"], "name");
    assert!(hit.get("why").is_none(), "{hit}");
}

#[test]
fn snippets_fold_a_hit_to_its_signature_and_first_lines() {
    let repo = python_package();
    let hit = first(&repo, &["--snippets", "prepare_body"]);
    assert_eq!(hit["snippet"]["signature"], "def prepare_body(self, data):");
    let preview = hit["snippet"]["preview"].as_str().unwrap();
    assert_eq!(preview.lines().count(), 4, "{preview}");
    assert!(preview.contains("self.body = data"), "{preview}");
    // Without the flag there is none.
    assert!(first(&repo, &["prepare_body"]).get("snippet").is_none());
}

#[test]
fn files_are_read_off_the_vectors_at_their_own_weight() {
    use diffidx_lib::search::{RankParams, SearchQuery, Searcher};
    let repo = python_package();
    let git_repo = diffidx_core::git::Repo::discover(repo.path()).unwrap();
    let store =
        diffidx_lib::open::for_reading(&git_repo, std::time::Duration::from_secs(30)).unwrap();
    let reader = store.reader().unwrap();
    let state = diffidx_lib::state::StateDir::of(&git_repo);
    let searcher = Searcher::load(&reader, &state).unwrap();
    let entries = reader.search_entries().unwrap();
    let id = |qualname: &str| {
        entries
            .iter()
            .find(|e| e.qualname == qualname)
            .unwrap()
            .id
            .clone()
    };
    // The words point at sessions.py; these vectors at models.py.
    let vectors = vec![
        (id("Request.prepare_body"), 0.9_f32),
        (id("Session.resolve_redirects"), 0.1),
    ];
    let query = SearchQuery::new(
        "Redirects lose the method of the original request\n\n\
         After a redirect the method of the original request is not kept.",
        10,
    );
    let answer = |file_vectors: Option<f64>| {
        let params = RankParams {
            vectors: 0.1,
            file_vectors,
            ..RankParams::default()
        };
        searcher
            .search_with_vectors(&reader, &query, &params, &vectors)
            .unwrap()
    };
    let same = answer(None);
    assert_eq!(same.hits[0].qualname, "Session.resolve_redirects");
    assert_eq!(same.files[0].path, "shop/sessions.py", "{:?}", same.files);
    let heavier = answer(Some(10.0));
    assert_eq!(
        heavier.files[0].path, "shop/models.py",
        "{:?}",
        heavier.files
    );
    // The symbols stay ranked at the symbols' weight.
    assert_eq!(heavier.hits[0].qualname, "Session.resolve_redirects");
}
