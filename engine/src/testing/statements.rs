//! Random well-formed statements: 1–4 tensors of orders 0–4, `+ - * /`,
//! unary minus, literals, functions, comparisons and logical operators,
//! shared and summed index variables, broadcasts, explicit `sum(...)` and
//! other reductions (`min`, `max`, `prod`, `or`, `and`) now and then, and
//! occasionally `+=`.
//!
//! Sizes are consistent by construction: each index variable gets one size
//! and every mode it indexes has it. Division is kept to the dense meaning's
//! safe cases: the divisor is a nonzero literal or a tensor flagged
//! [`TensorSpec::divisor`], which callers fill with [`EntryKind::Full`]
//! contents (every component stored and nonzero), and no variable is summed
//! over a divisor alone (`b(i) / C(i,k)` divides by `sum(k, C(i,k))`, which
//! may be zero). Functions are drawn from those finite on every finite
//! argument ([`SAFE_FUNCTIONS`]). So no `0 / 0` or `0 * inf` can make a
//! sparse kernel and the dense reference disagree legitimately.
//!
//! [`EntryKind::Full`]: super::EntryKind::Full

use crate::notation::{Access, BinaryOp, Expr, Func, IndexVar, Reduction, Statement, REDUCTIONS};

use super::Rng;
use tessera_formats::ValueType;

/// Bounds of [`random_statement`].
#[derive(Clone, Debug)]
pub struct StatementConfig {
    /// Most distinct tensors on the right (1–4 are drawn).
    pub max_tensors: usize,
    /// Most modes of one tensor (and of the result).
    pub max_order: usize,
    /// Most index variables of the statement.
    pub max_vars: usize,
    /// Deepest expression tree.
    pub max_depth: usize,
    /// Percent of statements with `+=`.
    pub add_assign_percent: u32,
    /// Percent of binary operators that divide.
    pub div_percent: u32,
    /// Percent of summed variables given an explicit `sum(...)`.
    pub explicit_sum_percent: u32,
    /// Percent of expression nodes that call a function, a comparison or
    /// a logical operator.
    pub call_percent: u32,
    /// Percent of explicit reductions by something other than a sum.
    pub other_reduction_percent: u32,
    /// Largest index size of statements with at most two variables (more
    /// variables get smaller ones: 2/3 of it for three, 5/12 for four,
    /// 1/3 beyond).
    pub max_dim: usize,
    /// Most components × iterations per component the statement may take
    /// (product of every variable's size), so the dense reference stays
    /// quick.
    pub max_work: usize,
}

impl Default for StatementConfig {
    fn default() -> Self {
        StatementConfig {
            max_tensors: 4,
            max_order: 4,
            max_vars: 5,
            max_depth: 4,
            add_assign_percent: 10,
            div_percent: 8,
            explicit_sum_percent: 10,
            call_percent: 10,
            other_reduction_percent: 50,
            max_dim: 12,
            max_work: 6000,
        }
    }
}

/// A tensor a random statement reads.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorSpec {
    pub name: String,
    pub shape: Vec<usize>,
    /// Read as a divisor: fill it with every component nonzero.
    pub divisor: bool,
}

/// A random statement with what it needs to run.
#[derive(Clone, Debug)]
pub struct RandomStatement {
    pub statement: Statement,
    /// The statement's canonical text (parses back to `statement`).
    pub text: String,
    /// Every tensor it reads, the left tensor too for `+=`.
    pub tensors: Vec<TensorSpec>,
    /// Sizes of output variables no tensor fixes (broadcasts).
    pub sizes: Vec<(String, usize)>,
    /// The result's shape.
    pub output_shape: Vec<usize>,
}

const VAR_NAMES: [&str; 6] = ["i", "j", "k", "l", "m", "n"];
const TENSOR_NAMES: [&str; 4] = ["B", "C", "D", "E"];
const LITERALS: [f64; 6] = [0.5, 1.0, 2.0, 3.0, 0.25, 0.0];
const DIVISOR_LITERALS: [f64; 4] = [2.0, 4.0, 0.5, -2.0];

