//! Git hooks that keep the index current: post-commit, post-merge and
//! post-rewrite (amend, rebase), and what they run.
//!
//! A hook must never block or fail a git command, so each one starts
//! `git diffidx hook-run` in the background with its output discarded and
//! returns at once. The scripts are the files in the repository's `hooks/`
//! directory, written as they are. A hook the user already had is kept: it
//! is renamed to `<hook>.diffidx-user` and run first by ours, with its
//! arguments, its standard input and its exit status. The background run
//! ([`run`]) indexes, then pushes to Neo4j when credentials are present.

use std::path::{Path, PathBuf};

use diffidx_core::git::{ConfigKey, Repo};

use crate::index::{index_locked, IndexError, IndexOptions};
use crate::state::{StateDir, StateError, Wait, WriterLock};

/// The hooks and their scripts (the files in `hooks/`).
pub const HOOKS: [(&str, &str); 3] = [
    ("post-commit", include_str!("../../../hooks/post-commit")),
    ("post-merge", include_str!("../../../hooks/post-merge")),
    ("post-rewrite", include_str!("../../../hooks/post-rewrite")),
];
const MARKER: &str = "# installed by `git diffidx hooks install`";
const USER_SUFFIX: &str = "diffidx-user";

/// Where the scripts find this binary when it is not on PATH.
const PROGRAM_KEY: ConfigKey<'static> = ConfigKey {
    section: "diffidx",
    subsection: None,
    name: "program",
};

#[derive(Debug, thiserror::Error)]
#[error("cannot {action} {}: {source}", path.display())]
pub struct HookError {
    action: &'static str,
    path: PathBuf,
    #[source]
    source: std::io::Error,
}

impl HookError {
    fn config(repo: &Repo, e: diffidx_core::Error) -> HookError {
        HookError {
            action: "record the program path in",
            path: repo.common_dir().join("config"),
            source: std::io::Error::other(e.to_string()),
        }
    }
}

/// The hooks directory git uses: `core.hooksPath` (relative to the work tree) or `.git/hooks`.
pub fn hooks_dir(repo: &Repo) -> PathBuf {
    match repo.config_string("core.hooksPath") {
        Some(configured) => {
            let p = PathBuf::from(shellexpand_home(&configured));
            if p.is_absolute() {
                p
            } else {
                repo.work_dir().unwrap_or_else(|| repo.common_dir()).join(p)
            }
        }
        None => repo.common_dir().join("hooks"),
    }
}

fn shellexpand_home(path: &str) -> String {
    match (path.strip_prefix("~/"), std::env::var("HOME")) {
        (Some(rest), Ok(home)) => format!("{home}/{rest}"),
        _ => path.to_owned(),
    }
}

fn is_ours(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|s| s.contains(MARKER))
}

/// Installs the hooks; returns their paths. Idempotent.
pub fn install(repo: &Repo) -> Result<Vec<PathBuf>, HookError> {
    let dir = hooks_dir(repo);
    std::fs::create_dir_all(&dir).map_err(|source| HookError {
        action: "create",
        path: dir.clone(),
        source,
    })?;
    // The scripts fall back to this binary when git-diffidx is not on PATH.
    if let Ok(program) = std::env::current_exe() {
        let program = program.display().to_string();
        if repo.config_string("diffidx.program").as_deref() != Some(program.as_str()) {
            repo.config_set_local(PROGRAM_KEY, &program)
                .map_err(|e| HookError::config(repo, e))?;
        }
    }
    let mut installed = Vec::new();
    for (hook, script) in HOOKS {
        let path = dir.join(hook);
        let user = dir.join(format!("{hook}.{USER_SUFFIX}"));
        if path.exists() && !is_ours(&path) {
            std::fs::rename(&path, &user).map_err(|source| HookError {
                action: "keep your existing hook",
                path: path.clone(),
                source,
            })?;
        }
        write_executable(&path, script)?;
        installed.push(path);
    }
    Ok(installed)
}

/// Removes our hooks and puts back the ones they had replaced.
pub fn uninstall(repo: &Repo) -> Result<Vec<PathBuf>, HookError> {
    let dir = hooks_dir(repo);
    let mut removed = Vec::new();
    for (hook, _) in HOOKS {
        let path = dir.join(hook);
        if !is_ours(&path) {
            continue;
        }
        std::fs::remove_file(&path).map_err(|source| HookError {
            action: "remove",
            path: path.clone(),
            source,
        })?;
        let user = dir.join(format!("{hook}.{USER_SUFFIX}"));
        if user.exists() {
            std::fs::rename(&user, &path).map_err(|source| HookError {
                action: "restore",
                path: user.clone(),
                source,
            })?;
        }
        removed.push(path);
    }
    Ok(removed)
}

/// Names of our hooks that are installed.
pub fn installed(repo: &Repo) -> Vec<String> {
    let dir = hooks_dir(repo);
    HOOKS
        .iter()
        .filter(|(h, _)| is_ours(&dir.join(h)))
        .map(|(h, _)| h.to_string())
        .collect()
}

fn write_executable(path: &Path, content: &str) -> Result<(), HookError> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, content).map_err(|source| HookError {
        action: "write",
        path: path.to_owned(),
        source,
    })?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).map_err(|source| {
        HookError {
            action: "make executable",
            path: path.to_owned(),
            source,
        }
    })
}

/// What a hook runs, in the background: index, handing over to a running
/// writer instead of waiting for it, then push when Neo4j credentials are
/// present. A run that finds the lock taken leaves a `pending` mark; the
/// writer checks for it after releasing the lock and runs again, so every
/// commit ends up indexed and no run ever waits or fails visibly. Outcomes
/// go to `.git/diffidx/hook.log`, failures also to `status`'s last error.
pub fn run(repo: &Repo, options: &IndexOptions) -> Result<(), IndexError> {
    let state = StateDir::of(repo);
    state.create()?;
    let pending = state.pending();
    let _ = std::fs::write(&pending, b"");
    loop {
        let lock = match WriterLock::acquire(&state, Wait::No, &mut |_| {}) {
            Ok(lock) => lock,
            Err(StateError::Busy { .. }) => return Ok(()), // the writer will see `pending`
            Err(e) => return Err(e.into()),
        };
        let _ = std::fs::remove_file(&pending);
        let result = index_locked(repo, options);
        drop(lock);
        match &result {
            Ok(r) => {
                let mut line = format!(
                    "{} computed, {} imported, {} loaded",
                    r.computed, r.imported, r.loaded
                );
                // A push that fails or skips notes is this run's error: it
                // shows in `status` until a later run succeeds.
                let pushed = match crate::sync::push_if_configured(repo) {
                    Ok(Some((_, Ok(pushed)))) if pushed.invalid.is_empty() => {
                        line.push_str(&format!(", {} pushed", pushed.commits));
                        Ok(())
                    }
                    Ok(Some((_, Ok(pushed)))) => Err(format!(
                        "{} pushed, but {} invalid notes were not (see `git diffidx fsck`)",
                        pushed.commits,
                        pushed.invalid.len()
                    )),
                    Ok(Some((_, Err(e)))) | Err(e) => Err(format!("push failed: {e}")),
                    Ok(None) => Ok(()),
                };
                match pushed {
                    Ok(()) => state.record_outcome(Ok(&line)),
                    Err(e) => state.record_outcome(Err(&format!("{line}; {e}"))),
                }
            }
            Err(e) => state.record_outcome(Err(&e.to_string())),
        }
        result?;
        if !pending.exists() {
            return Ok(());
        }
    }
}
