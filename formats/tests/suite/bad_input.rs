//! Bad input: every raw constructor refuses broken data with the right
//! [`FormatError`] variant and a message naming the level and the fault, and
//! nothing panics or allocates absurdly on the way.
//!
//! The hand-built tensors are the paper's 4 x 6 example matrix (digest §1.6):
//! rows 0: (0,5) (1,1); 1: (0,7) (1,3); 2: empty; 3: (0,8) (3,4) (4,9).

use std::fmt::Debug;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use tessera_formats::levels::range::Range;
use tessera_formats::*;

// ---------------------------------------------------------------- helpers

fn storage(extent: usize, arrays: Vec<IndexArray>, params: &[i64]) -> LevelStorage {
    LevelStorage {
        extent,
        arrays: arrays.into_iter().collect(),
        params: params.iter().copied().collect(),
    }
}

fn u32s(v: &[u32]) -> IndexArray {
    IndexArray::U32(v.to_vec())
}

fn i64s(v: &[i64]) -> IndexArray {
    IndexArray::I64(v.to_vec())
}

const VALUES: [f64; 7] = [5.0, 1.0, 7.0, 3.0, 8.0, 4.0, 9.0];

fn csr_levels(pos: &[u32], idx: &[u32]) -> Vec<LevelStorage> {
    vec![storage(4, vec![], &[]), storage(6, vec![u32s(pos), u32s(idx)], &[])]
}

fn csr(pos: &[u32], idx: &[u32]) -> Result<Tensor> {
    Tensor::from_parts(&[4, 6], Format::csr(), csr_levels(pos, idx), VALUES.to_vec())
}

fn coo(rows: &[u32], cols: &[u32]) -> Result<Tensor> {
    let levels = vec![
        storage(4, vec![u32s(&[0, rows.len() as u32]), u32s(rows)], &[]),
        storage(6, vec![u32s(cols)], &[]),
    ];
    Tensor::from_parts(&[4, 6], Format::coo(2), levels, vec![1.0; rows.len()])
}

/// DIA of a 4 x 6 matrix with the given offsets: the diagonal level stores
/// each offset shifted by 3 (rows - 1), below one parent.
fn dia_levels(offsets: &[i64]) -> Vec<LevelStorage> {
    let diagonals: Vec<u32> = offsets.iter().map(|o| (o + 3) as u32).collect();
    let pos = u32s(&[0, diagonals.len() as u32]);
    vec![
        storage(9, vec![pos, u32s(&diagonals)], &[]),
        storage(4, vec![], &[]),
        storage(6, vec![], &[]),
    ]
}

fn dia(offsets: &[i64]) -> Result<Tensor> {
    let positions = offsets.len() * 4;
    Tensor::from_parts(&[4, 6], Format::dia(), dia_levels(offsets), vec![0.0; positions])
}

const EMPTY: u32 = 30;

/// A hash-map vector of dimension 30, W = 8 buckets (shift 61). With
/// Fibonacci hashing, 8 and 16 hash to bucket 7, 0 and 5 to bucket 0 and 1
/// to bucket 4, so inserting 8, 16, 0, 5, 1 gives this table (16 wraps
/// around to bucket 0, pushing 0 and 5 along).
const TABLE: [u32; 8] = [16, 0, 5, EMPTY, 1, EMPTY, EMPTY, 8];

fn hash_vector(idx: &[u32], params: &[i64]) -> Result<Tensor> {
    let levels = vec![storage(30, vec![u32s(idx)], params)];
    Tensor::from_parts(&[30], Format::hash_vector(), levels, vec![1.0; idx.len()])
}

#[track_caller]
fn assert_invalid_level<T: Debug>(result: Result<T>, level: usize, kind: &str, fragments: &[&str]) {
    let err = match result {
        Err(err @ FormatError::InvalidLevel { .. }) => err,
        other => panic!("expected InvalidLevel at level {level} ({kind}), got {other:?}"),
    };
    let FormatError::InvalidLevel {
        level: l,
        kind: k,
        reason,
    } = &err
    else {
        unreachable!()
    };
    assert_eq!((*l, *k), (level, kind), "wrong level in {err}");
    for fragment in fragments {
        assert!(
            reason.contains(fragment),
            "message `{err}` does not mention `{fragment}`"
        );
    }
    let message = err.to_string();
    assert!(
        message.contains(&format!("level {level} ({kind})")),
        "message `{message}` does not name the level"
    );
}

#[track_caller]
fn assert_shape_error<T: Debug>(result: Result<T>, fragments: &[&str]) {
    match result {
        Err(FormatError::Shape(reason)) => {
            for fragment in fragments {
                assert!(
                    reason.contains(fragment),
                    "message `{reason}` does not mention `{fragment}`"
                );
            }
        }
        other => panic!("expected a Shape error, got {other:?}"),
    }
}

#[track_caller]
fn assert_bad_format<T: Debug>(result: Result<T>, fragments: &[&str]) {
    match result {
        Err(FormatError::BadFormat { reason, .. }) => {
            for fragment in fragments {
                assert!(
                    reason.contains(fragment),
                    "message `{reason}` does not mention `{fragment}`"
                );
            }
        }
        other => panic!("expected a BadFormat error, got {other:?}"),
    }
}

#[track_caller]
fn assert_too_large<T: Debug>(result: Result<T>) {
    match result {
        Err(FormatError::TooLarge(_)) => {}
        other => panic!("expected TooLarge, got {other:?}"),
    }
}

fn mode(level: LevelFormat, mode: usize) -> FormatLevel {
    FormatLevel {
        level,
        projection: Projection::mode(mode),
    }
}

fn split(level: LevelFormat, mode: usize, split: Split) -> FormatLevel {
    FormatLevel {
        level,
        projection: Projection::Mode { mode, split },
    }
}

// ------------------------------------------------- the baselines are valid

#[test]
fn the_hand_built_baselines_are_accepted() {
    let a = csr(&[0, 2, 4, 4, 7], &[0, 1, 0, 1, 0, 3, 4]).unwrap();
    let b = coo(&[0, 0, 1, 1, 3, 3, 3], &[0, 1, 0, 1, 0, 3, 4]).unwrap();
    let d = dia(&[-3, -1, 0, 1]).unwrap();
    let h = hash_vector(&TABLE, &[8, 61]).unwrap();
    assert_eq!(a.to_coordinates().len(), 7);
    assert_eq!(b.to_coordinates().len(), 7);
    assert_eq!(d.stored(), 16);
    assert_eq!(h.stored(), 8);
}

// ------------------------------------------------------------- compressed

#[test]
fn compressed_with_one_array_is_rejected() {
    let mut levels = csr_levels(&[0, 2, 4, 4, 7], &[0, 1, 0, 1, 0, 3, 4]);
    levels[1].arrays.truncate(1);
    let r = Tensor::from_parts(&[4, 6], Format::csr(), levels, VALUES.to_vec());
    assert_invalid_level(r, 1, "compressed", &["expected arrays pos and idx, found 1"]);
}

#[test]
fn compressed_with_three_arrays_is_rejected() {
    let mut levels = csr_levels(&[0, 2, 4, 4, 7], &[0, 1, 0, 1, 0, 3, 4]);
    levels[1].arrays.push(u32s(&[]));
    let r = Tensor::from_parts(&[4, 6], Format::csr(), levels, VALUES.to_vec());
    assert_invalid_level(r, 1, "compressed", &["found 3 arrays"]);
}