/// The functions random statements call: finite on every finite argument,
/// so that an absent operand's annihilation never meets an infinity or a
/// NaN the dense reference would compute. (`atan2` is left out: it tells
/// -0 from +0, whose sign a sum moved out of a product legitimately
/// changes, `-c * sum(k, b(k))` against `sum(k, -c * b(k))`.) The exact
/// ones, then those that round.
pub const SAFE_FUNCTIONS: [Func; 19] = append(
    EXACT_FUNCTIONS,
    [Func::Cbrt, Func::Sin, Func::Cos, Func::Atan, Func::Tanh, Func::Asinh],
);

/// The functions of [`SAFE_FUNCTIONS`] that are exact on exact arguments
/// (no rounding), for tests that compare results bit for bit.
pub const EXACT_FUNCTIONS: [Func; 13] = [
    Func::Abs,
    Func::Square,
    Func::Heaviside,
    Func::Not,
    Func::Min,
    Func::Max,
    Func::Lt,
    Func::Le,
    Func::Ne,
    Func::Eq,
    Func::And,
    Func::Or,
    Func::Xor,
];

/// `a` followed by `b`, in a constant.
const fn append<const A: usize, const B: usize, const N: usize>(a: [Func; A], b: [Func; B]) -> [Func; N] {
    assert!(A + B == N, "the lengths add up");
    let mut out = [Func::Abs; N];
    let mut k = 0;
    while k < N {
        out[k] = if k < A { a[k] } else { b[k - A] };
        k += 1;
    }
    out
}

struct Generator<'a> {
    rng: &'a mut Rng,
    config: &'a StatementConfig,
    vars: Vec<(String, usize)>,
    tensors: Vec<TensorSpec>,
    /// Accesses made so far, for reuse (the same tensor read twice).
    accesses: Vec<(String, Vec<String>)>,
    budget: usize,
}

