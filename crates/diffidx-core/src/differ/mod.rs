//! From trees, commits or patches to symbol deltas: the orchestration of
//! `git` → `lang` → `delta` for one change.
//!
//! A [`SymbolDiffer`] keeps a cache of parsed blobs, so a blob shared by
//! consecutive commits (the new side of one is the old side of the next) is
//! read and parsed once per process. [`parallel`] runs two of them over a
//! history, sharing one cache.

pub mod by_file;
mod cache;
pub mod parallel;

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gix::ObjectId;

use crate::codegraph::HeldFacts;
use crate::delta::{self, FileVersion, Labeled, ReplacedLines, Status, SymbolDelta};
use crate::error::{Error, Result};
use crate::git::hunks::{diff_lines, LineChange};
use crate::git::{patch, CommitInfo, FileChange, Repo};
use crate::lang::parts::DeclarationParts;
use crate::lang::{Base, Extractor, Language, Limits, ParseState};
use crate::note::{tool_name, Diagnostic, NoteDocument, Problem, NOTE_VERSION};
use crate::source::{normalize, Unreadable};
use crate::symbol::{FileSymbols, Symbol};

/// Knobs of a diff run.
#[derive(Debug, Clone)]
pub struct DiffOptions {
    /// Blobs larger than this are skipped and reported (default 1 MiB).
    pub max_file_size: usize,
    /// Per-file budgets: a file over one is skipped and reported.
    pub limits: Limits,
    /// Bytes of parsed source the blob cache may hold before evicting.
    pub cache_bytes: usize,
    /// The languages to look at; files of the others are ignored. Notes are
    /// always made with every language, so that every clone writes the same.
    pub languages: Vec<Language>,
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions {
            max_file_size: 1024 * 1024,
            limits: Limits::default(),
            cache_bytes: 96 * 1024 * 1024,
            languages: Language::all().collect(),
        }
    }
}

/// The symbol change between two trees, before it becomes a note.
#[derive(Clone, Default)]
pub struct TreeDiff {
    pub deltas: Vec<SymbolDelta>,
    pub diagnostics: Vec<Diagnostic>,
    /// The new side of every changed source file: all its symbols, unchanged
    /// ones included, so a store can keep the hierarchy around each change.
    pub files: Vec<FileSnapshot>,
    /// How many changed source files were compared (either side readable),
    /// so callers can tell "no source changed" from "only comments or
    /// formatting changed".
    pub source_files: usize,
}

/// One file version after a change.
#[derive(Clone)]
pub struct FileSnapshot {
    pub path: String,
    pub language: Language,
    /// Only the symbols: a batch of records must not keep syntax trees alive.
    pub symbols: Arc<FileSymbols>,
}

/// Everything one commit contributes: its metadata, its note, and the
/// files it touched.
#[derive(Clone)]
pub struct CommitRecord {
    pub info: CommitInfo,
    pub note: NoteDocument,
    pub files: Vec<FileSnapshot>,
}

/// A parsed blob: its normalized text (for line diffs), symbols, and the
/// parse state its successor version is reparsed from.
pub struct ParsedBlob {
    /// Shared with the entry's copies without a tree (see [`Side`]).
    pub text: Arc<String>,
    pub symbols: Arc<FileSymbols>,
    pub lossy: bool,
    state: Option<ParseState>,
    /// When this version was reparsed from an earlier one's tree: that
    /// version's blob and the line changes from its text to this one, which
    /// the labelling of the pair then need not compute again.
    lines_from: Option<(ObjectId, Arc<[LineChange]>)>,
    /// For a side held without its text: the lines its change from the
    /// old side replaced, which the labelling reads for rewritten calls.
    replaced_lines: Option<Arc<ReplacedLines>>,
}

type Loaded = std::result::Result<Arc<ParsedBlob>, Unreadable>;

/// One file change with both sides loaded, or the diagnostic of the side
/// that could not be read.
pub(crate) type LoadedChange = std::result::Result<(Option<Side>, Option<Side>), Diagnostic>;

/// The old tree (`None` = the empty tree) and the new one of a diff.
pub(crate) type TreePair = (Option<ObjectId>, ObjectId);

/// A file side ready for labelling: its text and symbols, never its
/// syntax tree. Sides wait to be labelled (a commit's every file, and the
/// diffing thread runs commits ahead), and a commit that touches hundreds
/// of files would otherwise keep every one of their trees alive beyond the
/// cache's budget (App-vNext/Polly has three of about 300 files).
pub(crate) struct Side {
    path: String,
    /// The blob it was read from (`None` for a text a patch made).
    id: Option<ObjectId>,
    blob: Arc<ParsedBlob>,
}

impl ParsedBlob {
    /// This blob without its parse state: itself when it has none, else a
    /// new entry sharing its text and symbols.
    fn without_tree(blob: &Arc<ParsedBlob>) -> Arc<ParsedBlob> {
        if blob.state.is_none() {
            return Arc::clone(blob);
        }
        Arc::new(ParsedBlob {
            text: Arc::clone(&blob.text),
            symbols: Arc::clone(&blob.symbols),
            lossy: blob.lossy,
            state: None,
            lines_from: blob.lines_from.clone(),
            replaced_lines: blob.replaced_lines.clone(),
        })
    }

