//! Keeps the code graph in the store current with `HEAD`.
//!
//! After each index run the graph moves to the new `HEAD`: the files whose
//! blob changed since the graph's commit are parsed (reusing what the run
//! parsed already), and the edges of those files and of the files that
//! mention a name they declare(d) are derived again
//! (`diffidx_core::codegraph::affected`), with the files whose rows a
//! history load changed. Of the files derived, only those whose rows differ
//! from the digest of the rows stored are written; nothing else is touched.
//! With no graph yet, or one of another version, every file is derived: a
//! from-scratch build, which updates must always equal.
//!
//! The store says which blob of each file the graph describes; the facts of
//! those blobs are kept beside it ([`FactFiles`]).

mod facts;
mod query;

pub use facts::FactFiles;
pub use query::{graph, impact, GraphAnswer, GraphQuery, ImpactAnswer, Reached, Touched};

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use diffidx_core::codegraph::{self, DefIndex, FileFacts, SourceFile, GRAPH_VERSION};
use diffidx_core::differ::ParsedFacts;
use diffidx_core::git::{FileSide, Repo};
use diffidx_core::{Language, SymbolDiffer};

use crate::graph::code::{CodeRows, DirContains, DirectoryNode, RowDigests, RowKind};
use crate::store::codegraph::{GraphWrite, RowsDigest, StoredSource};
use crate::store::{Store, StoreError};

/// What one update did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GraphReport {
    pub commit: String,
    /// Built from nothing (no graph yet, or of another version).
    pub full: bool,
    /// Files read (their blob changed), and files whose edges were derived.
    pub parsed: usize,
    /// Of the files read, those whose facts the index run's diffing had
    /// found already (not parsed again).
    pub reused: usize,
    /// Of the files read, those whose facts were kept from an earlier
    /// graph (not parsed again).
    pub kept: usize,
    pub derived: usize,
    /// Of the files derived, those whose rows differ from the stored ones
    /// (the others are left alone).
    pub written: usize,
    /// Files in the tree the graph describes.
    pub files: usize,
    /// Where the update's time went, stage by stage (`--timings`).
    pub stages: GraphStages,
}

