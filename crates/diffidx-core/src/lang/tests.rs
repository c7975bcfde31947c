//! Extraction against DESIGN.md §2, one rule per test.

use super::{Extractor, Language};
use crate::git::hunks::diff_lines;

fn cs() -> Language {
    Language::from_name("csharp").unwrap()
}

fn rs() -> Language {
    Language::from_name("rust").unwrap()
}
use crate::symbol::FileSymbols;

fn extract(language: Language, source: &str) -> FileSymbols {
    Extractor::new().unwrap().extract(language, source)
}

/// `kind qualname+sig` per symbol, in source order.
fn names(language: Language, source: &str) -> Vec<String> {
    extract(language, source)
        .symbols
        .iter()
        .map(|s| format!("{} {}{}", s.kind, s.qualname, s.sig))
        .collect()
}

/// `qualname => normalized text` for one symbol.
fn text_of(language: Language, source: &str, qualname: &str) -> String {
    let (file, texts) = Extractor::new()
        .unwrap()
        .extract_with_text(language, source);
    let i = file
        .symbols
        .iter()
        .position(|s| s.qualname == qualname)
        .unwrap_or_else(|| panic!("no symbol {qualname}"));
    texts[i].clone()
}

fn hash_of(language: Language, source: &str, qualname: &str) -> String {
    let file = extract(language, source);
    let s = file
        .symbols
        .iter()
        .find(|s| s.qualname == qualname)
        .unwrap_or_else(|| panic!("no symbol {qualname}"));
    s.content_hash.to_hex()
}

const CS_SAMPLE: &str = r#"
using System;
namespace Acme.Billing {
  /// doc
  [Serializable]
  public partial class Invoice<T> : IFoo where T : class {
    private int a = 1, b;
    public event EventHandler Changed, Closed;
    public Invoice(int x) { }
    ~Invoice() { }
    public static Invoice<T> operator +(Invoice<T> l, Invoice<T> r) => l;
    public static implicit operator int(Invoice<T> i) => 0;
    public static explicit operator Invoice<T>(int i) => null;
    public int this[int i, string s] { get => 0; }
    public string Name { get; set; }
    void IFoo.Run(ref int x, params List<string>[] rest) { int Local() => 1; }
    public void Tuple((int a, string b) t, this Dictionary<int, string> d) {}
    public T Generic<U>(U u) where U : T { Func<int> f = () => 1; return default; }
    public class Nested { public enum Color { Red, Green } }
    public delegate void Handler(object sender);
    public event EventHandler Custom { add {} remove {} }
  }
  record Point(int X, int Y);
  record struct P2(int X);
  interface IFoo { void Run(ref int x, params List<string>[] rest); }
  namespace Inner.Deep { struct S {} }
}
"#;

#[test]
fn csharp_kinds_qualnames_and_signatures() {
    assert_eq!(
        names(cs(), CS_SAMPLE),
        [
            "namespace Acme.Billing",
            "class Acme.Billing.Invoice",
            "field Acme.Billing.Invoice.a",
            "field Acme.Billing.Invoice.b",
            "event Acme.Billing.Invoice.Changed",
            "event Acme.Billing.Invoice.Closed",
            "constructor Acme.Billing.Invoice.Invoice(int)",
            "destructor Acme.Billing.Invoice.~Invoice()",
            "operator Acme.Billing.Invoice.operator +(Invoice<T>,Invoice<T>)",
            "operator Acme.Billing.Invoice.implicit operator int(Invoice<T>)",
            "operator Acme.Billing.Invoice.explicit operator Invoice<T>(int)",
            "indexer Acme.Billing.Invoice.this[](int,string)",
            "property Acme.Billing.Invoice.Name",
            "method Acme.Billing.Invoice.Run(int,List<string>[])",
            "method Acme.Billing.Invoice.Tuple((inta,stringb),Dictionary<int,string>)",
            "method Acme.Billing.Invoice.Generic(U)",
            "class Acme.Billing.Invoice.Nested",
            "enum Acme.Billing.Invoice.Nested.Color",
            "delegate Acme.Billing.Invoice.Handler(object)",
            "event Acme.Billing.Invoice.Custom",
            "record Acme.Billing.Point",
            "record Acme.Billing.P2",
            "interface Acme.Billing.IFoo",
            "method Acme.Billing.IFoo.Run(int,List<string>[])",
            "namespace Acme.Billing.Inner.Deep",
            "struct Acme.Billing.Inner.Deep.S",
        ]
    );
}

#[test]
fn csharp_hierarchy_and_lines() {
    let file = extract(cs(), CS_SAMPLE);
    let by_name = |q: &str| file.symbols.iter().find(|s| s.qualname == q).unwrap();
    let color = by_name("Acme.Billing.Invoice.Nested.Color");
    let nested = &file.symbols[color.parent.unwrap()];
    assert_eq!(nested.qualname, "Acme.Billing.Invoice.Nested");
    let invoice = by_name("Acme.Billing.Invoice");
    // The declaration starts at its attribute; the doc comment is not part of it.
    assert_eq!((invoice.start_line, invoice.end_line), (5, 22));
    assert_eq!(by_name("Acme.Billing").parent, None);
}

