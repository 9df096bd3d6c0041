//! Parallel runs: every output kind split into chunks on 1, 2 and 7
//! threads gives the same bits, the reference's values, and really splits.

use tessera_engine::testing::{check_statement, random_tensor, same_bits, EntryKind, Rng};
use tessera_engine::{Engine, EvalOptions, Inputs};
use tessera_formats::{Format, Tensor};

/// A kernel of the table: its statement, operands and output format.
struct Case {
    statement: &'static str,
    operands: Vec<(&'static str, Vec<usize>, Format)>,
    output: Format,
    /// What the plan says about running in parallel.
    plan: &'static str,
}

/// The first operand, `A`, a `rows x cols` matrix in `format`.
fn m(rows: usize, cols: usize, format: Format) -> (&'static str, Vec<usize>, Format) {
    ("A", vec![rows, cols], format)
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            statement: "y(i) = A(i,j) * x(j)",
            operands: vec![m(60, 40, Format::csr()), ("x", vec![40], Format::dense(1))],
            output: Format::dense(1),
            plan: "each writes its own rows",
        },
        Case {
            statement: "y(i) = A(i,j) * x(j)",
            operands: vec![m(60, 40, Format::dcsr()), ("x", vec![40], Format::dense(1))],
            output: Format::sparse_vector(),
            plan: "each assembles its own part",
        },
        Case {
            statement: "y(j) = A(i,j) * x(i)",
            operands: vec![m(60, 40, Format::csr()), ("x", vec![60], Format::dense(1))],
            output: Format::dense(1),
            plan: "the partials are added up in chunk order",
        },
        Case {
            statement: "s = A(i,j) * A(i,j)",
            operands: vec![m(60, 40, Format::coo(2))],
            output: Format::dense(0),
            plan: "the partials are added up in chunk order",
        },
        Case {
            statement: "C(i,j) = A(i,k) * B(k,j)",
            operands: vec![m(60, 30, Format::csr()), ("B", vec![30, 50], Format::csr())],
            output: Format::csr(),
            plan: "each assembles its own part",
        },
        Case {
            statement: "C(i,j) = A(i,k) * B(k,j)",
            operands: vec![m(60, 30, Format::dcsr()), ("B", vec![30, 50], Format::csr())],
            output: Format::dcsr(),
            plan: "each assembles its own part",
        },
        Case {
            statement: "C(i,j) = A(i,k) * B(k,j)",
            operands: vec![m(60, 30, Format::csr()), ("B", vec![30, 50], Format::csr())],
            output: Format::coo(2),
            plan: "each assembles its own part",
        },
        Case {
            statement: "C(i,j) = A(i,j) + B(j,i)",
            operands: vec![m(60, 60, Format::csr()), ("B", vec![60, 60], Format::csc())],
            output: Format::csr(),
            plan: "each assembles its own part",
        },
        Case {
            statement: "C(i,j) = A(i,j) * U(i,k) * V(j,k)",
            operands: vec![
                m(60, 40, Format::csr()),
                ("U", vec![60, 8], Format::dense(2)),
                ("V", vec![40, 8], Format::dense(2)),
            ],
            output: Format::csr(),
            plan: "each writes the values of its own rows' positions",
        },
        Case {
            statement: "C(i,j) = A(i,k) * X(k,j)",
            operands: vec![m(60, 40, Format::csr()), ("X", vec![40, 8], Format::dense(2))],
            output: Format::dense(2),
            plan: "each writes its own rows",
        },
        Case {
            statement: "A(i,j) = B(i,j,k) * c(k)",
            operands: vec![
                ("B", vec![30, 20, 10], Format::csf(3)),
                ("c", vec![10], Format::dense(1)),
            ],
            output: Format::csf(2),
            plan: "each assembles its own part",
        },
    ]
}

fn eval(engine: &Engine, case: &Case, tensors: &[(&str, Tensor<f64>)], threads: usize, chunk_work: u64) -> Tensor<f64> {
    let mut inputs = Inputs::new();
    for (name, t) in tensors {
        inputs.insert(name, t);
    }
    let options = EvalOptions {
        output_format: Some(case.output.clone()),
        threads: Some(threads),
        chunk_work: Some(chunk_work),
        ..EvalOptions::default()
    };
    engine.eval_with(case.statement, &inputs, &options).unwrap()
}

