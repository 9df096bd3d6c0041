//! A census of a tensor's entries: the counts that decide how much each
//! format stores — entries, nonempty slices of each mode and their lengths,
//! distinct prefixes in the natural mode order, and for matrices the
//! diagonals and nonempty blocks — gathered in one pass over a canonical
//! coordinate list, without packing. [`Census::footprint`] turns them into
//! a format's size through each level's [`Level::footprint`], so the bytes
//! `tessera info` reports for a format are the bytes packing would give.
//!
//! Nothing is allocated by the dimensions alone: a mode far larger than the
//! entries is counted in a map of the slices that occur.

use std::collections::{HashMap, HashSet};

use crate::coordinates::{CoordinateList, MAX_POSITIONS};
use crate::format::{Format, Projection, Split};
use crate::level::{Level, LevelCounts};

/// Block sizes whose nonempty blocks a census of a matrix counts (the
/// BCSR formats `tessera info` measures).
pub const CENSUS_BLOCKS: [usize; 2] = [2, 4];

/// The counts of one canonical coordinate list. See the module documentation.
///
/// ```
/// use tessera_formats::{census::Census, CoordinateList, Format, Tensor};
/// let mut entries = CoordinateList::new(&[3, 4]);
/// for (i, j) in [(0, 0), (0, 2), (2, 3)] {
///     entries.push(&[i, j], 1.0).unwrap();
/// }
/// let census = Census::of(&entries);
/// assert_eq!(census.nonempty_slices(0), 2);
/// assert_eq!(census.diagonals(), Some(3)); // column - row: 0, 2 and 1
/// let packed = Tensor::pack(&entries, Format::csr()).unwrap();
/// let size = census.footprint(&Format::csr()).unwrap();
/// assert_eq!(size.bytes, packed.bytes() as u128);
/// assert_eq!(size.values, packed.stored() as u128);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Census {
    shape: Vec<usize>,
    entries: u128,
    /// For each mode, the entries of each nonempty slice, in no order.
    slice_lengths: Vec<Vec<u64>>,
    /// `prefixes[k]`: distinct coordinates `(c_0, …, c_k)` among the entries.
    prefixes: Vec<u128>,
    /// Distinct `column - row` of a matrix's entries.
    diagonals: Option<u128>,
    /// Nonempty `b x b` blocks of a matrix, for each `b` of [`CENSUS_BLOCKS`]
    /// that divides both dimensions.
    blocks: Vec<(usize, u128)>,
    /// Values that are NaN.
    nans: u128,
    /// Values that are infinite.
    infinities: u128,
}

/// A format's size as packing would give it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormatFootprint {
    /// Bytes of index arrays and values.
    pub bytes: u128,
    /// Values stored, padding and explicit zeros included.
    pub values: u128,
    /// Whether some level would have more positions than tessera packs
    /// ([`MAX_POSITIONS`]).
    pub too_large: bool,
}

impl Census {
    /// The census of `entries`, which should be canonical (sorted, no
    /// duplicates; see [`CoordinateList::canonicalize`]); a list that is not
    /// is counted as its canonical copy.
    pub fn of(entries: &CoordinateList<f64>) -> Census {
        if entries.is_canonical() {
            Self::of_canonical(entries)
        } else {
            let mut canonical = entries.clone();
            canonical.canonicalize();
            Self::of_canonical(&canonical)
        }
    }

