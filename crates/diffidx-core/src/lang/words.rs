//! The words of each symbol, for text search: the identifiers and string
//! words of its own code (not of the symbols nested in it, which have their
//! own), and of its doc comment and the comments in it.
//!
//! Comments do not count for change detection, but they are often the best
//! description of what code does, so search reads them. The words are kept
//! as written (`getUserById`); splitting them into parts is the search
//! index's business.

use std::collections::HashSet;
use std::ops::Range;

/// At most this many distinct words per symbol: a generated table of a
/// thousand constants says no more with all of them.
pub const MAX_WORDS: usize = 256;

/// Markup of C# XML doc comments and the like: in every doc comment, so it
/// tells symbols apart no better than whitespace does.
const DOC_MARKUP: &[&str] = &[
    "summary",
    "param",
    "paramref",
    "typeparam",
    "typeparamref",
    "returns",
    "remarks",
    "see",
    "seealso",
    "cref",
    "name",
    "para",
    "inheritdoc",
    "exception",
    "value",
    "example",
    "code",
    "langword",
    "href",
];

/// One declaration's byte range, in walk order (enclosing ones first).
pub struct Span {
    pub bytes: Range<usize>,
}

/// The words of each span, joined by spaces; `tokens` and `comments` are
/// byte ranges of `text`, each sorted by start.
pub fn of_symbols(
    spans: &[Span],
    tokens: &[Range<usize>],
    comments: &[Range<usize>],
    text: &str,
) -> Vec<String> {
    // A comment right before a declaration is its doc comment, not a
    // comment in the body of the declaration around it.
    let docs: Vec<Range<usize>> = spans
        .iter()
        .map(|s| doc_comments(s.bytes.start, comments, text))
        .collect();
    let is_doc: HashSet<usize> = docs.iter().flat_map(|d| d.clone()).collect();
    spans
        .iter()
        .enumerate()
        .map(|(i, span)| {
            // Declarations nested in this one follow it in walk order.
            let nested: Vec<&Range<usize>> = spans[i + 1..]
                .iter()
                .take_while(|s| s.bytes.start < span.bytes.end)
                .filter(|s| s.bytes.end <= span.bytes.end)
                .map(|s| &s.bytes)
                .collect();
            let own = |r: &Range<usize>| !nested.iter().any(|n| n.contains(&r.start));
            let mut words = Words::default();
            for comment in &comments[docs[i].clone()] {
                words.add(&text[comment.clone()], true);
            }
            let first = comments.partition_point(|r| r.start < span.bytes.start);
            for (_, comment) in comments
                .iter()
                .enumerate()
                .skip(first)
                .take_while(|(_, r)| r.start < span.bytes.end)
                .filter(|(c, r)| !is_doc.contains(c) && own(r))
            {
                words.add(&text[comment.clone()], true);
            }
            for token in within(tokens, &span.bytes).filter(|r| own(r)) {
                words.add(&text[token.clone()], false);
            }
            words.text
        })
        .collect()
}

/// The ranges of `sorted` that start inside `bytes`.
fn within<'a>(
    sorted: &'a [Range<usize>],
    bytes: &Range<usize>,
) -> impl Iterator<Item = &'a Range<usize>> {
    let first = sorted.partition_point(|r| r.start < bytes.start);
    let end = bytes.end;
    sorted[first..].iter().take_while(move |r| r.start < end)
}

/// The comments right before `start` (as indexes into `comments`): each
/// separated from the next (or from the declaration) by whitespace or
/// attribute lines only.
fn doc_comments(start: usize, comments: &[Range<usize>], text: &str) -> Range<usize> {
    let before = comments.partition_point(|r| r.end <= start);
    let mut next = start;
    let mut first = before;
    while first > 0 {
        let gap = &text[comments[first - 1].end..next];
        if !gap.lines().all(|l| {
            let l = l.trim();
            l.is_empty() || (l.starts_with("#[") && l.ends_with(']'))
        }) {
            break;
        }
        first -= 1;
        next = comments[first].start;
    }
    first..before
}

#[derive(Default)]
struct Words {
    seen: HashSet<String>,
    text: String,
}

impl Words {
    /// Adds the words of `piece`: runs of letters, digits and `_` that do
    /// not start with a digit, two characters or more.
    fn add(&mut self, piece: &str, comment: bool) {
        for word in piece.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if self.seen.len() >= MAX_WORDS {
                return;
            }
            let Some(first) = word.chars().next() else {
                continue;
            };
            if word.len() < 2 || first.is_numeric() {
                continue;
            }
            if comment && DOC_MARKUP.contains(&word) {
                continue;
            }
            if self.seen.insert(word.to_owned()) {
                if !self.text.is_empty() {
                    self.text.push(' ');
                }
                self.text.push_str(word);
            }
        }
    }
}
