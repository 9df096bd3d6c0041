//! Compressed level: the children of parent `p` are the coordinates
//! `idx[pos[p]..pos[p+1]]`. Non-unique compressed is the top level of COO.

use crate::error::{FormatError, Result};
use crate::index::{CoordRun, IndexArray};
use crate::level::{index_bytes, Footprint, Level, LevelCounts, PackInput, Packed, Segment};
use crate::levels::{check_siblings, siblings_in_order};
use crate::properties::{Assembly, Capabilities, Iteration, Properties};
use crate::staging::{Builder, LevelRef};
use crate::tensor::LevelStorage;

const POS: u8 = 0;
const IDX: u8 = 1;

/// The compressed level format, configurable as ordered and/or unique.
#[derive(Debug, Clone, Copy)]
pub struct Compressed {
    pub ordered: bool,
    pub unique: bool,
    pub full: bool,
}

impl Compressed {
    /// The storage of a compressed level from its arrays: `pos` (one entry
    /// per parent position plus one) and `idx` (the coordinates), for
    /// coordinates in `0..extent`. [`crate::Tensor::from_parts`] validates
    /// it.
    ///
    /// ```
    /// use tessera_formats::levels::compressed::Compressed;
    /// use tessera_formats::IndexArray;
    /// let s = Compressed::storage(4, IndexArray::from_u64(vec![0, 1]), IndexArray::from_u64(vec![3]));
    /// assert_eq!(Compressed::arrays(&s).map(|(_, idx)| idx.get(0)), Some(3));
    /// ```
    pub fn storage(extent: usize, pos: IndexArray, idx: IndexArray) -> LevelStorage {
        LevelStorage {
            extent,
            arrays: smallvec::smallvec![pos, idx],
            params: smallvec::SmallVec::new(),
        }
    }

    /// The `pos` and `idx` arrays of a compressed level's storage, when it
    /// has them.
    pub fn arrays(storage: &LevelStorage) -> Option<(&IndexArray, &IndexArray)> {
        Some((storage.arrays.get(POS as usize)?, storage.arrays.get(IDX as usize)?))
    }
}

