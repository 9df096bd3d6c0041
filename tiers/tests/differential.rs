//! The engine's kernels in every format combination, and random
//! statements, run on the interpreter and on the Cranelift tier: both must
//! agree with the dense reference and with each other.
//!
//! `TESSERA_SEEDS=first..end` runs other seeds of the random statements.

mod common;

use common::{check_both_tiers, jit_engine, Tally};
use tessera_engine::testing::{
    named_formats, output_formats, random_format, random_statement, random_tensor, seeds_from_env, EntryKind, Rng,
    StatementConfig,
};
use tessera_engine::Engine;
use tessera_formats::{Format, Tensor};

/// What `statement` gives on the interpreter (`engines.0`) and on the
/// compiled tier (`engines.1`, promoting at once), with `options`
/// otherwise: the pair whose bits must agree.
fn on_both_tiers(
    engines: (&Engine, &Engine),
    statement: &str,
    inputs: &tessera_engine::Inputs<'_>,
    options: tessera_engine::EvalOptions,
) -> (Tensor<f64>, Tensor<f64>) {
    use tessera_engine::runtime::TierChoice;
    let on = |engine: &Engine, tier| {
        let options = tessera_engine::EvalOptions {
            tier,
            ..options.clone()
        };
        engine.eval_with(statement, inputs, &options).unwrap()
    };
    (on(engines.0, TierChoice::Interpreter), on(engines.1, TierChoice::Auto))
}

/// One kernel: its statement, and the shape of each tensor it reads.
struct Kernel {
    statement: &'static str,
    tensors: &'static [(&'static str, &'static [usize])],
    sizes: &'static [(&'static str, usize)],
}

const KERNELS: &[Kernel] = &[
    Kernel {
        statement: "y(i) = A(i,j) * x(j)",
        tensors: &[("A", &[7, 9]), ("x", &[9])],
        sizes: &[],
    },
    Kernel {
        statement: "y(j) = A(i,j) * x(i)",
        tensors: &[("A", &[7, 9]), ("x", &[7])],
        sizes: &[],
    },
    Kernel {
        statement: "y(i) += A(i,j) * x(j)",
        tensors: &[("A", &[6, 6]), ("x", &[6]), ("y", &[6])],
        sizes: &[],
    },
    Kernel {
        statement: "C(i,j) = A(i,k) * B(k,j)",
        tensors: &[("A", &[6, 8]), ("B", &[8, 5])],
        sizes: &[],
    },
    Kernel {
        statement: "C(i,j) = A(i,j) + B(i,j)",
        tensors: &[("A", &[6, 9]), ("B", &[6, 9])],
        sizes: &[],
    },
    Kernel {
        statement: "C(i,j) = max(A(i,j), B(j,i))",
        tensors: &[("A", &[6, 6]), ("B", &[6, 6])],
        sizes: &[],
    },
    Kernel {
        statement: "C(i,j) = 2 * A(i,j) - B(j,i) * -0.5",
        tensors: &[("A", &[6, 6]), ("B", &[6, 6])],
        sizes: &[],
    },
    Kernel {
        statement: "C(i,j) = abs(2 * A(i,j))",
        tensors: &[("A", &[6, 7])],
        sizes: &[],
    },
    Kernel {
        statement: "C(j,i) = 2 * A(i,j)",
        tensors: &[("A", &[7, 9])],
        sizes: &[],
    },
    Kernel {
        statement: "C(i,j) = A(i,j) * B(i,j) - 2 * A(i,j)",
        tensors: &[("A", &[6, 9]), ("B", &[6, 9])],
        sizes: &[],
    },
    Kernel {
        statement: "C(i,j) = A(i,j) * D(i,k) * E(k,j)",
        tensors: &[("A", &[6, 4]), ("D", &[6, 3]), ("E", &[3, 4])],
        sizes: &[],
    },
    Kernel {
        statement: "a = A(i,j) * B(i,j)",
        tensors: &[("A", &[5, 7]), ("B", &[5, 7])],
        sizes: &[],
    },
    Kernel {
        statement: "y(i) = A(i,j)",
        tensors: &[("A", &[8, 5])],
        sizes: &[],
    },
    Kernel {
        statement: "C(i,j) = x(i) * z(j)",
        tensors: &[("x", &[6]), ("z", &[5])],
        sizes: &[],
    },
    Kernel {
        statement: "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
        tensors: &[("B", &[4, 5, 3]), ("C", &[5, 6]), ("D", &[3, 6])],
        sizes: &[],
    },
    Kernel {
        statement: "A(i,j) = B(i,j,k) * c(k)",
        tensors: &[("B", &[4, 3, 5]), ("c", &[5])],
        sizes: &[],
    },
];

