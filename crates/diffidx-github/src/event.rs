//! Which pull request, from the GitHub Actions environment (DESIGN.md §7).
//!
//! Actions describes the run in `GITHUB_*` variables and the triggering
//! webhook payload in the file `GITHUB_EVENT_PATH`. On `pull_request` events
//! `GITHUB_SHA` is GitHub's test merge commit, not the PR's head, so the base
//! and head come from the payload's `pull_request.base.sha` / `head.sha`.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::GithubError;

/// The `GITHUB_*` variables `pr-comment` reads; empty values count as unset.
#[derive(Debug, Clone, Default)]
pub struct ActionsEnv {
    pub api_url: Option<String>,
    pub server_url: Option<String>,
    pub repository: Option<String>,
    pub event_path: Option<PathBuf>,
    pub token: Option<String>,
    pub sha: Option<String>,
    pub step_summary: Option<PathBuf>,
}

impl ActionsEnv {
    /// Reads the process environment.
    pub fn from_process() -> ActionsEnv {
        ActionsEnv::from_lookup(|key| std::env::var(key).ok())
    }

    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> ActionsEnv {
        let get = |key: &str| lookup(key).filter(|v| !v.trim().is_empty());
        ActionsEnv {
            api_url: get("GITHUB_API_URL"),
            server_url: get("GITHUB_SERVER_URL"),
            repository: get("GITHUB_REPOSITORY"),
            event_path: get("GITHUB_EVENT_PATH").map(PathBuf::from),
            token: get("GITHUB_TOKEN"),
            sha: get("GITHUB_SHA"),
            step_summary: get("GITHUB_STEP_SUMMARY").map(PathBuf::from),
        }
    }

    /// The REST API root (`https://api.github.com`, or an Enterprise
    /// server's `https://host/api/v3`).
    pub fn api_url(&self) -> &str {
        self.api_url
            .as_deref()
            .unwrap_or("https://api.github.com")
            .trim_end_matches('/')
    }

    /// The web root that links point into.
    pub fn server_url(&self) -> &str {
        self.server_url
            .as_deref()
            .unwrap_or("https://github.com")
            .trim_end_matches('/')
    }
}

/// `OWNER/NAME`, checked against GitHub's rules for both parts so that they
/// can go into URLs as they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoName {
    pub owner: String,
    pub name: String,
}

impl RepoName {
    pub fn parse(text: &str) -> Result<RepoName, GithubError> {
        let invalid = || {
            GithubError::Config(format!(
            "{text:?} is not a GitHub repository name: expected OWNER/NAME (letters, digits, `-`, `_`, `.`)"
        ))
        };
        let (owner, name) = text.trim().split_once('/').ok_or_else(invalid)?;
        let valid = |part: &str| {
            !part.is_empty()
                && part != "."
                && part != ".."
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        };
        if !valid(owner) || !valid(name) {
            return Err(invalid());
        }
        Ok(RepoName {
            owner: owner.to_string(),
            name: name.to_string(),
        })
    }
}

impl std::fmt::Display for RepoName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.owner, self.name)
    }
}

/// What a `pull_request` (or `pull_request_target`) payload says about the PR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequestEvent {
    pub number: u64,
    pub base_sha: Option<String>,
    pub head_sha: Option<String>,
    /// `pull_request.base.repo.full_name`, the repository the PR targets.
    pub repository: Option<String>,
}

#[derive(Deserialize)]
struct Payload {
    number: Option<u64>,
    pull_request: Option<PullRequestPayload>,
}

#[derive(Deserialize)]
struct PullRequestPayload {
    number: Option<u64>,
    base: Option<BranchPayload>,
    head: Option<BranchPayload>,
}

#[derive(Deserialize)]
struct BranchPayload {
    sha: Option<String>,
    repo: Option<RepoPayload>,
}

#[derive(Deserialize)]
struct RepoPayload {
    full_name: Option<String>,
}

