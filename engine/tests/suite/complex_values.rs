//! Complex values end to end: `c64` tensors in every named format and every
//! awkward kind of contents, through kernels of every shape the complex
//! statements take (SpMV, SpGEMM, sums, products, quotients, SDDMM, `+=`,
//! `conj`, `real`, `imag`, `abs`, `exp`, casts), against the dense
//! reference, with outputs dense and sparse, on one thread and several.
//! The reference itself is checked against complex arithmetic computed
//! here with `num_complex`, so the real and imaginary parts the engine
//! writes are checked against their meaning, not only against themselves.
//! The Cranelift and OpenCL suites include this file.

use tessera_engine::notation::parse_statement;
use tessera_engine::reference::evaluate_complex;
use tessera_engine::testing::{rotated_tensors, Rng};
use tessera_engine::{EvalOptions, Inputs};
use tessera_formats::{AnyTensor, Complex64, Format, Tensor, TensorRef};

/// Statements and the tensors they read (every tensor `c64` but `x` and
/// `w`, which are `f64`).
const CASES: &[(&str, &[(&str, &str)])] = &[
    ("y(i) = A(i,j) * z(j)", &[("A", "ij"), ("z", "j")]),
    ("y(i) = A(i,j) * c64(x(j))", &[("A", "ij"), ("x", "j")]),
    ("C(i,j) = A(i,k) * B(k,j)", &[("A", "ik"), ("B", "kj")]),
    ("C(i,j) = A(i,j) + B(i,j) - 2 * A(i,j)", &[("A", "ij"), ("B", "ij")]),
    ("C(i,j) = A(i,j) * B(i,j)", &[("A", "ij"), ("B", "ij")]),
    ("y(i) = z(i) / u(i)", &[("z", "i"), ("u", "i")]),
    (
        "C(i,j) = A(i,j) * B(i,k) * D(k,j)",
        &[("A", "ij"), ("B", "ik"), ("D", "kj")],
    ),
    ("y(i) = conj(z(i)) * z(i) + exp(u(i))", &[("z", "i"), ("u", "i")]),
    ("s = sum(i, abs(z(i)) * x(i))", &[("z", "i"), ("x", "i")]),
    (
        "w(i) = real(A(i,j) * z(j)) - imag(u(i))",
        &[("A", "ij"), ("z", "j"), ("u", "i")],
    ),
    ("y(i) += A(i,j) * z(j)", &[("A", "ij"), ("z", "j"), ("y", "i")]),
    ("C(i,j) = square(A(i,j)) * c64(x(j))", &[("A", "ij"), ("x", "j")]),
    // A term that does not read the summed variable stays in its sum.
    ("s = sum(i, z(i) - 2 + A(i,j))", &[("z", "i"), ("A", "ij")]),
    // The imaginary part reads no A: the sizes come from the whole
    // statement (fuzz decoder seed 10361).
    ("C(j,i) = c64(abs(A(i,j))) + B(i,k)", &[("A", "ij"), ("B", "ik")]),
];

/// `t` with an imaginary part made from each value (0 stays 0).
fn complex(t: &Tensor<f64>) -> Tensor<Complex64> {
    t.map_values(|v| Complex64::new(v, (v * 12.9898).sin() * 2.0))
}

/// Whether `a` and `b` agree to a relative 1e-12, NaN with NaN.
fn close(a: Complex64, b: Complex64) -> bool {
    let part =
        |x: f64, y: f64| (x.is_nan() && y.is_nan()) || x == y || (x - y).abs() <= 1e-12 * x.abs().max(y.abs()).max(1.0);
    part(a.re, b.re) && part(a.im, b.im)
}

fn dense(t: &AnyTensor) -> Vec<Complex64> {
    match t {
        AnyTensor::C64(z) => z.to_dense_vec().unwrap(),
        real => real
            .to_f64()
            .to_dense_vec()
            .unwrap()
            .into_iter()
            .map(Complex64::from)
            .collect(),
    }
}

