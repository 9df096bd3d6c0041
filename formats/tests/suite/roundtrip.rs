//! Round trips: packing a coordinate list into any format and reading it
//! back through the level functions gives the list's meaning back
//! (`list.pruned()`), for every named format and a few compositions, on
//! generated tensors that include the awkward cases (empty, zero-sized
//! modes, 1 x 1, empty and very long rows, duplicates, unsorted input,
//! hypersparse shapes, orders 0 to 4). Also: conversions between every pair
//! of matrix formats, permutations, the packer's output passing validation,
//! and the width of index arrays.

use proptest::prelude::*;
use proptest::sample::Index;
use tessera_formats::*;

// ------------------------------------------------------------ generators

type Entries = Vec<(Vec<u64>, i8)>;

/// A generated tensor: a shape and entries in the order they are pushed.
#[derive(Debug, Clone)]
struct Case {
    shape: Vec<usize>,
    entries: Entries,
}

impl Case {
    fn list(&self) -> CoordinateList {
        let mut list = CoordinateList::new(&self.shape);
        for (c, v) in &self.entries {
            list.push(c, f64::from(*v)).unwrap();
        }
        list
    }
    fn components(&self) -> Option<usize> {
        self.shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))
    }
}

/// Small integers, zero included: sums are exact and some cancel.
fn value() -> impl Strategy<Value = i8> {
    -4i8..=4
}

fn coordinate(d: usize) -> BoxedStrategy<u64> {
    let last = d as u64 - 1;
    prop_oneof![1 => Just(0), 1 => Just(last), 4 => 0..=last].boxed()
}

fn coordinates(shape: &[usize]) -> Vec<BoxedStrategy<u64>> {
    shape.iter().map(|&d| coordinate(d)).collect()
}

fn random_entries(shape: &[usize], max: usize) -> BoxedStrategy<Entries> {
    if shape.contains(&0) {
        return Just(vec![]).boxed();
    }
    prop::collection::vec((coordinates(shape), value()), 0..=max).boxed()
}

/// A few distinct coordinates, each pushed several times.
fn duplicated_entries(shape: &[usize], max: usize) -> BoxedStrategy<Entries> {
    (
        random_entries(shape, 4),
        prop::collection::vec((any::<Index>(), value()), 0..=max),
    )
        .prop_map(|(mut base, picks)| {
            if !base.is_empty() {
                for (ix, v) in picks {
                    let c = base[ix.index(base.len())].0.clone();
                    base.push((c, v));
                }
            }
            base
        })
        .prop_shuffle()
        .boxed()
}

/// One row (mode-0 coordinate) holding most of the entries.
fn skewed_entries(shape: &[usize], max: usize) -> BoxedStrategy<Entries> {
    if shape.is_empty() || shape.contains(&0) {
        return random_entries(shape, max);
    }
    (
        random_entries(shape, 3),
        coordinate(shape[0]),
        prop::collection::vec((coordinates(&shape[1..]), value()), max / 2..=max),
    )
        .prop_map(|(mut entries, row, long)| {
            for (mut c, v) in long {
                c.insert(0, row);
                entries.push((c, v));
            }
            entries
        })
        .prop_shuffle()
        .boxed()
}

fn entries(shape: &[usize], max: usize) -> BoxedStrategy<Entries> {
    prop_oneof![
        4 => random_entries(shape, max),
        1 => Just(vec![]),
        2 => duplicated_entries(shape, max),
        2 => skewed_entries(shape, max),
    ]
    .boxed()
}

fn dimension(max: usize) -> BoxedStrategy<usize> {
    prop_oneof![1 => Just(0), 1 => Just(1), 10 => 2..=max.max(2)].boxed()
}

fn shape(orders: std::ops::RangeInclusive<usize>, max_dim: usize) -> BoxedStrategy<Vec<usize>> {
    orders
        .prop_flat_map(move |n| prop::collection::vec(dimension(max_dim), n))
        .boxed()
}

