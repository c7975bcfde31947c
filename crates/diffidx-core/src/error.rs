//! Errors as values, each saying what failed, on what input, and what to do.

/// Everything the core can fail with.
///
/// Messages do not repeat their `source`; print the chain (`{:#}` with
/// anyhow) to see it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "cannot open a git repository at {path} (run this inside a git work tree, or pass -C DIR)"
    )]
    OpenRepository {
        path: String,
        #[source]
        source: gix::Error,
    },
    #[error("the repository has no commits yet; commit something, then run this again")]
    EmptyRepository,
    #[error("unknown revision '{rev}': {reason}")]
    UnknownRevision { rev: String, reason: String },
    #[error(
        "commit {commit} has parent {parent}, which is not in this repository (a shallow clone?); \
         run `git fetch --deepen=1` or `git fetch --unshallow` and try again"
    )]
    MissingParent { commit: String, parent: String },
    #[error("git object {id} cannot be read: {reason}")]
    Object { id: String, reason: String },
    #[error("{context}")]
    Git {
        context: String,
        #[source]
        source: gix::Error,
    },
    #[error("cannot read the patch: {0}")]
    Patch(String),
    #[error(
        "the patch does not apply to {path} at {base}: {reason}; if it was made against another \
         commit, name it: `git diffidx show --patch FILE REV` (for `git diff A B`, REV is A)"
    )]
    PatchDoesNotApply {
        path: String,
        base: String,
        reason: String,
    },
    #[error(
        "refs/notes/diffidx moved while this run was writing ({reason}); another diffidx or a \
         fetch updated it. Run `git diffidx index` again"
    )]
    NotesMoved { reason: String },
    #[error("the note of {commit} is invalid: {reason}")]
    InvalidNote { commit: String, reason: String },
    #[error("cannot update the git config {path}: {reason}")]
    Config { path: String, reason: String },
    #[error("cannot run the {name} thread: {reason}")]
    Thread { name: String, reason: String },
    #[error(transparent)]
    Grammar(#[from] crate::lang::GrammarError),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Adds context to a gix error.
pub(crate) trait GitContext<T> {
    fn context(self, context: impl FnOnce() -> String) -> Result<T>;
}

impl<T, E: Into<gix::Error>> GitContext<T> for std::result::Result<T, E> {
    fn context(self, context: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| Error::Git {
            context: context(),
            source: e.into(),
        })
    }
}
