//! Block ops: the planner turns known loop shapes into one bytecode op,
//! and the results stay those of the dense reference.

use tessera_engine::bytecode::Op;
use tessera_engine::testing::{check_statement, named_formats, random_tensor, EntryKind, Rng};
use tessera_engine::Engine;
use tessera_formats::Format;

/// SpGEMM's inner loop (a row of B scaled by one entry of A, added into
/// the workspace) is one `WorkspaceAxpy`, and the interpreter runs the
/// loop over a row of A around it as one `PositionLoop`, for any awkward
/// operands and for the sparse output formats that need a workspace.
#[test]
fn spgemm_rows_are_scattered_into_the_workspace_by_one_op_and_match_the_reference() {
    use tessera_engine::bytecode::PositionBody;
    let statement = "C(i,j) = A(i,k) * B(k,j)";
    let engine = Engine::new();
    let mut rng = Rng::new(17);
    for output in [Format::csr(), Format::dcsr(), Format::coo(2)] {
        let kernel = engine
            .compile(statement, &[("A", Format::csr()), ("B", Format::csr())], &output)
            .unwrap();
        let ops = &kernel.program().ops;
        assert!(
            ops.iter().any(|op| matches!(op, Op::WorkspaceAxpy { .. })),
            "no workspace row op for output {output}:\n{}",
            kernel.program()
        );
        assert!(
            !ops.iter().any(|op| matches!(op, Op::WorkspaceAccum { .. })),
            "entries still accumulated one by one for output {output}"
        );
        assert!(
            ops.iter().any(|op| matches!(
                op,
                Op::PositionLoop {
                    body: PositionBody::WorkspaceRows { .. },
                    ..
                }
            )),
            "no position loop over A's row for output {output}:\n{}",
            kernel.program()
        );
        for kind in [
            EntryKind::Empty,
            EntryKind::Single,
            EntryKind::Random,
            EntryKind::EmptySlices,
            EntryKind::Duplicates,
        ] {
            let a = random_tensor(&mut rng, &[9, 7], kind, &Format::csr()).unwrap();
            let b = random_tensor(&mut rng, &[7, 11], EntryKind::Random, &Format::csr()).unwrap();
            check_statement(&engine, statement, &[("A", &a), ("B", &b)], Some(&output), &[]).unwrap();
        }
    }
}

/// A factor fixed by an outer loop besides A scales the row too:
/// `C(i,j) = A(i,k) * B(k,j) * s(i)`.
#[test]
fn a_workspace_row_with_two_fixed_factors_matches_the_reference() {
    let statement = "C(i,j) = A(i,k) * s(i) * B(k,j)";
    let engine = Engine::new();
    let mut rng = Rng::new(3);
    let a = random_tensor(&mut rng, &[12, 8], EntryKind::Random, &Format::csr()).unwrap();
    let b = random_tensor(&mut rng, &[8, 10], EntryKind::EmptySlices, &Format::csr()).unwrap();
    let s = random_tensor(&mut rng, &[12], EntryKind::Random, &Format::dense(1)).unwrap();
    check_statement(
        &engine,
        statement,
        &[("A", &a), ("B", &b), ("s", &s)],
        Some(&Format::csr()),
        &[],
    )
    .unwrap();
    let kernel = engine
        .compile(
            statement,
            &[("A", Format::csr()), ("s", Format::dense(1)), ("B", Format::csr())],
            &Format::csr(),
        )
        .unwrap();
    assert!(kernel
        .program()
        .ops
        .iter()
        .any(|op| matches!(op, Op::WorkspaceAxpy { .. })));
}

/// SDDMM's rank loop (dense rows of U and V, A's value fixed) is one
/// `DenseDot` per stored entry of A, and matches the reference.
#[test]
fn sddmm_rank_loops_are_one_dense_dot_and_match_the_reference() {
    let statement = "C(i,j) = A(i,j) * U(i,k) * V(j,k)";
    let engine = Engine::new();
    let formats = [("A", Format::csr()), ("U", Format::dense(2)), ("V", Format::dense(2))];
    let kernel = engine.compile(statement, &formats, &Format::csr()).unwrap();
    assert!(
        kernel
            .program()
            .ops
            .iter()
            .any(|op| matches!(op, Op::DenseDot { factors, .. } if factors.len() == 2)),
        "no dense dot:\n{}",
        kernel.program()
    );
    let mut rng = Rng::new(23);
    for kind in [
        EntryKind::Empty,
        EntryKind::Skewed,
        EntryKind::Random,
        EntryKind::Duplicates,
    ] {
        for rank in [0, 1, 7] {
            let a = random_tensor(&mut rng, &[13, 9], kind, &Format::csr()).unwrap();
            let u = random_tensor(&mut rng, &[13, rank], EntryKind::Random, &Format::dense(2)).unwrap();
            let v = random_tensor(&mut rng, &[9, rank], EntryKind::Random, &Format::dense(2)).unwrap();
            check_statement(
                &engine,
                statement,
                &[("A", &a), ("U", &u), ("V", &v)],
                Some(&Format::csr()),
                &[],
            )
            .unwrap();
        }
    }
}

