//! CSR to CSC and back in two passes over the arrays (a count per column,
//! then each entry placed), as scipy's `tocsc` does: the conversion a
//! transposed operand needs, without the generic packer's list of entries
//! and sort. It gives what [`Tensor::convert`] gives through the packer:
//! entries holding the fill are dropped, rows stay sorted.

use crate::format::Format;
use crate::index::IndexArray;
use crate::levels::compressed::Compressed;
use crate::tensor::{Copied, LevelStorage, Tensor};
use crate::value::Value;
use crate::Result;

/// `tensor` in `target` when one of them is CSR and the other CSC (the
/// same matrix, its compression swapped); `None` otherwise.
pub(crate) fn swapped<V: Value>(tensor: &Tensor<V>, target: &Format) -> Option<Result<Tensor<V>>> {
    let (csr, csc) = (Format::csr(), Format::csc());
    let from = tensor.format().levels();
    let swaps = (from == csr.levels() && target.levels() == csc.levels())
        || (from == csc.levels() && target.levels() == csr.levels());
    if !swaps {
        return None;
    }
    let (pos, idx) = Compressed::arrays(tensor.level(1))?;
    let fill = tensor.fill();
    let outer = tensor.level(0).extent;
    let inner = tensor.level(1).extent;
    // The count table is at most about the entries' size: a matrix of
    // absurd shape goes to the packer, which checks its sizes first.
    if inner > 2 * tensor.stored() + 4096 {
        return None;
    }
    let (pos, idx, values) = match (pos, idx) {
        (IndexArray::U32(p), IndexArray::U32(i)) => place(p.as_slice(), i.as_slice(), tensor.values(), inner, fill),
        (IndexArray::U64(p), IndexArray::U32(i)) => place(p.as_slice(), i.as_slice(), tensor.values(), inner, fill),
        (IndexArray::U32(p), IndexArray::U64(i)) => place(p.as_slice(), i.as_slice(), tensor.values(), inner, fill),
        (IndexArray::U64(p), IndexArray::U64(i)) => place(p.as_slice(), i.as_slice(), tensor.values(), inner, fill),
        _ => return None,
    };
    let nnz = values.len() as u64;
    let rows = LevelStorage::new(inner);
    let mut entries = LevelStorage::new(outer);
    entries.arrays.push(IndexArray::from_u64_with_bound(pos, nnz));
    entries.arrays.push(IndexArray::from_u64_with_bound(idx, outer as u64));
    let result = Tensor::from_parts_with_fill(
        tensor.shape(),
        target.clone(),
        (vec![rows, entries], values),
        fill,
        Copied::Other,
    );
    Some(result)
}

/// The swapped arrays: positions over the `inner` coordinates, the outer
/// coordinate of each entry, its value; entries holding `fill` left out.
fn place<P, I, V>(pos: &[P], idx: &[I], values: &[V], inner: usize, fill: V) -> (Vec<u64>, Vec<u64>, Vec<V>)
where
    P: Copy + Into<u64>,
    I: Copy + Into<u64>,
    V: Value,
{
    let kept = |p: usize| values[p] != fill;
    let columns = idx.iter().enumerate().filter(|&(p, _)| kept(p));
    let starts = crate::sorting::bucket_starts(columns.map(|(_, &c)| c.into() as usize), inner);
    let nnz = starts[inner];
    let mut next = starts.clone();
    let mut outer_coords = vec![0u64; nnz];
    let mut placed = vec![fill; nnz];
    for r in 0..pos.len().saturating_sub(1) {
        let (begin, end) = (pos[r].into() as usize, pos[r + 1].into() as usize);
        for p in begin..end {
            if kept(p) {
                let slot = &mut next[idx[p].into() as usize];
                outer_coords[*slot] = r as u64;
                placed[*slot] = values[p];
                *slot += 1;
            }
        }
    }
    (starts.into_iter().map(|s| s as u64).collect(), outer_coords, placed)
}
