//! Helpers the file tests share.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use tessera_formats::{CoordinateList, FormatError, Result, Value};

/// A file in the temporary directory, removed (with its `.dims` sidecar)
/// when dropped.
pub struct TempFile(PathBuf);

impl TempFile {
    pub fn new(name: &str) -> TempFile {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let file = format!("tessera-test-{}-{n}-{name}", std::process::id());
        TempFile(std::env::temp_dir().join(file))
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        let _ = std::fs::remove_file(tessera_formats::io::without_gzip(&self.0).with_extension("dims"));
    }
}

/// Asserts a parse error at `file:line:` whose message contains `needle`.
#[track_caller]
#[allow(dead_code)]
pub fn assert_parse_error<T: std::fmt::Debug>(result: Result<T>, file: &str, line: usize, needle: &str) {
    match result {
        Err(e @ FormatError::Parse { line: at, .. }) => {
            let message = e.to_string();
            assert_eq!(at, line, "wrong line in: {message}");
            assert!(message.starts_with(&format!("{file}:{line}: ")), "{message}");
            assert!(message.contains(needle), "`{needle}` is not in: {message}");
        }
        other => panic!("expected a parse error at line {line}, got {other:?}"),
    }
}

/// Entries as `(row, column, value)`, 0-based, in list order.
#[allow(dead_code)]
pub fn triples<V: Value>(list: &CoordinateList<V>) -> Vec<(u64, u64, V)> {
    list.iter().map(|(c, v)| (c[0], c[1], v)).collect()
}
