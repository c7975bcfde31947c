//! The code graph in the store: its per-file sources (facts, to update it
//! later) and its rows, replaced file by file in one transaction.

use ::lbug::Connection;

use diffidx_core::codegraph::EdgeKind;

use super::engine::{as_string, insert_rels, query, row, run, string_list, upsert, Insert};
use super::{set_meta, Result, Store};
use crate::graph::code::{
    CodeRows, DirContains, DirectoryNode, ModuleNode, RowDigests, RowKind, TreeSymbol,
    UnresolvedCallRow,
};
use crate::graph::{Prop, Row as _};

/// One file of the graph as stored: the blob the graph describes (its
/// facts are in `crate::codegraph::FactFiles`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSource {
    pub path: String,
    pub blob: String,
    pub language: String,
}

impl crate::graph::Row for StoredSource {
    fn props(&self) -> Vec<(&'static str, Prop<'_>)> {
        vec![
            ("path", Prop::Str(&self.path)),
            ("blob", Prop::Str(&self.blob)),
            ("language", Prop::Str(&self.language)),
        ]
    }
}

/// The digests of the rows the graph holds of one file
/// (`CodeRows::digests`, as text), set whenever they are written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowsDigest {
    pub path: String,
    pub digest: String,
}

impl crate::graph::Row for RowsDigest {
    fn props(&self) -> Vec<(&'static str, Prop<'_>)> {
        vec![
            ("path", Prop::Str(&self.path)),
            ("rows", Prop::Str(&self.digest)),
        ]
    }
}

/// What the store holds of the graph.
#[derive(Debug, Clone, Default)]
pub struct GraphState {
    /// The commit the graph describes and the graph version it was built with.
    pub commit: Option<String>,
    pub version: Option<String>,
    pub sources: Vec<StoredSource>,
    /// The digests of each file's rows, by path (none for a file whose
    /// rows a history load changed since).
    pub digests: std::collections::HashMap<String, RowDigests>,
}

/// One update of the graph.
#[derive(Debug, Clone, Default)]
pub struct GraphWrite {
    pub commit: String,
    pub version: String,
    /// Drop the whole graph first (a new graph version).
    pub reset: bool,
    /// The store has never held a graph: its tables are empty.
    pub first: bool,
    /// Files gone from the tree.
    pub removed: Vec<String>,
    /// Files new or changed in the tree.
    pub sources: Vec<StoredSource>,
    /// For each kind of rows, the files whose rows of that kind `rows`
    /// replaces (and holds).
    pub replaced: std::collections::BTreeMap<RowKind, Vec<String>>,
    pub rows: CodeRows,
    /// The new digests of the files some of whose rows are replaced.
    pub digests: Vec<RowsDigest>,
    /// Every directory and what it contains, when the set of files changed.
    pub directories: Option<(Vec<DirectoryNode>, Vec<DirContains>, Vec<DirContains>)>,
}

impl Store {
    pub fn graph_state(&self) -> Result<GraphState> {
        let conn = self.conn()?;
        let rows = query(
            &conn,
            "read graph sources",
            "MATCH (s:Source) RETURN s.path, s.blob, s.language, s.rows",
        )?;
        let mut digests = std::collections::HashMap::new();
        let sources = rows
            .iter()
            .filter_map(|r| {
                let path = as_string(&r[0])?;
                if let Some(digest) = as_string(&r[3]).as_deref().and_then(RowDigests::parse) {
                    digests.insert(path.clone(), digest);
                }
                Some(StoredSource {
                    path,
                    blob: as_string(&r[1])?,
                    language: as_string(&r[2])?,
                })
            })
            .collect();
        Ok(GraphState {
            commit: self.meta("graph_commit")?,
            version: self.meta("graph_version")?,
            sources,
            digests,
        })
    }

    /// Applies one update in one transaction.
    pub fn write_graph(&self, update: &GraphWrite) -> Result<()> {
        let conn = self.conn()?;
        run(&conn, "begin", "BEGIN TRANSACTION")?;
        match write_in_transaction(&conn, update) {
            Ok(()) => {
                crate::fault::point("graph-uncommitted");
                run(&conn, "commit", "COMMIT").inspect_err(|_| {
                    let _ = run(&conn, "rollback", "ROLLBACK");
                })
            }
            Err(e) => {
                let _ = run(&conn, "rollback", "ROLLBACK");
                Err(e)
            }
        }
    }
}

