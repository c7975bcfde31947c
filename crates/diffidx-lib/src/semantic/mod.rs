//! The semantic index: a vector per chunk of every live symbol, beside the
//! graph, for `search --semantic` (opt-in: git config `diffidx.embed.model`,
//! see [`configured_source`]).
//!
//! It lives in `.git/diffidx/semantic/`: `index.json` lists, per file at the
//! code graph's commit, the blob it was chunked from and its chunks (id,
//! symbol id, cache key); `vectors` is the append-only
//! [`VectorCache`](diffidx_semantic::VectorCache) the vectors come from. An
//! index run re-chunks only files whose blob changed and embeds only chunks
//! the cache lacks, so unchanged code is never embedded twice. `rebuild`
//! leaves the directory alone: the index is checked against the tree, and
//! the cache is keyed by content.
//!
//! The model is pinned: an index made by another model (name, weights or
//! parameters) is remade whole by the next index run, and a search with a
//! model other than the index's is an error, never a comparison of vectors
//! from two models.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use diffidx_core::codegraph::FileFacts;
use diffidx_core::symbol::symbol_id;
use diffidx_core::{Language, ObjectId, SymbolDiffer};
use diffidx_semantic::cache::{cache_key, CacheKey};
use diffidx_semantic::chunk::ChunkSymbol;
use diffidx_semantic::embed::ModelFiles;
use diffidx_semantic::llm::{Provider, ServiceConfig, ServiceEmbedder};
use diffidx_semantic::{chunk_file, ChunkBudget, Embedder, ModelPin, VectorCache};
use serde::{Deserialize, Serialize};

use crate::state::StateDir;
use crate::store::{Store, StoreError};

pub mod chat;
pub mod deltas;
pub mod steps;
pub mod tree;
pub mod tune;

/// Changes when what the index holds changes meaning (chunking rules
/// included): an older index is remade.
pub const SEMANTIC_VERSION: u32 = 1;

/// Chunks embedded per model call (and cache save).
const EMBED_BATCH: usize = 256;

#[derive(Debug, thiserror::Error)]
pub enum SemanticError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Core(#[from] diffidx_core::Error),
    #[error(transparent)]
    Embed(#[from] diffidx_semantic::EmbedError),
    #[error(transparent)]
    Cache(#[from] diffidx_semantic::CacheError),
    #[error(transparent)]
    Answers(#[from] diffidx_semantic::answers::AnswerCacheError),
    #[error("the chat model: {0}")]
    Llm(diffidx_semantic::llm::LlmError),
    #[error("the chat model's answer for {what} says nothing usable: {answer:?}")]
    Answer { what: &'static str, answer: String },
    #[error(
        "no chat model is configured; set `git config diffidx.llm.model MODEL` (and \
         diffidx.llm.host, diffidx.llm.provider) to use one (docs/semantic.md)"
    )]
    ChatNotConfigured,
    #[error("the semantic index {path}: {reason}")]
    Index { path: PathBuf, reason: String },
    #[error(
        "the semantic index was made by the model {indexed}, and diffidx.embed.model is {configured}; \
         `git diffidx index` remakes it with the configured model"
    )]
    ModelMismatch { indexed: String, configured: String },
    #[error("{0}")]
    Setting(String),
    #[error("the code graph's commit is not an object id: {0}")]
    GraphCommit(String),
    #[error(
        "there is no semantic index yet; `git diffidx index` makes it (with diffidx.embed.model set and \
         diffidx.embed.onDemand unset); without one only a question of four words or more, without \
         --hyde, is answered (by vectors made on demand)"
    )]
    Missing,
    #[error(
        "the semantic layer is off; turn it on with `git config diffidx.embed.model MODEL_DIR` \
         and run `git diffidx index` (docs/semantic.md)"
    )]
    NotConfigured,
}

impl SemanticError {
    /// A setup the user must change (exit 2), not a failure.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            SemanticError::ModelMismatch { .. }
                | SemanticError::Missing
                | SemanticError::NotConfigured
                | SemanticError::ChatNotConfigured
                | SemanticError::Setting(_)
                | SemanticError::Embed(diffidx_semantic::EmbedError::ModelFile { .. })
                | SemanticError::Embed(diffidx_semantic::EmbedError::Model { .. })
        )
    }
}

