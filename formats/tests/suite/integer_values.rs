//! Matrix Market and FROSTT files read into and written from `i64` and
//! `i32` tensors: every integer exactly (also beyond 2^53, where `f64`
//! would round), `pattern` as 1, integral reals accepted, fractions and
//! values beyond the type's range refused with the file and line, and
//! round trips through files that keep every bit.

use crate::common::*;
use std::path::Path;

use tessera_formats::io::{
    parse_mtx_as, parse_tns_as, read_mtx, read_mtx_as, read_tns_as, write_mtx, write_mtx_to_with, write_mtx_with,
    write_tns, write_tns_to, MtxField, MtxHeader, MtxSymmetry,
};
use tessera_formats::{CoordinateList, Format, Tensor};

/// Values an `f64` cannot hold: beyond 2^53, and the extremes.
const BIG: [i64; 6] = [i64::MAX, i64::MIN, (1 << 53) + 1, -(1 << 60) - 3, -1, 7];

#[test]
fn integer_mtx_reads_as_i64_exactly_beyond_2_to_the_53() {
    let text = "%%MatrixMarket matrix coordinate integer general\n\
                3 3 4\n\
                1 1 9223372036854775807\n\
                2 3 -9223372036854775808\n\
                3 2 9007199254740993\n\
                3 3 +5\n";
    let file = parse_mtx_as::<i64>(text.as_bytes(), Path::new("big.mtx")).unwrap();
    assert_eq!(file.field, MtxField::Integer);
    assert_eq!(
        triples(&file.entries),
        vec![(0, 0, i64::MAX), (1, 2, i64::MIN), (2, 1, (1 << 53) + 1), (2, 2, 5)]
    );
    // Through `f64` the same file rounds: the reason for the typed readers.
    let rounded = tessera_formats::io::parse_mtx(text.as_bytes(), Path::new("big.mtx")).unwrap();
    assert_eq!(rounded.entries.value(2) as i64, 1 << 53);
}

#[test]
fn pattern_mtx_reads_as_ones_and_symmetric_storage_mirrors_integers() {
    let pattern = "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n1 1\n3 1\n";
    let file = parse_mtx_as::<i32>(pattern.as_bytes(), Path::new("p.mtx")).unwrap();
    assert_eq!(triples(&file.entries), vec![(0, 0, 1), (2, 0, 1), (0, 2, 1)]);
    let skew = "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 1\n3 1 -9223372036854775807\n";
    let file = parse_mtx_as::<i64>(skew.as_bytes(), Path::new("s.mtx")).unwrap();
    assert_eq!(triples(&file.entries), vec![(2, 0, -i64::MAX), (0, 2, i64::MAX)]);
    // The array layout, symmetric, column by column: zeros dropped.
    let array = "%%MatrixMarket matrix array integer symmetric\n2 2\n4\n-9223372036854775808\n0\n";
    let file = parse_mtx_as::<i64>(array.as_bytes(), Path::new("a.mtx")).unwrap();
    assert_eq!(
        triples(&file.entries),
        vec![(0, 0, 4), (1, 0, i64::MIN), (0, 1, i64::MIN)]
    );
}

#[test]
fn a_skew_symmetric_entry_without_a_negation_is_refused() {
    let skew = "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 1\n3 1 -9223372036854775808\n";
    assert_parse_error(
        parse_mtx_as::<i64>(skew.as_bytes(), Path::new("s.mtx")),
        "s.mtx",
        3,
        "the value -9223372036854775808 has no negation in i64",
    );
    let skew = "%%MatrixMarket matrix array integer skew-symmetric\n2 2\n-2147483648\n";
    assert_parse_error(
        parse_mtx_as::<i32>(skew.as_bytes(), Path::new("s.mtx")),
        "s.mtx",
        3,
        "has no negation in i32",
    );
    // As `f64` it has one.
    let skew = "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 1\n3 1 -9223372036854775808\n";
    assert!(tessera_formats::io::parse_mtx(skew.as_bytes(), Path::new("s.mtx")).is_ok());
}

