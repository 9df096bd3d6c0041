//! Tiers: what a compiled tier implements, and how the engine chooses one.
//!
//! A [`Tier`] turns a bytecode [`Program`] (with the level formats of its
//! operands and the index widths of their arrays) into a
//! [`CompiledKernel`]. The engine defines this interface and never names a
//! tier: the facade registers tiers with [`Engine::with_tier`]. Which tier
//! runs a kernel is decided per run by a [`TierChoice`] and, for
//! [`TierChoice::Auto`], by the [`PromotionPolicy`]: a kernel is interpreted
//! until it has run often enough or done enough work, then compiled on a
//! background thread and swapped in while the interpreter keeps serving.
//!
//! [`Engine::with_tier`]: crate::Engine::with_tier

use std::fmt;
use std::sync::Arc;

use smallvec::SmallVec;
use tessera_formats::{ArrayRef, IndexWidth, LevelFormat, ValueType};

use crate::bytecode::Program;
use crate::interp::Bindings;
use crate::runtime::output::OutputState;

/// The name that selects the interpreter in [`TierChoice::Named`].
pub const INTERPRETER: &str = "interp";

/// Which tier runs a kernel.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub enum TierChoice {
    /// Interpret, and promote hot kernels to the best registered tier in the
    /// background (see [`PromotionPolicy`]).
    #[default]
    Auto,
    /// Always interpret; never compile.
    Interpreter,
    /// Compile with the tier of this name before running (`"jit"` for the
    /// Cranelift tier); `"interp"` is the interpreter. A name no registered
    /// tier has is an error.
    Named(String),
}

impl TierChoice {
    /// Parses a tier name as given on a command line: `auto`, `interp`, or
    /// the name of a tier.
    pub fn from_name(name: &str) -> TierChoice {
        match name {
            "auto" => TierChoice::Auto,
            INTERPRETER => TierChoice::Interpreter,
            other => TierChoice::Named(other.to_string()),
        }
    }
}

impl fmt::Display for TierChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TierChoice::Auto => f.write_str("auto"),
            TierChoice::Interpreter => f.write_str(INTERPRETER),
            TierChoice::Named(name) => f.write_str(name),
        }
    }
}

/// When [`TierChoice::Auto`] promotes a kernel: after `runs` interpreted
/// runs, or once the interpreted runs have together done `work` units of
/// work (a unit is one stored value of an input), whichever comes first,
/// compiling in the background; and before a run that alone reads
/// `first_run_work` stored values, on the calling thread, since that run
/// would wait longer in the interpreter than for the compiler.
/// `runs == 0` ([`PromotionPolicy::EAGER`]) compiles before the first run.
///
/// ```
/// use tessera_engine::runtime::PromotionPolicy;
/// let policy = PromotionPolicy::default();
/// assert!(policy.compiles_before(1_000_000));
/// assert!(!policy.compiles_before(10));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromotionPolicy {
    /// Interpreted runs before a kernel is compiled.
    pub runs: u64,
    /// Units of work (stored input values read) before a kernel is compiled.
    pub work: u64,
    /// Units of work of one run from which the kernel is compiled before
    /// that run.
    pub first_run_work: u64,
}

impl Default for PromotionPolicy {
    /// Four runs, or ten million stored values read: a kernel that runs on
    /// large tensors is compiled after its first or second run. A run that
    /// reads 16,384 stored values or more is compiled first: compiling
    /// takes 0.1–0.5 ms, and the interpreter spends about 0.1 µs more per
    /// stored value than compiled code on kernels without block ops
    /// (measured on `s = A(i,j) * B(i,j)` and `A(i,j) + B(j,i)` with 10k
    /// and 100k nonzeros: 1.1 ms against 0.04 ms, 2.8 ms against 0.33
    /// ms), so from about 16k values the compiler pays for itself on a
    /// single run even for the slowest compiles.
    fn default() -> Self {
        PromotionPolicy {
            runs: 4,
            work: 10_000_000,
            first_run_work: 1 << 14,
        }
    }
}

