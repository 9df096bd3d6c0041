//! Differential testing support: random tensors, formats and statements,
//! and a driver that runs the engine and the dense
//! [`reference`](crate::reference) on the same inputs and compares.
//!
//! Everything is deterministic: generators draw from [`Rng`], seeded by a
//! `u64` (or bytes, for a fuzzer), so a failure is reproduced by its seed.
//! The engine's own suites (`engine/tests/suite/differential.rs`,
//! `random_statements.rs`) use it; so can other tiers, by running their
//! kernels through [`compare`].
//!
//! ```
//! use tessera_engine::testing::{check_statement, random_tensor, EntryKind, Rng};
//! use tessera_engine::Engine;
//! use tessera_formats::Format;
//!
//! let mut rng = Rng::new(1);
//! let a = random_tensor(&mut rng, &[5, 4], EntryKind::Skewed, &Format::csc()).unwrap();
//! let x = random_tensor(&mut rng, &[4], EntryKind::Full, &Format::dense(1)).unwrap();
//! let engine = Engine::new();
//! check_statement(&engine, "y(i) = A(i,j) * x(j)", &[("A", &a), ("x", &x)], Some(&Format::sparse_vector()), &[])
//!     .unwrap();
//! ```

mod formats;
mod operators;
mod rng;
mod statements;
mod tensors;

pub use formats::{
    is_all_dense, mode_orders, named_formats, output_formats, random_composition, random_format, random_mode_order,
};
pub use operators::random_operators;
pub use rng::Rng;
pub use statements::{
    cast_where_numbers_are_needed, random_statement, RandomStatement, StatementConfig, TensorSpec, EXACT_FUNCTIONS,
    SAFE_FUNCTIONS,
};
pub use tensors::{random_entries, random_shape, random_tensor, random_value, rotated_tensors, EntryKind};

use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};

use tessera_formats::{Format, Tensor};

use crate::notation::parse_statement;
use crate::reference::{evaluate, DenseResult};
use crate::runtime::{Engine, EvalOptions, Inputs};
use crate::schedule::Schedule;

/// The seeds a randomized suite runs: `default`, or the range `first..end`
/// given in the environment variable `var` (to rerun or extend a run).
pub fn seeds_from_env(var: &str, default: std::ops::Range<u64>) -> std::ops::Range<u64> {
    std::env::var(var)
        .ok()
        .and_then(|s| {
            let (a, b) = s.split_once("..")?;
            Some(a.trim().parse().ok()?..b.trim().parse().ok()?)
        })
        .unwrap_or(default)
}

/// How close an engine value must be to the reference's: within
/// `absolute`, or within `relative` of the larger magnitude. NaN equals
/// NaN; infinities must match exactly.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    pub relative: f64,
    pub absolute: f64,
}

impl Default for Tolerance {
    /// `1e-9` relative, `1e-12` absolute: room for summation order only.
    fn default() -> Self {
        Tolerance {
            relative: 1e-9,
            absolute: 1e-12,
        }
    }
}

impl Tolerance {
    /// Whether `got` and `want` agree.
    pub fn accepts(&self, got: f64, want: f64) -> bool {
        if got.is_nan() || want.is_nan() {
            return got.is_nan() && want.is_nan();
        }
        if got.is_infinite() || want.is_infinite() {
            return got == want;
        }
        let diff = (got - want).abs();
        diff <= self.absolute || diff <= self.relative * got.abs().max(want.abs())
    }
}

/// Compares an engine result with the reference's: same shape, every
/// component within `tol`. The error names the first differing coordinate
/// (row-major order) and how many differ.
///
/// ```
/// use tessera_engine::reference::DenseResult;
/// use tessera_engine::testing::{compare, Tolerance};
/// use tessera_formats::Tensor;
/// let got = Tensor::from_dense(&[2], vec![1.0, f64::NAN]).unwrap();
/// let want = DenseResult { shape: vec![2], values: vec![1.0 + 1e-12, f64::NAN] };
/// assert!(compare(&got, &want, Tolerance::default()).is_ok());
/// let want = DenseResult { shape: vec![2], values: vec![2.0, f64::NAN] };
/// assert!(compare(&got, &want, Tolerance::default()).unwrap_err().contains("(0)"));
/// ```
pub fn compare(engine_result: &Tensor<f64>, reference: &DenseResult, tol: Tolerance) -> Result<(), String> {
    if engine_result.shape() != reference.shape.as_slice() {
        return Err(format!(
            "the result has shape {:?}, the reference {:?}",
            engine_result.shape(),
            reference.shape
        ));
    }
    let got = engine_result
        .to_dense_vec()
        .map_err(|e| format!("the result cannot be read densely: {e}"))?;
    if got.len() != reference.values.len() {
        return Err(format!(
            "the result has {} components, the reference {}",
            got.len(),
            reference.values.len()
        ));
    }
    let bad: Vec<usize> = (0..got.len())
        .filter(|&k| !tol.accepts(got[k], reference.values[k]))
        .collect();
    let Some(&first) = bad.first() else {
        return Ok(());
    };
    let coords = unflatten(first, &reference.shape);
    Err(format!(
        "{} of {} components differ; first at ({}): engine {:?}, reference {:?}",
        bad.len(),
        got.len(),
        coords.iter().map(usize::to_string).collect::<Vec<_>>().join(","),
        got[first],
        reference.values[first]
    ))
}