#[test]
fn a_value_beyond_i32_is_refused_with_the_file_and_line() {
    let text = "%%MatrixMarket matrix coordinate integer general\n% c\n2 2 2\n1 1 2147483647\n2 2 2147483648\n";
    assert_parse_error(
        parse_mtx_as::<i32>(text.as_bytes(), Path::new("wide.mtx")),
        "wide.mtx",
        5,
        "the value `2147483648` is beyond the range of i32 (-2147483648 to 2147483647)",
    );
    assert_eq!(
        parse_mtx_as::<i64>(text.as_bytes(), Path::new("wide.mtx"))
            .unwrap()
            .entries
            .values(),
        &[2147483647, 2147483648]
    );
    let too_wide = "%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 9223372036854775808\n";
    assert_parse_error(
        parse_mtx_as::<i64>(too_wide.as_bytes(), Path::new("w.mtx")),
        "w.mtx",
        3,
        "beyond the range of i64",
    );
    let tns = "1 1 5\n2 1 -2147483649\n";
    assert_parse_error(
        parse_tns_as::<i32>(tns.as_bytes(), Path::new("w.tns"), None),
        "w.tns",
        2,
        "the value `-2147483649` is beyond the range of i32",
    );
}

#[test]
fn a_real_file_reads_as_integers_only_when_every_value_is_integral() {
    let text = "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 2.0\n1 2 -1e3\n2 2 7\n";
    let file = parse_mtx_as::<i64>(text.as_bytes(), Path::new("r.mtx")).unwrap();
    assert_eq!(triples(&file.entries), vec![(0, 0, 2), (0, 1, -1000), (1, 1, 7)]);
    let text = "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 2.0\n1 2 0.5\n2 2 7\n";
    assert_parse_error(
        parse_mtx_as::<i64>(text.as_bytes(), Path::new("r.mtx")),
        "r.mtx",
        4,
        "the value `0.5` is not an integer, and the values are read as i64",
    );
    let array = "%%MatrixMarket matrix array real general\n1 2\n3\ninf\n";
    assert_parse_error(
        parse_mtx_as::<i32>(array.as_bytes(), Path::new("r.mtx")),
        "r.mtx",
        4,
        "the value `inf` is not an integer",
    );
    let tns = "1 2 4\n2 1 -0.25\n";
    assert_parse_error(
        parse_tns_as::<i32>(tns.as_bytes(), Path::new("t.tns"), None),
        "t.tns",
        2,
        "the value `-0.25` is not an integer, and the values are read as i32",
    );
    // An `integer` file holds integers only, whatever the type read.
    let text = "%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 2.0\n";
    assert_parse_error(
        parse_mtx_as::<i64>(text.as_bytes(), Path::new("i.mtx")),
        "i.mtx",
        3,
        "expected an integer value (the field is `integer`), found `2.0`",
    );
}

#[test]
fn i64_matrices_round_trip_through_mtx_files_in_every_layout() {
    let header = MtxHeader {
        field: MtxField::Integer,
        ..MtxHeader::default()
    };
    let dense = Tensor::from_dense(&[3, 2], BIG.to_vec()).unwrap();
    for format in [Format::dense(2), Format::csr(), Format::csc(), Format::coo(2)] {
        let tensor = dense.convert(&format).unwrap();
        let file = TempFile::new("big.mtx");
        write_mtx_with(file.path(), &tensor, &header).unwrap();
        let read = read_mtx_as::<i64>(file.path()).unwrap();
        assert_eq!(read.field, MtxField::Integer, "{format}");
        let back = Tensor::pack(&read.entries, Format::dense(2)).unwrap();
        assert_eq!(back.values(), &BIG, "{format}");
    }
    // Under the default `real` header the integers are written as
    // integers too, and an integer type reads them back exactly.
    let file = TempFile::new("real.mtx");
    write_mtx(file.path(), &dense.convert(&Format::csr()).unwrap()).unwrap();
    let read = read_mtx_as::<i64>(file.path()).unwrap();
    assert_eq!(read.field, MtxField::Real);
    assert_eq!(read.entries.values(), &BIG);
    // ... and as `f64`, rounded, as any reader of a real file would.
    let rounded = read_mtx(file.path()).unwrap();
    assert_eq!(rounded.entries.values()[0], i64::MAX as f64);
}

