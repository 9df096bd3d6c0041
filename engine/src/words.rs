//! How a kernel adds the words its registers hold: `f64` addition for
//! floats and truth values, wrapping integer addition for integers held as
//! their bits ([`tessera_formats::Value::to_word`]). The output, its
//! workspace and the joining of parallel partials add through one
//! [`Adder`], so every tier's integer sums wrap the same way.

use tessera_formats::{Value, ValueType};

/// The addition of a kernel's output values.
///
/// ```
/// use tessera_engine::words::Adder;
/// use tessera_formats::{Value, ValueType};
/// assert_eq!(Adder::of(ValueType::F64).add(0.5, 0.25), 0.75);
/// let sum = Adder::of(ValueType::I32).add(i32::MAX.to_word(), 1i32.to_word());
/// assert_eq!(i32::from_word(sum), i32::MIN);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Adder {
    #[default]
    Float,
    I64,
    I32,
}

impl Adder {
    /// The addition of values of type `ty`.
    pub fn of(ty: ValueType) -> Adder {
        match ty {
            ValueType::I64 => Adder::I64,
            ValueType::I32 => Adder::I32,
            _ => Adder::Float,
        }
    }

    /// `a + b`.
    #[inline(always)]
    pub fn add(self, a: f64, b: f64) -> f64 {
        match self {
            Adder::Float => a + b,
            Adder::I64 => i64::from_word(a).wrapping_add(i64::from_word(b)).to_word(),
            Adder::I32 => i32::from_word(a).wrapping_add(i32::from_word(b)).to_word(),
        }
    }

    /// `*acc += value`.
    #[inline(always)]
    pub fn add_to(self, acc: &mut f64, value: f64) {
        *acc = self.add(*acc, value);
    }
}
