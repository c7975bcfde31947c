//! Reading a question: what in a query names code.
//!
//! A query is anything from `GetUserById` to a 3,000-character issue with
//! prose, code blocks and a traceback. The words that name code are few and
//! worth many words of prose, so a question is read into three bags of
//! terms that the ranking scores apart (docs/search.md has the figures):
//!
//! - **all** its words, each counted at most [`TERM_CAP`] times (a long
//!   issue repeating a word must not drown the rest), after dropping what
//!   names no code of the repository: links and the environment report
//!   (versions, platform) that issue templates ask for;
//! - the **strong** words: identifiers written as such in the prose
//!   (`snake_case`, `camelCase`, dotted paths, `call(`), short code spans,
//!   exception names and the functions of traceback frames;
//! - the words of **code blocks** (a reproduction: it names the API used,
//!   rarely the code at fault).
//!
//! Names, dotted paths, file paths and traceback frames are also kept as
//! written, for the name and path signals.

use std::collections::{BTreeMap, BTreeSet};

/// How many times one term of a question counts at most.
pub const TERM_CAP: f32 = 3.0;

/// English function words: they rank little (BM25 weighs them by their
/// rarity) and explain nothing, so a hit's evidence leaves them out.
const FUNCTION_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "does", "for", "from",
    "has", "have", "how", "if", "in", "is", "it", "its", "me", "my", "no", "not", "of", "on", "or",
    "so", "that", "the", "then", "there", "this", "to", "was", "we", "what", "when", "which",
    "will", "with", "would", "you", "should", "could", "also", "been", "did", "here", "just",
    "than", "them", "they", "these", "those", "were", "where", "why", "our", "your", "all", "any",
];

/// A frame of a traceback (`File "x/y.py", line 12, in frob`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub path: String,
    pub function: String,
}

/// What a query says, read for ranking.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Question {
    /// Every term with its count (capped), in order of appearance.
    pub terms: Vec<(String, f32)>,
    /// The terms of the strong words, each once.
    pub strong: Vec<(String, f32)>,
    /// The terms of code blocks, each once.
    pub code: Vec<(String, f32)>,
    /// The terms of the first line (an issue's title, a commit's subject),
    /// each once: where the asker says in a few words what is wrong.
    pub title: Vec<(String, f32)>,
    /// Adjacent parts of its words, each pair one term with its count
    /// (capped): "content length" and `content_length` are both
    /// `contentlength`, to meet the names that join the two.
    pub pairs: Vec<(String, f32)>,
    /// Every word as written (identifiers whole: `resolve_redirects`).
    pub words: BTreeSet<String>,
    /// The strong words and the identifiers of code blocks, as written.
    pub code_words: BTreeSet<String>,
    /// Dotted names as written (`Session.resolve_redirects`).
    pub dotted: Vec<String>,
    /// File paths named (`xarray/core/variable.py`), as written.
    pub paths: Vec<String>,
    /// Traceback frames, in the order written.
    pub frames: Vec<Frame>,
}

impl Question {
    pub fn read(query: &str) -> Question {
        let text = without_boilerplate(query);
        let mut q = Question::default();
        let mut all = Counted::default();
        let mut strong: BTreeSet<String> = BTreeSet::new();
        let mut code: BTreeSet<String> = BTreeSet::new();
        let mut pairs = Counted::default();
        let mut in_block = false;
        for line in text.lines() {
            let trimmed = line.trim_start();
            if trimmed.starts_with("```") {
                in_block = !in_block;
                continue;
            }
            if let Some(frame) = frame(line) {
                strong.insert(frame.function.clone());
                q.frames.push(frame);
            }
            for word in words(line) {
                q.words.insert(word.to_owned());
                for term in super::text::word_terms(word) {
                    if term.len() < 2 {
                        continue;
                    }
                    all.add(term);
                }
            }
            let line_parts: Vec<String> = words(line).flat_map(super::parts::split).collect();
            for pair in super::text::part_pairs(&line_parts) {
                pairs.add(pair);
            }
            for path in paths(line) {
                push_once(&mut q.paths, path.to_owned());
            }
            for dotted in dotted(line) {
                push_once(&mut q.dotted, dotted.to_owned());
            }
            if in_block {
                code.extend(identifiers(line).map(str::to_owned));
                continue;
            }
            // Prose: its identifiers and its short code spans are strong.
            for (i, piece) in line.split('`').enumerate() {
                let span = i % 2 == 1;
                if span && piece.split_whitespace().count() <= 4 {
                    strong.extend(identifiers(piece).map(str::to_owned));
                    continue;
                }
                let bytes = piece.as_bytes();
                for word in identifiers(piece) {
                    let at = word.as_ptr() as usize - piece.as_ptr() as usize;
                    let called = bytes.get(at + word.len()) == Some(&b'(');
                    if called || looks_like_code(word) || is_exception(word) {
                        strong.insert(word.to_owned());
                    }
                }
                for dotted in dotted(piece) {
                    strong.extend(dotted.split('.').map(str::to_owned));
                }
            }
        }
        q.terms = all.into_terms();
        q.pairs = pairs.into_terms();
        if let Some(first) = text.lines().find(|l| !l.trim().is_empty()) {
            q.title = terms_once(&words(first).map(str::to_owned).collect());
        }
        q.strong = terms_once(&strong);
        q.code = terms_once(&code);
        q.code_words = strong.into_iter().chain(code).collect();
        q
    }

