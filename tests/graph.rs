//! The code graph: `graph` and `impact` on real repositories built in temp
//! dirs, and the graph kept by updates equal to one built from scratch.

mod common;

use std::path::Path;

use common::{succeeded, TestRepo};
use serde_json::Value;

fn graph_dump(repo: &TestRepo) -> Vec<String> {
    let git = diffidx_core::git::Repo::discover(repo.path()).unwrap();
    let store = diffidx_lib::open::for_reading(&git, std::time::Duration::from_secs(10)).unwrap();
    store.graph_dump().unwrap()
}

/// The graph after updates, then after `rebuild` (from scratch): equal.
fn assert_equal_to_fresh_build(repo: &TestRepo) -> usize {
    let updated = graph_dump(repo);
    succeeded(&repo.diffidx(&["rebuild"]));
    let fresh = graph_dump(repo);
    if updated != fresh {
        let only_updated: Vec<&String> = updated.iter().filter(|l| !fresh.contains(l)).collect();
        let only_fresh: Vec<&String> = fresh.iter().filter(|l| !updated.contains(l)).collect();
        panic!(
            "the updated graph differs from a fresh build\nonly updated ({}):\n{}\nonly fresh ({}):\n{}",
            only_updated.len(),
            only_updated.iter().take(30).map(|s| s.as_str()).collect::<Vec<_>>().join("\n"),
            only_fresh.len(),
            only_fresh.iter().take(30).map(|s| s.as_str()).collect::<Vec<_>>().join("\n"),
        );
    }
    updated.len()
}

const SERVICE: &str = r#"using System;
using Acme.Util;

namespace Acme.Pay
{
    public interface ICharger { void Charge(int cents); }

    public class BaseService
    {
        protected void Log(string message) { }
    }

    public class PaymentService : BaseService, ICharger
    {
        public void Charge(int cents)
        {
            Log("charge");
            Helper.Round(cents);
        }
    }
}
"#;

const HELPER: &str = r#"namespace Acme.Util
{
    public static class Helper
    {
        public static int Round(int x) => x;
    }
}
"#;

const CHECKOUT: &str = r#"using Acme.Pay;

namespace Acme.Shop
{
    class Checkout
    {
        private readonly ICharger charger;

        void Pay()
        {
            var service = new PaymentService();
            service.Charge(5);
            charger.Charge(7);
        }
    }
}
"#;

fn json(repo: &TestRepo, args: &[&str]) -> Value {
    serde_json::from_str(&repo.ok(args)).expect("JSON output")
}

/// `qualname+sig` of one listed symbol.
fn display(r: &Value) -> String {
    format!(
        "{}{}",
        r["qualname"].as_str().unwrap(),
        r["sig"].as_str().unwrap()
    )
}

fn qualnames(list: &Value) -> Vec<String> {
    list.as_array().into_iter().flatten().map(display).collect()
}

