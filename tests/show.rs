//! `git diffidx show` end to end: real repositories built from `fixtures/`,
//! the real binary, the labels DESIGN.md §3 asks for.

mod common;

use common::{fixture_repo, summarize, TestRepo};

/// The deltas of HEAD as summary lines, in note order.
fn head_summary(repo: &TestRepo) -> Vec<String> {
    summarize(&repo.ok(&["show", "--json"]))
}

/// Compares as multisets: ties in (path, line) are ordered by id, which is a hash.
fn assert_same(actual: Vec<String>, expected: &[&str]) {
    let mut a = actual.clone();
    let mut e: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
    a.sort();
    e.sort();
    assert_eq!(a, e, "\nactual (note order):\n{}\n", actual.join("\n"));
}

/// Snapshots both outputs of `show` for a fixture.
fn snapshot(name: &str, repo: &TestRepo) {
    let json = repo.ok(&["show", "--json"]);
    // The note's own bytes, one delta per line so that a change reads as a diff.
    let lines = json
        .replace("[{\"id\"", "[\n{\"id\"")
        .replace("},{\"id\"", "},\n{\"id\"")
        .replace("}],\"diagnostics\"", "}],\n\"diagnostics\"");
    insta::assert_snapshot!(format!("{name}__json"), lines);
    insta::assert_snapshot!(
        format!("{name}__text"),
        repo.ok(&["show", "--color", "never"])
    );
}

#[test]
fn comment_and_whitespace_only_edits_change_nothing() {
    let repo = fixture_repo("cs_comment_whitespace");
    assert_same(head_summary(&repo), &[]);
    assert!(repo.ok(&["show"]).contains("no symbol changes"));
    snapshot("cs_comment_whitespace", &repo);
}

#[test]
fn overloads_and_signature_changes() {
    let repo = fixture_repo("cs_overloads_signatures");
    assert_same(
        head_summary(&repo),
        &[
            "MODIFIED namespace Acme.Text Parser.cs:1-18",
            "MODIFIED class Acme.Text.Parser Parser.cs:3-17",
            "MODIFIED method Acme.Text.Parser.Parse(string,int) Parser.cs:7-10",
            "ADDED method Acme.Text.Parser.Parse(ReadOnlySpan<char>) Parser.cs:12-12",
            "DELETED method Acme.Text.Parser.Format(int) Parser.cs:14-14",
            "ADDED method Acme.Text.Parser.Format(long) Parser.cs:16-16",
        ],
    );
    snapshot("cs_overloads_signatures", &repo);
}

#[test]
fn partial_classes_nested_types_generics_file_scoped_namespace() {
    let repo = fixture_repo("cs_partial_nested_generic");
    assert_same(
        head_summary(&repo),
        &[
            "MODIFIED namespace Acme.Data Repository.cs:1-22",
            "MODIFIED class Acme.Data.Repository Repository.cs:3-15",
            "MODIFIED class Acme.Data.Repository.Page Repository.cs:9-14",
            "ADDED property Acme.Data.Repository.Page.Size Repository.cs:13-13",
            "MODIFIED class Acme.Data.Repository#2 Repository.cs:17-22",
            "ADDED method Acme.Data.Repository.Remove(int) Repository.cs:21-21",
        ],
    );
    snapshot("cs_partial_nested_generic", &repo);
}

#[test]
fn block_namespaces_nest() {
    let repo = fixture_repo("cs_namespaces");
    assert_same(
        head_summary(&repo),
        &[
            "MODIFIED namespace Acme.Geometry Shapes.cs:1-13",
            "MODIFIED namespace Acme.Geometry.Solids Shapes.cs:9-12",
            "MODIFIED interface Acme.Geometry.Solids.IVolume Shapes.cs:11-11",
            "ADDED method Acme.Geometry.Solids.IVolume.Surface() Shapes.cs:11-11",
            "MODIFIED namespace Acme.Geometry.Flat Shapes.cs:15-21",
            "MODIFIED record Acme.Geometry.Flat.Circle Shapes.cs:17-20",
            "ADDED property Acme.Geometry.Flat.Circle.Area Shapes.cs:19-19",
        ],
    );
    snapshot("cs_namespaces", &repo);
}

#[test]
fn edit_inside_else_branch_modifies_the_member() {
    let repo = fixture_repo("cs_preprocessor");
    assert_same(
        head_summary(&repo),
        &[
            "MODIFIED namespace Acme.Diagnostics Logger.cs:3-27",
            "MODIFIED class Acme.Diagnostics.Logger Logger.cs:5-26",
            "MODIFIED method Acme.Diagnostics.Logger.Trace(string) Logger.cs:8-17",
        ],
    );
    snapshot("cs_preprocessor", &repo);
}

