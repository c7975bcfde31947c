//! Symbol extraction, driven by one table per language.
//!
//! A [`LanguageSpec`] maps tree-sitter node kinds to [`Role`]s: walk through it
//! (`Transparent`), a symbol (`Symbol`), one symbol per declarator
//! (`Declarators`), a named scope that is not itself a symbol (`Scope`, Rust's
//! `impl`), or a symbol whose members are its following siblings (`FileScoped`,
//! C#'s `namespace X;`), or a wrapper whose inner declaration is the symbol
//! (`Wrapper`, Python's decorators). Docstrings, where a language has them,
//! are declared in the table too and count as comments. The walker below is
//! the only control flow; adding a language means writing its table and
//! fixtures.
//!
//! Walking starts at the root and only ever descends through roles, so nothing
//! inside a method body (local functions, lambdas, closures) becomes a symbol,
//! and nothing inside an `ERROR` node is trusted as one.

mod csharp;
mod ecmascript;
pub mod flow;
mod go;
mod java;
pub mod parts;
pub mod preproc;
mod python;
pub mod refs;
mod rust;
mod tokens;
pub mod values;
pub mod words;

use std::collections::HashMap;
use std::ops::Range;
use std::rc::Rc;

use tree_sitter::{Node, Parser, Tree};

use crate::symbol::{ContentHash, FileSymbols, Symbol, SymbolKind, MAX_NAME_BYTES};

/// How deeply symbols may nest (a method in a class in a namespace is 3).
/// Deeper symbols are not extracted: their text counts in the enclosing one,
/// and the file is reported, as for syntax errors. Real code stays far below.
pub const MAX_NESTING: u32 = 64;

/// The longest qualname or signature the walker extracts, leaving room for a
/// twin mark within [`MAX_NAME_BYTES`].
const MAX_EXTRACTED_NAME_BYTES: usize = MAX_NAME_BYTES - 16;

/// Every supported language, in one list: adding a language is a line here,
/// its table (a [`LanguageSpec`]) and fixtures. A [`Language`] is a position
/// in this list.
static LANGUAGES: &[&LanguageSpec] = &[
    &csharp::SPEC,
    &rust::SPEC,
    &python::SPEC,
    &java::SPEC,
    &go::SPEC,
    &ecmascript::TYPESCRIPT,
    &ecmascript::TSX,
    &ecmascript::JAVASCRIPT,
];

/// A supported language: a handle on its entry in the language list.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Language(u8);

impl std::fmt::Debug for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.spec().display_name)
    }
}

impl Language {
    /// Every supported language, in list order.
    pub fn all() -> impl Iterator<Item = Language> {
        (0..LANGUAGES.len()).map(|i| Language(i as u8))
    }

    /// The language of a path, by extension.
    pub fn from_path(path: &str) -> Option<Language> {
        let ext = path.rsplit_once('.')?.1;
        Language::all().find(|l| l.spec().extensions.contains(&ext))
    }

    pub fn spec(self) -> &'static LanguageSpec {
        LANGUAGES[self.0 as usize]
    }

    /// The position in the language list (for per-language tables).
    fn index(self) -> usize {
        self.0 as usize
    }

    pub fn name(self) -> &'static str {
        self.spec().name
    }

    pub fn display_name(self) -> &'static str {
        self.spec().display_name
    }

    /// A language by its name (`csharp`, `rust`) or one of its extensions
    /// (`cs`, `rs`), case-insensitively.
    pub fn from_name(name: &str) -> Option<Language> {
        let name = name.trim().to_ascii_lowercase();
        Language::all()
            .find(|l| l.spec().name == name || l.spec().extensions.contains(&name.as_str()))
    }
}

/// How one language's syntax tree maps onto symbols.
pub struct LanguageSpec {
    pub name: &'static str,
    /// How people write the name (`C#`).
    pub display_name: &'static str,
    pub extensions: &'static [&'static str],
    pub grammar: fn() -> tree_sitter::Language,
    /// Joins qualname parts (`.` for C#, `::` for Rust).
    pub separator: &'static str,
    /// Where an own name starts that may contain the separator itself (C#'s
    /// `implicit operator System.Int32`); see `qualname::own_name`.
    pub own_name_starts: &'static [&'static str],
    /// Node kinds whose text never counts (comments, doc comments too).
    pub comment_kinds: &'static [&'static str],
    /// Sibling kinds directly above an item that belong to it (Rust attributes).
    pub leading_kinds: &'static [&'static str],
    /// String statements that are comments (Python docstrings).
    pub docstrings: Option<Docstrings>,
    /// Kinds of parameter and where their types are, for signatures.
    pub parameters: &'static [(&'static str, Param)],
    /// The parts of a declaration, by field name or node kind, for the
    /// change types of a record (see `parts`).
    pub parts: &'static [(&'static str, parts::Part)],
    pub roles: &'static [(&'static str, Role)],
    /// Rewrites the source before parsing (the C# preprocessor pass).
    pub preprocess: Option<fn(&str) -> preproc::Preprocessed<'_>>,
    /// What the code graph reads: calls, imports, bases.
    pub graph: refs::GraphSpec,
}

/// Where a language's docstrings are: the first statement of a body, when
/// it is a string alone.
#[derive(Debug, Clone, Copy)]
pub struct Docstrings {
    /// Kinds whose body may open with a docstring, and the field of that
    /// body (`None`: the node is the body, as a module is).
    pub owners: &'static [(&'static str, Option<&'static str>)],
    /// The statement kind that holds an expression alone.
    pub statement: &'static str,
    /// The string kinds.
    pub strings: &'static [&'static str],
}

/// What a node kind means to the walker.
#[derive(Debug, Clone, Copy)]
pub enum Role {
    /// Not a symbol; its named children are walked in the same scope.
    Transparent,
    Symbol(SymbolRule),
    /// One symbol per declarator (C# and Java fields, C# event fields,
    /// TypeScript's `const a = 1, b = 2`).
    Declarators(DeclaratorRule),
    /// Not a symbol, but it names a scope for its members (Rust `impl`).
    Scope {
        name: Name,
        body: &'static str,
        /// Signature given to the methods in the scope (Rust trait path).
        member_sig: Option<Name>,
    },
    /// A symbol whose members are the siblings that follow it (C# `namespace X;`).
    FileScoped(SymbolRule),
    /// Wraps a declaration (Python's decorators, TypeScript's `export`): the
    /// declaration in field `inner` is the symbol, and the wrapper its extent.
    Wrapper {
        /// The fields the declaration may be in, tried in order.
        inner: &'static [&'static str],
    },
    /// Not a symbol: names the package that prefixes every symbol after it
    /// in the same container (Java's `package a.b;`, Go's `package x`).
    Package(Name),
    /// One symbol per name in field `field`, each with the whole node as its
    /// text (Go's `const a, b = 1, 2`).
    Names {
        kind: SymbolKind,
        field: &'static str,
    },
}

#[derive(Debug, Clone, Copy)]
pub struct SymbolRule {
    pub kind: SymbolKind,
    /// The kind when declared directly in a type body (Rust: fn → method).
    pub member_kind: Option<SymbolKind>,
    pub name: Name,
    pub sig: Sig,
    /// Field that holds the members, for containers.
    pub body: Option<&'static str>,
    /// Without a body the node is no symbol (Rust `mod x;`).
    pub requires_body: bool,
    /// Members are type members (they take `member_kind`).
    pub type_body: bool,
    /// The kind by the kind of the node in this field, when listed (Go's
    /// `type X struct{}` is a struct, `type X interface{}` an interface).
    pub kind_by: Option<KindBy>,
    /// The symbol belongs to the type this names, declared elsewhere (Go's
    /// method receiver: `func (s *Store) Get()` is `Store.Get`).
    pub owner: Option<Name>,
}

impl SymbolRule {
    pub const fn leaf(kind: SymbolKind, name: Name) -> SymbolRule {
        SymbolRule {
            kind,
            member_kind: None,
            name,
            sig: Sig::None,
            body: None,
            requires_body: false,
            type_body: false,
            kind_by: None,
            owner: None,
        }
    }
}

