//! Raw CSR and CSC arrays in and out: tensors built from scipy-style arrays
//! read back (through `get`, `entries` and `to_csr`/`to_csc`) as the arrays
//! say, awkward arrays are handled as documented, and malformed ones are
//! refused with the element at fault, never a panic.

use tessera_formats::{Compression, Format, FormatError, Tensor};

/// The dense matrix compressed arrays describe, computed directly from
/// them: `dense[major][minor]`, repeats summed.
fn reference(major: usize, minor: usize, indptr: &[u64], indices: &[u64], data: &[f64]) -> Vec<Vec<f64>> {
    let mut dense = vec![vec![0.0; minor]; major];
    for r in 0..major {
        for p in indptr[r] as usize..indptr[r + 1] as usize {
            dense[r][indices[p] as usize] += data[p];
        }
    }
    dense
}

/// Every component of `tensor` against `dense` (rows major).
fn assert_reads_as(tensor: &Tensor, dense: &[Vec<f64>], what: &str) {
    for (i, row) in dense.iter().enumerate() {
        for (j, &v) in row.iter().enumerate() {
            assert_eq!(tensor.get(&[i as u64, j as u64]), Some(v), "{what} ({i},{j})");
        }
    }
}

fn transpose(dense: &[Vec<f64>], rows: usize, cols: usize) -> Vec<Vec<f64>> {
    (0..rows).map(|i| (0..cols).map(|j| dense[j][i]).collect()).collect()
}

#[test]
fn csr_arrays_become_a_csr_tensor_that_reads_and_gives_back_the_same_arrays() {
    // 4 x 5 with an empty first and third row and an explicit zero.
    let indptr = [0u64, 0, 3, 3, 5];
    let indices = [0u64, 2, 4, 1, 3];
    let data = [1.5, -2.0, 0.0, 7.0, 3.25];
    let a = Tensor::from_csr([4, 5], &indptr, &indices, &data).unwrap();
    assert_eq!(*a.format(), Format::csr());
    assert_reads_as(&a, &reference(4, 5, &indptr, &indices, &data), "csr");
    // Entries in storage order are the arrays' triples, the explicit zero included.
    let entries: Vec<(Vec<u64>, f64)> = a.entries().map(|(c, v)| (c.to_vec(), v)).collect();
    let expected: Vec<(Vec<u64>, f64)> = (0..4)
        .flat_map(|r| (indptr[r] as usize..indptr[r + 1] as usize).map(move |p| (r, p)))
        .map(|(r, p)| (vec![r as u64, indices[p]], data[p]))
        .collect();
    assert_eq!(entries, expected);
    let back = a.to_csr().unwrap();
    assert_eq!(back.compression, Compression::Rows);
    assert_eq!(back.shape, [4, 5]);
    assert_eq!(
        (back.indptr, back.indices, back.data),
        (indptr.to_vec(), indices.to_vec(), data.to_vec())
    );
}

#[test]
fn csc_arrays_become_a_csc_tensor_and_convert_to_csr_arrays() {
    // 3 x 2 by columns: column 0 holds rows 0 and 2, column 1 row 1.
    let (indptr, indices, data) = ([0usize, 2, 3], [0usize, 2, 1], [1.0, 2.0, 3.0]);
    let a = Tensor::from_csc([3, 2], &indptr, &indices, &data).unwrap();
    assert_eq!(*a.format(), Format::csc());
    let by_columns = reference(2, 3, &indptr.map(|x| x as u64), &indices.map(|x| x as u64), &data);
    assert_reads_as(&a, &transpose(&by_columns, 3, 2), "csc");
    let csc = a.to_csc().unwrap();
    assert_eq!((csc.indptr, csc.indices), (vec![0, 2, 3], vec![0, 2, 1]));
    // The same matrix by rows: row 0 -> col 0, row 1 -> col 1, row 2 -> col 0.
    let csr = a.to_csr().unwrap();
    assert_eq!(
        (csr.indptr, csr.indices, csr.data),
        (vec![0, 1, 2, 3], vec![0, 1, 0], vec![1.0, 3.0, 2.0])
    );
}

#[test]
fn unsorted_rows_are_sorted_and_repeated_columns_summed() {
    // Row 0: columns 3, 0, 3, 1 (3 repeated); row 1 empty; row 2: 2, 2, 2.
    let indptr = [0i64, 4, 4, 7];
    let indices = [3i64, 0, 3, 1, 2, 2, 2];
    let data = [1.0, 2.0, 10.0, 4.0, 0.5, 0.25, 0.125];
    let a = Tensor::from_csr([3, 4], &indptr, &indices, &data).unwrap();
    let csr = a.to_csr().unwrap();
    assert_eq!(csr.indptr, vec![0, 3, 3, 4]);
    assert_eq!(csr.indices, vec![0, 1, 3, 2]);
    assert_eq!(csr.data, vec![2.0, 4.0, 11.0, 0.875]);
    let as_u64 = |v: &[i64]| v.iter().map(|&x| x as u64).collect::<Vec<_>>();
    assert_reads_as(
        &a,
        &reference(3, 4, &as_u64(&indptr), &as_u64(&indices), &data),
        "summed",
    );
}