impl Generator<'_> {
    fn size(&self, var: &str) -> usize {
        self.vars.iter().find(|(v, _)| v == var).map_or(1, |(_, n)| *n)
    }

    fn random_vars(&mut self, order: usize) -> Vec<String> {
        let mut names: Vec<String> = self.vars.iter().map(|(v, _)| v.clone()).collect();
        self.rng.shuffle(&mut names);
        names.truncate(order);
        names
    }

    fn new_tensor(&mut self, divisor: bool) -> Option<Expr> {
        if self.tensors.len() >= self.budget {
            return None;
        }
        let name = TENSOR_NAMES[self.tensors.len()].to_string();
        let order = self.rng.range(0, self.config.max_order.min(self.vars.len()));
        let vars = self.random_vars(order);
        let shape = vars.iter().map(|v| self.size(v)).collect();
        self.tensors.push(TensorSpec {
            name: name.clone(),
            shape,
            divisor,
        });
        self.accesses.push((name.clone(), vars.clone()));
        let refs: Vec<&str> = vars.iter().map(String::as_str).collect();
        Some(Expr::access(&name, &refs))
    }

    /// An access read before (the same tensor again), possibly with its
    /// variables permuted among equal sizes.
    fn reused(&mut self, divisor: bool) -> Option<Expr> {
        let candidates: Vec<(String, Vec<String>)> = self
            .accesses
            .iter()
            .filter(|(n, _)| self.tensors.iter().any(|t| t.name == *n && t.divisor == divisor))
            .cloned()
            .collect();
        if candidates.is_empty() {
            return None;
        }
        let (name, mut vars) = self.rng.pick(&candidates).clone();
        if vars.len() >= 2 && self.rng.percent(30) {
            let (a, b) = (self.rng.below(vars.len()), self.rng.below(vars.len()));
            if self.size(&vars[a]) == self.size(&vars[b]) {
                vars.swap(a, b);
            }
        }
        let refs: Vec<&str> = vars.iter().map(String::as_str).collect();
        Some(Expr::access(&name, &refs))
    }

    fn literal(&mut self) -> Expr {
        Expr::lit(*self.rng.pick(&LITERALS))
    }

    fn leaf(&mut self) -> Expr {
        if self.rng.percent(12) {
            return self.literal();
        }
        if self.rng.percent(15) {
            if let Some(e) = self.reused(false) {
                return e;
            }
        }
        self.new_tensor(false)
            .or_else(|| self.reused(false))
            .unwrap_or_else(|| self.literal())
    }

    fn divisor(&mut self) -> Expr {
        if self.rng.percent(50) {
            return Expr::lit(*self.rng.pick(&DIVISOR_LITERALS));
        }
        if self.rng.percent(30) {
            if let Some(e) = self.reused(true) {
                return e;
            }
        }
        self.new_tensor(true)
            .unwrap_or_else(|| Expr::lit(*self.rng.pick(&DIVISOR_LITERALS)))
    }

    fn expr(&mut self, depth: usize) -> Expr {
        let stop = depth >= self.config.max_depth
            || self.tensors.len() >= self.budget && self.rng.percent(60)
            || self.rng.percent(20 + 15 * depth as u32);
        if stop && depth > 0 {
            return self.leaf();
        }
        if self.rng.percent(8) {
            return -self.expr(depth + 1);
        }
        if self.rng.percent(self.config.call_percent) {
            // A user-defined operator now and then.
            let func = match self.rng.percent(15) {
                true => *self.rng.pick(super::random_operators()),
                false => *self.rng.pick(&SAFE_FUNCTIONS),
            };
            let args = (0..func.arity()).map(|_| self.expr(depth + 1)).collect();
            return Expr::call(func, args);
        }
        let op = if self.rng.percent(self.config.div_percent) {
            BinaryOp::Div
        } else {
            *self
                .rng
                .pick(&[BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Mul])
        };
        let lhs = self.expr(depth + 1);
        let rhs = if op == BinaryOp::Div {
            self.divisor()
        } else {
            self.expr(depth + 1)
        };
        Expr::binary(op, lhs, rhs)
    }
}

/// `e` with every truth value that meets an operation of numbers only
/// (negation, `-`, `/`, a function such as `tanh`) cast to the inputs'
/// number type (`f32(...)` for `f32` inputs, otherwise `f64(...)`), as the
/// statement language asks ([`types`](crate::notation::types)); truth
/// values elsewhere stay, so `+` and `*` of two of them are `||` and `&&`.
/// `inputs` is the type of every tensor `e` reads; casts to `f64` already
/// there become casts to the inputs' number type. For integer inputs,
/// literals are cast to the integer type, and functions with no integer
/// meaning (`sqrt`, `pow`, ...) are computed on `f64` arguments and cast
/// back.
///
/// ```
/// use tessera_engine::notation::parse_statement;
/// use tessera_engine::testing::cast_where_numbers_are_needed;
/// use tessera_formats::ValueType;
/// let s = parse_statement("y(i) = -(a(i) < b(i)) + (a(i) < 1) * (b(i) > 2)").unwrap();
/// let cast = cast_where_numbers_are_needed(s.rhs, ValueType::F64);
/// assert_eq!(cast.to_string(), "-f64(a(i) < b(i)) + (a(i) < 1) * (b(i) > 2)");
/// let s = parse_statement("y(i) = sqrt(a(i) - b(i))").unwrap();
/// let cast = cast_where_numbers_are_needed(s.rhs, ValueType::Bool);
/// assert_eq!(cast.to_string(), "sqrt(f64(a(i)) - f64(b(i)))");
/// let s = parse_statement("y(i) = sqrt(a(i)) * 0.5").unwrap();
/// let cast = cast_where_numbers_are_needed(s.rhs, ValueType::I64);
/// assert_eq!(cast.to_string(), "i64(sqrt(f64(a(i)))) * i64(0.5)");
/// ```
pub fn cast_where_numbers_are_needed(e: Expr, inputs: ValueType) -> Expr {
    let (access, number) = match inputs {
        ValueType::Bool => (Gives::Truth, ValueType::F64),
        ty => (Gives::Number, ty),
    };
    let (e, gives) = typed_expr(e, (access, number));
    // A statement over integers gives integers, so that its reductions
    // compute in its type.
    if number.is_integer() && gives == Gives::Truth {
        return Expr::call(Func::Cast(number), vec![e]);
    }
    e
}

