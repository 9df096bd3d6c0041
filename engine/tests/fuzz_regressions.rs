//! Findings of the fuzz targets (`fuzz/`), each kept as the test that
//! failed before its fix. The inputs are also in `fuzz/corpus/<target>/`,
//! which `tests/fuzz_seeds.rs` replays through the fuzz checks.

use std::time::{Duration, Instant};

use tessera_engine::lattice::MAX_POINTS;
use tessera_engine::testing::{check_statement, random_tensor, EntryKind, Rng};
use tessera_engine::{Engine, EngineError, EvalOptions, Inputs};
use tessera_formats::{Format, LevelFormat};

/// `differential` (corpus `differential/crash-lattice-blowup`): sixteen
/// sparse terms added in one loop, `A(k) = (B(k,j) + B(k,j) + …) * (…)`,
/// made a merge lattice of 2^16 points, and planning it (quadratic in the
/// points) ran for more than five minutes. Such a loop is now refused at
/// once, with the reason.
#[test]
fn a_loop_merging_too_many_sparse_terms_is_refused_at_once() {
    let b4 = "(B(k,j) + B(k,j) + (B(k,j) + B(k,j)))";
    let found = format!("A(k) = {b4} * {b4} * ({b4} + {b4})");
    let format = Format::from_levels(
        &[
            LevelFormat::compressed().non_unique(),
            LevelFormat::singleton().non_unique(),
        ],
        &[1, 0],
    )
    .unwrap();
    let b = random_tensor(&mut Rng::new(6), &[4, 3], EntryKind::Random, &format).unwrap();
    let inputs = Inputs::new().with("B", &b);
    let terms = |n: usize| format!("A(k) = {}", vec!["B(k,j)"; n].join(" + "));
    for statement in [found, terms(11), terms(64), terms(200)] {
        let started = Instant::now();
        let options = EvalOptions {
            output_format: Some(Format::dense(1)),
            ..EvalOptions::default()
        };
        match Engine::new().eval_with(&statement, &inputs, &options) {
            Err(EngineError::Unsupported(reason)) => {
                assert!(reason.contains(&format!("more than {MAX_POINTS}")), "{reason}")
            }
            other => panic!("{statement}: {other:?}"),
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{statement}: {:?}",
            started.elapsed()
        );
    }
}

/// Ten sparse terms in one loop (1023 lattice points) are still planned,
/// and agree with the reference.
#[test]
fn a_loop_merging_ten_sparse_terms_still_runs() {
    let mut rng = Rng::new(7);
    let names = ["B", "C", "D", "E", "F"];
    let tensors: Vec<_> = names
        .iter()
        .map(|_| random_tensor(&mut rng, &[4, 3], EntryKind::Random, &Format::csr()).unwrap())
        .collect();
    let inputs: Vec<(&str, &_)> = names.iter().copied().zip(tensors.iter()).collect();
    let terms: Vec<String> = names
        .iter()
        .flat_map(|n| [format!("{n}(k,j)"), format!("2 * {n}(k,j)")])
        .collect();
    let statement = format!("A(k) = {}", terms.join(" + "));
    check_statement(&Engine::new(), &statement, &inputs, Some(&Format::dense(1)), &[]).unwrap();
}
