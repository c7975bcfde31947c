//! Method histories against public oracles: `cargo bench --bench history`.
//!
//! Oracles others built by hand list, for a method at a start commit, every
//! commit that changed it down to its introduction. This bench asks `git
//! diffidx log` the same question and scores the commits it answers with:
//!
//! - `BENCH_HISTORY_CODETRACKER`: a checkout or bare clone of
//!   `jodavimehran/code-tracker`; its `oracle/method/training/` (Java);
//! - `BENCH_HISTORY_CODESHOVEL`: one of `ataraxie/codeshovel`; its Java and
//!   Python oracles without the `Z_` prefix (the training ones);
//! - `BENCH_HISTORY_REPOS`: a directory holding the subject repositories
//!   (bare mirrors too), as `OWNER+NAME/repo` (how `fetch` lays them out),
//!   `OWNER+NAME` or `NAME`; a subject not there is skipped and named;
//! - `BENCH_HISTORY_ONLY=NAME,...`: only these subjects (`junit4,flask`);
//! - `BENCH_HISTORY_SHOW=1`: each method's missed and extra commits.
//!
//! Only the training parts are read: the held-out ones (CodeShovel's `Z_`
//! files, CodeTracker's `test/`) are kept for independent checking. No
//! oracle data is kept in this repository.
//!
//! Per subject and start commit, a `--shared` clone checked out at the
//! start is indexed whole; each method is asked for by position, `log
//! FILE:LINE START --json` (the innermost symbol holding the oracle's line,
//! the line of the method's name; its newest entry must carry that name),
//! and again with `--full-history` and `--first-parent`.
//! Commit-level precision and recall are summed over methods; a history is
//! exact when both sets are equal. A change the oracle credits to a merge
//! counts as found at the merge or at a commit it names as its alternative.
//! Figures are given against every commit of the oracle, and without those
//! the oracle types as documentation or formatting only (which this tool
//! ignores by design; CodeShovel's Python oracle types a docstring edit as a
//! body change, so these stay in); the last also with a merge and the
//! commits it brought into its first parent's line taken as one change (see
//! [`Branches`]).

#[path = "process/mod.rs"]
#[allow(dead_code)] // shared by the benches; each uses part of it
mod process;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use process::{bin, git};

/// How `log` is asked to walk: its default (git's simplified history),
/// every change, the main line.
const WALKS: [Option<&str>; 3] = [None, Some("--full-history"), Some("--first-parent")];

/// One method's expected history.
struct Method {
    oracle: &'static str,
    /// The oracle file's stem.
    id: String,
    repo: String,
    url: Option<String>,
    start: String,
    path: String,
    function: String,
    line: u32,
    /// Commit → the oracle's change types there.
    changes: BTreeMap<String, Vec<String>>,
    /// Commit → other commits that count as it (a merge's branch commit).
    alternatives: BTreeMap<String, Vec<String>>,
}

impl Method {
    /// Whether the oracle's change at `commit` is documentation or
    /// formatting only.
    fn doc_only(&self, commit: &str) -> bool {
        const DOC: &[&str] = &["documentation change", "Ydocchange", "Yformatchange"];
        self.changes
            .get(commit)
            .is_some_and(|types| types.iter().all(|t| DOC.contains(&t.as_str())))
    }
}

