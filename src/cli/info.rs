//! `tessera info PATH [--spy] [--spy-png OUT.png]`: what a tensor file
//! holds and what a user wants to know before choosing a format — kind,
//! shape, nonzeros and density; how many entries each row and column has
//! (with a log2 histogram); NaN and infinite values; for a matrix its
//! bandwidth and profile, the symmetry its data has, the diagonals and
//! padding DIA and ELL would need, and a suggested format for SpMV and
//! SpGEMM; and the bytes the tensor takes in each named format.
//!
//! Nothing is packed: the file's entries are made canonical in place, one
//! pass ([`Census`]) counts what decides each format's size, and each
//! level's footprint turns the counts into bytes (exactly what packing
//! gives; `formats/src/census.rs` checks that). Nothing is allocated by the
//! dimensions alone. A sparsity picture ([`super::spy`]) is drawn in the
//! terminal or written as a PNG on request.
//!
//! A complex file ([`files::holds_complex`], or any file with `-t c64`) is
//! read as `c64`: its symmetry is read from the complex values (hermitian
//! too), its bytes by format count 16 a value, and everything else, which
//! depends on where the nonzeros are, comes from their moduli.

use std::io::Write;
use std::ops::Neg;
use std::process::ExitCode;

use tessera_formats::census::Census;
use tessera_formats::{Complex64, CoordinateList, Format, Value, ValueType};

use super::args::InfoArgs;
use super::error::{CliError, Result};
use super::files;
use super::generate::shape_text;
use super::progress::Spinner;
use super::spy;
use super::summary::{bytes, percent, short_number};

