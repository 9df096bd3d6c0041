//! Tensors: a shape, a format, the storage of each level and the values.
//!
//! A [`Tensor`] is valid by construction: [`Tensor::from_parts`] validates
//! raw arrays, and packing ([`Tensor::pack`]) builds valid storage. Compiled
//! kernels rely on this for memory safety.

use smallvec::SmallVec;

use crate::coordinates::{CoordinateList, MAX_POSITIONS};
use crate::error::{FormatError, Result};
use crate::format::{Format, Projection, Split};
use crate::index::IndexArray;
use crate::level::{Level, PackInput, Segment};
use crate::staging::{Immediate, LevelRef, StorageResolver};
use crate::value::Value;
use crate::walk::{Entries, Walk};

/// The data of one level: the extent of its coordinates, its index arrays
/// (which ones, in which slots, is the level format's business) and scalar
/// parameters.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LevelStorage {
    pub extent: usize,
    pub arrays: SmallVec<[IndexArray; 2]>,
    pub params: SmallVec<[i64; 2]>,
}

impl LevelStorage {
    pub fn new(extent: usize) -> Self {
        LevelStorage {
            extent,
            arrays: SmallVec::new(),
            params: SmallVec::new(),
        }
    }
    /// Bytes the level's arrays occupy.
    pub fn bytes(&self) -> usize {
        self.arrays.iter().map(IndexArray::bytes).sum()
    }
}

/// A tensor stored in some format.
///
/// ```
/// use tessera_formats::{CoordinateList, Format, Tensor};
/// let mut entries = CoordinateList::new(&[2, 3]);
/// entries.push(&[1, 2], 5.0).unwrap();
/// entries.push(&[0, 1], 1.0).unwrap();
/// entries.push(&[1, 2], 2.0).unwrap(); // duplicates are summed
/// let a = Tensor::pack(&entries, Format::csr()).unwrap();
/// assert_eq!(a.values(), &[1.0, 7.0]);
/// let b = a.convert(&Format::coo(2)).unwrap();
/// assert_eq!(b.to_coordinates(), a.to_coordinates());
/// ```
#[derive(Debug, Clone)]
pub struct Tensor<V = f64> {
    shape: Vec<usize>,
    format: Format,
    levels: Vec<LevelStorage>,
    sizes: Vec<usize>,
    values: Vec<V>,
    /// The value of every component not stored (and of padding).
    fill: V,
    version: Version,
}

/// Equal shapes, formats, stored arrays and fills; the [`Version`] is not
/// compared.
impl<V: PartialEq> PartialEq for Tensor<V> {
    fn eq(&self, other: &Self) -> bool {
        self.shape == other.shape
            && self.format == other.format
            && self.levels == other.levels
            && self.sizes == other.sizes
            && self.values == other.values
            && self.fill == other.fill
    }
}

/// What [`Tensor::first_nonzeros`] finds: how many nonzeros there are, and
/// the first of them by coordinates.
#[derive(Debug, Clone, PartialEq)]
pub struct FirstNonzeros<V> {
    pub count: usize,
    pub first: Vec<(Vec<u64>, V)>,
}

/// One state of a tensor's contents. A tensor gets a version no other
/// tensor has when it is built and again whenever its values may change
/// ([`Tensor::values_mut`]); a clone keeps its original's version (its
/// contents are the same). So something derived from a tensor — a
/// conversion to another format, say — may be kept and reused for as long
/// as the tensor's version is the one it was derived from.
///
/// ```
/// use tessera_formats::Tensor;
/// let mut x = Tensor::from_dense(&[2], vec![1.0, 2.0]).unwrap();
/// let before = x.version();
/// assert_eq!(x.clone().version(), before);
/// x.values_mut()[0] = 5.0;
/// assert_ne!(x.version(), before);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Version(u64);

impl Version {
    fn fresh() -> Version {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Version(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

/// Read-only access to one tensor's levels for the [`Immediate`] builder.
pub struct TensorLevels<'a>(pub &'a [LevelStorage]);

impl StorageResolver for TensorLevels<'_> {
    #[inline(always)]
    fn level(&self, level: LevelRef) -> &LevelStorage {
        &self.0[level.level as usize]
    }
    fn level_mut(&mut self, _level: LevelRef) -> &mut LevelStorage {
        unreachable!("access level functions never store")
    }
}

/// Where the storage given to [`Tensor::from_parts_with_fill`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Copied {
    /// A coordinate list the packer checked is in the format's order
    /// (canonical for ordered levels; any order for unordered COO), copied
    /// in that order.
    InStorageOrder,
    /// Anything else: every invariant is checked.
    Other,
}

impl<V: Value> Tensor<V> {
    /// Builds a tensor from raw level arrays and values, validating every
    /// invariant the format claims.
    pub fn from_parts(shape: &[usize], format: Format, levels: Vec<LevelStorage>, values: Vec<V>) -> Result<Self> {
        let sizes = validate(shape, &format, &levels, values.len())?;
        Ok(Self::checked(shape, format, (levels, sizes), values, V::zero()))
    }

