//! A loopback stand-in for the GitHub REST API (api.github.com cannot be
//! reached from the test machines), speaking its wire format for the
//! endpoints `pr-comment` uses: issue comments listed with `Link`-header
//! pagination (whose URLs, like GitHub's, use the `/repositories/{id}/...`
//! form), created (201), updated with PATCH, deleted (204); 401 for a bad
//! token, 403 for a read-only one, 404 for unknown repositories, issues and
//! comments, each with GitHub's JSON error body. Every request is recorded.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

pub const OWNER: &str = "acme";
pub const NAME: &str = "widgets";
pub const TOKEN: &str = "ghs_test0123456789abcdef";
const REPO_ID: u64 = 123_456_789;

#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// Path and query, as sent.
    pub target: String,
    pub authorization: Option<String>,
    pub body: String,
}

#[derive(Debug, Clone)]
pub struct Comment {
    pub id: u64,
    pub issue: u64,
    pub body: String,
    pub login: String,
    pub created: u64,
    pub updated: u64,
}

struct State {
    /// Whether the token may write (false: a pull request from a fork).
    writable: bool,
    /// The token's user for `GET /user`; `None`: an installation token,
    /// which may not read it and writes as `github-actions[bot]`.
    user: Option<String>,
    comments: Vec<Comment>,
    next_id: u64,
    clock: u64,
    requests: Vec<Request>,
}

pub struct FakeGitHub {
    pub base: String,
    state: Arc<Mutex<State>>,
}

impl FakeGitHub {
    pub fn start() -> FakeGitHub {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let base = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(State {
            writable: true,
            user: None,
            comments: Vec::new(),
            next_id: 1_000,
            clock: 1_790_000_000,
            requests: Vec::new(),
        }));
        let shared = Arc::clone(&state);
        let api = base.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let state = Arc::clone(&shared);
                let api = api.clone();
                std::thread::spawn(move || serve(stream, &state, &api));
            }
        });
        FakeGitHub { base, state }
    }

    pub fn set_writable(&self, writable: bool) {
        self.state.lock().unwrap().writable = writable;
    }

    /// Makes the token a personal one, of `login`.
    pub fn set_user(&self, login: &str) {
        self.state.lock().unwrap().user = Some(login.to_string());
    }

    /// Adds a comment by someone else.
    pub fn seed(&self, issue: u64, login: &str, body: &str) -> u64 {
        let mut state = self.state.lock().unwrap();
        add_comment(&mut state, issue, login, body)
    }

    pub fn comments(&self, issue: u64) -> Vec<Comment> {
        let state = self.state.lock().unwrap();
        state
            .comments
            .iter()
            .filter(|c| c.issue == issue)
            .cloned()
            .collect()
    }

    pub fn requests(&self) -> Vec<Request> {
        self.state.lock().unwrap().requests.clone()
    }

    pub fn clear_requests(&self) {
        self.state.lock().unwrap().requests.clear();
    }
}

fn add_comment(state: &mut State, issue: u64, login: &str, body: &str) -> u64 {
    state.next_id += 1;
    state.clock += 60;
    let comment = Comment {
        id: state.next_id,
        issue,
        body: body.to_string(),
        login: login.to_string(),
        created: state.clock,
        updated: state.clock,
    };
    state.comments.push(comment);
    state.next_id
}

struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Option<Value>,
}

fn respond(status: u16, body: Value) -> Response {
    Response {
        status,
        headers: Vec::new(),
        body: Some(body),
    }
}

fn error(status: u16, message: &str, docs: &str) -> Response {
    respond(
        status,
        json!({
            "message": message,
            "documentation_url": format!("https://docs.github.com/rest/{docs}"),
            "status": status.to_string(),
        }),
    )
}

fn serve(stream: TcpStream, state: &Mutex<State>, api: &str) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("").to_string();
    let mut headers = BTreeMap::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_string());
        }
    }
    let length: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    let request = Request {
        method,
        target,
        authorization: headers.get("authorization").cloned(),
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    let response = {
        let mut state = state.lock().unwrap();
        state.requests.push(request.clone());
        route(&mut state, &request, api)
    };
    write_response(stream, response);
}