    fn of_canonical(entries: &CoordinateList<f64>) -> Census {
        let shape = entries.shape().to_vec();
        let order = shape.len();
        let n = entries.len();
        let mut slices: Vec<SliceCounter> = shape.iter().map(|&d| SliceCounter::new(d, n)).collect();
        let mut prefixes = vec![0u128; order];
        let mut diagonals = (order == 2).then(|| DiagonalSet::new(shape[0], shape[1], n));
        let mut blocks: Vec<BlockCounter> = if order == 2 {
            CENSUS_BLOCKS
                .iter()
                .filter(|&&b| shape[0] % b == 0 && shape[1] % b == 0)
                .map(|&b| BlockCounter::new(b, shape[1], n))
                .collect()
        } else {
            Vec::new()
        };
        let (mut nans, mut infinities) = (0u128, 0u128);
        let mut previous: Option<&[u64]> = None;
        for (c, v) in entries.iter() {
            // The first mode where this entry leaves the previous one's
            // prefix: every longer prefix is new.
            let first_new = previous.map_or(0, |p| p.iter().zip(c).position(|(a, b)| a != b).unwrap_or(order));
            for count in &mut prefixes[first_new..] {
                *count += 1;
            }
            previous = Some(c);
            for (counter, &coord) in slices.iter_mut().zip(c) {
                counter.add(coord);
            }
            if let Some(set) = &mut diagonals {
                set.add(c[0], c[1]);
            }
            for counter in &mut blocks {
                counter.add(c[0], c[1]);
            }
            nans += u128::from(v.is_nan());
            infinities += u128::from(v.is_infinite());
        }
        Census {
            shape,
            entries: n as u128,
            slice_lengths: slices.into_iter().map(SliceCounter::lengths).collect(),
            prefixes,
            diagonals: diagonals.map(DiagonalSet::count),
            blocks: blocks.into_iter().map(|b| (b.block, b.finish())).collect(),
            nans,
            infinities,
        }
    }

    /// The shape of the tensor counted.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }
    /// Entries (nonzeros of a pruned list).
    pub fn entries(&self) -> u128 {
        self.entries
    }
    /// The entries of each nonempty slice of `mode`, in no order.
    pub fn slice_lengths(&self, mode: usize) -> &[u64] {
        &self.slice_lengths[mode]
    }
    /// Slices of `mode` that hold an entry.
    pub fn nonempty_slices(&self, mode: usize) -> u128 {
        self.slice_lengths[mode].len() as u128
    }
    /// The most entries of any slice of `mode`.
    pub fn longest_slice(&self, mode: usize) -> u128 {
        u128::from(self.slice_lengths[mode].iter().copied().max().unwrap_or(0))
    }
    /// Distinct diagonals (`column - row`) of a matrix's entries.
    pub fn diagonals(&self) -> Option<u128> {
        self.diagonals
    }
    /// Nonempty `block x block` blocks of a matrix, when `block` is one of
    /// [`CENSUS_BLOCKS`] and divides both dimensions.
    pub fn blocks(&self, block: usize) -> Option<u128> {
        self.blocks.iter().find(|(b, _)| *b == block).map(|&(_, count)| count)
    }
    /// Values that are NaN.
    pub fn nans(&self) -> u128 {
        self.nans
    }
    /// Values that are infinite.
    pub fn infinities(&self) -> u128 {
        self.infinities
    }

    /// The size `format` would take for these entries (values of 8 bytes),
    /// level by level through [`Level::footprint`]; `None` when the format
    /// does not fit the shape or needs a count the census does not keep.
    pub fn footprint(&self, format: &Format) -> Option<FormatFootprint> {
        format.check_shape(&self.shape).ok()?;
        let levels = format.levels();
        let projections: Vec<Projection> = levels.iter().map(|l| l.projection).collect();
        let mut parents = 1u128;
        let mut bytes = 0u128;
        let mut too_large = false;
        for (k, level) in levels.iter().enumerate() {
            let counts = LevelCounts {
                parents,
                extent: self.extent(format, k)?,
                distinct: self.distinct(&projections[..=k]),
                entries: self.entries,
                widest: self.widest(&projections[..k], projections[k]),
            };
            let size = level.level.footprint(&counts)?;
            too_large |= size.positions > MAX_POSITIONS as u128;
            parents = size.positions;
            bytes += size.bytes;
        }
        Some(FormatFootprint {
            bytes: bytes + parents * std::mem::size_of::<f64>() as u128,
            values: parents,
            too_large,
        })
    }

    /// The extent of level `k`: from the shape, or for a level that stores
    /// no mode, from the data (DIA's diagonals, ELL's slots).
    fn extent(&self, format: &Format, k: usize) -> Option<u128> {
        if let Some(extent) = format.level_extent(k, &self.shape) {
            return Some(extent as u128);
        }
        match format.levels()[k].projection {
            Projection::Diagonal { .. } => self.diagonals,
            Projection::Slot { row } => Some(self.longest_slice(row)),
            Projection::Mode { .. } => None,
        }
    }

