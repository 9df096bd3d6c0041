//! Well-formed statements, formats and small tensors, decoded from bytes.
//!
//! A [`Case`] is a statement with 0–6 index variables (each of size 1–6,
//! their product at most [`MAX_WORK`]), 1–4 tensors of orders 0–4 read
//! through accesses that share, permute and sum index variables, the
//! operators `+ - * /`, unary minus, literals, the functions, comparisons,
//! logical and user-defined operators that are exact on exact arguments, explicit
//! `sum(...)` (also over a variable the body does not use) and the other
//! reductions, broadcasts and `+=`, now and then read in a semiring with
//! every tensor filled with its zero; a format
//! for every tensor (every named format of its order, or a per-level
//! composition of dense, compressed, singleton and hashed levels with their
//! ordered/unique properties, in any mode order), contents of the awkward
//! kinds, and an output format (or the default).
//!
//! What it leaves out, and why: the dense reference gives every component
//! its IEEE meaning, while a sparse kernel never visits a component that is
//! not stored. The two agree whenever no visited value is infinite or NaN
//! (then `0 * x = 0` for every `x` an implicit zero meets). So values are
//! small dyadic numbers (multiples of 1/4 up to 3, and stored zeros, `-0`
//! included), a divisor is either a nonzero literal or a tensor that stores
//! every component with a nonzero power of two and holds no variable that
//! only it uses (that variable would be summed over the divisor alone, and
//! a sum of nonzero values can be zero), and nothing can overflow
//! (at most [`MAX_WORK`] terms of at most eight factors of at most 4):
//! every result is exact in `f64`, so disagreements are never rounding.
//! Non-finite values are exercised by the `pack` target, whose kernels
//! keep the two meanings equal (see [`super::pack`]).

use tessera::engine::notation::complex::split;
use tessera::engine::notation::{parse_statement, AssignOp, BinaryOp, Expr, IndexVar, Reduction, Statement, SEMIRINGS};
use tessera::engine::testing::{
    cast_where_numbers_are_needed, named_formats, output_formats, random_entries, random_operators, EntryKind, Rng,
    Tolerance, EXACT_FUNCTIONS,
};
use tessera::formats::{AnyTensor, Complex64, CoordinateList, Format, LevelFormat, Tensor, TensorRef, ValueType};

use super::source::Source;

/// Most iterations of the full index space (product of every variable's
/// size), so that the dense reference and the interpreter stay quick.
pub const MAX_WORK: usize = 4096;

/// Largest mode size.
pub const MAX_DIM: usize = 6;

/// Deepest expression tree.
const MAX_DEPTH: usize = 4;

const VAR_NAMES: [&str; 6] = ["i", "j", "k", "l", "m", "n"];
const TENSOR_NAMES: [&str; 4] = ["B", "C", "D", "E"];

/// Stored values: multiples of 1/4 up to 3, zeros (a stored zero is an
/// explicit zero, `-0` too).
pub const VALUES: [f64; 16] = [
    0.0, 0.25, -0.25, 0.5, -0.5, 0.75, -0.75, 1.0, -1.0, 1.5, -1.5, 2.0, -2.0, 3.0, -3.0, -0.0,
];

/// Literals of the statement (`0` included: it makes a term vanish).
const LITERALS: [f64; 6] = [0.5, 1.0, 2.0, 3.0, 0.25, 0.0];

/// Divisors: nonzero powers of two, so that quotients are exact.
pub const DIVISORS: [f64; 8] = [0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0];

/// One decoded case, ready for the engine and the reference.
#[derive(Clone, Debug)]
pub struct Case {
    /// The statement's canonical text.
    pub text: String,
    /// Every tensor it reads (the left tensor too, for `+=`).
    pub tensors: Vec<(String, AnyTensor)>,
    /// Sizes of the variables no right-hand access fixes.
    pub sizes: Vec<(String, usize)>,
    /// The result's format; `None` is the engine's default.
    pub output: Option<Format>,
}