/// One chunk as the index keeps it (its text is not kept: the cache key
/// stands for it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkRef {
    pub id: String,
    pub symbol: String,
    /// The cache key of its vector, hex.
    pub key: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChunks {
    pub blob: String,
    pub chunks: Vec<ChunkRef>,
}

/// Which weights file a pin was computed from, as the filesystem says:
/// while it is the same, the pin is not computed again (that reads the
/// whole file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WeightsFile {
    pub path: String,
    pub len: u64,
    pub modified_ns: u128,
}

impl WeightsFile {
    fn of(model_dir: &Path) -> Option<WeightsFile> {
        let path = model_dir.join("model.safetensors");
        let (len, modified_ns) = file_stamp(&path)?;
        Some(WeightsFile {
            path: path.to_string_lossy().into_owned(),
            len,
            modified_ns,
        })
    }
}

/// A file's length and modification time (nanoseconds), if it is there.
fn file_stamp(path: &Path) -> Option<(u64, u128)> {
    let meta = std::fs::metadata(path).ok()?;
    let modified = meta.modified().ok()?;
    let ns = modified
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    Some((meta.len(), ns))
}

/// What a loaded [`SemanticSearcher`] and the fusion weights of its model
/// were made from: the configured source and the files of the semantic
/// index (and of a local model). The query server keeps them loaded while
/// this stays the same; an index run or a new model changes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SemanticStamp {
    source: String,
    files: Vec<Option<(u64, u128)>>,
}

impl SemanticStamp {
    pub fn of(state: &StateDir, source: &EmbedSource) -> SemanticStamp {
        let dir = state.semantic();
        let mut paths: Vec<PathBuf> = ["index.json", "vectors", "fusion.json", "summaries.json"]
            .iter()
            .map(|name| dir.join(name))
            .collect();
        let source = match source {
            EmbedSource::Local(model) => {
                paths.extend(
                    ["model.safetensors", "tokenizer.json", "config.json"]
                        .iter()
                        .map(|name| model.join(name)),
                );
                format!("local {}", model.display())
            }
            EmbedSource::Service(service) => {
                format!("{:?} {} {}", service.provider, service.host, service.model)
            }
        };
        SemanticStamp {
            source,
            files: paths.iter().map(|p| file_stamp(p)).collect(),
        }
    }
}

/// `index.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SemanticIndex {
    pub version: u32,
    pub model: ModelPin,
    pub weights: Option<WeightsFile>,
    /// The code graph's commit the files are of.
    pub commit: String,
    pub files: BTreeMap<String, FileChunks>,
}

impl SemanticIndex {
    pub fn path(state: &StateDir) -> PathBuf {
        state.semantic().join("index.json")
    }

    /// The index, if one is there and readable (a damaged one is remade).
    fn read(state: &StateDir) -> Option<SemanticIndex> {
        let bytes = std::fs::read(Self::path(state)).ok()?;
        serde_json::from_slice::<SemanticIndex>(&bytes)
            .ok()
            .filter(|i| i.version == SEMANTIC_VERSION)
    }

    /// Writes it whole, then renames it over the old one.
    fn write(&self, state: &StateDir) -> Result<(), SemanticError> {
        let path = Self::path(state);
        let failed = |e: std::io::Error| SemanticError::Index {
            path: path.clone(),
            reason: e.to_string(),
        };
        std::fs::create_dir_all(state.semantic()).map_err(failed)?;
        let part = path.with_extension("json.part");
        let bytes = serde_json::to_vec(self).map_err(|e| SemanticError::Index {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        std::fs::write(&part, bytes).map_err(failed)?;
        std::fs::rename(&part, &path).map_err(failed)
    }

    pub fn chunks(&self) -> usize {
        self.files.values().map(|f| f.chunks.len()).sum()
    }
}

/// What an update of the semantic index did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SemanticReport {
    /// Remade whole (no index, an older one, another model).
    pub full: bool,
    /// Files chunked again (their blob changed), and files dropped.
    pub files: usize,
    pub dropped: usize,
    /// Chunks the index holds.
    pub chunks: usize,
    /// Chunks embedded by the model this run, and found in the cache.
    pub embedded: usize,
    pub cached: usize,
    pub embed_time: Duration,
    /// The model, as pinned.
    pub model: String,
}

/// Where vectors come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmbedSource {
    /// A model directory run in-process (the default).
    Local(PathBuf),
    /// An embedding service (Ollama, OpenAI-compatible).
    Service(ServiceConfig),
}

