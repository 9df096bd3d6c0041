//! Semirings: a statement written with `+`, `*` and sums, read with
//! another pair of operations — `min` and `+` for shortest paths, `||` and
//! `&&` for reachability.
//!
//! [`Semiring::rewrite`] turns the statement into the language's own
//! functions and reductions (`y(i) = A(i,j) * x(j)` in min-plus is
//! `y(i) = min(j, A(i,j) + x(j))`), and [`Semiring::zero`] is the fill its
//! tensors need, so that absent entries annihilate the product as zeros
//! annihilate `*`: the kernels then visit stored entries only, as a
//! plus-times kernel does.

use std::fmt;

use super::func::{Func, Reduction};
use super::ir::{BinaryOp, Expr, Statement};
use super::place_reductions;
use crate::error::{EngineError, Result};

/// A semiring `(⊕, ⊗)` statements can be read in.
///
/// ```
/// use tessera_engine::notation::{parse_statement, Semiring};
/// let spmv = parse_statement("y(i) = A(i,j) * x(j)").unwrap();
/// let paths = Semiring::MinPlus.rewrite(&spmv).unwrap();
/// assert_eq!(paths.to_string(), "y(i) = min(j, A(i,j) + x(j))");
/// assert_eq!(Semiring::MinPlus.zero(), f64::INFINITY);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Semiring {
    /// `+` and `*`: the statement as written.
    PlusTimes,
    /// `min` and `+`, zero `+inf`: shortest paths.
    MinPlus,
    /// `max` and `+`, zero `-inf`: longest paths, critical paths.
    MaxPlus,
    /// `max` and `*`, zero 0: most reliable paths (probabilities).
    MaxTimes,
    /// `||` and `&&`, zero 0: reachability, breadth-first search.
    OrAnd,
}

/// Every semiring, by name.
pub const SEMIRINGS: [Semiring; 5] = [
    Semiring::PlusTimes,
    Semiring::MinPlus,
    Semiring::MaxPlus,
    Semiring::MaxTimes,
    Semiring::OrAnd,
];

impl Semiring {
    /// The name it is given by (`min-plus`).
    pub fn name(self) -> &'static str {
        match self {
            Semiring::PlusTimes => "plus-times",
            Semiring::MinPlus => "min-plus",
            Semiring::MaxPlus => "max-plus",
            Semiring::MaxTimes => "max-times",
            Semiring::OrAnd => "or-and",
        }
    }

    /// The semiring called `name` (`min-plus` or `min_plus`).
    pub fn from_name(name: &str) -> Option<Semiring> {
        let name = name.replace('_', "-");
        SEMIRINGS.into_iter().find(|s| s.name() == name)
    }

    /// The identity of `⊕` and annihilator of `⊗`: the fill of the
    /// tensors the semiring reads.
    pub fn zero(self) -> f64 {
        match self {
            Semiring::PlusTimes | Semiring::MaxTimes | Semiring::OrAnd => 0.0,
            Semiring::MinPlus => f64::INFINITY,
            Semiring::MaxPlus => f64::NEG_INFINITY,
        }
    }

    /// `⊕` as a reduction.
    pub fn plus(self) -> Reduction {
        match self {
            Semiring::PlusTimes => Reduction::Sum,
            Semiring::MinPlus => Reduction::Min,
            Semiring::MaxPlus | Semiring::MaxTimes => Reduction::Max,
            Semiring::OrAnd => Reduction::Or,
        }
    }

    /// `a ⊕ b` on values.
    pub fn add(self, a: f64, b: f64) -> f64 {
        self.plus().combine(a, b)
    }

    /// `a ⊗ b` on values.
    pub fn multiply(self, a: f64, b: f64) -> f64 {
        match self {
            Semiring::PlusTimes | Semiring::MaxTimes => a * b,
            Semiring::MinPlus | Semiring::MaxPlus => a + b,
            Semiring::OrAnd => Func::And.apply(&[a, b]),
        }
    }

    /// The semiring whose `⊕` is `plus` and whose `⊗` is `times` (`*`,
    /// `+`, or `&&` as a function).
    pub fn of(plus: Reduction, times: Times) -> Option<Semiring> {
        SEMIRINGS.into_iter().find(|s| s.plus() == plus && s.times() == times)
    }

    /// `⊗`.
    pub fn times(self) -> Times {
        match self {
            Semiring::PlusTimes | Semiring::MaxTimes => Times::Mul,
            Semiring::MinPlus | Semiring::MaxPlus => Times::Add,
            Semiring::OrAnd => Times::And,
        }
    }

    /// `a ⊕ b` as an expression.
    fn add_expr(self, a: Expr, b: Expr) -> Expr {
        match self.plus().func() {
            Some(func) => Expr::call(func, vec![a, b]),
            None => Expr::binary(BinaryOp::Add, a, b),
        }
    }

    /// `a ⊗ b` as an expression.
    fn times_expr(self, a: Expr, b: Expr) -> Expr {
        match self {
            Semiring::PlusTimes | Semiring::MaxTimes => Expr::binary(BinaryOp::Mul, a, b),
            Semiring::MinPlus | Semiring::MaxPlus => Expr::binary(BinaryOp::Add, a, b),
            Semiring::OrAnd => Expr::call(Func::And, vec![a, b]),
        }
    }

    /// The statement read in this semiring: sums become `⊕` reductions
    /// (implicit ones placed first), `+` becomes `⊕` and `*` becomes `⊗`;
    /// `+=` adds by `⊕`. Refused: `-`, `/` and negation, which a semiring
    /// has not.
    pub fn rewrite(self, stmt: &Statement) -> Result<Statement> {
        let placed = place_reductions(stmt);
        let mut rhs = self.expr(&placed.rhs)?;
        if placed.op == super::AssignOp::AddAssign {
            rhs = self.add_expr(Expr::Access(placed.lhs.clone()), rhs);
        }
        Ok(Statement::assign(placed.lhs.clone(), rhs))
    }

    fn expr(self, e: &Expr) -> Result<Expr> {
        let refuse = |what: &str| {
            EngineError::Unsupported(format!(
                "{what} has no meaning in the {self} semiring: write it with + and *"
            ))
        };
        Ok(match e {
            Expr::Access(_) | Expr::Literal(_) => e.clone(),
            Expr::Neg(_) => return Err(refuse("negation")),
            Expr::Binary { op, lhs, rhs } => {
                let (l, r) = (self.expr(lhs)?, self.expr(rhs)?);
                match op {
                    BinaryOp::Add => self.add_expr(l, r),
                    BinaryOp::Mul => self.times_expr(l, r),
                    BinaryOp::Sub => return Err(refuse("-")),
                    BinaryOp::Div => return Err(refuse("/")),
                }
            }
            Expr::Call { func, args } => Expr::call(*func, args.iter().map(|a| self.expr(a)).collect::<Result<_>>()?),
            Expr::Reduce { op, var, body } => {
                let op = if *op == Reduction::Sum { self.plus() } else { *op };
                Expr::reduce(op, &var.0, self.expr(body)?)
            }
        })
    }
}

