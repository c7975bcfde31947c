//! Long output through a pager, as git does: only when standard output is a
//! terminal and `--no-pager` was not given; the pager is `GIT_PAGER`, git
//! config `core.pager`, `PAGER`, else `less`, run by `sh -c`. `LESS=FRX`
//! and `LV=-c` are set when unset (as git sets them), so a short output
//! still just prints and colors pass through. An empty pager or `cat`
//! means none.

use std::io::{IsTerminal, Write};
use std::process::{Command, Stdio};

use diffidx_core::git::Repo;

use super::util::{print, Context};

/// Writes long output: through the pager on a terminal, else to stdout.
pub fn print_paged(ctx: &Context, repo: Option<&Repo>, text: &str) -> anyhow::Result<()> {
    match choose(repo, ctx.paging) {
        Some(pager) => show(&pager, text),
        None => print(text),
    }
}

/// The pager command to use for output to this terminal, if any.
pub fn choose(repo: Option<&Repo>, enabled: bool) -> Option<String> {
    if !enabled || !std::io::stdout().is_terminal() {
        return None;
    }
    let env = |name: &str| std::env::var(name).ok();
    let pager = env("GIT_PAGER")
        .or_else(|| repo.and_then(|r| r.config_string("core.pager")))
        .or_else(|| env("PAGER"))
        .unwrap_or_else(|| "less".to_owned());
    let pager = pager.trim().to_owned();
    (!pager.is_empty() && pager != "cat").then_some(pager)
}

/// Shows `text` through `pager`; falls back to printing it when the pager
/// cannot be started. A pager the user quits early is not an error.
pub fn show(pager: &str, text: &str) -> anyhow::Result<()> {
    let mut command = Command::new("sh");
    command.args(["-c", pager]).stdin(Stdio::piped());
    if std::env::var_os("LESS").is_none() {
        command.env("LESS", "FRX");
    }
    if std::env::var_os("LV").is_none() {
        command.env("LV", "-c");
    }
    let Ok(mut child) = command.spawn() else {
        return print(text);
    };
    if let Some(mut stdin) = child.stdin.take() {
        // A closed pipe: the user quit the pager.
        let _ = stdin.write_all(text.as_bytes());
    }
    let _ = child.wait();
    Ok(())
}
