//! Reverse Cuthill–McKee: one permutation for the rows and the columns of
//! a square matrix, from a breadth-first search of its symmetric structure
//! (the pattern of `A + Aᵀ`), which narrows the band around the diagonal.
//!
//! The search itself is `sprs::linalg::reverse_cuthill_mckee`: George and
//! Liu's pseudo-peripheral starting vertex for every connected component,
//! neighbours by increasing degree, the order reversed. This module only
//! builds the symmetric pattern sprs takes (sorted, no duplicates, no
//! diagonal) and reads the permutation back.

use sprs::CsMatI;

use crate::coordinates::CoordinateList;
use crate::error::{FormatError, Result};
use crate::value::Value;

use super::permutation::Permutation;

/// The reverse Cuthill–McKee ordering of a square matrix's symmetric
/// structure: the one permutation of both its modes. A structure that is
/// not symmetric is symmetrized (`A + Aᵀ`); rectangular matrices and other
/// orders are refused, since a shared row and column order needs rows and
/// columns to be the same set.
///
/// ```
/// use tessera_formats::reorder::rcm_order;
/// use tessera_formats::CoordinateList;
/// // The path 0 - 2 - 1, stored symmetric.
/// let mut a = CoordinateList::new(&[3, 3]);
/// for (i, j) in [(0, 2), (2, 0), (2, 1), (1, 2)] {
///     a.push(&[i, j], 1.0).unwrap();
/// }
/// let p = rcm_order(&a).unwrap();
/// // Neighbours end up next to each other: 2 sits between 0 and 1.
/// assert_eq!(p.new_of(2), 1);
/// ```
pub fn rcm_order<V: Value>(entries: &CoordinateList<V>) -> Result<Permutation> {
    let shape = entries.shape();
    if shape.len() != 2 || shape[0] != shape[1] {
        return Err(FormatError::Shape(format!(
            "reverse Cuthill-McKee orders the symmetric structure of a square matrix, not a tensor of shape {} \
             (use lexi or degree, which order each mode by itself)",
            shape.iter().map(usize::to_string).collect::<Vec<_>>().join("x")
        )));
    }
    let n = shape[0];
    // Refuse sizes a permutation cannot hold before building the graph.
    Permutation::identity(n)?;
    let (indptr, indices) = symmetric_pattern(entries, n);
    let data = vec![(); indices.len()];
    let graph = CsMatI::<(), usize>::try_new((n, n), indptr, indices, data).map_err(|(_, _, _, e)| {
        FormatError::Shape(format!("the symmetric pattern sprs was given is malformed: {e}"))
    })?;
    let ordering = sprs::linalg::reverse_cuthill_mckee(graph.view());
    Permutation::from_new_to_old(ordering.perm.vec())
}

/// The compressed rows of the pattern of `A + Aᵀ` without the diagonal,
/// each row sorted and without duplicates.
fn symmetric_pattern<V: Value>(entries: &CoordinateList<V>, n: usize) -> (Vec<usize>, Vec<usize>) {
    let mut indptr = vec![0usize; n + 1];
    for (c, _) in entries.iter() {
        if c[0] != c[1] {
            indptr[c[0] as usize + 1] += 1;
            indptr[c[1] as usize + 1] += 1;
        }
    }
    for k in 0..n {
        indptr[k + 1] += indptr[k];
    }
    let mut fill = indptr.clone();
    let mut indices = vec![0usize; indptr[n]];
    for (c, _) in entries.iter() {
        let (i, j) = (c[0] as usize, c[1] as usize);
        if i != j {
            indices[fill[i]] = j;
            fill[i] += 1;
            indices[fill[j]] = i;
            fill[j] += 1;
        }
    }
    // Sort and dedup each row in place, compacting as we go.
    let mut out = 0;
    let mut row_start = 0;
    for row in 0..n {
        let end = indptr[row + 1];
        let slice = &mut indices[row_start..end];
        slice.sort_unstable();
        let begin = out;
        for k in row_start..end {
            let v = indices[k];
            if out == begin || indices[out - 1] != v {
                indices[out] = v;
                out += 1;
            }
        }
        row_start = end;
        indptr[row + 1] = out;
    }
    indices.truncate(out);
    (indptr, indices)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_symmetric_pattern_is_sorted_without_duplicates_or_diagonal() {
        let mut a = CoordinateList::new(&[3, 3]);
        for (i, j) in [(0, 2), (2, 0), (1, 1), (0, 1), (0, 2)] {
            a.push(&[i, j], 1.0).unwrap();
        }
        let (indptr, indices) = symmetric_pattern(&a, 3);
        assert_eq!(indptr, vec![0, 2, 3, 4]);
        assert_eq!(indices, vec![1, 2, 0, 0]);
    }

    #[test]
    fn rectangular_matrices_are_refused() {
        let a = CoordinateList::<f64>::new(&[2, 3]);
        let e = rcm_order(&a).unwrap_err().to_string();
        assert!(e.contains("square matrix") && e.contains("2x3"), "{e}");
    }
}
