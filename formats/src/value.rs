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
    /// The 64 bits an engine register holds for this value: the value
    /// itself for floats and truth values, the two's-complement bits of
    /// integers (sign-extended to 64), so that no integer is rounded.
    ///
    /// ```
    /// use tessera_formats::Value;
    /// assert_eq!(2.5f64.to_word(), 2.5);
    /// assert_eq!(i64::from_word((-3i32).to_word()), -3);
    /// assert_eq!(i64::from_word(i64::MAX.to_word()), i64::MAX);
    /// ```
    fn to_word(self) -> f64 {
        self.to_f64()
    }
    /// The value a register's 64 bits hold ([`Value::to_word`] undone).
    fn from_word(word: f64) -> Self {
        Self::from_f64(word)
    }
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
    fn to_word(self) -> f64 {
        f64::from_bits(self as u64)
    }
    fn from_word(word: f64) -> Self {
        word.to_bits() as i64
    }
}

impl Value for i32 {
    fn accumulate(self, other: Self) -> Self {
        self.wrapping_add(other)
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn from_f64(v: f64) -> Self {
        v as i32
    }
    fn to_word(self) -> f64 {
        f64::from_bits(i64::from(self) as u64)
    }
    fn from_word(word: f64) -> Self {
        word.to_bits() as i64 as i32
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

/// A complex value (`c64`): its real part is its number in `f64`. The
/// engine computes with its real and imaginary parts as two `f64` values
/// each, so no register holds one whole.
impl Value for num_complex::Complex64 {
    fn accumulate(self, other: Self) -> Self {
        self + other
    }
    fn to_f64(self) -> f64 {
        self.re
    }
    fn from_f64(v: f64) -> Self {
        num_complex::Complex64::new(v, 0.0)
    }
}