fn main() {
    let codetracker = std::env::var_os("BENCH_HISTORY_CODETRACKER").map(PathBuf::from);
    let codeshovel = std::env::var_os("BENCH_HISTORY_CODESHOVEL").map(PathBuf::from);
    let repos = std::env::var_os("BENCH_HISTORY_REPOS").map(PathBuf::from);
    let (Some(repos), true) = (repos, codetracker.is_some() || codeshovel.is_some()) else {
        println!(
            "history: set BENCH_HISTORY_CODETRACKER (github.com/jodavimehran/code-tracker) and/or \
             BENCH_HISTORY_CODESHOVEL (github.com/ataraxie/codeshovel) to a checkout or bare clone, \
             and BENCH_HISTORY_REPOS to a directory of the subject repositories they name"
        );
        return;
    };
    let only: Option<BTreeSet<String>> = std::env::var("BENCH_HISTORY_ONLY")
        .ok()
        .map(|v| v.split(',').map(str::to_owned).collect());
    let show = std::env::var_os("BENCH_HISTORY_SHOW").is_some();

    let mut methods = Vec::new();
    if let Some(root) = &codetracker {
        println!("CodeTracker at {}", head_of(root));
        methods.extend(codetracker_methods(root));
    }
    if let Some(root) = &codeshovel {
        println!("CodeShovel at {}", head_of(root));
        let urls = codeshovel_urls(root);
        for (dir, oracle) in [("java", "CodeShovel Java"), ("python", "CodeShovel Python")] {
            methods.extend(codeshovel_methods(root, dir, oracle, &urls));
        }
    }
    methods.retain(|m| only.as_ref().is_none_or(|o| o.contains(&m.repo)));
    // An oracle without its start commit cannot be asked about.
    methods.retain(|m| m.start.len() >= 7);

    // Per subject and start commit: one clone, indexed once.
    let mut groups: BTreeMap<(String, String), Vec<&Method>> = BTreeMap::new();
    for m in &methods {
        groups
            .entry((m.repo.clone(), m.start.clone()))
            .or_default()
            .push(m);
    }
    // Per oracle and walk (`log`'s flag): every commit, and without
    // doc-only ones.
    let mut scores: BTreeMap<&'static str, [[Score; 3]; WALKS.len()]> = BTreeMap::new();
    let mut type_scores: BTreeMap<&'static str, TypeScore> = BTreeMap::new();
    let mut missing: BTreeSet<String> = BTreeSet::new();
    for ((repo, start), group) in &groups {
        let Some(source) = subject(&repos, repo, group[0].url.as_deref()) else {
            missing.insert(repo.clone());
            continue;
        };
        let dir = tempfile::tempdir().unwrap();
        let clone = dir.path().join(repo);
        let status = Command::new("git")
            .args(["clone", "--quiet", "--shared", "--no-checkout"])
            .arg(&source)
            .arg(&clone)
            .status()
            .unwrap();
        assert!(status.success(), "cannot clone {}", source.display());
        git(&clone, &["checkout", "--quiet", "--detach", start]);
        let commits = git(&clone, &["rev-list", "--count", "HEAD"]);
        let began = Instant::now();
        process::run(&clone, bin(), &["index", "--quiet"], &[]);
        println!(
            "{repo} at {} ({} commits): indexed in {:.1} s",
            start.get(..12).unwrap_or(start),
            commits.trim(),
            began.elapsed().as_secs_f64()
        );
        let branches = Branches::new(&clone);
        for m in group {
            let entry = scores.entry(m.oracle).or_default();
            for (view, walk) in WALKS.into_iter().enumerate() {
                let found = history_of(&clone, m, walk);
                if let (None, Ok(found)) = (walk, &found) {
                    type_scores.entry(m.oracle).or_default().add(m, found);
                }
                let ways = [(false, None), (true, None), (true, Some(&branches))];
                for (i, (drop_doc, merges)) in ways.into_iter().enumerate() {
                    let outcome = entry[view][i].add(m, found.as_ref().ok(), drop_doc, merges);
                    if show && !drop_doc && walk.is_none() {
                        print_method(&clone, m, &found, &outcome);
                    }
                    if show && merges.is_some() && walk.is_none() {
                        for c in &outcome.missed {
                            println!("  as its branch, still missed {c}");
                        }
                        for c in &outcome.extra {
                            println!("  as its branch, still extra {c}");
                        }
                    }
                }
            }
        }
    }
    if !missing.is_empty() {
        println!(
            "\nnot in BENCH_HISTORY_REPOS, skipped: {}",
            missing.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    println!(
        "\n| oracle | oracle commits | log | methods (located) | commit precision | commit recall | exact histories |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (oracle, walks) in &scores {
        for (walk, [all, no_doc, merged]) in WALKS.iter().zip(walks) {
            for (label, s) in [
                ("all", all),
                ("without documentation/format-only", no_doc),
                ("the same, a merge as its branch", merged),
            ] {
                let view = walk.unwrap_or("");
                println!(
                    "| {oracle} | {label} | {view} | {} ({}) | {} | {} | {} |",
                    s.methods,
                    s.located,
                    ratio(s.right, s.right + s.extra),
                    ratio(s.right, s.right + s.missed),
                    ratio(s.exact, s.methods),
                );
            }
        }
    }
    println!(
        "\nChange types, on the commits both list (`log` as it walks by default):\n\n\
         | oracle | type | precision | recall |\n|---|---|---|---|"
    );
    for (oracle, t) in &type_scores {
        if show {
            for (id, commit, expected, given) in &t.differing {
                println!("  {oracle} {id} {commit}: oracle [{expected}], log [{given}]");
            }
        }
        for (name, (right, extra, missed)) in &t.by_type {
            println!(
                "| {oracle} | {name} | {} | {} |",
                ratio(*right, right + extra),
                ratio(*right, right + missed)
            );
        }
        let (right, extra, missed) = t.total();
        println!(
            "| {oracle} | all shared types | {} | {} |",
            ratio(right, right + extra),
            ratio(right, right + missed)
        );
    }
}

/// The commits `log FILE:LINE START [WALK]` gives for the method, or why
/// there are none.
fn history_of(clone: &Path, m: &Method, walk: Option<&str>) -> Result<Found, String> {
    let at = format!("{}:{}", m.path, m.line);
    let out = Command::new(bin())
        .args(["log", &at, &m.start, "--json"])
        .args(walk)
        .current_dir(clone)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "log {at}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let entries: Vec<serde_json::Value> =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("log {at}: {e}"))?;
    // The line must be the oracle's method's: its newest entry has its name.
    if let Some(qualname) = entries.first().and_then(|e| e["qualname"].as_str()) {
        let own = qualname.rsplit(['.', ':']).next().unwrap_or(qualname);
        if own != m.function {
            return Err(format!("{at} is in {qualname}, not {}", m.function));
        }
    }
    let mut found = Found::new();
    for e in &entries {
        let Some(commit) = e["commit"].as_str() else {
            continue;
        };
        let types = e["changes"].as_array().into_iter().flatten();
        found
            .entry(commit.to_owned())
            .or_default()
            .extend(types.filter_map(|t| t.as_str().map(str::to_owned)));
    }
    Ok(found)
}

/// The commits `log` answers with, each with its change types.
type Found = BTreeMap<String, BTreeSet<String>>;

/// The change types the oracles and `log` share, each in one name: the
/// oracle's (CodeTracker's, CodeShovel's) or the tool's. A move to another
/// file, class or package is one `relocation` (CodeTracker splits it by
/// whether the class changed, CodeShovel by whether the file was renamed).
/// Types only one side has (documentation; the tool's `signature`, which
/// sums the others) are not scored, nor are the commits where the oracle
/// says the method was introduced, merged or split.
fn shared_type(name: &str) -> Option<&'static str> {
    Some(match name {
        "body change" | "Ybodychange" | "body" => "body",
        "parameter change" | "Yparameterchange" | "Yparametermetachange" | "parameters" => {
            "parameters"
        }
        "return type change" | "Yreturntypechange" | "return_type" => "return_type",
        "exception change" | "Yexceptionschange" | "exceptions" => "exceptions",
        "modifier change" | "Ymodifierchange" | "modifiers" => "modifiers",
        "annotation change" | "Yannotationchange" | "annotations" => "annotations",
        "type parameter change" | "type_parameters" => "type_parameters",
        "rename" | "Yrename" => "rename",
        "container change" | "moved" | "Yfilerename" | "Ymovefromfile" | "move" | "container" => {
            "relocation"
        }
        _ => return None,
    })
}

/// Change types judged on the commits both the oracle and `log` list.
#[derive(Default)]
struct TypeScore {
    /// Type → (right, extra, missed).
    by_type: BTreeMap<&'static str, (usize, usize, usize)>,
    /// Commits whose types differ: method, commit, the oracle's, the tool's.
    differing: Vec<(String, String, String, String)>,
}

impl TypeScore {
    fn add(&mut self, m: &Method, found: &Found) {
        let same = |a: &str, b: &str| a.starts_with(b) || b.starts_with(a);
        // Where the oracle says a method was introduced, merged or split,
        // it types nothing the tool does: the commit-level score judges it.
        const UNTYPED: &[&str] = &["introduced", "Yintroduced", "method merge", "method split"];
        for (commit, oracle_types) in &m.changes {
            if oracle_types.iter().any(|t| UNTYPED.contains(&t.as_str())) {
                continue;
            }
            let alternatives = m.alternatives.get(commit).into_iter().flatten();
            let Some((_, tool_types)) = found
                .iter()
                .find(|(f, _)| same(f, commit) || alternatives.clone().any(|a| same(f, a)))
            else {
                continue;
            };
            let expected: BTreeSet<&str> =
                oracle_types.iter().filter_map(|t| shared_type(t)).collect();
            let given: BTreeSet<&str> = tool_types.iter().filter_map(|t| shared_type(t)).collect();
            if expected != given {
                let list = |set: &BTreeSet<&str>| set.iter().copied().collect::<Vec<_>>().join(",");
                self.differing.push((
                    m.id.clone(),
                    commit.chars().take(10).collect(),
                    list(&expected),
                    list(&given),
                ));
            }
            for t in expected.union(&given) {
                let counts = self.by_type.entry(t).or_default();
                match (expected.contains(t), given.contains(t)) {
                    (true, true) => counts.0 += 1,
                    (false, true) => counts.1 += 1,
                    _ => counts.2 += 1,
                }
            }
        }
    }

    fn total(&self) -> (usize, usize, usize) {
        self.by_type
            .values()
            .fold((0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2))
    }
}

#[derive(Default)]
struct Score {
    methods: usize,
    located: usize,
    right: usize,
    missed: usize,
    extra: usize,
    exact: usize,
}

/// One method's commits, judged.
#[derive(Default)]
struct Outcome {
    missed: Vec<String>,
    extra: Vec<String>,
}

impl Score {
    fn add(
        &mut self,
        m: &Method,
        found: Option<&Found>,
        drop_doc: bool,
        merges: Option<&Branches>,
    ) -> Outcome {
        self.methods += 1;
        let expected: Vec<&String> = m
            .changes
            .keys()
            .filter(|c| !(drop_doc && m.doc_only(c)))
            .collect();
        let Some(found) = found else {
            self.missed += expected.len();
            return Outcome {
                missed: expected.into_iter().cloned().collect(),
                extra: Vec::new(),
            };
        };
        self.located += 1;
        let same = |a: &str, b: &str| a.starts_with(b) || b.starts_with(a);
        let mut outcome = Outcome::default();
        let mut used: BTreeSet<&String> = BTreeSet::new();
        for commit in &expected {
            let alternatives = m.alternatives.get(*commit).into_iter().flatten();
            let hit = found
                .keys()
                .find(|f| same(f, commit) || alternatives.clone().any(|a| same(f, a)));
            // The oracle's merge, found at the commits it brought.
            let brought = merges.and_then(|b| b.brought(commit));
            let from_branch: Vec<&String> = brought
                .iter()
                .flat_map(|set| found.keys().filter(|f| set.contains(*f)))
                .collect();
            let hit = hit.or(from_branch.first().copied());
            if hit.is_some() {
                used.extend(from_branch);
            }
            match hit {
                Some(f) => {
                    used.insert(f);
                }
                None => outcome.missed.push((*commit).clone()),
            }
        }
        // `log`'s merge, where a commit it brought is one the oracle lists.
        if let Some(branches) = merges {
            let right: Vec<&String> = used.iter().copied().collect();
            for f in found.keys() {
                if branches
                    .brought(f)
                    .is_some_and(|set| right.iter().any(|r| set.contains(*r)))
                {
                    used.insert(f);
                }
            }
        }
        // A commit the oracle leaves out as documentation-only is neither
        // right nor wrong when it is dropped.
        for f in found.keys() {
            let dropped = drop_doc && m.changes.keys().any(|c| same(f, c) && m.doc_only(c));
            if !used.contains(f) && !dropped {
                outcome.extra.push(f.clone());
            }
        }
        self.right += expected.len() - outcome.missed.len();
        self.missed += outcome.missed.len();
        self.extra += outcome.extra.len();
        if outcome.missed.is_empty() && outcome.extra.is_empty() {
            self.exact += 1;
        }
        outcome
    }
}

/// The commits a merge brought into its first parent's line (`git
/// rev-list M^1..M`, without `M`), per merge, read once. The oracles credit
/// a side branch's change to the merge (CodeTracker compares each commit
/// with its first parent) or to the branch's commit (CodeShovel, `log`):
/// both views are right (issue text), so in the last view a merge and the
/// commits it brought stand for one another.
struct Branches<'a> {
    clone: &'a Path,
    known: std::cell::RefCell<BTreeMap<String, Option<std::rc::Rc<BTreeSet<String>>>>>,
}