impl EmbedSource {
    /// Whether `index` was made by this source as it is now, as far as that
    /// is known without reading the weights or asking the service.
    fn unchanged_since(&self, index: &SemanticIndex) -> bool {
        match self {
            EmbedSource::Local(dir) => {
                let weights = WeightsFile::of(dir);
                weights.is_some() && index.weights == weights
            }
            EmbedSource::Service(config) => {
                index.weights.is_none()
                    && index.model.name == format!("{}:{}", config.provider.as_str(), config.model)
            }
        }
    }

    /// Reads the model's files, or probes the service, once: the pin comes
    /// from that, and so does the embedder if one is needed.
    fn open(&self) -> Result<OpenedSource, SemanticError> {
        Ok(match self {
            EmbedSource::Local(dir) => OpenedSource::Local(ModelFiles::read(dir)?),
            EmbedSource::Service(config) => {
                OpenedSource::Service(ServiceEmbedder::new(config.clone())?)
            }
        })
    }

    fn embedder(&self) -> Result<Box<dyn Embedder>, SemanticError> {
        self.open()?.embedder()
    }

    fn weights(&self) -> Option<WeightsFile> {
        match self {
            EmbedSource::Local(dir) => WeightsFile::of(dir),
            EmbedSource::Service(_) => None,
        }
    }
}

/// A source whose pin is known; a local model not yet built.
enum OpenedSource {
    Local(ModelFiles),
    Service(ServiceEmbedder),
}

impl OpenedSource {
    fn pin(&self) -> &ModelPin {
        match self {
            OpenedSource::Local(files) => files.pin(),
            OpenedSource::Service(service) => service.pin(),
        }
    }

    fn embedder(self) -> Result<Box<dyn Embedder>, SemanticError> {
        Ok(match self {
            OpenedSource::Local(files) => Box::new(files.build()?),
            OpenedSource::Service(service) => Box::new(service),
        })
    }
}

/// Whether the semantic layer embeds on demand only (git config
/// `diffidx.embed.onDemand true`): index runs embed nothing, and a question
/// asked with `search --semantic` has the chunks of its first candidates
/// embedded then ([`OnDemand`]). For a repository whose whole tree would
/// take the model hours.
pub fn embeds_on_demand(repo: &diffidx_core::git::Repo) -> bool {
    repo.config_string("diffidx.embed.onDemand")
        .is_some_and(|v| matches!(v.trim(), "true" | "yes" | "on" | "1"))
}

/// The embedding source git config names, if the semantic layer is on:
/// `diffidx.embed.model` (a directory for the default provider `local`,
/// relative to the work tree; a model name for a service), and for a
/// service `diffidx.embed.provider` (`ollama`, `openai`),
/// `diffidx.embed.host`, `diffidx.embed.timeout` (seconds),
/// `diffidx.embed.retries` and `diffidx.embed.apiKeyEnv` (the environment
/// variable holding the API key; default `OPENAI_API_KEY` for `openai`).
pub fn configured_source(
    repo: &diffidx_core::git::Repo,
) -> Option<Result<EmbedSource, SemanticError>> {
    let value = repo.config_string("diffidx.embed.model")?;
    let value = value.trim();
    if value.is_empty() || matches!(value, "off" | "false" | "none") {
        return None;
    }
    let provider = repo
        .config_string("diffidx.embed.provider")
        .unwrap_or_else(|| "local".into());
    if provider.trim().eq_ignore_ascii_case("local") {
        let path = PathBuf::from(value);
        return Some(Ok(EmbedSource::Local(
            match (path.is_relative(), repo.work_dir()) {
                (true, Some(dir)) => dir.join(path),
                _ => path,
            },
        )));
    }
    Some(service_config(repo, "diffidx.embed", &provider, value).map(EmbedSource::Service))
}