#[test]
fn every_output_kind_gives_the_same_bits_on_any_number_of_threads() {
    let mut rng = Rng::new(29);
    for case in &cases() {
        let engine = Engine::new();
        let formats: Vec<(&str, Format)> = case.operands.iter().map(|(n, _, f)| (*n, f.clone())).collect();
        let kernel = engine.compile(case.statement, &formats, &case.output).unwrap();
        assert!(
            kernel.plan().contains(case.plan),
            "{}: the plan should say `{}`:\n{}",
            case.statement,
            case.plan,
            kernel.plan()
        );
        let partials = case.plan.contains("partials");
        let mut splits = 0;
        for kind in [
            EntryKind::Random,
            EntryKind::Skewed,
            EntryKind::EmptySlices,
            EntryKind::Duplicates,
        ] {
            let tensors: Vec<(&str, Tensor<f64>)> = case
                .operands
                .iter()
                .enumerate()
                .map(|(k, (name, shape, format))| {
                    let kind = if k == 0 { kind } else { EntryKind::Random };
                    (*name, random_tensor(&mut rng, shape, kind, format).unwrap())
                })
                .collect();
            let refs: Vec<(&str, &Tensor<f64>)> = tensors.iter().map(|(n, t)| (*n, t)).collect();
            check_statement(&engine, case.statement, &refs, Some(&case.output), &[]).unwrap();
            for chunk_work in [1, 4, 37] {
                let before = engine.stats().split_runs;
                let one = eval(&engine, case, &tensors, 1, chunk_work);
                for threads in [2, 7] {
                    let many = eval(&engine, case, &tensors, threads, chunk_work);
                    assert!(
                        same_bits(&one, &many),
                        "{} ({kind:?}, chunks of {chunk_work}): {threads} threads differ from one",
                        case.statement
                    );
                }
                // The many-thread runs were split (a split that never
                // happens would make the comparison above vacuous), except
                // that a sum over the outer loop keeps a partial output per
                // chunk only where the work dwarfs the output.
                let split = engine.stats().split_runs >= before + 2;
                assert!(
                    split || partials,
                    "{} ({kind:?}, chunks of {chunk_work}) ran whole",
                    case.statement
                );
                splits += usize::from(split);
            }
        }
        assert!(splits >= 4, "{}: split {splits} times", case.statement);
    }
}

#[test]
fn what_cannot_be_split_says_why_and_runs_whole() {
    let engine = Engine::new();
    for (statement, formats, output, reason) in [
        (
            "y(i) = A(i,j) * x(j)",
            vec![("A", hashed_rows()), ("x", Format::dense(1))],
            Format::dense(1),
            "holds its coordinates in no order",
        ),
        (
            "C(i,j) = A(i,j)",
            vec![("A", Format::csr())],
            hashed_rows(),
            "runs on one thread",
        ),
    ] {
        let kernel = engine.compile(statement, &formats, &output).unwrap();
        assert!(
            kernel.plan().contains(reason),
            "{statement}: the plan should say `{reason}`:\n{}",
            kernel.plan()
        );
        assert!(kernel.program().chunking.is_none(), "{statement}");
    }
}

/// A matrix whose rows are a hash map (its first level hashed).
fn hashed_rows() -> Format {
    use tessera_formats::LevelFormat;
    Format::from_levels(&[LevelFormat::hashed(), LevelFormat::compressed()], &[0, 1]).unwrap()
}

#[test]
fn threads_from_the_engine_apply_and_results_do_not_change() {
    let mut rng = Rng::new(7);
    let a = random_tensor(&mut rng, &[300, 200], EntryKind::Skewed, &Format::csr()).unwrap();
    let b = random_tensor(&mut rng, &[200, 100], EntryKind::Random, &Format::csr()).unwrap();
    let inputs = Inputs::new().with("A", &a).with("B", &b);
    let statement = "C(i,j) = A(i,k) * B(k,j)";
    let small_chunks = EvalOptions {
        chunk_work: Some(50),
        ..EvalOptions::default()
    };
    let one = Engine::new().with_threads(Some(1));
    let three = Engine::new().with_threads(Some(3));
    let whole = one.eval_with(statement, &inputs, &small_chunks).unwrap();
    let split = three.eval_with(statement, &inputs, &small_chunks).unwrap();
    assert!(same_bits(&whole, &split));
    assert_eq!(one.stats().split_runs, 0, "one thread runs a sparse output whole");
    assert_eq!(three.stats().split_runs, 1);
    assert!(
        three.stats().chunks > 3 && three.stats().most_threads == 3,
        "{:?}",
        three.stats()
    );
}

