//! How much memory tessera may allocate for one thing sized by user data —
//! a generated or read tensor, a kernel's output, a workspace — checked
//! before it is allocated, so an absurd size is a clear error instead of an
//! aborted process.
//!
//! The limit is, in order: the one set by [`set_memory_limit`], the
//! environment variable `TESSERA_MEMORY_LIMIT` (bytes, or with a `K`, `M`,
//! `G` or `T` suffix), or the memory the machine has available
//! (`MemAvailable` in `/proc/meminfo`; unlimited where that cannot be read).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{FormatError, Result};

/// Sizes below this are never checked: reading the limit costs more than
/// such an allocation, and it cannot exhaust a machine that runs tessera.
const UNCHECKED_BYTES: u128 = 64 << 20;

/// `0`: no limit set by the program.
static SET_LIMIT: AtomicU64 = AtomicU64::new(0);

/// Sets the memory limit of the process (`None`: back to the environment
/// variable or the available memory).
///
/// ```
/// use tessera_formats::budget::{check_allocation, set_memory_limit};
/// set_memory_limit(Some(1 << 30));
/// assert!(check_allocation("a test array", 2 << 30).is_err());
/// assert!(check_allocation("a test array", 1 << 20).is_ok());
/// set_memory_limit(None);
/// ```
pub fn set_memory_limit(bytes: Option<u64>) {
    SET_LIMIT.store(bytes.unwrap_or(0), Ordering::Relaxed);
}

/// The limit in force, in bytes, and where it comes from.
pub fn memory_limit() -> (u128, &'static str) {
    match SET_LIMIT.load(Ordering::Relaxed) {
        0 => {}
        set => return (u128::from(set), "the limit set by the program"),
    }
    if let Some(bytes) = std::env::var("TESSERA_MEMORY_LIMIT").ok().and_then(|v| parse_bytes(&v)) {
        return (bytes, "TESSERA_MEMORY_LIMIT");
    }
    match available_memory() {
        Some(bytes) => (
            bytes,
            "the memory available (set TESSERA_MEMORY_LIMIT to change the limit)",
        ),
        None => (u128::MAX, "no limit"),
    }
}

/// Refuses `bytes` for `what` when they exceed the limit; `what` names the
/// thing (`"the output C (5000 x 5000, dense)"`).
pub fn check_allocation(what: &str, bytes: u128) -> Result<()> {
    if bytes < UNCHECKED_BYTES {
        return Ok(());
    }
    let (limit, source) = memory_limit();
    if bytes > limit {
        return Err(FormatError::TooLarge(format!(
            "{what} needs {} but the limit is {} ({source})",
            show_bytes(bytes),
            show_bytes(limit)
        )));
    }
    Ok(())
}

/// `"12.3 GiB"`, in the binary units `TESSERA_MEMORY_LIMIT` is read in.
pub fn show_bytes(n: u128) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// `"4G"`, `"512M"`, `"1000000"`: bytes.
fn parse_bytes(text: &str) -> Option<u128> {
    let text = text.trim();
    let (digits, scale) = match text.char_indices().last()? {
        (k, 'K' | 'k') => (&text[..k], 1u128 << 10),
        (k, 'M' | 'm') => (&text[..k], 1 << 20),
        (k, 'G' | 'g') => (&text[..k], 1 << 30),
        (k, 'T' | 't') => (&text[..k], 1 << 40),
        _ => (text, 1),
    };
    digits.trim().parse::<u128>().ok()?.checked_mul(scale)
}

fn available_memory() -> Option<u128> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u128 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_with_their_suffixes() {
        assert_eq!(parse_bytes("4G"), Some(4 << 30));
        assert_eq!(parse_bytes(" 512m "), Some(512 << 20));
        assert_eq!(parse_bytes("1000"), Some(1000));
        assert_eq!(parse_bytes("lots"), None);
        assert_eq!(parse_bytes(""), None);
    }

    #[test]
    fn the_machine_reports_some_memory() {
        let (limit, _) = memory_limit();
        assert!(limit > 1 << 20, "limit {limit}");
    }

    #[test]
    fn a_refusal_names_the_thing_its_size_and_the_limit() {
        set_memory_limit(Some(100 << 20));
        let err = check_allocation("the output C (100000 x 100000, dense)", 80_000_000_000).unwrap_err();
        set_memory_limit(None);
        let text = err.to_string();
        assert!(
            text.contains("the output C (100000 x 100000, dense) needs 74.5 GiB"),
            "{text}"
        );
        assert!(
            text.contains("the limit is 100.0 MiB (the limit set by the program)"),
            "{text}"
        );
    }
}
