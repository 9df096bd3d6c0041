//! Level functions, run through the interpreter's instantiation (the
//! [`Immediate`] builder), on small tensors whose storage is stated by hand:
//! exact positions, coordinates and found flags of the access functions,
//! assembly by the append and insert protocols, and each level's
//! capabilities and properties against Table 1 of the format paper.
//!
//! Most tests use the paper's 4 x 6 example matrix (digest §1.6, §3.1):
//!
//! ```text
//!     5 1 . . . .
//!     7 3 . . . .
//!     . . . . . .
//!     8 . . 4 9 .
//! ```

use tessera_formats::levels::compressed::Compressed;
use tessera_formats::levels::dense::Dense;
use tessera_formats::levels::hashed::{bucket, Hashed, GOLDEN};
use tessera_formats::levels::offset::Offset;
use tessera_formats::levels::range::Range;
use tessera_formats::levels::singleton::Singleton;
use tessera_formats::*;

// ---------------------------------------------------------------- helpers

const PAPER: [(u64, u64, f64); 7] = [
    (0, 0, 5.0),
    (0, 1, 1.0),
    (1, 0, 7.0),
    (1, 1, 3.0),
    (3, 0, 8.0),
    (3, 3, 4.0),
    (3, 4, 9.0),
];

fn paper_list() -> CoordinateList {
    let mut list = CoordinateList::new(&[4, 6]);
    for &(i, j, v) in &PAPER {
        list.push(&[i, j], v).unwrap();
    }
    list
}

fn paper(format: Format) -> Tensor {
    Tensor::pack(&paper_list(), format).unwrap()
}

fn interp(t: &Tensor) -> Immediate<TensorLevels<'_>> {
    Immediate::new(TensorLevels(t.levels()))
}

fn lv(k: usize) -> LevelRef {
    LevelRef::new(0, k)
}

fn storage(extent: usize, arrays: Vec<IndexArray>, params: &[i64]) -> LevelStorage {
    LevelStorage {
        extent,
        arrays: arrays.into_iter().collect(),
        params: params.iter().copied().collect(),
    }
}

fn array(t: &Tensor, level: usize, slot: usize) -> Vec<i64> {
    t.level(level).arrays[slot].to_i64_vec()
}

const CSR_LEVEL: Compressed = Compressed {
    ordered: true,
    unique: true,
    full: false,
};
const COO_ROWS: Compressed = Compressed {
    ordered: true,
    unique: false,
    full: false,
};
const COO_COLS: Singleton = Singleton {
    ordered: true,
    unique: true,
    full: false,
};
const HASHED: Hashed = Hashed { full: false };

/// A resolver over owned, growable storage: what an output tensor is while
/// it is being assembled.
struct Output(Vec<LevelStorage>);

impl StorageResolver for Output {
    fn level(&self, level: LevelRef) -> &LevelStorage {
        &self.0[level.level as usize]
    }
    fn level_mut(&mut self, level: LevelRef) -> &mut LevelStorage {
        &mut self.0[level.level as usize]
    }
}

// ------------------------------------------------------------- dense + CSR

#[test]
fn csr_of_the_paper_matrix_stores_the_papers_arrays() {
    let t = paper(Format::csr());
    assert_eq!(t.level(0).extent, 4);
    assert!(t.level(0).arrays.is_empty());
    assert_eq!(array(&t, 1, 0), [0, 2, 4, 4, 7]);
    assert_eq!(array(&t, 1, 1), [0, 1, 0, 1, 0, 3, 4]);
    assert_eq!(t.values(), [5.0, 1.0, 7.0, 3.0, 8.0, 4.0, 9.0]);
    assert_eq!(t.level_sizes(), [4, 7]);
}

#[test]
fn dense_coord_iter_spans_the_extent() {
    let t = paper(Format::csr());
    let mut b = interp(&t);
    assert_eq!(Dense.coord_iter(&mut b, lv(0), &[]), (0, 4));
}

#[test]
fn dense_coord_access_and_locate_are_parent_times_extent_plus_coordinate() {
    let t = paper(Format::csr());
    let mut b = interp(&t);
    assert_eq!(Dense.coord_access(&mut b, lv(0), 0, &[], 2), (2, true));
    assert_eq!(Dense.locate(&mut b, lv(0), 0, &[], 3), (3, true));
    // Below a parent position (a dense level deeper in a hierarchy).
    let d = paper(Format::dense(2));
    let mut b = interp(&d);
    assert_eq!(Dense.locate(&mut b, lv(1), 3, &[3], 4), (3 * 6 + 4, true));
    assert_eq!(Dense.coord_access(&mut b, lv(1), 1, &[1], 0), (6, true));
    assert_eq!(d.values()[3 * 6 + 4], 9.0);
}

#[test]
fn dense_size_multiplies_the_parent_size_by_the_extent() {
    let t = paper(Format::dense(2));
    let mut b = interp(&t);
    assert_eq!(Dense.size(&mut b, lv(0), 1), 4);
    assert_eq!(Dense.size(&mut b, lv(1), 4), 24);
    assert_eq!(Dense.size(&mut b, lv(1), 0), 0);
}

#[test]
fn compressed_pos_iter_reads_the_segment_bounds_from_pos() {
    let t = paper(Format::csr());
    let mut b = interp(&t);
    // Parent coordinate 1 has children at idx positions pos[1] = 2 to pos[2] = 4.
    assert_eq!(CSR_LEVEL.pos_iter(&mut b, lv(1), 1), (2, 4));
    assert_eq!(CSR_LEVEL.pos_iter(&mut b, lv(1), 0), (0, 2));
    assert_eq!(CSR_LEVEL.pos_iter(&mut b, lv(1), 2), (4, 4), "empty row");
    assert_eq!(CSR_LEVEL.pos_iter(&mut b, lv(1), 3), (4, 7));
}

