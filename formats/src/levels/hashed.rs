//! Hashed level: below each parent, a hash table of `W` buckets at positions
//! `parent*W .. (parent+1)*W`; bucket `p` holds coordinate `idx[p]`, or the
//! extent `N` when it is empty.
//!
//! Hash function: Fibonacci hashing, `h(i) = ((i * 0x9E3779B97F4A7C15) mod
//! 2^64) >> (64 - log2 W)`, which keeps the high bits of the product (the
//! well-mixed ones). `W` is a power of two of at least 2. Collisions probe
//! linearly, wrapping within the parent's segment. Every segment keeps at
//! least one empty bucket (tables are packed at most half full), so a probe
//! for a missing coordinate stops at an empty bucket: `locate` is O(1)
//! expected.
//!
//! Arrays: `idx`. Parameters: `W` and `64 - log2 W`.

use crate::error::{FormatError, Result};
use crate::index::IndexArray;
use crate::level::{checked_positions, index_bytes, Footprint, Level, LevelCounts, PackInput, Packed, Segment};
use crate::properties::{Assembly, Capabilities};
use crate::properties::{Iteration, Properties};
use crate::staging::{Builder, LevelRef, Param};
use crate::staging::{Cmp, IntOp};
use crate::tensor::LevelStorage;

const IDX: u8 = 0;
const WIDTH: u8 = 0;
const SHIFT: u8 = 1;
/// Multiplier of Fibonacci hashing: 2^64 divided by the golden ratio.
pub const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// The hashed level format (unordered, unique).
#[derive(Debug, Clone, Copy, Default)]
pub struct Hashed {
    pub full: bool,
}

/// Bucket of `coord` in a table of `2^(64 - shift)` buckets.
pub fn bucket(coord: u64, shift: u32) -> u64 {
    if shift >= 64 {
        0
    } else {
        coord.wrapping_mul(GOLDEN) >> shift
    }
}

/// Buckets per parent for a table that must hold `count` coordinates.
pub fn width_for(count: usize) -> usize {
    (count.saturating_mul(2)).max(2).next_power_of_two()
}

impl Hashed {
    /// Storage for an output level with `width` buckets per parent.
    pub fn storage_with_width(extent: usize, width: usize) -> LevelStorage {
        let width = width.max(2).next_power_of_two();
        let mut s = LevelStorage::new(extent);
        s.arrays.push(IndexArray::U64(Vec::new()));
        s.params.push(width as i64);
        s.params.push(64 - i64::from(width.trailing_zeros()));
        s
    }
}

