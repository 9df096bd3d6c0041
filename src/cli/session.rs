//! A session: named tensors, the formats asked for them, index sizes, and
//! an engine — what `eval` builds from its options and the REPL builds one
//! command at a time.
//!
//! A statement goes through [`Session::prepare`] (parse, find its tensors,
//! check shapes, choose the output format, compile) and [`Session::run`];
//! the result can be put back as a named tensor for the next statement.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tessera_engine::notation::{check, parse_statement, AssignOp, Semiring, Statement};
use tessera_engine::runtime::{default_output, CancelToken, Progress};
use tessera_engine::schedule::Schedule;
use tessera_engine::{default_output_format, Engine, EngineError, EvalOptions, Inputs, Kernel};
use tessera_formats::io::FileValue;
use tessera_formats::{AnyTensor, CoordinateList, Format, Tensor, Value, ValueType};

use super::args::TensorArgs;
use super::engine::{engine_for, tier_choice, tier_that_ran, Tier};
use super::error::{CliError, Result};
use super::files;
use super::format_spec::FormatSpec;
use super::generate::{generated_value, shape_text, GenSpec};
use super::progress::{while_running, Spinner, LARGE_ENTRIES};
use super::types::retyped;

/// A tensor of the session and where it came from.
pub struct Named {
    pub tensor: AnyTensor,
    /// `read from a.mtx, the default for a sparse matrix`.
    pub origin: String,
}

/// Named tensors, requested formats and index sizes, with an engine.
pub struct Session {
    engine: Engine,
    tier: Tier,
    /// Threads kernels may use; `None`: every core for kernels with enough work.
    threads: Option<usize>,
    /// Cancelled to interrupt the running statement (Ctrl-C in the REPL).
    cancel: CancelToken,
    /// The schedule statements are compiled with.
    schedule: Schedule,
    /// The semiring statements are read in (`--semiring`, `:semiring`).
    semiring: Option<Semiring>,
    /// The tensors whose fill was given (`--fill`, `:fill`): a semiring
    /// leaves them as they are.
    given_fills: BTreeSet<String>,
    tensors: BTreeMap<String, Named>,
    formats: BTreeMap<String, FormatSpec>,
    /// Value types asked for (`-t`, `:type`): of inputs, or of results.
    types: BTreeMap<String, ValueType>,
    sizes: BTreeMap<String, usize>,
    /// What the tiers reported and the user was told, so that a kernel
    /// run again is not reported again.
    reported: BTreeSet<String>,
    /// Where commands come from, for advice in errors.
    front: Front,
}

/// The front end a session serves: its errors advise its own commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Front {
    /// `tessera eval`: options.
    Eval,
    /// `tessera repl`: `:` commands.
    Repl,
}

impl Front {
    /// How to give a tensor a statement names.
    fn missing_tensor(self, name: &str) -> String {
        match self {
            Front::Eval => format!("give it with -i {name}:PATH or -g {name}:DIMS:DENSITY"),
            Front::Repl => format!(":load {name} PATH or :gen {name} DIMS DENSITY first"),
        }
    }
    /// The option or command that asked for `name`'s format.
    fn format_context(self, name: &str, spec: &FormatSpec) -> String {
        match self {
            Front::Eval => format!("-f {name}:{spec}"),
            Front::Repl => format!(":format {name} {spec}"),
        }
    }
    /// How to ask for `name` to hold values of type `ty`.
    fn type_advice(self, name: &str, ty: ValueType) -> String {
        match self {
            Front::Eval => format!("give -t {name}:{ty}"),
            Front::Repl => format!("ask for it with :type {name} {ty} first"),
        }
    }
    /// How to give the size of an index variable.
    fn missing_size(self, var: &str) -> String {
        match self {
            Front::Eval => format!("give it with -d {var}:SIZE"),
            Front::Repl => format!(":size {var} SIZE first"),
        }
    }
}

