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

/// Kills (or stops) this process if `DIFFIDX_FAULT` names `point`.
pub fn point(point: &str) {
    static CHOSEN: OnceLock<Option<String>> = OnceLock::new();
    let chosen = CHOSEN.get_or_init(|| std::env::var("DIFFIDX_FAULT").ok());
    let Some(chosen) = chosen.as_deref() else {
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
