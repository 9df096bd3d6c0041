//! tessera's engine: index notation → concrete index notation → merge
//! lattices → plans → bytecode → the interpreter, plus the kernel cache.
//!
//! The pipeline reads top to bottom: [`notation`] parses and checks
//! statements, [`cin`] lowers them to loops and temporaries, [`lattice`]
//! builds merge lattices, [`plan`] chooses how each loop runs and emits
//! [`bytecode`], [`interp`] runs it, and [`runtime`] holds the [`Engine`],
//! its kernel cache and the output assembly. [`reference`](mod@reference) is the dense
//! evaluator every tier is tested against.

//!
//! # Meaning of absent entries
//!
//! An entry a sparse tensor does not store is zero, and zero annihilates a
//! product: `A(i,j) * x(j)` is zero wherever `A` stores nothing, even where
//! `x(j)` is infinite or NaN (as in scipy, MKL and TACO). Sums and
//! differences combine what either side stores. Division follows the dense
//! meaning everywhere (`b(i) / c(i)` is NaN or infinite where `c(i)` is
//! zero, stored or not), so a quotient is computed at every coordinate.

pub mod block_ops;
pub mod bytecode;
pub mod cin;
pub mod error;
pub mod interp;
pub mod lattice;
pub mod notation;
pub mod plan;
pub mod reference;
pub mod reorder;
pub mod runtime;
pub mod schedule;
pub mod testing;
pub mod words;

pub use error::{EngineError, Result};
pub use runtime::{default_output_format, Engine, EvalOptions, Inputs, Kernel};
