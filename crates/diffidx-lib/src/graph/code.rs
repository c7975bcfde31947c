//! Rows of the code graph (`diffidx_core::codegraph`): what a file at the
//! graph's commit contains, imports, calls, inherits and implements. Like
//! the commit rows, the store and Neo4j write these and nothing else.

use diffidx_core::codegraph::{
    Def, Edge, EdgeKind, FileEdges, FileFacts, ImportTarget, UnresolvedCalls,
};
use diffidx_core::symbol::symbol_id;
use diffidx_core::Language;

use super::{FileNode, Prop, Row, SymbolNode};

/// `(:Directory)`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct DirectoryNode {
    pub path: String,
}

impl Row for DirectoryNode {
    fn props(&self) -> Vec<(&'static str, Prop<'_>)> {
        vec![("path", Prop::Str(&self.path))]
    }
}

/// `(:Directory)-[:CONTAINS]->(:Directory|:File)`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct DirContains {
    pub parent: String,
    pub child: String,
}

impl Row for DirContains {
    fn props(&self) -> Vec<(&'static str, Prop<'_>)> {
        vec![
            ("parent", Prop::Str(&self.parent)),
            ("child", Prop::Str(&self.child)),
        ]
    }
}

/// `(:File|:Symbol)-[:CONTAINS {file}]->(:Symbol)`: `parent` is a path for
/// a top-level symbol, else the enclosing symbol's id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SymbolContains {
    pub file: String,
    pub parent: Option<String>,
    pub child: String,
}

impl Row for SymbolContains {
    fn props(&self) -> Vec<(&'static str, Prop<'_>)> {
        vec![
            ("file", Prop::Str(&self.file)),
            (
                "parent",
                Prop::Str(self.parent.as_deref().unwrap_or(&self.file)),
            ),
            ("child", Prop::Str(&self.child)),
        ]
    }
}

/// `(:Module)`: a namespace or module a file imports, by name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ModuleNode {
    pub name: String,
    pub language: &'static str,
}

impl Row for ModuleNode {
    fn props(&self) -> Vec<(&'static str, Prop<'_>)> {
        vec![
            ("name", Prop::Str(&self.name)),
            ("language", Prop::Str(self.language)),
        ]
    }
}

/// `(:File)-[:IMPORTS {kind, alias, line}]->(:Module|:File)`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Imports {
    pub file: String,
    pub target: ImportTarget,
    pub kind: &'static str,
    pub alias: String,
    pub line: u32,
}

impl Row for Imports {
    fn props(&self) -> Vec<(&'static str, Prop<'_>)> {
        let target = match &self.target {
            ImportTarget::Module(name) => name,
            ImportTarget::File(path) => path,
        };
        vec![
            ("file", Prop::Str(&self.file)),
            ("target", Prop::Str(target)),
            ("kind", Prop::Str(self.kind)),
            ("alias", Prop::Str(&self.alias)),
            ("line", Prop::Int(self.line.into())),
        ]
    }
}

/// `(:Symbol)-[:CALLS|INHERITS|IMPLEMENTS {file, resolution, candidates,
/// line, sites}]->(:Symbol)`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct CodeEdge {
    pub file: String,
    pub edge: Edge,
}

impl Row for CodeEdge {
    fn props(&self) -> Vec<(&'static str, Prop<'_>)> {
        vec![
            ("file", Prop::Str(&self.file)),
            ("from", Prop::Str(&self.edge.from)),
            ("to", Prop::Str(&self.edge.to)),
            ("resolution", Prop::Str(self.edge.resolution.as_str())),
            ("candidates", Prop::Int(self.edge.candidates.into())),
            ("line", Prop::Int(self.edge.line.into())),
            ("sites", Prop::Int(self.edge.sites.into())),
        ]
    }
}

/// A symbol of the tree with the count of its references that matched
/// nothing in the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeSymbol {
    pub node: SymbolNode,
    pub unresolved: u32,
    /// Declared without a body: a call of it runs an implementation.
    pub bodiless: bool,
}

