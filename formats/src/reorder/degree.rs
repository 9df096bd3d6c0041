//! Degree ordering: each mode's coordinates sorted by how many entries
//! their slice holds, heaviest first.
//!
//! The cheapest of the orderings (one pass over the entries and one sort
//! per mode). Putting heavy rows together keeps the rows a kernel touches
//! most in the same cache lines, and heavy columns at the front of a dense
//! operand; it does nothing for bandwidth. Ties keep the original order, so
//! the result is deterministic and the identity on uniform structure.

use crate::coordinates::CoordinateList;
use crate::error::Result;
use crate::value::Value;

use super::permutation::Permutation;

/// The degree ordering of mode `mode` of `entries` (duplicates counted
/// as the list holds them: canonicalize first to count each coordinate
/// once).
///
/// ```
/// use tessera_formats::reorder::degree_order;
/// use tessera_formats::CoordinateList;
/// let mut a = CoordinateList::new(&[3, 3]);
/// for (i, j) in [(0, 0), (2, 0), (2, 1), (2, 2), (1, 1), (1, 2)] {
///     a.push(&[i, j], 1.0).unwrap();
/// }
/// // Row 2 holds three entries, row 1 two, row 0 one.
/// assert_eq!(degree_order(&a, 0).unwrap().new_to_old(), &[2, 1, 0]);
/// ```
pub fn degree_order<V: Value>(entries: &CoordinateList<V>, mode: usize) -> Result<Permutation> {
    let size = entries.shape()[mode];
    // Allocate through Permutation's size check first: a mode too large
    // to permute is refused before its counts are.
    let identity = Permutation::identity(size)?;
    let mut degree = vec![0usize; size];
    for (coords, _) in entries.iter() {
        degree[coords[mode] as usize] += 1;
    }
    let mut order = identity.new_to_old().to_vec();
    // Stable: equal degrees keep their original order.
    order.sort_by(|&a, &b| degree[b].cmp(&degree[a]));
    Permutation::from_new_to_old(order)
}
