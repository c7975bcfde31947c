//! Sentence embeddings from a pinned local model.
//!
//! A model directory in the sentence-transformers layout (`config.json`,
//! `model.safetensors`, `tokenizer.json`, `1_Pooling/config.json`,
//! `sentence_bert_config.json`, `modules.json`) is run in-process by
//! candle's BERT: tokens truncated at the model's `max_seq_length`, mean
//! pooling over the tokens, L2 normalization when the model lists a
//! `Normalize` module. Nothing is downloaded.
//!
//! Why no padding: texts are batched only with texts of the same token
//! count. A padded batch computes the same vector through a differently
//! shaped matrix product, which may round differently; without padding a
//! text's vector depends on its tokens alone, so a re-run is byte-identical
//! whatever else was embedded with it.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config as BertConfig};
use serde::{Deserialize, Serialize};
use tokenizers::{Tokenizer, TruncationParams};

/// Where `scripts/model` installs all-MiniLM-L6-v2, the model of the tests,
/// benches and README: `$DIFFIDX_TEST_MODEL` when set, else
/// `~/.cache/diffidx-models/all-MiniLM-L6-v2`.
pub fn installed_model_dir() -> PathBuf {
    std::env::var_os("DIFFIDX_TEST_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/root".into()))
                .join(".cache/diffidx-models/all-MiniLM-L6-v2")
        })
}

/// How many texts of one length go through the model at once.
const BATCH: usize = 32;

/// What makes two vectors comparable: the same weights, read the same way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelPin {
    /// The model's name (its directory's name for a local model).
    pub name: String,
    /// blake3 of the weights file, hex.
    pub weights_blake3: String,
    /// Vector length.
    pub dim: usize,
    /// Tokens read per text; the rest is cut off.
    pub max_tokens: usize,
    /// `mean` (tokens averaged) or `cls`.
    pub pooling: String,
    /// Vectors are L2-normalized.
    pub normalize: bool,
}

impl ModelPin {
    /// A short stable label, e.g. `all-MiniLM-L6-v2@53aa5172 mean/256/norm`.
    pub fn label(&self) -> String {
        format!(
            "{}@{} {}/{}{}",
            self.name,
            &self.weights_blake3[..self.weights_blake3.len().min(8)],
            self.pooling,
            self.max_tokens,
            if self.normalize { "/norm" } else { "" }
        )
    }

    /// blake3 of everything that makes a vector, for cache keys.
    pub fn digest(&self) -> [u8; 32] {
        let mut h = blake3::Hasher::new();
        for part in [
            self.name.as_str(),
            self.weights_blake3.as_str(),
            &self.dim.to_string(),
            &self.max_tokens.to_string(),
            self.pooling.as_str(),
            if self.normalize { "norm" } else { "raw" },
        ] {
            h.update(&(part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
        *h.finalize().as_bytes()
    }
}

impl fmt::Display for ModelPin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("cannot read the model file {path}: {reason}")]
    ModelFile { path: PathBuf, reason: String },
    #[error("the model in {dir} is not usable: {reason}")]
    Model { dir: PathBuf, reason: String },
    #[error("embedding failed: {0}")]
    Run(String),
    #[error("the embedding service failed: {0}")]
    Service(String),
}

/// Turns texts into vectors of one pinned model.
pub trait Embedder {
    fn pin(&self) -> &ModelPin;
    /// One vector per text, in order, each `pin().dim` long.
    fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// A sentence-transformers BERT model run by candle on the CPU.
pub struct LocalModel {
    pin: ModelPin,
    tokenizer: Tokenizer,
    model: BertModel,
    device: Device,
}

#[derive(Deserialize)]
struct SentenceBertConfig {
    max_seq_length: usize,
}

#[derive(Deserialize)]
struct PoolingConfig {
    word_embedding_dimension: usize,
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
    #[serde(default)]
    pooling_mode_mean_sqrt_len_tokens: bool,
}

#[derive(Deserialize)]
struct ModuleEntry {
    #[serde(rename = "type")]
    kind: String,
}

/// What a model directory holds, read and pinned but not yet built: the
/// pin is known after one read of the weights, and building the model
/// (only when something needs embedding) reads nothing again.
pub struct ModelFiles {
    dir: PathBuf,
    pin: ModelPin,
    config: BertConfig,
    weights: Vec<u8>,
}

impl ModelFiles {
    /// Reads the model directory `dir`; its name is the directory's name.
    pub fn read(dir: &Path) -> Result<ModelFiles, EmbedError> {
        let bad = |reason: String| EmbedError::Model {
            dir: dir.to_owned(),
            reason,
        };
        let read = |name: &str| -> Result<Vec<u8>, EmbedError> {
            let path = dir.join(name);
            std::fs::read(&path).map_err(|e| EmbedError::ModelFile {
                path,
                reason: e.to_string(),
            })
        };
        let json = |name: &str| -> Result<serde_json::Value, EmbedError> {
            serde_json::from_slice(&read(name)?).map_err(|e| bad(format!("{name}: {e}")))
        };
        let config: BertConfig = serde_json::from_value(json("config.json")?)
            .map_err(|e| bad(format!("config.json: {e}")))?;
        let pooling: PoolingConfig = serde_json::from_value(json("1_Pooling/config.json")?)
            .map_err(|e| bad(format!("1_Pooling/config.json: {e}")))?;
        let pooling_mode = match (
            pooling.pooling_mode_mean_tokens,
            pooling.pooling_mode_cls_token,
            pooling.pooling_mode_max_tokens || pooling.pooling_mode_mean_sqrt_len_tokens,
        ) {
            (true, false, false) => "mean",
            (false, true, false) => "cls",
            _ => return Err(bad("only mean or CLS pooling is supported".into())),
        };
        if pooling.word_embedding_dimension != config.hidden_size {
            return Err(bad(format!(
                "the pooling dimension {} is not the hidden size {}",
                pooling.word_embedding_dimension, config.hidden_size
            )));
        }
        // Without sentence_bert_config.json, the model's own position limit.
        let max_tokens = match read("sentence_bert_config.json") {
            Ok(bytes) => {
                serde_json::from_slice::<SentenceBertConfig>(&bytes)
                    .map_err(|e| bad(format!("sentence_bert_config.json: {e}")))?
                    .max_seq_length
            }
            Err(_) => config.max_position_embeddings,
        }
        .min(config.max_position_embeddings);
        let normalize = match read("modules.json") {
            Ok(bytes) => serde_json::from_slice::<Vec<ModuleEntry>>(&bytes)
                .map_err(|e| bad(format!("modules.json: {e}")))?
                .iter()
                .any(|m| m.kind.ends_with(".Normalize")),
            Err(_) => false,
        };

        let weights = read("model.safetensors")?;
        let weights_blake3 = blake3::hash(&weights).to_hex().to_string();
        let name = dir
            .canonicalize()
            .unwrap_or_else(|_| dir.to_owned())
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model".to_owned());
        Ok(ModelFiles {
            dir: dir.to_owned(),
            pin: ModelPin {
                name,
                weights_blake3,
                dim: config.hidden_size,
                max_tokens,
                pooling: pooling_mode.to_owned(),
                normalize,
            },
            config,
            weights,
        })
    }

