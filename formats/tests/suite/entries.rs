//! `Tensor::entries` walks the stored entries of every format in storage
//! order: per-mode formats give every stored value (explicit zeros, dense
//! components and unordered duplicates included), structured formats
//! (DIA, ELL, BCSR) their nonzeros without the padding.

use tessera_formats::{CoordinateList, Format, Tensor};

/// A 6 x 8 matrix with empty rows, both corners and an explicit zero,
/// given unsorted: (coordinates, value), duplicates-free.
const MATRIX: [([u64; 2], f64); 8] = [
    ([5, 7], 8.0),
    ([0, 0], 1.0),
    ([2, 2], 3.0),
    ([4, 6], 0.0),
    ([1, 3], 2.0),
    ([5, 1], 7.0),
    ([4, 4], 5.0),
    ([0, 7], 1.5),
];

fn list() -> CoordinateList<f64> {
    let mut list = CoordinateList::new(&[6, 8]);
    for (c, v) in MATRIX {
        list.push(&c, v).unwrap();
    }
    list
}

fn collected(t: &Tensor) -> Vec<(Vec<u64>, f64)> {
    t.entries().map(|(c, v)| (c.to_vec(), v)).collect()
}

/// MATRIX's entries sorted by `key`, with or without the explicit zero.
fn expected(key: impl Fn(&[u64; 2]) -> [u64; 2], zeros: bool) -> Vec<(Vec<u64>, f64)> {
    let mut e: Vec<([u64; 2], f64)> = MATRIX.iter().copied().filter(|&(_, v)| zeros || v != 0.0).collect();
    e.sort_by_key(|(c, _)| key(c));
    e.into_iter().map(|(c, v)| (c.to_vec(), v)).collect()
}

#[test]
fn per_mode_sparse_formats_give_their_stored_entries_in_storage_order() {
    let by_rows = expected(|c| *c, true);
    let by_columns = expected(|c| [c[1], c[0]], true);
    for (format, order) in [
        (Format::csr(), &by_rows),
        (Format::dcsr(), &by_rows),
        (Format::coo(2), &by_rows),
        (Format::csf(2), &by_rows),
        (Format::csc(), &by_columns),
        (Format::dcsc(), &by_columns),
        (Format::coo_ordered(&[1, 0]), &by_columns),
    ] {
        let t = Tensor::pack(&list(), format.clone()).unwrap();
        assert_eq!(&collected(&t), order, "{format}");
        assert_eq!(t.entries().count(), t.stored(), "{format}");
    }
}

#[test]
fn hash_rows_give_each_row_entries_in_some_order() {
    let t = Tensor::pack(&list(), Format::hash_rows()).unwrap();
    let mut got = collected(&t);
    let rows: Vec<u64> = got.iter().map(|(c, _)| c[0]).collect();
    assert!(rows.windows(2).all(|w| w[0] <= w[1]), "rows in order: {rows:?}");
    got.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(got, expected(|c| *c, true));
}

#[test]
fn a_dense_tensor_gives_every_component() {
    let t = Tensor::pack(&list(), Format::dense(2)).unwrap();
    let got = collected(&t);
    assert_eq!(got.len(), 48);
    let dense = t.to_dense_vec().unwrap();
    for (k, (c, v)) in got.iter().enumerate() {
        assert_eq!(c, &vec![k as u64 / 8, k as u64 % 8]);
        assert_eq!(*v, dense[k]);
    }
}

#[test]
fn structured_formats_give_their_nonzeros_without_padding() {
    let nonzeros = expected(|c| *c, false);
    for format in [
        Format::dia(),
        Format::ell(),
        Format::bcsr(2, 2).unwrap(),
        Format::bcsr(3, 4).unwrap(),
    ] {
        let t = Tensor::pack(&list(), format.clone()).unwrap();
        assert!(t.stored() > nonzeros.len(), "{format} pads");
        let mut got = collected(&t);
        got.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(got, nonzeros, "{format}");
    }
    // DIA walks diagonal by diagonal: offsets -4 (5,1), 0 (0,0) (2,2) (4,4), ...
    let dia = Tensor::pack(&list(), Format::dia()).unwrap();
    let offsets: Vec<i64> = dia.entries().map(|(c, _)| c[1] as i64 - c[0] as i64).collect();
    assert!(offsets.windows(2).all(|w| w[0] <= w[1]), "{offsets:?}");
}

#[test]
fn unordered_coo_gives_entries_as_given_duplicates_included() {
    let mut l = CoordinateList::new(&[3, 3]);
    for (c, v) in [([2, 0], 1.0), ([0, 1], 2.0), ([2, 0], 3.0)] {
        l.push(&c, v).unwrap();
    }
    let t = Tensor::pack(&l, Format::coo_unordered(2)).unwrap();
    assert_eq!(
        collected(&t),
        vec![(vec![2, 0], 1.0), (vec![0, 1], 2.0), (vec![2, 0], 3.0)]
    );
    assert_eq!(t.get(&[2, 0]), Some(4.0), "get sums what entries lists");
}

#[test]
fn tensors_of_other_orders_and_empty_ones() {
    let scalar = Tensor::from_dense(&[], vec![2.5]).unwrap();
    assert_eq!(collected(&scalar), vec![(vec![], 2.5)]);
    let mut l = CoordinateList::new(&[2, 3, 4]);
    l.push(&[1, 2, 3], 1.0).unwrap();
    l.push(&[0, 0, 1], 2.0).unwrap();
    let csf = Tensor::pack(&l, Format::csf(3)).unwrap();
    assert_eq!(collected(&csf), vec![(vec![0, 0, 1], 2.0), (vec![1, 2, 3], 1.0)]);
    let sv = Tensor::<f64>::pack(&CoordinateList::new(&[5]), Format::sparse_vector()).unwrap();
    assert_eq!(sv.entries().count(), 0);
    for format in [Format::csr(), Format::dia(), Format::ell(), Format::coo(2)] {
        let empty = Tensor::<f64>::empty(&[0, 4], format.clone()).unwrap();
        assert_eq!(empty.entries().count(), 0, "{format}");
        let empty = Tensor::<f64>::empty(&[3, 4], format.clone()).unwrap();
        assert_eq!(empty.entries().count(), 0, "{format}");
    }
}
