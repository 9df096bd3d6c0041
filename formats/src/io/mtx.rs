//! Matrix Market (`.mtx`) files: reads coordinate and array matrices of
//! real, integer or pattern values, general, symmetric or skew-symmetric,
//! into a [`CoordinateList`] (symmetric storage expanded) of `f64`, or of
//! `i64` or `i32` values exactly ([`read_mtx_as`]); complex matrices
//! (also hermitian) into [`Complex64`](num_complex::Complex64) values;
//! writes matrices and vectors of those types back.
//!
//! The reader takes the whole file as bytes and walks it without allocating
//! per line. It trusts nothing: sizes from the header are checked
//! ([`FormatError::TooLarge`] before anything is allocated), capacity is
//! reserved only as far as the file's length could fill it, and every
//! malformed line is a [`FormatError::Parse`] naming its line.

use std::fmt;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use super::mtx_parallel::{plain_entry, read_plain_entries, Expected, PARALLEL_BYTES};
use super::text::{
    count_tokens, io_error, is_content, parse_error, parse_u64, printable, read_file, show, IntError, Line, Lines,
    Tokens,
};
use super::values::{complex_refusal_text, parse_tokens, refusal_text, FileValue, Refusal};
use crate::coordinates::{CoordinateList, MAX_ENTRIES, MAX_POSITIONS};
use crate::error::{FormatError, Result};
use crate::format::MAX_DIMENSION;
use crate::memory::with_capacity_on_huge_pages;
use crate::tensor::Tensor;

/// How a Matrix Market file stores its entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MtxLayout {
    /// One `row column [value]` line per stored entry.
    Coordinate,
    /// Every value, column by column (only one triangle when symmetric).
    Array,
}

/// The kind of values a Matrix Market file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MtxField {
    /// Floating-point values.
    #[default]
    Real,
    /// Integers: read exactly as `i64` or `i32` ([`read_mtx_as`]); as `f64`,
    /// exact up to 2^53.
    Integer,
    /// No values: every stored entry is 1.
    Pattern,
    /// Complex values, a real and an imaginary part (two value tokens):
    /// read only as [`Complex64`](num_complex::Complex64) (`c64`), which is
    /// always written in this field.
    Complex,
}

/// Which part of the matrix a Matrix Market file stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MtxSymmetry {
    /// Every entry.
    #[default]
    General,
    /// The lower triangle of `A = Aᵀ`.
    Symmetric,
    /// The strict lower triangle of `A = -Aᵀ`.
    SkewSymmetric,
    /// The lower triangle of `A = Aᴴ`, complex matrices only: an entry's
    /// mirror image holds its conjugate.
    Hermitian,
}

impl fmt::Display for MtxLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MtxLayout::Coordinate => "coordinate",
            MtxLayout::Array => "array",
        })
    }
}

impl fmt::Display for MtxField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MtxField::Real => "real",
            MtxField::Integer => "integer",
            MtxField::Pattern => "pattern",
            MtxField::Complex => "complex",
        })
    }
}

impl fmt::Display for MtxSymmetry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MtxSymmetry::General => "general",
            MtxSymmetry::Symmetric => "symmetric",
            MtxSymmetry::SkewSymmetric => "skew-symmetric",
            MtxSymmetry::Hermitian => "hermitian",
        })
    }
}

/// A Matrix Market file as read: its entries (of `f64` values, or of the
/// type [`read_mtx_as`] reads), with symmetric storage expanded to both
/// triangles, and what its banner said.
///
/// ```
/// use std::path::Path;
/// use tessera_formats::io::{parse_mtx, MtxSymmetry};
/// let text = b"%%MatrixMarket matrix coordinate real symmetric\n\
///              % a comment\n\
///              3 3 2\n\
///              1 1 4.5\n\
///              3 1 -1\n";
/// let file = parse_mtx(text, Path::new("small.mtx")).unwrap();
/// assert_eq!(file.symmetry, MtxSymmetry::Symmetric);
/// assert_eq!(file.entries.shape(), &[3, 3]);
/// // (3, 1) is mirrored to (1, 3); coordinates are 0-based.
/// let entries: Vec<_> = file.entries.iter().map(|(c, v)| (c.to_vec(), v)).collect();
/// assert_eq!(entries, vec![(vec![0, 0], 4.5), (vec![2, 0], -1.0), (vec![0, 2], -1.0)]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct MtxFile<V = f64> {
    /// Every entry of the matrix (shape `[rows, columns]`, 0-based), in file
    /// order; a mirrored entry follows the one it mirrors. Array files drop
    /// zero values.
    pub entries: CoordinateList<V>,
    /// How the file stored its entries.
    pub layout: MtxLayout,
    /// The kind of values the file held.
    pub field: MtxField,
    /// Which part of the matrix the file stored.
    pub symmetry: MtxSymmetry,
    /// The comment lines between the banner and the size line (where files
    /// say where they came from), each the text after its `%`.
    pub comments: Vec<String>,
}

impl<V> MtxFile<V> {
    /// The header to write these entries back with: the same field,
    /// symmetry and comments (see [`MtxHeader::fitted`] before writing data
    /// that was changed).
    pub fn header(&self) -> MtxHeader {
        MtxHeader {
            field: self.field,
            symmetry: self.symmetry,
            comments: self.comments.clone(),
        }
    }
}

/// The banner every reading error about it repeats.
const BANNER: &str = "%%MatrixMarket matrix <coordinate|array> <real|integer|pattern|complex> \
     <general|symmetric|skew-symmetric|hermitian>";

/// Reads a Matrix Market file.
///
/// Errors: [`FormatError::Io`] when the file cannot be read, and the errors
/// of [`parse_mtx`].
pub fn read_mtx(path: impl AsRef<Path>) -> Result<MtxFile> {
    read_mtx_as(path)
}

