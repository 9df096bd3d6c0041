//! Random statements over random formats and tensors, each checked against
//! the dense reference. Seeds are fixed; a failure prints its seed.
//!
//! `TESSERA_SEEDS=first..end` runs other seeds (`TESSERA_SEEDS=17..18`
//! reproduces seed 17 alone); `TESSERA_VERBOSE=1` prints each case before
//! running it, which finds a case that hangs.

use tessera_engine::testing::{
    check_statement, output_formats, random_composition, random_format, random_statement, random_tensor,
    seeds_from_env, EntryKind, Rng, StatementConfig,
};
use tessera_engine::Engine;
use tessera_formats::{Format, Tensor};

/// Runs the case of `seed`: a statement, a format and contents per tensor,
/// an output format (or the default).
fn case(engine: &Engine, seed: u64) -> Result<(), String> {
    let mut rng = Rng::new(seed);
    let stmt = random_statement(&mut rng, &StatementConfig::default());
    let mut tensors: Vec<(String, Tensor<f64>)> = Vec::new();
    for spec in &stmt.tensors {
        let kind = if spec.divisor {
            EntryKind::Full
        } else {
            EntryKind::random(&mut rng)
        };
        let format = random_format(&mut rng, &spec.shape);
        let t = random_tensor(&mut rng, &spec.shape, kind, &format)?;
        tensors.push((spec.name.clone(), t));
    }
    let output: Option<Format> = match rng.below(20) {
        0..=2 => None,
        3..=7 if !stmt.output_shape.is_empty() => Some(random_composition(&mut rng, stmt.output_shape.len())),
        _ => Some(rng.pick(&output_formats(&stmt.output_shape)).clone()),
    };
    let inputs: Vec<(&str, &Tensor<f64>)> = tensors.iter().map(|(n, t)| (n.as_str(), t)).collect();
    let sizes: Vec<(&str, usize)> = stmt.sizes.iter().map(|(v, n)| (v.as_str(), *n)).collect();
    check_statement(engine, &stmt.text, &inputs, output.as_ref(), &sizes)
}

/// The seeds to run: the suite root's `RANDOM_STATEMENT_SEEDS`, or
/// `TESSERA_SEEDS`.
fn seeds() -> std::ops::Range<u64> {
    seeds_from_env("TESSERA_SEEDS", crate::RANDOM_STATEMENT_SEEDS)
}

#[test]
fn random_statements_match_the_reference() {
    let engine = crate::suite_engine();
    let verbose = std::env::var_os("TESSERA_VERBOSE").is_some();
    let mut failures = Vec::new();
    let seeds = seeds();
    let count = seeds.end.saturating_sub(seeds.start);
    for seed in seeds {
        if verbose {
            let stmt = random_statement(&mut Rng::new(seed), &StatementConfig::default());
            eprintln!("seed {seed}: {}", stmt.text);
        }
        if let Err(e) = case(&engine, seed) {
            failures.push(format!("seed {seed}: {e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {count} random statements differ from the reference:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
