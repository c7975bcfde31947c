//! The Bolt side of the push: connecting with deadlines, classifying
//! failures, and writing `crate::graph` rows in one transaction. Only this
//! file knows neo4rs.

use std::collections::HashMap;
use std::time::Duration;

use neo4rs::{query, BoltType, ConfigBuilder, Graph};

use super::{Neo4jConfig, Result, SyncError};
use crate::graph::{GraphRows, Parent, Prop, Row};

pub(super) async fn connect(config: &Neo4jConfig) -> Result<Graph> {
    let mut builder = ConfigBuilder::default()
        .uri(config.connect_uri())
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
        Err(SyncError::Unreachable { .. }) if port_answers(config.connect_uri()) => {
            Err(SyncError::Auth {
                uri: config.uri.clone(),
                user: config.user.clone(),
            })
        }
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
    let reason = e
        .to_string()
        .replace(config.connect_uri(), &config.uri)
        .replace(&config.password, "***");
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
pub(super) async fn with_retries<F, Fut>(config: &Neo4jConfig, mut attempt: F) -> Result<usize>
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

pub(super) async fn ensure_constraints(graph: &Graph, config: &Neo4jConfig) -> Result<()> {
    for label in [
        "Repository",
        "Commit",
        "File",
        "Symbol",
        "Directory",
        "Module",
        "UnresolvedCall",
    ] {
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

fn bolt(p: Prop<'_>) -> BoltType {
    match p {
        Prop::Str(s) => BoltType::from(s),
        Prop::Int(n) => BoltType::from(n),
        Prop::Bool(b) => BoltType::from(b),
        Prop::Float(x) => BoltType::from(x),
    }
}

/// A graph row as a Bolt map, with `extra` properties (the namespaced ids a
/// shared database needs) added or replaced.
fn map(row: &impl Row, extra: Vec<(&'static str, String)>) -> BoltType {
    let mut fields: HashMap<String, BoltType> = row
        .props()
        .into_iter()
        .map(|(k, v)| (k.to_owned(), bolt(v)))
        .collect();
    for (k, v) in extra {
        fields.insert(k.to_owned(), BoltType::from(v));
    }
    BoltType::from(fields)
}

/// One statement per row kind; the rows go as `$rows`, the repository id as
/// `$repo` (values are parameters, never spliced into the query text).
const COMMITS: &str = "UNWIND $rows AS r MERGE (c:Commit {id: r.id}) SET c.repo = $repo, \
     c.sha = r.sha, c.parent = r.parent, c.date = r.date, c.time = r.time, c.author = r.author, \
     c.subject = r.subject WITH c MATCH (p:Repository {id: $repo}) MERGE (c)-[:IN_REPO]->(p)";
const FILES: &str = "UNWIND $rows AS r MERGE (f:File {id: r.id}) SET f.repo = $repo, \
     f.path = r.path, f.language = r.language";
const SYMBOLS: &str = "UNWIND $rows AS r MERGE (s:Symbol {id: r.id}) SET s.repo = $repo, \
     s.path = r.path, s.qualname = r.qualname, s.name = r.name, s.kind = r.kind, s.sig = r.sig, \
     s.language = r.language, s.deleted = r.deleted, s.start_line = r.start_line, \
     s.end_line = r.end_line, s.content_hash = r.content_hash";
const DELETED: &str =
    "UNWIND $rows AS r MERGE (s:Symbol {id: r.id}) ON CREATE SET s.repo = $repo, \
     s.path = r.path, s.qualname = r.qualname, s.name = r.name, s.kind = r.kind, s.sig = r.sig, \
     s.language = r.language, s.content_hash = r.content_hash \
     SET s.deleted = true, s.start_line = r.start_line, s.end_line = r.end_line";
const CHILD_OF_SYMBOL: &str = "UNWIND $rows AS r MATCH (a:Symbol {id: r.child}) \
     MATCH (b:Symbol {id: r.parent}) MERGE (a)-[:CHILD_OF]->(b)";
const CHILD_OF_FILE: &str = "UNWIND $rows AS r MATCH (a:Symbol {id: r.child}) \
     MATCH (f:File {id: r.parent}) MERGE (a)-[:CHILD_OF]->(f)";
const CHANGES: &str = "UNWIND $rows AS r MATCH (s:Symbol {id: r.id}) MATCH (c:Commit {id: r.sha}) \
     MERGE (s)-[e:CHANGED_IN]->(c) SET e.status = r.status, e.old_path = r.old_path, \
     e.modified = r.modified, e.start_line = r.start_line, e.end_line = r.end_line";
/// A move's old identity: the same qualname at the old path when known,
/// else the live symbol there with the same kind, own name and text (as in
/// the store), else a new node for it.
const MOVES: &str = "UNWIND $rows AS r MATCH (b:Symbol {id: r.to}) \
     OPTIONAL MATCH (same:Symbol {id: r.from}) \
     OPTIONAL MATCH (alike:Symbol {repo: $repo, path: r.old_path, kind: r.kind, name: r.name, \
     content_hash: r.content_hash}) WHERE alike.id <> r.to \
     WITH r, b, same, collect(alike.id) AS alikes \
     WITH r, b, coalesce(same.id, head(alikes), r.from) AS from \
     MERGE (a:Symbol {id: from}) ON CREATE SET a.repo = $repo, a.path = r.old_path, \
     a.qualname = r.qualname, a.name = r.name, a.kind = r.kind, a.sig = r.sig, \
     a.language = b.language, a.start_line = 0, a.end_line = 0, a.content_hash = '' \
     SET a.deleted = true MERGE (a)-[l:MOVED_TO]->(b) SET l.sha = r.sha";

/// Lineage: both symbols are in the batch's notes (the DELETED and the ADDED
/// delta of one commit), so both nodes exist by now.
const CONTINUES: &str = "UNWIND $rows AS r MATCH (a:Symbol {id: r.from}) \
     MATCH (b:Symbol {id: r.to}) MERGE (a)-[l:CONTINUES]->(b) SET l.sha = r.sha, \
     l.similarity = r.similarity";

/// Every row of `rows` as one transaction; returns the rows sent.
pub(super) async fn write_rows(
    graph: &Graph,
    config: &Neo4jConfig,
    rows: &GraphRows,
) -> Result<usize> {
    let repo = config.repo_id.as_str();
    let ns = |id: &str| format!("{repo}:{id}");
    let file_id = |path: &str| ns(&format!("file:{path}"));
    let repository = HashMap::from([
        ("id".to_owned(), BoltType::from(repo)),
        ("url".to_owned(), BoltType::from(config.repo_url.as_str())),
    ]);
    let mut statements: Vec<(&'static str, &'static str, Vec<BoltType>)> = vec![
        (
            "repository",
            "UNWIND $rows AS r MERGE (n:Repository {id: r.id}) SET n.url = r.url",
            vec![BoltType::from(repository)],
        ),
        (
            "commits",
            COMMITS,
            rows.commits
                .iter()
                .map(|c| map(c, vec![("id", ns(&c.sha))]))
                .collect(),
        ),
        (
            "files",
            FILES,
            rows.files
                .iter()
                .map(|f| map(f, vec![("id", file_id(&f.path))]))
                .collect(),
        ),
        (
            "symbols",
            SYMBOLS,
            rows.symbols
                .values()
                .map(|s| map(s, vec![("id", ns(&s.id))]))
                .collect(),
        ),
        (
            "deleted symbols",
            DELETED,
            rows.deleted
                .values()
                .map(|s| map(s, vec![("id", ns(&s.id))]))
                .collect(),
        ),
    ];
    let (mut to_symbols, mut to_files) = (Vec::new(), Vec::new());
    for edge in &rows.child_of {
        let child = ("child", ns(&edge.child));
        match &edge.parent {
            Parent::Symbol(id) => to_symbols.push(map(edge, vec![child, ("parent", ns(id))])),
            Parent::File(path) => to_files.push(map(edge, vec![child, ("parent", file_id(path))])),
        }
    }
    statements.push(("hierarchy", CHILD_OF_SYMBOL, to_symbols));
    statements.push(("files of symbols", CHILD_OF_FILE, to_files));
    statements.push((
        "changes",
        CHANGES,
        rows.changed_in
            .iter()
            .map(|c| map(c, vec![("id", ns(&c.id)), ("sha", ns(&c.sha))]))
            .collect(),
    ));
    statements.push((
        "moves",
        MOVES,
        rows.moved_to
            .iter()
            .map(|m| map(m, vec![("from", ns(&m.from)), ("to", ns(&m.to))]))
            .collect(),
    ));
    statements.push((
        "lineage",
        CONTINUES,
        rows.continues
            .iter()
            .map(|c| map(c, vec![("from", ns(&c.from)), ("to", ns(&c.to))]))
            .collect(),
    ));
    let mut txn = timed(config, "begin", graph.start_txn()).await?;
    let mut sent = 0;
    for (what, text, rows) in statements {
        for chunk in rows.chunks(config.batch_rows.max(1)) {
            sent += chunk.len();
            let q = query(text)
                .param("rows", chunk.to_vec())
                .param("repo", repo);
            if let Err(e) = timed(config, what, txn.run(q)).await {
                let _ = tokio::time::timeout(STEP_DEADLINE, txn.rollback()).await;
                return Err(e);
            }
        }
    }
    timed(config, "commit", txn.commit()).await?;
    Ok(sent)
}

/// Vectors per transaction: 384 floats each make large messages.
const VECTOR_ROWS: usize = 500;

/// The symbols' vectors, set on their nodes as `embedding` (a list of
/// floats) with the model in `embedding_model`, in one transaction;
/// returns the rows sent. Symbols the graph lacks are skipped by the MATCH.
pub(super) async fn write_vectors(
    graph: &Graph,
    config: &Neo4jConfig,
    vectors: &crate::semantic::SymbolVectors,
) -> Result<usize> {
    let repo = config.repo_id.as_str();
    let rows: Vec<BoltType> = vectors
        .rows
        .iter()
        .map(|(id, v)| {
            let embedding: Vec<f64> = v.iter().map(|&x| f64::from(x)).collect();
            BoltType::from(HashMap::from([
                ("id".to_owned(), BoltType::from(format!("{repo}:{id}"))),
                ("embedding".to_owned(), BoltType::from(embedding)),
            ]))
        })
        .collect();
    let mut txn = timed(config, "begin", graph.start_txn()).await?;
    for chunk in rows.chunks(VECTOR_ROWS) {
        let q = query(
            "UNWIND $rows AS r MATCH (s:Symbol {id: r.id}) \
             SET s.embedding = r.embedding, s.embedding_model = $model",
        )
        .param("rows", chunk.to_vec())
        .param("model", vectors.model.as_str());
        if let Err(e) = timed(config, "vectors", txn.run(q)).await {
            let _ = tokio::time::timeout(STEP_DEADLINE, txn.rollback()).await;
            return Err(e);
        }
    }
    timed(config, "commit", txn.commit()).await?;
    Ok(rows.len())
}

/// A vector index on `Symbol.embedding` (cosine, `dim` dimensions), where
/// the server has them (Neo4j 5.11 and later); `Err` says why not. Never a
/// failure of the push: the vectors are stored either way.
pub(super) async fn ensure_vector_index(
    graph: &Graph,
    config: &Neo4jConfig,
    dim: usize,
) -> std::result::Result<(), String> {
    // Index options take no parameters; `dim` is a number we made.
    let q = format!(
        "CREATE VECTOR INDEX symbol_embedding IF NOT EXISTS FOR (s:Symbol) ON (s.embedding) \
         OPTIONS {{indexConfig: {{`vector.dimensions`: {dim}, \
         `vector.similarity_function`: 'cosine'}}}}"
    );
    match timed(config, "create the vector index", graph.run(query(&q))).await {
        Ok(()) => Ok(()),
        Err(SyncError::Query { reason, .. })
            if reason.to_lowercase().contains("already exists")
                || reason.to_lowercase().contains("equivalent") =>
        {
            Ok(())
        }
        Err(SyncError::Query { reason, .. }) => Err(reason),
        Err(e) => Err(e.to_string()),
    }
}

/// The code graph of one repository, replacing the one pushed before, in
/// one transaction; returns the rows sent. The graph describes one tree,
/// so the old rows go first (directories and modules, and every
/// `CONTAINS`, `IMPORTS`, `CALLS`, `INHERITS` and `IMPLEMENTS` leaving this
/// repository's nodes); symbols stay (their history is in `CHANGED_IN`).
pub(super) async fn write_code_graph(
    graph: &Graph,
    config: &Neo4jConfig,
    snapshot: &crate::store::codegraph::GraphSnapshot,
) -> Result<usize> {
    use diffidx_core::codegraph::ImportTarget;

    let repo = config.repo_id.as_str();
    let ns = |id: &str| format!("{repo}:{id}");
    let file_id = |path: &str| ns(&format!("file:{path}"));
    let dir_id = |path: &str| ns(&format!("dir:{path}"));
    let module_id = |name: &str| ns(&format!("module:{name}"));
    let rows = &snapshot.rows;
    let mut statements: Vec<(&'static str, String, Vec<BoltType>)> = Vec::new();
    for (label, rel) in [
        ("Symbol", "CALLS"),
        ("Symbol", "INHERITS"),
        ("Symbol", "IMPLEMENTS"),
        ("Symbol", "CONTAINS"),
        ("File", "CONTAINS"),
        ("File", "IMPORTS"),
    ] {
        statements.push((
            "replace the code graph",
            format!("MATCH (n:{label} {{repo: $repo}})-[r:{rel}]->() DELETE r"),
            Vec::new(),
        ));
    }
    for label in ["Directory", "Module", "UnresolvedCall"] {
        statements.push((
            "replace the code graph",
            format!("MATCH (n:{label} {{repo: $repo}}) DETACH DELETE n"),
            Vec::new(),
        ));
    }
    let mut add = |what: &'static str, text: &str, rows: Vec<BoltType>| {
        if !rows.is_empty() {
            statements.push((what, text.to_owned(), rows));
        }
    };
    add(
        "directories",
        "UNWIND $rows AS r MERGE (d:Directory {id: r.id}) SET d.repo = $repo, d.path = r.path",
        snapshot
            .directories
            .iter()
            .map(|d| map(d, vec![("id", dir_id(&d.path))]))
            .collect(),
    );
    add(
        "modules",
        "UNWIND $rows AS r MERGE (m:Module {id: r.id}) SET m.repo = $repo, m.name = r.name, \
         m.language = r.language",
        rows.modules
            .iter()
            .map(|m| map(m, vec![("id", module_id(&m.name))]))
            .collect(),
    );
    add(
        "files",
        FILES,
        rows.files
            .iter()
            .map(|f| map(f, vec![("id", file_id(&f.path))]))
            .collect(),
    );
    add(
        "symbols",
        "UNWIND $rows AS r MERGE (s:Symbol {id: r.id}) SET s.repo = $repo, s.path = r.path, \
         s.qualname = r.qualname, s.name = r.name, s.kind = r.kind, s.sig = r.sig, \
         s.language = r.language, s.deleted = false, s.start_line = r.start_line, \
         s.end_line = r.end_line, s.content_hash = r.content_hash, s.unresolved = r.unresolved, \
         s.bodiless = r.bodiless",
        rows.symbols
            .iter()
            .map(|s| map(s, vec![("id", ns(&s.node.id))]))
            .collect(),
    );
    add(
        "unresolved calls",
        "UNWIND $rows AS r MERGE (u:UnresolvedCall {id: r.id}) SET u.repo = $repo, \
         u.path = r.path, u.name = r.name, u.qualified = r.qualified, u.bare = r.bare",
        rows.unresolved_calls
            .iter()
            .map(|u| map(u, vec![("id", ns(&format!("unresolved:{}", u.id)))]))
            .collect(),
    );
    add(
        "directory hierarchy",
        "UNWIND $rows AS r MATCH (a:Directory {id: r.parent}) MATCH (b:Directory {id: r.child}) \
         CREATE (a)-[:CONTAINS {file: ''}]->(b)",
        snapshot
            .dir_dirs
            .iter()
            .map(|d| {
                map(
                    d,
                    vec![("parent", dir_id(&d.parent)), ("child", dir_id(&d.child))],
                )
            })
            .collect(),
    );
    add(
        "directory files",
        "UNWIND $rows AS r MATCH (a:Directory {id: r.parent}) MATCH (b:File {id: r.child}) \
         CREATE (a)-[:CONTAINS {file: ''}]->(b)",
        snapshot
            .dir_files
            .iter()
            .map(|d| {
                map(
                    d,
                    vec![("parent", dir_id(&d.parent)), ("child", file_id(&d.child))],
                )
            })
            .collect(),
    );
    let (top, members): (Vec<_>, Vec<_>) = rows.contains.iter().partition(|c| c.parent.is_none());
    add(
        "file symbols",
        "UNWIND $rows AS r MATCH (f:File {id: r.parent}) MATCH (s:Symbol {id: r.child}) \
         CREATE (f)-[:CONTAINS {file: r.file}]->(s)",
        top.iter()
            .map(|c| {
                map(
                    *c,
                    vec![("parent", file_id(&c.file)), ("child", ns(&c.child))],
                )
            })
            .collect(),
    );
    add(
        "members",
        "UNWIND $rows AS r MATCH (p:Symbol {id: r.parent}) MATCH (s:Symbol {id: r.child}) \
         CREATE (p)-[:CONTAINS {file: r.file}]->(s)",
        members
            .iter()
            .map(|c| {
                let parent = c.parent.as_deref().unwrap_or_default();
                map(*c, vec![("parent", ns(parent)), ("child", ns(&c.child))])
            })
            .collect(),
    );
    // One statement per target label; the rows say which by their target.
    let (mut to_modules, mut to_files) = (Vec::new(), Vec::new());
    for i in &rows.imports {
        let (list, target) = match &i.target {
            ImportTarget::Module(name) => (&mut to_modules, module_id(name)),
            ImportTarget::File(path) => (&mut to_files, file_id(path)),
        };
        list.push(map(i, vec![("file", file_id(&i.file)), ("target", target)]));
    }
    for (label, list) in [("Module", to_modules), ("File", to_files)] {
        add(
            "imports",
            &format!(
                "UNWIND $rows AS r MATCH (f:File {{id: r.file}}) MATCH (t:{label} {{id: r.target}}) \
                 CREATE (f)-[:IMPORTS {{kind: r.kind, alias: r.alias, line: r.line}}]->(t)"
            ),
            list,
        );
    }
    for kind in ["CALLS", "INHERITS", "IMPLEMENTS"] {
        add(
            "code edges",
            &format!(
                "UNWIND $rows AS r MATCH (a:Symbol {{id: r.from}}) MATCH (b:Symbol {{id: r.to}}) \
                 CREATE (a)-[:{kind} {{file: r.file, resolution: r.resolution, \
                 candidates: r.candidates, line: r.line, sites: r.sites}}]->(b)"
            ),
            rows.edges
                .iter()
                .filter(|e| e.edge.kind.as_str() == kind)
                .map(|e| map(e, vec![("from", ns(&e.edge.from)), ("to", ns(&e.edge.to))]))
                .collect(),
        );
    }
    let mut txn = timed(config, "begin", graph.start_txn()).await?;
    let mut sent = 0;
    for (what, text, rows) in statements {
        let chunks: Vec<Vec<BoltType>> = if rows.is_empty() {
            vec![Vec::new()]
        } else {
            rows.chunks(config.batch_rows.max(1))
                .map(<[_]>::to_vec)
                .collect()
        };
        for chunk in chunks {
            sent += chunk.len();
            let q = query(&text).param("rows", chunk).param("repo", repo);
            if let Err(e) = timed(config, what, txn.run(q)).await {
                let _ = tokio::time::timeout(STEP_DEADLINE, txn.rollback()).await;
                return Err(e);
            }
        }
    }
    timed(config, "commit", txn.commit()).await?;
    Ok(sent)
}
