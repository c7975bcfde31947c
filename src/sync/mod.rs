//! Push to a shared Neo4j (DESIGN.md §6). Only this module knows Bolt.
//!
//! The notes are what is pushed: every noted commit not yet pushed to this
//! target, in batches of commits, each batch one transaction of `UNWIND`
//! `MERGE`s under uniqueness constraints, so a retried or repeated batch
//! changes nothing. After a batch commits, its commits are appended to a
//! per-target watermark file; a push that dies resumes from there.
//! Credentials never appear in errors, logs or status.

use std::collections::{BTreeMap, HashSet};
use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use diffidx_core::git::Repo;
use diffidx_core::symbol::symbol_id;
use diffidx_core::{NoteDocument, Status};
use neo4rs::{query, BoltType, ConfigBuilder, Graph};

use crate::index::{read_note, state_dir};

#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error("Neo4j configuration: {0}")]
    Config(String),
    #[error("cannot reach Neo4j at {uri}: {reason}; the push will resume from here next time")]
    Unreachable { uri: String, reason: String },
    #[error("Neo4j at {uri} refused the credentials of user '{user}' (or it is no Bolt server); check NEO4J_USERNAME and NEO4J_PASSWORD")]
    Auth { uri: String, user: String },
    #[error("Neo4j at {uri} failed ({what}): {reason}; the push will resume from here next time")]
    Query {
        uri: String,
        what: &'static str,
        reason: String,
    },
    #[error(transparent)]
    Index(#[from] crate::index::IndexError),
    #[error(transparent)]
    Core(#[from] diffidx_core::Error),
    #[error("cannot use {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

type Result<T, E = SyncError> = std::result::Result<T, E>;

/// Where and how to push. `Debug` leaves the password out.
#[derive(Clone)]
pub struct Neo4jConfig {
    pub uri: String,
    pub user: String,
    password: String,
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
            uri,
            user,
            password,
            database,
            batch_rows,
            repo_id,
            repo_url,
        }))
    }

    /// A file name for this target's watermark (no credentials in it).
    fn target_key(&self) -> String {
        let mut h = blake3::Hasher::new();
        h.update(self.uri.as_bytes());
        h.update(b"\0");
        h.update(self.database.as_deref().unwrap_or("").as_bytes());
        h.update(b"\0");
        h.update(self.repo_id.as_bytes());
        h.finalize().to_hex()[..16].to_string()
    }

    fn watermark_path(&self, repo: &Repo) -> PathBuf {
        state_dir(repo)
            .join("neo4j")
            .join(format!("{}.pushed", self.target_key()))
    }
}

/// The repository's id in a shared graph: git config `diffidx.repo`, else the
/// normalized origin URL (`github.com/owner/name`), else the work tree path.
pub fn repository_identity(repo: &Repo) -> (String, String) {
    let url = repo.config_string("remote.origin.url");
    if let Some(id) = repo.config_string("diffidx.repo") {
        return (id, url.unwrap_or_default());
    }
    match url {
        Some(url) => (normalize_url(&url), url),
        None => {
            let path = repo.work_dir().unwrap_or_else(|| repo.common_dir());
            let path = path.canonicalize().unwrap_or(path).display().to_string();
            (format!("local:{path}"), String::new())
        }
    }
}

/// `https://user@GitHub.com/Owner/Name.git`, `git@github.com:Owner/Name` →
/// `github.com/owner/name`.
pub fn normalize_url(url: &str) -> String {
    let mut s = url
        .trim()
        .trim_end_matches('/')
        .trim_end_matches(".git")
        .to_owned();
    if let Some(i) = s.find("://") {
        s = s[i + 3..].to_owned();
    } else if let Some((host, path)) = s.split_once(':') {
        // scp-like `user@host:path`
        if !host.contains('/') {
            s = format!("{host}/{path}");
        }
    }
    if let Some(i) = s.find('@') {
        if s[..i].find('/').is_none() {
            s = s[i + 1..].to_owned();
        }
    }
    s.to_lowercase()
}

/// What a push did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PushReport {
    pub commits: usize,
    pub rows: usize,
    pub transactions: usize,
    pub already: usize,
}

/// Noted commits not pushed to this target yet.
pub fn backlog(repo: &Repo, config: &Neo4jConfig) -> Result<usize> {
    let pushed = read_watermark(&config.watermark_path(repo))?;
    let notes = repo.notes()?;
    Ok(notes
        .list()?
        .iter()
        .filter(|(c, _)| !pushed.contains(&c.to_string()))
        .count())
}

