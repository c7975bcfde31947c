//! Qualified names: how they are joined, how twins are numbered, what a
//! symbol's own name is, and which qualnames a user's name matches.
//!
//! These rules belong to the naming contract (docs/naming.md), so they live
//! here, next to the symbol types, and read the language tables for what
//! differs between languages (separators, names that contain a separator).
//! Everything above the core (store, queries, sync) calls these functions
//! instead of splitting names itself.

use serde::{Deserialize, Serialize};

use crate::lang::Language;
use crate::symbol::{SymbolKind, TWIN_MARK};

pub use crate::symbol::twin;

/// Splits a twin's number off: `a::b#2` → (`a::b`, Some(2)).
pub fn split_twin(qualname: &str) -> (&str, Option<u32>) {
    match qualname.rfind(TWIN_MARK) {
        Some(i) => match qualname[i + 1..].parse::<u32>() {
            Ok(n) if qualname[i + 1..].bytes().all(|b| b.is_ascii_digit()) => {
                (&qualname[..i], Some(n))
            }
            _ => (qualname, None),
        },
        None => (qualname, None),
    }
}

/// The separators of every supported language (`.`, `::`).
fn separators() -> impl Iterator<Item = &'static str> {
    Language::all().map(|l| l.spec().separator)
}

/// True when `prefix` ends at a name boundary (with a separator).
fn ends_with_separator(prefix: &str) -> bool {
    separators().any(|sep| prefix.ends_with(sep))
}

/// The names a call of a symbol at `path` is written with: its own name,
/// and for a constructor, or the method its language runs on construction
/// (Python's `__init__`), its type's: `Foo.__init__` is called as `Foo`.
pub fn called_as<'a>(qualname: &'a str, kind: SymbolKind, path: &str) -> Vec<&'a str> {
    let own = own_name(qualname);
    let mut names = vec![own];
    let constructs = Language::from_path(path).is_some_and(|l| {
        let graph = &l.spec().graph;
        [graph.calls_construct, graph.constructor_method].contains(&Some(own))
    });
    if kind == SymbolKind::Constructor || constructs {
        let base = split_twin(qualname).0;
        let container = base
            .strip_suffix(own)
            .and_then(|c| separators().find_map(|sep| c.strip_suffix(sep)))
            .map(own_name);
        if let Some(ty) = container.filter(|t| !t.is_empty() && *t != own) {
            names.push(ty);
        }
    }
    names
}

/// The own (last) name of a qualname, without a twin's number: `Acme.Foo.Bar`
/// → `Bar`, `a::b::c#2` → `c`. A name that may itself contain a separator
/// starts where its language table says (`Foo.implicit operator System.Int32`
/// → `implicit operator System.Int32`).
pub fn own_name(qualname: &str) -> &str {
    let (base, _) = split_twin(qualname);
    let marked = Language::all()
        .flat_map(|l| l.spec().own_name_starts.iter())
        .filter_map(|marker| {
            let at = base.find(marker)?;
            (at == 0 || ends_with_separator(&base[..at])).then_some(at)
        })
        .min();
    let start = marked.unwrap_or_else(|| {
        separators()
            .filter_map(|sep| base.rfind(sep).map(|i| i + sep.len()))
            .max()
            .unwrap_or(0)
    });
    &base[start..]
}

/// True when `text` ends with where a language's own name may start
/// (`... operator `).
fn ends_with_own_name_start(text: &str) -> bool {
    Language::all()
        .flat_map(|l| l.spec().own_name_starts.iter())
        .any(|marker| text.ends_with(marker))
}

/// True when `qualname` is `name`, or ends with it at a separator boundary.
fn ends_with_name(qualname: &str, name: &str) -> bool {
    match qualname.strip_suffix(name) {
        Some("") => true,
        Some(prefix) => ends_with_separator(prefix),
        None => false,
    }
}

/// Which symbols a user means by a name (`log --symbol`, and queries).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SymbolQuery {
    /// A qualname or a suffix of one at a separator boundary.
    pub name: String,
    /// `Foo.Bar(int,string)` picks one overload.
    pub sig: Option<String>,
    pub kind: Option<SymbolKind>,
    /// A file, or a directory the symbol is under.
    pub path: Option<String>,
}