impl Level for Compressed {
    fn name(&self) -> &'static str {
        "compressed"
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
            branchless: false,
            compact: true,
        }
    }

    fn pos_iter<B: Builder>(&self, b: &mut B, lv: LevelRef, parent: B::Int) -> (B::Int, B::Int) {
        let begin = b.load(lv.array(POS), parent);
        let next = b.add_const(parent, 1);
        let end = b.load(lv.array(POS), next);
        (begin, end)
    }
    fn pos_access<B: Builder>(&self, b: &mut B, lv: LevelRef, pos: B::Int, _ancestors: &[B::Int]) -> (B::Int, B::Bool) {
        let coord = b.load(lv.array(IDX), pos);
        let found = b.bool_const(true);
        (coord, found)
    }

    fn append_init<B: Builder>(&self, b: &mut B, lv: LevelRef, parent_size: B::Int, _size: B::Int) {
        let len = b.add_const(parent_size, 1);
        b.grow(lv.array(POS), len);
        let zero = b.int(0);
        b.while_loop(
            &[zero],
            &mut |b, s| b.compare(crate::staging::Cmp::Lt, s[0], len),
            &mut |b, s| {
                let z = b.int(0);
                b.store(lv.array(POS), s[0], z);
                let next = b.add_const(s[0], 1);
                smallvec::smallvec![next]
            },
        );
    }
    fn append_coord<B: Builder>(&self, b: &mut B, lv: LevelRef, pos: B::Int, coord: B::Int) {
        let len = b.add_const(pos, 1);
        b.grow(lv.array(IDX), len);
        b.store(lv.array(IDX), pos, coord);
    }
    fn append_coords(&self, storage: &mut LevelStorage, pos: usize, coords: CoordRun<'_>) {
        storage.arrays[IDX as usize].write_run(pos, coords);
    }
    fn positions(&self, storage: &LevelStorage, parent_size: usize, _: usize, _: Option<usize>) -> usize {
        storage.arrays[POS as usize].get_usize(parent_size)
    }
    fn append_init_now(&self, storage: &mut LevelStorage, parent_size: usize) {
        let pos = &mut storage.arrays[POS as usize];
        pos.truncate(0);
        pos.resize(parent_size + 1);
    }
    fn append_edges_now(&self, storage: &mut LevelStorage, parent: usize, begin: usize, end: usize) {
        let pos = &mut storage.arrays[POS as usize];
        if pos.len() < parent + 2 {
            pos.resize(parent + 2);
        }
        pos.set(parent + 1, (end - begin) as i64);
    }
    fn append_segments_now(&self, storage: &mut LevelStorage, _begin: usize, segments: &[(usize, usize)]) {
        let Some(&(last, _)) = segments.last() else {
            return;
        };
        let pos = &mut storage.arrays[POS as usize];
        if pos.len() < last + 2 {
            pos.resize(last + 2);
        }
        // Counts, as `append_edges_now` leaves them; a segment too long
        // for 32 bits widens the array once.
        if let IndexArray::U32(counts) = pos {
            if segments.iter().all(|&(_, count)| count <= u32::MAX as usize) {
                for &(parent, count) in segments {
                    counts[parent + 1] = count as u32;
                }
                return;
            }
        }
        for &(parent, count) in segments {
            pos.set(parent + 1, count as i64);
        }
    }
    fn append_finalize_now(&self, storage: &mut LevelStorage, parent_size: usize, size: usize) {
        // `append_edges` left per-parent counts in pos[p + 1]; turn them into offsets.
        let pos = &mut storage.arrays[POS as usize];
        if pos.len() < parent_size + 1 {
            pos.resize(parent_size + 1);
        }
        if size as u64 > u64::from(u32::MAX) {
            pos.widen();
        }
        pos.prefix_sums(1..parent_size + 1);
    }
    fn append_edges<B: Builder>(&self, b: &mut B, lv: LevelRef, parent: B::Int, begin: B::Int, end: B::Int) {
        let count = b.sub(end, begin);
        let slot = b.add_const(parent, 1);
        // The parent level may still be growing (DCSR): make room for its slot.
        let len = b.add_const(parent, 2);
        b.grow(lv.array(POS), len);
        b.store(lv.array(POS), slot, count);
    }
    fn append_finalize<B: Builder>(&self, b: &mut B, lv: LevelRef, parent_size: B::Int, _size: B::Int) {
        // `append_edges` left per-parent counts in pos[p + 1]; turn them into offsets.
        let len = b.add_const(parent_size, 1);
        b.grow(lv.array(POS), len);
        let one = b.int(1);
        let zero = b.int(0);
        b.while_loop(
            &[one, zero],
            &mut |b, s| b.compare(crate::staging::Cmp::Le, s[0], parent_size),
            &mut |b, s| {
                let count = b.load(lv.array(POS), s[0]);
                let sum = b.add(s[1], count);
                b.store(lv.array(POS), s[0], sum);
                let next = b.add_const(s[0], 1);
                smallvec::smallvec![next, sum]
            },
        );
    }
    fn empty_storage(&self, extent: usize) -> LevelStorage {
        // Positions start 32-bit and widen if they outgrow it; coordinates
        // are below the extent, so they never do.
        let mut s = LevelStorage::new(extent);
        s.arrays.push(IndexArray::U32(vec![0]));
        s.arrays
            .push(IndexArray::from_u64_with_bound(Vec::new(), extent as u64));
        s
    }

    fn footprint(&self, counts: &LevelCounts) -> Option<Footprint> {
        // A non-unique level keeps one position per entry below it.
        let stored = if self.unique { counts.distinct? } else { counts.entries };
        // `pos` has one more element than the parents, bounded by `stored`;
        // `idx` one per position, bounded by the extent.
        Some(Footprint {
            positions: stored,
            bytes: (counts.parents + 1) * index_bytes(stored) + stored * index_bytes(counts.extent),
        })
    }

    fn pack(&self, input: &PackInput<'_>) -> Result<Packed> {
        let coords = &input.coords[input.level];
        let mut pos = Vec::with_capacity(input.parents.len() + 1);
        let mut idx = Vec::new();
        let mut positions = Vec::new();
        pos.push(0u64);
        for seg in input.parents {
            let mut e = seg.start;
            while e < seg.end {
                let c = coords[e];
                let run_start = e;
                e += 1;
                if self.unique {
                    while e < seg.end && coords[e] == c {
                        e += 1;
                    }
                }
                idx.push(c);
                positions.push(Segment::new(run_start, e));
            }
            pos.push(idx.len() as u64);
        }
        let nnz = idx.len() as u64;
        let mut storage = LevelStorage::new(input.extent);
        storage.arrays.push(IndexArray::from_u64_with_bound(pos, nnz));
        storage
            .arrays
            .push(IndexArray::from_u64_with_bound(idx, input.extent as u64));
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
        _next_extent: Option<usize>,
    ) -> Result<usize> {
        let err = |reason: String| FormatError::level(level, "compressed", reason);
        if storage.arrays.len() != 2 {
            return Err(err(format!(
                "expected arrays pos and idx, found {} arrays",
                storage.arrays.len()
            )));
        }
        let (pos, idx) = (&storage.arrays[POS as usize], &storage.arrays[IDX as usize]);
        if pos.len() != parent_size + 1 {
            return Err(err(format!(
                "pos has {} entries, expected parent size + 1 = {}",
                pos.len(),
                parent_size + 1
            )));
        }
        if pos.get(0) != 0 {
            return Err(err(format!("pos[0] is {}, expected 0", pos.get(0))));
        }
        let monotone = pos.is_non_decreasing();
        for p in (0..parent_size).filter(|_| !monotone) {
            let (a, b) = (pos.get(p), pos.get(p + 1));
            if b < a {
                return Err(err(format!(
                    "pos is not monotone: pos[{p}] = {a} > pos[{}] = {b}",
                    p + 1
                )));
            }
        }
        let nnz = pos.get(parent_size) as usize;
        if nnz != idx.len() {
            return Err(err(format!(
                "pos[{parent_size}] = {nnz} but idx has {} entries",
                idx.len()
            )));
        }
        let props = self.properties();
        // One typed pass over every sibling group decides most levels; the
        // per-group check runs where it fails (to name the first fault) and
        // where uniqueness needs more than order to check.
        let needs_groups = (props.unique && !props.ordered) || props.full;
        if needs_groups || !groups_clean(pos, idx, parent_size, storage.extent, props.ordered, props.unique) {
            for p in 0..parent_size {
                let (a, b) = (pos.get_usize(p), pos.get_usize(p + 1));
                check_siblings(idx, a, b, storage.extent, props, level, "compressed")?;
            }
        }
        Ok(nnz)
    }

    fn coordinate_array(&self) -> Option<u8> {
        Some(IDX)
    }

    fn position_view<'s>(&self, storage: &'s LevelStorage) -> Option<&'s IndexArray> {
        storage.arrays.get(POS as usize)
    }

    fn trim(&self, storage: &mut LevelStorage, parent_size: usize) {
        let nnz = storage.arrays[POS as usize].get_usize(parent_size);
        storage.arrays[POS as usize].truncate(parent_size + 1);
        storage.arrays[IDX as usize].truncate(nnz);
    }
}

