//! Every user error is a clear `EngineError`, never a panic: unknown
//! tensors, orders, sizes, syntax, unknown output sizes, output formats
//! that cannot hold the result, and kernels run on other formats.

use tessera_engine::testing::{random_tensor, EntryKind, Rng};
use tessera_engine::{Engine, EngineError, EvalOptions, Inputs};
use tessera_formats::{Format, FormatError, Tensor};

fn matrix(shape: &[usize], format: Format) -> Tensor<f64> {
    random_tensor(&mut Rng::new(1), shape, EntryKind::Random, &format).unwrap()
}

fn vector(n: usize) -> Tensor<f64> {
    random_tensor(&mut Rng::new(2), &[n], EntryKind::Full, &Format::dense(1)).unwrap()
}

fn eval_err(statement: &str, inputs: &Inputs<'_>, options: &EvalOptions) -> EngineError {
    match Engine::new().eval_with(statement, inputs, options) {
        Ok(t) => panic!("`{statement}` gave {:?} instead of an error", t.shape()),
        Err(e) => e,
    }
}

#[test]
fn unknown_tensor_is_named_with_its_column() {
    let a = matrix(&[3, 4], Format::csr());
    let err = eval_err(
        "y(i) = A(i,j) * x(j)",
        &Inputs::new().with("A", &a),
        &EvalOptions::default(),
    );
    assert_eq!(
        err,
        EngineError::UnknownTensor {
            name: "x".into(),
            column: 17
        }
    );
    assert_eq!(err.to_string(), "column 17: unknown tensor x");
}

#[test]
fn add_assign_needs_the_left_tensor() {
    let a = matrix(&[3, 4], Format::csr());
    let x = vector(4);
    let err = eval_err(
        "y(i) += A(i,j) * x(j)",
        &Inputs::new().with("A", &a).with("x", &x),
        &EvalOptions::default(),
    );
    assert!(
        matches!(&err, EngineError::UnknownTensor { name, .. } if name == "y"),
        "{err:?}"
    );
}

#[test]
fn order_mismatch_names_tensor_orders_and_column() {
    let a = matrix(&[3, 4], Format::csr());
    let x = vector(4);
    let err = eval_err(
        "y(i) = A(i,j,k) * x(j)",
        &Inputs::new().with("A", &a).with("x", &x),
        &EvalOptions::default(),
    );
    assert_eq!(
        err,
        EngineError::OrderMismatch {
            tensor: "A".into(),
            expected: 2,
            found: 3,
            column: 8
        }
    );
    assert!(
        err.to_string().contains("A has order 2 but is accessed with 3"),
        "{err}"
    );
}

#[test]
fn size_mismatch_names_the_variable_and_both_sizes() {
    let a = matrix(&[3, 4], Format::csr());
    let x = vector(5);
    let err = eval_err(
        "y(i) = A(i,j) * x(j)",
        &Inputs::new().with("A", &a).with("x", &x),
        &EvalOptions::default(),
    );
    match &err {
        EngineError::SizeMismatch {
            var,
            first,
            first_size,
            second,
            second_size,
        } => {
            assert_eq!(var, "j");
            assert_eq!((*first_size, *second_size), (4, 5));
            assert!(first.contains('A') && second.contains('x'), "{err}");
        }
        other => panic!("expected a size mismatch, got {other:?}"),
    }
    let text = err.to_string();
    assert!(
        text.contains("index variable j") && text.contains('4') && text.contains('5'),
        "{text}"
    );
}

#[test]
fn given_sizes_that_contradict_the_inputs_are_a_size_mismatch() {
    let a = matrix(&[3, 4], Format::csr());
    let options = EvalOptions {
        sizes: vec![("i".into(), 7)],
        ..EvalOptions::default()
    };
    let err = eval_err("B(i,j) = A(i,j)", &Inputs::new().with("A", &a), &options);
    assert!(
        matches!(&err, EngineError::SizeMismatch { var, first_size: 3, second_size: 7, .. } if var == "i"),
        "{err:?}"
    );
}

