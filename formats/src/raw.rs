//! Raw compressed arrays in and out: a matrix as the three arrays of
//! compressed sparse rows (CSR) or columns (CSC) that scipy, sprs, MKL and
//! most file formats use — `indptr`, `indices`, `data` — and its shape.
//!
//! It takes arrays from a caller ([`Tensor::from_csr`], [`Tensor::from_csc`])
//! and gives them back ([`Tensor::to_csr`], [`Tensor::to_csc`]). Arrays from
//! a caller are validated here, each fault named by array and element
//! ([`FormatError::Arrays`]), before they become a tensor's storage; the
//! tensor's own validation then holds as for any other tensor.

use std::fmt::Display;

use crate::error::{FormatError, Result};
use crate::format::Format;
use crate::index::IndexArray;
use crate::levels::compressed::Compressed;
use crate::tensor::{LevelStorage, Tensor};
use crate::value::Value;

/// Which mode of a matrix is compressed: rows (CSR) or columns (CSC).
///
/// ```
/// use tessera_formats::{Compression, Format};
/// assert_eq!(Compression::Columns.format(), Format::csc());
/// assert_eq!((Compression::Rows.layout(), Compression::Columns.major_mode()), ("CSR", 1));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compression {
    /// Compressed sparse rows: `indptr` runs over rows, `indices` are columns.
    Rows,
    /// Compressed sparse columns: `indptr` runs over columns, `indices` are rows.
    Columns,
}

impl Compression {
    /// `CSR` or `CSC`, for messages.
    pub fn layout(self) -> &'static str {
        match self {
            Compression::Rows => "CSR",
            Compression::Columns => "CSC",
        }
    }
    /// The tensor format that stores these arrays: [`Format::csr`] or [`Format::csc`].
    pub fn format(self) -> Format {
        match self {
            Compression::Rows => Format::csr(),
            Compression::Columns => Format::csc(),
        }
    }
    /// The mode `indptr` runs over (0 for rows, 1 for columns).
    pub fn major_mode(self) -> usize {
        match self {
            Compression::Rows => 0,
            Compression::Columns => 1,
        }
    }
    fn names(self) -> (&'static str, &'static str) {
        match self {
            Compression::Rows => ("row", "column"),
            Compression::Columns => ("column", "row"),
        }
    }
}

/// A matrix as compressed arrays: the entries of major coordinate `r` (row
/// of CSR, column of CSC) are `indices[indptr[r]..indptr[r + 1]]` (the other
/// coordinate) with the values `data[indptr[r]..indptr[r + 1]]`. What
/// [`Tensor::to_csr`] and [`Tensor::to_csc`] give: indices sorted within
/// each major coordinate, no duplicates.
///
/// ```
/// use tessera_formats::Tensor;
/// let a = Tensor::from_csr([2, 3], &[0u64, 1, 3], &[2u64, 0, 1], &[5.0, 6.0, 7.0]).unwrap();
/// let csc = a.to_csc().unwrap();
/// assert_eq!(csc.indptr, vec![0, 1, 2, 3]);
/// assert_eq!(csc.indices, vec![1, 1, 0]);
/// assert_eq!(csc.data, vec![6.0, 7.0, 5.0]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct CompressedArrays<V = f64> {
    pub compression: Compression,
    /// Rows and columns.
    pub shape: [usize; 2],
    pub indptr: Vec<u64>,
    pub indices: Vec<u64>,
    pub data: Vec<V>,
}

impl<V: Value> Tensor<V> {
    /// A CSR matrix from scipy-style arrays: `indptr` (one entry per row
    /// plus one, starting at 0, never decreasing, ending at the number of
    /// entries), `indices` (columns) and `data` (values), of any integer
    /// type (`u32`, `i32`, `usize`, `i64`, …).
    ///
    /// Columns within a row may come in any order and repeat: a row is
    /// sorted, and repeated columns are summed, as scipy's
    /// `sum_duplicates` does. Explicit zeros are kept. Arrays that do not
    /// describe a matrix of `shape` are refused with
    /// [`FormatError::Arrays`] naming the first element at fault.
    ///
    /// ```
    /// use tessera_formats::Tensor;
    /// // [[0, 1, 0], [2, 0, 3]], row 1 given unsorted with a repeat.
    /// let a = Tensor::from_csr([2, 3], &[0, 1, 4], &[1, 2, 0, 2], &[1.0, 1.0, 2.0, 2.0]).unwrap();
    /// assert_eq!(a.get(&[1, 2]), Some(3.0));
    /// let err = Tensor::from_csr([2, 3], &[0, 2, 1], &[0, 1], &[1.0, 1.0]).unwrap_err();
    /// assert_eq!(err.to_string(), "invalid CSR arrays: indptr is not monotone: indptr[1] = 2 > indptr[2] = 1");
    /// ```
    pub fn from_csr<I>(shape: [usize; 2], indptr: &[I], indices: &[I], data: &[V]) -> Result<Self>
    where
        I: Copy + TryInto<u64> + Display,
    {
        Self::from_compressed(Compression::Rows, shape, indptr, indices, data)
    }

