//! The code graph at one commit: directories contain files, files contain
//! declarations, declarations contain members; files import namespaces,
//! modules and files; declarations call, inherit and implement others.
//!
//! It is built from per-file [`FileFacts`] (computed once per blob by the
//! language tables) and kept current by re-deriving only what a change can
//! alter: the changed files, and the files whose references mention a name
//! whose declarations changed ([`affected`]). A from-scratch build and any
//! sequence of updates give the same edges; the store holds the result.

pub mod facts;
pub mod resolve;

use std::collections::{BTreeMap, BTreeSet, HashSet};

pub use facts::{Def, FileFacts, HeldFacts, Import, ImportKind, Receiver, RefKind, Reference};
pub use resolve::{
    rust_module, sig_parameters, DefIndex, Edge, EdgeKind, FileEdges, ImportEdge, ImportTarget,
    Resolution, SharedIndex, SourceFile, UnresolvedCalls, MAX_CANDIDATES,
};

/// Bumped whenever facts or resolution change meaning: a graph built with
/// another version is rebuilt from the tree.
pub const GRAPH_VERSION: &str = "21";

/// The qualname of a file's module node: the caller of the code outside
/// any declaration (top-level statements, decorators, initializers).
pub const MODULE_QUALNAME: &str = "<module>";

/// The files whose edges must be derived again after the files in
/// `changed` went from `old` to `new` (both maps hold every file; a path
/// missing from one was added or removed).
pub fn affected(
    old: &BTreeMap<String, SourceFile>,
    new: &BTreeMap<String, SourceFile>,
    changed: &BTreeSet<String>,
) -> BTreeSet<String> {
    let versions = |path: &String| [old.get(path), new.get(path)].into_iter().flatten();
    // A `global using` changes the scope of every file of its language.
    let global = changed.iter().flat_map(versions).any(|f| {
        f.facts
            .imports
            .iter()
            .any(|i| i.kind == ImportKind::GlobalUsing)
    });
    // Go imports are read against the modules' paths, which the imports
    // of every file show.
    if global || resolve::go_modules(old) != resolve::go_modules(new) {
        return new.keys().cloned().collect();
    }
    let mut names: HashSet<String> = HashSet::new();
    for path in changed {
        let side = |f: Option<&SourceFile>| -> BTreeSet<(String, String)> {
            f.map(|f| declared(path, f)).unwrap_or_default()
        };
        let (before, after) = (side(old.get(path)), side(new.get(path)));
        for (name, _) in before.symmetric_difference(&after) {
            names.insert(name.clone());
        }
        if old.contains_key(path) != new.contains_key(path) {
            // A file that comes or goes is a module `mod x;` may name.
            let stem = path.rsplit('/').next().unwrap_or(path);
            let stem = stem.split('.').next().unwrap_or(stem);
            names.insert(stem.to_owned());
            if let Some(dir) = path.rsplit('/').nth(1) {
                names.insert(dir.to_owned());
            }
        }
    }
    // Members are looked up through base types: a type whose bases (or
    // whose bases' members) changed changes what its subtypes see. A
    // function's declared return type, read again, changes what calls on
    // its results run.
    loop {
        let before = names.len();
        for file in new.values() {
            for r in &file.facts.refs {
                if !matches!(
                    r.kind,
                    RefKind::Base | RefKind::Implements | RefKind::ReturnType
                ) || !names.contains(&r.name)
                {
                    continue;
                }
                if let Some(owner) = r.owner.and_then(|o| file.facts.defs.get(o as usize)) {
                    names.insert(owner.name.clone());
                }
                if let Some(t) = &r.owner_type {
                    names.insert(t.clone());
                }
            }
        }
        if names.len() == before {
            break;
        }
    }
    names.extend(made_changed(old, new, changed));
    // A call on a base type's value runs the overrides in its subtypes:
    // a type whose bases changed changes what calls of its members run.
    let types = names.clone();
    let versions = new
        .values()
        .chain(changed.iter().filter_map(|path| old.get(path)));
    for file in versions {
        let defs = &file.facts.defs;
        for d in defs {
            let parent = d.parent.and_then(|p| defs.get(p as usize));
            if parent.is_some_and(|p| resolve::is_type_like(p.kind) && types.contains(&p.name)) {
                names.insert(d.name.clone());
            }
        }
    }
    let mut out: BTreeSet<String> = changed
        .iter()
        .filter(|p| new.contains_key(*p))
        .cloned()
        .collect();
    for (path, file) in new {
        if !out.contains(path) && mentions(&file.facts, &names) {
            out.insert(path.clone());
        }
    }
    out
}

