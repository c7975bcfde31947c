use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use super::*;
use crate::lang::{Extractor, Language};
use crate::symbol::{symbol_id, SymbolKind};

fn facts(path: &str, source: &str) -> SourceFile {
    let language = Language::from_path(path).unwrap();
    let extracted = Extractor::new()
        .unwrap()
        .extract_facts(language, source, None);
    SourceFile {
        language,
        facts: Arc::new(extracted.facts.unwrap()),
    }
}

fn tree(files: &[(&str, &str)]) -> BTreeMap<String, SourceFile> {
    files
        .iter()
        .map(|(p, s)| (p.to_string(), facts(p, s)))
        .collect()
}

/// Every edge as `from -KIND/resolution-> to` with qualnames (and sigs).
fn edges(files: &BTreeMap<String, SourceFile>) -> Vec<String> {
    let mut names: HashMap<String, String> = HashMap::new();
    for (path, f) in files {
        for d in &f.facts.defs {
            names.insert(
                symbol_id(path, d.kind, &d.qualname, &d.sig),
                crate::symbol::display_name(&d.qualname, &d.sig),
            );
        }
    }
    let index = DefIndex::new(files);
    let mut out = Vec::new();
    for path in files.keys() {
        for e in index.resolve_file(path).edges {
            out.push(format!(
                "{} -{}/{}-> {}",
                names[&e.from],
                e.kind.as_str(),
                e.resolution.as_str(),
                names[&e.to]
            ));
        }
    }
    out.sort();
    out
}

/// The id of the declaration `qualname` of file `path`.
fn def_id(files: &BTreeMap<String, SourceFile>, path: &str, qualname: &str) -> String {
    let def = files[path]
        .facts
        .defs
        .iter()
        .find(|d| d.qualname == qualname)
        .unwrap_or_else(|| panic!("no {qualname} in {path}"));
    symbol_id(path, def.kind, &def.qualname, &def.sig)
}

/// The ids of the declarations `qualname` of file `path` has an edge to.
fn callees(files: &BTreeMap<String, SourceFile>, path: &str, qualname: &str) -> BTreeSet<String> {
    let from = def_id(files, path, qualname);
    DefIndex::new(files)
        .resolve_file(path)
        .edges
        .into_iter()
        .filter(|e| e.from == from)
        .map(|e| e.to)
        .collect()
}

fn has(edges: &[String], wanted: &str) {
    assert!(
        edges.iter().any(|e| e == wanted),
        "missing {wanted:?} in:\n{}",
        edges.join("\n")
    );
}

fn lacks(edges: &[String], unwanted: &str) {
    assert!(
        !edges.iter().any(|e| e.starts_with(unwanted)),
        "unexpected {unwanted:?} in:\n{}",
        edges.join("\n")
    );
}

const PAYMENTS: &str = r#"
using System;
using Acme.Util;
namespace Acme.Pay
{
    public interface ICharger { void Charge(int cents); }
    public class BaseService
    {
        protected BaseService(string name) { }
        protected void Log(string message) { }
    }
    public class PaymentService : BaseService, ICharger
    {
        public PaymentService() : base("payments") { }
        public void Charge(int cents) { Log("charge"); Validate(cents); Helper.Round(cents); Console.WriteLine(cents); }
        public void Charge(string text) { this.Charge(1); }
        private void Validate(int cents) { }
    }
}
"#;

const UTIL: &str = r#"
namespace Acme.Util
{
    public static class Helper
    {
        public static int Round(int x) => x;
        public static int Round(double x) => (int)x;
    }
}
"#;

const CLIENT: &str = r#"
using Acme.Pay;
namespace Acme.Shop
{
    class Checkout
    {
        void Pay(ICharger charger)
        {
            var service = new PaymentService();
            service.Charge(5);
            charger.Charge(5);
        }
    }
}
"#;

#[test]
fn csharp_calls_constructors_and_bases() {
    let files = tree(&[
        ("src/Pay.cs", PAYMENTS),
        ("src/Util.cs", UTIL),
        ("src/Shop.cs", CLIENT),
    ]);
    let e = edges(&files);
    let pay = "Acme.Pay.PaymentService";
    has(
        &e,
        &format!("{pay} -INHERITS/scoped-> Acme.Pay.BaseService"),
    );
    has(&e, &format!("{pay} -IMPLEMENTS/scoped-> Acme.Pay.ICharger"));
    has(
        &e,
        &format!("{pay}.PaymentService() -CALLS/exact-> Acme.Pay.BaseService.BaseService(string)"),
    );
    has(
        &e,
        &format!("{pay}.Charge(int) -CALLS/scoped-> Acme.Pay.BaseService.Log(string)"),
    );
    has(
        &e,
        &format!("{pay}.Charge(int) -CALLS/scoped-> {pay}.Validate(int)"),
    );
    // The overload is picked by the argument's type.
    has(
        &e,
        &format!("{pay}.Charge(int) -CALLS/scoped-> Acme.Util.Helper.Round(int)"),
    );
    lacks(
        &e,
        &format!("{pay}.Charge(int) -CALLS/scoped-> Acme.Util.Helper.Round(double)"),
    );
    has(
        &e,
        &format!("{pay}.Charge(string) -CALLS/exact-> {pay}.Charge(int)"),
    );
    has(
        &e,
        &format!("Acme.Shop.Checkout.Pay(ICharger) -CALLS/scoped-> {pay}.PaymentService()"),
    );
    // Receivers typed by a local (`var service = new ...`) and a parameter.
    has(
        &e,
        &format!("Acme.Shop.Checkout.Pay(ICharger) -CALLS/scoped-> {pay}.Charge(int)"),
    );
    has(
        &e,
        "Acme.Shop.Checkout.Pay(ICharger) -CALLS/scoped-> Acme.Pay.ICharger.Charge(int)",
    );
    // Console.WriteLine is not in the repository: counted, not invented.
    lacks(
        &e,
        "Acme.Pay.PaymentService.Charge(int) -CALLS/unique_name-> ",
    );
    let index = DefIndex::new(&files);
    let charge = symbol_id(
        "src/Pay.cs",
        crate::SymbolKind::Method,
        &format!("{pay}.Charge"),
        "(int)",
    );
    assert_eq!(
        index.resolve_file("src/Pay.cs").unresolved.get(&charge),
        Some(&1)
    );
}

const STORE_RS: &str = r#"
use crate::model::Record;
pub struct Store { records: Vec<Record> }
impl Store {
    pub fn open() -> Store { Self::with(Vec::new()) }
    fn with(records: Vec<Record>) -> Store { Store { records } }
    pub fn add(&mut self, r: Record) { self.check(&r); self.records.push(r); log!("added"); }
    fn check(&self, r: &Record) { assert!(r.valid()); }
}
macro_rules! log { ($m:expr) => {} }
fn local() {}
mod tests {
    use super::*;
    fn t() { local(); }
}
"#;

const MODEL_RS: &str = r#"
pub trait Named: std::fmt::Debug { fn name(&self) -> String; }
pub struct Record;
impl Record { pub fn valid(&self) -> bool { true } }
impl Named for Record { fn name(&self) -> String { helper() } }
fn helper() -> String { String::new() }
"#;

const MAIN_RS: &str = r#"
mod model;
mod store;
use store::Store;
fn main() { let mut s = Store::open(); s.add(model::Record); crate::store::Store::open(); }
"#;

#[test]
fn rust_paths_methods_macros_and_impls() {
    let files = tree(&[
        ("src/store.rs", STORE_RS),
        ("src/model.rs", MODEL_RS),
        ("src/main.rs", MAIN_RS),
    ]);
    let e = edges(&files);
    has(&e, "Store::open -CALLS/exact-> Store::with");
    // An inline module sees its parent through its own `use super::*`.
    has(&e, "tests::t -CALLS/scoped-> local");
    has(&e, "Store::add -CALLS/exact-> Store::check");
    has(&e, "Store::add -CALLS/scoped-> log");
    // Inside `assert!(...)`: found by scanning the macro's tokens.
    has(&e, "Store::check -CALLS/unique_name-> Record::valid");
    has(&e, "Record::name as Named -CALLS/scoped-> helper");
    has(&e, "Record -IMPLEMENTS/scoped-> Named");
    has(&e, "main -CALLS/exact-> Store::open");
    // `let mut s = Store::open();`: the receiver's type shows.
    has(&e, "main -CALLS/scoped-> Store::add");
    lacks(&e, "Store::add -CALLS/unique_name-> ");
    let index = DefIndex::new(&files);
    let imports = index.resolve_file("src/main.rs").imports;
    assert!(imports.contains(&ImportEdge {
        target: ImportTarget::File("src/model.rs".into()),
        kind: ImportKind::Module,
        alias: None,
        line: 2,
    }));
    assert!(imports
        .iter()
        .any(|i| i.target == ImportTarget::Module("crate::store::Store".into())));
}

/// `Registry<string>` is the generic class, not the enclosing one of the
/// same name; `new Registry()` the other way round.
#[test]
fn generic_arity_tells_same_named_types_apart() {
    let files = tree(&[
        (
            "src/Registry.cs",
            "namespace Lib { public class Registry<TKey> { public Registry() { } } }\n",
        ),
        (
            "src/Docs.cs",
            "using Lib;\nnamespace Docs { static class Registry { static void Use() { var r = new Registry<string>(); } } \
             class Other { void Make() { new Lib.Registry<int>(); } } }\n",
        ),
    ]);
    let e = edges(&files);
    has(
        &e,
        "Docs.Registry.Use() -CALLS/scoped-> Lib.Registry.Registry()",
    );
    lacks(&e, "Docs.Registry.Use() -CALLS/scoped-> Docs.Registry");
    has(
        &e,
        "Docs.Other.Make() -CALLS/exact-> Lib.Registry.Registry()",
    );
}

