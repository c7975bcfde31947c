//! Repository access through gix: revisions, commits, tree diffs with rename
//! detection, and blobs.
//!
//! Only this module knows gix; the rest of the core sees plain ids, paths and
//! bytes.

mod config;
pub mod hunks;
pub mod notes;
mod pack;
pub mod patch;

pub use config::ConfigKey;
use std::collections::{HashMap, HashSet};

use gix::bstr::ByteSlice;
use gix::object::tree::EntryKind;
use gix::ObjectId;

use crate::error::{Error, GitContext, Result};

/// A repository opened for reading.
pub struct Repo {
    repo: gix::Repository,
    /// The remote a partial clone fetches missing objects from (read once).
    promisor: Option<String>,
}

/// A repository that can be sent to another thread, which opens its own
/// [`Repo`] from it (gix's repository handle is not shared across threads;
/// its object store is).
pub struct SharedRepo {
    repo: gix::ThreadSafeRepository,
    promisor: Option<String>,
}

impl SharedRepo {
    /// This thread's handle on the repository.
    pub fn to_local(&self) -> Repo {
        let mut repo = self.repo.to_thread_local();
        size_caches(&mut repo);
        Repo {
            repo,
            promisor: self.promisor.clone(),
        }
    }
}

/// Decoded objects a handle keeps (trees are read again and again). Blobs
/// are kept parsed by the differ's own cache, so this one holds mostly
/// trees: at 64 MiB per handle (one per diffing thread and the writer's)
/// a backfill of App-vNext/Polly peaked 70 MB higher and ran no faster;
/// at 2 MiB instead of 8, Polly's and sharkdp/fd's peaks were 10-25 and
/// 11-14 MiB lower, their tree diffs no slower.
const OBJECT_CACHE_BYTES: usize = 2 * 1024 * 1024;

/// Decoded delta bases a handle keeps, unless `core.deltaBaseCacheLimit`
/// says otherwise. gix's default is 64 entries of any size per handle; the
/// differ keeps its own parsed blobs, so a few MiB do as well: on
/// App-vNext/Polly's backfill the default held 13-15 MiB more through the
/// diffing than none; none at all made the generated 5,000-commit bench
/// 20% slower (its commits are small, its blobs read through long delta
/// chains), and 4 MiB left it as fast as the default.
const PACK_CACHE_BYTES: usize = 4 * 1024 * 1024;

/// Sizes a handle's caches, where the repository's config does not.
fn size_caches(repo: &mut gix::Repository) {
    repo.object_cache_size_if_unset(OBJECT_CACHE_BYTES);
    let sized = {
        let config = repo.config_snapshot();
        [
            "core.deltaBaseCacheLimit",
            "gitoxide.core.deltaBaseCacheLimit",
        ]
        .iter()
        .any(|key| config.integer(key).is_some())
    };
    if !sized {
        repo.objects.set_pack_cache(|| {
            Box::new(gix::odb::pack::cache::lru::MemoryCappedHashmap::new(
                PACK_CACHE_BYTES,
            ))
        });
    }
}

/// A history as `git log --first-parent` walks it ([`Repo::first_parent_view`]).
#[derive(Debug, Clone, Default)]
pub struct FirstParentView {
    /// The first-parent chain, the tip first.
    pub chain: Vec<ObjectId>,
    /// Every commit of the history → the chain commit that brought it in.
    pub brought_by: HashMap<ObjectId, ObjectId>,
}

/// What the core needs to know about a commit.
#[derive(Debug, Clone)]
pub struct CommitInfo {
    pub id: ObjectId,
    pub tree: ObjectId,
    pub parents: Vec<ObjectId>,
    pub author: String,
    /// Author time, seconds since the epoch.
    pub time: i64,
    /// Author time as RFC 3339 with its original offset.
    pub date: String,
    /// Committer time, seconds since the epoch: when the commit was made,
    /// which a rebase, a cherry-pick or a late merge of an old branch moves
    /// away from its author time.
    pub commit_time: i64,
    pub subject: String,
}

/// One side of a changed file: its path and blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSide {
    pub path: String,
    pub blob: ObjectId,
}

/// A changed file. Both sides present: modified (same path) or renamed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub old: Option<FileSide>,
    pub new: Option<FileSide>,
}

impl FileChange {
    /// The sides that exist: path and blob.
    pub fn sides(&self) -> impl Iterator<Item = &FileSide> {
        [self.old.as_ref(), self.new.as_ref()].into_iter().flatten()
    }

    /// The path on the side that exists, new side first (git's diff order key).
    pub fn path(&self) -> &str {
        self.new
            .as_ref()
            .or(self.old.as_ref())
            .map(|s| s.path.as_str())
            .unwrap_or("")
    }
}

