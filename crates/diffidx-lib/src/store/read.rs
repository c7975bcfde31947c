//! Reading: symbol histories, counts and single symbols, each statement
//! prepared once per connection.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};

use ::lbug::{Connection, PreparedStatement, Value};
use diffidx_core::delta::{Lineage, Similarity};
use diffidx_core::{Status, SymbolKind, SymbolQuery};

use super::engine::{as_i64, as_string, as_u32, execute_map, prepare, string, string_list};
use super::{Result, Store};

/// One line of a symbol's history.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HistoryEntry {
    pub commit: String,
    pub date: String,
    pub author: String,
    pub subject: String,
    pub status: Status,
    pub kind: SymbolKind,
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    pub qualname: String,
    pub sig: String,
    pub start_line: u32,
    pub end_line: u32,
    /// Lineage: on an ADDED entry, the deleted symbol it continues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<Lineage>,
    /// The chat model's one line on this change, from the change summary
    /// notes (the semantic layer's), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<ChangeSummary>,
    /// `log --first-parent`: the side-branch commits this merge's entry
    /// stands for, newest first (the merge's own change is not listed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub side_commits: Vec<String>,
    /// The kinds of this change (`api::changes`), computed when asked; an
    /// addition or a deletion has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<diffidx_core::lang::parts::ChangeType>,
}

/// A change summary as queries show it: the line and its model.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChangeSummary {
    pub text: String,
    pub model: String,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub commits: u64,
    pub symbols: u64,
    pub changes: u64,
}

/// Read queries on one connection, each statement prepared once (Kuzu's
/// parse and plan cost several milliseconds per statement).
pub struct Reader<'s> {
    conn: Connection<'s>,
    statements: RefCell<HashMap<String, PreparedStatement>>,
    /// Where the indexed history begins, once asked (it only changes when
    /// a writer loads commits, and the reader is then made anew).
    start: std::cell::OnceCell<Option<String>>,
}

impl Store {
    /// True when the store has loaded `sha`.
    pub fn has_commit(&self, sha: &str) -> Result<bool> {
        self.reader()?.has_commit(sha)
    }

    /// The history of the symbols matching `query`, following moves, newest first.
    pub fn history(&self, query: &SymbolQuery) -> Result<Vec<HistoryEntry>> {
        self.reader()?.history(query)
    }

    /// Node and relationship counts, for `status`.
    pub fn counts(&self) -> Result<Counts> {
        self.reader()?.counts()
    }

    /// The oldest commit loaded (sha, date).
    pub fn oldest_commit(&self) -> Result<Option<(String, String)>> {
        self.reader()?.oldest_commit()
    }
}

impl<'s> Reader<'s> {
    pub(super) fn new(conn: Connection<'s>) -> Reader<'s> {
        Reader {
            conn,
            statements: RefCell::new(HashMap::new()),
            start: std::cell::OnceCell::new(),
        }
    }

    /// The rows of a query about some symbols: `one` (with `$id`) per
    /// symbol when they are few, else `all` (with `$ids`) once. Kuzu finds
    /// a node by its key for `{id: $id}` but scans the table for
    /// `id IN $ids`: on App-vNext/Polly's 26,787 symbols, a symbol's changes
    /// took 1.1 ms one way and 6.2 ms the other.
    fn by_ids(
        &self,
        ids: &HashSet<String>,
        one: &str,
        all: &str,
        what: &'static str,
    ) -> Result<Vec<Vec<Value>>> {
        if ids.len() > LOOKUPS_PER_QUERY {
            return self.run(all, what, vec![("ids", string_list(ids))]);
        }
        let mut sorted: Vec<&String> = ids.iter().collect();
        sorted.sort();
        let mut rows = Vec::new();
        for id in sorted {
            rows.extend(self.run(one, what, vec![("id", string(id))])?);
        }
        Ok(rows)
    }

    pub(super) fn run(
        &self,
        text: &str,
        what: &'static str,
        params: Vec<(&str, Value)>,
    ) -> Result<Vec<Vec<Value>>> {
        self.run_map(text, what, params, Some)
    }

    /// Like [`Reader::run`], making each row a `T` as it is read (see
    /// [`execute_map`]).
    pub(super) fn run_map<T>(
        &self,
        text: &str,
        what: &'static str,
        params: Vec<(&str, Value)>,
        f: impl FnMut(Vec<Value>) -> Option<T>,
    ) -> Result<Vec<T>> {
        let mut statements = self.statements.borrow_mut();
        let stmt = match statements.entry(text.to_owned()) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(prepare(&self.conn, text)?),
        };
        execute_map(&self.conn, what, stmt, params, f)
    }