/// What a subexpression of a random statement gives.
#[derive(Clone, Copy, PartialEq)]
enum Gives {
    Number,
    Truth,
    /// Literals only: the type of what they meet.
    Literal,
}

/// Two operands met: a literal side takes the other's kind; a truth value
/// beside a number is a number.
fn met(a: Gives, b: Gives) -> Gives {
    match (a, b) {
        (Gives::Literal, x) | (x, Gives::Literal) => x,
        (Gives::Truth, Gives::Truth) => Gives::Truth,
        _ => Gives::Number,
    }
}

/// The expression with its casts, and what it gives (every tensor a random
/// statement reads holds numbers).
fn typed_expr(e: Expr, types: (Gives, ValueType)) -> (Expr, Gives) {
    let (access, number_type) = types;
    let number = |(e, gives): (Expr, Gives)| {
        if gives == Gives::Truth {
            Expr::call(Func::Cast(number_type), vec![e])
        } else {
            e
        }
    };
    let numbers = |parts: &[(Expr, Gives)]| match parts.iter().all(|p| p.1 == Gives::Literal) {
        true => Gives::Literal,
        false => Gives::Number,
    };
    let integers = number_type.is_integer();
    match e {
        Expr::Access(_) => (e, access),
        Expr::Literal(_) if integers => (Expr::call(Func::Cast(number_type), vec![e]), Gives::Number),
        Expr::Literal(_) => (e, Gives::Literal),
        Expr::Neg(x) => {
            let x = typed_expr(*x, types);
            let gives = numbers(std::slice::from_ref(&x));
            (-number(x), gives)
        }
        Expr::Binary { op, lhs, rhs } => {
            let (l, r) = (typed_expr(*lhs, types), typed_expr(*rhs, types));
            match op {
                BinaryOp::Sub | BinaryOp::Div => {
                    let gives = numbers(&[l.clone(), r.clone()]);
                    (Expr::binary(op, number(l), number(r)), gives)
                }
                _ => {
                    let gives = met(l.1, r.1);
                    (Expr::binary(op, l.0, r.0), gives)
                }
            }
        }
        Expr::Call { func, args } => {
            let args: Vec<(Expr, Gives)> = args.into_iter().map(|a| typed_expr(a, types)).collect();
            let plain = |args: Vec<(Expr, Gives)>| Expr::call(func, args.into_iter().map(|a| a.0).collect());
            match func {
                Func::Lt | Func::Le | Func::Gt | Func::Ge | Func::Eq | Func::Ne => (plain(args), Gives::Truth),
                Func::And | Func::Or | Func::Xor | Func::Not | Func::Cast(ValueType::Bool) => {
                    (plain(args), Gives::Truth)
                }
                Func::Min | Func::Max => {
                    let gives = args.iter().fold(Gives::Literal, |g, a| met(g, a.1));
                    (plain(args), gives)
                }
                Func::Cast(ValueType::F64) => {
                    let args = args.into_iter().map(|a| a.0).collect();
                    (Expr::call(Func::Cast(number_type), args), Gives::Number)
                }
                Func::Cast(_) if integers => {
                    let cast = plain(args);
                    (Expr::call(Func::Cast(number_type), vec![cast]), Gives::Number)
                }
                Func::Cast(_) => (plain(args), Gives::Number),
                Func::Abs | Func::Square | Func::Cube | Func::Heaviside | Func::Mod if integers => {
                    (Expr::call(func, args.into_iter().map(number).collect()), Gives::Number)
                }
                // A staged body gives what its operations give (`x * (y
                // == 0)` a truth value when `x` is a literal): a number of
                // the statement's type once cast. The random ones take
                // integers.
                _ if func.is_staged() => {
                    let call = Expr::call(func, args.into_iter().map(number).collect());
                    (Expr::call(Func::Cast(number_type), vec![call]), Gives::Number)
                }
                // A callback computes in f64, and a sum placed in its
                // argument would too, which an integer statement refuses: a
                // staged operator of its arity stands in for it.
                Func::User(_) if integers => {
                    let arity = args.len();
                    let staged = super::random_operators()
                        .iter()
                        .find(|f| f.is_staged() && f.arity() == arity)
                        .copied()
                        .unwrap_or(Func::Abs);
                    let call = Expr::call(staged, args.into_iter().map(number).collect());
                    (Expr::call(Func::Cast(number_type), vec![call]), Gives::Number)
                }
                _ if integers => {
                    let as_float = |a: (Expr, Gives)| Expr::call(Func::Cast(ValueType::F64), vec![a.0]);
                    let float = Expr::call(func, args.into_iter().map(as_float).collect());
                    (Expr::call(Func::Cast(number_type), vec![float]), Gives::Number)
                }
                _ => {
                    let gives = numbers(&args);
                    (Expr::call(func, args.into_iter().map(number).collect()), gives)
                }
            }
        }
        Expr::Reduce { op, var, body } => {
            let (body, gives) = typed_expr(*body, types);
            let gives = match op {
                Reduction::Or | Reduction::And => Gives::Truth,
                _ => gives,
            };
            // Reductions over integers compute in the statement's type:
            // truth values are counted as integers.
            let (body, gives) = match op {
                Reduction::Or | Reduction::And => (body, gives),
                _ if integers => (number((body, gives)), Gives::Number),
                _ => (body, gives),
            };
            (
                Expr::Reduce {
                    op,
                    var,
                    body: Box::new(body),
                },
                gives,
            )
        }
    }
}