/// The remote a partial clone fetches missing objects from:
/// `extensions.partialClone`, else the first remote marked `promisor`.
fn promisor_remote(repo: &gix::Repository) -> Option<String> {
    let config = repo.config_snapshot();
    config
        .string("extensions.partialClone")
        .map(|r| r.to_str_lossy().into_owned())
        .filter(|r| !r.is_empty())
        .or_else(|| {
            repo.remote_names()
                .into_iter()
                .map(|name| name.to_str_lossy().into_owned())
                .find(|name| config.boolean(&format!("remote.{name}.promisor")) == Some(true))
        })
}

/// An empty side of a range means HEAD.
fn or_head(rev: &str) -> &str {
    if rev.is_empty() {
        "HEAD"
    } else {
        rev
    }
}

/// What `show` looks at: one commit, or the net change between two trees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Commit(ObjectId),
    /// `A..B`: tree A against tree B; `A...B`: their merge base against B.
    Range {
        base: ObjectId,
        head: ObjectId,
    },
}

impl Repo {
    /// Resolves `REV`, `A..B` or `A...B` (an empty side means HEAD).
    pub fn resolve_target(&self, spec: &str) -> Result<Target> {
        if let Some((a, b)) = spec.split_once("...") {
            let (a, b) = (
                self.resolve_commit(or_head(a))?,
                self.resolve_commit(or_head(b))?,
            );
            let base = self
                .merge_base(a, b)?
                .ok_or_else(|| Error::UnknownRevision {
                    rev: spec.to_owned(),
                    reason: "the two commits have no common ancestor".into(),
                })?;
            return Ok(Target::Range { base, head: b });
        }
        if let Some((a, b)) = spec.split_once("..") {
            return Ok(Target::Range {
                base: self.resolve_commit(or_head(a))?,
                head: self.resolve_commit(or_head(b))?,
            });
        }
        Ok(Target::Commit(self.resolve_commit(spec)?))
    }

    /// Opens the repository containing `path` (like git, searching upwards,
    /// and honouring `GIT_DIR` and friends as git's hooks set them).
    pub fn discover(path: &std::path::Path) -> Result<Repo> {
        // A partial clone grows a pack per fetch of missing blobs; gix's
        // default room for 32 packs would then make objects vanish mid-run.
        let slots = gix::odb::store::init::Slots::AsNeededByDiskState {
            multiplier: 2.0,
            minimum: 512,
        };
        let mut trust = gix::sec::trust::Mapping::<gix::open::Options>::default();
        trust.full = trust.full.object_store_slots(slots);
        trust.reduced = trust.reduced.object_store_slots(slots);
        let mut repo: gix::Repository =
            gix::ThreadSafeRepository::discover_with_environment_overrides_opts(
                path,
                Default::default(),
                trust,
            )
            .map_err(|e| Error::OpenRepository {
                path: path.display().to_string(),
                source: e,
            })?
            .into();
        size_caches(&mut repo);
        let promisor = promisor_remote(&repo);
        Ok(Repo { repo, promisor })
    }

    /// The same repository, for another thread.
    pub fn share(&self) -> SharedRepo {
        SharedRepo {
            repo: self.repo.clone().into_sync(),
            promisor: self.promisor.clone(),
        }
    }

    pub fn gix(&self) -> &gix::Repository {
        &self.repo
    }

    /// The same repository through an object store of its own, for a pass
    /// over the history on other threads: the pages of the packs it reads
    /// stay mapped only while it is held. Through the main store they
    /// stayed for the rest of the run (a backfill of App-vNext/Polly read
    /// 10 MiB of its pack's 11 while diffing, then needed little of it).
    pub fn share_apart(&self) -> Result<SharedRepo> {
        Ok(Repo::discover(self.repo.git_dir())?.share())
    }

    /// A handle of its own that keeps no decoded objects, for one pass
    /// over many objects read once each (a walk of the history): through
    /// this handle's cache they would stay for the rest of the run (2 MiB
    /// of commits, on a backfill of App-vNext/Polly).
    pub fn for_one_pass(&self) -> Repo {
        let mut repo = self.repo.clone();
        repo.object_cache_size(None);
        Repo {
            repo,
            promisor: self.promisor.clone(),
        }
    }

    /// An integer from git config (`diffidx.maxFileSize`, ...), with git's
    /// `k`/`m`/`g` suffixes.
    pub fn config_integer(&self, key: &str) -> Option<i64> {
        self.repo.config_snapshot().integer(key)
    }

    /// A string from git config.
    pub fn config_string(&self, key: &str) -> Option<String> {
        self.repo
            .config_snapshot()
            .string(key)
            .map(|s| s.to_str_lossy().into_owned())
    }

    /// The directory shared by all worktrees (`.git` of the main worktree).
    pub fn common_dir(&self) -> std::path::PathBuf {
        self.repo.common_dir().to_owned()
    }

    /// The work tree, if the repository has one.
    pub fn work_dir(&self) -> Option<std::path::PathBuf> {
        self.repo.workdir().map(|p| p.to_owned())
    }

    /// The `.git` directory.
    pub fn git_dir(&self) -> &std::path::Path {
        self.repo.git_dir()
    }

