//! TypeScript (`.ts .mts .cts`, and `.tsx` with its own grammar) and
//! JavaScript (`.js .mjs .cjs .jsx`): DESIGN.md §2.
//!
//! The three share their roles, but for what JavaScript lacks (interfaces,
//! enums, type aliases, namespaces, signatures) and the name of a class
//! field. An `export` wraps the declaration it exports; an anonymous
//! `export default` is named `default`. A top-level or namespace-level
//! `const`/`let`/`var` declarator is a function when its value is an arrow
//! function or a function expression, a variable otherwise.

use super::parts::Part;
use super::refs::{Binding, GraphSpec, Modules, ParameterMembers, Qualifier, RefRole, ScopeRules};
use super::values::FlowSpec;
use super::{DeclaratorRule, KindBy, LanguageSpec, Name, Role, Sig, SymbolRule};
use crate::symbol::SymbolKind as K;

const fn container(kind: K, name: Name) -> Role {
    Role::Symbol(SymbolRule {
        body: Some("body"),
        type_body: true,
        ..SymbolRule::leaf(kind, name)
    })
}

const fn leaf(kind: K) -> Role {
    Role::Symbol(SymbolRule::leaf(kind, Name::Field("name")))
}

/// Methods: `get` and `set` accessors carry the word as their sig.
const fn method() -> Role {
    Role::Symbol(SymbolRule {
        sig: Sig::Keyword(&["get", "set"]),
        ..SymbolRule::leaf(K::Method, Name::Field("name"))
    })
}

const FUNCTION_VALUES: KindBy = (
    "value",
    &[
        ("arrow_function", K::Function),
        ("function_expression", K::Function),
        ("generator_function", K::Function),
        ("function", K::Function),
    ],
);

const fn declarators() -> Role {
    Role::Declarators(DeclaratorRule {
        kind: K::Variable,
        list: None,
        declarator: "variable_declarator",
        kind_by: Some(FUNCTION_VALUES),
    })
}

/// The roles of all three grammars. Kinds one grammar lacks never match
/// in it (JavaScript has no interfaces; its class field is
/// `field_definition`, TypeScript's `public_field_definition`).
static ROLES: &[(&str, Role)] = &[
    ("program", Role::Transparent),
    // `namespace X {}` is an expression statement in the grammar.
    ("expression_statement", Role::Transparent),
    (
        "export_statement",
        Role::Wrapper {
            inner: &["declaration", "value"],
        },
    ),
    (
        "class_declaration",
        container(K::Class, Name::Field("name")),
    ),
    (
        "abstract_class_declaration",
        container(K::Class, Name::Field("name")),
    ),
    // Reached only through `export default class {}`.
    (
        "class",
        container(K::Class, Name::FieldOr("name", "default")),
    ),
    (
        "interface_declaration",
        container(K::Interface, Name::Field("name")),
    ),
    ("enum_declaration", leaf(K::Enum)),
    ("type_alias_declaration", leaf(K::Type)),
    (
        "internal_module",
        container(K::Namespace, Name::Unquoted("name")),
    ),
    ("module", container(K::Namespace, Name::Unquoted("name"))),
    ("ambient_declaration", Role::Transparent),
    ("function_declaration", leaf(K::Function)),
    ("generator_function_declaration", leaf(K::Function)),
    ("function_signature", leaf(K::Function)),
    // Reached only through `export default function () {}` / `() => {}`.
    (
        "function_expression",
        Role::Symbol(SymbolRule::leaf(
            K::Function,
            Name::FieldOr("name", "default"),
        )),
    ),
    (
        "arrow_function",
        Role::Symbol(SymbolRule::leaf(K::Function, Name::Fixed("default"))),
    ),
    ("lexical_declaration", declarators()),
    ("variable_declaration", declarators()),
    ("method_definition", method()),
    ("method_signature", method()),
    ("abstract_method_signature", method()),
    ("public_field_definition", leaf(K::Property)),
    (
        "field_definition",
        Role::Symbol(SymbolRule::leaf(K::Property, Name::Field("property"))),
    ),
    ("property_signature", leaf(K::Property)),
];

