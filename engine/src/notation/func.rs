//! Functions, comparisons and logical operators of the statement language,
//! and the monoids reductions run over, each with the algebraic properties
//! the merge lattices follow from.
//!
//! One definition of each function's value ([`Func::apply`]) serves the
//! reference evaluator, constant folding, the interpreter and the compiled
//! tiers, so every tier computes the same bits. Logical values are `f64`:
//! any value but 0 is true, and comparisons and logical operators give 1 or
//! 0.

use std::fmt;

use tessera_formats::{Cmp, Value, ValueType};

/// A function or operator beyond `+ - * /`.
///
/// ```
/// use tessera_engine::notation::Func;
/// assert_eq!(Func::from_name("sqrt"), Some(Func::Sqrt));
/// assert_eq!(Func::Sqrt.apply(&[4.0]), 2.0);
/// // sqrt keeps a sparse operand's sparsity: sqrt(0) is 0.
/// assert_eq!(Func::Sqrt.apply(&[0.0]), 0.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Func {
    Sqrt,
    Cbrt,
    Exp,
    Log,
    Log10,
    Abs,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    Square,
    Cube,
    /// 1 for positive arguments, 0 otherwise (so `heaviside(0)` is 0 and the
    /// function keeps sparsity).
    Heaviside,
    /// Logical not (`!a`).
    Not,
    /// The real part of a complex value (a real value itself).
    Real,
    /// The imaginary part of a complex value (0 for a real value).
    Imag,
    /// The complex conjugate (a real value itself).
    Conj,
    Pow,
    Atan2,
    Min,
    Max,
    /// The remainder with the sign of the dividend, as C's `fmod`.
    Mod,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
    Xor,
    /// A user-defined operator ([`register_operator`](super::register_operator)),
    /// by registration number.
    User(u16),
    /// A value as another value type: `f64(b(i))`, `f32(...)`, `i64(...)`,
    /// `i32(...)`, `bool(...)` (the value rounded to the type, or its
    /// truth), from a float or truth value.
    Cast(ValueType),
    /// An operation on integers of type `i64` or `i32` (the second field),
    /// held in registers as their bits ([`Value::to_word`]). The typer
    /// ([`super::types::typed`]) writes every operation on integers as
    /// one of these; they are not written in statements.
    Int(IntOp, ValueType),
}

/// An operation on integers ([`Func::Int`]): wrapping two's-complement
/// arithmetic of the integer type, as Rust's `wrapping_*` methods compute
/// it, on every tier. Division and remainder by 0 give 0 (and `MIN / -1`
/// gives `MIN`): no integer operation traps.
///
/// ```
/// use tessera_engine::notation::{Func, IntOp};
/// use tessera_formats::{Value, ValueType};
/// let add = Func::Int(IntOp::Add, ValueType::I32);
/// let w = add.apply(&[i32::MAX.to_word(), 1i32.to_word()]);
/// assert_eq!(i32::from_word(w), i32::MIN);
/// let div = Func::Int(IntOp::Div, ValueType::I64);
/// assert_eq!(i64::from_word(div.apply(&[7i64.to_word(), 0i64.to_word()])), 0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IntOp {
    Add,
    Sub,
    Mul,
    /// Truncating toward zero.
    Div,
    /// The remainder with the sign of the dividend.
    Mod,
    Neg,
    Abs,
    Min,
    Max,
    Square,
    Cube,
    /// 1 for positive arguments, 0 otherwise.
    Heaviside,
    /// A comparison, giving a truth value.
    Compare(Cmp),
    /// The integer as another type (its truth for `bool`; truncated to the
    /// low 32 bits for `i32`).
    Cast(ValueType),
}

