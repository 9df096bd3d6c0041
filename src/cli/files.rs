//! Tensor files, chosen by extension: Matrix Market (`.mtx`, matrices and
//! vectors) and FROSTT (`.tns`, any order), either gzip-compressed under a
//! `.gz`, or `-` for standard input and output; and binsparse (`.h5`,
//! `.hdf5`, any order) in builds with the feature `binsparse`. Reading
//! gives the entries and the format that suits them (a binsparse file's
//! own); writing takes any tensor whose order the file kind holds. A
//! spinner shows while large files are read and packed.
//!
//! Values are read as `f64`, or as `i64` or `i32` exactly (`-t A:i64`):
//! integers beyond 2^53 are never rounded through `f64` on their way from
//! a file or to one. Complex values (`-t A:c64`) are read from a Matrix
//! Market `complex` file (also `hermitian`), or a `.tns` file holding two
//! numbers, real and imaginary parts, after each line's coordinates; any
//! other file read as `c64` has imaginary parts 0. They are written the
//! same ways (`complex` Matrix Market files); binsparse files here hold
//! real values only.

use std::path::Path;
use std::sync::{Mutex, PoisonError};

use tessera_formats::io::{self, FileValue, MtxField, MtxLayout};
use tessera_formats::typed::Typed;
use tessera_formats::{AnyTensor, Complex64, CoordinateList, Format, Tensor, TensorRef, ValueType};

use super::error::{CliError, Result};
use super::format_spec::FormatSpec;
use super::progress::Spinner;
use super::types::{exactly, from_f64, LARGEST_EXACT_INTEGER};

/// The file kinds tessera reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Mtx,
    Tns,
    /// `-`: standard input (either kind, told by its first line) or
    /// standard output (Matrix Market up to order 2, FROSTT beyond).
    Stream,
    /// A binsparse file in its HDF5 container.
    Binsparse,
}

/// The path that stands for standard input or output.
pub const STREAM: &str = "-";

impl FileKind {
    /// The kind named by `path`'s extension (under a `.gz`), or `-`.
    pub fn of(path: &Path, context: &str) -> Result<FileKind> {
        if path.as_os_str() == STREAM {
            return Ok(FileKind::Stream);
        }
        match io::without_gzip(path)
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("mtx") => Ok(FileKind::Mtx),
            Some("tns") => Ok(FileKind::Tns),
            Some("h5" | "hdf5") if io::without_gzip(path) != path => Err(CliError::bad(
                context,
                format!(
                    "{}: binsparse files are not gzip-compressed (HDF5 compresses its own arrays)",
                    path.display()
                ),
            )),
            Some("h5" | "hdf5") if cfg!(feature = "binsparse") => Ok(FileKind::Binsparse),
            Some("h5" | "hdf5") => Err(binsparse_unavailable(path, context)),
            _ => Err(CliError::UnknownExtension {
                context: context.to_string(),
                path: path.to_path_buf(),
            }),
        }
    }
}

/// A file's entries (of `f64` values, or of `V`: [`read_entries_as`]) and
/// what it said about them.
pub struct FileEntries<V = f64> {
    pub entries: CoordinateList<V>,
    /// Whether the file stores every value (a Matrix Market array).
    pub dense: bool,
    /// What kind of file it was, for `info` (`Matrix Market coordinate pattern general`).
    pub description: String,
    /// A Matrix Market file's field, symmetry and comments, to write the
    /// entries back with; `None` for FROSTT files.
    pub header: Option<io::MtxHeader>,
    /// The format a binsparse file stores its tensor in.
    pub stored_format: Option<Format>,
}

impl<V: FileValue> FileEntries<V> {
    /// The format a tensor read from this file gets when none is asked for:
    /// a binsparse file's own, dense for a dense file, else CSR for a
    /// matrix, a sparse vector for a vector, CSF beyond.
    pub fn natural_format(&self) -> Format {
        match &self.stored_format {
            Some(format) => format.clone(),
            None => natural_format(self.entries.order(), self.dense),
        }
    }
}