    /// True when the store has loaded `sha`.
    pub fn has_commit(&self, sha: &str) -> Result<bool> {
        let rows = self.run(
            "MATCH (c:Commit {sha: $sha}) RETURN c.sha",
            "find commit",
            vec![("sha", string(sha))],
        )?;
        Ok(!rows.is_empty())
    }

    /// Node and relationship counts.
    pub fn counts(&self) -> Result<Counts> {
        let count = |what: &'static str, q: &str| -> Result<u64> {
            let rows = self.run(q, what, Vec::new())?;
            Ok(rows
                .first()
                .and_then(|r| as_i64(&r[0]))
                .and_then(|n| u64::try_from(n).ok())
                .unwrap_or(0))
        };
        Ok(Counts {
            commits: count("count commits", "MATCH (c:Commit) RETURN count(c)")?,
            symbols: count("count symbols", "MATCH (s:Symbol) RETURN count(s)")?,
            changes: count(
                "count changes",
                "MATCH ()-[e:CHANGED_IN]->() RETURN count(e)",
            )?,
        })
    }

    /// The date before which history is not indexed: the oldest loaded
    /// commit's, when its first parent is not loaded. `None` when the
    /// indexed history reaches the root (or nothing is indexed).
    pub fn history_start(&self) -> Result<Option<String>> {
        if let Some(start) = self.start.get() {
            return Ok(start.clone());
        }
        let rows = self.run(
            "MATCH (c:Commit) RETURN c.date, c.parent ORDER BY c.time, c.seq LIMIT 1",
            "find where the history begins",
            Vec::new(),
        )?;
        let start = match rows.first() {
            Some(row) => {
                let parent = as_string(&row[1]).unwrap_or_default();
                if parent.is_empty() || self.has_commit(&parent)? {
                    None
                } else {
                    as_string(&row[0])
                }
            }
            None => None,
        };
        Ok(self.start.get_or_init(|| start).clone())
    }

    /// The oldest commit loaded (sha, date): where the indexed history begins.
    pub fn oldest_commit(&self) -> Result<Option<(String, String)>> {
        let rows = self.run(
            "MATCH (c:Commit) RETURN c.sha, c.date ORDER BY c.time, c.seq LIMIT 1",
            "find the oldest commit",
            Vec::new(),
        )?;
        Ok(rows.first().map(|r| {
            (
                as_string(&r[0]).unwrap_or_default(),
                as_string(&r[1]).unwrap_or_default(),
            )
        }))
    }

    /// Every property of one symbol, by name (for comparing backends).
    pub fn symbol(&self, id: &str) -> Result<Option<BTreeMap<String, serde_json::Value>>> {
        let rows = self.run(
            "MATCH (s:Symbol {id: $id}) RETURN s",
            "read symbol",
            vec![("id", string(id))],
        )?;
        let Some(Value::Node(node)) = rows.into_iter().next().and_then(|r| r.into_iter().next())
        else {
            return Ok(None);
        };
        Ok(Some(
            node.get_properties()
                .iter()
                // An unset property (a symbol the code graph never saw has
                // no `unresolved`) is absent, as in Neo4j.
                .filter(|(_, v)| !matches!(v, Value::Null(_)))
                .map(|(k, v)| {
                    let json = match v {
                        Value::String(s) => serde_json::Value::from(s.as_str()),
                        Value::Bool(b) => serde_json::Value::from(*b),
                        other => as_i64(other).map_or(serde_json::Value::Null, Into::into),
                    };
                    (k.clone(), json)
                })
                .collect(),
        ))
    }

    /// The history of the symbols matching `query`, following moves, newest first.
    pub fn history(&self, query: &SymbolQuery) -> Result<Vec<HistoryEntry>> {
        self.history_of(self.matching(query)?)
    }

    /// The ids of the symbols matching `query`: candidates by own name (an
    /// equality scan of the table), then the qualname and path rules. The
    /// query server finds them in its name index instead
    /// ([`crate::search::NameIndex::matching`]).
    pub fn matching(&self, query: &SymbolQuery) -> Result<HashSet<String>> {
        let mut filters = vec!["s.name = $name".to_owned()];
        let mut params = vec![("name", string(query.own_name()))];
        if let Some(sig) = &query.sig {
            filters.push("s.sig = $sig".into());
            params.push(("sig", string(sig)));
        }
        if let Some(kind) = query.kind {
            filters.push("s.kind = $kind".into());
            params.push(("kind", string(kind.as_str())));
        }
        let matching = format!(
            "MATCH (s:Symbol) WHERE {} RETURN s.id, s.qualname, s.path",
            filters.join(" AND ")
        );
        Ok(self
            .run(&matching, "match symbols", params)?
            .iter()
            .filter(|r| as_string(&r[1]).is_some_and(|q| query.matches(&q)))
            .filter(|r| as_string(&r[2]).is_some_and(|p| query.matches_path(&p)))
            .filter_map(|r| as_string(&r[0]))
            .collect())
    }

    /// The history of the symbols `ids`, following moves, newest first.
    pub fn history_of(&self, ids: HashSet<String>) -> Result<Vec<HistoryEntry>> {
        self.history_with(ids, None)
    }

    /// [`Reader::history_of`], with the moves, lineage and commits of this
    /// store state taken from `held` instead of the store when given: the
    /// same answer, without a query per identity and hop, and without
    /// reading each change's commit columns again.
    pub fn history_with(
        &self,
        mut ids: HashSet<String>,
        held: Option<&HeldHistory>,
    ) -> Result<Vec<HistoryEntry>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let continued = match held {
            Some(held) => walk_moves(&mut ids, |from| Ok(held.moves.edges_of(from)))?,
            None => walk_moves(&mut ids, |from| self.edges_of(from))?,
        };
        let held_rows = match held.and_then(|held| held.commits.as_ref()) {
            Some(commits) => self.changes_with_commits(&ids, commits)?,
            None => None,
        };
        let mut rows = match held_rows {
            Some(rows) => rows,
            None => self.changes_of(&ids, CHANGES)?,
        };
        // Newest first; ties (a signature change is a DELETED and an ADDED
        // on one line) are broken by path, line, status and id: the same
        // store gives the same answer.
        rows.sort_by_cached_key(|r| {
            let int = |v: &Value| as_i64(v).unwrap_or(0);
            (
                std::cmp::Reverse((int(&r[13]), int(&r[14]))),
                as_string(&r[6]),
                int(&r[10]),
                as_string(&r[4]),
                as_string(&r[12]),
            )
        });
        let text = |v: &Value| as_string(v).unwrap_or_default();
        // Lineage into these symbols, by (commit, new symbol).
        let mut lineage = match held {
            Some(held) => held.moves.lineage_into(&continued),
            None => self.read_lineage(&continued)?,
        };
        Ok(rows
            .into_iter()
            .filter_map(|r| {
                let status = Status::parse(&text(&r[4]))?;
                let from = if status == Status::Added {
                    lineage.remove(&(text(&r[0]), text(&r[12])))
                } else {
                    None
                };
                Some(HistoryEntry {
                    commit: text(&r[0]),
                    date: text(&r[1]),
                    author: text(&r[2]),
                    subject: text(&r[3]),
                    status,
                    kind: SymbolKind::parse(&text(&r[5]))?,
                    path: text(&r[6]),
                    old_path: as_string(&r[7]).filter(|p| !p.is_empty()),
                    qualname: text(&r[8]),
                    sig: text(&r[9]),
                    start_line: as_u32(&r[10]),
                    end_line: as_u32(&r[11]),
                    from,
                    summary: None,
                    side_commits: Vec::new(),
                    changes: Vec::new(),
                })
            })
            .collect())
    }
}

