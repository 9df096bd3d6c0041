//! One mode's permutation: which old coordinate each new coordinate holds,
//! and back. Valid by construction (every coordinate exactly once), so the
//! code that applies it never checks again.

use crate::coordinates::MAX_POSITIONS;
use crate::error::{FormatError, Result};

/// A permutation of the coordinates `0..len` of one mode.
///
/// `old_of(new)` is the coordinate of the original tensor that the
/// reordered tensor holds at `new`; `new_of(old)` is where an original
/// coordinate went. Both directions are stored, so either costs one load.
///
/// ```
/// use tessera_formats::reorder::Permutation;
/// let p = Permutation::from_new_to_old(vec![2, 0, 1]).unwrap();
/// assert_eq!(p.old_of(0), 2);
/// assert_eq!(p.new_of(2), 0);
/// assert_eq!(p.inverse().old_of(2), 0);
/// assert!(Permutation::from_new_to_old(vec![0, 0, 1]).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Permutation {
    new_to_old: Vec<usize>,
    old_to_new: Vec<usize>,
}

impl Permutation {
    /// The permutation that keeps every coordinate of a mode of size `len`.
    pub fn identity(len: usize) -> Result<Self> {
        check_len(len)?;
        let ids: Vec<usize> = (0..len).collect();
        Ok(Permutation {
            new_to_old: ids.clone(),
            old_to_new: ids,
        })
    }

    /// A permutation from the old coordinate of each new coordinate,
    /// checking that every coordinate of `0..len` appears exactly once.
    pub fn from_new_to_old(new_to_old: Vec<usize>) -> Result<Self> {
        check_len(new_to_old.len())?;
        let len = new_to_old.len();
        let mut old_to_new = vec![usize::MAX; len];
        for (new, &old) in new_to_old.iter().enumerate() {
            if old >= len {
                return Err(FormatError::Shape(format!(
                    "a permutation of {len} coordinates maps {new} to {old}, outside 0..{len}"
                )));
            }
            if old_to_new[old] != usize::MAX {
                return Err(FormatError::Shape(format!(
                    "a permutation of {len} coordinates holds coordinate {old} twice (at {} and {new})",
                    old_to_new[old]
                )));
            }
            old_to_new[old] = new;
        }
        Ok(Permutation { new_to_old, old_to_new })
    }

    /// The permutation that puts coordinate `old` at `new_of_old[old]`.
    pub fn from_old_to_new(new_of_old: Vec<usize>) -> Result<Self> {
        Ok(Self::from_new_to_old(new_of_old)?.inverse())
    }

    /// The number of coordinates it permutes (the mode's size).
    pub fn len(&self) -> usize {
        self.new_to_old.len()
    }

    /// Whether the mode has no coordinates.
    pub fn is_empty(&self) -> bool {
        self.new_to_old.is_empty()
    }

    /// The original coordinate held at `new`.
    #[inline]
    pub fn old_of(&self, new: usize) -> usize {
        self.new_to_old[new]
    }

    /// Where the original coordinate `old` went.
    #[inline]
    pub fn new_of(&self, old: usize) -> usize {
        self.old_to_new[old]
    }

    /// Old coordinates in new order.
    pub fn new_to_old(&self) -> &[usize] {
        &self.new_to_old
    }

    /// New coordinates in old order.
    pub fn old_to_new(&self) -> &[usize] {
        &self.old_to_new
    }

    /// The permutation that undoes this one.
    #[must_use]
    pub fn inverse(&self) -> Permutation {
        Permutation {
            new_to_old: self.old_to_new.clone(),
            old_to_new: self.new_to_old.clone(),
        }
    }

    /// Whether it keeps every coordinate where it is.
    pub fn is_identity(&self) -> bool {
        self.new_to_old.iter().enumerate().all(|(new, &old)| new == old)
    }
}

/// Permutations are held densely (two words per coordinate): refuse modes
/// larger than a tensor may have positions.
fn check_len(len: usize) -> Result<()> {
    if len > MAX_POSITIONS {
        return Err(FormatError::TooLarge(format!(
            "a permutation of a mode of size {len} (reordering holds one entry per coordinate, at most {MAX_POSITIONS})"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_undoes_the_permutation() {
        let p = Permutation::from_new_to_old(vec![3, 1, 0, 2]).unwrap();
        let q = p.inverse();
        for old in 0..4 {
            assert_eq!(q.new_of(p.new_of(old)), old);
        }
        assert_eq!(Permutation::from_old_to_new(vec![3, 1, 0, 2]).unwrap(), q);
    }

    #[test]
    fn out_of_range_and_repeated_coordinates_are_refused() {
        let e = Permutation::from_new_to_old(vec![0, 3, 1]).unwrap_err().to_string();
        assert!(e.contains("maps 1 to 3"), "{e}");
        let e = Permutation::from_new_to_old(vec![1, 0, 1]).unwrap_err().to_string();
        assert!(e.contains("coordinate 1 twice"), "{e}");
        assert!(Permutation::identity(0).unwrap().is_empty());
    }
}