/// `breaker.Trip(2)` on a `Breaker` is the extension method
/// `Trip(this Breaker b, int n)`; `list.Add(x)` on a `List` from outside the
/// repository is no call into it, though the repository has an `Add`.
#[test]
fn extension_methods_and_outside_types() {
    let files = tree(&[
        (
            "src/Breaker.cs",
            "namespace B { public class Breaker { } public static class Ext { \
             public static void Trip(this Breaker b, int n) { } } public class Bag { public void Add(int x) { } } \
             public interface IReg<TKey> { void Put<TP>(TKey key, TP p); } \
             public class Opts { } public static class Lim { \
             public static Breaker Limit(this Breaker b, int permits, int queue = 0) => b; \
             public static Breaker Limit(this Breaker b, Opts o) => b; } }\n",
        ),
        (
            "src/Use.cs",
            "using System.Collections.Generic;\nusing B;\nnamespace U { class T { void Go(Breaker breaker, List<int> list) { \
             breaker.Trip(2); list.Add(1); var t = new DateTime(1); DateTime d = t; d.Put(1); breaker.Limit(1); } } }\n",
        ),
    ]);
    let e = edges(&files);
    has(
        &e,
        "U.T.Go(Breaker,List<int>) -CALLS/scoped-> B.Ext.Trip(Breaker,int)",
    );
    lacks(
        &e,
        "U.T.Go(Breaker,List<int>) -CALLS/unique_name-> B.Bag.Add",
    );
    lacks(&e, "U.T.Go(Breaker,List<int>) -CALLS/ambiguous-> B.Bag.Add");
    // The overload the argument fits, though it has an optional parameter.
    has(
        &e,
        "U.T.Go(Breaker,List<int>) -CALLS/scoped-> B.Lim.Limit(Breaker,int,int)",
    );
    // A generic method is no extension method without `this`.
    assert!(!e.iter().any(|x| x.contains("IReg.Put")), "{e:?}");
}

/// A static call on a type from outside (`Substitute.For<T>()`,
/// `ValueTask.FromResult(x)`) is no call into the repository, though the
/// repository declares methods of that name.
#[test]
fn a_static_call_on_an_outside_type_is_no_extension_call() {
    let files = tree(&[
        (
            "src/Ttl.cs",
            "namespace C { public interface ITtl { } public static class TtlExt { \
             public static ITtl For(this ITtl t) => t; } }\n",
        ),
        (
            "src/Use.cs",
            "using C;\nnamespace U { class T { void Go() { ITtl ttl = Substitute.For<ITtl>(); ttl.For(); } \
             void Put() { Substitute.For<ITtl>(); } } }\n",
        ),
    ]);
    let e = edges(&files);
    has(&e, "U.T.Go() -CALLS/scoped-> C.TtlExt.For(ITtl)");
    assert_eq!(
        e.iter().filter(|x| x.contains("TtlExt.For")).count(),
        1,
        "{e:?}"
    );
    assert!(!e.iter().any(|x| x.starts_with("U.T.Put()")), "{e:?}");
}

/// A field declared after the method that uses it still types the
/// receiver; a static builder call does not type its result as its class.
#[test]
fn fields_declared_later_and_builders_in_csharp() {
    let files = tree(&[
        (
            "src/Out.cs",
            "namespace O { public class Silent { public void WriteLine(string s) { } } \
             public class Loud { public void WriteLine(string s) { } } \
             public class Policy { public static Builder Handle() => null; public void Retry() { } } \
             public class Builder { } public static class Ext { public static void Retry(this Builder b) { } } }\n",
        ),
        (
            "src/Use.cs",
            "using O;\nnamespace U { class T { void Go() { Output.WriteLine(\"x\"); Policy.Handle().Retry(); } \
             readonly Silent Output; } }\n",
        ),
    ]);
    let e = edges(&files);
    has(&e, "U.T.Go() -CALLS/scoped-> O.Silent.WriteLine(string)");
    lacks(&e, "U.T.Go() -CALLS/ambiguous-> O.Loud.WriteLine(string)");
    // Not `Policy.Retry` (a member of the class the builder came from).
    lacks(&e, "U.T.Go() -CALLS/scoped-> O.Policy.Retry()");
    lacks(&e, "U.T.Go() -CALLS/exact-> O.Policy.Retry()");
}

#[test]
fn module_paths_follow_the_crate_layout() {
    assert_eq!(rust_module("src/lib.rs"), ["crate"]);
    assert_eq!(
        rust_module("crates/my-lib/src/a/b.rs"),
        ["my_lib", "a", "b"]
    );
    assert_eq!(rust_module("crates/my-lib/src/a/mod.rs"), ["my_lib", "a"]);
    assert_eq!(rust_module("tests/cli.rs"), ["tests"]);
    assert_eq!(rust_module("tests/common/mod.rs"), ["tests", "common"]);
    assert_eq!(rust_module("crates/x/benches/index.rs"), ["x_benches"]);
    assert_eq!(rust_module("build.rs"), ["build"]);
    assert_eq!(rust_module("src/tests/mod.rs"), ["crate", "tests"]);
}

/// Updating only the affected files gives what a full build gives.
#[test]
fn affected_files_cover_every_changed_resolution() {
    let before = tree(&[
        ("src/Pay.cs", PAYMENTS),
        ("src/Util.cs", UTIL),
        ("src/Shop.cs", CLIENT),
    ]);
    // A second `Round(int)` makes the call in Pay.cs ambiguous although
    // Pay.cs did not change.
    let util2 = UTIL.replace(
        "public static int Round(double x)",
        "public static int Round(int x, int y) => x; public static int Round(double x)",
    );
    let other =
        "namespace Acme.Other { static class Helper { public static int Round(int x) => x; } }";
    let after = tree(&[
        ("src/Pay.cs", PAYMENTS),
        ("src/Util.cs", &util2),
        ("src/Shop.cs", CLIENT),
        ("src/Other.cs", other),
    ]);
    let changed: BTreeSet<String> = ["src/Util.cs", "src/Other.cs"].map(String::from).into();
    let redo = affected(&before, &after, &changed);
    assert!(redo.contains("src/Pay.cs"), "{redo:?}");
    assert!(!redo.contains("src/Shop.cs"), "{redo:?}");
    let full = DefIndex::new(&after);
    let old = DefIndex::new(&before);
    for path in after.keys() {
        let expected = full.resolve_file(path);
        let kept = if redo.contains(path) {
            full.resolve_file(path)
        } else {
            old.resolve_file(path)
        };
        assert_eq!(kept, expected, "{path}");
    }
}

/// A class that comes to implement an interface changes what calls on
/// the interface's values run, in files that did not change.
#[test]
fn a_new_base_rederives_the_calls_its_overrides_may_answer() {
    let till = "package shop;\nclass Till { void take(Pay p) { p.charge(5); } }\n";
    let pay = "package shop;\ninterface Pay { void charge(int cents); }\n";
    let cash = "package shop;\npublic class Cash { public void charge(int cents) {} }\n";
    let before = tree(&[
        ("src/shop/Till.java", till),
        ("src/shop/Pay.java", pay),
        ("src/shop/Cash.java", cash),
    ]);
    let after = tree(&[
        ("src/shop/Till.java", till),
        ("src/shop/Pay.java", pay),
        (
            "src/shop/Cash.java",
            &cash.replace("class Cash", "class Cash implements Pay"),
        ),
    ]);
    let changed: BTreeSet<String> = ["src/shop/Cash.java".to_owned()].into();
    let redo = affected(&before, &after, &changed);
    assert!(redo.contains("src/shop/Till.java"), "{redo:?}");
    has(
        &edges(&after),
        "shop.Till.take(Pay) -CALLS/scoped-> shop.Cash.charge(int)",
    );
    lacks(
        &edges(&before),
        "shop.Till.take(Pay) -CALLS/scoped-> shop.Cash.charge(int)",
    );
}

#[test]
fn directories_chain_up_to_the_root() {
    let dirs = directories(["a/b/c.rs", "a/d.rs", "e.rs"]);
    let expected: BTreeMap<String, String> = [("a", ""), ("a/b", "a")]
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .into();
    assert_eq!(dirs, expected);
    assert_eq!(parent_dir("a/b/c.rs"), "a/b");
    assert_eq!(parent_dir("e.rs"), "");
}

#[test]
fn held_facts_decode_to_the_facts_they_hold() {
    for (path, source) in [("src/store.rs", STORE_RS), ("src/model.rs", MODEL_RS)] {
        let parsed = facts(path, source);
        assert!(!parsed.facts.defs.is_empty() && !parsed.facts.refs.is_empty());
        let held = HeldFacts::of(&parsed.facts).expect("encodable");
        assert_eq!(held.facts().as_ref(), Some(&*parsed.facts), "{path}");
    }
}

const PY_PKG_INIT: &str = "from .core import Engine, run as start\n";
const PY_CORE: &str = r#"
class Base:
    def __init__(self):
        pass

    def step(self):
        pass

class Engine(Base):
    def __init__(self):
        super().__init__()
        self.helper = Helper()
        self.callback = self.done

    def go(self):
        self.helper.assist()
        self.callback()

    def done(self):
        pass

class Helper:
    def assist(self):
        pass

def run(task):
    task()

def finish():
    pass

def make():
    return finish
"#;
const PY_MAIN: &str = r#"
import pkg.core as core
from pkg import Engine, start
from pkg.core import make

def dec(f):
    return f

def work():
    pass

def other():
    pass

@dec
def main():
    e = Engine()
    e.go()
    e.step()
    start(work)
    core.run(task=other)
    make()()
    table = {"w": work, "o": other}
    table["w"]()
    a, b = work, other
    b()
    def local():
        pass
    local()

if __name__ == "__main__":
    main()
"#;

fn python_tree() -> BTreeMap<String, SourceFile> {
    tree(&[
        ("src/pkg/__init__.py", PY_PKG_INIT),
        ("src/pkg/core.py", PY_CORE),
        ("src/app.py", PY_MAIN),
    ])
}

#[test]
fn python_modules_imports_and_constructors() {
    let e = edges(&python_tree());
    // Module-level code is a caller: the decorator and the `__main__` block.
    has(&e, "<module> -CALLS/scoped-> dec");
    has(&e, "<module> -CALLS/scoped-> main");
    // `Engine()` runs `Engine.__init__`, through the package's re-export.
    has(&e, "main -CALLS/scoped-> Engine.__init__");
    has(&e, "main -CALLS/scoped-> Engine.go");
    // Inherited, from the nearest base that declares it.
    has(&e, "main -CALLS/scoped-> Base.step");
    has(&e, "Engine.__init__ -CALLS/exact-> Base.__init__");
    // `self.x = Helper()` types `self.x`; `self.callback = self.done`.
    has(&e, "Engine.__init__ -CALLS/scoped-> Helper");
    has(&e, "Engine.go -CALLS/scoped-> Helper.assist");
    has(&e, "Engine.go -CALLS/scoped-> Engine.done");
    // An aliased module and an aliased re-exported function.
    has(&e, "main -CALLS/exact-> run");
    has(&e, "main -CALLS/scoped-> make");
}

#[test]
fn python_functions_carried_by_values() {
    let e = edges(&python_tree());
    // Passed to a function that calls its parameter: that function calls
    // them, positionally and by keyword.
    has(&e, "run -CALLS/scoped-> work");
    has(&e, "run -CALLS/scoped-> other");
    // Held in a dict, unpacked from a tuple.
    has(&e, "main -CALLS/scoped-> other");
    has(&e, "main -CALLS/scoped-> work");
    // `make()()` calls what `make` returns.
    has(&e, "main -CALLS/scoped-> finish");
    // A function nested in `main` is no symbol: no edge for `local()`.
    lacks(&e, "main -CALLS/scoped-> local");
    // The calls of `main` are not the module's.
    lacks(&e, "<module> -CALLS/scoped-> Engine");
}

