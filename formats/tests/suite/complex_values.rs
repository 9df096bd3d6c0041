//! Matrix Market and FROSTT files read into and written from `c64`
//! ([`Complex64`]) tensors: the `complex` field (general, symmetric,
//! skew-symmetric and hermitian, coordinate and array), real files read
//! with imaginary parts 0, complex files refused as any other type with a
//! message naming c64, malformed values named by file, line and part, and
//! round trips that keep every bit; FROSTT files with two numbers a value.

use crate::common::*;
use std::path::Path;

use tessera_formats::io::{
    mtx_field, parse_mtx, parse_mtx_as, parse_tns_as, read_mtx_as, read_tns, read_tns_as, tns_is_complex, write_mtx,
    write_mtx_to_with, write_mtx_with, write_tns, MtxField, MtxHeader, MtxLayout, MtxSymmetry,
};
use tessera_formats::{Complex64, CoordinateList, Format, Result, Tensor};

fn z(re: f64, im: f64) -> Complex64 {
    Complex64::new(re, im)
}

fn parse(text: &str) -> Result<tessera_formats::io::MtxFile<Complex64>> {
    parse_mtx_as::<Complex64>(text.as_bytes(), Path::new("z.mtx"))
}

#[test]
fn a_complex_general_file_reads_real_and_imaginary_parts() {
    // Plain lines, a CRLF line, tabs, exponents, a comment among the
    // entries: the fast path and the slow one read the same.
    let text = "%%MatrixMarket matrix coordinate complex general\n\
                % from a test\n\
                2 3 4\n\
                1 1 1.5 -2\n\
                2 3\t0 1e-300\r\n\
                % between entries\n\
                1 2 -inf nan\n\
                2 1   +3   4.25  \n";
    let file = parse(text).unwrap();
    assert_eq!(
        (file.layout, file.field, file.symmetry),
        (MtxLayout::Coordinate, MtxField::Complex, MtxSymmetry::General)
    );
    assert_eq!(file.comments, vec![" from a test".to_string()]);
    let read = triples(&file.entries);
    assert_eq!(read.len(), 4);
    assert_eq!(read[0], (0, 0, z(1.5, -2.0)));
    assert_eq!(read[1], (1, 2, z(0.0, 1e-300)));
    assert_eq!((read[2].0, read[2].1, read[2].2.re), (0, 1, f64::NEG_INFINITY));
    assert!(read[2].2.im.is_nan());
    assert_eq!(read[3], (1, 0, z(3.0, 4.25)));
    assert_eq!(file.header().field, MtxField::Complex);
}

#[test]
fn a_complex_array_file_reads_two_numbers_a_line_column_by_column() {
    let text = "%%MatrixMarket matrix array complex general\n2 2\n1 0\n0 0\n0 -1\n2 2\n";
    let file = parse(text).unwrap();
    // The zero (0, 0i) is dropped; the others in column order.
    assert_eq!(
        triples(&file.entries),
        vec![(0, 0, z(1.0, 0.0)), (0, 1, z(0.0, -1.0)), (1, 1, z(2.0, 2.0))]
    );
}

