//! The level trait: what every level format implements, once.
//!
//! A level stores one level of a coordinate hierarchy (format paper §3). Its
//! access functions (`coord_iter`, `coord_access`, `pos_iter`, `pos_access`,
//! `locate`) and assembly functions (`size`, `insert_*`, `append_*`) are
//! *staged*: generic over a [`Builder`], so the interpreter runs them and the
//! compiled tiers inline them (see [`crate::staging`]). Packing, validation
//! and the block view used by the interpreter are direct Rust functions.
//!
//! Planners call only the functions a level's [`Capabilities`] promise; the
//! others keep their default bodies, which are unreachable by that contract.

use crate::error::Result;
use crate::index::{CoordRun, IndexArray};
use crate::properties::{Capabilities, CoordinateRelation, Properties};
use crate::staging::{Builder, Immediate, LevelRef, StorageResolver};
use crate::tensor::LevelStorage;

/// The entries of a sorted, deduplicated coordinate list that lie under one
/// position of a level: `start..end` (empty for a position that stores no
/// entry, such as padding or an empty hash bucket).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Segment {
    pub start: usize,
    pub end: usize,
}

impl Segment {
    pub fn new(start: usize, end: usize) -> Self {
        Segment { start, end }
    }
    pub fn is_empty(&self) -> bool {
        self.start >= self.end
    }
    pub fn len(&self) -> usize {
        self.end.saturating_sub(self.start)
    }
}

/// What a level's packer receives.
pub struct PackInput<'a> {
    /// Index of this level in its format.
    pub level: usize,
    /// Storage coordinates of every entry, one column per level, entries
    /// sorted lexicographically by level and free of duplicates.
    pub coords: &'a [Vec<u64>],
    /// For each position of the parent level (one root position for level
    /// 0), the entries below it.
    pub parents: &'a [Segment],
    /// Extent of this level's coordinates.
    pub extent: usize,
    /// Extent of the next level, for levels whose encoding needs it.
    pub next_extent: Option<usize>,
}

/// What a level's packer returns.
pub struct Packed {
    pub storage: LevelStorage,
    /// For each position of this level, the entries below it; `None` when
    /// they are the parent level's (one position per parent position, as
    /// for singleton and offset levels), which are not copied.
    pub positions: Option<Vec<Segment>>,
}

/// What decides a level's size, counted from a tensor's entries without
/// packing them ([`crate::census`]): how many positions its parent has,
/// its extent, and, for levels that store coordinates, how many they store.
/// Counts a census could not give are `None`; a level that needs one then
/// has no footprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LevelCounts {
    /// Positions of the parent level (1 at the root).
    pub parents: u128,
    /// Extent of this level's coordinates.
    pub extent: u128,
    /// Distinct coordinates stored at this level over all parents: the
    /// distinct prefixes of the entries' storage coordinates down to it.
    pub distinct: Option<u128>,
    /// Entries of the tensor (stored entries, one per full coordinate).
    pub entries: u128,
    /// The most distinct coordinates below any one parent.
    pub widest: Option<u128>,
}

/// A level's size as [`Level::pack`] would build it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Footprint {
    /// Positions of the level (the parents of the next one).
    pub positions: u128,
    /// Bytes of its index arrays.
    pub bytes: u128,
}

/// Bytes of one element of an unsigned index array whose values are at
/// most `bound`: the width [`IndexArray::from_u64_with_bound`] chooses.
pub fn index_bytes(bound: u128) -> u128 {
    if bound <= u128::from(u32::MAX) {
        4
    } else {
        8
    }
}

/// One level format. See the module documentation.
///
/// `ancestors` are the coordinates of the levels above (`i_1 … i_{k-1}` in
/// the paper); `parent` is the position in the parent level (0 at the root).
pub trait Level {
    /// Short name used in messages and printouts (`compressed`).
    fn name(&self) -> &'static str;
    /// Capabilities of this level (Table 1).
    fn capabilities(&self) -> Capabilities;
    /// Properties of this level as configured.
    fn properties(&self) -> Properties;