    /// The terms that can explain a hit: all but function words.
    pub fn telling_terms(&self) -> Vec<(String, f32)> {
        self.terms
            .iter()
            .filter(|(t, _)| !FUNCTION_WORDS.contains(&t.as_str()))
            .cloned()
            .collect()
    }

    /// The question's first line (an issue's title, a commit's subject)
    /// says "test" or "tests": it is about test code, which then ranks as
    /// any other code.
    pub fn title_speaks_of_tests(query: &str) -> bool {
        query
            .lines()
            .find(|l| !l.trim().is_empty())
            .is_some_and(|l| {
                words(l).any(|w| w.eq_ignore_ascii_case("test") || w.eq_ignore_ascii_case("tests"))
            })
    }

    /// The query is a name or a few words, answered as `search` always
    /// answered them (the name tier first).
    pub fn is_short(query: &str) -> bool {
        query.split_whitespace().count() <= 3 && !query.contains('\n')
    }
}

/// Terms with their counts, each at most [`TERM_CAP`], in the order they
/// first came.
#[derive(Default)]
struct Counted {
    counts: BTreeMap<String, f32>,
    order: Vec<String>,
}

impl Counted {
    fn add(&mut self, term: String) {
        let count = self.counts.entry(term.clone()).or_insert_with(|| {
            self.order.push(term);
            0.0
        });
        *count = (*count + 1.0).min(TERM_CAP);
    }

    fn into_terms(mut self) -> Vec<(String, f32)> {
        self.order
            .into_iter()
            .map(|t| {
                let n = self.counts.remove(&t).unwrap_or_default();
                (t, n)
            })
            .collect()
    }
}

fn push_once(list: &mut Vec<String>, item: String) {
    if !list.contains(&item) {
        list.push(item);
    }
}

/// The terms of `words`, each once.
fn terms_once(words: &BTreeSet<String>) -> Vec<(String, f32)> {
    let mut seen = BTreeSet::new();
    words
        .iter()
        .flat_map(|w| super::text::word_terms(w))
        .filter(|t| t.len() >= 2 && seen.insert(t.clone()))
        .map(|t| (t, 1.0))
        .collect()
}

/// `query` without links and without the environment report of issue
/// templates (`INSTALLED VERSIONS` blocks, `OS: …`, `Python version: …`
/// lines): words that name no code of the repository, yet often outnumber
/// those that do.
fn without_boilerplate(query: &str) -> String {
    const REPORT_KEYS: &[&str] = &[
        "os",
        "python",
        "python version",
        "platform",
        "operating system",
        "version",
        "versions",
        "pip",
        "conda",
        "environment",
        "numpy",
        "pandas",
        "extra tools",
    ];
    let mut out: Vec<String> = Vec::new();
    let mut in_report = false;
    for line in query.lines() {
        let trimmed = line.trim();
        if trimmed.contains("INSTALLED VERSIONS") {
            in_report = true;
            drop_report_title(&mut out);
            continue;
        }
        if in_report {
            if trimmed.starts_with("```") || trimmed.starts_with("</details>") {
                in_report = false;
                out.push(line.to_owned());
            }
            continue;
        }
        let key = trimmed
            .trim_start_matches(['-', '*', ' '])
            .split_once(':')
            .map(|(k, _)| k.trim_matches(['*', ' ']).to_lowercase());
        if key.is_some_and(|k| REPORT_KEYS.contains(&k.as_str()) || k.ends_with(" version")) {
            continue;
        }
        let mut kept = String::with_capacity(line.len());
        for word in line.split_inclusive(char::is_whitespace) {
            let link = ["http://", "https://", "git://", "git@"]
                .iter()
                .any(|p| word.trim_start().starts_with(p) || word.contains(&format!("({p}")));
            if !link {
                kept.push_str(word);
            }
        }
        out.push(kept);
    }
    let mut text = out.join("\n");
    text.push('\n');
    text
}

