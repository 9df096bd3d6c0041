//! Matrix Market and FROSTT readers and writers: round trips through files
//! in every format, every field/symmetry/layout combination on small
//! hand-written files, malformed input (the error and the line it names),
//! refusal of absurd headers without allocating, garbage that must not
//! panic, and the real files in `../shared/data`.

use crate::common::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use tessera_formats::io::{
    parse_mtx, parse_tns, parse_tns_with_shape, read_mtx, read_tns, write_mtx, write_mtx_to, write_tns, write_tns_to,
    MtxField, MtxFile, MtxLayout, MtxSymmetry,
};
use tessera_formats::{CoordinateList, Format, FormatError, Result, Tensor};

// ---------------------------------------------------------------------------
// Helpers

/// Records the largest single allocation each thread asks for, so a test
/// can show that a lying header did not make the reader allocate.
struct Tracking;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
}

// SAFETY: every call is forwarded to the system allocator unchanged.
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        System.realloc(ptr, layout, new_size)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static ALLOCATOR: Tracking = Tracking;

/// Runs `f` and returns its result with the largest allocation it made.
fn largest_allocation<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LARGEST.with(|l| l.set(0));
    let out = f();
    (out, LARGEST.with(Cell::get))
}

fn mtx(text: &str) -> Result<MtxFile> {
    parse_mtx(text.as_bytes(), Path::new("test.mtx"))
}

fn tns(text: &str) -> Result<CoordinateList<f64>> {
    parse_tns(text.as_bytes(), Path::new("test.tns"))
}

/// Entries as `((coordinates, 1-based), value)`, in list order.
fn entries(list: &CoordinateList<f64>) -> Vec<(Vec<u64>, f64)> {
    list.iter()
        .map(|(c, v)| (c.iter().map(|&c| c + 1).collect(), v))
        .collect()
}

/// Hand-written expected entries, 1-based.
fn expect(entries: &[(&[u64], f64)]) -> Vec<(Vec<u64>, f64)> {
    entries.iter().map(|(c, v)| (c.to_vec(), *v)).collect()
}

#[track_caller]
fn assert_too_large<T: std::fmt::Debug>(result: Result<T>) {
    match result {
        Err(FormatError::TooLarge(_)) => {}
        other => panic!("expected TooLarge, got {other:?}"),
    }
}

/// Asserts two lists hold the same shape, coordinates and value bits.
#[track_caller]
fn assert_same_bits(got: &CoordinateList<f64>, want: &CoordinateList<f64>, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    assert_eq!(got.len(), want.len(), "{what}: entries");
    for (e, ((gc, gv), (wc, wv))) in got.iter().zip(want.iter()).enumerate() {
        assert_eq!(gc, wc, "{what}: coordinates of entry {e}");
        assert_eq!(gv.to_bits(), wv.to_bits(), "{what}: entry {e}: {gv} vs {wv}");
    }
}

/// A value that needs care to write: full precision, extremes, integers.
fn random_value(rng: &mut SmallRng) -> f64 {
    match rng.random_range(0..9) {
        0 => 1.0 / 3.0,
        1 => 1e-300,
        2 => f64::from(rng.random_range(-1000i32..1000)),
        3 => -1e300,
        4 => 5e-324,
        5 => rng.random::<f64>(),
        6 => rng.random_range(-1e6..1e6),
        7 => 2f64.powi(60) + 2048.0,
        _ => -0.1,
    }
}

/// `nnz` random entries (duplicates possible) of a tensor of `shape`.
fn random_list(seed: u64, shape: &[usize], nnz: usize) -> CoordinateList<f64> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut list = CoordinateList::new(shape);
    if shape.contains(&0) {
        return list;
    }
    for _ in 0..nnz {
        let coords: Vec<u64> = shape.iter().map(|&d| rng.random_range(0..d as u64)).collect();
        let value = random_value(&mut rng);
        list.push(&coords, value).unwrap();
    }
    list
}

fn data(file: &str) -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data")).join(file)
}

// ---------------------------------------------------------------------------
// Round trips

fn matrix_formats(shape: &[usize]) -> Vec<Format> {
    let mut formats = vec![
        Format::csr(),
        Format::csc(),
        Format::dcsr(),
        Format::coo(2),
        Format::coo_ordered(&[1, 0]),
        Format::dense(2),
        Format::dense_ordered(&[1, 0]),
        Format::hash_rows(),
        Format::dia(),
        Format::ell(),
    ];
    if shape.iter().all(|d| d % 2 == 0) {
        formats.push(Format::bcsr(2, 2).unwrap());
    }
    formats
}

