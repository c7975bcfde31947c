//! Symbols: what a declaration is called, where it is, and a fingerprint of its text.
//!
//! A [`Symbol`] is path-independent, so one parsed blob can serve every path it
//! appears under (renames, copies); the path enters only through [`symbol_id`].

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// The kinds of DESIGN.md §2, across all languages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SymbolKind {
    Namespace,
    Class,
    Struct,
    Interface,
    Record,
    Enum,
    Delegate,
    Method,
    Constructor,
    Destructor,
    Operator,
    Property,
    Indexer,
    Event,
    Field,
    Module,
    Union,
    Trait,
    Function,
    Const,
    Static,
    Type,
    Macro,
    /// A Java annotation type (`@interface`).
    Annotation,
    /// A Go package-level `var`.
    Var,
    /// A TypeScript/JavaScript `const`/`let`/`var` that holds no function.
    Variable,
}

impl SymbolKind {
    pub const ALL: [SymbolKind; 26] = [
        SymbolKind::Namespace,
        SymbolKind::Class,
        SymbolKind::Struct,
        SymbolKind::Interface,
        SymbolKind::Record,
        SymbolKind::Enum,
        SymbolKind::Delegate,
        SymbolKind::Method,
        SymbolKind::Constructor,
        SymbolKind::Destructor,
        SymbolKind::Operator,
        SymbolKind::Property,
        SymbolKind::Indexer,
        SymbolKind::Event,
        SymbolKind::Field,
        SymbolKind::Module,
        SymbolKind::Union,
        SymbolKind::Trait,
        SymbolKind::Function,
        SymbolKind::Const,
        SymbolKind::Static,
        SymbolKind::Type,
        SymbolKind::Macro,
        SymbolKind::Annotation,
        SymbolKind::Var,
        SymbolKind::Variable,
    ];

    /// Kinds that are called: a `type` part of one is its return type.
    pub fn is_callable(self) -> bool {
        matches!(
            self,
            SymbolKind::Method
                | SymbolKind::Constructor
                | SymbolKind::Destructor
                | SymbolKind::Operator
                | SymbolKind::Function
                | SymbolKind::Delegate
                | SymbolKind::Macro
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SymbolKind::Namespace => "namespace",
            SymbolKind::Class => "class",
            SymbolKind::Struct => "struct",
            SymbolKind::Interface => "interface",
            SymbolKind::Record => "record",
            SymbolKind::Enum => "enum",
            SymbolKind::Delegate => "delegate",
            SymbolKind::Method => "method",
            SymbolKind::Constructor => "constructor",
            SymbolKind::Destructor => "destructor",
            SymbolKind::Operator => "operator",
            SymbolKind::Property => "property",
            SymbolKind::Indexer => "indexer",
            SymbolKind::Event => "event",
            SymbolKind::Field => "field",
            SymbolKind::Module => "module",
            SymbolKind::Union => "union",
            SymbolKind::Trait => "trait",
            SymbolKind::Function => "function",
            SymbolKind::Const => "const",
            SymbolKind::Static => "static",
            SymbolKind::Type => "type",
            SymbolKind::Macro => "macro",
            SymbolKind::Annotation => "annotation",
            SymbolKind::Var => "var",
            SymbolKind::Variable => "variable",
        }
    }

    pub fn parse(s: &str) -> Option<SymbolKind> {
        SymbolKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl fmt::Display for SymbolKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One declaration of one file version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub kind: SymbolKind,
    /// The own (last) name, e.g. `Bar` for `Acme.Foo.Bar`; used for move matching.
    pub name: String,
    /// The qualified name, with a `#n` suffix when its key repeats in the file.
    pub qualname: String,
    pub sig: String,
    /// Index of the enclosing symbol in the same file's symbol list.
    pub parent: Option<usize>,
    /// 1-based inclusive line range.
    pub start_line: u32,
    pub end_line: u32,
    /// blake3 of the normalized text.
    pub content_hash: ContentHash,
    /// A sketch of the normalized text, for lineage (similar, not equal, text).
    pub sketch: TextSketch,
}

impl Symbol {
    /// The key within a file: `(qualname, kind, sig)`.
    pub fn key(&self) -> SymbolKey<'_> {
        SymbolKey {
            qualname: &self.qualname,
            kind: self.kind,
            sig: &self.sig,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SymbolKey<'a> {
    pub qualname: &'a str,
    pub kind: SymbolKind,
    pub sig: &'a str,
}

/// blake3 of a symbol's normalized text.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ContentHash(pub [u8; 32]);

impl ContentHash {
    pub fn to_hex(self) -> String {
        blake3::Hash::from_bytes(self.0).to_hex().to_string()
    }
}

impl fmt::Debug for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ContentHash({})", &self.to_hex()[..12])
    }
}

