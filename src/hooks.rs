//! Git hooks that keep the index current: post-commit, post-merge and
//! post-rewrite (amend, rebase).
//!
//! A hook must never block or fail a git command, so each one starts
//! `git diffidx hook-run` in the background with its output discarded and
//! returns at once. A hook the user already had is kept: it is renamed to
//! `<hook>.diffidx-user` and run first by ours, with its arguments, its
//! standard input and its exit status.

use std::path::{Path, PathBuf};

use diffidx_core::git::Repo;

pub const HOOKS: [&str; 3] = ["post-commit", "post-merge", "post-rewrite"];
const MARKER: &str = "# installed by `git diffidx hooks install`";
const USER_SUFFIX: &str = "diffidx-user";

#[derive(Debug, thiserror::Error)]
#[error("cannot {action} {}: {source}", path.display())]
pub struct HookError {
    action: &'static str,
    path: PathBuf,
    #[source]
    source: std::io::Error,
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

/// The hook script. It prefers `git-diffidx` on PATH and falls back to the
/// binary that installed it (GUI clients often run hooks with a short PATH).
fn script(hook: &str) -> String {
    let installed_by = std::env::current_exe()
        .map(|p| p.display().to_string().replace('\'', ""))
        .unwrap_or_default();
    format!(
        "#!/bin/sh\n{MARKER}\n\
         # Runs the hook you had before (if any), then indexes in the background.\n\
         status=0\n\
         if [ -x \"$0.{USER_SUFFIX}\" ]; then \"$0.{USER_SUFFIX}\" \"$@\" || status=$?; fi\n\
         diffidx=$(command -v git-diffidx || echo '{installed_by}')\n\
         if [ -x \"$diffidx\" ]; then\n\
         \x20 (\"$diffidx\" hook-run {hook} </dev/null >/dev/null 2>&1 &)\n\
         fi\n\
         exit $status\n"
    )
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
    let mut installed = Vec::new();
    for hook in HOOKS {
        let path = dir.join(hook);
        let user = dir.join(format!("{hook}.{USER_SUFFIX}"));
        if path.exists() && !is_ours(&path) {
            std::fs::rename(&path, &user).map_err(|source| HookError {
                action: "keep your existing hook",
                path: path.clone(),
                source,
            })?;
        }
        write_executable(&path, &script(hook))?;
        installed.push(path);
    }
    Ok(installed)
}

/// Removes our hooks and puts back the ones they had replaced.
pub fn uninstall(repo: &Repo) -> Result<Vec<PathBuf>, HookError> {
    let dir = hooks_dir(repo);
    let mut removed = Vec::new();
    for hook in HOOKS {
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
        .filter(|h| is_ours(&dir.join(h)))
        .map(|h| h.to_string())
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
