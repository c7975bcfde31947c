//! C# (`.cs`): DESIGN.md §2.

use super::parts::Part;
use super::refs::Operand::First;
use super::refs::{Binding, GraphSpec, Modules, Qualifier, RefRole, ScopeRules};
use super::{preproc, DeclaratorRule, LanguageSpec, Name, Param, Role, Sig, SymbolRule};
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
    docstrings: None,
    parts: &[
        ("name", Part::Name),
        ("type_parameters", Part::TypeParameters),
        ("type_parameter_list", Part::TypeParameters),
        ("type_parameter_constraints_clause", Part::TypeParameters),
        ("parameters", Part::Parameters),
        ("parameter_list", Part::Parameters),
        ("returns", Part::Type),
        ("type", Part::Type),
        ("base_list", Part::Bases),
        ("modifier", Part::Modifiers),
        ("attribute_list", Part::Annotations),
        ("body", Part::Body),
        ("accessors", Part::Body),
        ("value", Part::Body),
        ("constructor_initializer", Part::Body),
    ],
    parameters: &[("parameter", Param::Field("type"))],
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
            Role::Declarators(DeclaratorRule {
                kind: K::Event,
                list: Some("variable_declaration"),
                declarator: "variable_declarator",
                kind_by: None,
            }),
        ),
        (
            "field_declaration",
            Role::Declarators(DeclaratorRule {
                kind: K::Field,
                list: Some("variable_declaration"),
                declarator: "variable_declarator",
                kind_by: None,
            }),
        ),
    ],
    preprocess: Some(preproc::blank_directives),
    graph: GraphSpec {
        refs: &[
            (
                "method_declaration",
                RefRole::ReturnType { field: "returns" },
            ),
            (
                "local_function_statement",
                RefRole::ReturnType { field: "type" },
            ),
            (
                "argument_list",
                RefRole::FunctionsPassed {
                    names: &["identifier", "member_access_expression"],
                    not_calls: &["nameof"],
                },
            ),
            // `a + b` runs the `operator +` its left operand's type declares.
            (
                "binary_expression",
                RefRole::Operator {
                    operator: "operator",
                    methods: &[
                        ("+", "operator +", First),
                        ("-", "operator -", First),
                        ("*", "operator *", First),
                        ("/", "operator /", First),
                        ("%", "operator %", First),
                        ("&", "operator &", First),
                        ("|", "operator |", First),
                        ("^", "operator ^", First),
                        ("<<", "operator <<", First),
                        (">>", "operator >>", First),
                        ("==", "operator ==", First),
                        ("!=", "operator !=", First),
                        ("<", "operator <", First),
                        (">", "operator >", First),
                        ("<=", "operator <=", First),
                        (">=", "operator >=", First),
                    ],
                    stores: &[],
                },
            ),
            (
                "invocation_expression",
                RefRole::Call {
                    function: "function",
                    arguments: "arguments",
                },
            ),
            (
                "object_creation_expression",
                RefRole::New {
                    ty: "type",
                    arguments: "arguments",
                },
            ),
            (
                "implicit_object_creation_expression",
                RefRole::NewOfDeclaredType {
                    arguments: "argument_list",
                    // `Cart c = new();`, `Cart P { get; } = new();`, and the
                    // arrow bodies `Cart P => new();`, `Cart Make() => new();`.
                    declarations: &[
                        ("variable_declaration", "type"),
                        ("property_declaration", "type"),
                        ("method_declaration", "returns"),
                        ("local_function_statement", "type"),
                    ],
                },
            ),
            (
                "constructor_initializer",
                RefRole::ConstructorChain {
                    arguments: "argument_list",
                },
            ),
            ("base_list", RefRole::Bases),
            ("using_directive", RefRole::Using),
        ],
        paths: &[
            (
                "member_access_expression",
                "expression",
                "name",
                Qualifier::PathOrValue,
            ),
            ("qualified_name", "qualifier", "name", Qualifier::Path),
            ("alias_qualified_name", "alias", "name", Qualifier::Path),
            (
                "conditional_access_expression",
                "condition",
                "member_binding_expression",
                Qualifier::Value,
            ),
            ("member_binding_expression", "", "name", Qualifier::Value),
        ],
        wrappers: &[
            ("generic_name", None),
            ("primary_constructor_base_type", Some("type")),
        ],
        this_words: &["this"],
        base_words: &["base"],
        literal_types: &[
            ("integer_literal", "int"),
            ("real_literal", "double"),
            ("string_literal", "string"),
            ("verbatim_string_literal", "string"),
            ("raw_string_literal", "string"),
            ("interpolated_string_expression", "string"),
            ("boolean_literal", "bool"),
            ("character_literal", "char"),
        ],
        type_parameters: &["type_parameters", "type_parameter_list"],
        bindings: &[
            ("parameter_list", Binding::Group),
            (
                "parameter",
                Binding::Named {
                    name: "name",
                    ty: "type",
                    value: None,
                },
            ),
            (
                "property_declaration",
                Binding::Named {
                    name: "name",
                    ty: "type",
                    value: None,
                },
            ),
            (
                "local_declaration_statement",
                Binding::Declarators {
                    inner: Some("variable_declaration"),
                    declarator: "variable_declarator",
                    narrowed_unless_assigned: Some(("assignment_expression", "left")),
                },
            ),
            (
                "field_declaration",
                Binding::Declarators {
                    inner: Some("variable_declaration"),
                    declarator: "variable_declarator",
                    narrowed_unless_assigned: None,
                },
            ),
            (
                "variable_declaration",
                Binding::Declarators {
                    inner: None,
                    declarator: "variable_declarator",
                    narrowed_unless_assigned: None,
                },
            ),
        ],
        members_anywhere: &["field_declaration", "property_declaration"],
        this_members: &[],
        parameter_members: None,
        parameter_lists: &["parameter_list"],
        extension_word: Some("this"),
        static_operators: true,
        path_calls_make_their_type: false,
        calls_construct: None,
        constructor_method: None,
        decorators: &[],
        flow: None,
        scope: ScopeRules {
            modules: Modules::None,
            root_word: None,
            parent_word: None,
            current_word: None,
            members_inherit: true,
            imports_qualify_values: false,
            dispatches_to_overrides: true,
            made_here: None,
            local_names: &[],
        },
    },
};
