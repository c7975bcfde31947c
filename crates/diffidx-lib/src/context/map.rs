//! The service map: which repository (and which part of it) a service's
//! code lives in, so an incident about `checkout-api` can be asked about
//! by that name (DESIGN.md §5).
//!
//! It is found in one place of four, the first that is set: `--map FILE`,
//! `DIFFIDX_SERVICE_MAP`, git config `diffidx.serviceMap`, then
//! `~/.config/diffidx/services.toml`. Paths in it are relative to the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::ContextError;

/// The environment variable naming the service map.
pub const MAP_VARIABLE: &str = "DIFFIDX_SERVICE_MAP";

/// The git config key naming the service map.
pub const MAP_CONFIG: &str = "diffidx.serviceMap";

/// A parsed service map and where it was read from.
#[derive(Debug, Clone)]
pub struct ServiceMap {
    pub path: PathBuf,
    pub services: BTreeMap<String, Service>,
}

/// One `[services.NAME]` table. Keys other than these are allowed (a map
/// shared with other tools may carry more) and ignored.
#[derive(Debug, Clone, Deserialize)]
pub struct Service {
    /// A local path, or a URL (then `clone` says where the local copy is).
    pub repo: String,
    #[serde(default)]
    pub clone: Option<String>,
    #[serde(default)]
    pub branch: Option<String>,
    /// Sub-paths of a monorepo that belong to the service.
    #[serde(default)]
    pub paths: Vec<String>,
    #[serde(default)]
    pub language: Option<String>,
    #[serde(default)]
    pub owners: Vec<String>,
    #[serde(default)]
    pub tags: Vec<String>,
}

#[derive(Deserialize)]
struct MapFile {
    #[serde(default)]
    services: BTreeMap<String, Service>,
}

/// Where a service's repository is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    Local(PathBuf),
    Remote { url: String, clone: PathBuf },
}

impl Service {
    /// Its repository, with relative paths read against `base` (the map's
    /// directory).
    pub fn location(&self, name: &str, base: &Path) -> Result<Location, ContextError> {
        if is_url(&self.repo) {
            let Some(clone) = &self.clone else {
                return Err(ContextError::Map(format!(
                    "service {name:?}: repo {:?} is a URL; add `clone = \"DIR\"`, the local \
                     directory to keep it in",
                    self.repo
                )));
            };
            return Ok(Location::Remote {
                url: self.repo.clone(),
                clone: resolve(base, clone),
            });
        }
        Ok(Location::Local(resolve(base, &self.repo)))
    }

    /// True when a change at `path` (or moved from `old_path`) belongs to
    /// the service: under one of its `paths`, or anywhere when it has none.
    pub fn covers(&self, path: &str, old_path: Option<&str>) -> bool {
        let under = |p: &str| {
            self.paths.iter().any(|root| {
                let root = root.trim_matches('/');
                root.is_empty()
                    || p == root
                    || p.strip_prefix(root).is_some_and(|r| r.starts_with('/'))
            })
        };
        self.paths.is_empty() || under(path) || old_path.is_some_and(under)
    }

    /// True when a symbol of `language` belongs to the service.
    pub fn speaks(&self, language: &str) -> bool {
        self.language
            .as_deref()
            .is_none_or(|l| canonical_language(l) == canonical_language(language))
    }
}

/// `C#`, `cs` and `csharp` are one language; `rs` and `rust` another.
fn canonical_language(name: &str) -> String {
    let lower = name.trim().to_ascii_lowercase();
    match lower.as_str() {
        "c#" | "cs" => "csharp".into(),
        "rs" => "rust".into(),
        "py" => "python".into(),
        "ts" => "typescript".into(),
        "js" => "javascript".into(),
        "golang" => "go".into(),
        _ => lower,
    }
}

fn is_url(repo: &str) -> bool {
    repo.contains("://") || {
        // scp-like `user@host:path`, not a Windows drive or a local path.
        let (head, _) = repo.split_once(':').unwrap_or(("", ""));
        head.contains('@') && !head.contains('/')
    }
}