#[test]
fn mtx_round_trips_random_matrices_in_every_format_bit_for_bit() {
    let shapes: [&[usize]; 6] = [&[1, 1], &[7, 5], &[6, 8], &[30, 40], &[3, 4], &[0, 0]];
    for (seed, shape) in shapes.iter().enumerate() {
        let nnz = shape.iter().product::<usize>() / 3 + 1;
        let list = random_list(seed as u64, shape, nnz);
        for format in matrix_formats(shape) {
            let what = format!("{shape:?} in {format}");
            let tensor = Tensor::pack(&list, format.clone()).unwrap();
            let file = TempFile::new("round-trip.mtx");
            write_mtx(file.path(), &tensor).unwrap();
            let read = read_mtx(file.path()).unwrap_or_else(|e| panic!("{what}: {e}"));
            let layout = if format.is_dense() {
                MtxLayout::Array
            } else {
                MtxLayout::Coordinate
            };
            assert_eq!(read.layout, layout, "{what}");
            assert_eq!((read.field, read.symmetry), (MtxField::Real, MtxSymmetry::General));
            assert_same_bits(&read.entries.pruned(), &tensor.to_coordinates(), &what);
        }
    }
}

#[test]
fn mtx_writes_vectors_as_n_by_1_matrices() {
    let list = random_list(11, &[9], 5);
    for format in [Format::sparse_vector(), Format::hash_vector(), Format::dense(1)] {
        let tensor = Tensor::pack(&list, format.clone()).unwrap();
        let mut out = Vec::new();
        write_mtx_to(&mut out, &tensor).unwrap();
        let read = parse_mtx(&out, Path::new("vector.mtx")).unwrap();
        assert_eq!(read.entries.shape(), &[9, 1], "{format}");
        let want = tensor.to_coordinates();
        let got = read.entries.pruned();
        assert_eq!(got.len(), want.len(), "{format}");
        for ((gc, gv), (wc, wv)) in got.iter().zip(want.iter()) {
            assert_eq!(gc, &[wc[0], 0][..], "{format}");
            assert_eq!(gv.to_bits(), wv.to_bits(), "{format}");
        }
    }
}

#[test]
fn mtx_writes_integers_plainly_and_specials_as_words() {
    let mut list = CoordinateList::new(&[2, 3]);
    for (c, v) in [
        ([0, 0], 3.0),
        ([0, 1], f64::NAN),
        ([0, 2], f64::INFINITY),
        ([1, 0], f64::NEG_INFINITY),
        ([1, 1], 1e-300),
        ([1, 2], 0.1),
    ] {
        list.push(&c, v).unwrap();
    }
    let tensor = Tensor::pack(&list, Format::csr()).unwrap();
    let mut out = Vec::new();
    write_mtx_to(&mut out, &tensor).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(
        text,
        "%%MatrixMarket matrix coordinate real general\n2 3 6\n\
         1 1 3\n1 2 nan\n1 3 inf\n2 1 -inf\n2 2 1e-300\n2 3 0.1\n"
    );
    let read = mtx(&text).unwrap();
    let values = read.entries.values();
    assert_eq!(values[0], 3.0);
    assert!(values[1].is_nan());
    assert_eq!(&values[2..], &[f64::INFINITY, f64::NEG_INFINITY, 1e-300, 0.1]);

    let dense = Tensor::from_dense(&[2, 2], vec![1.0, 2.0, 0.5, -4.0]).unwrap();
    let mut out = Vec::new();
    write_mtx_to(&mut out, &dense).unwrap();
    let text = String::from_utf8(out).unwrap();
    // Column-major.
    assert_eq!(text, "%%MatrixMarket matrix array real general\n2 2\n1\n0.5\n2\n-4\n");
}

#[test]
fn mtx_round_trips_empty_and_scalar_tensors() {
    let empty = Tensor::<f64>::empty(&[3, 4], Format::csr()).unwrap();
    let mut out = Vec::new();
    write_mtx_to(&mut out, &empty).unwrap();
    assert!(String::from_utf8_lossy(&out).ends_with("\n3 4 0\n"));
    let read = parse_mtx(&out, Path::new("empty.mtx")).unwrap();
    assert_eq!((read.entries.shape(), read.entries.len()), (&[3, 4][..], 0));

    let scalar = Tensor::from_dense(&[], vec![2.5]).unwrap();
    let mut out = Vec::new();
    write_mtx_to(&mut out, &scalar).unwrap();
    let read = parse_mtx(&out, Path::new("scalar.mtx")).unwrap();
    assert_eq!(entries(&read.entries), expect(&[(&[1, 1], 2.5)]));
}

#[test]
fn write_mtx_refuses_tensors_of_order_three() {
    let tensor = Tensor::pack(&random_list(3, &[2, 2, 2], 3), Format::coo(3)).unwrap();
    let file = TempFile::new("order3.mtx");
    match write_mtx(file.path(), &tensor) {
        Err(FormatError::Shape(reason)) => assert!(reason.contains("order 3"), "{reason}"),
        other => panic!("expected a shape error, got {other:?}"),
    }
    assert!(!file.path().exists(), "nothing is written");
}

#[test]
fn write_mtx_names_the_file_it_cannot_create() {
    let tensor = Tensor::<f64>::empty(&[1, 1], Format::csr()).unwrap();
    let path = Path::new("/nonexistent-directory-of-tessera/a.mtx");
    match write_mtx(path, &tensor) {
        Err(FormatError::Io { path: p, .. }) => assert_eq!(p, path),
        other => panic!("expected an I/O error, got {other:?}"),
    }
    match read_mtx(path) {
        Err(e @ FormatError::Io { .. }) => {
            assert!(e.to_string().starts_with(&path.display().to_string()))
        }
        other => panic!("expected an I/O error, got {other:?}"),
    }
}

