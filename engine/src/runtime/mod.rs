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

pub mod output;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tessera_formats::{Format, LevelFormat, Tensor};

use crate::bytecode::Program;
use crate::cin::{lower, CinPrinter, Lowered, OutputAssembly};
use crate::error::{EngineError, Result};
use crate::interp::{self, Bindings};
use crate::notation::{check, parse_statement, Statement};
use crate::plan::emit;
use output::{dense_levels, Assembler, OutputState, Workspace};

/// Named input tensors for one evaluation.
#[derive(Default, Clone)]
pub struct Inputs<'a> {
    tensors: Vec<(String, &'a Tensor<f64>)>,
}

impl<'a> Inputs<'a> {
    pub fn new() -> Self {
        Inputs {
            tensors: Vec::new(),
        }
    }
    /// Adds (or replaces) the tensor called `name`.
    #[must_use]
    pub fn with(mut self, name: &str, tensor: &'a Tensor<f64>) -> Self {
        self.insert(name, tensor);
        self
    }
    pub fn insert(&mut self, name: &str, tensor: &'a Tensor<f64>) {
        self.tensors.retain(|(n, _)| n != name);
        self.tensors.push((name.to_string(), tensor));
    }
    pub fn get(&self, name: &str) -> Option<&'a Tensor<f64>> {
        self.tensors
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| *t)
    }
}

/// Options of one evaluation.
#[derive(Default, Clone, Debug)]
pub struct EvalOptions {
    /// The output's format; by default dense when every input is dense,
    /// otherwise sparse ([`default_output_format`]).
    pub output_format: Option<Format>,
    /// Sizes of index variables that no input fixes.
    pub sizes: Vec<(String, usize)>,
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

#[derive(Clone, PartialEq, Eq, Hash)]
struct KernelKey {
    statement: String,
    inputs: Vec<(String, Vec<LevelFormat>, Option<Vec<usize>>)>,
    output: Vec<LevelFormat>,
    output_modes: Option<Vec<usize>>,
}

/// Holds compiled kernels; cheap to share between threads.
#[derive(Default)]
pub struct Engine {
    cache: Mutex<HashMap<KernelKey, Arc<Kernel>>>,
}

impl Engine {
    pub fn new() -> Self {
        Engine::default()
    }

    /// Parses, compiles (or reuses) and runs `statement` on `inputs`.
    pub fn eval(&self, statement: &str, inputs: &Inputs<'_>) -> Result<Tensor<f64>> {
        self.eval_with(statement, inputs, &EvalOptions::default())
    }

    /// [`eval`](Self::eval) with an output format and index sizes.
    pub fn eval_with(
        &self,
        statement: &str,
        inputs: &Inputs<'_>,
        options: &EvalOptions,
    ) -> Result<Tensor<f64>> {
        let stmt = parse_statement(statement)?;
        let formats = formats_of(&stmt, inputs)?;
        let output = match &options.output_format {
            Some(f) => f.clone(),
            None => default_output_format(
                stmt.lhs.indices.len(),
                formats.iter().all(|(_, f)| f.is_dense()),
            ),
        };
        let kernel = self.compile_statement(&stmt, &formats, &output)?;
        kernel.run_with_sizes(inputs, &options.sizes)
    }

    /// Compiles `statement` for inputs in `formats` (by name) and an output
    /// in `output`; the kernel runs on any tensors in those formats.
    pub fn compile(
        &self,
        statement: &str,
        formats: &[(&str, Format)],
        output: &Format,
    ) -> Result<Arc<Kernel>> {
        let stmt = parse_statement(statement)?;
        let formats: Vec<(String, Format)> = formats
            .iter()
            .map(|(n, f)| (n.to_string(), f.clone()))
            .collect();
        self.compile_statement(&stmt, &formats, output)
    }

    fn compile_statement(
        &self,
        stmt: &Statement,
        formats: &[(String, Format)],
        output: &Format,
    ) -> Result<Arc<Kernel>> {
        let key = KernelKey {
            statement: stmt.to_string(),
            inputs: formats
                .iter()
                .map(|(n, f)| {
                    (
                        n.clone(),
                        f.levels().iter().map(|l| l.level).collect(),
                        f.mode_order(),
                    )
                })
                .collect(),
            output: output.levels().iter().map(|l| l.level).collect(),
            output_modes: output.mode_order(),
        };
        if let Some(k) = self
            .cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return Ok(k.clone());
        }
        let kernel = Arc::new(Kernel::compile(stmt, formats, output)?);
        self.cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, kernel.clone());
        Ok(kernel)
    }
}

