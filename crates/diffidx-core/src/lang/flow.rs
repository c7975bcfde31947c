//! Values that carry functions: what a call through a variable, a
//! subscript, a parameter or a call's result can mean, read from the syntax
//! of one file (`a = f; a()`, `d = {"k": f}; d["k"]()`, `def g(h): h()`,
//! `f()()`).
//!
//! Why here and not in the resolver: a variable's value is only visible in
//! the syntax around the call. The walker turns such a call into references
//! to the names the value holds (marked [`Reference::flow`]), a call of a
//! parameter into a [`RefKind::CallsParameter`] fact, and `return g` into a
//! [`RefKind::Returns`] fact; the resolver joins those with call sites in
//! any file. Only names are followed: a value built by other code
//! (`h = make()`) is no function the syntax shows, unless `make` returns one.

use tree_sitter::Node;

use super::refs::RefWalker;
use super::values::{
    anonymous_name, assignment_row, is_function, BlockFacts, FlowSpec, Local, Span,
};
use crate::codegraph::facts::{Receiver, RefKind, Reference};

/// How deep a variable's value is followed (`b = a; a = f`).
const MAX_FLOW_DEPTH: u8 = 4;

impl<'a> RefWalker<'a> {
    /// The parent of a node, from the walk's ancestors where it can:
    /// `Node::parent` searches from the root, which costs as much as the
    /// root has children (every statement of a long module).
    pub(crate) fn up(&self, node: Node<'a>) -> Option<Node<'a>> {
        let stack = self.ancestors.borrow();
        if let Some(i) = stack.iter().rposition(|n| n.id() == node.id()) {
            return i.checked_sub(1).map(|j| stack[j]);
        }
        // Below the node being walked: down from it.
        let mut current = *stack
            .iter()
            .rev()
            .find(|n| n.start_byte() <= node.start_byte() && node.end_byte() <= n.end_byte())?;
        loop {
            let next = current.child_with_descendant(node)?;
            if next.id() == node.id() {
                return Some(current);
            }
            current = next;
        }
    }

    /// The references a call through a value means, if its callee is one
    /// (`None`: an ordinary callee, referenced by its name).
    pub(crate) fn flow_call(&self, call: Node<'a>, callee: Node<'a>) -> Option<Vec<Reference>> {
        let flow = self.spec.flow.as_ref()?;
        let callee = self.unwrap(callee);
        let kind = callee.kind();
        let values: Vec<Node<'a>> = if kind == "identifier" {
            let name = self.text(callee).trim();
            match self.defined_locally(callee, name) {
                // A function nested in a function: a node of the graph,
                // called by its name.
                Some(Local::Function) => return None,
                // A class nested in a function: nothing to link.
                Some(Local::Class) => return Some(Vec::new()),
                None => {}
            }
            let values = self.values_of(callee, name, 0);
            if values.is_empty() {
                let (at, param, depth) = self.param_position(callee, name)?;
                let mut r = self.reference(
                    RefKind::CallsParameter,
                    Receiver::Bare,
                    Vec::new(),
                    name.to_owned(),
                    call,
                );
                r.param = Some(at);
                r.param_depth = depth;
                let mut out = vec![r];
                // `def f(g=h)`: `h` when no argument is passed.
                let default = param.child_by_field_name("value");
                if let Some(mut r) = default.and_then(|d| self.value_reference(call, d)) {
                    r.flow = true;
                    out.push(r);
                }
                return Some(out);
            }
            values
        } else if kind == flow.subscript.0 {
            let value = callee.child_by_field_name(flow.subscript.1)?;
            let index = callee.child_by_field_name(flow.subscript.2);
            if value.kind() != "identifier" && value.kind() != flow.subscript.0 {
                return None;
            }
            self.elements_of(value, index)
        } else if self.is_call(callee) {
            // `f()()`: what `f` returns.
            vec![callee]
        } else if let Some(attribute) = self.this_attribute(callee) {
            let values = self.attribute_values(callee, &attribute);
            if values.is_empty() {
                return None;
            }
            values
        } else {
            return None;
        };
        let mut out = Vec::new();
        for value in values {
            if let Some(mut r) = self.value_reference(call, value) {
                r.flow = true;
                out.push(r);
            }
        }
        (!out.is_empty()).then_some(out)
    }