/// Pushes every noted commit not pushed yet, in order of commit time.
pub fn push(repo: &Repo, config: &Neo4jConfig) -> Result<PushReport> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|source| SyncError::Io {
            path: PathBuf::from("tokio runtime"),
            source,
        })?;
    runtime.block_on(push_async(repo, config))
}

async fn push_async(repo: &Repo, config: &Neo4jConfig) -> Result<PushReport> {
    let watermark = config.watermark_path(repo);
    let pushed = read_watermark(&watermark)?;
    let mut notes = repo.notes()?;
    let mut todo = Vec::new();
    let mut report = PushReport::default();
    for (commit, _) in notes.list()? {
        if pushed.contains(&commit.to_string()) {
            report.already += 1;
            continue;
        }
        let Ok(info) = repo.commit(commit) else {
            continue;
        };
        if let Some(Ok(note)) = read_note(&mut notes, &info)? {
            todo.push((info, note));
        }
    }
    if todo.is_empty() {
        return Ok(report);
    }
    todo.sort_by_key(|(info, _)| (info.time, info.id));
    let graph = connect(config).await?;
    ensure_constraints(&graph, config).await?;
    let mut start = 0;
    while start < todo.len() {
        // Commits per transaction: as many as fit the row budget, at least one.
        let mut end = start;
        let mut rows = 0;
        while end < todo.len()
            && (end == start || rows + todo[end].1.deltas.len() * 3 + 2 <= config.batch_rows)
        {
            rows += todo[end].1.deltas.len() * 3 + 2;
            end += 1;
        }
        let batch = &todo[start..end];
        let sent = with_retries(config, || push_batch(&graph, config, batch)).await?;
        append_watermark(
            &watermark,
            batch.iter().map(|(info, _)| info.id.to_string()),
        )?;
        report.commits += batch.len();
        report.rows += sent;
        report.transactions += 1;
        start = end;
    }
    Ok(report)
}

async fn connect(config: &Neo4jConfig) -> Result<Graph> {
    let mut builder = ConfigBuilder::default()
        .uri(config.uri.as_str())
        .user(config.user.as_str())
        .password(config.password.as_str())
        .max_connections(2);
    if let Some(db) = &config.database {
        builder = builder.db(db.as_str());
    }
    let neo_config = builder
        .build()
        .map_err(|e| SyncError::Config(e.to_string()))?;
    let graph = timed(config, "connect", Graph::connect(neo_config)).await?;
    // The pool connects lazily: ask something now, so that a server that is
    // down or refuses the credentials is reported at once.
    match timed(config, "connect", graph.run(query("RETURN 1"))).await {
        Ok(()) => Ok(graph),
        // neo4rs keeps retrying a refused login; a port that answers while
        // the login never completes means the credentials were refused.
        Err(SyncError::Unreachable { .. }) if port_answers(&config.uri) => Err(SyncError::Auth {
            uri: config.uri.clone(),
            user: config.user.clone(),
        }),
        Err(e) => Err(e),
    }
}

/// True when something accepts TCP connections at the URI's host and port.
fn port_answers(uri: &str) -> bool {
    use std::net::ToSocketAddrs;
    let rest = uri.split_once("://").map_or(uri, |(_, r)| r);
    let host_port = rest.split('/').next().unwrap_or(rest);
    let host_port = if host_port.contains(':') {
        host_port.to_owned()
    } else {
        format!("{host_port}:7687")
    };
    host_port
        .to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.next())
        .is_some_and(|addr| {
            std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_ok()
        })
}

/// Every network step gets a deadline: neo4rs retries a lost connection with
/// backoff for a long time on its own.
async fn timed<T>(
    config: &Neo4jConfig,
    what: &'static str,
    step: impl std::future::Future<Output = neo4rs::Result<T>>,
) -> Result<T> {
    match tokio::time::timeout(STEP_DEADLINE, step).await {
        Err(_) => Err(SyncError::Unreachable {
            uri: config.uri.clone(),
            reason: format!("no answer within {} s ({what})", STEP_DEADLINE.as_secs()),
        }),
        Ok(Err(e)) => Err(classify(config, what, &e)),
        Ok(Ok(value)) => Ok(value),
    }
}

const STEP_DEADLINE: Duration = Duration::from_secs(10);

fn classify(config: &Neo4jConfig, what: &'static str, e: &neo4rs::Error) -> SyncError {
    let reason = e.to_string().replace(&config.password, "***");
    let lower = reason.to_lowercase();
    if lower.contains("unauthorized")
        || lower.contains("authentication")
        || lower.contains("credentials")
    {
        SyncError::Auth {
            uri: config.uri.clone(),
            user: config.user.clone(),
        }
    } else if matches!(
        e,
        neo4rs::Error::IOError { .. } | neo4rs::Error::ConnectionError
    ) || lower.contains("connection")
        || lower.contains("refused")
        || lower.contains("broken pipe")
    {
        SyncError::Unreachable {
            uri: config.uri.clone(),
            reason,
        }
    } else {
        SyncError::Query {
            uri: config.uri.clone(),
            what,
            reason,
        }
    }
}

