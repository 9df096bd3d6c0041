//! Findings of the fuzz targets (`fuzz/`), each kept as the test that
//! failed before its fix. The inputs are also in `fuzz/corpus/<target>/`,
//! which `tests/fuzz_seeds.rs` replays through the fuzz checks.

use std::time::{Duration, Instant};

use tessera_engine::lattice::MAX_POINTS;
use tessera_engine::testing::{check_statement, random_tensor, EntryKind, Rng};
use tessera_engine::{Engine, EngineError, EvalOptions, Inputs};
use tessera_formats::{CoordinateList, Format, LevelFormat, Tensor};

/// `differential` (corpus `differential/crash-lattice-blowup`): sixteen
/// sparse terms added in one loop, `A(k) = (B(k,j) + B(k,j) + …) * (…)`,
/// made a merge lattice of 2^16 points, and planning it (quadratic in the
/// points) ran for more than five minutes. Such a loop over distinct
/// operands is now refused at once, with the reason; the statement found,
/// one tensor read sixteen times at the same indices, reads one operand
/// and runs.
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
    let options = EvalOptions {
        output_format: Some(Format::dense(1)),
        ..EvalOptions::default()
    };
    let started = Instant::now();
    check_statement(&Engine::new(), &found, &[("B", &b)], Some(&Format::dense(1)), &[]).unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{found}: {:?}",
        started.elapsed()
    );
    // The same tensor under as many names: as many operands to merge.
    let names: Vec<String> = (0..200).map(|k| format!("B{k}")).collect();
    let inputs = names.iter().fold(Inputs::new(), |inputs, name| inputs.with(name, &b));
    let sum = |n: usize| {
        names[..n]
            .iter()
            .map(|b| format!("{b}(k,j)"))
            .collect::<Vec<_>>()
            .join(" + ")
    };
    // Scaled, the sum is one term: its tensors merge in one loop.
    for statement in [11, 64, 200].map(|n| format!("A(k) = ({}) * 2", sum(n))) {
        let started = Instant::now();
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

/// A plain sum of as many sparse terms into a dense output needs no merge:
/// it is computed term by term, each term's loops adding into the output,
/// and agrees with the reference.
#[test]
fn a_sum_of_two_hundred_sparse_terms_runs_term_by_term() {
    let b = random_tensor(&mut Rng::new(8), &[5, 4], EntryKind::Skewed, &Format::csr()).unwrap();
    let names: Vec<String> = (0..200).map(|k| format!("B{k}")).collect();
    let inputs: Vec<(&str, &Tensor<f64>)> = names.iter().map(|name| (name.as_str(), &b)).collect();
    let terms: Vec<String> = names.iter().map(|b| format!("{b}(k,j)")).collect();
    let statement = format!("A(k) = {}", terms.join(" + "));
    let started = Instant::now();
    check_statement(&Engine::new(), &statement, &inputs, Some(&Format::dense(1)), &[]).unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{statement}: {:?}",
        started.elapsed()
    );
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

/// `differential` (corpus `differential/crash-merge-cases-quotient`): a
/// merge run as one loop per lattice point ignored the iterators outside
/// the point. Under a quotient those still count (division has the dense
/// meaning): in the loop of `{B}` below, `B / C` was taken as `0 / 0` at a
/// coordinate where both are stored, and the result was NaN instead of
/// `-0.75`. Merges by cases are now only for sums and products.
#[test]
fn a_merge_under_a_quotient_reads_every_iterator_at_the_coordinate() {
    let pack = |shape: &[usize], entries: &[(&[u64], f64)], format: Format| {
        let mut list = CoordinateList::new(shape);
        for (coords, v) in entries {
            list.push(coords, *v).unwrap();
        }
        Tensor::pack(&list, format).unwrap()
    };
    let b = pack(
        &[1, 3, 1],
        &[(&[0, 0, 0], 1.5), (&[0, 2, 0], 3.0)],
        Format::from_levels(&[LevelFormat::compressed(); 3], &[0, 2, 1]).unwrap(),
    );
    let c = pack(
        &[1, 1, 3],
        &[(&[0, 0, 0], -0.5), (&[0, 0, 1], 2.0), (&[0, 0, 2], 1.5)],
        Format::from_levels(
            &[
                LevelFormat::compressed().non_unique(),
                LevelFormat::singleton().non_unique(),
                LevelFormat::singleton(),
            ],
            &[0, 2, 1],
        )
        .unwrap(),
    );
    let d = Tensor::from_dense(&[], vec![-0.5]).unwrap();
    let e = pack(&[3], &[], Format::sparse_vector());
    let inputs = [("B", &b), ("C", &c), ("D", &d), ("E", &e)];
    let statement = "A(i,j,k) = (B(k,j,i) / C(i,k,j) * (D * E(j)) + D) * B(k,j,i)";
    check_statement(&Engine::new(), statement, &inputs, Some(&Format::coo(3)), &[]).unwrap();
}

/// `differential` (decoder seed 29744, a complex statement): its parts
/// hold products of two sums over the same variable,
/// `sum(k, B.re(k)) * sum(k, B.re(k))`, which lowering (one loop per
/// variable) read as `sum(k, B.re(k) * B.re(k))`. Sums are now renamed
/// apart (`k'`) before lowering.
#[test]
fn sibling_sums_over_one_variable_stay_two_sums() {
    let engine = Engine::new();
    let mut rng = Rng::new(29744);
    for format in [Format::dense(2), Format::csr(), Format::coo(2)] {
        for kind in [EntryKind::Random, EntryKind::Duplicates, EntryKind::Empty] {
            let b = random_tensor(&mut rng, &[4, 5], kind, &format).unwrap();
            let c = random_tensor(&mut rng, &[4, 5], EntryKind::Random, &Format::csr()).unwrap();
            for statement in [
                "a = sum(k, sum(i, B(i,k))) * sum(k, sum(i, B(i,k)))",
                "y(i) = sum(k, B(i,k)) * sum(k, C(i,k)) - sum(k, B(i,k) * C(i,k))",
                "y(k) = sum(i, B(i,k)) * sum(i, C(i,k))",
            ] {
                check_statement(&engine, statement, &[("B", &b), ("C", &c)], None, &[])
                    .unwrap_or_else(|e| panic!("{statement}, B in {format}: {e}"));
            }
        }
    }
    // A sum renamed apart runs over the size given for its variable
    // (decoder seed 23440: `A = sum(i, B) * B` split into parts).
    let s = Tensor::from_dense(&[], vec![-2.0]).unwrap();
    check_statement(
        &engine,
        "a = sum(i, s) * sum(i, s) + s",
        &[("s", &s)],
        None,
        &[("i", 4)],
    )
    .unwrap();
}

/// `random_statements` seed 23733 and `fuzz_seeds` decoder seed 9650: a
/// sum whose terms both read an ELL tensor, one of them not zero where it
/// is absent (`f64(!B) - B`, `--C / C`), was taken as one the tensor is a
/// factor of, and its slots were walked natively, missing the absent
/// components (or dividing 0 by 0 everywhere). Such a sum is a factor's
/// only for choosing what to walk, never for skipping where it is absent.
/// The split of the first into terms showed an older fault: one term,
/// `sum(m, f64(!B(m,i)))`, walked ELL's slots and BCSR's blocks natively
/// (a function of one argument counts as absent where its argument is);
/// a statement known not to vanish where such a tensor is absent now
/// converts it, as DIA's always did.
#[test]
fn a_sum_of_terms_reading_ell_that_is_not_zero_where_it_is_absent_visits_every_component() {
    let mut rng = Rng::new(23733);
    let formats = [Format::ell(), Format::bcsr(1, 1).unwrap()];
    for ((statement, sizes), format) in [
        ("A(i) = f64(!B(m,i)) - B(m,i)", &[][..]),
        ("A(i) = sum(m, f64(!B(m,i)))", &[][..]),
        ("C(i,j) = exp(B(i,j)) - B(i,j)", &[][..]),
        ("A(j,l,i,k) = --B(l,j) / B(l,j)", &[("i", 4), ("k", 2)][..]),
    ]
    .into_iter()
    .flat_map(|case| formats.iter().map(move |f| (case, f)))
    {
        for kind in EntryKind::ALL {
            let b = random_tensor(&mut rng, &[5, 6], kind, format).unwrap();
            let order = statement.split('=').next().unwrap().matches(',').count() + 1;
            check_statement(
                &Engine::new(),
                statement,
                &[("B", &b)],
                Some(&Format::dense(order)),
                sizes,
            )
            .unwrap_or_else(|e| panic!("{statement}, B {format}, {kind:?}: {e}"));
        }
    }
}