    pub(crate) fn is_call(&self, node: Node<'a>) -> bool {
        matches!(
            self.roles.get(node.kind_id() as usize).copied().flatten(),
            Some(super::refs::RefRole::Call { .. })
        )
    }

    /// A reference to what a value names: a function by name, or what a
    /// call returns.
    fn value_reference(&self, call: Node<'a>, value: Node<'a>) -> Option<Reference> {
        if let Some(name) = self.anonymous(value) {
            return Some(self.reference(RefKind::Call, Receiver::Bare, Vec::new(), name, call));
        }
        if self.is_call(value) {
            // `f()()()`: what the function `f` returns returns.
            let mut value = value;
            let mut depth = 0u8;
            let mut function = self.unwrap(value.child_by_field_name("function")?);
            while self.is_call(function) && depth < MAX_FLOW_DEPTH {
                value = function;
                function = self.unwrap(value.child_by_field_name("function")?);
                depth += 1;
            }
            // `a = f; a()()`: what `f` returns.
            let held = match function.kind() {
                "identifier" => self.values_of(function, self.text(function).trim(), 0),
                _ => Vec::new(),
            };
            let function = held
                .into_iter()
                .find(|v| !self.is_call(*v) && self.segments(*v).is_some())
                .unwrap_or(function);
            let (receiver, qualifier, name) = self.split_name(function)?;
            let mut r = self.reference(RefKind::Call, receiver, qualifier, name, call);
            r.returned = true;
            r.returned_again = depth;
            if let Some(args) = value.child_by_field_name("arguments") {
                r.returned_args = self.argument_names(args);
            }
            return Some(r);
        }
        self.segments(value)?;
        let (receiver, qualifier, name) = self.split_name(value)?;
        Some(self.reference(RefKind::Call, receiver, qualifier, name, call))
    }

