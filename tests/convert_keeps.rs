//! `tessera convert` keeps what a Matrix Market file says about itself: its
//! comment lines (provenance), its field (pattern, integer, real) and its
//! symmetry (symmetric, skew-symmetric, general), as far as the data allows;
//! `--general` expands to `real general` as before.

use std::fs;
use std::path::{Path, PathBuf};

use tessera::formats::io::{read_mtx, MtxField, MtxSymmetry};

mod common;
use common::tessera;

/// A fresh directory for one test.
fn scratch(test: &str) -> PathBuf {
    common::scratch("convert_keeps", test)
}

/// Converts `text` (a `.mtx` file) to another `.mtx` file with `options`;
/// returns the written text.
fn convert(test: &str, text: &str, options: &[&str]) -> String {
    let dir = scratch(test);
    let input = dir.join("in.mtx");
    let output = dir.join("out.mtx");
    fs::write(&input, text).unwrap();
    tessera()
        .arg("convert")
        .arg(&input)
        .arg(&output)
        .args(options)
        .assert()
        .success();
    fs::read_to_string(&output).unwrap()
}

/// Every entry of a file as read (symmetric storage expanded), sorted.
fn entries_of(text: &str) -> Vec<(Vec<u64>, f64)> {
    let file = tessera::formats::io::parse_mtx(text.as_bytes(), Path::new("text.mtx")).unwrap();
    let mut list = file.entries;
    list.canonicalize();
    list.iter().map(|(c, v)| (c.to_vec(), v)).collect()
}

/// [[4, 1, 0], [1, 5, -2], [0, -2, 6]], its lower triangle by rows.
const SYMMETRIC: &str = "%%MatrixMarket matrix coordinate real symmetric\n\
% made by hand for tessera's tests\n\
%   second comment line, indented\n\
3 3 5\n\
1 1 4.5\n\
2 1 1\n\
2 2 5\n\
3 2 -2\n\
3 3 6\n";

#[test]
fn a_symmetric_file_round_trips_as_its_lower_triangle_with_its_comments() {
    let written = convert("symmetric", SYMMETRIC, &[]);
    assert_eq!(written, SYMMETRIC);
}

#[test]
fn a_symmetric_file_stored_by_columns_is_written_by_rows_with_the_same_entries() {
    // [[4.5, 1, 8], [1, 5, -2], [8, -2, 0]], its lower triangle listed
    // column by column, as SuiteSparse files are.
    let by_columns = "%%MatrixMarket matrix coordinate real symmetric\n\
% by columns\n\
3 3 5\n\
1 1 4.5\n\
2 1 1\n\
3 1 8\n\
2 2 5\n\
3 2 -2\n";
    let by_rows = "%%MatrixMarket matrix coordinate real symmetric\n\
% by columns\n\
3 3 5\n\
1 1 4.5\n\
2 1 1\n\
2 2 5\n\
3 1 8\n\
3 2 -2\n";
    let written = convert("symmetric_columns", by_columns, &[]);
    assert_eq!(written, by_rows);
    assert_eq!(entries_of(&written), entries_of(by_columns));
}

#[test]
fn a_skew_symmetric_file_round_trips() {
    let skew = "%%MatrixMarket matrix coordinate real skew-symmetric\n\
% A = -A^T, strict lower triangle\n\
4 4 3\n\
2 1 1.5\n\
3 1 -2\n\
4 3 7\n";
    assert_eq!(convert("skew", skew, &[]), skew);
    let expanded = entries_of(skew);
    assert_eq!(expanded.len(), 6);
    assert!(expanded.contains(&(vec![0, 1], -1.5)));
}

#[test]
fn pattern_files_stay_patterns_symmetric_or_general() {
    let symmetric = "%%MatrixMarket matrix coordinate pattern symmetric\n\
% a path graph 1 - 2 - 3, and a loop at 3\n\
3 3 3\n\
2 1\n\
3 2\n\
3 3\n";
    assert_eq!(convert("pattern_symmetric", symmetric, &[]), symmetric);
    let general = "%%MatrixMarket matrix coordinate pattern general\n\
% a directed graph\n\
2 3 3\n\
1 2\n\
1 3\n\
2 1\n";
    assert_eq!(convert("pattern_general", general, &[]), general);
}

#[test]
fn integer_files_stay_integer_with_values_written_without_fractions() {
    let integer = "%%MatrixMarket matrix coordinate integer general\n\
% counts\n\
2 3 4\n\
1 1 3\n\
1 3 -40000000000\n\
2 1 9007199254740992\n\
2 2 1\n";
    assert_eq!(convert("integer", integer, &[]), integer);
}

#[test]
fn a_symmetric_array_file_round_trips_as_its_lower_triangle() {
    let array = "%%MatrixMarket matrix array integer symmetric\n\
% dense, symmetric\n\
3 3\n\
1\n\
2\n\
3\n\
4\n\
5\n\
6\n";
    assert_eq!(convert("array", array, &[]), array);
}

#[test]
fn general_expands_to_real_general_with_both_triangles_and_no_comments() {
    let written = convert("general", SYMMETRIC, &["--general"]);
    assert_eq!(
        written,
        "%%MatrixMarket matrix coordinate real general\n\
3 3 7\n\
1 1 4.5\n\
1 2 1\n\
2 1 1\n\
2 2 5\n\
2 3 -2\n\
3 2 -2\n\
3 3 6\n"
    );
    assert_eq!(entries_of(&written), entries_of(SYMMETRIC));
}

#[test]
fn the_header_is_checked_against_the_data_not_trusted() {
    // A repeated pattern entry sums to 2: no longer a pattern, still an integer.
    let repeated = "%%MatrixMarket matrix coordinate pattern general\n\
% entry (1, 1) twice\n\
2 2 3\n\
1 1\n\
1 1\n\
2 1\n";
    assert_eq!(
        convert("repeated_pattern", repeated, &[]),
        "%%MatrixMarket matrix coordinate integer general\n% entry (1, 1) twice\n2 2 2\n1 1 2\n2 1 1\n"
    );
    // Duplicates that sum to a fraction turn integers into reals; a pair of
    // general entries that happen to mirror each other stays general, as the
    // file said (the header is never raised).
    let halves = "%%MatrixMarket matrix coordinate real general\n\
2 2 4\n\
1 2 0.5\n\
1 2 0.25\n\
2 1 0.75\n\
2 2 3\n";
    assert_eq!(
        convert("halves", halves, &[]),
        "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 2 0.75\n2 1 0.75\n2 2 3\n"
    );
}

#[test]
fn bcsstk16_keeps_its_provenance_symmetry_and_entries() {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/bcsstk16.mtx");
    let Ok(text) = fs::read_to_string(&source) else {
        eprintln!("skipped: {} is not there", source.display());
        return;
    };
    let written = convert("bcsstk16", &text, &[]);
    let original = read_mtx(&source).unwrap();
    let dir = scratch("bcsstk16_read");
    let path = dir.join("out.mtx");
    fs::write(&path, &written).unwrap();
    let read = read_mtx(&path).unwrap();
    assert_eq!((read.field, read.symmetry), (MtxField::Real, MtxSymmetry::Symmetric));
    assert_eq!(read.comments, original.comments);
    assert!(!read.comments.is_empty());
    assert_eq!(read.entries.pruned(), original.entries.pruned());
    // The lower triangle only: as many lines as the original file stores.
    let stored = |t: &str| t.lines().find(|l| !l.starts_with('%')).map(str::to_string);
    assert_eq!(stored(&written), stored(&text));
}
