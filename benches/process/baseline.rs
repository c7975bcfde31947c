//! The baseline every search figure is read against: a plain BM25 over
//! the same symbols and words, as a 60-line script would write it.

use std::collections::HashMap;

/// Plain BM25: one field of qualname, signature and words as written,
/// tantivy's default tokenizer, no name tier.
pub struct Baseline {
    reader: tantivy::IndexReader,
    field: tantivy::schema::Field,
    id: tantivy::schema::Field,
    index: tantivy::Index,
}

impl Baseline {
    pub fn new(
        repo: &diffidx_core::git::Repo,
        entries: &[diffidx_lib::search::SymbolEntry],
    ) -> Baseline {
        use tantivy::schema::{Schema, STORED, STRING, TEXT};
        // The same words the search index reads: the files at HEAD.
        let head = repo.resolve_commit("HEAD").unwrap();
        let mut differ = diffidx_core::SymbolDiffer::new(repo, Default::default()).unwrap();
        let mut words: HashMap<String, String> = HashMap::new();
        for file in repo.tree_files(head).unwrap() {
            if let Ok(Some(facts)) = differ.file_facts(file.blob, &file.path) {
                for d in &facts.defs {
                    let id =
                        diffidx_core::symbol::symbol_id(&file.path, d.kind, &d.qualname, &d.sig);
                    words.insert(id, d.words.clone());
                }
            }
        }
        let mut builder = Schema::builder();
        let id = builder.add_text_field("id", STRING | STORED);
        let field = builder.add_text_field("all", TEXT);
        let index = tantivy::Index::create_in_ram(builder.build());
        // One thread, one segment: hits of equal score come in the order
        // the documents were added.
        let mut writer: tantivy::IndexWriter =
            index.writer_with_num_threads(1, 50_000_000).unwrap();
        // In the order of their ids, not the store's: a store built again
        // lists them in another order, and ties would fall otherwise.
        let mut sorted: Vec<&diffidx_lib::search::SymbolEntry> = entries.iter().collect();
        sorted.sort_by(|a, b| a.id.cmp(&b.id));
        for e in sorted {
            let text = format!(
                "{} {} {}",
                e.qualname,
                e.sig,
                words.get(&e.id).map(String::as_str).unwrap_or("")
            );
            writer
                .add_document(tantivy::doc!(id => e.id.clone(), field => text))
                .unwrap();
        }
        writer.commit().unwrap();
        let reader = index.reader().unwrap();
        Baseline {
            reader,
            field,
            id,
            index,
        }
    }

    pub fn search(&self, text: &str, limit: usize) -> Vec<String> {
        use tantivy::schema::Value;
        use tantivy::tokenizer::TokenStream;
        let mut tokenizer = self.index.tokenizer_for_field(self.field).unwrap();
        let mut stream = tokenizer.token_stream(text);
        let mut clauses: Vec<(tantivy::query::Occur, Box<dyn tantivy::query::Query>)> = Vec::new();
        while stream.advance() {
            let term = tantivy::Term::from_field_text(self.field, &stream.token().text);
            clauses.push((
                tantivy::query::Occur::Should,
                Box::new(tantivy::query::TermQuery::new(
                    term,
                    tantivy::schema::IndexRecordOption::WithFreqs,
                )),
            ));
        }
        let searcher = self.reader.searcher();
        let query = tantivy::query::BooleanQuery::new(clauses);
        searcher
            .search(&query, &tantivy::collector::TopDocs::with_limit(limit))
            .unwrap()
            .into_iter()
            .filter_map(|(_, address)| {
                let doc: tantivy::TantivyDocument = searcher.doc(address).ok()?;
                doc.get_first(self.id)
                    .and_then(|v| v.as_str())
                    .map(str::to_owned)
            })
            .collect()
    }
}
