//! The engine's values and statements: the only place that builds
//! `lbug::Value`s.

use std::path::Path;

use lbug::{Connection, LogicalType, PreparedStatement, Value};

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

/// A row a statement reads: its named fields, for a staged file, or a
/// struct value, for a parameter list (made only when the rows cannot be
/// staged).
///
/// Why not values always: a value carries its own copy of every field's
/// name and type, so App-vNext/Polly's 73,946 changes took about 70 MiB
/// as values on their way to a file that reads them from borrowed fields.
pub trait StoreRow {
    /// The fields, by name; `None` for a row with a field of another type
    /// than a [`Prop`] carries, which cannot be staged.
    fn fields(&self) -> Option<Vec<(&str, Prop<'_>)>>;
    fn into_value(self) -> Value;
}

impl StoreRow for Value {
    fn fields(&self) -> Option<Vec<(&str, Prop<'_>)>> {
        let Value::Struct(fields) = self else {
            return None;
        };
        fields
            .iter()
            .map(|(name, value)| {
                let value = match value {
                    Value::String(s) => Prop::Str(s),
                    Value::Int64(n) => Prop::Int(*n),
                    Value::Bool(b) => Prop::Bool(*b),
                    Value::Double(x) => Prop::Float(*x),
                    _ => return None,
                };
                Some((name.as_str(), value))
            })
            .collect()
    }

    fn into_value(self) -> Value {
        self
    }
}

impl<R: Row> StoreRow for &R {
    fn fields(&self) -> Option<Vec<(&str, Prop<'_>)>> {
        Some(self.props())
    }

    fn into_value(self) -> Value {
        row(self)
    }
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

/// The engine reports a failed write as the call it was ("Cannot write to
/// file", with the text of a call that succeeded, "Error: Success") or, when
/// it gets that far, as a short read of what it failed to write ("Cannot
/// read from file ... numBytesRead: 0"), never as ENOSPC. So an I/O error
/// names the file it was about, and the reason says how much room that
/// file's filesystem has left, which is what the user needs to act on.
fn error(what: &'static str, e: lbug::Error) -> StoreError {
    let mut reason = e.to_string();
    let io = reason.contains("Cannot write to file") || reason.contains("Cannot read from file");
    if io && !reason.contains("No space") {
        match file_named(&reason).and_then(|file| free_bytes(Path::new(file))) {
            Some(free) if free < LOW_SPACE => reason.push_str(&format!(
                " (no space left on the disk holding the store: {} KiB free)",
                free / 1024
            )),
            Some(_) => {}
            None if reason.contains("Cannot write to file") => reason
                .push_str(" (a short write: the disk holding the store is likely out of space)"),
            None => {}
        }
    }
    StoreError::Query { what, reason }
}

/// Less room than this is a full disk for the store: its pages and log
/// grow in steps of a few hundred KiB.
const LOW_SPACE: u64 = 4 * 1024 * 1024;

/// The path in the engine's "...file: <path> fileDescriptor..." text.
fn file_named(reason: &str) -> Option<&str> {
    let rest = &reason[reason.find("file: ")? + "file: ".len()..];
    rest.split_whitespace().next()
}

fn free_bytes(file: &Path) -> Option<u64> {
    let stat = rustix::fs::statvfs(file).ok()?;
    Some(stat.f_bavail.saturating_mul(stat.f_frsize))
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
    execute_map(conn, what, stmt, params, Some)
}

/// Like [`execute`], making each row a `T` as it is read (rows `f` turns
/// down are skipped): a large result is never held twice, as values and
/// as what they become.
pub fn execute_map<T>(
    conn: &Connection<'_>,
    what: &'static str,
    stmt: &mut PreparedStatement,
    params: Vec<(&str, Value)>,
    f: impl FnMut(Vec<Value>) -> Option<T>,
) -> Result<Vec<T>> {
    let result = conn.execute(stmt, params).map_err(|e| error(what, e))?;
    Ok(result.filter_map(f).collect())
}

pub fn query(conn: &Connection<'_>, what: &'static str, q: &str) -> Result<Vec<Vec<Value>>> {
    let result = conn.query(q).map_err(|e| error(what, e))?;
    Ok(result.collect())
}

pub fn run(conn: &Connection<'_>, what: &'static str, q: &str) -> Result<()> {
    conn.query(q).map_err(|e| error(what, e))?;
    Ok(())
}

/// How a store is copied into a new file, table by table: each a
/// `COPY (MATCH ...) TO` a Parquet file from the old database and a `COPY
/// ... FROM` it into the new one, which has the same tables. The engine's
/// own `EXPORT DATABASE` cannot be used: it refuses a relationship table
/// that connects several pairs of node tables (`CHILD_OF`, `CONTAINS`,
/// `IMPORTS`), so each pair is copied on its own here. The plan is read
/// from the old database's catalog, so it follows the schema.
pub struct TableCopies(Vec<TableCopy>);

struct TableCopy {
    export: String,
    import: String,
}

impl TableCopies {
    /// The copies of every table of the database `conn` is on, through
    /// files in `dir` (a path without quotes or backslashes).
    pub fn plan(conn: &Connection<'_>, dir: &str) -> Result<TableCopies> {
        let tables = query(
            conn,
            "list the tables",
            "CALL show_tables() RETURN name, type",
        )?;
        let named = |kind: &str| -> Vec<String> {
            tables
                .iter()
                .filter(|row| row.get(1).and_then(as_string).as_deref() == Some(kind))
                .filter_map(|row| row.first().and_then(as_string))
                .collect()
        };
        let columns = |table: &str| -> Result<Vec<String>> {
            let rows = query(
                conn,
                "list a table's columns",
                &format!("CALL table_info('{table}') RETURN `property id`, name"),
            )?;
            let mut columns: Vec<(i64, String)> = rows
                .iter()
                .filter_map(|row| Some((as_i64(row.first()?)?, as_string(row.get(1)?)?)))
                .collect();
            columns.sort();
            Ok(columns.into_iter().map(|(_, name)| name).collect())
        };
        let fields = |var: &str, columns: &[String]| -> String {
            columns
                .iter()
                .map(|c| format!(", {var}.`{c}`"))
                .collect::<String>()
        };
        let mut copies = Vec::new();
        // Nodes first: a relationship's rows name their ends by key.
        for table in named("NODE") {
            let columns = columns(&table)?;
            let file = format!("{dir}/node-{table}.parquet");
            copies.push(TableCopy {
                export: format!(
                    "COPY (MATCH (n:`{table}`) RETURN {}) TO '{file}'",
                    fields("n", &columns).trim_start_matches(", ")
                ),
                import: format!("COPY `{table}` FROM '{file}'"),
            });
        }
        for table in named("REL") {
            let columns = columns(&table)?;
            let pairs = query(
                conn,
                "list a relationship's node tables",
                &format!(
                    "CALL show_connection('{table}') RETURN `source table name`, \
                     `destination table name`, `source table primary key`, \
                     `destination table primary key`"
                ),
            )?;
            for (i, pair) in pairs.iter().enumerate() {
                let name = |k: usize| pair.get(k).and_then(as_string).unwrap_or_default();
                let (from, to, from_key, to_key) = (name(0), name(1), name(2), name(3));
                let file = format!("{dir}/rel-{table}-{i}.parquet");
                copies.push(TableCopy {
                    export: format!(
                        "COPY (MATCH (a:`{from}`)-[r:`{table}`]->(b:`{to}`) \
                         RETURN a.`{from_key}`, b.`{to_key}`{}) TO '{file}'",
                        fields("r", &columns)
                    ),
                    import: format!("COPY `{table}` FROM '{file}' (from='{from}', to='{to}')"),
                });
            }
        }
        Ok(TableCopies(copies))
    }

