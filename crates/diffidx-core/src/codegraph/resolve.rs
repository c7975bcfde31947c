//! Name resolution: from the references of one file to edges between
//! declarations, using the declarations of every file.
//!
//! Static analysis of names cannot know everything (dynamic dispatch,
//! reflection, receivers whose type the call site does not show), so every
//! edge says how it was found ([`Resolution`]) and a reference that matches
//! nothing in the repository is counted on its caller, never invented.
//!
//! The lookup order, per reference: the current type (`this`, `self`,
//! `Self`), then the scope (enclosing types and their bases, the namespace
//! or module, what the file imports), then the qualifier's path, then a
//! match by name across the repository. Languages differ only in data
//! (`lang::refs::ScopeRules`).

use std::collections::BTreeMap;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::facts::{FileFacts, Import, ImportKind, Receiver, RefKind, Reference};
use crate::lang::refs::Modules;
use crate::lang::Language;
use crate::qualname::split_twin;
use crate::symbol::{symbol_id, SymbolKind};

/// More candidates than this and a name match says nothing: the reference
/// is counted as unresolved instead of linked to each.
pub const MAX_CANDIDATES: usize = 8;

/// How many imports a path is followed through.
const MAX_ALIASES: u8 = 8;

/// How an edge was found, most certain first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    /// The call site names the target completely: `this.X()`, `Self::x()`,
    /// `crate::a::b()`, a fully qualified type.
    Exact,
    /// Found by the language's scope rules: the enclosing types and their
    /// bases, the namespace or module, the file's imports.
    Scoped,
    /// The only declaration of that name (and arity) in the repository.
    UniqueName,
    /// One of several declarations of that name (`candidates` of them).
    Ambiguous,
}

impl Resolution {
    /// What `graph`, `impact` and the PR comment follow unless asked for
    /// more: on hand-checked samples of six real repositories (Python,
    /// Rust, TypeScript, C#, Java, Go; docs/graph.md), `exact` and `scoped`
    /// edges were right 212 times in 217, `unique_name` ones 91 in 120 and
    /// `ambiguous` ones 47 in 120.
    pub const DEFAULT_MIN: Resolution = Resolution::Scoped;

    pub const ALL: [Resolution; 4] = [
        Resolution::Exact,
        Resolution::Scoped,
        Resolution::UniqueName,
        Resolution::Ambiguous,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Resolution::Exact => "exact",
            Resolution::Scoped => "scoped",
            Resolution::UniqueName => "unique_name",
            Resolution::Ambiguous => "ambiguous",
        }
    }

    pub fn parse(s: &str) -> Option<Resolution> {
        Resolution::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

/// One file of the tree the graph is built from.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub language: Language,
    pub facts: Arc<FileFacts>,
}

/// A declaration: (file position in the index, position in its file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DefRef {
    file: u32,
    def: u32,
}

struct DefInfo {
    id: String,
    /// The container's full path (modules, namespaces, types), joined.
    container: String,
    /// The full path of the declaration itself, joined.
    full: String,
    /// The qualname's segments (no module), joined: what a `Type::name`
    /// qualifier matches for methods of impls in other modules.
    qual: String,
}

/// The key of a member in [`DefIndex::by_member`]: its container's full
/// path and its name.
fn member_key(container: &str, name: &str) -> String {
    format!("{container}\u{2}{name}")
}

/// The key of an impl member declared away from its type: the crate, the
/// type's qualname path and its name.
fn impl_member_key(krate: &str, type_qual: &str, name: &str) -> String {
    format!("{krate}\u{3}{type_qual}\u{2}{name}")
}

/// The Go modules of a tree as its imports show them (go.mod is no file
/// the graph reads): `(import path, directory)` pairs, longest path first.
/// An import `P/T` where the tree has a directory `R/T` (or `T`) counts for
/// the module `P` at `R`; each `P` keeps its most counted `R` (none on a
/// tie). A path whose first element has a dot is a module's, one without
/// is the standard library's (`net/http` is no directory `http/`), so
/// dotless ones count only when no dotted one does.
pub fn go_modules(files: &BTreeMap<String, SourceFile>) -> Vec<(String, String)> {
    let go = || {
        files
            .iter()
            .filter(|(_, f)| f.language.spec().graph.scope.modules == Modules::DirectoryPackage)
    };
    let mut by_last: HashMap<&str, Vec<&str>> = HashMap::default();
    for (path, _) in go() {
        let dir = path.rsplit_once('/').map_or("", |(dir, _)| dir);
        let last = dir.rsplit('/').next().unwrap_or(dir);
        let dirs = by_last.entry(last).or_default();
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    let mut counts: HashMap<(&str, &str), usize> = HashMap::default();
    for (_, file) in go() {
        for import in &file.facts.imports {
            let Some(spec) = import.path.first() else {
                continue;
            };
            let last = spec.rsplit('/').next().unwrap_or(spec);
            for (at, _) in spec.match_indices('/') {
                let tail = &spec[at + 1..];
                for dir in by_last.get(last).into_iter().flatten() {
                    let root = if *dir == tail {
                        Some("")
                    } else {
                        dir.strip_suffix(tail).and_then(|r| r.strip_suffix('/'))
                    };
                    if let Some(root) = root {
                        *counts.entry((&spec[..at], root)).or_default() += 1;
                    }
                }
            }
        }
    }
    let dotted = |p: &str| p.split('/').next().is_some_and(|first| first.contains('.'));
    let any_dotted = counts.keys().any(|(p, _)| dotted(p));
    let mut best: HashMap<&str, (usize, Option<&str>)> = HashMap::default();
    for (&(prefix, root), &n) in &counts {
        if any_dotted && !dotted(prefix) {
            continue;
        }
        let entry = best.entry(prefix).or_insert((0, None));
        if n > entry.0 {
            *entry = (n, Some(root));
        } else if n == entry.0 {
            entry.1 = None;
        }
    }
    let mut modules: Vec<(String, String)> = best
        .into_iter()
        .filter_map(|(prefix, (_, root))| Some((prefix.to_owned(), root?.to_owned())))
        .collect();
    modules.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.cmp(b)));
    modules
}

/// Joins path segments into a lookup key.
/// What `edges` lead to from `start`, transitively, nearest first, none of
/// `start` (cycles stop: `A : B`, `B : A` in code that does not build).
fn reachable(start: &[DefRef], edges: &HashMap<DefRef, Vec<DefRef>>) -> Vec<DefRef> {
    let mut seen: HashSet<DefRef> = start.iter().copied().collect();
    let mut out = Vec::new();
    let mut frontier: Vec<DefRef> = start.to_vec();
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for t in frontier {
            for b in edges.get(&t).into_iter().flatten() {
                if seen.insert(*b) {
                    out.push(*b);
                    next.push(*b);
                }
            }
        }
        frontier = next;
    }
    out
}

fn key(segments: &[String]) -> String {
    segments.join("\u{1}")
}

fn key_ends_with(full: &str, suffix: &str) -> bool {
    full == suffix
        || (full.len() > suffix.len()
            && full.ends_with(suffix)
            && full.as_bytes()[full.len() - suffix.len() - 1] == 1)
}

/// The names of the types a file makes (`new T(...)`, `T::new`) or hands
/// on as values (`T.class`), where its language's table has `made_here`:
/// what [`DefIndex`] reads to tell which overrides may run.
pub(crate) fn made_names(file: &SourceFile) -> impl Iterator<Item = &str> {
    let tracked = file.language.spec().graph.scope.made_here.is_some();
    file.facts
        .refs
        .iter()
        .filter(move |r| tracked && matches!(r.kind, RefKind::New | RefKind::TypeValue))
        .map(|r| r.name.as_str())
}

/// Every declaration of a tree, indexed for lookups, with what lookups
/// found so far. What it knows is shared ([`SharedIndex`]): each thread
/// that resolves files makes its own `DefIndex` of it, with its own memo.
pub struct DefIndex<'a> {
    core: Arc<IndexCore<'a>>,
    hierarchy: Arc<Hierarchy>,
    /// [`DefIndex::bases_of`], per type asked about.
    type_bases: std::cell::RefCell<HashMap<DefRef, std::rc::Rc<Vec<DefRef>>>>,
    /// [`DefIndex::overrides_of`], per member asked about.
    member_overrides: std::cell::RefCell<HashMap<DefRef, std::rc::Rc<Vec<DefRef>>>>,
    /// [`DefIndex::may_be_made`], per type asked about.
    type_made: std::cell::RefCell<HashMap<DefRef, bool>>,
    /// The scope of each (file, declaration) asked about: references in
    /// one declaration share it.
    scopes: std::cell::RefCell<HashMap<ScopeKey, std::rc::Rc<Scope>>>,
    /// [`DefIndex::reexported`], per path and depth asked about: a package
    /// that re-exports its modules' names (`sympy/__init__.py`) is asked
    /// the same paths for every file that imports through it, and each
    /// answer scans its imports and expands its `import *`s again.
    reexports: Reexports,
    /// [`DefIndex::name_imports`], per file and context asked about.
    name_imports: NameImports<'a>,
}

/// What a [`DefIndex`] knows of the tree, without its memo: it can be sent
/// to other threads, each of which makes a `DefIndex` of it.
#[derive(Clone)]
pub struct SharedIndex<'a> {
    core: Arc<IndexCore<'a>>,
    hierarchy: Arc<Hierarchy>,
}

/// The resolved base types of each type-like declaration, and the
/// subtypes that name each as a base.
#[derive(Default)]
struct Hierarchy {
    bases: HashMap<DefRef, Vec<DefRef>>,
    subtypes: HashMap<DefRef, Vec<DefRef>>,
}

impl<'a> SharedIndex<'a> {
    /// An index of the same declarations, with an empty memo.
    pub fn index(&self) -> DefIndex<'a> {
        DefIndex::of(Arc::clone(&self.core), Arc::clone(&self.hierarchy))
    }
}

/// The declarations of a tree, indexed; read-only once built.
struct IndexCore<'a> {
    paths: Vec<&'a str>,
    files: Vec<&'a SourceFile>,
    by_path: HashMap<&'a str, u32>,
    infos: Vec<Vec<DefInfo>>,
    by_name: HashMap<&'a str, Vec<DefRef>>,
    by_full: HashMap<String, Vec<DefRef>>,
    /// Members by container and name ([`member_key`], [`impl_member_key`]).
    by_member: HashMap<String, Vec<DefRef>>,
    /// Per file: its module path (Rust, Python) or empty.
    modules: Vec<Vec<String>>,
    /// Per file: the package a relative import starts from (Python).
    packages: Vec<Vec<String>>,
    /// Python, JavaScript and TypeScript files by module path, joined:
    /// where a re-export is read.
    by_module: HashMap<String, u32>,
    /// JavaScript and TypeScript modules by their last segment (a
    /// directory's `index` by the directory): where an import that names
    /// no relative file (`@/lib/text`, `pkg/sub`) is looked for.
    by_module_tail: HashMap<String, Vec<Vec<String>>>,
    /// The names a Python import can start with and lead into the
    /// repository: its top-level modules and directories.
    python_roots: HashSet<String>,
    /// Crate names of the repository (Rust path roots it owns).
    crates: HashSet<String>,
    /// Every module path (Rust: files and inline modules), joined.
    module_paths: HashSet<String>,
    /// `global using` namespaces, per language.
    global_usings: HashMap<Language, Vec<Vec<String>>>,
    /// What each declaration returns by name (`return g`).
    returns: HashMap<DefRef, Vec<&'a Reference>>,
    /// The type each declaration is declared to return.
    return_types: HashMap<DefRef, &'a Reference>,
    /// Each declaration's calls of its own parameters.
    param_calls: HashMap<DefRef, Vec<&'a Reference>>,
    /// Per Python file: the declarations that hold imports, sorted
    /// ([`DefIndex::import_context`]).
    import_owners: Vec<Vec<u32>>,
    /// Go packages by directory (`""` at the root): each package path its
    /// files declare there.
    go_packages: HashMap<String, Vec<Vec<String>>>,
    /// The Go modules of the tree ([`go_modules`]).
    go_modules: Vec<(String, String)>,
    /// The names of the types the code of languages with the table's
    /// `made_here` makes (`new T(...)`, `T::new`) or hands on as values
    /// (`T.class`), by name: a type of such a name may exist at run time.
    made_names: HashSet<&'a str>,
}

/// A re-exported path asked about, and at what depth: where it leads.
type Reexports = std::cell::RefCell<HashMap<(Vec<String>, u8), Vec<String>>>;

type NameImports<'a> =
    std::cell::RefCell<HashMap<(u32, Option<u32>), std::rc::Rc<HashMap<&'a str, &'a Import>>>>;

