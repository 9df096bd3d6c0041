//! User-defined operators: registered with their properties, called from
//! statements over every named format and awkward contents, against the
//! dense reference (which evaluates the same function); the lattices follow
//! from the properties. The Cranelift tier runs the same checks
//! (`tiers/tests/engine_suite.rs` includes this file), calling the
//! operators from compiled code.

use std::sync::OnceLock;

use tessera_engine::notation::{register_operator, Func, Operator};
use tessera_engine::testing::{check_statement, random_tensor, rotated_tensors, EntryKind, Rng};
use tessera_engine::{Engine, Inputs};
use tessera_formats::{Format, Tensor};

/// The engine the checks run on; the compiled tiers' suites include this
/// file and give their own `suite_engine` at their crate root.
#[allow(dead_code)]
pub(crate) fn suite_engine() -> Engine {
    Engine::new()
}

/// The operators of these tests, registered once per process.
fn operators() -> &'static [Func; 3] {
    static REGISTERED: OnceLock<[Func; 3]> = OnceLock::new();
    REGISTERED.get_or_init(|| {
        [
            // relu(0) = 0: keeps sparsity.
            register_operator(Operator::unary("test_relu", |x| x.max(0.0))).unwrap(),
            // hypot(0, 0) = 0 but hypot(a, 0) = |a|: a union.
            register_operator(Operator::binary("test_hypot", f64::hypot)).unwrap(),
            // A product-like operator: 0 annihilates it, an intersection.
            register_operator(Operator::binary("test_gate", |a, b| a * b.abs()).annihilated_by(0.0)).unwrap(),
        ]
    })
}

#[test]
fn user_defined_operators_match_the_reference_over_every_format() {
    operators();
    let engine = crate::suite_engine();
    let statements: [(&str, &[(&str, &str)]); 5] = [
        ("A(i,j) = test_relu(B(i,j))", &[("B", "ij")]),
        ("A(i,j) = test_hypot(B(i,j), C(i,j))", &[("B", "ij"), ("C", "ij")]),
        ("A(i,j) = test_gate(B(i,j), C(i,j))", &[("B", "ij"), ("C", "ij")]),
        ("y(i) = sum(j, test_gate(B(i,j), c(j)))", &[("B", "ij"), ("c", "j")]),
        ("y(i) = test_relu(B(i,j) * c(j)) + 1", &[("B", "ij"), ("c", "j")]),
    ];
    let mut failures = Vec::new();
    let mut checked = 0;
    for (s, (statement, vars)) in statements.iter().enumerate() {
        for trial in 0..16 {
            let mut rng = Rng::new(((s as u64) << 16) | trial as u64);
            let tensors = rotated_tensors(&mut rng, vars, trial, &mut |rng| rng.range(1, 9));
            let refs: Vec<(&str, &Tensor<f64>)> = tensors.iter().map(|(n, t)| (n.as_str(), t)).collect();
            let output = [
                None,
                Some(Format::dense(vars[0].1.len())),
                Some(Format::coo(vars[0].1.len())),
            ];
            let output = if statement.starts_with("y(i)") {
                [None, Some(Format::dense(1)), Some(Format::sparse_vector())][trial % 3].clone()
            } else {
                output[trial % 3].clone()
            };
            match check_statement(&engine, statement, &refs, output.as_ref(), &[]) {
                Ok(()) => checked += 1,
                Err(e) => failures.push(e),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(checked, 80);
}

#[test]
fn an_operators_properties_decide_where_it_is_computed() {
    operators();
    let engine = crate::suite_engine();
    let mut rng = Rng::new(3);
    let b = random_tensor(&mut rng, &[30], EntryKind::Hypersparse, &Format::sparse_vector()).unwrap();
    let c = random_tensor(&mut rng, &[30], EntryKind::Random, &Format::sparse_vector()).unwrap();
    let inputs = Inputs::new().with("b", &b).with("c", &c);
    let stored = |statement: &str| engine.eval(statement, &inputs).unwrap().stored();
    let (nb, nc) = (b.stored(), c.stored());
    let union = stored("y(i) = b(i) + c(i)");
    assert_eq!(stored("y(i) = test_relu(b(i))"), nb);
    assert_eq!(stored("y(i) = test_hypot(b(i), c(i))"), union);
    assert!(stored("y(i) = test_gate(b(i), c(i))") <= nb.min(nc));
    let plan = engine
        .compile(
            "y(i) = test_gate(b(i), c(i))",
            &[("b", Format::sparse_vector()), ("c", Format::sparse_vector())],
            &Format::sparse_vector(),
        )
        .unwrap()
        .plan()
        .to_string();
    assert!(plan.contains("lattice {b.compressed, c.compressed}\n"), "{plan}");
}

#[test]
fn operators_with_bad_names_are_refused() {
    operators();
    for (name, why) in [
        ("sqrt", "taken by a function"),
        ("min", "taken by a function"),
        ("prod", "taken by a function or reduction"),
        ("test_relu", "taken"),
        ("2x", "names start with a letter"),
        ("a-b", "names start with a letter"),
    ] {
        let err = register_operator(Operator::unary(name, |x| x)).unwrap_err().to_string();
        assert!(err.contains(why), "{name}: {err}");
    }
}
