//! The library API: an [`Engine`] that compiles statements into
//! [`Kernel`]s, caches them, and runs them on tensors.
//!
//! ```
//! use tessera_engine::{Engine, Inputs};
//! use tessera_formats::{CoordinateList, Format, Tensor};
//!
//! let mut entries = CoordinateList::new(&[2, 3]);
//! entries.push(&[0, 1], 2.0).unwrap();
//! entries.push(&[1, 2], 3.0).unwrap();
//! let a = Tensor::pack(&entries, Format::csr()).unwrap();
//! let x = Tensor::from_dense(&[3], vec![1.0, 10.0, 100.0]).unwrap();
//!
//! let engine = Engine::new();
//! let y = engine.eval("y(i) = A(i,j) * x(j)", &Inputs::new().with("A", &a).with("x", &x)).unwrap();
//! assert_eq!(y.to_dense_vec().unwrap(), vec![20.0, 300.0]);
//! ```
//!
//! Kernels are interpreted first. An engine with compiled tiers registered
//! ([`Engine::with_tier`]) promotes kernels that run often to the first
//! tier in the background ([`tier`] describes the interface and the
//! policy); [`EvalOptions::tier`] forces a tier or the interpreter.

mod complex;
mod defaults;
pub mod output;
mod parallel;
mod progress;
mod promotion;
pub mod rows;
pub mod strided;
pub mod tier;
pub mod workspace;

use crate::words::Adder;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tessera_formats::typed::{Typed, ValueSlice};
use tessera_formats::{AnyTensor, Format, FormatLevel, LevelFormat, Tensor, TensorRef, ValueType, Version};

use crate::bytecode::Program;
use crate::cin::{lower, CinPrinter, Lowered, OutputAssembly};
use crate::error::{EngineError, Result};
use crate::interp::{self, Bindings};
use crate::notation::{check, parse_statement, Statement};
use crate::plan::emit;
use crate::schedule::apply::check_parallel;
use crate::schedule::Schedule;
pub use defaults::default_output;
use output::{dense_levels, Assembler, OutputSizes, OutputState};
use parallel::{default_threads, Joined};
pub use parallel::{CancelToken, Parallelism, CHUNK_WORK, PARALLEL_FROM};
pub use progress::Progress;
pub use promotion::KernelStats;
use promotion::Tiering;
pub use tier::{
    CompileRequest, CompiledKernel, KernelFallback, PromotionPolicy, StorageSignature, Tier, TierChoice, TierDiagnostic,
};
use tier::{TierSet, INTERPRETER};
use workspace::Workspace;

/// Named input tensors for one evaluation, of any value type.
///
/// ```
/// use tessera_engine::{Engine, Inputs};
/// use tessera_formats::{AnyTensor, Tensor};
///
/// let a = Tensor::from_dense(&[2, 2], vec![1.5f32, 0.0, 0.0, 2.0]).unwrap();
/// let x = Tensor::from_dense(&[2], vec![2.0f32, 4.0]).unwrap();
/// let y = Engine::new().eval_typed("y(i) = A(i,j) * x(j)", &Inputs::new().with("A", &a).with("x", &x)).unwrap();
/// let AnyTensor::F32(y) = y else { panic!("f32 inputs give f32 results") };
/// assert_eq!(y.values(), &[3.0f32, 8.0]);
/// ```
#[derive(Default, Clone)]
pub struct Inputs<'a> {
    tensors: Vec<(String, TensorRef<'a>)>,
}

impl<'a> Inputs<'a> {
    pub fn new() -> Self {
        Inputs { tensors: Vec::new() }
    }
    /// Adds (or replaces) the tensor called `name`.
    #[must_use]
    pub fn with<V: Typed>(mut self, name: &str, tensor: &'a Tensor<V>) -> Self {
        self.insert(name, tensor);
        self
    }
    pub fn insert<V: Typed>(&mut self, name: &str, tensor: &'a Tensor<V>) {
        self.insert_any(name, V::tensor_ref(tensor));
    }
    /// [`insert`](Self::insert) for a tensor whose type is known at run
    /// time ([`AnyTensor`], [`TensorRef`]).
    pub fn insert_any(&mut self, name: &str, tensor: impl Into<TensorRef<'a>>) {
        self.tensors.retain(|(n, _)| n != name);
        self.tensors.push((name.to_string(), tensor.into()));
    }
    pub fn get(&self, name: &str) -> Option<TensorRef<'a>> {
        self.tensors.iter().find(|(n, _)| n == name).map(|(_, t)| *t)
    }
}

/// Options of one evaluation.
#[derive(Default, Clone, Debug)]
pub struct EvalOptions {
    /// The output's format; by default dense when every input is dense or
    /// a sparse operand is summed against a dense one, otherwise sparse
    /// ([`default_output`]).
    pub output_format: Option<Format>,
    /// Sizes of index variables that no input fixes.
    pub sizes: Vec<(String, usize)>,
    /// Which tier runs the kernel: by default the interpreter, promoting the
    /// kernel to a compiled tier once it is hot.
    pub tier: TierChoice,
    /// Threads the run may use (at least 1). By default the engine's
    /// ([`Engine::with_threads`]), else every core for runs with at least
    /// [`PARALLEL_FROM`] stored entries and one thread for smaller ones (and
    /// for sums of matrices, which a second core does not speed up). The
    /// result is the same, bit for bit, for any number of threads (see
    /// [`Parallelism`]).
    pub threads: Option<usize>,
    /// Work units per chunk of a parallel run ([`CHUNK_WORK`] by default).
    /// Chunks depend on it, so results are bitwise equal across thread
    /// counts for one value of it; tests make it small.
    pub chunk_work: Option<u64>,
    /// Stops the run between chunks when cancelled ([`CancelToken`]).
    pub cancel: Option<CancelToken>,
    /// The kernel's schedule ([`Schedule`]); empty: the planner's defaults.
    pub schedule: Schedule,
    /// Counts the run's chunks as they are done ([`Progress`]).
    pub progress: Option<Progress>,
}

/// The output format used when none is given: dense when every input is
/// dense (or there are none), otherwise CSR for matrices, a sparse vector for
/// vectors, CSF beyond.
pub fn default_output_format(order: usize, all_inputs_dense: bool) -> Format {
    if all_inputs_dense || order == 0 {
        return Format::dense(order);
    }
    match order {
        1 => Format::sparse_vector(),
        2 => Format::csr(),
        n => Format::csf(n),
    }
}