pub(crate) fn is_type_like(kind: SymbolKind) -> bool {
    matches!(
        kind,
        SymbolKind::Class
            | SymbolKind::Struct
            | SymbolKind::Interface
            | SymbolKind::Record
            | SymbolKind::Enum
            | SymbolKind::Union
            | SymbolKind::Trait
            | SymbolKind::Type
            | SymbolKind::Delegate
    )
}

fn is_callable(kind: SymbolKind) -> bool {
    matches!(
        kind,
        SymbolKind::Method
            | SymbolKind::Function
            | SymbolKind::Constructor
            | SymbolKind::Delegate
            | SymbolKind::Operator
    )
}

/// The node that owns a file's code outside any declaration.
fn is_module_node(def: &super::facts::Def) -> bool {
    def.kind == SymbolKind::Module && def.qualname == super::MODULE_QUALNAME
}

/// An inline module (Rust `mod x { .. }`), not the module node.
fn is_inline_module(def: &super::facts::Def) -> bool {
    def.kind == SymbolKind::Module && !is_module_node(def)
}

/// A Python file's module and the package its relative imports start
/// from: the path from the topmost directory of an unbroken chain of
/// packages (directories with an `__init__.py`), `__init__` naming its
/// package. `src/pkg/a.py` with `src/pkg/__init__.py` → `pkg.a`, `pkg`.
pub fn python_module<S: std::hash::BuildHasher>(
    path: &str,
    packages: &std::collections::HashSet<&str, S>,
) -> (Vec<String>, Vec<String>) {
    let (dir, file) = path.rsplit_once('/').unwrap_or(("", path));
    let stem = file.split('.').next().unwrap_or(file);
    let mut dirs: Vec<&str> = Vec::new();
    let mut current = dir;
    while !current.is_empty() && packages.contains(current) {
        let (parent, name) = current.rsplit_once('/').unwrap_or(("", current));
        dirs.push(name);
        current = parent;
    }
    dirs.reverse();
    let package: Vec<String> = dirs.iter().map(|d| (*d).to_owned()).collect();
    let mut module = package.clone();
    if stem != "__init__" {
        module.push(stem.to_owned());
    }
    (module, package)
}

/// The module of a JavaScript or TypeScript file: its path without the
/// extension (`src/a.ts` → `src`, `a`; `types.d.ts` → `types`).
pub fn file_module(path: &str) -> Vec<String> {
    let (dir, file) = path.rsplit_once('/').unwrap_or(("", path));
    const EXTENSIONS: &[&str] = &[".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"];
    let mut stem = EXTENSIONS
        .iter()
        .find_map(|e| file.strip_suffix(e))
        .unwrap_or(file);
    if file.ends_with("ts") {
        stem = stem.strip_suffix(".d").unwrap_or(stem);
    }
    let mut out: Vec<String> = dir
        .split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    out.push(stem.to_owned());
    out
}

/// Whether module `index` is the `index` file of the directory `module`
/// names (`a/index` of `a`).
fn is_index_of(index: &[String], module: &[String]) -> bool {
    index
        .split_last()
        .is_some_and(|(last, dir)| last == "index" && dir == module)
}

fn is_interface(kind: SymbolKind) -> bool {
    matches!(kind, SymbolKind::Interface | SymbolKind::Trait)
}

/// The package a file declares, as its top-level declarations' qualnames
/// start with it (`a.b.Cart` → `a`, `b`; a Go method's, `pkg.Type.m`,
/// holds its type too); empty when it declares nothing.
fn declared_package(facts: &FileFacts, sep: &str) -> Vec<String> {
    facts
        .defs
        .iter()
        .filter(|d| d.parent.is_none() && !is_module_node(d))
        .filter_map(|d| {
            let (base, _) = split_twin(&d.qualname);
            let prefix = base.strip_suffix(d.name.as_str())?.strip_suffix(sep)?;
            if d.kind == SymbolKind::Method {
                prefix.rsplit_once(sep).map(|(package, _)| package)
            } else {
                Some(prefix)
            }
        })
        .min_by_key(|prefix| prefix.len())
        .map(|p| p.split(sep).map(str::to_owned).collect())
        .unwrap_or_default()
}

fn sep_of(file: &SourceFile) -> &'static str {
    file.language.spec().separator
}

/// The crate and module of a Rust file, from its path: `crates/my-lib/src/a/b.rs`
/// → `my_lib`, `a::b`; `lib.rs`, `main.rs` and `mod.rs` name their directory.
/// Integration tests, benches and examples (`tests/x.rs`, `tests/common/mod.rs`)
/// are taken as one crate per directory (`tests`, `my_lib_tests` under
/// `crates/my-lib/`), each top-level file a root.
pub fn rust_module(path: &str) -> Vec<String> {
    let parts: Vec<&str> = path.split('/').collect();
    let dirs = &parts[..parts.len().saturating_sub(1)];
    // `src` first: a `tests` module directory inside it is no test crate.
    let root = dirs.iter().rposition(|p| *p == "src").or_else(|| {
        dirs.iter()
            .rposition(|p| matches!(*p, "tests" | "benches" | "examples"))
    });
    let (krate, rest) = match root {
        Some(i) => {
            let parent = i.checked_sub(1).map(|p| parts[p]);
            let krate = match (parts[i], parent) {
                ("src", Some(dir)) => dir.to_owned(),
                ("src", None) => "crate".to_owned(),
                (kind, Some(dir)) => format!("{dir}_{kind}"),
                (kind, None) => kind.to_owned(),
            };
            (krate, &parts[i + 1..])
        }
        // build.rs and other loose files: each is a crate root.
        None => (path.trim_end_matches(".rs").to_owned(), &[][..]),
    };
    let mut module = vec![krate.replace('-', "_")];
    for (i, part) in rest.iter().enumerate() {
        let last = i + 1 == rest.len();
        let part = if last {
            part.trim_end_matches(".rs")
        } else {
            part
        };
        if last
            && (matches!(part, "lib" | "main" | "mod")
                || (rest.len() == 1 && root.is_some_and(|r| parts[r] != "src")))
        {
            continue;
        }
        if i == 0 && part == "bin" && rest.len() > 1 {
            continue;
        }
        module.push(part.to_owned());
    }
    module
}

impl<'a> DefIndex<'a> {
    pub fn new(files: &'a BTreeMap<String, SourceFile>) -> DefIndex<'a> {
        let mut index = IndexCore {
            paths: Vec::with_capacity(files.len()),
            files: Vec::with_capacity(files.len()),
            by_path: HashMap::with_capacity_and_hasher(files.len(), Default::default()),
            infos: Vec::with_capacity(files.len()),
            by_name: HashMap::default(),
            by_full: HashMap::default(),
            by_member: HashMap::default(),
            modules: Vec::with_capacity(files.len()),
            packages: Vec::with_capacity(files.len()),
            by_module: HashMap::default(),
            by_module_tail: HashMap::default(),
            python_roots: HashSet::default(),
            crates: HashSet::default(),
            module_paths: HashSet::default(),
            global_usings: HashMap::default(),
            returns: HashMap::default(),
            return_types: HashMap::default(),
            param_calls: HashMap::default(),
            import_owners: Vec::with_capacity(files.len()),
            go_packages: HashMap::default(),
            go_modules: Vec::new(),
            made_names: HashSet::default(),
        };
        let packages: HashSet<&str> = files
            .keys()
            .filter_map(|p| match p.rsplit_once('/') {
                Some((dir, "__init__.py" | "__init__.pyi")) => Some(dir),
                None if matches!(p.as_str(), "__init__.py" | "__init__.pyi") => Some(""),
                _ => None,
            })
            .collect();
        for (f, (path, file)) in files.iter().enumerate() {
            let rules = &file.language.spec().graph.scope;
            let (module, package) = match rules.modules {
                Modules::Rust => {
                    let m = rust_module(path);
                    index.crates.insert(m[0].clone());
                    for n in 1..=m.len() {
                        index.module_paths.insert(key(&m[..n]));
                    }
                    (m, Vec::new())
                }
                Modules::Python => {
                    let (m, package) = python_module(path, &packages);
                    index.by_module.insert(key(&m), f as u32);
                    for root in [m.first().map(String::as_str), path.split('/').next()] {
                        let root = root.map(|r| r.trim_end_matches(".py"));
                        if let Some(root) = root {
                            index.python_roots.insert(root.to_owned());
                        }
                    }
                    (m, package)
                }
                Modules::FilePath => {
                    let m = file_module(path);
                    index.by_module.insert(key(&m), f as u32);
                    let named = match m.split_last() {
                        Some((last, dir)) if last == "index" => dir,
                        _ => &m[..],
                    };
                    if let Some(tail) = named.last() {
                        let entry = index.by_module_tail.entry(tail.clone()).or_default();
                        entry.push(m.clone());
                    }
                    (m, Vec::new())
                }
                Modules::Package => (Vec::new(), declared_package(&file.facts, sep_of(file))),
                Modules::DirectoryPackage => {
                    let dir: Vec<String> = match path.rsplit_once('/') {
                        Some((dir, _)) => dir.split('/').map(str::to_owned).collect(),
                        None => Vec::new(),
                    };
                    let mut package = dir.clone();
                    package.extend(declared_package(&file.facts, sep_of(file)));
                    // A file that declares nothing (a `doc.go`) shows no
                    // package name.
                    if package.len() > dir.len() {
                        let known = index.go_packages.entry(dir.join("/")).or_default();
                        if !known.contains(&package) {
                            known.push(package.clone());
                        }
                    }
                    (dir, package)
                }
                Modules::None => (Vec::new(), Vec::new()),
            };
            let sep = file.language.spec().separator;
            let mut infos: Vec<DefInfo> = Vec::with_capacity(file.facts.defs.len());
            let mut full_paths: Vec<Vec<String>> = Vec::with_capacity(file.facts.defs.len());
            let mut qual_paths: Vec<Vec<String>> = Vec::with_capacity(file.facts.defs.len());
            for (d, def) in file.facts.defs.iter().enumerate() {
                let own: Vec<String> = if def.kind == SymbolKind::Namespace {
                    def.name.split(sep).map(str::to_owned).collect()
                } else {
                    vec![def.name.clone()]
                };
                let qual = match def.parent.and_then(|p| qual_paths.get(p as usize)) {
                    Some(parent) => parent.clone(),
                    None => {
                        // An impl member whose type is elsewhere: `Type::name`.
                        let (base, _) = split_twin(&def.qualname);
                        let prefix = base
                            .strip_suffix(def.name.as_str())
                            .and_then(|p| p.strip_suffix(sep))
                            .unwrap_or("");
                        prefix
                            .split(sep)
                            .filter(|s| !s.is_empty())
                            .map(str::to_owned)
                            .collect()
                    }
                };
                let container_full: Vec<String> =
                    module.iter().cloned().chain(qual.iter().cloned()).collect();
                let mut full = container_full.clone();
                full.extend(own.iter().cloned());
                let mut qual_own = qual.clone();
                qual_own.extend(own);
                let r = DefRef {
                    file: f as u32,
                    def: d as u32,
                };
                // The module node calls; nothing names it.
                if !is_module_node(def) {
                    if def.kind == SymbolKind::Module {
                        index.module_paths.insert(key(&full));
                    }
                    index.by_name.entry(def.name.as_str()).or_default().push(r);
                    index.by_full.entry(key(&full)).or_default().push(r);
                    index
                        .by_member
                        .entry(member_key(&key(&container_full), &def.name))
                        .or_default()
                        .push(r);
                    if def.parent.is_none() && qual_own.len() > 1 {
                        let krate = module.first().map_or("", String::as_str);
                        let type_qual = key(&qual_own[..qual_own.len() - 1]);
                        index
                            .by_member
                            .entry(impl_member_key(krate, &type_qual, &def.name))
                            .or_default()
                            .push(r);
                    }
                }
                infos.push(DefInfo {
                    id: symbol_id(path, def.kind, &def.qualname, &def.sig),
                    container: key(&container_full),
                    full: key(&full),
                    qual: key(&qual_own),
                });
                full_paths.push(full);
                qual_paths.push(qual_own);
            }
            for import in &file.facts.imports {
                if import.kind == ImportKind::GlobalUsing {
                    index
                        .global_usings
                        .entry(file.language)
                        .or_default()
                        .push(import.path.clone());
                }
            }
            index.made_names.extend(made_names(file));
            for r in &file.facts.refs {
                let Some(owner) = r.owner else { continue };
                let at = DefRef {
                    file: f as u32,
                    def: owner,
                };
                match r.kind {
                    RefKind::Returns => index.returns.entry(at).or_default().push(r),
                    RefKind::ReturnType => {
                        index.return_types.insert(at, r);
                    }
                    RefKind::CallsParameter => {
                        // Kept with the function whose parameter it calls.
                        let mut declaring = Some(owner);
                        for _ in 0..r.param_depth {
                            declaring = declaring
                                .and_then(|d| file.facts.defs.get(d as usize))
                                .and_then(|d| d.parent);
                        }
                        if let Some(def) = declaring {
                            let at = DefRef {
                                file: f as u32,
                                def,
                            };
                            index.param_calls.entry(at).or_default().push(r);
                        }
                    }
                    _ => {}
                }
            }
            let mut owners: Vec<u32> = match rules.modules {
                Modules::Python => file.facts.imports.iter().filter_map(|i| i.owner).collect(),
                _ => Vec::new(),
            };
            owners.sort_unstable();
            owners.dedup();
            index.import_owners.push(owners);
            index.by_path.insert(path.as_str(), f as u32);
            index.paths.push(path.as_str());
            index.files.push(file);
            index.infos.push(infos);
            index.modules.push(module);
            index.packages.push(package);
        }
        index.go_modules = go_modules(files);
        let mut index = DefIndex::of(Arc::new(index), Arc::default());
        index.link_bases();
        index
    }

    fn of(core: Arc<IndexCore<'a>>, hierarchy: Arc<Hierarchy>) -> DefIndex<'a> {
        DefIndex {
            core,
            hierarchy,
            type_bases: std::cell::RefCell::new(HashMap::default()),
            member_overrides: std::cell::RefCell::new(HashMap::default()),
            type_made: std::cell::RefCell::new(HashMap::default()),
            scopes: std::cell::RefCell::new(HashMap::default()),
            reexports: std::cell::RefCell::new(HashMap::default()),
            name_imports: std::cell::RefCell::new(HashMap::default()),
        }
    }

    /// What this index knows, for other threads to resolve with.
    pub fn share(&self) -> SharedIndex<'a> {
        SharedIndex {
            core: Arc::clone(&self.core),
            hierarchy: Arc::clone(&self.hierarchy),
        }
    }

    fn def(&self, r: DefRef) -> &'a super::facts::Def {
        &self.core.files[r.file as usize].facts.defs[r.def as usize]
    }