/// A bottom-k sketch of a text's token trigrams: the `SKETCH_SIZE` smallest
/// trigram hashes, sorted. Two sketches estimate the Jaccard similarity of
/// the trigram sets (exactly, when both sets are smaller than the sketch).
///
/// Why trigrams of tokens: a rename changes the few trigrams around the
/// name, an edited body changes those around the edit, so the score falls
/// with the share of the text that changed, whatever its length.
///
/// Shared (an `Arc`): a symbol whose text a commit left alone has the same
/// sketch in both versions, and a backfill holds many versions of a file at
/// once, so each distinct text keeps one copy (see `lang::Sketches`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextSketch(pub Arc<[u32]>);

/// How many hashes a sketch keeps.
pub const SKETCH_SIZE: usize = 64;

impl TextSketch {
    /// The sketch of a token sequence, given each token's hash.
    pub fn of_tokens(token_hashes: &[u64], smallest: &mut Vec<u32>) -> TextSketch {
        smallest.clear();
        // The k smallest distinct hashes, kept sorted: once k are held, most
        // hashes are larger than the largest and cost one comparison.
        let mut keep = |h: u32| {
            if smallest.len() == SKETCH_SIZE && h >= smallest[SKETCH_SIZE - 1] {
                return;
            }
            if let Err(at) = smallest.binary_search(&h) {
                if smallest.len() == SKETCH_SIZE {
                    smallest.pop();
                }
                smallest.insert(at, h);
            }
        };
        if token_hashes.len() < 3 {
            token_hashes.iter().for_each(|&h| keep(mix(h, 0, 0)));
        } else {
            token_hashes
                .windows(3)
                .for_each(|w| keep(mix(w[0], w[1], w[2])));
        }
        TextSketch(smallest.as_slice().into())
    }

    /// Estimated Jaccard similarity of the two texts' trigram sets, 0..=1.
    pub fn similarity(&self, other: &TextSketch) -> f64 {
        let (a, b) = (&self.0, &other.0);
        if a.is_empty() || b.is_empty() {
            return 0.0;
        }
        // The smallest k hashes of the union, and how many are in both.
        let (mut i, mut j, mut seen, mut shared) = (0, 0, 0, 0);
        while seen < SKETCH_SIZE && (i < a.len() || j < b.len()) {
            match (a.get(i), b.get(j)) {
                (Some(x), Some(y)) if x == y => {
                    shared += 1;
                    i += 1;
                    j += 1;
                }
                (Some(x), Some(y)) if x < y => i += 1,
                (Some(_), Some(_)) => j += 1,
                (Some(_), None) => i += 1,
                (None, _) => j += 1,
            }
            seen += 1;
        }
        // The union's k smallest are each at most either sketch's k-th, so
        // membership in both sides is known for every one of them.
        shared as f64 / seen as f64
    }
}