    /// Resolves a revision to a commit id.
    pub fn resolve_commit(&self, rev: &str) -> Result<ObjectId> {
        if rev == "HEAD" && self.repo.head_id().is_err() {
            let unborn = self.repo.head().map(|h| h.is_unborn()).unwrap_or(false);
            if unborn {
                return Err(Error::EmptyRepository);
            }
        }
        let id = self
            .repo
            .rev_parse_single(rev)
            .map_err(|e| Error::UnknownRevision {
                rev: rev.to_owned(),
                reason: describe_rev_error(&e.to_string()),
            })?;
        let object = id.object().map_err(|e| Error::UnknownRevision {
            rev: rev.to_owned(),
            reason: e.to_string(),
        })?;
        let commit = object
            .peel_to_commit()
            .map_err(|_| Error::UnknownRevision {
                rev: rev.to_owned(),
                reason: "it does not name a commit".into(),
            })?;
        Ok(commit.id)
    }

    /// Reads a commit's metadata.
    pub fn commit(&self, id: ObjectId) -> Result<CommitInfo> {
        let commit = self.repo.find_commit(id).map_err(|e| Error::Object {
            id: id.to_string(),
            reason: e.to_string(),
        })?;
        let decoded = commit.decode().map_err(|e| Error::Object {
            id: id.to_string(),
            reason: e.to_string(),
        })?;
        let author = decoded.author().map_err(|e| Error::Object {
            id: id.to_string(),
            reason: e.to_string(),
        })?;
        let time = author.time().unwrap_or_default();
        let commit_time = decoded
            .committer()
            .ok()
            .and_then(|c| c.time().ok())
            .map_or(time.seconds, |t| t.seconds);
        let subject = decoded.message().summary().to_str_lossy().into_owned();
        Ok(CommitInfo {
            id,
            tree: decoded.tree(),
            parents: decoded.parents().collect(),
            author: author.name.to_str_lossy().into_owned(),
            time: time.seconds,
            date: rfc3339(time.seconds, time.offset),
            commit_time,
            subject,
        })
    }

    /// The first parent of `commit`, checked to be present (shallow clones).
    pub fn parent_commit(&self, commit: &CommitInfo, index: usize) -> Result<Option<CommitInfo>> {
        let Some(&parent) = commit.parents.get(index) else {
            return Ok(None);
        };
        if !self.repo.has_object(parent) {
            return Err(Error::MissingParent {
                commit: commit.id.to_string(),
                parent: parent.to_string(),
            });
        }
        self.commit(parent).map(Some)
    }

    /// Which of `candidates` are in the history of `tips` (tips included).
    ///
    /// One walk from the tips, newest first, that stops once every candidate
    /// is found or the walk passes a day before the oldest candidate's
    /// commit time (the slack absorbs clocks that ran a little backwards).
    /// A candidate whose object is gone is never reachable. A walk that
    /// cannot read a commit is an error, never a shorter answer.
    pub fn reachable_among(
        &self,
        tips: &[ObjectId],
        candidates: &HashSet<ObjectId>,
    ) -> Result<HashSet<ObjectId>> {
        let mut oldest: Option<i64> = None;
        for &id in candidates {
            if let Ok(commit) = self.repo.find_commit(id) {
                if let Ok(time) = commit.time() {
                    oldest = Some(oldest.map_or(time.seconds, |o| o.min(time.seconds)));
                }
            }
        }
        let mut found = HashSet::new();
        let (Some(oldest), false) = (oldest, tips.is_empty()) else {
            return Ok(found);
        };
        use gix::revision::walk::Sorting;
        use gix::traverse::commit::simple::CommitTimeOrder;
        let walk = self
            .repo
            .rev_walk(tips.iter().copied())
            .sorting(Sorting::ByCommitTimeCutoff {
                order: CommitTimeOrder::NewestFirst,
                seconds: oldest.saturating_sub(86_400),
            })
            .all()
            .context(|| "cannot walk the history of the refs".to_owned())?;
        for info in walk {
            let info = info.context(|| "cannot walk the history of the refs".to_owned())?;
            if candidates.contains(&info.id) {
                found.insert(info.id);
                if found.len() == candidates.len() {
                    break;
                }
            }
        }
        Ok(found)
    }

