//! User-defined operators: registered with their properties, called from
//! statements over every named format and awkward contents, against the
//! dense reference (which evaluates the same function); the lattices follow
//! from the properties, an explicit iteration algebra or a staged body. The
//! Cranelift and OpenCL tiers run the same checks
//! (`tiers/tests/engine_suite.rs` and `opencl_suite.rs` include this file),
//! calling callbacks from compiled code and compiling staged operators
//! inline.

use std::sync::OnceLock;

use tessera_engine::notation::{register_operator, Expr, Func, Operator, Region};
use tessera_engine::testing::{check_statement, random_tensor, rotated_tensors, EntryKind, Rng};
use tessera_engine::Inputs;
use tessera_formats::{Format, Tensor};

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

/// Operators with an explicit iteration algebra, and staged ones.
fn regions_and_staged() {
    static REGISTERED: OnceLock<()> = OnceLock::new();
    REGISTERED.get_or_init(|| {
        let (a, b) = (Region::arg(0), Region::arg(1));
        // TACO's examples: a sum computed only where both are stored, a
        // difference of sets, and a value only where the argument is absent.
        register_operator(Operator::binary("test_meet_add", |x, y| x + y).iterating(a.clone() & b.clone())).unwrap();
        register_operator(Operator::binary("test_minus", |x, _| x).iterating(a.clone() & !b.clone())).unwrap();
        register_operator(Operator::binary("test_join_sub", |x, y| x - y).iterating(a.clone() | b)).unwrap();
        register_operator(Operator::unary("test_absent", |_| 1.0).iterating(!a)).unwrap();
        for text in [
            "test_softplus(x) = log(1 + exp(x))",
            "test_absdiff(x, y) = abs(x - y)",
            "test_masked(x, y) = x * (y == 0)",
            "test_lerp(a, b, t) = a + t * (b - a)",
        ] {
            register_operator(Operator::define(text).unwrap()).unwrap();
        }
        // A staged operator built in Rust, calling another one.
        let absdiff = Func::from_name("test_absdiff").unwrap();
        register_operator(Operator::staged("test_capped", 2, |x| {
            Expr::call(Func::Min, vec![Expr::call(absdiff, x.to_vec()), Expr::lit(0.5)])
        }))
        .unwrap();
    });
}