#[test]
fn a_cancelled_run_stops_and_a_reset_token_runs_to_the_same_bits() {
    use tessera_engine::runtime::CancelToken;
    use tessera_engine::EngineError;
    let mut rng = Rng::new(11);
    let a = random_tensor(&mut rng, &[200, 150], EntryKind::Random, &Format::csr()).unwrap();
    let b = random_tensor(&mut rng, &[150, 100], EntryKind::Random, &Format::csr()).unwrap();
    let inputs = Inputs::new().with("A", &a).with("B", &b);
    let engine = Engine::new();
    let cancel = CancelToken::new();
    for threads in [1, 3] {
        let options = EvalOptions {
            threads: Some(threads),
            chunk_work: Some(20),
            cancel: Some(cancel.clone()),
            ..EvalOptions::default()
        };
        cancel.cancel();
        for statement in [
            "C(i,j) = A(i,k) * B(k,j)",
            "s = A(i,j) * A(i,j)",
            "y(j) = A(i,j) * A(i,j)",
        ] {
            let run = engine.eval_with(statement, &inputs, &options);
            assert!(matches!(run, Err(EngineError::Cancelled)), "{statement}: {run:?}");
            cancel.reset();
            let whole = engine.eval_with(
                statement,
                &inputs,
                &EvalOptions {
                    cancel: None,
                    ..options.clone()
                },
            );
            let tokened = engine.eval_with(statement, &inputs, &options);
            assert!(same_bits(&whole.unwrap(), &tokened.unwrap()), "{statement}");
            cancel.cancel();
        }
    }
}

/// A run's progress counts its chunks: as many as the run was split into,
/// all done when it returns, on one thread or several; a run that is not
/// split counts one.
#[test]
fn progress_counts_every_chunk_of_a_run() {
    use tessera_engine::runtime::Progress;
    let engine = Engine::new();
    let a = random_tensor(&mut Rng::new(3), &[400, 300], EntryKind::Random, &Format::csr()).unwrap();
    let x = random_tensor(&mut Rng::new(4), &[300], EntryKind::Full, &Format::dense(1)).unwrap();
    let inputs = Inputs::new().with("A", &a).with("x", &x);
    for threads in [1, 2, 7] {
        let progress = Progress::new();
        let before = engine.stats().chunks;
        let options = EvalOptions {
            threads: Some(threads),
            chunk_work: Some(50),
            progress: Some(progress.clone()),
            ..EvalOptions::default()
        };
        engine.eval_with("y(i) = A(i,j) * x(j)", &inputs, &options).unwrap();
        let chunks = engine.stats().chunks - before;
        assert!(chunks > 10, "{threads} threads: {chunks} chunks");
        assert_eq!(progress.total(), chunks, "{threads} threads");
        assert_eq!(progress.done(), progress.total(), "{threads} threads");
    }
    // A statement with no outer loop runs whole: one unit of progress.
    let progress = Progress::new();
    let options = EvalOptions {
        progress: Some(progress.clone()),
        ..EvalOptions::default()
    };
    engine.eval_with("s = x(j) * x(j)", &inputs, &options).unwrap();
    assert_eq!((progress.done(), progress.total()), (1, 1));
}

#[test]
fn a_kernel_run_again_refills_its_last_parts_with_the_same_bits_as_one_thread() {
    // The kernel keeps its last run's parts and assembles the next run's
    // in them: a larger result, a smaller one (the parts' old entries must
    // not leak into it), then the larger again, each on inputs of another
    // kind, must give what one thread gives.
    let mut rng = Rng::new(41);
    let statement = "C(i,j) = A(i,k) * B(k,j)";
    let b = random_tensor(&mut rng, &[80, 90], EntryKind::Random, &Format::csr()).unwrap();
    let dense = random_tensor(&mut rng, &[120, 80], EntryKind::Duplicates, &Format::csr()).unwrap();
    let sparse = random_tensor(&mut rng, &[120, 80], EntryKind::EmptySlices, &Format::csr()).unwrap();
    let split = Engine::new();
    let whole = Engine::new().with_threads(Some(1));
    let mut sizes = Vec::new();
    for a in [&dense, &sparse, &dense, &sparse] {
        let inputs = Inputs::new().with("A", a).with("B", &b);
        let options = EvalOptions {
            threads: Some(2),
            chunk_work: Some(64),
            ..EvalOptions::default()
        };
        let before = split.stats().split_runs;
        let many = split.eval_with(statement, &inputs, &options).unwrap();
        assert_eq!(split.stats().split_runs, before + 1, "{:?}", split.stats());
        let one = whole.eval_with(statement, &inputs, &EvalOptions::default()).unwrap();
        assert!(same_bits(&one, &many), "run {}", sizes.len());
        sizes.push(many.values().len());
        let refs = [("A", a), ("B", &b)];
        check_statement(&split, statement, &refs, None, &[]).unwrap();
    }
    assert!(sizes[0] > sizes[1], "the second result is the smaller: {sizes:?}");
}