/// What identifies a kernel: the statement, the formats of its inputs and
/// output, the schedule and the value type.
#[derive(Clone, PartialEq, Eq, Hash)]
struct KernelKey {
    statement: String,
    /// Whole format levels (level formats and projections): BCSR 2x1 and
    /// 3x3 share level formats and differ only in their projections.
    inputs: Vec<(String, Vec<FormatLevel>)>,
    output: Vec<FormatLevel>,
    /// The schedule's canonical text (empty: the planner's defaults).
    schedule: String,
    /// The inputs' value types.
    types: Vec<(String, ValueType)>,
    /// The inputs' fills that are not 0, by their bits.
    fills: Vec<(String, u64)>,
}

/// Compiles statements into kernels, caches them, and runs them on the
/// interpreter or a registered compiled tier. `Send + Sync`: share one
/// engine between threads.
#[derive(Default)]
pub struct Engine {
    cache: Mutex<HashMap<KernelKey, Arc<Kernel>>>,
    tiers: Arc<TierSet>,
}

impl Engine {
    /// An engine with the interpreter only.
    pub fn new() -> Self {
        Engine::default()
    }

    /// Registers a compiled tier. The first registered tier is the one
    /// [`TierChoice::Auto`] promotes hot kernels to. Kernels compiled before
    /// are dropped from the cache.
    #[must_use]
    pub fn with_tier(self, tier: Arc<dyn Tier>) -> Self {
        let mut tiers: Vec<Arc<dyn Tier>> = self.tiers.tiers.clone();
        tiers.retain(|t| t.name() != tier.name());
        tiers.push(tier);
        Engine {
            cache: Mutex::default(),
            tiers: Arc::new(TierSet {
                tiers,
                policy: self.tiers.policy,
                threads: self.tiers.threads,
            }),
        }
    }

    /// Sets when [`TierChoice::Auto`] promotes a kernel. Kernels compiled
    /// before are dropped from the cache.
    #[must_use]
    pub fn with_promotion(self, policy: PromotionPolicy) -> Self {
        Engine {
            cache: Mutex::default(),
            tiers: Arc::new(TierSet {
                tiers: self.tiers.tiers.clone(),
                policy,
                threads: self.tiers.threads,
            }),
        }
    }

    /// Sets how many threads a run uses when [`EvalOptions::threads`] does
    /// not say (`None`: every core for runs with enough work). Results do
    /// not depend on it. Kernels compiled before are dropped from the cache.
    ///
    /// ```
    /// use tessera_engine::{Engine, Inputs};
    /// use tessera_formats::Tensor;
    ///
    /// let engine = Engine::new().with_threads(Some(2));
    /// let x = Tensor::from_dense(&[3], vec![1.0, 2.0, 3.0]).unwrap();
    /// let s = engine.eval("s = x(i) * x(i)", &Inputs::new().with("x", &x)).unwrap();
    /// assert_eq!(s.values(), &[14.0]);
    /// ```
    #[must_use]
    pub fn with_threads(self, threads: Option<usize>) -> Self {
        Engine {
            cache: Mutex::default(),
            tiers: Arc::new(TierSet {
                tiers: self.tiers.tiers.clone(),
                policy: self.tiers.policy,
                threads: threads.map(|t| t.max(1)),
            }),
        }
    }

    /// The engine's default number of threads per run.
    pub fn threads(&self) -> Option<usize> {
        self.tiers.threads
    }

    /// The names of the tiers a [`TierChoice::Named`] may select, the
    /// interpreter (`interp`) first.
    pub fn tier_names(&self) -> Vec<String> {
        self.tiers.names()
    }

    /// The promotion policy.
    pub fn promotion(&self) -> PromotionPolicy {
        self.tiers.policy
    }

    /// Checks that `choice` names a tier this engine has.
    pub fn check_tier(&self, choice: &TierChoice) -> Result<()> {
        match choice {
            TierChoice::Named(name) if name != INTERPRETER && self.tiers.find(name).is_none() => {
                Err(unknown_tier(name, &self.tiers))
            }
            _ => Ok(()),
        }
    }

    /// Everything the tiers reported about the cached kernels, such as
    /// compilations that failed (those kernels stay interpreted).
    pub fn diagnostics(&self) -> Vec<TierDiagnostic> {
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache.values().flat_map(|k| k.diagnostics()).collect()
    }

    /// The counters of every cached kernel, added up.
    pub fn stats(&self) -> KernelStats {
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .values()
            .map(|k| k.stats())
            .fold(KernelStats::default(), |a, b| KernelStats {
                runs: a.runs + b.runs,
                interpreted_runs: a.interpreted_runs + b.interpreted_runs,
                compiled_runs: a.compiled_runs + b.compiled_runs,
                work: a.work + b.work,
                compiled_variants: a.compiled_variants + b.compiled_variants,
                compiling: a.compiling + b.compiling,
                split_runs: a.split_runs + b.split_runs,
                chunks: a.chunks + b.chunks,
                most_threads: a.most_threads.max(b.most_threads),
            })
    }

    /// Waits until no kernel of the cache has a compilation in flight, at
    /// most `timeout`; returns whether none has.
    pub fn wait_for_compilations(&self, timeout: Duration) -> bool {
        let kernels: Vec<Arc<Kernel>> = {
            let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            cache.values().cloned().collect()
        };
        let deadline = std::time::Instant::now() + timeout;
        kernels
            .iter()
            .all(|k| k.wait_for_compilation(deadline.saturating_duration_since(std::time::Instant::now())))
    }

    /// Parses, compiles (or reuses) and runs `statement` on `inputs`; the
    /// result in `f64` whatever its type ([`eval_typed`](Self::eval_typed)
    /// keeps it).
    pub fn eval(&self, statement: &str, inputs: &Inputs<'_>) -> Result<Tensor<f64>> {
        self.eval_with(statement, inputs, &EvalOptions::default())
    }

    /// [`eval`](Self::eval) with an output format, index sizes and a tier.
    pub fn eval_with(&self, statement: &str, inputs: &Inputs<'_>, options: &EvalOptions) -> Result<Tensor<f64>> {
        Ok(self.eval_typed_with(statement, inputs, options)?.into_f64())
    }

    /// Parses, compiles (or reuses) and runs `statement` on `inputs`: the
    /// result has the value type the statement gives (`f32` from `f32`
    /// inputs, `bool` from comparisons), see
    /// [`types`](crate::notation::types).
    pub fn eval_typed(&self, statement: &str, inputs: &Inputs<'_>) -> Result<AnyTensor> {
        self.eval_typed_with(statement, inputs, &EvalOptions::default())
    }

