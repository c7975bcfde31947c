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

/// One symbol's document, or one file's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextDoc {
    /// The symbol's id; for a file, [`file_id`] of its path.
    pub id: String,
    pub path: String,
    /// The parts of its qualified name (of a file: of its path).
    pub names: String,
    pub sig: String,
    /// The words of its code and comments, as written (of a file: of all
    /// its symbols).
    pub words: String,
    /// Its qualified name and its words as written (identifiers whole),
    /// for the pairs of their parts.
    pub raw_names: String,
    pub raw_words: String,
    /// A file's document: its fields are apart from the symbols', so that
    /// one ranking never mixes the two.
    pub file: bool,
}

impl TextDoc {
    /// The adjacent parts of the identifiers of its name and of its
    /// words, each pair as one term ([`pair_terms`]).
    fn pairs(&self) -> (String, String) {
        let of = |text: &str| {
            let mut out = String::new();
            for word in text.split_whitespace() {
                for pair in pair_terms(word) {
                    out.push_str(&pair);
                    out.push(' ');
                }
            }
            out
        };
        (of(&self.raw_names), of(&self.raw_words))
    }
}

/// The id of a file's document.
pub fn file_id(path: &str) -> String {
    format!("file:{path}")
}

/// How a query's terms meet the documents' terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Form {
    /// As written (after splitting into parts).
    #[default]
    Written,
    /// By their English stems: `redirects` meets `redirect`, `rendering`
    /// meets `render`, as an issue's prose and the code rarely agree on
    /// a word's ending.
    Stemmed,
}

/// What a query is asked of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bag {
    /// Symbols, by every field.
    Symbols,
    /// Symbols, by the parts of their names only.
    Names,
    /// Files, by their path and all their words.
    Files,
    /// Symbols, by the adjacent parts of their name's identifiers.
    NamePairs,
    /// Symbols, by the adjacent parts of their words' identifiers.
    WordPairs,
}

#[derive(Clone, Copy)]
struct Fields {
    id: Field,
    path: Field,
    names: Field,
    sig: Field,
    words: Field,
    file_names: Field,
    file_words: Field,
    /// The same fields with each term stemmed ([`stemmed`]).
    names_stem: Field,
    sig_stem: Field,
    words_stem: Field,
    file_names_stem: Field,
    file_words_stem: Field,
    /// Adjacent parts of the identifiers of a symbol's name and words
    /// (`prepare_content_length`: `preparecontent contentlength`).
    name_pairs: Field,
    word_pairs: Field,
}

fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let fields = Fields {
        id: builder.add_text_field("id", STRING | STORED),
        path: builder.add_text_field("path", STRING),
        names: builder.add_text_field("names", TEXT),
        sig: builder.add_text_field("sig", TEXT),
        words: builder.add_text_field("words", TEXT),
        file_names: builder.add_text_field("file_names", TEXT),
        file_words: builder.add_text_field("file_words", TEXT),
        names_stem: builder.add_text_field("names_stem", TEXT),
        sig_stem: builder.add_text_field("sig_stem", TEXT),
        words_stem: builder.add_text_field("words_stem", TEXT),
        file_names_stem: builder.add_text_field("file_names_stem", TEXT),
        file_words_stem: builder.add_text_field("file_words_stem", TEXT),
        name_pairs: builder.add_text_field("name_pairs", TEXT),
        word_pairs: builder.add_text_field("word_pairs", TEXT),
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
            let f = self.fields;
            let texts: &[(Field, Field, &str)] = if doc.file {
                &[
                    (f.file_names, f.file_names_stem, &doc.names),
                    (f.file_words, f.file_words_stem, &doc.words),
                ]
            } else {
                &[
                    (f.names, f.names_stem, &doc.names),
                    (f.sig, f.sig_stem, &doc.sig),
                    (f.words, f.words_stem, &doc.words),
                ]
            };
            for &(written, stems, text) in texts {
                d.add_text(written, text);
                d.add_text(stems, stemmed(text));
            }
            if !doc.file {
                let (names, words) = doc.pairs();
                d.add_text(f.name_pairs, names);
                d.add_text(f.word_pairs, words);
            }
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
        let terms: Vec<(String, f32)> = query_terms(query).into_iter().map(|t| (t, 1.0)).collect();
        self.search_weighted(&terms, Bag::Symbols, Form::Written, limit)
    }

    /// The `limit` best documents of `bag` for terms of the index, each
    /// with the weight its BM25 score is multiplied by (its count in a
    /// question), matched as written or by their stems.
    pub fn search_weighted(
        &self,
        terms: &[(String, f32)],
        bag: Bag,
        form: Form,
        limit: usize,
    ) -> Result<Vec<(String, f32)>, TextIndexError> {
        if terms.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let f = self.fields;
        let fields: &[(Field, f32)] = match (bag, form) {
            (Bag::Symbols, Form::Written) => &[
                (f.names, BOOST_NAMES),
                (f.sig, BOOST_SIG),
                (f.words, BOOST_WORDS),
            ],
            (Bag::Symbols, Form::Stemmed) => &[
                (f.names_stem, BOOST_NAMES),
                (f.sig_stem, BOOST_SIG),
                (f.words_stem, BOOST_WORDS),
            ],
            (Bag::Names, Form::Written) => &[(f.names, 1.0)],
            (Bag::Names, Form::Stemmed) => &[(f.names_stem, 1.0)],
            (Bag::Files, Form::Written) => &[(f.file_names, 1.0), (f.file_words, 1.0)],
            (Bag::Files, Form::Stemmed) => &[(f.file_names_stem, 1.0), (f.file_words_stem, 1.0)],
            // Pairs are matched as written: two parts side by side are
            // already a narrow term.
            (Bag::NamePairs, _) => &[(f.name_pairs, 1.0)],
            (Bag::WordPairs, _) => &[(f.word_pairs, 1.0)],
        };
        let stems;
        let terms = match form {
            _ if matches!(bag, Bag::NamePairs | Bag::WordPairs) => terms,
            Form::Written => terms,
            Form::Stemmed => {
                stems = stemmed_terms(terms);
                &stems[..]
            }
        };
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (term, weight) in terms {
            for &(field, boost) in fields {
                let q = TermQuery::new(
                    Term::from_field_text(field, term),
                    IndexRecordOption::WithFreqs,
                );
                clauses.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(Box::new(q), boost * weight)),
                ));
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

