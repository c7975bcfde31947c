//! JCG's test cases (`opalj/JCG`) for JavaScript, Java and Python: read as
//! JCG's extractors read them, resolved as PyCG's cases are, and scored
//! per language ([`JcgTruth::score`] says how).

use super::*;

/// Where JCG keeps its test cases: one markdown file per category and
/// language.
pub const JCG_CASES: &str = "jcg_testcases/src/main/resources";

/// A language of JCG's test cases.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Jcg {
    JavaScript,
    Java,
    Python,
}

impl Jcg {
    pub const ALL: [Jcg; 3] = [Jcg::JavaScript, Jcg::Java, Jcg::Python];

    /// Its directory under [`JCG_CASES`], also the info string of its code
    /// blocks.
    fn dir(self) -> &'static str {
        match self {
            Jcg::JavaScript => "js",
            Jcg::Java => "java",
            Jcg::Python => "python",
        }
    }

    /// What starts a code block's path line, and whether a space must
    /// follow it (`JSTestExtractor`: `// ?`, `JavaTestExtractor`: `// `,
    /// `PyTestExtractor`: `# ?`).
    fn comment(self) -> (&'static str, bool) {
        match self {
            Jcg::JavaScript => ("//", false),
            Jcg::Java => ("//", true),
            Jcg::Python => ("#", false),
        }
    }
}

/// One JCG test case: a `##` section of `<category>.md`, its files as the
/// extractor writes them, and what it expects.
struct JcgCase {
    category: String,
    name: String,
    files: Vec<(String, String)>,
    links: Vec<Link>,
}

/// An expected edge as JCG writes it, before it is mapped to the graph.
enum Link {
    /// JavaScript, Python: a `directLinks` pair (caller, callee), or a
    /// callee of `indirectLinks`, called from anywhere (no caller).
    Named(Option<String>, String),
    /// Java: a `@DirectCall` or `@IndirectCall`.
    Annotated(Annotation),
}

/// A Java `@DirectCall` or `@IndirectCall`.
struct Annotation {
    file: String,
    /// The line it starts on.
    line: u32,
    /// The name of the method or constructor it annotates.
    on: String,
    /// The callee's name (`<init>`: a constructor).
    name: String,
    /// The types declaring the expected callees, and those declaring
    /// prohibited ones, in JVM notation (`Lvc/SubClass;`).
    resolved: Vec<String>,
    prohibited: Vec<String>,
    /// `@IndirectCall`: called maybe through other methods (JCG asks for
    /// a path in the call graph).
    indirect: bool,
}

/// Scores JCG's cases of one language and prints the tables.
pub fn score_jcg(root: &Path, language: Jcg) {
    let cases = read_jcg_cases(root, language);
    let show = std::env::var("BENCH_CALLGRAPH_SHOW").is_ok_and(|v| v == "1");
    println!(
        "\n# JCG {} at {}: {} cases",
        language.dir(),
        git_head(root),
        cases.len()
    );
    let mut extractor = Extractor::new().expect("grammars");
    let mut total = JcgScore::default();
    let mut by_category: BTreeMap<String, JcgScore> = BTreeMap::new();
    for case in &cases {
        let graph = case_graph(&mut extractor, &case.files);
        let truth = JcgTruth::of(case, &graph);
        let (score, notes) = truth.score(&graph);
        if show && !notes.is_empty() {
            println!("\n## {}/{}/{}", language.dir(), case.category, case.name);
            for note in notes {
                println!("  {note}");
            }
        }
        by_category
            .entry(case.category.clone())
            .or_default()
            .add(&score);
        total.add(&score);
    }
    println!();
    println!("| level | precision | precision, callees with a body | precision, every call of those callers | recall | recall, module callers | recall, function callers | cases passed (JCG's verdict) |");
    println!("|---|---|---|---|---|---|---|---|");
    for level in Resolution::ALL {
        let l = at(level);
        println!(
            "| ≤ {} | {} | {} | {} | {} | {} | {} | {} |",
            level.as_str(),
            ratio(total.judged_right[l], total.judged[l]),
            ratio(total.bodied_right[l], total.bodied[l]),
            ratio(total.calls_right[l], total.calls[l]),
            ratio(total.hit[l], total.truth),
            ratio(total.hit_module[l], total.truth_module),
            ratio(
                total.hit[l] - total.hit_module[l],
                total.truth - total.truth_module
            ),
            ratio(total.passed[l], total.verdicts),
        );
    }
    let mut unmapped = total.unmapped.values().sum::<usize>().to_string();
    if !total.unmapped.is_empty() {
        let why: Vec<String> = total
            .unmapped
            .iter()
            .map(|(why, n)| format!("{n} {why}"))
            .collect();
        unmapped = format!("{unmapped} ({})", why.join(", "));
    }
    println!(
        "\nexpected edges: {} ({} from module code); with an end no node of ours can be, \
         counted as missed: {unmapped}; with an end outside the case's code, left out: {}; \
         our edges to a prohibited target: {} ≤ scoped, {} in all",
        total.truth,
        total.truth_module,
        total.outside,
        total.prohibited[at(Resolution::Scoped)],
        total.prohibited[at(Resolution::Ambiguous)],
    );
    println!("\n| category | cases | edges | unmappable | precision ≤ scoped | recall ≤ scoped | precision, all | recall, all |");
    println!("|---|---|---|---|---|---|---|---|");
    let (scoped, all) = (at(Resolution::Scoped), at(Resolution::Ambiguous));
    for (category, s) in &by_category {
        println!(
            "| {category} | {} | {} | {} | {} | {} | {} | {} |",
            s.cases,
            s.truth,
            s.unmapped.values().sum::<usize>(),
            ratio(s.judged_right[scoped], s.judged[scoped]),
            ratio(s.hit[scoped], s.truth),
            ratio(s.judged_right[all], s.judged[all]),
            ratio(s.hit[all], s.truth),
        );
    }
}