#[test]
fn csharp_each_declarator_is_a_symbol_with_its_own_text() {
    assert_eq!(
        text_of(cs(), CS_SAMPLE, "Acme.Billing.Invoice.a"),
        "private int a = 1 ;"
    );
    assert_eq!(
        text_of(cs(), CS_SAMPLE, "Acme.Billing.Invoice.b"),
        "private int b ;"
    );
    // Adding a declarator leaves the others' text alone.
    let before = "class C { int a = 1, b; }";
    let after = "class C { int a = 1, b, c; }";
    assert_eq!(hash_of(cs(), before, "C.a"), hash_of(cs(), after, "C.a"));
    assert_ne!(hash_of(cs(), before, "C"), hash_of(cs(), after, "C"));
}

#[test]
fn csharp_file_scoped_namespace_owns_the_rest_of_the_file() {
    let src = "using X;\nnamespace A.B;\n\nclass C { void M() {} }\nenum E { One }\n// trailing\n";
    assert_eq!(
        names(cs(), src),
        [
            "namespace A.B",
            "class A.B.C",
            "method A.B.C.M()",
            "enum A.B.E"
        ]
    );
    let file = extract(cs(), src);
    assert_eq!(
        (file.symbols[0].start_line, file.symbols[0].end_line),
        (2, 5)
    );
    assert_eq!(file.symbols[3].parent, Some(0));
}

#[test]
fn comments_and_whitespace_do_not_change_the_hash() {
    let a = "class C {\n  // one\n  void M(int x) { return; }\n}\n";
    let b = "class C {\n  /* two */ void M(int x)\n  {\n      return; // three\n  }\n}\n";
    for q in ["C", "C.M"] {
        assert_eq!(hash_of(cs(), a, q), hash_of(cs(), b, q), "{q}");
    }
    let c = "class C {\n  void M(int x) { return 1; }\n}\n";
    assert_ne!(hash_of(cs(), a, "C.M"), hash_of(cs(), c, "C.M"));

    let r1 = "/// doc one\nfn f(x: u8) -> u8 { x + 1 }\n";
    let r2 = "/// doc two\n// note\nfn f(x: u8)\n    -> u8 {\n    x + /* inline */ 1\n}\n";
    assert_eq!(hash_of(rs(), r1, "f"), hash_of(rs(), r2, "f"));
    let r3 = "fn f(x: u8) -> u8 { x + 2 }\n";
    assert_ne!(hash_of(rs(), r1, "f"), hash_of(rs(), r3, "f"));
}

#[test]
fn string_literal_whitespace_is_text() {
    let a = "fn f() -> &'static str { \"a b\" }";
    let b = "fn f() -> &'static str { \"a  b\" }";
    assert_ne!(hash_of(rs(), a, "f"), hash_of(rs(), b, "f"));
    let a = "class C { string s = \"a b\"; }";
    let b = "class C { string s = \"a  b\"; }";
    assert_ne!(hash_of(cs(), a, "C.s"), hash_of(cs(), b, "C.s"));
}

#[test]
fn csharp_preprocessor_branches() {
    let src = "class C {\n#if DEBUG\n  [Conditional(\"DEBUG\")]\n#endif\n  void M() {\n#if NET6\n    A();\n#else\n    B();\n#endif\n  }\n  void N() {}\n}\n";
    assert_eq!(
        names(cs(), src),
        ["class C", "method C.M()", "method C.N()"]
    );
    // An edit in the #else branch modifies M (and C), not N.
    let edited = src.replace("B();", "B(1);");
    assert_ne!(hash_of(cs(), src, "C.M"), hash_of(cs(), &edited, "C.M"));
    assert_eq!(hash_of(cs(), src, "C.N"), hash_of(cs(), &edited, "C.N"));
    // So does an edit to a directive.
    let edited = src.replace("#if NET6", "#if NET8");
    assert_ne!(hash_of(cs(), src, "C.M"), hash_of(cs(), &edited, "C.M"));
    assert!(!extract(cs(), src).has_parse_errors);
}

#[test]
fn csharp_split_declaration_under_if_else_invents_nothing() {
    let src = "class C {\n#if NET\n  public void M(int a) {\n#else\n  public void M(long a) {\n#endif\n    Run();\n  }\n}\n";
    assert_eq!(names(cs(), src), ["class C", "method C.M(int)"]);
    let src = "class C {\n#if false\n  void Old() {}\n#else\n  void New() {}\n#endif\n}\n";
    assert_eq!(names(cs(), src), ["class C", "method C.New()"]);
}

