//! Figures for the README: `cargo bench -p diffidx-core --bench show`.
//!
//! 1. One commit that changes one method of a 2,000-line C# file: the time to
//!    label it, cold (a fresh differ parses both sides) and warm (the old side
//!    is already parsed, as when indexing consecutive commits).
//! 2. A generated repository of 1,000+ commits in C# and Rust: commits per
//!    second for labelling every commit in order with one differ.
//!
//! Repositories are generated with `git fast-import` in a temp dir.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use diffidx_core::git::Repo;
use diffidx_core::{DiffOptions, SymbolDiffer};

fn main() {
    let commits: usize = std::env::var("BENCH_COMMITS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    big_file();
    history(commits);
}

/// A small deterministic PRNG (xorshift), so every run generates the same repo.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

struct Method {
    name: String,
    variant: u32,
}

fn cs_file(namespace: &str, class: &str, methods: &[Method]) -> String {
    let mut s = format!("using System;\nusing System.Collections.Generic;\n\nnamespace {namespace}\n{{\n    public class {class}\n    {{\n        private readonly List<int> _items = new List<int>();\n\n");
    for m in methods {
        let v = m.variant;
        write!(
            s,
            "        /// <summary>Computes {name}.</summary>\n        public int {name}(int input, string label)\n        {{\n            var total = input * {v};\n            foreach (var item in _items)\n            {{\n                total += item % ({v} + 1);\n            }}\n            Console.WriteLine(label + total);\n            return total;\n        }}\n\n",
            name = m.name
        )
        .unwrap();
    }
    s.push_str("    }\n}\n");
    s
}

fn rs_file(strukt: &str, methods: &[Method]) -> String {
    let mut s = format!("use std::collections::HashMap;\n\n/// State for {strukt}.\n#[derive(Debug, Default)]\npub struct {strukt} {{\n    items: HashMap<u32, u64>,\n}}\n\nimpl {strukt} {{\n");
    for m in methods {
        let v = m.variant;
        write!(
            s,
            "    /// Computes {name}.\n    pub fn {name}(&mut self, input: u64) -> u64 {{\n        let mut total = input * {v};\n        for (k, v) in &self.items {{\n            total += (*k as u64) ^ v;\n        }}\n        self.items.insert({v}, total);\n        total\n    }}\n\n",
            name = m.name
        )
        .unwrap();
    }
    s.push_str("}\n");
    s
}

/// Feeds a fast-import stream to a new repository.
fn fast_import(dir: &Path, stream: &[u8]) {
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .status()
            .expect("git runs")
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    let mut child = Command::new("git")
        .args(["fast-import", "--quiet"])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .spawn()
        .expect("git fast-import");
    child.stdin.take().unwrap().write_all(stream).unwrap();
    assert!(child.wait().unwrap().success());
}

fn commit_header(stream: &mut Vec<u8>, n: usize, message: &str) {
    let time = 1_700_000_000 + n * 60;
    write!(
        stream,
        "commit refs/heads/main\nmark :{}\nauthor Bench <bench@example.com> {time} +0000\ncommitter Bench <bench@example.com> {time} +0000\ndata {}\n{message}\n",
        n + 1,
        message.len()
    )
    .unwrap();
    if n > 0 {
        writeln!(stream, "from :{n}").unwrap();
    }
}

fn file_op(stream: &mut Vec<u8>, path: &str, content: &str) {
    write!(
        stream,
        "M 100644 inline {path}\ndata {}\n{content}\n",
        content.len()
    )
    .unwrap();
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn big_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut methods: Vec<Method> = (0..166)
        .map(|i| Method {
            name: format!("Compute{i}"),
            variant: i,
        })
        .collect();
    let before = cs_file("Bench.Big", "Calculator", &methods);
    methods[80].variant += 1000;
    let after = cs_file("Bench.Big", "Calculator", &methods);
    let mut stream = Vec::new();
    commit_header(&mut stream, 0, "big file");
    file_op(&mut stream, "src/Calculator.cs", &before);
    commit_header(&mut stream, 1, "change one method");
    file_op(&mut stream, "src/Calculator.cs", &after);
    fast_import(dir.path(), &stream);

    let repo = Repo::discover(dir.path()).unwrap();
    let head = repo.resolve_commit("HEAD").unwrap();
    let commit = repo.commit(head).unwrap();
    let lines = after.lines().count();

    let mut cold = Vec::new();
    let mut note = None;
    for _ in 0..30 {
        let start = Instant::now();
        let mut differ = SymbolDiffer::new(&repo, DiffOptions::default()).unwrap();
        note = Some(differ.commit_note(&commit).unwrap());
        cold.push(start.elapsed());
    }
    let note = note.unwrap();
    assert_eq!(note.deltas.len(), 3, "namespace, class and one method");

    // Warm: the parent's blob is already parsed, as in a run over consecutive commits.
    let mut warm = Vec::new();
    for _ in 0..30 {
        let mut differ = SymbolDiffer::new(&repo, DiffOptions::default()).unwrap();
        let parent = repo.commit(commit.parents[0]).unwrap();
        differ.commit_note(&parent).unwrap();
        let start = Instant::now();
        differ.commit_note(&commit).unwrap();
        warm.push(start.elapsed());
    }
    println!(
        "one commit changing one method of a {lines}-line C# file ({} KiB): cold {:.1} ms, warm {:.1} ms (median of 30)",
        after.len() / 1024,
        median(cold).as_secs_f64() * 1e3,
        median(warm).as_secs_f64() * 1e3
    );
}

fn history(commits: usize) {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let files = 40;
    let mut state: Vec<Vec<Method>> = (0..files)
        .map(|f| {
            (0..10 + f % 25)
                .map(|i| Method {
                    name: if f % 2 == 0 {
                        format!("Run{i}")
                    } else {
                        format!("run_{i}")
                    },
                    variant: i as u32,
                })
                .collect()
        })
        .collect();
    let render = |f: usize, methods: &[Method]| -> (String, String) {
        if f % 2 == 0 {
            (
                format!("src/cs/Service{f}.cs"),
                cs_file(
                    &format!("Bench.Area{}", f % 5),
                    &format!("Service{f}"),
                    methods,
                ),
            )
        } else {
            (
                format!("src/rs/service{f}.rs"),
                rs_file(&format!("Service{f}"), methods),
            )
        }
    };
    let mut stream = Vec::new();
    commit_header(&mut stream, 0, "initial");
    for (f, methods) in state.iter().enumerate() {
        let (path, content) = render(f, methods);
        file_op(&mut stream, &path, &content);
    }
    let mut next_name = 10_000;
    for n in 1..commits {
        commit_header(&mut stream, n, &format!("change {n}"));
        for _ in 0..1 + rng.below(3) {
            let f = rng.below(files);
            let methods = &mut state[f];
            match rng.below(10) {
                0 if methods.len() > 3 => {
                    let i = rng.below(methods.len());
                    methods.remove(i);
                }
                1 => {
                    next_name += 1;
                    let name = if f % 2 == 0 {
                        format!("Added{next_name}")
                    } else {
                        format!("added_{next_name}")
                    };
                    methods.push(Method {
                        name,
                        variant: next_name,
                    });
                }
                _ => {
                    let i = rng.below(methods.len());
                    methods[i].variant += 1;
                }
            }
            let (path, content) = render(f, methods);
            file_op(&mut stream, &path, &content);
        }
    }
    let started = Instant::now();
    fast_import(dir.path(), &stream);
    let generated = started.elapsed();

    let repo = Repo::discover(dir.path()).unwrap();
    // Oldest first, as `index` walks.
    let out = Command::new("git")
        .args(["rev-list", "--reverse", "HEAD"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let ids: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let infos: Vec<_> = ids
        .iter()
        .map(|id| repo.commit(repo.resolve_commit(id).unwrap()).unwrap())
        .collect();
    let mut differ = SymbolDiffer::new(&repo, DiffOptions::default()).unwrap();
    let start = Instant::now();
    let mut deltas = 0;
    for commit in &infos {
        deltas += differ.commit_note(commit).unwrap().deltas.len();
    }
    let elapsed = start.elapsed();
    println!(
        "show over {} commits (C# and Rust, {files} files, generated in {:.1} s): {:.0} commits/s, {deltas} deltas, {} blobs parsed ({:.1} MiB), {} cache hits",
        infos.len(),
        generated.as_secs_f64(),
        infos.len() as f64 / elapsed.as_secs_f64(),
        differ.stats.blobs_parsed,
        differ.stats.bytes_parsed as f64 / (1024.0 * 1024.0),
        differ.stats.cache_hits
    );
}