    fn info(&self, r: DefRef) -> &DefInfo {
        &self.core.infos[r.file as usize][r.def as usize]
    }

    /// The id of a declaration (what the notes and the store call it).
    pub fn id(&self, r: DefRef) -> &str {
        &self.info(r).id
    }

    pub fn path(&self, r: DefRef) -> &'a str {
        self.core.paths[r.file as usize]
    }

    /// Resolves every base reference once: member lookups walk these.
    fn link_bases(&mut self) {
        let mut bases: HashMap<DefRef, Vec<DefRef>> = HashMap::default();
        for f in 0..self.core.files.len() {
            for reference in &self.core.files[f].facts.refs {
                if !matches!(reference.kind, RefKind::Base | RefKind::Implements) {
                    continue;
                }
                let found = self.resolve_reference(f as u32, reference);
                for (from, to, _, _) in found.edges {
                    bases.entry(from).or_default().push(to);
                }
            }
        }
        let mut subtypes: HashMap<DefRef, Vec<DefRef>> = HashMap::default();
        for (t, of_t) in &bases {
            for b in of_t {
                subtypes.entry(*b).or_default().push(*t);
            }
        }
        for found in subtypes.values_mut() {
            found.sort_unstable();
            found.dedup();
        }
        self.hierarchy = Arc::new(Hierarchy { bases, subtypes });
        // What was found while linking lacked the bases.
        self.scopes.borrow_mut().clear();
        self.type_bases.borrow_mut().clear();
        self.member_overrides.borrow_mut().clear();
        self.type_made.borrow_mut().clear();
    }

    /// The type a declaration belongs to (itself, for a type).
    fn enclosing_type(&self, r: DefRef) -> Option<DefRef> {
        let mut current = Some(r);
        while let Some(c) = current {
            if is_type_like(self.def(c).kind) && self.def(c).kind != SymbolKind::Delegate {
                return Some(c);
            }
            current = self.def(c).parent.map(|p| DefRef {
                file: c.file,
                def: p,
            });
        }
        None
    }

    /// Types named like the qualname prefix of an impl member declared
    /// away from its type (`Type::name` in another file).
    fn impl_types(&self, r: DefRef) -> Vec<DefRef> {
        let def = self.def(r);
        if def.parent.is_some() {
            return Vec::new();
        }
        let info = self.info(r);
        let Some((type_qual, _)) = info.qual.rsplit_once('\u{1}') else {
            return Vec::new();
        };
        let name = type_qual.rsplit('\u{1}').next().unwrap_or(type_qual);
        let same_crate = |c: &DefRef| {
            self.core.modules[c.file as usize].first() == self.core.modules[r.file as usize].first()
        };
        self.core
            .by_name
            .get(name)
            .into_iter()
            .flatten()
            .copied()
            .filter(|c| is_type_like(self.def(*c).kind) && same_crate(c))
            .filter(|c| key_ends_with(&self.info(*c).qual, type_qual))
            .collect()
    }

    /// The types whose members `this`/`self` sees from `owner`: its type
    /// (or, for an impl member, the type it is declared for).
    fn own_types(&self, owner: Option<DefRef>) -> Vec<DefRef> {
        let Some(owner) = owner else {
            return Vec::new();
        };
        match self.enclosing_type(owner) {
            Some(t) => vec![t],
            None => self.impl_types(owner),
        }
    }

    /// Base types, transitively, nearest first (cycles stop).
    fn all_bases(&self, types: &[DefRef]) -> Vec<DefRef> {
        reachable(types, &self.hierarchy.bases)
    }

    /// A member the types inherit: from the nearest base that declares it
    /// (the first in base order at the same distance), as an override hides
    /// what it overrides.
    fn inherited(
        &self,
        types: &[DefRef],
        name: &str,
        wanted: &dyn Fn(SymbolKind) -> bool,
    ) -> Vec<DefRef> {
        if !self.core.by_name.contains_key(name) {
            return Vec::new();
        }
        self.all_bases(types)
            .into_iter()
            .map(|b| self.members(&[b], name, wanted))
            .find(|found| !found.is_empty())
            .unwrap_or_default()
    }

    /// Every base of one type, nearest first, computed once.
    fn bases_of(&self, t: DefRef) -> std::rc::Rc<Vec<DefRef>> {
        if let Some(found) = self.type_bases.borrow().get(&t) {
            return std::rc::Rc::clone(found);
        }
        let found = std::rc::Rc::new(self.all_bases(&[t]));
        self.type_bases
            .borrow_mut()
            .insert(t, std::rc::Rc::clone(&found));
        found
    }

    /// Of `candidates`, the members of a subtype of one of `types`.
    fn in_subtypes(&self, types: &[DefRef], candidates: &[DefRef]) -> Vec<DefRef> {
        candidates
            .iter()
            .copied()
            .filter(|c| {
                let Some(owner) = self.owner(*c) else {
                    return false;
                };
                !types.contains(&owner) && self.bases_of(owner).iter().any(|b| types.contains(b))
            })
            .collect()
    }

    /// What a call of the `hits` on a value of the type `reference`
    /// names may run besides (where the language dispatches to
    /// overrides): the overrides of each hit in that type's subtypes, each
    /// a target at most scoped. More than [`MAX_CANDIDATES`] say nothing a
    /// reader can use (an interface every node of a tree implements), so
    /// the call keeps its declared targets only.
    fn overrides(
        &self,
        f: u32,
        hits: &[(DefRef, Resolution, u32)],
        reference: &Reference,
    ) -> Vec<(DefRef, Resolution)> {
        let rules = &self.core.files[f as usize].language.spec().graph.scope;
        if !rules.dispatches_to_overrides || reference.kind != RefKind::Call || reference.made {
            return Vec::new();
        }
        let Some(receiver) = reference.qualifier.last() else {
            return Vec::new();
        };
        let mut found: Vec<DefRef> = Vec::new();
        for (t, ..) in hits {
            let overrides = self.overrides_of(*t);
            let Some(owner) = self.owner(*t).filter(|_| !overrides.is_empty()) else {
                continue;
            };
            // The receiver's type: the hit's own, or a subtype that
            // inherits it (`Dog d; d.speak()` of `Animal.speak` runs no
            // `Cat.speak`).
            let types: Vec<DefRef> = if self.def(owner).name == *receiver {
                vec![owner]
            } else {
                self.core
                    .by_name
                    .get(receiver.as_str())
                    .into_iter()
                    .flatten()
                    .copied()
                    .filter(|c| is_type_like(self.def(*c).kind))
                    .filter(|c| self.bases_of(*c).contains(&owner))
                    .collect()
            };
            // In the receiver's type or below it: a type of that name may
            // declare its own override of a base's member the lookup found.
            // Of a type no object of which is made, an override never runs.
            for o in overrides.iter() {
                let below = self.owner(*o).is_some_and(|p| {
                    (types.contains(&p) || self.bases_of(p).iter().any(|b| types.contains(b)))
                        && self.may_be_made(p)
                });
                if below && !found.contains(o) && !hits.iter().any(|(h, ..)| h == o) {
                    found.push(*o);
                }
            }
            // Too many to read, as below.
            if found.len() > 4 * MAX_CANDIDATES {
                return Vec::new();
            }
        }
        // A generic method's type arguments, as `by_arity` reads them.
        found.retain(|o| reference.type_args == 0 || self.def(*o).arity == reference.type_args);
        let found = pick_overloads(self, found, reference);
        if found.len() > MAX_CANDIDATES {
            return Vec::new();
        }
        let level = hits
            .iter()
            .map(|(_, l, _)| *l)
            .max()
            .unwrap_or(Resolution::Scoped)
            .max(Resolution::Scoped);
        found.into_iter().map(|t| (t, level)).collect()
    }

    /// Whether an object of type `t` may exist at run time: code outside
    /// the repository may make it (not [`Def::made_only_here`]), or the
    /// tree makes it or one of its subtypes, by name.
    ///
    /// [`Def::made_only_here`]: super::facts::Def::made_only_here
    fn may_be_made(&self, t: DefRef) -> bool {
        if let Some(&known) = self.type_made.borrow().get(&t) {
            return known;
        }
        let made = |c: &DefRef| {
            let def = self.def(*c);
            !def.made_only_here || self.core.made_names.contains(def.name.as_str())
        };
        let found = made(&t) || reachable(&[t], &self.hierarchy.subtypes).iter().any(made);
        self.type_made.borrow_mut().insert(t, found);
        found
    }

    /// The declaration `member` is declared in.
    fn owner(&self, member: DefRef) -> Option<DefRef> {
        let parent = self.def(member).parent?;
        Some(DefRef {
            file: member.file,
            def: parent,
        })
    }

    /// The members of `member`'s name in the subtypes of its type, at any
    /// depth, computed once.
    fn overrides_of(&self, member: DefRef) -> std::rc::Rc<Vec<DefRef>> {
        if let Some(found) = self.member_overrides.borrow().get(&member) {
            return std::rc::Rc::clone(found);
        }
        let subtypes = match self.owner(member) {
            Some(owner) => reachable(&[owner], &self.hierarchy.subtypes),
            None => Vec::new(),
        };
        let name = &self.def(member).name;
        let found = std::rc::Rc::new(self.members(&subtypes, name, &is_callable));
        self.member_overrides
            .borrow_mut()
            .insert(member, std::rc::Rc::clone(&found));
        found
    }

    /// The members named `name` of the containers: declared in them, or
    /// (Rust) in an impl of them in another module of the same crate.
    fn members(
        &self,
        containers: &[DefRef],
        name: &str,
        wanted: &dyn Fn(SymbolKind) -> bool,
    ) -> Vec<DefRef> {
        let mut out: Vec<DefRef> = Vec::new();
        for c in containers {
            let info = self.info(*c);
            let krate = self.core.modules[c.file as usize]
                .first()
                .map_or("", String::as_str);
            let keys = [
                member_key(&info.full, name),
                impl_member_key(krate, &info.qual, name),
            ];
            for k in &keys {
                for m in self.core.by_member.get(k).into_iter().flatten() {
                    if wanted(self.def(*m).kind) && !out.contains(m) {
                        out.push(*m);
                    }
                }
            }
        }
        out.sort();
        out
    }

    /// Resolves the references of one file: its edges, and how many
    /// references of each declaration matched nothing.
    pub fn resolve_file(&self, path: &str) -> FileEdges {
        let mut out = FileEdges::default();
        let Some(&f) = self.core.by_path.get(path) else {
            return out;
        };
        let file = self.core.files[f as usize];
        for reference in &file.facts.refs {
            if matches!(
                reference.kind,
                RefKind::Returns
                    | RefKind::CallsParameter
                    | RefKind::ReturnType
                    | RefKind::TypeValue
            ) {
                // Facts for the call sites of their declaration, or of
                // which types are made.
                continue;
            }
            let owner_id = reference
                .owner
                .map(|d| self.id(DefRef { file: f, def: d }).to_owned());
            let found = self.resolve_reference(f, reference);
            if found.unresolved() && !reference.operator && !reference.passed {
                if let Some(id) = owner_id {
                    *out.unresolved.entry(id).or_default() += 1;
                }
                if found.calls && !reference.flow && !reference.returned {
                    let calls = out
                        .unresolved_calls
                        .entry(reference.name.clone())
                        .or_default();
                    if reference.receiver == Receiver::Bare {
                        calls.bare += 1;
                    } else {
                        calls.qualified += 1;
                    }
                }
            }
            for &(from, to, resolution, candidates) in &found.edges {
                let edge = Edge {
                    kind: found.kind(self.def(from).kind, self.def(to).kind),
                    from: self.id(from).to_owned(),
                    to: self.id(to).to_owned(),
                    resolution,
                    candidates,
                    line: reference.line,
                    sites: 1,
                };
                out.add(edge);
            }
        }
        out.imports = self.imports(f);
        out
    }

    fn imports(&self, f: u32) -> Vec<ImportEdge> {
        let file = self.core.files[f as usize];
        let spec = file.language.spec();
        let path = self.core.paths[f as usize];
        let mut out = Vec::new();
        for import in &file.facts.imports {
            let target = match import.kind {
                ImportKind::Module => {
                    let dir = match path.rsplit_once('/') {
                        Some((dir, "lib.rs" | "main.rs" | "mod.rs")) => dir.to_owned(),
                        Some((dir, file)) => format!("{dir}/{}", file.trim_end_matches(".rs")),
                        None if matches!(path, "lib.rs" | "main.rs" | "mod.rs") => String::new(),
                        None => path.trim_end_matches(".rs").to_owned(),
                    };
                    let name = &import.path[0];
                    let join = |p: String| {
                        if dir.is_empty() {
                            p
                        } else {
                            format!("{dir}/{p}")
                        }
                    };
                    let candidates = [join(format!("{name}.rs")), join(format!("{name}/mod.rs"))];
                    match candidates
                        .into_iter()
                        .find(|c| self.core.by_path.contains_key(c.as_str()))
                    {
                        Some(file) => ImportTarget::File(file),
                        None => continue,
                    }
                }
                // An ES export of the file's own name under another
                // (`export default f`): nothing imported.
                _ if import.path.first().is_some_and(|p| p == ".") => continue,
                _ => {
                    let ctx = self.import_context(f, import.owner);
                    let expanded = self.expand(f, ctx, &import.path);
                    ImportTarget::Module(expanded.join(spec.separator))
                }
            };
            out.push(ImportEdge {
                target,
                kind: import.kind,
                alias: import.alias.clone(),
                line: import.line,
            });
        }
        out.sort();
        out.dedup();
        out
    }

    /// The inline module (Rust) a declaration of file `f` is in, if any.
    fn module_of(&self, f: u32, def: Option<u32>) -> Option<u32> {
        let defs = &self.core.files[f as usize].facts.defs;
        let mut current = def;
        while let Some(d) = current {
            let def = defs.get(d as usize)?;
            if is_inline_module(def) {
                return Some(d);
            }
            current = def.parent;
        }
        None
    }

    /// Where the imports that a declaration of file `f` sees are looked up
    /// ([`DefIndex::imports_in`]): in Rust its inline module; in Python
    /// the innermost declaration holding it (or itself) that imports
    /// something, since an import in a function binds the name in that
    /// function only, else the file (so that the thousands of lambdas of a
    /// generated module share the file's imports); elsewhere the file.
    fn import_context(&self, f: u32, def: Option<u32>) -> Option<u32> {
        match self.core.files[f as usize]
            .language
            .spec()
            .graph
            .scope
            .modules
        {
            Modules::Python => {
                let owners = &self.core.import_owners[f as usize];
                let defs = &self.core.files[f as usize].facts.defs;
                let mut current = def;
                while let Some(d) = current {
                    if owners.binary_search(&d).is_ok() {
                        return Some(d);
                    }
                    current = defs.get(d as usize).and_then(|def| def.parent);
                }
                None
            }
            _ => self.module_of(f, def),
        }
    }

    /// Whether declaration `outer` of file `f` is `inner` or holds it.
    fn holds(&self, f: u32, outer: u32, inner: Option<u32>) -> bool {
        let defs = &self.core.files[f as usize].facts.defs;
        let mut current = inner;
        while let Some(d) = current {
            if d == outer {
                return true;
            }
            current = defs.get(d as usize).and_then(|def| def.parent);
        }
        false
    }

    /// The module path a context (an inline module, else the file) names.
    fn module_path(&self, f: u32, ctx: Option<u32>) -> Vec<String> {
        let defs = &self.core.files[f as usize].facts.defs;
        let module = ctx.filter(|d| defs.get(*d as usize).is_some_and(is_inline_module));
        match module.and_then(|d| self.core.infos[f as usize].get(d as usize)) {
            Some(info) => info.full.split('\u{1}').map(str::to_owned).collect(),
            None => self.core.modules[f as usize].clone(),
        }
    }

    /// The imports that apply in a context: in Rust those of the same
    /// module (an inline module does not see its file's `use`s); in Python
    /// the file's and those of the declarations that hold the context;
    /// elsewhere every import of the file.
    fn imports_in(
        &self,
        f: u32,
        ctx: Option<u32>,
    ) -> impl DoubleEndedIterator<Item = &'a super::facts::Import> + '_ {
        let file = self.core.files[f as usize];
        let modules = file.language.spec().graph.scope.modules;
        file.facts.imports.iter().filter(move |i| match modules {
            Modules::Rust => self.module_of(f, i.owner) == ctx,
            Modules::Python => i.owner.is_none_or(|o| self.holds(f, o, ctx)),
            _ => true,
        })
    }

    /// The names file `f`'s imports bind in context `ctx`, each to its
    /// import: a name imported twice is the later import's (Python binds it
    /// again; elsewhere the compiler forbids it). Imports whose path starts
    /// with the name they bind (`import a`) are passed over: the name
    /// leads nowhere else. Made once per file and context: every reference
    /// in them looks its first name up here.
    fn name_imports(&self, f: u32, ctx: Option<u32>) -> std::rc::Rc<HashMap<&'a str, &'a Import>> {
        if let Some(found) = self.name_imports.borrow().get(&(f, ctx)) {
            return found.clone();
        }
        let mut names = HashMap::default();
        for import in self.imports_in(f, ctx) {
            if import.kind != ImportKind::Name {
                continue;
            }
            let Some(local) = import.alias.as_ref().or(import.path.last()) else {
                continue;
            };
            if import.path.first() != Some(local) {
                names.insert(local.as_str(), import);
            }
        }
        let names = std::rc::Rc::new(names);
        self.name_imports
            .borrow_mut()
            .insert((f, ctx), names.clone());
        names
    }

    /// The import that binds `name` where imports qualify values (Go's
    /// `import "strings"` binds `strings`, which names no other path).
    fn package_import(&self, f: u32, ctx: Option<u32>, name: &str) -> Option<&'a Import> {
        self.imports_in(f, ctx).find(|i| {
            i.kind == ImportKind::Name
                && i.alias
                    .as_ref()
                    .or(i.path.last())
                    .is_some_and(|a| a == name)
        })
    }

    /// A path as the file sees it from context `ctx` (see
    /// [`DefIndex::module_of`]): `crate`/`super`/`self` and imported names
    /// replaced by where they lead.
    fn expand(&self, f: u32, ctx: Option<u32>, path: &[String]) -> Vec<String> {
        self.expand_at(f, ctx, path, 0)
    }

    /// [`DefIndex::expand`], through at most [`MAX_ALIASES`] imports (they
    /// may refer to each other in circles).
    fn expand_at(&self, f: u32, ctx: Option<u32>, path: &[String], depth: u8) -> Vec<String> {
        let file = self.core.files[f as usize];
        let rules = &file.language.spec().graph.scope;
        let Some(first) = path.first() else {
            return Vec::new();
        };
        if rules.modules == Modules::Python && first == "." {
            // `.` is the package; each further `.` its parent.
            let mut base = self.core.packages[f as usize].clone();
            let dots = path.iter().take_while(|p| *p == ".").count();
            for _ in 1..dots {
                base.pop();
            }
            base.extend(path[dots..].iter().cloned());
            return base;
        }
        // A Go import names a package by its path: one of the repository
        // (`github.com/o/r/doc`), or one outside it, which leads nowhere
        // here (an empty path).
        if rules.imports_qualify_values && !self.core.go_modules.is_empty() {
            if let Some(import) = self.package_import(f, ctx, first) {
                let Some(mut package) = import.path.first().and_then(|s| self.go_package(s)) else {
                    return Vec::new();
                };
                package.extend(path[1..].iter().cloned());
                return package;
            }
        }
        // An ES import's module, as written (`./a.js`, `@/lib/a`).
        if rules.modules == Modules::FilePath && (first.starts_with('.') || first.contains('/')) {
            let module = if first.starts_with('.') {
                self.relative_module(f, first)
            } else {
                self.aliased_module(first)
            };
            let Some(mut module) = module else {
                return path.to_vec();
            };
            module.extend(path[1..].iter().cloned());
            return module;
        }
        let word = |w: Option<&str>| w.is_some_and(|w| w == first);
        if word(rules.root_word) {
            // The module path is made only where it is read: most
            // expansions return before it.
            let module = self.module_path(f, ctx);
            let mut out = vec![module[0].clone()];
            out.extend(path[1..].iter().cloned());
            return out;
        }
        if word(rules.current_word) || word(rules.parent_word) {
            let mut base = self.module_path(f, ctx);
            let mut rest = path;
            while let Some(first) = rest.first() {
                if rules.parent_word == Some(first.as_str()) {
                    if base.len() > 1 {
                        base.pop();
                    }
                } else if rules.current_word != Some(first.as_str()) {
                    break;
                }
                rest = &rest[1..];
            }
            base.extend(rest.iter().cloned());
            return base;
        }
        if let Some(import) = self.name_imports(f, ctx).get(first.as_str()) {
            if depth < MAX_ALIASES {
                let mut out = self.expand_at(f, ctx, &import.path, depth + 1);
                out.extend(path[1..].iter().cloned());
                if matches!(rules.modules, Modules::Python | Modules::FilePath) {
                    return self.reexported(out, depth + 1);
                }
                return out;
            }
        }
        if rules.modules == Modules::Rust {
            // A child module of the current module (`use store::Store;`).
            let mut child = self.module_path(f, ctx);
            child.push(first.clone());
            if self.core.module_paths.contains(&key(&child)) {
                child.extend(path[1..].iter().cloned());
                return child;
            }
        }
        path.to_vec()
    }

    /// A Python path through a module that imports the name rather than
    /// declaring it (`pkg/__init__.py`: `from .core import f`): where the
    /// name comes from.
    fn reexported(&self, path: Vec<String>, depth: u8) -> Vec<String> {
        let asked = (path, depth);
        if let Some(found) = self.reexports.borrow().get(&asked) {
            return found.clone();
        }
        let found = self.reexported_uncached(asked.0.clone(), depth);
        self.reexports.borrow_mut().insert(asked, found.clone());
        found
    }

    fn reexported_uncached(&self, path: Vec<String>, depth: u8) -> Vec<String> {
        if depth >= MAX_ALIASES {
            return path;
        }
        for n in (1..path.len()).rev() {
            let Some(&g) = self.core.by_module.get(&key(&path[..n])) else {
                continue;
            };
            if self.core.by_full.contains_key(&key(&path[..=n])) {
                return path;
            }
            let name = &path[n];
            // A module's names: what its top level imports.
            let import = self.core.files[g as usize]
                .facts
                .imports
                .iter()
                .rev()
                .find(|i| {
                    self.binds_module_name(g, i)
                        && i.kind == ImportKind::Name
                        && i.alias.as_ref().or(i.path.last()) == Some(name)
                });
            let Some(import) = import else {
                return self.through_globs(g, &path, n, depth).unwrap_or(path);
            };
            let mut out = self.expand_at(g, None, &import.path, depth + 1);
            out.extend(path[n + 1..].iter().cloned());
            return self.reexported(out, depth + 1);
        }
        path
    }

    /// Whether an import of file `g` makes a name of its module: in Python
    /// one at the top level (an import in a function binds the name
    /// there); every ES import and export (they stand at the top level,
    /// whatever declaration their line holds).
    fn binds_module_name(&self, g: u32, import: &super::facts::Import) -> bool {
        import.owner.is_none()
            || self.core.files[g as usize]
                .language
                .spec()
                .graph
                .scope
                .modules
                == Modules::FilePath
    }

    /// `path[n]` through the modules module `g` re-exports whole (`from .a
    /// import *`, `export * from "./a"`): the last that declares it, or
    /// re-exports it in turn (a later `import *` binds the name again).
    fn through_globs(&self, g: u32, path: &[String], n: usize, depth: u8) -> Option<Vec<String>> {
        let globs = self.core.files[g as usize]
            .facts
            .imports
            .iter()
            .rev()
            .filter(|i| i.kind == ImportKind::Glob && self.binds_module_name(g, i));
        for glob in globs {
            let mut out = self.expand_at(g, None, &glob.path, depth + 1);
            if out == path[..n] {
                continue;
            }
            out.extend(path[n..].iter().cloned());
            let out = self.reexported(out, depth + 1);
            if self.core.by_full.contains_key(&key(&out)) {
                return Some(out);
            }
        }
        None
    }

    /// The module an ES import names (`./a.js`, `../b`; `.` is the file
    /// itself), from file `f`'s directory: the file, or the directory's
    /// `index`. `None` when no file of the repository is that module.
    fn relative_module(&self, f: u32, spec: &str) -> Option<Vec<String>> {
        if spec == "." {
            return Some(self.core.modules[f as usize].clone());
        }
        let mut segments: Vec<&str> = match self.core.paths[f as usize].rsplit_once('/') {
            Some((dir, _)) => dir.split('/').collect(),
            None => Vec::new(),
        };
        for part in spec.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    segments.pop()?;
                }
                part => segments.push(part),
            }
        }
        let module = file_module(&segments.join("/"));
        if self.core.by_module.contains_key(&key(&module)) {
            return Some(module);
        }
        let mut index: Vec<String> = segments.iter().map(|s| (*s).to_owned()).collect();
        index.push("index".to_owned());
        self.core
            .by_module
            .contains_key(&key(&index))
            .then_some(index)
    }

    /// The package of the repository a Go import path names: the
    /// directory under a module's, and the package its files declare (not
    /// a `_test` package beside it; of several, the one named as the
    /// directory).
    fn go_package(&self, spec: &str) -> Option<Vec<String>> {
        let (dir, rest) = self.core.go_modules.iter().find_map(|(module, root)| {
            let rest = match spec.strip_prefix(module.as_str())? {
                "" => "",
                rest => rest.strip_prefix('/')?,
            };
            Some((root.as_str(), rest))
        })?;
        let dir = match (dir, rest) {
            ("", rest) => rest.to_owned(),
            (dir, "") => dir.to_owned(),
            (dir, rest) => format!("{dir}/{rest}"),
        };
        let packages = self.core.go_packages.get(&dir)?;
        let own: Vec<&Vec<String>> = packages
            .iter()
            .filter(|p| !p.last().is_some_and(|n| n.ends_with("_test")))
            .collect();
        match own.as_slice() {
            [one] => Some((*one).clone()),
            several => several
                .iter()
                .find(|p| p.last().map(String::as_str) == dir.rsplit('/').next())
                .map(|p| (*p).clone()),
        }
    }

    /// The module an ES import of no relative file names when it is a file
    /// of the repository: a path alias (`@/lib/text`, `~/lib`) or a
    /// package of the workspace with a path (`pkg/v4/core`). The longest
    /// tail of the specifier that one module ends with (a directory's
    /// `index` counts as the directory), of two segments or more unless
    /// the specifier starts with an alias word (`@`, `~`, `#`); none when
    /// two modules do. A bare package name (`react`) is no file here.
    fn aliased_module(&self, spec: &str) -> Option<Vec<String>> {
        let parts: Vec<&str> = spec.split('/').filter(|p| !p.is_empty()).collect();
        let aliased = matches!(parts.first(), Some(&("@" | "~" | "#")));
        let shortest = if aliased { 1 } else { 2 };
        for k in 0..parts.len() {
            let tail = &parts[k..];
            if tail.len() < shortest {
                break;
            }
            let candidates = self
                .core
                .by_module_tail
                .get(*tail.last()?)
                .into_iter()
                .flatten();
            let found: Vec<&Vec<String>> = candidates
                .filter(|m| {
                    let named = match m.split_last() {
                        Some((last, dir)) if last == "index" => dir,
                        _ => &m[..],
                    };
                    named.len() >= tail.len()
                        && named[named.len() - tail.len()..]
                            .iter()
                            .zip(tail)
                            .all(|(a, b)| a == b)
                })
                .collect();
            return match found.as_slice() {
                [] => continue,
                [one] => Some((*one).clone()),
                // `a.ts` beside `a/index.ts`: the file, as Node finds it.
                [a, b] if is_index_of(b, a) => Some((*a).clone()),
                [a, b] if is_index_of(a, b) => Some((*b).clone()),
                _ => None,
            };
        }
        None
    }

    /// The containers a bare name is looked up in, nearest first: the
    /// enclosing types and their bases (C#), the module (Rust), the
    /// namespaces and what the file imports.
    fn scope(&self, f: u32, owner: Option<DefRef>) -> std::rc::Rc<Scope> {
        let key = (f, owner.map(|o| o.def));
        if let Some(scope) = self.scopes.borrow().get(&key) {
            return std::rc::Rc::clone(scope);
        }
        let scope = std::rc::Rc::new(self.compute_scope(f, owner));
        self.scopes
            .borrow_mut()
            .insert(key, std::rc::Rc::clone(&scope));
        scope
    }

    fn compute_scope(&self, f: u32, owner: Option<DefRef>) -> Scope {
        let file = self.core.files[f as usize];
        let rules = &file.language.spec().graph.scope;
        let mut types = Vec::new();
        let mut containers: Vec<String> = Vec::new();
        let mut locals: Vec<String> = Vec::new();
        let mut current = owner;
        let mut first_module: Option<String> = None;
        while let Some(c) = current {
            let def = self.def(c);
            if is_callable(def.kind) {
                locals.push(self.info(c).full.clone());
            }
            if is_type_like(def.kind) && rules.members_inherit {
                types.push(c);
            }
            if def.kind == SymbolKind::Namespace {
                // `namespace A.B.C` sees A.B.C, A.B and A.
                let full = &self.info(c).full;
                let parts: Vec<&str> = full.split('\u{1}').collect();
                for n in (1..=parts.len()).rev() {
                    containers.push(parts[..n].join("\u{1}"));
                }
            }
            if is_inline_module(def) && first_module.is_none() {
                first_module = Some(self.info(c).full.clone());
            }
            current = def.parent.map(|p| DefRef {
                file: c.file,
                def: p,
            });
        }
        match rules.modules {
            Modules::Rust | Modules::Python | Modules::FilePath => containers.insert(
                0,
                first_module.unwrap_or_else(|| key(&self.core.modules[f as usize])),
            ),
            Modules::Package | Modules::DirectoryPackage => {
                containers.insert(0, key(&self.core.packages[f as usize]));
                containers.push(String::new());
            }
            Modules::None => containers.push(String::new()),
        }
        let bases = self.all_bases(&types);
        let mut imported = Vec::new();
        let ctx = self.import_context(f, owner.map(|o| o.def));
        let globals = self
            .core
            .global_usings
            .get(&file.language)
            .into_iter()
            .flatten();
        let own = self.imports_in(f, ctx).filter(|i| {
            matches!(
                i.kind,
                ImportKind::Using | ImportKind::UsingStatic | ImportKind::Glob
            )
        });
        for path in own.map(|i| &i.path).chain(globals) {
            imported.push(key(&self.expand(f, ctx, path)));
        }
        Scope {
            locals,
            types,
            bases,
            containers,
            imported,
        }
    }

    fn in_containers(&self, candidates: &[DefRef], containers: &[String]) -> Vec<DefRef> {
        let wanted: HashSet<&str> = containers.iter().map(String::as_str).collect();
        candidates
            .iter()
            .copied()
            .filter(|c| wanted.contains(self.info(*c).container.as_str()))
            .collect()
    }

    /// Resolves one reference of file `f`.
    fn resolve_reference(&self, f: u32, reference: &Reference) -> Found {
        let owner = reference.owner.map(|d| DefRef { file: f, def: d });
        let mut found = Found::new(reference.kind);
        match reference.kind {
            RefKind::Implements => {
                let Some(type_name) = reference.owner_type.as_deref() else {
                    return found;
                };
                let sources = self.type_by_name(f, owner, type_name);
                let targets = self.lookup(f, owner, reference, &|k| is_interface(k));
                for s in sources {
                    for (t, resolution, n) in &targets {
                        found.edges.push((s, *t, *resolution, *n));
                    }
                }
            }
            RefKind::Base => {
                let Some(source) = owner.and_then(|o| self.enclosing_type(o)) else {
                    return found;
                };
                for (t, resolution, n) in self.lookup(f, owner, reference, &is_type_like) {
                    if t != source {
                        found.edges.push((source, t, resolution, n));
                    }
                }
            }
            RefKind::Returns
            | RefKind::CallsParameter
            | RefKind::ReturnType
            | RefKind::TypeValue => {}
            RefKind::Call | RefKind::New | RefKind::Macro => {
                let Some(from) = owner else { return found };
                // The module node calls; its names are looked up as from
                // outside any declaration.
                let at_module;
                let (owner, reference) = if is_module_node(self.def(from)) {
                    at_module = Reference {
                        owner: None,
                        ..reference.clone()
                    };
                    (None, &at_module)
                } else {
                    (owner, reference)
                };
                let mut targets = match reference.kind {
                    RefKind::New => self.constructors(f, owner, reference),
                    RefKind::Macro => self.lookup(f, owner, reference, &|k| k == SymbolKind::Macro),
                    _ => self.lookup(f, owner, reference, &is_callable),
                };
                let spec = &self.core.files[f as usize].language.spec().graph;
                if let (true, RefKind::Call, Some(init), false) = (
                    targets.is_empty(),
                    reference.kind,
                    spec.calls_construct,
                    reference.operator,
                ) {
                    targets = self.construct(f, owner, reference, init);
                }
                if reference.returned {
                    targets = self.returned_by(f, owner, reference, &targets);
                    if reference.returned_again > 0 {
                        // Called again: what that returns (its arguments
                        // are not read).
                        let again = Reference {
                            returned_args: Vec::new(),
                            ..reference.clone()
                        };
                        for _ in 0..reference.returned_again {
                            targets = self.returned_by(f, owner, &again, &targets);
                        }
                    }
                }
                if reference.passed {
                    // Named, not called: only where scope, type or path
                    // finds it.
                    targets.retain(|t| t.1 <= Resolution::Scoped);
                }
                if reference.flow || reference.returned {
                    // Followed through values: never more than scoped.
                    for t in &mut targets {
                        t.1 = t.1.max(Resolution::Scoped);
                    }
                }
                // A callee from outside the repository known to call what
                // it is passed (`map(f, xs)`) calls it for the caller.
                let calls_passed = spec.flow.is_some_and(|flow| {
                    flow.call_what_they_are_passed
                        .contains(&reference.name.as_str())
                });
                // Not for what such a call returns (`for h in sorted(hs): h(x)`).
                if targets.is_empty()
                    && reference.kind == RefKind::Call
                    && calls_passed
                    && !reference.returned
                {
                    for (to, level, n) in self.passed_outside(f, owner, reference) {
                        if to != from {
                            found.edges.push((from, to, level, n));
                        }
                    }
                }
                // Functions passed to a callee that calls its parameters.
                for (t, level, _) in &targets {
                    for (by, to, arg_level, n) in self.passed_and_called(f, owner, reference, *t) {
                        if to != by {
                            found.edges.push((by, to, arg_level.max(*level), n));
                        }
                    }
                }
                found.calls = true;
                found.targets = targets.len();
                // A call of the function it is in (recursion) is an edge
                // too, where scope or type says so: call graphs list it,
                // and traversals start from what they were asked about, so
                // it adds no caller. Matched by name only, it is likelier
                // another object's method of the same name (`get` calling
                // `self._d.get`).
                for (t, resolution, n) in targets {
                    if t != from || resolution <= Resolution::Scoped {
                        found.edges.push((from, t, resolution, n));
                    }
                }
            }
        }
        found
    }

    /// What calling each target returns, where it returns names.
    fn returned_by(
        &self,
        f: u32,
        owner: Option<DefRef>,
        reference: &Reference,
        targets: &[(DefRef, Resolution, u32)],
    ) -> Vec<(DefRef, Resolution, u32)> {
        let mut out: Vec<(DefRef, Resolution, u32)> = Vec::new();
        let spec = &self.core.files[f as usize].language.spec().graph;
        let call_method = spec.flow.as_ref().and_then(|flow| flow.call_method);
        for (t, level, _) in targets {
            // A class called (or its constructor) gives an instance:
            // calling that runs the class's `__call__`, first on its bases.
            let class = match self.def(*t) {
                d if is_type_like(d.kind) => Some(*t),
                d if spec.calls_construct == Some(d.name.as_str()) => d
                    .parent
                    .map(|p| DefRef {
                        file: t.file,
                        def: p,
                    })
                    .filter(|p| is_type_like(self.def(*p).kind)),
                _ => None,
            };
            if let (Some(class), Some(method)) = (class, call_method) {
                let mut order = vec![class];
                order.extend(self.all_bases(&[class]));
                let found = order
                    .iter()
                    .find_map(|c| self.members(&[*c], method, &is_callable).first().copied());
                if let Some(to) = found.filter(|to| !out.iter().any(|o| o.0 == *to)) {
                    out.push((to, *level, 1));
                }
            }
            for r in self.core.returns.get(t).into_iter().flatten() {
                // A returned parameter is what the call site passed.
                let found = match r.param {
                    Some(position) => match argument(&reference.returned_args, &r.name, position) {
                        Some(arg) => self.passed_targets(f, owner, reference, arg),
                        None => Vec::new(),
                    },
                    None => self.call_targets(t.file, Some(*t), r),
                };
                for (to, l, n) in found {
                    if !out.iter().any(|o| o.0 == to) {
                        out.push((to, l.max(*level), n));
                    }
                }
            }
        }
        out
    }

    /// What a name means as a callee (a function, or a type constructed).
    fn call_targets(
        &self,
        f: u32,
        owner: Option<DefRef>,
        reference: &Reference,
    ) -> Vec<(DefRef, Resolution, u32)> {
        let found = self.lookup(f, owner, reference, &is_callable);
        if !found.is_empty() {
            return found;
        }
        match self.core.files[f as usize]
            .language
            .spec()
            .graph
            .calls_construct
        {
            Some(init) => self.construct(f, owner, reference, init),
            None => Vec::new(),
        }
    }

    /// The functions a call passes to `target` that `target` (or a function
    /// nested in it) calls through its parameters: each argument at a called
    /// parameter's position (or keyword), resolved where the call is, with
    /// the function that makes the call.
    fn passed_and_called(
        &self,
        f: u32,
        owner: Option<DefRef>,
        reference: &Reference,
        target: DefRef,
    ) -> Vec<(DefRef, DefRef, Resolution, u32)> {
        let Some(calls) = self.core.param_calls.get(&target) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for call in calls {
            let Some(position) = call.param else { continue };
            // The target, or a function nested in it, makes the call.
            let by = call.owner.map_or(target, |def| DefRef {
                file: target.file,
                def,
            });
            let Some(arg) = argument(&reference.arg_names, &call.name, position) else {
                continue;
            };
            for (to, level, n) in self.passed_targets(f, owner, reference, arg) {
                out.push((by, to, level.max(Resolution::Scoped), n));
            }
        }
        out
    }

    /// The functions the arguments of a call name, each resolved where the
    /// call is, at most scoped.
    fn passed_outside(
        &self,
        f: u32,
        owner: Option<DefRef>,
        reference: &Reference,
    ) -> Vec<(DefRef, Resolution, u32)> {
        let mut out = Vec::new();
        for arg in &reference.arg_names {
            let arg = arg.split_once('=').map_or(arg.as_str(), |(_, v)| v);
            if arg.is_empty() {
                continue;
            }
            let passed = self.name_reference(reference, arg);
            for (to, level, n) in self.lookup(f, owner, &passed, &is_callable) {
                if level <= Resolution::Scoped {
                    out.push((to, Resolution::Scoped, n));
                }
            }
        }
        out
    }

    /// What an argument a call passes (as [`Reference::arg_names`] names
    /// it) is as a callee, resolved where the call is: a name, or what a
    /// call of a name returns (`f()`).
    fn passed_targets(
        &self,
        f: u32,
        owner: Option<DefRef>,
        at: &Reference,
        arg: &str,
    ) -> Vec<(DefRef, Resolution, u32)> {
        match arg.strip_suffix("()") {
            Some(called) => {
                let passed = self.name_reference(at, called);
                let targets = self.call_targets(f, owner, &passed);
                self.returned_by(f, owner, &passed, &targets)
            }
            None => self.call_targets(f, owner, &self.name_reference(at, arg)),
        }
    }

    /// A reference to a dotted name written at `at`'s place.
    fn name_reference(&self, at: &Reference, dotted: &str) -> Reference {
        let mut segments: Vec<String> = dotted.split('.').map(str::to_owned).collect();
        let name = segments.pop().unwrap_or_default();
        let receiver = if segments.is_empty() {
            Receiver::Bare
        } else {
            Receiver::PathOrValue
        };
        Reference {
            kind: RefKind::Call,
            receiver,
            qualifier: segments,
            name,
            args: None,
            arg_types: Vec::new(),
            arg_names: Vec::new(),
            flow: true,
            operator: false,
            returned: false,
            returned_again: 0,
            returned_args: Vec::new(),
            param: None,
            param_depth: 0,
            ..at.clone()
        }
    }

    /// A call of a type where calling a type constructs it: its `init`
    /// method, first on the type and its bases in order, else the type.
    fn construct(
        &self,
        f: u32,
        owner: Option<DefRef>,
        reference: &Reference,
        init: &str,
    ) -> Vec<(DefRef, Resolution, u32)> {
        let types = self.lookup(f, owner, reference, &is_type_like);
        let mut out = Vec::new();
        for (t, resolution, n) in types {
            let mut order = vec![t];
            order.extend(self.all_bases(&[t]));
            let target = order
                .iter()
                .find_map(|c| self.members(&[*c], init, &is_callable).first().copied())
                .unwrap_or(t);
            if !out.iter().any(|(o, _, _)| *o == target) {
                out.push((target, resolution, n));
            }
        }
        out
    }

    /// Type declarations a Rust impl names: in the same file, else the
    /// same crate, else any single one.
    fn type_by_name(&self, f: u32, owner: Option<DefRef>, name: &str) -> Vec<DefRef> {
        let all: Vec<DefRef> = self
            .core
            .by_name
            .get(name)
            .into_iter()
            .flatten()
            .copied()
            .filter(|c| is_type_like(self.def(*c).kind) && !is_interface(self.def(*c).kind))
            .collect();
        let scope = self.scope(f, owner);
        let in_scope = self.in_containers(&all, &scope.containers);
        if !in_scope.is_empty() {
            return in_scope;
        }
        let same_file: Vec<DefRef> = all.iter().copied().filter(|c| c.file == f).collect();
        if !same_file.is_empty() {
            return same_file;
        }
        let krate = self.core.modules[f as usize].first();
        let same_crate: Vec<DefRef> = all
            .iter()
            .copied()
            .filter(|c| self.core.modules[c.file as usize].first() == krate)
            .collect();
        if same_crate.len() == 1 {
            return same_crate;
        }
        if all.len() == 1 {
            all
        } else {
            Vec::new()
        }
    }

    /// `new T(...)`, `: base(...)`, `: this(...)`: the constructors picked
    /// by the arguments, or the type itself when it declares none.
    fn constructors(
        &self,
        f: u32,
        owner: Option<DefRef>,
        reference: &Reference,
    ) -> Vec<(DefRef, Resolution, u32)> {
        let (types, resolution): (Vec<DefRef>, Resolution) = match reference.receiver {
            Receiver::This => (self.own_types(owner), Resolution::Exact),
            Receiver::Base => {
                let own = self.own_types(owner);
                let bases = own
                    .iter()
                    .flat_map(|t| self.hierarchy.bases.get(t).into_iter().flatten())
                    .copied()
                    .filter(|b| !is_interface(self.def(*b).kind))
                    .collect();
                (bases, Resolution::Exact)
            }
            _ => {
                let types = self.lookup(f, owner, reference, &is_type_like);
                let resolution = types.first().map_or(Resolution::Ambiguous, |t| t.1);
                (types.into_iter().map(|t| t.0).collect(), resolution)
            }
        };
        let init = self.core.files[f as usize]
            .language
            .spec()
            .graph
            .constructor_method;
        let mut out = Vec::new();
        for t in &types {
            let name = self.def(*t).name.as_str();
            let ctors = self.members(&[*t], name, &|k| k == SymbolKind::Constructor);
            if !ctors.is_empty() {
                out.extend(pick_overloads(self, ctors, reference));
                continue;
            }
            // A method the language runs on construction (`constructor`),
            // the type's own or its nearest base's; else the type.
            let mut order = vec![*t];
            order.extend(self.all_bases(&[*t]));
            let by_init = init.and_then(|init| {
                order
                    .iter()
                    .find_map(|c| self.members(&[*c], init, &is_callable).first().copied())
            });
            out.push(by_init.unwrap_or(*t));
        }
        let n = out.len() as u32;
        let resolution = if n > 1 {
            Resolution::Ambiguous
        } else {
            resolution
        };
        out.into_iter().map(|t| (t, resolution, n)).collect()
    }

    /// The declarations a name means, by the lookup order of the module docs.
    fn lookup(
        &self,
        f: u32,
        owner: Option<DefRef>,
        reference: &Reference,
        wanted: &dyn Fn(SymbolKind) -> bool,
    ) -> Vec<(DefRef, Resolution, u32)> {
        let name = reference.name.as_str();
        let all: Vec<DefRef> = self
            .core
            .by_name
            .get(name)
            .into_iter()
            .flatten()
            .copied()
            .filter(|c| wanted(self.def(*c).kind))
            .collect();
        if reference.receiver == Receiver::Returned {
            return self.on_returned(f, owner, reference, wanted);
        }
        if all.is_empty() {
            return self.through_alias(f, owner, reference, wanted);
        }
        if reference.receiver == Receiver::Value && reference.qualifier.len() == 1 {
            let rules = &self.core.files[f as usize].language.spec().graph.scope;
            let ctx = self.import_context(f, reference.owner);
            if rules.imports_qualify_values
                && !self.core.go_modules.is_empty()
                && self
                    .package_import(f, ctx, &reference.qualifier[0])
                    .is_some()
            {
                let as_path = Reference {
                    receiver: Receiver::Path,
                    ..reference.clone()
                };
                return self.lookup(f, owner, &as_path, wanted);
            }
        }
        let all = self.by_arity(all, reference);
        let done = |found: Vec<DefRef>, level: Resolution| {
            let found = pick_overloads(self, found, reference);
            let n = found.len() as u32;
            let level = if n > 1 { Resolution::Ambiguous } else { level };
            found.into_iter().map(|t| (t, level, n)).collect::<Vec<_>>()
        };
        match reference.receiver {
            Receiver::This | Receiver::Base => {
                let own = self.own_types(owner);
                if reference.receiver == Receiver::This {
                    let here = self.members(&own, name, wanted);
                    if !here.is_empty() {
                        return done(here, Resolution::Exact);
                    }
                }
                let inherited = self.inherited(&own, name, wanted);
                if !inherited.is_empty() {
                    return done(inherited, Resolution::Exact);
                }
                // Declared by subtypes only (an abstract step): each
                // override is what the call may run.
                if reference.receiver == Receiver::This {
                    let overrides = self.in_subtypes(&own, &all);
                    if !overrides.is_empty() && overrides.len() <= MAX_CANDIDATES {
                        let n = overrides.len() as u32;
                        return overrides
                            .into_iter()
                            .map(|t| (t, Resolution::Scoped, n))
                            .collect();
                    }
                }
            }
            Receiver::Bare => {
                let scope = self.scope(f, owner);
                for local in &scope.locals {
                    let found = self.in_containers(&all, std::slice::from_ref(local));
                    if !found.is_empty() {
                        return done(found, Resolution::Scoped);
                    }
                }
                for group in [&scope.types, &scope.bases] {
                    let found = self.members(group, name, wanted);
                    if !found.is_empty() {
                        return done(found, Resolution::Scoped);
                    }
                }
                for group in [&scope.containers, &scope.imported] {
                    let found = self.in_containers(&all, group);
                    if !found.is_empty() {
                        return done(found, Resolution::Scoped);
                    }
                }
                // An imported name (`use a::b::foo;`, `using X = A.B;`).
                let ctx = self.import_context(f, reference.owner);
                let expanded = self.expand(f, ctx, std::slice::from_ref(&reference.name));
                if expanded.len() > 1 {
                    let found = self.by_suffix(&all, &expanded, &[]);
                    if !found.is_empty() {
                        return done(found, Resolution::Scoped);
                    }
                }
                if self.module_declares(f, &scope, name) {
                    // The file's module declares the name as something
                    // else (`const X = make()`): `new X()` is that value,
                    // no declaration of the name elsewhere.
                    return Vec::new();
                }
            }
            Receiver::Path | Receiver::PathOrValue | Receiver::Typed => {
                if let Some((found, level)) = self.by_path(f, owner, reference, &all, wanted) {
                    // A variable's type is read off its declaration: never
                    // more than scoped.
                    let level = match reference.receiver {
                        Receiver::Typed => level.max(Resolution::Scoped),
                        _ => level,
                    };
                    let mut hits = done(found, level);
                    if reference.receiver == Receiver::Typed {
                        let overrides = self.overrides(f, &hits, reference);
                        if !overrides.is_empty() {
                            // One call, any of these: each counts them all.
                            let n = (hits.len() + overrides.len()) as u32;
                            hits.extend(overrides.into_iter().map(|(t, l)| (t, l, n)));
                            hits.iter_mut().for_each(|hit| hit.2 = n);
                        }
                    }
                    return hits;
                }
                if reference.operator {
                    // An operator runs its operand type's method or
                    // an outside one (`object.__eq__`): no name match.
                    return Vec::new();
                }
                if reference.receiver == Receiver::Typed {
                    let ty = reference.qualifier.last().map_or("", String::as_str);
                    let extensions = self.extensions(&all, ty, reference);
                    if !extensions.is_empty() {
                        return done(extensions, Resolution::Scoped);
                    }
                    // A type of this repository that does not declare the
                    // member: inherited from outside, or a trait's default
                    // method; matched by name below. A type from outside
                    // (`List.Add`) is no call into the repository.
                    if !self.declares_type(ty) {
                        return Vec::new();
                    }
                } else if reference.receiver != Receiver::PathOrValue
                    || self.names_an_outside_type(&reference.qualifier)
                {
                    return Vec::new();
                }
            }
            Receiver::Value | Receiver::Returned => {}
        }
        if reference.passed {
            // A name handed on may be a value's: no match by name alone.
            return Vec::new();
        }
        // By name across the repository: members only for a receiver.
        let pool: Vec<DefRef> = match reference.receiver {
            Receiver::Value | Receiver::PathOrValue => all
                .into_iter()
                .filter(|c| match self.def(*c).parent {
                    // A function nested in a function is no member.
                    Some(p) => !is_callable(
                        self.def(DefRef {
                            file: c.file,
                            def: p,
                        })
                        .kind,
                    ),
                    None => self.info(*c).qual.contains('\u{1}'),
                })
                .collect(),
            _ => all,
        };
        let pool = pick_overloads(self, pool, reference);
        match pool.len() {
            0 => Vec::new(),
            1 => vec![(pool[0], Resolution::UniqueName, 1)],
            n if n <= MAX_CANDIDATES => pool
                .into_iter()
                .map(|t| (t, Resolution::Ambiguous, n as u32))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// A call on what another call returned ([`Receiver::Returned`]): the
    /// callee found as any call is, then the member on the type its
    /// declaration is declared to return, that type read where the callee
    /// is declared. Callees that return different types, or none that
    /// says, leave a value of unknown type (matched by name, as before).
    fn on_returned(
        &self,
        f: u32,
        owner: Option<DefRef>,
        reference: &Reference,
        wanted: &dyn Fn(SymbolKind) -> bool,
    ) -> Vec<(DefRef, Resolution, u32)> {
        let unknown = || Reference {
            receiver: Receiver::Value,
            qualifier: Vec::new(),
            callee_receiver: Receiver::Bare,
            ..reference.clone()
        };
        let Some((callee_name, callee_qualifier)) = reference.qualifier.split_last() else {
            return self.lookup(f, owner, &unknown(), wanted);
        };
        let callee = Reference {
            kind: RefKind::Call,
            receiver: reference.callee_receiver,
            qualifier: callee_qualifier.to_vec(),
            name: callee_name.clone(),
            type_args: 0,
            args: None,
            arg_types: Vec::new(),
            arg_names: Vec::new(),
            returned_args: Vec::new(),
            passed: false,
            callee_receiver: Receiver::Bare,
            ..reference.clone()
        };
        let callees = self.lookup(f, owner, &callee, &is_callable);
        let types: Vec<(DefRef, Vec<String>)> = callees
            .iter()
            .filter_map(|(t, ..)| Some((*t, self.returned_type(*t)?)))
            .collect();
        let Some((at, ty)) = types.first().cloned() else {
            return self.lookup(f, owner, &unknown(), wanted);
        };
        // A type from outside (`Box<dyn T>`, `List<T>`, `error`) says
        // nothing this graph can follow: the value stays unknown.
        if !ty.last().is_some_and(|name| self.declares_type(name))
            || types.len() != callees.len()
            || types.iter().any(|(_, other)| *other != ty)
        {
            return self.lookup(f, owner, &unknown(), wanted);
        }
        let level = callees
            .iter()
            .map(|(_, l, _)| *l)
            .max()
            .unwrap_or(Resolution::Scoped);
        let typed = Reference {
            receiver: Receiver::Typed,
            qualifier: ty,
            owner: Some(at.def),
            callee_receiver: Receiver::Bare,
            ..reference.clone()
        };
        self.lookup(at.file, Some(at), &typed, wanted)
            .into_iter()
            .map(|(t, l, n)| (t, l.max(level), n))
            .collect()
    }

    /// The type the function `callee` is declared to return, as written
    /// where it is declared; Rust's `Self` is the type its impl is of.
    fn returned_type(&self, callee: DefRef) -> Option<Vec<String>> {
        let returned = self.core.return_types.get(&callee)?;
        let graph = &self.core.files[callee.file as usize].language.spec().graph;
        if returned.qualifier.is_empty() && graph.this_words.contains(&returned.name.as_str()) {
            let own = match self.own_types(Some(callee)).as_slice() {
                [one] => *one,
                _ => return None,
            };
            return Some(vec![self.def(own).name.clone()]);
        }
        let mut ty = returned.qualifier.clone();
        ty.push(returned.name.clone());
        Some(ty)
    }

    /// Whether the module file `f` is (Rust, Python, JavaScript) declares
    /// `name` at its top level, of any kind.
    fn module_declares(&self, f: u32, scope: &Scope, name: &str) -> bool {
        let modules = self.core.files[f as usize]
            .language
            .spec()
            .graph
            .scope
            .modules;
        if !matches!(modules, Modules::Rust | Modules::Python | Modules::FilePath) {
            return false;
        }
        let Some(module) = scope.containers.first() else {
            return false;
        };
        let full = if module.is_empty() {
            name.to_owned()
        } else {
            format!("{module}\u{1}{name}")
        };
        self.core.by_full.contains_key(&full)
    }

    /// A bare name imported under another name (`use a::b as c;`, `from m
    /// import f as g`): the declaration it stands for, at most scoped.
    fn through_alias(
        &self,
        f: u32,
        owner: Option<DefRef>,
        reference: &Reference,
        wanted: &dyn Fn(SymbolKind) -> bool,
    ) -> Vec<(DefRef, Resolution, u32)> {
        if reference.receiver != Receiver::Bare {
            return Vec::new();
        }
        let ctx = self.import_context(f, reference.owner);
        let mut expanded = self.expand(f, ctx, std::slice::from_ref(&reference.name));
        let Some(name) = expanded.pop() else {
            return Vec::new();
        };
        if name == reference.name || expanded.is_empty() {
            return Vec::new();
        }
        let renamed = Reference {
            receiver: Receiver::Path,
            qualifier: expanded,
            name,
            ..reference.clone()
        };
        let mut found = self.lookup(f, owner, &renamed, wanted);
        for t in &mut found {
            t.1 = t.1.max(Resolution::Scoped);
        }
        found
    }

    /// `ValueTask.FromResult(x)`, `Substitute.For<T>()`: a capitalized head
    /// that is no local (those are typed, or lower case by convention) and
    /// that nothing in the repository declares is a type from outside.
    /// Whether the repository declares a type (class, struct, ...) of this
    /// name.
    fn declares_type(&self, name: &str) -> bool {
        self.core
            .by_name
            .get(name)
            .is_some_and(|c| c.iter().any(|t| is_type_like(self.def(*t).kind)))
    }

    fn names_an_outside_type(&self, qualifier: &[String]) -> bool {
        qualifier.first().is_some_and(|head| {
            head.starts_with(|c: char| c.is_uppercase())
                && !self.core.by_name.contains_key(head.as_str())
        })
    }

    /// C# extension methods (declared with `this` on their first parameter)
    /// a call on a value of type `ty` can mean: one parameter more than the
    /// call has arguments, the first of that type (or a base of it, or a
    /// type parameter of a generic method).
    fn extensions(&self, all: &[DefRef], ty: &str, reference: &Reference) -> Vec<DefRef> {
        if ty.is_empty() {
            return Vec::new();
        }
        let mut accepted: HashSet<&str> = HashSet::from_iter([ty]);
        let types: Vec<DefRef> = self
            .core
            .by_name
            .get(ty)
            .into_iter()
            .flatten()
            .copied()
            .filter(|t| is_type_like(self.def(*t).kind))
            .collect();
        for base in self.all_bases(&types) {
            accepted.insert(self.def(base).name.as_str());
        }
        all.iter()
            .copied()
            .filter(|c| {
                let def = self.def(*c);
                if !def.extension {
                    return false;
                }
                let Some(inner) = def.sig.strip_prefix('(').and_then(|r| r.strip_suffix(')'))
                else {
                    return false;
                };
                let params = split_params(inner);
                let Some(first) = params.first() else {
                    return false;
                };
                let first = first
                    .split('<')
                    .next()
                    .unwrap_or(first)
                    .trim_end_matches('?');
                let first = first.rsplit('.').next().unwrap_or(first);
                // Optional parameters and `params` arrays take fewer
                // arguments; the overloads are picked later.
                let count_fits = reference.args.is_none_or(|n| {
                    params.len() > n as usize || params.last().is_some_and(|t| t.ends_with("[]"))
                });
                let generic = def.arity > 0 && first.starts_with('T') && !accepted.contains(first);
                count_fits && (accepted.contains(first) || generic)
            })
            .collect()
    }

    /// Of same-named candidates, those with as many type parameters as the
    /// reference writes type arguments (`Foo<int>` is not `Foo`); a type
    /// written without any prefers the non-generic ones. Methods infer
    /// theirs, so a method call without type arguments keeps every one.
    fn by_arity(&self, all: Vec<DefRef>, reference: &Reference) -> Vec<DefRef> {
        let names_a_type = matches!(
            reference.kind,
            RefKind::New | RefKind::Base | RefKind::Implements
        );
        if reference.type_args == 0 && !names_a_type {
            return all;
        }
        let same: Vec<DefRef> = all
            .iter()
            .copied()
            .filter(|c| self.def(*c).arity == reference.type_args)
            .collect();
        if same.is_empty() {
            all
        } else {
            same
        }
    }

    /// Candidates whose full path, or qualname, ends with `path` + name.
    fn by_suffix(&self, all: &[DefRef], path: &[String], extra: &[String]) -> Vec<DefRef> {
        let mut segments = path.to_vec();
        segments.extend(extra.iter().cloned());
        let suffix = key(&segments);
        all.iter()
            .copied()
            .filter(|c| {
                let info = self.info(*c);
                key_ends_with(&info.full, &suffix) || key_ends_with(&info.qual, &suffix)
            })
            .collect()
    }

    /// A qualified name: the qualifier expanded by the file's imports and
    /// path words, then matched against full paths. `None` when the
    /// qualifier leads nowhere in the repository (a value, or an external
    /// type).
    fn by_path(
        &self,
        f: u32,
        owner: Option<DefRef>,
        reference: &Reference,
        all: &[DefRef],
        wanted: &dyn Fn(SymbolKind) -> bool,
    ) -> Option<(Vec<DefRef>, Resolution)> {
        let ctx = self.import_context(f, reference.owner);
        let expanded = self.expand(f, ctx, &reference.qualifier);
        if expanded.is_empty() && !reference.qualifier.is_empty() {
            // Through an import of something outside the repository.
            return None;
        }
        let name = std::slice::from_ref(&reference.name);
        let mut target = expanded.clone();
        target.push(reference.name.clone());
        // Fully qualified, or rooted at a crate of this repository.
        let exact: Vec<DefRef> = self
            .core
            .by_full
            .get(&key(&target))
            .into_iter()
            .flatten()
            .copied()
            .filter(|c| wanted(self.def(*c).kind))
            .collect();
        if !exact.is_empty() {
            return Some((exact, Resolution::Exact));
        }
        // A Python import is absolute: one of a module outside the
        // repository (`import json`) leads nowhere in it, whatever its
        // modules are named (`pkg/json/`).
        let through_import = expanded != reference.qualifier;
        let rules = &self.core.files[f as usize].language.spec().graph.scope;
        if through_import
            && rules.modules == Modules::Python
            && expanded
                .first()
                .is_some_and(|root| !self.core.python_roots.contains(root))
        {
            return None;
        }
        let matches = self.by_suffix(all, &expanded, name);
        if matches.is_empty() {
            // `Type.Member` where the type is in scope but declared as a
            // nested or inherited member: look the qualifier up as a type.
            let qualifier_ref = Reference {
                kind: RefKind::Base,
                receiver: if expanded.len() > 1 {
                    Receiver::Path
                } else {
                    Receiver::Bare
                },
                qualifier: expanded[..expanded.len().saturating_sub(1)].to_vec(),
                name: expanded.last()?.clone(),
                owner: reference.owner,
                owner_type: None,
                args: None,
                arg_types: Vec::new(),
                type_args: 0,
                line: reference.line,
                arg_names: Vec::new(),
                flow: false,
                made: false,
                operator: false,
                returned: false,
                returned_again: 0,
                returned_args: Vec::new(),
                param: None,
                param_depth: 0,
                passed: false,
                callee_receiver: Receiver::Bare,
            };
            if qualifier_ref.name == reference.name {
                return None;
            }
            // The path led nowhere (a module layout this model does not
            // know): `Type::member` by name, if that is unique enough.
            if expanded != reference.qualifier {
                let by_type = self.by_suffix(all, &expanded[expanded.len() - 1..], name);
                if !by_type.is_empty() && by_type.len() <= MAX_CANDIDATES {
                    let level = if by_type.len() == 1 {
                        Resolution::UniqueName
                    } else {
                        Resolution::Ambiguous
                    };
                    return Some((by_type, level));
                }
            }
            let types = self.lookup(f, owner, &qualifier_ref, &is_type_like);
            let types: Vec<DefRef> = types
                .into_iter()
                .filter(|t| t.1 <= Resolution::Scoped)
                .map(|t| t.0)
                .collect();
            if types.is_empty() {
                return None;
            }
            let mut in_types = self.members(&types, &reference.name, wanted);
            if in_types.is_empty() {
                in_types = self.inherited(&types, &reference.name, wanted);
            }
            return (!in_types.is_empty()).then_some((in_types, Resolution::Scoped));
        }
        // Visible from here: in the scope's containers or imports, or the
        // qualifier went through an import or a path word.
        let scope = self.scope(f, owner);
        let visible: Vec<DefRef> = matches
            .iter()
            .copied()
            .filter(|c| {
                let full = &self.info(*c).full;
                let prefix_len = full.len().saturating_sub(key(&target).len());
                let prefix = full[..prefix_len].trim_end_matches('\u{1}');
                scope.containers.iter().any(|s| s == prefix)
                    || scope.imported.iter().any(|s| s == prefix)
            })
            .collect();
        if !visible.is_empty() {
            return Some((visible, Resolution::Scoped));
        }
        if expanded != reference.qualifier {
            return Some((matches, Resolution::Scoped));
        }
        let level = if matches.len() == 1 {
            Resolution::UniqueName
        } else {
            Resolution::Ambiguous
        };
        (matches.len() <= MAX_CANDIDATES).then_some((matches, level))
    }
}

/// A scope's key: (file, declaration in it).
type ScopeKey = (u32, Option<u32>);

struct Scope {
    /// Enclosing functions, nearest first, joined: they see the functions
    /// nested in them before anything else.
    locals: Vec<String>,
    /// Enclosing types (C#), nearest first.
    types: Vec<DefRef>,
    bases: Vec<DefRef>,
    /// Namespaces or the module, joined.
    containers: Vec<String>,
    /// Imported namespaces, static types and glob modules, joined.
    imported: Vec<String>,
}

/// Of several overloads, those whose parameter count (and visible argument
/// types) fit the call; all of them when none or the call shows nothing.
fn pick_overloads(
    index: &DefIndex<'_>,
    candidates: Vec<DefRef>,
    reference: &Reference,
) -> Vec<DefRef> {
    if candidates.len() < 2 {
        return candidates;
    }
    let Some(args) = reference.args else {
        return candidates;
    };
    // An extension method called on a value takes the value as its first
    // parameter: the arguments fill the rest.
    let on_value = matches!(
        reference.receiver,
        Receiver::Typed | Receiver::Value | Receiver::PathOrValue
    );
    let params = |c: &DefRef| -> Option<Vec<String>> {
        let def = index.def(*c);
        let inner = def.sig.strip_prefix('(')?.strip_suffix(')')?;
        let mut all = split_params(inner);
        let own_class = def.parent.map(|p| {
            index
                .def(DefRef {
                    file: c.file,
                    def: p,
                })
                .name
                .as_str()
        });
        let through_class = reference.qualifier.last().map(String::as_str) == own_class;
        if def.extension && on_value && !through_class && !all.is_empty() {
            all.remove(0);
        }
        Some(all)
    };
    let exact: Vec<DefRef> = candidates
        .iter()
        .copied()
        .filter(|c| params(c).is_some_and(|p| p.len() == args as usize))
        .collect();
    // Those that take more may have optional parameters (`x = null`), and
    // a `params` array takes any number.
    let longer: Vec<DefRef> = candidates
        .iter()
        .copied()
        .filter(|c| {
            params(c).is_some_and(|p| {
                p.len() > args as usize
                    || (p.len() != args as usize && p.last().is_some_and(|t| t.ends_with("[]")))
            })
        })
        .collect();
    // Each visible argument scores 2 for its own type, 1 for a type that
    // takes it; the best-scoring overloads remain.
    let typed = reference.arg_types.iter().any(|t| !t.is_empty());
    let best = |group: &[DefRef]| -> Vec<DefRef> {
        let scored: Vec<(DefRef, u32)> = group
            .iter()
            .filter_map(|c| {
                let p = params(c).unwrap_or_default();
                let mut total = 0;
                for (param, arg) in p.iter().zip(&reference.arg_types) {
                    if !arg.is_empty() {
                        total += type_accepts(param, arg)?;
                    }
                }
                Some((*c, total))
            })
            .collect();
        let top = scored.iter().map(|(_, s)| *s).max();
        scored
            .into_iter()
            .filter(|(_, s)| Some(*s) == top)
            .map(|(c, _)| c)
            .collect()
    };
    // Exactly as many parameters as arguments first; those with more only
    // when the visible argument types rule every exact one out (types the
    // resolver cannot relate, a subclass for its base, rule out too: then
    // the count alone decides).
    let fallback = if exact.is_empty() { &longer } else { &exact };
    if fallback.is_empty() {
        return candidates;
    }
    if typed {
        for group in [&exact, &longer] {
            let kept = best(group);
            if !kept.is_empty() {
                return kept;
            }
        }
    }
    fallback.clone()
}

/// The parameters a signature lists: `(Dictionary<K,V>,int)` has two;
/// `()` and a signature without parentheses (Python's) have none.
pub fn sig_parameters(sig: &str) -> Vec<String> {
    sig.strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .map(split_params)
        .unwrap_or_default()
}

/// Top-level commas only: `(Dictionary<K,V>,int)` has two parameters.
fn split_params(inner: &str) -> Vec<String> {
    if inner.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    for c in inner.chars() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    out.push(current);
    out
}

/// How well a parameter of type `param` takes a visible argument type: 2
/// for the same type, 1 for a conversion or a type parameter, `None` when
/// it cannot.
fn type_accepts(param: &str, arg: &str) -> Option<u32> {
    let param = param.trim_end_matches('?');
    fn alias(t: &str) -> &str {
        match t {
            "Int32" | "System.Int32" => "int",
            "String" | "System.String" => "string",
            "Boolean" | "System.Boolean" => "bool",
            "Double" | "System.Double" => "double",
            "Char" | "System.Char" => "char",
            other => other,
        }
    }
    let (param, arg) = (alias(param), alias(arg));
    let plain = param.split('<').next().unwrap_or(param);
    if param == arg || plain.rsplit('.').next() == Some(arg) {
        Some(2)
    } else if param == "object"
        || (arg == "int" && matches!(param, "long" | "double" | "float" | "decimal"))
        || param.len() <= 2
    // a type parameter (`T`)
    {
        Some(1)
    } else {
        None
    }
}

/// What resolving one reference found: (from, to, how, candidates).
struct Found {
    ref_kind: RefKind,
    edges: Vec<(DefRef, DefRef, Resolution, u32)>,
    /// A call looked up: how many targets it names (edges may come
    /// besides, from the functions passed to it).
    calls: bool,
    targets: usize,
}

/// What a call site passes for parameter `name` at `position`: by keyword,
/// else by position (`arg_names` as [`Reference::arg_names`] has them).
fn argument<'r>(arg_names: &'r [String], name: &str, position: u32) -> Option<&'r str> {
    let keyword = format!("{name}=");
    arg_names
        .iter()
        .find_map(|a| a.strip_prefix(keyword.as_str()))
        .or_else(|| {
            arg_names
                .get(position as usize)
                .map(String::as_str)
                .filter(|a| !a.contains('='))
        })
        .filter(|a| !a.is_empty())
}

