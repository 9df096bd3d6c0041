//! FROSTT (`.tns`) files: tensors of any order as lines of 1-based
//! coordinates followed by a value, read into a [`CoordinateList`] (of
//! `f64` values, or of `i64` or `i32` values exactly: [`read_tns_as`]) and
//! written back.
//!
//! A `.tns` file does not record its shape: the reader takes it from the
//! caller, from a `<stem>.dims` sidecar next to the file, or else as the
//! largest coordinate of each mode. The sidecar's first line is the size of
//! each mode; a second line, when it is one integer, is the number of
//! entries, which the reader checks; later lines are free text:
//!
//! ```text
//! 147306 117659 59
//! 206941
//! WordNet 3.0 index.sense: lemma x synset x sense_number
//! ```
//!
//! [`write_tns`] writes such a sidecar beside the file, so that a written
//! tensor reads back with its shape even when its last rows are empty.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::mtx::MtxField;
use super::text::{
    count_tokens, io_error, is_content, parse_error, parse_u64, read_file, show, IntError, Lines, Tokens,
};
use super::values::{refusal_text, FileValue};
use crate::coordinates::{CoordinateList, MAX_ENTRIES};
use crate::error::{FormatError, Result};
use crate::format::MAX_DIMENSION;
use crate::tensor::Tensor;

/// Reads a FROSTT file, with its shape from the `<stem>.dims` sidecar next
/// to it when there is one, else from the largest coordinates.
///
/// Errors: [`FormatError::Io`] when a file cannot be read; a
/// [`FormatError::Parse`] naming the sidecar when it is malformed or its
/// entry count disagrees with the file; the errors of
/// [`parse_tns_with_shape`].
pub fn read_tns(path: impl AsRef<Path>) -> Result<CoordinateList<f64>> {
    read_tns_as(path)
}

/// [`read_tns`] into values of type `V`: `f64`, or `i64` or `i32` exactly
/// (every value must then be integral and within the type's range; see
/// [`FileValue`]).
///
/// Errors: those of [`read_tns`], and a [`FormatError::Parse`] with the
/// line for a value with a fraction or beyond the type's range.
pub fn read_tns_as<V: FileValue>(path: impl AsRef<Path>) -> Result<CoordinateList<V>> {
    let path = path.as_ref();
    let bytes = read_file(path)?;
    let Some(dims) = read_dims(path)? else {
        return parse(&bytes, path, None, 0);
    };
    let list = parse(&bytes, path, Some(&dims.shape), dims.entries.map_or(0, |e| e.0))?;
    match dims.entries {
        Some((entries, line)) if entries != list.len() => Err(parse_error(
            &dims.path,
            line,
            format!(
                "expected {entries} entries in {}, as this line says, found {}",
                path.display(),
                list.len()
            ),
        )),
        _ => Ok(list),
    }
}

/// Parses the bytes of a FROSTT file, its shape the largest coordinate of
/// each mode; `path` only names the file in errors.
///
/// ```
/// use std::path::Path;
/// use tessera_formats::io::parse_tns;
/// let text = b"# order 3\n1 2 3 1.5\n2 1 1 -2\n";
/// let list = parse_tns(text, Path::new("t.tns")).unwrap();
/// assert_eq!(list.shape(), &[2, 2, 3]);
/// assert_eq!(list.coords(0), &[0, 1, 2]);
/// assert_eq!(list.values(), &[1.5, -2.0]);
/// ```
pub fn parse_tns(bytes: &[u8], path: &Path) -> Result<CoordinateList<f64>> {
    parse(bytes, path, None, 0)
}

/// Parses the bytes of a FROSTT file of the given `shape` (when `None`, the
/// largest coordinate of each mode); `path` only names the file in errors.
///
/// The order is the number of tokens on the first entry line less one (the
/// value); every entry line must agree, and with `shape`. Lines whose first
/// token starts with `#` are comments; blank lines are skipped.
///
/// Errors: [`FormatError::Parse`] with the line and what was expected there
/// (a wrong number of tokens, a coordinate that is not a positive integer or
/// is beyond its mode's size, a value that is not a number, no entries at
/// all when no shape is given); [`FormatError::TooLarge`] past
/// [`MAX_ENTRIES`] entries.
pub fn parse_tns_with_shape(bytes: &[u8], path: &Path, shape: Option<&[usize]>) -> Result<CoordinateList<f64>> {
    parse(bytes, path, shape, 0)
}