#[test]
fn graph_answers_callers_callees_bases_and_imports() {
    let mut repo = TestRepo::new();
    repo.write("src/Pay/Service.cs", SERVICE);
    repo.write("src/Util/Helper.cs", HELPER);
    repo.write("src/Shop/Checkout.cs", CHECKOUT);
    repo.commit("payments");
    succeeded(&repo.diffidx(&["init", "--no-hooks"]));

    let answer = json(
        &repo,
        &[
            "graph",
            "PaymentService.Charge",
            "--callers",
            "--callees",
            "--json",
        ],
    );
    assert_eq!(
        qualnames(&answer["symbols"]),
        ["Acme.Pay.PaymentService.Charge(int)"]
    );
    assert_eq!(qualnames(&answer["callers"]), ["Acme.Shop.Checkout.Pay()"]);
    let callees = qualnames(&answer["callees"]);
    assert!(
        callees.contains(&"Acme.Pay.BaseService.Log(string)".to_owned()),
        "{callees:?}"
    );
    assert!(
        callees.contains(&"Acme.Util.Helper.Round(int)".to_owned()),
        "{callees:?}"
    );
    assert_eq!(answer["callers"][0]["resolution"], "scoped");
    assert_eq!(answer["callers"][0]["path"], "src/Shop/Checkout.cs");

    // The interface method is called through a field typed by the interface.
    let answer = json(&repo, &["graph", "ICharger.Charge", "--callers", "--json"]);
    assert_eq!(qualnames(&answer["callers"]), ["Acme.Shop.Checkout.Pay()"]);

    let answer = json(
        &repo,
        &["graph", "Acme.Pay.PaymentService", "--inherits", "--json"],
    );
    let mut bases: Vec<(String, String)> = answer["bases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["edge"].as_str().unwrap().to_owned(),
                b["qualname"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    bases.sort();
    assert_eq!(
        bases,
        [
            ("IMPLEMENTS".to_owned(), "Acme.Pay.ICharger".to_owned()),
            ("INHERITS".to_owned(), "Acme.Pay.BaseService".to_owned())
        ]
    );

    let answer = json(&repo, &["graph", "Checkout.Pay", "--imports", "--json"]);
    let imports: Vec<&str> = answer["imports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["target"].as_str().unwrap())
        .collect();
    assert_eq!(imports, ["Acme.Pay"]);

    // Two hops: Round is called by Charge, which Checkout.Pay calls.
    let answer = json(
        &repo,
        &[
            "graph",
            "Helper.Round",
            "--callers",
            "--depth",
            "2",
            "--json",
        ],
    );
    let callers: Vec<(u64, String)> = answer["callers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["distance"].as_u64().unwrap(),
                c["qualname"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        callers,
        [
            (1, "Acme.Pay.PaymentService.Charge".to_owned()),
            (2, "Acme.Shop.Checkout.Pay".to_owned())
        ]
    );

    // Precision over recall: only exact edges, and Checkout's are scoped.
    let answer = json(
        &repo,
        &[
            "graph",
            "PaymentService.Charge",
            "--callers",
            "--min-resolution",
            "exact",
            "--json",
        ],
    );
    assert!(answer.get("callers").is_none(), "{answer}");

    let unknown = repo.diffidx(&["graph", "NoSuchThing"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no symbol in the code graph"));
}

#[test]
fn impact_ranks_what_calls_a_changed_symbol() {
    let mut repo = TestRepo::new();
    repo.write("src/Pay/Service.cs", SERVICE);
    repo.write("src/Util/Helper.cs", HELPER);
    repo.write("src/Shop/Checkout.cs", CHECKOUT);
    repo.commit("payments");
    repo.write("src/Util/Helper.cs", HELPER.replace("=> x;", "=> x + 0;"));
    repo.commit("round differently");
    succeeded(&repo.diffidx(&["init", "--no-hooks"]));
    let answer = json(&repo, &["impact", "HEAD", "--json"]);
    // The method, and the class and namespace whose text holds it.
    let touched = qualnames(&answer["touched"]);
    assert_eq!(
        touched,
        [
            "Acme.Util",
            "Acme.Util.Helper",
            "Acme.Util.Helper.Round(int)"
        ]
    );
    let reached: Vec<(u64, String)> = answer["reached"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["distance"].as_u64().unwrap(),
                c["qualname"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        reached,
        [
            (1, "Acme.Pay.PaymentService.Charge".to_owned()),
            (2, "Acme.Shop.Checkout.Pay".to_owned())
        ]
    );
    assert_eq!(answer["files"], 2);
    let text = repo.ok(&["impact", "HEAD", "--depth", "1"]);
    assert!(
        text.contains("reached within 1 hop (1 symbol in 1 file):"),
        "{text}"
    );
    assert!(
        text.contains("1  Acme.Pay.PaymentService.Charge(int)  src/Pay/Service.cs:15  scoped"),
        "{text}"
    );
}

/// A history that adds, edits, renames and deletes files, changes bases
/// and adds a competing declaration: indexed commit by commit (as the
/// hooks do), the graph equals a fresh build at every step checked.
#[test]
fn updates_equal_a_fresh_build_on_a_changing_history() {
    let mut repo = TestRepo::new();
    repo.write("src/Pay/Service.cs", SERVICE);
    repo.write("src/Util/Helper.cs", HELPER);
    repo.commit("payments");
    succeeded(&repo.diffidx(&["init", "--no-hooks"]));
    type Step = Box<dyn Fn(&TestRepo)>;
    let steps: Vec<Step> = vec![
        Box::new(|r| r.write("src/Shop/Checkout.cs", CHECKOUT)),
        // A second Round(int) elsewhere: Service.cs did not change, but its
        // call's resolution must.
        Box::new(|r| {
            r.write(
                "src/Other/Helper.cs",
                "namespace Acme.Other { public static class Helper { public static int Round(int x) => x; } }\n",
            )
        }),
        Box::new(|r| {
            r.git(&["mv", "src/Util/Helper.cs", "src/Util/Rounding.cs"]);
        }),
        Box::new(|r| {
            r.write(
                "src/Pay/Service.cs",
                SERVICE
                    .replace("public class BaseService", "public class CoreService")
                    .replace(": BaseService,", ": CoreService,"),
            )
        }),
        Box::new(|r| r.remove("src/Other/Helper.cs")),
        Box::new(|r| {
            r.write(
                "src/lib.rs",
                "mod store;\nuse store::Store;\npub fn run() { Store::open().add(); }\n",
            );
            r.write(
                "src/store.rs",
                "pub struct Store;\nimpl Store { pub fn open() -> Store { Store } pub fn add(&self) { helper(); } }\nfn helper() {}\n",
            );
        }),
        Box::new(|r| r.remove("src/store.rs")),
    ];
    let facts = repo.path().join(".git/diffidx/facts");
    for (i, step) in steps.iter().enumerate() {
        step(&repo);
        repo.git(&["add", "-A"]);
        repo.commit(&format!("step {i}"));
        // The facts beside the store are a cache: lost or damaged, the
        // files are parsed again.
        match i {
            1 => std::fs::remove_dir_all(&facts).unwrap(),
            3 => {
                for entry in std::fs::read_dir(&facts).unwrap() {
                    std::fs::write(entry.unwrap().path(), b"{\"d\": [").unwrap();
                }
            }
            _ => {}
        }
        succeeded(&repo.diffidx(&["index"]));
        // One facts file per source file of the tree, and at most one per
        // source file of the graph before (kept for a checkout and back).
        let files = std::fs::read_dir(&facts).unwrap().count();
        let sources = |rev: &str| -> std::collections::BTreeSet<String> {
            repo.git(&["ls-tree", "-r", rev])
                .lines()
                .filter(|l| l.ends_with(".cs") || l.ends_with(".rs"))
                .map(str::to_owned)
                .collect()
        };
        let (now, before) = (sources("HEAD"), sources("HEAD~1"));
        let either = now.union(&before).count();
        assert!(
            now.len() <= files && files <= either,
            "{files} facts files after step {i}: {} source files, {either} in this tree or the one before",
            now.len()
        );
        assert_equal_to_fresh_build(&repo);
    }
}

/// A repository of one commit: `a.py` declares `f`, which `b.py` calls.
fn f_and_its_caller() -> TestRepo {
    let mut repo = TestRepo::new();
    repo.write("a.py", "def f():\n    pass\n");
    repo.write("b.py", "from a import f\n\ndef g():\n    f()\n");
    repo.commit("start");
    repo
}

/// A merged side branch's commits are loaded after the graph moved past
/// them: a side commit that only reworded a comment carries its version of
/// the file's symbols (their lines), which history and graph share. The
/// graph writes that file's rows again, so its lines stay the tree's.
#[test]
fn a_merged_side_branch_leaves_the_graph_lines_of_the_tree() {
    // The load finds the graph's files by key, or (past a few) by reading
    // them all.
    for lookups_at_most in ["500", "0"] {
        let mut repo = f_and_its_caller();
        succeeded(&repo.diffidx(&["init", "--no-hooks"]));
        repo.git(&["checkout", "-q", "-b", "side"]);
        repo.write("a.py", "# one\n# two\ndef f():\n    pass\n");
        repo.commit("side: a comment");
        repo.git(&["checkout", "-q", "main"]);
        repo.write("a.py", "# one\n# two\n\n\ndef f():\n    pass\n");
        repo.commit("main: the comment, spaced");
        succeeded(&repo.diffidx(&["index"]));
        // The merge keeps main's tree: a.py does not change on the main line.
        repo.git(&["merge", "-q", "-s", "ours", "--no-edit", "side"]);
        let env = [("DIFFIDX_LOOKUPS_AT_MOST", lookups_at_most)];
        succeeded(&repo.diffidx_env(&["index"], &env));
        let f = graph_dump(&repo)
            .into_iter()
            .find(|l| l.starts_with("file-symbol a.py") && l.contains("| f |"))
            .expect("f in the graph");
        assert!(f.contains("| 5 | 6 |"), "{lookups_at_most}: {f}");
        assert_equal_to_fresh_build(&repo);
    }
}

/// A file derived again whose rows come out as the store holds them is
/// left alone.
#[test]
fn only_files_whose_rows_changed_are_written() {
    let mut repo = f_and_its_caller();
    succeeded(&repo.diffidx(&["init", "--no-hooks"]));
    // A method named f too: b.py, which calls a name declared anew, is
    // derived again, and its rows are those stored (its f is a's).
    repo.write(
        "a.py",
        "def f():\n    pass\n\nclass K:\n    def f(self):\n        pass\n",
    );
    repo.commit("K.f");
    let said = succeeded(&repo.diffidx(&["index", "--timings"]));
    assert!(said.contains("2 derived, 1 of them written"), "{said}");
    assert_equal_to_fresh_build(&repo);
}

/// A checkout and back: the facts of the files the graph described before
/// are kept, and read instead of parsing the files again.
#[test]
fn a_checkout_and_back_parses_nothing_again() {
    let mut repo = f_and_its_caller();
    repo.write("a.py", "def f():\n    return 1\n");
    repo.commit("f returns");
    succeeded(&repo.diffidx(&["init", "--no-hooks"]));
    let graph_line = |said: &str| {
        said.lines()
            .find(|l| l.trim_start().starts_with("code graph:"))
            .map(str::trim)
            .unwrap_or_default()
            .to_owned()
    };
    repo.git(&["checkout", "-q", "--detach", "HEAD~1"]);
    let away = succeeded(&repo.diffidx(&["index", "--timings"]));
    assert!(
        graph_line(&away).starts_with(
            "code graph: 1 of 2 files read (0 with the facts the diffing found, 0 with facts kept"
        ),
        "{away}"
    );
    repo.git(&["checkout", "-q", "main"]);
    let back = succeeded(&repo.diffidx(&["index", "--timings"]));
    assert!(
        graph_line(&back).starts_with(
            "code graph: 1 of 2 files read (0 with the facts the diffing found, 1 with facts kept"
        ),
        "{back}"
    );
    assert_equal_to_fresh_build(&repo);
}

/// Files are derived on two threads, each with its own memo of lookups: the
/// graph is the one a single thread derives.
#[test]
fn two_threads_derive_the_graph_one_thread_derives() {
    let mut repo = TestRepo::new();
    repo.write(
        "pkg/__init__.py",
        "from .base import *\nfrom .shapes import Square\n",
    );
    repo.write(
        "pkg/base.py",
        "class Shape:\n    def area(self):\n        return 0\n\n    def show(self):\n        return self.area()\n",
    );
    repo.write(
        "pkg/shapes.py",
        "from .base import Shape\n\nclass Square(Shape):\n    def area(self):\n        return 4\n",
    );
    for (i, name) in ["a", "b", "c", "d", "e"].iter().enumerate() {
        repo.write(
            &format!("{name}.py"),
            format!(
                "from pkg import Shape, Square\n\ndef run_{i}():\n    s = Square()\n    \
                 return s.show() + Shape().area()\n"
            ),
        );
    }
    repo.commit("shapes");
    succeeded(&repo.diffidx(&["init", "--no-hooks"]));
    let dump_on = |threads: &str| {
        succeeded(&repo.diffidx_env(&["rebuild"], &[("DIFFIDX_DIFF_THREADS", threads)]));
        graph_dump(&repo)
    };
    let one = dump_on("1");
    assert!(
        one.iter().filter(|l| l.starts_with("CALLS ")).count() >= 10,
        "{one:#?}"
    );
    assert_eq!(dump_on("2"), one);
}

/// The same on real history: this repository's last 50 first-parent
/// commits, stepped through one at a time with `HEAD` moving as a checkout
/// does, compared with a fresh build every 25 steps and at the end. Each
/// step costs seconds, so the default is kept to what CI can afford;
/// `DIFFIDX_GRAPH_STEPS=N` steps through the last N (0: all), and another
/// repository is checked the same way with `DIFFIDX_GRAPH_HISTORY=PATH`.
#[test]
fn updates_equal_a_fresh_build_on_real_history() {
    let other = std::env::var_os("DIFFIDX_GRAPH_HISTORY").map(std::path::PathBuf::from);
    let source = other
        .as_deref()
        .unwrap_or(Path::new(env!("CARGO_MANIFEST_DIR")));
    let is_repo = source.join(".git").exists() || source.join("HEAD").exists();
    if source.join(".git/shallow").exists() || source.join("shallow").exists() || !is_repo {
        eprintln!("skipped: {} is not a full clone", source.display());
        return;
    }
    let repo = TestRepo::clone_of(source, 0);
    let count: usize = repo
        .git(&["rev-list", "--count", "HEAD"])
        .trim()
        .parse()
        .unwrap();
    assert!(count >= 50, "{count} commits");
    let first_parent = repo.git(&["rev-list", "--first-parent", "--reverse", "HEAD"]);
    let commits: Vec<&str> = first_parent.lines().collect();
    let last = match std::env::var("DIFFIDX_GRAPH_STEPS").map(|n| n.parse::<usize>()) {
        Ok(Ok(0)) => commits.len(),
        Ok(Ok(n)) => n,
        _ => 50,
    };
    let steps = &commits[commits.len().saturating_sub(last)..];
    repo.git(&["checkout", "-q", "--detach", steps[0]]);
    succeeded(&repo.diffidx(&["init", "--no-hooks", "--all"]));
    let mut rows = 0;
    for (i, commit) in steps.iter().enumerate() {
        repo.git(&["checkout", "-q", "--detach", commit]);
        succeeded(&repo.diffidx(&["index"]));
        if i % 25 == 24 || i + 1 == steps.len() {
            rows = assert_equal_to_fresh_build(&repo);
        }
    }
    assert!(rows > 1000, "{rows} graph rows");
}

#[test]
fn python_calls_and_bases_reach_the_graph() {
    let mut repo = TestRepo::new();
    repo.write(
        "shop/cart.py",
        "class Base:\n    def log(self, m):\n        pass\n\n\
         class Cart(Base):\n    def total(self):\n        self.log('t')\n        return helper(1)\n\n\
         def helper(x):\n    return x\n",
    );
    repo.write(
        "shop/checkout.py",
        "from shop.cart import Cart\n\ndef pay():\n    return Cart().total()\n",
    );
    repo.commit("python");
    succeeded(&repo.diffidx(&["index"]));
    let callers = json(&repo, &["graph", "helper", "--callers", "--json"]);
    assert_eq!(qualnames(&callers["callers"]), ["Cart.total"], "{callers}");
    let callees = json(&repo, &["graph", "Cart.total", "--callees", "--json"]);
    assert_eq!(
        qualnames(&callees["callees"]),
        ["Base.log", "helper"],
        "{callees}"
    );
    let bases = json(&repo, &["graph", "Cart", "--inherits", "--json"]);
    assert_eq!(qualnames(&bases["bases"]), ["Base"], "{bases}");
    assert_equal_to_fresh_build(&repo);
}

/// Calls that match no declaration make a caller count a lower bound: a
/// deleted function still called, a method called on a module from outside.
#[test]
fn callers_are_a_lower_bound_when_calls_match_nothing() {
    let mut repo = TestRepo::new();
    repo.write(
        "shop/util.py",
        "def helper(x):\n    return x\n\ndef other():\n    return 2\n",
    );
    repo.write(
        "shop/cart.py",
        "from shop.util import helper\n\ndef total():\n    return helper(1)\n",
    );
    repo.commit("shop");
    succeeded(&repo.diffidx(&["index"]));
    let known = json(&repo, &["graph", "total", "--callers", "--json"]);
    assert!(known.get("unresolved_calls").is_none(), "{known}");
    let text = repo.ok(&["graph", "total", "--callers"]);
    assert!(text.contains("callers (0):"), "{text}");

    repo.write("shop/util.py", "def other():\n    return 2\n");
    repo.write(
        "shop/api.py",
        "import payments\n\ndef pay():\n    return payments.total()\n",
    );
    repo.commit("drop helper; call a total from outside");
    succeeded(&repo.diffidx(&["index"]));

    // The deleted helper reaches nothing, yet cart.py still calls it.
    let answer = json(&repo, &["impact", "HEAD", "--json"]);
    assert_eq!(
        answer["unresolved_calls"],
        serde_json::json!([{"name": "helper", "qualified": 0, "bare": 1, "files": 1}]),
        "{answer}"
    );
    let text = repo.ok(&["impact", "HEAD"]);
    assert!(text.contains("(at least 0 symbols in 0 files):"), "{text}");
    assert!(
        text.contains(
            "+ 1 call named helper, in 1 file, matched no declaration \
             (1 by bare names not in scope); some may be callers"
        ),
        "{text}"
    );
    // `payments.total()` may call `total`: the answer says so.
    let answer = json(&repo, &["graph", "total", "--callers", "--json"]);
    assert_eq!(
        answer["unresolved_calls"],
        serde_json::json!([{"name": "total", "qualified": 1, "bare": 0, "files": 1}]),
        "{answer}"
    );
    let text = repo.ok(&["graph", "total", "--callers"]);
    assert!(text.contains("callers (at least 0):"), "{text}");
    assert!(text.contains("1 on receivers of unknown type"), "{text}");
    assert_equal_to_fresh_build(&repo);
}

/// By default only `exact` and `scoped` edges are followed; those found by
/// name only are counted, and one flag away.
#[test]
fn edges_found_by_name_only_are_left_out_by_default_and_counted() {
    let mut repo = TestRepo::new();
    repo.write(
        "shop/cart.py",
        "class Cart:\n    def total(self):\n        return 1\n\n\
         def checkout(cart):\n    return cart.total()\n\n\
         def direct():\n    return Cart().total()\n",
    );
    repo.commit("shop");
    succeeded(&repo.diffidx(&["index"]));
    let answer = json(&repo, &["graph", "Cart.total", "--callers", "--json"]);
    assert_eq!(qualnames(&answer["callers"]), ["direct"], "{answer}");
    assert_eq!(answer["more_at_lower_levels"], 1, "{answer}");
    let text = repo.ok(&["graph", "Cart.total", "--callers"]);
    assert!(text.contains("callers (at least 1):"), "{text}");
    assert!(
        text.contains("+ 1 more found by name only, left out as less certain"),
        "{text}"
    );
    let all = json(
        &repo,
        &[
            "graph",
            "Cart.total",
            "--callers",
            "--min-resolution",
            "ambiguous",
            "--json",
        ],
    );
    assert_eq!(qualnames(&all["callers"]), ["direct", "checkout"], "{all}");
    assert!(all.get("more_at_lower_levels").is_none(), "{all}");
}

/// A call made in a function nested in another (a decorator factory) has
/// the nested function for its caller, and callers go on from the holder.
#[test]
fn a_nested_functions_holder_is_reached_through_it() {
    let mut repo = TestRepo::new();
    repo.write(
        "web/app.py",
        "class App:\n    def add_rule(self, rule):\n        pass\n\n\
         \x20   def route(self, rule):\n        def decorator(f):\n            self.add_rule(rule)\n            return f\n        return decorator\n\n\
         def serve():\n    return App().route('/')\n",
    );
    repo.commit("web");
    succeeded(&repo.diffidx(&["index"]));
    let answer = json(
        &repo,
        &[
            "graph",
            "App.add_rule",
            "--callers",
            "--depth",
            "2",
            "--json",
        ],
    );
    let reached: Vec<(u64, String, String)> = answer["callers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["distance"].as_u64().unwrap(),
                c["qualname"].as_str().unwrap().to_owned(),
                c["edge"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(
        reached.contains(&(1, "App.route.decorator".to_owned(), "CALLS".to_owned())),
        "{answer}"
    );
    assert!(
        reached.contains(&(1, "App.route".to_owned(), "CONTAINS".to_owned())),
        "{answer}"
    );
    assert!(
        reached.iter().any(|(d, q, _)| *d == 2 && q == "serve"),
        "{answer}"
    );
    assert_equal_to_fresh_build(&repo);
}

/// `(qualname+sig, through)` of each caller.
fn callers_through(answer: &Value, list: &str) -> Vec<(String, Option<String>)> {
    answer[list]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| (display(c), c["through"].as_str().map(str::to_owned)))
        .collect()
}

#[test]
fn a_call_through_an_interface_or_a_base_reaches_the_overrides() {
    let mut repo = TestRepo::new();
    repo.write(
        "src/p/Shape.java",
        "package p;\npublic interface Shape {\n    double area();\n    double area(double scale);\n}\n",
    );
    repo.write(
        "src/p/Base.java",
        "package p;\npublic abstract class Base implements Shape {\n\
         \x20   public String name() { return \"base\"; }\n}\n",
    );
    repo.write(
        "src/p/Circle.java",
        "package p;\npublic class Circle extends Base {\n    private double r;\n\
         \x20   public double area() { return 3.14 * r * r; }\n\
         \x20   public double area(double scale) { return scale * area(); }\n\
         \x20   public String name() { return \"circle\"; }\n}\n",
    );
    repo.write(
        "src/p/Plot.java",
        "package p;\npublic class Plot {\n    public double area() { return 0; }\n}\n",
    );
    repo.write(
        "src/p/Report.java",
        "package p;\npublic class Report {\n\
         \x20   public double total(Shape s) { return s.area(); }\n\
         \x20   public double scaled(Shape s) { return s.area(2.0); }\n\
         \x20   public String label(Base b) { return b.name(); }\n\
         \x20   public double one(Circle c) { return c.area(); }\n\
         \x20   public double plot(Plot p) { return p.area(); }\n}\n",
    );
    repo.commit("shapes");
    succeeded(&repo.diffidx(&["index"]));
    // The interface's callers, and Circle's own, are Circle.area()'s: a
    // call of Shape.area() may run it. Not the overload's, not Plot's.
    let answer = json(&repo, &["graph", "p.Circle.area()", "--callers", "--json"]);
    let through = |q: &str, t: Option<&str>| (q.to_owned(), t.map(str::to_owned));
    // Direct callers first.
    assert_eq!(
        callers_through(&answer, "callers"),
        [
            through("p.Circle.area(double)", None),
            through("p.Report.one(Circle)", None),
            through("p.Report.total(Shape)", Some("p.Shape.area")),
        ],
        "{answer}"
    );
    // Through an abstract base's interface, by parameter count.
    let answer = json(
        &repo,
        &["graph", "p.Circle.area(double)", "--callers", "--json"],
    );
    assert_eq!(
        callers_through(&answer, "callers"),
        [through("p.Report.scaled(Shape)", Some("p.Shape.area"))],
        "{answer}"
    );
    // An override of a base class's method.
    let answer = json(&repo, &["graph", "p.Circle.name", "--callers", "--json"]);
    assert_eq!(
        callers_through(&answer, "callers"),
        [through("p.Report.label(Base)", Some("p.Base.name"))],
        "{answer}"
    );
    // What the interface's method is called by stays as it was.
    let answer = json(&repo, &["graph", "p.Shape.area()", "--callers", "--json"]);
    assert_eq!(
        callers_through(&answer, "callers"),
        [through("p.Report.total(Shape)", None)],
        "{answer}"
    );
    // What the call may run: the declaration it names and its override,
    // not a same-named method of an unrelated class.
    let answer = json(&repo, &["graph", "p.Report.total", "--callees", "--json"]);
    assert_eq!(
        qualnames(&answer["callees"]),
        ["p.Circle.area()", "p.Shape.area()"],
        "{answer}"
    );
    // The interface's declaration has no body: what runs is Circle's.
    let bodiless: Vec<(String, bool)> = answer["callees"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let qualname = c["qualname"].as_str().unwrap_or_default().to_owned();
            (qualname, c["bodiless"].as_bool().unwrap_or(false))
        })
        .collect();
    assert!(
        bodiless.contains(&("p.Shape.area".to_owned(), true))
            && bodiless.contains(&("p.Circle.area".to_owned(), false)),
        "{answer}"
    );
    let text = repo.ok(&["graph", "p.Report.total", "--callees"]);
    assert!(
        text.contains("p.Shape.area()  src/p/Shape.java:3  scoped, no body"),
        "{text}"
    );
    assert!(!text.contains("Circle.java:4  scoped, no body"), "{text}");
    // A change to the override puts the interface's callers at risk.
    repo.write(
        "src/p/Circle.java",
        "package p;\npublic class Circle extends Base {\n    private double r;\n\
         \x20   public double area() { return Math.PI * r * r; }\n\
         \x20   public double area(double scale) { return scale * area(); }\n\
         \x20   public String name() { return \"circle\"; }\n}\n",
    );
    repo.commit("pi");
    succeeded(&repo.diffidx(&["index"]));
    let impact = json(&repo, &["impact", "HEAD", "--depth", "1", "--json"]);
    let mut reached = callers_through(&impact, "reached");
    reached.sort();
    assert_eq!(
        reached,
        [
            through("p.Circle.area(double)", None),
            through("p.Report.one(Circle)", None),
            through("p.Report.total(Shape)", Some("p.Shape.area")),
        ],
        "{impact}"
    );
    let text = repo.ok(&["graph", "p.Circle.area()", "--callers"]);
    assert!(
        text.contains("p.Report.total(Shape)  src/p/Report.java:3  scoped, through p.Shape.area"),
        "{text}"
    );
}

#[test]
fn a_python_override_has_its_bases_callers_but_not_their_constructions() {
    let mut repo = TestRepo::new();
    repo.write(
        "jobs.py",
        "class Job:\n    def __init__(self):\n        self.done = False\n\n\
         \x20   def run(self):\n        self.step()\n\n\
         \x20   def step(self):\n        pass\n\n\n\
         class Backup(Job):\n    def __init__(self):\n        super().__init__()\n\n\
         \x20   def step(self):\n        return 1\n\n\n\
         def main():\n    Job().run()\n",
    );
    repo.commit("jobs");
    succeeded(&repo.diffidx(&["index"]));
    let through = |q: &str, t: Option<&str>| (q.to_owned(), t.map(str::to_owned));
    // The template method's call of `self.step()` may run the override.
    let answer = json(&repo, &["graph", "Backup.step", "--callers", "--json"]);
    assert_eq!(
        callers_through(&answer, "callers"),
        [through("Job.run", Some("Job.step"))],
        "{answer}"
    );
    // `Job()` makes a Job: it never runs Backup's `__init__`.
    let answer = json(&repo, &["graph", "Backup.__init__", "--callers", "--json"]);
    assert!(callers_through(&answer, "callers").is_empty(), "{answer}");
    let answer = json(&repo, &["graph", "Job.__init__", "--callers", "--json"]);
    assert!(!callers_through(&answer, "callers").is_empty(), "{answer}");
}

#[test]
fn answers_piped_to_a_reader_that_stops_early_end_quietly() {
    let mut repo = TestRepo::new();
    repo.write(
        "jobs.py",
        "def step():\n    pass\n\n\ndef run():\n    step()\n",
    );
    repo.commit("jobs");
    succeeded(&repo.diffidx(&["index"]));
    for args in [
        &["graph", "step", "--callers", "--json"][..],
        &["impact", "HEAD", "--json"],
        &["search", "step", "--json"],
        &["search", "step", "--files"],
    ] {
        // `| head -0`: the reader is gone before the answer is written.
        let mut child = repo
            .command(common::bin())
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && !stderr.contains("panicked"),
            "{args:?}: {:?} {stderr}",
            out.status
        );
    }
}

#[test]
fn java_calls_constructors_and_bases_reach_the_graph() {
    let mut repo = TestRepo::new();
    repo.write(
        "src/a/Base.java",
        "package a;\npublic class Base {\n    protected void log(String m) {}\n}\n",
    );
    repo.write(
        "src/a/Cart.java",
        "package a;\npublic class Cart extends Base implements Payable {\n\
         \x20   public Cart() { super(); }\n\
         \x20   int total() { log(\"t\"); return Util.helper(1); }\n}\n",
    );
    repo.write(
        "src/a/Util.java",
        "package a;\ninterface Payable {}\nclass Util {\n    static int helper(int x) { return x; }\n\
         \x20   static Cart make() { return new Cart(); }\n}\n",
    );
    repo.commit("java");
    succeeded(&repo.diffidx(&["index"]));
    let callers = json(&repo, &["graph", "Util.helper", "--callers", "--json"]);
    assert_eq!(
        qualnames(&callers["callers"]),
        ["a.Cart.total()"],
        "{callers}"
    );
    let callees = json(&repo, &["graph", "Cart.total", "--callees", "--json"]);
    assert_eq!(
        qualnames(&callees["callees"]),
        ["a.Base.log(String)", "a.Util.helper(int)"],
        "{callees}"
    );
    let made = json(&repo, &["graph", "Cart.Cart", "--callers", "--json"]);
    assert_eq!(qualnames(&made["callers"]), ["a.Util.make()"], "{made}");
    let bases = json(
        &repo,
        &["graph", "a.Cart", "--kind", "class", "--inherits", "--json"],
    );
    assert_eq!(
        qualnames(&bases["bases"]),
        ["a.Base", "a.Payable"],
        "{bases}"
    );
    assert_equal_to_fresh_build(&repo);
}

#[test]
fn go_calls_and_composite_literals_reach_the_graph() {
    let mut repo = TestRepo::new();
    repo.write(
        "store/store.go",
        "package store\n\ntype Store struct{ n int }\n\n\
         func New() *Store { return &Store{n: helper(1)} }\n\n\
         func helper(x int) int { return x }\n\n\
         func (s *Store) Len() int { return helper(s.n) }\n",
    );
    repo.commit("go");
    succeeded(&repo.diffidx(&["index"]));
    let callers = json(&repo, &["graph", "store.helper", "--callers", "--json"]);
    assert_eq!(
        qualnames(&callers["callers"]),
        ["store.New", "store.Store.Len"],
        "{callers}"
    );
    let made = json(&repo, &["graph", "store.Store", "--callers", "--json"]);
    assert_eq!(qualnames(&made["callers"]), ["store.New"], "{made}");
    assert_equal_to_fresh_build(&repo);
}

#[test]
fn typescript_calls_news_and_heritage_reach_the_graph() {
    let mut repo = TestRepo::new();
    repo.write(
        "src/cart.ts",
        "export interface Payable { pay(): void; }\n\
         export class Base { log(m: string) {} }\n\
         export class Cart extends Base implements Payable {\n\
         \x20 pay() { this.log('p'); helper(1); }\n}\n\
         export function helper(x: number) { return x; }\n\
         export const make = () => new Cart();\n",
    );
    repo.commit("ts");
    succeeded(&repo.diffidx(&["index"]));
    let callers = json(&repo, &["graph", "helper", "--callers", "--json"]);
    assert_eq!(qualnames(&callers["callers"]), ["Cart.pay"], "{callers}");
    let callees = json(&repo, &["graph", "Cart.pay", "--callees", "--json"]);
    assert_eq!(
        qualnames(&callees["callees"]),
        ["Base.log", "helper"],
        "{callees}"
    );
    let bases = json(
        &repo,
        &["graph", "Cart", "--kind", "class", "--inherits", "--json"],
    );
    let mut names = qualnames(&bases["bases"]);
    names.sort();
    assert_eq!(names, ["Base", "Payable"], "{bases}");
    let made = json(
        &repo,
        &["graph", "Cart", "--kind", "class", "--callers", "--json"],
    );
    assert_eq!(qualnames(&made["callers"]), ["make"], "{made}");
    assert_equal_to_fresh_build(&repo);
}