    /// The values last assigned to `name` before `at`, in the nearest
    /// block that assigns it, variables followed to their own values.
    pub(crate) fn values_of(&self, at: Node<'a>, name: &str, depth: u8) -> Vec<Node<'a>> {
        let Some(flow) = self.spec.flow.as_ref() else {
            return Vec::new();
        };
        if depth >= MAX_FLOW_DEPTH {
            return Vec::new();
        }
        let mut node = at;
        while let Some(parent) = self.up(node) {
            if !flow.blocks.contains(&parent.kind()) {
                // A function's body does not see past its own parameters.
                if is_function(flow, parent.kind()) && self.param_position(node, name).is_some() {
                    return Vec::new();
                }
                node = parent;
                continue;
            }
            let facts = self.block_facts(flow, parent);
            let seen = |statement: usize| {
                statement < node.start_byte()
                    || (statement == node.start_byte() && facts.loops.contains(&statement))
            };
            let last = facts
                .assigned
                .get(name)
                .and_then(|list| list.iter().rev().find(|(statement, _)| seen(*statement)));
            if let Some((_, (start, end))) = last {
                if start == end {
                    // Rebound by an import: a name to resolve, no value.
                    return Vec::new();
                }
                let Some(value) = parent.descendant_for_byte_range(*start, *end) else {
                    return Vec::new();
                };
                if value.kind() == "identifier" {
                    let inner = self.text(value).trim();
                    let further = self.values_of(value, inner, depth + 1);
                    if !further.is_empty() {
                        return further;
                    }
                }
                return vec![value];
            }
            node = parent;
        }
        Vec::new()
    }

    /// The bindings of the statements directly in `parent`, read once.
    fn block_facts(&self, flow: &FlowSpec, parent: Node<'a>) -> std::rc::Rc<BlockFacts> {
        if let Some(facts) = self.blocks.borrow().get(&parent.id()) {
            return std::rc::Rc::clone(facts);
        }
        let mut facts = BlockFacts::default();
        let mut cursor = parent.walk();
        for child in parent.named_children(&mut cursor) {
            let declared = if child.kind() == flow.wrapper.0 {
                child.child_by_field_name(flow.wrapper.1)
            } else {
                Some(child)
            };
            if let Some(declared) = declared {
                for (k, field) in flow.definitions {
                    if declared.kind() == *k {
                        if let Some(n) = declared.child_by_field_name(field) {
                            let what = if flow.functions.contains(k) {
                                Local::Function
                            } else {
                                Local::Class
                            };
                            facts.defined.insert(self.text(n).trim().to_owned(), what);
                        }
                    }
                }
            }
            if flow.imports.contains(&child.kind()) {
                let mut cursor = child.walk();
                for name in child.children_by_field_name("name", &mut cursor) {
                    let local = match name.child_by_field_name("alias") {
                        Some(alias) => self.text(alias).trim(),
                        None => {
                            let dotted = self.text(name).trim();
                            if child.kind() == flow.imports[0] {
                                dotted.split('.').next().unwrap_or(dotted)
                            } else {
                                dotted.rsplit('.').next().unwrap_or(dotted)
                            }
                        }
                    };
                    facts
                        .assigned
                        .entry(local.to_owned())
                        .or_default()
                        .push((child.start_byte(), (0, 0)));
                }
                continue;
            }
            // `for x in g()`: inside the loop (and after it) `x` holds what
            // the call gives (a generator's `yield`s are its returns).
            if child.kind() == flow.iteration.0 {
                let target = child.child_by_field_name(flow.iteration.1);
                let iterated = child.child_by_field_name(flow.iteration.2);
                if let (Some(target), Some(iterated)) = (target, iterated) {
                    if target.kind() == "identifier" && self.is_call(iterated) {
                        facts.loops.insert(child.start_byte());
                        facts
                            .assigned
                            .entry(self.text(target).trim().to_owned())
                            .or_default()
                            .push((
                                child.start_byte(),
                                (iterated.start_byte(), iterated.end_byte()),
                            ));
                    }
                }
                continue;
            }
            let assignment = if flow.statements.contains(&child.kind()) {
                child.named_child(0)
            } else {
                Some(child)
            };
            if let Some((name, pairs)) = assignment.and_then(|a| self.mapping_update(flow, a)) {
                let at = child.start_byte();
                let list = facts.subscripted.entry(name).or_default();
                list.extend(pairs.into_iter().map(|(k, (s, e))| (at, k, (s, e))));
                continue;
            }
            let Some((assignment, (kind, left, right))) =
                assignment.and_then(|a| assignment_row(flow, a).map(|row| (a, row)))
            else {
                continue;
            };
            // `a = b = v`: every target gets the innermost value.
            let mut targets = Vec::new();
            let mut current = assignment;
            let value = loop {
                targets.extend(current.child_by_field_name(left));
                match current.child_by_field_name(right) {
                    Some(v) if v.kind() == kind => current = v,
                    other => break other,
                }
            };
            let Some(value) = value else { continue };
            let at = child.start_byte();
            for target in targets {
                if target.kind() == flow.subscript.0 {
                    let (Some(name), Some(key)) = (
                        target.child_by_field_name(flow.subscript.1),
                        target.child_by_field_name(flow.subscript.2),
                    ) else {
                        continue;
                    };
                    facts
                        .subscripted
                        .entry(self.text(name).trim().to_owned())
                        .or_default()
                        .push((
                            at,
                            self.text(key).trim().to_owned(),
                            (value.start_byte(), value.end_byte()),
                        ));
                    continue;
                }
                let mut pairs = Vec::new();
                self.unpack(flow, target, value, &mut pairs);
                for (name, index, v) in pairs {
                    let span = (v.start_byte(), v.end_byte());
                    match index {
                        // The rest of an unpacking: a sequence no literal
                        // shows, so its elements are kept as `b[i] = v`.
                        Some(i) => facts.subscripted.entry(name).or_default().push((
                            at,
                            i.to_string(),
                            span,
                        )),
                        None => facts.assigned.entry(name).or_default().push((at, span)),
                    }
                }
            }
        }
        let facts = std::rc::Rc::new(facts);
        self.blocks
            .borrow_mut()
            .insert(parent.id(), std::rc::Rc::clone(&facts));
        facts
    }

    /// `d.update({"k": f})`: `d`, and each key's text with its value.
    fn mapping_update(
        &self,
        flow: &FlowSpec,
        call: Node<'a>,
    ) -> Option<(String, Vec<(String, Span)>)> {
        let method = flow.mapping_update?;
        if !self.is_call(call) {
            return None;
        }
        let (_, attribute, object, name) = flow.attributes;
        let callee = call.child_by_field_name("function")?;
        if callee.kind() != attribute || self.text(callee.child_by_field_name(name)?) != method {
            return None;
        }
        let target = callee.child_by_field_name(object)?;
        if target.kind() != "identifier" {
            return None;
        }
        let args = call.child_by_field_name("arguments")?;
        let mut cursor = args.walk();
        let args: Vec<Node<'a>> = args.named_children(&mut cursor).collect();
        let [mapping] = args[..] else { return None };
        let (kind, pair, key, value) = flow.mapping;
        if mapping.kind() != kind {
            return None;
        }
        let mut cursor = mapping.walk();
        let pairs = mapping
            .named_children(&mut cursor)
            .filter(|p| p.kind() == pair)
            .filter_map(|p| {
                let k = p.child_by_field_name(key)?;
                let v = p.child_by_field_name(value)?;
                Some((
                    self.text(k).trim().to_owned(),
                    (v.start_byte(), v.end_byte()),
                ))
            })
            .collect();
        Some((self.text(target).trim().to_owned(), pairs))
    }

    /// Each name `target` binds with the part of `value` it receives: `a,
    /// (b, c) = f, (g, h)` gives `b` the `g`; `a, *b = f, g, h` gives `b`
    /// `g` at index 0 and `h` at 1.
    fn unpack(
        &self,
        flow: &FlowSpec,
        target: Node<'a>,
        value: Node<'a>,
        out: &mut Vec<(String, Option<usize>, Node<'a>)>,
    ) {
        if target.kind() == "identifier" {
            out.push((self.text(target).trim().to_owned(), None, value));
            return;
        }
        if !flow.sequences.contains(&target.kind()) || !flow.sequences.contains(&value.kind()) {
            return;
        }
        let mut cursor = target.walk();
        let targets: Vec<Node<'a>> = target.named_children(&mut cursor).collect();
        let mut cursor = value.walk();
        let values: Vec<Node<'a>> = value.named_children(&mut cursor).collect();
        let rest = targets.iter().position(|t| t.kind() == flow.rest_target);
        let Some(rest) = rest else {
            if targets.len() == values.len() {
                for (t, v) in targets.into_iter().zip(values) {
                    self.unpack(flow, t, v, out);
                }
            }
            return;
        };
        // Targets before the rest take values from the start, those after
        // it from the end, the rest what is left between.
        let after = targets.len() - rest - 1;
        if values.len() < rest + after {
            return;
        }
        let tail = values.len() - after;
        for (t, v) in targets[..rest].iter().zip(&values[..rest]) {
            self.unpack(flow, *t, *v, out);
        }
        for (t, v) in targets[rest + 1..].iter().zip(&values[tail..]) {
            self.unpack(flow, *t, *v, out);
        }
        let name = targets[rest]
            .named_child(0)
            .filter(|n| n.kind() == "identifier");
        if let Some(name) = name {
            let name = self.text(name).trim().to_owned();
            for (i, v) in values[rest..tail].iter().enumerate() {
                out.push((name.clone(), Some(i), *v));
            }
        }
    }

    /// What `name` is, if declared in a function body around `at`: a
    /// nested function or something else (a class).
    fn defined_locally(&self, at: Node<'a>, name: &str) -> Option<Local> {
        let flow = self.spec.flow.as_ref()?;
        let mut node = at;
        let mut blocks = Vec::new();
        while let Some(parent) = self.up(node) {
            if flow.functions.contains(&parent.kind()) {
                return blocks
                    .into_iter()
                    .find_map(|b| self.block_facts(flow, b).defined.get(name).copied());
            }
            if flow.blocks.contains(&parent.kind()) {
                blocks.push(parent);
            }
            node = parent;
        }
        None
    }

    /// Whether a block around `at` declares a class named `name`.
    pub(crate) fn declares_class(&self, at: Node<'a>, name: &str) -> bool {
        let Some(flow) = self.spec.flow.as_ref() else {
            return false;
        };
        let mut node = at;
        while let Some(parent) = self.up(node) {
            if flow.blocks.contains(&parent.kind()) {
                if let Some(local) = self.block_facts(flow, parent).defined.get(name) {
                    return *local == Local::Class;
                }
            }
            node = parent;
        }
        false
    }

    /// `x` of `self.x`.
    pub(crate) fn this_attribute(&self, node: Node<'a>) -> Option<String> {
        let (_, kind, object, name) = self.spec.flow.as_ref()?.attributes;
        if node.kind() != kind {
            return None;
        }
        let object = self.text(node.child_by_field_name(object)?).trim();
        if !self.spec.this_words.contains(&object) {
            return None;
        }
        Some(self.text(node.child_by_field_name(name)?).trim().to_owned())
    }

    /// What the methods of the class around `at` assign to `self.<name>`.
    pub(crate) fn attribute_values(&self, at: Node<'a>, name: &str) -> Vec<Node<'a>> {
        let Some(flow) = self.spec.flow.as_ref() else {
            return Vec::new();
        };
        let mut class = at;
        while class.kind() != flow.attributes.0 {
            match self.up(class) {
                Some(p) => class = p,
                None => return Vec::new(),
            }
        }
        let mut cache = self.attributes.borrow_mut();
        let map = cache
            .entry(class.id())
            .or_insert_with(|| self.scan_attributes(flow, class));
        map.get(name)
            .into_iter()
            .flatten()
            .filter_map(|(start, end)| class.descendant_for_byte_range(*start, *end))
            .collect()
    }

    fn scan_attributes(
        &self,
        flow: &FlowSpec,
        class: Node<'a>,
    ) -> std::collections::HashMap<String, Vec<(usize, usize)>> {
        let mut out: std::collections::HashMap<String, Vec<(usize, usize)>> =
            std::collections::HashMap::new();
        let mut stack: Vec<Node<'a>> = Vec::new();
        let mut cursor = class.walk();
        stack.extend(class.named_children(&mut cursor));
        while let Some(node) = stack.pop() {
            if node.kind() == flow.attributes.0 {
                continue; // a nested class has its own `self`
            }
            if let Some((kind, left, right)) = assignment_row(flow, node) {
                let target = node.child_by_field_name(left);
                let mut value = node.child_by_field_name(right);
                while let Some(v) = value.filter(|v| v.kind() == kind) {
                    value = v.child_by_field_name(right);
                }
                if let (Some(attribute), Some(value)) =
                    (target.and_then(|t| self.this_attribute(t)), value)
                {
                    out.entry(attribute)
                        .or_default()
                        .push((value.start_byte(), value.end_byte()));
                }
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
        out
    }

    /// The type a variable's value shows (`a, b = A(), B()`: `a` is `A`).
    pub(crate) fn flow_type(&self, at: Node<'a>, name: &str) -> Option<Vec<String>> {
        let iteration = self.spec.flow.as_ref()?.iteration.0;
        self.values_of(at, name, 0)
            .into_iter()
            // `for x in Items()`: `x` is an item, not an `Items`.
            .filter(|v| self.up(*v).is_none_or(|p| p.kind() != iteration))
            .find_map(|v| self.value_type(v))
    }

    /// The type `self.<name>` is given by an assignment in the class.
    pub(crate) fn attribute_type(&self, at: Node<'a>, name: &str) -> Option<Vec<String>> {
        self.attribute_values(at, name)
            .into_iter()
            .find_map(|v| self.value_type(v))
    }

    /// What `container[index]` can hold: the element of a sequence or
    /// mapping literal assigned to it (the one the literal index names, else
    /// each), and what `container[index] = v` statements before put there.
    /// The container is a name or itself a subscript (`a[0][1]`,
    /// `d["k"]["j"]`): then the elements of its elements.
    fn elements_of(&self, container: Node<'a>, index: Option<Node<'a>>) -> Vec<Node<'a>> {
        let Some(flow) = self.spec.flow.as_ref() else {
            return Vec::new();
        };
        let at = container;
        let name = self.text(container).trim();
        let containers = if container.kind() == flow.subscript.0 {
            match container.child_by_field_name(flow.subscript.1) {
                Some(inner) => {
                    let index = container.child_by_field_name(flow.subscript.2);
                    self.elements_of(inner, index)
                }
                None => Vec::new(),
            }
        } else {
            self.values_of(at, name, 0)
        };
        let literal = index
            .filter(|i| flow.literals.contains(&i.kind()))
            .map(|i| self.text(i).trim().to_owned());
        let mut out = Vec::new();
        let mut assigned = Vec::new();
        for container in containers {
            if flow.sequences.contains(&container.kind()) {
                let mut cursor = container.walk();
                let items: Vec<Node<'a>> = container.named_children(&mut cursor).collect();
                match literal.as_deref().and_then(|l| l.parse::<usize>().ok()) {
                    Some(i) => out.extend(items.get(i).copied()),
                    None => out.extend(items),
                }
            } else if container.kind() == flow.mapping.0 {
                let (_, pair, key, value) = flow.mapping;
                let mut cursor = container.walk();
                for p in container.named_children(&mut cursor) {
                    if p.kind() != pair {
                        continue;
                    }
                    let k = p.child_by_field_name(key).map(|k| self.text(k).trim());
                    if literal.as_deref().is_none_or(|l| k == Some(l)) {
                        out.extend(p.child_by_field_name(value));
                    }
                }
            }
        }
        // `name[k] = v` in the statements before the call, in the nearest
        // block that has any.
        let mut node = at;
        while let (true, Some(parent)) = (assigned.is_empty(), self.up(node)) {
            if flow.blocks.contains(&parent.kind()) {
                let facts = self.block_facts(flow, parent);
                // Only what was put there since the name was last bound.
                let bound = facts
                    .assigned
                    .get(name)
                    .and_then(|list| {
                        list.iter()
                            .rev()
                            .find(|(statement, _)| *statement < node.start_byte())
                    })
                    .map(|(statement, _)| *statement);
                for (statement, key, (start, end)) in
                    facts.subscripted.get(name).into_iter().flatten()
                {
                    if *statement < node.start_byte()
                        && bound.is_none_or(|b| *statement > b)
                        && literal.as_ref().is_none_or(|l| l == key)
                    {
                        assigned.extend(parent.descendant_for_byte_range(*start, *end));
                    }
                }
            }
            node = parent;
        }
        // A literal key's last assignment replaces what the literal held.
        match (literal.is_some(), assigned.last()) {
            (true, Some(last)) => vec![*last],
            _ => {
                out.extend(assigned);
                out
            }
        }
    }

    /// The position of `name` among the parameters of the function around
    /// `at` that a call site passes (`self`/`cls` first not counted).
    pub(crate) fn param_position(&self, at: Node<'a>, name: &str) -> Option<(u32, Node<'a>, u8)> {
        let flow = self.spec.flow.as_ref()?;
        let mut node = at;
        let mut depth = 0u8;
        loop {
            let parent = self.up(node)?;
            node = parent;
            if !is_function(flow, parent.kind()) {
                continue;
            }
            // A function sees its own parameters, then those of the
            // functions it is nested in.
            if let Some((position, param)) = self.parameter(flow, parent, name) {
                return Some((position, param, depth));
            }
            depth = depth.checked_add(1)?;
        }
    }

    /// The position and node of `function`'s parameter `name`.
    fn parameter(
        &self,
        flow: &FlowSpec,
        function: Node<'a>,
        name: &str,
    ) -> Option<(u32, Node<'a>)> {
        let params = function.child_by_field_name(flow.parameters_field)?;
        let mut cursor = params.walk();
        let mut position = 0u32;
        for (i, p) in params.named_children(&mut cursor).enumerate() {
            let (_, field) = flow.parameters.iter().find(|(k, _)| *k == p.kind())?;
            let id = match field {
                Some(f) => p.child_by_field_name(f),
                None if p.kind() == "identifier" => Some(p),
                None => p.named_child(0),
            }?;
            let text = self.text(id).trim();
            if i == 0 && self.spec.this_words.contains(&text) {
                continue;
            }
            if text == name {
                return Some((position, p));
            }
            position += 1;
        }
        None
    }

    /// What an argument's value names: a variable what it holds, a
    /// parameter nothing here (what a caller gave), a call of a name what
    /// that returns (`f()`), else the name itself or the anonymous function.
    fn passed_name(&self, value: Node<'a>) -> Option<String> {
        if self.is_call(value) {
            let function = value.child_by_field_name("function")?;
            return Some(format!("{}()", self.segments(function)?.join(".")));
        }
        if value.kind() != "identifier" {
            return self
                .anonymous(value)
                .or_else(|| self.segments(value).map(|s| s.join(".")));
        }
        let name = self.text(value).trim();
        let held = self.values_of(value, name, 0);
        if !held.is_empty() {
            held.into_iter().find_map(|v| {
                self.anonymous(v)
                    .or_else(|| Some(self.segments(v)?.join(".")))
            })
        } else if self.param_position(value, name).is_some() {
            None
        } else {
            Some(name.to_owned())
        }
    }

    /// What each argument names: the name, `key=name` for a keyword, or
    /// empty.
    pub(crate) fn argument_names(&self, args: Node<'a>) -> Vec<String> {
        let Some(flow) = self.spec.flow.as_ref() else {
            return Vec::new();
        };
        let mut cursor = args.walk();
        let mut out = Vec::new();
        for arg in args.named_children(&mut cursor) {
            if arg.kind().ends_with("comment") {
                continue;
            }
            let named = if let Some((_, key, value)) = flow
                .keyword_argument
                .filter(|(kind, _, _)| arg.kind() == *kind)
            {
                match (arg.child_by_field_name(key), arg.child_by_field_name(value)) {
                    // `key=lambda x: …` passes the lambda, `key=v` what `v` holds.
                    (Some(k), Some(v)) => self
                        .passed_name(v)
                        .map(|named| format!("{}={named}", self.text(k).trim())),
                    _ => None,
                }
            } else {
                self.passed_name(arg)
            };
            out.push(named.unwrap_or_default());
        }
        if out.iter().all(String::is_empty) {
            out.clear();
        }
        out
    }
}

impl<'a> RefWalker<'a> {
    /// The name of the anonymous function a value is, through parentheses.
    pub(crate) fn anonymous(&self, value: Node<'a>) -> Option<String> {
        let flow = self.spec.flow.as_ref()?;
        let value = self.unwrap(value);
        flow.anonymous_functions
            .contains(&value.kind())
            .then(|| anonymous_name(value))
    }
}