/// A statement compiled for the session's tensors.
pub struct Prepared {
    text: String,
    statement: Statement,
    kernel: Arc<Kernel>,
    /// The tensors the statement reads, in the order it names them.
    reads: Vec<String>,
    output_shape: Vec<usize>,
    /// Why the output has its format.
    output_why: String,
    /// How long compiling took (nearly nothing when the kernel was cached).
    compile_time: Duration,
}

impl Prepared {
    /// The compiled kernel.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }
    /// The name of the tensor the statement computes.
    pub fn output_name(&self) -> &str {
        &self.statement.lhs.tensor
    }
}

/// Times of repeated runs.
pub struct Timing {
    /// Each run's time; the first includes compiling.
    pub runs: Vec<Duration>,
    /// The time compiling took.
    pub compile: Duration,
    pub tier: Tier,
    /// How many of the runs the interpreter served; the others ran compiled.
    pub interpreted: u64,
    /// How many runs were split into chunks, into how many in all, and
    /// the most threads one had.
    pub split: (u64, u64, usize),
}

impl Timing {
    pub fn min(&self) -> Duration {
        self.runs.iter().copied().min().unwrap_or_default()
    }
    pub fn median(&self) -> Duration {
        let mut sorted = self.runs.clone();
        sorted.sort_unstable();
        match sorted.len() {
            0 => Duration::ZERO,
            n if n % 2 == 1 => sorted[n / 2],
            n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2,
        }
    }
}

impl Session {
    /// A session whose kernels run on `tier`, for commands from `front`.
    pub fn new(tier: Tier, front: Front) -> Result<Session> {
        Ok(Session {
            engine: engine_for(tier)?,
            tier,
            threads: None,
            cancel: CancelToken::new(),
            schedule: Schedule::new(),
            semiring: None,
            given_fills: BTreeSet::new(),
            tensors: BTreeMap::new(),
            formats: BTreeMap::new(),
            types: BTreeMap::new(),
            sizes: BTreeMap::new(),
            reported: BTreeSet::new(),
            front,
        })
    }

    pub fn tier(&self) -> Tier {
        self.tier
    }

    /// Sets the threads kernels may use (`None`: every core for kernels
    /// with enough work).
    pub fn set_threads(&mut self, threads: Option<usize>) {
        self.threads = threads;
    }

    /// The threads kernels may use, when set.
    pub fn threads(&self) -> Option<usize> {
        self.threads
    }

    /// Sets the schedule later statements are compiled with.
    pub fn set_schedule(&mut self, schedule: Schedule) {
        self.schedule = schedule;
    }

    /// The schedule statements are compiled with.
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// Reads later statements in `semiring` (`None`: as written): `*` and
    /// `+` become its operations and sums its reduction, and the tensors a
    /// statement reads take its zero as fill unless theirs was given.
    pub fn set_semiring(&mut self, semiring: Option<Semiring>) {
        self.semiring = semiring;
    }

    /// The semiring statements are read in, if any.
    pub fn semiring(&self) -> Option<Semiring> {
        self.semiring
    }

    /// The token that interrupts the running statement when cancelled; it
    /// is reset when a statement starts.
    pub fn cancel_token(&self) -> CancelToken {
        self.cancel.clone()
    }

    pub fn get(&self, name: &str) -> Option<&Named> {
        self.tensors.get(name)
    }

    /// The session's tensors by name.
    pub fn tensors(&self) -> impl Iterator<Item = (&str, &Named)> {
        self.tensors.iter().map(|(n, t)| (n.as_str(), t))
    }

    /// Index sizes given with `-d` / `:size`.
    pub fn sizes(&self) -> impl Iterator<Item = (&str, usize)> {
        self.sizes.iter().map(|(v, s)| (v.as_str(), *s))
    }

    /// Formats asked for names that are not tensors (yet).
    pub fn pending_formats(&self) -> impl Iterator<Item = (&str, &FormatSpec)> {
        self.formats
            .iter()
            .filter(|(n, _)| !self.tensors.contains_key(*n))
            .map(|(n, f)| (n.as_str(), f))
    }

