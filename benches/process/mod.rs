//! Running `git-diffidx` as a user does, for benches: whole processes, with
//! their peak memory sampled from `/proc`. As a user does: without the
//! `LD_LIBRARY_PATH` cargo gives its benches (every build script's output
//! directory), which the dynamic loader searches for the C++ runtime at
//! each start, about 1 ms a process.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_git-diffidx")
}

/// A `/proc/PID/status` field in KiB (`VmHWM`, `VmRSS`).
pub fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = text.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// What a sampled run gave.
pub struct Sampled {
    pub took: Duration,
    pub peak_mib: f64,
    pub stderr: String,
}

/// Runs `git-diffidx ARGS` in `dir` to the end (without Neo4j settings, so
/// nothing is pushed), sampling its peak RSS every 20 ms.
pub fn run_sampling(dir: &Path, args: &[&str]) -> Sampled {
    let start = Instant::now();
    let mut child = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .env_remove("NEO4J_URI")
        .env_remove("NEO4J_URL")
        .env_remove("NEO4J_PASSWORD")
        .env_remove("LD_LIBRARY_PATH")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read stderr on a thread: a full pipe would block the child.
    let mut pipe = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut pipe, &mut text);
        text
    });
    let mut peak = 0u64;
    loop {
        if let Some(hwm) = status_kib(child.id(), "VmHWM:") {
            peak = peak.max(hwm);
        }
        if let Some(status) = child.try_wait().unwrap() {
            let stderr = reader.join().unwrap();
            assert!(status.success(), "{args:?} failed: {stderr}");
            return Sampled {
                took: start.elapsed(),
                peak_mib: peak as f64 / 1024.0,
                stderr,
            };
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `program args` in `dir` with `env` set and no Neo4j settings or
/// service map from the caller's environment; its stdout. Fails the bench
/// with stderr when it fails.
pub fn run(dir: &Path, program: &str, args: &[&str], env: &[(&str, &str)]) -> String {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .envs(env.iter().copied())
        .env_remove("NEO4J_URI")
        .env_remove("NEO4J_URL")
        .env_remove("NEO4J_PASSWORD")
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("DIFFIDX_SERVICE_MAP")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn git(dir: &Path, args: &[&str]) -> String {
    run(dir, "git", args, &[])
}

/// The `p` quantile of `times` (sorted here), in milliseconds.
pub fn percentile_ms(times: &mut [Duration], p: f64) -> f64 {
    times.sort();
    let i = ((times.len() as f64 - 1.0) * p).round() as usize;
    times[i].as_secs_f64() * 1e3
}