impl Level for Hashed {
    fn name(&self) -> &'static str {
        "hashed"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            iteration: Iteration::CoordinatePosition,
            locate: true,
            assembly: Some(Assembly::Insert),
        }
    }
    fn properties(&self) -> Properties {
        Properties {
            full: self.full,
            ordered: false,
            unique: true,
            branchless: false,
            compact: false,
        }
    }

    fn pos_iter<B: Builder>(&self, b: &mut B, lv: LevelRef, parent: B::Int) -> (B::Int, B::Int) {
        let w = b.param(lv, Param::Extra(WIDTH));
        let begin = b.mul(parent, w);
        let end = b.add(begin, w);
        (begin, end)
    }
    fn pos_access<B: Builder>(&self, b: &mut B, lv: LevelRef, pos: B::Int, _ancestors: &[B::Int]) -> (B::Int, B::Bool) {
        let coord = b.load(lv.array(IDX), pos);
        let empty = b.param(lv, Param::Extent);
        let found = b.compare(Cmp::Ne, coord, empty);
        (coord, found)
    }
    fn locate<B: Builder>(
        &self,
        b: &mut B,
        lv: LevelRef,
        parent: B::Int,
        _ancestors: &[B::Int],
        coord: B::Int,
    ) -> (B::Int, B::Bool) {
        let w = b.param(lv, Param::Extra(WIDTH));
        let shift = b.param(lv, Param::Extra(SHIFT));
        let empty = b.param(lv, Param::Extent);
        let base = b.mul(parent, w);
        let mask = b.add_const(w, -1);
        let golden = b.int(GOLDEN as i64);
        let product = b.mul(coord, golden);
        let hash = b.binary(IntOp::Shr, product, shift);
        // `shift` is 64 when W = 1; the mask keeps the bucket in range then.
        let start = b.binary(IntOp::BitAnd, hash, mask);
        let slot = |b: &mut B, offset: B::Int| b.add(base, offset);
        let end = b.while_loop(
            &[start],
            &mut |b, s| {
                let p = slot(b, s[0]);
                let stored = b.load(lv.array(IDX), p);
                let other = b.compare(Cmp::Ne, stored, coord);
                let occupied = b.compare(Cmp::Ne, stored, empty);
                b.and(other, occupied)
            },
            &mut |b, s| {
                let next = b.add_const(s[0], 1);
                smallvec::smallvec![b.binary(IntOp::BitAnd, next, mask)]
            },
        );
        let pos = slot(b, end[0]);
        let stored = b.load(lv.array(IDX), pos);
        let found = b.compare(Cmp::Eq, stored, coord);
        (pos, found)
    }

    fn size<B: Builder>(&self, b: &mut B, lv: LevelRef, parent_size: B::Int) -> B::Int {
        let w = b.param(lv, Param::Extra(WIDTH));
        b.mul(parent_size, w)
    }
    fn insert_init<B: Builder>(&self, b: &mut B, lv: LevelRef, _parent_size: B::Int, size: B::Int) {
        b.grow(lv.array(IDX), size);
        let empty = b.param(lv, Param::Extent);
        let zero = b.int(0);
        b.while_loop(&[zero], &mut |b, s| b.compare(Cmp::Lt, s[0], size), &mut |b, s| {
            b.store(lv.array(IDX), s[0], empty);
            smallvec::smallvec![b.add_const(s[0], 1)]
        });
    }
    fn insert_coord<B: Builder>(&self, b: &mut B, lv: LevelRef, pos: B::Int, coord: B::Int) {
        b.store(lv.array(IDX), pos, coord);
    }
    fn insert_finalize<B: Builder>(&self, _b: &mut B, _lv: LevelRef, _parent_size: B::Int, _size: B::Int) {}

    fn empty_storage(&self, extent: usize) -> LevelStorage {
        Hashed::storage_with_width(extent, 2)
    }

    fn footprint(&self, counts: &LevelCounts) -> Option<Footprint> {
        // A table of one width for every parent, as wide as the fullest needs.
        let widest = usize::try_from(counts.widest?).ok()?;
        let buckets = counts.parents * width_for(widest) as u128;
        Some(Footprint {
            positions: buckets,
            bytes: buckets * index_bytes(counts.extent),
        })
    }

    fn pack(&self, input: &PackInput<'_>) -> Result<Packed> {
        let coords = &input.coords[input.level];
        let n = input.extent;
        // Distinct coordinates per parent decide the (uniform) table width.
        let mut widest = 0usize;
        for seg in input.parents {
            let mut distinct = 0;
            let mut e = seg.start;
            while e < seg.end {
                let c = coords[e];
                while e < seg.end && coords[e] == c {
                    e += 1;
                }
                distinct += 1;
            }
            widest = widest.max(distinct);
        }
        let width = width_for(widest);
        // Refused before `idx` and `positions` are allocated, not after.
        let what = || format!("hashed level of {} x {width} buckets", input.parents.len());
        let size = checked_positions(what, input.parents.len(), width)?;
        let shift = 64 - width.trailing_zeros();
        let mut idx = vec![n as u64; size];
        let mut positions = vec![Segment::default(); size];
        for (parent, seg) in input.parents.iter().enumerate() {
            let base = parent * width;
            let mut e = seg.start;
            while e < seg.end {
                let c = coords[e];
                let run_start = e;
                while e < seg.end && coords[e] == c {
                    e += 1;
                }
                let mut q = bucket(c, shift) as usize & (width - 1);
                while idx[base + q] != n as u64 {
                    q = (q + 1) & (width - 1);
                }
                idx[base + q] = c;
                positions[base + q] = Segment::new(run_start, e);
            }
        }
        let mut storage = LevelStorage::new(n);
        storage.arrays.push(IndexArray::from_u64_with_bound(idx, n as u64));
        storage.params.push(width as i64);
        storage.params.push(i64::from(shift));
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
        let err = |reason: String| FormatError::level(level, "hashed", reason);
        if storage.arrays.len() != 1 || storage.params.len() != 2 {
            return Err(err("expected array idx and parameters W and shift".into()));
        }
        let width = storage.params[WIDTH as usize];
        if width < 2 || (width as u64).count_ones() != 1 {
            return Err(err(format!(
                "bucket count W = {width} is not a power of two of at least 2"
            )));
        }
        let width = width as usize;
        let shift = storage.params[SHIFT as usize];
        if shift != 64 - i64::from(width.trailing_zeros()) {
            return Err(err(format!("shift {shift} does not match W = {width}")));
        }
        let size = parent_size
            .checked_mul(width)
            .ok_or_else(|| FormatError::TooLarge(format!("hashed level {level} of {parent_size} x {width} buckets")))?;
        let idx = &storage.arrays[IDX as usize];
        if idx.len() != size {
            return Err(err(format!(
                "idx has {} buckets, expected {parent_size} x {width} = {size}",
                idx.len()
            )));
        }
        let n = storage.extent as i64;
        // Grown as tables are read: `width` is bounded by `idx` only when there are parents.
        let mut coords = Vec::new();
        for parent in 0..parent_size {
            let base = parent * width;
            let mut last_empty = None;
            for q in 0..width {
                let c = idx.get(base + q);
                if c < 0 || c > n {
                    return Err(err(format!("idx[{}] = {c} is outside 0..={n}", base + q)));
                }
                if c == n {
                    last_empty = Some(q);
                }
            }
            let Some(last_empty) = last_empty else {
                return Err(err(format!("the table of parent {parent} has no empty bucket")));
            };
            // Locate probes from c's bucket to the first empty bucket, so the
            // bucket holding c must lie in the run of occupied buckets that
            // starts at c's bucket. Walk each run once, from an empty bucket,
            // counting its length so far (linear, whatever the clustering).
            coords.clear();
            let mut run = 0;
            for step in 1..=width {
                let q = (last_empty + step) & (width - 1);
                let c = idx.get(base + q);
                if c == n {
                    run = 0;
                    continue;
                }
                run += 1;
                let home = bucket(c as u64, shift as u32) as usize & (width - 1);
                if (q.wrapping_sub(home) & (width - 1)) >= run {
                    return Err(err(format!(
                        "coordinate {c} in bucket {} cannot be found by probing (parent {parent})",
                        base + q
                    )));
                }
                coords.push(c);
            }
            coords.sort_unstable();
            if let Some(w) = coords.windows(2).find(|w| w[0] == w[1]) {
                return Err(err(format!(
                    "coordinate {} is stored twice in the table of parent {parent}",
                    w[0]
                )));
            }
            if self.full && coords.len() != storage.extent {
                return Err(err(format!(
                    "declared full but the table of parent {parent} holds {} of {n} coordinates",
                    coords.len()
                )));
            }
        }
        Ok(size)
    }
}