    /// A Matrix Market file holds a vector as an `n x 1` (or `1 x n`)
    /// matrix: one that a statement reads with one index becomes the
    /// vector it was written from, and its origin says so.
    fn read_as_vectors(&mut self, statement: &Statement) -> Result<()> {
        for access in statement.rhs.accesses() {
            let Some(named) = self.tensors.get(&access.tensor) else {
                continue;
            };
            let shape = named.tensor.shape();
            let Some(unit) = (access.indices.len() == 1 && shape.len() == 2)
                .then(|| shape.iter().position(|&d| d == 1))
                .flatten()
            else {
                continue;
            };
            let kept = 1 - unit;
            let format = if named.tensor.format().is_dense() {
                Format::dense(1)
            } else {
                Format::sparse_vector()
            };
            // In its own type: an `i64` beyond 2^53 is not rounded.
            let vector = match &named.tensor {
                AnyTensor::F64(t) => as_vector(t, kept, format).map(AnyTensor::from),
                AnyTensor::F32(t) => as_vector(t, kept, format).map(AnyTensor::from),
                AnyTensor::I64(t) => as_vector(t, kept, format).map(AnyTensor::from),
                AnyTensor::I32(t) => as_vector(t, kept, format).map(AnyTensor::from),
                AnyTensor::Bool(t) => as_vector(t, kept, format).map(AnyTensor::from),
                AnyTensor::C64(t) => as_vector(t, kept, format).map(AnyTensor::from),
            };
            let vector = vector.map_err(|source| CliError::Format {
                context: format!("{} read as a vector", access.tensor),
                source,
            })?;
            let origin = format!(
                "{}; a {} x {} matrix read as a vector",
                named.origin, shape[0], shape[1]
            );
            self.insert(&access.tensor, vector, origin);
        }
        Ok(())
    }

    /// Adds or replaces a tensor.
    pub fn insert(&mut self, name: &str, tensor: AnyTensor, origin: String) {
        self.tensors.insert(name.to_string(), Named { tensor, origin });
    }

    /// Removes a tensor (and any format or type asked for it); whether
    /// there was one.
    pub fn remove(&mut self, name: &str) -> bool {
        self.formats.remove(name);
        self.types.remove(name);
        self.tensors.remove(name).is_some()
    }

    /// The type asked for `name`: `f64` unless `-t` or `:type` said.
    fn type_of(&self, name: &str) -> ValueType {
        self.types.get(name).copied().unwrap_or_default()
    }

    /// Asks for `name` to hold values of type `ty`: an input's values are
    /// converted to it now (or read as it when it is loaded or generated);
    /// a statement that computes `name` must give that type. Values are
    /// rounded to `f32` or `bool`; an integer type takes only integers it
    /// holds, and a real type only complex values whose imaginary parts are
    /// 0, and refuses the tensor otherwise (with the first value that is
    /// not), as it would refuse a file's values.
    pub fn set_type(&mut self, name: &str, ty: ValueType, context: &str) -> Result<()> {
        if let Some(named) = self.tensors.get_mut(name) {
            if named.tensor.value_type() != ty {
                // Complex values have no cast to a real type: their parts do.
                let advice = match named.tensor.value_type() {
                    ValueType::C64 => "real(...) and imag(...) in a statement give its parts".to_string(),
                    _ => format!("to convert it anyway, cast it in a statement: {ty}(...)"),
                };
                named.tensor = retyped(&named.tensor, ty)
                    .map_err(|reason| CliError::bad(context, format!("{name}: {reason} ({advice})")))?;
                named.origin = format!("{}; as {ty}", named.origin);
            }
        }
        self.types.insert(name.to_string(), ty);
        Ok(())
    }