/// Writes the graph's symbols. Most are stored already, as the history
/// left them, and alike in every column but `unresolved`: a symbol new to
/// the store gets every column, a stored one its `unresolved`, and the
/// history's columns only where they differ. Kuzu holds what a transaction
/// set until it commits, a column at a time: setting all twelve columns of
/// App-vNext/Polly's 8,125 symbols kept 12.8 MiB until the commit, under
/// the edges' copy that follows.
fn write_symbols(conn: &Connection<'_>, symbols: Vec<&TreeSymbol>) -> Result<()> {
    let set = |columns: &[&str]| {
        columns
            .iter()
            .map(|c| format!("s.{c} = r.{c}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    // The key is matched on, never set.
    let history: Vec<&str> = super::load::SYMBOL_COLUMNS
        .into_iter()
        .filter(|c| *c != "id")
        .collect();
    let all: Vec<&str> = history
        .iter()
        .copied()
        .chain(["unresolved", "bodiless"])
        .collect();
    upsert(
        conn,
        "graph symbols",
        &format!(
            "UNWIND $rows AS r MERGE (s:Symbol {{id: r.id}}) ON CREATE SET {} \
             ON MATCH SET s.unresolved = r.unresolved, s.bodiless = r.bodiless",
            set(&all)
        ),
        symbols.clone(),
    )?;
    let differs: Vec<String> = history
        .iter()
        .map(|c| format!("s.{c} IS NULL OR s.{c} <> r.{c}"))
        .collect();
    upsert(
        conn,
        "graph symbols",
        &format!(
            "UNWIND $rows AS r MATCH (s:Symbol {{id: r.id}}) WHERE {} SET {}",
            differs.join(" OR "),
            set(&history)
        ),
        symbols,
    )
}

fn delete_where(
    conn: &Connection<'_>,
    what: &'static str,
    q: &str,
    paths: &[String],
) -> Result<()> {
    if paths.is_empty() {
        return Ok(());
    }
    let mut stmt = super::engine::prepare(conn, q)?;
    super::engine::execute(conn, what, &mut stmt, vec![("paths", string_list(paths))])?;
    Ok(())
}

/// Relationships go in with `insert_rels`: in bulk into the empty tables of
/// a first build, else per row; every endpoint exists by then, written
/// earlier in this transaction or by an earlier update.
///
/// An update replaces, for each kind of rows, only the files whose rows of
/// that kind changed (`GraphWrite::replaced`): Kuzu's checkpoint rewrites
/// every relationship table a transaction touched, 20-35 ms a table on a
/// tree of 1,000 files however few its rows, and most files derived again
/// come out as they were.
fn write_in_transaction(conn: &Connection<'_>, update: &GraphWrite) -> Result<()> {
    if update.reset {
        for kind in EdgeKind::ALL {
            run(
                conn,
                "reset graph",
                &format!("MATCH ()-[r:{}]->() DELETE r", kind.as_str()),
            )?;
        }
        run(conn, "reset graph", "MATCH ()-[r:CONTAINS]->() DELETE r")?;
        run(conn, "reset graph", "MATCH ()-[r:IMPORTS]->() DELETE r")?;
        run(conn, "reset graph", "MATCH (d:Directory) DELETE d")?;
        run(conn, "reset graph", "MATCH (m:Module) DELETE m")?;
        run(conn, "reset graph", "MATCH (s:Source) DELETE s")?;
        run(conn, "reset graph", "MATCH (u:UnresolvedCall) DELETE u")?;
    }
    // A first build, or a reset, fills empty tables in bulk; an update
    // inserts per row.
    let how = if update.first || update.reset {
        Insert::Bulk
    } else {
        Insert::PerRow
    };
    // The files whose rows of `kind` go (none are left after a reset).
    let gone = |kind: RowKind| -> Vec<String> {
        if update.reset {
            return Vec::new();
        }
        update
            .removed
            .iter()
            .chain(update.replaced.get(&kind).into_iter().flatten())
            .cloned()
            .collect()
    };
    let rows = &update.rows;

    // What goes: the rows replaced, then the sources of removed files.
    let imports_gone = gone(RowKind::Imports);
    // The modules the other files import, read before their imports go.
    let imported_before: Vec<(String, String)> = if imports_gone.is_empty() {
        Vec::new()
    } else {
        let going: std::collections::HashSet<&str> =
            imports_gone.iter().map(String::as_str).collect();
        query(
            conn,
            "list imports",
            "MATCH (f:File)-[:IMPORTS]->(m:Module) RETURN f.path, m.name",
        )?
        .iter()
        .filter_map(|r| Some((as_string(&r[0])?, as_string(&r[1])?)))
        .filter(|(file, _)| !going.contains(file.as_str()))
        .collect()
    };
    for kind in EdgeKind::ALL {
        let table = kind.as_str();
        let kind = RowKind::Edges(kind);
        delete_where(
            conn,
            "replace edges",
            &format!("MATCH (:Symbol)-[e:{table}]->(:Symbol) WHERE e.file IN $paths DELETE e"),
            &gone(kind),
        )?;
    }
    for parent in ["File", "Symbol"] {
        delete_where(
            conn,
            "replace hierarchy",
            &format!("MATCH (:{parent})-[e:CONTAINS]->(:Symbol) WHERE e.file IN $paths DELETE e"),
            &gone(RowKind::Contains),
        )?;
    }
    for target in ["Module", "File"] {
        delete_where(
            conn,
            "replace imports",
            &format!("MATCH (f:File)-[e:IMPORTS]->(:{target}) WHERE f.path IN $paths DELETE e"),
            &imports_gone,
        )?;
    }
    delete_where(
        conn,
        "replace unresolved calls",
        "MATCH (u:UnresolvedCall) WHERE u.path IN $paths DELETE u",
        &gone(RowKind::UnresolvedCalls),
    )?;
    delete_where(
        conn,
        "remove sources",
        "MATCH (s:Source) WHERE s.path IN $paths DELETE s",
        &update.removed,
    )?;

    // What comes: nodes, then the relationships between them.
    upsert(
        conn,
        "graph sources",
        "UNWIND $rows AS r MERGE (s:Source {path: r.path}) SET s.blob = r.blob, \
         s.language = r.language",
        update.sources.iter().collect(),
    )?;
    upsert(
        conn,
        "graph row digests",
        "UNWIND $rows AS r MATCH (s:Source {path: r.path}) SET s.rows = r.rows",
        update.digests.iter().collect(),
    )?;
    upsert(
        conn,
        "graph files",
        "UNWIND $rows AS r MERGE (f:File {path: r.path}) SET f.language = r.language",
        rows.files.iter().collect(),
    )?;
    write_symbols(conn, rows.symbols.iter().collect())?;
    upsert(
        conn,
        "unresolved calls",
        "UNWIND $rows AS r CREATE (u:UnresolvedCall {id: r.id, path: r.path, name: r.name, \
         qualified: r.qualified, bare: r.bare})",
        rows.unresolved_calls.iter().map(row).collect(),
    )?;
    let contains = ["parent", "child", "file"];
    let (top, members): (Vec<_>, Vec<_>) = rows.contains.iter().partition(|c| c.parent.is_none());
    for (parent, rows) in [("File", top), ("Symbol", members)] {
        insert_rels(
            conn,
            "graph hierarchy",
            "CONTAINS",
            (parent, "Symbol"),
            &contains,
            rows,
            how,
        )?;
    }
    // One row per module: a batch must not name a node twice.
    let modules: std::collections::BTreeMap<&str, &ModuleNode> =
        rows.modules.iter().map(|m| (m.name.as_str(), m)).collect();
    upsert(
        conn,
        "graph modules",
        "UNWIND $rows AS r MERGE (m:Module {name: r.name}) SET m.language = r.language",
        modules.into_values().collect(),
    )?;
    let imports = ["file", "target", "kind", "alias", "line"];
    let (to_modules, to_files): (Vec<_>, Vec<_>) = rows
        .imports
        .iter()
        .partition(|i| matches!(i.target, diffidx_core::codegraph::ImportTarget::Module(_)));
    for (target, rows) in [("Module", to_modules), ("File", to_files)] {
        insert_rels(
            conn,
            "graph imports",
            "IMPORTS",
            ("File", target),
            &imports,
            rows,
            how,
        )?;
    }
    for kind in EdgeKind::ALL {
        let table = kind.as_str();
        insert_rels(
            conn,
            "graph edges",
            table,
            ("Symbol", "Symbol"),
            &[
                "from",
                "to",
                "file",
                "resolution",
                "candidates",
                "line",
                "sites",
            ],
            rows.edges.iter().filter(|e| e.edge.kind == kind).collect(),
            how,
        )?;
    }
    // Modules nothing imports any more (the files left alone, and the rows
    // just written, are what imports them).
    if !imports_gone.is_empty() {
        let mut used: std::collections::HashSet<&str> = imported_before
            .iter()
            .map(|(_, module)| module.as_str())
            .collect();
        used.extend(rows.modules.iter().map(|m| m.name.as_str()));
        let unused: Vec<String> = query(conn, "list modules", "MATCH (m:Module) RETURN m.name")?
            .iter()
            .filter_map(|r| as_string(&r[0]))
            .filter(|m| !used.contains(m.as_str()))
            .collect();
        delete_where(
            conn,
            "prune modules",
            "MATCH (m:Module) WHERE m.name IN $paths DETACH DELETE m",
            &unused,
        )?;
    }
    if let Some((dirs, to_dirs, to_files)) = &update.directories {
        run(
            conn,
            "replace directories",
            "MATCH (d:Directory) DETACH DELETE d",
        )?;
        upsert(
            conn,
            "directories",
            "UNWIND $rows AS r MERGE (d:Directory {path: r.path})",
            dirs.iter().map(row).collect(),
        )?;
        // Directories are no file's: their `file` is empty.
        let dir_row = |d: &DirContains| {
            let mut props = d.props();
            props.push(("file", Prop::Str("")));
            super::engine::row_of(props)
        };
        insert_rels(
            conn,
            "directories",
            "CONTAINS",
            ("Directory", "Directory"),
            &contains,
            to_dirs.iter().map(dir_row).collect(),
            how,
        )?;
        insert_rels(
            conn,
            "directories",
            "CONTAINS",
            ("Directory", "File"),
            &contains,
            to_files.iter().map(dir_row).collect(),
            how,
        )?;
    }
    set_meta(conn, "graph_commit", &update.commit)?;
    set_meta(conn, "graph_version", &update.version)?;
    Ok(())
}

/// Calls of one name, anywhere in the graph's tree, that matched no
/// declaration: some may call a symbol of that name.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct UnresolvedCallCount {
    pub name: String,
    /// On a receiver or path (`x.name()`, `mod.name()`) of unknown type.
    pub qualified: u64,
    /// By a bare name (`name()`) nothing in scope declares.
    pub bare: u64,
    /// In how many files.
    pub files: u64,
}

/// A symbol of the graph's tree.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TreeSymbolRow {
    pub id: String,
    pub qualname: String,
    pub kind: String,
    pub sig: String,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    /// References in it that matched nothing in the repository.
    pub unresolved: u32,
    /// Declared without a body (an interface's or an abstract method, a
    /// signature): a call of it runs an implementation.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bodiless: bool,
}

/// An edge from or to a symbol, with the symbol at its other end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EdgeRow {
    /// The symbol asked about.
    pub at: String,
    pub other: TreeSymbolRow,
    pub kind: &'static str,
    pub resolution: String,
    pub candidates: u32,
    /// Where the reference is: its file and first line.
    pub file: String,
    pub line: u32,
}

