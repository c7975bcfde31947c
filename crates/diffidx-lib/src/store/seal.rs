//! The store's seal: `blake3 <hex> <bytes> <mtime-ns>` of the database file,
//! written by every writer as it closes. Kuzu notices a torn page, not a
//! changed value, and a damaged page can crash it; the seal lets `fsck` say
//! that the file was changed by something other than diffidx before trusting
//! what it reads. Writers check it too, but hash only when the size or the
//! modification time differs from the seal's, so an untouched store costs
//! them one `stat`.

use std::io::Read;
use std::path::{Path, PathBuf};

pub const SUFFIX: &str = ".seal";

fn seal_path(store: &Path) -> PathBuf {
    PathBuf::from(format!("{}{SUFFIX}", store.display()))
}

/// `blake3 <hex> <bytes>`: what the bytes are.
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
    match (digest(store), modified_ns(store)) {
        (Some(seal), Some(mtime)) => {
            let _ = std::fs::write(seal_path(store), format!("{seal} {mtime}\n"));
        }
        _ => remove(store),
    }
}

fn modified_ns(store: &Path) -> Option<u128> {
    let modified = std::fs::metadata(store).ok()?.modified().ok()?;
    Some(
        modified
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_nanos(),
    )
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

/// Compares the bytes with the seal (a full read of the store).
pub fn check(store: &Path) -> SealState {
    let Ok(seal) = std::fs::read_to_string(seal_path(store)) else {
        return SealState::Absent;
    };
    // The digest is the seal's first three fields (then the modification time).
    let expected: Vec<&str> = seal.split_whitespace().take(3).collect();
    match digest(store) {
        Some(actual) if actual == expected.join(" ") => SealState::Matches,
        _ => SealState::Differs,
    }
}

/// [`check`], but an unchanged size and modification time count as a
/// match without reading the file (what a writer does before every open).
pub fn check_quickly(store: &Path) -> SealState {
    let Ok(seal) = std::fs::read_to_string(seal_path(store)) else {
        return SealState::Absent;
    };
    let fields: Vec<&str> = seal.split_whitespace().collect();
    let size = std::fs::metadata(store).ok().map(|m| m.len().to_string());
    let mtime = modified_ns(store).map(|t| t.to_string());
    match (fields.as_slice(), size, mtime) {
        ([_, _, bytes, ns], Some(size), Some(mtime)) if *bytes == size && *ns == mtime => {
            SealState::Matches
        }
        _ => check(store),
    }
}