    /// The line changes from the version `old` to this one, if this one
    /// was reparsed from it.
    fn line_changes_from(&self, old: Option<ObjectId>) -> Option<&[LineChange]> {
        let (base, changes) = self.lines_from.as_ref()?;
        (Some(*base) == old).then_some(&**changes)
    }
}

pub struct SymbolDiffer<'r> {
    repo: &'r Repo,
    extractor: Extractor,
    cache: Arc<cache::SharedCache>,
    options: DiffOptions,
    /// Blobs whose code-graph facts are wanted (the files of the commit the
    /// graph moves to after the run), and the facts of those parsed so far.
    facts_wanted: Option<Arc<HashSet<ObjectId>>>,
    facts_found: ParsedFacts,
    /// Per path, the version [`symbol_parts`](Self::symbol_parts) read
    /// last: the next version of that path is parsed from its tree.
    read_last: HashMap<String, ObjectId>,
    /// Counters for benchmarks and status output.
    pub stats: DiffStats,
}

/// What a run of [`parallel::diff_commits`] did, and the facts it kept.
#[derive(Default)]
pub struct Diffed {
    /// What the differs did, added up.
    pub stats: DiffStats,
    /// The code-graph facts of the wanted blobs the run parsed.
    pub facts: ParsedFacts,
}

impl Diffed {
    fn of(differ: &mut SymbolDiffer<'_>) -> Diffed {
        Diffed {
            stats: differ.stats(),
            facts: differ.take_facts(),
        }
    }

    fn and(mut self, other: Diffed) -> Diffed {
        self.stats = self.stats + other.stats;
        self.facts.extend(other.facts);
        self
    }
}

/// A scoped thread of a run's differ, named `name`; a thread that cannot be
/// started is an error.
fn spawn<'scope, T: Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    name: &str,
    work: impl FnOnce() -> T + Send + 'scope,
) -> Result<std::thread::ScopedJoinHandle<'scope, T>> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn_scoped(scope, work)
        .map_err(|e| Error::Thread {
            name: name.into(),
            reason: e.to_string(),
        })
}

/// What a scoped thread returned; its panic goes on in the caller.
fn join<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    match handle.join() {
        Ok(result) => result,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// Code-graph facts of blobs the differ parsed, by blob and language.
pub type ParsedFacts = HashMap<(ObjectId, Language), crate::codegraph::HeldFacts>;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiffStats {
    pub blobs: BlobCounts,
    /// Where the time went, so a regression shows which stage grew.
    pub time: DiffTimes,
}

/// Blob versions parsed, and those found parsed in the cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlobCounts {
    pub parsed: u64,
    /// Of those, parsed incrementally from the file's previous version.
    pub incremental: u64,
    /// Bytes of text parsed.
    pub bytes: u64,
    pub cache_hits: u64,
}

impl BlobCounts {
    fn zip(self, other: BlobCounts, op: fn(u64, u64) -> u64) -> BlobCounts {
        BlobCounts {
            parsed: op(self.parsed, other.parsed),
            incremental: op(self.incremental, other.incremental),
            bytes: op(self.bytes, other.bytes),
            cache_hits: op(self.cache_hits, other.cache_hits),
        }
    }
}

impl std::ops::Sub for DiffStats {
    type Output = DiffStats;

    /// What a differ did between two readings of its stats.
    fn sub(self, earlier: DiffStats) -> DiffStats {
        DiffStats {
            blobs: self.blobs.zip(earlier.blobs, u64::saturating_sub),
            time: self.time - earlier.time,
        }
    }
}

impl std::ops::Add for DiffStats {
    type Output = DiffStats;

    /// What two differs did together (times add up across threads).
    fn add(self, other: DiffStats) -> DiffStats {
        DiffStats {
            blobs: self.blobs.zip(other.blobs, u64::saturating_add),
            time: self.time + other.time,
        }
    }
}

/// Time spent per stage of diffing (parse and extract are the extractor's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiffTimes {
    /// Changed files between two trees (rename detection included).
    pub tree_diff: Duration,
    /// Reading blobs and normalizing their text.
    pub read: Duration,
    pub parse: Duration,
    pub extract: Duration,
    /// Hunks, labels, moves and lineage.
    pub label: Duration,
}

impl DiffTimes {
    fn zip(self, other: DiffTimes, op: fn(Duration, Duration) -> Duration) -> DiffTimes {
        DiffTimes {
            tree_diff: op(self.tree_diff, other.tree_diff),
            read: op(self.read, other.read),
            parse: op(self.parse, other.parse),
            extract: op(self.extract, other.extract),
            label: op(self.label, other.label),
        }
    }
}

impl std::ops::Sub for DiffTimes {
    type Output = DiffTimes;

    /// The time spent between two readings of the same differ's times.
    fn sub(self, earlier: DiffTimes) -> DiffTimes {
        self.zip(earlier, Duration::saturating_sub)
    }
}

impl std::ops::Add for DiffTimes {
    type Output = DiffTimes;

