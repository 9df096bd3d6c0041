//! The dense reference evaluator on hand-computed cases, and against naive
//! loops on random tensors in every format.

use proptest::prelude::*;
use tessera_engine::notation::parse_statement;
use tessera_engine::reference::{evaluate, DenseResult};
use tessera_engine::EngineError;
use tessera_formats::{CoordinateList, Format, FormatError, Tensor};

fn dense(shape: &[usize], values: &[f64]) -> Tensor {
    Tensor::from_dense(shape, values.to_vec()).unwrap()
}

/// A tensor in `format` from its row-major dense values (zeros not stored).
fn packed(shape: &[usize], values: &[f64], format: Format) -> Tensor {
    let mut list = CoordinateList::new(shape);
    let mut coords = vec![0u64; shape.len()];
    for (flat, &v) in values.iter().enumerate() {
        if v != 0.0 {
            let mut rest = flat;
            for m in (0..shape.len()).rev() {
                coords[m] = (rest % shape[m]) as u64;
                rest /= shape[m];
            }
            list.push(&coords, v).unwrap();
        }
    }
    Tensor::pack(&list, format).unwrap()
}

fn eval(text: &str, inputs: &[(&str, &Tensor)], sizes: &[(&str, usize)]) -> DenseResult {
    let stmt = parse_statement(text).unwrap();
    evaluate(&stmt, inputs, sizes).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// A = [[1, 0, 2], [0, 3, 0]] in CSR.
fn a_2x3() -> Tensor {
    packed(&[2, 3], &[1.0, 0.0, 2.0, 0.0, 3.0, 0.0], Format::csr())
}

#[test]
fn spmv_of_a_2x3_csr_matrix() {
    let x = packed(&[3], &[1.0, 2.0, 3.0], Format::sparse_vector());
    let y = eval("y(i) = A(i,j) * x(j)", &[("A", &a_2x3()), ("x", &x)], &[]);
    assert_eq!(y.shape, [2]);
    assert_eq!(y.values, [7.0, 6.0]);
    assert_eq!(y.get(&[1]), 6.0);
}

#[test]
fn spgemm_of_2x2_matrices() {
    let b = packed(&[2, 2], &[1.0, 2.0, 0.0, 3.0], Format::csr());
    let c = packed(&[2, 2], &[4.0, 0.0, 5.0, 6.0], Format::csc());
    let a = eval("A(i,j) = B(i,k) * C(k,j)", &[("B", &b), ("C", &c)], &[]);
    assert_eq!(a.shape, [2, 2]);
    // [[1*4 + 2*5, 1*0 + 2*6], [0*4 + 3*5, 0*0 + 3*6]]
    assert_eq!(a.values, [14.0, 12.0, 15.0, 18.0]);
    assert_eq!(a.get(&[0, 1]), 12.0);
}

#[test]
fn inner_product_is_a_scalar_with_empty_shape() {
    let x = dense(&[3], &[1.0, 2.0, 3.0]);
    let y = packed(&[3], &[4.0, 0.0, 6.0], Format::sparse_vector());
    let a = eval("a = x(i) * y(i)", &[("x", &x), ("y", &y)], &[]);
    assert_eq!(a.shape, [] as [usize; 0]);
    assert_eq!(a.values, [22.0]);
    assert_eq!(a.get(&[]), 22.0);
    let t = a.to_tensor().unwrap();
    assert_eq!(t.order(), 0);
    assert_eq!(t.to_dense_vec().unwrap(), [22.0]);
}

#[test]
fn residual_adds_b_once_not_once_per_column() {
    let x = dense(&[3], &[1.0, 2.0, 3.0]);
    let b = dense(&[2], &[10.0, 10.0]);
    let r = eval(
        "r(i) = b(i) - A(i,j) * x(j)",
        &[("A", &a_2x3()), ("x", &x), ("b", &b)],
        &[],
    );
    assert_eq!(r.values, [3.0, 4.0]);
    let y = eval(
        "y(i) = A(i,j) * x(j) + b(i)",
        &[("A", &a_2x3()), ("x", &x), ("b", &b)],
        &[],
    );
    assert_eq!(y.values, [17.0, 16.0]);
}

#[test]
fn division_by_a_sparse_vector_gives_inf_and_nan_where_it_is_zero() {
    let b = dense(&[4], &[1.0, 0.0, -2.0, 4.0]);
    let c = packed(&[4], &[2.0, 0.0, 0.0, 4.0], Format::sparse_vector());
    let z = eval("z(i) = b(i) / c(i)", &[("b", &b), ("c", &c)], &[]);
    assert_eq!(z.values[0], 0.5);
    assert!(z.values[1].is_nan(), "0 / 0");
    assert_eq!(z.values[2], f64::NEG_INFINITY, "-2 / 0");
    assert_eq!(z.values[3], 1.0);
}

#[test]
fn add_assign_adds_to_the_current_values_and_assign_ignores_them() {
    let x = dense(&[3], &[1.0, 2.0, 3.0]);
    let y = packed(&[2], &[100.0, 200.0], Format::sparse_vector());
    let inputs = [("A", &a_2x3()), ("x", &x), ("y", &y)];
    let add = eval("y(i) += A(i,j) * x(j)", &inputs, &[]);
    assert_eq!(add.values, [107.0, 206.0]);
    let set = eval("y(i) = A(i,j) * x(j)", &inputs, &[]);
    assert_eq!(set.values, [7.0, 6.0]);
    // The right side reads the left tensor as given.
    let twice = eval("y(i) += y(i)", &[("y", &y)], &[]);
    assert_eq!(twice.values, [200.0, 400.0]);
    let a = dense(&[], &[1.0]);
    let scalar = eval("a += x(i) * x(i)", &[("a", &a), ("x", &x)], &[]);
    assert_eq!(scalar.values, [15.0]);
}

#[test]
fn add_assign_needs_the_left_tensor() {
    let x = dense(&[3], &[1.0, 2.0, 3.0]);
    let stmt = parse_statement("y(i) += A(i,j) * x(j)").unwrap();
    assert_eq!(
        evaluate(&stmt, &[("A", &a_2x3()), ("x", &x)], &[]),
        Err(EngineError::UnknownTensor {
            name: "y".into(),
            column: 1
        })
    );
}

#[test]
fn broadcast_takes_the_size_of_j_from_the_given_sizes() {
    let b = dense(&[2], &[1.0, 2.0]);
    let a = eval("A(i,j) = b(i)", &[("b", &b)], &[("j", 3)]);
    assert_eq!(a.shape, [2, 3]);
    assert_eq!(a.values, [1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
    let stmt = parse_statement("A(i,j) = b(i)").unwrap();
    assert_eq!(
        evaluate(&stmt, &[("b", &b)], &[]),
        Err(EngineError::UnknownSize { var: "j".into() })
    );
}

#[test]
fn transpose_swaps_modes() {
    let b = packed(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], Format::coo(2));
    let a = eval("A(i,j) = B(j,i)", &[("B", &b)], &[]);
    assert_eq!(a.shape, [3, 2]);
    assert_eq!(a.values, [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
}

#[test]
fn order_4_contraction_over_two_modes() {
    // B(i,j,k,l) = 8i + 4j + 2k + l + 1; C = [[1, 0], [0, 2]].
    let values: Vec<f64> = (1..=16).map(f64::from).collect();
    let b = packed(&[2, 2, 2, 2], &values, Format::csf(4));
    let c = packed(&[2, 2], &[1.0, 0.0, 0.0, 2.0], Format::coo(2));
    let a = eval("a(i,l) = B(i,j,k,l) * C(j,k)", &[("B", &b), ("C", &c)], &[]);
    // a(i,l) = B(i,0,0,l) * 1 + B(i,1,1,l) * 2 = (8i + l + 1) + 2 (8i + l + 7)
    assert_eq!(a.shape, [2, 2]);
    assert_eq!(a.values, [15.0, 18.0, 39.0, 42.0]);
}

#[test]
fn literals_negation_and_explicit_sums() {
    let b = dense(&[2], &[1.0, -2.0]);
    let y = eval("y(i) = -b(i) * 2 + 0.5", &[("b", &b)], &[]);
    assert_eq!(y.values, [-1.5, 4.5]);
    // sum over a variable that its body does not use multiplies by its size.
    let y = eval("y(i) = sum(k, b(i))", &[("b", &b)], &[("k", 3)]);
    assert_eq!(y.values, [3.0, -6.0]);
    let a = eval("a = 2", &[], &[]);
    assert_eq!((a.shape.len(), a.values), (0, vec![2.0]));
}

#[test]
fn empty_modes_give_empty_results_and_empty_sums_give_zero() {
    let a = dense(&[2, 0], &[]);
    let x = dense(&[0], &[]);
    let y = eval("y(i) = A(i,j) * x(j)", &[("A", &a), ("x", &x)], &[]);
    assert_eq!(y.values, [0.0, 0.0]);
    let z = eval("z(j) = x(j) * 2", &[("x", &x)], &[]);
    assert_eq!((z.shape, z.values), (vec![0], vec![]));
}

#[test]
fn results_convert_to_dense_tensors() {
    let b = packed(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], Format::csr());
    let a = eval("A(i,j) = B(j,i)", &[("B", &b)], &[]);
    let t = a.to_tensor().unwrap();
    assert_eq!(t.shape(), &[3, 2]);
    assert!(t.format().is_dense());
    assert_eq!(t.to_dense_vec().unwrap(), a.values);
}

#[test]
fn absurd_sizes_are_refused_before_allocating() {
    let b = dense(&[2], &[1.0, 2.0]);
    let too_large = |text: &str, sizes: &[(&str, usize)]| {
        let stmt = parse_statement(text).unwrap();
        match evaluate(&stmt, &[("b", &b)], sizes) {
            Err(EngineError::Format(FormatError::TooLarge(_))) => {}
            other => panic!("{text}: {other:?}"),
        }
    };
    too_large("A(i,j) = b(i)", &[("j", 1 << 40)]);
    too_large("A(i,j,k) = b(i)", &[("j", usize::MAX), ("k", 2)]);
    too_large("y(i) = sum(k, b(i))", &[("k", 1 << 40)]);
    too_large("y(i) = sum(k, sum(l, b(i)))", &[("k", 1 << 20), ("l", 1 << 20)]);
}

#[test]
fn inputs_and_sizes_given_twice_are_refused() {
    let b = dense(&[2], &[1.0, 2.0]);
    let stmt = parse_statement("A(i,j) = b(i)").unwrap();
    assert!(matches!(
        evaluate(&stmt, &[("b", &b), ("b", &b)], &[("j", 2)]),
        Err(EngineError::Unsupported(_))
    ));
    assert!(matches!(
        evaluate(&stmt, &[("b", &b)], &[("j", 2), ("j", 3)]),
        Err(EngineError::SizeMismatch { .. })
    ));
    assert!(evaluate(&stmt, &[("b", &b)], &[("j", 2), ("j", 2)]).is_ok());
}

// ------------------------------------------------- against naive loops

fn matrix_format() -> impl Strategy<Value = Format> {
    prop::sample::select(vec![
        Format::dense(2),
        Format::csr(),
        Format::csc(),
        Format::dcsr(),
        Format::coo(2),
        Format::dense_ordered(&[1, 0]),
    ])
}

fn vector_format() -> impl Strategy<Value = Format> {
    prop::sample::select(vec![Format::dense(1), Format::sparse_vector()])
}

/// Row-major values of a `rows x cols` matrix, about half of them zero.
fn matrix(rows: usize, cols: usize) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(prop_oneof![Just(0.0), -100.0..100.0f64], rows * cols)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * (1.0 + a.abs().max(b.abs()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn spmv_matches_a_naive_loop(
        (m, n, a, x) in (0..6usize, 0..6usize).prop_flat_map(|(m, n)| (Just(m), Just(n), matrix(m, n), matrix(n, 1))),
        af in matrix_format(),
        xf in vector_format(),
    ) {
        let naive = |a: &[f64], x: &[f64]| -> Vec<f64> {
            (0..m).map(|i| {
                let mut s = 0.0;
                for j in 0..n {
                    s += a[i * n + j] * x[j];
                }
                s
            }).collect()
        };
        let at = packed(&[m, n], &a, af);
        let xt = packed(&[n], &x, xf);
        let y = eval("y(i) = A(i,j) * x(j)", &[("A", &at), ("x", &xt)], &[]);
        let expect = naive(&a, &x);
        prop_assert_eq!(&y.shape, &vec![m]);
        for (got, want) in y.values.iter().zip(&expect) {
            prop_assert!(close(*got, *want), "{} vs {}", got, want);
        }
    }

    #[test]
    fn spgemm_matches_a_naive_loop(
        (m, k, n, b, c) in (0..5usize, 0..5usize, 0..5usize)
            .prop_flat_map(|(m, k, n)| (Just(m), Just(k), Just(n), matrix(m, k), matrix(k, n))),
        bf in matrix_format(),
        cf in matrix_format(),
    ) {
        let naive = |b: &[f64], c: &[f64]| -> Vec<f64> {
            let mut a = vec![0.0; m * n];
            for i in 0..m {
                for j in 0..n {
                    for l in 0..k {
                        a[i * n + j] += b[i * k + l] * c[l * n + j];
                    }
                }
            }
            a
        };
        let bt = packed(&[m, k], &b, bf);
        let ct = packed(&[k, n], &c, cf);
        let a = eval("A(i,j) = B(i,k) * C(k,j)", &[("B", &bt), ("C", &ct)], &[]);
        let expect = naive(&b, &c);
        prop_assert_eq!(&a.shape, &vec![m, n]);
        prop_assert_eq!(a.values.len(), expect.len());
        for (got, want) in a.values.iter().zip(&expect) {
            prop_assert!(close(*got, *want), "{} vs {}", got, want);
        }
    }
}
