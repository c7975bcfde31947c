//! Unified diffs that arrive as text (`git diff | git diffidx show --patch -`).
//!
//! The text is parsed by `unidiff`, never by hand; this module only turns its
//! hunks into [`LineChange`]s and rebuilds the post-image from a pre-image.
//! The one thing read beside it is git's `index OLD..NEW` header line, which
//! unidiff skips: it names the pre-image's blob.

use std::collections::HashMap;

use super::hunks::LineChange;
use crate::error::{Error, Result};

/// One file of a patch.
#[derive(Debug, Clone)]
pub struct FilePatch {
    /// `None` for an added file.
    pub old_path: Option<String>,
    /// `None` for a deleted file.
    pub new_path: Option<String>,
    /// The pre-image's blob id, abbreviated, from git's `index OLD..NEW`
    /// header line when the patch has one.
    pub old_blob: Option<String>,
    hunks: Vec<unidiff::Hunk>,
}

/// The `index OLD..NEW [MODE]` line of each file header git writes, by the
/// `---` line that follows it (as the diff parser reports that file's
/// source). unidiff reads the unified diff proper and skips git's extended
/// header, which is where the pre-image's blob id is.
fn pre_image_ids(text: &str) -> HashMap<&str, &str> {
    let mut ids = HashMap::new();
    let mut pending: Option<&str> = None;
    for line in text.lines() {
        if line.starts_with("diff ") {
            pending = None;
        } else if let Some(rest) = line.strip_prefix("index ") {
            pending = rest
                .split_once("..")
                .map(|(old, _)| old)
                .filter(|old| old.len() >= 4 && old.bytes().all(|b| b.is_ascii_hexdigit()));
        } else if let Some(source) = line.strip_prefix("--- ") {
            if let Some(old) = pending.take() {
                let source = source.split('\t').next().unwrap_or(source);
                ids.insert(source, old);
            }
        }
    }
    ids
}

const MISSING_SOURCE: &str = "\u{0}diffidx: no source header";

fn has_long_number(line: &str) -> bool {
    line.split(|c: char| !c.is_ascii_digit())
        .any(|digits| digits.len() > 9)
}

/// Parses unified diff text.
pub fn parse(text: &str) -> Result<Vec<FilePatch>> {
    let set = unidiff::PatchSet::new();
    // unidiff 0.4 panics on a `+++` header before any `---` header; a first
    // `---` line of our own means there always is one, and a file that ends
    // up with it as its source had no `---` of its own.
    let guarded = format!("--- {MISSING_SOURCE}\n{text}");
    // It also panics on a hunk header number over `usize`; line numbers past
    // a billion are refused before it sees them.
    if let Some(line) = guarded
        .lines()
        .find(|l| l.starts_with("@@") && has_long_number(l))
    {
        return Err(Error::Patch(format!(
            "hunk header {line:?} has a line number over 999,999,999"
        )));
    }
    // Any other panic of the parser is an unreadable patch, not a crash.
    let parsed = std::panic::catch_unwind(move || {
        let mut set = set;
        set.parse(&guarded).map(|()| set)
    });
    let set = match parsed {
        Ok(Ok(set)) => set,
        Ok(Err(e)) => return Err(Error::Patch(e.to_string())),
        Err(_) => return Err(Error::Patch("the diff parser failed on this text".into())),
    };
    if let Some(file) = set.files().iter().find(|f| f.source_file == MISSING_SOURCE) {
        return Err(Error::Patch(format!(
            "the `+++ {}` header has no `---` header before it",
            file.target_file
        )));
    }
    if set.is_empty() && !text.trim().is_empty() {
        return Err(Error::Patch(
            "no file with hunks found (expected `---`/`+++` headers and `@@` hunks)".into(),
        ));
    }
    let pre_images = pre_image_ids(text);
    Ok(set
        .files()
        .iter()
        .map(|file| {
            let strip_prefixes =
                file.source_file.starts_with("a/") || file.target_file.starts_with("b/");
            let path = |raw: &str, prefix: &str| -> Option<String> {
                if raw == "/dev/null" {
                    return None;
                }
                Some(match raw.strip_prefix(prefix) {
                    Some(rest) if strip_prefixes => rest.to_owned(),
                    _ => raw.to_owned(),
                })
            };
            FilePatch {
                old_path: path(&file.source_file, "a/"),
                new_path: path(&file.target_file, "b/"),
                old_blob: pre_images
                    .get(file.source_file.as_str())
                    .filter(|id| !id.bytes().all(|b| b == b'0'))
                    .map(|id| (*id).to_owned()),
                hunks: file.hunks().to_vec(),
            }
        })
        .collect())
}