/// Structured SpMV runs as block ops over runs of values: a DIA diagonal
/// or an ELL slot as one `StridedAxpy` (x read at stepping positions, or
/// gathered through the slot's columns), a BCSR block row as one
/// `BlockRowsDot`; and the results stay the reference's.
#[test]
fn structured_spmv_runs_as_block_ops_over_runs_and_matches_the_reference() {
    let statement = "y(i) = A(i,j) * x(j)";
    let engine = Engine::new();
    let mut rng = Rng::new(29);
    type IsBlockOp = fn(&Op) -> bool;
    // A DIA diagonal's update, and an ELL slot's, is deferred and run with
    // the others, a tile of y at a time.
    let cases: [(Format, IsBlockOp); 3] = [
        (Format::dia(), |op| matches!(op, Op::StridedAxpy { deferred: true, .. })),
        (Format::ell(), |op| matches!(op, Op::StridedAxpy { deferred: true, .. })),
        (Format::bcsr(3, 2).unwrap(), |op| matches!(op, Op::BlockRowsDot { .. })),
    ];
    for (format, is_block) in cases {
        let kernel = engine
            .compile(
                statement,
                &[("A", format.clone()), ("x", Format::dense(1))],
                &Format::dense(1),
            )
            .unwrap();
        assert!(
            kernel.program().ops.iter().any(is_block),
            "no block op for A in {format}:\n{}",
            kernel.program()
        );
        let flushes = kernel.program().ops.iter().any(|op| matches!(op, Op::StridedFlush));
        assert_eq!(
            flushes,
            format != Format::bcsr(3, 2).unwrap(),
            "{format}:\n{}",
            kernel.program()
        );
        for kind in EntryKind::ALL {
            let a = random_tensor(&mut rng, &[12, 10], kind, &format).unwrap();
            let x = random_tensor(&mut rng, &[10], EntryKind::Random, &Format::dense(1)).unwrap();
            check_statement(&engine, statement, &[("A", &a), ("x", &x)], None, &[]).unwrap();
        }
    }
}

/// A sum, difference, product, maximum or minimum of two operands whose
/// rows lie below dense levels merges every row in one `RowsMerge` (CSR
/// and CSC rows alike, a dense prefix above), whatever the output; outputs whose rows
/// are not placed by arithmetic (DCSR, COO) take the rows one at a time.
/// Every result is the reference's, for awkward operands, on any number of
/// threads (`check_statement` compares 1, 2 and 7).
#[test]
fn sums_of_matrices_merge_every_row_in_one_op_and_match_the_reference() {
    use tessera_formats::LevelFormat;
    let engine = Engine::new();
    let mut rng = Rng::new(23);
    let dense_dense_compressed = Format::from_levels(
        &[LevelFormat::dense(), LevelFormat::dense(), LevelFormat::compressed()],
        &[0, 1, 2],
    )
    .unwrap();
    let cases = [
        ("C(i,j) = A(i,j) + B(i,j)", Format::csr(), Format::csr(), vec![9, 7]),
        ("C(i,j) = A(i,j) - B(j,i)", Format::csr(), Format::csc(), vec![8, 8]),
        ("C(i,j) = A(i,j) * B(i,j)", Format::csr(), Format::csr(), vec![6, 11]),
        ("C(i,j) = max(A(i,j), B(j,i))", Format::csr(), Format::csc(), vec![8, 8]),
        ("C(i,j) = min(A(i,j), B(i,j))", Format::csr(), Format::csr(), vec![9, 7]),
        ("C(j,i) = A(i,j) + B(i,j)", Format::csc(), Format::csc(), vec![7, 5]),
        (
            "C(i,j,k) = A(i,j,k) + B(i,j,k)",
            dense_dense_compressed.clone(),
            dense_dense_compressed.clone(),
            vec![3, 4, 6],
        ),
    ];
    for (statement, a_format, b_format, shape) in cases {
        let order = shape.len();
        let row_outputs = match order {
            2 => vec![Format::csr(), Format::dcsr(), Format::coo(2)],
            _ => vec![dense_dense_compressed.clone(), Format::csf(3)],
        };
        for output in row_outputs {
            let kernel = engine
                .compile(statement, &[("A", a_format.clone()), ("B", b_format.clone())], &output)
                .unwrap();
            let ops = &kernel.program().ops;
            assert!(
                ops.iter().any(|op| matches!(op, Op::RowsMerge { .. }))
                    && !ops
                        .iter()
                        .any(|op| matches!(op, Op::MergeRows { .. } | Op::Append { .. })),
                "{statement} into {output}: not one merge of every row:\n{}",
                kernel.program()
            );
            for kind in [
                EntryKind::Empty,
                EntryKind::Single,
                EntryKind::Random,
                EntryKind::EmptySlices,
                EntryKind::Skewed,
                EntryKind::Full,
            ] {
                let b_shape: Vec<usize> = if statement.contains("B(j,i)") {
                    vec![shape[1], shape[0]]
                } else {
                    shape.clone()
                };
                let a = random_tensor(&mut rng, &shape, kind, &a_format).unwrap();
                let b = random_tensor(&mut rng, &b_shape, EntryKind::Random, &b_format).unwrap();
                check_statement(&engine, statement, &[("A", &a), ("B", &b)], Some(&output), &[])
                    .unwrap_or_else(|e| panic!("{kind:?}: {e}"));
                check_statement(&engine, statement, &[("A", &b), ("B", &a)], Some(&output), &[])
                    .unwrap_or_else(|e| panic!("{kind:?}, swapped: {e}"));
            }
        }
        let one = random_tensor(&mut rng, &vec![1; order], EntryKind::Full, &a_format).unwrap();
        let one_b = random_tensor(&mut rng, &vec![1; order], EntryKind::Full, &b_format).unwrap();
        check_statement(&engine, statement, &[("A", &one), ("B", &one_b)], None, &[]).unwrap();
    }
}

