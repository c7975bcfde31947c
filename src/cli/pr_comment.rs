//! `git diffidx pr-comment`: the pull request's net symbol change as one
//! sticky comment (DESIGN.md §7).
//!
//! Inputs come from flags first, then the Actions environment and event
//! file. The change is what the pull request shows: the merge base of base
//! and head against the head, not a union of its commits.

use std::io::Write as _;
use std::path::Path;

use anyhow::Context as _;
use diffidx_core::lang::parts::ChangeType;
use diffidx_core::{Language, SymbolDiffer};
use diffidx_github::event::read_event;
use diffidx_github::{
    ActionsEnv, CommentClient, GithubError, LinkBase, Outcome, PullRequestChange, RepoName,
};

use clap::Args;

use super::util::{Context, LimitArgs, UsageError};

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

    /// The login the token writes comments as (default: GitHub's answer for
    /// the token, or github-actions[bot] for an Actions token). Only a
    /// comment with the marker by this login is ever updated.
    #[arg(long, value_name = "LOGIN", env = "DIFFIDX_COMMENT_AUTHOR")]
    pub comment_author: Option<String>,

    /// Print the comment's markdown instead of calling GitHub.
    #[arg(long)]
    pub dry_run: bool,

    /// Only these languages, comma-separated (csharp, rust; default all).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub languages: Vec<String>,

    /// The "Impact" section follows callers, subtypes and implementers this
    /// many hops in the code graph (default 2; 0 leaves the section out).
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub impact_depth: u32,

    #[command(flatten)]
    pub limits: LimitArgs,
}

pub fn run(ctx: &Context, args: &PrCommentArgs) -> anyhow::Result<()> {
    let env = ActionsEnv::from_process();
    let event = match &env.event_path {
        Some(path) => read_event(path)?,
        None => None,
    };
    let repo_name = args
        .repo
        .clone()
        .or_else(|| env.repository.clone())
        .or_else(|| event.as_ref().and_then(|e| e.repository.clone()))
        .map(|name| RepoName::parse(&name))
        .transpose()?;
    let number = args.pr.or(event.as_ref().map(|e| e.number));
    let base_rev = args
        .base
        .clone()
        .or_else(|| event.as_ref().and_then(|e| e.base_sha.clone()))
        .ok_or_else(|| {
            UsageError(
                "no base revision: pass --base REV, or run in a pull_request event \
                 (GITHUB_EVENT_PATH)"
                    .into(),
            )
        })?;
    let head_rev = args
        .head
        .clone()
        .or_else(|| event.as_ref().and_then(|e| e.head_sha.clone()))
        .or_else(|| env.sha.clone())
        .unwrap_or_else(|| "HEAD".to_string());

    let repo = ctx.open_repo()?;
    const SHALLOW_HINT: &str = "the pull request's commits and their history must be in this \
        clone (with actions/checkout, set fetch-depth: 0)";
    let base = repo
        .resolve_commit(&base_rev)
        .with_context(|| format!("cannot find the base {base_rev}; {SHALLOW_HINT}"))?;
    let head = repo
        .resolve_commit(&head_rev)
        .with_context(|| format!("cannot find the head {head_rev}; {SHALLOW_HINT}"))?;
    let merge_base = repo.merge_base(base, head)?.ok_or_else(|| {
        anyhow::anyhow!(
            "{base_rev} and {head_rev} have no common ancestor here; {SHALLOW_HINT}, \
             or the histories are unrelated"
        )
    })?;

    let mut options = args.limits.options(&repo);
    options.languages = languages(&args.languages)?;
    let mut differ = SymbolDiffer::new(&repo, options.clone())?;
    let diff = differ.diff_trees(Some(repo.commit(merge_base)?.tree), repo.commit(head)?.tree)?;
    let (base_sha, head_sha) = (merge_base.to_string(), head.to_string());
    // Each side's blobs are in the differ's cache: no second parse.
    let signature_changed = diff
        .deltas
        .iter()
        .filter(|d| {
            let types = diffidx_lib::api::changes::change_types(
                &repo,
                &mut differ,
                merge_base,
                head,
                &diffidx_lib::api::changes::Change::from(*d),
            );
            types.is_ok_and(|t| t.contains(&ChangeType::Signature))
        })
        .map(|d| d.id.clone())
        .collect();
    let change = PullRequestChange {
        deltas: &diff.deltas,
        diagnostics: &diff.diagnostics,
        source_files: diff.source_files,
        languages: &options.languages,
        base_sha: &base_sha,
        head_sha: &head_sha,
        // Links need the repository; a local dry run finds it from `origin`.
        links: repo_name
            .clone()
            .or_else(|| repo_from_origin(&repo, env.server_url()))
            .map(|repo| LinkBase {
                server_url: env.server_url().to_string(),
                repo,
            }),
        impact: impact(&repo, &diff.deltas, args.impact_depth),
        signature_changed,
    };
    let body = diffidx_github::render(&change, diffidx_github::DEFAULT_BUDGET);
    if args.dry_run {
        return super::util::print(&body);
    }

    let (Some(repo_name), Some(number)) = (repo_name, number) else {
        return Err(UsageError(
            "no pull request: pass --repo OWNER/NAME and --pr N, or run in a pull_request \
             event (GITHUB_REPOSITORY, GITHUB_EVENT_PATH); --dry-run prints the comment instead"
                .into(),
        )
        .into());
    };
    let Some(token) = env.token.as_deref() else {
        let written = write_summary(env.step_summary.as_deref(), &body)?;
        let also = if written {
            " (the comment was written to the job summary)"
        } else {
            ""
        };
        return Err(UsageError(format!(
            "no GitHub token: set GITHUB_TOKEN to comment on {repo_name}#{number}, or use \
             --dry-run{also}"
        ))
        .into());
    };
    let client = CommentClient::new(env.api_url(), token, repo_name.clone())?
        .with_author(args.comment_author.clone());
    match client.upsert(number, &body) {
        Ok(outcome) => {
            let (verb, url) = match &outcome {
                Outcome::Created { url, .. } => ("created", url),
                Outcome::Updated { url, .. } => ("updated", url),
                Outcome::Unchanged { url, .. } => ("left unchanged", url),
            };
            eprintln!(
                "{verb} the diffidx comment on {repo_name}#{number} ({} symbol changes) {url}",
                diff.deltas.len()
            );
            Ok(())
        }
        Err(err @ GithubError::Forbidden { .. }) => {
            // A read-only token (a pull request from a fork): the job summary
            // still shows the change.
            if write_summary(env.step_summary.as_deref(), &body)? {
                eprintln!(
                    "warning: {err}; wrote the comment to the job summary (GITHUB_STEP_SUMMARY) instead"
                );
                Ok(())
            } else {
                Err(err.into())
            }
        }
        Err(err) => Err(err.into()),
    }
}

