//! The store's schema, in one place and versioned. A store written with
//! another version is rebuilt from the notes (it is only a cache).
//!
//! ```text
//! (:Commit {sha, parent, time, date, author, subject, seq})
//! (:File {path, language})
//! (:Symbol {id, path, qualname, name, kind, sig, language, deleted,
//!           start_line, end_line, content_hash})
//! (:Symbol)-[:CHANGED_IN {status, old_path, modified, start_line, end_line}]->(:Commit)
//! (:Symbol)-[:CHILD_OF]->(:Symbol|File)   the enclosing symbol, or the file
//! (:Symbol)-[:MOVED_TO {sha}]->(:Symbol)  old identity → new identity
//! (:Symbol)-[:CONTINUES {sha, similarity}]->(:Symbol)  lineage: DELETED → ADDED
//! (:Meta {key, value})                    schema version, loaded notes tip,
//!                                         the code graph's commit and version
//!
//! The code graph at that commit (`crate::codegraph`):
//! (:Directory {path})  (:Module {name, language})
//! (:Source {path, blob, language, rows})  each file's blob (its facts,
//!                                      for updates, are beside the store)
//!                                      and the digest of its rows
//! (:Directory)-[:CONTAINS]->(:Directory|:File), (:File)-[:CONTAINS]->(:Symbol),
//! (:Symbol)-[:CONTAINS]->(:Symbol)
//! (:File)-[:IMPORTS {kind, alias, line}]->(:Module|:File)
//! (:Symbol)-[:CALLS|INHERITS|IMPLEMENTS {file, resolution, candidates, line, sites}]->(:Symbol)
//! Symbol.unresolved: references in it that match nothing in the repository.
//! Symbol.bodiless: a method or function declared without a body (an
//!     interface's or an abstract method, a signature): what a call of it
//!     runs is an implementation
//! (:UnresolvedCall {id, path, name, qualified, bare})  calls of `name` in
//!     the file at `path` that match nothing: on a receiver (`x.name()`,
//!     `mod.name()`) or by a bare name
//! ```
//!
//! Every code-graph relationship except those between directories carries
//! the `file` whose content made it, so an update replaces exactly what a
//! file made.
//!
//! The properties are those of `crate::graph` (the same as in Neo4j), plus
//! `seq`, which orders commits loaded in the same second (oldest first).

pub const SCHEMA_VERSION: &str = "8";

pub const CREATE: &[&str] = &[
    "CREATE NODE TABLE IF NOT EXISTS Meta(key STRING, value STRING, PRIMARY KEY(key))",
    "CREATE NODE TABLE IF NOT EXISTS Commit(sha STRING, parent STRING, time INT64, date STRING, \
     author STRING, subject STRING, seq INT64, PRIMARY KEY(sha))",
    "CREATE NODE TABLE IF NOT EXISTS File(path STRING, language STRING, PRIMARY KEY(path))",
    "CREATE NODE TABLE IF NOT EXISTS Symbol(id STRING, path STRING, qualname STRING, name STRING, \
     kind STRING, sig STRING, language STRING, deleted BOOLEAN, start_line INT64, end_line INT64, \
     content_hash STRING, unresolved INT64, bodiless BOOLEAN, PRIMARY KEY(id))",
    "CREATE REL TABLE IF NOT EXISTS CHANGED_IN(FROM Symbol TO Commit, status STRING, old_path STRING, \
     modified BOOLEAN, start_line INT64, end_line INT64)",
    "CREATE REL TABLE IF NOT EXISTS CHILD_OF(FROM Symbol TO Symbol, FROM Symbol TO File)",
    "CREATE REL TABLE IF NOT EXISTS MOVED_TO(FROM Symbol TO Symbol, sha STRING)",
    "CREATE REL TABLE IF NOT EXISTS CONTINUES(FROM Symbol TO Symbol, sha STRING, similarity DOUBLE)",
    "CREATE NODE TABLE IF NOT EXISTS Directory(path STRING, PRIMARY KEY(path))",
    "CREATE NODE TABLE IF NOT EXISTS Module(name STRING, language STRING, PRIMARY KEY(name))",
    "CREATE NODE TABLE IF NOT EXISTS Source(path STRING, blob STRING, language STRING, \
     rows STRING, PRIMARY KEY(path))",
    "CREATE NODE TABLE IF NOT EXISTS UnresolvedCall(id STRING, path STRING, name STRING, \
     qualified INT64, bare INT64, PRIMARY KEY(id))",
    "CREATE REL TABLE IF NOT EXISTS CONTAINS(FROM Directory TO Directory, FROM Directory TO File, \
     FROM File TO Symbol, FROM Symbol TO Symbol, file STRING)",
    "CREATE REL TABLE IF NOT EXISTS IMPORTS(FROM File TO Module, FROM File TO File, kind STRING, \
     alias STRING, line INT64)",
    "CREATE REL TABLE IF NOT EXISTS CALLS(FROM Symbol TO Symbol, file STRING, resolution STRING, \
     candidates INT64, line INT64, sites INT64)",
    "CREATE REL TABLE IF NOT EXISTS INHERITS(FROM Symbol TO Symbol, file STRING, resolution STRING, \
     candidates INT64, line INT64, sites INT64)",
    "CREATE REL TABLE IF NOT EXISTS IMPLEMENTS(FROM Symbol TO Symbol, file STRING, resolution STRING, \
     candidates INT64, line INT64, sites INT64)",
];
