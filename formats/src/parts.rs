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
    let mut levels = Vec::with_capacity(format.levels().len());
    for k in 0..format.levels().len() {
        let extent = format
            .level_extent(k, shape)
            .ok_or_else(|| FormatError::Shape(format!("level {k} of {format} has no extent")))?;
        let mut storage = LevelStorage::new(extent);
        match format.level(k).kind {
            LevelKind::Dense => {}
            LevelKind::Compressed if k == 0 => {
                // One parent, the root, shared by every part.
                let total: u64 = parts.iter().map(|p| last(&p.level(0).arrays[0])).sum();
                storage.arrays.push(IndexArray::from_u64(vec![0, total]));
                storage
                    .arrays
                    .push(concat(parts.iter().map(|p| &p.level(k).arrays[1]), false));
            }
            LevelKind::Compressed => {
                storage
                    .arrays
                    .push(concat(parts.iter().map(|p| &p.level(k).arrays[0]), true));
                storage
                    .arrays
                    .push(concat(parts.iter().map(|p| &p.level(k).arrays[1]), false));
            }
            LevelKind::Singleton => storage
                .arrays
                .push(concat(parts.iter().map(|p| &p.level(k).arrays[0]), false)),
            _ => unreachable!("checked joinable above"),
        }
        levels.push(storage);
    }
    let total = parts.iter().map(|p| p.values().len()).sum();
    let mut values = Vec::with_capacity(total);
    for p in parts {
        values.extend_from_slice(p.values());
    }
    Tensor::from_parts(shape, format, levels, values)
}

/// The arrays one after the other. As positions (`offsets`), each array
/// after the first drops its leading 0 and is raised by the last position
/// of the arrays before it. 32 bits wide when every element fits.
fn concat<'a>(arrays: impl Iterator<Item = &'a IndexArray> + Clone, offsets: bool) -> IndexArray {
    let skip = usize::from(offsets);
    let len: usize = arrays
        .clone()
        .enumerate()
        .map(|(k, a)| a.len() - if k > 0 { skip } else { 0 })
        .sum();
    // Positions are as wide as the last one needs (an assembler widens them
    // when they outgrow 32 bits); coordinates keep the parts' width, which
    // the extent chose.
    let narrow = if offsets {
        arrays.clone().map(last).sum::<u64>() <= u64::from(u32::MAX)
    } else {
        arrays.clone().all(|a| matches!(a, IndexArray::U32(_)))
    };
    let mut offset = 0u64;
    if narrow {
        let mut out: Vec<u32> = Vec::with_capacity(len);
        for (k, a) in arrays.enumerate() {
            let from = if k > 0 { skip } else { 0 };
            let base = offset as u32;
            match a {
                IndexArray::U32(v) => out.extend(v[from..].iter().map(|&x| x + base)),
                _ => out.extend(elements(a).skip(from).map(|x| x as u32 + base)),
            }
            if offsets {
                offset += last(a);
            }
        }
        return IndexArray::U32(out);
    }
    let mut out: Vec<u64> = Vec::with_capacity(len);
    for (k, a) in arrays.enumerate() {
        let from = if k > 0 { skip } else { 0 };
        out.extend(elements(a).skip(from).map(|x| x + offset));
        if offsets {
            offset += last(a);
        }
    }
    IndexArray::U64(out)
}

fn elements(a: &IndexArray) -> impl Iterator<Item = u64> + '_ {
    (0..a.len()).map(|i| a.get(i) as u64)
}

fn last(a: &IndexArray) -> u64 {
    if a.is_empty() {
        0
    } else {
        a.get(a.len() - 1) as u64
    }
}