impl PromotionPolicy {
    /// Compile before the first run, on the calling thread (the
    /// interpreter serves only when compilation fails).
    pub const EAGER: PromotionPolicy = PromotionPolicy {
        runs: 0,
        work: 0,
        first_run_work: 0,
    };

    /// A policy that never promotes.
    pub const NEVER: PromotionPolicy = PromotionPolicy {
        runs: u64::MAX,
        work: u64::MAX,
        first_run_work: u64::MAX,
    };

    /// Whether a kernel with these totals should be promoted.
    pub fn is_due(&self, runs: u64, work: u64) -> bool {
        runs >= self.runs || work >= self.work
    }

    /// Whether a run that reads `work` stored values should be compiled
    /// before it runs.
    pub fn compiles_before(&self, work: u64) -> bool {
        work >= self.first_run_work
    }
}

/// The element width of every index array of every operand of a run, by
/// operand, level and array slot. Compiled kernels specialise on it: a
/// kernel compiled for one signature runs only on storage of that signature.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StorageSignature {
    operands: Vec<Vec<SmallVec<[IndexWidth; 2]>>>,
    /// The value type of each input.
    values: Vec<ValueType>,
}

impl StorageSignature {
    /// The signature of the storage bound for one run.
    pub fn of(bind: &Bindings<'_>) -> Self {
        StorageSignature {
            values: bind.values.iter().map(|v| v.value_type()).collect(),
            operands: bind
                .levels
                .iter()
                .map(|levels| {
                    levels
                        .iter()
                        .map(|l| l.arrays.iter().map(|a| a.width()).collect())
                        .collect()
                })
                .collect(),
        }
    }

    /// The value type of input `operand` (`f64` for operands beyond the
    /// inputs).
    pub fn value_type(&self, operand: u32) -> ValueType {
        self.values.get(operand as usize).copied().unwrap_or_default()
    }

    /// Whether every input holds `f64` values.
    pub fn all_f64(&self) -> bool {
        self.values.iter().all(|&t| t == ValueType::F64)
    }

    /// The width of one array, if the storage has it.
    pub fn width(&self, array: ArrayRef) -> Option<IndexWidth> {
        self.operands
            .get(array.level.operand as usize)?
            .get(array.level.level as usize)?
            .get(array.slot as usize)
            .copied()
    }
}

/// What a tier compiles: a program, the level formats of each operand it
/// reads (inputs, then the output), and the index widths to specialise on.
#[derive(Clone)]
pub struct CompileRequest {
    /// The bytecode to compile.
    pub program: Arc<Program>,
    /// Level formats of operand `k`, indexed like `Bindings::formats`.
    pub formats: Arc<[Vec<LevelFormat>]>,
    /// The index widths the kernel may assume.
    pub signature: StorageSignature,
    /// Whether to keep the tier's text of the kernel (for `--print clif`).
    pub keep_text: bool,
}

/// A compiled tier: turns bytecode into callable kernels.
pub trait Tier: Send + Sync {
    /// The name that selects this tier (`jit`).
    fn name(&self) -> &str;

    /// Compiles `request`. An error leaves the kernel interpreted; it is
    /// reported once as a [`TierDiagnostic`]. Tiers should not panic, but a
    /// panic is caught and reported the same way.
    fn compile(&self, request: &CompileRequest) -> Result<Arc<dyn CompiledKernel>, String>;

    /// Whether [`TierChoice::Auto`] should promote a kernel to this tier
    /// rather than to the first registered one, for runs that read `work`
    /// stored values: a GPU tier takes large runs. By default, no.
    fn takes(&self, work: u64) -> bool {
        let _ = work;
        false
    }
}

/// A kernel compiled by a [`Tier`].
pub trait CompiledKernel: Send + Sync {
    /// The storage signature it was compiled for.
    fn signature(&self) -> &StorageSignature;