    /// Distinct storage coordinates `(levels 0..=k)` among the entries, for
    /// the prefixes a census knows.
    fn distinct(&self, prefix: &[Projection]) -> Option<u128> {
        if self.determines_entries(prefix) {
            return Some(self.entries);
        }
        let whole: Option<Vec<usize>> = prefix
            .iter()
            .map(|p| match p {
                Projection::Mode {
                    mode,
                    split: Split::Whole,
                } => Some(*mode),
                _ => None,
            })
            .collect();
        if let Some(modes) = whole {
            if let [mode] = modes[..] {
                return Some(self.nonempty_slices(mode));
            }
            if modes.iter().enumerate().all(|(k, &m)| k == m) {
                return self.prefixes.get(modes.len().checked_sub(1)?).copied();
            }
            return None;
        }
        match prefix {
            [Projection::Mode {
                mode: 0,
                split: Split::Outer(r),
            }, Projection::Mode {
                mode: 1,
                split: Split::Outer(c),
            }] if r == c => self.blocks(*r),
            [Projection::Diagonal { .. }] => self.diagonals,
            [Projection::Slot { row }] => Some(self.longest_slice(*row)),
            _ => None,
        }
    }

    /// The most distinct coordinates of `level` below one position of the
    /// levels `prefix`, for the cases a census knows: below the root, and a
    /// matrix's columns below its rows (or rows below columns).
    fn widest(&self, prefix: &[Projection], level: Projection) -> Option<u128> {
        match prefix {
            [] => self.distinct(&[level]),
            [Projection::Mode {
                mode,
                split: Split::Whole,
            }] if self.shape.len() == 2 && self.determines_entries(&[prefix[0], level]) => {
                Some(self.longest_slice(*mode))
            }
            _ => None,
        }
    }

    /// Whether the storage coordinates of `prefix` name one entry: every
    /// mode is stored whole, as outer and inner part, or follows from a
    /// diagonal or a slot and the row.
    fn determines_entries(&self, prefix: &[Projection]) -> bool {
        let order = self.shape.len();
        let mut known = vec![false; order];
        let mut outer = vec![false; order];
        let mut inner = vec![false; order];
        for p in prefix {
            if let Projection::Mode { mode, split } = *p {
                match split {
                    Split::Whole => known[mode] = true,
                    Split::Outer(_) => outer[mode] = true,
                    Split::Inner(_) => inner[mode] = true,
                }
            }
        }
        for m in 0..order {
            known[m] |= outer[m] && inner[m];
        }
        // A diagonal gives one mode from the other; a slot is the rank of an
        // entry in its row, which names it once the row is known.
        for p in prefix {
            match *p {
                Projection::Diagonal { row, col } if known[row] || known[col] => {
                    known[row] = true;
                    known[col] = true;
                }
                Projection::Slot { row } if known[row] => known.iter_mut().for_each(|k| *k = true),
                _ => {}
            }
        }
        known.iter().all(|&k| k)
    }
}

/// Modes up to this many times the entries (or 2^20) are counted in an
/// array; larger ones in a map of the slices that occur.
const DENSE_COUNTS_PER_ENTRY: usize = 4;

/// Entries per slice of one mode.
enum SliceCounter {
    Dense(Vec<u64>),
    Sparse(HashMap<u64, u64>),
}

impl SliceCounter {
    fn new(slices: usize, entries: usize) -> Self {
        if slices <= entries.saturating_mul(DENSE_COUNTS_PER_ENTRY).max(1 << 20) {
            SliceCounter::Dense(vec![0; slices])
        } else {
            SliceCounter::Sparse(HashMap::new())
        }
    }
    #[inline]
    fn add(&mut self, coord: u64) {
        match self {
            SliceCounter::Dense(counts) => counts[coord as usize] += 1,
            SliceCounter::Sparse(counts) => *counts.entry(coord).or_insert(0) += 1,
        }
    }
    fn lengths(self) -> Vec<u64> {
        match self {
            SliceCounter::Dense(mut counts) => {
                counts.retain(|&c| c > 0);
                counts.shrink_to_fit();
                counts
            }
            SliceCounter::Sparse(counts) => counts.into_values().collect(),
        }
    }
}

/// The distinct diagonals of a matrix: a bit per possible diagonal when
/// they are not many more than the entries, else a set.
enum DiagonalSet {
    Bits { bits: Vec<u64>, rows: u64 },
    Set(HashSet<i128>),
}