const RS_SAMPLE: &str = r#"
//! crate doc
use std::fmt;
/// doc
#[derive(Debug)]
// comment
#[cfg(test)]
pub struct Wrapper<T>(T);
impl<T> fmt::Display for Wrapper<T> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { fn inner() {} Ok(()) }
}
impl<T> Wrapper<T> { pub fn new(t: T) -> Self { Wrapper(t) } const X: u8 = 1; }
impl From<u8> for &Wrapper<u8> { fn from(x: u8) -> Self { todo!() } }
impl<T: std::ops::Add<Output = T>> std::ops::Add for Wrapper<T> { type Output = Self; fn add(self, o: Self) -> Self { self } }
impl dyn Tr + Send { fn d(&self) {} }
impl [u8] { fn s(&self) {} }
trait Tr { type Item; const N: usize; fn a(&self); fn b(&self) { let c = || 1; } }
mod inner { pub fn f() {} mod deeper { static S: i32 = 0; } }
mod outofline;
extern "C" { fn ext(x: i32); static E: i32; }
macro_rules! m { () => {} }
#[cfg(unix)] fn twin() {}
#[cfg(windows)] fn twin() {}
type Alias = u32;
union U { a: u32 }
enum E { A, B }
const C: i32 = 1;
"#;

#[test]
fn rust_kinds_qualnames_and_signatures() {
    assert_eq!(
        names(rs(), RS_SAMPLE),
        [
            "struct Wrapper",
            "method Wrapper::fmtfmt::Display",
            "method Wrapper::new",
            "const Wrapper::X",
            "method Wrapper::fromFrom",
            "type Wrapper::Output",
            "method Wrapper::addstd::ops::Add",
            "method Tr::d",
            "method [u8]::s",
            "trait Tr",
            "type Tr::Item",
            "const Tr::N",
            "method Tr::a",
            "method Tr::b",
            "module inner",
            "function inner::f",
            "module inner::deeper",
            "static inner::deeper::S",
            "function ext",
            "static E",
            "macro m",
            "function twin",
            "function twin#2",
            "type Alias",
            "union U",
            "enum E",
            "const C",
        ]
    );
}

#[test]
fn rust_attributes_belong_to_their_item() {
    let file = extract(rs(), RS_SAMPLE);
    let wrapper = &file.symbols[0];
    assert_eq!((wrapper.start_line, wrapper.end_line), (5, 8));
    assert_eq!(
        text_of(rs(), RS_SAMPLE, "Wrapper"),
        "# [ derive ( Debug ) ] # [ cfg ( test ) ] pub struct Wrapper < T > ( T ) ;"
    );
    let edited = RS_SAMPLE.replace("#[derive(Debug)]", "#[derive(Debug, Clone)]");
    assert_ne!(
        hash_of(rs(), RS_SAMPLE, "Wrapper"),
        hash_of(rs(), &edited, "Wrapper")
    );
}

#[test]
fn rust_impl_members_hang_under_their_type() {
    let file = extract(rs(), RS_SAMPLE);
    let new = file
        .symbols
        .iter()
        .find(|s| s.qualname == "Wrapper::new")
        .unwrap();
    assert_eq!(file.symbols[new.parent.unwrap()].qualname, "Wrapper");
    let f = file
        .symbols
        .iter()
        .find(|s| s.qualname == "inner::f")
        .unwrap();
    assert_eq!(file.symbols[f.parent.unwrap()].qualname, "inner");
}

#[test]
fn repeated_keys_are_numbered_in_source_order() {
    let src = "#[cfg(a)] mod m { fn f() {} }\n#[cfg(b)] mod m { fn f() {} }\n";
    assert_eq!(
        names(rs(), src),
        ["module m", "function m::f", "module m#2", "function m::f#2"]
    );
    let src = "partial class P { void A() {} }\npartial class P { void B() {} }\n";
    assert_eq!(
        names(cs(), src),
        ["class P", "method P.A()", "class P#2", "method P.B()"]
    );
}

#[test]
fn syntax_errors_keep_what_parses() {
    let src = "class Good { void A() {} }\nclass Bad { void B( { }\n";
    let file = extract(cs(), src);
    assert!(file.has_parse_errors);
    assert!(names(cs(), src).contains(&"method Good.A()".to_string()));
    assert!(!extract(cs(), "class Fine {}").has_parse_errors);
}

/// The repository's `fixtures/`, found from the directory cargo runs the
/// tests for, not the one this binary was compiled in: a build directory
/// shared by two checkouts may run a binary the other one compiled.
fn fixtures_dir() -> std::path::PathBuf {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into());
    manifest.join("../../fixtures")
}