#[test]
fn members_operators_indexers_declarators_explicit_implementations() {
    let repo = fixture_repo("cs_members");
    assert_same(
        head_summary(&repo),
        &[
            "MODIFIED namespace Acme.Finance Money.cs:1-29",
            "MODIFIED struct Acme.Finance.Money Money.cs:5-24",
            "DELETED field Acme.Finance.Money._rounding Money.cs:7-7",
            "ADDED field Acme.Finance.Money._scale Money.cs:7-7",
            "MODIFIED constructor Acme.Finance.Money.Money(decimal) Money.cs:10-10",
            "MODIFIED method Acme.Finance.Money.Format() Money.cs:13-13",
            "MODIFIED indexer Acme.Finance.Money.this[](int) Money.cs:15-15",
            "MODIFIED operator Acme.Finance.Money.explicit operator Money(decimal) Money.cs:21-21",
            "MODIFIED enum Acme.Finance.Currency Money.cs:28-28",
        ],
    );
    snapshot("cs_members", &repo);
}

#[test]
fn rust_inherent_and_trait_impls_and_attributes() {
    let repo = fixture_repo("rs_impls_traits");
    assert_same(
        head_summary(&repo),
        &[
            "MODIFIED struct Labeled src/wrapper.rs:4-8",
            "ADDED method Labeled::label src/wrapper.rs:19-21",
            "MODIFIED method Labeled::fmt [fmt::Display] src/wrapper.rs:25-27",
        ],
    );
    snapshot("rs_impls_traits", &repo);
}

#[test]
fn a_trait_impl_method_reads_the_same_in_show_log_and_the_pr_comment() {
    let repo = fixture_repo("rs_impls_traits");
    let shown = "Labeled::fmt as fmt::Display";
    let show = repo.ok(&["show", "--color", "never"]);
    assert!(show.contains(shown), "{show}");
    repo.ok(&["index", "-q", "--all"]);
    let log = repo.ok(&["log", "Labeled::fmt", "--color", "never"]);
    assert!(log.contains(shown), "{log}");
    let comment = repo.ok(&[
        "pr-comment",
        "--dry-run",
        "--base",
        "HEAD~1",
        "--head",
        "HEAD",
    ]);
    assert!(comment.contains(&format!("`{shown}`")), "{comment}");
}

#[test]
fn rust_cfg_twins_macros_extern_blocks() {
    let repo = fixture_repo("rs_cfg_macros_extern");
    assert_same(
        head_summary(&repo),
        &[
            "MODIFIED function page_size#2 src/platform.rs:8-11",
            "MODIFIED macro check src/platform.rs:13-19",
            "ADDED function getppid src/platform.rs:23-23",
            "DELETED static errno src/platform.rs:23-23",
            "MODIFIED module signals src/platform.rs:26-31",
            "MODIFIED function signals::install src/platform.rs:29-30",
            "MODIFIED type Pid src/platform.rs:34-34",
        ],
    );
    snapshot("rs_cfg_macros_extern", &repo);
}

#[test]
fn renames_moves_deletions_and_language_changes() {
    let repo = fixture_repo("files_rename_move_delete");
    assert_same(
        head_summary(&repo),
        &[
            "MOVED namespace Shop src/Clients.cs:1-8 <- src/Customers.cs modified",
            "MOVED class Shop.Customers src/Clients.cs:3-7 <- src/Customers.cs modified",
            "MOVED method Shop.Customers.Name(int) src/Clients.cs:5-5 <- src/Customers.cs",
            "MOVED method Shop.Customers.Count() src/Clients.cs:6-6 <- src/Customers.cs modified",
            "DELETED namespace Shop src/Legacy.cs:1-7",
            "DELETED class Shop.Legacy src/Legacy.cs:3-6",
            "DELETED method Shop.Legacy.Old() src/Legacy.cs:5-5",
            "MODIFIED namespace Shop src/Orders.cs:1-7",
            "MODIFIED class Shop.Orders src/Orders.cs:3-6",
            "DELETED namespace Shop src/Script.cs:1-1",
            "DELETED class Shop.Script src/Script.cs:1-1",
            "DELETED method Shop.Script.Run() src/Script.cs:1-1",
            "ADDED function run src/Script.rs:1-1",
            "ADDED namespace Shop src/Taxes.cs:1-10",
            "ADDED class Shop.Taxes src/Taxes.cs:3-9",
            "MOVED method Shop.Taxes.Tax(decimal) src/Taxes.cs:5-8 <- src/Orders.cs",
            "MOVED function clamp src/math/util.rs:1-3 <- src/util.rs",
            "MOVED function lerp src/math/util.rs:5-7 <- src/util.rs",
        ],
    );
    snapshot("files_rename_move_delete", &repo);
}

