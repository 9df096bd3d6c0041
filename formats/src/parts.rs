//! One tensor from parts assembled side by side: the parts of a parallel
//! run, each holding a consecutive range of the first level's coordinates.
//!
//! Each part is a complete tensor of the same format. When the first level
//! is dense, part `k` holds rows `starts[k]..starts[k + 1]` re-based to 0
//! (its first mode has that many coordinates), so a part is as large as its
//! entries, not as the whole first mode; otherwise every part has the whole
//! shape and holds coordinates after the previous part's. Joining copies
//! each level's arrays once, offsetting positions by the entries before the
//! part: the result is the tensor one assembler would have built from all
//! the entries, array for array.
//!
//! ```
//! use tessera_formats::{parts::join, CoordinateList, Format, Tensor};
//!
//! let part = |rows: usize, entries: &[(u64, u64, f64)]| {
//!     let mut list = CoordinateList::new(&[rows, 3]);
//!     for &(i, j, v) in entries {
//!         list.push(&[i, j], v).unwrap();
//!     }
//!     Tensor::pack(&list, Format::csr()).unwrap()
//! };
//! // Rows 0..2 and rows 2..3 (re-based: its row 0 is row 2).
//! let parts = [part(2, &[(0, 1, 1.0), (1, 2, 2.0)]), part(1, &[(0, 0, 3.0)])];
//! let joined = join(Format::csr(), &[3, 3], &parts).unwrap();
//! assert_eq!(joined.to_dense_vec().unwrap(), vec![0.0, 1.0, 0.0, 0.0, 0.0, 2.0, 3.0, 0.0, 0.0]);
//! ```

use rayon::prelude::*;
use std::mem::MaybeUninit;

use crate::error::{FormatError, Result};
use crate::format::{Format, LevelKind};
use crate::index::IndexArray;
use crate::tensor::{LevelStorage, Tensor};
use crate::value::Value;

/// Whether parts of `format` can be joined: every level dense, compressed
/// or singleton, the first dense or compressed.
pub fn joinable(format: &Format) -> bool {
    let levels = format.levels();
    levels.iter().all(|l| {
        matches!(
            l.level.kind,
            LevelKind::Dense | LevelKind::Compressed | LevelKind::Singleton
        )
    }) && levels
        .first()
        .is_some_and(|l| matches!(l.level.kind, LevelKind::Dense | LevelKind::Compressed))
}

/// Joins `parts`, in order, into one tensor of `shape` (see the module).
pub fn join<V: Value>(format: Format, shape: &[usize], parts: &[Tensor<V>]) -> Result<Tensor<V>> {
    join_sharing(format, shape, parts, &vec![false; parts.len().saturating_sub(1)])
}

