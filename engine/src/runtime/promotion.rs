//! Promotion state of one kernel: run and work counters, the compiled
//! variants (one per tier and storage signature), compilations in flight,
//! and the failures reported so far.
//!
//! Compiled variants are published under a lock that runs only hold long
//! enough to clone an `Arc`: a background compilation swaps its kernel in
//! atomically while other threads keep interpreting, and the next run picks
//! it up. A failed compilation is recorded once per (tier, signature) and
//! never retried.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

use super::tier::{CompileRequest, CompiledKernel, KernelFallback, StorageSignature, Tier, TierDiagnostic};

/// Counters of one kernel, for diagnostics and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KernelStats {
    /// Runs so far, on any tier.
    pub runs: u64,
    /// Runs the interpreter served.
    pub interpreted_runs: u64,
    /// Runs a compiled tier served.
    pub compiled_runs: u64,
    /// Work of the interpreted runs (stored input values read).
    pub work: u64,
    /// Compiled variants available (one per tier and storage signature).
    pub compiled_variants: usize,
    /// Compilations in flight.
    pub compiling: usize,
    /// Runs split into more than one chunk ([`Parallelism`](super::Parallelism)).
    pub split_runs: u64,
    /// Chunks those runs were split into, in all.
    pub chunks: u64,
    /// The most threads a run was given.
    pub most_threads: usize,
}

struct Variant {
    tier: String,
    kernel: Arc<dyn CompiledKernel>,
}

#[derive(Default)]
struct Pending {
    compiling: Vec<(String, StorageSignature)>,
    failed: Vec<(String, StorageSignature)>,
    diagnostics: Vec<TierDiagnostic>,
}

pub(crate) struct Tiering {
    statement: String,
    runs: AtomicU64,
    interpreted: AtomicU64,
    compiled: AtomicU64,
    work: AtomicU64,
    split_runs: AtomicU64,
    chunks: AtomicU64,
    most_threads: std::sync::atomic::AtomicUsize,
    variants: RwLock<Vec<Variant>>,
    pending: Mutex<Pending>,
    idle: Condvar,
    /// The storage signature of the latest run.
    last: Mutex<Option<StorageSignature>>,
}

impl Tiering {
    pub fn new(statement: String) -> Self {
        Tiering {
            statement,
            runs: AtomicU64::new(0),
            interpreted: AtomicU64::new(0),
            compiled: AtomicU64::new(0),
            work: AtomicU64::new(0),
            split_runs: AtomicU64::new(0),
            chunks: AtomicU64::new(0),
            most_threads: Default::default(),
            variants: RwLock::new(Vec::new()),
            pending: Mutex::new(Pending::default()),
            idle: Condvar::new(),
            last: Mutex::new(None),
        }
    }