fn write_response(mut stream: TcpStream, response: Response) {
    let reason = match response.status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        422 => "Unprocessable Entity",
        _ => "Error",
    };
    let body = response
        .body
        .map(|v| serde_json::to_vec(&v).unwrap())
        .unwrap_or_default();
    let mut head = format!(
        "HTTP/1.1 {} {reason}\r\nServer: github.com\r\nContent-Type: application/json; charset=utf-8\r\n\
         X-GitHub-Media-Type: github.v3; format=json\r\nX-GitHub-Api-Version-Selected: 2022-11-28\r\n\
         X-RateLimit-Limit: 5000\r\nX-RateLimit-Remaining: 4999\r\nX-RateLimit-Reset: 1790003600\r\n\
         X-RateLimit-Used: 1\r\nX-RateLimit-Resource: core\r\nX-GitHub-Request-Id: 0000:1111:2222:3333:4444\r\n\
         Content-Length: {}\r\nConnection: close\r\n",
        response.status,
        body.len()
    );
    for (name, value) in response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&body);
    let _ = stream.flush();
}

fn route(state: &mut State, request: &Request, api: &str) -> Response {
    let accepted = [format!("Bearer {TOKEN}"), format!("token {TOKEN}")];
    match &request.authorization {
        Some(auth) if accepted.contains(auth) => {}
        Some(_) => {
            return error(
                401,
                "Bad credentials",
                "overview/troubleshooting-the-rest-api",
            )
        }
        None => {
            return error(
                401,
                "Requires authentication",
                "overview/troubleshooting-the-rest-api",
            )
        }
    }
    let (path, query) = request
        .target
        .split_once('?')
        .unwrap_or((request.target.as_str(), ""));
    let params: BTreeMap<&str, &str> = query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .collect();
    if (request.method.as_str(), path) == ("GET", "/user") {
        return match &state.user {
            Some(login) => respond(200, user_json(login, api)),
            None => error(
                403,
                "Resource not accessible by integration",
                "users/users#get-the-authenticated-user",
            ),
        };
    }
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    // `/repos/{owner}/{name}/rest...` or `/repositories/{id}/rest...`.
    let rest = match segments.as_slice() {
        ["repos", owner, name, rest @ ..] if *owner == OWNER && *name == NAME => rest,
        ["repositories", id, rest @ ..] if *id == REPO_ID.to_string() => rest,
        _ => return error(404, "Not Found", "issues/comments"),
    };
    let method = request.method.as_str();
    match (method, rest) {
        ("GET", ["issues", number, "comments"]) => {
            let Ok(issue) = number.parse::<u64>() else {
                return error(404, "Not Found", "issues/comments#list-issue-comments");
            };
            list(state, issue, &params, api)
        }
        ("POST", ["issues", number, "comments"]) => {
            let Ok(issue) = number.parse::<u64>() else {
                return error(404, "Not Found", "issues/comments#create-an-issue-comment");
            };
            if !state.writable {
                return error(
                    403,
                    "Resource not accessible by integration",
                    "issues/comments#create-an-issue-comment",
                );
            }
            let Some(body) = comment_body(&request.body) else {
                return error(
                    422,
                    "Invalid request.\n\n\"body\" wasn't supplied.",
                    "issues/comments#create-an-issue-comment",
                );
            };
            let author = state.user.clone();
            let author = author.as_deref().unwrap_or("github-actions[bot]");
            let id = add_comment(state, issue, author, &body);
            let comment = state.comments.iter().find(|c| c.id == id).unwrap().clone();
            let mut response = respond(201, comment_json(&comment, api));
            response.headers.push((
                "Location".into(),
                format!("{api}/repos/{OWNER}/{NAME}/issues/comments/{id}"),
            ));
            response
        }
        ("PATCH" | "DELETE", ["issues", "comments", id]) => {
            let docs = if method == "PATCH" {
                "issues/comments#update-an-issue-comment"
            } else {
                "issues/comments#delete-an-issue-comment"
            };
            let Some(index) = id
                .parse::<u64>()
                .ok()
                .and_then(|id| state.comments.iter().position(|c| c.id == id))
            else {
                return error(404, "Not Found", docs);
            };
            if !state.writable {
                return error(403, "Resource not accessible by integration", docs);
            }
            if method == "DELETE" {
                state.comments.remove(index);
                return Response {
                    status: 204,
                    headers: Vec::new(),
                    body: None,
                };
            }
            let Some(body) = comment_body(&request.body) else {
                return error(422, "Invalid request.\n\n\"body\" wasn't supplied.", docs);
            };
            state.clock += 60;
            let clock = state.clock;
            let comment = &mut state.comments[index];
            comment.body = body;
            comment.updated = clock;
            let comment = comment.clone();
            respond(200, comment_json(&comment, api))
        }
        _ => error(404, "Not Found", "issues/comments"),
    }
}