impl DiagonalSet {
    fn new(rows: usize, cols: usize, entries: usize) -> Self {
        let possible = rows as u128 + cols as u128;
        if possible <= (entries as u128 * 64).max(1 << 24) {
            DiagonalSet::Bits {
                bits: vec![0; (possible as usize).div_ceil(64)],
                rows: rows as u64,
            }
        } else {
            DiagonalSet::Set(HashSet::new())
        }
    }
    #[inline]
    fn add(&mut self, i: u64, j: u64) {
        match self {
            // `j + rows - 1 - i` is in `0..rows + cols - 1`.
            DiagonalSet::Bits { bits, rows } => {
                let d = (j + *rows - 1 - i) as usize;
                bits[d / 64] |= 1 << (d % 64);
            }
            DiagonalSet::Set(set) => {
                set.insert(i128::from(j) - i128::from(i));
            }
        }
    }
    fn count(self) -> u128 {
        match self {
            DiagonalSet::Bits { bits, .. } => bits.iter().map(|w| u128::from(w.count_ones())).sum(),
            DiagonalSet::Set(set) => set.len() as u128,
        }
    }
}

/// Nonempty `block x block` blocks of a matrix whose entries come sorted by
/// row: the entries of one block row are consecutive, so a block is new
/// when its column block was last seen in an earlier block row. The last
/// block row of each column block is kept in an array when there are not
/// many more column blocks than entries, else in a map.
struct BlockCounter {
    block: usize,
    last_seen: SliceMarks,
    count: u128,
}

enum SliceMarks {
    /// Block row + 1 of each column block's last entry, 0 for none.
    Dense(Vec<u64>),
    Sparse(HashMap<u64, u64>),
}