    fn add(self, other: DiffTimes) -> DiffTimes {
        self.zip(other, |a, b| a + b)
    }
}

impl<'r> SymbolDiffer<'r> {
    pub fn new(repo: &'r Repo, options: DiffOptions) -> Result<Self> {
        let cache = cache::SharedCache::new(options.cache_bytes);
        Self::with_cache(repo, options, cache)
    }

    /// A differ that shares `cache` with differs on other threads.
    fn with_cache(
        repo: &'r Repo,
        options: DiffOptions,
        cache: Arc<cache::SharedCache>,
    ) -> Result<Self> {
        Ok(SymbolDiffer {
            repo,
            extractor: Extractor::new()?.with_limits(options.limits),
            cache,
            options,
            facts_wanted: None,
            facts_found: ParsedFacts::new(),
            read_last: HashMap::new(),
            stats: DiffStats::default(),
        })
    }

    /// A differ of one run's threads: sharing `cache` if given, and keeping
    /// the facts of `facts_of`, if any ([`want_facts_of`](Self::want_facts_of)).
    fn for_run(
        repo: &'r Repo,
        options: DiffOptions,
        facts_of: &Option<Arc<HashSet<ObjectId>>>,
        cache: Option<&Arc<cache::SharedCache>>,
    ) -> Result<Self> {
        let mut differ = match cache {
            Some(cache) => SymbolDiffer::with_cache(repo, options, Arc::clone(cache))?,
            None => SymbolDiffer::new(repo, options)?,
        };
        if let Some(blobs) = facts_of {
            differ.want_facts_of(Arc::clone(blobs));
        }
        Ok(differ)
    }

    /// Makes the parse of any of `blobs` give its code-graph facts as well,
    /// kept for [`take_facts`](Self::take_facts): the graph built after a
    /// run then reads them instead of parsing those blobs again.
    pub fn want_facts_of(&mut self, blobs: Arc<HashSet<ObjectId>>) {
        self.facts_wanted = Some(blobs);
    }

    /// The facts of the wanted blobs parsed so far (see
    /// [`want_facts_of`](Self::want_facts_of)).
    pub fn take_facts(&mut self) -> ParsedFacts {
        std::mem::take(&mut self.facts_found)
    }