impl Reader<'_> {
    /// The move and lineage edges of the symbols `from`: (from, other end,
    /// whether it is a `CONTINUES`).
    fn edges_of(&self, from: &HashSet<String>) -> Result<Vec<(String, String, bool)>> {
        let rows = self.by_ids(
            from,
            "MATCH (a:Symbol {id: $id})-[r:MOVED_TO|:CONTINUES]-(b:Symbol) \
             RETURN DISTINCT a.id, b.id, label(r)",
            "MATCH (a:Symbol)-[r:MOVED_TO|:CONTINUES]-(b:Symbol) WHERE a.id IN $ids \
             RETURN DISTINCT a.id, b.id, label(r)",
            "follow moves",
        )?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                let continues = as_string(&r[2]).as_deref() == Some("CONTINUES");
                Some((as_string(&r[0])?, as_string(&r[1])?, continues))
            })
            .collect())
    }

    /// Lineage into the symbols `ids`, by (commit, new symbol).
    fn read_lineage(&self, ids: &HashSet<String>) -> Result<HashMap<(String, String), Lineage>> {
        let text = |v: &Value| as_string(v).unwrap_or_default();
        Ok(self
            .by_ids(
                ids,
                "MATCH (a:Symbol)-[l:CONTINUES]->(b:Symbol {id: $id}) \
                 RETURN l.sha, b.id, a.id, a.qualname, a.sig, a.path, l.similarity",
                "MATCH (a:Symbol)-[l:CONTINUES]->(b:Symbol) WHERE b.id IN $ids \
                 RETURN l.sha, b.id, a.id, a.qualname, a.sig, a.path, l.similarity",
                "read lineage",
            )?
            .iter()
            .map(|r| ((text(&r[0]), text(&r[1])), lineage_of(&r[2..])))
            .collect())
    }

    /// The rows of [`CHANGES`] for the symbols `ids`, each commit's columns
    /// taken from `commits` by the commit's place in its table (`None`: a
    /// commit `commits` does not have, so the caller reads them all).
    /// Reading a commit's strings with each of its changes was about half
    /// of a history's time in the store (App-vNext/Polly).
    fn changes_with_commits(
        &self,
        ids: &HashSet<String>,
        commits: &CommitIndex,
    ) -> Result<Option<Vec<Vec<Value>>>> {
        let own = self.changes_of(
            ids,
            "RETURN offset(id(c)), e.status, s.kind, s.path, e.old_path, s.qualname, s.sig, \
             e.start_line, e.end_line, s.id",
        )?;
        let mut rows = Vec::with_capacity(own.len());
        for mut r in own {
            let Some(commit) = as_i64(&r[0]).and_then(|at| commits.by_place.get(&at)) else {
                return Ok(None);
            };
            // In the order of CHANGES: the commit's four strings, the
            // change's and symbol's columns, then the commit's time and seq.
            let [sha, date, author, subject, time, seq] = commit.as_ref().clone();
            let mut row = vec![sha, date, author, subject];
            row.extend(r.drain(1..));
            row.push(time);
            row.push(seq);
            rows.push(row);
        }
        Ok(Some(rows))
    }

    /// The changes of the symbols `ids`, each row as `returns` says.
    fn changes_of(&self, ids: &HashSet<String>, returns: &str) -> Result<Vec<Vec<Value>>> {
        self.by_ids(
            ids,
            &format!("MATCH (s:Symbol {{id: $id}})-[e:CHANGED_IN]->(c:Commit) {returns}"),
            &format!("MATCH (s:Symbol)-[e:CHANGED_IN]->(c:Commit) WHERE s.id IN $ids {returns}"),
            "read history",
        )
    }

    /// What the query server holds for histories of this store state.
    pub fn held_history(&self) -> Result<HeldHistory> {
        Ok(HeldHistory {
            moves: self.move_index()?,
            commits: Some(self.commit_index()?),
        })
    }

    /// Every commit's columns, by its place in the table.
    fn commit_index(&self) -> Result<CommitIndex> {
        let mut commits = CommitIndex::default();
        for r in self.run(
            "MATCH (c:Commit) RETURN offset(id(c)), c.sha, c.date, c.author, c.subject, c.time, \
             c.seq",
            "read commits",
            Vec::new(),
        )? {
            let Ok([place, sha, date, author, subject, time, seq]) = <[Value; 7]>::try_from(r)
            else {
                continue;
            };
            let Some(place) = as_i64(&place) else {
                continue;
            };
            if let Some(sha) = as_string(&sha) {
                commits.shas.insert(sha);
            }
            commits
                .by_place
                .insert(place, Box::new([sha, date, author, subject, time, seq]));
        }
        Ok(commits)
    }

    /// Every move and lineage edge of the store, for a [`MoveIndex`].
    fn move_index(&self) -> Result<MoveIndex> {
        let text = |v: &Value| as_string(v).unwrap_or_default();
        let mut index = MoveIndex::default();
        for r in self.run(
            "MATCH (a:Symbol)-[:MOVED_TO]->(b:Symbol) RETURN a.id, b.id",
            "read moves",
            Vec::new(),
        )? {
            index.link(text(&r[0]), text(&r[1]), false);
        }
        for r in self.run(
            "MATCH (a:Symbol)-[l:CONTINUES]->(b:Symbol) \
             RETURN l.sha, b.id, a.id, a.qualname, a.sig, a.path, l.similarity",
            "read lineage",
            Vec::new(),
        )? {
            let (sha, to) = (text(&r[0]), text(&r[1]));
            let from = lineage_of(&r[2..]);
            index.link(from.id.clone(), to.clone(), true);
            index.into.entry(to).or_default().push((sha, from));
        }
        Ok(index)
    }
}

