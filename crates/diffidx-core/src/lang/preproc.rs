//! The C# preprocessor pass of DESIGN.md §2.
//!
//! tree-sitter cannot parse directives that split a declaration, and its error
//! recovery then invents symbols. So the parser sees a copy in which every
//! directive line is blanked and, of each `#if/#elif/#else` group, only the
//! first branch whose condition is not the literal `false` survives. Blanking
//! replaces bytes with spaces, so byte offsets and lines stay those of the
//! source. The blanked lines still carry meaning: their tokens (comments
//! excluded) are returned so they count toward the enclosing declaration.

use std::borrow::Cow;
use std::ops::Range;

/// What the parser should see, and the tokens it will not see.
#[derive(Debug)]
pub struct Preprocessed<'a> {
    pub parse_text: Cow<'a, str>,
    /// Byte ranges (into the source) of the tokens on blanked lines.
    pub hidden_tokens: Vec<Range<usize>>,
}

struct Group {
    parent_active: bool,
    taken: bool,
    active: bool,
}

/// Blanks directive lines and inactive branches; see the module docs.
pub fn blank_directives(source: &str) -> Preprocessed<'_> {
    if !has_directive(source) {
        return Preprocessed {
            parse_text: Cow::Borrowed(source),
            hidden_tokens: Vec::new(),
        };
    }
    let mut blanked = source.as_bytes().to_vec();
    let mut hidden_tokens = Vec::new();
    let mut groups: Vec<Group> = Vec::new();
    let mut lexer = LineLexer::default();
    let mut line_start = 0;
    for line in source.split_inclusive('\n') {
        let range = line_start..line_start + line.trim_end_matches('\n').len();
        line_start += line.len();
        let active = groups.last().is_none_or(|g| g.active);
        let trimmed = line.trim_start();
        let is_directive = trimmed.starts_with('#');
        if is_directive {
            let (name, argument) = split_directive(&trimmed[1..]);
            match name {
                "if" => {
                    let take = active && !is_literal_false(argument);
                    groups.push(Group {
                        parent_active: active,
                        taken: take,
                        active: take,
                    });
                }
                "elif" | "else" => {
                    if let Some(group) = groups.last_mut() {
                        let take = group.parent_active
                            && !group.taken
                            && (name == "else" || !is_literal_false(argument));
                        group.active = take;
                        group.taken |= take;
                    }
                }
                "endif" => {
                    groups.pop();
                }
                _ => {}
            }
        }
        if is_directive || !active {
            lexer.tokens(source, range.clone(), &mut hidden_tokens);
            for b in &mut blanked[range] {
                *b = b' ';
            }
        } else {
            lexer.in_block_comment = false;
        }
    }
    // Whole lines were blanked byte by byte, so a multi-byte character is
    // either kept whole or becomes spaces entirely: the copy stays UTF-8.
    let parse_text = String::from_utf8(blanked)
        .map(Cow::Owned)
        .unwrap_or(Cow::Borrowed(source));
    Preprocessed {
        parse_text,
        hidden_tokens,
    }
}

fn has_directive(source: &str) -> bool {
    source.lines().any(|l| l.trim_start().starts_with('#'))
}

fn split_directive(after_hash: &str) -> (&str, &str) {
    let s = after_hash.trim_start();
    let end = s
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(s.len());
    (&s[..end], &s[end..])
}

fn is_literal_false(condition: &str) -> bool {
    let condition = condition.split("//").next().unwrap_or("");
    condition.trim() == "false"
}

/// A small lexer for blanked lines: words, string and char literals, and single
/// punctuation characters; comments are skipped (block comments may span lines).
#[derive(Default)]
struct LineLexer {
    in_block_comment: bool,
}

impl LineLexer {
    fn tokens(&mut self, source: &str, line: Range<usize>, out: &mut Vec<Range<usize>>) {
        let text = &source[line.clone()];
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if self.in_block_comment {
                match text[i..].find("*/") {
                    Some(end) => {
                        i += end + 2;
                        self.in_block_comment = false;
                    }
                    None => return,
                }
                continue;
            }
            let c = text[i..].chars().next().unwrap_or(' ');
            let rest = &text[i..];
            if c.is_whitespace() {
                i += c.len_utf8();
            } else if rest.starts_with("//") {
                return;
            } else if rest.starts_with("/*") {
                self.in_block_comment = true;
                i += 2;
            } else if c == '"' || c == '\'' || rest.starts_with("@\"") {
                let start = i;
                let quote = if c == '@' { b'"' } else { c as u8 };
                i += if c == '@' { 2 } else { 1 };
                while i < bytes.len() && bytes[i] != quote {
                    i += if bytes[i] == b'\\' && c != '@' { 2 } else { 1 };
                }
                i = (i + 1).min(bytes.len());
                out.push(line.start + start..line.start + i);
            } else if c.is_alphanumeric() || c == '_' {
                let start = i;
                while let Some(ch) = text[i..].chars().next() {
                    if !(ch.is_alphanumeric() || ch == '_') {
                        break;
                    }
                    i += ch.len_utf8();
                }
                out.push(line.start + start..line.start + i);
            } else {
                out.push(line.start + i..line.start + i + c.len_utf8());
                i += c.len_utf8();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hidden<'a>(src: &'a str, p: &Preprocessed) -> Vec<&'a str> {
        p.hidden_tokens.iter().map(|r| &src[r.clone()]).collect()
    }

    #[test]
    fn no_directive_borrows() {
        let p = blank_directives("class A {}\n");
        assert!(matches!(p.parse_text, Cow::Borrowed(_)));
        assert!(p.hidden_tokens.is_empty());
    }

    #[test]
    fn keeps_first_branch_and_blanks_the_rest() {
        let src = "class A {\n#if DEBUG\n  int x;\n#else\n  long y; // c\n#endif\n}\n";
        let p = blank_directives(src);
        assert_eq!(p.parse_text.len(), src.len());
        assert!(p.parse_text.contains("int x;"));
        assert!(!p.parse_text.contains("long"));
        assert!(!p.parse_text.contains('#'));
        assert_eq!(
            hidden(src, &p),
            ["#", "if", "DEBUG", "#", "else", "long", "y", ";", "#", "endif"]
        );
    }

    #[test]
    fn literal_false_branch_is_skipped() {
        let src = "#if false\nint a;\n#elif X\nint b;\n#else\nint c;\n#endif\n";
        let p = blank_directives(src);
        assert!(!p.parse_text.contains("int a"));
        assert!(p.parse_text.contains("int b"));
        assert!(!p.parse_text.contains("int c"));
    }

    #[test]
    fn nested_groups_in_inactive_branch_stay_inactive() {
        let src = "#if false\n#if A\nint a;\n#else\nint b;\n#endif\n#endif\nint c;\n";
        let p = blank_directives(src);
        assert!(!p.parse_text.contains("int a"));
        assert!(!p.parse_text.contains("int b"));
        assert!(p.parse_text.contains("int c"));
    }

    #[test]
    fn strings_and_block_comments_in_blanked_lines() {
        let src = "#if false\nvar s = \"a b\"; /* x\n y */ z\n#endif\n";
        let p = blank_directives(src);
        assert_eq!(
            hidden(src, &p),
            ["#", "if", "false", "var", "s", "=", "\"a b\"", ";", "z", "#", "endif"]
        );
    }
}
