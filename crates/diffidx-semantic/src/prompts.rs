//! What the language-model uses ask, and how their answers are read.
//!
//! Four uses, one function pair each (the question, then the reading of the
//! answer), so that every prompt is in one place and versioned
//! ([`crate::answers::PROMPT_VERSION`]):
//!
//! - a **change summary** (`semantic_delta`): one line on what a commit did
//!   to one symbol, from its text before and after;
//! - **HyDE** (hypothetical document embeddings): code that *would* answer a
//!   search question, embedded in place of the question, because code is
//!   nearer to code than a question is;
//! - **rerank**: the best few candidates of a search, reordered by the model
//!   within a budget of characters;
//! - **RAPTOR summaries**: a file summarized from its text, a directory
//!   from its children's summaries, so a question about a whole module finds
//!   it.
//!
//! Inputs are cut to fixed budgets on line boundaries, so a huge symbol
//! never makes a huge request. Answers are read defensively: models wrap
//! text in code fences and preambles, and a reader that cannot find what it
//! asked for says so (`None`), it does not guess.

use crate::llm::{ChatRequest, Message};

/// Characters of code per side of a change summary.
pub const DELTA_SIDE_CHARS: usize = 4_000;
/// The longest change summary kept (characters).
pub const SUMMARY_LINE_CHARS: usize = 200;
/// Characters of a file's text its summary is asked from.
pub const FILE_SUMMARY_CHARS: usize = 8_000;
/// Characters of children's summaries a directory summary is asked from.
pub const MODULE_SUMMARY_CHARS: usize = 8_000;
/// The longest file or directory summary kept.
pub const SUMMARY_CHARS: usize = 800;
/// The longest hypothetical document kept.
pub const HYDE_CHARS: usize = 2_000;

/// `text` cut to at most `max` bytes at a line end (or a char boundary when
/// the first line is longer), with a marker when something was cut.
pub fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut boundary = max;
    while !text.is_char_boundary(boundary) {
        boundary -= 1;
    }
    let end = match text[..boundary].rfind('\n') {
        Some(i) => i + 1,
        None => boundary,
    };
    format!("{}\n… (cut)\n", text[..end].trim_end())
}

/// Lines that are code-fence markers dropped; the rest as is.
fn without_fences(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter(|l| !l.trim_start().starts_with("```"))
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn cap(text: String, max: usize) -> String {
    if text.chars().count() <= max {
        return text;
    }
    let kept: String = text.chars().take(max.saturating_sub(1)).collect();
    format!("{}…", kept.trim_end())
}

/// The question of a change summary: what did the commit do to this symbol?
pub fn delta_request(
    kind: &str,
    qualname: &str,
    path: &str,
    before: &str,
    after: &str,
) -> ChatRequest {
    ChatRequest {
        messages: vec![
            Message::system(
                "You summarize code changes for a change log. Answer with one line of at most \
                 20 words, in the present tense, saying what the change does (not what the code \
                 is). No preamble, no code, no quotes.",
            ),
            Message::user(format!(
                "Symbol: {kind} {qualname} in {path}\n\nBefore:\n```\n{}\n```\n\nAfter:\n```\n{}\n```",
                cut(before, DELTA_SIDE_CHARS).trim_end(),
                cut(after, DELTA_SIDE_CHARS).trim_end(),
            )),
        ],
        temperature: Some(0.0),
        max_tokens: Some(80),
    }
}

/// The one line of a change summary's answer: the first line with words,
/// without fences, list marks, quotes or a "Summary:" label; `None` when
/// there is none.
pub fn one_line(answer: &str) -> Option<String> {
    let line = without_fences(answer)
        .map(str::trim)
        .find(|l| !l.is_empty())?;
    let mut line = line.trim_start_matches(['-', '*', '•', ' ']).trim();
    for label in ["summary:", "change:", "one-line summary:"] {
        if line.len() >= label.len() && line[..label.len()].eq_ignore_ascii_case(label) {
            line = line[label.len()..].trim();
        }
    }
    let line = collapse(line.trim_matches(['"', '\'', '`']));
    (!line.is_empty()).then(|| cap(line, SUMMARY_LINE_CHARS))
}

/// The question of HyDE: code that would answer `query`, in the
/// repository's languages.
pub fn hyde_request(query: &str, languages: &[&str]) -> ChatRequest {
    let languages = match languages {
        [] => "the code base's language".to_owned(),
        [one] => one.to_string(),
        more => more.join(" or "),
    };
    ChatRequest {
        messages: vec![
            Message::system(format!(
                "You write code. Given a question about a code base, write a short, plausible \
                 snippet (at most 25 lines) of the code that would answer it, in {languages}. \
                 Use descriptive names. Only code, no explanation."
            )),
            Message::user(query.to_owned()),
        ],
        temperature: Some(0.0),
        max_tokens: Some(400),
    }
}

/// The hypothetical document of a HyDE answer: its code without fences;
/// `None` when there is none.
pub fn hyde_text(answer: &str) -> Option<String> {
    let code: Vec<&str> = without_fences(answer).collect();
    let code = code.join("\n");
    let code = code.trim();
    (!code.is_empty()).then(|| cut(code, HYDE_CHARS))
}

/// One search result offered to the reranker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RerankCandidate {
    /// `kind qualname(sig) — path`.
    pub heading: String,
    pub code: String,
}