    /// [`eval_typed`](Self::eval_typed) with an output format, index sizes
    /// and a tier.
    pub fn eval_typed_with(&self, statement: &str, inputs: &Inputs<'_>, options: &EvalOptions) -> Result<AnyTensor> {
        self.check_tier(&options.tier)?;
        let kernel = self.kernel_for(statement, inputs, options)?;
        kernel.run_typed(inputs, options)
    }

    /// The kernel [`eval_with`](Self::eval_with) would run, without running
    /// it: for printing its plan, bytecode or compiled text.
    pub fn kernel_for(&self, statement: &str, inputs: &Inputs<'_>, options: &EvalOptions) -> Result<Arc<Kernel>> {
        let stmt = parse_statement(statement)?;
        let formats = formats_of(&stmt, inputs)?;
        let fills: Vec<(String, f64)> = formats
            .iter()
            .filter_map(|(n, _)| inputs.get(n).map(|t| (n.clone(), t.fill())))
            .filter(|(_, f)| *f != 0.0 || f.is_nan())
            .collect();
        let types: Vec<(String, ValueType)> = formats
            .iter()
            .filter_map(|(n, _)| inputs.get(n).map(|t| (n.clone(), t.value_type())))
            .filter(|(_, t)| *t != ValueType::F64)
            .collect();
        let output = match &options.output_format {
            Some(f) => f.clone(),
            None => default_output(&stmt, &formats).0,
        };
        self.compile_statement(&stmt, (&formats, &fills, &types), &output, &options.schedule)
    }

    /// Compiles `statement` for inputs in `formats` (by name) and an output
    /// in `output`; the kernel runs on any tensors in those formats.
    pub fn compile(&self, statement: &str, formats: &[(&str, Format)], output: &Format) -> Result<Arc<Kernel>> {
        self.compile_scheduled(statement, formats, output, &Schedule::new())
    }

    /// [`compile`](Self::compile) with a schedule: its commands transform
    /// the loops, and one that would change the result, or that the
    /// tensors' storage cannot follow without a conversion, is refused.
    ///
    /// ```
    /// use tessera_engine::schedule::{RaceStrategy, Schedule};
    /// use tessera_engine::Engine;
    /// use tessera_formats::Format;
    ///
    /// let engine = Engine::new();
    /// let formats = [("A", Format::csr()), ("x", Format::dense(1))];
    /// let schedule = Schedule::new().parallelize("i", RaceStrategy::NoRaces);
    /// let kernel = engine
    ///     .compile_scheduled("y(i) = A(i,j) * x(j)", &formats, &Format::dense(1), &schedule)
    ///     .unwrap();
    /// assert!(kernel.plan().contains("schedule: parallelize(i, cpu_threads, no_races)"));
    ///
    /// // Chunks of j would all add into the same y(i).
    /// let racy = Schedule::new().parallelize("j", RaceStrategy::NoRaces);
    /// let formats = [("A", Format::csc()), ("x", Format::dense(1))];
    /// let Err(err) = engine.compile_scheduled("y(i) = A(i,j) * x(j)", &formats, &Format::dense(1), &racy) else {
    ///     panic!("a racy schedule was accepted");
    /// };
    /// assert!(err.to_string().contains("no_races would race"), "{err}");
    /// ```
    pub fn compile_scheduled(
        &self,
        statement: &str,
        formats: &[(&str, Format)],
        output: &Format,
        schedule: &Schedule,
    ) -> Result<Arc<Kernel>> {
        self.compile_with_fills(statement, formats, &[], output, schedule)
    }

    /// `fills`: the inputs whose fill is not 0.
    /// [`compile_scheduled`](Self::compile_scheduled) for inputs whose
    /// fills are not all 0 (`fills` by name; inputs not named have fill
    /// 0): the fills decide where the kernel computes.
    ///
    /// ```
    /// use tessera_engine::schedule::Schedule;
    /// use tessera_engine::Engine;
    /// use tessera_formats::Format;
    /// let formats = [("A", Format::csr()), ("x", Format::dense(1))];
    /// let fills = [("A", f64::INFINITY)];
    /// let kernel = Engine::new()
    ///     .compile_with_fills("y(i) = min(j, A(i,j) + x(j))", &formats, &fills, &Format::dense(1), &Schedule::new())
    ///     .unwrap();
    /// // Absent entries are +inf: each row's minimum runs over its stored
    /// // entries only, in one op.
    /// assert!(kernel.plan().contains("a dot product per row"), "{}", kernel.plan());
    /// ```
    pub fn compile_with_fills(
        &self,
        statement: &str,
        formats: &[(&str, Format)],
        fills: &[(&str, f64)],
        output: &Format,
        schedule: &Schedule,
    ) -> Result<Arc<Kernel>> {
        self.compile_with_types(statement, formats, fills, &[], output, schedule)
    }

    /// [`compile_with_fills`](Self::compile_with_fills) for inputs that
    /// do not all hold `f64` values (`types` by name; inputs not named hold
    /// `f64`): the kernel's results have the type the statement gives
    /// ([`Kernel::value_type`]).
    ///
    /// ```
    /// use tessera_engine::schedule::Schedule;
    /// use tessera_engine::Engine;
    /// use tessera_formats::{Format, ValueType};
    /// let formats = [("A", Format::csr()), ("x", Format::dense(1))];
    /// let types = [("A", ValueType::Bool), ("x", ValueType::Bool)];
    /// let kernel = Engine::new()
    ///     .compile_with_types("y(i) = A(i,j) * x(j)", &formats, &[], &types, &Format::dense(1), &Schedule::new())
    ///     .unwrap();
    /// assert_eq!(kernel.value_type(), ValueType::Bool);
    /// ```
    pub fn compile_with_types(
        &self,
        statement: &str,
        formats: &[(&str, Format)],
        fills: &[(&str, f64)],
        types: &[(&str, ValueType)],
        output: &Format,
        schedule: &Schedule,
    ) -> Result<Arc<Kernel>> {
        let stmt = parse_statement(statement)?;
        let formats: Vec<(String, Format)> = formats.iter().map(|(n, f)| (n.to_string(), f.clone())).collect();
        let fills: Vec<(String, f64)> = fills
            .iter()
            .filter(|(_, f)| *f != 0.0 || f.is_nan())
            .map(|(n, f)| (n.to_string(), *f))
            .collect();
        let types: Vec<(String, ValueType)> = types
            .iter()
            .filter(|(_, t)| *t != ValueType::F64)
            .map(|(n, t)| (n.to_string(), *t))
            .collect();
        self.compile_statement(&stmt, (&formats, &fills, &types), output, schedule)
    }

