//! The service adapters against a loopback server that speaks Ollama's and
//! OpenAI's wire formats (fixtures/llm_server.py), itself held to the
//! official Python clients by the last test here.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use diffidx_semantic::llm::{
    ChatModel, ChatRequest, LlmError, Message, Provider, Service, ServiceConfig, ServiceEmbedder,
};
use diffidx_semantic::Embedder;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The loopback server, stopped when dropped.
struct Loopback {
    child: Child,
    port: u16,
}

impl Loopback {
    fn start(api_key: Option<&str>) -> Loopback {
        let mut cmd = Command::new("python3");
        cmd.arg(fixtures().join("llm_server.py"));
        if let Some(key) = api_key {
            cmd.args(["--api-key", key]);
        }
        let mut child = cmd.stdout(Stdio::piped()).spawn().expect("python3 runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .strip_prefix("port ")
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("the server said {line:?}"));
        Loopback { child, port }
    }

    fn config(&self, provider: Provider, model: &str) -> ServiceConfig {
        let host = match provider {
            Provider::Ollama => format!("http://127.0.0.1:{}", self.port),
            Provider::OpenAi => format!("http://127.0.0.1:{}/v1", self.port),
        };
        let mut config = ServiceConfig::new(provider, &host, model);
        config.timeout = Duration::from_secs(10);
        config
    }
}

impl Drop for Loopback {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn ask(service: &Service, text: &str) -> (Result<String, LlmError>, Vec<String>) {
    let mut pieces = Vec::new();
    let request = ChatRequest {
        messages: vec![Message::system("be brief"), Message::user(text)],
        temperature: Some(0.0),
        max_tokens: Some(64),
    };
    let result = service
        .chat(&request, &mut |p| pieces.push(p.to_owned()))
        .map(|c| {
            assert_eq!(c.model, "tiny-model");
            assert!(
                c.service.contains("tiny-model@http://127.0.0.1:"),
                "{}",
                c.service
            );
            c.text
        });
    (result, pieces)
}

#[test]
fn both_protocols_stream_an_answer_piece_by_piece() {
    let server = Loopback::start(Some("sk-k"));
    for provider in [Provider::Ollama, Provider::OpenAi] {
        let mut config = server.config(provider, "tiny-model");
        config.api_key = Some("sk-k".into());
        let service = Service::new(config);
        let (text, pieces) = ask(&service, "where do we retry");
        assert_eq!(text.unwrap(), "echo: where do we retry");
        assert_eq!(
            pieces,
            ["echo: ", "where ", "do ", "we ", "retry"],
            "{provider:?}"
        );
    }
    let ollama = Service::new(server.config(Provider::Ollama, "tiny-model"));
    let generated = ollama.generate("why", &mut |_| {}).unwrap();
    assert_eq!(generated.text, "echo: why");
}

#[test]
fn error_bodies_become_messages_and_a_wrong_key_is_refused() {
    let server = Loopback::start(Some("sk-k"));
    let ollama = Service::new(server.config(Provider::Ollama, "missing"));
    match ask(&ollama, "x").0 {
        Err(LlmError::Status {
            status: 404,
            message,
            ..
        }) => {
            assert_eq!(message, "model 'missing' not found")
        }
        other => panic!("{other:?}"),
    }
    let mut config = server.config(Provider::OpenAi, "missing");
    config.api_key = Some("sk-k".into());
    match ask(&Service::new(config), "x").0 {
        Err(LlmError::Status {
            status: 404,
            message,
            ..
        }) => {
            assert_eq!(message, "The model `missing` does not exist.")
        }
        other => panic!("{other:?}"),
    }
    let mut config = server.config(Provider::OpenAi, "tiny-model");
    config.api_key = Some("wrong".into());
    match ask(&Service::new(config), "x").0 {
        Err(LlmError::Status {
            status: 401,
            message,
            ..
        }) => {
            assert!(message.contains("API key"), "{message}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_failure_that_may_pass_is_retried_and_a_cut_stream_is_not() {
    let server = Loopback::start(None);
    for provider in [Provider::Ollama, Provider::OpenAi] {
        // The first request of each path fails with a 500.
        let mut config = server.config(provider, "flaky");
        config.retries = 0;
        let Err(LlmError::Status { status: 500, .. }) = Service::new(config.clone()).chat(
            &ChatRequest {
                messages: vec![Message::user("x")],
                temperature: None,
                max_tokens: None,
            },
            &mut |_| {},
        ) else {
            panic!("{provider:?}: the first request did not fail");
        };
        config.retries = 2;
        let ok = Service::new(config).chat(
            &ChatRequest {
                messages: vec![Message::user("x")],
                temperature: None,
                max_tokens: None,
            },
            &mut |_| {},
        );
        assert!(ok.is_ok(), "{provider:?}: {ok:?}");

        let mut pieces = 0;
        let cut = Service::new(server.config(provider, "broken-stream")).chat(
            &ChatRequest {
                messages: vec![Message::user("one two three four five six")],
                temperature: None,
                max_tokens: None,
            },
            &mut |_| pieces += 1,
        );
        assert!(cut.is_err(), "{provider:?}: a cut stream was taken whole");
        assert!(pieces > 0 && pieces < 7, "{provider:?}: {pieces} pieces");
    }
}

#[test]
fn a_slow_service_times_out() {
    let server = Loopback::start(None);
    let mut config = server.config(Provider::Ollama, "slow");
    config.timeout = Duration::from_millis(500);
    config.retries = 0;
    let started = std::time::Instant::now();
    let result = ask(&Service::new(config), "x").0;
    assert!(
        matches!(result, Err(LlmError::Transport { .. })),
        "{result:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[test]
fn service_embeddings_are_pinned_by_a_probe_and_normalized() {
    let server = Loopback::start(None);
    for provider in [Provider::Ollama, Provider::OpenAi] {
        let mut a = ServiceEmbedder::new(server.config(provider, "tiny")).unwrap();
        let b = ServiceEmbedder::new(server.config(provider, "tiny")).unwrap();
        assert_eq!(a.pin(), b.pin());
        assert_eq!(a.pin().dim, 8);
        assert_eq!(a.pin().name, format!("{}:tiny", provider.as_str()));
        assert!(a.pin().weights_blake3.starts_with("probe-"));
        let v = a.embed(&["one", "two", "one"]).unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(v[0], v[2]);
        assert_ne!(v[0], v[1]);
        let norm: f32 = v[1].iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5);
    }
    assert!(ServiceEmbedder::new(server.config(Provider::OpenAi, "missing")).is_err());
}

/// The loopback server against the official `ollama` and `openai` Python
/// clients (scripts/py-clients installs them; scripts/test sets
/// DIFFIDX_TEST_PYTHON).
#[test]
fn the_loopback_server_speaks_the_real_protocols() {
    let python = std::env::var("DIFFIDX_TEST_PYTHON").unwrap_or_else(|_| {
        panic!("DIFFIDX_TEST_PYTHON is not set; run scripts/py-clients and export what it prints")
    });
    let out = Command::new(python)
        .arg(fixtures().join("check_llm_server.py"))
        .output()
        .expect("the check runs");
    assert!(
        out.status.success(),
        "the official clients disagree with the loopback server:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
