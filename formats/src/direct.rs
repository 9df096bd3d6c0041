//! Packing without the generic packer, where a format's arrays can be
//! written at once: a sorted list into CSR (counts per row, then the
//! columns as they come), a list in storage order into COO (its columns
//! copied), and CSR to DIA, ELL and BCSR in two passes over
//! CSR's arrays: which
//! diagonals (how many slots, which blocks) there are, then each entry
//! placed at its position. The generic packer lists, sorts and packs the
//! entries instead, ten times slower; this gives the same storage (a test
//! compares them), so [`Tensor::convert`] takes it whenever it applies:
//! entries holding the fill are left out, diagonals are stored in
//! increasing offset, slots fill in column order, blocks are sorted in
//! their block row, padding holds the fill (and column 0 in ELL).

use crate::coordinates::CoordinateList;
use crate::format::{Format, Projection, Split};
use crate::index::IndexArray;
use crate::levels::compressed::Compressed;
use crate::memory::with_capacity_on_huge_pages;
use crate::padding::check_padding;
use crate::tensor::{Copied, LevelStorage, Tensor};
use crate::value::Value;
use crate::Result;

/// `list` in `format` when that is CSR and `list` is canonical (sorted,
/// without duplicates); `None` otherwise.
pub(crate) fn csr<V: Value>(list: &CoordinateList<V>, format: &Format, fill: V) -> Option<Result<Tensor<V>>> {
    if format.levels() != Format::csr().levels() || !list.is_canonical() {
        return None;
    }
    let &[rows, cols] = list.shape() else {
        return None;
    };
    let n = list.len();
    // Tables are at most about the entries' size: a matrix of absurd
    // shape goes to the packer, which checks its sizes first.
    if rows > 2 * n + 4096 {
        return None;
    }
    let starts = crate::sorting::bucket_starts(list.iter().map(|(coords, _)| coords[0] as usize), rows);
    let pos: Vec<u64> = starts.into_iter().map(|s| s as u64).collect();
    let mut compressed = LevelStorage::new(cols);
    compressed.arrays.push(IndexArray::from_u64_with_bound(pos, n as u64));
    compressed.arrays.push(IndexArray::collect_with_bound(
        list.iter().map(|(coords, _)| coords[1]),
        cols as u64,
    ));
    let mut values = with_capacity_on_huge_pages(n);
    values.extend(list.iter().map(|(_, v)| v));
    let levels = vec![LevelStorage::new(rows), compressed];
    Some(Tensor::from_parts_with_fill(
        list.shape(),
        format.clone(),
        (levels, values),
        fill,
        Copied::InStorageOrder,
    ))
}

/// `list` in `format` when that is COO with its modes in natural order
/// and `list` is in its storage order: any order for unordered COO (the
/// entries are kept as given), canonical for ordered COO. A copy of each
/// coordinate column, with no sort and no table; `None` otherwise.
pub(crate) fn coo<V: Value>(list: &CoordinateList<V>, format: &Format, fill: V) -> Option<Result<Tensor<V>>> {
    let order = list.shape().len();
    let in_storage_order = if format.stores_as_given() {
        format.mode_order()? == (0..order).collect::<Vec<_>>()
    } else {
        format.levels() == Format::coo(order).levels() && list.is_canonical()
    };
    if order == 0 || !in_storage_order {
        return None;
    }
    let n = list.len();
    let column =
        |k: usize| IndexArray::collect_with_bound(list.iter().map(|(coords, _)| coords[k]), list.shape()[k] as u64);
    let mut levels = Vec::with_capacity(order);
    let mut first = LevelStorage::new(list.shape()[0]);
    first
        .arrays
        .push(IndexArray::from_u64_with_bound(vec![0, n as u64], n as u64));
    first.arrays.push(column(0));
    levels.push(first);
    for k in 1..order {
        let mut singleton = LevelStorage::new(list.shape()[k]);
        singleton.arrays.push(column(k));
        levels.push(singleton);
    }
    let mut values = with_capacity_on_huge_pages(n);
    values.extend_from_slice(list.values());
    // Ordered COO came from a canonical list; unordered COO has no order
    // to check.
    Some(Tensor::from_parts_with_fill(
        list.shape(),
        format.clone(),
        (levels, values),
        fill,
        Copied::InStorageOrder,
    ))
}

