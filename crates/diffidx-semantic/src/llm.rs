//! Adapters for model services: chat (for summaries, query expansion,
//! reranking) and embeddings, over the two wire formats that cover the
//! field:
//!
//! - **Ollama**: `/api/chat`, `/api/generate` (NDJSON streaming),
//!   `/api/embed`; `host` is the server (`http://localhost:11434`).
//! - **OpenAI-compatible**: `/chat/completions` (SSE streaming) and
//!   `/embeddings` under `host`, the API's base URL with its version
//!   (`https://api.openai.com/v1`; Gemini's
//!   `https://generativelanguage.googleapis.com/v1beta/openai`; vLLM's
//!   `http://host:8000/v1`).
//!
//! An API key is read from the environment only (never from config, which
//! is shared and committed). Failures that may pass (a refused connection,
//! 429, 5xx) are retried with backoff; a stream is retried only until its
//! first piece of text arrived. Every answer says which model produced it.

use std::io::{BufRead, BufReader};
use std::time::Duration;

use serde_json::{json, Value};

use crate::embed::{EmbedError, Embedder, ModelPin};

/// Which wire format a service speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    Ollama,
    OpenAi,
}

impl Provider {
    pub fn parse(name: &str) -> Option<Provider> {
        match name.trim().to_ascii_lowercase().as_str() {
            "ollama" => Some(Provider::Ollama),
            "openai" | "openai-compatible" | "gemini" | "vllm" => Some(Provider::OpenAi),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Ollama => "ollama",
            Provider::OpenAi => "openai",
        }
    }
}

/// How to reach one model of one service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceConfig {
    pub provider: Provider,
    pub host: String,
    pub model: String,
    /// For a whole request, streaming included.
    pub timeout: Duration,
    /// Extra attempts after a failure that may pass.
    pub retries: u32,
    /// The API key, as read from the environment (`api_key_from_env`).
    pub api_key: Option<String>,
}

impl ServiceConfig {
    pub fn new(provider: Provider, host: &str, model: &str) -> ServiceConfig {
        ServiceConfig {
            provider,
            host: host.trim_end_matches('/').to_owned(),
            model: model.to_owned(),
            timeout: Duration::from_secs(120),
            retries: 2,
            api_key: None,
        }
    }

    /// The key in the environment variable `var`, if set and not empty.
    pub fn api_key_from_env(mut self, var: &str) -> ServiceConfig {
        self.api_key = std::env::var(var).ok().filter(|k| !k.trim().is_empty());
        self
    }

    /// `provider:model@host`, how answers name their model.
    pub fn label(&self) -> String {
        format!("{}:{}@{}", self.provider.as_str(), self.model, self.host)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("{service} answered {status}: {message}")]
    Status {
        service: String,
        status: u16,
        message: String,
    },
    #[error("cannot reach {service}: {reason}")]
    Transport { service: String, reason: String },
    #[error("{service} sent what its protocol does not allow: {reason}")]
    Protocol { service: String, reason: String },
}

impl LlmError {
    /// Worth another attempt: the service may answer next time.
    fn may_pass(&self) -> bool {
        match self {
            LlmError::Status { status, .. } => *status == 429 || *status >= 500,
            LlmError::Transport { .. } => true,
            LlmError::Protocol { .. } => false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    System,
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn system(text: impl Into<String>) -> Message {
        Message {
            role: Role::System,
            content: text.into(),
        }
    }

    pub fn user(text: impl Into<String>) -> Message {
        Message {
            role: Role::User,
            content: text.into(),
        }
    }
}

/// What to ask a chat model.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    pub temperature: Option<f32>,
    pub max_tokens: Option<u32>,
}

/// A chat model's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub text: String,
    /// The model that produced it, as the service named it.
    pub model: String,
    /// The service (`ServiceConfig::label`).
    pub service: String,
}

