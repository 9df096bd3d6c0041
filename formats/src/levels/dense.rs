//! Dense level: every coordinate `0..N` below each parent, at position
//! `parent * N + coord`. Stores no arrays, only its extent `N`.

use crate::error::{FormatError, Result};
use crate::level::{checked_positions, Footprint, Level, LevelCounts, PackInput, Packed, Segment};
use crate::properties::{Assembly, Capabilities, CoordinateRelation, Iteration, Properties};
use crate::staging::{Builder, LevelRef, Param};
use crate::tensor::LevelStorage;

/// The dense level format.
#[derive(Debug, Clone, Copy, Default)]
pub struct Dense;

impl Level for Dense {
    fn name(&self) -> &'static str {
        "dense"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            iteration: Iteration::CoordinateValue,
            locate: true,
            assembly: Some(Assembly::Insert),
        }
    }
    fn properties(&self) -> Properties {
        Properties {
            full: true,
            ordered: true,
            unique: true,
            branchless: false,
            compact: true,
        }
    }

    fn coord_iter<B: Builder>(&self, b: &mut B, lv: LevelRef, _ancestors: &[B::Int]) -> (B::Int, B::Int) {
        let zero = b.int(0);
        let n = b.param(lv, Param::Extent);
        (zero, n)
    }
    fn coord_access<B: Builder>(
        &self,
        b: &mut B,
        lv: LevelRef,
        parent: B::Int,
        ancestors: &[B::Int],
        coord: B::Int,
    ) -> (B::Int, B::Bool) {
        self.locate(b, lv, parent, ancestors, coord)
    }
    fn locate<B: Builder>(
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

    fn size<B: Builder>(&self, b: &mut B, lv: LevelRef, parent_size: B::Int) -> B::Int {
        let n = b.param(lv, Param::Extent);
        b.mul(parent_size, n)
    }
    // A dense level's positions are implied by coordinates: nothing to write.
    fn insert_init<B: Builder>(&self, _b: &mut B, _lv: LevelRef, _parent_size: B::Int, _size: B::Int) {}
    fn insert_coord<B: Builder>(&self, _b: &mut B, _lv: LevelRef, _pos: B::Int, _coord: B::Int) {}
    fn insert_finalize<B: Builder>(&self, _b: &mut B, _lv: LevelRef, _parent_size: B::Int, _size: B::Int) {}

    fn coordinate_relation(&self) -> CoordinateRelation {
        // `locate` is `parent · N + coord`.
        CoordinateRelation::Positional
    }

    fn footprint(&self, counts: &LevelCounts) -> Option<Footprint> {
        // Every coordinate below every parent, and no arrays.
        Some(Footprint {
            positions: counts.parents * counts.extent,
            bytes: 0,
        })
    }

    fn pack(&self, input: &PackInput<'_>) -> Result<Packed> {
        let n = input.extent;
        // Refused before `positions` is allocated, not after.
        let what = || {
            format!(
                "dense level {} of {} x {} positions",
                input.level,
                input.parents.len(),
                n
            )
        };
        let size = checked_positions(what, input.parents.len(), n)?;
        let coords = &input.coords[input.level];
        let mut positions = vec![Segment::default(); size];
        for (parent, seg) in input.parents.iter().enumerate() {
            let mut e = seg.start;
            while e < seg.end {
                let c = coords[e] as usize;
                let run_start = e;
                while e < seg.end && coords[e] as usize == c {
                    e += 1;
                }
                positions[parent * n + c] = Segment::new(run_start, e);
            }
        }
        Ok(Packed {
            storage: LevelStorage::new(n),
            positions: Some(positions),
        })
    }

    fn positions(&self, storage: &LevelStorage, parent_size: usize, _: usize, _: Option<usize>) -> usize {
        parent_size * storage.extent
    }
    fn validate(
        &self,
        storage: &LevelStorage,
        parent_size: usize,
        level: usize,
        _next_extent: Option<usize>,
    ) -> Result<usize> {
        if !storage.arrays.is_empty() {
            return Err(FormatError::level(level, "dense", "a dense level stores no arrays"));
        }
        parent_size.checked_mul(storage.extent).ok_or_else(|| {
            FormatError::TooLarge(format!(
                "dense level {level} would hold {parent_size} x {} positions",
                storage.extent
            ))
        })
    }
}
