//! The `differential` property: a well-formed statement over tensors in
//! any formats gives, on every tier, the dense reference's result (to a
//! floating-point tolerance), in the requested format, as a valid tensor;
//! and every tier stores the same structure. A refusal, a panic or a
//! compilation the JIT could not do is a failure too — except the one
//! documented refusal, a loop whose merge lattice exceeds the engine's
//! bound (`tessera::engine::lattice::MAX_POINTS`), when every tier refuses
//! alike.
//!
//! The first byte chooses the generator: even, the byte-driven decoder of
//! [`super::generate`] (every later byte one decision); odd, the testing
//! module's seeded generators (`tessera::engine::testing`), seeded from the
//! remaining bytes — the same cases as the engine's `random_statements`
//! suite draws from its seeds.

use tessera::engine::notation::complex::split;
use tessera::engine::notation::{parse_statement, Statement};
use tessera::engine::reference::{evaluate_complex, evaluate_typed, DenseResult};
use tessera::engine::testing::{
    compare, output_formats, random_format, random_statement, random_tensor, EntryKind, Rng, StatementConfig, Tolerance,
};
use tessera::formats::{AnyTensor, Complex64, Format, Tensor};
use tessera::{EngineError, EvalOptions, Inputs, TierChoice};

use super::generate::{self, Case};
use super::source::Source;

/// Checks the case `data` decodes to.
pub fn check(data: &[u8]) -> Result<(), String> {
    let case = decode(data)?;
    check_case(&case)
}

/// The case `data` decodes to: by the byte-driven decoder when the first
/// byte is even, by the seeded generators otherwise.
pub fn decode(data: &[u8]) -> Result<Case, String> {
    let mut src = Source::new(data);
    if src.byte() & 1 == 0 {
        generate::case(&mut src)
    } else {
        seeded(&mut Rng::from_bytes(src.rest()))
    }
}

/// A case drawn by the testing module's generators, as the engine's
/// `random_statements` suite draws one.
pub fn seeded(rng: &mut Rng) -> Result<Case, String> {
    let stmt = random_statement(rng, &StatementConfig::default());
    let mut tensors = Vec::with_capacity(stmt.tensors.len());
    for spec in &stmt.tensors {
        let kind = if spec.divisor {
            EntryKind::Full
        } else {
            EntryKind::random(rng)
        };
        let format = random_format(rng, &spec.shape);
        tensors.push((
            spec.name.clone(),
            random_tensor(rng, &spec.shape, kind, &format)?.into(),
        ));
    }
    let output = if rng.percent(15) {
        None
    } else {
        Some(rng.pick(&output_formats(&stmt.output_shape)).clone())
    };
    Ok(Case {
        text: stmt.text,
        tensors,
        sizes: stmt.sizes,
        output,
    })
}

