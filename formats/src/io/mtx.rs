//! Matrix Market (`.mtx`) files: reads coordinate and array matrices of
//! real, integer or pattern values, general, symmetric or skew-symmetric,
//! into a [`CoordinateList`] (symmetric storage expanded); writes matrices
//! and vectors back.
//!
//! The reader takes the whole file as bytes and walks it without allocating
//! per line. It trusts nothing: sizes from the header are checked
//! ([`FormatError::TooLarge`] before anything is allocated), capacity is
//! reserved only as far as the file's length could fill it, and every
//! malformed line is a [`FormatError::Parse`] naming its line.

use std::fmt;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use super::text::{
    count_tokens, io_error, is_content, parse_error, parse_integer_value, parse_real, parse_u64, printable, read_file,
    show, write_real, IntError, Line, Lines, Tokens,
};
use crate::coordinates::{CoordinateList, MAX_ENTRIES, MAX_POSITIONS};
use crate::error::{FormatError, Result};
use crate::format::MAX_DIMENSION;
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MtxField {
    /// Floating-point values.
    Real,
    /// Integers, read as `f64` (exact up to 2^53).
    Integer,
    /// No values: every stored entry is `1.0`.
    Pattern,
}

/// Which part of the matrix a Matrix Market file stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MtxSymmetry {
    /// Every entry.
    General,
    /// The lower triangle of `A = Aᵀ`.
    Symmetric,
    /// The strict lower triangle of `A = -Aᵀ`.
    SkewSymmetric,
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
        })
    }
}

impl fmt::Display for MtxSymmetry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MtxSymmetry::General => "general",
            MtxSymmetry::Symmetric => "symmetric",
            MtxSymmetry::SkewSymmetric => "skew-symmetric",
        })
    }
}

/// A Matrix Market file as read: its entries, with symmetric storage
/// expanded to both triangles, and what its banner said.
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
pub struct MtxFile {
    /// Every entry of the matrix (shape `[rows, columns]`, 0-based), in file
    /// order; a mirrored entry follows the one it mirrors. Array files drop
    /// zero values.
    pub entries: CoordinateList<f64>,
    /// How the file stored its entries.
    pub layout: MtxLayout,
    /// The kind of values the file held.
    pub field: MtxField,
    /// Which part of the matrix the file stored.
    pub symmetry: MtxSymmetry,
}

/// The banner every reading error about it repeats.
const BANNER: &str =
    "%%MatrixMarket matrix <coordinate|array> <real|integer|pattern> <general|symmetric|skew-symmetric>";

/// Reads a Matrix Market file.
///
/// Errors: [`FormatError::Io`] when the file cannot be read, and the errors
/// of [`parse_mtx`].
pub fn read_mtx(path: impl AsRef<Path>) -> Result<MtxFile> {
    let path = path.as_ref();
    let bytes = read_file(path)?;
    parse_mtx(&bytes, path)
}

