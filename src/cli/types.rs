//! Value types on the command line: a tensor held as the type asked for it
//! (`-t A:i64`, `:type A i32`) without rounding a value into another, and
//! the bytes a tensor of any type takes.
//!
//! Files read as an integer type are read exactly by the file readers
//! (`files`); what is converted here are tensors that already hold values:
//! a binsparse file's (`f64`), and a REPL tensor given a new type. A value
//! an integer type does not hold (a fraction, one beyond its range, the
//! fill `inf`) is refused with the value and its coordinates, as a file's
//! would be, rather than truncated: a cast in a statement (`i64(...)`)
//! truncates on purpose. Likewise a complex (`c64`) tensor becomes a real
//! one only when every imaginary part is 0; `real(...)` and `imag(...)` in
//! a statement take its parts.

use tessera_formats::io::FileValue;
use tessera_formats::typed::Typed;
use tessera_formats::{AnyTensor, Complex64, Tensor, TensorRef, Value, ValueType};

use super::summary::complex_text;

/// `tensor` as a tensor of type `ty`: exactly for integer types (see
/// [`exactly`]), rounded for `f32` and `bool` (nonzero is true), and an
/// `i64` beyond 2^53 rounded to the nearest `f64` for `f64` and `c64`
/// (whose imaginary parts are 0). So `[3, -1]` in `f64` becomes `[3, -1]`
/// in `i32`, and `[0.5, 1]` is refused: `the value 0.5 at (0) is not an
/// integer, and the values are held as i64`. A `c64` tensor becomes
/// another type through its real parts, when every imaginary part is 0
/// ([`real_parts`]).
pub fn retyped(tensor: &AnyTensor, ty: ValueType) -> Result<AnyTensor, String> {
    match (tensor, ty) {
        (t, ty) if t.value_type() == ty => Ok(t.clone()),
        (AnyTensor::C64(t), ty) => retyped(&real_parts(t)?.into(), ty),
        // Integer to integer directly: the message shows an `i64` beyond
        // 2^53 as it is, not rounded.
        (AnyTensor::I64(t), ValueType::I32) => converted(t, |v| i32::try_from(v).ok()).map(AnyTensor::from),
        (AnyTensor::I32(t), ValueType::I64) => converted(t, |v| Some(i64::from(v))).map(AnyTensor::from),
        // An `f64` integer beyond 2^53 may be one rounded when it was read
        // or computed: taken as exact, it would pass for the file's value.
        (AnyTensor::F64(t), ty) if ty.is_integer() => {
            let unsure = t
                .values()
                .iter()
                .find(|v| v.is_finite() && v.abs() > LARGEST_EXACT_INTEGER);
            if let Some(v) = unsure {
                return Err(format!(
                    "the value {v} is beyond 2^53, where f64 rounds integers: ask for {ty} before the tensor is read or made"
                ));
            }
            from_f64(t.clone(), ty)
        }
        // Every other value is exact in `f64`.
        (t, ty) => from_f64(t.to_f64(), ty),
    }
}

/// Integers up to this magnitude are exact in `f64`.
pub const LARGEST_EXACT_INTEGER: f64 = (1u64 << 53) as f64;

/// An `f64` tensor as a tensor of type `ty`: itself, exactly as an integer
/// type ([`exactly`]), or rounded to `f32` or `bool`.
pub fn from_f64(tensor: Tensor<f64>, ty: ValueType) -> Result<AnyTensor, String> {
    match ty {
        ValueType::F64 => Ok(tensor.into()),
        ValueType::I64 => exactly::<i64>(&tensor).map(AnyTensor::from),
        ValueType::I32 => exactly::<i32>(&tensor).map(AnyTensor::from),
        other => Ok(AnyTensor::narrowed(tensor, other)),
    }
}

/// The tensor with its values (and fill) as `V` when `V` holds each one
/// exactly (for `i64` and `i32`: integral and within range, as
/// [`FileValue::from_real`] says); otherwise why not, naming the first
/// value that is not and its coordinates (0-based).
pub fn exactly<V: FileValue + Typed>(tensor: &Tensor<f64>) -> Result<Tensor<V>, String> {
    converted(tensor, V::from_real)
}