impl Case {
    /// The inputs as the reference takes them.
    pub fn inputs(&self) -> Vec<(&str, TensorRef<'_>)> {
        self.tensors.iter().map(|(n, t)| (n.as_str(), t.as_ref())).collect()
    }
    /// The inputs' value type (`f64` when they all hold it).
    pub fn value_type(&self) -> ValueType {
        let typed = self
            .tensors
            .iter()
            .map(|(_, t)| t.value_type())
            .find(|&t| t != ValueType::F64);
        typed.unwrap_or(ValueType::F64)
    }
    /// How close a result must be to the reference's: as the default, or
    /// for `f32` results, to their precision (a sum added in another order
    /// may round to the neighbouring `f32`).
    pub fn tolerance(&self) -> Tolerance {
        match self.value_type() {
            ValueType::F32 => Tolerance {
                relative: 3e-7,
                absolute: 1e-12,
            },
            _ => Tolerance::default(),
        }
    }
    /// The sizes as the reference takes them.
    pub fn size_refs(&self) -> Vec<(&str, usize)> {
        self.sizes.iter().map(|(v, n)| (v.as_str(), *n)).collect()
    }
}

/// A tensor the statement reads.
struct Spec {
    name: &'static str,
    /// The variable each mode is read with in its first access.
    vars: Vec<usize>,
    shape: Vec<usize>,
    /// Stores every component with a nonzero power of two: may divide.
    divisor: bool,
}

struct Builder<'s, 'a> {
    src: &'s mut Source<'a>,
    sizes: Vec<usize>,
    specs: Vec<Spec>,
}

impl Builder<'_, '_> {
    fn access(&mut self, t: usize) -> Expr {
        let spec = &self.specs[t];
        let mut vars: Vec<usize> = spec.vars.clone();
        // Now and then read the tensor through other variables of the same
        // sizes (a transposed access, or a different contraction).
        if !vars.is_empty() && self.src.percent(30) {
            let mut chosen: Vec<usize> = Vec::with_capacity(vars.len());
            for &d in &spec.shape {
                let candidates: Vec<usize> = (0..self.sizes.len())
                    .filter(|v| self.sizes[*v] == d && !chosen.contains(v))
                    .collect();
                if candidates.is_empty() {
                    break;
                }
                chosen.push(*self.src.pick(&candidates));
            }
            if chosen.len() == vars.len() {
                vars = chosen;
            }
        }
        let names: Vec<&str> = vars.iter().map(|&v| VAR_NAMES[v]).collect();
        Expr::access(spec.name, &names)
    }

    fn leaf(&mut self) -> Expr {
        if self.src.percent(12) {
            return Expr::lit(*self.src.pick(&LITERALS));
        }
        let t = self.src.below(self.specs.len());
        self.access(t)
    }

    fn divisor(&mut self) -> Expr {
        let divisors: Vec<usize> = (0..self.specs.len()).filter(|&t| self.specs[t].divisor).collect();
        if !divisors.is_empty() && self.src.percent(60) {
            let t = *self.src.pick(&divisors);
            return self.access(t);
        }
        Expr::lit(*self.src.pick(&DIVISORS))
    }

    fn expr(&mut self, depth: usize) -> Expr {
        if depth >= MAX_DEPTH || (depth > 0 && self.src.percent(25 + 15 * depth as u32)) {
            return self.leaf();
        }
        match self.src.below(9) {
            0 => -self.expr(depth + 1),
            8 => {
                let func = match self.src.percent(15) {
                    true => *self.src.pick(random_operators()),
                    false => *self.src.pick(&EXACT_FUNCTIONS),
                };
                let args = (0..func.arity()).map(|_| self.expr(depth + 1)).collect();
                Expr::call(func, args)
            }
            1 => Expr::binary(BinaryOp::Add, self.expr(depth + 1), self.expr(depth + 1)),
            2 => Expr::binary(BinaryOp::Sub, self.expr(depth + 1), self.expr(depth + 1)),
            3 => {
                let lhs = self.expr(depth + 1);
                Expr::binary(BinaryOp::Div, lhs, self.divisor())
            }
            4 => self.leaf(),
            _ => Expr::binary(BinaryOp::Mul, self.expr(depth + 1), self.expr(depth + 1)),
        }
    }
}

