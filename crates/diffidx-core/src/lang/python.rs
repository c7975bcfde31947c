//! Python (`.py`, `.pyi`): DESIGN.md §2.
//!
//! Containers are the module and class bodies, and the blocks of `if`,
//! `elif`, `else`, `try`, `except`, `finally` and `with` statements that
//! stand in them (conditional definitions); never a function body. A
//! decorated definition is the whole `decorated_definition`. Docstrings are
//! comments.

use super::parts::Part;
use super::refs::Operand::{First, Last};
use super::refs::{GraphSpec, Modules, Qualifier, RefRole, ScopeRules};
use super::values::FlowSpec;
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
    parts: &[
        ("name", Part::Name),
        ("type_parameters", Part::TypeParameters),
        ("parameters", Part::Parameters),
        ("return_type", Part::Type),
        ("superclasses", Part::Bases),
        ("decorator", Part::Annotations),
        ("body", Part::Body),
    ],
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
            ("decorator", RefRole::CallsItsValue),
            // `raise A` constructs `A` as `A()` does.
            ("raise_statement", RefRole::CallsItsValue),
            ("return_statement", RefRole::Returns),
            // A generator gives what it yields to the loop that calls it.
            ("yield", RefRole::Returns),
            // `for x in v` calls `iter(v)` and `next()` on what it gives;
            // `with v` enters and exits it.
            (
                "for_statement",
                RefRole::Protocol {
                    value: "right",
                    methods: &["__iter__", "__next__"],
                },
            ),
            (
                "with_item",
                RefRole::Protocol {
                    value: "value",
                    methods: &["__enter__", "__exit__"],
                },
            ),
            // Operators run their operand type's methods.
            (
                "subscript",
                RefRole::Operator {
                    operator: "",
                    methods: &[("", "__getitem__", First)],
                    stores: &[("assignment", "left", "__setitem__")],
                },
            ),
            (
                "binary_operator",
                RefRole::Operator {
                    operator: "operator",
                    methods: &[
                        ("+", "__add__", First),
                        ("-", "__sub__", First),
                        ("*", "__mul__", First),
                        ("/", "__truediv__", First),
                        ("//", "__floordiv__", First),
                        ("%", "__mod__", First),
                        ("**", "__pow__", First),
                        ("@", "__matmul__", First),
                        ("&", "__and__", First),
                        ("|", "__or__", First),
                        ("^", "__xor__", First),
                        ("<<", "__lshift__", First),
                        (">>", "__rshift__", First),
                    ],
                    stores: &[],
                },
            ),
            (
                "comparison_operator",
                RefRole::Operator {
                    operator: "operators",
                    methods: &[
                        ("==", "__eq__", First),
                        ("!=", "__ne__", First),
                        ("<", "__lt__", First),
                        ("<=", "__le__", First),
                        (">", "__gt__", First),
                        (">=", "__ge__", First),
                        ("in", "__contains__", Last),
                        ("not in", "__contains__", Last),
                    ],
                    stores: &[],
                },
            ),
            (
                "unary_operator",
                RefRole::Operator {
                    operator: "operator",
                    methods: &[
                        ("-", "__neg__", First),
                        ("+", "__pos__", First),
                        ("~", "__invert__", First),
                    ],
                    stores: &[],
                },
            ),
            ("import_statement", RefRole::ImportModules),
            (
                "import_from_statement",
                RefRole::ImportFrom {
                    module: "module_name",
                },
            ),
        ],
        // `a.b` is a module path or a value: the resolver tries the path.
        paths: &[("attribute", "object", "attribute", Qualifier::PathOrValue)],
        // `(f)()` calls `f`; `return (lambda: 1)` returns the lambda;
        // `with A() as a` enters `A()`.
        wrappers: &[("parenthesized_expression", None), ("as_pattern", None)],
        this_words: &["self", "cls"],
        // `super().m()`: the next type on the bases.
        base_words: &["super()"],
        literal_types: &[
            ("integer", "int"),
            ("float", "float"),
            ("string", "str"),
            ("true", "bool"),
            ("false", "bool"),
        ],
        type_parameters: &["type_parameters"],
        // `a = A()` types `a` through the values the walker follows
        // (`flow`), not as a declaration.
        bindings: &[],
        members_anywhere: &[],
        this_members: &[],
        parameter_members: None,
        parameter_lists: &["parameters"],
        extension_word: None,
        static_operators: false,
        path_calls_make_their_type: false,
        calls_construct: Some("__init__"),
        constructor_method: None,
        decorators: &["decorator"],
        flow: Some(FlowSpec {
            blocks: &["module", "block"],
            // `import a.b` binds `a`; `from m import a.b`, the last part.
            imports: &["import_statement", "import_from_statement"],
            assignments: &[("assignment", "left", "right")],
            statements: &["expression_statement"],
            sequences: &[
                "list",
                "tuple",
                "expression_list",
                "pattern_list",
                "tuple_pattern",
                "list_pattern",
            ],
            rest_target: "list_splat_pattern",
            iteration: ("for_statement", "left", "right"),
            mapping: ("dictionary", "pair", "key", "value"),
            mapping_update: Some("update"),
            subscript: ("subscript", "value", "subscript"),
            functions: &["function_definition"],
            parameters_field: "parameters",
            anonymous_functions: &["lambda"],
            parameters: &[
                ("identifier", None),
                ("default_parameter", Some("name")),
                ("typed_parameter", None),
                ("typed_default_parameter", Some("name")),
            ],
            keyword_argument: Some(("keyword_argument", "name", "value")),
            literals: &["integer", "string"],
            definitions: &[
                ("function_definition", "name"),
                ("class_definition", "name"),
            ],
            wrapper: ("decorated_definition", "definition"),
            attributes: ("class_definition", "attribute", "object", "attribute"),
            // Builtins and `functools.reduce`, `list.sort`.
            call_what_they_are_passed: &["map", "filter", "sorted", "min", "max", "reduce", "sort"],
            import_calls: &["__import__", "import_module"],
            call_method: Some("__call__"),
        }),
        // A bare name is never a member of the enclosing class.
        scope: ScopeRules {
            modules: Modules::Python,
            root_word: None,
            parent_word: None,
            current_word: None,
            members_inherit: false,
            imports_qualify_values: false,
            dispatches_to_overrides: false,
            made_here: None,
            local_names: &[],
        },
    },
};
