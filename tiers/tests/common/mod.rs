//! Helpers shared by the tier suites: engines for each tier, and a check
//! that runs one statement on the interpreter and on the JIT and compares
//! both with the dense reference and with each other.

#![allow(dead_code)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use tessera_engine::notation::parse_statement;
use tessera_engine::reference::evaluate;
use tessera_engine::runtime::{PromotionPolicy, TierChoice};
use tessera_engine::testing::{compare, Tolerance};
use tessera_engine::{Engine, EvalOptions, Inputs};
use tessera_formats::{Format, Tensor};
use tessera_tiers::CraneliftTier;

/// An engine with the Cranelift tier that compiles every kernel before
/// its first run.
pub fn jit_engine() -> Engine {
    Engine::new()
        .with_tier(Arc::new(CraneliftTier::new().expect("Cranelift supports this host")))
        .with_promotion(PromotionPolicy::EAGER)
}

/// An engine with the Cranelift tier and a promotion policy.
pub fn promoting_engine(policy: PromotionPolicy) -> Engine {
    Engine::new()
        .with_tier(Arc::new(CraneliftTier::new().expect("Cranelift supports this host")))
        .with_promotion(policy)
}

fn options(output: Option<&Format>, sizes: &[(&str, usize)], tier: TierChoice) -> EvalOptions {
    EvalOptions {
        output_format: output.cloned(),
        sizes: sizes.iter().map(|(v, n)| (v.to_string(), *n)).collect(),
        tier,
        ..EvalOptions::default()
    }
}

/// How a case ended when it did not fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Both tiers ran it and agree with the reference and each other.
    Agreed,
    /// Both tiers refused it with the same error.
    Refused,
}

fn panic_message(panic: Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "(no message)".into())
}

/// Runs `statement` on the interpreter of `interp` and on the JIT of
/// `jit`; checks the JIT's result against the dense reference, and that
/// both tiers store the same structure with values equal to tolerance.
/// Statements the engine refuses must be refused by both tiers alike.
pub fn check_both_tiers(
    interp: &Engine,
    jit: &Engine,
    statement: &str,
    tensors: &[(&str, &Tensor<f64>)],
    output: Option<&Format>,
    sizes: &[(&str, usize)],
) -> Result<Outcome, String> {
    let describe = || {
        let mut s = format!("`{statement}`");
        for (n, t) in tensors {
            s.push_str(&format!("; {n}: {} {:?}", t.format(), t.shape()));
        }
        if let Some(f) = output {
            s.push_str(&format!("; output {f}"));
        }
        s
    };
    let mut inputs = Inputs::new();
    for (n, t) in tensors {
        inputs.insert(n, t);
    }
    let by_interp = catch_unwind(AssertUnwindSafe(|| {
        interp.eval_with(statement, &inputs, &options(output, sizes, TierChoice::Interpreter))
    }));
    let by_interp = match by_interp {
        Ok(r) => r,
        Err(panic) => {
            return Err(format!(
                "{}: the interpreter panicked: {}",
                describe(),
                panic_message(panic)
            ))
        }
    };
    let by_jit = catch_unwind(AssertUnwindSafe(|| {
        jit.eval_with(statement, &inputs, &options(output, sizes, TierChoice::Auto))
    }))
    .map_err(|panic| format!("{}: the jit panicked: {}", describe(), panic_message(panic)))?;
    let (by_interp, by_jit) = match (by_interp, by_jit) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(a), Err(b)) if a == b => return Ok(Outcome::Refused),
        (a, b) => {
            return Err(format!(
                "{}: the tiers disagree on refusing it: interpreter {:?}, jit {:?}",
                describe(),
                a.err(),
                b.err()
            ))
        }
    };
    let stmt = parse_statement(statement).map_err(|e| e.to_string())?;
    let reference = evaluate(&stmt, tensors, sizes).map_err(|e| format!("{}: reference: {e}", describe()))?;
    compare(&by_jit, &reference, Tolerance::default()).map_err(|e| format!("{}: jit vs reference: {e}", describe()))?;
    if by_jit.format() != by_interp.format() || by_jit.levels() != by_interp.levels() {
        return Err(format!("{}: the tiers store different structures", describe()));
    }
    let tol = Tolerance::default();
    if let Some(k) = (0..by_jit.values().len()).find(|&k| !tol.accepts(by_jit.values()[k], by_interp.values()[k])) {
        return Err(format!(
            "{}: value {k} differs: jit {}, interpreter {}",
            describe(),
            by_jit.values()[k],
            by_interp.values()[k]
        ));
    }
    Ok(Outcome::Agreed)
}

/// Counts outcomes of a suite and fails it at the end: on any failure
/// (a panic of either tier included), on a kernel the JIT engine could not
/// compile, or on a run it interpreted.
#[derive(Default)]
pub struct Tally {
    pub failures: Vec<String>,
    pub cases: usize,
    pub agreed: usize,
    pub refused: usize,
}

impl Tally {
    pub fn record(&mut self, label: &str, result: Result<Outcome, String>) {
        self.cases += 1;
        match result {
            Ok(Outcome::Agreed) => self.agreed += 1,
            Ok(Outcome::Refused) => self.refused += 1,
            Err(e) => self.failures.push(format!("{label}{e}")),
        }
    }

    pub fn finish(self, jit: &Engine) {
        eprintln!(
            "{} cases: {} agreed, {} refused by both tiers",
            self.cases, self.agreed, self.refused
        );
        assert!(
            self.failures.is_empty(),
            "{} of {} cases failed:\n{}",
            self.failures.len(),
            self.cases,
            self.failures.join("\n")
        );
        let stats = jit.stats();
        let diagnostics: Vec<String> = jit.diagnostics().into_iter().map(|d| d.to_string()).collect();
        assert!(
            diagnostics.is_empty(),
            "the jit could not compile {} kernels:\n{}",
            diagnostics.len(),
            diagnostics.join("\n")
        );
        assert_eq!(
            stats.interpreted_runs, 0,
            "every run of the jit engine is compiled: {stats:?}"
        );
        assert!(stats.runs as usize >= self.agreed, "{stats:?}");
    }
}
