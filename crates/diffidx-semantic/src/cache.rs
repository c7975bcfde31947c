//! Every vector ever computed, under the key of what made it.
//!
//! The key is blake3(pin digest, chunk text): the model's name, weights
//! hash and parameters, and the exact text embedded. Unchanged code is
//! never embedded twice, across commits, branches and `rebuild` (which
//! leaves this file alone), and vectors of two pins can never be mixed up,
//! because their keys differ.
//!
//! The file is append-only: records of (key, length, floats, checksum).
//! A record cut short by a crash, or damaged, ends the readable part; the
//! next save truncates it away, so a bad tail costs re-embedding, never a
//! wrong vector.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::embed::ModelPin;

const MAGIC: &[u8; 8] = b"DXVEC\x001\n";

/// A cache key.
pub type CacheKey = [u8; 32];

/// The key of `text` embedded by the model of `pin`.
pub fn cache_key(pin: &ModelPin, text: &str) -> CacheKey {
    let mut h = blake3::Hasher::new();
    h.update(&pin.digest());
    h.update(text.as_bytes());
    *h.finalize().as_bytes()
}

#[derive(Debug, thiserror::Error)]
#[error("the vector cache {path}: {action}: {reason}")]
pub struct CacheError {
    pub path: PathBuf,
    pub action: &'static str,
    pub reason: String,
}

/// The vectors of one cache file, in memory, and what is new since it was
/// read.
pub struct VectorCache {
    path: PathBuf,
    vectors: HashMap<CacheKey, Box<[f32]>>,
    /// The length of the file's readable part.
    valid_len: u64,
    pending: Vec<CacheKey>,
}

impl VectorCache {
    /// Reads `path` (a missing file is an empty cache).
    pub fn open(path: &Path) -> Result<VectorCache, CacheError> {
        let failed = |action: &'static str| {
            move |e: std::io::Error| CacheError {
                path: path.to_owned(),
                action,
                reason: e.to_string(),
            }
        };
        let mut cache = VectorCache {
            path: path.to_owned(),
            vectors: HashMap::new(),
            valid_len: 0,
            pending: Vec::new(),
        };
        let mut bytes = Vec::new();
        match File::open(path) {
            Ok(mut f) => {
                f.read_to_end(&mut bytes).map_err(failed("read"))?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(cache),
            Err(e) => return Err(failed("open")(e)),
        }
        if !bytes.starts_with(MAGIC) {
            // Another format or garbage: start over.
            return Ok(cache);
        }
        let mut at = MAGIC.len();
        while let Some((key, vector, next)) = record_at(&bytes, at) {
            cache.vectors.insert(key, vector);
            at = next;
        }
        cache.valid_len = at as u64;
        Ok(cache)
    }

    pub fn len(&self) -> usize {
        self.vectors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.vectors.is_empty()
    }

    pub fn get(&self, key: &CacheKey) -> Option<&[f32]> {
        self.vectors.get(key).map(|v| &**v)
    }

    /// Adds a vector (kept in memory until [`save`](Self::save)).
    pub fn put(&mut self, key: CacheKey, vector: Vec<f32>) {
        if self.vectors.insert(key, vector.into()).is_none() {
            self.pending.push(key);
        }
    }

    /// Appends the new vectors to the file and syncs it.
    pub fn save(&mut self) -> Result<(), CacheError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let failed = |action: &'static str| {
            let path = self.path.clone();
            move |e: std::io::Error| CacheError {
                path,
                action,
                reason: e.to_string(),
            }
        };
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(failed("create its directory"))?;
        }
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&self.path)
            .map_err(failed("open for writing"))?;
        if self.valid_len < MAGIC.len() as u64 {
            file.set_len(0).map_err(failed("truncate"))?;
            file.write_all(MAGIC).map_err(failed("write"))?;
            self.valid_len = MAGIC.len() as u64;
        } else {
            // Drops a torn tail before appending.
            file.set_len(self.valid_len).map_err(failed("truncate"))?;
        }
        file.seek(SeekFrom::Start(self.valid_len))
            .map_err(failed("seek"))?;
        let mut out = BufWriter::new(&mut file);
        let mut written = 0u64;
        for key in &self.pending {
            let vector = &self.vectors[key];
            let record = encode_record(key, vector);
            out.write_all(&record).map_err(failed("write"))?;
            written += record.len() as u64;
        }
        out.flush().map_err(failed("write"))?;
        drop(out);
        file.sync_data().map_err(failed("sync"))?;
        self.valid_len += written;
        self.pending.clear();
        Ok(())
    }
}