#[test]
fn empty_and_one_by_one_matrices_round_trip() {
    for (shape, indptr) in [([0, 0], vec![0u32]), ([0, 5], vec![0]), ([3, 0], vec![0, 0, 0, 0])] {
        let a = Tensor::<f64>::from_csr(shape, &indptr, &[], &[]).unwrap();
        assert_eq!(a.shape(), &shape);
        assert_eq!(a.entries().count(), 0);
        let back = a.to_csr().unwrap();
        assert_eq!(back.indptr, indptr.iter().map(|&x| u64::from(x)).collect::<Vec<_>>());
        assert!(back.indices.is_empty() && back.data.is_empty());
        let csc = a.to_csc().unwrap();
        assert_eq!(csc.indptr.len(), shape[1] + 1, "{shape:?}");
    }
    let one = Tensor::from_csr([1, 1], &[0u8, 1], &[0u8], &[9.0]).unwrap();
    assert_eq!(one.get(&[0, 0]), Some(9.0));
    assert_eq!(one.to_csc().unwrap().data, vec![9.0]);
    let none = Tensor::<f64>::from_csr([1, 1], &[0u8, 0], &[], &[]).unwrap();
    assert_eq!(none.get(&[0, 0]), Some(0.0));
}

#[test]
fn other_formats_give_their_nonzeros_as_compressed_arrays() {
    let dense = Tensor::from_dense(&[2, 3], vec![0.0, 1.0, 0.0, 2.0, 0.0, 3.0]).unwrap();
    for format in [
        Format::dense(2),
        Format::coo(2),
        Format::dcsc(),
        Format::dia(),
        Format::ell(),
    ] {
        let a = dense.convert(&format).unwrap();
        let csr = a.to_csr().unwrap();
        assert_eq!(
            (csr.indptr, csr.indices, csr.data),
            (vec![0, 1, 3], vec![1, 0, 2], vec![1.0, 2.0, 3.0]),
            "{format}"
        );
    }
    let vector = Tensor::from_dense(&[3], vec![1.0, 2.0, 3.0]).unwrap();
    let err = vector.to_csr().unwrap_err();
    assert_eq!(
        err.to_string(),
        "shape mismatch: CSR arrays hold a matrix; this tensor has order 1"
    );
}

#[test]
fn malformed_arrays_are_refused_naming_the_element_at_fault() {
    let csr = |indptr: &[i32], indices: &[i32], data: &[f64]| {
        Tensor::from_csr([2, 3], indptr, indices, data)
            .map(|_| ())
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        csr(&[0, 1], &[0], &[1.0]),
        "invalid CSR arrays: indptr has 2 entries; a 2 x 3 matrix has 2 rows, so indptr needs 3"
    );
    assert_eq!(
        csr(&[0, 1, 2], &[0, 1], &[1.0]),
        "invalid CSR arrays: indices has 2 entries but data has 1"
    );
    assert_eq!(
        csr(&[1, 1, 1], &[], &[]),
        "invalid CSR arrays: indptr[0] = 1 but must be 0"
    );
    assert_eq!(
        csr(&[0, 2, 1], &[0, 1], &[1.0, 1.0]),
        "invalid CSR arrays: indptr is not monotone: indptr[1] = 2 > indptr[2] = 1"
    );
    assert_eq!(
        csr(&[0, 1, 1], &[0, 1], &[1.0, 1.0]),
        "invalid CSR arrays: indptr[2] = 1 but indices has 2 entries"
    );
    assert_eq!(
        csr(&[0, 1, 2], &[0, 3], &[1.0, 1.0]),
        "invalid CSR arrays: indices[1] = 3 is outside 0..3 (the columns of a 2 x 3 matrix)"
    );
    assert_eq!(
        csr(&[0, 1, 2], &[0, -1], &[1.0, 1.0]),
        "invalid CSR arrays: indices[1] = -1 is negative"
    );
    assert_eq!(
        csr(&[0, -1, 2], &[0, 1], &[1.0, 1.0]),
        "invalid CSR arrays: indptr[1] = -1 is negative"
    );
    assert_eq!(
        csr(&[], &[], &[]),
        "invalid CSR arrays: indptr has 0 entries; a 2 x 3 matrix has 2 rows, so indptr needs 3"
    );
    let err = Tensor::from_csc([2, 3], &[0u64, 1, 1, 1], &[2u64], &[1.0]).unwrap_err();
    assert!(matches!(err, FormatError::Arrays { layout: "CSC", .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "invalid CSC arrays: indices[0] = 2 is outside 0..2 (the rows of a 2 x 3 matrix)"
    );
}
