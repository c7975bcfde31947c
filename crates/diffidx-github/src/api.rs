//! The one sticky comment, through GitHub's REST API (octocrab).
//!
//! Endpoints: `GET /repos/{o}/{r}/issues/{n}/comments` (paged through the
//! `Link` header), `POST` the same to create, `PATCH
//! /repos/{o}/{r}/issues/comments/{id}` to update, `DELETE` the same for
//! duplicates. Comments are read into a minimal shape (id, body) rather than
//! octocrab's full model, so that a field GitHub adds or an Enterprise
//! server leaves out cannot break the lookup. Our comment is the oldest one
//! whose body starts with [`MARKER`](crate::markdown::MARKER) *and* that the
//! token's own identity wrote: anyone can post the marker, and a comment of
//! someone else's is never edited or deleted. The identity is `GET /user`'s
//! login; an Actions or App installation token may not read it (403), and
//! then it is `github-actions[bot]` unless the caller names it. A second
//! comment of ours (two runs racing, or a retried create) is deleted, so the
//! PR keeps one.

use std::time::Duration;

use octocrab::models::CommentId;
use octocrab::{Octocrab, Page};
use serde::Deserialize;

use crate::event::RepoName;
use crate::markdown::MARKER;
use crate::GithubError;

/// Who writes comments with the Actions `GITHUB_TOKEN`.
pub const ACTIONS_BOT: &str = "github-actions[bot]";

/// Every call of one run must finish within this.
const DEADLINE: Duration = Duration::from_secs(120);

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Created {
        id: u64,
        url: String,
    },
    Updated {
        id: u64,
        url: String,
    },
    /// Our comment already says exactly this.
    Unchanged {
        id: u64,
        url: String,
    },
}

impl Outcome {
    pub fn id(&self) -> u64 {
        match self {
            Outcome::Created { id, .. }
            | Outcome::Updated { id, .. }
            | Outcome::Unchanged { id, .. } => *id,
        }
    }
}

#[derive(Debug, Deserialize)]
struct IssueComment {
    id: u64,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    html_url: Option<String>,
    #[serde(default)]
    user: Option<Author>,
}

#[derive(Debug, Deserialize)]
struct Author {
    login: String,
}

impl IssueComment {
    fn is_ours(&self, identity: &str) -> bool {
        self.body.as_deref().is_some_and(|b| b.starts_with(MARKER))
            && self
                .user
                .as_ref()
                .is_some_and(|u| u.login.eq_ignore_ascii_case(identity))
    }
}

/// A client for one repository's issue comments.
pub struct CommentClient {
    crab: Octocrab,
    repo: RepoName,
    runtime: tokio::runtime::Runtime,
    /// The login our comments are written by, when the caller knows it.
    author: Option<String>,
}