/// Whether `file`, read from `path` as `f64`, is a Matrix Market `integer`
/// file holding integers beyond 2^53, which `f64` rounded: commands that
/// copy a file's values (`convert`, `reorder`) read it again as `i64` to
/// keep them. (Standard input cannot be read again: there `-t i64` asks
/// for them.)
pub fn rounded_integers(file: &FileEntries, path: &Path) -> bool {
    let integer = file.header.as_ref().is_some_and(|h| h.field == MtxField::Integer);
    integer && path.as_os_str() != STREAM && file.entries.values().iter().any(|v| v.abs() > LARGEST_EXACT_INTEGER)
}

/// Whether the file at `path` holds complex values, told before it is
/// read: a Matrix Market file whose banner says `complex`, a FROSTT file
/// whose `.dims` sidecar shows two numbers a value
/// ([`io::tns_is_complex`]), standard input holding such a Matrix Market
/// file. Commands that take a file's values as they are (`convert`,
/// `reorder`, `info`) read such a file as `c64`; a session asks for it.
/// A file that cannot be read or has a bad banner is not complex here:
/// reading it says what is wrong.
pub fn holds_complex(path: &Path, context: &str) -> Result<bool> {
    Ok(match FileKind::of(path, context)? {
        FileKind::Mtx => io::mtx_field(path).is_ok_and(|f| f == MtxField::Complex),
        FileKind::Tns => io::tns_is_complex(path).unwrap_or(false),
        FileKind::Stream => peek_stdin(context, |bytes| {
            bytes.starts_with(b"%%MatrixMarket")
                && io::parse_mtx_field(bytes, Path::new(STDIN_NAME)).is_ok_and(|f| f == MtxField::Complex)
        })?,
        FileKind::Binsparse => false,
    })
}

/// Standard input in errors.
const STDIN_NAME: &str = "<stdin>";

/// Standard input once read and not yet parsed: a command may look at it
/// ([`holds_complex`]) before it reads it, and it can be read only once.
static STDIN: Mutex<Option<Vec<u8>>> = Mutex::new(None);

/// Calls `f` with the bytes of standard input, read whole the first time
/// and kept for [`take_stdin`].
fn peek_stdin<T>(context: &str, f: impl FnOnce(&[u8]) -> T) -> Result<T> {
    let mut kept = STDIN.lock().unwrap_or_else(PoisonError::into_inner);
    let bytes = match kept.take() {
        Some(bytes) => bytes,
        None => read_stdin(context)?,
    };
    let answer = f(&bytes);
    *kept = Some(bytes);
    Ok(answer)
}

/// The bytes of standard input: those [`peek_stdin`] kept, or read now.
fn take_stdin(context: &str) -> Result<Vec<u8>> {
    let kept = STDIN.lock().unwrap_or_else(PoisonError::into_inner).take();
    match kept {
        Some(bytes) => Ok(bytes),
        None => read_stdin(context),
    }
}

fn read_stdin(context: &str) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut bytes)
        .map_err(|e| CliError::bad(context, format!("reading standard input: {e}")))?;
    Ok(bytes)
}

/// Dense for dense data and scalars; CSR, sparse vector or CSF otherwise.
pub fn natural_format(order: usize, dense: bool) -> Format {
    if dense || order == 0 {
        return Format::dense(order);
    }
    match order {
        1 => Format::sparse_vector(),
        2 => Format::csr(),
        n => Format::csf(n),
    }
}

/// Reads the entries of a `.mtx` or `.tns` file; `context` names the option
/// or command in errors.
pub fn read_entries(path: &Path, context: &str) -> Result<FileEntries> {
    read_entries_as(path, context)
}

