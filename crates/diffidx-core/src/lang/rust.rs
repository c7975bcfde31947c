//! Rust (`.rs`): DESIGN.md §2.

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
};
