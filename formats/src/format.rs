//! Formats: one level format per level, and how each level's coordinate
//! relates to the tensor's modes.
//!
//! A format describes a coordinate hierarchy (format paper §3). Usually
//! level `k` stores the coordinates of one mode, so a format is a level
//! format per mode plus a mode ordering (CSC is CSR with the modes swapped).
//! Structured formats add levels that are not modes ([`Projection`]): DIA's
//! diagonal level, ELL's slot level, and BCSR's split of each mode into a
//! block coordinate and a coordinate within the block.

use std::fmt;

use crate::error::{FormatError, Result};
use crate::index::{CoordRun, IndexArray};
use crate::level::{Footprint, Level, LevelCounts, PackInput, Packed};
use crate::levels::{
    compressed::Compressed, dense::Dense, hashed::Hashed, offset::Offset, range::Range, singleton::Singleton,
};
use crate::properties::{Capabilities, Properties};
use crate::staging::{Builder, LevelRef};
use crate::tensor::LevelStorage;

/// The largest size of a mode: coordinates (and the positions derived from
/// them) are stored in index arrays read as non-negative `i64`.
pub const MAX_DIMENSION: usize = i64::MAX as usize;

/// The six level formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LevelKind {
    Dense,
    Compressed,
    Singleton,
    Range,
    Offset,
    Hashed,
}

/// A level format as configured in a format: its kind and the properties
/// Table 1 lets it choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LevelFormat {
    pub kind: LevelKind,
    pub ordered: bool,
    pub unique: bool,
    pub full: bool,
}

impl LevelFormat {
    const fn of(kind: LevelKind, ordered: bool) -> Self {
        LevelFormat {
            kind,
            ordered,
            unique: true,
            full: false,
        }
    }
    pub const fn dense() -> Self {
        LevelFormat {
            full: true,
            ..Self::of(LevelKind::Dense, true)
        }
    }
    pub const fn compressed() -> Self {
        Self::of(LevelKind::Compressed, true)
    }
    pub const fn singleton() -> Self {
        Self::of(LevelKind::Singleton, true)
    }
    pub const fn range() -> Self {
        Self::of(LevelKind::Range, true)
    }
    pub const fn offset() -> Self {
        Self::of(LevelKind::Offset, true)
    }
    pub const fn hashed() -> Self {
        Self::of(LevelKind::Hashed, false)
    }
    /// The same level, allowing repeated coordinates among siblings.
    pub const fn non_unique(self) -> Self {
        LevelFormat { unique: false, ..self }
    }
    /// The same level, without the promise that siblings are sorted.
    pub const fn unordered(self) -> Self {
        LevelFormat { ordered: false, ..self }
    }
}

/// Calls `$body` with `$level` bound to the implementation of `$format`'s
/// kind: the one place that maps a kind to its level format.
macro_rules! with_level {
    ($format:expr, |$level:ident| $body:expr) => {{
        let f = $format;
        match f.kind {
            LevelKind::Dense => {
                let $level = Dense;
                $body
            }
            LevelKind::Compressed => {
                let $level = Compressed {
                    ordered: f.ordered,
                    unique: f.unique,
                    full: f.full,
                };
                $body
            }
            LevelKind::Singleton => {
                let $level = Singleton {
                    ordered: f.ordered,
                    unique: f.unique,
                    full: f.full,
                };
                $body
            }
            LevelKind::Range => {
                let $level = Range;
                $body
            }
            LevelKind::Offset => {
                let $level = Offset;
                $body
            }
            LevelKind::Hashed => {
                let $level = Hashed { full: f.full };
                $body
            }
        }
    }};
}

