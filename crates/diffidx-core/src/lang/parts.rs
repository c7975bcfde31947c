//! Which parts of a declaration a change touched: the change types of a
//! record (`log` and `show` list them, the PR comment says "signature
//! changed").
//!
//! The parts are a function of the two file versions a record names, so
//! they are computed when asked, not stored: notes stay byte-identical and
//! the indexing hot path does no extra work.
//!
//! Each language's table ([`LanguageSpec::parts`]) maps the children of a
//! declaration to a [`Part`], by `kind/field` (one declaration kind's
//! field), by field name, or else by kind; below them,
//! nodes are looked up by kind (Java's annotations inside `modifiers`),
//! never inside a body. Unnamed word tokens (`async`, `static`, `export`)
//! are modifiers; other children are [`Part::Other`]. The children of a
//! wrapper (Python's decorators) and the leading siblings of a declaration
//! (Rust's attributes) are looked up the same way. For one declarator of a
//! declaration (`int a = 1, b = 2;`), the declaration's other children
//! count and the other declarators do not. Each part is compared by a hash
//! of its tokens without comments and docstrings, as a record's own hash is.

use serde::{Deserialize, Serialize};
use tree_sitter::Node;

use super::{end_line, KindTable, LanguageSpec, Name, Role, Walker};
use crate::symbol::Symbol;

/// A part of a declaration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// The own name.
    Name,
    TypeParameters,
    Parameters,
    /// A function's return type, a field's or variable's type.
    Type,
    /// Declared exceptions (Java's `throws`).
    Exceptions,
    /// A type's base classes and interfaces.
    Bases,
    Modifiers,
    /// Annotations, attributes and decorators.
    Annotations,
    /// The body, a field's or constant's value.
    Body,
    /// Punctuation and whatever the table does not name.
    Other,
}

impl Part {
    pub const ALL: [Part; 10] = [
        Part::Name,
        Part::TypeParameters,
        Part::Parameters,
        Part::Type,
        Part::Exceptions,
        Part::Bases,
        Part::Modifiers,
        Part::Annotations,
        Part::Body,
        Part::Other,
    ];

    /// Parts of the signature: a change to one is riskier for callers.
    pub fn is_signature(self) -> bool {
        matches!(
            self,
            Part::TypeParameters | Part::Parameters | Part::Type | Part::Exceptions | Part::Bases
        )
    }
}

/// The kind of one change to a symbol, as `log` and `show` list it: the
/// parts of its declaration that changed, and where it went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeType {
    /// Another own name.
    Rename,
    /// Another file.
    Move,
    /// Another container: class, namespace, module or package.
    Container,
    /// Any of the next five.
    Signature,
    Parameters,
    /// A function's return type.
    ReturnType,
    /// A field's, variable's or alias's type.
    Type,
    TypeParameters,
    Exceptions,
    Bases,
    Modifiers,
    /// Annotations, attributes, decorators.
    Annotations,
    Body,
}

impl ChangeType {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeType::Rename => "rename",
            ChangeType::Move => "move",
            ChangeType::Container => "container",
            ChangeType::Signature => "signature",
            ChangeType::Parameters => "parameters",
            ChangeType::ReturnType => "return_type",
            ChangeType::Type => "type",
            ChangeType::TypeParameters => "type_parameters",
            ChangeType::Exceptions => "exceptions",
            ChangeType::Bases => "bases",
            ChangeType::Modifiers => "modifiers",
            ChangeType::Annotations => "annotations",
            ChangeType::Body => "body",
        }
    }

    /// The change types of changed `parts` of a symbol of `kind`, sorted
    /// (the name is left out: a rename is told by the qualnames).
    pub fn of_parts(parts: &[Part], kind: crate::symbol::SymbolKind) -> Vec<ChangeType> {
        let callable = kind.is_callable();
        let mut types: Vec<ChangeType> = parts
            .iter()
            .filter_map(|part| match part {
                Part::Name => None,
                Part::TypeParameters => Some(ChangeType::TypeParameters),
                Part::Parameters => Some(ChangeType::Parameters),
                Part::Type if callable => Some(ChangeType::ReturnType),
                Part::Type => Some(ChangeType::Type),
                Part::Exceptions => Some(ChangeType::Exceptions),
                Part::Bases => Some(ChangeType::Bases),
                Part::Modifiers => Some(ChangeType::Modifiers),
                Part::Annotations => Some(ChangeType::Annotations),
                Part::Body | Part::Other => Some(ChangeType::Body),
            })
            .collect();
        if parts.iter().any(|p| p.is_signature()) {
            types.push(ChangeType::Signature);
        }
        types.sort();
        types.dedup();
        types
    }
}