/// Retries transient failures (connection trouble) with backoff: 0.5, 1, 2 s.
async fn with_retries<F, Fut>(config: &Neo4jConfig, mut attempt: F) -> Result<usize>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<usize>>,
{
    let mut delay = Duration::from_millis(500);
    let mut tries = 0;
    loop {
        match attempt().await {
            Err(SyncError::Unreachable { .. } | SyncError::Query { .. }) if tries < 3 => {
                tries += 1;
                tokio::time::sleep(delay).await;
                delay *= 2;
            }
            other => {
                let _ = config;
                return other;
            }
        }
    }
}

async fn ensure_constraints(graph: &Graph, config: &Neo4jConfig) -> Result<()> {
    for label in ["Repository", "Commit", "File", "Symbol"] {
        let q = format!(
            "CREATE CONSTRAINT {}_id IF NOT EXISTS FOR (n:{label}) REQUIRE n.id IS UNIQUE",
            label.to_lowercase()
        );
        match timed(config, "create constraints", graph.run(query(&q))).await {
            Ok(()) => {}
            Err(SyncError::Query { reason, .. })
                if reason.to_lowercase().contains("already exists")
                    || reason.to_lowercase().contains("equivalent") => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn s(v: &str) -> BoltType {
    BoltType::from(v)
}

type Row = BTreeMap<String, BoltType>;

fn row(fields: Vec<(&str, BoltType)>) -> Row {
    fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

/// One transaction: every node and relationship of the batch's notes.
async fn push_batch(
    graph: &Graph,
    config: &Neo4jConfig,
    batch: &[(diffidx_core::git::CommitInfo, NoteDocument)],
) -> Result<usize> {
    let ns = |id: &str| format!("{}:{id}", config.repo_id);
    let mut commits = Vec::new();
    let mut files: BTreeMap<String, Row> = BTreeMap::new();
    let mut symbols: BTreeMap<String, Row> = BTreeMap::new();
    let mut changes = Vec::new();
    let mut children = Vec::new();
    let mut in_file = Vec::new();
    let mut moves = Vec::new();
    for (info, note) in batch {
        let sha = info.id.to_string();
        commits.push(row(vec![
            ("id", s(&ns(&sha))),
            ("sha", s(&sha)),
            ("parent", s(note.parent.as_deref().unwrap_or(""))),
            ("date", s(&info.date)),
            ("time", BoltType::from(info.time)),
            ("author", s(&info.author)),
            ("subject", s(&info.subject)),
        ]));
        for d in &note.deltas {
            let language = diffidx_core::Language::from_path(&d.path)
                .map(|l| l.name())
                .unwrap_or("");
            let file_id = ns(&format!("file:{}", d.path));
            files.insert(
                file_id.clone(),
                row(vec![("id", s(&file_id)), ("path", s(&d.path))]),
            );
            let sym_id = ns(&d.id);
            symbols.insert(
                sym_id.clone(),
                row(vec![
                    ("id", s(&sym_id)),
                    ("path", s(&d.path)),
                    ("qualname", s(&d.qualname)),
                    ("kind", s(d.kind.as_str())),
                    ("sig", s(&d.sig)),
                    ("language", s(language)),
                    ("deleted", BoltType::from(d.status == Status::Deleted)),
                ]),
            );
            changes.push(row(vec![
                ("sid", s(&sym_id)),
                ("cid", s(&ns(&sha))),
                ("status", s(d.status.as_str())),
                ("old_path", s(d.old_path.as_deref().unwrap_or(""))),
                ("modified", BoltType::from(d.modified.unwrap_or(false))),
                ("start_line", BoltType::from(d.start_line as i64)),
                ("end_line", BoltType::from(d.end_line as i64)),
            ]));
            match &d.parent_id {
                Some(parent) => {
                    children.push(row(vec![("child", s(&sym_id)), ("parent", s(&ns(parent)))]))
                }
                None => in_file.push(row(vec![("child", s(&sym_id)), ("file", s(&file_id))])),
            }
            if let (Status::Moved, Some(old_path)) = (d.status, &d.old_path) {
                moves.push(row(vec![
                    (
                        "from",
                        s(&ns(&symbol_id(old_path, d.kind, &d.qualname, &d.sig))),
                    ),
                    ("to", s(&sym_id)),
                    ("old_path", s(old_path)),
                    ("qualname", s(&d.qualname)),
                    ("kind", s(d.kind.as_str())),
                    ("sig", s(&d.sig)),
                ]));
            }
        }
    }
    let repo_row = vec![row(vec![
        ("id", s(&config.repo_id)),
        ("url", s(&config.repo_url)),
    ])];
    let rid = config.repo_id.clone();
    let statements: Vec<(&'static str, String, Vec<Row>)> = vec![
        (
            "repository",
            "UNWIND $rows AS r MERGE (n:Repository {id: r.id}) SET n.url = r.url".into(),
            repo_row,
        ),
        (
            "commits",
            format!(
                "UNWIND $rows AS r MERGE (c:Commit {{id: r.id}}) SET c.repo = '{rid}', c.sha = r.sha, \
                 c.parent = r.parent, c.date = r.date, c.time = r.time, c.author = r.author, c.subject = r.subject \
                 WITH c MATCH (p:Repository {{id: '{rid}'}}) MERGE (c)-[:IN_REPO]->(p)",
                rid = cypher_escape(&rid)
            ),
            commits,
        ),
        (
            "files",
            format!(
                "UNWIND $rows AS r MERGE (f:File {{id: r.id}}) SET f.repo = '{}', f.path = r.path",
                cypher_escape(&rid)
            ),
            files.into_values().collect(),
        ),
        (
            "symbols",
            format!(
                "UNWIND $rows AS r MERGE (s:Symbol {{id: r.id}}) SET s.repo = '{}', s.path = r.path, \
                 s.qualname = r.qualname, s.kind = r.kind, s.sig = r.sig, s.language = r.language, \
                 s.deleted = r.deleted",
                cypher_escape(&rid)
            ),
            symbols.into_values().collect(),
        ),
        (
            "changes",
            "UNWIND $rows AS r MATCH (s:Symbol {id: r.sid}) MATCH (c:Commit {id: r.cid}) \
             MERGE (s)-[e:CHANGED_IN]->(c) SET e.status = r.status, e.old_path = r.old_path, \
             e.modified = r.modified, e.start_line = r.start_line, e.end_line = r.end_line"
                .into(),
            changes,
        ),
        (
            "hierarchy",
            "UNWIND $rows AS r MATCH (a:Symbol {id: r.child}) MERGE (b:Symbol {id: r.parent}) \
             MERGE (a)-[:CHILD_OF]->(b)"
                .into(),
            children,
        ),
        (
            "files of symbols",
            "UNWIND $rows AS r MATCH (a:Symbol {id: r.child}) MATCH (f:File {id: r.file}) \
             MERGE (a)-[:CHILD_OF]->(f)"
                .into(),
            in_file,
        ),
        (
            "moves",
            format!(
                "UNWIND $rows AS r MATCH (b:Symbol {{id: r.to}}) MERGE (a:Symbol {{id: r.from}}) \
                 ON CREATE SET a.repo = '{}', a.path = r.old_path, a.qualname = r.qualname, \
                 a.kind = r.kind, a.sig = r.sig, a.language = b.language \
                 SET a.deleted = true MERGE (a)-[:MOVED_TO]->(b)",
                cypher_escape(&rid)
            ),
            moves,
        ),
    ];
    let mut txn = timed(config, "begin", graph.start_txn()).await?;
    let mut sent = 0;
    for (what, q, rows) in statements {
        for chunk in rows.chunks(config.batch_rows.max(1)) {
            let list: Vec<BoltType> = chunk
                .iter()
                .map(|r| {
                    BoltType::from(
                        r.clone()
                            .into_iter()
                            .collect::<std::collections::HashMap<_, _>>(),
                    )
                })
                .collect();
            sent += list.len();
            if let Err(e) = timed(config, what, txn.run(query(&q).param("rows", list))).await {
                let _ = tokio::time::timeout(STEP_DEADLINE, txn.rollback()).await;
                return Err(e);
            }
        }
    }
    timed(config, "commit", txn.commit()).await?;
    Ok(sent)
}

fn cypher_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\'', "\\'")
}

fn read_watermark(path: &std::path::Path) -> Result<HashSet<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text
            .lines()
            .map(str::to_owned)
            .filter(|l| l.len() == 40)
            .collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(HashSet::new()),
        Err(source) => Err(SyncError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

fn append_watermark(path: &std::path::Path, shas: impl Iterator<Item = String>) -> Result<()> {
    let io = |source| SyncError::Io {
        path: path.to_owned(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let mut file = std::fs::File::options()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io)?;
    let mut text = String::new();
    for sha in shas {
        text.push_str(&sha);
        text.push('\n');
    }
    file.write_all(text.as_bytes()).map_err(io)?;
    file.sync_data().map_err(io)
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
}
