//! Tensors whose value type is known at run time: what files, the command
//! line and the engine's inputs hand around when a tensor may hold `f64`,
//! `f32`, `i64`, `i32`, `bool` or complex (`c64`) values.
//!
//! [`AnyTensor`] owns one; [`TensorRef`] borrows one. Both answer the
//! questions that do not depend on the value type (shape, format, levels,
//! version) directly, and give the values as [`ValueSlice`].

use std::fmt;

pub use num_complex::Complex64;

use crate::{Format, LevelStorage, Result, Tensor, Value, Version};

/// The value type of a tensor's components.
///
/// ```
/// use tessera_formats::typed::ValueType;
/// assert_eq!("f32".parse::<ValueType>().unwrap(), ValueType::F32);
/// assert_eq!(ValueType::Bool.to_string(), "bool");
/// assert!(ValueType::I32.is_integer());
/// assert!("i128".parse::<ValueType>().unwrap_err().contains("f64, f32, i64, i32, bool, c64"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum ValueType {
    #[default]
    F64,
    F32,
    I64,
    I32,
    Bool,
    /// Complex numbers of two `f64` parts.
    C64,
}

/// Every value type, in the order messages list them.
pub const VALUE_TYPES: [ValueType; 6] = [
    ValueType::F64,
    ValueType::F32,
    ValueType::I64,
    ValueType::I32,
    ValueType::Bool,
    ValueType::C64,
];

impl ValueType {
    /// The name it is written with (`-t A:f32`, `f32(...)`).
    pub fn name(self) -> &'static str {
        match self {
            ValueType::F64 => "f64",
            ValueType::F32 => "f32",
            ValueType::I64 => "i64",
            ValueType::I32 => "i32",
            ValueType::Bool => "bool",
            ValueType::C64 => "c64",
        }
    }

    /// Whether it is `i64` or `i32`: values the engine's registers hold as
    /// their bits ([`Value::to_word`]), computed with wrapping arithmetic.
    pub fn is_integer(self) -> bool {
        matches!(self, ValueType::I64 | ValueType::I32)
    }

    /// Bytes one value takes.
    pub fn size(self) -> usize {
        match self {
            ValueType::F64 => 8,
            ValueType::F32 | ValueType::I32 => 4,
            ValueType::I64 => 8,
            ValueType::Bool => 1,
            ValueType::C64 => 16,
        }
    }

    /// `v` as a value of this type, back in `f64`: the rounding (or the
    /// truth) every tier applies where a value is stored or cast. Integers
    /// are truncated toward zero and saturate at the type's bounds (NaN is
    /// 0), as Rust's `as` does.
    pub fn round(self, v: f64) -> f64 {
        match self {
            ValueType::F64 => v,
            ValueType::F32 => f64::from(v as f32),
            ValueType::I64 => v as i64 as f64,
            ValueType::I32 => f64::from(v as i32),
            ValueType::Bool => f64::from(u8::from(v != 0.0)),
            ValueType::C64 => v,
        }
    }

    /// The register word ([`Value::to_word`]) of `v`, a number in `f64`,
    /// as this type: [`round`](Self::round) for floats and truth values,
    /// the bits of the truncated, saturated integer for integers.
    ///
    /// ```
    /// use tessera_formats::typed::ValueType;
    /// assert_eq!(ValueType::I32.word(-2.7).to_bits() as i64, -2);
    /// assert_eq!(ValueType::I32.word(1e10).to_bits() as i64, i64::from(i32::MAX));
    /// assert_eq!(ValueType::F32.word(0.1), f64::from(0.1f32));
    /// ```
    pub fn word(self, v: f64) -> f64 {
        match self {
            ValueType::I64 => (v as i64).to_word(),
            ValueType::I32 => (v as i32).to_word(),
            other => other.round(v),
        }
    }

    /// The number a register word of this type holds, in `f64` (rounded
    /// to the nearest `f64` for integers beyond 2^53).
    pub fn number(self, word: f64) -> f64 {
        if self.is_integer() {
            i64::from_word(word) as f64
        } else {
            word
        }
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ValueType {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        VALUE_TYPES.into_iter().find(|t| t.name() == s).ok_or_else(|| {
            let names: Vec<&str> = VALUE_TYPES.iter().map(|t| t.name()).collect();
            format!("unknown value type {s:?} (the value types are {})", names.join(", "))
        })
    }
}

/// A value type tensors may hold at run time: `f64`, `f32`, `i64`, `i32`
/// or `bool`.
pub trait Typed: Value {
    const TYPE: ValueType;
    /// The values of a tensor of this type, typed at run time.
    fn slice(values: &[Self]) -> ValueSlice<'_>;
    /// A tensor of this type, typed at run time.
    fn tensor_ref(tensor: &Tensor<Self>) -> TensorRef<'_>;
}

