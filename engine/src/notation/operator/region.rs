//! Explicit iteration algebras: where a callback operator is computed, as
//! unions, intersections and complements of where its arguments are
//! present (TACO's custom operators).
//!
//! tessera's meaning is by value, as everywhere else: an argument is
//! present where it differs from the operator's absent value, and outside
//! its region the operator has that value. The region is enforced in the
//! operator's function itself, so every tier and the dense reference agree
//! by construction, and the sides whose absence empties the region become
//! annihilators, from which the merge lattices follow.

use std::ops;
use std::sync::Arc;

use super::OperatorFn;

/// Where an operator is computed, by which arguments are present.
///
/// ```
/// use tessera_engine::notation::Region;
/// let difference = Region::arg(0) & !Region::arg(1);
/// assert!(difference.contains(&[true, false]));
/// assert!(!difference.contains(&[true, true]));
/// assert!((Region::arg(0) | Region::arg(1)).contains(&[false, true]));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Region {
    /// Where argument `k` (from 0) is present.
    Arg(usize),
    /// Where the inner region is not.
    Complement(Box<Region>),
    /// Where both are.
    Intersection(Box<Region>, Box<Region>),
    /// Where either is.
    Union(Box<Region>, Box<Region>),
}

impl Region {
    /// Where argument `k` (from 0) is present.
    pub fn arg(k: usize) -> Region {
        Region::Arg(k)
    }

    /// Whether the region holds where the arguments' presence is `present`.
    pub fn contains(&self, present: &[bool]) -> bool {
        match self {
            Region::Arg(k) => present.get(*k).copied().unwrap_or(false),
            Region::Complement(r) => !r.contains(present),
            Region::Intersection(a, b) => a.contains(present) && b.contains(present),
            Region::Union(a, b) => a.contains(present) || b.contains(present),
        }
    }

    /// The largest argument number the region names.
    pub(super) fn max_arg(&self) -> usize {
        match self {
            Region::Arg(k) => *k,
            Region::Complement(r) => r.max_arg(),
            Region::Intersection(a, b) | Region::Union(a, b) => a.max_arg().max(b.max_arg()),
        }
    }

    /// Whether the region lies where argument `k` is present: every
    /// presence of the `arity` arguments without it is outside.
    pub(super) fn needs(&self, k: usize, arity: usize) -> bool {
        (0u32..1 << arity).all(|bits| {
            let present: Vec<bool> = (0..arity).map(|a| bits >> a & 1 == 1).collect();
            present[k] || !self.contains(&present)
        })
    }

    /// `f` computed inside the region and `absent` outside it.
    pub(super) fn restrict(&self, f: OperatorFn, arity: usize, absent: f64) -> OperatorFn {
        let region = self.clone();
        let is_absent = move |v: f64| v == absent || v.is_nan() && absent.is_nan();
        Arc::new(move |args: &[f64]| {
            let present: smallvec::SmallVec<[bool; 2]> = args[..arity].iter().map(|&v| !is_absent(v)).collect();
            if region.contains(&present) {
                f(args)
            } else {
                absent
            }
        })
    }
}

impl ops::Not for Region {
    type Output = Region;
    fn not(self) -> Region {
        Region::Complement(Box::new(self))
    }
}

impl ops::BitAnd for Region {
    type Output = Region;
    fn bitand(self, rhs: Region) -> Region {
        Region::Intersection(Box::new(self), Box::new(rhs))
    }
}

impl ops::BitOr for Region {
    type Output = Region;
    fn bitor(self, rhs: Region) -> Region {
        Region::Union(Box::new(self), Box::new(rhs))
    }
}