/// [`join`] of parts where `continues[k]` says that part `k + 1`'s first
/// coordinate of the first level is part `k`'s last, its fibre continuing
/// there (blocks of an operand's positions cut a row between two parts).
/// The parts hold different entries of a shared fibre, the later part's
/// after the earlier's; the joined fibre is both, in order.
///
/// ```
/// use tessera_formats::{parts::join_sharing, CoordinateList, Format, Tensor};
///
/// let part = |rows: usize, entries: &[(u64, u64, f64)]| {
///     let mut list = CoordinateList::new(&[rows, 3]);
///     for &(i, j, v) in entries {
///         list.push(&[i, j], v).unwrap();
///     }
///     Tensor::pack(&list, Format::csr()).unwrap()
/// };
/// // Rows 0..2, and rows 1..3 re-based: row 1 is in both.
/// let parts = [part(2, &[(0, 1, 1.0), (1, 0, 2.0)]), part(2, &[(0, 2, 3.0), (1, 1, 4.0)])];
/// let joined = join_sharing(Format::csr(), &[3, 3], &parts, &[true]).unwrap();
/// assert_eq!(joined.to_dense_vec().unwrap(), vec![0.0, 1.0, 0.0, 2.0, 0.0, 3.0, 0.0, 4.0, 0.0]);
/// ```
pub fn join_sharing<V: Value>(
    format: Format,
    shape: &[usize],
    parts: &[Tensor<V>],
    continues: &[bool],
) -> Result<Tensor<V>> {
    if !joinable(&format) {
        return Err(FormatError::BadFormat {
            format: format.to_string(),
            reason: "its parts cannot be joined (only dense, compressed and singleton levels can)".into(),
        });
    }
    if parts.is_empty() {
        return Err(FormatError::Shape("there are no parts to join".into()));
    }
    if let Some(part) = parts.iter().find(|p| p.format().levels() != format.levels()) {
        return Err(FormatError::Shape(format!(
            "a part is stored as {}, the joined tensor as {format}",
            part.format()
        )));
    }
    if continues.len() + 1 != parts.len() {
        return Err(FormatError::Shape(format!(
            "{} parts but {} joins between them",
            parts.len(),
            continues.len()
        )));
    }
    // A first level that repeats coordinates (COO's) keeps one per entry:
    // parts that continue a fibre join like parts that do not.
    let root = format.level(0);
    let repeats = root.kind == LevelKind::Compressed && !root.unique;
    let continues: Vec<bool> = continues.iter().map(|&c| c && !repeats).collect();
    let shared = continues.iter().filter(|&&c| c).count() as u64;
    if shared > 0 && format.levels().len() < 2 {
        return Err(FormatError::Shape(
            "parts of a one-level format cannot share a fibre: they would share an entry".into(),
        ));
    }
    // Piece `k` of an array of parts: which of its elements the join keeps.
    let continued_by = |k: usize| k + 1 < parts.len() && continues[k];
    let continues_from = |k: usize| k > 0 && continues[k - 1];
    let mut levels = Vec::with_capacity(format.levels().len());
    for k in 0..format.levels().len() {
        let extent = format
            .level_extent(k, shape)
            .ok_or_else(|| FormatError::Shape(format!("level {k} of {format} has no extent")))?;
        let mut storage = LevelStorage::new(extent);
        let arrays = |slot: usize| parts.iter().map(move |p| &p.level(k).arrays[slot]);
        match format.level(k).kind {
            LevelKind::Dense => {}
            LevelKind::Compressed if k == 0 => {
                // One parent, the root, shared by every part; a continued
                // fibre's coordinate is kept once.
                let total: u64 = arrays(0).map(last).sum::<u64>() - shared;
                storage.arrays.push(IndexArray::from_u64(vec![0, total]));
                let keep = |k: usize| (usize::from(continues_from(k)), 0);
                storage.arrays.push(concat(&arrays(1).collect::<Vec<_>>(), false, keep));
            }
            LevelKind::Compressed if k == 1 => {
                // A continued fibre's segment ends where its later part's
                // first ends.
                let keep = |k: usize| (usize::from(k > 0), usize::from(continued_by(k)));
                storage.arrays.push(concat(&arrays(0).collect::<Vec<_>>(), true, keep));
                storage
                    .arrays
                    .push(concat(&arrays(1).collect::<Vec<_>>(), false, whole));
            }
            LevelKind::Compressed => {
                storage
                    .arrays
                    .push(concat(&arrays(0).collect::<Vec<_>>(), true, after_first));
                storage
                    .arrays
                    .push(concat(&arrays(1).collect::<Vec<_>>(), false, whole));
            }
            LevelKind::Singleton if k == 1 && shared > 0 => {
                return Err(FormatError::Shape(
                    "parts whose second level is a singleton cannot share a fibre".into(),
                ))
            }
            LevelKind::Singleton => storage
                .arrays
                .push(concat(&arrays(0).collect::<Vec<_>>(), false, whole)),
            _ => unreachable!("checked joinable above"),
        }
        levels.push(storage);
    }
    let values = fill(parts.iter().map(|p| p.values().len()).collect(), |k, out| {
        write_raised(out, parts[k].values(), |x| x)
    });
    // SAFETY: the parts are valid tensors of `format` holding consecutive
    // ranges of the first level; their arrays are copied in order with
    // positions offset by the entries before each, which keeps every
    // invariant (the module's tests and the engine's thread checks compare
    // joins with whole assemblies array for array).
    Ok(unsafe { Tensor::from_parts_unchecked(shape, format, levels, values) })
}