/// How a symbol or scope gets its name.
#[derive(Debug, Clone, Copy)]
pub enum Name {
    /// The text of a field, whitespace removed.
    Field(&'static str),
    /// A fixed prefix and the text of a field (`~Foo`).
    Prefixed(&'static str, &'static str),
    /// `operator` and the text of the `operator` field (`operator +`).
    Operator,
    /// `implicit operator T` / `explicit operator T`.
    ConversionOperator,
    /// A fixed name (`this[]`).
    Fixed(&'static str),
    /// Rust impl self type: last path segment, generics dropped, references
    /// and `dyn` peeled; other types are their text without whitespace.
    SelfType(&'static str),
    /// A path without generic arguments (Rust trait in `impl Trait for X`).
    PathWithoutGenerics(&'static str),
    /// The first named child of one of these kinds, whitespace removed
    /// (Java's package name, which has no field).
    ChildOfKind(&'static [&'static str]),
    /// The type named at the bottom of this field, through `type` fields or
    /// else first named children (Go's receiver `(s *Store[T])`: `Store`).
    BaseType(&'static str),
    /// A field's text without surrounding quotes (`declare module "x"`).
    Unquoted(&'static str),
    /// A field's text, or this name when there is no such field (an
    /// anonymous `export default class {}` is `default`).
    FieldOr(&'static str, &'static str),
}

/// How a symbol gets its signature.
#[derive(Debug, Clone, Copy)]
pub enum Sig {
    None,
    /// The type of each parameter in the given field, whitespace removed,
    /// comma-joined in parentheses: `(int,List<string>)`. The language's
    /// `parameters` table says where each kind of parameter keeps its type.
    ParameterTypes(&'static str),
    /// The parameter types of the nearest enclosing declaration with this
    /// field (Java's compact record constructor takes its record's).
    EnclosingParameterTypes(&'static str),
    /// Always this text (Java annotation elements: `()`).
    Fixed(&'static str),
    /// The first unnamed child token that is one of these words, else empty
    /// (TypeScript accessors: `get`, `set`).
    Keyword(&'static [&'static str]),
}

/// A kind chosen by the kind of the node in a field: `(field, [(node kind,
/// symbol kind)])`; other node kinds keep the rule's kind.
pub type KindBy = (&'static str, &'static [(&'static str, SymbolKind)]);

/// Where a kind of parameter keeps its type, for [`Sig::ParameterTypes`].
#[derive(Debug, Clone, Copy)]
pub enum Param {
    /// In this field.
    Field(&'static str),
    /// The parameter's text without the children of these kinds (Java's
    /// `String... xs` without its name and modifiers: `String...`).
    TextWithout(&'static [&'static str]),
    /// Not a parameter of the signature (Java's receiver parameter).
    Skip,
}

/// Parses blobs and extracts their symbols; holds one parser per language.
pub struct Extractor {
    /// One parser and one kind table per language, by list position. A
    /// table is built when its language is first met: a `show` process
    /// usually meets one of eight.
    parsers: Vec<Parser>,
    tables: Vec<Option<KindTable>>,
    limits: Limits,
    /// Time spent parsing and walking trees, for the stage breakdown.
    parse_time: std::time::Duration,
    extract_time: std::time::Duration,
}

/// Per-file budgets: a file that exceeds one is skipped and reported, so
/// that one pathological or minified file cannot stall a backfill.
///
/// Both are counted in work, not wall-clock time, so that the same file is
/// skipped on every machine and notes stay identical across clones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Parser steps (tree-sitter reports progress every 100 parse
    /// operations; each report is one step). A 1 MiB source file of
    /// ordinary code takes a few thousand.
    pub parse_steps: u64,
    /// Symbols that may start on one line. Minified and generated code puts
    /// thousands on one line, where line-based hunks cannot tell them apart.
    pub symbols_per_line: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            parse_steps: 50_000,
            symbols_per_line: 200,
        }
    }
}

/// Why an extraction gave up on a file: it exceeded one of the [`Limits`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OverLimit {
    /// The parse took more than `limit` steps.
    ParseSteps { limit: u64 },
    /// `symbols` symbols start on `line`.
    CrowdedLine {
        line: u32,
        symbols: usize,
        limit: usize,
    },
}

/// A spec resolved against its grammar: kind id → role.
struct KindTable {
    roles: Vec<Option<Role>>,
    comments: Vec<bool>,
    leading: Vec<bool>,
    refs: Vec<Option<refs::RefRole>>,
    /// Kinds that may open with a docstring: the field of their body
    /// (`Some(None)`: the node itself).
    doc_owners: Vec<Option<Option<&'static str>>>,
    doc_statement: Vec<bool>,
    doc_strings: Vec<bool>,
}

impl KindTable {
    /// `ERROR` nodes carry an id outside the grammar's kinds: they have no role.
    fn role(&self, id: u16) -> Option<Role> {
        self.roles.get(id as usize).copied().flatten()
    }

    fn is_comment(&self, id: u16) -> bool {
        self.comments.get(id as usize).copied().unwrap_or(false)
    }

    fn is_leading(&self, id: u16) -> bool {
        self.leading.get(id as usize).copied().unwrap_or(false)
    }

    /// Whether the language has docstrings at all.
    fn has_docstrings(&self) -> bool {
        self.doc_owners.iter().any(Option::is_some)
    }

    /// The docstring that opens `node`'s body, if `node` may have one.
    fn docstring<'t>(&self, node: Node<'t>) -> Option<Node<'t>> {
        let field = *self.doc_owners.get(node.kind_id() as usize)?.as_ref()?;
        let body = match field {
            Some(field) => node.child_by_field_name(field)?,
            None => node,
        };
        let mut cursor = body.walk();
        let first = body
            .named_children(&mut cursor)
            .find(|c| !self.is_comment(c.kind_id()))?;
        let flag = |v: &[bool], n: Node<'_>| v.get(n.kind_id() as usize).copied().unwrap_or(false);
        let only = (first.named_child_count() == 1)
            .then(|| first.named_child(0))
            .flatten()?;
        (flag(&self.doc_statement, first) && flag(&self.doc_strings, only)).then_some(first)
    }

    fn new(spec: &LanguageSpec, language: &tree_sitter::Language) -> KindTable {
        let n = language.node_kind_count();
        let mut table = KindTable {
            roles: vec![None; n],
            comments: vec![false; n],
            leading: vec![false; n],
            refs: vec![None; n],
            doc_owners: vec![None; n],
            doc_statement: vec![false; n],
            doc_strings: vec![false; n],
        };
        // A kind name may map to several ids (named and aliased variants).
        for id in 0..n as u16 {
            let Some(kind) = language.node_kind_for_id(id) else {
                continue;
            };
            if !language.node_kind_is_named(id) {
                continue;
            }
            if let Some((_, role)) = spec.roles.iter().find(|(k, _)| *k == kind) {
                table.roles[id as usize] = Some(*role);
            }
            if let Some((_, role)) = spec.graph.refs.iter().find(|(k, _)| *k == kind) {
                table.refs[id as usize] = Some(*role);
            }
            table.comments[id as usize] = spec.comment_kinds.contains(&kind);
            table.leading[id as usize] = spec.leading_kinds.contains(&kind);
            if let Some(docs) = &spec.docstrings {
                if let Some((_, field)) = docs.owners.iter().find(|(k, _)| *k == kind) {
                    table.doc_owners[id as usize] = Some(*field);
                }
                table.doc_statement[id as usize] = docs.statement == kind;
                table.doc_strings[id as usize] = docs.strings.contains(&kind);
            }
        }
        table
    }
}

/// Failure to set up a parser (a grammar/runtime version mismatch).
#[derive(Debug, thiserror::Error)]
#[error("cannot load the {language} grammar: {source}")]
pub struct GrammarError {
    language: &'static str,
    source: tree_sitter::LanguageError,
}

impl Extractor {
    pub fn new() -> Result<Extractor, GrammarError> {
        let mut parsers = Vec::new();
        let mut tables = Vec::new();
        for language in Language::all() {
            let spec = language.spec();
            let grammar = (spec.grammar)();
            let mut parser = Parser::new();
            parser
                .set_language(&grammar)
                .map_err(|source| GrammarError {
                    language: spec.name,
                    source,
                })?;
            tables.push(None);
            parsers.push(parser);
        }
        Ok(Extractor {
            parsers,
            tables,
            limits: Limits::default(),
            parse_time: std::time::Duration::ZERO,
            extract_time: std::time::Duration::ZERO,
        })
    }

    /// Time spent so far parsing, and extracting from the trees.
    pub fn times(&self) -> (std::time::Duration, std::time::Duration) {
        (self.parse_time, self.extract_time)
    }

    /// The same extractor with other per-file budgets.
    pub fn with_limits(mut self, limits: Limits) -> Extractor {
        self.limits = limits;
        self
    }

    /// Parses normalized source text and extracts its symbols.
    pub fn extract(&mut self, language: Language, source: &str) -> FileSymbols {
        self.extract_inner(language, source, None, Want::Symbols)
            .symbols
    }

    /// Like [`Extractor::extract`], but reparses incrementally from an earlier
    /// version of the file (its parse state and source text), and
    /// returns the tree for the next version. Same result as a full parse.
    pub fn extract_incremental(
        &mut self,
        language: Language,
        source: &str,
        base: Option<(&ParseState, &str)>,
    ) -> Extracted {
        let base = base.map(|(state, text)| (Base::Shared(state), text));
        self.extract_inner(language, source, base, Want::Symbols)
    }

    /// Like [`Extractor::extract_incremental`], with the file's code-graph
    /// facts (references and imports). Given the parse state of the same
    /// text, the tree is reused as it is.
    pub fn extract_facts(
        &mut self,
        language: Language,
        source: &str,
        base: Option<(&ParseState, &str)>,
    ) -> Extracted {
        let base = base.map(|(state, text)| (Base::Shared(state), text));
        self.extract_inner(language, source, base, Want::Facts)
    }

    /// Like [`Extractor::extract_incremental`] (with the facts if
    /// `facts`), from a [`Base`] borrowed or handed over.
    pub fn extract_from(
        &mut self,
        language: Language,
        source: &str,
        base: Option<(Base<'_>, &str)>,
        facts: bool,
    ) -> Extracted {
        let want = if facts { Want::Facts } else { Want::Symbols };
        self.extract_inner(language, source, base, want)
    }

    /// Like [`Extractor::extract`], with each symbol's normalized text (for
    /// inspection and search; the hot path keeps only hashes).
    pub fn extract_with_text(
        &mut self,
        language: Language,
        source: &str,
    ) -> (FileSymbols, Vec<String>) {
        let extracted = self.extract_inner(language, source, None, Want::Text);
        (extracted.symbols, extracted.texts)
    }

    /// The parts of `symbol`'s declaration in a parsed file (`state` from
    /// its extraction, `source` its text), if the declaration is found.
    pub fn declaration_parts(
        &mut self,
        language: Language,
        state: &ParseState,
        source: &str,
        symbol: &crate::symbol::Symbol,
    ) -> Option<parts::DeclarationParts> {
        let spec = language.spec();
        let table = self.tables[language.index()]
            .get_or_insert_with(|| KindTable::new(spec, &(spec.grammar)()));
        let reader = parts::PartsReader {
            spec,
            table,
            text: state.parse_text(source),
        };
        reader.parts(state.tree.root_node(), symbol)
    }

    fn extract_inner(
        &mut self,
        language: Language,
        source: &str,
        base: Option<(Base<'_>, &str)>,
        want: Want,
    ) -> Extracted {
        // "Parse" time includes preprocessing and the incremental edit.
        let started = std::time::Instant::now();
        let spec = language.spec();
        let pre = match spec.preprocess {
            Some(preprocess) => preprocess(source),
            None => preproc::Preprocessed {
                parse_text: std::borrow::Cow::Borrowed(source),
                hidden_tokens: Vec::new(),
            },
        };
        let parser = &mut self.parsers[language.index()];
        let parse_text = pre.parse_text.as_ref();
        // The edits from the earlier version's text to this one, its tree
        // with them applied (what the parser reuses) and its tokens.
        let mut line_changes = None;
        let reparse = base.map(|(base, old_source)| {
            let old_parse_text = base.state().parse_text(old_source);
            let lines = crate::git::hunks::diff_lines(old_parse_text, parse_text);
            let edits = edits_between(old_parse_text, parse_text, &lines);
            // Texts parsed as they are: these are the file's line changes,
            // which the labelling would otherwise compute again.
            let as_they_are = base.state().blanked.is_none()
                && matches!(pre.parse_text, std::borrow::Cow::Borrowed(_));
            if as_they_are {
                line_changes = Some(lines);
            }
            let (mut edited, walked, sketches) = match base {
                Base::Shared(state) => (
                    state.tree.clone(),
                    state.walked.as_ref().map(std::borrow::Cow::Borrowed),
                    std::borrow::Cow::Borrowed(&state.sketches),
                ),
                Base::Owned(state) => (
                    state.tree,
                    state.walked.map(std::borrow::Cow::Owned),
                    std::borrow::Cow::Owned(state.sketches),
                ),
            };
            for edit in &edits {
                edited.edit(edit);
            }
            (edits, edited, walked, sketches)
        });
        let limit = self.limits.parse_steps;
        let mut steps = 0u64;
        let mut over_budget = |_: &tree_sitter::ParseState| {
            steps += 1;
            steps > limit
        };
        let bytes = parse_text.as_bytes();
        let parsed = parser.parse_with_options(
            &mut |offset, _| bytes.get(offset..).unwrap_or_default(),
            reparse.as_ref().map(|(_, edited, _, _)| edited),
            Some(tree_sitter::ParseOptions::new().progress_callback(&mut over_budget)),
        );
        let parsed_at = std::time::Instant::now();
        self.parse_time += parsed_at - started;
        let Some(tree) = parsed else {
            // Cancelled by the budget: the next parse must not resume this one.
            parser.reset();
            return Extracted::over_limit(OverLimit::ParseSteps { limit });
        };
        let table = self.tables[language.index()]
            .get_or_insert_with(|| KindTable::new(spec, &(spec.grammar)()));
        let earlier = reparse
            .as_ref()
            .map(|(edits, edited, walked, sketches)| Earlier {
                tokens: walked.as_deref().map(|walked| tokens::Earlier {
                    walked,
                    edits,
                    edited,
                }),
                sketches,
            });
        let (symbols, texts, facts, walked, sketches) =
            extract_from_tree(spec, table, &tree, source, &pre, want, earlier.as_ref());
        self.extract_time += parsed_at.elapsed();
        if let Some((line, count)) = most_crowded_line(&symbols.symbols) {
            if count > self.limits.symbols_per_line {
                return Extracted::over_limit(OverLimit::CrowdedLine {
                    line,
                    symbols: count,
                    limit: self.limits.symbols_per_line,
                });
            }
        }
        let state = ParseState {
            tree,
            walked,
            sketches,
            blanked: match pre.parse_text {
                std::borrow::Cow::Owned(text) => Some(text),
                std::borrow::Cow::Borrowed(_) => None,
            },
        };
        Extracted {
            symbols,
            texts,
            facts,
            state: Some(state),
            line_changes,
            over_limit: None,
        }
    }
}

/// The line where the most symbols start (the first such), and how many.
/// (Not assumed sorted: a Go method is listed under a type declared later.)
fn most_crowded_line(symbols: &[crate::symbol::Symbol]) -> Option<(u32, usize)> {
    let mut lines: Vec<u32> = symbols.iter().map(|s| s.start_line).collect();
    lines.sort_unstable();
    lines
        .chunk_by(|a, b| a == b)
        .map(|run| (run[0], run.len()))
        .max_by_key(|&(line, count)| (count, std::cmp::Reverse(line)))
}

/// What an extraction computes beyond the symbols.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    Symbols,
    Text,
    Facts,
}

/// What an extraction produced.
pub struct Extracted {
    pub symbols: FileSymbols,
    /// Normalized texts, only when asked for.
    pub texts: Vec<String>,
    /// Code-graph facts, only when asked for.
    pub facts: Option<crate::codegraph::FileFacts>,
    /// The tree and parsed text, to reparse the next version incrementally.
    pub state: Option<ParseState>,
    /// After an incremental reparse of a text parsed as it is (not
    /// preprocessed), the line changes from the base's text to this one.
    pub line_changes: Option<Vec<crate::git::hunks::LineChange>>,
    /// Set when the file exceeded a per-file budget: nothing else is.
    pub over_limit: Option<OverLimit>,
}

impl Extracted {
    fn over_limit(why: OverLimit) -> Extracted {
        Extracted {
            symbols: FileSymbols::default(),
            texts: Vec::new(),
            facts: None,
            state: None,
            line_changes: None,
            over_limit: Some(why),
        }
    }
}

/// The parse state a reparse starts from: borrowed (its tree is copied
/// before the edits) or handed over (edited in place, which spares the copy
/// of every node on each edit's path and of each node's children;
/// App-vNext/Polly: 2.3% of a backfill's CPU).
pub enum Base<'a> {
    Shared(&'a ParseState),
    Owned(ParseState),
}

impl Base<'_> {
    fn state(&self) -> &ParseState {
        match self {
            Base::Shared(state) => state,
            Base::Owned(state) => state,
        }
    }
}

/// A parsed file version kept for incremental reparsing.
pub struct ParseState {
    tree: Tree,
    /// Its tokens, for the next version's walk to copy from.
    walked: Option<tokens::LeafTokens>,
    /// The preprocessed text when it differs from the source.
    blanked: Option<String>,
    /// Its symbols' sketches, for the next version to share.
    sketches: Sketches,
}

/// What a reparse takes from the version it starts from: its tokens, where
/// the edits left them, and its sketches.
struct Earlier<'a> {
    tokens: Option<tokens::Earlier<'a>>,
    sketches: &'a Sketches,
}

/// A file version's text sketches, by the sequence of token hashes they
/// sketch (its blake3), sorted by it.
///
/// Why: a symbol a commit did not touch has the same tokens in the next
/// version, so the same sketch. Taking it from the version the next one is
/// reparsed from spares computing it, and every version of a backfill's
/// window (each held until it is labelled) shares one copy.
///
/// Not keyed by the content hash: that hashes the tokens' text joined by
/// spaces, and in a file with syntax errors one token may hold a space
/// where another version has two tokens (a fuzzed C# file did), so equal
/// texts can have different sketches.
#[derive(Debug, Clone, Default)]
struct Sketches(Vec<([u8; 32], crate::symbol::TextSketch)>);

impl Sketches {
    fn of(mut sketches: Vec<([u8; 32], crate::symbol::TextSketch)>) -> Sketches {
        sketches.sort_unstable_by_key(|(key, _)| *key);
        sketches.dedup_by(|a, b| a.0 == b.0);
        sketches.shrink_to_fit();
        Sketches(sketches)
    }

    /// The key of a sequence of token hashes (`bytes` is scratch room).
    fn key(token_hashes: &[u64], bytes: &mut Vec<u8>) -> [u8; 32] {
        bytes.clear();
        bytes.extend(token_hashes.iter().flat_map(|h| h.to_le_bytes()));
        *blake3::hash(bytes).as_bytes()
    }

    fn get(&self, key: &[u8; 32]) -> Option<&crate::symbol::TextSketch> {
        let at = self.0.binary_search_by(|(k, _)| k.cmp(key)).ok()?;
        Some(&self.0[at].1)
    }

    /// Approximate memory held beside the sketches themselves (which the
    /// version's symbols hold too).
    fn weight(&self) -> usize {
        self.0.capacity() * std::mem::size_of::<([u8; 32], crate::symbol::TextSketch)>()
    }
}

impl ParseState {
    fn parse_text<'a>(&'a self, source: &'a str) -> &'a str {
        self.blanked.as_deref().unwrap_or(source)
    }

    /// Approximate memory held for a source of `source_len` bytes.
    pub fn weight(&self, source_len: usize) -> usize {
        // A syntax tree takes about 18 times its text (the trees of the
        // latest version of each of App-vNext/Polly's 2,006 C# paths: 10.8
        // MB of text, 192 MB of trees).
        source_len * 18
            + self.blanked.as_ref().map_or(0, String::len)
            + self.walked.as_ref().map_or(0, tokens::LeafTokens::weight)
            + self.sketches.weight()
    }
}

/// The edits that turn `old` into `new`, one per changed run of lines
/// (`lines`, their line changes), last first (so each edit's offsets are
/// still those of `old`).
///
/// One edit spanning from the first change to the last would make the parser
/// rebuild everything between them: a commit that touches a file's `using`
/// lines and its last method reparses the whole file.
fn edits_between(
    old: &str,
    new: &str,
    lines: &[crate::git::hunks::LineChange],
) -> Vec<tree_sitter::InputEdit> {
    let line_starts = |text: &str| -> Vec<usize> {
        std::iter::once(0)
            .chain(text.match_indices('\n').map(|(at, _)| at + 1))
            .collect()
    };
    let (old_starts, new_starts) = (line_starts(old), line_starts(new));
    // The byte offset of a 0-based line start; past the last line, the end.
    let offset = |starts: &[usize], len: usize, line: u32| {
        starts.get(line as usize).copied().unwrap_or(len).min(len)
    };
    let point = |starts: &[usize], at: usize| {
        let row = starts
            .partition_point(|&start| start <= at)
            .saturating_sub(1);
        tree_sitter::Point {
            row,
            column: at - starts[row],
        }
    };
    let mut edits: Vec<tree_sitter::InputEdit> = lines
        .iter()
        .map(|hunk| {
            let start = offset(&old_starts, old.len(), hunk.old.start - 1);
            let old_end = offset(&old_starts, old.len(), hunk.old.end - 1);
            let new_start = offset(&new_starts, new.len(), hunk.new.start - 1);
            let new_end = offset(&new_starts, new.len(), hunk.new.end - 1);
            let start_position = point(&old_starts, start);
            let (from, to) = (point(&new_starts, new_start), point(&new_starts, new_end));
            tree_sitter::InputEdit {
                start_byte: start,
                old_end_byte: old_end,
                new_end_byte: start + (new_end - new_start),
                start_position,
                old_end_position: point(&old_starts, old_end),
                new_end_position: tree_sitter::Point {
                    row: start_position.row + (to.row - from.row),
                    column: if to.row == from.row {
                        start_position.column + (to.column - from.column)
                    } else {
                        to.column
                    },
                },
            }
        })
        .collect();
    edits.reverse();
    edits
}

fn extract_from_tree(
    spec: &'static LanguageSpec,
    table: &KindTable,
    tree: &Tree,
    source: &str,
    pre: &preproc::Preprocessed<'_>,
    want: Want,
    earlier: Option<&Earlier<'_>>,
) -> (
    FileSymbols,
    Vec<String>,
    Option<crate::codegraph::FileFacts>,
    Option<tokens::LeafTokens>,
    Sketches,
) {
    let parse_text = pre.parse_text.as_ref();
    let root = tree.root_node();
    let mut walker = Walker {
        spec,
        table,
        text: parse_text,
        raw: Vec::new(),
        too_deep: false,
        name_too_long: false,
    };
    walker.walk(root);
    let walked = tokens::walk(
        table,
        tree,
        parse_text,
        earlier.and_then(|e| e.tokens.as_ref()),
    );
    let kept = walked.keep();
    let comments = walked.comments;
    let mut tokens = walked.tokens;
    if !pre.hidden_tokens.is_empty() {
        tokens.extend(pre.hidden_tokens.iter().cloned());
        tokens.sort_by_key(|r| r.start);
    }
    let texts = if want == Want::Text {
        walker
            .raw
            .iter()
            .map(|r| {
                normalized_text(&tokens, source, &r.bytes, &r.excluded)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    } else {
        Vec::new()
    };
    let found = (want == Want::Facts).then(|| {
        let mut refs = refs::RefWalker {
            spec: &spec.graph,
            roles: &table.refs,
            text: parse_text,
            refs: Vec::new(),
            imports: Vec::new(),
            typing_depth: std::cell::Cell::new(0),
            attributes: Default::default(),
            blocks: Default::default(),
            decorator: None,
            ancestors: Default::default(),
            returned_on: Default::default(),
            made_at: Default::default(),
        };
        refs.walk(tree);
        let ranges: Vec<Range<usize>> = walker.raw.iter().map(|r| r.bytes.clone()).collect();
        let lines: Vec<(u32, u32)> = walker
            .raw
            .iter()
            .map(|r| (r.start_line, r.end_line))
            .collect();
        let mut imports = refs.imports;
        refs::assign_import_owners(&mut imports, &lines);
        let nested = nested_functions(&spec.graph, root, parse_text, &ranges);
        // Symbols and nested functions, in the order they start: a
        // reference belongs to the innermost that holds it.
        let mut owners: Vec<(Range<usize>, u32)> = ranges
            .iter()
            .cloned()
            .zip(0..)
            .chain(
                nested
                    .iter()
                    .zip(ranges.len() as u32..)
                    .map(|(n, i)| (n.bytes.clone(), i)),
            )
            .collect();
        owners.sort_by_key(|(r, _)| (r.start, std::cmp::Reverse(r.end)));
        (
            refs::assign_owners(refs.refs, &owners),
            imports,
            nested,
            owners,
        )
    });
    let marks: Vec<(u8, bool, bool, bool)> = walker
        .raw
        .iter()
        .map(|r| (r.arity, r.extension, r.bodiless, r.made_only_here))
        .collect();
    let words = if want == Want::Facts {
        let spans: Vec<words::Span> = walker
            .raw
            .iter()
            .map(|r| words::Span {
                bytes: r.bytes.clone(),
            })
            .collect();
        words::of_symbols(&spans, &tokens, &comments, parse_text)
    } else {
        Vec::new()
    };
    let (symbols, sketches) = finish(walker.raw, &tokens, source, earlier.map(|e| e.sketches));
    let symbols = FileSymbols {
        symbols,
        has_parse_errors: root.has_error(),
        too_deep: walker.too_deep,
        name_too_long: walker.name_too_long,
    };
    let facts = found.map(|(refs, imports, nested, owners)| {
        let mut defs = crate::codegraph::facts::Def::of_symbols(&symbols);
        for (def, (arity, extension, bodiless, made_only_here)) in defs.iter_mut().zip(marks) {
            def.arity = arity;
            def.extension = extension;
            def.bodiless = bodiless;
            def.made_only_here = made_only_here;
        }
        for (def, words) in defs.iter_mut().zip(words) {
            def.words = words;
        }
        add_nested_functions(&mut defs, nested, &owners);
        let mut facts = crate::codegraph::FileFacts {
            defs,
            imports,
            refs,
        };
        add_module_node(&mut facts, source);
        facts
    });
    (symbols, texts, facts, kept, sketches)
}

/// A function declared in a function's body: no symbol (DESIGN.md §2), yet
/// a node of the graph, so that its calls and the calls of it have ends.
struct NestedFunction {
    name: String,
    bytes: Range<usize>,
    lines: (u32, u32),
}

/// The functions declared inside functions that are no symbols, and the
/// anonymous ones anywhere, in the order they start (the language's flow
/// table names the function kinds).
fn nested_functions(
    graph: &refs::GraphSpec,
    root: Node<'_>,
    text: &str,
    symbols: &[Range<usize>],
) -> Vec<NestedFunction> {
    let Some(flow) = graph.flow.as_ref() else {
        return Vec::new();
    };
    let Some(&function) = flow.functions.first() else {
        return Vec::new();
    };
    let Some((_, name_field)) = flow.definitions.iter().find(|(k, _)| *k == function) else {
        return Vec::new();
    };
    let is_symbol = |n: Node<'_>| {
        let own = n.byte_range();
        let wrapped = n.parent().map(|p| p.byte_range());
        symbols
            .iter()
            .any(|s| *s == own || Some(s) == wrapped.as_ref())
    };
    let mut out = Vec::new();
    let mut found = |name: String, node: Node<'_>| {
        out.push(NestedFunction {
            name,
            bytes: node.byte_range(),
            lines: (
                node.start_position().row as u32 + 1,
                node.end_position().row as u32 + 1,
            ),
        })
    };
    // (node, inside a function's body)
    let mut stack = vec![(root, false)];
    while let Some((node, inside)) = stack.pop() {
        let is_function = node.kind() == function;
        if is_function && inside && !is_symbol(node) {
            if let Some(name) = node.child_by_field_name(name_field) {
                found(text[name.byte_range()].trim().to_owned(), node);
            }
        }
        // A function without a name is a node wherever it stands.
        let anonymous = node.is_named() && flow.anonymous_functions.contains(&node.kind());
        if anonymous {
            found(values::anonymous_name(node), node);
        }
        let is_function = is_function || anonymous;
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        for child in children.into_iter().rev() {
            stack.push((child, inside || is_function));
        }
    }
    out.sort_by_key(|n| n.bytes.start);
    out
}

/// Appends the nested functions as graph-only declarations (no content
/// hash: see [`crate::codegraph::facts::Def::graph_only`]), each under the
/// innermost declaration that holds it, named after it (`outer.inner`).
fn add_nested_functions(
    defs: &mut Vec<crate::codegraph::facts::Def>,
    nested: Vec<NestedFunction>,
    owners: &[(Range<usize>, u32)],
) {
    let first = defs.len() as u32;
    let mut taken: std::collections::HashSet<String> =
        defs.iter().map(|d| d.qualname.clone()).collect();
    for (k, n) in nested.into_iter().enumerate() {
        let index = first + k as u32;
        let before = owners.partition_point(|(r, _)| r.start <= n.bytes.start);
        let parent = owners[..before]
            .iter()
            .rev()
            .find(|(r, i)| *i != index && r.start <= n.bytes.start && n.bytes.end <= r.end)
            .map(|(_, i)| *i);
        let named = match parent.and_then(|p| defs.get(p as usize)) {
            Some(p) => format!("{}.{}", p.qualname, n.name),
            None => n.name.clone(),
        };
        // Declared twice in one body (`if`/`else`): twins, as symbols are.
        let mut qualname = named.clone();
        let mut count = 1;
        while taken.contains(&qualname) {
            count += 1;
            qualname = crate::symbol::twin(&named, count);
        }
        taken.insert(qualname.clone());
        defs.push(crate::codegraph::facts::Def {
            qualname,
            name: n.name,
            kind: SymbolKind::Function,
            sig: String::new(),
            parent,
            lines: n.lines,
            content_hash: String::new(),
            arity: 0,
            extension: false,
            bodiless: false,
            made_only_here: false,
            words: String::new(),
        });
    }
}

/// Gives the calls outside any declaration (top-level statements, decorators,
/// initializers) a caller: the file's module node, appended after the
/// declarations so their positions stay those of the symbols.
fn add_module_node(facts: &mut crate::codegraph::FileFacts, source: &str) {
    use crate::codegraph::facts::{Def, RefKind};
    let calls = |r: &crate::codegraph::Reference| {
        r.owner.is_none() && matches!(r.kind, RefKind::Call | RefKind::New | RefKind::Macro)
    };
    if !facts.refs.iter().any(calls) {
        return;
    }
    let module = facts.defs.len() as u32;
    for r in facts.refs.iter_mut().filter(|r| calls(r)) {
        r.owner = Some(module);
    }
    let lines = source.lines().count().max(1) as u32;
    facts.defs.push(Def {
        qualname: crate::codegraph::MODULE_QUALNAME.to_owned(),
        name: crate::codegraph::MODULE_QUALNAME.to_owned(),
        kind: SymbolKind::Module,
        sig: String::new(),
        parent: None,
        lines: (1, lines),
        content_hash: String::new(),
        arity: 0,
        extension: false,
        bodiless: false,
        made_only_here: false,
        words: String::new(),
    });
}

/// A symbol as the walker finds it, before keys are made unique and text hashed.
struct RawSymbol {
    kind: SymbolKind,
    name: String,
    qualname: String,
    sig: String,
    parent: Option<usize>,
    /// Looked up after the walk: the type an `impl` names, if in this file.
    parent_by_name: Option<String>,
    bytes: Range<usize>,
    excluded: Vec<Range<usize>>,
    start_line: u32,
    end_line: u32,
    /// How many type parameters it declares (`Foo<T>`: 1).
    arity: u8,
    /// A C# extension method (`this T x` first).
    extension: bool,
    /// A method or function declared without a body.
    bodiless: bool,
    /// A type only the repository's code can make (the table's `made_here`).
    made_only_here: bool,
}

#[derive(Clone, Default)]
struct Scope {
    prefix: String,
    parent: Option<usize>,
    /// How many symbols and scopes enclose the members of this scope.
    depth: u32,
    in_type: bool,
    member_sig: Option<String>,
    parent_by_name: Option<String>,
}

/// A container being walked: its named children and the scope they are in.
struct Frame<'t> {
    children: Vec<Node<'t>>,
    next: usize,
    scope: Rc<Scope>,
}

impl<'t> Frame<'t> {
    fn new(container: Node<'t>, scope: Rc<Scope>) -> Frame<'t> {
        let mut cursor = container.walk();
        let children = container.named_children(&mut cursor).collect();
        Frame {
            children,
            next: 0,
            scope,
        }
    }
}

struct Walker<'a> {
    spec: &'static LanguageSpec,
    table: &'a KindTable,
    text: &'a str,
    raw: Vec<RawSymbol>,
    /// Symbols were left out for nesting deeper than [`MAX_NESTING`].
    too_deep: bool,
    /// Symbols were left out for names a note cannot hold.
    name_too_long: bool,
}

impl<'a> Walker<'a> {
    fn role(&self, node: Node<'_>) -> Option<Role> {
        self.table.role(node.kind_id())
    }

    fn is_comment(&self, node: Node<'_>) -> bool {
        self.table.is_comment(node.kind_id())
    }

    fn text(&self, node: Node<'_>) -> &'a str {
        &self.text[node.byte_range()]
    }

    fn join(&self, prefix: &str, name: &str) -> String {
        if prefix.is_empty() {
            name.to_owned()
        } else {
            format!("{prefix}{}{name}", self.spec.separator)
        }
    }

    /// Walks the tree from `root` with an explicit stack, so that no input,
    /// however deeply it nests, can exhaust the thread's stack.
    fn walk<'t>(&mut self, root: Node<'t>) {
        let mut stack = vec![Frame::new(root, Rc::new(Scope::default()))];
        while let Some(frame) = stack.last_mut() {
            let Some(&child) = frame.children.get(frame.next) else {
                stack.pop();
                continue;
            };
            let i = frame.next;
            frame.next += 1;
            let scope = Rc::clone(&frame.scope);
            match self.role(child) {
                None => {}
                Some(Role::Transparent) => stack.push(Frame::new(child, scope)),
                Some(Role::Symbol(rule)) => {
                    if let Some((_, Some(body))) = self.symbol(child, &rule, &scope, None, None) {
                        stack.push(body);
                    }
                }
                Some(Role::Names { kind, field }) => self.names(child, kind, field, &scope),
                Some(Role::Package(name)) => {
                    let Some(name) = self.name(child, name) else {
                        continue;
                    };
                    // The rest of this container is in the package.
                    let frame = stack.last_mut().expect("the frame being walked");
                    frame.scope = Rc::new(Scope {
                        prefix: self.join(&scope.prefix, &name),
                        ..(*scope).clone()
                    });
                }
                Some(Role::Wrapper { inner }) => {
                    let Some(declaration) = inner.iter().find_map(|f| child.child_by_field_name(f))
                    else {
                        continue;
                    };
                    match self.role(declaration) {
                        Some(Role::Symbol(rule)) => {
                            let found = self.symbol(declaration, &rule, &scope, Some(child), None);
                            if let Some((_, Some(body))) = found {
                                stack.push(body);
                            }
                        }
                        Some(Role::Declarators(rule)) => {
                            self.declarators(declaration, child, &rule, &scope)
                        }
                        _ => {}
                    }
                }
                Some(Role::Declarators(rule)) => self.declarators(child, child, &rule, &scope),
                Some(Role::Scope {
                    name,
                    body,
                    member_sig,
                }) => {
                    let (Some(name), Some(body)) =
                        (self.name(child, name), child.child_by_field_name(body))
                    else {
                        continue;
                    };
                    let qualname = self.join(&scope.prefix, &name);
                    if !self.within_limits(&scope, &qualname, "") {
                        continue;
                    }
                    let inner = Scope {
                        prefix: qualname.clone(),
                        parent: scope.parent,
                        depth: scope.depth + 1,
                        in_type: true,
                        member_sig: member_sig.and_then(|n| self.name(child, n)),
                        parent_by_name: Some(qualname),
                    };
                    stack.push(Frame::new(body, Rc::new(inner)));
                }
                Some(Role::FileScoped(rule)) => {
                    let last = frame.children[i + 1..]
                        .iter()
                        .rev()
                        .find(|n| !self.is_comment(**n))
                        .copied()
                        .unwrap_or(child);
                    let found = self.symbol(child, &rule, &scope, None, Some(last));
                    if let Some((index, body)) = found {
                        // The rest of this container belongs to the symbol.
                        let frame = stack.last_mut().expect("the frame being walked");
                        frame.scope = Rc::new(Scope {
                            prefix: self.raw[index].qualname.clone(),
                            parent: Some(index),
                            depth: scope.depth + 1,
                            ..Scope::default()
                        });
                        stack.extend(body);
                    }
                }
            }
        }
    }

    /// False, and noted, when a symbol at `scope` named `qualname` would nest
    /// deeper than [`MAX_NESTING`] or have a name a note cannot hold.
    fn within_limits(&mut self, scope: &Scope, qualname: &str, sig: &str) -> bool {
        if scope.depth >= MAX_NESTING {
            self.too_deep = true;
            false
        } else if qualname.len() > MAX_EXTRACTED_NAME_BYTES || sig.len() > MAX_EXTRACTED_NAME_BYTES
        {
            self.name_too_long = true;
            false
        } else {
            true
        }
    }

    /// Pushes the symbol for `node` and returns its index and the frame that
    /// walks its body; a `wrapper` is its extent instead, and `last` extends
    /// its range. A symbol past the limits is left out: its text stays part
    /// of its enclosing symbol.
    fn symbol<'t>(
        &mut self,
        node: Node<'t>,
        rule: &SymbolRule,
        scope: &Scope,
        wrapper: Option<Node<'t>>,
        last: Option<Node<'t>>,
    ) -> Option<(usize, Option<Frame<'t>>)> {
        let body = rule.body.and_then(|f| node.child_by_field_name(f));
        if rule.requires_body && body.is_none() {
            return None;
        }
        let name = self.name(node, rule.name)?;
        let kind = match rule.member_kind {
            Some(member) if scope.in_type => member,
            _ => rule.kind,
        };
        let kind = kind_of(node, kind, rule.kind_by);
        // A symbol of a type declared elsewhere hangs under that type.
        let owned;
        let scope = match rule.owner.and_then(|owner| self.name(node, owner)) {
            Some(owner) => {
                let prefix = self.join(&scope.prefix, &owner);
                owned = Scope {
                    prefix: prefix.clone(),
                    parent_by_name: Some(prefix),
                    ..scope.clone()
                };
                &owned
            }
            None => scope,
        };
        let sig = match (rule.sig, &scope.member_sig) {
            (Sig::ParameterTypes(field), _) => self.parameter_types(node, field),
            (Sig::EnclosingParameterTypes(field), _) => {
                let mut owner = node.parent();
                while let Some(o) = owner.filter(|o| o.child_by_field_name(field).is_none()) {
                    owner = o.parent();
                }
                owner.map_or_else(String::new, |o| self.parameter_types(o, field))
            }
            (Sig::Fixed(text), _) => text.to_owned(),
            (Sig::Keyword(words), _) => {
                let mut cursor = node.walk();
                let word = node
                    .children(&mut cursor)
                    .filter(|c| !c.is_named())
                    .map(|c| self.text(c))
                    .find(|t| words.contains(t));
                word.unwrap_or_default().to_owned()
            }
            (Sig::None, Some(member_sig)) if kind == SymbolKind::Method => member_sig.clone(),
            (Sig::None, _) => String::new(),
        };
        let qualname = self.join(&scope.prefix, &name);
        if !self.within_limits(scope, &qualname, &sig) {
            return None;
        }
        let extent = wrapper.unwrap_or(node);
        let start = self.leading_start(extent);
        let end = last.unwrap_or(extent);
        let index = self.raw.len();
        self.raw.push(RawSymbol {
            kind,
            qualname,
            name,
            sig,
            parent: scope.parent,
            parent_by_name: scope.parent_by_name.clone(),
            bytes: start.start_byte()..end.end_byte(),
            excluded: Vec::new(),
            start_line: start.start_position().row as u32 + 1,
            end_line: end_line(end),
            arity: self.arity(node),
            extension: self.is_extension(node),
            bodiless: matches!(kind, SymbolKind::Method | SymbolKind::Function)
                && !self.has_body(node),
            made_only_here: self.made_only_here(node),
        });
        let body = body.map(|body| {
            let inner = Scope {
                prefix: self.raw[index].qualname.clone(),
                parent: Some(index),
                depth: scope.depth + 1,
                in_type: rule.type_body,
                member_sig: None,
                parent_by_name: None,
            };
            Frame::new(body, Rc::new(inner))
        });
        Some((index, body))
    }

    /// One symbol per declarator of `node`; `extent` (the node, or the
    /// wrapper around it) is the text, less the other declarators.
    fn declarators(
        &mut self,
        node: Node<'_>,
        extent: Node<'_>,
        rule: &DeclaratorRule,
        scope: &Scope,
    ) {
        let DeclaratorRule {
            kind,
            list,
            declarator,
            kind_by,
        } = *rule;
        let mut cursor = node.walk();
        let list = match list {
            Some(list) => node.named_children(&mut cursor).find(|n| n.kind() == list),
            None => Some(node),
        };
        let Some(list) = list else {
            return;
        };
        let mut cursor = list.walk();
        let parts: Vec<Node<'_>> = list.children(&mut cursor).collect();
        let declarators: Vec<Node<'_>> = parts
            .iter()
            .copied()
            .filter(|n| n.kind() == declarator)
            .collect();
        // Separators between declarators belong to none of them.
        let commas: Vec<Range<usize>> = parts
            .iter()
            .filter(|n| !n.is_named() && self.text(**n) == ",")
            .map(|n| n.byte_range())
            .collect();
        for own in &declarators {
            let Some(name) = self.name(*own, Name::Field("name")) else {
                continue;
            };
            let qualname = self.join(&scope.prefix, &name);
            if !self.within_limits(scope, &qualname, "") {
                continue;
            }
            let mut excluded: Vec<Range<usize>> = declarators
                .iter()
                .filter(|d| d.id() != own.id())
                .map(|d| d.byte_range())
                .collect();
            excluded.extend(commas.iter().cloned());
            let kind = kind_of(*own, kind, kind_by);
            self.push_declared(kind, name, qualname, scope, extent, excluded);
        }
    }

    /// One symbol per name in `field`, each with the whole node as its text.
    fn names(&mut self, node: Node<'_>, kind: SymbolKind, field: &str, scope: &Scope) {
        let mut cursor = node.walk();
        let names: Vec<String> = node
            .children_by_field_name(field, &mut cursor)
            .filter(|n| n.is_named())
            .map(|n| strip_ws(self.text(n)))
            .filter(|n| !n.is_empty())
            .collect();
        for name in names {
            let qualname = self.join(&scope.prefix, &name);
            if !self.within_limits(scope, &qualname, "") {
                continue;
            }
            self.push_declared(kind, name, qualname, scope, node, Vec::new());
        }
    }

    /// A symbol that one of several names of `extent` declares (a
    /// declarator, a spec name): no sig, its text `extent` less `excluded`.
    fn push_declared(
        &mut self,
        kind: SymbolKind,
        name: String,
        qualname: String,
        scope: &Scope,
        extent: Node<'_>,
        excluded: Vec<Range<usize>>,
    ) {
        self.raw.push(RawSymbol {
            kind,
            qualname,
            name,
            sig: String::new(),
            parent: scope.parent,
            parent_by_name: scope.parent_by_name.clone(),
            bytes: extent.byte_range(),
            excluded,
            start_line: extent.start_position().row as u32 + 1,
            end_line: end_line(extent),
            arity: 0,
            extension: false,
            bodiless: false,
            made_only_here: false,
        });
    }

    /// How many type parameters a declaration has (by the table's kinds of
    /// type-parameter lists, as a field or a child).
    fn arity(&self, node: Node<'_>) -> u8 {
        let lists = self.spec.graph.type_parameters;
        let list = lists
            .iter()
            .find_map(|f| node.child_by_field_name(f))
            .or_else(|| {
                let mut cursor = node.walk();
                let found = node
                    .named_children(&mut cursor)
                    .find(|c| lists.contains(&c.kind()));
                found
            });
        list.map_or(0, |l| l.named_child_count().min(u8::MAX as usize) as u8)
    }

    /// Whether a declaration has a child the table's parts call its body,
    /// as change types read it (an interface's method, an abstract one, a
    /// TypeScript overload's signature have none).
    fn has_body(&self, node: Node<'_>) -> bool {
        let mut cursor = node.walk();
        if !cursor.goto_first_child() {
            return false;
        }
        loop {
            let (child, field) = (cursor.node(), cursor.field_name());
            if parts::child_part(self.spec, node.kind(), field, child) == parts::Part::Body {
                return true;
            }
            if !cursor.goto_next_sibling() {
                return false;
            }
        }
    }

    /// Whether the declaration is of a type only the repository's code can
    /// make, by the table's `made_here`: none of its modifiers opens it, it
    /// is no member of a body that opens its members, and no annotation
    /// but the inert ones is written on it or on a member of it.
    fn made_only_here(&self, node: Node<'_>) -> bool {
        let Some(rule) = self.spec.graph.scope.made_here else {
            return false;
        };
        if !rule.kinds.contains(&node.kind())
            || node
                .parent()
                .is_some_and(|p| rule.open_bodies.contains(&p.kind()))
        {
            return false;
        }
        fn modifiers<'t>(decl: Node<'t>, kind: &str) -> Option<Node<'t>> {
            let mut cursor = decl.walk();
            let found = decl.children(&mut cursor).find(|c| c.kind() == kind);
            found
        }
        let annotated = |decl: Node<'_>| {
            let Some(list) = modifiers(decl, rule.modifiers) else {
                return false;
            };
            let mut cursor = list.walk();
            let found = list.named_children(&mut cursor).any(|a| {
                if !rule.annotations.contains(&a.kind()) {
                    return false;
                }
                let name = a.child_by_field_name("name").map_or("", |n| self.text(n));
                let last = name.rsplit('.').next().unwrap_or(name).trim();
                !rule.inert_annotations.contains(&last)
            });
            found
        };
        if let Some(list) = modifiers(node, rule.modifiers) {
            let mut cursor = list.walk();
            let open = list
                .children(&mut cursor)
                .any(|w| !w.is_named() && rule.open_words.contains(&self.text(w)));
            if open {
                return false;
            }
        }
        if annotated(node) {
            return false;
        }
        let Some(body) = node.child_by_field_name("body") else {
            return true;
        };
        let mut cursor = body.walk();
        let members_annotated = body.named_children(&mut cursor).any(annotated);
        !members_annotated
    }

    /// Whether the first parameter carries the table's extension word (C#
    /// `this`): the method then extends that parameter's type.
    fn is_extension(&self, node: Node<'_>) -> bool {
        let Some(word) = self.spec.graph.extension_word else {
            return false;
        };
        let lists = self.spec.graph.parameter_lists;
        let mut cursor = node.walk();
        let list = node
            .named_children(&mut cursor)
            .find(|c| lists.contains(&c.kind()));
        let Some(first) = list.and_then(|l| l.named_child(0)) else {
            return false;
        };
        let mut cursor = first.walk();
        let marked = first.children(&mut cursor).any(|c| self.text(c) == word);
        marked
    }

    /// The first of the leading siblings (attributes) directly above `node`.
    fn leading_start<'t>(&self, node: Node<'t>) -> Node<'t> {
        // Finding a previous sibling scans the parent's children from the
        // first: for a language without leading kinds (C#'s attributes are
        // inside the declaration) that is a quadratic walk for nothing.
        if self.spec.leading_kinds.is_empty() {
            return node;
        }
        let mut start = node;
        let mut prev = node.prev_named_sibling();
        while let Some(p) = prev {
            if self.table.is_leading(p.kind_id()) {
                start = p;
            } else if !self.is_comment(p) {
                break;
            }
            prev = p.prev_named_sibling();
        }
        start
    }

    fn name(&self, node: Node<'_>, rule: Name) -> Option<String> {
        let field = |f: &str| node.child_by_field_name(f);
        let name = match rule {
            Name::Field(f) => strip_ws(self.text(field(f)?)),
            Name::Prefixed(prefix, f) => format!("{prefix}{}", strip_ws(self.text(field(f)?))),
            Name::Operator => format!("operator {}", self.text(field("operator")?)),
            Name::ConversionOperator => {
                let mut cursor = node.walk();
                let direction = node
                    .children(&mut cursor)
                    .find(|c| matches!(c.kind(), "implicit" | "explicit"))?;
                format!(
                    "{} operator {}",
                    direction.kind(),
                    self.text(field("type")?).trim()
                )
            }
            Name::Fixed(name) => name.to_owned(),
            Name::SelfType(f) => self.self_type(field(f)?),
            Name::Unquoted(f) => {
                let text = strip_ws(self.text(field(f)?));
                text.trim_matches(|c| c == '"' || c == '\'' || c == '`')
                    .to_owned()
            }
            Name::FieldOr(f, fallback) => match field(f) {
                Some(n) => strip_ws(self.text(n)),
                None => fallback.to_owned(),
            },
            Name::BaseType(f) => {
                let mut ty = field(f)?;
                while ty.named_child_count() > 0 {
                    ty = ty
                        .child_by_field_name("type")
                        .or_else(|| ty.named_child(0))?;
                }
                strip_ws(self.text(ty))
            }
            Name::ChildOfKind(kinds) => {
                let mut cursor = node.walk();
                let child = node
                    .named_children(&mut cursor)
                    .find(|c| kinds.contains(&c.kind()))?;
                strip_ws(self.text(child))
            }
            Name::PathWithoutGenerics(f) => {
                let path = field(f)?;
                let path = match path.kind() {
                    "generic_type" => path.child_by_field_name("type").unwrap_or(path),
                    _ => path,
                };
                strip_ws(self.text(path))
            }
        };
        (!name.is_empty()).then_some(name)
    }

    /// The type an `impl` is for, without generics, references or paths
    /// (a loop: a type may wrap others arbitrarily deep).
    fn self_type(&self, mut ty: Node<'_>) -> String {
        loop {
            let inner = match ty.kind() {
                "generic_type" | "reference_type" => ty.child_by_field_name("type"),
                "scoped_type_identifier" => {
                    return strip_ws(self.text(ty.child_by_field_name("name").unwrap_or(ty)))
                }
                "dynamic_type" => ty.child_by_field_name("trait"),
                "bounded_type" => ty.named_child(0),
                _ => None,
            };
            match inner {
                Some(inner) => ty = inner,
                None => return strip_ws(self.text(ty)),
            }
        }
    }

    fn parameter_types(&self, node: Node<'_>, field: &str) -> String {
        let Some(list) = node.child_by_field_name(field) else {
            return String::new();
        };
        // Parameters are the table's parameter kinds, except that the C#
        // grammar puts a `params T[] xs` parameter's type directly on the list.
        let mut types: Vec<String> = Vec::new();
        let mut cursor = list.walk();
        if cursor.goto_first_child() {
            loop {
                let child = cursor.node();
                let param = self
                    .spec
                    .parameters
                    .iter()
                    .find(|(k, _)| *k == child.kind());
                if let Some((_, param)) = param {
                    match param {
                        Param::Field(f) => {
                            let ty = child.child_by_field_name(f);
                            types.push(ty.map(|t| strip_ws(self.text(t))).unwrap_or_default());
                        }
                        Param::TextWithout(kinds) => {
                            let mut inner = child.walk();
                            let text: String = child
                                .children(&mut inner)
                                .filter(|c| !kinds.contains(&c.kind()))
                                .map(|c| strip_ws(self.text(c)))
                                .collect();
                            types.push(text);
                        }
                        Param::Skip => {}
                    }
                } else if cursor.field_name() == Some("type") {
                    types.push(strip_ws(self.text(child)));
                }
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
        format!("({})", types.join(","))
    }
}

/// How a node declares several symbols, one per declarator.
#[derive(Debug, Clone, Copy)]
pub struct DeclaratorRule {
    pub kind: SymbolKind,
    /// The child holding the declarators (`None`: the node itself).
    pub list: Option<&'static str>,
    /// The declarators' kind.
    pub declarator: &'static str,
    /// Each declarator's kind by the kind of the node in this field
    /// (TypeScript's `const f = () => {}` is a function).
    pub kind_by: Option<KindBy>,
}

/// `kind`, unless `kind_by` picks another by the node in its field.
fn kind_of(node: Node<'_>, kind: SymbolKind, kind_by: Option<KindBy>) -> SymbolKind {
    kind_by
        .and_then(|(field, kinds)| {
            let by = node.child_by_field_name(field)?;
            kinds
                .iter()
                .find(|(k, _)| *k == by.kind())
                .map(|(_, kind)| *kind)
        })
        .unwrap_or(kind)
}

fn strip_ws(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// 1-based last line of a node (a node ending at column 0 ends on the line before).
fn end_line(node: Node<'_>) -> u32 {
    let end = node.end_position();
    let row = if end.column == 0 && end.row > node.start_position().row {
        end.row - 1
    } else {
        end.row
    };
    row as u32 + 1
}

/// Makes keys unique (`#2`, `#3` in source order), resolves impl parents and
/// hashes each symbol's normalized text; a text the earlier version had
/// takes that version's sketch.
fn finish(
    raw: Vec<RawSymbol>,
    tokens: &[Range<usize>],
    source: &str,
    earlier: Option<&Sketches>,
) -> (Vec<Symbol>, Sketches) {
    let mut seen: HashMap<(String, SymbolKind, String), u32> = HashMap::new();
    let mut first_of_qualname: HashMap<String, usize> = HashMap::new();
    let mut symbols = Vec::with_capacity(raw.len());
    let mut sketches = Vec::with_capacity(raw.len());
    let token_hashes: Vec<u64> = tokens
        .iter()
        .map(|t| crate::symbol::token_hash(&source[t.clone()]))
        .collect();
    let (mut own_hashes, mut scratch, mut text) = (Vec::new(), Vec::new(), Vec::new());
    for (index, r) in raw.iter().enumerate() {
        let n = seen
            .entry((r.qualname.clone(), r.kind, r.sig.clone()))
            .or_insert(0);
        *n += 1;
        let qualname = crate::symbol::twin(&r.qualname, *n);
        if is_type_like(r.kind) {
            first_of_qualname.entry(r.qualname.clone()).or_insert(index);
        }
        own_hashes.clear();
        own_hashes.extend(own_tokens(tokens, &r.bytes, &r.excluded).map(|i| token_hashes[i]));
        let key = Sketches::key(&own_hashes, &mut text);
        let sketch = match earlier.and_then(|e| e.get(&key)) {
            Some(sketch) => sketch.clone(),
            None => crate::symbol::TextSketch::of_tokens(&own_hashes, &mut scratch),
        };
        sketches.push((key, sketch.clone()));
        symbols.push(Symbol {
            kind: r.kind,
            name: r.name.clone(),
            qualname,
            sig: r.sig.clone(),
            parent: r.parent,
            start_line: r.start_line,
            end_line: r.end_line,
            content_hash: hash_text(tokens, source, &r.bytes, &r.excluded, &mut text),
            sketch,
        });
    }
    for (symbol, r) in symbols.iter_mut().zip(&raw) {
        if let Some(owner) = r.parent_by_name.as_ref() {
            if let Some(&index) = first_of_qualname.get(owner) {
                symbol.parent = Some(index);
            }
        }
    }
    (symbols, Sketches::of(sketches))
}

fn is_type_like(kind: SymbolKind) -> bool {
    matches!(
        kind,
        SymbolKind::Struct
            | SymbolKind::Enum
            | SymbolKind::Union
            | SymbolKind::Trait
            | SymbolKind::Type
            | SymbolKind::Class
            | SymbolKind::Interface
            | SymbolKind::Record
            | SymbolKind::Annotation
    )
}

/// The positions (in `tokens`) of a symbol's own tokens: those within its
/// bytes and outside what it excludes. Its text, hash and sketch all read these.
fn own_tokens<'a>(
    tokens: &'a [Range<usize>],
    bytes: &Range<usize>,
    excluded: &'a [Range<usize>],
) -> impl Iterator<Item = usize> + 'a {
    let first = tokens.partition_point(|t| t.start < bytes.start);
    let last = tokens.partition_point(|t| t.start < bytes.end);
    (first..last).filter(move |&i| !excluded.iter().any(|x| x.contains(&tokens[i].start)))
}

/// The normalized text of a symbol: its tokens joined by single spaces.
fn normalized_text<'a>(
    tokens: &'a [Range<usize>],
    source: &'a str,
    bytes: &Range<usize>,
    excluded: &'a [Range<usize>],
) -> impl Iterator<Item = &'a str> + 'a {
    own_tokens(tokens, bytes, excluded).map(move |i| &source[tokens[i].clone()])
}

/// The blake3 of a symbol's normalized text, joined in `text` first: one
/// hash of the whole text costs a fraction of two updates per token.
fn hash_text(
    tokens: &[Range<usize>],
    source: &str,
    bytes: &Range<usize>,
    excluded: &[Range<usize>],
    text: &mut Vec<u8>,
) -> ContentHash {
    text.clear();
    for (i, token) in normalized_text(tokens, source, bytes, excluded).enumerate() {
        if i > 0 {
            text.push(b' ');
        }
        text.extend_from_slice(token.as_bytes());
    }
    ContentHash(*blake3::hash(text).as_bytes())
}

#[cfg(test)]
mod tests;
