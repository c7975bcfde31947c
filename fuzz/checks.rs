//! What each fuzz target checks, shared with the corpus replay test
//! (`tests/fuzz_corpora.rs`) so that CI runs every saved input through the
//! same assertions on the stable toolchain.
//!
//! Every check takes raw bytes; none may panic, overflow the stack or hang,
//! and each asserts the property its input must keep.

#![allow(dead_code)] // each target uses one check

use diffidx_core::git::patch;
use diffidx_core::lang::MAX_NESTING;
use diffidx_core::note::{Diagnostic, NoteDocument, Problem};
use diffidx_core::symbol::MAX_NAME_BYTES;
use diffidx_core::{symbol_id, Extractor, Language, Status, SymbolDelta, SymbolKind};
use diffidx_github::markdown::{render, LinkBase, PullRequestChange};
use diffidx_github::RepoName;

const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";
const PARENT: &str = "89abcdef0123456789abcdef0123456789abcdef";

/// Extraction of any text in any language (the first byte picks it; C# goes
/// through its preprocessor pass): symbols fit a note and form a tree, and an
/// incremental reparse from the text with its last byte dropped agrees with
/// a full parse.
pub fn extraction(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let languages: Vec<Language> = Language::all().collect();
    let language = languages[pick as usize % languages.len()];
    let source = String::from_utf8_lossy(rest);
    thread_local! {
        static EXTRACTOR: std::cell::RefCell<Extractor> =
            std::cell::RefCell::new(Extractor::new().expect("grammars load"));
    }
    EXTRACTOR.with_borrow_mut(|extractor| extract_and_check(extractor, language, &source));
}

fn extract_and_check(extractor: &mut Extractor, language: Language, source: &str) {
    let full = extractor.extract_incremental(language, source, None);
    for (i, s) in full.symbols.symbols.iter().enumerate() {
        assert!(!s.qualname.is_empty() && s.qualname.len() <= MAX_NAME_BYTES);
        assert!(s.sig.len() <= MAX_NAME_BYTES);
        assert!(s.start_line >= 1 && s.end_line >= s.start_line, "{s:?}");
        assert!(
            s.parent.is_none_or(|p| p < i),
            "a parent precedes its members"
        );
        let depth = std::iter::successors(s.parent, |&p| full.symbols.symbols[p].parent).count();
        assert!(depth < MAX_NESTING as usize * 2, "{depth}");
    }
    let mut shorter = source.to_string();
    shorter.pop();
    let old = extractor.extract_incremental(language, &shorter, None);
    let state = old.state.expect("a parse");
    let incremental = extractor.extract_incremental(language, source, Some((&state, &shorter)));
    assert_eq!(incremental.symbols, full.symbols);
}

/// A unified diff as `show --patch` reads it; bytes after a NUL are the
/// pre-image it is applied to. Line changes are ordered and in range.
pub fn unified_diff(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (patch_text, pre_image) = text.split_once('\0').unwrap_or((&text, ""));
    let Ok(files) = patch::parse(patch_text) else {
        return;
    };
    for file in files {
        for change in file.line_changes() {
            assert!(change.old.start <= change.old.end && change.new.start <= change.new.end);
        }
        if let Ok(post) = file.apply(pre_image) {
            assert!(post.len() <= pre_image.len() + patch_text.len() * 2);
        }
    }
}

/// A note from anywhere: the reader either rejects it with a reason or
/// accepts a document that serializes back to a note it accepts again. The
/// commit and parent it is checked against are the ones it claims (when it
/// names any), so that inputs get past that first check.
pub fn note_reader(data: &[u8]) {
    let claimed: Option<serde_json::Value> = serde_json::from_slice(data).ok();
    let field =
        |name: &str| -> Option<String> { claimed.as_ref()?.get(name)?.as_str().map(str::to_owned) };
    let commit = field("commit").unwrap_or_else(|| COMMIT.to_owned());
    for parent in [field("parent"), None, Some(PARENT.to_owned())] {
        let parent = parent.as_deref();
        if let Ok(note) = NoteDocument::from_untrusted(data, &commit, parent) {
            let again = NoteDocument::from_untrusted(note.to_json().as_bytes(), &commit, parent)
                .expect("a note the reader accepted is accepted again");
            assert_eq!(again, note);
        }
    }
}