/// An import of a file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ImportRow {
    pub file: String,
    /// A namespace or module name, or a file path.
    pub target: String,
    pub target_is_file: bool,
    pub kind: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub alias: String,
    pub line: u32,
}

const SYMBOL_COLUMNS: &str =
    "s.id, s.qualname, s.kind, s.sig, s.path, s.start_line, s.end_line, s.unresolved, s.bodiless";

/// How many values [`SYMBOL_COLUMNS`] returns: a query's own columns
/// follow.
const SYMBOL_WIDTH: usize = 9;

fn symbol_row(r: &[::lbug::Value]) -> Option<TreeSymbolRow> {
    use super::engine::as_u32;
    Some(TreeSymbolRow {
        id: as_string(&r[0])?,
        qualname: as_string(&r[1])?,
        kind: as_string(&r[2])?,
        sig: as_string(&r[3]).unwrap_or_default(),
        path: as_string(&r[4]).unwrap_or_default(),
        start_line: as_u32(&r[5]),
        end_line: as_u32(&r[6]),
        unresolved: as_u32(&r[7]),
        bodiless: matches!(r.get(SYMBOL_WIDTH - 1), Some(::lbug::Value::Bool(true))),
    })
}

/// Which way an edge is followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// From the symbol to what it calls, inherits, implements.
    Out,
    /// To the symbol from what calls, inherits, implements it.
    In,
}

