//! The parameters of each query method: the names of the CLI's long flags,
//! in JSON (JSON-RPC params, MCP tool arguments). Their JSON schemas are
//! what `tools/list` shows; unknown names are refused, so a misspelt
//! argument is an error rather than silently ignored.

use serde::{Deserialize, Serialize};

use super::ApiError;
use diffidx_core::codegraph::Resolution;
use diffidx_core::{Language, SymbolKind, SymbolQuery};

/// `search`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchParams {
    /// Words of a name (`get user`, `getUser`, `GetUsr`) or of code and comments.
    pub query: String,
    /// Only symbols of this kind (method, class, function, ...).
    #[serde(default)]
    pub kind: Option<String>,
    /// Only symbols in this file or directory.
    #[serde(default)]
    pub path: Option<String>,
    /// Only symbols of this language (csharp, rust, python, ...).
    #[serde(default)]
    pub lang: Option<String>,
    /// Only deleted symbols.
    #[serde(default)]
    pub deleted: bool,
    /// Live and deleted symbols.
    #[serde(default)]
    pub all: bool,
    /// Also search the words of code and comments when names match well.
    #[serde(default)]
    pub text: bool,
    /// Rank by meaning too: names, words and the vectors of the semantic
    /// index fused, then expanded through the code graph (needs git config
    /// diffidx.embed.model).
    #[serde(default)]
    pub semantic: bool,
    /// With semantic: also rank by the vector of code the chat model writes
    /// for the query (HyDE; needs git config diffidx.llm.model).
    #[serde(default)]
    pub hyde: bool,
    /// With semantic: the chat model reorders this many best hits (at most
    /// 50; needs git config diffidx.llm.model).
    #[serde(default)]
    pub rerank: Option<usize>,
    /// At most this many hits (default 20).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Each hit with its signature and first lines (`snippet`).
    #[serde(default)]
    pub snippets: bool,
    /// Answer with the files of the hits, best first, instead of the hits
    /// (for a question: files ranked by their best symbol).
    #[serde(default)]
    pub files: bool,
}

/// `log`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LogParams {
    /// A qualified name or a suffix of one at a `.`/`::` boundary; `Foo.Bar(int)` picks an overload;
    /// or `FILE:LINE`, the innermost symbol there as of the revision.
    pub symbol: String,
    /// Answer for the history of this revision (default HEAD).
    #[serde(default)]
    pub rev: Option<String>,
    /// Every indexed commit, whatever history it is in.
    #[serde(default)]
    pub all: bool,
    /// Only symbols of this kind.
    #[serde(default)]
    pub kind: Option<String>,
    /// Only symbols in this file or directory.
    #[serde(default)]
    pub path: Option<String>,
    /// Only changes at or after this date (RFC 3339, "2 weeks ago", @EPOCH).
    #[serde(default)]
    pub since: Option<String>,
    /// Only changes at or before this date.
    #[serde(default)]
    pub until: Option<String>,
    /// Only changes by an author whose name contains this text (any case).
    #[serde(default)]
    pub author: Option<String>,
    /// The first-parent view: a side branch's changes at the merge that
    /// brought them in (`git log --first-parent`).
    #[serde(default)]
    pub first_parent: bool,
    /// Every change, also those of side branches whose merge kept the other
    /// side's files (`git log --full-history`); by default they are left
    /// out, as `git log` leaves them out.
    #[serde(default)]
    pub full_history: bool,
}

/// `show`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShowParams {
    /// A commit (default HEAD), `A..B` or `A...B`.
    #[serde(default)]
    pub rev: Option<String>,
}

/// `graph`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphParams {
    /// A qualified name or a suffix of one; `Foo.Bar(int)` picks an overload.
    pub symbol: String,
    /// What to follow: one or more of callers, callees, imports, inherits
    /// (default callers and callees).
    #[serde(default, deserialize_with = "crate::values::one_or_many")]
    #[schemars(with = "Option<crate::values::OneOrMany>")]
    pub direction: Vec<String>,
    /// Follow edges this many hops (default 1).
    #[serde(default)]
    pub depth: Option<u32>,
    /// Follow only edges resolved at least this surely: exact, scoped (the
    /// default), unique_name, ambiguous (every edge).
    #[serde(default)]
    pub min_resolution: Option<String>,
    /// Only symbols of this kind.
    #[serde(default)]
    pub kind: Option<String>,
    /// Only symbols in this file or directory.
    #[serde(default)]
    pub path: Option<String>,
}

/// `impact`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImpactParams {
    /// A commit (default HEAD), `A..B` or `A...B` (what a pull request changes).
    #[serde(default)]
    pub rev: Option<String>,
    /// Follow callers, subtypes and implementers this many hops (default 2).
    #[serde(default)]
    pub depth: Option<u32>,
    /// Follow only edges resolved at least this surely: exact, scoped (the
    /// default), unique_name, ambiguous (every edge).
    #[serde(default)]
    pub min_resolution: Option<String>,
}

/// `status`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusParams {}

/// The symbols a user names: NAME (with an optional `(sig)`), narrowed by
/// a kind and a path (`log`, `graph`).
pub fn symbol_query(
    name: &str,
    kind: Option<&str>,
    path: Option<&str>,
) -> Result<SymbolQuery, ApiError> {
    let mut query = SymbolQuery::parse(name);
    if query.own_name().trim().is_empty() {
        return Err(ApiError::usage(format!(
            "{name:?} names no symbol; give a name such as `Foo.Bar`, `Foo::bar` or `Bar`"
        )));
    }
    query.kind = kind.map(parse_kind).transpose()?;
    query.path = path.map(str::to_owned);
    Ok(query)
}

pub fn parse_kind(kind: &str) -> Result<SymbolKind, ApiError> {
    SymbolKind::parse(kind).ok_or_else(|| {
        let kinds: Vec<&str> = SymbolKind::ALL.iter().map(|k| k.as_str()).collect();
        ApiError::usage(format!(
            "unknown kind {kind:?}; the kinds are {}",
            kinds.join(", ")
        ))
    })
}

pub fn parse_language(name: &str) -> Result<Language, ApiError> {
    Language::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = Language::all().map(|l| l.name()).collect();
        ApiError::usage(format!(
            "unknown language {name:?}; the languages are {}",
            names.join(", ")
        ))
    })
}

pub fn parse_resolution(text: &str) -> Result<Resolution, ApiError> {
    Resolution::parse(text).ok_or_else(|| {
        let all: Vec<&str> = Resolution::ALL.iter().map(|r| r.as_str()).collect();
        ApiError::usage(format!(
            "unknown resolution {text:?}; the levels are {}",
            all.join(", ")
        ))
    })
}

/// A date flag (`--since`, `--until`) as seconds since the epoch.
pub fn parse_date(flag: &str, text: &str) -> Result<i64, ApiError> {
    crate::values::parse_time(text).ok_or_else(|| {
        ApiError::usage(format!(
            "{flag} {text:?} is not a date (try 2024-01-31, 2024-01-31T12:00:00Z, \
             \"2 weeks ago\" or @1700000000)"
        ))
    })
}