/// Drops the title of an environment report from the lines before it: the
/// blank, `<details>` and fence lines, then one heading (`#### Output of
/// xr.show_versions()`, `**Environment**`), whose names are the report
/// tool's, not the issue's.
fn drop_report_title(lines: &mut Vec<String>) {
    let filler = |l: &str| {
        let t = l.trim();
        t.is_empty() || t.starts_with("<details") || t.starts_with("<summary") || t == "```"
    };
    while lines.last().is_some_and(|l| filler(l)) {
        lines.pop();
    }
    let heading = |l: &str| {
        let t = l.trim();
        t.starts_with('#') || (t.starts_with("**") && t.ends_with("**"))
    };
    if lines.last().is_some_and(|l| heading(l)) {
        lines.pop();
    }
}

/// The words of a line: runs of letters, digits and `_`.
fn words(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// The identifiers of a line: words that do not start with a digit.
fn identifiers(line: &str) -> impl Iterator<Item = &str> {
    words(line).filter(|w| w.chars().next().is_some_and(|c| !c.is_numeric()) && w.len() >= 2)
}

/// Dotted names of a line (`a.b`, `Session.send`), not file names or
/// hosts (`setup.py`, `github.com`).
fn dotted(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .map(|w| w.trim_matches('.'))
        .filter(|w| {
            let segments: Vec<&str> = w.split('.').collect();
            segments.len() >= 2
                && segments.iter().all(|s| {
                    s.chars()
                        .next()
                        .is_some_and(|c| c.is_alphabetic() || c == '_')
                })
                && !matches!(
                    segments.last().copied(),
                    Some(
                        "com"
                            | "org"
                            | "io"
                            | "net"
                            | "html"
                            | "htm"
                            | "txt"
                            | "rst"
                            | "md"
                            | "py"
                            | "pyi"
                            | "rs"
                            | "cs"
                            | "java"
                            | "go"
                            | "ts"
                            | "js"
                            | "cfg"
                            | "toml"
                            | "ini"
                            | "json"
                            | "yml"
                            | "yaml"
                    )
                )
        })
}

/// File paths of a line: words ending in a source extension.
fn paths(line: &str) -> impl Iterator<Item = &str> {
    const SOURCE: &[&str] = &[
        ".py", ".pyi", ".rs", ".cs", ".java", ".go", ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs",
        ".mts", ".cts",
    ];
    line.split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '.' | '/' | '\\' | '-')))
        .map(|w| w.trim_start_matches("./"))
        .filter(|w| SOURCE.iter().any(|e| w.len() > e.len() && w.ends_with(e)))
}

/// Written like an identifier rather than a word: with `_` between
/// letters, or an inner capital (`getUser`, `HTTPServer`).
fn looks_like_code(word: &str) -> bool {
    let inner_capital =
        word.chars().skip(1).any(|c| c.is_uppercase()) && word.chars().any(|c| c.is_lowercase());
    let snake = word.trim_matches('_').contains('_') || (word.starts_with("__") && word.len() > 4);
    snake || inner_capital
}

fn is_exception(word: &str) -> bool {
    ["Error", "Exception", "Warning"]
        .iter()
        .any(|s| word.len() > s.len() && word.ends_with(s))
}

