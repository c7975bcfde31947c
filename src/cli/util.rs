//! What the subcommands share: the global context, flags used by several
//! commands, output, terminal styles, progress, summaries and exit codes.
//! Subcommands import this module, never each other.
//!
//! Exit codes: 0 ok, 1 failure, 2 usage or configuration error.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;
use diffidx_core::git::Repo;
use diffidx_core::Status;
use diffidx_lib::index::{IndexReport, Progress};
use diffidx_lib::sync::Neo4jConfig;

#[derive(Args)]
pub struct LimitArgs {
    /// Skip (and report) files larger than this many bytes; git config
    /// `diffidx.maxFileSize`; default 1 MiB.
    #[arg(long, value_name = "BYTES")]
    pub max_file_size: Option<usize>,
}

impl LimitArgs {
    pub fn options(&self, repo: &Repo) -> diffidx_core::DiffOptions {
        diffidx_lib::settings::diff_options(repo, self.max_file_size)
    }
}

/// Global context every subcommand gets.
pub struct Context {
    pub dir: PathBuf,
    /// `--color`; what it means here is worked out on first use (`style`).
    pub color: ColorChoice,
    pub stderr_is_terminal: bool,
    /// Long output may go through a pager (not with `--no-pager`).
    pub paging: bool,
    style: std::cell::OnceCell<Style>,
}

impl Context {
    pub fn new(dir: PathBuf, color: ColorChoice, paging: bool) -> Context {
        Context {
            dir,
            color,
            stderr_is_terminal: std::io::stderr().is_terminal(),
            paging,
            style: std::cell::OnceCell::new(),
        }
    }

    pub fn open_repo(&self) -> Result<Repo, diffidx_core::Error> {
        Repo::discover(&self.dir)
    }

    /// Colors for stdout, decided when a command first prints styled text
    /// (reading git config costs a repository open that commands which
    /// print nothing styled, the hooks' run among them, need not pay).
    pub fn style(&self) -> Style {
        *self
            .style
            .get_or_init(|| Style::for_stdout(self.color, &self.dir))
    }
}

/// The terminal's width when stdout is one (`COLUMNS` overrides it), for
/// output that fits a line per entry; `None` when writing elsewhere.
pub fn terminal_width() -> Option<usize> {
    if !std::io::stdout().is_terminal() {
        return None;
    }
    let columns = std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok());
    columns
        .or_else(|| {
            console::Term::stdout()
                .size_checked()
                .map(|(_, w)| usize::from(w))
        })
        .filter(|&w| w >= 40)
}