#[test]
fn user_defined_operators_match_the_reference_over_every_format() {
    operators();
    regions_and_staged();
    let engine = crate::suite_engine();
    let statements: [(&str, &[(&str, &str)]); 15] = [
        ("A(i,j) = test_relu(B(i,j))", &[("B", "ij")]),
        ("A(i,j) = test_hypot(B(i,j), C(i,j))", &[("B", "ij"), ("C", "ij")]),
        ("A(i,j) = test_gate(B(i,j), C(i,j))", &[("B", "ij"), ("C", "ij")]),
        ("y(i) = sum(j, test_gate(B(i,j), c(j)))", &[("B", "ij"), ("c", "j")]),
        ("y(i) = test_relu(B(i,j) * c(j)) + 1", &[("B", "ij"), ("c", "j")]),
        ("A(i,j) = test_meet_add(B(i,j), C(i,j))", &[("B", "ij"), ("C", "ij")]),
        ("A(i,j) = test_minus(B(i,j), C(i,j))", &[("B", "ij"), ("C", "ij")]),
        ("y(i) = sum(j, test_join_sub(B(i,j), c(j)))", &[("B", "ij"), ("c", "j")]),
        ("A(i,j) = test_absent(B(i,j)) * C(i,j)", &[("B", "ij"), ("C", "ij")]),
        ("A(i,j) = test_softplus(B(i,j))", &[("B", "ij")]),
        ("A(i,j) = test_absdiff(B(i,j), C(i,j))", &[("B", "ij"), ("C", "ij")]),
        ("A(i,j) = test_masked(B(i,j), C(i,j))", &[("B", "ij"), ("C", "ij")]),
        (
            "y(i) = sum(j, test_lerp(B(i,j), C(i,j), c(j)))",
            &[("B", "ij"), ("C", "ij"), ("c", "j")],
        ),
        ("y(i) = sum(j, test_capped(B(i,j), c(j)))", &[("B", "ij"), ("c", "j")]),
        (
            "y(i) = sum(j, test_masked(B(i,j), c(j)) * test_softplus(c(j)))",
            &[("B", "ij"), ("c", "j")],
        ),
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
    assert_eq!(checked, 16 * statements.len());
}

#[test]
fn an_explicit_region_decides_the_lattice_and_the_value_outside_it() {
    regions_and_staged();
    let engine = crate::suite_engine();
    let sv = Format::sparse_vector;
    let lattice = |statement: &str| {
        let plan = engine
            .compile(statement, &[("b", sv()), ("c", sv())], &sv())
            .unwrap()
            .plan()
            .to_string();
        let line = plan
            .lines()
            .find(|l| l.starts_with("forall i:"))
            .unwrap_or_default()
            .to_string();
        line.split("lattice ").nth(1).unwrap_or_default().to_string()
    };
    assert_eq!(
        lattice("y(i) = test_meet_add(b(i), c(i))"),
        "{b.compressed, c.compressed}"
    );
    assert_eq!(
        lattice("y(i) = test_minus(b(i), c(i))"),
        "{b.compressed, c.compressed} > {b.compressed}"
    );
    assert_eq!(
        lattice("y(i) = test_join_sub(b(i), c(i))"),
        "{b.compressed, c.compressed} > {b.compressed} > {c.compressed}"
    );
    let b = Tensor::from_dense(&[4], vec![1.0, 2.0, 0.0, 0.0]).unwrap();
    let c = Tensor::from_dense(&[4], vec![3.0, 0.0, 5.0, 0.0]).unwrap();
    let inputs = Inputs::new().with("b", &b).with("c", &c);
    let dense = |statement: &str| engine.eval(statement, &inputs).unwrap().to_dense_vec().unwrap();
    assert_eq!(dense("y(i) = test_meet_add(b(i), c(i))"), vec![4.0, 0.0, 0.0, 0.0]);
    assert_eq!(dense("y(i) = test_minus(b(i), c(i))"), vec![0.0, 2.0, 0.0, 0.0]);
    assert_eq!(dense("y(i) = test_join_sub(b(i), c(i))"), vec![-2.0, 2.0, -5.0, 0.0]);
    assert_eq!(dense("y(i) = test_absent(b(i))"), vec![0.0, 0.0, 1.0, 1.0]);
}

#[test]
fn staged_operators_are_written_out_and_computed_inline() {
    regions_and_staged();
    let engine = crate::suite_engine();
    let sv = Format::sparse_vector;
    let kernel = engine
        .compile("y(i) = test_capped(b(i), c(i))", &[("b", sv()), ("c", sv())], &sv())
        .unwrap();
    let plan = kernel.plan().to_string();
    assert!(plan.contains("min(abs((b(i) - c(i))), 0.5)"), "{plan}");
    assert!(!plan.contains("test_"), "{plan}");
    // The written-out statement and the call give the same bits.
    let b = Tensor::from_dense(&[5], vec![1.0, -2.0, 0.0, 0.25, 0.0]).unwrap();
    let c = Tensor::from_dense(&[5], vec![0.75, 0.0, 4.0, 0.5, 0.0]).unwrap();
    let inputs = Inputs::new().with("b", &b).with("c", &c);
    let value = |statement: &str| engine.eval(statement, &inputs).unwrap().to_dense_vec().unwrap();
    assert_eq!(value("y(i) = test_capped(b(i), c(i))"), vec![0.25, 0.5, 0.5, 0.25, 0.0]);
    assert_eq!(
        value("y(i) = test_lerp(b(i), c(i), 0.5)"),
        value("y(i) = b(i) + 0.5 * (c(i) - b(i))")
    );
    // The function value outside a statement is the body's.
    let softplus = Func::from_name("test_softplus").unwrap();
    assert_eq!(softplus.apply(&[1.0]), (1.0 + 1f64.exp()).ln());
    assert_eq!(softplus.arity(), 1);
}

#[test]
fn bad_operator_definitions_are_refused() {
    regions_and_staged();
    for (text, why) in [
        (
            "def_a(x) = x + A(i)",
            "column 16: the body of def_a reads `A(i)`: it reads only its parameters (x)",
        ),
        ("def_b(x) = y", "column 12: the body of def_b reads `y`"),
        ("def_c(x, x) = x", "parameter x is named twice"),
        ("def_d(x) += x", "defined with `=`"),
        ("def_e(x) = sum(i, x)", "has a reduction"),
        ("def_f(x = 1", "column"),
        ("sqrt(x) = x", "column 1: `sqrt` is taken by a function or operator"),
        ("  test_softplus(x) = x", "column 3: `test_softplus` is taken"),
    ] {
        let err = Operator::define(text).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains(why), "{text}: {err}");
    }
    for (op, why) in [
        (Operator::binary("test_absdiff", |x, _| x), "taken"),
        (
            Operator::define("def_g(a, b, c, d, e) = a").unwrap(),
            "1 to 4 arguments",
        ),
        (
            Operator::staged("def_h", 1, |x| x[0].clone() * Expr::access("A", &["i"])),
            "reads `A`",
        ),
        (
            Operator::staged("def_i", 1, |x| Expr::sum("i", x[0].clone())),
            "reduction",
        ),
        (
            Operator::define("def_j(x) = x").unwrap().annihilated_by(0.0),
            "follows from its body",
        ),
        (
            Operator::binary("def_k", |x, _| x).iterating(Region::arg(2)),
            "region reads argument 2",
        ),
    ] {
        let err = register_operator(op).unwrap_err().to_string();
        assert!(err.contains(why), "{err}");
    }
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
