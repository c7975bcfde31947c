//! The chat model's steps in `search --semantic`: HyDE before the ranking,
//! a rerank after it.
//!
//! Both are optional and both may fail (a service down, an answer that
//! names nothing): the search then answers as without the step, and says
//! so in the answer's `model_steps.warnings`. A question is answered from
//! the answer cache when it was asked before, so repeating a search costs
//! no model time.

use diffidx_core::git::Repo;
use diffidx_core::ObjectId;
use diffidx_semantic::prompts::{
    hyde_request, hyde_text, parse_ranking, rerank_request, RerankCandidate,
};

use super::chat::Asker;
use super::SemanticError;
use crate::search::{SearchAnswer, SearchHit};

/// The code the chat model writes for `query` (HyDE), in `languages`.
pub fn hyde(
    asker: &mut Asker<'_>,
    query: &str,
    languages: &[String],
) -> Result<String, SemanticError> {
    let languages: Vec<&str> = languages.iter().take(2).map(String::as_str).collect();
    let answer = asker.ask("hyde", &hyde_request(query, &languages))?;
    hyde_text(&answer.text).ok_or_else(|| SemanticError::Answer {
        what: "HyDE",
        answer: answer.text,
    })
}

/// Reorders the first `n` hits of `answer` as the chat model ranks them
/// for `query`, their code read at `commit` within `budget` characters.
/// The hits the model names come first, in its order; those it leaves out
/// follow in their own order. Scores stay the sorted scores of those
/// places, so they still fall down the list. Returns how many hits were
/// shown.
pub fn rerank(
    repo: &Repo,
    asker: &mut Asker<'_>,
    query: &str,
    answer: &mut SearchAnswer,
    n: usize,
    commit: Option<ObjectId>,
    budget: usize,
) -> Result<usize, SemanticError> {
    let n = n.min(answer.hits.len());
    if n < 2 {
        return Ok(n);
    }
    let candidates: Vec<RerankCandidate> = answer.hits[..n]
        .iter()
        .map(|h| RerankCandidate {
            heading: format!(
                "{} {} — {}",
                h.kind,
                diffidx_core::symbol::display_name(&h.qualname, &h.sig),
                h.path
            ),
            code: code_of(repo, commit, h).unwrap_or_default(),
        })
        .collect();
    let reply = asker.ask("rerank", &rerank_request(query, &candidates, budget))?;
    let order = parse_ranking(&reply.text, n);
    if order.is_empty() {
        return Err(SemanticError::Answer {
            what: "the rerank",
            answer: reply.text,
        });
    }
    let scores: Vec<f64> = answer.hits[..n].iter().map(|h| h.score).collect();
    let mut top: Vec<Option<SearchHit>> = answer.hits.drain(..n).map(Some).collect();
    let mut placed: Vec<SearchHit> = Vec::with_capacity(n);
    for i in order.iter().copied().chain(0..n) {
        if let Some(mut hit) = top[i].take() {
            hit.reranked_by = Some(reply.model.clone());
            placed.push(hit);
        }
    }
    for (hit, score) in placed.iter_mut().zip(scores) {
        hit.score = score;
    }
    answer.hits.splice(0..0, placed);
    Ok(n)
}

/// The lines of a live hit at `commit` (a deleted one has none).
fn code_of(repo: &Repo, commit: Option<ObjectId>, hit: &SearchHit) -> Option<String> {
    crate::search::snippet::lines_of(repo, commit, hit, usize::MAX).map(|l| l.join("\n"))
}
