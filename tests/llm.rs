//! The chat model's uses end to end, against the loopback Ollama server
//! (`llm_server.py`, held to the official clients): change summaries kept
//! beside the record, asked once, within a budget, and an outage that loses
//! no record.

mod common;

use common::loopback::Loopback;
use common::{succeeded, TestRepo};
use serde_json::{json, Value};

fn billing(wait: &str, title: &str) -> String {
    format!(
        r#"namespace Shop.Billing
{{
    public class Payments
    {{
        void ScheduleAnotherAttempt(Order order)
        {{
            queue.Enqueue(order, {wait});
        }}

        public string Title(Order order)
        {{
            return {title};
        }}
    }}
}}
"#
    )
}

/// A repository with one commit, indexed, and the chat model configured.
fn shop(server: &Loopback) -> TestRepo {
    let mut repo = TestRepo::new();
    repo.write(
        "Payments.cs",
        billing("TimeSpan.FromMinutes(1)", "order.Name"),
    );
    repo.commit("payments");
    succeeded(&repo.diffidx(&["index"]));
    repo.git(&["config", "diffidx.llm.model", "tiny"]);
    repo.git(&["config", "diffidx.llm.host", &server.url()]);
    repo.git(&["config", "diffidx.llm.retries", "0"]);
    repo
}

fn rules() -> Value {
    json!([
        {"contains": "Payments.ScheduleAnotherAttempt",
         "answer": "```\nSummary: \"Waits twice as long before each new charge attempt.\"\n```"},
    ])
}

fn summaries_line(stderr: &str) -> &str {
    stderr
        .lines()
        .find(|l| l.starts_with("change summaries"))
        .unwrap_or_else(|| panic!("no change summaries line in: {stderr}"))
}

