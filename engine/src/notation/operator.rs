//! User-defined operators: a Rust function and its algebraic properties,
//! registered under a name that statements then call like a built-in
//! function (`relu(A(i,j))`).
//!
//! The merge lattices follow from the properties as they do for the
//! built-ins: the value at the operands' fills says whether the result is
//! absent where they are, and declared annihilators make a binary
//! operator intersect. Every tier runs the same function: the interpreter
//! calls it, compiled kernels call it through one shim.
//!
//! Operators are registered for the whole process (statements name them,
//! and names outlive engines); a name is registered once.

use std::sync::{Arc, RwLock};

use super::func::{Func, Reduction};
use crate::error::{EngineError, Result};

/// The value of a user-defined operator.
pub type OperatorFn = Arc<dyn Fn(&[f64]) -> f64 + Send + Sync>;

/// A user-defined operator: its name, arity, value and annihilators.
///
/// ```
/// use tessera_engine::notation::{register_operator, Operator};
/// use tessera_engine::{Engine, Inputs};
/// use tessera_formats::{Format, Tensor};
///
/// let relu = register_operator(Operator::unary("relu_doc", |x| x.max(0.0))).unwrap();
/// let b = Tensor::from_dense(&[3], vec![-1.0, 0.0, 2.0]).unwrap();
/// let y = Engine::new().eval("y(i) = relu_doc(b(i))", &Inputs::new().with("b", &b)).unwrap();
/// assert_eq!(y.to_dense_vec().unwrap(), vec![0.0, 0.0, 2.0]);
/// assert_eq!(relu.name(), "relu_doc");
/// ```
#[derive(Clone)]
pub struct Operator {
    name: String,
    arity: usize,
    apply: OperatorFn,
    annihilators: Vec<f64>,
}

impl Operator {
    /// An operator of one argument. Where its argument is absent, its
    /// value is `f(fill)`: it keeps sparsity exactly when `f(0) = 0`.
    pub fn unary(name: &str, f: impl Fn(f64) -> f64 + Send + Sync + 'static) -> Operator {
        Operator {
            name: name.to_string(),
            arity: 1,
            apply: Arc::new(move |args| f(args[0])),
            annihilators: Vec::new(),
        }
    }

    /// An operator of two arguments, absent only where both are unless
    /// [`annihilated_by`](Self::annihilated_by) says more.
    pub fn binary(name: &str, f: impl Fn(f64, f64) -> f64 + Send + Sync + 'static) -> Operator {
        Operator {
            name: name.to_string(),
            arity: 2,
            apply: Arc::new(move |args| f(args[0], args[1])),
            annihilators: Vec::new(),
        }
    }

    /// Declares `z` an annihilator: `f(z, y) = f(y, z) = z` for every
    /// finite `y`. An absent operand holding it makes the result absent,
    /// so the lattice intersects (`z = 0` for a product-like operator).
    pub fn annihilated_by(mut self, z: f64) -> Operator {
        self.annihilators.push(z);
        self
    }
}

/// The registered operators, by [`Func::User`] number.
static OPERATORS: RwLock<Vec<Registered>> = RwLock::new(Vec::new());

/// A registered operator, its name kept for the process.
struct Registered {
    name: &'static str,
    arity: usize,
    apply: OperatorFn,
    annihilators: &'static [f64],
}

/// Registers `op` for the whole process and returns the function
/// statements call it as. Refused: a name that is not an identifier, that
/// a built-in function or reduction has, or that is registered already;
/// an arity other than 1 or 2.
pub fn register_operator(op: Operator) -> Result<Func> {
    let refuse = |why: String| Err(EngineError::Unsupported(format!("operator `{}`: {why}", op.name)));
    let identifier = op.name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && op.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !identifier {
        return refuse("names start with a letter or _ and go on with letters, digits or _".into());
    }
    if !(1..=2).contains(&op.arity) {
        return refuse("operators take one or two arguments".into());
    }
    if Func::from_name(&op.name).is_some() || Reduction::from_name(&op.name).is_some() {
        return refuse("the name is taken by a function or reduction".into());
    }
    let mut operators = OPERATORS.write().unwrap_or_else(|e| e.into_inner());
    let id = u16::try_from(operators.len()).map_err(|_| EngineError::Unsupported("too many operators".into()))?;
    operators.push(Registered {
        // Names and properties live as long as the process, as statements
        // naming them may.
        name: Box::leak(op.name.into_boxed_str()),
        arity: op.arity,
        apply: op.apply,
        annihilators: Box::leak(op.annihilators.into_boxed_slice()),
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

/// What [`Func`] needs of operator `id`.
pub(super) fn with<R>(id: u16, f: impl FnOnce(&'static str, usize, &OperatorFn, &'static [f64]) -> R) -> R {
    let operators = OPERATORS.read().unwrap_or_else(|e| e.into_inner());
    let o = &operators[id as usize];
    f(o.name, o.arity, &o.apply, o.annihilators)
}

/// The value of operator `id` on `args`.
pub(super) fn apply(id: u16, args: &[f64]) -> f64 {
    let apply = with(id, |_, _, apply, _| apply.clone());
    apply(args)
}
