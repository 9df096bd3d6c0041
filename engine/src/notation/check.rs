//! Semantics of index notation: checking a statement against the tensors it
//! names, inferring the size of every index variable, and making summation
//! explicit.
//!
//! Input: a parsed or built [`Statement`], the shapes of the given tensors
//! and any sizes given explicitly. Output: [`IndexSizes`] from [`check`], and
//! from [`place_reductions`] a statement whose every summation is an explicit
//! `sum(var, ...)` node. Sits between the parser and lowering to concrete
//! index notation; the dense reference evaluator runs both.
//!
//! # Where sums go
//! An index variable that appears on the right but not on the left is summed
//! over, as in Einstein notation. With `+` and `-` in the expression the
//! question is *which part* is summed; the rule is: **over the smallest
//! subexpression that contains every occurrence of the variable**.
//!
//! | statement | meaning |
//! |---|---|
//! | `y(i) = A(i,j)*x(j) + b(i)` | `y(i) = sum(j, A(i,j) * x(j)) + b(i)` |
//! | `r(i) = b(i) - A(i,j)*x(j)` | `r(i) = b(i) - sum(j, A(i,j) * x(j))` |
//! | `y(i) = A(i,j) + B(i,j)` | `y(i) = sum(j, A(i,j) + B(i,j))` |
//! | `a = B(i,j,k)*C(i,j,k)` | `a = sum(i, sum(j, sum(k, B(i,j,k) * C(i,j,k))))` |
//!
//! So `b(i)` is added once, not once per `j` — what users mean when they
//! write Einstein notation with `+`. Variables whose smallest subexpression
//! is the same are nested in order of first appearance, outermost first.
//! Explicit `sum(var, ...)` nodes are kept; their variable is bound inside
//! them, and [`check`] refuses a summed variable that is also used outside
//! its sum, so placement never captures one.

use std::collections::{HashMap, HashSet};

use super::ir::{Access, AssignOp, Expr, IndexVar, Statement};
use crate::error::{EngineError, Result};

/// The size of every index variable of a statement, in order of first
/// appearance, and the shape of its result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexSizes {
    sizes: Vec<(IndexVar, usize)>,
    positions: HashMap<IndexVar, usize>,
    output_shape: Vec<usize>,
}

impl IndexSizes {
    /// The size of `var`, if it is a variable of the statement.
    pub fn get(&self, var: &str) -> Option<usize> {
        let k = self.positions.get(&IndexVar::new(var))?;
        Some(self.sizes[*k].1)
    }
    /// The position of `var` in [`iter`](Self::iter) order.
    pub fn position(&self, var: &IndexVar) -> Option<usize> {
        self.positions.get(var).copied()
    }
    /// Every variable with its size, in order of first appearance.
    pub fn iter(&self) -> impl Iterator<Item = (&IndexVar, usize)> + '_ {
        self.sizes.iter().map(|(v, n)| (v, *n))
    }
    /// Number of index variables.
    pub fn len(&self) -> usize {
        self.sizes.len()
    }
    /// Whether the statement has no index variables (all scalars).
    pub fn is_empty(&self) -> bool {
        self.sizes.is_empty()
    }
    /// The shape of the left-hand tensor: the sizes of its index variables.
    pub fn output_shape(&self) -> &[usize] {
        &self.output_shape
    }
}

