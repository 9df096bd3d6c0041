//! The one error type of the `tessera` command.
//!
//! Every failure the command can meet — a bad option value, a file that
//! cannot be read, a statement the engine refuses, a tier this build lacks —
//! is a [`CliError`] whose message is one line saying what went wrong and
//! where (which option, which file and line, which column of the statement).
//! `main` prints it after `error: ` and exits non-zero.

use std::io;
use std::path::PathBuf;

use tessera_engine::EngineError;
use tessera_formats::FormatError;

/// Everything that can go wrong in the `tessera` command.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A value that does not parse or does not fit (`-f A:csrr`, `:gen x 10`).
    /// `context` names the option or command and its value.
    #[error("{context}: {reason}")]
    BadArgument { context: String, reason: String },

    /// A file that cannot be read or written, or is malformed; the source
    /// already names the file (and line).
    #[error("{}{source}", prefix(context))]
    File {
        context: String,
        #[source]
        source: FormatError,
    },

    /// A tensor that cannot be stored or converted as asked.
    #[error("{}{source}", prefix(context))]
    Format {
        context: String,
        #[source]
        source: FormatError,
    },

    /// A statement that does not parse, check or run; the source carries
    /// the column where the text is at fault.
    #[error("in `{statement}`: {source}{hint}")]
    Statement {
        statement: String,
        #[source]
        source: Box<EngineError>,
        /// Extra advice, starting with a separator (or empty).
        hint: String,
    },

    /// A tier that this build does not have.
    #[error("tier {0} is not available in this build (available: {1})")]
    TierUnavailable(&'static str, String),

    /// Something asked of a tier that this build cannot produce (`--print clif`).
    #[error("{0}")]
    Unavailable(String),

    /// Writing to standard output failed (a closed pipe is not reported).
    #[error("writing the output: {0}")]
    Stdout(#[from] io::Error),

    /// The REPL's line editor failed.
    #[error("line editor: {0}")]
    Editor(String),

    /// A path whose extension names no file format tessera reads or writes.
    #[error("{}{} has no .mtx, .tns or .h5 extension (tessera reads and writes Matrix Market .mtx, FROSTT .tns and binsparse .h5 files)", prefix(context), path.display())]
    UnknownExtension { context: String, path: PathBuf },
}

/// `context: `, or nothing for an empty context.
fn prefix(context: &str) -> String {
    if context.is_empty() {
        String::new()
    } else {
        format!("{context}: ")
    }
}

impl CliError {
    /// A [`CliError::BadArgument`].
    pub fn bad(context: impl Into<String>, reason: impl Into<String>) -> Self {
        CliError::BadArgument {
            context: context.into(),
            reason: reason.into(),
        }
    }

    /// Whether the error is standard output closing early (`tessera … | head`),
    /// which ends the command quietly.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, CliError::Stdout(e) if e.kind() == io::ErrorKind::BrokenPipe)
    }

    /// Whether a statement was interrupted (Ctrl-C in the REPL).
    pub fn is_interrupt(&self) -> bool {
        matches!(self, CliError::Statement { source, .. } if matches!(**source, EngineError::Cancelled))
    }
}

/// Result alias of the command.
pub type Result<T, E = CliError> = std::result::Result<T, E>;
