//! Each graph file's facts, kept on disk beside the store by what they are
//! made from (graph version, path, blob), so that an update resolves against
//! every file without parsing every file again.
//!
//! Why not in the store: at each checkpoint Kuzu rewrites every column chunk
//! a transaction touched, whole. Held in a column of `Source`, the facts of
//! a 1,000-file tree (4 MB of JSON) were rewritten for each commit a hook
//! indexed: 45-60 ms a run, and as many megabytes of dead pages until the
//! store was compacted. Here a parsed file costs one small file written.
//!
//! A cache only: a fact file missing or unreadable makes its source file be
//! parsed again, and `rebuild` empties the directory.

use std::collections::HashSet;
use std::io::Write as _;
use std::path::PathBuf;

use diffidx_core::codegraph::{FileFacts, GRAPH_VERSION};

/// The directory of fact files, one per (path, blob).
#[derive(Debug, Clone)]
pub struct FactFiles {
    dir: PathBuf,
}

impl FactFiles {
    pub fn new(dir: PathBuf) -> FactFiles {
        FactFiles { dir }
    }

    /// The facts of `path` at `blob`, if a readable file holds them.
    pub fn read(&self, path: &str, blob: &str) -> Option<FileFacts> {
        let bytes = std::fs::read(self.file(path, blob)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// [`FactFiles::read`] of many (path, blob) pairs, in order, on up to
    /// `threads` threads: decoding the JSON is most of an update's reading.
    pub fn read_many(&self, wanted: &[(&str, &str)], threads: usize) -> Vec<Option<FileFacts>> {
        let read = |part: &[(&str, &str)]| -> Vec<Option<FileFacts>> {
            part.iter()
                .map(|(path, blob)| self.read(path, blob))
                .collect()
        };
        if threads < 2 || wanted.len() < 64 {
            return read(wanted);
        }
        let chunk = wanted.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let parts: Vec<_> = wanted
                .chunks(chunk)
                .map(|part| (part.len(), scope.spawn(move || read(part))))
                .collect();
            parts
                .into_iter()
                .flat_map(|(len, handle)| handle.join().unwrap_or_else(|_| vec![None; len]))
                .collect()
        })
    }

    /// Writes the facts of each (path, blob), letting each go once written;
    /// one that cannot be written is parsed again by the next update.
    /// Returns how many were written.
    pub fn write_all<F: std::ops::Deref<Target = FileFacts>>(
        &self,
        items: Vec<(String, String, F)>,
    ) -> usize {
        if items.is_empty() || std::fs::create_dir_all(&self.dir).is_err() {
            return 0;
        }
        items
            .into_iter()
            .filter(|(path, blob, facts)| self.write_file(path, blob, facts).is_ok())
            .count()
    }

    /// Writes the facts of `path` at `blob`: to a temporary file renamed into
    /// place, so a reader never sees half of one.
    fn write_file(&self, path: &str, blob: &str, facts: &FileFacts) -> std::io::Result<()> {
        let mut file = tempfile::NamedTempFile::new_in(&self.dir)?;
        file.write_all(&serde_json::to_vec(facts).map_err(std::io::Error::other)?)?;
        file.persist(self.file(path, blob))
            .map(drop)
            .map_err(|e| e.error)
    }

    /// Removes every fact file but those of `live` (path, blob) pairs, and
    /// any temporary file a killed writer left. Returns how many it removed.
    pub fn keep_only<'a>(&self, live: impl IntoIterator<Item = (&'a str, &'a str)>) -> usize {
        let keep: HashSet<PathBuf> = live
            .into_iter()
            .map(|(path, blob)| self.file(path, blob))
            .collect();
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return 0;
        };
        let mut removed = 0;
        for entry in entries.flatten() {
            let path = entry.path();
            if !keep.contains(&path) && std::fs::remove_file(&path).is_ok() {
                removed += 1;
            }
        }
        removed
    }

    /// Removes the directory (for `rebuild`).
    pub fn clear(&self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }

    /// Named by a hash of what the facts are made from: a new graph version
    /// or a new blob is a new name, never a stale file.
    fn file(&self, path: &str, blob: &str) -> PathBuf {
        let mut hasher = blake3::Hasher::new();
        for part in [GRAPH_VERSION, path, blob] {
            hasher.update(&(part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
        self.dir
            .join(format!("{}.json", &hasher.finalize().to_hex()[..32]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use diffidx_core::codegraph::Def;
    use diffidx_core::SymbolKind;

    fn facts(name: &str) -> FileFacts {
        FileFacts {
            defs: vec![Def {
                qualname: name.into(),
                name: name.into(),
                kind: SymbolKind::Function,
                sig: String::new(),
                parent: None,
                lines: (1, 2),
                content_hash: "00".into(),
                arity: 0,
                extension: false,
                bodiless: false,
                made_only_here: false,
                words: String::new(),
            }],
            ..FileFacts::default()
        }
    }

    #[test]
    fn facts_come_back_by_path_and_blob_and_only_the_live_stay() {
        let dir = tempfile::tempdir().unwrap();
        let files = FactFiles::new(dir.path().join("facts"));
        assert_eq!(files.read("a.rs", "b1"), None, "nothing written yet");
        let items = [
            ("a.rs", "b1", "one"),
            ("a.rs", "b2", "two"),
            ("b.rs", "b1", "three"),
        ]
        .map(|(path, blob, name)| (path.to_owned(), blob.to_owned(), Box::new(facts(name))));
        assert_eq!(files.write_all(items.into()), 3);
        assert_eq!(files.read("a.rs", "b1"), Some(facts("one")));
        assert_eq!(files.read("a.rs", "b2"), Some(facts("two")));
        assert_eq!(files.read("b.rs", "b1"), Some(facts("three")));
        assert_eq!(files.keep_only([("a.rs", "b2"), ("b.rs", "b1")]), 1);
        assert_eq!(files.read("a.rs", "b1"), None);
        assert_eq!(files.read("a.rs", "b2"), Some(facts("two")));
        // A damaged file reads as missing (the file is parsed again).
        std::fs::write(files.file("b.rs", "b1"), b"{\"d\": [").unwrap();
        assert_eq!(files.read("b.rs", "b1"), None);
        files.clear();
        assert!(!dir.path().join("facts").exists());
    }
}