/// The formats the other operands take, in turn, while the first runs
/// through every named format.
fn companions(shape: &[usize]) -> Vec<Format> {
    let mut out = vec![Format::dense(shape.len())];
    match shape.len() {
        1 => out.push(Format::sparse_vector()),
        2 => out.extend([
            Format::csr(),
            Format::csc(),
            Format::coo(2),
            Format::hash_rows(),
            Format::dcsr(),
        ]),
        n => out.extend([Format::csf(n), Format::coo(n)]),
    }
    out
}

/// Outputs every kernel is tried with: the default, dense, and the sparse
/// formats of the output's order (CSR and COO for matrices).
fn outputs(order: usize) -> Vec<Option<Format>> {
    let mut out = vec![None, Some(Format::dense(order))];
    match order {
        0 => {}
        1 => out.push(Some(Format::sparse_vector())),
        2 => out.extend([Some(Format::csr()), Some(Format::coo(2)), Some(Format::dcsr())]),
        n => out.extend([Some(Format::csf(n)), Some(Format::coo(n))]),
    }
    out
}

#[test]
fn every_kernel_in_every_format_agrees_on_both_tiers() {
    let interp = Engine::new();
    let jit = jit_engine();
    let mut rng = Rng::new(0x7e55e7a);
    let mut tally = Tally::default();
    for kernel in KERNELS {
        let order = kernel
            .statement
            .split('=')
            .next()
            .map_or(0, |lhs| lhs.matches(',').count() + 1);
        let order = if kernel.statement.starts_with("a ") { 0 } else { order };
        let (first, rest) = kernel.tensors.split_first().expect("kernels read a tensor");
        for (round, format) in named_formats(first.1).into_iter().enumerate() {
            let kind = if round % 3 == 0 {
                EntryKind::Skewed
            } else {
                EntryKind::Random
            };
            let a = match random_tensor(&mut rng, first.1, kind, &format) {
                Ok(t) => t,
                Err(_) => continue,
            };
            let mut tensors: Vec<(&str, Tensor<f64>)> = vec![(first.0, a)];
            for (k, (name, shape)) in rest.iter().enumerate() {
                let choices = companions(shape);
                let f = &choices[(round + k) % choices.len()];
                let t = random_tensor(&mut rng, shape, EntryKind::Random, f).expect("companion formats pack anything");
                tensors.push((name, t));
            }
            let refs: Vec<(&str, &Tensor<f64>)> = tensors.iter().map(|(n, t)| (*n, t)).collect();
            for output in outputs(order) {
                let result = check_both_tiers(&interp, &jit, kernel.statement, &refs, output.as_ref(), kernel.sizes);
                tally.record("", result);
            }
        }
    }
    tally.finish(&jit);
}

/// Statements per run.
const CASES: u64 = 2000;

/// The seeds to run: `0..CASES`, or `TESSERA_SEEDS`.
fn seeds() -> std::ops::Range<u64> {
    seeds_from_env("TESSERA_SEEDS", 0..CASES)
}