/// Runs `tessera info`.
pub fn run(args: &InfoArgs, out: &mut dyn Write) -> Result<ExitCode> {
    let size = std::fs::metadata(&args.path).map_or(0, |m| m.len());
    let spinner = Spinner::for_file(format!("reading {}", args.path.display()), size);
    let Described {
        description,
        listed,
        entries,
        symmetry,
        complex,
    } = read(&args.path, args.value_type, &spinner)?;
    let census = Census::of(&entries);
    let shape = entries.shape().to_vec();

    writeln!(out, "{}: {description}", args.path.display())?;
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
    if complex {
        writeln!(
            out,
            "values: c64, {} NaN, {} infinite (counting a value when either part is)",
            census.nans(),
            census.infinities()
        )?;
    } else {
        writeln!(out, "values: {} NaN, {} infinite", census.nans(), census.infinities())?;
    }
    if shape.len() >= 2 {
        let modes: &[(usize, &str)] = if shape.len() == 2 {
            &[(0, "rows"), (1, "columns")]
        } else {
            &[(0, "mode-0 slices")]
        };
        for &(mode, what) in modes {
            let lengths = Lengths {
                occupied: census.slice_lengths(mode),
                slices: shape[mode],
            };
            writeln!(out, "{what}: {lengths}")?;
            write_histogram(out, &lengths)?;
        }
    }
    if shape.len() == 2 {
        spinner.say("bandwidth and symmetry".to_string());
        write_band_profiles(out, &entries)?;
        if let Some(symmetry) = symmetry {
            writeln!(out, "symmetry: {}", symmetry.describe())?;
        }
        write_padding(out, &census)?;
    }
    write_suggestions(out, &census)?;
    writeln!(out, "bytes by format:")?;
    let value_type = if complex { ValueType::C64 } else { ValueType::F64 };
    for (name, size) in format_sizes(&census, value_type) {
        writeln!(out, "  {name:<10} {size}")?;
    }
    drop(spinner);
    if args.spy {
        if shape.len() == 2 {
            write!(out, "{}", spy::terminal_picture(&entries, spy::TERMINAL_COLUMNS))?;
        } else {
            writeln!(
                out,
                "spy: pictures are drawn for matrices, this tensor has order {}",
                shape.len()
            )?;
        }
    }
    if let Some(path) = &args.spy_png {
        let (width, height) = spy::write_png(&entries, path)?;
        writeln!(out, "spy: wrote {} ({width} x {height} pixels)", path.display())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A file's entries as `info` describes them: canonical, duplicates summed,
/// zeros dropped.
struct Described {
    /// What kind of file it was.
    description: String,
    /// Entries the file listed (symmetric halves expanded).
    listed: usize,
    /// The entries; a complex file's values as their moduli ([`modulus`]).
    entries: CoordinateList<f64>,
    /// The symmetry of a matrix's values.
    symmetry: Option<Symmetry>,
    /// Whether the values are complex.
    complex: bool,
}

/// Reads the file at `path` as `info` describes it: as `c64` when it
/// holds complex values or `asked` says so, else as `f64`.
fn read(path: &std::path::Path, asked: Option<ValueType>, spinner: &Spinner) -> Result<Described> {
    let holds_complex = files::holds_complex(path, "info")?;
    let complex = match asked {
        Some(ty) if holds_complex && ty != ValueType::C64 => {
            return Err(CliError::bad(
                "info",
                format!(
                    "{} holds complex values, which are read as c64, not {ty}: leave out -t, or give -t c64",
                    path.display()
                ),
            ))
        }
        Some(ty) => ty == ValueType::C64,
        None => holds_complex,
    };
    let (description, listed, entries, symmetry) = if complex {
        let file = files::read_entries_as::<Complex64>(path, "info")?;
        let (listed, entries) = pruned(file.entries, spinner);
        let symmetry = (entries.order() == 2).then(|| Symmetry::of(&entries, |v| v.conj()));
        (file.description, listed, moduli(&entries)?, symmetry)
    } else {
        let file = files::read_entries(path, "info")?;
        let (listed, entries) = pruned(file.entries, spinner);
        let symmetry = (entries.order() == 2).then(|| Symmetry::of(&entries, |v| v));
        (file.description, listed, entries, symmetry)
    };
    Ok(Described {
        description,
        listed,
        entries,
        symmetry,
        complex,
    })
}

/// How many entries a file listed, and them canonical with zeros dropped.
fn pruned<V: Value>(mut entries: CoordinateList<V>, spinner: &Spinner) -> (usize, CoordinateList<V>) {
    let listed = entries.len();
    spinner.say("counting".to_string());
    entries.prune();
    (listed, entries)
}

/// Complex entries with their moduli as values: the same nonzeros (a
/// modulus is 0 only for 0), NaN where a part is and else infinite where a
/// part is, for counting them.
fn moduli(entries: &CoordinateList<Complex64>) -> Result<CoordinateList<f64>> {
    let too_large = |source| CliError::Format {
        context: "info".into(),
        source,
    };
    let mut list = CoordinateList::with_capacity(entries.shape(), entries.len()).map_err(too_large)?;
    for (c, v) in entries.iter() {
        list.push(c, modulus(v)).map_err(too_large)?;
    }
    Ok(list)
}

/// `|v|`, but NaN when a part is (`hypot` gives infinity for an infinite
/// part and a NaN one).
fn modulus(v: Complex64) -> f64 {
    if v.re.is_nan() || v.im.is_nan() {
        f64::NAN
    } else {
        v.norm()
    }
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
struct Lengths<'a> {
    /// Entries of the slices that have any, in no particular order.
    occupied: &'a [u64],
    /// Slices of the mode, empty ones included.
    slices: usize,
}

impl Lengths<'_> {
    fn empty(&self) -> usize {
        self.slices - self.occupied.len()
    }
}

impl std::fmt::Display for Lengths<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.slices;
        if n == 0 {
            return write!(f, "none");
        }
        let mut sorted = self.occupied.to_vec();
        sorted.sort_unstable();
        let empty = self.empty();
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

/// The slices of each length bucket: 0, 1, 2-3, 4-7, … (bucket `b > 0`
/// holds lengths `2^(b-1) .. 2^b - 1`).
fn histogram(lengths: &Lengths<'_>) -> Vec<u128> {
    let mut buckets = vec![0u128; 1];
    buckets[0] = lengths.empty() as u128;
    for &length in lengths.occupied {
        let bucket = (u64::BITS - length.leading_zeros()) as usize;
        if buckets.len() <= bucket {
            buckets.resize(bucket + 1, 0);
        }
        buckets[bucket] += 1;
    }
    buckets
}

/// The label of histogram bucket `b`: `0`, `1`, `2-3`, `4-7`, ….
fn bucket_label(b: usize) -> String {
    match b {
        0 => "0".into(),
        1 => "1".into(),
        _ => format!("{}-{}", 1u128 << (b - 1), (1u128 << b) - 1),
    }
}

/// Longest bar of a histogram, in characters.
const HISTOGRAM_BAR: usize = 40;

/// One line per length bucket: its range, its slices and a bar.
fn write_histogram(out: &mut dyn Write, lengths: &Lengths<'_>) -> Result<()> {
    let buckets = histogram(lengths);
    let most = buckets.iter().copied().max().unwrap_or(0).max(1);
    for (b, &count) in buckets.iter().enumerate() {
        // Bars in eighths of a character; any nonzero count shows.
        let eighths = (count * (HISTOGRAM_BAR as u128) * 8).div_ceil(most) as usize;
        let bar = "█".repeat(eighths / 8) + [" ", "▏", "▎", "▍", "▌", "▋", "▊", "▉"][eighths % 8];
        let line = format!("  {:>13} {count:>10}  {bar}", bucket_label(b));
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// The symmetry a matrix's data has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Symmetry {
    NotSquare,
    Symmetric,
    /// `A = Aᴴ`, complex values that are not symmetric.
    Hermitian,
    SkewSymmetric,
    /// Each entry has a mirror image, with a different value.
    PatternSymmetric,
    None,
}

impl Symmetry {
    /// Checks every entry's mirror image by binary search in the canonical
    /// `entries`, stopping once no kind of symmetry is left; `conj` is the
    /// complex conjugate (for real values, the value itself: hermitian is
    /// symmetric).
    fn of<V: Value + Neg<Output = V>>(entries: &CoordinateList<V>, conj: fn(V) -> V) -> Symmetry {
        let shape = entries.shape();
        if shape[0] != shape[1] {
            return Symmetry::NotSquare;
        }
        let (mut symmetric, mut hermitian, mut skew, mut pattern) = (true, true, true, true);
        for (c, v) in entries.iter() {
            let (i, j) = (c[0], c[1]);
            match mirror_value(entries, j, i) {
                Some(m) => {
                    symmetric &= m == v;
                    hermitian &= m == conj(v);
                    skew &= m == -v && i != j;
                }
                None => pattern = false,
            }
            if !pattern {
                break;
            }
        }
        match (symmetric, hermitian, skew, pattern) {
            (_, _, _, false) => Symmetry::None,
            (true, _, _, _) => Symmetry::Symmetric,
            (_, true, _, _) => Symmetry::Hermitian,
            (_, _, true, _) => Symmetry::SkewSymmetric,
            _ => Symmetry::PatternSymmetric,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Symmetry::NotSquare => "none (not square)",
            Symmetry::Symmetric => "symmetric (A = Aᵀ): a .mtx file can store one triangle",
            Symmetry::Hermitian => "hermitian (A = Aᴴ): a .mtx file can store one triangle",
            Symmetry::SkewSymmetric => "skew-symmetric (A = -Aᵀ)",
            Symmetry::PatternSymmetric => "pattern-symmetric (A and Aᵀ have the same nonzeros, not the same values)",
            Symmetry::None => "none",
        }
    }
}

/// The value at `(i, j)` of a canonical matrix, if stored.
fn mirror_value<V: Value>(entries: &CoordinateList<V>, i: u64, j: u64) -> Option<V> {
    let (mut low, mut high) = (0, entries.len());
    while low < high {
        let mid = low + (high - low) / 2;
        if entries.coords(mid) < [i, j].as_slice() {
            low = mid + 1;
        } else {
            high = mid;
        }
    }
    (low < entries.len() && entries.coords(low) == [i, j]).then(|| entries.value(low))
}

/// Stored values and padding of a format that stores more than the nonzeros.
struct Padding {
    stored: u128,
    padding: u128,
}

impl Padding {
    fn of(stored: u128, entries: u128) -> Padding {
        Padding {
            stored,
            padding: stored.saturating_sub(entries),
        }
    }
    /// The padding's share of the stored values.
    fn share(&self) -> f64 {
        if self.stored == 0 {
            0.0
        } else {
            self.padding as f64 / self.stored as f64
        }
    }
}

impl std::fmt::Display for Padding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} stored values, {} of them padding ({})",
            self.stored,
            self.padding,
            percent(self.share())
        )?;
        let entries = self.stored - self.padding;
        match tessera_formats::padding::exceeded_limit(self.stored, entries) {
            Some(limit) => write!(f, "; beyond the padding limit ({limit} per entry): packing refuses it"),
            None => Ok(()),
        }
    }
}