impl Row for TreeSymbol {
    fn props(&self) -> Vec<(&'static str, Prop<'_>)> {
        let mut props = self.node.props();
        props.push(("unresolved", Prop::Int(self.unresolved.into())));
        props.push(("bodiless", Prop::Bool(self.bodiless)));
        props
    }
}

/// `(:UnresolvedCall {id, path, name, qualified, bare})`: the calls of
/// `name` in the file at `path` that matched no declaration. A caller count
/// of a symbol so named is a lower bound by these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnresolvedCallRow {
    /// `path:name`, unique (a name has no `:`, a path may).
    pub id: String,
    pub path: String,
    pub name: String,
    pub calls: UnresolvedCalls,
}

impl Row for UnresolvedCallRow {
    fn props(&self) -> Vec<(&'static str, Prop<'_>)> {
        vec![
            ("id", Prop::Str(&self.id)),
            ("path", Prop::Str(&self.path)),
            ("name", Prop::Str(&self.name)),
            ("qualified", Prop::Int(self.calls.qualified.into())),
            ("bare", Prop::Int(self.calls.bare.into())),
        ]
    }
}

/// The rows of the files whose edges were derived (again).
#[derive(Debug, Clone, Default)]
pub struct CodeRows {
    pub files: Vec<FileNode>,
    pub symbols: Vec<TreeSymbol>,
    pub contains: Vec<SymbolContains>,
    pub modules: Vec<ModuleNode>,
    pub imports: Vec<Imports>,
    pub edges: Vec<CodeEdge>,
    pub unresolved_calls: Vec<UnresolvedCallRow>,
}

/// The kinds of a file's rows. An update replaces each kind of a file's
/// rows on its own, and only when their digest changed: a body edited
/// without moving a line changes none of its file's rows, and a caller's
/// file derived again because a name it uses moved may change only its
/// edges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RowKind {
    Files,
    Symbols,
    /// The hierarchy: file → symbol, symbol → symbol.
    Contains,
    /// The file's imports, with the modules they name.
    Imports,
    Edges(EdgeKind),
    UnresolvedCalls,
}

impl RowKind {
    pub const ALL: [RowKind; 8] = [
        RowKind::Files,
        RowKind::Symbols,
        RowKind::Contains,
        RowKind::Imports,
        RowKind::Edges(EdgeKind::Calls),
        RowKind::Edges(EdgeKind::Inherits),
        RowKind::Edges(EdgeKind::Implements),
        RowKind::UnresolvedCalls,
    ];

    fn index(self) -> usize {
        RowKind::ALL
            .iter()
            .position(|k| *k == self)
            .unwrap_or_default()
    }
}

/// The digest of each kind of one file's rows ([`CodeRows::digests`]), in
/// the order of [`RowKind::ALL`]; as text, what the store keeps of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowDigests(Vec<String>);

impl RowDigests {
    /// Digests kept as text; `None` for text of another shape.
    pub fn parse(text: &str) -> Option<RowDigests> {
        let parts: Vec<String> = text.split(' ').map(str::to_owned).collect();
        (parts.len() == RowKind::ALL.len()).then_some(RowDigests(parts))
    }

    pub fn text(&self) -> String {
        self.0.join(" ")
    }

    /// Whether the rows of `kind` differ from those `stored` describes
    /// (always, without stored digests).
    pub fn differ(&self, stored: Option<&RowDigests>, kind: RowKind) -> bool {
        stored.is_none_or(|stored| stored.0[kind.index()] != self.0[kind.index()])
    }
}