fn tensor_formats(order: usize, shape: &[usize]) -> Vec<Format> {
    let reversed: Vec<usize> = (0..order).rev().collect();
    let mut formats = vec![
        Format::coo(order),
        Format::csf(order),
        Format::csf_ordered(&reversed),
        Format::coo_ordered(&reversed),
    ];
    if shape.iter().product::<usize>() <= 4096 {
        formats.push(Format::dense(order));
    }
    formats
}

#[test]
fn tns_round_trips_random_tensors_of_orders_1_to_4_with_their_shape() {
    let shapes: [&[usize]; 6] = [&[9], &[1], &[5, 7], &[4, 6, 3], &[3, 5, 2, 4], &[40, 30, 20, 10]];
    for (seed, shape) in shapes.iter().enumerate() {
        let list = random_list(100 + seed as u64, shape, 25);
        for format in tensor_formats(shape.len(), shape) {
            let what = format!("{shape:?} in {format}");
            let tensor = Tensor::pack(&list, format.clone()).unwrap();
            let file = TempFile::new("round-trip.tns");
            write_tns(file.path(), &tensor).unwrap();
            let read = read_tns(file.path()).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_same_bits(&read.pruned(), &tensor.to_coordinates(), &what);
        }
    }
}

#[test]
fn tns_round_trips_empty_tensors_and_scalars() {
    for shape in [&[4usize, 5, 6][..], &[3], &[0, 2]] {
        let tensor = Tensor::<f64>::empty(shape, Format::csf(shape.len())).unwrap();
        let file = TempFile::new("empty.tns");
        write_tns(file.path(), &tensor).unwrap();
        assert_eq!(std::fs::read(file.path()).unwrap(), b"");
        let read = read_tns(file.path()).unwrap();
        assert_eq!((read.shape(), read.len()), (shape, 0));
    }
    for value in [2.5, 0.0, -1e-300] {
        let scalar = Tensor::from_dense(&[], vec![value]).unwrap();
        let file = TempFile::new("scalar.tns");
        write_tns(file.path(), &scalar).unwrap();
        let read = read_tns(file.path()).unwrap();
        assert_eq!(read.shape(), &[] as &[usize]);
        assert_eq!(read.values().len(), 1);
        assert_eq!(read.values()[0].to_bits(), value.to_bits());
    }
}

#[test]
fn tns_writer_prints_one_line_per_nonzero_and_the_sidecar_the_shape() {
    let mut list = CoordinateList::new(&[3, 4, 5]);
    list.push(&[2, 0, 4], 1.0 / 3.0).unwrap();
    list.push(&[0, 3, 0], -2.0).unwrap();
    list.push(&[1, 1, 1], 0.0).unwrap();
    let tensor = Tensor::pack(&list, Format::coo(3)).unwrap();
    let mut out = Vec::new();
    write_tns_to(&mut out, &tensor).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), "1 4 1 -2\n3 1 5 0.3333333333333333\n");
    let file = TempFile::new("sidecar.tns");
    write_tns(file.path(), &tensor).unwrap();
    let dims = std::fs::read_to_string(file.path().with_extension("dims")).unwrap();
    assert_eq!(dims, "3 4 5\n2\n");
    // Without the sidecar the shape is the largest coordinates.
    let bare = parse_tns(&std::fs::read(file.path()).unwrap(), file.path()).unwrap();
    assert_eq!(bare.shape(), &[3, 4, 5]);
}

#[test]
fn write_tns_refuses_a_name_that_is_its_own_sidecar() {
    let tensor = Tensor::<f64>::empty(&[2], Format::sparse_vector()).unwrap();
    let file = TempFile::new("shape.dims");
    assert!(matches!(write_tns(file.path(), &tensor), Err(FormatError::Io { .. })));
}

// ---------------------------------------------------------------------------
// Every layout, field and symmetry

#[test]
fn coordinate_real_general_allows_comments_blank_lines_crlf_and_any_case() {
    let text = "%%matrixmarket MATRIX Coordinate REAL General\r\n\
                % a comment\r\n\
                \r\n\
                3 4 3\r\n\
                1 1 1.5\r\n\
                % between entries\r\n\
                \r\n\
                3\t4   -2e3\r\n\
                \x20 2 1 .25 \r\n";
    let file = mtx(text).unwrap();
    assert_eq!(
        (file.layout, file.field, file.symmetry),
        (MtxLayout::Coordinate, MtxField::Real, MtxSymmetry::General)
    );
    assert_eq!(file.entries.shape(), &[3, 4]);
    assert_eq!(
        entries(&file.entries),
        expect(&[(&[1, 1], 1.5), (&[3, 4], -2000.0), (&[2, 1], 0.25)])
    );
}

