//! The OpenCL tier's own behaviour (with `--features opencl`, on an OpenCL
//! device such as PoCL's): inputs kept on the device by version, kernels it
//! hands to the Cranelift tier and the note that says so, kernels and
//! workspaces kept between runs, and the kernel text with its mapping. Its answers are checked by `opencl_suite.rs`.
#![cfg(feature = "opencl")]

use std::sync::Arc;

use tessera_engine::notation::{register_operator, Operator};
use tessera_engine::runtime::{PromotionPolicy, Tier, TierChoice};
use tessera_engine::{Engine, EvalOptions, Inputs};
use tessera_formats::{CoordinateList, Format, Tensor};
use tessera_tiers::opencl::NAME;
use tessera_tiers::OpenClTier;

fn options() -> EvalOptions {
    EvalOptions {
        tier: TierChoice::Named(NAME.into()),
        threads: Some(1),
        ..EvalOptions::default()
    }
}

/// A 3 x 4 matrix in CSR: [[1, 0, 2, 0], [0, 0, 0, 3], [4, 0, 0, 5]].
fn matrix() -> Tensor<f64> {
    let mut entries = CoordinateList::new(&[3, 4]);
    for (i, j, v) in [(0, 0, 1.0), (0, 2, 2.0), (1, 3, 3.0), (2, 0, 4.0), (2, 3, 5.0)] {
        entries.push(&[i, j], v).unwrap();
    }
    Tensor::pack(&entries, Format::csr()).unwrap()
}

#[test]
fn inputs_stay_on_the_device_until_their_version_changes() {
    let tier = Arc::new(OpenClTier::new().expect("an OpenCL device"));
    let engine = Engine::new()
        .with_tier(tier.clone())
        .with_promotion(PromotionPolicy::EAGER);
    let a = matrix();
    let mut x = Tensor::from_dense(&[4], vec![1.0, 10.0, 100.0, 1000.0]).unwrap();
    let run = |x: &Tensor<f64>| {
        let inputs = Inputs::new().with("A", &a).with("x", x);
        engine
            .eval_with("y(i) = A(i,j) * x(j)", &inputs, &options())
            .unwrap()
            .to_dense_vec()
            .unwrap()
    };
    assert_eq!(run(&x), vec![201.0, 3000.0, 5004.0]);
    let kept = tier.resident_bytes();
    // A's positions, coordinates and values, and x's values.
    assert!(kept > 0, "the inputs are kept on the device");
    assert_eq!(run(&x), vec![201.0, 3000.0, 5004.0]);
    assert_eq!(tier.resident_bytes(), kept, "the same versions are not uploaded again");
    x.values_mut()[0] = 2.0;
    assert_eq!(
        run(&x),
        vec![202.0, 3000.0, 5008.0],
        "a changed tensor is uploaded again"
    );
    assert_eq!(
        tier.resident_bytes(),
        kept + 4 * 8,
        "x's new version is kept beside the old"
    );
    assert!(engine.diagnostics().is_empty(), "{:?}", engine.diagnostics());
    // Automatic promotion takes large runs to a GPU only.
    assert_eq!(tier.takes(u64::MAX), tier.is_gpu());
    assert!(!tier.takes(10));
}

/// A kernel launched again keeps its kernel object and takes the
/// workspaces an earlier run left clean: SpGEMM on new contents each time
/// gives what the interpreter gives, never a sum left over from before.
#[test]
fn later_runs_reuse_the_kernel_and_its_clean_workspaces() {
    let engine = Engine::new()
        .with_tier(Arc::new(OpenClTier::new().expect("an OpenCL device")))
        .with_promotion(PromotionPolicy::EAGER);
    let interpreter = Engine::new();
    let mut a = matrix();
    let b = Tensor::pack(&matrix().stored_entries().permute(&[1, 0]).unwrap(), Format::csr()).unwrap();
    let statement = "C(i,j) = A(i,k) * B(k,j)";
    for round in 0..4 {
        for (k, v) in a.values_mut().iter_mut().enumerate() {
            *v = (round * 7 + k) as f64 - 3.0;
        }
        let inputs = Inputs::new().with("A", &a).with("B", &b);
        let on_device = engine.eval_with(statement, &inputs, &options()).unwrap();
        let interpreted = interpreter.eval(statement, &inputs).unwrap();
        assert_eq!(
            on_device.to_dense_vec().unwrap(),
            interpreted.to_dense_vec().unwrap(),
            "round {round}"
        );
    }
    assert!(engine.diagnostics().is_empty(), "{:?}", engine.diagnostics());
}

