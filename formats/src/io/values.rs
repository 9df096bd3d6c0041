//! The value types Matrix Market and FROSTT files are read into and written
//! from without rounding: `f64` (any real), `i64` and `i32` (integers,
//! exactly, also beyond the 2^53 up to which an `f64` holds every one), and
//! [`Complex64`] (`c64`: a real and an imaginary part, two value tokens).
//!
//! [`FileValue`] is what the readers ([`read_mtx_as`](super::read_mtx_as),
//! [`read_tns_as`](super::read_tns_as)) and the writers are generic over;
//! each type says here how a value token becomes one of its values (or why
//! it cannot), and how a value is written back.

use std::io::{self, Write};

use num_complex::Complex64;

use super::mtx::MtxField;
use super::text::{parse_i64, parse_integer_value, parse_real, show, write_real, IntError};
use crate::Value;

/// A value type the text readers and writers hold exactly: `f64`, `i64`,
/// `i32` or [`Complex64`].
///
/// An integer type reads an `integer` or `pattern` Matrix Market file
/// value for value, and a `real` one (or a FROSTT file) when every value
/// is integral (`2`, `-7`, `2.0`, `1e3`); a fraction, or a value beyond the
/// type's range, is an error naming the file and line. `Complex64` alone
/// reads the `complex` field (a real and an imaginary part per value), and
/// reads the other fields with imaginary parts 0.
///
/// ```
/// use tessera_formats::io::parse_mtx_as;
/// let text = b"%%MatrixMarket matrix coordinate integer general\n1 2 2\n1 1 9223372036854775807\n1 2 -3\n";
/// let file = parse_mtx_as::<i64>(text, "big.mtx".as_ref()).unwrap();
/// assert_eq!(file.entries.values(), &[i64::MAX, -3]);
/// let err = parse_mtx_as::<i32>(text, "big.mtx".as_ref()).unwrap_err().to_string();
/// assert!(err.starts_with("big.mtx:3: the value `9223372036854775807` is beyond the range of i32"), "{err}");
/// ```
pub trait FileValue: Value + sealed::Text {
    /// `v` as this type when it holds it exactly, the rule the readers
    /// apply to the values of a `real` file: any `f64` as itself; for `i64`
    /// and `i32`, an integral value within the type's range (`2.0` is 2,
    /// `0.5` and `inf` are `None`).
    ///
    /// ```
    /// use tessera_formats::io::FileValue;
    /// assert_eq!(i64::from_real(-4.0), Some(-4));
    /// assert_eq!(i64::from_real(0.5), None);
    /// assert_eq!(i32::from_real(3e9), None);
    /// assert_eq!(f64::from_real(0.5), Some(0.5));
    /// ```
    fn from_real(v: f64) -> Option<Self>;
}

impl FileValue for f64 {
    fn from_real(v: f64) -> Option<f64> {
        Some(v)
    }
}

impl FileValue for i64 {
    fn from_real(v: f64) -> Option<i64> {
        integral(v).ok()
    }
}

impl FileValue for i32 {
    fn from_real(v: f64) -> Option<i32> {
        integral(v).ok().and_then(|v| i32::try_from(v).ok())
    }
}

impl FileValue for Complex64 {
    fn from_real(v: f64) -> Option<Complex64> {
        Some(Complex64::new(v, 0.0))
    }
}

pub(crate) use sealed::{Refusal, Text};

/// What the readers and writers need of a value type, out of reach of
/// other crates: the file readers rely on each type's answers.
mod sealed {
    use super::*;