    /// The value types asked for names that are not tensors (yet).
    pub fn pending_types(&self) -> impl Iterator<Item = (&str, ValueType)> {
        self.types
            .iter()
            .filter(|(n, _)| !self.tensors.contains_key(*n))
            .map(|(n, t)| (n.as_str(), *t))
    }

    /// Reads `path` into tensor `name`, in the format asked for it if any,
    /// as the type asked for it. A complex file is read only as `c64`,
    /// when asked: it would make a statement complex unasked.
    pub fn load(&mut self, name: &str, path: &Path, context: &str) -> Result<()> {
        let asked = self.formats.get(name).map(|f| (f, self.front.format_context(name, f)));
        let asked = asked.as_ref().map(|(f, c)| (*f, c.as_str()));
        let ty = self.type_of(name);
        if ty != ValueType::C64 && files::holds_complex(path, context)? {
            return Err(CliError::bad(
                context,
                format!(
                    "{} holds complex values, which are read as c64, not {ty}: {}",
                    path.display(),
                    self.front.type_advice(name, ValueType::C64)
                ),
            ));
        }
        let (tensor, origin) = files::load(path, asked, ty, context)?;
        self.insert(name, tensor, origin + &as_type(ty));
        Ok(())
    }

    /// Generates tensor `name`, in the format asked for it if any, with
    /// values of the type asked for it ([`generated_value`]; for `c64`,
    /// [`GenSpec::generate_complex`]).
    pub fn generate(&mut self, name: &str, spec: &GenSpec, context: &str) -> Result<()> {
        let bad = |reason| CliError::bad(context, reason);
        let spinner = Spinner::start(
            format!("generating {name}: {spec}"),
            spec.nonzeros().map_err(bad)? > LARGE_ENTRIES,
        );
        let ty = self.type_of(name);
        let (format, why) = match self.formats.get(name) {
            Some(f) => {
                let asked = self.front.format_context(name, f);
                (files::resolve(f, spec.shape.len(), &asked)?, "as asked")
            }
            None if spec.is_full() => (spec.natural_format(), "the default at density 1"),
            None => (spec.natural_format(), "the default for a sparse tensor"),
        };
        let packing = format!("packing {name} into {format}");
        let tensor = if ty == ValueType::C64 {
            let entries = spec.generate_complex(name).map_err(bad)?;
            spinner.say(packing);
            AnyTensor::from(files::pack(&entries, format, context)?)
        } else {
            let mut entries = spec.generate(name).map_err(bad)?;
            entries.map_values(|v| generated_value(v, ty));
            spinner.say(packing);
            // Integers from 1 to 9 and truth values are exact in `f64`.
            AnyTensor::narrowed(files::pack(&entries, format, context)?, ty)
        };
        let typed = match ty {
            ty if ty.is_integer() => format!("; as {ty}, values 1 to 9"),
            ValueType::C64 => "; as c64, real and imaginary parts in (0, 1]".to_string(),
            ty => as_type(ty),
        };
        self.insert(name, tensor, format!("generated: {spec}; {why}{typed}"));
        Ok(())
    }

    /// Makes `fill` the value of the components tensor `name` does not
    /// store, as the user gave it: a semiring does not change it.
    pub fn set_fill(&mut self, name: &str, fill: f64, context: &str) -> Result<()> {
        self.change_fill(name, fill, context)?;
        self.given_fills.insert(name.to_string());
        Ok(())
    }

    fn change_fill(&mut self, name: &str, fill: f64, context: &str) -> Result<()> {
        let named = self
            .tensors
            .get_mut(name)
            .ok_or_else(|| CliError::bad(context, format!("no tensor {name}")))?;
        if named.tensor.fill() == fill {
            return Ok(());
        }
        let ty = named.tensor.value_type();
        if ty == ValueType::Bool && fill != 0.0 && fill != 1.0 {
            return Err(CliError::bad(
                context,
                format!("{name} holds bool values: its fill is 0 or 1, not {fill}"),
            ));
        }
        let holds = match ty {
            ValueType::I64 => i64::from_real(fill).is_some(),
            ValueType::I32 => i32::from_real(fill).is_some(),
            _ => true,
        };
        if !holds {
            return Err(CliError::bad(
                context,
                format!("{name} holds {ty} values: its fill is an integer {ty} holds, not {fill}"),
            ));
        }
        named.tensor = named
            .tensor
            .clone()
            .with_fill(fill)
            .map_err(|source| CliError::Format {
                context: context.to_string(),
                source,
            })?;
        if fill != 0.0 {
            named.origin = format!("{}; fill {fill}", named.origin);
        }
        Ok(())
    }