impl Level for LevelFormat {
    fn name(&self) -> &'static str {
        with_level!(self, |l| l.name())
    }
    fn capabilities(&self) -> Capabilities {
        with_level!(self, |l| l.capabilities())
    }
    fn properties(&self) -> Properties {
        with_level!(self, |l| l.properties())
    }
    #[inline]
    fn coord_iter<B: Builder>(&self, b: &mut B, lv: LevelRef, ancestors: &[B::Int]) -> (B::Int, B::Int) {
        with_level!(self, |l| l.coord_iter(b, lv, ancestors))
    }
    #[inline]
    fn coord_access<B: Builder>(
        &self,
        b: &mut B,
        lv: LevelRef,
        parent: B::Int,
        ancestors: &[B::Int],
        coord: B::Int,
    ) -> (B::Int, B::Bool) {
        with_level!(self, |l| l.coord_access(b, lv, parent, ancestors, coord))
    }
    #[inline]
    fn pos_iter<B: Builder>(&self, b: &mut B, lv: LevelRef, parent: B::Int) -> (B::Int, B::Int) {
        with_level!(self, |l| l.pos_iter(b, lv, parent))
    }
    #[inline]
    fn pos_access<B: Builder>(&self, b: &mut B, lv: LevelRef, pos: B::Int, ancestors: &[B::Int]) -> (B::Int, B::Bool) {
        with_level!(self, |l| l.pos_access(b, lv, pos, ancestors))
    }
    #[inline]
    fn locate<B: Builder>(
        &self,
        b: &mut B,
        lv: LevelRef,
        parent: B::Int,
        ancestors: &[B::Int],
        coord: B::Int,
    ) -> (B::Int, B::Bool) {
        with_level!(self, |l| l.locate(b, lv, parent, ancestors, coord))
    }
    fn size<B: Builder>(&self, b: &mut B, lv: LevelRef, parent_size: B::Int) -> B::Int {
        with_level!(self, |l| l.size(b, lv, parent_size))
    }
    fn insert_init<B: Builder>(&self, b: &mut B, lv: LevelRef, parent_size: B::Int, size: B::Int) {
        with_level!(self, |l| l.insert_init(b, lv, parent_size, size))
    }
    fn insert_coord<B: Builder>(&self, b: &mut B, lv: LevelRef, pos: B::Int, coord: B::Int) {
        with_level!(self, |l| l.insert_coord(b, lv, pos, coord))
    }
    fn insert_finalize<B: Builder>(&self, b: &mut B, lv: LevelRef, parent_size: B::Int, size: B::Int) {
        with_level!(self, |l| l.insert_finalize(b, lv, parent_size, size))
    }
    fn append_init<B: Builder>(&self, b: &mut B, lv: LevelRef, parent_size: B::Int, size: B::Int) {
        with_level!(self, |l| l.append_init(b, lv, parent_size, size))
    }
    fn append_coord<B: Builder>(&self, b: &mut B, lv: LevelRef, pos: B::Int, coord: B::Int) {
        with_level!(self, |l| l.append_coord(b, lv, pos, coord))
    }
    fn append_edges<B: Builder>(&self, b: &mut B, lv: LevelRef, parent: B::Int, begin: B::Int, end: B::Int) {
        with_level!(self, |l| l.append_edges(b, lv, parent, begin, end))
    }
    fn append_finalize<B: Builder>(&self, b: &mut B, lv: LevelRef, parent_size: B::Int, size: B::Int) {
        with_level!(self, |l| l.append_finalize(b, lv, parent_size, size))
    }
    fn append_coords(&self, storage: &mut LevelStorage, pos: usize, coords: CoordRun<'_>) {
        with_level!(self, |l| l.append_coords(storage, pos, coords))
    }
    fn append_init_now(&self, storage: &mut LevelStorage, parent_size: usize) {
        with_level!(self, |l| l.append_init_now(storage, parent_size))
    }
    fn append_edges_now(&self, storage: &mut LevelStorage, parent: usize, begin: usize, end: usize) {
        with_level!(self, |l| l.append_edges_now(storage, parent, begin, end))
    }
    fn append_segments_now(&self, storage: &mut LevelStorage, begin: usize, segments: &[(usize, usize)]) {
        with_level!(self, |l| l.append_segments_now(storage, begin, segments))
    }
    fn append_finalize_now(&self, storage: &mut LevelStorage, parent_size: usize, size: usize) {
        with_level!(self, |l| l.append_finalize_now(storage, parent_size, size))
    }
    fn empty_storage(&self, extent: usize) -> LevelStorage {
        with_level!(self, |l| l.empty_storage(extent))
    }
    fn pack(&self, input: &PackInput<'_>) -> Result<Packed> {
        with_level!(self, |l| l.pack(input))
    }
    fn footprint(&self, counts: &LevelCounts) -> Option<Footprint> {
        with_level!(self, |l| l.footprint(counts))
    }
    fn validate(
        &self,
        storage: &LevelStorage,
        parent_size: usize,
        level: usize,
        next_extent: Option<usize>,
    ) -> Result<usize> {
        with_level!(self, |l| l.validate(storage, parent_size, level, next_extent))
    }
    fn positions(&self, storage: &LevelStorage, parent_size: usize, level: usize, next_extent: Option<usize>) -> usize {
        with_level!(self, |l| l.positions(storage, parent_size, level, next_extent))
    }
    fn trim(&self, storage: &mut LevelStorage, parent_size: usize) {
        with_level!(self, |l| l.trim(storage, parent_size))
    }
    fn coordinate_view<'s>(&self, storage: &'s LevelStorage) -> Option<&'s IndexArray> {
        with_level!(self, |l| l.coordinate_view(storage))
    }
    fn coordinate_array(&self) -> Option<u8> {
        with_level!(self, |l| l.coordinate_array())
    }
    fn coordinate_relation(&self) -> crate::properties::CoordinateRelation {
        with_level!(self, |l| l.coordinate_relation())
    }
    fn position_view<'s>(&self, storage: &'s LevelStorage) -> Option<&'s IndexArray> {
        with_level!(self, |l| l.position_view(storage))
    }
}