    /// A fresh tensor of storage already checked, whose levels hold `sizes`
    /// positions.
    fn checked(
        shape: &[usize],
        format: Format,
        (levels, sizes): (Vec<LevelStorage>, Vec<usize>),
        values: Vec<V>,
        fill: V,
    ) -> Self {
        Tensor {
            shape: shape.to_vec(),
            format,
            levels,
            sizes,
            values,
            fill,
            version: Version::fresh(),
        }
    }

    /// The tensor's level arrays and values, taken apart: storage to fill
    /// again (an engine keeps a result's parts to assemble the next one in
    /// without fresh memory).
    ///
    /// ```
    /// use tessera_formats::{CoordinateList, Format, Tensor};
    ///
    /// let mut list = CoordinateList::new(&[2, 2]);
    /// list.push(&[0, 1], 2.0).unwrap();
    /// list.push(&[1, 0], 3.0).unwrap();
    /// let (levels, values) = Tensor::pack(&list, Format::csr()).unwrap().into_storage();
    /// assert_eq!((levels.len(), values), (2, vec![2.0, 3.0]));
    /// ```
    pub fn into_storage(self) -> (Vec<LevelStorage>, Vec<V>) {
        (self.levels, self.values)
    }

    /// Builds a tensor from arrays that the caller guarantees are valid:
    /// kernels that assemble outputs by the format's own assembly functions.
    ///
    /// # Safety
    /// `levels` and `values` must satisfy every invariant that
    /// [`from_parts`](Self::from_parts) checks; compiled kernels read them
    /// without bounds checks.
    pub unsafe fn from_parts_unchecked(
        shape: &[usize],
        format: Format,
        levels: Vec<LevelStorage>,
        values: Vec<V>,
    ) -> Self {
        debug_assert!(validate(shape, &format, &levels, values.len()).is_ok());
        let sizes = level_sizes(&format, &levels);
        Self::checked(shape, format, (levels, sizes), values, V::zero())
    }

    /// A tensor storing what `pattern` stores, with `values` in place of
    /// its values: a kernel's output written at its operand's positions.
    /// The pattern's structure was checked when it was made, so only the
    /// levels ([`Format::same_levels_as`]) and the count of values are:
    /// a result on a million-entry pattern costs a copy, not a check.
    ///
    /// ```
    /// use tessera_formats::{CoordinateList, Format, Tensor};
    /// let mut entries = CoordinateList::new(&[2, 3]);
    /// entries.push(&[0, 1], 2.0).unwrap();
    /// entries.push(&[1, 0], 3.0).unwrap();
    /// let a = Tensor::pack(&entries, Format::csr()).unwrap();
    /// let doubled = Tensor::on_pattern_of(&a, a.shape(), Format::csr(), vec![4.0, 6.0]).unwrap();
    /// assert_eq!(doubled.to_dense_vec().unwrap(), vec![0.0, 4.0, 0.0, 6.0, 0.0, 0.0]);
    /// assert!(Tensor::on_pattern_of(&a, a.shape(), Format::csr(), vec![1.0]).is_err());
    /// // CSR levels over a 2 x 3 shape are CSC levels over its transpose.
    /// let t = Tensor::on_pattern_of(&a, &[3, 2], Format::csc(), vec![2.0, 3.0]).unwrap();
    /// assert_eq!(t.to_dense_vec().unwrap(), vec![0.0, 3.0, 2.0, 0.0, 0.0, 0.0]);
    /// assert!(Tensor::on_pattern_of(&a, &[2, 3], Format::csc(), vec![2.0, 3.0]).is_err());
    /// ```
    pub fn on_pattern_of<W: Value>(
        pattern: &Tensor<W>,
        shape: &[usize],
        format: Format,
        values: Vec<V>,
    ) -> Result<Self> {
        if !pattern.format.same_levels_as(&pattern.shape, &format, shape) || values.len() != pattern.values.len() {
            return Err(FormatError::BadFormat {
                format: format.to_string(),
                reason: format!(
                    "values for {} positions of a {:?} tensor cannot take the pattern of {} positions of a {:?} tensor in {}",
                    values.len(),
                    shape,
                    pattern.values.len(),
                    pattern.shape,
                    pattern.format
                ),
            });
        }
        let (levels, sizes) = (pattern.levels.clone(), pattern.sizes.clone());
        Ok(Self::checked(shape, format, (levels, sizes), values, V::zero()))
    }

    /// Packs entries (any order, duplicates summed) into `format`.
    pub fn pack(entries: &CoordinateList<V>, format: Format) -> Result<Self> {
        pack(entries, format, V::zero())
    }

    /// Packs entries into `format` with `fill` as the value of every
    /// component not given (and of the format's padding): `+inf` for
    /// distances, where an absent edge is no path.
    ///
    /// ```
    /// use tessera_formats::{CoordinateList, Format, Tensor};
    /// let mut entries = CoordinateList::new(&[3]);
    /// entries.push(&[1], 0.0).unwrap();
    /// let d = Tensor::pack_with_fill(&entries, Format::dense(1), f64::INFINITY).unwrap();
    /// assert_eq!(d.to_dense_vec().unwrap(), vec![f64::INFINITY, 0.0, f64::INFINITY]);
    /// ```
    pub fn pack_with_fill(entries: &CoordinateList<V>, format: Format, fill: V) -> Result<Self> {
        pack(entries, format, fill)
    }