impl<'a> Branches<'a> {
    fn new(clone: &'a Path) -> Self {
        Branches {
            clone,
            known: Default::default(),
        }
    }

    /// `None` for a commit that is no merge (or unknown here); full ids.
    fn brought(&self, commit: &str) -> Option<std::rc::Rc<BTreeSet<String>>> {
        if let Some(known) = self.known.borrow().get(commit) {
            return known.clone();
        }
        let parents = Command::new("git")
            .args(["rev-list", "--no-walk", "--parents", commit])
            .current_dir(self.clone)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .split_whitespace()
                    .count()
            })
            .unwrap_or(0);
        let set = (parents > 2).then(|| {
            let list = git(self.clone, &["rev-list", &format!("{commit}^1..{commit}")]);
            let full = git(self.clone, &["rev-parse", commit]);
            std::rc::Rc::new(
                list.lines()
                    .filter(|c| *c != full.trim())
                    .map(str::to_owned)
                    .collect(),
            )
        });
        self.known
            .borrow_mut()
            .insert(commit.to_owned(), set.clone());
        set
    }
}

fn print_method(clone: &Path, m: &Method, found: &Result<Found, String>, o: &Outcome) {
    println!("\n## {} {} ({} commits)", m.oracle, m.id, m.changes.len());
    if let Err(why) = found {
        println!("  not answered: {why}");
        return;
    }
    let subject = |c: &str| git(clone, &["log", "-1", "--format=%h %s", c]);
    for c in &o.missed {
        let types = m.changes.get(c).map(|t| t.join(",")).unwrap_or_default();
        println!("  missed  {} [{types}]", subject(c).trim());
    }
    for c in &o.extra {
        println!("  extra   {}", subject(c).trim());
    }
}

