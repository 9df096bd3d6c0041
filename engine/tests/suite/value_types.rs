//! Value types end to end: `f32`, `i64`, `i32` and `bool` tensors in every
//! named format (dense, compressed, COO, CSF, hashed, DIA, ELL, BCSR) and
//! every awkward kind of contents, through kernels of every shape (SpMV,
//! SpGEMM, sums, SDDMM, quotients, functions, comparisons, reductions,
//! semirings, casts), against the dense reference typed the same way
//! (integers bit for bit: they are exact, and their overflow wraps on every
//! tier), with outputs dense and sparse, on one thread and several. The Cranelift tier runs the same table
//! (`tiers/tests/engine_suite.rs` includes this file).

use tessera_engine::notation::{parse_statement, Func, Reduction, FUNCTIONS, REDUCTIONS, SEMIRINGS};
use tessera_engine::reference::{evaluate_typed, evaluate_words};
use tessera_engine::testing::{compare, rotated_tensors, same_bits, Rng, Tolerance};
use tessera_engine::{EvalOptions, Inputs};
use tessera_formats::{AnyTensor, Format, Tensor, TensorRef, Value, ValueType};

use ValueType::{Bool, F32, F64, I32, I64};

/// A tensor a statement reads: its name, its variables and its type.
type Read = (&'static str, &'static str, ValueType);

/// A statement, the tensors it reads with their variables and types, and
/// the type its result must have.
#[derive(Clone, Copy)]
struct Case<'a> {
    statement: &'a str,
    reads: &'a [Read],
    gives: ValueType,
}