fn resolve(base: &Path, path: &str) -> PathBuf {
    let expanded = match path.strip_prefix("~/") {
        Some(rest) => home().map(|h| h.join(rest)),
        None => None,
    };
    let path = expanded.unwrap_or_else(|| PathBuf::from(path));
    if path.is_absolute() {
        path
    } else {
        base.join(path)
    }
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

impl ServiceMap {
    /// Finds and reads the service map. `explicit` is `--map`; `git_config`
    /// is the value of `diffidx.serviceMap` (the repository's, else the
    /// user's).
    pub fn locate(
        explicit: Option<&Path>,
        git_config: Option<String>,
    ) -> Result<ServiceMap, ContextError> {
        let mut looked = Vec::new();
        if let Some(path) = explicit {
            return ServiceMap::read(path);
        }
        looked.push("--map".to_owned());
        if let Some(path) = std::env::var_os(MAP_VARIABLE).filter(|p| !p.is_empty()) {
            return ServiceMap::read(Path::new(&path));
        }
        looked.push(MAP_VARIABLE.to_owned());
        if let Some(path) = git_config.filter(|p| !p.is_empty()) {
            let path = resolve(&std::env::current_dir().unwrap_or_default(), &path);
            return ServiceMap::read(&path);
        }
        looked.push(format!("git config {MAP_CONFIG}"));
        if let Some(home) = home() {
            let path = home.join(".config/diffidx/services.toml");
            if path.exists() {
                return ServiceMap::read(&path);
            }
            looked.push(path.display().to_string());
        }
        Err(ContextError::NoMap { looked })
    }

    /// Reads a service map file.
    pub fn read(path: &Path) -> Result<ServiceMap, ContextError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            ContextError::Map(format!(
                "cannot read the service map {}: {e}",
                path.display()
            ))
        })?;
        let file: MapFile = toml::from_str(&text).map_err(|e| {
            ContextError::Map(format!(
                "the service map {} is not valid: {}",
                path.display(),
                e.to_string().trim_end()
            ))
        })?;
        Ok(ServiceMap {
            path: path.to_owned(),
            services: file.services,
        })
    }

    /// The directory relative paths in the map are read against.
    pub fn base(&self) -> PathBuf {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        dir.canonicalize().unwrap_or_else(|_| dir.to_owned())
    }

    /// The service named `name`, or an error naming the known ones.
    pub fn service(&self, name: &str) -> Result<&Service, ContextError> {
        self.services
            .get(name)
            .ok_or_else(|| ContextError::UnknownService {
                name: name.to_owned(),
                known: self.services.keys().cloned().collect(),
                map: self.path.clone(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service(toml_text: &str) -> Service {
        let file: MapFile = toml::from_str(toml_text).unwrap();
        file.services.into_values().next().unwrap()
    }

    #[test]
    fn a_url_needs_a_clone_directory_and_paths_resolve_against_the_map() {
        let base = Path::new("/maps");
        let local = service("[services.a]\nrepo = \"../code/a\"\n");
        assert_eq!(
            local.location("a", base).unwrap(),
            Location::Local(PathBuf::from("/maps/../code/a"))
        );
        let remote = service("[services.b]\nrepo = \"https://example.com/b.git\"\nclone = \"b\"\n");
        assert_eq!(
            remote.location("b", base).unwrap(),
            Location::Remote {
                url: "https://example.com/b.git".into(),
                clone: PathBuf::from("/maps/b")
            }
        );
        let scp = service("[services.c]\nrepo = \"git@example.com:c.git\"\n");
        let err = scp.location("c", base).unwrap_err().to_string();
        assert!(err.contains("clone"), "{err}");
    }

    #[test]
    fn paths_narrow_a_monorepo_service_at_directory_boundaries() {
        let s = service("[services.a]\nrepo = \".\"\npaths = [\"svc/checkout/\"]\n");
        assert!(s.covers("svc/checkout/Api.cs", None));
        assert!(!s.covers("svc/checkout-old/Api.cs", None));
        assert!(s.covers("lib/Api.cs", Some("svc/checkout/Api.cs")));
        let all = service("[services.a]\nrepo = \".\"\n");
        assert!(all.covers("anything.rs", None));
    }

    #[test]
    fn languages_compare_by_their_common_names() {
        let s = service("[services.a]\nrepo = \".\"\nlanguage = \"C#\"\n");
        assert!(s.speaks("csharp") && !s.speaks("rust"));
    }
}
