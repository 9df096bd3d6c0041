//! Functions, comparisons, logical operators and reductions other than
//! sums, over every named format of their operands (dense, compressed,
//! COO, CSF, hashed, DIA, ELL, BCSR) and every awkward kind of contents,
//! against the dense reference, with outputs dense and sparse. Every
//! function of the language is called, whatever its domain: NaN and
//! infinities where its arguments leave it must match too, except under a
//! product with a sparse factor, whose absent entries annihilate the
//! product (`0 * NaN` is 0 there, as in every sparse system): there only
//! functions finite everywhere are called. The Cranelift
//! tier runs the same table (`tiers/tests/engine_suite.rs` includes this
//! file).

use tessera_engine::notation::{Func, Reduction, FUNCTIONS, REDUCTIONS};
use tessera_engine::testing::{check_statement, random_tensor, rotated_tensors, EntryKind, Rng, SAFE_FUNCTIONS};
use tessera_formats::{Format, Tensor, ValueType};

/// `f` applied to `args`, in the text's syntax.
fn call(f: Func, args: &[&str]) -> String {
    match (f, args) {
        (Func::Not, [a]) => format!("!{a}"),
        (_, [a, b]) if !f.is_called() => format!("{a} {} {b}", f.name()),
        _ => format!("{}({})", f.name(), args.join(", ")),
    }
}

/// `f` applied to `args` as an f64 term: a cast to another number type
/// cast back, as an f32 or integer value must be to meet f64 numbers.
fn term(f: Func, args: &[&str]) -> String {
    match f {
        Func::Cast(ValueType::F32 | ValueType::I64 | ValueType::I32) => format!("f64({})", call(f, args)),
        _ => call(f, args),
    }
}

/// Statements and the variables of each tensor they read.
fn statements() -> Vec<(String, Vec<(&'static str, &'static str)>)> {
    let mut out = Vec::new();
    // Complex results are checked by `complex_values.rs`.
    for f in FUNCTIONS.into_iter().filter(|&f| f != Func::Cast(ValueType::C64)) {
        if f.arity() == 1 {
            out.push((format!("A(i,j) = {}", call(f, &["B(i,j)"])), vec![("B", "ij")]));
            out.push((
                format!("y(i) = {} + c(i)", term(f, &["b(i)"])),
                vec![("b", "i"), ("c", "i")],
            ));
            let finite_at = ["0.5", "2", "-0.5"]
                .into_iter()
                .find(|a| f.apply(&[a.parse().unwrap()]).is_finite());
            if let Some(arg) = finite_at {
                out.push((format!("y(i) = C(i,j) * {}", term(f, &[arg])), vec![("C", "ij")]));
            }
        } else {
            out.push((
                format!("A(i,j) = {}", call(f, &["B(i,j)", "C(i,j)"])),
                vec![("B", "ij"), ("C", "ij")],
            ));
            out.push((format!("y(i) = {}", call(f, &["b(i)", "0.5"])), vec![("b", "i")]));
            out.push((format!("y(i) = {}", call(f, &["-1.5", "b(i)"])), vec![("b", "i")]));
            if SAFE_FUNCTIONS.contains(&f) {
                out.push((
                    format!("A(i,j) = B(i,j) * ({})", call(f, &["C(i,j)", "b(j)"])),
                    vec![("B", "ij"), ("C", "ij"), ("b", "j")],
                ));
            }
        }
    }
    for op in REDUCTIONS {
        let r = |body: &str, var: &str| format!("{}({var}, {body})", op.name());
        out.push((format!("y(i) = {}", r("B(i,j)", "j")), vec![("B", "ij")]));
        out.push((
            format!("y(i) = {}", r("B(i,j) * c(j)", "j")),
            vec![("B", "ij"), ("c", "j")],
        ));
        out.push((format!("a = {}", r("b(i)", "i")), vec![("b", "i")]));
        out.push((
            format!("A(i,k) = {}", r("B(i,j) + C(j,k)", "j")),
            vec![("B", "ij"), ("C", "jk")],
        ));
        out.push((
            format!("y(i) = {} - b(i)", r("B(i,j)", "j")),
            vec![("B", "ij"), ("b", "i")],
        ));
        out.push((
            format!("y(i) = {}", r(&format!("sum(k, B(i,k) * C(k,j)) * {}", "c(j)"), "j")),
            vec![("B", "ik"), ("C", "kj"), ("c", "j")],
        ));
    }
    out.extend([
        (
            "y(i) = sqrt(abs(B(i,j) * c(j)))".to_string(),
            vec![("B", "ij"), ("c", "j")],
        ),
        (
            "A(i,j) = max(B(i,j), 0) * C(i,j)".to_string(),
            vec![("B", "ij"), ("C", "ij")],
        ),
        (
            "A(i,j) = B(i,j) * (C(i,j) > 0.5)".to_string(),
            vec![("B", "ij"), ("C", "ij")],
        ),
        (
            "y(i) = min(j, B(i,j) + c(j))".to_string(),
            vec![("B", "ij"), ("c", "j")],
        ),
        (
            "y(i) = max(j, B(i,j) * c(j)) + min(j, B(i,j))".to_string(),
            vec![("B", "ij"), ("c", "j")],
        ),
        (
            "A(i,j) = exp(B(i,j)) * C(i,j) + !(B(i,j) || C(i,j))".to_string(),
            vec![("B", "ij"), ("C", "ij")],
        ),
        (
            "y(i) = or(j, B(i,j) >= 1) && !and(j, B(i,j))".to_string(),
            vec![("B", "ij")],
        ),
        ("y(i) = prod(j, 1 + B(i,j))".to_string(), vec![("B", "ij")]),
    ]);
    out
}