/// Kernels of every shape, by statement, reads and result type.
const CASES: &[(&str, &[Read], ValueType)] = &[
    // f32 kernels of every shape.
    ("y(i) = A(i,j) * x(j)", &[("A", "ij", F32), ("x", "j", F32)], F32),
    ("C(i,j) = A(i,k) * B(k,j)", &[("A", "ik", F32), ("B", "kj", F32)], F32),
    ("C(i,j) = A(i,j) + B(i,j)", &[("A", "ij", F32), ("B", "ij", F32)], F32),
    (
        "C(i,j) = A(i,j) * B(i,k) * D(k,j)",
        &[("A", "ij", F32), ("B", "ik", F32), ("D", "kj", F32)],
        F32,
    ),
    ("A(i,j) = sqrt(abs(B(i,j))) * 0.1", &[("B", "ij", F32)], F32),
    (
        "y(i) = min(j, A(i,j) + x(j))",
        &[("A", "ij", F32), ("x", "j", F32)],
        F32,
    ),
    ("s = sum(i, x(i) * x(i))", &[("x", "i", F32)], F32),
    // Comparisons give bool.
    ("M(i,j) = A(i,j) > B(i,j)", &[("A", "ij", F32), ("B", "ij", F32)], Bool),
    ("m(i) = x(i) <= 0.25", &[("x", "i", F64)], Bool),
    // A reduction of numbers in a statement of truth values reduces in f64.
    ("m(i) = max(j, A(i,j)) > 0.5", &[("A", "ij", F64)], Bool),
    (
        "m(i) = min(j, A(i,j)) < x(i)",
        &[("A", "ij", F32), ("x", "i", F32)],
        Bool,
    ),
    // bool kernels: + is ||, * is &&, sums are or.
    ("y(i) = A(i,j) * x(j)", &[("A", "ij", Bool), ("x", "j", Bool)], Bool),
    (
        "C(i,j) = A(i,k) * B(k,j)",
        &[("A", "ik", Bool), ("B", "kj", Bool)],
        Bool,
    ),
    (
        "C(i,j) = A(i,j) + B(i,j)",
        &[("A", "ij", Bool), ("B", "ij", Bool)],
        Bool,
    ),
    (
        "C(i,j) = A(i,j) && !B(i,j)",
        &[("A", "ij", Bool), ("B", "ij", Bool)],
        Bool,
    ),
    (
        "y(i) = and(j, A(i,j)) || xor(x(i), z(i))",
        &[("A", "ij", Bool), ("x", "i", Bool), ("z", "i", Bool)],
        Bool,
    ),
    // Truth values beside numbers are 0 or 1; other types need a cast.
    ("C(i,j) = A(i,j) * M(i,j)", &[("A", "ij", F32), ("M", "ij", Bool)], F32),
    ("y(i) = f64(A(i,j)) * x(j)", &[("A", "ij", F32), ("x", "j", F64)], F64),
    ("y(i) = f32(A(i,j) * x(j))", &[("A", "ij", F64), ("x", "j", F64)], F32),
    ("c(i) = sum(j, f64(A(i,j)))", &[("A", "ij", Bool)], F64),
    ("M(i,j) = bool(A(i,j))", &[("A", "ij", F32)], Bool),
    // Integers, compared bit for bit (large values on every third trial,
    // so that sums and products overflow and wrap).
    ("y(i) = A(i,j) * x(j)", &[("A", "ij", I64), ("x", "j", I64)], I64),
    ("y(i) = A(i,j) * x(j)", &[("A", "ij", I32), ("x", "j", I32)], I32),
    ("C(i,j) = A(i,k) * B(k,j)", &[("A", "ik", I64), ("B", "kj", I64)], I64),
    ("C(i,j) = A(i,k) * B(k,j)", &[("A", "ik", I32), ("B", "kj", I32)], I32),
    ("C(i,j) = A(i,j) + B(i,j)", &[("A", "ij", I64), ("B", "ij", I64)], I64),
    (
        "C(i,j) = A(i,j) - 3 * B(j,i)",
        &[("A", "ij", I32), ("B", "ji", I32)],
        I32,
    ),
    (
        "C(i,j) = A(i,j) * B(i,k) * D(k,j)",
        &[("A", "ij", I64), ("B", "ik", I64), ("D", "kj", I64)],
        I64,
    ),
    // Quotients and remainders by 0 are 0, at every coordinate.
    ("C(i,j) = A(i,j) / B(i,j)", &[("A", "ij", I64), ("B", "ij", I64)], I64),
    (
        "C(i,j) = mod(A(i,j), B(i,j))",
        &[("A", "ij", I32), ("B", "ij", I32)],
        I32,
    ),
    ("y(i) = -A(i,j) * x(j) + 1", &[("A", "ij", I64), ("x", "j", I64)], I64),
    ("s = sum(i, x(i) * x(i))", &[("x", "i", I64)], I64),
    ("s = sum(i, sum(j, A(i,j)))", &[("A", "ij", I32)], I32),
    // Reductions over other monoids, and min-plus.
    (
        "y(i) = min(j, A(i,j) + x(j))",
        &[("A", "ij", I64), ("x", "j", I64)],
        I64,
    ),
    ("y(i) = max(j, A(i,j))", &[("A", "ij", I32)], I32),
    ("y(i) = prod(j, A(i,j))", &[("A", "ij", I64)], I64),
    // Functions with an integer meaning.
    ("B(i,j) = abs(A(i,j)) + square(A(i,j))", &[("A", "ij", I64)], I64),
    ("B(i,j) = cube(A(i,j)) - heaviside(A(i,j))", &[("A", "ij", I32)], I32),
    (
        "C(i,j) = max(A(i,j), B(i,j)) - min(A(i,j), B(i,j))",
        &[("A", "ij", I64), ("B", "ij", I64)],
        I64,
    ),
    // Comparisons and logic give bool; truth values beside integers are 0
    // or 1.
    ("M(i,j) = A(i,j) > B(i,j)", &[("A", "ij", I64), ("B", "ij", I64)], Bool),
    (
        "M(i,j) = A(i,j) && !B(i,j)",
        &[("A", "ij", I32), ("B", "ij", I32)],
        Bool,
    ),
    ("C(i,j) = A(i,j) * M(i,j)", &[("A", "ij", I64), ("M", "ij", Bool)], I64),
    ("c(i) = sum(j, A(i,j) != 0)", &[("A", "ij", I64)], Bool),
    // Casts between every pair of types.
    ("y(i) = f64(A(i,j)) * x(j)", &[("A", "ij", I64), ("x", "j", F64)], F64),
    ("y(i) = sum(j, i64(A(i,j)))", &[("A", "ij", F64)], I64),
    ("B(i,j) = i32(A(i,j))", &[("A", "ij", I64)], I32),
    ("B(i,j) = i64(A(i,j)) * 5", &[("A", "ij", I32)], I64),
    ("B(i,j) = i64(A(i,j))", &[("A", "ij", Bool)], I64),
    // Triangles: a masked product, summed.
    (
        "t = sum(i, sum(j, sum(k, A(i,j) * B(j,k) * D(i,k))))",
        &[("A", "ij", I64), ("B", "jk", I64), ("D", "ik", I64)],
        I64,
    ),
];

