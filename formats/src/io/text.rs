//! Byte-level text scanning shared by the readers (lines, whitespace-separated
//! tokens, integers, floats) and the number formatting shared by the writers.
//!
//! Readers hold the whole file in memory and walk it with [`Lines`]: an
//! entry line in the usual plain form is read in one pass
//! ([`Lines::next_plain`]), anything else token by token ([`Tokens`]), the
//! slow path that also explains what is wrong. Both hand out slices of the
//! input: nothing is allocated per line. Nothing here panics, whatever the
//! bytes.

use std::io::{self, Write};
use std::path::Path;

use crate::error::FormatError;

/// Reads a whole file, naming it in the error.
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>, FormatError> {
    if !is_gzip(path) {
        let mut file = std::fs::File::open(path).map_err(|e| io_error(path, &e))?;
        // The file's length is a hint: room for it at once, on huge pages
        // when large; a file that grows meanwhile is read to its end.
        let hint = file.metadata().map_or(0, |m| m.len() as usize);
        let mut bytes = crate::memory::with_capacity_on_huge_pages(hint.saturating_add(1));
        io::Read::read_to_end(&mut file, &mut bytes).map_err(|e| io_error(path, &e))?;
        return Ok(bytes);
    }
    let file = std::fs::File::open(path).map_err(|e| io_error(path, &e))?;
    let mut bytes = Vec::new();
    io::Read::read_to_end(&mut flate2::read::GzDecoder::new(file), &mut bytes).map_err(|e| io_error(path, &e))?;
    Ok(bytes)
}

/// The first line of the file at `path` (gzip-compressed under `.gz`) for
/// which `wanted` holds, without its `\n`, reading no further: what a
/// caller looks at before reading a file whole. `None` when no line is
/// wanted.
pub(crate) fn first_line_where(path: &Path, wanted: impl Fn(&[u8]) -> bool) -> Result<Option<Vec<u8>>, FormatError> {
    let file = std::fs::File::open(path).map_err(|e| io_error(path, &e))?;
    let reader: Box<dyn io::Read> = if is_gzip(path) {
        Box::new(flate2::read::GzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let mut reader = io::BufReader::new(reader);
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = io::BufRead::read_until(&mut reader, b'\n', &mut line).map_err(|e| io_error(path, &e))?;
        if read == 0 {
            return Ok(None);
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        if wanted(&line) {
            return Ok(Some(line));
        }
    }
}

/// Whether `path` names a gzip-compressed file (`.gz`), read and written
/// through the compression transparently.
pub(crate) fn is_gzip(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("gz"))
}

/// `path` without a `.gz` extension: the name that says what the file
/// holds (`a.mtx.gz` holds a Matrix Market file).
///
/// ```
/// use std::path::Path;
/// use tessera_formats::io::without_gzip;
/// assert_eq!(without_gzip(Path::new("a.mtx.gz")), Path::new("a.mtx"));
/// assert_eq!(without_gzip(Path::new("a.tns")), Path::new("a.tns"));
/// ```
pub fn without_gzip(path: &Path) -> std::path::PathBuf {
    if is_gzip(path) {
        path.with_extension("")
    } else {
        path.to_path_buf()
    }
}

/// An [`FormatError::Io`] for `path`.
pub(crate) fn io_error(path: &Path, error: &io::Error) -> FormatError {
    FormatError::Io {
        path: path.to_path_buf(),
        reason: error.to_string(),
    }
}

/// A [`FormatError::Parse`] at `line` of `path`.
pub(crate) fn parse_error(path: &Path, line: usize, reason: impl Into<String>) -> FormatError {
    FormatError::Parse {
        path: path.to_path_buf(),
        line,
        reason: reason.into(),
    }
}

/// A line in the plain form [`Lines::next_plain`] reads.
pub(crate) struct Plain<'a> {
    pub line: Line<'a>,
    /// The value tokens asked for (a real value: the first; a complex
    /// value: real and imaginary parts); empty where none was.
    pub values: [&'a [u8]; 2],
}

/// One line of a file, without its line terminator.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Line<'a> {
    /// 1-based line number.
    pub number: usize,
    pub text: &'a [u8],
}