#[test]
fn a_hermitian_file_mirrors_each_entry_as_its_conjugate() {
    let text = "%%MatrixMarket matrix coordinate complex hermitian\n3 3 3\n1 1 4 0\n3 1 1 2\n3 2 0 -1\n";
    let file = parse(text).unwrap();
    assert_eq!(file.symmetry, MtxSymmetry::Hermitian);
    assert_eq!(
        triples(&file.entries),
        vec![
            (0, 0, z(4.0, 0.0)),
            (2, 0, z(1.0, 2.0)),
            (0, 2, z(1.0, -2.0)),
            (2, 1, z(0.0, -1.0)),
            (1, 2, z(0.0, 1.0)),
        ]
    );
    // The array layout stores the lower triangle, column by column.
    let array = "%%MatrixMarket matrix array complex hermitian\n2 2\n1 0\n5 -3\n2 0\n";
    assert_eq!(
        triples(&parse(array).unwrap().entries),
        vec![
            (0, 0, z(1.0, 0.0)),
            (1, 0, z(5.0, -3.0)),
            (0, 1, z(5.0, 3.0)),
            (1, 1, z(2.0, 0.0))
        ]
    );
    // Symmetric and skew-symmetric complex files mirror as real ones do.
    let symmetric = "%%MatrixMarket matrix coordinate complex symmetric\n2 2 1\n2 1 1 2\n";
    assert_eq!(
        triples(&parse(symmetric).unwrap().entries),
        vec![(1, 0, z(1.0, 2.0)), (0, 1, z(1.0, 2.0))]
    );
    let skew = symmetric.replace("symmetric", "skew-symmetric");
    assert_eq!(
        triples(&parse(&skew).unwrap().entries),
        vec![(1, 0, z(1.0, 2.0)), (0, 1, z(-1.0, -2.0))]
    );
}

#[test]
fn real_integer_and_pattern_files_read_as_c64_have_imaginary_parts_zero() {
    let real = "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 2.5\n";
    assert_eq!(
        triples(&parse(real).unwrap().entries),
        vec![(1, 0, z(2.5, 0.0)), (0, 1, z(-2.5, 0.0))]
    );
    let integer = "%%MatrixMarket matrix array integer general\n1 2\n7\n-3\n";
    assert_eq!(
        triples(&parse(integer).unwrap().entries),
        vec![(0, 0, z(7.0, 0.0)), (0, 1, z(-3.0, 0.0))]
    );
    let pattern = "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 1\n2 1\n";
    assert_eq!(
        triples(&parse(pattern).unwrap().entries),
        vec![(1, 0, z(1.0, 0.0)), (0, 1, z(1.0, 0.0))]
    );
    // The integer field still takes integers only.
    assert_parse_error(
        parse("%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 2.5\n"),
        "z.mtx",
        3,
        "expected an integer value (the field is `integer`), found `2.5`",
    );
}

#[test]
fn a_complex_file_read_as_another_type_is_refused_naming_c64() {
    let text = "%%MatrixMarket matrix coordinate complex hermitian\n2 2 1\n2 1 1 2\n";
    assert_parse_error(
        parse_mtx(text.as_bytes(), Path::new("h.mtx")),
        "h.mtx",
        1,
        "the `complex` field holds complex values, which tessera reads as c64 (`-t NAME:c64` on the command line), not as f64",
    );
    assert_parse_error(
        parse_mtx_as::<i64>(text.as_bytes(), Path::new("h.mtx")),
        "h.mtx",
        1,
        "reads as c64 (`-t NAME:c64` on the command line), not as i64",
    );
    assert_parse_error(
        parse_mtx_as::<i32>(text.as_bytes(), Path::new("h.mtx")),
        "h.mtx",
        1,
        "not as i32",
    );
    // Hermitian is for complex values only, whatever they are read as.
    assert_parse_error(
        parse("%%MatrixMarket matrix coordinate pattern hermitian\n1 1 1\n1 1\n"),
        "z.mtx",
        1,
        "`hermitian` symmetry needs the `complex` field, the banner says `pattern`",
    );
}

#[test]
fn malformed_complex_values_name_the_line_and_the_part() {
    let banner = "%%MatrixMarket matrix coordinate complex general\n2 2 1\n";
    assert_parse_error(
        parse(&format!("{banner}1 1 1.5\n")),
        "z.mtx",
        3,
        "expected 4 tokens `row column real imaginary`, found 3",
    );
    assert_parse_error(
        parse(&format!("{banner}1 1 x 2\n")),
        "z.mtx",
        3,
        "expected the real part of a complex value, a number, found `x`",
    );
    assert_parse_error(
        parse(&format!("{banner}1 1 2 2i\n")),
        "z.mtx",
        3,
        "expected the imaginary part of a complex value, a number, found `2i`",
    );
    assert_parse_error(
        parse("%%MatrixMarket matrix array complex general\n1 1\n3\n"),
        "z.mtx",
        3,
        "expected 2 tokens `real imaginary` (array files hold one value per line), found 1",
    );
}

