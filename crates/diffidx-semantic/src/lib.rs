//! The opt-in semantic layer: code found by what it means, not only by the
//! words it uses ("where do we retry failed payments?" names no identifier).
//!
//! Everything here is deterministic where it can be, because a vector that
//! changes without its input changing makes rankings unreproducible:
//!
//! - [`chunk`] cuts each file version into chunks that follow the symbol
//!   hierarchy, with ids that depend only on path, name and content.
//! - [`embed`] runs a pinned sentence-embedding model in-process (candle's
//!   BERT). The pin (name, blake3 of the weights, parameters) goes with every
//!   vector; vectors of two pins are never compared.
//! - [`cache`] keeps every vector under the key of (pin, chunk text), so
//!   unchanged code is embedded once, across commits and rebuilds.
//! - [`fuse`] merges rankings (names, BM25, vectors) by reciprocal rank.
//! - [`llm`] talks to model services (Ollama, OpenAI-compatible) for chat
//!   and embeddings, behind one trait each.
//! - [`prompts`] holds what the chat uses ask (change summaries, HyDE,
//!   rerank, file and directory summaries) and how answers are read;
//!   [`answers`] keeps every answer under the key of its question, so a
//!   model is never asked the same thing twice.
//!
//! Nothing in this crate runs unless the semantic layer is configured.

pub mod answers;
pub mod cache;
pub mod chunk;
pub mod embed;
pub mod fuse;
pub mod llm;
pub mod prompts;

pub use answers::{Answer, AnswerCache};
pub use cache::{CacheError, VectorCache};
pub use chunk::{chunk_file, Chunk, ChunkBudget};
pub use embed::{EmbedError, Embedder, LocalModel, ModelPin};
pub use fuse::reciprocal_rank_fusion;

/// The cosine similarity of two L2-normalized vectors (their dot product).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
