//! The engine's own differential suites (`engine/tests/suite/`: every kernel
//! of their scope over many format combinations and random contents of
//! every awkward kind, compared with the dense reference) run on the
//! OpenCL tier, as `engine_suite.rs` runs them on Cranelift. Every kernel
//! is compiled for the device before its first run, with no Cranelift tier
//! behind it: a kernel the device fails to build or run fails the test.
//! The kernels the tier does not map to a device (`opencl::unmapped`:
//! calls of user-defined operators) are interpreted instead and
//! counted; the count is printed with `--nocapture`. The random
//! statements run here too: seeds 0 to 99, or those `TESSERA_SEEDS` names.
//!
//! A CPU device builds about one kernel a second, and the whole suite
//! builds some thousands. So the suite builds for the device each
//! engine's first kernel (so every test runs one there) and one kernel in
//! 16 of the rest, chosen by a hash of the kernel (its bytecode, formats
//! and index widths): the sample is the same on every run and spreads over
//! every test, and CI's cold device cache builds it within its time. The
//! others run interpreted, still checked against the reference.
//! `TESSERA_OPENCL_ONE_IN=N` builds one in `N` instead:
//! `TESSERA_OPENCL_ONE_IN=1` every kernel.
#![cfg(feature = "opencl")]

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

#[path = "../../engine/tests/suite/random_statements.rs"]
mod random_statements;

#[path = "../../engine/tests/suite/value_types.rs"]
mod value_types;

#[path = "../../engine/tests/suite/complex_values.rs"]
mod complex_values;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tessera_engine::runtime::{CompileRequest, CompiledKernel, PromotionPolicy, Tier};
use tessera_engine::testing::Rng;
use tessera_engine::Engine;
use tessera_tiers::opencl::{unmapped, OpenClTier};

/// The OpenCL tier, recording failures; when the suite's engine drops it,
/// any failure fails the test.
struct Strict {
    inner: OpenClTier,
    compiled: AtomicUsize,
    unmapped: AtomicUsize,
    /// Build one kernel in this many (`TESSERA_OPENCL_ONE_IN`).
    one_in: u64,
    /// Compilations asked for: the first is always built.
    requests: AtomicUsize,
    sampled_out: AtomicUsize,
    failures: Mutex<Vec<String>>,
}

/// The random statements this suite runs when `TESSERA_SEEDS` does not say.
pub(crate) const RANDOM_STATEMENT_SEEDS: std::ops::Range<u64> = 0..100;

/// `TESSERA_OPENCL_ONE_IN`, or 16.
fn one_in_from_env() -> u64 {
    match std::env::var("TESSERA_OPENCL_ONE_IN") {
        Ok(text) => match text.trim().parse::<u64>() {
            Ok(n) if n >= 1 => n,
            _ => panic!("TESSERA_OPENCL_ONE_IN={text}: expected a whole number from 1 up"),
        },
        Err(_) => 16,
    }
}

/// A hash of what the device would build from `request`, the same on every
/// run: the testing module's generator seeded by the kernel's text.
fn kernel_hash(request: &CompileRequest) -> u64 {
    let text = format!("{}{:?}{:?}", request.program, request.formats, request.signature);
    Rng::from_bytes(text.as_bytes()).next_u64()
}

impl Tier for Strict {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn compile(&self, request: &CompileRequest) -> Result<Arc<dyn CompiledKernel>, String> {
        let first = self.requests.fetch_add(1, Ordering::Relaxed) == 0;
        if !first && kernel_hash(request) % self.one_in != 0 {
            self.sampled_out.fetch_add(1, Ordering::Relaxed);
            return Err(format!(
                "left out of the sample (TESSERA_OPENCL_ONE_IN={})",
                self.one_in
            ));
        }
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
            "opencl: {} kernels built for the device, {} not mapped, {} left out of the sample (interpreted)",
            self.compiled.load(Ordering::Relaxed),
            self.unmapped.load(Ordering::Relaxed),
            self.sampled_out.load(Ordering::Relaxed)
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
        one_in: one_in_from_env(),
        requests: AtomicUsize::new(0),
        sampled_out: AtomicUsize::new(0),
        failures: Mutex::new(Vec::new()),
    };
    Engine::new()
        .with_tier(Arc::new(tier))
        .with_promotion(PromotionPolicy::EAGER)
}
