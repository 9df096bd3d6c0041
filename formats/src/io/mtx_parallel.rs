//! The entries of a large general `.mtx` file read on several threads.
//!
//! The body is cut at line ends into one piece per thread. Each piece's
//! lines are counted first; when every line of every piece is an entry in
//! the plain form ([`Lines::next_plain`]) and the pieces hold exactly the
//! entries the size line announces, each piece parses straight into its
//! own part of the list, so nothing is copied twice. Anything else (a
//! comment or blank line among the entries, a malformed entry, a count that
//! disagrees, symmetric storage, whose lines hold one or two entries) gives
//! up, and the caller reads the file on one thread, which says what is
//! wrong and where.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use super::text::Lines;
use super::values::{parse_tokens, FileValue};
use crate::io::MtxField;
use crate::memory::with_capacity_on_huge_pages;

/// Bytes of entries below which one thread reads them: cutting, counting
/// and starting threads costs more than it saves.
pub(super) const PARALLEL_BYTES: usize = 4 << 20;

/// What the entries of a general file are read against.
pub(super) struct Expected {
    pub rows: u64,
    pub cols: u64,
    pub entries: usize,
    pub field: MtxField,
    /// Value tokens per line (0 for a pattern, 2 for a complex value).
    pub values: usize,
}

/// The entries of `body` (every line after the size line) as 0-based
/// coordinates, two per entry, and values; `None` when the body is not
/// plain entries only, `expected.entries` of them, on `threads` threads
/// (see the module's comment).
pub(super) fn read_plain_entries<V: FileValue>(
    body: &[u8],
    expected: &Expected,
    threads: usize,
) -> Option<(Vec<u64>, Vec<V>)> {
    let pieces = cut_at_lines(body, threads);
    let counts: Vec<usize> = pieces.par_iter().map(|piece| count_lines(piece)).collect();
    if counts.iter().sum::<usize>() != expected.entries {
        return None;
    }
    let mut coords: Vec<u64> = with_capacity_on_huge_pages(2 * expected.entries);
    let mut values: Vec<V> = with_capacity_on_huge_pages(expected.entries);
    let mut coord_parts = split_lengths(&mut coords.spare_capacity_mut()[..2 * expected.entries], &counts, 2);
    let mut value_parts = split_lengths(&mut values.spare_capacity_mut()[..expected.entries], &counts, 1);
    let all_read = pieces
        .par_iter()
        .zip(coord_parts.par_iter_mut())
        .zip(value_parts.par_iter_mut())
        .all(|((piece, coords), values)| read_piece(piece, expected, coords, values));
    if !all_read {
        return None;
    }
    // SAFETY: the pieces' counts sum to the entries, each piece wrote its
    // whole part of both (`read_piece` returns true only then), and the
    // parts cover the first `2 * entries` and `entries` slots.
    unsafe {
        coords.set_len(2 * expected.entries);
        values.set_len(expected.entries);
    }
    Some((coords, values))
}

/// The entry of a plain line (its two 1-based indices and value tokens),
/// 0-based, when both indices are in range and the value parses: what
/// the one-thread reader and the threaded one both accept on their fast
/// paths.
#[inline]
pub(super) fn plain_entry<V: FileValue>(
    [i, j]: [u64; 2],
    tokens: [&[u8]; 2],
    expected: &Expected,
) -> Option<(u64, u64, V)> {
    if !((1..=expected.rows).contains(&i) && (1..=expected.cols).contains(&j)) {
        return None;
    }
    let v = if expected.values > 0 {
        parse_tokens::<V>(tokens, expected.field).ok()?
    } else {
        V::from_f64(1.0)
    };
    Some((i - 1, j - 1, v))
}

/// `body` cut into about `n` pieces, each ending at a line end (the last
/// where the body ends).
fn cut_at_lines(body: &[u8], n: usize) -> Vec<&[u8]> {
    let mut pieces = Vec::with_capacity(n);
    let mut rest = body;
    for k in (1..n.max(1)).rev() {
        let at = rest.len() / (k + 1);
        let Some(end) = rest[at..].iter().position(|&b| b == b'\n') else {
            break;
        };
        let (piece, tail) = rest.split_at(at + end + 1);
        pieces.push(piece);
        rest = tail;
    }
    pieces.push(rest);
    pieces
}

/// Lines in `piece`: its line ends, and a last line without one.
fn count_lines(piece: &[u8]) -> usize {
    // Sums of at most 255 one-byte flags cannot overflow a byte, and a
    // byte-wide sum is what the compiler vectorizes widest.
    let ends: usize = piece
        .chunks(255)
        .map(|chunk| usize::from(chunk.iter().map(|&b| u8::from(b == b'\n')).sum::<u8>()))
        .sum();
    ends + usize::from(piece.last().is_some_and(|&b| b != b'\n'))
}

/// `slots` cut into consecutive parts of `per * counts[k]` slots.
fn split_lengths<'s, T>(mut slots: &'s mut [T], counts: &[usize], per: usize) -> Vec<&'s mut [T]> {
    counts
        .iter()
        .map(|&n| {
            let (part, rest) = std::mem::take(&mut slots).split_at_mut(per * n);
            slots = rest;
            part
        })
        .collect()
}