/// Checks `stmt` against the shapes of the tensors it reads and infers the
/// size of every index variable.
///
/// `input_shape` gives the shape of each given tensor by name (`None` when
/// the tensor is not given); `given_sizes` gives the sizes the caller fixes
/// explicitly. Errors, in text order of the first offending access:
/// - a right-hand tensor that is not given: [`EngineError::UnknownTensor`]
///   (also the left tensor of `+=`, whose current values are read);
/// - an access whose arity differs from the tensor's order:
///   [`EngineError::OrderMismatch`];
/// - a variable repeated within one access: [`EngineError::RepeatedIndex`];
/// - a variable bound by `sum(var, ...)` that is also used outside it (on
///   the left, free on the right, or by an enclosing sum):
///   [`EngineError::Unsupported`];
/// - a variable that indexes modes of different sizes, or whose given size
///   or left-tensor size disagrees with the inputs:
///   [`EngineError::SizeMismatch`] naming both sites, `tensor (mode m)` or
///   `the given sizes`;
/// - a variable whose size nothing fixes: [`EngineError::UnknownSize`].
///
/// Sizes come first from the right-hand accesses, then from `given_sizes`,
/// then from the left tensor's shape when it is given (always for `+=`).
pub fn check(
    stmt: &Statement,
    input_shape: &dyn Fn(&str) -> Option<Vec<usize>>,
    given_sizes: &dyn Fn(&str) -> Option<usize>,
) -> Result<IndexSizes> {
    let lhs = &stmt.lhs;
    no_repeats(lhs)?;
    let lhs_shape = input_shape(&lhs.tensor);
    match &lhs_shape {
        Some(shape) => same_order(lhs, shape)?,
        None if stmt.op == AssignOp::AddAssign => return Err(unknown(lhs)),
        None => {}
    }
    let accesses = stmt.rhs.accesses();
    let mut shapes = Vec::with_capacity(accesses.len());
    for a in &accesses {
        let shape = input_shape(&a.tensor).ok_or_else(|| unknown(a))?;
        same_order(a, &shape)?;
        no_repeats(a)?;
        shapes.push(shape);
    }
    check_sum_bindings(stmt)?;

    let vars = stmt.index_vars();
    let mut sizes = Sizes {
        positions: vars.iter().enumerate().map(|(k, v)| (v, k)).collect(),
        fixed: vec![None; vars.len()],
    };
    for (a, shape) in accesses.iter().zip(&shapes) {
        sizes.fix_access(a, shape)?;
    }
    for v in &vars {
        // A sum renamed apart (`i'`, [`distinct_reductions`]) runs over the
        // variable it was written with.
        if let Some(n) = given_sizes(&v.0).or_else(|| given_sizes(v.0.trim_end_matches('\''))) {
            sizes.fix(v, n, || "the given sizes".to_owned())?;
        }
    }
    if let Some(shape) = &lhs_shape {
        sizes.fix_access(lhs, shape)?;
    }
    let mut out = Vec::with_capacity(vars.len());
    for (v, fixed) in vars.iter().zip(&sizes.fixed) {
        match fixed {
            Some((n, _)) => out.push((v.clone(), *n)),
            None => return Err(EngineError::UnknownSize { var: v.0.clone() }),
        }
    }
    let output_shape = lhs
        .indices
        .iter()
        .filter_map(|v| sizes.positions.get(v).map(|&k| out[k].1))
        .collect();
    let positions = vars.iter().cloned().zip(0..).collect();
    Ok(IndexSizes {
        sizes: out,
        positions,
        output_shape,
    })
}

/// Sizes fixed so far, each with the site that fixed it first.
struct Sizes<'a> {
    positions: HashMap<&'a IndexVar, usize>,
    fixed: Vec<Option<(usize, String)>>,
}

impl Sizes<'_> {
    fn fix_access(&mut self, a: &Access, shape: &[usize]) -> Result<()> {
        for (m, (v, &n)) in a.indices.iter().zip(shape).enumerate() {
            self.fix(v, n, || format!("{} (mode {m})", a.tensor))?;
        }
        Ok(())
    }

    fn fix(&mut self, var: &IndexVar, size: usize, site: impl Fn() -> String) -> Result<()> {
        let Some(&k) = self.positions.get(var) else {
            debug_assert!(false, "every variable of the statement is listed");
            return Ok(());
        };
        match &self.fixed[k] {
            None => self.fixed[k] = Some((size, site())),
            Some((n, _)) if *n == size => {}
            Some((n, first)) => {
                return Err(EngineError::SizeMismatch {
                    var: var.0.clone(),
                    first: first.clone(),
                    first_size: *n,
                    second: site(),
                    second_size: size,
                })
            }
        }
        Ok(())
    }
}