/// A 3 x 3 hermitian matrix, real on the diagonal.
fn hermitian() -> Tensor<Complex64> {
    let values = vec![
        z(2.0, 0.0),
        z(1.0, 1.0),
        z(0.0, 0.0),
        z(1.0, -1.0),
        z(-0.5, 0.0),
        z(0.0, 3e-300),
        z(0.0, 0.0),
        z(0.0, -3e-300),
        z(7.0, 0.0),
    ];
    Tensor::from_dense(&[3, 3], values).unwrap()
}

#[test]
fn c64_tensors_are_written_complex_and_read_back_bit_for_bit() {
    // (A `-0` part is kept by sparse formats; `to_dense_vec` adds each
    // value to 0, as for `f64`: tns_files_... checks `-0` through CSF.)
    let odd = [
        z(0.1, -0.5),
        z(1e-300, f64::MAX),
        z(-f64::MIN_POSITIVE, 1.0 / 3.0),
        z(f64::INFINITY, -2.5),
    ];
    let mut entries = CoordinateList::new(&[2, 3]);
    for (k, &v) in odd.iter().enumerate() {
        entries.push(&[k as u64 % 2, k as u64 / 2], v).unwrap();
    }
    for format in [Format::csr(), Format::coo(2), Format::dense(2)] {
        let t = Tensor::pack(&entries, format.clone()).unwrap();
        let file = TempFile::new("round.mtx");
        write_mtx(file.path(), &t).unwrap();
        let read = read_mtx_as::<Complex64>(file.path()).unwrap();
        assert_eq!(read.field, MtxField::Complex, "{format}");
        let back = Tensor::pack(&read.entries, format.clone()).unwrap();
        let bits = |t: &Tensor<Complex64>| -> Vec<(u64, u64)> {
            t.values().iter().map(|v| (v.re.to_bits(), v.im.to_bits())).collect()
        };
        assert_eq!(bits(&back), bits(&t), "{format}");
    }
    let mut text = Vec::new();
    write_mtx_to_with(
        &mut text,
        &Tensor::pack(&entries, Format::csr()).unwrap(),
        &MtxHeader::default(),
    )
    .unwrap_err();
    let header = MtxHeader {
        field: MtxField::Complex,
        ..MtxHeader::default()
    };
    write_mtx_to_with(&mut text, &Tensor::pack(&entries, Format::csr()).unwrap(), &header).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert_eq!(
        text,
        "%%MatrixMarket matrix coordinate complex general\n2 3 4\n1 1 0.1 -0.5\n\
         1 2 -2.2250738585072014e-308 0.3333333333333333\n2 1 1e-300 1.7976931348623157e308\n2 2 inf -2.5\n"
    );
}

#[test]
fn a_hermitian_header_writes_the_lower_triangle_and_reads_back_the_same() {
    let h = hermitian();
    let asked = MtxHeader {
        field: MtxField::Complex,
        symmetry: MtxSymmetry::Hermitian,
        comments: vec!["hermitian test".into()],
    };
    assert_eq!(asked.fitted(&h), asked);
    for format in [Format::dense(2), Format::csr()] {
        let t = h.convert(&format).unwrap();
        let mut text = Vec::new();
        write_mtx_to_with(&mut text, &t, &asked).unwrap();
        let file = parse_mtx_as::<Complex64>(&text, Path::new("h.mtx")).unwrap();
        assert_eq!(file.symmetry, MtxSymmetry::Hermitian, "{format}");
        assert_eq!(Tensor::pack(&file.entries, format.clone()).unwrap(), t, "{format}");
    }
    let written = {
        let mut text = Vec::new();
        write_mtx_to_with(&mut text, &h.convert(&Format::csr()).unwrap(), &asked).unwrap();
        String::from_utf8(text).unwrap()
    };
    assert_eq!(
        written,
        "%%MatrixMarket matrix coordinate complex hermitian\n%hermitian test\n3 3 5\n\
         1 1 2 0\n2 1 1 -1\n2 2 -0.5 0\n3 2 0 -3e-300\n3 3 7 0\n"
    );
}