impl fmt::Display for LevelFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name())?;
        let defaults = match self.kind {
            LevelKind::Hashed => LevelFormat::hashed(),
            _ => LevelFormat {
                kind: self.kind,
                ..LevelFormat::compressed()
            },
        };
        let mut notes = Vec::new();
        if self.ordered != defaults.ordered {
            notes.push(if self.ordered { "ordered" } else { "unordered" });
        }
        if !self.unique {
            notes.push("nonunique");
        }
        if !notes.is_empty() {
            write!(f, "({})", notes.join(","))?;
        }
        Ok(())
    }
}

/// How a mode's coordinate is split across levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Split {
    /// The level stores the mode's coordinate.
    Whole,
    /// The level stores `coordinate / block` (BCSR's block row).
    Outer(usize),
    /// The level stores `coordinate % block` (the row within a block).
    Inner(usize),
}

/// What a level's coordinate means in terms of the tensor's modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Projection {
    /// (Part of) the coordinate of `mode`.
    Mode { mode: usize, split: Split },
    /// Not a mode: an entry's diagonal, its offset `col - row` shifted by
    /// `rows - 1` to be non-negative (DIA). Its extent is `rows + cols - 1`;
    /// a compressed level stores the diagonals that hold entries, so two
    /// matrices' diagonals merge by coordinate.
    Diagonal { row: usize, col: usize },
    /// Not a mode: the rank of an entry among the entries of its row (ELL).
    Slot { row: usize },
}

impl Projection {
    pub const fn mode(mode: usize) -> Self {
        Projection::Mode {
            mode,
            split: Split::Whole,
        }
    }
    /// Whether the level's coordinate is (part of) a mode's.
    pub fn mode_index(&self) -> Option<usize> {
        match self {
            Projection::Mode { mode, .. } => Some(*mode),
            _ => None,
        }
    }
}

/// One level of a format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FormatLevel {
    pub level: LevelFormat,
    pub projection: Projection,
}

/// A tensor format: its levels, top to bottom, and the order of the tensor
/// it stores. Build named formats with the constructors, or any composition
/// with [`Format::new`], which refuses compositions that cannot encode a
/// tensor.
///
/// ```
/// use tessera_formats::{Format, LevelFormat};
/// let csc = Format::csc();
/// let same = Format::from_levels(&[LevelFormat::dense(), LevelFormat::compressed()], &[1, 0]).unwrap();
/// assert_eq!(csc, same); // names do not take part in equality
/// ```
#[derive(Debug, Clone)]
pub struct Format {
    order: usize,
    levels: Vec<FormatLevel>,
    name: Option<String>,
}

