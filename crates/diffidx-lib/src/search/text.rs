//! The lower tier: BM25 (tantivy) over each symbol's name parts, signature,
//! and the words of its code and comments.
//!
//! The index lives in `.git/diffidx/search/`, one document per symbol,
//! keyed by id and by path so that an update replaces exactly the documents
//! of the files it touched. Every commit carries a stamp of the store state
//! it was made from (the payload of tantivy's commit, written atomically
//! with it): an index whose stamp is not the store's is stale, or torn by a
//! killed run, and is rebuilt, never served.

use std::path::{Path, PathBuf};

use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, Schema, Value, STORED, STRING, TEXT};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use super::parts;

/// The fault point between writing documents and committing them.
pub const SEARCH_UNCOMMITTED: &str = "search-uncommitted";

/// Memory for the writer's buffer; tantivy flushes a segment when it fills.
const WRITER_MEMORY: usize = 50_000_000;

/// How much a query word found in each field counts: alike, since heavier
/// names ranked worse on real histories (`cargo bench --bench search`).
const BOOST_NAMES: f32 = 1.0;
const BOOST_SIG: f32 = 1.0;
const BOOST_WORDS: f32 = 1.0;

#[derive(Debug, thiserror::Error)]
#[error("the search index {} {action}: {source}", path.display())]
pub struct TextIndexError {
    path: PathBuf,
    action: &'static str,
    #[source]
    source: tantivy::TantivyError,
}

/// One symbol's document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextDoc {
    pub id: String,
    pub path: String,
    /// The parts of its qualified name.
    pub names: String,
    pub sig: String,
    /// The words of its code and comments, as written.
    pub words: String,
}

#[derive(Clone, Copy)]
struct Fields {
    id: Field,
    path: Field,
    names: Field,
    sig: Field,
    words: Field,
}

fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let fields = Fields {
        id: builder.add_text_field("id", STRING | STORED),
        path: builder.add_text_field("path", STRING),
        names: builder.add_text_field("names", TEXT),
        sig: builder.add_text_field("sig", TEXT),
        words: builder.add_text_field("words", TEXT),
    };
    (builder.build(), fields)
}

/// The search index of one repository.
pub struct TextIndex {
    path: PathBuf,
    index: Index,
    fields: Fields,
}

impl TextIndex {
    /// Opens the index at `path`; `None` when there is none, or when what
    /// is there cannot be read (torn or damaged).
    pub fn open(path: &Path) -> Option<TextIndex> {
        let index = Index::open_in_dir(path).ok()?;
        let (schema, fields) = schema();
        if index.schema() != schema {
            return None;
        }
        Some(TextIndex {
            path: path.to_owned(),
            index,
            fields,
        })
    }

    /// A new empty index at `path`, replacing whatever was there.
    pub fn create(path: &Path) -> Result<TextIndex, TextIndexError> {
        let failed = |action, source| TextIndexError {
            path: path.to_owned(),
            action,
            source,
        };
        let _ = std::fs::remove_dir_all(path);
        std::fs::create_dir_all(path)
            .map_err(|e| failed("cannot be created", tantivy::TantivyError::from(e)))?;
        let (schema, fields) = schema();
        let index =
            Index::create_in_dir(path, schema).map_err(|e| failed("cannot be created", e))?;
        Ok(TextIndex {
            path: path.to_owned(),
            index,
            fields,
        })
    }

    /// The stamp of the last commit (`None`: never committed, or unreadable).
    pub fn stamp(&self) -> Option<String> {
        self.index.load_metas().ok()?.payload
    }

    fn failed(&self, action: &'static str) -> impl Fn(tantivy::TantivyError) -> TextIndexError {
        let path = self.path.clone();
        move |source| TextIndexError {
            path: path.clone(),
            action,
            source,
        }
    }