/// `Typed` for a value type, and conversions of its tensors into the
/// run-time typed ones.
macro_rules! typed {
    ($value:ty, $variant:ident) => {
        impl Typed for $value {
            const TYPE: ValueType = ValueType::$variant;
            fn slice(values: &[Self]) -> ValueSlice<'_> {
                ValueSlice::$variant(values)
            }
            fn tensor_ref(tensor: &Tensor<Self>) -> TensorRef<'_> {
                TensorRef::$variant(tensor)
            }
        }
        impl From<Tensor<$value>> for AnyTensor {
            fn from(t: Tensor<$value>) -> Self {
                AnyTensor::$variant(t)
            }
        }
        impl<'a> From<&'a Tensor<$value>> for TensorRef<'a> {
            fn from(t: &'a Tensor<$value>) -> Self {
                TensorRef::$variant(t)
            }
        }
    };
}

typed!(f64, F64);
typed!(f32, F32);
typed!(i64, I64);
typed!(i32, I32);
typed!(bool, Bool);
typed!(Complex64, C64);

/// Applies `$body` to what any variant of `$value` holds (a tensor or
/// values), bound as `$t`.
macro_rules! each_type {
    ($enum:ident, $value:expr, $t:ident => $body:expr) => {
        match $value {
            $enum::F64($t) => $body,
            $enum::F32($t) => $body,
            $enum::I64($t) => $body,
            $enum::I32($t) => $body,
            $enum::Bool($t) => $body,
            $enum::C64($t) => $body,
        }
    };
}

