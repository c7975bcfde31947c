//! The upper tier: names. A query is compared with every symbol's name in
//! classes, best first: the exact qualified name, a suffix of it at a
//! separator, the own name in parts (`get user by id`), a prefix, the parts
//! in any order, a substring, and a near spelling. Each class has a fixed
//! score, so the order of results says which rule found them; within one
//! class a closer length ranks first.
//!
//! A scan over every name, and exact: no rule depends on how an index
//! happened to tokenize. It first compares each name's characters with the
//! query's, as one 64-bit set per name in a dense array, so that most
//! names are rejected without reading them (the near-spelling rule's edit
//! distance, computed for every name of about the right length, was most
//! of a name query's time on sympy/sympy).

use super::parts;
use super::SymbolEntry;

/// A score at or above this is a hit the user meant by name: the text
/// tier is not consulted unless asked.
pub const STRONG: f64 = 0.7;

/// One symbol's name, prepared for comparison.
struct Prepared {
    /// Lowercase qualname, `::` written `.`, without a twin's `#2`.
    qualname: String,
    /// Lowercase own name.
    name: String,
    parts: Vec<String>,
    squashed: String,
}

/// The names of every symbol, prepared once per store state.
pub struct NameIndex {
    entries: Vec<SymbolEntry>,
    prepared: Vec<Prepared>,
    /// Per entry, the [`char_set`] of its own name and of its qualname's
    /// last segment: a dense array that a query scans before it reads a
    /// name (most names lack a character of the query's).
    char_sets: Vec<(u64, u64)>,
    /// Positions in `entries`, ordered by id: found by a binary search,
    /// not a map built per query (26,787 ids on App-vNext/Polly).
    by_id: Vec<u32>,
    /// Positions by lowercase own name, for the names a question mentions.
    by_name: std::collections::HashMap<String, Vec<u32>>,
    /// Positions by path.
    by_path: std::collections::HashMap<String, Vec<u32>>,
}

/// A query, prepared once.
struct Wanted {
    text: String,
    qualname: String,
    last: String,
    segments: usize,
    parts: Vec<String>,
    squashed: String,
    chars: u64,
}

impl NameIndex {
    pub fn new(entries: Vec<SymbolEntry>) -> NameIndex {
        let prepared: Vec<Prepared> = entries
            .iter()
            .map(|e| Prepared {
                qualname: normal(diffidx_core::qualname::split_twin(&e.qualname).0),
                name: e.name.to_lowercase(),
                parts: parts::split(&e.name),
                squashed: parts::squashed(&e.name),
            })
            .collect();
        let char_sets = prepared
            .iter()
            .map(|p| {
                let last = p.qualname.rsplit('.').next().unwrap_or_default();
                (char_set(&p.squashed), char_set(&parts::squashed(last)))
            })
            .collect();
        let mut by_id: Vec<u32> = (0..entries.len() as u32).collect();
        by_id.sort_unstable_by(|&a, &b| entries[a as usize].id.cmp(&entries[b as usize].id));
        let mut by_name: std::collections::HashMap<String, Vec<u32>> =
            std::collections::HashMap::new();
        let mut by_path: std::collections::HashMap<String, Vec<u32>> =
            std::collections::HashMap::new();
        for (i, p) in prepared.iter().enumerate() {
            by_name.entry(p.name.clone()).or_default().push(i as u32);
            by_path
                .entry(entries[i].path.clone())
                .or_default()
                .push(i as u32);
        }
        NameIndex {
            entries,
            prepared,
            char_sets,
            by_id,
            by_name,
            by_path,
        }
    }

    /// The position of the symbol `id` in [`NameIndex::entries`].
    pub fn position(&self, id: &str) -> Option<usize> {
        self.by_id
            .binary_search_by(|&i| self.entries[i as usize].id.as_str().cmp(id))
            .ok()
            .map(|at| self.by_id[at] as usize)
    }