impl TextReader {
    /// For each symbol of `ids`, the `terms` its document holds, in the
    /// order given: what of a question a hit matched.
    pub fn matched_terms(
        &self,
        ids: &[&str],
        terms: &[(String, f32)],
    ) -> Result<std::collections::HashMap<String, Vec<String>>, TextIndexError> {
        use tantivy::{DocSet, TERMINATED};
        let failed = |source: tantivy::TantivyError| TextIndexError {
            path: self.path.clone(),
            action: "cannot be searched",
            source,
        };
        let searcher = self.reader.searcher();
        let mut out: std::collections::HashMap<String, Vec<String>> = Default::default();
        for segment in searcher.segment_readers() {
            let alive = |doc: u32| segment.alive_bitset().is_none_or(|b| b.is_alive(doc));
            // The live document of each id in this segment, in doc order.
            let ids_index = segment.inverted_index(self.fields.id).map_err(failed)?;
            let mut docs: Vec<(u32, &str)> = Vec::new();
            for id in ids {
                let term = Term::from_field_text(self.fields.id, id);
                let Some(mut postings) = ids_index
                    .read_postings(&term, IndexRecordOption::Basic)
                    .map_err(|e| failed(e.into()))?
                else {
                    continue;
                };
                while postings.doc() != TERMINATED {
                    if alive(postings.doc()) {
                        docs.push((postings.doc(), id));
                        break;
                    }
                    postings.advance();
                }
            }
            if docs.is_empty() {
                continue;
            }
            docs.sort_unstable();
            for field in [self.fields.names, self.fields.sig, self.fields.words] {
                let index = segment.inverted_index(field).map_err(failed)?;
                for (term, _) in terms {
                    let Some(mut postings) = index
                        .read_postings(
                            &Term::from_field_text(field, term),
                            IndexRecordOption::Basic,
                        )
                        .map_err(|e| failed(e.into()))?
                    else {
                        continue;
                    };
                    for &(doc, id) in &docs {
                        if postings.doc() == TERMINATED {
                            break;
                        }
                        if postings.doc() <= doc && postings.seek(doc) == doc {
                            let list = out.entry(id.to_owned()).or_default();
                            if !list.contains(term) {
                                list.push(term.clone());
                            }
                        }
                    }
                }
            }
        }
        // In the order of the question's terms.
        let rank: std::collections::HashMap<&str, usize> = terms
            .iter()
            .enumerate()
            .map(|(i, (t, _))| (t.as_str(), i))
            .collect();
        for list in out.values_mut() {
            list.sort_by_key(|t| rank.get(t.as_str()).copied().unwrap_or(usize::MAX));
        }
        Ok(out)
    }
}

/// The terms of one word: its parts and, for a word of several parts, the
/// word squashed (`getUserById` is also `getuserbyid`), so that both
/// spellings match. Documents and queries read words alike.
pub(crate) fn word_terms(word: &str) -> Vec<String> {
    let split = parts::split(word);
    let whole = (split.len() > 1).then(|| parts::squashed(word));
    whole.into_iter().chain(split).collect()
}