#[test]
fn bad_syntax_reports_the_column() {
    let a = matrix(&[3, 4], Format::csr());
    let inputs = Inputs::new().with("A", &a);
    for (text, column) in [
        ("y(i) = A(i,j * x(j)", 14),
        ("y(i) = ", 8),
        ("y(i) A(i,j)", 6),
        ("y(i) = A(i,j) $ 2", 15),
        ("(i) = A(i,j)", 1),
    ] {
        match eval_err(text, &inputs, &EvalOptions::default()) {
            EngineError::Syntax { column: c, message } => {
                assert_eq!(c, column, "`{text}`: {message}");
                assert!(!message.is_empty());
            }
            other => panic!("`{text}`: expected a syntax error, got {other:?}"),
        }
    }
}

#[test]
fn repeated_index_in_one_access_is_refused() {
    let a = matrix(&[3, 3], Format::csr());
    let err = eval_err("y(i) = A(i,i)", &Inputs::new().with("A", &a), &EvalOptions::default());
    assert!(
        matches!(&err, EngineError::RepeatedIndex { var, tensor, .. } if var == "i" && tensor == "A"),
        "{err:?}"
    );
}

#[test]
fn unknown_size_of_an_output_only_variable_names_it() {
    let b = vector(3);
    let err = eval_err("A(i,j) = b(i)", &Inputs::new().with("b", &b), &EvalOptions::default());
    assert_eq!(err, EngineError::UnknownSize { var: "j".into() });
    // Given, it runs.
    let options = EvalOptions {
        sizes: vec![("j".into(), 2)],
        ..EvalOptions::default()
    };
    let a = Engine::new()
        .eval_with("A(i,j) = b(i)", &Inputs::new().with("b", &b), &options)
        .unwrap();
    assert_eq!(a.shape(), &[3, 2]);
}

#[test]
fn output_format_of_the_wrong_order_is_refused() {
    let a = matrix(&[3, 4], Format::csr());
    let x = vector(4);
    let inputs = Inputs::new().with("A", &a).with("x", &x);
    for (statement, format) in [
        ("y(i) = A(i,j) * x(j)", Format::csr()),
        ("B(i,j) = A(i,j)", Format::sparse_vector()),
        ("s = A(i,j) * A(i,j)", Format::dense(1)),
    ] {
        let options = EvalOptions {
            output_format: Some(format.clone()),
            ..EvalOptions::default()
        };
        let err = eval_err(statement, &inputs, &options);
        assert!(
            matches!(err, EngineError::OrderMismatch { .. }),
            "`{statement}` into {format}: {err:?}"
        );
    }
}

#[test]
fn output_format_whose_blocks_do_not_divide_the_shape_is_refused() {
    let a = matrix(&[3, 4], Format::csr());
    let options = EvalOptions {
        output_format: Some(Format::bcsr(2, 2).unwrap()),
        ..EvalOptions::default()
    };
    let err = eval_err("B(i,j) = A(i,j)", &Inputs::new().with("A", &a), &options);
    assert!(matches!(err, EngineError::Format(FormatError::Shape(_))), "{err:?}");
}

#[test]
fn a_dense_result_too_large_to_hold_is_refused_before_allocating() {
    let b = vector(3);
    let options = EvalOptions {
        output_format: Some(Format::dense(2)),
        sizes: vec![("j".into(), 1 << 40)],
        ..EvalOptions::default()
    };
    let err = eval_err("A(i,j) = b(i)", &Inputs::new().with("b", &b), &options);
    assert!(matches!(err, EngineError::Format(FormatError::TooLarge(_))), "{err:?}");
}

#[test]
fn a_sum_variable_used_outside_its_sum_is_refused() {
    let a = matrix(&[3, 3], Format::csr());
    let x = vector(3);
    let err = eval_err(
        "y(i) = sum(j, A(i,j)) * x(j)",
        &Inputs::new().with("A", &a).with("x", &x),
        &EvalOptions::default(),
    );
    assert!(
        matches!(&err, EngineError::Unsupported(m) if m.contains("sum(j")),
        "{err:?}"
    );
}