/// Reads a Matrix Market file into values of type `V`: `f64` as
/// [`read_mtx`], `i64` or `i32` exactly (see [`FileValue`]), or
/// [`Complex64`](num_complex::Complex64), which alone reads `complex`
/// files.
///
/// Errors: [`FormatError::Io`] when the file cannot be read, and the errors
/// of [`parse_mtx_as`].
pub fn read_mtx_as<V: FileValue>(path: impl AsRef<Path>) -> Result<MtxFile<V>> {
    let path = path.as_ref();
    let bytes = read_file(path)?;
    parse_mtx_as(&bytes, path)
}

/// Parses the bytes of a Matrix Market file; `path` only names the file in
/// errors.
///
/// Errors: [`FormatError::Parse`] with the line and what was expected there
/// (a bad banner, the `complex` field, which is read as
/// [`Complex64`](num_complex::Complex64) by [`parse_mtx_as`], a missing size
/// line, an index out of range, a token that is not a number,
/// a wrong number of tokens, fewer or more entries than the size line says);
/// [`FormatError::TooLarge`] for sizes tessera will not allocate.
pub fn parse_mtx(bytes: &[u8], path: &Path) -> Result<MtxFile> {
    parse_mtx_as(bytes, path)
}

/// [`parse_mtx`] into values of type `V`: `f64`, or `i64` or `i32`
/// exactly, or [`Complex64`](num_complex::Complex64). An `integer` file's
/// values and a `pattern` file's 1s are read as they are; a `real` file's
/// when each is integral (`2.0` is 2). A `complex` file is read only as
/// `Complex64`, its entry lines ending in the real and the imaginary part;
/// a `hermitian` one mirrors each entry as its conjugate (the diagonal is
/// read as written). Any other file read as `Complex64` has imaginary
/// parts 0.
///
/// Errors: those of [`parse_mtx`], and a [`FormatError::Parse`] with the
/// line for a value with a fraction, one beyond the type's range, and an
/// entry of a skew-symmetric file whose value has no negation in the type
/// (`i64::MIN`), which its mirror image would need; a `complex` file read
/// as another type is refused at its banner.
///
/// ```
/// use tessera_formats::io::parse_mtx_as;
/// use tessera_formats::Complex64;
/// let text = b"%%MatrixMarket matrix coordinate real general\n1 2 2\n1 1 2.0\n1 2 2.5\n";
/// let err = parse_mtx_as::<i64>(text, "a.mtx".as_ref()).unwrap_err().to_string();
/// assert_eq!(err, "a.mtx:4: the value `2.5` is not an integer, and the values are read as i64");
///
/// let text = b"%%MatrixMarket matrix coordinate complex hermitian\n2 2 2\n1 1 3 0\n2 1 1 -2\n";
/// let file = parse_mtx_as::<Complex64>(text, "h.mtx".as_ref()).unwrap();
/// // (2, 1) holds 1-2i; its mirror image (1, 2) the conjugate, 1+2i.
/// let values = [Complex64::new(3.0, 0.0), Complex64::new(1.0, -2.0), Complex64::new(1.0, 2.0)];
/// assert_eq!(file.entries.values(), &values);
/// let err = parse_mtx_as::<f64>(text, "h.mtx".as_ref()).unwrap_err().to_string();
/// assert!(err.starts_with("h.mtx:1: the `complex` field holds complex values"), "{err}");
/// assert!(err.contains("reads as c64"), "{err}");
/// ```
pub fn parse_mtx_as<V: FileValue>(bytes: &[u8], path: &Path) -> Result<MtxFile<V>> {
    let mut lines = Lines::new(bytes);
    let banner = parse_banner(lines.next(), path)?;
    if banner.field == MtxField::Complex && !V::COMPLEX {
        return Err(parse_error(
            path,
            1,
            format!(
                "the `complex` field holds complex values, which tessera reads as c64 \
                 (`-t NAME:c64` on the command line), not as {}",
                V::NAME
            ),
        ));
    }
    let mut comments = Vec::new();
    let size_line = loop {
        match lines.next() {
            Some(line) if is_content(line.text, b'%') => break Some(line),
            Some(line) => comments.extend(comment_text(line.text)),
            None => break None,
        }
    };
    let Some(size_line) = size_line else {
        return Err(parse_error(
            path,
            lines.next_number(),
            format!(
                "expected the size line `{}`, found the end of the file",
                banner.size_line()
            ),
        ));
    };
    let size = parse_size_line(size_line, &banner, path)?;
    let entries = match banner.layout {
        MtxLayout::Coordinate => read_coordinates(&mut lines, &banner, &size, path)?,
        MtxLayout::Array => read_array(&mut lines, &banner, &size, path)?,
    };
    Ok(MtxFile {
        entries,
        layout: banner.layout,
        field: banner.field,
        symmetry: banner.symmetry,
        comments,
    })
}

/// The field a Matrix Market file's banner (its first line) declares,
/// reading nothing after it: for a caller choosing the type to read the
/// file as, since a `complex` file is read as
/// [`Complex64`](num_complex::Complex64) only.
///
/// Errors: [`FormatError::Io`] when the file cannot be read; a
/// [`FormatError::Parse`] for a bad banner, as [`parse_mtx`] gives it.
pub fn mtx_field(path: impl AsRef<Path>) -> Result<MtxField> {
    let path = path.as_ref();
    let first = super::text::first_line_where(path, |_| true)?;
    parse_mtx_field(first.as_deref().unwrap_or_default(), path)
}

/// [`mtx_field`] of a file's bytes (its first line is enough); `path` only
/// names the file in errors.
///
/// ```
/// use tessera_formats::io::{parse_mtx_field, MtxField};
/// let banner = b"%%MatrixMarket matrix array complex hermitian\n";
/// assert_eq!(parse_mtx_field(banner, "h.mtx".as_ref()).unwrap(), MtxField::Complex);
/// assert!(parse_mtx_field(b"1 2 3\n", "x.mtx".as_ref()).is_err());
/// ```
pub fn parse_mtx_field(bytes: &[u8], path: &Path) -> Result<MtxField> {
    Ok(parse_banner(Lines::new(bytes).next(), path)?.field)
}

