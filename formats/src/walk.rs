//! The walk over a tensor's stored positions: every labeled position of
//! each level, in the format's iteration order, through the level functions
//! (with plain integers, the [`Immediate`] builder). It takes a format and
//! its levels' storage and gives, one step at a time, the level a position
//! belongs to, its storage coordinates down to that level and its position.
//!
//! [`Tensor::entries`] is this walk turned into tensor coordinates and
//! values; [`Tensor::for_each_stored`] and the validation of chained
//! levels are the same walk, so the protocol is written once.

use smallvec::SmallVec;

use crate::format::{Format, Projection};
use crate::level::Level;
use crate::properties::Iteration;
use crate::staging::{Immediate, LevelRef};
use crate::tensor::{logical_coords, Tensor, TensorLevels};
use crate::value::Value;

/// The loop over one level below one parent position.
#[derive(Debug, Clone, Copy)]
struct Frame {
    iteration: Iteration,
    parent: i64,
    /// The next coordinate (coordinate-value levels) or position
    /// (coordinate-position levels) to visit, and the end of the range.
    next: i64,
    end: i64,
}

/// A depth-first walk over the positions of levels `0..=last`.
pub(crate) struct Walk<'a> {
    format: &'a Format,
    b: Immediate<TensorLevels<'a>>,
    last: usize,
    frames: SmallVec<[Frame; 4]>,
    /// Storage coordinates of the open levels' ancestors, then of the
    /// position last returned.
    coords: SmallVec<[i64; 4]>,
}

impl<'a> Walk<'a> {
    /// A walk down to level `last` of a format with at least one level.
    pub(crate) fn new(format: &'a Format, levels: &'a [crate::tensor::LevelStorage], last: usize) -> Self {
        debug_assert!(last < levels.len() && levels.len() == format.levels().len());
        let mut walk = Walk {
            format,
            b: Immediate::new(TensorLevels(levels)),
            last,
            frames: SmallVec::new(),
            coords: SmallVec::new(),
        };
        walk.open(0, 0);
        walk
    }

    /// Starts the loop over level `k` below position `parent`; the
    /// coordinates of the levels above are in `coords`.
    fn open(&mut self, k: usize, parent: i64) {
        let level = self.format.level(k);
        let lv = LevelRef::new(0, k);
        let iteration = level.capabilities().iteration;
        let (next, end) = match iteration {
            Iteration::CoordinateValue => level.coord_iter(&mut self.b, lv, &self.coords),
            Iteration::CoordinatePosition => level.pos_iter(&mut self.b, lv, parent),
        };
        self.frames.push(Frame {
            iteration,
            parent,
            next,
            end,
        });
    }

    /// The next labeled position: its level and its position there; the
    /// storage coordinates down to it are [`coords`](Self::coords).
    /// Descends below it on the following call when its level is above
    /// `last`.
    pub(crate) fn advance(&mut self) -> Option<(usize, i64)> {
        loop {
            let k = self.frames.len().checked_sub(1)?;
            self.coords.truncate(k);
            let frame = &mut self.frames[k];
            if frame.next >= frame.end {
                self.frames.pop();
                continue;
            }
            let at = frame.next;
            frame.next += 1;
            let Frame { iteration, parent, .. } = *frame;
            let level = self.format.level(k);
            let lv = LevelRef::new(0, k);
            let (coord, pos, found) = match iteration {
                Iteration::CoordinateValue => {
                    let (pos, found) = level.coord_access(&mut self.b, lv, parent, &self.coords, at);
                    (at, pos, found)
                }
                Iteration::CoordinatePosition => {
                    let (coord, found) = level.pos_access(&mut self.b, lv, at, &self.coords);
                    (coord, at, found)
                }
            };
            if !found {
                continue;
            }
            self.coords.push(coord);
            if k < self.last {
                self.open(k + 1, pos);
            }
            return Some((k, pos));
        }
    }

    /// Storage coordinates of the position [`advance`](Self::advance) last
    /// returned, one per level down to its level.
    pub(crate) fn coords(&self) -> &[i64] {
        &self.coords
    }
}

/// The coordinates of one stored entry, as [`Tensor::entries`] gives them:
/// inline up to order 4 (no allocation per entry); it derefs to `&[u64]`.
///
/// ```
/// use tessera_formats::Tensor;
/// let a = Tensor::from_csr([2, 2], &[0, 0, 1], &[1], &[4.0]).unwrap();
/// let (coords, value) = a.entries().next().unwrap();
/// assert_eq!((&coords[..], value), (&[1u64, 1][..], 4.0));
/// ```
pub type Coords = SmallVec<[u64; 4]>;

/// The stored entries of a tensor, in storage order: see
/// [`Tensor::entries`].
#[must_use = "iterators are lazy and do nothing unless consumed"]
pub struct Entries<'a, V> {
    tensor: &'a Tensor<V>,
    walk: Option<Walk<'a>>,
    projections: SmallVec<[Projection; 4]>,
    /// Whether zeros are skipped: in structured formats they are padding.
    skip_zeros: bool,
    /// An order-0 tensor's one value, not yet given.
    scalar: bool,
}

impl<'a, V: Value> Entries<'a, V> {
    pub(crate) fn new(tensor: &'a Tensor<V>) -> Self {
        let format = tensor.format();
        let levels = tensor.levels();
        Entries {
            tensor,
            walk: (!levels.is_empty()).then(|| Walk::new(format, levels, levels.len() - 1)),
            projections: format.levels().iter().map(|l| l.projection).collect(),
            skip_zeros: !format.is_per_mode(),
            scalar: levels.is_empty(),
        }
    }
}

impl<V: Value> Iterator for Entries<'_, V> {
    type Item = (Coords, V);

    fn next(&mut self) -> Option<(Coords, V)> {
        if std::mem::take(&mut self.scalar) {
            return Some((Coords::new(), self.tensor.values()[0]));
        }
        let walk = self.walk.as_mut()?;
        let last = self.projections.len() - 1;
        while let Some((k, pos)) = walk.advance() {
            if k < last {
                continue;
            }
            let value = self.tensor.values()[pos as usize];
            if self.skip_zeros && value.is_zero() {
                continue;
            }
            let mut coords: Coords = smallvec::smallvec![0; self.tensor.order()];
            logical_coords(&self.projections, walk.coords(), &mut coords);
            return Some((coords, value));
        }
        None
    }
}

impl<V: Value> std::iter::FusedIterator for Entries<'_, V> {}