    /// Which of `wanted` `git log TIP -- PATHS` lists: the history of `tip`
    /// simplified as git simplifies it by default. At a merge whose files
    /// at `paths` are those of one of its parents (TREESAME), only the first
    /// such parent is followed: what the other side did to them did not
    /// reach the merge. Other commits follow all their parents.
    ///
    /// The walk goes newest first and stops once every wanted commit is
    /// reached or it passes a day before the oldest of them (the slack
    /// absorbs clocks that ran a little backwards), so it costs the part of
    /// the history the wanted commits span. A commit a shallow clone lacks
    /// ends its line. A commit that cannot be read is an error.
    pub fn simplified_history_among(
        &self,
        tip: ObjectId,
        paths: &[&str],
        wanted: &HashSet<ObjectId>,
    ) -> Result<HashSet<ObjectId>> {
        use std::collections::BinaryHeap;
        let mut found = HashSet::new();
        let mut oldest: Option<i64> = None;
        for &id in wanted {
            if let Ok(Ok(time)) = self.repo.find_commit(id).map(|c| c.time()) {
                oldest = Some(oldest.map_or(time.seconds, |o| o.min(time.seconds)));
            }
        }
        let Some(oldest) = oldest else {
            return Ok(found);
        };
        let cutoff = oldest.saturating_sub(86_400);
        // The commit-graph file, where git keeps one (`git gc` writes it),
        // answers without decoding commits.
        let graph = self.repo.commit_graph_if_enabled().ok().flatten();
        // A commit's time, tree and parents (those present).
        let read = |id: ObjectId| -> Result<(i64, ObjectId, Vec<ObjectId>)> {
            if let Some(known) = graph.as_ref().and_then(|g| {
                let commit = g.commit_by_id(id)?;
                let parents: Option<Vec<ObjectId>> = commit
                    .iter_parents()
                    .map(|p| p.ok().map(|p| g.id_at(p).to_owned()))
                    .collect();
                Some((
                    i64::try_from(commit.committer_timestamp()).unwrap_or(i64::MAX),
                    commit.root_tree_id().to_owned(),
                    parents?,
                ))
            }) {
                let (time, tree, parents) = known;
                let parents = parents
                    .into_iter()
                    .filter(|&p| self.repo.has_object(p))
                    .collect();
                return Ok((time, tree, parents));
            }
            let info = self.commit(id)?;
            let parents = info
                .parents
                .into_iter()
                .filter(|&p| self.repo.has_object(p))
                .collect();
            Ok((info.commit_time, info.tree, parents))
        };
        let mut trees = Trees::new(&self.repo);
        // Newest first; each queued commit read once.
        let mut queue: BinaryHeap<(i64, ObjectId)> = BinaryHeap::new();
        let mut read_commits: HashMap<ObjectId, (ObjectId, Vec<ObjectId>)> = HashMap::new();
        let (time, tree, parents) = read(tip)?;
        queue.push((time, tip));
        read_commits.insert(tip, (tree, parents));
        while let Some((time, id)) = queue.pop() {
            if time < cutoff {
                break;
            }
            if wanted.contains(&id) {
                found.insert(id);
                if found.len() == wanted.len() {
                    break;
                }
            }
            let (tree, parents) = read_commits[&id].clone();
            let followed = if parents.len() > 1 {
                let mut same = None;
                for &parent in &parents {
                    let parent_tree = read_commits
                        .get(&parent)
                        .map(|(t, _)| *t)
                        .map_or_else(|| read(parent).map(|r| r.1), Ok)?;
                    if trees.same_files(tree, parent_tree, paths)? {
                        same = Some(parent);
                        break;
                    }
                }
                match same {
                    Some(parent) => vec![parent],
                    None => parents,
                }
            } else {
                parents
            };
            for parent in followed {
                if let std::collections::hash_map::Entry::Vacant(slot) = read_commits.entry(parent)
                {
                    let (time, tree, its_parents) = read(parent)?;
                    queue.push((time, parent));
                    slot.insert((tree, its_parents));
                }
            }
        }
        Ok(found)
    }

    /// Every commit in the history of `tip` (itself included): one walk.
    pub fn ancestors(&self, tip: ObjectId) -> Result<HashSet<ObjectId>> {
        let walk = self
            .repo
            .rev_walk([tip])
            .all()
            .context(|| format!("cannot walk the history of {tip}"))?;
        let mut out = HashSet::new();
        for info in walk {
            let info = info.context(|| format!("cannot walk the history of {tip}"))?;
            out.insert(info.id);
        }
        Ok(out)
    }

    /// The commits `tips` reach and `hidden` do not (`git rev-list TIPS
    /// ^HIDDEN`): what `A..B` names. Both walks stop where they meet, so a
    /// range of a few commits reads a few commits, not the whole history
    /// below `A`.
    pub fn reachable_not_hidden(
        &self,
        tips: &[ObjectId],
        hidden: &[ObjectId],
    ) -> Result<HashSet<ObjectId>> {
        let what = || "cannot walk the commits of the range".to_owned();
        let walk = self
            .repo
            .rev_walk(tips.iter().copied())
            .with_hidden(hidden.iter().copied())
            .all()
            .context(what)?;
        let mut out = HashSet::new();
        for info in walk {
            out.insert(info.context(what)?.id);
        }
        Ok(out)
    }