impl std::fmt::Display for ChangeType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The hash of each part of one declaration (a part it lacks hashes as an
/// empty one, so adding `throws X` changes `exceptions`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclarationParts {
    hashes: [[u8; 32]; Part::ALL.len()],
}

impl DeclarationParts {
    /// The parts that differ between `self` (the old version) and `new`, in
    /// [`Part::ALL`] order.
    pub fn changed(&self, new: &DeclarationParts) -> Vec<Part> {
        Part::ALL
            .into_iter()
            .zip(self.hashes.iter().zip(&new.hashes))
            .filter(|(_, (a, b))| a != b)
            .map(|(part, _)| part)
            .collect()
    }
}

/// Hashes tokens into the part they belong to.
struct Hashers {
    parts: Vec<blake3::Hasher>,
}

impl Hashers {
    fn add(&mut self, part: Part, token: &str) {
        let hasher = &mut self.parts[part as usize];
        hasher.update(token.as_bytes());
        hasher.update(&[0]);
    }

    fn finish(self) -> DeclarationParts {
        let mut hashes = [[0; 32]; Part::ALL.len()];
        for (hash, hasher) in hashes.iter_mut().zip(self.parts) {
            *hash = *hasher.finalize().as_bytes();
        }
        DeclarationParts { hashes }
    }
}

/// Reads the parts of declarations in one parsed file.
/// The part the table gives `child` of a declaration of kind `parent`:
/// by a `kind/field` entry (one declaration kind's field), else by its
/// field, else (a named node) by its kind.
pub(super) fn child_part(
    spec: &LanguageSpec,
    parent: &str,
    field: Option<&str>,
    child: Node<'_>,
) -> Part {
    let lookup = |key: &str| spec.parts.iter().find(|(k, _)| *k == key).map(|(_, p)| *p);
    let by_kind_field = field.and_then(|f| {
        spec.parts.iter().find_map(|(key, part)| {
            let (kind, field) = key.split_once('/')?;
            (kind == parent && field == f).then_some(*part)
        })
    });
    by_kind_field
        .or_else(|| field.and_then(lookup))
        .or_else(|| child.is_named().then(|| lookup(child.kind())).flatten())
        .unwrap_or(Part::Other)
}

pub(super) struct PartsReader<'a> {
    pub spec: &'static LanguageSpec,
    pub table: &'a KindTable,
    pub text: &'a str,
}

