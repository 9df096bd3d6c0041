//! Reordered evaluation: a statement evaluated on inputs whose coordinates
//! were permuted (COMET's data reordering), its result permuted back, so
//! that the answer never changes — only the locality of the kernel's run.
//!
//! Takes a statement, its [`Inputs`] and either a [`Method`] or a saved
//! [`ModePermutations`] of one input; gives a [`ReorderPlan`] (one
//! permutation per index variable), the reordered inputs, and the result
//! restored. It wraps [`Engine`] and [`Kernel`](crate::Kernel) from the
//! outside: the kernel is the ordinary kernel for the inputs' formats and
//! runs in the reordered coordinate space.
//!
//! # The rule
//! A permutation belongs to an *index variable*, not to a tensor: in
//! `y(i) = A(i,j) * x(j)` the permutation of A's columns is `j`'s, so it
//! permutes `x` too, and `y` is permuted back by `i`'s. Index variables
//! that index the same mode of one tensor (in two accesses of it, as
//! `A(i,k) * A(k,j)` ties `i`, `k` and `j`) must share one permutation,
//! because a tensor's data is permuted once.
//!
//! The orderings come from one input, the *driver*: the sparse input of
//! the highest order (a matrix before a vector), the one with the most
//! stored entries among those, the first named among equals; it is read
//! through its first access. Mode `m` of the driver gives its permutation to the
//! variable (class) of position `m`. When two of the driver's modes fall in
//! one class (SpGEMM `A*A`, a transpose `A(i,j) + A(j,i)`), the first
//! mode's permutation serves the whole class and the plan says so; a
//! symmetric method (`rcm`) gives rows and columns one permutation anyway.
//! Variables no mode of the driver indexes keep their order. Refused: a
//! statement without a sparse input, `rcm` on a driver that is not a square
//! matrix, and modes too large to hold a permutation of.
//!
//! ```
//! use tessera_engine::reorder::eval_reordered;
//! use tessera_engine::{Engine, EvalOptions, Inputs};
//! use tessera_formats::reorder::Method;
//! use tessera_formats::{CoordinateList, Format, Tensor};
//!
//! let mut entries = CoordinateList::new(&[3, 3]);
//! for (i, j, v) in [(0, 2, 1.0), (1, 1, 2.0), (2, 0, 3.0), (2, 2, 4.0)] {
//!     entries.push(&[i, j], v).unwrap();
//! }
//! let a = Tensor::pack(&entries, Format::csr()).unwrap();
//! let x = Tensor::from_dense(&[3], vec![1.0, 10.0, 100.0]).unwrap();
//! let inputs = Inputs::new().with("A", &a).with("x", &x);
//! let engine = Engine::new();
//! let statement = "y(i) = A(i,j) * x(j)";
//! let plain = engine.eval(statement, &inputs).unwrap();
//! let reordered = eval_reordered(&engine, statement, &inputs, &EvalOptions::default(), Method::Lexi).unwrap();
//! assert_eq!(reordered.result.to_dense_vec().unwrap(), plain.to_dense_vec().unwrap());
//! assert!(reordered.plan.describe().contains("j: mode 2 of A"));
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use tessera_formats::reorder::{order_tensor, Method, ModePermutations, Permutation};
use tessera_formats::Tensor;

use crate::error::{EngineError, Result};
use crate::notation::{parse_statement, Access, AssignOp, Statement};
use crate::runtime::{Engine, EvalOptions, Inputs};

/// Where a plan's permutations came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Computed now by a method from the driver's structure.
    Computed(Method),
    /// Given (a saved permutation of the driver's modes).
    Given,
}

