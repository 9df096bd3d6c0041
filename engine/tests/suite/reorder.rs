//! Reordered evaluation against the dense reference: the kernels of the
//! differential table (SpMV, SpMM, SpGEMM, A*A, add, a transposed add,
//! TTV, MTTKRP, `+=`, a residual, a reduction to a scalar) with every
//! ordering, on random inputs of every awkward kind, must give the
//! reference's answer; and what reordering cannot do is refused in words.
//!
//! Trial `t` of a case draws each index size from 0–9 (all equal for
//! `rcm`, which needs a square driver) and gives operand `k` contents of
//! kind `ALL[(t + 3k) % 10]`. A failure prints the case, method and seed.

use tessera_engine::notation::parse_statement;
use tessera_engine::reference::evaluate;
use tessera_engine::reorder::{eval_reordered, eval_with_plan, ReorderPlan};
use tessera_engine::testing::{compare, random_tensor, EntryKind, Rng, Tolerance};
use tessera_engine::{Engine, EvalOptions, Inputs};
use tessera_formats::reorder::{parse_permutations, write_permutations_to, Method};
use tessera_formats::{Format, Tensor};

const TRIALS: u64 = 30;

struct Case {
    statement: &'static str,
    /// Each tensor the statement reads and its format.
    operands: Vec<(&'static str, Format)>,
    output: Option<Format>,
}

fn case(statement: &'static str, operands: Vec<(&'static str, Format)>, output: Option<Format>) -> Case {
    Case {
        statement,
        operands,
        output,
    }
}

fn cases() -> Vec<Case> {
    let d = Format::dense;
    vec![
        case("y(i) = A(i,j) * x(j)", vec![("A", Format::csr()), ("x", d(1))], None),
        case(
            "y(i) = A(i,j) * x(j)",
            vec![("A", Format::csc()), ("x", Format::sparse_vector())],
            None,
        ),
        case(
            "y(i) = A(i,j) * x(j)",
            vec![("A", Format::coo(2)), ("x", d(1))],
            Some(d(1)),
        ),
        case(
            "C(i,j) = A(i,k) * B(k,j)",
            vec![("A", Format::csr()), ("B", d(2))],
            Some(d(2)),
        ),
        case(
            "C(i,j) = A(i,k) * B(k,j)",
            vec![("A", Format::csr()), ("B", Format::csr())],
            Some(Format::csr()),
        ),
        case(
            "C(i,j) = A(i,k) * B(k,j)",
            vec![("A", Format::dcsr()), ("B", Format::csc())],
            None,
        ),
        case(
            "C(i,j) = A(i,k) * A(k,j)",
            vec![("A", Format::csr())],
            Some(Format::csr()),
        ),
        case(
            "C(i,j) = A(i,j) + B(i,j)",
            vec![("A", Format::csr()), ("B", Format::coo(2))],
            None,
        ),
        case(
            "C(i,j) = A(i,j) - B(j,i)",
            vec![("A", Format::csr()), ("B", Format::csr())],
            Some(d(2)),
        ),
        case(
            "C(i,j) = A(i,j) + A(j,i)",
            vec![("A", Format::csr())],
            Some(Format::csr()),
        ),
        case(
            "C(i,j) = A(i,j) * B(i,j)",
            vec![("A", Format::csr()), ("B", Format::dcsr())],
            None,
        ),
        case(
            "A(i,j) = B(i,j,k) * c(k)",
            vec![("B", Format::csf(3)), ("c", d(1))],
            None,
        ),
        case(
            "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
            vec![("B", Format::csf(3)), ("C", d(2)), ("D", d(2))],
            Some(d(2)),
        ),
        case(
            "y(i) += A(i,j) * x(j)",
            vec![("y", d(1)), ("A", Format::csr()), ("x", d(1))],
            None,
        ),
        case(
            "r(i) = b(i) - A(i,j) * x(j)",
            vec![("b", d(1)), ("A", Format::csr()), ("x", d(1))],
            None,
        ),
        case("s = A(i,j) * A(i,j)", vec![("A", Format::csr())], None),
        case("C(j,i) = A(i,j)", vec![("A", Format::csr())], Some(Format::csr())),
    ]
}

