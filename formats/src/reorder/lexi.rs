//! Lexi-order (COMET's reordering, after Li et al.'s LexiOrder): every
//! mode's coordinates sorted so that their slices are in decreasing
//! lexicographic order, modes taken in turn, rounds repeated until nothing
//! moves or a bound is reached.
//!
//! For a matrix this is the doubly lexical ordering (Lubiw) by iteration:
//! a row is read as the 0/1 vector of where it stores entries, in the
//! current column order; rows are sorted so that a row with an entry in an
//! earlier column comes first (decreasing 0/1 vectors), then the columns
//! are sorted the same way by the new row order, and so on. Entries gather
//! towards the top-left and the diagonal. For a tensor, mode `n`'s slice is
//! read as the 0/1 vector over the tuples of the other modes, taken in the
//! lexicographic order of their current coordinates.
//!
//! Each mode's step is a sort of its slices: a slice is the sorted list of
//! the ranks of its entries' other-mode tuples; lists compare element by
//! element (a smaller rank first); a list that is a prefix of another comes
//! after it (it has fewer entries after the common part, so its 0/1 vector
//! is smaller); empty slices come last. Ties keep the current order, which
//! is what makes a round that changes nothing a fixed point.

use std::cmp::Ordering;

use crate::coordinates::CoordinateList;
use crate::error::Result;
use crate::value::Value;

use super::permutation::Permutation;

/// Rounds (every mode sorted once) lexi-order runs at most by default.
/// Lubiw's iteration converges but may take many rounds; LexiOrder stops
/// early too, because the first rounds do nearly all the clustering.
pub const LEXI_ROUNDS: usize = 5;

/// The lexi-order of every mode of `entries` (canonical: sorted, no
/// duplicates), in at most `max_rounds` rounds.
///
/// ```
/// use tessera_formats::reorder::lexi_order;
/// use tessera_formats::CoordinateList;
/// // An arrow pointing the wrong way: row 2 and column 2 are full.
/// let mut a = CoordinateList::new(&[3, 3]);
/// for (i, j) in [(0, 2), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2)] {
///     a.push(&[i, j], 1.0).unwrap();
/// }
/// let perms = lexi_order(&a, 5).unwrap();
/// // The full row and column move to the front.
/// assert_eq!(perms[0].old_of(0), 2);
/// assert_eq!(perms[1].old_of(0), 2);
/// ```
pub fn lexi_order<V: Value>(entries: &CoordinateList<V>, max_rounds: usize) -> Result<Vec<Permutation>> {
    let order = entries.order();
    let mut perms: Vec<Permutation> = entries
        .shape()
        .iter()
        .map(|&n| Permutation::identity(n))
        .collect::<Result<_>>()?;
    // The list in current coordinates, rewritten after every mode's step.
    let mut current: Vec<u64> = (0..entries.len())
        .flat_map(|e| entries.coords(e).iter().copied())
        .collect();
    for _ in 0..max_rounds {
        let mut moved = false;
        for mode in 0..order {
            let step = sort_slices(&current, order, mode, entries.shape()[mode])?;
            if step.is_identity() {
                continue;
            }
            moved = true;
            for c in current.chunks_mut(order.max(1)) {
                c[mode] = step.new_of(c[mode] as usize) as u64;
            }
            // Compose: the new coordinate `k` holds what the old step's
            // coordinate `step.old_of(k)` held.
            let composed: Vec<usize> = (0..step.len()).map(|k| perms[mode].old_of(step.old_of(k))).collect();
            perms[mode] = Permutation::from_new_to_old(composed)?;
        }
        if !moved {
            break;
        }
    }
    Ok(perms)
}

/// One step: mode `mode`'s coordinates (of `size`) in decreasing
/// lexicographic order of their slices, in the current coordinates
/// `coords` (entry by entry, `order` per entry).
fn sort_slices(coords: &[u64], order: usize, mode: usize, size: usize) -> Result<Permutation> {
    let entries = coords.len() / order.max(1);
    let entry = |e: usize| &coords[e * order..(e + 1) * order];
    let ranks = other_mode_ranks(coords, order, mode);

    // Group the ranks by slice (a counting sort), then sort and dedup each.
    let mut start = vec![0usize; size + 1];
    for e in 0..entries {
        start[entry(e)[mode] as usize + 1] += 1;
    }
    for k in 0..size {
        start[k + 1] += start[k];
    }
    let mut fill = start.clone();
    let mut keys = vec![0usize; entries];
    for (e, &rank) in ranks.iter().enumerate() {
        let s = entry(e)[mode] as usize;
        keys[fill[s]] = rank;
        fill[s] += 1;
    }
    let mut len = vec![0usize; size];
    for s in 0..size {
        let slice = &mut keys[start[s]..start[s + 1]];
        slice.sort_unstable();
        let mut kept = 0;
        for k in 0..slice.len() {
            if kept == 0 || slice[k] != slice[kept - 1] {
                slice[kept] = slice[k];
                kept += 1;
            }
        }
        len[s] = kept;
    }
    let slice = |s: usize| &keys[start[s]..start[s] + len[s]];

    let mut order_of_slices: Vec<usize> = (0..size).collect();
    // Stable: equal slices keep their current order.
    order_of_slices.sort_by(|&a, &b| decreasing_lexicographic(slice(a), slice(b)));
    Permutation::from_new_to_old(order_of_slices)
}