fn unflatten(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut out = vec![0; shape.len()];
    for (c, &d) in out.iter_mut().zip(shape).rev() {
        *c = flat % d;
        flat /= d;
    }
    out
}

/// Runs `statement` through `engine.eval_with` (output in `output_format`,
/// or the default) and through [`reference::evaluate`](evaluate), and
/// compares them with the default [`Tolerance`]. Also checks that the
/// result is in the requested format. A panic inside the engine is caught
/// and reported as a failure.
///
/// The error reads: the statement, each input's name, format, shape and
/// stored count, the output format, the sizes, and what differed.
pub fn check_statement(
    engine: &Engine,
    statement: &str,
    inputs: &[(&str, &Tensor<f64>)],
    output_format: Option<&Format>,
    sizes: &[(&str, usize)],
) -> Result<(), String> {
    check_statement_with(engine, statement, inputs, output_format, sizes, Tolerance::default())
}

/// [`check_statement`] with a tolerance.
pub fn check_statement_with(
    engine: &Engine,
    statement: &str,
    inputs: &[(&str, &Tensor<f64>)],
    output_format: Option<&Format>,
    sizes: &[(&str, usize)],
    tol: Tolerance,
) -> Result<(), String> {
    check_scheduled(engine, statement, inputs, output_format, sizes, tol, &Schedule::new())
}

/// [`check_statement_with`] for the kernel compiled with `schedule`: its
/// result must match the dense reference, whatever the schedule, and give
/// the same bits on any number of threads.
pub fn check_scheduled(
    engine: &Engine,
    statement: &str,
    inputs: &[(&str, &Tensor<f64>)],
    output_format: Option<&Format>,
    sizes: &[(&str, usize)],
    tol: Tolerance,
    schedule: &Schedule,
) -> Result<(), String> {
    let fail = |what: String| {
        Err(format!(
            "{}\n  {what}",
            describe(statement, inputs, output_format, sizes)
        ))
    };
    let stmt = match parse_statement(statement) {
        Ok(s) => s,
        Err(e) => return fail(format!("the statement does not parse: {e}")),
    };
    let reference = match evaluate(&stmt, inputs, sizes) {
        Ok(r) => r,
        Err(e) => return fail(format!("the reference refuses it: {e}")),
    };
    let mut engine_inputs = Inputs::new();
    for (name, t) in inputs {
        engine_inputs.insert(name, t);
    }
    let options = EvalOptions {
        output_format: output_format.cloned(),
        sizes: sizes.iter().map(|(v, n)| (v.to_string(), *n)).collect(),
        schedule: schedule.clone(),
        ..EvalOptions::default()
    };
    let eval = |options: &EvalOptions| {
        let run = catch_unwind(AssertUnwindSafe(|| {
            engine.eval_with(statement, &engine_inputs, options)
        }));
        match run {
            Ok(Ok(t)) => Ok(t),
            Ok(Err(e)) => Err(format!("the engine refuses it: {e}")),
            Err(panic) => {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "(no message)".into());
                Err(format!("the engine panicked: {message}"))
            }
        }
    };
    let result = match eval(&options) {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    if let Some(f) = output_format {
        if result.format().levels() != f.levels() {
            return fail(format!("the result is stored as {}, not {f}", result.format()));
        }
    }
    // Kernels build results unchecked: their arrays must hold what the
    // format claims (a coordinate twice in a unique level reads densely
    // as the sum, and would pass the comparison below).
    let (levels, values) = result.clone().into_storage();
    if let Err(e) = Tensor::from_parts(result.shape(), result.format().clone(), levels, values) {
        return fail(format!("the result's arrays break its format: {e}"));
    }
    compare(&result, &reference, tol).or_else(fail)?;
    same_bits_for_any_thread_count(&eval, &options, &result).or_else(fail)
}