impl PartsReader<'_> {
    /// The parts of `symbol`'s declaration under `root`, if its node is found.
    pub fn parts(&self, root: Node<'_>, symbol: &Symbol) -> Option<DeclarationParts> {
        let (node, rule) = self.find(root, symbol)?;
        let mut hashers = Hashers {
            parts: Part::ALL.iter().map(|_| blake3::Hasher::new()).collect(),
        };
        let docstring = self.table.docstring(node);
        match rule {
            Found::Declaration => {
                self.children(node, None, docstring, &mut hashers);
                let wrapper = node
                    .parent()
                    .filter(|p| matches!(self.role(*p), Some(Role::Wrapper { .. })));
                if let Some(wrapper) = wrapper {
                    self.children(wrapper, Some(node), None, &mut hashers);
                }
                let mut prev = wrapper.unwrap_or(node).prev_named_sibling();
                while let Some(p) = prev.filter(|p| {
                    self.table.is_leading(p.kind_id()) || self.table.is_comment(p.kind_id())
                }) {
                    let part = child_part(self.spec, "", None, p);
                    self.classified(p, part, None, &mut hashers);
                    prev = p.prev_named_sibling();
                }
            }
            Found::Declarator(declaration) => {
                self.children(node, None, None, &mut hashers);
                // Up to the declaration: what stands beside the declarator
                // (modifiers, the type), less the other declarators.
                let mut inner = node;
                while let Some(up) = inner.parent() {
                    let skip =
                        |child: Node<'_>| child.id() == inner.id() || child.kind() == node.kind();
                    self.children_but(up, skip, None, &mut hashers);
                    if up.id() == declaration.id() {
                        break;
                    }
                    inner = up;
                }
            }
        }
        Some(hashers.finish())
    }

    fn role(&self, node: Node<'_>) -> Option<Role> {
        self.table.role(node.kind_id())
    }

    /// The children of `node` but `skip`, each into its part.
    fn children(
        &self,
        node: Node<'_>,
        skip: Option<Node<'_>>,
        docstring: Option<Node<'_>>,
        hashers: &mut Hashers,
    ) {
        let skip = |child: Node<'_>| skip.is_some_and(|s| s.id() == child.id());
        self.children_but(node, skip, docstring, hashers);
    }

    /// The children of `node` that `skip` does not take, each into its part.
    fn children_but(
        &self,
        node: Node<'_>,
        skip: impl Fn(Node<'_>) -> bool,
        docstring: Option<Node<'_>>,
        hashers: &mut Hashers,
    ) {
        let mut cursor = node.walk();
        if !cursor.goto_first_child() {
            return;
        }
        loop {
            let child = cursor.node();
            if !skip(child) {
                let part = child_part(self.spec, node.kind(), cursor.field_name(), child);
                self.classified(child, part, docstring, hashers);
            }
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }

    /// `node`'s tokens hashed into `part`; nested nodes may name other
    /// parts.
    fn classified(
        &self,
        node: Node<'_>,
        part: Part,
        docstring: Option<Node<'_>>,
        hashers: &mut Hashers,
    ) {
        let lookup = |key: &str| {
            self.spec
                .parts
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, p)| *p)
        };
        // An explicit stack: a body may nest arbitrarily deep.
        let mut stack = vec![(node, part)];
        while let Some((node, part)) = stack.pop() {
            if self.table.is_comment(node.kind_id())
                || docstring.is_some_and(|d| d.id() == node.id())
            {
                continue;
            }
            if node.child_count() == 0 {
                let text = &self.text[node.byte_range()];
                let part = match part {
                    Part::Other if !node.is_named() && is_word(text) => Part::Modifiers,
                    part => part,
                };
                if !text.trim().is_empty() {
                    hashers.add(part, text.trim());
                }
                continue;
            }
            let mut cursor = node.walk();
            let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
            for child in children.into_iter().rev() {
                // Only modifiers hold other parts (Java's annotations): a
                // parameter's `final` is a parameter change, a body is one.
                let nested = match part {
                    Part::Modifiers => child.is_named().then(|| lookup(child.kind())).flatten(),
                    _ => None,
                };
                stack.push((child, nested.unwrap_or(part)));
            }
        }
    }

    /// The node of `symbol`'s declaration: the first, in tree order, that
    /// the walker would take for a symbol of its own name and last line.
    fn find<'t>(&self, root: Node<'t>, symbol: &Symbol) -> Option<(Node<'t>, Found<'t>)> {
        let walker = Walker {
            spec: self.spec,
            table: self.table,
            text: self.text,
            raw: Vec::new(),
            too_deep: false,
            name_too_long: false,
        };
        let first_row = symbol.start_line.saturating_sub(1) as usize;
        let last_row = symbol.end_line.saturating_sub(1) as usize;
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            if node.end_position().row < first_row || node.start_position().row > last_row {
                continue;
            }
            let ends = end_line(node) == symbol.end_line && node.start_position().row >= first_row;
            if ends {
                let named = |rule: Name| walker.name(node, rule).as_deref() == Some(&symbol.name);
                match self.role(node) {
                    Some(Role::Symbol(rule)) | Some(Role::FileScoped(rule)) if named(rule.name) => {
                        return Some((node, Found::Declaration));
                    }
                    // Go's `var a, b = 1, 2`: each name is a symbol of the whole.
                    Some(Role::Names { field, .. }) => {
                        let mut cursor = node.walk();
                        let mut names = node.children_by_field_name(field, &mut cursor);
                        if names.any(|n| self.text[n.byte_range()] == symbol.name) {
                            return Some((node, Found::Declaration));
                        }
                    }
                    _ => {}
                }
                if let Some(declaration) = self.declaration_of(node) {
                    if named(Name::Field("name")) {
                        return Some((node, Found::Declarator(declaration)));
                    }
                }
            }
            let mut cursor = node.walk();
            let children: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
            stack.extend(children.into_iter().rev());
        }
        None
    }

    /// When `node` is a declarator of a [`Role::Declarators`] declaration
    /// (directly, in its list, or inside a wrapper's): that declaration.
    fn declaration_of<'t>(&self, node: Node<'t>) -> Option<Node<'t>> {
        let mut up = node.parent();
        for _ in 0..2 {
            let n = up?;
            if let Some(Role::Declarators(rule)) = self.role(n) {
                return (rule.declarator == node.kind()).then_some(n);
            }
            up = n.parent();
        }
        None
    }
}