#[test]
fn compressed_pos_of_wrong_length_is_rejected() {
    let r = csr(&[0, 2, 4, 7], &[0, 1, 0, 1, 0, 3, 4]);
    assert_invalid_level(r, 1, "compressed", &["pos has 4 entries", "= 5"]);
}

#[test]
fn compressed_pos_not_starting_at_zero_is_rejected() {
    let r = csr(&[1, 2, 4, 4, 7], &[0, 1, 0, 1, 0, 3, 4]);
    assert_invalid_level(r, 1, "compressed", &["pos[0] is 1, expected 0"]);
}

#[test]
fn compressed_pos_not_monotone_is_rejected() {
    let r = csr(&[0, 2, 4, 3, 7], &[0, 1, 0, 1, 0, 3, 4]);
    assert_invalid_level(r, 1, "compressed", &["not monotone", "pos[2] = 4 > pos[3] = 3"]);
}

#[test]
fn compressed_pos_end_not_matching_idx_length_is_rejected() {
    let r = csr(&[0, 2, 4, 4, 6], &[0, 1, 0, 1, 0, 3, 4]);
    assert_invalid_level(r, 1, "compressed", &["pos[4] = 6 but idx has 7 entries"]);
}

#[test]
fn compressed_pos_beyond_i64_is_rejected_without_panicking() {
    let mut levels = csr_levels(&[0, 2, 4, 4, 7], &[0, 1, 0, 1, 0, 3, 4]);
    levels[1].arrays[0] = IndexArray::U64(vec![0, 2, u64::MAX, 4, 7]);
    let r = Tensor::from_parts(&[4, 6], Format::csr(), levels, VALUES.to_vec());
    assert_invalid_level(r, 1, "compressed", &["not monotone"]);
}

#[test]
fn compressed_coordinate_at_the_extent_is_rejected() {
    let r = csr(&[0, 2, 4, 4, 7], &[0, 1, 0, 1, 0, 3, 6]);
    assert_invalid_level(r, 1, "compressed", &["idx[6] = 6 is outside 0..6"]);
}

#[test]
fn compressed_negative_coordinate_is_rejected() {
    let mut levels = csr_levels(&[0, 2, 4, 4, 7], &[0, 1, 0, 1, 0, 3, 4]);
    levels[1].arrays[1] = i64s(&[0, 1, 0, -1, 0, 3, 4]);
    let r = Tensor::from_parts(&[4, 6], Format::csr(), levels, VALUES.to_vec());
    assert_invalid_level(r, 1, "compressed", &["idx[3] = -1 is outside 0..6"]);
}

#[test]
fn compressed_unsorted_siblings_in_an_ordered_level_are_rejected() {
    let r = csr(&[0, 2, 4, 4, 7], &[0, 1, 0, 1, 0, 4, 3]);
    assert_invalid_level(
        r,
        1,
        "compressed",
        &["declared ordered", "idx[5] = 4 is followed by idx[6] = 3"],
    );
}

#[test]
fn compressed_siblings_decreasing_across_parents_are_accepted() {
    // Row 1 starts below where row 0 ended: each parent's siblings are
    // checked on their own.
    let t = csr(&[0, 2, 4, 4, 7], &[4, 5, 0, 1, 0, 3, 4]).unwrap();
    assert_eq!(t.to_coordinates().coords(0), &[0, 4]);
}

#[test]
fn compressed_duplicate_siblings_in_an_ordered_unique_level_are_rejected() {
    let r = csr(&[0, 2, 4, 4, 7], &[0, 1, 0, 1, 3, 3, 4]);
    assert_invalid_level(
        r,
        1,
        "compressed",
        &["declared unique", "idx[4] = 3 is followed by idx[5] = 3"],
    );
}

#[test]
fn compressed_duplicate_siblings_in_an_unordered_unique_level_are_rejected() {
    let f = Format::from_levels(&[LevelFormat::dense(), LevelFormat::compressed().unordered()], &[0, 1]).unwrap();
    let levels = csr_levels(&[0, 2, 4, 4, 7], &[1, 0, 0, 1, 4, 0, 4]);
    let r = Tensor::from_parts(&[4, 6], f, levels, VALUES.to_vec());
    assert_invalid_level(
        r,
        1,
        "compressed",
        &["declared unique", "positions 4..7 repeat a coordinate"],
    );
}

#[test]
fn compressed_unsorted_siblings_in_an_unordered_level_are_accepted() {
    let f = Format::from_levels(&[LevelFormat::dense(), LevelFormat::compressed().unordered()], &[0, 1]).unwrap();
    let levels = csr_levels(&[0, 2, 4, 4, 7], &[1, 0, 0, 1, 4, 0, 3]);
    let t = Tensor::from_parts(&[4, 6], f, levels, VALUES.to_vec()).unwrap();
    assert_eq!(t.to_coordinates().coords(0), &[0, 0]);
    assert_eq!(t.to_coordinates().value(0), 1.0);
}

#[test]
fn compressed_duplicates_in_a_non_unique_level_are_accepted_and_summed() {
    let f = Format::from_levels(&[LevelFormat::dense(), LevelFormat::compressed().non_unique()], &[0, 1]).unwrap();
    let levels = csr_levels(&[0, 2, 4, 4, 7], &[0, 1, 0, 1, 3, 3, 4]);
    let t = Tensor::from_parts(&[4, 6], f, levels, VALUES.to_vec()).unwrap();
    let c = t.to_coordinates();
    assert_eq!(c.len(), 6);
    assert_eq!((c.coords(4), c.value(4)), (&[3u64, 3][..], 12.0));
}

#[test]
fn compressed_declared_full_but_not_full_is_rejected() {
    let full = LevelFormat {
        full: true,
        ..LevelFormat::compressed()
    };
    let f = Format::from_levels(&[LevelFormat::dense(), full], &[0, 1]).unwrap();
    let levels = csr_levels(&[0, 2, 4, 4, 7], &[0, 1, 0, 1, 0, 3, 4]);
    let r = Tensor::from_parts(&[4, 6], f, levels, VALUES.to_vec());
    assert_invalid_level(
        r,
        1,
        "compressed",
        &["declared full", "positions 0..2 hold 2 of 6 coordinates"],
    );
}

#[test]
fn compressed_declared_full_and_full_is_accepted() {
    let full = LevelFormat {
        full: true,
        ..LevelFormat::compressed()
    };
    let f = Format::from_levels(&[LevelFormat::dense(), full], &[0, 1]).unwrap();
    let levels = vec![
        storage(2, vec![], &[]),
        storage(2, vec![u32s(&[0, 2, 4]), u32s(&[0, 1, 0, 1])], &[]),
    ];
    let t = Tensor::from_parts(&[2, 2], f, levels, vec![1.0; 4]).unwrap();
    assert_eq!(t.to_coordinates().len(), 4);
}

// -------------------------------------------------------------- singleton

#[test]
fn singleton_without_its_idx_array_is_rejected() {
    let rows = [0, 0, 1, 1, 3, 3, 3];
    let levels = vec![
        storage(4, vec![u32s(&[0, 7]), u32s(&rows)], &[]),
        storage(6, vec![], &[]),
    ];
    let r = Tensor::from_parts(&[4, 6], Format::coo(2), levels, VALUES.to_vec());
    assert_invalid_level(r, 1, "singleton", &["expected one array idx, found 0"]);
}