fn ratio(a: usize, b: usize) -> String {
    if b == 0 {
        return "–".into();
    }
    format!("{:.2} ({a}/{b})", a as f64 / b as f64)
}

/// Where a subject repository is: `OWNER+NAME/repo`, `OWNER+NAME`, `NAME`,
/// or a directory `*+NAME` / `NAME+*` (a repository renamed since).
fn subject(repos: &Path, name: &str, url: Option<&str>) -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Some((owner, repo)) = url.and_then(owner_and_name) {
        candidates.push(repos.join(format!("{owner}+{repo}")));
    }
    candidates.push(repos.join(name));
    if let Ok(entries) = std::fs::read_dir(repos) {
        for e in entries.flatten() {
            let file = e.file_name().to_string_lossy().into_owned();
            if file.ends_with(&format!("+{name}")) || file.starts_with(&format!("{name}+")) {
                candidates.push(e.path());
            }
        }
    }
    candidates.into_iter().find_map(|c| {
        let inner = c.join("repo");
        [inner, c].into_iter().find(|p| p.exists())
    })
}

/// `https://github.com/OWNER/NAME.git` → (OWNER, NAME).
fn owner_and_name(url: &str) -> Option<(&str, &str)> {
    let rest = url.split("github.com/").nth(1)?;
    let rest = rest.trim_end_matches('/').trim_end_matches(".git");
    rest.split_once('/')
}