/// Runs `case` on every tier of [`tessera::engine()`] and on the dense
/// reference, and compares.
pub fn check_case(case: &Case) -> Result<(), String> {
    let fail = |what: String| Err(format!("{}\n  {what}", describe(case)));
    let stmt = match parse_statement(&case.text) {
        Ok(s) => s,
        Err(e) => return fail(format!("the statement does not parse: {e}")),
    };
    let reference = match reference_parts(case, &stmt) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let engine_inputs = engine_inputs(case);
    // A fresh engine per case: its kernel cache (and the JIT's code) is
    // freed with it.
    let engine = tessera::engine();
    let mut results: Vec<(String, Vec<Tensor<f64>>)> = Vec::new();
    let mut refusals: Vec<(String, EngineError)> = Vec::new();
    for tier in super::tiers(&engine) {
        let options = EvalOptions {
            output_format: case.output.clone(),
            sizes: case.sizes.clone(),
            tier: TierChoice::Named(tier.clone()),
            ..EvalOptions::default()
        };
        let run = super::catch(&format!("tier {tier}"), || {
            engine.eval_typed_with(&case.text, &engine_inputs, &options).map(parts)
        });
        let result = match run {
            Ok(Ok(t)) => t,
            Ok(Err(e)) if is_documented_refusal(&e) => {
                refusals.push((tier, e));
                continue;
            }
            Ok(Err(e)) => return fail(format!("tier {tier} refuses it: {e}")),
            Err(e) => return fail(e),
        };
        if result.len() != reference.len() {
            return fail(format!(
                "tier {tier}: {} parts of a result, the reference's {}",
                result.len(),
                reference.len()
            ));
        }
        for (part, want) in result.iter().zip(&reference) {
            if let Err(e) = check_result(part, want, case.output.as_ref(), case.tolerance()) {
                return fail(format!("tier {tier}: {e}"));
            }
        }
        // The parallel contract: in tiny chunks, 3 threads give one's bits.
        let in_chunks = |threads: usize| {
            let options = EvalOptions {
                threads: Some(threads),
                chunk_work: Some(2),
                ..options.clone()
            };
            super::catch(&format!("tier {tier} on {threads} threads"), || {
                engine.eval_typed_with(&case.text, &engine_inputs, &options).map(parts)
            })
        };
        let same_bits = |a: &[Tensor<f64>], b: &[Tensor<f64>]| {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| tessera::engine::testing::same_bits(a, b))
        };
        match (in_chunks(1), in_chunks(3)) {
            (Ok(Ok(one)), Ok(Ok(three))) if same_bits(&one, &three) => {}
            (Ok(Ok(_)), Ok(Ok(_))) => return fail(format!("tier {tier}: 3 threads give other bits than one")),
            (Err(e), _) | (_, Err(e)) => return fail(e),
            (Ok(Err(e)), _) | (_, Ok(Err(e))) => return fail(format!("tier {tier} in chunks refuses it: {e}")),
        }
        results.push((tier, result));
    }
    // A documented refusal is fine when every tier refuses alike.
    if let Some((first, e)) = refusals.first() {
        if !results.is_empty() || refusals.iter().any(|(_, other)| other != e) {
            return fail(format!("tier {first} refuses it ({e}), but not every tier alike"));
        }
        return Ok(());
    }
    // The jit leaves kernels whose block ops read f32 or bool values to
    // the interpreter, and a device leaves kernels calling a callback
    // operator to the jit, as documented.
    let typed = case.value_type() != tessera::formats::ValueType::F64;
    let diagnostics: Vec<_> = engine
        .diagnostics()
        .into_iter()
        .filter(|d| !(typed && tessera::tiers::cranelift::is_typed_values_refusal(&d.to_string())))
        .filter(|d| !tessera::tiers::is_callback_refusal(&d.to_string()))
        .collect();
    if !diagnostics.is_empty() {
        let all: Vec<String> = diagnostics.iter().map(|d| d.to_string()).collect();
        return fail(all.join("; "));
    }
    // Every tier assembles the same storage.
    if let Some(((first, a), rest)) = results.split_first() {
        for (tier, b) in rest {
            for (a, b) in a.iter().zip(b) {
                if let Err(e) = same_storage(a, b, case.tolerance()) {
                    return fail(format!("tiers {first} and {tier} store different results: {e}"));
                }
            }
        }
    }
    Ok(())
}

/// A result as real tensors: a complex one's real and imaginary parts, or
/// the result itself.
fn parts(result: AnyTensor) -> Vec<Tensor<f64>> {
    match result {
        AnyTensor::C64(z) => {
            let (re, im) = tessera::formats::typed::complex_parts(&z);
            vec![re, im]
        }
        other => vec![other.into_f64()],
    }
}

