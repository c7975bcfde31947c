//! Rows of the code graph (`diffidx_core::codegraph`): what a file at the
//! graph's commit contains, imports, calls, inherits and implements. Like
//! the commit rows, the store and Neo4j write these and nothing else.

use diffidx_core::codegraph::{Def, Edge, FileEdges, FileFacts, ImportTarget, UnresolvedCalls};
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
}

impl Row for TreeSymbol {
    fn props(&self) -> Vec<(&'static str, Prop<'_>)> {
        let mut props = self.node.props();
        props.push(("unresolved", Prop::Int(self.unresolved.into())));
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

impl CodeRows {
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
