//! Data reordering: a permutation of each mode's coordinates that gathers a
//! tensor's entries (towards the diagonal, or by weight), so that kernels
//! touch memory with more locality — COMET's data reordering.
//!
//! Takes a [`CoordinateList`] or [`Tensor`]; gives [`ModePermutations`], one
//! optional [`Permutation`] per mode, which apply to the tensor (and to any
//! other tensor indexed by the same index variables) and undo exactly.
//! Three orderings ([`Method`]):
//! - [`lexi_order`] (COMET's LexiOrder: doubly lexical by iteration; every
//!   mode, any order),
//! - [`rcm_order`] (reverse Cuthill–McKee of the symmetric structure, one
//!   permutation for rows and columns; square matrices),
//! - [`degree_order`] (each mode by slice weight, heaviest first).
//!
//! [`band_profile`] measures a matrix's bandwidth and profile, the numbers
//! an ordering is judged by; [`save_permutations`] / [`load_permutations`]
//! keep a reordering for later runs.
//!
//! ```
//! use tessera_formats::reorder::{band_profile, order_entries, Method};
//! use tessera_formats::CoordinateList;
//! // A path 0 - 3 - 1 - 4 - 2 whose vertices are numbered out of order.
//! let mut a = CoordinateList::new(&[5, 5]);
//! for (i, j) in [(0, 3), (3, 1), (1, 4), (4, 2)] {
//!     a.push(&[i, j], 1.0).unwrap();
//!     a.push(&[j, i], 1.0).unwrap();
//! }
//! let perms = order_entries(&a, Method::Rcm).unwrap();
//! let b = perms.apply(&a).unwrap();
//! assert_eq!(band_profile(&a).unwrap().bandwidth, 3);
//! assert_eq!(band_profile(&b).unwrap().bandwidth, 1);
//! assert_eq!(perms.inverse().apply(&b).unwrap().pruned(), a.pruned());
//! ```

mod degree;
mod file;
mod lexi;
mod permutation;
mod rcm;
mod stats;

use std::fmt;
use std::str::FromStr;

pub use degree::degree_order;
pub use file::{load_permutations, parse_permutations, save_permutations, write_permutations_to};
pub use lexi::{lexi_order, LEXI_ROUNDS};
pub use permutation::Permutation;
pub use rcm::rcm_order;
pub use stats::{band_profile, BandProfile};

use crate::coordinates::CoordinateList;
use crate::error::{FormatError, Result};
use crate::tensor::Tensor;
use crate::value::Value;

/// An ordering algorithm, named on the command line by [`Method::name`].
///
/// ```
/// use tessera_formats::reorder::Method;
/// assert_eq!("RCM".parse::<Method>().unwrap(), Method::Rcm);
/// assert!("metis".parse::<Method>().unwrap_err().contains("lexi, rcm, degree"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// COMET's lexi-order: every mode sorted so its slices are in
    /// decreasing lexicographic order, modes in turn ([`lexi_order`]).
    Lexi,
    /// Reverse Cuthill–McKee of the symmetric structure: one permutation
    /// for rows and columns of a square matrix ([`rcm_order`]).
    Rcm,
    /// Each mode by the number of entries of its slices, heaviest first
    /// ([`degree_order`]).
    Degree,
}

impl Method {
    /// Every method, in the order help texts list them.
    pub const ALL: [Method; 3] = [Method::Lexi, Method::Rcm, Method::Degree];

    /// The method's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Method::Lexi => "lexi",
            Method::Rcm => "rcm",
            Method::Degree => "degree",
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for Method {
    type Err = String;
    fn from_str(text: &str) -> std::result::Result<Self, String> {
        let text = text.trim();
        Method::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(text))
            .ok_or_else(|| {
                format!(
                    "`{text}` is not a reordering method (expected {})",
                    Method::ALL.map(Method::name).join(", ")
                )
            })
    }
}

/// One optional permutation per mode of a tensor of a given shape; `None`
/// keeps that mode's order.
///
/// ```
/// use tessera_formats::reorder::{ModePermutations, Permutation};
/// use tessera_formats::{CoordinateList, Format, Tensor};
/// let reverse = Permutation::from_new_to_old(vec![1, 0]).unwrap();
/// let perms = ModePermutations::new(&[2, 3], vec![Some(reverse), None]).unwrap();
/// let mut a = CoordinateList::new(&[2, 3]);
/// a.push(&[0, 2], 5.0).unwrap();
/// let b = perms.apply_to_tensor(&Tensor::pack(&a, Format::csr()).unwrap()).unwrap();
/// assert_eq!(b.to_coordinates().coords(0), &[1, 2]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModePermutations {
    shape: Vec<usize>,
    modes: Vec<Option<Permutation>>,
}

