//! Flags (all defined here) and dispatch to one module per subcommand.
//!
//! Exit codes: 0 ok, 1 failure, 2 usage or configuration error.

mod hooks;
mod index;
mod init;
mod log;
mod pr_comment;
mod push;
mod rebuild;
mod serve;
mod show;
mod status;
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
    /// Index commits not indexed yet (notes, then the store); idempotent.
    Index(IndexArgs),
    /// The history of a symbol, newest first, following moves.
    Log(LogArgs),
    /// Indexed commits, backlog, store size, hooks.
    Status(StatusArgs),
    /// Recreate the store from the notes alone.
    Rebuild(RebuildArgs),
    /// Push every indexed commit not pushed yet to the shared Neo4j
    /// (NEO4J_URI, NEO4J_USERNAME, NEO4J_PASSWORD, NEO4J_DATABASE).
    Push(PushArgs),
    /// Create the store, install the hooks and index recent history.
    Init(InitArgs),
    /// Comment a pull request's modified, deleted, added and moved symbols
    /// (one comment, updated in place; GITHUB_* environment or flags).
    PrComment(PrCommentArgs),
    /// Install or remove the hooks that keep the index current.
    Hooks(HooksArgs),
    /// Keep the store open and answer `log` queries fast (started by `log`
    /// in the background; exits when idle).
    Serve(ServeArgs),
    /// What the hooks run (in the background); not for direct use.
    #[command(hide = true)]
    HookRun(HookRunArgs),
}

#[derive(Args)]
pub struct InitArgs {
    /// Index the last N days (default: git config `diffidx.backfillDays`, else 90).
    #[arg(long, value_name = "N")]
    pub days: Option<u64>,

    /// Do not install the hooks.
    #[arg(long)]
    pub no_hooks: bool,

    /// Also fetch the notes of REMOTE (default origin) on `git fetch`, to be
    /// imported by `index`; publish yours with `git push REMOTE refs/notes/diffidx`.
    #[arg(long, value_name = "REMOTE", num_args = 0..=1, default_missing_value = "origin")]
    pub share: Option<String>,

    #[command(flatten)]
    pub limits: LimitArgs,
}

#[derive(Args)]
pub struct PrCommentArgs {
    /// The repository, OWNER/NAME (default: GITHUB_REPOSITORY).
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo: Option<String>,

    /// The pull request number (default: from the event file GITHUB_EVENT_PATH).
    #[arg(long, value_name = "N")]
    pub pr: Option<u64>,

    /// The branch the pull request merges into (default: the event's base sha).
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,

    /// The pull request's tip (default: the event's head sha, else GITHUB_SHA, else HEAD).
    #[arg(long, value_name = "REV")]
    pub head: Option<String>,

    /// Print the comment's markdown instead of calling GitHub.
    #[arg(long)]
    pub dry_run: bool,

    /// Only these languages, comma-separated (csharp, rust; default all).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub languages: Vec<String>,

    #[command(flatten)]
    pub limits: LimitArgs,
}

#[derive(Args)]
pub struct ServeArgs {
    /// Exit after this many seconds without a query.
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    pub idle: u64,
}

#[derive(Args)]
pub struct HooksArgs {
    #[arg(value_enum)]
    pub action: HooksAction,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum HooksAction {
    Install,
    Uninstall,
}

#[derive(Args)]
pub struct HookRunArgs {
    /// The hook that started this run.
    pub hook: String,
    /// The hook's own arguments (ignored).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub rest: Vec<String>,
}

#[derive(Args)]
pub struct IndexArgs {
    /// Revisions to index back from (default HEAD); `A..B` indexes what B
    /// reaches and A does not.
    #[arg(value_name = "REV|RANGE")]
    pub revs: Vec<String>,

    /// Only index commits from the last N days.
    #[arg(long, value_name = "N")]
    pub days: Option<u64>,

    /// Print nothing on success.
    #[arg(short, long)]
    pub quiet: bool,

    #[command(flatten)]
    pub limits: LimitArgs,
}

#[derive(Args)]
pub struct LogArgs {
    /// A qualified name, or a suffix of one at a `.`/`::` boundary
    /// (`Foo.Bar` matches `Acme.Foo.Bar`); `Foo.Bar(int,string)` picks one overload.
    #[arg(long, value_name = "NAME")]
    pub symbol: String,

    /// Only symbols of this kind (method, class, function, ...).
    #[arg(long, value_name = "KIND")]
    pub kind: Option<String>,

    /// Only symbols in this file or directory.
    #[arg(long, value_name = "PATH")]
    pub path: Option<String>,

    /// Print a JSON array, newest first.
    #[arg(long)]
    pub json: bool,

    /// Show each version's own diff of the symbol.
    #[arg(short = 'p', long = "patch")]
    pub patch: bool,
}

#[derive(Args)]
pub struct StatusArgs {
    /// Print a JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct PushArgs {
    /// Print nothing on success.
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Args)]
pub struct RebuildArgs {
    #[command(flatten)]
    pub limits: LimitArgs,
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
    pub stderr_is_terminal: bool,
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
        stderr_is_terminal: std::io::IsTerminal::is_terminal(&std::io::stderr()),
    };
    let result = match &cli.command {
        Command::Show(args) => show::run(&ctx, args),
        Command::Index(args) => index::run(&ctx, args),
        Command::Log(args) => log::run(&ctx, args),
        Command::Status(args) => status::run(&ctx, args),
        Command::Rebuild(args) => rebuild::run(&ctx, args),
        Command::Push(args) => push::run(&ctx, args),
        Command::Init(args) => init::run(&ctx, args),
        Command::PrComment(args) => pr_comment::run(&ctx, args),
        Command::Hooks(args) => hooks::run(&ctx, args),
        Command::Serve(args) => serve::run(&ctx, args),
        Command::HookRun(args) => hooks::hook_run(&ctx, args),
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
        None if matches!(
            err.downcast_ref::<diffidx::index::IndexError>(),
            Some(diffidx::index::IndexError::Core(
                E::UnknownRevision { .. } | E::OpenRepository { .. }
            ))
        ) =>
        {
            2
        }
        _ if err.downcast_ref::<UsageError>().is_some() => 2,
        _ if matches!(
            err.downcast_ref::<diffidx_github::GithubError>(),
            Some(
                diffidx_github::GithubError::Config(_)
                    | diffidx_github::GithubError::EventFile { .. }
            )
        ) =>
        {
            2
        }
        _ if matches!(
            err.downcast_ref::<diffidx::sync::SyncError>(),
            Some(diffidx::sync::SyncError::Config(_))
        ) =>
        {
            2
        }
        _ => 1,
    }
}

/// Writes to stdout, treating a closed pipe (`| head`) as success.
pub fn print(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => {
            use anyhow::Context as _;
            other.context("cannot write to standard output")
        }
    }
}

/// A usage or configuration error detected after flag parsing.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);