/// Where a symbol's declaration was found.
enum Found<'t> {
    /// The node is the declaration.
    Declaration,
    /// The node is one declarator of this declaration.
    Declarator(Node<'t>),
}

fn is_word(text: &str) -> bool {
    !text.is_empty() && text.chars().all(|c| c.is_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::Part::{self, *};
    use crate::lang::{Extractor, Language};

    /// The parts of the symbol named `qualname` (any signature) that differ
    /// from `old` to `new`, both files of `path`'s language.
    fn changed(path: &str, old: &str, new: &str, qualname: &str) -> Vec<Part> {
        let language = Language::from_path(path).expect("a source path");
        let mut extractor = Extractor::new().expect("grammars load");
        let mut parts = |source: &str| {
            let extracted = extractor.extract_incremental(language, source, None);
            let symbol = extracted
                .symbols
                .symbols
                .iter()
                .find(|s| s.qualname == qualname)
                .unwrap_or_else(|| panic!("{qualname} in {source}"))
                .clone();
            let state = extracted.state.expect("a parse state");
            extractor
                .declaration_parts(language, &state, source, &symbol)
                .unwrap_or_else(|| panic!("the declaration of {qualname} is found"))
        };
        let (old, new) = (parts(old), parts(new));
        old.changed(&new)
    }

    #[test]
    fn java_parts_are_told_apart() {
        let base = "package p;\nclass A {\n  /** Doc. */\n  @Deprecated\n  public int f(int x) throws E {\n    return x; // one\n  }\n}\n";
        let cases: &[(&str, &[Part])] = &[
            // Comments and the doc comment are no part.
            ("package p;\nclass A {\n  /** Other. */\n  @Deprecated\n  public int f(int x) throws E {\n    return x; // two\n  }\n}\n", &[]),
            ("package p;\nclass A {\n  /** Doc. */\n  @Deprecated\n  public int f(int x) throws E {\n    return x + 1;\n  }\n}\n", &[Body]),
            ("package p;\nclass A {\n  /** Doc. */\n  @Deprecated\n  public int f(long x) throws E {\n    return x;\n  }\n}\n", &[Parameters]),
            ("package p;\nclass A {\n  /** Doc. */\n  @Deprecated\n  public long f(int x) throws E {\n    return x;\n  }\n}\n", &[Type]),
            ("package p;\nclass A {\n  /** Doc. */\n  @Deprecated\n  public int f(int x) {\n    return x;\n  }\n}\n", &[Exceptions]),
            ("package p;\nclass A {\n  /** Doc. */\n  public int f(int x) throws E {\n    return x;\n  }\n}\n", &[Annotations]),
            ("package p;\nclass A {\n  /** Doc. */\n  @Deprecated\n  protected final int f(int x) throws E {\n    return x;\n  }\n}\n", &[Modifiers]),
            ("package p;\nclass A {\n  /** Doc. */\n  @Deprecated\n  public int f(final int x) throws E {\n    return x;\n  }\n}\n", &[Parameters]),
            ("package p;\nclass A {\n  /** Doc. */\n  @Deprecated\n  public <T> int f(int x) throws E {\n    return x;\n  }\n}\n", &[TypeParameters]),
        ];
        for (new, want) in cases {
            assert_eq!(changed("A.java", base, new, "p.A.f"), *want, "{new}");
        }
        // A class: its bases, and a member's change is a body change.
        let old = "class A extends B {\n  void f() {}\n}\n";
        let new = "class A extends C {\n  void f() { g(); }\n}\n";
        assert_eq!(changed("A.java", old, new, "A"), [Bases, Body]);
    }

    #[test]
    fn a_declarator_has_its_declarations_parts_not_its_neighbours() {
        let old = "class A {\n  @X private int a = 1, b = 2;\n}\n";
        let new = "class A {\n  @X private int a = 1, b = 3;\n}\n";
        assert_eq!(changed("A.java", old, new, "A.a"), []);
        assert_eq!(changed("A.java", old, new, "A.b"), [Body]);
        let new = "class A {\n  private long a = 1, b = 2;\n}\n";
        assert_eq!(changed("A.java", old, new, "A.a"), [Type, Annotations]);
    }

    #[test]
    fn python_decorators_docstrings_and_signatures() {
        let base = "class C:\n    @property\n    def f(self, x) -> int:\n        \"\"\"Doc.\"\"\"\n        return x\n";
        let cases: &[(&str, &[Part])] = &[
            ("class C:\n    @property\n    def f(self, x) -> int:\n        \"\"\"Other doc.\"\"\"\n        return x\n", &[]),
            ("class C:\n    @cached\n    def f(self, x) -> int:\n        \"\"\"Doc.\"\"\"\n        return x\n", &[Annotations]),
            ("class C:\n    def f(self, x) -> int:\n        \"\"\"Doc.\"\"\"\n        return x\n", &[Annotations]),
            ("class C:\n    @property\n    def f(self, x=1) -> int:\n        \"\"\"Doc.\"\"\"\n        return x\n", &[Parameters]),
            ("class C:\n    @property\n    def f(self, x) -> str:\n        \"\"\"Doc.\"\"\"\n        return x\n", &[Type]),
            ("class C:\n    @property\n    async def f(self, x) -> int:\n        \"\"\"Doc.\"\"\"\n        return x\n", &[Modifiers]),
            ("class C:\n    @property\n    def f(self, x) -> int:\n        \"\"\"Doc.\"\"\"\n        return -x\n", &[Body]),
        ];
        for (new, want) in cases {
            assert_eq!(changed("c.py", base, new, "C.f"), *want, "{new}");
        }
    }

    #[test]
    fn rust_attributes_and_visibility() {
        let base = "/// Doc.\n#[inline]\nfn f<T>(x: T) -> T where T: Copy { x }\n";
        let cases: &[(&str, &[Part])] = &[
            (
                "/// Other.\n#[inline]\nfn f<T>(x: T) -> T where T: Copy { x }\n",
                &[],
            ),
            (
                "/// Doc.\n#[inline(always)]\nfn f<T>(x: T) -> T where T: Copy { x }\n",
                &[Annotations],
            ),
            (
                "/// Doc.\n#[inline]\npub fn f<T>(x: T) -> T where T: Copy { x }\n",
                &[Modifiers],
            ),
            (
                "/// Doc.\n#[inline]\nfn f<T>(x: T) -> T where T: Clone { x }\n",
                &[TypeParameters],
            ),
            (
                "/// Doc.\n#[inline]\nfn f<T>(x: T) -> Option<T> where T: Copy { Some(x) }\n",
                &[Type, Body],
            ),
        ];
        for (new, want) in cases {
            assert_eq!(changed("a.rs", base, new, "f"), *want, "{new}");
        }
    }

    #[test]
    fn go_typescript_and_csharp_signatures() {
        assert_eq!(
            changed(
                "a.go",
                "package a\nfunc (s *S) F(x int) int { return x }\n",
                "package a\nfunc (s *S) F(x int) (int, error) { return x, nil }\n",
                "a.S.F",
            ),
            [Type, Body]
        );
        // A struct's fields are its body; a variable's type is its type.
        assert_eq!(
            changed(
                "a.go",
                "package a\ntype S struct{ a int }\nvar v int = 1\n",
                "package a\ntype S struct{ a, b int }\nvar v int = 1\n",
                "a.S",
            ),
            [Body]
        );
        assert_eq!(
            changed(
                "a.go",
                "package a\nvar v int = 1\n",
                "package a\nvar v int64 = 1\n",
                "a.v",
            ),
            [Type]
        );
        assert_eq!(
            changed(
                "a.ts",
                "class A {\n  @dec() public m(x: number): number { return x; }\n}\n",
                "class A {\n  @dec() private m(x: number): string { return x; }\n}\n",
                "A.m",
            ),
            [Type, Modifiers]
        );
        assert_eq!(
            changed(
                "A.cs",
                "class A {\n  [Obsolete] public int M(int x) => x;\n}\n",
                "class A {\n  public static int M(int x) => x;\n}\n",
                "A.M",
            ),
            [Modifiers, Annotations]
        );
    }
}