    pub fn pin(&self) -> &ModelPin {
        &self.pin
    }

    /// Builds the model.
    pub fn build(self) -> Result<LocalModel, EmbedError> {
        let ModelFiles {
            dir,
            pin,
            config,
            weights,
        } = self;
        let dir = dir.as_path();
        let bad = |reason: String| EmbedError::Model {
            dir: dir.to_owned(),
            reason,
        };
        let weights_path = dir.join("model.safetensors");
        let device = Device::Cpu;
        let vb =
            VarBuilder::from_buffered_safetensors(weights, DType::F32, &device).map_err(|e| {
                EmbedError::ModelFile {
                    path: weights_path,
                    reason: e.to_string(),
                }
            })?;
        let model = BertModel::load(vb, &config).map_err(|e| bad(e.to_string()))?;

        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| bad(format!("tokenizer.json: {e}")))?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: pin.max_tokens,
                ..TruncationParams::default()
            }))
            .map_err(|e| bad(format!("tokenizer truncation: {e}")))?;
        tokenizer.with_padding(None);
        Ok(LocalModel {
            pin,
            tokenizer,
            model,
            device,
        })
    }
}

impl LocalModel {
    /// Loads the model in `dir`; its name is the directory's name.
    pub fn load(dir: &Path) -> Result<LocalModel, EmbedError> {
        ModelFiles::read(dir)?.build()
    }

    /// The vectors of texts that all have `len` tokens.
    fn embed_same_length(&self, ids: &[&[u32]], len: usize) -> candle_core::Result<Vec<Vec<f32>>> {
        let flat: Vec<u32> = ids.iter().flat_map(|t| t.iter().copied()).collect();
        let input = Tensor::from_vec(flat, (ids.len(), len), &self.device)?;
        let types = input.zeros_like()?;
        let hidden = self.model.forward(&input, &types, None)?;
        let pooled = match self.pin.pooling.as_str() {
            "cls" => hidden.narrow(1, 0, 1)?.squeeze(1)?,
            _ => (hidden.sum(1)? / len as f64)?,
        };
        let pooled = if self.pin.normalize {
            let norm = pooled.sqr()?.sum_keepdim(1)?.sqrt()?;
            pooled.broadcast_div(&norm.maximum(1e-12)?)?
        } else {
            pooled
        };
        pooled.to_vec2::<f32>()
    }
}

impl Embedder for LocalModel {
    fn pin(&self) -> &ModelPin {
        &self.pin
    }

    fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedError::Run(format!("tokenizing: {e}")))?;
        // Texts grouped by token count, in input order within a group.
        let mut by_length: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (i, e) in encodings.iter().enumerate() {
            by_length.entry(e.get_ids().len()).or_default().push(i);
        }
        let mut out = vec![Vec::new(); texts.len()];
        for (len, members) in by_length {
            for batch in members.chunks(BATCH) {
                let ids: Vec<&[u32]> = batch.iter().map(|&i| encodings[i].get_ids()).collect();
                let vectors = self
                    .embed_same_length(&ids, len)
                    .map_err(|e| EmbedError::Run(e.to_string()))?;
                for (&i, v) in batch.iter().zip(vectors) {
                    out[i] = v;
                }
            }
        }
        Ok(out)
    }
}
