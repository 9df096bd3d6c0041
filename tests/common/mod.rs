//! What the command's test suites share: the binary, the shipped matrix
//! and a fresh directory per test. Each suite uses some of them.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::cargo::cargo_bin_cmd;
use assert_cmd::Command;

/// The `tessera` command, built for the suite.
pub fn tessera() -> Command {
    cargo_bin_cmd!("tessera")
}

/// The shipped matrix: 15606 x 15606, 91756 pattern entries.
pub fn four_elt() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/4elt.mtx")
        .display()
        .to_string()
}

/// A fresh, empty directory for test `test` of suite `suite`.
pub fn scratch(suite: &str, test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(suite).join(test);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}