    /// The value of every component the tensor does not store (0 unless
    /// set).
    pub fn fill(&self) -> V {
        self.fill
    }

    /// Refuses a tensor whose unstored components are not 0 where
    /// `target` (a file format, raw arrays) can only say "absent is 0";
    /// a dense tensor stores every component and passes.
    ///
    /// ```
    /// use tessera_formats::{Format, Tensor};
    /// let a = Tensor::<f64>::empty(&[2, 2], Format::csr()).unwrap().with_fill(f64::INFINITY).unwrap();
    /// let err = a.check_zero_fill("CSR arrays").unwrap_err().to_string();
    /// assert!(err.contains("fill inf"), "{err}");
    /// ```
    pub fn check_zero_fill(&self, target: &str) -> Result<()> {
        if self.fill.is_zero() || self.format.is_dense() {
            return Ok(());
        }
        Err(FormatError::BadFormat {
            format: target.to_string(),
            reason: format!(
                "the tensor's unstored components hold its fill {}, and {target} read them as 0: store it dense first, or make its fill 0",
                self.fill
            ),
        })
    }

    /// The same stored entries with `fill` as the value of every other
    /// component. Formats that pad (dense, DIA, ELL, BCSR) are packed
    /// again, their padding holding the fill; a stored zero is then taken
    /// for padding, as it cannot be told apart from it.
    ///
    /// ```
    /// use tessera_formats::{CoordinateList, Format, Tensor};
    /// let mut entries = CoordinateList::new(&[2, 2]);
    /// entries.push(&[0, 1], 3.0).unwrap();
    /// let a = Tensor::pack(&entries, Format::csr()).unwrap().with_fill(f64::INFINITY).unwrap();
    /// assert_eq!(a.fill(), f64::INFINITY);
    /// assert_eq!(a.to_dense_vec().unwrap(), vec![f64::INFINITY, 3.0, f64::INFINITY, f64::INFINITY]);
    /// ```
    pub fn with_fill(mut self, fill: V) -> Result<Self> {
        if fill == self.fill {
            return Ok(self);
        }
        if self.format.pads() {
            let entries = self.to_coordinates();
            return pack(&entries, self.format.clone(), fill);
        }
        self.fill = fill;
        self.version = Version::fresh();
        Ok(self)
    }

    /// [`from_parts`](Self::from_parts) of storage whose padding and
    /// unstored components hold `fill` already (a converter's output).
    /// Storage copied from a coordinate list already in the format's order
    /// ([`Copied::InStorageOrder`]) skips the walk over every entry that
    /// checks the order below non-unique levels: it is the list's, checked
    /// already. Each level's own checks always run.
    pub(crate) fn from_parts_with_fill(
        shape: &[usize],
        format: Format,
        (levels, values): (Vec<LevelStorage>, Vec<V>),
        fill: V,
        copied: Copied,
    ) -> Result<Self> {
        let sizes = match copied {
            Copied::Other => validate(shape, &format, &levels, values.len())?,
            Copied::InStorageOrder => {
                let sizes = validate_levels(shape, &format, &levels, values.len())?;
                debug_assert!(check_chains(&format, &levels).is_ok());
                sizes
            }
        };
        Ok(Self::checked(shape, format, (levels, sizes), values, fill))
    }

    /// A tensor of `shape` in `format` with no entries.
    pub fn empty(shape: &[usize], format: Format) -> Result<Self> {
        Self::pack(&CoordinateList::new(shape), format)
    }

    /// A dense tensor from values in row-major order.
    pub fn from_dense(shape: &[usize], values: Vec<V>) -> Result<Self> {
        let n = checked_product(shape)?;
        if values.len() != n {
            return Err(FormatError::Shape(format!(
                "{} values for a tensor of {n} components",
                values.len()
            )));
        }
        let format = Format::dense(shape.len());
        let levels = shape.iter().map(|&d| LevelStorage::new(d)).collect();
        Self::from_parts(shape, format, levels, values)
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }
    pub fn order(&self) -> usize {
        self.shape.len()
    }
    pub fn format(&self) -> &Format {
        &self.format
    }
    pub fn levels(&self) -> &[LevelStorage] {
        &self.levels
    }
    pub fn level(&self, k: usize) -> &LevelStorage {
        &self.levels[k]
    }
    /// Number of positions of each level.
    pub fn level_sizes(&self) -> &[usize] {
        &self.sizes
    }
    /// The values, indexed by the position of the last level.
    pub fn values(&self) -> &[V] {
        &self.values
    }
    /// Values may change freely: the structure is what validation guards.
    pub fn values_mut(&mut self) -> &mut [V] {
        self.version = Version::fresh();
        &mut self.values
    }
    /// The same structure with every value (and the fill) mapped by `f`:
    /// a tensor as another value type.
    ///
    /// ```
    /// use tessera_formats::Tensor;
    /// let x = Tensor::from_dense(&[2], vec![1.5, 0.0]).unwrap();
    /// assert_eq!(x.map_values(|v| v as f32).values(), &[1.5f32, 0.0]);
    /// ```
    pub fn map_values<W: Value>(&self, f: impl Fn(V) -> W) -> Tensor<W> {
        Tensor {
            shape: self.shape.clone(),
            format: self.format.clone(),
            levels: self.levels.clone(),
            sizes: self.sizes.clone(),
            values: self.values.iter().map(|&v| f(v)).collect(),
            fill: f(self.fill),
            version: Version::fresh(),
        }
    }
    /// The state of the tensor's contents: see [`Version`].
    pub fn version(&self) -> Version {
        self.version
    }
    /// Number of stored values (including explicit zeros and padding).
    pub fn stored(&self) -> usize {
        self.values.len()
    }
    /// Bytes of index arrays and values.
    pub fn bytes(&self) -> usize {
        self.levels.iter().map(LevelStorage::bytes).sum::<usize>() + self.values.len() * std::mem::size_of::<V>()
    }

