//! FROSTT (`.tns`) files: tensors of any order as lines of 1-based
//! coordinates followed by a value, read into a [`CoordinateList`] (of
//! `f64` values, or of `i64` or `i32` values exactly: [`read_tns_as`]) and
//! written back.
//!
//! FROSTT has no complex values. Here a complex value
//! ([`Complex64`](num_complex::Complex64), `c64`) is written as two
//! numbers at the end of its line, the real part then the imaginary part
//! (`2 3 0.5 -1` is 0.5-1i at (2, 3)), and a file read as `Complex64` is
//! read that way: two numbers after the coordinates of each line, or one
//! (a real value, imaginary part 0) when the file's shape is known (from
//! the caller or the sidecar) and its lines have one token fewer. Without a
//! shape the order cannot tell the two apart, so each line of a file read
//! as `Complex64` then ends in a complex value. Files of other types never
//! hold complex values.
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
    count_tokens, io_error, is_content, parse_error, parse_real, parse_u64, read_file, show, IntError, Lines, Tokens,
};
use super::values::{complex_refusal_text, parse_tokens, refusal_text, FileValue};
use crate::coordinates::{CoordinateList, MAX_ENTRIES};
use crate::error::{FormatError, Result};
use crate::format::MAX_DIMENSION;
use crate::memory::with_capacity_on_huge_pages;
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
/// [`FileValue`]), or [`Complex64`](num_complex::Complex64), each value two
/// numbers (see the [module](self) on complex values).
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

