//! CSR to DIA and to ELL in two passes over CSR's arrays: which diagonals
//! (or how many slots) there are, then each entry placed at its position.
//! The generic packer lists, sorts and packs the entries instead, ten times
//! slower; this gives the same storage (a test compares them), so
//! [`Tensor::convert`] takes it whenever it applies: entries holding the
//! fill are left out, diagonals are numbered in increasing offset, slots
//! fill in column order, padding holds the fill (and column 0 in ELL).

use crate::format::Format;
use crate::index::IndexArray;
use crate::levels::compressed::Compressed;
use crate::padding::check_padding;
use crate::tensor::{LevelStorage, Tensor};
use crate::value::Value;
use crate::Result;

/// `tensor` (CSR) in `target` when that is DIA or ELL; `None` otherwise.
pub(crate) fn from_csr<V: Value>(tensor: &Tensor<V>, target: &Format) -> Option<Result<Tensor<V>>> {
    if tensor.format().levels() != Format::csr().levels() {
        return None;
    }
    let dia = target.levels() == Format::dia().levels();
    if !dia && target.levels() != Format::ell().levels() {
        return None;
    }
    let (pos, idx) = Compressed::arrays(tensor.level(1))?;
    let csr = Csr {
        pos: pos.to_u64_vec(),
        idx: idx.to_u64_vec(),
        values: tensor.values(),
        fill: tensor.fill(),
        cols: tensor.level(1).extent,
    };
    let built = if dia { csr.to_dia(target) } else { csr.to_ell(target) };
    Some(built.and_then(|(levels, values)| {
        Tensor::from_parts_with_fill(tensor.shape(), target.clone(), levels, values, csr.fill)
    }))
}

/// A CSR matrix's arrays.
struct Csr<'a, V> {
    pos: Vec<u64>,
    idx: Vec<u64>,
    values: &'a [V],
    fill: V,
    cols: usize,
}

impl<V: Value> Csr<'_, V> {
    fn rows(&self) -> usize {
        self.pos.len() - 1
    }

    /// Each row's entries that do not hold the fill: (column, value).
    fn row(&self, i: usize) -> impl Iterator<Item = (u64, V)> + '_ {
        let span = self.pos[i] as usize..self.pos[i + 1] as usize;
        self.idx[span.clone()]
            .iter()
            .zip(&self.values[span])
            .filter(|&(_, &v)| v != self.fill)
            .map(|(&j, &v)| (j, v))
    }

    fn entries(&self) -> usize {
        self.values.iter().filter(|&&v| v != self.fill).count()
    }

    fn to_dia(&self, format: &Format) -> Result<(Vec<LevelStorage>, Vec<V>)> {
        let rows = self.rows();
        // Offsets j - i run from -(rows - 1) to cols - 1.
        let slot = |i: usize, j: u64| j as usize + rows - 1 - i;
        let mut number = vec![u64::MAX; rows + self.cols];
        for i in 0..rows {
            for (j, _) in self.row(i) {
                number[slot(i, j)] = 0;
            }
        }
        let mut offsets = Vec::new();
        for (s, d) in number.iter_mut().enumerate() {
            if *d == 0 {
                *d = offsets.len() as u64;
                offsets.push(s as i64 + 1 - rows as i64);
            }
        }
        check_padding(format, &[offsets.len(), rows, self.cols], self.entries())?;
        let mut values = vec![self.fill; offsets.len() * rows];
        for i in 0..rows {
            for (j, v) in self.row(i) {
                values[number[slot(i, j)] as usize * rows + i] = v;
            }
        }
        let diagonals = LevelStorage::new(offsets.len());
        let mut range = LevelStorage::new(rows);
        range.arrays.push(IndexArray::I64(offsets));
        Ok((vec![diagonals, range, LevelStorage::new(self.cols)], values))
    }

    fn to_ell(&self, format: &Format) -> Result<(Vec<LevelStorage>, Vec<V>)> {
        let rows = self.rows();
        let slots = (0..rows).map(|i| self.row(i).count()).max().unwrap_or(0);
        check_padding(format, &[slots, rows, self.cols], self.entries())?;
        let mut values = vec![self.fill; slots * rows];
        let mut columns = vec![0u64; slots * rows];
        for i in 0..rows {
            for (s, (j, v)) in self.row(i).enumerate() {
                values[s * rows + i] = v;
                columns[s * rows + i] = j;
            }
        }
        let mut singleton = LevelStorage::new(self.cols);
        singleton
            .arrays
            .push(IndexArray::from_u64_with_bound(columns, self.cols as u64));
        Ok((
            vec![LevelStorage::new(slots), LevelStorage::new(rows), singleton],
            values,
        ))
    }
}

#[cfg(test)]
mod tests {
    use crate::{CoordinateList, Format, Tensor};

    /// A shape and its entries (row, column, value).
    type Case<'a> = (&'a [usize; 2], &'a [(u64, u64, f64)]);

    /// The direct conversions give exactly the packer's storage, on
    /// matrices with empty rows, explicit zeros, a diagonal partly outside
    /// a rectangular shape, one row, and none.
    #[test]
    fn direct_conversions_store_what_the_packer_stores() {
        let cases: [Case<'_>; 5] = [
            (
                &[4, 6],
                &[(0, 0, 1.0), (0, 5, 2.0), (2, 1, 3.0), (3, 3, 0.0), (3, 5, -4.0)],
            ),
            (&[1, 3], &[(0, 2, 7.0)]),
            (&[3, 2], &[(2, 0, 1.5), (1, 1, 2.5)]),
            (&[3, 3], &[]),
            (&[0, 3], &[]),
        ];
        for (shape, entries) in cases {
            let mut list = CoordinateList::new(shape);
            for &(i, j, v) in entries {
                list.push(&[i, j], v).unwrap();
            }
            for fill in [0.0, 3.0] {
                let csr = Tensor::pack_with_fill(&list, Format::csr(), fill).unwrap();
                for target in [Format::dia(), Format::ell()] {
                    let direct = super::from_csr(&csr, &target).unwrap().unwrap();
                    let packed = Tensor::pack_with_fill(&csr.to_coordinates(), target.clone(), fill).unwrap();
                    assert_eq!(direct.levels(), packed.levels(), "{target} of {shape:?}, fill {fill}");
                    assert_eq!(direct.values(), packed.values(), "{target} of {shape:?}, fill {fill}");
                    assert_eq!(direct.fill(), packed.fill());
                }
            }
        }
    }
}