/// `f` applied to `args`, in the text's syntax.
fn call(f: Func, args: &[&str]) -> String {
    match (f, args) {
        (Func::Not, [a]) => format!("!{a}"),
        (_, [a, b]) if !f.is_called() => format!("{a} {} {b}", f.name()),
        _ => format!("{}({})", f.name(), args.join(", ")),
    }
}

/// Every function of the language for each type it takes, every
/// reduction and every semiring, over `f32` and `bool` operands.
fn generated_cases() -> Vec<(String, Vec<Read>, ValueType)> {
    let mut out = Vec::new();
    // Complex results are checked by `complex_values.rs`.
    for f in FUNCTIONS.into_iter().filter(|&f| f != Func::Cast(ValueType::C64)) {
        let truth = matches!(
            f,
            Func::Lt
                | Func::Le
                | Func::Gt
                | Func::Ge
                | Func::Eq
                | Func::Ne
                | Func::And
                | Func::Or
                | Func::Xor
                | Func::Not
        );
        let takes_truth = truth || matches!(f, Func::Min | Func::Max | Func::Cast(_));
        for ty in [F32, Bool] {
            if ty == Bool && !takes_truth {
                continue;
            }
            let gives = match f {
                Func::Cast(to) => to,
                _ if truth => Bool,
                _ => ty,
            };
            let (text, reads) = match f.arity() {
                1 => (format!("A(i,j) = {}", call(f, &["B(i,j)"])), vec![("B", "ij", ty)]),
                _ => (
                    format!("A(i,j) = {}", call(f, &["B(i,j)", "C(i,j)"])),
                    vec![("B", "ij", ty), ("C", "ij", ty)],
                ),
            };
            out.push((text, reads, gives));
        }
    }
    for op in REDUCTIONS {
        for ty in [F32, Bool] {
            let gives = match op {
                Reduction::Or | Reduction::And => Bool,
                _ => ty,
            };
            let text = format!("y(i) = {}(j, B(i,j) * c(j))", op.name());
            out.push((text, vec![("B", "ij", ty), ("c", "j", ty)], gives));
        }
    }
    let spmv = parse_statement("y(i) = A(i,j) * x(j)").unwrap();
    for semiring in SEMIRINGS {
        for ty in [F32, Bool] {
            let text = semiring.rewrite(&spmv).unwrap().to_string();
            let gives = if text.contains("&&") { Bool } else { ty };
            out.push((text, vec![("A", "ij", ty), ("x", "j", ty)], gives));
        }
    }
    out
}

/// The tensor's values as `ty` (a nonzero is `true`); integers small, or
/// on every third trial large enough that products and sums overflow.
fn as_type(t: &Tensor<f64>, ty: ValueType, trial: usize) -> AnyTensor {
    let huge = trial % 3 == 0;
    match ty {
        I64 => AnyTensor::I64(t.map_values(|v| (v * if huge { 2f64.powi(40) } else { 100.0 }).round() as i64)),
        I32 => AnyTensor::I32(t.map_values(|v| (v * if huge { 2f64.powi(20) } else { 100.0 }).round() as i32)),
        other => AnyTensor::narrowed(t.clone(), other),
    }
}

/// Every component as the word a register holds (integers exact).
fn dense_words(t: &AnyTensor) -> Vec<u64> {
    let words = t.as_ref().to_words().to_dense_vec().unwrap();
    words.iter().map(|w| w.to_bits()).collect()
}