    /// `tip`'s history as `git log --first-parent` sees it: its first-parent
    /// chain, and for every commit of the history the chain commit that
    /// brought it in (itself for a chain commit; the merge whose side branch
    /// held it otherwise).
    ///
    /// One walk of the history, then the chain oldest first: each chain
    /// commit claims what its other parents reach and no older chain commit
    /// claimed, so every commit is visited once.
    pub fn first_parent_view(&self, tip: ObjectId) -> Result<FirstParentView> {
        let walk = self
            .repo
            .rev_walk([tip])
            .all()
            .context(|| format!("cannot walk the history of {tip}"))?;
        let mut parents: HashMap<ObjectId, Vec<ObjectId>> = HashMap::new();
        for info in walk {
            let info = info.context(|| format!("cannot walk the history of {tip}"))?;
            parents.insert(info.id, info.parent_ids.to_vec());
        }
        let mut chain = vec![tip];
        while let Some(&first) = parents
            .get(chain.last().expect("the chain starts with the tip"))
            .and_then(|p| p.first())
        {
            if !parents.contains_key(&first) {
                break; // beyond a shallow clone's boundary
            }
            chain.push(first);
        }
        let mut brought_by: HashMap<ObjectId, ObjectId> = chain.iter().map(|&c| (c, c)).collect();
        let mut stack = Vec::new();
        for &merge in chain.iter().rev() {
            stack.extend(parents[&merge].iter().skip(1).copied());
            while let Some(commit) = stack.pop() {
                let Some(its_parents) = parents.get(&commit) else {
                    continue;
                };
                if brought_by.contains_key(&commit) {
                    continue;
                }
                brought_by.insert(commit, merge);
                stack.extend(its_parents.iter().copied());
            }
        }
        Ok(FirstParentView { chain, brought_by })
    }

    /// The commits every ref points to (branches, tags peeled, remotes,
    /// HEAD), notes refs excepted: what `gc` keeps the history of.
    pub fn ref_tips(&self) -> Result<Vec<ObjectId>> {
        let platform = self
            .repo
            .references()
            .context(|| "cannot list references".to_owned())?;
        let mut tips = Vec::new();
        for reference in platform
            .all()
            .context(|| "cannot list references".to_owned())?
        {
            let mut reference = match reference {
                Ok(r) => r,
                Err(e) => {
                    return Err(Error::Object {
                        id: "refs".into(),
                        reason: format!("cannot read a reference: {e}"),
                    })
                }
            };
            let name = reference.name().as_bstr().to_str_lossy().into_owned();
            if name.starts_with("refs/notes/") {
                continue;
            }
            // A ref to something other than a commit (a tag of a blob) keeps
            // no history.
            if let Ok(id) = reference.peel_to_commit().map(|c| c.id) {
                tips.push(id);
            }
        }
        if let Ok(head) = self.resolve_commit("HEAD") {
            tips.push(head);
        }
        tips.sort();
        tips.dedup();
        Ok(tips)
    }

    /// The blob an abbreviated id names, if this repository has exactly one.
    pub fn blob_by_prefix(&self, hex: &str) -> Option<ObjectId> {
        let id = self.repo.rev_parse_single(hex).ok()?.detach();
        let header = self.repo.find_header(id).ok()?;
        (header.kind() == gix::object::Kind::Blob).then_some(id)
    }

    /// The best common ancestor of two commits.
    pub fn merge_base(&self, a: ObjectId, b: ObjectId) -> Result<Option<ObjectId>> {
        let base = self
            .repo
            .merge_base(a, b)
            .context(|| format!("cannot compute the merge base of {a} and {b}"))?;
        Ok(base.map(|id| id.detach()))
    }

    /// Changed source files between two trees, with git's default rename
    /// detection (50% similarity, no copies). Symlinks and submodules are
    /// ignored; a side that is not a regular file counts as absent. Sorted by
    /// path, the order every later step calls "diff order".
    ///
    /// Rename detection reads blobs. When one is missing (a partial clone,
    /// a damaged one), a partial clone fetches what the diff needs from its
    /// promisor remote, in one fetch; otherwise the diff is made without
    /// rename detection (a rename then shows as a deletion and an addition,
    /// and a missing source file is reported when it is loaded).
    pub fn changed_files(&self, old: Option<ObjectId>, new: ObjectId) -> Result<Vec<FileChange>> {
        match self.tree_changes(old, new, true) {
            Ok(files) => Ok(files),
            Err(e) => {
                let plain = self.tree_changes(old, new, false)?;
                let missing = self.lacking(&plain, |_| true);
                if missing.is_empty() {
                    return Err(e);
                }
                if self.fetch_missing(&missing).is_ok() {
                    if let Ok(files) = self.tree_changes(old, new, true) {
                        return Ok(files);
                    }
                }
                Ok(plain)
            }
        }
    }

    /// Every file of a commit's tree (`path`, `blob`), in path order.
    pub fn tree_files(&self, commit: ObjectId) -> Result<Vec<FileSide>> {
        let mut files: Vec<FileSide> = self
            .tree_changes(None, commit, false)?
            .into_iter()
            .filter_map(|c| c.new)
            .collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(files)
    }

    /// The remote a partial clone fetches missing objects from, if this is one.
    pub fn promisor_remote(&self) -> Option<&str> {
        self.promisor.as_deref()
    }