    /// The tier's text of the kernel (Cranelift IR for the `jit` tier), when
    /// the request asked to keep it.
    fn text(&self) -> Option<&str>;

    /// Runs the kernel: the same effect on `out` as
    /// [`interp::run`](crate::interp::run) of the program it was compiled
    /// from. Panics raised by the output (as the interpreter would raise
    /// them) propagate to the caller after the kernel has returned.
    ///
    /// # Safety
    /// Compiled kernels do not check bounds. `bind` must hold valid tensors
    /// (as every [`Tensor`](tessera_formats::Tensor) is) in the level
    /// formats the kernel was compiled for, with exactly its
    /// [`signature`](Self::signature), loop sizes consistent with the
    /// tensors' shapes, and `out` prepared for the program's output, as the
    /// engine's runtime builds them; when the program accumulates into a
    /// workspace, the workspace is dense (the runtime interprets the others).
    unsafe fn run(&self, bind: &Bindings<'_>, out: &mut OutputState);

    /// When the kernel's tier handed it to another tier because it cannot
    /// run it itself (when compiling, or after a device failed to run it):
    /// which tiers and why. The engine asks after each compiled run and
    /// reports it once as a [`TierDiagnostic`].
    fn fallback(&self) -> Option<KernelFallback> {
        None
    }
}

/// A kernel one tier handed to another ([`CompiledKernel::fallback`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelFallback {
    /// The tier asked to run the kernel.
    pub tier: String,
    /// The tier that runs it instead.
    pub runs_on: String,
    /// Why.
    pub reason: String,
}

/// Something a tier reported about a kernel: a compilation that failed (the
/// kernel stays interpreted), a kernel it handed to another tier, or a tier
/// that could not be used.
///
/// ```
/// use tessera_engine::runtime::TierDiagnostic;
/// let d = TierDiagnostic {
///     tier: "opencl".into(),
///     statement: "y(i) = A(i,j) * x(j)".into(),
///     message: "no device".into(),
///     runs_on: Some("jit".into()),
/// };
/// assert!(d.to_string().ends_with("(the kernel runs on the jit tier)"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TierDiagnostic {
    /// The tier's name.
    pub tier: String,
    /// The statement of the kernel.
    pub statement: String,
    pub message: String,
    /// The tier that runs the kernel instead; `None` when it is
    /// interpreted.
    pub runs_on: Option<String>,
}

impl fmt::Display for TierDiagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.runs_on {
            None => write!(
                f,
                "tier {} could not compile `{}`: {} (the kernel stays interpreted)",
                self.tier, self.statement, self.message
            ),
            Some(other) => write!(
                f,
                "tier {} cannot run `{}`: {} (the kernel runs on the {other} tier)",
                self.tier, self.statement, self.message
            ),
        }
    }
}

/// The tiers an engine has and its promotion policy, shared with its
/// kernels (which compile in the background).
#[derive(Default)]
pub(crate) struct TierSet {
    pub tiers: Vec<Arc<dyn Tier>>,
    pub policy: PromotionPolicy,
    /// The engine's default number of threads per run (`None`: every core
    /// for runs with enough work).
    pub threads: Option<usize>,
}

impl TierSet {
    pub fn find(&self, name: &str) -> Option<&Arc<dyn Tier>> {
        self.tiers.iter().find(|t| t.name() == name)
    }

    /// The tier [`TierChoice::Auto`] promotes a kernel to for runs reading
    /// `work` stored values: the first that [`takes`](Tier::takes) them,
    /// else the first registered.
    pub fn best_for(&self, work: u64) -> Option<&Arc<dyn Tier>> {
        self.tiers.iter().find(|t| t.takes(work)).or_else(|| self.tiers.first())
    }

    /// Every tier name a user may choose, interpreter first.
    pub fn names(&self) -> Vec<String> {
        std::iter::once(INTERPRETER.to_string())
            .chain(self.tiers.iter().map(|t| t.name().to_string()))
            .collect()
    }
}
