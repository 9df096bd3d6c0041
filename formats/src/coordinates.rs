//! Coordinate lists: the exchange form between files, packing and unpacking.

use crate::error::{FormatError, Result};
use crate::value::Value;

/// Most entries tessera will hold in one coordinate list or tensor; larger
/// requests (from a file header, say) are refused before allocating.
pub const MAX_ENTRIES: usize = 1 << 32;

/// Most positions a tensor's levels may have (dense levels, padding, hash
/// tables): 2^31 values are 16 GiB of `f64`.
pub const MAX_POSITIONS: usize = 1 << 31;

/// A list of (coordinates, value) entries of a tensor of a given shape, in
/// any order and possibly with duplicates. Coordinates are stored entry by
/// entry (`order` per entry).
#[derive(Debug, Clone, PartialEq)]
pub struct CoordinateList<V = f64> {
    shape: Vec<usize>,
    coords: Vec<u64>,
    values: Vec<V>,
}

impl<V: Value> CoordinateList<V> {
    /// An empty list for a tensor of `shape`.
    pub fn new(shape: &[usize]) -> Self {
        CoordinateList {
            shape: shape.to_vec(),
            coords: Vec::new(),
            values: Vec::new(),
        }
    }

    /// An empty list with room for `entries`, refused when absurd.
    pub fn with_capacity(shape: &[usize], entries: usize) -> Result<Self> {
        if entries > MAX_ENTRIES {
            return Err(FormatError::TooLarge(format!(
                "{entries} entries (the limit is {MAX_ENTRIES})"
            )));
        }
        let coords = entries
            .checked_mul(shape.len().max(1))
            .ok_or_else(|| FormatError::TooLarge(format!("{entries} entries of order {}", shape.len())))?;
        crate::budget::check_allocation(
            &format!("{entries} entries of order {}", shape.len()),
            coords as u128 * 8 + entries as u128 * 8,
        )?;
        // Reserve at most `RESERVE` entries up front: `entries` may come from
        // an untrusted header, and the vectors grow as entries arrive.
        const RESERVE: usize = 1 << 20;
        let reserved = entries.min(RESERVE);
        Ok(CoordinateList {
            shape: shape.to_vec(),
            coords: Vec::with_capacity(coords.min(RESERVE * shape.len().max(1))),
            values: Vec::with_capacity(reserved),
        })
    }

    /// Builds a list from parallel coordinates and values, checking ranges.
    pub fn from_entries(shape: &[usize], coords: &[Vec<u64>], values: &[V]) -> Result<Self> {
        if coords.len() != values.len() {
            return Err(FormatError::Shape(format!(
                "{} coordinate tuples for {} values",
                coords.len(),
                values.len()
            )));
        }
        let mut list = Self::with_capacity(shape, values.len())?;
        for (c, &v) in coords.iter().zip(values) {
            list.push(c, v)?;
        }
        Ok(list)
    }

    /// Appends an entry, checking its order and ranges.
    pub fn push(&mut self, coords: &[u64], value: V) -> Result<()> {
        if coords.len() != self.shape.len() {
            return Err(FormatError::Shape(format!(
                "entry {} has {} coordinates, the tensor has order {}",
                self.values.len(),
                coords.len(),
                self.shape.len()
            )));
        }
        for (mode, (&c, &size)) in coords.iter().zip(&self.shape).enumerate() {
            if c >= size as u64 {
                return Err(FormatError::CoordinateOutOfRange {
                    entry: self.values.len(),
                    mode,
                    coordinate: c,
                    size,
                });
            }
        }
        self.coords.extend_from_slice(coords);
        self.values.push(value);
        Ok(())
    }

    /// Makes room for `entries` more entries (the caller knows they come).
    pub(crate) fn reserve(&mut self, entries: usize) {
        self.coords.reserve(entries * self.shape.len());
        self.values.reserve(entries);
    }

    /// Appends an entry the caller has already range-checked.
    pub(crate) fn push_unchecked(&mut self, coords: &[u64], value: V) {
        debug_assert!(coords.iter().zip(&self.shape).all(|(&c, &s)| c < s as u64));
        // Element by element: a copy of a few words is not worth a call
        // of memcpy per entry.
        for &c in coords {
            self.coords.push(c);
        }
        self.values.push(value);
    }