#[test]
fn random_statements_agree_on_both_tiers() {
    let interp = Engine::new();
    let jit = jit_engine();
    let mut tally = Tally::default();
    for seed in seeds() {
        let mut rng = Rng::new(seed);
        let stmt = random_statement(&mut rng, &StatementConfig::default());
        let mut tensors: Vec<(String, Tensor<f64>)> = Vec::new();
        let mut refused = false;
        for spec in &stmt.tensors {
            let kind = if spec.divisor {
                EntryKind::Full
            } else {
                EntryKind::random(&mut rng)
            };
            let format = random_format(&mut rng, &spec.shape);
            match random_tensor(&mut rng, &spec.shape, kind, &format) {
                Ok(t) => tensors.push((spec.name.clone(), t)),
                Err(_) => refused = true,
            }
        }
        if refused {
            continue;
        }
        let output = if rng.percent(15) {
            None
        } else {
            Some(rng.pick(&output_formats(&stmt.output_shape)).clone())
        };
        let refs: Vec<(&str, &Tensor<f64>)> = tensors.iter().map(|(n, t)| (n.as_str(), t)).collect();
        let sizes: Vec<(&str, usize)> = stmt.sizes.iter().map(|(v, n)| (v.as_str(), *n)).collect();
        let result = check_both_tiers(&interp, &jit, &stmt.text, &refs, output.as_ref(), &sizes);
        tally.record(&format!("seed {seed}: "), result);
    }
    tally.finish(&jit);
}

/// Dense row updates (the inner loops of SpMM and MTTKRP) of every width:
/// the Cranelift tier keeps whole tiles of an output row in registers
/// while a row's entries add to them, and takes the columns past the last
/// tile one entry at a time. Every width gives the interpreter's bits.
#[test]
fn dense_row_updates_of_any_width_give_the_interpreters_bits() {
    use tessera_engine::bytecode::Op;
    use tessera_engine::runtime::TierChoice;
    use tessera_engine::testing::same_bits;
    use tessera_engine::{EvalOptions, Inputs};
    let interp = Engine::new();
    let jit = jit_engine();
    let mut rng = Rng::new(41);
    let eval = |engine: &Engine, statement: &str, inputs: &Inputs<'_>, tier| {
        let options = EvalOptions {
            output_format: Some(Format::dense(2)),
            tier,
            ..EvalOptions::default()
        };
        engine.eval_with(statement, inputs, &options).unwrap()
    };
    for columns in [0, 1, 2, 7, 8, 9, 15, 16, 17, 33] {
        for kind in [
            EntryKind::Random,
            EntryKind::EmptySlices,
            EntryKind::Skewed,
            EntryKind::Empty,
        ] {
            let a = random_tensor(&mut rng, &[7, 6], kind, &Format::csr()).unwrap();
            let x = random_tensor(&mut rng, &[6, columns], EntryKind::Full, &Format::dense(2)).unwrap();
            let b = random_tensor(&mut rng, &[5, 6, 4], kind, &Format::csf(3)).unwrap();
            let c = random_tensor(&mut rng, &[6, columns], EntryKind::Random, &Format::dense(2)).unwrap();
            let d = random_tensor(&mut rng, &[4, columns], EntryKind::Full, &Format::dense(2)).unwrap();
            let cases = [
                ("C(i,j) = A(i,k) * X(k,j)", vec![("A", &a), ("X", &x)]),
                (
                    "M(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
                    vec![("B", &b), ("C", &c), ("D", &d)],
                ),
            ];
            for (statement, tensors) in cases {
                let inputs = tensors.iter().fold(Inputs::new(), |i, &(n, t)| i.with(n, t));
                let formats: Vec<(&str, Format)> = tensors.iter().map(|&(n, t)| (n, t.format().clone())).collect();
                let kernel = jit.compile(statement, &formats, &Format::dense(2)).unwrap();
                assert!(
                    kernel.program().ops.iter().any(|op| matches!(op, Op::RowAxpy { .. })),
                    "{statement}: no dense row update:\n{}",
                    kernel.program()
                );
                let want = eval(&interp, statement, &inputs, TierChoice::Interpreter);
                let got = eval(&jit, statement, &inputs, TierChoice::Auto);
                assert!(
                    same_bits(&want, &got),
                    "{statement}, {columns} columns, {kind:?}: the tiers' bits differ"
                );
                check_both_tiers(&interp, &jit, statement, &tensors, Some(&Format::dense(2)), &[]).unwrap();
            }
        }
    }
}