/// Merges of scaled operands (`2 * A(i,j) + B(j,i)`, `A(i,j) * -0.5 - 3 *
/// B(i,j)`): the same one op per block of rows, per row, per pair of
/// diagonals or per block row as the unscaled merges, carrying the
/// scales, with no append; the reference's values for every awkward kind
/// of operand, both ways round.
#[test]
fn merges_of_scaled_operands_run_as_one_op_and_match_the_reference() {
    let engine = Engine::new();
    let mut rng = Rng::new(29);
    let bcsr = Format::bcsr(2, 3).unwrap();
    let cases = [
        (
            "C(i,j) = 2 * A(i,j) + B(j,i)",
            Format::csr(),
            Format::csc(),
            Format::csr(),
        ),
        (
            "C(i,j) = A(i,j) * -0.5 - 3 * B(i,j)",
            Format::dcsr(),
            Format::dcsr(),
            Format::dcsr(),
        ),
        (
            "C(i,j) = max(-2 * A(i,j), B(i,j) * 0.25)",
            Format::dia(),
            Format::dia(),
            Format::dia(),
        ),
        ("C(i,j) = 2 * A(i,j) * B(i,j)", bcsr.clone(), bcsr.clone(), bcsr),
    ];
    for (statement, a_format, b_format, output) in cases {
        let kernel = engine
            .compile(statement, &[("A", a_format.clone()), ("B", b_format.clone())], &output)
            .unwrap();
        let ops = &kernel.program().ops;
        let scaled = ops.iter().any(|op| {
            matches!(
                op,
                Op::RowsMerge { scales: Some(_), .. }
                    | Op::MergeRows { scales: Some(_), .. }
                    | Op::MergeRuns { scales: Some(_), .. }
            )
        });
        assert!(
            scaled && !ops.iter().any(|op| matches!(op, Op::Append { .. })),
            "{statement} into {output}: not one scaled merge:\n{}",
            kernel.program()
        );
        let shape = [6, 6];
        for kind in EntryKind::ALL {
            let a = random_tensor(&mut rng, &shape, kind, &a_format).unwrap();
            let b = random_tensor(&mut rng, &shape, EntryKind::Random, &b_format).unwrap();
            check_statement(&engine, statement, &[("A", &a), ("B", &b)], Some(&output), &[])
                .unwrap_or_else(|e| panic!("{kind:?}: {e}"));
            check_statement(&engine, statement, &[("A", &b), ("B", &a)], Some(&output), &[])
                .unwrap_or_else(|e| panic!("{kind:?}, swapped: {e}"));
        }
    }
}

/// A banded matrix in DIA, long enough that its deferred diagonal updates
/// run in many tiles of y and in several spans of them, on several
/// threads (five diagonals run in short tiles, 256 rows): the
/// bits of adding each diagonal's products in order by hand (what the
/// updates do, each component's sum in diagonal order), on 1, 2 and 7
/// threads. The dense reference would take the square of its size.
#[test]
fn dia_updates_deferred_across_many_tiles_give_the_bits_of_the_diagonals_in_order() {
    use tessera_engine::runtime::{EvalOptions, Inputs};
    use tessera_formats::{CoordinateList, Tensor};
    let n = 200_003usize;
    let offsets = [-70_000i64, -1, 0, 2, 300];
    let mut rng = Rng::new(41);
    let mut list = CoordinateList::new(&[n, n]);
    let mut by_hand = vec![0.0; n];
    let x = random_tensor(&mut rng, &[n], EntryKind::Full, &Format::dense(1)).unwrap();
    for &offset in &offsets {
        for i in 0..n as i64 {
            let j = i + offset;
            if (0..n as i64).contains(&j) && rng.percent(90) {
                let a = (rng.below(1000) as f64 - 500.0) / 37.0;
                list.push(&[i as u64, j as u64], a).unwrap();
                by_hand[i as usize] += a * x.values()[j as usize];
            }
        }
    }
    let a = Tensor::pack(&list, Format::dia()).unwrap();
    let engine = Engine::new();
    for threads in [1, 2, 7] {
        let options = EvalOptions {
            output_format: Some(Format::dense(1)),
            threads: Some(threads),
            ..EvalOptions::default()
        };
        let y = engine
            .eval_with(
                "y(i) = A(i,j) * x(j)",
                &Inputs::new().with("A", &a).with("x", &x),
                &options,
            )
            .unwrap();
        let same = y.values().iter().zip(&by_hand).all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "{threads} threads: not the bits of the diagonals added in order");
    }
}

/// A banded matrix in DIA, its deferred diagonal updates flushed: the
/// reference's result, and the same bits on 1, 2 and 7 threads
/// (`check_statement`).
#[test]
fn dia_updates_deferred_across_tiles_and_threads_match_the_reference() {
    use tessera_formats::{CoordinateList, Tensor};
    let n = 9_001;
    let mut rng = Rng::new(31);
    let mut list = CoordinateList::new(&[n, n]);
    for i in 0..n as i64 {
        for offset in [-7i64, -1, 0, 2, 300] {
            let j = i + offset;
            if (0..n as i64).contains(&j) && rng.percent(90) {
                list.push(&[i as u64, j as u64], (rng.below(1000) as f64 - 500.0) / 37.0)
                    .unwrap();
            }
        }
    }
    let a = Tensor::pack(&list, Format::dia()).unwrap();
    let x = random_tensor(&mut rng, &[n], EntryKind::Full, &Format::dense(1)).unwrap();
    let engine = Engine::new();
    let statement = "y(i) = A(i,j) * x(j)";
    let kernel = engine
        .compile(
            statement,
            &[("A", Format::dia()), ("x", Format::dense(1))],
            &Format::dense(1),
        )
        .unwrap();
    assert!(kernel.program().ops.iter().any(|op| matches!(op, Op::StridedFlush)));
    check_statement(
        &engine,
        statement,
        &[("A", &a), ("x", &x)],
        Some(&Format::dense(1)),
        &[],
    )
    .unwrap();
}

