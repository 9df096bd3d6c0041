//! Short, readable accounts of tensors and numbers: the summary printed for
//! a result without `-o` (shape, format, stored entries, the first
//! nonzeros), scalars, byte counts and durations.

use std::io::{self, Write};
use std::time::Duration;

use tessera_formats::{AnyTensor, Complex64, Tensor, Value, ValueType};

use super::generate::shape_text;

/// How many nonzeros a summary lists.
pub const SHOWN_NONZEROS: usize = 10;

/// Values as a summary shows them: integers exactly, whatever their
/// size; complex values as `1+2i`; other values as the `f64` they are.
trait Shown: Value {
    /// Short, to read ([`short_number`]).
    fn short(self) -> String;
    /// Every digit, to parse back ([`scalar_text`]).
    fn full(self) -> String;
}

impl Shown for f64 {
    fn short(self) -> String {
        short_number(self)
    }
    fn full(self) -> String {
        scalar_text(self)
    }
}

impl Shown for i64 {
    fn short(self) -> String {
        self.to_string()
    }
    fn full(self) -> String {
        self.to_string()
    }
}

/// `re+imi` or `re-imi`, each part as an `f64` is shown: `1+2i`,
/// `0.5-0.25i`, `0+1e-30i`.
impl Shown for Complex64 {
    fn short(self) -> String {
        complex(self, short_number)
    }
    fn full(self) -> String {
        complex(self, scalar_text)
    }
}

/// A complex value in full, to parse back: `1+2i`, `-0.5-1e-30i`.
pub fn complex_text(v: Complex64) -> String {
    v.full()
}

/// A complex value with each part shown by `part`, the imaginary part's
/// sign between them.
fn complex(v: Complex64, part: fn(f64) -> String) -> String {
    let sign = if v.im.is_sign_negative() { '-' } else { '+' };
    format!("{}{sign}{}i", part(v.re), part(v.im.abs()))
}

impl Shown for i32 {
    fn short(self) -> String {
        self.to_string()
    }
    fn full(self) -> String {
        self.to_string()
    }
}

/// Writes `name`'s summary: a line with its shape, format, stored entries and
/// nonzeros, then its first `limit` nonzeros by coordinate (0-based). A
/// scalar is its value alone. Integer values are shown exactly, complex
/// values as `1+2i`.
pub fn write_summary(out: &mut dyn Write, name: &str, tensor: &AnyTensor, limit: usize) -> io::Result<()> {
    let ty = tensor.value_type();
    match tensor {
        AnyTensor::I64(t) => write_values(out, name, t, ty, limit),
        AnyTensor::I32(t) => write_values(out, name, t, ty, limit),
        AnyTensor::C64(t) => write_values(out, name, t, ty, limit),
        // `f32` and `bool` values are exact in `f64`.
        other => write_values(out, name, &other.as_f64(), ty, limit),
    }
}

/// [`write_summary`] of a tensor of `V` values, of type `ty`.
fn write_values<V: Shown>(
    out: &mut dyn Write,
    name: &str,
    tensor: &Tensor<V>,
    ty: ValueType,
    limit: usize,
) -> io::Result<()> {
    if tensor.order() == 0 {
        let value = tensor.values().first().copied().unwrap_or_default();
        return writeln!(out, "{}", value.full());
    }
    // The first entries only: a summary never lists the whole result.
    let (count, first) = match tensor.first_nonzeros(limit) {
        Some(shown) => (shown.count, shown.first),
        None => {
            let all = tensor.to_coordinates();
            let first = all.iter().take(limit).map(|(c, v)| (c.to_vec(), v)).collect();
            (all.len(), first)
        }
    };
    let what = match tensor.order() {
        1 => "vector",
        2 => "matrix",
        _ => "tensor",
    };
    let what = format!("{what}{}", super::session::of_type(ty));
    let components: f64 = tensor.shape().iter().map(|&d| d as f64).product();
    let density = if components > 0.0 {
        count as f64 / components
    } else {
        0.0
    };
    let plural = if count == 1 { "" } else { "s" };
    // Counted are the entries other than the fill: nonzeros when it is 0.
    let fill = tensor.fill();
    let counted = if fill.is_zero() {
        format!("{count} nonzero{plural}")
    } else {
        format!("fill {}, {count} other value{plural}", fill.short())
    };
    writeln!(
        out,
        "{name}: {} {what}, {}, {} stored, {counted} (density {})",
        shape_text(tensor.shape()),
        tensor.format(),
        tensor.stored(),
        percent(density),
    )?;
    for (coords, value) in &first {
        let coords: Vec<String> = coords.iter().map(u64::to_string).collect();
        writeln!(out, "  {name}({}) = {}", coords.join(","), value.short())?;
    }
    if limit > 0 && count > limit {
        writeln!(out, "  ... {} more", count - limit)?;
    }
    Ok(())
}

