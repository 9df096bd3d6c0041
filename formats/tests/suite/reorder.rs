//! Orderings on awkward inputs: every method gives each mode a valid
//! permutation (every coordinate exactly once, checked here independently
//! of `Permutation`'s own check) on empty matrices, 1 x 1, 0 x n, empty
//! rows and columns, disconnected graphs, rectangular matrices, vectors and
//! higher orders, and on random tensors (proptest); applying it and its
//! inverse gives the tensor back; reverse Cuthill–McKee keeps connected
//! components contiguous and narrows a shuffled grid's band; permutation
//! files round-trip and bad ones are refused with file and line.

use std::path::Path;

use proptest::prelude::*;
use tessera_formats::reorder::{
    band_profile, order_entries, parse_permutations, rcm_order, write_permutations_to, Method, ModePermutations,
};
use tessera_formats::{CoordinateList, Format, Tensor};

fn list(shape: &[usize], entries: &[&[u64]]) -> CoordinateList<f64> {
    let mut l = CoordinateList::new(shape);
    for (k, c) in entries.iter().enumerate() {
        l.push(c, k as f64 + 1.0).unwrap();
    }
    l
}

/// Each permuted mode's old-coordinate list, sorted, is `0..size`; and the
/// permutation and its inverse take the entries there and back.
fn check_valid(entries: &CoordinateList<f64>, perms: &ModePermutations, what: &str) {
    assert_eq!(perms.shape(), entries.shape(), "{what}");
    for (mode, p) in perms.modes().iter().enumerate() {
        let Some(p) = p else { continue };
        let mut olds = p.new_to_old().to_vec();
        olds.sort_unstable();
        assert!(
            olds.iter().copied().eq(0..entries.shape()[mode]),
            "{what}: mode {mode} is not a permutation"
        );
        for old in 0..p.len() {
            assert_eq!(p.old_of(p.new_of(old)), old, "{what}: mode {mode}");
        }
    }
    let moved = perms.apply(entries).unwrap();
    assert_eq!(moved.len(), entries.len(), "{what}");
    assert_eq!(
        perms.inverse().apply(&moved).unwrap().pruned(),
        entries.pruned(),
        "{what}"
    );
}

fn awkward() -> Vec<(&'static str, CoordinateList<f64>)> {
    vec![
        ("empty 3x3", list(&[3, 3], &[])),
        ("0x0", list(&[0, 0], &[])),
        ("0x4", list(&[0, 4], &[])),
        ("4x0", list(&[4, 0], &[])),
        ("1x1", list(&[1, 1], &[&[0, 0]])),
        ("empty rows and columns", list(&[5, 5], &[&[1, 3], &[3, 1], &[3, 3]])),
        (
            "two components and an isolated vertex",
            list(&[6, 6], &[&[0, 4], &[4, 0], &[2, 5], &[5, 2], &[5, 5], &[4, 4]]),
        ),
        ("unsymmetric square", list(&[4, 4], &[&[0, 3], &[1, 0], &[2, 2]])),
        ("rectangular wide", list(&[2, 6], &[&[0, 5], &[1, 0], &[1, 5]])),
        ("rectangular tall", list(&[6, 2], &[&[5, 0], &[0, 1], &[3, 1]])),
        ("duplicates", list(&[3, 3], &[&[2, 1], &[2, 1], &[0, 0]])),
        ("vector", list(&[5], &[&[4], &[1]])),
        ("third order", list(&[3, 2, 4], &[&[2, 1, 3], &[0, 0, 0], &[2, 0, 3]])),
        ("scalar", list(&[], &[&[]])),
    ]
}