/// Reads the event file; `Ok(None)` when the event is not about a pull
/// request (a `push`, say).
pub fn read_event(path: &Path) -> Result<Option<PullRequestEvent>, GithubError> {
    let text = std::fs::read_to_string(path).map_err(|source| GithubError::EventFile {
        path: path.to_path_buf(),
        reason: source.to_string(),
    })?;
    parse_event(&text).map_err(|reason| GithubError::EventFile {
        path: path.to_path_buf(),
        reason,
    })
}

fn parse_event(text: &str) -> Result<Option<PullRequestEvent>, String> {
    let payload: Payload =
        serde_json::from_str(text).map_err(|e| format!("not a webhook payload: {e}"))?;
    let Some(pr) = payload.pull_request else {
        return Ok(None);
    };
    let number = pr
        .number
        .or(payload.number)
        .ok_or("the pull_request object has no number")?;
    let sha = |branch: &Option<BranchPayload>| {
        branch
            .as_ref()
            .and_then(|b| b.sha.clone())
            .filter(|s| is_hex_sha(s))
    };
    Ok(Some(PullRequestEvent {
        number,
        base_sha: sha(&pr.base),
        head_sha: sha(&pr.head),
        repository: pr
            .base
            .and_then(|b| b.repo)
            .and_then(|r| r.full_name)
            .filter(|n| RepoName::parse(n).is_ok()),
    }))
}

fn is_hex_sha(s: &str) -> bool {
    matches!(s.len(), 40 | 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA_A: &str = "1111111111111111111111111111111111111111";
    const SHA_B: &str = "2222222222222222222222222222222222222222";

    #[test]
    fn reads_number_base_and_head_of_a_pull_request_event() {
        let text = format!(
            r#"{{"action":"synchronize","number":7,"pull_request":{{"number":7,
            "base":{{"ref":"main","sha":"{SHA_A}","repo":{{"full_name":"acme/widgets"}}}},
            "head":{{"ref":"topic","sha":"{SHA_B}","repo":{{"full_name":"fork/widgets"}}}}}}}}"#
        );
        let event = parse_event(&text).unwrap().unwrap();
        assert_eq!(event.number, 7);
        assert_eq!(event.base_sha.as_deref(), Some(SHA_A));
        assert_eq!(event.head_sha.as_deref(), Some(SHA_B));
        assert_eq!(event.repository.as_deref(), Some("acme/widgets"));
    }

    #[test]
    fn a_push_event_is_not_a_pull_request() {
        let text = format!(r#"{{"ref":"refs/heads/main","after":"{SHA_A}"}}"#);
        assert_eq!(parse_event(&text).unwrap(), None);
    }

    #[test]
    fn garbage_and_bad_shas_are_refused_or_dropped() {
        assert!(parse_event("not json").is_err());
        assert!(parse_event(r#"{"pull_request":{}}"#).is_err());
        let event = parse_event(
            r#"{"pull_request":{"number":3,"base":{"sha":"--upload-pack=evil"},"head":{"sha":"HEAD"}}}"#,
        )
        .unwrap()
        .unwrap();
        assert_eq!((event.base_sha, event.head_sha), (None, None));
    }

    #[test]
    fn repository_names_are_checked() {
        let repo = RepoName::parse("acme/widgets.rs").unwrap();
        assert_eq!(repo.to_string(), "acme/widgets.rs");
        for bad in ["acme", "acme/", "/x", "a/b/c", "a/..", "a b/c", "a/b?x=1"] {
            assert!(RepoName::parse(bad).is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn empty_variables_count_as_unset_and_urls_lose_trailing_slashes() {
        let env = ActionsEnv::from_lookup(|key| match key {
            "GITHUB_TOKEN" => Some(String::new()),
            "GITHUB_API_URL" => Some("https://ghe.example/api/v3/".into()),
            _ => None,
        });
        assert_eq!(env.token, None);
        assert_eq!(env.api_url(), "https://ghe.example/api/v3");
        assert_eq!(env.server_url(), "https://github.com");
    }
}
