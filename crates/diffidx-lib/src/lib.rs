//! diffidx-lib: the persistent layer on top of `diffidx-core`. It knows
//! nothing of the terminal; the `git-diffidx` CLI prints what it returns.
//!
//! One commit's data flows one way (docs/architecture.md): the core turns
//! it into a record; [`index`] writes the record as a note (the source of
//! truth) and loads it into [`store`] (LadybugDB, a cache); [`sync`] pushes it to
//! a shared Neo4j. Both backends write the rows of [`graph`], the one graph
//! model. The rooms, each importing only those below it:
//!
//! - [`hooks`]: install the hook scripts; the background run (index, push).
//! - [`index`], [`query`], [`server`], [`sync`], [`share`]: indexing and
//!   rebuilding; answering queries (through the server or directly); the
//!   long-lived query server; the Neo4j push; sharing notes between clones.
//! - [`open`]: opening the store as every command must (hand-over from the
//!   query server, recovery).
//! - [`client`], [`protocol`]: talking to the query server.
//! - [`search`], [`semantic`]: the text index and the opt-in vector index
//!   beside the store.
//! - [`store`]: LadybugDB; [`graph`]: typed rows; [`state`]: `.git/diffidx/`, the
//!   writer lock, logs; [`settings`]: git config shared by commands;
//!   [`memory`]: freed pages back to the system between a run's phases.

pub mod api;
pub mod client;
pub mod codegraph;
pub mod context;
pub mod fault;
pub mod fsck;
pub mod graph;
pub mod hooks;
pub mod index;
pub mod mcp;
pub mod memory;
pub mod open;
pub mod protocol;
pub mod query;
pub mod rpc;
pub mod search;
pub mod semantic;
pub mod server;
pub mod settings;
pub mod share;
pub mod state;
pub mod store;
pub mod sync;
pub mod values;