fn check(engine: &tessera_engine::Engine, case: Case<'_>, trial: usize) -> Result<(), String> {
    let mut rng = Rng::new(trial as u64 * 7919 + case.statement.len() as u64);
    let vars: Vec<(&str, &str)> = case.reads.iter().map(|&(n, v, _)| (n, v)).collect();
    let mut size = |rng: &mut Rng| {
        if trial % 4 == 0 {
            rng.range(9, 20)
        } else {
            rng.range(1, 6)
        }
    };
    let tensors: Vec<(String, AnyTensor)> = rotated_tensors(&mut rng, &vars, trial, &mut size)
        .into_iter()
        .zip(case.reads)
        .map(|((n, t), &(_, _, ty))| (n, as_type(&t, ty, trial)))
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
        format!("`{}`; {}", case.statement, inputs.join("; "))
    };
    let stmt = parse_statement(case.statement).map_err(|e| e.to_string())?;
    let refused = |e: tessera_engine::EngineError| format!("{}: the reference refuses it: {e}", describe());
    let mut inputs = Inputs::new();
    for (n, t) in &tensors {
        inputs.insert_any(n, t);
    }
    let order = stmt.lhs.indices.len();
    let outputs = match order {
        0 => vec![None],
        1 => vec![None, Some(Format::dense(1)), Some(Format::sparse_vector())],
        _ => vec![None, Some(Format::dense(2)), Some(Format::csr()), Some(Format::coo(2))],
    };
    let output_format = outputs[trial % outputs.len()].clone();
    let run = |threads: usize| {
        let options = EvalOptions {
            output_format: output_format.clone(),
            threads: Some(threads),
            chunk_work: Some(3),
            ..EvalOptions::default()
        };
        engine
            .eval_typed_with(case.statement, &inputs, &options)
            .map_err(|e| format!("{}: the engine refuses it: {e}", describe()))
    };
    let got = run(1)?;
    if got.value_type() != case.gives {
        return Err(format!(
            "{}: the result holds {}, not {}",
            describe(),
            got.value_type(),
            case.gives
        ));
    }
    if case.gives.is_integer() {
        let (want, _) = evaluate_words(&stmt, &refs, &[]).map_err(refused)?;
        let want: Vec<u64> = want.values.iter().map(|w| w.to_bits()).collect();
        let got = dense_words(&got);
        if got != want {
            let ints =
                |w: &[u64]| -> Vec<i64> { w.iter().take(12).map(|&b| i64::from_word(f64::from_bits(b))).collect() };
            return Err(format!("{}: got {:?}, want {:?}", describe(), ints(&got), ints(&want)));
        }
    } else {
        let want = evaluate_typed(&stmt, &refs, &[]).map_err(refused)?;
        compare(&got.to_f64(), &want, Tolerance::default()).map_err(|e| format!("{}: {e}", describe()))?;
    }
    let parallel = run(3)?;
    if parallel.value_type() != got.value_type() || !same_bits(&parallel.as_ref().to_words(), &got.as_ref().to_words())
    {
        return Err(format!("{}: 3 threads give another result than one", describe()));
    }
    Ok(())
}

/// Checks every case on `trials` trials, failing with the first few that
/// differ.
fn check_all<'a>(cases: impl Iterator<Item = Case<'a>>, trials: usize) -> usize {
    let engine = crate::suite_engine();
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in cases {
        for trial in 0..trials {
            match check(&engine, case, trial) {
                Ok(()) => checked += 1,
                Err(e) => failures.push(e),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} checks differ:\n{}",
        failures.len(),
        failures.iter().take(8).cloned().collect::<Vec<_>>().join("\n")
    );
    checked
}

#[test]
fn typed_kernels_match_the_typed_reference_over_every_format() {
    let cases = CASES.iter().map(|&(statement, reads, gives)| Case {
        statement,
        reads,
        gives,
    });
    check_all(cases, 24);
}

#[test]
fn every_function_reduction_and_semiring_runs_on_f32_and_bool() {
    let generated = generated_cases();
    let cases = generated.iter().map(|(statement, reads, gives)| Case {
        statement,
        reads,
        gives: *gives,
    });
    let checked = check_all(cases, 6);
    assert!(checked > 400, "only {checked} checks ran");
}

#[test]
fn f32_results_are_rounded_once_where_stored() {
    // 1 + 2^-24 is halfway between two f32 values: an f32 accumulator
    // rounds each partial sum back to 1. Summed in f64 and rounded once,
    // the two small terms make the next f32 after 1.
    let engine = crate::suite_engine();
    let x = tessera_formats::Tensor::from_dense(&[3], vec![1.0f32, 2f32.powi(-24), 2f32.powi(-24)]).unwrap();
    let s = engine
        .eval_typed("s = sum(i, x(i))", &Inputs::new().with("x", &x))
        .unwrap();
    let AnyTensor::F32(s) = s else {
        panic!("an f32 sum gives f32")
    };
    assert_eq!(s.values(), &[1.0f32 + f32::EPSILON]);
}

#[test]
fn mixed_types_are_refused_naming_both() {
    let engine = crate::suite_engine();
    let a = tessera_formats::Tensor::from_dense(&[2, 2], vec![1.0f32; 4]).unwrap();
    let x = tessera_formats::Tensor::from_dense(&[2], vec![1.0f64; 2]).unwrap();
    let err = engine
        .eval_typed("y(i) = A(i,j) * x(j)", &Inputs::new().with("A", &a).with("x", &x))
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("column 8:") && err.contains("f32") && err.contains("f64"),
        "{err}"
    );
    let m = tessera_formats::Tensor::from_dense(&[2], vec![true, false]).unwrap();
    let err = engine
        .eval_typed("y(i) = sqrt(m(i))", &Inputs::new().with("m", &m))
        .unwrap_err()
        .to_string();
    assert!(err.contains("sqrt takes numbers, not bool (m)"), "{err}");
}