/// Dense updates (`Op::RowAxpy`: SpMM's and MTTKRP's rows of B added per
/// stored entry, in tiles of eight kept in registers; `Op::DenseAxpy` and
/// `Op::TempAxpy`: a dense row into the output or a temporary;
/// `Op::ValuesAxpy`: values on the driver's pattern) are block ops written
/// once for every tier: the same bits on both tiers at every width, whole
/// tiles, pairs and a last odd component alike.
#[test]
fn dense_updates_of_any_width_give_the_interpreters_bits() {
    use tessera_engine::bytecode::Op;
    use tessera_engine::schedule::Schedule;
    use tessera_engine::testing::{check_scheduled, same_bits, Tolerance};
    use tessera_engine::{EvalOptions, Inputs};
    let interp = Engine::new();
    let jit = jit_engine();
    let mut rng = Rng::new(47);
    let check_into =
        |output: Format, statement: &str, tensors: &[(&str, &Tensor)], schedule: &str, op: fn(&Op) -> bool| {
            let schedule: Schedule = schedule.parse().unwrap();
            let inputs = tensors.iter().fold(Inputs::new(), |i, &(n, t)| i.with(n, t));
            let formats: Vec<(&str, Format)> = tensors.iter().map(|&(n, t)| (n, t.format().clone())).collect();
            let kernel = jit.compile_scheduled(statement, &formats, &output, &schedule).unwrap();
            assert!(
                kernel.program().ops.iter().any(op),
                "{statement}: not the expected block op:\n{}",
                kernel.program()
            );
            let options = EvalOptions {
                output_format: Some(output.clone()),
                schedule: schedule.clone(),
                ..EvalOptions::default()
            };
            let (want, got) = on_both_tiers((&interp, &jit), statement, &inputs, options);
            assert!(
                same_bits(&want, &got),
                "{statement} on {formats:?}: the tiers' bits differ"
            );
            for engine in [&interp, &jit] {
                check_scheduled(
                    engine,
                    statement,
                    tensors,
                    Some(&output),
                    &[],
                    Tolerance::default(),
                    &schedule,
                )
                .unwrap();
            }
        };
    let check = |statement: &str, tensors: &[(&str, &Tensor)], schedule: &str, op: fn(&Op) -> bool| {
        check_into(Format::dense(2), statement, tensors, schedule, op)
    };
    for kind in [
        EntryKind::Random,
        EntryKind::EmptySlices,
        EntryKind::Skewed,
        EntryKind::Empty,
    ] {
        for width in [0, 1, 2, 3, 7, 8, 9, 16, 17, 33] {
            let a = random_tensor(&mut rng, &[7, 6], kind, &Format::csr()).unwrap();
            let b = random_tensor(&mut rng, &[6, width], EntryKind::Full, &Format::dense(2)).unwrap();
            let d = random_tensor(&mut rng, &[6, width], EntryKind::Random, &Format::dense(2)).unwrap();
            let is_row_axpy: fn(&Op) -> bool = |op| matches!(op, Op::RowAxpy { .. });
            let spmm = [("A", &a), ("B", &b), ("D", &d)];
            check("C(i,k) = A(i,j) * B(j,k)", &spmm, "", is_row_axpy);
            check("C(i,k) = A(i,j) * B(j,k) * D(j,k)", &spmm, "", is_row_axpy);
            // COO's rows are the entries of a run of equal rows: one row
            // update per run. CSC's columns scatter a dense row per entry.
            let coo = random_tensor(&mut rng, &[7, 6], kind, &Format::coo(2)).unwrap();
            check("C(i,k) = A(i,j) * B(j,k)", &[("A", &coo), ("B", &b)], "", is_row_axpy);
            let csc = random_tensor(&mut rng, &[7, 6], kind, &Format::csc()).unwrap();
            check("C(i,k) = A(i,j) * B(j,k)", &[("A", &csc), ("B", &b)], "", |op| {
                matches!(op, Op::DenseAxpy { .. })
            });
            let t = random_tensor(&mut rng, &[5, 4, 3], kind, &Format::csf(3)).unwrap();
            let c = random_tensor(&mut rng, &[4, width], EntryKind::Full, &Format::dense(2)).unwrap();
            let e = random_tensor(&mut rng, &[3, width], EntryKind::Random, &Format::dense(2)).unwrap();
            check(
                "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
                &[("B", &t), ("C", &c), ("D", &e)],
                "reorder(i, k, l, j); precompute(B(i,k,l) * D(l,j), j, j, w)",
                |op| matches!(op, Op::TempAxpy { .. }),
            );
        }
        // Values on the driver's pattern: a scaled copy (pairs and a last
        // odd value) and products gathered at the coordinates.
        for columns in [1, 6, 9] {
            let a = random_tensor(&mut rng, &[5, columns], kind, &Format::csr()).unwrap();
            let x = random_tensor(&mut rng, &[columns], EntryKind::Full, &Format::dense(1)).unwrap();
            let z = random_tensor(&mut rng, &[columns], EntryKind::Random, &Format::dense(1)).unwrap();
            let is_values_axpy: fn(&Op) -> bool = |op| matches!(op, Op::ValuesAxpy { .. });
            for statement in ["C(i,j) = A(i,j) * 2", "C(i,j) = A(i,j) * x(j) * z(j)"] {
                let tensors = [("A", &a), ("x", &x), ("z", &z)];
                check_into(Format::csr(), statement, &tensors, "", is_values_axpy);
            }
        }
    }
}