    /// A CSC matrix from scipy-style arrays: as [`from_csr`](Self::from_csr)
    /// with columns and rows exchanged (`indptr` runs over columns,
    /// `indices` are rows).
    ///
    /// ```
    /// use tessera_formats::Tensor;
    /// let a = Tensor::from_csc([2, 3], &[0usize, 1, 1, 2], &[1usize, 0], &[4.0, 5.0]).unwrap();
    /// assert_eq!(a.get(&[1, 0]), Some(4.0));
    /// assert_eq!(a.get(&[0, 2]), Some(5.0));
    /// ```
    pub fn from_csc<I>(shape: [usize; 2], indptr: &[I], indices: &[I], data: &[V]) -> Result<Self>
    where
        I: Copy + TryInto<u64> + Display,
    {
        Self::from_compressed(Compression::Columns, shape, indptr, indices, data)
    }

    /// [`from_csr`](Self::from_csr) or [`from_csc`](Self::from_csc), as
    /// `compression` says.
    ///
    /// ```
    /// use tessera_formats::{Compression, Tensor};
    /// let a = Tensor::from_compressed(Compression::Columns, [3, 1], &[0u32, 2], &[2u32, 0], &[1.0, 2.0]).unwrap();
    /// let back = a.to_compressed(Compression::Columns).unwrap();
    /// assert_eq!((back.indices, back.data), (vec![0, 2], vec![2.0, 1.0])); // sorted
    /// ```
    pub fn from_compressed<I>(
        compression: Compression,
        shape: [usize; 2],
        indptr: &[I],
        indices: &[I],
        data: &[V],
    ) -> Result<Self>
    where
        I: Copy + TryInto<u64> + Display,
    {
        let layout = compression.layout();
        let err = |reason: String| FormatError::Arrays { layout, reason };
        let (major_name, minor_name) = compression.names();
        let major_mode = compression.major_mode();
        let (major, minor) = (shape[major_mode], shape[1 - major_mode]);
        let matrix = format!("a {} x {} matrix", shape[0], shape[1]);
        if indptr.len() != major.saturating_add(1) {
            return Err(err(format!(
                "indptr has {} entries; {matrix} has {major} {major_name}s, so indptr needs {}",
                indptr.len(),
                major as u128 + 1
            )));
        }
        if indices.len() != data.len() {
            return Err(err(format!(
                "indices has {} entries but data has {}",
                indices.len(),
                data.len()
            )));
        }
        let pos = unsigned(layout, "indptr", indptr)?;
        if pos[0] != 0 {
            return Err(err(format!("indptr[0] = {} but must be 0", pos[0])));
        }
        if let Some(k) = (0..major).find(|&k| pos[k] > pos[k + 1]) {
            return Err(err(format!(
                "indptr is not monotone: indptr[{k}] = {} > indptr[{}] = {}",
                pos[k],
                k + 1,
                pos[k + 1]
            )));
        }
        if pos[major] != indices.len() as u64 {
            return Err(err(format!(
                "indptr[{major}] = {} but indices has {} entries",
                pos[major],
                indices.len()
            )));
        }
        let idx = unsigned(layout, "indices", indices)?;
        if let Some(p) = idx.iter().position(|&c| c >= minor as u64) {
            return Err(err(format!(
                "indices[{p}] = {} is outside 0..{minor} (the {minor_name}s of {matrix})",
                idx[p]
            )));
        }
        // From here on the arrays are consistent: pos monotone from 0 to
        // idx.len(), every index below `minor`.
        let segments = || (0..major).map(|r| pos[r] as usize..pos[r + 1] as usize);
        let canonical = segments().all(|s| idx[s].windows(2).all(|w| w[0] < w[1]));
        let (pos, idx, values) = if canonical {
            (pos, idx, data.to_vec())
        } else {
            sum_duplicates(&pos, &idx, data)
        };
        let levels = vec![
            LevelStorage::new(major),
            Compressed::storage(
                minor,
                IndexArray::from_u64(pos),
                IndexArray::from_u64_with_bound(idx, minor as u64),
            ),
        ];
        Tensor::from_parts(&shape, compression.format(), levels, values)
    }

