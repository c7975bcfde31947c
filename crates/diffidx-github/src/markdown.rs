//! The comment body: a pull request's net symbol change as GitHub markdown.
//!
//! Names and paths come from the code under review, so they are untrusted:
//! every one is written inside a code span (no markdown, HTML, `@mention` or
//! `#123` reference is interpreted there) with a fence longer than any
//! backtick run it contains, control and bidirectional-override characters
//! replaced; in link targets every byte outside the unreserved set is
//! percent-encoded. A symbol or file name therefore cannot break the layout,
//! ping anyone or inject markup.
//!
//! The body stays under GitHub's size limit: the groups take turns, modified
//! and deleted with a larger share, so a huge group cannot crowd out the
//! others, and what does not fit is counted in an honest "and N more" line
//! per group, with the command that lists everything.

use diffidx_core::note::Diagnostic;
use diffidx_core::{Language, Status, SymbolDelta};

use crate::event::RepoName;

/// The hidden first line that identifies diffidx's comment on a pull request.
pub const MARKER: &str = "<!-- diffidx:pr-comment -->";

/// GitHub refuses comment bodies over 65,536 characters; the default budget
/// (in bytes, which are never fewer than characters) leaves headroom.
pub const DEFAULT_BUDGET: usize = 60_000;

/// Groups with more entries than this are collapsed.
const COLLAPSE_AFTER: usize = 10;

/// The groups in the order they appear (and claim room).
const GROUPS: [(Status, &str); 4] = [
    (Status::Modified, "Modified"),
    (Status::Deleted, "Deleted"),
    (Status::Added, "Added"),
    (Status::Moved, "Moved"),
];

/// Where links point: `{server_url}/{repo}/blob/{sha}/{path}#L{start}-L{end}`.
#[derive(Debug, Clone)]
pub struct LinkBase {
    pub server_url: String,
    pub repo: RepoName,
}

/// Everything the comment says.
#[derive(Debug, Clone)]
pub struct PullRequestChange<'a> {
    /// The net change from the merge base to the head (sorted as in notes).
    pub deltas: &'a [SymbolDelta],
    pub diagnostics: &'a [Diagnostic],
    /// Changed source files that were compared (0: the PR touches none).
    pub source_files: usize,
    pub languages: &'a [Language],
    /// The merge base: deleted symbols link into it.
    pub base_sha: &'a str,
    /// The head: every other symbol links into it.
    pub head_sha: &'a str,
    /// `None` renders names without links (a dry run outside Actions).
    pub links: Option<LinkBase>,
    /// What calls, inherits or implements the changed symbols (from the
    /// code graph), when there is one.
    pub impact: Option<Impact>,
    /// The ids of the deltas whose signature changed (parameters, return
    /// type, type parameters, exceptions, bases): said beside them, as the
    /// riskier change for callers.
    pub signature_changed: std::collections::BTreeSet<String>,
}

/// The blast radius of a pull request, for its collapsed "Impact" section.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Impact {
    /// How many hops were followed.
    pub depth: u32,
    /// Symbols reached, and the files they are in.
    pub symbols: usize,
    pub files: usize,
    /// The closest few, nearest first.
    pub closest: Vec<Reached>,
    /// Calls in the repository named as the changed symbols are called
    /// that matched no declaration, and those names: when there are any,
    /// `symbols` is a lower bound.
    pub unresolved_calls: u64,
    pub unresolved_names: Vec<String>,
    /// Symbols that reach a changed one directly by edges found by name
    /// only, left out of `symbols` as less certain.
    pub more_by_name: usize,
}

/// One symbol the change reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reached {
    pub name: String,
    pub path: String,
    pub line: u32,
    pub distance: u32,
    /// `calls`, `inherits`, `implements`.
    pub edge: String,
    pub resolution: String,
    /// A caller through dynamic dispatch: the declaration its call names,
    /// which the changed symbol overrides or implements.
    pub through: Option<String>,
}

/// How many reached symbols the Impact section lists.
pub const IMPACT_SHOWN: usize = 5;