    pub fn entries(&self) -> &[SymbolEntry] {
        &self.entries
    }

    /// The symbols whose own name is `name`, as written.
    pub fn with_own_name(&self, name: &str) -> Vec<usize> {
        self.by_name
            .get(&name.to_lowercase())
            .into_iter()
            .flatten()
            .map(|&i| i as usize)
            .filter(|&i| self.entries[i].name == name)
            .collect()
    }

    /// The live symbols of the file `path`.
    pub fn in_file<'a>(&'a self, path: &'a str) -> impl Iterator<Item = usize> + 'a {
        self.by_path
            .get(path)
            .into_iter()
            .flatten()
            .map(|&i| i as usize)
            .filter(|&i| !self.entries[i].deleted)
    }

    /// The ids of the symbols matching `query`, as
    /// [`crate::store::Reader::matching`] finds them with a scan of the
    /// store: own name, signature and kind equal, then the qualname and
    /// path rules. The query server holds this index, so its `log` skips
    /// that scan (about 5 ms of 26,787 symbols on App-vNext/Polly).
    pub fn matching(&self, query: &diffidx_core::SymbolQuery) -> std::collections::HashSet<String> {
        let name = query.own_name();
        self.entries
            .iter()
            .filter(|e| e.name == name)
            .filter(|e| query.sig.as_ref().is_none_or(|sig| *sig == e.sig))
            .filter(|e| query.kind.is_none_or(|k| k.as_str() == e.kind))
            .filter(|e| query.matches(&e.qualname) && query.matches_path(&e.path))
            .map(|e| e.id.clone())
            .collect()
    }

    /// Every entry `keep` accepts that matches `query`, with its score,
    /// best first.
    pub fn find(&self, query: &str, keep: impl Fn(&SymbolEntry) -> bool) -> Vec<(usize, f64)> {
        let qualname = normal(query.trim());
        let last = qualname.rsplit('.').next().unwrap_or_default().to_owned();
        let squashed = parts::squashed(&last);
        let wanted = Wanted {
            text: query.trim().to_owned(),
            segments: qualname.split('.').count(),
            parts: parts::split(query),
            chars: char_set(&squashed),
            squashed,
            qualname,
            last,
        };
        if wanted.squashed.is_empty() {
            return Vec::new();
        }
        // The qualname rules need the query's characters in the last
        // segment; the others in the own name, but for `allowed` of them.
        let allowed = allowed_edits(&wanted.squashed);
        let lacks = |set: u64| (wanted.chars & !set).count_ones() as usize;
        // Scored first: most names match nothing, and an entry's fields
        // are read only for those that do.
        let mut hits: Vec<(usize, f64)> = self
            .char_sets
            .iter()
            .enumerate()
            .filter_map(|(i, &(own, last))| {
                let missing = lacks(own);
                if lacks(last) > 0 && missing > allowed {
                    return None;
                }
                let score = score(&self.prepared[i], &wanted, missing, allowed)?;
                if !keep(&self.entries[i]) {
                    return None;
                }
                // The exact spelling first among equals.
                let cased = if self.entries[i].name == wanted.text {
                    0.01
                } else {
                    0.0
                };
                Some((i, score + cased))
            })
            .collect();
        hits.sort_by(|a, b| {
            let (x, y) = (&self.entries[a.0], &self.entries[b.0]);
            b.1.total_cmp(&a.1)
                .then(x.deleted.cmp(&y.deleted))
                .then(x.qualname.len().cmp(&y.qualname.len()))
                .then(x.tie_order(y))
        });
        hits
    }
}

fn normal(qualname: &str) -> String {
    qualname.replace("::", ".").to_lowercase()
}