/// `tensor` (CSR) in `target` when that is DIA, ELL or BCSR; `None`
/// otherwise.
pub(crate) fn converted<V: Value>(tensor: &Tensor<V>, target: &Format) -> Option<Result<Tensor<V>>> {
    if tensor.format().levels() != Format::csr().levels() {
        return None;
    }
    // Tables are at most about the entries' size: a matrix of absurd
    // shape goes to the packer, which checks its sizes first.
    let small = |table: usize| table <= 2 * tensor.stored() + 4096;
    let [rows, cols] = tensor.shape() else {
        return None;
    };
    let into = if target.levels() == Format::dia().levels() && small(rows + cols) {
        Target::Dia
    } else if target.levels() == Format::ell().levels() {
        Target::Ell
    } else {
        let block = block_of(target).filter(|&(_, c)| small(cols / c))?;
        if let Err(e) = target.check_shape(tensor.shape()) {
            return Some(Err(e));
        }
        Target::Bcsr(block)
    };
    let (pos, idx) = Compressed::arrays(tensor.level(1))?;
    let csr = Csr {
        pos: pos.to_u64_vec(),
        idx: idx.to_u64_vec(),
        values: tensor.values(),
        fill: tensor.fill(),
        cols: tensor.level(1).extent,
    };
    let built = match into {
        Target::Dia => csr.to_dia(target),
        Target::Ell => csr.to_ell(target),
        Target::Bcsr(block) => csr.to_bcsr(target, block),
    };
    Some(built.and_then(|(levels, values)| {
        Tensor::from_parts_with_fill(
            tensor.shape(),
            target.clone(),
            (levels, values),
            csr.fill,
            Copied::Other,
        )
    }))
}

/// The formats converted to.
enum Target {
    Dia,
    Ell,
    /// BCSR of blocks of (rows, columns).
    Bcsr((usize, usize)),
}

/// The block of `format` if it is BCSR.
fn block_of(format: &Format) -> Option<(usize, usize)> {
    let outer = |k: usize| match format.levels().get(k)?.projection {
        Projection::Mode {
            split: Split::Outer(b), ..
        } => Some(b),
        _ => None,
    };
    let block = (outer(0)?, outer(1)?);
    let bcsr = Format::bcsr(block.0, block.1).ok()?;
    (format.levels() == bcsr.levels()).then_some(block)
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
        // A diagonal's coordinate is its slot `j - i + rows - 1`.
        let mut diagonals = Vec::new();
        for (s, d) in number.iter_mut().enumerate() {
            if *d == 0 {
                *d = diagonals.len() as u64;
                diagonals.push(s as u64);
            }
        }
        let extent = (rows + self.cols).saturating_sub(1);
        check_padding(
            format,
            &[extent, rows, self.cols],
            Some(diagonals.len()),
            self.entries(),
        )?;
        let mut values = vec![self.fill; diagonals.len() * rows];
        for i in 0..rows {
            for (j, v) in self.row(i) {
                values[number[slot(i, j)] as usize * rows + i] = v;
            }
        }
        let mut compressed = LevelStorage::new(extent);
        let stored = diagonals.len() as u64;
        compressed
            .arrays
            .push(IndexArray::from_u64_with_bound(vec![0, stored], stored));
        compressed
            .arrays
            .push(IndexArray::from_u64_with_bound(diagonals, extent as u64));
        let range = LevelStorage::new(rows);
        Ok((vec![compressed, range, LevelStorage::new(self.cols)], values))
    }

    fn to_ell(&self, format: &Format) -> Result<(Vec<LevelStorage>, Vec<V>)> {
        let rows = self.rows();
        let slots = (0..rows).map(|i| self.row(i).count()).max().unwrap_or(0);
        check_padding(format, &[slots, rows, self.cols], None, self.entries())?;
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

    fn to_bcsr(&self, format: &Format, (r, c): (usize, usize)) -> Result<(Vec<LevelStorage>, Vec<V>)> {
        let (block_rows, block_cols) = (self.rows() / r, self.cols / c);
        // The blocks of each block row, sorted; `seen[jb]` is 1 + the last
        // block row that had block column jb.
        let mut seen = vec![0usize; block_cols];
        let mut pos = Vec::with_capacity(block_rows + 1);
        let mut idx: Vec<u64> = Vec::new();
        pos.push(0u64);
        for ib in 0..block_rows {
            let start = idx.len();
            for i in ib * r..(ib + 1) * r {
                for (j, _) in self.row(i) {
                    let jb = j as usize / c;
                    if seen[jb] != ib + 1 {
                        seen[jb] = ib + 1;
                        idx.push(jb as u64);
                    }
                }
            }
            idx[start..].sort_unstable();
            pos.push(idx.len() as u64);
        }
        check_padding(format, &[block_rows, block_cols, r, c], None, self.entries())?;
        let mut values = vec![self.fill; idx.len() * r * c];
        let mut block_at = vec![0usize; block_cols];
        for ib in 0..block_rows {
            for p in pos[ib] as usize..pos[ib + 1] as usize {
                block_at[idx[p] as usize] = p;
            }
            for i in ib * r..(ib + 1) * r {
                for (j, v) in self.row(i) {
                    let (jb, jj) = (j as usize / c, j as usize % c);
                    values[(block_at[jb] * r + i % r) * c + jj] = v;
                }
            }
        }
        let blocks = idx.len() as u64;
        let mut compressed = LevelStorage::new(block_cols);
        compressed.arrays.push(IndexArray::from_u64_with_bound(pos, blocks));
        compressed
            .arrays
            .push(IndexArray::from_u64_with_bound(idx, block_cols as u64));
        let levels = vec![
            LevelStorage::new(block_rows),
            compressed,
            LevelStorage::new(r),
            LevelStorage::new(c),
        ];
        Ok((levels, values))
    }
}

