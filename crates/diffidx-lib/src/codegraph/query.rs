//! Questions the code graph answers, from the store: what is around a
//! symbol (`graph`), and what a change puts at risk (`impact`).

use std::collections::{BTreeMap, BTreeSet, HashSet};

use diffidx_core::codegraph::{sig_parameters, Resolution};
use diffidx_core::qualname::own_name;
use diffidx_core::{Status, SymbolDelta, SymbolQuery};
use serde::{Deserialize, Serialize};

use crate::store::codegraph::{Direction, EdgeRow, ImportRow, TreeSymbolRow, UnresolvedCallCount};
use crate::store::{Reader, StoreError};

/// What `graph NAME` asks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphQuery {
    pub symbol: SymbolQuery,
    pub callers: bool,
    pub callees: bool,
    pub imports: bool,
    pub inherits: bool,
    pub depth: u32,
    /// The least certain resolution followed.
    pub min_resolution: Resolution,
}

/// A symbol reached from the ones asked about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reached {
    #[serde(flatten)]
    pub symbol: TreeSymbolRow,
    /// Hops from the nearest symbol asked about (1 = direct).
    pub distance: u32,
    /// The id of the symbol it was reached from.
    pub via: String,
    /// `CALLS`, `INHERITS` or `IMPLEMENTS`.
    pub edge: String,
    pub resolution: String,
    pub candidates: u32,
    /// Where the reference is written: file and first line.
    pub file: String,
    pub line: u32,
    /// For a caller reached through dynamic dispatch: the declaration its
    /// call names (an interface's or a base type's member), which the
    /// symbol it was reached from overrides or implements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub through: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphAnswer {
    /// The commit the graph describes (`None`: no graph yet).
    pub commit: Option<String>,
    pub symbols: Vec<TreeSymbolRow>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub callers: Vec<Reached>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub callees: Vec<Reached>,
    /// What the symbols inherit or implement, and what inherits or
    /// implements them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bases: Vec<Reached>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub derived: Vec<Reached>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub imports: Vec<ImportRow>,
    /// With `callers`: calls anywhere in the tree, named as the symbols
    /// are called, that matched no declaration. When there are any, the
    /// callers are a lower bound.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unresolved_calls: Vec<UnresolvedCallCount>,
    /// With `callers`: how many more symbols call them directly by edges
    /// less certain than `min_resolution` (left out of `callers`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more_at_lower_levels: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The symbols that reach `ids` directly over `kinds` only by edges less
/// certain than `min`, besides those in `found`.
fn more_at_lower_levels(
    reader: &Reader<'_>,
    ids: &[String],
    kinds: &[&'static str],
    min: Resolution,
    found: &[Reached],
) -> Result<usize, StoreError> {
    let lower: Vec<String> = Resolution::ALL
        .into_iter()
        .filter(|r| *r > min)
        .map(|r| r.as_str().to_owned())
        .collect();
    if lower.is_empty() || ids.is_empty() {
        return Ok(0);
    }
    let mut seen: HashSet<&str> = found.iter().map(|r| r.symbol.id.as_str()).collect();
    seen.extend(ids.iter().map(String::as_str));
    let mut more: HashSet<String> = HashSet::new();
    for kind in kinds {
        for row in reader.edges(ids, kind, Direction::In, &lower)? {
            if !seen.contains(row.other.id.as_str()) {
                more.insert(row.other.id);
            }
        }
    }
    Ok(more.len())
}

/// The names the symbols are called by, each once.
fn call_names<'a>(symbols: impl Iterator<Item = (&'a str, &'a str, &'a str)>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (qualname, kind, path) in symbols {
        let Some(kind) = diffidx_core::SymbolKind::parse(kind) else {
            continue;
        };
        for name in diffidx_core::qualname::called_as(qualname, kind, path) {
            if !names.iter().any(|n| n == name) {
                names.push(name.to_owned());
            }
        }
    }
    names.sort();
    names
}

/// Member kinds a call through a base type or an interface dispatches:
/// an override of one of these runs in place of what the call names.
const DISPATCHED: [&str; 5] = ["method", "property", "indexer", "operator", "event"];

