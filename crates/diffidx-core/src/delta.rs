//! The status rules of DESIGN.md §3: from the symbols of both sides of each
//! changed file to [`SymbolDelta`]s.
//!
//! Hunks decide which symbols are candidates; the normalized text (its hash)
//! decides the label, so comment- and whitespace-only edits stay unchanged.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::git::hunks::LineChange;
use crate::symbol::{symbol_id, FileSymbols, Symbol, SymbolKey, SymbolKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    Added,
    Modified,
    Deleted,
    Moved,
    Unchanged,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Added => "ADDED",
            Status::Modified => "MODIFIED",
            Status::Deleted => "DELETED",
            Status::Moved => "MOVED",
            Status::Unchanged => "UNCHANGED",
        }
    }
}

impl Status {
    pub fn parse(s: &str) -> Option<Status> {
        [
            Status::Added,
            Status::Modified,
            Status::Deleted,
            Status::Moved,
            Status::Unchanged,
        ]
        .into_iter()
        .find(|status| status.as_str() == s)
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One symbol's change in one commit: a delta of the note format (§4).
/// Field order is the serialized order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SymbolDelta {
    pub id: String,
    pub status: Status,
    pub kind: SymbolKind,
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    pub qualname: String,
    pub sig: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    pub start_line: u32,
    pub end_line: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_hash: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified: Option<bool>,
    /// Lineage: on an ADDED delta, the DELETED delta of the same commit it
    /// continues (a rename, or a move that edited the text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<Lineage>,
}

/// The DELETED symbol an ADDED one continues, and how similar their
/// normalized texts are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lineage {
    pub id: String,
    pub qualname: String,
    pub sig: String,
    pub path: String,
    pub similarity: Similarity,
}

/// A similarity in hundredths; written as a number from 0 to 1 with at most
/// two decimals, so notes stay byte-identical across platforms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Similarity(u8);

impl Similarity {
    /// Rounds a ratio (0..=1) to hundredths.
    pub fn from_ratio(ratio: f64) -> Similarity {
        Similarity((ratio.clamp(0.0, 1.0) * 100.0).round() as u8)
    }

    pub fn percent(self) -> u8 {
        self.0
    }

    pub fn as_f64(self) -> f64 {
        f64::from(self.0) / 100.0
    }
}

impl Serialize for Similarity {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(self.as_f64())
    }
}

impl<'de> Deserialize<'de> for Similarity {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = f64::deserialize(deserializer)?;
        if !(0.0..=1.0).contains(&value) {
            return Err(serde::de::Error::custom(format!(
                "similarity {value} is not between 0 and 1"
            )));
        }
        Ok(Similarity::from_ratio(value))
    }
}

/// The least similarity (estimated Jaccard of token trigrams) at which an
/// ADDED symbol is linked to a DELETED one of another own name. Chosen by
/// hand on real histories; see docs/choices.md.
pub const LINEAGE_THRESHOLD: f64 = 0.6;

/// The same, when both have the same own name (a move that edited a short
/// body, a signature change): the name is evidence the text need not give.
pub const LINEAGE_THRESHOLD_SAME_NAME: f64 = 0.4;

/// The same, for the same own name in the same file and container (a
/// method re-signed with its body largely rewritten, in place), or when
/// the deleted one's container went in the same commit and the pair are
/// the commit's only namesakes (a class merged into another).
pub const LINEAGE_THRESHOLD_SAME_CONTAINER: f64 = 0.2;

/// The same, for another own name in the same place: the same file, the
/// same container, and the same declaration just before or just after it
/// (a method renamed with its signature and body changed in one commit).
pub const LINEAGE_THRESHOLD_SAME_PLACE: f64 = 0.3;

/// The same, for a pair whose name the commit's other code followed: a
/// call of the deleted name rewritten to a call of the added one
/// ([`RewrittenCalls`]). The callers are the evidence, so the texts need
/// only share a little (a method renamed with its body rewritten).
pub const LINEAGE_THRESHOLD_REWRITTEN_CALL: f64 = 0.1;

/// Past this many candidate pairs of one kind in one commit (a mass
/// rewrite), only pairs that share their own name are compared.
const MAX_LINEAGE_PAIRS: usize = 250_000;

/// One version of a file: its path and symbols.
#[derive(Debug, Clone, Copy)]
pub struct FileVersion<'a> {
    pub path: &'a str,
    pub symbols: &'a FileSymbols,
}

/// A symbol with its status, before cross-file move matching.
#[derive(Debug, Clone, Copy)]
pub struct Labeled<'a> {
    pub status: Status,
    /// The side that exists (the new side unless DELETED).
    pub file: FileVersion<'a>,
    pub index: usize,
    pub old_path: Option<&'a str>,
    pub modified: Option<bool>,
}

impl<'a> Labeled<'a> {
    pub fn symbol(&self) -> &'a Symbol {
        &self.file.symbols.symbols[self.index]
    }

    pub fn to_delta(&self) -> SymbolDelta {
        let s = self.symbol();
        let path = self.file.path;
        SymbolDelta {
            id: symbol_id(path, s.kind, &s.qualname, &s.sig),
            status: self.status,
            kind: s.kind,
            path: path.to_owned(),
            old_path: self.old_path.map(str::to_owned),
            qualname: s.qualname.clone(),
            sig: s.sig.clone(),
            parent_id: s.parent.map(|p| {
                let parent = &self.file.symbols.symbols[p];
                symbol_id(path, parent.kind, &parent.qualname, &parent.sig)
            }),
            start_line: s.start_line,
            end_line: s.end_line,
            content_hash: (self.status != Status::Deleted).then(|| s.content_hash.to_hex()),
            modified: self.modified,
            from: None,
        }
    }
}

/// Labels every symbol of one changed file, in source order (deleted ones
/// after the new side's). `changes` are the file's line hunks (ignored for
/// renames, where every shared key is MOVED).
pub fn label_file<'a>(
    old: Option<FileVersion<'a>>,
    new: Option<FileVersion<'a>>,
    changes: &[LineChange],
) -> Vec<Labeled<'a>> {
    let mut out = Vec::new();
    let label = |status, file, index, old_path, modified| Labeled {
        status,
        file,
        index,
        old_path,
        modified,
    };
    match (old, new) {
        (None, None) => {}
        (None, Some(new)) => {
            for i in 0..new.symbols.symbols.len() {
                out.push(label(Status::Added, new, i, None, None));
            }
        }
        (Some(old), None) => {
            for i in 0..old.symbols.symbols.len() {
                out.push(label(Status::Deleted, old, i, None, None));
            }
        }
        (Some(old), Some(new)) => {
            let renamed = old.path != new.path;
            let old_keys: HashMap<SymbolKey<'_>, usize> = old
                .symbols
                .symbols
                .iter()
                .enumerate()
                .map(|(i, s)| (s.key(), i))
                .collect();
            let mut matched = vec![false; old.symbols.symbols.len()];
            for (i, n) in new.symbols.symbols.iter().enumerate() {
                let Some(&j) = old_keys.get(&n.key()) else {
                    out.push(label(Status::Added, new, i, None, None));
                    continue;
                };
                matched[j] = true;
                let o = &old.symbols.symbols[j];
                let differs = o.content_hash != n.content_hash;
                if renamed {
                    out.push(label(Status::Moved, new, i, Some(old.path), Some(differs)));
                    continue;
                }
                let candidate = changes.iter().any(|c| {
                    c.touches_old(o.start_line, o.end_line)
                        || c.touches_new(n.start_line, n.end_line)
                        || c.cuts((o.start_line, o.end_line), (n.start_line, n.end_line))
                });
                let status = if candidate && differs {
                    Status::Modified
                } else {
                    Status::Unchanged
                };
                out.push(label(status, new, i, None, None));
            }
            for (j, seen) in matched.iter().enumerate() {
                if !seen {
                    out.push(label(Status::Deleted, old, j, None, None));
                }
            }
        }
    }
    out
}