    /// Bounds of the coordinates that may lie below the ancestors.
    fn coord_iter<B: Builder>(&self, b: &mut B, lv: LevelRef, ancestors: &[B::Int]) -> (B::Int, B::Int) {
        let _ = (b, lv, ancestors);
        unreachable!("{} levels have no coord_iter", self.name())
    }
    /// Position of coordinate `coord` below `parent`, and whether it exists.
    fn coord_access<B: Builder>(
        &self,
        b: &mut B,
        lv: LevelRef,
        parent: B::Int,
        ancestors: &[B::Int],
        coord: B::Int,
    ) -> (B::Int, B::Bool) {
        let _ = (b, lv, parent, ancestors, coord);
        unreachable!("{} levels have no coord_access", self.name())
    }
    /// Bounds of the positions that may have `parent` as their parent.
    fn pos_iter<B: Builder>(&self, b: &mut B, lv: LevelRef, parent: B::Int) -> (B::Int, B::Int) {
        let _ = (b, lv, parent);
        unreachable!("{} levels have no pos_iter", self.name())
    }
    /// Coordinate stored at `pos`, and whether the position holds one.
    fn pos_access<B: Builder>(&self, b: &mut B, lv: LevelRef, pos: B::Int, ancestors: &[B::Int]) -> (B::Int, B::Bool) {
        let _ = (b, lv, pos, ancestors);
        unreachable!("{} levels have no pos_access", self.name())
    }
    /// Random access: position of `coord` below `parent`, and whether found.
    fn locate<B: Builder>(
        &self,
        b: &mut B,
        lv: LevelRef,
        parent: B::Int,
        ancestors: &[B::Int],
        coord: B::Int,
    ) -> (B::Int, B::Bool) {
        let _ = (b, lv, parent, ancestors, coord);
        unreachable!("{} levels have no locate", self.name())
    }

    /// Number of positions of this level when the parent has `parent_size`.
    fn size<B: Builder>(&self, b: &mut B, lv: LevelRef, parent_size: B::Int) -> B::Int {
        let _ = (b, lv, parent_size);
        unreachable!("{} levels cannot be assembled by insert", self.name())
    }
    fn insert_init<B: Builder>(&self, b: &mut B, lv: LevelRef, parent_size: B::Int, size: B::Int) {
        let _ = (b, lv, parent_size, size);
        unreachable!("{} levels cannot be assembled by insert", self.name())
    }
    fn insert_coord<B: Builder>(&self, b: &mut B, lv: LevelRef, pos: B::Int, coord: B::Int) {
        let _ = (b, lv, pos, coord);
        unreachable!("{} levels cannot be assembled by insert", self.name())
    }
    fn insert_finalize<B: Builder>(&self, b: &mut B, lv: LevelRef, parent_size: B::Int, size: B::Int) {
        let _ = (b, lv, parent_size, size);
        unreachable!("{} levels cannot be assembled by insert", self.name())
    }
    fn append_init<B: Builder>(&self, b: &mut B, lv: LevelRef, parent_size: B::Int, size: B::Int) {
        let _ = (b, lv, parent_size, size);
        unreachable!("{} levels cannot be assembled by append", self.name())
    }
    fn append_coord<B: Builder>(&self, b: &mut B, lv: LevelRef, pos: B::Int, coord: B::Int) {
        let _ = (b, lv, pos, coord);
        unreachable!("{} levels cannot be assembled by append", self.name())
    }
    fn append_edges<B: Builder>(&self, b: &mut B, lv: LevelRef, parent: B::Int, begin: B::Int, end: B::Int) {
        let _ = (b, lv, parent, begin, end);
        unreachable!("{} levels cannot be assembled by append", self.name())
    }
    fn append_finalize<B: Builder>(&self, b: &mut B, lv: LevelRef, parent_size: B::Int, size: B::Int) {
        let _ = (b, lv, parent_size, size);
        unreachable!("{} levels cannot be assembled by append", self.name())
    }

    /// Appends a run of coordinates below one parent at positions `pos..`:
    /// `append_coord` for each, in one call (a workspace hands over a whole
    /// row at once). Levels whose coordinates are one array override it
    /// with a copy.
    fn append_coords(&self, storage: &mut LevelStorage, pos: usize, coords: CoordRun<'_>) {
        let lv = LevelRef::new(0, 0);
        let mut b = Immediate::new(OneLevel(storage));
        for k in 0..coords.len() {
            self.append_coord(&mut b, lv, (pos + k) as i64, coords.get(k) as i64);
        }
    }

    /// [`append_init`](Level::append_init) on this level's storage alone,
    /// for `parent_size` parents: the runtime's assembler gives every row
    /// of an output its slot at once. Levels whose init fills one array
    /// override it with a fill.
    fn append_init_now(&self, storage: &mut LevelStorage, parent_size: usize) {
        let mut b = Immediate::new(OneLevel(storage));
        self.append_init(&mut b, LevelRef::new(0, 0), parent_size as i64, 0);
    }

    /// [`append_edges`](Level::append_edges) on this level's storage alone:
    /// the runtime's assembler closes a segment per output row this way.
    /// Levels whose edges are one array override it with a store.
    fn append_edges_now(&self, storage: &mut LevelStorage, parent: usize, begin: usize, end: usize) {
        let mut b = Immediate::new(OneLevel(storage));
        self.append_edges(&mut b, LevelRef::new(0, 0), parent as i64, begin as i64, end as i64);
    }

