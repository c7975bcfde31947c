//! The syntax of values, per language ([`FlowSpec`], part of a language's
//! table), and what a walk reads of the values bound in a block. The
//! walker's following of values (`flow`) reads these; they know nothing of
//! the walker.

use tree_sitter::Node;

/// The syntax of values, per language (part of its `GraphSpec`).
#[derive(Debug, Clone, Copy)]
pub struct FlowSpec {
    /// Kinds that hold statements (a module, a block): only there are
    /// names assigned or declared.
    pub blocks: &'static [&'static str],
    /// Import statements: the names they bind (field `name`, an alias's
    /// `alias`) hold no value this walker can follow from then on.
    pub imports: &'static [&'static str],
    /// `(kind, target field, value field)`: `a = v`, `const a = v`; the
    /// kind may stand in a statement of one of the `statements` kinds
    /// (its first named child).
    pub assignments: &'static [(&'static str, &'static str, &'static str)],
    pub statements: &'static [&'static str],
    /// `(kind, variable field, iterated field)`: `for x in v`.
    pub iteration: (&'static str, &'static str, &'static str),
    /// Sequences written or unpacked: `[f, g]`, `a, b = f, g`.
    pub sequences: &'static [&'static str],
    /// A target that takes the rest of a sequence unpacked (`a, *b = f,
    /// g, h`: `b` is the sequence `g, h`), its name its first named child.
    pub rest_target: &'static str,
    /// `(kind, pair kind, key field, value field)`: `{"k": f}`.
    pub mapping: (&'static str, &'static str, &'static str, &'static str),
    /// The method that adds a mapping's pairs to another (`d.update({"k":
    /// f})`): as `d["k"] = f` does.
    pub mapping_update: Option<&'static str>,
    /// `(kind, value field, index field)`: `a[k]`.
    pub subscript: (&'static str, &'static str, &'static str),
    /// The kinds of named functions, the declaration first (the one a
    /// function body may nest, a node of the graph), and the field of
    /// their parameters.
    pub functions: &'static [&'static str],
    pub parameters_field: &'static str,
    /// Functions without a name (Python's `lambda`), with their parameters
    /// in the same field: nodes of the graph named by kind and position
    /// (`<lambda:3:9>`, see [`anonymous_name`]), wherever they stand.
    pub anonymous_functions: &'static [&'static str],
    /// Parameter kinds and the field of their name (`None`: the first
    /// named child); other kinds in a parameter list end the positions.
    pub parameters: &'static [(&'static str, Option<&'static str>)],
    /// `(kind, name field, value field)`: `f(x=g)`.
    pub keyword_argument: Option<(&'static str, &'static str, &'static str)>,
    /// Kinds of literal keys and indexes a subscript may be matched by.
    pub literals: &'static [&'static str],
    /// Declarations in a function body, with the field of their name: a
    /// call of that name there means the local one, no symbol.
    pub definitions: &'static [(&'static str, &'static str)],
    /// `(kind, field)` of a wrapper of a declaration (a decorated one).
    pub wrapper: (&'static str, &'static str),
    /// `(class kind, attribute kind, object field, name field)`: what a
    /// class's methods assign to `self.x` is what `self.x` holds.
    pub attributes: (&'static str, &'static str, &'static str, &'static str),
    /// Callees from outside the repository that call the functions passed
    /// to them before they return (`map(f, xs)`, `sorted(xs, key=f)`): the
    /// caller calls those functions through them. Any other outside callee
    /// may only keep what it is given (`add_command(f)`, a callback).
    pub call_what_they_are_passed: &'static [&'static str],
    /// Calls that import the module a string names
    /// (`m = importlib.import_module("a.b")`): the variable is bound as
    /// `import a.b as m` binds it.
    pub import_calls: &'static [&'static str],
    /// The method that calling an instance runs (Python's `__call__`):
    /// `A()()` calls it on `A`.
    pub call_method: Option<&'static str>,
}

/// A byte range of a value: nodes are found again by it.
pub(crate) type Span = (usize, usize);

/// What the statements directly in one node (a block, a module) bind,
/// read once per node: a lookup walks up the ancestors of a use and asks
/// each, so a long module is read once rather than once per call.
#[derive(Default)]
pub(crate) struct BlockFacts {
    /// `name = value`: per name, (statement start, value's byte range), in
    /// source order; a loop's variable holds what it iterates.
    pub(crate) assigned: std::collections::HashMap<String, Vec<(usize, Span)>>,
    /// Starts of the loops among those statements: their variables are
    /// seen inside them too.
    pub(crate) loops: std::collections::HashSet<usize>,
    /// `name[key] = value`: per name, (statement start, key text, value's
    /// byte range).
    pub(crate) subscripted: std::collections::HashMap<String, Vec<(usize, String, Span)>>,
    /// Functions and classes declared there.
    pub(crate) defined: std::collections::HashMap<String, Local>,
}

/// What a block declares: a function (in a function body, a node of the
/// graph) or a class (the other kind of the `definitions` table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Local {
    Function,
    Class,
}

/// [`BlockFacts`] by node id.
pub(crate) type Blocks = std::collections::HashMap<usize, std::rc::Rc<BlockFacts>>;

/// Per class (by node id): each attribute its methods assign on the
/// instance, with the byte ranges of the values.
pub(crate) type AttributeValues =
    std::collections::HashMap<usize, std::collections::HashMap<String, Vec<(usize, usize)>>>;

/// Whether nodes of `kind` declare parameters: a function, named or not.
pub(crate) fn is_function(flow: &FlowSpec, kind: &str) -> bool {
    flow.functions.contains(&kind) || flow.anonymous_functions.contains(&kind)
}

/// The row of the assignments table a node is, if any.
pub(crate) fn assignment_row(
    flow: &FlowSpec,
    node: Node<'_>,
) -> Option<(&'static str, &'static str, &'static str)> {
    flow.assignments
        .iter()
        .find(|(kind, _, _)| *kind == node.kind())
        .copied()
}

/// The name of a function without one: its kind and where it starts
/// (`<lambda:3:9>`, line and byte column from 1). Positions keep two in
/// one file apart, so a variable, a parameter or a return names the one it
/// holds, not another of the same scope.
pub(crate) fn anonymous_name(node: Node<'_>) -> String {
    let at = node.start_position();
    format!("<{}:{}:{}>", node.kind(), at.row + 1, at.column + 1)
}