impl ModePermutations {
    /// Permutations of a tensor of `shape`, one per mode, each the size of
    /// its mode.
    pub fn new(shape: &[usize], modes: Vec<Option<Permutation>>) -> Result<Self> {
        if modes.len() != shape.len() {
            return Err(FormatError::Shape(format!(
                "{} mode permutations for a tensor of order {}",
                modes.len(),
                shape.len()
            )));
        }
        for (mode, (p, &size)) in modes.iter().zip(shape).enumerate() {
            if let Some(p) = p.as_ref().filter(|p| p.len() != size) {
                return Err(FormatError::Shape(format!(
                    "the permutation of mode {mode} has {} coordinates, the mode has {size}",
                    p.len()
                )));
            }
        }
        Ok(ModePermutations {
            shape: shape.to_vec(),
            modes,
        })
    }

    /// No mode permuted.
    pub fn unchanged(shape: &[usize]) -> Self {
        ModePermutations {
            shape: shape.to_vec(),
            modes: vec![None; shape.len()],
        }
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }
    pub fn order(&self) -> usize {
        self.shape.len()
    }
    /// Each mode's permutation, `None` where the mode keeps its order.
    pub fn modes(&self) -> &[Option<Permutation>] {
        &self.modes
    }
    /// Mode `mode`'s permutation, if it is permuted.
    pub fn mode(&self, mode: usize) -> Option<&Permutation> {
        self.modes.get(mode).and_then(Option::as_ref)
    }

    /// Whether no coordinate of any mode moves.
    pub fn is_identity(&self) -> bool {
        self.modes.iter().flatten().all(Permutation::is_identity)
    }

    /// The permutations that undo these.
    #[must_use]
    pub fn inverse(&self) -> ModePermutations {
        ModePermutations {
            shape: self.shape.clone(),
            modes: self
                .modes
                .iter()
                .map(|p| p.as_ref().map(Permutation::inverse))
                .collect(),
        }
    }

    fn check_shape(&self, shape: &[usize]) -> Result<()> {
        if shape != self.shape.as_slice() {
            return Err(FormatError::Shape(format!(
                "permutations for shape {:?} applied to a tensor of shape {shape:?}",
                self.shape
            )));
        }
        Ok(())
    }

    /// The entries with every coordinate moved to its new place (entry
    /// order and values kept).
    pub fn apply<V: Value>(&self, entries: &CoordinateList<V>) -> Result<CoordinateList<V>> {
        self.check_shape(entries.shape())?;
        let mut out = CoordinateList::with_capacity(entries.shape(), entries.len())?;
        let mut c = vec![0u64; entries.order()];
        for (old, v) in entries.iter() {
            for (mode, (new, &o)) in c.iter_mut().zip(old).enumerate() {
                *new = match &self.modes[mode] {
                    Some(p) => p.new_of(o as usize) as u64,
                    None => o,
                };
            }
            out.push_unchecked(&c, v);
        }
        Ok(out)
    }

    /// The tensor with its coordinates permuted, in the same format (its
    /// nonzeros, as [`Tensor::convert`] keeps them).
    pub fn apply_to_tensor<V: Value>(&self, tensor: &Tensor<V>) -> Result<Tensor<V>> {
        self.check_shape(tensor.shape())?;
        if self.is_identity() {
            return Ok(tensor.clone());
        }
        if *tensor.format() == crate::format::Format::dense(tensor.order()) {
            return self.apply_to_dense(tensor);
        }
        let moved = self.apply(&tensor.to_coordinates())?;
        // Packing sorts what is not sorted; a counting sort by the new
        // coordinates is cheaper where the modes are not much larger than
        // the entries (pack then takes the list as it is).
        let moved = sorted_by_counting(&moved).unwrap_or(moved);
        Tensor::pack(&moved, tensor.format().clone())
    }

    /// A dense tensor in row-major order ([`Tensor::from_dense`]'s layout)
    /// permuted by moving its values, without a coordinate list: dense
    /// operands (`x` of SpMV, `X` of SpMM) and dense results are permuted
    /// at the cost of one copy.
    fn apply_to_dense<V: Value>(&self, tensor: &Tensor<V>) -> Result<Tensor<V>> {
        let shape = tensor.shape();
        let old = tensor.values();
        let mut new = vec![V::zero(); old.len()];
        // Walk the new coordinates in row-major order (an odometer), finding
        // each one's old position from the old coordinates' strides.
        let mut strides = vec![1usize; shape.len()];
        for m in (0..shape.len().saturating_sub(1)).rev() {
            strides[m] = strides[m + 1] * shape[m + 1];
        }
        let old_of = |m: usize, c: usize| self.modes[m].as_ref().map_or(c, |p| p.old_of(c));
        let mut coords = vec![0usize; shape.len()];
        for value in new.iter_mut() {
            let at: usize = (0..shape.len()).map(|m| old_of(m, coords[m]) * strides[m]).sum();
            *value = old[at];
            for m in (0..shape.len()).rev() {
                coords[m] += 1;
                if coords[m] < shape[m] {
                    break;
                }
                coords[m] = 0;
            }
        }
        Tensor::from_dense(shape, new)
    }
}