/// Runs one trial; `Ok(true)` when the reordering moved something.
fn trial(engine: &Engine, case: &Case, method: Method, seed: u64) -> Result<bool, String> {
    let mut rng = Rng::new(seed);
    let stmt = parse_statement(case.statement).unwrap();
    let square = rng.range(0, 9);
    // A tensor read twice (A*A, A + Aᵀ) must be square, and so must rcm's driver.
    let accesses = stmt.rhs.accesses();
    let read_twice = accesses
        .iter()
        .enumerate()
        .any(|(k, a)| accesses[..k].iter().any(|b| b.tensor == a.tensor));
    let all_square = method == Method::Rcm || read_twice;
    let mut sizes: Vec<(String, usize)> = Vec::new();
    let mut size_of = |var: &str, rng: &mut Rng| -> usize {
        if let Some((_, n)) = sizes.iter().find(|(v, _)| v == var) {
            return *n;
        }
        let n = if all_square { square } else { rng.range(0, 9) };
        sizes.push((var.to_string(), n));
        n
    };
    let mut tensors: Vec<(&str, Tensor<f64>)> = Vec::new();
    for (k, (name, format)) in case.operands.iter().enumerate() {
        let access = stmt
            .rhs
            .accesses()
            .into_iter()
            .find(|a| a.tensor == *name)
            .cloned()
            .unwrap_or_else(|| stmt.lhs.clone());
        let shape: Vec<usize> = access.indices.iter().map(|v| size_of(v.as_str(), &mut rng)).collect();
        let kind = EntryKind::ALL[(seed as usize + 3 * k) % EntryKind::ALL.len()];
        tensors.push((name, random_tensor(&mut rng, &shape, kind, format)?));
    }
    let refs: Vec<(&str, &Tensor<f64>)> = tensors.iter().map(|(n, t)| (*n, t)).collect();
    let reference = evaluate(&stmt, &refs, &[]).map_err(|e| format!("reference: {e}"))?;
    let mut inputs = Inputs::new();
    for (n, t) in &tensors {
        inputs.insert(n, t);
    }
    let options = EvalOptions {
        output_format: case.output.clone(),
        ..EvalOptions::default()
    };
    let plain = engine
        .eval_with(case.statement, &inputs, &options)
        .map_err(|e| format!("plain: {e}"))?;
    let reordered =
        eval_reordered(engine, case.statement, &inputs, &options, method).map_err(|e| format!("reordered: {e}"))?;
    compare(&reordered.result, &reference, Tolerance::default())?;
    if reordered.result.format() != plain.format() {
        return Err(format!(
            "the reordered result is stored as {}, the plain one as {}",
            reordered.result.format(),
            plain.format()
        ));
    }
    Ok(!reordered.plan.driver_permutations().is_identity())
}