/// `e` with every divisor access that holds a variable used nowhere else
/// (and not on the left, in `out`) replaced by a nonzero literal; `whole`
/// is the right side `e` is part of.
fn safe_divisors(e: Expr, whole: &Expr, out: &[IndexVar]) -> Expr {
    match e {
        Expr::Binary { op, lhs, rhs } => {
            let lhs = safe_divisors(*lhs, whole, out);
            let rhs = match *rhs {
                Expr::Access(a)
                    if op == BinaryOp::Div
                        && a.indices.iter().any(|v| {
                            !out.contains(v) && occurrences(whole, v) == occurrences(&Expr::Access(a.clone()), v)
                        }) =>
                {
                    Expr::lit(DIVISORS[a.indices.len() % DIVISORS.len()])
                }
                other => safe_divisors(other, whole, out),
            };
            Expr::binary(op, lhs, rhs)
        }
        Expr::Neg(x) => -safe_divisors(*x, whole, out),
        Expr::Reduce { op, var, body } => Expr::Reduce {
            op,
            var,
            body: Box::new(safe_divisors(*body, whole, out)),
        },
        Expr::Call { func, args } => Expr::call(func, args.into_iter().map(|a| safe_divisors(a, whole, out)).collect()),
        other => other,
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
        Expr::Reduce { var: v, .. } if v == var => 0,
        Expr::Reduce { body, .. } => occurrences(body, var),
    }
}

/// How many nodes down from `e` the smallest subexpression holding all
/// `total` free occurrences of `var` is.
fn enclosing_depth(e: &Expr, var: &IndexVar, total: usize) -> usize {
    let down = |x: &Expr| (total == 0 || occurrences(x, var) == total).then(|| 1 + enclosing_depth(x, var, total));
    match e {
        Expr::Neg(x) | Expr::Reduce { body: x, .. } => down(x).unwrap_or(0),
        // With no occurrence at all, either side will do: take the left.
        Expr::Binary { lhs, rhs, .. } => down(lhs).or_else(|| down(rhs)).unwrap_or(0),
        Expr::Call { args, .. } => args.iter().find_map(down).unwrap_or(0),
        _ => 0,
    }
}

/// Wraps the node `depth` steps down the path towards every occurrence of
/// `var` in `op(var, ...)`.
fn wrap_sum(e: Expr, var: &IndexVar, op: Reduction, total: usize, depth: usize) -> Expr {
    let reduce = |body: Expr| Expr::reduce(op, &var.0, body);
    if depth == 0 {
        return reduce(e);
    }
    let holds = |x: &Expr| total == 0 || occurrences(x, var) == total;
    let down = |x: Expr| wrap_sum(x, var, op, total, depth - 1);
    match e {
        Expr::Neg(x) => -down(*x),
        Expr::Reduce { op: o, var: v, body } => Expr::Reduce {
            op: o,
            var: v,
            body: Box::new(down(*body)),
        },
        Expr::Binary { op: b, lhs, rhs } => {
            if holds(&lhs) {
                Expr::binary(b, down(*lhs), *rhs)
            } else {
                Expr::binary(b, *lhs, down(*rhs))
            }
        }
        Expr::Call { func, mut args } => {
            let k = args.iter().position(holds).unwrap_or(0);
            let arg = std::mem::replace(&mut args[k], Expr::Literal(0.0));
            args[k] = down(arg);
            Expr::call(func, args)
        }
        other => reduce(other),
    }
}

