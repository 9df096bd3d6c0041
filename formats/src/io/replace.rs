//! Writing a file so that an interrupted write never destroys the file it
//! replaces: the new contents go to a temporary file beside it, which is
//! renamed over the old one only once complete (a rename within one
//! directory is atomic). A process killed mid-write leaves the old file
//! intact, and at worst a stray `.NAME.tessera-*` file beside it.

use std::fs::File;
use std::path::Path;

use crate::error::{FormatError, Result};

/// Writes `path` through `fill` (which flushes what it buffers), replacing
/// it only when `fill` succeeds.
pub(crate) fn replace_file(path: &Path, fill: impl FnOnce(&File) -> std::io::Result<()>) -> Result<()> {
    let io_error = |e: std::io::Error| FormatError::Io {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = tempfile::Builder::new()
        .prefix(&format!(".{name}.tessera-"))
        .tempfile_in(dir)
        .map_err(io_error)?;
    fill(temp.as_file()).map_err(io_error)?;
    temp.persist(path).map_err(|e| io_error(e.error))?;
    Ok(())
}