/// JCG's cases of `language` in the checkout `root`.
fn read_jcg_cases(root: &Path, language: Jcg) -> Vec<JcgCase> {
    let mut mds: Vec<PathBuf> = list(&root.join(JCG_CASES).join(language.dir()))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    mds.sort();
    let mut cases = Vec::new();
    for md in mds {
        let category = md.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&md).expect("test cases");
        for (name, body) in jcg_sections(&text) {
            let mut case = JcgCase {
                category: category.clone(),
                name,
                files: Vec::new(),
                links: Vec::new(),
            };
            for block in jcg_blocks(body, language) {
                case.links
                    .extend(block.json.map(json_links).unwrap_or_default());
                if language == Jcg::Java {
                    let annotations = java_annotations(&block.path, &block.code);
                    case.links
                        .extend(annotations.into_iter().map(Link::Annotated));
                }
                case.files.push((block.path, block.code));
            }
            cases.push(case);
        }
    }
    cases
}

/// The sections `TestCaseExtractor.reHeaders` finds: `##NAME`, a line
/// `[//]: # (MAIN: x)` or `[//]: # (LIBRARY)`, and the body up to the next
/// `[//]: # (END)`; (name, body).
fn jcg_sections(md: &str) -> Vec<(String, &str)> {
    let mut sections = Vec::new();
    let mut at = 0;
    while let Some(start) = md[at..].find("##").map(|i| at + i) {
        match jcg_section_at(md, start) {
            Some((name, body, end)) => {
                sections.push((name, body));
                at = end;
            }
            None => at = start + 1,
        }
    }
    sections
}

/// The section whose `##` is at `start`: its name, its body and where it
/// ends.
fn jcg_section_at(md: &str, start: usize) -> Option<(String, &str, usize)> {
    const END: &str = "[//]: # (END)";
    let (name, rest) = md[start + 2..].split_once('\n')?;
    let (marker, rest) = rest.split_once('\n')?;
    let main = marker
        .strip_prefix("[//]: # (MAIN: ")
        .is_some_and(|m| m.ends_with(')'));
    if !main && marker != "[//]: # (LIBRARY)" {
        return None;
    }
    let body = &rest[..rest.find(END)?];
    let end = md.len() - rest.len() + body.len() + END.len();
    Some((name.trim().to_owned(), body, end))
}

/// A code block of a case, as the extractor reads it.
struct Block<'a> {
    /// The expected call graph in a `json` block right before it
    /// (JavaScript, Python).
    json: Option<&'a str>,
    path: String,
    code: String,
}

/// The code blocks the extractor's `reBody` finds in a section's body: a
/// block of the language whose first line is a comment naming its path
/// (`// dir/File.js`), maybe right after a `json` block. The file is the
/// code without that line: its line 1 is the line after the comment, as
/// the expected edges count lines.
fn jcg_blocks(body: &str, language: Jcg) -> Vec<Block<'_>> {
    let mut blocks = Vec::new();
    let mut at = 0;
    while let Some(start) = body[at..].find("```").map(|i| at + i) {
        match jcg_block_at(&body[start + 3..], language) {
            Some((block, len)) => {
                blocks.push(block);
                at = start + 3 + len;
            }
            None => at = start + 1,
        }
    }
    blocks
}