/// The tensor with its values (and fill) converted by `to`, when it
/// converts each one; otherwise why not, naming the first value it does
/// not convert and its coordinates (0-based).
fn converted<S: Value, V: Typed>(tensor: &Tensor<S>, to: impl Fn(S) -> Option<V>) -> Result<Tensor<V>, String> {
    let fill = tensor.fill();
    if to(fill).is_none() {
        return Err(format!("the fill {fill} {}", why_not::<V>(fill.to_f64())));
    }
    if let Some((coords, v)) = first_where(tensor, |v| to(v).is_none()) {
        return Err(format!("the value {v} at ({coords}) {}", why_not::<V>(v.to_f64())));
    }
    // Every value checked above: the default is never taken.
    Ok(tensor.map_values(|v| to(v).unwrap_or_default()))
}

/// The real parts of a complex tensor (and of its fill), when every
/// imaginary part is 0; otherwise why not, naming the first value that has
/// one and its coordinates (0-based).
pub fn real_parts(tensor: &Tensor<Complex64>) -> Result<Tensor<f64>, String> {
    let real = |v: Complex64| (v.im == 0.0).then_some(v.re);
    let fill = tensor.fill();
    if real(fill).is_none() {
        return Err(format!("the fill {} {HAS_IMAGINARY}", complex_text(fill)));
    }
    if let Some((coords, v)) = first_where(tensor, |v| real(v).is_none()) {
        return Err(format!("the value {} at ({coords}) {HAS_IMAGINARY}", complex_text(v)));
    }
    Ok(tensor.map_values(|v| v.re))
}

/// Why a complex value is not real, after the value in a message.
const HAS_IMAGINARY: &str = "has an imaginary part, and real values are asked for";

/// The coordinates (0-based, `1,2`) and value of the first entry of
/// `tensor` for which `found` holds: for messages, off the hot path.
fn first_where<V: Value>(tensor: &Tensor<V>, found: impl Fn(V) -> bool) -> Option<(String, V)> {
    if !tensor.values().iter().any(|&v| found(v)) {
        return None;
    }
    let entries = tensor.to_coordinates();
    let first = entries
        .iter()
        .find(|&(_, v)| found(v))
        .map(|(c, v)| (c.iter().map(u64::to_string).collect::<Vec<_>>().join(","), v));
    first
}

/// Why `V` does not hold `v` (the value in `f64`), after the value in a
/// message.
fn why_not<V: Typed>(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("is beyond the range of {}", V::TYPE)
    } else {
        format!("is not an integer, and the values are held as {}", V::TYPE)
    }
}

/// Bytes the tensor takes: its level arrays and its values.
pub fn bytes(tensor: TensorRef<'_>) -> usize {
    match tensor {
        TensorRef::F64(t) => t.bytes(),
        TensorRef::F32(t) => t.bytes(),
        TensorRef::I64(t) => t.bytes(),
        TensorRef::I32(t) => t.bytes(),
        TensorRef::Bool(t) => t.bytes(),
        TensorRef::C64(t) => t.bytes(),
    }
}

/// Components the tensor stores other than 0 (or counted among those it
/// stores when its format lists a coordinate more than once).
pub fn nonzeros(tensor: TensorRef<'_>) -> usize {
    match tensor {
        TensorRef::F64(t) => count_nonzeros(t),
        TensorRef::F32(t) => count_nonzeros(t),
        TensorRef::I64(t) => count_nonzeros(t),
        TensorRef::I32(t) => count_nonzeros(t),
        TensorRef::Bool(t) => count_nonzeros(t),
        TensorRef::C64(t) => count_nonzeros(t),
    }
}

