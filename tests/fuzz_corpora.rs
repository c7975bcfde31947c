//! Replays every saved fuzz input (`fuzz/corpus/TARGET/*`) and every crash
//! input kept as a regression (`fuzz/regressions/TARGET/*`) through the same
//! checks the fuzz targets run, on the stable toolchain.

#[path = "../fuzz/checks.rs"]
mod checks;

use std::path::Path;

fn replay(target: &str, check: fn(&[u8])) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut count = 0;
    for dir in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let data = std::fs::read(&path).unwrap();
            let outcome = std::panic::catch_unwind(|| check(&data));
            assert!(outcome.is_ok(), "{target}: {} fails", path.display());
            count += 1;
        }
    }
    assert!(count >= 4, "{target}: only {count} saved inputs");
}

#[test]
fn extraction_corpus() {
    replay("extraction", checks::extraction);
}

#[test]
fn unified_diff_corpus() {
    replay("unified_diff", checks::unified_diff);
}

#[test]
fn note_reader_corpus() {
    replay("note_reader", checks::note_reader);
}

#[test]
fn pr_comment_corpus() {
    replay("pr_comment", checks::pr_comment);
}
