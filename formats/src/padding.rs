//! The off-band guard: formats that store every position of a band or a
//! slot (DIA, ELL) store zeros wherever a matrix has no entry there, and on
//! a scattered matrix those zeros are nearly all of it. Packing counts the
//! values such a format would store before allocating them, and refuses a
//! large tensor whose stored values exceed its entries by more than the
//! padding limit, naming the ratio.
//!
//! The limit is, in order: the one set by [`set_padding_limit`], the
//! environment variable `TESSERA_PADDING_LIMIT` (a ratio, such as `16`), or
//! [`DEFAULT_PADDING_LIMIT`].

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{FormatError, Result};
use crate::format::Format;
use crate::level::{Level, LevelCounts};

/// Stored values per entry beyond which packing refuses a large tensor.
pub const DEFAULT_PADDING_LIMIT: f64 = 32.0;

/// Stores of fewer values than this are never refused: small tensors pad
/// cheaply, whatever the ratio.
const UNCHECKED_VALUES: u128 = 1 << 22;

/// `0`: no limit set by the program (the bits of an `f64` otherwise).
static SET_LIMIT: AtomicU64 = AtomicU64::new(0);

/// Sets the padding limit of the process (`None`: back to the environment
/// variable or the default).
///
/// ```
/// use tessera_formats::padding::{padding_limit, set_padding_limit, DEFAULT_PADDING_LIMIT};
/// set_padding_limit(Some(4.0));
/// assert_eq!(padding_limit().0, 4.0);
/// set_padding_limit(None);
/// assert!(padding_limit().0 > 0.0);
/// # let _ = DEFAULT_PADDING_LIMIT;
/// ```
pub fn set_padding_limit(ratio: Option<f64>) {
    let bits = ratio.filter(|r| *r > 0.0).map_or(0, f64::to_bits);
    SET_LIMIT.store(bits, Ordering::Relaxed);
}

/// The limit in force and where it comes from.
pub fn padding_limit() -> (f64, &'static str) {
    match SET_LIMIT.load(Ordering::Relaxed) {
        0 => {}
        bits => return (f64::from_bits(bits), "the limit set by the program"),
    }
    let from_env = std::env::var("TESSERA_PADDING_LIMIT")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|r| *r > 0.0);
    match from_env {
        Some(r) => (r, "TESSERA_PADDING_LIMIT"),
        None => (
            DEFAULT_PADDING_LIMIT,
            "the default; set TESSERA_PADDING_LIMIT to change it",
        ),
    }
}

/// The values `format` stores for `entries` entries when its levels have
/// `extents` and its top level `top_distinct` distinct coordinates (DIA's
/// stored diagonals, when known), counted by each level's
/// [`Level::footprint`] from the counts a packer knows before it starts;
/// `None` when a level's size depends on the entries' distinct coordinates
/// below the top (compressed, hashed levels).
///
/// ```
/// use tessera_formats::{padding::padded_values, Format};
/// // 3 diagonals of a 1000 x 1000 matrix.
/// assert_eq!(padded_values(&Format::dia(), &[1999, 1000, 1000], Some(3), 2998), Some(3000));
/// ```
pub fn padded_values(format: &Format, extents: &[usize], top_distinct: Option<usize>, entries: usize) -> Option<u128> {
    let mut positions: u128 = 1;
    for (k, (l, &extent)) in format.levels().iter().zip(extents).enumerate() {
        let counts = LevelCounts {
            parents: positions,
            extent: extent as u128,
            distinct: top_distinct.filter(|_| k == 0).map(|d| d as u128),
            entries: entries as u128,
            widest: None,
        };
        positions = l.level.footprint(&counts)?.positions;
    }
    Some(positions)
}

/// The padding limit, when storing `stored` values for `entries` entries
/// exceeds it: what [`check_padding`] refuses.
///
/// ```
/// use tessera_formats::padding::exceeded_limit;
/// assert!(exceeded_limit(1 << 30, 1000).is_some());
/// assert!(exceeded_limit(1000, 1).is_none()); // small stores pad freely
/// ```
pub fn exceeded_limit(stored: u128, entries: u128) -> Option<f64> {
    if stored < UNCHECKED_VALUES {
        return None;
    }
    let ratio = stored as f64 / entries.max(1) as f64;
    let (limit, _) = padding_limit();
    (ratio > limit).then_some(limit)
}

/// Refuses packing `entries` into `format` (level extents `extents`, and
/// `top_distinct` as for [`padded_values`]) when it would store more than
/// the padding limit allows. Per-mode formats are not checked: a dense
/// format stores every component by design.
///
/// ```
/// use tessera_formats::{padding::check_padding, Format};
/// let rows = 1 << 20;
/// let extents = [2 * rows - 1, rows, rows];
/// assert!(check_padding(&Format::dia(), &extents, Some(1000), 5 * rows).is_err());
/// assert!(check_padding(&Format::dia(), &extents, Some(5), 5 * rows).is_ok());
/// ```
pub fn check_padding(format: &Format, extents: &[usize], top_distinct: Option<usize>, entries: usize) -> Result<()> {
    if format.is_per_mode() {
        return Ok(());
    }
    let Some(stored) = padded_values(format, extents, top_distinct, entries) else {
        return Ok(());
    };
    if exceeded_limit(stored, entries as u128).is_none() {
        return Ok(());
    }
    let ratio = stored as f64 / entries.max(1) as f64;
    let (limit, source) = padding_limit();
    Err(FormatError::TooLarge(format!(
        "{format} would store {stored} values for {entries} entries: {ratio:.1} stored per entry, \
         mostly zero padding (the limit is {limit}, {source}); a scattered matrix suits csr or coo"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padded_formats_count_their_positions() {
        // DIA of 3 diagonals over 1000 rows; ELL of 4 slots over 1000 rows.
        assert_eq!(
            padded_values(&Format::dia(), &[1999, 1000, 1000], Some(3), 2000),
            Some(3000)
        );
        assert_eq!(padded_values(&Format::dia(), &[1999, 1000, 1000], None, 2000), None);
        let all_diagonals: Format = "dense,range,offset".parse().unwrap();
        assert_eq!(
            padded_values(&all_diagonals, &[1999, 1000, 1000], None, 2000),
            Some(1_999_000)
        );
        assert_eq!(padded_values(&Format::ell(), &[4, 1000, 1000], None, 2000), Some(4000));
        assert_eq!(padded_values(&Format::csr(), &[1000, 1000], None, 2000), None);
    }

    #[test]
    fn large_padding_is_refused_with_the_ratio_and_small_tensors_pass() {
        let rows = 1 << 20;
        let err = check_padding(&Format::dia(), &[2 * rows - 1, rows, rows], Some(100), 1000).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("stored per entry") && text.contains("limit"), "{text}");
        assert!(check_padding(&Format::dia(), &[2 * rows - 1, rows, rows], Some(100), 100 * rows).is_ok());
        assert!(check_padding(&Format::dia(), &[1999, 1000, 1000], Some(100), 1).is_ok());
    }
}