#[cfg(test)]
mod tests {
    use crate::{CoordinateList, Format, Tensor};

    /// A shape and its entries (row, column, value).
    type Case<'a> = (&'a [usize; 2], &'a [(u64, u64, f64)]);

    /// A shape and its entries (coordinates, value).
    type ListCase<'a> = (&'a [usize], &'a [(&'a [u64], f64)]);

    /// Lists in COO's storage order (unordered COO: as given, with
    /// duplicates; ordered COO: canonical) are copied into exactly the
    /// storage the generic packer makes, for matrices, a 3rd-order tensor,
    /// a vector, and no entries; lists out of order are left to the packer.
    #[test]
    fn coordinate_lists_are_copied_into_what_the_packer_stores() {
        let cases: [ListCase<'_>; 5] = [
            (
                &[4, 6],
                &[(&[3, 5], 1.0), (&[0, 1], 2.0), (&[3, 5], -1.0), (&[2, 0], 0.0)],
            ),
            (&[1, 1], &[(&[0, 0], 7.0)]),
            (&[2, 3, 4], &[(&[1, 2, 3], 1.5), (&[0, 0, 0], 2.5), (&[1, 0, 3], 3.5)]),
            (&[5], &[(&[4], 1.0), (&[1], 2.0)]),
            (&[0, 3], &[]),
        ];
        for (shape, entries) in cases {
            let mut list = CoordinateList::new(shape);
            for &(coords, v) in entries {
                list.push(coords, v).unwrap();
            }
            let mut canonical = list.clone();
            canonical.canonicalize();
            let order = shape.len();
            for (format, list) in [(Format::coo_unordered(order), &list), (Format::coo(order), &canonical)] {
                for fill in [0.0, 3.0] {
                    let direct = super::coo(list, &format, fill).unwrap().unwrap();
                    let packed = crate::tensor::pack_generic(list, format.clone(), fill).unwrap();
                    assert_eq!(direct.levels(), packed.levels(), "{format} of {shape:?}");
                    assert_eq!(direct.values(), packed.values(), "{format} of {shape:?}");
                    assert_eq!(direct.fill(), packed.fill());
                }
            }
            if list.len() > 1 && !list.is_canonical() {
                assert!(super::coo(&list, &Format::coo(order), 0.0).is_none(), "out of order");
            }
            assert!(super::coo(&list, &Format::csf(order), 0.0).is_none(), "not COO");
        }
    }

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
                let mut targets = vec![Format::dia(), Format::ell()];
                for (r, c) in [(1, 1), (2, 3), (3, 2), (2, 2)] {
                    if shape[0] % r == 0 && shape[1] % c == 0 {
                        targets.push(Format::bcsr(r, c).unwrap());
                    }
                }
                for target in targets {
                    let direct = super::converted(&csr, &target).unwrap().unwrap();
                    let packed = Tensor::pack_with_fill(&csr.to_coordinates(), target.clone(), fill).unwrap();
                    assert_eq!(direct.levels(), packed.levels(), "{target} of {shape:?}, fill {fill}");
                    assert_eq!(direct.values(), packed.values(), "{target} of {shape:?}, fill {fill}");
                    assert_eq!(direct.fill(), packed.fill());
                }
            }
        }
    }
}