    /// `inputs`: the formats, the fills that are not 0 and the value types
    /// that are not `f64` of the inputs, by name.
    fn compile_statement(
        &self,
        stmt: &Statement,
        inputs: InputSpecs<'_>,
        output: &Format,
        schedule: &Schedule,
    ) -> Result<Arc<Kernel>> {
        let (formats, fills, types) = inputs;
        let key = KernelKey {
            statement: stmt.to_string(),
            inputs: formats.iter().map(|(n, f)| (n.clone(), f.levels().to_vec())).collect(),
            output: output.levels().to_vec(),
            schedule: schedule.to_string(),
            types: types.to_vec(),
            fills: fills.iter().map(|(n, f)| (n.clone(), f.to_bits())).collect(),
        };
        if let Some(k) = self.cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Ok(k.clone());
        }
        let kernel = Arc::new(Kernel::compile(stmt, inputs, output, schedule, self.tiers.clone())?);
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        // Another thread may have compiled the same kernel meanwhile: keep one.
        Ok(cache.entry(key).or_insert(kernel).clone())
    }
}

fn unknown_tier(name: &str, tiers: &TierSet) -> EngineError {
    EngineError::Unsupported(format!(
        "tier {name} is not available (available tiers: {})",
        tiers.names().join(", ")
    ))
}

/// The formats of the tensors a statement reads, by name.
fn formats_of(stmt: &Statement, inputs: &Inputs<'_>) -> Result<Vec<(String, Format)>> {
    let mut names: Vec<&str> = Vec::new();
    for access in stmt.rhs.accesses() {
        if !names.contains(&access.tensor.as_str()) {
            names.push(&access.tensor);
        }
    }
    if stmt.op == crate::notation::AssignOp::AddAssign && !names.contains(&stmt.lhs.tensor.as_str()) {
        names.push(&stmt.lhs.tensor);
    }
    names
        .into_iter()
        .map(|n| {
            let access = stmt.rhs.accesses().into_iter().find(|a| a.tensor == n);
            inputs
                .get(n)
                .map(|t| (n.to_string(), t.format().clone()))
                .ok_or_else(|| EngineError::UnknownTensor {
                    name: n.to_string(),
                    column: access.map_or(stmt.lhs.span.column(), |a| a.span.column()),
                })
        })
        .collect()
}

/// A converted input and the version of the tensor it was made from.
type Conversion = (Version, Arc<AnyTensor>);

/// An operand's values widened to `f64` for the interpreter, and the
/// version of the tensor they were read from.
type Widening = (Version, Arc<Vec<f64>>);

/// What a kernel is compiled for besides its statement: each input's
/// format, the fills that are not 0 and the value types that are not
/// `f64`, by name.
type InputSpecs<'a> = (&'a [(String, Format)], &'a [(String, f64)], &'a [(String, ValueType)]);

/// How one run is served.
enum Route {
    Interpret { promote: bool },
    Compiled(Arc<dyn Tier>),
}

/// A statement compiled for given formats: its plan and bytecode, and the
/// compiled variants tiers made of it. `Send + Sync`: run it from several
/// threads at once.
pub struct Kernel {
    statement: Statement,
    /// The statement as lowered (typed, every reduction explicit and over
    /// a variable of its own), whose index sizes a run checks.
    lowered_statement: Statement,
    /// The schedule parallelizes the outer loop: every core at any size.
    every_core: bool,
    lowered: Lowered,
    program: Arc<Program>,
    plan: String,
    input_formats: Vec<(String, Format)>,
    /// The fill of each input the kernel was compiled for.
    input_fills: Vec<(String, f64)>,
    /// The value type of each input the kernel was compiled for.
    input_types: Vec<(String, ValueType)>,
    /// The value type the statement gives.
    value_type: ValueType,
    /// Level formats of each operand the program reads (inputs, then the
    /// output), as tiers compile them.
    operand_formats: Arc<[Vec<LevelFormat>]>,
    tiers: Arc<TierSet>,
    tiering: Arc<Tiering>,
    /// Whether the program accumulates into a workspace.
    accumulates: bool,
    /// Whether the (sparse) output gets a value at every coordinate.
    fills_in: bool,
    /// The array lengths of the last appended result.
    last_output: Mutex<Option<OutputSizes>>,
    /// The parts of the last result assembled in chunks, to fill again.
    spare_parts: parallel::SpareParts,
    /// Per operand the plan converts: the last conversion made, and the
    /// version of the tensor it was made from. A kernel run again on the
    /// same tensor reuses it instead of converting on every run.
    conversions: Mutex<Vec<Option<Conversion>>>,
    /// Per operand not holding `f64` values: its values widened, which the
    /// interpreter reads (compiled tiers read them as they are).
    widenings: Mutex<Vec<Option<Widening>>>,
    /// For a statement over complex values, this kernel is its real
    /// part's: the rest it runs with.
    complex: Option<Box<complex::ComplexParts>>,
}