    /// Visits every stored component through the level functions, in the
    /// format's iteration order, with its storage coordinates (one per level)
    /// and its position in the values.
    pub fn for_each_stored(&self, mut visit: impl FnMut(&[i64], usize)) {
        let n = self.levels.len();
        if n == 0 {
            visit(&[], 0);
            return;
        }
        let mut walk = Walk::new(&self.format, &self.levels, n - 1);
        while let Some((k, pos)) = walk.advance() {
            if k == n - 1 {
                visit(walk.coords(), pos as usize);
            }
        }
    }

    /// The stored entries, coordinates and value, in storage order (the
    /// format's iteration order: row by row for CSR, column by column for
    /// CSC, diagonal by diagonal for DIA), without building a list.
    ///
    /// What counts as stored:
    /// - in a per-mode format (CSR, CSC, COO, CSF, dense, hash maps, level
    ///   lists) every value the storage holds, explicit zeros included: a
    ///   dense tensor gives every component, COO and unordered COO each
    ///   stored duplicate (not summed; [`to_coordinates`](Self::to_coordinates)
    ///   sums them);
    /// - in a structured format (DIA, ELL, BCSR: a level that stores a
    ///   diagonal, a slot or part of a mode), the nonzero values only: the
    ///   zeros such a format stores are padding of its band, slots or blocks,
    ///   and an explicit zero stored there cannot be told from padding.
    ///
    /// A scalar gives one entry with no coordinates.
    ///
    /// ```
    /// use tessera_formats::{CoordinateList, Format, Tensor};
    /// let mut entries = CoordinateList::new(&[3, 3]);
    /// entries.push(&[2, 0], 1.0).unwrap();
    /// entries.push(&[0, 2], 2.0).unwrap();
    /// let a = Tensor::pack(&entries, Format::csc()).unwrap();
    /// let stored: Vec<(Vec<u64>, f64)> = a.entries().map(|(c, v)| (c.to_vec(), v)).collect();
    /// assert_eq!(stored, vec![(vec![2, 0], 1.0), (vec![0, 2], 2.0)]); // column by column
    /// // ELL pads the short rows with zeros; they are not entries.
    /// let ell = a.convert(&Format::ell()).unwrap();
    /// assert_eq!(ell.stored(), 3);
    /// assert_eq!(ell.entries().count(), 2);
    /// ```
    pub fn entries(&self) -> Entries<'_, V> {
        Entries::new(self)
    }

    /// The component at `coords` (zero where nothing is stored; stored
    /// duplicates summed), or `None` when `coords` is outside the shape.
    /// Levels that can locate their coordinate do; the others are searched
    /// below their parent only (a row of CSR, not the matrix).
    ///
    /// ```
    /// use tessera_formats::{CoordinateList, Format, Tensor};
    /// let mut entries = CoordinateList::new(&[2, 3]);
    /// entries.push(&[1, 2], 5.0).unwrap();
    /// let a = Tensor::pack(&entries, Format::csr()).unwrap();
    /// assert_eq!(a.get(&[1, 2]), Some(5.0));
    /// assert_eq!(a.get(&[0, 2]), Some(0.0));
    /// assert_eq!(a.get(&[2, 0]), None);
    /// ```
    pub fn get(&self, coords: &[u64]) -> Option<V> {
        if coords.len() != self.order() || coords.iter().zip(&self.shape).any(|(&c, &d)| c >= d as u64) {
            return None;
        }
        if self.levels.is_empty() {
            return Some(self.values.first().copied().unwrap_or_else(V::zero));
        }
        let wanted = wanted_storage_coords(&self.format, coords);
        let projections: Vec<Projection> = self.format.levels().iter().map(|l| l.projection).collect();
        let mut b = Immediate::new(TensorLevels(&self.levels));
        let mut logical = vec![0u64; self.order()];
        let mut sum = V::zero();
        find_levels(
            &self.format,
            &mut b,
            0,
            0,
            &wanted,
            &mut Vec::new(),
            &mut |storage, pos| {
                logical_coords(&projections, storage, &mut logical);
                if logical == coords {
                    sum = sum.accumulate(self.values[pos as usize]);
                }
            },
        );
        Some(sum)
    }

    /// Every stored component with its tensor coordinates, in iteration
    /// order, including explicit zeros and padding.
    pub fn stored_entries(&self) -> CoordinateList<V> {
        let mut list = CoordinateList::new(&self.shape);
        list.reserve(self.values.len());
        let mut coords = vec![0u64; self.order()];
        let projections: Vec<Projection> = self.format.levels().iter().map(|l| l.projection).collect();
        self.for_each_stored(|storage, pos| {
            logical_coords(&projections, storage, &mut coords);
            list.push_unchecked(&coords, self.values[pos]);
        });
        list
    }

    /// The number of entries other than the fill (nonzeros, when it is 0)
    /// and the first `limit` of them by coordinates,
    /// in `O(limit)` memory, without listing the tensor's entries: what a
    /// summary shows. `None` when a level may repeat coordinates, whose
    /// duplicates must be summed first ([`to_coordinates`](Self::to_coordinates)).
    ///
    /// ```
    /// use tessera_formats::{CoordinateList, Format, Tensor};
    /// let mut entries = CoordinateList::new(&[3, 3]);
    /// entries.push(&[2, 0], 1.0).unwrap();
    /// entries.push(&[0, 2], 2.0).unwrap();
    /// entries.push(&[1, 1], 3.0).unwrap();
    /// let a = Tensor::pack(&entries, Format::csc()).unwrap();
    /// let shown = a.first_nonzeros(2).unwrap();
    /// assert_eq!(shown.count, 3);
    /// assert_eq!(shown.first, vec![(vec![0, 2], 2.0), (vec![1, 1], 3.0)]);
    /// ```
    pub fn first_nonzeros(&self, limit: usize) -> Option<FirstNonzeros<V>> {
        if self.format.levels().iter().any(|l| !l.level.unique) {
            return None;
        }
        let projections: Vec<Projection> = self.format.levels().iter().map(|l| l.projection).collect();
        let mut coords = vec![0u64; self.order()];
        let mut count = 0usize;
        // The `limit` smallest coordinates so far, largest on top; storage
        // in coordinate order pushes only the first `limit`.
        let mut smallest: std::collections::BinaryHeap<(Vec<u64>, usize)> = std::collections::BinaryHeap::new();
        self.for_each_stored(|storage, pos| {
            if self.values[pos] == self.fill {
                return;
            }
            count += 1;
            if limit == 0 {
                return;
            }
            logical_coords(&projections, storage, &mut coords);
            if smallest.len() < limit {
                smallest.push((coords.clone(), pos));
            } else if smallest.peek().is_some_and(|(top, _)| coords < *top) {
                smallest.pop();
                smallest.push((coords.clone(), pos));
            }
        });
        let first = smallest
            .into_sorted_vec()
            .into_iter()
            .map(|(c, pos)| (c, self.values[pos]))
            .collect();
        Some(FirstNonzeros { count, first })
    }

    /// The tensor's nonzeros, sorted by coordinates, duplicates summed:
    /// the format-independent meaning of the tensor.
    pub fn to_coordinates(&self) -> CoordinateList<V> {
        self.stored_entries().into_pruned_against(self.fill)
    }

    /// The same tensor in another format (modes reordered as the target
    /// format says).
    pub fn convert(&self, format: &Format) -> Result<Tensor<V>> {
        if *format == self.format {
            return Ok(self.clone());
        }
        if let Some(direct) = crate::transpose::swapped(self, format).or_else(|| crate::direct::converted(self, format))
        {
            return direct;
        }
        self.check_listing("converting")?;
        pack(&self.to_coordinates(), format.clone(), self.fill)
    }

    /// The transpose-like reordering of modes: mode `m` of the result is mode
    /// `perm[m]` of `self`, stored in `format`.
    pub fn permute(&self, perm: &[usize], format: &Format) -> Result<Tensor<V>> {
        self.check_listing("permuting")?;
        pack(&self.to_coordinates().permute(perm)?, format.clone(), self.fill)
    }

    /// Refuses, before anything is allocated, to list the stored entries
    /// (a coordinate list and its sorted copy) beyond the memory budget.
    fn check_listing(&self, doing: &str) -> Result<()> {
        let per_entry = (self.order() as u128 + 1) * 8 * 2;
        crate::budget::check_allocation(
            &format!("{doing} a tensor of {} stored entries", self.stored()),
            self.stored() as u128 * per_entry,
        )
    }

    /// All components as a row-major dense array, refused when absurd.
    pub fn to_dense_vec(&self) -> Result<Vec<V>> {
        let n = checked_product(&self.shape)?;
        let mut out = vec![self.fill; n];
        // A stored entry replaces the fill; its duplicates add to it.
        let mut seen = vec![self.fill.is_zero(); if self.fill.is_zero() { 0 } else { n }];
        for (c, v) in self.entries() {
            let mut flat = 0usize;
            for (&ci, &d) in c.iter().zip(&self.shape) {
                flat = flat * d + ci as usize;
            }
            match seen.get_mut(flat) {
                Some(seen) if !*seen => {
                    *seen = true;
                    out[flat] = v;
                }
                _ => out[flat] = out[flat].accumulate(v),
            }
        }
        Ok(out)
    }
}

