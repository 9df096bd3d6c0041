//! The default schedule rules, as the plan reports them: a level an
//! intersection would walk again for every row is made dense or moved to
//! the top once per run (a sparse `x` in SpMV, B in CSC, DCSR or DCSC in
//! SpGEMM), and a product over a transposed access into a sparse output
//! follows the output's order, transposing an input once, instead of
//! sorting the whole result. (`differential.rs` checks the values on both
//! tiers.)

use tessera_engine::Engine;
use tessera_formats::Format;

fn plan(statement: &str, inputs: &[(&str, Format)], output: Format) -> String {
    Engine::new()
        .compile(statement, inputs, &output)
        .unwrap()
        .plan()
        .to_string()
}

const DENSE_X: &str =
    "convert x from sv to dense: an intersection would walk it again for every coordinate of an outer loop";

#[test]
fn a_sparse_vector_merged_with_every_row_is_made_dense_once() {
    for output in [Format::dense(1), Format::sparse_vector()] {
        let plan = plan(
            "y(i) = A(i,j) * x(j)",
            &[("A", Format::csr()), ("x", Format::sparse_vector())],
            output,
        );
        assert!(plan.contains(DENSE_X), "{plan}");
        assert!(!plan.contains("merge A.compressed, x.compressed"), "{plan}");
    }
    let plan = plan(
        "C(i,j) = A(i,j) * x(j)",
        &[("A", Format::dcsr()), ("x", Format::sparse_vector())],
        Format::csr(),
    );
    assert!(plan.contains(DENSE_X), "{plan}");
}

#[test]
fn vectors_walked_once_or_by_a_union_stay_as_they_are() {
    for (statement, inputs) in [
        // Nothing encloses the dot product's loop.
        (
            "a = x(j) * z(j)",
            vec![("x", Format::sparse_vector()), ("z", Format::sparse_vector())],
        ),
        // A union visits every entry of x for each row whatever x's format.
        (
            "y(i) = A(i,j) + x(j)",
            vec![("A", Format::csr()), ("x", Format::sparse_vector())],
        ),
        // The vector drives the rows of a located matrix: nothing merges.
        (
            "y(i) = A(i,j) * x(j)",
            vec![("A", Format::dense(2)), ("x", Format::sparse_vector())],
        ),
    ] {
        let output = if statement.starts_with("a ") {
            Format::dense(0)
        } else {
            Format::dense(1)
        };
        let plan = plan(statement, &inputs, output);
        assert!(!plan.contains("convert"), "{statement}:\n{plan}");
    }
}

#[test]
fn a_transposed_product_into_a_sparse_output_follows_the_output() {
    let plan = plan("C(i,j) = A(k,i) * A(k,j)", &[("A", Format::csr())], Format::csr());
    for line in [
        "loop order: i, k, j",
        "convert A from csr to csc: its levels do not follow the loop order i,k,j",
        "loop order starts at i, as output C does: in the order k,i,j the whole result would be collected and sorted",
        "workspace over (j), sorted and assembled into C after",
        "parallel: the loop over i splits into chunks",
        "conversions are made once per input tensor and reused while it is unchanged",
    ] {
        assert!(plan.contains(line), "missing `{line}`:\n{plan}");
    }
}

#[test]
fn transposed_products_into_dense_or_vector_outputs_keep_the_storage_order() {
    // A dense output takes scattered results as they come; a vector's
    // workspace is one dense row: neither sorts the whole result.
    for (statement, output) in [
        ("C(i,j) = A(k,i) * A(k,j)", Format::dense(2)),
        ("y(i) = A(k,i) * x(k)", Format::sparse_vector()),
    ] {
        let plan = plan(statement, &[("A", Format::csr()), ("x", Format::dense(1))], output);
        assert!(plan.contains("loop order: k, i"), "{statement}:\n{plan}");
        assert!(!plan.contains("convert"), "{statement}:\n{plan}");
    }
}

