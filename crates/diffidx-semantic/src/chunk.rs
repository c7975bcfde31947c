//! Deterministic chunks that follow the symbol hierarchy.
//!
//! Each symbol gives its own chunks: a member its whole text, a type or
//! module its header (its lines without those of its members, which have
//! their own chunks) when that says more than the declaration. The comments and attributes right above a symbol go
//! with it: they are often the best description of what code does. Every
//! chunk starts with a heading line (`method Acme.Billing.Charge(decimal)`),
//! so a part of a long body still says whose it is.
//!
//! A text longer than the budget is split at a statement boundary (a line
//! back at the body's own indentation) with a few lines of overlap, so no
//! chunk is cut off by the model's token limit.
//!
//! A chunk's id is blake3(path, qualname, chunk index, content hash): the
//! same code at the same place always has the same id.

/// One symbol of a file, as the chunker needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkSymbol<'a> {
    /// The symbol's id in the notes and the store.
    pub symbol_id: &'a str,
    pub kind: &'a str,
    pub qualname: &'a str,
    pub sig: &'a str,
    /// Index of the enclosing symbol in the same list.
    pub parent: Option<usize>,
    /// 1-based inclusive line range.
    pub lines: (u32, u32),
}

/// One piece of text to embed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// blake3(path, qualname, index, content hash), hex.
    pub id: String,
    pub symbol_id: String,
    /// The chunk's position among its symbol's chunks.
    pub index: u32,
    /// The 1-based inclusive lines of code it covers (its comments aside).
    pub lines: (u32, u32),
    pub text: String,
}

/// How large chunks get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkBudget {
    /// Characters of code per chunk (heading and comments aside); about
    /// 256 word pieces of code, the model's limit.
    pub max_chars: usize,
    /// Lines a split part repeats from the part before it.
    pub overlap_lines: usize,
}

impl Default for ChunkBudget {
    fn default() -> Self {
        ChunkBudget {
            max_chars: 900,
            overlap_lines: 2,
        }
    }
}

/// What belongs to a symbol above its first line, per language.
struct LeadingLines {
    comments: &'static [&'static str],
    attributes: &'static [&'static str],
}

/// One entry per language (by `Language::name`); adding a language is a line.
static LEADING: &[(&str, LeadingLines)] = &[
    (
        "csharp",
        LeadingLines {
            comments: &["//", "/*", "*"],
            attributes: &["["],
        },
    ),
    (
        "rust",
        LeadingLines {
            comments: &["//", "/*", "*"],
            attributes: &["#["],
        },
    ),
    (
        "python",
        LeadingLines {
            comments: &["#"],
            attributes: &["@"],
        },
    ),
    (
        "java",
        LeadingLines {
            comments: &["//", "/*", "*"],
            attributes: &["@"],
        },
    ),
    (
        "go",
        LeadingLines {
            comments: &["//", "/*", "*"],
            attributes: &[],
        },
    ),
    (
        "typescript",
        LeadingLines {
            comments: &["//", "/*", "*"],
            attributes: &["@"],
        },
    ),
    (
        "tsx",
        LeadingLines {
            comments: &["//", "/*", "*"],
            attributes: &["@"],
        },
    ),
    (
        "javascript",
        LeadingLines {
            comments: &["//", "/*", "*"],
            attributes: &["@"],
        },
    ),
];

const NO_LEADING: LeadingLines = LeadingLines {
    comments: &[],
    attributes: &[],
};

