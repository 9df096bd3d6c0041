//! binsparse files (`.h5`) wherever the `tessera` command reads or writes
//! a tensor: `eval -i/-o`, `convert` both ways, `info` and the REPL's
//! `:load` and `:save`, with the same answers as through Matrix Market
//! files; a `.h5.gz` is refused. Built without the feature, the command
//! says how to get them.

use std::path::PathBuf;

use predicates::prelude::*;

mod common;
use common::{four_elt, tessera};

fn scratch(test: &str) -> PathBuf {
    common::scratch("binsparse_cli", test)
}

#[cfg(feature = "binsparse")]
mod with_binsparse {
    use std::fs;
    use std::path::Path;

    use super::*;

    fn path(dir: &Path, name: &str) -> String {
        dir.join(name).display().to_string()
    }

    /// `convert` into `to`, then `info` on it: the description line.
    fn converted(from: &str, to: &str, format: Option<&str>) -> String {
        let mut convert = tessera();
        convert.args(["convert", from, to]);
        if let Some(f) = format {
            convert.args(["-f", f]);
        }
        convert.assert().success();
        let info = tessera().args(["info", to]).assert().success();
        String::from_utf8(info.get_output().stdout.clone()).unwrap()
    }

    #[test]
    fn convert_writes_the_format_asked_and_reads_back_the_same_matrix() {
        let dir = scratch("convert");
        let csc = path(&dir, "a.bsp.h5");
        assert!(converted(&four_elt(), &csc, Some("csc")).contains("binsparse CSC, uint32 indices, float64 values"));
        let back = path(&dir, "back.mtx");
        tessera().args(["convert", &csc, &back]).assert().success();
        // The pattern file's entries, now real ones, in the same places.
        let original = fs::read_to_string(four_elt()).unwrap();
        let returned = fs::read_to_string(&back).unwrap();
        let entries = |text: &str| -> Vec<String> {
            let mut e: Vec<String> = text
                .lines()
                .filter(|l| !l.starts_with('%'))
                .skip(1)
                .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
                .collect();
            e.sort();
            e
        };
        assert_eq!(entries(&original).len(), 91756);
        assert_eq!(entries(&original), entries(&returned));
        // DIA has no binsparse form: the file gets the matrix as CSR.
        let banded = path(&dir, "band.mtx");
        fs::write(
            &banded,
            "%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1\n2 2 2\n3 3 3\n1 2 5\n",
        )
        .unwrap();
        let dia = path(&dir, "dia.h5");
        assert!(converted(&banded, &dia, Some("dia")).contains("binsparse CSR"));
    }

    #[test]
    fn eval_reads_and_writes_binsparse_with_the_answers_of_matrix_market() {
        let dir = scratch("eval");
        let a = path(&dir, "a.h5");
        tessera()
            .args(["convert", &four_elt(), &a, "-f", "dcsr"])
            .assert()
            .success();
        let run = |input: &str, output: &str| {
            tessera()
                .args([
                    "eval",
                    "y(i) = A(i,j) * x(j)",
                    "-i",
                    &format!("A:{input}"),
                    "-g",
                    "x:15606:1:3",
                ])
                .args(["-o", &format!("y:{output}")])
                .assert()
                .success();
        };
        let (from_h5, from_mtx) = (path(&dir, "y.h5"), path(&dir, "y.mtx"));
        run(&a, &from_h5);
        run(&four_elt(), &from_mtx);
        let y_mtx = path(&dir, "y_again.mtx");
        tessera().args(["convert", &from_h5, &y_mtx]).assert().success();
        let values = |p: &str| -> Vec<f64> {
            fs::read_to_string(p)
                .unwrap()
                .lines()
                .filter(|l| !l.starts_with('%'))
                .skip(1)
                .map(|l| l.split_whitespace().last().unwrap().parse().unwrap())
                .collect()
        };
        let (h5, mtx) = (values(&y_mtx), values(&from_mtx));
        assert_eq!(h5.len(), 15606);
        assert_eq!(h5, mtx);
        tessera()
            .args(["info", &from_h5])
            .assert()
            .success()
            .stdout(predicate::str::contains("binsparse DVEC, float64 values"));
    }

    #[test]
    fn the_repl_loads_and_saves_binsparse() {
        let dir = scratch("repl");
        let saved = path(&dir, "saved.h5");
        tessera()
            .args(["repl", "-i", &format!("A:{}", four_elt())])
            .write_stdin(format!(":save A {saved}\n:load B {saved}\ns = B(i,j) * B(i,j)\n"))
            .assert()
            .success()
            .stdout(predicate::str::contains("s = 91756"));
        tessera()
            .args(["info", &saved])
            .assert()
            .success()
            .stdout(predicate::str::contains("binsparse CSR"));
    }

    #[test]
    fn complex_values_are_refused_for_binsparse_files_and_read_from_real_ones() {
        let dir = scratch("complex");
        let h = path(&dir, "h.mtx");
        fs::write(
            &h,
            "%%MatrixMarket matrix coordinate complex hermitian\n2 2 2\n1 1 2 0\n2 1 1 -1\n",
        )
        .unwrap();
        let out = path(&dir, "h.h5");
        tessera()
            .args(["convert", &h, &out])
            .assert()
            .failure()
            .stderr(predicate::str::contains(
                "binsparse files hold real values here: write c64 values to a .mtx or .tns file",
            ));
        assert!(!Path::new(&out).exists(), "nothing is written");
        // A real binsparse file read as c64 has imaginary parts 0.
        let real = path(&dir, "a.h5");
        tessera().args(["convert", &four_elt(), &real]).assert().success();
        tessera()
            .args(["repl", "-t", "A:c64", "-i", &format!("A:{real}")])
            .write_stdin("A\n")
            .assert()
            .success()
            .stdout(predicate::str::contains("A: 15606 x 15606 matrix of c64, csr"))
            .stdout(predicate::str::contains(" = 1+0i\n"));
    }

    #[test]
    fn gzip_and_faulty_files_are_refused_with_the_file() {
        let dir = scratch("faults");
        let gz = path(&dir, "a.h5.gz");
        tessera()
            .args(["convert", &four_elt(), &gz])
            .assert()
            .failure()
            .stderr(predicate::str::contains("binsparse files are not gzip-compressed"));
        let fake = path(&dir, "fake.h5");
        fs::write(&fake, "not hdf5").unwrap();
        tessera()
            .args(["info", &fake])
            .assert()
            .failure()
            .stderr(predicate::str::contains(format!("{fake}: binsparse: not an HDF5 file")));
    }
}

#[cfg(not(feature = "binsparse"))]
#[test]
fn without_the_feature_the_command_says_how_to_read_binsparse() {
    let dir = scratch("unavailable");
    let out = dir.join("a.h5").display().to_string();
    tessera()
        .args(["convert", &four_elt(), &out])
        .assert()
        .failure()
        .stderr(predicate::str::contains("build it with `--features binsparse`"));
}