#[test]
fn i32_matrices_round_trip_and_keep_their_symmetry_when_it_fits() {
    let mut list = CoordinateList::new(&[3, 3]);
    for (c, v) in [([0, 0], i32::MAX), ([2, 0], i32::MIN), ([0, 2], i32::MIN), ([1, 1], -4)] {
        list.push(&c, v).unwrap();
    }
    let tensor = Tensor::pack(&list, Format::csr()).unwrap();
    let symmetric = MtxHeader {
        field: MtxField::Integer,
        symmetry: MtxSymmetry::Symmetric,
        comments: vec!["written by a test".into()],
    };
    assert_eq!(symmetric.fitted(&tensor), symmetric);
    let mut written = Vec::new();
    write_mtx_to_with(&mut written, &tensor, &symmetric).unwrap();
    assert_eq!(
        String::from_utf8(written.clone()).unwrap(),
        "%%MatrixMarket matrix coordinate integer symmetric\n%written by a test\n3 3 3\n\
         1 1 2147483647\n2 2 -4\n3 1 -2147483648\n"
    );
    let back = parse_mtx_as::<i32>(&written, Path::new("back.mtx")).unwrap();
    assert_eq!(Tensor::pack(&back.entries, Format::csr()).unwrap(), tensor);
    // Skew symmetry: (3, 1) = 5 mirrors (1, 3) = -5, but i32::MIN has no
    // negation to mirror it.
    let skew = MtxHeader {
        symmetry: MtxSymmetry::SkewSymmetric,
        ..symmetric.clone()
    };
    let pair = |v: i32| {
        let mut list = CoordinateList::new(&[3, 3]);
        list.push(&[2, 0], v).unwrap();
        list.push(&[0, 2], v.wrapping_neg()).unwrap();
        Tensor::pack(&list, Format::csr()).unwrap()
    };
    assert_eq!(skew.fitted(&pair(5)).symmetry, MtxSymmetry::SkewSymmetric);
    assert_eq!(skew.fitted(&pair(i32::MIN)).symmetry, MtxSymmetry::General);
    let mut written = Vec::new();
    write_mtx_to_with(&mut written, &pair(i32::MIN + 1), &skew).unwrap();
    let back = parse_mtx_as::<i32>(&written, Path::new("skew.mtx")).unwrap();
    assert_eq!(Tensor::pack(&back.entries, Format::csr()).unwrap(), pair(i32::MIN + 1));
    // A pattern only when every value is 1.
    let ones = tensor.map_values(|v| i32::from(v != 0));
    let pattern = MtxHeader {
        field: MtxField::Pattern,
        ..MtxHeader::default()
    };
    assert_eq!(pattern.fitted(&ones).field, MtxField::Pattern);
    assert_eq!(pattern.fitted(&tensor).field, MtxField::Integer);
}

#[test]
fn integer_tensors_round_trip_through_tns_files_with_their_shape() {
    let mut list = CoordinateList::new(&[4, 5, 6]);
    for (k, &v) in BIG.iter().enumerate() {
        let k = k as u64;
        list.push(&[k % 4, k % 5, k], v).unwrap();
    }
    let tensor = Tensor::pack(&list, Format::csf(3)).unwrap();
    let file = TempFile::new("big.tns");
    write_tns(file.path(), &tensor).unwrap();
    let read = read_tns_as::<i64>(file.path()).unwrap();
    assert_eq!(read.shape(), &[4, 5, 6]);
    assert_eq!(Tensor::pack(&read, Format::csf(3)).unwrap(), tensor);
    let narrow = tensor.map_values(|v| v.clamp(i32::MIN.into(), i32::MAX.into()) as i32);
    let mut written = Vec::new();
    write_tns_to(&mut written, &narrow).unwrap();
    let back = parse_tns_as::<i32>(&written, Path::new("n.tns"), Some(&[4, 5, 6])).unwrap();
    assert_eq!(Tensor::pack(&back, Format::csf(3)).unwrap(), narrow);
    let scalar = Tensor::from_dense(&[], vec![i64::MIN]).unwrap();
    let file = TempFile::new("scalar.tns");
    write_tns(file.path(), &scalar).unwrap();
    assert_eq!(std::fs::read_to_string(file.path()).unwrap(), "-9223372036854775808\n");
    assert_eq!(read_tns_as::<i64>(file.path()).unwrap().values(), &[i64::MIN]);
}