/// An output stored as a factor is, over the same variables, takes its
/// pattern: scaling, a product with dense factors gathered at each
/// entry's column and with values fixed per row, and a DIA or BCSR
/// operand scaled (a diagonal's values, or the blocks of every block
/// row, one run of positions) are each one
/// `ValuesAxpy` (over every row's positions at once where nothing varies
/// per row), with no append; every result is the reference's for awkward
/// operands, on 1, 2 and 7 threads (`check_statement`). A function of
/// the product (`abs(A(i,j))`, `square(A(i,j) * y(i))`) is the same op,
/// applying it to each value.
#[test]
fn outputs_on_a_factors_pattern_write_its_scaled_values_in_one_op_and_match_the_reference() {
    let engine = Engine::new();
    let mut rng = Rng::new(31);
    let dense_dense_compressed = || {
        use tessera_formats::LevelFormat;
        Format::from_levels(
            &[LevelFormat::dense(), LevelFormat::dense(), LevelFormat::compressed()],
            &[0, 1, 2],
        )
        .unwrap()
    };
    // (statement, A's format, A's shape, the position ranges the kernel
    // reads): every row at once reads the first row's start and the last
    // row's end, two ranges, where a row at a time reads one; a
    // compressed first level (DCSR's) adds the range of its rows.
    // Square matrices, so that x(j) and y(i) fit either way round.
    let cases = [
        ("B(i,j) = 2 * A(i,j)", Format::csr(), vec![9, 9], 2),
        ("B(i,j) = A(i,j) * x(j) * 0.5", Format::csr(), vec![8, 8], 2),
        ("B(i,j) = A(i,j) * x(j) * y(i)", Format::csr(), vec![10, 10], 1),
        ("B(i,j) = A(i,j) * y(i)", Format::csc(), vec![7, 7], 2),
        (
            "B(i,j,k) = A(i,j,k) * z(k) * 3",
            dense_dense_compressed(),
            vec![3, 4, 6],
            2,
        ),
        // Below a compressed first level, all stored rows at once too.
        ("B(i,j) = 2 * A(i,j)", Format::dcsr(), vec![9, 9], 3),
        ("B(i,j) = A(i,j) * x(j) * 0.5", Format::dcsr(), vec![8, 8], 3),
        ("B(i,j) = A(i,j) * y(i)", Format::dcsr(), vec![7, 7], 2),
        // A diagonal's stored values are one run of positions.
        ("B(i,j) = 2 * A(i,j)", Format::dia(), vec![9, 9], 1),
        ("B(i,j) = A(i,j) * 0.5", Format::dia(), vec![6, 11], 1),
        // So are the blocks of all block rows.
        ("B(i,j) = 2 * A(i,j)", Format::bcsr(2, 3).unwrap(), vec![8, 9], 2),
        ("B(i,j) = A(i,j) * 0.5", Format::bcsr(1, 1).unwrap(), vec![5, 5], 2),
        // A function of the product, applied to each value as it is
        // written.
        ("B(i,j) = abs(A(i,j))", Format::csr(), vec![9, 9], 2),
        ("B(i,j) = abs(2 * A(i,j))", Format::dcsr(), vec![8, 8], 3),
        ("B(i,j) = abs(A(i,j) * x(j))", Format::csr(), vec![8, 8], 2),
        ("B(i,j) = square(A(i,j) * y(i))", Format::csc(), vec![7, 7], 2),
        ("B(i,j) = abs(A(i,j) * 3)", Format::dia(), vec![9, 9], 1),
        ("B(i,j) = cube(A(i,j) * 2)", Format::bcsr(2, 3).unwrap(), vec![8, 9], 2),
    ];
    for (statement, format, shape, expected_ranges) in cases {
        let dense = |n: usize| vec![n];
        let mut formats = vec![("A", format.clone())];
        for name in ["x", "y", "z"] {
            if statement.contains(&format!("{name}(")) {
                formats.push((name, Format::dense(1)));
            }
        }
        let kernel = engine.compile(statement, &formats, &format).unwrap();
        let ops = &kernel.program().ops;
        let ranges = ops.iter().filter(|op| matches!(op, Op::PosIter { .. })).count();
        assert!(
            ops.iter().any(|op| matches!(op, Op::ValuesAxpy { .. }))
                && !ops
                    .iter()
                    .any(|op| matches!(op, Op::Append { .. } | Op::AccumOutput { .. })),
            "{statement}: not one op over the stored values:\n{}",
            kernel.program()
        );
        assert_eq!(ranges, expected_ranges, "{statement}:\n{}", kernel.program());
        for kind in EntryKind::ALL {
            let a = random_tensor(&mut rng, &shape, kind, &format).unwrap();
            let (i, j) = (shape[0], shape[1]);
            let x = random_tensor(&mut rng, &dense(j), EntryKind::Random, &Format::dense(1)).unwrap();
            let y = random_tensor(&mut rng, &dense(i), EntryKind::Random, &Format::dense(1)).unwrap();
            let z = random_tensor(
                &mut rng,
                &dense(*shape.last().unwrap()),
                EntryKind::Random,
                &Format::dense(1),
            )
            .unwrap();
            let inputs: Vec<(&str, &tessera_formats::Tensor<f64>)> = [("A", &a), ("x", &x), ("y", &y), ("z", &z)]
                .into_iter()
                .filter(|(n, _)| formats.iter().any(|(f, _)| f == n))
                .collect();
            check_statement(&engine, statement, &inputs, Some(&format), &[])
                .unwrap_or_else(|e| panic!("{statement}, {kind:?}: {e}"));
        }
    }
}

/// An operand converted to the output's levels gives the output its
/// pattern too: a transposition into CSR (A converted to CSC once, whose
/// levels are the output's) and a CSC operand read into CSR are one
/// `ValuesAxpy` over the converted copy's values, with no append, and
/// match the reference for awkward operands on 1, 2 and 7 threads.
#[test]
fn outputs_on_a_converted_operands_pattern_write_its_values_in_one_op_and_match_the_reference() {
    let engine = Engine::new();
    let mut rng = Rng::new(41);
    let cases = [
        ("C(j,i) = A(i,j)", Format::csr(), vec![7, 5]),
        ("C(j,i) = 2 * A(i,j)", Format::csr(), vec![6, 9]),
        ("C(i,j) = A(i,j) * 0.5", Format::csc(), vec![8, 4]),
    ];
    for (statement, format, shape) in cases {
        let kernel = engine
            .compile(statement, &[("A", format.clone())], &Format::csr())
            .unwrap();
        let ops = &kernel.program().ops;
        assert!(
            ops.iter().any(|op| matches!(op, Op::ValuesAxpy { .. }))
                && !ops.iter().any(|op| matches!(op, Op::Append { .. })),
            "{statement} from {format}: not one op over the converted values:\n{}",
            kernel.program()
        );
        for kind in EntryKind::ALL {
            let a = random_tensor(&mut rng, &shape, kind, &format).unwrap();
            check_statement(&engine, statement, &[("A", &a)], Some(&Format::csr()), &[])
                .unwrap_or_else(|e| panic!("{statement} from {format}, {kind:?}: {e}"));
        }
    }
}