/// The class `p` falls in for `q`, as a score; `None`: no match.
/// `missing`: how many of the query's characters the own name lacks;
/// `allowed`: the edits a near spelling may take.
fn score(p: &Prepared, q: &Wanted, missing: usize, allowed: usize) -> Option<f64> {
    if p.qualname == q.qualname {
        return Some(1.0);
    }
    if p.qualname.len() > q.qualname.len()
        && p.qualname.ends_with(&q.qualname)
        && p.qualname.as_bytes()[p.qualname.len() - q.qualname.len() - 1] == b'.'
    {
        return Some(0.9);
    }
    // A qualified query must match its qualifiers as a suffix; the rules
    // below compare its last segment with the own name.
    if q.segments > 1 {
        let qualifier = &q.qualname[..q.qualname.len() - q.last.len()];
        let own_start = p.qualname.len() - p.name.len();
        if !p.qualname[..own_start].ends_with(qualifier) {
            return None;
        }
    }
    // Every rule below but the near spelling needs each character of the
    // query's name in the name; a near spelling adds at most `allowed` new
    // ones. Comparing the two sets first skips most names cheaply.
    if missing > allowed {
        return None;
    }
    let closeness = |shorter: usize, longer: usize| 0.1 * shorter as f64 / longer.max(1) as f64;
    if missing > 0 {
        return near_spelling(p, q, allowed);
    }
    if p.squashed == q.squashed {
        return Some(0.85); // the same name in other parts: `get user by id`
    }
    if p.name.starts_with(&q.last) && !q.last.is_empty() {
        return Some(0.75 + closeness(q.last.len(), p.name.len()));
    }
    if q.parts.len() > 1 && all_parts_in(&q.parts, &p.parts) {
        return Some(0.6 + closeness(q.parts.len(), p.parts.len()));
    }
    if q.squashed.len() >= 3 && p.squashed.contains(&q.squashed) {
        return Some(0.55 + closeness(q.squashed.len(), p.squashed.len()));
    }
    near_spelling(p, q, allowed)
}

/// How many edits a near spelling of `squashed` may take.
fn allowed_edits(squashed: &str) -> usize {
    match squashed.chars().count() {
        0..=3 => 0,
        4..=7 => 1,
        _ => 2,
    }
}

/// The near-spelling class: at most `allowed` edits (a transposition is
/// one) between the squashed names.
fn near_spelling(p: &Prepared, q: &Wanted, allowed: usize) -> Option<f64> {
    if allowed == 0 || p.squashed.len().abs_diff(q.squashed.len()) > allowed {
        return None;
    }
    let distance = strsim::damerau_levenshtein(&p.squashed, &q.squashed);
    (distance <= allowed).then_some(0.5 - 0.05 * distance as f64)
}

/// The characters of a squashed name as a set of 64 bits: `a`-`z` and
/// `0`-`9` one bit each, any other character one of the rest by its code.
/// A character of one name whose bit the other lacks is not in the other.
fn char_set(squashed: &str) -> u64 {
    squashed.chars().fold(0, |set, c| {
        let bit = match c {
            'a'..='z' => c as u32 - 'a' as u32,
            '0'..='9' => 26 + c as u32 - '0' as u32,
            _ => 36 + c as u32 % 28,
        };
        set | 1 << bit
    })
}