/// Adds to `ids` the symbols their moves and lineage lead to, both ways,
/// one hop at a time up to [`MOVE_HOPS`] (`edges_of` gives a hop's edges);
/// returns the symbols whose lineage is worth reading. In the store each
/// hop's query costs the same few tenths of a millisecond however little
/// it finds, so lineage is read only for the symbols the walk saw with a
/// `CONTINUES` edge (and for any it had no hop left to look at).
fn walk_moves(
    ids: &mut HashSet<String>,
    mut edges_of: impl FnMut(&HashSet<String>) -> Result<Vec<(String, String, bool)>>,
) -> Result<HashSet<String>> {
    let mut frontier = ids.clone();
    let mut continued: HashSet<String> = HashSet::new();
    for _ in 0..MOVE_HOPS {
        let mut next: HashSet<String> = HashSet::new();
        for (a, b, continues) in edges_of(&frontier)? {
            if continues {
                continued.insert(a);
            }
            if !ids.contains(&b) {
                next.insert(b);
            }
        }
        if next.is_empty() {
            frontier.clear();
            break;
        }
        ids.extend(next.iter().cloned());
        frontier = next;
    }
    continued.extend(frontier);
    Ok(continued)
}

/// A lineage from its row: a.id, a.qualname, a.sig, a.path, l.similarity.
fn lineage_of(r: &[Value]) -> Lineage {
    let text = |v: &Value| as_string(v).unwrap_or_default();
    let similarity = match r[4] {
        Value::Double(x) => x,
        _ => 0.0,
    };
    Lineage {
        id: text(&r[0]),
        qualname: text(&r[1]),
        sig: text(&r[2]),
        path: text(&r[3]),
        similarity: Similarity::from_ratio(similarity),
    }
}