/// DIA's and ELL's stored values for a matrix's census.
fn dia_ell(census: &Census) -> (Option<(u128, Padding)>, (u128, Padding)) {
    let rows = census.shape()[0] as u128;
    let dia = census.diagonals().map(|d| (d, Padding::of(d * rows, census.entries())));
    let slots = census.longest_slice(0);
    (dia, (slots, Padding::of(slots * rows, census.entries())))
}

/// The diagonals DIA would store and the slots ELL would, with padding.
fn write_padding(out: &mut dyn Write, census: &Census) -> Result<()> {
    let (dia, (slots, ell)) = dia_ell(census);
    if let Some((diagonals, dia)) = dia {
        writeln!(out, "dia: {diagonals} diagonals x {} rows: {dia}", census.shape()[0])?;
    }
    writeln!(
        out,
        "ell: {slots} slots (the longest row) x {} rows: {ell}",
        census.shape()[0]
    )?;
    Ok(())
}

/// Padding above this share of the stored values rules DIA, ELL or BCSR out.
const ACCEPTABLE_PADDING: f64 = 0.2;

/// A format for SpMV and one for SpGEMM (for a tensor, MTTKRP), each with a
/// short reason.
fn write_suggestions(out: &mut dyn Write, census: &Census) -> Result<()> {
    let shape = census.shape();
    let nnz = census.entries();
    match shape.len() {
        0 => {}
        1 => {
            let dense = nnz as f64 >= 0.25 * shape[0] as f64;
            let (format, why) = if dense {
                ("dense", "a quarter or more of the entries are nonzero: indices would cost more than the zeros")
            } else {
                ("sv", "mostly zeros: store the nonzeros and their indices")
            };
            writeln!(out, "suggested: {format} ({why})")?;
        }
        2 => {
            let (spmv, why) = spmv_suggestion(census);
            writeln!(out, "suggested for SpMV:   {spmv} ({why})")?;
            let rows = shape[0] as u128;
            let nonempty = census.nonempty_slices(0);
            let (spgemm, why) = if rows > 0 && nonempty * 4 < rows {
                (
                    "dcsr",
                    format!(
                        "row-by-row products over the {} nonempty rows only ({} of all rows)",
                        nonempty,
                        percent(nonempty as f64 / rows as f64)
                    ),
                )
            } else {
                (
                    "csr",
                    "row-by-row products (Gustavson) read the other operand's rows by position; no padding to multiply"
                        .to_string(),
                )
            };
            writeln!(out, "suggested for SpGEMM: {spgemm} ({why})")?;
        }
        _ => writeln!(
            out,
            "suggested for MTTKRP and TTV: csf (each level compressed: a fiber's entries are contiguous and shared prefixes are stored once)"
        )?,
    }
    Ok(())
}

