//! The store's seal: `blake3 <hex> <bytes>` of the database file, written by
//! every writer as it closes. Kuzu notices a torn page, not a changed value,
//! and a damaged page can crash it; the seal lets `fsck` say that the file
//! was changed by something other than diffidx before trusting what it reads.

use std::io::Read;
use std::path::{Path, PathBuf};

pub const SUFFIX: &str = ".seal";

fn seal_path(store: &Path) -> PathBuf {
    PathBuf::from(format!("{}{SUFFIX}", store.display()))
}

fn digest(store: &Path) -> Option<String> {
    let mut file = std::fs::File::open(store).ok()?;
    let mut hasher = blake3::Hasher::new();
    let mut buffer = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = file.read(&mut buffer).ok()?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        total += n as u64;
    }
    Some(format!("blake3 {} {total}", hasher.finalize().to_hex()))
}

/// Seals the store as it is now (best effort: a missing seal only makes
/// `fsck` say that it cannot vouch for the bytes).
pub fn write(store: &Path) {
    match digest(store) {
        Some(seal) => {
            let _ = std::fs::write(seal_path(store), format!("{seal}\n"));
        }
        None => remove(store),
    }
}

pub fn remove(store: &Path) {
    let _ = std::fs::remove_file(seal_path(store));
}

/// How the store's bytes compare with its seal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SealState {
    Matches,
    /// Changed since diffidx last wrote it.
    Differs,
    /// No seal (written by an older diffidx, or its writer was killed).
    Absent,
}

pub fn check(store: &Path) -> SealState {
    let Ok(expected) = std::fs::read_to_string(seal_path(store)) else {
        return SealState::Absent;
    };
    match digest(store) {
        Some(actual) if actual == expected.trim() => SealState::Matches,
        _ => SealState::Differs,
    }
}