#[test]
fn python_module_paths_start_at_the_top_package() {
    let packages: HashSet<&str> = ["src/pkg", "src/pkg/sub"].into_iter().collect();
    let module = |p: &str| resolve::python_module(p, &packages);
    assert_eq!(
        module("src/pkg/sub/a.py"),
        (
            vec!["pkg".to_owned(), "sub".to_owned(), "a".to_owned()],
            vec!["pkg".to_owned(), "sub".to_owned()]
        )
    );
    assert_eq!(
        module("src/pkg/__init__.py"),
        (vec!["pkg".to_owned()], vec!["pkg".to_owned()])
    );
    assert_eq!(module("tools/run.py"), (vec!["run".to_owned()], vec![]));
}

#[test]
fn a_changed_return_or_parameter_call_rederives_its_callers() {
    let old = python_tree();
    let mut new = old.clone();
    new.insert(
        "src/pkg/core.py".to_owned(),
        facts(
            "src/pkg/core.py",
            &PY_CORE.replace("    task()\n", "    pass\n"),
        ),
    );
    let changed: BTreeSet<String> = ["src/pkg/core.py".to_owned()].into_iter().collect();
    let out = affected(&old, &new, &changed);
    assert!(out.contains("src/app.py"), "{out:?}");
}

#[test]
fn a_python_parameter_hides_the_function_of_its_name() {
    let e = edges(&tree(&[(
        "app.py",
        "def fixture():\n    pass\n\ndef test(fixture):\n    map(fixture, items)\n    fixture()\n\n\
         def direct():\n    map(fixture, items)\n\ndef kept():\n    items.extend(fixture)\n",
    )]));
    // Passed to an outside callee that calls it: the module's function
    // where no parameter hides it.
    has(&e, "direct -CALLS/scoped-> fixture");
    lacks(&e, "test -CALLS");
    // An outside callee that may only keep it calls nothing.
    lacks(&e, "kept -CALLS");
}

#[test]
fn a_python_import_rebinds_a_name_that_held_a_function() {
    let e = edges(&tree(&[
        ("lib.py", "def chosen():\n    pass\n\np = chosen\n"),
        (
            "app.py",
            "def local():\n    pass\n\np = local\nfrom lib import p\n\np()\n",
        ),
    ]));
    lacks(&e, "<module> -CALLS/scoped-> local");
}

#[test]
fn calls_that_match_nothing_are_counted_by_name() {
    let files = tree(&[
        (
            "app/pay.py",
            "import os\n\
             class Charge:\n    def run(self): pass\n\
             class Refund:\n    def run(self): pass\n\
             def settle(item, rows):\n    item.run()\n    item.close()\n    os.getenv('X')\n    missing()\n    map(settle, rows)\n",
        ),
        (
            "app/main.py",
            "from app.pay import settle\nsettle(None, [])\nundefined_name()\n",
        ),
    ]);
    let index = DefIndex::new(&files);
    let pay = index.resolve_file("app/pay.py");
    let calls = |name: &str| pay.unresolved_calls.get(name).copied().unwrap_or_default();
    // `item.run()` links both `run`s (ambiguous); `item.close()` nothing.
    assert!(!pay.unresolved_calls.contains_key("run"));
    assert_eq!(
        calls("close"),
        UnresolvedCalls {
            qualified: 1,
            bare: 0
        }
    );
    // Outside the repository, or nowhere.
    assert_eq!(calls("getenv").qualified, 1);
    assert_eq!(calls("missing").bare, 1);
    // `map` matched nothing, though it links `settle`; `settle` resolved.
    assert_eq!(calls("map").bare, 1);
    assert!(!pay.unresolved_calls.contains_key("settle"));
    let main = index.resolve_file("app/main.py");
    assert_eq!(
        main.unresolved_calls.keys().collect::<Vec<_>>(),
        ["undefined_name"]
    );
}

#[test]
fn java_receivers_are_typed_by_their_declarations() {
    let files = tree(&[
        (
            "src/a/Cart.java",
            "package a;\nclass Cart { void add() {} void clear() {} }\n\
             class Basket { void add() {} void clear() {} }\n",
        ),
        (
            "src/a/Shop.java",
            "package a;\nclass Shop {\n  private Cart cart;\n\
             void buy(Cart c) { c.add(); }\n\
             void local() { Cart mine = new Cart(); mine.add(); var v = new Basket(); v.clear(); }\n\
             void field() { cart.clear(); this.cart.add(); }\n\
             static void run() { Util.helper(); }\n}\n\
             class Util { static void helper() {} }\n",
        ),
    ]);
    let e = edges(&files);
    for wanted in [
        "a.Shop.buy(Cart) -CALLS/scoped-> a.Cart.add()",
        "a.Shop.local() -CALLS/scoped-> a.Cart.add()",
        "a.Shop.local() -CALLS/scoped-> a.Basket.clear()",
        "a.Shop.field() -CALLS/scoped-> a.Cart.clear()",
        "a.Shop.field() -CALLS/scoped-> a.Cart.add()",
        "a.Shop.run() -CALLS/scoped-> a.Util.helper()",
    ] {
        has(&e, wanted);
    }
    lacks(&e, "a.Shop.buy(Cart) -CALLS/ambiguous-> a.Basket.add()");
}

#[test]
fn java_calls_on_a_declared_type_reach_the_overrides_in_its_subtypes() {
    let files = tree(&[
        (
            "src/shop/Pay.java",
            "package shop;\ninterface Pay { void charge(int cents); }\n\
             class Card implements Pay { public void charge(int cents) {} }\n\
             class Visa extends Card { public void charge(int cents) {} }\n\
             class Cash implements Pay { public void charge(int cents) {} void charge() {} }\n",
        ),
        (
            "src/shop/Till.java",
            "package shop;\nclass Till {\n\
             void take(Pay p) { p.charge(5); }\n\
             void swipe(Card c) { c.charge(5); }\n\
             void exact(Visa v) { v.charge(5); }\n\
             void made() { Card c = new Card(); c.charge(1); new Card().charge(2); }\n\
             void inherited(Plain p) { p.charge(3); }\n}\n\
             class Plain extends Card {}\n\
             class Fancy extends Plain { public void charge(int cents) {} }\n",
        ),
        (
            "src/shop/Shop.java",
            "package shop;\nclass Shop { void open() { new Visa(); new Cash(); new Fancy(); } }\n",
        ),
    ]);
    let e = edges(&files);
    for wanted in [
        "shop.Till.take(Pay) -CALLS/scoped-> shop.Pay.charge(int)",
        "shop.Till.take(Pay) -CALLS/scoped-> shop.Card.charge(int)",
        "shop.Till.take(Pay) -CALLS/scoped-> shop.Visa.charge(int)",
        "shop.Till.take(Pay) -CALLS/scoped-> shop.Cash.charge(int)",
        "shop.Till.swipe(Card) -CALLS/scoped-> shop.Card.charge(int)",
        "shop.Till.swipe(Card) -CALLS/scoped-> shop.Visa.charge(int)",
        "shop.Till.exact(Visa) -CALLS/scoped-> shop.Visa.charge(int)",
    ] {
        has(&e, wanted);
    }
    // An overload of another arity, and a type beside the receiver's.
    lacks(&e, "shop.Till.take(Pay) -CALLS/scoped-> shop.Cash.charge()");
    lacks(
        &e,
        "shop.Till.swipe(Card) -CALLS/scoped-> shop.Cash.charge(int)",
    );
    lacks(
        &e,
        "shop.Till.exact(Visa) -CALLS/scoped-> shop.Card.charge(int)",
    );
    // A value made here runs its own class's method, no subtype's.
    has(&e, "shop.Till.made() -CALLS/scoped-> shop.Card.charge(int)");
    lacks(&e, "shop.Till.made() -CALLS/scoped-> shop.Visa.charge(int)");
    // An inherited method: the overrides below the receiver's type, not
    // its siblings'.
    has(
        &e,
        "shop.Till.inherited(Plain) -CALLS/scoped-> shop.Card.charge(int)",
    );
    has(
        &e,
        "shop.Till.inherited(Plain) -CALLS/scoped-> shop.Fancy.charge(int)",
    );
    lacks(
        &e,
        "shop.Till.inherited(Plain) -CALLS/scoped-> shop.Visa.charge(int)",
    );
}

/// JCG's TR7: an override in a type only the repository's code can make
/// runs where the tree makes that type or a subtype, or hands it on as a
/// value; a public or annotated type may be made by code not shown.
#[test]
fn java_overrides_run_only_in_types_the_tree_makes() {
    let demo = "package tr;\nclass Demo {\n\
                static void main(Target t) { t.target(); }\n\
                static void mock() { make(Mocked.class); }\n\
                static void sub() { new Sub(); new CallTarget(); }\n\
                static void make(Class<?> c) {}\n}\n";
    let targets = "package tr;\n\
                   interface Target { void target();\n\
                     class Inner implements Target { public void target() {} } }\n\
                   class CallTarget implements Target { @Override public void target() {} }\n\
                   class NeverMade implements Target { public void target() {} }\n\
                   class Mocked implements Target { public void target() {} }\n\
                   @Component class Wired implements Target { public void target() {} }\n\
                   abstract class Base implements Target { public void target() {} }\n\
                   class Sub extends Base {}\n";
    let public = "package tr;\npublic class Open implements Target { public void target() {} }\n";
    let before = tree(&[
        ("src/tr/Demo.java", demo),
        ("src/tr/Targets.java", targets),
        ("src/tr/Open.java", public),
    ]);
    let e = edges(&before);
    for made in [
        "CallTarget",
        "Mocked",
        "Wired",
        "Base",
        "Open",
        "Target.Inner",
    ] {
        has(
            &e,
            &format!("tr.Demo.main(Target) -CALLS/scoped-> tr.{made}.target()"),
        );
    }
    lacks(
        &e,
        "tr.Demo.main(Target) -CALLS/scoped-> tr.NeverMade.target()",
    );
    // Made in another file: the caller's file is derived again.
    let mut after = before.clone();
    after.insert(
        "src/tr/Maker.java".to_owned(),
        facts(
            "src/tr/Maker.java",
            "package tr;\nclass Maker { Target build() { return new NeverMade(); } }\n",
        ),
    );
    let changed: BTreeSet<String> = ["src/tr/Maker.java".to_owned()].into();
    let redo = affected(&before, &after, &changed);
    assert!(redo.contains("src/tr/Demo.java"), "{redo:?}");
    assert_update_equals_full_build(&before, &after, &redo);
    has(
        &edges(&after),
        "tr.Demo.main(Target) -CALLS/scoped-> tr.NeverMade.target()",
    );
}

