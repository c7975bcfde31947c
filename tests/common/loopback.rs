//! The loopback Ollama/OpenAI server of the adapter tests
//! (`crates/diffidx-semantic/tests/fixtures/llm_server.py`), stopped when
//! dropped.

use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};

pub struct Loopback {
    child: std::process::Child,
    pub port: u16,
}

impl Loopback {
    pub fn start() -> Loopback {
        Loopback::start_with(&[])
    }

    /// With more arguments, e.g. `["--answers", FILE]`.
    pub fn start_with(args: &[&str]) -> Loopback {
        let mut child = std::process::Command::new("python3")
            .arg(script())
            .args(args)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("python3 runs");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .strip_prefix("port ")
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("the server said {line:?}"));
        Loopback { child, port }
    }

    /// Started with the answer rules `rules` (a JSON list, see the script).
    pub fn with_answers(dir: &Path, rules: &serde_json::Value) -> Loopback {
        let file = dir.join("answers.json");
        std::fs::write(&file, rules.to_string()).unwrap();
        Loopback::start_with(&["--answers", file.to_str().unwrap()])
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The user texts the server was asked so far, oldest first.
    pub fn asked(&self) -> Vec<String> {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream
            .write_all(b"GET /_test/asked HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let body = response.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {response}"))
    }
}

impl Drop for Loopback {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("crates/diffidx-semantic/tests/fixtures/llm_server.py")
}
