//! The engine's own differential suites (`engine/tests/*.rs`: every kernel
//! of their scope over many format combinations and random contents of
//! every awkward kind, compared with the dense reference) run on the
//! OpenCL tier, as `engine_suite.rs` runs them on Cranelift. Every kernel
//! is compiled for the device before its first run, with no Cranelift tier
//! behind it: a kernel the device fails to build or run fails the test.
//! The kernels the tier does not map to a device (`opencl::unmapped`:
//! calls of user-defined operators) are interpreted instead and
//! counted; the count is printed with `--nocapture`. The random
//! statements run here too (`TESSERA_SEEDS` chooses them: each builds a
//! kernel, and a CPU device builds a few a second).
#![cfg(feature = "opencl")]

#[path = "../../engine/tests/differential.rs"]
mod suite;

#[path = "../../engine/tests/schedules.rs"]
mod schedules;

#[path = "../../engine/tests/functions.rs"]
mod functions;

#[path = "../../engine/tests/fills.rs"]
mod fills;

#[path = "../../engine/tests/operators.rs"]
mod operators;

#[path = "../../engine/tests/random_statements.rs"]
mod random_statements;

#[path = "../../engine/tests/value_types.rs"]
mod value_types;

#[path = "../../engine/tests/complex_values.rs"]
mod complex_values;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tessera_engine::runtime::{CompileRequest, CompiledKernel, PromotionPolicy, Tier};
use tessera_engine::Engine;
use tessera_tiers::opencl::{unmapped, OpenClTier};

/// The OpenCL tier, recording failures; when the suite's engine drops it,
/// any failure fails the test.
struct Strict {
    inner: OpenClTier,
    compiled: AtomicUsize,
    unmapped: AtomicUsize,
    failures: Mutex<Vec<String>>,
}

impl Tier for Strict {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn compile(&self, request: &CompileRequest) -> Result<Arc<dyn CompiledKernel>, String> {
        let result = self.inner.compile(request);
        match &result {
            Ok(_) => {
                self.compiled.fetch_add(1, Ordering::Relaxed);
            }
            Err(_) if unmapped(&request.program).is_some() => {
                self.unmapped.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => self
                .failures
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(format!("{e}\n{}", request.program)),
        }
        result
    }
}

impl Drop for Strict {
    fn drop(&mut self) {
        eprintln!(
            "opencl: {} kernels built for the device, {} not mapped (interpreted)",
            self.compiled.load(Ordering::Relaxed),
            self.unmapped.load(Ordering::Relaxed)
        );
        let failures = self.failures.get_mut().unwrap_or_else(|e| e.into_inner());
        if !failures.is_empty() && !std::thread::panicking() {
            panic!(
                "the OpenCL tier could not compile {} kernels:\n{}",
                failures.len(),
                failures.join("\n")
            );
        }
    }
}

/// An engine whose every kernel is compiled by the OpenCL tier before it
/// runs.
pub(crate) fn suite_engine() -> Engine {
    let tier = Strict {
        inner: OpenClTier::new()
            .expect("an OpenCL device with double precision (PoCL provides one)")
            .without_fallback(),
        compiled: AtomicUsize::new(0),
        unmapped: AtomicUsize::new(0),
        failures: Mutex::new(Vec::new()),
    };
    Engine::new()
        .with_tier(Arc::new(tier))
        .with_promotion(PromotionPolicy::EAGER)
}