/// The question of a rerank: which of these candidates answer `query`,
/// best first? The candidates' code shares `budget` characters.
pub fn rerank_request(query: &str, candidates: &[RerankCandidate], budget: usize) -> ChatRequest {
    let per = budget / candidates.len().max(1);
    let mut listing = String::new();
    for (i, c) in candidates.iter().enumerate() {
        listing.push_str(&format!(
            "[{}] {}\n```\n{}\n```\n\n",
            i + 1,
            c.heading,
            cut(&c.code, per).trim_end()
        ));
    }
    ChatRequest {
        messages: vec![
            Message::system(
                "You rank code search results. Given a question and numbered candidates, answer \
                 with the numbers of the candidates that answer the question, most relevant \
                 first, separated by commas. Answer only with numbers.",
            ),
            Message::user(format!("Question: {query}\n\nCandidates:\n\n{listing}")),
        ],
        temperature: Some(0.0),
        max_tokens: Some(120),
    }
}

/// The candidates a rerank answer names, as indexes into the `n`
/// candidates, best first; numbers out of range and repeats are ignored.
pub fn parse_ranking(answer: &str, n: usize) -> Vec<usize> {
    let mut order = Vec::new();
    for word in answer.split(|c: char| !c.is_ascii_digit()) {
        let Ok(k) = word.parse::<usize>() else {
            continue;
        };
        if (1..=n).contains(&k) && !order.contains(&(k - 1)) {
            order.push(k - 1);
        }
    }
    order
}

/// The question of a file's summary, from its text (cut to a budget).
pub fn file_summary_request(path: &str, text: &str) -> ChatRequest {
    summary_request(
        "source file",
        format!(
            "File: {path}\n\n```\n{}\n```",
            cut(text, FILE_SUMMARY_CHARS).trim_end()
        ),
    )
}

/// The question of a directory's summary, from its children's summaries
/// (`(name, summary)`, files and directories).
pub fn module_summary_request(path: &str, children: &[(&str, &str)]) -> ChatRequest {
    let mut text = String::new();
    for (name, summary) in children {
        let line = format!("- {name}: {summary}\n");
        if text.len() + line.len() > MODULE_SUMMARY_CHARS {
            text.push_str("- … (more)\n");
            break;
        }
        text.push_str(&line);
    }
    let path = if path.is_empty() { "/" } else { path };
    summary_request(
        "directory",
        format!("Directory: {path}\n\nIts parts:\n{text}"),
    )
}

fn summary_request(what: &str, body: String) -> ChatRequest {
    ChatRequest {
        messages: vec![
            Message::system(format!(
                "You summarize code for a code search index. In at most three sentences, say \
                 what this {what} is responsible for and name its main types and functions. No \
                 preamble."
            )),
            Message::user(body),
        ],
        temperature: Some(0.0),
        max_tokens: Some(200),
    }
}

/// A file or directory summary's answer, on one line, capped; `None` when
/// empty.
pub fn summary_text(answer: &str) -> Option<String> {
    let text: Vec<&str> = without_fences(answer).collect();
    let text = collapse(&text.join(" "));
    (!text.is_empty()).then(|| cap(text, SUMMARY_CHARS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_takes_the_first_line_with_words() {
        assert_eq!(
            one_line("```\nSummary: \"Retries  the payment twice.\"\nMore.\n```").as_deref(),
            Some("Retries the payment twice.")
        );
        assert_eq!(
            one_line("\n- adds a timeout\n").as_deref(),
            Some("adds a timeout")
        );
        assert_eq!(one_line("```\n```\n  \n"), None);
        let long = "word ".repeat(100);
        let line = one_line(&long).unwrap();
        assert_eq!(line.chars().count(), SUMMARY_LINE_CHARS);
        assert!(line.ends_with('…'));
    }

    #[test]
    fn rankings_keep_valid_numbers_once_in_order() {
        assert_eq!(parse_ranking("3, 1, 3, 9, 2", 3), vec![2, 0, 1]);
        assert_eq!(parse_ranking("[2] then [1]", 2), vec![1, 0]);
        assert_eq!(parse_ranking("none of them", 4), Vec::<usize>::new());
        assert_eq!(parse_ranking("0, 5", 4), Vec::<usize>::new());
    }

    #[test]
    fn inputs_are_cut_at_line_ends() {
        let text = "aaaa\nbbbb\ncccc\n";
        assert_eq!(cut(text, 100), text);
        assert_eq!(cut(text, 11), "aaaa\nbbbb\n… (cut)\n");
        let one = "é".repeat(10);
        assert!(cut(&one, 5).starts_with("éé\n"));
        let request = delta_request("method", "A.B", "a.cs", &"x\n".repeat(5_000), "y");
        assert!(request.messages[1].content.len() < DELTA_SIDE_CHARS + 200);
    }

    #[test]
    fn hyde_keeps_the_code_without_fences() {
        assert_eq!(
            hyde_text("```csharp\nvoid Retry() {}\n```").as_deref(),
            Some("void Retry() {}")
        );
        assert_eq!(hyde_text("```\n```"), None);
        let asked = hyde_request("retry payments", &["C#", "Rust"]);
        assert!(asked.messages[0].content.contains("C# or Rust"));
    }

    #[test]
    fn rerank_candidates_share_the_budget() {
        let candidates: Vec<RerankCandidate> = (0..4)
            .map(|i| RerankCandidate {
                heading: format!("method A.M{i}() — a.cs"),
                code: "line of code\n".repeat(100),
            })
            .collect();
        let asked = rerank_request("q", &candidates, 400);
        let text = &asked.messages[1].content;
        assert!(text.contains("[4] method A.M3() — a.cs"));
        assert!(text.len() < 400 + 4 * 80 + 200, "{}", text.len());
    }

    #[test]
    fn summaries_are_one_capped_line() {
        assert_eq!(
            summary_text("Handles\nretries.\n```\n```").as_deref(),
            Some("Handles retries.")
        );
        let asked = module_summary_request("", &[("a.rs", "does a")]);
        assert!(asked.messages[1].content.starts_with("Directory: /"));
    }
}
