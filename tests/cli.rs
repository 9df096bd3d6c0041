//! The `tessera` command, run as a user runs it: every subcommand on real
//! and hand-written files, the REPL driven from a pipe, and bad input of
//! every kind, which must end in one line on standard error and a non-zero
//! exit, never a panic.

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

mod common;
use common::{four_elt, tessera};

/// A fresh directory for one test.
fn scratch(test: &str) -> PathBuf {
    common::scratch("cli", test)
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// A = [[1, 0, 2, 0], [0, 0, 0, 3], [4, 0, 0, 5]].
const A_MTX: &str = "%%MatrixMarket matrix coordinate real general\n\
% a hand-written test matrix\n\
3 4 5\n\
1 1 1\n\
1 3 2\n\
2 4 3\n\
3 1 4\n\
3 4 5\n";
const A_DENSE: [[f64; 4]; 3] = [[1., 0., 2., 0.], [0., 0., 0., 3.], [4., 0., 0., 5.]];

/// B = [[0, 1, 0, 0], [0, 0, 0, -3], [2, 0, 0, 0]].
const B_MTX: &str = "%%MatrixMarket matrix coordinate real general\n\
3 4 3\n\
1 2 1\n\
2 4 -3\n\
3 1 2\n";
const B_DENSE: [[f64; 4]; 3] = [[0., 1., 0., 0.], [0., 0., 0., -3.], [2., 0., 0., 0.]];

/// x = [1, 2, 0, 0.5] (its last entry fixes its size).
const X_TNS: &str = "1 1\n2 2\n4 0.5\n";
const X_DENSE: [f64; 4] = [1., 2., 0., 0.5];

/// The entries of a .mtx file written by tessera, 0-based, as a dense matrix.
fn read_mtx_dense(path: &Path) -> Vec<Vec<f64>> {
    let text = fs::read_to_string(path).unwrap();
    let mut lines = text.lines().filter(|l| !l.starts_with('%'));
    let size: Vec<usize> = lines
        .next()
        .unwrap()
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect();
    let mut dense = vec![vec![0.0; size[1]]; size[0]];
    for line in lines {
        let t: Vec<&str> = line.split_whitespace().collect();
        let (i, j): (usize, usize) = (t[0].parse().unwrap(), t[1].parse().unwrap());
        dense[i - 1][j - 1] += t[2].parse::<f64>().unwrap();
    }
    dense
}

/// The entries of a .tns vector, 0-based, as a dense vector of `n`.
fn read_tns_vector(path: &Path, n: usize) -> Vec<f64> {
    let mut dense = vec![0.0; n];
    for line in fs::read_to_string(path).unwrap().lines() {
        let t: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(t.len(), 2, "an order-1 .tns line: {line}");
        dense[t[0].parse::<usize>().unwrap() - 1] += t[1].parse::<f64>().unwrap();
    }
    dense
}

/// Asserts a clean failure: non-zero exit, exactly one line on standard
/// error that starts with `error:` and contains every `needle`, no panic.
fn assert_fails(cmd: &mut Command, needles: &[&str]) {
    let output = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "expected a failure; stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "a panic: {stderr}");
    assert!(!stderr.contains("internal error"), "a bug: {stderr}");
    assert!(!stderr.contains("RUST_BACKTRACE"), "a backtrace hint: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line expected: {stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    for needle in needles {
        assert!(stderr.contains(needle), "{needle:?} not in: {stderr}");
    }
}

// ---------------------------------------------------------------- eval

#[test]
fn eval_spmv_on_the_shipped_matrix_prints_a_summary_of_the_right_shape() {
    tessera()
        .args(["eval", "y(i) = A(i,j) * x(j)", "-i"])
        .arg(format!("A:{}", four_elt()))
        .args(["-g", "x:15606:1.0:7"])
        .assert()
        .success()
        .stderr("")
        .stdout(predicate::str::starts_with(
            "y: 15606 vector, dense, 15606 stored, 15606 nonzeros (density 100%)\n  y(0) = ",
        ))
        .stdout(predicate::str::contains("  ... 15596 more\n"));
}

#[test]
fn eval_writes_a_matrix_that_reads_back_equal_to_a_hand_computation() {
    let dir = scratch("eval_writes_matrix");
    let a = write(&dir, "a.mtx", A_MTX);
    let b = write(&dir, "b.mtx", B_MTX);
    let out = dir.join("c.mtx");
    tessera()
        .args(["eval", "C(i,j) = 2 * A(i,j) - B(i,j)"])
        .arg(format!("-iA:{a}"))
        .arg(format!("-iB:{b}"))
        .args(["-f", "B:coo", "-o"])
        .arg(format!("C:{}", out.display()))
        .assert()
        .success()
        .stdout("")
        .stderr("");
    let c = read_mtx_dense(&out);
    for i in 0..3 {
        for j in 0..4 {
            assert_eq!(c[i][j], 2.0 * A_DENSE[i][j] - B_DENSE[i][j], "C({i},{j})");
        }
    }
}

#[test]
fn eval_writes_a_vector_that_reads_back_equal_to_a_hand_computation() {
    let dir = scratch("eval_writes_vector");
    let a = write(&dir, "a.mtx", A_MTX);
    let x = write(&dir, "x.tns", X_TNS);
    let out = dir.join("y.tns");
    for format in ["csr", "csc", "dense,compressed:1,0", "coo", "dcsr", "ell", "dia"] {
        tessera()
            .args(["eval", "y(i) = A(i,j) * x(j)", "-i"])
            .arg(format!("A:{a}"))
            .arg("-i")
            .arg(format!("x:{x}"))
            .arg("-f")
            .arg(format!("A:{format}"))
            .arg("-o")
            .arg(format!("y:{}", out.display()))
            .assert()
            .success();
        let y = read_tns_vector(&out, 3);
        for i in 0..3 {
            let expected: f64 = (0..4).map(|j| A_DENSE[i][j] * X_DENSE[j]).sum();
            assert_eq!(y[i], expected, "y({i}) with A in {format}");
        }
    }
}

#[test]
fn eval_prints_a_scalar_result_as_a_number() {
    let dir = scratch("eval_scalar");
    let a = write(&dir, "a.mtx", A_MTX);
    // 1 + 4 + 9 + 16 + 25
    tessera()
        .args(["eval", "a = A(i,j) * A(i,j)", "-i"])
        .arg(format!("A:{a}"))
        .assert()
        .success()
        .stdout("55\n");
    // A symmetric file counts its mirrored entry twice: 4 + 2 * 9.
    let s = write(
        &dir,
        "s.mtx",
        "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 2\n2 1 3\n",
    );
    tessera()
        .args(["eval", "a = A(i,j) * A(i,j)", "-i"])
        .arg(format!("A:{s}"))
        .assert()
        .success()
        .stdout("22\n");
}

#[test]
fn eval_print_plan_says_which_formats_were_chosen() {
    let dir = scratch("eval_plan");
    let a = write(&dir, "a.mtx", A_MTX);
    let x = write(&dir, "x.tns", X_TNS);
    tessera()
        .args(["eval", "y(i) = A(i,j) * x(j)", "--print", "plan,lattice,bytecode"])
        .arg(format!("-iA:{a}"))
        .arg(format!("-ix:{x}"))
        .args(["-f", "x:dense"])
        .assert()
        .success()
        .stdout(predicate::str::contains("A: csr, 3 x 4 (read from"))
        .stdout(predicate::str::contains("default for a sparse matrix"))
        .stdout(predicate::str::contains("x: dense, 4 ("))
        .stdout(predicate::str::contains(
            "y: dense, 3 (output, dense by default: j is summed over the sparse A and the dense x, so nearly every coordinate gets a value (as scipy's sparse @ dense is dense))",
        ))
        .stdout(predicate::str::contains("loop order: i, j"))
        .stdout(predicate::str::is_match(r"(?m)^forall i: lattice \{").unwrap())
        .stdout(predicate::str::contains("halt"))
        .stdout(predicate::str::contains("y: 3 vector, dense"));
}

#[test]
fn eval_output_format_follows_dense_inputs_and_sparse_inputs() {
    let dir = scratch("eval_output_format");
    let a = write(&dir, "a.mtx", A_MTX);
    let b = write(&dir, "b.mtx", B_MTX);
    tessera()
        .args(["eval", "C(i,j) = A(i,j) + B(i,j)", "-f", "A:dense", "-f", "B:dense"])
        .arg(format!("-iA:{a}"))
        .arg(format!("-iB:{b}"))
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "C: 3 x 4 matrix, dense, 12 stored, 5 nonzeros",
        ));
    tessera()
        .args(["eval", "C(i,j) = A(i,j) + B(i,j)", "-f", "A:dcsc"])
        .arg(format!("-iA:{a}"))
        .arg(format!("-iB:{b}"))
        .assert()
        .success()
        // (1,3) cancels to an explicit zero: stored, not a nonzero.
        .stdout(predicate::str::starts_with(
            "C: 3 x 4 matrix, dcsc, 6 stored, 5 nonzeros",
        ))
        .stdout(predicate::str::contains("  C(2,0) = 6\n  C(2,3) = 5\n"));
}