/// Whether every coordinate is inside `0..extent` and, for an ordered
/// level, each sibling group `idx[pos[p]..pos[p + 1]]` is increasing
/// (strictly when unique): one pass over `idx`, `pos` monotone and ending
/// at `idx`'s length (checked before).
fn groups_clean(
    pos: &IndexArray,
    idx: &IndexArray,
    parents: usize,
    extent: usize,
    ordered: bool,
    strict: bool,
) -> bool {
    fn scan<P: Copy, C: Copy>(
        pos: &[P],
        idx: &[C],
        extent: usize,
        ordered: bool,
        strict: bool,
        at: impl Fn(P) -> usize,
        wide: impl Fn(C) -> i64,
    ) -> bool {
        let mut ok = true;
        for edges in pos.windows(2) {
            ok &= siblings_in_order(&idx[at(edges[0])..at(edges[1])], extent, ordered, strict, &wide);
        }
        ok
    }
    macro_rules! over_idx {
        ($pos:expr, $at:expr) => {
            match idx {
                IndexArray::U32(v) => scan($pos, v, extent, ordered, strict, $at, i64::from),
                IndexArray::U64(v) => scan($pos, v, extent, ordered, strict, $at, |c| c as i64),
                IndexArray::I64(v) => scan($pos, v, extent, ordered, strict, $at, |c| c),
            }
        };
    }
    match pos {
        IndexArray::U32(p) => over_idx!(&p[..=parents], |x: u32| x as usize),
        IndexArray::U64(p) => over_idx!(&p[..=parents], |x: u64| x as usize),
        IndexArray::I64(p) => over_idx!(&p[..=parents], |x: i64| x as usize),
    }
}
