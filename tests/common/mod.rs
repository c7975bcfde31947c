//! Real git repositories in temp dirs, driven by the real `git` binary, and
//! the `git-diffidx` binary under test.

#![allow(dead_code)]

pub mod github;
pub mod loopback;
pub mod query_server;
pub mod release;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct TestRepo {
    pub dir: tempfile::TempDir,
    commits: u32,
}

/// PATH with the binary under test first, so that hooks a test's git
/// commands fire run this build, never an older `git-diffidx` installed on
/// the machine.
pub fn path_with_bin() -> String {
    format!(
        "{}:{}",
        bin()
            .parent()
            .expect("the binary has a directory")
            .display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Environment that makes git deterministic: fixed identities and dates, no
/// user or system config, and hooks that run the binary under test.
fn git_env(cmd: &mut Command, tick: u32) {
    let date = format!("{} +0000", 1_700_000_000 + tick as u64 * 3600);
    cmd.env("PATH", path_with_bin())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Ada Lovelace")
        .env("GIT_AUTHOR_EMAIL", "ada@example.com")
        .env("GIT_COMMITTER_NAME", "Ada Lovelace")
        .env("GIT_COMMITTER_EMAIL", "ada@example.com")
        .env("GIT_AUTHOR_DATE", &date)
        .env("GIT_COMMITTER_DATE", &date)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env("NO_COLOR", "1");
}

impl TestRepo {
    pub fn new() -> TestRepo {
        let repo = TestRepo {
            dir: tempfile::tempdir().expect("temp dir"),
            commits: 0,
        };
        repo.git(&["init", "-q", "-b", "main"]);
        repo
    }

    /// A clone of `source` (a path or URL); its commits are dated after
    /// `first_tick` hours so that they never share a date with the source's.
    pub fn clone_of(source: &Path, first_tick: u32) -> TestRepo {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut cmd = Command::new("git");
        cmd.args(["clone", "-q"]).arg(source).arg(dir.path());
        git_env(&mut cmd, first_tick);
        let out = cmd.output().expect("git runs");
        assert!(
            out.status.success(),
            "git clone failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        TestRepo {
            dir,
            commits: first_tick,
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The query server's socket.
    pub fn socket(&self) -> PathBuf {
        self.path().join(".git/diffidx/query.sock")
    }

    /// Waits until a query server accepts connections, failing after
    /// `within`. (The socket's file exists from `bind`, a moment before the
    /// server listens: a client connecting then is refused.)
    pub fn wait_for_socket(&self, within: std::time::Duration) {
        let socket = self.socket();
        let started = std::time::Instant::now();
        while std::os::unix::net::UnixStream::connect(&socket).is_err() {
            assert!(started.elapsed() < within, "no socket");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Runs git and returns stdout; panics with stderr on failure.
    pub fn git(&self, args: &[&str]) -> String {
        let mut cmd = Command::new("git");
        cmd.args(args).current_dir(self.path());
        git_env(&mut cmd, self.commits);
        let out = cmd.output().expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8 git output")
    }

    /// Attaches `text` as the `refs/notes/diffidx` note of `commit` with git
    /// itself (replacing any), as a remote or a user could.
    pub fn put_note(&self, commit: &str, text: &str) {
        self.git(&["notes", "--ref", "diffidx", "add", "-f", "-m", text, commit]);
    }

    pub fn write(&self, path: &str, content: impl AsRef<[u8]>) {
        let full = self.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
    }

    pub fn remove(&self, path: &str) {
        std::fs::remove_file(self.path().join(path)).unwrap();
    }

    /// Stages everything and commits; returns the new commit's sha.
    pub fn commit(&mut self, message: &str) -> String {
        self.commits += 1;
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
        self.git(&["rev-parse", "HEAD"]).trim().to_owned()
    }

    /// Like [`TestRepo::commit`], dated `epoch_seconds` (author and committer).
    pub fn commit_at(&mut self, message: &str, epoch_seconds: u64) -> String {
        self.commits += 1;
        self.git(&["add", "-A"]);
        let date = format!("{epoch_seconds} +0000");
        let mut cmd = Command::new("git");
        cmd.args(["commit", "-q", "--allow-empty", "-m", message])
            .current_dir(self.path());
        git_env(&mut cmd, self.commits);
        let out = cmd
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date)
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        self.git(&["rev-parse", "HEAD"]).trim().to_owned()
    }

    /// Replaces the whole work tree with the files under `dir`.
    pub fn replace_tree_with(&self, dir: &Path) {
        for entry in std::fs::read_dir(self.path()).unwrap() {
            let entry = entry.unwrap();
            if entry.file_name() != ".git" {
                let p = entry.path();
                if p.is_dir() {
                    std::fs::remove_dir_all(p).unwrap();
                } else {
                    std::fs::remove_file(p).unwrap();
                }
            }
        }
        copy_dir(dir, self.path());
    }

    /// Runs `git-diffidx ARGS` in the repository.
    pub fn diffidx(&self, args: &[&str]) -> Output {
        self.diffidx_with_stdin(args, None)
    }

    pub fn diffidx_with_stdin(&self, args: &[&str], stdin: Option<&[u8]>) -> Output {
        self.diffidx_full(args, stdin, &[])
    }

    /// Runs `git-diffidx ARGS` with `env` set and no inherited `GITHUB_*`
    /// variable (the tests may themselves run inside GitHub Actions).
    pub fn diffidx_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        self.diffidx_full(args, None, env)
    }

    /// `program` in the repository, with git's deterministic environment,
    /// the binary under test on PATH as `git diffidx`, and no inherited
    /// `GITHUB_*` variable (the tests may themselves run inside Actions).
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(self.path());
        git_env(&mut cmd, self.commits);
        for (key, _) in std::env::vars() {
            if key.starts_with("GITHUB_") {
                cmd.env_remove(key);
            }
        }
        cmd
    }

    fn diffidx_full(&self, args: &[&str], stdin: Option<&[u8]>, env: &[(&str, &str)]) -> Output {
        use std::io::Write;
        let mut cmd = self.command(bin());
        cmd.args(args);
        cmd.envs(env.iter().copied());
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().expect("git-diffidx runs");
        let mut pipe = child.stdin.take().unwrap();
        if let Some(input) = stdin {
            pipe.write_all(input).unwrap();
        }
        drop(pipe);
        child.wait_with_output().unwrap()
    }

    /// Runs `git-diffidx ARGS`, asserts success, returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.diffidx(args);
        assert!(
            out.status.success(),
            "git-diffidx {args:?} exited {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }
}

/// Asserts that a command succeeded (showing its stderr if not) and returns
/// its stderr, where git-diffidx reports what it did.
pub fn succeeded(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "exit {:?}: {stderr}",
        out.status.code()
    );
    stderr
}

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_git-diffidx"))
}

pub fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// Builds a repository from `fixtures/NAME`: `before/` (if any) as the first
/// commit, then `after/` as the second.
pub fn fixture_repo(name: &str) -> TestRepo {
    let dir = fixtures().join(name);
    let mut repo = TestRepo::new();
    if dir.join("before").is_dir() {
        repo.replace_tree_with(&dir.join("before"));
        repo.commit("before");
    }
    repo.replace_tree_with(&dir.join("after"));
    repo.commit("after");
    repo
}

/// One line per delta: `STATUS kind qualname+sig path:start-end [<- old] [modified]`.
pub fn summarize(json: &str) -> Vec<String> {
    let note: serde_json::Value = serde_json::from_str(json).expect("note JSON");
    note["deltas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let sig = d["sig"].as_str().unwrap();
            let sig = if sig.is_empty() || sig.starts_with('(') {
                sig.to_owned()
            } else {
                format!(" [{sig}]")
            };
            let mut line = format!(
                "{} {} {}{} {}:{}-{}",
                d["status"].as_str().unwrap(),
                d["kind"].as_str().unwrap(),
                d["qualname"].as_str().unwrap(),
                sig,
                d["path"].as_str().unwrap(),
                d["start_line"],
                d["end_line"]
            );
            if let Some(old) = d.get("old_path") {
                line.push_str(&format!(" <- {}", old.as_str().unwrap()));
            }
            if d.get("modified") == Some(&serde_json::Value::Bool(true)) {
                line.push_str(" modified");
            }
            line
        })
        .collect()
}

/// Waits until process `pid` is stopped (state `T` in `/proc`), as a
/// `DIFFIDX_FAULT=<point>:stop` run is when it reaches its point.
pub fn wait_until_stopped(pid: u32, what: &str) {
    let state = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit_once(") ").and_then(|(_, r)| r.chars().next()))
    };
    let started = std::time::Instant::now();
    while state() != Some('T') {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "{what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// `path problem` for each diagnostic of a note.
pub fn problems(note: &serde_json::Value) -> Vec<String> {
    note["diagnostics"]
        .as_array()
        .expect("diagnostics present")
        .iter()
        .map(|d| {
            format!(
                "{} {}",
                d["path"].as_str().unwrap(),
                d["problem"].as_str().unwrap()
            )
        })
        .collect()
}