impl Found {
    fn new(ref_kind: RefKind) -> Found {
        Found {
            ref_kind,
            edges: Vec::new(),
            calls: false,
            targets: 0,
        }
    }

    /// Matched nothing: a call without a target (`map(f, xs)` links `f`,
    /// yet `map` is not in the repository), anything else without an edge.
    fn unresolved(&self) -> bool {
        if self.calls {
            self.targets == 0
        } else {
            self.edges.is_empty()
        }
    }

    fn kind(&self, from: SymbolKind, to: SymbolKind) -> EdgeKind {
        match self.ref_kind {
            RefKind::Call
            | RefKind::New
            | RefKind::Macro
            | RefKind::Returns
            | RefKind::CallsParameter
            | RefKind::ReturnType
            | RefKind::TypeValue => EdgeKind::Calls,
            RefKind::Implements => EdgeKind::Implements,
            RefKind::Base if is_interface(to) && !is_interface(from) => EdgeKind::Implements,
            RefKind::Base => EdgeKind::Inherits,
        }
    }
}

/// The kinds of edges between declarations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    Calls,
    Inherits,
    Implements,
}

impl EdgeKind {
    /// Every kind, each a table of the store's graph.
    pub const ALL: [EdgeKind; 3] = [EdgeKind::Calls, EdgeKind::Inherits, EdgeKind::Implements];

    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Calls => "CALLS",
            EdgeKind::Inherits => "INHERITS",
            EdgeKind::Implements => "IMPLEMENTS",
        }
    }
}