fn unknown(a: &Access) -> EngineError {
    EngineError::UnknownTensor {
        name: a.tensor.clone(),
        column: a.span.column(),
    }
}

fn same_order(a: &Access, shape: &[usize]) -> Result<()> {
    if a.indices.len() == shape.len() {
        return Ok(());
    }
    Err(EngineError::OrderMismatch {
        tensor: a.tensor.clone(),
        expected: shape.len(),
        found: a.indices.len(),
        column: a.span.column(),
    })
}

fn no_repeats(a: &Access) -> Result<()> {
    for (k, v) in a.indices.iter().enumerate() {
        if a.indices[..k].contains(v) {
            return Err(EngineError::RepeatedIndex {
                var: v.0.clone(),
                tensor: a.tensor.clone(),
                column: a.span.column(),
            });
        }
    }
    Ok(())
}

/// Refuses a `sum(var, ...)` whose variable is used outside it: on the left,
/// free elsewhere on the right, or bound again by an enclosing sum.
///
/// ```
/// use tessera_engine::notation::{check::check_sum_bindings, parse_statement};
/// assert!(check_sum_bindings(&parse_statement("y(i) = sum(j, A(i,j)) * x(j)").unwrap()).is_err());
/// assert!(check_sum_bindings(&parse_statement("a = sum(i, b(i)) * sum(i, c(i))").unwrap()).is_ok());
/// ```
pub fn check_sum_bindings(stmt: &Statement) -> Result<()> {
    fn walk<'a>(e: &'a Expr, outside: &HashSet<&IndexVar>, enclosing: &mut Vec<&'a IndexVar>) -> Result<()> {
        match e {
            Expr::Access(_) | Expr::Literal(_) => Ok(()),
            Expr::Neg(x) => walk(x, outside, enclosing),
            Expr::Binary { lhs, rhs, .. } => {
                walk(lhs, outside, enclosing)?;
                walk(rhs, outside, enclosing)
            }
            Expr::Call { args, .. } => args.iter().try_for_each(|a| walk(a, outside, enclosing)),
            Expr::Reduce { op, var, body } => {
                let clash = if enclosing.contains(&var) {
                    Some("an enclosing sum")
                } else if outside.contains(var) {
                    Some("the rest of the statement")
                } else {
                    None
                };
                if let Some(place) = clash {
                    return Err(EngineError::Unsupported(format!(
                        "{op}({var}, ...) binds index variable {var}, which {place} also uses; \
                         give the reduced variable another name"
                    )));
                }
                enclosing.push(var);
                walk(body, outside, enclosing)?;
                enclosing.pop();
                Ok(())
            }
        }
    }
    let free = stmt.rhs.free_vars();
    let outside: HashSet<&IndexVar> = stmt.lhs.indices.iter().chain(&free).collect();
    walk(&stmt.rhs, &outside, &mut Vec::new())
}

/// Makes every summation explicit: each index variable that appears on the
/// right but not on the left is summed over the smallest subexpression that
/// contains all its (free) occurrences. See the [module docs](self).
///
/// ```
/// use tessera_engine::notation::{parse_statement, place_reductions};
/// let stmt = parse_statement("r(i) = b(i) - A(i,j) * x(j)").unwrap();
/// assert_eq!(place_reductions(&stmt).to_string(), "r(i) = b(i) - sum(j, A(i,j) * x(j))");
/// ```
pub fn place_reductions(stmt: &Statement) -> Statement {
    // Staged operators are written out first: their bodies are part of the
    // statement for every later stage.
    let stmt = &*super::operator::staged::inline_statement(stmt);
    let lhs: HashSet<&IndexVar> = stmt.lhs.indices.iter().collect();
    let mut placer = Placer {
        ids: HashMap::new(),
        vars: Vec::new(),
        totals: Vec::new(),
    };
    // Number the variables to place in order of first appearance and count
    // their free occurrences.
    stmt.rhs.visit_free(&mut Vec::new(), &mut |v| {
        if lhs.contains(v) {
            return;
        }
        let id = *placer.ids.entry(v).or_insert_with(|| {
            placer.vars.push(v);
            placer.totals.push(0);
            placer.vars.len() - 1
        });
        placer.totals[id] += 1;
    });
    let (rhs, left) = placer.place(&stmt.rhs, &mut Vec::new());
    debug_assert!(left.is_empty(), "every summed variable is placed");
    Statement {
        lhs: stmt.lhs.clone(),
        op: stmt.op,
        rhs,
    }
}

