//! Reciprocal rank fusion: rankings of different scales merged by rank.
//!
//! BM25 scores, name-rule classes and cosine similarities cannot be added;
//! their ranks can. Each list adds 1 / (k + rank) to an item (rank from 1),
//! so an item near the top of several lists beats one at the top of one.

use std::collections::HashMap;
use std::hash::Hash;

/// The k of the fusion (the usual 60): how flat the rank curve is.
pub const RRF_K: f64 = 60.0;

/// Fuses `rankings` (best first, each with a weight), best first; ties by
/// first appearance, so the result is deterministic.
pub fn reciprocal_rank_fusion<T: Clone + Eq + Hash>(rankings: &[(&[T], f64)]) -> Vec<(T, f64)> {
    let mut scores: HashMap<T, (f64, usize)> = HashMap::new();
    let mut seen = 0usize;
    for (ranking, weight) in rankings {
        for (rank, item) in ranking.iter().enumerate() {
            let entry = scores.entry(item.clone()).or_insert_with(|| {
                seen += 1;
                (0.0, seen)
            });
            entry.0 += weight / (RRF_K + rank as f64 + 1.0);
        }
    }
    let mut fused: Vec<(T, f64, usize)> = scores.into_iter().map(|(t, (s, o))| (t, s, o)).collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)));
    fused.into_iter().map(|(t, s, _)| (t, s)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_item_high_in_two_lists_beats_the_top_of_one() {
        let bm25 = ["a", "b", "c"];
        let vectors = ["d", "b", "a"];
        let fused = reciprocal_rank_fusion(&[(&bm25[..], 1.0), (&vectors[..], 1.0)]);
        let order: Vec<&str> = fused.iter().map(|f| f.0).collect();
        assert_eq!(order, ["a", "b", "d", "c"]);
        assert!((fused[0].1 - (1.0 / 61.0 + 1.0 / 63.0)).abs() < 1e-12);
    }

    #[test]
    fn a_weight_tips_a_tie() {
        let names = ["x"];
        let vectors = ["y"];
        let fused = reciprocal_rank_fusion(&[(&names[..], 1.0), (&vectors[..], 2.0)]);
        assert_eq!(fused[0].0, "y");
    }
}