impl Format {
    /// A format from its levels, checked.
    pub fn new(order: usize, levels: Vec<FormatLevel>) -> Result<Format> {
        let format = Format {
            order,
            levels,
            name: None,
        };
        format.check().map_err(|reason| FormatError::BadFormat {
            format: format.to_string(),
            reason,
        })?;
        Ok(format)
    }

    /// One level format per mode, stored in `mode_order` (level `k` stores
    /// mode `mode_order[k]`).
    pub fn from_levels(levels: &[LevelFormat], mode_order: &[usize]) -> Result<Format> {
        if levels.len() != mode_order.len() {
            return Err(FormatError::BadFormat {
                format: format!("{} levels", levels.len()),
                reason: format!(
                    "a mode order of {} modes was given for {} levels",
                    mode_order.len(),
                    levels.len()
                ),
            });
        }
        let levels = levels
            .iter()
            .zip(mode_order)
            .map(|(&level, &mode)| FormatLevel {
                level,
                projection: Projection::mode(mode),
            })
            .collect();
        let format = Format::new(mode_order.len(), levels)?;
        // A reordered matrix is shown by the name users know it by.
        let dense = LevelFormat::dense();
        let compressed = LevelFormat::compressed();
        let known = match (levels_of(&format).as_slice(), mode_order) {
            ([a, b], [0, 1]) if *a == dense && *b == compressed => Some("csr"),
            ([a, b], [1, 0]) if *a == dense && *b == compressed => Some("csc"),
            ([a, b], [0, 1]) if *a == compressed && *b == compressed => Some("dcsr"),
            ([a, b], [1, 0]) if *a == compressed && *b == compressed => Some("dcsc"),
            _ => None,
        };
        Ok(match known {
            Some(name) => format.named(name),
            None => format,
        })
    }

    fn named(mut self, name: &str) -> Format {
        self.name = Some(name.to_string());
        self
    }

    fn per_mode(levels: &[LevelFormat], order: &[usize], name: &str) -> Format {
        Format::from_levels(levels, order)
            .expect("named formats are valid compositions")
            .named(name)
    }

