//! Kuzu values and statements: the only place that builds `kuzu::Value`s.

use kuzu::{Connection, LogicalType, PreparedStatement, Value};

use super::{Result, StoreError};
use crate::graph::{Prop, Row};

pub fn string(s: &str) -> Value {
    Value::String(s.to_owned())
}

/// A sorted list of strings (sorted, so equal sets make equal statements).
pub fn string_list<'a>(items: impl IntoIterator<Item = &'a String>) -> Value {
    let mut sorted: Vec<&String> = items.into_iter().collect();
    sorted.sort();
    Value::List(
        LogicalType::String,
        sorted.into_iter().map(|s| string(s)).collect(),
    )
}

fn prop(p: Prop<'_>) -> Value {
    match p {
        Prop::Str(s) => string(s),
        Prop::Int(n) => Value::Int64(n),
        Prop::Bool(b) => Value::Bool(b),
        Prop::Float(x) => Value::Double(x),
    }
}

/// A graph row as a struct value, for `UNWIND $rows AS r`.
pub fn row(r: &impl Row) -> Value {
    row_of(r.props())
}

/// A struct value from named properties.
pub fn row_of(props: Vec<(&'static str, Prop<'_>)>) -> Value {
    Value::Struct(
        props
            .into_iter()
            .map(|(k, v)| (k.to_owned(), prop(v)))
            .collect(),
    )
}

pub fn as_string(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

pub fn as_i64(value: &Value) -> Option<i64> {
    match value {
        Value::Int64(n) => Some(*n),
        Value::Int32(n) => Some((*n).into()),
        Value::UInt64(n) => i64::try_from(*n).ok(),
        _ => None,
    }
}

pub fn as_u32(value: &Value) -> u32 {
    as_i64(value)
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(0)
}

fn error(what: &'static str, e: kuzu::Error) -> StoreError {
    StoreError::Query {
        what,
        reason: e.to_string(),
    }
}

pub fn prepare(conn: &Connection<'_>, q: &str) -> Result<PreparedStatement> {
    conn.prepare(q).map_err(|e| error("prepare", e))
}

pub fn execute(
    conn: &Connection<'_>,
    what: &'static str,
    stmt: &mut PreparedStatement,
    params: Vec<(&str, Value)>,
) -> Result<Vec<Vec<Value>>> {
    let result = conn.execute(stmt, params).map_err(|e| error(what, e))?;
    Ok(result.collect())
}

pub fn query(conn: &Connection<'_>, what: &'static str, q: &str) -> Result<Vec<Vec<Value>>> {
    let result = conn.query(q).map_err(|e| error(what, e))?;
    Ok(result.collect())
}

pub fn run(conn: &Connection<'_>, what: &'static str, q: &str) -> Result<()> {
    conn.query(q).map_err(|e| error(what, e))?;
    Ok(())
}

/// `UNWIND`-batched upsert of `rows`, in chunks.
pub fn upsert(conn: &Connection<'_>, what: &'static str, q: &str, rows: Vec<Value>) -> Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let mut stmt = prepare(conn, q)?;
    for chunk in rows.chunks(2000) {
        let ty = LogicalType::from(&chunk[0]);
        let list = Value::List(ty, chunk.to_vec());
        execute(conn, what, &mut stmt, vec![("rows", list)])?;
    }
    Ok(())
}

/// Rows per `COPY` statement: each row becomes several engine values with a
/// copy of the row's type, so 50,000 rows held 200 MB of them at once.
const BULK_ROWS: usize = 10_000;

/// Inserts new nodes of `table` with `COPY ... FROM (UNWIND ...)`;
/// `columns` are the row fields in the table's column order and
/// `trailing` expressions for the table's remaining columns. No row may
/// have a key already stored (that fails the statement).
pub fn insert_nodes(
    conn: &Connection<'_>,
    what: &'static str,
    table: &str,
    columns: &[&str],
    trailing: &[&str],
    rows: Vec<Value>,
) -> Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let returned: Vec<String> = columns
        .iter()
        .map(|c| format!("r.{c}"))
        .chain(trailing.iter().map(|t| t.to_string()))
        .collect();
    let q = format!(
        "COPY {table} FROM (UNWIND $rows AS r RETURN {})",
        returned.join(", ")
    );
    let mut stmt = prepare(conn, &q)?;
    for chunk in rows.chunks(BULK_ROWS) {
        let ty = LogicalType::from(&chunk[0]);
        let list = Value::List(ty, chunk.to_vec());
        execute(conn, what, &mut stmt, vec![("rows", list)])?;
    }
    Ok(())
}

/// How relationships are inserted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Insert {
    /// `COPY ... FROM (UNWIND ...)`: both ends found by their primary key.
    /// The history loads every batch this way. The code graph uses it for a
    /// first build only: its updates replace a file's relationships, few
    /// rows each, spread over large tables.
    Bulk,
    /// One `MERGE` of each endpoint (an index lookup) and a `CREATE` per row.
    PerRow,
}

/// The primary key of each node table relationships are inserted between.
fn key_of(label: &str) -> &'static str {
    match label {
        "Symbol" => "id",
        "Module" => "name",
        _ => "path",
    }
}

/// Inserts relationships of `table` between `pair` (node tables); `columns`
/// are the row fields in the table's order: the two endpoint keys, then the
/// properties. Every endpoint must exist: the bulk path fails on a missing
/// one, the per-row path would create it (callers write endpoints first).
pub fn insert_rels(
    conn: &Connection<'_>,
    what: &'static str,
    table: &str,
    pair: (&str, &str),
    columns: &[&str],
    rows: Vec<Value>,
    how: Insert,
) -> Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let (from, to) = pair;
    let q = match how {
        Insert::Bulk => {
            let returned: Vec<String> = columns.iter().map(|c| format!("r.{c}")).collect();
            format!(
                "COPY {table} FROM (UNWIND $rows AS r RETURN {}) (from='{from}', to='{to}')",
                returned.join(", ")
            )
        }
        Insert::PerRow => {
            let props: Vec<String> = columns[2..].iter().map(|c| format!("{c}: r.{c}")).collect();
            format!(
                "UNWIND $rows AS r MERGE (a:{from} {{{}: r.{}}}) MERGE (b:{to} {{{}: r.{}}}) \
                 CREATE (a)-[:{table} {{{}}}]->(b)",
                key_of(from),
                columns[0],
                key_of(to),
                columns[1],
                props.join(", ")
            )
        }
    };
    let mut stmt = prepare(conn, &q)?;
    let chunk_rows = if how == Insert::Bulk {
        BULK_ROWS
    } else {
        2_000
    };
    for chunk in rows.chunks(chunk_rows) {
        let ty = LogicalType::from(&chunk[0]);
        let list = Value::List(ty, chunk.to_vec());
        execute(conn, what, &mut stmt, vec![("rows", list)])?;
    }
    Ok(())
}