/// A model service from the git config keys under `section`:
/// `.host` (the provider's default when unset), `.timeout` (seconds),
/// `.retries` and `.apiKeyEnv` (the environment variable holding the API
/// key; default `OPENAI_API_KEY` or `OLLAMA_API_KEY`).
pub(crate) fn service_config(
    repo: &diffidx_core::git::Repo,
    section: &str,
    provider: &str,
    model: &str,
) -> Result<ServiceConfig, SemanticError> {
    let Some(provider) = Provider::parse(provider) else {
        return Err(SemanticError::Setting(format!(
            "{section}.provider is {provider:?}; it takes {}",
            match section {
                "diffidx.embed" => "local, ollama or openai",
                _ => "ollama or openai",
            }
        )));
    };
    let key = |name: &str| format!("{section}.{name}");
    let host = repo
        .config_string(&key("host"))
        .unwrap_or_else(|| match provider {
            Provider::Ollama => "http://localhost:11434".into(),
            Provider::OpenAi => "https://api.openai.com/v1".into(),
        });
    let mut config = ServiceConfig::new(provider, &host, model);
    if let Some(secs) = repo.config_integer(&key("timeout")).filter(|&s| s > 0) {
        config.timeout = Duration::from_secs(secs as u64);
    }
    if let Some(n) = repo.config_integer(&key("retries")).filter(|&n| n >= 0) {
        config.retries = n as u32;
    }
    let key_var = repo
        .config_string(&key("apiKeyEnv"))
        .unwrap_or_else(|| match provider {
            Provider::OpenAi => "OPENAI_API_KEY".into(),
            Provider::Ollama => "OLLAMA_API_KEY".into(),
        });
    Ok(config.api_key_from_env(&key_var))
}

/// Brings the semantic index to the files at the store's graph commit.
/// `fresh` holds the declarations of files the run parsed at that commit.
pub fn update(
    store: &Store,
    state: &StateDir,
    differ: &mut SymbolDiffer<'_>,
    source: &EmbedSource,
    fresh: &BTreeMap<String, std::sync::Arc<FileFacts>>,
) -> Result<Option<SemanticReport>, SemanticError> {
    let Some(commit) = store.reader()?.graph_commit()? else {
        return Ok(None);
    };
    let old = SemanticIndex::read(state);
    // Up to date: of this commit, by the same model (a hook run with
    // nothing new reads no model file and asks no service).
    if old
        .as_ref()
        .is_some_and(|i| i.commit == commit && source.unchanged_since(i))
    {
        return Ok(None);
    }
    let opened = source.open()?;
    let pin = opened.pin().clone();
    let old = old.filter(|i| i.model == pin);
    let mut report = SemanticReport {
        full: old.is_none(),
        model: pin.label(),
        ..SemanticReport::default()
    };
    let mut old_files = old.map(|i| i.files).unwrap_or_default();
    let commit_id = ObjectId::from_hex(commit.as_bytes()).map_err(|e| SemanticError::Index {
        path: SemanticIndex::path(state),
        reason: format!("the graph's commit {commit}: {e}"),
    })?;
    let repo = differ.repo();
    let mut files = BTreeMap::new();
    let mut texts: Vec<(CacheKey, String)> = Vec::new();
    for side in repo.tree_files(commit_id)? {
        let Some(language) = Language::from_path(&side.path) else {
            continue;
        };
        let blob = side.blob.to_string();
        if let Some(kept) = old_files.remove(&side.path).filter(|f| f.blob == blob) {
            files.insert(side.path, kept);
            continue;
        }
        let facts = match fresh.get(&side.path) {
            Some(facts) => Some(facts.clone()),
            None => differ
                .file_facts(side.blob, &side.path)?
                .map(std::sync::Arc::new),
        };
        // A file without symbols for us (too large, binary, invalid UTF-8)
        // is kept with no chunks, so it is not read again until it changes.
        let text = match facts {
            Some(_) => String::from_utf8(repo.blob(side.blob)?).ok(),
            None => None,
        };
        let chunks = match (&facts, &text) {
            (Some(facts), Some(text)) => chunks_of(&side.path, language, text, facts),
            _ => Vec::new(),
        };
        let mut refs = Vec::with_capacity(chunks.len());
        for chunk in chunks {
            let key = cache_key(&pin, &chunk.text);
            refs.push(ChunkRef {
                id: chunk.id,
                symbol: chunk.symbol_id,
                key: hex(&key),
            });
            texts.push((key, chunk.text));
        }
        report.files += 1;
        files.insert(side.path, FileChunks { blob, chunks: refs });
    }
    report.dropped = old_files.len();

    let mut cache = VectorCache::open(&state.semantic().join("vectors"))?;
    let mut missing: Vec<(CacheKey, String)> = Vec::new();
    let mut queued = std::collections::HashSet::new();
    for (key, text) in texts {
        if cache.get(&key).is_some() {
            report.cached += 1;
        } else if queued.insert(key) {
            missing.push((key, text));
        }
    }
    let started = Instant::now();
    // The model is built only when something needs embedding.
    let mut model = match missing.is_empty() {
        true => None,
        false => Some(opened.embedder()?),
    };
    for batch in missing.chunks(EMBED_BATCH) {
        let Some(model) = model.as_mut() else { break };
        let batch_texts: Vec<&str> = batch.iter().map(|(_, t)| t.as_str()).collect();
        let vectors = model.embed(&batch_texts)?;
        if vectors.len() != batch.len() || model.pin() != &pin {
            return Err(SemanticError::Index {
                path: state.semantic(),
                reason: format!("the model changed during the run (now {})", model.pin()),
            });
        }
        for ((key, _), vector) in batch.iter().zip(vectors) {
            cache.put(*key, vector);
        }
        // Saved as it goes: a run killed here keeps what it embedded.
        cache.save()?;
        report.embedded += batch.len();
    }
    report.embed_time = started.elapsed();
    let index = SemanticIndex {
        version: SEMANTIC_VERSION,
        model: pin,
        weights: source.weights(),
        commit,
        files,
    };
    report.chunks = index.chunks();
    index.write(state)?;
    Ok(Some(report))
}