/// [`read_entries`] with the values read as `V`: `f64`, or `i64` or `i32`
/// exactly, or `c64`; a value `V` does not hold (a fraction, one beyond
/// its range) is an error naming the file and line (for a binsparse file,
/// whose values are read as `f64`, the value and its coordinates).
pub fn read_entries_as<V: FileValue + Typed>(path: &Path, context: &str) -> Result<FileEntries<V>> {
    let kind = FileKind::of(path, context)?;
    let file_error = |source| CliError::File {
        context: context.to_string(),
        source,
    };
    let mtx_entries = |file: io::MtxFile<V>| FileEntries {
        dense: file.layout == MtxLayout::Array,
        description: format!("Matrix Market {} {} {}", file.layout, file.field, file.symmetry),
        header: Some(file.header()),
        entries: file.entries,
        stored_format: None,
    };
    let tns_entries = |entries: CoordinateList<V>| FileEntries {
        dense: false,
        description: format!("FROSTT, order {}", entries.order()),
        header: None,
        entries,
        stored_format: None,
    };
    match kind {
        FileKind::Stream => {
            let bytes = take_stdin(context)?;
            let name = Path::new(STDIN_NAME);
            if bytes.starts_with(b"%%MatrixMarket") {
                Ok(mtx_entries(io::parse_mtx_as(&bytes, name).map_err(file_error)?))
            } else {
                Ok(tns_entries(io::parse_tns_as(&bytes, name, None).map_err(file_error)?))
            }
        }
        FileKind::Mtx => Ok(mtx_entries(io::read_mtx_as(path).map_err(file_error)?)),
        FileKind::Tns => Ok(tns_entries(io::read_tns_as(path).map_err(file_error)?)),
        FileKind::Binsparse => {
            let (tensor, description) = read_binsparse(path, context)?;
            let tensor = exactly::<V>(&tensor).map_err(|reason| in_file(path, context, reason))?;
            Ok(FileEntries {
                dense: tensor.format().is_dense(),
                description,
                header: None,
                entries: tensor.to_coordinates(),
                stored_format: Some(tensor.format().clone()),
            })
        }
    }
}

/// A binsparse file's tensor, in the file's format, and its description.
#[cfg(feature = "binsparse")]
fn read_binsparse(path: &Path, context: &str) -> Result<(Tensor<f64>, String)> {
    let file = io::read_binsparse_file(path).map_err(|source| CliError::File {
        context: context.to_string(),
        source,
    })?;
    Ok((file.tensor, file.description))
}

#[cfg(not(feature = "binsparse"))]
fn read_binsparse(path: &Path, context: &str) -> Result<(Tensor<f64>, String)> {
    Err(binsparse_unavailable(path, context))
}

/// The error for a binsparse file in a build without them.
fn binsparse_unavailable(path: &Path, context: &str) -> CliError {
    CliError::bad(
        context,
        format!(
            "{} is a binsparse (HDF5) file, and this tessera was built without them: build it with `--features binsparse` (needs the HDF5 library, Debian: libhdf5-dev)",
            path.display()
        ),
    )
}

/// An error about the values of the file at `path`.
fn in_file(path: &Path, context: &str, reason: String) -> CliError {
    CliError::bad(context, format!("{}: {reason}", path.display()))
}

/// Reads a file as values of type `ty` and packs it into `spec` (or the
/// format that suits it); also says how the format was chosen. Errors name
/// `context`, or for the format, the option or command that asked for it.
///
/// `i64` and `i32` values are read exactly, and must be integers the type
/// holds; `c64` values as complex (a real file's with imaginary parts 0);
/// `f32` and `bool` values are read as `f64` and rounded (a pattern or
/// integer file read as `bool` keeps its nonzeros as true).
pub fn load(
    path: &Path,
    spec: Option<(&FormatSpec, &str)>,
    ty: ValueType,
    context: &str,
) -> Result<(AnyTensor, String)> {
    let bytes = std::fs::metadata(path).map_or(0, |m| m.len());
    let spinner = Spinner::for_file(format!("reading {}", path.display()), bytes);
    if FileKind::of(path, context)? == FileKind::Binsparse {
        let (tensor, why) = load_binsparse(path, spec, context, &spinner)?;
        let tensor = from_f64(tensor, ty).map_err(|reason| in_file(path, context, reason))?;
        return Ok((tensor, why));
    }
    match ty {
        ValueType::I64 => load_text::<i64>(path, spec, context, &spinner).map(|(t, why)| (t.into(), why)),
        ValueType::I32 => load_text::<i32>(path, spec, context, &spinner).map(|(t, why)| (t.into(), why)),
        ValueType::C64 => load_text::<Complex64>(path, spec, context, &spinner).map(|(t, why)| (t.into(), why)),
        other => load_text::<f64>(path, spec, context, &spinner).map(|(t, why)| (AnyTensor::narrowed(t, other), why)),
    }
}