/// A tensor of the given shapes; a coin decides whether its entries arrive
/// sorted (the packer's fast path) or in generated order.
fn case(shapes: BoxedStrategy<Vec<usize>>, max: usize) -> BoxedStrategy<Case> {
    shapes
        .prop_flat_map(move |shape| (entries(&shape, max), any::<bool>(), Just(shape)))
        .prop_map(|(mut entries, sorted, shape)| {
            if sorted {
                entries.sort_by(|a, b| a.0.cmp(&b.0));
            }
            Case { shape, entries }
        })
        .boxed()
}

/// A few entries, corners included, in a shape far too large for dense
/// storage.
fn hypersparse(orders: std::ops::RangeInclusive<usize>) -> BoxedStrategy<Case> {
    let huge = prop_oneof![Just(1_000_000usize), Just((1 << 20) + 3), Just(1 << 33)];
    orders
        .prop_flat_map(move |n| prop::collection::vec(huge.clone(), n))
        .prop_flat_map(|shape| (prop::collection::vec((coordinates(&shape), value()), 0..8), Just(shape)))
        .prop_map(|(entries, shape)| Case { shape, entries })
        .boxed()
}

fn permutation(n: usize) -> BoxedStrategy<Vec<usize>> {
    Just((0..n).collect::<Vec<_>>()).prop_shuffle().boxed()
}

// ---------------------------------------------------------------- formats

fn mode(level: LevelFormat, mode: usize) -> FormatLevel {
    FormatLevel {
        level,
        projection: Projection::mode(mode),
    }
}

/// Every named format of order `n` that stores one mode per level.
fn per_mode_formats(n: usize, perm: &[usize]) -> Vec<Format> {
    vec![
        Format::dense(n),
        Format::dense_ordered(perm),
        Format::coo(n),
        Format::coo_ordered(perm),
        Format::csf(n),
        Format::csf_ordered(perm),
    ]
}

/// Chains of non-unique levels over a unique bottom level, other than COO.
fn chain_formats(n: usize) -> Vec<Format> {
    if n < 2 {
        return vec![];
    }
    let nu = LevelFormat::compressed().non_unique();
    let mut compressed = vec![nu; n];
    compressed[n - 1] = LevelFormat::compressed();
    let order: Vec<usize> = (0..n).collect();
    let mut formats = vec![Format::from_levels(&compressed, &order).unwrap()];
    if n >= 3 {
        // A unique top level, then a COO-like chain.
        let mut mixed = compressed;
        mixed[0] = LevelFormat::compressed();
        mixed[n - 1] = LevelFormat::singleton();
        formats.push(Format::from_levels(&mixed, &order).unwrap());
    }
    formats
}

/// Compositions of per-mode levels that no named format covers.
fn matrix_compositions() -> Vec<Format> {
    let dense = LevelFormat::dense();
    let compressed = LevelFormat::compressed();
    let hashed = LevelFormat::hashed();
    let levels = |l: &[LevelFormat], order: &[usize]| Format::from_levels(l, order).unwrap();
    vec![
        levels(&[dense, hashed], &[0, 1]),
        levels(&[dense, hashed], &[1, 0]),
        levels(&[compressed.non_unique(), LevelFormat::singleton()], &[0, 1]),
        levels(&[compressed, dense], &[0, 1]),
        levels(&[hashed, compressed], &[0, 1]),
        levels(&[hashed, compressed.unordered()], &[1, 0]),
        levels(&[compressed, compressed.non_unique()], &[0, 1]),
        // Row-major ELL: K slots below each row.
        Format::new(
            2,
            vec![
                mode(dense, 0),
                FormatLevel {
                    level: dense,
                    projection: Projection::Slot { row: 0 },
                },
                mode(LevelFormat::singleton(), 1),
            ],
        )
        .unwrap(),
        // DIA of the transpose: diagonals numbered by row - column.
        Format::new(
            2,
            vec![
                FormatLevel {
                    level: dense,
                    projection: Projection::Diagonal { row: 1, col: 0 },
                },
                mode(LevelFormat::range(), 1),
                mode(LevelFormat::offset(), 0),
            ],
        )
        .unwrap(),
    ]
}

