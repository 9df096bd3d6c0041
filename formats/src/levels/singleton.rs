//! Singleton level: exactly one coordinate below each parent position, at the
//! same position: `idx[p]`. The lower levels of COO.

use crate::error::{FormatError, Result};
use crate::index::IndexArray;
use crate::level::{index_bytes, Footprint, Level, LevelCounts, PackInput, Packed};
use crate::properties::{Assembly, Capabilities, CoordinateRelation, Iteration, Properties};
use crate::staging::{Builder, LevelRef};
use crate::tensor::LevelStorage;

const IDX: u8 = 0;

/// The singleton level format.
#[derive(Debug, Clone, Copy)]
pub struct Singleton {
    pub ordered: bool,
    pub unique: bool,
    pub full: bool,
}

impl Level for Singleton {
    fn name(&self) -> &'static str {
        "singleton"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            iteration: Iteration::CoordinatePosition,
            locate: false,
            assembly: Some(Assembly::Append),
        }
    }
    fn properties(&self) -> Properties {
        Properties {
            full: self.full,
            ordered: self.ordered,
            unique: self.unique,
            branchless: true,
            compact: true,
        }
    }

    fn pos_iter<B: Builder>(&self, b: &mut B, _lv: LevelRef, parent: B::Int) -> (B::Int, B::Int) {
        let end = b.add_const(parent, 1);
        (parent, end)
    }
    fn pos_access<B: Builder>(&self, b: &mut B, lv: LevelRef, pos: B::Int, _ancestors: &[B::Int]) -> (B::Int, B::Bool) {
        let coord = b.load(lv.array(IDX), pos);
        let found = b.bool_const(true);
        (coord, found)
    }

    fn append_init<B: Builder>(&self, _b: &mut B, _lv: LevelRef, _parent_size: B::Int, _size: B::Int) {}
    fn append_coord<B: Builder>(&self, b: &mut B, lv: LevelRef, pos: B::Int, coord: B::Int) {
        let len = b.add_const(pos, 1);
        b.grow(lv.array(IDX), len);
        b.store(lv.array(IDX), pos, coord);
    }
    // Positions equal the parent's: there are no edges to record.
    fn append_edges<B: Builder>(&self, _b: &mut B, _lv: LevelRef, _parent: B::Int, _begin: B::Int, _end: B::Int) {}
    fn append_finalize<B: Builder>(&self, _b: &mut B, _lv: LevelRef, _parent_size: B::Int, _size: B::Int) {}
    fn empty_storage(&self, extent: usize) -> LevelStorage {
        let mut s = LevelStorage::new(extent);
        s.arrays
            .push(IndexArray::from_u64_with_bound(Vec::new(), extent as u64));
        s
    }

    fn coordinate_relation(&self) -> CoordinateRelation {
        CoordinateRelation::Stored
    }

    fn footprint(&self, counts: &LevelCounts) -> Option<Footprint> {
        // One coordinate per parent position.
        Some(Footprint {
            positions: counts.parents,
            bytes: counts.parents * index_bytes(counts.extent),
        })
    }

    fn pack(&self, input: &PackInput<'_>) -> Result<Packed> {
        let coords = &input.coords[input.level];
        let mut idx = Vec::with_capacity(input.parents.len());
        for (p, seg) in input.parents.iter().enumerate() {
            // The segment's entries are sorted: its coordinates at this level
            // are distinct runs, and entries deeper down may share one.
            let distinct = (seg.start..seg.end)
                .filter(|&e| e == seg.start || coords[e] != coords[e - 1])
                .count();
            match distinct {
                // A padding position of the parent (ELL): any valid coordinate will do.
                0 => idx.push(0),
                1 => idx.push(coords[seg.start]),
                n => {
                    return Err(FormatError::BadFormat {
                        format: "singleton".into(),
                        reason: format!(
                            "level {} is singleton but parent position {p} has {n} distinct children; \
                             a singleton level needs a non-unique parent (as in COO)",
                            input.level
                        ),
                    })
                }
            }
        }
        let mut storage = LevelStorage::new(input.extent);
        storage
            .arrays
            .push(IndexArray::from_u64_with_bound(idx, input.extent as u64));
        Ok(Packed {
            storage,
            positions: None,
        })
    }

    // One position per parent position.
    fn positions(&self, _: &LevelStorage, parent_size: usize, _: usize, _: Option<usize>) -> usize {
        parent_size
    }
    fn validate(
        &self,
        storage: &LevelStorage,
        parent_size: usize,
        level: usize,
        _next_extent: Option<usize>,
    ) -> Result<usize> {
        let err = |reason: String| FormatError::level(level, "singleton", reason);
        if storage.arrays.len() != 1 {
            return Err(err(format!("expected one array idx, found {}", storage.arrays.len())));
        }
        let idx = &storage.arrays[IDX as usize];
        if idx.len() != parent_size {
            return Err(err(format!(
                "idx has {} entries, expected one per parent position ({parent_size})",
                idx.len()
            )));
        }
        for p in 0..idx.len() {
            let c = idx.get(p);
            if c < 0 || c as u64 >= storage.extent as u64 {
                return Err(err(format!("idx[{p}] = {c} is outside 0..{}", storage.extent)));
            }
        }
        Ok(parent_size)
    }

    fn coordinate_array(&self) -> Option<u8> {
        Some(IDX)
    }

    fn trim(&self, storage: &mut LevelStorage, parent_size: usize) {
        storage.arrays[IDX as usize].truncate(parent_size);
    }
}