#[test]
fn singleton_idx_of_wrong_length_is_rejected() {
    let levels = vec![
        storage(4, vec![u32s(&[0, 7]), u32s(&[0, 0, 1, 1, 3, 3, 3])], &[]),
        storage(6, vec![u32s(&[0, 1, 0, 1, 0, 3])], &[]),
    ];
    let r = Tensor::from_parts(&[4, 6], Format::coo(2), levels, VALUES.to_vec());
    assert_invalid_level(
        r,
        1,
        "singleton",
        &["idx has 6 entries, expected one per parent position (7)"],
    );
}

#[test]
fn singleton_coordinate_at_the_extent_is_rejected() {
    let r = coo(&[0, 0, 1, 1, 3, 3, 3], &[0, 1, 0, 1, 0, 3, 6]);
    assert_invalid_level(r, 1, "singleton", &["idx[6] = 6 is outside 0..6"]);
}

#[test]
fn singleton_as_top_level_is_refused_by_the_format() {
    let r = Format::from_levels(&[LevelFormat::singleton(), LevelFormat::compressed()], &[0, 1]);
    assert_bad_format(r, &["singleton level cannot be the top level"]);
}

// -------------------------------------------------------------------- COO

#[test]
fn coo_with_the_paper_matrix_is_accepted() {
    let t = coo(&[0, 0, 1, 1, 3, 3, 3], &[0, 1, 0, 1, 0, 3, 4]).unwrap();
    assert_eq!(t.to_coordinates().coords(6), &[3, 4]);
}

#[test]
fn coo_with_unsorted_rows_is_rejected() {
    let r = coo(&[0, 0, 1, 3, 1, 3, 3], &[0, 1, 0, 1, 0, 3, 4]);
    assert_invalid_level(
        r,
        0,
        "compressed",
        &["declared ordered", "idx[3] = 3 is followed by idx[4] = 1"],
    );
}

#[test]
fn coo_with_unsorted_chained_columns_is_rejected() {
    let r = coo(&[0, 0, 1, 1, 3, 3, 3], &[0, 1, 0, 1, 3, 0, 4]);
    assert_invalid_level(r, 1, "singleton", &["declared ordered", "[3, 0] follow [3, 3]"]);
}

#[test]
fn coo_with_duplicate_chained_columns_is_rejected() {
    let r = coo(&[0, 0, 1, 1, 3, 3, 3], &[0, 1, 0, 1, 0, 4, 4]);
    assert_invalid_level(r, 1, "singleton", &["declared unique", "[3, 4] follow [3, 4]"]);
}

#[test]
fn coo_with_columns_decreasing_across_different_rows_is_accepted() {
    let t = coo(&[0, 1, 3], &[5, 0, 2]).unwrap();
    assert_eq!(t.to_coordinates().len(), 3);
}

#[test]
fn coo_of_order_three_with_unsorted_middle_chain_is_rejected() {
    let levels = vec![
        storage(2, vec![u32s(&[0, 3]), u32s(&[0, 0, 1])], &[]),
        storage(3, vec![u32s(&[2, 1, 0])], &[]),
        storage(4, vec![u32s(&[0, 0, 0])], &[]),
    ];
    let r = Tensor::from_parts(&[2, 3, 4], Format::coo(3), levels, vec![1.0; 3]);
    assert_invalid_level(r, 1, "singleton", &["declared ordered", "[0, 1] follow [0, 2]"]);
}

#[test]
fn coo_of_order_three_with_duplicate_full_coordinates_is_rejected() {
    let levels = vec![
        storage(2, vec![u32s(&[0, 3]), u32s(&[0, 0, 1])], &[]),
        storage(3, vec![u32s(&[1, 1, 0])], &[]),
        storage(4, vec![u32s(&[3, 3, 0])], &[]),
    ];
    let r = Tensor::from_parts(&[2, 3, 4], Format::coo(3), levels, vec![1.0; 3]);
    assert_invalid_level(r, 2, "singleton", &["declared unique", "[0, 1, 3] follow [0, 1, 3]"]);
}

// ------------------------------------------------------------------ dense

#[test]
fn dense_level_with_an_array_is_rejected() {
    let mut levels = csr_levels(&[0, 2, 4, 4, 7], &[0, 1, 0, 1, 0, 3, 4]);
    levels[0].arrays.push(u32s(&[0]));
    let r = Tensor::from_parts(&[4, 6], Format::csr(), levels, VALUES.to_vec());
    assert_invalid_level(r, 0, "dense", &["stores no arrays"]);
}

#[test]
fn dense_extent_not_matching_the_shape_is_rejected() {
    let mut levels = csr_levels(&[0, 2, 4, 4, 7], &[0, 1, 0, 1, 0, 3, 4]);
    levels[0].extent = 5;
    let r = Tensor::from_parts(&[4, 6], Format::csr(), levels, VALUES.to_vec());
    assert_invalid_level(r, 0, "dense", &["extent is 5, the tensor's shape needs 4"]);
}

#[test]
fn compressed_extent_not_matching_the_shape_is_rejected() {
    let mut levels = csr_levels(&[0, 2, 4, 4, 7], &[0, 1, 0, 1, 0, 3, 4]);
    levels[1].extent = 7;
    let r = Tensor::from_parts(&[4, 6], Format::csr(), levels, VALUES.to_vec());
    assert_invalid_level(r, 1, "compressed", &["extent is 7, the tensor's shape needs 6"]);
}

#[test]
fn csc_extents_follow_the_mode_order() {
    // CSC stores mode 1 (6 columns) first: CSR-shaped extents are wrong.
    let levels = csr_levels(&[0, 2, 4, 4, 7], &[0, 1, 0, 1, 0, 3, 4]);
    let r = Tensor::from_parts(&[4, 6], Format::csc(), levels, VALUES.to_vec());
    assert_invalid_level(r, 0, "dense", &["extent is 4, the tensor's shape needs 6"]);
}

// ------------------------------------------------------------------ range

#[test]
fn range_with_an_array_is_rejected() {
    let mut levels = dia_levels(&[-3, -1, 0, 1]);
    levels[1].arrays.push(i64s(&[-3, -1, 0, 1]));
    let r = Tensor::from_parts(&[4, 6], Format::dia(), levels, vec![0.0; 16]);
    assert_invalid_level(r, 1, "range", &["stores no arrays"]);
}

#[test]
fn diagonal_extent_not_matching_the_shape_is_rejected() {
    let mut levels = dia_levels(&[-3, -1, 0, 1]);
    levels[0].extent = 8;
    let r = Tensor::from_parts(&[4, 6], Format::dia(), levels, vec![0.0; 16]);
    assert_invalid_level(r, 0, "compressed", &["extent is 8, the tensor's shape needs 9"]);
}

#[test]
fn diagonals_not_increasing_are_rejected() {
    let r = dia(&[-3, 0, -1, 1]);
    assert_invalid_level(r, 0, "compressed", &["idx[2] = 2"]);
}

#[test]
fn diagonals_repeated_are_rejected() {
    let r = dia(&[-3, -1, -1, 1]);
    assert_invalid_level(r, 0, "compressed", &["idx[2] = 2"]);
}

#[test]
fn diagonal_right_of_the_matrix_is_rejected() {
    // Offset 6 is diagonal 9 of a 4 x 6 matrix, whose diagonals are 0..9.
    let r = dia(&[-3, -1, 0, 6]);
    assert_invalid_level(r, 0, "compressed", &["idx[3] = 9 is outside 0..9"]);
}

#[test]
fn values_not_one_row_per_diagonal_are_rejected() {
    let r = Tensor::from_parts(&[4, 6], Format::dia(), dia_levels(&[-3, -1, 0, 1]), vec![0.0; 12]);
    assert!(r.is_err(), "{r:?}");
}

