//! The one graph model: commit records (notes plus the files they touched)
//! become typed node and edge rows here, once. The embedded store and the shared
//! Neo4j are two backends that write these rows; neither builds rows of its
//! own, so both hold the same nodes, edges and properties.
//!
//! Each row kind has one [`Row::props`] function: the property names and
//! values a backend writes. Adding an edge kind is a row type here, one
//! `props` function, and one statement per backend (docs/architecture.md).

pub mod code;

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use diffidx_core::delta::Similarity;
use diffidx_core::qualname::own_name;
use diffidx_core::symbol::symbol_id;
use diffidx_core::{CommitRecord, Language, Status};

/// A property value, borrowed from its row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Prop<'a> {
    Str(&'a str),
    Int(i64),
    Bool(bool),
    Float(f64),
}

/// A node or edge row: its properties, in a fixed order.
pub trait Row {
    fn props(&self) -> Vec<(&'static str, Prop<'_>)>;
}

/// A list of rows that grows a chunk at a time, for the lists a backfill
/// fills one record at a time (App-vNext/Polly: 74,000 changes). Grown by
/// doubling, a `Vec` held up to twice its rows' room, and each doubling
/// copied the list into a new block while the old one was still there
/// (10 MiB for the changes), at the height of the diffing.
#[derive(Debug, Clone, PartialEq)]
pub struct RowList<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

/// Rows per chunk at most: a few hundred KiB of the largest rows.
const CHUNK_ROWS: usize = 4096;

impl<T> Default for RowList<T> {
    fn default() -> Self {
        RowList {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<T> RowList<T> {
    pub fn push(&mut self, row: T) {
        match self.chunks.last_mut() {
            Some(chunk) if chunk.len() < chunk.capacity() => chunk.push(row),
            _ => {
                // As large as the list so far, up to a chunk's most: a
                // short list (a hook's run) stays small.
                let mut chunk = Vec::with_capacity(self.len.clamp(16, CHUNK_ROWS));
                chunk.push(row);
                self.chunks.push(chunk);
            }
        }
        self.len += 1;
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn iter(&self) -> std::iter::Flatten<std::slice::Iter<'_, Vec<T>>> {
        self.chunks.iter().flatten()
    }
}

impl<'a, T> IntoIterator for &'a RowList<T> {
    type Item = &'a T;
    type IntoIter = std::iter::Flatten<std::slice::Iter<'a, Vec<T>>>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T> FromIterator<T> for RowList<T> {
    fn from_iter<I: IntoIterator<Item = T>>(rows: I) -> Self {
        let mut list = RowList::default();
        for row in rows {
            list.push(row);
        }
        list
    }
}

/// `(:Commit)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitNode {
    pub sha: String,
    /// The first parent's sha, empty for a root commit.
    pub parent: String,
    /// Author time, seconds since the epoch.
    pub time: i64,
    /// Author time, RFC 3339.
    pub date: String,
    pub author: String,
    pub subject: String,
}

impl Row for CommitNode {
    fn props(&self) -> Vec<(&'static str, Prop<'_>)> {
        vec![
            ("sha", Prop::Str(&self.sha)),
            ("parent", Prop::Str(&self.parent)),
            ("time", Prop::Int(self.time)),
            ("date", Prop::Str(&self.date)),
            ("author", Prop::Str(&self.author)),
            ("subject", Prop::Str(&self.subject)),
        ]
    }
}

/// `(:File)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileNode {
    pub path: String,
    pub language: &'static str,
}

impl Row for FileNode {
    fn props(&self) -> Vec<(&'static str, Prop<'_>)> {
        vec![
            ("path", Prop::Str(&self.path)),
            ("language", Prop::Str(self.language)),
        ]
    }
}

/// `(:Symbol)`: its latest known state. A deleted symbol keeps the text hash
/// it last had (empty when it was never seen alive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolNode {
    pub id: Arc<str>,
    pub path: Arc<str>,
    pub qualname: String,
    /// The own name (`Bar` of `Acme.Foo.Bar`), for lookups by name.
    pub name: String,
    pub kind: &'static str,
    pub sig: String,
    pub language: &'static str,
    pub deleted: bool,
    pub start_line: u32,
    pub end_line: u32,
    pub content_hash: String,
}

