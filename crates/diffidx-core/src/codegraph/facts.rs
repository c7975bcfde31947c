//! What one file version says about the code graph, before resolution: its
//! declarations, what it imports, and every name it calls, constructs or
//! derives from. Facts depend on the blob alone (not on its path or on other
//! files), so they are computed once per blob and kept with the graph; the
//! resolver turns the facts of all files into edges.

use serde::{Deserialize, Serialize};

use crate::symbol::{FileSymbols, SymbolKind};

/// The facts of one file version.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileFacts {
    #[serde(rename = "d")]
    pub defs: Vec<Def>,
    #[serde(rename = "i", default, skip_serializing_if = "Vec::is_empty")]
    pub imports: Vec<Import>,
    #[serde(rename = "r", default, skip_serializing_if = "Vec::is_empty")]
    pub refs: Vec<Reference>,
}

/// A file's facts held until the code graph is updated: the bytes of their
/// fact file (JSON), and the words of each declaration, which a fact file
/// does not keep and the search index wants.
///
/// Why not as they are: a backfill keeps the facts of every file of `HEAD`
/// it parsed from the diffing, through the store's load, to the graph's
/// update. As structs, App-vNext/Polly's 798 files took 12.4 MiB in small
/// blocks, allocated among the parse trees the diffing frees, so the pages
/// they kept could not go back; held so, they are a few blocks a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldFacts {
    json: Box<[u8]>,
    /// Every declaration's words, one after another.
    words: Box<str>,
    /// Where each declaration's words end in `words`.
    word_ends: Box<[u32]>,
}

impl HeldFacts {
    /// `facts` encoded; `None` if they cannot be (never seen: the facts are
    /// strings, numbers and lists), and the graph parses the file again.
    pub fn of(facts: &FileFacts) -> Option<HeldFacts> {
        let json = serde_json::to_vec(facts).ok()?.into_boxed_slice();
        let mut words = String::new();
        let mut word_ends = Vec::with_capacity(facts.defs.len());
        for def in &facts.defs {
            words.push_str(&def.words);
            word_ends.push(u32::try_from(words.len()).ok()?);
        }
        Some(HeldFacts {
            json,
            words: words.into_boxed_str(),
            word_ends: word_ends.into_boxed_slice(),
        })
    }

    /// The facts again, words included.
    pub fn facts(&self) -> Option<FileFacts> {
        let mut facts: FileFacts = serde_json::from_slice(&self.json).ok()?;
        if facts.defs.len() != self.word_ends.len() {
            return None;
        }
        let mut start = 0;
        for (def, &end) in facts.defs.iter_mut().zip(self.word_ends.iter()) {
            def.words = self.words.get(start..end as usize)?.to_owned();
            start = end as usize;
        }
        Some(facts)
    }
}

/// A declaration, as in [`FileSymbols`] (same order, same names).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Def {
    #[serde(rename = "q")]
    pub qualname: String,
    #[serde(rename = "n")]
    pub name: String,
    #[serde(rename = "k")]
    pub kind: SymbolKind,
    #[serde(rename = "s", default, skip_serializing_if = "String::is_empty")]
    pub sig: String,
    /// Index of the enclosing declaration in this file.
    #[serde(rename = "p", default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<u32>,
    #[serde(rename = "l")]
    pub lines: (u32, u32),
    #[serde(rename = "h")]
    pub content_hash: String,
    /// How many type parameters it declares (`Foo<T>`: 1).
    #[serde(rename = "g", default, skip_serializing_if = "is_zero")]
    pub arity: u8,
    /// An extension method of its first parameter's type (C# `this T x`).
    #[serde(rename = "x", default, skip_serializing_if = "std::ops::Not::not")]
    pub extension: bool,
    /// A method or function declared without a body (an interface's or an
    /// abstract method, a signature): a call of it runs an implementation.
    #[serde(rename = "b", default, skip_serializing_if = "std::ops::Not::not")]
    pub bodiless: bool,
    /// A type only the repository's code can make (the language table's
    /// `made_here`: a Java class neither public nor protected, with no
    /// annotation a framework reads): its overrides run only where the
    /// tree makes it or a subtype.
    #[serde(rename = "mh", default, skip_serializing_if = "std::ops::Not::not")]
    pub made_only_here: bool,
    /// Its words for text search (`lang::words`), as found by the parse
    /// that made these facts; not kept with the graph.
    #[serde(skip)]
    pub words: String,
}

fn is_zero(n: &u8) -> bool {
    *n == 0
}