#[test]
fn range_offsets_at_the_corners_are_accepted() {
    // -3 holds only (3, 0); 5 holds only (0, 5).
    let t = dia(&[-3, 5]).unwrap();
    assert_eq!(t.stored(), 8);
}

#[test]
fn range_without_an_offset_level_below_is_rejected() {
    let s = storage(4, vec![], &[]);
    let r = Range.validate(&s, 1, 1, None);
    assert_invalid_level(r, 1, "range", &["needs an offset level below"]);
}

#[test]
fn range_without_a_diagonal_parent_is_refused_by_the_format() {
    let r = Format::new(2, vec![mode(LevelFormat::range(), 0), mode(LevelFormat::offset(), 1)]);
    assert_bad_format(r, &["range level needs a diagonal level above it"]);
}

#[test]
fn range_without_an_offset_child_is_refused_by_the_format() {
    let r = Format::new(
        2,
        vec![
            FormatLevel {
                level: LevelFormat::dense(),
                projection: Projection::Diagonal { row: 0, col: 1 },
            },
            mode(LevelFormat::range(), 0),
            mode(LevelFormat::compressed(), 1),
        ],
    );
    assert_bad_format(r, &["an offset level below it"]);
}

#[test]
fn diagonal_level_that_is_neither_dense_nor_compressed_is_refused_by_the_format() {
    let r = Format::new(
        2,
        vec![
            FormatLevel {
                level: LevelFormat::hashed(),
                projection: Projection::Diagonal { row: 0, col: 1 },
            },
            mode(LevelFormat::range(), 0),
            mode(LevelFormat::offset(), 1),
        ],
    );
    assert_bad_format(r, &["diagonal level must be dense or ordered unique compressed"]);
}

#[test]
fn diagonal_of_one_mode_with_itself_is_refused_by_the_format() {
    let r = Format::new(
        2,
        vec![
            FormatLevel {
                level: LevelFormat::dense(),
                projection: Projection::Diagonal { row: 0, col: 0 },
            },
            mode(LevelFormat::range(), 0),
            mode(LevelFormat::offset(), 1),
        ],
    );
    assert_bad_format(r, &["name two distinct modes"]);
}

#[test]
fn diagonal_whose_modes_differ_from_the_range_and_offset_modes_is_refused() {
    // The diagonal level numbers diagonals by col - row of modes (0, 1), but
    // the range level stores mode 1 and the offset level mode 0: the offsets
    // the range level needs run the other way, so no matrix with two
    // diagonals could be packed.
    let r = Format::new(
        2,
        vec![
            FormatLevel {
                level: LevelFormat::dense(),
                projection: Projection::Diagonal { row: 0, col: 1 },
            },
            mode(LevelFormat::range(), 1),
            mode(LevelFormat::offset(), 0),
        ],
    );
    assert_bad_format(r, &["diagonal"]);
}

#[test]
fn diagonal_level_below_another_level_is_refused() {
    // Range levels number their positions by the diagonal's position, which
    // is the diagonal's index only when the diagonal level is the top level.
    let r = Format::new(
        3,
        vec![
            mode(LevelFormat::dense(), 2),
            FormatLevel {
                level: LevelFormat::dense(),
                projection: Projection::Diagonal { row: 0, col: 1 },
            },
            mode(LevelFormat::range(), 0),
            mode(LevelFormat::offset(), 1),
        ],
    );
    assert_bad_format(r, &["top level"]);
}

// ----------------------------------------------------------------- offset

#[test]
fn offset_level_with_an_array_is_rejected() {
    let mut levels = dia_levels(&[-3, -1, 0, 1]);
    levels[2].arrays.push(i64s(&[0]));
    let r = Tensor::from_parts(&[4, 6], Format::dia(), levels, vec![0.0; 16]);
    assert_invalid_level(r, 2, "offset", &["stores no arrays"]);
}

#[test]
fn offset_without_a_range_parent_is_refused_by_the_format() {
    let r = Format::new(2, vec![mode(LevelFormat::dense(), 0), mode(LevelFormat::offset(), 1)]);
    assert_bad_format(r, &["offset level needs a range level above it"]);
}

// ----------------------------------------------------------------- hashed

#[test]
fn hashed_without_its_parameters_is_rejected() {
    let r = hash_vector(&TABLE, &[8]);
    assert_invalid_level(r, 0, "hashed", &["expected array idx and parameters W and shift"]);
}

#[test]
fn hashed_without_its_idx_array_is_rejected() {
    let levels = vec![storage(30, vec![], &[8, 61])];
    let r = Tensor::from_parts(&[30], Format::hash_vector(), levels, vec![1.0; 8]);
    assert_invalid_level(r, 0, "hashed", &["expected array idx"]);
}

#[test]
fn hashed_width_not_a_power_of_two_is_rejected() {
    let r = hash_vector(&[16, 0, 5, EMPTY, 1, EMPTY], &[6, 61]);
    assert_invalid_level(r, 0, "hashed", &["W = 6 is not a power of two"]);
}

#[test]
fn hashed_width_of_one_is_rejected() {
    let r = hash_vector(&[EMPTY], &[1, 64]);
    assert_invalid_level(r, 0, "hashed", &["W = 1 is not a power of two of at least 2"]);
}

#[test]
fn hashed_negative_width_is_rejected() {
    let r = hash_vector(&TABLE, &[-8, 61]);
    assert_invalid_level(r, 0, "hashed", &["W = -8"]);
}

#[test]
fn hashed_wrong_shift_is_rejected() {
    let r = hash_vector(&TABLE, &[8, 60]);
    assert_invalid_level(r, 0, "hashed", &["shift 60 does not match W = 8"]);
}

#[test]
fn hashed_idx_of_wrong_length_is_rejected() {
    let r = hash_vector(&TABLE[..7], &[8, 61]);
    assert_invalid_level(r, 0, "hashed", &["idx has 7 buckets, expected 1 x 8 = 8"]);
}

#[test]
fn hashed_coordinate_beyond_the_empty_marker_is_rejected() {
    let mut table = TABLE;
    table[5] = 31;
    let r = hash_vector(&table, &[8, 61]);
    assert_invalid_level(r, 0, "hashed", &["idx[5] = 31 is outside 0..=30"]);
}

#[test]
fn hashed_coordinate_not_reachable_by_probing_is_rejected() {
    // 0 hashes to bucket 0, which is empty: locate would stop there.
    let mut table = [EMPTY; 8];
    table[1] = 0;
    let r = hash_vector(&table, &[8, 61]);
    assert_invalid_level(r, 0, "hashed", &["coordinate 0 in bucket 1 cannot be found by probing"]);
}

#[test]
fn hashed_coordinate_behind_an_empty_bucket_after_wrapping_is_rejected() {
    // 16 hashes to bucket 7; with bucket 7 empty it cannot sit in bucket 0.
    let mut table = TABLE;
    table[7] = EMPTY;
    let r = hash_vector(&table, &[8, 61]);
    assert_invalid_level(
        r,
        0,
        "hashed",
        &["coordinate 16 in bucket 0 cannot be found by probing"],
    );
}

#[test]
fn hashed_duplicate_coordinate_is_rejected() {
    let mut table = TABLE;
    table[3] = 0;
    let r = hash_vector(&table, &[8, 61]);
    assert_invalid_level(
        r,
        0,
        "hashed",
        &["coordinate 0 is stored twice in the table of parent 0"],
    );
}