/// One vector per live symbol of the semantic index: the normalized mean
/// of its chunks' vectors (what a shared graph stores on the symbol).
#[derive(Debug, Clone, PartialEq)]
pub struct SymbolVectors {
    /// The index's commit and model: when either changes, they are pushed
    /// again.
    pub stamp: String,
    /// The model, as pinned (`ModelPin::label`).
    pub model: String,
    pub dim: usize,
    /// (symbol id, vector), by id.
    pub rows: Vec<(String, Vec<f32>)>,
}

/// The symbols' vectors of the semantic index, if there is one (a chunk
/// whose vector the cache lost is left out).
pub fn symbol_vectors(state: &StateDir) -> Result<Option<SymbolVectors>, SemanticError> {
    let Some(index) = SemanticIndex::read(state) else {
        return Ok(None);
    };
    let cache = VectorCache::open(&state.semantic().join("vectors"))?;
    let dim = index.model.dim;
    let mut sums: BTreeMap<&str, Vec<f32>> = BTreeMap::new();
    for chunk in index.files.values().flat_map(|f| &f.chunks) {
        let Some(v) = unhex(&chunk.key).and_then(|k| cache.get(&k)) else {
            continue;
        };
        if v.len() != dim {
            continue;
        }
        let sum = sums
            .entry(chunk.symbol.as_str())
            .or_insert_with(|| vec![0.0; dim]);
        sum.iter_mut().zip(v).for_each(|(a, x)| *a += x);
    }
    let rows = sums
        .into_iter()
        .map(|(id, mut v)| {
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 0.0 {
                v.iter_mut().for_each(|x| *x /= norm);
            }
            (id.to_owned(), v)
        })
        .collect();
    Ok(Some(SymbolVectors {
        stamp: format!("{} {}", index.commit, index.model.label()),
        model: index.model.label(),
        dim,
        rows,
    }))
}

/// The chunks of one file, from the facts of its parse.
fn chunks_of(
    path: &str,
    language: Language,
    text: &str,
    facts: &FileFacts,
) -> Vec<diffidx_semantic::Chunk> {
    let ids: Vec<String> = facts
        .defs
        .iter()
        .map(|d| symbol_id(path, d.kind, &d.qualname, &d.sig))
        .collect();
    // The module node is the whole file, a nested function part of its
    // function's text: no chunk of their own.
    let symbols: Vec<ChunkSymbol<'_>> = facts
        .defs
        .iter()
        .zip(&ids)
        .filter(|(d, _)| !d.graph_only())
        .map(|(d, id)| ChunkSymbol {
            symbol_id: id,
            kind: d.kind.as_str(),
            qualname: &d.qualname,
            sig: &d.sig,
            parent: d.parent.map(|p| p as usize),
            lines: d.lines,
        })
        .collect();
    chunk_file(
        path,
        language.name(),
        text,
        &symbols,
        ChunkBudget::default(),
    )
}

fn hex(key: &CacheKey) -> String {
    blake3::Hash::from_bytes(*key).to_hex().to_string()
}

fn unhex(text: &str) -> Option<CacheKey> {
    blake3::Hash::from_hex(text).ok().map(|h| *h.as_bytes())
}