/// Product of dimensions, refused beyond [`MAX_POSITIONS`].
/// Within that, the values must also fit the memory budget
/// ([`crate::budget`]).
pub fn checked_product(shape: &[usize]) -> Result<usize> {
    let n = shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .filter(|&n| n <= MAX_POSITIONS)
        .ok_or_else(|| {
            FormatError::TooLarge(format!(
                "a dense {shape:?} tensor has more than {MAX_POSITIONS} components"
            ))
        })?;
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    crate::budget::check_allocation(&format!("a dense {} array", dims.join(" x ")), n as u128 * 8)?;
    Ok(n)
}

/// Tensor coordinates of a component from its storage coordinates.
pub(crate) fn logical_coords(projections: &[Projection], storage: &[i64], out: &mut [u64]) {
    out.iter_mut().for_each(|c| *c = 0);
    for (p, &c) in projections.iter().zip(storage) {
        if let Projection::Mode { mode, split } = *p {
            out[mode] += match split {
                Split::Whole | Split::Inner(_) => c as u64,
                Split::Outer(b) => c as u64 * b as u64,
            };
        }
    }
}

/// Sizes (positions) of each level of storage already known to be valid.
fn level_sizes(format: &Format, levels: &[LevelStorage]) -> Vec<usize> {
    let mut sizes = Vec::with_capacity(levels.len());
    let mut parent = 1usize;
    for (k, storage) in levels.iter().enumerate() {
        let next = levels.get(k + 1).map(|l| l.extent);
        parent = format.level(k).positions(storage, parent, k, next);
        sizes.push(parent);
    }
    sizes
}