/// The text after the `%` of a comment line, without a trailing `\r`;
/// `None` for a blank line.
fn comment_text(line: &[u8]) -> Option<String> {
    let text = line.trim_ascii_start().strip_prefix(b"%")?;
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    Some(String::from_utf8_lossy(text).into_owned())
}

/// What the first line says.
struct Banner {
    layout: MtxLayout,
    field: MtxField,
    symmetry: MtxSymmetry,
}

impl Banner {
    fn size_line(&self) -> &'static str {
        match self.layout {
            MtxLayout::Coordinate => "rows columns entries",
            MtxLayout::Array => "rows columns",
        }
    }
    /// Value tokens on an entry line: none for a pattern, two (real and
    /// imaginary parts) for a complex value.
    fn value_tokens(&self) -> usize {
        match self.field {
            MtxField::Pattern => 0,
            MtxField::Complex => 2,
            MtxField::Real | MtxField::Integer => 1,
        }
    }
    /// Tokens on an entry line.
    fn tokens(&self) -> usize {
        let indices = match self.layout {
            MtxLayout::Array => 0,
            MtxLayout::Coordinate => 2,
        };
        indices + self.value_tokens()
    }
    fn entry_line(&self) -> &'static str {
        match (self.layout, self.field) {
            (MtxLayout::Array, MtxField::Complex) => "real imaginary",
            (MtxLayout::Array, _) => "value",
            (MtxLayout::Coordinate, MtxField::Pattern) => "row column",
            (MtxLayout::Coordinate, MtxField::Complex) => "row column real imaginary",
            (MtxLayout::Coordinate, _) => "row column value",
        }
    }
}

/// What the size line says, checked against the limits.
struct Size {
    line: usize,
    rows: usize,
    cols: usize,
    /// Lines of entries the file must hold.
    entries: usize,
}

fn parse_banner(line: Option<Line<'_>>, path: &Path) -> Result<Banner> {
    let bad = |found: &str| parse_error(path, 1, format!("expected the banner `{BANNER}`, {found}"));
    let Some(line) = line else {
        return Err(bad("found an empty file"));
    };
    let mut tokens = Tokens::new(line.text);
    let mut word = |what: &str| -> Result<&[u8]> {
        tokens
            .next()
            .ok_or_else(|| bad(&format!("found no {what} in `{}`", show_line(line.text))))
    };
    let magic = word("`%%MatrixMarket`")?;
    if !magic.eq_ignore_ascii_case(b"%%MatrixMarket") {
        return Err(bad(&format!("found {}", show(magic))));
    }
    let object = word("object")?;
    if !object.eq_ignore_ascii_case(b"matrix") {
        return Err(bad(&format!(
            "found the object {}: only `matrix` files can be read",
            show(object)
        )));
    }
    let layout = match word("layout")?.to_ascii_lowercase().as_slice() {
        b"coordinate" => MtxLayout::Coordinate,
        b"array" => MtxLayout::Array,
        other => return Err(bad(&format!("found the layout {}", show(other)))),
    };
    let field = match word("field")?.to_ascii_lowercase().as_slice() {
        b"real" => MtxField::Real,
        b"integer" => MtxField::Integer,
        b"pattern" => MtxField::Pattern,
        b"complex" => MtxField::Complex,
        other => return Err(bad(&format!("found the field {}", show(other)))),
    };
    let symmetry = match word("symmetry")?.to_ascii_lowercase().as_slice() {
        b"general" => MtxSymmetry::General,
        b"symmetric" => MtxSymmetry::Symmetric,
        b"skew-symmetric" => MtxSymmetry::SkewSymmetric,
        b"hermitian" => MtxSymmetry::Hermitian,
        other => return Err(bad(&format!("found the symmetry {}", show(other)))),
    };
    if let Some(extra) = tokens.next() {
        return Err(bad(&format!("found {} after it", show(extra))));
    }
    if symmetry == MtxSymmetry::Hermitian && field != MtxField::Complex {
        return Err(parse_error(
            path,
            1,
            format!("`hermitian` symmetry needs the `complex` field, the banner says `{field}`"),
        ));
    }
    if field == MtxField::Pattern && symmetry == MtxSymmetry::SkewSymmetric {
        return Err(parse_error(
            path,
            1,
            "the `pattern` field cannot be skew-symmetric (its entries have no values to negate)",
        ));
    }
    if layout == MtxLayout::Array && field == MtxField::Pattern {
        return Err(parse_error(
            path,
            1,
            "the `pattern` field needs the `coordinate` layout (an array stores every value)",
        ));
    }
    Ok(Banner {
        layout,
        field,
        symmetry,
    })
}

/// A line quoted in a message, shortened like a token.
fn show_line(text: &[u8]) -> String {
    printable(text.trim_ascii())
}