/// [`parse_tns_with_shape`] into values of type `V`: `f64`, or `i64` or
/// `i32` exactly.
///
/// Errors: those of [`parse_tns_with_shape`], and a [`FormatError::Parse`]
/// with the line for a value with a fraction or beyond the type's range.
///
/// ```
/// use tessera_formats::io::parse_tns_as;
/// let text = b"1 1 -9223372036854775808\n2 3 4.0\n";
/// let list = parse_tns_as::<i64>(text, "t.tns".as_ref(), None).unwrap();
/// assert_eq!(list.values(), &[i64::MIN, 4]);
/// let err = parse_tns_as::<i32>(text, "t.tns".as_ref(), None).unwrap_err().to_string();
/// assert!(err.starts_with("t.tns:1: the value `-9223372036854775808` is beyond the range of i32"), "{err}");
/// ```
pub fn parse_tns_as<V: FileValue>(bytes: &[u8], path: &Path, shape: Option<&[usize]>) -> Result<CoordinateList<V>> {
    parse(bytes, path, shape, 0)
}

/// Parses `bytes`, reserving room for `expected` entries as far as the file
/// could hold them.
fn parse<V: FileValue>(
    bytes: &[u8],
    path: &Path,
    shape: Option<&[usize]>,
    expected: usize,
) -> Result<CoordinateList<V>> {
    let mut lines = Lines::new(bytes);
    let Some(first) = lines.next_content(b'#') else {
        return match shape {
            Some(shape) => Ok(CoordinateList::new(shape)),
            None => Err(parse_error(
                path,
                lines.next_number(),
                "expected an entry line `coordinates... value`, found the end of the file \
                 (with no entries the order is unknown: give the shape, e.g. in a .dims sidecar)",
            )),
        };
    };
    let tokens = count_tokens(first.text);
    // A content line holds a token.
    let order = tokens - 1;
    let layout = EntryLayout {
        tokens,
        first_line: first.number,
    };
    if let Some(shape) = shape {
        if shape.len() != order {
            return Err(parse_error(
                path,
                first.number,
                format!(
                    "expected {} tokens ({} coordinates, as the shape {shape:?} has, and a value), found {tokens}",
                    shape.len() + 1,
                    shape.len()
                ),
            ));
        }
    }
    // The largest coordinate each mode may have, 1-based.
    let limits: Vec<u64> = match shape {
        Some(shape) => shape.iter().map(|&d| d as u64).collect(),
        None => vec![MAX_DIMENSION as u64; order],
    };
    let reserve = expected.min(bytes.len() / (2 * tokens));
    let mut entries = Entries {
        coords: Vec::with_capacity(reserve * order),
        values: Vec::with_capacity(reserve),
        largest: shape.is_none().then(|| vec![0; order]),
    };
    let mut entry = vec![0u64; order];
    let mut pending = Some(first);
    loop {
        let line = match pending.take() {
            Some(line) => line,
            None => match lines.next_plain(&mut entry, true) {
                Some(plain) => {
                    let in_range = entry.iter().zip(&limits).all(|(&c, &l)| c >= 1 && c <= l);
                    if let (true, Ok(value)) = (in_range, V::parse(plain.value, MtxField::Real)) {
                        entry.iter_mut().for_each(|c| *c -= 1);
                        entries.push(&entry, value, path, plain.line.number)?;
                        continue;
                    }
                    // Not a valid entry: the slow path says why.
                    plain.line
                }
                None => match lines.next() {
                    Some(line) => line,
                    None => break,
                },
            },
        };
        if !is_content(line.text, b'#') {
            continue;
        }
        let value = parse_entry(line.text, &limits, &layout, &mut entry)
            .map_err(|reason| parse_error(path, line.number, reason))?;
        entries.push(&entry, value, path, line.number)?;
    }
    let shape = match (shape, entries.largest) {
        (Some(shape), _) => shape.to_vec(),
        // Each within `MAX_DIMENSION` by the limits.
        (None, largest) => largest.unwrap_or_default().iter().map(|&l| l as usize).collect(),
    };
    Ok(CoordinateList::from_raw_parts(shape, entries.coords, entries.values))
}