#[test]
fn typescript_receivers_are_typed_by_their_annotations() {
    let files = tree(&[
        (
            "src/shop.ts",
            "export interface Pay { charge(cents: number): void; }\n\
             export class Cash implements Pay { charge(cents: number) {} refund() {} }\n\
             export class Card { charge(cents: number) {} refund() {} }\n",
        ),
        (
            "src/till.ts",
            "import { Pay, Cash, Card } from './shop';\n\
             const card: Card = new Card();\n\
             export class Till {\n  cash: Cash;\n\
             \x20 take(p: Pay) { p.charge(5); }\n\
             \x20 drawer() { this.cash.refund(); }\n\
             \x20 loose() { cash.refund(); }\n\
             \x20 back(c?: Cash) { const card: Card = pick(); card.refund(); c.refund(); }\n\
             \x20 again(card) { card.refund(); }\n}\n",
        ),
    ]);
    let e = edges(&files);
    for wanted in [
        "Till.take -CALLS/scoped-> Pay.charge",
        "Till.back -CALLS/scoped-> Card.refund",
        "Till.back -CALLS/scoped-> Cash.refund",
        "Till.drawer -CALLS/scoped-> Cash.refund",
    ] {
        has(&e, wanted);
    }
    // A bare name is never the field: only `this.cash` is.
    lacks(&e, "Till.loose -CALLS/scoped-> Cash.refund");
    // By name, a `refund` or `charge` of another class would match too.
    lacks(&e, "Till.take -CALLS/ambiguous-> Card.charge");
    lacks(&e, "Till.back -CALLS/ambiguous-> Cash.refund");
    // An untyped parameter hides the module's `card`: its type is unknown.
    lacks(&e, "Till.again -CALLS/scoped-> Card.refund");
}

#[test]
fn java_imports_name_types_packages_and_static_members() {
    let files = tree(&[
        (
            "src/x/Tax.java",
            "package x;
public class Tax { public static int rate() { return 1; } }
",
        ),
        (
            "src/y/Tax.java",
            "package y;
public class Tax { public static int rate() { return 2; } }
",
        ),
        (
            "src/y/Fee.java",
            "package y;
public class Fee { public static int flat() { return 3; } }
",
        ),
        (
            "src/z/Bill.java",
            "package z;
import x.Tax;
import y.*;
import static y.Fee.flat;
             class Bill { int total() { return Tax.rate() + Fee.flat() + flat(); } }
",
        ),
    ]);
    let e = edges(&files);
    has(&e, "z.Bill.total() -CALLS/exact-> x.Tax.rate()");
    lacks(&e, "z.Bill.total() -CALLS/ambiguous-> y.Tax.rate()");
    // Through the package import, and the static import: both scoped.
    has(&e, "z.Bill.total() -CALLS/scoped-> y.Fee.flat()");
}

#[test]
fn go_packages_are_directories() {
    let files = tree(&[
        ("cmd.go", GO_CMD),
        ("doc/util.go", "package doc\n\nfunc check() {}\n"),
        (
            "marks.go",
            "package cobra\n\nfunc (c *Command) Require(name string) error {\n\treturn Require(c.Flags(), name)\n}\n\n\
             func Require(flags *FlagSet, name string) error { return nil }\n",
        ),
        // Methods only: the package is still `cobra`.
        (
            "methods.go",
            "package cobra\n\nfunc (c *Command) Check() { check() }\n",
        ),
        ("other/util.go", "package cobra\n\nfunc check() {}\n"),
    ]);
    let e = edges(&files);
    has(&e, "cobra.Command.Run -CALLS/scoped-> cobra.check");
    has(&e, "cobra.New -CALLS/scoped-> cobra.Command");
    // Receivers, parameters and locals are typed by their declarations.
    has(&e, "cobra.Command.Run -CALLS/scoped-> cobra.Command.Name");
    has(&e, "cobra.use -CALLS/scoped-> cobra.Command.Name");
    has(&e, "cobra.use -CALLS/scoped-> cobra.Flag.Name");
    lacks(&e, "cobra.use -CALLS/ambiguous-> cobra.Flag.Name");
    has(&e, "cobra.Command.Require -CALLS/scoped-> cobra.Require");
    has(&e, "cobra.Command.Check -CALLS/scoped-> cobra.check");
    // A method calling the package's function of its name.
    has(&e, "cobra.Command.Mark -CALLS/scoped-> cobra.Mark");
    // `doc/` and `other/` (a package of the same name) are other packages.
    let checks: Vec<&String> = e.iter().filter(|x| x.ends_with("cobra.check")).collect();
    assert_eq!(
        checks,
        [
            "cobra.Command.Check -CALLS/scoped-> cobra.check",
            "cobra.Command.Run -CALLS/scoped-> cobra.check"
        ]
    );
}

const GO_CMD: &str = r#"package cobra

type Command struct{}

func (c *Command) Run() { check(); c.Name() }

func (c *Command) Name() {}

type Flag struct{}

func (f Flag) Name() {}

func check() {}

func New() *Command { return &Command{} }

func (c *Command) Mark(name string) { Mark(c, name) }

func Mark(c *Command, name string) {}

func use(f Flag) {
	x := &Command{}
	x.Name()
	f.Name()
}
"#;

#[test]
fn javascript_new_runs_the_constructor_and_super_the_bases() {
    let files = tree(&[(
        "src/shop.js",
        "class Foo {\n  constructor(x) { this.x = x; }\n}\n\
         class Bar extends Foo {\n  constructor(x) { super(x); }\n}\n\
         class Baz extends Foo {}\n\
         function make() { new Bar(1); new Baz(2); }\n",
    )]);
    let e = edges(&files);
    has(&e, "make -CALLS/scoped-> Bar.constructor");
    // No constructor of its own: the base's runs.
    has(&e, "make -CALLS/scoped-> Foo.constructor");
    has(&e, "Bar.constructor -CALLS/exact-> Foo.constructor");
}

#[test]
fn a_python_import_of_an_outside_module_is_not_a_module_of_the_same_name() {
    let e = edges(&tree(&[
        ("pkg/__init__.py", ""),
        ("pkg/json/__init__.py", "def loads(s):\n    pass\n"),
        (
            "pkg/app.py",
            "import json as _json\nimport json\n\ndef f():\n    _json.loads('')\n    json.loads('')\n",
        ),
    ]));
    lacks(&e, "f -CALLS/scoped-> loads");
    lacks(&e, "f -CALLS/exact-> loads");
}

#[test]
fn python_nested_functions_are_graph_nodes() {
    let files = tree(&[(
        "app.py",
        "def dec(f):\n    def inner():\n        return f()\n    return inner\n\n\
         @dec\ndef work():\n    pass\n\n\
         def outer():\n    def helper():\n        return work()\n    if True:\n        def twice():\n            pass\n    else:\n        def twice():\n            pass\n    return helper()\n",
    )]);
    let e = edges(&files);
    has(&e, "outer -CALLS/scoped-> outer.helper");
    has(&e, "outer.helper -CALLS/scoped-> work");
    // The decorator is passed `work`; the function nested in it calls it.
    has(&e, "dec.inner -CALLS/scoped-> work");
    lacks(&e, "outer -CALLS/scoped-> work");
    let facts = &files["app.py"].facts;
    let nested: Vec<&str> = facts
        .defs
        .iter()
        .filter(|d| d.graph_only())
        .map(|d| d.qualname.as_str())
        .collect();
    assert_eq!(
        nested,
        [
            "dec.inner",
            "outer.helper",
            "outer.twice",
            "outer.twice#2",
            MODULE_QUALNAME
        ]
    );
}

#[test]
fn python_lambdas_are_graph_nodes_named_by_position() {
    let files = tree(&[(
        "app.py",
        "def work():\n    pass\n\n\
         def apply(f, x):\n    return f(x)\n\n\
         def make():\n    return (lambda x: work())\n\n\
         square = lambda n: n * n\n\
         def main():\n    square(2)\n    apply(lambda y: y(), work)\n    make()(1)\n",
    )]);
    let e = edges(&files);
    // Held by a variable, passed to a function, returned by one.
    has(&e, "main -CALLS/scoped-> <lambda:10:10>");
    has(&e, "apply -CALLS/scoped-> main.<lambda:13:11>");
    has(&e, "main -CALLS/scoped-> make.<lambda:8:13>");
    // What a lambda calls, it calls, not the function it stands in.
    has(&e, "make.<lambda:8:13> -CALLS/scoped-> work");
    lacks(&e, "make -CALLS/scoped-> work");
    let lambdas: Vec<&str> = files["app.py"]
        .facts
        .defs
        .iter()
        .filter(|d| d.qualname.contains("<lambda"))
        .map(|d| d.qualname.as_str())
        .collect();
    assert_eq!(
        lambdas,
        [
            "make.<lambda:8:13>",
            "<lambda:10:10>",
            "main.<lambda:13:11>"
        ]
    );
}

#[test]
fn python_values_unpacked_iterated_updated_and_nested() {
    let files = tree(&[(
        "app.py",
        "def f1():\n    pass\n\ndef f2():\n    pass\n\ndef f3():\n    pass\n\n\
         def gen():\n    yield f3\n\n\
         def factory():\n    def dec(g):\n        return g\n    return dec\n\n\
         def rest():\n    a, *b = f1, f2, f3\n    b[1]()\n\n\
         def loop():\n    for h in gen():\n        h()\n\n\
         def updated():\n    d = {\"k\": f1}\n    d.update({\"k\": f2})\n    d[\"k\"]()\n\n\
         def nested():\n    ls = [[f1], f2]\n    ls[0][0]()\n\n\
         @factory()\ndef decorated():\n    pass\n\n\
         class Items:\n    def m(self):\n        pass\n\n\
         def items():\n    for item in Items():\n        item.m()\n\n\
         def keyed():\n    return sorted([1], key=lambda x: f1())\n\n\
         def rebound():\n    d = {\"k\": f1}\n    d.update({\"k\": f2})\n    d = {\"k\": f3}\n    d[\"k\"]()\n\n\
         def looped(hs):\n    for h in sorted(hs):\n        h(f2)\n",
    )]);
    let e = edges(&files);
    // `*b` holds the rest, by index.
    has(&e, "rest -CALLS/scoped-> f3");
    lacks(&e, "rest -CALLS/scoped-> f2");
    // A loop's variable holds what the generator yields.
    has(&e, "loop -CALLS/scoped-> f3");
    // `update` replaces the key's value.
    has(&e, "updated -CALLS/scoped-> f2");
    lacks(&e, "updated -CALLS/scoped-> f1");
    has(&e, "nested -CALLS/scoped-> f1");
    lacks(&e, "nested -CALLS/scoped-> f2");
    // The decorator a factory returns is called by the module.
    has(&e, "<module> -CALLS/scoped-> factory.dec");
    // A loop's variable is an item of what it iterates, of no type shown.
    lacks(&e, "items -CALLS/scoped-> Items.m");
    // `key=lambda …` is passed to `sorted`, which calls it.
    assert!(
        e.iter()
            .any(|x| x.starts_with("keyed -CALLS/scoped-> keyed.<lambda:")),
        "{e:#?}"
    );
    // A name bound again drops what was put in the value it held.
    has(&e, "rebound -CALLS/scoped-> f3");
    lacks(&e, "rebound -CALLS/scoped-> f2");
    // What `sorted` returns is no call of what it was passed.
    lacks(&e, "looped -CALLS/scoped-> f2");
}