/// Checks `y(i) = sum(j, gate(x(j), A(i,j)))` for an operator `gate`
/// that passes A's entries where x is positive; the engine it ran on.
fn gated_row_sums(gate: &str) -> Engine {
    let engine = Engine::new()
        .with_tier(Arc::new(OpenClTier::new().expect("an OpenCL device")))
        .with_promotion(PromotionPolicy::EAGER);
    let a = matrix();
    let x = Tensor::from_dense(&[4], vec![1.0, -1.0, 1.0, -1.0]).unwrap();
    let inputs = Inputs::new().with("A", &a).with("x", &x);
    let y = engine
        .eval_with(&format!("y(i) = sum(j, {gate}(x(j), A(i,j)))"), &inputs, &options())
        .unwrap();
    // Row sums of A over the columns where x is positive (0 and 2).
    assert_eq!(y.to_dense_vec().unwrap(), vec![3.0, 0.0, 4.0]);
    engine
}

#[test]
fn user_operators_run_on_the_jit_tier_with_a_note() {
    register_operator(Operator::binary("opencl_gate", |a, b| if a > 0.0 { b } else { 0.0 }).annihilated_by(0.0))
        .unwrap();
    let engine = gated_row_sums("opencl_gate");
    let notes: Vec<String> = engine.diagnostics().iter().map(|d| d.to_string()).collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("user-defined operator `opencl_gate`")
            && notes[0].ends_with("(the kernel runs on the jit tier)"),
        "{notes:?}"
    );
}

#[test]
fn staged_operators_run_on_the_device() {
    register_operator(Operator::define("opencl_staged_gate(x, a) = a * (x > 0)").unwrap()).unwrap();
    let engine = gated_row_sums("opencl_staged_gate");
    assert!(engine.diagnostics().is_empty(), "{:?}", engine.diagnostics());
}

#[test]
fn the_kernel_text_names_its_mapping() {
    let engine = Engine::new()
        .with_tier(Arc::new(OpenClTier::new().expect("an OpenCL device")))
        .with_promotion(PromotionPolicy::EAGER);
    let a = matrix();
    let x = Tensor::from_dense(&[4], vec![1.0; 4]).unwrap();
    let mut transposed = CoordinateList::new(&[4, 3]);
    for (j, i, v) in [(0, 0, 1.0), (2, 0, 2.0), (3, 1, 3.0), (0, 2, 4.0), (3, 2, 5.0)] {
        transposed.push(&[j, i], v).unwrap();
    }
    let b = Tensor::pack(&transposed, Format::csr()).unwrap();
    let inputs = Inputs::new().with("A", &a).with("A2", &a).with("x", &x).with("B", &b);
    let text = |statement: &str, output: Option<Format>| {
        let options = EvalOptions {
            output_format: output,
            ..options()
        };
        let kernel = engine.kernel_for(statement, &inputs, &options).unwrap();
        kernel.compiled_text_for(&inputs, &[], NAME).unwrap()
    };
    let spmv = text("y(i) = A(i,j) * x(j)", None);
    assert!(spmv.starts_with("// one work-item per coordinate of i\n"), "{spmv}");
    assert!(spmv.contains("__kernel void tessera_kernel("), "{spmv}");
    // A row dot has the lanes and split kernels too.
    assert!(spmv.contains("__kernel void tessera_rows_lanes("), "{spmv}");
    assert!(spmv.contains("__kernel void tessera_rows_split("), "{spmv}");
    let total = text("s = A(i,j) * x(j)", None);
    assert!(
        total.starts_with("// each work-item sums a block of coordinates of i into a partial output\n"),
        "{total}"
    );
    // A product on A's pattern: each work-item writes its rows' positions.
    let scaled = text("C(i,j) = A(i,j) * A(i,j)", Some(Format::csr()));
    assert!(scaled.starts_with("// one work-item per coordinate of i\n"), "{scaled}");
    // Two tensors: one read twice at the same indices is one operand, and
    // the product keeps its pattern.
    let square = text("C(i,j) = A(i,j) * A2(i,j)", Some(Format::csr()));
    assert!(
        square
            .starts_with("// one work-item per coordinate of i; entries counted, placed, then written (two phases)\n"),
        "{square}"
    );
    // A times its transpose, by Gustavson's rows.
    let gram = text("C(i,j) = A(i,k) * B(k,j)", Some(Format::csr()));
    assert!(
        gram.starts_with("// work-items with a workspace each take coordinates of i in turn;"),
        "{gram}"
    );
    assert!(gram.contains("__kernel void tessera_kernel_local("), "{gram}");
    assert!(!gram.contains("tessera_rows_lanes"), "{gram}");
    assert!(!total.contains("tessera_rows_lanes"), "{total}");
}