/// The formats of the tensors a statement reads, by name.
fn formats_of(stmt: &Statement, inputs: &Inputs<'_>) -> Result<Vec<(String, Format)>> {
    let mut names: Vec<&str> = Vec::new();
    for access in stmt.rhs.accesses() {
        if !names.contains(&access.tensor.as_str()) {
            names.push(&access.tensor);
        }
    }
    if stmt.op == crate::notation::AssignOp::AddAssign && !names.contains(&stmt.lhs.tensor.as_str())
    {
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

/// A statement compiled for given formats: its plan and bytecode.
pub struct Kernel {
    statement: Statement,
    lowered: Lowered,
    program: Program,
    plan: String,
    input_formats: Vec<(String, Format)>,
}

impl Kernel {
    fn compile(stmt: &Statement, formats: &[(String, Format)], output: &Format) -> Result<Kernel> {
        let lookup = |name: &str| {
            formats
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, f)| f.clone())
        };
        let lowered = lower(stmt, &lookup, output)?;
        let planned = emit(&lowered);
        let cin = CinPrinter {
            cin: &lowered.cin,
            operands: &lowered.operands,
            output: &lowered.output,
        }
        .to_string();
        let plan = format!("{}concrete index notation:\n{}", planned.plan, indent(&cin));
        Ok(Kernel {
            statement: stmt.clone(),
            lowered,
            program: planned.program,
            plan,
            input_formats: formats.to_vec(),
        })
    }

    /// The statement this kernel computes.
    pub fn statement(&self) -> &Statement {
        &self.statement
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
        &self.lowered.output.format
    }

    /// Runs the kernel on tensors in the formats it was compiled for.
    pub fn run(&self, inputs: &Inputs<'_>) -> Result<Tensor<f64>> {
        self.run_with_sizes(inputs, &[])
    }

    /// [`run`](Self::run) with sizes for index variables no input fixes.
    pub fn run_with_sizes(
        &self,
        inputs: &Inputs<'_>,
        sizes: &[(String, usize)],
    ) -> Result<Tensor<f64>> {
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
        let shape_of = |name: &str| inputs.get(name).map(|t| t.shape().to_vec());
        let size_of = |var: &str| sizes.iter().find(|(v, _)| v == var).map(|(_, s)| *s);
        let index_sizes = check(&self.statement, &shape_of, &size_of)?;
        let dims: Vec<i64> = self
            .lowered
            .order
            .iter()
            .map(|v| index_sizes.get(v.name()).unwrap_or(0) as i64)
            .collect();
        let out_shape = index_sizes.output_shape().to_vec();

        // Inputs, converted where the plan says so.
        let mut converted: Vec<Option<Tensor<f64>>> =
            Vec::with_capacity(self.lowered.operands.len());
        for op in &self.lowered.operands {
            let t = inputs.get(&op.name).expect("checked above");
            converted.push(if op.converted_from.is_some() {
                Some(t.convert(&op.format)?)
            } else {
                None
            });
        }
        let tensors: Vec<&Tensor<f64>> = self
            .lowered
            .operands
            .iter()
            .zip(&converted)
            .map(|(op, c)| {
                c.as_ref()
                    .unwrap_or_else(|| inputs.get(&op.name).expect("checked above"))
            })
            .collect();

        let out_format = self.lowered.output.format.clone();
        out_format.check_shape(&out_shape)?;
        let mut out = match self.lowered.assembly {
            OutputAssembly::Dense => {
                let n = tessera_formats::tensor::checked_product(&out_shape)?;
                OutputState::Dense {
                    shape: out_shape.clone(),
                    format: out_format.clone(),
                    values: vec![0.0; n],
                }
            }
            OutputAssembly::Append => {
                let workspace = workspace_vars(&self.lowered.cin)
                    .map(|vars| Workspace::new(&extents(&vars, &index_sizes)));
                OutputState::Append {
                    assembler: Assembler::new(out_format.clone(), &out_shape),
                    workspace,
                }
            }
            OutputAssembly::Packed => OutputState::Packed {
                shape: out_shape.clone(),
                format: out_format.clone(),
                entries: tessera_formats::CoordinateList::new(&out_shape),
                workspace: Workspace::new(&out_shape),
            },
        };
        let out_levels = dense_levels(&out_format, &out_shape);
        let out_level_formats: Vec<LevelFormat> =
            out_format.levels().iter().map(|l| l.level).collect();
        let input_level_formats: Vec<Vec<LevelFormat>> = tensors
            .iter()
            .map(|t| t.format().levels().iter().map(|l| l.level).collect())
            .collect();
        let mut bind = Bindings {
            formats: input_level_formats.iter().map(Vec::as_slice).collect(),
            levels: tensors.iter().map(|t| t.levels()).collect(),
            values: tensors.iter().map(|t| t.values()).collect(),
            dims,
        };
        bind.formats.push(&out_level_formats);
        bind.levels.push(&out_levels);
        interp::run(&self.program, &bind, &mut out);
        out.finish()
    }
}

fn workspace_vars(cin: &crate::cin::Cin) -> Option<Vec<crate::cin::LoopVar>> {
    use crate::cin::Cin;
    match cin {
        Cin::Workspace { vars, .. } => Some(vars.clone()),
        Cin::Forall { body, .. } => workspace_vars(body),
        Cin::Where {
            producer, consumer, ..
        } => workspace_vars(consumer).or_else(|| workspace_vars(producer)),
        Cin::Assign { .. } => None,
    }
}

fn extents(vars: &[crate::cin::LoopVar], sizes: &crate::notation::IndexSizes) -> Vec<usize> {
    vars.iter()
        .map(|v| sizes.get(v.name()).unwrap_or(0))
        .collect()
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}
