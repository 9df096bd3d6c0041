//! `-` for standard input and output, and `.gz` files read and written
//! transparently, with the same entries as the plain files.

use predicates::prelude::*;

mod common;
use common::{four_elt, tessera};

#[test]
fn standard_input_and_output_carry_matrix_market_and_frostt() {
    let text = std::fs::read_to_string(four_elt()).unwrap();
    tessera()
        .args(["eval", "s = A(i,j)", "-i", "A:-"])
        .write_stdin(text.clone())
        .assert()
        .success()
        .stdout("91756\n");
    // Converted to standard output: the file alone, still a pattern with
    // its provenance comment, and it reads back.
    let out = tessera().args(["convert", &four_elt(), "-"]).output().unwrap();
    assert!(out.status.success());
    let written = String::from_utf8(out.stdout).unwrap();
    assert!(written.starts_with("%%MatrixMarket matrix coordinate pattern general\n% converted from "));
    // 4elt lists its entries by rows: written back, it is the same file.
    assert_eq!(written, text);
    tessera()
        .args(["eval", "s = A(i,j)", "-i", "A:-"])
        .write_stdin(written)
        .assert()
        .success()
        .stdout("91756\n");
    // An order-3 result goes out as FROSTT lines, and comes back in.
    let out = tessera()
        .args(["eval", "B(i,j,k) = T(i,j,k) * 2", "-g", "T:3x4x5:0.5:2", "-o", "B:-"])
        .output()
        .unwrap();
    let tns = String::from_utf8(out.stdout).unwrap();
    assert_eq!(tns.lines().count(), 30, "{tns}");
    tessera()
        .args(["eval", "s = B(i,j,k)", "-i", "B:-"])
        .write_stdin(tns)
        .assert()
        .success();
}

#[test]
fn gzip_files_round_trip_with_the_entries_of_plain_ones() {
    let dir = std::env::temp_dir().join(format!("tessera-streams-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["a.mtx", "a.mtx.gz", "t.tns", "t.tns.gz"] {
        let path = dir.join(name);
        let source = if name.starts_with('a') {
            four_elt()
        } else {
            let t = dir.join("source.tns");
            tessera()
                .args(["eval", "B(i,j,k) = T(i,j,k) * 3", "-g", "T:6x5x4:0.3:8", "-o"])
                .arg(format!("B:{}", t.display()))
                .assert()
                .success();
            t.display().to_string()
        };
        tessera().args(["convert", &source]).arg(&path).assert().success();
        let sum = |p: &str| {
            let stmt = if name.starts_with('a') {
                "s = A(i,j)"
            } else {
                "s = A(i,j,k)"
            };
            tessera()
                .args(["eval", stmt, "-i", &format!("A:{p}")])
                .output()
                .unwrap()
                .stdout
        };
        assert_eq!(sum(&path.display().to_string()), sum(&source), "{name}");
    }
    let gz = std::fs::read(dir.join("a.mtx.gz")).unwrap();
    assert_eq!(&gz[..2], &[0x1f, 0x8b], "a gzip header");
    assert!(gz.len() * 3 < std::fs::metadata(dir.join("a.mtx")).unwrap().len() as usize);
    tessera()
        .arg("info")
        .arg(dir.join("t.tns.gz"))
        .assert()
        .success()
        .stdout(predicate::str::contains("shape: 6 x 5 x 4"));
}