    /// The repository this differ reads.
    pub fn repo(&self) -> &'r Repo {
        self.repo
    }

    /// What this differ did so far, with the extractor's parse and extract
    /// times.
    pub fn stats(&self) -> DiffStats {
        let (parse, extract) = self.extractor.times();
        let mut stats = self.stats;
        stats.time.parse = parse;
        stats.time.extract = extract;
        stats
    }

    /// The note document of one commit, against its first parent. A merge
    /// keeps only the deltas that differ from every parent (its own conflict
    /// resolutions); a root commit is diffed against the empty tree.
    pub fn commit_note(&mut self, commit: &CommitInfo) -> Result<NoteDocument> {
        Ok(self.commit_record(commit)?.note)
    }

    /// [`SymbolDiffer::commit_note`] with the commit's metadata and touched files.
    pub fn commit_record(&mut self, commit: &CommitInfo) -> Result<CommitRecord> {
        let mut diffs = Vec::with_capacity(commit.parents.len().max(1));
        for (old, new) in self.tree_pairs(commit)? {
            diffs.push(self.diff_trees(old, new)?);
        }
        Ok(record_of(commit, diffs))
    }

    /// The tree pairs a commit's record is made of, in order: against the
    /// first parent (or the empty tree), then against each other parent.
    pub(crate) fn tree_pairs(&self, commit: &CommitInfo) -> Result<Vec<TreePair>> {
        let mut pairs = Vec::with_capacity(commit.parents.len().max(1));
        let first = self.repo.parent_commit(commit, 0)?;
        pairs.push((first.map(|p| p.tree), commit.tree));
        for index in 1..commit.parents.len() {
            if let Some(other) = self.repo.parent_commit(commit, index)? {
                pairs.push((Some(other.tree), commit.tree));
            }
        }
        Ok(pairs)
    }

    /// The files a (validated) note says `commit` touched, as of `commit`:
    /// what a record built from a note alone needs for its hierarchy.
    pub fn snapshot_files(
        &mut self,
        commit: &CommitInfo,
        note: &NoteDocument,
    ) -> Result<Vec<FileSnapshot>> {
        let mut paths: Vec<&str> = note
            .deltas
            .iter()
            .filter(|d| d.status != Status::Deleted)
            .map(|d| d.path.as_str())
            .collect();
        paths.sort_unstable();
        paths.dedup();
        let mut files = Vec::with_capacity(paths.len());
        for path in paths {
            let (Some(language), Some(blob)) = (
                Language::from_path(path),
                self.repo.blob_at(commit.id, path)?,
            ) else {
                continue;
            };
            if let Ok(parsed) = self.load(blob, path, None)? {
                files.push(FileSnapshot {
                    path: path.to_owned(),
                    language,
                    symbols: Arc::clone(&parsed.symbols),
                });
            }
        }
        Ok(files)
    }

    /// In a partial clone, fetches in one go the source blobs that diffing
    /// `commits` will need, so a long run makes a few fetches, not one per
    /// commit. Elsewhere it does nothing. What it cannot fetch is fetched
    /// (or reported) per commit later.
    pub fn prefetch(&mut self, commits: &[CommitInfo]) -> Result<()> {
        if self.repo.promisor_remote().is_none() {
            return Ok(());
        }
        let languages = &self.options.languages;
        let missing = self.repo.missing_source_blobs(commits, |path| {
            Language::from_path(path).is_some_and(|l| languages.contains(&l))
        })?;
        if !missing.is_empty() {
            let _ = self.repo.fetch_missing(&missing);
        }
        Ok(())
    }

    /// The net symbol change between two trees (`None` = the empty tree).
    pub fn diff_trees(&mut self, old: Option<ObjectId>, new: ObjectId) -> Result<TreeDiff> {
        let files = self.changed_files(old, new)?;
        let mut loaded = Vec::with_capacity(files.len());
        for change in &files {
            loaded.push(self.load_change(change)?);
        }
        Ok(self.label(loaded))
    }

    /// The source files that differ between two trees, each language change
    /// split in two.
    pub(crate) fn changed_files(
        &mut self,
        old: Option<ObjectId>,
        new: ObjectId,
    ) -> Result<Vec<FileChange>> {
        let started = Instant::now();
        let files = self.repo.changed_files(old, new)?;
        let files = split_language_changes(files, &self.options.languages);
        self.stats.time.tree_diff += started.elapsed();
        // A partial clone fetches the source blobs it lacks in one go; what
        // could not be fetched is reported per file when loaded.
        if self.repo.promisor_remote().is_some() {
            let missing = self.repo.lacking(&files, |_| true);
            if !missing.is_empty() {
                let _ = self.repo.fetch_missing(&missing);
            }
        }
        Ok(files)
    }

    /// Both sides of one file change, parsed (the new side incrementally from
    /// the old when its tree is still kept).
    pub(crate) fn load_change(&mut self, change: &FileChange) -> Result<LoadedChange> {
        let old = match self.load_side(change.old.as_ref(), None)? {
            Ok(old) => old,
            Err(diagnostic) => return Ok(Err(diagnostic)),
        };
        let base = change.old.as_ref().zip(old.as_ref());
        let new = self.load_side(change.new.as_ref(), base)?;
        Ok(new.map(|new| (old, new)))
    }

    /// Lets the cache drop a file version nothing will ask for again.
    pub(crate) fn forget(&self, side: &crate::git::FileSide) {
        if let Some(language) = Language::from_path(&side.path) {
            self.cache.forget(&(side.blob, language));
        }
    }

    /// Labels the loaded changes of one tree diff, in diff order.
    pub(crate) fn label(&mut self, loaded: Vec<LoadedChange>) -> TreeDiff {
        let started = Instant::now();
        let mut pairs = Vec::with_capacity(loaded.len());
        let mut diagnostics = Vec::new();
        for change in loaded {
            match change {
                Ok(pair) => pairs.push(pair),
                Err(diagnostic) => diagnostics.push(diagnostic),
            }
        }
        let labeled = label_all(pairs, diagnostics);
        self.stats.time.label += started.elapsed();
        labeled
    }

    /// The symbol change a unified diff makes to `base` (a commit): pre-images
    /// from `base` (or, if the patch does not apply there, the index), post-images
    /// rebuilt from the hunks.
    pub fn diff_patch(&mut self, base: ObjectId, patch_text: &str) -> Result<TreeDiff> {
        let files = patch::parse(patch_text)?;
        let mut pairs = Vec::new();
        let mut diagnostics = Vec::new();
        for file in files {
            // Files of no language looked at are not read, so a patch that
            // also touches `Cargo.lock` or a README need not apply to them.
            let wanted = |path: &Option<String>| {
                path.as_deref()
                    .and_then(Language::from_path)
                    .is_some_and(|l| self.options.languages.contains(&l))
            };
            if !wanted(&file.old_path) && !wanted(&file.new_path) {
                continue;
            }
            let pre_path = file.old_path.clone();
            let pre = match &pre_path {
                Some(path) => Some(self.pre_image(base, path, &file)?),
                None => None,
            };
            let pre_text = pre.as_ref().map(|(text, _)| text.as_str()).unwrap_or("");
            let post_text = file
                .apply(pre_text)
                .map_err(|reason| Error::PatchDoesNotApply {
                    path: file
                        .old_path
                        .clone()
                        .or(file.new_path.clone())
                        .unwrap_or_default(),
                    base: base.to_string(),
                    reason,
                })?;
            let old_lang = pre_path.as_deref().and_then(Language::from_path);
            let new_lang = file.new_path.as_deref().and_then(Language::from_path);
            let mut parse = |path: &str,
                             lang: Language,
                             text: String|
             -> std::result::Result<Side, Diagnostic> {
                let source = normalize(text.as_bytes(), self.options.max_file_size)
                    .map_err(|why| unreadable(path, &why))?;
                let extracted = self.extractor.extract_incremental(lang, &source.text, None);
                if let Some(why) = extracted.over_limit {
                    return Err(unreadable(path, &Unreadable::OverLimit(why)));
                }
                let symbols = extracted.symbols;
                Ok(Side {
                    path: path.to_owned(),
                    id: None,
                    blob: Arc::new(ParsedBlob {
                        text: Arc::new(source.text),
                        symbols: Arc::new(symbols),
                        lossy: source.lossy,
                        state: None,
                        lines_from: None,
                        replaced_lines: None,
                    }),
                })
            };
            let old = match (pre_path.as_deref(), old_lang, pre) {
                (Some(path), Some(lang), Some((text, _))) => Some(parse(path, lang, text)),
                _ => None,
            };
            let new = match (file.new_path.as_deref(), new_lang) {
                (Some(path), Some(lang)) => Some(parse(path, lang, post_text)),
                _ => None,
            };
            match (old.transpose(), new.transpose()) {
                (Ok(old), Ok(new)) => {
                    if old_lang.is_some() && new_lang.is_some() && old_lang != new_lang {
                        pairs.push((old, None));
                        pairs.push((None, new));
                    } else if old.is_some() || new.is_some() {
                        pairs.push((old, new));
                    }
                }
                (Err(d), _) | (_, Err(d)) => diagnostics.push(d),
            }
        }
        pairs.sort_by(|a, b| pair_path(a).cmp(pair_path(b)));
        Ok(label_all(pairs, diagnostics))
    }

    /// The source lines of the symbol `(qualname, kind, sig)` in `path` as of
    /// `commit`, if it exists there.
    pub fn symbol_source(
        &mut self,
        commit: ObjectId,
        path: &str,
        qualname: &str,
        kind: crate::symbol::SymbolKind,
        sig: &str,
    ) -> Result<Option<String>> {
        let Some((_, parsed)) = self.read_version(commit, path, false)? else {
            return Ok(None);
        };
        let found = parsed
            .symbols
            .symbols
            .iter()
            .find(|s| s.qualname == qualname && s.kind == kind && s.sig == sig);
        Ok(found.map(|s| {
            parsed
                .text
                .split_inclusive('\n')
                .skip(s.start_line as usize - 1)
                .take((s.end_line - s.start_line + 1) as usize)
                .collect()
        }))
    }

    /// The version of the source file `path` at `commit`, read and parsed
    /// (`None`: no such file, or it cannot be read). With `after_last`, it
    /// is parsed from the tree of the version [`symbol_parts`](Self::symbol_parts)
    /// read last of this path, else of a path of the same file name (a
    /// move); that version's tree is copied, not taken, so it stays cached.
    fn read_version(
        &mut self,
        commit: ObjectId,
        path: &str,
        after_last: bool,
    ) -> Result<Option<(Language, Arc<ParsedBlob>)>> {
        let Some(blob) = self.repo.blob_at(commit, path)? else {
            return Ok(None);
        };
        let Some(language) = Language::from_path(path) else {
            return Ok(None);
        };
        let earlier = if after_last {
            let file_name = |p: &str| p.rsplit('/').next().unwrap_or(p).to_owned();
            let earlier = self
                .read_last
                .get(path)
                .map(|&b| (path.to_owned(), b))
                .or_else(|| {
                    self.read_last
                        .iter()
                        .find(|(p, _)| file_name(p) == file_name(path))
                        .map(|(p, &b)| (p.clone(), b))
                });
            self.read_last.insert(path.to_owned(), blob);
            // The same blob is in the cache already, whatever its path.
            earlier.filter(|(_, b)| *b != blob)
        } else {
            None
        };
        // Held while this version is parsed, so its tree is copied, not taken.
        let base = match earlier {
            Some((earlier_path, earlier)) => {
                self.load(earlier, &earlier_path, None)?.ok().map(|loaded| {
                    let file = crate::git::FileSide {
                        path: earlier_path.clone(),
                        blob: earlier,
                    };
                    let side = Side {
                        path: earlier_path,
                        id: Some(earlier),
                        blob: loaded,
                    };
                    (file, side)
                })
            }
            None => None,
        };
        let loaded = self.load(blob, path, base.as_ref().map(|(file, side)| (file, side)))?;
        Ok(loaded.ok().map(|parsed| (language, parsed)))
    }

    /// The symbol that `find` picks among those of `path` at `commit`, and
    /// the parts of its declaration (`None`: no such file or symbol there;
    /// no parts: its declaration was not found in the tree).
    ///
    /// A history asks about many versions of a few files: each version is
    /// parsed incrementally from the one read before it (`read_version`).
    pub fn symbol_parts(
        &mut self,
        commit: ObjectId,
        path: &str,
        find: impl Fn(&Symbol) -> bool,
    ) -> Result<Option<(Symbol, Option<DeclarationParts>)>> {
        let Some((language, parsed)) = self.read_version(commit, path, true)? else {
            return Ok(None);
        };
        let Some(symbol) = parsed.symbols.symbols.iter().find(|s| find(s)) else {
            return Ok(None);
        };
        let parts = match &parsed.state {
            Some(state) => self
                .extractor
                .declaration_parts(language, state, &parsed.text, symbol),
            // The tree went to a later version's reparse: parse again.
            None => {
                let extracted = self
                    .extractor
                    .extract_incremental(language, &parsed.text, None);
                extracted.state.and_then(|state| {
                    self.extractor
                        .declaration_parts(language, &state, &parsed.text, symbol)
                })
            }
        };
        Ok(Some((symbol.clone(), parts)))
    }

    /// The code-graph facts of a blob at `path` (`None` when it is no
    /// source file or cannot be read: binary, too large, missing). A blob
    /// the differ parsed already is not parsed again: its tree is reused.
    pub fn file_facts(
        &mut self,
        blob: ObjectId,
        path: &str,
    ) -> Result<Option<crate::codegraph::FileFacts>> {
        let Some(language) = Language::from_path(path) else {
            return Ok(None);
        };
        if !self.options.languages.contains(&language) {
            return Ok(None);
        }
        // Parsed already this run: its tree is reused, not parsed again.
        match self.cache.get(&(blob, language)) {
            Some(Ok(parsed)) => {
                let base = parsed.state.as_ref().map(|s| (s, parsed.text.as_str()));
                return Ok(self
                    .extractor
                    .extract_facts(language, &parsed.text, base)
                    .facts);
            }
            Some(Err(_)) => return Ok(None),
            None => {}
        }
        // Otherwise one parse gives both (the graph's files need no cache
        // entry: nothing diffs them against a successor in this run).
        let size = match self.repo.blob_size(blob) {
            Ok(size) => size,
            Err(_) => return Ok(None),
        };
        if size > self.options.max_file_size as u64 {
            return Ok(None);
        }
        let bytes = self.repo.blob(blob)?;
        let Ok(source) = normalize(&bytes, self.options.max_file_size) else {
            return Ok(None);
        };
        self.stats.blobs.parsed += 1;
        self.stats.blobs.bytes += source.text.len() as u64;
        Ok(self
            .extractor
            .extract_facts(language, &source.text, None)
            .facts)
    }

    /// The text a patch expects for `path`: the blob its `index` line names,
    /// else the file in `base`, else in the index.
    fn pre_image(
        &mut self,
        base: ObjectId,
        path: &str,
        file: &patch::FilePatch,
    ) -> Result<(String, ObjectId)> {
        let mut tried = Vec::new();
        let named = file
            .old_blob
            .as_deref()
            .and_then(|hex| self.repo.blob_by_prefix(hex));
        let candidates = [
            named,
            self.repo.blob_at(base, path)?,
            self.repo.index_blob(path),
        ];
        for blob in candidates.into_iter().flatten() {
            let bytes = self.repo.blob(blob)?;
            let text = normalize(&bytes, usize::MAX)
                .map(|s| s.text)
                .unwrap_or_default();
            match file.apply(&text) {
                Ok(_) => return Ok((text, blob)),
                Err(reason) => tried.push(reason),
            }
        }
        Err(Error::PatchDoesNotApply {
            path: path.to_owned(),
            base: base.to_string(),
            reason: tried
                .pop()
                .unwrap_or_else(|| "the file is neither in that commit nor in the index".into()),
        })
    }

    /// Loads one side of a file change; an unreadable side becomes a diagnostic.
    /// With `base` (the file's previous version, loaded), a new version is
    /// reparsed from the cache's tree of it, if the cache kept one.
    fn load_side(
        &mut self,
        side: Option<&crate::git::FileSide>,
        base: Option<(&crate::git::FileSide, &Side)>,
    ) -> Result<std::result::Result<Option<Side>, Diagnostic>> {
        let Some(side) = side else {
            return Ok(Ok(None));
        };
        Ok(match self.load(side.blob, &side.path, base)? {
            // Only the cache holds the tree, so the next parse may take it.
            Ok(parsed) => Ok(Some(Side {
                path: side.path.clone(),
                id: Some(side.blob),
                blob: ParsedBlob::without_tree(&parsed),
            })),
            Err(why) => Err(unreadable(&side.path, &why)),
        })
    }

    /// Reads and parses a blob once; later calls hit the cache. With `base`
    /// (the file's previous version) the parse is incremental, from the
    /// tree the cache keeps of it: taken from the cache and edited in
    /// place when nothing else holds it (the cache would drop it for this
    /// version's anyway), else copied.
    fn load(
        &mut self,
        blob: ObjectId,
        path: &str,
        base: Option<(&crate::git::FileSide, &Side)>,
    ) -> Result<Loaded> {
        let language = Language::from_path(path).expect("only source files are loaded");
        let cache = Arc::clone(&self.cache);
        let claim = match cache.claim((blob, language)) {
            cache::Claim::Hit(hit) => {
                self.stats.blobs.cache_hits += 1;
                return Ok(hit);
            }
            cache::Claim::Load(claim) => claim,
        };
        let started = Instant::now();
        // The header lookup finds a missing blob; only then is it looked
        // into (and, in a partial clone, fetched). Not cached: a later
        // fetch may still bring it.
        let size = match self.repo.blob_size(blob) {
            Ok(size) => size,
            Err(e) if self.repo.has(blob) => return Err(e),
            Err(_) => match self.repo.fetch_missing(&[blob]) {
                Ok(()) if self.repo.has(blob) => self.repo.blob_size(blob)?,
                fetched => {
                    let reason = match fetched {
                        Ok(()) => "the promisor remote did not send it".to_owned(),
                        Err(crate::Error::Object { reason, .. }) => reason,
                        Err(e) => e.to_string(),
                    };
                    return Ok(Err(Unreadable::Missing {
                        id: blob.to_string(),
                        reason,
                    }));
                }
            },
        };
        let loaded = if size > self.options.max_file_size as u64 {
            Err(Unreadable::TooLarge {
                size: size as usize,
                limit: self.options.max_file_size,
            })
        } else {
            let bytes = self.repo.blob(blob)?;
            let normalized = normalize(&bytes, self.options.max_file_size);
            self.stats.time.read += started.elapsed();
            match normalized {
                Ok(source) => {
                    self.stats.blobs.parsed += 1;
                    self.stats.blobs.bytes += source.text.len() as u64;
                    let base_blob = base.map(|(side, _)| side.blob);
                    // A tree of another grammar is no base (a renamed extension).
                    let tree = base
                        .filter(|(side, _)| Language::from_path(&side.path) == Some(language))
                        .and_then(|(side, loaded)| {
                            let tree = self.cache.take_tree((side.blob, language), &side.path)?;
                            Some((tree, loaded.blob.text.as_str()))
                        });
                    self.stats.blobs.incremental += u64::from(tree.is_some());
                    // A file of the graph's commit: one walk gives its
                    // symbols and its facts.
                    let wanted = self
                        .facts_wanted
                        .as_ref()
                        .is_some_and(|wanted| wanted.contains(&blob));
                    // An entry another thread holds too, while its tree is copied.
                    let shared;
                    let base = match tree {
                        Some((cache::TakenTree::Owned(state), text)) => {
                            Some((Base::Owned(state), text))
                        }
                        Some((cache::TakenTree::Shared(entry), text)) => {
                            shared = entry;
                            shared
                                .state
                                .as_ref()
                                .map(|state| (Base::Shared(state), text))
                        }
                        None => None,
                    };
                    let mut extracted =
                        self.extractor
                            .extract_from(language, &source.text, base, wanted);
                    if let Some(held) = extracted.facts.take().as_ref().and_then(HeldFacts::of) {
                        self.facts_found.insert((blob, language), held);
                    }
                    match extracted.over_limit {
                        Some(why) => Err(Unreadable::OverLimit(why)),
                        None => Ok(Arc::new(ParsedBlob {
                            text: Arc::new(source.text),
                            symbols: Arc::new(extracted.symbols),
                            lossy: source.lossy,
                            state: extracted.state,
                            lines_from: base_blob
                                .zip(extracted.line_changes)
                                .map(|(base, changes)| (base, changes.into())),
                            replaced_lines: None,
                        })),
                    }
                }
                Err(why) => Err(why),
            }
        };
        claim.keep(loaded.clone(), path);
        Ok(loaded)
    }
}