#[test]
fn hashed_duplicate_coordinate_that_probing_would_not_pass_is_rejected() {
    // 0 sits in its home bucket and again, behind an empty bucket, where
    // locate never looks.
    let mut table = TABLE;
    table[6] = 0;
    let r = hash_vector(&table, &[8, 61]);
    assert_invalid_level(r, 0, "hashed", &["coordinate 0 in bucket 6 cannot be found by probing"]);
}

#[test]
fn hashed_huge_width_is_checked_against_the_table_without_allocating() {
    let r = hash_vector(&TABLE, &[1 << 62, 2]);
    assert_invalid_level(r, 0, "hashed", &["idx has 8 buckets, expected 1 x 4611686018427387904"]);
    // Below an empty parent level, W = 2^62 buckets per parent is 0 buckets.
    let f = Format::from_levels(&[LevelFormat::compressed(), LevelFormat::hashed()], &[0, 1]).unwrap();
    let levels = vec![
        storage(1, vec![u32s(&[0, 0]), u32s(&[])], &[]),
        storage(30, vec![u32s(&[])], &[1 << 62, 2]),
    ];
    let t = Tensor::<f64>::from_parts(&[1, 30], f, levels, vec![]).unwrap();
    assert!(t.to_coordinates().is_empty());
}

#[test]
fn hashed_table_with_one_long_cluster_is_validated_in_linear_time() {
    // 2^17 - 1 coordinates that all hash to bucket 0 (c * GOLDEN < 2^47),
    // filling buckets 0 .. 2^17 - 1 in probe order: a valid table whose
    // probe distances sum to 2^33.
    let bits = 17;
    let width = 1usize << bits;
    let golden = tessera_formats::levels::hashed::GOLDEN;
    let mut inverse = golden;
    for _ in 0..6 {
        inverse = inverse.wrapping_mul(2u64.wrapping_sub(golden.wrapping_mul(inverse)));
    }
    assert_eq!(golden.wrapping_mul(inverse), 1);
    let extent = 1u64 << 62;
    let mut idx: Vec<u64> = (0u64..)
        .map(|t| t.wrapping_mul(inverse))
        .filter(|&c| c < extent)
        .take(width - 1)
        .collect();
    idx.push(extent);
    assert!(idx[..width - 1]
        .iter()
        .all(|&c| tessera_formats::levels::hashed::bucket(c, 64 - bits) == 0));
    let levels = vec![storage(
        extent as usize,
        vec![IndexArray::U64(idx)],
        &[width as i64, 64 - i64::from(bits)],
    )];
    let t = assert_quick("validation", || {
        Tensor::<f64>::from_parts(&[extent as usize], Format::hash_vector(), levels, vec![1.0; width])
    })
    .unwrap();
    assert_eq!(t.stored(), width);
}

#[test]
fn hashed_segment_without_an_empty_bucket_is_rejected() {
    // W = 2 (shift 63): 0 hashes to bucket 0 and 1 to bucket 1; both are
    // reachable, but a probe for a missing coordinate would never stop.
    let r = hash_vector(&[0, 1], &[2, 63]);
    assert_invalid_level(r, 0, "hashed", &["parent 0 has no empty bucket"]);
}

#[test]
fn hashed_declared_full_but_not_full_is_rejected() {
    let full = LevelFormat {
        full: true,
        ..LevelFormat::hashed()
    };
    let f = Format::from_levels(&[full], &[0]).unwrap();
    let levels = vec![storage(30, vec![u32s(&TABLE)], &[8, 61])];
    let r = Tensor::from_parts(&[30], f, levels, vec![1.0; 8]);
    assert_invalid_level(r, 0, "hashed", &["declared full"]);
}

#[test]
fn hashed_declared_full_and_full_is_accepted() {
    let full = LevelFormat {
        full: true,
        ..LevelFormat::hashed()
    };
    let f = Format::from_levels(&[full], &[0]).unwrap();
    // W = 4 (shift 62): 0 -> bucket 0, 1 -> bucket 2; extent 2, empty = 2.
    let levels = vec![storage(2, vec![u32s(&[0, 2, 1, 2])], &[4, 62])];
    let t = Tensor::from_parts(&[2], f, levels, vec![1.0; 4]).unwrap();
    assert_eq!(t.to_coordinates().len(), 2);
}

#[test]
fn hashed_below_a_non_unique_level_is_refused_by_the_format() {
    let r = Format::from_levels(
        &[LevelFormat::compressed().non_unique(), LevelFormat::hashed()],
        &[0, 1],
    );
    assert_bad_format(r, &["hashed level cannot sit below a non-unique level"]);
}

#[test]
fn dense_level_below_a_non_unique_level_is_refused() {
    let nu = LevelFormat::compressed().non_unique();
    let r = Format::from_levels(&[nu, LevelFormat::dense()], &[0, 1]);
    assert_bad_format(r, &["level 1: a dense level cannot sit below a non-unique level"]);
    // COO of dense fibers: the fiber would repeat below each entry.
    let r = Format::from_levels(
        &[nu, LevelFormat::singleton().non_unique(), LevelFormat::dense()],
        &[0, 1, 2],
    );
    assert_bad_format(r, &["level 2: a dense level cannot sit below a non-unique level"]);
}

#[test]
fn unique_level_above_the_bottom_below_a_non_unique_level_is_refused() {
    // Two entries (0, 1, 0) and (0, 1, 1) get two positions at level 0, so
    // the unique level 1 would hold coordinate 1 twice in one chain.
    let nu = LevelFormat::compressed().non_unique();
    let c = LevelFormat::compressed();
    let r = Format::from_levels(&[nu, c, c], &[0, 1, 2]);
    assert_bad_format(
        r,
        &["level 1: below a non-unique level, only the bottom level may be unique"],
    );
    let r = Format::from_levels(&[nu, LevelFormat::singleton(), c], &[0, 1, 2]);
    assert_bad_format(r, &["level 1: below a non-unique level"]);
}

#[test]
fn chains_of_non_unique_levels_ending_in_a_unique_bottom_level_are_accepted() {
    let nu = LevelFormat::compressed().non_unique();
    let c = LevelFormat::compressed();
    assert!(Format::from_levels(&[nu, nu, c], &[0, 1, 2]).is_ok());
    assert!(Format::from_levels(&[c, nu, LevelFormat::singleton()], &[0, 1, 2]).is_ok());
    assert!(Format::from_levels(&[nu, LevelFormat::singleton().non_unique(), nu], &[0, 1, 2]).is_ok());
    assert_eq!(Format::coo(4).order(), 4);
}

// --------------------------------------------------- shapes, values, levels

#[test]
fn wrong_number_of_values_is_rejected() {
    let levels = csr_levels(&[0, 2, 4, 4, 7], &[0, 1, 0, 1, 0, 3, 4]);
    let r = Tensor::from_parts(&[4, 6], Format::csr(), levels, vec![1.0; 6]);
    assert_shape_error(r, &["6 values for 7 positions"]);
}

#[test]
fn wrong_number_of_levels_is_rejected() {
    let mut levels = csr_levels(&[0, 2, 4, 4, 7], &[0, 1, 0, 1, 0, 3, 4]);
    levels.pop();
    let r = Tensor::from_parts(&[4, 6], Format::csr(), levels, VALUES.to_vec());
    assert_shape_error(r, &["has 2 levels, 1 were given"]);
}

