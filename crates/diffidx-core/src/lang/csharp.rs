//! C# (`.cs`): DESIGN.md §2.

use super::{preproc, LanguageSpec, Name, Role, Sig, SymbolRule};
use crate::symbol::SymbolKind as K;

const fn container(kind: K) -> Role {
    Role::Symbol(SymbolRule {
        body: Some("body"),
        type_body: true,
        ..SymbolRule::leaf(kind, Name::Field("name"))
    })
}

const fn callable(kind: K, name: Name, params: &'static str) -> Role {
    Role::Symbol(SymbolRule {
        sig: Sig::ParameterTypes(params),
        ..SymbolRule::leaf(kind, name)
    })
}

const fn leaf(kind: K) -> Role {
    Role::Symbol(SymbolRule::leaf(kind, Name::Field("name")))
}

pub static SPEC: LanguageSpec = LanguageSpec {
    name: "csharp",
    display_name: "C#",
    extensions: &["cs"],
    grammar: || tree_sitter_c_sharp::LANGUAGE.into(),
    separator: ".",
    own_name_starts: &["implicit operator ", "explicit operator ", "operator "],
    comment_kinds: &["comment"],
    leading_kinds: &[],
    roles: &[
        ("compilation_unit", Role::Transparent),
        ("declaration_list", Role::Transparent),
        (
            "namespace_declaration",
            Role::Symbol(SymbolRule {
                body: Some("body"),
                ..SymbolRule::leaf(K::Namespace, Name::Field("name"))
            }),
        ),
        (
            "file_scoped_namespace_declaration",
            Role::FileScoped(SymbolRule::leaf(K::Namespace, Name::Field("name"))),
        ),
        ("class_declaration", container(K::Class)),
        ("struct_declaration", container(K::Struct)),
        ("interface_declaration", container(K::Interface)),
        ("record_declaration", container(K::Record)),
        ("enum_declaration", leaf(K::Enum)),
        (
            "delegate_declaration",
            callable(K::Delegate, Name::Field("name"), "parameters"),
        ),
        (
            "method_declaration",
            callable(K::Method, Name::Field("name"), "parameters"),
        ),
        (
            "constructor_declaration",
            callable(K::Constructor, Name::Field("name"), "parameters"),
        ),
        (
            "destructor_declaration",
            callable(K::Destructor, Name::Prefixed("~", "name"), "parameters"),
        ),
        (
            "operator_declaration",
            callable(K::Operator, Name::Operator, "parameters"),
        ),
        (
            "conversion_operator_declaration",
            callable(K::Operator, Name::ConversionOperator, "parameters"),
        ),
        (
            "indexer_declaration",
            callable(K::Indexer, Name::Fixed("this[]"), "parameters"),
        ),
        ("property_declaration", leaf(K::Property)),
        ("event_declaration", leaf(K::Event)),
        (
            "event_field_declaration",
            Role::Declarators {
                kind: K::Event,
                list: "variable_declaration",
                declarator: "variable_declarator",
            },
        ),
        (
            "field_declaration",
            Role::Declarators {
                kind: K::Field,
                list: "variable_declaration",
                declarator: "variable_declarator",
            },
        ),
    ],
    preprocess: Some(preproc::blank_directives),
};