/// A well-formed case decoded from `src`, or why its tensors could not be
/// built (which is itself a finding: every entry list here packs).
pub fn case(src: &mut Source<'_>) -> Result<Case, String> {
    // Index variables and their sizes, the whole space within MAX_WORK.
    let nvars = src.below(VAR_NAMES.len() + 1);
    let mut sizes = Vec::with_capacity(nvars);
    let mut work = 1usize;
    for _ in 0..nvars {
        let room = (MAX_WORK / work).clamp(1, MAX_DIM);
        let n = src.range(1, room);
        work *= n;
        sizes.push(n);
    }
    // Tensors: each reads distinct variables, so their sizes agree.
    let ntensors = src.range(1, TENSOR_NAMES.len());
    let mut specs = Vec::with_capacity(ntensors);
    for name in TENSOR_NAMES.iter().take(ntensors) {
        let order = src.below(nvars.min(4) + 1);
        let mut pool: Vec<usize> = (0..nvars).collect();
        let vars: Vec<usize> = (0..order).map(|_| pool.remove(src.below(pool.len()))).collect();
        let shape = vars.iter().map(|&v| sizes[v]).collect();
        let divisor = src.percent(20);
        specs.push(Spec {
            name,
            vars,
            shape,
            divisor,
        });
    }
    let mut b = Builder {
        src,
        sizes: sizes.clone(),
        specs,
    };
    let rhs = b.expr(0);
    let Builder { src, specs, .. } = b;

    // The left side: distinct variables, used on the right or not.
    let out_order = src.below(nvars.min(4) + 1);
    let mut pool: Vec<usize> = (0..nvars).collect();
    let out_vars: Vec<usize> = (0..out_order).map(|_| pool.remove(src.below(pool.len()))).collect();

    // A variable that only a divisor uses would be summed over the divisor
    // alone, and a sum of nonzero values can be zero: such a divisor
    // becomes a literal.
    let out_indices: Vec<IndexVar> = out_vars.iter().map(|&v| IndexVar::new(VAR_NAMES[v])).collect();
    let mut rhs = safe_divisors(rhs.clone(), &rhs, &out_indices);

    // Explicit sums: over a summed variable, somewhere on the path to all
    // its occurrences; or over a variable used nowhere (a sum of copies).
    let free = rhs.free_vars();
    for (v, name) in VAR_NAMES.iter().enumerate().take(nvars) {
        if out_vars.contains(&v) {
            continue;
        }
        let var = IndexVar::new(*name);
        let used = free.contains(&var);
        if src.percent(if used { 15 } else { 5 }) {
            let total = occurrences(&rhs, &var);
            let deepest = enclosing_depth(&rhs, &var, total);
            let depth = src.range(0, deepest);
            // `min(j, e)` and `max(j, e)` with `e` not using `j` read as
            // the functions of two arguments.
            let ops: &[Reduction] = if total == 0 {
                &[Reduction::Sum, Reduction::Prod, Reduction::Or, Reduction::And]
            } else {
                &[
                    Reduction::Sum,
                    Reduction::Min,
                    Reduction::Max,
                    Reduction::Prod,
                    Reduction::Or,
                    Reduction::And,
                ]
            };
            let op = if src.percent(60) {
                Reduction::Sum
            } else {
                *src.pick(ops)
            };
            rhs = wrap_sum(rhs, &var, op, total, depth);
        }
    }

    // Truth values where numbers are needed get their cast.
    let rhs = cast_where_numbers_are_needed(rhs, ValueType::F64);
    let out_names: Vec<&str> = out_vars.iter().map(|&v| VAR_NAMES[v]).collect();
    let lhs = tessera::engine::notation::Access::new("A", &out_names);
    let add_assign = src.percent(10);
    let statement = if add_assign {
        Statement::add_assign(lhs, rhs)
    } else {
        Statement::assign(lhs, rhs)
    };

    // Sizes of the variables no right-hand access fixes.
    let accesses = statement.rhs.accesses();
    let fixed = |var: &str| accesses.iter().any(|a| a.indices.iter().any(|v| v.as_str() == var));
    let given: Vec<(String, usize)> = statement
        .index_vars()
        .iter()
        .filter(|v| !fixed(v.as_str()))
        .map(|v| {
            let k = VAR_NAMES.iter().position(|n| *n == v.as_str()).unwrap_or(0);
            (v.0.clone(), sizes[k])
        })
        .collect();

    // Contents and formats of the tensors it reads.
    let mut tensors = Vec::new();
    for spec in &specs {
        if !accesses.iter().any(|a| a.tensor == spec.name) {
            continue;
        }
        let t = tensor(src, &spec.shape, spec.divisor)?;
        tensors.push((spec.name.to_string(), t));
    }
    let out_shape: Vec<usize> = out_vars.iter().map(|&v| sizes[v]).collect();
    if add_assign {
        tensors.push(("A".to_string(), tensor(src, &out_shape, false)?));
    }
    let output = match src.below(8) {
        0 => None,
        1 | 2 => Some(format(src, &out_shape)),
        _ => Some(src.pick(&output_formats(&out_shape)).clone()),
    };
    // Now and then the statement read in a semiring, every tensor filled
    // with its zero (when the statement has no `-`, `/` or negation, and
    // its text reads back as the rewriting).
    let semiring = src.percent(15).then(|| *src.pick(&SEMIRINGS));
    let rewritten = semiring.and_then(|s| {
        let r = s.rewrite(&statement).ok()?;
        (parse_statement(&r.to_string()).ok()? == r).then_some((s, r))
    });
    let (statement, tensors) = match rewritten {
        Some((s, r)) => {
            let filled = tensors
                .into_iter()
                .map(|(n, t)| t.with_fill(s.zero()).map(|t| (n, t)))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("filling with {}: {e}", s.zero()))?;
            (r, filled)
        }
        None => (statement, tensors),
    };
    // The inputs' value type, decided last so that shorter inputs decode
    // as before (f64 once the bytes run out); bool and integers not in a
    // semiring, whose zero may be no truth value or integer.
    let value_type = match src.below(10) {
        1 => ValueType::F32,
        2 if semiring.is_none() => ValueType::Bool,
        3 if semiring.is_none() => ValueType::I64,
        4 if semiring.is_none() => ValueType::I32,
        5 if semiring.is_none() => ValueType::C64,
        _ => ValueType::F64,
    };
    // Truth values where numbers are needed (a semiring's `||` too) get
    // their cast.
    let typed = |ty: ValueType| {
        let rhs = cast_where_numbers_are_needed(statement.rhs.clone(), ty);
        match statement.op {
            AssignOp::Assign => Statement::assign(statement.lhs.clone(), rhs),
            AssignOp::AddAssign => Statement::add_assign(statement.lhs.clone(), rhs),
        }
    };
    // Complex values where the statement takes them (no comparisons,
    // functions of real values only, sums only), otherwise real ones.
    let complex_ok = |s: &Statement| split(s, &|_| Some(ValueType::C64)).is_ok();
    let (value_type, statement) = match value_type {
        ValueType::C64 if complex_ok(&typed(ValueType::C64)) => (value_type, typed(value_type)),
        ValueType::C64 => (ValueType::F64, typed(ValueType::F64)),
        ty => (ty, typed(ty)),
    };
    // A `+=` target of truth values' results holds numbers (a truth value
    // added to a number is its 0 or 1).
    let target = (statement.op == AssignOp::AddAssign).then_some(statement.lhs.tensor.clone());
    let type_of = |name: &str| match value_type {
        ValueType::Bool if target.as_deref() == Some(name) => ValueType::F64,
        ty => ty,
    };
    Ok(Case {
        text: statement.to_string(),
        tensors: tensors
            .into_iter()
            .map(|(n, t)| {
                let ty = type_of(&n);
                // Integers from the values scaled, so that few are 0.
                let t = if ty.is_integer() {
                    t.map_values(|v| (v * 16.0).round())
                } else {
                    t
                };
                match ty {
                    // An imaginary part made from each value (0 stays 0).
                    ValueType::C64 => (n, AnyTensor::C64(t.map_values(|v| Complex64::new(v, (v * 7.1).sin())))),
                    ty => (n, AnyTensor::narrowed(t, ty)),
                }
            })
            .collect(),
        sizes: given,
        output,
    })
}