fn parse_size_line(line: Line<'_>, banner: &Banner, path: &Path) -> Result<Size> {
    let expected = || {
        format!(
            "expected the size line `{}` ({} non-negative integers), found `{}`",
            banner.size_line(),
            banner.size_line().split(' ').count(),
            show_line(line.text)
        )
    };
    let mut numbers = [0usize; 3];
    let wanted = &mut numbers[..banner.size_line().split(' ').count()];
    let mut tokens = Tokens::new(line.text);
    for n in wanted.iter_mut() {
        let token = tokens
            .next()
            .ok_or_else(|| parse_error(path, line.number, expected()))?;
        *n = match parse_u64(token).map(usize::try_from) {
            Ok(Ok(n)) => n,
            Ok(Err(_)) | Err(IntError::Overflow) => {
                return Err(FormatError::TooLarge(format!(
                    "{}:{}: the size {} does not fit in memory",
                    path.display(),
                    line.number,
                    show(token)
                )))
            }
            Err(IntError::NotANumber) => return Err(parse_error(path, line.number, expected())),
        };
    }
    if tokens.next().is_some() {
        return Err(parse_error(path, line.number, expected()));
    }
    let [rows, cols, nnz] = numbers;
    let too_large = |what: String| FormatError::TooLarge(format!("{}:{}: {what}", path.display(), line.number));
    if rows.max(cols) > MAX_DIMENSION {
        return Err(too_large(format!(
            "a {rows} x {cols} matrix: the largest size tessera stores is {MAX_DIMENSION}"
        )));
    }
    let positions = rows.checked_mul(cols).ok_or_else(|| {
        too_large(format!(
            "a {rows} x {cols} matrix has more positions than a `usize` can count"
        ))
    })?;
    if banner.symmetry != MtxSymmetry::General && rows != cols {
        return Err(parse_error(
            path,
            line.number,
            format!(
                "a {} matrix must be square, the size line says {rows} x {cols}",
                banner.symmetry
            ),
        ));
    }
    let entries = match banner.layout {
        MtxLayout::Coordinate => {
            if nnz > MAX_ENTRIES {
                return Err(too_large(format!("{nnz} entries (the limit is {MAX_ENTRIES})")));
            }
            nnz
        }
        MtxLayout::Array => {
            if positions > MAX_POSITIONS {
                return Err(too_large(format!(
                    "a dense {rows} x {cols} array has {positions} values (the limit is {MAX_POSITIONS})"
                )));
            }
            // Square when not general, so `rows * (rows ± 1) / 2` is exact
            // and within `positions`.
            match banner.symmetry {
                MtxSymmetry::General => positions,
                MtxSymmetry::Symmetric | MtxSymmetry::Hermitian => rows * (rows + 1) / 2,
                MtxSymmetry::SkewSymmetric => rows * rows.saturating_sub(1) / 2,
            }
        }
    };
    Ok(Size {
        line: line.number,
        rows,
        cols,
        entries,
    })
}

/// The entries read so far, 0-based.
struct Collected<V> {
    coords: Vec<u64>,
    values: Vec<V>,
    symmetry: MtxSymmetry,
}

impl<V: FileValue> Collected<V> {
    /// Room for the entries the size line announces, as far as the rest of
    /// the file (`min_line` bytes or more per entry line) could hold them:
    /// a lying header cannot force a large allocation.
    fn with_room(size: &Size, symmetry: MtxSymmetry, remaining: usize, min_line: usize) -> Self {
        let lines = size.entries.min(remaining / min_line + 1);
        let entries = if symmetry == MtxSymmetry::General {
            lines
        } else {
            2 * lines
        };
        Collected {
            coords: with_capacity_on_huge_pages(2 * entries),
            values: with_capacity_on_huge_pages(entries),
            symmetry,
        }
    }

    /// The value entry `(i, j)`'s mirror image `(j, i)` holds when the
    /// symmetry stores one: `v`, `-v` when skew-symmetric, its conjugate
    /// when hermitian; `None` when the type has no `-v` (`i64::MIN`).
    #[inline]
    fn mirror(&self, v: V) -> Option<V> {
        match self.symmetry {
            MtxSymmetry::SkewSymmetric => v.negated(),
            MtxSymmetry::Hermitian => Some(v.conjugate()),
            MtxSymmetry::General | MtxSymmetry::Symmetric => Some(v),
        }
    }

    /// Appends entry `(i, j)` and, for symmetric storage, its mirror image,
    /// which holds `mirrored` (see [`mirror`](Self::mirror)).
    #[inline]
    fn push(&mut self, i: u64, j: u64, v: V, mirrored: V) {
        self.coords.extend_from_slice(&[i, j]);
        self.values.push(v);
        if i != j && self.symmetry != MtxSymmetry::General {
            self.coords.extend_from_slice(&[j, i]);
            self.values.push(mirrored);
        }
    }

    /// The list, every coordinate checked against `size` as it was read.
    fn into_list(self, size: &Size) -> CoordinateList<V> {
        CoordinateList::from_raw_parts(vec![size.rows, size.cols], self.coords, self.values)
    }
}

/// The error for an entry of a skew-symmetric file whose mirror image
/// would hold a value its type does not (`-i64::MIN`).
#[cold]
fn no_mirror<V: FileValue>(v: V) -> String {
    format!(
        "the value {v} has no negation in {}, which its mirror image in a skew-symmetric matrix needs",
        V::NAME
    )
}

fn read_coordinates<V: FileValue>(
    lines: &mut Lines<'_>,
    banner: &Banner,
    size: &Size,
    path: &Path,
) -> Result<CoordinateList<V>> {
    let expected = Expected {
        rows: size.rows as u64,
        cols: size.cols as u64,
        entries: size.entries,
        field: banner.field,
        values: banner.value_tokens(),
    };
    if banner.symmetry == MtxSymmetry::General && lines.remaining() >= PARALLEL_BYTES {
        let threads = rayon::current_num_threads();
        if let Some((coords, values)) = (threads > 1)
            .then(|| read_plain_entries::<V>(lines.rest(), &expected, threads))
            .flatten()
        {
            return Ok(CoordinateList::from_raw_parts(
                vec![size.rows, size.cols],
                coords,
                values,
            ));
        }
    }
    let mut collected = Collected::with_room(size, banner.symmetry, lines.remaining(), 4);
    let (rows, cols) = (size.rows as u64, size.cols as u64);
    let skew = banner.symmetry == MtxSymmetry::SkewSymmetric;
    let values = banner.value_tokens();
    let mut count = 0usize;
    let mut ints = [0u64; 2];
    loop {
        let line = match lines.next_plain(&mut ints, values) {
            Some(plain) => {
                let entry = plain_entry::<V>(ints, plain.values, &expected)
                    .filter(|&(i, j, _)| count < size.entries && !(skew && i == j))
                    .and_then(|(i, j, v)| Some((i, j, v, collected.mirror(v)?)));
                if let Some((i, j, v, mirrored)) = entry {
                    count += 1;
                    collected.push(i, j, v, mirrored);
                    continue;
                }
                // Not a valid entry: the slow path says why.
                plain.line
            }
            None => match lines.next() {
                Some(line) => line,
                None => break,
            },
        };
        if !is_content(line.text, b'%') {
            continue;
        }
        if count == size.entries {
            return Err(too_many(line, size, path));
        }
        count += 1;
        let entry = parse_coordinate_entry(line.text, banner, rows, cols);
        let (i, j, v) = entry.map_err(|reason| parse_error(path, line.number, reason))?;
        if i == j && banner.symmetry == MtxSymmetry::SkewSymmetric {
            return Err(parse_error(
                path,
                line.number,
                format!(
                    "entry ({}, {}) is on the diagonal, which a skew-symmetric matrix does not store (it is zero)",
                    i + 1,
                    j + 1
                ),
            ));
        }
        let mirrored = collected
            .mirror(v)
            .ok_or_else(|| parse_error(path, line.number, no_mirror(v)))?;
        collected.push(i, j, v, mirrored);
    }
    if count < size.entries {
        return Err(too_few(lines, count, size, path));
    }
    Ok(collected.into_list(size))
}

