//! diffidx-core: from git commits to symbol-level change records.
//!
//! One commit's data flows one way: [`git`] (changed files, blobs, hunks) →
//! [`lang`] (symbols per side) → [`delta`] (statuses, moves) → [`note`] (the
//! record). Nothing here prints to a terminal or knows about the store; the
//! `diffidx` crate builds the CLI, the embedded store and the sync on top.

pub mod codegraph;
pub mod delta;
pub mod differ;
pub mod error;
pub mod git;
pub mod lang;
pub mod note;
pub mod qualname;
pub mod source;
pub mod symbol;

pub use delta::{Status, SymbolDelta};
pub use differ::{CommitRecord, DiffOptions, FileSnapshot, SymbolDiffer, TreeDiff};
pub use error::{Error, Result};
pub use gix::ObjectId;
pub use lang::{Extractor, Language};
pub use note::NoteDocument;
pub use qualname::SymbolQuery;
pub use symbol::{symbol_id, ContentHash, FileSymbols, Symbol, SymbolKind};
