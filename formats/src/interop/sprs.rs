//! `sprs` matrices in and out, through the raw compressed arrays
//! ([`crate::raw`]): a CSR matrix becomes a CSR tensor, a CSC one a CSC
//! tensor, and back.

use std::ops::Deref;

use sprs::{CompressedStorage, CsMatBase, CsMatI, SpIndex};

use crate::error::{FormatError, Result};
use crate::raw::Compression;
use crate::tensor::Tensor;
use crate::value::Value;

impl<V: Value> Tensor<V> {
    /// A tensor from an `sprs` matrix (owned or a view, any index types):
    /// CSR in [`Format::csr`](crate::Format::csr), CSC in
    /// [`Format::csc`](crate::Format::csc), explicit zeros kept.
    ///
    /// ```
    /// use tessera_formats::{Format, Tensor};
    /// let m = sprs::CsMat::new((2, 3), vec![0, 1, 2], vec![2, 0], vec![5.0, 6.0]);
    /// let a = Tensor::from_sprs(&m).unwrap();
    /// assert_eq!(*a.format(), Format::csr());
    /// assert_eq!(a.get(&[0, 2]), Some(5.0));
    /// assert_eq!(a.get(&[1, 0]), Some(6.0));
    /// ```
    pub fn from_sprs<I, Iptr, IptrStorage, IndStorage, DataStorage>(
        matrix: &CsMatBase<V, I, IptrStorage, IndStorage, DataStorage, Iptr>,
    ) -> Result<Self>
    where
        I: SpIndex,
        Iptr: SpIndex,
        IptrStorage: Deref<Target = [Iptr]>,
        IndStorage: Deref<Target = [I]>,
        DataStorage: Deref<Target = [V]>,
    {
        let compression = match matrix.storage() {
            CompressedStorage::CSR => Compression::Rows,
            CompressedStorage::CSC => Compression::Columns,
        };
        // A view of some rows of a larger matrix has an indptr that does
        // not start at 0: `to_proper` shifts it.
        let indptr = unsigned(compression, "indptr", &matrix.indptr().to_proper())?;
        let indices = unsigned(compression, "indices", matrix.indices())?;
        Tensor::from_compressed(
            compression,
            [matrix.rows(), matrix.cols()],
            &indptr,
            &indices,
            matrix.data(),
        )
    }

    /// The matrix as an `sprs` matrix: CSC for a tensor stored in
    /// [`Format::csc`](crate::Format::csc) (its own arrays), CSR for any
    /// other (a CSR tensor's own arrays; other formats converted, their
    /// nonzeros). Refused for a tensor that is not a matrix.
    ///
    /// ```
    /// use tessera_formats::Tensor;
    /// let a = Tensor::from_dense(&[2, 2], vec![0.0, 1.0, 2.0, 0.0]).unwrap();
    /// let m = a.to_sprs().unwrap();
    /// assert!(m.is_csr());
    /// assert_eq!(m.get(1, 0), Some(&2.0));
    /// assert_eq!(m.nnz(), 2);
    /// ```
    pub fn to_sprs(&self) -> Result<CsMatI<V, usize>> {
        let compression = if *self.format() == Compression::Columns.format() {
            Compression::Columns
        } else {
            Compression::Rows
        };
        let arrays = self.to_compressed(compression)?;
        let to_usize = |v: Vec<u64>| -> Result<Vec<usize>> {
            v.into_iter()
                .map(|x| {
                    usize::try_from(x).map_err(|_| FormatError::TooLarge(format!("index {x} does not fit a usize")))
                })
                .collect()
        };
        let (indptr, indices) = (to_usize(arrays.indptr)?, to_usize(arrays.indices)?);
        let shape = (arrays.shape[0], arrays.shape[1]);
        let built = match compression {
            Compression::Rows => CsMatI::try_new(shape, indptr, indices, arrays.data),
            Compression::Columns => CsMatI::try_new_csc(shape, indptr, indices, arrays.data),
        };
        // The arrays of a valid CSR or CSC tensor are what sprs accepts.
        built.map_err(|(_, _, _, e)| FormatError::Arrays {
            layout: compression.layout(),
            reason: format!("sprs refused them: {e}"),
        })
    }
}

/// An sprs index array as `u64`, refusing negative elements.
fn unsigned<I: SpIndex>(compression: Compression, name: &str, values: &[I]) -> Result<Vec<u64>> {
    values
        .iter()
        .enumerate()
        .map(|(k, &v)| {
            v.try_index().map(|x| x as u64).ok_or_else(|| FormatError::Arrays {
                layout: compression.layout(),
                reason: format!("{name}[{k}] = {v:?} is negative"),
            })
        })
        .collect()
}