    /// Asks for `name` to be stored as `spec`: converts it now if it is a
    /// tensor; otherwise applies when it is loaded, generated or computed.
    pub fn set_format(&mut self, name: &str, spec: FormatSpec) -> Result<()> {
        let context = self.front.format_context(name, &spec);
        if let Some(named) = self.tensors.get_mut(name) {
            let format = files::resolve(&spec, named.tensor.order(), &context)?;
            let spinner = Spinner::start(
                format!("converting {name} to {format}"),
                named.tensor.stored() > LARGE_ENTRIES,
            );
            named.tensor = named.tensor.convert(&format).map_err(|source| CliError::Format {
                context: format!("{context}: converting {name} to {format}"),
                source,
            })?;
            drop(spinner);
            named.origin = format!("{}; converted to {spec}", named.origin);
        }
        self.formats.insert(name.to_string(), spec);
        Ok(())
    }

    /// Fixes the size of index variable `var`.
    pub fn set_size(&mut self, var: &str, size: usize) {
        self.sizes.insert(var.to_string(), size);
    }

    fn statement_error(&self, text: &str, source: EngineError) -> CliError {
        let hint = match &source {
            EngineError::UnknownTensor { name, .. } => {
                format!(" ({})", self.front.missing_tensor(name))
            }
            EngineError::UnknownSize { var } => format!(" ({})", self.front.missing_size(var)),
            EngineError::Schedule { .. } => format!(" (schedule `{}`)", self.schedule),
            _ => String::new(),
        };
        CliError::Statement {
            statement: text.trim().to_string(),
            source: Box::new(source),
            hint,
        }
    }

    /// `text` read in `semiring`, the fills of the tensors it reads set to
    /// the semiring's zero unless given.
    fn in_semiring(&mut self, semiring: Semiring, text: &str) -> Result<String> {
        let statement = parse(text)?;
        let rewritten = semiring
            .rewrite(&statement)
            .map_err(|e| self.statement_error(text, e))?;
        let mut reads: Vec<&str> = statement.rhs.accesses().iter().map(|a| a.tensor.as_str()).collect();
        if statement.op == AssignOp::AddAssign {
            reads.push(&statement.lhs.tensor);
        }
        for name in reads {
            if self.tensors.contains_key(name) && !self.given_fills.contains(name) {
                let context = match self.front {
                    Front::Eval => format!("--semiring {semiring}: the fill of {name}"),
                    Front::Repl => format!(":semiring {semiring}: the fill of {name}"),
                };
                self.change_fill(name, semiring.zero(), &context)?;
            }
        }
        Ok(rewritten.to_string())
    }