#[test]
fn shape_of_the_wrong_order_is_rejected() {
    let levels = csr_levels(&[0, 2, 4, 4, 7], &[0, 1, 0, 1, 0, 3, 4]);
    let r = Tensor::from_parts(&[4, 6, 1], Format::csr(), levels, VALUES.to_vec());
    assert_shape_error(r, &["order-2", "order 3"]);
    let r = Tensor::pack(&CoordinateList::<f64>::new(&[4]), Format::csr());
    assert_shape_error(r, &["order-2", "order 1"]);
}

#[test]
fn bcsr_with_a_shape_not_divisible_by_the_block_is_rejected() {
    let f = Format::bcsr(2, 3).unwrap();
    let r = Tensor::<f64>::empty(&[5, 6], f.clone());
    assert_shape_error(r, &["splits mode 0 into blocks of 2", "size 5"]);
    let r = Tensor::<f64>::empty(&[4, 7], f.clone());
    assert_shape_error(r, &["splits mode 1 into blocks of 3", "size 7"]);
    let levels = vec![
        storage(3, vec![], &[]),
        storage(2, vec![u32s(&[0, 0, 0, 0]), u32s(&[])], &[]),
        storage(2, vec![], &[]),
        storage(3, vec![], &[]),
    ];
    let r = Tensor::<f64>::from_parts(&[5, 6], f, levels, vec![]);
    assert_shape_error(r, &["splits mode 0 into blocks of 2"]);
}

#[test]
fn bcsr_with_blocks_of_size_zero_is_refused() {
    assert_bad_format(Format::bcsr(0, 2), &["blocks of size 0"]);
    assert_bad_format(Format::bcsr(2, 0), &["blocks of size 0"]);
}

// ------------------------------------------------------------ compositions

#[test]
fn format_storing_a_mode_twice_is_refused() {
    let r = Format::from_levels(&[LevelFormat::dense(), LevelFormat::compressed()], &[0, 0]);
    assert_bad_format(r, &["mode 0 must be stored by exactly one level"]);
}

#[test]
fn format_not_storing_a_mode_is_refused() {
    let r = Format::new(2, vec![mode(LevelFormat::dense(), 0)]);
    assert_bad_format(r, &["mode 1 must be stored by exactly one level"]);
}

#[test]
fn format_with_no_levels_for_a_positive_order_is_refused() {
    assert_bad_format(Format::new(2, vec![]), &["at least one level per mode"]);
}

#[test]
fn format_naming_a_mode_beyond_the_order_is_refused() {
    let r = Format::from_levels(&[LevelFormat::dense(), LevelFormat::compressed()], &[0, 2]);
    assert_bad_format(r, &["level 1 stores mode 2 of an order-2 tensor"]);
}

#[test]
fn format_with_fewer_levels_than_mode_order_entries_is_refused() {
    let r = Format::from_levels(&[LevelFormat::dense()], &[0, 1]);
    assert_bad_format(r, &["mode order of 2 modes was given for 1 levels"]);
}

#[test]
fn format_with_a_level_inside_blocks_but_no_block_level_is_refused() {
    let r = Format::new(
        2,
        vec![
            mode(LevelFormat::dense(), 1),
            split(LevelFormat::dense(), 0, Split::Inner(2)),
        ],
    );
    assert_bad_format(r, &["inside blocks of mode 0 with no block level of size 2 above it"]);
}

#[test]
fn format_with_a_block_level_but_no_level_inside_blocks_is_refused() {
    let r = Format::new(
        2,
        vec![
            split(LevelFormat::dense(), 0, Split::Outer(2)),
            mode(LevelFormat::compressed(), 1),
        ],
    );
    assert_bad_format(r, &["mode 0 must be stored by exactly one level"]);
}

#[test]
fn format_with_mismatched_block_sizes_is_refused() {
    let r = Format::new(
        2,
        vec![
            split(LevelFormat::dense(), 0, Split::Outer(2)),
            mode(LevelFormat::compressed(), 1),
            split(LevelFormat::dense(), 0, Split::Inner(3)),
        ],
    );
    assert_bad_format(r, &["no block level of size 3"]);
}

#[test]
fn format_with_a_mode_both_whole_and_blocked_is_refused() {
    let r = Format::new(
        2,
        vec![
            split(LevelFormat::dense(), 0, Split::Outer(2)),
            mode(LevelFormat::compressed(), 0),
            split(LevelFormat::dense(), 0, Split::Inner(2)),
            mode(LevelFormat::dense(), 1),
        ],
    );
    assert_bad_format(r, &["mode 0 must be stored by exactly one level"]);
}

#[test]
fn slot_level_that_is_not_dense_is_refused() {
    let r = Format::new(
        2,
        vec![
            FormatLevel {
                level: LevelFormat::compressed(),
                projection: Projection::Slot { row: 0 },
            },
            mode(LevelFormat::dense(), 0),
            mode(LevelFormat::singleton(), 1),
        ],
    );
    assert_bad_format(r, &["slot level must be dense"]);
}

// --------------------------------------------------------- coordinate list

#[test]
fn pushing_a_coordinate_out_of_range_is_rejected() {
    let mut list = CoordinateList::new(&[4, 6]);
    list.push(&[3, 5], 1.0).unwrap();
    let e = list.push(&[2, 6], 1.0).unwrap_err();
    assert_eq!(
        e,
        FormatError::CoordinateOutOfRange {
            entry: 1,
            mode: 1,
            coordinate: 6,
            size: 6
        }
    );
    assert!(e
        .to_string()
        .contains("coordinate 6 of entry 1 is out of range for mode 1 of size 6"));
    assert_eq!(list.len(), 1, "a refused entry is not stored");
}

#[test]
fn pushing_into_a_zero_sized_dimension_is_rejected() {
    let mut list = CoordinateList::new(&[4, 0]);
    let e = list.push(&[0, 0], 1.0).unwrap_err();
    assert!(matches!(e, FormatError::CoordinateOutOfRange { mode: 1, size: 0, .. }));
}

#[test]
fn pushing_the_wrong_number_of_coordinates_is_rejected() {
    let mut list = CoordinateList::new(&[4, 6]);
    assert_shape_error(list.push(&[1, 2, 3], 1.0), &["3 coordinates", "order 2"]);
    assert_shape_error(list.push(&[1], 1.0), &["1 coordinates", "order 2"]);
    assert!(list.is_empty());
}

#[test]
fn from_entries_with_mismatched_lengths_is_rejected() {
    let r = CoordinateList::from_entries(&[4, 6], &[vec![0, 0], vec![1, 1]], &[1.0]);
    assert_shape_error(r, &["2 coordinate tuples for 1 values"]);
    let r = CoordinateList::from_entries(&[4, 6], &[vec![0, 0], vec![4, 1]], &[1.0, 2.0]);
    assert!(matches!(
        r,
        Err(FormatError::CoordinateOutOfRange { entry: 1, mode: 0, .. })
    ));
}

#[test]
fn permuting_by_a_non_permutation_is_rejected() {
    let list = CoordinateList::<f64>::new(&[4, 6, 2]);
    for perm in [&[0, 1][..], &[0, 1, 1], &[0, 1, 3], &[0, 1, 2, 3]] {
        assert_shape_error(list.permute(perm), &["is not a permutation of 3 modes"]);
    }
}

// ----------------------------------------------------------- absurd sizes

#[track_caller]
fn assert_quick<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let r = f();
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{what} took {:?}",
        start.elapsed()
    );
    r
}