/// [`load`] of a binsparse file, its values in `f64`.
fn load_binsparse(
    path: &Path,
    spec: Option<(&FormatSpec, &str)>,
    context: &str,
    spinner: &Spinner,
) -> Result<(Tensor<f64>, String)> {
    // Read in the file's own format, array for array; converted only
    // when another format is asked for.
    let (tensor, description) = read_binsparse(path, context)?;
    match spec {
        Some((spec, asked)) => {
            let format = resolve(spec, tensor.order(), asked)?;
            spinner.say(format!("converting {} to {format}", path.display()));
            let converted = tensor.convert(&format).map_err(|source| CliError::Format {
                context: format!("{context}: storing as {format}"),
                source,
            })?;
            Ok((
                converted,
                format!("read from {} ({description}), as asked", path.display()),
            ))
        }
        None => Ok((
            tensor,
            format!("read from {} ({description}), as the file stores it", path.display()),
        )),
    }
}

/// [`load`] of a Matrix Market or FROSTT file (or standard input), the
/// values read as `V`.
fn load_text<V: FileValue + Typed>(
    path: &Path,
    spec: Option<(&FormatSpec, &str)>,
    context: &str,
    spinner: &Spinner,
) -> Result<(Tensor<V>, String)> {
    let file = read_entries_as::<V>(path, context)?;
    let (format, why) = match spec {
        Some((spec, asked)) => (resolve(spec, file.entries.order(), asked)?, "as asked".to_string()),
        None => {
            let what = if file.dense {
                "a dense file"
            } else {
                match file.entries.order() {
                    0 => "a scalar",
                    1 => "a sparse vector",
                    2 => "a sparse matrix",
                    _ => "a sparse tensor",
                }
            };
            (file.natural_format(), format!("the default for {what}"))
        }
    };
    spinner.say(format!("packing {} into {format}", path.display()));
    let tensor = pack(&file.entries, format, context)?;
    Ok((tensor, format!("read from {}, {why}", path.display())))
}

/// `spec` for a tensor of `order` modes, errors naming `context` (the
/// option or command that asked for it).
pub fn resolve(spec: &FormatSpec, order: usize, context: &str) -> Result<Format> {
    spec.resolve(order).map_err(|reason| CliError::bad(context, reason))
}

/// Packs entries into `format`, errors naming `context`.
pub fn pack<V: FileValue>(entries: &CoordinateList<V>, format: Format, context: &str) -> Result<Tensor<V>> {
    let name = format.to_string();
    Tensor::pack(entries, format).map_err(|source| CliError::Format {
        context: format!("{context}: storing as {name}"),
        source,
    })
}

/// The header a tensor of type `ty` is written with to a Matrix Market
/// file when no file says otherwise: `integer general` for `i64` and `i32`
/// values, `complex general` for `c64`, `real general` for the others.
pub fn header_for(ty: ValueType) -> io::MtxHeader {
    let field = match ty {
        ValueType::I64 | ValueType::I32 => MtxField::Integer,
        ValueType::C64 => MtxField::Complex,
        ValueType::F64 | ValueType::F32 | ValueType::Bool => MtxField::Real,
    };
    io::MtxHeader {
        field,
        ..io::MtxHeader::default()
    }
}

/// `header` as far as `tensor`'s data allows it ([`io::MtxHeader::fitted`]);
/// integer values get the `integer` field where `header` says `real`, as
/// their type says what they are (as `c64` values always get `complex`).
pub fn fitted(header: &io::MtxHeader, tensor: TensorRef<'_>) -> io::MtxHeader {
    let mut header = header.clone();
    if tensor.value_type().is_integer() && header.field == MtxField::Real {
        header.field = MtxField::Integer;
    }
    match tensor {
        TensorRef::F64(t) => header.fitted(t),
        TensorRef::I64(t) => header.fitted(t),
        TensorRef::I32(t) => header.fitted(t),
        TensorRef::C64(t) => header.fitted(t),
        other => header.fitted(&other.to_f64()),
    }
}

/// Writes `tensor` to a `.mtx` (order at most 2; `real general`, or
/// `integer general` for integer values, `complex general` for `c64`) or
/// `.tns` file.
pub fn write(path: &Path, tensor: TensorRef<'_>, context: &str) -> Result<()> {
    write_with(path, tensor, &header_for(tensor.value_type()), context)
}