/// A format for tensors of `shape`: a named one, or a per-level
/// composition (every level format with its properties, any mode order).
pub fn format(src: &mut Source<'_>, shape: &[usize]) -> Format {
    let order = shape.len();
    if order == 0 {
        return Format::dense(0);
    }
    if src.percent(40) {
        let named = named_formats(shape);
        return src.pick(&named).clone();
    }
    let mut levels: Vec<LevelFormat> = Vec::with_capacity(order);
    while levels.len() < order {
        let left = order - levels.len();
        let level = match src.below(6) {
            0 => LevelFormat::dense(),
            1 | 2 => LevelFormat::compressed(),
            3 => LevelFormat::hashed(),
            // A singleton level stores one child per parent position: it
            // encodes any tensor only below a non-unique level.
            4 if levels.last().is_some_and(|l| !l.unique) => LevelFormat::singleton(),
            4 => LevelFormat::compressed(),
            _ => {
                // A COO run: compressed(nonunique), singletons below.
                let run = src.range(1, left);
                for k in 0..run.saturating_sub(1) {
                    let top = if k == 0 {
                        LevelFormat::compressed()
                    } else {
                        LevelFormat::singleton()
                    };
                    levels.push(top.non_unique());
                }
                if run == 1 {
                    LevelFormat::compressed()
                } else {
                    LevelFormat::singleton()
                }
            }
        };
        // Properties: now and then unordered or non-unique where the
        // composition allows it (Format::new says).
        let level = match src.below(8) {
            0 => level.unordered(),
            1 => level.non_unique(),
            _ => level,
        };
        levels.push(level);
    }
    let mut pool: Vec<usize> = (0..order).collect();
    let modes: Vec<usize> = (0..order).map(|_| pool.remove(src.below(pool.len()))).collect();
    match Format::from_levels(&levels, &modes) {
        Ok(f) => f,
        Err(_) => {
            let named = named_formats(shape);
            src.pick(&named).clone()
        }
    }
}

