//! The opt-in semantic layer end to end, with the real all-MiniLM-L6-v2
//! weights (`scripts/model`): off by default and then untouched; on, an
//! index run embeds every chunk once and later runs only what changed;
//! `search --semantic` finds code by meaning; another model is refused.

mod common;

use std::path::PathBuf;

use common::loopback::Loopback;
use common::query_server::Server;
use common::{succeeded, TestRepo};
use serde_json::Value;

/// The model `scripts/model` installs (scripts/test runs it first).
fn model_dir() -> PathBuf {
    let dir = diffidx_semantic::embed::installed_model_dir();
    assert!(
        dir.join("model.safetensors").is_file(),
        "no embedding model in {}; run scripts/model",
        dir.display()
    );
    dir
}

const PAYMENTS: &str = r#"namespace Shop.Billing
{
    public class PaymentProcessor
    {
        public void Process(Order order)
        {
            var result = gateway.Charge(order.Card, order.Total);
            if (!result.Ok)
            {
                ScheduleAnotherAttempt(order, result);
            }
        }

        /// <summary>Charges the card again later when the bank declined it.</summary>
        void ScheduleAnotherAttempt(Order order, ChargeResult result)
        {
            var wait = TimeSpan.FromMinutes(Math.Pow(2, order.Attempts));
            queue.Enqueue(order, wait);
            order.Attempts++;
        }
    }
}
"#;

const CATALOG: &str = r#"namespace Shop.Catalog
{
    public class ProductSearch
    {
        public List<Product> ByTitle(string words)
        {
            return products.Where(p => p.Title.Contains(words)).ToList();
        }

        public void ResizeThumbnail(Image image, int width)
        {
            image.Scale(width, width * image.Height / image.Width);
        }
    }
}
"#;

const CONFIG: &str = r#"pub mod settings {
    /// Reads the settings file from the user's home directory.
    pub fn load_settings(path: &str) -> String {
        std::fs::read_to_string(path).unwrap_or_default()
    }

    pub fn render_html_page(title: &str) -> String {
        format!("<html><title>{title}</title></html>")
    }
}
"#;

fn shop() -> TestRepo {
    let mut repo = TestRepo::new();
    repo.write("src/Billing/PaymentProcessor.cs", PAYMENTS);
    repo.write("src/Catalog/ProductSearch.cs", CATALOG);
    repo.write("src/settings.rs", CONFIG);
    repo.commit("shop");
    repo
}

fn semantic(repo: &TestRepo, query: &str) -> Vec<Value> {
    let out = repo.diffidx(&["search", "--semantic", "--json", query]);
    succeeded(&out);
    let hits: Value = serde_json::from_slice(&out.stdout).unwrap();
    hits.as_array().unwrap().clone()
}

fn names(hits: &[Value]) -> Vec<&str> {
    hits.iter()
        .map(|h| h["qualname"].as_str().unwrap())
        .collect()
}

/// The shop indexed with the installed model configured, and the model's
/// directory.
fn indexed_shop_with_model() -> (TestRepo, PathBuf) {
    let repo = shop();
    let model = model_dir();
    repo.git(&["config", "diffidx.embed.model", model.to_str().unwrap()]);
    succeeded(&repo.diffidx(&["index"]));
    (repo, model)
}

/// The same weights under another directory name: another pin.
fn renamed_copy(model: &std::path::Path) -> (tempfile::TempDir, PathBuf) {
    let other = tempfile::tempdir().unwrap();
    let renamed = other.path().join("renamed-model");
    std::fs::create_dir_all(&renamed).unwrap();
    common::copy_dir(model, &renamed);
    (other, renamed)
}

/// The semantic line of `index`'s report.
fn semantic_line(stderr: &str) -> &str {
    stderr
        .lines()
        .find(|l| l.starts_with("semantic index"))
        .unwrap_or_else(|| panic!("no semantic line in: {stderr}"))
}