/// Renders the body, `MARKER` first, within `budget` bytes.
pub fn render(change: &PullRequestChange<'_>, budget: usize) -> String {
    let mut out = String::new();
    out.push_str(MARKER);
    out.push('\n');
    out.push_str("### Symbol changes\n\n");
    // Every language diffidx reads needs no list: "source" says it.
    let every = Language::all().all(|l| change.languages.contains(&l));
    let languages = if every {
        "source".to_owned()
    } else {
        format!("{} source", language_list(change.languages))
    };
    let range = format!(
        "{} (merge base) → {}",
        code(short(change.base_sha)),
        code(short(change.head_sha))
    );

    // A namespace or type modified only because members inside it changed
    // is their grouping, not a change of its own: it is not listed or
    // counted as modified (its members are).
    let enclosing = enclosing_changes(change.deltas);
    let groups: Vec<(&str, Vec<&SymbolDelta>)> = GROUPS
        .iter()
        .map(|(status, title)| {
            let members = change
                .deltas
                .iter()
                .filter(|d| d.status == *status)
                .filter(|d| d.status != Status::Modified || !enclosing.contains(d.id.as_str()))
                .collect();
            (*title, members)
        })
        .collect();
    let grouping_only = change
        .deltas
        .iter()
        .filter(|d| d.status == Status::Modified && enclosing.contains(d.id.as_str()))
        .count();

    if change.deltas.is_empty() {
        if change.source_files == 0 {
            out.push_str(&format!(
                "This pull request changes no {languages} files.\n"
            ));
        } else {
            out.push_str(&format!(
                "No symbol changed: the edits to {} {languages} {} only touch comments or formatting.\n",
                change.source_files,
                plural(change.source_files, "file", "files"),
            ));
        }
    } else {
        let counts: Vec<String> = groups
            .iter()
            .filter(|(_, members)| !members.is_empty())
            .map(|(title, members)| format!("{} {}", members.len(), title.to_lowercase()))
            .collect();
        // The languages the changed symbols are in, in the configured order.
        let present: Vec<Language> = change
            .languages
            .iter()
            .copied()
            .filter(|l| {
                change
                    .deltas
                    .iter()
                    .any(|d| Language::from_path(&d.path) == Some(*l))
            })
            .collect();
        let listed: usize = groups.iter().map(|(_, members)| members.len()).sum();
        let counts = if counts.is_empty() {
            "0 changed".to_owned()
        } else {
            counts.join(" · ")
        };
        out.push_str(&format!(
            "**{counts}** {} in {} code. Comment- and whitespace-only edits are not counted",
            plural(listed, "symbol", "symbols"),
            language_list(&present),
        ));
        match grouping_only {
            0 => {}
            1 => out.push_str(", nor is 1 namespace or type that changed only through its members"),
            n => out.push_str(&format!(
                ", nor are {n} namespaces and types that changed only through their members"
            )),
        }
        out.push_str(".\n");
    }

    // The Impact section takes at most a quarter of the room.
    let footer = format!(
        "{}{}",
        impact_section(change, budget / 4),
        footer(change, &range)
    );
    let entries: Vec<Vec<String>> = groups
        .iter()
        .map(|(_, members)| members.iter().map(|d| entry(d, change)).collect())
        .collect();
    let full_list = format!(
        "\nThe full list: `git diffidx show {}...{}`\n",
        short(change.base_sha),
        short(change.head_sha)
    );
    let room = budget.saturating_sub(out.len() + footer.len() + full_list.len());
    let shown = fit(&groups, &entries, room);
    for (i, (title, members)) in groups.iter().enumerate() {
        if members.is_empty() {
            continue;
        }
        out.push_str(&group_open(title, members.len()));
        for line in &entries[i][..shown[i]] {
            out.push_str(line);
        }
        if shown[i] < members.len() {
            out.push_str(&more_line(members.len() - shown[i]));
        }
        out.push_str(GROUP_CLOSE);
    }
    if shown
        .iter()
        .zip(&groups)
        .any(|(n, (_, members))| *n < members.len())
    {
        out.push_str(&full_list);
    }
    out.push_str(&footer);
    out
}