#[test]
fn coordinate_integer_and_pattern_general() {
    let file = mtx("%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 2 -7\n2 1 +3\n").unwrap();
    assert_eq!(file.field, MtxField::Integer);
    assert_eq!(entries(&file.entries), expect(&[(&[1, 2], -7.0), (&[2, 1], 3.0)]));
    let file = mtx("%%MatrixMarket matrix coordinate pattern general\n2 3 2\n1 3\n2 2\n").unwrap();
    assert_eq!(file.field, MtxField::Pattern);
    assert_eq!(entries(&file.entries), expect(&[(&[1, 3], 1.0), (&[2, 2], 1.0)]));
}

#[test]
fn coordinate_symmetric_mirrors_off_diagonal_entries_once() {
    let text = "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 4\n3 1 -1.5\n3 2 2\n";
    let file = mtx(text).unwrap();
    assert_eq!(file.symmetry, MtxSymmetry::Symmetric);
    assert_eq!(
        entries(&file.entries),
        expect(&[
            (&[1, 1], 4.0),
            (&[3, 1], -1.5),
            (&[1, 3], -1.5),
            (&[3, 2], 2.0),
            (&[2, 3], 2.0)
        ])
    );
    let file = mtx("%%MatrixMarket matrix coordinate integer symmetric\n2 2 2\n2 2 5\n2 1 6\n").unwrap();
    assert_eq!(
        entries(&file.entries),
        expect(&[(&[2, 2], 5.0), (&[2, 1], 6.0), (&[1, 2], 6.0)])
    );
    let file = mtx("%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n").unwrap();
    assert_eq!(
        entries(&file.entries),
        expect(&[(&[1, 1], 1.0), (&[2, 1], 1.0), (&[1, 2], 1.0)])
    );
}

#[test]
fn coordinate_skew_symmetric_mirrors_with_negated_values() {
    let file = mtx("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 0.5\n3 2 -4\n").unwrap();
    assert_eq!(file.symmetry, MtxSymmetry::SkewSymmetric);
    assert_eq!(
        entries(&file.entries),
        expect(&[(&[2, 1], 0.5), (&[1, 2], -0.5), (&[3, 2], -4.0), (&[2, 3], 4.0)])
    );
    let file = mtx("%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 3\n").unwrap();
    assert_eq!(entries(&file.entries), expect(&[(&[2, 1], 3.0), (&[1, 2], -3.0)]));
}

#[test]
fn array_general_is_column_major_and_drops_zeros() {
    let text = "%%MatrixMarket matrix array real general\n% comment\n2 3\n1\n0\n2.5\n-3\n0\n6\n";
    let file = mtx(text).unwrap();
    assert_eq!(file.layout, MtxLayout::Array);
    assert_eq!(file.entries.shape(), &[2, 3]);
    assert_eq!(
        entries(&file.entries),
        expect(&[(&[1, 1], 1.0), (&[1, 2], 2.5), (&[2, 2], -3.0), (&[2, 3], 6.0)])
    );
    let file = mtx("%%MatrixMarket matrix array integer general\n1 2\n7\n-8\n").unwrap();
    assert_eq!(entries(&file.entries), expect(&[(&[1, 1], 7.0), (&[1, 2], -8.0)]));
}

#[test]
fn array_symmetric_stores_the_lower_triangle_column_by_column() {
    // The lower triangle of [[1 2 3] [2 4 5] [3 5 6]]: 1 2 3 | 4 5 | 6.
    let file = mtx("%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n").unwrap();
    assert_eq!(
        entries(&file.entries),
        expect(&[
            (&[1, 1], 1.0),
            (&[2, 1], 2.0),
            (&[1, 2], 2.0),
            (&[3, 1], 3.0),
            (&[1, 3], 3.0),
            (&[2, 2], 4.0),
            (&[3, 2], 5.0),
            (&[2, 3], 5.0),
            (&[3, 3], 6.0)
        ])
    );
    let file = mtx("%%MatrixMarket matrix array integer symmetric\n2 2\n1\n0\n3\n").unwrap();
    assert_eq!(entries(&file.entries), expect(&[(&[1, 1], 1.0), (&[2, 2], 3.0)]));
}

#[test]
fn array_skew_symmetric_stores_the_strict_lower_triangle() {
    // [[0 -1 -2] [1 0 -3] [2 3 0]]: 1 2 | 3.
    let file = mtx("%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n").unwrap();
    assert_eq!(
        entries(&file.entries),
        expect(&[
            (&[2, 1], 1.0),
            (&[1, 2], -1.0),
            (&[3, 1], 2.0),
            (&[1, 3], -2.0),
            (&[3, 2], 3.0),
            (&[2, 3], -3.0)
        ])
    );
    let file = mtx("%%MatrixMarket matrix array integer skew-symmetric\n1 1\n").unwrap();
    assert!(file.entries.is_empty());
}