/// A tensor's values, typed at run time.
#[derive(Clone, Copy, Debug)]
pub enum ValueSlice<'a> {
    F64(&'a [f64]),
    F32(&'a [f32]),
    I64(&'a [i64]),
    I32(&'a [i32]),
    Bool(&'a [bool]),
    C64(&'a [Complex64]),
}

impl ValueSlice<'_> {
    pub fn value_type(&self) -> ValueType {
        match self {
            ValueSlice::F64(_) => ValueType::F64,
            ValueSlice::F32(_) => ValueType::F32,
            ValueSlice::I64(_) => ValueType::I64,
            ValueSlice::I32(_) => ValueType::I32,
            ValueSlice::Bool(_) => ValueType::Bool,
            ValueSlice::C64(_) => ValueType::C64,
        }
    }
    pub fn len(&self) -> usize {
        each_type!(ValueSlice, self, v => v.len())
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The address of the first value, for compiled kernels.
    pub fn as_ptr(&self) -> *const u8 {
        each_type!(ValueSlice, self, v => v.as_ptr().cast())
    }
    /// Every value in `f64` (exactly, but for integers beyond 2^53).
    pub fn to_f64_vec(&self) -> Vec<f64> {
        each_type!(ValueSlice, self, v => v.iter().map(|x| x.to_f64()).collect())
    }
    /// Every value as the word a register holds ([`Value::to_word`]).
    pub fn to_words(&self) -> Vec<f64> {
        each_type!(ValueSlice, self, v => v.iter().map(|x| x.to_word()).collect())
    }
    /// Value `k` in `f64`.
    pub fn get(&self, k: usize) -> f64 {
        each_type!(ValueSlice, self, v => v[k].to_f64())
    }
}

/// A tensor of any value type, owned.
///
/// ```
/// use tessera_formats::typed::{AnyTensor, ValueType};
/// use tessera_formats::Tensor;
/// let x = AnyTensor::from(Tensor::from_dense(&[3], vec![1.5f32, 0.0, 2.0]).unwrap());
/// assert_eq!(x.value_type(), ValueType::F32);
/// assert_eq!(x.to_f64().values(), &[1.5, 0.0, 2.0]);
/// let b = AnyTensor::narrowed(x.to_f64(), ValueType::Bool);
/// assert_eq!(b.to_f64().values(), &[1.0, 0.0, 1.0]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum AnyTensor {
    F64(Tensor<f64>),
    F32(Tensor<f32>),
    I64(Tensor<i64>),
    I32(Tensor<i32>),
    Bool(Tensor<bool>),
    C64(Tensor<Complex64>),
}

impl AnyTensor {
    /// The same tensor with its values (and fill) rounded to `ty`: a
    /// computed `f64` result as the type its statement gives.
    pub fn narrowed(t: Tensor<f64>, ty: ValueType) -> AnyTensor {
        match ty {
            ValueType::F64 => AnyTensor::F64(t),
            ValueType::F32 => AnyTensor::F32(t.map_values(|v| v as f32)),
            ValueType::I64 => AnyTensor::I64(t.map_values(|v| v as i64)),
            ValueType::I32 => AnyTensor::I32(t.map_values(|v| v as i32)),
            ValueType::Bool => AnyTensor::Bool(t.map_values(|v| v != 0.0)),
            ValueType::C64 => AnyTensor::C64(t.map_values(Complex64::from)),
        }
    }
    /// A computed result whose values (and fill) are register words
    /// ([`Value::to_word`]) as a tensor of type `ty`: integers from their
    /// bits, the other types as [`narrowed`](Self::narrowed).
    ///
    /// ```
    /// use tessera_formats::typed::{AnyTensor, ValueType};
    /// use tessera_formats::{Tensor, Value};
    /// let words = Tensor::from_dense(&[2], vec![(-5i64).to_word(), i64::MAX.to_word()]).unwrap();
    /// let AnyTensor::I64(t) = AnyTensor::from_words(words, ValueType::I64) else { panic!() };
    /// assert_eq!(t.values(), &[-5, i64::MAX]);
    /// ```
    pub fn from_words(t: Tensor<f64>, ty: ValueType) -> AnyTensor {
        match ty {
            ValueType::I64 => AnyTensor::I64(t.map_values(i64::from_word)),
            ValueType::I32 => AnyTensor::I32(t.map_values(i32::from_word)),
            other => AnyTensor::narrowed(t, other),
        }
    }
    /// The tensor borrowed.
    pub fn as_ref(&self) -> TensorRef<'_> {
        each_type!(AnyTensor, self, t => TensorRef::from(t))
    }
    pub fn value_type(&self) -> ValueType {
        self.as_ref().value_type()
    }
    pub fn shape(&self) -> &[usize] {
        each_type!(AnyTensor, self, t => t.shape())
    }
    pub fn format(&self) -> &Format {
        each_type!(AnyTensor, self, t => t.format())
    }
    /// The values in `f64` (exactly: every `f32`, `i32` and `bool` is
    /// one, and every `i64` up to 2^53).
    pub fn to_f64(&self) -> Tensor<f64> {
        self.as_ref().to_f64()
    }
    /// The values in `f64`, borrowed for an `f64` tensor.
    pub fn as_f64(&self) -> std::borrow::Cow<'_, Tensor<f64>> {
        match self {
            AnyTensor::F64(t) => std::borrow::Cow::Borrowed(t),
            other => std::borrow::Cow::Owned(other.to_f64()),
        }
    }
    pub fn order(&self) -> usize {
        self.shape().len()
    }
    /// Number of stored values (including explicit zeros and padding).
    pub fn stored(&self) -> usize {
        self.as_ref().stored()
    }
    /// The fill, in `f64`.
    pub fn fill(&self) -> f64 {
        self.as_ref().fill()
    }
    /// [`to_f64`](Self::to_f64), without a copy for `f64` tensors.
    pub fn into_f64(self) -> Tensor<f64> {
        match self {
            AnyTensor::F64(t) => t,
            other => other.to_f64(),
        }
    }
    /// The same tensor in another format.
    pub fn convert(&self, format: &Format) -> Result<AnyTensor> {
        Ok(each_type!(AnyTensor, self, t => AnyTensor::from(t.convert(format)?)))
    }
    /// The tensor with `fill` (given in `f64`, rounded to its type) as the
    /// value of every component it does not store.
    pub fn with_fill(self, fill: f64) -> Result<AnyTensor> {
        Ok(match self {
            AnyTensor::F64(t) => AnyTensor::F64(t.with_fill(fill)?),
            AnyTensor::F32(t) => AnyTensor::F32(t.with_fill(fill as f32)?),
            AnyTensor::I64(t) => AnyTensor::I64(t.with_fill(fill as i64)?),
            AnyTensor::I32(t) => AnyTensor::I32(t.with_fill(fill as i32)?),
            AnyTensor::Bool(t) => AnyTensor::Bool(t.with_fill(fill != 0.0)?),
            AnyTensor::C64(t) => AnyTensor::C64(t.with_fill(Complex64::from(fill))?),
        })
    }
}

/// A complex tensor's real and imaginary parts: two `f64` tensors stored
/// as it is (the same levels), which is how the engine computes with it.
///
/// ```
/// use tessera_formats::typed::{complex_parts, Complex64};
/// use tessera_formats::Tensor;
/// let z = Tensor::from_dense(&[2], vec![Complex64::new(1.0, -2.0), Complex64::new(0.5, 0.0)]).unwrap();
/// let (re, im) = complex_parts(&z);
/// assert_eq!((re.values(), im.values()), (&[1.0, 0.5][..], &[-2.0, 0.0][..]));
/// ```
pub fn complex_parts(z: &Tensor<Complex64>) -> (Tensor<f64>, Tensor<f64>) {
    (z.map_values(|v| v.re), z.map_values(|v| v.im))
}

/// A tensor of any value type, borrowed.
#[derive(Clone, Copy, Debug)]
pub enum TensorRef<'a> {
    F64(&'a Tensor<f64>),
    F32(&'a Tensor<f32>),
    I64(&'a Tensor<i64>),
    I32(&'a Tensor<i32>),
    Bool(&'a Tensor<bool>),
    C64(&'a Tensor<Complex64>),
}

impl<'a> TensorRef<'a> {
    pub fn value_type(&self) -> ValueType {
        match self {
            TensorRef::F64(_) => ValueType::F64,
            TensorRef::F32(_) => ValueType::F32,
            TensorRef::I64(_) => ValueType::I64,
            TensorRef::I32(_) => ValueType::I32,
            TensorRef::Bool(_) => ValueType::Bool,
            TensorRef::C64(_) => ValueType::C64,
        }
    }
    pub fn shape(&self) -> &'a [usize] {
        each_type!(TensorRef, *self, t => t.shape())
    }
    pub fn format(&self) -> &'a Format {
        each_type!(TensorRef, *self, t => t.format())
    }
    pub fn levels(&self) -> &'a [LevelStorage] {
        each_type!(TensorRef, *self, t => t.levels())
    }
    pub fn level(&self, k: usize) -> &'a LevelStorage {
        each_type!(TensorRef, *self, t => t.level(k))
    }
    pub fn level_sizes(&self) -> &'a [usize] {
        each_type!(TensorRef, *self, t => t.level_sizes())
    }
    pub fn version(&self) -> Version {
        each_type!(TensorRef, *self, t => t.version())
    }
    pub fn stored(&self) -> usize {
        each_type!(TensorRef, *self, t => t.stored())
    }
    /// The fill, in `f64`.
    pub fn fill(&self) -> f64 {
        each_type!(TensorRef, *self, t => t.fill().to_f64())
    }
    /// The fill as the word a register holds ([`Value::to_word`]).
    pub fn fill_word(&self) -> f64 {
        each_type!(TensorRef, *self, t => t.fill().to_word())
    }
    /// The tensor with every value (and the fill) as the word a register
    /// holds ([`Value::to_word`]): what the interpreter and the reference
    /// evaluator compute on.
    pub fn to_words(&self) -> Tensor<f64> {
        each_type!(TensorRef, *self, t => t.map_values(Value::to_word))
    }
    pub fn values(&self) -> ValueSlice<'a> {
        each_type!(TensorRef, *self, t => Typed::slice(t.values()))
    }
    /// The values in `f64` (exactly but for `i64` beyond 2^53).
    pub fn to_f64(&self) -> Tensor<f64> {
        each_type!(TensorRef, *self, t => t.map_values(Value::to_f64))
    }
    /// A tensor in `format` storing what this one stores, with `values`
    /// ([`Tensor::on_pattern_of`]).
    pub fn on_pattern(&self, shape: &[usize], format: Format, values: Vec<f64>) -> Result<Tensor<f64>> {
        each_type!(TensorRef, *self, t => Tensor::on_pattern_of(t, shape, format, values))
    }
    /// The same tensor in another format.
    pub fn convert(&self, format: &Format) -> Result<AnyTensor> {
        Ok(each_type!(TensorRef, *self, t => AnyTensor::from(t.convert(format)?)))
    }
}

impl<'a> From<&'a AnyTensor> for TensorRef<'a> {
    fn from(t: &'a AnyTensor) -> Self {
        t.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CoordinateList;

    #[test]
    fn narrowing_rounds_values_and_fill_and_keeps_the_structure() {
        let mut entries = CoordinateList::new(&[2, 3]);
        entries.push(&[0, 2], 0.1).unwrap();
        entries.push(&[1, 0], -3.0).unwrap();
        let t = Tensor::pack(&entries, Format::csr()).unwrap().with_fill(2.5).unwrap();
        let f = AnyTensor::narrowed(t.clone(), ValueType::F32);
        let AnyTensor::F32(f32s) = &f else { panic!("not f32") };
        assert_eq!(f32s.values(), &[0.1f32, -3.0]);
        assert_eq!(f32s.fill(), 2.5f32);
        assert_eq!(f32s.levels(), t.levels());
        assert_eq!(f.to_f64().values(), &[f64::from(0.1f32), -3.0]);
        let b = AnyTensor::narrowed(t, ValueType::Bool);
        assert_eq!(b.to_f64().values(), &[1.0, 1.0]);
        assert_eq!(b.as_ref().fill(), 1.0);
    }

    #[test]
    fn rounding_matches_storing() {
        for v in [0.1, -7.25, 1e40, f64::NAN, 0.0, -0.0, 3.0] {
            let r = ValueType::F32.round(v);
            assert!(r.to_bits() == f64::from(v as f32).to_bits(), "{v}");
            assert_eq!(ValueType::Bool.round(v), f64::from(u8::from(v != 0.0)));
        }
    }
}