/// The files of `dir` in `root` (a checkout, or a bare clone's `HEAD`) whose
/// names `wanted` accepts, by name, with their text. Names are listed first
/// and only the wanted files are read: held-out files are never opened.
fn files_in(root: &Path, dir: &str, wanted: impl Fn(&str) -> bool) -> Vec<(String, String)> {
    let on_disk = root.join(dir);
    let mut names: Vec<String> = if on_disk.is_dir() {
        std::fs::read_dir(&on_disk)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    } else {
        git_dir(root, &["ls-tree", "--name-only", &format!("HEAD:{dir}")])
            .lines()
            .map(str::to_owned)
            .collect()
    };
    names.retain(|n| wanted(n));
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let text = if on_disk.is_dir() {
                std::fs::read_to_string(on_disk.join(&name)).unwrap_or_default()
            } else {
                git_dir(root, &["show", &format!("HEAD:{dir}/{name}")])
            };
            (name, text)
        })
        .collect()
}

fn git_dir(root: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(if root.join(".git").exists() {
            root.join(".git")
        } else {
            root.to_owned()
        })
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?} in {}", root.display());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn head_of(root: &Path) -> String {
    git_dir(root, &["rev-parse", "--short=12", "HEAD"])
        .trim()
        .to_owned()
}

fn codetracker_methods(root: &Path) -> Vec<Method> {
    let mut out = Vec::new();
    for (file, text) in files_in(root, "src/main/resources/oracle/method/training", |_| true) {
        let Some(id) = file.strip_suffix(".json") else {
            continue;
        };
        let v: serde_json::Value = serde_json::from_str(&text).expect("an oracle is JSON");
        let s = |k: &str| v[k].as_str().unwrap_or_default().to_owned();
        let mut changes: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut alternatives: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for c in v["expectedChanges"].as_array().into_iter().flatten() {
            let commit = c["commitId"].as_str().unwrap_or_default().to_owned();
            if commit.is_empty() {
                continue;
            }
            let kind = c["changeType"].as_str().unwrap_or_default().to_owned();
            if let Some(alt) = c["altCommitId"].as_str() {
                let list = alternatives.entry(commit.clone()).or_default();
                list.extend(
                    alt.split(',')
                        .map(|a| a.trim().to_owned())
                        .filter(|a| !a.is_empty()),
                );
            }
            changes.entry(commit).or_default().push(kind);
        }
        out.push(Method {
            oracle: "CodeTracker",
            id: id.to_owned(),
            repo: s("repositoryName"),
            url: Some(s("repositoryWebURL")),
            start: s("startCommitId"),
            path: s("filePath"),
            function: s("functionName"),
            line: v["functionStartLine"].as_u64().unwrap_or(0) as u32,
            changes,
            alternatives,
        });
    }
    out
}