#[test]
fn lines_off_the_fast_path_read_the_same() {
    // Indices of more than 19 digits (zero-padded here) leave the one-pass
    // reader for the token-by-token one; both must give the same entries.
    let mut rng = SmallRng::seed_from_u64(7);
    let mut plain = String::from("%%MatrixMarket matrix coordinate real symmetric\n50 50 200\n");
    let mut padded = plain.clone();
    let mut tns_plain = String::new();
    let mut tns_padded = String::new();
    let mut off_diagonal = 0;
    for _ in 0..200 {
        let (i, j) = (rng.random_range(1..=50u64), rng.random_range(1..=50u64));
        let (i, j) = (i.max(j), i.min(j));
        off_diagonal += usize::from(i != j);
        let k = rng.random_range(1..=9u64);
        let v = random_value(&mut rng);
        plain += &format!("{i} {j} {v:e}\n");
        padded += &format!("{i:020} {j:020} {v:e}\n");
        tns_plain += &format!("{i} {j} {k} {v:e}\n");
        tns_padded += &format!("{i:020}\t{j} {k:020} {v:e}\n");
    }
    let fast = mtx(&plain).unwrap().entries;
    let slow = mtx(&padded).unwrap().entries;
    assert_eq!(fast.len(), 200 + off_diagonal);
    assert_same_bits(&slow, &fast, "mtx");
    assert_same_bits(&tns(&tns_padded).unwrap(), &tns(&tns_plain).unwrap(), "tns");
}

// ---------------------------------------------------------------------------
// Malformed Matrix Market input

const REAL: &str = "%%MatrixMarket matrix coordinate real general\n";

#[test]
fn bad_banners_are_refused_on_line_1() {
    assert_parse_error(mtx(""), "test.mtx", 1, "found an empty file");
    assert_parse_error(mtx("3 3 1\n1 1 1\n"), "test.mtx", 1, "expected the banner");
    assert_parse_error(
        mtx("%%MatrixMarket matrix coordinate reel general\n1 1 0\n"),
        "test.mtx",
        1,
        "found the field `reel`",
    );
    assert_parse_error(
        mtx("%%MatrixMarket vector coordinate real general\n1 1 0\n"),
        "test.mtx",
        1,
        "only `matrix` files",
    );
    assert_parse_error(
        mtx("%%MatrixMarket matrix coordinate real\n1 1 0\n"),
        "test.mtx",
        1,
        "found no symmetry",
    );
    assert_parse_error(
        mtx("%%MatrixMarket matrix array pattern general\n1 1\n"),
        "test.mtx",
        1,
        "`pattern` field needs the `coordinate` layout",
    );
    assert_parse_error(
        mtx("%%MatrixMarket matrix coordinate pattern skew-symmetric\n2 2 1\n2 1\n"),
        "test.mtx",
        1,
        "`pattern` field cannot be skew-symmetric",
    );
}

#[test]
fn complex_files_read_as_real_values_are_refused_naming_c64() {
    // Read as c64 they are read: formats/tests/suite/complex_values.rs.
    assert_parse_error(
        mtx("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 2\n"),
        "test.mtx",
        1,
        "the `complex` field holds complex values, which tessera reads as c64 (`-t NAME:c64` on the command line), not as f64",
    );
    assert_parse_error(
        mtx("%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n"),
        "test.mtx",
        1,
        "`hermitian` symmetry needs the `complex` field, the banner says `real`",
    );
}

#[test]
fn a_missing_or_malformed_size_line_is_refused() {
    let text = format!("{REAL}% only comments\n\n");
    assert_parse_error(
        mtx(&text),
        "test.mtx",
        4,
        "expected the size line `rows columns entries`",
    );
    let text = format!("{REAL}% c\n3 3\n");
    assert_parse_error(mtx(&text), "test.mtx", 3, "found `3 3`");
    let text = format!("{REAL}3 x 1\n");
    assert_parse_error(mtx(&text), "test.mtx", 2, "3 non-negative integers");
    let text = "%%MatrixMarket matrix array real general\n2 2 4\n";
    assert_parse_error(mtx(text), "test.mtx", 2, "expected the size line `rows columns`");
    let text = "%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n";
    assert_parse_error(mtx(text), "test.mtx", 2, "must be square");
}

#[test]
fn indices_outside_1_to_the_size_are_refused() {
    let text = format!("{REAL}3 4 2\n1 1 1\n0 2 1\n");
    assert_parse_error(mtx(&text), "test.mtx", 4, "expected a row index from 1 to 3, found `0`");
    let text = format!("{REAL}3 4 2\n1 1 1\n-1 2 1\n");
    assert_parse_error(mtx(&text), "test.mtx", 4, "found `-1`");
    let text = format!("{REAL}3 4 2\n% c\n4 1 1\n");
    assert_parse_error(mtx(&text), "test.mtx", 4, "expected a row index from 1 to 3, found `4`");
    let text = format!("{REAL}3 4 1\n1 5 1\n");
    assert_parse_error(
        mtx(&text),
        "test.mtx",
        3,
        "expected a column index from 1 to 4, found `5`",
    );
    let text = format!("{REAL}3 4 1\n1 99999999999999999999999 1\n");
    assert_parse_error(mtx(&text), "test.mtx", 3, "column index");
    let text = format!("{REAL}0 0 1\n1 1 1\n");
    assert_parse_error(mtx(&text), "test.mtx", 3, "the matrix has no rows");
}