impl FilePatch {
    /// The changed lines of each block of `+`/`-` lines.
    pub fn line_changes(&self) -> Vec<LineChange> {
        let mut changes = Vec::new();
        for hunk in &self.hunks {
            let mut old_line = hunk.source_start.max(1) as u32;
            let mut new_line = hunk.target_start.max(1) as u32;
            let mut block: Option<(u32, u32)> = None;
            for line in hunk.lines() {
                let (is_removed, is_added) = (line.is_removed(), line.is_added());
                if (is_removed || is_added) && block.is_none() {
                    block = Some((old_line, new_line));
                }
                if !(is_removed || is_added) {
                    if let Some((o, n)) = block.take() {
                        changes.push(LineChange {
                            old: o..old_line,
                            new: n..new_line,
                        });
                    }
                }
                if is_removed || line.is_context() {
                    old_line += 1;
                }
                if is_added || line.is_context() {
                    new_line += 1;
                }
            }
            if let Some((o, n)) = block {
                changes.push(LineChange {
                    old: o..old_line,
                    new: n..new_line,
                });
            }
        }
        changes
    }

    /// Rebuilds the post-image from the pre-image, checking every context and
    /// removed line against it. Errors name the first line that differs.
    pub fn apply(&self, pre_image: &str) -> std::result::Result<String, String> {
        let pre: Vec<&str> = pre_image.split_inclusive('\n').collect();
        let mut out = String::with_capacity(pre_image.len());
        let mut next = 0usize; // index into `pre` of the next line not yet copied
        for hunk in &self.hunks {
            let start = hunk.source_start.saturating_sub(1);
            // A pure insertion at `-N,0` goes after line N.
            let start = if hunk.source_length == 0 {
                hunk.source_start
            } else {
                start
            };
            if start < next || start > pre.len() {
                return Err(format!(
                    "hunk at line {} is out of order or past the end",
                    hunk.source_start
                ));
            }
            for line in &pre[next..start] {
                out.push_str(line);
            }
            next = start;
            for line in hunk.lines() {
                if line.is_added() {
                    out.push_str(&line.value);
                    out.push('\n');
                    continue;
                }
                if !(line.is_removed() || line.is_context()) {
                    continue;
                }
                let Some(actual) = pre.get(next) else {
                    return Err(format!("line {} is past the end of the file", next + 1));
                };
                if actual.trim_end_matches('\n') != line.value {
                    return Err(format!(
                        "line {} is {:?}, the patch expects {:?}",
                        next + 1,
                        actual.trim_end_matches('\n'),
                        line.value
                    ));
                }
                if line.is_context() {
                    out.push_str(actual);
                }
                next += 1;
            }
        }
        for line in &pre[next.min(pre.len())..] {
            out.push_str(line);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATCH: &str = "diff --git a/src/a.rs b/src/a.rs
index 1111111..2222222 100644
--- a/src/a.rs
+++ b/src/a.rs
@@ -1,4 +1,5 @@
 fn a() {}
-fn b() {}
+fn b() { 1 }
+fn c() {}
 fn d() {}
 fn e() {}
diff --git a/new.cs b/new.cs
new file mode 100644
--- /dev/null
+++ b/new.cs
@@ -0,0 +1 @@
+class N {}
";

    #[test]
    fn parses_files_and_changed_lines() {
        let files = parse(PATCH).unwrap();
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].old_path.as_deref(), Some("src/a.rs"));
        assert_eq!(files[0].new_path.as_deref(), Some("src/a.rs"));
        assert_eq!(
            files[0].line_changes(),
            [LineChange {
                old: 2..3,
                new: 2..4
            }]
        );
        assert_eq!(files[1].old_path, None);
        assert_eq!(files[1].new_path.as_deref(), Some("new.cs"));
    }

    #[test]
    fn rebuilds_the_post_image() {
        let files = parse(PATCH).unwrap();
        let pre = "fn a() {}\nfn b() {}\nfn d() {}\nfn e() {}\nfn f() {}\n";
        assert_eq!(
            files[0].apply(pre).unwrap(),
            "fn a() {}\nfn b() { 1 }\nfn c() {}\nfn d() {}\nfn e() {}\nfn f() {}\n"
        );
        assert_eq!(files[1].apply("").unwrap(), "class N {}\n");
    }

    #[test]
    fn refuses_a_pre_image_that_does_not_match() {
        let files = parse(PATCH).unwrap();
        let err = files[0]
            .apply("fn a() {}\nfn x() {}\nfn d() {}\nfn e() {}\n")
            .unwrap_err();
        assert!(err.contains("line 2"), "{err}");
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(parse("this is not a diff\n").is_err());
        assert!(parse("").unwrap().is_empty());
    }

    #[test]
    fn hostile_headers_are_errors_not_panics() {
        let err = parse("+++ b/x.rs\n@@ -1 +1 @@\n-a\n+b\n").unwrap_err();
        assert!(err.to_string().contains("no `---` header"), "{err}");
        let huge = "--- a/x\n+++ b/x\n@@ -99999999999999999999999 +1 @@\n-a\n+b\n";
        assert!(parse(huge)
            .unwrap_err()
            .to_string()
            .contains("over 999,999,999"));
        // The guard line is not seen as a file of its own.
        assert_eq!(parse(PATCH).unwrap().len(), 2);
    }
}