fn encode_record(key: &CacheKey, vector: &[f32]) -> Vec<u8> {
    let mut record = Vec::with_capacity(32 + 4 + vector.len() * 4 + 8);
    record.extend_from_slice(key);
    record.extend_from_slice(&(vector.len() as u32).to_le_bytes());
    for x in vector {
        record.extend_from_slice(&x.to_le_bytes());
    }
    let sum = blake3::hash(&record);
    record.extend_from_slice(&sum.as_bytes()[..8]);
    record
}

/// The record at `at`, and where the next one starts; `None` at the end or
/// at a torn or damaged record.
fn record_at(bytes: &[u8], at: usize) -> Option<(CacheKey, Box<[f32]>, usize)> {
    let head = bytes.get(at..at + 36)?;
    let dim = u32::from_le_bytes(head[32..36].try_into().ok()?) as usize;
    if dim == 0 || dim > 65_536 {
        return None;
    }
    let body_end = at + 36 + dim * 4;
    let body = bytes.get(at..body_end)?;
    let sum = bytes.get(body_end..body_end + 8)?;
    if blake3::hash(body).as_bytes()[..8] != *sum {
        return None;
    }
    let key: CacheKey = head[..32].try_into().ok()?;
    let vector = body[36..]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    Some((key, vector, body_end + 8))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pin(weights: &str) -> ModelPin {
        ModelPin {
            name: "m".into(),
            weights_blake3: weights.into(),
            dim: 3,
            max_tokens: 256,
            pooling: "mean".into(),
            normalize: true,
        }
    }

    #[test]
    fn vectors_survive_a_reopen_and_a_torn_tail_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors");
        let (a, b) = (pin("aa"), pin("bb"));
        assert_ne!(
            cache_key(&a, "x"),
            cache_key(&b, "x"),
            "pins must not share keys"
        );
        let mut cache = VectorCache::open(&path).unwrap();
        cache.put(cache_key(&a, "x"), vec![1.0, 2.0, 3.0]);
        cache.put(cache_key(&a, "y"), vec![4.0, 5.0, 6.0]);
        cache.save().unwrap();
        let good_len = std::fs::metadata(&path).unwrap().len();

        // A crash in the middle of the next append.
        let mut cache = VectorCache::open(&path).unwrap();
        cache.put(cache_key(&a, "z"), vec![7.0, 8.0, 9.0]);
        cache.save().unwrap();
        let f = OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(good_len + 20).unwrap();

        let mut cache = VectorCache::open(&path).unwrap();
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.get(&cache_key(&a, "y")), Some(&[4.0, 5.0, 6.0][..]));
        assert_eq!(cache.get(&cache_key(&a, "z")), None);
        cache.put(cache_key(&b, "x"), vec![0.5, 0.5, 0.5]);
        cache.save().unwrap();
        let cache = VectorCache::open(&path).unwrap();
        assert_eq!(cache.len(), 3);
        assert_eq!(cache.get(&cache_key(&b, "x")), Some(&[0.5, 0.5, 0.5][..]));
    }

    #[test]
    fn a_flipped_byte_loses_that_record_not_a_wrong_vector() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors");
        let a = pin("aa");
        let mut cache = VectorCache::open(&path).unwrap();
        cache.put(cache_key(&a, "x"), vec![1.0, 2.0, 3.0]);
        cache.save().unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        let n = bytes.len();
        bytes[n - 12] ^= 0x40;
        std::fs::write(&path, bytes).unwrap();
        let cache = VectorCache::open(&path).unwrap();
        assert_eq!(cache.get(&cache_key(&a, "x")), None);
    }
}
