//! Findings of the fuzz targets (`fuzz/`), each kept as the test that
//! failed before its fix. The inputs are also in `fuzz/corpus/<target>/`,
//! which `tests/fuzz_seeds.rs` replays through the fuzz checks.

use std::path::Path;

use tessera_formats::io::{parse_mtx, parse_tns};
use tessera_formats::{CoordinateList, Format, FormatError, Tensor, MAX_DIMENSION};

/// `read_tns` (corpus `read_tns/huge-coordinate`): a coordinate of 2^64 - 1
/// was read into a list of shape `[2^64 - 1]`, which no tensor can store
/// (index arrays hold coordinates as non-negative `i64`): packing it failed
/// validation with `idx[0] = -2 is outside 0..18446744073709551615`. The
/// reader now refuses coordinates beyond `MAX_DIMENSION` at their line.
#[test]
fn a_tns_coordinate_beyond_the_largest_dimension_is_refused_at_its_line() {
    let err = parse_tns(b"1 1 1\n18446744073709551615 1 1\n", Path::new("t.tns")).unwrap_err();
    match &err {
        FormatError::Parse { line, reason, .. } => {
            assert_eq!(*line, 2);
            assert!(reason.contains("too large"), "{reason}");
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
    let err = parse_tns(b"9223372036854775808 1\n", Path::new("t.tns")).unwrap_err();
    assert!(matches!(err, FormatError::Parse { line: 1, .. }), "{err:?}");
}

#[test]
fn the_largest_tns_coordinate_reads_and_packs() {
    let list = parse_tns(b"9223372036854775807 1.5\n1 2\n", Path::new("t.tns")).unwrap();
    assert_eq!(list.shape(), &[MAX_DIMENSION]);
    let t = Tensor::pack(&list, Format::coo(1)).unwrap();
    assert_eq!(t.to_coordinates().values(), &[2.0, 1.5]);
}

/// The same limit for a Matrix Market size line.
#[test]
fn an_mtx_size_beyond_the_largest_dimension_is_too_large() {
    let text = b"%%MatrixMarket matrix coordinate real general\n9223372036854775808 1 1\n9223372036854775808 1 1\n";
    let err = parse_mtx(text, Path::new("m.mtx")).unwrap_err();
    assert!(matches!(err, FormatError::TooLarge(_)), "{err:?}");
    let text = b"%%MatrixMarket matrix coordinate real general\n9223372036854775807 1 1\n9223372036854775807 1 1\n";
    let file = parse_mtx(text, Path::new("m.mtx")).unwrap();
    Tensor::pack(&file.entries, Format::coo(2)).unwrap();
}

/// Packing or validating a shape beyond `MAX_DIMENSION` says so, instead of
/// failing on an index array it built itself.
#[test]
fn a_dimension_beyond_the_largest_is_too_large_for_every_format() {
    let shape = [MAX_DIMENSION + 1];
    let mut list = CoordinateList::new(&shape);
    list.push(&[MAX_DIMENSION as u64], 1.0).unwrap();
    for f in [Format::coo(1), Format::sparse_vector(), Format::hash_vector()] {
        let err = Tensor::pack(&list, f.clone()).unwrap_err();
        assert!(matches!(err, FormatError::TooLarge(_)), "{f}: {err:?}");
    }
    let err = Tensor::<f64>::empty(&[2, usize::MAX], Format::dcsr()).unwrap_err();
    assert!(matches!(err, FormatError::TooLarge(_)), "{err:?}");
}