#[test]
fn recursion_is_an_edge_where_scope_says_so_not_by_name_alone() {
    let files = tree(&[(
        "r.py",
        "def factorial(n):\n    return n * factorial(n - 1)\n\n\
         class Store:\n    def get(self, k):\n        return self._d.get(k)\n\n\
         \x20   def walk(self, n):\n        return self.walk(n - 1)\n",
    )]);
    let edges = edges(&files);
    has(&edges, "factorial -CALLS/scoped-> factorial");
    has(&edges, "Store.walk -CALLS/exact-> Store.walk");
    // `self._d.get` is some other object's `get`: by name alone it would
    // be the only `get` of the repository, the method itself.
    lacks(&edges, "Store.get -CALLS/");
}

#[test]
fn python_operators_call_their_operand_types_methods() {
    let files = tree(&[(
        "ops.py",
        "class Vec:\n    def __init__(self, xs):\n        self.xs = xs\n\n\
         \x20   def __add__(self, other):\n        return other\n\n\
         \x20   def __getitem__(self, i):\n        return i\n\n\
         \x20   def __setitem__(self, i, v):\n        pass\n\n\
         \x20   def __contains__(self, x):\n        return True\n\n\
         \x20   def __neg__(self):\n        return self\n\n\
         class Plain:\n    pass\n\n\
         class Other:\n    def __eq__(self, o):\n        return True\n\n\
         def use():\n    a = Vec([1])\n    b = Vec([2])\n    a + b\n    a[0]\n    3 in a\n    -a\n\n\
         def store():\n    a = Vec([1])\n    a[0] = 1\n\n\
         class Closing:\n    def __exit__(self, *e):\n        pass\n\n\
         class Res(Closing):\n    def __enter__(self):\n        return self\n\n\
         def managed():\n    with Res() as r:\n        pass\n\n\
         def plain(q):\n    p = Plain()\n    p == p\n    n = 1\n    n + 2\n    q + q\n    q[0]\n",
    )]);
    let e = edges(&files);
    has(&e, "use -CALLS/scoped-> Vec.__add__");
    has(&e, "use -CALLS/scoped-> Vec.__getitem__");
    has(&e, "use -CALLS/scoped-> Vec.__contains__");
    has(&e, "use -CALLS/scoped-> Vec.__neg__");
    // `with` enters and exits, through the bases.
    has(&e, "managed -CALLS/scoped-> Res.__enter__");
    has(&e, "managed -CALLS/scoped-> Closing.__exit__");
    // `a[0] = 1` stores.
    has(&e, "store -CALLS/scoped-> Vec.__setitem__");
    lacks(&e, "store -CALLS/scoped-> Vec.__getitem__");
    // A type without the method runs an outside one (`object.__eq__`),
    // not another class's by name; literals and values of no type shown
    // call nothing of the repository.
    lacks(&e, "plain -CALLS/scoped-> Other");
    lacks(&e, "plain -CALLS/unique_name-> Other");
    lacks(&e, "plain -CALLS/unique_name-> Vec");
    let index = DefIndex::new(&files);
    let resolved = index.resolve_file("ops.py");
    let plain = def_id(&files, "ops.py", "plain");
    // Only `Plain()` is a call; it resolves to the class.
    assert_eq!(resolved.unresolved.get(&plain), None, "{resolved:#?}");
}

#[test]
fn python_values_returned_from_parameters_and_passed_as_results() {
    let files = tree(&[(
        "v.py",
        "def target():\n    pass\n\n\
         def other():\n    pass\n\n\
         def ident(other):\n    return other\n\n\
         def maker():\n    return target\n\n\
         def call_it(a):\n    a()\n\n\
         def returned_param():\n    ident(target)()\n\n\
         def result_passed():\n    call_it(maker())\n\n\
         def keyword_variable():\n    b = other\n    call_it(a=b)\n\n\
         def outer():\n    def middle():\n        return target\n    return middle\n\n\
         def chained():\n    outer()()()\n",
    )]);
    let e = edges(&files);
    // `ident` returns what it is passed, not the function its parameter
    // is named like.
    has(&e, "returned_param -CALLS/scoped-> target");
    lacks(&e, "returned_param -CALLS/scoped-> other");
    // A call's result passed on; a keyword's variable passes its value.
    has(&e, "call_it -CALLS/scoped-> target");
    has(&e, "call_it -CALLS/scoped-> other");
    // What the returned function returns.
    has(&e, "chained -CALLS/scoped-> outer.middle");
    has(&e, "chained -CALLS/scoped-> target");
}

#[test]
fn python_stacked_decorators_and_names_imported_twice() {
    let files = tree(&[
        ("a.py", "def one():\n    pass\n"),
        ("b.py", "def two():\n    pass\n"),
        ("c.py", "def three():\n    pass\n"),
        (
            "main.py",
            "from a import one as f\nfrom b import two as f\n\n\
             def d1(g):\n    def inner():\n        return g()\n    return inner\n\n\
             def d2(g):\n    def inner():\n        return g()\n    return inner\n\n\
             @d1\n@d2\ndef h():\n    pass\n\n\
             def run():\n    f()\n\n\
             def load():\n    m = importlib.import_module(\"c\")\n    m.three()\n",
        ),
    ]);
    let e = edges(&files);
    // The later import binds the name.
    has(&e, "run -CALLS/scoped-> two");
    lacks(&e, "run -CALLS/scoped-> one");
    // A module imported by a call with its name.
    has(&e, "load -CALLS/exact-> three");
    // The nearest decorator is passed the function; the outer one is
    // passed what that returned.
    has(&e, "d2.inner -CALLS/scoped-> h");
    has(&e, "d1.inner -CALLS/scoped-> d2.inner");
    lacks(&e, "d1.inner -CALLS/scoped-> h");
}

#[test]
fn rust_operators_call_their_trait_methods_on_the_operand_type() {
    let files = tree(&[(
        "src/lib.rs",
        "use std::ops::{Add, Index, IndexMut};\n\
         pub struct V(i32);\n\
         impl Add for V { type Output = V; fn add(self, o: V) -> V { V(self.0 + o.0) } }\n\
         impl Index<usize> for V { type Output = i32; fn index(&self, _i: usize) -> &i32 { &self.0 } }\n\
         impl IndexMut<usize> for V { fn index_mut(&mut self, _i: usize) -> &mut i32 { &mut self.0 } }\n\
         impl PartialEq for V { fn eq(&self, o: &V) -> bool { self.0 == o.0 } }\n\
         fn sum(a: V, b: V) -> V { a + b }\n\
         fn first(v: &V) -> i32 { v[0] }\n\
         fn set(v: &mut V) { v[0] = 1; }\n\
         fn same(a: &V, b: &V) -> bool { a != b }\n\
         fn ints(a: i32, b: i32) -> i32 { a + b }\n",
    )]);
    let e = edges(&files);
    has(&e, "sum -CALLS/scoped-> V::add as Add");
    has(&e, "first -CALLS/scoped-> V::index as Index");
    has(&e, "set -CALLS/scoped-> V::index_mut as IndexMut");
    lacks(&e, "set -CALLS/scoped-> V::index as");
    has(&e, "same -CALLS/scoped-> V::eq as PartialEq");
    lacks(&e, "ints -CALLS");
    lacks(&e, "V::add as Add -CALLS");
}

#[test]
fn csharp_operators_call_the_left_operand_types_operator() {
    let files = tree(&[(
        "src/Money.cs",
        "namespace Shop {\n\
         public struct Money {\n\
           public int Cents;\n\
           public static Money operator +(Money a, Money b) => new Money { Cents = a.Cents + b.Cents };\n\
           public static bool operator ==(Money a, Money b) => a.Cents == b.Cents;\n\
           public static bool operator !=(Money a, Money b) => !(a == b);\n\
         }\n\
         public class Till {\n\
           public Money Sum(Money a, Money b) { return a + b; }\n\
           public bool Same(Money a, Money b) { return a == b; }\n\
           public int Count(int a, int b) { return a + b; }\n\
         }\n\
         }\n",
    )]);
    let e = edges(&files);
    has(
        &e,
        "Shop.Till.Sum(Money,Money) -CALLS/scoped-> Shop.Money.operator +(Money,Money)",
    );
    has(
        &e,
        "Shop.Till.Same(Money,Money) -CALLS/scoped-> Shop.Money.operator ==(Money,Money)",
    );
    // `!=` in terms of `==`.
    has(
        &e,
        "Shop.Money.operator !=(Money,Money) -CALLS/scoped-> Shop.Money.operator ==(Money,Money)",
    );
    lacks(&e, "Shop.Till.Count(int,int) -CALLS");
}

#[test]
fn python_imports_in_a_function_bind_there_only() {
    let files = tree(&[
        ("geo.py", "class Point:\n    pass\n"),
        ("vec.py", "class Point:\n    pass\n"),
        (
            "t.py",
            "from geo import Point\n\n\
             def a():\n    from vec import Point\n    Point()\n\n\
             def b():\n    Point()\n\n\
             def c():\n    from vec import Point\n\n\
             def d():\n    Point()\n",
        ),
    ]);
    let e = edges(&files);
    let point = |from: &str, file: &str| {
        let index = DefIndex::new(&files);
        let resolved = index.resolve_file("t.py");
        let target = symbol_id(file, SymbolKind::Class, "Point", "");
        let caller = def_id(&files, "t.py", from);
        resolved
            .edges
            .iter()
            .any(|x| x.from == caller && x.to == target)
    };
    assert!(point("a", "vec.py"), "{e:#?}");
    assert!(!point("a", "geo.py"), "{e:#?}");
    // `c`'s import is `c`'s: `b` and `d` see the module's.
    assert!(point("b", "geo.py"), "{e:#?}");
    assert!(point("d", "geo.py"), "{e:#?}");
    assert!(!point("d", "vec.py"), "{e:#?}");
}