/// Methods that make an object rather than dispatch on one: `A()` runs
/// `A.__init__`, never a subclass's.
const CONSTRUCTOR_NAMES: [&str; 3] = ["__init__", "__new__", "constructor"];

/// How many base types up an override is looked for.
const MAX_BASE_DEPTH: usize = 8;

/// For each member among `ids`, the declarations it overrides or
/// implements: the members of its type's bases (transitively, by
/// `INHERITS`/`IMPLEMENTS` edges of `levels`) with its own name, kind and
/// number of parameters, as `(member id, declaration)`. A call that names
/// one of those may run the member (dynamic dispatch): `s.area()` on a
/// `Shape` runs `Circle.area` when `s` is a `Circle`.
fn overridden(
    reader: &Reader<'_>,
    ids: &[String],
    levels: &[String],
) -> Result<Vec<(String, TreeSymbolRow)>, StoreError> {
    let members: BTreeMap<String, TreeSymbolRow> = reader
        .tree_symbols(ids)?
        .into_iter()
        .filter(|s| {
            DISPATCHED.contains(&s.kind.as_str())
                && !CONSTRUCTOR_NAMES.contains(&own_name(&s.qualname))
        })
        .map(|s| (s.id.clone(), s))
        .collect();
    if members.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<String> = members.keys().cloned().collect();
    let owners = reader.containers_of(&ids)?;
    // Every base of each container, transitively (cycles stop).
    let mut bases: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut reached_from: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (_, container) in &owners {
        reached_from
            .entry(container.clone())
            .or_default()
            .insert(container.clone());
    }
    let mut frontier: Vec<String> = reached_from.keys().cloned().collect();
    for _ in 0..MAX_BASE_DEPTH {
        if frontier.is_empty() {
            break;
        }
        let mut next = BTreeSet::new();
        for kind in ["INHERITS", "IMPLEMENTS"] {
            for row in reader.edges(&frontier, kind, Direction::Out, levels)? {
                let origins = reached_from.get(&row.at).cloned().unwrap_or_default();
                for origin in origins {
                    if origin != row.other.id
                        && bases
                            .entry(origin.clone())
                            .or_default()
                            .insert(row.other.id.clone())
                    {
                        reached_from
                            .entry(row.other.id.clone())
                            .or_default()
                            .insert(origin);
                        next.insert(row.other.id.clone());
                    }
                }
            }
        }
        frontier = next.into_iter().collect();
    }
    let all_bases: Vec<String> = bases
        .values()
        .flatten()
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let names: Vec<String> = members
        .values()
        .map(|m| own_name(&m.qualname).to_owned())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut declared: BTreeMap<String, Vec<TreeSymbolRow>> = BTreeMap::new();
    for (base, row) in reader.members_named(&all_bases, &names)? {
        declared.entry(base).or_default().push(row);
    }
    let mut out = Vec::new();
    for (member, container) in &owners {
        let Some(symbol) = members.get(member) else {
            continue;
        };
        let name = own_name(&symbol.qualname);
        for base in bases.get(container).into_iter().flatten() {
            for d in declared.get(base).into_iter().flatten() {
                if d.id != *member
                    && own_name(&d.qualname) == name
                    && d.kind == symbol.kind
                    && sig_parameters(&d.sig).len() == sig_parameters(&symbol.sig).len()
                {
                    out.push((member.clone(), d.clone()));
                }
            }
        }
    }
    out.sort_by(|a, b| (&a.0, &a.1.id).cmp(&(&b.0, &b.1.id)));
    out.dedup_by(|a, b| a.0 == b.0 && a.1.id == b.1.id);
    Ok(out)
}

fn levels(min: Resolution) -> Vec<String> {
    Resolution::ALL
        .into_iter()
        .filter(|r| *r <= min)
        .map(|r| r.as_str().to_owned())
        .collect()
}