/// `line` cut to `width` columns with an ellipsis (colors and wide
/// characters measured as the terminal shows them).
pub fn fit(line: &str, width: Option<usize>) -> String {
    match width {
        Some(width) => console::truncate_str(line, width, "…").into_owned(),
        None => line.to_owned(),
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

/// `text` safe to print on a terminal: control characters (ESC, newline,
/// ...) and bidirectional-text controls (RLO, ...) are shown escaped
/// (`\u{1b}`), so a file, symbol or commit from a cloned repository cannot
/// rewrite the user's terminal or disguise what it shows.
pub fn terminal_safe(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| {
        c.is_control()
            || matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    text.chars()
        .map(|c| {
            if unsafe_char(c) {
                format!("\\u{{{:x}}}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect::<String>()
        .into()
}

/// A usage or configuration error detected after flag parsing.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// 2 for errors in what the user asked for, 1 for everything else.
pub fn exit_code(err: &anyhow::Error) -> u8 {
    use diffidx_core::Error as E;
    match err.downcast_ref::<E>() {
        Some(E::UnknownRevision { .. } | E::OpenRepository { .. }) => 2,
        None if matches!(
            err.downcast_ref::<diffidx_lib::index::IndexError>(),
            Some(diffidx_lib::index::IndexError::Core(
                E::UnknownRevision { .. } | E::OpenRepository { .. }
            ))
        ) =>
        {
            2
        }
        _ if matches!(
            err.downcast_ref::<diffidx_lib::query::QueryError>(),
            Some(diffidx_lib::query::QueryError::NoIndex)
        ) =>
        {
            2
        }
        _ if err.downcast_ref::<UsageError>().is_some() => 2,
        _ if err
            .downcast_ref::<diffidx_lib::api::ApiError>()
            .is_some_and(|e| e.kind == diffidx_lib::api::ErrorKind::Usage) =>
        {
            2
        }
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
            err.downcast_ref::<diffidx_lib::sync::SyncError>(),
            Some(diffidx_lib::sync::SyncError::Config(_))
        ) =>
        {
            2
        }
        _ => 1,
    }
}

/// How an ADDED symbol's lineage reads: `(was Buffer::roll, 75% alike)`,
/// with the old path when it moved too.
pub fn describe_lineage(from: &diffidx_core::delta::Lineage, path: &str) -> String {
    let place = if from.path == path {
        String::new()
    } else {
        format!(" in {}", terminal_safe(&from.path))
    };
    format!(
        " (was {}{place}, {}% alike)",
        terminal_safe(&diffidx_core::symbol::display_name(
            &from.qualname,
            &from.sig
        )),
        from.similarity.percent()
    )
}

/// How a change's types read: ` [signature, parameters, body]` (nothing
/// when there are none).
pub fn change_list(types: &[diffidx_core::lang::parts::ChangeType]) -> String {
    if types.is_empty() {
        return String::new();
    }
    let names: Vec<&str> = types.iter().map(|t| t.as_str()).collect();
    format!(" [{}]", names.join(", "))
}

/// Terminal styling: `--color`, git's `color.diffidx`/`color.ui`, else only
/// on a terminal and never with `NO_COLOR`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy)]
pub struct Style {
    color: bool,
}

impl Style {
    /// Colors for stdout: `--color` when given, else git config
    /// `color.diffidx`, else `color.ui` (`always`, `never`/`false`, or
    /// `auto`/`true`), else auto: on a terminal, without `NO_COLOR`.
    pub fn for_stdout(choice: ColorChoice, dir: &std::path::Path) -> Style {
        let color = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                let configured = Repo::discover(dir).ok().and_then(|repo| {
                    repo.config_string("color.diffidx")
                        .or_else(|| repo.config_string("color.ui"))
                });
                match configured
                    .as_deref()
                    .map(str::to_ascii_lowercase)
                    .as_deref()
                {
                    Some("always") => true,
                    Some("never" | "false" | "off" | "no" | "0") => false,
                    _ => {
                        std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                            && std::io::stdout().is_terminal()
                    }
                }
            }
        };
        Style { color }
    }

    /// A line of a unified diff, colored as git colors it.
    pub fn diff_line(&self, line: &str) -> String {
        if line.starts_with("@@") {
            self.paint("36", line)
        } else if line.starts_with('+') {
            self.paint("32", line)
        } else if line.starts_with('-') {
            self.paint("31", line)
        } else {
            line.to_owned()
        }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    pub fn status(&self, status: Status, text: &str) -> String {
        let code = match status {
            Status::Added => "1;32",
            Status::Modified => "1;33",
            Status::Deleted => "1;31",
            Status::Moved => "1;36",
            Status::Unchanged => "0",
        };
        self.paint(code, text)
    }

    pub fn bold(&self, text: &str) -> String {
        self.paint("1", text)
    }

    pub fn dim(&self, text: &str) -> String {
        self.paint("2", text)
    }

    pub fn warn(&self, text: &str) -> String {
        self.paint("33", text)
    }
}

/// Seconds since the epoch `days` days ago.
/// How far back `index` and `init` look: the flags, defined once.
#[derive(clap::Args, Debug, Default)]
pub struct WindowArgs {
    /// Index the last N days of history, counted back from the newest commit.
    #[arg(long, value_name = "N", group = "window")]
    pub days: Option<u64>,

    /// Index commits from DATE on (2024-01-31, RFC 3339, "6 months ago", @EPOCH).
    #[arg(long, value_name = "DATE", group = "window")]
    pub since: Option<String>,

    /// Index the whole history the revisions reach.
    #[arg(long, group = "window")]
    pub all: bool,
}

impl WindowArgs {
    /// The window these flags ask for, `None` when they ask for none.
    pub fn window(&self) -> Result<Option<diffidx_lib::index::Window>, UsageError> {
        use diffidx_lib::index::Window;
        if self.all {
            return Ok(Some(Window::All));
        }
        if let Some(days) = self.days {
            return Ok(Some(Window::Days(days)));
        }
        match &self.since {
            None => Ok(None),
            Some(text) => diffidx_core::git::parse_date(text)
                .map(|time| Some(Window::Since(time)))
                .ok_or_else(|| {
                    UsageError(format!(
                        "--since {text:?} is not a date (try 2024-01-31, 2024-01-31T12:00:00Z, \
                         \"6 months ago\" or @1700000000)"
                    ))
                }),
        }
    }
}

/// How a window reads in a summary: "the last 90 days before the newest commit".
pub fn describe_window(window: diffidx_lib::index::Window) -> String {
    use diffidx_lib::index::Window;
    match window {
        Window::New => "new commits".to_owned(),
        Window::All => "the whole history".to_owned(),
        Window::Since(time) => format!("commits since {}", diffidx_core::git::rfc3339(time, 0)),
        Window::Days(days) => format!("the last {days} days before the newest commit"),
    }
}

/// The end-of-run summary of `index` and `init`.
pub fn index_summary(report: &IndexReport) -> String {
    let mut out = String::new();
    let indexed = report.computed + report.imported;
    if indexed == 0 && report.loaded == 0 {
        out.push_str("already up to date\n");
    } else {
        out.push_str(&format!(
            "indexed {indexed} commits ({} computed, {} from existing notes), {} loaded into the store\n",
            report.computed, report.imported, report.loaded
        ));
    }
    if let Some((problem, first)) = report.skipped.iter().next() {
        let first = &first.first;
        let total: usize = report.skipped.values().map(|s| s.count).sum();
        let reasons: Vec<String> = report
            .skipped
            .iter()
            .map(|(problem, skips)| format!("{} {}", skips.count, problem.as_str()))
            .collect();
        let short = &first.0[..first.0.len().min(12)];
        out.push_str(&format!(
            "skipped {total} file {} ({}); the first, {} in {short}, {} \
             (`git diffidx show {short}` lists them)\n",
            if total == 1 { "version" } else { "versions" },
            reasons.join(", "),
            first.1,
            problem.describe()
        ));
    }
    if report.reloaded > 0 {
        out.push_str(&format!(
            "warning: the store was left open by a killed run; {} commits it held only in part were loaded again (from their notes, or computed anew where it had not written them)\n",
            report.reloaded
        ));
    }
    for (commit, reason) in &report.rejected {
        out.push_str(&format!(
            "warning: the note of {commit} was rejected and recomputed: {reason}\n"
        ));
    }
    if !report.shallow.is_empty() {
        out.push_str(&format!(
            "warning: {} commits at the shallow clone's boundary were not indexed (their parents are missing); \
             run `git fetch --unshallow` to index them\n",
            report.shallow.len()
        ));
    }
    out.push_str(&semantic_summary(report));
    out.push_str(&fusion_line(report));
    out.push_str(&change_summaries_line(report));
    out.push_str(&summary_tree_line(report));
    out.push_str(&compaction_summary(report));
    out
}

/// One line on the semantic index, when the layer is on.
pub fn semantic_summary(report: &IndexReport) -> String {
    match &report.semantic {
        Some(Ok(s)) => format!(
            "semantic index{}: {} chunks of {} files re-chunked ({} dropped); {} embedded in {:.1} s, {} from the cache ({})\n",
            if s.full { " remade" } else { "" },
            s.chunks,
            s.files,
            s.dropped,
            s.embedded,
            s.embed_time.as_secs_f64(),
            s.cached,
            s.model
        ),
        Some(Err(reason)) => format!(
            "warning: the semantic index was not updated: {reason}\n"
        ),
        None => String::new(),
    }
}

/// One line on fusion weights fitted to the repository, when they were.
pub fn fusion_line(report: &IndexReport) -> String {
    match &report.fusion {
        Some(Ok(fitted)) => format!("search --semantic weights {fitted}\n"),
        Some(Err(reason)) => {
            format!("warning: search --semantic weights were not fitted: {reason}\n")
        }
        None => String::new(),
    }
}

/// One line on change summaries, when the chat model is on.
pub fn change_summaries_line(report: &IndexReport) -> String {
    match &report.change_summaries {
        Some(Ok(d)) => {
            let mut line = format!(
                "change summaries: {} commits ({} symbols) by {}; {} asked, {} from the cache",
                d.commits, d.symbols, d.model, d.asked, d.cached
            );
            if d.left > 0 {
                line.push_str(&format!(
                    "; {} commits left for the next run{}",
                    d.left,
                    match &d.failed {
                        Some(_) => "",
                        None => " (diffidx.llm.budget)",
                    }
                ));
            }
            line.push('\n');
            if let Some(reason) = &d.failed {
                line.push_str(&format!("warning: change summaries stopped: {reason}\n"));
            }
            line
        }
        Some(Err(reason)) => format!("warning: no change summaries were written: {reason}\n"),
        None => String::new(),
    }
}

/// One line on file and directory summaries, when they were updated.
pub fn summary_tree_line(report: &IndexReport) -> String {
    match &report.summary_tree {
        Some(Ok(t)) => {
            let mut line = format!(
                "file and directory summaries: {} files, {} directories by {}; {} asked, {} from the cache; {} embedded",
                t.files, t.directories, t.model, t.asked, t.cached, t.embedded
            );
            if t.left > 0 {
                line.push_str(&format!("; {} left for the next run", t.left));
            }
            line.push('\n');
            if let Some(reason) = &t.failed {
                line.push_str(&format!("warning: summaries stopped: {reason}\n"));
            }
            line
        }
        Some(Err(reason)) => format!("warning: no file or directory summaries: {reason}\n"),
        None => String::new(),
    }
}

/// `index --timings`: each stage's time and share of the run, and the rate.
pub fn timings_table(report: &IndexReport) -> String {
    let times = &report.times;
    let total = times.total.as_secs_f64().max(1e-9);
    let computed = report.computed;
    let mut out = format!(
        "timings: {computed} commits computed in {total:.2} s ({:.0} commits/s)\n",
        computed as f64 / total
    );
    let mut line = |stage: &str, secs: f64| {
        out.push_str(&format!(
            "  {stage:<11} {secs:>8.3} s {:>5.1}%\n",
            100.0 * secs / total
        ))
    };
    let mut counted = 0.0;
    for (stage, time) in times.writer_stages() {
        // The semantic layer is opt-in: off, the table is as it was.
        if matches!(stage, "semantic" | "llm") && time.is_zero() {
            continue;
        }
        counted += time.as_secs_f64();
        line(stage, time.as_secs_f64());
    }
    line("other", (total - counted).max(0.0));
    out.push_str(if report.diff_threads > 1 {
        "diffing, on two threads beside the notes and the store (their times added up):\n"
    } else {
        "diffing, on a second thread beside the notes and the store:\n"
    });
    for (stage, time) in times.diffing_stages() {
        out.push_str(&format!(
            "  {stage:<11} {:>8.3} s {:>5.1}%\n",
            time.as_secs_f64(),
            100.0 * time.as_secs_f64() / total
        ));
    }
    let blobs = report.blobs;
    out.push_str(&format!(
        "  {} file versions parsed ({:.1} MiB, {} incrementally), {} found parsed in the cache\n",
        blobs.parsed,
        blobs.bytes as f64 / (1024.0 * 1024.0),
        blobs.incremental,
        blobs.cache_hits
    ));
    if let Some(graph) = &report.graph {
        out.push_str(&format!(
            "  code graph: {} of {} files read ({} with the facts the diffing found, {} with \
             facts kept from an earlier graph), {} derived, {} of them written\n",
            graph.parsed, graph.files, graph.reused, graph.kept, graph.derived, graph.written
        ));
        let stages = graph.stages;
        for (stage, time) in [
            ("load", stages.load),
            ("parse", stages.parse),
            ("resolve", stages.resolve),
            ("write", stages.write),
        ] {
            out.push_str(&format!("    {stage:<9} {:>8.3} s\n", time.as_secs_f64()));
        }
    }
    out
}

/// One line on the store's compaction after a large run, if there was one.
pub fn compaction_summary(report: &IndexReport) -> String {
    let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
    match &report.compacted {
        Some(Ok((before, after))) => format!(
            "compacted the store from {:.1} MiB to {:.1} MiB\n",
            mib(*before),
            mib(*after)
        ),
        Some(Err(reason)) => {
            format!("warning: the store could not be compacted ({reason}); it is intact\n")
        }
        None => String::new(),
    }
}

/// The progress of a long run on stderr: count, rate and time left
/// (indicatif), drawn only on a terminal.
pub struct Bar {
    enabled: bool,
    bar: Option<indicatif::ProgressBar>,
}

impl Bar {
    pub fn new(enabled: bool) -> Bar {
        Bar { enabled, bar: None }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Progress for Bar {
    fn start(&mut self, total: usize) {
        if !self.enabled || total == 0 {
            return;
        }
        let bar = indicatif::ProgressBar::with_draw_target(
            Some(total as u64),
            indicatif::ProgressDrawTarget::stderr(),
        );
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "indexing [{bar:25}] {pos}/{len} commits, {rate}, ETA {eta}",
        ) {
            let style = style.progress_chars("#> ").with_key(
                "rate",
                |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{:.0} commits/s", state.per_sec());
                },
            );
            bar.set_style(style);
        }
        self.bar = Some(bar);
    }

    fn waiting_for(&mut self, holder: Option<u32>) {
        // Said even off a terminal: a CI log should show why a step waits.
        eprintln!(
            "waiting for another diffidx{} to finish indexing this repository...",
            holder.map(|p| format!(" (pid {p})")).unwrap_or_default()
        );
    }

    fn advance(&mut self, done: usize) {
        if let Some(bar) = &self.bar {
            bar.set_position(done as u64);
        }
    }
}

/// The end-of-run summary of a push.
pub fn push_summary(
    report: &diffidx_lib::sync::PushReport,
    config: &Neo4jConfig,
    took: std::time::Duration,
) -> String {
    let mut text = if report.commits == 0 {
        format!(
            "Neo4j at {} has every pushable commit ({} pushed before)",
            config.uri, report.already
        )
    } else {
        format!(
            "pushed {} commits ({} rows in {} transactions) to {} as {} in {:.1} s",
            report.commits,
            report.rows,
            report.transactions,
            config.uri,
            config.repo_id,
            took.as_secs_f64()
        )
    };
    if let Some((commit, rows)) = &report.graph {
        text.push_str(&format!(
            "; the code graph at {} ({rows} rows)",
            &commit[..commit.len().min(12)]
        ));
    }
    if let Some((n, index)) = &report.vectors {
        text.push_str(&format!("; {n} symbol vectors"));
        match index {
            Ok(()) => text.push_str(" (vector index symbol_embedding)"),
            Err(why) => text.push_str(&format!(" (no vector index on this server: {why})")),
        }
    }
    if report.absent > 0 {
        text.push_str(&format!(
            "; {} notes are of commits this clone does not have",
            report.absent
        ));
    }
    if !report.invalid.is_empty() {
        text.push_str(&format!(
            "; {} notes fail validation and were not pushed (see `git diffidx fsck`)",
            report.invalid.len()
        ));
    }
    text
}