#[test]
fn python_calling_an_instance_runs_its_classs_call() {
    let files = tree(&[(
        "c.py",
        "class Base:\n    def __call__(self):\n        pass\n\n\
         class Op(Base):\n    def __init__(self, n):\n        self.n = n\n\n\
         class Plain:\n    pass\n\n\
         def run():\n    Op(1)()\n\n\
         def held():\n    op = Op(2)\n    op()\n\n\
         def plain():\n    Plain()()\n",
    )]);
    let e = edges(&files);
    has(&e, "run -CALLS/scoped-> Base.__call__");
    has(&e, "held -CALLS/scoped-> Base.__call__");
    lacks(&e, "plain -CALLS/scoped-> Base");
}

/// ES modules and CommonJS: imports name files, under their own names or
/// others, and a module re-exports what it names (`index.js` barrels).
#[test]
fn javascript_imports_name_files() {
    let files = tree(&[
        ("src/a.js", "export function foo() {}\nexport default function bar() {}\nfunction baz() {}\nexport { baz as qux };\n"),
        ("src/b.js", "export function foo() {}\nexport class Box { open() {} }\n"),
        ("src/index.js", "export * from './b';\nexport { bar as renamed } from './a.js';\n"),
        ("src/util/c.ts", "import myBar, { foo as f, qux } from '../a';\nimport * as ns from '../b.js';\nimport { Box, renamed } from '..';\nexport function run() { f(); myBar(); qux(); ns.foo(); renamed(); new Box(); }\n"),
        ("src/d.js", "const a = require('./a');\nconst { foo } = require('./b');\nconst qux = require('./a').qux;\nfunction go() { a.foo(); foo(); qux(); }\n"),
        ("lib/e.js", "import { foo } from 'some-package';\nfunction use() { foo(); }\n"),
        // An alias two modules end with names neither.
        ("x/util.ts", "export function foo() {}\n"),
        ("y/util.ts", "export function foo() {}\n"),
        ("lib/h.ts", "import { foo } from '~/util';\nexport function h() { foo(); }\n"),
        // A value of the module hides another file's class of its name.
        ("lib/f.ts", "export const Box = make();\nexport function build() { return new Box(); }\n"),
        // A path alias and a workspace package with a path: the module
        // that ends with it, a directory by its `index`.
        ("app/page.tsx", "import { foo } from '@/src/a';\nimport { Box } from 'pkg/src';\nexport function Page() { foo(); new Box(); }\n"),
    ]);
    let e = edges(&files);
    for wanted in [
        "run -CALLS/scoped-> foo",
        "run -CALLS/scoped-> bar",
        "run -CALLS/scoped-> baz",
        "run -CALLS/scoped-> Box",
        "go -CALLS/scoped-> foo",
    ] {
        has(&e, wanted);
    }
    let id = |path: &str, qualname: &str| def_id(&files, path, qualname);
    let targets = |path: &str, from: &str| callees(&files, path, from);
    let run = targets("src/util/c.ts", "run");
    // `f` is a's `foo`, `ns.foo` b's; the barrel's `renamed` is a's `bar`.
    assert!(run.contains(&id("src/a.js", "foo")), "{e:#?}");
    assert!(run.contains(&id("src/b.js", "foo")), "{e:#?}");
    assert!(run.contains(&id("src/a.js", "bar")), "{e:#?}");
    assert!(
        run.contains(&id("src/b.js", "Box")) || run.contains(&id("src/b.js", "Box.constructor")),
        "{e:#?}"
    );
    let page = targets("app/page.tsx", "Page");
    assert!(page.contains(&id("src/a.js", "foo")), "{e:#?}");
    assert!(!page.contains(&id("src/b.js", "foo")), "{e:#?}");
    assert!(
        page.contains(&id("src/b.js", "Box")) || page.contains(&id("src/b.js", "Box.constructor")),
        "{e:#?}"
    );
    // A package name that is no file here (a workspace package, or one from
    // outside): by name, as a global would be.
    has(&e, "use -CALLS/ambiguous-> foo");
    assert!(targets("lib/f.ts", "build").is_empty(), "{e:#?}");
    has(&e, "h -CALLS/ambiguous-> foo");
    // `qux` is a's `baz`, exported under another name.
    let go = targets("src/d.js", "go");
    assert_eq!(
        go,
        BTreeSet::from([
            id("src/a.js", "foo"),
            id("src/b.js", "foo"),
            id("src/a.js", "baz")
        ]),
        "{e:#?}"
    );
}

/// JavaScript values carry functions as Python's do: variables, arrays,
/// returned functions, parameters and array callbacks; a nested function is
/// a node, never a member of a receiver.
#[test]
fn javascript_values_carry_functions() {
    let files = tree(&[(
        "app.js",
        "function foo() {}\nfunction bar() {}\nfunction make() { return bar; }\nfunction apply(f) { f(1); }\nfunction outer() { function inner() {} inner(); }\nfunction main() {\n  const g = foo;\n  g();\n  const fs = [foo, bar];\n  fs[1]();\n  make()();\n  apply(foo);\n  [1, 2].map(bar);\n  other.inner();\n}\n",
    )]);
    let e = edges(&files);
    for wanted in [
        "main -CALLS/scoped-> foo",
        "main -CALLS/scoped-> bar",
        "main -CALLS/scoped-> make",
        "apply -CALLS/scoped-> foo",
        "outer -CALLS/scoped-> outer.inner",
    ] {
        has(&e, wanted);
    }
    // `other.inner()` is some object's method, not `outer`'s function.
    let inner = def_id(&files, "app.js", "outer.inner");
    assert!(!callees(&files, "app.js", "main").contains(&inner));
}

/// The edges of every file, some kept from `before` (those `affected`
/// leaves alone) and the rest derived at `after`: what a full build of
/// `after` gives.
fn assert_update_equals_full_build(
    before: &BTreeMap<String, SourceFile>,
    after: &BTreeMap<String, SourceFile>,
    redo: &BTreeSet<String>,
) {
    let full = DefIndex::new(after);
    let old = DefIndex::new(before);
    for path in after.keys() {
        let kept = if redo.contains(path) {
            full.resolve_file(path)
        } else {
            old.resolve_file(path)
        };
        assert_eq!(kept, full.resolve_file(path), "{path}");
    }
}

/// A lambda that calls a parameter of the function it is in: its edge to
/// what a caller passes lives in the caller's file, and follows the
/// lambda when an edit above it moves it.
#[test]
fn a_moved_lambda_that_calls_a_parameter_rederives_the_passing_file() {
    let lib = |pad: &str| {
        format!("{pad}def apply(value):\n    run = lambda x: value(x)\n    return run(1)\n")
    };
    let before = tree(&[
        ("lib.py", &lib("")),
        (
            "app.py",
            "from lib import apply\n\ndef main():\n    apply(lambda y: y)\n",
        ),
    ]);
    let mut after = before.clone();
    after.insert("lib.py".to_owned(), facts("lib.py", &lib("\n\n")));
    let changed: BTreeSet<String> = ["lib.py".to_owned()].into();
    let redo = affected(&before, &after, &changed);
    assert!(redo.contains("app.py"), "{redo:?}");
    assert_update_equals_full_build(&before, &after, &redo);
}

/// A function value passed to a call is looked up by name
/// (`ensure(obj.go)()` calls what `ensure` returns: `go`): when the
/// declarations of that name change, the passing file is derived again.
#[test]
fn a_changed_declaration_rederives_the_files_that_pass_it() {
    let before = tree(&[
        ("wrap.py", "def ensure(f):\n    return f\n"),
        (
            "view.py",
            "from wrap import ensure\n\ndef run(obj):\n    return ensure(obj.go)()\n",
        ),
        (
            "jobs/impl.py",
            "class Job:\n    def go(self):\n        pass\n",
        ),
    ]);
    let mut after = before.clone();
    let moved = before["jobs/impl.py"].clone();
    after.remove("jobs/impl.py");
    after.insert("tasks/impl.py".to_owned(), moved);
    let changed: BTreeSet<String> = ["jobs/impl.py", "tasks/impl.py"].map(String::from).into();
    let redo = affected(&before, &after, &changed);
    assert!(redo.contains("view.py"), "{redo:?}");
    assert_update_equals_full_build(&before, &after, &redo);
}

#[test]
fn a_java_local_made_by_new_has_the_class_it_was_made_of() {
    let files = tree(&[(
        "src/j/Main.java",
        "package j;\n\
         class Base { void run() {} void stop() {} }\n\
         interface Job { void run(); default void stop() {} }\n\
         class Worker extends Base implements Job { }\n\
         class Impl implements Job { public void run() {} }\n\
         class Main {\n\
           Job other() { return null; }\n\
           void a() { Job j = new Worker(); j.stop(); }\n\
           void b() { Job j = new Impl(); j.run(); }\n\
           void c() { Job j = new Impl(); j = other(); j.run(); }\n\
           void d() { Base k = new Worker(); k.run(); }\n\
           void e() { Base k = new Worker(); new Over().take(k); }\n\
         }\n\
         class Over { void take(Base b) {} void take(String s) {} }\n",
    )]);
    let e = edges(&files);
    for wanted in [
        // The class's chain before the interface's default method.
        "j.Main.a() -CALLS/scoped-> j.Base.stop()",
        "j.Main.b() -CALLS/scoped-> j.Impl.run()",
        // Assigned again: only the declared type is known.
        "j.Main.c() -CALLS/scoped-> j.Job.run()",
        "j.Main.d() -CALLS/scoped-> j.Base.run()",
        // An overload is chosen by the type declared.
        "j.Main.e() -CALLS/scoped-> j.Over.take(Base)",
    ] {
        has(&e, wanted);
    }
    lacks(&e, "j.Main.a() -CALLS/scoped-> j.Job.stop()");
    lacks(&e, "j.Main.b() -CALLS/scoped-> j.Job.run()");

    let files = tree(&[(
        "src/Main.cs",
        "namespace N {\n\
           interface IJob { void Run(); }\n\
           class Impl : IJob { public void Run() {} }\n\
           class Main {\n\
             void B() { IJob j = new Impl(); j.Run(); }\n\
             void C() { IJob j = new Impl(); j = null; j.Run(); }\n\
           }\n\
         }\n",
    )]);
    let e = edges(&files);
    has(&e, "N.Main.B() -CALLS/scoped-> N.Impl.Run()");
    has(&e, "N.Main.C() -CALLS/scoped-> N.IJob.Run()");
    lacks(&e, "N.Main.B() -CALLS/scoped-> N.IJob.Run()");
}