impl BlockCounter {
    fn new(block: usize, cols: usize, entries: usize) -> Self {
        let column_blocks = cols.div_ceil(block);
        let last_seen = if column_blocks <= entries.saturating_mul(DENSE_COUNTS_PER_ENTRY).max(1 << 20) {
            SliceMarks::Dense(vec![0; column_blocks])
        } else {
            SliceMarks::Sparse(HashMap::new())
        };
        BlockCounter {
            block,
            last_seen,
            count: 0,
        }
    }
    #[inline]
    fn add(&mut self, i: u64, j: u64) {
        let b = self.block as u64;
        let mark = i / b + 1;
        let last = match &mut self.last_seen {
            SliceMarks::Dense(marks) => &mut marks[(j / b) as usize],
            SliceMarks::Sparse(marks) => marks.entry(j / b).or_insert(0),
        };
        if *last != mark {
            *last = mark;
            self.count += 1;
        }
    }
    fn finish(self) -> u128 {
        self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::Tensor;
    use rand::{rngs::SmallRng, Rng, SeedableRng};

    /// The formats `tessera info` measures, by order.
    fn formats(order: usize) -> Vec<Format> {
        match order {
            1 => vec![
                Format::dense(1),
                Format::sparse_vector(),
                Format::coo(1),
                Format::hash_vector(),
            ],
            2 => vec![
                Format::dense(2),
                Format::csr(),
                Format::csc(),
                Format::dcsr(),
                Format::dcsc(),
                Format::coo(2),
                Format::dia(),
                Format::ell(),
                Format::bcsr(2, 2).unwrap(),
                Format::bcsr(4, 4).unwrap(),
                Format::hash_rows(),
            ],
            n => vec![Format::dense(n), Format::coo(n), Format::csf(n)],
        }
    }

    fn random_list(rng: &mut SmallRng, shape: &[usize], density: f64) -> CoordinateList<f64> {
        let components: usize = shape.iter().product();
        let mut list = CoordinateList::new(shape);
        let mut coords = vec![0u64; shape.len()];
        for _ in 0..((components as f64 * density) as usize).max(1) {
            for (c, &d) in coords.iter_mut().zip(shape) {
                *c = rng.random_range(0..d as u64);
            }
            list.push(&coords, rng.random_range(-4..=4) as f64 + 0.5).unwrap();
        }
        list.canonicalize();
        list
    }

    #[test]
    fn footprints_match_packing_on_random_tensors_of_every_order() {
        let mut rng = SmallRng::seed_from_u64(16);
        let shapes: &[&[usize]] = &[
            &[1],
            &[37],
            &[8, 8],
            &[12, 20],
            &[20, 12],
            &[1, 16],
            &[64, 4],
            &[5, 7],
            &[6, 5, 4],
            &[3, 9, 2, 5],
        ];
        for shape in shapes {
            for density in [0.02, 0.1, 0.4, 0.9] {
                let list = random_list(&mut rng, shape, density);
                let census = Census::of(&list);
                for format in formats(shape.len()) {
                    let packed = Tensor::pack(&list, format.clone());
                    let computed = census.footprint(&format);
                    match packed {
                        Ok(t) => {
                            let computed = computed.unwrap_or_else(|| panic!("{format} on {shape:?}: no footprint"));
                            assert_eq!(
                                (computed.bytes, computed.values),
                                (t.bytes() as u128, t.stored() as u128),
                                "{format} on {shape:?} at density {density}"
                            );
                        }
                        // BCSR blocks that do not divide the shape.
                        Err(_) => assert_eq!(computed, None, "{format} on {shape:?}"),
                    }
                }
            }
        }
    }

    #[test]
    fn an_empty_matrix_has_footprints_too() {
        let list = CoordinateList::new(&[4, 8]);
        let census = Census::of(&list);
        for format in formats(2) {
            let packed = Tensor::pack(&list, format.clone()).unwrap();
            let computed = census.footprint(&format).unwrap();
            assert_eq!(
                (computed.bytes, computed.values),
                (packed.bytes() as u128, packed.stored() as u128),
                "{format}"
            );
        }
    }

    #[test]
    fn counts_of_a_hand_checked_matrix() {
        // [[1, 0, 0, 2],
        //  [0, 0, 0, 0],
        //  [3, 4, 0, 0],
        //  [0, NaN, 0, inf]]
        let mut list = CoordinateList::new(&[4, 4]);
        for (i, j, v) in [
            (0, 0, 1.0),
            (0, 3, 2.0),
            (2, 0, 3.0),
            (2, 1, 4.0),
            (3, 1, f64::NAN),
            (3, 3, f64::INFINITY),
        ] {
            list.push(&[i, j], v).unwrap();
        }
        let census = Census::of(&list);
        assert_eq!(census.entries(), 6);
        assert_eq!(census.nonempty_slices(0), 3);
        assert_eq!(census.nonempty_slices(1), 3);
        assert_eq!(census.longest_slice(0), 2);
        assert_eq!(census.longest_slice(1), 2);
        let mut rows = census.slice_lengths(0).to_vec();
        rows.sort_unstable();
        assert_eq!(rows, [2, 2, 2]);
        // Offsets 0, 3, -2, -1, -2, 0: four distinct.
        assert_eq!(census.diagonals(), Some(4));
        // 2x2 blocks: (0,0), (0,1), (1,0), (1,0), (1,1): four nonempty.
        assert_eq!(census.blocks(2), Some(4));
        assert_eq!(census.blocks(4), Some(1));
        assert_eq!(census.blocks(3), None);
        assert_eq!((census.nans(), census.infinities()), (1, 1));
        // CSR: pos 5 x 4 B, idx 6 x 4 B, values 6 x 8 B.
        assert_eq!(census.footprint(&Format::csr()).unwrap().bytes, 20 + 24 + 48);
        // DIA: pos 2 x 4 B, 4 diagonals of 4 B, and 4 x 4 values of 8 B.
        let dia = census.footprint(&Format::dia()).unwrap();
        assert_eq!((dia.bytes, dia.values), (8 + 16 + 128, 16));
    }

    #[test]
    fn a_huge_mode_is_counted_without_an_array_of_its_size() {
        let mut list = CoordinateList::new(&[10_000_000_000, 10]);
        list.push(&[9_999_999_999, 3], 1.0).unwrap();
        let census = Census::of(&list);
        assert_eq!(census.nonempty_slices(0), 1);
        assert_eq!(census.diagonals(), Some(1));
        let csr = census.footprint(&Format::csr()).unwrap();
        // pos: 10^10 + 1 elements of 4 bytes; idx 4; one value 8.
        assert_eq!(csr.bytes, 4 * (10_000_000_001 + 1) + 8);
        assert!(csr.too_large);
        let dcsr = census.footprint(&Format::dcsr()).unwrap();
        assert!(!dcsr.too_large);
    }
}