/// One permutation per index variable of a statement, chosen from one
/// input's structure.
///
/// ```
/// use tessera_engine::reorder::ReorderPlan;
/// use tessera_engine::Inputs;
/// use tessera_formats::reorder::Method;
/// use tessera_formats::{CoordinateList, Format, Tensor};
/// let mut entries = CoordinateList::new(&[2, 2]);
/// entries.push(&[1, 1], 1.0).unwrap();
/// let a = Tensor::pack(&entries, Format::csr()).unwrap();
/// let b = Tensor::from_dense(&[2, 3], vec![1.0; 6]).unwrap();
/// let inputs = Inputs::new().with("A", &a).with("B", &b);
/// let plan = ReorderPlan::compute("C(i,j) = A(i,k) * B(k,j)", &inputs, Method::Lexi).unwrap();
/// // A's columns are k's: B's rows follow them; j indexes no mode of A.
/// assert_eq!(plan.permutation_of("k").unwrap().old_of(0), 1);
/// assert!(plan.permutation_of("j").is_none());
/// ```
#[derive(Debug, Clone)]
pub struct ReorderPlan {
    statement: Statement,
    driver: String,
    origin: Origin,
    /// The driver's own permutations, as computed or given.
    driver_permutations: ModePermutations,
    /// Each permuted variable and the (1-based) mode of the driver whose
    /// permutation it takes.
    vars: BTreeMap<String, (usize, Permutation)>,
    /// Variables of the statement that keep their order.
    unchanged: Vec<String>,
    /// Ties between modes of the driver, said in words.
    notes: Vec<String>,
    /// How long computing the ordering took (zero when given).
    pub ordering_time: Duration,
}

impl ReorderPlan {
    /// Orders the driver of `statement` (its largest sparse input, see the
    /// module's rule) by `method`, and gives each index variable its
    /// permutation.
    pub fn compute(statement: &str, inputs: &Inputs<'_>, method: Method) -> Result<ReorderPlan> {
        let stmt = parse_statement(statement)?;
        let driver = choose_driver(&stmt, inputs)?;
        let tensor = input(&stmt, inputs, &driver)?;
        let start = Instant::now();
        let perms = order_tensor(tensor, method)
            .map_err(|e| EngineError::Unsupported(format!("reordering by {method}, ordering {driver}: {e}")))?;
        let ordering_time = start.elapsed();
        let mut plan = Self::assign(stmt, driver, Origin::Computed(method), perms)?;
        plan.ordering_time = ordering_time;
        Ok(plan)
    }

    /// Uses `perms`, permutations of the modes of input `tensor` (saved by
    /// an earlier run, say), as the ordering.
    pub fn with_permutations(
        statement: &str,
        inputs: &Inputs<'_>,
        tensor: &str,
        perms: ModePermutations,
    ) -> Result<ReorderPlan> {
        let stmt = parse_statement(statement)?;
        let t = input(&stmt, inputs, tensor)?;
        if t.shape() != perms.shape() {
            return Err(EngineError::Unsupported(format!(
                "the permutations are for a tensor of shape {}, {tensor} has shape {}",
                shape_text(perms.shape()),
                shape_text(t.shape())
            )));
        }
        Self::assign(stmt, tensor.to_string(), Origin::Given, perms)
    }

    /// Gives each variable class the permutation of the first driver mode
    /// in it.
    fn assign(stmt: Statement, driver: String, origin: Origin, perms: ModePermutations) -> Result<ReorderPlan> {
        let classes = VarClasses::of(&stmt);
        let access = first_access(&stmt, &driver).cloned().ok_or_else(|| {
            EngineError::Unsupported(format!(
                "the statement does not read {driver}, so it cannot drive a reordering"
            ))
        })?;
        let mut by_class: BTreeMap<usize, (usize, Permutation)> = BTreeMap::new();
        let mut notes = Vec::new();
        for (mode, var) in access.indices.iter().enumerate() {
            let Some(p) = perms.mode(mode) else { continue };
            let class = classes.class_of(var.as_str());
            match by_class.get(&class) {
                None => {
                    by_class.insert(class, (mode + 1, p.clone()));
                }
                Some((first, q)) if q != p => notes.push(format!(
                    "mode {} of {driver} shares one permutation with mode {first} (the statement ties {}): \
                     mode {first}'s is used for both",
                    mode + 1,
                    classes.members(class).join(", ")
                )),
                Some(_) => {}
            }
        }
        let mut vars = BTreeMap::new();
        let mut unchanged = Vec::new();
        for var in classes.vars() {
            match by_class.get(&classes.class_of(&var)) {
                Some(entry) => {
                    vars.insert(var, entry.clone());
                }
                None => unchanged.push(var),
            }
        }
        Ok(ReorderPlan {
            statement: stmt,
            driver,
            origin,
            driver_permutations: perms,
            vars,
            unchanged,
            notes,
            ordering_time: Duration::ZERO,
        })
    }