impl CommentClient {
    pub fn new(api_url: &str, token: &str, repo: RepoName) -> Result<CommentClient, GithubError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| GithubError::Transport(format!("cannot start the async runtime: {e}")))?;
        let crab = {
            // octocrab's client must be built inside a runtime.
            let _guard = runtime.enter();
            Octocrab::builder()
                .base_uri(api_url)
                .map_err(|e| {
                    GithubError::Config(format!("GITHUB_API_URL {api_url:?} is not a URL: {e}"))
                })?
                .personal_token(token.to_string())
                .set_connect_timeout(Some(Duration::from_secs(15)))
                .set_read_timeout(Some(Duration::from_secs(60)))
                .set_write_timeout(Some(Duration::from_secs(60)))
                .build()
                .map_err(|e| GithubError::Transport(describe(&e)))?
        };
        Ok(CommentClient {
            crab,
            repo,
            runtime,
            author: None,
        })
    }

    /// Names the login the token writes as (instead of asking GitHub).
    pub fn with_author(mut self, login: Option<String>) -> CommentClient {
        self.author = login.filter(|l| !l.trim().is_empty());
        self
    }

    /// Creates the PR's diffidx comment, or updates the one already there.
    pub fn upsert(&self, pr: u64, body: &str) -> Result<Outcome, GithubError> {
        let work = self.upsert_async(pr, body);
        self.runtime.block_on(async {
            tokio::time::timeout(DEADLINE, work)
                .await
                .unwrap_or_else(|_| {
                    Err(GithubError::Transport(format!(
                        "GitHub did not answer within {} s",
                        DEADLINE.as_secs()
                    )))
                })
        })
    }

    async fn upsert_async(&self, pr: u64, body: &str) -> Result<Outcome, GithubError> {
        let identity = self.identity(pr).await?;
        let ours = self.find_ours(pr, &identity).await?;
        let Some((first, duplicates)) = ours.split_first() else {
            let route = format!("{}/issues/{pr}/comments", self.route());
            let created: IssueComment = self
                .crab
                .post(route, Some(&serde_json::json!({ "body": body })))
                .await
                .map_err(|e| self.error(e, "create a comment on", pr))?;
            return Ok(Outcome::Created {
                id: created.id,
                url: created.html_url.unwrap_or_default(),
            });
        };
        for extra in duplicates {
            self.crab
                .issues(&self.repo.owner, &self.repo.name)
                .delete_comment(CommentId(extra.id))
                .await
                .map_err(|e| self.error(e, "delete a duplicate comment on", pr))?;
        }
        let url = first.html_url.clone().unwrap_or_default();
        if first.body.as_deref() == Some(body) {
            return Ok(Outcome::Unchanged { id: first.id, url });
        }
        let route = format!("{}/issues/comments/{}", self.route(), first.id);
        let updated: IssueComment = self
            .crab
            .patch(route, Some(&serde_json::json!({ "body": body })))
            .await
            .map_err(|e| self.error(e, "update the comment on", pr))?;
        Ok(Outcome::Updated {
            id: updated.id,
            url: updated.html_url.unwrap_or(url),
        })
    }

    /// The login the token writes comments as.
    async fn identity(&self, pr: u64) -> Result<String, GithubError> {
        if let Some(login) = &self.author {
            return Ok(login.clone());
        }
        match self.crab.get::<Author, _, ()>("/user", None).await {
            Ok(user) => Ok(user.login),
            // Installation tokens may not read `/user`.
            Err(octocrab::Error::GitHub { source, .. }) if source.status_code.as_u16() == 403 => {
                Ok(ACTIONS_BOT.to_owned())
            }
            Err(e) => Err(self.error(e, "find who the token writes as, for", pr)),
        }
    }

    /// Every comment of the PR that carries the marker and that `identity`
    /// wrote, oldest first.
    async fn find_ours(&self, pr: u64, identity: &str) -> Result<Vec<IssueComment>, GithubError> {
        let route = format!("{}/issues/{pr}/comments", self.route());
        let mut page: Page<IssueComment> = self
            .crab
            .get(route, Some(&[("per_page", "100")]))
            .await
            .map_err(|e| self.error(e, "list the comments of", pr))?;
        let mut ours = Vec::new();
        loop {
            ours.extend(
                page.take_items()
                    .into_iter()
                    .filter(|c| c.is_ours(identity)),
            );
            match self
                .crab
                .get_page::<IssueComment>(&page.next)
                .await
                .map_err(|e| self.error(e, "list the comments of", pr))?
            {
                Some(next) => page = next,
                None => return Ok(ours),
            }
        }
    }

    fn route(&self) -> String {
        format!("/repos/{}/{}", self.repo.owner, self.repo.name)
    }

    fn error(&self, err: octocrab::Error, action: &str, pr: u64) -> GithubError {
        let what = format!("{action} {}#{pr}", self.repo);
        match err {
            octocrab::Error::GitHub { source, .. } => {
                let status = source.status_code.as_u16();
                let message = source.message.clone();
                match status {
                    401 => GithubError::Unauthorized { what, message },
                    403 => GithubError::Forbidden { what, message },
                    404 => GithubError::NotFound { what, message },
                    _ => GithubError::Api {
                        what,
                        status,
                        message,
                    },
                }
            }
            other => GithubError::Transport(format!("cannot {what}: {}", describe(&other))),
        }
    }
}

/// An error with its causes, which octocrab's own messages often leave out.
fn describe(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}