#[test]
fn headers_fit_complex_data_and_refuse_what_it_does_not_allow() {
    let h = hermitian();
    let header = |field, symmetry| MtxHeader {
        field,
        symmetry,
        comments: Vec::new(),
    };
    // c64 values are complex whatever the header says; symmetric complex
    // data that is hermitian is not symmetric.
    let fitted = header(MtxField::Pattern, MtxSymmetry::Symmetric).fitted(&h);
    assert_eq!(
        (fitted.field, fitted.symmetry),
        (MtxField::Complex, MtxSymmetry::General)
    );
    // A diagonal value that is not real is not hermitian.
    let mut skewed = h.to_dense_vec().unwrap();
    skewed[4] = z(-0.5, 1.0);
    let skewed = Tensor::from_dense(&[3, 3], skewed).unwrap();
    let fitted = header(MtxField::Complex, MtxSymmetry::Hermitian).fitted(&skewed);
    assert_eq!(fitted.symmetry, MtxSymmetry::General);
    let err = write_mtx_to_with(
        &mut Vec::new(),
        &skewed,
        &header(MtxField::Complex, MtxSymmetry::Hermitian),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("the data is not hermitian"), "{err}");
    let err = write_mtx_to_with(&mut Vec::new(), &h, &header(MtxField::Real, MtxSymmetry::General))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("complex values are written in the `complex` field"),
        "{err}"
    );
    // Real values never take the complex field; hermitian real data is symmetric.
    let real = Tensor::from_dense(&[2, 2], vec![1.0, 2.0, 2.0, 3.0]).unwrap();
    let fitted = header(MtxField::Complex, MtxSymmetry::Hermitian).fitted(&real);
    assert_eq!(
        (fitted.field, fitted.symmetry),
        (MtxField::Real, MtxSymmetry::Symmetric)
    );
    let err = write_mtx_to_with(&mut Vec::new(), &real, &header(MtxField::Complex, MtxSymmetry::General))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("the `complex` field needs complex values, not f64"),
        "{err}"
    );
    let err = write_mtx_to_with(&mut Vec::new(), &real, &header(MtxField::Real, MtxSymmetry::Hermitian))
        .unwrap_err()
        .to_string();
    assert!(err.contains("the data is not hermitian"), "{err}");
}

#[test]
fn the_banner_tells_a_complex_file_before_it_is_read() {
    let file = TempFile::new("h.mtx.gz");
    let header = MtxHeader {
        field: MtxField::Complex,
        symmetry: MtxSymmetry::Hermitian,
        comments: Vec::new(),
    };
    write_mtx_with(file.path(), &hermitian(), &header).unwrap();
    assert_eq!(mtx_field(file.path()).unwrap(), MtxField::Complex);
    let real = TempFile::new("x.mtx");
    write_mtx(real.path(), &Tensor::from_dense(&[1], vec![2.0]).unwrap()).unwrap();
    assert_eq!(mtx_field(real.path()).unwrap(), MtxField::Real);
    let bad = TempFile::new("bad.mtx");
    std::fs::write(bad.path(), "1 2 3\n").unwrap();
    assert!(mtx_field(bad.path())
        .unwrap_err()
        .to_string()
        .contains("expected the banner"));
}

