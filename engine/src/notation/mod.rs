//! Index notation: the statement language, its IR and its semantics — the
//! first stage of the engine pipeline.
//!
//! Input: statement text (`y(i) = A(i,j) * x(j)`) or IR built in Rust.
//! Output: a checked [`Statement`] with explicit reductions and the size of
//! every index variable, which lowering to concrete index notation takes.
//!
//! - [`ir`]: the IR types, the building API and canonical printing;
//! - [`parse`]: text → IR, with column-accurate syntax errors;
//! - [`check`](mod@check): shapes and sizes ([`check()`]) and where sums go
//!   ([`place_reductions`]).

pub mod check;
pub mod complex;
pub mod func;
pub mod ir;
pub mod operator;
pub mod parse;
pub mod semiring;
pub mod types;

pub use check::{check, distinct_reductions, place_reductions, IndexSizes};
pub use func::{Annihilators, Func, IntOp, Reduction, FUNCTIONS, REDUCTIONS};
pub use ir::{Access, AssignOp, BinaryOp, Expr, IndexVar, Span, Statement, MAX_ORDER};
pub use operator::{register_operator, Operator, OperatorFn, Region, MAX_STAGED_ARITY};
pub use parse::{parse_statement, MAX_DEPTH};
pub use semiring::{Semiring, Times, SEMIRINGS};