/// Breadth-first from `roots` over `kinds` edges, up to `depth` hops; each
/// symbol once, at its shortest distance (and most certain edge there).
fn walk(
    reader: &Reader<'_>,
    roots: &[String],
    kinds: &[&'static str],
    direction: Direction,
    depth: u32,
    levels: &[String],
) -> Result<Vec<Reached>, StoreError> {
    let mut seen: HashSet<String> = roots.iter().cloned().collect();
    let mut frontier: Vec<String> = roots.to_vec();
    let mut out = Vec::new();
    for distance in 1..=depth {
        if frontier.is_empty() {
            break;
        }
        let mut found: BTreeMap<String, Reached> = BTreeMap::new();
        let mut rows: Vec<(EdgeRow, Option<String>)> = Vec::new();
        for kind in kinds {
            let direct = reader.edges(&frontier, kind, direction, levels)?;
            rows.extend(direct.into_iter().map(|r| (r, None)));
        }
        // A call that names what a member overrides or implements may run
        // the member: its callers are the member's callers too.
        if direction == Direction::In && kinds.contains(&"CALLS") {
            let pairs = overridden(reader, &frontier, levels)?;
            let declarations: Vec<String> = pairs
                .iter()
                .map(|(_, d)| d.id.clone())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            for row in reader.edges(&declarations, "CALLS", direction, levels)? {
                for (member, declaration) in pairs.iter().filter(|(_, d)| d.id == row.at) {
                    let mut row = row.clone();
                    row.at = member.clone();
                    rows.push((row, Some(declaration.qualname.clone())));
                }
            }
        }
        // What a function nested in a function reaches, the function that
        // holds it reaches too (a decorator factory, a closure): callers
        // go on from the holder.
        if direction == Direction::In {
            let mut nested: Vec<String> = rows.iter().map(|(r, _)| r.other.id.clone()).collect();
            for _ in 0..4 {
                let holders = reader.nested_in(&nested)?;
                if holders.is_empty() {
                    break;
                }
                nested = holders.iter().map(|r| r.other.id.clone()).collect();
                rows.extend(holders.into_iter().map(|r| (r, None)));
            }
        }
        for (row, through) in rows {
            if seen.contains(&row.other.id) {
                continue;
            }
            let reached = Reached {
                distance,
                via: row.at,
                edge: row.kind.to_owned(),
                resolution: row.resolution,
                candidates: row.candidates,
                file: row.file,
                line: row.line,
                symbol: row.other,
                through,
            };
            let better = |old: &Reached| {
                // An edge to an override (stored where the language
                // dispatches: Java, C#, TypeScript) and the call of what
                // it overrides at the same place are one call: say what
                // the call names.
                if (&old.file, old.line, &old.resolution)
                    == (&reached.file, reached.line, &reached.resolution)
                {
                    return reached.through.is_some() && old.through.is_none();
                }
                rank(&reached) < rank(old)
            };
            match found.get(&reached.symbol.id) {
                Some(old) if !better(old) => {}
                _ => {
                    found.insert(reached.symbol.id.clone(), reached);
                }
            }
        }
        frontier = found.keys().cloned().collect();
        seen.extend(frontier.iter().cloned());
        out.extend(found.into_values());
    }
    out.sort_by(|a, b| rank(a).cmp(&rank(b)));
    Ok(out)
}

/// Nearest, then most certain, then direct before through dispatch (a
/// call that names the symbol before one that may run it), then by place.
fn rank(r: &Reached) -> (u32, u8, bool, &str, u32, &str) {
    let certainty = Resolution::parse(&r.resolution).map_or(9, |x| x as u8);
    (
        r.distance,
        certainty,
        r.through.is_some(),
        r.symbol.path.as_str(),
        r.symbol.start_line,
        r.symbol.qualname.as_str(),
    )
}

/// The graph around the symbols matching the query.
pub fn graph(reader: &Reader<'_>, q: &GraphQuery) -> Result<GraphAnswer, StoreError> {
    let commit = reader.graph_commit()?;
    let mut symbols: Vec<TreeSymbolRow> = reader
        .tree_symbols_named(q.symbol.own_name())?
        .into_iter()
        .filter(|s| q.symbol.matches(&s.qualname) && q.symbol.matches_path(&s.path))
        .filter(|s| q.symbol.sig.as_ref().is_none_or(|sig| *sig == s.sig))
        .filter(|s| q.symbol.kind.is_none_or(|k| k.as_str() == s.kind))
        .collect();
    symbols.sort_by(|a, b| (&a.path, a.start_line).cmp(&(&b.path, b.start_line)));
    let ids: Vec<String> = symbols.iter().map(|s| s.id.clone()).collect();
    let levels = levels(q.min_resolution);
    let depth = q.depth.max(1);
    let mut answer = GraphAnswer {
        commit,
        ..GraphAnswer::default()
    };
    if q.callers {
        answer.callers = walk(reader, &ids, &["CALLS"], Direction::In, depth, &levels)?;
        let names = call_names(
            symbols
                .iter()
                .map(|s| (s.qualname.as_str(), s.kind.as_str(), s.path.as_str())),
        );
        answer.unresolved_calls = reader.unresolved_calls(&names)?;
        answer.more_at_lower_levels =
            more_at_lower_levels(reader, &ids, &["CALLS"], q.min_resolution, &answer.callers)?;
    }
    if q.callees {
        answer.callees = walk(reader, &ids, &["CALLS"], Direction::Out, depth, &levels)?;
    }
    if q.inherits {
        let kinds = ["INHERITS", "IMPLEMENTS"];
        answer.bases = walk(reader, &ids, &kinds, Direction::Out, depth, &levels)?;
        answer.derived = walk(reader, &ids, &kinds, Direction::In, depth, &levels)?;
    }
    if q.imports {
        let mut paths: Vec<String> = symbols.iter().map(|s| s.path.clone()).collect();
        paths.sort();
        paths.dedup();
        answer.imports = reader.imports_of(&paths)?;
    }
    answer.symbols = symbols;
    Ok(answer)
}

/// A symbol a change touched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Touched {
    pub status: Status,
    pub kind: String,
    pub qualname: String,
    pub sig: String,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    /// In the graph's tree (a deleted symbol is not).
    pub in_graph: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImpactAnswer {
    /// The commit the graph describes.
    pub commit: Option<String>,
    pub touched: Vec<Touched>,
    /// Everything within the depth that calls, inherits or implements a
    /// touched symbol, nearest first.
    pub reached: Vec<Reached>,
    /// How many files `reached` spans.
    pub files: usize,
    /// Calls anywhere in the tree, named as the touched symbols are
    /// called, that matched no declaration: when there are any, `reached`
    /// is a lower bound (and a deleted symbol may still be called).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unresolved_calls: Vec<UnresolvedCallCount>,
    /// How many more symbols call, inherit or implement a touched one
    /// directly by edges less certain than `min_resolution`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more_at_lower_levels: usize,
}

/// The blast radius of a change: its deltas, then everything that calls,
/// inherits or implements what it touched, up to `depth` hops.
pub fn impact(
    reader: &Reader<'_>,
    deltas: &[SymbolDelta],
    depth: u32,
    min_resolution: Resolution,
) -> Result<ImpactAnswer, StoreError> {
    let commit = reader.graph_commit()?;
    let ids: Vec<String> = deltas.iter().map(|d| d.id.clone()).collect();
    let present: HashSet<String> = reader
        .tree_symbols(&ids)?
        .into_iter()
        .map(|s| s.id)
        .collect();
    let touched: Vec<Touched> = deltas
        .iter()
        .zip(&ids)
        .map(|(d, id)| Touched {
            status: d.status,
            kind: d.kind.as_str().to_owned(),
            qualname: d.qualname.clone(),
            sig: d.sig.clone(),
            path: d.path.clone(),
            start_line: d.start_line,
            end_line: d.end_line,
            in_graph: present.contains(id),
        })
        .collect();
    let roots: Vec<String> = ids.into_iter().filter(|id| present.contains(id)).collect();
    let kinds = ["CALLS", "INHERITS", "IMPLEMENTS"];
    let reached = walk(
        reader,
        &roots,
        &kinds,
        Direction::In,
        depth.max(1),
        &levels(min_resolution),
    )?;
    let files: HashSet<&str> = reached.iter().map(|r| r.symbol.path.as_str()).collect();
    let names = call_names(
        deltas
            .iter()
            .map(|d| (d.qualname.as_str(), d.kind.as_str(), d.path.as_str())),
    );
    Ok(ImpactAnswer {
        commit,
        files: files.len(),
        more_at_lower_levels: more_at_lower_levels(
            reader,
            &roots,
            &kinds,
            min_resolution,
            &reached,
        )?,
        touched,
        reached,
        unresolved_calls: reader.unresolved_calls(&names)?,
    })
}
