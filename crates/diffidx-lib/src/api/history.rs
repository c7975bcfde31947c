//! Two ways into `log` that do not start from a name: a position in a file
//! (`log FILE:LINE`: an editor, a review comment or a stack trace knows
//! where, not what), and the first-parent view of a history (`log
//! --first-parent`: what each commit of the main line brought, a merge
//! answering for its side branch, as `git log --first-parent` shows it).

use std::collections::{HashMap, HashSet};

use diffidx_core::git::Repo;
use diffidx_core::symbol::display_name;
use diffidx_core::{Extractor, Language, ObjectId, Status, SymbolKind, SymbolQuery};

use super::ApiError;
use crate::store::HistoryEntry;

/// `FILE:LINE`: a path with a language's extension, a colon, a line number
/// (from 1). A symbol name never ends so.
pub fn parse_position(text: &str) -> Option<(&str, u32)> {
    let (path, line) = text.rsplit_once(':')?;
    if path.is_empty() || path.ends_with(':') || line.is_empty() {
        return None;
    }
    if !line.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Language::from_path(path)?;
    line.parse().ok().filter(|&l| l > 0).map(|l| (path, l))
}

/// What `log` is asked about: the symbol `name` names, or the one at
/// `FILE:LINE` as of `tip` (which `kind` and `path` cannot narrow further).
pub fn log_query(
    repo: &Repo,
    name: &str,
    kind: Option<&str>,
    path: Option<&str>,
    tip: Option<ObjectId>,
    cwd: Option<&std::path::Path>,
) -> Result<(SymbolQuery, Option<Located>), ApiError> {
    let Some((file, line)) = parse_position(name) else {
        return Ok((super::params::symbol_query(name, kind, path)?, None));
    };
    if kind.is_some() || path.is_some() {
        return Err(ApiError::usage(format!(
            "{name} names one symbol already; --kind and --path do not apply to it"
        )));
    }
    let tip = tip.ok_or_else(|| {
        ApiError::not_found(format!("{name}: the repository has no commit to look in"))
    })?;
    let located = symbol_at(repo, tip, file, line, cwd)?;
    let query = super::params::symbol_query(
        &located.name,
        Some(located.kind.as_str()),
        Some(&located.path),
    )?;
    Ok((query, Some(located)))
}

/// The innermost symbol at a line of a file, as of a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// The name `log` is asked with: qualified, with the signature.
    pub name: String,
    pub kind: SymbolKind,
    /// The file, from the repository's root.
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
}

/// The innermost symbol of `path` (from the root, else from `cwd` inside
/// the work tree) holding `line` at `commit`: a method rather than its
/// class, the method that holds an anonymous class or a lambda.
pub fn symbol_at(
    repo: &Repo,
    commit: ObjectId,
    path: &str,
    line: u32,
    cwd: Option<&std::path::Path>,
) -> Result<Located, ApiError> {
    let from_cwd = cwd.and_then(|cwd| {
        let work_dir = repo.work_dir()?.canonicalize().ok()?;
        let cwd = cwd.canonicalize().ok()?;
        let prefix = cwd.strip_prefix(&work_dir).ok()?;
        let joined = prefix.join(path);
        Some(joined.to_str()?.replace('\\', "/"))
    });
    let mut found = None;
    for candidate in std::iter::once(path.to_owned()).chain(from_cwd) {
        if let Some(blob) = repo.blob_at(commit, &candidate)? {
            found = Some((candidate, blob));
            break;
        }
    }
    let short = &commit.to_string()[..12];
    let (path, blob) =
        found.ok_or_else(|| ApiError::not_found(format!("{path} is not in {short}")))?;
    let language = Language::from_path(&path)
        .ok_or_else(|| ApiError::usage(format!("{path} is in no language diffidx reads")))?;
    let bytes = repo.blob(blob)?;
    let source = String::from_utf8_lossy(&bytes);
    let mut extractor = Extractor::new().map_err(|e| ApiError::failed(&e))?;
    let symbols = extractor.extract(language, &source).symbols;
    let symbol = symbols
        .iter()
        .filter(|s| s.start_line <= line && line <= s.end_line)
        .min_by_key(|s| (s.end_line - s.start_line, std::cmp::Reverse(s.start_line)))
        .ok_or_else(|| {
            ApiError::not_found(format!("no symbol holds line {line} of {path} in {short}"))
        })?;
    Ok(Located {
        name: display_name(&symbol.qualname, &symbol.sig),
        kind: symbol.kind,
        path,
        start_line: symbol.start_line,
        end_line: symbol.end_line,
    })
}

/// How `log` walks the history of its revision, as `git log` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HistoryWalk {
    /// git's default: a merge that kept one side's version of the
    /// symbol's files hides what the other side did to them.
    #[default]
    Simplified,
    /// Every change in the history (`--full-history`).
    Full,
    /// The main line, a merge answering for its side branch
    /// (`--first-parent`).
    FirstParent,
}

impl HistoryWalk {
    /// The walk `--first-parent` and `--full-history` ask for (the first
    /// wins; callers reject both).
    pub fn from_flags(first_parent: bool, full_history: bool) -> HistoryWalk {
        match (first_parent, full_history) {
            (true, _) => HistoryWalk::FirstParent,
            (false, true) => HistoryWalk::Full,
            (false, false) => HistoryWalk::Simplified,
        }
    }
}