#[test]
fn a_kernel_refuses_inputs_of_another_type() {
    let engine = crate::suite_engine();
    let formats = [("x", Format::dense(1))];
    let kernel = engine.compile("s = sum(i, x(i))", &formats, &Format::dense(0)).unwrap();
    let x = tessera_formats::Tensor::from_dense(&[2], vec![1.0f32, 2.0]).unwrap();
    let err = kernel.run(&Inputs::new().with("x", &x)).unwrap_err().to_string();
    assert!(
        err.contains("x holds f32 values, the kernel was compiled for f64"),
        "{err}"
    );
}

#[test]
fn integer_overflow_wraps_and_division_by_zero_gives_zero() {
    let engine = crate::suite_engine();
    let x = Tensor::from_dense(&[3], vec![i32::MAX, 1, i32::MIN]).unwrap();
    let d = Tensor::from_dense(&[3], vec![0i32, 0, -1]).unwrap();
    let run = |text: &str| {
        engine
            .eval_typed(text, &Inputs::new().with("x", &x).with("d", &d))
            .unwrap()
    };
    let AnyTensor::I32(s) = run("s = sum(i, x(i))") else {
        panic!("an i32 sum gives i32")
    };
    // MAX + 1 wraps to MIN; MIN + MIN wraps to 0.
    assert_eq!(s.values(), &[i32::MAX.wrapping_add(1).wrapping_add(i32::MIN)]);
    let AnyTensor::I32(q) = run("q(i) = x(i) / d(i)") else {
        panic!("an i32 quotient gives i32")
    };
    assert_eq!(q.to_dense_vec().unwrap(), vec![0, 0, i32::MIN]);
    let big = Tensor::from_dense(&[2], vec![i64::MAX - 1, 3]).unwrap();
    let AnyTensor::I64(p) = engine
        .eval_typed("p(i) = b(i) + 1", &Inputs::new().with("b", &big))
        .unwrap()
    else {
        panic!("an i64 sum gives i64")
    };
    // Exact beyond 2^53: no rounding through f64.
    assert_eq!(p.to_dense_vec().unwrap(), vec![i64::MAX, 4]);
}

#[test]
fn integers_meet_other_types_only_through_casts() {
    let engine = crate::suite_engine();
    let a = Tensor::from_dense(&[2, 2], vec![1i64; 4]).unwrap();
    let x = Tensor::from_dense(&[2], vec![1.0f64; 2]).unwrap();
    let n = Tensor::from_dense(&[2], vec![1i32; 2]).unwrap();
    let inputs = Inputs::new().with("A", &a).with("x", &x).with("n", &n);
    let refused = |text: &str| engine.eval_typed(text, &inputs).unwrap_err().to_string();
    let err = refused("y(i) = A(i,j) * x(j)");
    assert!(
        err.starts_with("column 8:") && err.contains("i64") && err.contains("f64"),
        "{err}"
    );
    let err = refused("y(i) = A(i,j) * n(j)");
    assert!(err.contains("i64") && err.contains("i32"), "{err}");
    let err = refused("y(i) = sqrt(A(i,j))");
    assert!(err.contains("sqrt takes floats, not i64 (A)"), "{err}");
    let err = refused("y(i) = A(i,j) * 2.5");
    assert!(err.contains("2.5") && err.contains("not an i64"), "{err}");
    let err = refused("y(i) = f64(sum(j, A(i,j)))");
    assert!(
        err.contains("sum(...) reduces i64 values in a statement of type f64"),
        "{err}"
    );
    assert!(err.contains("cast the terms with f64(...)"), "{err}");
}
