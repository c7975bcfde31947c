//! The chat model of the semantic layer, from git config (opt-in:
//! `diffidx.llm.model`), and the one way its uses ask it: through the
//! answer cache, so a question is asked once.
//!
//! Keys: `diffidx.llm.model` (the service's model name), `.provider`
//! (`ollama`, the default, or `openai` for any OpenAI-compatible endpoint),
//! `.host`, `.timeout`, `.retries`, `.apiKeyEnv` (as for `diffidx.embed.*`),
//! and what index runs do with it: `.deltas` (change summaries, default on),
//! `.summaries` (file and directory summaries, default on; they need
//! `diffidx.embed.model` too) and `.budget` (questions per index run,
//! default [`DEFAULT_BUDGET`]; what is left waits for the next run); for
//! `search --rerank`, `.rerankChars` (the code shown, all candidates
//! together).

use diffidx_core::git::Repo;
use diffidx_semantic::answers::{answer_key, Answer, AnswerCache};
use diffidx_semantic::llm::{ChatModel, ChatRequest, Service, ServiceConfig};

use super::SemanticError;
use crate::state::StateDir;

/// Questions an index run may ask by default: a hook run stays short, and
/// a long history is summarized over several runs, newest first.
pub const DEFAULT_BUDGET: usize = 100;

/// Characters of code a rerank shows the model, all candidates together,
/// unless `diffidx.llm.rerankChars` says otherwise.
pub const DEFAULT_RERANK_CHARS: usize = 12_000;

/// The chat model and what index runs use it for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatSettings {
    pub service: ServiceConfig,
    /// Summarize the symbols each commit modified.
    pub deltas: bool,
    /// Summarize files and directories (with embeddings on).
    pub summaries: bool,
    /// Questions per index run.
    pub budget: usize,
    /// Characters of code a rerank shows the model.
    pub rerank_chars: usize,
}

/// The chat settings git config gives, if the chat model is configured.
pub fn configured_chat(repo: &Repo) -> Option<Result<ChatSettings, SemanticError>> {
    let model = repo.config_string("diffidx.llm.model")?;
    let model = model.trim();
    if model.is_empty() || matches!(model, "off" | "false" | "none") {
        return None;
    }
    let provider = repo
        .config_string("diffidx.llm.provider")
        .unwrap_or_else(|| "ollama".into());
    let service = match super::service_config(repo, "diffidx.llm", &provider, model) {
        Ok(service) => service,
        Err(e) => return Some(Err(e)),
    };
    let flag = |key: &str| {
        repo.config_string(key)
            .is_none_or(|v| !matches!(v.trim(), "off" | "false" | "0" | "no"))
    };
    let budget = repo
        .config_integer("diffidx.llm.budget")
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(DEFAULT_BUDGET);
    let rerank_chars = repo
        .config_integer("diffidx.llm.rerankChars")
        .and_then(|n| usize::try_from(n).ok())
        .filter(|&n| n > 0)
        .unwrap_or(DEFAULT_RERANK_CHARS);
    Some(Ok(ChatSettings {
        service,
        deltas: flag("diffidx.llm.deltas"),
        summaries: flag("diffidx.llm.summaries"),
        budget,
        rerank_chars,
    }))
}

/// `provider:model`: how answers name their model. The host is left out:
/// answers travel in notes, and a host may be an internal address.
pub fn model_name(service: &ServiceConfig) -> String {
    format!("{}:{}", service.provider.as_str(), service.model)
}

/// A chat model asked through the answer cache
/// (`.git/diffidx/semantic/answers`), counting what it asked.
pub struct Asker<'m> {
    model: &'m dyn ChatModel,
    name: String,
    answers: AnswerCache,
    /// Questions sent to the model, and answered from the cache.
    pub asked: usize,
    pub cached: usize,
    /// Questions [`ask_within`](Self::ask_within) may still send (`None`:
    /// no limit).
    remaining: Option<usize>,
    /// Why the model failed, once it did: `ask_within` then sends nothing
    /// more.
    pub failed: Option<String>,
}

impl<'m> Asker<'m> {
    pub fn open(
        state: &StateDir,
        model: &'m dyn ChatModel,
        name: String,
    ) -> Result<Asker<'m>, SemanticError> {
        Ok(Asker {
            model,
            name,
            answers: AnswerCache::open(&state.semantic().join("answers"))?,
            asked: 0,
            cached: 0,
            remaining: None,
            failed: None,
        })
    }

    /// From now on, [`ask_within`](Self::ask_within) sends at most `n`
    /// more questions.
    pub fn limit(&mut self, n: usize) {
        self.remaining = Some(n);
    }

    /// The answer to `request` for `purpose` from the cache, else from the
    /// model while the limit and the model last; `None` when the question
    /// must wait for another run (then `failed` says if the model failed).
    pub fn ask_within(&mut self, purpose: &str, request: &ChatRequest) -> Option<Answer> {
        if let Some(answer) = self.answers.get(&answer_key(purpose, &self.name, request)) {
            self.cached += 1;
            return Some(answer.clone());
        }
        if self.failed.is_some() || self.remaining == Some(0) {
            return None;
        }
        if let Some(n) = self.remaining.as_mut() {
            *n -= 1;
        }
        match self.ask(purpose, request) {
            Ok(answer) => Some(answer),
            Err(e) => {
                self.failed = Some(e.to_string());
                None
            }
        }
    }

    /// The model's name as answers carry it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The answer to `request` for `purpose`: from the cache, else from the
    /// model (and then kept).
    pub fn ask(&mut self, purpose: &str, request: &ChatRequest) -> Result<Answer, SemanticError> {
        let key = answer_key(purpose, &self.name, request);
        if let Some(answer) = self.answers.get(&key) {
            self.cached += 1;
            return Ok(answer.clone());
        }
        self.asked += 1;
        let completion = self
            .model
            .chat(request, &mut |_| {})
            .map_err(SemanticError::Llm)?;
        let answer = Answer {
            model: self.name.clone(),
            text: completion.text,
        };
        self.answers.put(key, answer.clone())?;
        Ok(answer)
    }
}

/// The configured chat service, opened.
pub fn open_service(settings: &ChatSettings) -> Service {
    Service::new(settings.service.clone())
}