const GRAPH: GraphSpec = GraphSpec {
    refs: &[
        (
            "call_expression",
            RefRole::Call {
                function: "function",
                arguments: "arguments",
            },
        ),
        (
            "new_expression",
            RefRole::New {
                ty: "constructor",
                arguments: "arguments",
            },
        ),
        ("implements_clause", RefRole::Bases),
        ("extends_type_clause", RefRole::Bases),
        (
            "class_heritage",
            RefRole::BasesInChild {
                kind: "extends_clause",
            },
        ),
        ("return_statement", RefRole::Returns),
        ("import_statement", RefRole::EsImport { source: "source" }),
        ("export_statement", RefRole::EsExport { source: "source" }),
        (
            "variable_declarator",
            RefRole::Require {
                function: "require",
                name: "name",
                value: "value",
            },
        ),
    ],
    paths: &[
        // `ns.f()` is a function of an imported module, or a method.
        (
            "member_expression",
            "object",
            "property",
            Qualifier::PathOrValue,
        ),
        ("nested_identifier", "object", "property", Qualifier::Path),
    ],
    wrappers: &[("generic_type", Some("name"))],
    this_words: &["this"],
    base_words: &["super"],
    literal_types: &[
        ("number", "number"),
        ("string", "string"),
        ("template_string", "string"),
        ("true", "boolean"),
        ("false", "boolean"),
    ],
    type_parameters: &["type_parameters"],
    // TypeScript's annotations (`p: Pay`, `const c: Cart = …`, a field
    // `repo: Repo`) type a receiver.
    bindings: &[
        ("formal_parameters", Binding::Group),
        (
            "required_parameter",
            Binding::Named {
                name: "pattern",
                ty: "type",
                value: None,
            },
        ),
        (
            "optional_parameter",
            Binding::Named {
                name: "pattern",
                ty: "type",
                value: None,
            },
        ),
        ("lexical_declaration", Binding::Group),
        ("variable_declaration", Binding::Group),
        // Without an annotation the flow table reads what it was assigned.
        (
            "variable_declarator",
            Binding::Named {
                name: "name",
                ty: "type",
                value: None,
            },
        ),
        (
            "public_field_definition",
            Binding::Named {
                name: "name",
                ty: "type",
                value: None,
            },
        ),
    ],
    members_anywhere: &["public_field_definition"],
    // `repo: Repo` in a class: only `this.repo` is it.
    this_members: &["public_field_definition"],
    // `constructor(private repo: Repo)` declares `this.repo` too.
    parameter_members: Some(ParameterMembers {
        kind: "method_definition",
        name: "constructor",
        parameters: "parameters",
        marks: &["accessibility_modifier", "readonly"],
    }),
    parameter_lists: &["formal_parameters"],
    extension_word: None,
    static_operators: false,
    path_calls_make_their_type: false,
    calls_construct: None,
    constructor_method: Some("constructor"),
    decorators: &[],
    flow: Some(FLOW),
    // A file is a module: imports name files (`./a.js`); what none
    // imports resolves by name, as in a script of globals.
    scope: ScopeRules {
        modules: Modules::FilePath,
        dispatches_to_overrides: true,
        ..ScopeRules::by_name(true)
    },
};

const PARTS: &[(&str, Part)] = &[
    ("name", Part::Name),
    ("type_parameters", Part::TypeParameters),
    ("parameters", Part::Parameters),
    ("return_type", Part::Type),
    ("type", Part::Type),
    ("class_heritage", Part::Bases),
    ("extends_type_clause", Part::Bases),
    ("accessibility_modifier", Part::Modifiers),
    ("override_modifier", Part::Modifiers),
    ("decorator", Part::Annotations),
    ("body", Part::Body),
    ("value", Part::Body),
];

/// Values that carry functions (`const f = bar; f()`, `[foo, bar][1]()`,
/// `function run(cb) { cb() }`, `arr.map(foo)`). Arrow functions and
/// function expressions are no nodes of the graph: a call of their
/// parameters is not followed.
const FLOW: FlowSpec = FlowSpec {
    blocks: &["program", "statement_block"],
    // An imported name holds what the resolver finds through the import.
    imports: &[],
    assignments: &[
        ("variable_declarator", "name", "value"),
        ("assignment_expression", "left", "right"),
    ],
    statements: &[
        "lexical_declaration",
        "variable_declaration",
        "expression_statement",
    ],
    iteration: ("for_in_statement", "left", "right"),
    sequences: &["array", "array_pattern"],
    rest_target: "rest_pattern",
    mapping: ("object", "pair", "key", "value"),
    mapping_update: None,
    subscript: ("subscript_expression", "object", "index"),
    functions: &[
        "function_declaration",
        "generator_function_declaration",
        "method_definition",
    ],
    parameters_field: "parameters",
    anonymous_functions: &[],
    parameters: &[
        ("identifier", None),
        ("assignment_pattern", Some("left")),
        ("required_parameter", Some("pattern")),
        ("optional_parameter", Some("pattern")),
    ],
    keyword_argument: None,
    literals: &["number", "string"],
    definitions: &[
        ("function_declaration", "name"),
        ("class_declaration", "name"),
    ],
    wrapper: ("export_statement", "declaration"),
    attributes: (
        "class_declaration",
        "member_expression",
        "object",
        "property",
    ),
    // The array methods that call their callback before they return.
    call_what_they_are_passed: &[
        "map",
        "forEach",
        "filter",
        "reduce",
        "reduceRight",
        "every",
        "some",
        "find",
        "findIndex",
        "findLast",
        "findLastIndex",
        "flatMap",
        "sort",
        "toSorted",
    ],
    import_calls: &[],
    call_method: None,
};

/// One spec per grammar; all else is shared.
const fn spec(
    name: &'static str,
    display_name: &'static str,
    extensions: &'static [&'static str],
    grammar: fn() -> tree_sitter::Language,
) -> LanguageSpec {
    LanguageSpec {
        name,
        display_name,
        extensions,
        grammar,
        separator: ".",
        own_name_starts: &[],
        comment_kinds: &["comment", "html_comment"],
        leading_kinds: &[],
        docstrings: None,
        parts: PARTS,
        parameters: &[],
        roles: ROLES,
        preprocess: None,
        graph: GRAPH,
    }
}

pub static TYPESCRIPT: LanguageSpec =
    spec("typescript", "TypeScript", &["ts", "mts", "cts"], || {
        tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into()
    });

pub static TSX: LanguageSpec = spec("tsx", "TSX", &["tsx"], || {
    tree_sitter_typescript::LANGUAGE_TSX.into()
});

pub static JAVASCRIPT: LanguageSpec = spec(
    "javascript",
    "JavaScript",
    &["js", "mjs", "cjs", "jsx"],
    || tree_sitter_javascript::LANGUAGE.into(),
);