/// Every `MOVED_TO` and `CONTINUES` edge of one store state, held by the
/// query server beside its name index. Walking a symbol's moves in the
/// store costs a query per identity and hop, 0.7-0.9 ms each however little
/// it finds (App-vNext/Polly's slowest names walk 7-9 identities); here it
/// costs nothing. Polly's 16,000 edges load in about 40 ms, once per state.
#[derive(Debug, Default)]
struct MoveIndex {
    /// Both ends of every edge: (other end, whether it is a `CONTINUES`).
    neighbors: HashMap<String, Vec<(String, bool)>>,
    /// The `CONTINUES` edges into a symbol: (commit, where it came from).
    into: HashMap<String, Vec<(String, Lineage)>>,
}

impl MoveIndex {
    fn link(&mut self, a: String, b: String, continues: bool) {
        self.neighbors
            .entry(b.clone())
            .or_default()
            .push((a.clone(), continues));
        self.neighbors.entry(a).or_default().push((b, continues));
    }

    /// [`Reader::edges_of`] from memory.
    fn edges_of(&self, from: &HashSet<String>) -> Vec<(String, String, bool)> {
        let mut edges = Vec::new();
        for a in from {
            for (b, continues) in self.neighbors.get(a).into_iter().flatten() {
                edges.push((a.clone(), b.clone(), *continues));
            }
        }
        edges
    }