fn check(
    engine: &tessera_engine::Engine,
    (statement, reads): (&str, &[(&str, &str)]),
    trial: usize,
) -> Result<(), String> {
    let mut rng = Rng::new(trial as u64 * 104_729 + statement.len() as u64);
    let mut size = |rng: &mut Rng| {
        if trial % 4 == 0 {
            rng.range(9, 16)
        } else {
            rng.range(1, 6)
        }
    };
    let tensors: Vec<(String, AnyTensor)> = rotated_tensors(&mut rng, reads, trial, &mut size)
        .into_iter()
        .map(|(n, t)| match n.as_str() {
            "x" | "w" => (n, AnyTensor::F64(t)),
            _ => (n, AnyTensor::C64(complex(&t))),
        })
        .collect();
    let refs: Vec<(&str, TensorRef<'_>)> = tensors.iter().map(|(n, t)| (n.as_str(), t.as_ref())).collect();
    let describe = || {
        let inputs: Vec<String> = tensors
            .iter()
            .map(|(n, t)| {
                format!(
                    "{n}: {} {} {:?} ({} stored)",
                    t.value_type(),
                    t.format(),
                    t.shape(),
                    t.stored()
                )
            })
            .collect();
        format!("`{statement}` (trial {trial}); {}", inputs.join("; "))
    };
    let stmt = parse_statement(statement).map_err(|e| e.to_string())?;
    let (_, want) = evaluate_complex(&stmt, &refs, &[]).map_err(|e| format!("{}: the reference: {e}", describe()))?;
    let mut inputs = Inputs::new();
    for (n, t) in &tensors {
        inputs.insert_any(n, t);
    }
    let outputs = match stmt.lhs.indices.len() {
        0 => vec![None],
        1 => vec![None, Some(Format::sparse_vector())],
        _ => vec![None, Some(Format::dense(2)), Some(Format::csr()), Some(Format::coo(2))],
    };
    let output_format = if stmt.op == tessera_engine::notation::AssignOp::AddAssign {
        None
    } else {
        outputs[trial % outputs.len()].clone()
    };
    let run = |threads: usize| {
        let options = EvalOptions {
            output_format: output_format.clone(),
            threads: Some(threads),
            chunk_work: Some(3),
            ..EvalOptions::default()
        };
        engine
            .eval_typed_with(statement, &inputs, &options)
            .map_err(|e| format!("{}: the engine refuses it: {e}", describe()))
    };
    let got = run(1)?;
    let values = dense(&got);
    if values.len() != want.len() || values.iter().zip(&want).any(|(&a, &b)| !close(a, b)) {
        return Err(format!(
            "{}: got {:?}, want {:?}",
            describe(),
            &values[..values.len().min(6)],
            &want[..want.len().min(6)]
        ));
    }
    let bits = |v: &[Complex64]| v.iter().map(|z| (z.re.to_bits(), z.im.to_bits())).collect::<Vec<_>>();
    let parallel = run(3)?;
    if parallel.format() != got.format() || bits(&dense(&parallel)) != bits(&values) {
        return Err(format!("{}: 3 threads give another result than one", describe()));
    }
    Ok(())
}

#[test]
fn complex_kernels_match_the_reference_over_every_format() {
    let engine = crate::suite_engine();
    let mut failures = Vec::new();
    for &case in CASES {
        for trial in 0..16 {
            if let Err(e) = check(&engine, case, trial) {
                failures.push(e);
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} checks differ:\n{}",
        failures.len(),
        failures.iter().take(6).cloned().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn the_reference_computes_complex_arithmetic() {
    let z = vec![
        Complex64::new(1.0, 2.0),
        Complex64::new(-0.5, 0.0),
        Complex64::new(0.0, 3.0),
    ];
    let u = vec![
        Complex64::new(2.0, -1.0),
        Complex64::new(0.25, 4.0),
        Complex64::new(-3.0, 0.5),
    ];
    let a: Vec<Complex64> = (0..9)
        .map(|k| Complex64::new(k as f64 - 4.0, (k * k) as f64 / 7.0))
        .collect();
    let zt = Tensor::from_dense(&[3], z.clone()).unwrap();
    let ut = Tensor::from_dense(&[3], u.clone()).unwrap();
    let at = Tensor::from_dense(&[3, 3], a.clone()).unwrap();
    let inputs = [
        ("z", TensorRef::from(&zt)),
        ("u", TensorRef::from(&ut)),
        ("A", TensorRef::from(&at)),
    ];
    let eval = |text: &str| {
        evaluate_complex(&parse_statement(text).unwrap(), &inputs, &[])
            .unwrap()
            .1
    };
    let each = |f: &dyn Fn(usize) -> Complex64| (0..3).map(f).collect::<Vec<_>>();
    let cases: [(&str, Vec<Complex64>); 5] = [
        (
            "y(i) = A(i,j) * z(j)",
            each(&|i| (0..3).map(|j| a[i * 3 + j] * z[j]).sum()),
        ),
        ("y(i) = z(i) / u(i)", each(&|i| z[i] / u[i])),
        ("y(i) = exp(z(i)) - conj(u(i))", each(&|i| z[i].exp() - u[i].conj())),
        ("y(i) = c64(abs(z(i)))", each(&|i| Complex64::from(z[i].norm()))),
        ("y(i) = square(u(i)) + z(i)", each(&|i| u[i] * u[i] + z[i])),
    ];
    for (text, want) in cases {
        let got = eval(text);
        assert!(
            got.iter().zip(&want).all(|(&g, &w)| close(g, w)),
            "{text}: {got:?} against {want:?}"
        );
    }
}

#[test]
fn complex_values_are_refused_where_they_have_no_meaning() {
    let engine = crate::suite_engine();
    let z = Tensor::from_dense(&[2], vec![Complex64::new(1.0, 1.0); 2]).unwrap();
    let x = Tensor::from_dense(&[2], vec![1.0f64; 2]).unwrap();
    let inputs = Inputs::new().with("z", &z).with("x", &x);
    for (text, needle) in [
        (
            "y(i) = z(i) * x(i)",
            "column 8: * meets a c64 value and an f64 one: cast the real one with c64(...)",
        ),
        ("y(i) = sqrt(z(i))", "sqrt takes no c64 values"),
        ("y(i) = z(i) < 1", "< takes no c64 values"),
        ("s = max(i, z(i))", "max(...) takes no c64 values"),
    ] {
        let err = engine.eval_typed(text, &inputs).unwrap_err().to_string();
        assert!(err.contains(needle), "{text}: {err}");
    }
    // A real result of complex inputs is real.
    let AnyTensor::F64(s) = engine
        .eval_typed("s = sum(i, real(z(i)) + imag(z(i)))", &inputs)
        .unwrap()
    else {
        panic!("real(...) and imag(...) give f64")
    };
    assert_eq!(s.values(), &[4.0]);
}