/// The semantic index loaded for queries, with its model.
pub struct SemanticSearcher {
    model: Box<dyn Embedder>,
    /// Per chunk: its symbol, its file and its vector.
    symbols: Vec<String>,
    paths: Vec<String>,
    vectors: Vec<f32>,
    dim: usize,
    /// File and directory summaries (`tree`), when there are any.
    summaries: Option<tree::SummaryVectors>,
}

/// How many symbols a summary in the running brings (its files' best by
/// their own similarity).
const SUMMARY_SYMBOLS: usize = 3;

impl SemanticSearcher {
    /// Loads the index and the configured model; they must agree.
    pub fn load(state: &StateDir, source: &EmbedSource) -> Result<SemanticSearcher, SemanticError> {
        let index = SemanticIndex::read(state).ok_or(SemanticError::Missing)?;
        let model = source.embedder()?;
        if *model.pin() != index.model {
            return Err(SemanticError::ModelMismatch {
                indexed: index.model.label(),
                configured: model.pin().label(),
            });
        }
        let cache = VectorCache::open(&state.semantic().join("vectors"))?;
        let dim = index.model.dim;
        let mut symbols = Vec::with_capacity(index.chunks());
        let mut paths = Vec::with_capacity(index.chunks());
        let mut vectors = Vec::with_capacity(index.chunks() * dim);
        for (path, file) in &index.files {
            for chunk in &file.chunks {
                // A vector lost from the cache (a damaged file) loses its
                // chunk until the next index run embeds it again.
                let Some(v) = unhex(&chunk.key).and_then(|k| cache.get(&k)) else {
                    continue;
                };
                if v.len() == dim {
                    symbols.push(chunk.symbol.clone());
                    paths.push(path.clone());
                    vectors.extend_from_slice(v);
                }
            }
        }
        let files: Vec<&str> = index
            .files
            .iter()
            .filter(|(_, f)| !f.chunks.is_empty())
            .map(|(p, _)| p.as_str())
            .collect();
        let summaries = tree::SummaryVectors::load(state, &index.model, &cache, &files);
        Ok(SemanticSearcher {
            model,
            symbols,
            paths,
            vectors,
            dim,
            summaries,
        })
    }

    /// Symbols by the best similarity of one of their chunks to `query`,
    /// best first, at most `limit`.
    pub fn rank(&mut self, query: &str, limit: usize) -> Result<Vec<(String, f32)>, SemanticError> {
        self.rank_mean(&[query], limit)
    }