/// Free occurrences of `var` in `e`.
fn occurrences(e: &Expr, var: &IndexVar) -> usize {
    match e {
        Expr::Access(a) => a.indices.iter().filter(|v| *v == var).count(),
        Expr::Literal(_) => 0,
        Expr::Neg(x) => occurrences(x, var),
        Expr::Binary { lhs, rhs, .. } => occurrences(lhs, var) + occurrences(rhs, var),
        Expr::Call { args, .. } => args.iter().map(|a| occurrences(a, var)).sum(),
        Expr::Reduce { var: v, body, .. } => {
            if v == var {
                0
            } else {
                occurrences(body, var)
            }
        }
    }
}

/// Wraps in `sum(var, ...)` the node `up` steps above the smallest
/// subexpression holding every occurrence of `var` (the root at most).
fn wrap_sum(e: Expr, var: &IndexVar, op: Reduction, rng: &mut Rng) -> Expr {
    let total = occurrences(&e, var);
    // Depth of the smallest subexpression holding all occurrences.
    fn lca_depth(e: &Expr, var: &IndexVar, total: usize) -> usize {
        match e {
            Expr::Neg(x) if occurrences(x, var) == total => 1 + lca_depth(x, var, total),
            Expr::Reduce { body, .. } if occurrences(body, var) == total => 1 + lca_depth(body, var, total),
            Expr::Call { args, .. } => match args.iter().position(|a| occurrences(a, var) == total) {
                Some(k) => 1 + lca_depth(&args[k], var, total),
                None => 0,
            },
            Expr::Binary { lhs, rhs, .. } => {
                if occurrences(lhs, var) == total {
                    1 + lca_depth(lhs, var, total)
                } else if occurrences(rhs, var) == total {
                    1 + lca_depth(rhs, var, total)
                } else {
                    0
                }
            }
            _ => 0,
        }
    }
    fn wrap_at(e: Expr, var: &IndexVar, op: Reduction, total: usize, depth: usize) -> Expr {
        if depth == 0 {
            return Expr::reduce(op, &var.0, e);
        }
        let down = |x: Expr| wrap_at(x, var, op, total, depth - 1);
        match e {
            Expr::Neg(x) => -down(*x),
            Expr::Reduce { op: o, var: v, body } => Expr::Reduce {
                op: o,
                var: v,
                body: Box::new(down(*body)),
            },
            Expr::Binary { op: b, lhs, rhs } => {
                if occurrences(&lhs, var) == total {
                    Expr::binary(b, down(*lhs), *rhs)
                } else {
                    Expr::binary(b, *lhs, down(*rhs))
                }
            }
            Expr::Call { func, mut args } => {
                let k = args
                    .iter()
                    .position(|a| occurrences(a, var) == total)
                    .expect("the occurrences are in one argument");
                let arg = std::mem::replace(&mut args[k], Expr::Literal(0.0));
                args[k] = down(arg);
                Expr::call(func, args)
            }
            other => Expr::reduce(op, &var.0, other),
        }
    }
    let deepest = lca_depth(&e, var, total);
    let depth = rng.range(0, deepest);
    wrap_at(e, var, op, total, depth)
}