/// 4elt has 91,756 stored values, and the product reads two tensors of
/// it: a run that large compiles first.
#[test]
fn eval_time_reports_runs_and_the_tier() {
    tessera()
        .args(["eval", "s = A(i,j) * B(i,j)", "--time", "3", "-i"])
        .arg(format!("A:{}", four_elt()))
        .arg("-i")
        .arg(format!("B:{}", four_elt()))
        .assert()
        .success()
        .stdout(predicate::str::is_match(
            r"^91756\ntime: 3 runs on jit: min [0-9.]+ ms, median [0-9.]+ ms \(the first includes [0-9.]+ ms compiling\)(; each in [0-9]+ chunks on [0-9]+ threads)?\n$",
        ).unwrap());
}

/// `--threads` splits a large run and says so; one thread gives the same
/// bits (the result prints identically to full precision).
#[test]
fn eval_threads_split_large_runs_with_the_same_result() {
    let run = |threads: &str| {
        let out = tessera()
            .args([
                "eval",
                "s = A(i,j) * A(i,j) * 0.1",
                "--time",
                "2",
                "--threads",
                threads,
                "-i",
            ])
            .arg(format!("A:{}", four_elt()))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let (one, two) = (run("1"), run("2"));
    let split = predicate::str::is_match(r"; each in [0-9]+ chunks on 2 threads\n").unwrap();
    assert!(split.eval(&two), "two threads should split the run: {two}");
    // A sum over the outer loop is split in the same chunks on one thread.
    assert!(one.contains(" chunks on 1 thread\n"), "{one}");
    assert_eq!(one.lines().next(), two.lines().next(), "the result differs");
    tessera()
        .args(["eval", "s = A(i) * A(i)", "--threads", "0", "-g", "A:5:1"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("--threads"));
}

#[test]
fn eval_index_sizes_come_from_dim_options() {
    let dir = scratch("eval_dims");
    let x = write(&dir, "x.tns", X_TNS);
    assert_fails(
        tessera().args(["eval", "B(i,j) = x(i)"]).arg(format!("-ix:{x}")),
        &["index variable j", "give it with -d j:SIZE"],
    );
    tessera()
        .args(["eval", "B(i,j) = x(i)", "-d", "j:2"])
        .arg(format!("-ix:{x}"))
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "B: 4 x 2 matrix, csr, 6 stored, 6 nonzeros",
        ));
}

#[test]
fn eval_generated_tensors_repeat_with_a_seed() {
    let run = |seed: &str| {
        tessera()
            .args(["eval", "s = A(i,j) * x(j)", "-g", "A:40x30:0.1:3"])
            .arg(format!("-gx:30:0.5:{seed}"))
            .output()
            .unwrap()
    };
    let (a, b, c) = (run("1"), run("1"), run("2"));
    assert!(a.status.success());
    assert_eq!(a.stdout, b.stdout);
    assert_ne!(a.stdout, c.stdout);
}

// ---------------------------------------------------------------- repl

#[test]
fn repl_from_a_pipe_loads_evaluates_and_reuses_results() {
    let dir = scratch("repl_session");
    let a = write(&dir, "a.mtx", A_MTX);
    let x = write(&dir, "x.tns", X_TNS);
    let script = format!(
        "# a scripted session\n\
         :load A {a}\n\
         :load x {x}\n\
         :format x dense\n\
         y(i) = A(i,j) * x(j)\n\
         z(i) = 2 * y(i)\n\
         s = sum(i, z(i))\n\
         :gen R 30x20 0.25 5\n\
         :plan w(i) = z(i) + y(i)\n\
         :lattice w(i) = z(i) + y(i)\n\
         :time 2 t = R(i,j) * R(i,j)\n\
         :print z all\n\
         :list\n\
         :help\n\
         :quit\n\
         s = 1\n"
    );
    // y = A x = [1, 1.5, 6.5]; z = [2, 3, 13]; s = 18.
    tessera()
        .arg("repl")
        .write_stdin(script)
        .assert()
        .success()
        .stderr("")
        .stdout(predicate::str::contains("A: 3 x 4 matrix, csr, 5 stored"))
        .stdout(predicate::str::contains("x: 4 vector, dense, 4 stored, 3 nonzeros"))
        .stdout(predicate::str::contains("y: 3 vector, dense, 3 stored, 3 nonzeros"))
        .stdout(predicate::str::contains("  z(0) = 2\n  z(1) = 3\n  z(2) = 13\n"))
        .stdout(predicate::str::contains("\ns = 18\n"))
        .stdout(predicate::str::contains("R: 30 x 20 matrix, csr, 150 stored"))
        .stdout(predicate::str::contains(
            "w: dense, 3 (output, dense by default: every input is dense)",
        ))
        .stdout(predicate::str::contains("loop order: i"))
        .stdout(predicate::str::contains("time: 2 runs on interp"))
        .stdout(predicate::str::contains(
            "s: scalar, dense, 1 stored (computed by s = sum(i, z(i)))",
        ))
        .stdout(predicate::str::contains(":load NAME PATH"));
}

#[test]
fn repl_errors_do_not_end_the_session_and_name_their_line() {
    let dir = scratch("repl_errors");
    let a = write(&dir, "a.mtx", A_MTX);
    let script = format!(
        ":load A {a}\n\
         y(i) = A(i,j * x(j)\n\
         :load B {dir}/missing.mtx\n\
         :format A csrr\n\
         :frob\n\
         y(i) = A(i,j) * q(j)\n\
         s = A(i,j) * A(i,j)\n",
        dir = dir.display()
    );
    let output = tessera().arg("repl").write_stdin(script).output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(1), "a session with errors fails at its end");
    assert!(stdout.ends_with("55\n"), "the session went on: {stdout}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 5, "{stderr}");
    assert!(
        lines[0].starts_with("error: line 2: in `y(i) = A(i,j * x(j)`: column 14:"),
        "{stderr}"
    );
    assert!(
        lines[1].starts_with("error: line 3: :load B: ") && lines[1].contains("missing.mtx"),
        "{stderr}"
    );
    assert!(
        lines[2].contains("line 4: :format A: unknown format or level `csrr`"),
        "{stderr}"
    );
    assert!(lines[3].contains("line 5: :frob: unknown command"), "{stderr}");
    assert!(
        lines[4].contains("line 6:")
            && lines[4].contains("unknown tensor q")
            && lines[4].contains("(:load q PATH or :gen q DIMS DENSITY first)"),
        "{stderr}"
    );
}

// ---------------------------------------------------------------- convert