/// Row dots (`Op::RowsDot`: SpMV in any semiring, a block op written once
/// for every tier) give the interpreter's bits on the compiled tier: sums
/// in order, minima and maxima in two chains, on rows of every length.
#[test]
fn row_dots_in_every_semiring_give_the_interpreters_bits() {
    use tessera_engine::bytecode::Op;
    use tessera_engine::runtime::TierChoice;
    use tessera_engine::testing::{random_entries, same_bits};
    use tessera_engine::{EvalOptions, Inputs};
    let interp = Engine::new();
    let jit = jit_engine();
    let mut rng = Rng::new(59);
    // Each statement with the fill that lets a row's absent entries vanish.
    let statements = [
        ("y(i) = A(i,j) * x(j)", 0.0),
        ("y(i) = A(i,j) * x(j) * z(j)", 0.0),
        ("y(i) = min(j, A(i,j) + x(j))", f64::INFINITY),
        ("y(i) = max(j, A(i,j) + x(j) + z(j))", f64::NEG_INFINITY),
    ];
    for kind in [
        EntryKind::Random,
        EntryKind::EmptySlices,
        EntryKind::Skewed,
        EntryKind::Empty,
        EntryKind::Full,
    ] {
        for (columns, (statement, fill)) in [1, 2, 7, 40].into_iter().flat_map(|c| statements.map(|s| (c, s))) {
            let entries = random_entries(&mut rng, &[9, columns], kind);
            let a = Tensor::pack_with_fill(&entries, Format::csr(), fill).unwrap();
            let x = random_tensor(&mut rng, &[columns], EntryKind::Full, &Format::dense(1)).unwrap();
            let z = random_tensor(&mut rng, &[columns], EntryKind::Random, &Format::dense(1)).unwrap();
            let tensors = [("A", &a), ("x", &x), ("z", &z)];
            let inputs = Inputs::new().with("A", &a).with("x", &x).with("z", &z);
            {
                let output = Format::dense(1);
                let eval_options = |tier| EvalOptions {
                    output_format: Some(output.clone()),
                    tier,
                    ..EvalOptions::default()
                };
                let kernel = jit
                    .kernel_for(statement, &inputs, &eval_options(TierChoice::Auto))
                    .unwrap();
                assert!(
                    kernel.program().ops.iter().any(|op| matches!(op, Op::RowsDot { .. })),
                    "{statement}: not a row dot:\n{}",
                    kernel.program()
                );
                let eval = |engine: &Engine, tier| engine.eval_with(statement, &inputs, &eval_options(tier)).unwrap();
                let (want, got) = (eval(&interp, TierChoice::Interpreter), eval(&jit, TierChoice::Auto));
                assert!(
                    same_bits(&want, &got),
                    "{statement} on {kind:?}: the tiers' bits differ"
                );
                check_both_tiers(&interp, &jit, statement, &tensors, Some(&output), &[]).unwrap();
            }
        }
    }
}