#[test]
fn java_method_references_call_what_they_name() {
    let files = tree(&[(
        "src/m/Main.java",
        "package m;\n\
         class Base { String version() { return \"1\"; } }\n\
         class Main extends Base {\n\
           Main() {}\n\
           private String name() { return \"\"; }\n\
           static int sum(int a, int b) { return a + b; }\n\
           void own() { java.util.function.Supplier<String> s = this::name; s.get(); }\n\
           void up() { Runnable r = super::version; }\n\
           static void types() { java.util.function.BinaryOperator<Integer> f = Main::sum; }\n\
           static void made() { java.util.function.Supplier<Main> s = Main::new; }\n\
           static void held() { Main m = new Main(); Object v = m::version; }\n\
           static void print(java.util.List<String> xs) { xs.forEach(System.out::println); }\n\
         }\n\
         class Printer { void println(Object o) {} }\n",
    )]);
    let e = edges(&files);
    for wanted in [
        "m.Main.own() -CALLS/exact-> m.Main.name()",
        "m.Main.up() -CALLS/exact-> m.Base.version()",
        "m.Main.types() -CALLS/scoped-> m.Main.sum(int,int)",
        "m.Main.made() -CALLS/scoped-> m.Main.Main()",
        "m.Main.held() -CALLS/scoped-> m.Base.version()",
    ] {
        has(&e, wanted);
    }
    // A method of an outside object is no method of the repository named so.
    lacks(&e, "m.Main.print(List<String>) -CALLS/");
}

#[test]
fn go_imports_name_the_packages_of_the_module() {
    let files = tree(&[
        (
            "main.go",
            "package main\n\n\
             import (\n\
               \"fmt\"\n\
               \"strings\"\n\
               \"example.com/tool/doc\"\n\
               gen \"example.com/tool/internal/gen\"\n\
             )\n\n\
             func main() { doc.Write(); gen.Write(); fmt.Println(strings.Split(\"a\", \",\")) }\n",
        ),
        (
            "doc/doc.go",
            "package doc\n\nimport \"example.com/tool/internal/gen\"\n\n\
             func Write() { gen.Write() }\n",
        ),
        ("internal/gen/gen.go", "package gen\n\nfunc Write() {}\n"),
        // A package of the repository named as the standard library's.
        ("strings/strings.go", "package strings\n\nfunc Split() {}\n"),
    ]);
    let e = edges(&files);
    for wanted in [
        "main.main -CALLS/exact-> doc.Write",
        "main.main -CALLS/exact-> gen.Write",
    ] {
        has(&e, wanted);
    }
    assert_eq!(
        e.iter().filter(|l| l.ends_with("-> gen.Write")).count(),
        2,
        "{e:#?}"
    );
    // The standard library's `strings`, not the repository's.
    lacks(&e, "main.main -CALLS/exact-> strings.Split");
    lacks(&e, "main.main -CALLS/scoped-> strings.Split");
    lacks(&e, "main.main -CALLS/unique_name-> strings.Split");
}

#[test]
fn a_go_struct_has_the_methods_of_the_types_it_embeds() {
    let files = tree(&[(
        "main.go",
        "package main\n\n\
         type Base struct{}\n\n\
         func (b *Base) Run() {}\n\n\
         type Outer struct {\n\t*Base\n\tname string\n}\n\n\
         type Other struct{}\n\n\
         func (o *Other) Run() {}\n\n\
         func use(o *Outer) { o.Run() }\n\n\
         func later(o *Outer, name string) { defer run(o.Run, o.name) }\n\n\
         func run(f func(), s string) { f() }\n",
    )]);
    let e = edges(&files);
    has(&e, "main.Outer -INHERITS/scoped-> main.Base");
    has(&e, "main.use -CALLS/scoped-> main.Base.Run");
    // A method value handed on is called by the code that hands it on.
    has(&e, "main.later -CALLS/scoped-> main.Base.Run");
    lacks(&e, "main.use -CALLS/scoped-> main.Other.Run");
    lacks(&e, "main.use -CALLS/ambiguous-> main.Other.Run");
}

#[test]
fn functions_passed_by_name_are_called_by_the_code_that_passes_them() {
    let files = tree(&[
        (
            "src/lib.rs",
            "pub struct Parser;\n\
             impl Parser {\n\
                 fn parse(s: &str) -> u32 { 0 }\n\
                 pub fn all(v: Vec<&str>) -> Vec<u32> { v.into_iter().map(Self::parse).collect() }\n\
                 pub fn order(v: &mut Vec<u32>) { v.sort_by(std::cmp::Ord::cmp); }\n\
                 pub fn order_by(v: &mut Vec<u32>, f: F) { v.sort_by(f); }\n\
             }\n",
        ),
        (
            "src/Work.cs",
            "namespace N {\n\
               class Work {\n\
                 void Run() { System.Threading.Tasks.Task.Run(Step); Log(Name); }\n\
                 void Names() { Log(nameof(Step)); }\n\
                 void Step() {}\n\
                 string Name { get; }\n\
                 void Log(object o) {}\n\
               }\n\
               class Other { void Name() {} }\n\
             }\n",
        ),
    ]);
    let e = edges(&files);
    has(&e, "Parser::all -CALLS/exact-> Parser::parse");
    has(&e, "N.Work.Run() -CALLS/scoped-> N.Work.Step()");
    // `nameof` names a method and runs nothing.
    lacks(&e, "N.Work.Names() -CALLS/scoped-> N.Work.Step()");
    // A property handed on is no call, and no other type's method of its name.
    lacks(&e, "N.Work.Run() -CALLS/unique_name-> N.Other.Name()");
    lacks(&e, "N.Work.Run() -CALLS/scoped-> N.Other.Name()");
    // A name handed on that leads outside is not counted unresolved: the
    // two sorts count their `sort_by` alone.
    let files_rs: BTreeMap<String, SourceFile> = files
        .into_iter()
        .filter(|(p, _)| p.ends_with(".rs"))
        .collect();
    let unresolved = DefIndex::new(&files_rs)
        .resolve_file("src/lib.rs")
        .unresolved;
    let count = |q: &str| unresolved.get(&def_id(&files_rs, "src/lib.rs", q)).copied();
    assert_eq!(count("Parser::order"), count("Parser::order_by"));
    assert_eq!(count("Parser::order"), Some(1));
}

#[test]
fn go_modules_below_the_root_and_packages_whose_files_declare_nothing() {
    let files = tree(&[
        (
            "svc/cmd/main.go",
            "package main\n\nimport (\n\t\"net/http\"\n\t\"example.com/svc/gen\"\n)\n\n\
             func main() { gen.Write(); http.Handle() }\n",
        ),
        ("svc/gen/doc.go", "// Package gen writes.\npackage gen\n"),
        (
            "svc/gen/gen.go",
            "package gen\n\nfunc Write() {}\n\ntype Gen struct{}\n\nfunc (g *Gen) Close() {}\n",
        ),
        (
            "svc/shadow/shadow.go",
            "package shadow\n\nimport \"example.com/svc/gen\"\n\n\
             func Each(all []*gen.Gen) { for _, gen := range all { gen.Close() } }\n\n\
             func Local() { gen := 1; _ = gen; gen.Write() }\n\n\
             func Param(gen *gen.Gen) { gen.Write() }\n\n\
             func Package() { gen.Write() }\n",
        ),
        (
            "svc/other/other.go",
            "package other\n\nimport \"example.com/svc/gen\"\n\nfunc Use() { gen.Write() }\n",
        ),
        // Named as the standard library's `net/http`.
        ("http/http.go", "package http\n\nfunc Handle() {}\n"),
    ]);
    let e = edges(&files);
    has(&e, "main.main -CALLS/exact-> gen.Write");
    has(&e, "other.Use -CALLS/exact-> gen.Write");
    // A local of the import's name hides the package.
    for hidden in ["shadow.Each", "shadow.Local", "shadow.Param"] {
        lacks(&e, &format!("{hidden} -CALLS/exact-> gen.Write"));
    }
    has(&e, "shadow.Package -CALLS/exact-> gen.Write");
    lacks(&e, "main.main -CALLS/exact-> http.Handle");
    lacks(&e, "main.main -CALLS/scoped-> http.Handle");
}

#[test]
fn go_updates_equal_a_full_build() {
    let before = tree(&[
        (
            "go/a/a.go",
            "package a\n\nimport \"example.com/m/b\"\n\nfunc A() { b.B() }\n",
        ),
        ("go/b/b.go", "package b\n\nfunc B() {}\n"),
    ]);
    let after = tree(&[
        (
            "go/a/a.go",
            "package a\n\nimport \"example.com/m/b\"\n\nfunc A() { b.B() }\n",
        ),
        ("go/b/b.go", "package b\n\nfunc B() {}\n"),
        (
            "go/c/c.go",
            "package c\n\nimport (\n\tx \"example.com/m/b\"\n\t\"example.com/m/a\"\n)\n\n\
             func C() { x.B(); a.A() }\n",
        ),
    ]);
    let changed: BTreeSet<String> = ["go/c/c.go".to_owned()].into();
    let redo = affected(&before, &after, &changed);
    assert_update_equals_full_build(&before, &after, &redo);
    // Before any import names a directory of the tree, no module is known
    // and calls on imports match by name; the first such import makes
    // every Go file's edges be derived again.
    let lone = tree(&[
        (
            "go/a/a.go",
            "package a\n\nimport \"example.com/m/b\"\n\nfunc A() { b.B() }\n",
        ),
        ("go/d/b.go", "package b\n\nfunc B() {}\n"),
    ]);
    let mut moved = lone.clone();
    moved.remove("go/d/b.go");
    moved.insert(
        "go/b/b.go".to_owned(),
        facts("go/b/b.go", "package b\n\nfunc B() {}\n"),
    );
    let changed: BTreeSet<String> = ["go/d/b.go".to_owned(), "go/b/b.go".to_owned()].into();
    let redo = affected(&lone, &moved, &changed);
    assert!(redo.contains("go/a/a.go"), "{redo:?}");
    assert_update_equals_full_build(&lone, &moved, &redo);
}

