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
/// Whether every coordinate is in `0..extent` and, when `ordered`, each
/// follows the previous one (strictly when `strict`).
pub(crate) fn siblings_in_order<T: Copy>(
    coords: &[T],
    extent: usize,
    ordered: bool,
    strict: bool,
    wide: impl Fn(T) -> i64,
) -> bool {
    let extent = extent.min(i64::MAX as usize) as i64;
    let mut prev = -1i64;
    let mut ok = true;
    for &c in coords {
        let c = wide(c);
        let in_order = !ordered || prev < c || (!strict && prev == c);
        ok &= (0..extent).contains(&c) & in_order;
        prev = c;
    }
    ok
}

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
    let (ordered, strict) = (properties.ordered, properties.unique);
    let clean = match idx {
        IndexArray::U32(v) => siblings_in_order(&v[start..end], extent, ordered, strict, i64::from),
        IndexArray::U64(v) => siblings_in_order(&v[start..end], extent, ordered, strict, |c| c as i64),
        IndexArray::I64(v) => siblings_in_order(&v[start..end], extent, ordered, strict, |c| c),
    };
    // The typed scan above is the fast path; the loop below finds and names
    // the first violation.
    for p in (start..end).filter(|_| !clean) {
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