/// CodeShovel names subjects only; its clone script gives their URLs.
fn codeshovel_urls(root: &Path) -> BTreeMap<String, String> {
    let script = files_in(root, "bin", |name| name == "clone-java-repositories.sh")
        .into_iter()
        .map(|(_, text)| text)
        .next()
        .unwrap_or_default();
    let mut out = BTreeMap::new();
    for word in script.split_whitespace() {
        if let Some((_, name)) = word
            .contains("github.com/")
            .then(|| owner_and_name(word))
            .flatten()
        {
            out.insert(name.to_owned(), word.to_owned());
        }
    }
    out
}

fn codeshovel_methods(
    root: &Path,
    dir: &str,
    oracle: &'static str,
    urls: &BTreeMap<String, String>,
) -> Vec<Method> {
    let mut out = Vec::new();
    // `Z_` files are held out for independent checking: never read.
    let training = |name: &str| !name.starts_with("Z_");
    for (file, text) in files_in(root, &format!("src/test/resources/oracles/{dir}"), training) {
        let Some(id) = file.strip_suffix(".json") else {
            continue;
        };
        let v: serde_json::Value = serde_json::from_str(&text).expect("an oracle is JSON");
        let s = |k: &str| v[k].as_str().unwrap_or_default().to_owned();
        let mut changes = BTreeMap::new();
        for (commit, kind) in v["expectedResult"].as_object().into_iter().flatten() {
            if commit.is_empty() {
                continue;
            }
            let kind = kind.as_str().unwrap_or_default();
            // `Ymultichange(A,B)`: each.
            let types: Vec<String> = match kind
                .strip_prefix("Ymultichange(")
                .and_then(|k| k.strip_suffix(')'))
            {
                Some(inner) => inner.split(',').map(str::to_owned).collect(),
                None => vec![kind.to_owned()],
            };
            changes.insert(commit.clone(), types);
        }
        let repo = s("repositoryName");
        out.push(Method {
            oracle,
            id: id.to_owned(),
            url: urls.get(&repo).cloned(),
            repo,
            start: s("startCommitName"),
            path: s("filePath"),
            function: s("functionName"),
            line: v["functionStartLine"].as_u64().unwrap_or(0) as u32,
            changes,
            alternatives: BTreeMap::new(),
        });
    }
    out
}
