//! Every language-model answer ever used, under the key of what was asked.
//!
//! A chat model is slow, may cost money and is not deterministic: asking it
//! the same question twice wastes the first answer and may contradict it.
//! So every use (a change summary, a query expansion, a module summary)
//! looks its question up here first. The key is blake3 of the use, the
//! prompt version, the model and the exact messages ([`answer_key`]); an
//! answer of another model is never taken for this one's.
//!
//! The file is JSON lines, appended one whole line per answer with a
//! checksum: a line cut short by a crash or damaged fails its checksum and
//! is skipped (that question is asked again), and the next line starts on
//! a line of its own.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::cache::CacheKey;
use crate::llm::ChatRequest;

/// Changes when a prompt of [`crate::prompts`] changes: answers to the old
/// prompts are not reused.
pub const PROMPT_VERSION: u32 = 1;

/// The key of asking `model` the question `request` for `purpose`.
pub fn answer_key(purpose: &str, model: &str, request: &ChatRequest) -> CacheKey {
    let mut h = blake3::Hasher::new();
    h.update(purpose.as_bytes());
    h.update(&[0]);
    h.update(&PROMPT_VERSION.to_le_bytes());
    h.update(model.as_bytes());
    h.update(&[0]);
    for m in &request.messages {
        h.update(m.role.as_str().as_bytes());
        h.update(&[0]);
        h.update(m.content.as_bytes());
        h.update(&[0]);
    }
    *h.finalize().as_bytes()
}

/// One answer: its text, and the model that gave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    pub model: String,
    pub text: String,
}

#[derive(Serialize, Deserialize)]
struct Line {
    key: String,
    model: String,
    text: String,
    /// blake3(key, model, text), hex: a damaged line is not believed.
    check: String,
}

fn checksum(key: &str, model: &str, text: &str) -> String {
    let mut h = blake3::Hasher::new();
    for part in [key, model, text] {
        h.update(part.as_bytes());
        h.update(&[0]);
    }
    h.finalize().to_hex()[..16].to_owned()
}

#[derive(Debug, thiserror::Error)]
#[error("the answer cache {path}: {reason}")]
pub struct AnswerCacheError {
    pub path: PathBuf,
    pub reason: String,
}

/// The answers of one cache file, in memory; new ones are appended as they
/// come.
pub struct AnswerCache {
    path: PathBuf,
    answers: HashMap<CacheKey, Answer>,
    /// The file ends without a newline (a torn last line).
    torn: bool,
}

impl AnswerCache {
    /// Reads `path` (a missing file is an empty cache).
    pub fn open(path: &Path) -> Result<AnswerCache, AnswerCacheError> {
        let mut bytes = Vec::new();
        match std::fs::File::open(path) {
            Ok(mut f) => {
                f.read_to_end(&mut bytes).map_err(|e| AnswerCacheError {
                    path: path.to_owned(),
                    reason: e.to_string(),
                })?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(AnswerCacheError {
                    path: path.to_owned(),
                    reason: e.to_string(),
                })
            }
        }
        let mut answers = HashMap::new();
        for line in bytes.split(|&b| b == b'\n') {
            let Ok(line) = serde_json::from_slice::<Line>(line) else {
                continue;
            };
            if checksum(&line.key, &line.model, &line.text) != line.check {
                continue;
            }
            let Ok(key) = blake3::Hash::from_hex(&line.key) else {
                continue;
            };
            answers.insert(
                *key.as_bytes(),
                Answer {
                    model: line.model,
                    text: line.text,
                },
            );
        }
        Ok(AnswerCache {
            path: path.to_owned(),
            answers,
            torn: bytes.last().is_some_and(|&b| b != b'\n'),
        })
    }

    pub fn get(&self, key: &CacheKey) -> Option<&Answer> {
        self.answers.get(key)
    }

    pub fn len(&self) -> usize {
        self.answers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.answers.is_empty()
    }

    /// Keeps `answer` under `key`, appending it to the file at once (one
    /// write of one line, so concurrent writers do not interleave lines).
    pub fn put(&mut self, key: CacheKey, answer: Answer) -> Result<(), AnswerCacheError> {
        let failed = |e: std::io::Error| AnswerCacheError {
            path: self.path.clone(),
            reason: e.to_string(),
        };
        let key_hex = blake3::Hash::from_bytes(key).to_hex().to_string();
        let line = Line {
            check: checksum(&key_hex, &answer.model, &answer.text),
            key: key_hex,
            model: answer.model.clone(),
            text: answer.text.clone(),
        };
        let mut bytes = Vec::new();
        if self.torn {
            bytes.push(b'\n');
        }
        serde_json::to_writer(&mut bytes, &line).map_err(|e| AnswerCacheError {
            path: self.path.clone(),
            reason: e.to_string(),
        })?;
        bytes.push(b'\n');
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(failed)?;
        }
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(failed)?;
        file.write_all(&bytes).map_err(failed)?;
        self.torn = false;
        self.answers.insert(key, answer);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Message;

    fn request(text: &str) -> ChatRequest {
        ChatRequest {
            messages: vec![Message::user(text)],
            temperature: Some(0.0),
            max_tokens: None,
        }
    }

    #[test]
    fn keys_depend_on_purpose_model_and_question() {
        let a = answer_key("delta", "ollama:x", &request("q"));
        assert_ne!(a, answer_key("hyde", "ollama:x", &request("q")));
        assert_ne!(a, answer_key("delta", "ollama:y", &request("q")));
        assert_ne!(a, answer_key("delta", "ollama:x", &request("q2")));
        assert_eq!(a, answer_key("delta", "ollama:x", &request("q")));
    }

    #[test]
    fn answers_survive_reopening_and_a_torn_line_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("answers");
        let k1 = answer_key("delta", "m", &request("one"));
        let k2 = answer_key("delta", "m", &request("two"));
        let k3 = answer_key("delta", "m", &request("three"));
        let mut cache = AnswerCache::open(&path).unwrap();
        let answer = |t: &str| Answer {
            model: "m".into(),
            text: t.into(),
        };
        cache.put(k1, answer("first\nwith a newline")).unwrap();
        cache.put(k2, answer("second")).unwrap();
        // A crash in the middle of the second line.
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 10]).unwrap();
        let mut cache = AnswerCache::open(&path).unwrap();
        assert_eq!(cache.get(&k1).unwrap().text, "first\nwith a newline");
        assert!(cache.get(&k2).is_none());
        cache.put(k3, answer("third")).unwrap();
        let cache = AnswerCache::open(&path).unwrap();
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.get(&k3).unwrap().text, "third");
    }

    #[test]
    fn a_damaged_line_fails_its_checksum() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("answers");
        let key = answer_key("delta", "m", &request("one"));
        let mut cache = AnswerCache::open(&path).unwrap();
        cache
            .put(
                key,
                Answer {
                    model: "m".into(),
                    text: "retries the payment".into(),
                },
            )
            .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("retries", "deletes")).unwrap();
        assert!(AnswerCache::open(&path).unwrap().get(&key).is_none());
    }
}