/// BCSR times x runs every block row in one `BlockRowsDot`, with no loop
/// left in the bytecode, for blocks of any shape (1 x 1, square,
/// rectangular, not dividing the matrix), and matches the reference on 1,
/// 2 and 7 threads.
#[test]
fn bcsr_times_x_runs_every_block_row_in_one_op_and_matches_the_reference() {
    let engine = Engine::new();
    let mut rng = Rng::new(37);
    for (r, c) in [(1, 1), (2, 2), (3, 2), (4, 4), (8, 8), (2, 5)] {
        let format = Format::bcsr(r, c).unwrap();
        let kernel = engine
            .compile(
                "y(i) = A(i,j) * x(j)",
                &[("A", format.clone()), ("x", Format::dense(1))],
                &Format::dense(1),
            )
            .unwrap();
        let ops = &kernel.program().ops;
        assert!(
            ops.iter().any(|op| matches!(
                op,
                Op::BlockRowsDot {
                    blocks: tessera_engine::bytecode::BlockRows::Every { .. },
                    ..
                }
            )) && !ops.iter().any(|op| matches!(op, Op::Jump { .. })),
            "{format}: not one op over every block row:\n{}",
            kernel.program()
        );
        for kind in EntryKind::ALL {
            // Several block rows and columns, one block, a block row.
            for shape in [[4 * r, 3 * c], [r, c], [r, 5 * c]] {
                let a = random_tensor(&mut rng, &shape, kind, &format).unwrap();
                let x = random_tensor(&mut rng, &[shape[1]], EntryKind::Random, &Format::dense(1)).unwrap();
                check_statement(&engine, "y(i) = A(i,j) * x(j)", &[("A", &a), ("x", &x)], None, &[])
                    .unwrap_or_else(|e| panic!("{format} {shape:?}, {kind:?}: {e}"));
            }
        }
        // Blocks that do not divide the matrix are refused when packed.
        if r > 1 {
            assert!(random_tensor(&mut rng, &[r + 1, c], EntryKind::Random, &format).is_err());
        }
    }
}

/// TTV-like loops over fibres (a dot product per stored fibre, appended to
/// a sparse output) run in the interpreter as one `PositionLoop`, nested
/// once per sparse level above the fibres; the results stay the
/// reference's for awkward tensors and any sparse output format, on one
/// thread and on several.
#[test]
fn fibre_loops_run_as_one_interpreter_op_and_match_the_reference() {
    use tessera_engine::bytecode::PositionBody;
    let engine = Engine::new();
    let mut rng = Rng::new(31);
    let csf = |order| Format::csf(order);
    // (statement, the tensor's order, its vector factors, how deep the shortcut nests)
    let cases: [(&str, usize, &[&str], usize); 4] = [
        ("A(i,j) = B(i,j,k) * c(k)", 3, &["c"], 1),
        ("A(i,j) = B(i,j,k) * c(k) * d(k)", 3, &["c", "d"], 1),
        ("A(i,j) = B(i,j,k)", 3, &[], 1),
        ("A(i,j,l) = B(i,j,l,k) * c(k)", 4, &["c"], 2),
    ];
    for (statement, order, factors, nesting) in cases {
        let mut formats = vec![("B", csf(order))];
        formats.extend(factors.iter().map(|&name| (name, Format::dense(1))));
        for output in [csf(order - 1), Format::coo(order - 1)] {
            let kernel = engine.compile(statement, &formats, &output).unwrap();
            let depth = |body: &PositionBody| {
                let (mut depth, mut body) = (1, body);
                while let PositionBody::Nested { body: inner, .. } = body {
                    (depth, body) = (depth + 1, inner);
                }
                depth
            };
            let deepest = kernel.program().ops.iter().filter_map(|op| match op {
                Op::PositionLoop { body, .. } => Some(depth(body)),
                _ => None,
            });
            assert_eq!(
                deepest.max(),
                Some(nesting + 1),
                "{statement} into {output}:\n{}",
                kernel.program()
            );
            for kind in [
                EntryKind::Empty,
                EntryKind::Single,
                EntryKind::EmptySlices,
                EntryKind::Duplicates,
                EntryKind::Skewed,
                EntryKind::Unsorted,
            ] {
                let shape: Vec<usize> = [7, 4, 5, 6][..order].to_vec();
                let b = random_tensor(&mut rng, &shape, kind, &csf(order)).unwrap();
                let vectors: Vec<_> = factors
                    .iter()
                    .map(|_| {
                        random_tensor(&mut rng, &[shape[order - 1]], EntryKind::Random, &Format::dense(1)).unwrap()
                    })
                    .collect();
                let mut inputs = vec![("B", &b)];
                inputs.extend(factors.iter().copied().zip(&vectors));
                check_statement(&engine, statement, &inputs, Some(&output), &[]).unwrap();
            }
        }
    }
}