/// The dense reference's result of `case` as real parts ([`parts`]), or
/// why it has none.
fn reference_parts(case: &Case, stmt: &Statement) -> Result<Vec<DenseResult>, String> {
    let (inputs, sizes) = (case.inputs(), case.size_refs());
    let type_of = |name: &str| inputs.iter().find(|(n, _)| *n == name).map(|(_, t)| t.value_type());
    let Ok(Some(complex)) = split(stmt, &type_of) else {
        return reference(case, stmt).map(|r| vec![r]);
    };
    let gives_complex = complex.complex;
    let (shape, values) = match super::catch("the reference", || evaluate_complex(stmt, &inputs, &sizes)) {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => return Err(format!("the reference refuses it: {e}")),
        Err(e) => return Err(e),
    };
    let part = |f: fn(&Complex64) -> f64| DenseResult {
        shape: shape.clone(),
        values: values.iter().map(f).collect(),
    };
    Ok(match gives_complex {
        true => vec![part(|z| z.re), part(|z| z.im)],
        false => vec![part(|z| z.re)],
    })
}

/// The dense reference's result of `case`, or why it has none.
pub fn reference(case: &Case, stmt: &Statement) -> Result<DenseResult, String> {
    let (inputs, sizes) = (case.inputs(), case.size_refs());
    match super::catch("the reference", || evaluate_typed(stmt, &inputs, &sizes)) {
        Ok(Ok(r)) => Ok(r),
        Ok(Err(e)) => Err(format!("the reference refuses it: {e}")),
        Err(e) => Err(e),
    }
}

/// The case's tensors, by name, as the engine takes them.
pub fn engine_inputs(case: &Case) -> Inputs<'_> {
    let mut inputs = Inputs::new();
    for (name, t) in &case.tensors {
        inputs.insert_any(name, t);
    }
    inputs
}

/// Whether the engine may refuse a well-formed statement this way: a loop
/// whose merge lattice would exceed `lattice::MAX_POINTS` (eleven or more
/// sparse terms added in one loop) is refused rather than planned for
/// minutes.
pub fn is_documented_refusal(e: &EngineError) -> bool {
    matches!(e, EngineError::Unsupported(reason) if reason.contains("lattice points"))
}

/// The result is in the requested format, valid, and the reference's value.
pub fn check_result(
    result: &Tensor<f64>,
    reference: &DenseResult,
    output: Option<&Format>,
    tol: Tolerance,
) -> Result<(), String> {
    if let Some(f) = output {
        if result.format().levels() != f.levels() {
            return Err(format!("the result is stored as {}, not {f}", result.format()));
        }
    }
    // Validate the storage as a tensor built from raw parts would be.
    Tensor::from_parts(
        result.shape(),
        result.format().clone(),
        result.levels().to_vec(),
        result.values().to_vec(),
    )
    .map_err(|e| format!("the result is not a valid tensor: {e}"))?;
    compare(result, reference, tol)
}

/// The same levels and values (to tolerance; NaN equals NaN).
fn same_storage(a: &Tensor<f64>, b: &Tensor<f64>, tol: Tolerance) -> Result<(), String> {
    if a.format() != b.format() || a.levels() != b.levels() {
        return Err(format!("levels {:?} and {:?}", a.levels(), b.levels()));
    }
    if a.values().len() != b.values().len() {
        return Err(format!("{} and {} values", a.values().len(), b.values().len()));
    }
    match (0..a.values().len()).find(|&k| !tol.accepts(a.values()[k], b.values()[k])) {
        Some(k) => Err(format!("value {k}: {} and {}", a.values()[k], b.values()[k])),
        None => Ok(()),
    }
}

/// The statement, each input's format, shape and contents, the output
/// format and the sizes: enough to write the regression test.
pub fn describe(case: &Case) -> String {
    let mut s = format!("`{}`", case.text);
    for (name, t) in &case.tensors {
        let entries: Vec<String> = t
            .as_f64()
            .stored_entries()
            .iter()
            .map(|(c, v)| format!("{c:?}={v}"))
            .collect();
        s.push_str(&format!(
            "\n  {name}: {} {} {:?}, {} stored: {}",
            t.value_type(),
            t.format(),
            t.shape(),
            t.stored(),
            entries.join(" ")
        ));
    }
    match &case.output {
        Some(f) => s.push_str(&format!("\n  output {f}")),
        None => s.push_str("\n  default output"),
    }
    if !case.sizes.is_empty() {
        s.push_str(&format!("; sizes {:?}", case.sizes));
    }
    s
}
