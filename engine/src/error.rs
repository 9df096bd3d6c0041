//! The one error type of `tessera-engine`.

use tessera_formats::FormatError;

/// Everything that can go wrong between a statement's text and its result.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum EngineError {
    /// The statement's text does not parse. `column` is 1-based.
    #[error("column {column}: {message}")]
    Syntax { column: usize, message: String },

    /// A schedule whose text does not parse, or whose command cannot apply
    /// to the statement. `column` is 1-based, in the schedule's text (0 for
    /// a schedule built in Rust).
    #[error("schedule, column {column}: {message}")]
    Schedule { column: usize, message: String },

    /// A tensor named in the statement was not given.
    #[error("column {column}: unknown tensor {name}")]
    UnknownTensor { name: String, column: usize },

    /// A tensor accessed with the wrong number of index variables.
    #[error("column {column}: {tensor} has order {expected} but is accessed with {found} index variables")]
    OrderMismatch {
        tensor: String,
        expected: usize,
        found: usize,
        column: usize,
    },

    /// One index variable used in one access twice (`A(i,i)`).
    #[error("column {column}: index variable {var} appears twice in the access of {tensor}")]
    RepeatedIndex { var: String, tensor: String, column: usize },

    /// An index variable that indexes modes of different sizes.
    #[error("index variable {var} has size {first_size} in {first} but size {second_size} in {second}")]
    SizeMismatch {
        var: String,
        first: String,
        first_size: usize,
        second: String,
        second_size: usize,
    },

    /// A run whose inputs break a schedule's `bound`.
    #[error("{command} does not hold for these inputs: {var} has {size} coordinates")]
    BoundBroken { command: String, var: String, size: usize },

    /// An index variable whose size no input fixes and the caller did not give.
    #[error("the size of index variable {var} is unknown: no input fixes it, give it explicitly")]
    UnknownSize { var: String },

    /// A format that cannot hold the result, or a format/tensor disagreement.
    #[error("{0}")]
    Format(#[from] FormatError),

    /// Operands of different value types meet without a cast, or an
    /// operation is given a type it does not take.
    #[error("column {column}: {message}")]
    Type { column: usize, message: String },

    /// Something the engine refuses with a reason (never a silently different answer).
    #[error("{0}")]
    Unsupported(String),

    /// A kernel run on tensors other than those it was compiled for.
    #[error("kernel mismatch: {0}")]
    KernelMismatch(String),

    /// The run was cancelled through its [`CancelToken`](crate::runtime::CancelToken).
    #[error("interrupted")]
    Cancelled,

    /// A fault of tessera's own, caught before it gave a wrong answer.
    #[error("internal error (a bug in tessera; please report it with the statement): {0}")]
    Internal(String),
}

impl EngineError {
    /// The 1-based column of the statement the error points at, if any.
    pub fn column(&self) -> Option<usize> {
        match self {
            EngineError::Syntax { column, .. }
            | EngineError::UnknownTensor { column, .. }
            | EngineError::OrderMismatch { column, .. }
            | EngineError::RepeatedIndex { column, .. } => Some(*column),
            _ => None,
        }
    }

    /// The error with the statement's text below it and, when the error
    /// points at a column, a caret under that column.
    ///
    /// ```
    /// use tessera_engine::{Engine, Inputs};
    ///
    /// let statement = "y(i) = A(i,j) * x(j)";
    /// let err = Engine::new().eval(statement, &Inputs::new()).unwrap_err();
    /// assert_eq!(
    ///     err.in_statement(statement),
    ///     "column 8: unknown tensor A\n  y(i) = A(i,j) * x(j)\n         ^"
    /// );
    /// ```
    pub fn in_statement(&self, statement: &str) -> String {
        let mut text = format!("{self}\n  {statement}");
        if let Some(column) = self.column() {
            // Columns count characters; the caret lines up under them.
            let before = statement.chars().take(column.saturating_sub(1)).count();
            text.push_str(&format!("\n  {}^", " ".repeat(before)));
        }
        text
    }
}

/// Result alias used throughout `tessera-engine`.
pub type Result<T, E = EngineError> = std::result::Result<T, E>;
