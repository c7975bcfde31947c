//! A file's tokens: the leaves of its syntax tree in byte order, which
//! every symbol's normalized text, hash and sketch are read from.
//!
//! Walking every node of a tree for them was the largest single cost of a
//! backfill (17% of App-vNext/Polly's CPU: tree-sitter's cursor descends
//! through the hidden nodes of every repetition). A version reparsed
//! incrementally shares most of its tree with the version before, so its
//! walk copies the earlier version's tokens for each subtree that neither
//! an edit nor the reparse touched, and descends only where they did.

use std::collections::HashSet;
use std::ops::Range;

use tree_sitter::{InputEdit, Tree};

use super::KindTable;

/// What a walk of one parsed text found (before the hidden tokens of
/// blanked lines are merged in), kept with its tree for the next version.
#[derive(Debug, Default, Clone)]
pub struct LeafTokens {
    tokens: Vec<(u32, u32)>,
    comments: Vec<(u32, u32)>,
}

impl LeafTokens {
    /// The room it takes.
    pub fn weight(&self) -> usize {
        (self.tokens.capacity() + self.comments.capacity()) * std::mem::size_of::<(u32, u32)>()
    }

    /// `None` past 4 GiB of text (an offset a `u32` cannot hold).
    fn of(ranges: &[Range<usize>]) -> Option<Vec<(u32, u32)>> {
        ranges
            .iter()
            .map(|r| Some((u32::try_from(r.start).ok()?, u32::try_from(r.end).ok()?)))
            .collect()
    }
}

/// The earlier version a tree was reparsed from: its walk, the edits from
/// its text to this one and its tree with them applied.
pub struct Earlier<'a> {
    pub walked: &'a LeafTokens,
    pub edits: &'a [InputEdit],
    pub edited: &'a Tree,
}

/// The tokens (comments excluded) and the comments of a text.
pub struct Walked {
    pub tokens: Vec<Range<usize>>,
    pub comments: Vec<Range<usize>>,
}

impl Walked {
    /// What the next version's walk may copy from (nothing for a text
    /// past 4 GiB: its successor is walked whole).
    pub fn keep(&self) -> Option<LeafTokens> {
        Some(LeafTokens {
            tokens: LeafTokens::of(&self.tokens)?,
            comments: LeafTokens::of(&self.comments)?,
        })
    }
}

/// Every token of `text` in byte order: the tree's leaves (comments and
/// docstrings apart), and any non-whitespace text between leaves that the
/// grammar left uncovered. With `earlier`, subtrees it shares untouched
/// are copied from its walk; the result is the same either way.
pub(super) fn walk(
    table: &KindTable,
    tree: &Tree,
    text: &str,
    earlier: Option<&Earlier<'_>>,
) -> Walked {
    // Whether a string is a docstring depends on its place in its parent's
    // body, which a reparse can change without touching the string.
    let reuse = earlier
        .filter(|_| !table.has_docstrings())
        .map(|earlier| Reuse::new(earlier, tree));
    let bytes = text.as_bytes();
    let mut out = Walked {
        tokens: Vec::new(),
        comments: Vec::new(),
    };
    let mut pos = 0;
    let mut cursor = tree.walk();
    // Docstrings found so far (an owner comes before its docstring).
    let mut docstrings: HashSet<usize> = HashSet::new();
    'walk: loop {
        let node = cursor.node();
        let range = node.byte_range();
        let copied = reuse
            .as_ref()
            .filter(|_| range.start >= pos)
            .and_then(|reuse| reuse.untouched(&range));
        if let Some(copied) = copied {
            push_gap(bytes, pos, range.start, &mut out.tokens);
            copied.append_to(&mut out);
            pos = range.end;
        } else {
            if let Some(doc) = table.docstring(node) {
                docstrings.insert(doc.id());
            }
            let is_comment = table.is_comment(node.kind_id()) || docstrings.contains(&node.id());
            if !is_comment && cursor.goto_first_child() {
                continue;
            }
            if range.start >= pos {
                push_gap(bytes, pos, range.start, &mut out.tokens);
                if is_comment {
                    out.comments.push(range.clone());
                } else if range.end > range.start {
                    out.tokens.push(range.clone());
                }
                pos = range.end;
            }
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    push_gap(bytes, pos, bytes.len(), &mut out.tokens);
    out
}

/// The non-whitespace runs of `bytes[from..to]`, text no leaf covers.
fn push_gap(bytes: &[u8], from: usize, to: usize, tokens: &mut Vec<Range<usize>>) {
    let mut i = from;
    while i < to {
        while i < to && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let start = i;
        while i < to && !bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if i > start {
            tokens.push(start..i);
        }
    }
}

/// Where the new text's bytes were touched, and where the rest were in
/// the earlier text.
struct Reuse<'a> {
    walked: &'a LeafTokens,
    /// Bytes of the new text an edit replaced or the reparse changed:
    /// sorted, disjoint, each taken to include both its ends.
    touched: Vec<Range<usize>>,
    /// From a new offset on (sorted), the earlier offset minus the new one.
    shifts: Vec<(usize, isize)>,
}

