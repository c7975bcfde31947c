//! Changed line ranges: the only thing the status rules need from a diff.

use gix::diff::blob::{diff_with_slider_heuristics, Algorithm, InternedInput};

/// One hunk as changed lines on each side: 1-based, half-open ranges; an
/// empty range means the hunk only inserts (old side) or only removes (new side).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineChange {
    pub old: std::ops::Range<u32>,
    pub new: std::ops::Range<u32>,
}

impl LineChange {
    /// True when a hunk touches the inclusive line span on the old side.
    pub fn touches_old(&self, start: u32, end: u32) -> bool {
        overlaps(&self.old, start, end)
    }

    /// True when a hunk touches the inclusive line span on the new side.
    pub fn touches_new(&self, start: u32, end: u32) -> bool {
        overlaps(&self.new, start, end)
    }

    /// True when a hunk that only removes lines removes them from inside
    /// the inclusive span on the new side: the lines before and after the
    /// cut are both in it (a method deleted from between an annotation and
    /// the method it now heads). An insertion inside an old span alike.
    pub fn cuts(&self, old: (u32, u32), new: (u32, u32)) -> bool {
        let inside = |range: &std::ops::Range<u32>, (start, end): (u32, u32)| {
            range.is_empty() && start < range.start && range.start <= end
        };
        inside(&self.new, new) || inside(&self.old, old)
    }
}

fn overlaps(range: &std::ops::Range<u32>, start: u32, end: u32) -> bool {
    !range.is_empty() && range.start <= end && range.end > start
}

/// Line hunks between two normalized texts (Myers with git's slider heuristics).
pub fn diff_lines(old: &str, new: &str) -> Vec<LineChange> {
    let input = InternedInput::new(old, new);
    let diff = diff_with_slider_heuristics(Algorithm::Myers, &input);
    diff.hunks()
        .map(|h| LineChange {
            old: h.before.start + 1..h.before.end + 1,
            new: h.after.start + 1..h.after.end + 1,
        })
        .collect()
}

/// A unified diff of two texts with 3 lines of context (empty when equal).
pub fn unified_diff(old: &str, new: &str) -> String {
    use gix::diff::blob::unified_diff::{ConsumeBinaryHunk, ContextSize};
    use gix::diff::blob::UnifiedDiff;
    let input = InternedInput::new(old, new);
    let diff = diff_with_slider_heuristics(Algorithm::Myers, &input);
    UnifiedDiff::new(
        &diff,
        &input,
        ConsumeBinaryHunk::new(String::new(), "\n"),
        ContextSize::symmetrical(3),
    )
    .consume()
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_changed_lines_per_side() {
        let old = "a\nb\nc\nd\n";
        let new = "a\nB\nc\nd\ne\n";
        assert_eq!(
            diff_lines(old, new),
            [
                LineChange {
                    old: 2..3,
                    new: 2..3
                },
                LineChange {
                    old: 5..5,
                    new: 5..6
                },
            ]
        );
    }

    #[test]
    fn overlap_is_inclusive_and_ignores_empty_sides() {
        let change = LineChange {
            old: 4..4,
            new: 4..6,
        };
        assert!(!change.touches_old(1, 10));
        assert!(change.touches_new(5, 9));
        assert!(change.touches_new(1, 4));
        assert!(!change.touches_new(6, 9));
    }
}