#[test]
fn compressed_pos_access_reads_idx_and_always_finds() {
    let t = paper(Format::csr());
    let mut b = interp(&t);
    let coords: Vec<(i64, bool)> = (0..7).map(|p| CSR_LEVEL.pos_access(&mut b, lv(1), p, &[0])).collect();
    let expect: Vec<(i64, bool)> = [0, 1, 0, 1, 0, 3, 4].iter().map(|&c| (c, true)).collect();
    assert_eq!(coords, expect);
    // The rightmost path of Fig. 3b: B(3,4) = 9 at position 6.
    assert_eq!(CSR_LEVEL.pos_access(&mut b, lv(1), 6, &[3]), (4, true));
    assert_eq!(t.values()[6], 9.0);
}

#[test]
fn compressed_and_singleton_offer_their_idx_array_as_a_coordinate_view() {
    let t = paper(Format::csr());
    let view = CSR_LEVEL.coordinate_view(t.level(1)).unwrap();
    assert_eq!(view.to_i64_vec(), [0, 1, 0, 1, 0, 3, 4]);
    assert!(Dense.coordinate_view(t.level(0)).is_none());
    let c = paper(Format::coo(2));
    let view = COO_COLS.coordinate_view(c.level(1)).unwrap();
    assert_eq!(view.to_i64_vec(), [0, 1, 0, 1, 0, 3, 4]);
}