/// Cross-file moves: a DELETED symbol in file A and an ADDED symbol in file
/// B ≠ A with the same kind, own name and normalized text become one MOVED
/// (path B, old_path A, modified false). Greedy and one-to-one: ADDED symbols
/// in the given (diff, then source) order each take the first unmatched
/// DELETED candidate in the same order.
pub fn match_moves(labeled: &mut Vec<Labeled<'_>>) {
    type Candidate<'s> = (SymbolKind, &'s str, crate::symbol::ContentHash);
    let mut deleted: HashMap<Candidate<'_>, Vec<usize>> = HashMap::new();
    for (i, l) in labeled.iter().enumerate() {
        if l.status == Status::Deleted {
            let s = l.symbol();
            deleted
                .entry((s.kind, s.name.as_str(), s.content_hash))
                .or_default()
                .push(i);
        }
    }
    if deleted.is_empty() {
        return;
    }
    let mut taken = vec![false; labeled.len()];
    let mut moves: Vec<(usize, usize)> = Vec::new();
    for (i, l) in labeled.iter().enumerate() {
        if l.status != Status::Added {
            continue;
        }
        let s = l.symbol();
        let Some(candidates) = deleted.get(&(s.kind, s.name.as_str(), s.content_hash)) else {
            continue;
        };
        if let Some(&j) = candidates
            .iter()
            .find(|&&j| !taken[j] && labeled[j].file.path != l.file.path)
        {
            taken[j] = true;
            moves.push((i, j));
        }
    }
    for &(i, j) in &moves {
        let old_path = labeled[j].file.path;
        let added = &mut labeled[i];
        added.status = Status::Moved;
        added.old_path = Some(old_path);
        added.modified = Some(false);
    }
    let mut index = 0;
    labeled.retain(|_| {
        let keep = !taken[index];
        index += 1;
        keep
    });
}