/// One `row column [value]` line: 0-based coordinates and the value, or why
/// not.
fn parse_coordinate_entry<V: FileValue>(
    text: &[u8],
    banner: &Banner,
    rows: u64,
    cols: u64,
) -> Result<(u64, u64, V), String> {
    let found = count_tokens(text);
    if found != banner.tokens() {
        return Err(format!(
            "expected {} `{}`, found {found}",
            tokens_text(banner.tokens()),
            banner.entry_line()
        ));
    }
    // As many tokens as asked for, counted above.
    let mut tokens = Tokens::new(text);
    let mut next = || tokens.next().unwrap_or_default();
    let i = parse_index(next(), rows, "row")?;
    let j = parse_index(next(), cols, "column")?;
    let v = match banner.field {
        MtxField::Pattern => V::from_f64(1.0),
        MtxField::Complex => parse_value([next(), next()], MtxField::Complex)?,
        field => parse_value([next(), &[]], field)?,
    };
    Ok((i, j, v))
}

/// A 1-based index from 1 to `size`, made 0-based.
#[inline(always)]
fn parse_index(token: &[u8], size: u64, what: &str) -> Result<u64, String> {
    match parse_u64(token) {
        Ok(k) if k >= 1 && k <= size => Ok(k - 1),
        _ => Err(bad_index(token, size, what)),
    }
}

#[cold]
fn bad_index(token: &[u8], size: u64, what: &str) -> String {
    if size == 0 {
        format!(
            "expected no entries (the matrix has no {what}s), found the {what} index {}",
            show(token)
        )
    } else {
        format!("expected a {what} index from 1 to {size}, found {}", show(token))
    }
}

/// The value of an entry line's value tokens (the first alone, but in a
/// `complex` file), or why not.
#[inline(always)]
fn parse_value<V: FileValue>(tokens: [&[u8]; 2], field: MtxField) -> Result<V, String> {
    parse_tokens(tokens, field).map_err(|refusal| bad_value::<V>(refusal, tokens, field))
}

#[cold]
fn bad_value<V: FileValue>(refusal: Refusal, tokens: [&[u8]; 2], field: MtxField) -> String {
    let token = tokens[0];
    refusal_text::<V>(refusal, token, || match field {
        MtxField::Integer => format!(
            "expected an integer value (the field is `integer`), found {}",
            show(token)
        ),
        MtxField::Complex => complex_refusal_text(tokens),
        MtxField::Real | MtxField::Pattern => format!("expected a real value, found {}", show(token)),
    })
}

/// `1 token`, `3 tokens`.
fn tokens_text(n: usize) -> String {
    if n == 1 {
        "1 token".into()
    } else {
        format!("{n} tokens")
    }
}

/// `1 entry`, `2 entries`.
fn entries(n: usize) -> String {
    if n == 1 {
        "1 entry".into()
    } else {
        format!("{n} entries")
    }
}

fn too_many(line: Line<'_>, size: &Size, path: &Path) -> FormatError {
    parse_error(
        path,
        line.number,
        format!(
            "expected {}, as the size line (line {}) says, but found more",
            entries(size.entries),
            size.line
        ),
    )
}

fn too_few(lines: &Lines<'_>, count: usize, size: &Size, path: &Path) -> FormatError {
    parse_error(
        path,
        lines.next_number(),
        format!(
            "expected {}, as the size line (line {}) says, but the file ends after {count}",
            entries(size.entries),
            size.line
        ),
    )
}

fn read_array<V: FileValue>(
    lines: &mut Lines<'_>,
    banner: &Banner,
    size: &Size,
    path: &Path,
) -> Result<CoordinateList<V>> {
    let mut collected = Collected::with_room(size, banner.symmetry, lines.remaining(), 2);
    // The first row stored in column `j`: all of it, the lower triangle, or
    // the strict lower triangle.
    let first_row = |j: usize| match banner.symmetry {
        MtxSymmetry::General => 0,
        MtxSymmetry::Symmetric | MtxSymmetry::Hermitian => j,
        MtxSymmetry::SkewSymmetric => j + 1,
    };
    let (mut i, mut j) = (first_row(0), 0usize);
    let mut count = 0usize;
    for line in lines.by_ref() {
        if !is_content(line.text, b'%') {
            continue;
        }
        if count == size.entries {
            return Err(too_many(line, size, path));
        }
        count += 1;
        let found = count_tokens(line.text);
        let value = if found == banner.tokens() {
            let mut tokens = Tokens::new(line.text);
            let mut next = || tokens.next().unwrap_or_default();
            parse_value([next(), next()], banner.field)
        } else {
            Err(format!(
                "expected {} `{}` (array files hold one value per line), found {found}",
                tokens_text(banner.tokens()),
                banner.entry_line()
            ))
        };
        let v: V = value.map_err(|reason| parse_error(path, line.number, reason))?;
        debug_assert!(i < size.rows && j < size.cols);
        if !v.is_zero() {
            let mirrored = collected
                .mirror(v)
                .ok_or_else(|| parse_error(path, line.number, no_mirror(v)))?;
            collected.push(i as u64, j as u64, v, mirrored);
        }
        i += 1;
        if i >= size.rows {
            j += 1;
            i = first_row(j);
        }
    }
    if count < size.entries {
        return Err(too_few(lines, count, size, path));
    }
    Ok(collected.into_list(size))
}

