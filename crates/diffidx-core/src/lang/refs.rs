//! References: what the code inside declarations calls, constructs, imports
//! and derives from, driven by each language's [`GraphSpec`] table (node kind
//! → [`RefRole`]). Like the symbol walker, this is the only control flow;
//! a language brings a table.
//!
//! Only syntax is read here. Which declaration a name means is the
//! resolver's business (`codegraph::resolve`), which sees every file.

use std::ops::Range;

use tree_sitter::{Node, Tree};

use crate::codegraph::facts::{Import, ImportKind, Receiver, RefKind, Reference};

/// How one language's syntax shows references (part of its `LanguageSpec`).
pub struct GraphSpec {
    /// Node kinds that are references or imports.
    pub refs: &'static [(&'static str, RefRole)],
    /// Dotted or scoped names: `(kind, qualifier field, name field or child
    /// kind, what the qualifier is)`. An empty qualifier field means none;
    /// both empty, a path whose named children are its segments.
    pub paths: &'static [(&'static str, &'static str, &'static str, Qualifier)],
    /// Wrappers of a name (generic arguments, primary-constructor bases):
    /// `(kind, field of the inner name)`; no field means the first named child.
    pub wrappers: &'static [(&'static str, Option<&'static str>)],
    /// Words that mean the current instance or type (`this`, `self`, `Self`).
    pub this_words: &'static [&'static str],
    /// Words that mean the base class (`base`).
    pub base_words: &'static [&'static str],
    /// Argument node kinds whose type is visible: `(kind, type name)`.
    pub literal_types: &'static [(&'static str, &'static str)],
    /// Kinds of type-parameter lists of a declaration (a field name or a
    /// child kind): its generic arity tells `Foo` from `Foo<T>`.
    pub type_parameters: &'static [&'static str],
    /// Declarations that give a name a type (parameters, locals, fields):
    /// a receiver declared there is looked up by its type.
    pub bindings: &'static [(&'static str, Binding)],
    /// Binding kinds that are members of a type (C# fields and properties):
    /// in scope in the whole type, declared before the use or after it.
    pub members_anywhere: &'static [&'static str],
    /// Binding kinds only `this.x` reaches (JavaScript's class fields): a
    /// bare name passes them by, and `this.x` looks at nothing else.
    pub this_members: &'static [&'static str],
    /// Constructor parameters that declare members (TypeScript's
    /// `constructor(private repo: Repo)`): `this.repo` reaches them.
    pub parameter_members: Option<ParameterMembers>,
    /// A call on a type's path yields that type (Rust `Store::open()`). In
    /// C#, `Policy.Handle()` is as often a builder of something else.
    pub path_calls_make_their_type: bool,
    /// Calling a type constructs it (Python's `A()`): the call goes to the
    /// method of this name, first on the type's bases in order, or to the
    /// type when none declares one; and a variable assigned such a call
    /// has that type.
    pub calls_construct: Option<&'static str>,
    /// The method `new T()` runs when `T` declares no constructor symbol:
    /// JavaScript's `constructor`, `T`'s own or its nearest base's.
    pub constructor_method: Option<&'static str>,
    /// Node kinds that hold decorators: what they call is called by the
    /// code around the decorated declaration (the module or class body),
    /// not by the declaration.
    pub decorators: &'static [&'static str],
    /// How values carry functions (`a = f; a()`), where the walker follows
    /// them.
    pub flow: Option<super::values::FlowSpec>,
    /// Kinds of a declaration's parameter list.
    pub parameter_lists: &'static [&'static str],
    /// A word that, on a method's first parameter, makes it an extension
    /// method of that parameter's type (C# `this`).
    pub extension_word: Option<&'static str>,
    /// Operator methods are static and take every operand (C#'s
    /// `operator +(A a, B b)`); elsewhere the operand is the receiver
    /// (Python's and Rust's `self`).
    pub static_operators: bool,
    /// How the resolver looks names up in this language.
    pub scope: ScopeRules,
}

/// How a node declares names with a type.
#[derive(Debug, Clone, Copy)]
pub enum Binding {
    /// Its named children are bindings (a parameter list).
    Group,
    /// One name and its type (`parameter`, `let`); without a type, the
    /// type of the value when it shows (`new T()`, `T::new()`).
    Named {
        name: &'static str,
        ty: &'static str,
        value: Option<&'static str>,
    },
    /// A type and several declarators (`int a, b = 1;`), directly or in
    /// the child of kind `inner`.
    Declarators {
        inner: Option<&'static str>,
        declarator: &'static str,
        /// Locals only: the syntax of an assignment, `(kind, target
        /// field)`. A local made by `new C()` and not assigned again in its
        /// block has the type `C`, whatever it is declared as (`Job j = new
        /// Impl()`): the methods it runs are `C`'s.
        narrowed_unless_assigned: Option<(&'static str, &'static str)>,
    },
}

/// How a name is written where its type is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// `x`: a local, a parameter, or (where a bare name reaches them) a
    /// member.
    Bare,
    /// `this.x`: a member.
    This,
}

/// Which type of a variable is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Typing {
    /// The class of the object it holds, where its declaration shows it:
    /// what a call on it runs.
    Runs,
    /// The type it is declared with: what chooses an overload it is passed to.
    Declared,
    /// The class of the object it holds where its declaration makes it,
    /// and nothing else: a call on it runs no override.
    Made,
}

/// What the qualifier of a dotted name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Qualifier {
    /// Types, namespaces or modules (`a::b`).
    Path,
    /// Either a type or a value; syntax cannot tell (C# `A.B`).
    PathOrValue,
    /// A value (`x.y`).
    Value,
}

