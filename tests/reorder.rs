//! `tessera reorder` and `tessera eval --reorder`, run as a user runs them:
//! reordered files hold the same entries under a permutation that the saved
//! file undoes, reordered evaluation writes the same result as plain
//! evaluation, and every misuse ends in one line on standard error.

use std::fs;
use std::path::{Path, PathBuf};

use predicates::prelude::*;
use tessera::formats::io::read_mtx;
use tessera::formats::reorder::{band_profile, load_permutations};
use tessera::formats::CoordinateList;

mod common;
use common::{four_elt, tessera};

fn scratch(test: &str) -> PathBuf {
    common::scratch("reorder", test)
}

fn path(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

fn entries(file: &str) -> CoordinateList<f64> {
    let mut list = read_mtx(Path::new(file)).unwrap().entries;
    list.canonicalize();
    list
}

/// The path 0 - 5 - 2 - 7 - 1 - 4 - 6 - 3 (0-based), stored both ways. As
/// numbered, its bandwidth is 6 (edge 7 - 1) and its profile 2 × 17 (rows
/// 4, 5, 6, 7 reach back 3, 5, 3, 6); any Cuthill–McKee order of a path is
/// the path itself: bandwidth 1, profile 2 × 7.
const PATH_MTX: &str = "%%MatrixMarket matrix coordinate pattern symmetric\n\
8 8 7\n6 1\n3 6\n8 3\n2 8\n5 2\n7 5\n4 7\n";

#[test]
fn reordered_files_hold_the_same_entries_and_the_saved_permutation_undoes_them() {
    let dir = scratch("roundtrip");
    for method in ["lexi", "rcm", "degree"] {
        let out = path(&dir, &format!("{method}.mtx"));
        let perm = path(&dir, &format!("{method}.perm"));
        tessera()
            .args([
                "reorder",
                &four_elt(),
                &out,
                "--method",
                method,
                "--save-permutation",
                &perm,
            ])
            .assert()
            .success()
            .stdout(predicate::str::contains(format!("reordered by {method}")))
            .stdout(predicate::str::is_match(r"before: bandwidth \d+ \(lower \d+, upper \d+\), profile \d+").unwrap())
            .stdout(predicate::str::contains("after:  bandwidth"))
            .stdout(predicate::str::contains("cost: ordering"));
        let original = entries(&four_elt());
        let reordered = entries(&out);
        assert_eq!(reordered.len(), original.len(), "{method}");
        let perms = load_permutations(Path::new(&perm)).unwrap();
        let mut back = perms.inverse().apply(&reordered).unwrap();
        back.canonicalize();
        assert_eq!(back, original, "{method}");
        // The bandwidth printed is the reordered file's.
        let after = band_profile(&reordered).unwrap();
        tessera()
            .args(["reorder", &four_elt(), &path(&dir, "again.mtx"), "--permutation", &perm])
            .assert()
            .success()
            .stdout(predicate::str::contains(format!("after:  {after}")));
    }
}

#[test]
fn rcm_puts_a_shuffled_path_on_a_band_of_width_one() {
    let dir = scratch("path");
    let input = path(&dir, "path.mtx");
    fs::write(&input, PATH_MTX).unwrap();
    tessera()
        .args(["reorder", &input, &path(&dir, "out.mtx"), "--method", "rcm"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "before: bandwidth 6 (lower 6, upper 6), profile 34",
        ))
        .stdout(predicate::str::contains(
            "after:  bandwidth 1 (lower 1, upper 1), profile 14",
        ));
}

/// The values of a written result, canonical.
fn result_of(args: &[&str], dir: &Path, name: &str) -> CoordinateList<f64> {
    let out = path(dir, name);
    let mut all: Vec<&str> = args.to_vec();
    let target = format!("y:{out}");
    all.extend(["-o", &target]);
    tessera().args(&all).assert().success();
    entries(&out).pruned()
}

fn assert_close(a: &CoordinateList<f64>, b: &CoordinateList<f64>) {
    assert_eq!(a.len(), b.len());
    for ((ca, va), (cb, vb)) in a.iter().zip(b.iter()) {
        assert_eq!(ca, cb);
        assert!((va - vb).abs() <= 1e-9 * va.abs().max(vb.abs()), "{ca:?}: {va} vs {vb}");
    }
}

#[test]
fn reordered_evaluation_writes_the_plain_result() {
    let dir = scratch("eval");
    let a = four_elt();
    let input = format!("A:{a}");
    let spmv = ["eval", "y(i) = A(i,j) * x(j)", "-i", &input, "-g", "x:15606:1:3"];
    let plain = result_of(&spmv, &dir, "plain.mtx");
    for method in ["lexi", "rcm", "degree"] {
        let mut args = spmv.to_vec();
        args.extend(["--reorder", method]);
        assert_close(&result_of(&args, &dir, &format!("{method}.mtx")), &plain);
    }
    let spmm = [
        "eval",
        "y(i,j) = A(i,k) * X(k,j)",
        "-i",
        &input,
        "-g",
        "X:15606x4:1:5",
        "-f",
        "y:dense",
    ];
    let plain = result_of(&spmm, &dir, "spmm.mtx");
    let mut args = spmm.to_vec();
    args.extend(["--reorder", "lexi"]);
    assert_close(&result_of(&args, &dir, "spmm-lexi.mtx"), &plain);
}

#[test]
fn the_plan_says_what_was_permuted_and_a_saved_permutation_is_reused() {
    let dir = scratch("plan");
    let perm = path(&dir, "a.perm");
    tessera()
        .args([
            "reorder",
            &four_elt(),
            &path(&dir, "a.mtx"),
            "-m",
            "rcm",
            "--save-permutation",
            &perm,
        ])
        .assert()
        .success();
    let input = format!("A:{}", four_elt());
    let from = format!("A:{perm}");
    let plain = result_of(
        &["eval", "y(i) = A(i,j) * x(j)", "-i", &input, "-g", "x:15606:1:9"],
        &dir,
        "plain.mtx",
    );
    let args = [
        "eval",
        "y(i) = A(i,j) * x(j)",
        "-i",
        &input,
        "-g",
        "x:15606:1:9",
        "--reorder-from",
        &from,
    ];
    assert_close(&result_of(&args, &dir, "saved.mtx"), &plain);
    tessera()
        .args([
            "eval",
            "y(i) = A(i,j) * x(j)",
            "-i",
            &input,
            "-g",
            "x:15606:1",
            "--reorder",
            "rcm",
        ])
        .args(["--print", "plan", "--time", "2"])
        .assert()
        .success()
        .stdout(predicate::str::contains("reordering: rcm, from the structure of A"))
        .stdout(predicate::str::contains("  inputs permuted: A(i,j), x(j)"))
        .stdout(predicate::str::contains("  result permuted back: y(i)"))
        .stdout(predicate::str::contains("  cost: ordering"))
        .stdout(predicate::str::contains(
            "reorder: rcm from the structure of A: ordering",
        ));
}

#[test]
fn misuse_ends_in_one_line_on_standard_error() {
    let dir = scratch("errors");
    let rect = path(&dir, "rect.mtx");
    fs::write(&rect, "%%MatrixMarket matrix coordinate real general\n2 3 1\n1 2 1.5\n").unwrap();
    let one_line = || predicate::str::is_match(r"^error: [^\n]*\n$").unwrap();
    tessera()
        .args(["reorder", &rect, &path(&dir, "o.mtx"), "--method", "rcm"])
        .assert()
        .code(1)
        .stderr(one_line())
        .stderr(predicate::str::contains("square matrix").and(predicate::str::contains("2x3")));
    tessera()
        .args(["reorder", &rect, &path(&dir, "o.mtx"), "--method", "metis"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "`metis` is not a reordering method (expected lexi, rcm, degree)",
        ));
    let bad = path(&dir, "bad.perm");
    fs::write(
        &bad,
        "%%tessera permutation\nmodes 2\nmode 1 2\n2\n2\nmode 2 3 unchanged\n",
    )
    .unwrap();
    tessera()
        .args(["reorder", &rect, &path(&dir, "o.mtx"), "--permutation", &bad])
        .assert()
        .code(1)
        .stderr(one_line())
        .stderr(predicate::str::contains(
            "bad.perm:5: coordinate 2 of mode 1 is listed twice",
        ));
    let input = format!("A:{rect}");
    tessera()
        .args([
            "eval",
            "y(i) = A(i,j) * x(j)",
            "-i",
            &input,
            "-g",
            "x:3:1",
            "--reorder",
            "lexi",
        ])
        .args(["--reorder-from", &format!("A:{bad}")])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot be used with"));
    let good = path(&dir, "good.perm");
    fs::write(
        &good,
        "%%tessera permutation\nmodes 2\nmode 1 2\n2\n1\nmode 2 3 unchanged\n",
    )
    .unwrap();
    tessera()
        .args([
            "eval",
            "y(i) = A(i,j) * x(j)",
            "-i",
            &input,
            "-g",
            "x:3:1",
            "--reorder-from",
            &format!("x:{good}"),
        ])
        .assert()
        .code(1)
        .stderr(one_line())
        .stderr(predicate::str::contains("shape 2x3").and(predicate::str::contains("x has shape 3")));
    tessera()
        .args(["eval", "y(i) = x(i) * 2", "-g", "x:3:1", "--reorder", "degree"])
        .assert()
        .code(1)
        .stderr(one_line())
        .stderr(predicate::str::contains("every input of this statement is dense"));
}

#[test]
fn reordered_kernels_on_the_cranelift_tier_match_the_interpreter() {
    use tessera::engine::reorder::eval_reordered;
    use tessera::formats::reorder::Method;
    use tessera::formats::{Format, Tensor};
    use tessera::{EvalOptions, Inputs, TierChoice};

    let mut entries = read_mtx(Path::new(&four_elt())).unwrap().entries;
    entries.canonicalize();
    let n = entries.shape()[0];
    let a = Tensor::pack(&entries, Format::csr()).unwrap();
    let x = Tensor::from_dense(&[n, 3], (0..3 * n).map(|k| (k % 11) as f64 - 5.0).collect()).unwrap();
    let inputs = Inputs::new().with("A", &a).with("X", &x);
    let engine = tessera::engine();
    for (statement, output) in [
        ("C(i,j) = A(i,k) * X(k,j)", Format::dense(2)),
        ("C(i,j) = A(i,k) * A(k,j)", Format::csr()),
    ] {
        let interp = EvalOptions {
            output_format: Some(output.clone()),
            tier: TierChoice::Interpreter,
            ..EvalOptions::default()
        };
        let jit = EvalOptions {
            tier: TierChoice::Named(tessera::JIT.into()),
            ..interp.clone()
        };
        let plain = engine.eval_with(statement, &inputs, &interp).unwrap().to_coordinates();
        for method in Method::ALL {
            let got = eval_reordered(&engine, statement, &inputs, &jit, method)
                .unwrap()
                .result
                .to_coordinates();
            assert_close(&got, &plain);
        }
    }
    assert!(engine.stats().compiled_runs > 0, "the Cranelift tier ran");
    assert!(engine.diagnostics().is_empty(), "{:?}", engine.diagnostics());
}

#[test]
fn info_reports_bandwidth_and_profile_before_and_after_each_method() {
    let entries = read_mtx(Path::new(&four_elt())).unwrap().entries.pruned();
    let before = band_profile(&entries).unwrap();
    let after_rcm =
        tessera::formats::reorder::band_profile_after(&entries, tessera::formats::reorder::Method::Rcm).unwrap();
    assert!(after_rcm.bandwidth < before.bandwidth, "RCM narrows 4elt's band");
    tessera()
        .args(["info", &four_elt()])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!("band: {before}\n")))
        .stdout(predicate::str::contains(format!("  after rcm    {after_rcm}\n")))
        .stdout(predicate::str::contains("  after lexi   bandwidth "))
        .stdout(predicate::str::contains("  after degree bandwidth "));
}