/// What calls, inherits or implements the changed symbols, from the code
/// graph (`None` without a store or graph, or with depth 0: the section is
/// then left out, and the comment says everything else).
fn impact(
    repo: &diffidx_core::git::Repo,
    deltas: &[diffidx_core::SymbolDelta],
    depth: u32,
) -> Option<diffidx_github::Impact> {
    if depth == 0 || deltas.is_empty() {
        return None;
    }
    let store = diffidx_lib::open::for_reading(repo, diffidx_lib::open::WAIT).ok()?;
    let reader = store.reader().ok()?;
    let answer = diffidx_lib::codegraph::impact(
        &reader,
        deltas,
        depth,
        diffidx_core::codegraph::Resolution::DEFAULT_MIN,
    )
    .ok()?;
    answer.commit.as_ref()?;
    Some(diffidx_github::Impact {
        depth,
        symbols: answer.reached.len(),
        files: answer.files,
        closest: answer
            .reached
            .iter()
            .take(diffidx_github::markdown::IMPACT_SHOWN)
            .map(|r| diffidx_github::markdown::Reached {
                name: diffidx_core::symbol::display_name(&r.symbol.qualname, &r.symbol.sig),
                path: r.symbol.path.clone(),
                line: r.symbol.start_line,
                distance: r.distance,
                edge: r.edge.to_lowercase(),
                resolution: r.resolution.clone(),
                through: r.through.clone(),
            })
            .collect(),
        unresolved_calls: answer
            .unresolved_calls
            .iter()
            .map(|u| u.qualified + u.bare)
            .sum(),
        more_by_name: answer.more_at_lower_levels,
        unresolved_names: answer
            .unresolved_calls
            .iter()
            .map(|u| u.name.clone())
            .collect(),
    })
}

fn languages(names: &[String]) -> anyhow::Result<Vec<Language>> {
    if names.is_empty() {
        return Ok(Language::all().collect());
    }
    let mut out = Vec::new();
    for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        let language = Language::from_name(name).ok_or_else(|| {
            let known: Vec<&str> = Language::all().map(|l| l.name()).collect();
            UsageError(format!(
                "unknown language {name:?} in --languages; known: {}",
                known.join(", ")
            ))
        })?;
        if !out.contains(&language) {
            out.push(language);
        }
    }
    Ok(out)
}

/// Appends the body to the job summary; `false` when there is none.
fn write_summary(path: Option<&Path>, body: &str) -> anyhow::Result<bool> {
    let Some(path) = path else {
        return Ok(false);
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("cannot open the job summary {}", path.display()))?;
    writeln!(file, "{body}")
        .with_context(|| format!("cannot write the job summary {}", path.display()))?;
    Ok(true)
}

/// `OWNER/NAME` of the `origin` remote when it is on `server_url`'s host
/// (`https://github.com/acme/widgets.git`, `git@github.com:acme/widgets`).
fn repo_from_origin(repo: &diffidx_core::git::Repo, server_url: &str) -> Option<RepoName> {
    let origin = repo.config_string("remote.origin.url")?;
    let normalized = diffidx_lib::sync::normalize_url(&origin);
    let host = server_url
        .split_once("://")
        .map_or(server_url, |(_, rest)| rest)
        .trim_end_matches('/')
        .to_lowercase();
    let path = normalized.strip_prefix(&format!("{host}/"))?;
    RepoName::parse(path).ok()
}