impl Kernel {
    fn compile(
        stmt: &Statement,
        (formats, fills, types): InputSpecs<'_>,
        output: &Format,
        schedule: &Schedule,
        tiers: Arc<TierSet>,
    ) -> Result<Kernel> {
        if let Some(kernel) = complex::compile(stmt, (formats, fills, types), output, schedule, tiers.clone())? {
            return Ok(kernel);
        }
        let lookup = |name: &str| formats.iter().find(|(n, _)| n == name).map(|(_, f)| f.clone());
        let fill_of = |name: &str| fills.iter().find(|(n, _)| n == name).map_or(0.0, |(_, f)| *f);
        let type_of = |name: &str| {
            let given = types.iter().find(|(n, _)| n == name).map(|(_, t)| *t);
            Some(given.unwrap_or_default())
        };
        // Sums are renamed apart below: a variable used outside its sum is
        // refused on the statement as written.
        crate::notation::check::check_sum_bindings(stmt)?;
        let typed = crate::notation::types::typed(stmt, &type_of)?;
        // Integers' fills are their bits, as registers hold them.
        let fill_word = |name: &str| type_of(name).unwrap_or_default().word(fill_of(name));
        let mut lowered = lower(&typed.statement, &lookup, &fill_word, output, schedule)?;
        lowered.value_type = typed.value_type;
        let parallel = check_parallel(schedule, &lowered)?;
        let planned = emit(&lowered)?;
        let cin = CinPrinter {
            cin: &lowered.cin,
            operands: &lowered.operands,
            output: &lowered.output,
        }
        .to_string();
        let mut reuse = String::new();
        for (name, ty) in types {
            reuse.push_str(&format!(
                "{name} holds {ty} values: compiled kernels read them as they are, the interpreter through a copy as 64-bit register words made once per tensor\n"
            ));
        }
        if typed.value_type.is_integer() {
            reuse.push_str(&format!(
                "the result holds {} values, computed with wrapping {} arithmetic\n",
                typed.value_type, typed.value_type
            ));
        } else if typed.value_type != ValueType::F64 {
            reuse.push_str(&format!(
                "the result holds {} values, computed in f64 and rounded once where stored\n",
                typed.value_type
            ));
        }
        if lowered.operands.iter().any(|op| op.converted_from.is_some()) || !types.is_empty() {
            reuse.push_str("conversions are made once per input tensor and reused while it is unchanged\n");
        }
        let mut scheduled = String::new();
        if !schedule.is_empty() {
            scheduled = format!("schedule: {schedule}\n");
        }
        if let Some(note) = &parallel {
            scheduled.push_str(&format!("{note}\n"));
        }
        let plan = format!(
            "{scheduled}{}{reuse}concrete index notation:\n{}",
            planned.plan,
            indent(&cin)
        );
        let operand_formats: Vec<Vec<LevelFormat>> = lowered
            .operands
            .iter()
            .chain(std::iter::once(&lowered.output))
            .map(|op| op.format.levels().iter().map(|l| l.level).collect())
            .collect();
        let accumulates = planned
            .program
            .ops
            .iter()
            .any(crate::bytecode::Op::accumulates_into_workspace);
        Ok(Kernel {
            statement: stmt.clone(),
            lowered_statement: crate::notation::distinct_reductions(&typed.statement),
            every_core: lowered.every_core,
            accumulates,
            fills_in: planned.fills_in,
            last_output: Mutex::new(None),
            spare_parts: parallel::SpareParts::default(),
            conversions: Mutex::new(vec![None; lowered.operands.len()]),
            widenings: Mutex::new(vec![None; lowered.operands.len()]),
            complex: None,
            program: Arc::new(planned.program),
            plan,
            input_formats: formats.to_vec(),
            input_fills: formats.iter().map(|(n, _)| (n.clone(), fill_of(n))).collect(),
            input_types: formats
                .iter()
                .map(|(n, _)| (n.clone(), type_of(n).unwrap_or_default()))
                .collect(),
            value_type: typed.value_type,
            operand_formats: operand_formats.into(),
            tiers,
            tiering: Arc::new(Tiering::new(stmt.to_string())),
            lowered,
        })
    }

    /// The statement this kernel computes.
    pub fn statement(&self) -> &Statement {
        match &self.complex {
            Some(parts) => &parts.statement,
            None => &self.statement,
        }
    }
    /// A readable account of the plan: loop order, lattices, conversions.
    pub fn plan(&self) -> &str {
        &self.plan
    }
    /// The bytecode program.
    pub fn program(&self) -> &Program {
        &self.program
    }
    /// The output format.
    pub fn output_format(&self) -> &Format {
        self.lowered
            .converted_output
            .as_ref()
            .unwrap_or(&self.lowered.output.format)
    }

    /// Run counters and the state of compilation.
    pub fn stats(&self) -> KernelStats {
        self.tiering.stats()
    }

    /// Whether a compiled variant of this kernel exists.
    pub fn is_compiled(&self) -> bool {
        self.stats().compiled_variants > 0
    }

    /// What the tiers reported about this kernel (each failure once).
    pub fn diagnostics(&self) -> Vec<TierDiagnostic> {
        self.tiering.diagnostics()
    }

    /// Waits until no compilation of this kernel is in flight, at most
    /// `timeout`; returns whether none is.
    pub fn wait_for_compilation(&self, timeout: Duration) -> bool {
        self.tiering.wait_idle(timeout)
    }

    /// Runs the kernel on tensors in the formats it was compiled for; the
    /// result in `f64` whatever its type ([`run_typed`](Self::run_typed)
    /// keeps it).
    pub fn run(&self, inputs: &Inputs<'_>) -> Result<Tensor<f64>> {
        self.run_with_sizes(inputs, &[])
    }

    /// [`run`](Self::run) with sizes for index variables no input fixes.
    pub fn run_with_sizes(&self, inputs: &Inputs<'_>, sizes: &[(String, usize)]) -> Result<Tensor<f64>> {
        let options = EvalOptions {
            sizes: sizes.to_vec(),
            ..EvalOptions::default()
        };
        self.run_with(inputs, &options)
    }

    /// [`run`](Self::run) with the index sizes and the tier of `options`
    /// (its output format is the kernel's, fixed when it was compiled).
    pub fn run_with(&self, inputs: &Inputs<'_>, options: &EvalOptions) -> Result<Tensor<f64>> {
        Ok(self.run_typed(inputs, options)?.into_f64())
    }

    /// [`run_with`](Self::run_with), the result of the type the statement
    /// gives ([`value_type`](Self::value_type)).
    pub fn run_typed(&self, inputs: &Inputs<'_>, options: &EvalOptions) -> Result<AnyTensor> {
        match &self.complex {
            Some(parts) => parts.run(self, inputs, options),
            None => self.run_parts(inputs, options),
        }
    }

    /// [`run_typed`](Self::run_typed) of this kernel's own program (for a
    /// complex statement, of its real part, on the inputs' parts).
    fn run_parts(&self, inputs: &Inputs<'_>, options: &EvalOptions) -> Result<AnyTensor> {
        let computed = self.execute(inputs, &options.sizes, &options.tier, self.parallelism(options))?;
        let ty = match self.complex {
            Some(_) => ValueType::F64,
            None => self.value_type,
        };
        Ok(AnyTensor::from_words(computed, ty))
    }

    /// The value type of the kernel's results.
    pub fn value_type(&self) -> ValueType {
        self.value_type
    }

