//! Bandwidth and profile of a matrix's entries: how far they stray from
//! the diagonal, the numbers a reordering is judged by (`tessera reorder`
//! and `tessera info` print them before and after).

use std::fmt;

use crate::coordinates::CoordinateList;
use crate::error::{FormatError, Result};
use crate::value::Value;

/// How far a matrix's entries lie from the diagonal.
///
/// - `lower_bandwidth`: the largest `i - j` of an entry `(i, j)` below the
///   diagonal, `upper_bandwidth` the largest `j - i` above it, and
///   `bandwidth` the larger of the two (0 for a diagonal or empty matrix).
/// - `profile` (the envelope size): for each row `i`, the distance from
///   its first entry at or left of the diagonal to the diagonal, `i - j`;
///   for each column `j`, likewise from its first entry at or above the
///   diagonal, `j - i`; all added. For a symmetric structure the two halves
///   are equal and each is the classic profile of Cuthill–McKee.
///
/// Explicit zeros count as entries: structure, not values, is measured.
///
/// ```
/// use tessera_formats::reorder::band_profile;
/// use tessera_formats::CoordinateList;
/// let mut a = CoordinateList::new(&[3, 3]);
/// for (i, j) in [(0, 0), (2, 0), (1, 2)] {
///     a.push(&[i, j], 1.0).unwrap();
/// }
/// let p = band_profile(&a).unwrap();
/// assert_eq!((p.lower_bandwidth, p.upper_bandwidth, p.bandwidth), (2, 1, 2));
/// assert_eq!(p.profile, 2 + 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BandProfile {
    pub lower_bandwidth: u64,
    pub upper_bandwidth: u64,
    pub bandwidth: u64,
    pub profile: u128,
}

impl fmt::Display for BandProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bandwidth {} (lower {}, upper {}), profile {}",
            self.bandwidth, self.lower_bandwidth, self.upper_bandwidth, self.profile
        )
    }
}

/// For each row (or column) that has one, the smallest coordinate seen.
enum Firsts {
    /// `u64::MAX` where none was seen.
    Dense(Vec<u64>),
    Sparse(std::collections::HashMap<u64, u64>),
}

impl Firsts {
    fn new(slices: usize, entries: usize) -> Firsts {
        if slices <= entries.saturating_mul(4).max(1 << 20) {
            Firsts::Dense(vec![u64::MAX; slices])
        } else {
            Firsts::Sparse(std::collections::HashMap::new())
        }
    }
    #[inline]
    fn lower(&mut self, slice: u64, coord: u64) {
        let first = match self {
            Firsts::Dense(firsts) => &mut firsts[slice as usize],
            Firsts::Sparse(firsts) => firsts.entry(slice).or_insert(coord),
        };
        *first = (*first).min(coord);
    }
    /// The sum over slices of `slice - first`.
    fn distances(&self) -> u128 {
        match self {
            Firsts::Dense(firsts) => firsts
                .iter()
                .enumerate()
                .filter(|(_, &f)| f != u64::MAX)
                .map(|(s, &f)| u128::from(s as u64 - f))
                .sum(),
            Firsts::Sparse(firsts) => firsts.iter().map(|(&s, &f)| u128::from(s - f)).sum(),
        }
    }
}

/// The bandwidth and profile of a matrix (order 2, any shape, entries in
/// any order). Other orders are refused: the diagonal is a matrix notion.
/// Linear in the entries, with one word per row and per column.
pub fn band_profile<V: Value>(entries: &CoordinateList<V>) -> Result<BandProfile> {
    let shape = entries.shape();
    if shape.len() != 2 {
        return Err(FormatError::Shape(format!(
            "bandwidth and profile are defined for matrices, this tensor has order {}",
            shape.len()
        )));
    }
    // The first entry at or left of the diagonal of each row, at or above
    // it of each column; kept in an array when the dimension is not much
    // larger than the entries, else only for the rows and columns that
    // have one, so hypersparse matrices cost their entries, not their shape.
    let mut row_first = Firsts::new(shape[0], entries.len());
    let mut col_first = Firsts::new(shape[1], entries.len());
    let mut p = BandProfile::default();
    for (c, _) in entries.iter() {
        let (i, j) = (c[0], c[1]);
        if i >= j {
            p.lower_bandwidth = p.lower_bandwidth.max(i - j);
            row_first.lower(i, j);
        }
        if j >= i {
            p.upper_bandwidth = p.upper_bandwidth.max(j - i);
            col_first.lower(j, i);
        }
    }
    p.bandwidth = p.lower_bandwidth.max(p.upper_bandwidth);
    p.profile = row_first.distances() + col_first.distances();
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tridiagonal_has_bandwidth_one_and_profile_two_per_row() {
        let n = 5u64;
        let mut a = CoordinateList::new(&[n as usize, n as usize]);
        for i in 0..n {
            a.push(&[i, i], 2.0).unwrap();
            if i + 1 < n {
                a.push(&[i, i + 1], -1.0).unwrap();
                a.push(&[i + 1, i], -1.0).unwrap();
            }
        }
        let p = band_profile(&a).unwrap();
        assert_eq!(p.bandwidth, 1);
        assert_eq!(p.profile, 2 * (n as u128 - 1));
    }

    #[test]
    fn empty_and_vector_inputs() {
        assert_eq!(
            band_profile(&CoordinateList::<f64>::new(&[0, 4])).unwrap(),
            BandProfile::default()
        );
        let e = band_profile(&CoordinateList::<f64>::new(&[4])).unwrap_err().to_string();
        assert!(e.contains("order 1"), "{e}");
    }
}