    /// Why a token is not a value of the type read.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Refusal {
        /// Not a number the file's field allows.
        NotANumber,
        /// A number with a fraction (or not finite), read as an integer type.
        NotIntegral,
        /// An integer beyond the type's range.
        OutOfRange,
    }

    pub trait Text: Sized {
        /// The type's name in messages.
        const NAME: &'static str;
        /// The smallest and largest values, in messages.
        const RANGE: &'static str;
        /// Whether values are complex: read from the `complex` field (two
        /// value tokens) and written as two numbers.
        const COMPLEX: bool = false;
        /// A value token of a Matrix Market file of `field` other than
        /// `complex` (FROSTT files read as `real`).
        fn parse(token: &[u8], field: MtxField) -> Result<Self, Refusal>;
        /// The two value tokens (real, imaginary) of a `complex` file;
        /// only types that are [`COMPLEX`](Self::COMPLEX) read them.
        fn parse_complex(_re: &[u8], _im: &[u8]) -> Result<Self, Refusal> {
            Err(Refusal::NotANumber)
        }
        /// `-self`, when the type holds it: the mirror image of an entry of
        /// a skew-symmetric matrix.
        fn negated(self) -> Option<Self>;
        /// The complex conjugate: the mirror image of an entry of a
        /// hermitian matrix (a real value is its own).
        fn conjugate(self) -> Self {
            self
        }
        /// Whether an `integer` Matrix Market file holds the value and
        /// reads it back as the same.
        fn fits_integer_field(self) -> bool;
        /// Writes the value so that reading it back gives the same.
        fn write_text<W: Write + ?Sized>(self, w: &mut W) -> io::Result<()>;
        /// Writes the value as an integer; only for values that
        /// [`fit_integer_field`](Self::fits_integer_field).
        fn write_integer<W: Write + ?Sized>(self, w: &mut W) -> io::Result<()>;
    }
}

/// Integers up to this magnitude are written as integers from `f64` (and
/// read back exactly, as `f64` holds every integer up to 2^53).
const LARGEST_EXACT_F64: f64 = (1u64 << 53) as f64;

impl Text for f64 {
    const NAME: &'static str = "f64";
    const RANGE: &'static str = "any real";
    #[inline(always)]
    fn parse(token: &[u8], field: MtxField) -> Result<f64, Refusal> {
        let value = match field {
            MtxField::Integer => parse_integer_value(token),
            _ => parse_real(token),
        };
        value.ok_or(Refusal::NotANumber)
    }
    fn negated(self) -> Option<f64> {
        Some(-self)
    }
    fn fits_integer_field(self) -> bool {
        self.fract() == 0.0 && self.abs() <= LARGEST_EXACT_F64
    }
    fn write_text<W: Write + ?Sized>(self, w: &mut W) -> io::Result<()> {
        write_real(w, self)
    }
    fn write_integer<W: Write + ?Sized>(self, w: &mut W) -> io::Result<()> {
        debug_assert!(self.fits_integer_field());
        // An integer within ±2^53: the cast is exact.
        write!(w, "{}", self as i64)
    }
}

/// `Text` for an integer type: digits parsed as `i64`, then kept when
/// the type holds them; written as digits.
macro_rules! integer_text {
    ($t:ty, $name:literal, $range:literal) => {
        impl Text for $t {
            const NAME: &'static str = $name;
            const RANGE: &'static str = $range;
            #[inline(always)]
            fn parse(token: &[u8], field: MtxField) -> Result<$t, Refusal> {
                <$t>::try_from(parse_integral(token, field)?).map_err(|_| Refusal::OutOfRange)
            }
            fn negated(self) -> Option<$t> {
                self.checked_neg()
            }
            fn fits_integer_field(self) -> bool {
                true
            }
            fn write_text<W: Write + ?Sized>(self, w: &mut W) -> io::Result<()> {
                write!(w, "{self}")
            }
            fn write_integer<W: Write + ?Sized>(self, w: &mut W) -> io::Result<()> {
                write!(w, "{self}")
            }
        }
    };
}

integer_text!(i64, "i64", "-9223372036854775808 to 9223372036854775807");
integer_text!(i32, "i32", "-2147483648 to 2147483647");