/// The collapsed "Impact" section (empty without a code graph or when
/// nothing is reached), in at most `room` bytes: the closest entries that
/// fit, the rest counted.
fn impact_section(change: &PullRequestChange<'_>, room: usize) -> String {
    let Some(impact) = &change.impact else {
        return String::new();
    };
    if impact.symbols == 0 && impact.unresolved_calls == 0 && impact.more_by_name == 0 {
        return String::new();
    }
    let mut unknown = String::new();
    if impact.more_by_name > 0 {
        unknown.push_str(&format!(
            "- and {} more found by name only, left out as less certain\n",
            impact.more_by_name
        ));
    }
    if impact.unresolved_calls > 0 {
        let names: Vec<String> = impact.unresolved_names.iter().map(|n| code(n)).collect();
        unknown.push_str(&format!(
            "- and {} {} named {} that matched no declaration: some may call what changed\n",
            impact.unresolved_calls,
            plural(impact.unresolved_calls as usize, "call", "calls"),
            names.join(" or "),
        ));
    }
    let mut out = format!(
        "\n<details><summary><strong>Impact</strong>: {}{} {} in {} {} within {} {} call, \
         inherit or implement what changed</summary>\n\n",
        if unknown.is_empty() { "" } else { "at least " },
        impact.symbols,
        plural(impact.symbols, "symbol", "symbols"),
        impact.files,
        plural(impact.files, "file", "files"),
        impact.depth,
        plural(impact.depth as usize, "hop", "hops"),
    );
    let more = |hidden: usize| {
        format!(
            "- … and {hidden} more: `git diffidx impact {}...{}`\n",
            short(change.base_sha),
            short(change.head_sha)
        )
    };
    let mut listed = 0;
    for r in impact.closest.iter().take(IMPACT_SHOWN) {
        let target = match &change.links {
            Some(links) => format!(
                "[{}]({})",
                code(&r.path),
                blob_url(links, change.head_sha, &r.path, r.line, r.line)
            ),
            None => code(&r.path),
        };
        let edge = match &r.through {
            Some(through) => format!("{} through {}", r.edge, code(through)),
            None => r.edge.clone(),
        };
        let line = format!(
            "- {} {target} ({} {}, {edge}, {})\n",
            code(&r.name),
            r.distance,
            plural(r.distance as usize, "hop", "hops"),
            r.resolution,
        );
        let rest = more(impact.symbols).len() + unknown.len() + GROUP_CLOSE.len();
        if out.len() + line.len() + rest > room {
            break;
        }
        out.push_str(&line);
        listed += 1;
    }
    if impact.symbols > listed {
        out.push_str(&more(impact.symbols - listed));
    }
    out.push_str(&unknown);
    out.push_str(GROUP_CLOSE);
    if out.len() > room {
        return String::new();
    }
    out
}

/// Ids of the changed symbols that enclose another changed symbol (through
/// `parent_id`, over the changed symbols).
fn enclosing_changes(deltas: &[SymbolDelta]) -> std::collections::HashSet<&str> {
    let by_id: std::collections::HashMap<&str, &SymbolDelta> =
        deltas.iter().map(|d| (d.id.as_str(), d)).collect();
    let mut enclosing = std::collections::HashSet::new();
    for delta in deltas {
        let mut parent = delta.parent_id.as_deref();
        // Bounded: a malformed chain cannot loop forever.
        for _ in 0..deltas.len() {
            let Some(id) = parent.filter(|id| by_id.contains_key(id)) else {
                break;
            };
            if !enclosing.insert(id) {
                break;
            }
            parent = by_id[id].parent_id.as_deref();
        }
    }
    enclosing
}