#[test]
fn convert_mtx_to_tns_and_back_keeps_the_entries() {
    let dir = scratch("convert_round_trip");
    let a = write(&dir, "a.mtx", A_MTX);
    let tns = dir.join("a.tns");
    let back = dir.join("back.mtx");
    tessera()
        .args(["convert", &a])
        .arg(&tns)
        .assert()
        .success()
        .stdout(predicate::str::contains("a.tns: 3 x 4, 5 nonzeros, via csr"));
    assert_eq!(fs::read_to_string(dir.join("a.dims")).unwrap(), "3 4\n5\n");
    tessera()
        .arg("convert")
        .arg(&tns)
        .arg(&back)
        .args(["-f", "bcsr:1x2"])
        .assert()
        .success()
        .stdout(predicate::str::contains("via bcsr:1x2"));
    let dense = read_mtx_dense(&back);
    for i in 0..3 {
        assert_eq!(dense[i], A_DENSE[i].to_vec());
    }
}

#[test]
fn convert_refuses_formats_and_files_that_cannot_hold_the_tensor() {
    let dir = scratch("convert_refusals");
    let a = write(&dir, "a.mtx", A_MTX);
    assert_fails(
        tessera()
            .args(["convert", &a])
            .arg(dir.join("a.tns"))
            .args(["-f", "bcsr:2x2"]),
        &["bcsr:2x2", "do not divide"],
    );
    assert_fails(
        tessera().args(["convert", &a]).arg(dir.join("a.csv")),
        &["a.csv has no .mtx, .tns or .h5 extension"],
    );
    let t = write(&dir, "t.tns", "1 1 1 1.5\n2 3 4 2\n");
    assert_fails(
        tessera().args(["convert", &t]).arg(dir.join("t.mtx")),
        &["order 3", ".tns"],
    );
}

// ---------------------------------------------------------------- info

#[test]
fn info_prints_shape_nonzeros_density_rows_and_bytes() {
    let dir = scratch("info");
    let a = write(&dir, "a.mtx", A_MTX);
    tessera()
        .args(["info", &a])
        .assert()
        .success()
        .stdout(predicate::str::contains("Matrix Market coordinate real general"))
        .stdout(predicate::str::contains("shape: 3 x 4\n"))
        .stdout(predicate::str::contains("nonzeros: 5 (density 41.67%)\n"))
        .stdout(predicate::str::contains(
            "rows: 3, entries each: min 1, median 2, mean 1.67, max 2, std 0.47; 0 empty\n",
        ))
        .stdout(predicate::str::contains("columns: 4, entries each: min 0,"))
        .stdout(predicate::str::is_match(r"(?m)^  csr +[0-9]+ B  \(5 stored values\)$").unwrap())
        .stdout(predicate::str::is_match(r"(?m)^  dense +96 B  \(12 stored values\)$").unwrap())
        .stdout(predicate::str::contains("bcsr:4x4   -  (4 does not divide 3 x 4)"));
}

#[test]
fn info_computes_the_sizes_of_formats_too_large_to_pack() {
    tessera()
        .args(["info", &four_elt()])
        .assert()
        .success()
        .stdout(predicate::str::contains("shape: 15606 x 15606\n"))
        .stdout(predicate::str::contains("nonzeros: 91756 (density 0.0377%)"))
        .stdout(predicate::str::contains(
            "dense      1.9 GB  (243547236 stored values)\n",
        ));
}

#[test]
fn info_reports_histograms_symmetry_padding_and_a_suggestion() {
    let dir = scratch("info_statistics");
    let a = write(&dir, "a.mtx", A_MTX);
    // A's rows hold 2, 1 and 2 entries; its diagonals (column - row) are
    // 0, 2, 2, -2 and 1: four of them, 4 x 3 = 12 stored values for 5
    // nonzeros. ELL pads the middle row: 2 slots x 3 rows = 6 values.
    tessera()
        .args(["info", &a])
        .assert()
        .success()
        .stdout(predicate::str::contains("values: 0 NaN, 0 infinite\n"))
        .stdout(predicate::str::contains(
            "rows: 3, entries each: min 1, median 2, mean 1.67, max 2, std 0.47; 0 empty\n              0          0\n              1          1  ████████████████████\n            2-3          2  ████████████████████████████████████████\ncolumns:",
        ))
        .stdout(predicate::str::contains("symmetry: none (not square)\n"))
        .stdout(predicate::str::contains(
            "dia: 4 diagonals x 3 rows: 12 stored values, 7 of them padding (58.33%)\n",
        ))
        .stdout(predicate::str::contains(
            "ell: 2 slots (the longest row) x 3 rows: 6 stored values, 1 of them padding (16.67%)\n",
        ))
        .stdout(predicate::str::contains("suggested for SpMV:   ell ("))
        .stdout(predicate::str::contains("suggested for SpGEMM: csr ("));
    // A symmetric file whose values differ from its mirror's by sign on one
    // pair is only pattern-symmetric; NaN and inf are counted.
    let m = write(
        &dir,
        "m.mtx",
        "%%MatrixMarket matrix coordinate real general\n3 3 5\n1 2 1\n2 1 -1\n3 3 nan\n1 1 inf\n2 3 0\n",
    );
    tessera()
        .args(["info", &m])
        .assert()
        .success()
        .stdout(predicate::str::contains("values: 1 NaN, 1 infinite\n"))
        .stdout(predicate::str::contains("symmetry: pattern-symmetric"));
    let skew = write(
        &dir,
        "skew.mtx",
        "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1.5\n3 2 -4\n",
    );
    tessera()
        .args(["info", &skew])
        .assert()
        .success()
        .stdout(predicate::str::contains("symmetry: skew-symmetric"));
}

