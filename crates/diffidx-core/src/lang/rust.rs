//! Rust (`.rs`): DESIGN.md §2.

use super::parts::Part;
use super::refs::Operand::First;
use super::refs::{Binding, GraphSpec, Modules, Qualifier, RefRole, ScopeRules};
use super::{LanguageSpec, Name, Role, SymbolRule};
use crate::symbol::SymbolKind as K;

const fn leaf(kind: K) -> Role {
    Role::Symbol(SymbolRule::leaf(kind, Name::Field("name")))
}

/// A `fn`: a free function, or a method when declared in an impl or trait.
const fn function() -> Role {
    Role::Symbol(SymbolRule {
        member_kind: Some(K::Method),
        ..SymbolRule::leaf(K::Function, Name::Field("name"))
    })
}

pub static SPEC: LanguageSpec = LanguageSpec {
    name: "rust",
    display_name: "Rust",
    extensions: &["rs"],
    grammar: || tree_sitter_rust::LANGUAGE.into(),
    separator: "::",
    own_name_starts: &[],
    comment_kinds: &["line_comment", "block_comment"],
    leading_kinds: &["attribute_item"],
    docstrings: None,
    parts: &[
        ("name", Part::Name),
        ("type_parameters", Part::TypeParameters),
        ("where_clause", Part::TypeParameters),
        ("parameters", Part::Parameters),
        ("return_type", Part::Type),
        ("type", Part::Type),
        ("bounds", Part::Bases),
        ("visibility_modifier", Part::Modifiers),
        ("function_modifiers", Part::Modifiers),
        ("mutable_specifier", Part::Modifiers),
        ("attribute_item", Part::Annotations),
        ("body", Part::Body),
        ("value", Part::Body),
    ],
    parameters: &[],
    roles: &[
        ("source_file", Role::Transparent),
        ("declaration_list", Role::Transparent),
        // Items of `extern` blocks belong to the enclosing scope.
        ("foreign_mod_item", Role::Transparent),
        (
            "mod_item",
            Role::Symbol(SymbolRule {
                body: Some("body"),
                requires_body: true,
                ..SymbolRule::leaf(K::Module, Name::Field("name"))
            }),
        ),
        (
            "trait_item",
            Role::Symbol(SymbolRule {
                body: Some("body"),
                type_body: true,
                ..SymbolRule::leaf(K::Trait, Name::Field("name"))
            }),
        ),
        (
            "impl_item",
            Role::Scope {
                name: Name::SelfType("type"),
                body: "body",
                member_sig: Some(Name::PathWithoutGenerics("trait")),
            },
        ),
        ("struct_item", leaf(K::Struct)),
        ("enum_item", leaf(K::Enum)),
        ("union_item", leaf(K::Union)),
        ("function_item", function()),
        ("function_signature_item", function()),
        ("const_item", leaf(K::Const)),
        ("static_item", leaf(K::Static)),
        ("type_item", leaf(K::Type)),
        ("associated_type", leaf(K::Type)),
        ("macro_definition", leaf(K::Macro)),
    ],
    preprocess: None,
    graph: GraphSpec {
        refs: &[
            (
                "function_item",
                RefRole::ReturnType {
                    field: "return_type",
                },
            ),
            (
                "arguments",
                RefRole::FunctionsPassed {
                    names: &["scoped_identifier"],
                    not_calls: &[],
                },
            ),
            (
                "call_expression",
                RefRole::Call {
                    function: "function",
                    arguments: "arguments",
                },
            ),
            (
                "macro_invocation",
                RefRole::Macro {
                    name: "macro",
                    scan: true,
                },
            ),
            (
                "impl_item",
                RefRole::ImplTrait {
                    tr: "trait",
                    ty: "type",
                },
            ),
            ("trait_item", RefRole::BasesIn { field: "bounds" }),
            (
                "use_declaration",
                RefRole::Use {
                    argument: "argument",
                },
            ),
            (
                "mod_item",
                RefRole::ModuleFile {
                    name: "name",
                    body: "body",
                },
            ),
            (
                "extern_crate_declaration",
                RefRole::ExternCrate { name: "name" },
            ),
            // Operators call their `std::ops`/`std::cmp` trait's method on
            // the left operand's type; `!=` runs `ne`, whose default is
            // `eq`, and the orderings run `partial_cmp` the same way.
            (
                "binary_expression",
                RefRole::Operator {
                    operator: "operator",
                    methods: &[
                        ("+", "add", First),
                        ("-", "sub", First),
                        ("*", "mul", First),
                        ("/", "div", First),
                        ("%", "rem", First),
                        ("&", "bitand", First),
                        ("|", "bitor", First),
                        ("^", "bitxor", First),
                        ("<<", "shl", First),
                        (">>", "shr", First),
                        ("==", "eq", First),
                        ("!=", "eq", First),
                        ("<", "partial_cmp", First),
                        ("<=", "partial_cmp", First),
                        (">", "partial_cmp", First),
                        (">=", "partial_cmp", First),
                    ],
                    stores: &[],
                },
            ),
            (
                "compound_assignment_expr",
                RefRole::Operator {
                    operator: "operator",
                    methods: &[
                        ("+=", "add_assign", First),
                        ("-=", "sub_assign", First),
                        ("*=", "mul_assign", First),
                        ("/=", "div_assign", First),
                        ("%=", "rem_assign", First),
                        ("&=", "bitand_assign", First),
                        ("|=", "bitor_assign", First),
                        ("^=", "bitxor_assign", First),
                        ("<<=", "shl_assign", First),
                        (">>=", "shr_assign", First),
                    ],
                    stores: &[],
                },
            ),
            (
                "index_expression",
                RefRole::Operator {
                    operator: "",
                    methods: &[("", "index", First)],
                    stores: &[
                        ("assignment_expression", "left", "index_mut"),
                        ("compound_assignment_expr", "left", "index_mut"),
                    ],
                },
            ),
        ],
        paths: &[
            ("scoped_identifier", "path", "name", Qualifier::Path),
            ("scoped_type_identifier", "path", "name", Qualifier::Path),
            ("field_expression", "value", "field", Qualifier::Value),
        ],
        wrappers: &[
            ("generic_function", Some("function")),
            ("generic_type", Some("type")),
            ("generic_type_with_turbofish", Some("type")),
        ],
        this_words: &["self", "Self"],
        base_words: &[],
        literal_types: &[
            ("integer_literal", "i32"),
            ("float_literal", "f64"),
            ("string_literal", "&str"),
            ("raw_string_literal", "&str"),
            ("boolean_literal", "bool"),
            ("char_literal", "char"),
        ],
        type_parameters: &["type_parameters"],
        bindings: &[
            ("parameters", Binding::Group),
            (
                "parameter",
                Binding::Named {
                    name: "pattern",
                    ty: "type",
                    value: None,
                },
            ),
            (
                "let_declaration",
                Binding::Named {
                    name: "pattern",
                    ty: "type",
                    value: Some("value"),
                },
            ),
        ],
        members_anywhere: &[],
        this_members: &[],
        parameter_members: None,
        parameter_lists: &["parameters"],
        extension_word: None,
        static_operators: false,
        path_calls_make_their_type: true,
        calls_construct: None,
        constructor_method: None,
        decorators: &[],
        flow: None,
        scope: ScopeRules {
            modules: Modules::Rust,
            root_word: Some("crate"),
            parent_word: Some("super"),
            current_word: Some("self"),
            members_inherit: false,
            imports_qualify_values: false,
            dispatches_to_overrides: false,
            made_here: None,
            local_names: &[],
        },
    },
};