/// Loops whose body is straight-line code around one dense block op run
/// in the interpreter as one `PositionLoop`: SDDMM's loop over a row (a
/// dense inner product per stored entry, written at its position, its
/// rows located by the entry's column) and MTTKRP's loop over a fibre (a
/// dense row update per stored entry of each fibre, and MTTKRP's loop over
/// rows around it), and a row scattered into a dense result (`y(j) =
/// A(i,j) * x(i)`) or summed into a scalar (`s = A(i,j) * A(i,j)`), with
/// values of other operands gathered by the entry's coordinate (`y(j)` in
/// `s = x(i) * A(i,j) * y(j)`), and a dot per stored fibre added into a
/// dense result (SpMV on DCSR, TTV on CSF into a dense matrix), and the
/// scaled stored values appended into a sparse result (`C(i,j) = 2 *
/// A(i,j)` into DCSR), scales holding the statement's literals. The
/// results stay the reference's for awkward tensors, on one thread and on
/// several.
#[test]
fn straight_line_loops_run_as_one_interpreter_op_and_match_the_reference() {
    use tessera_engine::bytecode::PositionBody;
    type IsBody = fn(&PositionBody) -> bool;
    /// A dimension that runs over ranks 0, 1 and 5.
    const RANK: usize = usize::MAX;
    struct Case {
        statement: &'static str,
        sparse: (&'static str, Format, &'static [usize]),
        dense: &'static [(&'static str, &'static [usize])],
        output: Format,
        body: IsBody,
    }
    let dense_dots: IsBody = |b| matches!(b, PositionBody::DenseDots { .. });
    // MTTKRP's loop over rows holds the loop over fibres, both one op.
    let row_updates: IsBody =
        |b| matches!(b, PositionBody::Nested { body, .. } if matches!(**body, PositionBody::RowUpdates { .. }));
    let scatter: IsBody = |b| matches!(b, PositionBody::Scatter { .. });
    let reduce: IsBody = |b| matches!(b, PositionBody::Reduce { flag: Some(_), .. });
    let added_dots: IsBody = |b| matches!(b, PositionBody::AddedDots { .. });
    let copies: IsBody = |b| matches!(b, PositionBody::Copies { .. });
    let engine = Engine::new();
    let mut rng = Rng::new(37);
    let cases = [
        Case {
            statement: "C(i,j) = A(i,j) * U(i,k) * V(j,k)",
            sparse: ("A", Format::csr(), &[8, 6]),
            dense: &[("U", &[8, RANK]), ("V", &[6, RANK])],
            output: Format::csr(),
            body: dense_dots,
        },
        Case {
            statement: "C(i,j) = A(i,j) * s(i) * U(i,k) * V(j,k)",
            sparse: ("A", Format::csr(), &[8, 6]),
            dense: &[("s", &[8]), ("U", &[8, RANK]), ("V", &[6, RANK])],
            output: Format::csr(),
            body: dense_dots,
        },
        Case {
            statement: "C(i,j) = A(i,j) * U(i,k) * V(j,k) * W(j,k)",
            sparse: ("A", Format::dcsr(), &[8, 6]),
            dense: &[("U", &[8, RANK]), ("V", &[6, RANK]), ("W", &[6, RANK])],
            output: Format::dcsr(),
            body: dense_dots,
        },
        Case {
            statement: "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
            sparse: ("B", Format::csf(3), &[8, 6, 4]),
            dense: &[("C", &[6, RANK]), ("D", &[4, RANK])],
            output: Format::dense(2),
            body: row_updates,
        },
        Case {
            statement: "y(j) = A(i,j) * x(i)",
            sparse: ("A", Format::csr(), &[8, 6]),
            dense: &[("x", &[8])],
            output: Format::dense(1),
            body: scatter,
        },
        Case {
            statement: "s = A(i,j) * A(i,j)",
            sparse: ("A", Format::csr(), &[8, 6]),
            dense: &[],
            output: Format::dense(0),
            body: reduce,
        },
        Case {
            statement: "s = A(i,j) * x(i)",
            sparse: ("A", Format::dcsr(), &[8, 6]),
            dense: &[("x", &[8])],
            output: Format::dense(0),
            body: reduce,
        },
        Case {
            statement: "s = x(i) * A(i,j) * y(j)",
            sparse: ("A", Format::csr(), &[8, 6]),
            dense: &[("x", &[8]), ("y", &[6])],
            output: Format::dense(0),
            body: reduce,
        },
        Case {
            statement: "y(j) = A(i,j) * x(i) * d(j)",
            sparse: ("A", Format::csr(), &[8, 6]),
            dense: &[("x", &[8]), ("d", &[6])],
            output: Format::dense(1),
            body: scatter,
        },
        Case {
            statement: "C(i,j) = A(i,j) * d(j) * U(i,k) * V(j,k)",
            sparse: ("A", Format::csr(), &[8, 6]),
            dense: &[("d", &[6]), ("U", &[8, RANK]), ("V", &[6, RANK])],
            output: Format::csr(),
            body: dense_dots,
        },
        Case {
            statement: "y(i) = A(i,j) * x(j)",
            sparse: ("A", Format::dcsr(), &[8, 6]),
            dense: &[("x", &[6])],
            output: Format::dense(1),
            body: added_dots,
        },
        Case {
            statement: "y(i) = A(i,j) * x(j) * z(j)",
            sparse: ("A", Format::dcsr(), &[8, 6]),
            dense: &[("x", &[6]), ("z", &[6])],
            output: Format::dense(1),
            body: added_dots,
        },
        Case {
            statement: "A(i,j) = B(i,j,k) * c(k)",
            sparse: ("B", Format::csf(3), &[8, 6, 4]),
            dense: &[("c", &[4])],
            output: Format::dense(2),
            body: added_dots,
        },
        Case {
            statement: "C(k,j) = A(i,j) * X(i,k)",
            sparse: ("A", Format::csr(), &[8, 6]),
            dense: &[("X", &[8, RANK])],
            output: Format::dense(2),
            body: scatter,
        },
        Case {
            statement: "y(j) = 2 * A(i,j) * x(i)",
            sparse: ("A", Format::csr(), &[8, 6]),
            dense: &[("x", &[8])],
            output: Format::dense(1),
            body: scatter,
        },
        // Into DCSR, these take A's pattern (a `ValuesAxpy`); into COO
        // they are appended.
        Case {
            statement: "C(i,j) = 2 * A(i,j)",
            sparse: ("A", Format::dcsr(), &[8, 6]),
            dense: &[],
            output: Format::coo(2),
            body: copies,
        },
        Case {
            statement: "C(i,j) = 3 * A(i,j) * x(i) * 0.5",
            sparse: ("A", Format::dcsr(), &[8, 6]),
            dense: &[("x", &[8])],
            output: Format::coo(2),
            body: copies,
        },
        Case {
            statement: "C(i,j) = A(i,j) * d(j) * 2",
            sparse: ("A", Format::csr(), &[8, 6]),
            dense: &[("d", &[6])],
            output: Format::dcsr(),
            body: copies,
        },
    ];
    for case in cases {
        let (name, format, shape) = &case.sparse;
        let mut formats = vec![(*name, format.clone())];
        formats.extend(
            case.dense
                .iter()
                .map(|&(name, shape)| (name, Format::dense(shape.len()))),
        );
        let kernel = engine.compile(case.statement, &formats, &case.output).unwrap();
        assert!(
            kernel
                .program()
                .ops
                .iter()
                .any(|op| matches!(op, Op::PositionLoop { body, .. } if (case.body)(body))),
            "{}: no position loop of the expected body:\n{}",
            case.statement,
            kernel.program()
        );
        for kind in [
            EntryKind::Empty,
            EntryKind::Single,
            EntryKind::EmptySlices,
            EntryKind::Duplicates,
            EntryKind::Skewed,
        ] {
            for rank in [0, 1, 5] {
                let a = random_tensor(&mut rng, shape, kind, format).unwrap();
                let tensors: Vec<_> = case
                    .dense
                    .iter()
                    .map(|&(_, shape)| {
                        let shape: Vec<usize> = shape.iter().map(|&n| if n == RANK { rank } else { n }).collect();
                        random_tensor(&mut rng, &shape, EntryKind::Random, &Format::dense(shape.len())).unwrap()
                    })
                    .collect();
                let mut inputs = vec![(*name, &a)];
                inputs.extend(case.dense.iter().map(|&(name, _)| name).zip(&tensors));
                check_statement(&engine, case.statement, &inputs, Some(&case.output), &[]).unwrap();
            }
        }
    }
}

