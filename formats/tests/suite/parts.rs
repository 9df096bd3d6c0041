//! Joining parts of a parallel run: parts that hold consecutive rows, and
//! parts that share a boundary row (blocks of an operand's positions cut a
//! row between two parts), give the tensor one pack of all the entries
//! gives, array for array.

use tessera_formats::parts::join_sharing;
use tessera_formats::{CoordinateList, Format, Tensor};

/// Entries of a 3-mode tensor with empty rows, a row cut many ways, and
/// rows of one entry.
fn entries() -> Vec<(u64, u64, u64, f64)> {
    let mut out = Vec::new();
    let mut value = 1.0;
    for (i, js) in [
        (0u64, vec![1u64, 3]),
        (2, vec![0, 1, 2, 4, 5]),
        (3, vec![2]),
        (6, vec![0, 5]),
    ] {
        for j in js {
            for k in [0u64, 2] {
                out.push((i, j, k, value));
                value += 1.0;
            }
        }
    }
    out
}

const SHAPE: [usize; 3] = [7, 6, 3];

/// The entries of rows `rows`, re-based to the first when the format's
/// first level is dense (as a parallel run's parts are), as one part.
fn part(format: &Format, rows: std::ops::Range<u64>, skip: usize, take: usize, order: usize) -> Tensor<f64> {
    let dense_first = format.levels()[0].level.kind == tessera_formats::LevelKind::Dense;
    let base = if dense_first { rows.start } else { 0 };
    let mut shape = SHAPE[..order].to_vec();
    if dense_first {
        shape[0] = (rows.end - rows.start) as usize;
    }
    let mut list = CoordinateList::new(&shape);
    let mut kept: Vec<_> = entries().into_iter().filter(|e| order == 3 || e.2 == 0).collect();
    kept = kept.into_iter().skip(skip).take(take).collect();
    for (i, j, k, v) in kept {
        assert!(rows.contains(&i));
        let coords = [i - base, j, k];
        list.push(&coords[..order], v).unwrap();
    }
    Tensor::pack(&list, format.clone()).unwrap()
}

#[test]
fn parts_sharing_a_row_join_to_the_whole_tensor() {
    for (format, order) in [
        (Format::csr(), 2),
        (Format::dcsr(), 2),
        (Format::csf(3), 3),
        ("dense,compressed,compressed".parse::<Format>().unwrap(), 3),
        (Format::coo(2), 2),
        (Format::coo(3), 3),
    ] {
        let all: Vec<_> = entries().into_iter().filter(|e| order == 3 || e.2 == 0).collect();
        let whole = part(&format, 0..SHAPE[0] as u64, 0, all.len(), order);
        // Cut the entries into three parts at every pair of places.
        for first in 1..all.len() {
            for second in first + 1..=all.len() {
                // Positions are cut at the second level: a part never
                // holds part of a fibre below it.
                let splits_fibre =
                    |at: usize| at < all.len() && (all[at - 1].0, all[at - 1].1) == (all[at].0, all[at].1);
                if order == 3 && (splits_fibre(first) || splits_fibre(second)) {
                    continue;
                }
                let cuts = [0, first, second, all.len()];
                let mut parts = Vec::new();
                let mut continues = Vec::new();
                let mut row_start = 0u64;
                for p in 0..3 {
                    let (from, to) = (cuts[p], cuts[p + 1]);
                    let last_row = if to > from { all[to - 1].0 } else { row_start };
                    let next_first = all.get(to).map(|e| e.0);
                    let row_end = match next_first {
                        Some(next) if p < 2 => (last_row + 1).max(next),
                        _ => SHAPE[0] as u64,
                    };
                    let row_end = if p == 2 { SHAPE[0] as u64 } else { row_end };
                    parts.push(part(&format, row_start..row_end, from, to - from, order));
                    if p < 2 {
                        let next_start = next_first.unwrap_or(row_end).min(row_end);
                        continues.push(next_start < row_end);
                        row_start = next_start;
                    }
                }
                let joined = join_sharing(format.clone(), &SHAPE[..order], &parts, &continues)
                    .unwrap_or_else(|e| panic!("{format}, cuts {cuts:?}: {e}"));
                assert_eq!(joined.levels(), whole.levels(), "{format}, cuts {cuts:?}");
                assert_eq!(joined.values(), whole.values(), "{format}, cuts {cuts:?}");
            }
        }
    }
}

#[test]
fn parts_of_a_vector_cannot_share_an_entry() {
    let mut list = CoordinateList::new(&[4]);
    list.push(&[1], 1.0).unwrap();
    let part = Tensor::pack(&list, Format::sparse_vector()).unwrap();
    let err = join_sharing(Format::sparse_vector(), &[4], &[part.clone(), part], &[true]).unwrap_err();
    assert!(err.to_string().contains("would share an entry"), "{err}");
}