/// `entries` sorted lexicographically by coordinates (stable), by one
/// counting sort per mode, last mode first; `None` when a mode is so much
/// larger than the list (hypersparse) that its counts would cost more than
/// a comparison sort.
fn sorted_by_counting<V: Value>(entries: &CoordinateList<V>) -> Option<CoordinateList<V>> {
    let n = entries.len();
    let bound = n.saturating_mul(4).max(1 << 16);
    if entries.shape().iter().any(|&size| size > bound) {
        return None;
    }
    let mut order: Vec<usize> = (0..n).collect();
    let mut next = vec![0usize; n];
    for mode in (0..entries.order()).rev() {
        let size = entries.shape()[mode];
        let mut start = vec![0usize; size + 1];
        for e in 0..n {
            start[entries.coords(e)[mode] as usize + 1] += 1;
        }
        for k in 0..size {
            start[k + 1] += start[k];
        }
        for &e in &order {
            let c = entries.coords(e)[mode] as usize;
            next[start[c]] = e;
            start[c] += 1;
        }
        std::mem::swap(&mut order, &mut next);
    }
    let mut sorted = CoordinateList::with_capacity(entries.shape(), n).ok()?;
    for e in order {
        sorted.push_unchecked(entries.coords(e), entries.value(e));
    }
    Some(sorted)
}

/// The permutations `method` gives the modes of `entries` (any order,
/// duplicates allowed). Refused: [`Method::Rcm`] for anything but a square
/// matrix, and modes too large to hold a permutation of.
///
/// ```
/// use tessera_formats::reorder::{order_entries, Method};
/// use tessera_formats::CoordinateList;
/// let mut a = CoordinateList::new(&[2, 3]);
/// a.push(&[1, 0], 1.0).unwrap();
/// let perms = order_entries(&a, Method::Degree).unwrap();
/// // Row 1 and column 0 hold the entry: they come first.
/// assert_eq!(perms.apply(&a).unwrap().coords(0), &[0, 0]);
/// assert!(order_entries(&a, Method::Rcm).is_err()); // not square
/// ```
pub fn order_entries<V: Value>(entries: &CoordinateList<V>, method: Method) -> Result<ModePermutations> {
    let canonical;
    let entries = if entries.is_canonical() {
        entries
    } else {
        let mut list = entries.clone();
        list.canonicalize();
        canonical = list;
        &canonical
    };
    let modes = match method {
        Method::Lexi => lexi_order(entries, LEXI_ROUNDS)?.into_iter().map(Some).collect(),
        Method::Rcm => {
            let p = rcm_order(entries)?;
            vec![Some(p.clone()), Some(p)]
        }
        Method::Degree => (0..entries.order())
            .map(|mode| degree_order(entries, mode).map(Some))
            .collect::<Result<_>>()?,
    };
    ModePermutations::new(entries.shape(), modes)
}

/// The bandwidth and profile `entries` (a matrix) would have after
/// reordering by `method`: for `tessera info` and other reports that
/// compare orderings without keeping the reordered matrix.
///
/// ```
/// use tessera_formats::reorder::{band_profile, band_profile_after, Method};
/// use tessera_formats::CoordinateList;
/// let mut a = CoordinateList::new(&[4, 4]);
/// for (i, j) in [(0, 3), (3, 0), (1, 2), (2, 1)] {
///     a.push(&[i, j], 1.0).unwrap();
/// }
/// assert_eq!(band_profile(&a).unwrap().bandwidth, 3);
/// assert_eq!(band_profile_after(&a, Method::Rcm).unwrap().bandwidth, 1);
/// ```
pub fn band_profile_after<V: Value>(entries: &CoordinateList<V>, method: Method) -> Result<BandProfile> {
    band_profile(&order_entries(entries, method)?.apply(entries)?)
}

/// [`order_entries`] of a tensor's nonzeros.
pub fn order_tensor<V: Value>(tensor: &Tensor<V>, method: Method) -> Result<ModePermutations> {
    order_entries(&tensor.to_coordinates(), method)
}
