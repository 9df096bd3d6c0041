//! Writing a file so that an interrupted write never destroys the file it
//! replaces: the new contents go to a temporary file beside it, which is
//! renamed over the old one only once complete (a rename within one
//! directory is atomic). A process killed mid-write leaves the old file
//! intact, and at worst a stray `.NAME.tessera-*` file beside it.

use std::io::Write;
use std::path::Path;

use crate::error::{FormatError, Result};

/// Writes `path` through `fill` (which flushes what it buffers), replacing
/// it only when `fill` succeeds: what tessera's writers use, for any other
/// file a caller writes (a picture, say).
/// A path ending in `.gz` is written gzip-compressed.
///
/// Errors: [`FormatError::Io`] naming `path` when the temporary file cannot
/// be made, `fill` fails, or the rename fails.
pub fn replace_file(path: &Path, fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    let io_error = |e: std::io::Error| io_error(path, e);
    let temp = temporary_beside(path)?;
    let mut file = temp.as_file();
    if super::text::is_gzip(path) {
        let mut encoder = flate2::write::GzEncoder::new(&mut file, flate2::Compression::default());
        fill(&mut encoder).map_err(io_error)?;
        encoder.finish().map_err(io_error)?;
    } else {
        fill(&mut file).map_err(io_error)?;
    }
    temp.persist(path).map_err(|e| io_error(e.error))?;
    Ok(())
}

/// [`replace_file`] for writers that open the file by its path themselves
/// (HDF5): `fill` writes the temporary file at the path it is given, which
/// is renamed over `path` only when `fill` succeeds.
#[cfg_attr(not(feature = "binsparse"), allow(dead_code))]
pub(crate) fn replace_by_path(path: &Path, fill: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let temp = temporary_beside(path)?;
    fill(temp.path())?;
    temp.persist(path).map_err(|e| io_error(path, e.error))?;
    Ok(())
}

fn io_error(path: &Path, e: std::io::Error) -> FormatError {
    FormatError::Io {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
}

/// An empty temporary file in `path`'s directory, named after it, with the
/// permissions `path` has (or a new file's usual ones).
fn temporary_beside(path: &Path) -> Result<tempfile::NamedTempFile> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let prefix = format!(".{name}.tessera-");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix);
    // A temporary file is private; the file it becomes keeps the old one's
    // permissions, or gets the usual ones of a new file.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let permissions =
            std::fs::metadata(path).map_or_else(|_| std::fs::Permissions::from_mode(0o644), |m| m.permissions());
        builder.permissions(permissions);
    }
    builder.tempfile_in(dir).map_err(|e| io_error(path, e))
}