fn run_all(method: Method) {
    let engine = Engine::new();
    let mut failures = Vec::new();
    for case in cases() {
        // rcm needs a square driver: statements whose driver is a
        // third-order tensor are refused (tested below), not run.
        if method == Method::Rcm && case.operands.iter().any(|(_, f)| f.order() == 3) {
            continue;
        }
        let mut moved = 0;
        for seed in 0..TRIALS {
            match trial(&engine, &case, method, seed) {
                Ok(m) => moved += usize::from(m),
                Err(e) => failures.push(format!("{} with {method}, seed {seed}: {e}", case.statement)),
            }
        }
        // Guard against a suite that passes because nothing was permuted.
        if moved == 0 {
            failures.push(format!("{} with {method}: no trial permuted anything", case.statement));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn lexi_reordered_kernels_match_the_reference() {
    run_all(Method::Lexi);
}

#[test]
fn rcm_reordered_kernels_match_the_reference() {
    run_all(Method::Rcm);
}

#[test]
fn degree_reordered_kernels_match_the_reference() {
    run_all(Method::Degree);
}

fn matrix(shape: [usize; 2], entries: &[(u64, u64, f64)], format: Format) -> Tensor<f64> {
    let mut list = tessera_formats::CoordinateList::new(&shape);
    for &(i, j, v) in entries {
        list.push(&[i, j], v).unwrap();
    }
    Tensor::pack(&list, format).unwrap()
}

#[test]
fn the_permutation_of_a_column_follows_its_index_variable_into_x() {
    // An arrow matrix whose full row and column are last: lexi moves them
    // first, so both of A's modes and x's mode are permuted.
    let a = matrix(
        [3, 3],
        &[(0, 2, 1.0), (1, 2, 2.0), (2, 0, 3.0), (2, 1, 4.0), (2, 2, 5.0)],
        Format::csr(),
    );
    let x = Tensor::from_dense(&[3], vec![1.0, 10.0, 100.0]).unwrap();
    let inputs = Inputs::new().with("A", &a).with("x", &x);
    let plan = ReorderPlan::compute("y(i) = A(i,j) * x(j)", &inputs, Method::Lexi).unwrap();
    let j = plan.permutation_of("j").unwrap();
    let reordered = plan.reorder_inputs(&inputs).unwrap();
    let x_new = reordered
        .tensors()
        .iter()
        .find(|(n, _)| n == "x")
        .unwrap()
        .1
        .to_dense_vec()
        .unwrap();
    for new in 0..3 {
        assert_eq!(x_new[new], [1.0, 10.0, 100.0][j.old_of(new)]);
    }
    assert!(!j.is_identity());
    // By hand: rows {2}, {2}, {0,1,2} sort to 2, 0, 1 (the full row first,
    // equal rows in their order); the columns then sort the same way, and
    // the second round moves nothing.
    assert_eq!(j.new_to_old(), &[2, 0, 1]);
    assert_eq!(plan.permutation_of("i").unwrap().new_to_old(), &[2, 0, 1]);
    assert_eq!(
        plan.describe(),
        "reordering: lexi, from the structure of A\n\
         \x20 i: mode 1 of A (3 of 3 coordinates move)\n\
         \x20 j: mode 2 of A (3 of 3 coordinates move)\n\
         \x20 inputs permuted: A(i,j), x(j)\n\
         \x20 result permuted back: y(i)\n"
    );
}

#[test]
fn ties_between_modes_are_reported_and_the_answer_kept() {
    // A*A ties rows and columns: lexi's two permutations differ, the
    // first serves both.
    let a = matrix(
        [4, 4],
        &[
            (0, 3, 1.0),
            (1, 3, 2.0),
            (3, 0, 3.0),
            (3, 1, 4.0),
            (2, 2, 5.0),
            (3, 3, 0.5),
        ],
        Format::csr(),
    );
    let inputs = Inputs::new().with("A", &a);
    let engine = Engine::new();
    let statement = "C(i,j) = A(i,k) * A(k,j)";
    let out = eval_reordered(&engine, statement, &inputs, &EvalOptions::default(), Method::Degree).unwrap();
    let plain = engine.eval(statement, &inputs).unwrap();
    assert_eq!(out.result.to_coordinates(), plain.to_coordinates());
    assert_eq!(out.plan.permutation_of("i"), out.plan.permutation_of("j"));
    assert_eq!(out.plan.permutation_of("i"), out.plan.permutation_of("k"));

    // Row degrees 3, 1, 1, 0 keep the rows; column degrees 1, 1, 2, 1 put
    // column 2 first: the two orders differ, the rows' serves both.
    let b = matrix(
        [4, 4],
        &[(0, 1, 1.0), (0, 2, 2.0), (0, 3, 3.0), (1, 0, 4.0), (2, 2, 5.0)],
        Format::csr(),
    );
    let inputs = Inputs::new().with("A", &b);
    let out = eval_reordered(&engine, statement, &inputs, &EvalOptions::default(), Method::Degree).unwrap();
    assert_eq!(
        out.result.to_coordinates(),
        engine.eval(statement, &inputs).unwrap().to_coordinates()
    );
    let columns = out.plan.driver_permutations().mode(1).unwrap();
    assert_eq!(columns.new_to_old(), &[2, 0, 1, 3]);
    assert!(out.plan.permutation_of("k").unwrap().is_identity());
    let text = out.plan.describe();
    assert!(
        text.contains(
            "note: mode 2 of A shares one permutation with mode 1 (the statement ties i, k, j): mode 1's is used for both"
        ),
        "{text}"
    );
}

#[test]
fn what_reordering_cannot_do_is_refused_in_words() {
    let engine = Engine::new();
    let a = matrix([2, 3], &[(0, 1, 1.0)], Format::csr());
    let x = Tensor::from_dense(&[3], vec![1.0; 3]).unwrap();
    let inputs = Inputs::new().with("A", &a).with("x", &x);
    let e = eval_reordered(
        &engine,
        "y(i) = A(i,j) * x(j)",
        &inputs,
        &EvalOptions::default(),
        Method::Rcm,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.contains("rcm") && e.contains("square matrix") && e.contains("2x3"),
        "{e}"
    );

    let b = Tensor::from_dense(&[3], vec![2.0; 3]).unwrap();
    let inputs = Inputs::new().with("b", &b).with("x", &x);
    let e = eval_reordered(
        &engine,
        "y(i) = b(i) * x(i)",
        &inputs,
        &EvalOptions::default(),
        Method::Lexi,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("every input of this statement is dense"), "{e}");

    // A hypersparse matrix of huge dimensions: a permutation per coordinate
    // cannot be held.
    let huge = 1usize << 40;
    let h = matrix([huge, huge], &[(3, 5, 1.0)], Format::dcsr());
    let inputs = Inputs::new().with("H", &h);
    let e = eval_reordered(
        &engine,
        "C(i,j) = H(i,j) * 2",
        &inputs,
        &EvalOptions::default(),
        Method::Degree,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("refusing to allocate") && e.contains("permutation"), "{e}");

    let inputs = Inputs::new().with("x", &x);
    let e = eval_reordered(
        &engine,
        "y(i) = A(i,j) * x(j)",
        &inputs,
        &EvalOptions::default(),
        Method::Lexi,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("unknown tensor A"), "{e}");
}

#[test]
fn saved_permutations_give_the_same_answer_in_a_later_run() {
    let engine = Engine::new();
    let mut rng = Rng::new(7);
    let a = random_tensor(&mut rng, &[9, 7], EntryKind::Random, &Format::csr()).unwrap();
    let b = random_tensor(&mut rng, &[7, 5], EntryKind::Full, &Format::dense(2)).unwrap();
    let inputs = Inputs::new().with("A", &a).with("B", &b);
    let statement = "C(i,j) = A(i,k) * B(k,j)";
    let first = eval_reordered(&engine, statement, &inputs, &EvalOptions::default(), Method::Lexi).unwrap();

    let mut saved = Vec::new();
    write_permutations_to(&mut saved, first.plan.driver_permutations(), "lexi of A").unwrap();
    let perms = parse_permutations(&saved, std::path::Path::new("A.perm")).unwrap();
    assert_eq!(&perms, first.plan.driver_permutations());
    let plan = ReorderPlan::with_permutations(statement, &inputs, "A", perms).unwrap();
    let again = eval_with_plan(&engine, statement, &inputs, &EvalOptions::default(), plan).unwrap();
    assert_eq!(again.result.to_coordinates(), first.result.to_coordinates());
    let plain = engine.eval(statement, &inputs).unwrap();
    assert_eq!(again.result.to_coordinates(), plain.to_coordinates());

    // Permutations of another shape are refused.
    let other = tessera_formats::reorder::ModePermutations::unchanged(&[7, 9]);
    let e = ReorderPlan::with_permutations(statement, &inputs, "A", other)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("shape 7x9") && e.contains("A has shape 9x7"), "{e}");
}
