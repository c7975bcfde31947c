//! `git diffidx mcp`: the query methods of [`crate::api`] as Model Context
//! Protocol tools over stdio (rmcp), one tool per method, named like it,
//! with the parameter structs' JSON schemas as input schemas. A tool's
//! result is the JSON its command prints with `--json`, as text content
//! and as structured content (rmcp moves a non-object answer into the text
//! for clients of protocol versions that allow only objects there).
//!
//! Queries block (the store, git), so each call runs on a blocking thread and
//! the protocol loop stays responsive.

use std::path::PathBuf;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

use crate::api::{self, Method};

/// The tools' handler: where queries run, and the query server to start.
#[derive(Clone)]
pub struct Tools {
    /// The directory the service was started in (its repository, if any).
    pub dir: PathBuf,
    /// The program to start as a query server (`None`: answer directly).
    pub server: Option<PathBuf>,
}

impl Tools {
    /// Every method as a tool.
    pub fn list() -> Vec<Tool> {
        Method::ALL
            .into_iter()
            .map(|method| {
                let schema = match method.input_schema() {
                    serde_json::Value::Object(object) => object,
                    _ => Default::default(),
                };
                Tool::new(method.name(), method.description(), schema)
            })
            .collect()
    }
}

impl ServerHandler for Tools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("diffidx", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Symbol-level git history of the repository this server runs in: search \
                 symbols, their history (log), what a commit changed (show), the code graph \
                 (graph, impact), and incident context for a service (context).",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(Tools::list()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        if Method::parse(&name).is_none() {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool {name:?}; the tools are {}",
                    Method::ALL.map(Method::name).join(", ")
                ),
                None,
            ));
        }
        let params = request
            .arguments
            .map(serde_json::Value::Object)
            .unwrap_or(serde_json::Value::Null);
        let tools = self.clone();
        let answer = tokio::task::spawn_blocking(move || {
            let repo = diffidx_core::git::Repo::discover(&tools.dir).ok();
            api::call(repo.as_ref(), &name, params, tools.server.as_deref())
        })
        .await
        .map_err(|e| ErrorData::internal_error(format!("the query panicked: {e}"), None))?;
        Ok(match answer {
            Ok(value) => CallToolResult::structured(value),
            // A failed query is the tool's answer, for the model to read.
            Err(e) => CallToolResult::error(vec![ContentBlock::text(e.message)]),
        }
        .into())
    }
}

/// Serves MCP over stdin/stdout until the client closes stdin.
pub fn serve_stdio(tools: Tools) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let service = tools
            .serve(rmcp::transport::stdio())
            .await
            .map_err(std::io::Error::other)?;
        service.waiting().await.map_err(std::io::Error::other)?;
        Ok(())
    })
}
