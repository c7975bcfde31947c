//! Every note the writer produces passes the reader's validation, whatever
//! the source: generated files with deep nesting, long and odd names, twins,
//! stray tokens and unicode, committed to a real repository and diffed.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use diffidx_core::differ::{DiffOptions, SymbolDiffer};
use diffidx_core::git::Repo;
use diffidx_core::note::NoteDocument;
use proptest::prelude::*;

/// One step of a generated source file.
#[derive(Debug, Clone)]
enum Piece {
    /// Opens a container (`mod`/`class`, `impl`, `namespace`).
    Open(u8, String),
    Close,
    /// A function or method with a one-token body.
    Function(String, String),
    /// A field or const with several declarators.
    Field(Vec<String>),
    /// Something that is not a declaration (garbage, comments, unicode).
    Noise(String),
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => "[A-Za-z_][A-Za-z0-9_]{0,6}",
        1 => "[A-Za-z]{200,900}",
        1 => Just("x".repeat(5000)),
        1 => "[a-zé_ü]{1,4}",
    ]
}

fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        6 => (0u8..3, name()).prop_map(|(k, n)| Piece::Open(k, n)),
        3 => Just(Piece::Close),
        5 => (name(), "[a-z0-9+*]{1,5}").prop_map(|(n, b)| Piece::Function(n, b)),
        1 => prop::collection::vec(name(), 1..4).prop_map(Piece::Field),
        1 => prop_oneof![
            Just("}".to_owned()),
            Just("{".to_owned()),
            Just("/* \u{202e} */".to_owned()),
            Just("#if X\n".to_owned()),
            Just("#endif\n".to_owned()),
            Just("\u{0}".to_owned()),
            "[ -~]{0,20}",
        ]
        .prop_map(Piece::Noise),
    ]
}

fn render(pieces: &[Piece], csharp: bool) -> String {
    let mut out = String::new();
    for piece in pieces {
        match (piece, csharp) {
            (Piece::Open(0, n), false) => out.push_str(&format!("mod {n} {{\n")),
            (Piece::Open(1, n), false) => out.push_str(&format!("impl {n} {{\n")),
            (Piece::Open(_, n), false) => out.push_str(&format!("trait {n} {{\n")),
            (Piece::Open(0, n), true) => out.push_str(&format!("class {n} {{\n")),
            (Piece::Open(1, n), true) => out.push_str(&format!("namespace {n} {{\n")),
            (Piece::Open(_, n), true) => out.push_str(&format!("interface {n} {{\n")),
            (Piece::Close, _) => out.push_str("}\n"),
            (Piece::Function(n, b), false) => out.push_str(&format!("fn {n}(a: &&T) {{ {b} }}\n")),
            (Piece::Function(n, b), true) => out.push_str(&format!("void {n}(int a) {{ {b}; }}\n")),
            (Piece::Field(names), false) => out.push_str(&format!("const {}: u8 = 1;\n", names[0])),
            (Piece::Field(names), true) => out.push_str(&format!("int {};\n", names.join(", "))),
            (Piece::Noise(text), _) => out.push_str(text),
        }
    }
    out
}

/// A file: deep nesting comes from long runs of `Open`.
fn source() -> impl Strategy<Value = Vec<Piece>> {
    prop_oneof![
        4 => prop::collection::vec(piece(), 0..40),
        1 => (name(), 60usize..140).prop_map(|(n, depth)| {
            let mut pieces = vec![Piece::Open(0, n.clone()); depth];
            pieces.push(Piece::Function(n, "1".into()));
            pieces.extend(std::iter::repeat_n(Piece::Close, depth));
            pieces
        }),
    ]
}

fn git(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> String {
    let mut child = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(input) = stdin {
        child.stdin.take().unwrap().write_all(input).unwrap();
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Two commits on `branch` through fast-import: the old and the new files.
fn commit_pair(dir: &Path, branch: &str, old: &[(String, String)], new: &[(String, String)]) {
    let mut stream = Vec::new();
    for (n, files) in [old, new].iter().enumerate() {
        writeln!(stream, "commit refs/heads/{branch}").unwrap();
        writeln!(
            stream,
            "committer A <a@example.com> {} +0000",
            1_700_000_000 + n
        )
        .unwrap();
        writeln!(stream, "data 1\nc").unwrap();
        writeln!(stream, "deleteall").unwrap();
        for (path, text) in files.iter() {
            writeln!(stream, "M 100644 inline {path}").unwrap();
            writeln!(stream, "data {}", text.len()).unwrap();
            stream.extend_from_slice(text.as_bytes());
            stream.push(b'\n');
        }
    }
    git(dir, &["fast-import", "--quiet", "--force"], Some(&stream));
}

fn files(pieces: &[Vec<Piece>]) -> Vec<(String, String)> {
    pieces
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let csharp = i % 2 == 0;
            let path = format!("dir {i}/f\u{e9}{i}.{}", if csharp { "cs" } else { "rs" });
            (path, render(p, csharp))
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn every_note_the_writer_makes_passes_validation(
        old in prop::collection::vec(source(), 1..4),
        new in prop::collection::vec(source(), 1..4),
    ) {
        let dir = REPO.with(|r| r.path().to_owned());
        let branch = format!("case{}", CASE.with(|c| { let n = c.get(); c.set(n + 1); n }));
        commit_pair(&dir, &branch, &files(&old), &files(&new));
        let repo = Repo::discover(&dir).unwrap();
        let mut differ = SymbolDiffer::new(&repo, DiffOptions::default()).unwrap();
        for rev in [format!("{branch}~1"), branch.clone()] {
            let commit = repo.commit(repo.resolve_commit(&rev).unwrap()).unwrap();
            let note = differ.commit_note(&commit).unwrap();
            let parent = commit.parents.first().map(|p| p.to_string());
            let read = NoteDocument::from_untrusted(
                note.to_json().as_bytes(),
                &commit.id.to_string(),
                parent.as_deref(),
            );
            prop_assert!(read.is_ok(), "{rev}: {}", read.unwrap_err());
        }
    }
}

thread_local! {
    static REPO: tempfile::TempDir = {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q", "--bare"], None);
        dir
    };
    static CASE: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}