/// The chunks of one file version: `text` is the file, `symbols` its
/// symbols in the extractor's order, `language` a `Language::name`.
pub fn chunk_file(
    path: &str,
    language: &str,
    text: &str,
    symbols: &[ChunkSymbol<'_>],
    budget: ChunkBudget,
) -> Vec<Chunk> {
    let lines: Vec<&str> = text.lines().collect();
    let leading = LEADING
        .iter()
        .find(|(name, _)| *name == language)
        .map_or(&NO_LEADING, |(_, l)| l);
    let line = |n: u32| lines[(n - 1) as usize];
    // Where each symbol starts with the comments and attributes above it.
    let lead: Vec<u32> = symbols
        .iter()
        .map(|s| {
            let mut n = s.lines.0.clamp(1, lines.len().max(1) as u32);
            while n > 1 && n <= lines.len() as u32 {
                let l = line(n - 1).trim_start();
                let belongs = !l.is_empty()
                    && (leading.comments.iter().any(|p| l.starts_with(p))
                        || leading.attributes.iter().any(|p| l.starts_with(p)));
                if !belongs {
                    break;
                }
                n -= 1;
            }
            n
        })
        .collect();
    let mut children: Vec<Vec<(u32, u32)>> = vec![Vec::new(); symbols.len()];
    for (i, s) in symbols.iter().enumerate() {
        if let Some(p) = s.parent.filter(|&p| p < symbols.len()) {
            children[p].push((lead[i], s.lines.1));
        }
    }
    let mut chunks = Vec::new();
    for (i, s) in symbols.iter().enumerate() {
        let (start, end) = (s.lines.0.max(1), s.lines.1.min(lines.len() as u32));
        if start > end {
            continue;
        }
        // Its own lines: those of no member, blank ones aside.
        let own: Vec<u32> = (start..=end)
            .filter(|&n| !children[i].iter().any(|&(a, b)| a <= n && n <= b))
            .filter(|&n| !line(n).trim().is_empty())
            .collect();
        let above: Vec<&str> = (lead[i]..start).map(line).collect();
        // A container whose own text is its declaration and braces says no
        // more than its name (which the name tier finds): no chunk, or its
        // name would outrank the members that do the work.
        let says_something = !above.is_empty()
            || own
                .iter()
                .skip(1)
                .any(|&n| line(n).chars().any(char::is_alphanumeric));
        if !children[i].is_empty() && !says_something {
            continue;
        }
        let heading = format!("{} {}{}", s.kind, s.qualname, s.sig);
        for (index, part) in split(&own, &|n| line(n), budget).into_iter().enumerate() {
            let mut text = heading.clone();
            if index == 0 {
                for l in &above {
                    text.push('\n');
                    text.push_str(l.trim_end());
                }
            }
            for &n in &part {
                text.push('\n');
                text.push_str(line(n).trim_end());
            }
            chunks.push(Chunk {
                id: chunk_id(path, s.qualname, index as u32, &text),
                symbol_id: s.symbol_id.to_owned(),
                index: index as u32,
                lines: (part[0], part[part.len() - 1]),
                text,
            });
        }
    }
    chunks
}

/// The id of a chunk.
pub fn chunk_id(path: &str, qualname: &str, index: u32, text: &str) -> String {
    let content = blake3::hash(text.as_bytes());
    let mut h = blake3::Hasher::new();
    h.update(&(path.len() as u64).to_le_bytes());
    h.update(path.as_bytes());
    h.update(&(qualname.len() as u64).to_le_bytes());
    h.update(qualname.as_bytes());
    h.update(&index.to_le_bytes());
    h.update(content.as_bytes());
    h.finalize().to_hex().to_string()
}

/// Splits `own` (line numbers) into parts within the budget, each ending at
/// a statement boundary where one is in reach, each after the first
/// repeating the last `overlap_lines` lines of the one before.
fn split<'t>(own: &[u32], line: &dyn Fn(u32) -> &'t str, budget: ChunkBudget) -> Vec<Vec<u32>> {
    if own.is_empty() {
        return Vec::new();
    }
    let size = |n: u32| line(n).trim().len() + 1;
    if own.iter().map(|&n| size(n)).sum::<usize>() <= budget.max_chars {
        return vec![own.to_vec()];
    }
    let indent = |n: u32| {
        let l = line(n);
        l.len() - l.trim_start().len()
    };
    // The body's own indentation: the least of its lines between the
    // first and the last (the declaration and the closing brace).
    let base = own
        .get(1..own.len() - 1)
        .unwrap_or(&[])
        .iter()
        .filter(|&&n| !line(n).trim().is_empty())
        .map(|&n| indent(n))
        .min()
        .unwrap_or(0);
    let boundary = |n: u32| {
        let l = line(n).trim();
        l.is_empty() || (indent(n) <= base && !l.ends_with(['(', ',', '.', '=', '+', '&', '|']))
    };
    let mut parts = Vec::new();
    let mut start = 0;
    loop {
        let mut used = 0;
        let mut end = start;
        let mut cut = None;
        while end < own.len() && (end == start || used + size(own[end]) <= budget.max_chars) {
            used += size(own[end]);
            if boundary(own[end]) {
                cut = Some(end);
            }
            end += 1;
        }
        if end == own.len() {
            parts.push(own[start..].to_vec());
            return parts;
        }
        // Cut after the last boundary in the second half of the window,
        // else where the budget ran out.
        let last = match cut {
            Some(c) if c > start + (end - start) / 2 => c,
            _ => end - 1,
        };
        parts.push(own[start..=last].to_vec());
        let next = (last + 1).saturating_sub(budget.overlap_lines);
        start = next.max(start + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym<'a>(
        id: &'a str,
        kind: &'a str,
        q: &'a str,
        parent: Option<usize>,
        lines: (u32, u32),
    ) -> ChunkSymbol<'a> {
        ChunkSymbol {
            symbol_id: id,
            kind,
            qualname: q,
            sig: "",
            parent,
            lines,
        }
    }

    const FILE: &str = "\
using System;

namespace Acme
{
    /// Charges cards.
    public class Billing
    {
        private int tries;

        /// Retries a failed payment.
        [Obsolete]
        public void Retry()
        {
            tries++;
        }
    }
}
";

    #[test]
    fn a_container_keeps_its_header_and_its_members_their_own_text() {
        let symbols = [
            sym("ns", "namespace", "Acme", None, (3, 17)),
            sym("c", "class", "Acme.Billing", Some(0), (6, 16)),
            sym("f", "field", "Acme.Billing.tries", Some(1), (8, 8)),
            sym("m", "method", "Acme.Billing.Retry", Some(1), (12, 15)),
        ];
        let chunks = chunk_file("a.cs", "csharp", FILE, &symbols, ChunkBudget::default());
        let text = |id: &str| {
            chunks
                .iter()
                .find(|c| c.symbol_id == id)
                .map(|c| c.text.as_str())
                .unwrap()
        };
        assert_eq!(
            text("c"),
            "class Acme.Billing\n    /// Charges cards.\n    public class Billing\n    {\n    }"
        );
        assert_eq!(
            text("m"),
            "method Acme.Billing.Retry\n        /// Retries a failed payment.\n        [Obsolete]\n        public void Retry()\n        {\n            tries++;\n        }"
        );
        // The namespace is a name and braces: no chunk.
        assert!(chunks.iter().all(|c| c.symbol_id != "ns"));
        assert_eq!(chunks.len(), 3);
    }

    #[test]
    fn ids_depend_on_place_and_content_only() {
        let symbols = [sym("m", "method", "Acme.Billing.Retry", None, (12, 15))];
        let a = chunk_file("a.cs", "csharp", FILE, &symbols, ChunkBudget::default());
        let b = chunk_file("a.cs", "csharp", FILE, &symbols, ChunkBudget::default());
        assert_eq!(a, b);
        let moved = chunk_file("b.cs", "csharp", FILE, &symbols, ChunkBudget::default());
        assert_ne!(a[0].id, moved[0].id);
        let edited = FILE.replace("tries++", "tries += 2");
        let c = chunk_file("a.cs", "csharp", &edited, &symbols, ChunkBudget::default());
        assert_ne!(a[0].id, c[0].id);
    }

    #[test]
    fn a_long_body_is_split_at_statements_with_overlap() {
        let mut file = String::from("fn long() {\n");
        for i in 0..60 {
            file.push_str(&format!(
                "    let value_{i} = compute(\n        {i},\n    );\n"
            ));
        }
        file.push_str("}\n");
        let end = file.lines().count() as u32;
        let symbols = [sym("f", "function", "long", None, (1, end))];
        let budget = ChunkBudget {
            max_chars: 300,
            overlap_lines: 2,
        };
        let chunks = chunk_file("a.rs", "rust", &file, &symbols, budget);
        assert!(chunks.len() > 3, "{}", chunks.len());
        let lines: Vec<&str> = file.lines().collect();
        for (i, c) in chunks.iter().enumerate() {
            assert_eq!(c.index as usize, i);
            assert!(c.text.starts_with("function long\n"));
            let code: usize = c.text.lines().skip(1).map(|l| l.trim().len() + 1).sum();
            assert!(code <= 300, "chunk {i} has {code} chars");
            // Every part but the last ends where a statement ends.
            if i + 1 < chunks.len() {
                let last = lines[(c.lines.1 - 1) as usize].trim();
                assert_eq!(last, ");", "chunk {i} ends inside a statement");
                // and the next one repeats its last two lines.
                assert_eq!(chunks[i + 1].lines.0, c.lines.1 - 1);
            }
        }
        assert_eq!(chunks.last().unwrap().lines.1, end);
        assert_eq!(chunks[0].lines.0, 1);
    }
}