/// A Python traceback frame: `File "PATH", line N, in FUNC`.
fn frame(line: &str) -> Option<Frame> {
    let rest = line.trim_start().strip_prefix("File \"")?;
    let (path, rest) = rest.split_once('"')?;
    let function = rest.rsplit_once(" in ")?.1.trim();
    Some(Frame {
        path: path.replace('\\', "/"),
        function: function.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has(terms: &[(String, f32)], term: &str) -> bool {
        terms.iter().any(|(t, _)| t == term)
    }

    #[test]
    fn identifiers_in_prose_are_strong_and_counts_are_capped() {
        let q = Question::read(
            "redirect redirect redirect redirect: `resolve_redirects` loses the method; \
             Session.send( calls it and raises a RedirectError",
        );
        let count = |t: &str| q.terms.iter().find(|x| x.0 == t).map_or(0.0, |x| x.1);
        assert_eq!(count("redirect"), TERM_CAP);
        assert_eq!(count("method"), 1.0);
        for strong in [
            "resolveredirects",
            "resolve",
            "session",
            "send",
            "redirecterror",
        ] {
            assert!(has(&q.strong, strong), "{strong}: {:?}", q.strong);
        }
        // Prose words stay weak; "redirect" is strong only as a part of
        // `RedirectError`.
        for weak in ["method", "loses", "calls"] {
            assert!(!has(&q.strong, weak), "{weak}: {:?}", q.strong);
        }
        assert!(q.code_words.contains("resolve_redirects"));
        assert_eq!(q.dotted, ["Session.send"]);
        // Words side by side, in prose or in one identifier, make pairs.
        let pairs = Question::read("the content length header\n`prepare_content_length`").pairs;
        let count = |t: &str| pairs.iter().find(|x| x.0 == t).map_or(0.0, |x| x.1);
        assert_eq!(count("contentlength"), 2.0);
        assert_eq!(count("lengthheader"), 1.0);
        assert_eq!(count("preparecontent"), 1.0);
        assert_eq!(count("headerprepare"), 0.0, "{pairs:?}");
    }

    #[test]
    fn code_blocks_paths_and_frames_are_read() {
        let q = Question::read(
            "It fails:\n```python\nimport xarray\nds.frobnicate(dim=1)\n```\n\
             Traceback (most recent call last):\n  \
             File \"/usr/lib/xarray/core/variable.py\", line 12, in as_compatible_data\n\
             see xarray/core/dataset.py too",
        );
        assert!(has(&q.code, "frobnicate"));
        assert!(!has(&q.strong, "frobnicate"));
        assert!(has(&q.strong, "ascompatibledata"));
        assert_eq!(
            q.frames,
            [Frame {
                path: "/usr/lib/xarray/core/variable.py".into(),
                function: "as_compatible_data".into()
            }]
        );
        assert!(q.paths.contains(&"xarray/core/dataset.py".to_owned()));
        assert!(
            !q.dotted.iter().any(|d| d.ends_with(".py")),
            "{:?}",
            q.dotted
        );
    }

    #[test]
    fn the_first_line_is_the_title() {
        let q = Question::read("\n  \nRedirects lose the method\n\nfrobnicate() is called");
        assert!(has(&q.title, "redirects"), "{:?}", q.title);
        assert!(has(&q.title, "method"));
        assert!(!has(&q.title, "frobnicate"));
        assert!(has(&q.terms, "frobnicate"));
    }

    #[test]
    fn links_and_environment_reports_are_dropped() {
        let q = Question::read(
            "Plotting fails, see https://example.com/frobnicator/issues/1\n\
             **Python version**: 3.11\nOS: linux\n\
             INSTALLED VERSIONS\n------------------\nnumpy: 1.2\nscipy: 1.0\n```\nafter",
        );
        for gone in ["frobnicator", "linux", "scipy", "numpy"] {
            assert!(!has(&q.terms, gone), "{gone}: {:?}", q.terms);
        }
        assert!(has(&q.terms, "plotting"));
        assert!(has(&q.terms, "after"));
        // The report's title goes with it; the heading before is the issue's.
        let q = Question::read(
            "#### Problem\n`Dataset.pad` drops attrs\n\
             #### Output of ``xr.show_versions()``\n\n<details>\n\n\
             INSTALLED VERSIONS\n------------------\npython: 3.6\n</details>",
        );
        assert!(!has(&q.terms, "showversions"), "{:?}", q.terms);
        assert!(!q.words.contains("show_versions"));
        assert!(has(&q.strong, "pad"));
        assert!(has(&q.terms, "problem"));
    }

    #[test]
    fn a_title_that_says_test_is_about_tests() {
        assert!(Question::title_speaks_of_tests(
            "\nAdd tests for --exec\nbody"
        ));
        assert!(Question::title_speaks_of_tests(
            "Test: the walker skips links"
        ));
        assert!(!Question::title_speaks_of_tests(
            "pytest crashes\nin my test suite"
        ));
        assert!(!Question::title_speaks_of_tests("test_walk fails on links"));
    }

    #[test]
    fn short_queries_are_names() {
        assert!(Question::is_short("GetUserById"));
        assert!(Question::is_short("retry backoff jitter"));
        assert!(!Question::is_short("redirects lose the original method"));
    }
}