/// How many entries of each group fit in `room` bytes. Groups take turns,
/// modified and deleted two entries a turn, added and moved one, so that a
/// huge group cannot crowd the others out.
fn fit(groups: &[(&str, Vec<&SymbolDelta>)], entries: &[Vec<String>], room: usize) -> Vec<usize> {
    const SHARE: [usize; 4] = [2, 2, 1, 1];
    // Every non-empty group's frame, with room for its "and N more".
    let mut used: usize = groups
        .iter()
        .filter(|(_, members)| !members.is_empty())
        .map(|(title, members)| {
            group_open(title, members.len()).len()
                + more_line(members.len()).len()
                + GROUP_CLOSE.len()
        })
        .sum();
    let mut shown = vec![0; groups.len()];
    loop {
        let mut progressed = false;
        for (i, lines) in entries.iter().enumerate() {
            for _ in 0..SHARE[i.min(SHARE.len() - 1)] {
                let Some(line) = lines.get(shown[i]) else {
                    break;
                };
                if used + line.len() > room {
                    return shown;
                }
                used += line.len();
                shown[i] += 1;
                progressed = true;
            }
        }
        if !progressed {
            return shown;
        }
    }
}

const GROUP_CLOSE: &str = "\n</details>\n";

fn group_open(title: &str, count: usize) -> String {
    let open = if count <= COLLAPSE_AFTER { " open" } else { "" };
    format!("\n<details{open}><summary><strong>{title} ({count})</strong></summary>\n\n")
}

fn more_line(hidden: usize) -> String {
    format!("- … and {hidden} more (not shown: the comment would exceed GitHub's size limit)\n")
}

/// One list item: kind, linked name, where.
fn entry(delta: &SymbolDelta, change: &PullRequestChange<'_>) -> String {
    let name = code(&display_name(delta));
    let (sha, path) = match delta.status {
        Status::Deleted => (change.base_sha, delta.path.as_str()),
        _ => (change.head_sha, delta.path.as_str()),
    };
    let linked = match &change.links {
        Some(links) => format!(
            "[{name}]({})",
            blob_url(links, sha, path, delta.start_line, delta.end_line)
        ),
        None => name,
    };
    let place = match (&delta.status, &delta.old_path) {
        (Status::Moved, Some(old)) if old != &delta.path => {
            format!("from {} to {}", code(old), code(&delta.path))
        }
        (Status::Moved, _) => format!("within {}", code(&delta.path)),
        _ => format!("in {}", code(&delta.path)),
    };
    let edited = if delta.status == Status::Moved && delta.modified == Some(true) {
        ", modified".to_owned()
    } else if let Some(from) = &delta.from {
        let name = code(&diffidx_core::symbol::display_name(
            &from.qualname,
            &from.sig,
        ));
        if from.path == delta.path {
            format!(", was {name}")
        } else {
            format!(", was {name} in {}", code(&from.path))
        }
    } else {
        String::new()
    };
    let signature = if change.signature_changed.contains(&delta.id) {
        ", signature changed"
    } else {
        ""
    };
    format!(
        "- {} {linked} {place}{edited}{signature}\n",
        delta.kind.as_str()
    )
}

/// `qualname` plus a C# parameter list, or a Rust trait in parentheses.
fn display_name(delta: &SymbolDelta) -> String {
    diffidx_core::symbol::display_name(&delta.qualname, &delta.sig)
}

fn footer(change: &PullRequestChange<'_>, range: &str) -> String {
    let mut out = String::new();
    if !change.diagnostics.is_empty() {
        out.push_str("\n**Not fully read:**\n\n");
        for diag in change.diagnostics.iter().take(COLLAPSE_AFTER) {
            out.push_str(&format!(
                "- {} {}\n",
                code(&diag.path),
                diag.problem.describe()
            ));
        }
        if change.diagnostics.len() > COLLAPSE_AFTER {
            out.push_str(&format!(
                "- … and {} more\n",
                change.diagnostics.len() - COLLAPSE_AFTER
            ));
        }
    }
    out.push_str(&format!(
        "\n<sub>Net change {range}, by diffidx {}. This comment is updated on every push.</sub>\n",
        env!("CARGO_PKG_VERSION")
    ));
    out
}

