//! Python (`.py`, `.pyi`): DESIGN.md §2.
//!
//! Containers are the module and class bodies, and the blocks of `if`,
//! `elif`, `else`, `try`, `except`, `finally` and `with` statements that
//! stand in them (conditional definitions); never a function body. A
//! decorated definition is the whole `decorated_definition`. Docstrings are
//! comments.

use super::refs::{GraphSpec, Qualifier, RefRole, ScopeRules};
use super::{Docstrings, LanguageSpec, Name, Role, SymbolRule};
use crate::symbol::SymbolKind as K;

pub static SPEC: LanguageSpec = LanguageSpec {
    name: "python",
    display_name: "Python",
    extensions: &["py", "pyi"],
    grammar: || tree_sitter_python::LANGUAGE.into(),
    separator: ".",
    own_name_starts: &[],
    comment_kinds: &["comment"],
    leading_kinds: &[],
    docstrings: Some(Docstrings {
        owners: &[
            ("module", None),
            ("class_definition", Some("body")),
            ("function_definition", Some("body")),
        ],
        statement: "expression_statement",
        strings: &["string", "concatenated_string"],
    }),
    parameters: &[],
    roles: &[
        ("module", Role::Transparent),
        // Conditional definitions: the blocks of these statements.
        ("if_statement", Role::Transparent),
        ("elif_clause", Role::Transparent),
        ("else_clause", Role::Transparent),
        ("try_statement", Role::Transparent),
        ("except_clause", Role::Transparent),
        ("except_group_clause", Role::Transparent),
        ("finally_clause", Role::Transparent),
        ("with_statement", Role::Transparent),
        ("block", Role::Transparent),
        (
            "class_definition",
            Role::Symbol(SymbolRule {
                body: Some("body"),
                type_body: true,
                ..SymbolRule::leaf(K::Class, Name::Field("name"))
            }),
        ),
        // A `def` in a class body is a method; its body is never walked.
        (
            "function_definition",
            Role::Symbol(SymbolRule {
                member_kind: Some(K::Method),
                ..SymbolRule::leaf(K::Function, Name::Field("name"))
            }),
        ),
        (
            "decorated_definition",
            Role::Wrapper {
                inner: &["definition"],
            },
        ),
    ],
    preprocess: None,
    graph: GraphSpec {
        refs: &[
            (
                "call",
                RefRole::Call {
                    function: "function",
                    arguments: "arguments",
                },
            ),
            (
                "class_definition",
                RefRole::BasesIn {
                    field: "superclasses",
                },
            ),
        ],
        paths: &[("attribute", "object", "attribute", Qualifier::Value)],
        wrappers: &[],
        this_words: &["self", "cls"],
        base_words: &[],
        literal_types: &[
            ("integer", "int"),
            ("float", "float"),
            ("string", "str"),
            ("true", "bool"),
            ("false", "bool"),
        ],
        type_parameters: &["type_parameters"],
        bindings: &[],
        members_anywhere: &[],
        parameter_lists: &["parameters"],
        extension_word: None,
        path_calls_make_their_type: false,
        scope: ScopeRules::by_name(true),
    },
};
