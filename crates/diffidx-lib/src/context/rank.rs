//! How `context` ranks change records. A score in (0, 1] is the product of
//! three parts, each documented in docs/context.md:
//!
//! - the change: what can break a caller ranks first — a deletion (1.0),
//!   either half of a signature change (a DELETED and an ADDED of one
//!   qualname in one commit, 0.9) — then edits (0.6; 0.3 for a container,
//!   which is MODIFIED whenever a member is), moves that edit (0.5),
//!   additions (0.4), plain moves (0.25);
//! - recency: from 0.5 at the window's start to 1.0 at its end;
//! - centrality: from 0.7 with no callers to 1.0 for the most-called
//!   symbol of the answer (log scale);
//! - with `--query` only, relevance: from 0.5 for a symbol the query does
//!   not match to 1.0 for the window's best match.

use std::collections::HashMap;

use super::{ContextRecord, Service};
use crate::store::WindowAnswer;

/// (commit, path, qualname, kind).
type Key<'a> = (&'a str, &'a str, &'a str, &'a str);

/// Kinds whose text contains their members'.
const CONTAINERS: &[&str] = &[
    "namespace",
    "class",
    "struct",
    "interface",
    "record",
    "enum",
    "trait",
    "module",
    "union",
];

/// The change part of the score.
fn change_weight(status: &str, kind: &str, modified: bool, signature_change: bool) -> f64 {
    match status {
        "DELETED" if signature_change => 0.9,
        "DELETED" => 1.0,
        "ADDED" if signature_change => 0.9,
        "ADDED" => 0.4,
        "MODIFIED" if CONTAINERS.contains(&kind) => 0.3,
        "MODIFIED" => 0.6,
        "MOVED" if modified => 0.5,
        "MOVED" => 0.25,
        _ => 0.1,
    }
}

/// The records of one service's window, scored (unsorted).
pub fn records(
    service_name: &str,
    repo: &str,
    service: &Service,
    (since, until): (i64, i64),
    window: WindowAnswer,
    relevance: Option<&HashMap<String, f64>>,
) -> Vec<ContextRecord> {
    let changes: Vec<_> = window
        .changes
        .into_iter()
        .filter(|c| service.covers(&c.path, c.old_path.as_deref()) && service.speaks(&c.language))
        .collect();
    // One file's symbol of one name and kind DELETED and ADDED in one commit
    // with another signature: a signature change (a key includes the sig).
    let mut deleted: HashMap<Key<'_>, Vec<&str>> = HashMap::new();
    let mut added: HashMap<Key<'_>, Vec<&str>> = HashMap::new();
    for c in &changes {
        let key = (
            c.commit.as_str(),
            c.path.as_str(),
            c.qualname.as_str(),
            c.kind.as_str(),
        );
        match c.status.as_str() {
            "DELETED" => deleted.entry(key).or_default().push(&c.sig),
            "ADDED" => added.entry(key).or_default().push(&c.sig),
            _ => {}
        }
    }
    let other_sig = |side: &HashMap<Key<'_>, Vec<&str>>, key: &Key<'_>, sig: &str| {
        side.get(key)
            .is_some_and(|sigs| sigs.iter().any(|s| *s != sig))
    };
    let most_called = changes
        .iter()
        .filter_map(|c| window.callers.get(&c.id).map(|k| k.count))
        .max()
        .unwrap_or(0);
    let span = (until - since).max(1) as f64;
    // Relative to the window's best match, so that the best matching
    // change always counts whole.
    let best_match = relevance.map(|r| {
        changes
            .iter()
            .filter_map(|c| r.get(&c.id))
            .fold(0.0f64, |a, &b| a.max(b))
    });
    changes
        .iter()
        .map(|c| {
            let key = (
                c.commit.as_str(),
                c.path.as_str(),
                c.qualname.as_str(),
                c.kind.as_str(),
            );
            let signature_change = match c.status.as_str() {
                "DELETED" => other_sig(&added, &key, &c.sig),
                "ADDED" => other_sig(&deleted, &key, &c.sig),
                _ => false,
            };
            let callers = window.callers.get(&c.id);
            let recency = 0.5 + 0.5 * ((c.time - since) as f64 / span).clamp(0.0, 1.0);
            let centrality = match (callers, most_called) {
                (Some(k), m) if m > 0 => (1.0 + k.count as f64).ln() / (1.0 + m as f64).ln(),
                _ => 0.0,
            };
            let matched = match (relevance, best_match) {
                (Some(r), Some(best)) if best > 0.0 => Some(r.get(&c.id).map_or(0.0, |s| s / best)),
                (Some(_), _) => Some(0.0),
                (None, _) => None,
            };
            let score = change_weight(&c.status, &c.kind, c.modified, signature_change)
                * recency
                * (0.7 + 0.3 * centrality)
                * matched.map_or(1.0, |m| 0.5 + 0.5 * m);
            ContextRecord {
                service: service_name.to_owned(),
                repo: repo.to_owned(),
                commit: c.commit.clone(),
                time: c.date.clone(),
                author: c.author.clone(),
                subject: c.subject.clone(),
                status: c.status.clone(),
                kind: c.kind.clone(),
                path: c.path.clone(),
                old_path: c.old_path.clone(),
                qualname: c.qualname.clone(),
                sig: c.sig.clone(),
                start_line: c.start_line,
                end_line: c.end_line,
                score: (score * 10_000.0).round() / 10_000.0,
                callers: callers.map(|k| k.count),
                relevance: matched.map(|m| (m * 10_000.0).round() / 10_000.0),
                nearest_callers: callers.map(|k| k.nearest.clone()).unwrap_or_default(),
            }
        })
        .collect()
}