impl Row for SymbolNode {
    fn props(&self) -> Vec<(&'static str, Prop<'_>)> {
        vec![
            ("id", Prop::Str(&self.id)),
            ("path", Prop::Str(&self.path)),
            ("qualname", Prop::Str(&self.qualname)),
            ("name", Prop::Str(&self.name)),
            ("kind", Prop::Str(self.kind)),
            ("sig", Prop::Str(&self.sig)),
            ("language", Prop::Str(self.language)),
            ("deleted", Prop::Bool(self.deleted)),
            ("start_line", Prop::Int(self.start_line.into())),
            ("end_line", Prop::Int(self.end_line.into())),
            ("content_hash", Prop::Str(&self.content_hash)),
        ]
    }
}

/// What encloses a symbol: another symbol, or (top level) its file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Parent {
    Symbol(Arc<str>),
    File(Arc<str>),
}

/// `(:Symbol)-[:CHILD_OF]->(:Symbol|File)`: the hierarchy.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ChildOf {
    pub child: Arc<str>,
    pub parent: Parent,
}

impl Row for ChildOf {
    fn props(&self) -> Vec<(&'static str, Prop<'_>)> {
        let parent = match &self.parent {
            Parent::Symbol(id) => id,
            Parent::File(path) => path,
        };
        vec![
            ("child", Prop::Str(&self.child)),
            ("parent", Prop::Str(parent)),
        ]
    }
}

/// `(:Symbol)-[:CHANGED_IN]->(:Commit)`: one per delta of a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedIn {
    pub id: Arc<str>,
    pub sha: Arc<str>,
    pub status: Status,
    /// Set when the symbol moved.
    pub old_path: Option<Arc<str>>,
    pub modified: bool,
    pub start_line: u32,
    pub end_line: u32,
}

impl Row for ChangedIn {
    fn props(&self) -> Vec<(&'static str, Prop<'_>)> {
        vec![
            ("id", Prop::Str(&self.id)),
            ("sha", Prop::Str(&self.sha)),
            ("status", Prop::Str(self.status.as_str())),
            (
                "old_path",
                Prop::Str(self.old_path.as_deref().unwrap_or("")),
            ),
            ("modified", Prop::Bool(self.modified)),
            ("start_line", Prop::Int(self.start_line.into())),
            ("end_line", Prop::Int(self.end_line.into())),
        ]
    }
}

/// `(:Symbol)-[:MOVED_TO]->(:Symbol)`: an old identity to its new one.
/// `from` is the same qualname at the old path; a backend that finds no such
/// symbol looks for the live one at `old_path` with the same kind, own name
/// and text hash (the enclosing type was renamed in the same move).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MovedTo {
    pub from: Arc<str>,
    pub to: Arc<str>,
    pub old_path: Arc<str>,
    pub qualname: String,
    pub name: String,
    pub kind: &'static str,
    pub sig: String,
    pub content_hash: String,
    pub sha: Arc<str>,
}

impl Row for MovedTo {
    fn props(&self) -> Vec<(&'static str, Prop<'_>)> {
        vec![
            ("from", Prop::Str(&self.from)),
            ("to", Prop::Str(&self.to)),
            ("old_path", Prop::Str(&self.old_path)),
            ("qualname", Prop::Str(&self.qualname)),
            ("name", Prop::Str(&self.name)),
            ("kind", Prop::Str(self.kind)),
            ("sig", Prop::Str(&self.sig)),
            ("content_hash", Prop::Str(&self.content_hash)),
            ("sha", Prop::Str(&self.sha)),
        ]
    }
}

/// `(:Symbol)-[:CONTINUES {sha, similarity}]->(:Symbol)`: lineage, a
/// DELETED symbol to the ADDED one that continues it (the note's `from`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Continues {
    pub from: Arc<str>,
    pub to: Arc<str>,
    pub sha: Arc<str>,
    pub similarity: Similarity,
}

