//! RAPTOR-style summaries of the hierarchy: each file summarized from its
//! text, each directory from its children's summaries, each summary
//! embedded beside the chunks, so that a question about a whole module
//! ("where is billing configured?") finds the module even when no single
//! chunk says it.
//!
//! The tree lives in `.git/diffidx/semantic/summaries.json`, of the
//! semantic index's commit. An index run asks again only where the input
//! changed: a file whose blob changed, a directory one of whose children's
//! summaries changed. So an edit costs its file and its ancestors, never
//! the tree. Questions go through the answer cache and the run's budget; a
//! directory waits until all its children are summarized. A directory with
//! one child takes the child's summary (asking would only paraphrase it).
//!
//! Queries use the tree through [`SummaryVectors`]: the nearest summaries
//! name directories and files whose own best chunks then join the vector
//! ranking (`SemanticSearcher::rank_mean`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use diffidx_core::git::Repo;
use diffidx_core::ObjectId;
use diffidx_semantic::cache::cache_key;
use diffidx_semantic::prompts::{file_summary_request, module_summary_request, summary_text};
use diffidx_semantic::{ModelPin, VectorCache};
use serde::{Deserialize, Serialize};

use super::chat::Asker;
use super::{hex, unhex, EmbedSource, SemanticError, SemanticIndex};
use crate::state::StateDir;

/// Changes when what the tree holds changes meaning.
const TREE_VERSION: u32 = 1;

/// One summarized file or directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummaryNode {
    /// What it was made from: a file's blob, a directory's children digest.
    pub input: String,
    pub summary: String,
    /// The cache key of the summary's vector, hex.
    pub vector: String,
}

/// `summaries.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummaryTree {
    pub version: u32,
    /// The chat model that wrote the summaries (`provider:model`).
    pub model: String,
    /// The embedding model of their vectors.
    pub embedding: ModelPin,
    pub commit: String,
    /// Files by path.
    pub files: BTreeMap<String, SummaryNode>,
    /// Directories by path (`""` is the root).
    pub directories: BTreeMap<String, SummaryNode>,
    /// Files and directories left without a summary by the last run.
    pub left: usize,
}

impl SummaryTree {
    fn path(state: &StateDir) -> PathBuf {
        state.semantic().join("summaries.json")
    }

    pub fn read(state: &StateDir) -> Option<SummaryTree> {
        let bytes = std::fs::read(Self::path(state)).ok()?;
        serde_json::from_slice::<SummaryTree>(&bytes)
            .ok()
            .filter(|t| t.version == TREE_VERSION)
    }

    fn write(&self, state: &StateDir) -> Result<(), SemanticError> {
        let path = Self::path(state);
        let failed = |e: String| SemanticError::Index {
            path: path.clone(),
            reason: e,
        };
        let bytes = serde_json::to_vec(self).map_err(|e| failed(e.to_string()))?;
        let part = path.with_extension("json.part");
        std::fs::write(&part, bytes).map_err(|e| failed(e.to_string()))?;
        std::fs::rename(&part, &path).map_err(|e| failed(e.to_string()))
    }
}

/// What an update of the summary tree did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeReport {
    /// Files and directories summarized anew this run.
    pub files: usize,
    pub directories: usize,
    /// Questions asked of the model, and answered from the cache.
    pub asked: usize,
    pub cached: usize,
    /// Summaries embedded this run.
    pub embedded: usize,
    /// Files and directories still without a summary (the budget ran out,
    /// or the model failed: `failed` says why).
    pub left: usize,
    pub failed: Option<String>,
    pub model: String,
}