impl IntOp {
    /// The operation `op` of two integers of type `ty`, on words.
    fn apply(self, ty: ValueType, a: i64, b: i64) -> f64 {
        let wrap = |v: i64| if ty == ValueType::I32 { i64::from(v as i32) } else { v };
        let int = |v: i64| wrap(v).to_word();
        match self {
            IntOp::Add => int(a.wrapping_add(b)),
            IntOp::Sub => int(a.wrapping_sub(b)),
            IntOp::Mul => int(a.wrapping_mul(b)),
            IntOp::Div => int(if b == 0 { 0 } else { a.wrapping_div(b) }),
            IntOp::Mod => int(if b == 0 { 0 } else { a.wrapping_rem(b) }),
            IntOp::Neg => int(a.wrapping_neg()),
            IntOp::Abs => int(a.wrapping_abs()),
            IntOp::Min => int(a.min(b)),
            IntOp::Max => int(a.max(b)),
            IntOp::Square => int(a.wrapping_mul(a)),
            IntOp::Cube => int(a.wrapping_mul(a).wrapping_mul(a)),
            IntOp::Heaviside => int(i64::from(a > 0)),
            IntOp::Compare(cmp) => truth(match cmp {
                Cmp::Lt => a < b,
                Cmp::Le => a <= b,
                Cmp::Gt => a > b,
                Cmp::Ge => a >= b,
                Cmp::Eq => a == b,
                Cmp::Ne => a != b,
            }),
            IntOp::Cast(ValueType::F64 | ValueType::C64) => a as f64,
            IntOp::Cast(ValueType::F32) => f64::from(a as f32),
            IntOp::Cast(ValueType::Bool) => truth(a != 0),
            IntOp::Cast(ValueType::I64) => a.to_word(),
            IntOp::Cast(ValueType::I32) => (a as i32).to_word(),
        }
    }

    /// The name it prints with.
    fn name(self) -> &'static str {
        match self {
            IntOp::Add => "iadd",
            IntOp::Sub => "isub",
            IntOp::Mul => "imul",
            IntOp::Div => "idiv",
            IntOp::Mod => "imod",
            IntOp::Neg => "ineg",
            IntOp::Abs => "iabs",
            IntOp::Min => "imin",
            IntOp::Max => "imax",
            IntOp::Square => "isquare",
            IntOp::Cube => "icube",
            IntOp::Heaviside => "iheaviside",
            IntOp::Compare(cmp) => Func::comparison(cmp).name(),
            IntOp::Cast(ty) => ty.name(),
        }
    }

    /// How many arguments it takes.
    pub fn arity(self) -> usize {
        match self {
            IntOp::Add | IntOp::Sub | IntOp::Mul | IntOp::Div | IntOp::Mod | IntOp::Min | IntOp::Max => 2,
            IntOp::Compare(_) => 2,
            _ => 1,
        }
    }
}

/// Every function, in the order `--help` lists them.
pub const FUNCTIONS: [Func; 45] = [
    Func::Sqrt,
    Func::Cbrt,
    Func::Exp,
    Func::Log,
    Func::Log10,
    Func::Pow,
    Func::Abs,
    Func::Sin,
    Func::Cos,
    Func::Tan,
    Func::Asin,
    Func::Acos,
    Func::Atan,
    Func::Atan2,
    Func::Sinh,
    Func::Cosh,
    Func::Tanh,
    Func::Asinh,
    Func::Acosh,
    Func::Atanh,
    Func::Min,
    Func::Max,
    Func::Mod,
    Func::Square,
    Func::Cube,
    Func::Heaviside,
    Func::Xor,
    Func::Lt,
    Func::Le,
    Func::Gt,
    Func::Ge,
    Func::Eq,
    Func::Ne,
    Func::And,
    Func::Or,
    Func::Not,
    Func::Cast(ValueType::F64),
    Func::Cast(ValueType::F32),
    Func::Cast(ValueType::I64),
    Func::Cast(ValueType::I32),
    Func::Cast(ValueType::Bool),
    Func::Cast(ValueType::C64),
    Func::Real,
    Func::Imag,
    Func::Conj,
];

/// The smaller of `a` and `b`: NaN when either is (unlike [`f64::min`],
/// so that the order of a reduction never decides whether a NaN
/// survives), and -0 below +0. IEEE 754-2019 `minimum`, as machine code
/// has it; [`Func::Min`] and the row merges compute it.
///
/// ```
/// use tessera_engine::notation::func::minimum;
/// assert!(minimum(0.0, -0.0).is_sign_negative());
/// assert!(minimum(f64::NAN, 1.0).is_nan());
/// assert_eq!(minimum(2.0, -3.0), -3.0);
/// ```
#[inline]
pub fn minimum(a: f64, b: f64) -> f64 {
    // Selects, not branches: in a merge of two matrices, which of two
    // numbers is smaller is as good as random, and so is whether an entry
    // meets another (a one-sided entry meets 0.0). Equal numbers have the
    // same bits but for zeros, where either's sign bit makes -0.
    let smaller = if a < b { a } else { b };
    let equal = f64::from_bits(a.to_bits() | b.to_bits());
    let ordered = if a == b { equal } else { smaller };
    if a.is_nan() | b.is_nan() {
        f64::NAN
    } else {
        ordered
    }
}

