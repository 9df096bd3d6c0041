//! Range level: the rows of DIA. Below the diagonal above it, whose
//! coordinate `k` is the offset shifted to be non-negative (`k = j - i +
//! N - 1`, so `offset = k - (N - 1)`), it holds every row `i` with
//! `max(0, -offset) <= i < min(N, M - offset)`, at position `d*N + i` (`d`
//! the diagonal's position). Positions outside those bounds exist but hold
//! no coordinate (not compact).
//!
//! Stores no arrays: `N` is the level's extent (rows) and `M` the extent of
//! the offset level below (columns). Because the offset is the diagonal's
//! coordinate, two matrices' diagonals are merged by coordinate like any
//! other level's.

use crate::error::{FormatError, Result};
use crate::level::{checked_positions, Footprint, Level, LevelCounts, PackInput, Packed, Segment};
use crate::levels::dense::Dense;
use crate::properties::{Assembly, Capabilities, CoordinateRelation, Iteration, Properties};
use crate::staging::{Builder, Cmp, LevelRef, Param};
use crate::tensor::LevelStorage;

/// The range level format.
#[derive(Debug, Clone, Copy, Default)]
pub struct Range;

/// `N - 1`, where `N` is the extent of `range` (a DIA's rows): the shift
/// between a diagonal's coordinate and its offset.
pub(crate) fn diagonal_shift<B: Builder>(b: &mut B, range: LevelRef) -> B::Int {
    let n = b.param(range, Param::Extent);
    b.add_const(n, -1)
}

impl Level for Range {
    fn name(&self) -> &'static str {
        "range"
    }
    fn capabilities(&self) -> Capabilities {
        // `locate` exists, for assembly: a row outside the diagonal's range
        // is not found. Inputs are not located: a loop over every row would
        // visit the rows where the offset level's column lies outside the
        // matrix.
        Capabilities {
            iteration: Iteration::CoordinateValue,
            locate: false,
            assembly: Some(Assembly::Insert),
        }
    }
    fn properties(&self) -> Properties {
        Properties {
            full: false,
            ordered: true,
            unique: true,
            branchless: false,
            compact: false,
        }
    }

    fn coord_iter<B: Builder>(&self, b: &mut B, lv: LevelRef, ancestors: &[B::Int]) -> (B::Int, B::Int) {
        let diagonal = *ancestors.last().expect("a range level always has a diagonal parent");
        let shift = diagonal_shift(b, lv);
        let offset = b.sub(diagonal, shift);
        let zero = b.int(0);
        let minus = b.sub(zero, offset);
        let begin = b.max(zero, minus);
        let n = b.param(lv, Param::Extent);
        let columns = LevelRef {
            operand: lv.operand,
            level: lv.level + 1,
        };
        let m = b.param(columns, Param::Extent);
        let last = b.sub(m, offset);
        let end = b.min(n, last);
        // An empty range must not run backwards.
        let end = b.max(begin, end);
        (begin, end)
    }
    fn coord_access<B: Builder>(
        &self,
        b: &mut B,
        lv: LevelRef,
        parent: B::Int,
        ancestors: &[B::Int],
        coord: B::Int,
    ) -> (B::Int, B::Bool) {
        // Positioned as a dense level's coordinates are.
        Dense.locate(b, lv, parent, ancestors, coord)
    }

    fn locate<B: Builder>(
        &self,
        b: &mut B,
        lv: LevelRef,
        parent: B::Int,
        ancestors: &[B::Int],
        coord: B::Int,
    ) -> (B::Int, B::Bool) {
        let (begin, end) = self.coord_iter(b, lv, ancestors);
        let (pos, _) = self.coord_access(b, lv, parent, ancestors, coord);
        let from = b.compare(Cmp::Le, begin, coord);
        let before = b.compare(Cmp::Lt, coord, end);
        let found = b.and(from, before);
        (pos, found)
    }

    fn size<B: Builder>(&self, b: &mut B, lv: LevelRef, parent_size: B::Int) -> B::Int {
        Dense.size(b, lv, parent_size)
    }
    // Positions are implied by coordinates, as a dense level's: nothing to
    // write; the values of rows outside a diagonal's range stay zero.
    fn insert_init<B: Builder>(&self, _b: &mut B, _lv: LevelRef, _parent_size: B::Int, _size: B::Int) {}
    fn insert_coord<B: Builder>(&self, _b: &mut B, _lv: LevelRef, _pos: B::Int, _coord: B::Int) {}
    fn insert_finalize<B: Builder>(&self, _b: &mut B, _lv: LevelRef, _parent_size: B::Int, _size: B::Int) {}

    fn coordinate_relation(&self) -> CoordinateRelation {
        // `coord_access` is `parent · N + coord`.
        CoordinateRelation::Positional
    }

    fn footprint(&self, counts: &LevelCounts) -> Option<Footprint> {
        // Every coordinate below every diagonal, and no arrays.
        Dense.footprint(counts)
    }

    fn pack(&self, input: &PackInput<'_>) -> Result<Packed> {
        let n = input.extent;
        let rows = &input.coords[input.level];
        // Refused before `positions` is allocated, not after.
        let what = || format!("range level of {} x {n} positions", input.parents.len());
        let size = checked_positions(what, input.parents.len(), n)?;
        let mut positions = vec![Segment::default(); size];
        for (d, seg) in input.parents.iter().enumerate() {
            for e in seg.start..seg.end {
                positions[d * n + rows[e] as usize] = Segment::new(e, e + 1);
            }
        }
        Ok(Packed {
            storage: LevelStorage::new(n),
            positions: Some(positions),
        })
    }

    fn validate(
        &self,
        storage: &LevelStorage,
        parent_size: usize,
        level: usize,
        next_extent: Option<usize>,
    ) -> Result<usize> {
        let err = |reason: &str| FormatError::level(level, "range", reason);
        if !storage.arrays.is_empty() {
            return Err(err(
                "a range level stores no arrays (its diagonal's coordinate is the offset)",
            ));
        }
        if next_extent.is_none() {
            return Err(err("a range level needs an offset level below it"));
        }
        parent_size.checked_mul(storage.extent).ok_or_else(|| {
            FormatError::TooLarge(format!(
                "range level {level} of {parent_size} x {} positions",
                storage.extent
            ))
        })
    }
}
