//! `tessera info PATH`: what a tensor file holds — its kind, shape,
//! nonzeros and density, how many entries each row (mode-0 slice) and
//! column has, and the bytes the tensor takes in each named format that can
//! store it.
//!
//! Bytes are measured by packing, except where a format would store far
//! more than the nonzeros (dense, DIA, ELL, BCSR padding, position arrays of
//! a matrix with far more rows than entries): past [`PACK_LIMIT`] stored
//! values or positions, and four per entry, the size is computed instead (a
//! lower bound) and marked `>=`. Nothing is allocated by the dimensions
//! alone.

use std::io::Write;
use std::process::ExitCode;

use tessera_formats::{CoordinateList, Format, Tensor};

use super::args::InfoArgs;
use super::error::Result;
use super::files;
use super::generate::shape_text;
use super::progress::Spinner;
use super::summary::{bytes, percent, short_number};

/// Formats that would store more values than this are not packed.
pub const PACK_LIMIT: u128 = 1 << 24;

/// Runs `tessera info`.
pub fn run(args: &InfoArgs, out: &mut dyn Write) -> Result<ExitCode> {
    let size = std::fs::metadata(&args.path).map_or(0, |m| m.len());
    let spinner = Spinner::for_file(format!("reading {}", args.path.display()), size);
    let file = files::read_entries(&args.path, "info")?;
    let listed = file.entries.len();
    let entries = file.entries.pruned();
    let shape = entries.shape().to_vec();
    let sizes = format_sizes(&entries, &spinner);
    drop(spinner);

    writeln!(out, "{}: {}", args.path.display(), file.description)?;
    writeln!(out, "shape: {}", shape_text(&shape))?;
    let components: f64 = shape.iter().map(|&d| d as f64).product();
    let density = if components > 0.0 {
        entries.len() as f64 / components
    } else {
        0.0
    };
    write!(out, "nonzeros: {} (density {})", entries.len(), percent(density))?;
    if listed != entries.len() {
        write!(
            out,
            "; the file lists {listed} entries (symmetric halves expanded, duplicates summed, zeros dropped)"
        )?;
    }
    writeln!(out)?;
    if shape.len() >= 2 {
        let what = if shape.len() == 2 { "rows" } else { "mode-0 slices" };
        writeln!(out, "{what}: {}", Lengths::of(&entries, 0))?;
        if shape.len() == 2 {
            writeln!(out, "columns: {}", Lengths::of(&entries, 1))?;
        }
    }
    if shape.len() == 2 {
        write_band_profiles(out, &entries)?;
    }
    writeln!(out, "bytes by format:")?;
    for (name, size) in sizes {
        writeln!(out, "  {name:<10} {size}")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Matrices with at most this many nonzeros also show the bandwidth and
/// profile each reordering method would give (ordering costs a few hundred
/// SpMVs; `tessera reorder` does it for any size).
const REORDERED_PROFILES_UP_TO: usize = 2_000_000;

/// Bandwidth and profile as stored, and after each reordering method.
fn write_band_profiles(out: &mut dyn Write, entries: &CoordinateList<f64>) -> Result<()> {
    use tessera_formats::reorder::{band_profile, band_profile_after, Method};
    match band_profile(entries) {
        Ok(p) => writeln!(out, "band: {p}")?,
        Err(e) => writeln!(out, "band: - ({e})")?,
    }
    if entries.len() > REORDERED_PROFILES_UP_TO {
        writeln!(
            out,
            "  (reorderings not tried above {REORDERED_PROFILES_UP_TO} nonzeros: see tessera reorder)"
        )?;
        return Ok(());
    }
    for method in Method::ALL {
        match band_profile_after(entries, method) {
            Ok(p) => writeln!(out, "  after {:<6} {p}", method.name())?,
            Err(e) => writeln!(out, "  after {:<6} - ({e})", method.name())?,
        }
    }
    Ok(())
}

/// Statistics of the entries per slice of one mode.
struct Lengths {
    /// Entries of the slices that have any, in no particular order.
    occupied: Vec<u64>,
    /// Slices of the mode, empty ones included.
    slices: usize,
}

impl Lengths {
    /// Counts by a dense array when the mode is not much larger than the
    /// entries, otherwise by a map of the slices that occur: a mode of
    /// 10^10 slices with one entry costs one counter, not 80 GB.
    fn of(entries: &CoordinateList<f64>, mode: usize) -> Lengths {
        let slices = entries.shape()[mode];
        let occupied = if slices <= entries.len().saturating_mul(4).max(1 << 20) {
            let mut counts = vec![0u64; slices];
            for (c, _) in entries.iter() {
                counts[c[mode] as usize] += 1;
            }
            counts.retain(|&c| c > 0);
            counts
        } else {
            let mut counts: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
            for (c, _) in entries.iter() {
                *counts.entry(c[mode]).or_insert(0) += 1;
            }
            counts.into_values().collect()
        };
        Lengths { occupied, slices }
    }

    /// The most entries of any slice.
    fn longest(&self) -> u64 {
        self.occupied.iter().copied().max().unwrap_or(0)
    }
}

impl std::fmt::Display for Lengths {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.slices;
        if n == 0 {
            return write!(f, "none");
        }
        let mut sorted = self.occupied.clone();
        sorted.sort_unstable();
        let empty = n - sorted.len();
        // The k-th smallest count, the empty slices' zeros first.
        let nth = |k: usize| if k < empty { 0 } else { sorted[k - empty] };
        let mean = sorted.iter().sum::<u64>() as f64 / n as f64;
        let spread = sorted.iter().map(|&c| (c as f64 - mean).powi(2)).sum::<f64>() + empty as f64 * mean * mean;
        write!(
            f,
            "{n}, entries each: min {}, median {}, mean {}, max {}, std {}; {empty} empty",
            nth(0),
            nth(n / 2),
            short_number((mean * 100.0).round() / 100.0),
            nth(n - 1),
            short_number(((spread / n as f64).sqrt() * 100.0).round() / 100.0),
        )
    }
}

/// The named formats that can store a tensor of `shape`, with their names.
fn candidates(shape: &[usize]) -> Vec<(String, std::result::Result<Format, String>)> {
    let named = |n: &str, f: Format| (n.to_string(), Ok(f));
    match shape.len() {
        0 => vec![named("dense", Format::dense(0))],
        1 => vec![
            named("dense", Format::dense(1)),
            named("sv", Format::sparse_vector()),
            named("coo", Format::coo(1)),
            named("hash", Format::hash_vector()),
        ],
        2 => {
            let mut list = vec![
                named("dense", Format::dense(2)),
                named("csr", Format::csr()),
                named("csc", Format::csc()),
                named("dcsr", Format::dcsr()),
                named("dcsc", Format::dcsc()),
                named("coo", Format::coo(2)),
                named("dia", Format::dia()),
                named("ell", Format::ell()),
            ];
            for b in [2, 4] {
                let name = format!("bcsr:{b}x{b}");
                let format = if shape.iter().all(|d| d % b == 0) {
                    Format::bcsr(b, b).map_err(|e| e.to_string())
                } else {
                    Err(format!("{b} does not divide {}", shape_text(shape)))
                };
                list.push((name, format));
            }
            list.push(named("hash", Format::hash_rows()));
            list
        }
        n => vec![
            named("dense", Format::dense(n)),
            named("coo", Format::coo(n)),
            named("csf", Format::csf(n)),
        ],
    }
}

/// Values (or positions) a format would store, when they can be more than
/// the nonzeros: what is refused before packing when it is far more.
fn predicted_values(name: &str, entries: &CoordinateList<f64>) -> Option<u128> {
    let shape = entries.shape();
    let rows = shape.first().copied().unwrap_or(1) as u128;
    match name {
        "dense" => Some(shape.iter().map(|&d| d as u128).product()),
        "dia" => {
            let mut offsets: Vec<i64> = entries.iter().map(|(c, _)| c[1] as i64 - c[0] as i64).collect();
            offsets.sort_unstable();
            offsets.dedup();
            Some(offsets.len() as u128 * rows)
        }
        "ell" => Some(u128::from(Lengths::of(entries, 0).longest()) * rows),
        // Position arrays as long as the rows (or columns) of the matrix.
        "csr" | "hash" => Some(rows),
        "csc" => Some(shape.get(1).copied().unwrap_or(1) as u128),
        _ => {
            let b: u64 = name.strip_prefix("bcsr:")?.split('x').next()?.parse().ok()?;
            let mut blocks: Vec<(u64, u64)> = entries.iter().map(|(c, _)| (c[0] / b, c[1] / b)).collect();
            blocks.sort_unstable();
            blocks.dedup();
            Some(blocks.len() as u128 * u128::from(b * b))
        }
    }
}

/// Each candidate format's size for `entries`, as text.
fn format_sizes(entries: &CoordinateList<f64>, spinner: &Spinner) -> Vec<(String, String)> {
    candidates(entries.shape())
        .into_iter()
        .map(|(name, format)| {
            spinner.say(format!("measuring {name}"));
            let text = match format {
                Err(why) => format!("-  ({why})"),
                Ok(format) => match predicted_values(&name, entries) {
                    Some(values) if values > PACK_LIMIT.max(4 * entries.len() as u128) => {
                        format!(
                            ">= {}  ({} stored values or positions, not packed)",
                            bytes(values * 8),
                            values
                        )
                    }
                    _ => match Tensor::pack(entries, format) {
                        Ok(t) => format!("{}  ({} stored values)", bytes(t.bytes() as u128), t.stored()),
                        Err(e) => format!("-  ({e})"),
                    },
                },
            };
            (name, text)
        })
        .collect()
}