/// What a node kind contributes to the code graph.
#[derive(Debug, Clone, Copy)]
pub enum RefRole {
    /// A call: the callee in field `function`, the arguments in `arguments`.
    Call {
        function: &'static str,
        arguments: &'static str,
    },
    /// A call that is its own callee: its receiver and name are fields of
    /// the call (Java's `a.b(c)`, `b(c)`); the table's `paths` must list
    /// the call's kind with those fields.
    CallSelf {
        object: &'static str,
        name: &'static str,
        arguments: &'static str,
    },
    /// A method named as a value (Java's `A::m`, `this::m`, `super::m`,
    /// `A::new`): what it is passed to calls it, so the code that names it
    /// is taken as calling it. The qualifier is the first named child, the
    /// name the last child; a last child `new_word` names the constructor.
    MethodReference { new_word: &'static str },
    /// A type named as a value (Java's `T.class`), the type its first named
    /// child: what is handed it may make objects of it by reflection (a
    /// mock, a framework's instance), so the type counts as made
    /// ([`RefKind::TypeValue`]); no edge.
    TypeValue,
    /// An argument list: an argument that names a function (a node of
    /// one of the `names` kinds, unwrapped as [`argument_value`] does) is
    /// handed to the callee, which may call it: `.map(Self::parse)`,
    /// `Task.Run(Work)`. A [`Reference::passed`] call of that function.
    /// Not in the arguments of a call written as one of `not_calls` (C#'s
    /// `nameof(Run)` names, runs nothing).
    FunctionsPassed {
        names: &'static [&'static str],
        not_calls: &'static [&'static str],
    },
    /// An import of a package by its path as a string (Go's `import d
    /// "a/b/c"`): bound to the name in `name` (`.`: its names in scope,
    /// `_`: nothing), else to the path's last segment.
    PackageImport {
        path: &'static str,
        name: &'static str,
    },
    /// A constructor call, `new T(...)`.
    New {
        ty: &'static str,
        arguments: &'static str,
    },
    /// A constructor call that names no type (C#'s target-typed
    /// `new(...)`): the type is the one the declaration it initializes
    /// declares, `(kind, type field)` of `declarations` (the node's parent
    /// or grandparent); elsewhere (an argument, a `return`) it is not read.
    NewOfDeclaredType {
        arguments: &'static str,
        declarations: &'static [(&'static str, &'static str)],
    },
    /// `: base(...)` / `: this(...)`: a call of a base or sibling constructor.
    ConstructorChain { arguments: &'static str },
    /// A macro invocation; with `scan`, the calls in its token tree too.
    Macro { name: &'static str, scan: bool },
    /// Every named child is a base type of the enclosing type.
    Bases,
    /// The field's named children are base types of the enclosing type
    /// (supertraits).
    BasesIn { field: &'static str },
    /// The named children of the child of this kind are base types (Java's
    /// `implements A, B` holds them in a `type_list`).
    BasesInChild { kind: &'static str },
    /// A field declaration: one without a name embeds its type, which is
    /// then a base of the enclosing type (Go's `struct { *Base }`: `Base`'s
    /// methods are the struct's).
    EmbeddedField {
        name: &'static str,
        ty: &'static str,
    },
    /// A function declared with the type it returns in field `field` (the
    /// first of several results, Go's `(*T, error)`): what a call on its
    /// result runs ([`RefKind::ReturnType`]).
    ReturnType { field: &'static str },
    /// `impl Trait for Type`: the type implements the trait.
    ImplTrait { tr: &'static str, ty: &'static str },
    /// C# `using` directive (`global`, `static` and aliases).
    Using,
    /// Rust `use` declaration: the use tree in `argument`.
    Use { argument: &'static str },
    /// A module in another file (`mod x;`): no `body`.
    ModuleFile {
        name: &'static str,
        body: &'static str,
    },
    /// `extern crate x;`
    ExternCrate { name: &'static str },
    /// Its value, unless itself a call (then the call is the reference), is
    /// called: a decorator (`@dec`, with the declaration), `raise A`.
    CallsItsValue,
    /// `return v`: the name the enclosing declaration returns.
    Returns,
    /// A statement that runs a protocol of its value's type (`for x in v`:
    /// `__iter__` and `__next__`; `with v`: `__enter__` and `__exit__`):
    /// the methods of `v`'s type in `methods` are called, found on that
    /// type alone, as an [`RefRole::Operator`]'s are.
    Protocol {
        value: &'static str,
        methods: &'static [&'static str],
    },
    /// An operator that runs a method of an operand's type (Python's
    /// `a + b` runs `a.__add__(b)`, `k in c` runs `c.__contains__(k)`).
    /// Each row of `methods` is `(operator, method, operand)`: the
    /// operator as written in the node's field `operator` (`""` for a node
    /// without one, such as `a[k]`), the operand by its place among the
    /// node's named children. Where the node is written to, a row of
    /// `stores` (`(parent kind, parent field, method)`) names the method
    /// instead (`a[k] = v` runs `__setitem__`). Only an operand whose type
    /// shows makes a reference, found on that type alone.
    Operator {
        operator: &'static str,
        methods: &'static [(&'static str, &'static str, Operand)],
        stores: &'static [(&'static str, &'static str, &'static str)],
    },
    /// Python `import a.b, c as d`: each dotted name (or aliased one).
    ImportModules,
    /// Python `from m import a, b as c` / `from . import x` / `from m import *`:
    /// the module in field `module`, relative levels as leading `.` segments.
    ImportFrom { module: &'static str },
    /// Java `import a.b.C;` (one name), `import a.b.*;` (a package's types),
    /// `import static a.b.C.m;` (one member), `import static a.b.C.*;` (a
    /// type's static members): a dotted path, a child of kind `wildcard`
    /// after it for `*`.
    ImportPath { wildcard: &'static str },
    /// An ES module's `import d, {a as b}, * as ns from "s"` (and
    /// TypeScript's `import x = require("s")`): the module as written in
    /// field `source` is the first segment of each import's path (`./m.js`),
    /// found from the file's directory by the resolver; a default import
    /// is the module's name `default`, a namespace the module itself.
    EsImport { source: &'static str },
    /// An ES module's exports that name something other than a declaration
    /// of its own name: `export {a as b}`, `export default f`, and the
    /// re-exports `export {a} from "s"`, `export * from "s"`. The file's
    /// own module is the segment `.`: another file that imports `b` (or
    /// `default`) from it finds `a`.
    EsExport { source: &'static str },
    /// CommonJS `const m = require("s")`, `const {a, b: c} = require("s")`,
    /// `const a = require("s").a` on a declarator (name and value fields):
    /// imports as
    /// [`RefRole::EsImport`] makes them.
    Require {
        function: &'static str,
        name: &'static str,
        value: &'static str,
    },
}

/// Which operand of an operator receives the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operand {
    /// The first named child (`a` of `a + b`, `a[k]`, `-a`).
    First,
    /// The last named child (`c` of `k in c`).
    Last,
}

/// How a file's path makes a module path, when it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Modules {
    /// No module paths: names resolve by scope and by name.
    None,
    /// Qualnames start with the package the file declares (Java
    /// `package a.b;`): the file sees its package's declarations.
    Package,
    /// The same, and a package is a directory (Go): two directories may
    /// declare packages of one name. Full paths start with the directory.
    DirectoryPackage,
    /// Crate and module from the path (`crates/a/src/b/c.rs` → `a::b::c`).
    Rust,
    /// Dotted module from the path, rooted at the topmost directory of an
    /// unbroken chain of packages (`__init__.py`): `src/pkg/m.py` → `pkg.m`
    /// when `src` is no package. A leading `.` segment of an import is the
    /// current package, each further one its parent.
    Python,
    /// The module is the file's path without its extension
    /// (`src/util/text.ts` → `src`, `util`, `text`), and an import names a
    /// file relative to its own (`./text.js`, `../util`, a directory's
    /// `index`): ES modules and CommonJS.
    FilePath,
}

/// Which constructor parameters are members too: those of the
/// `constructor` (a `kind` named `name`) in its `parameters` field that
/// carry one of `marks` (a child kind or a word: `private`, `readonly`).
#[derive(Debug, Clone, Copy)]
pub struct ParameterMembers {
    pub kind: &'static str,
    pub name: &'static str,
    pub parameters: &'static str,
    pub marks: &'static [&'static str],
}

/// Scope rules of a language, as data for the resolver.
#[derive(Debug, Clone, Copy)]
pub struct ScopeRules {
    /// What a file's module or package is, if anything: symbols' full
    /// paths start with it, and the file sees its declarations.
    pub modules: Modules,
    /// The path words for the crate root, the parent and the current module.
    pub root_word: Option<&'static str>,
    pub parent_word: Option<&'static str>,
    pub current_word: Option<&'static str>,
    /// Unqualified calls see the members of base types (C#).
    pub members_inherit: bool,
    /// A value's qualifier that names an import is the imported package:
    /// Go writes `doc.Gen()` as it writes `cmd.Run()`.
    pub imports_qualify_values: bool,
    /// A call of a method on a value of a declared type may run an
    /// override of that method in a subtype (virtual dispatch: Java, C#,
    /// TypeScript): the overrides are targets too.
    pub dispatches_to_overrides: bool,
    /// Which types only the repository's code can make. A call reaches an
    /// override in such a type only where the tree makes the type or a
    /// subtype of it (`new T(...)`, `T::new`): on no other object does the
    /// override run. None: code outside may make any type.
    pub made_here: Option<MadeHere>,
    /// Where locals are declared, `(kind, field of the names)` (an empty
    /// field: the kind's children are such declarations): a local of an
    /// import's name hides the import (`for _, doc := range docs {
    /// doc.Write() }`).
    pub local_names: &'static [(&'static str, &'static str)],
}

impl GraphSpec {
    /// Whether the language's functions declare the type they return (a
    /// [`RefRole::ReturnType`] in the table).
    pub fn declares_return_types(&self) -> bool {
        self.refs
            .iter()
            .any(|(_, r)| matches!(r, RefRole::ReturnType { .. }))
    }
}

impl ScopeRules {
    /// Names resolve across the repository by name and enclosing scope, with
    /// no module paths (Python, Java, Go, TypeScript until imports are read).
    pub const fn by_name(members_inherit: bool) -> ScopeRules {
        ScopeRules {
            modules: Modules::None,
            root_word: None,
            parent_word: None,
            current_word: None,
            members_inherit,
            imports_qualify_values: false,
            dispatches_to_overrides: false,
            made_here: None,
            local_names: &[],
        }
    }
}

/// How a language shows that a type is made only by the repository's own
/// code (Java: a class neither `public` nor `protected`, not a member of an
/// interface, with no annotation a framework could read on it or its
/// members: a framework makes the classes it is told of, by reflection).
#[derive(Debug, Clone, Copy)]
pub struct MadeHere {
    /// The declarations it applies to, by node kind.
    pub kinds: &'static [&'static str],
    /// The child that holds a declaration's modifier words and annotations.
    pub modifiers: &'static str,
    /// Modifier words that open a type to code outside the repository.
    pub open_words: &'static [&'static str],
    /// Bodies whose member types are open whatever they say (an
    /// interface's members are public).
    pub open_bodies: &'static [&'static str],
    /// Annotation kinds, and the names among them that say nothing of who
    /// makes a type (`Override`).
    pub annotations: &'static [&'static str],
    pub inert_annotations: &'static [&'static str],
}

/// A reference found in the tree, with its byte offset (to find the
/// declaration it belongs to).
pub(crate) struct Found {
    pub at: usize,
    /// Made by the code around the declaration that starts at `at` (a
    /// decorator), not by that declaration.
    pub around: bool,
    pub reference: Reference,
}

/// Extracts the references and imports of one parsed file.
pub(crate) struct RefWalker<'a> {
    pub spec: &'static GraphSpec,
    pub roles: &'a [Option<RefRole>],
    pub text: &'a str,
    pub refs: Vec<Found>,
    pub imports: Vec<Import>,
    /// How deep `type_of` is nested (a type read off a value may need the
    /// type of another value).
    pub typing_depth: std::cell::Cell<u8>,
    /// What each class assigns to its instances' attributes, read once.
    pub attributes: std::cell::RefCell<super::values::AttributeValues>,
    /// The byte range of the decorator being walked, and where the
    /// declaration it decorates starts.
    pub decorator: Option<(Range<usize>, usize)>,
    /// The node being walked and its ancestors, root first.
    pub ancestors: std::cell::RefCell<Vec<Node<'a>>>,
    /// What each block binds, read once.
    pub blocks: std::cell::RefCell<super::values::Blocks>,
    /// For each callee (by node id) found on what a call returned: what
    /// that call was made on ([`Reference::callee_receiver`]), kept when
    /// the split found it.
    pub returned_on: std::cell::RefCell<std::collections::HashMap<usize, Receiver>>,
    /// The callees (by node id) found on a value whose type is the class
    /// it was made of ([`Reference::made`]), kept when the split found it.
    pub made_at: std::cell::RefCell<std::collections::HashSet<usize>>,
}

/// How many variables deep a receiver's type is followed (`let a = b;`).
const MAX_TYPING_DEPTH: u8 = 4;

fn line(node: Node<'_>) -> u32 {
    node.start_position().row as u32 + 1
}

impl<'a> RefWalker<'a> {
    pub(crate) fn text(&self, node: Node<'_>) -> &'a str {
        &self.text[node.byte_range()]
    }

    /// Walks the whole tree (iteratively), skipping `ERROR` subtrees.
    pub fn walk(&mut self, tree: &'a Tree) {
        let mut cursor = tree.walk();
        self.ancestors.borrow_mut().clear();
        self.ancestors.borrow_mut().push(cursor.node());
        'walk: loop {
            let node = cursor.node();
            if self.spec.decorators.contains(&node.kind()) {
                // Walked in order: what follows inside it is decorator code.
                let decorated = self.up(node).map_or(node.start_byte(), |p| p.start_byte());
                self.decorator = Some((node.byte_range(), decorated));
            }
            let role = self.roles.get(node.kind_id() as usize).copied().flatten();
            if let Some(role) = role {
                self.visit(node, role);
            }
            if !node.is_error() && cursor.goto_first_child() {
                self.ancestors.borrow_mut().push(cursor.node());
                continue;
            }
            loop {
                if cursor.goto_next_sibling() {
                    let mut stack = self.ancestors.borrow_mut();
                    stack.pop();
                    stack.push(cursor.node());
                    break;
                }
                if !cursor.goto_parent() {
                    break 'walk;
                }
                self.ancestors.borrow_mut().pop();
            }
        }
    }

    /// The name of the declaration a decorator decorates (the flow table's
    /// wrapper holds both).
    fn decorated_name(&self, decorator: Node<'a>) -> Option<String> {
        let flow = self.spec.flow.as_ref()?;
        // Stacked decorators: the nearest is passed the declaration, the
        // next one what that returned (`f()`, when it is a name).
        let mut next = decorator.next_named_sibling();
        while let Some(n) = next.filter(|n| n.is_extra()) {
            next = n.next_named_sibling();
        }
        if let Some(inner) = next.filter(|n| n.kind() == decorator.kind()) {
            let segments = self.segments(inner.named_child(0)?)?;
            return Some(format!("{}()", segments.join(".")));
        }
        let wrapper = self.up(decorator).filter(|w| w.kind() == flow.wrapper.0)?;
        let declared = wrapper.child_by_field_name(flow.wrapper.1)?;
        let (_, field) = flow
            .definitions
            .iter()
            .find(|(k, _)| *k == declared.kind())?;
        let name = declared.child_by_field_name(field)?;
        Some(self.text(name).trim().to_owned())
    }

