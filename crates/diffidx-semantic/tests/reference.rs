//! The local model against the reference implementation: vectors that
//! sentence-transformers computed for fixed strings
//! (fixtures/make_reference.py says how) must come out of candle alike.

use std::path::PathBuf;

use diffidx_semantic::{cosine, Embedder, LocalModel};
use serde::Deserialize;

#[derive(Deserialize)]
struct Reference {
    max_seq_length: usize,
    weights_blake3: String,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    text: String,
    vector: Vec<f32>,
}

/// The model `scripts/model` installs (scripts/test runs it first).
fn model_dir() -> PathBuf {
    let dir = diffidx_semantic::embed::installed_model_dir();
    assert!(
        dir.join("model.safetensors").is_file(),
        "no embedding model in {}; run scripts/model",
        dir.display()
    );
    dir
}

fn reference() -> Reference {
    let text = include_str!("fixtures/reference.json");
    serde_json::from_str(text).expect("reference.json parses")
}

#[test]
fn vectors_match_the_reference_implementation() {
    let reference = reference();
    let mut model = LocalModel::load(&model_dir()).expect("the model loads");
    let pin = model.pin().clone();
    assert_eq!(
        pin.weights_blake3, reference.weights_blake3,
        "not the pinned weights"
    );
    assert_eq!(pin.max_tokens, reference.max_seq_length);
    assert_eq!(
        (pin.dim, pin.pooling.as_str(), pin.normalize),
        (384, "mean", true)
    );
    let texts: Vec<&str> = reference.cases.iter().map(|c| c.text.as_str()).collect();
    let vectors = model.embed(&texts).expect("embeds");
    for (case, v) in reference.cases.iter().zip(&vectors) {
        assert_eq!(v.len(), 384);
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "{:?} has norm {norm}", case.text);
        let expected_norm: f32 = case.vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        let similarity = cosine(v, &case.vector) / expected_norm;
        assert!(
            similarity >= 0.999,
            "{:?}: cosine {similarity} with the reference",
            case.text
        );
    }
    // The check discriminates: another text's reference vector fails it.
    for (i, v) in vectors.iter().enumerate() {
        let j = (i + 1) % vectors.len();
        let other = &reference.cases[j].vector;
        let norm: f32 = other.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!(
            cosine(v, other) / norm < 0.999,
            "cases {i} and {j} look alike"
        );
    }
    assert!(cosine(&vectors[0], &vectors[4]) < 0.5);
    assert!(cosine(&vectors[0], &vectors[1]) > 0.7);
}

#[test]
fn a_vector_does_not_depend_on_what_it_was_embedded_with() {
    let mut model = LocalModel::load(&model_dir()).expect("the model loads");
    let texts = [
        "retry failed payments",
        "open the circuit after three failures",
        "parse the command line",
        "retry failed payments with jitter",
        "a",
        "retry failed invoices",
        "retry failed orders",
    ];
    let together = model.embed(&texts).expect("embeds");
    for (i, text) in texts.iter().enumerate() {
        let alone = model.embed(&[text]).expect("embeds");
        let same = together[i]
            .iter()
            .zip(&alone[0])
            .all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "{text:?} differs when embedded alone");
    }
    let again = model.embed(&texts).expect("embeds");
    assert_eq!(together, again);
}
