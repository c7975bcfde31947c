//! Flags (all defined here) and dispatch to one module per subcommand.
//!
//! Exit codes: 0 ok, 1 failure, 2 usage or configuration error.

mod show;
mod style;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use diffidx_core::git::Repo;

#[derive(Parser)]
#[command(
    name = "git-diffidx",
    bin_name = "git diffidx",
    version,
    about = "Symbol-level change records for git history",
    long_about = "Symbol-level change records for git history.\n\n\
        diffidx parses the files a commit changes (C# and Rust) and labels each class, \
        method and function ADDED, MODIFIED, DELETED or MOVED. Comment- and \
        whitespace-only edits do not count."
)]
pub struct Cli {
    /// Run as if started in DIR instead of the current directory.
    #[arg(short = 'C', value_name = "DIR", global = true)]
    pub dir: Option<PathBuf>,

    /// When to use colors: auto (a terminal without NO_COLOR), always, never.
    #[arg(long, value_name = "WHEN", default_value = "auto", global = true)]
    pub color: style::ColorChoice,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Show the symbols one commit changed, or the net change of A..B / A...B.
    Show(ShowArgs),
}

#[derive(Args)]
pub struct ShowArgs {
    /// A commit (default HEAD), `A..B` (tree A against tree B) or `A...B`
    /// (merge base of A and B against B, what a pull request shows).
    #[arg(value_name = "REV|A..B", default_value = "HEAD")]
    pub rev: String,

    /// Print the note document (DESIGN.md §4) instead of text.
    #[arg(long)]
    pub json: bool,

    /// Label the symbols a unified diff touches (FILE, or - for stdin), e.g.
    /// `git diff | git diffidx show --patch -`. Pre-images are read from REV
    /// (default HEAD), or from the index when the patch does not apply there.
    #[arg(long, value_name = "FILE|-")]
    pub patch: Option<String>,

    #[command(flatten)]
    pub limits: LimitArgs,
}

#[derive(Args)]
pub struct LimitArgs {
    /// Skip (and report) files larger than this many bytes; git config
    /// `diffidx.maxFileSize`; default 1 MiB.
    #[arg(long, value_name = "BYTES")]
    pub max_file_size: Option<usize>,
}

impl LimitArgs {
    pub fn options(&self, repo: &Repo) -> diffidx_core::DiffOptions {
        let mut options = diffidx_core::DiffOptions::default();
        let configured = repo
            .config_integer("diffidx.maxFileSize")
            .and_then(|v| usize::try_from(v).ok());
        if let Some(limit) = self.max_file_size.or(configured) {
            options.max_file_size = limit;
        }
        options
    }
}

/// Global context every subcommand gets.
pub struct Context {
    pub dir: PathBuf,
    pub style: style::Style,
}

impl Context {
    pub fn open_repo(&self) -> Result<Repo, diffidx_core::Error> {
        Repo::discover(&self.dir)
    }
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let ctx = Context {
        dir: cli.dir.clone().unwrap_or_else(|| PathBuf::from(".")),
        style: style::Style::for_stdout(cli.color),
    };
    let result = match &cli.command {
        Command::Show(args) => show::run(&ctx, args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(exit_code(&err))
        }
    }
}

/// 2 for errors in what the user asked for, 1 for everything else.
fn exit_code(err: &anyhow::Error) -> u8 {
    use diffidx_core::Error as E;
    match err.downcast_ref::<E>() {
        Some(E::UnknownRevision { .. } | E::OpenRepository { .. }) => 2,
        _ if err.downcast_ref::<UsageError>().is_some() => 2,
        _ => 1,
    }
}

/// A usage or configuration error detected after flag parsing.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);
