//! Offset level: the columns of DIA. Each position has one child at the same
//! position, whose coordinate is the row (parent coordinate) shifted by the
//! diagonal's offset: `i + offset`, the offset being the coordinate of the
//! diagonal two levels up less `N - 1` ([`range`](super::range)). It stores
//! nothing.

use crate::error::{FormatError, Result};
use crate::level::{Footprint, Level, LevelCounts, PackInput, Packed};
use crate::levels::range::diagonal_shift;
use crate::properties::{Assembly, Capabilities, CoordinateRelation, Iteration, Properties};
use crate::staging::{Builder, Cmp, LevelRef};
use crate::tensor::LevelStorage;

/// The offset level format.
#[derive(Debug, Clone, Copy, Default)]
pub struct Offset;

impl Level for Offset {
    fn name(&self) -> &'static str {
        "offset"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            iteration: Iteration::CoordinatePosition,
            // `locate` exists, for assembly (the parent's position, found
            // when the column is the row's on the diagonal); inputs are
            // iterated, their one child read with no search.
            locate: false,
            assembly: Some(Assembly::Insert),
        }
    }
    fn properties(&self) -> Properties {
        Properties {
            full: false,
            ordered: true,
            unique: true,
            branchless: true,
            compact: false,
        }
    }

    fn pos_iter<B: Builder>(&self, b: &mut B, _lv: LevelRef, parent: B::Int) -> (B::Int, B::Int) {
        let end = b.add_const(parent, 1);
        (parent, end)
    }
    fn pos_access<B: Builder>(&self, b: &mut B, lv: LevelRef, _pos: B::Int, ancestors: &[B::Int]) -> (B::Int, B::Bool) {
        let [.., diagonal, row] = ancestors else {
            unreachable!("an offset level always has a diagonal and a row above it")
        };
        let range = LevelRef {
            operand: lv.operand,
            level: lv.level - 1,
        };
        let shift = diagonal_shift(b, range);
        let offset = b.sub(*diagonal, shift);
        let coord = b.add(*row, offset);
        let found = b.bool_const(true);
        (coord, found)
    }

    fn locate<B: Builder>(
        &self,
        b: &mut B,
        lv: LevelRef,
        parent: B::Int,
        ancestors: &[B::Int],
        coord: B::Int,
    ) -> (B::Int, B::Bool) {
        let (column, _) = self.pos_access(b, lv, parent, ancestors);
        let found = b.compare(Cmp::Eq, column, coord);
        (parent, found)
    }

    fn size<B: Builder>(&self, _b: &mut B, _lv: LevelRef, parent_size: B::Int) -> B::Int {
        parent_size
    }
    // One child per parent, at the parent's position: nothing to write.
    fn insert_init<B: Builder>(&self, _b: &mut B, _lv: LevelRef, _parent_size: B::Int, _size: B::Int) {}
    fn insert_coord<B: Builder>(&self, _b: &mut B, _lv: LevelRef, _pos: B::Int, _coord: B::Int) {}
    fn insert_finalize<B: Builder>(&self, _b: &mut B, _lv: LevelRef, _parent_size: B::Int, _size: B::Int) {}

    fn coordinate_relation(&self) -> CoordinateRelation {
        // The row above, shifted by its diagonal's offset.
        CoordinateRelation::ShiftedParent
    }

    fn footprint(&self, counts: &LevelCounts) -> Option<Footprint> {
        Some(Footprint {
            positions: counts.parents,
            bytes: 0,
        })
    }

    fn pack(&self, input: &PackInput<'_>) -> Result<Packed> {
        Ok(Packed {
            storage: LevelStorage::new(input.extent),
            positions: None,
        })
    }

    fn validate(
        &self,
        storage: &LevelStorage,
        parent_size: usize,
        level: usize,
        _next_extent: Option<usize>,
    ) -> Result<usize> {
        if !storage.arrays.is_empty() {
            return Err(FormatError::level(
                level,
                "offset",
                "an offset level stores no arrays (its diagonal's coordinate is the offset)",
            ));
        }
        Ok(parent_size)
    }
}