/// [`write_summary`], with a scalar named: `s = 18`, so that a session's
/// output says which result each number is, also when it is piped into a
/// file or another program.
pub fn write_named(out: &mut dyn Write, name: &str, tensor: &AnyTensor, limit: usize) -> io::Result<()> {
    if tensor.order() == 0 {
        return writeln!(out, "{name} = {}", scalar_of(tensor));
    }
    write_summary(out, name, tensor, limit)
}

/// The value of an order-0 tensor in full ([`scalar_text`]; an integer
/// exactly, whatever its size; a complex value as `1+2i`).
pub fn scalar_of(tensor: &AnyTensor) -> String {
    match tensor {
        AnyTensor::I64(t) => t.values().first().copied().unwrap_or_default().full(),
        AnyTensor::I32(t) => t.values().first().copied().unwrap_or_default().full(),
        AnyTensor::C64(t) => t.values().first().copied().unwrap_or_default().full(),
        other => scalar_text(scalar_value(&other.as_f64())),
    }
}

/// A scalar result in full precision (it reads back to the same bits), in
/// scientific notation when very small or very large: `1e-30`, not thirty
/// zeros.
pub fn scalar_text(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-4..1e16).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// The value of an order-0 tensor.
pub fn scalar_value(tensor: &Tensor<f64>) -> f64 {
    tensor.values().first().copied().unwrap_or(0.0)
}

/// A number to read, not to parse back: six significant digits.
pub fn short_number(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        return format!("{v}");
    }
    let a = v.abs();
    if (1e-4..1e6).contains(&a) {
        let digits = (5 - a.log10().floor() as i32).max(0) as usize;
        let text = format!("{v:.digits$}");
        let text = text.trim_end_matches('0');
        text.trim_end_matches('.').to_string()
    } else {
        format!("{v:.5e}")
    }
}

/// A fraction as a percentage: two decimals, or three significant digits
/// below 1%.
pub fn percent(fraction: f64) -> String {
    let p = fraction * 100.0;
    if p == 0.0 || p >= 1.0 {
        return format!("{}%", short_number((p * 100.0).round() / 100.0));
    }
    let digits = (2 - p.log10().floor() as i32).max(0) as usize;
    let text = format!("{p:.digits$}");
    format!("{}%", text.trim_end_matches('0').trim_end_matches('.'))
}

