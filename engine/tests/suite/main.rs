//! tessera-engine's integration tests, built as one binary (as a binary
//! each, every file linked the crate and instantiated its generic code
//! again). Each module is one concern, named as the file it was; `cargo
//! test -p tessera-engine --test suite schedules::` runs one.
//!
//! The differential tables (`differential`, `schedules`, `functions`,
//! `fills`, `operators`, `value_types`, `complex_values`, and
//! `random_statements`) run on [`suite_engine`], the interpreter here.
//! The compiled tiers' suites (`tiers/tests/engine_suite.rs`,
//! `tiers/tests/opencl_suite.rs`) include those files as modules and give
//! their own `suite_engine` and `RANDOM_STATEMENT_SEEDS` at their roots.

mod block_ops;
mod complex_values;
mod conversion_cache;
mod default_output;
mod default_schedules;
mod differential;
mod errors;
mod fills;
mod functions;
mod fuzz_regressions;
mod notation;
mod operators;
mod parallel;
mod random_statements;
mod reference;
mod reorder;
mod scheduled_plans;
mod schedules;
mod structured_plans;
mod value_types;

use tessera_engine::Engine;

/// The engine the differential tables run on: the interpreter.
pub(crate) fn suite_engine() -> Engine {
    Engine::new()
}

/// The random statements a run checks when `TESSERA_SEEDS` does not say.
pub(crate) const RANDOM_STATEMENT_SEEDS: std::ops::Range<u64> = 0..2000;
