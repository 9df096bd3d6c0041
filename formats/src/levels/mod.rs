//! The six level formats of the format paper, one file each, and the one
//! place (the `with_level!` dispatch in `format.rs`) that maps a level kind to
//! its implementation.

pub mod compressed;
pub mod dense;
pub mod hashed;
pub mod offset;
pub mod range;
pub mod singleton;

use crate::error::{FormatError, Result};
use crate::index::IndexArray;
use crate::properties::Properties;

/// Checks the siblings `idx[start..end]` of one parent: in range, and
/// ordered / unique / full as `properties` claim.
pub(crate) fn check_siblings(
    idx: &IndexArray,
    start: usize,
    end: usize,
    extent: usize,
    properties: Properties,
    level: usize,
    kind: &'static str,
) -> Result<()> {
    let err = |reason: String| FormatError::level(level, kind, reason);
    for p in start..end {
        let c = idx.get(p);
        if c < 0 || c as u64 >= extent as u64 {
            return Err(err(format!("idx[{p}] = {c} is outside 0..{extent}")));
        }
        if properties.ordered && p > start {
            let prev = idx.get(p - 1);
            if prev > c || (properties.unique && prev == c) {
                let what = if prev > c { "ordered" } else { "unique" };
                return Err(err(format!(
                    "declared {what} but idx[{}] = {prev} is followed by idx[{p}] = {c}",
                    p - 1
                )));
            }
        }
    }
    if (properties.unique && !properties.ordered) || properties.full {
        let mut seen: Vec<i64> = (start..end).map(|p| idx.get(p)).collect();
        seen.sort_unstable();
        let before = seen.len();
        seen.dedup();
        if properties.unique && seen.len() != before {
            return Err(err(format!(
                "declared unique but positions {start}..{end} repeat a coordinate"
            )));
        }
        if properties.full && seen.len() != extent {
            return Err(err(format!(
                "declared full but positions {start}..{end} hold {} of {extent} coordinates",
                seen.len()
            )));
        }
    }
    Ok(())
}