    fn parallelism(&self, options: &EvalOptions) -> Parallelism {
        Parallelism {
            threads: options
                .threads
                .or(self.tiers.threads)
                .or_else(|| self.every_core.then(default_threads))
                .map(|t| t.max(1)),
            chunk_work: options.chunk_work.unwrap_or(CHUNK_WORK).max(1),
            cancel: options.cancel.clone(),
            progress: options.progress.clone(),
        }
    }

    /// The text a compiled tier makes of this kernel (the Cranelift IR for
    /// the `jit` tier), compiled now for the index widths of the kernel's
    /// latest run: tiers specialise on them, so run the kernel first (or
    /// use [`compiled_text_for`](Self::compiled_text_for)).
    pub fn compiled_text(&self, tier: &str) -> Result<String> {
        let tier = self
            .tiers
            .find(tier)
            .cloned()
            .ok_or_else(|| unknown_tier(tier, &self.tiers))?;
        let signature = self.tiering.last().ok_or_else(|| {
            EngineError::Unsupported(format!(
                "tier {} specialises kernels on their inputs: run the kernel before asking for its compiled text",
                tier.name()
            ))
        })?;
        self.text_of(&tier, signature)
    }

    /// The text a compiled tier makes of this kernel for these inputs,
    /// compiled now.
    pub fn compiled_text_for(&self, inputs: &Inputs<'_>, sizes: &[(String, usize)], tier: &str) -> Result<String> {
        let tier = self
            .tiers
            .find(tier)
            .cloned()
            .ok_or_else(|| unknown_tier(tier, &self.tiers))?;
        let (signature, _) = self.with_bindings(inputs, sizes, |bind, _| StorageSignature::of(bind))?;
        self.text_of(&tier, signature)
    }

    /// What a tier is asked to compile for these inputs: for tools and
    /// benchmarks that drive a [`Tier`] directly.
    pub fn compile_request_for(&self, inputs: &Inputs<'_>, sizes: &[(String, usize)]) -> Result<CompileRequest> {
        let (signature, _) = self.with_bindings(inputs, sizes, |bind, _| StorageSignature::of(bind))?;
        Ok(self.request(signature, false))
    }

    fn text_of(&self, tier: &Arc<dyn Tier>, signature: StorageSignature) -> Result<String> {
        let compiled = tier.compile(&self.request(signature, true)).map_err(|e| {
            EngineError::Unsupported(format!("tier {} could not compile this kernel: {e}", tier.name()))
        })?;
        Ok(compiled.text().unwrap_or_default().to_string())
    }

    fn request(&self, signature: StorageSignature, keep_text: bool) -> CompileRequest {
        CompileRequest {
            program: self.program.clone(),
            formats: self.operand_formats.clone(),
            signature,
            keep_text,
        }
    }

    fn route(&self, tier: &TierChoice) -> Result<Route> {
        Ok(match tier {
            TierChoice::Interpreter => Route::Interpret { promote: false },
            TierChoice::Named(name) if name == INTERPRETER => Route::Interpret { promote: false },
            TierChoice::Named(name) => Route::Compiled(
                self.tiers
                    .find(name)
                    .cloned()
                    .ok_or_else(|| unknown_tier(name, &self.tiers))?,
            ),
            TierChoice::Auto => match self.tiers.tiers.first() {
                Some(best) if self.tiers.policy.runs == 0 => Route::Compiled(best.clone()),
                Some(_) => Route::Interpret { promote: true },
                None => Route::Interpret { promote: false },
            },
        })
    }

    fn execute(
        &self,
        inputs: &Inputs<'_>,
        sizes: &[(String, usize)],
        tier: &TierChoice,
        parallelism: Parallelism,
    ) -> Result<Tensor<f64>> {
        let route = self.route(tier)?;
        let (joined, out) =
            self.with_bindings(inputs, sizes, |bind, out| self.dispatch(&route, bind, out, parallelism))?;
        let result = match joined? {
            Joined::InPlace => match self.lowered.assembly {
                OutputAssembly::OnPattern { operand } => {
                    let op = &self.lowered.operands[operand];
                    let pattern = inputs.get(&op.name).ok_or_else(|| EngineError::UnknownTensor {
                        name: op.name.clone(),
                        column: 0,
                    })?;
                    // The kernel ran on the converted operand (its copy is
                    // kept): the output stores its levels.
                    match op.converted_from {
                        Some(_) => out.finish_on(self.converted(operand, pattern, &op.format)?.as_ref().as_ref())?,
                        None => out.finish_on(pattern)?,
                    }
                }
                _ => out.finish()?,
            },
            Joined::Tensor(t) => t,
        };
        if self.lowered.assembly == OutputAssembly::Append {
            *self.last_output.lock().unwrap_or_else(|e| e.into_inner()) = Some(OutputSizes::of(&result));
        }
        let result = match &self.lowered.converted_output {
            Some(format) => result.convert(format)?,
            None => result,
        };
        // A sparse output holds the rhs's fill where nothing was computed
        // (the lowering sets it only on formats without padding, where
        // this sets a field and copies nothing).
        Ok(result.with_fill(self.lowered.output.fill)?)
    }