/// The PR comment with names, paths and signatures taken from the input
/// (split at 0xFF bytes): parsed as CommonMark, every untrusted text stays
/// inside an inline code span, the only HTML is the marker on line one, and
/// every link points into the repository.
pub fn pr_comment(data: &[u8]) {
    use pulldown_cmark::{Event, Parser, Tag};
    let parts: Vec<String> = data
        .split(|&b| b == 0xFF)
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    let part = |i: usize| {
        parts
            .get(i % parts.len().max(1))
            .cloned()
            .unwrap_or_default()
    };
    let statuses = [
        Status::Modified,
        Status::Deleted,
        Status::Added,
        Status::Moved,
    ];
    let deltas: Vec<SymbolDelta> = (0..parts.len().min(12))
        .map(|i| {
            let (path, qualname, sig) = (part(i), part(i + 1), part(i + 2));
            let status = statuses[i % statuses.len()];
            SymbolDelta {
                id: symbol_id(&path, SymbolKind::Method, &qualname, &sig),
                status,
                kind: SymbolKind::Method,
                old_path: (status == Status::Moved).then(|| part(i + 3)),
                path,
                qualname,
                sig,
                parent_id: None,
                start_line: 1 + i as u32,
                end_line: 2 + i as u32,
                content_hash: None,
                modified: (status == Status::Moved).then_some(i % 2 == 0),
                from: None,
            }
        })
        .collect();
    let diagnostics: Vec<Diagnostic> = parts
        .iter()
        .take(3)
        .map(|p| Diagnostic {
            path: p.clone(),
            problem: Problem::ParseErrors,
            detail: Some(p.clone()),
        })
        .collect();
    let languages: Vec<Language> = Language::all().collect();
    let change = PullRequestChange {
        deltas: &deltas,
        diagnostics: &diagnostics,
        source_files: deltas.len(),
        languages: &languages,
        base_sha: PARENT,
        head_sha: COMMIT,
        links: Some(LinkBase {
            server_url: "https://github.com".into(),
            repo: RepoName::parse("acme/widgets").expect("a repository name"),
        }),
        signature_changed: deltas.iter().map(|d| d.id.clone()).collect(),
        // The Impact section lists names and paths from the input too.
        impact: Some(diffidx_github::Impact {
            depth: 2,
            symbols: deltas.len(),
            files: 1,
            closest: deltas
                .iter()
                .take(diffidx_github::markdown::IMPACT_SHOWN)
                .map(|d| diffidx_github::markdown::Reached {
                    name: d.qualname.clone(),
                    path: d.path.clone(),
                    line: d.start_line,
                    distance: 1,
                    edge: "calls".into(),
                    resolution: "scoped".into(),
                    through: Some(d.qualname.clone()),
                })
                .collect(),
            // Names from the input, in code spans like the rest.
            unresolved_calls: 1,
            more_by_name: 2,
            unresolved_names: deltas.iter().take(3).map(|d| d.qualname.clone()).collect(),
        }),
    };
    let body = render(&change, 8_000);
    assert!(body.len() <= 8_000, "{}", body.len());
    let mut link_depth = 0;
    for (event, range) in Parser::new(&body).into_offset_iter() {
        let line = body[..range.start].matches('\n').count();
        match event {
            Event::Html(html) | Event::InlineHtml(html) => {
                let html = html.trim();
                let allowed = (line == 0 && html == diffidx_github::MARKER)
                    || ["</details>", "<sub>", "</sub>"].contains(&html)
                    || is_group_heading(html)
                    || is_impact_heading(html);
                assert!(allowed, "HTML that is not the template's: {html:?}");
            }
            Event::Start(Tag::Link { dest_url, .. }) => {
                link_depth += 1;
                let prefix = "https://github.com/acme/widgets/blob/";
                assert!(dest_url.starts_with(prefix), "{dest_url}");
                assert!(!dest_url[prefix.len()..].contains(['(', ')', ' ', '<', '>']));
            }
            Event::End(pulldown_cmark::TagEnd::Link) => link_depth -= 1,
            Event::Start(Tag::Image { .. }) => panic!("an image in {body}"),
            Event::Text(text) if link_depth > 0 => {
                panic!("link text outside a code span: {text:?}")
            }
            // Outside code spans only the template's own words remain: no
            // @mention or #123 reference can come from a name.
            Event::Text(text) => {
                assert!(!text.contains('@'), "a mention outside a span: {text:?}");
                let reference = text
                    .split('#')
                    .skip(1)
                    .any(|after| after.starts_with(|c: char| c.is_ascii_digit()));
                assert!(!reference, "a reference outside a span: {text:?}");
            }
            _ => {}
        }
    }
}

/// `<details[ open]><summary><strong>Group (N)</strong></summary>`.
/// The Impact section's heading: only numbers vary.
fn is_impact_heading(html: &str) -> bool {
    let Some(inner) = html
        .strip_prefix("<details><summary><strong>Impact</strong>: ")
        .and_then(|r| r.strip_suffix(" call, inherit or implement what changed</summary>"))
    else {
        return false;
    };
    let inner = inner.strip_prefix("at least ").unwrap_or(inner);
    let words: Vec<&str> = inner.split(' ').collect();
    matches!(
        words.as_slice(),
        [n, "symbol" | "symbols", "in", f, "file" | "files", "within", d, "hop" | "hops"]
            if [n, f, d].iter().all(|x| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit()))
    )
}

fn is_group_heading(html: &str) -> bool {
    let Some(rest) = html
        .strip_prefix("<details open>")
        .or_else(|| html.strip_prefix("<details>"))
    else {
        return false;
    };
    let Some(inner) = rest
        .strip_prefix("<summary><strong>")
        .and_then(|r| r.strip_suffix(")</strong></summary>"))
    else {
        return false;
    };
    let Some((title, count)) = inner.split_once(" (") else {
        return false;
    };
    ["Modified", "Deleted", "Added", "Moved"].contains(&title)
        && !count.is_empty()
        && count.bytes().all(|b| b.is_ascii_digit())
}
