//! The REPL as people type in it.

use assert_cmd::Command;
use predicates::prelude::*;

fn tessera() -> Command {
    Command::cargo_bin("tessera").expect("the tessera binary is built")
}

#[test]
fn in_the_repl_a_name_alone_prints_the_tensor_and_help_needs_no_colon() {
    tessera()
        .arg("repl")
        .write_stdin(":gen A 4x5 0.5 3\nA\nhelp\nquit\n:gen B 2x2 1\n")
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "A: 4 x 5 matrix, csr, 10 stored, 10 nonzeros (density 50%)\n  A(0,",
        ))
        .stdout(predicate::str::contains("Commands:"))
        .stdout(predicate::str::contains("B: 2 x 2").not());
}