#[test]
fn empty_dense_tensor_of_absurd_shape_is_refused_quickly() {
    let r = assert_quick("dense", || Tensor::<f64>::empty(&[1 << 40, 1 << 40], Format::dense(2)));
    assert_too_large(r);
}

#[test]
fn empty_tensors_with_an_absurd_dense_level_are_refused_quickly() {
    for f in [Format::csr(), Format::csc(), Format::hash_rows(), Format::dense(1)] {
        let shape: &[usize] = if f.order() == 1 {
            &[1 << 40]
        } else {
            &[1 << 40, 1 << 40]
        };
        let r = assert_quick("empty", || Tensor::<f64>::empty(shape, f.clone()));
        assert_too_large(r);
    }
    let r = assert_quick("bcsr", || {
        Tensor::<f64>::empty(&[1 << 40, 1 << 40], Format::bcsr(1 << 4, 1 << 4).unwrap())
    });
    assert_too_large(r);
}

#[test]
fn empty_sparse_tensors_of_absurd_shape_are_cheap() {
    // No level of these has a position per coordinate of a huge mode when
    // there are no entries.
    for f in [
        Format::coo(2),
        Format::dcsr(),
        Format::csf(2),
        Format::dia(),
        Format::ell(),
    ] {
        let t = assert_quick("empty", || Tensor::<f64>::empty(&[1 << 40, 1 << 40], f.clone()))
            .unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(t.to_coordinates().is_empty());
        assert_eq!(t.stored(), 0);
    }
}

#[test]
fn ell_of_a_huge_matrix_with_entries_is_refused_quickly() {
    let mut list = CoordinateList::new(&[1 << 40, 1 << 40]);
    list.push(&[5, 7], 1.0).unwrap();
    let r = assert_quick("ell", || Tensor::pack(&list, Format::ell()));
    assert_too_large(r);
}

#[test]
fn from_dense_with_huge_shape_is_refused() {
    let r = assert_quick("from_dense", || Tensor::<f64>::from_dense(&[1 << 40, 1 << 40], vec![]));
    assert_too_large(r);
    let r = Tensor::<f64>::from_dense(&[usize::MAX, 2], vec![]);
    assert_too_large(r);
}

#[test]
fn from_dense_with_the_wrong_number_of_values_is_rejected() {
    let r = Tensor::<f64>::from_dense(&[2, 3], vec![1.0; 5]);
    assert_shape_error(r, &["5 values for a tensor of 6 components"]);
}

#[test]
fn to_dense_vec_of_a_hypersparse_matrix_is_refused() {
    let mut list = CoordinateList::new(&[1_000_000, 1_000_000]);
    list.push(&[999_999, 3], 2.0).unwrap();
    let t = Tensor::pack(&list, Format::dcsr()).unwrap();
    assert_too_large(assert_quick("to_dense_vec", || t.to_dense_vec()));
}

#[test]
fn from_parts_with_absurd_dense_extents_is_refused() {
    let levels = vec![LevelStorage::new(1 << 40), LevelStorage::new(1 << 40)];
    let r = Tensor::<f64>::from_parts(&[1 << 40, 1 << 40], Format::dense(2), levels, vec![]);
    assert_too_large(r);
}

#[test]
fn coordinate_list_with_absurd_capacity_is_refused() {
    assert_too_large(CoordinateList::<f64>::with_capacity(&[2], MAX_ENTRIES + 1));
    assert_too_large(CoordinateList::<f64>::with_capacity(&[2; 8], usize::MAX));
}

#[test]
fn coordinate_list_at_the_entry_limit_does_not_reserve_it_all_up_front() {
    // 2^32 entries of order 4 would be 160 GiB; a file header may claim it,
    // but nothing should be reserved before entries arrive. With no memory
    // limit the list starts empty; under one (the machine's by default) the
    // claim is refused at once.
    tessera_formats::budget::set_memory_limit(Some(u64::MAX));
    let list = assert_quick("with_capacity", || {
        CoordinateList::<f64>::with_capacity(&[2, 2, 2, 2], MAX_ENTRIES)
    });
    tessera_formats::budget::set_memory_limit(Some(1 << 30));
    let refused = assert_quick("with_capacity", || {
        CoordinateList::<f64>::with_capacity(&[2, 2, 2, 2], MAX_ENTRIES)
    });
    tessera_formats::budget::set_memory_limit(None);
    assert!(list.unwrap().is_empty());
    assert_too_large(refused);
}

// ------------------------------------------------ no input may panic

/// Formats fuzzed below, with the shape they store.
fn fuzz_targets() -> Vec<(Format, Vec<usize>)> {
    let nu = LevelFormat::compressed().non_unique();
    let c = LevelFormat::compressed();
    vec![
        (Format::dense(2), vec![2, 3]),
        (Format::csr(), vec![3, 4]),
        (Format::dcsc(), vec![3, 4]),
        (Format::coo(2), vec![3, 4]),
        (Format::coo(3), vec![2, 3, 2]),
        (Format::sparse_vector(), vec![5]),
        (Format::hash_vector(), vec![5]),
        (Format::hash_rows(), vec![2, 5]),
        (Format::dia(), vec![3, 4]),
        (Format::ell(), vec![3, 4]),
        (Format::bcsr(2, 2).unwrap(), vec![4, 4]),
        (
            Format::from_levels(&[LevelFormat::hashed(), c], &[0, 1]).unwrap(),
            vec![4, 3],
        ),
        (
            Format::from_levels(&[nu, LevelFormat::singleton()], &[0, 1]).unwrap(),
            vec![3, 3],
        ),
        (
            Format::from_levels(&[LevelFormat::dense(), c.unordered()], &[0, 1]).unwrap(),
            vec![3, 4],
        ),
        (
            Format::from_levels(
                &[
                    LevelFormat::dense(),
                    LevelFormat {
                        full: true,
                        ..LevelFormat::compressed()
                    },
                ],
                &[0, 1],
            )
            .unwrap(),
            vec![2, 2],
        ),
    ]
}

/// What a fuzzed tensor that validation accepted must satisfy.
fn check_accepted(t: &Tensor, shape: &[usize]) {
    for (c, _) in t.stored_entries().iter() {
        assert!(
            c.iter().zip(shape).all(|(&c, &d)| c < d as u64),
            "{c:?} outside {shape:?}"
        );
    }
    for (c, _) in t.to_coordinates().iter() {
        assert!(c.iter().zip(shape).all(|(&c, &d)| c < d as u64));
    }
    let dense = t.to_dense_vec().unwrap();
    assert_eq!(dense.len(), shape.iter().product::<usize>());
    // The accepted tensor re-packs into its own format and means the same.
    let again = Tensor::pack(&t.to_coordinates(), t.format().clone());
    if let Ok(again) = again {
        assert_eq!(again.to_coordinates(), t.to_coordinates());
    }
}

/// Values for `levels` in `format`: as many as the last level has
/// positions when every level validates (so that fuzzed structure, not a
/// value count, decides), else a few.
fn value_count(format: &Format, levels: &[LevelStorage]) -> usize {
    let mut parent = 1usize;
    for (k, s) in levels.iter().enumerate() {
        let next = levels.get(k + 1).map(|l| l.extent);
        match format.level(k).validate(s, parent, k, next) {
            Ok(size) if size <= 10_000 => parent = size,
            _ => return 3,
        }
    }
    parent
}