impl SymbolQuery {
    /// A query for `name`, splitting a trailing signature off `NAME(...)`.
    pub fn parse(name: &str) -> SymbolQuery {
        match name.find('(') {
            // `Foo.operator ()`-like names keep their parentheses.
            Some(i) if name.ends_with(')') && !ends_with_own_name_start(&name[..i]) => {
                SymbolQuery {
                    name: name[..i].to_owned(),
                    sig: Some(name[i..].chars().filter(|c| !c.is_whitespace()).collect()),
                    ..SymbolQuery::default()
                }
            }
            _ => SymbolQuery {
                name: name.to_owned(),
                ..SymbolQuery::default()
            },
        }
    }

    /// The own name every match has (for an index lookup before [`matches`]).
    ///
    /// [`matches`]: SymbolQuery::matches
    pub fn own_name(&self) -> &str {
        own_name(&self.name)
    }

    /// True when `qualname` is the name, or ends with it after a separator,
    /// optionally followed by a twin's number (`Foo.Bar` matches every twin,
    /// `Foo.Bar#2` only that one).
    pub fn matches(&self, qualname: &str) -> bool {
        ends_with_name(qualname, &self.name) || ends_with_name(split_twin(qualname).0, &self.name)
    }

    /// True when `path` is the query's file or lies under its directory.
    pub fn matches_path(&self, path: &str) -> bool {
        match &self.path {
            None => true,
            Some(p) => {
                let p = p.trim_end_matches('/');
                path == p
                    || path
                        .strip_prefix(p)
                        .is_some_and(|rest| rest.starts_with('/'))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_twin_is_named_with_or_without_its_number() {
        let all = SymbolQuery::parse("Lite::fmt");
        let one = SymbolQuery::parse("Lite::fmt#2");
        assert!(all.matches("syn::Lite::fmt#2") && all.matches("Lite::fmt"));
        assert!(one.matches("Lite::fmt#2") && one.matches("syn::Lite::fmt#2"));
        assert!(!one.matches("Lite::fmt#3") && !one.matches("Lite::fmt"));
        assert_eq!(twin("a::b", 1), "a::b");
        assert_eq!(split_twin(&twin("a::b", 3)), ("a::b", Some(3)));
        assert_eq!(split_twin("a#b"), ("a#b", None));
    }

    #[test]
    fn own_names() {
        assert_eq!(own_name("Acme.Foo.Bar"), "Bar");
        assert_eq!(own_name("a::b::c#2"), "c");
        assert_eq!(own_name("Foo.operator +"), "operator +");
        assert_eq!(
            own_name("Foo.implicit operator System.Int32"),
            "implicit operator System.Int32"
        );
        assert_eq!(own_name("Top"), "Top");
    }

    #[test]
    fn calls_name_a_constructor_by_its_type() {
        let m = SymbolKind::Method;
        assert_eq!(called_as("pkg.mod.Foo.bar", m, "pkg/mod.py"), ["bar"]);
        assert_eq!(
            called_as("pkg.mod.Foo.__init__", m, "pkg/mod.py"),
            ["__init__", "Foo"]
        );
        // Only Python runs `__init__` on construction.
        assert_eq!(called_as("Foo.__init__", m, "src/foo.rs"), ["__init__"]);
        let ctor = SymbolKind::Constructor;
        assert_eq!(called_as("Acme.Foo.Foo", ctor, "Foo.cs"), ["Foo"]);
        assert_eq!(
            called_as("Foo.constructor", ctor, "foo.ts"),
            ["constructor", "Foo"]
        );
    }

    #[test]
    fn queries_split_signatures_and_match_at_boundaries() {
        let q = SymbolQuery::parse("Foo.Bar(int, string)");
        assert_eq!(
            (q.name.as_str(), q.sig.as_deref()),
            ("Foo.Bar", Some("(int,string)"))
        );
        let q = SymbolQuery::parse("Labeled::fmt");
        assert_eq!((q.name.as_str(), q.sig), ("Labeled::fmt", None));
        let q = SymbolQuery::parse("Foo.Bar");
        assert!(q.matches("Foo.Bar"));
        assert!(q.matches("Acme.Foo.Bar"));
        assert!(q.matches("Acme.Foo.Bar#2"));
        assert!(!q.matches("Acme.XFoo.Bar"));
        assert!(!q.matches("Acme.Foo.Barn"));
        assert!(SymbolQuery::parse("fmt").matches("Wrapper::fmt"));
        assert_eq!(
            SymbolQuery::parse("Foo.operator +").own_name(),
            "operator +"
        );
    }

    #[test]
    fn paths_match_files_and_directories() {
        let q = SymbolQuery {
            path: Some("src/a/".into()),
            ..SymbolQuery::default()
        };
        assert!(q.matches_path("src/a/x.rs") && q.matches_path("src/a"));
        assert!(!q.matches_path("src/ab/x.rs"));
    }
}