#[test]
fn incremental_reparse_equals_a_full_parse() {
    let fixtures = fixtures_dir();
    let mut pairs = 0;
    for case in std::fs::read_dir(&fixtures).unwrap() {
        let case = case.unwrap().path();
        let (before_dir, after_dir) = (case.join("before"), case.join("after"));
        if !before_dir.is_dir() {
            continue;
        }
        for file in walk(&after_dir) {
            let rel = file.strip_prefix(&after_dir).unwrap();
            let (Some(language), Ok(old), Ok(new)) = (
                Language::from_path(&rel.to_string_lossy()),
                std::fs::read_to_string(before_dir.join(rel)),
                std::fs::read_to_string(&file),
            ) else {
                continue;
            };
            let mut extractor = Extractor::new().unwrap();
            let first = extractor.extract_incremental(language, &old, None);
            let state = first.state.expect("a parse state");
            let incremental = extractor.extract_incremental(language, &new, Some((&state, &old)));
            let full = extract(language, &new);
            assert_eq!(incremental.symbols, full, "{}", file.display());
            // The same from the state handed over (its tree edited in place),
            // and the state borrowed above is as it was: a second borrowed
            // reparse from it gives the same again.
            let again = extractor.extract_incremental(language, &new, Some((&state, &old)));
            assert_eq!(again.symbols, full, "{}", file.display());
            let base = Some((crate::lang::Base::Owned(state), old.as_str()));
            let owned = extractor.extract_from(language, &new, base, false);
            assert_eq!(owned.symbols, full, "{}", file.display());
            pairs += 1;
        }
    }
    assert!(pairs >= 8, "only {pairs} before/after pairs found");
}

#[test]
fn a_reparse_shares_the_sketches_of_texts_its_base_had() {
    let old =
        "namespace N {\nclass C {\n    int A() { return 1; }\n    int B() { return 2; }\n}\n}\n";
    let new = old.replace("return 2;", "return 3;");
    let find = |symbols: &crate::symbol::FileSymbols, name: &str| {
        symbols
            .symbols
            .iter()
            .find(|s| s.name == name)
            .cloned()
            .unwrap_or_else(|| panic!("no {name}"))
    };
    let full = extract(cs(), &new);
    let mut extractor = Extractor::new().unwrap();
    for owned in [false, true] {
        let first = extractor.extract_incremental(cs(), old, None);
        let state = first.state.expect("a parse state");
        let reparsed = if owned {
            let base = Some((crate::lang::Base::Owned(state), old));
            extractor.extract_from(cs(), &new, base, false)
        } else {
            extractor.extract_incremental(cs(), &new, Some((&state, old)))
        };
        assert_eq!(reparsed.symbols, full);
        // Untouched: the very sketch of the base. Edited (and its class,
        // whose text holds it): computed again, as a full parse has it.
        let (a_then, a_now) = (find(&first.symbols, "A"), find(&reparsed.symbols, "A"));
        assert!(std::sync::Arc::ptr_eq(&a_then.sketch.0, &a_now.sketch.0));
        for name in ["B", "C"] {
            let (then, now) = (find(&first.symbols, name), find(&reparsed.symbols, name));
            assert!(
                !std::sync::Arc::ptr_eq(&then.sketch.0, &now.sketch.0),
                "{name}"
            );
            assert_ne!(then.sketch, now.sketch, "{name}");
            assert_eq!(now.sketch, find(&full, name).sketch, "{name}");
        }
    }
}

#[test]
fn incremental_reparse_after_edits_in_several_places_equals_a_full_parse() {
    let base: String = (0..40)
        .map(|i| format!("    public int M{i}() {{ return {i}; }}\n"))
        .collect();
    let old = format!("using A;\nnamespace N {{\nclass C {{\n{base}}}\n}}\n");
    let versions = [
        // The top, the middle and the end of the file, each a line apart.
        old.replace("using A;", "using A;\nusing B;")
            .replace("return 20;", "return 21;")
            .replace("M39()", "N39()"),
        // Lines removed, and the last line without its newline.
        old.replace("    public int M5() { return 5; }\n", "")
            .trim_end()
            .to_owned(),
        // Lines added after the end, and a class split by an edit in its middle.
        format!(
            "{}class D {{ void E() {{}} }}\n",
            old.replace("return 12;", "}} class F {{ int G() {{ return 12;")
        ),
        String::new(),
    ];
    for new in &versions {
        let edits = super::edits_between(&old, new, &diff_lines(&old, new));
        assert!(
            edits.windows(2).all(|w| w[0].start_byte > w[1].start_byte),
            "last first"
        );
        let mut extractor = Extractor::new().unwrap();
        let first = extractor.extract_incremental(cs(), &old, None);
        let state = first.state.expect("a parse state");
        let incremental = extractor.extract_incremental(cs(), new, Some((&state, &old)));
        assert_eq!(incremental.symbols, extract(cs(), new), "{new}");
        // No directive to blank: the reparse's line changes are the file's.
        assert_eq!(incremental.line_changes, Some(diff_lines(&old, new)));
    }
    assert_eq!(
        super::edits_between(&old, &versions[0], &diff_lines(&old, &versions[0])).len(),
        3,
        "one edit per changed run of lines"
    );
    assert!(super::edits_between(&old, &old, &diff_lines(&old, &old)).is_empty());
}

