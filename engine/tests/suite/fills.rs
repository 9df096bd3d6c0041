//! Tensors whose unstored components are not 0 (`+inf` for distances,
//! `-inf`, 1): semiring statements and plain ones over every named format
//! (padded ones hold the fill in their padding) and every awkward kind of
//! contents, against the dense reference, which reads each tensor with its
//! fill. The Cranelift tier runs the same table
//! (`tiers/tests/engine_suite.rs` includes this file).

use tessera_engine::notation::{parse_statement, Semiring, SEMIRINGS};
use tessera_engine::testing::{check_statement, rotated_tensors, Rng};
use tessera_engine::{EvalOptions, Inputs};
use tessera_formats::{Format, Tensor};

const FILLS: [f64; 5] = [f64::INFINITY, 0.0, f64::NEG_INFINITY, 1.0, 2.5];

/// Each tensor a statement reads, with its index variables.
type Reads = Vec<(&'static str, &'static str)>;

/// Statements, the tensors they read, and the fill to give them (`None`:
/// each of [`FILLS`] in turn).
fn statements() -> Vec<(String, Reads, Option<f64>)> {
    let mut out = Vec::new();
    for semiring in SEMIRINGS {
        for (text, vars) in [
            ("y(i) = A(i,j) * x(j)", vec![("A", "ij"), ("x", "j")]),
            ("C(i,j) = A(i,k) * B(k,j)", vec![("A", "ik"), ("B", "kj")]),
            ("C(i,j) = A(i,j) + B(i,j)", vec![("A", "ij"), ("B", "ij")]),
            ("y(i) = A(i,j) * x(j) + b(i)", vec![("A", "ij"), ("x", "j"), ("b", "i")]),
        ] {
            let rewritten = semiring.rewrite(&parse_statement(text).unwrap()).unwrap();
            out.push((rewritten.to_string(), vars, Some(semiring.zero())));
        }
    }
    for (text, vars) in [
        ("y(i) = min(j, A(i,j) + x(j))", vec![("A", "ij"), ("x", "j")]),
        ("y(i) = A(i,j) * x(j)", vec![("A", "ij"), ("x", "j")]),
        ("C(i,j) = A(i,j) + B(i,j)", vec![("A", "ij"), ("B", "ij")]),
        ("C(i,j) = max(A(i,j), B(i,j))", vec![("A", "ij"), ("B", "ij")]),
        ("y(i) = exp(b(i)) * c(i)", vec![("b", "i"), ("c", "i")]),
        ("a = min(i, b(i))", vec![("b", "i")]),
        ("C(i,j) = A(i,j)", vec![("A", "ij")]),
    ] {
        out.push((text.to_string(), vars, None));
    }
    out
}

#[test]
fn tensors_with_fills_match_the_reference_over_every_format() {
    let engine = crate::suite_engine();
    let mut failures = Vec::new();
    let mut checked = 0;
    for (s, (statement, vars, fill)) in statements().iter().enumerate() {
        let order = parse_statement(statement).unwrap().lhs.indices.len();
        let outputs: Vec<Option<Format>> = match order {
            0 => vec![None],
            1 => vec![None, Some(Format::dense(1)), Some(Format::sparse_vector())],
            _ => vec![None, Some(Format::dense(2)), Some(Format::csr()), Some(Format::dcsr())],
        };
        for trial in 0..12 {
            let mut rng = Rng::new(((s as u64) << 16) | trial as u64);
            let mut size = |rng: &mut Rng| {
                if trial % 4 == 0 {
                    rng.range(8, 20)
                } else {
                    rng.range(1, 6)
                }
            };
            let tensors: Vec<(String, Tensor<f64>)> = rotated_tensors(&mut rng, vars, trial, &mut size)
                .into_iter()
                .enumerate()
                .map(|(o, (name, t))| {
                    let fill = fill.unwrap_or(FILLS[(trial + o) % FILLS.len()]);
                    (name, t.with_fill(fill).expect("a fill"))
                })
                .collect();
            let refs: Vec<(&str, &Tensor<f64>)> = tensors.iter().map(|(n, t)| (n.as_str(), t)).collect();
            let output = &outputs[trial % outputs.len()];
            match check_statement(&engine, statement, &refs, output.as_ref(), &[]) {
                Ok(()) => checked += 1,
                Err(e) => failures.push(e),
            }
        }
    }
    eprintln!("{checked} checks of tensors with fills");
    assert!(
        failures.is_empty(),
        "{} checks differ:\n{}",
        failures.len(),
        failures.iter().take(10).cloned().collect::<Vec<_>>().join("\n")
    );
    assert!(checked > 300, "only {checked} checks ran");
}