/// The time of each stage of one graph update.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GraphStages {
    /// Reading the stored facts of the graph's files.
    pub load: std::time::Duration,
    /// Parsing the files whose blob changed.
    pub parse: std::time::Duration,
    /// Choosing the files to derive again, indexing the declarations and
    /// resolving their references.
    pub resolve: std::time::Duration,
    /// Writing the rows that changed to the store.
    pub write: std::time::Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    #[error(transparent)]
    Core(#[from] diffidx_core::Error),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What an index run already knows of the commit the graph moves to.
#[derive(Default)]
pub struct Known {
    /// A commit's source files ([`source_files`]), listed before the run
    /// diffed; used when it is the commit the graph moves to.
    pub files: Option<(diffidx_core::ObjectId, Vec<FileSide>)>,
    /// Facts of blobs the run's differs parsed (they keep those of the
    /// listed files).
    pub facts: ParsedFacts,
}

/// The files of `commit` the graph describes: those of a known language.
pub fn source_files(
    repo: &Repo,
    commit: diffidx_core::ObjectId,
) -> Result<Vec<FileSide>, diffidx_core::Error> {
    Ok(repo
        .tree_files(commit)?
        .into_iter()
        .filter(|f| Language::from_path(&f.path).is_some())
        .collect())
}

/// Moves the graph to `commit` (normally `HEAD`). Does nothing when it is
/// there already and no history load wrote symbols of its files since.
/// `known` is what the run found already; the files it does not give
/// facts of are parsed here.
/// The declarations of the files it read go to `fresh`, with their words
/// (for the search index, which reads the same parse), without the
/// references and imports.
pub fn update(
    store: &Store,
    differ: &mut SymbolDiffer<'_>,
    commit: diffidx_core::ObjectId,
    known: Known,
    fresh: &mut BTreeMap<String, Arc<FileFacts>>,
) -> Result<Option<GraphReport>, GraphError> {
    let repo: &Repo = differ.repo();
    let fact_files = FactFiles::new(crate::state::StateDir::of(repo).graph_facts());
    let state = store.graph_state()?;
    let sha = commit.to_string();
    let current = state.version.as_deref() == Some(GRAPH_VERSION);
    // Files whose stored rows a history load changed (it drops their
    // digest): written again, so that their lines are the tree's.
    let outdated: BTreeSet<String> = state
        .sources
        .iter()
        .filter(|s| !state.digests.contains_key(&s.path))
        .map(|s| s.path.clone())
        .collect();
    if current && state.commit.as_deref() == Some(sha.as_str()) && outdated.is_empty() {
        return Ok(None);
    }
    let mut stages = GraphStages::default();
    let started = std::time::Instant::now();
    let mut old: BTreeMap<String, SourceFile> = BTreeMap::new();
    let mut old_blobs: BTreeMap<String, String> = BTreeMap::new();
    if current {
        let wanted: Vec<(&str, &str)> = state
            .sources
            .iter()
            .map(|s| (s.path.as_str(), s.blob.as_str()))
            .collect();
        let read = fact_files.read_many(&wanted, crate::settings::diff_threads());
        for (stored, facts) in state.sources.iter().zip(read) {
            let (Some(language), Some(facts)) = (Language::from_name(&stored.language), facts)
            else {
                continue; // missing or unreadable: parsed again below
            };
            old.insert(
                stored.path.clone(),
                SourceFile {
                    language,
                    facts: Arc::new(facts),
                },
            );
            old_blobs.insert(stored.path.clone(), stored.blob.clone());
        }
    }
    let tree = match known.files {
        Some((listed, files)) if listed == commit => files,
        _ => source_files(repo, commit)?,
    };
    let changed_sides: Vec<_> = tree
        .iter()
        .filter(|f| {
            old_blobs.get(&f.path) != Some(&f.blob.to_string()) || !old.contains_key(&f.path)
        })
        .cloned()
        .collect();
    // A partial clone fetches what it lacks in one go.
    if repo.promisor_remote().is_some() {
        let wanted: Vec<_> = changed_sides
            .iter()
            .map(|s| diffidx_core::git::FileChange {
                old: None,
                new: Some(s.clone()),
            })
            .collect();
        let missing = repo.lacking(&wanted, |_| true);
        if !missing.is_empty() {
            let _ = repo.fetch_missing(&missing);
        }
    }
    let mut new = old.clone();
    let mut sources = Vec::new();
    let mut changed: BTreeSet<String> = BTreeSet::new();
    let in_tree: BTreeSet<&str> = tree.iter().map(|f| f.path.as_str()).collect();
    let removed: Vec<String> = old
        .keys()
        .filter(|p| !in_tree.contains(p.as_str()))
        .cloned()
        .collect();
    for path in &removed {
        new.remove(path);
        changed.insert(path.clone());
    }
    stages.load = started.elapsed();
    let started = std::time::Instant::now();
    let (read, reused, kept) = facts_of(differ, &changed_sides, known.facts, &fact_files)?;
    let mut unwritten = Vec::with_capacity(changed_sides.len());
    for ((side, facts), was_kept) in changed_sides.iter().zip(read).zip(&kept) {
        let language = Language::from_path(&side.path).expect("filtered to source files");
        // An unreadable file (binary, too large, missing) is in the tree
        // with nothing in it.
        let facts = facts.unwrap_or_default();
        let blob = side.blob.to_string();
        if !was_kept {
            unwritten.push((side.path.clone(), blob.clone(), Arc::clone(&facts)));
        }
        sources.push(StoredSource {
            path: side.path.clone(),
            blob,
            language: language.name().to_owned(),
        });
        new.insert(side.path.clone(), SourceFile { language, facts });
        changed.insert(side.path.clone());
    }
    // Without a file's old facts, the names it declared are unknown, and so
    // are the files whose edges pointed into them: every file is derived
    // again (and only what differs written).
    let facts_lost = old.len() < state.sources.len();
    stages.parse = started.elapsed();
    let started = std::time::Instant::now();
    let rederived = if current && !facts_lost {
        let mut rederived = codegraph::affected(&old, &new, &changed);
        rederived.extend(outdated.into_iter().filter(|p| new.contains_key(p)));
        rederived
    } else {
        new.keys().cloned().collect()
    };
    // After a reset nothing is stored to compare with.
    let stored_digests = if current {
        state.digests
    } else {
        HashMap::new()
    };
    let prune = !sources.is_empty() || !removed.is_empty();
    // The new facts go to their files on another thread while this one
    // resolves and writes the store: creating a file can cost most of a
    // millisecond (this machine's ext4), and a graph built from scratch
    // writes one per source file. A fact file missing when the store
    // names its blob is a cache miss, never a wrong graph.
    let report = std::thread::scope(|scope| -> Result<GraphReport, GraphError> {
        let writing = &fact_files;
        scope.spawn(move || writing.write_all(unwritten));
        let index = DefIndex::new(&new);
        let Derived {
            rows,
            replaced,
            digests,
        } = derive(
            &index,
            &new,
            &rederived,
            &stored_digests,
            crate::settings::diff_threads(),
        );
        drop(index);
        let file_set_changed = !current
            || !removed.is_empty()
            || changed_sides.iter().any(|s| !old.contains_key(&s.path));
        let directories = file_set_changed.then(|| directory_rows(new.keys().map(String::as_str)));
        let mut report = GraphReport {
            commit: sha.clone(),
            full: !current,
            parsed: changed_sides.len(),
            reused,
            kept: kept.iter().filter(|k| **k).count(),
            derived: rederived.len(),
            written: digests.len(),
            files: new.len(),
            stages,
        };
        // What comes after the graph (the search index's words, the
        // semantic chunks) reads only the declarations: the references and
        // imports go before the store's writes, which hold tens of MiB
        // (App-vNext/Polly: 15 MiB of facts decoded, most of it references).
        drop(old);
        for side in &changed_sides {
            if let Some(file) = new.remove(&side.path) {
                fresh.insert(side.path.clone(), declarations_of(file.facts));
            }
        }
        drop(new);
        report.stages.resolve = started.elapsed();
        let started = std::time::Instant::now();
        store.write_graph(&GraphWrite {
            commit: sha,
            version: GRAPH_VERSION.to_owned(),
            reset: !current,
            first: state.commit.is_none() && state.sources.is_empty(),
            removed,
            sources,
            replaced,
            rows,
            digests,
            directories,
        })?;
        report.stages.write = started.elapsed();
        Ok(report)
    })?;
    if prune {
        // The files of blobs neither this graph nor the one before it
        // describes: a checkout and back parses nothing again.
        let live: Vec<(&str, String)> = tree
            .iter()
            .map(|f| (f.path.as_str(), f.blob.to_string()))
            .collect();
        let before = state
            .sources
            .iter()
            .map(|s| (s.path.as_str(), s.blob.as_str()));
        fact_files.keep_only(
            live.iter()
                .map(|(path, blob)| (*path, blob.as_str()))
                .chain(before),
        );
    }
    Ok(Some(report))
}

/// The rows of the files derived again that differ from those stored.
#[derive(Default)]
struct Derived {
    rows: CodeRows,
    /// For each kind of rows, the files whose rows of that kind differ.
    replaced: BTreeMap<RowKind, Vec<String>>,
    /// The new digests of those files.
    digests: Vec<RowsDigest>,
}

/// Resolves the references of `paths` and keeps the kinds of their rows
/// that differ from the digests `stored`, on `threads` threads: each
/// file's resolution only reads the index, and on sympy/sympy resolving
/// 1,070 files and digesting their rows took a second on one.
fn derive(
    index: &DefIndex,
    files: &BTreeMap<String, SourceFile>,
    paths: &BTreeSet<String>,
    stored: &HashMap<String, RowDigests>,
    threads: usize,
) -> Derived {
    let paths: Vec<&String> = paths.iter().collect();
    let threads = threads.clamp(1, paths.len().max(1));
    let derive_every = |index: &DefIndex, first: usize| {
        let mut out = Derived::default();
        for path in paths.iter().skip(first).step_by(threads) {
            let Some(file) = files.get(*path) else {
                continue;
            };
            let mut of_file = CodeRows::default();
            of_file.add_file(path, file.language, &file.facts, index.resolve_file(path));
            let digest = of_file.digests();
            let differ = |kind| digest.differ(stored.get(*path), kind);
            if !RowKind::ALL.into_iter().any(differ) {
                continue; // stored as they are
            }
            for kind in RowKind::ALL.into_iter().filter(|k| differ(*k)) {
                out.replaced.entry(kind).or_default().push((*path).clone());
            }
            out.rows.append(of_file, differ);
            out.digests.push(RowsDigest {
                path: (*path).clone(),
                digest: digest.text(),
            });
        }
        out
    };
    let shared = index.share();
    let parts: Vec<Derived> = std::thread::scope(|scope| {
        let workers: Vec<_> = (1..threads)
            .map(|first| {
                let shared = shared.clone();
                scope.spawn(move || derive_every(&shared.index(), first))
            })
            .collect();
        let mut parts = vec![derive_every(index, 0)];
        for worker in workers {
            match worker.join() {
                Ok(part) => parts.push(part),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        parts
    });
    let mut all = Derived::default();
    for part in parts {
        all.rows.append(part.rows, |_| true);
        for (kind, paths) in part.replaced {
            all.replaced.entry(kind).or_default().extend(paths);
        }
        all.digests.extend(part.digests);
    }
    all
}

/// The declarations of `facts` alone: taken when no one else holds them
/// (the fact-file writer may still), else copied.
fn declarations_of(facts: Arc<FileFacts>) -> Arc<FileFacts> {
    let defs = Arc::try_unwrap(facts).map_or_else(|shared| shared.defs.clone(), |own| own.defs);
    Arc::new(FileFacts {
        defs,
        ..FileFacts::default()
    })
}

/// The facts of `sides`, in order: those in `parsed` as they are, those
/// kept in `files` read, the rest parsed (on two threads when there are
/// many); with how many were in `parsed`, and which were read from `files`.
type SideFacts = Vec<Option<Arc<FileFacts>>>;
fn facts_of(
    differ: &mut SymbolDiffer<'_>,
    sides: &[diffidx_core::git::FileSide],
    parsed: ParsedFacts,
    files: &FactFiles,
) -> Result<(SideFacts, usize, Vec<bool>), GraphError> {
    // Decoded once and shared: two paths may hold the same blob.
    let mut decoded: HashMap<_, Arc<FileFacts>> = HashMap::new();
    let mut known: Vec<Option<Arc<FileFacts>>> = sides
        .iter()
        .map(|side| {
            let key = (side.blob, Language::from_path(&side.path)?);
            if let Some(facts) = decoded.get(&key) {
                return Some(Arc::clone(facts));
            }
            let facts = Arc::new(parsed.get(&key)?.facts()?);
            decoded.insert(key, Arc::clone(&facts));
            Some(facts)
        })
        .collect();
    drop(parsed);
    let reused = known.iter().filter(|f| f.is_some()).count();
    let missing: Vec<usize> = (0..sides.len()).filter(|i| known[*i].is_none()).collect();
    let blobs: Vec<String> = missing.iter().map(|i| sides[*i].blob.to_string()).collect();
    let wanted: Vec<(&str, &str)> = missing
        .iter()
        .zip(&blobs)
        .map(|(i, blob)| (sides[*i].path.as_str(), blob.as_str()))
        .collect();
    let mut kept = vec![false; sides.len()];
    for (i, facts) in missing
        .iter()
        .zip(files.read_many(&wanted, crate::settings::diff_threads()))
    {
        if let Some(facts) = facts {
            known[*i] = Some(Arc::new(facts));
            kept[*i] = true;
        }
    }
    let unparsed: Vec<_> = sides
        .iter()
        .zip(&known)
        .filter(|(_, facts)| facts.is_none())
        .map(|(side, _)| side.clone())
        .collect();
    let mut read = diffidx_core::differ::parallel::file_facts(
        differ,
        &unparsed,
        crate::settings::diff_threads(),
    )?
    .into_iter();
    for facts in known.iter_mut().filter(|f| f.is_none()) {
        *facts = read.next().flatten().map(Arc::new);
    }
    Ok((known, reused, kept))
}

/// Every directory of the tree (the root is `""`), and what each contains.
fn directory_rows<'a>(
    paths: impl Iterator<Item = &'a str> + Clone,
) -> (Vec<DirectoryNode>, Vec<DirContains>, Vec<DirContains>) {
    let dirs = codegraph::directories(paths.clone());
    let mut nodes = vec![DirectoryNode {
        path: String::new(),
    }];
    let mut to_dirs = Vec::new();
    for (dir, parent) in &dirs {
        nodes.push(DirectoryNode { path: dir.clone() });
        to_dirs.push(DirContains {
            parent: parent.clone(),
            child: dir.clone(),
        });
    }
    let to_files = paths
        .map(|p| DirContains {
            parent: codegraph::parent_dir(p).to_owned(),
            child: p.to_owned(),
        })
        .collect();
    (nodes, to_dirs, to_files)
}