/// An order-3 complex tensor with values whose bits must survive.
fn order_3() -> Tensor<Complex64> {
    let mut entries = CoordinateList::new(&[2, 3, 4]);
    entries.push(&[0, 1, 3], z(0.1, -2.0)).unwrap();
    entries.push(&[1, 0, 0], z(-0.0, 1e-300)).unwrap();
    entries.push(&[1, 2, 1], z(5.0, 0.0)).unwrap();
    Tensor::pack(&entries, Format::csf(3)).unwrap()
}

#[test]
fn tns_files_hold_a_complex_value_as_two_numbers_and_read_back_the_same() {
    let t = order_3();
    let file = TempFile::new("z.tns");
    write_tns(file.path(), &t).unwrap();
    assert_eq!(
        std::fs::read_to_string(file.path()).unwrap(),
        "1 2 4 0.1 -2\n2 1 1 -0 1e-300\n2 3 2 5 0\n"
    );
    assert!(tns_is_complex(file.path()).unwrap());
    let back = read_tns_as::<Complex64>(file.path()).unwrap();
    assert_eq!(back.shape(), &[2, 3, 4]);
    assert_eq!(Tensor::pack(&back, Format::csf(3)).unwrap(), t);
    // Without the sidecar, read as c64, two numbers a value all the same.
    let text = std::fs::read(file.path()).unwrap();
    let list = parse_tns_as::<Complex64>(&text, Path::new("z.tns"), None).unwrap();
    assert_eq!(list.values(), back.values());
    // A scalar is its two numbers.
    let scalar = TempFile::new("s.tns");
    write_tns(scalar.path(), &Tensor::from_dense(&[], vec![z(1.5, -1.0)]).unwrap()).unwrap();
    assert_eq!(std::fs::read_to_string(scalar.path()).unwrap(), "1.5 -1\n");
    assert_eq!(
        read_tns_as::<Complex64>(scalar.path()).unwrap().values(),
        &[z(1.5, -1.0)]
    );
}

#[test]
fn a_real_tns_file_of_known_shape_reads_as_c64_and_a_complex_one_refuses_f64() {
    let real = TempFile::new("x.tns");
    write_tns(real.path(), &Tensor::from_dense(&[3], vec![1.0, 0.0, -2.5]).unwrap()).unwrap();
    assert!(!tns_is_complex(real.path()).unwrap());
    let list = read_tns_as::<Complex64>(real.path()).unwrap();
    assert_eq!(
        (list.shape(), list.values()),
        (&[3][..], &[z(1.0, 0.0), z(-2.5, 0.0)][..])
    );
    let complex = TempFile::new("z.tns");
    write_tns(complex.path(), &order_3()).unwrap();
    let name = complex.path().display().to_string();
    assert_parse_error(
        read_tns(complex.path()),
        &name,
        1,
        "expected 4 tokens (3 coordinates, as the shape [2, 3, 4] has, and a value), found 5 \
         (two numbers after the coordinates are a complex value, read as c64)",
    );
    // A line whose value tokens differ from the first line's.
    assert_parse_error(
        parse_tns_as::<Complex64>(b"1 1 2 3\n2 1 4\n", Path::new("t.tns"), None),
        "t.tns",
        2,
        "expected 4 tokens (2 coordinates and a complex value, two numbers, as on line 1), found 3",
    );
    assert_parse_error(
        parse_tns_as::<Complex64>(b"1 1 2 3\n2 1 4 x\n", Path::new("t.tns"), None),
        "t.tns",
        2,
        "expected the imaginary part of a complex value, a number, found `x`",
    );
    assert_parse_error(
        parse_tns_as::<Complex64>(b"1 2 3\n", Path::new("t.tns"), Some(&[1, 2, 3])),
        "t.tns",
        1,
        "expected 5 or 4 tokens (3 coordinates, as the shape [1, 2, 3] has, and a complex value (two numbers) or a real one), found 3",
    );
}