    /// The blobs of `files` whose path is `wanted` that this clone lacks,
    /// each once, sorted.
    pub fn lacking(&self, files: &[FileChange], wanted: impl Fn(&str) -> bool) -> Vec<ObjectId> {
        let mut missing: Vec<ObjectId> = files
            .iter()
            .flat_map(FileChange::sides)
            .filter(|side| wanted(&side.path) && !self.repo.has_object(side.blob))
            .map(|side| side.blob)
            .collect();
        missing.sort();
        missing.dedup();
        missing
    }

    /// Fetches missing objects from the promisor remote of a partial clone in
    /// one `git fetch` (as git itself does when it needs them), so that gix
    /// can then read them.
    pub fn fetch_missing(&self, ids: &[ObjectId]) -> Result<()> {
        let fail = |reason: String| Error::Object {
            id: ids.first().map(ToString::to_string).unwrap_or_default(),
            reason,
        };
        let remote = self
            .promisor_remote()
            .ok_or_else(|| fail("missing from this clone, which is not a partial clone".into()))?;
        let list: String = ids.iter().map(|id| format!("{id}\n")).collect();
        self.run_git(
            "git fetch",
            &[
                "-c",
                "fetch.negotiationAlgorithm=noop",
                "fetch",
                remote,
                "--no-tags",
                "--no-write-fetch-head",
                "--recurse-submodules=no",
                "--filter=blob:none",
                "--quiet",
                "--stdin",
            ],
            list.as_bytes(),
        )
        .map_err(|e| fail(format!("fetching it from {remote}: {e}")))
    }

    /// Runs git (`what` names it in messages) on this repository with
    /// `input` on its stdin; the error is git's own message.
    fn run_git(&self, what: &str, args: &[&str], input: &[u8]) -> std::result::Result<(), String> {
        use std::io::Write;
        use std::process::{Command, Stdio};
        let mut child = Command::new("git")
            .arg("--git-dir")
            .arg(self.repo.git_dir())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run {what}: {e}"))?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin
                .write_all(input)
                .map_err(|e| format!("cannot run {what}: {e}"))?;
        }
        let out = child
            .wait_with_output()
            .map_err(|e| format!("cannot run {what}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{what} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }

    /// Packs the loose objects (`git repack -d`: loose objects only, into
    /// one new pack, then removes them), as a large notes run leaves one
    /// loose object per note and per notes tree.
    pub fn pack_loose_objects(&self) -> Result<()> {
        self.run_git("git repack", &["repack", "-d", "-q"], b"")
            .map_err(|reason| Error::Object {
                id: "loose objects".into(),
                reason,
            })
    }

    /// The blobs of `wanted` files that the commits' diffs against their
    /// first parents need and this clone lacks (no blob is read).
    pub fn missing_source_blobs(
        &self,
        commits: &[CommitInfo],
        wanted: impl Fn(&str) -> bool,
    ) -> Result<Vec<ObjectId>> {
        let mut files = Vec::new();
        for commit in commits {
            let parent = commit
                .parents
                .first()
                .copied()
                .filter(|p| self.repo.has_object(*p));
            files.extend(self.tree_changes(parent, commit.tree, false)?);
        }
        Ok(self.lacking(&files, wanted))
    }

    /// True when the object database has `id`.
    pub fn has(&self, id: ObjectId) -> bool {
        self.repo.has_object(id)
    }

    fn tree_changes(
        &self,
        old: Option<ObjectId>,
        new: ObjectId,
        renames: bool,
    ) -> Result<Vec<FileChange>> {
        let old_tree = match old {
            Some(id) => Some(self.find_tree(id)?),
            None => None,
        };
        let new_tree = self.find_tree(new)?;
        let options =
            gix::diff::Options::default().with_rewrites(renames.then(gix::diff::Rewrites::default));
        let changes = self
            .repo
            .diff_tree_to_tree(old_tree.as_ref(), &new_tree, options)
            .context(|| {
                format!(
                    "cannot diff tree {} against {new}",
                    old.map(|o| o.to_string())
                        .unwrap_or_else(|| "the empty tree".into())
                )
            })?;
        use gix::object::tree::diff::ChangeDetached as C;
        let side = |path: &gix::bstr::BStr, mode: gix::object::tree::EntryMode, id: ObjectId| {
            matches!(mode.kind(), EntryKind::Blob | EntryKind::BlobExecutable).then(|| FileSide {
                path: path.to_str_lossy().into_owned(),
                blob: id,
            })
        };
        let mut files: Vec<FileChange> = changes
            .into_iter()
            .filter_map(|change| {
                let file = match change {
                    C::Addition {
                        location,
                        entry_mode,
                        id,
                        ..
                    } => FileChange {
                        old: None,
                        new: side(location.as_ref(), entry_mode, id),
                    },
                    C::Deletion {
                        location,
                        entry_mode,
                        id,
                        ..
                    } => FileChange {
                        old: side(location.as_ref(), entry_mode, id),
                        new: None,
                    },
                    C::Modification {
                        location,
                        previous_entry_mode,
                        previous_id,
                        entry_mode,
                        id,
                    } => FileChange {
                        old: side(location.as_ref(), previous_entry_mode, previous_id),
                        new: side(location.as_ref(), entry_mode, id),
                    },
                    C::Rewrite {
                        source_location,
                        source_entry_mode,
                        source_id,
                        entry_mode,
                        id,
                        location,
                        copy,
                        ..
                    } => FileChange {
                        old: (!copy)
                            .then(|| side(source_location.as_ref(), source_entry_mode, source_id))
                            .flatten(),
                        new: side(location.as_ref(), entry_mode, id),
                    },
                };
                (file.old.is_some() || file.new.is_some()).then_some(file)
            })
            .collect();
        files.sort_by(|a, b| a.path().cmp(b.path()));
        Ok(files)
    }

    fn find_tree(&self, id: ObjectId) -> Result<gix::Tree<'_>> {
        let object = self.repo.find_object(id).map_err(|e| Error::Object {
            id: id.to_string(),
            reason: e.to_string(),
        })?;
        object.peel_to_tree().map_err(|e| Error::Object {
            id: id.to_string(),
            reason: e.to_string(),
        })
    }

    /// The size of a blob, without reading it.
    pub fn blob_size(&self, id: ObjectId) -> Result<u64> {
        let header = self.repo.find_header(id).map_err(|e| Error::Object {
            id: id.to_string(),
            reason: e.to_string(),
        })?;
        Ok(header.size())
    }

    /// The content of a blob.
    pub fn blob(&self, id: ObjectId) -> Result<Vec<u8>> {
        let blob = self.repo.find_blob(id).map_err(|e| Error::Object {
            id: id.to_string(),
            reason: e.to_string(),
        })?;
        Ok(blob.detach().data)
    }

    /// The blob at `path` in a commit's tree, if it is a regular file.
    pub fn blob_at(&self, commit: ObjectId, path: &str) -> Result<Option<ObjectId>> {
        let tree = self.find_tree(commit)?;
        let entry = tree
            .lookup_entry_by_path(path)
            .context(|| format!("cannot look up {path} in {commit}"))?;
        Ok(entry.and_then(|e| {
            matches!(e.mode().kind(), EntryKind::Blob | EntryKind::BlobExecutable)
                .then(|| e.object_id())
        }))
    }

    /// The blob staged for `path` in the index, if any.
    pub fn index_blob(&self, path: &str) -> Option<ObjectId> {
        let index = self.repo.index_or_empty().ok()?;
        index.entry_by_path(path.into()).map(|e| e.id)
    }
}

/// Formats seconds and an offset (seconds east of UTC) as RFC 3339, with
/// gix's date formatting (its strict ISO 8601 is RFC 3339). A time no
/// calendar can show falls back to the Unix epoch seconds.
/// What a revision that does not resolve means, in git's words rather than
/// the parser's (`delegate.traverse(NthAncestor(99999)) failed`).
fn describe_rev_error(parser: &str) -> String {
    if parser.contains("NthAncestor") || parser.contains("NthParent") {
        "the history is not that long (no such ancestor or parent)".to_owned()
    } else if parser.contains("couldn't parse revision") || parser.contains("not found") {
        "no branch, tag or commit of that name in this repository".to_owned()
    } else if parser.contains("ambiguous") || parser.contains("Ambiguous") {
        "the short id matches more than one object; give more of it".to_owned()
    } else {
        "not a revision this repository has".to_owned()
    }
}

/// Trees read once for a walk that compares files across commits: a
/// merge's trees are, next time, those of the merge whose parent it is,
/// and commits share most subtrees.
struct Trees<'r> {
    repo: &'r gix::Repository,
    read: HashMap<ObjectId, Vec<TreeEntry>>,
}

