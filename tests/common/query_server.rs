//! `git diffidx serve` run by a test: the lines it prints, one per request.

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdout, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use super::TestRepo;

/// A `serve` process and the lines it prints, one per request.
pub struct Server {
    pub child: Child,
    lines: mpsc::Receiver<String>,
}

impl Server {
    pub fn start(repo: &TestRepo, idle: &str) -> Server {
        let mut child = repo
            .command(super::bin())
            .args(["serve", "--idle", idle])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout: ChildStdout = child.stdout.take().unwrap();
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = send.send(line);
            }
        });
        repo.wait_for_socket(Duration::from_secs(10));
        Server { child, lines }
    }

    pub fn next_line(&self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(10))
            .expect("the server reports each request")
    }

    /// Reads lines until `expected`; returns those before it. (How often a
    /// writer's opens make the server release and reopen depends on timing.)
    pub fn lines_until(&self, expected: &str) -> Vec<String> {
        let mut before = Vec::new();
        loop {
            let Ok(line) = self.lines.recv_timeout(Duration::from_secs(10)) else {
                panic!("no {expected:?} from the server within 10 s; it said {before:?}");
            };
            if line == expected {
                return before;
            }
            before.push(line);
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