/// A chain of random line edits to every fixture source, each version
/// reparsed from the one before (its tokens copied where the tree is
/// untouched): symbols, hashes and code-graph facts equal a fresh parse's.
#[test]
fn a_chain_of_random_edits_extracts_like_fresh_parses() {
    let fixtures = fixtures_dir();
    // Lines that open or close what the lines after them mean.
    let snippets = [
        "/*",
        "*/",
        "\"",
        "}",
        "{",
        "// note",
        "#if DEBUG",
        "#endif",
        "",
        "'",
        "fn x() {",
        "*",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: usize| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((seed >> 33) as usize) % n.max(1)
    };
    let mut files = 0;
    for file in walk(&fixtures) {
        let path = file.to_string_lossy().into_owned();
        let (Some(language), Ok(text)) =
            (Language::from_path(&path), std::fs::read_to_string(&file))
        else {
            continue;
        };
        files += 1;
        let mut extractor = Extractor::new().unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let mut old = text.clone();
        let mut state = extractor
            .extract_facts(language, &old, None)
            .state
            .expect("a parse state");
        for version in 0..25 {
            for _ in 0..=next(3) {
                let at = next(lines.len() + 1);
                match next(4) {
                    0 if !lines.is_empty() => {
                        lines.remove(at.min(lines.len() - 1));
                    }
                    1 if !lines.is_empty() => {
                        let copy = lines[next(lines.len())].clone();
                        lines.insert(at, copy);
                    }
                    2 if at < lines.len() => {
                        let cut = next(lines[at].len() + 1);
                        if lines[at].is_char_boundary(cut) {
                            lines[at].insert_str(cut, snippets[next(snippets.len())]);
                        }
                    }
                    _ => lines.insert(at, snippets[next(snippets.len())].to_owned()),
                }
            }
            let new = lines.join("\n");
            let chained = extractor.extract_facts(language, &new, Some((&state, &old)));
            let fresh = Extractor::new()
                .unwrap()
                .extract_facts(language, &new, None);
            assert_eq!(
                chained.symbols, fresh.symbols,
                "{path}, version {version}:\n{new}"
            );
            assert_eq!(
                chained.facts, fresh.facts,
                "{path}, version {version}:\n{new}"
            );
            let Some(next_state) = chained.state else {
                break; // over a limit: nothing to chain from
            };
            state = next_state;
            old = new;
        }
    }
    assert!(files >= 10, "only {files} fixture sources found");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// `open` repeated `depth` times around one function, then closed.
fn nested(depth: usize, open: &str, function: &str) -> String {
    let mut source = String::new();
    for i in 0..depth {
        source.push_str(&open.replace("{i}", &i.to_string()));
    }
    source.push_str(function);
    source.push_str(&"}\n".repeat(depth));
    source
}

#[test]
fn deep_nesting_is_cut_at_the_limit_and_reported_without_recursion() {
    use super::MAX_NESTING;
    let cases = [
        (rs(), nested(5_000, "mod m{i} {\n", "fn f() {}\n")),
        (cs(), nested(6_000, "class C{i} {\n", "void F() {}\n")),
        (rs(), nested(100_000, "mod m {", "fn f() {}")),
    ];
    for (language, source) in cases {
        let file = extract(language, &source);
        assert!(file.too_deep, "{language:?}");
        assert!(!file.name_too_long);
        assert_eq!(file.symbols.len(), MAX_NESTING as usize, "{language:?}");
        // The innermost symbol kept still changes when the cut-off code does.
        let edited = source.replacen("f()", "g()", 1).replacen("F()", "G()", 1);
        let last = |f: &FileSymbols| f.symbols.last().unwrap().content_hash;
        assert_ne!(
            last(&file),
            last(&extract(language, &edited)),
            "{language:?} {}",
            source.len()
        );
    }
    let shallow = nested(MAX_NESTING as usize - 1, "mod m{i} {\n", "fn f() {}\n");
    let file = extract(rs(), &shallow);
    assert!(!file.too_deep);
    assert_eq!(file.symbols.len(), MAX_NESTING as usize);
}

#[test]
fn names_too_long_for_a_note_are_left_to_their_container() {
    let long = "n".repeat(3_000);
    let source = format!("mod {long} {{ mod {long} {{ fn f() {{}} }} }}\nfn g() {{}}\n");
    let file = extract(rs(), &source);
    assert!(file.name_too_long);
    let kept: Vec<_> = file.symbols.iter().map(|s| s.qualname.len()).collect();
    assert_eq!(kept, vec![3_000, 1]);
    let sig = format!(
        "class A {{ void M({}) {{}} }}",
        "int a, ".repeat(1_100) + "int z"
    );
    assert!(extract(cs(), &sig).name_too_long);
}

#[test]
fn deeply_wrapped_impl_types_resolve_without_recursion() {
    let source = format!(
        "struct T;\nimpl {}T {{ fn f() {{}} }}\n",
        "&".repeat(50_000)
    );
    assert_eq!(names(rs(), &source), ["struct T", "method T::f"]);
}

fn py() -> Language {
    Language::from_name("python").unwrap()
}

const PY_SAMPLE: &str = r#""""Module docstring."""
import os

def top(a, b=1):
    """Top-level function."""
    def local():  # a local function is no symbol
        pass
    return a

@decorator
@other(1)
class Service(Base):
    """Class docstring."""
    limit = 3

    def __init__(self):
        self.x = 1

    @property
    def name(self):
        return "svc"

    class Inner:
        def deep(self):
            lambda: 1

    if DEBUG:
        def trace(self):
            pass
    else:
        def trace(self):
            pass

try:
    import fast
    def speed():
        return 1
except ImportError:
    def speed():
        return 0
finally:
    pass

with ctx():
    def in_with():
        pass

while True:
    def in_loop():  # not a container the contract names
        pass

@overload
def pick(x: int) -> int: ...
@overload
def pick(x: str) -> str: ...
def pick(x): return x
"#;

#[test]
fn python_kinds_qualnames_containers_and_twins() {
    assert_eq!(
        names(py(), PY_SAMPLE),
        [
            "function top",
            "class Service",
            "method Service.__init__",
            "method Service.name",
            "class Service.Inner",
            "method Service.Inner.deep",
            "method Service.trace",
            "method Service.trace#2",
            "function speed",
            "function speed#2",
            "function in_with",
            "function pick",
            "function pick#2",
            "function pick#3",
        ]
    );
}

#[test]
fn python_decorators_belong_to_their_definition() {
    let file = extract(py(), PY_SAMPLE);
    let service = file
        .symbols
        .iter()
        .find(|s| s.qualname == "Service")
        .unwrap();
    assert_eq!((service.start_line, service.end_line), (10, 32));
    let name = file
        .symbols
        .iter()
        .find(|s| s.qualname == "Service.name")
        .unwrap();
    assert_eq!(name.start_line, 19);
    assert!(text_of(py(), PY_SAMPLE, "Service").starts_with("@ decorator @ other ( 1 ) class"));
    // A decorator edit modifies the definition.
    let edited = PY_SAMPLE.replace("@other(1)", "@other(2)");
    assert_ne!(
        hash_of(py(), PY_SAMPLE, "Service"),
        hash_of(py(), &edited, "Service")
    );
}

#[test]
fn python_docstrings_are_comments() {
    let text = text_of(py(), PY_SAMPLE, "top");
    assert!(!text.contains("Top-level"), "{text}");
    assert!(!text_of(py(), PY_SAMPLE, "Service").contains("Class docstring"));
    let edited = PY_SAMPLE
        .replace("Top-level function.", "Returns a.")
        .replace("Class docstring.", "Serves.")
        .replace("Module docstring.", "Changed.");
    for symbol in ["top", "Service", "Service.__init__"] {
        assert_eq!(
            hash_of(py(), PY_SAMPLE, symbol),
            hash_of(py(), &edited, symbol),
            "{symbol}"
        );
    }
    // A string that is not first, or not alone, is code.
    let code = "def f():\n    x = 1\n    \"not a docstring\"\n";
    let changed = code.replace("not a", "no");
    assert_ne!(hash_of(py(), code, "f"), hash_of(py(), &changed, "f"));
    let first = "def g():\n    \"doc\" + x\n";
    assert_ne!(
        hash_of(py(), first, "g"),
        hash_of(py(), &first.replace("doc", "cod"), "g")
    );
}

fn java() -> Language {
    Language::from_name("java").unwrap()
}

const JAVA_SAMPLE: &str = r#"package com.acme.billing;

import java.util.List;

/** Invoices. */
@Entity
public class Invoice<T> extends Base implements Payable, Comparable<Invoice<T>> {
    private int a = 1, b;
    static final String NAME = "x";

    public Invoice(int x) { super(x); }
    Invoice(List<String> items, String... rest) { this(1); }

    public <U> U convert(final U u, int[] xs) { return u; }
    void print(Invoice<T> this, int n) {}
    void show(String s) {
        Runnable r = new Runnable() { public void run() {} };
        class Local { void inner() {} }
    }

    static { init(); }
    { instance(); }

    public static class Line { int qty; }
    enum Color { RED, GREEN; Color() {} int rgb() { return 0; } }
    interface Visitor { int LIMIT = 3; void visit(Line l); }
    record Point(int x, int y) {
        Point { if (x < 0) throw new IllegalArgumentException(); }
        Point(int x) { this(x, 0); }
    }
    @interface Audit { String value() default ""; int level(); }
}
"#;

#[test]
fn java_kinds_qualnames_signatures_and_declarators() {
    let p = "com.acme.billing";
    let expected: Vec<String> = [
        "class Invoice",
        "field Invoice.a",
        "field Invoice.b",
        "field Invoice.NAME",
        "constructor Invoice.Invoice(int)",
        "constructor Invoice.Invoice(List<String>,String...)",
        "method Invoice.convert(U,int[])",
        "method Invoice.print(int)",
        "method Invoice.show(String)",
        "class Invoice.Line",
        "field Invoice.Line.qty",
        "enum Invoice.Color",
        "constructor Invoice.Color.Color()",
        "method Invoice.Color.rgb()",
        "interface Invoice.Visitor",
        "field Invoice.Visitor.LIMIT",
        "method Invoice.Visitor.visit(Line)",
        "record Invoice.Point",
        "constructor Invoice.Point.Point(int,int)",
        "constructor Invoice.Point.Point(int)",
        "annotation Invoice.Audit",
        "method Invoice.Audit.value()",
        "method Invoice.Audit.level()",
    ]
    .iter()
    .map(|s| {
        let (kind, name) = s.split_once(' ').unwrap();
        format!("{kind} {p}.{name}")
    })
    .collect();
    assert_eq!(names(java(), JAVA_SAMPLE), expected);
}

#[test]
fn java_declarators_have_their_own_text_and_javadoc_is_a_comment() {
    let a = text_of(java(), JAVA_SAMPLE, "com.acme.billing.Invoice.a");
    assert_eq!(a, "private int a = 1 ;");
    let edited = JAVA_SAMPLE.replace("/** Invoices. */", "/** Bills. */");
    assert_eq!(
        hash_of(java(), JAVA_SAMPLE, "com.acme.billing.Invoice"),
        hash_of(java(), &edited, "com.acme.billing.Invoice")
    );
    // An anonymous or local class is its method's text.
    let edited = JAVA_SAMPLE.replace("void inner() {}", "void inner() { go(); }");
    assert_ne!(
        hash_of(java(), JAVA_SAMPLE, "com.acme.billing.Invoice.show"),
        hash_of(java(), &edited, "com.acme.billing.Invoice.show")
    );
}

fn go() -> Language {
    Language::from_name("go").unwrap()
}

const GO_SAMPLE: &str = r#"// Package store keeps things.
package store

import "fmt"

const Version = "1"

const (
	A = iota
	B
	c, d = 1, 2
)

var (
	cache = map[string]int{}
	hits  int
)

var once, twice = 1, 2

type Store[T any] struct {
	items []T
}

type Getter interface {
	Get(key string) (int, error)
	fmt.Stringer
}

type ID int

type Alias = Store[int]

func New() *Store[int] { return &Store[int]{} }

func (s *Store[T]) Get(key string) (int, error) {
	f := func() {}
	_ = f
	return 0, nil
}

func (Store[T]) String() string { return "" }

func (id ID) Valid() bool { return id > 0 }
"#;

#[test]
fn go_kinds_qualnames_receivers_and_specs() {
    assert_eq!(
        names(go(), GO_SAMPLE),
        [
            "const store.Version",
            "const store.A",
            "const store.B",
            "const store.c",
            "const store.d",
            "var store.cache",
            "var store.hits",
            "var store.once",
            "var store.twice",
            "struct store.Store",
            "interface store.Getter",
            "method store.Getter.Get",
            "type store.ID",
            "type store.Alias",
            "function store.New",
            "method store.Store.Get",
            "method store.Store.String",
            "method store.ID.Valid",
        ]
    );
}

#[test]
fn go_a_spec_is_the_text_of_each_of_its_names_and_methods_hang_under_their_type() {
    assert_eq!(text_of(go(), GO_SAMPLE, "store.c"), "c , d = 1 , 2");
    assert_eq!(text_of(go(), GO_SAMPLE, "store.B"), "B");
    // `iota` in A changes A, not B.
    let edited = GO_SAMPLE.replace("A = iota", "A = iota + 1");
    assert_ne!(
        hash_of(go(), GO_SAMPLE, "store.A"),
        hash_of(go(), &edited, "store.A")
    );
    assert_eq!(
        hash_of(go(), GO_SAMPLE, "store.B"),
        hash_of(go(), &edited, "store.B")
    );
    let file = extract(go(), GO_SAMPLE);
    let store = file
        .symbols
        .iter()
        .position(|s| s.qualname == "store.Store");
    let get = file
        .symbols
        .iter()
        .find(|s| s.qualname == "store.Store.Get")
        .unwrap();
    assert_eq!(get.parent, store);
    assert_eq!(get.name, "Get");
}

fn ts() -> Language {
    Language::from_name("typescript").unwrap()
}

const TS_SAMPLE: &str = r#"// A module.
import { x } from "./x";

export namespace Billing {
  export class Invoice<T> extends Base implements Payable {
    private total: number = 0;
    static #secret = 1;
    constructor(private readonly id: string) { super(); }
    get amount(): number { return this.total; }
    set amount(v: number) { this.total = v; }
    pay(): void;
    pay(n?: number): void { const inner = () => 1; }
  }
  export interface Payable {
    due: Date;
    pay(): void;
  }
  export enum Color { Red, Green }
  export type Id = string | number;
}

declare module "left-pad" {
  export function pad(s: string): string;
}

export function top(a: number): number;
export function top(a: any) { return a; }
export const handler = async (e: Event) => {}, limit = 3;
let counter = 0;
var legacy = function () {};
export default class {}
abstract class Shape { abstract area(): number; }
"#;

#[test]
fn typescript_kinds_qualnames_accessors_exports_and_declarators() {
    assert_eq!(
        names(ts(), TS_SAMPLE),
        [
            "namespace Billing",
            "class Billing.Invoice",
            "property Billing.Invoice.total",
            "property Billing.Invoice.#secret",
            "method Billing.Invoice.constructor",
            "method Billing.Invoice.amountget",
            "method Billing.Invoice.amountset",
            "method Billing.Invoice.pay",
            "method Billing.Invoice.pay#2",
            "interface Billing.Payable",
            "property Billing.Payable.due",
            "method Billing.Payable.pay",
            "enum Billing.Color",
            "type Billing.Id",
            "namespace left-pad",
            "function left-pad.pad",
            "function top",
            "function top#2",
            "function handler",
            "variable limit",
            "variable counter",
            "function legacy",
            "class default",
            "class Shape",
            "method Shape.area",
        ]
    );
}

#[test]
fn typescript_exports_belong_to_their_declaration_and_declarators_have_their_own_text() {
    let file = extract(ts(), TS_SAMPLE);
    let ns = file
        .symbols
        .iter()
        .find(|s| s.qualname == "Billing")
        .unwrap();
    assert_eq!(ns.start_line, 4);
    let limit = text_of(ts(), TS_SAMPLE, "limit");
    assert_eq!(limit, "export const limit = 3 ;");
    let edited = TS_SAMPLE.replace("limit = 3", "limit = 4");
    assert_eq!(
        hash_of(ts(), TS_SAMPLE, "handler"),
        hash_of(ts(), &edited, "handler")
    );
    assert_ne!(
        hash_of(ts(), TS_SAMPLE, "limit"),
        hash_of(ts(), &edited, "limit")
    );
}

#[test]
fn javascript_and_tsx_share_the_table() {
    let js = Language::from_name("javascript").unwrap();
    let source =
        "export default function () {}\nclass A { #x = 1; static y; get z() { return 1; } }\n\
                  const f = function* () {}, g = 2;\nmodule.exports = { f };\n";
    assert_eq!(
        names(js, source),
        [
            "function default",
            "class A",
            "property A.#x",
            "property A.y",
            "method A.zget",
            "function f",
            "variable g",
        ]
    );
    let tsx = Language::from_name("tsx").unwrap();
    let source = "export const App = () => <div>{1}</div>;\ninterface Props { n: number }\n";
    assert_eq!(
        names(tsx, source),
        ["function App", "interface Props", "property Props.n"]
    );
    assert_eq!(Language::from_path("a/b.mjs"), Some(js));
    assert_eq!(Language::from_path("a/b.tsx"), Some(tsx));
}

fn js() -> Language {
    Language::from_name("javascript").unwrap()
}

/// `count` functions, all on one line (a minified bundle) or one per line.
fn functions(count: usize, separator: &str) -> String {
    let body: Vec<String> = (0..count)
        .map(|i| format!("function f{i}(a){{return a+{i}}}"))
        .collect();
    body.join(separator) + "\n"
}

#[test]
fn a_crowded_line_is_over_the_limit_and_the_same_code_on_many_lines_is_not() {
    use super::{Limits, OverLimit};
    let mut extractor = Extractor::new().unwrap();
    let crowded = extractor.extract_incremental(js(), &functions(201, ";"), None);
    assert_eq!(
        crowded.over_limit,
        Some(OverLimit::CrowdedLine {
            line: 1,
            symbols: 201,
            limit: 200
        })
    );
    assert!(crowded.symbols.symbols.is_empty() && crowded.state.is_none());
    // At the limit, and spread over lines, it is source.
    let at_limit = extractor.extract_incremental(js(), &functions(200, ";"), None);
    assert_eq!(at_limit.over_limit, None);
    assert_eq!(at_limit.symbols.symbols.len(), 200);
    let spread = extractor.extract_incremental(js(), &functions(1000, ";\n"), None);
    assert_eq!(spread.over_limit, None);
    assert_eq!(spread.symbols.symbols.len(), 1000);
    // The limit is the caller's.
    let mut lenient = Extractor::new().unwrap().with_limits(Limits {
        symbols_per_line: 1000,
        ..Limits::default()
    });
    let lenient = lenient.extract_incremental(js(), &functions(201, ";"), None);
    assert_eq!(lenient.over_limit, None);
    assert_eq!(lenient.symbols.symbols.len(), 201);
}

#[test]
fn a_parse_over_its_step_budget_gives_up_and_the_next_parse_starts_afresh() {
    use super::{Limits, OverLimit};
    let source = functions(2000, ";\n");
    let mut counted = Extractor::new().unwrap().with_limits(Limits {
        parse_steps: 10,
        ..Limits::default()
    });
    let over = counted.extract_incremental(js(), &source, None);
    assert_eq!(over.over_limit, Some(OverLimit::ParseSteps { limit: 10 }));
    assert!(over.symbols.symbols.is_empty());
    // A small file fits the same budget, and is not a resumed remainder of
    // the cancelled parse.
    let small = counted.extract_incremental(js(), "function g() {}\n", None);
    assert_eq!(small.over_limit, None);
    let names: Vec<&str> = small
        .symbols
        .symbols
        .iter()
        .map(|s| s.qualname.as_str())
        .collect();
    assert_eq!(names, ["g"]);
    // The default budget leaves ordinary code alone.
    let fine = Extractor::new()
        .unwrap()
        .extract_incremental(js(), &source, None);
    assert_eq!(fine.over_limit, None);
    assert_eq!(fine.symbols.symbols.len(), 2000);
}