#[test]
fn root_commit_adds_everything() {
    let repo = fixture_repo("root_commit");
    let json = repo.ok(&["show", "--json"]);
    let note: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(note["parent"], serde_json::Value::Null);
    assert_same(
        summarize(&json),
        &[
            "ADDED struct Config lib.rs:1-3",
            "ADDED method Config::load lib.rs:6-8",
        ],
    );
    snapshot("root_commit", &repo);
}

#[test]
fn bad_input_is_reported_not_fatal() {
    let repo = fixture_repo("bad_input");
    let json = repo.ok(&["show", "--json"]);
    let note: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        common::problems(&note),
        [
            "Blob.cs binary",
            "Broken.cs parse_errors",
            // U+FFFD is no identifier character, so the replaced byte is a syntax error too.
            "Latin1.cs parse_errors",
            "Latin1.cs invalid_utf8"
        ]
    );
    let summary = summarize(&json);
    assert!(
        // The identifier ends where the invalid byte was.
        summary.contains(&"ADDED method Caf.M() Latin1.cs:1-1".to_string()),
        "{summary:?}"
    );
    assert!(!summary.iter().any(|l| l.contains("Blob.cs")));
    // What parses is still indexed: Fine() is untouched, so it is not reported.
    assert!(
        !summary.iter().any(|l| l.contains("Broken.Fine")),
        "{summary:?}"
    );
    let text = repo.ok(&["show", "--color", "never"]);
    assert!(
        text.contains("warning: Blob.cs is binary; skipped"),
        "{text}"
    );
    snapshot("bad_input", &repo);
}

#[test]
fn python_decorators_docstrings_and_conditional_definitions() {
    let repo = fixture_repo("py_decorators_docstrings");
    assert_same(
        head_summary(&repo),
        &[
            "MODIFIED function rate pkg/service.py:9-11",
            "MODIFIED class Invoice pkg/service.py:14-29",
            "MODIFIED method Invoice.amount pkg/service.py:21-22",
            "MODIFIED method Invoice.render#2 pkg/service.py:28-29",
            "DELETED function legacy pkg/service.py:31-32",
            "ADDED function refund pkg/service.py:32-33",
        ],
    );
    snapshot("py_decorators_docstrings", &repo);
}

#[test]
fn java_overloads_varargs_declarators_and_records() {
    let repo = fixture_repo("java_overloads_records");
    let path = "src/com/acme/Cart.java";
    let expected: Vec<String> = [
        "MODIFIED class com.acme.Cart :5-28",
        "MODIFIED field com.acme.Cart.limit :6-6",
        "MODIFIED method com.acme.Cart.total(int...) :14-16",
        "DELETED method com.acme.Cart.add(String) :19-21",
        "ADDED method com.acme.Cart.add(String,int) :19-21",
        "MODIFIED record com.acme.Cart.Line :23-27",
        "MODIFIED constructor com.acme.Cart.Line.Line(String,int) :24-26",
    ]
    .iter()
    .map(|line| line.replace(" :", &format!(" {path}:")))
    .collect();
    let expected: Vec<&str> = expected.iter().map(String::as_str).collect();
    assert_same(head_summary(&repo), &expected);
    snapshot("java_overloads_records", &repo);
}

#[test]
fn go_receivers_grouped_consts_and_struct_fields() {
    let repo = fixture_repo("go_receivers_specs");
    assert_same(
        head_summary(&repo),
        &[
            "MODIFIED const store.Limit pkg/store/store.go:7-7",
            "MODIFIED struct store.Store pkg/store/store.go:12-15",
            "MODIFIED method store.Store.Len pkg/store/store.go:26-26",
            "DELETED function store.helper pkg/store/store.go:27-27",
            "ADDED function store.New pkg/store/store.go:28-28",
        ],
    );
    snapshot("go_receivers_specs", &repo);
}

#[test]
fn typescript_exports_overloads_accessors_and_declarators() {
    let repo = fixture_repo("ts_exports_overloads_accessors");
    assert_same(
        head_summary(&repo),
        &[
            "MODIFIED namespace Shop src/cart.ts:1-16",
            "MODIFIED class Shop.Cart src/cart.ts:2-15",
            "MODIFIED method Shop.Cart.size [get] src/cart.ts:6-8",
            "MODIFIED method Shop.Cart.add#3 src/cart.ts:12-14",
            "MODIFIED variable limit src/cart.ts:18-18",
            "DELETED function legacy src/cart.ts:19-19",
            "ADDED function default src/cart.ts:20-20",
        ],
    );
    snapshot("ts_exports_overloads_accessors", &repo);
}