/// Checks raw storage against its format and shape; returns level sizes.
fn validate(shape: &[usize], format: &Format, levels: &[LevelStorage], values: usize) -> Result<Vec<usize>> {
    let sizes = validate_levels(shape, format, levels, values)?;
    check_chains(format, levels)?;
    Ok(sizes)
}

/// [`validate`] but for the order of coordinates across the sibling groups
/// below non-unique levels ([`check_chains`]): each level's own checks,
/// the sizes and the values' count.
fn validate_levels(shape: &[usize], format: &Format, levels: &[LevelStorage], values: usize) -> Result<Vec<usize>> {
    format.check_shape(shape)?;
    if levels.len() != format.levels().len() {
        return Err(FormatError::Shape(format!(
            "format {format} has {} levels, {} were given",
            format.levels().len(),
            levels.len()
        )));
    }
    let mut sizes = Vec::with_capacity(levels.len());
    let mut parent = 1usize;
    for (k, storage) in levels.iter().enumerate() {
        if let Some(extent) = format.level_extent(k, shape) {
            if storage.extent != extent {
                return Err(FormatError::level(
                    k,
                    format.level(k).name(),
                    format!("extent is {}, the tensor's shape needs {extent}", storage.extent),
                ));
            }
        }
        let next = levels.get(k + 1).map(|l| l.extent);
        parent = format.level(k).validate(storage, parent, k, next)?;
        if parent > MAX_POSITIONS {
            return Err(FormatError::TooLarge(format!("level {k} has {parent} positions")));
        }
        sizes.push(parent);
    }
    if values != parent {
        return Err(FormatError::Shape(format!(
            "{values} values for {parent} positions of the last level"
        )));
    }
    Ok(sizes)
}

/// Below a non-unique level, the children of a run of equal parents form one
/// sibling group (they are iterated as one, by chaining). Per-level checks
/// see only one parent at a time, so ordered and unique levels under a
/// non-unique ancestor are checked here, on the visited coordinate prefixes.
fn check_chains(format: &Format, levels: &[LevelStorage]) -> Result<()> {
    let n = levels.len();
    let needs: Vec<bool> = (0..n)
        .map(|k| {
            let p = format.level(k);
            let chained = (0..k).any(|a| !format.level(a).unique);
            let ordered_above = (0..=k).all(|a| format.level(a).ordered);
            chained && ordered_above && (p.ordered || p.unique)
        })
        .collect();
    let Some(deepest) = needs.iter().rposition(|&b| b) else {
        return Ok(());
    };
    // The last prefix seen at each level, overwritten in place: a copy per
    // entry would cost more than the walk.
    let mut prefixes: Vec<Vec<i64>> = vec![Vec::new(); n];
    let mut seen = vec![false; n];
    // Walk the levels down to the deepest one that needs checking.
    let mut walk = Walk::new(format, levels, deepest);
    while let Some((k, _)) = walk.advance() {
        if !needs[k] {
            continue;
        }
        let current = walk.coords();
        let prev = &mut prefixes[k];
        if seen[k] {
            let order = prev.as_slice().cmp(current);
            let unique = format.level(k).unique;
            if order.is_gt() || (unique && order.is_eq()) {
                let what = if order.is_gt() { "ordered" } else { "unique" };
                return Err(FormatError::level(
                    k,
                    format.level(k).name(),
                    format!("declared {what}, but coordinates {current:?} follow {prev:?} below a non-unique level"),
                ));
            }
        }
        seen[k] = true;
        prev.clear();
        prev.extend_from_slice(current);
    }
    Ok(())
}

/// The storage coordinate each level must have for the component at
/// `coords`, where a level stores (part of) a mode; `None` for levels whose
/// coordinate is not a mode's (DIA's diagonals, ELL's slots).
fn wanted_storage_coords(format: &Format, coords: &[u64]) -> Vec<Option<i64>> {
    format
        .levels()
        .iter()
        .map(|l| match l.projection {
            Projection::Mode { mode, split } => Some(match split {
                Split::Whole => coords[mode],
                Split::Outer(b) => coords[mode] / b as u64,
                Split::Inner(b) => coords[mode] % b as u64,
            } as i64),
            _ => None,
        })
        .collect()
}