/// A digest of rows in whatever order they come: the sum of each row's own
/// digest (a multiset hash), and how many there are.
fn multiset_digest<'a, R: Row + 'a>(rows: impl Iterator<Item = &'a R>) -> String {
    let (mut sum, mut count) = (0u128, 0u64);
    // Each row's fields go to one buffer, hashed at once: feeding a hasher
    // field by field cost more than the hashing.
    let mut bytes: Vec<u8> = Vec::new();
    for row in rows {
        bytes.clear();
        for (name, prop) in row.props() {
            bytes.extend_from_slice(&(name.len() as u64).to_le_bytes());
            bytes.extend_from_slice(name.as_bytes());
            match prop {
                Prop::Str(s) => {
                    bytes.push(1);
                    bytes.extend_from_slice(&(s.len() as u64).to_le_bytes());
                    bytes.extend_from_slice(s.as_bytes());
                }
                Prop::Int(n) => {
                    bytes.push(2);
                    bytes.extend_from_slice(&n.to_le_bytes());
                }
                Prop::Bool(b) => bytes.extend_from_slice(&[3, u8::from(b)]),
                Prop::Float(x) => {
                    bytes.push(4);
                    bytes.extend_from_slice(&x.to_bits().to_le_bytes());
                }
            }
        }
        let mut low = [0u8; 16];
        low.copy_from_slice(&blake3::hash(&bytes).as_bytes()[..16]);
        sum = sum.wrapping_add(u128::from_le_bytes(low));
        count += 1;
    }
    format!("{sum:032x}.{count}")
}

impl CodeRows {
    /// The digest of each kind of these rows. A graph update compares a
    /// file's with those of the rows it last wrote, kept in the store, and
    /// writes only the kinds that differ, without reading stored rows.
    pub fn digests(&self) -> RowDigests {
        RowDigests(
            RowKind::ALL
                .iter()
                .map(|kind| match kind {
                    RowKind::Files => multiset_digest(self.files.iter()),
                    RowKind::Symbols => multiset_digest(self.symbols.iter()),
                    RowKind::Contains => multiset_digest(self.contains.iter()),
                    // The modules are named by the imports.
                    RowKind::Imports => multiset_digest(self.imports.iter()),
                    RowKind::Edges(edge) => {
                        multiset_digest(self.edges.iter().filter(|e| e.edge.kind == *edge))
                    }
                    RowKind::UnresolvedCalls => multiset_digest(self.unresolved_calls.iter()),
                })
                .collect(),
        )
    }

    /// Moves the rows of the kinds `wanted` takes from `other` to the end
    /// of these.
    pub fn append(&mut self, mut other: CodeRows, wanted: impl Fn(RowKind) -> bool) {
        if wanted(RowKind::Files) {
            self.files.append(&mut other.files);
        }
        if wanted(RowKind::Symbols) {
            self.symbols.append(&mut other.symbols);
        }
        if wanted(RowKind::Contains) {
            self.contains.append(&mut other.contains);
        }
        if wanted(RowKind::Imports) {
            self.modules.append(&mut other.modules);
            self.imports.append(&mut other.imports);
        }
        self.edges.extend(
            other
                .edges
                .into_iter()
                .filter(|e| wanted(RowKind::Edges(e.edge.kind))),
        );
        if wanted(RowKind::UnresolvedCalls) {
            self.unresolved_calls.append(&mut other.unresolved_calls);
        }
    }

    /// Adds one file: its symbols and their hierarchy, its imports and the
    /// edges its references resolved to.
    pub fn add_file(
        &mut self,
        path: &str,
        language: Language,
        facts: &FileFacts,
        edges: FileEdges,
    ) {
        self.files.push(FileNode {
            path: path.to_owned(),
            language: language.name(),
        });
        let ids: Vec<String> = facts
            .defs
            .iter()
            .map(|d| symbol_id(path, d.kind, &d.qualname, &d.sig))
            .collect();
        for (def, id) in facts.defs.iter().zip(&ids) {
            self.symbols.push(TreeSymbol {
                node: symbol_node(path, language, def, id),
                unresolved: edges.unresolved.get(id).copied().unwrap_or(0),
                bodiless: def.bodiless,
            });
            self.contains.push(SymbolContains {
                file: path.to_owned(),
                parent: def.parent.and_then(|p| ids.get(p as usize)).cloned(),
                child: id.clone(),
            });
        }
        for import in edges.imports {
            if let ImportTarget::Module(name) = &import.target {
                self.modules.push(ModuleNode {
                    name: name.clone(),
                    language: language.name(),
                });
            }
            self.imports.push(Imports {
                file: path.to_owned(),
                target: import.target,
                kind: import.kind.as_str(),
                alias: import.alias.unwrap_or_default(),
                line: import.line,
            });
        }
        self.unresolved_calls
            .extend(
                edges
                    .unresolved_calls
                    .into_iter()
                    .map(|(name, calls)| UnresolvedCallRow {
                        id: format!("{path}:{name}"),
                        path: path.to_owned(),
                        name,
                        calls,
                    }),
            );
        self.edges
            .extend(edges.edges.into_iter().map(|edge| CodeEdge {
                file: path.to_owned(),
                edge,
            }));
    }
}