/// The statement with each reduction binding a variable of its own: a
/// reduction over a variable an earlier reduction (or the left side)
/// already binds is renamed `i'` (`i''`, ...), a name no statement's text
/// can use. `sum(i, b(i)) * sum(i, c(i))` is a product of two sums, and
/// lowering, which gives each variable one loop, must not read it as
/// `sum(i, b(i) * c(i))`.
///
/// ```
/// use tessera_engine::notation::{distinct_reductions, parse_statement};
/// let stmt = parse_statement("a = sum(i, b(i)) * sum(i, c(i))").unwrap();
/// assert_eq!(distinct_reductions(&stmt).to_string(), "a = sum(i, b(i)) * sum(i', c(i'))");
/// ```
pub fn distinct_reductions(stmt: &Statement) -> Statement {
    let mut taken: HashSet<String> = stmt.lhs.indices.iter().map(|v| v.0.clone()).collect();
    let rhs = rename_rebound(&stmt.rhs, &mut taken);
    Statement {
        lhs: stmt.lhs.clone(),
        op: stmt.op,
        rhs,
    }
}

/// [`distinct_reductions`] of an expression, `taken` the names bound so far.
fn rename_rebound(e: &Expr, taken: &mut HashSet<String>) -> Expr {
    match e {
        Expr::Reduce { op, var, body } => {
            let mut name = var.0.clone();
            while taken.contains(&name) {
                name.push('\'');
            }
            taken.insert(name.clone());
            let body = if name == var.0 {
                (**body).clone()
            } else {
                renamed(body, var, &IndexVar(name.clone()))
            };
            Expr::Reduce {
                op: *op,
                var: IndexVar(name),
                body: Box::new(rename_rebound(&body, taken)),
            }
        }
        Expr::Access(_) | Expr::Literal(_) => e.clone(),
        Expr::Neg(x) => Expr::Neg(Box::new(rename_rebound(x, taken))),
        Expr::Binary { op, lhs, rhs } => Expr::Binary {
            op: *op,
            lhs: Box::new(rename_rebound(lhs, taken)),
            rhs: Box::new(rename_rebound(rhs, taken)),
        },
        Expr::Call { func, args } => Expr::Call {
            func: *func,
            args: args.iter().map(|a| rename_rebound(a, taken)).collect(),
        },
    }
}

/// `e` with the free occurrences of `from` named `to`.
fn renamed(e: &Expr, from: &IndexVar, to: &IndexVar) -> Expr {
    match e {
        Expr::Access(a) => {
            let mut a = a.clone();
            a.indices
                .iter_mut()
                .filter(|v| *v == from)
                .for_each(|v| *v = to.clone());
            Expr::Access(a)
        }
        // An inner reduction over the same name binds its own.
        Expr::Reduce { var, .. } if var == from => e.clone(),
        Expr::Reduce { op, var, body } => Expr::Reduce {
            op: *op,
            var: var.clone(),
            body: Box::new(renamed(body, from, to)),
        },
        Expr::Literal(_) => e.clone(),
        Expr::Neg(x) => Expr::Neg(Box::new(renamed(x, from, to))),
        Expr::Binary { op, lhs, rhs } => Expr::Binary {
            op: *op,
            lhs: Box::new(renamed(lhs, from, to)),
            rhs: Box::new(renamed(rhs, from, to)),
        },
        Expr::Call { func, args } => Expr::Call {
            func: *func,
            args: args.iter().map(|a| renamed(a, from, to)).collect(),
        },
    }
}

