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

/// `:threads` sets and shows the threads kernels use; a run with enough
/// work is split on them.
#[test]
fn in_the_repl_threads_are_set_shown_and_used() {
    tessera()
        .arg("repl")
        .write_stdin(
            ":threads\n:threads 2\n:threads\n:gen A 400x400 0.5 1\n:time 2 s = A(i,j) * A(i,j)\n:threads auto\n:threads\n",
        )
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "kernels use every core when they have enough work\nkernels use 2 threads\n",
        ))
        .stdout(predicate::str::is_match(r"; each in [0-9]+ chunks on 2 threads\n").unwrap())
        .stdout(predicate::str::ends_with("kernels use every core when they have enough work\n"));
    tessera()
        .arg("repl")
        .write_stdin(":threads 0\n")
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "line 1: :threads: usage: :threads N|auto, N at least 1",
        ));
}