/// Lineage: pairs each ADDED symbol with the DELETED symbol of the same kind
/// (and commit) whose text is most similar, at or above
/// [`LINEAGE_THRESHOLD`] ([`LINEAGE_THRESHOLD_SAME_NAME`] for the same own
/// name, [`LINEAGE_THRESHOLD_SAME_CONTAINER`] for it in the same container
/// or for the only namesakes of a commit, the deleted one's container
/// deleted with it, [`LINEAGE_THRESHOLD_SAME_PLACE`] for another name in
/// the same place). One-to-one and greedy: pairs that share their own name first,
/// then the most similar pair first, then the labeled order. Returns
/// `(added, deleted, similarity)` indexes into `labeled`.
pub fn link_lineage(labeled: &[Labeled<'_>]) -> Vec<(usize, usize, Similarity)> {
    link_lineage_with(labeled, &RewrittenCalls::default())
}

/// [`link_lineage`], with the calls the commit rewrote from one name to
/// another: such a pair is linked at [`LINEAGE_THRESHOLD_REWRITTEN_CALL`]
/// and ranks with the pairs that share their name.
pub fn link_lineage_with(
    labeled: &[Labeled<'_>],
    rewritten: &RewrittenCalls,
) -> Vec<(usize, usize, Similarity)> {
    let mut by_kind: HashMap<SymbolKind, (Vec<usize>, Vec<usize>)> = HashMap::new();
    for (i, l) in labeled.iter().enumerate() {
        let sides = by_kind.entry(l.symbol().kind).or_default();
        match l.status {
            Status::Added => sides.0.push(i),
            Status::Deleted => sides.1.push(i),
            _ => {}
        }
    }
    // Read only when a namesake pair falls short of the same-name threshold.
    let orphans = std::cell::OnceCell::new();
    let orphaned = |d: usize| {
        orphans
            .get_or_init(|| orphans_of(labeled, &by_kind))
            .contains(&d)
    };
    let mut pairs: Vec<(Similarity, bool, usize, usize)> = Vec::new();
    for (added, deleted) in by_kind.values() {
        let crowded = added.len().saturating_mul(deleted.len()) > MAX_LINEAGE_PAIRS;
        for &a in added {
            let new = labeled[a].symbol();
            for &d in deleted {
                let old = labeled[d].symbol();
                let same_name = new.name == old.name;
                let followed = !same_name && rewritten.contains(&old.name, &new.name);
                if crowded && !same_name && !followed {
                    continue;
                }
                let similarity = new.sketch.similarity(&old.sketch);
                let threshold = if followed {
                    LINEAGE_THRESHOLD_REWRITTEN_CALL
                } else if same_name {
                    if similarity < LINEAGE_THRESHOLD_SAME_NAME
                        && (same_container(&labeled[a], &labeled[d]) || orphaned(d))
                    {
                        LINEAGE_THRESHOLD_SAME_CONTAINER
                    } else {
                        LINEAGE_THRESHOLD_SAME_NAME
                    }
                } else if (LINEAGE_THRESHOLD_SAME_PLACE..LINEAGE_THRESHOLD).contains(&similarity)
                    && same_place(&labeled[a], &labeled[d])
                {
                    LINEAGE_THRESHOLD_SAME_PLACE
                } else {
                    LINEAGE_THRESHOLD
                };
                if similarity >= threshold {
                    let strong = same_name || followed;
                    pairs.push((Similarity::from_ratio(similarity), strong, a, d));
                }
            }
        }
    }
    // A shared own name first: `foo(a)` deleted and `foo(a, b)` added is a
    // signature change even when another added method took more of the
    // old body (one extracted from it starts a history of its own). A
    // name the callers followed counts the same.
    pairs.sort_by(|x, y| {
        y.1.cmp(&x.1)
            .then(y.0.cmp(&x.0))
            .then(x.2.cmp(&y.2))
            .then(x.3.cmp(&y.3))
    });
    let mut used = vec![false; labeled.len()];
    let mut links = Vec::new();
    for (similarity, _, a, d) in pairs {
        if !used[a] && !used[d] {
            used[a] = true;
            used[d] = true;
            links.push((a, d, similarity));
        }
    }
    handed_over(labeled, &by_kind, rewritten, &mut used, &mut links);
    links
}

/// Extract method, the donor re-signed: `get(a)` deleted, `get(a, b)` added
/// in its place calling an added `lookup` that took most of the old body.
/// Body likeness links `lookup` to the old `get`; the new `get` is the one
/// that continues it (the name, the place and the call handing the work
/// over say so), and `lookup` starts a history of its own. So a link to a
/// symbol of another own name moves to an unlinked namesake of the deleted
/// one in the same file and container that calls it.
fn handed_over(
    labeled: &[Labeled<'_>],
    by_kind: &HashMap<SymbolKind, (Vec<usize>, Vec<usize>)>,
    rewritten: &RewrittenCalls,
    used: &mut [bool],
    links: &mut [(usize, usize, Similarity)],
) {
    if rewritten.calls.is_empty() {
        return;
    }
    // The unlinked ADDED callables, by kind and own name.
    let mut unlinked: HashMap<(SymbolKind, &str), Vec<usize>> = HashMap::new();
    for (kind, (added, _)) in by_kind {
        for &a in added.iter().filter(|&&a| !used[a] && kind.is_callable()) {
            let name = labeled[a].symbol().name.as_str();
            unlinked.entry((*kind, name)).or_default().push(a);
        }
    }
    for link in links.iter_mut() {
        let (e, d, _) = *link;
        let (extracted, old) = (labeled[e].symbol(), labeled[d].symbol());
        if extracted.name == old.name {
            continue;
        }
        let Some(namesakes) = unlinked.get(&(old.kind, old.name.as_str())) else {
            continue;
        };
        let mut donors = namesakes.iter().copied().filter(|&a| {
            !used[a]
                && same_container(&labeled[a], &labeled[d])
                && rewritten.calls(
                    labeled[a].file.path,
                    labeled[a].symbol().start_line,
                    &extracted.name,
                )
        });
        if let (Some(a), None) = (donors.next(), donors.next()) {
            let similarity = labeled[a].symbol().sketch.similarity(&old.sketch);
            used[a] = true;
            used[e] = false;
            *link = (a, d, Similarity::from_ratio(similarity));
        }
    }
}

/// The DELETED symbols that count as if their namesake stayed in place: a
/// container of theirs went in the same commit (a class merged into
/// another, or renamed), and they and one ADDED symbol are the commit's
/// only ones of their kind and name (`toString` of two deleted classes and
/// two added ones says nothing about which went where).
fn orphans_of(
    labeled: &[Labeled<'_>],
    by_kind: &HashMap<SymbolKind, (Vec<usize>, Vec<usize>)>,
) -> HashSet<usize> {
    let deleted_here: HashSet<(&str, usize)> = by_kind
        .values()
        .flat_map(|(_, deleted)| deleted)
        .map(|&d| (labeled[d].file.path, labeled[d].index))
        .collect();
    let counts = |side: &[usize]| {
        let mut n: HashMap<&str, usize> = HashMap::new();
        for &i in side {
            *n.entry(labeled[i].symbol().name.as_str()).or_default() += 1;
        }
        n
    };
    let mut out = HashSet::new();
    for (added, deleted) in by_kind.values() {
        let (added_names, deleted_names) = (counts(added), counts(deleted));
        for &d in deleted {
            let s = labeled[d].symbol();
            let one = |names: &HashMap<&str, usize>| names.get(s.name.as_str()) == Some(&1);
            let container_gone = s
                .parent
                .is_some_and(|p| deleted_here.contains(&(labeled[d].file.path, p)));
            if container_gone && one(&added_names) && one(&deleted_names) {
                out.insert(d);
            }
        }
    }
    out
}

/// Calls a commit rewrote from a deleted callable's name to an added one's:
/// the evidence that the added one continues the deleted one when their
/// texts have little in common (a rename with the body rewritten, or with
/// the parameters reordered).
///
/// A rewritten call is a removed line and an added line of one file whose
/// words are the same but for one called name (a word followed by `(`)
/// swapped for another, the arguments in any order. Lines inside the
/// renamed declarations themselves do not count: their own header says
/// nothing that a new method put in the old one's place would not.
///
/// The same lines tell which added callables call which other added ones:
/// a re-signed method that hands its old body over to an extracted one
/// ([`handed_over`]).
#[derive(Debug, Default)]
pub struct RewrittenCalls {
    /// Old name → the names its calls became.
    pairs: HashMap<String, HashSet<String>>,
    /// An ADDED callable, by path and first line → the own names of the
    /// other ADDED callables its added lines call (see [`handed_over`]).
    calls: HashMap<String, HashMap<u32, HashSet<String>>>,
}

impl RewrittenCalls {
    /// Whether a call of `old` was rewritten into a call of `new`.
    pub fn contains(&self, old: &str, new: &str) -> bool {
        self.pairs.get(old).is_some_and(|to| to.contains(new))
    }

    /// Whether the ADDED callable at `path`, line `start`, calls an ADDED
    /// callable named `callee` in a line the commit added.
    pub fn calls(&self, path: &str, start: u32, callee: &str) -> bool {
        self.calls
            .get(path)
            .and_then(|by_start| by_start.get(&start))
            .is_some_and(|names| names.contains(callee))
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty() && self.calls.is_empty()
    }

    /// Reads the rewritten calls of a commit from its labeled symbols and,
    /// per changed file, its path and [`ReplacedLines`]. Only the names of
    /// DELETED and ADDED callables are looked for; a commit without both
    /// reads no line (nor asks for any: `files` is consumed lazily).
    pub fn find<'t, R>(
        labeled: &[Labeled<'_>],
        files: impl IntoIterator<Item = (&'t str, R)>,
    ) -> RewrittenCalls
    where
        R: std::ops::Deref<Target = ReplacedLines>,
    {
        let mut out = RewrittenCalls::default();
        // Own name → the line spans it has (per path) on its side.
        let mut deleted: NameSpans<'_> = HashMap::new();
        let mut added: NameSpans<'_> = HashMap::new();
        for l in labeled {
            let s = l.symbol();
            if !s.kind.is_callable() {
                continue;
            }
            let side = match l.status {
                Status::Deleted => &mut deleted,
                Status::Added => &mut added,
                _ => continue,
            };
            side.entry(s.name.as_str())
                .or_default()
                .push((l.file.path, s.start_line, s.end_line));
        }
        if deleted.is_empty() || added.is_empty() {
            return out;
        }
        for (path, lines) in files {
            out.find_calls_between_added(path, &lines.new, &added);
            // The rest of a removed line's words → the called name taken
            // out, over the file's hunks (a block git shows as moved puts
            // the old and the new call in different ones).
            let mut removed: HashMap<String, Vec<&str>> = HashMap::new();
            for (n, line) in &lines.old {
                for (rest, name) in call_swaps(line, &deleted) {
                    if !inside(&deleted, name, path, *n) {
                        removed.entry(rest).or_default().push(name);
                    }
                }
            }
            if removed.is_empty() {
                continue;
            }
            for (n, line) in &lines.new {
                for (rest, name) in call_swaps(line, &added) {
                    if inside(&added, name, path, *n) {
                        continue;
                    }
                    for old in removed.get(&rest).into_iter().flatten() {
                        if *old != name {
                            out.pairs
                                .entry((*old).to_owned())
                                .or_default()
                                .insert(name.to_owned());
                        }
                    }
                }
            }
        }
        out
    }

    /// For each added line of `path` inside an ADDED callable (the
    /// innermost), the ADDED callables of other names it calls. One sweep
    /// over the lines (in order) and the callables' spans (nested or apart).
    fn find_calls_between_added(
        &mut self,
        path: &str,
        new_lines: &[(u32, String)],
        added: &NameSpans<'_>,
    ) {
        let mut spans: Vec<(u32, u32, &str)> = added
            .iter()
            .flat_map(|(name, spans)| {
                spans
                    .iter()
                    .filter(|&&(p, _, _)| p == path)
                    .map(move |&(_, start, end)| (start, end, *name))
            })
            .collect();
        if spans.is_empty() {
            return;
        }
        spans.sort_unstable();
        let mut next = 0;
        let mut open: Vec<(u32, u32, &str)> = Vec::new();
        for (n, line) in new_lines {
            while next < spans.len() && spans[next].0 <= *n {
                let span = spans[next];
                while open.last().is_some_and(|o| o.1 < span.0) {
                    open.pop();
                }
                open.push(span);
                next += 1;
            }
            while open.last().is_some_and(|o| o.1 < *n) {
                open.pop();
            }
            let Some(&(start, _, holder)) = open.last() else {
                continue;
            };
            for (_, callee) in call_swaps(line, added) {
                if callee != holder {
                    self.calls
                        .entry(path.to_owned())
                        .or_default()
                        .entry(start)
                        .or_default()
                        .insert(callee.to_owned());
                }
            }
        }
    }
}

/// The lines a file's change removed and added that may hold a call (a
/// `(`), with their 1-based numbers: all that [`RewrittenCalls::find`]
/// reads of a file change, so that a side held without its text (a long
/// run diffed file by file) can keep just these. Empty unless the change
/// both removes and adds such lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplacedLines {
    pub old: Vec<(u32, String)>,
    pub new: Vec<(u32, String)>,
}

impl ReplacedLines {
    /// The replaced lines of `hunks` between two texts.
    pub fn of(old_text: &str, new_text: &str, hunks: &[LineChange]) -> ReplacedLines {
        let old = calling_lines(old_text, hunks.iter().map(|h| h.old.clone()));
        if old.is_empty() {
            return ReplacedLines::default();
        }
        let new = calling_lines(new_text, hunks.iter().map(|h| h.new.clone()));
        if new.is_empty() {
            return ReplacedLines::default();
        }
        ReplacedLines { old, new }
    }
}

/// The lines of `text` in `ranges` (1-based) that hold a `(`; the text is
/// split only when a range is not empty.
fn calling_lines(
    text: &str,
    ranges: impl Iterator<Item = std::ops::Range<u32>>,
) -> Vec<(u32, String)> {
    let mut ranges = ranges.filter(|r| !r.is_empty()).peekable();
    if ranges.peek().is_none() {
        return Vec::new();
    }
    let lines: Vec<&str> = text.lines().collect();
    ranges
        .flatten()
        .filter_map(|n| {
            let line = lines.get((n as usize).checked_sub(1)?)?;
            line.contains('(').then(|| (n, (*line).to_owned()))
        })
        .collect()
}

/// Whether line `line` of `path` is inside a declaration named `name`.
fn inside(spans: &NameSpans<'_>, name: &str, path: &str, line: u32) -> bool {
    spans.get(name).is_some_and(|v| {
        v.iter()
            .any(|&(p, start, end)| p == path && start <= line && line <= end)
    })
}

/// Own name → where declarations of it stand: `(path, first line, last line)`.
type NameSpans<'a> = HashMap<&'a str, Vec<(&'a str, u32, u32)>>;

/// For each word of `line` that `names` holds and that is called (a `(`
/// follows it), the line's other words, sorted (so the arguments may come
/// in any order), with that word.
fn call_swaps<'n, V>(line: &str, names: &HashMap<&'n str, V>) -> Vec<(String, &'n str)> {
    let bytes = line.as_bytes();
    let mut words: Vec<(&str, bool)> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_alphabetic() || c == b'_' || c == b'$' {
            let start = i;
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'$')
            {
                i += 1;
            }
            let mut j = i;
            while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                j += 1;
            }
            words.push((&line[start..i], bytes.get(j) == Some(&b'(')));
        } else {
            i += 1;
        }
    }
    let mut out = Vec::new();
    for (k, &(word, called)) in words.iter().enumerate() {
        let Some((&name, _)) = names.get_key_value(word) else {
            continue;
        };
        if !called {
            continue;
        }
        let mut rest: Vec<&str> = words
            .iter()
            .enumerate()
            .filter(|&(m, _)| m != k)
            .map(|(_, &(w, _))| w)
            .collect();
        rest.sort_unstable();
        out.push((rest.join(" "), name));
    }
    out
}

/// Whether an ADDED symbol stands where a DELETED one stood: in the same
/// file, under a container of the same own name, with the same declaration
/// just before it or just after it.
fn same_place(added: &Labeled<'_>, deleted: &Labeled<'_>) -> bool {
    if !same_container(added, deleted) {
        return false;
    }
    let (before_new, after_new) = neighbours(added);
    let (before_old, after_old) = neighbours(deleted);
    (before_new.is_some() && before_new == before_old)
        || (after_new.is_some() && after_new == after_old)
}

/// Whether two symbols are in the same file, under containers of the same
/// own name (or both at the top).
fn same_container(added: &Labeled<'_>, deleted: &Labeled<'_>) -> bool {
    fn parent_name<'a>(l: &Labeled<'a>) -> Option<&'a str> {
        let symbols = &l.file.symbols.symbols;
        let parent = l.symbol().parent?;
        Some(symbols.get(parent)?.name.as_str())
    }
    added.file.path == deleted.file.path && parent_name(added) == parent_name(deleted)
}

