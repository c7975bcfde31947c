//! The command line: global flags and the subcommands, one file each with
//! its own flags; what they share is in `util`.

mod context;
mod fsck;
mod gc;
mod generate;
mod graph;
mod hook_run;
mod hooks;
mod impact;
mod index;
mod init;
mod log;
mod mcp;
mod pager;
mod pr_comment;
mod push;
mod rebuild;
mod search;
mod serve;
mod show;
mod status;
mod util;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "git-diffidx",
    bin_name = "git diffidx",
    version,
    about = "Symbol-level change records for git history",
    long_about = "Symbol-level change records for git history.\n\n\
        diffidx parses the files a commit changes (C#, Rust, Python, Java, Go, TypeScript, JavaScript) and labels each class, \
        method and function ADDED, MODIFIED, DELETED or MOVED. Comment- and \
        whitespace-only edits do not count."
)]
struct Cli {
    /// Run as if started in DIR instead of the current directory.
    #[arg(short = 'C', value_name = "DIR", global = true)]
    dir: Option<PathBuf>,

    /// Do not send long output (`show`, `log`) through a pager.
    #[arg(short = 'P', long, global = true)]
    no_pager: bool,

    /// When to use colors: auto (git config color.diffidx, else color.ui,
    /// else a terminal without NO_COLOR), always, never.
    #[arg(long, value_name = "WHEN", default_value = "auto", global = true)]
    color: util::ColorChoice,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show the symbols one commit changed, or the net change of A..B / A...B.
    Show(show::ShowArgs),
    /// Index commits not indexed yet (notes, then the store); idempotent.
    Index(index::IndexArgs),
    /// The history of a symbol, newest first, following moves.
    Log(log::LogArgs),
    /// Find symbols by name (exact, suffix, parts, prefix, misspelled), then
    /// by the words of their code; deleted ones with `--deleted`/`--all`.
    Search(search::SearchArgs),
    /// The code graph around a symbol: callers, callees, imports, bases.
    Graph(graph::GraphArgs),
    /// What changed in a service (named in the service map) during an
    /// incident window: ranked symbol-level records, deletions first.
    Context(context::ContextArgs),
    /// What a change touched, and what calls, inherits or implements it.
    Impact(impact::ImpactArgs),
    /// Indexed commits, backlog, store size, hooks.
    Status(status::StatusArgs),
    /// Recreate the store from the notes alone.
    Rebuild(rebuild::RebuildArgs),
    /// Check every note, and the store against the notes; say what to repair.
    Fsck(fsck::FsckArgs),
    /// Forget indexed commits no ref reaches (left behind by a rebase or amend).
    Gc(gc::GcArgs),
    /// Push every indexed commit not pushed yet to the shared Neo4j
    /// (NEO4J_URI, NEO4J_USERNAME, NEO4J_PASSWORD, NEO4J_DATABASE).
    Push(push::PushArgs),
    /// Create the store, install the hooks and index recent history.
    Init(init::InitArgs),
    /// Comment a pull request's modified, deleted, added and moved symbols
    /// (one comment, updated in place; GITHUB_* environment or flags).
    PrComment(pr_comment::PrCommentArgs),
    /// Install or remove the hooks that keep the index current.
    Hooks(hooks::HooksArgs),
    /// Write the manual pages or shell completions (scripts/install does).
    Generate(generate::GenerateArgs),
    /// Keep the store open and answer queries fast (started by queries in
    /// the background; exits when idle); JSON-RPC 2.0 on its socket and,
    /// with --http, over HTTP.
    Serve(serve::ServeArgs),
    /// Serve the query commands as Model Context Protocol tools over stdio
    /// (for code agents).
    Mcp(mcp::McpArgs),
    /// What the hooks run (in the background); not for direct use.
    #[command(hide = true)]
    HookRun(hook_run::HookRunArgs),
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let ctx = util::Context::new(
        cli.dir.clone().unwrap_or_else(|| PathBuf::from(".")),
        cli.color,
        !cli.no_pager,
    );
    let result = match &cli.command {
        Command::Show(args) => show::run(&ctx, args),
        Command::Index(args) => index::run(&ctx, args),
        Command::Log(args) => log::run(&ctx, args),
        Command::Search(args) => search::run(&ctx, args),
        Command::Graph(args) => graph::run(&ctx, args),
        Command::Context(args) => context::run(&ctx, args),
        Command::Impact(args) => impact::run(&ctx, args),
        Command::Status(args) => status::run(&ctx, args),
        Command::Rebuild(args) => rebuild::run(&ctx, args),
        Command::Fsck(args) => fsck::run(&ctx, args),
        Command::Gc(args) => gc::run(&ctx, args),
        Command::Push(args) => push::run(&ctx, args),
        Command::Init(args) => init::run(&ctx, args),
        Command::PrComment(args) => pr_comment::run(&ctx, args),
        Command::Hooks(args) => hooks::run(&ctx, args),
        Command::Serve(args) => serve::run(&ctx, args),
        Command::Mcp(args) => mcp::run(&ctx, args),
        Command::Generate(args) => generate::run(args),
        Command::HookRun(args) => hook_run::run(&ctx, args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(util::exit_code(&err))
        }
    }
}