/// Row dots (SpMV, with two factors, in the min-plus semiring) on every
/// mapping of their rows: each gives the reference's answer on awkward
/// matrices (empty, 1 x 1, empty rows, duplicates, unsorted, skewed, one
/// row far longer than the rest, which a split cuts into many pieces; in
/// CSR, and some in every named format) and the same bits for 1, 2 and 7
/// threads, and runs the kernel it names.
#[test]
fn row_dots_give_the_reference_on_every_mapping() {
    use tessera_engine::testing::named_formats;
    use tessera_engine::testing::{check_statement, random_entries, EntryKind, Rng};
    use tessera_tiers::opencl::RowMapping;
    let mut rng = Rng::new(11);
    let mut matrices = Vec::new();
    for shape in [[0, 4], [1, 1], [6, 9], [37, 23]] {
        for kind in EntryKind::ALL {
            let entries = random_entries(&mut rng, &shape, kind);
            // Every format for some contents: the row kernels walk any
            // level with positions, and a split needs them contiguous.
            let formats = match (shape, kind) {
                ([6, 9], EntryKind::EmptySlices | EntryKind::Skewed) => named_formats(&shape),
                _ => vec![Format::csr()],
            };
            for format in formats {
                matrices.push(Tensor::pack(&entries, format).unwrap());
            }
        }
    }
    let mut long_row = CoordinateList::new(&[9, 400]);
    for j in 0..400 {
        long_row.push(&[2, j], (j % 7) as f64 - 2.5).unwrap();
    }
    for j in [3, 50, 399] {
        long_row.push(&[7, j], 0.25 * j as f64).unwrap();
    }
    for format in [Format::csr(), Format::ell(), Format::dcsr()] {
        matrices.push(Tensor::pack(&long_row, format).unwrap());
    }
    let statements = [
        "y(i) = A(i,j) * x(j)",
        "y(i) = A(i,j) * x(j) * z(j)",
        "y(i) = min(j, A(i,j) + x(j))",
    ];
    let mappings = [
        (RowMapping::ItemPerRow, "tessera_kernel"),
        (RowMapping::Lanes(1), "tessera_rows_lanes"),
        (RowMapping::Lanes(4), "tessera_rows_lanes"),
        (RowMapping::Lanes(64), "tessera_rows_lanes"),
        (RowMapping::Split { piece: 1 }, "tessera_rows_split"),
        (RowMapping::Split { piece: 7 }, "tessera_rows_split"),
        (RowMapping::Split { piece: 64 }, "tessera_rows_split"),
    ];
    for (mapping, kernel) in mappings {
        let tier = Arc::new(
            OpenClTier::new()
                .expect("an OpenCL device")
                .without_fallback()
                .with_row_mapping(mapping)
                .unwrap(),
        );
        let engine = Engine::new()
            .with_tier(tier.clone())
            .with_promotion(PromotionPolicy::EAGER);
        for a in &matrices {
            let n = a.shape()[1];
            let x = Tensor::from_dense(&[n], (0..n).map(|j| 1.0 + (j % 5) as f64 / 3.0).collect()).unwrap();
            let z = Tensor::from_dense(&[n], (0..n).map(|j| 0.5 - (j % 3) as f64).collect()).unwrap();
            for statement in statements {
                let inputs = [("A", a), ("x", &x), ("z", &z)];
                let inputs = if statement.contains("z(") {
                    &inputs[..]
                } else {
                    &inputs[..2]
                };
                if let Err(e) = check_statement(&engine, statement, inputs, None, &[]) {
                    panic!("{mapping:?}: {e}");
                }
            }
        }
        assert!(tier.launches(kernel) > 0, "{mapping:?} never launched {kernel}");
        assert!(engine.diagnostics().is_empty(), "{:?}", engine.diagnostics());
    }
    assert!(OpenClTier::new()
        .unwrap()
        .with_row_mapping(RowMapping::Lanes(3))
        .is_err());
    assert!(OpenClTier::new()
        .unwrap()
        .with_row_mapping(RowMapping::Split { piece: 0 })
        .is_err());
}

