//! Inputs the plan converts are converted once per tensor: a kernel run
//! again on the same tensor reuses the conversion, and a changed tensor is
//! converted anew.

use std::sync::Arc;

use tessera_engine::testing::{random_tensor, EntryKind, Rng};
use tessera_engine::{Engine, Inputs};
use tessera_formats::Format;

const STATEMENT: &str = "C(i,j) = A(i,j) + A(j,i)";

fn dense_of(t: &tessera_formats::Tensor<f64>) -> Vec<f64> {
    t.to_dense_vec().unwrap()
}

#[test]
fn a_transposed_access_is_converted_once_and_reused_while_the_tensor_is_unchanged() {
    let engine = Engine::new();
    let mut a = random_tensor(&mut Rng::new(8), &[30, 30], EntryKind::Random, &Format::csr()).unwrap();
    let kernel = engine
        .compile(STATEMENT, &[("A", Format::csr())], &Format::csr())
        .unwrap();
    assert!(
        kernel.plan().contains("reused while it is unchanged"),
        "{}",
        kernel.plan()
    );
    let transpose_sum = |a: &tessera_formats::Tensor<f64>| {
        let d = dense_of(a);
        let n = 30;
        (0..n * n).map(|k| d[k] + d[(k % n) * n + k / n]).collect::<Vec<f64>>()
    };

    let first = kernel.run(&Inputs::new().with("A", &a)).unwrap();
    assert_eq!(dense_of(&first), transpose_sum(&a));
    let cached = kernel.cached_conversions();
    assert_eq!(cached.len(), 1, "one operand is converted");
    let second = kernel.run(&Inputs::new().with("A", &a)).unwrap();
    assert_eq!(second, first);
    assert!(
        Arc::ptr_eq(&cached[0], &kernel.cached_conversions()[0]),
        "the second run converted A again"
    );

    // Changing the values makes a new version: converted again, and the
    // result follows the new values.
    for v in a.values_mut() {
        *v *= 2.0;
    }
    let third = kernel.run(&Inputs::new().with("A", &a)).unwrap();
    assert_eq!(dense_of(&third), transpose_sum(&a));
    assert!(!Arc::ptr_eq(&cached[0], &kernel.cached_conversions()[0]));
}