    pub fn export(&self, conn: &Connection<'_>) -> Result<()> {
        self.0
            .iter()
            .try_for_each(|copy| run(conn, "export a table", &copy.export))
    }

    pub fn import(&self, conn: &Connection<'_>) -> Result<()> {
        self.0
            .iter()
            .try_for_each(|copy| run(conn, "import a table", &copy.import))
    }
}

/// How every upsert statement begins: its rows come in as `r`.
const EACH_ROW: &str = "UNWIND $rows AS r ";

/// Runs `q`, which begins with `UNWIND $rows AS r` and reads the rows'
/// fields as `r.name`, for every row. The rows are read from a staged CSV
/// file when they can be (see [`StagedRows`]), the fields bound to plain
/// variables: a `MERGE` or `MATCH` on a key taken from a row struct is
/// planned as a scan, on a variable as a key lookup (Kuzu 0.11, 8,125
/// App-vNext/Polly symbols: 0.9 s from a parameter list, 0.08 s so).
/// Otherwise the rows go in as a parameter list, in chunks.
pub fn upsert(
    conn: &Connection<'_>,
    what: &'static str,
    q: &str,
    rows: Vec<impl StoreRow>,
) -> Result<()> {
    for_each_row(conn, what, q, rows).map(drop)
}

/// [`upsert`] for a statement that returns something: which of a batch's
/// keys are stored, say, found by a key lookup per row where a query
/// without rows would scan the table.
pub fn lookup(
    conn: &Connection<'_>,
    what: &'static str,
    q: &str,
    rows: Vec<impl StoreRow>,
) -> Result<Vec<Vec<Value>>> {
    for_each_row(conn, what, q, rows)
}

fn for_each_row(
    conn: &Connection<'_>,
    what: &'static str,
    q: &str,
    rows: Vec<impl StoreRow>,
) -> Result<Vec<Vec<Value>>> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    if let Some(body) = q.strip_prefix(EACH_ROW) {
        let first = rows[0].fields().unwrap_or_default();
        let columns: Vec<&str> = first.iter().map(|(name, _)| *name).collect();
        if let Some(staged) = StagedRows::new(what, &rows, &columns)? {
            let bound: Vec<String> = columns
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{} AS r_{c}", staged.column(i)))
                .collect();
            let q = format!(
                "{} WITH {} {}",
                staged.load_clause(),
                bound.join(", "),
                bind_row_fields(body)
            );
            return query(conn, what, &q);
        }
    }
    in_chunks(conn, what, q, &values(rows), 2_000)
}

/// Rows as struct values, for a parameter list.
fn values(rows: Vec<impl StoreRow>) -> Vec<Value> {
    rows.into_iter().map(StoreRow::into_value).collect()
}

/// Runs `q` once per `chunk` rows, the rows passed as `$rows`; returns what
/// every run returned.
fn in_chunks(
    conn: &Connection<'_>,
    what: &'static str,
    q: &str,
    rows: &[Value],
    chunk: usize,
) -> Result<Vec<Vec<Value>>> {
    let mut stmt = prepare(conn, q)?;
    let mut returned = Vec::new();
    for chunk in rows.chunks(chunk) {
        let ty = LogicalType::from(&chunk[0]);
        let list = Value::List(ty, chunk.to_vec());
        returned.extend(execute(conn, what, &mut stmt, vec![("rows", list)])?);
    }
    Ok(returned)
}

/// `r.name` → `r_name` wherever `r` is a whole word.
fn bind_row_fields(q: &str) -> String {
    let mut out = String::with_capacity(q.len());
    let mut previous: Option<char> = None;
    let mut rest = q;
    while let Some(c) = rest.chars().next() {
        let starts_word = !previous.is_some_and(|p| p.is_alphanumeric() || "_$.".contains(p));
        if c == 'r' && starts_word && rest[1..].starts_with('.') {
            out.push_str("r_");
            rest = &rest[2..];
            previous = Some('_');
            continue;
        }
        out.push(c);
        previous = Some(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// Rows per `COPY ... FROM (UNWIND $rows ...)` statement, the fallback of
/// [`stage_copy`]: each row becomes several engine values with a copy
/// of the row's type, so 50,000 rows held 200 MB of them at once.
const BULK_ROWS: usize = 10_000;

/// Rows per `COPY` into a node table. Each `COPY` holds a node group's
/// columns for a moment (45-60 MiB for `Symbol`, whether of 4,000 rows or
/// 19,000), on top of what the transaction wrote before it, which grows
/// with every `COPY` of it; App-vNext/Polly's backfill peaked 7-8 MiB lower
/// with copies of 4,000 `Symbol` rows than with one of each kind (2,000:
/// no lower; 8,000: 2 MiB higher), for about 0.2 s more.
const NODE_ROWS_PER_COPY: usize = 4_000;

/// Stages new nodes of `table` for `COPY`s of up to [`NODE_ROWS_PER_COPY`]
/// rows (see [`StagedRows`]); `columns` are the row fields in the table's
/// column order and `trailing` expressions for the table's remaining
/// columns. No row may have a key already stored (that fails the
/// statement).
pub fn stage_nodes(
    what: &'static str,
    table: &str,
    columns: &[&str],
    trailing: &[&str],
    mut rows: Vec<impl StoreRow>,
) -> Result<StagedCopy> {
    let mut staged = StagedCopy::of(what);
    let mut copied = 0;
    while copied < rows.len() {
        let part = &rows[copied..rows.len().min(copied + NODE_ROWS_PER_COPY)];
        let Some(copy) = stage_copy(what, table, columns, trailing, "", part)? else {
            break; // these rows and the rest go in from a parameter list
        };
        staged.copies.push(copy);
        copied += part.len();
    }
    if copied < rows.len() {
        let rows = rows.split_off(copied);
        staged.listed = Some((listed_copy(table, columns, trailing, ""), values(rows)));
    }
    Ok(staged)
}

/// The `COPY` of rows passed as `$rows`, the fallback of [`stage_copy`].
fn listed_copy(table: &str, columns: &[&str], trailing: &[&str], options: &str) -> String {
    let returned: Vec<String> = columns
        .iter()
        .map(|c| format!("r.{c}"))
        .chain(trailing.iter().map(|t| t.to_string()))
        .collect();
    format!(
        "COPY {table} FROM (UNWIND $rows AS r RETURN {}) {options}",
        returned.join(", ")
    )
}

/// Rows staged for the `COPY`s that insert them, run later: the rows they
/// were made from may go in between (App-vNext/Polly's symbols, about 15
/// MiB, were held through every `COPY` of its backfill's load).
#[must_use = "nothing is inserted until it runs"]
pub struct StagedCopy {
    what: &'static str,
    /// Each `COPY` with the file it reads.
    copies: Vec<(String, StagedRows)>,
    /// Rows that could not be staged, and the `COPY` from a parameter
    /// list that inserts them.
    listed: Option<(String, Vec<Value>)>,
}

impl StagedCopy {
    fn of(what: &'static str) -> StagedCopy {
        StagedCopy {
            what,
            copies: Vec::new(),
            listed: None,
        }
    }

    /// Runs the `COPY`s, deleting each file once read.
    pub fn run(self, conn: &Connection<'_>) -> Result<()> {
        for (statement, file) in self.copies {
            run(conn, self.what, &statement)?;
            drop(file);
        }
        if let Some((q, rows)) = self.listed {
            in_chunks(conn, self.what, &q, &rows, BULK_ROWS)?;
        }
        Ok(())
    }
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

/// Past this many rows relationships go in bulk however asked: a `MERGE`
/// of each endpoint for most of a table (an update of sympy/sympy that
/// replaced 1,070 of its 1,183 files' edges) filled the engine's buffer pool.
const PER_ROW_AT_MOST: usize = 10_000;

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
    rows: Vec<impl StoreRow>,
    how: Insert,
) -> Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    if how == Insert::Bulk || rows.len() > PER_ROW_AT_MOST {
        return stage_rels(what, table, pair, columns, rows)?.run(conn);
    }
    let (from, to) = pair;
    let props: Vec<String> = columns[2..].iter().map(|c| format!("{c}: r.{c}")).collect();
    let q = format!(
        "UNWIND $rows AS r MERGE (a:{from} {{{}: r.{}}}) MERGE (b:{to} {{{}: r.{}}}) \
         CREATE (a)-[:{table} {{{}}}]->(b)",
        key_of(from),
        columns[0],
        key_of(to),
        columns[1],
        props.join(", ")
    );
    upsert(conn, what, &q, rows)
}

/// Stages relationships of `table` between `pair` (node tables) for one
/// `COPY` (see [`insert_rels`]); both ends are found by their primary key.
pub fn stage_rels(
    what: &'static str,
    table: &str,
    pair: (&str, &str),
    columns: &[&str],
    rows: Vec<impl StoreRow>,
) -> Result<StagedCopy> {
    let mut staged = StagedCopy::of(what);
    if rows.is_empty() {
        return Ok(staged);
    }
    let (from, to) = pair;
    let options = format!("(from='{from}', to='{to}')");
    match stage_copy(what, table, columns, &[], &options, &rows)? {
        Some(copy) => staged.copies.push(copy),
        None => staged.listed = Some((listed_copy(table, columns, &[], &options), values(rows))),
    }
    Ok(staged)
}

/// The `COPY` of `rows` (struct values holding `columns`) into `table` from a
/// staged CSV file (see [`StagedRows`]), with the file; `trailing` are
/// expressions for the table's remaining columns and `options` the
/// `COPY`'s own. `None` when the rows cannot be staged: the caller then
/// copies them from a parameter list.
fn stage_copy(
    what: &'static str,
    table: &str,
    columns: &[&str],
    trailing: &[&str],
    options: &str,
    rows: &[impl StoreRow],
) -> Result<Option<(String, StagedRows)>> {
    let Some(staged) = StagedRows::new(what, rows, columns)? else {
        return Ok(None);
    };
    let returned: Vec<String> = (0..columns.len())
        .map(|i| staged.column(i))
        .chain(trailing.iter().map(|t| t.to_string()))
        .collect();
    let statement = format!(
        "COPY {table} FROM ({} RETURN {}) {options}",
        staged.load_clause(),
        returned.join(", ")
    );
    Ok(Some((statement, staged)))
}

/// Rows written to a temporary CSV file for one statement to read, deleted
/// when dropped.
///
/// Why a file: from a parameter list, each row becomes engine values that
/// carry their own copy of the row's type. On App-vNext/Polly's first
/// batch, 10,320 symbol rows took 231 MB of the engine's memory for the
/// transaction, most of a backfill's peak, and the process kept it; read
/// from a file they take 30 MB, in a third of the time.
///
/// Every field is quoted and strings are `coalesce`d back from null, since
/// Kuzu reads an empty field, quoted or not, as null (no graph row has a
/// null). Every column is declared a string and cast back: left to guess,
/// Kuzu reads a column of one row whose name is `f` as the boolean false
/// (`auto_detect=false` does not stop it). The dialect is given, not
/// sniffed: sniffing reads the file once more and took half of each `COPY`.
struct StagedRows {
    _file: tempfile::NamedTempFile,
    path: String,
    types: Vec<CsvType>,
}

impl StagedRows {
    /// Stages `columns` of `rows`; `None` when they cannot be (a value of
    /// another type, a temporary directory whose path cannot be quoted).
    /// Each row is written as it is read, so staging holds one line.
    fn new(
        what: &'static str,
        rows: &[impl StoreRow],
        columns: &[&str],
    ) -> Result<Option<StagedRows>> {
        let Some(types) = rows
            .first()
            .and_then(|first| column_types(&first.fields()?, columns))
        else {
            return Ok(None);
        };
        let Ok(file) = tempfile::Builder::new()
            .prefix("diffidx-rows-")
            .suffix(".csv")
            .tempfile()
        else {
            return Ok(None);
        };
        let path = file.path().to_string_lossy().into_owned();
        if path.contains('\'') || path.contains('\\') {
            return Ok(None);
        }
        let failed = |e: std::io::Error| StoreError::Query {
            what,
            reason: format!("staging rows in {path}: {e}"),
        };
        let mut out = std::io::BufWriter::with_capacity(1 << 16, file.as_file());
        let mut line = String::new();
        for row in rows {
            line.clear();
            let Some(fields) = row.fields() else {
                return Ok(None);
            };
            if !write_csv_row(&mut line, &fields, columns, &types) {
                return Ok(None);
            }
            std::io::Write::write_all(&mut out, line.as_bytes()).map_err(failed)?;
        }
        std::io::Write::flush(&mut out).map_err(failed)?;
        drop(out);
        Ok(Some(StagedRows {
            _file: file,
            path,
            types,
        }))
    }

    /// `LOAD WITH HEADERS (...) FROM '...' (...)`, binding `c0`, `c1`, ...
    fn load_clause(&self) -> String {
        let headers: Vec<String> = (0..self.types.len())
            .map(|i| format!("c{i} STRING"))
            .collect();
        format!(
            "LOAD WITH HEADERS ({}) FROM '{}' (header=false, parallel=false, \
             auto_detect=false, delim=',', quote='\"', escape='\"')",
            headers.join(", "),
            self.path
        )
    }

    /// The expression reading column `i` back as its type.
    fn column(&self, i: usize) -> String {
        match self.types[i] {
            CsvType::String => format!("coalesce(c{i}, '')"),
            CsvType::Int => format!("CAST(c{i} AS INT64)"),
            CsvType::Bool => format!("CAST(c{i} AS BOOLEAN)"),
            CsvType::Double => format!("CAST(c{i} AS DOUBLE)"),
        }
    }
}

/// The type of each of `columns` in a struct row, if every one is there
/// and of a type a CSV field carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CsvType {
    String,
    Int,
    Bool,
    Double,
}

fn column_types(row: &[(&str, Prop<'_>)], columns: &[&str]) -> Option<Vec<CsvType>> {
    columns
        .iter()
        .map(|c| match field(row, c)? {
            Prop::Str(_) => Some(CsvType::String),
            Prop::Int(_) => Some(CsvType::Int),
            Prop::Bool(_) => Some(CsvType::Bool),
            Prop::Float(x) if x.is_finite() => Some(CsvType::Double),
            _ => None,
        })
        .collect()
}

fn field<'p>(row: &[(&str, Prop<'p>)], name: &str) -> Option<Prop<'p>> {
    row.iter().find(|(k, _)| *k == name).map(|(_, v)| *v)
}