/// How two slices (sorted positions of their entries) compare as 0/1
/// vectors in decreasing order: the one with an entry first comes first.
fn decreasing_lexicographic(a: &[usize], b: &[usize]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return x.cmp(y);
        }
    }
    // One is a prefix of the other: the longer has an entry where the
    // shorter has none, so it is the larger vector and comes first.
    b.len().cmp(&a.len())
}

/// The rank of each entry's tuple of other-mode coordinates among all such
/// tuples (lexicographic in mode order, equal tuples equal ranks). For a
/// matrix this is just the other coordinate.
fn other_mode_ranks(coords: &[u64], order: usize, mode: usize) -> Vec<usize> {
    let entries = coords.len() / order.max(1);
    let entry = |e: usize| &coords[e * order..(e + 1) * order];
    if order == 2 {
        return (0..entries).map(|e| entry(e)[1 - mode] as usize).collect();
    }
    let others = |e: usize| {
        entry(e)
            .iter()
            .enumerate()
            .filter(move |&(m, _)| m != mode)
            .map(|(_, &c)| c)
    };
    let mut by_tuple: Vec<usize> = (0..entries).collect();
    by_tuple.sort_unstable_by(|&a, &b| others(a).cmp(others(b)));
    let mut ranks = vec![0usize; entries];
    let mut rank = 0;
    for k in 0..by_tuple.len() {
        if k > 0 && others(by_tuple[k - 1]).ne(others(by_tuple[k])) {
            rank += 1;
        }
        ranks[by_tuple[k]] = rank;
    }
    ranks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(shape: [usize; 2], entries: &[(u64, u64)]) -> CoordinateList<f64> {
        let mut list = CoordinateList::new(&shape);
        for &(i, j) in entries {
            list.push(&[i, j], 1.0).unwrap();
        }
        list.canonicalize();
        list
    }

    #[test]
    fn slices_compare_as_decreasing_zero_one_vectors() {
        assert_eq!(decreasing_lexicographic(&[0, 5], &[1]), Ordering::Less);
        assert_eq!(decreasing_lexicographic(&[1, 2], &[1]), Ordering::Less);
        assert_eq!(decreasing_lexicographic(&[], &[7]), Ordering::Greater);
        assert_eq!(decreasing_lexicographic(&[3], &[3]), Ordering::Equal);
    }

    #[test]
    fn a_doubly_lexical_matrix_is_a_fixed_point() {
        // Rows {0,1,2}, {0,1}, {0}: decreasing, and so are the columns.
        let a = matrix([3, 3], &[(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (2, 0)]);
        let perms = lexi_order(&a, LEXI_ROUNDS).unwrap();
        assert!(perms.iter().all(Permutation::is_identity));
    }

    #[test]
    fn the_converged_order_is_a_fixed_point() {
        // A lower bidiagonal matrix is not doubly lexical (row 1 holds more
        // than row 0 after their common entry); once ordered, it is.
        let a = matrix(
            [4, 4],
            &[(0, 0), (1, 0), (1, 1), (2, 1), (2, 2), (3, 2), (3, 3), (0, 3)],
        );
        let perms = lexi_order(&a, 100).unwrap();
        assert!(!perms.iter().all(Permutation::is_identity));
        let mut b = CoordinateList::new(&[4, 4]);
        for (c, v) in a.iter() {
            b.push(
                &[
                    perms[0].new_of(c[0] as usize) as u64,
                    perms[1].new_of(c[1] as usize) as u64,
                ],
                v,
            )
            .unwrap();
        }
        b.canonicalize();
        assert!(lexi_order(&b, 1).unwrap().iter().all(Permutation::is_identity));
    }

    #[test]
    fn empty_rows_and_columns_go_last() {
        let a = matrix([3, 3], &[(2, 2)]);
        let perms = lexi_order(&a, LEXI_ROUNDS).unwrap();
        assert_eq!(perms[0].old_of(0), 2);
        assert_eq!(perms[1].old_of(0), 2);
    }

    #[test]
    fn third_order_tensors_order_every_mode() {
        let mut t = CoordinateList::new(&[2, 2, 2]);
        t.push(&[1, 1, 1], 1.0).unwrap();
        t.push(&[1, 1, 0], 1.0).unwrap();
        let perms = lexi_order(&t, LEXI_ROUNDS).unwrap();
        assert_eq!(perms[0].old_of(0), 1);
        assert_eq!(perms[1].old_of(0), 1);
        // Mode 2: both coordinates hold one entry, under the same (row, column).
        assert_eq!(perms[2].len(), 2);
    }
}