/// The lines of a byte buffer, split at `\n` (a `\r` before it is
/// whitespace to [`Tokens`], so CRLF files read the same).
pub(crate) struct Lines<'a> {
    rest: &'a [u8],
    number: usize,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Lines { rest: bytes, number: 0 }
    }

    /// The number of the line after the last one handed out: where a line
    /// that is missing at the end of the file was expected.
    pub(crate) fn next_number(&self) -> usize {
        self.number + 1
    }

    /// Bytes not yet handed out.
    pub(crate) fn remaining(&self) -> usize {
        self.rest.len()
    }

    /// The bytes not yet handed out.
    pub(crate) fn rest(&self) -> &'a [u8] {
        self.rest
    }

    /// The next line holding something other than whitespace or a comment
    /// (a line whose first token starts with `comment`).
    pub(crate) fn next_content(&mut self, comment: u8) -> Option<Line<'a>> {
        self.find(|line| is_content(line.text, comment))
    }

    /// The fast path of the entry readers: when the next line is in the
    /// plain form `ints.len()` unsigned integers of at most 19 digits, then
    /// `values` more tokens (0, 1, or 2 for a complex value), separated by
    /// spaces or tabs, reads it in one pass, filling `ints`. Otherwise
    /// (a comment, a blank line, a malformed or unusual line) returns `None`
    /// and consumes nothing, and the caller reads the line with [`next`]
    /// and [`Tokens`].
    ///
    /// The plain form tokenizes exactly as [`Tokens`] does, and its integers
    /// are those [`parse_u64`] accepts, so a line read here would read the
    /// same way on the slow path.
    ///
    /// [`next`]: Iterator::next
    #[inline]
    pub(crate) fn next_plain(&mut self, ints: &mut [u64], values: usize) -> Option<Plain<'a>> {
        const SAFE_DIGITS: usize = 19;
        debug_assert!(values <= 2);
        let bytes = self.rest;
        let mut p = 0;
        while matches!(bytes.get(p), Some(b' ' | b'\t')) {
            p += 1;
        }
        let last = ints.len();
        for (k, out) in ints.iter_mut().enumerate() {
            let start = p;
            let mut v: u64 = 0;
            while let Some(&b) = bytes.get(p) {
                let digit = b.wrapping_sub(b'0');
                if digit > 9 {
                    break;
                }
                v = v.wrapping_mul(10).wrapping_add(u64::from(digit));
                p += 1;
            }
            if p == start || p - start > SAFE_DIGITS {
                return None;
            }
            *out = v;
            if k + 1 < last || values > 0 {
                p = after_separator(bytes, p)?;
            }
        }
        let mut tokens: [&'a [u8]; 2] = [&[], &[]];
        for (k, token) in tokens.iter_mut().take(values).enumerate() {
            if k > 0 {
                p = after_separator(bytes, p)?;
            }
            let start = p;
            while matches!(bytes.get(p), Some(&b) if !is_space(b) && b != b'\n') {
                p += 1;
            }
            if p == start {
                return None;
            }
            *token = &bytes[start..p];
        }
        while matches!(bytes.get(p), Some(&b) if is_space(b)) {
            p += 1;
        }
        let text = &bytes[..p];
        self.rest = match bytes.get(p) {
            None => &bytes[p..],
            Some(b'\n') => &bytes[p + 1..],
            Some(_) => return None,
        };
        self.number += 1;
        Some(Plain {
            line: Line {
                number: self.number,
                text,
            },
            values: tokens,
        })
    }
}

/// The position after the spaces and tabs at `p`; `None` when there are
/// none (the plain form separates its tokens).
#[inline(always)]
fn after_separator(bytes: &[u8], mut p: usize) -> Option<usize> {
    let separator = p;
    while matches!(bytes.get(p), Some(b' ' | b'\t')) {
        p += 1;
    }
    (p > separator).then_some(p)
}

impl<'a> Iterator for Lines<'a> {
    type Item = Line<'a>;

    #[inline]
    fn next(&mut self) -> Option<Line<'a>> {
        if self.rest.is_empty() {
            return None;
        }
        let (text, rest) = match find_byte(b'\n', self.rest) {
            Some(end) => (&self.rest[..end], &self.rest[end + 1..]),
            None => (self.rest, &self.rest[self.rest.len()..]),
        };
        self.rest = rest;
        self.number += 1;
        Some(Line {
            number: self.number,
            text,
        })
    }
}