fn raw_array() -> impl Strategy<Value = IndexArray> {
    prop_oneof![
        // Plausible: small coordinates, or a monotone `pos` from 0.
        prop::collection::vec(0u32..4, 0..8).prop_map(IndexArray::U32),
        prop::collection::vec(0u32..5, 0..6).prop_map(|mut v| {
            v.sort_unstable();
            v.insert(0, 0);
            IndexArray::U32(v)
        }),
        prop::collection::vec(0u32..9, 0..10).prop_map(IndexArray::U32),
        prop::collection::vec(prop_oneof![0u64..9, Just(u64::MAX)], 0..10).prop_map(IndexArray::U64),
        prop::collection::vec(-5i64..9, 0..10).prop_map(IndexArray::I64),
    ]
}

/// Random storage for one level: an extent (else the shape's), arrays (as
/// many as the level kind stores, else a random count) and parameters.
#[derive(Debug, Clone)]
struct RawLevel {
    extent: Option<usize>,
    count: Option<usize>,
    arrays: Vec<IndexArray>,
    params: Vec<i64>,
}

impl RawLevel {
    fn storage(&self, format: &Format, k: usize, shape: &[usize]) -> LevelStorage {
        let level = format.level(k);
        let extent = self.extent.or_else(|| format.level_extent(k, shape)).unwrap_or(2);
        let expected = match level.kind {
            LevelKind::Range => 1,
            _ => level.empty_storage(extent).arrays.len(),
        };
        let count = self.count.unwrap_or(expected).min(self.arrays.len());
        let mut s = storage(extent, self.arrays[..count].to_vec(), &self.params);
        if level.kind == LevelKind::Range && self.count.is_none() {
            // Offsets are signed.
            s.arrays[0] = i64s(&s.arrays[0].to_i64_vec().iter().map(|o| o - 2).collect::<Vec<_>>());
        }
        if level.kind != LevelKind::Hashed && self.count.is_none() {
            s.params.clear();
        }
        s
    }
}

fn raw_level() -> impl Strategy<Value = RawLevel> {
    (
        prop::option::weighted(0.2, 0usize..7),
        prop::option::weighted(0.2, 0usize..4),
        prop::collection::vec(raw_array(), 3),
        prop_oneof![
            // W and its shift, or anything.
            (1u32..4).prop_map(|b| vec![1i64 << b, 64 - i64::from(b)]),
            prop::collection::vec(prop_oneof![1i64..5, 60i64..65, Just(8), Just(-1)], 0..3),
        ],
    )
        .prop_map(|(extent, count, arrays, params)| RawLevel {
            extent,
            count,
            arrays,
            params,
        })
}

/// A mutation of one level of a packed tensor.
#[derive(Debug, Clone)]
enum Mutation {
    Set {
        level: usize,
        array: usize,
        index: usize,
        value: i64,
    },
    Truncate {
        level: usize,
        array: usize,
        len: usize,
    },
    Push {
        level: usize,
        array: usize,
        value: i64,
    },
    Widen {
        level: usize,
        array: usize,
    },
    Param {
        level: usize,
        index: usize,
        value: i64,
    },
    Extent {
        level: usize,
        extent: usize,
    },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let value = prop_oneof![-2i64..12, Just(i64::MAX), Just(i64::MIN)];
    prop_oneof![
        (0usize..4, 0usize..2, 0usize..40, value.clone()).prop_map(|(level, array, index, value)| {
            Mutation::Set {
                level,
                array,
                index,
                value,
            }
        }),
        (0usize..4, 0usize..2, 0usize..10).prop_map(|(level, array, len)| Mutation::Truncate { level, array, len }),
        (0usize..4, 0usize..2, value.clone()).prop_map(|(level, array, value)| Mutation::Push { level, array, value }),
        (0usize..4, 0usize..2).prop_map(|(level, array)| Mutation::Widen { level, array }),
        (0usize..4, 0usize..2, prop_oneof![-1i64..6, 60i64..66]).prop_map(|(level, index, value)| Mutation::Param {
            level,
            index,
            value
        }),
        (0usize..4, 0usize..8).prop_map(|(level, extent)| Mutation::Extent { level, extent }),
    ]
}

fn apply(levels: &mut [LevelStorage], m: &Mutation) {
    let n = levels.len();
    match *m {
        Mutation::Set {
            level,
            array,
            index,
            value,
        } => {
            if let Some(a) = levels[level % n].arrays.get_mut(array) {
                let mut v = a.to_i64_vec();
                if !v.is_empty() {
                    let i = index % v.len();
                    v[i] = value;
                    *a = match a.width() {
                        IndexWidth::I64 => IndexArray::I64(v),
                        _ => IndexArray::U64(v.into_iter().map(|x| x as u64).collect()),
                    };
                }
            }
        }
        Mutation::Truncate { level, array, len } => {
            if let Some(a) = levels[level % n].arrays.get_mut(array) {
                a.truncate(len);
            }
        }
        Mutation::Push { level, array, value } => {
            if let Some(a) = levels[level % n].arrays.get_mut(array) {
                match a {
                    IndexArray::U32(v) => v.push(value as u32),
                    IndexArray::U64(v) => v.push(value as u64),
                    IndexArray::I64(v) => v.push(value),
                }
            }
        }
        Mutation::Widen { level, array } => {
            if let Some(a) = levels[level % n].arrays.get_mut(array) {
                *a = match a.width() {
                    IndexWidth::I64 => IndexArray::U64(a.to_i64_vec().into_iter().map(|x| x as u64).collect()),
                    _ => IndexArray::I64(a.to_i64_vec()),
                };
            }
        }
        Mutation::Param { level, index, value } => {
            if let Some(p) = levels[level % n].params.get_mut(index) {
                *p = value;
            }
        }
        Mutation::Extent { level, extent } => levels[level % n].extent = extent,
    }
}

fn small_entries() -> impl Strategy<Value = Vec<(Vec<u64>, i32)>> {
    prop::collection::vec((prop::collection::vec(0u64..64, 3), -2i32..3), 0..12)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn random_raw_arrays_are_rejected_or_yield_a_tensor_within_its_shape(
        target in 0usize..15,
        raw in prop::collection::vec(raw_level(), 4),
    ) {
        let targets = fuzz_targets();
        let (format, shape) = &targets[target % targets.len()];
        let levels: Vec<LevelStorage> =
            (0..format.levels().len()).map(|k| raw[k].storage(format, k, shape)).collect();
        let values = vec![1.0; value_count(format, &levels)];
        if let Ok(t) = Tensor::from_parts(shape, format.clone(), levels, values) {
            check_accepted(&t, shape);
        }
    }

    #[test]
    fn mutated_packed_tensors_are_rejected_or_yield_a_tensor_within_its_shape(
        target in 0usize..15,
        entries in small_entries(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let targets = fuzz_targets();
        let (format, shape) = &targets[target % targets.len()];
        let mut list = CoordinateList::new(shape);
        for (c, v) in &entries {
            let c: Vec<u64> = c.iter().zip(shape).map(|(&c, &d)| c % d as u64).collect();
            list.push(&c, f64::from(*v)).unwrap();
        }
        // Some targets (full levels, singleton under unique) cannot hold
        // every list; those are refused, not fuzzed.
        let Ok(t) = Tensor::pack(&list, format.clone()) else { return Ok(()) };
        let mut levels = t.levels().to_vec();
        for m in &mutations {
            apply(&mut levels, m);
        }
        let values = vec![1.0; value_count(format, &levels)];
        if let Ok(t) = Tensor::from_parts(shape, format.clone(), levels, values) {
            check_accepted(&t, shape);
        }
    }
}