/// Every part of the query is a part of the name (the query's last part
/// may be the start of one: `get user b`).
fn all_parts_in(query: &[String], name: &[String]) -> bool {
    query.iter().enumerate().all(|(i, q)| {
        name.iter()
            .any(|n| n == q || (i + 1 == query.len() && n.starts_with(q.as_str())))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(qualname: &str, deleted: bool) -> SymbolEntry {
        let name = qualname.rsplit(['.', ':']).next().unwrap().to_owned();
        SymbolEntry {
            id: qualname.to_owned(),
            qualname: qualname.to_owned(),
            name,
            kind: "method".to_owned(),
            path: "src/a.cs".to_owned(),
            language: "csharp".to_owned(),
            sig: String::new(),
            deleted,
            start_line: 1,
            end_line: 2,
        }
    }

    fn found(index: &NameIndex, query: &str) -> Vec<(String, f64)> {
        index
            .find(query, |_| true)
            .into_iter()
            .map(|(i, s)| (index.entries()[i].qualname.clone(), s))
            .collect()
    }

    fn index() -> NameIndex {
        NameIndex::new(vec![
            entry("Acme.Users.UserStore.GetUserById", false),
            entry("Acme.Users.UserStore.GetUser", false),
            entry("Acme.Billing.PaymentService.Charge", false),
            entry("Acme.Billing.PaymentService.ChargeCard", true),
            entry("store::open_reader", false),
            entry("Acme.HttpServer", false),
        ])
    }

    #[test]
    fn a_symbol_is_found_by_its_id() {
        let index = index();
        for (i, e) in index.entries().iter().enumerate() {
            assert_eq!(index.position(&e.id), Some(i), "{}", e.id);
        }
        assert_eq!(index.position("Acme.Users"), None);
        assert_eq!(index.position(""), None);
    }

    #[test]
    fn each_rule_finds_what_it_should_in_order() {
        let index = index();
        let first = |q: &str| found(&index, q).first().cloned().unwrap();
        assert_eq!(first("Acme.Users.UserStore.GetUser").1, 1.0);
        assert_eq!(
            first("UserStore.GetUserById"),
            ("Acme.Users.UserStore.GetUserById".to_owned(), 0.9)
        );
        // Split and snake spellings of the own name.
        assert_eq!(
            first("get user by id").0,
            "Acme.Users.UserStore.GetUserById"
        );
        assert_eq!(
            first("get_user_by_id").0,
            "Acme.Users.UserStore.GetUserById"
        );
        // Rust paths and dotted queries are the same thing.
        assert_eq!(first("store.open_reader").1, 1.0);
        // The exact spelling of the own name ranks first among equals.
        assert!((first("open_reader").1 - 0.91).abs() < 1e-9);
        assert_eq!(first("open reader").0, "store::open_reader");
        // Misspelled.
        assert_eq!(first("GetUsrById").0, "Acme.Users.UserStore.GetUserById");
        assert_eq!(first("HtpServer").0, "Acme.HttpServer");
        // A misspelling may bring characters the name lacks.
        assert_eq!(first("GetUserByIx").0, "Acme.Users.UserStore.GetUserById");
        assert_eq!(first("HttqServer").0, "Acme.HttpServer");
        assert!(found(&index, "HqqqServer").is_empty(), "three edits in 10");
        // Prefix: the closer length first; a live symbol before a deleted one.
        let charge = found(&index, "Charg");
        assert_eq!(charge[0].0, "Acme.Billing.PaymentService.Charge");
        assert_eq!(charge[1].0, "Acme.Billing.PaymentService.ChargeCard");
        // A qualifier must match.
        assert!(found(&index, "Billing.GetUser").is_empty());
        assert!(found(&index, "Nothing").is_empty());
        assert!(found(&index, "  ").is_empty());
    }

    #[test]
    fn a_qualname_is_found_when_its_last_segment_is_not_the_own_name() {
        // A default export's own name is `default`; its qualname ends in
        // the file's.
        let exported = SymbolEntry {
            name: "default".to_owned(),
            ..entry("widgets.Widget", false)
        };
        let index = NameIndex::new(vec![exported, entry("Acme.Widgets", false)]);
        assert_eq!(
            found(&index, "widgets.Widget"),
            [("widgets.Widget".to_owned(), 1.0)]
        );
        assert_eq!(
            found(&index, "Widget")[0],
            ("widgets.Widget".to_owned(), 0.9)
        );
    }

    #[test]
    fn the_filter_applies_before_ranking() {
        let index = index();
        let live: Vec<_> = index
            .find("Charge", |e| e.deleted)
            .into_iter()
            .map(|(i, _)| index.entries()[i].qualname.clone())
            .collect();
        assert_eq!(live, ["Acme.Billing.PaymentService.ChargeCard"]);
    }
}