/// Entries of a tensor of `shape`: every component, nonzero powers of two,
/// for a divisor; otherwise a generated kind, one byte per component, or a
/// list of entries (duplicates and stored zeros included).
pub fn entries(src: &mut Source<'_>, shape: &[usize], divisor: bool) -> CoordinateList<f64> {
    let total: usize = shape.iter().product();
    let mut list = CoordinateList::new(shape);
    if total == 0 {
        return list;
    }
    let mut coords = vec![0u64; shape.len()];
    let unflatten = |mut flat: usize, coords: &mut [u64]| {
        for (c, &d) in coords.iter_mut().zip(shape).rev() {
            *c = (flat % d) as u64;
            flat /= d;
        }
    };
    if divisor {
        for flat in 0..total {
            unflatten(flat, &mut coords);
            push(&mut list, &coords, *src.pick(&DIVISORS));
        }
        return list;
    }
    match src.below(4) {
        0 => {
            // One of the testing module's kinds (empty, skewed, duplicates,
            // unsorted, …), its generator seeded from the bytes; its values
            // are multiples of 1/4 up to 3, halved for some duplicates.
            let kind = *src.pick(&EntryKind::ALL);
            let mut rng = Rng::new(src.u64());
            list = random_entries(&mut rng, shape, kind);
        }
        1 if total <= 256 => {
            // One byte per component: absent (about half), or a value.
            for flat in 0..total {
                let b = src.byte() as usize;
                if b & 1 == 0 {
                    continue;
                }
                unflatten(flat, &mut coords);
                push(&mut list, &coords, VALUES[(b >> 1) % VALUES.len()]);
            }
        }
        _ => {
            // A list of entries at chosen coordinates, in any order.
            let n = src.below(25);
            for _ in 0..n {
                for (c, &d) in coords.iter_mut().zip(shape) {
                    *c = src.below(d) as u64;
                }
                push(&mut list, &coords, *src.pick(&VALUES));
            }
        }
    }
    list
}

fn push(list: &mut CoordinateList<f64>, coords: &[u64], value: f64) {
    // Every coordinate is drawn below its mode's size.
    list.push(coords, value)
        .expect("generated coordinates are within the shape");
}

/// A tensor of `shape` in a format decoded from `src`.
pub fn tensor(src: &mut Source<'_>, shape: &[usize], divisor: bool) -> Result<Tensor<f64>, String> {
    let format = format(src, shape);
    let list = entries(src, shape, divisor);
    Tensor::pack(&list, format.clone())
        .map_err(|e| format!("packing {} entries of {shape:?} into {format}: {e}", list.len()))
}
