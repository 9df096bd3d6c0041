//! Differential tests: every kernel of the engine's scope over many format
//! combinations, each run on random tensors of every awkward kind
//! ([`EntryKind::ALL`]) and compared with the dense reference.
//!
//! Table-driven: a [`Case`] names a statement, the formats each tensor may
//! take and the output formats; [`run`] expands the cartesian product of
//! formats, and runs [`TRIALS`] random trials of each combination. Trial `t`
//! gives operand `k` contents of kind `ALL[(t + 3k) % 10]`, so every operand
//! meets every kind; the first trial of matrix-only statements uses large
//! dimensions (hypersparse territory). A failure prints its seed; the seed
//! fixes the index sizes and contents (`Rng::new(seed)` in [`trial`]).

use tessera_engine::notation::{parse_statement, AssignOp};
use tessera_engine::testing::{check_statement, random_composition, random_tensor, EntryKind, Rng};
use tessera_engine::Engine;
use tessera_formats::{Format, LevelFormat, Tensor};

/// Random trials per format combination.
const TRIALS: usize = 20;

/// A format an operand may take.
#[derive(Clone)]
enum Choice {
    Fixed(Format),
    /// A random per-level composition, drawn anew each trial.
    Composition,
}

impl Choice {
    fn label(&self) -> String {
        match self {
            Choice::Fixed(f) => f.to_string(),
            Choice::Composition => "random composition".into(),
        }
    }
}

struct Operand {
    name: &'static str,
    formats: Vec<Choice>,
    /// Filled with every component nonzero (it divides).
    divisor: bool,
}

struct Case {
    statement: &'static str,
    operands: Vec<Operand>,
    /// `None`: the engine's default output format.
    outputs: Vec<Option<Format>>,
}

fn op(name: &'static str, formats: Vec<Format>) -> Operand {
    Operand {
        name,
        formats: formats.into_iter().map(Choice::Fixed).collect(),
        divisor: false,
    }
}

fn op_choices(name: &'static str, formats: Vec<Choice>) -> Operand {
    Operand {
        name,
        formats,
        divisor: false,
    }
}

fn divisor(name: &'static str, formats: Vec<Format>) -> Operand {
    Operand {
        divisor: true,
        ..op(name, formats)
    }
}

fn case(statement: &'static str, operands: Vec<Operand>, outputs: Vec<Format>) -> Case {
    Case {
        statement,
        operands,
        outputs: outputs.into_iter().map(Some).collect(),
    }
}

fn bcsr() -> Format {
    Format::bcsr(2, 2).unwrap()
}
fn col_major() -> Format {
    Format::dense_ordered(&[1, 0])
}
/// Every matrix format.
fn all_matrix() -> Vec<Format> {
    vec![
        Format::csr(),
        Format::csc(),
        Format::dcsr(),
        Format::dcsc(),
        Format::coo(2),
        Format::coo_ordered(&[1, 0]),
        Format::dia(),
        Format::ell(),
        bcsr(),
        Format::hash_rows(),
        Format::dense(2),
        col_major(),
    ]
}
fn vectors() -> Vec<Format> {
    vec![Format::dense(1), Format::sparse_vector(), Format::hash_vector()]
}

/// What one trial runs: the index sizes, then the tensors.
fn trial(
    engine: &Engine,
    case: &Case,
    formats: &[Choice],
    output: Option<&Format>,
    t: usize,
    seed: u64,
) -> Result<bool, String> {
    let stmt = parse_statement(case.statement).map_err(|e| e.to_string())?;
    let mut rng = Rng::new(seed);
    let max_order = stmt
        .rhs
        .accesses()
        .iter()
        .map(|a| a.order())
        .chain([stmt.lhs.order()])
        .max()
        .unwrap_or(0);
    let cap = match max_order {
        0..=2 => 12,
        3 => 6,
        4 => 4,
        _ => 3,
    };
    let large = t == 0 && max_order <= 2;
    let even = t % 2 == 1;
    let sizes: Vec<(String, usize)> = stmt
        .index_vars()
        .iter()
        .map(|v| {
            let n = if large {
                rng.range(20, 40)
            } else if even {
                2 * rng.range(1, cap / 2)
            } else {
                rng.range(1, cap)
            };
            (v.0.clone(), n)
        })
        .collect();
    let size = |v: &str| sizes.iter().find(|(s, _)| s == v).map_or(1, |(_, n)| *n);
    let mut tensors: Vec<(&str, Tensor<f64>)> = Vec::new();
    for (k, (operand, choice)) in case.operands.iter().zip(formats).enumerate() {
        let access = stmt
            .rhs
            .accesses()
            .into_iter()
            .find(|a| a.tensor == operand.name)
            .cloned()
            .or_else(|| (stmt.lhs.tensor == operand.name).then(|| stmt.lhs.clone()))
            .ok_or_else(|| format!("{} is not in `{}`", operand.name, case.statement))?;
        let shape: Vec<usize> = access.indices.iter().map(|v| size(&v.0)).collect();
        let format = match choice {
            Choice::Fixed(f) => f.clone(),
            Choice::Composition => random_composition(&mut rng, shape.len()),
        };
        if format.check_shape(&shape).is_err() {
            return Ok(false); // BCSR blocks that do not divide this trial's sizes
        }
        let kind = if operand.divisor {
            EntryKind::Full
        } else if large {
            *rng.pick(&[
                EntryKind::Hypersparse,
                EntryKind::Skewed,
                EntryKind::EmptySlices,
                EntryKind::Empty,
            ])
        } else {
            EntryKind::ALL[(t + 3 * k) % EntryKind::ALL.len()]
        };
        tensors.push((operand.name, random_tensor(&mut rng, &shape, kind, &format)?));
    }
    if let Some(f) = output {
        if f.check_shape(&stmt.lhs.indices.iter().map(|v| size(&v.0)).collect::<Vec<_>>())
            .is_err()
        {
            return Ok(false);
        }
    }
    // Sizes no input fixes: output variables absent on the right.
    let rhs_vars = stmt.rhs.free_vars();
    let given: Vec<(&str, usize)> = if stmt.op == AssignOp::AddAssign {
        Vec::new()
    } else {
        stmt.lhs
            .indices
            .iter()
            .filter(|v| !rhs_vars.contains(v))
            .map(|v| (v.0.as_str(), size(&v.0)))
            .collect()
    };
    let inputs: Vec<(&str, &Tensor<f64>)> = tensors.iter().map(|(n, t)| (*n, t)).collect();
    check_statement(engine, case.statement, &inputs, output, &given)?;
    Ok(true)
}