#[test]
fn info_draws_the_sparsity_picture_in_the_terminal_and_as_a_png() {
    let dir = scratch("info_spy");
    let png_path = dir.join("4elt.png");
    let output = tessera()
        .args(["info", &four_elt(), "--spy", "--spy-png"])
        .arg(&png_path)
        .output()
        .unwrap();
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).unwrap();
    // Square: 60 characters wide and 30 lines between the frames.
    let top = format!("┌{}┐", "─".repeat(60));
    let at = stdout.find(&top).expect("a framed picture");
    let picture: Vec<&str> = stdout[at..].lines().skip(1).take(30).collect();
    assert!(picture.iter().all(|l| l.chars().count() == 62 && l.starts_with('│')));
    assert!(
        picture.iter().any(|l| l.contains('█')),
        "the densest cell is drawn full"
    );
    assert!(stdout.contains(&format!("spy: wrote {} (512 x 512 pixels)", png_path.display())));
    let decoder = png::Decoder::new(std::io::BufReader::new(fs::File::open(&png_path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut pixels).unwrap();
    assert_eq!((frame.width, frame.height), (512, 512));
    let pixels = &pixels[..frame.buffer_size()];
    // Some cells are empty (white) and some are not; the darkest is black.
    assert!(pixels.contains(&255));
    assert_eq!(pixels.iter().min(), Some(&0));
    // A vector has no picture: a clear error, not a panic.
    let x = write(&dir, "x.tns", X_TNS);
    assert_fails(
        tessera().args(["info", &x, "--spy-png"]).arg(dir.join("x.png")),
        &["--spy-png", "matrices"],
    );
}

// ---------------------------------------------------------------- bad input

#[test]
fn malformed_files_are_reported_with_file_and_line() {
    let dir = scratch("malformed");
    let bad = write(
        &dir,
        "bad.mtx",
        "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n1 x 2.0\n",
    );
    assert_fails(
        tessera().args(["eval", "s = A(i,j)"]).arg(format!("-iA:{bad}")),
        &["-i A: ", "bad.mtx:4:"],
    );
    assert_fails(tessera().args(["info", &bad]), &["bad.mtx:4:"]);
    let banner = write(&dir, "banner.mtx", "%%MatrixMarket tensor coordinate real general\n");
    assert_fails(tessera().args(["info", &banner]), &["banner.mtx:1:"]);
    let tns = write(&dir, "bad.tns", "1 1 2.0\n2 2\n");
    assert_fails(tessera().args(["info", &tns]), &["bad.tns:2:", "tokens"]);
}

#[test]
fn missing_files_and_unknown_extensions_are_clear() {
    assert_fails(
        tessera().args(["eval", "s = A(i,j)", "-i", "A:no/such/file.mtx"]),
        &["-i A: no/such/file.mtx: "],
    );
    assert_fails(tessera().args(["info", "nowhere.tns"]), &["nowhere.tns"]);
    assert_fails(
        tessera().args(["eval", "s = A(i,j)", "-i", "A:matrix.csv"]),
        &["-i A: matrix.csv has no .mtx, .tns or .h5 extension"],
    );
}

#[test]
fn unknown_formats_and_bad_level_lists_name_the_bad_part() {
    let a = format!("A:{}", four_elt());
    assert_fails(
        tessera().args(["eval", "s = A(i,j)", "-i", &a, "-f", "A:blocked"]),
        &["A:blocked", "unknown format or level `blocked`"],
    );
    assert_fails(
        tessera().args(["eval", "s = A(i,j)", "-i", &a, "-f", "A:dense,compresed"]),
        &["unknown format or level `compresed`"],
    );
    assert_fails(
        tessera().args([
            "eval",
            "s = A(i,j)",
            "-i",
            &a,
            "-f",
            "A:compressed(nonunique),dense(sorted)",
        ]),
        &["unknown level property `sorted`"],
    );
    assert_fails(
        tessera().args(["eval", "s = A(i,j)", "-i", &a, "-f", "A:singleton,compressed"]),
        &["singleton level cannot be the top level"],
    );
    assert_fails(
        tessera().args(["eval", "s = A(i,j)", "-i", &a, "-f", "A:csf:0,0"]),
        &["not a permutation"],
    );
    assert_fails(
        tessera().args(["eval", "s = A(i,j)", "-i", &a, "-f", "A:sv"]),
        &["sv stores vectors, the tensor has order 2"],
    );
    assert_fails(
        tessera().args(["eval", "s = A(i,j)", "-i", &a, "-f", "Z:csr"]),
        &["-f Z:csr", "the statement has no tensor Z"],
    );
}

#[test]
fn shape_mismatches_name_the_index_and_tensors() {
    let a = format!("A:{}", four_elt());
    assert_fails(
        tessera().args(["eval", "y(i) = A(i,j) * x(j)", "-i", &a, "-g", "x:100:1"]),
        &["index variable j", "15606", "100"],
    );
    assert_fails(
        tessera().args(["eval", "y(i) = A(i,j,k)", "-i", &a]),
        &["column 8", "A has order 2"],
    );
}

#[test]
fn bad_statements_give_the_column() {
    let a = format!("A:{}", four_elt());
    assert_fails(
        tessera().args(["eval", "y(i) = A(i,j * x(j)", "-i", &a]),
        &["in `y(i) = A(i,j * x(j)`: column 14: expected ')' or ','"],
    );
    assert_fails(
        tessera().args(["eval", "y(i) = A(i,j) * x(j)", "-i", &a]),
        &["column 17: unknown tensor x (give it with -i x:PATH or -g x:DIMS:DENSITY)"],
    );
}

#[test]
fn bad_options_are_one_line_usage_errors() {
    let output = tessera().args(["eval", "s = A(i,j)", "--frobnicate"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--frobnicate"), "{stderr}");
    assert_fails(
        tessera().args(["eval", "s = A(i,j)", "-g", "A:10x10:2"]),
        &["bad density `2`"],
    );
    assert_fails(
        tessera().args(["eval", "s = A(i,j)", "-g", "A:10y10:0.5"]),
        &["bad dimension `10y10`"],
    );
    assert_fails(
        tessera().args(["eval", "s = A(i,j)", "-d", "j"]),
        &["expected NAME:SIZE"],
    );
    assert_fails(tessera().args(["eval", "s = A(i,j)", "--time", "0"]), &["0"]);
    assert_fails(tessera().arg("frob"), &["frob"]);
    tessera()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("Usage: tessera"));
}

#[test]
fn eval_help_lists_every_function_and_reduction() {
    let out = tessera().args(["eval", "--help"]).output().expect("tessera runs");
    let help = String::from_utf8_lossy(&out.stdout);
    for f in tessera::engine::notation::FUNCTIONS {
        assert!(
            help.split(|c: char| c.is_whitespace() || c == '.' || c == ';' || c == ',')
                .any(|w| w == f.name()),
            "`tessera eval --help` does not list {f}"
        );
    }
    for r in tessera::engine::notation::REDUCTIONS {
        assert!(
            help.contains(&format!("{r}(j, e)")),
            "`tessera eval --help` does not list {r}"
        );
    }
}

#[test]
fn an_unknown_function_is_reported_with_its_column_and_the_nearest_name() {
    let a = format!("A:{}", four_elt());
    assert_fails(
        tessera().args(["eval", "y(i) = sqr(A(i,j))", "-i", &a]),
        &["column 8", "unknown function 'sqr' (did you mean 'sqrt'?)"],
    );
}

#[test]
#[cfg(not(feature = "opencl"))]
fn tiers_not_in_this_build_are_clear_errors() {
    let a = format!("A:{}", four_elt());
    assert_fails(
        tessera().args(["eval", "s = A(i,j)", "-i", &a, "--tier", "opencl"]),
        &["tier opencl is not available in this build (available: auto, interp, jit)"],
    );
    assert_fails(
        tessera().args(["repl", "--tier", "opencl"]).write_stdin(""),
        &["tier opencl"],
    );
}

#[test]
fn jit_tier_gives_the_interpreters_answer_and_prints_clif() {
    let a = format!("A:{}", four_elt());
    // 4elt is a pattern matrix: the sum of its entries is its nonzero count.
    for tier in ["interp", "jit", "auto"] {
        tessera()
            .args(["eval", "s = A(i,j)", "-i", &a, "--tier", tier, "--time", "3"])
            .assert()
            .success()
            .stdout(predicate::str::starts_with("91756\n"));
    }
    tessera()
        .args(["eval", "s = A(i,j)", "-i", &a, "--tier", "jit", "--time", "2"])
        .assert()
        .success()
        .stdout(predicate::str::contains("time: 2 runs on jit"));
    tessera()
        .args([
            "eval",
            "y(i) = A(i,j) * x(j)",
            "-i",
            &a,
            "-g",
            "x:15606:1:3",
            "--print",
            "clif",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("function"));
}

#[test]
fn outputs_that_cannot_be_written_are_refused_before_reading() {
    let a = format!("A:{}", four_elt());
    assert_fails(
        tessera().args(["eval", "y(i) = A(i,j)", "-i", &a, "-o", "z:out.mtx"]),
        &["-o z:out.mtx", "the statement computes y, not z"],
    );
    assert_fails(
        tessera().args(["eval", "y(i) = A(i,j)", "-i", &a, "-o", "y:out.txt"]),
        &["out.txt has no .mtx, .tns or .h5 extension"],
    );
    let dir = scratch("write_refusals");
    assert_fails(
        tessera()
            .args(["eval", "T(i,j,k) = A(i,j) * A(j,k)", "-i", &a, "-o"])
            .arg(format!("T:{}", dir.join("t.mtx").display())),
        &["order 3", ".tns"],
    );
}

/// DIA and ELL of a scattered matrix would store mostly zeros: packing
/// refuses before allocating, naming the ratio and the limit; raising the
/// limit lets it through.
#[test]
fn structured_formats_of_a_scattered_matrix_are_refused_naming_the_padding() {
    let spmv = |format: &str| {
        let mut cmd = tessera();
        cmd.args([
            "eval",
            "y(i) = A(i,j) * x(j)",
            "-g",
            "A:3000x3000:0.001",
            "-g",
            "x:3000:1",
        ])
        .args(["-f", &format!("A:{format}")]);
        cmd
    };
    assert_fails(
        &mut spmv("dia"),
        &["dia would store", "stored per entry", "TESSERA_PADDING_LIMIT"],
    );
    spmv("dia").env("TESSERA_PADDING_LIMIT", "100000").assert().success();
    spmv("csr").assert().success();
    // `info` says which structured formats packing would refuse.
    let out = tessera().args(["info", &four_elt()]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = |format: &str| {
        text.lines()
            .find(|l| l.starts_with(format))
            .unwrap_or_default()
            .to_string()
    };
    assert!(line("dia:").contains("packing refuses it"), "{text}");
    assert!(!line("ell:").contains("packing refuses it"), "{text}");
}

/// `-s` schedules the statement: the plan shows it, the result is the
/// unscheduled one, and a command that cannot apply is refused with its
/// column in the schedule.
#[test]
fn eval_schedule_shows_in_the_plan_and_keeps_the_result() {
    let run = |extra: &[&str]| {
        let out = tessera()
            .args(["eval", "y(i) = A(i,j) * x(j)", "-g", "x:15606:1.0:7", "-i"])
            .arg(format!("A:{}", four_elt()))
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let unscheduled = run(&[]);
    for schedule in [
        "reorder(i, j); parallelize(i, cpu_threads, no_races)",
        "fuse(i, j, f); pos(f, p, A); split(p, p0, p1, 16); parallelize(p0, cpu_threads, atomics)",
        "bound(i, ib, 15606, max_exact); unroll(j, 4)",
    ] {
        assert_eq!(run(&["-s", schedule]), unscheduled, "{schedule} changed the result");
        let plan = run(&["-s", schedule, "--print", "plan"]);
        assert!(plan.contains(&format!("schedule: {schedule}\n")), "{plan}");
    }
    assert_fails(
        tessera()
            .args(["eval", "y(i) = A(i,j) * x(j)", "-g", "x:15606:1.0:7", "-i"])
            .arg(format!("A:{}", four_elt()))
            .args(["-s", "reorder(i, j); parallelize(j, cpu_threads, no_races)"]),
        &["schedule, column 16: only the outermost loop runs in parallel, and the loops nest i, j"],
    );
    tessera()
        .args(["eval", "s = A(i) * A(i)", "-g", "A:5:1", "-s", "reorder(i,,j)"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("schedule, column 11: an argument is missing"));
}

/// Edges j -> i of weight w stored as A(i,j): 0 -> 1 (1), 1 -> 2 (2),
/// 2 -> 3 (3), 0 -> 3 (10).
const PATHS_MTX: &str = "%%MatrixMarket matrix coordinate real general\n\
4 4 4\n2 1 1\n3 2 2\n4 3 3\n4 1 10\n";

/// `--def` defines operators the statement calls, compiled inline.
#[test]
fn eval_defines_operators_with_def() {
    tessera()
        .args([
            "eval",
            "y(i) = cli_absdiff(b(i), c(i))",
            "-g",
            "b:6:1:1",
            "-g",
            "c:6:1:2",
        ])
        .args([
            "--def",
            "cli_absdiff(x, y) = abs(x - y)",
            "--print",
            "plan",
            "--tier",
            "jit",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("y(i) += abs((b(i) - c(i)))"))
        .stdout(predicate::str::contains("y: 6 vector"));
    assert_fails(
        tessera().args(["eval", "y(i) = f(b(i))", "-g", "b:6:1", "--def", "f(x) = x + A(i,j)"]),
        &["--def f(x) = x + A(i,j): column 12: the body of f reads `A(i,j)`"],
    );
}

#[test]
fn semirings_rewrite_the_statement_and_fill_the_inputs_with_their_zero() {
    let dir = scratch("semiring");
    let a = format!("A:{}", write(&dir, "paths.mtx", PATHS_MTX));
    let d = format!(
        "d:{}",
        write(
            &dir,
            "d.mtx",
            "%%MatrixMarket matrix coordinate real general\n4 1 1\n1 1 0\n"
        )
    );
    // One relaxation step from vertex 0: d'(i) = min(d(i), min(j, A(i,j) + d(j))).
    tessera()
        .args(["eval", "e(i) = A(i,j) * d(j) + d(i)", "-i", &a, "-i", &d])
        .args(["--semiring", "min-plus", "--print", "plan"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "statement: e(i) = min(min(j, A(i,j) + d(j)), d(i))",
        ))
        .stdout(predicate::str::contains("the default for a sparse matrix; fill inf)"))
        .stdout(predicate::str::contains(
            "e: 4 vector, sv, 4 stored, fill inf, 3 other values",
        ))
        .stdout(predicate::str::contains("e(0) = 0\n  e(1) = 1\n  e(3) = 10\n"));
    // Reachability in or-and: vertices 1 and 3 are one edge from 0.
    let frontier = format!(
        "f:{}",
        write(
            &dir,
            "f.mtx",
            "%%MatrixMarket matrix coordinate real general\n4 1 1\n1 1 1\n"
        )
    );
    tessera()
        .args([
            "eval",
            "r(i) = A(i,j) * f(j)",
            "-i",
            &a,
            "-i",
            &frontier,
            "--semiring",
            "or-and",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "r: 4 vector of bool, sv, 3 stored, 2 nonzeros",
        ))
        .stdout(predicate::str::contains("r(1) = 1\n  r(3) = 1\n"));
    // A file reads absent entries as 0: a sparse result filled with inf is
    // refused, a dense one written whole.
    let out = dir.join("e.mtx").display().to_string();
    let min_plus = [
        "eval",
        "e(i) = A(i,j) * d(j)",
        "-i",
        &a,
        "-i",
        &d,
        "--semiring",
        "min-plus",
    ];
    assert_fails(
        tessera().args(min_plus).args(["-o", &format!("e:{out}")]),
        &["the tensor's unstored components hold its fill inf, and Matrix Market files read them as 0"],
    );
    tessera()
        .args(min_plus)
        .args(["-f", "e:dense", "-o", &format!("e:{out}")])
        .assert()
        .success();
    assert_eq!(
        fs::read_to_string(&out).unwrap(),
        "%%MatrixMarket matrix array real general\n4 1\ninf\n1\ninf\n10\n"
    );
    assert_fails(
        tessera().args([
            "eval",
            "y(i) = A(i,j) - d(j)",
            "-i",
            &a,
            "-i",
            &d,
            "--semiring",
            "max-plus",
        ]),
        &["- has no meaning in the max-plus semiring"],
    );
    assert_fails(
        tessera().args([
            "eval",
            "y(i) = A(i,j) * d(j)",
            "-i",
            &a,
            "-i",
            &d,
            "--semiring",
            "tropical",
        ]),
        &["unknown semiring `tropical`", "min-plus"],
    );
    assert_fails(
        tessera().args(["eval", "y(i) = A(i,j) * d(j)", "-i", &a, "-i", &d, "--fill", "d:lots"]),
        &["bad fill `lots`"],
    );
}

// ---------------------------------------------------------------- value types

/// A pattern file: A's pattern as edges, [[1,0,1,0],[0,0,0,1],[1,0,0,1]].
const A_PATTERN_MTX: &str = "%%MatrixMarket matrix coordinate pattern general\n\
3 4 5\n1 1\n1 3\n2 4\n3 1\n3 4\n";

#[test]
fn value_types_are_asked_per_tensor_and_results_keep_the_statement_type() {
    let dir = scratch("value_types");
    let a = format!("A:{}", write(&dir, "a.mtx", A_PATTERN_MTX));
    let x = format!("x:{}", write(&dir, "x.tns", "4 1\n"));
    // A pattern file read as bool, and a vector of truths: one step of a
    // breadth-first search is the or-and product (x holds vertex 3, which
    // rows 1 and 2 reach).
    let out = dir.join("y.mtx").display().to_string();
    tessera()
        .args(["eval", "y(i) = A(i,j) * x(j)", "-i", &a, "-i", &x])
        .args([
            "-t", "A:bool", "-t", "x:bool", "-f", "x:dense", "-f", "y:dense", "--print", "plan",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("A: csr, 3 x 4 of bool"))
        .stdout(predicate::str::contains("y: dense, 3 of bool (output"))
        .stdout(predicate::str::contains(
            "y: 3 vector of bool, dense, 3 stored, 2 nonzeros",
        ))
        .stdout(predicate::str::contains("  y(1) = 1\n  y(2) = 1\n"));
    let b = format!("B:{}", write(&dir, "b.mtx", A_MTX));
    tessera()
        .args(["eval", "y(i) = A(i,j) * B(i,j)", "-i", &a, "-i", &b])
        .args(["-t", "A:bool", "-t", "B:f32", "-f", "y:sv", "-o", &format!("y:{out}")])
        .assert()
        .success();
    // A truth value beside an f32 number is its 0 or 1: row sums of B.
    assert_eq!(read_mtx_dense(Path::new(&out)), vec![vec![3.0], vec![3.0], vec![9.0]]);
    // f32 and f64 meet only through a cast.
    assert_fails(
        tessera()
            .args(["eval", "y(i) = B(i,j) * x(j)", "-i", &b, "-i", &x])
            .args(["-t", "B:f32"]),
        &["column 8:", "B, of type f32", "x, of type f64", "cast one"],
    );
    tessera()
        .args(["eval", "y(i) = f64(B(i,j)) * x(j)", "-i", &b, "-i", &x])
        .args(["-t", "B:f32"])
        .assert()
        .success()
        .stdout(predicate::str::contains("y(1) = 3"));
    // An output's asked type is the statement's, or an error says how to
    // make it so.
    assert_fails(
        tessera().args(["eval", "y(i) = B(i,j) * 2", "-i", &b, "-t", "y:bool"]),
        &[
            "y is asked to hold bool values and the statement gives f64",
            "bool(...)",
        ],
    );
    let unknown = tessera()
        .args(["eval", "y(i) = B(i,j)", "-i", &b, "-t", "B:i7"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert!(!unknown.status.success(), "{stderr}");
    assert!(
        stderr.contains("unknown value type \"i7\" (the value types are f64, f32, i64, i32, bool, c64)"),
        "{stderr}"
    );
    assert_fails(
        tessera().args(["eval", "y(i) = -A(i,j)", "-i", &a, "-t", "A:bool"]),
        &["column 9:", "- takes numbers, not bool (A)"],
    );
}

#[test]
fn the_repl_types_tensors_now_or_when_they_are_made() {
    let dir = scratch("repl_types");
    let b = write(&dir, "b.mtx", B_MTX);
    let script = format!(
        ":type B f32\n\
         :type m bool\n\
         :load B {b}\n\
         c(i) = sum(j, B(i,j))\n\
         m(i) = c(i) > 0\n\
         :list\n\
         :type B f64\n\
         :list\n"
    );
    tessera()
        .arg("repl")
        .write_stdin(script)
        .assert()
        .success()
        .stdout(predicate::str::contains("B: 3 x 4 matrix of f32, csr, 3 stored"))
        .stdout(predicate::str::contains("c: 3 vector of f32"))
        .stdout(predicate::str::contains("m: 3 vector of bool"))
        .stdout(predicate::str::contains("B: 3 x 4 of f32, csr, 3 stored ("))
        .stdout(predicate::str::contains("; as f64)"));
}

// ---------------------------------------------------------------- integer values

/// Integers an `f64` cannot hold: beyond 2^53 and the extremes of `i64`.
const BIG_MTX: &str = "%%MatrixMarket matrix coordinate integer general\n\
% integers beyond 2^53\n\
3 3 4\n\
1 1 9223372036854775807\n\
2 3 -9223372036854775808\n\
3 2 9007199254740993\n\
3 3 5\n";

/// [[2, 0], [0, -1000]] in a `real` file, every value integral.
const INTEGRAL_REAL_MTX: &str = "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 2.0\n2 2 -1e3\n";

#[test]
fn convert_keeps_integers_beyond_2_to_the_53_exactly() {
    let dir = scratch("convert_integers");
    let big = write(&dir, "big.mtx", BIG_MTX);
    // Unasked: an integer file whose values f64 would round is read as i64.
    let out = dir.join("out.mtx");
    tessera()
        .args(["convert", &big])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains(": 3 x 3 of i64, 4 nonzeros, via csr"));
    assert_eq!(fs::read_to_string(&out).unwrap(), BIG_MTX);
    let tns = dir.join("out.tns");
    tessera().args(["convert", &big]).arg(&tns).assert().success();
    assert_eq!(
        fs::read_to_string(&tns).unwrap(),
        "1 1 9223372036854775807\n2 3 -9223372036854775808\n3 2 9007199254740993\n3 3 5\n"
    );
    // And back from the .tns, asked as i64, to a Matrix Market integer file.
    let back = dir.join("back.mtx");
    tessera()
        .args(["convert", "-t", "i64", "--general"])
        .arg(&tns)
        .arg(&back)
        .assert()
        .success();
    let text = fs::read_to_string(&back).unwrap();
    assert_eq!(text, BIG_MTX.replace("% integers beyond 2^53\n", ""));
    // Through standard input and output, asked.
    tessera()
        .args(["convert", "-t", "i64", "-", "-"])
        .write_stdin(BIG_MTX)
        .assert()
        .success()
        .stdout(BIG_MTX);
    // As f64, asked, the values are rounded and the file is `real`.
    tessera()
        .args(["convert", "-t", "f64", &big, "-"])
        .assert()
        .success()
        .stdout(predicate::str::contains("coordinate real general"))
        .stdout(predicate::str::contains("1 1 9.223372036854776e18\n"));
}

#[test]
fn convert_reads_integral_reals_as_integers_and_refuses_what_the_type_cannot_hold() {
    let dir = scratch("convert_integer_types");
    let real = write(&dir, "real.mtx", INTEGRAL_REAL_MTX);
    tessera()
        .args(["convert", "-t", "i32", &real, "-"])
        .assert()
        .success()
        .stdout("%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 1 2\n2 2 -1000\n");
    let fraction = write(&dir, "fraction.mtx", &INTEGRAL_REAL_MTX.replace("-1e3", "-0.5"));
    assert_fails(
        tessera().args(["convert", "-t", "i64", &fraction, "-"]),
        &[
            "convert INPUT",
            "fraction.mtx:4: the value `-0.5` is not an integer, and the values are read as i64",
        ],
    );
    let big = write(&dir, "big.mtx", BIG_MTX);
    assert_fails(
        tessera().args(["convert", "-t", "i32", &big, "-"]),
        &["big.mtx:4: the value `9223372036854775807` is beyond the range of i32 (-2147483648 to 2147483647)"],
    );
    let tns = write(&dir, "x.tns", "1 7\n3 2147483648\n");
    assert_fails(
        tessera().args(["convert", "-t", "i32", &tns, "-"]),
        &["x.tns:2: the value `2147483648` is beyond the range of i32"],
    );
    // A pattern read as an integer type stays a pattern.
    let pattern = write(&dir, "p.mtx", A_PATTERN_MTX);
    tessera()
        .args(["convert", "-t", "i64", &pattern, "-"])
        .assert()
        .success()
        .stdout(A_PATTERN_MTX);
}

#[test]
fn reorder_and_info_take_integers_beyond_2_to_the_53() {
    let dir = scratch("reorder_integers");
    let big = write(&dir, "big.mtx", BIG_MTX);
    let out = dir.join("rcm.mtx");
    tessera()
        .args(["reorder", &big])
        .arg(&out)
        .args(["--method", "rcm"])
        .assert()
        .success();
    let text = fs::read_to_string(&out).unwrap();
    assert!(
        text.starts_with("%%MatrixMarket matrix coordinate integer general\n3 3 4\n"),
        "{text}"
    );
    for value in ["9223372036854775807", "-9223372036854775808", "9007199254740993", " 5"] {
        assert!(text.contains(&format!("{value}\n")), "{value} not in {text}");
    }
    tessera()
        .args(["info", &big])
        .assert()
        .success()
        .stdout(predicate::str::contains("Matrix Market coordinate integer general"))
        .stdout(predicate::str::contains("nonzeros: 4 (density 44.44%)"));
}

#[test]
fn inputs_read_as_integer_types_refuse_values_the_type_does_not_hold() {
    // Checked as the inputs are read, before the statement is compiled.
    let dir = scratch("integer_inputs");
    let x = format!("x:{}", write(&dir, "x.tns", "1 3\n2 0.5\n"));
    assert_fails(
        tessera().args(["eval", "y(i) = x(i)", "-i", &x, "-t", "x:i64"]),
        &[
            "-i x:",
            "x.tns:2: the value `0.5` is not an integer, and the values are read as i64",
        ],
    );
    let b = format!("B:{}", write(&dir, "big.mtx", BIG_MTX));
    assert_fails(
        tessera().args(["eval", "y(i) = B(i,j)", "-i", &b, "-t", "B:i32"]),
        &[
            "-i B:",
            "big.mtx:4: the value `9223372036854775807` is beyond the range of i32",
        ],
    );
    let w = format!("w:{}", write(&dir, "w.tns", "1 3\n2 -7\n"));
    assert_fails(
        tessera().args(["eval", "y(i) = w(i)", "-i", &w, "-t", "w:i64", "--fill", "w:inf"]),
        &[
            "--fill w:inf",
            "w holds i64 values: its fill is an integer i64 holds, not inf",
        ],
    );
    tessera()
        .args(["eval", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("(f64, f32, i64, i32, bool, c64)"))
        .stdout(predicate::str::contains("integers from 1 to 9"));
}

#[test]
fn the_repl_holds_integers_exactly_and_generates_small_ones() {
    let dir = scratch("repl_integers");
    let big = write(&dir, "big.mtx", BIG_MTX);
    let real = write(&dir, "real.mtx", &INTEGRAL_REAL_MTX.replace("-1e3", "-0.5"));
    let saved = dir.join("saved.tns");
    let script = format!(
        ":type A i64\n\
         :load A {big}\n\
         A\n\
         :save A {saved}\n\
         :load R {real}\n\
         :type R i64\n\
         :type A i32\n\
         :fill A 2.5\n\
         :type g i32\n\
         :gen g 6x6 0.5 3\n\
         :print g all\n\
         :type h i64\n\
         :list\n",
        saved = saved.display()
    );
    let output = tessera().arg("repl").write_stdin(script).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Errors are reported by line and the session goes on (exit 1 at its end).
    assert!(!output.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    for expected in [
        "A: 3 x 3 matrix of i64, csr, 4 stored, 4 nonzeros",
        "  A(0,0) = 9223372036854775807\n  A(1,2) = -9223372036854775808\n  A(2,1) = 9007199254740993\n",
        "g: 6 x 6 matrix of i32, csr, 18 stored, 18 nonzeros",
        "A: 3 x 3 of i64, csr, 4 stored (read from ",
        "; as i64)",
        "g: 6 x 6 of i32, csr, 18 stored (generated: 6 x 6 at density 0.5, seed 3; the default for a sparse tensor; as i32, values 1 to 9)",
        "h: not yet made, to hold i64 values",
    ] {
        assert!(stdout.contains(expected), "{expected:?} not in:\n{stdout}");
    }
    // Generated integers are 1 to 9, never the 0 that truncating (0, 1] gives.
    let values: Vec<i64> = stdout
        .lines()
        .filter(|l| l.starts_with("  g("))
        .map(|l| l.rsplit(" = ").next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(values.len(), 18, "{stdout}");
    assert!(values.iter().all(|v| (1..=9).contains(v)), "{values:?}");
    for expected in [
        "error: line 6: :type R: R: the value -0.5 at (1,1) is not an integer, and the values are held as i64",
        "error: line 7: :type A: A: the value 9223372036854775807 at (0,0) is beyond the range of i32",
        "error: line 8: :fill A: A holds i64 values: its fill is an integer i64 holds, not 2.5",
    ] {
        assert!(stderr.contains(expected), "{expected:?} not in:\n{stderr}");
    }
    assert_eq!(
        fs::read_to_string(&saved).unwrap(),
        "1 1 9223372036854775807\n2 3 -9223372036854775808\n3 2 9007199254740993\n3 3 5\n"
    );
}

// ---------------------------------------------------------------- complex values

/// H = [[2, 1+i, 0], [1-i, 0, -0.5i], [0, 0.5i, -1]], hermitian: its lower
/// triangle, as tessera writes it back.
const HERMITIAN_MTX: &str = "%%MatrixMarket matrix coordinate complex hermitian\n\
% a hermitian test matrix\n\
3 3 4\n\
1 1 2 0\n\
2 1 1 -1\n\
3 2 0 0.5\n\
3 3 -1 0\n";

/// H in full, as `complex general`, and as a FROSTT file (two numbers a value).
const HERMITIAN_GENERAL: &str = "%%MatrixMarket matrix coordinate complex general\n3 3 6\n\
1 1 2 0\n1 2 1 1\n2 1 1 -1\n2 3 0 -0.5\n3 2 0 0.5\n3 3 -1 0\n";
const HERMITIAN_TNS: &str = "1 1 2 0\n1 2 1 1\n2 1 1 -1\n2 3 0 -0.5\n3 2 0 0.5\n3 3 -1 0\n";

#[test]
fn convert_keeps_a_complex_file_complex() {
    let dir = scratch("convert_complex");
    let h = write(&dir, "h.mtx", HERMITIAN_MTX);
    // Unasked: read as c64, written back with its symmetry and comments.
    let out = dir.join("out.mtx");
    tessera()
        .args(["convert", &h])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains(": 3 x 3 of c64, 6 nonzeros, via csr"));
    assert_eq!(fs::read_to_string(&out).unwrap(), HERMITIAN_MTX);
    tessera()
        .args(["convert", "--general", &h, "-"])
        .assert()
        .success()
        .stdout(HERMITIAN_GENERAL);
    // To FROSTT with its sidecar, and back: the sidecar tells it is complex.
    let tns = dir.join("h.tns");
    tessera().args(["convert", &h]).arg(&tns).assert().success();
    assert_eq!(fs::read_to_string(&tns).unwrap(), HERMITIAN_TNS);
    assert_eq!(fs::read_to_string(dir.join("h.dims")).unwrap(), "3 3\n6\n");
    tessera()
        .arg("convert")
        .arg(&tns)
        .arg("-")
        .assert()
        .success()
        .stdout(HERMITIAN_GENERAL);
    // Through standard input, the banner tells.
    tessera()
        .args(["convert", "-", "-"])
        .write_stdin(HERMITIAN_MTX)
        .assert()
        .success()
        .stdout(HERMITIAN_MTX);
    // A real file asked as c64 gets imaginary parts 0.
    let b = write(&dir, "b.mtx", B_MTX);
    tessera()
        .args(["convert", "-t", "c64", &b, "-"])
        .assert()
        .success()
        .stdout("%%MatrixMarket matrix coordinate complex general\n3 4 3\n1 2 1 0\n2 4 -3 0\n3 1 2 0\n");
    // A complex file asked as a real type is refused.
    assert_fails(
        tessera().args(["convert", "-t", "f64", &h, "-"]),
        &[
            "convert INPUT",
            "h.mtx holds complex values, which are read as c64, not f64: leave out -t, or give -t c64",
        ],
    );
    // A value that is no number names the file, the line and the part.
    let bad = write(&dir, "bad.mtx", &HERMITIAN_MTX.replace("3 2 0 0.5", "3 2 0 0.5i"));
    assert_fails(
        tessera().args(["convert", &bad, "-"]),
        &["bad.mtx:6: expected the imaginary part of a complex value, a number, found `0.5i`"],
    );
}

#[test]
fn info_describes_a_complex_file_and_its_hermitian_symmetry() {
    let dir = scratch("info_complex");
    let h = write(&dir, "h.mtx", HERMITIAN_MTX);
    tessera()
        .args(["info", &h, "--spy"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "h.mtx: Matrix Market coordinate complex hermitian\n",
        ))
        .stdout(predicate::str::contains("nonzeros: 6 (density 66.67%)\n"))
        .stdout(predicate::str::contains("values: c64, 0 NaN, 0 infinite"))
        .stdout(predicate::str::contains("symmetry: hermitian (A = Aᴴ)"))
        // Sixteen bytes a value.
        .stdout(predicate::str::contains("  dense      144 B  (9 stored values)"));
    // A .tns file with its sidecar tells; without one, -t c64 says so.
    let tns = dir.join("h.tns");
    tessera().args(["convert", &h]).arg(&tns).assert().success();
    tessera()
        .arg("info")
        .arg(&tns)
        .assert()
        .success()
        .stdout(predicate::str::contains("FROSTT, order 2"))
        .stdout(predicate::str::contains("values: c64"));
    let bare = write(&dir, "bare.tns", HERMITIAN_TNS);
    assert_fails(
        tessera().args(["info", &bare]),
        // Without a shape the order is read from the first line, `1 1 2 0`:
        // three coordinates and a value, until a real part of 0.
        &[
            "bare.tns:4: expected the mode-2 coordinate",
            "found `0` (a line ending in a complex value, two numbers, is read as c64)",
        ],
    );
    tessera()
        .args(["info", "-t", "c64", &bare])
        .assert()
        .success()
        .stdout(predicate::str::contains("symmetry: hermitian"));
    assert_fails(
        tessera().args(["info", "-t", "i64", &h]),
        &["h.mtx holds complex values, which are read as c64, not i64"],
    );
}

#[test]
fn eval_reads_a_complex_file_only_as_c64() {
    let dir = scratch("eval_complex");
    let h = format!("H:{}", write(&dir, "h.mtx", HERMITIAN_MTX));
    assert_fails(
        tessera().args(["eval", "y(i) = H(i,j)", "-i", &h]),
        &[
            "-i H",
            "h.mtx holds complex values, which are read as c64, not f64: give -t H:c64",
        ],
    );
    assert_fails(
        tessera().args(["eval", "y(i) = H(i,j)", "-i", &h, "-t", "H:i32"]),
        &["not i32: give -t H:c64"],
    );
    // Reordering permutes real values only: refused before anything runs.
    assert_fails(
        tessera().args(["eval", "y(i) = H(i,j)", "-i", &h, "-t", "H:c64", "--reorder", "rcm"]),
        &[
            "--reorder rcm",
            "H holds c64 values: reordering permutes real values only",
        ],
    );
    tessera()
        .args(["eval", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("(f64, f32, i64, i32, bool, c64)"))
        .stdout(predicate::str::contains("-t A:c64 as complex values"));
}

#[test]
fn the_repl_types_loads_prints_and_saves_complex_tensors() {
    let dir = scratch("repl_complex");
    let h = write(&dir, "h.mtx", HERMITIAN_MTX);
    let b = write(&dir, "b.mtx", B_MTX);
    let saved_mtx = dir.join("saved.mtx");
    let saved_tns = dir.join("saved.tns");
    let script = format!(
        ":type H c64\n\
         :load H {h}\n\
         H\n\
         :save H {saved_mtx}\n\
         :save H {saved_tns}\n\
         :load G {h}\n\
         :type H f64\n\
         :load B {b}\n\
         :type B c64\n\
         :print B\n\
         :type z c64\n\
         :list\n\
         :gen x 4 1 7\n\
         :print x\n\
         :gen z 4 1 7\n\
         :print z\n\
         :type B f64\n\
         :print B\n",
        saved_mtx = saved_mtx.display(),
        saved_tns = saved_tns.display()
    );
    let output = tessera().arg("repl").write_stdin(script).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Errors are reported by line and the session goes on (exit 1 at its end).
    assert!(!output.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    for expected in [
        "H: 3 x 3 matrix of c64, csr, 6 stored, 6 nonzeros (density 66.67%)\n",
        "  H(0,0) = 2+0i\n  H(0,1) = 1+1i\n  H(1,0) = 1-1i\n  H(1,2) = 0-0.5i\n  H(2,1) = 0+0.5i\n  H(2,2) = -1+0i\n",
        "B: 3 x 4 matrix of c64, csr, 3 stored, 3 nonzeros",
        "  B(0,1) = 1+0i\n  B(1,3) = -3+0i\n",
        "H: 3 x 3 of c64, csr, 6 stored (read from ",
        "; as c64)",
        "z: not yet made, to hold c64 values",
        "z: 4 vector of c64, dense, 4 stored, 4 nonzeros",
        // Imaginary parts 0: back to f64 exactly.
        "B: 3 x 4 matrix, csr, 3 stored, 3 nonzeros",
    ] {
        assert!(stdout.contains(expected), "{expected:?} not in:\n{stdout}");
    }
    // A generated c64 tensor's real parts are the f64 tensor's of the same
    // seed; its imaginary parts are in (0, 1] and differ.
    let values = |name: &str| -> Vec<String> {
        stdout
            .lines()
            .filter(|l| l.starts_with(&format!("  {name}(")))
            .map(|l| l.rsplit(" = ").next().unwrap().to_string())
            .collect()
    };
    let (x, z) = (values("x"), values("z"));
    assert_eq!((x.len(), z.len()), (4, 4), "{stdout}");
    for (x, z) in x.iter().zip(&z) {
        let (re, im) = z.split_once('+').expect("a positive imaginary part");
        assert_eq!(re, x);
        let im: f64 = im.trim_end_matches('i').parse().unwrap();
        assert!(im > 0.0 && im <= 1.0, "{z}");
    }
    for expected in [
        "error: line 6: :load G: ",
        "h.mtx holds complex values, which are read as c64, not f64: ask for it with :type G c64 first",
        "error: line 7: :type H: H: the value 1+1i at (0,1) has an imaginary part, and real values are asked for \
         (real(...) and imag(...) in a statement give its parts)",
    ] {
        assert!(stderr.contains(expected), "{expected:?} not in:\n{stderr}");
    }
    assert_eq!(stderr.lines().count(), 2, "{stderr}");
    assert_eq!(fs::read_to_string(&saved_mtx).unwrap(), HERMITIAN_GENERAL);
    assert_eq!(fs::read_to_string(&saved_tns).unwrap(), HERMITIAN_TNS);
    // What the REPL saved reads back as it was written.
    tessera()
        .arg("convert")
        .arg(&saved_tns)
        .arg("-")
        .assert()
        .success()
        .stdout(HERMITIAN_GENERAL);
}

#[test]
fn reorder_moves_complex_values_as_they_are() {
    let dir = scratch("reorder_complex");
    let h = write(&dir, "h.mtx", HERMITIAN_MTX);
    let out = dir.join("rcm.mtx");
    tessera()
        .args(["reorder", &h])
        .arg(&out)
        .args(["--method", "rcm"])
        .assert()
        .success();
    let text = fs::read_to_string(&out).unwrap();
    assert!(
        text.starts_with("%%MatrixMarket matrix coordinate complex general\n3 3 6\n"),
        "{text}"
    );
    // The same six values, moved.
    let mut values: Vec<&str> = text.lines().skip(2).map(|l| l.splitn(3, ' ').nth(2).unwrap()).collect();
    values.sort_unstable();
    assert_eq!(values, ["-1 0", "0 -0.5", "0 0.5", "1 -1", "1 1", "2 0"]);
}