/// A commit's record from its tree diffs, in [`SymbolDiffer::tree_pairs`]
/// order: the first is against the first parent; a merge keeps only the
/// deltas that each other diff has too (its own conflict resolutions).
fn record_of(commit: &CommitInfo, diffs: Vec<TreeDiff>) -> CommitRecord {
    let merge = diffs.len() > 1;
    let mut diffs = diffs.into_iter();
    let mut result = diffs.next().unwrap_or_default();
    for against_other in diffs {
        let changed: HashSet<&str> = against_other.deltas.iter().map(|d| d.id.as_str()).collect();
        result.deltas.retain(|d| changed.contains(d.id.as_str()));
        let paths: HashSet<&str> = result.deltas.iter().map(|d| d.path.as_str()).collect();
        result
            .diagnostics
            .retain(|d| paths.contains(d.path.as_str()));
    }
    if merge {
        drop_lineage_to_dropped_deletions(&mut result.deltas);
    }
    let note = NoteDocument {
        v: NOTE_VERSION,
        commit: Some(commit.id.to_string()),
        parent: commit.parents.first().map(|p| p.to_string()),
        tool: tool_name(),
        deltas: result.deltas,
        diagnostics: result.diagnostics,
    };
    CommitRecord {
        info: commit.clone(),
        note,
        files: result.files,
    }
}