/// Every matrix format: the named ones and the compositions.
fn matrix_formats() -> Vec<Format> {
    let mut formats = per_mode_formats(2, &[1, 0]);
    formats.extend([
        Format::csr(),
        Format::csc(),
        Format::dcsr(),
        Format::dcsc(),
        Format::hash_rows(),
        Format::dia(),
        Format::ell(),
    ]);
    formats.extend(matrix_compositions());
    formats
}

/// Formats whose levels never have a position per coordinate of a mode.
fn hypersparse_formats(n: usize) -> Vec<Format> {
    let reversed: Vec<usize> = (0..n).rev().collect();
    let mut formats = vec![
        Format::coo(n),
        Format::coo_ordered(&reversed),
        Format::csf(n),
        Format::csf_ordered(&reversed),
    ];
    match n {
        1 => formats.extend([Format::sparse_vector(), Format::hash_vector()]),
        2 => formats.extend([
            Format::dcsr(),
            Format::dcsc(),
            Format::from_levels(&[LevelFormat::hashed(), LevelFormat::compressed()], &[0, 1]).unwrap(),
        ]),
        _ => {}
    }
    formats
}

// ----------------------------------------------------------------- checks

/// The list accumulated into a row-major dense array, directly.
fn dense_reference(list: &CoordinateList) -> Vec<f64> {
    let n: usize = list.shape().iter().product();
    let mut out = vec![0.0; n];
    for (c, v) in list.iter() {
        let flat = c
            .iter()
            .zip(list.shape())
            .fold(0usize, |acc, (&c, &d)| acc * d + c as usize);
        out[flat] += v;
    }
    out
}

/// Packs `case` into `format` and checks everything a round trip promises.
fn check_round_trip(case: &Case, format: &Format) -> Result<(), TestCaseError> {
    let list = case.list();
    let t = Tensor::pack(&list, format.clone())
        .map_err(|e| TestCaseError::fail(format!("{format}: packing failed: {e}")))?;
    prop_assert_eq!(t.to_coordinates(), list.pruned(), "{}", format);
    prop_assert_eq!(t.shape(), &case.shape[..]);
    prop_assert_eq!(t.level_sizes().last().copied().unwrap_or(1), t.stored());
    if case.components().is_some_and(|n| n <= 4096) {
        prop_assert_eq!(t.to_dense_vec().unwrap(), dense_reference(&list), "{}", format);
    }
    // The packer's output passes validation as raw arrays.
    let rebuilt = Tensor::from_parts(&case.shape, format.clone(), t.levels().to_vec(), t.values().to_vec())
        .map_err(|e| TestCaseError::fail(format!("{format}: packed arrays rejected: {e}")))?;
    prop_assert_eq!(&rebuilt, &t);
    Ok(())
}

fn permute_by_hand(list: &CoordinateList, perm: &[usize]) -> CoordinateList {
    let shape: Vec<usize> = perm.iter().map(|&m| list.shape()[m]).collect();
    let mut out = CoordinateList::new(&shape);
    for (c, v) in list.iter() {
        let c: Vec<u64> = perm.iter().map(|&m| c[m]).collect();
        out.push(&c, v).unwrap();
    }
    out.pruned()
}