/// A random well-formed statement within `config`'s bounds.
///
/// ```
/// use tessera_engine::testing::{random_statement, Rng, StatementConfig};
/// use tessera_engine::notation::parse_statement;
/// let mut rng = Rng::new(1);
/// let case = random_statement(&mut rng, &StatementConfig::default());
/// assert_eq!(parse_statement(&case.text).unwrap(), case.statement);
/// ```
pub fn random_statement(rng: &mut Rng, config: &StatementConfig) -> RandomStatement {
    loop {
        if let Some(s) = draw(rng, config) {
            return s;
        }
    }
}

/// Whether some variable of a divisor access is summed over that access
/// alone: the divisor would then be a sum, which may be zero.
fn divides_by_a_sum(rhs: &Expr, tensors: &[TensorSpec], out_vars: &[String]) -> bool {
    rhs.accesses().iter().any(|a| {
        tensors.iter().any(|t| t.name == a.tensor && t.divisor)
            && a.indices
                .iter()
                .any(|v| !out_vars.contains(&v.0) && occurrences(rhs, v) == 1)
    })
}

/// One attempt at a statement; `None` when it divides by a sum.
fn draw(rng: &mut Rng, config: &StatementConfig) -> Option<RandomStatement> {
    let nvars = rng.range(0, config.max_vars.min(VAR_NAMES.len()));
    // Sizes whose product stays within the work bound.
    let mut vars: Vec<(String, usize)> = Vec::with_capacity(nvars);
    let mut work = 1usize;
    for name in VAR_NAMES.iter().take(nvars) {
        let room = (config.max_work / work).max(1);
        let d = config.max_dim.max(1);
        let cap = match nvars {
            0..=2 => d,
            3 => (2 * d / 3).max(1),
            4 => (5 * d / 12).max(1),
            _ => (d / 3).max(1),
        }
        .min(room);
        let n = if rng.percent(10) { 1 } else { rng.range(1, cap) };
        work *= n;
        vars.push((name.to_string(), n));
    }
    let budget = rng.range(1, config.max_tensors.min(TENSOR_NAMES.len()));
    let mut g = Generator {
        rng,
        config,
        vars,
        tensors: Vec::new(),
        accesses: Vec::new(),
        budget,
    };
    let mut rhs = g.expr(0);
    if g.tensors.is_empty() {
        // Every statement reads at least one tensor.
        let t = g.new_tensor(false).expect("the budget is at least one");
        rhs = if g.rng.percent(50) { t } else { rhs * t };
    }
    let out_order = g.rng.range(0, g.config.max_order.min(g.vars.len()));
    // Prefer output variables the right side uses; now and then broadcast.
    let used = rhs.free_vars();
    let mut out_vars: Vec<String> = used.iter().map(|v| v.0.clone()).collect();
    g.rng.shuffle(&mut out_vars);
    out_vars.truncate(out_order);
    if out_vars.len() < out_order || g.rng.percent(8) {
        let extra: Vec<String> = g
            .vars
            .iter()
            .map(|(v, _)| v.clone())
            .filter(|v| !out_vars.contains(v))
            .collect();
        if let Some(v) = extra.first() {
            if out_vars.len() < g.config.max_order {
                let at = g.rng.range(0, out_vars.len());
                out_vars.insert(at, v.clone());
            }
        }
    }
    if divides_by_a_sum(&rhs, &g.tensors, &out_vars) {
        return None;
    }
    // Explicit sums for some summed variables.
    for v in &used {
        if !out_vars.contains(&v.0) && g.rng.percent(g.config.explicit_sum_percent) {
            let op = if g.rng.percent(g.config.other_reduction_percent) {
                *g.rng.pick(&REDUCTIONS)
            } else {
                Reduction::Sum
            };
            rhs = wrap_sum(rhs, v, op, g.rng);
        }
    }
    let rhs = cast_where_numbers_are_needed(rhs, ValueType::F64);
    let output_shape: Vec<usize> = out_vars.iter().map(|v| g.size(v)).collect();
    let sizes: Vec<(String, usize)> = out_vars
        .iter()
        .filter(|v| !used.iter().any(|u| u.0 == **v))
        .map(|v| (v.clone(), g.size(v)))
        .collect();
    let refs: Vec<&str> = out_vars.iter().map(String::as_str).collect();
    let name = if out_vars.is_empty() { "a" } else { "A" };
    let lhs = Access::new(name, &refs);
    let add_assign = g.rng.percent(g.config.add_assign_percent);
    let mut tensors = g.tensors;
    let statement = if add_assign {
        tensors.push(TensorSpec {
            name: name.to_string(),
            shape: output_shape.clone(),
            divisor: false,
        });
        Statement::add_assign(lhs, rhs)
    } else {
        Statement::assign(lhs, rhs)
    };
    Some(RandomStatement {
        text: statement.to_string(),
        statement,
        tensors,
        sizes,
        output_shape,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::{check, parse_statement};

    #[test]
    fn random_statements_parse_back_and_check() {
        let mut rng = Rng::new(77);
        let config = StatementConfig::default();
        let (mut divs, mut sums, mut adds, mut broadcasts) = (0, 0, 0, 0);
        let (mut calls, mut reductions) = (0, 0);
        for _ in 0..500 {
            let case = random_statement(&mut rng, &config);
            let parsed = parse_statement(&case.text).unwrap_or_else(|e| panic!("{}: {e}", case.text));
            assert_eq!(parsed, case.statement, "{}", case.text);
            let shape_of = |n: &str| case.tensors.iter().find(|t| t.name == n).map(|t| t.shape.clone());
            let size_of = |v: &str| case.sizes.iter().find(|(s, _)| s == v).map(|(_, n)| *n);
            let sizes = check(&parsed, &shape_of, &size_of).unwrap_or_else(|e| panic!("{}: {e}", case.text));
            assert_eq!(sizes.output_shape(), &case.output_shape[..], "{}", case.text);
            assert!((1..=4).contains(&case.tensors.iter().filter(|t| t.name != parsed.lhs.tensor).count()));
            divs += case.text.contains('/') as usize;
            sums += case.text.contains("sum(") as usize;
            adds += case.text.contains("+=") as usize;
            broadcasts += !case.sizes.is_empty() as usize;
            let called = |f: Func| {
                case.text.contains(&format!("{}(", f.name())) || !f.is_called() && case.text.contains(f.name())
            };
            calls += SAFE_FUNCTIONS.into_iter().any(called) as usize;
            reductions += ["min(", "max(", "prod(", "or(", "and("]
                .iter()
                .any(|r| case.text.contains(r)) as usize;
        }
        assert!(
            divs > 10 && sums > 10 && adds > 10 && broadcasts > 10 && calls > 10 && reductions > 10,
            "{divs} {sums} {adds} {broadcasts} {calls} {reductions}"
        );
    }
}