/// Runs every combination of every case; panics listing the failures.
fn run(cases: &[Case]) {
    let engine = crate::suite_engine();
    let mut failures = Vec::new();
    let mut checked = 0usize;
    let mut combinations = 0usize;
    for (c, case) in cases.iter().enumerate() {
        // Cartesian product of the operands' format choices.
        let mut combos: Vec<Vec<Choice>> = vec![Vec::new()];
        for operand in &case.operands {
            combos = combos
                .into_iter()
                .flat_map(|prefix| {
                    operand.formats.iter().map(move |f| {
                        let mut p = prefix.clone();
                        p.push(f.clone());
                        p
                    })
                })
                .collect();
        }
        combinations += combos.len() * case.outputs.len();
        for (k, formats) in combos.iter().enumerate() {
            for (o, output) in case.outputs.iter().enumerate() {
                for t in 0..TRIALS {
                    let seed = ((c as u64) << 40) | ((k as u64) << 24) | ((o as u64) << 16) | t as u64;
                    match trial(&engine, case, formats, output.as_ref(), t, seed) {
                        Ok(true) => checked += 1,
                        Ok(false) => {}
                        Err(e) => {
                            let labels: Vec<String> = case
                                .operands
                                .iter()
                                .zip(formats)
                                .map(|(op, f)| format!("{}: {}", op.name, f.label()))
                                .collect();
                            failures.push(format!("seed {seed:#x} ({}):\n  {e}", labels.join(", ")));
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 0, "no combination ran");
    eprintln!(
        "{} cases, {combinations} format combinations, {checked} checks (from `{}`)",
        cases.len(),
        cases[0].statement
    );
    assert!(
        failures.is_empty(),
        "{} of {} checks differ from the reference:\n{}",
        failures.len(),
        checked + failures.len(),
        failures.iter().take(40).cloned().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn spmv_and_spmspv_in_every_matrix_format_match_reference() {
    run(&[
        case(
            "y(i) = A(i,j) * x(j)",
            vec![
                op(
                    "A",
                    vec![
                        Format::csr(),
                        Format::csc(),
                        Format::dcsr(),
                        Format::coo(2),
                        Format::dia(),
                        Format::ell(),
                        bcsr(),
                        Format::hash_rows(),
                        Format::dense(2),
                    ],
                ),
                op("x", vectors()),
            ],
            vec![Format::dense(1), Format::sparse_vector(), Format::hash_vector()],
        ),
        // SpMSpV with the column-major and doubly compressed layouts.
        case(
            "y(i) = A(i,j) * x(j)",
            vec![
                op("A", vec![Format::dcsc(), Format::coo_ordered(&[1, 0]), col_major()]),
                op("x", vec![Format::sparse_vector(), Format::coo(1)]),
            ],
            vec![Format::dense(1), Format::sparse_vector()],
        ),
    ]);
}

#[test]
fn spmm_sparse_times_dense_matches_reference() {
    run(&[case(
        "C(i,j) = A(i,k) * B(k,j)",
        vec![
            op(
                "A",
                vec![
                    Format::csr(),
                    Format::csc(),
                    Format::dcsr(),
                    Format::coo(2),
                    Format::hash_rows(),
                    Format::ell(),
                ],
            ),
            op("B", vec![Format::dense(2), col_major()]),
        ],
        vec![Format::dense(2), Format::csr(), col_major()],
    )]);
}

#[test]
fn spgemm_into_every_output_matches_reference() {
    let sparse = || vec![Format::csr(), Format::csc(), Format::dcsr(), Format::coo(2)];
    run(&[case(
        "A(i,j) = B(i,k) * C(k,j)",
        vec![op("B", sparse()), op("C", sparse())],
        vec![
            Format::csr(),
            Format::dcsr(),
            Format::coo(2),
            Format::dense(2),
            Format::csc(),
            Format::hash_rows(),
        ],
    )]);
}

/// Matrix outputs whose last level is unordered: CSR, CSC and DCSR alike.
fn unordered_matrix_outputs() -> Vec<Format> {
    let unordered = LevelFormat::compressed().unordered();
    vec![
        Format::from_levels(&[LevelFormat::dense(), unordered], &[0, 1]).unwrap(),
        Format::from_levels(&[LevelFormat::dense(), unordered], &[1, 0]).unwrap(),
        Format::from_levels(&[unordered, unordered], &[0, 1]).unwrap(),
        Format::from_levels(&[LevelFormat::compressed(), unordered], &[0, 1]).unwrap(),
    ]
}

#[test]
fn unordered_outputs_are_assembled_in_rows_and_match_reference() {
    let sparse = || vec![Format::csr(), Format::csc(), Format::dcsr(), Format::coo(2)];
    run(&[
        case(
            "A(i,j) = B(i,k) * C(k,j)",
            vec![op("B", sparse()), op("C", sparse())],
            unordered_matrix_outputs(),
        ),
        case(
            "A(i,j) = B(i,j) + C(j,i)",
            vec![op("B", sparse()), op("C", sparse())],
            unordered_matrix_outputs(),
        ),
        case(
            "A(i,j) = B(i,j) * C(i,j)",
            vec![op("B", sparse()), op("C", sparse())],
            unordered_matrix_outputs(),
        ),
        case(
            "A(i,j) = B(i,j,k) * c(k)",
            vec![op("B", vec![Format::csf(3), Format::coo(3)]), op("c", vectors())],
            unordered_matrix_outputs(),
        ),
    ]);
}

#[test]
fn sparse_add_and_subtract_with_mixed_formats_match_reference() {
    run(&[
        case(
            "A(i,j) = B(i,j) + C(i,j)",
            vec![
                op(
                    "B",
                    vec![
                        Format::csr(),
                        Format::coo(2),
                        Format::dcsr(),
                        Format::hash_rows(),
                        Format::dia(),
                    ],
                ),
                op("C", vec![Format::csr(), Format::coo(2), Format::csc(), Format::ell()]),
            ],
            vec![Format::dense(2), Format::csr(), Format::coo(2), Format::dcsr()],
        ),
        case(
            "A(i,j) = B(i,j) - C(i,j)",
            vec![
                op("B", vec![Format::csr(), Format::dcsc(), bcsr()]),
                op("C", vec![Format::csc(), Format::csr(), Format::dense(2)]),
            ],
            vec![Format::csr(), Format::csc(), Format::dense(2), Format::hash_rows()],
        ),
        case(
            "A(i,j) = B(i,j) - C(j,i)",
            vec![
                op("B", vec![Format::csr(), Format::ell(), Format::dense(2)]),
                op("C", vec![Format::csr(), Format::csc(), Format::coo(2)]),
            ],
            vec![Format::csr(), Format::dense(2), Format::coo(2)],
        ),
        case(
            "s = B(i,j) * C(i,j)",
            vec![
                op("B", vec![Format::csr(), Format::dia(), Format::hash_rows(), bcsr()]),
                op("C", vec![Format::csr(), Format::csc(), Format::dense(2)]),
            ],
            vec![Format::dense(0)],
        ),
        case(
            "A(i,j) = B(i,j) + C(i,j) + D(i,j)",
            vec![
                op("B", vec![Format::csr(), Format::coo(2), Format::csc()]),
                op("C", vec![Format::csr(), Format::coo(2), Format::csc()]),
                op("D", vec![Format::csr(), Format::dcsr(), Format::dense(2)]),
            ],
            vec![Format::csr(), Format::dense(2)],
        ),
    ]);
}

#[test]
fn elementwise_product_and_sddmm_match_reference() {
    run(&[
        case(
            "A(i,j) = B(i,j) * C(i,j)",
            vec![
                op(
                    "B",
                    vec![
                        Format::csr(),
                        Format::csc(),
                        Format::coo(2),
                        Format::hash_rows(),
                        Format::dense(2),
                    ],
                ),
                op(
                    "C",
                    vec![Format::csr(), Format::dcsc(), Format::dense(2), Format::dia()],
                ),
            ],
            vec![Format::csr(), Format::dense(2), Format::coo(2)],
        ),
        case(
            "A(i,j) = B(i,j) * C(i,k) * D(k,j)",
            vec![
                op("B", vec![Format::csr(), Format::coo(2), Format::dcsr(), Format::csc()]),
                op("C", vec![Format::dense(2)]),
                op("D", vec![Format::dense(2), col_major()]),
            ],
            vec![Format::csr(), Format::dense(2), Format::coo(2)],
        ),
    ]);
}

#[test]
fn third_order_kernels_ttv_ttm_mttkrp_inner_product_match_reference() {
    let order3 = || {
        vec![
            Choice::Fixed(Format::csf(3)),
            Choice::Fixed(Format::coo(3)),
            Choice::Fixed(Format::dense(3)),
            Choice::Fixed(Format::csf_ordered(&[2, 0, 1])),
            Choice::Composition,
        ]
    };
    run(&[
        case(
            "A(i,j) = B(i,j,k) * c(k)",
            vec![
                op_choices("B", order3()),
                op("c", vec![Format::dense(1), Format::sparse_vector()]),
            ],
            vec![Format::dense(2), Format::csr(), Format::dcsr()],
        ),
        case(
            "A(i,j,k) = B(i,j,l) * C(k,l)",
            vec![
                op_choices("B", order3()),
                op("C", vec![Format::dense(2), Format::csr()]),
            ],
            vec![Format::dense(3), Format::csf(3), Format::coo(3)],
        ),
        case(
            "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
            vec![
                op_choices("B", order3()),
                op("C", vec![Format::dense(2)]),
                op("D", vec![Format::dense(2), col_major()]),
            ],
            vec![Format::dense(2), Format::csr()],
        ),
        case(
            "a = B(i,j,k) * C(i,j,k)",
            vec![op_choices("B", order3()), op_choices("C", order3())],
            vec![Format::dense(0)],
        ),
    ]);
}

#[test]
fn order_four_and_five_contractions_match_reference() {
    run(&[
        case(
            "A(i,j) = B(i,k,l,m) * C(k,l,m,j)",
            vec![
                op_choices(
                    "B",
                    vec![
                        Choice::Fixed(Format::csf(4)),
                        Choice::Fixed(Format::coo(4)),
                        Choice::Fixed(Format::dense(4)),
                        Choice::Composition,
                    ],
                ),
                op(
                    "C",
                    vec![Format::csf(4), Format::dense(4), Format::csf_ordered(&[3, 2, 1, 0])],
                ),
            ],
            vec![Format::dense(2), Format::csr()],
        ),
        case(
            "a(i) = B(i,j,k,l,m) * c(j) * d(k)",
            vec![
                op("B", vec![Format::csf(5), Format::coo(5), Format::dense(5)]),
                op("c", vec![Format::dense(1), Format::sparse_vector()]),
                op("d", vec![Format::dense(1), Format::hash_vector()]),
            ],
            vec![Format::dense(1), Format::sparse_vector()],
        ),
        case(
            "A(i,j,k,l) = B(i,j,k,l) + C(l,k,j,i)",
            vec![
                op("B", vec![Format::csf(4), Format::coo(4)]),
                op("C", vec![Format::csf(4), Format::dense(4)]),
            ],
            vec![Format::csf(4), Format::dense(4), Format::coo(4)],
        ),
    ]);
}

#[test]
fn transpose_and_scaling_match_reference() {
    run(&[
        case(
            "A(i,j) = B(j,i)",
            vec![op("B", all_matrix())],
            vec![
                Format::csr(),
                Format::csc(),
                Format::dense(2),
                Format::coo(2),
                Format::dcsr(),
            ],
        ),
        case(
            "A(i,j) = s * B(i,j)",
            vec![op("s", vec![Format::dense(0)]), op("B", all_matrix())],
            vec![Format::csr(), Format::dense(2), Format::coo(2)],
        ),
        Case {
            statement: "A(i,j) = 0.5 * B(i,j)",
            operands: vec![op("B", all_matrix())],
            outputs: vec![Some(Format::csr()), Some(Format::dense(2)), None],
        },
        case(
            "A(i,j) = -B(i,j) / 4",
            vec![op("B", vec![Format::csr(), Format::coo(2), Format::dense(2)])],
            vec![Format::csr(), Format::dense(2)],
        ),
    ]);
}

/// The statements the default schedule rules change: a sparse vector an
/// intersection would walk again per row (made dense), and products over
/// a transposed access into sparse outputs (led by the output's first
/// variable, the inputs transposed).
#[test]
fn default_schedule_rules_match_reference() {
    let sparse = || vec![Format::csr(), Format::dcsr(), Format::coo(2), Format::csc()];
    run(&[
        case(
            "C(i,j) = A(k,i) * B(k,j)",
            vec![op("A", sparse()), op("B", sparse())],
            vec![Format::csr(), Format::dcsr(), Format::coo(2), Format::dense(2)],
        ),
        case(
            "C(i,j) = A(i,j) * x(j)",
            vec![
                op("A", sparse()),
                op("x", vec![Format::sparse_vector(), Format::coo(1)]),
            ],
            vec![Format::csr(), Format::dense(2)],
        ),
        case(
            "y(i) = A(i,j) * x(j) + z(i)",
            vec![
                op("A", vec![Format::csr(), Format::dcsr()]),
                op("x", vec![Format::sparse_vector()]),
                op("z", vectors()),
            ],
            vec![Format::dense(1), Format::sparse_vector()],
        ),
    ]);
}

#[test]
fn residual_and_affine_spmv_match_reference() {
    let a = || {
        vec![
            Format::csr(),
            Format::csc(),
            Format::coo(2),
            Format::dia(),
            Format::dense(2),
        ]
    };
    let v = || vec![Format::dense(1), Format::sparse_vector()];
    run(&[
        case(
            "r(i) = b(i) - A(i,j) * x(j)",
            vec![op("b", v()), op("A", a()), op("x", v())],
            vec![Format::dense(1), Format::sparse_vector()],
        ),
        case(
            "y(i) = A(i,j) * x(j) + b(i)",
            vec![op("A", a()), op("x", v()), op("b", v())],
            vec![Format::dense(1), Format::sparse_vector(), Format::hash_vector()],
        ),
    ]);
}

#[test]
fn add_assign_into_an_existing_output_matches_reference() {
    run(&[
        case(
            "A(i,j) += B(i,k) * C(k,j)",
            vec![
                op("A", vec![Format::dense(2), Format::csr(), Format::coo(2)]),
                op("B", vec![Format::csr(), Format::dense(2)]),
                op("C", vec![Format::csr(), Format::csc()]),
            ],
            vec![Format::dense(2), Format::csr(), Format::dcsr()],
        ),
        case(
            "y(i) += A(i,j) * x(j)",
            vec![
                op(
                    "y",
                    vec![Format::dense(1), Format::sparse_vector(), Format::hash_vector()],
                ),
                op("A", vec![Format::csr(), Format::csc()]),
                op("x", vec![Format::dense(1)]),
            ],
            vec![Format::dense(1), Format::sparse_vector()],
        ),
        case(
            "a += B(i,j) * C(i,j)",
            vec![
                op("a", vec![Format::dense(0)]),
                op("B", vec![Format::csr(), Format::coo(2)]),
                op("C", vec![Format::csc(), Format::dense(2)]),
            ],
            vec![Format::dense(0)],
        ),
    ]);
}

#[test]
fn broadcast_and_division_by_dense_match_reference() {
    run(&[
        case(
            "A(i,j) = b(i)",
            vec![op(
                "b",
                vec![Format::dense(1), Format::sparse_vector(), Format::hash_vector()],
            )],
            vec![
                Format::dense(2),
                Format::csr(),
                Format::coo(2),
                Format::csc(),
                Format::dcsr(),
            ],
        ),
        case(
            "A(i,j,k) = B(i,k) * c(j)",
            vec![
                op("B", vec![Format::csr(), Format::dense(2)]),
                op("c", vec![Format::sparse_vector()]),
            ],
            vec![Format::csf(3), Format::dense(3)],
        ),
        case(
            "y(i) = b(i) / d(i)",
            vec![
                op("b", vec![Format::sparse_vector(), Format::dense(1)]),
                divisor("d", vec![Format::dense(1), Format::sparse_vector()]),
            ],
            vec![Format::dense(1), Format::sparse_vector()],
        ),
        case(
            "A(i,j) = B(i,j) / s + C(i,j)",
            vec![
                op("B", vec![Format::csr(), Format::coo(2)]),
                divisor("s", vec![Format::dense(0)]),
                op("C", vec![Format::csc(), Format::dense(2)]),
            ],
            vec![Format::csr(), Format::dense(2)],
        ),
    ]);
}

/// Hash columns: dense columns, each a hash map of rows (a packed output
/// whose levels are not in mode order).
fn hash_columns() -> Format {
    Format::from_levels(&[LevelFormat::dense(), LevelFormat::hashed()], &[1, 0]).unwrap()
}

#[test]
fn structured_and_hashed_outputs_match_reference() {
    run(&[
        case(
            "A(i,j) = B(i,j) + C(i,j)",
            vec![
                op("B", vec![Format::csr(), Format::dia()]),
                op("C", vec![Format::coo(2), Format::ell()]),
            ],
            vec![
                Format::dia(),
                Format::ell(),
                bcsr(),
                Format::hash_rows(),
                hash_columns(),
            ],
        ),
        case(
            "A(i,j) = B(i,k) * C(k,j)",
            vec![
                op("B", vec![Format::csr(), Format::csc()]),
                op("C", vec![Format::csr(), Format::dense(2)]),
            ],
            vec![Format::ell(), bcsr(), hash_columns()],
        ),
        // Two BCSR tensors of the same blocks merge block by block.
        case(
            "A(i,j) = B(i,j) + C(i,j)",
            vec![op("B", vec![bcsr()]), op("C", vec![bcsr(), Format::csr()])],
            vec![Format::dense(2), Format::csr(), bcsr()],
        ),
        case(
            "A(i,j) = B(i,j) * C(i,j)",
            vec![op("B", vec![bcsr()]), op("C", vec![bcsr()])],
            vec![Format::dense(2), bcsr()],
        ),
        case(
            "y(i) = (B(i,j) - C(i,j)) * x(j)",
            vec![
                op("B", vec![bcsr()]),
                op("C", vec![bcsr()]),
                op("x", vec![Format::dense(1)]),
            ],
            vec![Format::dense(1)],
        ),
        // A structured output in the format of a structured factor takes
        // its pattern, its levels iterated natively; other pairs convert.
        case(
            "A(i,j) = -(B(i,j) * 3)",
            vec![op("B", vec![Format::dia(), Format::ell(), bcsr(), Format::csr()])],
            vec![Format::dia(), Format::ell(), bcsr()],
        ),
        case(
            "A(i,j) = B(i,j) * x(j) * y(i)",
            vec![
                op("B", vec![Format::dia(), Format::ell(), bcsr()]),
                op("x", vec![Format::dense(1)]),
                op("y", vec![Format::dense(1), Format::sparse_vector()]),
            ],
            vec![Format::dia(), Format::ell(), bcsr()],
        ),
        case(
            "A(i,j,k) = B(i,j,k) * 2",
            vec![op("B", vec![Format::csf(3), Format::coo(3)])],
            vec![
                Format::from_levels(
                    &[LevelFormat::hashed(), LevelFormat::dense(), LevelFormat::hashed()],
                    &[2, 0, 1],
                )
                .unwrap(),
                Format::coo_ordered(&[2, 1, 0]),
            ],
        ),
    ]);
}

/// Minimal forms of bugs the random suite found; each names the bug.
#[test]
fn regressions_found_by_the_random_suite_match_reference() {
    let hashed_rows_of_3 = || {
        use tessera_formats::LevelFormat;
        let (h, c) = (LevelFormat::hashed(), LevelFormat::compressed());
        Format::from_levels(&[h, c, c], &[2, 0, 1]).expect("three levels")
    };
    run(&[
        // Two BCSR tensors, one read transposed: the second one's blocks
        // split `i` by another size, so it became CSR, then CSC for the
        // order, whose compressed level then walked `i`, which the first
        // one's blocks split: that level was "located". The first one is
        // converted too now.
        case(
            "a = B(j,i) * C * D(i,j)",
            vec![
                op("B", vec![Format::bcsr(1, 2).unwrap()]),
                op("C", vec![Format::dense(0)]),
                op("D", vec![Format::bcsr(1, 2).unwrap(), Format::bcsr(2, 2).unwrap()]),
            ],
            vec![Format::dense(0)],
        ),
        // A DIA factor whose rows meet a difference of hashed tensors: the
        // merge over its rows had several points, and walked its range
        // level by position (it has none); it is converted now.
        case(
            "a = B(i,k) * sum(j, -(C(j,l,i) - C(j,l,i)))",
            vec![
                op("B", vec![Format::dia(), Format::ell()]),
                op("C", vec![hashed_rows_of_3()]),
            ],
            vec![Format::dense(0)],
        ),
        // A sum over `l` nested in a sum over `k` below the root: the outer
        // temporary counted `l` as free, the loop-order search met a cycle
        // of its own constraints and retried forever.
        case(
            "a(i) = 1 + B(i,k) * (c(k) - D(i,k,l))",
            vec![
                op("B", vec![Format::csr()]),
                op("c", vec![Format::dense(1)]),
                op("D", vec![Format::csf(3)]),
            ],
            vec![Format::dense(1)],
        ),
        // A full factor of a product (`x`) pruned the point `{b}` of the
        // merge, and was walked by position (dense levels have none).
        case(
            "y(i) = b(i) + x(i) * c(i)",
            vec![
                op("b", vec![Format::sparse_vector()]),
                op("x", vec![Format::dense(1)]),
                op("c", vec![Format::sparse_vector()]),
            ],
            vec![Format::dense(1), Format::sparse_vector()],
        ),
        // `/` made the lattice the universe alone: the numerator's compressed
        // iterator was dropped from the loop and then "located".
        case(
            "y(i) = b(i) / 2 * c(i)",
            vec![
                op("b", vec![Format::sparse_vector()]),
                op("c", vec![Format::sparse_vector(), Format::hash_vector()]),
            ],
            vec![Format::dense(1), Format::sparse_vector()],
        ),
        // Every iterator of a summed loop can locate: the driver must not
        // be the dense one.
        case(
            "y(i) = A(i,j) * x(j)",
            vec![op("A", vec![Format::dense(2)]), op("x", vec![Format::hash_vector()])],
            vec![Format::dense(1), Format::sparse_vector(), Format::hash_vector()],
        ),
    ]);
}

/// BCSR 2x1 and 1x2 have the same level formats; the kernel cache must
/// still tell them apart.
#[test]
fn kernel_cache_tells_formats_with_the_same_levels_apart() {
    let engine = Engine::new();
    let mut rng = Rng::new(5);
    let x = random_tensor(&mut rng, &[4], EntryKind::Full, &Format::dense(1)).unwrap();
    for (r, c) in [(2, 1), (1, 2), (2, 2), (2, 1)] {
        let f = Format::bcsr(r, c).unwrap();
        let a = random_tensor(&mut rng, &[4, 4], EntryKind::Random, &f).unwrap();
        check_statement(&engine, "y(i) = A(i,j) * x(j)", &[("A", &a), ("x", &x)], None, &[]).unwrap();
    }
}

/// Blocks stored as a DCSR of dense `r x c` blocks: a composition no
/// named format has, iterated by the same derived variables as BCSR.
fn blocked_dcsr(r: usize, c: usize) -> Format {
    use tessera_formats::{FormatLevel, Projection, Split};
    let level = |level, mode, split| FormatLevel {
        level,
        projection: Projection::Mode { mode, split },
    };
    Format::new(
        2,
        vec![
            level(LevelFormat::compressed(), 0, Split::Outer(r)),
            level(LevelFormat::compressed(), 1, Split::Outer(c)),
            level(LevelFormat::dense(), 0, Split::Inner(r)),
            level(LevelFormat::dense(), 1, Split::Inner(c)),
        ],
    )
    .unwrap()
}

/// Kernels with a dense output over structured inputs, each run natively
/// (no conversion in the plan) and compared with the reference: DIA, ELL,
/// BCSR of several block sizes (1x1 included) and a blocked DCSR, over
/// rectangular, one-row, empty (0 x n) and all-zero matrices and every
/// kind of contents. `B` is dense; `x` a dense vector.
#[test]
fn structured_inputs_are_iterated_natively_and_match_reference() {
    let statements: [(&str, usize); 10] = [
        ("y(i) = A(i,j) * x(j)", 1),
        ("y(j) = A(i,j) * x(j)", 1),
        ("y(j) = A(i,j) * x(i)", 1),
        ("C(i,k) = A(i,j) * B(j,k)", 2),
        ("C(i,j) = -A(i,j) * B(i,j) * 3", 2),
        ("C(i,j) = 2 * A(i,j)", 2),
        ("y(i) = A(i,j)", 1),
        ("y(j) = A(i,j)", 1),
        ("s = A(i,j)", 0),
        ("s = A(i,j) * A(i,j)", 0),
    ];
    let formats = [
        Format::dia(),
        Format::ell(),
        Format::bcsr(1, 1).unwrap(),
        Format::bcsr(2, 3).unwrap(),
        Format::bcsr(4, 4).unwrap(),
        blocked_dcsr(2, 2),
    ];
    let engine = crate::suite_engine();
    let mut rng = Rng::new(0x57c);
    let mut checks = 0;
    for format in &formats {
        // Blocks need shapes they divide (12 and 24 are multiples of every
        // block here); diagonals and slots take any.
        let shapes: [[usize; 2]; 5] = match format.name() {
            Some("dia" | "ell") => [[7, 5], [5, 9], [1, 6], [0, 4], [6, 6]],
            _ => [[12, 24], [24, 12], [4, 12], [0, 12], [12, 12]],
        };
        for (statement, order) in statements {
            let output = Format::dense(order);
            let kernel = engine
                .compile(
                    statement,
                    &[("A", format.clone()), ("B", Format::dense(2)), ("x", Format::dense(1))],
                    &output,
                )
                .unwrap_or_else(|e| panic!("{statement} with A in {format}: {e}"));
            assert!(
                !kernel.plan().contains("convert A"),
                "{statement} converts A ({format}):\n{}",
                kernel.plan()
            );
            for shape in &shapes {
                for (t, kind) in EntryKind::ALL.iter().enumerate() {
                    let a = random_tensor(&mut rng, shape, *kind, format).unwrap();
                    let columns = if statement.contains("B(j,k)") { 3 } else { shape[1] };
                    let b_shape = if statement.contains("B(j,k)") {
                        [shape[1], columns]
                    } else {
                        *shape
                    };
                    let b = random_tensor(&mut rng, &b_shape, EntryKind::ALL[(t + 3) % 10], &Format::dense(2)).unwrap();
                    let x_len = if statement.contains("x(i)") { shape[0] } else { shape[1] };
                    let x = random_tensor(&mut rng, &[x_len], EntryKind::Random, &Format::dense(1)).unwrap();
                    let inputs: Vec<(&str, &Tensor<f64>)> = [("A", &a), ("B", &b), ("x", &x)]
                        .into_iter()
                        .filter(|(name, _)| statement.contains(&format!("{name}(")))
                        .collect();
                    check_statement(&engine, statement, &inputs, Some(&output), &[])
                        .unwrap_or_else(|e| panic!("{statement}, A {format} {shape:?} {kind:?}: {e}"));
                    checks += 1;
                }
            }
        }
    }
    assert_eq!(checks, formats.len() * statements.len() * 5 * EntryKind::ALL.len());
}

/// Sums, differences and products of two BCSR tensors of the same blocks
/// into BCSR: assembled natively, block row by block row (each stored
/// block of either merged with the other's), with no conversion, over
/// block sizes 1x1, 2x3 and 4x4 and a blocked DCSR, rectangular,
/// one-block-row, empty (0 x n) and square shapes and every kind of
/// contents.
#[test]
fn bcsr_sums_into_bcsr_merge_blocks_natively_and_match_reference() {
    let engine = crate::suite_engine();
    let mut rng = Rng::new(0xb5c);
    let mut checks = 0;
    let blocks = [(1, 1), (2, 3), (4, 4), (2, 2)];
    let statements = [
        "C(i,j) = A(i,j) + B(i,j)",
        "C(i,j) = A(i,j) - B(i,j)",
        "C(i,j) = A(i,j) * B(i,j)",
    ];
    for (k, (r, c)) in blocks.into_iter().enumerate() {
        // The last: blocks stored as DCSR, whose block rows are compressed.
        let format = match k {
            3 => blocked_dcsr(r, c),
            _ => Format::bcsr(r, c).unwrap(),
        };
        for statement in statements {
            let kernel = engine
                .compile(statement, &[("A", format.clone()), ("B", format.clone())], &format)
                .unwrap_or_else(|e| panic!("{statement} in {format}: {e}"));
            let plan = kernel.plan();
            assert!(!plan.contains("convert"), "{statement} in {format} converts:\n{plan}");
            assert!(
                plan.contains(&format!("the two stored rows of {r}x{c} blocks merged block by block")),
                "{statement} in {format}: not merged block by block:\n{plan}"
            );
            for shape in [[12, 24], [24, 12], [4, 12], [0, 12], [12, 12]] {
                for (t, kind) in EntryKind::ALL.iter().enumerate() {
                    let a = random_tensor(&mut rng, &shape, *kind, &format).unwrap();
                    let b = random_tensor(&mut rng, &shape, EntryKind::ALL[(t + 3) % 10], &format).unwrap();
                    check_statement(&engine, statement, &[("A", &a), ("B", &b)], Some(&format), &[])
                        .unwrap_or_else(|e| panic!("{statement}, {format} {shape:?} {kind:?}: {e}"));
                    checks += 1;
                }
            }
        }
    }
    assert_eq!(checks, blocks.len() * statements.len() * 5 * EntryKind::ALL.len());
}

/// Two DIA tensors merge their diagonals by offset (the variable `j-i`
/// they share) into a DIA or dense output, on every tier, with nothing
/// converted: sums, differences and products, over shapes whose diagonals
/// lie partly outside the matrix, one row, no rows, 1x1, and every kind of
/// entries (empty, all zeros, skewed rows, ...).
#[test]
fn dia_sums_merge_diagonals_natively_and_match_reference() {
    let engine = crate::suite_engine();
    let mut rng = Rng::new(0xd1a);
    let mut checks = 0;
    let statements = [
        "C(i,j) = A(i,j) + B(i,j)",
        "C(i,j) = A(i,j) - B(i,j)",
        "C(i,j) = A(i,j) * B(i,j)",
        "C(i,j) = A(i,j) + B(i,j) - 2 * A(i,j)",
    ];
    let shapes = [[12, 24], [24, 12], [1, 12], [0, 12], [12, 12], [1, 1]];
    let format = Format::dia();
    for output in [Format::dia(), Format::dense(2)] {
        for statement in statements {
            let kernel = engine
                .compile(statement, &[("A", format.clone()), ("B", format.clone())], &output)
                .unwrap_or_else(|e| panic!("{statement} into {output}: {e}"));
            let plan = kernel.plan();
            assert!(!plan.contains("convert"), "{statement} into {output} converts:\n{plan}");
            // Into a dense output, a sum of A and B needs no merge: each
            // term's diagonals add into it by loops of their own.
            let apart = output == Format::dense(2) && !statement.contains('*');
            assert_eq!(
                plan.contains("forall j-i: merge A.compressed, B.compressed"),
                !apart,
                "{statement} into {output}:\n{plan}"
            );
            assert_eq!(plan.contains("term 2 of 2, added into C"), apart, "{plan}");
            // `a op b` into DIA merges each diagonal's rows as one op; the
            // three terms run the loops over the rows.
            let runs = plan.contains("the two computed ranges merged into an output range");
            let two_terms = statement.matches('(').count() == 3;
            assert_eq!(
                runs,
                output == Format::dia() && two_terms,
                "{statement} into {output}:\n{plan}"
            );
            for shape in shapes {
                for (t, kind) in EntryKind::ALL.iter().enumerate() {
                    let a = random_tensor(&mut rng, &shape, *kind, &format).unwrap();
                    let b = random_tensor(&mut rng, &shape, EntryKind::ALL[(t + 3) % 10], &format).unwrap();
                    check_statement(&engine, statement, &[("A", &a), ("B", &b)], Some(&output), &[])
                        .unwrap_or_else(|e| panic!("{statement} into {output}, {shape:?} {kind:?}: {e}"));
                    checks += 1;
                }
            }
        }
    }
    assert_eq!(checks, 2 * statements.len() * shapes.len() * EntryKind::ALL.len());
}

/// A statement that is not zero where a DIA tensor stores nothing (a
/// constant term, `exp` of it) needs components off its diagonals: the
/// tensor is converted, as the plan says, and the result is right.
#[test]
fn dia_in_a_statement_nonzero_off_its_diagonals_is_converted() {
    let engine = crate::suite_engine();
    let mut rng = Rng::new(0xd1b);
    for statement in [
        "C(i,j) = (A(i,j) + 3) * 2",
        "C(i,j) = exp(A(i,j)) - A(i,j)",
        "C(i,j) = exp(A(i,j))",
    ] {
        let kernel = engine
            .compile(statement, &[("A", Format::dia())], &Format::dense(2))
            .unwrap();
        let plan = kernel.plan();
        assert!(
            plan.contains("convert A") && plan.contains("not zero where it stores nothing"),
            "{statement}:\n{plan}"
        );
        let a = random_tensor(&mut rng, &[7, 5], EntryKind::Random, &Format::dia()).unwrap();
        check_statement(&engine, statement, &[("A", &a)], Some(&Format::dense(2)), &[]).unwrap();
    }
}

/// Where a structured operand cannot be iterated as it is, the plan
/// converts it and says why: a sparse output (its padding would become
/// entries), a term without it, a tensor walking its modes beside it.
#[test]
fn structured_inputs_the_statement_cannot_follow_are_converted_with_a_reason() {
    let engine = crate::suite_engine();
    let cases = [
        (
            "C(i,j) = 2 * A(i,j)",
            Format::csr(),
            Format::dense(2),
            "the output is sparse",
        ),
        (
            "C(i,j) = A(i,j) + B(i,j)",
            Format::csr(),
            Format::csr(),
            "adds terms that do not read it",
        ),
        (
            "C(i,j) = A(i,j) * B(i,j)",
            Format::dense(2),
            Format::csr(),
            "walks j through its compressed level",
        ),
    ];
    let mut rng = Rng::new(9);
    for format in [Format::dia(), Format::ell(), Format::bcsr(2, 2).unwrap()] {
        for (statement, output, b_format, reason) in &cases {
            let kernel = engine
                .compile(statement, &[("A", format.clone()), ("B", b_format.clone())], output)
                .unwrap();
            assert!(
                kernel.plan().contains("convert A") && kernel.plan().contains(reason),
                "{statement} with A in {format}, B in {b_format}: expected a conversion because {reason}:\n{}",
                kernel.plan()
            );
            let a = random_tensor(&mut rng, &[6, 8], EntryKind::Random, &format).unwrap();
            let b = random_tensor(&mut rng, &[6, 8], EntryKind::Random, b_format).unwrap();
            check_statement(&engine, statement, &[("A", &a), ("B", &b)], Some(output), &[]).unwrap();
        }
    }
}

/// Unordered COO keeps entries as given (unsorted, duplicates kept) and
/// kernels walk it without converting it when no loop needs order: one
/// tensor walked into a dense output. Elsewhere it is converted, and the
/// plan says why.
#[test]
fn unordered_coo_is_walked_as_given_where_no_loop_needs_order() {
    let native: [(&str, usize); 6] = [
        ("y(i) = A(i,j) * x(j)", 1),
        ("C(i,j) = A(i,j) + B(i,j)", 2),
        ("y(j) = A(i,j) * x(i)", 1),
        ("C(i,k) = A(i,j) * B(j,k)", 2),
        ("s = A(i,j)", 0),
        ("C(i,j) = 2 * A(i,j) * B(i,j)", 2),
    ];
    let format = Format::coo_unordered(2);
    let engine = crate::suite_engine();
    let mut rng = Rng::new(0xc00);
    for (statement, order) in native {
        let output = Format::dense(order);
        let kernel = engine
            .compile(
                statement,
                &[("A", format.clone()), ("B", Format::dense(2)), ("x", Format::dense(1))],
                &output,
            )
            .unwrap();
        assert!(!kernel.plan().contains("convert A"), "{statement}:\n{}", kernel.plan());
        for shape in [[9, 7], [1, 5], [0, 3], [6, 6]] {
            for kind in EntryKind::ALL {
                let a = random_tensor(&mut rng, &shape, kind, &format).unwrap();
                let columns = if statement.contains("B(j,k)") { 4 } else { shape[1] };
                let b_shape = if statement.contains("B(j,k)") {
                    [shape[1], columns]
                } else {
                    shape
                };
                let b = random_tensor(&mut rng, &b_shape, EntryKind::Random, &Format::dense(2)).unwrap();
                let x_len = if statement.contains("x(i)") { shape[0] } else { shape[1] };
                let x = random_tensor(&mut rng, &[x_len], EntryKind::Random, &Format::dense(1)).unwrap();
                let inputs: Vec<(&str, &Tensor<f64>)> = [("A", &a), ("B", &b), ("x", &x)]
                    .into_iter()
                    .filter(|(name, _)| statement.contains(&format!("{name}(")))
                    .collect();
                check_statement(&engine, statement, &inputs, Some(&output), &[])
                    .unwrap_or_else(|e| panic!("{statement}, A ucoo {shape:?} {kind:?}: {e}"));
            }
        }
    }
    for (statement, output, reason) in [
        (
            "C(i,j) = 2 * A(i,j)",
            Format::csr(),
            "a sparse output is assembled in order",
        ),
        (
            "C(i,j) = (A(i,j) + B(i,j)) * 2",
            Format::dense(2),
            "merges it with other terms",
        ),
    ] {
        let kernel = engine
            .compile(statement, &[("A", format.clone()), ("B", Format::dense(2))], &output)
            .unwrap();
        assert!(
            kernel.plan().contains("convert A") && kernel.plan().contains(reason),
            "{statement}: expected a conversion because {reason}:\n{}",
            kernel.plan()
        );
        let a = random_tensor(&mut rng, &[6, 8], EntryKind::Duplicates, &format).unwrap();
        let b = random_tensor(&mut rng, &[6, 8], EntryKind::Random, &Format::dense(2)).unwrap();
        check_statement(&engine, statement, &[("A", &a), ("B", &b)], Some(&output), &[]).unwrap();
    }
}

/// A sum into a dense output whose terms' tensors cannot be merged (two
/// ELL matrices, whose slots are their own; DIA or unordered COO beside
/// another format; a constant beside DIA), or whose terms read different
/// sparse tensors, is computed term by term, each term by loops of its
/// own adding into the output: nothing is converted, and the result is
/// right on awkward shapes and entries, on any number of threads (terms
/// whose outer loops are the same rows run in the same chunks).
#[test]
fn sums_into_a_dense_output_run_term_by_term_without_converting() {
    let engine = crate::suite_engine();
    let mut rng = Rng::new(0x7e5);
    let ucoo = Format::coo_unordered(2);
    let cases: [(&str, [Format; 2], usize); 11] = [
        (
            "y(i) = A(i,j) * x(j) + B(i,j) * x(j)",
            [Format::csr(), Format::dcsr()],
            2,
        ),
        ("C(i,j) = A(i,j) - B(i,j)", [Format::csr(), Format::csr()], 2),
        ("C(i,j) = A(i,j) + B(i,j)", [Format::ell(), Format::ell()], 2),
        ("C(i,j) = A(i,j) - B(i,j)", [Format::ell(), Format::ell()], 2),
        ("C(i,j) = A(i,j) + B(i,j)", [Format::dia(), Format::csr()], 2),
        ("C(i,j) = 2 * A(i,j) - B(j,i)", [Format::ell(), Format::csc()], 2),
        ("C(i,j) = A(i,j) + B(i,j)", [ucoo.clone(), Format::csr()], 2),
        ("C(i,j) = A(i,j) + 3", [Format::dia(), Format::csr()], 2),
        ("C(i,j) = A(i,j) + A(i,j) - B(i,j)", [Format::ell(), Format::dia()], 3),
        (
            "y(i) = A(i,j) * x(j) + B(i,j) * x(j)",
            [Format::ell(), Format::ell()],
            2,
        ),
        ("s = A(i,j) + B(i,j)", [Format::ell(), ucoo], 2),
    ];
    for (statement, [a_format, b_format], terms) in cases {
        let order = parse_statement(statement).unwrap().lhs.indices.len();
        let output = Format::dense(order);
        let formats = [
            ("A", a_format.clone()),
            ("B", b_format.clone()),
            ("x", Format::dense(1)),
        ];
        let kernel = engine.compile(statement, &formats, &output).unwrap();
        let plan = kernel.plan();
        assert!(
            !plan.contains("convert") && plan.contains(&format!("term {terms} of {terms}, added into")),
            "{statement}, A {a_format}, B {b_format}:\n{plan}"
        );
        for shape in [[9, 7], [1, 1], [0, 3], [6, 6], [3, 0]] {
            for kind in EntryKind::ALL {
                let a = random_tensor(&mut rng, &shape, kind, &a_format).unwrap();
                let b_shape = if statement.contains("B(j,i)") {
                    [shape[1], shape[0]]
                } else {
                    shape
                };
                let b = random_tensor(&mut rng, &b_shape, kind, &b_format).unwrap();
                let x = random_tensor(&mut rng, &[shape[1]], EntryKind::Random, &Format::dense(1)).unwrap();
                let inputs: Vec<(&str, &Tensor<f64>)> = [("A", &a), ("B", &b), ("x", &x)]
                    .into_iter()
                    .filter(|(name, _)| statement.contains(&format!("{name}(")))
                    .collect();
                check_statement(&engine, statement, &inputs, Some(&output), &[])
                    .unwrap_or_else(|e| panic!("{statement}, A {a_format}, B {b_format}, {shape:?} {kind:?}: {e}"));
            }
        }
    }
}

/// The point of an unordered output: a row drained from the workspace
/// keeps the order its columns first came in, unsorted, on any number of
/// threads.
#[test]
fn an_unordered_output_row_keeps_its_columns_in_the_order_they_came() {
    use tessera_engine::{EvalOptions, Inputs};
    use tessera_formats::CoordinateList;
    // Row 0 of B reaches C's row 0 (column 5) before its row 1 (column 2).
    let mut b = CoordinateList::new(&[2, 2]);
    b.push(&[0, 0], 1.0).unwrap();
    b.push(&[0, 1], 2.0).unwrap();
    b.push(&[1, 1], 3.0).unwrap();
    let mut c = CoordinateList::new(&[2, 6]);
    c.push(&[0, 5], 4.0).unwrap();
    c.push(&[1, 2], 5.0).unwrap();
    c.push(&[1, 5], 6.0).unwrap();
    let (b, c) = (
        Tensor::pack(&b, Format::csr()).unwrap(),
        Tensor::pack(&c, Format::csr()).unwrap(),
    );
    let unordered = unordered_matrix_outputs().remove(0);
    let engine = crate::suite_engine();
    for threads in [1, 2] {
        let options = EvalOptions {
            output_format: Some(unordered.clone()),
            threads: Some(threads),
            chunk_work: Some(1),
            ..EvalOptions::default()
        };
        let a = engine
            .eval_with(
                "A(i,j) = B(i,k) * C(k,j)",
                &Inputs::new().with("B", &b).with("C", &c),
                &options,
            )
            .expect("the product runs");
        let columns: Vec<i64> = (0..4).map(|p| a.level(1).arrays[1].get(p)).collect();
        assert_eq!(columns, [5, 2, 2, 5], "{threads} threads");
        assert_eq!(a.values(), [4.0 + 12.0, 10.0, 15.0, 18.0], "{threads} threads");
    }
}