impl super::Reader<'_> {
    /// The commit the code graph describes, if there is a graph.
    pub fn graph_commit(&self) -> Result<Option<String>> {
        let rows = self.run(
            "MATCH (m:Meta {key: 'graph_commit'}) RETURN m.value",
            "read graph commit",
            Vec::new(),
        )?;
        Ok(rows.first().and_then(|r| as_string(&r[0])))
    }

    /// The symbols of the graph's tree with this own name.
    pub fn tree_symbols_named(&self, name: &str) -> Result<Vec<TreeSymbolRow>> {
        let rows = self.run(
            &format!(
                "MATCH (p)-[:CONTAINS]->(s:Symbol) WHERE s.name = $name RETURN {SYMBOL_COLUMNS}"
            ),
            "find graph symbols",
            vec![("name", super::engine::string(name))],
        )?;
        Ok(rows.iter().filter_map(|r| symbol_row(r)).collect())
    }

    /// The calls of these names that matched no declaration, summed over
    /// the tree, per name (names without any are left out).
    pub fn unresolved_calls(&self, names: &[String]) -> Result<Vec<UnresolvedCallCount>> {
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let rows = self.run(
            "MATCH (u:UnresolvedCall) WHERE u.name IN $names \
             RETURN u.name, sum(u.qualified), sum(u.bare), count(*) ORDER BY u.name",
            "count unresolved calls",
            vec![("names", string_list(names))],
        )?;
        // Kuzu sums INT64 columns as INT128.
        let count = |v: &::lbug::Value| match v {
            ::lbug::Value::Int128(n) => u64::try_from(*n).unwrap_or(0),
            v => super::engine::as_i64(v)
                .and_then(|n| u64::try_from(n).ok())
                .unwrap_or(0),
        };
        Ok(rows
            .iter()
            .filter_map(|r| {
                Some(UnresolvedCallCount {
                    name: as_string(&r[0])?,
                    qualified: count(&r[1]),
                    bare: count(&r[2]),
                    files: count(&r[3]),
                })
            })
            .collect())
    }

    /// The symbols of the graph's tree with these ids.
    pub fn tree_symbols(&self, ids: &[String]) -> Result<Vec<TreeSymbolRow>> {
        let rows = self.run(
            &format!(
                "MATCH (p)-[:CONTAINS]->(s:Symbol) WHERE s.id IN $ids RETURN {SYMBOL_COLUMNS}"
            ),
            "find graph symbols",
            vec![("ids", string_list(ids))],
        )?;
        Ok(rows.iter().filter_map(|r| symbol_row(r)).collect())
    }

    /// The edges of `kind` (`CALLS`, `INHERITS`, `IMPLEMENTS`) at `ids`,
    /// one way, of the given resolution levels.
    pub fn edges(
        &self,
        ids: &[String],
        kind: &'static str,
        direction: Direction,
        levels: &[String],
    ) -> Result<Vec<EdgeRow>> {
        if !EdgeKind::ALL.iter().any(|k| k.as_str() == kind) || ids.is_empty() {
            return Ok(Vec::new());
        }
        let (at, pattern) = match direction {
            Direction::Out => ("a", format!("(a:Symbol)-[r:{kind}]->(s:Symbol)")),
            Direction::In => ("a", format!("(s:Symbol)-[r:{kind}]->(a:Symbol)")),
        };
        let rows = self.run(
            &format!(
                "MATCH {pattern} WHERE {at}.id IN $ids AND r.resolution IN $levels \
                 RETURN {SYMBOL_COLUMNS}, {at}.id, r.resolution, r.candidates, r.file, r.line"
            ),
            "follow graph edges",
            vec![("ids", string_list(ids)), ("levels", string_list(levels))],
        )?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                Some(EdgeRow {
                    other: symbol_row(r)?,
                    at: as_string(&r[SYMBOL_WIDTH])?,
                    kind,
                    resolution: as_string(&r[SYMBOL_WIDTH + 1])?,
                    candidates: super::engine::as_u32(&r[SYMBOL_WIDTH + 2]),
                    file: as_string(&r[SYMBOL_WIDTH + 3]).unwrap_or_default(),
                    line: super::engine::as_u32(&r[SYMBOL_WIDTH + 4]),
                })
            })
            .collect())
    }

    /// For each of `ids` declared in another symbol, `(its id, the id of
    /// the symbol that contains it)`.
    pub fn containers_of(&self, ids: &[String]) -> Result<Vec<(String, String)>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let rows = self.run(
            "MATCH (t:Symbol)-[:CONTAINS]->(s:Symbol) WHERE s.id IN $ids RETURN s.id, t.id",
            "find containers",
            vec![("ids", string_list(ids))],
        )?;
        Ok(rows
            .iter()
            .filter_map(|r| Some((as_string(&r[0])?, as_string(&r[1])?)))
            .collect())
    }

    /// The members of the `containers` whose own name is one of `names`,
    /// each with the id of its container.
    pub fn members_named(
        &self,
        containers: &[String],
        names: &[String],
    ) -> Result<Vec<(String, TreeSymbolRow)>> {
        if containers.is_empty() || names.is_empty() {
            return Ok(Vec::new());
        }
        let rows = self.run(
            &format!(
                "MATCH (t:Symbol)-[:CONTAINS]->(s:Symbol) WHERE t.id IN $ids \
                 AND s.name IN $names RETURN {SYMBOL_COLUMNS}, t.id"
            ),
            "find members",
            vec![
                ("ids", string_list(containers)),
                ("names", string_list(names)),
            ],
        )?;
        Ok(rows
            .iter()
            .filter_map(|r| Some((as_string(&r[SYMBOL_WIDTH])?, symbol_row(r)?)))
            .collect())
    }

    /// For the graph-only functions among `ids` (a function nested in a
    /// function: no content hash), the declaration that holds each, as a
    /// `CONTAINS` edge row.
    pub fn nested_in(&self, ids: &[String]) -> Result<Vec<EdgeRow>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let rows = self.run(
            &format!(
                "MATCH (s:Symbol)-[r:CONTAINS]->(a:Symbol) WHERE a.id IN $ids \
                 AND a.content_hash = '' AND a.kind = 'function' \
                 RETURN {SYMBOL_COLUMNS}, a.id, a.path, a.start_line"
            ),
            "find nested functions' holders",
            vec![("ids", string_list(ids))],
        )?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                Some(EdgeRow {
                    other: symbol_row(r)?,
                    at: as_string(&r[SYMBOL_WIDTH])?,
                    kind: "CONTAINS",
                    resolution: "exact".to_owned(),
                    candidates: 1,
                    file: as_string(&r[SYMBOL_WIDTH + 1]).unwrap_or_default(),
                    line: super::engine::as_u32(&r[SYMBOL_WIDTH + 2]),
                })
            })
            .collect())
    }

    /// What the files import.
    pub fn imports_of(&self, paths: &[String]) -> Result<Vec<ImportRow>> {
        let mut out = Vec::new();
        for (target, is_file) in [
            ("(t:Module) RETURN t.name", false),
            ("(t:File) RETURN t.path", true),
        ] {
            let (pattern, ret) = target.split_once(" RETURN ").unwrap_or_default();
            let rows = self.run(
                &format!(
                    "MATCH (f:File)-[r:IMPORTS]->{pattern} WHERE f.path IN $paths \
                     RETURN f.path, {ret}, r.kind, r.alias, r.line"
                ),
                "read imports",
                vec![("paths", string_list(paths))],
            )?;
            out.extend(rows.iter().filter_map(|r| {
                Some(ImportRow {
                    file: as_string(&r[0])?,
                    target: as_string(&r[1])?,
                    target_is_file: is_file,
                    kind: as_string(&r[2]).unwrap_or_default(),
                    alias: as_string(&r[3]).unwrap_or_default(),
                    line: super::engine::as_u32(&r[4]),
                })
            }));
        }
        out.sort_by(|a, b| (&a.file, a.line, &a.target).cmp(&(&b.file, b.line, &b.target)));
        Ok(out)
    }
}