impl Text for Complex64 {
    const NAME: &'static str = "c64";
    const RANGE: &'static str = "any complex number";
    const COMPLEX: bool = true;
    /// A `real`, `integer` (or FROSTT) value: the real part, the imaginary
    /// part 0.
    #[inline(always)]
    fn parse(token: &[u8], field: MtxField) -> Result<Complex64, Refusal> {
        match field {
            // Two tokens, read by `parse_complex`.
            MtxField::Complex => Err(Refusal::NotANumber),
            field => f64::parse(token, field).map(Complex64::from),
        }
    }
    #[inline(always)]
    fn parse_complex(re: &[u8], im: &[u8]) -> Result<Complex64, Refusal> {
        match (parse_real(re), parse_real(im)) {
            (Some(re), Some(im)) => Ok(Complex64::new(re, im)),
            _ => Err(Refusal::NotANumber),
        }
    }
    fn negated(self) -> Option<Complex64> {
        Some(-self)
    }
    fn conjugate(self) -> Complex64 {
        self.conj()
    }
    fn fits_integer_field(self) -> bool {
        // Written in the `complex` field only.
        false
    }
    /// The real part, a space and the imaginary part, each as an `f64` is
    /// written: two value tokens.
    fn write_text<W: Write + ?Sized>(self, w: &mut W) -> io::Result<()> {
        write_real(w, self.re)?;
        w.write_all(b" ")?;
        write_real(w, self.im)
    }
    fn write_integer<W: Write + ?Sized>(self, w: &mut W) -> io::Result<()> {
        debug_assert!(false, "c64 values are never written as integers");
        self.write_text(w)
    }
}

/// The value of an entry line's value tokens: the first alone, or both
/// (real and imaginary parts) in a `complex` file.
#[inline(always)]
pub(crate) fn parse_tokens<V: Text>(tokens: [&[u8]; 2], field: MtxField) -> Result<V, Refusal> {
    match field {
        MtxField::Complex => V::parse_complex(tokens[0], tokens[1]),
        field => V::parse(tokens[0], field),
    }
}

/// Why the value tokens of a `complex` entry (real, imaginary) are not a
/// complex value, for an error message: the first that is not a number.
#[cold]
pub(crate) fn complex_refusal_text(tokens: [&[u8]; 2]) -> String {
    let (part, token) = match parse_real(tokens[0]) {
        None => ("real", tokens[0]),
        Some(_) => ("imaginary", tokens[1]),
    };
    format!(
        "expected the {part} part of a complex value, a number, found {}",
        show(token)
    )
}

/// An integer value token, exactly: digits with an optional sign, or, in
/// a file whose field is not `integer`, any real that is integral (`2.0`,
/// `1e3`), which is exact, as every `f64` beyond 2^53 is an integer.
#[inline(always)]
fn parse_integral(token: &[u8], field: MtxField) -> Result<i64, Refusal> {
    match parse_i64(token) {
        Ok(v) => Ok(v),
        Err(IntError::Overflow) => Err(Refusal::OutOfRange),
        Err(IntError::NotANumber) if field == MtxField::Integer => Err(Refusal::NotANumber),
        Err(IntError::NotANumber) => integral(parse_real(token).ok_or(Refusal::NotANumber)?),
    }
}

/// A real holding an integer, as one.
fn integral(v: f64) -> Result<i64, Refusal> {
    // 2^63: every `f64` in [-2^63, 2^63) converts to `i64` exactly.
    const BOUND: f64 = 9_223_372_036_854_775_808.0;
    if v.fract() != 0.0 {
        // Also NaN and the infinities, whose fraction is NaN.
        Err(Refusal::NotIntegral)
    } else if (-BOUND..BOUND).contains(&v) {
        Ok(v as i64)
    } else {
        Err(Refusal::OutOfRange)
    }
}

