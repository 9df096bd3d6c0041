//! Writing a result never destroys the file it replaces until the new one
//! is complete: a writer killed mid-file leaves the old file as it was.

use std::path::Path;
use std::process::Command as Process;
use std::time::{Duration, Instant};

use assert_cmd::cargo::cargo_bin;
use assert_cmd::Command;

fn scratch(test: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tessera-safe-writes-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The temporary file a write in progress makes beside `target`.
fn write_in_progress(target: &Path) -> bool {
    let name = format!(".{}.tessera-", target.file_name().unwrap().to_string_lossy());
    std::fs::read_dir(target.parent().unwrap())
        .unwrap()
        .any(|e| e.unwrap().file_name().to_string_lossy().starts_with(&name))
}

#[test]
fn a_convert_killed_while_writing_leaves_the_old_output_intact() {
    let dir = scratch("killed");
    let big = dir.join("big.mtx");
    Command::cargo_bin("tessera")
        .unwrap()
        .args(["eval", "B(i,j) = A(i,j)", "-g", "A:3000x3000:0.3", "-o"])
        .arg(format!("B:{}", big.display()))
        .assert()
        .success();
    let out = dir.join("out.mtx");
    let old = "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 5\n";
    std::fs::write(&out, old).unwrap();

    let mut child = Process::new(cargo_bin("tessera"))
        .arg("convert")
        .arg(&big)
        .arg(&out)
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !write_in_progress(&out) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "convert finished before it was caught writing"
        );
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "convert never started writing"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        old,
        "the old output was touched"
    );

    // Run to the end, the new file replaces the old one whole.
    Command::cargo_bin("tessera")
        .unwrap()
        .arg("convert")
        .arg(&big)
        .arg(&out)
        .assert()
        .success();
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(written.starts_with("%%MatrixMarket matrix coordinate real general\n3000 3000 2700000\n"));
    assert_eq!(written.lines().count(), 2 + 2_700_000);
}

#[test]
fn a_tns_write_replaces_the_file_and_its_sidecar() {
    let dir = scratch("tns");
    let out = dir.join("v.tns");
    std::fs::write(&out, "old\n").unwrap();
    std::fs::write(dir.join("v.dims"), "old\n").unwrap();
    Command::cargo_bin("tessera")
        .unwrap()
        .args(["eval", "y(i) = x(i) * 2", "-g", "x:4:1:3", "-o"])
        .arg(format!("y:{}", out.display()))
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(dir.join("v.dims")).unwrap(), "4\n4\n");
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 4);
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tessera-"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}
