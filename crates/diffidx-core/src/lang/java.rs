//! Java (`.java`): DESIGN.md §2.
//!
//! The package prefixes every qualname. Types nest; enum constants,
//! initializer blocks and anonymous classes are part of their parent's text.
//! Each declarator of a field is its own symbol, as in C#.

use super::parts::Part;
use super::refs::{Binding, GraphSpec, MadeHere, Modules, Qualifier, RefRole, ScopeRules};
use super::{DeclaratorRule, LanguageSpec, Name, Param, Role, Sig, SymbolRule};
use crate::symbol::SymbolKind as K;

const fn container(kind: K) -> Role {
    Role::Symbol(SymbolRule {
        body: Some("body"),
        type_body: true,
        ..SymbolRule::leaf(kind, Name::Field("name"))
    })
}

const fn callable(kind: K, sig: Sig) -> Role {
    Role::Symbol(SymbolRule {
        sig,
        ..SymbolRule::leaf(kind, Name::Field("name"))
    })
}

const fn declarators() -> Role {
    Role::Declarators(DeclaratorRule {
        kind: K::Field,
        list: None,
        declarator: "variable_declarator",
        kind_by: None,
    })
}

pub static SPEC: LanguageSpec = LanguageSpec {
    name: "java",
    display_name: "Java",
    extensions: &["java"],
    grammar: || tree_sitter_java::LANGUAGE.into(),
    separator: ".",
    own_name_starts: &[],
    comment_kinds: &["line_comment", "block_comment"],
    leading_kinds: &[],
    docstrings: None,
    parts: &[
        ("name", Part::Name),
        ("type_parameters", Part::TypeParameters),
        ("parameters", Part::Parameters),
        ("type", Part::Type),
        ("dimensions", Part::Type),
        ("throws", Part::Exceptions),
        ("superclass", Part::Bases),
        ("interfaces", Part::Bases),
        ("extends_interfaces", Part::Bases),
        ("permits", Part::Bases),
        ("modifiers", Part::Modifiers),
        ("annotation", Part::Annotations),
        ("marker_annotation", Part::Annotations),
        ("body", Part::Body),
        ("value", Part::Body),
    ],
    parameters: &[
        ("formal_parameter", Param::Field("type")),
        (
            "spread_parameter",
            Param::TextWithout(&[
                "modifiers",
                "variable_declarator",
                "annotation",
                "marker_annotation",
            ]),
        ),
        ("receiver_parameter", Param::Skip),
    ],
    roles: &[
        ("program", Role::Transparent),
        (
            "package_declaration",
            Role::Package(Name::ChildOfKind(&["scoped_identifier", "identifier"])),
        ),
        ("class_declaration", container(K::Class)),
        ("interface_declaration", container(K::Interface)),
        ("enum_declaration", container(K::Enum)),
        ("record_declaration", container(K::Record)),
        ("annotation_type_declaration", container(K::Annotation)),
        // Enum constants are the enum's text; its members follow them.
        ("enum_body_declarations", Role::Transparent),
        (
            "method_declaration",
            callable(K::Method, Sig::ParameterTypes("parameters")),
        ),
        (
            "annotation_type_element_declaration",
            callable(K::Method, Sig::Fixed("()")),
        ),
        (
            "constructor_declaration",
            callable(K::Constructor, Sig::ParameterTypes("parameters")),
        ),
        (
            "compact_constructor_declaration",
            callable(K::Constructor, Sig::EnclosingParameterTypes("parameters")),
        ),
        ("field_declaration", declarators()),
        ("constant_declaration", declarators()),
    ],
    preprocess: None,
    graph: GraphSpec {
        refs: &[
            ("method_declaration", RefRole::ReturnType { field: "type" }),
            (
                "method_invocation",
                RefRole::CallSelf {
                    object: "object",
                    name: "name",
                    arguments: "arguments",
                },
            ),
            (
                "method_reference",
                RefRole::MethodReference { new_word: "new" },
            ),
            ("class_literal", RefRole::TypeValue),
            (
                "object_creation_expression",
                RefRole::New {
                    ty: "type",
                    arguments: "arguments",
                },
            ),
            (
                "explicit_constructor_invocation",
                RefRole::ConstructorChain {
                    arguments: "argument_list",
                },
            ),
            (
                "import_declaration",
                RefRole::ImportPath {
                    wildcard: "asterisk",
                },
            ),
            ("superclass", RefRole::Bases),
            (
                "super_interfaces",
                RefRole::BasesInChild { kind: "type_list" },
            ),
            (
                "extends_interfaces",
                RefRole::BasesInChild { kind: "type_list" },
            ),
        ],
        paths: &[
            // `Util.helper()` names a type, `cart.total()` a value.
            (
                "method_invocation",
                "object",
                "name",
                Qualifier::PathOrValue,
            ),
            ("field_access", "object", "field", Qualifier::PathOrValue),
            ("scoped_identifier", "scope", "name", Qualifier::Path),
            // A type named through its outer type (`new Outer.Inner()`).
            ("scoped_type_identifier", "", "", Qualifier::Path),
        ],
        wrappers: &[("generic_type", None)],
        this_words: &["this"],
        base_words: &["super"],
        literal_types: &[
            ("decimal_integer_literal", "int"),
            ("decimal_floating_point_literal", "double"),
            ("string_literal", "String"),
            ("true", "boolean"),
            ("false", "boolean"),
            ("character_literal", "char"),
        ],
        type_parameters: &["type_parameters"],
        bindings: &[
            ("formal_parameters", Binding::Group),
            (
                "formal_parameter",
                Binding::Named {
                    name: "name",
                    ty: "type",
                    value: None,
                },
            ),
            (
                "local_variable_declaration",
                Binding::Declarators {
                    inner: None,
                    declarator: "variable_declarator",
                    narrowed_unless_assigned: Some(("assignment_expression", "left")),
                },
            ),
            (
                "field_declaration",
                Binding::Declarators {
                    inner: None,
                    declarator: "variable_declarator",
                    narrowed_unless_assigned: None,
                },
            ),
        ],
        members_anywhere: &["field_declaration"],
        this_members: &[],
        parameter_members: None,
        parameter_lists: &["formal_parameters"],
        extension_word: None,
        static_operators: false,
        path_calls_make_their_type: false,
        calls_construct: None,
        constructor_method: None,
        decorators: &[],
        flow: None,
        scope: ScopeRules {
            modules: Modules::Package,
            dispatches_to_overrides: true,
            made_here: Some(MadeHere {
                kinds: &["class_declaration"],
                modifiers: "modifiers",
                open_words: &["public", "protected"],
                open_bodies: &["interface_body", "annotation_type_body"],
                annotations: &["annotation", "marker_annotation"],
                inert_annotations: &[
                    "Override",
                    "SuppressWarnings",
                    "Deprecated",
                    "SafeVarargs",
                    "FunctionalInterface",
                ],
            }),
            ..ScopeRules::by_name(true)
        },
    },
};
