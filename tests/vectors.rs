//! A vector written to a Matrix Market file (an `n x 1` matrix there)
//! reads back as the vector it was, when a statement reads it with one
//! index; with two it stays the matrix the file holds.

use predicates::prelude::*;

mod common;
use common::tessera;

#[test]
fn a_vector_round_trips_through_matrix_market() {
    let dir = std::env::temp_dir().join(format!("tessera-vectors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, density) in [("dense.mtx", "1"), ("sparse.mtx", "0.4")] {
        let path = dir.join(name);
        // x(i) = y(i) * 1 keeps the values; s sums their squares both ways.
        tessera()
            .args(["eval", "v(i) = x(i) * 1", "-g", &format!("x:50:{density}:9"), "-o"])
            .arg(format!("v:{}", path.display()))
            .assert()
            .success();
        let direct = tessera()
            .args(["eval", "s = x(i) * x(i)", "-g", &format!("x:50:{density}:9")])
            .output()
            .unwrap();
        tessera()
            .args(["eval", "s = v(i) * v(i)", "-i"])
            .arg(format!("v:{}", path.display()))
            .assert()
            .success()
            .stdout(String::from_utf8(direct.stdout).unwrap());
        tessera()
            .args(["eval", "s = v(i) * v(i)", "--print", "plan", "-i"])
            .arg(format!("v:{}", path.display()))
            .assert()
            .success()
            .stdout(predicate::str::contains("a 50 x 1 matrix read as a vector"));
        tessera()
            .args(["eval", "B(i,j) = v(i,j)", "-i"])
            .arg(format!("v:{}", path.display()))
            .assert()
            .success()
            .stdout(predicate::str::starts_with("B: 50 x 1 matrix"));
    }
}