    /// Replaces the documents of `paths` (all of them with `None`) by
    /// `docs`, and commits with `stamp`.
    pub fn write(
        &self,
        paths: Option<&[String]>,
        docs: &[TextDoc],
        stamp: &str,
    ) -> Result<(), TextIndexError> {
        let failed = self.failed("cannot be written");
        let mut writer: IndexWriter = self
            .index
            .writer_with_num_threads(1, WRITER_MEMORY)
            .map_err(&failed)?;
        match paths {
            None => {
                writer.delete_all_documents().map_err(&failed)?;
            }
            Some(paths) => {
                for path in paths {
                    writer.delete_term(Term::from_field_text(self.fields.path, path));
                }
            }
        }
        for doc in docs {
            let mut d = TantivyDocument::default();
            d.add_text(self.fields.id, &doc.id);
            d.add_text(self.fields.path, &doc.path);
            d.add_text(self.fields.names, &doc.names);
            d.add_text(self.fields.sig, &doc.sig);
            d.add_text(self.fields.words, &doc.words);
            writer.add_document(d).map_err(&failed)?;
        }
        // Killed here, the index keeps its last commit and older stamp.
        crate::fault::point(SEARCH_UNCOMMITTED);
        let mut commit = writer.prepare_commit().map_err(&failed)?;
        commit.set_payload(stamp);
        commit.commit().map_err(&failed)?;
        writer.wait_merging_threads().map_err(&failed)?;
        Ok(())
    }

    /// A reader for queries (kept by a long-lived server).
    pub fn reader(&self) -> Result<TextReader, TextIndexError> {
        let reader = self
            .index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(self.failed("cannot be read"))?;
        Ok(TextReader {
            path: self.path.clone(),
            reader,
            fields: self.fields,
        })
    }
}

/// Queries on one state of the index.
pub struct TextReader {
    path: PathBuf,
    reader: IndexReader,
    fields: Fields,
}

impl TextReader {
    /// The ids of the `limit` best documents for `query`, with their BM25
    /// scores, best first.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<(String, f32)>, TextIndexError> {
        let terms = query_terms(query);
        if terms.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for term in &terms {
            for (field, boost) in [
                (self.fields.names, BOOST_NAMES),
                (self.fields.sig, BOOST_SIG),
                (self.fields.words, BOOST_WORDS),
            ] {
                let q = TermQuery::new(
                    Term::from_field_text(field, term),
                    IndexRecordOption::WithFreqs,
                );
                clauses.push((Occur::Should, Box::new(BoostQuery::new(Box::new(q), boost))));
            }
        }
        let query = BooleanQuery::new(clauses);
        let failed = |source| TextIndexError {
            path: self.path.clone(),
            action: "cannot be searched",
            source,
        };
        let searcher = self.reader.searcher();
        let top = searcher
            .search(&query, &TopDocs::with_limit(limit))
            .map_err(failed)?;
        let mut hits = Vec::with_capacity(top.len());
        for (score, address) in top {
            let doc: TantivyDocument = searcher.doc(address).map_err(failed)?;
            if let Some(id) = doc.get_first(self.fields.id).and_then(|v| v.as_str()) {
                hits.push((id.to_owned(), score));
            }
        }
        Ok(hits)
    }
}

/// The terms of one word: its parts and, for a word of several parts, the
/// word squashed (`getUserById` is also `getuserbyid`), so that both
/// spellings match. Documents and queries read words alike.
fn word_terms(word: &str) -> Vec<String> {
    let split = parts::split(word);
    let whole = (split.len() > 1).then(|| parts::squashed(word));
    whole.into_iter().chain(split).collect()
}

/// The terms of a query, each once.
pub fn query_terms(query: &str) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    query
        .split_whitespace()
        .flat_map(word_terms)
        .filter(|t| t.len() > 1 && seen.insert(t.clone()))
        .collect()
}

/// Text as the index stores it: the terms of each word.
pub fn indexed_text(text: &str) -> String {
    let mut out = String::new();
    for term in text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .flat_map(word_terms)
    {
        out.push_str(&term);
        out.push(' ');
    }
    out
}