    /// Dense, modes in their natural order (row-major for a matrix).
    pub fn dense(order: usize) -> Format {
        Self::dense_ordered(&(0..order).collect::<Vec<_>>())
    }
    /// Dense with the modes stored in `mode_order` (column-major is `[1, 0]`).
    pub fn dense_ordered(mode_order: &[usize]) -> Format {
        Self::per_mode(&vec![LevelFormat::dense(); mode_order.len()], mode_order, "dense")
    }
    /// Compressed sparse rows.
    pub fn csr() -> Format {
        Self::per_mode(&[LevelFormat::dense(), LevelFormat::compressed()], &[0, 1], "csr")
    }
    /// Compressed sparse columns.
    pub fn csc() -> Format {
        Self::per_mode(&[LevelFormat::dense(), LevelFormat::compressed()], &[1, 0], "csc")
    }
    /// Doubly compressed rows: only non-empty rows are stored.
    pub fn dcsr() -> Format {
        Self::per_mode(&[LevelFormat::compressed(), LevelFormat::compressed()], &[0, 1], "dcsr")
    }
    /// Doubly compressed columns.
    pub fn dcsc() -> Format {
        Self::per_mode(&[LevelFormat::compressed(), LevelFormat::compressed()], &[1, 0], "dcsc")
    }
    /// Coordinates, sorted by modes in natural order.
    pub fn coo(order: usize) -> Format {
        Self::coo_ordered(&(0..order).collect::<Vec<_>>())
    }
    /// Coordinates, sorted by modes in `mode_order`.
    pub fn coo_ordered(mode_order: &[usize]) -> Format {
        let n = mode_order.len();
        let levels: Vec<LevelFormat> = (0..n)
            .map(|k| {
                let base = if k == 0 {
                    LevelFormat::compressed()
                } else {
                    LevelFormat::singleton()
                };
                if k + 1 < n {
                    base.non_unique()
                } else {
                    base
                }
            })
            .collect();
        Self::per_mode(&levels, mode_order, "coo")
    }
    /// Unordered coordinates: the entries as they were given (a file's
    /// order), duplicates kept, every level without order or uniqueness.
    /// Packing does not sort them, and kernels whose loops need no order
    /// (one tensor walked, a dense output) read them as they are.
    ///
    /// ```
    /// use tessera_formats::{CoordinateList, Format, Tensor};
    /// let mut entries = CoordinateList::new(&[2, 2]);
    /// entries.push(&[1, 0], 1.0).unwrap();
    /// entries.push(&[0, 1], 2.0).unwrap();
    /// entries.push(&[1, 0], 3.0).unwrap();
    /// let a = Tensor::pack(&entries, Format::coo_unordered(2)).unwrap();
    /// assert_eq!(a.values(), &[1.0, 2.0, 3.0]); // as given
    /// assert!(a.format().stores_as_given());
    /// ```
    pub fn coo_unordered(order: usize) -> Format {
        let levels: Vec<LevelFormat> = (0..order)
            .map(|k| {
                let base = if k == 0 {
                    LevelFormat::compressed()
                } else {
                    LevelFormat::singleton()
                };
                base.non_unique().unordered()
            })
            .collect();
        let modes: Vec<usize> = (0..order).collect();
        Self::per_mode(&levels, &modes, "ucoo")
    }
    /// Whether the format stores entries as they are given: an unordered,
    /// non-unique compressed level over unordered singletons (unordered
    /// COO). Packing keeps their order and duplicates.
    pub fn stores_as_given(&self) -> bool {
        let levels = self.levels();
        self.is_per_mode()
            && !levels.is_empty()
            && levels[0].level.kind == LevelKind::Compressed
            && levels.iter().all(|l| !l.level.ordered && !l.level.unique)
            && levels[1..].iter().all(|l| l.level.kind == LevelKind::Singleton)
    }
    /// Compressed sparse fibers: every mode compressed.
    pub fn csf(order: usize) -> Format {
        Self::csf_ordered(&(0..order).collect::<Vec<_>>())
    }
    /// CSF with the modes stored in `mode_order`.
    pub fn csf_ordered(mode_order: &[usize]) -> Format {
        Self::per_mode(&vec![LevelFormat::compressed(); mode_order.len()], mode_order, "csf")
    }
    /// A sparse vector: one compressed level.
    pub fn sparse_vector() -> Format {
        Self::per_mode(&[LevelFormat::compressed()], &[0], "sv")
    }
    /// A hash-map vector: one hashed level.
    pub fn hash_vector() -> Format {
        Self::per_mode(&[LevelFormat::hashed()], &[0], "hash")
    }
    /// Dense rows, each a hash map of columns.
    pub fn hash_rows() -> Format {
        Self::per_mode(&[LevelFormat::dense(), LevelFormat::hashed()], &[0, 1], "hash")
    }
    /// Diagonal storage: the diagonals that hold entries, in increasing
    /// offset, each a range of rows whose columns are the rows shifted by
    /// the diagonal's offset (`compressed,range,offset`).
    ///
    /// ```
    /// use tessera_formats::{Format, LevelFormat};
    /// assert_eq!(Format::dia().levels()[0].level, LevelFormat::compressed());
    /// assert_eq!("compressed,range,offset".parse::<Format>().unwrap(), Format::dia());
    /// ```
    pub fn dia() -> Format {
        Format::new(
            2,
            vec![
                FormatLevel {
                    level: LevelFormat::compressed(),
                    projection: Projection::Diagonal { row: 0, col: 1 },
                },
                FormatLevel {
                    level: LevelFormat::range(),
                    projection: Projection::mode(0),
                },
                FormatLevel {
                    level: LevelFormat::offset(),
                    projection: Projection::mode(1),
                },
            ],
        )
        .expect("DIA is a valid composition")
        .named("dia")
    }
    /// ELLPACK: `K` slots per row (K = the longest row), slot-major, each
    /// holding a column coordinate; short rows are padded with zeros.
    pub fn ell() -> Format {
        Format::new(
            2,
            vec![
                FormatLevel {
                    level: LevelFormat::dense(),
                    projection: Projection::Slot { row: 0 },
                },
                FormatLevel {
                    level: LevelFormat::dense(),
                    projection: Projection::mode(0),
                },
                FormatLevel {
                    level: LevelFormat::singleton(),
                    projection: Projection::mode(1),
                },
            ],
        )
        .expect("ELL is a valid composition")
        .named("ell")
    }
    /// Block CSR with dense `rows x cols` blocks; the matrix's dimensions must
    /// be multiples of the block's.
    pub fn bcsr(rows: usize, cols: usize) -> Result<Format> {
        let split = |mode, split| Projection::Mode { mode, split };
        let format = Format::new(
            2,
            vec![
                FormatLevel {
                    level: LevelFormat::dense(),
                    projection: split(0, Split::Outer(rows)),
                },
                FormatLevel {
                    level: LevelFormat::compressed(),
                    projection: split(1, Split::Outer(cols)),
                },
                FormatLevel {
                    level: LevelFormat::dense(),
                    projection: split(0, Split::Inner(rows)),
                },
                FormatLevel {
                    level: LevelFormat::dense(),
                    projection: split(1, Split::Inner(cols)),
                },
            ],
        )?;
        Ok(format.named(&format!("bcsr:{rows}x{cols}")))
    }