/// The `⊗` of a semiring.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Times {
    Mul,
    Add,
    And,
}

impl fmt::Display for Semiring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Semiring {
    type Err = String;
    fn from_str(text: &str) -> std::result::Result<Self, String> {
        Semiring::from_name(text).ok_or_else(|| {
            let names: Vec<&str> = SEMIRINGS.iter().map(|s| s.name()).collect();
            format!("unknown semiring `{text}` (semirings: {})", names.join(", "))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::parse_statement;

    fn rewritten(s: Semiring, text: &str) -> String {
        s.rewrite(&parse_statement(text).unwrap()).unwrap().to_string()
    }

    #[test]
    fn products_and_sums_become_the_semirings_operations() {
        let t = "C(i,j) = A(i,k) * B(k,j) + D(i,j)";
        assert_eq!(
            rewritten(Semiring::PlusTimes, t),
            "C(i,j) = sum(k, A(i,k) * B(k,j)) + D(i,j)"
        );
        assert_eq!(
            rewritten(Semiring::MinPlus, t),
            "C(i,j) = min(min(k, A(i,k) + B(k,j)), D(i,j))"
        );
        assert_eq!(
            rewritten(Semiring::OrAnd, "y(i) = A(i,j) * x(j)"),
            "y(i) = or(j, A(i,j) && x(j))"
        );
        assert_eq!(
            rewritten(Semiring::MaxPlus, "y(i) += A(i,j) * x(j)"),
            "y(i) = max(y(i), max(j, A(i,j) + x(j)))"
        );
    }

    #[test]
    fn subtraction_division_and_negation_are_refused() {
        for text in ["y(i) = A(i,j) - x(j)", "y(i) = A(i,j) / x(j)", "y(i) = -A(i,j)"] {
            let err = Semiring::MinPlus.rewrite(&parse_statement(text).unwrap()).unwrap_err();
            assert!(err.to_string().contains("no meaning in the min-plus semiring"), "{err}");
        }
    }

    #[test]
    fn names_parse_with_either_separator() {
        assert_eq!("min_plus".parse::<Semiring>(), Ok(Semiring::MinPlus));
        assert!("tropical".parse::<Semiring>().unwrap_err().contains("min-plus"));
    }
}