impl Store {
    /// Every row of the history (commits, files, symbols and their
    /// relationships) as sorted text lines: two stores that say the same
    /// print the same lines, however their batches were loaded.
    pub fn history_dump(&self) -> Result<Vec<String>> {
        let reads: [(&str, &str); 8] = [
            (
                "commit",
                "MATCH (c:Commit) RETURN c.sha, c.parent, c.time, c.date, c.author, c.subject, c.seq",
            ),
            ("file", "MATCH (f:File) RETURN f.path, f.language"),
            (
                "symbol",
                "MATCH (s:Symbol) RETURN s.id, s.path, s.qualname, s.name, s.kind, s.sig, \
                 s.language, s.deleted, s.start_line, s.end_line, s.content_hash",
            ),
            (
                "changed",
                "MATCH (s:Symbol)-[r:CHANGED_IN]->(c:Commit) RETURN s.id, c.sha, r.status, \
                 r.old_path, r.modified, r.start_line, r.end_line",
            ),
            (
                "child-of",
                "MATCH (a:Symbol)-[:CHILD_OF]->(b:Symbol) RETURN a.id, b.id",
            ),
            (
                "in-file",
                "MATCH (a:Symbol)-[:CHILD_OF]->(f:File) RETURN a.id, f.path",
            ),
            (
                "moved",
                "MATCH (a:Symbol)-[r:MOVED_TO]->(b:Symbol) RETURN a.id, b.id, r.sha",
            ),
            (
                "continues",
                "MATCH (a:Symbol)-[r:CONTINUES]->(b:Symbol) RETURN a.id, b.id, r.sha, r.similarity",
            ),
        ];
        let conn = self.conn()?;
        let mut lines = Vec::new();
        for (prefix, q) in reads {
            for row in query(&conn, "dump", q)? {
                let cells: Vec<String> = row.iter().map(|v| v.to_string()).collect();
                lines.push(format!("{prefix} {}", cells.join(" | ")));
            }
        }
        lines.sort();
        Ok(lines)
    }