#[test]
fn every_method_gives_valid_permutations_on_awkward_inputs() {
    for (what, entries) in awkward() {
        for method in Method::ALL {
            let square = entries.order() == 2 && entries.shape()[0] == entries.shape()[1];
            match order_entries(&entries, method) {
                Ok(perms) => check_valid(&entries, &perms, &format!("{what}, {method}")),
                Err(e) => {
                    // Only rcm refuses, and only what is not a square matrix.
                    assert!(method == Method::Rcm && !square, "{what}, {method}: {e}");
                    assert!(e.to_string().contains("square matrix"), "{e}");
                }
            }
        }
    }
}

#[test]
fn rcm_keeps_each_connected_component_contiguous() {
    // Components {0, 4}, {2, 5}, {1}, {3}: each occupies consecutive new
    // coordinates.
    let entries = list(&[6, 6], &[&[0, 4], &[4, 0], &[2, 5], &[5, 2]]);
    let p = rcm_order(&entries).unwrap();
    assert_eq!(p.new_of(0).abs_diff(p.new_of(4)), 1);
    assert_eq!(p.new_of(2).abs_diff(p.new_of(5)), 1);
}

/// The 5-point Laplacian of an n x n grid, its vertices numbered by a
/// fixed scrambling (`v -> v * step mod n²`, step coprime to n²).
fn shuffled_grid(n: u64, step: u64) -> CoordinateList<f64> {
    let label = |v: u64| (v * step) % (n * n);
    let mut l = CoordinateList::new(&[(n * n) as usize, (n * n) as usize]);
    for r in 0..n {
        for c in 0..n {
            let v = r * n + c;
            l.push(&[label(v), label(v)], 4.0).unwrap();
            if c + 1 < n {
                l.push(&[label(v), label(v + 1)], -1.0).unwrap();
                l.push(&[label(v + 1), label(v)], -1.0).unwrap();
            }
            if r + 1 < n {
                l.push(&[label(v), label(v + n)], -1.0).unwrap();
                l.push(&[label(v + n), label(v)], -1.0).unwrap();
            }
        }
    }
    l
}

#[test]
fn rcm_and_lexi_narrow_a_shuffled_grid() {
    let n = 20;
    let grid = shuffled_grid(n, 37);
    let before = band_profile(&grid).unwrap();
    let rcm = order_entries(&grid, Method::Rcm).unwrap().apply(&grid).unwrap();
    let after = band_profile(&rcm).unwrap();
    // A level structure of an n x n grid from a corner has levels of at
    // most n vertices, so neighbours are at most 2n - 1 apart.
    assert!(after.bandwidth < 2 * n, "{after}");
    assert!(before.bandwidth > 10 * n, "{before}");
    assert!(after.profile * 4 < before.profile, "{before} -> {after}");
    let lexi = order_entries(&grid, Method::Lexi).unwrap().apply(&grid).unwrap();
    assert!(band_profile(&lexi).unwrap().profile < before.profile);
}

#[test]
fn permuted_tensors_keep_their_format() {
    let grid = shuffled_grid(4, 5);
    let a = Tensor::pack(&grid, Format::csc()).unwrap();
    let perms = order_entries(&grid, Method::Degree).unwrap();
    let b = perms.apply_to_tensor(&a).unwrap();
    assert_eq!(b.format(), a.format());
    assert_eq!(b.to_coordinates(), perms.apply(&grid).unwrap().pruned());
}