fn log(repo: &TestRepo, symbol: &str) -> Vec<Value> {
    let out = repo.ok(&["log", "--symbol", symbol, "--json"]);
    serde_json::from_str::<Value>(&out)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn change_summaries_are_kept_beside_the_record_and_asked_once() {
    let dir = tempfile::tempdir().unwrap();
    let server = Loopback::with_answers(dir.path(), &rules());
    let mut repo = shop(&server);
    repo.write(
        "Payments.cs",
        billing("TimeSpan.FromMinutes(2 * order.Attempts)", "order.Title"),
    );
    let head = repo.commit("back off");
    repo.git(&["config", "diffidx.llm.model", "off"]);
    succeeded(&repo.diffidx(&["index"]));
    let record = repo.git(&["notes", "--ref", "diffidx", "show", &head]);

    repo.git(&["config", "diffidx.llm.model", "tiny"]);
    let stderr = succeeded(&repo.diffidx(&["index"]));
    let line = summaries_line(&stderr);
    assert!(
        line.contains("1 commits (2 symbols) by ollama:tiny; 2 asked, 0 from the cache"),
        "{line}"
    );
    // The record is untouched; the summaries have a ref of their own.
    assert_eq!(
        repo.git(&["notes", "--ref", "diffidx", "show", &head]),
        record
    );
    let note: Value =
        serde_json::from_str(&repo.git(&["notes", "--ref", "diffidx-semantic", "show", &head]))
            .unwrap();
    assert_eq!(note["model"], "ollama:tiny");
    assert_eq!(note["commit"], head.as_str());
    assert_eq!(note["symbols"].as_array().unwrap().len(), 2);

    let entries = log(&repo, "ScheduleAnotherAttempt");
    assert_eq!(entries[0]["status"], "MODIFIED");
    assert_eq!(
        entries[0]["summary"],
        json!({"text": "Waits twice as long before each new charge attempt.", "model": "ollama:tiny"})
    );
    assert!(entries[1].get("summary").is_none(), "{:?}", entries[1]);
    // Without a rule the server echoes: the line is the first of the answer.
    let title = log(&repo, "Payments.Title");
    let text = title[0]["summary"]["text"].as_str().unwrap();
    assert!(
        text.starts_with("echo: Symbol: method Shop.Billing.Payments.Title"),
        "{text}"
    );
    // The class is modified too, but its member's summary says it.
    assert!(log(&repo, "Shop.Billing.Payments")[0]
        .get("summary")
        .is_none());
    let human = repo.ok(&["log", "--symbol", "ScheduleAnotherAttempt"]);
    assert!(
        human.contains("    Waits twice as long before each new charge attempt. (ollama:tiny)"),
        "{human}"
    );

    // Nothing new: nothing asked. Summaries lost: remade from the cache.
    let asked = server.asked().len();
    let stderr = succeeded(&repo.diffidx(&["index"]));
    assert!(summaries_line(&stderr).contains("0 commits"), "{stderr}");
    repo.git(&["update-ref", "-d", "refs/notes/diffidx-semantic"]);
    let stderr = succeeded(&repo.diffidx(&["index"]));
    assert!(
        summaries_line(&stderr)
            .contains("1 commits (2 symbols) by ollama:tiny; 0 asked, 2 from the cache"),
        "{stderr}"
    );
    assert_eq!(server.asked().len(), asked);
}

#[test]
fn a_budget_spreads_summaries_over_runs_and_an_outage_loses_no_record() {
    let dir = tempfile::tempdir().unwrap();
    let server = Loopback::with_answers(dir.path(), &rules());
    let mut repo = shop(&server);
    repo.git(&["config", "diffidx.llm.budget", "1"]);
    repo.write(
        "Payments.cs",
        billing("TimeSpan.FromMinutes(5)", "order.Title"),
    );
    let head = repo.commit("both");
    let stderr = succeeded(&repo.diffidx(&["index"]));
    let line = summaries_line(&stderr);
    assert!(
        line.contains("0 commits (0 symbols)")
            && line.contains("1 asked")
            && line.contains("1 commits left for the next run (diffidx.llm.budget)"),
        "{line}"
    );
    // No half note: the commit waits until all its symbols are answered.
    assert!(!repo
        .command("git")
        .args(["notes", "--ref", "diffidx-semantic", "show", &head])
        .output()
        .unwrap()
        .status
        .success());
    let stderr = succeeded(&repo.diffidx(&["index"]));
    assert!(
        summaries_line(&stderr)
            .contains("1 commits (2 symbols) by ollama:tiny; 1 asked, 1 from the cache"),
        "{stderr}"
    );

    // The service goes away: a warning; the record is written all the same.
    drop(server);
    repo.write(
        "Payments.cs",
        billing("TimeSpan.FromMinutes(9)", "order.Title"),
    );
    repo.commit("longer");
    let stderr = succeeded(&repo.diffidx(&["index"]));
    assert!(
        stderr.contains("warning: change summaries stopped: the chat model: cannot reach"),
        "{stderr}"
    );
    let entries = log(&repo, "ScheduleAnotherAttempt");
    assert_eq!(entries.len(), 3);
    assert!(entries[0].get("summary").is_none());
    assert!(entries[1].get("summary").is_some());
}

#[test]
fn a_malformed_summary_note_from_a_remote_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let server = Loopback::with_answers(dir.path(), &rules());
    let mut repo = shop(&server);
    repo.git(&["config", "diffidx.llm.model", "off"]);
    repo.write(
        "Payments.cs",
        billing("TimeSpan.FromMinutes(3)", "order.Name"),
    );
    let head = repo.commit("three");
    succeeded(&repo.diffidx(&["index"]));
    for bad in [
        "not json".to_owned(),
        json!({"v": 1, "commit": "0".repeat(40), "model": "m", "symbols": []}).to_string(),
    ] {
        repo.git(&[
            "notes",
            "--ref",
            "diffidx-semantic",
            "add",
            "-f",
            "-m",
            &bad,
            &head,
        ]);
        let entries = log(&repo, "ScheduleAnotherAttempt");
        assert_eq!(entries.len(), 2);
        assert!(entries[0].get("summary").is_none());
    }
}