/// What a written Matrix Market file says besides its entries: the banner's
/// field and symmetry, and comment lines (provenance) after the banner.
/// [`MtxHeader::default`] is `real general` without comments, what
/// [`write_mtx`] writes (`complex general` for complex values).
///
/// ```
/// use tessera_formats::io::{parse_mtx, write_mtx_to_with, MtxField, MtxSymmetry};
/// use tessera_formats::{Format, Tensor};
/// let text = b"%%MatrixMarket matrix coordinate integer symmetric\n% from a test\n2 2 2\n1 1 4\n2 1 -1\n";
/// let file = parse_mtx(text, "small.mtx".as_ref()).unwrap();
/// let a = Tensor::pack(&file.entries, Format::csr()).unwrap();
/// let header = file.header().fitted(&a); // the data still allows it
/// assert_eq!((header.field, header.symmetry), (MtxField::Integer, MtxSymmetry::Symmetric));
/// let mut written = Vec::new();
/// write_mtx_to_with(&mut written, &a, &header).unwrap();
/// assert_eq!(written, text);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MtxHeader {
    /// The kind of values written.
    pub field: MtxField,
    /// Which part of the matrix is written.
    pub symmetry: MtxSymmetry,
    /// Comment lines, each the text after its `%` (a comment holding line
    /// breaks is written as several lines).
    pub comments: Vec<String>,
}

impl MtxHeader {
    /// This header with the field and symmetry lowered as far as `tensor`'s
    /// data requires: `pattern` only when every value is 1, `integer` only
    /// when every value is an integer, `symmetric` or `skew-symmetric` only
    /// when every entry's mirror image holds the same or the negated value
    /// (and, for a dense tensor, never `pattern`). What it cannot keep
    /// becomes `real` or `general`; comments are kept. Never raises what the
    /// header says: integral values under a `real` header stay `real`.
    ///
    /// `i64` and `i32` values always fit `integer`, however large: they
    /// are written and read back exactly.
    ///
    /// Complex ([`Complex64`](num_complex::Complex64)) values are always
    /// written `complex`, whatever the header says, and only they are;
    /// `hermitian` needs each mirror image to hold the conjugate and the
    /// diagonal to be real. Real values under a `complex hermitian` header
    /// become `real symmetric` when the data is symmetric.
    ///
    /// ```
    /// use tessera_formats::io::{MtxField, MtxHeader, MtxSymmetry};
    /// use tessera_formats::{Complex64, Tensor};
    /// let z = |re, im| Complex64::new(re, im);
    /// let h = Tensor::from_dense(&[2, 2], vec![z(2.0, 0.0), z(1.0, 1.0), z(1.0, -1.0), z(0.0, 0.0)]).unwrap();
    /// let header = MtxHeader { symmetry: MtxSymmetry::Hermitian, ..MtxHeader::default() };
    /// let fitted = header.fitted(&h);
    /// assert_eq!((fitted.field, fitted.symmetry), (MtxField::Complex, MtxSymmetry::Hermitian));
    /// let symmetric = MtxHeader { symmetry: MtxSymmetry::Symmetric, ..MtxHeader::default() };
    /// assert_eq!(symmetric.fitted(&h).symmetry, MtxSymmetry::General);
    /// ```
    #[must_use]
    pub fn fitted<V: FileValue>(&self, tensor: &Tensor<V>) -> MtxHeader {
        let Ok(matrix) = Matrix::of(tensor) else {
            return self.clone();
        };
        let field = [self.field, MtxField::Integer, MtxField::Real, MtxField::Complex]
            .into_iter()
            .find(|&f| f.rank() >= self.field.rank() && matrix.field_fits(f))
            .unwrap_or(MtxField::Real);
        let symmetry = if matrix.symmetry_fits(self.symmetry, field) {
            self.symmetry
        } else if self.symmetry == MtxSymmetry::Hermitian && matrix.symmetry_fits(MtxSymmetry::Symmetric, field) {
            // Real values: hermitian is symmetric, in a field that says so.
            MtxSymmetry::Symmetric
        } else {
            MtxSymmetry::General
        };
        MtxHeader {
            field,
            symmetry,
            comments: self.comments.clone(),
        }
    }

    /// Why `matrix` cannot be written with this header, if it cannot.
    fn misfit<V: FileValue>(&self, matrix: &Matrix<V>) -> Option<String> {
        if !matrix.field_fits(self.field) {
            return Some(match (&matrix.body, self.field) {
                (_, MtxField::Complex) => format!("the `complex` field needs complex values, not {}", V::NAME),
                _ if V::COMPLEX => "complex values are written in the `complex` field".into(),
                (Body::Array(_), MtxField::Pattern) => {
                    "a dense tensor is written in the array layout, which cannot be `pattern`".into()
                }
                (_, MtxField::Pattern) => "the `pattern` field needs every value to be 1".into(),
                _ => "the `integer` field needs every value to be an integer".into(),
            });
        }
        if !matrix.symmetry_fits(self.symmetry, self.field) {
            return Some(format!(
                "the data is not {}: an entry's mirror image differs",
                self.symmetry
            ));
        }
        None
    }
}

impl MtxField {
    /// How much a field says about its values: pattern < integer < real <
    /// complex.
    fn rank(self) -> u8 {
        match self {
            MtxField::Pattern => 0,
            MtxField::Integer => 1,
            MtxField::Real => 2,
            MtxField::Complex => 3,
        }
    }
}

