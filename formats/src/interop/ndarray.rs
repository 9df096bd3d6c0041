//! `ndarray` arrays in and out: an array of any dimension becomes a dense
//! tensor of its shape (components in logical row-major order, whatever
//! the array's memory layout), and any tensor becomes a dense array.

use ndarray::{ArrayBase, ArrayD, Data, Dimension, IxDyn};

use crate::error::{FormatError, Result};
use crate::tensor::Tensor;
use crate::value::Value;

impl<V: Value> Tensor<V> {
    /// A dense tensor of the array's shape and components (a 0-dimensional
    /// array is a scalar). Convert it to a sparse format with
    /// [`convert`](Self::convert).
    ///
    /// ```
    /// use tessera_formats::{Format, Tensor};
    /// let m = ndarray::array![[1.0, 0.0], [0.0, 2.0]];
    /// let a = Tensor::from_ndarray(&m.t()).unwrap(); // a transposed view
    /// assert_eq!(a.shape(), &[2, 2]);
    /// assert_eq!(a.get(&[1, 1]), Some(2.0));
    /// let csr = a.convert(&Format::csr()).unwrap();
    /// assert_eq!(csr.stored(), 2);
    /// ```
    pub fn from_ndarray<S, D>(array: &ArrayBase<S, D>) -> Result<Self>
    where
        S: Data<Elem = V>,
        D: Dimension,
    {
        let values: Vec<V> = array.iter().copied().collect();
        Tensor::from_dense(array.shape(), values)
    }

    /// Every component as a dense array of the tensor's shape (duplicates
    /// summed, unstored components zero), refused when the dense array
    /// would not fit in memory. `.into_dimensionality::<Ix2>()` makes it
    /// a matrix.
    ///
    /// ```
    /// use tessera_formats::Tensor;
    /// let a = Tensor::from_csr([2, 3], &[0, 1, 1], &[2], &[7.0]).unwrap();
    /// let m = a.to_ndarray().unwrap().into_dimensionality::<ndarray::Ix2>().unwrap();
    /// assert_eq!(m, ndarray::array![[0.0, 0.0, 7.0], [0.0, 0.0, 0.0]]);
    /// ```
    pub fn to_ndarray(&self) -> Result<ArrayD<V>> {
        let values = self.to_dense_vec()?;
        ArrayD::from_shape_vec(IxDyn(self.shape()), values)
            .map_err(|e| FormatError::Shape(format!("a dense array of shape {:?}: {e}", self.shape())))
    }
}