/// Whether a line holds a token and does not start with `comment`.
#[inline]
pub(crate) fn is_content(text: &[u8], comment: u8) -> bool {
    match text.iter().find(|&&b| !is_space(b)) {
        Some(&first) => first != comment,
        None => false,
    }
}

/// Position of the first `needle` in `haystack`, eight bytes at a time.
#[inline]
fn find_byte(needle: u8, haystack: &[u8]) -> Option<usize> {
    const LOW: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let pattern = LOW.wrapping_mul(u64::from(needle));
    let mut chunks = haystack.chunks_exact(8);
    let mut offset = 0;
    for chunk in chunks.by_ref() {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word) ^ pattern;
        // A zero byte of `x` is a match; this sets its high bit (and no bit
        // below the first match is set spuriously).
        let found = x.wrapping_sub(LOW) & !x & HIGH;
        if found != 0 {
            return Some(offset + (found.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    chunks.remainder().iter().position(|&b| b == needle).map(|p| offset + p)
}

/// Token separators: space, tab, carriage return, vertical tab, form feed.
#[inline(always)]
pub(crate) fn is_space(b: u8) -> bool {
    const SPACES: u64 = 1 << b' ' | 1 << b'\t' | 1 << b'\r' | 1 << 0x0b | 1 << 0x0c;
    b <= b' ' && SPACES & (1 << b) != 0
}

/// The whitespace-separated tokens of one line.
#[derive(Clone)]
pub(crate) struct Tokens<'a> {
    rest: &'a [u8],
}

impl<'a> Tokens<'a> {
    pub(crate) fn new(text: &'a [u8]) -> Self {
        Tokens { rest: text }
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a [u8];

    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let start = self.rest.iter().position(|&b| !is_space(b))?;
        let rest = &self.rest[start..];
        let end = rest.iter().position(|&b| is_space(b)).unwrap_or(rest.len());
        self.rest = &rest[end..];
        Some(&rest[..end])
    }
}

/// Number of tokens on a line (for error messages).
pub(crate) fn count_tokens(text: &[u8]) -> usize {
    Tokens::new(text).count()
}

/// Why a token is not an unsigned integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IntError {
    /// Not a run of decimal digits.
    NotANumber,
    /// Digits, but more than 64 bits hold.
    Overflow,
}

/// An unsigned decimal integer (digits only, no sign).
#[inline]
pub(crate) fn parse_u64(token: &[u8]) -> Result<u64, IntError> {
    // Nineteen digits always fit in 64 bits: no overflow checks needed.
    const SAFE_DIGITS: usize = 19;
    if token.is_empty() {
        return Err(IntError::NotANumber);
    }
    let mut value: u64 = 0;
    let mut overflow = false;
    for (k, &b) in token.iter().enumerate() {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return Err(IntError::NotANumber);
        }
        if k < SAFE_DIGITS {
            value = value * 10 + u64::from(digit);
        } else {
            match value.checked_mul(10).and_then(|v| v.checked_add(u64::from(digit))) {
                Some(v) => value = v,
                None => overflow = true,
            }
        }
    }
    if overflow {
        Err(IntError::Overflow)
    } else {
        Ok(value)
    }
}

/// A signed decimal integer (optional `+` or `-`, then digits), exactly;
/// [`IntError::Overflow`] when it is digits beyond an `i64`.
#[inline]
pub(crate) fn parse_i64(token: &[u8]) -> Result<i64, IntError> {
    let (negative, digits) = match token.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, token),
    };
    let magnitude = parse_u64(digits)?;
    let value = if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    };
    value.ok_or(IntError::Overflow)
}

/// A signed decimal integer as a float, when it fits in an `i64`.
#[inline]
pub(crate) fn parse_integer_value(token: &[u8]) -> Option<f64> {
    parse_i64(token).ok().map(|v| v as f64)
}