    /// Order of the tensors this format stores.
    pub fn order(&self) -> usize {
        self.order
    }
    pub fn levels(&self) -> &[FormatLevel] {
        &self.levels
    }
    pub fn level(&self, k: usize) -> &LevelFormat {
        &self.levels[k].level
    }
    /// The name it was built under (`csr`), if any.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
    /// Whether every level stores one whole mode (no auxiliary or split levels).
    pub fn is_per_mode(&self) -> bool {
        self.levels.iter().all(|l| {
            matches!(
                l.projection,
                Projection::Mode {
                    split: Split::Whole,
                    ..
                }
            )
        })
    }
    /// For per-mode formats, the mode each level stores.
    pub fn mode_order(&self) -> Option<Vec<usize>> {
        self.is_per_mode()
            .then(|| self.levels.iter().filter_map(|l| l.projection.mode_index()).collect())
    }
    /// Whether some stored values are padding, not entries: a level
    /// labels positions no entry has (it is full or not compact) and the
    /// levels below give each of them a value (they are branchless), as in
    /// dense, DIA, ELL, BCSR and hashed formats; or there is no level (a
    /// scalar always stores its value).
    ///
    /// ```
    /// use tessera_formats::Format;
    /// assert!(Format::ell().pads() && Format::dia().pads() && Format::dense(2).pads());
    /// assert!(!Format::csr().pads() && !Format::coo(2).pads() && !Format::dcsr().pads());
    /// ```
    pub fn pads(&self) -> bool {
        for l in self.levels().iter().rev() {
            let p = l.level.properties();
            if p.full || !p.compact {
                return true;
            }
            if !p.branchless {
                return false;
            }
        }
        self.levels().is_empty()
    }

    /// Whether every level is dense.
    pub fn is_dense(&self) -> bool {
        self.levels.iter().all(|l| l.level.kind == LevelKind::Dense) && self.is_per_mode()
    }

    /// Whether a tensor of this format and `shape` stores its levels as
    /// one of `other` and `other_shape` does: the same format over the same
    /// shape, or per-mode formats whose levels, taken in order, have the
    /// same formats and extents (the modes they store may differ: CSR
    /// levels over `m x n` are CSC levels over `n x m`). Level arrays of
    /// one are then valid level arrays of the other.
    ///
    /// ```
    /// use tessera_formats::Format;
    /// assert!(Format::csr().same_levels_as(&[2, 3], &Format::csc(), &[3, 2]));
    /// assert!(!Format::csr().same_levels_as(&[2, 3], &Format::csc(), &[2, 3]));
    /// assert!(!Format::csr().same_levels_as(&[2, 3], &Format::dcsr(), &[2, 3]));
    /// ```
    pub fn same_levels_as(&self, shape: &[usize], other: &Format, other_shape: &[usize]) -> bool {
        if self == other && shape == other_shape {
            return true;
        }
        self.is_per_mode()
            && other.is_per_mode()
            && shape.len() == self.order
            && other_shape.len() == other.order
            && self.levels.len() == other.levels.len()
            && (0..self.levels.len()).all(|k| {
                self.levels[k].level == other.levels[k].level
                    && self.level_extent(k, shape) == other.level_extent(k, other_shape)
            })
    }