    fn pending(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A compiled variant for `signature`, of tier `tier` or of any tier.
    pub fn find(&self, tier: Option<&str>, signature: &StorageSignature) -> Option<Arc<dyn CompiledKernel>> {
        let variants = self.variants.read().unwrap_or_else(|e| e.into_inner());
        variants
            .iter()
            .find(|v| (tier.is_none() || tier == Some(v.tier.as_str())) && v.kernel.signature() == signature)
            .map(|v| v.kernel.clone())
    }

    /// Remembers the storage signature of a run.
    pub fn set_last(&self, signature: &StorageSignature) {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if last.as_ref() != Some(signature) {
            *last = Some(signature.clone());
        }
    }

    /// The storage signature of the latest run, if any.
    pub fn last(&self) -> Option<StorageSignature> {
        self.last.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Counts a run served by the interpreter; returns the totals of runs
    /// and work so far.
    pub fn count_interpreted(&self, work: u64) -> (u64, u64) {
        self.runs.fetch_add(1, Ordering::Relaxed);
        let runs = self.interpreted.fetch_add(1, Ordering::Relaxed) + 1;
        let work = self.work.fetch_add(work, Ordering::Relaxed).saturating_add(work);
        (runs, work)
    }

    /// Counts a run split into `chunks` chunks on `threads` threads.
    pub fn count_split(&self, chunks: usize, threads: usize) {
        if chunks > 1 {
            self.split_runs.fetch_add(1, Ordering::Relaxed);
            self.chunks.fetch_add(chunks as u64, Ordering::Relaxed);
            self.most_threads.fetch_max(threads, Ordering::Relaxed);
        }
    }

    pub fn count_compiled(&self) {
        self.runs.fetch_add(1, Ordering::Relaxed);
        self.compiled.fetch_add(1, Ordering::Relaxed);
    }

    /// Whether compiling `signature` with `tier` failed before.
    pub fn has_failed(&self, tier: &str, signature: &StorageSignature) -> bool {
        self.pending().failed.iter().any(|(t, s)| t == tier && s == signature)
    }

    /// Compiles now, on this thread; `None` when it fails (reported once).
    pub fn compile_now(&self, tier: &Arc<dyn Tier>, request: CompileRequest) -> Option<Arc<dyn CompiledKernel>> {
        let name = tier.name().to_string();
        if self.has_failed(&name, &request.signature) {
            return None;
        }
        let signature = request.signature.clone();
        let result = compile_caught(tier.as_ref(), &request);
        self.publish(name, signature, result)
    }

    /// Starts compiling on a background thread unless that compilation is
    /// already in flight or failed before.
    pub fn promote(self: &Arc<Self>, tier: Arc<dyn Tier>, request: CompileRequest) {
        let name = tier.name().to_string();
        {
            let mut pending = self.pending();
            let key = (name.clone(), request.signature.clone());
            if pending.compiling.contains(&key) || pending.failed.contains(&key) {
                return;
            }
            pending.compiling.push(key);
        }
        let this = Arc::clone(self);
        let signature = request.signature.clone();
        let spawned = std::thread::Builder::new()
            .name("tessera-compile".into())
            .spawn(move || {
                let result = compile_caught(tier.as_ref(), &request);
                this.publish(tier.name().to_string(), request.signature.clone(), result);
            });
        if let Err(e) = spawned {
            self.publish(
                name,
                signature,
                Err(format!("could not start a compilation thread: {e}")),
            );
        }
    }

    /// Records the outcome of a compilation and wakes waiters.
    fn publish(
        &self,
        tier: String,
        signature: StorageSignature,
        result: Result<Arc<dyn CompiledKernel>, String>,
    ) -> Option<Arc<dyn CompiledKernel>> {
        let mut pending = self.pending();
        pending.compiling.retain(|(t, s)| !(*t == tier && *s == signature));
        let out = match result {
            Ok(kernel) => {
                if let Some(fallback) = kernel.fallback() {
                    self.report_fallback(&mut pending, fallback);
                }
                let mut variants = self.variants.write().unwrap_or_else(|e| e.into_inner());
                if !variants
                    .iter()
                    .any(|v| v.tier == tier && v.kernel.signature() == &signature)
                {
                    variants.push(Variant {
                        tier,
                        kernel: kernel.clone(),
                    });
                }
                Some(kernel)
            }
            Err(message) => {
                if !pending.failed.iter().any(|(t, s)| *t == tier && *s == signature) {
                    pending.diagnostics.push(TierDiagnostic {
                        tier: tier.clone(),
                        statement: self.statement.clone(),
                        message,
                        runs_on: None,
                    });
                    pending.failed.push((tier, signature));
                }
                None
            }
        };
        drop(pending);
        self.idle.notify_all();
        out
    }

    /// Reports a compiled kernel's fallback ([`CompiledKernel::fallback`])
    /// once.
    pub fn note_fallback(&self, kernel: &dyn CompiledKernel) {
        if let Some(fallback) = kernel.fallback() {
            self.report_fallback(&mut self.pending(), fallback);
        }
    }

    fn report_fallback(&self, pending: &mut Pending, fallback: KernelFallback) {
        let diagnostic = TierDiagnostic {
            tier: fallback.tier,
            statement: self.statement.clone(),
            message: fallback.reason,
            runs_on: Some(fallback.runs_on),
        };
        if !pending.diagnostics.contains(&diagnostic) {
            pending.diagnostics.push(diagnostic);
        }
    }

    /// Waits until no compilation is in flight, at most `timeout`; returns
    /// whether none is.
    pub fn wait_idle(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut pending = self.pending();
        while !pending.compiling.is_empty() {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            pending = self
                .idle
                .wait_timeout(pending, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }

    pub fn diagnostics(&self) -> Vec<TierDiagnostic> {
        self.pending().diagnostics.clone()
    }

    pub fn stats(&self) -> KernelStats {
        let compiling = self.pending().compiling.len();
        KernelStats {
            runs: self.runs.load(Ordering::Relaxed),
            interpreted_runs: self.interpreted.load(Ordering::Relaxed),
            compiled_runs: self.compiled.load(Ordering::Relaxed),
            work: self.work.load(Ordering::Relaxed),
            compiled_variants: self.variants.read().map_or(0, |v| v.len()),
            compiling,
            split_runs: self.split_runs.load(Ordering::Relaxed),
            chunks: self.chunks.load(Ordering::Relaxed),
            most_threads: self.most_threads.load(Ordering::Relaxed),
        }
    }
}

/// Runs a tier's compiler, turning a panic into an error.
fn compile_caught(tier: &dyn Tier, request: &CompileRequest) -> Result<Arc<dyn CompiledKernel>, String> {
    match catch_unwind(AssertUnwindSafe(|| tier.compile(request))) {
        Ok(result) => result,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(format!("the compiler panicked: {what}"))
        }
    }
}