#[test]
fn a_value_a_call_returned_has_the_type_its_callee_declares() {
    let files = tree(&[
        (
            "build/build.go",
            "package build\n\n\
             type Builder struct{}\n\n\
             func (b *Builder) Build() {}\n\n\
             type Site struct{}\n\n\
             func (s *Site) Build() {}\n\n\
             func NewBuilder() (*Builder, error) { return &Builder{}, nil }\n\n\
             func newSite() *Site { return &Site{} }\n\n\
             func count() int { return 0 }\n\n\
             func local() { s := newSite(); s.Build(); newSite().Build() }\n",
        ),
        (
            "main.go",
            "package main\n\n\
             import \"example.com/tool/build\"\n\n\
             func main() { b, err := build.NewBuilder(); b.Build(); _ = err }\n\n\
             func second() { _, b := two(); b.Build() }\n\n\
             func two() (int, *build.Site) { return 0, nil }\n\n\
             type Local struct{}\n\n\
             func (l *Local) Build() {}\n\n\
             func NewBuilder() *Local { return nil }\n\n\
             func third() { b, _ := build.NewBuilder(); apply(b.Build) }\n\n\
             func apply(f func()) { f() }\n",
        ),
        (
            "src/Jobs.java",
            "package jobs;\n\
             class Factory { static Job make() { return new Job(); } static Object any() { return null; } }\n\
             class Job { void run() {} }\n\
             class Task { void run() {} }\n\
             class Use {\n\
               void go() { var j = Factory.make(); j.run(); Factory.make().run(); }\n\
               void outside() { var o = Factory.any(); o.run(); }\n\
             }\n",
        ),
        (
            "src/Shop.cs",
            "namespace Shop {\n\
               class Cart { public void Pay() {} }\n\
               class Wallet { public void Pay() {} }\n\
               static class Carts { public static Cart Open() => new Cart(); }\n\
               class Use { void Go() { var c = Carts.Open(); c.Pay(); } }\n\
             }\n",
        ),
        (
            "src/lib.rs",
            "pub struct Store;\n\
             impl Store { pub fn add(&self) {} pub fn fresh(&self) -> Self { Store } }\n\
             pub struct Other;\n\
             impl Other { pub fn add(&self) {} pub fn fresh(&self) -> Self { Other } }\n\
             pub fn open() -> Store { Store }\n\
             pub fn boxed() -> Box<Other> { Box::new(Other) }\n\
             pub fn work() { let s = open(); s.add(); }\n\
             pub fn work_boxed() { let b = boxed(); b.add(); }\n\
             pub fn work_again(s: &Store) { let t = s.fresh(); t.add(); }\n",
        ),
    ]);
    let e = edges(&files);
    for wanted in [
        // The type is read where the callee is declared.
        "main.main -CALLS/scoped-> build.Builder.Build",
        // Handed on: the package's `NewBuilder`, not this one's.
        "main.third -CALLS/scoped-> build.Builder.Build",
        "build.local -CALLS/scoped-> build.Site.Build",
        "jobs.Use.go() -CALLS/scoped-> jobs.Job.run()",
        "Shop.Use.Go() -CALLS/scoped-> Shop.Cart.Pay()",
        "work -CALLS/scoped-> Store::add",
        // `-> Self`: the type the callee's impl is of.
        "work_again -CALLS/scoped-> Store::add",
    ] {
        has(&e, wanted);
    }
    for unwanted in [
        "main.main -CALLS/ambiguous-> build.Site.Build",
        "main.main -CALLS/scoped-> main.Local.Build",
        "main.third -CALLS/scoped-> main.Local.Build",
        "build.local -CALLS/ambiguous-> build.Builder.Build",
        "jobs.Use.go() -CALLS/ambiguous-> jobs.Task.run()",
        "Shop.Use.Go() -CALLS/ambiguous-> Shop.Wallet.Pay()",
        "work -CALLS/ambiguous-> Other::add",
        "work_again -CALLS/ambiguous-> Other::add",
    ] {
        lacks(&e, unwanted);
    }
    // A type from outside, or a result not the first, says nothing: the
    // call is matched by name as before.
    has(&e, "jobs.Use.outside() -CALLS/ambiguous-> jobs.Task.run()");
    has(&e, "work_boxed -CALLS/ambiguous-> Other::add");
    has(&e, "main.second -CALLS/ambiguous-> build.Site.Build");
}

#[test]
fn updates_follow_what_a_declared_return_type_names() {
    let source = |site: &str| {
        tree(&[
            (
                "build/build.go",
                "package build\n\nfunc NewSite() *Site { return nil }\n",
            ),
            ("build/site.go", site),
            (
                "main.go",
                "package main\n\nimport \"example.com/tool/build\"\n\n\
                 func main() { s := build.NewSite(); s.Build() }\n",
            ),
            (
                "other/page.go",
                "package other\n\ntype Page struct{}\n\nfunc (p *Page) Build() {}\n",
            ),
        ])
    };
    let before = source("package build\n\ntype Site struct{}\n\nfunc (s *Site) Build() {}\n");
    // `Site` goes: what `NewSite` returns is no type of the repository, and
    // `s.Build()` in `main.go`, which did not change, is matched by name.
    let after = source("package build\n\ntype Sites struct{}\n\nfunc (s *Sites) Make() {}\n");
    let changed: BTreeSet<String> = ["build/site.go".to_owned()].into();
    let redo = affected(&before, &after, &changed);
    assert!(redo.contains("main.go"), "{redo:?}");
    assert_update_equals_full_build(&before, &after, &redo);
    has(
        &edges(&before),
        "main.main -CALLS/scoped-> build.Site.Build",
    );
    has(
        &edges(&after),
        "main.main -CALLS/unique_name-> other.Page.Build",
    );
}

/// A method or function without a body is marked, in every language that
/// can declare one: what a call of it runs is an implementation.
#[test]
fn declarations_without_a_body_are_marked() {
    let cases: &[(&str, &str, &[&str], &[&str])] = &[
        (
            "Shape.java",
            "interface Shape { double area(); default String name() { return \"s\"; } }\n\
             abstract class Base implements Shape { abstract void draw(); public double area() { return 0; } }",
            &["Shape.area", "Base.draw"],
            &["Shape.name", "Base.area"],
        ),
        (
            "Shape.cs",
            "interface IShape { double Area(); }\n\
             abstract class Base : IShape { public abstract void Draw(); public double Area() => 0; }",
            &["IShape.Area", "Base.Draw"],
            &["Base.Area"],
        ),
        (
            "shape.ts",
            "interface Shape { area(): number; }\n\
             abstract class Base { abstract draw(): void; area() { return 0; } }\n\
             function pick(a: string): string;\nfunction pick(a: any) { return a; }\n\
             const twice = (x: number) => x * 2;",
            &["Shape.area", "Base.draw"],
            &["Base.area", "twice"],
        ),
        (
            "shape.rs",
            "trait Shape { fn area(&self) -> f64; fn name(&self) -> &str { \"s\" } }\nfn free() {}",
            &["Shape::area"],
            &["Shape::name", "free"],
        ),
        (
            "shape.py",
            "class Shape:\n    def area(self):\n        raise NotImplementedError\n",
            &[],
            &["Shape.area"],
        ),
    ];
    for (path, source, without, with) in cases {
        let file = facts(path, source);
        let bodiless = |q: &str| {
            let found: Vec<bool> = file
                .facts
                .defs
                .iter()
                .filter(|d| d.qualname.ends_with(q))
                .map(|d| d.bodiless)
                .collect();
            assert!(!found.is_empty(), "{path}: no {q} in {:?}", file.facts.defs);
            found
        };
        for q in *without {
            assert!(bodiless(q).iter().all(|b| *b), "{path}: {q} has no body");
        }
        for q in *with {
            assert!(bodiless(q).iter().all(|b| !*b), "{path}: {q} has a body");
        }
    }
    // A TypeScript overload's signature has none; the implementation has one.
    let file = facts(
        "p.ts",
        "function pick(a: string): string;\nfunction pick(a: any) { return a; }",
    );
    let mut marks: Vec<bool> = file
        .facts
        .defs
        .iter()
        .filter(|d| d.name == "pick")
        .map(|d| d.bodiless)
        .collect();
    marks.sort();
    assert_eq!(marks, vec![false, true], "{:?}", file.facts.defs);
}

/// A Java type named through its outer type (`new Queue.Decorator(x)`,
/// `Queue.Decorator d`) is that nested type.
#[test]
fn java_types_named_through_their_outer_type() {
    let files = tree(&[(
        "src/q/Queue.java",
        "package q;\npublic class Queue {\n\
         static class Decorator { Decorator(int x) {} void wrap() {} }\n\
         void add() { Queue.Decorator d = new Queue.Decorator(1); d.wrap(); }\n\
         void take(Queue.Decorator d) { d.wrap(); }\n}\n",
    )]);
    let e = edges(&files);
    has(
        &e,
        "q.Queue.add() -CALLS/scoped-> q.Queue.Decorator.Decorator(int)",
    );
    has(&e, "q.Queue.add() -CALLS/scoped-> q.Queue.Decorator.wrap()");
    has(
        &e,
        "q.Queue.take(Queue.Decorator) -CALLS/scoped-> q.Queue.Decorator.wrap()",
    );
}

/// C#'s target-typed `new(...)` makes the type its declaration declares.
#[test]
fn csharp_target_typed_new_calls_the_declared_types_constructor() {
    let files = tree(&[(
        "Shop.cs",
        "namespace Shop {\n\
         public class Cart { public Cart() {} public Cart(int n) {} }\n\
         public class Till {\n\
         private readonly Cart _cart = new(3);\n\
         public Cart Spare { get; } = new();\n\
         void Open() { Cart c = new(); Take(new()); }\n\
         Cart Make() => new(1);\n\
         Cart Wrap() => Pass(new());\n\
         void Take(Cart c) {}\n}\n}\n",
    )]);
    let e = edges(&files);
    has(&e, "Shop.Till._cart -CALLS/scoped-> Shop.Cart.Cart(int)");
    has(&e, "Shop.Till.Spare -CALLS/scoped-> Shop.Cart.Cart()");
    has(&e, "Shop.Till.Open() -CALLS/scoped-> Shop.Cart.Cart()");
    has(&e, "Shop.Till.Make() -CALLS/scoped-> Shop.Cart.Cart(int)");
    // An argument's `new()` has the parameter's type: not read.
    lacks(&e, "Shop.Till.Wrap() -CALLS/scoped-> Shop.Cart.Cart()");
}

/// A TypeScript constructor parameter marked `private`, `public`,
/// `protected` or `readonly` is a member: `this.repo` has its type, in
/// every method and in the constructor; an unmarked one is no member.
#[test]
fn typescript_constructor_parameter_members_type_this_fields() {
    let files = tree(&[
        (
            "src/repo.ts",
            "export class Repo { save() {} }\nexport class Log { write() {} }\n",
        ),
        (
            "src/shop.ts",
            "import { Repo, Log } from './repo';\n\
             export class Shop {\n\
             \x20 early() { this.repo.save(); }\n\
             \x20 constructor(private readonly repo: Repo, log: Log) { this.repo.save(); }\n\
             \x20 late() { this.repo.save(); this.log.write(); }\n}\n",
        ),
    ]);
    let e = edges(&files);
    for wanted in [
        "Shop.early -CALLS/scoped-> Repo.save",
        "Shop.constructor -CALLS/scoped-> Repo.save",
        "Shop.late -CALLS/scoped-> Repo.save",
    ] {
        has(&e, wanted);
    }
    lacks(&e, "Shop.late -CALLS/scoped-> Log.write");
}