/// Parses the bytes of a Matrix Market file; `path` only names the file in
/// errors.
///
/// Errors: [`FormatError::Parse`] with the line and what was expected there
/// (a bad banner, the unsupported `complex` field or `hermitian` symmetry, a
/// missing size line, an index out of range, a token that is not a number,
/// a wrong number of tokens, fewer or more entries than the size line says);
/// [`FormatError::TooLarge`] for sizes tessera will not allocate.
pub fn parse_mtx(bytes: &[u8], path: &Path) -> Result<MtxFile> {
    let mut lines = Lines::new(bytes);
    let banner = parse_banner(lines.next(), path)?;
    let Some(size_line) = lines.next_content(b'%') else {
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
    })
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
    /// Tokens on an entry line.
    fn tokens(&self) -> usize {
        match (self.layout, self.field) {
            (MtxLayout::Array, _) => 1,
            (MtxLayout::Coordinate, MtxField::Pattern) => 2,
            (MtxLayout::Coordinate, _) => 3,
        }
    }
    fn entry_line(&self) -> &'static str {
        match (self.layout, self.field) {
            (MtxLayout::Array, _) => "value",
            (MtxLayout::Coordinate, MtxField::Pattern) => "row column",
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
        b"complex" => {
            return Err(parse_error(
                path,
                1,
                "the `complex` field is not supported: tessera reads real, integer and pattern matrices",
            ))
        }
        other => return Err(bad(&format!("found the field {}", show(other)))),
    };
    let symmetry = match word("symmetry")?.to_ascii_lowercase().as_slice() {
        b"general" => MtxSymmetry::General,
        b"symmetric" => MtxSymmetry::Symmetric,
        b"skew-symmetric" => MtxSymmetry::SkewSymmetric,
        b"hermitian" => {
            return Err(parse_error(
                path,
                1,
                "`hermitian` symmetry is not supported: it needs complex values, and tessera reads real matrices",
            ))
        }
        other => return Err(bad(&format!("found the symmetry {}", show(other)))),
    };
    if let Some(extra) = tokens.next() {
        return Err(bad(&format!("found {} after it", show(extra))));
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
                MtxSymmetry::Symmetric => rows * (rows + 1) / 2,
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
struct Collected {
    coords: Vec<u64>,
    values: Vec<f64>,
    symmetry: MtxSymmetry,
}

impl Collected {
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
            coords: Vec::with_capacity(2 * entries),
            values: Vec::with_capacity(entries),
            symmetry,
        }
    }

    /// Appends entry `(i, j)` and, for symmetric storage, its mirror image.
    #[inline]
    fn push(&mut self, i: u64, j: u64, v: f64) {
        self.coords.extend_from_slice(&[i, j]);
        self.values.push(v);
        if i != j && self.symmetry != MtxSymmetry::General {
            let mirrored = if self.symmetry == MtxSymmetry::SkewSymmetric {
                -v
            } else {
                v
            };
            self.coords.extend_from_slice(&[j, i]);
            self.values.push(mirrored);
        }
    }

    /// The list, every coordinate checked against `size` as it was read.
    fn into_list(self, size: &Size) -> CoordinateList<f64> {
        CoordinateList::from_raw_parts(vec![size.rows, size.cols], self.coords, self.values)
    }
}