    /// The input whose structure chose the permutations.
    pub fn driver(&self) -> &str {
        &self.driver
    }

    /// Where the permutations came from.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// The driver's permutations (to save and reuse).
    pub fn driver_permutations(&self) -> &ModePermutations {
        &self.driver_permutations
    }

    /// The permutation of index variable `var`, if it is permuted.
    pub fn permutation_of(&self, var: &str) -> Option<&Permutation> {
        self.vars.get(var).map(|(_, p)| p)
    }

    /// The permutations of an access's modes: each mode its variable's.
    pub fn permutations_for(&self, access: &Access, shape: &[usize]) -> Result<ModePermutations> {
        let modes = access
            .indices
            .iter()
            .map(|v| self.permutation_of(v.as_str()).cloned())
            .collect();
        Ok(ModePermutations::new(shape, modes)?)
    }

    /// Every input the statement reads, permuted by its variables' permutations.
    pub fn reorder_inputs(&self, inputs: &Inputs<'_>) -> Result<ReorderedInputs> {
        let start = Instant::now();
        let mut tensors = Vec::new();
        for name in read_names(&self.statement) {
            let t = input(&self.statement, inputs, &name)?;
            let access = first_access(&self.statement, &name).unwrap_or(&self.statement.lhs);
            let perms = self.permutations_for(access, t.shape())?;
            let permuted = perms
                .apply_to_tensor(t)
                .map_err(|e| EngineError::Unsupported(format!("permuting {name} (stored as {}): {e}", t.format())))?;
            tensors.push((name, permuted));
        }
        Ok(ReorderedInputs {
            tensors,
            time: start.elapsed(),
        })
    }

    /// A result computed on reordered inputs, with its coordinates moved
    /// back to the original order (in the same format).
    pub fn restore(&self, result: &Tensor<f64>) -> Result<Tensor<f64>> {
        let perms = self.permutations_for(&self.statement.lhs, result.shape())?;
        Ok(perms.inverse().apply_to_tensor(result)?)
    }

    /// What is permuted, and by what: the `reordering` part of a plan.
    pub fn describe(&self) -> String {
        let mut text = match &self.origin {
            Origin::Computed(method) => format!("reordering: {method}, from the structure of {}\n", self.driver),
            Origin::Given => format!("reordering: given permutations of {}\n", self.driver),
        };
        for (var, (mode, p)) in &self.vars {
            let moved = (0..p.len()).filter(|&k| p.old_of(k) != k).count();
            let _ = writeln!(
                text,
                "  {var}: mode {mode} of {} ({moved} of {} coordinates move)",
                self.driver,
                p.len()
            );
        }
        for var in &self.unchanged {
            let _ = writeln!(
                text,
                "  {var}: unchanged (no permuted mode of {} indexes it)",
                self.driver
            );
        }
        for note in &self.notes {
            let _ = writeln!(text, "  note: {note}");
        }
        let mut reads: Vec<String> = Vec::new();
        for name in read_names(&self.statement) {
            let access = first_access(&self.statement, &name).unwrap_or(&self.statement.lhs);
            reads.push(format!("{name}({})", self.permuted_vars(access)));
        }
        let _ = writeln!(text, "  inputs permuted: {}", reads.join(", "));
        let _ = writeln!(
            text,
            "  result permuted back: {}({})",
            self.statement.lhs.tensor,
            self.permuted_vars(&self.statement.lhs)
        );
        text
    }