/// Inner products (`Op::DenseDot`: SDDMM's rank loop; `Op::BlockRowsDot`:
/// a BCSR block's rows times x; `Op::DotBlock`: a DCSR row times x) are
/// block ops written once for every tier: unrolled up to 16 values, a
/// loop beyond, and the same bits on both tiers at every length.
#[test]
fn dots_of_any_length_give_the_interpreters_bits() {
    use tessera_engine::bytecode::Op;
    use tessera_engine::runtime::TierChoice;
    use tessera_engine::testing::same_bits;
    use tessera_engine::{EvalOptions, Inputs};
    let interp = Engine::new();
    let jit = jit_engine();
    let mut rng = Rng::new(43);
    let eval = |engine: &Engine, statement: &str, inputs: &Inputs<'_>, output: &Format, tier| {
        let options = EvalOptions {
            output_format: Some(output.clone()),
            tier,
            ..EvalOptions::default()
        };
        engine.eval_with(statement, inputs, &options).unwrap()
    };
    let check = |statement: &str, tensors: &[(&str, &Tensor)], output: &Format, op: fn(&Op) -> bool| {
        let inputs = tensors.iter().fold(Inputs::new(), |i, &(n, t)| i.with(n, t));
        let formats: Vec<(&str, Format)> = tensors.iter().map(|&(n, t)| (n, t.format().clone())).collect();
        let kernel = jit.compile(statement, &formats, output).unwrap();
        assert!(
            kernel.program().ops.iter().any(op),
            "{statement}: not the expected block op:\n{}",
            kernel.program()
        );
        let want = eval(&interp, statement, &inputs, output, TierChoice::Interpreter);
        let got = eval(&jit, statement, &inputs, output, TierChoice::Auto);
        assert!(
            same_bits(&want, &got),
            "{statement} on {formats:?}: the tiers' bits differ"
        );
        check_both_tiers(&interp, &jit, statement, tensors, Some(output), &[]).unwrap();
    };
    for kind in [
        EntryKind::Random,
        EntryKind::EmptySlices,
        EntryKind::Skewed,
        EntryKind::Empty,
    ] {
        for rank in [0, 1, 2, 15, 16, 17, 33] {
            let a = random_tensor(&mut rng, &[7, 6], kind, &Format::csr()).unwrap();
            let u = random_tensor(&mut rng, &[7, rank], EntryKind::Full, &Format::dense(2)).unwrap();
            let v = random_tensor(&mut rng, &[6, rank], EntryKind::Random, &Format::dense(2)).unwrap();
            check(
                "C(i,j) = A(i,j) * U(i,k) * V(j,k)",
                &[("A", &a), ("U", &u), ("V", &v)],
                &Format::csr(),
                |op| matches!(op, Op::DenseDot { .. }),
            );
        }
        for factors in ["x(j)", "x(j) * z(j)"] {
            let a = random_tensor(&mut rng, &[9, 40], kind, &Format::dcsr()).unwrap();
            let x = random_tensor(&mut rng, &[40], EntryKind::Full, &Format::dense(1)).unwrap();
            let z = random_tensor(&mut rng, &[40], EntryKind::Random, &Format::dense(1)).unwrap();
            check(
                &format!("y(i) = A(i,j) * {factors}"),
                &[("A", &a), ("x", &x), ("z", &z)],
                &Format::dense(1),
                |op| matches!(op, Op::DotBlock { .. }),
            );
        }
        // Blocks of 16 values or fewer per row are unrolled, longer rows
        // loop; a block of more than 64 values loops over its rows too.
        for (rows, cols) in [(1, 1), (2, 3), (4, 16), (4, 17), (8, 16)] {
            let format = Format::bcsr(rows, cols).unwrap();
            let a = random_tensor(&mut rng, &[2 * rows, 3 * cols], kind, &format).unwrap();
            let x = random_tensor(&mut rng, &[3 * cols], EntryKind::Full, &Format::dense(1)).unwrap();
            check(
                "y(i) = A(i,j) * x(j)",
                &[("A", &a), ("x", &x)],
                &Format::dense(1),
                |op| matches!(op, Op::BlockRowsDot { .. } | Op::DenseRowsDot { .. }),
            );
        }
    }
}