/// Writes a matrix (order 2), a vector (order 1, as an `n x 1` matrix) or a
/// scalar (order 0, as `1 x 1`) to a Matrix Market file, `real general`
/// (`complex general` for complex values): a tensor whose format is dense
/// in the array layout (every value), any other in the coordinate layout
/// (its nonzeros, sorted by row then column). Values are written so that
/// they read back the same: `f64` values in the shortest form that does,
/// `i64` and `i32` values as integers (write them under an `integer`
/// header, [`write_mtx_with`], to say so in the file), complex values as
/// their real and imaginary parts, each as an `f64`.
///
/// ```
/// use tessera_formats::io::{parse_mtx_as, write_mtx_to};
/// use tessera_formats::{Complex64, Format, Tensor};
/// let x = Tensor::from_dense(&[2], vec![Complex64::new(0.5, -1.0), Complex64::new(0.0, 0.0)]).unwrap();
/// let x = x.convert(&Format::sparse_vector()).unwrap();
/// let mut written = Vec::new();
/// write_mtx_to(&mut written, &x).unwrap();
/// let text = "%%MatrixMarket matrix coordinate complex general\n2 1 1\n1 1 0.5 -1\n";
/// assert_eq!(String::from_utf8_lossy(&written), text);
/// let back = parse_mtx_as::<Complex64>(&written, "x.mtx".as_ref()).unwrap();
/// assert_eq!(back.entries.values(), &[Complex64::new(0.5, -1.0)]);
/// ```
///
/// Errors: [`FormatError::Shape`] for tensors of order 3 or more (write them
/// with [`write_tns`](super::write_tns)), [`FormatError::Io`] when writing
/// fails.
pub fn write_mtx<V: FileValue>(path: impl AsRef<Path>, tensor: &Tensor<V>) -> Result<()> {
    write_mtx_with(path, tensor, &general::<V>())
}

/// The header of [`write_mtx`]: `real general`, `complex general` for
/// complex values.
fn general<V: FileValue>() -> MtxHeader {
    let field = if V::COMPLEX { MtxField::Complex } else { MtxField::Real };
    MtxHeader {
        field,
        ..MtxHeader::default()
    }
}

/// [`write_mtx`] to any writer (buffered here); I/O errors name the path
/// `<writer>`.
pub fn write_mtx_to<W: Write + ?Sized, V: FileValue>(writer: &mut W, tensor: &Tensor<V>) -> Result<()> {
    write_mtx_to_with(writer, tensor, &general::<V>())
}

/// [`write_mtx`] with the field, symmetry and comments of `header`: a
/// symmetric or hermitian matrix is written as its lower triangle (the
/// strict lower triangle when skew-symmetric), integers without a fraction,
/// a pattern without values.
///
/// Errors: those of [`write_mtx`], and [`FormatError::BadFormat`] when the
/// data does not allow the header (see [`MtxHeader::fitted`]), before the
/// file is touched.
///
/// ```
/// use tessera_formats::io::{parse_mtx_as, write_mtx_to_with, MtxField, MtxHeader};
/// use tessera_formats::{Format, Tensor};
/// let a = Tensor::from_dense(&[2, 1], vec![i64::MAX, -7]).unwrap().convert(&Format::csr()).unwrap();
/// let header = MtxHeader { field: MtxField::Integer, ..MtxHeader::default() };
/// let mut written = Vec::new();
/// write_mtx_to_with(&mut written, &a, &header).unwrap();
/// let text = "%%MatrixMarket matrix coordinate integer general\n2 1 2\n1 1 9223372036854775807\n2 1 -7\n";
/// assert_eq!(String::from_utf8_lossy(&written), text);
/// let back = parse_mtx_as::<i64>(&written, "a.mtx".as_ref()).unwrap();
/// assert_eq!(back.entries.values(), &[i64::MAX, -7]);
/// ```
pub fn write_mtx_with<V: FileValue>(path: impl AsRef<Path>, tensor: &Tensor<V>, header: &MtxHeader) -> Result<()> {
    let path = path.as_ref();
    let matrix = Matrix::checked(tensor, header)?;
    super::replace::replace_file(path, |w| matrix.write(BufWriter::new(w), header))
}

/// [`write_mtx_with`] to any writer (buffered here); I/O errors name the
/// path `<writer>`.
pub fn write_mtx_to_with<W: Write + ?Sized, V: FileValue>(
    writer: &mut W,
    tensor: &Tensor<V>,
    header: &MtxHeader,
) -> Result<()> {
    Matrix::checked(tensor, header)?
        .write(BufWriter::new(writer), header)
        .map_err(|e| io_error(Path::new("<writer>"), &e))
}

/// A tensor of order 2 or less as the matrix it is written as.
struct Matrix<V> {
    rows: usize,
    cols: usize,
    body: Body<V>,
}

enum Body<V> {
    /// Every value, row-major.
    Array(Vec<V>),
    /// The nonzeros, 0-based, of order 1 or 2, sorted by row then column.
    Coordinate(CoordinateList<V>),
}

impl<V: FileValue> Matrix<V> {
    fn of(tensor: &Tensor<V>) -> Result<Matrix<V>> {
        tensor.check_zero_fill("Matrix Market files")?;
        let (rows, cols) = match *tensor.shape() {
            [] => (1, 1),
            [n] => (n, 1),
            [rows, cols] => (rows, cols),
            _ => {
                return Err(FormatError::Shape(format!(
                    "Matrix Market files hold matrices and vectors, this tensor has order {}: write it as a FROSTT .tns file",
                    tensor.order()
                )))
            }
        };
        // Every tensor of order 0 is dense: it has no levels.
        let body = if tensor.format().is_dense() {
            Body::Array(tensor.to_dense_vec()?)
        } else {
            Body::Coordinate(tensor.to_coordinates())
        };
        Ok(Matrix { rows, cols, body })
    }

    /// The matrix of `tensor`, refused when its data does not allow `header`.
    fn checked(tensor: &Tensor<V>, header: &MtxHeader) -> Result<Matrix<V>> {
        let matrix = Matrix::of(tensor)?;
        match header.misfit(&matrix) {
            None => Ok(matrix),
            Some(reason) => Err(FormatError::BadFormat {
                format: format!("Matrix Market {} {}", header.field, header.symmetry),
                reason,
            }),
        }
    }

    fn values(&self) -> &[V] {
        match &self.body {
            Body::Array(values) => values,
            Body::Coordinate(list) => list.values(),
        }
    }

