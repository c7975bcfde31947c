//! Running `git-diffidx` as a user does, for benches: whole processes, with
//! their peak memory sampled from `/proc`. As a user does: without the
//! `LD_LIBRARY_PATH` cargo gives its benches (every build script's output
//! directory), which the dynamic loader searches for the C++ runtime at
//! each start, about 1 ms a process.

pub mod baseline;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The `git-diffidx` the benches run: the build's own, or
/// `BENCH_DIFFIDX_BIN` (a copy, so rebuilding during a long run changes
/// nothing under it).
pub fn bin() -> &'static str {
    static BIN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        std::env::var("BENCH_DIFFIDX_BIN")
            .unwrap_or_else(|_| env!("CARGO_BIN_EXE_git-diffidx").to_owned())
    })
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

/// `program args` to run in `dir` as a user's shell would start it: without
/// cargo's library path, and without the caller's Neo4j settings (nothing
/// is pushed) or service map.
fn as_user(program: &str, dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(program);
    command.args(args).current_dir(dir);
    for name in [
        "NEO4J_URI",
        "NEO4J_URL",
        "NEO4J_PASSWORD",
        "LD_LIBRARY_PATH",
        "DIFFIDX_SERVICE_MAP",
    ] {
        command.env_remove(name);
    }
    command
}

/// Runs `git-diffidx ARGS` in `dir` to the end ([`as_user`]), sampling its
/// peak RSS every 20 ms.
pub fn run_sampling(dir: &Path, args: &[&str]) -> Sampled {
    let start = Instant::now();
    let mut child = as_user(bin(), dir, args)
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

/// Runs `program args` in `dir` ([`as_user`]) with `env` set; its stdout.
/// Fails the bench with stderr when it fails.
pub fn run(dir: &Path, program: &str, args: &[&str], env: &[(&str, &str)]) -> String {
    let out = as_user(program, dir, args)
        .envs(env.iter().copied())
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
