//! Sharing notes between clones: `init --share REMOTE` makes `git fetch
//! REMOTE` bring the remote's notes into `refs/notes/diffidx-remote/REMOTE`,
//! from where `index` imports them (after validating each).

use diffidx_core::git::notes::REMOTE_NOTES_PREFIX;
use diffidx_core::git::{ConfigKey, Repo};

/// Adds the fetch refspec for REMOTE's notes; false when it was there.
pub fn share_via(repo: &Repo, remote: &str) -> diffidx_core::Result<bool> {
    let refspec = format!("+refs/notes/diffidx:{REMOTE_NOTES_PREFIX}{remote}");
    let key = ConfigKey {
        section: "remote",
        subsection: Some(remote),
        name: "fetch",
    };
    repo.config_add_local(key, &refspec)
}