/// The keys `(own name, kind, sig)` of the declarations just before and
/// just after a symbol among its siblings.
type Neighbour<'a> = Option<(&'a str, SymbolKind, &'a str)>;

fn neighbours<'a>(l: &Labeled<'a>) -> (Neighbour<'a>, Neighbour<'a>) {
    let symbols = &l.file.symbols.symbols;
    let me = l.symbol();
    let key = |s: &'a Symbol| Some((s.name.as_str(), s.kind, s.sig.as_str()));
    let siblings = symbols.iter().filter(|s| s.parent == me.parent);
    let before = siblings
        .clone()
        .filter(|s| s.start_line < me.start_line)
        .max_by_key(|s| s.start_line)
        .and_then(key);
    let after = siblings
        .filter(|s| s.start_line > me.start_line)
        .min_by_key(|s| s.start_line)
        .and_then(key);
    (before, after)
}

/// The deltas of labeled symbols: all but UNCHANGED, with lineage, sorted
/// for the note.
pub fn to_deltas(labeled: &[Labeled<'_>]) -> Vec<SymbolDelta> {
    to_deltas_with(labeled, &RewrittenCalls::default())
}

/// [`to_deltas`], with the calls the commit rewrote ([`link_lineage_with`]).
pub fn to_deltas_with(labeled: &[Labeled<'_>], rewritten: &RewrittenCalls) -> Vec<SymbolDelta> {
    let mut deltas: Vec<Option<SymbolDelta>> = labeled
        .iter()
        .map(|l| (l.status != Status::Unchanged).then(|| l.to_delta()))
        .collect();
    for (a, d, similarity) in link_lineage_with(labeled, rewritten) {
        let from = deltas[d].as_ref().map(|old| Lineage {
            id: old.id.clone(),
            qualname: old.qualname.clone(),
            sig: old.sig.clone(),
            path: old.path.clone(),
            similarity,
        });
        if let Some(new) = deltas[a].as_mut() {
            new.from = from;
        }
    }
    let mut deltas: Vec<SymbolDelta> = deltas.into_iter().flatten().collect();
    sort_deltas(&mut deltas);
    deltas
}

/// Sorts deltas as the note format requires: by `(path, start_line, id)`.
pub fn sort_deltas(deltas: &mut [SymbolDelta]) {
    deltas.sort_by(|a, b| {
        (a.path.as_str(), a.start_line, a.id.as_str()).cmp(&(
            b.path.as_str(),
            b.start_line,
            b.id.as_str(),
        ))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbol::ContentHash;

    fn sym(kind: SymbolKind, qualname: &str, lines: (u32, u32), text: u8) -> Symbol {
        Symbol {
            kind,
            name: qualname.rsplit('.').next().unwrap().to_owned(),
            qualname: qualname.to_owned(),
            sig: String::new(),
            parent: None,
            start_line: lines.0,
            end_line: lines.1,
            content_hash: ContentHash([text; 32]),
            sketch: Default::default(),
        }
    }

    /// Two versions of one file, labeled.
    fn label_in_place<'a>(
        path: &'a str,
        old: &'a FileSymbols,
        new: &'a FileSymbols,
        changes: &[LineChange],
    ) -> Vec<Labeled<'a>> {
        label_file(
            Some(FileVersion { path, symbols: old }),
            Some(FileVersion { path, symbols: new }),
            changes,
        )
    }

    /// The lineage links of labeled symbols: (added, deleted), each as
    /// qualname and signature.
    fn links_of(labeled: &[Labeled<'_>]) -> Vec<(String, String)> {
        let name = |i: usize| {
            let s = labeled[i].symbol();
            format!("{}{}", s.qualname, s.sig)
        };
        link_lineage(labeled)
            .into_iter()
            .map(|(a, d, _)| (name(a), name(d)))
            .collect()
    }

    fn file(symbols: Vec<Symbol>) -> FileSymbols {
        FileSymbols {
            symbols,
            ..FileSymbols::default()
        }
    }

    fn summary(labeled: &[Labeled<'_>]) -> Vec<String> {
        labeled
            .iter()
            .map(|l| {
                format!(
                    "{} {} {}{}",
                    l.status,
                    l.file.path,
                    l.symbol().qualname,
                    l.old_path.map(|p| format!(" <- {p}")).unwrap_or_default()
                )
            })
            .collect()
    }

    fn sketched(kind: SymbolKind, qualname: &str, text: &str) -> Symbol {
        let hashes: Vec<u64> = text
            .split_whitespace()
            .map(crate::symbol::token_hash)
            .collect();
        Symbol {
            sketch: crate::symbol::TextSketch::of_tokens(&hashes, &mut Vec::new()),
            ..sym(kind, qualname, (1, 3), text.len() as u8)
        }
    }

    /// A hunk: the changed lines on each side.
    fn hunk(old: std::ops::Range<u32>, new: std::ops::Range<u32>) -> LineChange {
        LineChange { old, new }
    }

    /// `Checker.displayErrors` renamed `fireErrors`, its parameters
    /// reordered and its body rewritten, and its caller rewritten to match.
    fn renamed_with_its_caller() -> (&'static str, &'static str, FileSymbols, FileSymbols) {
        let old_text = "class Checker {\n  void displayErrors(String file, List errors) {\n    report each error of errors in file a b c\n  }\n  void process(File f) {\n    displayErrors(f.name, errors);\n  }\n}\n";
        let new_text = "class Checker {\n  void fireErrors(List errors, String file) {\n    notify each listener of errors in file x y z\n  }\n  void process(File f) {\n    fireErrors(errors, f.name);\n  }\n}\n";
        let at = |symbol: Symbol, lines: (u32, u32)| Symbol {
            start_line: lines.0,
            end_line: lines.1,
            ..symbol
        };
        let old = file(vec![
            at(
                sketched(
                    SymbolKind::Method,
                    "displayErrors",
                    "report each error of errors in file a b c",
                ),
                (2, 4),
            ),
            sym(SymbolKind::Method, "process", (5, 7), 1),
        ]);
        let new = file(vec![
            at(
                sketched(
                    SymbolKind::Method,
                    "fireErrors",
                    "notify each listener of errors in file x y z",
                ),
                (2, 4),
            ),
            sym(SymbolKind::Method, "process", (5, 7), 1),
        ]);
        (old_text, new_text, old, new)
    }

    #[test]
    fn a_call_rewritten_to_the_new_name_links_a_rename_with_its_body_rewritten() {
        let (old_text, new_text, old, new) = renamed_with_its_caller();
        let similarity = old.symbols[0].sketch.similarity(&new.symbols[0].sketch);
        assert!(
            (LINEAGE_THRESHOLD_REWRITTEN_CALL..LINEAGE_THRESHOLD_SAME_PLACE).contains(&similarity),
            "the fixture's texts must be too unlike for the other rules: {similarity}"
        );
        let changes = [hunk(2..4, 2..4), hunk(6..7, 6..7)];
        let labeled = label_in_place("Checker.java", &old, &new, &changes);
        assert!(links_of(&labeled).is_empty());
        let replaced = ReplacedLines::of(old_text, new_text, &changes);
        let rewritten = RewrittenCalls::find(&labeled, [("Checker.java", &replaced)]);
        assert!(rewritten.contains("displayErrors", "fireErrors"));
        assert!(!rewritten.contains("fireErrors", "displayErrors"));
        let linked: Vec<(String, String)> = link_lineage_with(&labeled, &rewritten)
            .into_iter()
            .map(|(a, d, _)| {
                let name = |i: usize| labeled[i].symbol().name.clone();
                (name(a), name(d))
            })
            .collect();
        assert_eq!(
            linked,
            [("fireErrors".to_owned(), "displayErrors".to_owned())]
        );
        let deltas = to_deltas_with(&labeled, &rewritten);
        let added = deltas.iter().find(|d| d.qualname == "fireErrors").unwrap();
        assert_eq!(
            added.from.as_ref().map(|f| f.qualname.as_str()),
            Some("displayErrors")
        );
    }

    /// A block git shows as moved puts the old call and the new one in
    /// different hunks: still a call the file rewrote. A call removed from
    /// one file and one added to another are not.
    #[test]
    fn a_call_rewritten_in_another_hunk_of_the_file_counts() {
        let (old_text, new_text, old, new) = renamed_with_its_caller();
        let changes = [hunk(2..4, 2..4), hunk(6..7, 6..6), hunk(8..8, 6..7)];
        let labeled = label_in_place("Checker.java", &old, &new, &changes);
        let replaced = ReplacedLines::of(old_text, new_text, &changes);
        let rewritten = RewrittenCalls::find(&labeled, [("Checker.java", &replaced)]);
        assert!(rewritten.contains("displayErrors", "fireErrors"));

        let removed = ReplacedLines {
            old: replaced.old.clone(),
            new: Vec::new(),
        };
        let added = ReplacedLines {
            old: Vec::new(),
            new: replaced.new.clone(),
        };
        let apart = RewrittenCalls::find(
            &labeled,
            [("Process.java", &removed), ("Main.java", &added)],
        );
        assert!(apart.is_empty());
    }

    /// The renamed declaration's own header is no evidence: only a call
    /// outside it is.
    #[test]
    fn a_renamed_header_alone_is_no_rewritten_call() {
        let (old_text, new_text, old, new) = renamed_with_its_caller();
        let changes = [hunk(2..4, 2..4)];
        let labeled = label_in_place("Checker.java", &old, &new, &changes);
        let replaced = ReplacedLines::of(old_text, new_text, &changes);
        let rewritten = RewrittenCalls::find(&labeled, [("Checker.java", &replaced)]);
        assert!(rewritten.is_empty());
        assert!(link_lineage_with(&labeled, &rewritten).is_empty());
    }

    /// Extract method with the donor re-signed (spring's
    /// `GenericConversionService.getConverter`, d3b43ebccb): the old body
    /// went to `matchByClassPair`, and the new `getConverter`, in its place,
    /// calls it.
    #[test]
    fn a_re_signed_method_that_calls_the_extracted_one_continues_the_old() {
        let old_text = "class Service {\n  Converter getConverter(Class s, Class t) {\n    walk the class queue of s and its interfaces for a converter to t\n  }\n}\n";
        let new_text = "class Service {\n  Converter getConverter(Desc s, Desc t) {\n    return matchByClassPair(s.type(), t.type());\n  }\n  Converter matchByClassPair(Class s, Class t) {\n    walk the class queue of s and its interfaces for a converter to t\n  }\n}\n";
        let body = "walk the class queue of s and its interfaces for a converter to t";
        let at = |symbol: Symbol, sig: &str, lines: (u32, u32)| Symbol {
            sig: sig.to_owned(),
            start_line: lines.0,
            end_line: lines.1,
            ..symbol
        };
        let old = file(vec![at(
            sketched(SymbolKind::Method, "getConverter", body),
            "(Class,Class)",
            (2, 4),
        )]);
        let new = file(vec![
            at(
                sketched(
                    SymbolKind::Method,
                    "getConverter",
                    "return matchByClassPair s type t type",
                ),
                "(Desc,Desc)",
                (2, 4),
            ),
            at(
                sketched(SymbolKind::Method, "matchByClassPair", body),
                "(Class,Class)",
                (5, 7),
            ),
        ]);
        let changes = [hunk(2..4, 2..7)];
        let labeled = label_in_place("Service.java", &old, &new, &changes);
        assert_eq!(
            links_of(&labeled),
            [(
                "matchByClassPair(Class,Class)".to_owned(),
                "getConverter(Class,Class)".to_owned()
            )],
            "by likeness alone"
        );
        let replaced = ReplacedLines::of(old_text, new_text, &changes);
        let rewritten = RewrittenCalls::find(&labeled, [("Service.java", &replaced)]);
        let linked: Vec<(String, String)> = link_lineage_with(&labeled, &rewritten)
            .into_iter()
            .map(|(a, d, _)| {
                let key = |i: usize| {
                    let s = labeled[i].symbol();
                    format!("{}{}", s.name, s.sig)
                };
                (key(a), key(d))
            })
            .collect();
        assert_eq!(
            linked,
            [(
                "getConverter(Desc,Desc)".to_owned(),
                "getConverter(Class,Class)".to_owned()
            )]
        );

        // A namesake that does not call it is no evidence.
        let without_call = new_text.replace("matchByClassPair(s.type(), t.type())", "null");
        let replaced = ReplacedLines::of(old_text, &without_call, &changes);
        let rewritten = RewrittenCalls::find(&labeled, [("Service.java", &replaced)]);
        assert_eq!(
            link_lineage_with(&labeled, &rewritten)
                .into_iter()
                .map(|(a, _, _)| labeled[a].symbol().name.clone())
                .collect::<Vec<_>>(),
            ["matchByClassPair"]
        );
    }

    #[test]
    fn call_swaps_take_out_one_called_name_and_sort_the_rest() {
        let names: HashMap<&str, ()> = [("foo", ()), ("bar", ())].into_iter().collect();
        assert_eq!(
            call_swaps("x = foo (b, a) + bar;", &names),
            [("a b bar x".to_owned(), "foo")]
        );
        assert!(call_swaps("obj.foo = 1; bar2(foo)", &names).is_empty());
    }

    #[test]
    fn lineage_links_a_less_similar_pair_in_the_same_place() {
        let at = |s: Symbol, start: u32| Symbol {
            start_line: start,
            end_line: start + 2,
            ..s
        };
        let kept: String = (0..18).map(|i| format!("a{i} = b{i} ; ")).collect();
        let was: String = (18..30).map(|i| format!("a{i} = b{i} ; ")).collect();
        let now: String = (18..30).map(|i| format!("c{i} ( d{i} ) ; ")).collect();
        let method = |name: &str, body: &str| {
            sketched(
                SymbolKind::Method,
                &format!("C.{name}"),
                &format!("void {name} ( int x ) {{ {kept} {body} }}"),
            )
        };
        let neighbour = |name: &str| {
            sketched(
                SymbolKind::Method,
                &format!("C.{name}"),
                &format!("void {name} ( ) {{ }}"),
            )
        };
        let links = |old: &FileSymbols, new: &FileSymbols| {
            links_of(&label_in_place("c.java", old, new, &[]))
        };
        let (old_method, new_method) = (method("synStream", &was), method("headers", &now));
        let similarity = new_method.sketch.similarity(&old_method.sketch);
        assert!(
            (LINEAGE_THRESHOLD_SAME_PLACE..LINEAGE_THRESHOLD).contains(&similarity),
            "{similarity}"
        );
        // Renamed, re-signed and edited between the same two methods.
        let old = file(vec![
            at(neighbour("Keep"), 1),
            at(old_method.clone(), 5),
            at(neighbour("Tail"), 9),
        ]);
        let new = file(vec![
            at(neighbour("Keep"), 1),
            at(new_method.clone(), 5),
            at(neighbour("Tail"), 9),
        ]);
        assert_eq!(
            links(&old, &new),
            [("C.headers".to_owned(), "C.synStream".to_owned())]
        );
        // The same pair where nothing around them is the same: no link.
        let old = file(vec![at(neighbour("Keep"), 1), at(old_method, 5)]);
        let new = file(vec![at(new_method, 5), at(neighbour("Tail"), 9)]);
        assert!(links(&old, &new).is_empty());
    }

    #[test]
    fn lineage_prefers_the_same_name_to_a_more_similar_other_name() {
        let stmts: Vec<String> = (0..30).map(|i| format!("a{i} = b{i} ;")).collect();
        let old_body = stmts.join(" ");
        let kept = stmts[..24].join(" ");
        let new_stuff: String = (0..6).map(|i| format!("c{i} = s . d{i} ; ")).collect();
        let with_sig = |qualname: &str, sig: &str, text: String| Symbol {
            sig: sig.to_owned(),
            ..sketched(SymbolKind::Method, qualname, &text)
        };
        let old = file(vec![with_sig(
            "C.Run",
            "(int)",
            format!("void Run ( int a ) {{ {old_body} }}"),
        )]);
        let new = file(vec![
            // The old method with a parameter more and a body half rewritten.
            with_sig(
                "C.Run",
                "(int,string)",
                format!("void Run ( int a , string s ) {{ {kept} {new_stuff} }}"),
            ),
            // A method extracted from it: most of its body, under a new name.
            with_sig(
                "C.RunAll",
                "(int)",
                format!("void RunAll ( int a ) {{ {old_body} x ; }}"),
            ),
        ]);
        let (run, run_all) = (&new.symbols[0], &new.symbols[1]);
        let to_old = |s: &Symbol| s.sketch.similarity(&old.symbols[0].sketch);
        assert!(
            to_old(run) >= LINEAGE_THRESHOLD_SAME_NAME,
            "{}",
            to_old(run)
        );
        assert!(
            to_old(run_all) > to_old(run),
            "the other name is the more similar"
        );
        assert_eq!(
            links_of(&label_in_place("c.cs", &old, &new, &[])),
            [("C.Run(int,string)".to_owned(), "C.Run(int)".to_owned())]
        );
    }

    #[test]
    fn the_same_name_in_the_same_container_links_at_a_lower_similarity() {
        let stmts: Vec<String> = (0..30).map(|i| format!("a{i} = b{i} ;")).collect();
        let fresh: String = (0..16).map(|i| format!("c{i} = s . d{i} ; ")).collect();
        let method = |qualname: &str, sig: &str, text: String, parent: Option<usize>| Symbol {
            sig: sig.to_owned(),
            parent,
            ..sketched(SymbolKind::Method, qualname, &text)
        };
        let class = |name: &str, lines: (u32, u32)| sym(SymbolKind::Class, name, lines, 9);
        let old_text = format!("void Run ( int a ) {{ {} }}", stmts.join(" "));
        let new_text = format!(
            "void Run ( int a , string s ) {{ {} {fresh} }}",
            stmts[..14].join(" ")
        );
        // The method moves from the first class of `old_classes` to the last
        // of `new_classes`.
        let link = |old_classes: &[&str], new_classes: &[&str]| {
            let classes = |names: &[&str]| -> Vec<Symbol> {
                let at = |i: usize| 1 + 50 * i as u32;
                names
                    .iter()
                    .enumerate()
                    .map(|(i, name)| class(name, (at(i), at(i) + 39)))
                    .collect()
            };
            let mut old_symbols = classes(old_classes);
            old_symbols.push(method(
                &format!("{}.Run", old_classes[0]),
                "(int)",
                old_text.clone(),
                Some(0),
            ));
            let mut new_symbols = classes(new_classes);
            let last = new_classes.len() - 1;
            new_symbols.push(method(
                &format!("{}.Run", new_classes[last]),
                "(int,string)",
                new_text.clone(),
                Some(last),
            ));
            let (old, new) = (file(old_symbols), file(new_symbols));
            let similarity = new.symbols[new_classes.len()]
                .sketch
                .similarity(&old.symbols[old_classes.len()].sketch);
            assert!(
                (LINEAGE_THRESHOLD_SAME_CONTAINER..LINEAGE_THRESHOLD_SAME_NAME)
                    .contains(&similarity),
                "{similarity}"
            );
            link_lineage(&label_in_place("c.cs", &old, &new, &[])).len()
        };
        assert_eq!(link(&["C"], &["C"]), 1, "re-signed in place");
        assert_eq!(
            link(&["C", "D"], &["C", "D"]),
            0,
            "moved to another container that was there, the name is not enough"
        );
        assert_eq!(
            link(&["C", "D"], &["D"]),
            1,
            "its container went in the same commit: merged into another"
        );
    }

    #[test]
    fn a_namesake_whose_container_went_links_only_when_it_is_the_only_one() {
        let stmts: Vec<String> = (0..30).map(|i| format!("a{i} = b{i} ;")).collect();
        let fresh: String = (0..16).map(|i| format!("c{i} = s . d{i} ; ")).collect();
        let method = |qualname: &str, text: String, parent: usize| Symbol {
            parent: Some(parent),
            ..sketched(SymbolKind::Method, qualname, &text)
        };
        let class = |name: &str, at: u32| sym(SymbolKind::Class, name, (at, at + 40), 9);
        let old_text = format!("void Run ( int a ) {{ {} }}", stmts.join(" "));
        let new_text = |k: usize| {
            format!(
                "void Run ( int a , string s ) {{ {} {fresh} k{k} }}",
                stmts[..14].join(" ")
            )
        };
        // Two classes with a `Run` each deleted, two added: no pair links.
        let old = file(vec![
            class("A", 1),
            method("A.Run", old_text.clone(), 0),
            class("B", 50),
            method("B.Run", old_text.replace("a0", "z0"), 2),
        ]);
        let new = file(vec![
            class("C", 1),
            method("C.Run", new_text(1), 0),
            class("D", 50),
            method("D.Run", new_text(2), 2),
        ]);
        assert!(link_lineage(&label_in_place("c.cs", &old, &new, &[])).is_empty());
    }

    #[test]
    fn lineage_links_the_most_similar_pair_of_a_kind_once() {
        let body: String = (0..30).map(|i| format!("a{i} = b{i} ; ")).collect();
        let old = file(vec![
            sketched(
                SymbolKind::Method,
                "C.Roll",
                &format!("void Roll ( ) {{ {body} }}"),
            ),
            sketched(
                SymbolKind::Method,
                "C.Gone",
                "void Gone ( ) { unrelated stuff }",
            ),
            sketched(SymbolKind::Field, "C.roll", &format!("int roll {body}")),
        ]);
        let new = file(vec![
            sketched(
                SymbolKind::Method,
                "C.RollToFront",
                &format!("void RollToFront ( ) {{ {body} x ; }}"),
            ),
            sketched(
                SymbolKind::Method,
                "C.Copy",
                &format!("void Copy ( ) {{ {body} }}"),
            ),
            sketched(SymbolKind::Property, "C.Roll", &format!("int Roll {body}")),
        ]);
        let labeled = label_in_place("c.cs", &old, &new, &[]);
        let links = links_of(&labeled);
        // Copy is the more similar (an exact copy of Roll's body) and takes
        // Roll; RollToFront has no partner left. Kinds never mix.
        assert_eq!(links, [("C.Copy".to_owned(), "C.Roll".to_owned())]);
        let deltas = to_deltas(&labeled);
        let copy = deltas.iter().find(|d| d.qualname == "C.Copy").unwrap();
        let from = copy.from.as_ref().unwrap();
        assert_eq!(
            (from.qualname.as_str(), from.path.as_str()),
            ("C.Roll", "c.cs")
        );
        assert!(deltas.iter().filter(|d| d.from.is_some()).count() == 1);
    }

    #[test]
    fn hunks_select_and_text_decides() {
        let old = file(vec![
            sym(SymbolKind::Method, "C.A", (1, 3), 1),
            sym(SymbolKind::Method, "C.B", (4, 6), 2),
            sym(SymbolKind::Method, "C.Gone", (7, 8), 3),
        ]);
        let new = file(vec![
            sym(SymbolKind::Method, "C.A", (1, 3), 9), // text changed, in a hunk
            sym(SymbolKind::Method, "C.B", (4, 6), 2), // in a hunk, same text (comment edit)
            sym(SymbolKind::Method, "C.New", (7, 7), 4),
        ]);
        let changes = [
            LineChange {
                old: 2..3,
                new: 2..3,
            },
            LineChange {
                old: 5..9,
                new: 5..8,
            },
        ];
        let labeled = label_in_place("c.cs", &old, &new, &changes);
        assert_eq!(
            summary(&labeled),
            [
                "MODIFIED c.cs C.A",
                "UNCHANGED c.cs C.B",
                "ADDED c.cs C.New",
                "DELETED c.cs C.Gone"
            ]
        );
    }

    /// A method deleted from between an annotation and the next method
    /// leaves the annotation heading that method: a hunk that only
    /// removes lines, cutting inside its new span, makes it a candidate; a
    /// cut just above a span does not.
    #[test]
    fn a_cut_inside_a_span_is_a_candidate() {
        let old = file(vec![
            sym(SymbolKind::Method, "C.Gone", (1, 6), 1),
            sym(SymbolKind::Method, "C.Run", (7, 9), 2),
            sym(SymbolKind::Method, "C.Next", (10, 11), 3),
        ]);
        let new = file(vec![
            sym(SymbolKind::Method, "C.Run", (1, 4), 9),
            sym(SymbolKind::Method, "C.Next", (5, 6), 8),
        ]);
        let changes = [hunk(2..7, 2..2)];
        let labeled = label_in_place("c.cs", &old, &new, &changes);
        assert_eq!(
            summary(&labeled),
            [
                "MODIFIED c.cs C.Run",
                "UNCHANGED c.cs C.Next",
                "DELETED c.cs C.Gone"
            ]
        );
        // The same cut, and an insertion inside an old span.
        assert!(changes[0].cuts((7, 9), (1, 4)));
        assert!(!changes[0].cuts((10, 11), (5, 6)));
        assert!(hunk(3..3, 3..8).cuts((1, 5), (1, 10)));
        assert!(!hunk(3..3, 3..8).cuts((3, 5), (8, 10)));
    }

    #[test]
    fn text_change_outside_every_hunk_is_not_a_candidate() {
        let old = file(vec![sym(SymbolKind::Method, "C.A", (1, 3), 1)]);
        let new = file(vec![sym(SymbolKind::Method, "C.A", (1, 3), 2)]);
        let labeled = label_in_place(
            "c.cs",
            &old,
            &new,
            &[LineChange {
                old: 10..11,
                new: 10..11,
            }],
        );
        assert_eq!(labeled[0].status, Status::Unchanged);
    }

    #[test]
    fn renamed_file_moves_every_shared_key() {
        let old = file(vec![
            sym(SymbolKind::Class, "C", (1, 9), 1),
            sym(SymbolKind::Method, "C.A", (2, 3), 2),
        ]);
        let new = file(vec![
            sym(SymbolKind::Class, "C", (1, 9), 5),
            sym(SymbolKind::Method, "C.A", (2, 3), 2),
        ]);
        let labeled = label_file(
            Some(FileVersion {
                path: "a.cs",
                symbols: &old,
            }),
            Some(FileVersion {
                path: "b.cs",
                symbols: &new,
            }),
            &[],
        );
        assert_eq!(
            summary(&labeled),
            ["MOVED b.cs C <- a.cs", "MOVED b.cs C.A <- a.cs"]
        );
        assert_eq!(labeled[0].modified, Some(true));
        assert_eq!(labeled[1].modified, Some(false));
    }

    #[test]
    fn cross_file_moves_are_greedy_and_one_to_one() {
        let a = file(vec![
            sym(SymbolKind::Method, "X.Run", (1, 2), 7),
            sym(SymbolKind::Method, "X.Run2", (3, 4), 7),
        ]);
        let b = file(vec![sym(SymbolKind::Method, "Y.Run", (1, 2), 7)]);
        let c = file(vec![sym(SymbolKind::Method, "Z.Run", (1, 2), 7)]);
        let same = file(vec![sym(SymbolKind::Method, "W.Run", (1, 2), 7)]);
        let mut labeled = Vec::new();
        labeled.extend(label_file(
            Some(FileVersion {
                path: "a.cs",
                symbols: &a,
            }),
            None,
            &[],
        ));
        labeled.extend(label_file(
            None,
            Some(FileVersion {
                path: "b.cs",
                symbols: &b,
            }),
            &[],
        ));
        labeled.extend(label_file(
            None,
            Some(FileVersion {
                path: "c.cs",
                symbols: &c,
            }),
            &[],
        ));
        // An ADDED in the same file as the DELETED never matches it.
        labeled.extend(label_file(
            None,
            Some(FileVersion {
                path: "a.cs",
                symbols: &same,
            }),
            &[],
        ));
        match_moves(&mut labeled);
        assert_eq!(
            summary(&labeled),
            [
                "DELETED a.cs X.Run2",
                "MOVED b.cs Y.Run <- a.cs",
                "ADDED c.cs Z.Run",
                "ADDED a.cs W.Run"
            ]
        );
    }

    #[test]
    fn delta_serializes_in_note_field_order() {
        let f = file(vec![sym(SymbolKind::Method, "C.A", (2, 3), 1)]);
        let labeled = label_file(
            None,
            Some(FileVersion {
                path: "c.cs",
                symbols: &f,
            }),
            &[],
        );
        let json = serde_json::to_string(&labeled[0].to_delta()).unwrap();
        let keys: Vec<&str> = json
            .split('"')
            .enumerate()
            .filter(|(i, _)| i % 4 == 1)
            .map(|(_, k)| k)
            .collect();
        assert!(json.starts_with("{\"id\":\""), "{json}");
        assert!(keys.contains(&"content_hash"));
        assert!(
            !json.contains("old_path") && !json.contains("modified") && !json.contains("parent_id")
        );
        let back: SymbolDelta = serde_json::from_str(&json).unwrap();
        assert_eq!(back, labeled[0].to_delta());
    }
}