/// Why `token` is not a value of type `V`, for an error message;
/// `not_a_number` says what the reader expected when it is no number it
/// reads at all.
#[cold]
pub(crate) fn refusal_text<V: Text>(refusal: Refusal, token: &[u8], not_a_number: impl FnOnce() -> String) -> String {
    match refusal {
        Refusal::NotANumber => not_a_number(),
        Refusal::NotIntegral => format!(
            "the value {} is not an integer, and the values are read as {}",
            show(token),
            V::NAME
        ),
        Refusal::OutOfRange => format!(
            "the value {} is beyond the range of {} ({})",
            show(token),
            V::NAME,
            V::RANGE
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_read_exactly_and_reals_only_when_integral() {
        assert_eq!(i64::parse(b"9223372036854775807", MtxField::Integer), Ok(i64::MAX));
        assert_eq!(i64::parse(b"-9223372036854775808", MtxField::Real), Ok(i64::MIN));
        assert_eq!(
            i64::parse(b"9223372036854775808", MtxField::Integer),
            Err(Refusal::OutOfRange)
        );
        assert_eq!(i64::parse(b"2.0", MtxField::Real), Ok(2));
        assert_eq!(i64::parse(b"-1e3", MtxField::Real), Ok(-1000));
        assert_eq!(i64::parse(b"2.0", MtxField::Integer), Err(Refusal::NotANumber));
        assert_eq!(i64::parse(b"2.5", MtxField::Real), Err(Refusal::NotIntegral));
        assert_eq!(i64::parse(b"inf", MtxField::Real), Err(Refusal::NotIntegral));
        assert_eq!(i64::parse(b"nan", MtxField::Real), Err(Refusal::NotIntegral));
        assert_eq!(i64::parse(b"1e19", MtxField::Real), Err(Refusal::OutOfRange));
        assert_eq!(i64::parse(b"-9.223372036854775808e18", MtxField::Real), Ok(i64::MIN));
        assert_eq!(i64::parse(b"x", MtxField::Real), Err(Refusal::NotANumber));
        assert_eq!(i32::parse(b"-2147483648", MtxField::Integer), Ok(i32::MIN));
        assert_eq!(i32::parse(b"2147483648", MtxField::Integer), Err(Refusal::OutOfRange));
        assert_eq!(i32::parse(b"3e9", MtxField::Real), Err(Refusal::OutOfRange));
        assert_eq!(f64::parse(b"2.5", MtxField::Real), Ok(2.5));
        assert_eq!(f64::parse(b"2.5", MtxField::Integer), Err(Refusal::NotANumber));
    }

    #[test]
    fn written_values_read_back_the_same() {
        for v in [i64::MAX, i64::MIN, 0, -1, (1 << 53) + 1] {
            let mut out = Vec::new();
            v.write_text(&mut out).unwrap();
            assert_eq!(i64::parse(&out, MtxField::Integer), Ok(v));
        }
        let mut out = Vec::new();
        (-3.0f64).write_integer(&mut out).unwrap();
        assert_eq!(out, b"-3");
        assert!(!((1u64 << 53) as f64 * 2.0).fits_integer_field());
        assert_eq!(i32::MIN.negated(), None);
        assert_eq!(i64::MIN.negated(), None);
    }

    #[test]
    fn complex_values_read_two_tokens_and_write_two_numbers() {
        let z = Complex64::new(1.5, -2.0);
        assert_eq!(Complex64::parse_complex(b"1.5", b"-2"), Ok(z));
        assert_eq!(Complex64::parse_complex(b"1.5", b"i"), Err(Refusal::NotANumber));
        assert_eq!(Complex64::parse(b"3", MtxField::Integer), Ok(Complex64::new(3.0, 0.0)));
        assert_eq!(Complex64::parse(b"3.5", MtxField::Integer), Err(Refusal::NotANumber));
        assert_eq!(
            parse_tokens::<Complex64>([b"0", b"1e-300"], MtxField::Complex),
            Ok(Complex64::new(0.0, 1e-300))
        );
        assert_eq!(
            parse_tokens::<f64>([b"2", b""], MtxField::Complex),
            Err(Refusal::NotANumber)
        );
        assert_eq!(z.conjugate(), Complex64::new(1.5, 2.0));
        assert_eq!(2.5f64.conjugate(), 2.5);
        let mut out = Vec::new();
        z.write_text(&mut out).unwrap();
        assert_eq!(out, b"1.5 -2");
        assert!(!z.fits_integer_field());
        assert_eq!(
            complex_refusal_text([b"1", b"2j"]),
            "expected the imaginary part of a complex value, a number, found `2j`"
        );
    }

    #[test]
    fn refusals_say_the_value_and_the_type() {
        let text = refusal_text::<i32>(Refusal::OutOfRange, b"3000000000", String::new);
        assert_eq!(
            text,
            "the value `3000000000` is beyond the range of i32 (-2147483648 to 2147483647)"
        );
        let text = refusal_text::<i64>(Refusal::NotIntegral, b"0.5", String::new);
        assert_eq!(
            text,
            "the value `0.5` is not an integer, and the values are read as i64"
        );
    }
}