impl Row for Continues {
    fn props(&self) -> Vec<(&'static str, Prop<'_>)> {
        vec![
            ("from", Prop::Str(&self.from)),
            ("to", Prop::Str(&self.to)),
            ("sha", Prop::Str(&self.sha)),
            ("similarity", Prop::Float(self.similarity.as_f64())),
        ]
    }
}

/// Every row of a batch of commit records (oldest first), each node at its
/// latest state in the batch and each edge once.
#[derive(Debug, Default)]
pub struct GraphRows {
    pub commits: Vec<CommitNode>,
    pub files: Vec<FileNode>,
    /// Symbols alive at the end of the batch, by id.
    pub symbols: BTreeMap<Arc<str>, SymbolNode>,
    /// Symbols deleted by the batch (and not re-added after), by id.
    pub deleted: BTreeMap<Arc<str>, SymbolNode>,
    pub child_of: RowList<ChildOf>,
    pub changed_in: RowList<ChangedIn>,
    pub moved_to: RowList<MovedTo>,
    pub continues: RowList<Continues>,
}

impl GraphRows {
    /// The rows of `records`: every symbol of every touched file as of its
    /// commit (so the hierarchy around a change is always there), one change
    /// per delta, and the moves.
    pub fn from_records<'r>(records: impl IntoIterator<Item = &'r CommitRecord>) -> GraphRows {
        let mut rows = RowsBuilder::default();
        for record in records {
            rows.add(record);
        }
        rows.finish()
    }
}

/// [`GraphRows`] made one record at a time (in commit order), so that a
/// writer can let each record go once its rows are made: a batch's records
/// hold every touched file's symbols, its rows only the latest of each.
#[derive(Default)]
pub struct RowsBuilder {
    rows: GraphRows,
    /// Each path and symbol id of the batch once: the rows name them again
    /// and again (every change, edge and version of a file), and a copy
    /// each was most of what a backfill's rows held.
    names: HashSet<Arc<str>>,
    files_seen: HashSet<Arc<str>>,
    edges_seen: HashSet<ChildOf>,
}

impl RowsBuilder {
    /// How many rows are held (nodes and edges).
    pub fn row_count(&self) -> usize {
        let rows = &self.rows;
        rows.commits.len()
            + rows.files.len()
            + rows.symbols.len()
            + rows.deleted.len()
            + rows.child_of.len()
            + rows.changed_in.len()
            + rows.moved_to.len()
            + rows.continues.len()
    }

    /// The rows so far; the builder is empty again.
    pub fn finish(&mut self) -> GraphRows {
        self.names = HashSet::new();
        self.files_seen = HashSet::new();
        self.edges_seen = HashSet::new();
        let mut rows = std::mem::take(&mut self.rows);
        // Grown by doubling, the lists hold up to twice their rows' room
        // through the load that follows.
        rows.commits.shrink_to_fit();
        rows.files.shrink_to_fit();
        rows
    }

