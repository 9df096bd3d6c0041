//! The REPL as people type in it.

use predicates::prelude::*;

mod common;
use common::tessera;

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

/// A kernel the chosen tier cannot compile is reported on stderr, as
/// `tessera eval` reports it, and once: the second run of the same kernel
/// says nothing new.
#[test]
fn in_the_repl_a_kernel_the_tier_cannot_compile_is_reported_once() {
    // The jit tier's row merges read f64 only: f32 operands stay interpreted.
    let output = tessera()
        .args([
            "repl",
            "-g",
            "A:5x5:0.5:1",
            "-g",
            "B:5x5:0.5:2",
            "-t",
            "A:f32",
            "-t",
            "B:f32",
        ])
        .args(["-f", "C:csr", "--tier", "jit"])
        .write_stdin("C(i,j) = A(i,j) + B(i,j)\nD(i,j) = A(i,j) + B(i,j)\nC(i,j) = A(i,j) + B(i,j)\n")
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8(output.stderr).unwrap();
    let notes: Vec<&str> = stderr.lines().filter(|l| l.starts_with("note: tier jit")).collect();
    // C's kernel and D's (stored as the default, another kernel): one each.
    assert_eq!(notes.len(), 2, "{stderr}");
    assert!(
        notes[0].contains("could not compile `C(i,j) = A(i,j) + B(i,j)`"),
        "{stderr}"
    );
    assert!(notes[0].contains("the kernel stays interpreted"), "{stderr}");
    assert!(notes[1].contains("`D(i,j) = A(i,j) + B(i,j)`"), "{stderr}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(stdout.matches("C: 5 x 5 matrix of f32, csr").count(), 2, "{stdout}");
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

fn scratch(test: &str) -> std::path::PathBuf {
    common::scratch("repl", test)
}

/// A scalar result is printed with its name, so piped output says which
/// number is which: after a statement, as a bare name and by `:print`.
#[test]
fn in_the_repl_scalars_are_printed_with_their_name() {
    let dir = scratch("scalars");
    let a = dir.join("a.mtx");
    std::fs::write(
        &a,
        "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n2 1 2.0\n",
    )
    .unwrap();
    // s = 1² + 2² = 5; t = 1 + 2 = 3.
    tessera()
        .arg("repl")
        .write_stdin(format!(
            ":load A {}\ns = A(i,j) * A(i,j)\nt = sum(i, sum(j, A(i,j)))\ns\n:print t\n",
            a.display()
        ))
        .assert()
        .success()
        .stdout("A: 2 x 2 matrix, csr, 2 stored, 2 nonzeros (density 50%)\ns = 5\nt = 3\ns = 5\nt = 3\n");
}

/// What a pseudo-terminal shows, read as it comes.
struct Terminal {
    input: std::process::ChildStdin,
    output: std::sync::mpsc::Receiver<Vec<u8>>,
    seen: String,
    from: usize,
}

impl Terminal {
    fn write(&mut self, keys: &str) {
        use std::io::Write;
        self.input.write_all(keys.as_bytes()).unwrap();
        self.input.flush().unwrap();
    }
    /// Waits (up to a minute) until `text` appears after what was last
    /// waited for.
    fn wait_for(&mut self, text: &str) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            if let Some(at) = self.seen[self.from..].find(text) {
                self.from += at + text.len();
                return;
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.output.recv_timeout(left) {
                Ok(bytes) => self.seen.push_str(&String::from_utf8_lossy(&bytes)),
                Err(_) => panic!("`{text}` never appeared; the terminal shows:\n{}", self.seen),
            }
        }
    }
}

/// In a terminal (a pseudo-terminal made by util-linux `script`), Tab
/// completes a command, a tensor name of the session and a file path,
/// and the completed lines run.
#[test]
fn in_a_terminal_tab_completes_commands_names_and_paths() {
    use std::process::{Command as Process, Stdio};
    if Process::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: no `script` command to make a pseudo-terminal with");
        return;
    }
    let dir = scratch("completion");
    std::fs::write(
        dir.join("matrix_one.mtx"),
        "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 3.0\n",
    )
    .unwrap();
    let binary = assert_cmd::cargo::cargo_bin!("tessera").display().to_string();
    let mut child = Process::new("script")
        .args(["-qfec", &format!("{binary} repl"), "/dev/null"])
        .env("HOME", &dir)
        .env("TERM", "xterm")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("script starts");
    let mut stdout = child.stdout.take().expect("piped");
    let (send, output) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buffer = [0u8; 4096];
        while let Ok(n @ 1..) = std::io::Read::read(&mut stdout, &mut buffer) {
            if send.send(buffer[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut terminal = Terminal {
        input: child.stdin.take().expect("piped"),
        output,
        seen: String::new(),
        from: 0,
    };
    terminal.wait_for("tessera> ");
    terminal.write(":gen Alpha 3x3 0.5 1\n");
    terminal.wait_for("Alpha: 3 x 3 matrix");
    terminal.wait_for("tessera> ");
    // A command, then a name.
    terminal.write(":pr\tAl\t\n");
    terminal.wait_for(":print Alpha");
    terminal.wait_for("Alpha: 3 x 3 matrix");
    terminal.wait_for("  Alpha(");
    terminal.wait_for("tessera> ");
    // A path.
    terminal.write(&format!(":load Beta {}/matrix_o\t\n", dir.display()));
    terminal.wait_for(&format!(":load Beta {}/matrix_one.mtx", dir.display()));
    terminal.wait_for("Beta: 2 x 2 matrix, csr, 1 stored");
    terminal.wait_for("tessera> ");
    // A bare name, completed, shows the tensor.
    terminal.write("Be\t\n");
    terminal.wait_for("tessera> Beta");
    terminal.wait_for("  Beta(0,1) = 3");
    terminal.wait_for("tessera> ");
    terminal.write(":quit\n");
    let status = child.wait().unwrap();
    assert!(status.success(), "{}", terminal.seen);
}

/// A path graph in `dir`: edges j -> i stored as A(i,j), 0 -> 1 (1),
/// 1 -> 2 (2), 0 -> 3 (10).
fn path_graph(dir: &std::path::Path) -> std::path::PathBuf {
    let graph = dir.join("paths.mtx");
    std::fs::write(
        &graph,
        "%%MatrixMarket matrix coordinate real general\n4 4 3\n2 1 1\n3 2 2\n4 1 10\n",
    )
    .unwrap();
    graph
}

/// `:fill` sets what a tensor's unstored components hold: a shortest-path
/// step over a path graph, with `+inf` where there is no edge.
#[test]
fn in_the_repl_a_fill_makes_a_min_plus_step_run_over_the_edges() {
    let dir = scratch("repl_fill");
    let graph = path_graph(&dir);
    let script = format!(
        ":load A {}\n:fill A inf\n:gen d 4 0\n:format d sv\n:fill d inf\n:format e dense\n:plan e(i) = min(j, A(i,j) + d(j))\n:fill nobody 1\n:fill A many\n",
        graph.display()
    );
    tessera()
        .arg("repl")
        .write_stdin(script)
        .assert()
        // A script with errors ends with status 1, after running every line.
        .code(1)
        .stdout(predicate::str::contains(
            "A: 4 x 4 matrix, csr, 3 stored, fill inf, 3 other values",
        ))
        .stdout(predicate::str::contains(
            "all rows run as one block op: a dot product per row",
        ))
        .stderr(predicate::str::contains(":fill nobody: no tensor nobody"))
        .stderr(predicate::str::contains("bad fill `many`"));
}

/// `:semiring` reads later statements in a semiring (the tensors they read
/// take its zero as fill, unless `:fill` gave theirs), shows it and ends
/// it; `:def` defines an operator later statements call.
#[test]
fn in_the_repl_a_semiring_rewrites_statements_and_def_defines_operators() {
    let dir = scratch("repl_semiring");
    let graph = path_graph(&dir);
    let script = format!(
        ":load A {}\n:gen d 4 0\n:format d sv\n:semiring\n:semiring min-plus\n:semiring\n\
         :plan e(i) = A(i,j) * d(j)\n:semiring none\n:semiring\n\
         :def repl_softplus(x) = log(1 + exp(x))\ns = sum(i, repl_softplus(d(i)))\n\
         :semiring plus-minus\n:def repl_softplus(x) = x\n:def repl_bad(x) = A(i)\n",
        graph.display()
    );
    tessera()
        .arg("repl")
        .write_stdin(script)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "statements are read as written\nstatements are read in min-plus\n",
        ))
        .stdout(predicate::str::contains("statement: e(i) = min(j, A(i,j) + d(j))"))
        .stdout(predicate::str::contains("fill inf)"))
        .stdout(predicate::str::contains(
            "repl_softplus: an operator of 1 argument, compiled inline",
        ))
        // d holds inf where unstored now: softplus(inf) is inf.
        .stdout(predicate::str::contains("s = inf"))
        .stderr(predicate::str::contains(
            "line 12: :semiring: unknown semiring `plus-minus`",
        ))
        .stderr(predicate::str::contains(
            "line 13: :def: column 1: `repl_softplus` is taken by a function or operator",
        ))
        .stderr(predicate::str::contains(
            "line 14: :def: column 15: the body of repl_bad reads `A(i)`",
        ));
}