/// An entry of a tree, as [`Trees`] keeps it.
struct TreeEntry {
    name: Vec<u8>,
    id: ObjectId,
    is_tree: bool,
    /// A regular or executable file (what `Repo::blob_at` finds).
    is_file: bool,
}

impl<'r> Trees<'r> {
    fn new(repo: &'r gix::Repository) -> Trees<'r> {
        Trees {
            repo,
            read: HashMap::new(),
        }
    }

    /// The entry `name` of a tree (a subtree, or a file when `file`).
    fn entry(&mut self, tree: ObjectId, name: &[u8], file: bool) -> Result<Option<ObjectId>> {
        if !self.read.contains_key(&tree) {
            let bad = |e: &dyn std::fmt::Display| Error::Object {
                id: tree.to_string(),
                reason: e.to_string(),
            };
            let object = self.repo.find_tree(tree).map_err(|e| bad(&e))?;
            let decoded = object.decode().map_err(|e| bad(&e))?;
            let entries = decoded
                .entries
                .iter()
                .map(|e| {
                    let kind = e.mode.kind();
                    TreeEntry {
                        name: e.filename.to_vec(),
                        id: e.oid.to_owned(),
                        is_tree: kind == EntryKind::Tree,
                        is_file: matches!(kind, EntryKind::Blob | EntryKind::BlobExecutable),
                    }
                })
                .collect();
            self.read.insert(tree, entries);
        }
        Ok(self.read[&tree]
            .iter()
            .find(|e| e.name == name && if file { e.is_file } else { e.is_tree })
            .map(|e| e.id))
    }

    /// Whether every path holds the same file (or none) in two trees. A
    /// path is read down only while its directories differ.
    fn same_files(&mut self, a: ObjectId, b: ObjectId, paths: &[&str]) -> Result<bool> {
        for path in paths {
            let parts: Vec<&str> = path.split('/').collect();
            let (mut a, mut b) = (Some(a), Some(b));
            for (i, name) in parts.iter().enumerate() {
                let (x, y) = match (a, b) {
                    (Some(x), Some(y)) if x != y => (x, y),
                    _ => break,
                };
                let file = i + 1 == parts.len();
                a = self.entry(x, name.as_bytes(), file)?;
                b = self.entry(y, name.as_bytes(), file)?;
            }
            if a != b {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// Seconds since the epoch of a date written as git reads one: `2024-01-31`,
/// RFC 3339, `2 weeks ago`, `@1700000000`. `None` when it is none of those.
pub fn parse_date(text: &str) -> Option<i64> {
    gix::date::parse(text.trim(), Some(gix::date::Zoned::now()))
        .ok()
        .map(|time| time.seconds)
}

pub fn rfc3339(seconds: i64, offset: i32) -> String {
    gix::date::Time::new(seconds, offset).format_or_unix(gix::date::time::format::ISO8601_STRICT)
}

#[cfg(test)]
mod tests {
    use super::{rfc3339, Repo};

    #[test]
    fn handles_keep_no_delta_base_cache_when_the_config_says_none() {
        let dir = tempfile::tempdir().unwrap();
        gix::init(dir.path()).unwrap();
        let repo = Repo::discover(dir.path()).unwrap();
        assert!(
            repo.gix().objects.has_pack_cache(),
            "a small one by default"
        );
        assert!(repo.share().to_local().gix().objects.has_pack_cache());
        let config = dir.path().join(".git/config");
        let mut text = std::fs::read_to_string(&config).unwrap();
        text.push_str("[core]\n\tdeltaBaseCacheLimit = 0\n");
        std::fs::write(&config, text).unwrap();
        let repo = Repo::discover(dir.path()).unwrap();
        assert!(
            !repo.gix().objects.has_pack_cache(),
            "the user's size holds"
        );
        assert!(!repo.share().to_local().gix().objects.has_pack_cache());
    }

    /// Runs git in `dir`; returns its trimmed stdout.
    fn git(dir: &std::path::Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args([
                "-c",
                "user.name=T",
                "-c",
                "user.email=t@e",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    #[test]
    fn the_first_parent_view_credits_side_branches_to_their_merges() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q"]);
        let commit = |message: &str| {
            git(d, &["commit", "-q", "--allow-empty", "-m", message]);
            git(d, &["rev-parse", "HEAD"])
        };
        let a = commit("a");
        git(d, &["checkout", "-q", "-b", "side"]);
        let s1 = commit("s1");
        git(d, &["checkout", "-q", "-b", "inner"]);
        let i1 = commit("i1");
        git(d, &["checkout", "-q", "side"]);
        git(d, &["merge", "-q", "--no-ff", "-m", "merge inner", "inner"]);
        let side_merge = git(d, &["rev-parse", "HEAD"]);
        git(d, &["checkout", "-q", "main"]);
        let b = commit("b");
        git(d, &["merge", "-q", "--no-ff", "-m", "merge side", "side"]);
        let m = git(d, &["rev-parse", "HEAD"]);
        let c = commit("c");
        // A branch merged from main later: its commits are older than c's merge.
        git(d, &["checkout", "-q", "-b", "late", &b]);
        let l1 = commit("l1");
        git(d, &["checkout", "-q", "main"]);
        git(d, &["merge", "-q", "--no-ff", "-m", "merge late", "late"]);
        let m2 = git(d, &["rev-parse", "HEAD"]);

        let repo = Repo::discover(d).unwrap();
        let id = |hex: &str| gix::ObjectId::from_hex(hex.as_bytes()).unwrap();
        let view = repo.first_parent_view(id(&m2)).unwrap();
        assert_eq!(view.chain, [&m2, &c, &m, &b, &a].map(|h| id(h)));
        let by = |hex: &str| view.brought_by[&id(hex)];
        for chain in [&a, &b, &m, &c, &m2] {
            assert_eq!(by(chain), id(chain));
        }
        for side in [&s1, &i1, &side_merge] {
            assert_eq!(by(side), id(&m), "{side}");
        }
        assert_eq!(by(&l1), id(&m2));
        assert_eq!(view.brought_by.len(), 9);
    }

    #[test]
    fn formats_dates_with_offsets() {
        assert_eq!(rfc3339(0, 0), "1970-01-01T00:00:00+00:00");
        assert_eq!(rfc3339(1_700_000_000, 3600), "2023-11-14T23:13:20+01:00");
        assert_eq!(rfc3339(951_782_400, -18_000), "2000-02-28T19:00:00-05:00");
    }
}
