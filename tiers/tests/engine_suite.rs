//! The engine's own differential suite (`engine/tests/suite/differential.rs`:
//! every kernel of its scope over many format combinations, random
//! contents of every awkward kind, compared with the dense reference) run
//! on the Cranelift tier: the suite's `run` takes its engine from
//! `crate::suite_engine`, which here compiles every kernel before its
//! first run. Any compilation failure fails the test (the kernel would
//! otherwise be interpreted silently): among them a program that names a
//! level function its level lacks, which only the compiler, translating
//! every path, would meet.

#[path = "../../engine/tests/suite/differential.rs"]
mod suite;

#[path = "../../engine/tests/suite/schedules.rs"]
mod schedules;

#[path = "../../engine/tests/suite/functions.rs"]
mod functions;

#[path = "../../engine/tests/suite/fills.rs"]
mod fills;

#[path = "../../engine/tests/suite/operators.rs"]
mod operators;

#[path = "../../engine/tests/suite/value_types.rs"]
mod value_types;

#[path = "../../engine/tests/suite/complex_values.rs"]
mod complex_values;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tessera_engine::runtime::{CompileRequest, CompiledKernel, PromotionPolicy, Tier};
use tessera_engine::Engine;
use tessera_tiers::cranelift::is_typed_values_refusal;
use tessera_tiers::CraneliftTier;

/// The Cranelift tier, recording failures; when the suite's engine drops
/// it, any failure fails the test.
struct Strict {
    inner: CraneliftTier,
    compiled: AtomicUsize,
    /// Kernels left to the interpreter because an op reads f32 or bool
    /// values the jit reads only in loads and dot products (documented).
    typed_fallbacks: AtomicUsize,
    failures: Mutex<Vec<String>>,
}

impl Tier for Strict {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn compile(&self, request: &CompileRequest) -> Result<Arc<dyn CompiledKernel>, String> {
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.inner.compile(request)))
            .unwrap_or_else(|p| {
                let what = p
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                Err(format!("the compiler panicked: {what}"))
            });
        match &result {
            Ok(_) => {
                self.compiled.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) if !request.signature.all_f64() && is_typed_values_refusal(e) => {
                self.typed_fallbacks.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => self.failures.lock().unwrap_or_else(|e| e.into_inner()).push(e.clone()),
        }
        result
    }
}

impl Drop for Strict {
    fn drop(&mut self) {
        eprintln!(
            "the jit compiled {} kernels ({} with f32 or bool inputs interpreted)",
            self.compiled.load(Ordering::Relaxed),
            self.typed_fallbacks.load(Ordering::Relaxed)
        );
        let failures = self.failures.get_mut().unwrap_or_else(|e| e.into_inner());
        if !failures.is_empty() && !std::thread::panicking() {
            panic!(
                "the jit could not compile {} kernels:\n{}",
                failures.len(),
                failures.join("\n")
            );
        }
    }
}

/// An engine whose every kernel is compiled by Cranelift before it runs.
pub(crate) fn suite_engine() -> Engine {
    let tier = Strict {
        inner: CraneliftTier::new().expect("Cranelift supports this host"),
        compiled: AtomicUsize::new(0),
        typed_fallbacks: AtomicUsize::new(0),
        failures: Mutex::new(Vec::new()),
    };
    Engine::new()
        .with_tier(Arc::new(tier))
        .with_promotion(PromotionPolicy::EAGER)
}
