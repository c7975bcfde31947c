//! Deterministic repository generators shared by the benchmarks
//! (included with `#[path]` by `benches/show.rs` and the root crate's
//! `benches/index.rs`).

#![allow(dead_code)]

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

/// A small deterministic PRNG (xorshift), so every run generates the same repo.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

pub struct Method {
    pub name: String,
    pub variant: u32,
}

pub fn cs_file(namespace: &str, class: &str, methods: &[Method]) -> String {
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

pub fn rs_file(strukt: &str, methods: &[Method]) -> String {
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
pub fn fast_import(dir: &Path, stream: &[u8]) {
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

pub fn commit_header(stream: &mut Vec<u8>, n: usize, message: &str) {
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

pub fn file_op(stream: &mut Vec<u8>, path: &str, content: &str) {
    write!(
        stream,
        "M 100644 inline {path}\ndata {}\n{content}\n",
        content.len()
    )
    .unwrap();
}

/// A history of `commits` commits over 40 C# and Rust files: each commit
/// edits, adds or removes methods in one to three files. Returns the time
/// `git fast-import` took.
pub fn history_repo(dir: &Path, commits: usize) -> std::time::Duration {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let files = 40;
    let mut state: Vec<Vec<Method>> = (0..files)
        .map(|f: usize| {
            (0..10 + f % 25)
                .map(|i| Method {
                    name: if f.is_multiple_of(2) {
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
        if f.is_multiple_of(2) {
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
                    let name = if f.is_multiple_of(2) {
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
    let started = std::time::Instant::now();
    fast_import(dir, &stream);
    started.elapsed()
}
