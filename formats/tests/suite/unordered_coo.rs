//! Unordered COO stores entries as given: in their order, duplicates kept,
//! and still means the same tensor.

use tessera_formats::spec::FormatSpec;
use tessera_formats::{CoordinateList, Format, Tensor};

#[test]
fn unordered_coo_keeps_the_order_and_the_duplicates_it_was_given() {
    let mut entries = CoordinateList::new(&[3, 4]);
    for (coords, v) in [([2, 1], 1.0), ([0, 3], 2.0), ([2, 1], 4.0), ([1, 0], 8.0)] {
        entries.push(&coords, v).unwrap();
    }
    let a = Tensor::pack(&entries, Format::coo_unordered(2)).unwrap();
    assert_eq!(a.values(), &[1.0, 2.0, 4.0, 8.0]);
    let rows: Vec<i64> = (0..4).map(|p| a.level(0).arrays[1].get(p)).collect();
    let cols: Vec<i64> = (0..4).map(|p| a.level(1).arrays[0].get(p)).collect();
    assert_eq!((rows, cols), (vec![2, 0, 2, 1], vec![1, 3, 1, 0]));
    // The same tensor as the sorted, summed one.
    let csr = Tensor::pack(&entries, Format::csr()).unwrap();
    assert_eq!(a.to_coordinates(), csr.to_coordinates());
    let spec: FormatSpec = "ucoo".parse().unwrap();
    assert_eq!(spec.resolve(2).unwrap(), Format::coo_unordered(2));
}