/// The larger of `a` and `b`, as [`minimum`] the smaller: NaN when either
/// is, +0 above -0.
///
/// ```
/// use tessera_engine::notation::func::maximum;
/// assert!(maximum(-0.0, 0.0).is_sign_positive());
/// assert_eq!(maximum(2.0, -3.0), 2.0);
/// ```
#[inline]
pub fn maximum(a: f64, b: f64) -> f64 {
    let larger = if a > b { a } else { b };
    let equal = f64::from_bits(a.to_bits() & b.to_bits());
    let ordered = if a == b { equal } else { larger };
    if a.is_nan() | b.is_nan() {
        f64::NAN
    } else {
        ordered
    }
}

fn truth(v: bool) -> f64 {
    if v {
        1.0
    } else {
        0.0
    }
}

impl Func {
    /// The comparison function of `cmp`.
    pub fn comparison(cmp: Cmp) -> Func {
        match cmp {
            Cmp::Lt => Func::Lt,
            Cmp::Le => Func::Le,
            Cmp::Gt => Func::Gt,
            Cmp::Ge => Func::Ge,
            Cmp::Eq => Func::Eq,
            Cmp::Ne => Func::Ne,
        }
    }

    /// The comparison a comparison function makes.
    pub fn as_comparison(self) -> Option<Cmp> {
        Some(match self {
            Func::Lt => Cmp::Lt,
            Func::Le => Cmp::Le,
            Func::Gt => Cmp::Gt,
            Func::Ge => Cmp::Ge,
            Func::Eq => Cmp::Eq,
            Func::Ne => Cmp::Ne,
            _ => return None,
        })
    }

