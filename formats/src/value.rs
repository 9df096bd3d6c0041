//! The value type of tensor components: what packing, conversion and the
//! file readers need of it. [`typed`](crate::typed) says which types the
//! engine computes with.

use std::fmt::{Debug, Display};

/// A tensor component value.
pub trait Value: Copy + Default + PartialEq + Debug + Display + Send + Sync + 'static {
    /// The additive identity; stored in padding positions.
    fn zero() -> Self {
        Self::default()
    }
    /// Combines duplicates when packing.
    fn accumulate(self, other: Self) -> Self;
    fn is_zero(&self) -> bool {
        *self == Self::zero()
    }
    fn to_f64(self) -> f64;
    fn from_f64(v: f64) -> Self;
}

impl Value for f64 {
    fn accumulate(self, other: Self) -> Self {
        self + other
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(v: f64) -> Self {
        v
    }
}

impl Value for f32 {
    fn accumulate(self, other: Self) -> Self {
        self + other
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn from_f64(v: f64) -> Self {
        v as f32
    }
}

impl Value for i64 {
    fn accumulate(self, other: Self) -> Self {
        self.wrapping_add(other)
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(v: f64) -> Self {
        v as i64
    }
}

impl Value for bool {
    fn accumulate(self, other: Self) -> Self {
        self || other
    }
    fn to_f64(self) -> f64 {
        if self {
            1.0
        } else {
            0.0
        }
    }
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
}
