//! A release as the release workflow publishes it, served over loopback
//! HTTP: what `action/run.sh install` and `scripts/install` download from.

use std::path::Path;
use std::process::Command;

/// A loopback HTTP server (Python's) serving `dir`; killed on drop.
pub struct StaticFiles {
    child: std::process::Child,
    pub port: u16,
}

impl StaticFiles {
    pub fn serve(dir: &Path) -> StaticFiles {
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let child = Command::new("python3")
            .args([
                "-m",
                "http.server",
                "--bind",
                "127.0.0.1",
                &port.to_string(),
            ])
            .current_dir(dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed() < std::time::Duration::from_secs(20));
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        StaticFiles { child, port }
    }
}

impl Drop for StaticFiles {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A release `tag` laid out under `root` as the release workflow publishes
/// it, with the binary under test inside, for this machine's target.
/// Returns the archive's name without its extension.
pub fn fake_release(root: &Path, tag: &str) -> String {
    let target = match std::env::consts::ARCH {
        "x86_64" => "x86_64-unknown-linux-gnu",
        _ => "aarch64-unknown-linux-gnu",
    };
    let name = format!("git-diffidx-{tag}-{target}");
    let stage = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(stage.path().join(&name)).unwrap();
    std::fs::copy(super::bin(), stage.path().join(&name).join("git-diffidx")).unwrap();
    let dir = root.join(tag);
    std::fs::create_dir_all(&dir).unwrap();
    let archive = dir.join(format!("{name}.tar.gz"));
    let status = Command::new("tar")
        .arg("-czf")
        .arg(&archive)
        .arg("-C")
        .arg(stage.path())
        .arg(&name)
        .status()
        .unwrap();
    assert!(status.success());
    let sums = Command::new("sha256sum")
        .arg(format!("{name}.tar.gz"))
        .current_dir(&dir)
        .output()
        .unwrap();
    std::fs::write(dir.join("SHA256SUMS"), sums.stdout).unwrap();
    name
}