/// Best first; ties newest first, then by place and name, so one store
/// always gives one order.
pub fn sort(records: &mut [ContextRecord]) {
    records.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| b.time.cmp(&a.time))
            .then_with(|| a.service.cmp(&b.service))
            .then_with(|| a.path.cmp(&b.path))
            .then_with(|| a.start_line.cmp(&b.start_line))
            .then_with(|| a.qualname.cmp(&b.qualname))
            .then_with(|| a.status.cmp(&b.status))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Callers, WindowChange};

    fn change(commit: &str, time: i64, status: &str, kind: &str, name: &str) -> WindowChange {
        WindowChange {
            commit: commit.into(),
            time,
            date: format!("t{time}"),
            author: "a".into(),
            subject: "s".into(),
            status: status.into(),
            id: format!("{name}{status}"),
            kind: kind.into(),
            language: "csharp".into(),
            path: "src/A.cs".into(),
            old_path: None,
            qualname: name.into(),
            sig: String::new(),
            start_line: 1,
            end_line: 2,
            modified: false,
        }
    }

    fn service() -> Service {
        toml::from_str("repo = \".\"").unwrap()
    }

    #[test]
    fn deletions_and_signature_changes_outrank_edits_and_recent_outranks_old() {
        let window = WindowAnswer {
            changes: vec![
                change("c1", 100, "MODIFIED", "method", "A.Edited"),
                change("c1", 100, "DELETED", "method", "A.Gone"),
                change("c2", 200, "DELETED", "method", "A.Sig"),
                WindowChange {
                    sig: "(int)".into(),
                    ..change("c2", 200, "ADDED", "method", "A.Sig")
                },
                // The same name elsewhere is not a signature change.
                WindowChange {
                    path: "src/B.cs".into(),
                    ..change("c2", 200, "ADDED", "method", "A.Gone")
                },
                change("c2", 200, "ADDED", "method", "A.New"),
                change("c2", 200, "MODIFIED", "class", "A"),
                change("c2", 200, "MODIFIED", "method", "A.Late"),
            ],
            callers: Default::default(),
            commits: Vec::new(),
        };
        let mut got = records("svc", "repo", &service(), (0, 200), window, None);
        sort(&mut got);
        let order: Vec<(&str, &str)> = got
            .iter()
            .map(|r| (r.status.as_str(), r.qualname.as_str()))
            .collect();
        assert_eq!(
            order,
            [
                ("ADDED", "A.Sig"),
                ("DELETED", "A.Sig"),
                // Older, but a deletion still outranks the recent edit.
                ("DELETED", "A.Gone"),
                ("MODIFIED", "A.Late"),
                ("MODIFIED", "A.Edited"),
                ("ADDED", "A.New"),
                ("ADDED", "A.Gone"),
                ("MODIFIED", "A"),
            ]
        );
        assert!(got.iter().all(|r| r.score > 0.0 && r.score <= 1.0));
    }

    #[test]
    fn more_callers_rank_an_equal_change_higher_and_are_reported() {
        let mut window = WindowAnswer {
            changes: vec![
                change("c1", 100, "MODIFIED", "method", "A.Lonely"),
                change("c1", 100, "MODIFIED", "method", "A.Popular"),
            ],
            callers: Default::default(),
            commits: Vec::new(),
        };
        window.callers.insert(
            "A.PopularMODIFIED".into(),
            Callers {
                count: 4,
                nearest: vec!["B.Call".into()],
            },
        );
        window
            .callers
            .insert("A.LonelyMODIFIED".into(), Callers::default());
        let mut got = records("svc", "repo", &service(), (0, 100), window, None);
        sort(&mut got);
        assert_eq!(got[0].qualname, "A.Popular");
        assert_eq!(got[0].callers, Some(4));
        assert_eq!(got[0].nearest_callers, ["B.Call"]);
        assert_eq!(got[1].callers, Some(0));
        assert!(got[0].score > got[1].score);
    }
}
