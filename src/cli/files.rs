//! Tensor files, chosen by extension: Matrix Market (`.mtx`, matrices and
//! vectors) and FROSTT (`.tns`, any order), either gzip-compressed under a
//! `.gz`, or `-` for standard input and output; and binsparse (`.h5`,
//! `.hdf5`, any order) in builds with the feature `binsparse`. Reading
//! gives the entries and the format that suits them (a binsparse file's
//! own); writing takes any tensor whose order the file kind holds. A
//! spinner shows while large files are read and packed.

use std::path::Path;

use tessera_formats::io::{self, MtxLayout};
use tessera_formats::{CoordinateList, Format, Tensor};

use super::error::{CliError, Result};
use super::format_spec::FormatSpec;
use super::progress::Spinner;

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

/// A file's entries and what it said about them.
pub struct FileEntries {
    pub entries: CoordinateList<f64>,
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

impl FileEntries {
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
    let kind = FileKind::of(path, context)?;
    let file_error = |source| CliError::File {
        context: context.to_string(),
        source,
    };
    let stdin = || -> Result<Vec<u8>> {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut bytes)
            .map_err(|e| CliError::bad(context, format!("reading standard input: {e}")))?;
        Ok(bytes)
    };
    let mtx_entries = |file: io::MtxFile| FileEntries {
        dense: file.layout == MtxLayout::Array,
        description: format!("Matrix Market {} {} {}", file.layout, file.field, file.symmetry),
        header: Some(file.header()),
        entries: file.entries,
        stored_format: None,
    };
    let tns_entries = |entries: CoordinateList<f64>| FileEntries {
        dense: false,
        description: format!("FROSTT, order {}", entries.order()),
        header: None,
        entries,
        stored_format: None,
    };
    match kind {
        FileKind::Stream => {
            let bytes = stdin()?;
            let name = Path::new("<stdin>");
            if bytes.starts_with(b"%%MatrixMarket") {
                Ok(mtx_entries(io::parse_mtx(&bytes, name).map_err(file_error)?))
            } else {
                Ok(tns_entries(io::parse_tns(&bytes, name).map_err(file_error)?))
            }
        }
        FileKind::Mtx => Ok(mtx_entries(io::read_mtx(path).map_err(file_error)?)),
        FileKind::Tns => Ok(tns_entries(io::read_tns(path).map_err(file_error)?)),
        FileKind::Binsparse => {
            let (tensor, description) = read_binsparse(path, context)?;
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

/// Reads a file and packs it into `spec` (or the format that suits it);
/// also says how the format was chosen. Errors name `context`, or for the
/// format, the option or command that asked for it.
pub fn load(path: &Path, spec: Option<(&FormatSpec, &str)>, context: &str) -> Result<(Tensor<f64>, String)> {
    let bytes = std::fs::metadata(path).map_or(0, |m| m.len());
    let spinner = Spinner::for_file(format!("reading {}", path.display()), bytes);
    if FileKind::of(path, context)? == FileKind::Binsparse {
        // Read in the file's own format, array for array; converted only
        // when another format is asked for.
        let (tensor, description) = read_binsparse(path, context)?;
        return match spec {
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
        };
    }
    let file = read_entries(path, context)?;
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
pub fn pack(entries: &CoordinateList<f64>, format: Format, context: &str) -> Result<Tensor<f64>> {
    let name = format.to_string();
    Tensor::pack(entries, format).map_err(|source| CliError::Format {
        context: format!("{context}: storing as {name}"),
        source,
    })
}

/// Writes `tensor` to a `.mtx` (order at most 2, `real general`) or `.tns` file.
pub fn write(path: &Path, tensor: &Tensor<f64>, context: &str) -> Result<()> {
    write_with(path, tensor, &io::MtxHeader::default(), context)
}

/// [`write`], a Matrix Market file with the field, symmetry and comments
/// of `header` (which the data must allow: see [`io::MtxHeader::fitted`]).
pub fn write_with(path: &Path, tensor: &Tensor<f64>, header: &io::MtxHeader, context: &str) -> Result<()> {
    let kind = FileKind::of(path, context)?;
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
        FileKind::Binsparse => write_binsparse(path, tensor),
    };
    result.map_err(|source| CliError::File {
        context: context.to_string(),
        source,
    })
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