/// The block whose opening fence ends where `s` starts (a `json` block
/// first, when one leads to a code block), and how much of `s` it takes.
fn jcg_block_at(s: &str, language: Jcg) -> Option<(Block<'_>, usize)> {
    if let Some(json) = s.strip_prefix("json\n").filter(|_| language != Jcg::Java) {
        let end = json.find('`').unwrap_or(json.len());
        if let Some(rest) = json[end..].strip_prefix("```\n```") {
            if let Some((mut block, len)) = jcg_code_at(rest, language) {
                block.json = Some(&json[..end]);
                return Some((block, s.len() - rest.len() + len));
            }
        }
    }
    jcg_code_at(s, language)
}

/// A code block whose info string starts `s`, and how much of `s` it
/// takes. Every path JCG writes names a directory: without one, the
/// extractor's `[^/]*` would run on into the code.
fn jcg_code_at(s: &str, language: Jcg) -> Option<(Block<'_>, usize)> {
    let (comment, space) = language.comment();
    let rest = s
        .strip_prefix(language.dir())?
        .strip_prefix('\n')?
        .strip_prefix(comment)?;
    let rest = match rest.strip_prefix(' ') {
        Some(rest) => rest,
        None if space => return None,
        None => rest,
    };
    let (path, rest) = rest.split_once('\n')?;
    let end = rest.find('`')?;
    if !path.contains('/') || !rest[end..].starts_with("```") {
        return None;
    }
    let block = Block {
        json: None,
        path: path.to_owned(),
        code: rest[..end].to_owned(),
    };
    Some((block, s.len() - rest.len() + end + 3))
}

/// The links of an expected call graph (`ExpectedCG`): `directLinks`
/// pairs, and the callees of `indirectLinks`. A trailing comma (one case
/// has one) is read over.
fn json_links(json: &str) -> Vec<Link> {
    let value: serde_json::Value =
        serde_json::from_str(&without_trailing_commas(json)).expect("expected call graph");
    let mut links = Vec::new();
    for link in value["directLinks"].as_array().into_iter().flatten() {
        let ends: Vec<&str> = link
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| Some(e.as_str()?.trim()))
            .collect();
        if let [caller, callee] = ends[..] {
            links.push(Link::Named(Some(caller.to_owned()), callee.to_owned()));
        }
    }
    for link in value["indirectLinks"].as_array().into_iter().flatten() {
        if let Some(callee) = link.as_str().or_else(|| link.as_array()?.first()?.as_str()) {
            links.push(Link::Named(None, callee.trim().to_owned()));
        }
    }
    links
}

/// `json` without the commas that close a list or an object.
fn without_trailing_commas(json: &str) -> String {
    let trailing: BTreeSet<usize> = unquoted(json)
        .filter(|&(i, c)| c == ',' && json[i + 1..].trim_start().starts_with([']', '}']))
        .map(|(i, _)| i)
        .collect();
    json.char_indices()
        .filter(|(i, _)| !trailing.contains(i))
        .map(|(_, c)| c)
        .collect()
}

/// The characters of `s` outside string literals (`"a, b"`), with their
/// positions.
fn unquoted(s: &str) -> impl Iterator<Item = (usize, char)> + '_ {
    let (mut quoted, mut escaped) = (false, false);
    s.char_indices().filter(move |&(_, c)| {
        let outside = !quoted && c != '"';
        if quoted {
            quoted = escaped || c != '"';
            escaped = !escaped && c == '\\';
        } else {
            quoted = c == '"';
        }
        outside
    })
}

/// The `@DirectCall` and `@IndirectCall` annotations of a Java file, those
/// inside `@DirectCalls({..})` and `@IndirectCalls({..})` too.
fn java_annotations(path: &str, code: &str) -> Vec<Annotation> {
    let mut annotations = Vec::new();
    let mut at = 0;
    while let Some(start) = code[at..].find('@').map(|i| at + i) {
        at = start + 1;
        let rest = &code[start + 1..];
        let name_end = rest.find(|c: char| !is_java_name(c)).unwrap_or(rest.len());
        let indirect = match &rest[..name_end] {
            "DirectCall" => false,
            "IndirectCall" => true,
            _ => continue,
        };
        let Some(args) = rest[name_end..].trim_start().strip_prefix('(') else {
            continue;
        };
        let Some(len) = closing_paren(args) else {
            continue;
        };
        let mut annotation = Annotation {
            file: path.to_owned(),
            line: 1 + code[..start].matches('\n').count() as u32,
            on: declared_name(&args[len + 1..]),
            name: String::new(),
            resolved: Vec::new(),
            prohibited: Vec::new(),
            indirect,
        };
        for arg in split_args(&args[..len]) {
            let Some((key, value)) = arg.split_once('=') else {
                continue;
            };
            let strings = string_literals(value);
            match key.trim() {
                "name" => annotation.name = strings.into_iter().next().unwrap_or_default(),
                "resolvedTargets" => annotation.resolved = strings,
                "prohibitedTargets" => annotation.prohibited = strings,
                _ => {}
            }
        }
        annotations.push(annotation);
    }
    annotations
}