fn read_coordinates(lines: &mut Lines<'_>, banner: &Banner, size: &Size, path: &Path) -> Result<CoordinateList<f64>> {
    let mut collected = Collected::with_room(size, banner.symmetry, lines.remaining(), 4);
    let (rows, cols) = (size.rows as u64, size.cols as u64);
    let skew = banner.symmetry == MtxSymmetry::SkewSymmetric;
    let has_value = banner.field != MtxField::Pattern;
    let mut count = 0usize;
    let mut ints = [0u64; 2];
    loop {
        let line = match lines.next_plain(&mut ints, has_value) {
            Some(plain) => {
                let [i, j] = ints;
                let in_range = (1..=rows).contains(&i) && (1..=cols).contains(&j);
                let value = if has_value {
                    parse_value(plain.value, banner.field).ok()
                } else {
                    Some(1.0)
                };
                if let (true, Some(v)) = (in_range && count < size.entries && !(skew && i == j), value) {
                    count += 1;
                    collected.push(i - 1, j - 1, v);
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
        collected.push(i, j, v);
    }
    if count < size.entries {
        return Err(too_few(lines, count, size, path));
    }
    Ok(collected.into_list(size))
}

/// One `row column [value]` line: 0-based coordinates and the value, or why
/// not.
fn parse_coordinate_entry(text: &[u8], banner: &Banner, rows: u64, cols: u64) -> Result<(u64, u64, f64), String> {
    let found = count_tokens(text);
    if found != banner.tokens() {
        return Err(format!(
            "expected {} tokens `{}`, found {found}",
            banner.tokens(),
            banner.entry_line()
        ));
    }
    // As many tokens as asked for, counted above.
    let mut tokens = Tokens::new(text);
    let mut next = || tokens.next().unwrap_or_default();
    let i = parse_index(next(), rows, "row")?;
    let j = parse_index(next(), cols, "column")?;
    let v = match banner.field {
        MtxField::Pattern => 1.0,
        field => parse_value(next(), field)?,
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

#[inline(always)]
fn parse_value(token: &[u8], field: MtxField) -> Result<f64, String> {
    let value = match field {
        MtxField::Integer => parse_integer_value(token),
        _ => parse_real(token),
    };
    value.ok_or_else(|| bad_value(token, field))
}

#[cold]
fn bad_value(token: &[u8], field: MtxField) -> String {
    match field {
        MtxField::Integer => format!(
            "expected an integer value (the field is `integer`), found {}",
            show(token)
        ),
        _ => format!("expected a real value, found {}", show(token)),
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

fn read_array(lines: &mut Lines<'_>, banner: &Banner, size: &Size, path: &Path) -> Result<CoordinateList<f64>> {
    let mut collected = Collected::with_room(size, banner.symmetry, lines.remaining(), 2);
    // The first row stored in column `j`: all of it, the lower triangle, or
    // the strict lower triangle.
    let first_row = |j: usize| match banner.symmetry {
        MtxSymmetry::General => 0,
        MtxSymmetry::Symmetric => j,
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
        let mut tokens = Tokens::new(line.text);
        let value = match (tokens.next(), tokens.next()) {
            (Some(token), None) => parse_value(token, banner.field),
            _ => Err(format!(
                "expected 1 token `value` (array files hold one value per line), found {}",
                count_tokens(line.text)
            )),
        };
        let v = value.map_err(|reason| parse_error(path, line.number, reason))?;
        debug_assert!(i < size.rows && j < size.cols);
        if v != 0.0 {
            collected.push(i as u64, j as u64, v);
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

/// Writes a matrix (order 2), a vector (order 1, as an `n x 1` matrix) or a
/// scalar (order 0, as `1 x 1`) to a Matrix Market file, `real general`:
/// a tensor whose format is dense in the array layout (every value), any
/// other in the coordinate layout (its nonzeros, sorted by row then column).
///
/// Errors: [`FormatError::Shape`] for tensors of order 3 or more (write them
/// with [`write_tns`](super::write_tns)), [`FormatError::Io`] when writing
/// fails.
pub fn write_mtx(path: impl AsRef<Path>, tensor: &Tensor<f64>) -> Result<()> {
    let path = path.as_ref();
    let matrix = Matrix::of(tensor)?;
    super::replace::replace_file(path, |w| matrix.write(BufWriter::new(w)))
}

/// [`write_mtx`] to any writer (buffered here); I/O errors name the path
/// `<writer>`.
pub fn write_mtx_to<W: Write + ?Sized>(writer: &mut W, tensor: &Tensor<f64>) -> Result<()> {
    Matrix::of(tensor)?
        .write(BufWriter::new(writer))
        .map_err(|e| io_error(Path::new("<writer>"), &e))
}

/// A tensor of order 2 or less as the matrix it is written as.
struct Matrix {
    rows: usize,
    cols: usize,
    body: Body,
}

enum Body {
    /// Every value, row-major.
    Array(Vec<f64>),
    /// The nonzeros, 0-based, of order 1 or 2.
    Coordinate(CoordinateList<f64>),
}

impl Matrix {
    fn of(tensor: &Tensor<f64>) -> Result<Matrix> {
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

    fn write<W: Write>(&self, mut w: BufWriter<W>) -> io::Result<()> {
        let (rows, cols) = (self.rows, self.cols);
        match &self.body {
            Body::Array(values) => {
                writeln!(w, "%%MatrixMarket matrix array real general")?;
                writeln!(w, "{rows} {cols}")?;
                for j in 0..cols {
                    for i in 0..rows {
                        write_real(&mut w, values[i * cols + j])?;
                        w.write_all(b"\n")?;
                    }
                }
            }
            Body::Coordinate(list) => {
                writeln!(w, "%%MatrixMarket matrix coordinate real general")?;
                writeln!(w, "{rows} {cols} {}", list.len())?;
                for (c, v) in list.iter() {
                    let j = c.get(1).copied().unwrap_or(0);
                    write!(w, "{} {} ", c[0] + 1, j + 1)?;
                    write_real(&mut w, v)?;
                    w.write_all(b"\n")?;
                }
            }
        }
        w.flush()
    }
}