    /// [`append_edges_now`](Level::append_edges_now) for consecutive
    /// segments from position `begin` on: each `(parent, count)` closes
    /// the next `count` positions below `parent`, parents increasing. The
    /// assembler closes a block of output rows at once this way. Levels
    /// whose edges are one array override it with one pass.
    fn append_segments_now(&self, storage: &mut LevelStorage, begin: usize, segments: &[(usize, usize)]) {
        let mut at = begin;
        for &(parent, count) in segments {
            self.append_edges_now(storage, parent, at, at + count);
            at += count;
        }
    }

    /// [`append_finalize`](Level::append_finalize) on this level's storage
    /// alone, as the runtime's assembler finishes an output. Levels that
    /// finish with a pass over one array override it with that pass.
    fn append_finalize_now(&self, storage: &mut LevelStorage, parent_size: usize, size: usize) {
        let mut b = Immediate::new(OneLevel(storage));
        self.append_finalize(&mut b, LevelRef::new(0, 0), parent_size as i64, size as i64);
    }

    /// Empty storage ready for assembly as an output level: the arrays the
    /// assembly functions write, with the given extent.
    fn empty_storage(&self, extent: usize) -> LevelStorage {
        LevelStorage::new(extent)
    }

    /// Builds this level's storage from sorted, deduplicated entries.
    fn pack(&self, input: &PackInput<'_>) -> Result<Packed>;
    /// The size [`pack`](Self::pack) would give this level, from counts
    /// alone; `None` when it needs a count that `counts` lacks.
    fn footprint(&self, counts: &LevelCounts) -> Option<Footprint>;

    /// Checks every invariant of `storage` below a parent level of
    /// `parent_size` positions; returns this level's size (its number of
    /// positions). `level` is the level's index, for messages;
    /// `next_extent` the extent of the level below, if any.
    fn validate(
        &self,
        storage: &LevelStorage,
        parent_size: usize,
        level: usize,
        next_extent: Option<usize>,
    ) -> Result<usize>;

    /// The number of positions of valid `storage` below a parent level of
    /// `parent_size` positions, without checking it: what building a
    /// tensor from arrays known to be valid needs. Levels whose size is
    /// arithmetic or one stored number override the default, which
    /// validates.
    fn positions(&self, storage: &LevelStorage, parent_size: usize, level: usize, next_extent: Option<usize>) -> usize {
        self.validate(storage, parent_size, level, next_extent).unwrap_or(0)
    }

    /// Cuts an assembled output level's arrays to their final lengths
    /// (assembly grows them with amortised doubling).
    fn trim(&self, storage: &mut LevelStorage, parent_size: usize) {
        let _ = (storage, parent_size);
    }

    /// When `pos_access(p)` is exactly `(idx[p], true)`, the `idx` array: the
    /// interpreter then reads blocks of coordinates as a view.
    fn coordinate_view<'s>(&self, storage: &'s LevelStorage) -> Option<&'s IndexArray> {
        self.coordinate_array()
            .and_then(|slot| storage.arrays.get(slot as usize))
    }

    /// Which of the level's arrays holds a coordinate per position, when
    /// one does: compiled kernels read it for [`Self::coordinate_view`].
    fn coordinate_array(&self) -> Option<u8> {
        None
    }

    /// How this level's positions and coordinates follow from those above
    /// ([`CoordinateRelation`]): what lets a planner run many coordinates
    /// at once.
    fn coordinate_relation(&self) -> CoordinateRelation {
        CoordinateRelation::Opaque
    }

    /// When `pos_iter(p)` is exactly `(pos[p], pos[p + 1])`, the `pos` array:
    /// the interpreter then walks many parents' segments without dispatch.
    fn position_view<'s>(&self, storage: &'s LevelStorage) -> Option<&'s IndexArray> {
        let _ = storage;
        None
    }
}

/// One level's storage, whatever level a function names.
struct OneLevel<'a>(&'a mut LevelStorage);

impl StorageResolver for OneLevel<'_> {
    fn level(&self, _: LevelRef) -> &LevelStorage {
        self.0
    }
    fn level_mut(&mut self, _: LevelRef) -> &mut LevelStorage {
        self.0
    }
}

/// How many positions a level of `per_parent` positions below each of
/// `parents` parents has, refused before anything is allocated when that
/// is absurd or beyond the memory budget ([`crate::budget`]): while packing,
/// each position takes a segment, and then a value. `what` names the level
/// for the message.
pub(crate) fn checked_positions(what: impl Fn() -> String, parents: usize, per_parent: usize) -> Result<usize> {
    let size = parents
        .checked_mul(per_parent)
        .filter(|&s| s <= crate::coordinates::MAX_POSITIONS)
        .ok_or_else(|| crate::error::FormatError::TooLarge(what()))?;
    let bytes = size as u128 * (std::mem::size_of::<Segment>() + 8) as u128;
    crate::budget::check_allocation(&what(), bytes)?;
    Ok(size)
}