/// A 64-bit hash of one token's text (FNV-1a): cheap, and stable across
/// platforms and versions, as a sketch must be.
pub fn token_hash(token: &str) -> u64 {
    token.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Combines three token hashes into one trigram hash (splitmix64's finalizer).
fn mix(a: u64, b: u64, c: u64) -> u32 {
    let mut z = a
        .wrapping_add(b.rotate_left(21))
        .wrapping_add(c.rotate_left(42))
        .wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    ((z ^ (z >> 31)) >> 32) as u32
}

/// A symbol's id: `blake3(path, kind, qualname, sig)` in hex.
///
/// The four parts are joined by NUL bytes, which no path, kind, name or
/// signature contains, so distinct tuples never hash the same input.
pub fn symbol_id(path: &str, kind: SymbolKind, qualname: &str, sig: &str) -> String {
    let mut hasher = blake3::Hasher::new();
    hasher.update(path.as_bytes());
    hasher.update(b"\0");
    hasher.update(kind.as_str().as_bytes());
    hasher.update(b"\0");
    hasher.update(qualname.as_bytes());
    hasher.update(b"\0");
    hasher.update(sig.as_bytes());
    hasher.finalize().to_hex().to_string()
}

/// What marks a twin: a key repeated in one file gets `#2`, `#3`, ...
pub const TWIN_MARK: char = '#';

/// How a symbol's name is shown to people, the same in every output: the
/// qualname with its parameter types (`Foo.Bar(int)`), or, for a method of
/// a Rust trait impl, with the trait after it (`Wrapper::fmt as fmt::Display`).
pub fn display_name(qualname: &str, sig: &str) -> String {
    if sig.is_empty() || sig.starts_with('(') {
        format!("{qualname}{sig}")
    } else {
        format!("{qualname} as {sig}")
    }
}

/// The qualname of the `n`th occurrence (1-based) of a key in one file.
pub fn twin(qualname: &str, n: u32) -> String {
    if n > 1 {
        format!("{qualname}{TWIN_MARK}{n}")
    } else {
        qualname.to_owned()
    }
}

/// Everything extracted from one blob, independent of its path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileSymbols {
    /// Symbols in source order (pre-order: a parent precedes its members).
    pub symbols: Vec<Symbol>,
    /// True when tree-sitter reported syntax errors; the symbols are those that parsed.
    pub has_parse_errors: bool,
    /// True when symbols nested too deeply to be extracted on their own.
    pub too_deep: bool,
    /// True when symbols had a qualname or signature too long for a note.
    pub name_too_long: bool,
}

/// The longest qualname or signature a note may hold (and a reader accepts).
pub const MAX_NAME_BYTES: usize = 4096;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_names_round_trip() {
        for kind in SymbolKind::ALL {
            assert_eq!(SymbolKind::parse(kind.as_str()), Some(kind));
            assert_eq!(
                serde_json::to_string(&kind).unwrap(),
                format!("\"{}\"", kind.as_str())
            );
        }
        assert_eq!(SymbolKind::parse("lambda"), None);
    }

    fn sketch(text: &str) -> TextSketch {
        let hashes: Vec<u64> = text.split_whitespace().map(token_hash).collect();
        TextSketch::of_tokens(&hashes, &mut Vec::new())
    }

    #[test]
    fn similarity_falls_with_the_share_of_text_that_changed() {
        let body: String = (0..40).map(|i| format!("x{i} = y{i} ; ")).collect();
        let a = sketch(&format!("fn roll ( ) {{ {body} }}"));
        assert_eq!(a.similarity(&a), 1.0);
        let renamed = sketch(&format!("fn roll_to_front ( ) {{ {body} }}"));
        let rewritten = sketch("fn roll ( ) { completely different tokens here }");
        let renamed_score = a.similarity(&renamed);
        assert!(renamed_score > 0.9, "{renamed_score}");
        assert!(a.similarity(&rewritten) < 0.1);
        assert_eq!(a.similarity(&TextSketch::default()), 0.0);
        // Symmetric, and bounded by the sketch size.
        assert_eq!(renamed_score, renamed.similarity(&a));
        assert!(a.0.len() <= SKETCH_SIZE && a.0.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn id_separates_its_parts() {
        let a = symbol_id("a.cs", SymbolKind::Method, "Foo.Bar", "(int)");
        let b = symbol_id("a.cs", SymbolKind::Method, "Foo.Bar", "(long)");
        let c = symbol_id("b.cs", SymbolKind::Method, "Foo.Bar", "(int)");
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.len(), 64);
        assert_eq!(a, symbol_id("a.cs", SymbolKind::Method, "Foo.Bar", "(int)"));
    }
}