#[test]
fn off_by_default_nothing_is_made_and_semantic_search_says_how_to_turn_it_on() {
    let repo = shop();
    let stderr = succeeded(&repo.diffidx(&["index"]));
    assert!(!stderr.contains("semantic"), "{stderr}");
    assert!(!repo.path().join(".git/diffidx/semantic").exists());
    let out = repo.diffidx(&["search", "--semantic", "retry failed payments"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("diffidx.embed.model"), "{stderr}");
}

#[test]
fn finds_code_by_meaning_and_embeds_unchanged_code_once() {
    let mut repo = shop();
    let model = model_dir();
    repo.git(&["config", "diffidx.embed.model", model.to_str().unwrap()]);
    let first = succeeded(&repo.diffidx(&["index"]));
    let line = semantic_line(&first);
    assert!(line.contains("remade"), "{line}");
    assert!(line.contains("all-MiniLM-L6-v2@"), "{line}");
    assert!(!line.contains(" 0 embedded"), "{line}");

    // No word of the query names the method that does it.
    let hits = semantic(&repo, "retry failed payments");
    let top: Vec<&str> = names(&hits).into_iter().take(3).collect();
    assert!(
        top.contains(&"Shop.Billing.PaymentProcessor.ScheduleAnotherAttempt"),
        "{top:?}"
    );
    let hits = semantic(&repo, "read the configuration from disk");
    assert_eq!(
        names(&hits)[0],
        "settings::load_settings",
        "{:?}",
        names(&hits)
    );
    // Its caller joins through the code graph.
    let hits = semantic(&repo, "retry failed payments");
    assert!(
        names(&hits).contains(&"Shop.Billing.PaymentProcessor.Process"),
        "{:?}",
        names(&hits)
    );

    // Nothing new: the index run does not even read the model.
    let again = succeeded(&repo.diffidx(&["index"]));
    assert!(!again.contains("semantic"), "{again}");
    // A commit that changes no code: nothing is chunked or embedded.
    repo.write("README.md", "# shop\n");
    repo.commit("readme");
    let line = succeeded(&repo.diffidx(&["index"]));
    let line = semantic_line(&line);
    assert!(
        line.contains("of 0 files re-chunked") && line.contains(" 0 embedded"),
        "{line}"
    );

    // One method changed: only its file is chunked again, and of its
    // chunks only the changed ones are embedded.
    repo.write(
        "src/Catalog/ProductSearch.cs",
        CATALOG.replace("width * image.Height", "width * image.Height * 2"),
    );
    repo.commit("taller thumbnails");
    let third = succeeded(&repo.diffidx(&["index"]));
    let line = semantic_line(&third);
    assert!(line.contains("of 1 files re-chunked"), "{line}");
    let embedded: usize = line
        .split(" embedded")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!((1..=2).contains(&embedded), "{line}");

    // A lost index is remade from the cache alone, byte for byte the same;
    // `rebuild` leaves it alone.
    let index = repo.path().join(".git/diffidx/semantic/index.json");
    let before = std::fs::read(&index).unwrap();
    std::fs::remove_file(&index).unwrap();
    let remade = succeeded(&repo.diffidx(&["index"]));
    let line = semantic_line(&remade);
    assert!(
        line.contains("remade") && line.contains(" 0 embedded"),
        "{line}"
    );
    assert_eq!(std::fs::read(&index).unwrap(), before);
    succeeded(&repo.diffidx(&["rebuild"]));
    assert_eq!(std::fs::read(&index).unwrap(), before);
    let hits = semantic(&repo, "read the configuration from disk");
    assert_eq!(names(&hits)[0], "settings::load_settings");
}

/// How many chunks the on-demand note says were embedded now.
fn embedded_now(stderr: &str) -> usize {
    stderr
        .lines()
        .find(|l| l.starts_with("note: no semantic index"))
        .and_then(|l| l.split(" chunks embedded now").next())
        .and_then(|s| s.rsplit('(').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no on-demand note in: {stderr}"))
}

#[test]
fn on_demand_a_question_embeds_its_first_candidates_once_and_names_need_the_index() {
    let repo = shop();
    let model = model_dir();
    repo.git(&["config", "diffidx.embed.model", model.to_str().unwrap()]);
    repo.git(&["config", "diffidx.embed.onDemand", "true"]);
    let stderr = succeeded(&repo.diffidx(&["index"]));
    assert!(!stderr.contains("semantic"), "{stderr}");
    let semantic_dir = repo.path().join(".git/diffidx/semantic");
    assert!(!semantic_dir.join("index.json").exists());

    let question = "read the configuration from disk";
    let out = repo.diffidx(&["search", "--semantic", "--json", question]);
    let first = succeeded(&out);
    assert!(embedded_now(&first) > 0, "{first}");
    assert!(semantic_dir.join("vectors").exists());
    let hits: Value = serde_json::from_slice(&out.stdout).unwrap();
    let hits = hits.as_array().unwrap();
    assert_eq!(names(hits)[0], "settings::load_settings", "{hits:?}");
    // The vectors ranked it, as one more signal; words alone have none.
    assert!(
        hits[0]["why"]["signals"]["vectors"].as_f64() > Some(0.0),
        "{hits:?}"
    );
    let plain = repo.diffidx(&["search", "--json", question]);
    succeeded(&plain);
    let plain: Value = serde_json::from_slice(&plain.stdout).unwrap();
    assert!(
        plain[0]["why"]["signals"].get("vectors").is_none(),
        "{plain}"
    );

    // Asked again: every chunk it reads is in the cache.
    let again = succeeded(&repo.diffidx(&["search", "--semantic", question]));
    assert_eq!(embedded_now(&again), 0, "{again}");

    // A name is compared with every symbol: that needs the index.
    let out = repo.diffidx(&["search", "--semantic", "load_settings"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("on demand"), "{stderr}");
}

#[test]
fn vectors_of_another_model_are_never_compared() {
    let (mut repo, model) = indexed_shop_with_model();
    // The same weights under another name are another pin.
    let (_other, renamed) = renamed_copy(&model);
    repo.git(&["config", "diffidx.embed.model", renamed.to_str().unwrap()]);
    let out = repo.diffidx(&["search", "--semantic", "retry failed payments"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("made by the model all-MiniLM-L6-v2@") && stderr.contains("renamed-model@"),
        "{stderr}"
    );
    // The next index run remakes it with the configured model.
    repo.write("src/extra.rs", "pub fn noop() {}\n");
    repo.commit("extra");
    let line = succeeded(&repo.diffidx(&["index"]));
    assert!(semantic_line(&line).contains("remade"), "{line}");
    assert!(!semantic(&repo, "retry failed payments").is_empty());
}

#[test]
fn the_query_server_answers_semantic_searches_like_the_process_and_follows_the_index() {
    let (mut repo, model) = indexed_shop_with_model();
    let ask = ["search", "--semantic", "--json", "retry failed payments"];
    let here = repo.diffidx_env(&ask, &[("DIFFIDX_SERVER", "off")]);
    succeeded(&here);
    let server = Server::start(&repo, "60");
    for _ in 0..2 {
        let served = repo.diffidx(&ask);
        succeeded(&served);
        assert_eq!(
            String::from_utf8_lossy(&served.stdout),
            String::from_utf8_lossy(&here.stdout)
        );
        let line = server.next_line();
        assert!(
            line.starts_with("semantic search for \"retry failed payments\": ")
                && line.ends_with(" hits"),
            "{line}"
        );
    }
    // A new commit changes the semantic index: the server answers from the
    // new one.
    repo.write(
        "src/reminders.rs",
        "/// Sends the customer an email that reminds them of an unpaid invoice.\n\
         pub fn send_invoice_reminder(address: &str) {\n    mailer::send(address, \"Your invoice is due\");\n}\n",
    );
    repo.commit("reminders");
    succeeded(&repo.diffidx(&["index"]));
    let ask = [
        "search",
        "--semantic",
        "--json",
        "email a reminder about an unpaid bill",
    ];
    let served = repo.diffidx(&ask);
    succeeded(&served);
    let hits: Value = serde_json::from_slice(&served.stdout).unwrap();
    assert_eq!(
        names(hits.as_array().unwrap()).first(),
        Some(&"send_invoice_reminder"),
        "{hits}"
    );
    let asked = "semantic search for \"email a reminder about an unpaid bill\": ";
    while !server.next_line().starts_with(asked) {}
    let here = repo.diffidx_env(&ask, &[("DIFFIDX_SERVER", "off")]);
    assert_eq!(served.stdout, here.stdout);
    // Another model configured: refused, although the server holds the
    // index's.
    let (_other, renamed) = renamed_copy(&model);
    repo.git(&["config", "diffidx.embed.model", renamed.to_str().unwrap()]);
    let out = repo.diffidx(&ask);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn a_broken_model_directory_warns_and_loses_no_record() {
    let mut repo = shop();
    let broken = tempfile::tempdir().unwrap();
    std::fs::write(broken.path().join("config.json"), "{ not json").unwrap();
    repo.git(&[
        "config",
        "diffidx.embed.model",
        broken.path().to_str().unwrap(),
    ]);
    let stderr = succeeded(&repo.diffidx(&["index"]));
    assert!(
        stderr.contains("warning: the semantic index was not updated")
            && stderr.contains("config.json"),
        "{stderr}"
    );
    let log = repo.ok(&["log", "--symbol", "settings::load_settings", "--json"]);
    assert!(log.contains("ADDED"), "{log}");
    repo.write("src/extra.rs", "pub fn noop() {}\n");
    repo.commit("extra");
    succeeded(&repo.diffidx(&["index"]));
}

#[test]
fn an_embedding_service_feeds_the_index_and_its_outage_loses_no_record() {
    let mut repo = shop();
    let server = Loopback::start();
    repo.git(&["config", "diffidx.embed.provider", "ollama"]);
    repo.git(&[
        "config",
        "diffidx.embed.host",
        &format!("http://127.0.0.1:{}", server.port),
    ]);
    repo.git(&["config", "diffidx.embed.model", "tiny"]);
    repo.git(&["config", "diffidx.embed.retries", "0"]);
    let stderr = succeeded(&repo.diffidx(&["index"]));
    let line = semantic_line(&stderr);
    assert!(line.contains("(ollama:tiny@probe-"), "{line}");
    assert!(!line.contains(" 0 embedded"), "{line}");
    let hits = semantic(&repo, "retry failed payments");
    assert!(!hits.is_empty());

    // The service goes away: the index run warns, the records are written.
    drop(server);
    repo.write("src/extra.rs", "pub fn noop() {}\n");
    repo.commit("extra");
    let stderr = succeeded(&repo.diffidx(&["index"]));
    assert!(
        stderr.contains("warning: the semantic index was not updated")
            && stderr.contains("ollama:tiny"),
        "{stderr}"
    );
    let log = repo.ok(&["log", "--symbol", "noop", "--json"]);
    assert!(log.contains("ADDED"), "{log}");
    let out = repo.diffidx(&["search", "--semantic", "retry"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot reach"), "{stderr}");
}

/// `shop` with the semantic layer on, indexed, and a chat model at `server`.
fn shop_with_chat(server: &Loopback) -> TestRepo {
    let repo = shop();
    repo.git(&[
        "config",
        "diffidx.embed.model",
        model_dir().to_str().unwrap(),
    ]);
    repo.git(&["config", "diffidx.llm.model", "tiny"]);
    repo.git(&["config", "diffidx.llm.host", &server.url()]);
    repo.git(&["config", "diffidx.llm.retries", "0"]);
    succeeded(&repo.diffidx(&["index"]));
    repo
}

#[test]
fn hyde_ranks_by_the_code_the_chat_model_writes_for_the_question() {
    let dir = tempfile::tempdir().unwrap();
    let server = Loopback::with_answers(
        dir.path(),
        &serde_json::json!([
            {"contains": "pictures for the shop window",
             "answer": "```csharp\npublic void ResizeThumbnail(Image image, int width)\n{\n    image.Scale(width, width * image.Height / image.Width);\n}\n```"},
        ]),
    );
    let repo = shop_with_chat(&server);
    let query = "pictures for the shop window";
    let before = server.asked().len();
    let plain = names(&semantic(&repo, query)).join(" ");
    assert!(
        !plain.starts_with("Shop.Catalog.ProductSearch.ResizeThumbnail"),
        "{plain}"
    );
    let out = repo.diffidx(&["search", "--semantic", "--hyde", "--json", query]);
    let stderr = succeeded(&out);
    assert!(
        stderr.contains("note: the query was expanded by ollama:tiny (HyDE)"),
        "{stderr}"
    );
    let hits: Value = serde_json::from_slice(&out.stdout).unwrap();
    let hits = hits.as_array().unwrap();
    assert_eq!(
        hits[0]["qualname"], "Shop.Catalog.ProductSearch.ResizeThumbnail",
        "with HyDE: {hits:?}\nwithout: {plain}"
    );
    // The model was asked for code in the repository's languages, once:
    // the same search again is answered from the cache.
    let asked = server.asked();
    assert_eq!(asked[before..], [query.to_owned()]);
    succeeded(&repo.diffidx(&["search", "--semantic", "--hyde", query]));
    assert_eq!(server.asked().len(), before + 1);
}

#[test]
fn rerank_reorders_the_best_hits_and_a_chat_outage_only_warns() {
    let dir = tempfile::tempdir().unwrap();
    let server = Loopback::with_answers(
        dir.path(),
        &serde_json::json!([
            {"contains": "Candidates:", "rank_first": "ProductSearch.ByTitle("},
        ]),
    );
    let repo = shop_with_chat(&server);
    let query = "retry failed payments";
    let before = server.asked().len();
    let plain = semantic(&repo, query);
    assert_ne!(plain[0]["qualname"], "Shop.Catalog.ProductSearch.ByTitle");
    let out = repo.diffidx(&[
        "search",
        "--semantic",
        "--rerank",
        "10",
        "--limit",
        "3",
        "--json",
        query,
    ]);
    let stderr = succeeded(&out);
    let hits: Value = serde_json::from_slice(&out.stdout).unwrap();
    let hits = hits.as_array().unwrap();
    assert_eq!(hits.len(), 3);
    assert_eq!(hits[0]["qualname"], "Shop.Catalog.ProductSearch.ByTitle");
    assert_eq!(hits[0]["reranked_by"], "ollama:tiny");
    // The answer "N, 1": the old first is now second.
    assert_eq!(hits[1]["qualname"], plain[0]["qualname"]);
    let scores: Vec<f64> = hits.iter().map(|h| h["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    assert!(stderr.contains("reranked by ollama:tiny"), "{stderr}");
    let asked = &server.asked()[before..];
    assert_eq!(asked.len(), 1);
    assert!(asked[0].contains("Question: retry failed payments"));
    assert!(
        asked[0].contains("queue.Enqueue(order, wait);"),
        "the code is shown"
    );

    drop(server);
    let out = repo.diffidx(&[
        "search",
        "--semantic",
        "--rerank",
        "5",
        "--json",
        "thumbnail",
    ]);
    let stderr = succeeded(&out);
    assert!(
        stderr.contains("warning: the hits were not reranked: the chat model: cannot reach"),
        "{stderr}"
    );
    let hits: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(hits
        .as_array()
        .unwrap()
        .iter()
        .all(|h| h.get("reranked_by").is_none()));
}

#[test]
fn chat_steps_need_semantic_and_a_chat_model() {
    let repo = shop();
    repo.git(&[
        "config",
        "diffidx.embed.model",
        model_dir().to_str().unwrap(),
    ]);
    succeeded(&repo.diffidx(&["index"]));
    let out = repo.diffidx(&["search", "--hyde", "retry"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("add --semantic"));
    let out = repo.diffidx(&["search", "--semantic", "--rerank", "5", "retry"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("diffidx.llm.model"));
}

#[test]
fn files_and_directories_are_summarized_once_and_again_only_where_children_changed() {
    let dir = tempfile::tempdir().unwrap();
    let server = Loopback::with_answers(
        dir.path(),
        &serde_json::json!([
            {"contains": "File: src/Catalog/ProductSearch.cs",
             "answer": "Finds products by title and scales product pictures for the zebra orchestra."},
            {"contains": "File: src/Billing/PaymentProcessor.cs",
             "answer": "Charges orders and schedules retries of declined payments."},
            {"contains": "expect(\"settings\")",
             "answer": "Loads the settings, failing when the file is missing."},
            {"contains": "File: src/settings.rs",
             "answer": "Loads the settings, empty when the file is missing."},
        ]),
    );
    let mut repo = shop_with_chat(&server);
    let summaries = repo.path().join(".git/diffidx/semantic/summaries.json");
    let tree: Value = serde_json::from_slice(&std::fs::read(&summaries).unwrap()).unwrap();
    assert_eq!(tree["model"], "ollama:tiny");
    assert_eq!(
        tree["files"]["src/Catalog/ProductSearch.cs"]["summary"],
        "Finds products by title and scales product pictures for the zebra orchestra."
    );
    // One child: the directory takes its summary; three: it is asked.
    assert_eq!(
        tree["directories"]["src/Catalog"]["summary"],
        tree["files"]["src/Catalog/ProductSearch.cs"]["summary"]
    );
    let src = tree["directories"]["src"]["summary"].as_str().unwrap();
    assert!(
        src.starts_with("echo: Directory: src Its parts: - Billing:"),
        "{src}"
    );
    let asked = server.asked();
    assert_eq!(asked.len(), 4, "3 files and src/: {asked:?}");

    // Nothing changed: nothing asked, no line.
    let stderr = succeeded(&repo.diffidx(&["index"]));
    assert!(!stderr.contains("file and directory summaries"), "{stderr}");
    assert_eq!(server.asked().len(), 4);

    // One file changed: it, and the directories above it, only.
    repo.write(
        "src/settings.rs",
        CONFIG.replace("unwrap_or_default()", "expect(\"settings\")"),
    );
    repo.commit("settings must exist");
    let stderr = succeeded(&repo.diffidx(&["index"]));
    let line = stderr
        .lines()
        .find(|l| l.starts_with("file and directory summaries"))
        .unwrap_or_else(|| panic!("{stderr}"));
    let after_text = std::fs::read_to_string(&summaries).unwrap();
    assert!(
        line.contains(
            "1 files, 2 directories by ollama:tiny; 2 asked, 0 from the cache; 3 embedded"
        ),
        "{line}\n{after_text}"
    );
    let after: Value = serde_json::from_slice(&std::fs::read(&summaries).unwrap()).unwrap();
    assert_eq!(
        after["directories"]["src/Billing"],
        tree["directories"]["src/Billing"]
    );
    assert_ne!(after["directories"]["src"], tree["directories"]["src"]);

    // The summary leads a question about the module to its symbols.
    // Only the summary speaks of a zebra orchestra: without it, the
    // question's nearest chunks are elsewhere.
    let query = "zebra orchestra";
    let with = names(&semantic(&repo, query)).join(" ");
    assert!(with.starts_with("Shop.Catalog.ProductSearch."), "{with:?}");
    std::fs::remove_file(&summaries).unwrap();
    let without = names(&semantic(&repo, query)).join(" ");
    assert!(
        !without.starts_with("Shop.Catalog.ProductSearch."),
        "{without:?}"
    );
}

#[test]
fn context_with_a_query_matches_changes_by_meaning_too() {
    let mut repo = shop();
    repo.git(&[
        "config",
        "diffidx.embed.model",
        model_dir().to_str().unwrap(),
    ]);
    repo.write(
        "src/Billing/PaymentProcessor.cs",
        PAYMENTS.replace("order.Attempts++;", "order.Attempts += 1;"),
    );
    repo.write(
        "src/Catalog/ProductSearch.cs",
        CATALOG.replace("width * image.Height", "width * image.Height * 2"),
    );
    repo.write(
        "src/settings.rs",
        CONFIG.replace("<html>", "<html lang=\"en\">"),
    );
    repo.commit("three edits");
    succeeded(&repo.diffidx(&["index"]));
    let time: u64 = repo
        .git(&["log", "-1", "--format=%at"])
        .trim()
        .parse()
        .unwrap();
    let maps = tempfile::tempdir().unwrap();
    let map = maps.path().join("services.toml");
    std::fs::write(&map, format!("[services.shop]\nrepo = {:?}\n", repo.path())).unwrap();
    let ask = [
        "context",
        "--service",
        "shop",
        "--since",
        &(time - 1).to_string(),
        "--until",
        &(time + 1).to_string(),
        "--map",
        map.to_str().unwrap(),
        "--query",
        "charge the card again when the bank declines",
        "--json",
    ];
    // Answered by this process first (no query server is started).
    let out = repo.diffidx_env(&ask, &[("DIFFIDX_SERVER", "off")]);
    let stderr = succeeded(&out);
    assert!(
        stderr.contains("matched to the query by names, text, vectors"),
        "{stderr}"
    );
    let records: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        records[0]["qualname"], "Shop.Billing.PaymentProcessor.ScheduleAnotherAttempt",
        "{records:?}"
    );
    assert_eq!(records[0]["relevance"], 1.0);
    // A query server holds the indexes and the model: it answers the
    // relevance, and the records are the same as the process makes.
    let server = Server::start(&repo, "60");
    for _ in 0..2 {
        let served = repo.diffidx(&ask);
        let stderr = succeeded(&served);
        assert!(stderr.contains("by names, text, vectors"), "{stderr}");
        assert_eq!(
            String::from_utf8_lossy(&served.stdout),
            String::from_utf8_lossy(&out.stdout)
        );
        let asked = "relevance of 8 symbols to \"charge the card again when the bank declines\": ";
        let line = loop {
            let line = server.next_line();
            if line.starts_with("relevance of ") {
                break line;
            }
        };
        assert!(
            line.starts_with(asked) && line.ends_with(" match, by names, text, vectors"),
            "{line}"
        );
    }
}

#[test]
fn fusion_weights_are_fitted_once_on_the_repositorys_own_history() {
    let verbs = ["compute", "validate", "render", "parse", "schedule"];
    let nouns = [
        "shipping cost",
        "invoice total",
        "user profile",
        "search index",
        "retry delay",
        "tax rate",
        "cart items",
        "order status",
        "email body",
        "session token",
    ];
    let name = |v: &str, n: &str| {
        let mut s = String::new();
        for word in std::iter::once(v).chain(n.split(' ')) {
            let mut c = word.chars();
            s.extend(c.next().map(|f| f.to_ascii_uppercase()));
            s.push_str(c.as_str());
        }
        s
    };
    let file = |k: usize, version: &[usize]| {
        let mut text = format!("namespace Shop\n{{\n    public class Part{k}\n    {{\n");
        for (j, verb) in verbs.iter().enumerate() {
            text.push_str(&format!(
                "        public int {}(int x)\n        {{\n            return x * {};\n        }}\n\n",
                name(verb, nouns[k]),
                version[j] + 1
            ));
        }
        text.push_str("    }\n}\n");
        text
    };
    let mut repo = TestRepo::new();
    let mut versions = vec![vec![0usize; verbs.len()]; nouns.len()];
    for (k, v) in versions.iter().enumerate() {
        repo.write(&format!("src/Part{k}.cs"), file(k, v));
    }
    repo.commit("parts");
    for round in 0..verbs.len() {
        for k in 0..nouns.len() {
            versions[k][round] += 1;
            repo.write(&format!("src/Part{k}.cs"), file(k, &versions[k]));
            repo.commit(&format!("{} the {} differently", verbs[round], nouns[k]));
        }
    }
    repo.git(&[
        "config",
        "diffidx.embed.model",
        model_dir().to_str().unwrap(),
    ]);
    let stderr = succeeded(&repo.diffidx(&["index"]));
    let line = stderr
        .lines()
        .find(|l| l.starts_with("search --semantic weights fitted on"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        line.contains("fitted on 25 commits") && line.contains("on 25 others"),
        "{line}"
    );
    let fusion: Value = serde_json::from_slice(
        &std::fs::read(repo.path().join(".git/diffidx/semantic/fusion.json")).unwrap(),
    )
    .unwrap();
    let weights: Vec<f64> = serde_json::from_value(fusion["weights"].clone()).unwrap();
    assert!(
        diffidx_lib::semantic::tune::GRID
            .iter()
            .any(|w| w[..] == weights[..]),
        "{weights:?}"
    );
    assert!(fusion["model"]
        .as_str()
        .unwrap()
        .starts_with("all-MiniLM-L6-v2@"));
    // The subjects name their methods' words: every ranking finds most.
    assert!(
        fusion["fitted"]["at10"].as_f64().unwrap() >= 50.0,
        "{fusion}"
    );
    // Fitted once per model: the next run leaves it.
    repo.write("src/extra.rs", "pub fn noop() {}\n");
    repo.commit("extra");
    let stderr = succeeded(&repo.diffidx(&["index"]));
    assert!(!stderr.contains("weights fitted"), "{stderr}");
}

#[test]
fn change_summaries_get_half_the_budget_and_the_tree_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let server = Loopback::with_answers(dir.path(), &serde_json::json!([]));
    let mut repo = shop_with_chat(&server);
    repo.git(&["config", "diffidx.llm.budget", "2"]);
    repo.write(
        "src/Catalog/ProductSearch.cs",
        CATALOG
            .replace("ToList()", "Take(10).ToList()")
            .replace("width * image.Height", "width * image.Height * 2"),
    );
    repo.commit("two edits");
    let stderr = succeeded(&repo.diffidx(&["index"]));
    let line = |start: &str| {
        stderr
            .lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no {start:?} in {stderr}"))
            .to_owned()
    };
    // Two symbols to summarize, one question for them: the commit waits.
    let deltas = line("change summaries");
    assert!(
        deltas.contains("1 asked") && deltas.contains("1 commits left"),
        "{deltas}"
    );
    // The tree gets what is left: one question, for the changed file.
    let tree = line("file and directory summaries");
    assert!(
        tree.contains("1 files") && tree.contains("1 asked"),
        "{tree}"
    );
}