#[test]
fn functions_and_reductions_match_the_reference_over_every_format() {
    let engine = crate::suite_engine();
    let mut failures = Vec::new();
    let mut checked = 0;
    let outputs = |order: usize| match order {
        0 => vec![None],
        1 => vec![None, Some(Format::dense(1)), Some(Format::sparse_vector())],
        _ => vec![None, Some(Format::dense(2)), Some(Format::csr()), Some(Format::coo(2))],
    };
    for (s, (statement, vars)) in statements().iter().enumerate() {
        let order = statement
            .split('=')
            .next()
            .map_or(0, |lhs| lhs.matches(',').count() + lhs.contains('(') as usize);
        for trial in 0..14 {
            let mut rng = Rng::new(((s as u64) << 16) | trial as u64);
            let mut size = |rng: &mut Rng| {
                if trial % 5 == 0 {
                    rng.range(10, 24)
                } else {
                    rng.range(1, 7)
                }
            };
            let tensors = rotated_tensors(&mut rng, vars, trial, &mut size);
            let refs: Vec<(&str, &Tensor<f64>)> = tensors.iter().map(|(n, t)| (n.as_str(), t)).collect();
            let output = &outputs(order)[trial % outputs(order).len()];
            match check_statement(&engine, statement, &refs, output.as_ref(), &[]) {
                Ok(()) => checked += 1,
                Err(e) => failures.push(e),
            }
        }
    }
    eprintln!("{checked} checks of functions and reductions");
    assert!(
        failures.is_empty(),
        "{} checks differ:\n{}",
        failures.len(),
        failures.iter().take(10).cloned().collect::<Vec<_>>().join("\n")
    );
    assert!(checked > 2000, "only {checked} checks ran");
}

#[test]
fn every_reduction_over_nothing_gives_its_identity() {
    let engine = crate::suite_engine();
    let b = random_tensor(&mut Rng::new(1), &[3, 0], EntryKind::Empty, &Format::csr()).unwrap();
    for op in REDUCTIONS {
        let statement = format!("y(i) = {}(j, B(i,j))", op.name());
        let inputs = tessera_engine::Inputs::new().with("B", &b);
        let y = engine.eval(&statement, &inputs).expect("the statement runs");
        assert_eq!(y.to_dense_vec().unwrap(), vec![op.identity(); 3], "{statement}");
    }
}

#[test]
fn sparsity_follows_the_functions_properties() {
    let engine = crate::suite_engine();
    let b = random_tensor(
        &mut Rng::new(2),
        &[40],
        EntryKind::Hypersparse,
        &Format::sparse_vector(),
    )
    .unwrap();
    let inputs = tessera_engine::Inputs::new().with("b", &b);
    let run = |statement: &str| engine.eval(statement, &inputs).expect("runs");
    // sqrt(0) = 0 and max(b, 0) keeps b's zeros: only b's entries are
    // computed. exp(0) = 1 and b < 1 hold everywhere b is absent: the
    // sparse result stores b's entries, and 1 is its fill.
    for (statement, fill) in [
        ("y(i) = sqrt(abs(b(i)))", 0.0),
        ("y(i) = max(b(i), 0)", 0.0),
        ("y(i) = exp(b(i))", 1.0),
        ("y(i) = b(i) < 1", 1.0),
        ("y(i) = b(i) && 1", 0.0),
        ("y(i) = b(i) * (b(i) > 0)", 0.0),
    ] {
        let y = run(statement);
        assert_eq!((y.stored(), y.fill()), (b.stored(), fill), "{statement}");
    }
    // A dense result computes every component.
    let options = tessera_engine::EvalOptions {
        output_format: Some(Format::dense(1)),
        ..Default::default()
    };
    let y = engine.eval_with("y(i) = exp(b(i))", &inputs, &options).unwrap();
    let ones = y.to_dense_vec().unwrap().iter().filter(|&&v| v == 1.0).count();
    assert_eq!(ones, 40 - b.stored());
}

#[test]
fn min_and_max_read_as_reductions_only_over_a_variable_their_body_uses() {
    use tessera_engine::notation::{parse_statement, Expr};
    let reduction = parse_statement("y(i) = min(j, B(i,j))").unwrap();
    assert!(matches!(reduction.rhs, Expr::Reduce { op: Reduction::Min, .. }));
    let call = parse_statement("y(i) = min(a, b(i))").unwrap();
    assert!(matches!(call.rhs, Expr::Call { func: Func::Min, .. }));
    assert_eq!(call.to_string(), "y(i) = min(a, b(i))");
    // A scalar named like a variable of the other argument prints in
    // parentheses, so that it reads back as a call.
    let scalar = Expr::call(Func::Max, vec![Expr::access("j", &[]), Expr::access("B", &["i", "j"])]);
    assert_eq!(scalar.to_string(), "max((j), B(i,j))");
    let text = format!("y(i) = {scalar}");
    assert!(matches!(
        parse_statement(&text).unwrap().rhs,
        Expr::Call { func: Func::Max, .. }
    ));
}
