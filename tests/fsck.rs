//! `git diffidx fsck` and what the other commands do with damaged state:
//! notes edited by hand, a store emptied, overwritten or of another schema.
//! Each case: a clear message, nothing lost, and the repair fsck names works.

mod common;

use std::process::Output;

use common::TestRepo;

fn indexed_repo() -> TestRepo {
    let mut repo = TestRepo::new();
    // No query server: these tests change the store's file under it.
    repo.git(&["config", "diffidx.server", "false"]);
    for i in 0..12 {
        repo.write(
            &format!("src/F{}.cs", i % 3),
            format!(
                "class F{}\n{{\n    int M() {{ return {i}; }}\n    void N{i}() {{ }}\n}}\n",
                i % 3
            ),
        );
        repo.commit(&format!("c{i}"));
    }
    common::succeeded(&repo.diffidx(&["index", "--days", "100000"]));
    repo
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn fsck(repo: &TestRepo) -> (Option<i32>, serde_json::Value) {
    let out = repo.diffidx(&["fsck", "--json"]);
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            stderr(&out)
        )
    });
    (out.status.code(), report)
}

fn store_path(repo: &TestRepo) -> std::path::PathBuf {
    repo.path().join(".git/diffidx/graph.lbdb")
}

#[test]
fn a_clean_index_passes_and_a_hand_edited_note_is_found_and_repaired() {
    let repo = indexed_repo();
    let (code, report) = fsck(&repo);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["notes"], 12);
    assert_eq!(report["store"]["state"], "checked");
    assert_eq!(report["store"]["commits"], 12);
    assert_eq!(report["store"]["seal"], "matches");
    let history = repo.ok(&["log", "--symbol", "F1.M", "--json"]);

    let target = repo.git(&["rev-parse", "HEAD~4"]).trim().to_owned();
    repo.put_note(&target, "{\"v\":1}");
    let out = repo.diffidx(&["fsck"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("invalid note {target}")), "{text}");
    assert!(
        stderr(&out).contains("`git diffidx rebuild`"),
        "{}",
        stderr(&out)
    );
    let (_, report) = fsck(&repo);
    assert_eq!(report["invalid_note_count"], 1);
    assert_eq!(report["store"]["unnoted_commit_count"], 1);

    common::succeeded(&repo.diffidx(&["rebuild"]));
    let (code, report) = fsck(&repo);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(repo.ok(&["log", "--symbol", "F1.M", "--json"]), history);
}

#[test]
fn an_emptied_store_says_what_to_run_and_the_next_index_refills_it() {
    let repo = indexed_repo();
    let history = repo.ok(&["log", "--symbol", "F2.M", "--json"]);
    std::fs::write(store_path(&repo), b"").unwrap();
    let out = repo.diffidx(&["log", "--symbol", "F2.M"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("holds no diffidx tables"), "{err}");
    assert!(err.contains("run `git diffidx rebuild`"), "{err}");
    assert!(!err.contains("Binder exception: Table Commit"), "{err}");
    let (code, report) = fsck(&repo);
    assert_eq!(code, Some(1));
    assert_eq!(report["store"]["state"], "unreadable");
    common::succeeded(&repo.diffidx(&["index"]));
    assert_eq!(repo.ok(&["log", "--symbol", "F2.M", "--json"]), history);
    assert_eq!(fsck(&repo).0, Some(0));
}

#[test]
fn overwritten_store_bytes_are_detected_even_where_the_engine_reads_fine() {
    let repo = indexed_repo();
    let history = repo.ok(&["log", "--symbol", "F0.M", "--json"]);
    let good = std::fs::read(store_path(&repo)).unwrap();
    let seal = std::fs::read(store_path(&repo).with_extension("lbdb.seal")).unwrap();
    // Damage spread over the file: the start, the middle, the last page.
    for offset in [0, good.len() / 2, good.len().saturating_sub(4096)] {
        let mut damaged = good.clone();
        for (i, byte) in damaged[offset..].iter_mut().take(65_536).enumerate() {
            *byte = (i as u8).wrapping_mul(31) ^ 0x5a;
        }
        std::fs::write(store_path(&repo), &damaged).unwrap();
        let (code, report) = fsck(&repo);
        assert_eq!(code, Some(1), "offset {offset}: {report}");
        let state = report["store"]["state"].as_str().unwrap();
        assert!(
            state == "unreadable" || report["store"]["seal"] == "differs",
            "offset {offset}: {report}"
        );
        std::fs::write(store_path(&repo), &good).unwrap();
        std::fs::write(store_path(&repo).with_extension("lbdb.seal"), &seal).unwrap();
    }
    // The writer sets a changed store aside and refills it from the notes.
    let mut damaged = good.clone();
    let middle = damaged.len() / 2;
    damaged[middle..middle + 65_536].fill(0xa5);
    std::fs::write(store_path(&repo), &damaged).unwrap();
    let out = repo.diffidx(&["index"]);
    common::succeeded(&out);
    assert!(stderr(&out).contains("12 loaded"), "{}", stderr(&out));
    assert_eq!(repo.ok(&["log", "--symbol", "F0.M", "--json"]), history);
    assert_eq!(fsck(&repo).0, Some(0));
}

#[test]
fn a_store_of_another_schema_version_is_named_and_replaced() {
    let repo = indexed_repo();
    let history = repo.ok(&["log", "--symbol", "F1.M", "--json"]);
    {
        let db = lbug::Database::new(store_path(&repo), lbug::SystemConfig::default()).unwrap();
        let conn = lbug::Connection::new(&db).unwrap();
        conn.query("MATCH (m:Meta {key: 'schema'}) SET m.value = '99'")
            .unwrap();
    }
    let out = repo.diffidx(&["log", "--symbol", "F1.M"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("schema version 99"),
        "{}",
        stderr(&out)
    );
    common::succeeded(&repo.diffidx(&["index"]));
    assert_eq!(repo.ok(&["log", "--symbol", "F1.M", "--json"]), history);
}
