//! Go (`.go`): DESIGN.md §2.
//!
//! Qualnames start with the package clause's name. A method hangs under its
//! receiver's base type (`pkg.Store.Get`, pointer and type parameters
//! dropped), an interface method under its interface. Each name of a
//! `const` or `var` spec is its own symbol, with the spec as its text;
//! struct fields are part of the struct's text.

use super::parts::Part;
use super::refs::{Binding, GraphSpec, Modules, Qualifier, RefRole, ScopeRules};
use super::{LanguageSpec, Name, Role, SymbolRule};
use crate::symbol::SymbolKind as K;

pub static SPEC: LanguageSpec = LanguageSpec {
    name: "go",
    display_name: "Go",
    extensions: &["go"],
    grammar: || tree_sitter_go::LANGUAGE.into(),
    separator: ".",
    own_name_starts: &[],
    comment_kinds: &["comment"],
    leading_kinds: &[],
    docstrings: None,
    parts: &[
        ("name", Part::Name),
        ("type_parameters", Part::TypeParameters),
        ("receiver", Part::Parameters),
        ("parameters", Part::Parameters),
        ("result", Part::Type),
        // A type's definition (a struct's fields) is its body.
        ("type_spec/type", Part::Body),
        ("type", Part::Type),
        ("body", Part::Body),
        ("value", Part::Body),
    ],
    parameters: &[],
    roles: &[
        ("source_file", Role::Transparent),
        (
            "package_clause",
            Role::Package(Name::ChildOfKind(&["package_identifier"])),
        ),
        (
            "function_declaration",
            Role::Symbol(SymbolRule::leaf(K::Function, Name::Field("name"))),
        ),
        (
            "method_declaration",
            Role::Symbol(SymbolRule {
                owner: Some(Name::BaseType("receiver")),
                ..SymbolRule::leaf(K::Method, Name::Field("name"))
            }),
        ),
        ("type_declaration", Role::Transparent),
        (
            "type_spec",
            Role::Symbol(SymbolRule {
                kind_by: Some((
                    "type",
                    &[("struct_type", K::Struct), ("interface_type", K::Interface)],
                )),
                // An interface's method specs are its members.
                body: Some("type"),
                ..SymbolRule::leaf(K::Type, Name::Field("name"))
            }),
        ),
        (
            "type_alias",
            Role::Symbol(SymbolRule::leaf(K::Type, Name::Field("name"))),
        ),
        (
            "method_elem",
            Role::Symbol(SymbolRule::leaf(K::Method, Name::Field("name"))),
        ),
        ("const_declaration", Role::Transparent),
        (
            "const_spec",
            Role::Names {
                kind: K::Const,
                field: "name",
            },
        ),
        ("var_declaration", Role::Transparent),
        ("var_spec_list", Role::Transparent),
        (
            "var_spec",
            Role::Names {
                kind: K::Var,
                field: "name",
            },
        ),
    ],
    preprocess: None,
    graph: GraphSpec {
        refs: &[
            (
                "call_expression",
                RefRole::Call {
                    function: "function",
                    arguments: "arguments",
                },
            ),
            (
                "argument_list",
                RefRole::FunctionsPassed {
                    names: &["selector_expression"],
                    not_calls: &[],
                },
            ),
            (
                "import_spec",
                RefRole::PackageImport {
                    path: "path",
                    name: "name",
                },
            ),
            (
                "field_declaration",
                RefRole::EmbeddedField {
                    name: "name",
                    ty: "type",
                },
            ),
            (
                "composite_literal",
                RefRole::New {
                    ty: "type",
                    arguments: "body",
                },
            ),
            (
                "function_declaration",
                RefRole::ReturnType { field: "result" },
            ),
            (
                "method_declaration",
                RefRole::ReturnType { field: "result" },
            ),
        ],
        paths: &[
            ("selector_expression", "operand", "field", Qualifier::Value),
            ("qualified_type", "package", "name", Qualifier::Path),
        ],
        wrappers: &[
            ("generic_type", Some("type")),
            ("pointer_type", None),
            ("parenthesized_expression", None),
            // `x := &T{}`: one value, its address.
            ("expression_list", None),
            ("unary_expression", Some("operand")),
        ],
        this_words: &[],
        base_words: &[],
        literal_types: &[
            ("int_literal", "int"),
            ("float_literal", "float64"),
            ("interpreted_string_literal", "string"),
            ("raw_string_literal", "string"),
            ("true", "bool"),
            ("false", "bool"),
        ],
        type_parameters: &["type_parameters"],
        bindings: &[
            // Parameters, and a method's receiver (`func (c *Command) …`).
            ("parameter_list", Binding::Group),
            (
                "parameter_declaration",
                Binding::Named {
                    name: "name",
                    ty: "type",
                    value: None,
                },
            ),
            ("var_declaration", Binding::Group),
            (
                "var_spec",
                Binding::Named {
                    name: "name",
                    ty: "type",
                    value: Some("value"),
                },
            ),
            (
                "short_var_declaration",
                Binding::Named {
                    name: "left",
                    ty: "type",
                    value: Some("right"),
                },
            ),
        ],
        members_anywhere: &[],
        this_members: &[],
        parameter_members: None,
        parameter_lists: &["parameter_list"],
        extension_word: None,
        static_operators: false,
        path_calls_make_their_type: false,
        calls_construct: None,
        constructor_method: None,
        decorators: &[],
        flow: None,
        scope: ScopeRules {
            modules: Modules::DirectoryPackage,
            imports_qualify_values: true,
            dispatches_to_overrides: false,
            made_here: None,
            local_names: &[
                ("short_var_declaration", "left"),
                ("var_spec", "name"),
                ("range_clause", "left"),
                ("parameter_declaration", "name"),
                ("parameter_list", ""),
                ("for_clause", ""),
            ],
            ..ScopeRules::by_name(false)
        },
    },
};
