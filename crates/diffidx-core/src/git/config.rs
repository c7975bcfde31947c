//! Writing the repository's own git config (`.git/config`) with gix's
//! lossless config file: comments, order and formatting survive, and the
//! file is replaced under git's own `config.lock` protocol.

use super::Repo;
use crate::error::{Error, Result};

/// A key of the local config: `section[.subsection].name`.
#[derive(Debug, Clone, Copy)]
pub struct ConfigKey<'a> {
    pub section: &'a str,
    pub subsection: Option<&'a str>,
    pub name: &'a str,
}

fn subsection<'a>(key: ConfigKey<'a>) -> Option<&'a gix::bstr::BStr> {
    key.subsection.map(gix::bstr::BStr::new)
}

impl Repo {
    /// Sets `key` to `value` in the local config (replacing a single value).
    pub fn config_set_local(&self, key: ConfigKey<'_>, value: &str) -> Result<()> {
        self.update_local_config(|file| {
            file.set_raw_value_by(key.section, subsection(key), key.name, value)
                .map(|_| true)
                .map_err(|e| e.to_string())
        })
        .map(|_| ())
    }

    /// Adds `value` to the multi-valued `key` in the local config unless it
    /// is there already; true when it was added.
    pub fn config_add_local(&self, key: ConfigKey<'_>, value: &str) -> Result<bool> {
        self.update_local_config(|file| {
            let present = file
                .raw_values_by(key.section, subsection(key), key.name)
                .is_ok_and(|values| values.iter().any(|v| v == value));
            if present {
                return Ok(false);
            }
            file.section_mut_or_create_new(key.section, subsection(key))
                .map_err(|e| e.to_string())?
                .push(key.name, Some(value.into()))
                .map_err(|e| e.to_string())?;
            Ok(true)
        })
    }

    /// Reads `.git/config`, applies `change`, and writes it back through
    /// `config.lock` when `change` says it changed something.
    fn update_local_config(
        &self,
        change: impl FnOnce(&mut gix::config::File) -> std::result::Result<bool, String>,
    ) -> Result<bool> {
        let path = self.common_dir().join("config");
        let fail = |reason: String| Error::Config {
            path: path.display().to_string(),
            reason,
        };
        let mut file =
            gix::config::File::from_path_no_includes(path.clone(), gix::config::Source::Local)
                .map_err(|e| fail(e.to_string()))?;
        if !change(&mut file).map_err(fail)? {
            return Ok(false);
        }
        let mut bytes = Vec::new();
        file.write_to(&mut bytes).map_err(|e| fail(e.to_string()))?;
        let lock = path.with_file_name("config.lock");
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&lock)
            .map_err(|e| {
                fail(format!(
                    "{e} (is another git command changing it? remove {} if not)",
                    lock.display()
                ))
            })
            .and_then(|mut f| {
                use std::io::Write;
                f.write_all(&bytes)
                    .and_then(|()| f.sync_all())
                    .map_err(|e| fail(e.to_string()))
            });
        if let Err(e) =
            written.and_then(|()| std::fs::rename(&lock, &path).map_err(|e| fail(e.to_string())))
        {
            let _ = std::fs::remove_file(&lock);
            return Err(e);
        }
        Ok(true)
    }
}