#[test]
fn permutation_files_round_trip_and_bad_ones_name_their_line() {
    let entries = list(&[3, 5, 2], &[&[2, 4, 1], &[0, 1, 0]]);
    let mut perms = order_entries(&entries, Method::Lexi).unwrap();
    perms = ModePermutations::new(
        perms.shape(),
        vec![perms.mode(0).cloned(), None, perms.mode(2).cloned()],
    )
    .unwrap();
    let mut text = Vec::new();
    write_permutations_to(&mut text, &perms, "a comment\nover two lines").unwrap();
    let back = parse_permutations(&text, Path::new("p.perm")).unwrap();
    assert_eq!(back, perms);

    let cases: [(&str, &str); 8] = [
        (
            "%%tessera permutation\nmodes 1\nmode 1 2000000000\n1\n",
            "p.perm:3: mode 1 of size 2000000000 is permuted, but the file is too short",
        ),
        ("", "p.perm:1: the file is empty"),
        (
            "%%tessera permutation\nmodes x\n",
            "p.perm:2: `x` is not a number of modes",
        ),
        (
            "%%tessera permutation\nmodes 1\nmode 2 3\n",
            "p.perm:3: expected `mode 1 SIZE [unchanged]`",
        ),
        (
            "%%tessera permutation\nmodes 1\nmode 1 3\n1\n4\n",
            "p.perm:5: `4` is not a coordinate of mode 1 (1 to 3)",
        ),
        (
            "%%tessera permutation\nmodes 1\nmode 1 3\n1\n2\n",
            "p.perm:6: mode 1 lists 2 of its 3 coordinates",
        ),
        (
            "%%tessera permutation\nmodes 1\nmode 1 1\n1\n1\n",
            "p.perm:5: unexpected `1` after the last mode",
        ),
        (
            "%%MatrixMarket matrix\n",
            "p.perm:1: expected `%%tessera permutation` first",
        ),
    ];
    for (text, want) in cases {
        let e = parse_permutations(text.as_bytes(), Path::new("p.perm"))
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{text:?}: {e}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Random tensors of orders 1 to 3 with sizes 0 to 7: every method's
    /// permutations are valid, or (rcm only) refused for non-square shapes.
    #[test]
    fn random_tensors_get_valid_permutations(
        shape in prop::collection::vec(0usize..8, 1..4),
        picks in prop::collection::vec(prop::collection::vec(0u64..8, 3), 0..30),
    ) {
        let mut entries = CoordinateList::new(&shape);
        for (k, p) in picks.iter().enumerate() {
            if shape.iter().all(|&s| s > 0) {
                let c: Vec<u64> = shape.iter().zip(p).map(|(&s, &x)| x % s as u64).collect();
                entries.push(&c, k as f64 + 1.0).unwrap();
            }
        }
        for method in Method::ALL {
            match order_entries(&entries, method) {
                Ok(perms) => check_valid(&entries, &perms, &format!("{shape:?} {method}")),
                Err(e) => prop_assert!(
                    method == Method::Rcm && !(shape.len() == 2 && shape[0] == shape[1]),
                    "{method}: {e}"
                ),
            }
        }
    }
}

#[test]
fn dense_tensors_are_permuted_like_their_entries() {
    // The dense path moves values directly; it must agree with permuting
    // the entries, explicit zeros included.
    let values: Vec<f64> = (0..24).map(|k| if k % 5 == 0 { 0.0 } else { k as f64 }).collect();
    let t = Tensor::from_dense(&[2, 3, 4], values).unwrap();
    let entries = t.to_coordinates();
    let perms = order_entries(&entries, Method::Degree).unwrap();
    assert!(!perms.is_identity());
    let moved = perms.apply_to_tensor(&t).unwrap();
    assert_eq!(moved.format(), t.format());
    assert_eq!(moved.to_coordinates(), perms.apply(&entries).unwrap().pruned());
    assert_eq!(perms.inverse().apply_to_tensor(&moved).unwrap(), t);
}

#[test]
fn permuted_sparse_tensors_match_their_permuted_entries_in_every_format() {
    let grid = shuffled_grid(6, 7);
    let perms = order_entries(&grid, Method::Lexi).unwrap();
    let want = perms.apply(&grid).unwrap().pruned();
    for format in [
        Format::csr(),
        Format::csc(),
        Format::coo(2),
        Format::dcsr(),
        Format::dia(),
    ] {
        let t = Tensor::pack(&grid, format.clone()).unwrap();
        let moved = perms.apply_to_tensor(&t).unwrap();
        assert_eq!(moved.format(), &format);
        assert_eq!(moved.to_coordinates(), want, "{format}");
    }
}