    /// The name a call is written with (`sqrt(x)`), or the operator's
    /// symbol for comparisons and logical operators.
    pub fn name(self) -> &'static str {
        match self {
            Func::Sqrt => "sqrt",
            Func::Cbrt => "cbrt",
            Func::Exp => "exp",
            Func::Log => "log",
            Func::Log10 => "log10",
            Func::Abs => "abs",
            Func::Sin => "sin",
            Func::Cos => "cos",
            Func::Tan => "tan",
            Func::Asin => "asin",
            Func::Acos => "acos",
            Func::Atan => "atan",
            Func::Sinh => "sinh",
            Func::Cosh => "cosh",
            Func::Tanh => "tanh",
            Func::Asinh => "asinh",
            Func::Acosh => "acosh",
            Func::Atanh => "atanh",
            Func::Square => "square",
            Func::Cube => "cube",
            Func::Heaviside => "heaviside",
            Func::Not => "!",
            Func::Real => "real",
            Func::Imag => "imag",
            Func::Conj => "conj",
            Func::Pow => "pow",
            Func::Atan2 => "atan2",
            Func::Min => "min",
            Func::Max => "max",
            Func::Mod => "mod",
            Func::Lt => "<",
            Func::Le => "<=",
            Func::Gt => ">",
            Func::Ge => ">=",
            Func::Eq => "==",
            Func::Ne => "!=",
            Func::And => "&&",
            Func::Or => "||",
            Func::Xor => "xor",
            Func::User(id) => super::operator::name(id),
            Func::Cast(ty) => ty.name(),
            Func::Int(op, _) => op.name(),
        }
    }

    /// The function called `name` (operators are not called by name).
    pub fn from_name(name: &str) -> Option<Func> {
        FUNCTIONS
            .into_iter()
            .find(|f| f.is_called() && f.name() == name)
            .or_else(|| super::operator::find(name))
    }

    /// Whether the function is a staged user-defined operator, written out
    /// into the statements calling it ([`Operator::staged`](super::Operator::staged)).
    ///
    /// ```
    /// use tessera_engine::notation::{register_operator, Func, Operator};
    /// let f = register_operator(Operator::define("is_staged_doc(x) = x * x").unwrap()).unwrap();
    /// assert!(f.is_staged());
    /// assert!(!Func::Abs.is_staged());
    /// ```
    pub fn is_staged(self) -> bool {
        matches!(self, Func::User(id) if super::operator::staged_body(id).is_some())
    }

    /// Whether the function is written as a call, `name(args)`, rather than
    /// as an operator.
    pub fn is_called(self) -> bool {
        self != Func::Not && self.infix_precedence().is_none()
    }

    /// How many arguments it takes.
    pub fn arity(self) -> usize {
        use Func::*;
        match self {
            Pow | Atan2 | Min | Max | Mod | Lt | Le | Gt | Ge | Eq | Ne | And | Or | Xor => 2,
            User(id) => super::operator::arity(id),
            Int(op, _) => op.arity(),
            _ => 1,
        }
    }

    /// The binding strength of an infix operator: `||` below `&&` below the
    /// comparisons, all below `+` and `-`.
    pub fn infix_precedence(self) -> Option<u8> {
        match self {
            Func::Or => Some(PREC_OR),
            Func::And => Some(PREC_AND),
            Func::Lt | Func::Le | Func::Gt | Func::Ge | Func::Eq | Func::Ne => Some(PREC_COMPARE),
            Func::Int(IntOp::Compare(_), _) => Some(PREC_COMPARE),
            _ => None,
        }
    }

    /// The function's value: the one definition every tier computes.
    pub fn apply(self, args: &[f64]) -> f64 {
        let a = args[0];
        let b = args.get(1).copied().unwrap_or(0.0);
        match self {
            Func::Sqrt => a.sqrt(),
            Func::Cbrt => a.cbrt(),
            Func::Exp => a.exp(),
            Func::Log => a.ln(),
            Func::Log10 => a.log10(),
            Func::Abs => a.abs(),
            Func::Sin => a.sin(),
            Func::Cos => a.cos(),
            Func::Tan => a.tan(),
            Func::Asin => a.asin(),
            Func::Acos => a.acos(),
            Func::Atan => a.atan(),
            Func::Sinh => a.sinh(),
            Func::Cosh => a.cosh(),
            Func::Tanh => a.tanh(),
            Func::Asinh => a.asinh(),
            Func::Acosh => a.acosh(),
            Func::Atanh => a.atanh(),
            Func::Square => a * a,
            Func::Cube => a * a * a,
            Func::Heaviside => truth(a > 0.0),
            Func::Not => truth(a == 0.0),
            Func::Real | Func::Conj => a,
            Func::Imag => 0.0,
            Func::Pow => a.powf(b),
            Func::Atan2 => a.atan2(b),
            Func::Min => minimum(a, b),
            Func::Max => maximum(a, b),
            Func::Mod => a % b,
            Func::Lt => truth(a < b),
            Func::Le => truth(a <= b),
            Func::Gt => truth(a > b),
            Func::Ge => truth(a >= b),
            Func::Eq => truth(a == b),
            Func::Ne => truth(a != b),
            Func::And => truth(a != 0.0 && b != 0.0),
            Func::Or => truth(a != 0.0 || b != 0.0),
            Func::Xor => truth((a != 0.0) != (b != 0.0)),
            Func::User(id) => super::operator::apply(id, args),
            Func::Cast(ty) => ty.word(a),
            Func::Int(op, ty) => op.apply(ty, i64::from_word(a), i64::from_word(b)),
        }
    }

    /// The values `z` with `f(z, y) = f(y, z) = z` for every `y` the
    /// statement computes with: an absent operand holding one makes the
    /// call absent too, so the lattice intersects. (`+inf` for `max` and
    /// `-inf` for `min`; 0 for `&&` and 1 for `||`.) A user-defined
    /// operator's may hold on one side only.
    pub fn annihilators(self) -> Annihilators {
        match self {
            Func::Min => Annihilators::both(&[f64::NEG_INFINITY]),
            Func::Max => Annihilators::both(&[f64::INFINITY]),
            Func::And => Annihilators::both(&[0.0]),
            Func::Or => Annihilators::both(&[1.0]),
            // The word of integer 0 is +0.0.
            Func::Int(IntOp::Mul, _) => Annihilators::both(&[0.0]),
            Func::User(id) => super::operator::annihilators(id),
            _ => Annihilators::NONE,
        }
    }
}

/// The values that annihilate a binary operation from each side: `z` is a
/// left annihilator of `f` when `f(z, y) = z` for every `y`, a right one
/// when `f(y, z) = z`. An absent operand holding one makes the result
/// absent where it is ([`Absence`](crate::lattice::Absence)).
///
/// ```
/// use tessera_engine::notation::{Annihilators, BinaryOp};
/// assert_eq!(BinaryOp::Mul.annihilators(), Annihilators::both(&[0.0]));
/// assert!(BinaryOp::Sub.annihilators().left.is_empty());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Annihilators {
    pub left: &'static [f64],
    pub right: &'static [f64],
}

