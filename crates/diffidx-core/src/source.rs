//! Turning blob bytes into the text every later step agrees on.
//!
//! Line numbers, hunks and tokens all refer to this normalized text, so the
//! normalization (BOM removed, CRLF to LF) happens exactly once, here.

use std::borrow::Cow;

/// Why a blob was not read as source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unreadable {
    /// Contains a NUL byte.
    Binary,
    /// Larger than the configured limit.
    TooLarge { size: usize, limit: usize },
    /// Not in this clone (a partial clone that could not fetch it, a
    /// damaged one).
    Missing { id: String, reason: String },
    /// Parsed, but over a per-file budget (see [`crate::lang::Limits`]).
    OverLimit(crate::lang::OverLimit),
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unreadable::Binary => f.write_str("binary content (NUL byte)"),
            Unreadable::TooLarge { size, limit } => {
                write!(f, "{size} bytes is over the {limit}-byte limit")
            }
            Unreadable::Missing { id, reason } => write!(f, "blob {id}: {reason}"),
            Unreadable::OverLimit(crate::lang::OverLimit::ParseSteps { limit }) => {
                write!(f, "parsing took over {limit} steps (diffidx.maxParseSteps)")
            }
            Unreadable::OverLimit(crate::lang::OverLimit::CrowdedLine {
                line,
                symbols,
                limit,
            }) => write!(
                f,
                "{symbols} symbols start on line {line}, over the {limit} allowed \
                 (diffidx.maxSymbolsPerLine): minified or generated code"
            ),
        }
    }
}

/// Normalized source text of one blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceText {
    pub text: String,
    /// True when invalid UTF-8 was replaced by U+FFFD.
    pub lossy: bool,
}

/// Reads blob bytes as source: rejects binary and oversized content, removes a
/// UTF-8 BOM, turns CRLF into LF and replaces invalid UTF-8 (reported via `lossy`).
pub fn normalize(bytes: &[u8], size_limit: usize) -> Result<SourceText, Unreadable> {
    if bytes.len() > size_limit {
        return Err(Unreadable::TooLarge {
            size: bytes.len(),
            limit: size_limit,
        });
    }
    if bytes.contains(&0) {
        return Err(Unreadable::Binary);
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let (text, lossy) = match String::from_utf8_lossy(bytes) {
        Cow::Borrowed(s) => (s.to_owned(), false),
        Cow::Owned(s) => (s, true),
    };
    let text = if text.contains("\r\n") {
        text.replace("\r\n", "\n")
    } else {
        text
    };
    Ok(SourceText { text, lossy })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_bom_and_crlf() {
        let s = normalize(b"\xEF\xBB\xBFclass A {}\r\nclass B {}\r\n", 1000).unwrap();
        assert_eq!(s.text, "class A {}\nclass B {}\n");
        assert!(!s.lossy);
    }

    #[test]
    fn lone_cr_is_kept() {
        assert_eq!(normalize(b"a\rb", 10).unwrap().text, "a\rb");
    }

    #[test]
    fn rejects_binary_and_large() {
        assert_eq!(normalize(b"ab\0c", 100), Err(Unreadable::Binary));
        assert_eq!(
            normalize(b"abcdef", 3),
            Err(Unreadable::TooLarge { size: 6, limit: 3 })
        );
    }

    #[test]
    fn invalid_utf8_is_lossy() {
        let s = normalize(b"fn a() {}\xff\n", 100).unwrap();
        assert!(s.lossy);
        assert!(s.text.starts_with("fn a() {}"));
    }
}
