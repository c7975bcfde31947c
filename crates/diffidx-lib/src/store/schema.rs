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
//! (:Meta {key, value})                    schema version, loaded notes tip
//! ```
//!
//! The properties are those of `crate::graph` (the same as in Neo4j), plus
//! `seq`, which orders commits loaded in the same second (oldest first).

pub const SCHEMA_VERSION: &str = "3";

pub const CREATE: &[&str] = &[
    "CREATE NODE TABLE IF NOT EXISTS Meta(key STRING, value STRING, PRIMARY KEY(key))",
    "CREATE NODE TABLE IF NOT EXISTS Commit(sha STRING, parent STRING, time INT64, date STRING, \
     author STRING, subject STRING, seq INT64, PRIMARY KEY(sha))",
    "CREATE NODE TABLE IF NOT EXISTS File(path STRING, language STRING, PRIMARY KEY(path))",
    "CREATE NODE TABLE IF NOT EXISTS Symbol(id STRING, path STRING, qualname STRING, name STRING, \
     kind STRING, sig STRING, language STRING, deleted BOOLEAN, start_line INT64, end_line INT64, \
     content_hash STRING, PRIMARY KEY(id))",
    "CREATE REL TABLE IF NOT EXISTS CHANGED_IN(FROM Symbol TO Commit, status STRING, old_path STRING, \
     modified BOOLEAN, start_line INT64, end_line INT64)",
    "CREATE REL TABLE IF NOT EXISTS CHILD_OF(FROM Symbol TO Symbol, FROM Symbol TO File)",
    "CREATE REL TABLE IF NOT EXISTS MOVED_TO(FROM Symbol TO Symbol, sha STRING)",
    "CREATE REL TABLE IF NOT EXISTS CONTINUES(FROM Symbol TO Symbol, sha STRING, similarity DOUBLE)",
];