fn count_nonzeros<V: Value>(tensor: &Tensor<V>) -> usize {
    tensor
        .first_nonzeros(0)
        .map_or_else(|| tensor.to_coordinates().len(), |shown| shown.count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_formats::{CoordinateList, Format};

    fn matrix(values: &[(u64, u64, f64)]) -> Tensor<f64> {
        let mut list = CoordinateList::new(&[3, 3]);
        for &(i, j, v) in values {
            list.push(&[i, j], v).unwrap();
        }
        Tensor::pack(&list, Format::csr()).unwrap()
    }

    #[test]
    fn integer_types_take_integers_they_hold_and_name_the_first_other() {
        let t = matrix(&[(0, 1, 4.0), (2, 2, -3e9)]);
        let AnyTensor::I64(i) = from_f64(t.clone(), ValueType::I64).unwrap() else {
            panic!("not i64")
        };
        assert_eq!(i.values(), &[4, -3_000_000_000]);
        assert_eq!(i.levels(), t.levels());
        let err = from_f64(t, ValueType::I32).unwrap_err();
        assert_eq!(err, "the value -3000000000 at (2,2) is beyond the range of i32");
        let err = from_f64(matrix(&[(1, 0, 2.5)]), ValueType::I64).unwrap_err();
        assert_eq!(
            err,
            "the value 2.5 at (1,0) is not an integer, and the values are held as i64"
        );
        let filled = matrix(&[(1, 0, 2.0)]).with_fill(f64::INFINITY).unwrap();
        let err = from_f64(filled, ValueType::I64).unwrap_err();
        assert!(err.starts_with("the fill inf is not an integer"), "{err}");
    }

    #[test]
    fn retyping_keeps_integers_exact_and_rounds_only_into_floats() {
        let big = AnyTensor::from(Tensor::from_dense(&[2], vec![i64::MAX, -7]).unwrap());
        assert_eq!(retyped(&big, ValueType::I64).unwrap(), big);
        let err = retyped(&big, ValueType::I32).unwrap_err();
        assert_eq!(err, "the value 9223372036854775807 at (0) is beyond the range of i32");
        let small = AnyTensor::from(Tensor::from_dense(&[2], vec![5i32, -7]).unwrap());
        let AnyTensor::I64(wide) = retyped(&small, ValueType::I64).unwrap() else {
            panic!("not i64")
        };
        assert_eq!(wide.values(), &[5, -7]);
        let rounded = AnyTensor::from(big.to_f64());
        let err = retyped(&rounded, ValueType::I64).unwrap_err();
        assert!(err.starts_with("the value 9223372036854776000 is beyond 2^53"), "{err}");
        let truth = retyped(&small, ValueType::Bool).unwrap();
        assert_eq!(truth.to_f64().values(), &[1.0, 1.0]);
        assert_eq!(bytes(big.as_ref()), 16);
    }

    #[test]
    fn complex_tensors_turn_real_only_without_imaginary_parts() {
        let small = AnyTensor::from(Tensor::from_dense(&[2], vec![5i32, -7]).unwrap());
        let AnyTensor::C64(z) = retyped(&small, ValueType::C64).unwrap() else {
            panic!("not c64")
        };
        assert_eq!(z.values(), &[Complex64::new(5.0, 0.0), Complex64::new(-7.0, 0.0)]);
        let AnyTensor::I64(back) = retyped(&z.clone().into(), ValueType::I64).unwrap() else {
            panic!("not i64")
        };
        assert_eq!(back.values(), &[5, -7]);
        let mut list = CoordinateList::new(&[3, 3]);
        list.push(&[0, 1], Complex64::new(1.0, 0.0)).unwrap();
        list.push(&[2, 0], Complex64::new(0.5, -2.0)).unwrap();
        let packed = Tensor::pack(&list, Format::csr()).unwrap();
        // Sixteen bytes a value, eight more than `f64`.
        let real_bytes = packed.map_values(|v| v.re).bytes();
        let complex = AnyTensor::from(packed);
        let err = retyped(&complex, ValueType::F64).unwrap_err();
        assert_eq!(
            err,
            "the value 0.5-2i at (2,0) has an imaginary part, and real values are asked for"
        );
        assert_eq!(bytes(complex.as_ref()), real_bytes + 2 * 8);
        assert_eq!(nonzeros(complex.as_ref()), 2);
    }
}