#[test]
fn entry_counts_must_match_the_size_line() {
    let text = format!("{REAL}3 3 3\n1 1 1\n2 2 2\n% trailing comment\n");
    assert_parse_error(
        mtx(&text),
        "test.mtx",
        6,
        "expected 3 entries, as the size line (line 2) says, but the file ends after 2",
    );
    let text = format!("{REAL}3 3 1\n1 1 1\n\n2 2 2\n");
    assert_parse_error(
        mtx(&text),
        "test.mtx",
        5,
        "expected 1 entry, as the size line (line 2) says, but found more",
    );
    let text = "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n";
    assert_parse_error(mtx(text), "test.mtx", 6, "expected 4 entries");
    let text = "%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n4\n";
    assert_parse_error(mtx(text), "test.mtx", 6, "but found more");
    // Trailing comments and blank lines after the last entry are fine.
    mtx(&format!("{REAL}1 1 1\n1 1 1\n\n% end\n\n")).unwrap();
}

#[test]
fn tokens_must_be_numbers_and_as_many_as_the_field_needs() {
    let text = format!("{REAL}2 2 2\n1 1 1\n2 2 abc\n");
    assert_parse_error(mtx(&text), "test.mtx", 4, "expected a real value, found `abc`");
    let text = "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n";
    assert_parse_error(mtx(text), "test.mtx", 3, "expected an integer value");
    let text = format!("{REAL}2 2 2\n1 1 1\n2 2\n");
    assert_parse_error(
        mtx(&text),
        "test.mtx",
        4,
        "expected 3 tokens `row column value`, found 2",
    );
    let text = format!("{REAL}2 2 1\n1\n");
    assert_parse_error(mtx(&text), "test.mtx", 3, "found 1");
    let text = format!("{REAL}2 2 1\n1 1 1 1\n");
    assert_parse_error(mtx(&text), "test.mtx", 3, "found 4");
    let text = "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 1\n";
    assert_parse_error(mtx(text), "test.mtx", 3, "expected 2 tokens `row column`, found 3");
    let text = "%%MatrixMarket matrix array real general\n1 2\n1\n2 3\n";
    assert_parse_error(mtx(text), "test.mtx", 4, "expected 1 token `value`");
    let text = "%%MatrixMarket matrix array real general\n1 1\nx\n";
    assert_parse_error(mtx(text), "test.mtx", 3, "expected a real value, found `x`");
}

#[test]
fn a_skew_symmetric_diagonal_entry_is_refused() {
    let text = "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n2 2 1\n";
    assert_parse_error(mtx(text), "test.mtx", 4, "entry (2, 2) is on the diagonal");
}

#[test]
fn absurd_headers_are_refused_quickly_without_allocating() {
    let absurd = [
        // More entries than tessera holds.
        format!("{REAL}1000000000 1000000000 100000000000\n1 1 1\n"),
        // Dimensions whose product overflows.
        format!("{REAL}10000000000 10000000000 1\n1 1 1\n"),
        format!("{REAL}99999999999999999999999 1 1\n1 1 1\n"),
        // A dense array beyond MAX_POSITIONS.
        "%%MatrixMarket matrix array real general\n100000 100000\n1\n".to_string(),
        "%%MatrixMarket matrix array real symmetric\n4000000000 4000000000\n1\n".to_string(),
    ];
    for text in &absurd {
        let start = Instant::now();
        let (result, largest) = largest_allocation(|| mtx(text));
        assert_too_large(result);
        assert!(largest < 1 << 16, "allocated {largest} bytes for {text:?}");
        assert!(start.elapsed() < Duration::from_secs(1));
    }
}

#[test]
fn a_lying_header_cannot_force_a_large_allocation() {
    // 4 billion entries promised, 3 given: room is reserved for what the
    // file's length could hold, and the shortfall is reported.
    let text = format!("{REAL}1000000 1000000 4000000000\n1 1 1\n2 2 2\n3 3 3\n");
    let (result, largest) = largest_allocation(|| mtx(&text));
    assert_parse_error(result, "test.mtx", 6, "expected 4000000000 entries");
    assert!(largest < 1 << 16, "allocated {largest} bytes");
    let text = "%%MatrixMarket matrix array real general\n40000 40000\n1\n";
    let (result, largest) = largest_allocation(|| mtx(text));
    assert_parse_error(result, "test.mtx", 4, "expected 1600000000 entries");
    assert!(largest < 1 << 16, "allocated {largest} bytes");
}

// ---------------------------------------------------------------------------
// FROSTT input