    /// The matrix as CSR arrays: a CSR tensor's own arrays (explicit zeros
    /// included), any other format converted first (its nonzeros, sorted,
    /// duplicates summed). Refused for a tensor that is not a matrix.
    ///
    /// ```
    /// use tessera_formats::{CoordinateList, Format, Tensor};
    /// let mut entries = CoordinateList::new(&[3, 2]);
    /// entries.push(&[2, 1], 4.0).unwrap();
    /// entries.push(&[0, 0], 3.0).unwrap();
    /// let a = Tensor::pack(&entries, Format::coo(2)).unwrap();
    /// let csr = a.to_csr().unwrap();
    /// assert_eq!((csr.indptr, csr.indices, csr.data), (vec![0, 1, 1, 2], vec![0, 1], vec![3.0, 4.0]));
    /// ```
    pub fn to_csr(&self) -> Result<CompressedArrays<V>> {
        self.to_compressed(Compression::Rows)
    }

    /// The matrix as CSC arrays: as [`to_csr`](Self::to_csr), by columns.
    ///
    /// ```
    /// use tessera_formats::Tensor;
    /// let a = Tensor::from_dense(&[2, 2], vec![1.0, 0.0, 2.0, 3.0]).unwrap();
    /// let csc = a.to_csc().unwrap();
    /// assert_eq!((csc.indptr, csc.indices, csc.data), (vec![0, 2, 3], vec![0, 1, 1], vec![1.0, 2.0, 3.0]));
    /// ```
    pub fn to_csc(&self) -> Result<CompressedArrays<V>> {
        self.to_compressed(Compression::Columns)
    }

    /// [`to_csr`](Self::to_csr) or [`to_csc`](Self::to_csc), as
    /// `compression` says.
    ///
    /// ```
    /// use tessera_formats::{Compression, Tensor};
    /// let a = Tensor::from_dense(&[1, 2], vec![0.0, 5.0]).unwrap();
    /// let rows = a.to_compressed(Compression::Rows).unwrap();
    /// assert_eq!((rows.indptr, rows.indices, rows.data), (vec![0, 1], vec![1], vec![5.0]));
    /// ```
    pub fn to_compressed(&self, compression: Compression) -> Result<CompressedArrays<V>> {
        self.check_zero_fill(&format!("{} arrays", compression.layout()))?;
        let &[rows, cols] = self.shape() else {
            return Err(FormatError::Shape(format!(
                "{} arrays hold a matrix; this tensor has order {}",
                compression.layout(),
                self.order()
            )));
        };
        let target = compression.format();
        let converted;
        let matrix = if *self.format() == target {
            self
        } else {
            converted = self.convert(&target)?;
            &converted
        };
        let (pos, idx) = Compressed::arrays(matrix.level(1)).expect("the second level of CSR and CSC is compressed");
        Ok(CompressedArrays {
            compression,
            shape: [rows, cols],
            indptr: pos.to_u64_vec(),
            indices: idx.to_u64_vec(),
            data: matrix.values().to_vec(),
        })
    }
}

/// The elements of a caller's integer array as `u64`, refusing negative
/// (or otherwise unrepresentable) ones by name and element.
fn unsigned<I>(layout: &'static str, name: &str, values: &[I]) -> Result<Vec<u64>>
where
    I: Copy + TryInto<u64> + Display,
{
    values
        .iter()
        .enumerate()
        .map(|(k, &v)| {
            v.try_into().map_err(|_| FormatError::Arrays {
                layout,
                reason: format!("{name}[{k}] = {v} is negative"),
            })
        })
        .collect()
}

/// Each segment of valid compressed arrays sorted by index (stably: equal
/// indices keep their order), repeated indices summed in that order.
fn sum_duplicates<V: Value>(pos: &[u64], idx: &[u64], data: &[V]) -> (Vec<u64>, Vec<u64>, Vec<V>) {
    let mut new_pos = Vec::with_capacity(pos.len());
    let mut new_idx = Vec::with_capacity(idx.len());
    let mut values: Vec<V> = Vec::with_capacity(data.len());
    let mut segment: Vec<(u64, V)> = Vec::new();
    new_pos.push(0);
    for r in 0..pos.len() - 1 {
        let span = pos[r] as usize..pos[r + 1] as usize;
        segment.clear();
        segment.extend(idx[span.clone()].iter().copied().zip(data[span].iter().copied()));
        segment.sort_by_key(|&(c, _)| c);
        let row_start = new_idx.len();
        for &(c, v) in &segment {
            match values.last_mut() {
                Some(sum) if new_idx.len() > row_start && new_idx.last() == Some(&c) => *sum = sum.accumulate(v),
                _ => {
                    new_idx.push(c);
                    values.push(v);
                }
            }
        }
        new_pos.push(new_idx.len() as u64);
    }
    (new_pos, new_idx, values)
}