    /// Every row of the code graph as sorted text lines (sources excepted:
    /// they are how the graph is kept, not what it says). Two graphs of the
    /// same tree print the same lines, however they were built.
    pub fn graph_dump(&self) -> Result<Vec<String>> {
        let edges: Vec<(&str, String)> = EdgeKind::ALL
            .iter()
            .map(|kind| {
                let table = kind.as_str();
                let q = format!(
                    "MATCH (a:Symbol)-[r:{table}]->(b:Symbol) RETURN a.qualname, b.qualname, \
                     a.id, b.id, r.file, r.resolution, r.candidates, r.line, r.sites"
                );
                (table, q)
            })
            .collect();
        let mut reads: Vec<(&str, &str)> = vec![
            ("dir", "MATCH (d:Directory) RETURN d.path"),
            ("module", "MATCH (m:Module) RETURN m.name, m.language"),
            (
                "dir-dir",
                "MATCH (a:Directory)-[:CONTAINS]->(b:Directory) RETURN a.path, b.path",
            ),
            (
                "dir-file",
                "MATCH (a:Directory)-[:CONTAINS]->(b:File) RETURN a.path, b.path",
            ),
            (
                "file-symbol",
                "MATCH (a:File)-[r:CONTAINS]->(b:Symbol) RETURN a.path, b.id, r.file, b.qualname, \
                 b.kind, b.sig, b.start_line, b.end_line, b.unresolved, b.bodiless",
            ),
            (
                "symbol-symbol",
                "MATCH (a:Symbol)-[r:CONTAINS]->(b:Symbol) RETURN a.id, b.id, r.file, b.qualname, \
                 b.kind, b.sig, b.start_line, b.end_line, b.unresolved, b.bodiless",
            ),
            (
                "import",
                "MATCH (a:File)-[r:IMPORTS]->(m:Module) RETURN a.path, m.name, r.kind, r.alias, r.line",
            ),
            (
                "import-file",
                "MATCH (a:File)-[r:IMPORTS]->(b:File) RETURN a.path, b.path, r.kind, r.alias, r.line",
            ),
            (
                "unresolved-call",
                "MATCH (u:UnresolvedCall) RETURN u.id, u.path, u.name, u.qualified, u.bare",
            ),
        ];
        reads.extend(edges.iter().map(|(table, q)| (*table, q.as_str())));
        dump(&self.conn()?, &reads)
    }
}

/// The rows of each query as text lines headed by its prefix, sorted.
fn dump(conn: &Connection<'_>, reads: &[(&str, &str)]) -> Result<Vec<String>> {
    let mut lines = Vec::new();
    for (prefix, q) in reads {
        for row in query(conn, "dump", q)? {
            let cells: Vec<String> = row.iter().map(|v| v.to_string()).collect();
            lines.push(format!("{prefix} {}", cells.join(" | ")));
        }
    }
    lines.sort();
    Ok(lines)
}

