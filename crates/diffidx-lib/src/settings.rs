//! Settings read from git config that more than one command applies.

use diffidx_core::git::Repo;
use diffidx_core::DiffOptions;

/// The diff options for `repo`: `max_file_size` when given (a flag), else
/// git config `diffidx.maxFileSize`, else the default (1 MiB); the per-file
/// budgets from `diffidx.maxParseSteps` and `diffidx.maxSymbolsPerLine`.
pub fn diff_options(repo: &Repo, max_file_size: Option<usize>) -> DiffOptions {
    let mut options = DiffOptions::default();
    let positive = |key: &str| {
        repo.config_integer(key)
            .and_then(|v| usize::try_from(v).ok())
            .filter(|&v| v > 0)
    };
    if let Some(limit) = max_file_size.or(positive("diffidx.maxFileSize")) {
        options.max_file_size = limit;
    }
    if let Some(steps) = positive("diffidx.maxParseSteps") {
        options.limits.parse_steps = steps as u64;
    }
    if let Some(symbols) = positive("diffidx.maxSymbolsPerLine") {
        options.limits.symbols_per_line = symbols;
    }
    options
}

/// Whether commands may use the query server: not with `DIFFIDX_SERVER=off`
/// or git config `diffidx.server false`.
pub fn query_server_enabled(repo: &Repo) -> bool {
    let off = |v: &str| matches!(v.trim(), "off" | "false" | "0" | "no");
    !std::env::var("DIFFIDX_SERVER").is_ok_and(|v| off(&v))
        && !repo
            .config_string("diffidx.server")
            .is_some_and(|v| off(&v))
}

/// Whether index runs keep the code graph: not with git config
/// `diffidx.graph false` (a repository where only the records are wanted,
/// and benchmarks that measure the records alone).
pub fn code_graph_enabled(repo: &Repo) -> bool {
    let off = |v: &str| matches!(v.trim(), "off" | "false" | "0" | "no");
    !repo.config_string("diffidx.graph").is_some_and(|v| off(&v))
}

/// Threads the differ (and the graph's fact reads) may use: two where there
/// are two cores (the writer shares them; more would only wait on it),
/// `DIFFIDX_DIFF_THREADS` if set.
pub(crate) fn diff_threads() -> usize {
    std::env::var("DIFFIDX_DIFF_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .min(2)
}
