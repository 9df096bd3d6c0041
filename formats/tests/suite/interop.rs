//! Conversions with `sprs` and `ndarray` (features `sprs`, `ndarray`):
//! round trips give back the same matrix or array, every component reads
//! as the other crate reads it, and awkward shapes (empty, 1 x 1, views,
//! non-standard memory layouts) convert.
#![cfg(any(feature = "sprs", feature = "ndarray"))]

use tessera_formats::{Format, Tensor};

#[cfg(feature = "sprs")]
mod with_sprs {
    use super::*;
    use sprs::{CsMat, TriMat};

    /// A 5 x 4 matrix from unsorted triplets with a repeat, which sprs sums.
    fn matrix() -> CsMat<f64> {
        let mut t = TriMat::new((5, 4));
        for (i, j, v) in [
            (4, 0, 1.0),
            (0, 3, 2.0),
            (2, 1, 3.0),
            (0, 3, 0.5),
            (2, 2, -1.0),
            (4, 3, 4.0),
        ] {
            t.add_triplet(i, j, v);
        }
        t.to_csr()
    }

    fn assert_reads_as_sprs(a: &Tensor, m: &CsMat<f64>) {
        for i in 0..m.rows() {
            for j in 0..m.cols() {
                let expected = m.get(i, j).copied().unwrap_or(0.0);
                assert_eq!(a.get(&[i as u64, j as u64]), Some(expected), "({i},{j})");
            }
        }
    }

    #[test]
    fn csr_and_csc_matrices_round_trip_through_tensors() {
        let m = matrix();
        assert_eq!(m.get(0, 3), Some(&2.5));
        let a = Tensor::from_sprs(&m).unwrap();
        assert_eq!(*a.format(), Format::csr());
        assert_reads_as_sprs(&a, &m);
        assert_eq!(a.to_sprs().unwrap(), m);
        let csc = m.to_csc();
        let b = Tensor::from_sprs(&csc).unwrap();
        assert_eq!(*b.format(), Format::csc());
        assert_reads_as_sprs(&b, &m);
        let back = b.to_sprs().unwrap();
        assert!(back.is_csc());
        assert_eq!(back, csc);
    }

    #[test]
    fn a_view_of_some_rows_converts_with_its_own_indptr() {
        let m = matrix();
        let rows = m.slice_outer(2..5);
        let a = Tensor::from_sprs(&rows).unwrap();
        assert_eq!(a.shape(), &[3, 4]);
        assert_eq!(a.get(&[0, 1]), Some(3.0));
        assert_eq!(a.get(&[2, 3]), Some(4.0));
        // Rows 2, 3 (empty) and 4 of the matrix; sprs's own `to_owned`
        // keeps the view's shifted indptr, so the expectation is built.
        let expected = CsMat::new((3, 4), vec![0, 2, 2, 4], vec![1, 2, 0, 3], vec![3.0, -1.0, 1.0, 4.0]);
        assert_eq!(a.to_sprs().unwrap(), expected);
    }

    #[test]
    fn other_formats_give_their_nonzeros_and_small_matrices_convert() {
        let m = matrix();
        let a = Tensor::from_sprs(&m).unwrap();
        for format in [Format::coo(2), Format::dia(), Format::ell(), Format::dense(2)] {
            assert_eq!(a.convert(&format).unwrap().to_sprs().unwrap(), m, "{format}");
        }
        let empty: CsMat<f64> = CsMat::zero((0, 0));
        assert_eq!(Tensor::from_sprs(&empty).unwrap().to_sprs().unwrap(), empty);
        let one = CsMat::new((1, 1), vec![0, 1], vec![0], vec![3.0]);
        let t = Tensor::from_sprs(&one).unwrap();
        assert_eq!(t.get(&[0, 0]), Some(3.0));
        assert_eq!(t.to_sprs().unwrap(), one);
        let vector = Tensor::from_dense(&[2], vec![1.0, 2.0]).unwrap();
        assert!(vector.to_sprs().unwrap_err().to_string().contains("hold a matrix"));
    }

    #[test]
    fn index_types_other_than_usize_convert() {
        let m: sprs::CsMatI<f64, i32> = sprs::CsMatI::new((2, 2), vec![0, 1, 2], vec![1, 0], vec![1.0, 2.0]);
        let a = Tensor::from_sprs(&m).unwrap();
        assert_eq!(a.get(&[0, 1]), Some(1.0));
        assert_eq!(a.get(&[1, 0]), Some(2.0));
    }
}

#[cfg(feature = "ndarray")]
mod with_ndarray {
    use super::*;
    use ndarray::{Array, ArrayD, Ix3, IxDyn};

    #[test]
    fn arrays_of_any_layout_become_dense_tensors_and_come_back() {
        // 2 x 3 x 4, then with its axes permuted: a non-standard layout.
        let a = Array::from_shape_fn((2, 3, 4), |(i, j, k)| (i * 100 + j * 10 + k) as f64);
        let p = a.view().permuted_axes([2, 0, 1]);
        let t = Tensor::from_ndarray(&p).unwrap();
        assert_eq!(t.shape(), &[4, 2, 3]);
        for ((k, i, j), &v) in p.indexed_iter() {
            assert_eq!(t.get(&[k as u64, i as u64, j as u64]), Some(v));
        }
        let back = t.to_ndarray().unwrap().into_dimensionality::<Ix3>().unwrap();
        assert_eq!(back, p);
    }

    #[test]
    fn sparse_tensors_become_dense_arrays() {
        let a = Tensor::from_csr([3, 2], &[0, 1, 1, 3], &[1, 1, 0], &[5.0, 1.0, 2.0]).unwrap();
        for format in [Format::csr(), Format::csc(), Format::dia(), Format::coo(2)] {
            let dense = a.convert(&format).unwrap().to_ndarray().unwrap();
            assert_eq!(
                dense,
                ndarray::array![[0.0, 5.0], [0.0, 0.0], [2.0, 1.0]].into_dyn(),
                "{format}"
            );
        }
    }

    #[test]
    fn scalars_and_empty_arrays_convert() {
        let s = ArrayD::from_elem(IxDyn(&[]), 4.5);
        let t = Tensor::from_ndarray(&s).unwrap();
        assert_eq!(t.order(), 0);
        assert_eq!(t.to_ndarray().unwrap(), s);
        let empty = Array::<f64, _>::zeros((0, 3));
        let t = Tensor::from_ndarray(&empty).unwrap();
        assert_eq!(t.shape(), &[0, 3]);
        assert_eq!(t.to_ndarray().unwrap().shape(), &[0, 3]);
    }
}