    /// Runs the program on `bind` with the tier `route` says: a compiled
    /// variant when there is one for this storage, otherwise the interpreter
    /// (which counts the run and may start a promotion).
    fn dispatch(
        &self,
        route: &Route,
        bind: &Bindings<'_>,
        out: &mut OutputState,
        parallelism: Parallelism,
    ) -> Result<Joined> {
        let same_formats = bind.formats.len() == self.operand_formats.len()
            && bind
                .formats
                .iter()
                .zip(self.operand_formats.iter())
                .all(|(a, b)| *a == b.as_slice());
        let signature = same_formats.then(|| StorageSignature::of(bind));
        if let Some(signature) = &signature {
            self.tiering.set_last(signature);
        }
        // Compiled kernels accumulate into dense workspaces in place only;
        // one too large to be dense (a hashed workspace) is interpreted.
        let may_compile =
            !matches!(route, Route::Interpret { promote: false }) && (!self.accumulates || out.has_dense_workspace());
        if let (true, Some(signature)) = (may_compile, &signature) {
            let compiled = match route {
                Route::Compiled(tier) => self
                    .tiering
                    .find(Some(tier.name()), signature)
                    .or_else(|| self.tiering.compile_now(tier, self.request(signature.clone(), false))),
                Route::Interpret { .. } => self.tiering.find(None, signature).or_else(|| {
                    let work: u64 = bind.values.iter().map(|v| v.len() as u64).sum();
                    let best = self.tiers.best_for(work)?;
                    self.tiers
                        .policy
                        .compiles_before(work)
                        .then(|| self.tiering.compile_now(best, self.request(signature.clone(), false)))
                        .flatten()
                }),
            };
            if let Some(kernel) = compiled {
                self.tiering.count_compiled();
                // SAFETY: every chunk's bindings are `bind` with a range of
                // the outer loop inside its dimension: validated tensors in
                // the operand formats the kernel was compiled for (checked
                // above), with its storage signature (it was found or
                // compiled for exactly `signature`), loop sizes checked
                // against the shapes; each chunk's output is prepared for
                // the program's output (a part, a window or a partial of it).
                let run = |bind: &Bindings<'_>, out: &mut OutputState| unsafe { kernel.run(bind, out) };
                let joined = self.run_chunks(bind, out, parallelism, &run);
                self.tiering.note_fallback(kernel.as_ref());
                return joined;
            }
        }
        let run = |bind: &Bindings<'_>, out: &mut OutputState| interp::run(&self.program, bind, out);
        let joined = if bind.all_f64() {
            self.run_chunks(bind, out, parallelism, &run)
        } else {
            let widened = self.widened(bind)?;
            let mut wide = bind.clone();
            for (k, values) in widened.iter().enumerate() {
                if let Some(values) = values {
                    wide.values[k] = ValueSlice::F64(values);
                }
            }
            self.run_chunks(&wide, out, parallelism, &run)
        };
        let run_work: u64 = bind.values.iter().map(|v| v.len() as u64).sum();
        let (runs, work) = self.tiering.count_interpreted(run_work.max(1));
        if let (Route::Interpret { promote: true }, Some(signature)) = (route, signature) {
            if self.tiers.policy.is_due(runs, work) {
                if let Some(best) = self.tiers.best_for(run_work) {
                    self.tiering.promote(best.clone(), self.request(signature, false));
                }
            }
        }
        joined
    }

    /// Runs the program by `run` in chunks ([`parallel::run`]), parts
    /// sized after the last result.
    fn run_chunks(
        &self,
        bind: &Bindings<'_>,
        out: &mut OutputState,
        parallelism: Parallelism,
        run: &parallel::RunChunk<'_>,
    ) -> Result<Joined> {
        let last = self.last_output.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let remembered = (last.as_ref(), &self.spare_parts);
        parallel::run(&self.program, bind, out, parallelism, run, &self.tiering, remembered)
    }

    /// Checks `inputs` against the kernel, converts them where the plan
    /// says, prepares the output, and calls `f` with the storage bound for
    /// the program; returns what `f` returned and the output state.
    fn with_bindings<R>(
        &self,
        inputs: &Inputs<'_>,
        sizes: &[(String, usize)],
        f: impl FnOnce(&Bindings<'_>, &mut OutputState) -> R,
    ) -> Result<(R, OutputState)> {
        for (name, format) in &self.input_formats {
            let t = inputs.get(name).ok_or_else(|| EngineError::UnknownTensor {
                name: name.clone(),
                column: 1,
            })?;
            if t.format().levels() != format.levels() {
                return Err(EngineError::KernelMismatch(format!(
                    "{name} is stored as {}, the kernel was compiled for {format}",
                    t.format()
                )));
            }
        }
        for (name, ty) in &self.input_types {
            let t = inputs.get(name).expect("checked above");
            if t.value_type() != *ty {
                return Err(EngineError::KernelMismatch(format!(
                    "{name} holds {} values, the kernel was compiled for {ty}",
                    t.value_type()
                )));
            }
        }
        for (name, fill) in &self.input_fills {
            let t = inputs.get(name).expect("checked above");
            if t.fill() != *fill && !(t.fill().is_nan() && fill.is_nan()) {
                return Err(EngineError::KernelMismatch(format!(
                    "{name} has fill {}, the kernel was compiled for fill {fill}",
                    t.fill()
                )));
            }
        }
        let shape_of = |name: &str| inputs.get(name).map(|t| t.shape().to_vec());
        let size_of = |var: &str| sizes.iter().find(|(v, _)| v == var).map(|(_, s)| *s);
        let index_sizes = check(&self.lowered_statement, &shape_of, &size_of)?;
        let out_shape = index_sizes.output_shape().to_vec();

        // Inputs, converted where the plan says so.
        let mut converted: Vec<Option<Arc<AnyTensor>>> = Vec::with_capacity(self.lowered.operands.len());
        for (k, op) in self.lowered.operands.iter().enumerate() {
            let t = inputs.get(&op.name).expect("checked above");
            converted.push(if op.converted_from.is_some() {
                Some(self.converted(k, t, &op.format)?)
            } else {
                None
            });
        }
        let tensors: Vec<TensorRef<'_>> = self
            .lowered
            .operands
            .iter()
            .zip(&converted)
            .map(|(op, c)| match c {
                Some(c) => c.as_ref().as_ref(),
                None => inputs.get(&op.name).expect("checked above"),
            })
            .collect();

        // Each loop's size: a statement variable's, or a derived one's
        // from the sizes and levels it comes from.
        let size_of = |v: &str| index_sizes.get(v).unwrap_or(0);
        let level_extent = |operand: usize, level: usize| tensors[operand].level(level).extent;
        // The extents `Lowered::dimension_vars` lists, then the block sizes
        // of the variables a schedule splits (`divide`'s are known only now).
        let provenance = &self.lowered.provenance;
        let level_positions = |operand: usize, level: usize| tensors[operand].level_sizes()[level];
        let sizes = crate::cin::Sizes {
            of_var: &size_of,
            level_extent: &level_extent,
            level_positions: &level_positions,
        };
        let extent = |v: &crate::cin::LoopVar| crate::cin::Provenance::extent(v, &sizes);
        for bound in &self.lowered.bounds {
            let size = extent(&bound.var);
            if !bound.kind.holds(size, bound.size) {
                return Err(EngineError::BoundBroken {
                    command: bound.command.clone(),
                    var: bound.var.to_string(),
                    size,
                });
            }
        }
        let mut dims: Vec<i64> = self.lowered.dimension_vars().map(|v| extent(v) as i64).collect();
        dims.extend(provenance.scheduled().map(|v| {
            let blocking = provenance.blocking(v).expect("a scheduled split");
            blocking.size(extent(v)) as i64
        }));

        // Each run in parallel keeps its own vector temporaries.
        let temp_values: u128 = self.program.temp_lengths(&dims).iter().map(|&n| n as u128).sum();
        if temp_values > 0 {
            tessera_formats::budget::check_allocation(
                &format!(
                    "the precompute's vector temporaries ({temp_values} values on each of {} threads)",
                    rayon::current_num_threads()
                ),
                temp_values * 8 * rayon::current_num_threads() as u128,
            )?;
        }
        let out_format = self.lowered.output.format.clone();
        out_format.check_shape(&out_shape)?;
        if self.fills_in {
            // Every component becomes a stored entry: a value and, at
            // most, a 64-bit coordinate.
            let components: u128 = out_shape.iter().map(|&d| d as u128).product();
            let dims: Vec<String> = out_shape.iter().map(usize::to_string).collect();
            tessera_formats::budget::check_allocation(
                &format!(
                    "the output {} ({}, {out_format}), which fills in,",
                    self.lowered.output.name,
                    dims.join(" x ")
                ),
                components * 16,
            )?;
        }
        let mut out = match self.lowered.assembly {
            OutputAssembly::Dense => {
                let n = tessera_formats::tensor::checked_product(&out_shape)?;
                OutputState::Dense {
                    shape: out_shape.clone(),
                    format: out_format.clone(),
                    values: output::zeroed_values(n),
                }
            }
            OutputAssembly::Append => {
                let adder = Adder::of(self.program.value_type);
                let workspace = workspace_vars(&self.lowered.cin).map(|vars| {
                    let workspace = Workspace::new(&extents(&vars, &index_sizes)).with_adder(adder);
                    if crate::cin::workspace_unsorted(&out_format, vars.len()) {
                        workspace.in_any_order()
                    } else {
                        workspace
                    }
                });
                let mut assembler = Assembler::new(out_format.clone(), &out_shape);
                assembler.adder = adder;
                // Runs of one kernel tend to make results of one size: reserve
                // the last one's, sparing the copies of growing arrays.
                if let Some(sizes) = &*self.last_output.lock().unwrap_or_else(|e| e.into_inner()) {
                    assembler.reserve(sizes);
                }
                OutputState::Append { assembler, workspace }
            }
            OutputAssembly::OnPattern { operand } => OutputState::Dense {
                shape: out_shape.clone(),
                format: out_format.clone(),
                values: output::zeroed_values(tensors[operand].values().len()),
            },
            OutputAssembly::Packed => OutputState::Packed {
                shape: out_shape.clone(),
                format: out_format.clone(),
                entries: tessera_formats::CoordinateList::new(&out_shape),
                workspace: Workspace::new(&out_shape).with_adder(Adder::of(self.program.value_type)),
            },
        };
        let out_levels = dense_levels(&out_format, &out_shape);
        let out_level_formats: Vec<LevelFormat> = out_format.levels().iter().map(|l| l.level).collect();
        let input_level_formats: Vec<Vec<LevelFormat>> = tensors
            .iter()
            .map(|t| t.format().levels().iter().map(|l| l.level).collect())
            .collect();
        let chunk = (0, self.program.chunking.as_ref().map_or(0, |c| dims[c.var as usize]));
        let mut bind = Bindings {
            formats: input_level_formats.iter().map(Vec::as_slice).collect(),
            levels: tensors.iter().map(|t| t.levels()).collect(),
            values: tensors.iter().map(|t| t.values()).collect(),
            versions: tensors.iter().map(|t| t.version()).collect(),
            dims,
            chunk,
            threads: 1,
        };
        bind.formats.push(&out_level_formats);
        bind.levels.push(&out_levels);
        let r = f(&bind, &mut out);
        Ok((r, out))
    }
}

impl Kernel {
    /// The conversions kept for later runs (see [`Version`]), one per
    /// converted operand that has run.
    pub fn cached_conversions(&self) -> Vec<Arc<AnyTensor>> {
        let cache = self.conversions.lock().unwrap_or_else(|e| e.into_inner());
        cache.iter().flatten().map(|(_, t)| t.clone()).collect()
    }