#[test]
fn an_inner_product_spgemm_becomes_gustavsons() {
    for (b, conversions) in [
        (
            Format::csc(),
            vec!["convert B from csc to csr: an intersection would walk its fibres again for every coordinate of an outer loop; this order walks them once"],
        ),
        (
            Format::dcsr(),
            vec!["convert B from dcsr to csr: an intersection would walk it again for every coordinate of an outer loop; dense, it is located"],
        ),
        (
            Format::dcsc(),
            vec![
                "convert B from dcsc to dcsr: an intersection would walk its fibres again",
                "convert B from dcsr to csr: an intersection would walk it again",
            ],
        ),
    ] {
        let plan = plan(
            "C(i,j) = A(i,k) * B(k,j)",
            &[("A", Format::csr()), ("B", b.clone())],
            Format::csr(),
        );
        assert!(plan.contains("loop order: i, k, j\n"), "{b}:\n{plan}");
        for line in conversions {
            assert!(plan.contains(line), "{b}: missing `{line}`:\n{plan}");
        }
        assert!(!plan.contains("convert A"), "{b}:\n{plan}");
    }
}

const ONCE_PER_RUN: &str = "precomputed by default, not again for each coordinate of the other loops: t0(j) holds B(j,k) * x(k) summed over k at every j, computed once per run";

/// A sum only some factors share, over a result that depends on one
/// variable, is computed into a vector once per run: `Σk B(j,k)·x(k)` once
/// per `j`, not once per `(i,j)`.
#[test]
fn a_sum_only_some_factors_share_is_precomputed_once_per_run() {
    use tessera_engine::schedule::Schedule;
    use tessera_engine::testing::{check_scheduled, random_tensor, EntryKind, Rng, Tolerance};

    for (statement, output) in [
        ("y(i) = A(i,j) * B(j,k) * x(k)", Format::dense(1)),
        ("y(i) = A(i,j) * B(j,k) * x(k)", Format::sparse_vector()),
        ("C(i,j) = A(i,j) * B(j,k) * x(k)", Format::csr()),
    ] {
        let inputs = [("A", Format::csr()), ("B", Format::csr()), ("x", Format::dense(1))];
        let plan = plan(statement, &inputs, output.clone());
        assert!(plan.contains(ONCE_PER_RUN), "{statement}:\n{plan}");
        let engine = Engine::new();
        for seed in 0..6u64 {
            let mut rng = Rng::new(seed);
            let (n, m, p) = (rng.range(1, 30), rng.range(1, 30), rng.range(1, 30));
            let kind = EntryKind::ALL[seed as usize % EntryKind::ALL.len()];
            let a = random_tensor(&mut rng, &[n, m], kind, &Format::csr()).unwrap();
            let b = random_tensor(&mut rng, &[m, p], kind, &Format::csr()).unwrap();
            let x = random_tensor(&mut rng, &[p], kind, &Format::dense(1)).unwrap();
            let tensors = [("A", &a), ("B", &b), ("x", &x)];
            let none = Schedule::default();
            check_scheduled(
                &engine,
                statement,
                &tensors,
                Some(&output),
                &[],
                Tolerance::default(),
                &none,
            )
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        }
    }
    // MTTKRP's l-sum depends on i, k and j: the loops around it run once
    // per (i,k) anyway, so nothing is precomputed by default.
    let mttkrp = plan(
        "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
        &[("B", Format::csf(3)), ("C", Format::dense(2)), ("D", Format::dense(2))],
        Format::dense(2),
    );
    assert!(!mttkrp.contains("precomputed by default"), "{mttkrp}");
    // A schedule is taken as written.
    let schedule: Schedule = "reorder(i, j, k)".parse().unwrap();
    let scheduled = Engine::new()
        .compile_scheduled(
            "y(i) = A(i,j) * B(j,k) * x(k)",
            &[("A", Format::csr()), ("B", Format::csr()), ("x", Format::dense(1))],
            &Format::dense(1),
            &schedule,
        )
        .unwrap();
    assert!(
        !scheduled.plan().contains("precomputed by default"),
        "{}",
        scheduled.plan()
    );
}