/// The whole code graph as rows (for a push): the same rows the updates
/// wrote.
#[derive(Debug, Clone, Default)]
pub struct GraphSnapshot {
    pub commit: String,
    pub directories: Vec<DirectoryNode>,
    pub dir_dirs: Vec<DirContains>,
    pub dir_files: Vec<DirContains>,
    pub rows: CodeRows,
}

impl Store {
    /// The graph's rows, or `None` when there is no graph.
    pub fn graph_snapshot(&self) -> Result<Option<GraphSnapshot>> {
        use super::engine::as_u32;
        use crate::graph::code::{CodeEdge, Imports, ModuleNode, SymbolContains, TreeSymbol};
        use crate::graph::{FileNode, SymbolNode};
        use diffidx_core::codegraph::{Edge, EdgeKind, ImportTarget, Resolution};
        use diffidx_core::{Language, SymbolKind};

        let Some(commit) = self.meta("graph_commit")? else {
            return Ok(None);
        };
        let conn = self.conn()?;
        let texts = |q: &str| -> Result<Vec<Vec<String>>> {
            Ok(query(&conn, "read graph", q)?
                .iter()
                .map(|r| r.iter().map(|v| as_string(v).unwrap_or_default()).collect())
                .collect())
        };
        let language = |name: &str| Language::from_name(name).map_or("", |l| l.name());
        let mut snapshot = GraphSnapshot {
            commit,
            ..GraphSnapshot::default()
        };
        for r in texts("MATCH (d:Directory) RETURN d.path")? {
            snapshot
                .directories
                .push(DirectoryNode { path: r[0].clone() });
        }
        for r in texts("MATCH (a:Directory)-[:CONTAINS]->(b:Directory) RETURN a.path, b.path")? {
            snapshot.dir_dirs.push(DirContains {
                parent: r[0].clone(),
                child: r[1].clone(),
            });
        }
        for r in texts("MATCH (a:Directory)-[:CONTAINS]->(b:File) RETURN a.path, b.path")? {
            snapshot.dir_files.push(DirContains {
                parent: r[0].clone(),
                child: r[1].clone(),
            });
        }
        let rows = &mut snapshot.rows;
        for r in texts("MATCH (s:Source) RETURN s.path, s.language")? {
            rows.files.push(FileNode {
                path: r[0].clone(),
                language: language(&r[1]),
            });
        }
        for (pattern, parent) in [("(p:File)", "p.path"), ("(p:Symbol)", "p.id")] {
            let q = format!(
                "MATCH {pattern}-[r:CONTAINS]->(s:Symbol) RETURN r.file, {parent}, s.id, s.path, \
                 s.qualname, s.name, s.kind, s.sig, s.language, s.start_line, s.end_line, \
                 s.content_hash, s.unresolved, s.bodiless"
            );
            for r in query(&conn, "read graph", &q)? {
                let text = |i: usize| as_string(&r[i]).unwrap_or_default();
                let kind = SymbolKind::parse(&text(6)).map_or("", |k| k.as_str());
                rows.contains.push(SymbolContains {
                    file: text(0),
                    parent: (pattern == "(p:Symbol)").then(|| text(1)),
                    child: text(2),
                });
                rows.symbols.push(TreeSymbol {
                    node: SymbolNode {
                        id: text(2).into(),
                        path: text(3).into(),
                        qualname: text(4),
                        name: text(5),
                        kind,
                        sig: text(7),
                        language: language(&text(8)),
                        deleted: false,
                        start_line: as_u32(&r[9]),
                        end_line: as_u32(&r[10]),
                        content_hash: text(11),
                    },
                    unresolved: as_u32(&r[12]),
                    bodiless: matches!(r.get(13), Some(::lbug::Value::Bool(true))),
                });
            }
        }
        for r in texts("MATCH (m:Module) RETURN m.name, m.language")? {
            rows.modules.push(ModuleNode {
                name: r[0].clone(),
                language: language(&r[1]),
            });
        }
        for (target, column) in [("(t:Module)", "t.name"), ("(t:File)", "t.path")] {
            let q = format!(
                "MATCH (f:File)-[r:IMPORTS]->{target} RETURN f.path, {column}, r.kind, r.alias, r.line"
            );
            for r in query(&conn, "read graph", &q)? {
                let text = |i: usize| as_string(&r[i]).unwrap_or_default();
                let kind = diffidx_core::codegraph::ImportKind::ALL
                    .into_iter()
                    .find(|k| k.as_str() == text(2))
                    .map_or("", |k| k.as_str());
                rows.imports.push(Imports {
                    file: text(0),
                    target: if target == "(t:Module)" {
                        ImportTarget::Module(text(1))
                    } else {
                        ImportTarget::File(text(1))
                    },
                    kind,
                    alias: text(3),
                    line: as_u32(&r[4]),
                });
            }
        }
        for (table, kind) in [
            ("CALLS", EdgeKind::Calls),
            ("INHERITS", EdgeKind::Inherits),
            ("IMPLEMENTS", EdgeKind::Implements),
        ] {
            let q = format!(
                "MATCH (a:Symbol)-[r:{table}]->(b:Symbol) RETURN r.file, a.id, b.id, r.resolution, \
                 r.candidates, r.line, r.sites"
            );
            for r in query(&conn, "read graph", &q)? {
                let text = |i: usize| as_string(&r[i]).unwrap_or_default();
                rows.edges.push(CodeEdge {
                    file: text(0),
                    edge: Edge {
                        kind,
                        from: text(1),
                        to: text(2),
                        resolution: Resolution::parse(&text(3)).unwrap_or(Resolution::Ambiguous),
                        candidates: as_u32(&r[4]),
                        line: as_u32(&r[5]),
                        sites: as_u32(&r[6]),
                    },
                });
            }
        }
        let q = "MATCH (u:UnresolvedCall) RETURN u.id, u.path, u.name, u.qualified, u.bare";
        for r in query(&conn, "read graph", q)? {
            let text = |i: usize| as_string(&r[i]).unwrap_or_default();
            rows.unresolved_calls.push(UnresolvedCallRow {
                id: text(0),
                path: text(1),
                name: text(2),
                calls: diffidx_core::codegraph::UnresolvedCalls {
                    qualified: as_u32(&r[3]),
                    bare: as_u32(&r[4]),
                },
            });
        }
        Ok(Some(snapshot))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::SymbolNode;
    use crate::store::Access;
    use std::time::Duration;

    /// A query's own columns are read after the symbol's: the width must
    /// be the list's.
    #[test]
    fn the_symbol_width_is_the_symbol_columns_count() {
        assert_eq!(SYMBOL_COLUMNS.split(',').count(), SYMBOL_WIDTH);
    }

    fn symbol(id: &str, path: &str, start_line: u32, unresolved: u32) -> TreeSymbol {
        TreeSymbol {
            node: SymbolNode {
                id: id.into(),
                path: path.into(),
                qualname: format!("Acme.{id}"),
                name: id.to_owned(),
                kind: "method",
                sig: "()".to_owned(),
                language: "csharp",
                deleted: false,
                start_line,
                end_line: start_line + 2,
                content_hash: format!("hash-{id}"),
            },
            unresolved,
            bodiless: false,
        }
    }

    /// A new, empty store in a temp dir (kept as long as the store).
    fn empty_store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("graph.lbdb");
        let store = Store::open(&path, Access::ReadWrite, Duration::ZERO).unwrap();
        (dir, store)
    }