/// Free occurrences of each variable to place (by id) within a subexpression.
type Counts = HashMap<usize, usize>;

/// Places sums bottom-up: a variable's sum goes on the first node whose
/// subtree holds all its free occurrences. Counts of the children are merged
/// smaller into larger and only the merged-in variables are tested, so the
/// pass stays near-linear on huge statements.
struct Placer<'a> {
    ids: HashMap<&'a IndexVar, usize>,
    vars: Vec<&'a IndexVar>,
    totals: Vec<usize>,
}

impl<'a> Placer<'a> {
    fn place(&self, e: &'a Expr, bound: &mut Vec<&'a IndexVar>) -> (Expr, Counts) {
        match e {
            Expr::Access(a) => {
                let mut counts = Counts::new();
                for v in &a.indices {
                    if bound.contains(&v) {
                        continue;
                    }
                    if let Some(&id) = self.ids.get(v) {
                        *counts.entry(id).or_default() += 1;
                    }
                }
                let touched: Vec<usize> = counts.keys().copied().collect();
                self.settle(e.clone(), counts, touched)
            }
            Expr::Literal(_) => (e.clone(), Counts::new()),
            Expr::Neg(x) => {
                let (x, counts) = self.place(x, bound);
                (-x, counts)
            }
            Expr::Reduce { op, var, body } => {
                bound.push(var);
                let (body, counts) = self.place(body, bound);
                bound.pop();
                (Expr::reduce(*op, &var.0, body), counts)
            }
            Expr::Binary { op, lhs, rhs } => {
                let (parts, counts, touched) = self.place_all([&**lhs, &**rhs], bound);
                let [l, r]: [Expr; 2] = parts.try_into().expect("two operands");
                self.settle(Expr::binary(*op, l, r), counts, touched)
            }
            Expr::Call { func, args } => {
                let (args, counts, touched) = self.place_all(args, bound);
                self.settle(Expr::call(*func, args), counts, touched)
            }
        }
    }

    /// Places the sums inside each of `parts`, merging their counts; the
    /// variables merged in from the smaller counts are the touched ones.
    fn place_all(
        &self,
        parts: impl IntoIterator<Item = &'a Expr>,
        bound: &mut Vec<&'a IndexVar>,
    ) -> (Vec<Expr>, Counts, Vec<usize>) {
        let mut placed = Vec::new();
        let mut counts = Counts::new();
        let mut touched = Vec::new();
        for part in parts {
            let (e, mut more) = self.place(part, bound);
            placed.push(e);
            // A variable all of whose occurrences are in one part was
            // settled there: only the smaller counts can complete here.
            if more.len() > counts.len() {
                std::mem::swap(&mut counts, &mut more);
            }
            touched.extend(more.keys().copied());
            for (id, n) in more {
                *counts.entry(id).or_default() += n;
            }
        }
        touched.sort_unstable();
        touched.dedup();
        (placed, counts, touched)
    }

    /// Wraps `e` in the sums of the `touched` variables whose occurrences are
    /// now all inside it, the first-appearing variable outermost.
    fn settle(&self, e: Expr, mut counts: Counts, touched: Vec<usize>) -> (Expr, Counts) {
        let mut done: Vec<usize> = touched
            .into_iter()
            .filter(|&id| counts.get(&id) == Some(&self.totals[id]))
            .collect();
        done.sort_unstable();
        for id in &done {
            counts.remove(id);
        }
        let e = done.iter().rev().fold(e, |body, &id| Expr::sum(&self.vars[id].0, body));
        (e, counts)
    }
}