/// Tokens of the earlier walk, by position, and how far they moved: the
/// earlier offset minus the new one.
struct Copied<'a> {
    walked: &'a LeafTokens,
    tokens: Range<usize>,
    comments: Range<usize>,
    shift: isize,
}

impl Copied<'_> {
    fn append_to(&self, out: &mut Walked) {
        let moved = |&(start, end): &(u32, u32)| {
            (start as isize - self.shift) as usize..(end as isize - self.shift) as usize
        };
        out.tokens
            .extend(self.walked.tokens[self.tokens.clone()].iter().map(moved));
        out.comments.extend(
            self.walked.comments[self.comments.clone()]
                .iter()
                .map(moved),
        );
    }
}

impl<'a> Reuse<'a> {
    fn new(earlier: &Earlier<'a>, tree: &Tree) -> Reuse<'a> {
        let mut edits: Vec<&InputEdit> = earlier.edits.iter().collect();
        edits.sort_by_key(|e| e.start_byte);
        let mut touched = Vec::with_capacity(edits.len());
        let mut shifts = vec![(0, 0)];
        // New offset minus earlier offset, past the edits so far.
        let mut delta = 0isize;
        for edit in edits {
            let start = (edit.start_byte as isize + delta) as usize;
            let end = start + (edit.new_end_byte - edit.start_byte);
            touched.push(start..end);
            delta += edit.new_end_byte as isize - edit.old_end_byte as isize;
            shifts.push((end, -delta));
        }
        touched.extend(
            earlier
                .edited
                .changed_ranges(tree)
                .map(|r| r.start_byte..r.end_byte),
        );
        touched.sort_by_key(|r| r.start);
        let mut merged: Vec<Range<usize>> = Vec::with_capacity(touched.len());
        for range in touched {
            match merged.last_mut() {
                Some(last) if range.start <= last.end => last.end = last.end.max(range.end),
                _ => merged.push(range),
            }
        }
        Reuse {
            walked: earlier.walked,
            touched: merged,
            shifts,
        }
    }

    /// The earlier walk's tokens of the subtree at `range`, when nothing
    /// touched it (nor came to its ends) and they lie wholly inside it.
    fn untouched(&self, range: &Range<usize>) -> Option<Copied<'a>> {
        let next = self.touched.partition_point(|t| t.end < range.start);
        if self.touched.get(next).is_some_and(|t| t.start <= range.end) {
            return None;
        }
        let at = self.shifts.partition_point(|s| s.0 <= range.start) - 1;
        let shift = self.shifts[at].1;
        let start = (range.start as isize + shift) as usize;
        let end = start + range.len();
        Some(Copied {
            walked: self.walked,
            tokens: within(&self.walked.tokens, start, end)?,
            comments: within(&self.walked.comments, start, end)?,
            shift,
        })
    }
}

/// The positions in `list` (sorted) of the ranges that start within
/// `start..end`, unless a range crosses either end.
fn within(list: &[(u32, u32)], start: usize, end: usize) -> Option<Range<usize>> {
    let first = list.partition_point(|t| (t.0 as usize) < start);
    let last = list.partition_point(|t| (t.0 as usize) < end);
    let crosses_start = first > 0 && list[first - 1].1 as usize > start;
    let crosses_end = last > first && list[last - 1].1 as usize > end;
    (!crosses_start && !crosses_end).then_some(first..last)
}