/// Bytes as `1.2 MB`.
pub fn bytes(n: u128) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// A duration in milliseconds, `0.123 ms`.
pub fn millis(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms >= 100.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.3} ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_formats::{CoordinateList, Format, ValueType};

    #[test]
    fn scalars_keep_every_digit_and_switch_to_exponents_at_the_extremes() {
        assert_eq!(scalar_text(91756.0), "91756");
        assert_eq!(scalar_text(0.1), "0.1");
        assert_eq!(scalar_text(-2.5e-30), "-2.5e-30");
        assert_eq!(scalar_text(1.234e20), "1.234e20");
        assert_eq!(scalar_text(0.0), "0");
        assert_eq!(scalar_text(f64::INFINITY), "inf");
        for v in [1e-300, 3.0e-5, 123456789.123, 9.99e15, 1e16] {
            assert_eq!(scalar_text(v).parse::<f64>().unwrap(), v, "{v}");
        }
    }

    #[test]
    fn numbers_read_short() {
        assert_eq!(short_number(3.0), "3");
        assert_eq!(short_number(0.123456789), "0.123457");
        assert_eq!(short_number(1234.56789), "1234.57");
        assert_eq!(short_number(1.5e-9), "1.50000e-9");
        assert_eq!(percent(0.5), "50%");
        assert_eq!(percent(0.000376), "0.0376%");
        assert_eq!(bytes(999), "999 B");
        assert_eq!(bytes(1_234_567), "1.2 MB");
    }

    #[test]
    fn summary_lists_first_nonzeros_by_coordinate() {
        let mut e = CoordinateList::new(&[3, 4]);
        e.push(&[2, 1], 5.0).unwrap();
        e.push(&[0, 3], 0.5).unwrap();
        let t = Tensor::pack(&e, Format::csr()).unwrap();
        let mut out = Vec::new();
        write_summary(&mut out, "A", &t.clone().into(), 1).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "A: 3 x 4 matrix, csr, 2 stored, 2 nonzeros (density 16.67%)\n  A(0,3) = 0.5\n  ... 1 more\n"
        );
        let mut out = Vec::new();
        write_summary(&mut out, "M", &AnyTensor::narrowed(t, ValueType::Bool), 0).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("M: 3 x 4 matrix of bool, csr, 2 stored"), "{text}");
    }

    #[test]
    fn integer_summaries_and_scalars_keep_every_digit() {
        let big = Tensor::from_dense(&[3], vec![i64::MAX, 0, -(1 << 53) - 1]).unwrap();
        let mut out = Vec::new();
        write_summary(&mut out, "v", &big.into(), 10).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "v: 3 vector of i64, dense, 3 stored, 2 nonzeros (density 66.67%)\n\
             \x20 v(0) = 9223372036854775807\n  v(2) = -9007199254740993\n"
        );
        let s = AnyTensor::from(Tensor::from_dense(&[], vec![i64::MIN]).unwrap());
        let mut out = Vec::new();
        write_named(&mut out, "s", &s, 10).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "s = -9223372036854775808\n");
        let filled = Tensor::from_dense(&[2], vec![-2i32, 5]).unwrap();
        let filled = filled.convert(&Format::sparse_vector()).unwrap().with_fill(-2).unwrap();
        assert_eq!(scalar_of(&Tensor::from_dense(&[], vec![7i32]).unwrap().into()), "7");
        let mut out = Vec::new();
        write_summary(&mut out, "w", &filled.into(), 0).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("of i32, sv, ") && text.contains("fill -2, "), "{text}");
    }

    #[test]
    fn complex_summaries_show_both_parts() {
        let z = |re, im| Complex64::new(re, im);
        let v = Tensor::from_dense(&[3], vec![z(1.0, 2.0), z(0.0, 0.0), z(0.123456789, -1.5e-9)]).unwrap();
        let mut out = Vec::new();
        write_summary(&mut out, "y", &v.into(), 10).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "y: 3 vector of c64, dense, 3 stored, 2 nonzeros (density 66.67%)\n\
             \x20 y(0) = 1+2i\n  y(2) = 0.123457-1.50000e-9i\n"
        );
        let s = AnyTensor::from(Tensor::from_dense(&[], vec![z(-0.1, 1e-30)]).unwrap());
        assert_eq!(scalar_of(&s), "-0.1+1e-30i");
        let mut out = Vec::new();
        write_named(&mut out, "s", &s, 10).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "s = -0.1+1e-30i\n");
        assert_eq!(complex_text(z(-0.0, -0.0)), "-0-0i");
    }
}
