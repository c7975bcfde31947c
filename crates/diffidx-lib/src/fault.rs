//! Fault injection for the fault tests: `DIFFIDX_FAULT=<point>` makes the
//! process kill itself with SIGKILL when it reaches that point, which is
//! what `kill -9` at that moment does, but exactly there and every time;
//! `DIFFIDX_FAULT=<point>:stop` stops it there instead (SIGSTOP), so that a
//! test can break something around it (a server) and let it go on (SIGCONT).
//! Unset (always, outside the tests), a point costs one cached lookup.

use std::sync::OnceLock;

/// The points, in the order a batch passes them.
pub const POINTS: [&str; 4] = [
    // The batch's notes are computed and staged, not yet committed.
    "notes-staged",
    // The notes commit is written; the store has not seen the batch.
    "notes-committed",
    // Inside the store's transaction, rows written, not committed.
    "store-uncommitted",
    // The store transaction is committed; the next batch has not begun.
    "store-committed",
];

/// A push's point: one transaction is in Neo4j and in the watermark.
pub const PUSH_BATCH_DONE: &str = "push-batch-done";

/// An engine fault, not a kill: the store commits the commits of a batch
/// and the process dies before the rest of the batch. Kuzu 0.11 was seen to
/// leave exactly that after a SIGKILL during a large load (commits without
/// their changes, about one run in twenty); this makes it happen every
/// time, for the test of the repair.
///
/// The notes are committed beside the store's load; this fault waits for
/// them, so the repair finds every commit's note.
pub const STORE_HALF_COMMITTED: &str = "store-half-committed";

/// The same engine fault striking before the notes are committed: the notes
/// commit stalls until the kill, so the store holds commits without notes.
pub const STORE_HALF_COMMITTED_BEFORE_NOTES: &str = "store-half-committed-before-notes";

fn chosen() -> Option<&'static str> {
    static CHOSEN: OnceLock<Option<String>> = OnceLock::new();
    CHOSEN
        .get_or_init(|| std::env::var("DIFFIDX_FAULT").ok())
        .as_deref()
}

/// Whether `DIFFIDX_FAULT` names `point` (for faults that are more than a
/// kill).
pub fn armed(point: &str) -> bool {
    chosen() == Some(point)
}

/// Holds this thread for a minute if `DIFFIDX_FAULT` names `point`, so that
/// a fault on another thread strikes first.
pub fn stall(point: &str) {
    if armed(point) {
        std::thread::sleep(std::time::Duration::from_secs(60));
    }
}

/// Kills (or stops) this process if `DIFFIDX_FAULT` names `point`.
pub fn point(point: &str) {
    let Some(chosen) = chosen() else {
        return;
    };
    let signal = if chosen == point {
        rustix::process::Signal::KILL
    } else if chosen.strip_suffix(":stop") == Some(point) {
        rustix::process::Signal::STOP
    } else {
        return;
    };
    let _ = rustix::process::kill_process(rustix::process::getpid(), signal);
}