    /// [`rank`](Self::rank) by the mean of the vectors of `texts` (HyDE:
    /// the question and the code written for it, as the method's paper
    /// does), normalized.
    pub fn rank_mean(
        &mut self,
        texts: &[&str],
        limit: usize,
    ) -> Result<Vec<(String, f32)>, SemanticError> {
        let vectors = self.model.embed(texts)?;
        let mut q = vec![0f32; self.dim];
        for v in &vectors {
            for (acc, x) in q.iter_mut().zip(v) {
                *acc += x;
            }
        }
        let norm = q.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 && vectors.len() > 1 {
            q.iter_mut().for_each(|x| *x /= norm);
        }
        let mut best: HashMap<&str, (f32, &str)> = HashMap::new();
        for (i, symbol) in self.symbols.iter().enumerate() {
            let v = &self.vectors[i * self.dim..(i + 1) * self.dim];
            let score = diffidx_semantic::cosine(&q, v);
            let entry = best
                .entry(symbol.as_str())
                .or_insert((f32::MIN, self.paths[i].as_str()));
            entry.0 = entry.0.max(score);
        }
        let mut ranked: Vec<(&str, f32, &str)> =
            best.into_iter().map(|(s, (v, p))| (s, v, p)).collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        let Some(summaries) = &self.summaries else {
            ranked.truncate(limit);
            return Ok(ranked
                .into_iter()
                .map(|(s, v, _)| (s.to_owned(), v))
                .collect());
        };
        // RAPTOR's collapsed tree: chunks and summaries compete in one
        // pool by similarity; a summary in the running stands for the best
        // symbols of the files it covers.
        let mut pool: Vec<(f32, Option<&str>, Option<usize>)> = ranked
            .iter()
            .take(limit)
            .map(|(s, v, _)| (*v, Some(*s), None))
            .collect();
        for i in 0..summaries.nodes.len() {
            let v = &summaries.vectors[i * self.dim..(i + 1) * self.dim];
            pool.push((diffidx_semantic::cosine(&q, v), None, Some(i)));
        }
        pool.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.2.is_some().cmp(&b.2.is_some())));
        let mut out: Vec<(String, f32)> = Vec::with_capacity(limit);
        let mut taken: std::collections::HashSet<&str> = std::collections::HashSet::new();
        for (score, symbol, node) in pool {
            if out.len() >= limit {
                break;
            }
            let brought: Vec<&str> = match (symbol, node) {
                (Some(symbol), _) => vec![symbol],
                (None, Some(i)) => ranked
                    .iter()
                    .filter(|(s, _, p)| {
                        !taken.contains(s) && tree::SummaryVectors::covers(&summaries.nodes[i], p)
                    })
                    .take(SUMMARY_SYMBOLS)
                    .map(|(s, _, _)| *s)
                    .collect(),
                (None, None) => Vec::new(),
            };
            for symbol in brought {
                if taken.insert(symbol) && out.len() < limit {
                    out.push((symbol.to_owned(), score));
                }
            }
        }
        Ok(out)
    }

    pub fn model(&self) -> &ModelPin {
        self.model.pin()
    }

    /// `query` ranked by names, BM25 over `text_query` and vectors (of the
    /// query, or of its mean with `code`: HyDE), fused by `params`: a
    /// semantic search without the chat model's steps, answered where the
    /// parts are loaded (this process, or the query server that keeps them).
    pub fn search(
        &mut self,
        reader: &crate::store::Reader<'_>,
        names: &crate::search::Searcher,
        params: crate::search::HybridParams,
        query: &crate::search::SearchQuery,
        text_query: &str,
        code: Option<&str>,
    ) -> Result<crate::search::SearchAnswer, SemanticError> {
        let wanted = crate::search::candidates(query.limit);
        // A question (not a name, not expanded by HyDE) is ranked by its own
        // signals with the vectors as one more: on the localization bench's
        // instances with vectors, function Acc@5 53.8 against 23.1 for the
        // reciprocal-rank fusion (docs/search.md).
        if code.is_none() && !crate::search::Question::is_short(&query.query) {
            let vectors = self.rank(
                &query.query,
                crate::search::RankParams::default().candidates,
            )?;
            return Ok(names.search_with_vectors(
                reader,
                query,
                &crate::search::RankParams::default(),
                &vectors,
            )?);
        }
        let vectors = match code {
            Some(code) => self.rank_mean(&[&query.query, code], wanted)?,
            None => self.rank(&query.query, wanted)?,
        };
        Ok(names.hybrid_expanded(reader, query, text_query, &vectors, params)?)
    }
}

/// How many of a question's first candidates on-demand vectors re-read:
/// on the localization bench, 40 put the gold function in reach for 100 of
/// 157 instances at 2-10 s of embedding each, cold (docs/search.md).
pub const ON_DEMAND_CANDIDATES: usize = 40;

/// The vectors' weight when they re-read a question's first candidates
/// (measured: 0.25, 0.5 and 1 gave function Acc@5 46.5, 46.5 and 49.0 on
/// the localization bench, and 1 held in every leave-one-repository-out
/// fold; docs/search.md).
pub const ON_DEMAND_WEIGHT: f64 = 1.0;

/// Vectors made when a question asks for them, without a semantic index:
/// the words rank the symbols, the model reads the chunks of the first
/// [`ON_DEMAND_CANDIDATES`] (embedding only those the vector cache lacks,
/// and keeping them there), and the ranking is taken again with their
/// similarity as one more signal. A large repository gets the model's
/// judgement without embedding its whole tree first.
pub struct OnDemand {
    model: Box<dyn Embedder>,
    cache: VectorCache,
    /// Chunks embedded by this value so far, for reports.
    pub embedded: usize,
    /// How many first candidates the model reads, and the weight of its
    /// similarity in the second ranking (the measured defaults; the bench
    /// tries others).
    pub candidates: usize,
    pub weight: f64,
}

impl OnDemand {
    /// The configured model, and the repository's vector cache (the one
    /// the semantic index uses: what either embedded, the other reuses).
    pub fn open(state: &StateDir, source: &EmbedSource) -> Result<OnDemand, SemanticError> {
        Ok(OnDemand {
            model: source.embedder()?,
            cache: VectorCache::open(&state.semantic().join("vectors"))?,
            embedded: 0,
            candidates: ON_DEMAND_CANDIDATES,
            weight: ON_DEMAND_WEIGHT,
        })
    }

