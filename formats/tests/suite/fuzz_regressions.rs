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

/// `read_tns` (corpus `read_tns/crash-huge-dims-sidecar`): a `.dims`
/// sidecar giving a mode the size 18446440730184464130 was read into a list
/// of that shape, which no tensor can store. The sidecar's sizes are now
/// checked like the file's coordinates.
#[test]
fn a_dims_sidecar_size_beyond_the_largest_dimension_is_refused_at_its_line() {
    let dir = std::env::temp_dir().join(format!("tessera-fuzz-regression-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tns = dir.join("huge.tns");
    std::fs::write(&tns, b"").unwrap();
    std::fs::write(dir.join("huge.dims"), b"18446440730184464130\n").unwrap();
    let err = tessera_formats::io::read_tns(&tns).unwrap_err();
    std::fs::remove_dir_all(&dir).unwrap();
    match &err {
        FormatError::Parse { path, line, reason } => {
            assert!(path.ends_with("huge.dims") && *line == 1, "{err}");
            assert!(reason.contains("up to 9223372036854775807"), "{reason}");
        }
        other => panic!("expected a parse error naming the sidecar, got {other:?}"),
    }
}

/// `pack` and `differential` (seeds 737, 955 and 1214 of
/// `tests/fuzz_seeds.rs`): `dense(nonunique)` and `hashed(nonunique)` were
/// accepted, though those levels store each coordinate once; a singleton
/// below them then passed the format's checks ("a singleton needs a
/// non-unique parent") but no tensor with two entries in a row packed.
/// Only compressed and singleton levels may be non-unique now.
#[test]
fn a_level_that_stores_each_coordinate_once_cannot_be_declared_non_unique() {
    use tessera_formats::LevelFormat;
    for top in [LevelFormat::dense(), LevelFormat::hashed()] {
        let levels = [top.non_unique(), LevelFormat::singleton()];
        let err = Format::from_levels(&levels, &[0, 1]).unwrap_err();
        match &err {
            FormatError::BadFormat { reason, .. } => assert!(reason.contains("cannot be non-unique"), "{reason}"),
            other => panic!("expected a bad format, got {other:?}"),
        }
    }
    // What the fuzzer built: dense(nonunique) over singletons.
    let levels = [
        LevelFormat::dense().non_unique(),
        LevelFormat::singleton().non_unique(),
        LevelFormat::singleton().non_unique(),
    ];
    assert!(Format::from_levels(&levels, &[1, 0, 2]).is_err());
    // Compressed and singleton levels still may be, as in COO.
    let coo = [LevelFormat::compressed().non_unique(), LevelFormat::singleton()];
    let f = Format::from_levels(&coo, &[0, 1]).unwrap();
    let mut list = CoordinateList::new(&[2, 3]);
    for (c, v) in [([0, 0], 1.0), ([0, 2], 2.0), ([1, 1], 3.0)] {
        list.push(&c, v).unwrap();
    }
    assert_eq!(Tensor::pack(&list, f).unwrap().to_coordinates(), list);
}
