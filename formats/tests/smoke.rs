use tessera_formats::*;

#[test]
fn every_named_format_round_trips_a_small_matrix() {
    let mut list = CoordinateList::new(&[4, 6]);
    for (i, j, v) in [
        (3, 4, 9.0),
        (0, 0, 1.0),
        (0, 2, 2.0),
        (1, 1, 3.0),
        (3, 0, 4.0),
        (0, 2, 1.0),
        (2, 5, 5.0),
    ] {
        list.push(&[i, j], v).unwrap();
    }
    let expect = list.pruned();
    let formats = [
        Format::dense(2),
        Format::dense_ordered(&[1, 0]),
        Format::csr(),
        Format::csc(),
        Format::dcsr(),
        Format::dcsc(),
        Format::coo(2),
        Format::coo_ordered(&[1, 0]),
        Format::csf(2),
        Format::dia(),
        Format::ell(),
        Format::bcsr(2, 3).unwrap(),
        Format::hash_rows(),
    ];
    for f in formats {
        let t = Tensor::pack(&list, f.clone()).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert_eq!(t.to_coordinates(), expect, "{f}");
        for g in [Format::csr(), Format::coo(2), Format::dia()] {
            assert_eq!(
                t.convert(&g).unwrap().to_coordinates(),
                expect,
                "{f} -> {g}"
            );
        }
    }
}