impl Def {
    /// A node of the graph only, no symbol of the records: a file's module
    /// node, a function nested in a function. Only these have no content
    /// hash.
    pub fn graph_only(&self) -> bool {
        self.content_hash.is_empty()
    }

    pub fn of_symbols(symbols: &FileSymbols) -> Vec<Def> {
        symbols
            .symbols
            .iter()
            .map(|s| Def {
                qualname: s.qualname.clone(),
                name: s.name.clone(),
                kind: s.kind,
                sig: s.sig.clone(),
                parent: s.parent.map(|p| p as u32),
                lines: (s.start_line, s.end_line),
                content_hash: s.content_hash.to_hex(),
                arity: 0,
                extension: false,
                bodiless: false,
                made_only_here: false,
                words: String::new(),
            })
            .collect()
    }
}

/// An import: C# `using`, Rust `use`, `mod x;`, `extern crate`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Import {
    #[serde(rename = "k")]
    pub kind: ImportKind,
    /// The imported path, by segment, as written (`System`, `Linq`;
    /// `crate`, `store`, `Store`).
    #[serde(rename = "p")]
    pub path: Vec<String>,
    /// The local name it is known by when that differs from the last
    /// segment (`using A = X.Y;`, `use x as y;`).
    #[serde(rename = "a", default, skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    #[serde(rename = "l")]
    pub line: u32,
    /// The declaration it is written in (a Rust inline module, a C#
    /// namespace), if any: where it applies.
    #[serde(rename = "o", default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ImportKind {
    /// `using X.Y;`: the namespace's types become visible.
    Using,
    /// `global using X.Y;`: the same, in every file of the project.
    GlobalUsing,
    /// `using static X.Y;`: the type's members become visible.
    UsingStatic,
    /// `using A = X.Y;`, `use a::b;`, `use a::b as c;`: one name.
    Name,
    /// `use a::b::*;`: every item of a module.
    Glob,
    /// `mod x;`: a module in another file.
    Module,
    /// `extern crate x;`
    ExternCrate,
}

impl ImportKind {
    pub const ALL: [ImportKind; 7] = [
        ImportKind::Using,
        ImportKind::GlobalUsing,
        ImportKind::UsingStatic,
        ImportKind::Name,
        ImportKind::Glob,
        ImportKind::Module,
        ImportKind::ExternCrate,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ImportKind::Using => "using",
            ImportKind::GlobalUsing => "global_using",
            ImportKind::UsingStatic => "using_static",
            ImportKind::Name => "name",
            ImportKind::Glob => "glob",
            ImportKind::Module => "module",
            ImportKind::ExternCrate => "extern_crate",
        }
    }
}