fn language_list(languages: &[Language]) -> String {
    let names: Vec<&str> = languages.iter().map(|l| l.display_name()).collect();
    match names.as_slice() {
        [] => "source".to_string(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(7)]
}

/// A code span that shows `text` literally, whatever it contains.
pub fn code(text: &str) -> String {
    let clean: String = text
        .chars()
        .map(|c| if is_unsafe_char(c) { '\u{FFFD}' } else { c })
        .collect();
    if clean.is_empty() {
        return "` `".to_string();
    }
    let mut longest = 0;
    let mut run = 0;
    for c in clean.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    // A span's content loses one leading and trailing space when it has both;
    // padding keeps edge backticks and spaces as they are.
    let pad = clean.starts_with(['`', ' ']) || clean.ends_with(['`', ' ']);
    let space = if pad { " " } else { "" };
    format!("{fence}{space}{clean}{space}{fence}")
}

/// Line breaks and other controls would end the list item; bidirectional
/// overrides would make the text read differently from what it is.
fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}')
}

/// `{server}/{owner}/{name}/blob/{sha}/{path}#L{start}-L{end}`.
pub fn blob_url(links: &LinkBase, sha: &str, path: &str, start: u32, end: u32) -> String {
    let lines = if start == end {
        format!("L{start}")
    } else {
        format!("L{start}-L{end}")
    };
    format!(
        "{}/{}/{}/blob/{}/{}#{lines}",
        links.server_url,
        links.repo.owner,
        links.repo.name,
        percent_encode(sha),
        path.split('/')
            .map(percent_encode)
            .collect::<Vec<_>>()
            .join("/"),
    )
}

