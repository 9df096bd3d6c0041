//! The checks behind tessera's fuzz targets, as plain library code.
//!
//! Each module takes the fuzzer's bytes and returns `Err` with a readable
//! account when a property fails; the targets in `fuzz_targets/` panic on
//! it (a crash for libFuzzer), and the root package's `tests/fuzz_seeds.rs`
//! includes these same files (`#[path]`) to check the properties from fixed
//! seeds and the committed corpora in CI, without a fuzzer. So every path
//! here is `tessera::…` or `super::…`, never `crate::…`.
//!
//! - [`source`]: reads decisions from bytes (zero once they run out).
//! - [`generate`]: well-formed statements, formats and small tensors drawn
//!   from a [`source::Source`].
//! - [`differential`]: a statement on every tier against the dense reference.
//! - [`pack`]: raw level arrays and coordinates → a valid tensor or an error;
//!   valid tensors then run through kernels on every tier.
//! - [`schedule`]: random schedules of random statements: refused with a
//!   schedule error, or the reference's result on every tier.
//! - [`text`]: the statement parser and the Matrix Market / FROSTT readers
//!   on arbitrary bytes.

pub mod differential;
pub mod generate;
pub mod pack;
pub mod schedule;
pub mod source;
pub mod text;

/// The tiers of `engine` the checks run each case on: every tier, or
/// those named in `TESSERA_FUZZ_TIERS` (comma-separated, such as
/// `interp,jit`), so that CI can run a slow device tier on fewer seeds
/// than the others.
pub fn tiers(engine: &tessera::Engine) -> Vec<String> {
    let chosen = std::env::var("TESSERA_FUZZ_TIERS").ok();
    engine
        .tier_names()
        .into_iter()
        .filter(|tier| {
            chosen
                .as_deref()
                .is_none_or(|names| names.split(',').any(|n| n.trim() == tier))
        })
        .collect()
}

/// Runs `f`, turning a panic into an `Err` with its message: the CI test
/// reports every failing seed instead of stopping at the first. (Under the
/// fuzzer a panic aborts at once, which is the crash libFuzzer records.)
pub fn catch<T>(what: &str, f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "(no message)".into());
        format!("{what} panicked: {message}")
    })
}