    /// `i,-` for an access: each permuted variable, `-` for a kept mode.
    fn permuted_vars(&self, access: &Access) -> String {
        access
            .indices
            .iter()
            .map(|v| {
                if self.vars.contains_key(v.as_str()) {
                    v.as_str()
                } else {
                    "-"
                }
            })
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// Inputs permuted by a [`ReorderPlan`], owned, and how long permuting took.
pub struct ReorderedInputs {
    tensors: Vec<(String, Tensor<f64>)>,
    pub time: Duration,
}

impl ReorderedInputs {
    /// The permuted tensors as engine inputs.
    pub fn inputs(&self) -> Inputs<'_> {
        let mut inputs = Inputs::new();
        for (name, t) in &self.tensors {
            inputs.insert(name, t);
        }
        inputs
    }

    /// The permuted tensors by name, in the order the statement reads them.
    pub fn tensors(&self) -> &[(String, Tensor<f64>)] {
        &self.tensors
    }

    /// Takes the permuted tensors.
    pub fn into_tensors(self) -> Vec<(String, Tensor<f64>)> {
        self.tensors
    }
}

/// The result of [`eval_reordered`]: the answer (in original coordinates),
/// the plan, and what each step cost.
pub struct ReorderedEval {
    pub result: Tensor<f64>,
    pub plan: ReorderPlan,
    pub permute_inputs: Duration,
    pub run: Duration,
    pub restore: Duration,
}

/// Evaluates `statement` with every input reordered by `method` (see the
/// module's rule) and the result permuted back: the same answer as
/// [`Engine::eval_with`], up to the order of floating-point sums.
pub fn eval_reordered(
    engine: &Engine,
    statement: &str,
    inputs: &Inputs<'_>,
    options: &EvalOptions,
    method: Method,
) -> Result<ReorderedEval> {
    let plan = ReorderPlan::compute(statement, inputs, method)?;
    eval_with_plan(engine, statement, inputs, options, plan)
}

/// [`eval_reordered`] with a plan made before (from saved permutations,
/// or reused across runs).
pub fn eval_with_plan(
    engine: &Engine,
    statement: &str,
    inputs: &Inputs<'_>,
    options: &EvalOptions,
    plan: ReorderPlan,
) -> Result<ReorderedEval> {
    let reordered = plan.reorder_inputs(inputs)?;
    let start = Instant::now();
    let result = engine.eval_with(statement, &reordered.inputs(), options)?;
    let run = start.elapsed();
    let start = Instant::now();
    let result = plan.restore(&result)?;
    Ok(ReorderedEval {
        result,
        permute_inputs: reordered.time,
        run,
        restore: start.elapsed(),
        plan,
    })
}

/// The tensors a statement reads, in the order it names them (the left
/// tensor first for `+=`).
fn read_names(stmt: &Statement) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    if stmt.op == AssignOp::AddAssign {
        names.push(stmt.lhs.tensor.clone());
    }
    for a in stmt.rhs.accesses() {
        if !names.contains(&a.tensor) {
            names.push(a.tensor.clone());
        }
    }
    names
}

/// The first access of `name` on the right, or the left side for a `+=`
/// statement that reads only there.
fn first_access<'a>(stmt: &'a Statement, name: &str) -> Option<&'a Access> {
    stmt.rhs
        .accesses()
        .into_iter()
        .find(|a| a.tensor == name)
        .or_else(|| (stmt.op == AssignOp::AddAssign && stmt.lhs.tensor == name).then_some(&stmt.lhs))
}

fn input<'a>(stmt: &Statement, inputs: &Inputs<'a>, name: &str) -> Result<&'a Tensor<f64>> {
    match inputs.get(name) {
        Some(tessera_formats::TensorRef::F64(t)) => Ok(t),
        Some(other) => Err(EngineError::Unsupported(format!(
            "reordering permutes f64 tensors, and {name} holds {} values",
            other.value_type()
        ))),
        None => Err(EngineError::UnknownTensor {
            name: name.to_string(),
            column: first_access(stmt, name).map_or(1, |a| a.span.column()),
        }),
    }
}

