//! `Tensor::get` reads one component through the level functions, in
//! every format, and agrees with the dense array of the tensor.

use tessera_formats::{CoordinateList, Format, LevelFormat, Tensor};

fn entries(shape: &[usize]) -> CoordinateList<f64> {
    let mut list = CoordinateList::new(shape);
    // Unsorted, duplicates, an explicit zero, empty rows, both corners.
    let raw: [[u64; 2]; 9] = [[5, 1], [0, 7], [2, 2], [0, 0], [2, 2], [4, 6], [1, 3], [5, 7], [4, 4]];
    for (k, c) in raw.iter().enumerate() {
        let c: Vec<u64> = c.iter().zip(shape).map(|(&x, &d)| x % d as u64).collect();
        list.push(&c, if k == 5 { 0.0 } else { k as f64 + 0.5 }).unwrap();
    }
    list
}

#[test]
fn every_component_of_every_format_reads_as_in_the_dense_array() {
    let coo_unsorted = Format::from_levels(
        &[
            LevelFormat::compressed().non_unique().unordered(),
            LevelFormat::singleton().unordered(),
        ],
        &[0, 1],
    )
    .unwrap();
    let formats = vec![
        Format::csr(),
        Format::csc(),
        Format::dcsr(),
        Format::dcsc(),
        Format::coo(2),
        Format::dense(2),
        Format::dia(),
        Format::ell(),
        Format::bcsr(2, 2).unwrap(),
        Format::hash_rows(),
        coo_unsorted,
    ];
    for shape in [[6usize, 8usize], [1, 1], [3, 8]] {
        let list = entries(&shape);
        for format in &formats {
            let Ok(tensor) = Tensor::pack(&list, format.clone()) else {
                continue; // BCSR 2x2 cannot hold odd shapes
            };
            let dense = tensor.to_dense_vec().unwrap();
            for i in 0..shape[0] {
                for j in 0..shape[1] {
                    assert_eq!(
                        tensor.get(&[i as u64, j as u64]),
                        Some(dense[i * shape[1] + j]),
                        "{format}, {shape:?}, ({i},{j})"
                    );
                }
            }
            assert_eq!(tensor.get(&[shape[0] as u64, 0]), None, "{format}");
            assert_eq!(tensor.get(&[0]), None, "{format}: wrong order");
        }
    }
}

#[test]
fn scalars_and_vectors_read_their_components() {
    let s = Tensor::from_dense(&[], vec![2.5]).unwrap();
    assert_eq!(s.get(&[]), Some(2.5));
    let mut list = CoordinateList::new(&[5]);
    list.push(&[3], 4.0).unwrap();
    for format in [Format::sparse_vector(), Format::hash_vector(), Format::dense(1)] {
        let v = Tensor::pack(&list, format.clone()).unwrap();
        assert_eq!(v.get(&[3]), Some(4.0), "{format}");
        assert_eq!(v.get(&[2]), Some(0.0), "{format}");
    }
}
