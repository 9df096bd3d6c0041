//! Range level: the rows of DIA. Below diagonal `d` (the parent coordinate,
//! an index into the `offset` array) it holds every row `i` with
//! `max(0, -offset[d]) <= i < min(N, M - offset[d])`, at position `d*N + i`.
//! Positions outside those bounds exist but hold no coordinate (not compact).
//!
//! Arrays: `offset` (signed). `N` is the level's extent (rows) and `M` the
//! extent of the offset level below (columns).

use crate::error::{FormatError, Result};
use crate::index::IndexArray;
use crate::level::{checked_positions, Footprint, Level, LevelCounts, PackInput, Packed, Segment};
use crate::properties::{Capabilities, CoordinateRelation, Iteration, Properties};
use crate::staging::{Builder, LevelRef, Param};
use crate::tensor::LevelStorage;

/// Slot of the offset array, which the offset level below also reads.
pub const OFFSET: u8 = 0;

/// The range level format.
#[derive(Debug, Clone, Copy, Default)]
pub struct Range;

impl Level for Range {
    fn name(&self) -> &'static str {
        "range"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            iteration: Iteration::CoordinateValue,
            locate: false,
            assembly: None,
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
        let offset = b.load(lv.array(OFFSET), diagonal);
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
        _ancestors: &[B::Int],
        coord: B::Int,
    ) -> (B::Int, B::Bool) {
        let n = b.param(lv, Param::Extent);
        let base = b.mul(parent, n);
        let pos = b.add(base, coord);
        let found = b.bool_const(true);
        (pos, found)
    }

    fn coordinate_relation(&self) -> CoordinateRelation {
        // `coord_access` is `parent · N + coord`.
        CoordinateRelation::Positional
    }

    fn footprint(&self, counts: &LevelCounts) -> Option<Footprint> {
        // One signed offset per parent, and every coordinate below it.
        Some(Footprint {
            positions: counts.parents * counts.extent,
            bytes: counts.parents * 8,
        })
    }

    fn pack(&self, input: &PackInput<'_>) -> Result<Packed> {
        let n = input.extent;
        let rows = &input.coords[input.level];
        let cols = &input.coords[input.level + 1];
        // Refused before `positions` is allocated, not after.
        let what = || format!("range level of {} x {n} positions", input.parents.len());
        let size = checked_positions(what, input.parents.len(), n)?;
        let mut offsets = Vec::with_capacity(input.parents.len());
        let mut positions = vec![Segment::default(); size];
        for (d, seg) in input.parents.iter().enumerate() {
            let offset = if seg.is_empty() {
                0
            } else {
                cols[seg.start] as i64 - rows[seg.start] as i64
            };
            for e in seg.start..seg.end {
                if cols[e] as i64 - rows[e] as i64 != offset {
                    return Err(FormatError::BadFormat {
                        format: "range".into(),
                        reason: format!("entries of diagonal {d} do not share one offset"),
                    });
                }
                positions[d * n + rows[e] as usize] = Segment::new(e, e + 1);
            }
            offsets.push(offset);
        }
        let mut storage = LevelStorage::new(n);
        storage.arrays.push(IndexArray::I64(offsets));
        Ok(Packed {
            storage,
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
        let err = |reason: String| FormatError::level(level, "range", reason);
        if storage.arrays.len() != 1 {
            return Err(err("expected one offset array".into()));
        }
        let offsets = &storage.arrays[OFFSET as usize];
        if offsets.width() != crate::index::IndexWidth::I64 {
            return Err(err("the offset array must be signed 64-bit".into()));
        }
        if offsets.len() != parent_size {
            return Err(err(format!(
                "offset has {} entries, expected one per diagonal ({parent_size})",
                offsets.len()
            )));
        }
        let n = storage.extent as i64;
        let Some(m) = next_extent else {
            return Err(err("a range level needs an offset level below it".into()));
        };
        let m = m as i64;
        for d in 0..offsets.len() {
            let o = offsets.get(d);
            if o <= -n || o >= m {
                return Err(err(format!("offset[{d}] = {o} selects no entry of a {n} x {m} matrix")));
            }
            if d > 0 && offsets.get(d - 1) >= o {
                return Err(err(format!("offsets are not strictly increasing at offset[{d}] = {o}")));
            }
        }
        parent_size
            .checked_mul(storage.extent)
            .ok_or_else(|| FormatError::TooLarge(format!("range level {level} of {parent_size} x {n} positions")))
    }
}