/// Whether a FROSTT file holds complex values as written here: its
/// `.dims` sidecar gives the order, and its first entry line has two
/// numbers after the coordinates. Reads the sidecar and the file up to that
/// line only. Without a sidecar nothing tells, and the answer is `false`:
/// such a file is read as complex when asked ([`read_tns_as`]).
///
/// Errors: [`FormatError::Io`] when a file cannot be read; a
/// [`FormatError::Parse`] naming a malformed sidecar.
///
/// ```
/// use tessera_formats::io::{tns_is_complex, write_tns};
/// use tessera_formats::{Complex64, Tensor};
/// let dir = std::env::temp_dir().join(format!("tessera-doc-complex-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let z = Tensor::from_dense(&[2], vec![Complex64::new(1.0, 2.0), Complex64::new(0.0, -1.0)]).unwrap();
/// write_tns(dir.join("z.tns"), &z).unwrap();
/// assert!(tns_is_complex(dir.join("z.tns")).unwrap());
/// write_tns(dir.join("x.tns"), &Tensor::from_dense(&[2], vec![1.0, 2.0]).unwrap()).unwrap();
/// assert!(!tns_is_complex(dir.join("x.tns")).unwrap());
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn tns_is_complex(path: impl AsRef<Path>) -> Result<bool> {
    let path = path.as_ref();
    let Some(dims) = read_dims(path)? else {
        return Ok(false);
    };
    let first = super::text::first_line_where(path, |line| is_content(line, b'#'))?;
    Ok(first.is_some_and(|line| count_tokens(&line) == dims.shape.len() + 2))
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
/// `i32` exactly, or [`Complex64`](num_complex::Complex64) (two numbers a
/// value, or one when `shape` says the lines hold real values).
///
/// Errors: those of [`parse_tns_with_shape`], and a [`FormatError::Parse`]
/// with the line for a value with a fraction or beyond the type's range.
///
/// ```
/// use tessera_formats::io::parse_tns_as;
/// use tessera_formats::Complex64;
/// let text = b"1 1 -9223372036854775808\n2 3 4.0\n";
/// let list = parse_tns_as::<i64>(text, "t.tns".as_ref(), None).unwrap();
/// assert_eq!(list.values(), &[i64::MIN, 4]);
/// let err = parse_tns_as::<i32>(text, "t.tns".as_ref(), None).unwrap_err().to_string();
/// assert!(err.starts_with("t.tns:1: the value `-9223372036854775808` is beyond the range of i32"), "{err}");
///
/// // Complex: the real and imaginary parts after the coordinates.
/// let list = parse_tns_as::<Complex64>(b"1 2 0.5 -1\n", "z.tns".as_ref(), None).unwrap();
/// assert_eq!((list.shape(), list.values()), (&[1, 2][..], &[Complex64::new(0.5, -1.0)][..]));
/// // A real file of known shape, as complex values.
/// let list = parse_tns_as::<Complex64>(text, "t.tns".as_ref(), Some(&[2, 3])).unwrap();
/// assert_eq!(list.values()[1], Complex64::new(4.0, 0.0));
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
    let values = value_tokens::<V>(tokens, shape);
    // A content line holds a token; a complex one, two.
    let order = tokens - values;
    let layout = EntryLayout {
        tokens,
        values,
        first_line: first.number,
    };
    if let Some(shape) = shape {
        if shape.len() != order {
            return Err(parse_error(path, first.number, wrong_order::<V>(shape, tokens)));
        }
    }
    // The largest coordinate each mode may have, 1-based.
    let limits: Vec<u64> = match shape {
        Some(shape) => shape.iter().map(|&d| d as u64).collect(),
        None => vec![MAX_DIMENSION as u64; order],
    };
    let reserve = expected.min(bytes.len() / (2 * tokens));
    let mut entries = Entries {
        coords: with_capacity_on_huge_pages(reserve * order),
        values: with_capacity_on_huge_pages(reserve),
        largest: shape.is_none().then(|| vec![0; order]),
    };
    let mut entry = vec![0u64; order];
    let mut pending = Some(first);
    loop {
        let line = match pending.take() {
            Some(line) => line,
            None => match lines.next_plain(&mut entry, values) {
                Some(plain) => {
                    let in_range = entry.iter().zip(&limits).all(|(&c, &l)| c >= 1 && c <= l);
                    if let (true, Ok(value)) = (in_range, parse_tokens::<V>(plain.values, layout.field())) {
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

/// Value tokens on each line of a file whose first entry line holds
/// `tokens`: one, but for complex values two (one when `shape` says the
/// lines hold one value token, a real file read as complex).
fn value_tokens<V: FileValue>(tokens: usize, shape: Option<&[usize]>) -> usize {
    match shape {
        _ if !V::COMPLEX || tokens < 2 => 1,
        Some(shape) if tokens == shape.len() + 1 => 1,
        _ => 2,
    }
}

/// Why a first entry line of `tokens` does not fit `shape`.
#[cold]
fn wrong_order<V: FileValue>(shape: &[usize], tokens: usize) -> String {
    let (expected, value) = if V::COMPLEX {
        (
            format!("{} or {}", shape.len() + 2, shape.len() + 1),
            "a complex value (two numbers) or a real one",
        )
    } else {
        (format!("{}", shape.len() + 1), "a value")
    };
    let complex = if !V::COMPLEX && tokens == shape.len() + 2 {
        " (two numbers after the coordinates are a complex value, read as c64)"
    } else {
        ""
    };
    format!(
        "expected {expected} tokens ({} coordinates, as the shape {shape:?} has, and {value}), found {tokens}{complex}",
        shape.len()
    )
}

/// What the first entry line fixed.
struct EntryLayout {
    /// Coordinates and the value tokens.
    tokens: usize,
    /// Value tokens: 1, or 2 for a complex value.
    values: usize,
    first_line: usize,
}

impl EntryLayout {
    /// The field the value tokens are read as.
    fn field(&self) -> MtxField {
        if self.values == 2 {
            MtxField::Complex
        } else {
            MtxField::Real
        }
    }

    fn wrong_count(&self, found: usize) -> String {
        let value = if self.values == 2 {
            "a complex value, two numbers"
        } else {
            "a value"
        };
        format!(
            "expected {} tokens ({} coordinates and {value}, as on line {}), found {found}",
            self.tokens,
            self.tokens - self.values,
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
    let mut next = || tokens.next().unwrap_or_default();
    let last = entry.len().wrapping_sub(1);
    for (mode, (c, &limit)) in entry.iter_mut().zip(limits).enumerate() {
        let token = next();
        *c = parse_coordinate(token, mode, limit).map_err(|reason| {
            // A real part where the last coordinate was expected: the
            // line may end in a complex value.
            if mode == last && !V::COMPLEX && parse_real(token).is_some() {
                format!("{reason} (a line ending in a complex value, two numbers, is read as c64)")
            } else {
                reason
            }
        })?;
    }
    let values = [next(), next()];
    parse_tokens::<V>(values, layout.field()).map_err(|refusal| match layout.field() {
        MtxField::Complex => complex_refusal_text(values),
        _ => refusal_text::<V>(refusal, values[0], || {
            format!("expected a real value after the coordinates, found {}", show(values[0]))
        }),
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
/// shortest form that does, `i64` and `i32` values as integers, complex
/// values as two numbers, the real and the imaginary part (see the
/// [module](self)).
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
///
/// use tessera_formats::Complex64;
/// let z = Tensor::from_dense(&[2], vec![Complex64::new(0.0, 0.0), Complex64::new(1.5, -2.0)]).unwrap();
/// let mut written = Vec::new();
/// write_tns_to(&mut written, &z).unwrap();
/// assert_eq!(written, b"2 1.5 -2\n");
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
