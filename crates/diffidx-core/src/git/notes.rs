//! The record's home: git notes under `refs/notes/diffidx`.
//!
//! Notes are read through `gix_note`'s lazily loaded notes trees, and written
//! in batches: many notes, one tree write, one notes commit, and a
//! compare-and-swap update of the ref, so a concurrent writer can never be
//! overwritten silently.

use gix::bstr::ByteSlice;
use gix::refs::transaction::PreviousValue;
use gix::ObjectId;

use super::Repo;
use crate::error::{Error, GitContext, Result};
use crate::note::{NoteDocument, MAX_NOTE_BYTES};

/// The notes reference diffidx writes.
pub const NOTES_REF: &str = "refs/notes/diffidx";

/// Where `init --share` fetches other clones' notes: one ref per remote.
pub const REMOTE_NOTES_PREFIX: &str = "refs/notes/diffidx-remote/";

/// Read and batch-write access to one notes ref.
pub struct Notes<'r> {
    repo: &'r Repo,
    ref_name: String,
    /// The notes commit the state was loaded from (`None`: no notes yet).
    tip: Option<ObjectId>,
    state: gix::note::plumbing::State,
    staged: usize,
    /// Set by [`Notes::pack_writes`]: a handle that keeps the objects it
    /// writes in memory until [`Notes::commit`] writes them as one pack.
    packing: Option<gix::Repository>,
    /// The note blobs staged for that pack, compressed.
    blobs: super::pack::Blobs,
}

impl Repo {
    /// The commit `refs/notes/diffidx` points to, if any.
    pub fn notes_tip(&self) -> Result<Option<ObjectId>> {
        self.ref_tip(NOTES_REF)
    }

    fn ref_tip(&self, name: &str) -> Result<Option<ObjectId>> {
        let reference = self
            .repo
            .try_find_reference(name)
            .context(|| format!("cannot read {name}"))?;
        match reference {
            Some(mut r) => Ok(Some(
                r.peel_to_id()
                    .context(|| format!("cannot resolve {name}"))?
                    .detach(),
            )),
            None => Ok(None),
        }
    }

    /// Opens the notes at their current tip.
    pub fn notes(&self) -> Result<Notes<'_>> {
        self.notes_at(NOTES_REF)
    }

    /// The notes refs fetched from remotes (`refs/notes/diffidx-remote/*`).
    pub fn remote_notes_refs(&self) -> Result<Vec<String>> {
        let platform = self
            .repo
            .references()
            .context(|| "cannot list references".to_owned())?;
        let refs = platform
            .prefixed(REMOTE_NOTES_PREFIX)
            .context(|| format!("cannot list {REMOTE_NOTES_PREFIX}*"))?;
        Ok(refs
            .filter_map(|r| r.ok())
            .map(|r| r.name().as_bstr().to_str_lossy().into_owned())
            .collect())
    }

    /// Opens the notes of any notes ref (read-only use for remote ones).
    pub fn notes_at(&self, ref_name: &str) -> Result<Notes<'_>> {
        let tip = self.ref_tip(ref_name)?;
        let tree = match tip {
            Some(commit) => self.commit(commit)?.tree,
            None => ObjectId::empty_tree(self.repo.object_hash()),
        };
        let state = gix::note::plumbing::State::new(tree, &self.repo.objects)
            .context(|| format!("cannot read the notes tree {tree}"))?;
        Ok(Notes {
            repo: self,
            ref_name: ref_name.to_owned(),
            tip,
            state,
            staged: 0,
            packing: None,
            blobs: Default::default(),
        })
    }
}

impl<'r> Notes<'r> {
    /// From now on, each [`Notes::commit`] writes the notes, their trees and
    /// the notes commit as one pack instead of a loose object each. For
    /// long runs: creating a file per note cost App-vNext/Polly's backfill
    /// 2.8-3.2 s (up to 0.7 ms a file on ext4) and a repack at its end; a
    /// pack per one-commit run would leave a pack per commit instead.
    pub fn pack_writes(&mut self) {
        if self.packing.is_none() {
            let packing = self.repo.repo.clone().with_object_memory();
            self.blobs =
                super::pack::Blobs::in_dir(packing.objects.store_ref().path().join("pack"));
            self.packing = Some(packing);
        }
    }