/// [`write`], a Matrix Market file with the field, symmetry and comments
/// of `header` (which the data must allow: see [`io::MtxHeader::fitted`]).
/// `i64` and `i32` values are written exactly, `c64` values as their
/// real and imaginary parts (`complex` Matrix Market files; two numbers a
/// value in `.tns` files; refused for binsparse files, which hold real
/// values here); `f32` and `bool` values as the `f64` values they are.
pub fn write_with(path: &Path, tensor: TensorRef<'_>, header: &io::MtxHeader, context: &str) -> Result<()> {
    let kind = FileKind::of(path, context)?;
    match tensor {
        TensorRef::F64(t) => write_as(path, kind, t, header, context),
        TensorRef::I64(t) => write_as(path, kind, t, header, context),
        TensorRef::I32(t) => write_as(path, kind, t, header, context),
        TensorRef::C64(_) if kind == FileKind::Binsparse => Err(in_file(
            path,
            context,
            "binsparse files hold real values here: write c64 values to a .mtx or .tns file".into(),
        )),
        TensorRef::C64(t) => write_as(path, kind, t, header, context),
        other => write_as(path, kind, &other.to_f64(), header, context),
    }
}

/// [`write_with`] of a tensor of `V` values to a file of `kind`.
fn write_as<V: FileValue>(
    path: &Path,
    kind: FileKind,
    tensor: &Tensor<V>,
    header: &io::MtxHeader,
    context: &str,
) -> Result<()> {
    let result = match kind {
        FileKind::Stream => {
            // Written whole, then handed to standard output, so that a
            // reader that stops early (`| head`) ends the command quietly.
            let mut text = Vec::new();
            let written = if tensor.order() <= 2 {
                io::write_mtx_to_with(&mut text, tensor, header)
            } else {
                io::write_tns_to(&mut text, tensor)
            };
            if written.is_ok() {
                let mut out = std::io::stdout().lock();
                std::io::Write::write_all(&mut out, &text)?;
                std::io::Write::flush(&mut out)?;
            }
            written
        }
        FileKind::Mtx => {
            if tensor.order() > 2 {
                return Err(CliError::bad(
                    context,
                    format!(
                        "Matrix Market files hold matrices and vectors, the tensor has order {}: write a .tns file",
                        tensor.order()
                    ),
                ));
            }
            io::write_mtx_with(path, tensor, header)
        }
        FileKind::Tns => io::write_tns(path, tensor),
        FileKind::Binsparse => {
            let values = in_f64(tensor).map_err(|reason| in_file(path, context, reason))?;
            write_binsparse(path, &values)
        }
    };
    result.map_err(|source| CliError::File {
        context: context.to_string(),
        source,
    })
}

/// The tensor with its values in `f64`, which binsparse files hold here:
/// refused when one would be rounded (an `i64` beyond 2^53).
fn in_f64<V: FileValue>(tensor: &Tensor<V>) -> std::result::Result<Tensor<f64>, String> {
    // A value is exact in `f64` when it comes back from it (NaN, which is
    // not equal to itself, is an `f64` already).
    let rounded = tensor
        .values()
        .iter()
        .map(|&v| (v, v.to_f64()))
        .find(|&(v, f)| !f.is_nan() && V::from_real(f) != Some(v));
    match rounded {
        Some((v, _)) => Err(format!(
            "the value {v} is not exact in float64, the values binsparse files hold here: write a .mtx or .tns file"
        )),
        None => Ok(tensor.map_values(tessera_formats::Value::to_f64)),
    }
}

/// Writes a binsparse file: the tensor's arrays as they are, or, for a
/// format binsparse cannot store (DIA, ELL, BCSR, hashed), the tensor
/// converted to the format a file of its kind reads into.
#[cfg(feature = "binsparse")]
fn write_binsparse(path: &Path, tensor: &Tensor<f64>) -> tessera_formats::Result<()> {
    if io::binsparse_can_store(tensor.format()) {
        return io::write_binsparse(path, tensor);
    }
    let format = natural_format(tensor.order(), tensor.format().is_dense());
    io::write_binsparse(path, &tensor.convert(&format)?)
}

#[cfg(not(feature = "binsparse"))]
fn write_binsparse(path: &Path, _: &Tensor<f64>) -> tessera_formats::Result<()> {
    Err(tessera_formats::FormatError::Io {
        path: path.to_path_buf(),
        reason: "this tessera was built without binsparse files (`--features binsparse`)".into(),
    })
}
