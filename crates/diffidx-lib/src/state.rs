//! The state directory `.git/diffidx/`: where the store, the writer lock,
//! the query server's socket and the hooks' logs live.
//!
//! One writer at a time: the lock is an OS file lock, released by the kernel
//! even when a writer is killed. Opening the store (which also needs the
//! query server to let go of it) is in [`crate::open`].

use std::fs::File;
use std::io::Write as _;
use std::path::PathBuf;

use diffidx_core::git::Repo;

/// Failures of the state directory itself.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("cannot use {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("another diffidx{} is indexing this repository{}; try again when it is done{}",
        holder.map(|p| format!(" (pid {p})")).unwrap_or_default(),
        waited.map(|w| format!(" (waited {} s for it)", w.as_secs())).unwrap_or_default(),
        holder.map(|p| format!(", or stop it (`kill {p}`) if it hangs")).unwrap_or_default())]
    Busy {
        /// The process that holds the lock, as it recorded itself.
        holder: Option<u32>,
        /// How long this process waited (`None`: it did not wait).
        waited: Option<std::time::Duration>,
    },
}

/// The paths of one repository's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDir {
    dir: PathBuf,
}

impl StateDir {
    /// `.git/diffidx/` of `repo` (the common dir, shared by worktrees).
    pub fn of(repo: &Repo) -> StateDir {
        StateDir {
            dir: repo.common_dir().join("diffidx"),
        }
    }

    /// The store (a LadybugDB database).
    pub fn store(&self) -> PathBuf {
        self.dir.join("graph.lbdb")
    }

    /// Stores of engines this diffidx no longer opens (Kuzu's, before
    /// LadybugDB): a writer removes them, and the notes refill the store.
    pub fn retired_stores(&self) -> [PathBuf; 1] {
        [self.dir.join("graph.kuzu")]
    }

    /// The search index (`crate::search`).
    pub fn search(&self) -> PathBuf {
        self.dir.join("search")
    }

    /// The code graph's per-file facts (`crate::codegraph::FactFiles`).
    pub fn graph_facts(&self) -> PathBuf {
        self.dir.join("facts")
    }

    /// The semantic index and its vector cache (`crate::semantic`).
    pub fn semantic(&self) -> PathBuf {
        self.dir.join("semantic")
    }

    /// The query server's Unix socket.
    pub fn socket(&self) -> PathBuf {
        self.dir.join("query.sock")
    }

    /// A hook run found the writer busy: the writer runs once more.
    pub fn pending(&self) -> PathBuf {
        self.dir.join("pending")
    }

    /// Present while `rebuild` refills the store (and after one that was
    /// killed, until a writer finishes the job): readers say so rather than
    /// answer from a half-filled store.
    pub fn rebuilding(&self) -> PathBuf {
        self.dir.join("rebuilding")
    }

    /// Per-target watermarks of the Neo4j push.
    pub fn neo4j(&self) -> PathBuf {
        self.dir.join("neo4j")
    }

    fn hook_log(&self) -> PathBuf {
        self.dir.join("hook.log")
    }

    fn last_error_file(&self) -> PathBuf {
        self.dir.join("last-error")
    }

    /// Creates the directory.
    pub fn create(&self) -> Result<(), StateError> {
        std::fs::create_dir_all(&self.dir).map_err(|source| StateError::Io {
            path: self.dir.clone(),
            source,
        })
    }

    /// The last error a background (hook) run recorded, if the latest run failed.
    pub fn last_error(&self) -> Option<String> {
        std::fs::read_to_string(self.last_error_file())
            .ok()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
    }

    /// Records the outcome of a background run: `Err` is kept as the last
    /// error (shown by `status`), `Ok` clears it.
    pub fn record_outcome(&self, outcome: Result<&str, &str>) {
        let line = match outcome {
            Ok(line) => format!("ok: {line}"),
            Err(line) => format!("error: {line}"),
        };
        self.log(&line);
        match outcome {
            Ok(_) => {
                let _ = std::fs::remove_file(self.last_error_file());
            }
            Err(e) => {
                let _ = std::fs::write(self.last_error_file(), format!("{e}\n"));
            }
        }
    }

    /// Appends a line to `hook.log` (kept under 1 MiB by rotating it once).
    pub fn log(&self, line: &str) {
        let log = self.hook_log();
        if std::fs::metadata(&log).is_ok_and(|m| m.len() > 1024 * 1024) {
            let _ = std::fs::rename(&log, self.dir.join("hook.log.old"));
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        if let Ok(mut f) = File::options().create(true).append(true).open(&log) {
            let _ = writeln!(f, "{now} {line}");
        }
    }
}

/// The writer lock. Dropping it releases it. The holder writes its pid
/// into the lock file, so that whoever waits can say who holds it.
pub struct WriterLock {
    _file: File,
}

/// How long to wait for another writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Not at all: `Busy` at once (the hooks hand over instead).
    No,
    /// Up to this long, then `Busy`.
    UpTo(std::time::Duration),
}

impl WriterLock {
    /// How long commands wait for another writer by default (a backfill
    /// can take minutes); `DIFFIDX_LOCK_WAIT` (seconds) overrides it.
    pub fn default_wait() -> Wait {
        let seconds = std::env::var("DIFFIDX_LOCK_WAIT")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(600);
        Wait::UpTo(std::time::Duration::from_secs(seconds))
    }

    /// Takes the lock. While another process holds it, `on_wait` hears once
    /// who (its pid, when it recorded one), and this waits as `wait` says.
    pub fn acquire(
        state: &StateDir,
        wait: Wait,
        on_wait: &mut dyn FnMut(Option<u32>),
    ) -> Result<WriterLock, StateError> {
        state.create()?;
        let path = state.dir.join("index.lock");
        let io = |source| StateError::Io {
            path: path.clone(),
            source,
        };
        let mut file = File::options()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(io)?;
        let started = std::time::Instant::now();
        let mut told = false;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::Error(source)) => return Err(io(source)),
                Err(std::fs::TryLockError::WouldBlock) => {
                    let holder = std::fs::read_to_string(&path)
                        .ok()
                        .and_then(|text| text.trim().parse::<u32>().ok());
                    let limit = match wait {
                        Wait::No => {
                            return Err(StateError::Busy {
                                holder,
                                waited: None,
                            })
                        }
                        Wait::UpTo(limit) => limit,
                    };
                    if started.elapsed() >= limit {
                        return Err(StateError::Busy {
                            holder,
                            waited: Some(started.elapsed()),
                        });
                    }
                    if !told {
                        on_wait(holder);
                        told = true;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
            }
        }
        // Ours now: record who holds it.
        use std::io::Seek;
        let _ = file
            .set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| writeln!(file, "{}", std::process::id()));
        Ok(WriterLock { _file: file })
    }
}