    /// Parses, checks and compiles a statement for the session's tensors
    /// (read in the session's semiring, if one is set).
    pub fn prepare(&mut self, text: &str) -> Result<Prepared> {
        let rewritten;
        let text = match self.semiring {
            Some(semiring) => {
                rewritten = self.in_semiring(semiring, text)?;
                rewritten.as_str()
            }
            None => text,
        };
        let statement = parse(text)?;
        self.read_as_vectors(&statement)?;
        let err = |e| self.statement_error(text, e);
        let mut reads: Vec<String> = Vec::new();
        let mut named = |tensor: &str, column: usize| -> Result<()> {
            if reads.iter().any(|r| r == tensor) {
                return Ok(());
            }
            if !self.tensors.contains_key(tensor) {
                return Err(err(EngineError::UnknownTensor {
                    name: tensor.to_string(),
                    column,
                }));
            }
            reads.push(tensor.to_string());
            Ok(())
        };
        if statement.op == AssignOp::AddAssign {
            named(&statement.lhs.tensor, statement.lhs.span.column())?;
        }
        for access in statement.rhs.accesses() {
            named(&access.tensor, access.span.column())?;
        }
        let shape_of = |n: &str| {
            reads
                .iter()
                .any(|r| r == n)
                .then(|| self.tensors.get(n).map(|t| t.tensor.shape().to_vec()))
                .flatten()
        };
        let size_of = |v: &str| self.sizes.get(v).copied();
        let sizes = check(&statement, &shape_of, &size_of).map_err(err)?;
        let output_shape = sizes.output_shape().to_vec();

        let formats: Vec<(&str, Format)> = reads
            .iter()
            .map(|n| (n.as_str(), self.tensors[n].tensor.format().clone()))
            .collect();
        let order = statement.lhs.indices.len();
        let (output, output_why, fallback) = self.choose_output(&statement, &formats)?;
        let start = Instant::now();
        let fills: Vec<(&str, f64)> = reads
            .iter()
            .map(|n| (n.as_str(), self.tensors[n].tensor.fill()))
            .collect();
        let types: Vec<(&str, ValueType)> = reads
            .iter()
            .map(|n| (n.as_str(), self.tensors[n].tensor.value_type()))
            .collect();
        let compile = |output: &Format| {
            self.engine
                .compile_with_types(text, &formats, &fills, &types, output, &self.schedule)
        };
        let (kernel, output_why) = match compile(&output) {
            Ok(kernel) => (kernel, output_why),
            // A format chosen by default that the engine cannot produce
            // here: the engine's own default for sparse results instead.
            Err(_) if fallback => {
                let output = default_output_format(order, false);
                let kernel = compile(&output).map_err(err)?;
                (kernel, format!("{output_why} could not be assembled; {output} instead"))
            }
            Err(e) => return Err(err(e)),
        };
        let lhs = &statement.lhs.tensor;
        if let Some(&asked) = self.types.get(lhs).filter(|&&t| t != kernel.value_type()) {
            let given = kernel.value_type();
            return Err(err(EngineError::Type {
                column: statement.lhs.span.column(),
                message: format!(
                    "{lhs} is asked to hold {asked} values and the statement gives {given}: cast it, as {asked}(...)"
                ),
            }));
        }
        Ok(Prepared {
            text: text.trim().to_string(),
            statement,
            kernel,
            reads,
            output_shape,
            output_why,
            compile_time: start.elapsed(),
        })
    }

    /// The output's format, why, and whether another may replace it.
    fn choose_output(&self, statement: &Statement, inputs: &[(&str, Format)]) -> Result<(Format, String, bool)> {
        let lhs = &statement.lhs.tensor;
        let order = statement.lhs.indices.len();
        if let Some(spec) = self.formats.get(lhs) {
            let context = self.front.format_context(lhs, spec);
            let format = spec.resolve(order).map_err(|reason| CliError::bad(context, reason))?;
            return Ok((format, "as asked".into(), false));
        }
        if statement.op == AssignOp::AddAssign {
            if let Some(t) = self.tensors.get(lhs) {
                return Ok((
                    t.tensor.format().clone(),
                    format!("{lhs} is added to, in its format"),
                    false,
                ));
            }
        }
        let formats: Vec<(String, Format)> = inputs.iter().map(|(n, f)| (n.to_string(), f.clone())).collect();
        let (format, why) = default_output(statement, &formats);
        // A sparse input's format may not be one the engine can assemble
        // here: the caller then falls back to the engine's own default.
        let fallback = !format.is_dense() && inputs.iter().any(|(_, f)| *f == format);
        Ok((format, why, fallback))
    }

