//! User-defined operators, registered under a name that statements then
//! call like a built-in function (`relu(A(i,j))`). Two kinds:
//!
//! - **Staged** ([`Operator::staged`], [`Operator::define`]): the value is
//!   an expression of the arguments built from tessera's own functions and
//!   arithmetic. Calls are written out before planning ([`staged`]), so
//!   every tier compiles the operator inline, as it compiles any statement,
//!   and the merge lattices follow from the body's functions.
//! - **Callbacks** ([`Operator::unary`], [`Operator::binary`]): any Rust
//!   function, with its algebraic properties declared — annihilators, or an
//!   explicit iteration algebra ([`Region`]: union, intersection,
//!   complement). The interpreter calls it; compiled kernels call it
//!   through one shim per entry.
//!
//! Operators are registered for the whole process (statements name them,
//! and names outlive engines); a name is registered once.

mod region;
pub(crate) mod staged;

use std::sync::{Arc, RwLock};

pub use region::Region;

use super::func::{Annihilators, Func, Reduction};
use super::ir::Expr;
use crate::error::{EngineError, Result};

/// The value of a user-defined callback operator.
pub type OperatorFn = Arc<dyn Fn(&[f64]) -> f64 + Send + Sync>;

/// Most arguments a staged operator takes (a callback takes one or two).
pub const MAX_STAGED_ARITY: usize = 4;

/// A user-defined operator: its name, arity, value and properties.
///
/// ```
/// use tessera_engine::notation::{register_operator, Expr, Func, Operator};
/// use tessera_engine::{Engine, Inputs};
/// use tessera_formats::Tensor;
///
/// // A callback: the interpreter calls it, compiled tiers call it per entry.
/// let relu = register_operator(Operator::unary("relu_doc", |x| x.max(0.0))).unwrap();
/// // Staged: built from tessera's functions, compiled inline on every tier.
/// register_operator(Operator::staged("leaky_doc", 1, |x| {
///     Expr::call(Func::Max, vec![x[0].clone(), Expr::lit(0.5) * x[0].clone()])
/// }))
/// .unwrap();
/// let b = Tensor::from_dense(&[3], vec![-1.0, 0.0, 2.0]).unwrap();
/// let inputs = Inputs::new().with("b", &b);
/// let y = Engine::new().eval("y(i) = relu_doc(b(i))", &inputs).unwrap();
/// assert_eq!(y.to_dense_vec().unwrap(), vec![0.0, 0.0, 2.0]);
/// let y = Engine::new().eval("y(i) = leaky_doc(b(i))", &inputs).unwrap();
/// assert_eq!(y.to_dense_vec().unwrap(), vec![-0.5, 0.0, 2.0]);
/// assert_eq!(relu.name(), "relu_doc");
/// ```
#[derive(Clone)]
pub struct Operator {
    name: String,
    arity: usize,
    body: Body,
    left: Vec<f64>,
    right: Vec<f64>,
    region: Option<Region>,
    absent: f64,
}

/// How an operator computes its value.
#[derive(Clone)]
enum Body {
    Callback(OperatorFn),
    /// An expression of the parameters ([`staged::parameter`]).
    Staged(Expr),
}

impl Operator {
    fn with_body(name: &str, arity: usize, body: Body) -> Operator {
        Operator {
            name: name.to_string(),
            arity,
            body,
            left: Vec::new(),
            right: Vec::new(),
            region: None,
            absent: 0.0,
        }
    }

    /// An operator of one argument. Where its argument is absent, its
    /// value is `f(fill)`: it keeps sparsity exactly when `f(0) = 0`.
    pub fn unary(name: &str, f: impl Fn(f64) -> f64 + Send + Sync + 'static) -> Operator {
        Operator::with_body(name, 1, Body::Callback(Arc::new(move |args| f(args[0]))))
    }

    /// An operator of two arguments, absent only where both are unless
    /// [`annihilated_by`](Self::annihilated_by) or
    /// [`iterating`](Self::iterating) says more.
    pub fn binary(name: &str, f: impl Fn(f64, f64) -> f64 + Send + Sync + 'static) -> Operator {
        Operator::with_body(name, 2, Body::Callback(Arc::new(move |args| f(args[0], args[1]))))
    }