/// A vector of the given pieces' lengths, piece `k` written by `write`
/// (into its own slots, returning how many it wrote), the pieces in
/// parallel. The vector is not zeroed first: each piece's pages are first
/// touched by the thread writing them, not all by one thread beforehand.
fn fill<T: Send>(lengths: Vec<usize>, write: impl Fn(usize, &mut [MaybeUninit<T>]) -> usize + Sync) -> Vec<T> {
    let total: usize = lengths.iter().sum();
    let mut out: Vec<T> = Vec::with_capacity(total);
    let mut pieces = Vec::with_capacity(lengths.len());
    let mut rest = &mut out.spare_capacity_mut()[..total];
    for &len in &lengths {
        let (piece, tail) = rest.split_at_mut(len);
        pieces.push(piece);
        rest = tail;
    }
    let whole = pieces
        .into_par_iter()
        .enumerate()
        .all(|(k, slots)| write(k, slots) == slots.len());
    assert!(whole, "every piece of a join is written whole");
    // SAFETY: the pieces cover the first `total` slots, and each piece's
    // writer wrote every one of its slots (checked above).
    unsafe { out.set_len(total) };
    out
}

/// Writes `raise` of each of `items` into `slots` in order, as far as
/// both go; returns how many it wrote. A loop over two slices of one
/// width each, which compiles to a vector loop: the join copies the whole
/// output (reading 64-bit arrays element by element through
/// [`IndexArray::get`] matched their width per element).
#[inline(always)]
fn write_raised<T: Copy, U>(slots: &mut [MaybeUninit<U>], items: &[T], raise: impl Fn(T) -> U) -> usize {
    let n = slots.len().min(items.len());
    for (slot, &x) in slots[..n].iter_mut().zip(&items[..n]) {
        *slot = MaybeUninit::new(raise(x));
    }
    n
}

/// Every element of a part's array.
fn whole(_: usize) -> (usize, usize) {
    (0, 0)
}

/// A part's positions after the first part's: without their leading 0.
fn after_first(k: usize) -> (usize, usize) {
    (usize::from(k > 0), 0)
}

/// The arrays one after the other, array `k` without the first and last
/// elements `keep(k)` counts. As positions (`offsets`), each array is
/// raised by the last position of the arrays before it. Positions are as
/// wide as the last one needs (an assembler widens them when they outgrow
/// 32 bits); coordinates keep the parts' width, which the extent chose.
fn concat(arrays: &[&IndexArray], offsets: bool, keep: impl Fn(usize) -> (usize, usize) + Sync) -> IndexArray {
    let skip = |k: usize| keep(k).0;
    let lengths: Vec<usize> = arrays
        .iter()
        .enumerate()
        .map(|(k, a)| a.len().saturating_sub(keep(k).0 + keep(k).1))
        .collect();
    let mut bases = Vec::with_capacity(arrays.len());
    let mut offset = 0u64;
    for a in arrays {
        bases.push(offset);
        if offsets {
            offset += last(a);
        }
    }
    let narrow = if offsets {
        offset <= u64::from(u32::MAX)
    } else {
        arrays.iter().all(|a| matches!(a, IndexArray::U32(_)))
    };
    if narrow {
        return IndexArray::U32(fill(lengths, |k, out| {
            let base = bases[k] as u32;
            match arrays[k] {
                IndexArray::U32(v) => write_raised(out, &v[skip(k)..], |x| x + base),
                IndexArray::U64(v) => write_raised(out, &v[skip(k)..], |x| x as u32 + base),
                IndexArray::I64(v) => write_raised(out, &v[skip(k)..], |x| x as u32 + base),
            }
        }));
    }
    IndexArray::U64(fill(lengths, |k, out| {
        let base = bases[k];
        match arrays[k] {
            IndexArray::U32(v) => write_raised(out, &v[skip(k)..], |x| u64::from(x) + base),
            IndexArray::U64(v) => write_raised(out, &v[skip(k)..], |x| x + base),
            IndexArray::I64(v) => write_raised(out, &v[skip(k)..], |x| x as u64 + base),
        }
    }))
}

fn last(a: &IndexArray) -> u64 {
    if a.is_empty() {
        0
    } else {
        a.get(a.len() - 1) as u64
    }
}