/// Kernels with a workspace (Gustavson's SpGEMM into CSR and DCSR, and a
/// sum of products into a sparse vector) give the reference's answer with
/// their workspaces in local memory, as by default where they fit, and in
/// global memory; on awkward operands, and the same bits on any number of
/// threads.
#[test]
fn workspaces_in_local_and_global_memory_give_the_reference() {
    use tessera_engine::testing::{check_statement, random_entries, EntryKind, Rng};
    let mut rng = Rng::new(5);
    let mut operands = Vec::new();
    for shape in [[1, 1], [8, 8], [21, 21]] {
        for kind in [
            EntryKind::Empty,
            EntryKind::Random,
            EntryKind::EmptySlices,
            EntryKind::Skewed,
        ] {
            let a = Tensor::pack(&random_entries(&mut rng, &shape, kind), Format::csr()).unwrap();
            let b = Tensor::pack(&random_entries(&mut rng, &shape, EntryKind::Random), Format::csr()).unwrap();
            operands.push((a, b));
        }
    }
    let statements = [
        ("C(i,j) = A(i,k) * B(k,j)", Format::csr()),
        ("C(i,j) = A(i,k) * B(k,j)", Format::dcsr()),
        ("C(i,j) = A(i,k) * B(k,j) + B(i,j)", Format::csr()),
    ];
    for local in [true, false] {
        let tier = Arc::new(
            OpenClTier::new()
                .expect("an OpenCL device")
                .without_fallback()
                .with_local_workspaces(local),
        );
        let engine = Engine::new()
            .with_tier(tier.clone())
            .with_promotion(PromotionPolicy::EAGER);
        for (a, b) in &operands {
            for (statement, format) in &statements {
                if let Err(e) = check_statement(&engine, statement, &[("A", a), ("B", b)], Some(format), &[]) {
                    panic!("local workspaces {local}: {e}");
                }
            }
        }
        // PoCL's local memory holds these workspaces.
        assert_eq!(tier.launches("tessera_kernel_local") > 0, local);
        assert!(engine.diagnostics().is_empty(), "{:?}", engine.diagnostics());
    }
}

/// An engine that runs every kernel on the OpenCL device at once.
fn device_engine() -> Engine {
    Engine::new()
        .with_tier(Arc::new(OpenClTier::new().expect("an OpenCL device")))
        .with_promotion(PromotionPolicy::EAGER)
}

/// The statement under `schedule` gives the interpreter's bits on the
/// device, with nothing reported.
fn assert_device_gives_interpreters_bits(
    (device, interp): (&Engine, &Engine),
    statement: &str,
    tensors: &[(&str, &Tensor<f64>)],
    output: Format,
    schedule: &str,
) {
    use tessera_engine::schedule::Schedule;
    use tessera_engine::testing::same_bits;
    let inputs = tensors.iter().fold(Inputs::new(), |i, &(n, t)| i.with(n, t));
    let schedule: Schedule = schedule.parse().unwrap();
    let on = |engine: &Engine, tier| {
        let options = EvalOptions {
            tier,
            output_format: Some(output.clone()),
            schedule: schedule.clone(),
            ..options()
        };
        engine.eval_with(statement, &inputs, &options).unwrap()
    };
    let want = on(interp, TierChoice::Interpreter);
    let got = on(device, TierChoice::Named(NAME.into()));
    assert!(same_bits(&want, &got), "{statement}: the device's bits differ");
    assert!(device.diagnostics().is_empty(), "{:?}", device.diagnostics());
}

