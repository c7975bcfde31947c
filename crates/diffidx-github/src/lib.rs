//! diffidx-github: the pull-request comment (DESIGN.md §7).
//!
//! [`event`] finds the pull request in the GitHub Actions environment,
//! [`markdown`] renders a net symbol change as the comment body (a pure
//! function: every name and path escaped, the size kept under GitHub's
//! limit), and [`api`] keeps exactly one such comment per pull request,
//! found by a hidden marker and updated in place. Only [`api`] talks to
//! GitHub; nothing here prints.

pub mod api;
pub mod event;
pub mod markdown;

use std::path::PathBuf;

pub use api::{CommentClient, Outcome};
pub use event::{ActionsEnv, PullRequestEvent, RepoName};
pub use markdown::{render, Impact, LinkBase, PullRequestChange, DEFAULT_BUDGET, MARKER};

#[derive(Debug, thiserror::Error)]
pub enum GithubError {
    /// Something the user gave (a flag, a variable) is unusable.
    #[error("{0}")]
    Config(String),
    #[error("cannot read the event file {path}: {reason}")]
    EventFile { path: PathBuf, reason: String },
    #[error("GitHub refused the token (401 {message}) when trying to {what}; check GITHUB_TOKEN")]
    Unauthorized { what: String, message: String },
    /// The token may read but not write (a pull request from a fork).
    #[error("the token may not {what} (403 {message})")]
    Forbidden { what: String, message: String },
    #[error("cannot {what}: not found (404 {message}); check the repository and pull request number, and that the token can see them")]
    NotFound { what: String, message: String },
    #[error("cannot {what}: GitHub answered {status} ({message})")]
    Api {
        what: String,
        status: u16,
        message: String,
    },
    #[error("{0}")]
    Transport(String),
}