fn is_java_name(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Where the `)` closing a list that starts `s` is, past strings and
/// nested parentheses.
fn closing_paren(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    let (at, _) = unquoted(s).find(|&(_, c)| match c {
        '(' => {
            depth += 1;
            false
        }
        ')' if depth == 0 => true,
        ')' => {
            depth -= 1;
            false
        }
        _ => false,
    })?;
    Some(at)
}

/// An annotation's arguments: split at the commas outside strings,
/// parentheses and braces.
fn split_args(s: &str) -> Vec<&str> {
    let (mut args, mut depth, mut from) = (Vec::new(), 0usize, 0);
    for (i, c) in unquoted(s) {
        match c {
            '(' | '{' => depth += 1,
            ')' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                args.push(&s[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    args.push(&s[from..]);
    args
}

/// The string literals of an annotation's value (`"a"`, `{"a", "b"}`).
fn string_literals(s: &str) -> Vec<String> {
    s.split('"').skip(1).step_by(2).map(str::to_owned).collect()
}

/// The name of the declaration that follows an annotation: the name before
/// the first `(` once further annotations, the rest of an enclosing
/// `@DirectCalls({..})` and comments are passed.
fn declared_name(s: &str) -> String {
    let mut s = s;
    loop {
        s = s.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, ',' | '}' | ')'));
        if let Some(rest) = s.strip_prefix("//") {
            s = rest.split_once('\n').map_or("", |(_, r)| r);
        } else if let Some(rest) = s.strip_prefix("/*") {
            s = rest.split_once("*/").map_or("", |(_, r)| r);
        } else if let Some(rest) = s.strip_prefix('@') {
            let rest = rest
                .trim_start_matches(|c: char| is_java_name(c) || c == '.')
                .trim_start();
            s = match rest.strip_prefix('(') {
                Some(args) => closing_paren(args).map_or("", |end| &args[end + 1..]),
                None => rest,
            };
        } else {
            break;
        }
    }
    let head = s[..s.find('(').unwrap_or(s.len())].trim_end();
    let start = head
        .char_indices()
        .rev()
        .find(|(_, c)| !is_java_name(*c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    head[start..].to_owned()
}

/// A node of a case's graph: a declaration of one of its files.
struct Node {
    path: String,
    def: diffidx_core::codegraph::Def,
}

impl Node {
    /// How the bench shows it: `path:line:qualname`.
    fn show(&self) -> String {
        format!("{}:{}:{}", self.path, self.def.lines.0, self.def.qualname)
    }

    fn is_module(&self) -> bool {
        self.def.qualname == diffidx_core::codegraph::MODULE_QUALNAME
    }

    fn is_callable(&self) -> bool {
        use diffidx_core::SymbolKind as K;
        matches!(
            self.def.kind,
            K::Method | K::Function | K::Constructor | K::Operator
        )
    }

    fn is_type(&self) -> bool {
        use diffidx_core::SymbolKind as K;
        matches!(
            self.def.kind,
            K::Class | K::Interface | K::Enum | K::Record | K::Struct
        )
    }

    /// Its qualname without a twin's number.
    fn qualname(&self) -> &str {
        diffidx_core::qualname::split_twin(&self.def.qualname).0
    }
}

/// A case's graph: its nodes by id, and its CALLS edges, each pair with
/// its most certain level.
struct CaseGraph {
    nodes: BTreeMap<String, Node>,
    edges: BTreeMap<Pair, Resolution>,
}

impl CaseGraph {
    /// The ids of the nodes `keep` keeps.
    fn ids(&self, keep: impl Fn(&Node) -> bool) -> BTreeSet<String> {
        self.nodes
            .iter()
            .filter(|(_, n)| keep(n))
            .map(|(id, _)| id.clone())
            .collect()
    }
}

/// The case's tree resolved as the graph resolves a tree.
fn case_graph(extractor: &mut Extractor, files: &[(String, String)]) -> CaseGraph {
    let tree = source_tree(extractor, files);
    let mut nodes = BTreeMap::new();
    for (path, file) in &tree {
        for def in &file.facts.defs {
            let id = symbol_id(path, def.kind, &def.qualname, &def.sig);
            let path = path.clone();
            let def = def.clone();
            nodes.insert(id, Node { path, def });
        }
    }
    let index = DefIndex::new(&tree);
    let mut edges: BTreeMap<Pair, Resolution> = BTreeMap::new();
    for path in tree.keys() {
        for edge in index.resolve_file(path).edges {
            if edge.kind == EdgeKind::Calls {
                let level = edges.entry((edge.from, edge.to)).or_insert(edge.resolution);
                *level = (*level).min(edge.resolution);
            }
        }
    }
    CaseGraph { nodes, edges }
}

/// An expected edge on a case's graph: each end as the nodes it may be
/// (JCG matches a name without a line to every declaration of that name,
/// and `<global>` to the module code of any file).
struct Expected {
    /// As JCG names it.
    label: String,
    /// `None`: any caller (an indirect link).
    callers: Option<BTreeSet<String>>,
    callees: BTreeSet<String>,
    /// The name of the callees, which precision judges the callers' edges
    /// by.
    name: Option<String>,
    module: bool,
    /// Found along a path of edges (a Java `@IndirectCall`).
    transitive: bool,
    /// Why an end can be no node of ours.
    unmapped: Option<&'static str>,
}

/// What a case expects, on its graph.
struct JcgTruth {
    expected: Vec<Expected>,
    /// Edges to a target an annotation prohibits (Java).
    prohibited: BTreeSet<Pair>,
    /// Expected edges with an end outside the case's code (`Native.*`, a
    /// JDK type): no repository's graph has them.
    outside: usize,
}

impl JcgTruth {
    fn of(case: &JcgCase, graph: &CaseGraph) -> JcgTruth {
        let mut truth = JcgTruth {
            expected: Vec::new(),
            prohibited: BTreeSet::new(),
            outside: 0,
        };
        // Java packages the case declares: a type in another is the JDK's.
        let packages: BTreeSet<&str> = case
            .files
            .iter()
            .map(|(_, code)| {
                code.lines()
                    .find_map(|l| l.trim().strip_prefix("package "))
                    .map_or("", |p| p.trim_end_matches(';').trim())
            })
            .collect();
        for link in &case.links {
            match link {
                Link::Named(caller, callee) => {
                    truth.add_named(case, graph, caller.as_deref(), callee)
                }
                Link::Annotated(a) => truth.add_annotated(graph, &packages, a),
            }
        }
        truth
    }

    /// A JavaScript or Python link. A builtin's call of a function of the
    /// case (`Native.map` → `B2.foo`) is scored as the graph has it: from
    /// each caller of that builtin (the function passed to `map`).
    fn add_named(&mut self, case: &JcgCase, graph: &CaseGraph, caller: Option<&str>, callee: &str) {
        if callee.starts_with("Native.") {
            self.outside += 1;
            return;
        }
        let callers: Vec<(Option<&str>, String)> = match caller {
            Some(native) if native.starts_with("Native.") => case
                .links
                .iter()
                .filter_map(|l| match l {
                    Link::Named(Some(c), to) if to == native && !c.starts_with("Native.") => {
                        Some((
                            Some(c.as_str()),
                            format!("{c} -> {callee} (through {native})"),
                        ))
                    }
                    _ => None,
                })
                .collect(),
            Some(c) => vec![(Some(c), format!("{c} -> {callee}"))],
            None => vec![(None, format!("* -> {callee}"))],
        };
        if callers.is_empty() {
            self.outside += 1;
        }
        for (caller, label) in callers {
            let callees = named_nodes(graph, callee, false);
            let callers = caller.map(|c| named_nodes(graph, c, true));
            let unmapped = callers
                .as_ref()
                .and_then(|c| c.as_ref().err())
                .or(callees.as_ref().err())
                .copied();
            self.expected.push(Expected {
                label,
                callers: callers.map(Result::unwrap_or_default),
                callees: callees.unwrap_or_default(),
                name: plain_name(callee),
                module: caller == Some("<global>"),
                transitive: false,
                unmapped,
            });
        }
    }

    /// A Java annotation: an expected edge per resolved target the case
    /// declares.
    fn add_annotated(&mut self, graph: &CaseGraph, packages: &BTreeSet<&str>, a: &Annotation) {
        let caller = graph
            .nodes
            .iter()
            .filter(|(_, n)| {
                n.path == a.file
                    && n.is_callable()
                    && n.def.name == a.on
                    && (n.def.lines.0..=n.def.lines.1).contains(&a.line)
            })
            .max_by_key(|(_, n)| n.def.lines.0)
            .map(|(id, _)| id.clone());
        let in_case = |t: &&String| packages.contains(jvm_package(t).as_str());
        for target in &a.resolved {
            if !in_case(&target) {
                self.outside += 1;
                continue;
            }
            let (callees, name) = java_targets(graph, target, &a.name);
            let unmapped = if caller.is_none() {
                Some("annotated declaration not a symbol")
            } else if callees.is_empty() {
                Some("target its type does not declare")
            } else {
                None
            };
            self.expected.push(Expected {
                label: format!(
                    "{}:{} {} -> {}.{}",
                    a.file,
                    a.line,
                    a.on,
                    jvm_type(target),
                    a.name
                ),
                callers: Some(caller.iter().cloned().collect()),
                callees,
                name: Some(name),
                module: false,
                transitive: a.indirect,
                unmapped,
            });
        }
        let Some(caller) = caller else {
            return;
        };
        for target in a.prohibited.iter().filter(in_case) {
            for callee in java_targets(graph, target, &a.name).0 {
                self.prohibited.insert((caller.clone(), callee));
            }
        }
    }

    /// The case's score, and its notes: the expected edges missed or found
    /// only above scoped, the wrong edges, and the other edges of the
    /// callers the truth names.
    ///
    /// Recall: an expected edge is found at a level when an edge of that
    /// level or a more certain one links one of its callers to one of its
    /// callees (for an `@IndirectCall`, a path of such edges; for an
    /// indirect link, any caller). An edge with an end no node of ours can
    /// be (an anonymous or nested function, module code before the graph
    /// had module nodes, a Java target its type does not declare) is
    /// missed, and counted apart.
    ///
    /// Precision judges our edges from a caller the truth names to a callee
    /// bearing the name of a callee the truth expects from that caller (a
    /// Java annotation's `name`), and the edges to a Java
    /// `prohibitedTargets` method: of the declarations of that name, did
    /// the graph link the expected ones? A judged edge is right when it
    /// links an expected edge's caller and callee. JCG lists the calls a
    /// case tests, not every call (JavaScript's C2 expects `f.test()` from
    /// module code, not the `new Foo(1)` before it), so the callers' edges
    /// to other names are neither right nor wrong: "every call of those
    /// callers" counts them as wrong, a lower bound.
    fn score(&self, graph: &CaseGraph) -> (JcgScore, Vec<String>) {
        let mut s = JcgScore {
            cases: 1,
            truth: self.expected.len(),
            outside: self.outside,
            ..JcgScore::default()
        };
        let mut notes = Vec::new();
        for e in &self.expected {
            if e.module {
                s.truth_module += 1;
            }
            if let Some(why) = e.unmapped {
                *s.unmapped.entry(why).or_default() += 1;
                notes.push(format!("missed  {} (unmappable: {why})", e.label));
                continue;
            }
            let level = Resolution::ALL
                .into_iter()
                .find(|&level| e.found_with(graph, level));
            for l in level.map_or(4, at)..4 {
                s.hit[l] += 1;
                if e.module {
                    s.hit_module[l] += 1;
                }
            }
            match level {
                None => notes.push(format!("missed  {}", e.label)),
                Some(level) if level > Resolution::Scoped => {
                    notes.push(format!("weak    {} ({})", e.label, level.as_str()))
                }
                Some(_) => {}
            }
        }
        let callers: BTreeSet<&String> = self
            .expected
            .iter()
            .flat_map(|e| e.callers.iter().flatten())
            .collect();
        let judged: BTreeSet<(&String, &str)> = self
            .expected
            .iter()
            .filter_map(|e| Some((e.callers.as_ref()?, e.name.as_deref()?)))
            .flat_map(|(callers, name)| callers.iter().map(move |c| (c, name)))
            .collect();
        let mut others = Vec::new();
        for ((from, to), level) in &graph.edges {
            if !callers.contains(from) {
                continue;
            }
            let right = self.expected.iter().any(|e| {
                e.callers.as_ref().is_none_or(|c| c.contains(from)) && e.callees.contains(to)
            });
            let prohibited = self.prohibited.contains(&(from.clone(), to.clone()));
            let name = graph.nodes.get(to).map_or("", |n| n.def.name.as_str());
            let is_judged = prohibited || judged.contains(&(from, name));
            // A callee declared without a body (an interface's method) is
            // what the call names, not what it runs: left out of the
            // runtime graph's precision.
            let bodied = is_judged && graph.nodes.get(to).is_none_or(|n| !n.def.bodiless);
            for l in at(*level)..4 {
                s.calls[l] += 1;
                s.calls_right[l] += usize::from(right);
                s.judged[l] += usize::from(is_judged);
                s.judged_right[l] += usize::from(is_judged && right);
                s.bodied[l] += usize::from(bodied);
                s.bodied_right[l] += usize::from(bodied && right);
                s.prohibited[l] += usize::from(prohibited);
            }
            if !right {
                let show = |id: &String| graph.nodes.get(id).map_or_else(|| id.clone(), Node::show);
                let body = if bodied || !is_judged {
                    ""
                } else {
                    ", no body"
                };
                let edge = format!("{} -> {} ({}{body})", show(from), show(to), level.as_str());
                match (prohibited, is_judged) {
                    (true, _) => notes.push(format!("wrong   {edge}, a prohibited target")),
                    (false, true) => notes.push(format!("wrong   {edge}")),
                    (false, false) => others.push(format!("other   {edge}")),
                }
            }
        }
        if !notes.is_empty() {
            notes.extend(others);
        }
        // A case whose every edge is outside its code (the JDK's) is not
        // judged.
        s.verdicts = usize::from(s.truth > 0);
        for l in 0..4 {
            s.passed[l] = s.verdicts * usize::from(s.hit[l] == s.truth && s.prohibited[l] == 0);
        }
        (s, notes)
    }
}

impl Expected {
    /// Whether the edges of `level` and more certain ones have it.
    fn found_with(&self, graph: &CaseGraph, level: Resolution) -> bool {
        let mut edges = graph
            .edges
            .iter()
            .filter(|(_, l)| **l <= level)
            .map(|(p, _)| p);
        let Some(callers) = &self.callers else {
            return edges.any(|(_, to)| self.callees.contains(to));
        };
        if !self.transitive {
            return edges.any(|(from, to)| callers.contains(from) && self.callees.contains(to));
        }
        let edges: Vec<&Pair> = edges.collect();
        let mut seen: BTreeSet<&String> = callers.iter().collect();
        let mut todo: Vec<&String> = seen.iter().copied().collect();
        while let Some(node) = todo.pop() {
            for (_, to) in edges.iter().filter(|(from, _)| from == node) {
                if self.callees.contains(to) {
                    return true;
                }
                if seen.insert(to) {
                    todo.push(to);
                }
            }
        }
        false
    }
}

/// The nodes a JCG name (JavaScript, Python) may be, as a caller or as a
/// callee, or why none can be:
/// - `<global>`: the module code of any file: its module node and, in
///   JavaScript, its top-level variables (`const f = new Foo(1)` is a
///   symbol of its own, the caller of its initializer's calls);
/// - `F.a.b`: the callables of a file with stem `F` whose qualname ends
///   with `a.b`;
/// - `F.b:7`: as a callee, those starting on line 7; as a caller, those
///   holding line 7 (JCG gives a caller the line of its call: `C5.foo:18`
///   calls from line 18 of a `foo` declared on line 17);
/// - `F.<anonymous:7>`: any callable starting on line 7.
fn named_nodes(
    graph: &CaseGraph,
    name: &str,
    caller: bool,
) -> Result<BTreeSet<String>, &'static str> {
    let pick = |keep: &dyn Fn(&Node) -> bool, why| {
        let found = graph.ids(keep);
        if found.is_empty() {
            Err(why)
        } else {
            Ok(found)
        }
    };
    if name == "<global>" {
        let module = |n: &Node| {
            n.is_module()
                || (n.def.kind == diffidx_core::SymbolKind::Variable && n.def.parent.is_none())
        };
        return pick(&module, "module code without a node");
    }
    let (stem, rest) = name.split_once('.').unwrap_or((name, ""));
    let in_file = |n: &Node| {
        n.is_callable() && n.path.rsplit('/').next().and_then(|f| f.split('.').next()) == Some(stem)
    };
    if let Some(line) = rest
        .strip_prefix("<anonymous:")
        .and_then(|l| l.strip_suffix('>'))
    {
        let line: u32 = line.parse().unwrap_or(0);
        return pick(
            &|n| in_file(n) && n.def.lines.0 == line,
            "anonymous function",
        );
    }
    let (path, line) = match rest
        .rsplit_once(':')
        .and_then(|(p, l)| Some((p, l.parse::<u32>().ok()?)))
    {
        Some((path, line)) => (path, Some(line)),
        None => (rest, None),
    };
    let at_line = |n: &Node, line: u32| {
        if caller {
            (n.def.lines.0..=n.def.lines.1).contains(&line)
        } else {
            n.def.lines.0 == line
        }
    };
    pick(
        &|n| {
            let q = n.qualname();
            in_file(n)
                && (q == path || q.ends_with(&format!(".{path}")))
                && line.is_none_or(|l| at_line(n, l))
        },
        "nested function or function value",
    )
}

/// The function name of a JCG name: `C3.Foo.bar:7` → `bar`.
fn plain_name(name: &str) -> Option<String> {
    let last = name.split_once('.')?.1.rsplit('.').next()?;
    let last = last.split(':').next()?;
    (!last.starts_with('<')).then(|| last.to_owned())
}

/// The methods named `name` that the type `descriptor` (`Lvc/Class;`)
/// declares (`<init>`: its constructors, or the type itself, which the
/// graph links constructions of a type without constructors to), and the
/// name they bear.
fn java_targets(graph: &CaseGraph, descriptor: &str, name: &str) -> (BTreeSet<String>, String) {
    let ty = jvm_type(descriptor);
    let simple = ty.rsplit('.').next().unwrap_or(&ty).to_owned();
    if name != "<init>" {
        let qualname = format!("{ty}.{name}");
        let methods = graph.ids(|n| n.is_callable() && n.qualname() == qualname);
        return (methods, name.to_owned());
    }
    let qualname = format!("{ty}.{simple}");
    let constructors = graph
        .ids(|n| n.def.kind == diffidx_core::SymbolKind::Constructor && n.qualname() == qualname);
    if constructors.is_empty() {
        (graph.ids(|n| n.is_type() && n.qualname() == ty), simple)
    } else {
        (constructors, simple)
    }
}

/// `Lvc/Outer$Inner;` → `vc.Outer.Inner`.
fn jvm_type(descriptor: &str) -> String {
    let name = descriptor.strip_prefix('L').unwrap_or(descriptor);
    name.trim_end_matches(';').replace(['/', '$'], ".")
}

/// `Lvc/Class;` → `vc`.
fn jvm_package(descriptor: &str) -> String {
    let name = descriptor.strip_prefix('L').unwrap_or(descriptor);
    name.rsplit_once('/')
        .map_or(String::new(), |(package, _)| package.replace('/', "."))
}

/// JCG's figures, for a case or summed. Per level (index in
/// `Resolution::ALL`), each with the more certain ones.
#[derive(Default)]
struct JcgScore {
    cases: usize,
    truth: usize,
    truth_module: usize,
    outside: usize,
    /// Expected edges no node of ours can have, by why.
    unmapped: BTreeMap<&'static str, usize>,
    /// Expected edges found, those from module code.
    hit: [usize; 4],
    hit_module: [usize; 4],
    /// Our judged edges ([`JcgTruth::score`]), the right ones.
    judged: [usize; 4],
    judged_right: [usize; 4],
    /// The judged edges to a callee with a body (what runs), the right
    /// ones.
    bodied: [usize; 4],
    bodied_right: [usize; 4],
    /// Every edge of the callers the truth names, the right ones.
    calls: [usize; 4],
    calls_right: [usize; 4],
    /// Edges to a target an annotation prohibits.
    prohibited: [usize; 4],
    /// Cases passed as JCG itself judges one: every expected edge found,
    /// no edge to a prohibited target (other edges are not judged), of
    /// the cases with an expected edge in their code (`verdicts`).
    passed: [usize; 4],
    verdicts: usize,
}

impl JcgScore {
    fn add(&mut self, o: &JcgScore) {
        self.cases += o.cases;
        self.truth += o.truth;
        self.truth_module += o.truth_module;
        self.outside += o.outside;
        for (why, n) in &o.unmapped {
            *self.unmapped.entry(why).or_default() += n;
        }
        for l in 0..4 {
            self.hit[l] += o.hit[l];
            self.hit_module[l] += o.hit_module[l];
            self.judged[l] += o.judged[l];
            self.judged_right[l] += o.judged_right[l];
            self.bodied[l] += o.bodied[l];
            self.bodied_right[l] += o.bodied_right[l];
            self.calls[l] += o.calls[l];
            self.calls_right[l] += o.calls_right[l];
            self.prohibited[l] += o.prohibited[l];
            self.passed[l] += o.passed[l];
        }
        self.verdicts += o.verdicts;
    }
}