/// An edge between two declarations, by id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Edge {
    pub kind: EdgeKind,
    pub from: String,
    pub to: String,
    pub resolution: Resolution,
    /// How many declarations the reference could mean (1 unless ambiguous).
    pub candidates: u32,
    /// The first line of the file where the reference occurs.
    pub line: u32,
    /// How many references in the file make this edge.
    pub sites: u32,
}

/// Where an import leads: a namespace or module by name, or a file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ImportTarget {
    Module(String),
    File(String),
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ImportEdge {
    pub target: ImportTarget,
    pub kind: ImportKind,
    pub alias: Option<String>,
    pub line: u32,
}

/// Everything one file's references resolve to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileEdges {
    /// Sorted by (kind, from, to); one edge per pair, the most certain.
    pub edges: Vec<Edge>,
    pub imports: Vec<ImportEdge>,
    /// References that matched nothing here, per declaration id.
    pub unresolved: BTreeMap<String, u32>,
    /// Calls that matched nothing here, per name called: what a caller
    /// count is missing (`impact` says its answer is a lower bound).
    pub unresolved_calls: BTreeMap<String, UnresolvedCalls>,
}

/// Calls of one name that no declaration of the repository was found for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnresolvedCalls {
    /// On a receiver or path (`x.name()`, `mod.name()`): its type unknown,
    /// or outside the repository.
    pub qualified: u32,
    /// By a bare name (`name()`) that nothing in scope declares: outside
    /// the repository, or made at run time.
    pub bare: u32,
}

impl FileEdges {
    fn add(&mut self, edge: Edge) {
        let at = self
            .edges
            .binary_search_by(|e| (e.kind, &e.from, &e.to).cmp(&(edge.kind, &edge.from, &edge.to)));
        match at {
            Ok(i) => {
                let e = &mut self.edges[i];
                e.sites += 1;
                e.line = e.line.min(edge.line);
                if (edge.resolution, edge.candidates) < (e.resolution, e.candidates) {
                    e.resolution = edge.resolution;
                    e.candidates = edge.candidates;
                }
            }
            Err(i) => self.edges.insert(i, edge),
        }
    }
}