/// The iteration templates of Fig. 5c (coordinate value) and 5d (coordinate
/// position), nested over a hierarchy, with the level functions of `format`.
fn walk(t: &Tensor) -> Vec<(Vec<i64>, f64)> {
    fn go(
        t: &Tensor,
        b: &mut Immediate<TensorLevels<'_>>,
        k: usize,
        parent: i64,
        ancestors: &mut Vec<i64>,
        out: &mut Vec<(Vec<i64>, f64)>,
    ) {
        let level = *t.format().level(k);
        let mut child = |b: &mut Immediate<TensorLevels<'_>>, i: i64, p: i64, a: &mut Vec<i64>| {
            a.push(i);
            if k + 1 == t.format().levels().len() {
                out.push((a.clone(), t.values()[p as usize]));
            } else {
                go(t, b, k + 1, p, a, out);
            }
            a.pop();
        };
        match level.capabilities().iteration {
            Iteration::CoordinateValue => {
                let (begin, end) = level.coord_iter(b, lv(k), ancestors);
                for i in begin..end {
                    let (p, found) = level.coord_access(b, lv(k), parent, ancestors, i);
                    if found {
                        child(b, i, p, ancestors);
                    }
                }
            }
            Iteration::CoordinatePosition => {
                let (begin, end) = level.pos_iter(b, lv(k), parent);
                for p in begin..end {
                    let (i, found) = level.pos_access(b, lv(k), p, ancestors);
                    if found {
                        child(b, i, p, ancestors);
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    let mut b = interp(t);
    go(t, &mut b, 0, 0, &mut Vec::new(), &mut out);
    out
}

fn nonzeros(walked: Vec<(Vec<i64>, f64)>) -> Vec<(Vec<i64>, f64)> {
    walked.into_iter().filter(|(_, v)| *v != 0.0).collect()
}

#[test]
fn iterating_csr_with_the_papers_templates_yields_the_matrix_in_row_order() {
    let expect: Vec<(Vec<i64>, f64)> = PAPER.iter().map(|&(i, j, v)| (vec![i as i64, j as i64], v)).collect();
    assert_eq!(walk(&paper(Format::csr())), expect);
}

#[test]
fn iterating_csc_with_the_papers_templates_yields_columns_then_rows() {
    let walked = walk(&paper(Format::csc()));
    let storage: Vec<Vec<i64>> = walked.iter().map(|(c, _)| c.clone()).collect();
    assert_eq!(storage, [[0, 0], [0, 1], [0, 3], [1, 0], [1, 1], [3, 3], [4, 3]]);
}

// --------------------------------------------------------------------- COO

#[test]
fn coo_stores_one_row_coordinate_and_one_column_coordinate_per_entry() {
    let t = paper(Format::coo(2));
    assert_eq!(array(&t, 0, 0), [0, 7]);
    assert_eq!(array(&t, 0, 1), [0, 0, 1, 1, 3, 3, 3]);
    assert_eq!(array(&t, 1, 0), [0, 1, 0, 1, 0, 3, 4]);
    assert_eq!(t.level_sizes(), [7, 7]);
}

#[test]
fn coo_row_level_iterates_every_entry_including_repeated_rows() {
    let t = paper(Format::coo(2));
    let mut b = interp(&t);
    assert_eq!(COO_ROWS.pos_iter(&mut b, lv(0), 0), (0, 7));
    let rows: Vec<i64> = (0..7)
        .map(|p| {
            let (i, found) = COO_ROWS.pos_access(&mut b, lv(0), p, &[]);
            assert!(found);
            i
        })
        .collect();
    assert_eq!(rows, [0, 0, 1, 1, 3, 3, 3]);
}

#[test]
fn singleton_pos_iter_is_the_parent_position_alone() {
    let t = paper(Format::coo(2));
    let mut b = interp(&t);
    for p in 0..7 {
        assert_eq!(COO_COLS.pos_iter(&mut b, lv(1), p), (p, p + 1));
    }
    assert_eq!(COO_COLS.pos_access(&mut b, lv(1), 5, &[3]), (3, true));
    assert_eq!(COO_COLS.pos_access(&mut b, lv(1), 6, &[3]), (4, true));
}

#[test]
fn iterating_coo_with_the_papers_templates_yields_the_matrix() {
    let expect: Vec<(Vec<i64>, f64)> = PAPER.iter().map(|&(i, j, v)| (vec![i as i64, j as i64], v)).collect();
    assert_eq!(walk(&paper(Format::coo(2))), expect);
}

// --------------------------------------------------------------------- DIA

#[test]
fn dia_stores_the_papers_offsets_and_padded_diagonals() {
    let t = paper(Format::dia());
    // Diagonals are numbered by offset + rows - 1, nine of a 4 x 6 matrix;
    // four hold entries.
    assert_eq!(t.level(0).extent, 9);
    assert_eq!(t.level(0).arrays[1].to_u64_vec(), [0, 2, 3, 4], "offsets -3, -1, 0, 1");
    assert!(t.level(1).arrays.is_empty() && t.level(2).arrays.is_empty());
    #[rustfmt::skip]
    let values = [
        0.0, 0.0, 0.0, 8.0, // offset -3: (3,0)
        0.0, 7.0, 0.0, 0.0, // offset -1: (1,0) (2,1) (3,2)
        5.0, 3.0, 0.0, 4.0, // offset 0
        1.0, 0.0, 0.0, 9.0, // offset 1
    ];
    assert_eq!(t.values(), values);
}

#[test]
fn range_coord_iter_is_max_zero_minus_offset_to_min_rows_columns_minus_offset() {
    let t = paper(Format::dia());
    let mut b = interp(&t);
    let bounds: Vec<(i64, i64)> = [0, 2, 3, 4]
        .iter()
        .map(|&k| Range.coord_iter(&mut b, lv(1), &[k]))
        .collect();
    // N = 4, M = 6: the paper's example is offset -1 (diagonal 2): 1..4.
    assert_eq!(bounds, [(3, 4), (1, 4), (0, 4), (0, 4)]);
}

#[test]
fn range_coord_iter_is_cut_by_the_columns_on_a_tall_matrix() {
    // N = 6 rows, M = 4 columns, offsets -1 and 2 (diagonals 4 and 7):
    // -1: rows max(0, 1) = 1 .. min(6, 4 + 1) = 5; 2: rows 0 .. min(6, 2) = 2.
    let levels = vec![
        storage(9, vec![IndexArray::U32(vec![0, 2]), IndexArray::U32(vec![4, 7])], &[]),
        storage(6, vec![], &[]),
        storage(4, vec![], &[]),
    ];
    let t = Tensor::<f64>::from_parts(&[6, 4], Format::dia(), levels, vec![1.0; 12]).unwrap();
    let mut b = interp(&t);
    assert_eq!(Range.coord_iter(&mut b, lv(1), &[4]), (1, 5));
    assert_eq!(Range.coord_iter(&mut b, lv(1), &[7]), (0, 2));
    let entries: Vec<Vec<u64>> = t.to_coordinates().iter().map(|(c, _)| c.to_vec()).collect();
    assert_eq!(
        entries,
        [[0, 2], [1, 0], [1, 3], [2, 1], [3, 2], [4, 3]],
        "every stored position in range, none outside"
    );
}

#[test]
fn range_coord_iter_of_an_offset_selecting_no_row_is_empty_not_reversed() {
    // Not a valid tensor (validation refuses diagonal -1, offset -4 of a
    // 4 x 6 matrix); the level function itself still must not produce
    // end < begin.
    let levels = [
        storage(9, vec![IndexArray::U32(vec![0, 1]), IndexArray::I64(vec![-1])], &[]),
        storage(4, vec![], &[]),
        storage(6, vec![], &[]),
    ];
    let mut b = Immediate::new(TensorLevels(&levels));
    assert_eq!(Range.coord_iter(&mut b, lv(1), &[-1]), (4, 4));
}

#[test]
fn range_coord_access_is_diagonal_times_rows_plus_row() {
    let t = paper(Format::dia());
    let mut b = interp(&t);
    assert_eq!(Range.coord_access(&mut b, lv(1), 1, &[1], 3), (7, true));
    assert_eq!(Range.coord_access(&mut b, lv(1), 0, &[0], 3), (3, true));
    assert_eq!(t.values()[3], 8.0);
}

/// For assembly: a row is found only inside its diagonal's range, and a
/// column only where the row's diagonal puts it.
#[test]
fn range_and_offset_locate_inside_the_diagonal_only() {
    let t = paper(Format::dia());
    let mut b = interp(&t);
    // Offset -1 (diagonal 2, position 1) holds rows 1..4.
    assert_eq!(Range.locate(&mut b, lv(1), 1, &[2], 0), (4, false));
    assert_eq!(Range.locate(&mut b, lv(1), 1, &[2], 1), (5, true));
    assert_eq!(Range.locate(&mut b, lv(1), 1, &[2], 3), (7, true));
    assert_eq!(Range.size(&mut b, lv(1), 4), 16);
    // Row 3 of offset -1 is column 2, at the row's position.
    assert_eq!(Offset.locate(&mut b, lv(2), 7, &[2, 3], 2), (7, true));
    assert_eq!(Offset.locate(&mut b, lv(2), 7, &[2, 3], 3), (7, false));
    assert_eq!(Offset.size(&mut b, lv(2), 16), 16);
}

#[test]
fn offset_pos_access_shifts_the_row_by_the_diagonals_offset() {
    let t = paper(Format::dia());
    let mut b = interp(&t);
    // "Given a parent coordinate 3 and offset index 1, the level encodes the
    // coordinate 3 + offset[1] = 2": the offset -1 is diagonal 2 here.
    assert_eq!(Offset.pos_iter(&mut b, lv(2), 7), (7, 8));
    assert_eq!(Offset.pos_access(&mut b, lv(2), 7, &[2, 3]), (2, true));
    assert_eq!(Offset.pos_access(&mut b, lv(2), 3, &[0, 3]), (0, true));
    assert_eq!(Offset.pos_access(&mut b, lv(2), 15, &[4, 3]), (4, true));
    assert_eq!(t.values()[15], 9.0);
}

#[test]
fn iterating_dia_visits_every_in_range_position_of_each_diagonal() {
    let walked = walk(&paper(Format::dia()));
    // 1 + 3 + 4 + 4 positions, padding included.
    assert_eq!(walked.len(), 12);
    assert!(walked[..1].iter().all(|(c, _)| c[0] == 0 && c[1] == 3));
    assert_eq!(
        nonzeros(walked),
        [
            (vec![0, 3, 0], 8.0),
            (vec![2, 1, 0], 7.0),
            (vec![3, 0, 0], 5.0),
            (vec![3, 1, 1], 3.0),
            (vec![3, 3, 3], 4.0),
            (vec![4, 0, 1], 1.0),
            (vec![4, 3, 4], 9.0),
        ]
    );
}

// ------------------------------------------------------------- ELL, BCSR

#[test]
fn ell_stores_slot_major_columns_padded_with_zeros() {
    let t = paper(Format::ell());
    assert_eq!(t.level(0).extent, 3, "the longest row has three entries");
    #[rustfmt::skip]
    assert_eq!(array(&t, 2, 0), [
        0, 0, 0, 0, // slot 0 of rows 0..4 (row 2 is padding)
        1, 1, 0, 3, // slot 1
        0, 0, 0, 4, // slot 2
    ]);
    #[rustfmt::skip]
    assert_eq!(t.values(), [
        5.0, 7.0, 0.0, 8.0,
        1.0, 3.0, 0.0, 4.0,
        0.0, 0.0, 0.0, 9.0,
    ]);
    let mut b = interp(&t);
    assert_eq!(COO_COLS.pos_iter(&mut b, lv(2), 11), (11, 12));
    assert_eq!(COO_COLS.pos_access(&mut b, lv(2), 11, &[2, 3]), (4, true));
}

#[test]
fn bcsr_stores_dense_blocks_below_compressed_block_columns() {
    let t = paper(Format::bcsr(2, 3).unwrap());
    assert_eq!(array(&t, 1, 0), [0, 1, 3]);
    assert_eq!(array(&t, 1, 1), [0, 0, 1]);
    assert_eq!(t.level_sizes(), [2, 3, 6, 18]);
    #[rustfmt::skip]
    assert_eq!(t.values(), [
        5.0, 1.0, 0.0, 7.0, 3.0, 0.0, // block (0, 0)
        0.0, 0.0, 0.0, 8.0, 0.0, 0.0, // block (1, 0)
        0.0, 0.0, 0.0, 4.0, 9.0, 0.0, // block (1, 1)
    ]);
    // Locate (3, 4): block (1, 1) is at position 2; row 1 in the block is
    // position 2 * 2 + 1 = 5; column 1 in the block is 5 * 3 + 1 = 16.
    let mut b = interp(&t);
    assert_eq!(CSR_LEVEL.pos_iter(&mut b, lv(1), 1), (1, 3));
    assert_eq!(CSR_LEVEL.pos_access(&mut b, lv(1), 2, &[1]), (1, true));
    assert_eq!(Dense.locate(&mut b, lv(2), 2, &[1, 1], 1), (5, true));
    assert_eq!(Dense.locate(&mut b, lv(3), 5, &[1, 1, 1], 1), (16, true));
    assert_eq!(t.values()[16], 9.0);
}

// ------------------------------------------------------------------ hashed

const EMPTY: i64 = 30;

/// A hash-map vector of dimension 30 with W = 8 buckets (shift 61). With
/// Fibonacci hashing 8 and 16 hash to bucket 7, 0 and 5 to bucket 0, 1 to
/// bucket 4; inserting 8, 16, 0, 5, 1 in that order wraps 16 around to
/// bucket 0 and pushes 0 and 5 to buckets 1 and 2.
fn hand_hash_vector() -> Tensor {
    let idx = IndexArray::U32(vec![16, 0, 5, 30, 1, 30, 30, 8]);
    let levels = vec![storage(30, vec![idx], &[8, 61])];
    Tensor::from_parts(&[30], Format::hash_vector(), levels, vec![1.0; 8]).unwrap()
}

#[test]
fn fibonacci_hash_places_the_example_coordinates_in_the_documented_buckets() {
    let homes: Vec<u64> = [0, 1, 5, 8, 16, 13, 21, 3, 17].iter().map(|&c| bucket(c, 61)).collect();
    assert_eq!(homes, [0, 4, 0, 7, 7, 0, 7, 6, 4]);
    assert_eq!(bucket(3, 61), 3u64.wrapping_mul(GOLDEN) >> 61);
    // W = 2 keeps one bit, W = 16 four.
    assert_eq!(bucket(1, 63), 1);
    assert_eq!(bucket(1, 60), 9);
    assert_eq!(bucket(12345, 64), 0);
}

#[test]
fn hashed_pos_iter_spans_the_parents_w_buckets() {
    let t = hand_hash_vector();
    let mut b = interp(&t);
    assert_eq!(HASHED.pos_iter(&mut b, lv(0), 0), (0, 8));
}

#[test]
fn hashed_pos_access_finds_occupied_buckets_and_not_empty_ones() {
    let t = hand_hash_vector();
    let mut b = interp(&t);
    let got: Vec<(i64, bool)> = (0..8).map(|p| HASHED.pos_access(&mut b, lv(0), p, &[])).collect();
    assert_eq!(
        got,
        [
            (16, true),
            (0, true),
            (5, true),
            (EMPTY, false),
            (1, true),
            (EMPTY, false),
            (EMPTY, false),
            (8, true),
        ]
    );
}

#[test]
fn hashed_locate_finds_coordinates_in_their_home_bucket() {
    let t = hand_hash_vector();
    let mut b = interp(&t);
    assert_eq!(HASHED.locate(&mut b, lv(0), 0, &[], 8), (7, true));
    assert_eq!(HASHED.locate(&mut b, lv(0), 0, &[], 1), (4, true));
}

#[test]
fn hashed_locate_probes_past_collisions_and_wraps_around() {
    let t = hand_hash_vector();
    let mut b = interp(&t);
    assert_eq!(HASHED.locate(&mut b, lv(0), 0, &[], 16), (0, true), "7 -> 0");
    assert_eq!(HASHED.locate(&mut b, lv(0), 0, &[], 0), (1, true), "0 -> 1");
    assert_eq!(HASHED.locate(&mut b, lv(0), 0, &[], 5), (2, true), "0 -> 1 -> 2");
}

#[test]
fn hashed_locate_of_a_missing_coordinate_stops_at_the_first_empty_bucket() {
    let t = hand_hash_vector();
    let mut b = interp(&t);
    assert_eq!(HASHED.locate(&mut b, lv(0), 0, &[], 3), (6, false), "home empty");
    assert_eq!(HASHED.locate(&mut b, lv(0), 0, &[], 17), (5, false), "4 -> 5");
    assert_eq!(HASHED.locate(&mut b, lv(0), 0, &[], 13), (3, false), "0 .. 3");
    assert_eq!(
        HASHED.locate(&mut b, lv(0), 0, &[], 21),
        (3, false),
        "7 -> 0 -> 1 -> 2 -> 3, wrapping"
    );
}

#[test]
fn hashed_size_is_parent_size_times_w() {
    let t = hand_hash_vector();
    let mut b = interp(&t);
    assert_eq!(HASHED.size(&mut b, lv(0), 1), 8);
    assert_eq!(HASHED.size(&mut b, lv(0), 3), 24);
}

#[test]
fn hashed_packing_inserts_in_coordinate_order_with_the_fibonacci_hash() {
    // Three coordinates: W = 8. 0 -> bucket 0; 8 -> bucket 7; 16 -> bucket 7,
    // taken, wraps to 0, taken, lands in 1.
    let mut list = CoordinateList::new(&[30]);
    for (c, v) in [(16, 3.0), (8, 2.0), (0, 1.0)] {
        list.push(&[c], v).unwrap();
    }
    let t = Tensor::pack(&list, Format::hash_vector()).unwrap();
    assert_eq!(t.level(0).params.as_slice(), [8, 61]);
    assert_eq!(array(&t, 0, 0), [0, 16, 30, 30, 30, 30, 30, 8]);
    assert_eq!(t.values(), [1.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0]);
}

#[test]
fn hash_rows_locate_offsets_each_row_by_w() {
    let mut list = CoordinateList::new(&[2, 30]);
    for (i, j) in [(0, 8), (1, 8), (1, 16)] {
        list.push(&[i, j], 1.0).unwrap();
    }
    let t = Tensor::pack(&list, Format::hash_rows()).unwrap();
    assert_eq!(t.level(1).params.as_slice(), [4, 62], "two per row: W = 4");
    // W = 4 (shift 62): 8 -> bucket 3, 16 -> bucket 3, wraps to 0.
    assert_eq!(array(&t, 1, 0), [30, 30, 30, 8, 16, 30, 30, 8]);
    let mut b = interp(&t);
    assert_eq!(HASHED.pos_iter(&mut b, lv(1), 1), (4, 8));
    assert_eq!(HASHED.locate(&mut b, lv(1), 0, &[0], 8), (3, true));
    assert_eq!(HASHED.locate(&mut b, lv(1), 1, &[1], 8), (7, true));
    assert_eq!(HASHED.locate(&mut b, lv(1), 1, &[1], 16), (4, true));
    assert_eq!(HASHED.locate(&mut b, lv(1), 0, &[0], 16), (0, false));
}

// ---------------------------------------------------------------- assembly

#[test]
fn csr_assembled_by_append_matches_packing() {
    let rows: [&[(i64, f64)]; 4] = [
        &[(0, 5.0), (1, 1.0)],
        &[(0, 7.0), (1, 3.0)],
        &[],
        &[(0, 8.0), (3, 4.0), (4, 9.0)],
    ];
    let (l0, l1) = (lv(0), lv(1));
    let mut b = Immediate::new(Output(vec![Dense.empty_storage(4), CSR_LEVEL.empty_storage(6)]));
    let size = Dense.size(&mut b, l0, 1);
    assert_eq!(size, 4);
    CSR_LEVEL.append_init(&mut b, l1, size, 0);
    let mut p = 0;
    let mut values = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let (p0, found) = Dense.locate(&mut b, l0, 0, &[], i as i64);
        assert!(found);
        let begin = p;
        for &(j, v) in *row {
            CSR_LEVEL.append_coord(&mut b, l1, p, j);
            values.push(v);
            p += 1;
        }
        CSR_LEVEL.append_edges(&mut b, l1, p0, begin, p);
    }
    // Before finalizing, pos holds per-row counts (Table 4).
    assert_eq!(b.storage.0[1].arrays[0].to_i64_vec()[..5], [0, 2, 2, 0, 3]);
    CSR_LEVEL.append_finalize(&mut b, l1, size, p);
    let mut levels = b.storage.0;
    assert!(levels[1].arrays[1].len() >= 7, "idx grew to hold every append");
    CSR_LEVEL.trim(&mut levels[1], 4);
    assert_eq!(levels[1].arrays[0].to_i64_vec(), [0, 2, 4, 4, 7]);
    assert_eq!(levels[1].arrays[1].to_i64_vec(), [0, 1, 0, 1, 0, 3, 4]);

    let t = Tensor::from_parts(&[4, 6], Format::csr(), levels, values).unwrap();
    let packed = paper(Format::csr());
    assert_eq!(t.to_coordinates(), packed.to_coordinates());
    assert_eq!(t.values(), packed.values());
}

#[test]
fn dcsr_assembled_by_append_on_both_levels_matches_packing() {
    let rows: [(i64, &[(i64, f64)]); 3] = [
        (0, &[(0, 5.0), (1, 1.0)]),
        (1, &[(0, 7.0), (1, 3.0)]),
        (3, &[(0, 8.0), (3, 4.0), (4, 9.0)]),
    ];
    let (l0, l1) = (lv(0), lv(1));
    let mut b = Immediate::new(Output(vec![CSR_LEVEL.empty_storage(4), CSR_LEVEL.empty_storage(6)]));
    CSR_LEVEL.append_init(&mut b, l0, 1, 0);
    // The parent level's size is unknown until it is assembled.
    CSR_LEVEL.append_init(&mut b, l1, 0, 0);
    let (mut p0, mut p1) = (0, 0);
    let mut values = Vec::new();
    for (i, row) in rows {
        let begin = p1;
        for &(j, v) in row {
            CSR_LEVEL.append_coord(&mut b, l1, p1, j);
            values.push(v);
            p1 += 1;
        }
        CSR_LEVEL.append_edges(&mut b, l1, p0, begin, p1);
        CSR_LEVEL.append_coord(&mut b, l0, p0, i);
        p0 += 1;
    }
    CSR_LEVEL.append_edges(&mut b, l0, 0, 0, p0);
    CSR_LEVEL.append_finalize(&mut b, l0, 1, p0);
    CSR_LEVEL.append_finalize(&mut b, l1, p0, p1);
    let mut levels = b.storage.0;
    CSR_LEVEL.trim(&mut levels[0], 1);
    CSR_LEVEL.trim(&mut levels[1], p0 as usize);
    assert_eq!(levels[0].arrays[0].to_i64_vec(), [0, 3]);
    assert_eq!(levels[0].arrays[1].to_i64_vec(), [0, 1, 3]);
    assert_eq!(levels[1].arrays[0].to_i64_vec(), [0, 2, 4, 7]);

    let t = Tensor::from_parts(&[4, 6], Format::dcsr(), levels, values).unwrap();
    let packed = paper(Format::dcsr());
    assert_eq!(t.to_coordinates(), packed.to_coordinates());
    for k in 0..2 {
        for slot in 0..2 {
            assert_eq!(array(&t, k, slot), array(&packed, k, slot));
        }
    }
}

#[test]
fn coo_assembled_by_append_walking_up_the_branchless_level_matches_packing() {
    let (l0, l1) = (lv(0), lv(1));
    let mut b = Immediate::new(Output(vec![COO_ROWS.empty_storage(4), COO_COLS.empty_storage(6)]));
    COO_ROWS.append_init(&mut b, l0, 1, 0);
    COO_COLS.append_init(&mut b, l1, 0, 0);
    let mut p = 0;
    let mut values = Vec::new();
    for &(i, j, v) in &PAPER {
        // Fig. 9a part (3): append the leaf, then walk up the branchless
        // singleton to its parent.
        COO_COLS.append_coord(&mut b, l1, p, j as i64);
        COO_COLS.append_edges(&mut b, l1, p, p, p + 1);
        COO_ROWS.append_coord(&mut b, l0, p, i as i64);
        values.push(v);
        p += 1;
    }
    COO_ROWS.append_edges(&mut b, l0, 0, 0, p);
    COO_ROWS.append_finalize(&mut b, l0, 1, p);
    COO_COLS.append_finalize(&mut b, l1, p, p);
    let mut levels = b.storage.0;
    COO_ROWS.trim(&mut levels[0], 1);
    COO_COLS.trim(&mut levels[1], p as usize);

    let t = Tensor::from_parts(&[4, 6], Format::coo(2), levels, values).unwrap();
    let packed = paper(Format::coo(2));
    assert_eq!(t.to_coordinates(), packed.to_coordinates());
    for (k, slots) in [(0, 2), (1, 1)] {
        for slot in 0..slots {
            assert_eq!(array(&t, k, slot), array(&packed, k, slot));
        }
    }
}

#[test]
fn hash_rows_assembled_by_insert_in_any_order_matches_packing() {
    // Row 0 gets 8, 16, 0, 5, 1 (the hand-built table above); row 2 gets
    // 3 (bucket 6), 11 (bucket 6 -> 7) and 24 (bucket 6 -> 7 -> 0).
    let entries = [
        (2, 3, 1.0),
        (0, 8, 2.0),
        (0, 16, 3.0),
        (2, 11, 4.0),
        (0, 0, 5.0),
        (0, 5, 6.0),
        (2, 24, 7.0),
        (0, 1, 8.0),
        (0, 16, 10.0), // a repeat accumulates into the same bucket
    ];
    let (l0, l1) = (lv(0), lv(1));
    let mut b = Immediate::new(Output(vec![Dense.empty_storage(3), Hashed::storage_with_width(30, 8)]));
    let rows = Dense.size(&mut b, l0, 1);
    let buckets = HASHED.size(&mut b, l1, rows);
    assert_eq!(buckets, 24);
    Dense.insert_init(&mut b, l0, 1, rows);
    HASHED.insert_init(&mut b, l1, rows, buckets);
    let mut values = vec![0.0; buckets as usize];
    for &(i, j, v) in &entries {
        let (p0, _) = Dense.locate(&mut b, l0, 0, &[], i);
        Dense.insert_coord(&mut b, l0, p0, i);
        let (p1, found) = HASHED.locate(&mut b, l1, p0, &[i], j);
        if !found {
            HASHED.insert_coord(&mut b, l1, p1, j);
        }
        values[p1 as usize] += v;
    }
    HASHED.insert_finalize(&mut b, l1, rows, buckets);
    Dense.insert_finalize(&mut b, l0, 1, rows);
    let levels = b.storage.0;
    #[rustfmt::skip]
    assert_eq!(levels[1].arrays[0].to_i64_vec(), [
        16, 0, 5, 30, 1, 30, 30, 8,     // row 0
        30, 30, 30, 30, 30, 30, 30, 30, // row 1
        24, 30, 30, 30, 30, 30, 3, 11,  // row 2
    ]);
    assert_eq!(values[0], 13.0);

    let t = Tensor::from_parts(&[3, 30], Format::hash_rows(), levels, values).unwrap();
    let mut list = CoordinateList::new(&[3, 30]);
    for &(i, j, v) in &entries {
        list.push(&[i as u64, j as u64], v).unwrap();
    }
    let packed = Tensor::pack(&list, Format::hash_rows()).unwrap();
    assert_eq!(t.to_coordinates(), packed.to_coordinates());
    assert_eq!(t.to_coordinates(), list.pruned());
}

#[test]
fn empty_storage_of_each_assembled_level_is_valid_for_an_empty_parent() {
    for (level, arrays) in [
        (LevelFormat::dense(), 0),
        (LevelFormat::compressed(), 2),
        (LevelFormat::singleton(), 1),
        (LevelFormat::hashed(), 1),
    ] {
        let s = level.empty_storage(5);
        assert_eq!(s.extent, 5);
        assert_eq!(s.arrays.len(), arrays, "{level}");
        assert_eq!(level.validate(&s, 0, 0, None), Ok(0), "{level}");
    }
}

// ---------------------------------------------------- Table 1 of the paper

struct Row {
    iteration: Iteration,
    locate: bool,
    assembly: Option<Assembly>,
    /// (full, ordered, unique, branchless, compact)
    properties: (bool, bool, bool, bool, bool),
}

fn row_of(level: &impl Level) -> Row {
    let c = level.capabilities();
    let p = level.properties();
    Row {
        iteration: c.iteration,
        locate: c.locate,
        assembly: c.assembly,
        properties: (p.full, p.ordered, p.unique, p.branchless, p.compact),
    }
}

#[track_caller]
fn assert_row(level: &impl Level, expect: Row) {
    let got = row_of(level);
    let name = level.name();
    assert_eq!(got.iteration, expect.iteration, "{name} iteration");
    assert_eq!(got.locate, expect.locate, "{name} locate");
    assert_eq!(got.assembly, expect.assembly, "{name} assembly");
    assert_eq!(got.properties, expect.properties, "{name} properties");
}

use Iteration::{CoordinatePosition as P, CoordinateValue as V};

#[test]
fn dense_capabilities_and_properties_match_table_1() {
    assert_row(
        &Dense,
        Row {
            iteration: V,
            locate: true,
            assembly: Some(Assembly::Insert),
            properties: (true, true, true, false, true),
        },
    );
}

#[test]
fn range_capabilities_and_properties_match_table_1() {
    // Table 1 gives range levels no assembly; tessera inserts at the
    // positions the rows' coordinates give, so a DIA output is assembled.
    assert_row(
        &Range,
        Row {
            iteration: V,
            locate: false,
            assembly: Some(Assembly::Insert),
            properties: (false, true, true, false, false),
        },
    );
}

#[test]
fn compressed_capabilities_and_properties_match_table_1_in_every_configuration() {
    for bits in 0..8 {
        let (full, ordered, unique) = (bits & 1 != 0, bits & 2 != 0, bits & 4 != 0);
        assert_row(
            &Compressed { ordered, unique, full },
            Row {
                iteration: P,
                locate: false,
                assembly: Some(Assembly::Append),
                properties: (full, ordered, unique, false, true),
            },
        );
    }
}

#[test]
fn singleton_capabilities_and_properties_match_table_1_in_every_configuration() {
    for bits in 0..8 {
        let (full, ordered, unique) = (bits & 1 != 0, bits & 2 != 0, bits & 4 != 0);
        assert_row(
            &Singleton { ordered, unique, full },
            Row {
                iteration: P,
                locate: false,
                assembly: Some(Assembly::Append),
                properties: (full, ordered, unique, true, true),
            },
        );
    }
}

#[test]
fn offset_capabilities_and_properties_match_table_1() {
    // As for range levels, insertion is tessera's addition to Table 1.
    assert_row(
        &Offset,
        Row {
            iteration: P,
            locate: false,
            assembly: Some(Assembly::Insert),
            properties: (false, true, true, true, false),
        },
    );
}

#[test]
fn hashed_capabilities_and_properties_match_table_1_in_every_configuration() {
    for full in [false, true] {
        assert_row(
            &Hashed { full },
            Row {
                iteration: P,
                locate: true,
                assembly: Some(Assembly::Insert),
                properties: (full, false, true, false, false),
            },
        );
    }
}

#[test]
fn level_formats_report_the_properties_they_are_configured_with() {
    let nu = LevelFormat::compressed().non_unique();
    assert!(!nu.properties().unique && nu.properties().ordered);
    let un = LevelFormat::compressed().unordered();
    assert!(un.properties().unique && !un.properties().ordered);
    let s = LevelFormat::singleton().non_unique();
    assert!(!s.properties().unique && s.properties().branchless);
    assert!(!LevelFormat::hashed().properties().ordered);
    assert!(LevelFormat::dense().properties().full);
    assert!(!LevelFormat::compressed().properties().full);
    for (f, name) in [
        (LevelFormat::dense(), "dense"),
        (LevelFormat::compressed(), "compressed"),
        (LevelFormat::singleton(), "singleton"),
        (LevelFormat::range(), "range"),
        (LevelFormat::offset(), "offset"),
        (LevelFormat::hashed(), "hashed"),
    ] {
        assert_eq!(f.name(), name);
    }
}

#[test]
fn coo_is_a_non_unique_compressed_level_over_a_branchless_singleton() {
    let f = Format::coo(3);
    let props: Vec<Properties> = f.levels().iter().map(|l| l.level.properties()).collect();
    assert!(!props[0].unique && !props[0].branchless);
    assert!(!props[1].unique && props[1].branchless);
    assert!(props[2].unique && props[2].branchless);
    assert!(props.iter().all(|p| p.ordered));
}

/// Runs `append_coord` once per coordinate on a copy of `start`.
fn append_one_by_one(level: &impl Level, start: &LevelStorage, pos: usize, coords: &[u64]) -> LevelStorage {
    struct One(LevelStorage);
    impl StorageResolver for One {
        fn level(&self, _: LevelRef) -> &LevelStorage {
            &self.0
        }
        fn level_mut(&mut self, _: LevelRef) -> &mut LevelStorage {
            &mut self.0
        }
    }
    let mut b = Immediate::new(One(start.clone()));
    for (k, &c) in coords.iter().enumerate() {
        level.append_coord(&mut b, lv(0), (pos + k) as i64, c as i64);
    }
    b.storage.0
}

#[test]
fn append_coords_stores_what_append_coord_stores_one_by_one() {
    let compressed = Compressed {
        ordered: true,
        unique: true,
        full: false,
    };
    let singleton = Singleton {
        ordered: true,
        unique: true,
        full: false,
    };
    let coords = [3u64, 7, 8, 11];
    for extent in [12usize, 1 << 40] {
        // Into empty storage, then after entries already appended (the
        // array may be longer than the positions written: only `pos..` is
        // rewritten).
        for pos in [0usize, 2] {
            let mut start = compressed.empty_storage(extent);
            start.arrays[1] = IndexArray::from_u64_with_bound(vec![1, 2, 9, 9, 9], extent as u64);
            let want = append_one_by_one(&compressed, &start, pos, &coords);
            let mut got = start;
            compressed.append_coords(&mut got, pos, CoordRun::Wide(&coords));
            assert_eq!(
                got.arrays[1].to_i64_vec()[..pos + 4],
                want.arrays[1].to_i64_vec()[..pos + 4]
            );
            assert_eq!(got.arrays[1].width(), want.arrays[1].width());

            let start = singleton.empty_storage(extent);
            let want = append_one_by_one(&singleton, &start, pos, &coords);
            let mut got = start;
            singleton.append_coords(&mut got, pos, CoordRun::Wide(&coords));
            assert_eq!(
                got.arrays[0].to_i64_vec()[pos..pos + 4],
                want.arrays[0].to_i64_vec()[pos..pos + 4]
            );
        }
    }
}

#[test]
fn writing_a_value_past_32_bits_widens_the_array_once() {
    let mut a = IndexArray::U32(vec![1, 2, 3]);
    a.write_run(2, CoordRun::Wide(&[5, 6]));
    assert_eq!(a, IndexArray::U32(vec![1, 2, 5, 6]));
    a.write_run(4, CoordRun::Narrow(&[8]));
    assert_eq!(a, IndexArray::U32(vec![1, 2, 5, 6, 8]));
    a.write_run(1, CoordRun::Wide(&[u64::from(u32::MAX) + 1]));
    assert_eq!(a, IndexArray::U64(vec![1, u64::from(u32::MAX) + 1, 5, 6, 8]));
    a.write_run(5, CoordRun::Narrow(&[9, 10]));
    assert_eq!(a, IndexArray::U64(vec![1, u64::from(u32::MAX) + 1, 5, 6, 8, 9, 10]));
}