/// A use of a name inside a declaration: a call, a constructor call, a
/// macro invocation or a base type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    #[serde(rename = "k")]
    pub kind: RefKind,
    /// The declaration it occurs in (index in this file), if any.
    #[serde(rename = "o", default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<u32>,
    /// For a Rust `impl Trait for Type`: the type, by name (the impl block
    /// is not a declaration of its own).
    #[serde(rename = "t", default, skip_serializing_if = "Option::is_none")]
    pub owner_type: Option<String>,
    #[serde(rename = "v", default, skip_serializing_if = "Receiver::is_bare")]
    pub receiver: Receiver,
    /// The qualifier's segments, for [`Receiver::Path`] and [`Receiver::PathOrValue`].
    #[serde(rename = "q", default, skip_serializing_if = "Vec::is_empty")]
    pub qualifier: Vec<String>,
    #[serde(rename = "n")]
    pub name: String,
    /// How many type arguments the name is written with (`new Foo<int>()`: 1).
    #[serde(rename = "g", default, skip_serializing_if = "is_zero")]
    pub type_args: u8,
    /// The argument count, when the call site shows it.
    #[serde(rename = "a", default, skip_serializing_if = "Option::is_none")]
    pub args: Option<u32>,
    /// The argument types visible at the call site (literals, `new T()`),
    /// empty strings where not visible.
    #[serde(rename = "y", default, skip_serializing_if = "Vec::is_empty")]
    pub arg_types: Vec<String>,
    #[serde(rename = "l")]
    pub line: u32,
    /// What each argument names, where it is a name (`f(g, x=h)`: `g`,
    /// `x=h`; empty where not): the values a callee's parameters carry.
    #[serde(rename = "an", default, skip_serializing_if = "Vec::is_empty")]
    pub arg_names: Vec<String>,
    /// Found by following a value (`a = f; a()`), not written at the call.
    #[serde(rename = "w", default, skip_serializing_if = "std::ops::Not::not")]
    pub flow: bool,
    /// Written as an operator, not a call (`a + b` runs `a.__add__(b)`):
    /// found on the operand's type or nowhere, never by name, and never
    /// counted unresolved (an operator on an outside type calls nothing of
    /// the repository).
    #[serde(rename = "op", default, skip_serializing_if = "std::ops::Not::not")]
    pub operator: bool,
    /// Calls what calling the name returns (`f()()`, `a = f(); a()`).
    #[serde(rename = "e", default, skip_serializing_if = "std::ops::Not::not")]
    pub returned: bool,
    /// For a [`Reference::returned`] call, how many times more the result
    /// is called first (`f()()()`: 1).
    #[serde(rename = "ed", default, skip_serializing_if = "is_zero")]
    pub returned_again: u8,
    /// For a [`Reference::returned`] call, what the call that returns
    /// passes (`bar(foo)()`: `foo`), where a function returns its
    /// parameter.
    #[serde(rename = "ra", default, skip_serializing_if = "Vec::is_empty")]
    pub returned_args: Vec<String>,
    /// For [`RefKind::CallsParameter`]: the parameter's position among
    /// those a call site passes (a method's `self` not counted); for
    /// [`RefKind::Returns`], the parameter returned.
    #[serde(rename = "pi", default, skip_serializing_if = "Option::is_none")]
    pub param: Option<u32>,
    /// For [`RefKind::CallsParameter`]: how many functions out from the
    /// one the call is in declares the parameter (a decorator's `f`,
    /// called in the function nested in it: 1).
    #[serde(rename = "pd", default, skip_serializing_if = "is_zero")]
    pub param_depth: u8,
    /// A function named as an argument (`.map(Self::parse)`, `Run(Work)`):
    /// linked where scope, type or path finds it, never by name alone, and
    /// never counted unresolved (the name may be a value's).
    #[serde(rename = "ps", default, skip_serializing_if = "std::ops::Not::not")]
    pub passed: bool,
    /// For [`Receiver::Returned`]: what the call whose result it is was
    /// made on (the qualifier's last segment is the callee's name, the
    /// rest what that name was written after).
    #[serde(rename = "cv", default, skip_serializing_if = "Receiver::is_bare")]
    pub callee_receiver: Receiver,
    /// For [`Receiver::Typed`]: the type is the class the value was made
    /// of (`new Card().go()`, `var c = new Card(); c.go()`), not one it is
    /// declared with: a call on it runs that class's method, no override.
    #[serde(rename = "mk", default, skip_serializing_if = "std::ops::Not::not")]
    pub made: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefKind {
    /// A method or function call.
    Call,
    /// A constructor call (`new T(...)`, `: base(...)`).
    New,
    /// A macro invocation.
    Macro,
    /// A base type: a class or interface in a C# base list, a supertrait.
    Base,
    /// `impl Trait for Type`.
    Implements,
    /// A name the declaration returns (`return g`): what a call of the
    /// declaration's result calls.
    Returns,
    /// A call of one of the declaration's parameters (`def f(g): g()`):
    /// each call site's argument there is called.
    CallsParameter,
    /// The type the declaration is declared to return (`func New() *T`):
    /// what a call on a value it returned runs.
    ReturnType,
    /// A type named as a value (`T.class`): no edge, but objects of the
    /// type may be made from it by reflection (the table's `made_here`).
    TypeValue,
}

/// What a call is made on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Receiver {
    /// Nothing: `Foo()`.
    #[default]
    Bare,
    /// The current instance or type: `this.Foo()`, `self.foo()`, `Self::foo()`.
    This,
    /// The base class: `base.Foo()`, `: base(...)`.
    Base,
    /// A path of types, namespaces or modules: `a::b::foo()`.
    Path,
    /// A dotted name that is a type or a value, which syntax cannot tell
    /// apart: C# `Helper.Do()`.
    PathOrValue,
    /// A variable whose declaration shows its type (a parameter, a local,
    /// a field): the qualifier is that type.
    Typed,
    /// A value of a type the call site does not show: `x.foo()`, `a().b()`.
    Value,
    /// What a call returned (`b := newBuilder(); b.Build()`, `make().run()`):
    /// the qualifier is that callee's path, made on
    /// [`Reference::callee_receiver`]; the type is the one its declaration
    /// is declared to return.
    Returned,
}

impl Receiver {
    fn is_bare(&self) -> bool {
        *self == Receiver::Bare
    }
}