    /// The extent a level must have for a tensor of `shape`, when the shape
    /// alone decides it (ELL's slots depend on the data).
    pub fn level_extent(&self, k: usize, shape: &[usize]) -> Option<usize> {
        match self.levels[k].projection {
            Projection::Mode { mode, split } => Some(match split {
                Split::Whole => shape[mode],
                Split::Outer(b) => shape[mode].div_ceil(b),
                Split::Inner(b) => b,
            }),
            Projection::Diagonal { row, col } => Some((shape[row] + shape[col]).saturating_sub(1)),
            Projection::Slot { .. } => None,
        }
    }

    /// Checks that the format can encode tensors of `shape`: the order, the
    /// block sizes, and every dimension at most [`MAX_DIMENSION`] (index
    /// arrays hold coordinates as non-negative `i64`).
    pub fn check_shape(&self, shape: &[usize]) -> Result<()> {
        if shape.len() != self.order {
            return Err(FormatError::Shape(format!(
                "format {self} stores order-{} tensors, the tensor has order {}",
                self.order,
                shape.len()
            )));
        }
        if let Some((mode, d)) = shape.iter().enumerate().find(|(_, &d)| d > MAX_DIMENSION) {
            return Err(FormatError::TooLarge(format!(
                "mode {mode} has size {d}; the largest size tessera stores is {MAX_DIMENSION} (2^63 - 1)"
            )));
        }
        for l in &self.levels {
            if let Projection::Mode {
                mode,
                split: Split::Outer(b),
            } = l.projection
            {
                if shape[mode] % b != 0 {
                    return Err(FormatError::Shape(format!(
                        "format {self} splits mode {mode} into blocks of {b}, which do not divide its size {}",
                        shape[mode]
                    )));
                }
            }
        }
        Ok(())
    }

    fn check(&self) -> Result<(), String> {
        if self.levels.is_empty() && self.order != 0 {
            return Err("a format needs at least one level per mode".into());
        }
        let mut whole = vec![0usize; self.order];
        let mut outer = vec![None; self.order];
        let mut inner = vec![None; self.order];
        for (k, l) in self.levels.iter().enumerate() {
            // Only compressed and singleton levels can repeat coordinates;
            // the checks below rely on `unique` meaning what the level does.
            if !l.level.unique && l.level.properties().unique {
                return Err(format!(
                    "level {k}: a {} level stores each coordinate once, it cannot be non-unique",
                    l.level.name()
                ));
            }
            match l.projection {
                Projection::Mode { mode, split } => {
                    if mode >= self.order {
                        return Err(format!(
                            "level {k} stores mode {mode} of an order-{} tensor",
                            self.order
                        ));
                    }
                    match split {
                        Split::Whole => whole[mode] += 1,
                        Split::Outer(b) | Split::Inner(b) if b == 0 => {
                            return Err(format!("level {k} splits mode {mode} into blocks of size 0"))
                        }
                        Split::Outer(b) => {
                            if outer[mode].replace(b).is_some() {
                                return Err(format!("mode {mode} has two block levels"));
                            }
                        }
                        Split::Inner(b) => {
                            if outer[mode] != Some(b) {
                                return Err(format!("level {k} is inside blocks of mode {mode} with no block level of size {b} above it"));
                            }
                            if inner[mode].replace(b).is_some() {
                                return Err(format!("mode {mode} has two levels within blocks"));
                            }
                        }
                    }
                }
                Projection::Diagonal { row, col } => {
                    let kind_fits = matches!(l.level.kind, LevelKind::Dense | LevelKind::Compressed)
                        && l.level.ordered
                        && l.level.unique;
                    if row >= self.order || col >= self.order || row == col || !kind_fits {
                        return Err(format!(
                            "level {k}: a diagonal level must be dense or ordered unique compressed, and name two distinct modes"
                        ));
                    }
                }
                Projection::Slot { row } => {
                    if row >= self.order || l.level.kind != LevelKind::Dense {
                        return Err(format!("level {k}: a slot level must be dense and name a mode"));
                    }
                }
            }
            self.check_place(k)?;
        }
        for mode in 0..self.order {
            let split = outer[mode].is_some() && inner[mode].is_some();
            if !(whole[mode] == 1 && outer[mode].is_none() || whole[mode] == 0 && split) {
                return Err(format!("mode {mode} must be stored by exactly one level, or by one block level and one level within blocks"));
            }
        }
        Ok(())
    }