/// Strided updates (`Op::StridedAxpy`: a DIA diagonal or an ELL slot times
/// a vector, added into the rows of the output) are one block op for every
/// tier: the same bits on both, with unit steps (the compiled vector loop)
/// and other steps, a scale, and gathers.
#[test]
fn strided_updates_give_the_interpreters_bits() {
    use tessera_engine::bytecode::Op;
    use tessera_engine::schedule::Schedule;
    use tessera_engine::testing::same_bits;
    use tessera_engine::{EvalOptions, Inputs};
    let interp = Engine::new();
    let jit = jit_engine();
    let mut rng = Rng::new(53);
    // SpMV's updates are deferred and run by the runtime on both tiers;
    // beside another term they run in the kernel (the compiled vector
    // loop for DIA, gathers for ELL). SpMM updates rows of x's columns
    // (the vector loop, the interpreter's slices, or with three factors
    // its shared op); in a column-major x or Y, columns of rows.
    let (row_major, column_major) = (Format::dense(2), Format::dense_ordered(&[1, 0]));
    let cases: [(&str, &[usize], &Format, Format); 8] = [
        ("y(i) = A(i,j) * x(j)", &[9], &Format::dense(1), Format::dense(1)),
        ("y(i) = A(i,j) * x(j) + x(i)", &[9], &Format::dense(1), Format::dense(1)),
        (
            "y(i) = 3 * A(i,j) * x(j) + x(i)",
            &[9],
            &Format::dense(1),
            Format::dense(1),
        ),
        ("Y(i,k) = A(i,j) * x(j,k)", &[9, 3], &row_major, row_major.clone()),
        ("Y(i,k) = 3 * A(i,j) * x(j,k)", &[9, 5], &row_major, row_major.clone()),
        ("Y(i,k) = A(i,j) * x(j,k)", &[9, 5], &row_major, column_major.clone()),
        ("Y(i,k) = A(i,j) * x(j,k)", &[9, 4], &column_major, row_major.clone()),
        (
            "Y(i,k) = x(i,k) * A(i,j) * x(j,k)",
            &[9, 3],
            &row_major,
            row_major.clone(),
        ),
    ];
    let (mut strided, mut rows_of_products) = (0, 0);
    for format in [Format::dia(), Format::ell()] {
        for kind in [
            EntryKind::Random,
            EntryKind::EmptySlices,
            EntryKind::Skewed,
            EntryKind::Empty,
        ] {
            for (statement, x_shape, x_format, output) in &cases {
                let a = random_tensor(&mut rng, &[9, 9], kind, &format).unwrap();
                // Values that round: small integers would multiply exactly
                // in any order, and hide a reordered product.
                let n: usize = x_shape.iter().product();
                let values = (0..n).map(|_| rng.next_u64() as f64 / 3e18 - 3.0).collect();
                let x = Tensor::from_dense(x_shape, values).unwrap();
                let x = x.convert(x_format).unwrap();
                let formats = [("A", format.clone()), ("x", x.format().clone())];
                let kernel = jit
                    .compile_scheduled(statement, &formats, output, &Schedule::new())
                    .unwrap();
                let ops = &kernel.program().ops;
                strided += usize::from(ops.iter().any(|op| matches!(op, Op::StridedAxpy { .. })));
                rows_of_products += usize::from(
                    ops.iter()
                        .any(|op| matches!(op, Op::StridedAxpy { columns: Some(_), .. })),
                );
                let inputs = Inputs::new().with("A", &a).with("x", &x);
                let options = EvalOptions {
                    output_format: Some(output.clone()),
                    ..EvalOptions::default()
                };
                let (want, got) = on_both_tiers((&interp, &jit), statement, &inputs, options);
                assert!(
                    same_bits(&want, &got),
                    "{statement} on {format}, {kind:?}: the tiers' bits differ"
                );
            }
        }
    }
    assert!(strided >= 16, "only {strided} of the kernels update in strides");
    // SpMM into a row-major Y (three cases on DIA, two on ELL, whose rows
    // gather only at the stored column; four kinds of entries each); a
    // column-major Y loops over its columns outside.
    assert!(
        rows_of_products >= 20,
        "only {rows_of_products} of the kernels update rows of products"
    );
}

