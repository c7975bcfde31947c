//! Where and as whom to push, and this repository's id in a shared graph.

use std::path::PathBuf;

use diffidx_core::git::Repo;

use super::{Result, SyncError};
use crate::state::StateDir;

/// Where and how to push. `Debug` leaves the password out.
#[derive(Clone)]
pub struct Neo4jConfig {
    /// The URI without credentials: what messages and logs show.
    pub uri: String,
    /// The URI as configured, which may carry `user:password@`: only for
    /// connecting.
    connect_uri: String,
    pub user: String,
    pub(super) password: String,
    pub database: Option<String>,
    /// Rows per `UNWIND` batch (default 1,000).
    pub batch_rows: usize,
    /// This repository's id in the shared graph.
    pub repo_id: String,
    pub repo_url: String,
}

impl std::fmt::Debug for Neo4jConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Neo4jConfig")
            .field("uri", &self.uri)
            .field("user", &self.user)
            .field("database", &self.database)
            .field("repo_id", &self.repo_id)
            .finish_non_exhaustive()
    }
}

impl Neo4jConfig {
    /// From the environment (`NEO4J_URI` or `NEO4J_URL`, `NEO4J_USERNAME`,
    /// `NEO4J_PASSWORD`, `NEO4J_DATABASE`), falling back to git config
    /// `diffidx.neo4j.uri|username|database|batchSize` (never the password).
    /// `None` when no URI or no password is given: nothing is pushed then.
    pub fn from_env(repo: &Repo) -> Result<Option<Neo4jConfig>> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let uri = env("NEO4J_URI")
            .or_else(|| env("NEO4J_URL"))
            .or_else(|| repo.config_string("diffidx.neo4j.uri"));
        let (Some(uri), Some(password)) = (uri, env("NEO4J_PASSWORD")) else {
            return Ok(None);
        };
        let user = env("NEO4J_USERNAME")
            .or_else(|| repo.config_string("diffidx.neo4j.username"))
            .unwrap_or_else(|| "neo4j".into());
        let database =
            env("NEO4J_DATABASE").or_else(|| repo.config_string("diffidx.neo4j.database"));
        let batch_rows = match repo.config_integer("diffidx.neo4j.batchSize") {
            Some(n) if n > 0 => n as usize,
            Some(n) => {
                return Err(SyncError::Config(format!(
                    "diffidx.neo4j.batchSize must be positive, not {n}"
                )))
            }
            None => 1000,
        };
        let (repo_id, repo_url) = repository_identity(repo);
        Ok(Some(Neo4jConfig {
            uri: without_userinfo(&uri),
            connect_uri: uri,
            user,
            password,
            database,
            batch_rows,
            repo_id,
            repo_url,
        }))
    }

    /// A file name for this target's watermark (no credentials in it).
    pub(super) fn target_key(&self) -> String {
        let mut h = blake3::Hasher::new();
        h.update(self.connect_uri.as_bytes());
        h.update(b"\0");
        h.update(self.database.as_deref().unwrap_or("").as_bytes());
        h.update(b"\0");
        h.update(self.repo_id.as_bytes());
        h.finalize().to_hex()[..16].to_string()
    }

    /// The URI to connect to (with any credentials it carries).
    pub(super) fn connect_uri(&self) -> &str {
        &self.connect_uri
    }

    pub(super) fn watermark_path(&self, state: &StateDir) -> PathBuf {
        state.neo4j().join(format!("{}.pushed", self.target_key()))
    }
}

/// The repository's id in a shared graph: git config `diffidx.repo`, else the
/// normalized origin URL (`github.com/owner/name`), else the work tree path.
pub fn repository_identity(repo: &Repo) -> (String, String) {
    let url = repo.config_string("remote.origin.url");
    let shown = url.as_deref().map(without_userinfo).unwrap_or_default();
    if let Some(id) = repo.config_string("diffidx.repo") {
        return (id, shown);
    }
    match url {
        Some(url) => (normalize_url(&url), shown),
        None => {
            let path = repo.work_dir().unwrap_or_else(|| repo.common_dir());
            let path = path.canonicalize().unwrap_or(path).display().to_string();
            (format!("local:{path}"), String::new())
        }
    }
}

/// `url` without its userinfo (`user:token@`), so that no credential a URL
/// carries is stored, printed or logged: `https://u:t@host/p` →
/// `https://host/p`, `git@host:p` → `host:p`, `bolt://u:p@host:7687` →
/// `bolt://host:7687`.
pub fn without_userinfo(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (Some(scheme), rest),
        None => (None, url),
    };
    // The authority ends at the first `/` (or, scp-like, at the first `:`
    // after the `@`); its userinfo ends at its last `@`.
    let authority_end = match scheme {
        Some(_) => rest.find('/').unwrap_or(rest.len()),
        None => rest.find('/').unwrap_or(rest.len()).min(
            rest.rfind('@')
                .and_then(|at| rest[at..].find(':').map(|c| at + c))
                .unwrap_or(rest.len()),
        ),
    };
    let rest = match rest[..authority_end].rfind('@') {
        Some(at) => &rest[at + 1..],
        None => rest,
    };
    match scheme {
        Some(scheme) => format!("{scheme}://{rest}"),
        None => rest.to_owned(),
    }
}

/// `https://user@GitHub.com/Owner/Name.git`, `git@github.com:Owner/Name` →
/// `github.com/owner/name`: host and path of the URL as gix parses it (so
/// scp-like and ssh forms agree), without user, port, `.git` or case.
pub fn normalize_url(url: &str) -> String {
    let trimmed = url.trim();
    let Ok(parsed) = gix::url::parse(gix::bstr::BStr::new(trimmed)) else {
        return trimmed.to_lowercase();
    };
    let path = parsed.path.to_string();
    let path = path
        .trim_matches('/')
        .trim_end_matches(".git")
        .trim_end_matches('/');
    match parsed.host() {
        Some(host) => format!("{host}/{path}").to_lowercase(),
        None => path.to_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::normalize_url;

    #[test]
    fn urls_normalize_to_host_and_path() {
        for url in [
            "https://github.com/Owner/Name.git",
            "https://user@GitHub.com/owner/name",
            "git@github.com:Owner/Name.git",
            "ssh://git@github.com/owner/name/",
        ] {
            assert_eq!(normalize_url(url), "github.com/owner/name", "{url}");
        }
    }

    #[test]
    fn userinfo_is_stripped_from_every_url_form() {
        use super::without_userinfo as strip;
        assert_eq!(
            strip("https://bot:ghp_secret@github.com/o/r.git"),
            "https://github.com/o/r.git"
        );
        assert_eq!(
            strip("bolt://neo4j:pw@db.example:7687"),
            "bolt://db.example:7687"
        );
        assert_eq!(
            strip("neo4j+s://u:p%40ss@host/db?x=a@b"),
            "neo4j+s://host/db?x=a@b"
        );
        assert_eq!(strip("git@github.com:o/r.git"), "github.com:o/r.git");
        assert_eq!(
            strip("https://github.com/o/r@v1"),
            "https://github.com/o/r@v1"
        );
        assert_eq!(strip("/srv/git/r.git"), "/srv/git/r.git");
    }
}