    pub(crate) fn push(&mut self, node: Node<'_>, reference: Reference) {
        // A decorator's calls are made where the decorated declaration
        // stands: owned by what holds the declaration.
        let decorated = self
            .decorator
            .as_ref()
            .filter(|(range, _)| range.contains(&node.start_byte()))
            .map(|(_, at)| *at);
        self.refs.push(Found {
            at: decorated.unwrap_or(node.start_byte()),
            around: decorated.is_some(),
            reference,
        });
    }

    fn field_or_child<'t>(&self, node: Node<'t>, name: &str) -> Option<Node<'t>> {
        node.child_by_field_name(name).or_else(|| {
            let mut cursor = node.walk();
            let found = node.named_children(&mut cursor).find(|c| c.kind() == name);
            found
        })
    }

    fn visit(&mut self, node: Node<'a>, role: RefRole) {
        match role {
            RefRole::Call {
                function,
                arguments,
            } => {
                let Some(callee) = node.child_by_field_name(function) else {
                    return;
                };
                let args = node.child_by_field_name(arguments);
                // `super(x)` (JavaScript): the base type's constructor.
                let word = self.text(callee).trim();
                if callee.named_child_count() == 0 && self.spec.base_words.contains(&word) {
                    let reference = self.reference(
                        RefKind::New,
                        Receiver::Base,
                        Vec::new(),
                        word.to_owned(),
                        node,
                    );
                    let reference = self.with_arguments(reference, args);
                    self.push(node, reference);
                    return;
                }
                self.import_call(node, callee, args);
                if let Some(flowed) = self.flow_call(node, callee) {
                    for reference in flowed {
                        let reference = self.with_arguments(reference, args);
                        self.push(node, reference);
                    }
                    return;
                }
                if let Some((receiver, qualifier, name)) = self.split_name(callee) {
                    let mut reference =
                        self.reference(RefKind::Call, receiver, qualifier, name, node);
                    self.keep_split(callee, &mut reference);
                    reference.type_args = self.type_args(callee);
                    let reference = self.with_arguments(reference, args);
                    self.push(node, reference);
                }
            }
            RefRole::CallSelf {
                object,
                name,
                arguments,
            } => {
                let Some(name_node) = node.child_by_field_name(name) else {
                    return;
                };
                let parts = match node.child_by_field_name(object) {
                    // `b(c)`: a method of this class (or inherited).
                    None => Some((
                        Receiver::Bare,
                        Vec::new(),
                        self.text(name_node).trim().to_owned(),
                    )),
                    Some(_) => self.split_name(node),
                };
                if let Some((receiver, qualifier, name)) = parts {
                    let mut reference =
                        self.reference(RefKind::Call, receiver, qualifier, name, node);
                    self.keep_split(node, &mut reference);
                    let reference =
                        self.with_arguments(reference, node.child_by_field_name(arguments));
                    self.push(node, reference);
                }
            }
            RefRole::MethodReference { new_word } => {
                let Some(qualifier) = node.named_child(0) else {
                    return;
                };
                let Some(last) = node.child(node.child_count().saturating_sub(1)) else {
                    return;
                };
                let name = self.text(last).trim().to_owned();
                let reference = if name == new_word {
                    let Some(segments) = self.segments(qualifier) else {
                        return;
                    };
                    let (qualifier, name) = split_last(segments);
                    let receiver = path_receiver(&qualifier);
                    self.reference(RefKind::New, receiver, qualifier, name, node)
                } else if last.id() == qualifier.id() {
                    return;
                } else {
                    let (receiver, qualifier, name) =
                        self.qualified(node, qualifier, name, Qualifier::PathOrValue);
                    let mut reference =
                        self.reference(RefKind::Call, receiver, qualifier, name, node);
                    // Named, not called here: found by scope, type or path.
                    reference.passed = true;
                    self.keep_split(node, &mut reference);
                    reference
                };
                self.push(node, reference);
            }
            RefRole::TypeValue => {
                let Some(segments) = node.named_child(0).and_then(|t| self.segments(t)) else {
                    return;
                };
                let (qualifier, name) = split_last(segments);
                let receiver = path_receiver(&qualifier);
                let reference = self.reference(RefKind::TypeValue, receiver, qualifier, name, node);
                self.push(node, reference);
            }
            RefRole::New { ty, arguments } => {
                let Some(ty) = node.child_by_field_name(ty) else {
                    return;
                };
                if let Some(segments) = self.segments(ty) {
                    let args = node.child_by_field_name(arguments);
                    self.push_new(node, ty, segments, args);
                }
            }
            RefRole::NewOfDeclaredType {
                arguments,
                declarations,
            } => {
                let declared = [node.parent(), node.parent().and_then(|p| p.parent())]
                    .into_iter()
                    .flatten()
                    .find_map(|d| {
                        let (_, field) = declarations.iter().find(|(k, _)| *k == d.kind())?;
                        d.child_by_field_name(field)
                    });
                let Some(ty) = declared else { return };
                if let Some(segments) = self.declared_type(ty) {
                    let mut cursor = node.walk();
                    let args = node
                        .named_children(&mut cursor)
                        .find(|c| c.kind() == arguments);
                    self.push_new(node, ty, segments, args);
                }
            }
            RefRole::ConstructorChain { arguments } => {
                let mut cursor = node.walk();
                let word = node
                    .children(&mut cursor)
                    .map(|c| self.text(c))
                    .find(|t| self.spec.this_words.contains(t) || self.spec.base_words.contains(t));
                let Some(word) = word else { return };
                let receiver = if self.spec.base_words.contains(&word) {
                    Receiver::Base
                } else {
                    Receiver::This
                };
                let mut cursor = node.walk();
                let args = node
                    .named_children(&mut cursor)
                    .find(|c| c.kind() == arguments);
                let reference =
                    self.reference(RefKind::New, receiver, Vec::new(), word.to_owned(), node);
                let reference = self.with_arguments(reference, args);
                self.push(node, reference);
            }
            RefRole::Macro { name, scan } => {
                if let Some((receiver, qualifier, name)) = node
                    .child_by_field_name(name)
                    .and_then(|n| self.split_name(n))
                {
                    let reference = self.reference(RefKind::Macro, receiver, qualifier, name, node);
                    self.push(node, reference);
                }
                if scan {
                    let mut cursor = node.walk();
                    let trees: Vec<Node<'_>> = node
                        .named_children(&mut cursor)
                        .filter(|c| c.kind() == "token_tree")
                        .collect();
                    for tree in trees {
                        self.scan_tokens(tree);
                    }
                }
            }
            RefRole::Bases => self.bases(node, None),
            RefRole::BasesIn { field } => {
                if let Some(list) = node.child_by_field_name(field) {
                    self.bases(list, None);
                }
            }
            RefRole::BasesInChild { kind } => {
                let mut cursor = node.walk();
                let list = node.named_children(&mut cursor).find(|c| c.kind() == kind);
                // JavaScript's `class_heritage` holds the base itself,
                // TypeScript's an `extends_clause` that holds it.
                self.bases(list.unwrap_or(node), None);
            }
            RefRole::FunctionsPassed { names, not_calls } => {
                let callee = self.up(node).and_then(|call| call.named_child(0));
                if callee.is_some_and(|c| not_calls.contains(&self.text(c).trim())) {
                    return;
                }
                let mut cursor = node.walk();
                let args: Vec<Node<'a>> = node.named_children(&mut cursor).collect();
                for arg in args {
                    let value = argument_value(arg);
                    if !names.contains(&value.kind()) {
                        continue;
                    }
                    if let Some((receiver, qualifier, name)) = self.split_name(value) {
                        let mut reference =
                            self.reference(RefKind::Call, receiver, qualifier, name, value);
                        reference.passed = true;
                        self.keep_split(value, &mut reference);
                        self.push(value, reference);
                    }
                }
            }
            RefRole::EmbeddedField { name, ty } => {
                if node.child_by_field_name(name).is_none() {
                    if let Some(ty) = node.child_by_field_name(ty) {
                        self.base(ty, None);
                    }
                }
            }
            RefRole::ReturnType { field } => {
                let Some(mut ty) = node.child_by_field_name(field) else {
                    return;
                };
                if self.spec.parameter_lists.contains(&ty.kind()) {
                    let Some(first) = ty.named_child(0) else {
                        return;
                    };
                    ty = first.child_by_field_name("type").unwrap_or(first);
                }
                if let Some(segments) = self.declared_type(ty) {
                    let (qualifier, name) = split_last(segments);
                    let receiver = path_receiver(&qualifier);
                    let reference =
                        self.reference(RefKind::ReturnType, receiver, qualifier, name, ty);
                    self.push(ty, reference);
                }
            }
            RefRole::ImplTrait { tr, ty } => {
                let (Some(tr), Some(ty)) =
                    (node.child_by_field_name(tr), node.child_by_field_name(ty))
                else {
                    return;
                };
                let Some(owner) = self.type_name(ty) else {
                    return;
                };
                if let Some(segments) = self.segments(tr) {
                    let (qualifier, name) = split_last(segments);
                    let receiver = path_receiver(&qualifier);
                    let mut reference =
                        self.reference(RefKind::Implements, receiver, qualifier, name, tr);
                    reference.type_args = self.type_args(tr);
                    reference.owner_type = Some(owner);
                    self.push(node, reference);
                }
            }
            RefRole::Using => self.using(node),
            RefRole::Use { argument } => {
                if let Some(tree) = node.child_by_field_name(argument) {
                    let line = line(node);
                    self.use_tree(tree, &[], line);
                }
            }
            RefRole::ModuleFile { name, body } => {
                if node.child_by_field_name(body).is_some() {
                    return;
                }
                if let Some(name) = node.child_by_field_name(name) {
                    self.imports.push(Import {
                        kind: ImportKind::Module,
                        path: vec![self.text(name).to_owned()],
                        alias: None,
                        line: line(node),
                        owner: None,
                    });
                }
            }
            RefRole::CallsItsValue => {
                let Some(expr) = node.named_child(0) else {
                    return;
                };
                let is_decorator = self.spec.decorators.contains(&node.kind());
                // `raise A()`: the call is the reference. `@make(x)`: so
                // is the call, and what it returns is called with the
                // declaration.
                if self.is_call(expr) && !is_decorator {
                    return;
                }
                let references = match self.flow_call(node, expr) {
                    Some(flowed) => flowed,
                    None => self
                        .split_name(expr)
                        .map(|(receiver, qualifier, name)| {
                            self.reference(RefKind::Call, receiver, qualifier, name, node)
                        })
                        .into_iter()
                        .collect(),
                };
                // A decorator is passed the declaration it decorates.
                let decorated = is_decorator.then(|| self.decorated_name(node)).flatten();
                for mut reference in references {
                    reference.args = Some(1);
                    if let Some(name) = &decorated {
                        reference.arg_names = vec![name.clone()];
                    }
                    self.push(node, reference);
                }
            }
            RefRole::Protocol { value, methods } => {
                let Some(value) = node.child_by_field_name(value) else {
                    return;
                };
                let Some(ty) = self.operand_type(value) else {
                    return;
                };
                for method in methods {
                    let mut reference = self.reference(
                        RefKind::Call,
                        Receiver::Typed,
                        ty.clone(),
                        (*method).to_owned(),
                        value,
                    );
                    reference.args = Some(0);
                    reference.operator = true;
                    self.push(node, reference);
                }
            }
            RefRole::Operator {
                operator,
                methods,
                stores,
            } => self.operator(node, operator, methods, stores),
            RefRole::Returns => {
                let Some(value) = node.named_child(0) else {
                    return;
                };
                // `a = f; return a`: what the variable holds.
                let held = match self.unwrap(value).kind() {
                    "identifier" => self.values_of(value, self.text(value).trim(), 0),
                    _ => Vec::new(),
                };
                let values = if held.is_empty() { vec![value] } else { held };
                for value in values {
                    if let Some(name) = self.anonymous(value) {
                        let reference = self.reference(
                            RefKind::Returns,
                            Receiver::Bare,
                            Vec::new(),
                            name,
                            node,
                        );
                        self.push(node, reference);
                        continue;
                    }
                    if self.segments(value).is_none() {
                        continue;
                    }
                    if let Some((receiver, qualifier, name)) = self.split_name(value) {
                        let mut reference =
                            self.reference(RefKind::Returns, receiver, qualifier, name, node);
                        // `def bar(f): return f`: what the call site passes.
                        if receiver == Receiver::Bare {
                            reference.param = self
                                .param_position(value, &reference.name)
                                .filter(|(_, _, depth)| *depth == 0)
                                .map(|(at, _, _)| at);
                        }
                        self.push(node, reference);
                    }
                }
            }
            RefRole::ImportModules => self.imported_names(node, &[]),
            RefRole::ImportPath { wildcard } => self.import_path(node, wildcard),
            RefRole::PackageImport { path, name } => self.package_import(node, path, name),
            RefRole::EsImport { source } => self.es_import(node, source),
            RefRole::EsExport { source } => self.es_export(node, source),
            RefRole::Require {
                function,
                name,
                value,
            } => self.require(node, function, name, value),
            RefRole::ImportFrom { module } => {
                let Some(module) = node.child_by_field_name(module) else {
                    return;
                };
                let mut base: Vec<String> = Vec::new();
                if module.kind() == "relative_import" {
                    let mut cursor = module.walk();
                    for part in module.named_children(&mut cursor) {
                        if part.kind() == "import_prefix" {
                            let dots = self.text(part).chars().filter(|c| *c == '.').count();
                            base.extend(std::iter::repeat_n(".".to_owned(), dots));
                        } else if let Some(s) = self.dotted(part) {
                            base.extend(s);
                        }
                    }
                } else if let Some(s) = self.dotted(module) {
                    base = s;
                }
                let mut cursor = node.walk();
                if node
                    .named_children(&mut cursor)
                    .any(|c| c.kind() == "wildcard_import")
                {
                    self.imports.push(Import {
                        kind: ImportKind::Glob,
                        path: base,
                        alias: None,
                        line: line(node),
                        owner: None,
                    });
                    return;
                }
                self.imported_names(node, &base);
            }
            RefRole::ExternCrate { name } => {
                if let Some(n) = node.child_by_field_name(name) {
                    let alias = node
                        .child_by_field_name("alias")
                        .map(|a| self.text(a).to_owned());
                    self.imports.push(Import {
                        kind: ImportKind::ExternCrate,
                        path: vec![self.text(n).to_owned()],
                        alias,
                        line: line(node),
                        owner: None,
                    });
                }
            }
        }
    }

    /// A Python `dotted_name` as segments.
    fn dotted(&self, node: Node<'_>) -> Option<Vec<String>> {
        let parts: Vec<String> = self
            .text(node)
            .split('.')
            .map(|p| p.trim().to_owned())
            .collect();
        parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_'))
            .then_some(parts)
    }

    /// One import per name in the `name` fields of `node`, each under `base`.
    fn imported_names(&mut self, node: Node<'_>, base: &[String]) {
        let mut cursor = node.walk();
        let names: Vec<Node<'_>> = node.children_by_field_name("name", &mut cursor).collect();
        for name in names {
            if let Some((tail, alias)) = self.imported_name(name) {
                let mut path = base.to_vec();
                path.extend(tail);
                self.import_as(node, path, alias);
            }
        }
    }

    /// One import of a name (`path` ends with it) by the local `name`.
    fn import_as(&mut self, node: Node<'_>, path: Vec<String>, name: Option<String>) {
        let alias = name.filter(|n| path.last() != Some(n));
        self.imports.push(Import {
            kind: ImportKind::Name,
            path,
            alias,
            line: line(node),
            owner: None,
        });
    }

    /// A string literal's content (`"./m.js"` → `./m.js`).
    fn string_content(&self, node: Node<'_>) -> Option<String> {
        let text = self.text(node).trim();
        let inner = text
            .strip_prefix(['"', '\''])
            .and_then(|t| t.strip_suffix(['"', '\'']))?;
        (!inner.is_empty()).then(|| inner.to_owned())
    }

    /// See [`RefRole::EsImport`].
    fn es_import(&mut self, node: Node<'_>, source: &str) {
        let from = node
            .child_by_field_name(source)
            .and_then(|s| self.string_content(s));
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in children {
            match child.kind() {
                "import_clause" => {
                    let Some(from) = from.clone() else {
                        continue;
                    };
                    let mut cursor = child.walk();
                    let parts: Vec<Node<'_>> = child.named_children(&mut cursor).collect();
                    for part in parts {
                        match part.kind() {
                            "identifier" => {
                                let local = self.text(part).trim().to_owned();
                                self.import_as(
                                    node,
                                    vec![from.clone(), "default".into()],
                                    Some(local),
                                );
                            }
                            "namespace_import" => {
                                let local =
                                    part.named_child(0).map(|n| self.text(n).trim().to_owned());
                                self.import_as(node, vec![from.clone()], local);
                            }
                            "named_imports" => {
                                for (name, local) in self.specifiers(part) {
                                    self.import_as(node, vec![from.clone(), name], local);
                                }
                            }
                            _ => {}
                        }
                    }
                }
                // TypeScript's `import x = require("s")`.
                "import_require_clause" => {
                    let Some(from) = child
                        .child_by_field_name(source)
                        .and_then(|s| self.string_content(s))
                    else {
                        continue;
                    };
                    let local = child.named_child(0).map(|n| self.text(n).trim().to_owned());
                    self.import_as(node, vec![from], local);
                }
                _ => {}
            }
        }
    }

    /// The `(name, alias)` of each specifier of an import or export list
    /// (`{a as b, c}`).
    fn specifiers(&self, list: Node<'_>) -> Vec<(String, Option<String>)> {
        let mut cursor = list.walk();
        list.named_children(&mut cursor)
            .filter_map(|specifier| {
                let name = self.export_name(specifier.child_by_field_name("name")?);
                let alias = specifier
                    .child_by_field_name("alias")
                    .map(|a| self.export_name(a));
                Some((name, alias))
            })
            .collect()
    }

    /// A name in an import or export list (`a`, `default`, `"a-b"`).
    fn export_name(&self, node: Node<'_>) -> String {
        self.string_content(node)
            .filter(|_| node.kind() == "string")
            .unwrap_or_else(|| self.text(node).trim().to_owned())
    }

    /// See [`RefRole::EsExport`].
    fn es_export(&mut self, node: Node<'_>, source: &str) {
        let from = node
            .child_by_field_name(source)
            .and_then(|s| self.string_content(s));
        let module = from.clone().unwrap_or_else(|| ".".to_owned());
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        let mut default = false;
        for child in children {
            match child.kind() {
                "default" => default = true,
                "export_clause" => {
                    for (name, alias) in self.specifiers(child) {
                        // `export {a}` of a name of its own: nothing to add.
                        if from.is_none() && alias.as_ref().is_none_or(|a| *a == name) {
                            continue;
                        }
                        self.import_as(node, vec![module.clone(), name], alias);
                    }
                }
                "namespace_export" => {
                    if let Some(from) = from.clone() {
                        let local = child.named_child(0).map(|n| self.export_name(n));
                        self.import_as(node, vec![from], local);
                    }
                }
                "*" => {
                    if let Some(from) = from.clone() {
                        self.imports.push(Import {
                            kind: ImportKind::Glob,
                            path: vec![from],
                            alias: None,
                            line: line(node),
                            owner: None,
                        });
                    }
                }
                _ => {}
            }
        }
        if !default {
            return;
        }
        // `export default f` / `export default function f() {}`: `default`
        // is `f` (an anonymous one is a declaration named `default`).
        let named = match node
            .child_by_field_name("value")
            .or_else(|| node.child_by_field_name("declaration"))
        {
            Some(v) if v.kind() == "identifier" => Some(v),
            Some(v) => v.child_by_field_name("name"),
            None => None,
        };
        if let Some(named) = named {
            let name = self.text(named).trim().to_owned();
            self.import_as(node, vec![".".to_owned(), name], Some("default".to_owned()));
        }
    }

    /// See [`RefRole::Require`].
    fn require(&mut self, node: Node<'_>, function: &str, name: &str, value: &str) {
        let Some(mut call) = node.child_by_field_name(value) else {
            return;
        };
        // `const f = require("s").f`: one name of the module.
        let mut member = None;
        if let Some(object) = self
            .spec
            .paths
            .iter()
            .find_map(|(kind, object, property, _)| {
                (call.kind() == *kind).then(|| {
                    (
                        call.child_by_field_name(object),
                        call.child_by_field_name(property),
                    )
                })
            })
        {
            let (Some(object), Some(property)) = object else {
                return;
            };
            member = Some(self.text(property).trim().to_owned());
            call = object;
        }
        let callee = call.child_by_field_name("function");
        if callee.is_none_or(|c| self.text(c).trim() != function) {
            return;
        }
        let Some(from) = call
            .child_by_field_name("arguments")
            .and_then(|a| a.named_child(0))
            .filter(|a| a.kind() == "string")
            .and_then(|a| self.string_content(a))
        else {
            return;
        };
        let Some(target) = node.child_by_field_name(name) else {
            return;
        };
        match target.kind() {
            "identifier" => {
                let local = self.text(target).trim().to_owned();
                let path = std::iter::once(from).chain(member).collect();
                self.import_as(node, path, Some(local));
            }
            _ if member.is_some() => {}
            "object_pattern" => {
                let mut cursor = target.walk();
                let parts: Vec<Node<'_>> = target.named_children(&mut cursor).collect();
                for part in parts {
                    let (key, local) = match part.kind() {
                        "shorthand_property_identifier_pattern" => (Some(part), None),
                        // `{a: b}` binds `b`; a nested pattern, nothing followed.
                        "pair_pattern" => match part.child_by_field_name("value") {
                            Some(v) if v.kind() == "identifier" => (
                                part.child_by_field_name("key"),
                                Some(self.text(v).trim().to_owned()),
                            ),
                            _ => (None, None),
                        },
                        _ => (None, None),
                    };
                    if let Some(key) = key {
                        let key = self.text(key).trim().to_owned();
                        self.import_as(node, vec![from.clone(), key], local);
                    }
                }
            }
            _ => {}
        }
    }

    /// `m = import_module("a.b")` ([`FlowSpec::import_calls`]): `m` is
    /// bound as by `import a.b as m`.
    fn import_call(&mut self, call: Node<'a>, callee: Node<'a>, args: Option<Node<'a>>) {
        let Some(flow) = self.spec.flow.as_ref() else {
            return;
        };
        let called = self.segments(callee);
        let Some(name) = called.as_ref().and_then(|s| s.last()) else {
            return;
        };
        if !flow.import_calls.contains(&name.as_str()) {
            return;
        }
        let Some(module) = args.and_then(|a| a.named_child(0)) else {
            return;
        };
        // A plain string of a dotted name (no f-string, no prefix).
        let text = self.text(module).trim();
        let path = text
            .strip_prefix('"')
            .and_then(|t| t.strip_suffix('"'))
            .or_else(|| text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')));
        let Some(path) = path.filter(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
        }) else {
            return;
        };
        let Some(assignment) = self.up(call) else {
            return;
        };
        let Some((_, target, value)) = super::values::assignment_row(flow, assignment) else {
            return;
        };
        let assigned = assignment.child_by_field_name(target);
        let is_value = assignment
            .child_by_field_name(value)
            .is_some_and(|v| v.id() == call.id());
        let Some(variable) = assigned.filter(|t| is_value && t.kind() == "identifier") else {
            return;
        };
        self.imports.push(Import {
            kind: ImportKind::Name,
            path: path.split('.').map(str::to_owned).collect(),
            alias: Some(self.text(variable).trim().to_owned()),
            line: line(call),
            owner: None,
        });
    }

    /// An imported name: `a.b` or `a.b as c`, as (segments, alias).
    fn imported_name(&self, node: Node<'_>) -> Option<(Vec<String>, Option<String>)> {
        if node.kind() == "aliased_import" {
            let path = self.dotted(node.child_by_field_name("name")?)?;
            let alias = node
                .child_by_field_name("alias")
                .map(|a| self.text(a).trim().to_owned());
            return Some((path, alias));
        }
        Some((self.dotted(node)?, None))
    }

    /// The type a value shows: its own (`A()`), a variable's, or an
    /// attribute's of the current instance (`self.a = A()`).
    fn operand_type(&self, value: Node<'a>) -> Option<Vec<String>> {
        let value = self.unwrap(value);
        self.value_type(value).or_else(|| {
            if value.kind() == "identifier" {
                let name = self.text(value).trim();
                // A static operator is chosen by the types declared (C#).
                let typing = match self.spec.static_operators {
                    true => Typing::Declared,
                    false => Typing::Runs,
                };
                self.binding_type(value, name, typing, Reach::Bare)
                    .or_else(|| self.flow_type(value, name))
            } else {
                let attribute = self.this_attribute(value)?;
                self.attribute_type(value, &attribute)
            }
        })
    }

    /// An operator's call of its operand type's method ([`RefRole::Operator`]).
    fn operator(
        &mut self,
        node: Node<'a>,
        operator: &str,
        methods: &[(&str, &str, Operand)],
        stores: &[(&str, &str, &str)],
    ) {
        let written = node
            .child_by_field_name(operator)
            .map_or("", |o| self.text(o).trim());
        // `a < b < c` compares twice: which operand is whose is not read.
        let mut cursor = node.walk();
        let operands: Vec<Node<'a>> = node.named_children(&mut cursor).collect();
        if operands.len() > 2 {
            return;
        }
        let Some(&(_, method, side)) = methods.iter().find(|(o, _, _)| *o == written) else {
            return;
        };
        let stored = self.up(node).and_then(|parent| {
            stores.iter().find_map(|(kind, field, method)| {
                let target = parent.child_by_field_name(field)?;
                (parent.kind() == *kind && target.id() == node.id()).then_some(*method)
            })
        });
        let operand = match side {
            Operand::First => operands.first(),
            Operand::Last => operands.last(),
        };
        let Some(ty) = operand.and_then(|o| self.operand_type(*o)) else {
            return;
        };
        let mut reference = self.reference(
            RefKind::Call,
            Receiver::Typed,
            ty,
            stored.unwrap_or(method).to_owned(),
            node,
        );
        // The other operands (all of them for a static operator), and the
        // value a store puts.
        let receiver = usize::from(!self.spec.static_operators);
        reference.args = Some((operands.len() - receiver + usize::from(stored.is_some())) as u32);
        // A static operator's overloads differ by the operands' types.
        if self.spec.static_operators {
            reference.arg_types = operands
                .iter()
                .map(|o| {
                    self.operand_type(*o)
                        .and_then(|t| t.last().cloned())
                        .unwrap_or_default()
                })
                .collect();
        }
        reference.operator = true;
        self.push(node, reference);
    }

    pub(crate) fn reference(
        &self,
        kind: RefKind,
        receiver: Receiver,
        qualifier: Vec<String>,
        name: String,
        node: Node<'_>,
    ) -> Reference {
        Reference {
            kind,
            owner: None,
            owner_type: None,
            receiver,
            qualifier,
            name,
            type_args: 0,
            args: None,
            arg_types: Vec::new(),
            line: line(node),
            arg_names: Vec::new(),
            flow: false,
            operator: false,
            returned: false,
            returned_again: 0,
            returned_args: Vec::new(),
            param: None,
            param_depth: 0,
            passed: false,
            callee_receiver: Receiver::Bare,
            made: false,
        }
    }

    /// How many type arguments the last name of a path is written with.
    fn type_args(&self, node: Node<'_>) -> u8 {
        let mut node = node;
        while let Some((_, name_field, _)) = self.path_form(node.kind()) {
            match self.field_or_child(node, name_field) {
                Some(name) => node = name,
                None => break,
            }
        }
        let mut cursor = node.walk();
        let count = node
            .named_children(&mut cursor)
            .find(|c| c.kind().contains("type_argument"))
            .map_or(0, |list| list.named_child_count());
        count.min(u8::MAX as usize) as u8
    }

    /// A constructor call at `node` of the type `ty` names (`segments`).
    fn push_new(
        &mut self,
        node: Node<'a>,
        ty: Node<'a>,
        segments: Vec<String>,
        args: Option<Node<'a>>,
    ) {
        let (qualifier, name) = split_last(segments);
        let receiver = path_receiver(&qualifier);
        let mut reference = self.reference(RefKind::New, receiver, qualifier, name, node);
        reference.type_args = self.type_args(ty);
        let reference = self.with_arguments(reference, args);
        self.push(node, reference);
    }

    fn with_arguments(&self, mut reference: Reference, args: Option<Node<'a>>) -> Reference {
        let Some(args) = args else {
            return reference;
        };
        let mut cursor = args.walk();
        let mut types = Vec::new();
        for arg in args.named_children(&mut cursor) {
            if arg.kind().ends_with("comment") || arg.kind() == "attribute_item" {
                continue;
            }
            types.push(self.visible_type(argument_value(arg)));
        }
        reference.args = Some(types.len() as u32);
        if reference.kind == RefKind::Call {
            reference.arg_names = self.argument_names(args);
        }
        if types.iter().any(|t| !t.is_empty()) {
            reference.arg_types = types;
        }
        reference
    }

    /// The type of an argument, where the call site shows it.
    fn visible_type(&self, value: Node<'a>) -> String {
        let kind = value.kind();
        if let Some((_, ty)) = self.spec.literal_types.iter().find(|(k, _)| *k == kind) {
            return (*ty).to_owned();
        }
        if value.named_child_count() == 0 && value.is_named() {
            let name = self.text(value).trim();
            return self
                .declared_type_of(value, name)
                .and_then(|t| t.last().cloned())
                .unwrap_or_default();
        }
        self.created_type(value)
            .and_then(|s| s.last().cloned())
            .unwrap_or_default()
    }

    /// The type `new T(...)` names, as path segments (`Outer.Inner`).
    fn created_type(&self, value: Node<'a>) -> Option<Vec<String>> {
        let kind = value.kind();
        self.spec
            .refs
            .iter()
            .find_map(|(k, role)| match role {
                RefRole::New { ty, .. } if *k == kind => Some(*ty),
                _ => None,
            })
            .and_then(|ty| value.child_by_field_name(ty))
            .and_then(|t| self.segments(t))
    }

    fn bases(&mut self, list: Node<'_>, owner_type: Option<String>) {
        let mut cursor = list.walk();
        let types: Vec<Node<'_>> = list.named_children(&mut cursor).collect();
        for ty in types {
            self.base(ty, owner_type.clone());
        }
    }

    fn base(&mut self, ty: Node<'_>, owner_type: Option<String>) {
        if let Some(segments) = self.segments(ty) {
            let (qualifier, name) = split_last(segments);
            let receiver = path_receiver(&qualifier);
            let mut reference = self.reference(RefKind::Base, receiver, qualifier, name, ty);
            reference.type_args = self.type_args(ty);
            reference.owner_type = owner_type;
            self.push(ty, reference);
        }
    }

    /// The last name of a type, wrappers peeled (`Wrapper` of `&mut Wrapper<T>`).
    fn type_name(&self, ty: Node<'_>) -> Option<String> {
        let mut ty = ty;
        loop {
            if let Some(segments) = self.segments(ty) {
                return segments.last().cloned();
            }
            let mut cursor = ty.walk();
            let inner = ty
                .named_children(&mut cursor)
                .find(|c| c.kind() != "lifetime" && c.kind() != "mutable_specifier")?;
            ty = inner;
        }
    }

    pub(crate) fn unwrap<'t>(&self, node: Node<'t>) -> Node<'t> {
        let mut node = node;
        while let Some((_, field)) = self.spec.wrappers.iter().find(|(k, _)| *k == node.kind()) {
            let inner = match field {
                Some(f) => node.child_by_field_name(f),
                None => node.named_child(0),
            };
            match inner {
                Some(inner) => node = inner,
                None => break,
            }
        }
        node
    }

    fn path_form(&self, kind: &str) -> Option<(&'static str, &'static str, Qualifier)> {
        self.spec
            .paths
            .iter()
            .find(|(k, ..)| *k == kind)
            .map(|(_, q, n, what)| (*q, *n, *what))
    }

    /// A callee as (receiver, qualifier segments, name).
    pub(crate) fn split_name(&self, callee: Node<'a>) -> Option<(Receiver, Vec<String>, String)> {
        let callee = self.unwrap(callee);
        if callee.named_child_count() == 0 {
            let name = self.text(callee).trim();
            return (!name.is_empty()).then(|| (Receiver::Bare, Vec::new(), name.to_owned()));
        }
        let (qualifier_field, name_field, what) = self.path_form(callee.kind())?;
        let name_node = self.field_or_child(callee, name_field)?;
        let (_, _, name) = self.split_name(name_node)?;
        let Some(qualifier) = (!qualifier_field.is_empty())
            .then(|| callee.child_by_field_name(qualifier_field))
            .flatten()
        else {
            // Only an anonymous token before the name: `this.X`, `base.X`
            // are unnamed in some grammars.
            let mut cursor = callee.walk();
            let word = callee
                .children(&mut cursor)
                .map(|c| self.text(c))
                .find(|t| self.spec.this_words.contains(t) || self.spec.base_words.contains(t));
            return Some(match word {
                Some(w) if self.spec.base_words.contains(&w) => (Receiver::Base, Vec::new(), name),
                Some(_) => (Receiver::This, Vec::new(), name),
                None if qualifier_field.is_empty() => (Receiver::Value, Vec::new(), name),
                None => (Receiver::Value, Vec::new(), name),
            });
        };
        Some(self.qualified(callee, qualifier, name, what))
    }

    /// A name written after `qualifier` at `at`, as (receiver, qualifier
    /// segments, name).
    fn qualified(
        &self,
        at: Node<'a>,
        qualifier: Node<'a>,
        name: String,
        what: Qualifier,
    ) -> (Receiver, Vec<String>, String) {
        let qualifier_text = self.text(qualifier).trim();
        if self.spec.base_words.contains(&qualifier_text) {
            return (Receiver::Base, Vec::new(), name);
        }
        if what != Qualifier::Path && self.spec.this_words.contains(&qualifier_text) {
            return (Receiver::This, Vec::new(), name);
        }
        let segments = self.segments(qualifier);
        if what != Qualifier::Path {
            // A receiver declared with a type: `x.Foo()`, `this.x.Foo()`.
            let variable = match segments.as_deref() {
                Some([x]) => Some(x.as_str()),
                Some([this, x]) if self.spec.this_words.contains(&this.as_str()) => {
                    Some(x.as_str())
                }
                _ => None,
            };
            let plain = matches!(segments.as_deref(), Some([_]));
            if let Some((x, ty)) = variable.and_then(|x| {
                let reach = if plain { Reach::Bare } else { Reach::This };
                let ty = self.type_of(at, x, reach).or_else(|| {
                    if plain {
                        self.flow_type(at, x)
                    } else {
                        self.attribute_type(at, x)
                    }
                });
                Some((x, ty?))
            }) {
                // A local of the class it was made of, where that decides
                // what a call runs (the language dispatches to overrides).
                if plain
                    && self.spec.scope.dispatches_to_overrides
                    && self.made_type_of(at, x).as_ref() == Some(&ty)
                {
                    self.made_at.borrow_mut().insert(at.id());
                }
                return (Receiver::Typed, ty, name);
            }
            // A value that shows its type: `new Card().Go()`, `Store::open().add()`.
            if segments.is_none() {
                if let Some(ty) = self.value_type(qualifier) {
                    self.made_at.borrow_mut().insert(at.id());
                    return (Receiver::Typed, ty, name);
                }
            }
            // What a call returned: the type its callee is declared to return.
            let role = self.roles.get(self.unwrap(qualifier).kind_id() as usize);
            let is_call = matches!(
                role.copied().flatten(),
                Some(RefRole::Call { .. } | RefRole::CallSelf { .. })
            );
            if plain || segments.is_none() || is_call {
                if let Some((on, mut callee, callee_name)) = self.returned_callee(at, qualifier) {
                    self.returned_on.borrow_mut().insert(at.id(), on);
                    callee.push(callee_name);
                    return (Receiver::Returned, callee, name);
                }
            }
        }
        match (what, segments) {
            (Qualifier::Value, Some(segments)) if segments.len() == 1 => {
                if self.spec.scope.imports_qualify_values && self.declared_local(at, &segments[0]) {
                    // A local, whatever the file imports by that name.
                    return (Receiver::Value, Vec::new(), name);
                }
                (Receiver::Value, segments, name)
            }
            (Qualifier::Value, _) | (_, None) => (Receiver::Value, Vec::new(), name),
            (Qualifier::Path, Some(segments)) => {
                if segments.len() == 1 && self.is_this_in_path(&segments[0]) {
                    (Receiver::This, Vec::new(), name)
                } else {
                    (Receiver::Path, segments, name)
                }
            }
            (Qualifier::PathOrValue, Some(segments)) => (Receiver::PathOrValue, segments, name),
        }
    }

    /// Whether a local named `name` is declared before `at`, in a block
    /// around it or a function it is in (the language's `local_names`).
    fn declared_local(&self, at: Node<'a>, name: &str) -> bool {
        let mut node = at;
        while let Some(parent) = self.up(node) {
            let mut cursor = parent.walk();
            for child in parent.named_children(&mut cursor) {
                if child.id() == node.id() {
                    break;
                }
                if self.declares(child, name) {
                    return true;
                }
            }
            node = parent;
        }
        false
    }

    fn declares(&self, node: Node<'_>, name: &str) -> bool {
        let Some((_, field)) = self
            .spec
            .scope
            .local_names
            .iter()
            .find(|(k, _)| *k == node.kind())
        else {
            return false;
        };
        let mut cursor = node.walk();
        if field.is_empty() {
            let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
            return children.into_iter().any(|c| self.declares(c, name));
        }
        let held: Vec<Node<'_>> = node.children_by_field_name(field, &mut cursor).collect();
        held.into_iter().any(|n| {
            let mut cursor = n.walk();
            let mut names = std::iter::once(n).chain(n.named_children(&mut cursor));
            names.any(|n| n.kind() == "identifier" && self.text(n).trim() == name)
        })
    }

    /// The type of `name` as seen from `at`, as a call on it sees it: the
    /// nearest binding among the children of `at`'s ancestors.
    fn type_of(&self, at: Node<'a>, name: &str, reach: Reach) -> Option<Vec<String>> {
        self.binding_type(at, name, Typing::Runs, reach)
    }

    /// The type `name` is declared with, as overloads are chosen by: `List`
    /// for `List x = new ArrayList()`.
    fn declared_type_of(&self, at: Node<'a>, name: &str) -> Option<Vec<String>> {
        self.binding_type(at, name, Typing::Declared, Reach::Bare)
    }

    /// The class of the object `name` holds as seen from `at`, where its
    /// nearest declaration makes it (`var c = new Card()`, `Card c = new
    /// Card()` not assigned again in its block, `let s = Store::open()`):
    /// a call on it runs that class's method, not an override.
    fn made_type_of(&self, at: Node<'a>, name: &str) -> Option<Vec<String>> {
        self.binding_type(at, name, Typing::Made, Reach::Bare)
    }

    fn binding_type(
        &self,
        at: Node<'a>,
        name: &str,
        typing: Typing,
        reach: Reach,
    ) -> Option<Vec<String>> {
        self.nearest_binding(at, name, reach, |child, parent| {
            self.binding(child, parent, name, 0, typing)
        })
        .flatten()
    }

    /// The value a local `name` seen from `at` was declared with, where its
    /// nearest declaration shows no type (`b := newBuilder()`, `var b =
    /// make()`; the first of `b, err := newBuilder()`).
    fn bound_value(&self, at: Node<'a>, name: &str) -> Option<Node<'a>> {
        self.nearest_binding(at, name, Reach::Bare, |child, _| {
            self.declared_value(child, name, 0)
        })
        .flatten()
    }

    /// What `of` finds first among the declarations before `at` in its
    /// ancestors, nearest first.
    fn nearest_binding<T>(
        &self,
        at: Node<'a>,
        name: &str,
        reach: Reach,
        of: impl Fn(Node<'a>, Node<'a>) -> Option<T>,
    ) -> Option<T> {
        if self.spec.bindings.is_empty() || self.spec.this_words.contains(&name) {
            return None;
        }
        if self.typing_depth.get() >= MAX_TYPING_DEPTH {
            return None;
        }
        self.typing_depth.set(self.typing_depth.get() + 1);
        let mut found = None;
        let mut node = at;
        'up: while let Some(parent) = self.up(node) {
            let mut cursor = parent.walk();
            let mut after = false;
            for child in parent.named_children(&mut cursor) {
                // A constructor's member parameters, wherever the use is
                // (in the constructor too).
                if reach == Reach::This {
                    let members = self.parameter_members(child);
                    if let Some(ty) = members.into_iter().find_map(|p| of(p, parent)) {
                        found = Some(ty);
                        break 'up;
                    }
                }
                if child.id() == node.id() {
                    // Not its own initializer (`let x = x.y();`), and
                    // nothing declared after the use but a type's members.
                    after = true;
                    continue;
                }
                if after && !self.spec.members_anywhere.contains(&child.kind()) {
                    continue;
                }
                let member = self.spec.this_members.contains(&child.kind());
                let passed_by = match reach {
                    Reach::Bare => member,
                    Reach::This => !member && !self.spec.this_members.is_empty(),
                };
                if passed_by {
                    continue;
                }
                if let Some(ty) = of(child, parent) {
                    found = Some(ty);
                    break 'up;
                }
            }
            node = parent;
        }
        self.typing_depth.set(self.typing_depth.get() - 1);
        found
    }

    /// The parameters of a constructor `node` that declare members (the
    /// table's [`ParameterMembers`]); none for anything else.
    fn parameter_members(&self, node: Node<'a>) -> Vec<Node<'a>> {
        let Some(rule) = self.spec.parameter_members else {
            return Vec::new();
        };
        let is_constructor = node.kind() == rule.kind
            && node
                .child_by_field_name("name")
                .is_some_and(|n| self.text(n) == rule.name);
        let Some(list) = node
            .child_by_field_name(rule.parameters)
            .filter(|_| is_constructor)
        else {
            return Vec::new();
        };
        let mut cursor = list.walk();
        let parameters: Vec<Node<'a>> = list.named_children(&mut cursor).collect();
        parameters
            .into_iter()
            .filter(|p| {
                let mut cursor = p.walk();
                let marked = p
                    .children(&mut cursor)
                    .any(|c| rule.marks.contains(&c.kind()) || rule.marks.contains(&self.text(c)));
                marked
            })
            .collect()
    }

    /// For a declaration `node`, a child of `block`: `None` when it does
    /// not declare `name`, else the type it gives it (`Some(None)`: none
    /// that shows). The nearest declaration decides: an untyped one hides
    /// a typed one further out.
    fn binding(
        &self,
        node: Node<'a>,
        block: Node<'a>,
        name: &str,
        depth: u8,
        typing: Typing,
    ) -> Option<Option<Vec<String>>> {
        let (_, binding) = self.spec.bindings.iter().find(|(k, _)| *k == node.kind())?;
        match *binding {
            Binding::Group if depth == 0 => {
                first_member(node, |c| self.binding(c, block, name, 1, typing))
            }
            Binding::Group => None,
            Binding::Named { name: n, ty, value } => {
                let declared = node.child_by_field_name(n)?;
                if self.text(declared).trim() != name {
                    return None;
                }
                // No assignment syntax is known here: what it was made of
                // may have been replaced since.
                if typing == Typing::Made {
                    return Some(None);
                }
                Some(match node.child_by_field_name(ty) {
                    Some(t) => self.declared_type(t),
                    None => value
                        .and_then(|v| node.child_by_field_name(v))
                        .and_then(|v| self.value_type(v)),
                })
            }
            Binding::Declarators {
                inner,
                declarator,
                narrowed_unless_assigned,
            } => {
                let (decl, target) = self.declarator(node, inner, declarator, name)?;
                let value = || declarator_value(target);
                let kept = || {
                    narrowed_unless_assigned
                        .is_some_and(|assignment| !self.assigns(block, assignment, name))
                };
                let Some(ty) = decl.child_by_field_name("type") else {
                    return Some(None);
                };
                if self.text(ty).trim() == "var" {
                    if typing == Typing::Made && !kept() {
                        return Some(None);
                    }
                    return Some(value().and_then(|v| self.value_type(v)));
                }
                let declared = self.declared_type(ty);
                let made = (typing != Typing::Declared)
                    .then(|| value().and_then(|v| self.value_type(v)))
                    .flatten()
                    .filter(|made| typing == Typing::Made || Some(made) != declared.as_ref())
                    .filter(|_| kept());
                Some(match typing {
                    Typing::Made => made,
                    _ => made.or(declared),
                })
            }
        }
    }

    /// The declarator of `name` in a declaration of several (`int a, b =
    /// 1;`), and the node that holds the declarators (and the type).
    fn declarator(
        &self,
        node: Node<'a>,
        inner: Option<&str>,
        declarator: &str,
        name: &str,
    ) -> Option<(Node<'a>, Node<'a>)> {
        let decl = match inner {
            Some(kind) => {
                let mut cursor = node.walk();
                let found = node.named_children(&mut cursor).find(|c| c.kind() == kind);
                found?
            }
            None => node,
        };
        let mut cursor = decl.walk();
        let target = decl
            .named_children(&mut cursor)
            .filter(|c| c.kind() == declarator)
            .find(|d| {
                d.child_by_field_name("name")
                    .is_some_and(|n| self.text(n).trim() == name)
            })?;
        Some((decl, target))
    }

    /// For a declaration `node` of `name`: the value it is declared with
    /// when it shows no type (`Some(None)`: declared otherwise).
    fn declared_value(&self, node: Node<'a>, name: &str, depth: u8) -> Option<Option<Node<'a>>> {
        let (_, binding) = self.spec.bindings.iter().find(|(k, _)| *k == node.kind())?;
        match *binding {
            Binding::Group if depth == 0 => first_member(node, |c| self.declared_value(c, name, 1)),
            Binding::Group => None,
            Binding::Named { name: n, ty, value } => {
                let declared = node.child_by_field_name(n)?;
                // `a, err := f()`: the first name holds the first result.
                let mut cursor = declared.walk();
                let names: Vec<&str> = if declared.named_child_count() > 0 {
                    declared
                        .named_children(&mut cursor)
                        .map(|c| self.text(c).trim())
                        .collect()
                } else {
                    vec![self.text(declared).trim()]
                };
                let position = names.iter().position(|d| *d == name)?;
                if position > 0 || node.child_by_field_name(ty).is_some() {
                    return Some(None);
                }
                Some(value.and_then(|v| node.child_by_field_name(v)))
            }
            Binding::Declarators {
                inner, declarator, ..
            } => {
                let (decl, target) = self.declarator(node, inner, declarator, name)?;
                let shown = decl
                    .child_by_field_name("type")
                    .is_some_and(|t| self.text(t).trim() != "var");
                if shown {
                    return Some(None);
                }
                Some(declarator_value(target))
            }
        }
    }

    /// The call whose result a qualifier is (`newBuilder().Build()`) or
    /// holds (`b := newBuilder(); b.Build()`), as its callee's (receiver,
    /// qualifier, name); only in languages whose functions declare the type
    /// they return (a [`RefRole::ReturnType`] in the table).
    fn returned_callee(
        &self,
        at: Node<'a>,
        qualifier: Node<'a>,
    ) -> Option<(Receiver, Vec<String>, String)> {
        if !self.spec.declares_return_types() {
            return None;
        }
        let qualifier = self.unwrap(qualifier);
        let value = if qualifier.named_child_count() == 0 {
            self.bound_value(at, self.text(qualifier).trim())?
        } else {
            qualifier
        };
        let value = self.unwrap(value);
        let callee = match self
            .roles
            .get(value.kind_id() as usize)
            .copied()
            .flatten()?
        {
            RefRole::Call { function, .. } => self.split_name(value.child_by_field_name(function)?),
            RefRole::CallSelf { object, name, .. } => match value.child_by_field_name(object) {
                Some(_) => self.split_name(value),
                None => Some((
                    Receiver::Bare,
                    Vec::new(),
                    self.text(value.child_by_field_name(name)?)
                        .trim()
                        .to_owned(),
                )),
            },
            _ => None,
        }?;
        // One call deep: a chain's inner results are values of unknown type.
        (callee.0 != Receiver::Returned).then_some(callee)
    }

    /// For a reference made from a split of `callee` (the node given to
    /// [`RefWalker::split_name`]): what finding its receiver kept. For
    /// [`Receiver::Returned`], what the call that returned was made on; for
    /// [`Receiver::Typed`], whether the type is the class the value was
    /// made of. The references the flow table makes (`flow.rs`) are not
    /// split here and keep neither.
    fn keep_split(&self, callee: Node<'a>, reference: &mut Reference) {
        let callee = self.unwrap(callee).id();
        match reference.receiver {
            Receiver::Returned => {
                let on = self.returned_on.borrow().get(&callee).copied();
                reference.callee_receiver = on.unwrap_or(Receiver::Bare);
            }
            Receiver::Typed => reference.made = self.made_at.borrow().contains(&callee),
            _ => {}
        }
    }

    /// Whether some `kind` node under `block` assigns to `name`.
    fn assigns(&self, block: Node<'a>, (kind, target): (&str, &str), name: &str) -> bool {
        let mut cursor = block.walk();
        loop {
            let node = cursor.node();
            if node.kind() == kind
                && node
                    .child_by_field_name(target)
                    .is_some_and(|t| self.text(t).trim() == name)
            {
                return true;
            }
            if cursor.goto_first_child() {
                continue;
            }
            while cursor.node().id() != block.id() {
                if cursor.goto_next_sibling() {
                    break;
                }
                cursor.goto_parent();
            }
            if cursor.node().id() == block.id() {
                return false;
            }
        }
    }

    /// A declared type as path segments, wrappers peeled (`&mut Foo<T>` → `Foo`).
    fn declared_type(&self, ty: Node<'_>) -> Option<Vec<String>> {
        let mut ty = ty;
        loop {
            if let Some(segments) = self.segments(ty) {
                return Some(segments);
            }
            let mut cursor = ty.walk();
            let inner = ty
                .named_children(&mut cursor)
                .find(|c| c.kind() != "lifetime" && c.kind() != "mutable_specifier")?;
            ty = inner;
        }
    }

    /// The type a value shows: `new T(...)`, `T::new(...)`, `T { .. }`.
    pub(crate) fn value_type(&self, value: Node<'a>) -> Option<Vec<String>> {
        let value = self.unwrap(value);
        if let Some(created) = self.created_type(value) {
            return Some(created);
        }
        let ty = self.visible_type(value);
        if !ty.is_empty() && !self.spec.literal_types.iter().any(|(_, t)| *t == ty) {
            return Some(vec![ty]);
        }
        let role = self.roles.get(value.kind_id() as usize).copied().flatten();
        // `A()` where calling a type constructs it: a capitalized name.
        if let (Some(_), Some(RefRole::Call { function, .. })) = (self.spec.calls_construct, role) {
            let callee = value.child_by_field_name(function)?;
            let segments = self.segments(callee)?;
            let last = segments.last()?;
            // A lower-case class is known where the file declares it.
            let declared = segments.len() == 1 && self.declares_class(callee, last);
            return (last.starts_with(|c: char| c.is_uppercase()) || declared).then_some(segments);
        }
        // `T::new()`: a path call whose qualifier names a type.
        if !self.spec.path_calls_make_their_type {
            return None;
        }
        if let Some(RefRole::Call { function, .. }) = role {
            let callee = self.unwrap(value.child_by_field_name(function)?);
            let (q, _, _) = self.path_form(callee.kind())?;
            let qualifier = self.segments(callee.child_by_field_name(q)?)?;
            let last = qualifier.last()?;
            if last.starts_with(|c: char| c.is_uppercase())
                && !self.spec.this_words.contains(&last.as_str())
            {
                return Some(qualifier);
            }
        }
        None
    }

    /// `Self::x` means the current type; `self::x` (a module word) does not.
    fn is_this_in_path(&self, segment: &str) -> bool {
        self.spec.this_words.contains(&segment) && self.spec.scope.current_word != Some(segment)
    }

    /// A name or path as segments, generic arguments dropped; `None` for
    /// anything else (a call, an index, a literal).
    pub(crate) fn segments(&self, node: Node<'_>) -> Option<Vec<String>> {
        let node = self.unwrap(node);
        if node.named_child_count() == 0 {
            let text = self.text(node).trim();
            let plain = !text.is_empty()
                && text
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '@');
            return plain.then(|| vec![text.trim_start_matches('@').to_owned()]);
        }
        let (qualifier_field, name_field, what) = self.path_form(node.kind())?;
        if what == Qualifier::Value {
            return None;
        }
        if qualifier_field.is_empty() && name_field.is_empty() {
            // A path without fields (Java's `Outer.Inner`): its named
            // children, in order.
            let mut cursor = node.walk();
            let parts: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
            let mut segments = Vec::new();
            for part in parts {
                segments.extend(self.segments(part)?);
            }
            return Some(segments);
        }
        if qualifier_field.is_empty() {
            return None;
        }
        let mut segments = match node.child_by_field_name(qualifier_field) {
            Some(q) => self.segments(q)?,
            None => Vec::new(),
        };
        segments.extend(self.segments(self.field_or_child(node, name_field)?)?);
        Some(segments)
    }

    fn using(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        let mut global = false;
        let mut is_static = false;
        for child in node.children(&mut cursor) {
            match self.text(child) {
                "global" if !child.is_named() => global = true,
                "static" if !child.is_named() => is_static = true,
                _ => {}
            }
        }
        let alias_node = node.child_by_field_name("name");
        let mut cursor = node.walk();
        let target = node
            .named_children(&mut cursor)
            .filter(|c| Some(c.id()) != alias_node.map(|a| a.id()))
            .find_map(|c| self.segments(c));
        let Some(path) = target else { return };
        let alias = alias_node.map(|a| self.text(a).to_owned());
        let kind = if alias.is_some() {
            ImportKind::Name
        } else if is_static {
            ImportKind::UsingStatic
        } else if global {
            ImportKind::GlobalUsing
        } else {
            ImportKind::Using
        };
        self.imports.push(Import {
            kind,
            path,
            alias,
            line: line(node),
            owner: None,
        });
    }

    /// [`RefRole::ImportPath`]: the path, and whether it ends in `*` or
    /// imports static members.
    fn import_path(&mut self, node: Node<'_>, wildcard: &str) {
        let mut cursor = node.walk();
        let mut is_static = false;
        let mut all = false;
        let mut path = None;
        for child in node.children(&mut cursor) {
            if child.kind() == wildcard {
                all = true;
            } else if !child.is_named() && self.text(child) == "static" {
                is_static = true;
            } else if child.is_named() && path.is_none() {
                path = self.segments(child);
            }
        }
        let Some(path) = path else { return };
        let kind = match (all, is_static) {
            (true, true) => ImportKind::UsingStatic,
            (true, false) => ImportKind::Using,
            (false, _) => ImportKind::Name,
        };
        self.imports.push(Import {
            kind,
            path,
            alias: None,
            line: line(node),
            owner: None,
        });
    }

    fn package_import(&mut self, node: Node<'_>, path: &str, name: &str) {
        let Some(spec) = node.child_by_field_name(path) else {
            return;
        };
        let spec = self
            .text(spec)
            .trim()
            .trim_matches(|c| c == '"' || c == '`');
        let Some(last) = spec.rsplit('/').next().filter(|l| !l.is_empty()) else {
            return;
        };
        let bound = node.child_by_field_name(name).map(|n| self.text(n).trim());
        let (kind, alias) = match bound {
            Some("_") => return,
            Some(".") => (ImportKind::Glob, None),
            Some(alias) => (ImportKind::Name, Some(alias.to_owned())),
            None => (ImportKind::Name, Some(last.to_owned())),
        };
        self.imports.push(Import {
            kind,
            path: vec![spec.to_owned()],
            alias,
            line: line(node),
            owner: None,
        });
    }

    /// Flattens a Rust use tree into one import per leaf.
    fn use_tree(&mut self, tree: Node<'_>, prefix: &[String], line: u32) {
        let joined = |tail: Vec<String>| {
            let mut path = prefix.to_vec();
            path.extend(tail);
            path
        };
        match tree.kind() {
            "use_as_clause" => {
                let (Some(path), Some(alias)) = (
                    tree.child_by_field_name("path")
                        .and_then(|p| self.segments(p)),
                    tree.child_by_field_name("alias"),
                ) else {
                    return;
                };
                self.imports.push(Import {
                    kind: ImportKind::Name,
                    path: joined(path),
                    alias: Some(self.text(alias).to_owned()),
                    line,
                    owner: None,
                });
            }
            "use_wildcard" => {
                let mut cursor = tree.walk();
                let inner = tree
                    .named_children(&mut cursor)
                    .find_map(|c| self.segments(c));
                self.imports.push(Import {
                    kind: ImportKind::Glob,
                    path: joined(inner.unwrap_or_default()),
                    alias: None,
                    line,
                    owner: None,
                });
            }
            "scoped_use_list" => {
                let path = tree
                    .child_by_field_name("path")
                    .and_then(|p| self.segments(p))
                    .unwrap_or_default();
                if let Some(list) = tree.child_by_field_name("list") {
                    let prefix = joined(path);
                    self.use_tree(list, &prefix, line);
                }
            }
            "use_list" => {
                let mut cursor = tree.walk();
                let items: Vec<Node<'_>> = tree.named_children(&mut cursor).collect();
                for item in items {
                    // `use a::{self}` imports `a` itself.
                    if item.kind() == "self" {
                        if !prefix.is_empty() {
                            self.imports.push(Import {
                                kind: ImportKind::Name,
                                path: prefix.to_vec(),
                                alias: None,
                                line,
                                owner: None,
                            });
                        }
                        continue;
                    }
                    self.use_tree(item, prefix, line);
                }
            }
            _ => {
                if let Some(path) = self.segments(tree) {
                    self.imports.push(Import {
                        kind: ImportKind::Name,
                        path: joined(path),
                        alias: None,
                        line,
                        owner: None,
                    });
                }
            }
        }
    }

    /// Calls inside a macro's token tree, which the grammar leaves
    /// unparsed: a name directly followed by a parenthesized tree, with the
    /// `a::b::` path or the `.` before it.
    fn scan_tokens(&mut self, tree: Node<'_>) {
        let mut stack = vec![tree];
        while let Some(tree) = stack.pop() {
            let mut cursor = tree.walk();
            let tokens: Vec<Node<'_>> = tree.children(&mut cursor).collect();
            for (i, token) in tokens.iter().enumerate() {
                if token.kind() == "token_tree" {
                    stack.push(*token);
                    continue;
                }
                if token.kind() != "identifier" {
                    continue;
                }
                let next = tokens.get(i + 1);
                let (kind, is_call) = match next.map(|n| (n.kind(), self.text(*n))) {
                    Some(("token_tree", t)) if t.starts_with('(') => (RefKind::Call, true),
                    Some(("!", _)) => (RefKind::Macro, true),
                    _ => (RefKind::Call, false),
                };
                if !is_call {
                    continue;
                }
                let name = self.text(*token).to_owned();
                let (receiver, qualifier) = self.tokens_before(&tokens[..i]);
                let mut reference = self.reference(kind, receiver, qualifier, name, *token);
                if kind == RefKind::Call {
                    reference.args = next.map(|n| count_token_args(*n, self.text));
                }
                self.push(*token, reference);
            }
        }
    }

    /// The receiver of a call in a token tree, from the tokens before its name.
    fn tokens_before(&self, before: &[Node<'_>]) -> (Receiver, Vec<String>) {
        let Some(last) = before.last() else {
            return (Receiver::Bare, Vec::new());
        };
        match self.text(*last) {
            "." => {
                let value = before.len().checked_sub(2).map(|i| self.text(before[i]));
                match value {
                    Some(v) if self.spec.this_words.contains(&v) => (Receiver::This, Vec::new()),
                    _ => (Receiver::Value, Vec::new()),
                }
            }
            "::" => {
                let mut segments = Vec::new();
                let mut i = before.len();
                while i >= 2 && self.text(before[i - 1]) == "::" {
                    let segment = before[i - 2];
                    if segment.named_child_count() > 0 || segment.kind() == "token_tree" {
                        break;
                    }
                    segments.push(self.text(segment).to_owned());
                    i -= 2;
                }
                segments.reverse();
                if segments.is_empty() {
                    (Receiver::Value, Vec::new())
                } else if segments.len() == 1 && self.is_this_in_path(&segments[0]) {
                    (Receiver::This, Vec::new())
                } else {
                    (Receiver::Path, segments)
                }
            }
            _ => (Receiver::Bare, Vec::new()),
        }
    }
}

/// Arguments in a parenthesized token tree: top-level commas plus one.
fn count_token_args(tree: Node<'_>, text: &str) -> u32 {
    let mut cursor = tree.walk();
    let inner: Vec<&str> = tree
        .children(&mut cursor)
        .map(|c| &text[c.byte_range()])
        .collect();
    let body = &inner[1..inner.len().saturating_sub(1).max(1)];
    if body.is_empty() {
        0
    } else {
        body.iter().filter(|t| **t == ",").count() as u32 + u32::from(body.last() != Some(&","))
    }
}

/// What `find` finds first among the members of a group of bindings (a
/// parameter list).
fn first_member<'t, T>(group: Node<'t>, find: impl FnMut(Node<'t>) -> Option<T>) -> Option<T> {
    let mut cursor = group.walk();
    let members: Vec<Node<'t>> = group.named_children(&mut cursor).collect();
    members.into_iter().find_map(find)
}

/// The value a declarator gives its name (`b = 1`), if any.
fn declarator_value(target: Node<'_>) -> Option<Node<'_>> {
    let mut cursor = target.walk();
    let value = target.named_children(&mut cursor).last();
    value.filter(|v| Some(v.id()) != target.child_by_field_name("name").map(|n| n.id()))
}

fn split_last(mut segments: Vec<String>) -> (Vec<String>, String) {
    let name = segments.pop().unwrap_or_default();
    (segments, name)
}

/// What an argument passes: C# wraps each argument (`name: value`), the
/// value its last named child.
fn argument_value(arg: Node<'_>) -> Node<'_> {
    if arg.kind() == "argument" {
        arg.named_child(arg.named_child_count().saturating_sub(1))
            .unwrap_or(arg)
    } else {
        arg
    }
}

fn path_receiver(qualifier: &[String]) -> Receiver {
    if qualifier.is_empty() {
        Receiver::Bare
    } else {
        Receiver::Path
    }
}

/// Assigns each import to the innermost declaration whose lines hold it.
pub(crate) fn assign_import_owners(imports: &mut [Import], lines: &[(u32, u32)]) {
    for import in imports {
        import.owner = lines
            .iter()
            .rposition(|(start, end)| *start <= import.line && import.line <= *end)
            .map(|i| i as u32);
    }
}

/// Assigns each reference to the innermost declaration around it, given the
/// declarations' byte ranges in pre-order.
/// Gives each reference its owner: of `ranges` (sorted by start, each with
/// its declaration's index), the innermost that holds it.
pub(crate) fn assign_owners(found: Vec<Found>, ranges: &[(Range<usize>, u32)]) -> Vec<Reference> {
    let mut refs = Vec::with_capacity(found.len());
    for Found {
        at,
        around,
        mut reference,
    } in found
    {
        let before = ranges.partition_point(|(r, _)| r.start <= at);
        reference.owner = ranges[..before]
            .iter()
            .rev()
            .find(|(r, _)| r.contains(&at) && !(around && r.start == at))
            .map(|(_, i)| *i);
        refs.push(reference);
    }
    refs
}