    pub fn model(&self) -> &ModelPin {
        self.model.pin()
    }

    /// `query` ranked by the question ranking, then again with the vectors
    /// of its first candidates (in the files at the graph's commit).
    pub fn search(
        &mut self,
        reader: &crate::store::Reader<'_>,
        names: &crate::search::Searcher,
        differ: &mut SymbolDiffer<'_>,
        query: &crate::search::SearchQuery,
    ) -> Result<crate::search::SearchAnswer, SemanticError> {
        let params = crate::search::RankParams::default();
        let wide = crate::search::SearchQuery {
            limit: query.limit.max(self.candidates),
            ..query.clone()
        };
        let first = names.search_with(reader, &wide, &params)?;
        let Some(commit) = reader.graph_commit()? else {
            return Ok(names.search_with(reader, query, &params)?);
        };
        let commit = ObjectId::from_hex(commit.as_bytes())
            .map_err(|e| SemanticError::GraphCommit(format!("{commit}: {e}")))?;
        let wanted: Vec<(String, String)> = first
            .hits
            .iter()
            .filter(|h| h.status != "deleted")
            .take(self.candidates)
            .map(|h| (h.path.clone(), h.id.clone()))
            .collect();
        let vectors = self.similarities(differ, commit, &wanted, &query.query)?;
        let params = crate::search::RankParams {
            vectors: self.weight,
            file_vectors: None,
            ..params
        };
        Ok(names.search_with_vectors(reader, query, &params, &vectors)?)
    }

    /// `query`'s cosine with each of `symbols` (path, id), by the best of
    /// the symbol's chunks in the file at `commit`, best first; a symbol
    /// with no chunk (a header of a name and braces) is left out.
    pub fn similarities(
        &mut self,
        differ: &mut SymbolDiffer<'_>,
        commit: ObjectId,
        symbols: &[(String, String)],
        query: &str,
    ) -> Result<Vec<(String, f32)>, SemanticError> {
        let pin = self.model.pin().clone();
        let wanted: std::collections::HashSet<&str> =
            symbols.iter().map(|(_, id)| id.as_str()).collect();
        let mut paths: Vec<&str> = symbols.iter().map(|(p, _)| p.as_str()).collect();
        paths.sort_unstable();
        paths.dedup();
        let mut keyed: Vec<(String, CacheKey)> = Vec::new();
        let mut missing: Vec<(CacheKey, String)> = Vec::new();
        let mut queued: std::collections::HashSet<CacheKey> = std::collections::HashSet::new();
        for path in paths {
            let Some(language) = Language::from_path(path) else {
                continue;
            };
            let repo = differ.repo();
            let Some(blob) = repo.blob_at(commit, path)? else {
                continue;
            };
            let Ok(text) = String::from_utf8(repo.blob(blob)?) else {
                continue;
            };
            let Some(facts) = differ.file_facts(blob, path)? else {
                continue;
            };
            for chunk in chunks_of(path, language, &text, &facts) {
                if !wanted.contains(chunk.symbol_id.as_str()) {
                    continue;
                }
                let key = cache_key(&pin, &chunk.text);
                if self.cache.get(&key).is_none() && queued.insert(key) {
                    missing.push((key, chunk.text));
                }
                keyed.push((chunk.symbol_id, key));
            }
        }
        for batch in missing.chunks(EMBED_BATCH) {
            let texts: Vec<&str> = batch.iter().map(|(_, t)| t.as_str()).collect();
            let vectors = self.model.embed(&texts)?;
            for ((key, _), vector) in batch.iter().zip(vectors) {
                self.cache.put(*key, vector);
            }
            // Kept as they come: an interrupted search loses no batch.
            self.cache.save()?;
            self.embedded += batch.len();
        }
        let q = self.model.embed(&[query])?.pop().unwrap_or_default();
        let mut best: HashMap<String, f32> = HashMap::new();
        for (symbol, key) in keyed {
            if let Some(v) = self.cache.get(&key) {
                let score = diffidx_semantic::cosine(&q, v);
                let slot = best.entry(symbol).or_insert(f32::MIN);
                *slot = slot.max(score);
            }
        }
        let mut ranked: Vec<(String, f32)> = best.into_iter().collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        Ok(ranked)
    }
}
