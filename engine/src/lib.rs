//! tessera's engine: index notation → concrete index notation → merge
//! lattices → plans → bytecode → the interpreter, plus the kernel cache.
//!
//! The pipeline reads top to bottom: [`notation`] parses and checks
//! statements, [`cin`] lowers them to loops and temporaries, [`lattice`]
//! builds merge lattices, [`plan`] chooses how each loop runs and emits
//! [`bytecode`], [`interp`] runs it, and [`runtime`] holds the [`Engine`],
//! its kernel cache and the output assembly. [`reference`](mod@reference) is the dense
//! evaluator every tier is tested against.

pub mod bytecode;
pub mod cin;
pub mod error;
pub mod interp;
pub mod lattice;
pub mod notation;
pub mod plan;
pub mod reference;
pub mod runtime;
pub mod testing;

pub use error::{EngineError, Result};
pub use runtime::{default_output_format, Engine, EvalOptions, Inputs, Kernel};