    /// [`Reader::read_lineage`] over these edges.
    fn lineage_into(&self, ids: &HashSet<String>) -> HashMap<(String, String), Lineage> {
        let mut lineage = HashMap::new();
        for id in ids {
            for (sha, from) in self.into.get(id).into_iter().flatten() {
                lineage.insert((sha.clone(), id.clone()), from.clone());
            }
        }
        lineage
    }
}

/// What the query server holds of one store state for `log`: its moves and
/// lineage, and every commit's columns by its place in the table
/// (App-vNext/Polly: 2,942 commits, read in about 10 ms), so a history reads
/// from the store only its symbols' changes. The places hold while the
/// store stays open ([`HeldHistory::forget_commits`]).
#[derive(Debug, Default)]
pub struct HeldHistory {
    moves: MoveIndex,
    /// `None` once the store they were read from has closed.
    commits: Option<CommitIndex>,
}

impl HeldHistory {
    /// [`Reader::has_commit`] from memory (`None`: not held).
    pub fn has_commit(&self, sha: &str) -> Option<bool> {
        self.commits.as_ref().map(|c| c.shas.contains(sha))
    }

    /// Lets the commits go, for another opening of the store: their places
    /// in the table hold only while it stays open (a rebuild or a compaction
    /// may renumber them under the same notes), where the moves, kept by
    /// symbol id, hold for the whole store state.
    pub fn forget_commits(&mut self) {
        self.commits = None;
    }

    /// Reads the commits of the open store if they were let go.
    pub fn hold_commits(&mut self, reader: &Reader<'_>) -> Result<()> {
        if self.commits.is_none() {
            self.commits = Some(reader.commit_index()?);
        }
        Ok(())
    }
}

/// The columns of every commit as the store gives them (sha, date, author,
/// subject, time, seq), by the commit's place in its table, and its shas.
#[derive(Debug, Default)]
struct CommitIndex {
    by_place: HashMap<i64, Box<[Value; 6]>>,
    shas: HashSet<String>,
}

/// The columns of a history row.
const CHANGES: &str = "RETURN c.sha, c.date, c.author, c.subject, e.status, s.kind, s.path, \
     e.old_path, s.qualname, s.sig, e.start_line, e.end_line, s.id, c.time, c.seq";