    /// Calls `f` with the tensors a prepared statement reads and the sizes.
    pub fn with_inputs<T>(&self, prepared: &Prepared, f: impl FnOnce(&Inputs<'_>, &[(String, usize)]) -> T) -> T {
        let mut inputs = Inputs::new();
        for name in &prepared.reads {
            inputs.insert_any(name, &self.tensors[name].tensor);
        }
        let sizes: Vec<(String, usize)> = self.sizes.iter().map(|(v, s)| (v.clone(), *s)).collect();
        f(&inputs, &sizes)
    }

    /// What the tiers could not do for `prepared` (a kernel interpreted, or
    /// handed to another tier) that the user has not been told yet: the
    /// answer is right, the tier is not the one asked.
    pub fn new_diagnostics(&mut self, prepared: &Prepared) -> Vec<String> {
        prepared
            .kernel()
            .diagnostics()
            .into_iter()
            .map(|d| d.to_string())
            .filter(|text| self.reported.insert(text.clone()))
            .collect()
    }

    /// Runs a prepared statement once.
    pub fn run(&self, prepared: &Prepared) -> Result<AnyTensor> {
        self.with_inputs(prepared, |inputs, sizes| {
            let options = EvalOptions {
                sizes: sizes.to_vec(),
                tier: tier_choice(self.tier),
                threads: self.threads,
                cancel: (self.front == Front::Repl).then(|| self.cancel.clone()),
                progress: (self.front == Front::Repl).then(Progress::new),
                ..EvalOptions::default()
            };
            let stored: usize = prepared.reads.iter().map(|n| self.tensors[n].tensor.stored()).sum();
            let run = || prepared.kernel.run_typed(inputs, &options);
            let result = match &options.progress {
                Some(progress) => while_running(&prepared.text, progress, stored > LARGE_ENTRIES, run),
                None => run(),
            };
            result.map_err(|e| self.statement_error(&prepared.text, e))
        })
    }

    /// Runs a prepared statement `n` times (at least once); the result and
    /// the times, the first including the compilation done by
    /// [`prepare`](Self::prepare).
    pub fn time(&self, prepared: &Prepared, n: usize) -> Result<(AnyTensor, Timing)> {
        let before = prepared.kernel.stats();
        let start = Instant::now();
        let mut result = self.run(prepared)?;
        let mut runs = vec![start.elapsed() + prepared.compile_time];
        for _ in 1..n {
            // The last result is dropped before the next run, as a loop
            // that uses each result does: two results alive at once would
            // time the allocator mapping fresh pages for the second.
            drop(result);
            let start = Instant::now();
            result = self.run(prepared)?;
            runs.push(start.elapsed());
        }
        let timing = Timing {
            runs,
            compile: prepared.compile_time,
            tier: tier_that_ran(self.tier, &prepared.kernel),
            interpreted: prepared.kernel.stats().interpreted_runs - before.interpreted_runs,
            split: {
                let after = prepared.kernel.stats();
                (
                    after.split_runs - before.split_runs,
                    after.chunks - before.chunks,
                    after.most_threads,
                )
            },
        };
        Ok((result, timing))
    }

    /// The formats of a prepared statement's tensors and why each has it:
    /// the head of `--print plan`.
    pub fn describe(&self, prepared: &Prepared) -> String {
        let tier = match (self.tier, prepared.kernel.is_compiled()) {
            (Tier::Auto, false) => format!(
                "auto: interpreted until hot, compiled at once when a run reads {} stored values or more",
                self.engine.promotion().first_run_work
            ),
            (tier, _) => format!("{} ({tier} asked)", tier_that_ran(tier, &prepared.kernel)),
        };
        let mut text = format!("statement: {}\ntier: {tier}\n", prepared.statement);
        for name in &prepared.reads {
            let t = &self.tensors[name];
            text.push_str(&format!(
                "{name}: {}, {}{} ({})\n",
                t.tensor.format(),
                shape_text(t.tensor.shape()),
                of_type(t.tensor.value_type()),
                t.origin
            ));
        }
        text.push_str(&format!(
            "{}: {}, {}{} (output, {})\n",
            prepared.output_name(),
            prepared.kernel.output_format(),
            shape_text(&prepared.output_shape),
            of_type(prepared.kernel.value_type()),
            prepared.output_why
        ));
        text
    }
}

/// A matrix of one row or one column as the vector it holds: its mode
/// `kept` (the other has size 1), in `format`, values and fill as they are.
fn as_vector<V: Value>(matrix: &Tensor<V>, kept: usize, format: Format) -> tessera_formats::Result<Tensor<V>> {
    let mut entries = CoordinateList::new(&[matrix.shape()[kept]]);
    for (c, v) in matrix.to_coordinates().iter() {
        entries.push(&[c[kept]], v)?;
    }
    Tensor::pack_with_fill(&entries, format, matrix.fill())
}

/// `; as f32` for a tensor's origin, nothing for the default `f64`.
fn as_type(ty: ValueType) -> String {
    match ty {
        ValueType::F64 => String::new(),
        ty => format!("; as {ty}"),
    }
}

/// ` of f32` after a shape, nothing for the default `f64`.
pub fn of_type(ty: ValueType) -> String {
    match ty {
        ValueType::F64 => String::new(),
        ty => format!(" of {ty}"),
    }
}

/// Parses a statement, errors carrying its column.
pub fn parse(text: &str) -> Result<Statement> {
    parse_statement(text).map_err(|source| CliError::Statement {
        statement: text.trim().to_string(),
        source: Box::new(source),
        hint: String::new(),
    })
}

/// A session holding the tensors, formats and sizes of the command line:
/// formats first (so that inputs are packed once, in them), then sizes,
/// then `-i` files and `-g` tensors in the order given.
pub fn from_args(args: &TensorArgs, front: Front) -> Result<Session> {
    let mut session = Session::new(args.tier, front)?;
    session.set_threads(args.threads.map(|t| t as usize));
    if let Some(schedule) = &args.schedule {
        session.set_schedule(schedule.clone());
    }
    let mut seen: Vec<&str> = Vec::new();
    for f in &args.formats {
        if seen.contains(&f.name.as_str()) {
            return Err(CliError::bad(
                format!("-f {}:{}", f.name, f.value),
                format!("a format for {} is already given", f.name),
            ));
        }
        seen.push(&f.name);
        session.set_format(&f.name, f.value.clone())?;
    }
    for d in &args.sizes {
        session.set_size(&d.name, d.value);
    }
    let mut typed: Vec<&str> = Vec::new();
    for t in &args.types {
        if typed.contains(&t.name.as_str()) {
            return Err(CliError::bad(
                format!("-t {}:{}", t.name, t.value),
                format!("a type for {} is already given", t.name),
            ));
        }
        typed.push(&t.name);
        session.set_type(&t.name, t.value, &format!("-t {}:{}", t.name, t.value))?;
    }
    let mut given: Vec<&str> = Vec::new();
    for i in &args.inputs {
        let context = format!("-i {}", i.name);
        given_once(&mut given, &i.name, &context)?;
        session.load(&i.name, &i.value, &context)?;
    }
    for g in &args.generated {
        let context = format!("-g {}", g.name);
        given_once(&mut given, &g.name, &context)?;
        session.generate(&g.name, &g.value, &context)?;
    }
    for f in &args.fills {
        session.set_fill(&f.name, f.value, &format!("--fill {}:{}", f.name, f.value))?;
    }
    Ok(session)
}

/// Records that `name` is given, refusing a second time.
fn given_once<'a>(given: &mut Vec<&'a str>, name: &'a str, context: &str) -> Result<()> {
    if given.contains(&name) {
        return Err(CliError::bad(context, format!("{name} is given twice (with -i or -g)")));
    }
    given.push(name);
    Ok(())
}
