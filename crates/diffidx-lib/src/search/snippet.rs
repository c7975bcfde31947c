//! The code of a hit, folded: a one-line signature and a few lines of
//! preview (`search --snippets`), read from the file at the code graph's
//! commit, so that an agent or a person can judge a hit without opening it.

use diffidx_core::git::Repo;
use diffidx_core::ObjectId;
use serde::{Deserialize, Serialize};

use super::SearchHit;

/// The lines a preview shows.
pub const PREVIEW_LINES: usize = 5;

/// A hit's code, folded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snippet {
    /// The declaration's first line that is not an attribute, a decorator
    /// or a comment, trimmed.
    pub signature: String,
    /// Its first lines, as written.
    pub preview: String,
}

/// The lines of a live hit at `commit`, at most `max` of them (a deleted
/// hit has none).
pub fn lines_of(
    repo: &Repo,
    commit: Option<ObjectId>,
    hit: &SearchHit,
    max: usize,
) -> Option<Vec<String>> {
    if hit.status != "live" {
        return None;
    }
    let blob = repo.blob_at(commit?, &hit.path).ok()??;
    let bytes = repo.blob(blob).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let count = (hit.end_line + 1).saturating_sub(hit.start_line) as usize;
    Some(
        text.lines()
            .skip(hit.start_line.saturating_sub(1) as usize)
            .take(count.min(max))
            .map(str::to_owned)
            .collect(),
    )
}

/// The snippet of `hit` at `commit`.
pub fn snippet_of(repo: &Repo, commit: Option<ObjectId>, hit: &SearchHit) -> Option<Snippet> {
    // Decorators and attributes stand above a signature: read past them.
    let lines = lines_of(repo, commit, hit, 40)?;
    let signature = lines
        .iter()
        .map(|l| l.trim())
        .find(|l| {
            !l.is_empty()
                && !l.starts_with('@')
                && !l.starts_with("#[")
                && !l.starts_with('[')
                && !l.starts_with("//")
                && !l.starts_with('#')
                && !l.starts_with("/*")
                && !l.starts_with('*')
        })
        .unwrap_or_default()
        .to_owned();
    let preview = lines
        .iter()
        .take(PREVIEW_LINES)
        .cloned()
        .collect::<Vec<_>>()
        .join("\n");
    Some(Snippet { signature, preview })
}
