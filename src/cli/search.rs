//! `git diffidx search QUERY [--kind K] [--path P] [--lang L] [--deleted | --all] [--text] [--semantic [--hyde] [--rerank N]] [--snippets] [--files] [--limit N] [--json]`

use clap::Args;
use diffidx_core::symbol::display_name;
use diffidx_lib::search::{SearchQuery, DEFAULT_LIMIT};

use super::pager::print_paged;
use super::util::{terminal_safe, Context};

#[derive(Args)]
pub struct SearchArgs {
    /// A name or part of one (`UserStore.GetUser`, `get user by id`,
    /// `GetUsrById`), or words from the code (`retry backoff`).
    #[arg(value_name = "QUERY")]
    pub query: String,

    /// Only symbols of this kind.
    #[arg(long, value_name = "KIND")]
    pub kind: Option<String>,

    /// Only symbols in this file or directory.
    #[arg(long, value_name = "PATH")]
    pub path: Option<String>,

    /// Only symbols of this language (`csharp`, `rust`, or an extension).
    #[arg(long, value_name = "LANG")]
    pub lang: Option<String>,

    /// Only deleted symbols (each with the commit that deleted it).
    #[arg(long, conflicts_with = "all")]
    pub deleted: bool,

    /// Live and deleted symbols.
    #[arg(long)]
    pub all: bool,

    /// Also rank by the words of the code (BM25), even when names match.
    #[arg(long)]
    pub text: bool,

    /// Rank by meaning too: names, words and the vectors of the semantic
    /// index fused, then expanded through the code graph (needs git config
    /// diffidx.embed.model; docs/semantic.md). Without a semantic index (or
    /// with diffidx.embed.onDemand), a question's first candidates are
    /// embedded when asked.
    #[arg(long)]
    pub semantic: bool,

    /// With --semantic: also rank by the vector of code the chat model
    /// writes for the query (HyDE; needs git config diffidx.llm.model).
    #[arg(long)]
    pub hyde: bool,

    /// With --semantic: the chat model reorders the N best hits (needs git
    /// config diffidx.llm.model; the code it sees is capped by
    /// diffidx.llm.rerankChars).
    #[arg(long, value_name = "N")]
    pub rerank: Option<usize>,

    /// With each hit, its signature and first lines (`snippet` in JSON).
    #[arg(long)]
    pub snippets: bool,

    /// The files of the hits instead, best first (for a question: ranked
    /// by their best symbol).
    #[arg(long)]
    pub files: bool,

    /// At most this many results.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_LIMIT)]
    pub limit: usize,

    /// Print JSON: an array of results, best first (docs/search.md).
    #[arg(long)]
    pub json: bool,
}

pub fn run(ctx: &Context, args: &SearchArgs) -> anyhow::Result<()> {
    let query = search_query(args)?;
    let repo = ctx.open_repo()?;
    // The query server answers faster; this binary is what it runs.
    let program = std::env::current_exe().ok();
    // Through the API's error kinds: a semantic layer that is off or made
    // by another model is a usage error (exit 2).
    let answer = diffidx_lib::query::search(&repo, &query, program.as_deref())
        .map_err(diffidx_lib::api::ApiError::from)?;
    if let Some(why) = &answer.text_unavailable {
        eprintln!(
            "{}",
            ctx.style().warn(&format!(
                "note: names only, the text tier is unavailable: {why}"
            ))
        );
    }
    let steps = &answer.model_steps;
    if let Some(model) = &steps.expanded_by {
        eprintln!("note: the query was expanded by {model} (HyDE)");
    }
    if let Some(model) = &steps.reranked_by {
        eprintln!(
            "note: the best {} hits were reranked by {model}",
            steps.reranked
        );
    }
    if let Some(model) = &steps.read_on_demand_by {
        eprintln!(
            "note: no semantic index: {model} read the first {} candidates ({} chunks embedded now)",
            diffidx_lib::semantic::ON_DEMAND_CANDIDATES,
            steps.embedded_now
        );
    }
    for warning in &steps.warnings {
        eprintln!("{}", ctx.style().warn(&format!("warning: {warning}")));
    }
    if args.files {
        if args.json {
            super::util::print(&format!(
                "{}\n",
                serde_json::to_string_pretty(&answer.files)?
            ))?;
        } else {
            for file in &answer.files {
                super::util::print(&format!(
                    "{:.2}  {}\n",
                    file.score,
                    terminal_safe(&file.path)
                ))?;
            }
        }
        return Ok(());
    }
    if args.json {
        super::util::print(&format!(
            "{}\n",
            serde_json::to_string_pretty(&answer.hits)?
        ))?;
        return Ok(());
    }
    if answer.hits.is_empty() {
        eprintln!("no symbol matches '{}'", terminal_safe(&args.query));
        return Ok(());
    }
    let style = ctx.style();
    let mut out = String::new();
    for hit in &answer.hits {
        let status = match &hit.deleted_in {
            Some(d) => format!(
                "  deleted in {} ({})",
                &d.commit[..d.commit.len().min(12)],
                d.date.get(..10).unwrap_or(&d.date)
            ),
            None if hit.status == "deleted" => "  deleted".to_owned(),
            None => String::new(),
        };
        let tier = hit.tier.as_str();
        out.push_str(&format!(
            "{:.2} {}  {}  {}  {}:{}-{}{}\n",
            hit.score,
            style.dim(tier),
            style.bold(&terminal_safe(&display_name(&hit.qualname, &hit.sig))),
            hit.kind,
            terminal_safe(&hit.path),
            hit.start_line,
            hit.end_line,
            style.warn(&status),
        ));
        if let Some(snippet) = &hit.snippet {
            for line in snippet.preview.lines() {
                out.push_str(&format!("      {}\n", style.dim(&terminal_safe(line))));
            }
        }
    }
    print_paged(ctx, Some(&repo), &out)
}

fn search_query(args: &SearchArgs) -> Result<SearchQuery, diffidx_lib::api::ApiError> {
    diffidx_lib::api::SearchParams {
        query: args.query.clone(),
        kind: args.kind.clone(),
        path: args.path.clone(),
        lang: args.lang.clone(),
        deleted: args.deleted,
        all: args.all,
        text: args.text,
        semantic: args.semantic,
        hyde: args.hyde,
        rerank: args.rerank,
        limit: Some(args.limit),
        snippets: args.snippets,
        files: args.files,
    }
    .to_query()
}