/// A float in any form Rust's `f64::from_str` accepts: `1`, `-2.5`,
/// `1e-300`, `.5`, `inf`, `-inf`, `nan` (any case).
#[inline]
pub(crate) fn parse_real(token: &[u8]) -> Option<f64> {
    // Every float `from_str` accepts is ASCII. Checking that is cheaper than
    // UTF-8 validation, which took a tenth of the reading time.
    if !token.is_ascii() {
        return None;
    }
    // SAFETY: ASCII bytes are valid UTF-8.
    let text = unsafe { std::str::from_utf8_unchecked(token) };
    text.parse().ok()
}

/// A token quoted for an error message: in backticks, see [`printable`].
pub(crate) fn show(token: &[u8]) -> String {
    format!("`{}`", printable(token))
}

/// Bytes from a file made fit for an error message: lossy UTF-8, escaped,
/// shortened to 40 bytes.
pub(crate) fn printable(bytes: &[u8]) -> String {
    const LONGEST: usize = 40;
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(LONGEST)]);
    let ellipsis = if bytes.len() > LONGEST { "..." } else { "" };
    format!("{}{ellipsis}", text.escape_debug())
}

/// Writes `value` so that reading it back gives the same bits (NaN aside):
/// the shortest digits that round-trip, positional for ordinary magnitudes
/// (`3`, `0.1`, `-2.5`), with an exponent for very large or small ones
/// (`1e-300`), and `nan`, `inf`, `-inf` for the others.
#[inline]
pub(crate) fn write_real<W: Write + ?Sized>(w: &mut W, value: f64) -> io::Result<()> {
    if value.is_nan() {
        w.write_all(b"nan")
    } else if value.is_infinite() {
        w.write_all(if value > 0.0 { b"inf" } else { b"-inf" })
    } else {
        let magnitude = value.abs();
        if magnitude == 0.0 || (1e-5..1e16).contains(&magnitude) {
            write!(w, "{value}")
        } else {
            write!(w, "{value:e}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_byte_agrees_with_a_plain_search() {
        let text = b"0123456789abcdef\n0123\n\n456789012345678\nx";
        for start in 0..text.len() {
            let hay = &text[start..];
            assert_eq!(find_byte(b'\n', hay), hay.iter().position(|&b| b == b'\n'), "{start}");
        }
        // Bytes just above and below the needle must not match.
        assert_eq!(find_byte(b'\n', &[0x0b, 0x09, 0x8a, 0x0a]), Some(3));
        assert_eq!(find_byte(b'\n', &[0x8a; 17]), None);
    }

    #[test]
    fn lines_number_from_one_and_keep_empty_lines() {
        let mut lines = Lines::new(b"a\n\nb c\r\nd");
        let got: Vec<(usize, &[u8])> = lines.by_ref().map(|l| (l.number, l.text)).collect();
        assert_eq!(
            got,
            vec![(1, &b"a"[..]), (2, &b""[..]), (3, &b"b c\r"[..]), (4, &b"d"[..])]
        );
        assert_eq!(lines.next_number(), 5);
        assert_eq!(Lines::new(b"").next_number(), 1);
    }

    #[test]
    fn plain_lines_read_like_the_slow_path() {
        let text = b"12 34 5.5\n1\t2  -3 \r\n% c\n 1 2 3\n1 2\n1 2 3 4\n9 9 x\n\t7 8 9";
        let mut lines = Lines::new(text);
        let mut ints = [0u64; 2];
        let mut read = Vec::new();
        loop {
            if let Some(plain) = lines.next_plain(&mut ints, 1) {
                let slow: Vec<&[u8]> = Tokens::new(plain.line.text).collect();
                assert_eq!(slow.len(), 3, "{:?}", show(plain.line.text));
                assert_eq!(slow[2], plain.values[0]);
                assert_eq!(parse_u64(slow[0]), Ok(ints[0]));
                assert_eq!(parse_u64(slow[1]), Ok(ints[1]));
                read.push((plain.line.number, ints, plain.values[0]));
            } else if lines.next().is_none() {
                break;
            }
        }
        assert_eq!(
            read,
            vec![
                (1, [12, 34], &b"5.5"[..]),
                (2, [1, 2], b"-3"),
                (4, [1, 2], b"3"),
                (7, [9, 9], b"x"),
                (8, [7, 8], b"9")
            ]
        );
        assert_eq!(lines.next_number(), 9);
        let mut none: [u64; 0] = [];
        let plain = Lines::new(b"2.5\n").next_plain(&mut none, 1).map(|p| p.values);
        assert_eq!(plain, Some([&b"2.5"[..], b""]));
        let mut one = [0u64; 1];
        let long = Lines::new(b"12345678901234567890 1\n").next_plain(&mut one, 1);
        assert!(long.is_none(), "twenty digits take the slow path");
    }

    #[test]
    fn plain_lines_read_two_value_tokens_for_complex_values() {
        let mut ints = [0u64; 2];
        let mut lines = Lines::new(b"1 2 0.5 -1e3\r\n3 4 7\n5 6 1 2 3\n");
        let plain = lines.next_plain(&mut ints, 2).unwrap();
        assert_eq!((ints, plain.values), ([1, 2], [&b"0.5"[..], b"-1e3"]));
        assert!(lines.next_plain(&mut ints, 2).is_none(), "one value token");
        assert!(lines.next().is_some());
        assert!(lines.next_plain(&mut ints, 2).is_none(), "three value tokens");
        let mut none: [u64; 0] = [];
        let plain = Lines::new(b"\t2 3").next_plain(&mut none, 2).map(|p| p.values);
        assert_eq!(plain, Some([&b"2"[..], b"3"]));
        let mut pattern = Lines::new(b"4 5\n");
        assert!(pattern.next_plain(&mut ints, 0).is_some());
        assert_eq!(ints, [4, 5]);
    }

    #[test]
    fn tokens_split_on_any_whitespace() {
        let tokens: Vec<&[u8]> = Tokens::new(b"  1\t22  \r 333 \r").collect();
        assert_eq!(tokens, vec![&b"1"[..], b"22", b"333"]);
        assert_eq!(Tokens::new(b" \t\r").next(), None);
    }

    #[test]
    fn integers_refuse_signs_junk_and_overflow() {
        assert_eq!(parse_u64(b"0"), Ok(0));
        assert_eq!(parse_u64(b"18446744073709551615"), Ok(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), Err(IntError::Overflow));
        assert_eq!(parse_u64(b"-1"), Err(IntError::NotANumber));
        assert_eq!(parse_u64(b"1x"), Err(IntError::NotANumber));
        assert_eq!(parse_u64(b""), Err(IntError::NotANumber));
        assert_eq!(parse_integer_value(b"-9223372036854775808"), Some(-(2f64.powi(63))));
        assert_eq!(parse_integer_value(b"9223372036854775808"), None);
        assert_eq!(parse_integer_value(b"+7"), Some(7.0));
        assert_eq!(parse_integer_value(b"1.5"), None);
        assert_eq!(parse_i64(b"-9223372036854775808"), Ok(i64::MIN));
        assert_eq!(parse_i64(b"+9223372036854775807"), Ok(i64::MAX));
        assert_eq!(parse_i64(b"9223372036854775808"), Err(IntError::Overflow));
        assert_eq!(parse_i64(b"-9223372036854775809"), Err(IntError::Overflow));
        assert_eq!(parse_i64(b"-"), Err(IntError::NotANumber));
        assert_eq!(parse_i64(b"2e3"), Err(IntError::NotANumber));
    }

    #[test]
    fn reals_round_trip_bit_for_bit() {
        let values = [
            1.0 / 3.0,
            1e-300,
            -1e300,
            5e-324,
            f64::MAX,
            f64::MIN_POSITIVE,
            3.0,
            -0.0,
            0.1,
            123456789012345680.0,
            1e-5,
            1e16 - 2.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        for v in values {
            let mut out = Vec::new();
            write_real(&mut out, v).unwrap();
            let back = parse_real(&out).unwrap();
            assert_eq!(back.to_bits(), v.to_bits(), "{v} as {:?}", show(&out));
        }
        let mut out = Vec::new();
        write_real(&mut out, 3.0).unwrap();
        write_real(&mut out, f64::NAN).unwrap();
        assert_eq!(out, b"3nan");
        assert!(parse_real(b"nan").unwrap().is_nan());
        assert_eq!(parse_real(b"\xff"), None);
    }

    #[test]
    fn shown_tokens_are_short_and_printable() {
        assert_eq!(show(b"ab\x00"), "`ab\\0`");
        assert_eq!(show(&[b'x'; 100]).len(), 40 + 2 + 3);
    }
}