#[test]
fn tns_reads_any_order_with_comments_and_blank_lines() {
    let list = tns("# a comment\n\n1 2 3 4 1.5\n  # another\n2 1 1 1 -2\n\n").unwrap();
    assert_eq!(list.shape(), &[2, 2, 3, 4]);
    assert_eq!(entries(&list), expect(&[(&[1, 2, 3, 4], 1.5), (&[2, 1, 1, 1], -2.0)]));
    let list = tns("5 1e-3\n2 7\n").unwrap();
    assert_eq!(list.shape(), &[5]);
    assert_eq!(entries(&list), expect(&[(&[5], 1e-3), (&[2], 7.0)]));
    let list = tns("3.5\n").unwrap();
    assert_eq!(list.shape(), &[] as &[usize]);
    assert_eq!(list.values(), &[3.5]);
    let list = parse_tns_with_shape(b"1 2 0.5\n", Path::new("t.tns"), Some(&[4, 4])).unwrap();
    assert_eq!(list.shape(), &[4, 4]);
}

#[test]
fn tns_lines_must_agree_on_the_order() {
    assert_parse_error(
        tns("# c\n1 1 1 1.0\n1 1 2.0\n"),
        "test.tns",
        3,
        "expected 4 tokens (3 coordinates and a value, as on line 2), found 3",
    );
    assert_parse_error(tns("1 1 1\n\n1 1 1 1\n"), "test.tns", 3, "found 4");
    assert_parse_error(
        parse_tns_with_shape(b"1 1 1\n", Path::new("test.tns"), Some(&[2, 2, 2])),
        "test.tns",
        1,
        "expected 4 tokens (3 coordinates, as the shape [2, 2, 2] has, and a value), found 3",
    );
}

#[test]
fn tns_coordinates_are_1_based_and_within_a_given_shape() {
    assert_parse_error(
        tns("1 1 1\n1 0 1\n"),
        "test.tns",
        2,
        "expected the mode-1 coordinate, a positive integer (coordinates are 1-based), found `0`",
    );
    assert_parse_error(tns("-1 1 1\n"), "test.tns", 1, "found `-1`");
    assert_parse_error(
        parse_tns_with_shape(b"1 1 1\n2 3 1\n", Path::new("test.tns"), Some(&[2, 2])),
        "test.tns",
        2,
        "the mode-1 coordinate 3 is beyond the mode's size 2",
    );
    assert_parse_error(tns("1 99999999999999999999999 1\n"), "test.tns", 1, "is too large");
    assert_parse_error(tns("1 1 x\n"), "test.tns", 1, "expected a real value");
}

#[test]
fn an_empty_tns_needs_a_shape() {
    assert_parse_error(tns(""), "test.tns", 1, "found the end of the file");
    assert_parse_error(tns("# c\n\n"), "test.tns", 3, "the order is unknown");
    let list = parse_tns_with_shape(b"# c\n", Path::new("t.tns"), Some(&[2, 3])).unwrap();
    assert_eq!((list.shape(), list.len()), (&[2, 3][..], 0));
}

#[test]
fn read_tns_checks_the_sidecar() {
    let file = TempFile::new("sidecar-check.tns");
    std::fs::write(file.path(), "1 1 1\n2 2 1\n").unwrap();
    let dims = file.path().with_extension("dims");
    std::fs::write(&dims, "4 5\n").unwrap();
    assert_eq!(read_tns(file.path()).unwrap().shape(), &[4, 5]);
    std::fs::write(&dims, "4 5\n3\nsome description\n").unwrap();
    let dims_name = dims.display().to_string();
    assert_parse_error(read_tns(file.path()), &dims_name, 2, "expected 3 entries");
    std::fs::write(&dims, "1 5\n").unwrap();
    let name = file.path().display().to_string();
    assert_parse_error(read_tns(file.path()), &name, 2, "beyond the mode's size 1");
    std::fs::write(&dims, "4 x\n").unwrap();
    assert_parse_error(read_tns(file.path()), &dims_name, 1, "found `x`");
}

// ---------------------------------------------------------------------------
// Garbage never panics

#[test]
fn random_bytes_never_panic_the_readers() {
    let headers: [&[u8]; 5] = [
        b"",
        b"%%MatrixMarket matrix coordinate real general\n5 5 20\n",
        b"%%MatrixMarket matrix coordinate pattern skew-symmetric\n5 5 20\n",
        b"%%MatrixMarket matrix array integer symmetric\n5 5\n",
        b"%%MatrixMarket matrix coordinate integer symmetric\n5 5 3\n",
    ];
    let alphabet = b"0123456789 \n\t\r%#.-+eE";
    for seed in 0..300u64 {
        let mut rng = SmallRng::seed_from_u64(seed);
        let header = headers[seed as usize % headers.len()];
        let mut bytes = header.to_vec();
        let len = rng.random_range(0..600);
        for _ in 0..len {
            // Half the inputs are raw bytes, half are number-like text that
            // gets further into the parsers.
            bytes.push(if seed % 2 == 0 {
                rng.random()
            } else {
                alphabet[rng.random_range(0..alphabet.len())]
            });
        }
        let _ = parse_mtx(&bytes, Path::new("garbage.mtx"));
        let _ = parse_tns(&bytes, Path::new("garbage.tns"));
        let _ = parse_tns_with_shape(&bytes, Path::new("garbage.tns"), Some(&[3, 3]));
    }
}