/// The types whose being made changed (languages with the table's
/// `made_here`): a `new T(...)` or `T.class` written or removed decides whether the
/// overrides of `T` and of the bases it inherits from may run, so those
/// types' names, with every base's above them.
fn made_changed(
    old: &BTreeMap<String, SourceFile>,
    new: &BTreeMap<String, SourceFile>,
    changed: &BTreeSet<String>,
) -> HashSet<String> {
    fn made(f: Option<&SourceFile>) -> BTreeSet<&str> {
        f.map(|f| resolve::made_names(f).collect())
            .unwrap_or_default()
    }
    let mut out: HashSet<String> = HashSet::new();
    for path in changed {
        let (before, after) = (made(old.get(path)), made(new.get(path)));
        out.extend(before.symmetric_difference(&after).map(|n| (*n).to_owned()));
    }
    if out.is_empty() {
        return out;
    }
    let versions: Vec<&SourceFile> = new
        .values()
        .chain(changed.iter().filter_map(|path| old.get(path)))
        .collect();
    loop {
        let before = out.len();
        for file in &versions {
            for r in &file.facts.refs {
                if !matches!(r.kind, RefKind::Base | RefKind::Implements) {
                    continue;
                }
                let owner = r.owner.and_then(|o| file.facts.defs.get(o as usize));
                if owner.is_some_and(|o| out.contains(&o.name)) {
                    out.insert(r.name.clone());
                }
            }
        }
        if out.len() == before {
            return out;
        }
    }
}

/// What a file declares, as (own name, identity): a declaration whose
/// identity, base list, returned names or called parameters change changes
/// what its name resolves to, and what calls of it pass on. A Python
/// module's imports are declarations too: others import through it.
fn declared(path: &str, file: &SourceFile) -> BTreeSet<(String, String)> {
    let facts = &file.facts;
    let mut out = BTreeSet::new();
    for r in &facts.refs {
        if !matches!(
            r.kind,
            RefKind::Returns | RefKind::CallsParameter | RefKind::ReturnType
        ) {
            continue;
        }
        // A parameter's call belongs to the function that declares the
        // parameter (`param_depth` declarations out): calls of that
        // function pass what it calls, and their edges start at the
        // declaration that makes the call (a lambda in it, say).
        let caller = r
            .owner
            .and_then(|o| facts.defs.get(o as usize))
            .map_or("", |d| d.qualname.as_str());
        let mut owner = r.owner;
        if r.kind == RefKind::CallsParameter {
            for _ in 0..r.param_depth {
                owner = owner
                    .and_then(|o| facts.defs.get(o as usize))
                    .and_then(|d| d.parent);
            }
        }
        if let Some(owner) = owner.and_then(|o| facts.defs.get(o as usize)) {
            out.insert((
                owner.name.clone(),
                format!(
                    "{path}\0{:?}\0{}\0{}\0{:?}\0{caller}",
                    r.kind,
                    r.qualifier.join("."),
                    r.name,
                    r.param
                ),
            ));
        }
    }
    if matches!(
        file.language.spec().graph.scope.modules,
        crate::lang::refs::Modules::Python | crate::lang::refs::Modules::FilePath
    ) {
        for i in &facts.imports {
            if let Some(local) = i.alias.as_ref().or(i.path.last()) {
                out.insert((
                    local.clone(),
                    format!("{path}\0import\0{}", i.path.join(".")),
                ));
            }
        }
    }
    for (i, d) in facts.defs.iter().enumerate() {
        let parent = d
            .parent
            .and_then(|p| facts.defs.get(p as usize))
            .map_or("", |p| p.qualname.as_str());
        let bases: Vec<&str> = facts
            .refs
            .iter()
            .filter(|r| r.kind == RefKind::Base && r.owner == Some(i as u32))
            .map(|r| r.name.as_str())
            .collect();
        out.insert((
            d.name.clone(),
            format!(
                "{path}\0{}\0{}\0{}\0{parent}\0{}\0{}",
                d.kind.as_str(),
                d.qualname,
                d.sig,
                bases.join(","),
                d.made_only_here
            ),
        ));
    }
    for r in facts.refs.iter().filter(|r| r.kind == RefKind::Implements) {
        if let Some(t) = &r.owner_type {
            out.insert((t.clone(), format!("{path}\0impl\0{t}\0{}", r.name)));
        }
    }
    out
}

fn mentions(facts: &FileFacts, names: &HashSet<String>) -> bool {
    if names.is_empty() {
        return false;
    }
    // What a call passes is looked up by name too (`ensure_sync(self.f)()`
    // calls `f`; `f(x=g)` passes `g`).
    let passes = |values: &[String]| {
        values
            .iter()
            .any(|v| v.split(['.', '=']).any(|segment| names.contains(segment)))
    };
    let refs = facts.refs.iter().any(|r| {
        names.contains(&r.name)
            || r.qualifier.iter().any(|q| names.contains(q))
            || r.owner_type.as_ref().is_some_and(|t| names.contains(t))
            || passes(&r.arg_names)
            || passes(&r.returned_args)
    });
    refs || facts.imports.iter().any(|i| {
        i.path.iter().any(|p| names.contains(p))
            || i.alias.as_ref().is_some_and(|a| names.contains(a))
    })
}

/// The directories of a set of file paths, each with its parent (`""` is
/// the root): what `CONTAINS` links between directories and to files.
pub fn directories<'a>(paths: impl IntoIterator<Item = &'a str>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for path in paths {
        let mut dir = path;
        while let Some((parent, _)) = dir.rsplit_once('/') {
            let grand = parent.rsplit_once('/').map_or("", |(g, _)| g);
            if out.insert(parent.to_owned(), grand.to_owned()).is_some() {
                break;
            }
            dir = parent;
        }
    }
    out
}

/// The directory a file is in (`""` for the root).
pub fn parent_dir(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

#[cfg(test)]
mod tests;