    /// The handle objects are written and read through (a free function so
    /// that it borrows two fields, not all of `self`).
    fn objects<'a>(repo: &'a Repo, packing: &'a Option<gix::Repository>) -> &'a gix::Repository {
        packing.as_ref().unwrap_or(&repo.repo)
    }

    /// The repository these notes are of.
    pub fn repo(&self) -> &'r Repo {
        self.repo
    }

    /// The notes commit these notes were read from.
    pub fn tip(&self) -> Option<ObjectId> {
        self.tip
    }

    /// The note blob attached to `commit`, if any.
    pub fn get_id(&mut self, commit: ObjectId) -> Result<Option<ObjectId>> {
        self.state
            .get(&commit, &Self::objects(self.repo, &self.packing).objects)
            .context(|| format!("cannot look up the note of {commit}"))
    }

    /// The note attached to `commit`, read up to `limit` bytes; a larger note
    /// is reported as such, never read whole.
    pub fn get(&mut self, commit: ObjectId, limit: u64) -> Result<Option<NoteBytes>> {
        let Some(blob) = self.get_id(commit)? else {
            return Ok(None);
        };
        // Staged for a pack and not yet written, or in the repository.
        if let Some(size) = self.blobs.size(&blob) {
            if size > limit {
                return Ok(Some(NoteBytes::TooLarge { blob, size }));
            }
            if let Some(bytes) = self.blobs.read(&blob) {
                return Ok(Some(NoteBytes::Read {
                    blob,
                    bytes: bytes?,
                }));
            }
        }
        let objects = Self::objects(self.repo, &self.packing);
        let unreadable = |reason: String| Error::Object {
            id: blob.to_string(),
            reason,
        };
        let size = objects
            .find_header(blob)
            .map_err(|e| unreadable(e.to_string()))?
            .size();
        if size > limit {
            return Ok(Some(NoteBytes::TooLarge { blob, size }));
        }
        let bytes = objects
            .find_blob(blob)
            .map_err(|e| unreadable(e.to_string()))?
            .detach()
            .data;
        Ok(Some(NoteBytes::Read { blob, bytes }))
    }

    /// The validated note of `commit`: `None` without a note,
    /// `Some(Err(reason))` when it is malformed, of another commit, or over
    /// [`MAX_NOTE_BYTES`]. Notes may come from a remote: this is the one
    /// place they are read and checked.
    pub fn read_validated(
        &mut self,
        commit: &super::CommitInfo,
    ) -> Result<Option<std::result::Result<NoteDocument, String>>> {
        let parent = commit.parents.first().map(|p| p.to_string());
        Ok(match self.get(commit.id, MAX_NOTE_BYTES)? {
            None => None,
            Some(NoteBytes::TooLarge { size, .. }) => Some(Err(format!(
                "the note is {size} bytes, over the {MAX_NOTE_BYTES}-byte limit"
            ))),
            Some(NoteBytes::Read { bytes, .. }) => Some(NoteDocument::from_untrusted(
                &bytes,
                &commit.id.to_string(),
                parent.as_deref(),
            )),
        })
    }

    /// Stages `note` for `commit` (written by [`Notes::commit`]).
    pub fn stage(&mut self, commit: ObjectId, note: &str) -> Result<()> {
        let blob = match &self.packing {
            Some(packing) => self.blobs.add(packing.object_hash(), note.as_bytes())?,
            None => self
                .repo
                .repo
                .write_blob(note.as_bytes())
                .context(|| format!("cannot write the note of {commit}"))?
                .detach(),
        };
        self.state
            .edit(
                commit,
                Some(blob),
                &Self::objects(self.repo, &self.packing).objects,
            )
            .context(|| format!("cannot stage the note of {commit}"))?;
        self.staged += 1;
        Ok(())
    }

    /// Stages the removal of `commit`'s note (written by [`Notes::commit`]).
    pub fn remove(&mut self, commit: ObjectId) -> Result<()> {
        self.state
            .edit(
                commit,
                None,
                &Self::objects(self.repo, &self.packing).objects,
            )
            .context(|| format!("cannot stage the removal of the note of {commit}"))?;
        self.staged += 1;
        Ok(())
    }

    /// Number of notes staged since the last commit.
    pub fn staged(&self) -> usize {
        self.staged
    }

    /// Writes every staged note in one notes commit and moves the ref, but
    /// only if nobody else moved it meanwhile ([`Error::NotesMoved`] then).
    pub fn commit(&mut self, message: &str) -> Result<Option<ObjectId>> {
        if self.staged == 0 {
            return Ok(None);
        }
        let repo = Self::objects(self.repo, &self.packing);
        let tree = self
            .state
            .write(&repo.objects)
            .context(|| "cannot write the notes tree".to_owned())?;
        let signature = self.repo.signature()?;
        let commit = repo
            .new_commit_as(
                signature.to_ref(&mut Default::default()),
                signature.to_ref(&mut Default::default()),
                message,
                tree,
                self.tip,
            )
            .context(|| "cannot write the notes commit".to_owned())?
            .id;
        // Every object the ref will name is on disk before it moves, in a
        // pack kept from `git gc` until it does.
        let kept = match &self.packing {
            Some(packing) => {
                let objects = packing.objects.reset_object_memory().unwrap_or_default();
                super::pack::write(packing, std::mem::take(&mut self.blobs), &objects)?
            }
            None => None,
        };
        let expected = match self.tip {
            Some(tip) => PreviousValue::MustExistAndMatch(gix::refs::Target::Object(tip)),
            None => PreviousValue::MustNotExist,
        };
        // The reflog entry names the notes commit's committer, so no identity
        // has to be set up front: a read-only command never resolves one
        // (that reads the system's time-zone database).
        let name = gix::refs::FullName::try_from(self.ref_name.as_str())
            .map_err(gix::Exn::from)
            .context(|| format!("invalid notes ref {}", self.ref_name))?;
        let moved = self.repo.repo.edit_references_as(
            Some(gix::refs::transaction::RefEdit::update(
                name, commit, expected, message,
            )),
            Some(signature.to_ref(&mut Default::default())),
        );
        if let Some(keep) = kept {
            // Named by the ref now, or garbage if it did not move: either way
            // `git gc` may have it. A keep file left behind costs only that.
            let _ = std::fs::remove_file(keep);
        }
        if let Err(e) = moved {
            let now = self.repo.ref_tip(&self.ref_name).ok().flatten();
            return Err(if now != self.tip {
                Error::NotesMoved {
                    reason: e.to_string(),
                }
            } else {
                Error::Git {
                    context: format!("cannot update {}", self.ref_name),
                    source: e,
                }
            });
        }
        self.tip = Some(commit);
        self.staged = 0;
        Ok(Some(commit))
    }

    /// Every annotated commit with its note blob, walking the fanout tree.
    pub fn list(&self) -> Result<Vec<(ObjectId, ObjectId)>> {
        let mut out = Vec::new();
        if let Some(tip) = self.tip {
            let tree = self.repo.commit(tip)?.tree;
            self.walk(tree, String::new(), &mut out)?;
        }
        Ok(out)
    }

    fn walk(
        &self,
        tree: ObjectId,
        prefix: String,
        out: &mut Vec<(ObjectId, ObjectId)>,
    ) -> Result<()> {
        let tree = self
            .repo
            .repo
            .find_tree(tree)
            .context(|| format!("cannot read notes tree {tree}"))?;
        for entry in tree.iter() {
            let entry = entry.context(|| "cannot decode a notes tree entry".to_owned())?;
            let name = format!("{prefix}{}", entry.filename().to_str_lossy());
            if entry.mode().is_tree() {
                // Fan-out directories split a 40-hex id; a deeper tree (from
                // a hostile remote) names no commit and is not descended.
                if name.len() < 40 {
                    self.walk(entry.object_id(), name, out)?;
                }
            } else if let Ok(annotated) = ObjectId::from_hex(name.as_bytes()) {
                out.push((annotated, entry.object_id()));
            }
        }
        Ok(())
    }
}

/// A note as read: its bytes, or only its size when over the limit.
#[derive(Debug)]
pub enum NoteBytes {
    Read { blob: ObjectId, bytes: Vec<u8> },
    TooLarge { blob: ObjectId, size: u64 },
}

impl Repo {
    /// The identity notes commits are written as: git's committer, or
    /// `diffidx <diffidx@localhost>` when none is configured.
    fn signature(&self) -> Result<gix::actor::Signature> {
        let time = gix::date::Time::now_local_or_utc();
        let sig = match self.repo.committer() {
            Some(Ok(sig)) => sig
                .to_owned()
                .context(|| "cannot read the committer".to_owned())?,
            _ => gix::actor::Signature {
                name: "diffidx".into(),
                email: "diffidx@localhost".into(),
                time,
            },
        };
        Ok(sig)
    }
}
