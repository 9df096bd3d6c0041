//! Nothing materializes more than the user asked for: absurd sizes are
//! refused with a clear error before anything is allocated, and summaries
//! read only the entries they show.

use std::path::PathBuf;

use predicates::prelude::*;

mod common;
use common::tessera;

fn scratch(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tessera-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn info_on_a_huge_mode_with_one_entry_completes_without_allocating_by_the_mode() {
    let tns = scratch("huge.tns", "1 1 99999999999 1.0\n");
    tessera()
        .arg("info")
        .arg(&tns)
        .assert()
        .success()
        .stdout(predicate::str::contains("shape: 1 x 1 x 99999999999"))
        .stdout(predicate::str::contains("nonzeros: 1 "))
        .stdout(predicate::str::contains(
            "dense      800.0 GB  (99999999999 stored values, more positions than tessera packs)\n",
        ));
    let mtx = scratch(
        "tall.mtx",
        "%%MatrixMarket matrix coordinate real general\n10000000000 10 1\n1 1 1.0\n",
    );
    tessera()
        .arg("info")
        .arg(&mtx)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "rows: 10000000000, entries each: min 0, median 0, mean 0, max 1, std 0; 9999999999 empty",
        ))
        .stdout(predicate::str::contains(
            "csr        40.0 GB  (1 stored values, more positions than tessera packs)\n",
        ))
        .stdout(predicate::str::contains("dcsr       36 B  (1 stored values)"));
}

#[test]
fn an_output_that_fills_in_is_refused_beyond_the_limit_and_the_plan_says_it_fills_in() {
    tessera()
        .env("TESSERA_MEMORY_LIMIT", "1G")
        .args(["eval", "C(i,j) = A(i,j) + d(j)", "-g", "A:100000x100000:0.0000001", "-g", "d:100000:1"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "the output C (100000 x 100000, csr), which fills in, needs 149.0 GiB but the limit is 1.0 GiB (TESSERA_MEMORY_LIMIT)",
        ));
    tessera()
        .args([
            "eval",
            "C(i,j) = A(i,j) + d(j)",
            "-g",
            "A:10x10:0.1",
            "-g",
            "d:10:1",
            "--print",
            "plan",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("note: output C fills in"));
    // A constant added takes the place of the zeros: the result keeps A's
    // entries, with the constant as its fill.
    tessera()
        .args(["eval", "C(i,j) = A(i,j) + 1", "-g", "A:10x10:0.1", "--print", "plan"])
        .assert()
        .success()
        .stdout(predicate::str::contains("fills in").not())
        .stdout(predicate::str::contains("C: 10 x 10 matrix, csr, 10 stored, fill 1"));
    // A product does not fill in.
    tessera()
        .args(["eval", "C(i,j) = A(i,j) * 2", "-g", "A:10x10:0.1", "--print", "plan"])
        .assert()
        .success()
        .stdout(predicate::str::contains("fills in").not());
}

#[test]
fn a_dense_output_beyond_the_limit_is_refused_before_it_is_allocated() {
    tessera()
        .env("TESSERA_MEMORY_LIMIT", "1G")
        .args([
            "eval",
            "C(i,j) = A(i,j) + 1",
            "-g",
            "A:20000x20000:0.000001",
            "-f",
            "C:dense",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "a dense 20000 x 20000 array needs 3.0 GiB but the limit is 1.0 GiB (TESSERA_MEMORY_LIMIT)",
        ));
}

#[test]
fn a_precomputes_vector_beyond_the_limit_is_refused_before_it_is_allocated() {
    tessera()
        .env("TESSERA_MEMORY_LIMIT", "1G")
        .args([
            "eval",
            "y(i) = A(i,j) * B(j,k) * x(k)",
            "-g",
            "A:10x200000000:0.000000001",
            "-g",
            "B:200000000x10:0.000000001",
            "-f",
            "B:dcsr",
            "-g",
            "x:10:1",
            "-f",
            "y:dense",
            "--threads",
            "2",
            "-s",
            "precompute(B(j,k) * x(k), j, j, w)",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "the precompute's vector temporaries (200000000 values on each of",
        ))
        .stderr(predicate::str::contains(
            "but the limit is 1.0 GiB (TESSERA_MEMORY_LIMIT)",
        ));
}

#[test]
fn generating_a_tensor_beyond_the_limit_is_refused_at_once() {
    tessera()
        .env("TESSERA_MEMORY_LIMIT", "4G")
        .args(["eval", "C(i,j) = A(i,j)", "-g", "A:100000x100000:0.01"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "generating A (100000 x 100000 at density 0.01, 100000000 nonzeros) needs 7.5 GiB but the limit is 4.0 GiB",
        ));
}

#[test]
fn a_matrix_market_header_declaring_more_entries_than_fit_is_refused_with_file_and_line() {
    let mtx = scratch(
        "many.mtx",
        "%%MatrixMarket matrix coordinate real general\n1000000 1000000 900000000000\n1 1 1.0\n",
    );
    tessera()
        .env("TESSERA_MEMORY_LIMIT", "1G")
        .arg("info")
        .arg(&mtx)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("many.mtx"));
}

#[test]
fn convert_errors_keep_their_context() {
    let tns = scratch("order3.tns", "1 1 1 1.0\n2 2 2 2.0\n");
    let out = tns.with_file_name("order3.mtx");
    tessera()
        .arg("convert")
        .arg(&tns)
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with(format!(
            "error: writing {}: Matrix Market files hold matrices and vectors",
            out.display()
        )));
}