/// SpMM's row updates (`RowAxpy`) hold rows of 16 to 64 columns in
/// registers across a row's entries, tile by tile; the results stay the
/// reference's for those widths and the ones around them.
#[test]
fn spmm_row_updates_in_tiles_match_the_reference() {
    let statement = "C(i,j) = A(i,k) * X(k,j)";
    let engine = Engine::new();
    let mut rng = Rng::new(41);
    let kernel = engine
        .compile(
            statement,
            &[("A", Format::csr()), ("X", Format::dense(2))],
            &Format::dense(2),
        )
        .unwrap();
    assert!(kernel.program().ops.iter().any(|op| matches!(op, Op::RowAxpy { .. })));
    for columns in [15, 16, 32, 48, 64, 80] {
        for kind in [
            EntryKind::Empty,
            EntryKind::Skewed,
            EntryKind::Duplicates,
            EntryKind::Random,
        ] {
            let a = random_tensor(&mut rng, &[9, 7], kind, &Format::csr()).unwrap();
            let x = random_tensor(&mut rng, &[7, columns], EntryKind::Random, &Format::dense(2)).unwrap();
            check_statement(
                &engine,
                statement,
                &[("A", &a), ("X", &x)],
                Some(&Format::dense(2)),
                &[],
            )
            .unwrap();
        }
    }
}

/// The same tensor at the same indices twice is one operand, iterated
/// once (`A(i,j) * A(i,j)` would otherwise merge A with itself); at other
/// indices it is two. The results stay the reference's.
#[test]
fn a_tensor_read_twice_at_the_same_indices_is_one_operand() {
    let engine = Engine::new();
    let mut rng = Rng::new(43);
    let cases = [
        ("s = A(i,j) * A(i,j)", Format::dense(0), 1),
        ("C(i,j) = A(i,j) + A(i,j)", Format::csr(), 1),
        ("C(i,j) = A(i,j) * A(i,j) - A(i,j)", Format::csr(), 1),
        ("C(i,j) = A(i,j) * A(j,i)", Format::csr(), 2),
    ];
    for (statement, output, operands) in cases {
        let kernel = engine.compile(statement, &[("A", Format::csr())], &output).unwrap();
        assert_eq!(kernel.program().inputs, operands, "{statement}:\n{}", kernel.program());
        for kind in [
            EntryKind::Empty,
            EntryKind::Duplicates,
            EntryKind::Skewed,
            EntryKind::Random,
        ] {
            let a = random_tensor(&mut rng, &[7, 7], kind, &Format::csr()).unwrap();
            check_statement(&engine, statement, &[("A", &a)], Some(&output), &[]).unwrap();
        }
    }
}

/// A block op reads each operand's value once, so a product of one
/// operand with itself (`B(i,m) * B(i,m)`, one operand) is no block op's:
/// the strided updates of ELL and DIA, the dot products of CSR and the
/// block rows of BCSR once computed `B` instead of its square.
#[test]
fn a_square_of_one_operand_is_computed_in_every_format() {
    let engine = Engine::new();
    let mut rng = Rng::new(47);
    let named = named_formats(&[6, 6]);
    for statement in [
        "y(i) = sum(m, B(i,m) * B(i,m))",
        "y(i) = sum(m, B(i,m) * B(i,m) * x(m))",
    ] {
        for format in &named {
            for kind in [EntryKind::Duplicates, EntryKind::Random, EntryKind::Skewed] {
                let b = random_tensor(&mut rng, &[6, 6], kind, format).unwrap();
                let x = random_tensor(&mut rng, &[6], EntryKind::Random, &Format::dense(1)).unwrap();
                check_statement(
                    &engine,
                    statement,
                    &[("B", &b), ("x", &x)],
                    Some(&Format::dense(1)),
                    &[],
                )
                .unwrap_or_else(|e| panic!("{statement}, B in {format}: {e}"));
            }
        }
    }
}

