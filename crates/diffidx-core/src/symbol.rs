//! Symbols: what a declaration is called, where it is, and a fingerprint of its text.
//!
//! A [`Symbol`] is path-independent, so one parsed blob can serve every path it
//! appears under (renames, copies); the path enters only through [`symbol_id`].

use std::fmt;

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
}

impl SymbolKind {
    pub const ALL: [SymbolKind; 23] = [
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
    ];

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
