//! The `tessera` command on the OpenCL tier (built with `--features
//! opencl`, run on an OpenCL device such as PoCL's): the same answers as
//! the Cranelift tier on the shipped matrix, dense and sparse outputs,
//! `--print opencl`, and the REPL.

use std::fs;
use std::path::{Path, PathBuf};

use predicates::prelude::*;

mod common;
use common::{four_elt, tessera};

fn scratch(test: &str) -> PathBuf {
    common::scratch("opencl_cli", test)
}

/// The entries of a Matrix Market file written by `-o`: its size line and
/// each entry's text, values parsed.
fn entries(path: &Path) -> (String, Vec<(String, f64)>) {
    let text = fs::read_to_string(path).unwrap();
    let mut lines = text.lines().filter(|l| !l.starts_with('%'));
    let size = lines.next().expect("a size line").to_string();
    let entries = lines
        .map(|line| {
            let (coords, value) = line.rsplit_once(' ').unwrap_or(("", line));
            (coords.to_string(), value.parse::<f64>().expect("a value"))
        })
        .collect();
    (size, entries)
}

/// Runs `statement` on the jit and the OpenCL tier, writing `output`, and
/// checks that the two files hold the same entries (values to 1e-12).
fn same_on_both_tiers(test: &str, statement: &str, args: &[&str], output: &str) {
    let dir = scratch(test);
    let file = |tier: &str| dir.join(format!("{tier}.mtx"));
    for tier in ["jit", "opencl"] {
        let out = format!("{output}:{}", file(tier).display());
        tessera()
            .args(["eval", statement])
            .args(args)
            .args(["--tier", tier, "-o", &out])
            .assert()
            .success()
            .stderr(predicate::str::is_empty());
    }
    let (jit, opencl) = (entries(&file("jit")), entries(&file("opencl")));
    assert_eq!(jit.0, opencl.0, "{statement}: sizes");
    assert_eq!(jit.1.len(), opencl.1.len(), "{statement}: entries");
    assert!(!jit.1.is_empty(), "{statement}: an empty result checks nothing");
    for ((jc, jv), (oc, ov)) in jit.1.iter().zip(&opencl.1) {
        assert_eq!(jc, oc, "{statement}: coordinates");
        assert!(
            (jv - ov).abs() <= 1e-12 * jv.abs().max(1.0),
            "{statement} at {jc}: jit {jv}, opencl {ov}"
        );
    }
}

#[test]
fn spmv_on_the_device_matches_the_jit() {
    let a = format!("A:{}", four_elt());
    same_on_both_tiers(
        "spmv",
        "y(i) = A(i,j) * x(j)",
        &["-i", &a, "-g", "x:15606:1:7", "-f", "y:dense"],
        "y",
    );
}

#[test]
fn sparse_outputs_are_assembled_from_the_device_as_on_the_jit() {
    let a = format!("A:{}", four_elt());
    // SpGEMM through a workspace per work-item, and a sum of two matrices
    // merged row by row: both two-phase on the device.
    same_on_both_tiers("spgemm", "C(i,j) = A(i,k) * A(k,j)", &["-i", &a, "-f", "C:csr"], "C");
    same_on_both_tiers(
        "add",
        "C(i,j) = A(i,j) + B(i,j)",
        &["-i", &a, "-g", "B:15606x15606:0.0002:3", "-f", "C:csr"],
        "C",
    );
}

#[test]
fn print_opencl_shows_the_kernel_and_its_mapping() {
    let a = format!("A:{}", four_elt());
    tessera()
        .args(["eval", "y(i) = A(i,j) * x(j)", "-i", &a, "-g", "x:15606:1"])
        .args(["--tier", "opencl", "--print", "opencl"])
        .assert()
        .success()
        .stdout(predicate::str::contains("// one work-item per coordinate of i"))
        .stdout(predicate::str::contains("__kernel void tessera_kernel("))
        .stdout(predicate::str::contains("#pragma OPENCL FP_CONTRACT OFF"));
}

#[test]
fn the_repl_runs_statements_on_the_device() {
    let a = format!("A:{}", four_elt());
    tessera()
        .args(["repl", "--tier", "opencl", "-i", &a])
        .write_stdin("s = A(i,j) * A(i,j)\n")
        .assert()
        .success()
        .stdout(predicate::str::contains("s = 91756"));
}