/// Appends `row`'s `columns` as one CSV line, every field quoted; false
/// for a field missing or not of its column's type.
fn write_csv_row(
    out: &mut String,
    row: &[(&str, Prop<'_>)],
    columns: &[&str],
    types: &[CsvType],
) -> bool {
    use std::fmt::Write;
    for (i, (column, ty)) in columns.iter().zip(types).enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('"');
        match (field(row, column), ty) {
            (Some(Prop::Str(s)), CsvType::String) => {
                for c in s.chars() {
                    if c == '"' {
                        out.push('"');
                    }
                    out.push(c);
                }
            }
            (Some(Prop::Int(n)), CsvType::Int) => {
                let _ = write!(out, "{n}");
            }
            (Some(Prop::Bool(b)), CsvType::Bool) => out.push_str(if b { "true" } else { "false" }),
            (Some(Prop::Float(x)), CsvType::Double) if x.is_finite() => {
                let _ = write!(out, "{x:?}");
            }
            _ => return false,
        }
        out.push('"');
    }
    out.push('\n');
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use lbug::{Database, SystemConfig};

    /// Strings a CSV file could lose: separators, quotes, line ends, the
    /// empty string (Kuzu reads an empty field as null), digits and words
    /// a type sniffer would take for numbers or null.
    const AWKWARD: [&str; 11] = [
        "plain",
        "",
        "comma, and \"quotes\"",
        "new\nline\r\nand more",
        "back\\slash \\\"",
        "0123",
        "NULL",
        "1e5",
        "ünïcödé ✓",
        "'single'",
        "\"",
    ];

    /// Runs `test` on a fresh database holding the tables `T` and `R`.
    fn with_tables(test: impl FnOnce(&Connection<'_>)) {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::new(
            dir.path().join("db"),
            SystemConfig::default().buffer_pool_size(64 << 20),
        )
        .unwrap();
        let conn = Connection::new(&db).unwrap();
        schema(&conn);
        test(&conn);
    }

    fn insert_t(conn: &Connection<'_>, rows: Vec<Value>) -> Result<()> {
        stage_nodes("test", "T", &NODE_COLUMNS, &["CAST(NULL AS INT64)"], rows)?.run(conn)
    }

    /// `row` with a column whose type a CSV field does not carry: a null.
    fn with_null_x(mut row: Value) -> Value {
        if let Value::Struct(fields) = &mut row {
            fields.retain(|(k, _)| k != "x");
            fields.push(("x".into(), Value::Null(LogicalType::Double)));
        }
        row
    }

    /// Stages node rows of `T` in a file, as `stage_nodes` does.
    fn copy_nodes(conn: &Connection<'_>, rows: &[impl StoreRow]) -> Result<bool> {
        let Some((statement, _file)) = stage_copy(
            "test",
            "T",
            &NODE_COLUMNS,
            &["CAST(NULL AS INT64)"],
            "",
            rows,
        )?
        else {
            return Ok(false);
        };
        run(conn, "test", &statement)?;
        Ok(true)
    }

    fn schema(conn: &Connection<'_>) {
        run(
            conn,
            "schema",
            "CREATE NODE TABLE T(id STRING, text STRING, n INT64, flag BOOLEAN, x DOUBLE, \
             extra INT64, PRIMARY KEY(id))",
        )
        .unwrap();
        run(
            conn,
            "schema",
            "CREATE REL TABLE R(FROM T TO T, text STRING, x DOUBLE)",
        )
        .unwrap();
    }

    /// A node row with its fields out of the table's column order.
    fn node(i: usize, text: &str) -> Value {
        Value::Struct(vec![
            ("text".into(), string(text)),
            ("flag".into(), Value::Bool(i % 2 == 1)),
            ("id".into(), Value::String(format!("0{i}"))),
            ("x".into(), Value::Double(i as f64 / 3.0)),
            ("n".into(), Value::Int64(-(i as i64) << 40)),
        ])
    }

    const NODE_COLUMNS: [&str; 5] = ["id", "text", "n", "flag", "x"];

    /// Relationships `0i -> 0(i-1)` carrying the awkward texts, their
    /// fields out of the table's order.
    fn chain_rels() -> Vec<Value> {
        AWKWARD
            .iter()
            .enumerate()
            .skip(1)
            .map(|(i, t)| {
                Value::Struct(vec![
                    ("to".into(), Value::String(format!("0{}", i - 1))),
                    ("from".into(), Value::String(format!("0{i}"))),
                    ("text".into(), string(t)),
                    ("x".into(), Value::Double(1e-7 * i as f64)),
                ])
            })
            .collect()
    }

    /// Reads [`chain_rels`] back, checking each one's ends and text;
    /// returns each one's `from` index and `x`.
    fn read_chain(conn: &Connection<'_>) -> Vec<(usize, Value)> {
        let edges = query(
            conn,
            "read",
            "MATCH (a:T)-[r:R]->(b:T) RETURN a.id, b.id, r.text, r.x",
        )
        .unwrap();
        assert_eq!(edges.len(), AWKWARD.len() - 1);
        edges
            .into_iter()
            .map(|row| {
                let from: usize = as_string(&row[0]).unwrap().parse().unwrap();
                assert_eq!(as_string(&row[1]), Some(format!("0{}", from - 1)));
                assert_eq!(as_string(&row[2]).as_deref(), Some(AWKWARD[from]));
                (from, row[3].clone())
            })
            .collect()
    }

    /// Every row of every table, sorted: what a copy must keep.
    fn dump(conn: &Connection<'_>) -> Vec<String> {
        let mut rows: Vec<String> = [
            "MATCH (n:T) RETURN n.id, n.text, n.n, n.flag, n.x, n.extra",
            "MATCH (n:U) RETURN n.key",
            "MATCH (a:T)-[r:R]->(b:T) RETURN a.id, b.id, r.text, r.x",
            "MATCH (a:T)-[r:L]->(b:T) RETURN 'T', a.id, b.id, r.text",
            "MATCH (a:T)-[r:L]->(b:U) RETURN 'U', a.id, b.key, r.text",
        ]
        .iter()
        .flat_map(|q| query(conn, "dump", q).unwrap())
        .map(|row| format!("{row:?}"))
        .collect();
        rows.sort();
        rows
    }

    #[test]
    fn a_copy_table_by_table_keeps_every_row_of_a_relationship_of_several_pairs() {
        // `T` and `R`, and `L`, which connects two pairs of node tables.
        let with_tables = |dir: &Path| {
            let db = Database::new(
                dir.join("db"),
                SystemConfig::default().buffer_pool_size(64 << 20),
            )
            .unwrap();
            let conn = Connection::new(&db).unwrap();
            schema(&conn);
            for statement in [
                "CREATE NODE TABLE U(key STRING, PRIMARY KEY(key))",
                "CREATE REL TABLE L(FROM T TO T, FROM T TO U, text STRING)",
            ] {
                run(&conn, "schema", statement).unwrap();
            }
            drop(conn);
            db
        };
        let source = tempfile::tempdir().unwrap();
        let db = with_tables(source.path());
        let conn = Connection::new(&db).unwrap();
        for (i, text) in AWKWARD.iter().enumerate() {
            let text = text.replace('\\', "\\\\").replace('"', "\\\"");
            run(
                &conn,
                "fill",
                &format!(
                    "CREATE (:T {{id: '0{i}', text: \"{text}\", n: {}, flag: {}}}), \
                     (:U {{key: 'u{i}'}})",
                    i as i64 - 5,
                    i % 2 == 0
                ),
            )
            .unwrap();
        }
        run(
            &conn,
            "fill",
            "MATCH (a:T), (b:T) WHERE a.id < b.id AND a.id < '03' CREATE (a)-[:R {text: b.id, x: 0.5}]->(b), \
             (a)-[:L {text: a.id + b.id}]->(b)",
        )
        .unwrap();
        run(
            &conn,
            "fill",
            "MATCH (a:T), (u:U) WHERE u.key = 'u' + substring(a.id, 2, 2) CREATE (a)-[:L {text: u.key}]->(u)",
        )
        .unwrap();
        let before = dump(&conn);
        assert!(before.len() > 40, "{before:?}");

        let files = tempfile::tempdir().unwrap();
        let copies = TableCopies::plan(&conn, files.path().to_str().unwrap()).unwrap();
        copies.export(&conn).unwrap();
        let target = tempfile::tempdir().unwrap();
        let copy = with_tables(target.path());
        let copy_conn = Connection::new(&copy).unwrap();
        copies.import(&copy_conn).unwrap();
        assert_eq!(dump(&copy_conn), before);
    }

    #[test]
    fn rows_copied_from_a_file_read_back_exactly() {
        with_tables(|conn| {
            let rows: Vec<Value> = AWKWARD
                .iter()
                .enumerate()
                .map(|(i, t)| node(i, t))
                .collect();
            let copied = copy_nodes(conn, &rows).unwrap();
            assert!(copied, "these rows are staged in a file");
            insert_rels(
                conn,
                "test",
                "R",
                ("T", "T"),
                &["from", "to", "text", "x"],
                chain_rels(),
                Insert::Bulk,
            )
            .unwrap();

            let nodes = query(
                conn,
                "read",
                "MATCH (t:T) RETURN t.id, t.text, t.n, t.flag, t.x, t.extra ORDER BY t.id",
            )
            .unwrap();
            assert_eq!(nodes.len(), AWKWARD.len());
            for (i, text) in AWKWARD.iter().enumerate() {
                let row = nodes
                    .iter()
                    .find(|r| as_string(&r[0]).as_deref() == Some(format!("0{i}").as_str()))
                    .unwrap_or_else(|| panic!("node 0{i} is missing"));
                assert_eq!(as_string(&row[1]).as_deref(), Some(*text), "node 0{i}");
                assert_eq!(as_i64(&row[2]), Some(-(i as i64) << 40));
                assert_eq!(row[3], Value::Bool(i % 2 == 1));
                assert_eq!(row[4], Value::Double(i as f64 / 3.0));
                assert!(matches!(row[5], Value::Null(_)), "{:?}", row[5]);
            }
            for (from, x) in read_chain(conn) {
                assert_eq!(x, Value::Double(1e-7 * from as f64));
            }
        });
    }

    /// A typed row, as the history's rows are: staged from its borrowed
    /// fields, never made a value.
    struct TypedNode {
        id: String,
        text: &'static str,
        n: i64,
        flag: bool,
        x: f64,
    }

    impl Row for TypedNode {
        fn props(&self) -> Vec<(&'static str, Prop<'_>)> {
            vec![
                ("x", Prop::Float(self.x)),
                ("text", Prop::Str(self.text)),
                ("id", Prop::Str(&self.id)),
                ("flag", Prop::Bool(self.flag)),
                ("n", Prop::Int(self.n)),
            ]
        }
    }

    #[test]
    fn typed_rows_staged_from_their_fields_read_back_like_values() {
        let typed: Vec<TypedNode> = AWKWARD
            .iter()
            .enumerate()
            .map(|(i, text)| TypedNode {
                id: format!("0{i}"),
                text,
                n: -(i as i64) << 40,
                flag: i % 2 == 1,
                x: i as f64 / 3.0,
            })
            .collect();
        let read = |conn: &Connection<'_>| {
            query(
                conn,
                "read",
                "MATCH (t:T) RETURN t.id, t.text, t.n, t.flag, t.x, t.extra ORDER BY t.id",
            )
            .unwrap()
        };
        let mut from_values = Vec::new();
        with_tables(|conn| {
            let rows: Vec<Value> = typed.iter().map(row).collect();
            assert!(copy_nodes(conn, &rows).unwrap());
            from_values = read(conn);
        });
        with_tables(|conn| {
            let refs: Vec<&TypedNode> = typed.iter().collect();
            assert!(
                copy_nodes(conn, &refs).unwrap(),
                "typed rows are staged in a file"
            );
            let from_fields = read(conn);
            assert_eq!(from_fields.len(), AWKWARD.len());
            assert_eq!(format!("{from_fields:?}"), format!("{from_values:?}"));
            let texts: Vec<Option<String>> = from_fields.iter().map(|r| as_string(&r[1])).collect();
            let mut expected: Vec<(String, &str)> =
                typed.iter().map(|t| (t.id.clone(), t.text)).collect();
            expected.sort();
            assert_eq!(
                texts,
                expected
                    .iter()
                    .map(|(_, t)| Some(t.to_string()))
                    .collect::<Vec<_>>()
            );
        });
    }

    /// One row, so that nothing but its own fields tells a column's type:
    /// Kuzu guesses `f` is a boolean and `1` a number unless told.
    #[test]
    fn a_lone_row_of_words_that_look_like_other_types_stays_text() {
        with_tables(|conn| {
            for (i, text) in ["f", "true", "1", "2024-01-01", "[1,2]", "{a: 1}"]
                .iter()
                .enumerate()
            {
                let copied = copy_nodes(conn, &[node(i, text)]);
                assert!(copied.unwrap(), "{text}");
                let got = query(
                    conn,
                    "read",
                    &format!("MATCH (t:T) WHERE t.id = '0{i}' RETURN t.text"),
                )
                .unwrap();
                assert_eq!(as_string(&got[0][0]).as_deref(), Some(*text));
            }
        });
    }

    #[test]
    fn rows_a_file_cannot_carry_go_in_from_a_parameter_list() {
        with_tables(|conn| {
            let rows = vec![with_null_x(node(7, "odd")), node(8, "")];
            let copied = copy_nodes(conn, &rows);
            assert!(!copied.unwrap(), "a null is not staged in a file");
            insert_t(conn, rows).unwrap();
            let texts = query(conn, "read", "MATCH (t:T) RETURN t.text ORDER BY t.id").unwrap();
            let texts: Vec<Option<String>> = texts.iter().map(|r| as_string(&r[0])).collect();
            assert_eq!(texts, [Some("odd".to_owned()), Some(String::new())]);
        });
    }

    #[test]
    fn nodes_go_in_a_copy_per_part_and_a_part_a_file_cannot_carry_from_a_list() {
        with_tables(|conn| {
            let count = NODE_ROWS_PER_COPY + 5;
            // One row in the second part: it and the rest of its part go in
            // from a parameter list, after the first part's `COPY`.
            let odd = NODE_ROWS_PER_COPY + 2;
            let rows: Vec<Value> = (0..count)
                .map(|i| match node(i, &format!("t{i}")) {
                    row if i == odd => with_null_x(row),
                    row => row,
                })
                .collect();
            insert_t(conn, rows).unwrap();
            let stored = query(conn, "read", "MATCH (t:T) RETURN t.id, t.text").unwrap();
            let stored: std::collections::BTreeMap<String, String> = stored
                .iter()
                .map(|r| (as_string(&r[0]).unwrap(), as_string(&r[1]).unwrap()))
                .collect();
            assert_eq!(stored.len(), count, "each row once");
            for i in [0, NODE_ROWS_PER_COPY - 1, odd, count - 1] {
                assert_eq!(
                    stored.get(&format!("0{i}")),
                    Some(&format!("t{i}")),
                    "row {i}"
                );
            }
        });
    }

    /// Rows upserted from a file create what is missing and update what is
    /// there, with every field as written, and relationships find both
    /// ends by key.
    #[test]
    fn rows_upserted_from_a_file_create_and_update_exactly() {
        with_tables(|conn| {
            let merge = "UNWIND $rows AS r MERGE (t:T {id: r.id}) SET t.text = r.text, \
                         t.n = r.n, t.flag = r.flag, t.x = r.x";
            let half: Vec<Value> = (0..AWKWARD.len())
                .step_by(2)
                .map(|i| node(i, "old"))
                .collect();
            upsert(conn, "test", merge, half).unwrap();
            let all: Vec<Value> = AWKWARD
                .iter()
                .enumerate()
                .map(|(i, t)| node(i, t))
                .collect();
            upsert(conn, "test", merge, all).unwrap();
            let nodes = query(
                conn,
                "read",
                "MATCH (t:T) RETURN t.id, t.text, t.n, t.flag, t.x",
            )
            .unwrap();
            assert_eq!(nodes.len(), AWKWARD.len(), "each id once");
            for row in &nodes {
                let i: usize = as_string(&row[0]).unwrap().parse().unwrap();
                assert_eq!(as_string(&row[1]).as_deref(), Some(AWKWARD[i]), "node 0{i}");
                assert_eq!(as_i64(&row[2]), Some(-(i as i64) << 40));
                assert_eq!(row[3], Value::Bool(i % 2 == 1));
                assert_eq!(row[4], Value::Double(i as f64 / 3.0));
            }
            let link = "UNWIND $rows AS r MATCH (a:T {id: r.from}) MATCH (b:T {id: r.to}) \
                        CREATE (a)-[:R {text: r.text, x: r.x}]->(b)";
            upsert(conn, "test", link, chain_rels()).unwrap();
            read_chain(conn);
            let count = query(conn, "read", "MATCH (t:T) RETURN count(*)").unwrap();
            assert_eq!(
                as_i64(&count[0][0]),
                Some(AWKWARD.len() as i64),
                "no node made twice"
            );
        });
    }

    #[test]
    fn only_the_row_variable_is_rebound() {
        assert_eq!(
            bind_row_fields("MERGE (s:S {id: r.id}) SET s.r = r.to, bar.x = $r.y, (r.a)"),
            "MERGE (s:S {id: r_id}) SET s.r = r_to, bar.x = $r.y, (r_a)"
        );
    }
}
