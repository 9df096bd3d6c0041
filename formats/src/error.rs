//! The one error type of `tessera-formats`: every failure says what and where.

use std::path::PathBuf;

/// Everything that can go wrong while describing, building, converting or
/// reading a tensor.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum FormatError {
    /// A format that cannot encode the tensor it is asked to hold.
    #[error("format {format}: {reason}")]
    BadFormat { format: String, reason: String },

    /// A tensor's raw arrays break an invariant of their level.
    #[error("invalid tensor: level {level} ({kind}): {reason}")]
    InvalidLevel {
        level: usize,
        kind: &'static str,
        reason: String,
    },

    /// Shapes, orders or lengths that do not agree.
    #[error("shape mismatch: {0}")]
    Shape(String),

    /// A coordinate outside its dimension.
    #[error("coordinate {coordinate} of entry {entry} is out of range for mode {mode} of size {size}")]
    CoordinateOutOfRange {
        entry: usize,
        mode: usize,
        coordinate: u64,
        size: usize,
    },

    /// Raw arrays handed over by a caller (CSR or CSC arrays, another
    /// crate's matrix) that do not describe a tensor: which layout, and the
    /// first array element at fault.
    #[error("invalid {layout} arrays: {reason}")]
    Arrays { layout: &'static str, reason: String },

    /// A request that would need more memory than tessera will allocate.
    #[error("refusing to allocate: {0}")]
    TooLarge(String),

    /// A malformed file, with the file and line it was found on.
    #[error("{}:{line}: {reason}", path.display())]
    Parse { path: PathBuf, line: usize, reason: String },

    /// An I/O failure on a file.
    #[error("{}: {reason}", path.display())]
    Io { path: PathBuf, reason: String },

    /// A binsparse file that cannot be read as a tensor, or a tensor that
    /// cannot be written as one, with the reason.
    #[error("{}: binsparse: {reason}", path.display())]
    Binsparse { path: PathBuf, reason: String },
}

impl FormatError {
    pub(crate) fn level(level: usize, kind: &'static str, reason: impl Into<String>) -> Self {
        FormatError::InvalidLevel {
            level,
            kind,
            reason: reason.into(),
        }
    }
}

/// Result alias used throughout `tessera-formats`.
pub type Result<T, E = FormatError> = std::result::Result<T, E>;