/// Lineage names a DELETED delta of the same note: an ADDED delta a merge
/// keeps loses its link to a deletion the merge did not keep.
fn drop_lineage_to_dropped_deletions(deltas: &mut [SymbolDelta]) {
    let deleted: HashSet<String> = deltas
        .iter()
        .filter(|d| d.status == Status::Deleted)
        .map(|d| d.id.clone())
        .collect();
    for delta in deltas {
        if delta
            .from
            .as_ref()
            .is_some_and(|f| !deleted.contains(&f.id))
        {
            delta.from = None;
        }
    }
}

fn version(side: &Option<Side>) -> Option<FileVersion<'_>> {
    side.as_ref().map(|s| FileVersion {
        path: s.path.as_str(),
        symbols: &s.blob.symbols,
    })
}

fn pair_path(pair: &(Option<Side>, Option<Side>)) -> &str {
    pair.1
        .as_ref()
        .or(pair.0.as_ref())
        .map(|s| s.path.as_str())
        .unwrap_or("")
}

fn unreadable(path: &str, why: &Unreadable) -> Diagnostic {
    Diagnostic {
        path: path.to_owned(),
        problem: match why {
            Unreadable::Binary => Problem::Binary,
            Unreadable::TooLarge { .. } => Problem::TooLarge,
            Unreadable::Missing { .. } => Problem::Missing,
            Unreadable::OverLimit(crate::lang::OverLimit::ParseSteps { .. }) => {
                Problem::ParseBudget
            }
            Unreadable::OverLimit(crate::lang::OverLimit::CrowdedLine { .. }) => Problem::Minified,
        },
        detail: Some(why.to_string()),
    }
}