/// Sums over a BCSR matrix's values (of squares, scaled, or of the values
/// themselves) run a block row at a time as one `DenseDot` over the
/// blocks' values, which follow one another: the reference's results for
/// awkward matrices and block shapes, on 1, 2 and 7 threads.
#[test]
fn sums_over_block_rows_are_one_dense_dot_and_match_the_reference() {
    let engine = Engine::new();
    let mut rng = Rng::new(67);
    for (r, c, shape) in [(2, 3, [8, 9]), (1, 1, [5, 4]), (3, 3, [3, 6])] {
        let format = Format::bcsr(r, c).unwrap();
        for statement in [
            "s = A(i,j) * A(i,j)",
            "s = 0.5 * A(i,j) * A(i,j) * A(i,j)",
            "s = A(i,j)",
        ] {
            let kernel = engine
                .compile(statement, &[("A", format.clone())], &Format::dense(0))
                .unwrap();
            assert!(
                kernel.program().ops.iter().any(|op| matches!(op, Op::DenseDot { .. })),
                "{statement} on {format}: no dense dot over a block row:\n{}",
                kernel.program()
            );
            for kind in EntryKind::ALL {
                let a = random_tensor(&mut rng, &shape, kind, &format).unwrap();
                check_statement(&engine, statement, &[("A", &a)], Some(&Format::dense(0)), &[])
                    .unwrap_or_else(|e| panic!("{statement} on {format}, {kind:?}: {e}"));
            }
        }
    }
}

/// BCSR times x transposed updates the output a block at a time: those
/// updates are short and many, so they run in place rather than handed to
/// the runtime to run together later (as a DIA diagonal's are). Results
/// are the reference's on 1, 2 and 7 threads.
#[test]
fn block_updates_run_in_place_and_match_the_reference() {
    let engine = Engine::new();
    let mut rng = Rng::new(71);
    for (r, c, shape) in [(2, 3, [8, 9]), (1, 1, [5, 4]), (3, 2, [6, 6])] {
        let format = Format::bcsr(r, c).unwrap();
        let statement = "y(j) = A(i,j) * x(i)";
        let kernel = engine
            .compile(
                statement,
                &[("A", format.clone()), ("x", Format::dense(1))],
                &Format::dense(1),
            )
            .unwrap();
        let ops = &kernel.program().ops;
        assert!(
            ops.iter()
                .any(|op| matches!(op, Op::StridedAxpy { deferred: false, .. }))
                && !ops
                    .iter()
                    .any(|op| matches!(op, Op::StridedAxpy { deferred: true, .. })),
            "{format}: the block updates are not run in place:\n{}",
            kernel.program()
        );
        for kind in EntryKind::ALL {
            let a = random_tensor(&mut rng, &shape, kind, &format).unwrap();
            let x = random_tensor(&mut rng, &shape[..1], EntryKind::Random, &Format::dense(1)).unwrap();
            check_statement(
                &engine,
                statement,
                &[("A", &a), ("x", &x)],
                Some(&Format::dense(1)),
                &[],
            )
            .unwrap_or_else(|e| panic!("{format}, {kind:?}: {e}"));
        }
    }
}

/// COO's rows: the end of a row's run of entries is found by one
/// interpreter op (`RunEnd`), and the entries below the run (the
/// children of all its entries, which follow one another) are read by
/// the block ops of a CSR row: a dot (SpMV), a sum of squares (the
/// interpreter's loop into a scalar), a dense row update (SpMM), a row
/// scattered into the workspace (SpGEMM). Results stay the
/// reference's for awkward tensors, duplicates and unsorted entries
/// included.
#[test]
fn coo_rows_end_in_one_op_and_their_entries_run_as_block_ops_matching_the_reference() {
    let engine = Engine::new();
    let mut rng = Rng::new(41);
    let coo = Format::coo(2);
    use tessera_engine::bytecode::PositionBody;
    let dot: fn(&Op) -> bool = |op| matches!(op, Op::DotBlock { .. });
    let sum: fn(&Op) -> bool = |op| {
        matches!(
            op,
            Op::PositionLoop {
                body: PositionBody::Reduce { .. },
                ..
            }
        )
    };
    let row_update: fn(&Op) -> bool = |op| matches!(op, Op::RowAxpy { .. });
    let scatter: fn(&Op) -> bool = |op| matches!(op, Op::WorkspaceAxpy { .. });
    // (statement, the other operand's name, shape and format, the output's format, its block op)
    let cases = [
        (
            "y(i) = A(i,j) * x(j)",
            ("x", vec![7], Format::dense(1)),
            Format::dense(1),
            dot,
        ),
        (
            "s = A(i,j) * A(i,j)",
            ("A", vec![9, 7], coo.clone()),
            Format::dense(0),
            sum,
        ),
        (
            "C(i,j) = A(i,k) * X(k,j)",
            ("X", vec![7, 3], Format::dense(2)),
            Format::dense(2),
            row_update,
        ),
        (
            "C(i,j) = A(i,k) * B(k,j)",
            ("B", vec![7, 5], Format::csr()),
            Format::csr(),
            scatter,
        ),
    ];
    for (statement, (other, shape, format), output, block_op) in cases {
        let kernel = engine
            .compile(statement, &[("A", coo.clone()), (other, format.clone())], &output)
            .unwrap();
        let ops = &kernel.program().ops;
        assert!(
            ops.iter().any(|op| matches!(op, Op::RunEnd { .. })) && ops.iter().any(block_op),
            "{statement}: no run end or no block op:\n{}",
            kernel.program()
        );
        for kind in [
            EntryKind::Empty,
            EntryKind::Single,
            EntryKind::EmptySlices,
            EntryKind::Duplicates,
            EntryKind::Skewed,
            EntryKind::Unsorted,
        ] {
            let a = random_tensor(&mut rng, &[9, 7], kind, &coo).unwrap();
            let b = random_tensor(&mut rng, &shape, EntryKind::Random, &format).unwrap();
            let inputs: Vec<(&str, &_)> = if other == "A" {
                vec![("A", &a)]
            } else {
                vec![("A", &a), (other, &b)]
            };
            check_statement(&engine, statement, &inputs, Some(&output), &[])
                .unwrap_or_else(|e| panic!("{statement} on {kind:?} entries: {e}"));
        }
    }
}