/// `entries` (newest first, all in `tip`'s history) as `walk` sees them,
/// and how many the simplified walk hid.
pub fn walk_history(
    repo: &Repo,
    tip: ObjectId,
    entries: Vec<HistoryEntry>,
    walk: HistoryWalk,
) -> Result<(Vec<HistoryEntry>, usize), ApiError> {
    match walk {
        HistoryWalk::Full => Ok((entries, 0)),
        HistoryWalk::FirstParent => Ok((first_parent_history(repo, tip, entries)?, 0)),
        HistoryWalk::Simplified => simplified_history(repo, tip, entries),
    }
}

/// `entries` without the changes `git log TIP -- FILES` would not list,
/// FILES being every file the entries name: a side branch's change its
/// merge did not keep (the merge's files are those of the other parent) is
/// no part of how the symbol came to be at `tip`.
fn simplified_history(
    repo: &Repo,
    tip: ObjectId,
    entries: Vec<HistoryEntry>,
) -> Result<(Vec<HistoryEntry>, usize), ApiError> {
    let mut paths: Vec<&str> = entries
        .iter()
        .flat_map(|e| std::iter::once(e.path.as_str()).chain(e.old_path.as_deref()))
        .collect();
    paths.sort_unstable();
    paths.dedup();
    let commits: HashSet<ObjectId> = entries
        .iter()
        .filter_map(|e| ObjectId::from_hex(e.commit.as_bytes()).ok())
        .collect();
    let kept = repo.simplified_history_among(tip, &paths, &commits)?;
    let before = entries.len();
    let entries: Vec<HistoryEntry> = entries
        .into_iter()
        .filter(|e| {
            ObjectId::from_hex(e.commit.as_bytes())
                .ok()
                .is_none_or(|id| kept.contains(&id))
        })
        .collect();
    let hidden = before - entries.len();
    Ok((entries, hidden))
}

/// `entries` (newest first, all in `tip`'s history) as the first-parent
/// chain of `tip` sees them: a change on a side branch is credited to the
/// merge that brought it in. A merge's entries for one symbol (by kind and
/// name, wherever the branch moved it) become one: ADDED if the branch
/// added it (and kept it), DELETED if it deleted it, MOVED if it ended in
/// another file, else the newest change's status; one added and deleted on
/// the branch is no change of the main line. `side_commits` lists what the
/// entry stands for.
pub fn first_parent_history(
    repo: &Repo,
    tip: ObjectId,
    entries: Vec<HistoryEntry>,
) -> Result<Vec<HistoryEntry>, ApiError> {
    let view = repo.first_parent_view(tip)?;
    let position: HashMap<ObjectId, usize> = view
        .chain
        .iter()
        .enumerate()
        .map(|(i, &c)| (c, i))
        .collect();
    // (chain position, symbol) → its entries, newest first.
    let mut groups: Vec<((usize, String), Vec<HistoryEntry>)> = Vec::new();
    let mut slot: HashMap<(usize, String), usize> = HashMap::new();
    for entry in entries {
        let Some(brought_by) = ObjectId::from_hex(entry.commit.as_bytes())
            .ok()
            .and_then(|id| view.brought_by.get(&id))
        else {
            continue; // not in the history of tip
        };
        // The path is left out: a branch that moved a symbol and moved it
        // back is one change of the main line.
        let key = (
            position[brought_by],
            format!("{}\u{0}{}\u{0}{}", entry.kind, entry.qualname, entry.sig),
        );
        let at = *slot.entry(key.clone()).or_insert_with(|| {
            groups.push((key, Vec::new()));
            groups.len() - 1
        });
        groups[at].1.push(entry);
    }
    groups.sort_by_key(|(key, _)| key.0);
    let mut out = Vec::with_capacity(groups.len());
    for ((at, _), group) in groups {
        let merge = view.chain[at];
        let merge_hex = merge.to_string();
        if group.iter().all(|e| e.commit == merge_hex) {
            out.extend(group);
            continue;
        }
        let oldest = group.last().expect("a group has an entry");
        let newest = &group[0];
        let status = match (oldest.status, newest.status) {
            (Status::Added, Status::Deleted) => continue,
            (Status::Added, _) => Status::Added,
            (_, Status::Deleted) => Status::Deleted,
            (_, newest) => newest,
        };
        let from = if status == Status::Added {
            oldest.from.clone()
        } else {
            None
        };
        // Moved across the branch: from where it was before the first move.
        let old_path = match status {
            Status::Moved => oldest.old_path.clone().or_else(|| newest.old_path.clone()),
            _ => newest.old_path.clone(),
        };
        let (status, old_path) = match (status, old_path) {
            (Status::Moved, Some(old)) if old == newest.path => (Status::Modified, None),
            other => other,
        };
        let side_commits = group
            .iter()
            .filter(|e| e.commit != merge_hex)
            .map(|e| e.commit.clone())
            .collect();
        let info = repo.commit(merge)?;
        out.push(HistoryEntry {
            commit: merge_hex,
            date: info.date,
            author: info.author,
            subject: info.subject,
            status,
            old_path,
            from,
            side_commits,
            summary: None,
            ..newest.clone()
        });
    }
    Ok(out)
}
