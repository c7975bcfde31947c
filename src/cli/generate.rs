//! `git diffidx generate man|bash|zsh|fish [--dir DIR]`: the manual pages and
//! shell completions, made from the same flag definitions as the command
//! line itself, so they cannot drift from it. `scripts/install` writes them
//! where `man` and the shells look (`git diffidx --help` asks git for the
//! page `git-diffidx(1)`).

use std::path::PathBuf;

use clap::{Args, CommandFactory, ValueEnum};

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
    let mut command = super::Cli::command();
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
        Generated::Bash => clap_complete::Shell::Bash,
        Generated::Zsh => clap_complete::Shell::Zsh,
        Generated::Fish => clap_complete::Shell::Fish,
    };
    match &args.dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            let path = clap_complete::generate_to(shell, &mut command, BIN, dir)?;
            eprintln!("wrote {}", path.display());
        }
        None => {
            // Into a buffer: the generator panics on a closed pipe.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut command, BIN, &mut script);
            super::util::print(&String::from_utf8_lossy(&script))?;
        }
    }
    Ok(())
}
