//! `git diffidx generate man|bash|zsh|fish [--dir DIR]`: the manual pages and
//! shell completions, made from the same flag definitions as the command
//! line itself, so they cannot drift from it. `scripts/install` writes them
//! where `man` and the shells look (`git diffidx --help` asks git for the
//! page `git-diffidx(1)`).

use std::path::PathBuf;

use clap::{Args, CommandFactory, ValueEnum};
use clap_complete::Generator as _;

#[derive(Args)]
pub struct GenerateArgs {
    /// What to make.
    #[arg(value_enum)]
    pub what: Generated,

    /// Write the files into DIR (man pages into DIR/man1, one per command)
    /// instead of printing the main one.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Generated {
    /// Manual pages (roff).
    Man,
    Bash,
    Zsh,
    Fish,
}

const BIN: &str = "git-diffidx";

pub fn run(args: &GenerateArgs) -> anyhow::Result<()> {
    let command = super::Cli::command();
    let shell = match args.what {
        Generated::Man => {
            match &args.dir {
                Some(dir) => {
                    let pages = dir.join("man1");
                    std::fs::create_dir_all(&pages)?;
                    clap_mangen::generate_to(command, &pages)?;
                    eprintln!("wrote the manual pages into {}", pages.display());
                }
                None => {
                    let mut page = Vec::new();
                    clap_mangen::Man::new(command).render(&mut page)?;
                    super::util::print(&String::from_utf8_lossy(&page))?;
                }
            }
            return Ok(());
        }
        // Completions are for the program `git-diffidx`: the subcommands'
        // names must be built from that, not from the `git diffidx` the
        // help text shows (the generators key their states on them).
        Generated::Bash => clap_complete::Shell::Bash,
        Generated::Zsh => clap_complete::Shell::Zsh,
        Generated::Fish => clap_complete::Shell::Fish,
    };
    let mut command = command.bin_name(BIN);
    // Into a buffer: the generator panics on a closed pipe.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, BIN, &mut script);
    let mut script = String::from_utf8_lossy(&script).into_owned();
    if shell == clap_complete::Shell::Bash {
        // clap_complete 4.6 names the states of a hyphenated program two
        // ways (`git__diffidx__subcmd__log` where it sets them,
        // `git__subcmd__diffidx__subcmd__log` where it matches them), so no
        // subcommand's flags would complete; one name for both.
        script = script.replace("git__subcmd__diffidx", "git__diffidx");
        script.push_str(GIT_SUBCOMMAND_SHIM);
    }
    match &args.dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            let path = dir.join(shell.file_name(BIN));
            std::fs::write(&path, script)?;
            eprintln!("wrote {}", path.display());
        }
        None => super::util::print(&script)?,
    }
    Ok(())
}

/// `git diffidx <TAB>`: git's bash completion calls `_git_diffidx` for a
/// subcommand of its own; it completes the words after `git` as the
/// `git-diffidx` command would.
const GIT_SUBCOMMAND_SHIM: &str = r#"
# `git diffidx <TAB>`: git's completion calls _git_diffidx.
_git_diffidx() {
    local at=1
    while [[ $at -lt $COMP_CWORD && "${COMP_WORDS[$at]}" != diffidx ]]; do
        at=$((at + 1))
    done
    local -a COMP_WORDS=("git-diffidx" "${COMP_WORDS[@]:$((at + 1))}")
    local COMP_CWORD=$((COMP_CWORD - at))
    _git__diffidx git-diffidx "${COMP_WORDS[$COMP_CWORD]}" "${COMP_WORDS[$((COMP_CWORD - 1))]}"
}
"#;