/// The sparse input of the highest order, the most stored entries among
/// those, the first named among equals: its structure is what reordering
/// improves.
fn choose_driver(stmt: &Statement, inputs: &Inputs<'_>) -> Result<String> {
    let mut best: Option<(String, (usize, usize))> = None;
    for name in read_names(stmt) {
        let t = input(stmt, inputs, &name)?;
        if t.format().is_dense() || t.order() == 0 {
            continue;
        }
        let size = (t.order(), t.stored());
        if best.as_ref().is_none_or(|(_, best)| size > *best) {
            best = Some((name, size));
        }
    }
    best.map(|(name, _)| name).ok_or_else(|| {
        EngineError::Unsupported(
            "reordering orders a sparse input's structure, and every input of this statement is dense".into(),
        )
    })
}

/// Index variables grouped into classes that must share a permutation:
/// those that index the same mode of one tensor somewhere in the statement.
struct VarClasses {
    vars: Vec<String>,
    parent: Vec<usize>,
}

impl VarClasses {
    fn of(stmt: &Statement) -> VarClasses {
        let mut classes = VarClasses {
            vars: Vec::new(),
            parent: Vec::new(),
        };
        let mut accesses: Vec<&Access> = stmt.rhs.accesses();
        accesses.push(&stmt.lhs);
        for a in &accesses {
            for v in &a.indices {
                classes.index(v.as_str());
            }
        }
        // The left side is read only by `+=`; otherwise it is written, and a
        // tensor written is a new one: its modes tie nothing to the inputs'.
        let read: Vec<&Access> = accesses
            .iter()
            .copied()
            .filter(|a| !std::ptr::eq(*a, &stmt.lhs) || stmt.op == AssignOp::AddAssign)
            .collect();
        for (k, a) in read.iter().enumerate() {
            for b in &read[..k] {
                if a.tensor == b.tensor {
                    for (x, y) in a.indices.iter().zip(&b.indices) {
                        let (x, y) = (classes.index(x.as_str()), classes.index(y.as_str()));
                        classes.union(x, y);
                    }
                }
            }
        }
        classes
    }

    fn index(&mut self, var: &str) -> usize {
        match self.vars.iter().position(|v| v == var) {
            Some(k) => k,
            None => {
                self.vars.push(var.to_string());
                self.parent.push(self.parent.len());
                self.parent.len() - 1
            }
        }
    }

    fn find(&self, mut k: usize) -> usize {
        while self.parent[k] != k {
            k = self.parent[k];
        }
        k
    }

    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        // The smaller index is the root: the class is named by its first variable.
        self.parent[a.max(b)] = a.min(b);
    }

    fn class_of(&self, var: &str) -> usize {
        self.vars
            .iter()
            .position(|v| v == var)
            .map_or(usize::MAX, |k| self.find(k))
    }

    fn members(&self, class: usize) -> Vec<String> {
        (0..self.vars.len())
            .filter(|&k| self.find(k) == class)
            .map(|k| self.vars[k].clone())
            .collect()
    }

    fn vars(&self) -> Vec<String> {
        self.vars.clone()
    }
}

fn shape_text(shape: &[usize]) -> String {
    shape.iter().map(usize::to_string).collect::<Vec<_>>().join("x")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::parse_statement;

    fn classes(text: &str) -> Vec<Vec<String>> {
        let stmt = parse_statement(text).unwrap();
        let c = VarClasses::of(&stmt);
        let mut out: Vec<Vec<String>> = Vec::new();
        for v in &c.vars {
            let m = c.members(c.class_of(v));
            if !out.contains(&m) {
                out.push(m);
            }
        }
        out
    }

    #[test]
    fn one_tensor_read_twice_ties_the_variables_of_each_mode() {
        assert_eq!(classes("C(i,j) = A(i,k) * A(k,j)"), vec![vec!["i", "k", "j"]]);
        assert_eq!(classes("C(i,j) = A(i,j) + A(j,i)"), vec![vec!["i", "j"]]);
        assert_eq!(classes("y(i) = A(i,j) * x(j)"), vec![vec!["i"], vec!["j"]]);
        // Written, the left tensor ties nothing; read by +=, it does.
        assert_eq!(classes("A(j,i) = A(i,j)"), vec![vec!["i"], vec!["j"]]);
        assert_eq!(classes("A(j,i) += A(i,j)"), vec![vec!["i", "j"]]);
    }
}