/// Every byte outside RFC 3986's unreserved set (`A-Z a-z 0-9 - . _ ~`).
const NOT_UNRESERVED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Percent-encodes one path segment.
fn percent_encode(segment: &str) -> String {
    percent_encoding::utf8_percent_encode(segment, NOT_UNRESERVED).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use diffidx_core::SymbolKind;

    const BASE: &str = "1111111111111111111111111111111111111111";
    const HEAD: &str = "2222222222222222222222222222222222222222";

    fn delta(status: Status, path: &str, qualname: &str, sig: &str) -> SymbolDelta {
        SymbolDelta {
            id: diffidx_core::symbol_id(path, SymbolKind::Method, qualname, sig),
            status,
            kind: SymbolKind::Method,
            path: path.into(),
            old_path: None,
            qualname: qualname.into(),
            sig: sig.into(),
            parent_id: None,
            start_line: 3,
            end_line: 9,
            content_hash: None,
            modified: None,
            from: None,
        }
    }

    fn change(deltas: &[SymbolDelta]) -> PullRequestChange<'_> {
        PullRequestChange {
            deltas,
            diagnostics: &[],
            source_files: 1,
            languages: Vec::leak(Language::all().collect()),
            base_sha: BASE,
            head_sha: HEAD,
            links: Some(LinkBase {
                server_url: "https://github.com".into(),
                repo: RepoName::parse("acme/widgets").unwrap(),
            }),
            impact: None,
            signature_changed: Default::default(),
        }
    }

    #[test]
    fn the_impact_section_is_collapsed_counted_and_escaped() {
        let deltas = [delta(
            Status::Modified,
            "src/Pay.cs",
            "Acme.Pay.Charge",
            "(int)",
        )];
        let reached = |i: u32| Reached {
            name: format!("Acme.Shop.Caller{i}`@team"),
            path: "src/Shop.cs".into(),
            line: 10 + i,
            distance: 1 + i / 3,
            edge: "calls".into(),
            resolution: "scoped".into(),
            through: (i == 1).then(|| "Acme.Pay.IPay.Charge".to_owned()),
        };
        let with_impact = PullRequestChange {
            impact: Some(Impact {
                depth: 2,
                symbols: 7,
                files: 3,
                closest: (0..IMPACT_SHOWN as u32).map(reached).collect(),
                ..Impact::default()
            }),
            ..change(&deltas)
        };
        let body = render(&with_impact, DEFAULT_BUDGET);
        assert!(
            body.contains("<details><summary><strong>Impact</strong>: 7 symbols in 3 files within 2 hops call, inherit or implement what changed</summary>"),
            "{body}"
        );
        // Names stay inside code spans; locations link into the head.
        assert!(body.contains("- ``Acme.Shop.Caller0`@team`` [`src/Shop.cs`](https://github.com/acme/widgets/blob/"), "{body}");
        assert!(body.contains("#L10) (1 hop, calls, scoped)"), "{body}");
        // A caller through dispatch says what its call names.
        assert!(
            body.contains("#L11) (1 hop, calls through `Acme.Pay.IPay.Charge`, scoped)"),
            "{body}"
        );
        assert!(
            body.contains("- … and 2 more: `git diffidx impact "),
            "{body}"
        );
        // Without a graph, or with nothing reached, there is no section.
        assert!(!render(&change(&deltas), DEFAULT_BUDGET).contains("Impact"));
        let nothing = PullRequestChange {
            impact: Some(Impact::default()),
            ..change(&deltas)
        };
        assert!(!render(&nothing, DEFAULT_BUDGET).contains("Impact"));
    }

    #[test]
    fn a_signature_change_is_said_where_it_happened() {
        let deltas = [
            delta(Status::Modified, "src/Pay.cs", "Acme.Pay.Charge", "(int)"),
            delta(Status::Modified, "src/Pay.cs", "Acme.Pay.Refund", "(int)"),
        ];
        let plain = render(&change(&deltas), DEFAULT_BUDGET);
        assert!(!plain.contains("signature changed"), "{plain}");
        let typed = PullRequestChange {
            signature_changed: [deltas[1].id.clone()].into_iter().collect(),
            ..change(&deltas)
        };
        let body = render(&typed, DEFAULT_BUDGET);
        let line = |name: &str| {
            body.lines()
                .find(|l| l.contains(name))
                .unwrap_or_else(|| panic!("{name} in {body}"))
                .to_owned()
        };
        assert!(line("Refund").ends_with(", signature changed"), "{body}");
        assert!(!line("Charge").contains("signature"), "{body}");
    }

    #[test]
    fn calls_that_matched_nothing_make_the_impact_a_lower_bound() {
        let deltas = [delta(
            Status::Deleted,
            "src/pay.py",
            "pay.Charge.__init__",
            "(self)",
        )];
        // Nothing reached, yet calls by the name exist: the section says so.
        let unknown = PullRequestChange {
            impact: Some(Impact {
                depth: 2,
                unresolved_calls: 3,
                unresolved_names: vec!["Charge".into(), "__init__".into()],
                more_by_name: 2,
                ..Impact::default()
            }),
            ..change(&deltas)
        };
        let body = render(&unknown, DEFAULT_BUDGET);
        assert!(
            body.contains("<strong>Impact</strong>: at least 0 symbols in 0 files within 2 hops"),
            "{body}"
        );
        assert!(
            body.contains("- and 3 calls named `Charge` or `__init__` that matched no declaration: some may call what changed"),
            "{body}"
        );
        assert!(
            body.contains("- and 2 more found by name only, left out as less certain\n"),
            "{body}"
        );
    }

    #[test]
    fn code_spans_hold_anything_literally() {
        assert_eq!(code("Foo.Bar(int)"), "`Foo.Bar(int)`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x"), "`` `x ``");
        assert_eq!(code("a\nb\u{202E}c"), "`a\u{FFFD}b\u{FFFD}c`");
    }

    #[test]
    fn links_percent_encode_paths() {
        let links = change(&[]).links.unwrap();
        assert_eq!(
            blob_url(&links, HEAD, "src/My Dir/a#b(1).cs", 4, 4),
            format!("https://github.com/acme/widgets/blob/{HEAD}/src/My%20Dir/a%23b%281%29.cs#L4")
        );
    }

    #[test]
    fn hostile_names_stay_inside_their_code_span() {
        let evil = delta(
            Status::Modified,
            "src/<img src=x onerror=alert(1)>/@octocat #1.cs",
            "Foo.Bar`](javascript:alert(1))<!-- diffidx:pr-comment -->",
            "",
        );
        let body = render(&change(&[evil]), DEFAULT_BUDGET);
        let item = body.lines().find(|l| l.starts_with("- method")).unwrap();
        assert!(
            item.starts_with("- method [``Foo.Bar`](javascript"),
            "{item}"
        );
        assert!(
            item.contains("](https://github.com/acme/widgets/blob/"),
            "{item}"
        );
        assert!(
            item.contains(
                "/src/%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E/%40octocat%20%231.cs#L3-L9)"
            ),
            "{item}"
        );
        assert_eq!(
            body.matches(MARKER).count(),
            2,
            "the marker text inside a span is literal"
        );
        assert!(body.starts_with(MARKER));
    }

    #[test]
    fn containers_changed_only_through_their_members_are_the_grouping_not_changes() {
        let mut namespace = delta(Status::Modified, "src/Shop.cs", "Shop", "");
        namespace.kind = SymbolKind::Namespace;
        let mut class = delta(Status::Modified, "src/Shop.cs", "Shop.Orders", "");
        class.kind = SymbolKind::Class;
        class.parent_id = Some(namespace.id.clone());
        let mut method = delta(
            Status::Modified,
            "src/Shop.cs",
            "Shop.Orders.Place",
            "(int)",
        );
        method.parent_id = Some(class.id.clone());
        let mut added = delta(Status::Added, "src/Shop.cs", "Shop.Orders.Cancel", "()");
        added.parent_id = Some(class.id.clone());
        // A type modified on its own (no changed member) is still a change.
        let mut other = delta(Status::Modified, "src/Other.cs", "Other", "");
        other.kind = SymbolKind::Class;
        let deltas = [namespace, class, method, added, other];
        let body = render(&change(&deltas), DEFAULT_BUDGET);
        assert!(
            body.contains("**2 modified · 1 added** symbols in C# code"),
            "{body}"
        );
        assert!(
            body.contains("nor are 2 namespaces and types that changed only through their members"),
            "{body}"
        );
        assert!(!body.contains("[`Shop`]"), "{body}");
        assert!(!body.contains("[`Shop.Orders`]"), "{body}");
        assert!(body.contains("[`Shop.Orders.Place(int)`]"), "{body}");
        assert!(body.contains("[`Other`]"), "{body}");
    }

    #[test]
    fn a_formatting_only_change_says_so() {
        let mut c = change(&[]);
        let body = render(&c, DEFAULT_BUDGET);
        assert!(
            body.contains(
                "No symbol changed: the edits to 1 source file only touch comments or formatting."
            ),
            "{body}"
        );
        c.source_files = 0;
        let body = render(&c, DEFAULT_BUDGET);
        assert!(
            body.contains("This pull request changes no source files."),
            "{body}"
        );
    }

    #[test]
    fn the_budget_is_kept_and_what_is_left_out_is_counted() {
        let deltas: Vec<SymbolDelta> = (0..3000)
            .map(|i| {
                let status = if i % 2 == 0 {
                    Status::Modified
                } else {
                    Status::Deleted
                };
                delta(
                    status,
                    &format!("src/F{i}.cs"),
                    &format!("Acme.Type{i}.Method{i}"),
                    "(int)",
                )
            })
            .collect();
        let body = render(&change(&deltas), 20_000);
        assert!(body.len() <= 20_000, "{}", body.len());
        let shown = body.lines().filter(|l| l.starts_with("- method")).count();
        let hidden: usize = body
            .lines()
            .filter_map(|l| l.strip_prefix("- … and "))
            .map(|l| l.split(' ').next().unwrap().parse::<usize>().unwrap())
            .sum();
        assert!(shown > 50);
        assert_eq!(shown + hidden, 3000);
        // Both groups get room, not just the first.
        let modified = body.split("Deleted (1500)").next().unwrap();
        let shown_modified = modified
            .lines()
            .filter(|l| l.starts_with("- method"))
            .count();
        assert!(
            shown_modified > 20 && shown - shown_modified > 20,
            "{shown_modified} of {shown}"
        );
        assert!(body.contains("**1500 modified · 1500 deleted** symbols"));
        assert!(body.trim_end().ends_with("</sub>"));
        assert!(body.contains("The full list: `git diffidx show 1111111...2222222`"));
    }
}