    /// An operator of `arity` arguments (1 to [`MAX_STAGED_ARITY`]) whose
    /// value is the expression `body` builds from the arguments it is given
    /// (stand-ins for them, [`Expr`]s), with tessera's functions,
    /// arithmetic, comparisons and casts. Every call is written out as that
    /// expression before planning: every tier compiles it inline, and where
    /// it is computed follows from the functions in it (`x * (y == 0)` is
    /// computed only where `x` is stored). Reductions and tensors other
    /// than the arguments are refused when it is registered.
    pub fn staged(name: &str, arity: usize, body: impl FnOnce(&[Expr]) -> Expr) -> Operator {
        let parameters: Vec<Expr> = (0..arity).map(staged::parameter).collect();
        Operator::with_body(name, arity, Body::Staged(body(&parameters)))
    }

    /// A staged operator from its definition in the statement language:
    /// `softplus(x) = log(1 + exp(x))`, the parameters named on the left
    /// and read as scalars on the right. Errors name the column.
    ///
    /// ```
    /// use tessera_engine::notation::Operator;
    /// let op = Operator::define("lerp_doc(a, b, t) = a + t * (b - a)").unwrap();
    /// assert_eq!(op.arity(), 3);
    /// let err = Operator::define("bad(x) = x + A(i)").err().unwrap().to_string();
    /// assert!(err.contains("column 14"), "{err}");
    /// ```
    pub fn define(text: &str) -> Result<Operator> {
        let (name, arity, body) = staged::parse_definition(text)?;
        Ok(Operator::with_body(&name, arity, Body::Staged(body)))
    }

    /// The operator's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many arguments it takes.
    pub fn arity(&self) -> usize {
        self.arity
    }

    /// Declares `z` an annihilator: `f(z, y) = f(y, z) = z` for every
    /// finite `y`. An absent operand holding it makes the result absent,
    /// so the lattice intersects (`z = 0` for a product-like operator).
    pub fn annihilated_by(mut self, z: f64) -> Operator {
        self.left.push(z);
        self.right.push(z);
        self
    }

    /// Gives a callback operator an explicit iteration algebra: its value
    /// is `f(args)` inside `region` and the absent value (0, or
    /// [`absent_value`](Self::absent_value)) outside it, an argument being
    /// present where it differs from the absent value. The lattice follows
    /// from the region: `arg(0) & arg(1)` intersects, `arg(0) | arg(1)`
    /// unites, `arg(0) & !arg(1)` iterates the first argument's entries
    /// that the second lacks.
    ///
    /// ```
    /// use tessera_engine::notation::{register_operator, Operator, Region};
    /// use tessera_engine::{Engine, Inputs};
    /// use tessera_formats::{Format, Tensor};
    ///
    /// let only_left = Region::arg(0) & !Region::arg(1);
    /// register_operator(Operator::binary("minus_doc", |a, _| a).iterating(only_left)).unwrap();
    /// let a = Tensor::from_dense(&[3], vec![1.0, 2.0, 0.0]).unwrap();
    /// let b = Tensor::from_dense(&[3], vec![0.0, 5.0, 7.0]).unwrap();
    /// let inputs = Inputs::new().with("a", &a).with("b", &b);
    /// let y = Engine::new().eval("y(i) = minus_doc(a(i), b(i))", &inputs).unwrap();
    /// assert_eq!(y.to_dense_vec().unwrap(), vec![1.0, 0.0, 0.0]);
    /// ```
    pub fn iterating(mut self, region: Region) -> Operator {
        self.region = Some(region);
        self
    }

    /// The value an argument has where it is absent, and the operator's
    /// outside its [`iterating`](Self::iterating) region (0 unless set;
    /// `inf` for distances).
    pub fn absent_value(mut self, z: f64) -> Operator {
        self.absent = z;
        self
    }
}

/// The registered operators, by [`Func::User`] number.
static OPERATORS: RwLock<Vec<Registered>> = RwLock::new(Vec::new());

/// A registered operator, its name and properties kept for the process.
struct Registered {
    name: &'static str,
    arity: usize,
    apply: OperatorFn,
    annihilators: Annihilators,
    /// A staged operator's body, its calls of staged operators written out.
    staged: Option<Arc<Expr>>,
}