#[test]
fn mutated_valid_files_never_panic_the_readers() {
    let valid: [&[u8]; 3] = [
        b"%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 4\n3 1 -1.5\n3 2 2\n",
        b"%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n",
        b"1 2 3 4 1.5\n2 1 1 1 -2\n",
    ];
    for seed in 0..500u64 {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut bytes = valid[seed as usize % valid.len()].to_vec();
        for _ in 0..rng.random_range(1..4) {
            let at = rng.random_range(0..bytes.len());
            match rng.random_range(0..3) {
                0 => bytes[at] = rng.random(),
                1 => {
                    bytes.remove(at);
                }
                _ => bytes.insert(at, b"0123456789 \n-"[rng.random_range(0..13)]),
            }
        }
        let _ = parse_mtx(&bytes, Path::new("mutated.mtx"));
        let _ = parse_tns(&bytes, Path::new("mutated.tns"));
    }
}

// ---------------------------------------------------------------------------
// The real files in ../shared/data (see the README there)

#[test]
fn reads_bcsstk16_symmetric_expanded() {
    let file = read_mtx(data("bcsstk16.mtx")).unwrap();
    assert_eq!((file.field, file.symmetry), (MtxField::Real, MtxSymmetry::Symmetric));
    assert_eq!(file.entries.shape(), &[4884, 4884]);
    assert_eq!(file.entries.len(), 290_378);
    let a = Tensor::pack(&file.entries, Format::csr()).unwrap();
    assert_eq!(a.stored(), 290_378, "no entry is stored twice");
    let t = a.permute(&[1, 0], &Format::csr()).unwrap();
    assert_eq!(t.to_coordinates(), a.to_coordinates(), "A = Aᵀ");
}

#[test]
fn reads_cage10_real_general() {
    let file = read_mtx(data("trilinos-zoltan_cage10.mtx")).unwrap();
    assert_eq!((file.field, file.symmetry), (MtxField::Real, MtxSymmetry::General));
    assert_eq!(file.entries.shape(), &[11397, 11397]);
    assert_eq!(file.entries.len(), 150_645);
    assert_eq!(file.entries.coords(0), &[0, 0]);
    assert_eq!(file.entries.value(0), 0.9);
}

#[test]
fn reads_groebner_integer_rectangular() {
    let file = read_mtx(data("Groebner_id2003_aug.mtx")).unwrap();
    assert_eq!(file.field, MtxField::Integer);
    assert_eq!(file.entries.shape(), &[4967, 2456]);
    assert_eq!(file.entries.len(), 173_670);
    assert_eq!(file.entries.value(1), 35242.0);
}

#[test]
fn reads_4elt_pattern() {
    let file = read_mtx(data("4elt.mtx")).unwrap();
    assert_eq!(file.field, MtxField::Pattern);
    assert_eq!(file.entries.shape(), &[15606, 15606]);
    assert_eq!(file.entries.len(), 91_756);
    assert!(file.entries.values().iter().all(|&v| v == 1.0));
}

#[test]
fn reads_wordnet_with_its_dims_sidecar() {
    let list = read_tns(data("wordnet_sense.tns")).unwrap();
    assert_eq!(list.shape(), &[147306, 117659, 59]);
    assert_eq!(list.len(), 206_941);
    assert_eq!(list.coords(0), &[0, 46826, 0]);
    let bytes = std::fs::read(data("wordnet_sense.tns")).unwrap();
    let bare = parse_tns(&bytes, Path::new("wordnet_sense.tns")).unwrap();
    assert_eq!(bare.len(), 206_941);
    assert!(bare.shape().iter().zip(list.shape()).all(|(b, s)| b <= s));
}

/// A file large enough to be read on several threads (over 4 MB of
/// entries) gives the entries a one-thread read gives (the same file with a
/// comment after its entries, which the threaded read leaves to one
/// thread), and a malformed entry deep inside it is still named by its
/// line.
#[test]
fn large_files_read_on_threads_match_one_thread_and_name_bad_lines() {
    let n = 400_000usize;
    let mut body = String::with_capacity(n * 24);
    for k in 0..n {
        body.push_str(&format!(
            "{} {} {}\n",
            k % 997 + 1,
            k % 1009 + 1,
            (k as f64) * 0.25 - 3.0
        ));
    }
    assert!(body.len() > 4 << 20, "the body is past the threaded read's size");
    let head = format!("{REAL}997 1009 {n}\n");
    let threaded = mtx(&format!("{head}{body}")).unwrap().entries;
    let one_thread = mtx(&format!("{head}{body}% the end\n")).unwrap().entries;
    assert_eq!(threaded.len(), n);
    assert_eq!(triples(&threaded), triples(&one_thread));
    // Line 3 holds the first entry; entry k is on line k + 3.
    let bad = 345_678;
    let lines: Vec<&str> = body.lines().collect();
    let mut broken = lines.clone();
    broken[bad] = "5 5 five";
    let text = format!("{head}{}\n", broken.join("\n"));
    assert_parse_error(mtx(&text), "test.mtx", bad + 3, "five");
}