impl Annihilators {
    /// No annihilator on either side (`-`, `/`, `pow`).
    pub const NONE: Annihilators = Annihilators { left: &[], right: &[] };

    /// The same annihilators on both sides, as a commutative operation has.
    pub const fn both(values: &'static [f64]) -> Annihilators {
        Annihilators {
            left: values,
            right: values,
        }
    }
}

impl fmt::Display for Func {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

pub(crate) const PREC_OR: u8 = 1;
pub(crate) const PREC_AND: u8 = 2;
pub(crate) const PREC_COMPARE: u8 = 3;

/// The operation a reduction combines its terms with: `sum(j, e)`,
/// `prod(j, e)`, `min(j, e)`, `max(j, e)`, `or(j, e)`, `and(j, e)`.
///
/// ```
/// use tessera_engine::notation::Reduction;
/// assert_eq!(Reduction::Min.identity(), f64::INFINITY);
/// assert_eq!(Reduction::Min.combine(3.0, 2.0), 2.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reduction {
    Sum,
    Prod,
    Min,
    Max,
    Or,
    And,
}

/// Every reduction, by name.
pub const REDUCTIONS: [Reduction; 6] = [
    Reduction::Sum,
    Reduction::Prod,
    Reduction::Min,
    Reduction::Max,
    Reduction::Or,
    Reduction::And,
];

impl Reduction {
    /// The name it is written with.
    pub fn name(self) -> &'static str {
        match self {
            Reduction::Sum => "sum",
            Reduction::Prod => "prod",
            Reduction::Min => "min",
            Reduction::Max => "max",
            Reduction::Or => "or",
            Reduction::And => "and",
        }
    }

    /// The reduction written `name(var, expr)`.
    pub fn from_name(name: &str) -> Option<Reduction> {
        REDUCTIONS.into_iter().find(|r| r.name() == name)
    }

    /// The value of a reduction over nothing.
    pub fn identity(self) -> f64 {
        match self {
            Reduction::Sum | Reduction::Or => 0.0,
            Reduction::Prod | Reduction::And => 1.0,
            Reduction::Min => f64::INFINITY,
            Reduction::Max => f64::NEG_INFINITY,
        }
    }

    /// Adds one term to a partial result.
    pub fn combine(self, acc: f64, term: f64) -> f64 {
        match self {
            Reduction::Sum => acc + term,
            Reduction::Prod => acc * term,
            Reduction::Min => Func::Min.apply(&[acc, term]),
            Reduction::Max => Func::Max.apply(&[acc, term]),
            Reduction::Or => Func::Or.apply(&[acc, term]),
            Reduction::And => Func::And.apply(&[acc, term]),
        }
    }

    /// The function the reduction combines with, for all but `sum` and
    /// `prod` (which are `+` and `*`).
    pub fn func(self) -> Option<Func> {
        match self {
            Reduction::Sum | Reduction::Prod => None,
            Reduction::Min => Some(Func::Min),
            Reduction::Max => Some(Func::Max),
            Reduction::Or => Some(Func::Or),
            Reduction::And => Some(Func::And),
        }
    }

    /// The function that combines terms of type `ty` (a statement's
    /// reductions compute in its type): [`func`](Self::func), and the
    /// integer operations for `i64` and `i32`.
    ///
    /// ```
    /// use tessera_engine::notation::{Func, IntOp, Reduction};
    /// use tessera_formats::ValueType;
    /// assert_eq!(Reduction::Sum.func_for(ValueType::F64), None);
    /// assert_eq!(Reduction::Sum.func_for(ValueType::I64), Some(Func::Int(IntOp::Add, ValueType::I64)));
    /// ```
    pub fn func_for(self, ty: ValueType) -> Option<Func> {
        if !ty.is_integer() {
            return self.func();
        }
        Some(match self {
            Reduction::Sum => Func::Int(IntOp::Add, ty),
            Reduction::Prod => Func::Int(IntOp::Mul, ty),
            Reduction::Min => Func::Int(IntOp::Min, ty),
            Reduction::Max => Func::Int(IntOp::Max, ty),
            Reduction::Or => Func::Or,
            Reduction::And => Func::And,
        })
    }

    /// [`identity`](Self::identity) as a word of type `ty`: for integers,
    /// `min` starts at the type's largest value and `max` at its least;
    /// other types reduce in `f64`.
    pub fn identity_for(self, ty: ValueType) -> f64 {
        match self {
            Reduction::Sum | Reduction::Prod | Reduction::Min | Reduction::Max if ty.is_integer() => {
                ty.word(self.identity())
            }
            _ => self.identity(),
        }
    }

    /// [`combine`](Self::combine) of terms of type `ty`.
    pub fn combine_for(self, ty: ValueType, acc: f64, term: f64) -> f64 {
        match self.func_for(ty) {
            Some(func) if ty.is_integer() => func.apply(&[acc, term]),
            _ => self.combine(acc, term),
        }
    }

    /// Whether combining a term twice changes nothing (`min`, `max`, `or`,
    /// `and`).
    pub fn is_idempotent(self) -> bool {
        !matches!(self, Reduction::Sum | Reduction::Prod)
    }
}