/// Keeps source sides only and splits a change of language (x.cs → x.rs)
/// into a deletion and an addition.
fn split_language_changes(files: Vec<FileChange>, languages: &[Language]) -> Vec<FileChange> {
    let wanted = |s: &crate::git::FileSide| {
        Language::from_path(&s.path).is_some_and(|l| languages.contains(&l))
    };
    let mut out = Vec::with_capacity(files.len());
    for change in files {
        let old = change.old.filter(wanted);
        let new = change.new.filter(wanted);
        match (old, new) {
            (None, None) => {}
            (Some(o), Some(n)) if Language::from_path(&o.path) != Language::from_path(&n.path) => {
                out.push(FileChange {
                    old: Some(o),
                    new: None,
                });
                out.push(FileChange {
                    old: None,
                    new: Some(n),
                });
            }
            (old, new) => out.push(FileChange { old, new }),
        }
    }
    out
}

/// Labels every file pair (in diff order), matches cross-file moves and keeps
/// what is not UNCHANGED, sorted for the note.
fn label_all(
    pairs: Vec<(Option<Side>, Option<Side>)>,
    mut diagnostics: Vec<Diagnostic>,
) -> TreeDiff {
    let mut hunks: Vec<Cow<'_, [LineChange]>> = Vec::with_capacity(pairs.len());
    for (old, new) in &pairs {
        hunks.push(match (old, new) {
            (Some(o), Some(n)) if o.path == n.path => match n.blob.line_changes_from(o.id) {
                Some(reparsed) => Cow::Borrowed(reparsed),
                None => Cow::Owned(diff_lines(&o.blob.text, &n.blob.text)),
            },
            _ => Cow::Borrowed(&[]),
        });
        if let Some(n) = new {
            let symbols = &n.blob.symbols;
            let problems = [
                (symbols.has_parse_errors, Problem::ParseErrors),
                (symbols.too_deep, Problem::TooDeep),
                (symbols.name_too_long, Problem::NameTooLong),
            ];
            for (_, problem) in problems.into_iter().filter(|(found, _)| *found) {
                diagnostics.push(Diagnostic {
                    path: n.path.clone(),
                    problem,
                    detail: None,
                });
            }
            if n.blob.lossy {
                diagnostics.push(Diagnostic {
                    path: n.path.clone(),
                    problem: Problem::InvalidUtf8,
                    detail: None,
                });
            }
        }
    }
    let mut labeled: Vec<Labeled<'_>> = Vec::new();
    for ((old, new), changes) in pairs.iter().zip(&hunks) {
        labeled.extend(delta::label_file(version(old), version(new), changes));
    }
    delta::match_moves(&mut labeled);
    // Calls rewritten from a deleted name to an added one: lineage
    // evidence, read from the lines the hunks replaced (kept by a side
    // held without its text, else read from the texts, lazily).
    let texts = pairs
        .iter()
        .zip(&hunks)
        .filter_map(|((old, new), changes)| match (old, new) {
            (Some(o), Some(n)) if o.path == n.path => {
                let replaced: Cow<'_, ReplacedLines> = match &n.blob.replaced_lines {
                    Some(kept) => Cow::Borrowed(kept),
                    None => Cow::Owned(ReplacedLines::of(&o.blob.text, &n.blob.text, changes)),
                };
                Some((n.path.as_str(), replaced))
            }
            _ => None,
        });
    let rewritten = delta::RewrittenCalls::find(&labeled, texts);
    let deltas = delta::to_deltas_with(&labeled, &rewritten);
    diagnostics.sort_by(|a, b| (&a.path, a.problem as u8).cmp(&(&b.path, b.problem as u8)));
    diagnostics.dedup();
    let files = pairs
        .iter()
        .filter_map(|(_, new)| new.as_ref())
        .filter_map(|side| {
            Some(FileSnapshot {
                path: side.path.clone(),
                language: Language::from_path(&side.path)?,
                symbols: Arc::clone(&side.blob.symbols),
            })
        })
        .collect();
    TreeDiff {
        deltas,
        diagnostics,
        files,
        source_files: pairs.len(),
    }
}