    /// Adds the rows of `record`, after those of the records before it.
    pub fn add(&mut self, record: &CommitRecord) {
        let (rows, names) = (&mut self.rows, &mut self.names);
        let sha: Arc<str> = Arc::from(record.info.id.to_string());
        rows.commits.push(commit_node(record));
        for file in &record.files {
            let path = share(names, &file.path);
            if self.files_seen.insert(Arc::clone(&path)) {
                rows.files.push(FileNode {
                    path: file.path.clone(),
                    language: file.language.name(),
                });
            }
            let symbols = &file.symbols.symbols;
            let ids: Vec<Arc<str>> = symbols
                .iter()
                .map(|s| share(names, &symbol_id(&file.path, s.kind, &s.qualname, &s.sig)))
                .collect();
            for (s, id) in symbols.iter().zip(&ids) {
                rows.deleted.remove(id);
                rows.symbols.insert(
                    Arc::clone(id),
                    SymbolNode {
                        id: Arc::clone(id),
                        path: Arc::clone(&path),
                        qualname: s.qualname.clone(),
                        name: s.name.clone(),
                        kind: s.kind.as_str(),
                        sig: s.sig.clone(),
                        language: file.language.name(),
                        deleted: false,
                        start_line: s.start_line,
                        end_line: s.end_line,
                        content_hash: s.content_hash.to_hex(),
                    },
                );
                let edge = ChildOf {
                    child: Arc::clone(id),
                    parent: match s.parent {
                        Some(p) => Parent::Symbol(Arc::clone(&ids[p])),
                        None => Parent::File(Arc::clone(&path)),
                    },
                };
                if !self.edges_seen.contains(&edge) {
                    self.edges_seen.insert(edge.clone());
                    rows.child_of.push(edge);
                }
            }
        }
        for d in &record.note.deltas {
            let id = share(names, &d.id);
            if d.status == Status::Deleted {
                // Kept forever: marked deleted, its last known hash kept.
                let hash = rows
                    .symbols
                    .remove(&id)
                    .map(|s| s.content_hash)
                    .unwrap_or_default();
                rows.deleted.insert(
                    Arc::clone(&id),
                    SymbolNode {
                        id: Arc::clone(&id),
                        path: share(names, &d.path),
                        qualname: d.qualname.clone(),
                        name: own_name(&d.qualname).to_owned(),
                        kind: d.kind.as_str(),
                        sig: d.sig.clone(),
                        language: Language::from_path(&d.path).map_or("", |l| l.name()),
                        deleted: true,
                        start_line: d.start_line,
                        end_line: d.end_line,
                        content_hash: hash,
                    },
                );
            }
            rows.changed_in.push(ChangedIn {
                id: Arc::clone(&id),
                sha: Arc::clone(&sha),
                status: d.status,
                old_path: d.old_path.as_deref().map(|path| share(names, path)),
                modified: d.modified.unwrap_or(false),
                start_line: d.start_line,
                end_line: d.end_line,
            });
            if let Some(from) = &d.from {
                rows.continues.push(Continues {
                    from: share(names, &from.id),
                    to: Arc::clone(&id),
                    sha: Arc::clone(&sha),
                    similarity: from.similarity,
                });
            }
            if let (Status::Moved, Some(old_path)) = (d.status, &d.old_path) {
                rows.moved_to.push(MovedTo {
                    from: share(names, &symbol_id(old_path, d.kind, &d.qualname, &d.sig)),
                    to: id,
                    old_path: share(names, old_path),
                    qualname: d.qualname.clone(),
                    name: own_name(&d.qualname).to_owned(),
                    kind: d.kind.as_str(),
                    sig: d.sig.clone(),
                    content_hash: d.content_hash.clone().unwrap_or_default(),
                    sha: Arc::clone(&sha),
                });
            }
        }
    }
}

/// The batch's one copy of `name`.
fn share(names: &mut HashSet<Arc<str>>, name: &str) -> Arc<str> {
    match names.get(name) {
        Some(shared) => Arc::clone(shared),
        None => {
            let shared: Arc<str> = Arc::from(name);
            names.insert(Arc::clone(&shared));
            shared
        }
    }
}

fn commit_node(record: &CommitRecord) -> CommitNode {
    let info = &record.info;
    CommitNode {
        sha: info.id.to_string(),
        parent: record.note.parent.clone().unwrap_or_default(),
        time: info.time,
        date: info.date.clone(),
        author: info.author.clone(),
        subject: info.subject.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_list_keeps_its_rows_in_order_in_bounded_chunks() {
        let rows: RowList<usize> = (0..10_000).collect();
        assert_eq!(rows.len(), 10_000);
        assert!(rows.iter().copied().eq(0..10_000), "every row, in order");
        assert!(rows.chunks.iter().all(|c| c.capacity() <= 2 * CHUNK_ROWS));
        let room: usize = rows.chunks.iter().map(Vec::capacity).sum();
        assert!(
            room < 10_000 + CHUNK_ROWS,
            "room for {room} rows: at most a chunk to spare"
        );
        let few: RowList<u8> = [1, 2, 3].into_iter().collect();
        assert_eq!(few.chunks.len(), 1);
        assert!(few.chunks[0].capacity() < 64, "a short list stays small");
        assert!(RowList::<u8>::default().is_empty());
    }
}
