//! Conversions between tensors and other crates' arrays, each behind the
//! cargo feature of its crate: `sprs` (compressed sparse matrices,
//! `Tensor::from_sprs`, `Tensor::to_sprs`) and `ndarray` (dense arrays of
//! any dimension, `Tensor::from_ndarray`, `Tensor::to_ndarray`). They take
//! the other crate's type and give a tensor, or the reverse; the arrays of
//! a tensor built here are validated like any other's.

#[cfg(feature = "ndarray")]
mod ndarray;
#[cfg(feature = "sprs")]
mod sprs;