/// The directory of `path` (`""` for a file at the root).
fn parent(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

fn name_in(path: &str) -> &str {
    path.rfind('/').map_or(path, |i| &path[i + 1..])
}

/// The text embedded for a summary.
fn embedded_text(path: &str, directory: bool, summary: &str) -> String {
    match directory {
        true => format!("directory {path}/\n{summary}"),
        false => format!("file {path}\n{summary}"),
    }
}

/// Brings the summary tree to the semantic index, within the asker's
/// limit.
pub fn update(
    repo: &Repo,
    state: &StateDir,
    source: &EmbedSource,
    asker: &mut Asker<'_>,
) -> Result<Option<TreeReport>, SemanticError> {
    let Some(index) = SemanticIndex::read(state) else {
        return Ok(None);
    };
    let old =
        SummaryTree::read(state).filter(|t| t.model == asker.name() && t.embedding == index.model);
    // Up to date: nothing to ask, embed or write.
    if old
        .as_ref()
        .is_some_and(|t| t.commit == index.commit && t.left == 0)
    {
        return Ok(None);
    }
    let (mut old_files, mut old_dirs) = match old {
        Some(t) => (t.files, t.directories),
        None => Default::default(),
    };
    let mut report = TreeReport {
        model: asker.name().to_owned(),
        ..TreeReport::default()
    };
    let (asked_before, cached_before) = (asker.asked, asker.cached);
    let failed_before = asker.failed.is_some();

    let mut files = BTreeMap::new();
    let mut pending: BTreeSet<String> = BTreeSet::new();
    for (path, chunks) in &index.files {
        if chunks.chunks.is_empty() {
            continue;
        }
        if let Some(kept) = old_files.remove(path).filter(|n| n.input == chunks.blob) {
            files.insert(path.clone(), kept);
            continue;
        }
        let summary = ObjectId::from_hex(chunks.blob.as_bytes())
            .ok()
            .and_then(|b| repo.blob(b).ok())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .and_then(|text| asker.ask_within("file", &file_summary_request(path, &text)))
            .and_then(|answer| summary_text(&answer.text));
        match summary {
            Some(summary) => {
                report.files += 1;
                files.insert(
                    path.clone(),
                    SummaryNode {
                        input: chunks.blob.clone(),
                        summary,
                        vector: String::new(),
                    },
                );
            }
            None => {
                pending.insert(path.clone());
            }
        }
    }

    // Directories, deepest first, each from its children.
    let mut children: BTreeMap<String, BTreeSet<(String, bool)>> = BTreeMap::new();
    for path in index
        .files
        .iter()
        .filter(|(_, f)| !f.chunks.is_empty())
        .map(|(p, _)| p)
    {
        let mut child = (path.clone(), false);
        let mut dir = parent(path).to_owned();
        loop {
            children.entry(dir.clone()).or_default().insert(child);
            if dir.is_empty() {
                break;
            }
            child = (dir.clone(), true);
            dir = parent(&dir).to_owned();
        }
    }
    let mut order: Vec<&String> = children.keys().collect();
    order.sort_by_key(|d| {
        std::cmp::Reverse(if d.is_empty() {
            0
        } else {
            d.matches('/').count() + 1
        })
    });
    let mut directories: BTreeMap<String, SummaryNode> = BTreeMap::new();
    for dir in order {
        let kids = &children[dir];
        let mut parts: Vec<(&str, &str)> = Vec::with_capacity(kids.len());
        for (path, is_dir) in kids {
            let node = match is_dir {
                true => directories.get(path),
                false => files.get(path),
            };
            if let Some(node) = node {
                parts.push((name_in(path), node.summary.as_str()));
            }
        }
        if parts.len() < kids.len() {
            pending.insert(format!("{dir}/"));
            continue;
        }
        let mut digest = blake3::Hasher::new();
        for (name, summary) in &parts {
            digest.update(name.as_bytes());
            digest.update(&[0]);
            digest.update(summary.as_bytes());
            digest.update(&[0]);
        }
        let input = digest.finalize().to_hex().to_string();
        if let Some(kept) = old_dirs.remove(dir).filter(|n| n.input == input) {
            directories.insert(dir.clone(), kept);
            continue;
        }
        let summary = match parts.as_slice() {
            [(_, only)] => Some((*only).to_owned()),
            _ => asker
                .ask_within("directory", &module_summary_request(dir, &parts))
                .and_then(|answer| summary_text(&answer.text)),
        };
        match summary {
            Some(summary) => {
                report.directories += 1;
                directories.insert(
                    dir.clone(),
                    SummaryNode {
                        input,
                        summary,
                        vector: String::new(),
                    },
                );
            }
            None => {
                pending.insert(format!("{dir}/"));
            }
        }
    }
    report.left = pending.len();
    if !failed_before {
        report.failed = asker.failed.clone();
    }
    report.asked = asker.asked - asked_before;
    report.cached = asker.cached - cached_before;

    // Every summary's vector, embedding only those the cache lacks.
    let mut cache = VectorCache::open(&state.semantic().join("vectors"))?;
    let mut missing: Vec<(diffidx_semantic::cache::CacheKey, String)> = Vec::new();
    for (directory, nodes) in [(false, &mut files), (true, &mut directories)] {
        for (path, node) in nodes.iter_mut() {
            let text = embedded_text(path, directory, &node.summary);
            let key = cache_key(&index.model, &text);
            node.vector = hex(&key);
            if cache.get(&key).is_none() && !missing.iter().any(|(k, _)| *k == key) {
                missing.push((key, text));
            }
        }
    }
    if !missing.is_empty() {
        let mut model = source.embedder()?;
        if model.pin() != &index.model {
            return Err(SemanticError::ModelMismatch {
                indexed: index.model.label(),
                configured: model.pin().label(),
            });
        }
        for batch in missing.chunks(64) {
            let texts: Vec<&str> = batch.iter().map(|(_, t)| t.as_str()).collect();
            for ((key, _), vector) in batch.iter().zip(model.embed(&texts)?) {
                cache.put(*key, vector);
            }
            cache.save()?;
            report.embedded += batch.len();
        }
    }
    SummaryTree {
        version: TREE_VERSION,
        model: asker.name().to_owned(),
        embedding: index.model.clone(),
        commit: index.commit.clone(),
        files,
        directories,
        left: report.left,
    }
    .write(state)?;
    Ok(Some(report))
}

/// The summaries' vectors, for queries.
pub struct SummaryVectors {
    /// Per summary: the path it covers, and whether it is a directory.
    pub nodes: Vec<(String, bool)>,
    pub vectors: Vec<f32>,
}

impl SummaryVectors {
    /// The tree's vectors, if there is a tree of the index's model. A
    /// directory covering more than half of `files` (the root, a lone `src`)
    /// is left out: it points nowhere in particular.
    pub fn load(
        state: &StateDir,
        pin: &ModelPin,
        cache: &VectorCache,
        files: &[&str],
    ) -> Option<SummaryVectors> {
        let tree = SummaryTree::read(state).filter(|t| &t.embedding == pin)?;
        let mut nodes = Vec::new();
        let mut vectors = Vec::new();
        for (directory, map) in [(false, &tree.files), (true, &tree.directories)] {
            for (path, node) in map {
                let covered = || {
                    let node = (path.clone(), directory);
                    files.iter().filter(|f| Self::covers(&node, f)).count()
                };
                if directory && files.len() > 1 && covered() * 2 > files.len() {
                    continue;
                }
                let Some(v) = unhex(&node.vector).and_then(|k| cache.get(&k)) else {
                    continue;
                };
                if v.len() == pin.dim {
                    nodes.push((path.clone(), directory));
                    vectors.extend_from_slice(v);
                }
            }
        }
        (!nodes.is_empty()).then_some(SummaryVectors { nodes, vectors })
    }

    /// Whether `file` is under the summary `node`.
    pub fn covers(node: &(String, bool), file: &str) -> bool {
        match node.1 {
            false => node.0 == file,
            true => {
                node.0.is_empty()
                    || (file.starts_with(&node.0)
                        && file.as_bytes().get(node.0.len()) == Some(&b'/'))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_split_into_directories_and_names() {
        assert_eq!(parent("src/a/b.rs"), "src/a");
        assert_eq!(parent("b.rs"), "");
        assert_eq!(name_in("src/a/b.rs"), "b.rs");
        assert!(SummaryVectors::covers(&("src".into(), true), "src/a.rs"));
        assert!(!SummaryVectors::covers(&("src".into(), true), "srcx/a.rs"));
        assert!(SummaryVectors::covers(&(String::new(), true), "a.rs"));
        assert!(SummaryVectors::covers(&("a.rs".into(), false), "a.rs"));
    }
}