/// A DIA or BCSR operand scaled into its own pattern is one `ValuesAxpy`
/// (per diagonal: its rows' values are one run of positions, and its
/// columns' level has no coordinate array to read; for all block rows at
/// once: their blocks' values follow one another): the same bits on both
/// tiers as the interpreter's, and the reference's values.
#[test]
fn scaled_structured_values_written_in_place_give_the_interpreters_bits() {
    use tessera_engine::bytecode::Op;
    use tessera_engine::schedule::Schedule;
    use tessera_engine::testing::{check_statement, same_bits};
    use tessera_engine::{EvalOptions, Inputs};
    let interp = Engine::new();
    let jit = jit_engine();
    let mut rng = Rng::new(59);
    let mut checked = 0;
    let cases = [
        (Format::dia(), [[9, 9], [5, 12], [1, 1]]),
        (Format::bcsr(2, 3).unwrap(), [[6, 6], [4, 9], [2, 3]]),
    ];
    for (format, shapes) in &cases {
        for statement in ["C(i,j) = 2 * A(i,j)", "C(i,j) = A(i,j) * 0.3"] {
            let kernel = jit
                .compile_scheduled(statement, &[("A", format.clone())], format, &Schedule::new())
                .unwrap();
            assert!(
                kernel
                    .program()
                    .ops
                    .iter()
                    .any(|op| matches!(op, Op::ValuesAxpy { .. })),
                "{statement} on {format}: not one op over runs of values:\n{}",
                kernel.program()
            );
            for kind in EntryKind::ALL {
                for shape in shapes {
                    let a = random_tensor(&mut rng, shape, kind, format).unwrap();
                    let inputs = Inputs::new().with("A", &a);
                    let options = EvalOptions {
                        output_format: Some(format.clone()),
                        ..EvalOptions::default()
                    };
                    let (want, got) = on_both_tiers((&interp, &jit), statement, &inputs, options);
                    assert!(
                        same_bits(&want, &got),
                        "{statement} on {format} {shape:?}, {kind:?}: the tiers' bits differ"
                    );
                    check_statement(&interp, statement, &[("A", &a)], Some(format), &[])
                        .unwrap_or_else(|e| panic!("{statement} on {format} {shape:?}, {kind:?}: {e}"));
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 2 * 2 * 3 * EntryKind::ALL.len());
}

/// Sums over a BCSR matrix's values, one `DenseDot` per block row, give
/// the interpreter's bits on the compiled tier.
#[test]
fn sums_over_block_rows_give_the_interpreters_bits() {
    use tessera_engine::testing::same_bits;
    use tessera_engine::{EvalOptions, Inputs};
    let interp = Engine::new();
    let jit = jit_engine();
    let mut rng = Rng::new(61);
    let format = Format::bcsr(2, 3).unwrap();
    for statement in ["s = A(i,j) * A(i,j)", "s = 0.5 * A(i,j) * A(i,j) * A(i,j)"] {
        for kind in EntryKind::ALL {
            let a = random_tensor(&mut rng, &[8, 9], kind, &format).unwrap();
            let inputs = Inputs::new().with("A", &a);
            let (want, got) = on_both_tiers((&interp, &jit), statement, &inputs, EvalOptions::default());
            assert!(same_bits(&want, &got), "{statement}, {kind:?}: the tiers' bits differ");
        }
    }
}