    /// Whether every value can be written in `field`: complex values in
    /// `complex` only, and only they.
    fn field_fits(&self, field: MtxField) -> bool {
        match (field, &self.body) {
            (MtxField::Complex, _) => V::COMPLEX,
            _ if V::COMPLEX => false,
            (MtxField::Real, _) => true,
            (MtxField::Integer, _) => self.values().iter().all(|&v| v.fits_integer_field()),
            (MtxField::Pattern, Body::Array(_)) => false,
            (MtxField::Pattern, Body::Coordinate(list)) => list.values().iter().all(|&v| v == V::from_f64(1.0)),
        }
    }

    /// Whether the matrix equals its transpose (minus it, its conjugate
    /// transpose) as `symmetry` says; `pattern` cannot be skew-symmetric,
    /// and only `complex` can be hermitian.
    fn symmetry_fits(&self, symmetry: MtxSymmetry, field: MtxField) -> bool {
        // `None` never equals a stored value: a value without a negation
        // (`i64::MIN`) has no mirror image in a skew-symmetric matrix.
        let mirror_of = |v: V| match symmetry {
            MtxSymmetry::SkewSymmetric => v.negated(),
            MtxSymmetry::Hermitian => Some(v.conjugate()),
            MtxSymmetry::General | MtxSymmetry::Symmetric => Some(v),
        };
        // What the diagonal may hold: 0 when skew-symmetric (it is not
        // stored), a real value when hermitian.
        let diagonal_fits = |v: V| match symmetry {
            MtxSymmetry::SkewSymmetric => v.is_zero(),
            MtxSymmetry::Hermitian => v.conjugate() == v,
            MtxSymmetry::General | MtxSymmetry::Symmetric => true,
        };
        let skew = symmetry == MtxSymmetry::SkewSymmetric;
        let hermitian = symmetry == MtxSymmetry::Hermitian;
        if symmetry == MtxSymmetry::General {
            return true;
        }
        if self.rows != self.cols || (skew && field == MtxField::Pattern) || (hermitian && field != MtxField::Complex) {
            return false;
        }
        match &self.body {
            Body::Array(values) => {
                let n = self.rows;
                (0..n).all(|i| {
                    (0..=i).all(|j| {
                        let (v, mirrored) = (values[i * n + j], values[j * n + i]);
                        if i == j {
                            diagonal_fits(v)
                        } else {
                            Some(mirrored) == mirror_of(v)
                        }
                    })
                })
            }
            Body::Coordinate(list) => {
                // Sorted by (row, column) without duplicates: find a mirror
                // image by binary search.
                let find = |i: u64, j: u64| {
                    let k = partition_by(list, |c| row_column(c) < (i, j));
                    (k < list.len() && row_column(list.coords(k)) == (i, j)).then(|| list.value(k))
                };
                list.iter().all(|(c, v)| {
                    let (i, j) = row_column(c);
                    if i == j {
                        // The list holds nonzeros only: none may sit on
                        // a skew-symmetric diagonal.
                        !skew && diagonal_fits(v)
                    } else {
                        find(j, i).is_some_and(|m| Some(m) == mirror_of(v))
                    }
                })
            }
        }
    }

    fn write<W: Write>(&self, mut w: BufWriter<W>, header: &MtxHeader) -> io::Result<()> {
        let (rows, cols) = (self.rows, self.cols);
        let (field, symmetry) = (header.field, header.symmetry);
        // The part of the matrix the symmetry stores: the lower triangle,
        // strictly so when skew-symmetric.
        let stored = |i: usize, j: usize| match symmetry {
            MtxSymmetry::General => true,
            MtxSymmetry::Symmetric | MtxSymmetry::Hermitian => i >= j,
            MtxSymmetry::SkewSymmetric => i > j,
        };
        let write_value = |w: &mut BufWriter<W>, v: V| match field {
            // Checked to fit (for `f64`, an integer within ±2^53).
            MtxField::Integer => v.write_integer(w),
            _ => v.write_text(w),
        };
        let layout = match self.body {
            Body::Array(_) => MtxLayout::Array,
            Body::Coordinate(_) => MtxLayout::Coordinate,
        };
        writeln!(w, "%%MatrixMarket matrix {layout} {field} {symmetry}")?;
        for line in header.comments.iter().flat_map(|c| c.lines()) {
            writeln!(w, "%{line}")?;
        }
        match &self.body {
            Body::Array(values) => {
                writeln!(w, "{rows} {cols}")?;
                for j in 0..cols {
                    for i in (0..rows).filter(|&i| stored(i, j)) {
                        write_value(&mut w, values[i * cols + j])?;
                        w.write_all(b"\n")?;
                    }
                }
            }
            Body::Coordinate(list) => {
                let written = |c: &[u64]| {
                    let (i, j) = row_column(c);
                    stored(i as usize, j as usize)
                };
                let count = if symmetry == MtxSymmetry::General {
                    list.len()
                } else {
                    list.iter().filter(|(c, _)| written(c)).count()
                };
                writeln!(w, "{rows} {cols} {count}")?;
                for (c, v) in list.iter().filter(|(c, _)| written(c)) {
                    let j = c.get(1).copied().unwrap_or(0);
                    write!(w, "{} {}", c[0] + 1, j + 1)?;
                    if field != MtxField::Pattern {
                        w.write_all(b" ")?;
                        write_value(&mut w, v)?;
                    }
                    w.write_all(b"\n")?;
                }
            }
        }
        w.flush()
    }
}

/// The row and column of a matrix's or a vector's (column 0) entry.
fn row_column(c: &[u64]) -> (u64, u64) {
    (c[0], c.get(1).copied().unwrap_or(0))
}

/// The first entry of a sorted list for which `before` is false.
fn partition_by<V: FileValue>(list: &CoordinateList<V>, before: impl Fn(&[u64]) -> bool) -> usize {
    let (mut low, mut high) = (0, list.len());
    while low < high {
        let mid = low + (high - low) / 2;
        if before(list.coords(mid)) {
            low = mid + 1;
        } else {
            high = mid;
        }
    }
    low
}