/// Work units per chunk in the thread checks: a chunk every few entries,
/// so small tensors split into many chunks, some of them without entries.
const TINY_CHUNKS: u64 = 3;

/// Checks the parallel contract on one statement: in tiny chunks, 2 and 7
/// threads give the bits one thread gives, and so do 7 threads in the
/// default chunks (against `result`, the default run).
fn same_bits_for_any_thread_count(
    eval: &dyn Fn(&EvalOptions) -> Result<Tensor<f64>, String>,
    options: &EvalOptions,
    result: &Tensor<f64>,
) -> Result<(), String> {
    let with = |threads: usize, chunk_work: Option<u64>| EvalOptions {
        threads: Some(threads),
        chunk_work,
        ..options.clone()
    };
    let one = eval(&with(1, Some(TINY_CHUNKS)))?;
    for threads in [2, 7] {
        let many = eval(&with(threads, Some(TINY_CHUNKS)))?;
        if let Some(difference) = bit_difference(&many, &one) {
            return Err(format!(
                "in chunks of {TINY_CHUNKS} entries, {threads} threads give other bits than one: {difference}"
            ));
        }
    }
    let default_chunks = eval(&with(7, None))?;
    if let Some(difference) = bit_difference(&default_chunks, result) {
        return Err(format!("7 threads give other bits than the default run: {difference}"));
    }
    Ok(())
}

/// Where `got` and `want` first differ in their arrays or value bits.
fn bit_difference(got: &Tensor<f64>, want: &Tensor<f64>) -> Option<String> {
    if got.shape() != want.shape() || got.format() != want.format() {
        return Some(format!(
            "{} {:?} vs {} {:?}",
            got.format(),
            got.shape(),
            want.format(),
            want.shape()
        ));
    }
    if let Some(k) = (0..got.levels().len()).find(|&k| got.level(k) != want.level(k)) {
        return Some(format!("level {k}: {:?} vs {:?}", got.level(k), want.level(k)));
    }
    let values = got.values().iter().zip(want.values());
    match values.enumerate().find(|(_, (x, y))| x.to_bits() != y.to_bits()) {
        Some((p, (x, y))) => Some(format!("value {p}: {x:?} vs {y:?}")),
        None if got.values().len() != want.values().len() => {
            Some(format!("{} values vs {}", got.values().len(), want.values().len()))
        }
        None => None,
    }
}

/// Whether two tensors are the same arrays and the same value bits.
pub fn same_bits(a: &Tensor<f64>, b: &Tensor<f64>) -> bool {
    bit_difference(a, b).is_none()
}

/// The context line of a failure.
fn describe(
    statement: &str,
    inputs: &[(&str, &Tensor<f64>)],
    output_format: Option<&Format>,
    sizes: &[(&str, usize)],
) -> String {
    let mut s = format!("`{statement}`");
    for (name, t) in inputs {
        let _ = write!(s, "; {name}: {} {:?} ({} stored)", t.format(), t.shape(), t.stored());
    }
    match output_format {
        Some(f) => {
            let _ = write!(s, "; output {f}");
        }
        None => s.push_str("; default output"),
    }
    if !sizes.is_empty() {
        let _ = write!(s, "; sizes {sizes:?}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerance_accepts_rounding_and_nan_but_not_errors() {
        let t = Tolerance::default();
        assert!(t.accepts(1.0, 1.0 + 1e-13));
        assert!(t.accepts(f64::NAN, f64::NAN));
        assert!(t.accepts(0.0, -0.0));
        assert!(t.accepts(f64::INFINITY, f64::INFINITY));
        assert!(!t.accepts(f64::INFINITY, f64::NEG_INFINITY));
        assert!(!t.accepts(1.0, f64::NAN));
        assert!(!t.accepts(1.0, 1.001));
    }

    #[test]
    fn a_wrong_result_names_the_first_differing_coordinate() {
        let got = Tensor::from_dense(&[2, 2], vec![1.0, 2.0, 3.0, 4.0]).unwrap();
        let want = DenseResult {
            shape: vec![2, 2],
            values: vec![1.0, 2.0, 3.5, 4.5],
        };
        let err = compare(&got, &want, Tolerance::default()).unwrap_err();
        assert!(err.contains("2 of 4") && err.contains("(1,0)"), "{err}");
    }

    #[test]
    fn the_driver_reports_statement_formats_and_shapes() {
        let a = Tensor::from_dense(&[2], vec![1.0, 2.0]).unwrap();
        let err = check_statement(&Engine::new(), "y(i) = A(i)", &[("B", &a)], None, &[]).unwrap_err();
        assert!(err.contains("y(i) = A(i)") && err.contains("B: dense [2]"), "{err}");
    }
}