    /// What a level needs of its neighbours to encode anything.
    fn check_place(&self, k: usize) -> Result<(), String> {
        let here = &self.levels[k];
        let parent = k.checked_sub(1).map(|p| &self.levels[p]);
        let child = self.levels.get(k + 1);
        // Below a non-unique level every entry has its own position (packing
        // and assembly start a new chain per entry), so no level down there
        // may merge entries: a dense level would repeat all its coordinates
        // in a chain, a unique level above the bottom a shared prefix.
        if self.levels[..k].iter().any(|l| !l.level.unique) {
            if here.level.kind == LevelKind::Dense {
                return Err(format!("level {k}: a dense level cannot sit below a non-unique level"));
            }
            if here.level.unique && k + 1 < self.levels.len() {
                return Err(format!(
                    "level {k}: below a non-unique level, only the bottom level may be unique"
                ));
            }
        }
        match here.level.kind {
            LevelKind::Singleton if parent.is_none() => {
                Err("a singleton level cannot be the top level: it needs a parent position per coordinate".into())
            }
            LevelKind::Range => match (parent.map(|p| p.projection), child) {
                (Some(Projection::Diagonal { row, col }), Some(c)) if c.level.kind == LevelKind::Offset => {
                    // A range level reads its offset from the diagonal's
                    // coordinate and numbers its positions by the diagonal's
                    // position, so the diagonal is the top level; the offset
                    // is `col - row` of the modes the range and offset levels
                    // store.
                    if k != 1 {
                        Err(format!(
                            "level {k}: the diagonal level above a range level must be the top level"
                        ))
                    } else if here.projection != Projection::mode(row) || c.projection != Projection::mode(col) {
                        Err(format!("level {k}: the range and offset levels must store the diagonal level's modes {row} and {col}, in that order"))
                    } else {
                        Ok(())
                    }
                }
                _ => Err(format!(
                    "level {k}: a range level needs a diagonal level above it and an offset level below it"
                )),
            },
            LevelKind::Offset if !matches!(parent, Some(p) if p.level.kind == LevelKind::Range) => {
                Err(format!("level {k}: an offset level needs a range level above it"))
            }
            LevelKind::Hashed if self.levels[..k].iter().any(|l| !l.level.unique) => {
                Err(format!("level {k}: a hashed level cannot sit below a non-unique level"))
            }
            _ => Ok(()),
        }
    }
}

impl PartialEq for Format {
    fn eq(&self, other: &Self) -> bool {
        self.order == other.order && self.levels == other.levels
    }
}

impl Eq for Format {}

impl std::hash::Hash for Format {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.order.hash(state);
        self.levels.hash(state);
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(name) = &self.name {
            return write!(f, "{name}");
        }
        let parts: Vec<String> = self.levels.iter().map(|l| l.level.to_string()).collect();
        write!(f, "{}", parts.join(","))?;
        if let Some(order) = self.mode_order() {
            if order.iter().enumerate().any(|(k, &m)| k != m) {
                let order: Vec<String> = order.iter().map(|m| m.to_string()).collect();
                write!(f, ":{}", order.join(","))?;
            }
        }
        Ok(())
    }
}

fn levels_of(format: &Format) -> Vec<LevelFormat> {
    format.levels.iter().map(|l| l.level).collect()
}