/// The SpMV format for a matrix and why.
fn spmv_suggestion(census: &Census) -> (&'static str, String) {
    let nnz = census.entries();
    let rows = census.shape()[0] as u128;
    if nnz == 0 {
        return ("csr", "no nonzeros: the smallest format with row access".into());
    }
    let (dia, (slots, ell)) = dia_ell(census);
    if let Some((diagonals, dia)) = dia.filter(|(_, p)| p.share() <= ACCEPTABLE_PADDING) {
        return (
            "dia",
            format!(
                "{diagonals} diagonals hold every nonzero with {} padding: no column indices to read",
                percent(dia.share())
            ),
        );
    }
    if ell.share() <= ACCEPTABLE_PADDING {
        return (
            "ell",
            format!(
                "rows of nearly equal length ({slots} slots, {} padding): fixed-stride rows vectorize",
                percent(ell.share())
            ),
        );
    }
    if let Some(blocks) = census.blocks(4) {
        let block = Padding::of(blocks * 16, nnz);
        if block.share() <= ACCEPTABLE_PADDING {
            return (
                "bcsr:4x4",
                format!(
                    "{blocks} dense 4x4 blocks hold the nonzeros with {} padding: one index per 16 values",
                    percent(block.share())
                ),
            );
        }
    }
    let nonempty = census.nonempty_slices(0);
    if nonempty * 4 < rows {
        return (
            "dcsr",
            format!(
                "only {} of the rows hold entries: CSR would walk {} empty rows",
                percent(nonempty as f64 / rows as f64),
                rows - nonempty
            ),
        );
    }
    let mean = nnz as f64 / rows as f64;
    (
        "csr",
        format!(
            "row lengths vary (mean {}, longest {slots}): CSR stores no padding and reads each row once",
            short_number((mean * 100.0).round() / 100.0)
        ),
    )
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

/// Each candidate format's size for values of `value_type`, computed from
/// the census, as text.
fn format_sizes(census: &Census, value_type: ValueType) -> Vec<(String, String)> {
    // The census counts values of 8 bytes.
    let extra = value_type.size() as u128 - 8;
    candidates(census.shape())
        .into_iter()
        .map(|(name, format)| {
            let text = match format.map(|f| census.footprint(&f)) {
                Err(why) => format!("-  ({why})"),
                Ok(None) => "-  (not counted)".to_string(),
                Ok(Some(size)) => format!(
                    "{}  ({} stored values{})",
                    bytes(size.bytes + size.values * extra),
                    size.values,
                    if size.too_large {
                        ", more positions than tessera packs"
                    } else {
                        ""
                    }
                ),
            };
            (name, text)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(shape: [usize; 2], entries: &[(u64, u64, f64)]) -> CoordinateList<f64> {
        let mut list = CoordinateList::new(&shape);
        for &(i, j, v) in entries {
            list.push(&[i, j], v).unwrap();
        }
        list.prune();
        list
    }

    fn real_symmetry(entries: &CoordinateList<f64>) -> Symmetry {
        Symmetry::of(entries, |v| v)
    }

    #[test]
    fn symmetry_is_read_from_the_data() {
        let symmetric = matrix([3, 3], &[(0, 0, 2.0), (0, 2, 1.5), (2, 0, 1.5), (1, 1, 3.0)]);
        assert_eq!(real_symmetry(&symmetric), Symmetry::Symmetric);
        let skew = matrix([3, 3], &[(0, 2, 1.5), (2, 0, -1.5), (1, 0, 4.0), (0, 1, -4.0)]);
        assert_eq!(real_symmetry(&skew), Symmetry::SkewSymmetric);
        let pattern = matrix([3, 3], &[(0, 2, 1.5), (2, 0, 2.5)]);
        assert_eq!(real_symmetry(&pattern), Symmetry::PatternSymmetric);
        let none = matrix([3, 3], &[(0, 2, 1.5), (2, 0, 1.5), (1, 2, 1.0)]);
        assert_eq!(real_symmetry(&none), Symmetry::None);
        assert_eq!(real_symmetry(&matrix([2, 3], &[(0, 0, 1.0)])), Symmetry::NotSquare);
        // A diagonal entry is its own mirror: symmetric, never skew.
        assert_eq!(real_symmetry(&matrix([2, 2], &[(1, 1, -1.0)])), Symmetry::Symmetric);
    }

    #[test]
    fn complex_symmetry_tells_hermitian_from_symmetric() {
        let z = |re, im| Complex64::new(re, im);
        let complex = |entries: &[(u64, u64, Complex64)]| {
            let mut list = CoordinateList::new(&[2, 2]);
            for &(i, j, v) in entries {
                list.push(&[i, j], v).unwrap();
            }
            list.prune();
            Symmetry::of(&list, |v| v.conj())
        };
        let hermitian = [(0, 0, z(2.0, 0.0)), (0, 1, z(1.0, 1.0)), (1, 0, z(1.0, -1.0))];
        assert_eq!(complex(&hermitian), Symmetry::Hermitian);
        let symmetric = [(0, 1, z(1.0, 1.0)), (1, 0, z(1.0, 1.0))];
        assert_eq!(complex(&symmetric), Symmetry::Symmetric);
        // A diagonal value that is not real is not hermitian.
        let diagonal = [(0, 0, z(2.0, 1.0)), (0, 1, z(1.0, 1.0)), (1, 0, z(1.0, -1.0))];
        assert_eq!(complex(&diagonal), Symmetry::PatternSymmetric);
        let skew = [(0, 1, z(1.0, 1.0)), (1, 0, z(-1.0, -1.0))];
        assert_eq!(complex(&skew), Symmetry::SkewSymmetric);
        assert!(modulus(z(f64::INFINITY, f64::NAN)).is_nan());
        assert_eq!(modulus(z(3.0, -4.0)), 5.0);
    }

    #[test]
    fn histograms_bucket_lengths_by_powers_of_two() {
        // Lengths 1, 2, 3, 4, 9 and two empty slices.
        let occupied = [1, 2, 3, 4, 9];
        let lengths = Lengths {
            occupied: &occupied,
            slices: 7,
        };
        assert_eq!(histogram(&lengths), vec![2, 1, 2, 1, 1]);
        let labels: Vec<String> = (0..5).map(bucket_label).collect();
        assert_eq!(labels, ["0", "1", "2-3", "4-7", "8-15"]);
    }

    #[test]
    fn a_tridiagonal_matrix_is_suggested_dia_and_a_skewed_one_csr() {
        let n = 50u64;
        let mut tridiagonal = Vec::new();
        for i in 0..n {
            for j in i.saturating_sub(1)..(i + 2).min(n) {
                tridiagonal.push((i, j, 1.0));
            }
        }
        let census = Census::of(&matrix([50, 50], &tridiagonal));
        assert_eq!(census.diagonals(), Some(3));
        let (format, why) = spmv_suggestion(&census);
        assert_eq!(format, "dia", "{why}");
        // 148 nonzeros in 150 stored values.
        assert!(why.contains("1.33% padding"), "{why}");
        // One full row and a diagonal: ELL pads every row to 50, DIA needs 50 diagonals.
        let mut skewed: Vec<(u64, u64, f64)> = (0..n).map(|j| (0, j, 1.0)).collect();
        skewed.extend((1..n).map(|i| (i, i, 1.0)));
        let census = Census::of(&matrix([50, 50], &skewed));
        assert_eq!(spmv_suggestion(&census).0, "csr");
    }
}