/// The entries read so far.
struct Entries<V> {
    coords: Vec<u64>,
    values: Vec<V>,
    /// The largest coordinate (1-based) of each mode, when the shape is
    /// to be found.
    largest: Option<Vec<u64>>,
}

impl<V> Entries<V> {
    #[inline]
    fn push(&mut self, entry: &[u64], value: V, path: &Path, line: usize) -> Result<()> {
        if self.values.len() == MAX_ENTRIES {
            return Err(FormatError::TooLarge(format!(
                "{}:{line}: more than {MAX_ENTRIES} entries",
                path.display()
            )));
        }
        if let Some(largest) = &mut self.largest {
            for (l, &c) in largest.iter_mut().zip(entry) {
                *l = (*l).max(c + 1);
            }
        }
        self.coords.extend_from_slice(entry);
        self.values.push(value);
        Ok(())
    }
}

/// What the first entry line fixed.
struct EntryLayout {
    /// Coordinates and the value.
    tokens: usize,
    first_line: usize,
}

impl EntryLayout {
    fn wrong_count(&self, found: usize) -> String {
        format!(
            "expected {} tokens ({} coordinates and a value, as on line {}), found {found}",
            self.tokens,
            self.tokens - 1,
            self.first_line
        )
    }
}

/// One entry line: the 0-based coordinates into `entry`, and the value; or
/// why not.
fn parse_entry<V: FileValue>(
    text: &[u8],
    limits: &[u64],
    layout: &EntryLayout,
    entry: &mut [u64],
) -> Result<V, String> {
    let found = count_tokens(text);
    if found != layout.tokens {
        return Err(layout.wrong_count(found));
    }
    // As many tokens as asked for, counted above.
    let mut tokens = Tokens::new(text);
    for (mode, (c, &limit)) in entry.iter_mut().zip(limits).enumerate() {
        *c = parse_coordinate(tokens.next().unwrap_or_default(), mode, limit)?;
    }
    let token = tokens.next().unwrap_or_default();
    V::parse(token, MtxField::Real).map_err(|refusal| {
        refusal_text::<V>(refusal, token, || {
            format!("expected a real value after the coordinates, found {}", show(token))
        })
    })
}

/// A 1-based coordinate of `mode`, at most `limit`, made 0-based.
#[inline]
fn parse_coordinate(token: &[u8], mode: usize, limit: u64) -> Result<u64, String> {
    match parse_u64(token) {
        Ok(c) if c >= 1 && c <= limit => Ok(c - 1),
        Ok(c) if c > limit && limit == MAX_DIMENSION as u64 => Err(format!(
            "the mode-{mode} coordinate {c} is too large (the largest size tessera stores is {limit})"
        )),
        Ok(c) if c > limit => Err(format!(
            "the mode-{mode} coordinate {c} is beyond the mode's size {limit}"
        )),
        Err(IntError::Overflow) => Err(format!("the mode-{mode} coordinate {} is too large", show(token))),
        _ => Err(format!(
            "expected the mode-{mode} coordinate, a positive integer (coordinates are 1-based), found {}",
            show(token)
        )),
    }
}

/// A `.dims` sidecar as read.
struct Dims {
    path: PathBuf,
    shape: Vec<usize>,
    /// The entry count and the line that gave it.
    entries: Option<(usize, usize)>,
}

/// The sidecar of a `.tns` file: `<stem>.dims` beside it.
fn dims_path(tns: &Path) -> Option<PathBuf> {
    // `a.tns.gz` has its shape in `a.dims`, as `a.tns` does.
    let dims = super::text::without_gzip(tns).with_extension("dims");
    (dims != tns).then_some(dims)
}