/// Registers `op` for the whole process and returns the function
/// statements call it as. Refused: a name that is not an identifier, that
/// a built-in function or reduction has, or that is registered already;
/// an arity other than 1 or 2 for a callback (1 to [`MAX_STAGED_ARITY`]
/// staged); a region naming a missing argument; properties declared for a
/// staged operator (its body decides them); a staged body with a
/// reduction or reading anything but its arguments.
pub fn register_operator(op: Operator) -> Result<Func> {
    let name = op.name.clone();
    let refused = |why: String| EngineError::Unsupported(format!("operator `{name}`: {why}"));
    let refuse = |why: String| Err(refused(why));
    let identifier = op.name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && op.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !identifier {
        return refuse("names start with a letter or _ and go on with letters, digits or _".into());
    }
    if Func::from_name(&op.name).is_some() || Reduction::from_name(&op.name).is_some() {
        return refuse("the name is taken by a function or reduction".into());
    }
    let (apply, staged) = match op.body {
        Body::Callback(f) => {
            if !(1..=2).contains(&op.arity) {
                return refuse("operators take one or two arguments".into());
            }
            match &op.region {
                Some(region) if region.max_arg() >= op.arity => {
                    return refuse(format!(
                        "its region reads argument {} of {}",
                        region.max_arg(),
                        op.arity
                    ))
                }
                Some(region) => (region.restrict(f, op.arity, op.absent), None),
                None => (f, None),
            }
        }
        Body::Staged(body) => {
            if !(1..=MAX_STAGED_ARITY).contains(&op.arity) {
                return refuse(format!("staged operators take 1 to {MAX_STAGED_ARITY} arguments"));
            }
            if op.region.is_some() || !op.left.is_empty() {
                return refuse(
                    "where a staged operator is computed follows from its body: write the region into it, \
                     as x * (y == 0)"
                        .into(),
                );
            }
            let body = Arc::new(staged::checked_body(&body, op.arity).map_err(refused)?);
            let eval = body.clone();
            let apply: OperatorFn = Arc::new(move |args| staged::evaluate(&eval, args));
            (apply, Some(body))
        }
    };
    let (mut left, mut right) = (op.left, op.right);
    if let Some(region) = &op.region {
        // Outside the region the value is the absent value: an absent
        // argument the region needs annihilates from its side.
        if op.arity == 2 && region.needs(0, 2) {
            left.push(op.absent);
        }
        if op.arity == 2 && region.needs(1, 2) {
            right.push(op.absent);
        }
    }
    let mut operators = OPERATORS.write().unwrap_or_else(|e| e.into_inner());
    if operators.iter().any(|o| o.name == op.name) {
        return refuse("the name is taken by another operator".into());
    }
    let id = u16::try_from(operators.len()).map_err(|_| EngineError::Unsupported("too many operators".into()))?;
    // Names and properties live as long as the process, as statements
    // naming them may.
    let leak = |v: Vec<f64>| -> &'static [f64] { Box::leak(v.into_boxed_slice()) };
    operators.push(Registered {
        name: Box::leak(op.name.into_boxed_str()),
        arity: op.arity,
        apply,
        annihilators: Annihilators {
            left: leak(left),
            right: leak(right),
        },
        staged,
    });
    Ok(Func::User(id))
}

/// The user-defined function called `name`.
pub(super) fn find(name: &str) -> Option<Func> {
    let operators = OPERATORS.read().unwrap_or_else(|e| e.into_inner());
    operators
        .iter()
        .position(|o| o.name == name)
        .map(|k| Func::User(k as u16))
}

fn with<R>(id: u16, f: impl FnOnce(&Registered) -> R) -> R {
    let operators = OPERATORS.read().unwrap_or_else(|e| e.into_inner());
    f(&operators[id as usize])
}

/// Operator `id`'s name.
pub(super) fn name(id: u16) -> &'static str {
    with(id, |o| o.name)
}

/// How many arguments operator `id` takes.
pub(super) fn arity(id: u16) -> usize {
    with(id, |o| o.arity)
}

/// Operator `id`'s annihilators, declared or following from its region.
pub(super) fn annihilators(id: u16) -> Annihilators {
    with(id, |o| o.annihilators)
}

/// Operator `id`'s body, if it is staged.
pub(super) fn staged_body(id: u16) -> Option<Arc<Expr>> {
    with(id, |o| o.staged.clone())
}

/// The value of operator `id` on `args`.
pub(super) fn apply(id: u16, args: &[f64]) -> f64 {
    let apply = with(id, |o| o.apply.clone());
    apply(args)
}