/// The adjacent parts of one identifier, each pair squashed into a term
/// (`prepare_content_length`: `preparecontent`, `contentlength`): two
/// words of a question side by side ("content length") meet the name
/// that joins them, where each word alone is common.
pub(crate) fn pair_terms(word: &str) -> Vec<String> {
    part_pairs(&parts::split(word))
}

/// Each two parts side by side, squashed into one term (parts of one
/// letter left out): a document's identifier and a question's line alike.
pub(crate) fn part_pairs(parts: &[String]) -> Vec<String> {
    parts
        .windows(2)
        .filter(|w| w[0].len() > 1 && w[1].len() > 1)
        .map(|w| format!("{}{}", w[0], w[1]))
        .collect()
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

/// The English (Porter 2) stem of one term.
fn stem(term: &str) -> String {
    use std::sync::OnceLock;
    static STEMMER: OnceLock<rust_stemmers::Stemmer> = OnceLock::new();
    STEMMER
        .get_or_init(|| rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English))
        .stem(term)
        .into_owned()
}

/// Indexed text (terms separated by spaces) with each term stemmed.
pub fn stemmed(indexed: &str) -> String {
    let mut out = String::with_capacity(indexed.len());
    for term in indexed.split_whitespace() {
        out.push_str(&stem(term));
        out.push(' ');
    }
    out
}

/// A question's weighted terms by their stems: terms of one stem count
/// together, at most [`super::question::TERM_CAP`] times, in the order of
/// their first term.
fn stemmed_terms(terms: &[(String, f32)]) -> Vec<(String, f32)> {
    let mut out: Vec<(String, f32)> = Vec::with_capacity(terms.len());
    let mut at: std::collections::HashMap<String, usize> = Default::default();
    for (term, weight) in terms {
        let s = stem(term);
        match at.get(&s) {
            Some(&i) => out[i].1 = (out[i].1 + weight).min(super::question::TERM_CAP),
            None => {
                at.insert(s.clone(), out.len());
                out.push((s, *weight));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(id: &str, words: &str) -> TextDoc {
        TextDoc {
            id: id.to_owned(),
            path: format!("{id}.py"),
            names: indexed_text(id),
            sig: String::new(),
            words: indexed_text(words),
            raw_names: id.to_owned(),
            raw_words: words.to_owned(),
            file: false,
        }
    }

    /// A reader of a new index of `docs` (the directory lives as long).
    fn indexed(docs: &[TextDoc]) -> (tempfile::TempDir, TextReader) {
        let dir = tempfile::tempdir().unwrap();
        let index = TextIndex::create(dir.path()).unwrap();
        index.write(None, docs, "s").unwrap();
        let reader = index.reader().unwrap();
        (dir, reader)
    }

    #[test]
    fn stemmed_terms_meet_other_endings_and_written_ones_do_not() {
        let (_dir, reader) = indexed(&[
            doc("resolve", "redirect location rendering"),
            doc("other", "session cookie"),
        ]);
        let terms = vec![("redirects".to_owned(), 1.0), ("rendered".to_owned(), 1.0)];
        let written = reader
            .search_weighted(&terms, Bag::Symbols, Form::Written, 10)
            .unwrap();
        assert!(written.is_empty(), "{written:?}");
        let stems = reader
            .search_weighted(&terms, Bag::Symbols, Form::Stemmed, 10)
            .unwrap();
        assert_eq!(stems.len(), 1);
        assert_eq!(stems[0].0, "resolve");
    }

    #[test]
    fn pairs_of_parts_meet_words_side_by_side() {
        assert_eq!(
            pair_terms("prepare_content_length"),
            ["preparecontent", "contentlength"]
        );
        assert!(pair_terms("length").is_empty());
        let (_dir, reader) = indexed(&[
            doc("prepare_content_length", "body length"),
            doc("prepare_body", "content_type length"),
        ]);
        let terms = vec![("contentlength".to_owned(), 1.0)];
        let by_name = reader
            .search_weighted(&terms, Bag::NamePairs, Form::Written, 10)
            .unwrap();
        assert_eq!(by_name.len(), 1);
        assert_eq!(by_name[0].0, "prepare_content_length");
        let by_words = reader
            .search_weighted(
                &[("contenttype".to_owned(), 1.0)],
                Bag::WordPairs,
                Form::Written,
                10,
            )
            .unwrap();
        assert_eq!(by_words.len(), 1);
        assert_eq!(by_words[0].0, "prepare_body");
    }

    #[test]
    fn terms_of_one_stem_count_together_up_to_the_cap() {
        let terms = vec![
            ("redirects".to_owned(), 2.0),
            ("session".to_owned(), 1.0),
            ("redirect".to_owned(), 2.0),
        ];
        assert_eq!(
            stemmed_terms(&terms),
            vec![("redirect".to_owned(), 3.0), ("session".to_owned(), 1.0)]
        );
    }
}