    /// The values of each operand of `bind` not holding `f64`, widened for
    /// the interpreter: cached while the operand's tensor is unchanged, so
    /// a kernel interpreted again does not widen again.
    fn widened(&self, bind: &Bindings<'_>) -> Result<Vec<Option<Arc<Vec<f64>>>>> {
        let mut cache = self.widenings.lock().unwrap_or_else(|e| e.into_inner());
        bind.values
            .iter()
            .zip(&bind.versions)
            .enumerate()
            .map(|(k, (values, &version))| {
                if matches!(values, ValueSlice::F64(_)) {
                    return Ok(None);
                }
                if let Some((v, wide)) = &cache[k] {
                    if *v == version {
                        return Ok(Some(wide.clone()));
                    }
                }
                tessera_formats::budget::check_allocation(
                    &format!(
                        "the interpreter's 64-bit copy of {}'s {} values",
                        self.lowered.operands[k].name,
                        values.value_type()
                    ),
                    values.len() as u128 * 8,
                )?;
                let wide = Arc::new(values.to_words());
                cache[k] = Some((version, wide.clone()));
                Ok(Some(wide))
            })
            .collect()
    }

    /// Operand `operand`'s tensor `t` in `format`: the cached conversion
    /// when it was made from this version of `t`, otherwise converted now
    /// (outside the lock: other runs go on meanwhile) and cached.
    fn converted(&self, operand: usize, t: TensorRef<'_>, format: &Format) -> Result<Arc<AnyTensor>> {
        let lock = || self.conversions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((version, tensor)) = &lock()[operand] {
            if *version == t.version() {
                return Ok(tensor.clone());
            }
        }
        let tensor = Arc::new(t.convert(format)?);
        lock()[operand] = Some((t.version(), tensor.clone()));
        Ok(tensor)
    }
}

fn workspace_vars(cin: &crate::cin::Cin) -> Option<Vec<crate::cin::LoopVar>> {
    use crate::cin::Cin;
    match cin {
        Cin::Workspace { vars, .. } => Some(vars.clone()),
        Cin::Forall { body, .. } => workspace_vars(body),
        Cin::Where { producer, consumer, .. } => workspace_vars(consumer).or_else(|| workspace_vars(producer)),
        Cin::Sequence(parts) => parts.iter().find_map(workspace_vars),
        Cin::Assign { .. } => None,
    }
}

fn extents(vars: &[crate::cin::LoopVar], sizes: &crate::notation::IndexSizes) -> Vec<usize> {
    vars.iter().map(|v| sizes.get(v.name()).unwrap_or(0)).collect()
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}