/// A path graph 0 → 1 → 2 → 3 with weights 1, 2, 3, and one more edge
/// 0 → 3 of weight 10.
fn path_graph() -> Tensor<f64> {
    let mut entries = tessera_formats::CoordinateList::new(&[4, 4]);
    for (from, to, w) in [(0, 1, 1.0), (1, 2, 2.0), (2, 3, 3.0), (0, 3, 10.0)] {
        entries.push(&[to, from], w).unwrap();
    }
    Tensor::pack_with_fill(&entries, Format::csr(), f64::INFINITY).unwrap()
}

#[test]
fn min_plus_relaxation_visits_stored_edges_only_and_finds_shortest_paths() {
    let engine = crate::suite_engine();
    let a = path_graph();
    let mut source = tessera_formats::CoordinateList::new(&[4]);
    source.push(&[0], 0.0).unwrap();
    let mut d = Tensor::pack_with_fill(&source, Format::sparse_vector(), f64::INFINITY).unwrap();
    let statement = Semiring::MinPlus
        .rewrite(&parse_statement("d(i) = A(i,j) * e(j) + e(i)").unwrap())
        .unwrap()
        .to_string();
    let options = EvalOptions {
        output_format: Some(Format::sparse_vector()),
        ..EvalOptions::default()
    };
    let kernel = engine
        .kernel_for(&statement, &Inputs::new().with("A", &a).with("e", &d), &options)
        .unwrap();
    assert!(
        !kernel.plan().contains("every coordinate, matching A"),
        "{}",
        kernel.plan()
    );
    for _ in 0..3 {
        d = engine
            .eval_with(&statement, &Inputs::new().with("A", &a).with("e", &d), &options)
            .unwrap();
    }
    assert_eq!(d.fill(), f64::INFINITY);
    assert_eq!(d.to_dense_vec().unwrap(), vec![0.0, 1.0, 3.0, 6.0]);
}

#[test]
fn a_kernel_compiled_for_one_fill_refuses_another() {
    let engine = crate::suite_engine();
    let a = path_graph();
    let kernel = engine
        .compile("y(i) = min(j, A(i,j))", &[("A", Format::csr())], &Format::dense(1))
        .unwrap();
    let err = kernel.run(&Inputs::new().with("A", &a)).unwrap_err();
    assert!(
        err.to_string()
            .contains("A has fill inf, the kernel was compiled for fill 0"),
        "{err}"
    );
}

/// Structured formats whose fill is not 0 (ELL's unstored slots, DIA's
/// missing diagonals, BCSR's missing blocks all take it): converted, since
/// their loops visit only what they store. Empty tensors included.
#[test]
fn structured_tensors_with_fills_match_the_reference() {
    use tessera_engine::testing::{random_tensor, EntryKind};
    let engine = crate::suite_engine();
    let mut failures = Vec::new();
    let mut checked = 0;
    for format in [Format::ell(), Format::dia(), Format::bcsr(2, 2).unwrap()] {
        for (s, (statement, output, sizes)) in [
            ("C(i,j) = B(i,j)", Format::dense(2), vec![]),
            ("A(i,j,k) = B(j,i)", Format::dense(3), vec![("k", 3)]),
            ("y(i) = B(i,j) * x(j)", Format::dense(1), vec![]),
            ("C(i,j) = B(i,j) + D(i,j)", Format::dense(2), vec![]),
        ]
        .into_iter()
        .enumerate()
        {
            for (t, fill) in [f64::NEG_INFINITY, 2.5, 0.0].into_iter().enumerate() {
                for trial in 0..4u64 {
                    let mut rng = Rng::new(((s as u64) << 8) | ((t as u64) << 4) | trial);
                    // BCSR's blocks divide its sizes.
                    let (n, m) = (2 * rng.range(1, 4), 2 * rng.range(1, 4));
                    let kind = EntryKind::ALL[trial as usize % EntryKind::ALL.len()];
                    let b = random_tensor(&mut rng, &[n, m], kind, &format)
                        .unwrap()
                        .with_fill(fill)
                        .unwrap();
                    let x = random_tensor(&mut rng, &[m], kind, &Format::dense(1)).unwrap();
                    let d = random_tensor(&mut rng, &[n, m], kind, &Format::csr()).unwrap();
                    let refs = [("B", &b), ("x", &x), ("D", &d)];
                    let reads: Vec<(&str, &Tensor<f64>)> = refs
                        .into_iter()
                        .filter(|(name, _)| statement.contains(&format!("{name}(")))
                        .collect();
                    match check_statement(&engine, statement, &reads, Some(&output), &sizes) {
                        Ok(()) => checked += 1,
                        Err(e) => failures.push(e),
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} checks differ:\n{}",
        failures.len(),
        failures.iter().take(10).cloned().collect::<Vec<_>>().join("\n")
    );
    assert_eq!(checked, 3 * 4 * 3 * 4);
}