fn read_dims(tns: &Path) -> Result<Option<Dims>> {
    let Some(path) = dims_path(tns) else {
        return Ok(None);
    };
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(&path, &e)),
    };
    let mut lines = Lines::new(&bytes);
    let mut shape = Vec::new();
    if let Some(line) = lines.next() {
        for token in Tokens::new(line.text) {
            let size = parse_u64(token)
                .ok()
                .and_then(|d| usize::try_from(d).ok())
                .filter(|&d| d <= MAX_DIMENSION)
                .ok_or_else(|| {
                    parse_error(
                        &path,
                        line.number,
                        format!(
                            "expected the size of each mode (non-negative integers up to {MAX_DIMENSION}), found {}",
                            show(token)
                        ),
                    )
                })?;
            shape.push(size);
        }
    }
    let entries = lines.next().and_then(|line| {
        let mut tokens = Tokens::new(line.text);
        match (tokens.next(), tokens.next()) {
            (Some(token), None) => parse_u64(token)
                .ok()
                .and_then(|n| usize::try_from(n).ok())
                .map(|n| (n, line.number)),
            _ => None,
        }
    });
    Ok(Some(Dims { path, shape, entries }))
}

/// Writes a tensor of any order to a FROSTT file (its nonzeros, sorted, one
/// line each: 1-based coordinates, then the value; an order-0 tensor is one
/// line holding its value), and its shape to the `<stem>.dims` sidecar
/// beside it (the sizes, then the number of entry lines).
///
/// Values are written so that they read back the same: `f64` values in the
/// shortest form that does, `i64` and `i32` values as integers.
///
/// Errors: [`FormatError::Io`] when writing fails, or when `path` ends in
/// `.dims` (the sidecar's name).
pub fn write_tns<V: FileValue>(path: impl AsRef<Path>, tensor: &Tensor<V>) -> Result<()> {
    let path = path.as_ref();
    let Some(dims) = dims_path(path) else {
        return Err(FormatError::Io {
            path: path.to_path_buf(),
            reason: "a .tns file cannot be named .dims: that is the name of its shape sidecar".into(),
        });
    };
    let written = Written::of(tensor)?;
    super::replace::replace_file(path, |w| written.write(BufWriter::new(w)))?;
    let sizes: Vec<String> = tensor.shape().iter().map(usize::to_string).collect();
    let sidecar = format!("{}\n{}\n", sizes.join(" "), written.lines());
    super::replace::replace_file(&dims, |w| w.write_all(sidecar.as_bytes()))
}

/// The entry lines of [`write_tns`] to any writer (buffered here), without
/// the sidecar; I/O errors name the path `<writer>`.
///
/// ```
/// use tessera_formats::io::write_tns_to;
/// use tessera_formats::Tensor;
/// let x = Tensor::from_dense(&[3], vec![i64::MIN, 0, 5]).unwrap();
/// let mut written = Vec::new();
/// write_tns_to(&mut written, &x).unwrap();
/// assert_eq!(written, b"1 -9223372036854775808\n3 5\n");
/// ```
pub fn write_tns_to<W: Write + ?Sized, V: FileValue>(writer: &mut W, tensor: &Tensor<V>) -> Result<()> {
    Written::of(tensor)?
        .write(BufWriter::new(writer))
        .map_err(|e| io_error(Path::new("<writer>"), &e))
}

/// What a tensor is written as.
enum Written<V> {
    /// An order-0 tensor: its value.
    Scalar(V),
    Nonzeros(CoordinateList<V>),
}

impl<V: FileValue> Written<V> {
    fn of(tensor: &Tensor<V>) -> Result<Written<V>> {
        tensor.check_zero_fill(".tns files")?;
        Ok(if tensor.order() == 0 {
            let value = tensor.to_dense_vec()?.first().copied().unwrap_or_default();
            Written::Scalar(value)
        } else {
            Written::Nonzeros(tensor.to_coordinates())
        })
    }

    fn lines(&self) -> usize {
        match self {
            Written::Scalar(_) => 1,
            Written::Nonzeros(list) => list.len(),
        }
    }

    fn write<W: Write>(&self, mut w: BufWriter<W>) -> io::Result<()> {
        match self {
            Written::Scalar(value) => {
                value.write_text(&mut w)?;
                w.write_all(b"\n")?;
            }
            Written::Nonzeros(list) => {
                for (coords, value) in list.iter() {
                    for c in coords {
                        write!(w, "{} ", c + 1)?;
                    }
                    value.write_text(&mut w)?;
                    w.write_all(b"\n")?;
                }
            }
        }
        w.flush()
    }
}