/// How far a history follows moves and lineage from the symbols asked for.
const MOVE_HOPS: usize = 16;

/// Symbols looked up one by one by key before a scan of the table costs
/// less (a key lookup with its changes about 1 ms, a scan about 6).
const LOOKUPS_PER_QUERY: usize = 6;

/// What the store knows of a name whose history is empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NamesNear {
    /// Some stored symbol matches the query: it exists, unchanged in the
    /// indexed commits.
    pub known: bool,
    /// Other names close to it, best first (for "did you mean").
    pub suggestions: Vec<String>,
}

impl Reader<'_> {
    /// Whether `query` names a stored symbol, and stored names close to it,
    /// best first: the same own name under another qualifier, the same name
    /// in another case, then near spellings.
    pub fn names_near(&self, query: &SymbolQuery, limit: usize) -> Result<NamesNear> {
        let wanted = query.own_name().to_lowercase();
        let rows = self.run(
            "MATCH (s:Symbol) RETURN s.name, s.qualname, s.path, s.kind, s.sig",
            "list symbol names",
            Vec::new(),
        )?;
        let mut near = NamesNear::default();
        let mut scored: Vec<(u32, String)> = Vec::new();
        for row in rows {
            let text = |i: usize| as_string(&row[i]).unwrap_or_default();
            let (name, qualname) = (text(0), text(1));
            if query.matches(&qualname)
                && query.matches_path(&text(2))
                && query.kind.is_none_or(|k| k.as_str() == text(3))
                && query.sig.as_ref().is_none_or(|sig| *sig == text(4))
            {
                near.known = true;
                continue;
            }
            let score = strsim::jaro_winkler(&wanted, &name.to_lowercase());
            if score >= 0.85 {
                let qualname = diffidx_core::qualname::split_twin(&qualname).0.to_owned();
                scored.push(((score * 1000.0) as u32, qualname));
            }
        }
        scored.sort_by(|a, b| {
            b.0.cmp(&a.0)
                .then(a.1.len().cmp(&b.1.len()))
                .then(a.1.cmp(&b.1))
        });
        let mut seen = HashSet::new();
        near.suggestions = scored
            .into_iter()
            .filter(|(_, q)| seen.insert(q.clone()))
            .map(|(_, q)| q)
            .take(limit)
            .collect();
        Ok(near)
    }
}

/// Everything `fsck` compares with the notes, read in two scans.
#[derive(Debug, Default)]
pub struct StoreContents {
    /// Per commit, its changes: (symbol id, status, start line, end line).
    pub changes: HashMap<String, Vec<(String, String, u32, u32)>>,
    /// Commits with no change (a note without deltas).
    pub commits: HashSet<String>,
    /// Every symbol: id, path, kind, qualname, sig, content hash.
    pub symbols: Vec<[String; 6]>,
}

impl Store {
    /// Reads what the store holds, for comparing with the notes.
    pub fn contents(&self) -> Result<StoreContents> {
        let conn = self.conn()?;
        let mut contents = StoreContents {
            commits: self.commits()?,
            ..StoreContents::default()
        };
        let text = |v: &Value| as_string(v).unwrap_or_default();
        let rows = super::engine::query(
            &conn,
            "read every change",
            "MATCH (s:Symbol)-[e:CHANGED_IN]->(c:Commit) \
             RETURN c.sha, s.id, e.status, e.start_line, e.end_line",
        )?;
        for row in rows {
            contents.changes.entry(text(&row[0])).or_default().push((
                text(&row[1]),
                text(&row[2]),
                as_u32(&row[3]),
                as_u32(&row[4]),
            ));
        }
        let rows = super::engine::query(
            &conn,
            "read every symbol",
            "MATCH (s:Symbol) RETURN s.id, s.path, s.kind, s.qualname, s.sig, s.content_hash",
        )?;
        contents.symbols = rows
            .iter()
            .map(|r| std::array::from_fn(|i| text(&r[i])))
            .collect();
        Ok(contents)
    }
}