/// Visits the positions of levels `k..` below `parent` that can hold the
/// component whose storage coordinates are `wanted`: a level that can
/// locate and knows its coordinate locates it, any other is searched.
/// `visit` gets the storage coordinates and value position of each leaf.
fn find_levels(
    format: &Format,
    b: &mut Immediate<TensorLevels<'_>>,
    k: usize,
    parent: i64,
    wanted: &[Option<i64>],
    ancestors: &mut Vec<i64>,
    visit: &mut dyn FnMut(&[i64], i64),
) {
    let level = format.level(k);
    let lv = LevelRef::new(0, k);
    let mut child = |b: &mut Immediate<TensorLevels<'_>>, i: i64, pos: i64, ancestors: &mut Vec<i64>| {
        if wanted[k].is_some_and(|w| w != i) {
            return;
        }
        ancestors.push(i);
        if k + 1 == wanted.len() {
            visit(ancestors, pos);
        } else {
            find_levels(format, b, k + 1, pos, wanted, ancestors, visit);
        }
        ancestors.pop();
    };
    if let (Some(i), true) = (wanted[k], level.capabilities().locate) {
        let (pos, found) = level.locate(b, lv, parent, ancestors, i);
        if found {
            child(b, i, pos, ancestors);
        }
        return;
    }
    match level.capabilities().iteration {
        crate::properties::Iteration::CoordinateValue => {
            let (begin, end) = level.coord_iter(b, lv, ancestors);
            for i in begin..end {
                if wanted[k].is_some_and(|w| w != i) {
                    continue;
                }
                let (pos, found) = level.coord_access(b, lv, parent, ancestors, i);
                if found {
                    child(b, i, pos, ancestors);
                }
            }
        }
        crate::properties::Iteration::CoordinatePosition => {
            let (begin, end) = level.pos_iter(b, lv, parent);
            for p in begin..end {
                let (i, found) = level.pos_access(b, lv, p, ancestors);
                if found {
                    child(b, i, p, ancestors);
                }
            }
        }
    }
}

/// Packs a coordinate list into `format`.
fn pack<V: Value>(entries: &CoordinateList<V>, format: Format, fill: V) -> Result<Tensor<V>> {
    format.check_shape(entries.shape())?;
    // Unordered COO keeps the entries as given: no sort, duplicates kept.
    let as_given = format.stores_as_given();
    let canonical;
    let list = if as_given || entries.is_canonical() {
        entries
    } else {
        let mut c = entries.clone();
        c.canonicalize();
        canonical = c;
        &canonical
    };
    if let Some(csr) = crate::direct::csr(list, &format, fill) {
        return csr;
    }
    if let Some(coo) = crate::direct::coo(list, &format, fill) {
        return coo;
    }
    pack_generic(list, format, fill)
}

/// [`pack`] by listing, sorting and packing the entries level by level,
/// for any format; `list` is canonical unless the format stores entries
/// as given.
pub(crate) fn pack_generic<V: Value>(list: &CoordinateList<V>, format: Format, fill: V) -> Result<Tensor<V>> {
    let as_given = format.stores_as_given();
    let (columns, aux_extents) = storage_columns(list, &format);
    let n = list.len();
    let nlevels = format.levels().len();
    // Sort entries by their storage coordinates (a no-op scan when the
    // format stores modes in their natural order).
    let extents: Vec<usize> = (0..nlevels)
        .map(|k| format.level_extent(k, list.shape()).unwrap_or_else(|| aux_extents[k]))
        .collect();
    let top_distinct = match format.levels().first() {
        Some(l) if matches!(l.projection, Projection::Diagonal { .. }) => Some(aux_extents[0]),
        _ => None,
    };
    crate::padding::check_padding(&format, &extents, top_distinct, n)?;
    // `None`: the entries are in storage order already.
    let perm = if as_given {
        None
    } else {
        storage_order(&columns, &extents, n)
    };
    let entry = |e: usize| perm.as_ref().map_or(e, |p| p[e]);
    let sorted: Vec<Vec<u64>> = match &perm {
        None => columns,
        Some(perm) => {
            use rayon::prelude::*;
            columns
                .par_iter()
                .map(|col| perm.iter().map(|&e| col[e]).collect())
                .collect()
        }
    };
    let mut parents = vec![Segment::new(0, n)];
    let mut levels = Vec::with_capacity(nlevels);
    for k in 0..nlevels {
        let input = PackInput {
            level: k,
            coords: &sorted,
            parents: &parents,
            extent: extents[k],
            next_extent: extents.get(k + 1).copied(),
        };
        let packed = format.level(k).pack(&input)?;
        levels.push(packed.storage);
        if let Some(positions) = packed.positions {
            if positions.len() > MAX_POSITIONS {
                return Err(FormatError::TooLarge(format!(
                    "level {k} would have {} positions",
                    positions.len()
                )));
            }
            parents = positions;
        }
    }
    let values: Vec<V> = if nlevels == 0 {
        vec![if n == 0 { fill } else { list.value(entry(0)) }]
    } else {
        parents
            .iter()
            .map(|seg| {
                debug_assert!(seg.len() <= 1, "a full coordinate names one entry after deduplication");
                if seg.is_empty() {
                    fill
                } else {
                    list.value(entry(seg.start))
                }
            })
            .collect()
    };
    let mut tensor = Tensor::from_parts(list.shape(), format, levels, values)?;
    tensor.fill = fill;
    Ok(tensor)
}