impl fmt::Display for Reduction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_called_function_is_found_by_its_name() {
        for f in FUNCTIONS.into_iter().filter(|f| f.is_called()) {
            assert_eq!(Func::from_name(f.name()), Some(f));
        }
        assert_eq!(Func::from_name("<"), None);
    }

    #[test]
    fn annihilators_annihilate() {
        for f in FUNCTIONS.into_iter().filter(|f| f.arity() == 2) {
            let Annihilators { left, right } = f.annihilators();
            for y in [0.0, 1.0, -2.5, 7.0, f64::INFINITY, f64::NEG_INFINITY] {
                for &z in left {
                    assert_eq!(f.apply(&[z, y]), z, "{f}({z}, {y})");
                }
                for &z in right {
                    assert_eq!(f.apply(&[y, z]), z, "{f}({y}, {z})");
                }
            }
        }
    }

    #[test]
    fn reduction_identities_are_identities() {
        for r in REDUCTIONS {
            for y in [0.0, 1.0, -2.5, 7.0] {
                let expected = if matches!(r, Reduction::Or | Reduction::And) {
                    f64::from(u8::from(y != 0.0))
                } else {
                    y
                };
                assert_eq!(r.combine(r.identity(), y), expected, "{r}");
            }
        }
    }

    #[test]
    fn reductions_of_every_type_start_at_their_identity() {
        for ty in crate::notation::types::NUMBER_AND_TRUTH_TYPES {
            for r in REDUCTIONS {
                for y in [0i32, 1, -3, 7] {
                    let term = ty.word(f64::from(y));
                    let expected = match r {
                        Reduction::Or | Reduction::And => f64::from(u8::from(y != 0)),
                        _ => term,
                    };
                    let got = r.combine_for(ty, r.identity_for(ty), term);
                    assert_eq!(got.to_bits(), expected.to_bits(), "{r} over {ty}");
                }
            }
        }
    }

    #[test]
    fn min_orders_negative_zero_below_positive_zero() {
        assert!(Func::Min.apply(&[0.0, -0.0]).is_sign_negative());
        assert!(Func::Min.apply(&[-0.0, 0.0]).is_sign_negative());
        assert!(Func::Max.apply(&[-0.0, 0.0]).is_sign_positive());
        assert!(Func::Max.apply(&[0.0, -0.0]).is_sign_positive());
    }

    #[test]
    fn min_and_max_propagate_nan_from_either_side() {
        assert!(Func::Min.apply(&[f64::NAN, 1.0]).is_nan());
        assert!(Func::Min.apply(&[1.0, f64::NAN]).is_nan());
        assert!(Func::Max.apply(&[f64::NAN, 1.0]).is_nan());
    }

    /// The selects give the bits of IEEE 754-2019 `minimum` and `maximum`
    /// as their definition states them, case by case, on every pair of
    /// awkward values.
    #[test]
    fn minimum_and_maximum_give_the_bits_of_their_definition() {
        let definition = |a: f64, b: f64, smaller: bool| {
            if a.is_nan() || b.is_nan() {
                f64::NAN
            } else if a == b {
                let negative = if smaller {
                    a.is_sign_negative() || b.is_sign_negative()
                } else {
                    a.is_sign_negative() && b.is_sign_negative()
                };
                if negative {
                    -a.abs()
                } else {
                    a.abs()
                }
            } else if (a < b) == smaller {
                a
            } else {
                b
            }
        };
        let values = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            2.5,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE / 2.0,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        for a in values {
            for b in values {
                for (got, smaller) in [(minimum(a, b), true), (maximum(a, b), false)] {
                    let want = definition(a, b, smaller);
                    assert_eq!(got.to_bits(), want.to_bits(), "{a} and {b}, smaller {smaller}");
                }
            }
        }
    }
}