fn comment_body(json_text: &str) -> Option<String> {
    let value: Value = serde_json::from_str(json_text).ok()?;
    value.get("body")?.as_str().map(str::to_string)
}

/// One page, GitHub style: `per_page` (default 30, at most 100), `page`
/// (from 1), and a `Link` header with next/last/first/prev.
fn list(state: &State, issue: u64, params: &BTreeMap<&str, &str>, api: &str) -> Response {
    let per_page = params
        .get("per_page")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(30)
        .clamp(1, 100);
    let page = params
        .get("page")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1);
    let all: Vec<&Comment> = state.comments.iter().filter(|c| c.issue == issue).collect();
    let pages = all.len().div_ceil(per_page).max(1);
    let items: Vec<Value> = all
        .iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .map(|c| comment_json(c, api))
        .collect();
    let url = |p: usize| {
        format!(
            "<{api}/repositories/{REPO_ID}/issues/{issue}/comments?per_page={per_page}&page={p}>"
        )
    };
    let mut links = Vec::new();
    if page > 1 {
        links.push(format!("{}; rel=\"prev\"", url(page - 1)));
    }
    if page < pages {
        links.push(format!("{}; rel=\"next\"", url(page + 1)));
        links.push(format!("{}; rel=\"last\"", url(pages)));
    }
    if page > 1 {
        links.push(format!("{}; rel=\"first\"", url(1)));
    }
    let mut response = respond(200, Value::Array(items));
    if !links.is_empty() {
        response.headers.push(("Link".into(), links.join(", ")));
    }
    response
}

pub fn timestamp(epoch: u64) -> String {
    // Days-from-civil inverse, enough for an ISO 8601 UTC timestamp.
    let days = (epoch / 86_400) as i64;
    let secs = epoch % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// GitHub's simple-user shape (`GET /user` adds profile fields to it).
fn user_json(login: &str, api: &str) -> Value {
    let bot = login.ends_with("[bot]");
    json!({
        "login": login,
        "id": if bot { 41_898_282 } else { 583_231 },
        "node_id": "MDM6Qm90NDE4OTgyODI=",
        "avatar_url": "https://avatars.githubusercontent.com/in/15368?v=4",
        "gravatar_id": "",
        "url": format!("{api}/users/{}", login.replace('[', "%5B").replace(']', "%5D")),
        "html_url": if bot { "https://github.com/apps/github-actions".to_string() } else { format!("https://github.com/{login}") },
        "followers_url": format!("{api}/users/{login}/followers"),
        "following_url": format!("{api}/users/{login}/following{{/other_user}}"),
        "gists_url": format!("{api}/users/{login}/gists{{/gist_id}}"),
        "starred_url": format!("{api}/users/{login}/starred{{/owner}}{{/repo}}"),
        "subscriptions_url": format!("{api}/users/{login}/subscriptions"),
        "organizations_url": format!("{api}/users/{login}/orgs"),
        "repos_url": format!("{api}/users/{login}/repos"),
        "events_url": format!("{api}/users/{login}/events{{/privacy}}"),
        "received_events_url": format!("{api}/users/{login}/received_events"),
        "type": if bot { "Bot" } else { "User" },
        "user_view_type": "public",
        "site_admin": false
    })
}

fn comment_json(c: &Comment, api: &str) -> Value {
    let bot = c.login.ends_with("[bot]");
    json!({
        "url": format!("{api}/repos/{OWNER}/{NAME}/issues/comments/{}", c.id),
        "html_url": format!("https://github.com/{OWNER}/{NAME}/pull/{}#issuecomment-{}", c.issue, c.id),
        "issue_url": format!("{api}/repos/{OWNER}/{NAME}/issues/{}", c.issue),
        "id": c.id,
        "node_id": format!("IC_kwDOHZ{:08}", c.id),
        "user": user_json(&c.login, api),
        "created_at": timestamp(c.created),
        "updated_at": timestamp(c.updated),
        "author_association": if bot { "NONE" } else { "MEMBER" },
        "body": c.body,
        "reactions": {
            "url": format!("{api}/repos/{OWNER}/{NAME}/issues/comments/{}/reactions", c.id),
            "total_count": 0, "+1": 0, "-1": 0, "laugh": 0, "hooray": 0,
            "confused": 0, "heart": 0, "rocket": 0, "eyes": 0
        },
        "performed_via_github_app": null
    })
}