/// A chat model: the one trait every use (summaries, query expansion,
/// reranking) goes through.
pub trait ChatModel {
    fn label(&self) -> String;
    /// The whole answer; `on_text` sees each piece as it streams in.
    fn chat(
        &self,
        request: &ChatRequest,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion, LlmError>;
}

/// A model service over HTTP.
pub struct Service {
    config: ServiceConfig,
    agent: ureq::Agent,
}

impl Service {
    pub fn new(config: ServiceConfig) -> Service {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout))
            .http_status_as_error(false)
            .build()
            .into();
        Service { config, agent }
    }

    pub fn config(&self) -> &ServiceConfig {
        &self.config
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.config.host)
    }

    /// POSTs `body` to `path` and hands the response body to `read`,
    /// retrying failures that may pass while `read` has delivered nothing
    /// (`delivered` says whether it did).
    fn post<T>(
        &self,
        path: &str,
        body: &Value,
        delivered: &dyn Fn() -> bool,
        read: &mut dyn FnMut(&mut dyn BufRead) -> Result<T, LlmError>,
    ) -> Result<T, LlmError> {
        let mut attempt = 0;
        loop {
            let result = self.post_once(path, body, read);
            match result {
                Err(e) if e.may_pass() && attempt < self.config.retries && !delivered() => {
                    attempt += 1;
                    let wait = Duration::from_millis(200 * (1 << attempt.min(5)));
                    std::thread::sleep(wait.min(Duration::from_secs(5)));
                }
                other => return other,
            }
        }
    }

    fn post_once<T>(
        &self,
        path: &str,
        body: &Value,
        read: &mut dyn FnMut(&mut dyn BufRead) -> Result<T, LlmError>,
    ) -> Result<T, LlmError> {
        let service = self.config.label();
        let mut request = self
            .agent
            .post(&self.url(path))
            .header("Content-Type", "application/json");
        if let Some(key) = &self.config.api_key {
            request = request.header("Authorization", &format!("Bearer {key}"));
        }
        let mut response =
            request
                .send(body.to_string().as_bytes())
                .map_err(|e| LlmError::Transport {
                    service: service.clone(),
                    reason: e.to_string(),
                })?;
        let status = response.status().as_u16();
        if status >= 400 {
            let text = response.body_mut().read_to_string().unwrap_or_default();
            return Err(LlmError::Status {
                service,
                status,
                message: error_message(&text),
            });
        }
        let mut reader = BufReader::new(response.body_mut().as_reader());
        read(&mut reader)
    }

    fn protocol(&self, reason: impl Into<String>) -> LlmError {
        LlmError::Protocol {
            service: self.config.label(),
            reason: reason.into(),
        }
    }

    /// `/api/generate` (Ollama): a completion of one prompt.
    pub fn generate(
        &self,
        prompt: &str,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion, LlmError> {
        if self.config.provider != Provider::Ollama {
            return self.chat(
                &ChatRequest {
                    messages: vec![Message::user(prompt)],
                    temperature: None,
                    max_tokens: None,
                },
                on_text,
            );
        }
        let body = json!({"model": self.config.model, "prompt": prompt, "stream": true});
        self.ollama_stream("/api/generate", &body, &|v| v["response"].as_str(), on_text)
    }

    /// Reads an Ollama NDJSON stream: a JSON object per line, the last
    /// with `"done": true`.
    fn ollama_stream(
        &self,
        path: &str,
        body: &Value,
        piece: &dyn Fn(&Value) -> Option<&str>,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion, LlmError> {
        let delivered = std::cell::Cell::new(false);
        self.post(path, body, &|| delivered.get(), &mut |reader| {
            let mut text = String::new();
            let mut model = self.config.model.clone();
            for line in reader.lines() {
                let line = line.map_err(|e| self.transport(e))?;
                if line.trim().is_empty() {
                    continue;
                }
                let value: Value = serde_json::from_str(&line)
                    .map_err(|e| self.protocol(format!("a stream line is not JSON: {e}")))?;
                if let Some(error) = value.get("error") {
                    return Err(self.protocol(format!("error in the stream: {error}")));
                }
                if let Some(m) = value["model"].as_str() {
                    model = m.to_owned();
                }
                if let Some(p) = piece(&value).filter(|p| !p.is_empty()) {
                    delivered.set(true);
                    on_text(p);
                    text.push_str(p);
                }
                if value["done"].as_bool() == Some(true) {
                    return Ok(Completion {
                        text,
                        model,
                        service: self.config.label(),
                    });
                }
            }
            Err(self.protocol("the stream ended before its last (done) line"))
        })
    }

    fn transport(&self, e: std::io::Error) -> LlmError {
        LlmError::Transport {
            service: self.config.label(),
            reason: e.to_string(),
        }
    }

    /// Reads an OpenAI SSE stream: `data: {chunk}` events, then
    /// `data: [DONE]`.
    fn openai_stream(
        &self,
        body: &Value,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion, LlmError> {
        let delivered = std::cell::Cell::new(false);
        self.post(
            "/chat/completions",
            body,
            &|| delivered.get(),
            &mut |reader| {
                let mut text = String::new();
                let mut model = self.config.model.clone();
                for line in reader.lines() {
                    let line = line.map_err(|e| self.transport(e))?;
                    // Comments (`:`) and other fields (`event:`, `id:`) carry
                    // no text.
                    let Some(data) = line.strip_prefix("data:") else {
                        continue;
                    };
                    let data = data.trim();
                    if data == "[DONE]" {
                        return Ok(Completion {
                            text,
                            model,
                            service: self.config.label(),
                        });
                    }
                    let value: Value = serde_json::from_str(data)
                        .map_err(|e| self.protocol(format!("an event is not JSON: {e}")))?;
                    if let Some(error) = value.get("error") {
                        return Err(self.protocol(format!("error in the stream: {error}")));
                    }
                    if let Some(m) = value["model"].as_str() {
                        model = m.to_owned();
                    }
                    if let Some(p) = value["choices"][0]["delta"]["content"]
                        .as_str()
                        .filter(|p| !p.is_empty())
                    {
                        delivered.set(true);
                        on_text(p);
                        text.push_str(p);
                    }
                }
                Err(self.protocol("the stream ended before [DONE]"))
            },
        )
    }
}

impl ChatModel for Service {
    fn label(&self) -> String {
        self.config.label()
    }

    fn chat(
        &self,
        request: &ChatRequest,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion, LlmError> {
        let messages: Vec<Value> = request
            .messages
            .iter()
            .map(|m| json!({"role": m.role.as_str(), "content": m.content}))
            .collect();
        match self.config.provider {
            Provider::Ollama => {
                let mut options = serde_json::Map::new();
                if let Some(t) = request.temperature {
                    options.insert("temperature".into(), json!(t));
                }
                if let Some(n) = request.max_tokens {
                    options.insert("num_predict".into(), json!(n));
                }
                let body = json!({
                    "model": self.config.model,
                    "messages": messages,
                    "stream": true,
                    "options": options,
                });
                self.ollama_stream(
                    "/api/chat",
                    &body,
                    &|v| v["message"]["content"].as_str(),
                    on_text,
                )
            }
            Provider::OpenAi => {
                let mut body = json!({
                    "model": self.config.model,
                    "messages": messages,
                    "stream": true,
                });
                if let Some(t) = request.temperature {
                    body["temperature"] = json!(t);
                }
                if let Some(n) = request.max_tokens {
                    body["max_tokens"] = json!(n);
                }
                self.openai_stream(&body, on_text)
            }
        }
    }
}

/// The message of an error body: OpenAI's `{"error": {"message"}}`,
/// Ollama's `{"error": "..."}`, or the text itself.
fn error_message(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let message = parsed.as_ref().and_then(|v| {
        v["error"]["message"]
            .as_str()
            .or_else(|| v["error"].as_str())
            .map(str::to_owned)
    });
    message.unwrap_or_else(|| body.chars().take(300).collect())
}

/// The text a remote embedder's pin is probed with.
const PROBE: &str = "diffidx embedding probe: fn retry(attempt: u32) -> Duration";

/// Embeddings from a service. Its weights cannot be hashed, so its pin
/// carries the blake3 of its vector for a fixed probe text: a different
/// model behind the same name gives another pin.
pub struct ServiceEmbedder {
    service: Service,
    pin: ModelPin,
}

impl ServiceEmbedder {
    /// Connects and probes the model (one request).
    pub fn new(config: ServiceConfig) -> Result<ServiceEmbedder, EmbedError> {
        let service = Service::new(config);
        let probe = embed_remote(&service, &[PROBE])?
            .pop()
            .ok_or_else(|| EmbedError::Service("no vector for the probe".into()))?;
        let mut bytes = Vec::with_capacity(probe.len() * 4);
        for x in &probe {
            // Rounded, so that a service's last-bit noise keeps its pin.
            bytes.extend_from_slice(&((x * 1e4).round() as i32).to_le_bytes());
        }
        let config = service.config();
        let pin = ModelPin {
            name: format!("{}:{}", config.provider.as_str(), config.model),
            weights_blake3: format!("probe-{}", blake3::hash(&bytes).to_hex()),
            dim: probe.len(),
            max_tokens: 0,
            pooling: "service".into(),
            normalize: true,
        };
        Ok(ServiceEmbedder { service, pin })
    }
}

impl Embedder for ServiceEmbedder {
    fn pin(&self) -> &ModelPin {
        &self.pin
    }

    fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let vectors = embed_remote(&self.service, texts)?;
        if vectors.iter().any(|v| v.len() != self.pin.dim) {
            return Err(EmbedError::Service(format!(
                "{} changed its vector length from {}",
                self.service.config().label(),
                self.pin.dim
            )));
        }
        Ok(vectors)
    }
}

/// One embedding request, L2-normalized vectors in input order.
fn embed_remote(service: &Service, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
    let config = service.config();
    let (path, body) = match config.provider {
        Provider::Ollama => ("/api/embed", json!({"model": config.model, "input": texts})),
        Provider::OpenAi => (
            "/embeddings",
            json!({"model": config.model, "input": texts, "encoding_format": "float"}),
        ),
    };
    let value: Value = service
        .post(path, &body, &|| false, &mut |reader| {
            serde_json::from_reader(reader)
                .map_err(|e| service.protocol(format!("the answer is not JSON: {e}")))
        })
        .map_err(|e| EmbedError::Service(e.to_string()))?;
    let rows: Vec<&Value> = match config.provider {
        Provider::Ollama => value["embeddings"]
            .as_array()
            .map(|a| a.iter().collect())
            .unwrap_or_default(),
        Provider::OpenAi => {
            let mut data: Vec<&Value> = value["data"]
                .as_array()
                .map(|a| a.iter().collect())
                .unwrap_or_default();
            data.sort_by_key(|d| d["index"].as_u64().unwrap_or(u64::MAX));
            data.into_iter().map(|d| &d["embedding"]).collect()
        }
    };
    if rows.len() != texts.len() {
        return Err(EmbedError::Service(format!(
            "{} returned {} vectors for {} texts",
            config.label(),
            rows.len(),
            texts.len()
        )));
    }
    rows.into_iter()
        .map(|row| {
            let v: Vec<f32> = row
                .as_array()
                .ok_or_else(|| EmbedError::Service("a vector is not an array".into()))?
                .iter()
                .map(|x| x.as_f64().map(|x| x as f32))
                .collect::<Option<_>>()
                .ok_or_else(|| EmbedError::Service("a vector holds a non-number".into()))?;
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
            Ok(v.into_iter().map(|x| x / norm).collect())
        })
        .collect()
}
