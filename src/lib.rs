//! diffidx: the persistent, git-native index on top of `diffidx-core`.
//!
//! `index` turns commits into notes (`refs/notes/diffidx`, the source of
//! truth) and loads them into `store` (an embedded Kuzu graph under
//! `.git/diffidx/`, a cache that can always be rebuilt from the notes).
//! `sync` pushes the notes to a shared Neo4j when credentials are given.
//! `serve` keeps the store open in a long-lived reader for fast `log` answers.
//! Nothing here prints to a terminal; the CLI in `src/cli/` does.

pub mod hooks;
pub mod index;
pub mod serve;
pub mod store;
pub mod sync;
