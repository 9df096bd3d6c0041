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

/// `:schedule` sets, shows and clears the schedule later statements are
/// compiled with; their plans show it.
#[test]
fn in_the_repl_a_schedule_is_set_shown_used_and_cleared() {
    tessera()
        .arg("repl")
        .write_stdin(
            ":schedule\n:schedule reorder(i, j)\n:schedule\n:gen A 20x20 0.5 1\n:gen x 20 1 2\n:plan y(i) = A(i,j) * x(j)\n:schedule none\n:schedule\n",
        )
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "statements use the default schedule\nschedule: reorder(i, j)\n",
        ))
        .stdout(predicate::str::contains("\nschedule: reorder(i, j)\nloop order: i, j\n"))
        .stdout(predicate::str::ends_with("statements use the default schedule\n"));
    tessera()
        .arg("repl")
        .write_stdin(":schedule reorder(i)\n")
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "line 1: :schedule: schedule, column 1: reorder takes two variables or more",
        ));
}

/// Ctrl-C (SIGINT) while a statement runs interrupts that statement, and
/// the session goes on with its tensors and the lines after it.
#[test]
fn in_the_repl_an_interrupt_stops_the_statement_and_keeps_the_session() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command as Process, Stdio};
    let mut repl = Process::new(assert_cmd::cargo::cargo_bin!("tessera"))
        .arg("repl")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the REPL starts");
    let mut stdin = repl.stdin.take().expect("piped");
    let mut stdout = BufReader::new(repl.stdout.take().expect("piped"));
    // A product of about 70 million entries, split into thousands of chunks
    // on one thread: seconds of work, stopped within one chunk.
    writeln!(stdin, ":threads 1\n:gen A 30000x30000 0.002 1").unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.starts_with("A: 30000 x 30000"), "{line}");
    writeln!(stdin, "C(i,j) = A(i,k) * A(k,j)").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(400));
    let status = Process::new("kill")
        .args(["-INT", &repl.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    writeln!(stdin, ":list\nquit").unwrap();
    drop(stdin);
    let output = repl.wait_with_output().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("line 3: interrupted; the session goes on"), "{stderr}");
    assert!(rest.starts_with("A: 30000 x 30000, csr"), "the session keeps A: {rest}");
    assert!(!rest.contains("C:"), "C was not computed: {rest}");
}