/// Reads `piece`, every line a plain entry in range, into `coords` and
/// `values` (exactly as many slots as it has lines); false at the first
/// line that is not.
fn read_piece<V: FileValue>(
    piece: &[u8],
    expected: &Expected,
    coords: &mut [MaybeUninit<u64>],
    values: &mut [MaybeUninit<V>],
) -> bool {
    let mut lines = Lines::new(piece);
    let mut ints = [0u64; 2];
    for (k, value) in values.iter_mut().enumerate() {
        let Some(plain) = lines.next_plain(&mut ints, expected.values) else {
            return false;
        };
        let Some((i, j, v)) = plain_entry::<V>(ints, plain.values, expected) else {
            return false;
        };
        coords[2 * k].write(i);
        coords[2 * k + 1].write(j);
        value.write(v);
    }
    lines.remaining() == 0
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use num_complex::Complex64;

    use super::*;
    use crate::io::mtx::parse_mtx_as;

    /// The entries of a small file read on one thread (below the parallel
    /// size), as coordinates and values.
    fn serial<V: FileValue>(file: &str) -> (Vec<u64>, Vec<V>) {
        let list = parse_mtx_as::<V>(file.as_bytes(), Path::new("t.mtx")).unwrap().entries;
        (
            list.iter().flat_map(|(c, _)| c.to_vec()).collect(),
            list.values().to_vec(),
        )
    }

    /// The body of `file` (after its banner and size line) read on
    /// `threads` threads.
    fn parallel<V: FileValue>(file: &str, field: MtxField, threads: usize) -> Option<(Vec<u64>, Vec<V>)> {
        let mut lines = Lines::new(file.as_bytes());
        let size = loop {
            let line = lines.next().unwrap();
            if !line.text.starts_with(b"%") {
                break line.text;
            }
        };
        let size: Vec<usize> = std::str::from_utf8(size)
            .unwrap()
            .split_whitespace()
            .map(|t| t.parse().unwrap())
            .collect();
        let values = match field {
            MtxField::Pattern => 0,
            MtxField::Complex => 2,
            _ => 1,
        };
        let expected = Expected {
            rows: size[0] as u64,
            cols: size[1] as u64,
            entries: size[2],
            field,
            values,
        };
        read_plain_entries(lines.rest(), &expected, threads)
    }

    fn general(field: &str, size: &str, body: &str) -> String {
        format!("%%MatrixMarket matrix coordinate {field} general\n% a comment\n{size}\n{body}")
    }

    /// Plain bodies read on any number of threads give the one-thread
    /// reader's entries, in file order: with and without a last line end,
    /// CRLF line ends, tabs, duplicates, more threads than lines, and
    /// pattern, integer and complex values.
    #[test]
    fn plain_bodies_read_on_threads_give_the_serial_entries() {
        let real = "1 1 1.5\n3 2 -2e3\n2 4\t0.25\n3 2 7\n1 4 -0.0\n";
        for body in [
            real.to_string(),
            real.trim_end().to_string(),
            real.replace('\n', "\r\n"),
        ] {
            let file = general("real", "3 4 5", &body);
            let want = serial::<f64>(&file);
            assert_eq!(want.1.len(), 5);
            for threads in 1..=7 {
                let got = parallel::<f64>(&file, MtxField::Real, threads);
                let got = got.unwrap_or_else(|| panic!("{threads} threads gave up on {body:?}"));
                assert_eq!(got.0, want.0, "{threads} threads");
                assert!(got.1.iter().zip(&want.1).all(|(a, b)| a.to_bits() == b.to_bits()));
            }
        }
        let file = general("pattern", "2 2 3", "1 1\n2 1\n2 2\n");
        assert_eq!(parallel::<f64>(&file, MtxField::Pattern, 2), Some(serial::<f64>(&file)));
        let file = general("integer", "2 2 2", "1 1 -7\n2 2 9\n");
        assert_eq!(parallel::<i64>(&file, MtxField::Integer, 2), Some(serial::<i64>(&file)));
        let file = general("complex", "2 2 2", "1 1 1.0 -2.0\n2 1 0.5 3\n");
        let got = parallel::<Complex64>(&file, MtxField::Complex, 2);
        assert_eq!(got, Some(serial::<Complex64>(&file)));
    }

    /// Bodies the fast path cannot read whole give up (the caller then
    /// reads them on one thread, which names what is wrong): a comment or
    /// blank line among the entries, fewer or more entries than announced,
    /// an index out of range, a value that is not a number, a line with a
    /// token too many.
    #[test]
    fn bodies_that_are_not_plain_entries_give_up() {
        for (size, body) in [
            ("3 3 3", "1 1 1\n% note\n2 2 2\n3 3 3\n"),
            ("3 3 3", "1 1 1\n\n2 2 2\n3 3 3\n"),
            ("3 3 3", "1 1 1\n2 2 2\n"),
            ("3 3 2", "1 1 1\n2 2 2\n3 3 3\n"),
            ("3 3 2", "1 1 1\n4 2 2\n"),
            ("3 3 2", "1 1 1\n0 2 2\n"),
            ("3 3 2", "1 1 1\n2 2 x\n"),
            ("3 3 2", "1 1 1\n2 2 2 2\n"),
        ] {
            let file = general("real", size, body);
            for threads in 1..=3 {
                assert_eq!(
                    parallel::<f64>(&file, MtxField::Real, threads),
                    None,
                    "{body:?} on {threads}"
                );
            }
        }
    }

    /// Cuts fall at line ends and cover the body, whatever the count.
    #[test]
    fn pieces_end_at_line_ends_and_cover_the_body() {
        let body = b"1 2 3\n4 5 6\n7 8 9\n10 11 12";
        for n in 1..=9 {
            let pieces = cut_at_lines(body, n);
            assert_eq!(pieces.concat(), body.to_vec());
            assert!(pieces[..pieces.len() - 1].iter().all(|p| p.ends_with(b"\n")));
            assert_eq!(pieces.iter().map(|p| count_lines(p)).sum::<usize>(), 4);
        }
    }
}
