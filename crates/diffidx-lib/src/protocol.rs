//! What the query server and its clients say to each other: one JSON line
//! each way over a Unix socket in the state directory.

use std::collections::HashMap;

use diffidx_core::codegraph::Resolution;
use diffidx_core::{SymbolDelta, SymbolQuery};
use serde::{Deserialize, Serialize};

use crate::codegraph::{GraphAnswer, GraphQuery, ImpactAnswer};
use crate::search::{SearchAnswer, SearchQuery};
use crate::store::HistoryEntry;
use crate::store::WindowAnswer;

/// How many names a "did you mean" offers.
pub const SUGGESTIONS: usize = 5;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    Ping,
    /// Close the store: a writer is about to open it.
    Release,
    History(HistoryRequest),
    /// The code graph around a symbol (`graph`).
    Graph(GraphQuery),
    /// The blast radius of a change (`impact`); the client labels the
    /// change, the server walks the graph.
    Impact(ImpactRequest),
    /// Symbols by name and by the words of their code (`search`).
    Search(SearchQuery),
    /// The changes of an incident window's commits, with callers (`context`).
    Window(WindowRequest),
    /// How well symbols match words (`context --query`).
    Relevance(RelevanceRequest),
}

impl Request {
    /// Answered from the open store (the others need none).
    pub fn reads_the_store(&self) -> bool {
        matches!(
            self,
            Request::History(_)
                | Request::Graph(_)
                | Request::Impact(_)
                | Request::Search(_)
                | Request::Window(_)
                | Request::Relevance(_)
        )
    }
}

/// A symbol's history (the same JSON as before it had a type of its own:
/// the fields sit beside `op`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HistoryRequest {
    pub query: SymbolQuery,
    /// Also say whether this commit is indexed.
    pub head: Option<String>,
    /// Keep only the changes on commits in `head`'s history.
    #[serde(default)]
    pub in_history: bool,
}

/// What `context` asks of one repository's store.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WindowRequest {
    pub shas: Vec<String>,
    /// How many callers of each symbol to name.
    pub nearest: usize,
}

/// What `context --query` asks: how well each of `ids` matches `text`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RelevanceRequest {
    pub text: String,
    pub ids: Vec<String>,
}

/// What `impact` asks of the graph.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ImpactRequest {
    pub deltas: Vec<SymbolDelta>,
    pub depth: u32,
    pub min_resolution: Resolution,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Response {
    pub ok: bool,
    /// A writer holds the store; answer the query yourself (and wait).
    #[serde(default)]
    pub busy: bool,
    #[serde(default)]
    pub entries: Vec<HistoryEntry>,
    #[serde(default)]
    pub head_indexed: Option<bool>,
    /// History before this date is not indexed.
    #[serde(default)]
    pub indexed_from: Option<String>,
    /// When nothing matched: indexed names close to the one asked for.
    #[serde(default)]
    pub suggestions: Vec<String>,
    /// When the history is empty: the name is a stored symbol all the same
    /// (unchanged in the indexed commits).
    #[serde(default)]
    pub known: bool,
    /// Changes left out for being outside `head`'s history (`in_history`).
    #[serde(default)]
    pub hidden: usize,
    /// The answer keeps to `head`'s history (a server that predates
    /// `in_history` never says so, and its answer is not used).
    #[serde(default)]
    pub in_history: bool,
    #[serde(default)]
    pub error: Option<String>,
    /// The answer to a `graph` request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph: Option<Box<GraphAnswer>>,
    /// The answer to an `impact` request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impact: Option<Box<ImpactAnswer>>,
    /// The answer to a `search` request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<Box<SearchAnswer>>,
    /// The answer to a `window` request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Box<WindowAnswer>>,
    /// The answer to a `relevance` request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relevance: Option<Box<Relevance>>,
}

impl Response {
    pub fn success() -> Response {
        Response {
            ok: true,
            ..Response::default()
        }
    }

    pub fn failure(error: String) -> Response {
        Response {
            error: Some(error),
            ..Response::default()
        }
    }
}

/// How well symbols match words (`context --query`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Relevance {
    /// Symbol id → fused score in (0, 1], for the symbols asked about that
    /// match at all.
    pub scores: HashMap<String, f64>,
    /// The rankings used: `names`, `text`, and `vectors` with the semantic
    /// layer on.
    pub matched_by: Vec<String>,
    /// A ranking that could not be used, and why.
    pub warnings: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_history_request_keeps_its_fields_beside_op() {
        let request = Request::History(HistoryRequest {
            query: SymbolQuery::parse("Foo.Bar"),
            head: Some("abc".into()),
            in_history: true,
        });
        let json: serde_json::Value = serde_json::to_value(&request).unwrap();
        assert_eq!(json["op"], "history");
        assert_eq!(json["head"], "abc");
        assert_eq!(json["in_history"], true);
        assert_eq!(json["query"]["name"], "Foo.Bar");
        // An older client's request (no `in_history`) still reads.
        let old = r#"{"op":"history","query":{"name":"X","sig":null,"kind":null,"path":null},"head":null}"#;
        let Request::History(read) = serde_json::from_str(old).unwrap() else {
            panic!("not a history request");
        };
        assert!(!read.in_history && read.head.is_none());
    }
}