    /// Creates a symbol per row with `columns` of it.
    fn create(store: &Store, columns: &[&str], rows: Vec<::lbug::Value>) {
        let conn = store.conn().unwrap();
        let props: Vec<String> = columns.iter().map(|c| format!("{c}: r.{c}")).collect();
        let q = format!(
            "UNWIND $rows AS r CREATE (s:Symbol {{{}}})",
            props.join(", ")
        );
        upsert(&conn, "test", &q, rows).unwrap();
    }

    /// What the store holds of a symbol, as `graph_dump` would show it.
    fn stored(store: &Store, id: &str) -> String {
        format!(
            "{:?}",
            store.reader().unwrap().symbol(id).unwrap().expect("stored")
        )
    }

    #[test]
    fn graph_symbols_get_every_column_where_the_history_left_them_otherwise() {
        let (_dir, store) = empty_store();
        let alike = symbol("Alike", "a.cs", 3, 2);
        let stale = symbol("Stale", "a.cs", 10, 0);
        let bare = symbol("Bare", "a.cs", 20, 1);
        let new = symbol("New", "b.cs", 1, 4);
        // As a history load leaves them: `Alike` as the graph has it, `Stale`
        // deleted at other lines, `Bare` an id alone; no `unresolved` for any.
        let mut stale_then = stale.clone();
        stale_then.node.deleted = true;
        stale_then.node.start_line = 40;
        let history = super::super::load::SYMBOL_COLUMNS;
        create(
            &store,
            &history,
            vec![row(&alike.node), row(&stale_then.node)],
        );
        create(
            &store,
            &["id"],
            vec![super::super::engine::row_of(vec![(
                "id",
                Prop::Str("Bare"),
            )])],
        );
        let wanted = [&alike, &stale, &bare, &new];
        store
            .write_graph(&GraphWrite {
                commit: "c".into(),
                version: "v".into(),
                first: true,
                rows: CodeRows {
                    symbols: wanted.iter().map(|s| (*s).clone()).collect(),
                    ..CodeRows::default()
                },
                ..GraphWrite::default()
            })
            .unwrap();
        // Each as if written whole: a store made with only the wanted rows.
        let (_dir2, expected) = empty_store();
        let every: Vec<&str> = history
            .into_iter()
            .chain(["unresolved", "bodiless"])
            .collect();
        create(&expected, &every, wanted.iter().map(|s| row(*s)).collect());
        for s in wanted {
            assert_eq!(
                stored(&store, &s.node.id),
                stored(&expected, &s.node.id),
                "{}",
                s.node.id
            );
        }
        assert!(stored(&store, "Stale").contains("\"deleted\": Bool(false)"));
        assert!(stored(&store, "New").contains("\"unresolved\": Number(4)"));
    }
}
