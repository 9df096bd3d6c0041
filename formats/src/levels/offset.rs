//! Offset level: the columns of DIA. Each position has one child at the same
//! position, whose coordinate is the row (parent coordinate) shifted by the
//! diagonal's offset: `i + offset[d]`. It stores nothing: the offset array is
//! the range level's, one level up.

use crate::error::{FormatError, Result};
use crate::level::{Footprint, Level, LevelCounts, PackInput, Packed};
use crate::levels::range::OFFSET;
use crate::properties::{Capabilities, CoordinateRelation, Iteration, Properties};
use crate::staging::{Builder, LevelRef};
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
            locate: false,
            assembly: None,
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
        let offset = b.load(range.array(OFFSET), *diagonal);
        let coord = b.add(*row, offset);
        let found = b.bool_const(true);
        (coord, found)
    }

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
                "an offset level stores no arrays (it reads the range level's offsets)",
            ));
        }
        Ok(parent_size)
    }
}