// ------------------------------------------------------------ properties

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn per_mode_formats_round_trip_tensors_of_order_0_to_4(
        (case, perm) in case(shape(0..=4, 4), 24)
            .prop_flat_map(|c| { let n = c.shape.len(); (Just(c), permutation(n)) })
    ) {
        let n = case.shape.len();
        for f in per_mode_formats(n, &perm).into_iter().chain(chain_formats(n)) {
            check_round_trip(&case, &f)?;
        }
    }

    #[test]
    fn matrix_formats_round_trip_small_matrices(case in case(shape(2..=2, 9), 40)) {
        for f in matrix_formats() {
            check_round_trip(&case, &f)?;
        }
    }

    #[test]
    fn bcsr_round_trips_matrices_whose_shape_is_a_multiple_of_the_block(
        (case, r, c) in (1usize..=3, 1usize..=3, 0usize..=4, 0usize..=4)
            .prop_flat_map(|(r, c, m, n)| {
                (case(Just(vec![m * r, n * c]).boxed(), 30), Just(r), Just(c))
            })
    ) {
        check_round_trip(&case, &Format::bcsr(r, c).unwrap())?;
    }

    #[test]
    fn vector_formats_round_trip_vectors(case in case(shape(1..=1, 300), 40)) {
        for f in [
            Format::sparse_vector(),
            Format::hash_vector(),
            Format::dense(1),
            Format::coo(1),
            Format::csf(1),
        ] {
            check_round_trip(&case, &f)?;
        }
    }

    #[test]
    fn sparse_formats_round_trip_hypersparse_tensors(case in hypersparse(1..=4)) {
        for f in hypersparse_formats(case.shape.len()) {
            check_round_trip(&case, &f)?;
        }
    }

    #[test]
    fn csr_round_trips_a_hypersparse_matrix_of_a_million_rows(
        case in hypersparse(2..=2).prop_filter("a million rows", |c| c.shape[0] < 1 << 21)
    ) {
        check_round_trip(&case, &Format::csr())?;
    }

    #[test]
    fn hash_rows_round_trips_matrices_with_one_very_long_row(
        case in (1usize..6, 100usize..2000)
            .prop_flat_map(|(m, n)| case(Just(vec![m, n]).boxed(), 200))
    ) {
        check_round_trip(&case, &Format::hash_rows())?;
        check_round_trip(&case, &Format::ell())?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn conversion_between_every_pair_of_matrix_formats_preserves_coordinates(
        case in (0usize..=4, 0usize..=4)
            .prop_flat_map(|(m, n)| case(Just(vec![2 * m, 2 * n]).boxed(), 24))
    ) {
        let mut formats = matrix_formats();
        formats.push(Format::bcsr(2, 2).unwrap());
        let expect = case.list().pruned();
        for from in &formats {
            let t = Tensor::pack(&case.list(), from.clone()).unwrap();
            for to in &formats {
                let u = t.convert(to).map_err(|e| {
                    TestCaseError::fail(format!("{from} -> {to}: {e}"))
                })?;
                prop_assert_eq!(u.format(), to);
                prop_assert_eq!(u.to_coordinates(), expect.clone(), "{} -> {}", from, to);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn permute_matches_permuting_the_list_by_hand(
        (case, perm, source, target) in case(shape(1..=4, 4), 24)
            .prop_flat_map(|c| {
                let n = c.shape.len();
                (Just(c), permutation(n), 0usize..6, 0usize..6)
            })
    ) {
        let n = case.shape.len();
        let list = case.list();
        let formats = per_mode_formats(n, &(0..n).rev().collect::<Vec<_>>());
        let t = Tensor::pack(&list, formats[source].clone()).unwrap();
        let u = t.permute(&perm, &formats[target]).unwrap();
        let expect = permute_by_hand(&list, &perm);
        prop_assert_eq!(u.shape(), expect.shape());
        prop_assert_eq!(u.to_coordinates(), expect);
    }

    #[test]
    fn csc_of_a_matrix_stores_the_arrays_of_csr_of_its_transpose(
        case in case(shape(2..=2, 9), 30)
    ) {
        let csc = Tensor::pack(&case.list(), Format::csc()).unwrap();
        // Transposed by hand, explicit zeros kept: packing stores them.
        let transposed = Case {
            shape: vec![case.shape[1], case.shape[0]],
            entries: case.entries.iter().map(|(c, v)| (vec![c[1], c[0]], *v)).collect(),
        };
        let transpose = Tensor::pack(&transposed.list(), Format::csr()).unwrap();
        prop_assert_eq!(csc.levels(), transpose.levels());
        prop_assert_eq!(csc.values(), transpose.values());
    }
}

// ----------------------------------------------------- fixed edge cases

#[test]
fn every_named_format_round_trips_the_paper_matrix() {
    let entries = [
        (3, 4, 9),
        (0, 0, 5),
        (0, 1, 1),
        (1, 0, 7),
        (3, 3, 4),
        (1, 1, 2),
        (3, 0, 8),
        (1, 1, 1), // duplicate: (1, 1) = 3
    ];
    let case = Case {
        shape: vec![4, 6],
        entries: entries.iter().map(|&(i, j, v)| (vec![i, j], v)).collect(),
    };
    let mut formats = matrix_formats();
    formats.push(Format::bcsr(2, 3).unwrap());
    formats.push(Format::bcsr(4, 6).unwrap());
    formats.push(Format::bcsr(1, 1).unwrap());
    for f in &formats {
        check_round_trip(&case, f).unwrap();
    }
}

#[test]
fn an_order_0_tensor_round_trips_its_summed_value() {
    let mut list = CoordinateList::new(&[]);
    list.push(&[], 2.0).unwrap();
    list.push(&[], 3.0).unwrap();
    for f in [Format::dense(0), Format::coo(0), Format::csf(0)] {
        let t = Tensor::pack(&list, f.clone()).unwrap();
        assert_eq!(t.values(), [5.0], "{f}");
        assert_eq!(t.to_dense_vec().unwrap(), [5.0]);
        assert_eq!(t.to_coordinates(), list.pruned());
        let zero = Tensor::pack(&CoordinateList::<f64>::new(&[]), f).unwrap();
        assert_eq!(zero.values(), [0.0]);
        assert!(zero.to_coordinates().is_empty());
    }
}

#[test]
fn one_by_one_matrices_round_trip_in_every_format() {
    for v in [0, 7] {
        let case = Case {
            shape: vec![1, 1],
            entries: vec![(vec![0, 0], v)],
        };
        let mut formats = matrix_formats();
        formats.push(Format::bcsr(1, 1).unwrap());
        for f in &formats {
            check_round_trip(&case, f).unwrap();
        }
    }
}

#[test]
fn zero_sized_matrices_round_trip_in_every_format() {
    for shape in [[0, 0], [0, 5], [5, 0]] {
        let case = Case {
            shape: shape.to_vec(),
            entries: vec![],
        };
        for f in &matrix_formats() {
            check_round_trip(&case, f).unwrap();
        }
    }
}

#[test]
fn a_singleton_level_whose_entries_share_its_coordinate_packs_them_below_one_position() {
    // One nonzero column per row, with a dense fiber below it.
    let f = Format::from_levels(
        &[LevelFormat::dense(), LevelFormat::singleton(), LevelFormat::dense()],
        &[0, 1, 2],
    )
    .unwrap();
    let case = Case {
        shape: vec![3, 2, 4],
        entries: vec![(vec![0, 1, 0], 1), (vec![2, 0, 3], 2), (vec![0, 1, 1], 3)],
    };
    check_round_trip(&case, &f).unwrap();
    let t = Tensor::pack(&case.list(), f).unwrap();
    assert_eq!(t.level(1).arrays[0].to_i64_vec(), [1, 0, 0], "row 1 is padding");
    assert_eq!(t.values()[..4], [1.0, 3.0, 0.0, 0.0]);
}

#[test]
fn a_singleton_level_refuses_two_distinct_children_of_one_parent() {
    let f = Format::from_levels(&[LevelFormat::dense(), LevelFormat::singleton()], &[0, 1]).unwrap();
    let mut list = CoordinateList::new(&[2, 3]);
    list.push(&[1, 0], 1.0).unwrap();
    list.push(&[1, 2], 1.0).unwrap();
    match Tensor::pack(&list, f) {
        Err(FormatError::BadFormat { reason, .. }) => {
            assert!(reason.contains("parent position 1 has 2 distinct children"), "{reason}")
        }
        other => panic!("expected BadFormat, got {other:?}"),
    }
}

#[test]
fn cancelling_duplicates_leave_an_explicit_zero_that_is_pruned() {
    let mut list = CoordinateList::new(&[3, 3]);
    list.push(&[1, 2], 4.0).unwrap();
    list.push(&[1, 2], -4.0).unwrap();
    list.push(&[0, 0], 1.0).unwrap();
    let t = Tensor::pack(&list, Format::csr()).unwrap();
    assert_eq!(t.values(), [1.0, 0.0], "packing keeps the stored zero");
    assert_eq!(t.to_coordinates().len(), 1);
    assert_eq!(t.stored_entries().len(), 2);
}

// ------------------------------------------------------------ index widths

fn widths(t: &Tensor) -> Vec<Vec<IndexWidth>> {
    t.levels()
        .iter()
        .map(|l| l.arrays.iter().map(IndexArray::width).collect())
        .collect()
}

#[test]
fn small_extents_are_stored_in_32_bit_arrays() {
    let mut list = CoordinateList::new(&[4, 6]);
    list.push(&[3, 4], 9.0).unwrap();
    list.push(&[0, 1], 1.0).unwrap();
    use IndexWidth::U32;
    for (f, expect) in [
        (Format::csr(), vec![vec![], vec![U32, U32]]),
        (Format::dcsr(), vec![vec![U32, U32], vec![U32, U32]]),
        (Format::coo(2), vec![vec![U32, U32], vec![U32]]),
        (Format::hash_rows(), vec![vec![], vec![U32]]),
        (Format::ell(), vec![vec![], vec![], vec![U32]]),
        (Format::dia(), vec![vec![U32, U32], vec![], vec![]]),
    ] {
        let t = Tensor::pack(&list, f.clone()).unwrap();
        assert_eq!(widths(&t), expect, "{f}");
    }
}

#[test]
fn a_hypersparse_vector_of_dimension_2_pow_33_stores_64_bit_coordinates() {
    let n = 1usize << 33;
    let mut list = CoordinateList::new(&[n]);
    for (c, v) in [(n as u64 - 1, 3.0), (0, 1.0), ((1 << 32) + 1, 2.0)] {
        list.push(&[c], v).unwrap();
    }
    use IndexWidth::{U32, U64};
    for (f, expect) in [
        (Format::sparse_vector(), vec![vec![U32, U64]]),
        (Format::coo(1), vec![vec![U32, U64]]),
        (Format::hash_vector(), vec![vec![U64]]),
    ] {
        let t = Tensor::pack(&list, f.clone()).unwrap();
        assert_eq!(widths(&t), expect, "{f}");
        assert_eq!(t.to_coordinates(), list.pruned(), "{f}");
        let rebuilt = Tensor::from_parts(&[n], f.clone(), t.levels().to_vec(), t.values().to_vec()).unwrap();
        assert_eq!(rebuilt, t);
    }
    let t = Tensor::pack(&list, Format::sparse_vector()).unwrap();
    assert_eq!(t.level(0).arrays[1].to_i64_vec(), [0, (1 << 32) + 1, n as i64 - 1]);
}

#[test]
fn index_width_switches_exactly_when_the_extent_exceeds_u32_max() {
    let max = u32::MAX as usize;
    for (extent, expect) in [(max, IndexWidth::U32), (max + 1, IndexWidth::U64)] {
        let mut list = CoordinateList::new(&[extent]);
        list.push(&[extent as u64 - 1], 1.0).unwrap();
        let t = Tensor::pack(&list, Format::sparse_vector()).unwrap();
        assert_eq!(t.level(0).arrays[1].width(), expect, "compressed, extent {extent}");
        // A hashed level's empty marker is the extent itself.
        let h = Tensor::pack(&list, Format::hash_vector()).unwrap();
        assert_eq!(h.level(0).arrays[0].width(), expect, "hashed, extent {extent}");
        assert_eq!(h.to_coordinates(), list.pruned());
    }
}

#[test]
fn a_hypersparse_matrix_with_64_bit_columns_converts_between_sparse_formats() {
    let n = (1usize << 32) + 7;
    let mut list = CoordinateList::new(&[3, n]);
    for (i, j, v) in [(2, n as u64 - 1, 1.0), (0, 5, 2.0), (2, 0, 3.0)] {
        list.push(&[i, j], v).unwrap();
    }
    let t = Tensor::pack(&list, Format::csr()).unwrap();
    assert_eq!(widths(&t), vec![vec![], vec![IndexWidth::U32, IndexWidth::U64]]);
    for f in [Format::coo(2), Format::dcsc(), Format::csf(2), Format::hash_rows()] {
        assert_eq!(t.convert(&f).unwrap().to_coordinates(), list.pruned(), "{f}");
    }
}