#[test]
fn kernel_run_on_tensors_of_other_formats_is_a_kernel_mismatch() {
    let engine = Engine::new();
    let kernel = engine
        .compile(
            "y(i) = A(i,j) * x(j)",
            &[("A", Format::csr()), ("x", Format::dense(1))],
            &Format::dense(1),
        )
        .unwrap();
    let x = vector(4);
    for other in [
        Format::csc(),
        Format::coo(2),
        Format::bcsr(1, 2).unwrap(),
        Format::dense(2),
    ] {
        let a = matrix(&[3, 4], other.clone());
        let err = kernel.run(&Inputs::new().with("A", &a).with("x", &x)).unwrap_err();
        match &err {
            EngineError::KernelMismatch(m) => assert!(m.contains('A') && m.contains("csr"), "{m}"),
            e => panic!("A in {other}: expected a kernel mismatch, got {e:?}"),
        }
    }
    // A missing tensor is an unknown tensor, not a mismatch.
    let a = matrix(&[3, 4], Format::csr());
    let err = kernel.run(&Inputs::new().with("A", &a)).unwrap_err();
    assert!(
        matches!(&err, EngineError::UnknownTensor { name, .. } if name == "x"),
        "{err:?}"
    );
    // The right formats run.
    kernel.run(&Inputs::new().with("A", &a).with("x", &x)).unwrap();
}

#[test]
fn compiling_for_formats_of_the_wrong_order_is_refused() {
    let engine = Engine::new();
    let err = engine
        .compile(
            "y(i) = A(i,j) * x(j)",
            &[("A", Format::csf(3)), ("x", Format::dense(1))],
            &Format::dense(1),
        )
        .err()
        .expect("an error");
    assert!(
        matches!(&err, EngineError::OrderMismatch { tensor, expected: 3, found: 2, .. } if tensor == "A"),
        "{err:?}"
    );
    let err = engine
        .compile("y(i) = A(i,j) * x(j)", &[("A", Format::csr())], &Format::dense(1))
        .err()
        .expect("an error");
    assert!(
        matches!(&err, EngineError::UnknownTensor { name, .. } if name == "x"),
        "{err:?}"
    );
}

#[test]
fn add_assign_into_a_left_tensor_of_another_size_is_a_size_mismatch() {
    let a = matrix(&[3, 4], Format::csr());
    let x = vector(4);
    let y = vector(5);
    let inputs = Inputs::new().with("A", &a).with("x", &x).with("y", &y);
    let err = eval_err("y(i) += A(i,j) * x(j)", &inputs, &EvalOptions::default());
    assert!(
        matches!(&err, EngineError::SizeMismatch { var, first_size: 3, second_size: 5, .. } if var == "i"),
        "{err:?}"
    );
}

/// Random statements with their text mutated (characters dropped, doubled
/// or replaced, tensors of other shapes): any answer is fine except a panic.
#[test]
fn mutated_statements_and_mismatched_tensors_never_panic() {
    use tessera_engine::testing::{random_format, random_shape, random_statement, StatementConfig};
    const JUNK: &[u8] = b"()+-*/=,. 0123ijkABx_sum";
    let engine = Engine::new();
    let mut rng = Rng::new(99);
    let mut errors = 0;
    for case in 0..600 {
        let stmt = random_statement(&mut rng, &StatementConfig::default());
        let mut text = stmt.text.clone().into_bytes();
        for _ in 0..rng.range(0, 3) {
            let at = rng.below(text.len() + 1);
            match rng.below(3) {
                0 if at < text.len() => {
                    text.remove(at);
                }
                1 => text.insert(at, *rng.pick(JUNK)),
                _ if at < text.len() => text[at] = *rng.pick(JUNK),
                _ => {}
            }
        }
        let text = String::from_utf8(text).expect("ASCII in, ASCII out");
        let mut tensors = Vec::new();
        for spec in &stmt.tensors {
            // Now and then a tensor of another shape (and maybe order).
            let shape = if rng.percent(20) {
                let order = rng.below(4);
                random_shape(&mut rng, order, 5)
            } else {
                spec.shape.clone()
            };
            let format = random_format(&mut rng, &shape);
            let kind = EntryKind::random(&mut rng);
            tensors.push((
                spec.name.clone(),
                random_tensor(&mut rng, &shape, kind, &format).unwrap(),
            ));
        }
        let mut inputs = Inputs::new();
        for (name, t) in &tensors {
            inputs.insert(name, t);
        }
        let options = EvalOptions {
            sizes: stmt.sizes.clone(),
            ..EvalOptions::default()
        };
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            engine.eval_with(&text, &inputs, &options)
        }));
        match run {
            Ok(Ok(_)) => {}
            Ok(Err(_)) => errors += 1,
            Err(_) => panic!("case {case}: `{text}` (from `{}`) panicked", stmt.text),
        }
    }
    assert!(
        errors > 100,
        "only {errors} mutations were errors: the mutations are too gentle"
    );
}