fn symbol_node(path: &str, language: Language, def: &Def, id: &str) -> SymbolNode {
    SymbolNode {
        id: id.into(),
        path: path.into(),
        qualname: def.qualname.clone(),
        name: def.name.clone(),
        kind: def.kind.as_str(),
        sig: def.sig.clone(),
        language: language.name(),
        deleted: false,
        start_line: def.lines.0,
        end_line: def.lines.1,
        content_hash: def.content_hash.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use diffidx_core::codegraph::Resolution;

    fn call(from: &str, to: &str, line: u32) -> CodeEdge {
        CodeEdge {
            file: "a.py".into(),
            edge: Edge {
                kind: EdgeKind::Calls,
                from: from.into(),
                to: to.into(),
                resolution: Resolution::Scoped,
                candidates: 1,
                line,
                sites: 1,
            },
        }
    }

    fn calls(edges: &[&CodeEdge]) -> CodeRows {
        CodeRows {
            edges: edges.iter().map(|e| (*e).clone()).collect(),
            ..CodeRows::default()
        }
    }

    #[test]
    fn digests_ignore_the_order_of_rows_and_tell_their_kinds_apart() {
        let (g, h) = (call("f", "g", 3), call("f", "h", 4));
        let stored = calls(&[&g, &h]).digests();
        assert_eq!(calls(&[&h, &g]).digests(), stored);
        // A call moved a line: the calls differ, and no other kind.
        let moved = calls(&[&g, &call("f", "h", 5)]).digests();
        for kind in RowKind::ALL {
            assert_eq!(
                moved.differ(Some(&stored), kind),
                kind == RowKind::Edges(EdgeKind::Calls),
                "{kind:?}"
            );
        }
        // A row twice is not the row once.
        assert_ne!(calls(&[&g, &g]).digests(), calls(&[&g]).digests());
        assert_ne!(calls(&[&g, &g, &h, &h]).digests(), stored);
        // Kept as text and read back; nothing stored differs in every kind.
        assert_eq!(RowDigests::parse(&stored.text()), Some(stored.clone()));
        assert_eq!(RowDigests::parse("a b"), None);
        assert!(RowKind::ALL.iter().all(|kind| stored.differ(None, *kind)));
    }

    #[test]
    fn append_takes_only_the_kinds_asked_for() {
        let mut rows = CodeRows::default();
        let mut file = calls(&[&call("f", "g", 3)]);
        file.unresolved_calls.push(UnresolvedCallRow {
            id: "a.py:x".into(),
            path: "a.py".into(),
            name: "x".into(),
            calls: UnresolvedCalls {
                qualified: 1,
                bare: 0,
            },
        });
        rows.append(file.clone(), |kind| kind == RowKind::UnresolvedCalls);
        assert!(rows.edges.is_empty());
        assert_eq!(rows.unresolved_calls, file.unresolved_calls);
        rows.append(file.clone(), |kind| kind != RowKind::UnresolvedCalls);
        assert_eq!(rows.edges, file.edges);
        assert_eq!(rows.unresolved_calls.len(), 1);
    }
}
