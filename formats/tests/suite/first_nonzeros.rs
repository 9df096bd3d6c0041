//! `Tensor::first_nonzeros` reads what a summary shows without listing the
//! tensor: the same count and first entries as `to_coordinates`, whatever
//! the storage order, padding or explicit zeros.

use tessera_formats::{CoordinateList, Format, Tensor};

fn entries() -> CoordinateList<f64> {
    let mut list = CoordinateList::new(&[6, 8]);
    // Unsorted, a duplicate, an explicit zero, an empty row (3).
    for (c, v) in [
        ([5u64, 1u64], 1.0),
        ([0, 7], 2.0),
        ([2, 2], 3.0),
        ([0, 0], 4.0),
        ([2, 2], 1.5),
        ([4, 6], 0.0),
        ([1, 3], -2.0),
        ([5, 7], 9.0),
        ([4, 4], 6.0),
    ] {
        list.push(&c, v).unwrap();
    }
    list
}

#[test]
fn the_first_nonzeros_are_those_of_the_coordinate_list_in_every_format() {
    let list = entries();
    let formats = [
        Format::csr(),
        Format::csc(),
        Format::dcsr(),
        Format::dcsc(),
        Format::dense(2),
        Format::dia(),
        Format::ell(),
        Format::bcsr(2, 2).unwrap(),
        Format::hash_rows(),
    ];
    for format in formats {
        let tensor = Tensor::pack(&list, format.clone()).unwrap();
        let all = tensor.to_coordinates();
        for limit in [0, 1, 3, all.len(), all.len() + 5] {
            let shown = tensor
                .first_nonzeros(limit)
                .unwrap_or_else(|| panic!("{format} levels are unique"));
            assert_eq!(shown.count, all.len(), "{format}");
            let want: Vec<(Vec<u64>, f64)> = all.iter().take(limit).map(|(c, v)| (c.to_vec(), v)).collect();
            assert_eq!(shown.first, want, "{format}, limit {limit}");
        }
    }
}

#[test]
fn levels_that_may_repeat_coordinates_leave_the_summing_to_to_coordinates() {
    let tensor = Tensor::pack(&entries(), Format::coo(2)).unwrap();
    assert_eq!(tensor.first_nonzeros(3), None);
}