/// Entries in lexicographic order of their storage coordinates (`None`:
/// they are): a scan when they already are (the format stores modes in
/// their natural order); a counting sort by the first level's coordinate
/// when the others are in order (DIA, ELL or CSC from row-major entries);
/// a sort of each run of the first level by the second when that puts them
/// in order (BCSR); else a radix sort by one 64-bit key per entry when the
/// extents allow one.
fn storage_order(columns: &[Vec<u64>], extents: &[usize], n: usize) -> Option<Vec<usize>> {
    let all: Vec<&[u64]> = columns.iter().map(Vec::as_slice).collect();
    if crate::sorting::in_order(&all, n) {
        return None;
    }
    // The count array is at most about the entries' size.
    if extents[0] <= 2 * n + 4096 && crate::sorting::in_order(&all[1..], n) {
        return Some(crate::sorting::order_by_column(&columns[0], extents[0]));
    }
    // In order of the first level, and in order within its runs once
    // grouped by the second (BCSR from row-major entries).
    if all.len() > 2 && crate::sorting::in_order(&all[..1], n) {
        let order = crate::sorting::order_within_runs(&columns[0], &columns[1]);
        if crate::sorting::in_order_by(&all, n, |e| order[e]) {
            return Some(order);
        }
    }
    let mut strides = vec![0u64; columns.len()];
    let mut total: Option<u64> = Some(1);
    for k in (0..columns.len()).rev() {
        strides[k] = total.unwrap_or(0);
        total = total.and_then(|t| t.checked_mul(extents[k].max(1) as u64));
    }
    if total.is_some() {
        return Some(crate::sorting::order_by_key(
            (0..n).map(|e| columns.iter().zip(&strides).map(|(col, &s)| col[e] * s).sum()),
        ));
    }
    let mut perm: Vec<usize> = (0..n).collect();
    perm.sort_by(|&a, &b| {
        for col in columns {
            let o = col[a].cmp(&col[b]);
            if o.is_ne() {
                return o;
            }
        }
        std::cmp::Ordering::Equal
    });
    Some(perm)
}

/// Storage coordinates of each entry, one column per level, and what each
/// level's data decides ([`storage_column`]). The columns are computed side by
/// side on the rayon pool.
fn storage_columns<V: Value>(list: &CoordinateList<V>, format: &Format) -> (Vec<Vec<u64>>, Vec<usize>) {
    use rayon::prelude::*;
    let projections: Vec<Projection> = format.levels().iter().map(|l| l.projection).collect();
    projections.par_iter().map(|&p| storage_column(list, p)).unzip()
}

/// The storage coordinate of each entry at a level of `projection`, and
/// what the data decides of the level: a slot level's extent (ELL), a
/// diagonal level's distinct coordinates (DIA's stored diagonals), 0 for
/// the others.
fn storage_column<V: Value>(list: &CoordinateList<V>, projection: Projection) -> (Vec<u64>, usize) {
    let n = list.len();
    match projection {
        Projection::Mode { mode, split } => {
            let col = (0..n)
                .map(|e| {
                    let c = list.coords(e)[mode];
                    match split {
                        Split::Whole => c,
                        Split::Outer(b) => c / b as u64,
                        Split::Inner(b) => c % b as u64,
                    }
                })
                .collect();
            (col, 0)
        }
        Projection::Diagonal { row, col } => {
            // The offset `col - row` shifted by `rows - 1` (see `Projection`).
            let shift = list.shape()[row] as u64;
            let diagonal = |e: usize| list.coords(e)[col] + shift - 1 - list.coords(e)[row];
            let column: Vec<u64> = (0..n).map(diagonal).collect();
            let stored = crate::sorting::distinct_count(&column, list.shape()[row] + list.shape()[col]);
            (column, stored)
        }
        Projection::Slot { row } => {
            // An entry's slot is its rank in its row. Rows counted in a
            // table of their range when it is about the entries' size,
            // else in a map of the rows that have entries.
            let rows = list.shape()[row];
            let row_of = |e: usize| list.coords(e)[row];
            let mut longest = 0;
            let col: Vec<u64> = if rows <= 2 * n + 4096 {
                let mut counts = vec![0u64; rows];
                (0..n)
                    .map(|e| {
                        let r = &mut counts[row_of(e) as usize];
                        *r += 1;
                        longest = longest.max(*r);
                        *r - 1
                    })
                    .collect()
            } else {
                let mut counts = hashbrown::HashMap::<u64, u64>::new();
                (0..n)
                    .map(|e| {
                        let r = counts.entry(row_of(e)).or_insert(0);
                        *r += 1;
                        longest = longest.max(*r);
                        *r - 1
                    })
                    .collect()
            };
            (col, longest as usize)
        }
    }
}