    /// A list from entry-by-entry coordinates the caller has already
    /// range-checked against `shape` (file readers learn the shape last).
    pub(crate) fn from_raw_parts(shape: Vec<usize>, coords: Vec<u64>, values: Vec<V>) -> Self {
        debug_assert_eq!(coords.len(), values.len() * shape.len());
        debug_assert!(coords
            .chunks(shape.len().max(1))
            .all(|c| c.iter().zip(&shape).all(|(&c, &s)| c < s as u64)));
        CoordinateList { shape, coords, values }
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }
    pub fn order(&self) -> usize {
        self.shape.len()
    }
    pub fn len(&self) -> usize {
        self.values.len()
    }
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
    /// Coordinates of entry `e`.
    pub fn coords(&self, e: usize) -> &[u64] {
        let n = self.shape.len();
        &self.coords[e * n..(e + 1) * n]
    }
    pub fn value(&self, e: usize) -> V {
        self.values[e]
    }
    pub fn values(&self) -> &[V] {
        &self.values
    }
    /// Entries as (coordinates, value) pairs.
    pub fn iter(&self) -> impl Iterator<Item = (&[u64], V)> + '_ {
        (0..self.len()).map(move |e| (self.coords(e), self.values[e]))
    }

    /// Whether entries are sorted lexicographically by coordinates, without
    /// duplicates.
    pub fn is_canonical(&self) -> bool {
        (1..self.len()).all(|e| lexicographic(self.coords(e - 1), self.coords(e)).is_lt())
    }

    /// Sorts the entries lexicographically by coordinates and sums
    /// duplicates. Linear when already sorted.
    pub fn canonicalize(&mut self) {
        if self.is_canonical() {
            return;
        }
        let n = self.shape.len();
        let mut perm: Vec<usize> = (0..self.len()).collect();
        if !(1..self.len()).all(|e| lexicographic(self.coords(e - 1), self.coords(e)).is_le()) {
            if n == 2 && self.shape[0] <= 2 * self.len() + 4096 {
                return self.canonicalize_matrix();
            }
            perm = self.sorted_order();
        }
        let mut coords = Vec::with_capacity(self.coords.len());
        let mut values: Vec<V> = Vec::with_capacity(self.len());
        for &e in &perm {
            let c = self.coords(e);
            let k = values.len();
            if k > 0 && lexicographic(&coords[(k - 1) * n..k * n], c).is_eq() {
                values[k - 1] = values[k - 1].accumulate(self.values[e]);
            } else {
                for &x in c {
                    coords.push(x);
                }
                values.push(self.values[e]);
            }
        }
        self.coords = coords;
        self.values = values;
    }

    /// Entry indices in lexicographic order of coordinates, equal
    /// coordinates in input order (so duplicates sum in a fixed order).
    fn sorted_order(&self) -> Vec<usize> {
        let strides = row_major_strides(&self.shape);
        match strides {
            // Coordinates fit one 64-bit key: sort (key, index) pairs.
            Some(strides) => crate::sorting::order_by_key(
                (0..self.len()).map(|e| self.coords(e).iter().zip(&strides).map(|(&c, &s)| c * s).sum()),
            ),
            None => {
                let mut perm: Vec<usize> = (0..self.len()).collect();
                perm.sort_by(|&a, &b| lexicographic(self.coords(a), self.coords(b)));
                perm
            }
        }
    }

    /// [`canonicalize`](Self::canonicalize) of a matrix, as scipy puts COO
    /// in CSR order: entries counted by row, placed row by row with their
    /// column, each row sorted by column (the entry's index breaking ties,
    /// so duplicates sum in input order), then listed.
    fn canonicalize_matrix(&mut self) {
        let (rows, n) = (self.shape[0], self.len());
        let starts = crate::sorting::bucket_starts((0..n).map(|e| self.coords[2 * e] as usize), rows);
        let mut next = starts.clone();
        let mut placed = vec![(0u64, 0usize); n];
        for e in 0..n {
            let slot = &mut next[self.coords[2 * e] as usize];
            placed[*slot] = (self.coords[2 * e + 1], e);
            *slot += 1;
        }
        let mut coords = Vec::with_capacity(2 * n);
        let mut values: Vec<V> = Vec::with_capacity(n);
        for r in 0..rows {
            let row = &mut placed[starts[r]..starts[r + 1]];
            row.sort_unstable();
            let mut last = None;
            for &(col, e) in row.iter() {
                let v = self.values[e];
                if last == Some(col) {
                    let k = values.len() - 1;
                    values[k] = values[k].accumulate(v);
                } else {
                    coords.push(r as u64);
                    coords.push(col);
                    values.push(v);
                    last = Some(col);
                }
            }
        }
        self.coords = coords;
        self.values = values;
    }

    /// The canonical list without entries whose value is zero: two tensors
    /// are equal exactly when their pruned lists are.
    pub fn pruned(&self) -> Self {
        self.pruned_against(V::zero())
    }

    /// The canonical list without entries whose value is `fill` (the
    /// value of components not listed).
    pub fn pruned_against(&self, fill: V) -> Self {
        self.clone().into_pruned_against(fill)
    }

    /// [`pruned_against`](Self::pruned_against), reusing the list's own
    /// storage.
    pub fn into_pruned_against(mut self, fill: V) -> Self {
        self.canonicalize();
        let n = self.shape.len();
        let mut kept = 0;
        for e in 0..self.values.len() {
            if self.values[e] != fill {
                for m in 0..n {
                    self.coords[kept * n + m] = self.coords[e * n + m];
                }
                self.values[kept] = self.values[e];
                kept += 1;
            }
        }
        self.coords.truncate(kept * n);
        self.values.truncate(kept);
        self
    }

    /// [`pruned`](Self::pruned) in place: canonical, without zero values,
    /// and without a second copy of the entries when they are already
    /// sorted (a file read for statistics need not be held twice).
    pub fn prune(&mut self) {
        self.canonicalize();
        let n = self.shape.len();
        let mut kept = 0;
        for e in 0..self.values.len() {
            if !self.values[e].is_zero() {
                self.coords.copy_within(e * n..(e + 1) * n, kept * n);
                self.values[kept] = self.values[e];
                kept += 1;
            }
        }
        self.coords.truncate(kept * n);
        self.values.truncate(kept);
    }

    /// Applies `f` to every value.
    pub fn map_values(&mut self, mut f: impl FnMut(V) -> V) {
        for v in &mut self.values {
            *v = f(*v);
        }
    }

    /// Reorders modes: mode `m` of the result is mode `perm[m]` of `self`.
    pub fn permute(&self, perm: &[usize]) -> Result<Self> {
        let n = self.order();
        let mut seen = vec![false; n];
        if perm.len() != n || perm.iter().any(|&m| m >= n || std::mem::replace(&mut seen[m], true)) {
            return Err(FormatError::Shape(format!(
                "{perm:?} is not a permutation of {n} modes"
            )));
        }
        let shape: Vec<usize> = perm.iter().map(|&m| self.shape[m]).collect();
        let mut out = Self::with_capacity(&shape, self.len())?;
        let mut c = vec![0u64; n];
        for e in 0..self.len() {
            let src = self.coords(e);
            for (k, &m) in perm.iter().enumerate() {
                c[k] = src[m];
            }
            out.push_unchecked(&c, self.values[e]);
        }
        Ok(out)
    }
}

/// Row-major strides of `shape`, when every linear index fits in 64 bits.
fn row_major_strides(shape: &[usize]) -> Option<Vec<u64>> {
    let mut strides = vec![0u64; shape.len()];
    let mut total: u64 = 1;
    for k in (0..shape.len()).rev() {
        strides[k] = total;
        total = total.checked_mul(shape[k] as u64)?;
    }
    Some(strides)
}

/// `a` against `b` lexicographically: the slices' own comparison calls
/// `memcmp`, too slow for the few coordinates of one entry.
#[inline]
fn lexicographic(a: &[u64], b: &[u64]) -> std::cmp::Ordering {
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}