/// Dense updates (SpMM's rows in tiles of pairs, a dense row into a
/// temporary and into the output, values on the driver's pattern) are
/// written once for every tier: the device's bits are the interpreter's
/// at every width.
#[test]
fn dense_updates_give_the_interpreters_bits_on_the_device() {
    use tessera_engine::testing::{random_tensor, EntryKind, Rng};
    let (device, interp) = (device_engine(), Engine::new());
    let mut rng = Rng::new(53);
    let check = |statement: &str, tensors: &[(&str, &Tensor<f64>)], output: Format, schedule: &str| {
        assert_device_gives_interpreters_bits((&device, &interp), statement, tensors, output, schedule);
    };
    for width in [1, 8, 17] {
        let a = random_tensor(&mut rng, &[9, 7], EntryKind::Skewed, &Format::csr()).unwrap();
        let b = random_tensor(&mut rng, &[7, width], EntryKind::Full, &Format::dense(2)).unwrap();
        check(
            "C(i,k) = A(i,j) * B(j,k)",
            &[("A", &a), ("B", &b)],
            Format::dense(2),
            "",
        );
        let t = random_tensor(&mut rng, &[5, 4, 3], EntryKind::Random, &Format::csf(3)).unwrap();
        let c = random_tensor(&mut rng, &[4, width], EntryKind::Full, &Format::dense(2)).unwrap();
        let d = random_tensor(&mut rng, &[3, width], EntryKind::Random, &Format::dense(2)).unwrap();
        check(
            "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
            &[("B", &t), ("C", &c), ("D", &d)],
            Format::dense(2),
            "reorder(i, k, l, j); precompute(B(i,k,l) * D(l,j), j, j, w)",
        );
    }
    let a = random_tensor(&mut rng, &[9, 7], EntryKind::Random, &Format::csr()).unwrap();
    let x = random_tensor(&mut rng, &[7], EntryKind::Full, &Format::dense(1)).unwrap();
    for statement in ["C(i,j) = A(i,j) * 2", "C(i,j) = A(i,j) * x(j)"] {
        check(statement, &[("A", &a), ("x", &x)], Format::csr(), "");
    }
}

/// The dot block ops (SDDMM's rank loop, BCSR's blocks times x, a DCSR
/// row times x) are written once for every tier: the device's sums are
/// the interpreter's bits, unrolled or looped.
#[test]
fn dots_give_the_interpreters_bits_on_the_device() {
    use tessera_engine::testing::{random_tensor, EntryKind, Rng};
    let (device, interp) = (device_engine(), Engine::new());
    let mut rng = Rng::new(47);
    let check = |statement: &str, tensors: &[(&str, &Tensor<f64>)], output: Format| {
        assert_device_gives_interpreters_bits((&device, &interp), statement, tensors, output, "");
    };
    for rank in [3, 17] {
        let a = random_tensor(&mut rng, &[9, 7], EntryKind::Skewed, &Format::csr()).unwrap();
        let u = random_tensor(&mut rng, &[9, rank], EntryKind::Full, &Format::dense(2)).unwrap();
        let v = random_tensor(&mut rng, &[7, rank], EntryKind::Random, &Format::dense(2)).unwrap();
        let tensors = [("A", &a), ("U", &u), ("V", &v)];
        check("C(i,j) = A(i,j) * U(i,k) * V(j,k)", &tensors, Format::csr());
    }
    let a = random_tensor(&mut rng, &[9, 40], EntryKind::Skewed, &Format::dcsr()).unwrap();
    let x = random_tensor(&mut rng, &[40], EntryKind::Full, &Format::dense(1)).unwrap();
    check("y(i) = A(i,j) * x(j)", &[("A", &a), ("x", &x)], Format::dense(1));
    for (rows, cols) in [(2, 3), (8, 16)] {
        let format = Format::bcsr(rows, cols).unwrap();
        let a = random_tensor(&mut rng, &[2 * rows, 3 * cols], EntryKind::Random, &format).unwrap();
        let x = random_tensor(&mut rng, &[3 * cols], EntryKind::Full, &Format::dense(1)).unwrap();
        check("y(i) = A(i,j) * x(j)", &[("A", &a), ("x", &x)], Format::dense(1));
    }
}
