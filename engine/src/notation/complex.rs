//! Complex statements as real ones: a statement over `c64` tensors is
//! written as one statement for its real part and one for its imaginary
//! part, over the real and imaginary parts of each complex tensor
//! ([`part_name`]). Every tier then runs them as the real kernels they
//! are; the runtime splits complex inputs and joins the two results.
//!
//! Complex values meet real ones only through `c64(...)` (literals take
//! the type they meet), `real`, `imag` and `abs` give real values, and
//! `+ - * /`, `-`, `conj`, `exp`, `square` and `sum` compute in complex
//! arithmetic: `(a + bi)(c + di) = (ac - bd) + (ad + bc)i`, a quotient by
//! a complex value through the square of its modulus (as C's and Fortran's
//! naive division). Other functions, comparisons, and reductions other
//! than `sum` are refused for complex values with the column.

use tessera_formats::ValueType;

use super::func::{Func, Reduction};
use super::ir::{Access, AssignOp, BinaryOp, Expr, IndexVar, Statement};
use crate::error::{EngineError, Result};

/// Which part of a complex tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    Re,
    Im,
}

/// The name the statements of the parts give a complex tensor's part:
/// `A.re`, `A.im` (no statement's text can name them).
///
/// ```
/// use tessera_engine::notation::complex::{part_name, Part};
/// assert_eq!(part_name("A", Part::Im), "A.im");
/// ```
pub fn part_name(tensor: &str, part: Part) -> String {
    match part {
        Part::Re => format!("{tensor}.re"),
        Part::Im => format!("{tensor}.im"),
    }
}

/// A statement over complex values as real statements.
#[derive(Clone, Debug, PartialEq)]
pub struct Split {
    /// The real part of the result, or the whole result when it is real.
    pub re: Statement,
    /// The imaginary part, when the result is complex and its imaginary
    /// part is not 0 everywhere.
    pub im: Option<Statement>,
    /// Whether the result is complex.
    pub complex: bool,
    /// The complex tensors the statement reads, split into parts.
    pub complex_inputs: Vec<String>,
}

/// `stmt` as real statements, when it reads a complex tensor or casts to
/// `c64`; `None` otherwise. `type_of` gives each tensor's type.
///
/// ```
/// use tessera_engine::notation::{parse_statement, complex::split};
/// use tessera_formats::ValueType;
///
/// let stmt = parse_statement("y(i) = A(i,j) * x(j)").unwrap();
/// let split = split(&stmt, &|_| Some(ValueType::C64)).unwrap().unwrap();
/// assert_eq!(split.re.to_string(), "y(i) = sum(j, A.re(i,j) * x.re(j)) - sum(j, A.im(i,j) * x.im(j))");
/// assert_eq!(split.im.unwrap().to_string(), "y(i) = sum(j, A.re(i,j) * x.im(j)) + sum(j, A.im(i,j) * x.re(j))");
/// ```
pub fn split(stmt: &Statement, type_of: &dyn Fn(&str) -> Option<ValueType>) -> Result<Option<Split>> {
    let is_complex = |name: &str| type_of(name) == Some(ValueType::C64);
    let reads_complex = stmt.rhs.accesses().iter().any(|a| is_complex(&a.tensor))
        || (stmt.op == AssignOp::AddAssign && is_complex(&stmt.lhs.tensor));
    if !reads_complex && !casts_to_complex(&stmt.rhs) {
        return Ok(None);
    }
    // Implicit sums are placed first: the parts repeat subexpressions,
    // which would move where a sum goes.
    let stmt = &super::place_reductions(stmt);
    let splitter = Splitter {
        is_complex: &is_complex,
    };
    let mut value = splitter.expand(&stmt.rhs)?;
    if stmt.op == AssignOp::AddAssign {
        let old = splitter.expand(&Expr::Access(stmt.lhs.clone()))?;
        value = splitter.binary(BinaryOp::Add, old, value, stmt.lhs.span.column())?;
    }
    let assign = |rhs: Expr| Statement::assign(stmt.lhs.clone(), rhs);
    let mut complex_inputs: Vec<String> = Vec::new();
    for a in stmt.rhs.accesses() {
        if is_complex(&a.tensor) && !complex_inputs.contains(&a.tensor) {
            complex_inputs.push(a.tensor.clone());
        }
    }
    if stmt.op == AssignOp::AddAssign && is_complex(&stmt.lhs.tensor) && !complex_inputs.contains(&stmt.lhs.tensor) {
        complex_inputs.push(stmt.lhs.tensor.clone());
    }
    Ok(Some(Split {
        re: assign(value.re),
        im: value.im.map(assign),
        complex: value.complex,
        complex_inputs,
    }))
}

/// Whether `e` casts anything to `c64`.
fn casts_to_complex(e: &Expr) -> bool {
    match e {
        Expr::Call {
            func: Func::Cast(ValueType::C64),
            ..
        } => true,
        Expr::Call { args, .. } => args.iter().any(casts_to_complex),
        Expr::Neg(x) => casts_to_complex(x),
        Expr::Binary { lhs, rhs, .. } => casts_to_complex(lhs) || casts_to_complex(rhs),
        Expr::Reduce { body, .. } => casts_to_complex(body),
        Expr::Access(_) | Expr::Literal(_) => false,
    }
}

/// An expression's real and imaginary parts (`None`: 0), whether it is
/// complex, and whether it is made of literals only (which meet either).
#[derive(Clone, Debug)]
struct Parts {
    re: Expr,
    im: Option<Expr>,
    complex: bool,
    literal: bool,
}

impl Parts {
    fn real(e: Expr, literal: bool) -> Parts {
        Parts {
            re: e,
            im: None,
            complex: false,
            literal,
        }
    }
    fn complex(re: Expr, im: Option<Expr>) -> Parts {
        Parts {
            re,
            im,
            complex: true,
            literal: false,
        }
    }
}

struct Splitter<'a> {
    is_complex: &'a dyn Fn(&str) -> bool,
}

impl Splitter<'_> {
    fn expand(&self, e: &Expr) -> Result<Parts> {
        let column = e.accesses().first().map_or(1, |a| a.span.column());
        match e {
            Expr::Access(a) if (self.is_complex)(&a.tensor) => {
                let part = |p| {
                    Expr::Access(Access {
                        tensor: part_name(&a.tensor, p),
                        ..a.clone()
                    })
                };
                Ok(Parts::complex(part(Part::Re), Some(part(Part::Im))))
            }
            Expr::Access(_) => Ok(Parts::real(e.clone(), false)),
            Expr::Literal(_) => Ok(Parts::real(e.clone(), true)),
            Expr::Neg(x) => {
                let x = self.expand(x)?;
                Ok(Parts {
                    re: -x.re,
                    im: x.im.map(|im| -im),
                    ..x
                })
            }
            Expr::Binary { op, lhs, rhs } => {
                let (l, r) = (self.expand(lhs)?, self.expand(rhs)?);
                self.binary(*op, l, r, column)
            }
            Expr::Call { func, args } => self.call(*func, args, column),
            Expr::Reduce { op, var, body } => {
                let body = self.expand(body)?;
                let reduce = |b: Expr| Expr::Reduce {
                    op: *op,
                    var: var.clone(),
                    body: Box::new(b),
                };
                if !body.complex {
                    return Ok(Parts::real(reduce(body.re), false));
                }
                if *op != Reduction::Sum {
                    return Err(refused(column, &format!("{op}(...)")));
                }
                let sum = |b: Expr| summed(var, b);
                Ok(Parts::complex(sum(body.re), body.im.map(sum)))
            }
        }
    }

    fn binary(&self, op: BinaryOp, l: Parts, r: Parts, column: usize) -> Result<Parts> {
        if !l.complex && !r.complex {
            let literal = l.literal && r.literal;
            return Ok(Parts::real(Expr::binary(op, l.re, r.re), literal));
        }
        for side in [&l, &r] {
            if !side.complex && !side.literal {
                return Err(EngineError::Type {
                    column,
                    message: format!(
                        "{} meets a c64 value and an f64 one: cast the real one with c64(...)",
                        op.symbol()
                    ),
                });
            }
        }
        let (re, im) = match op {
            BinaryOp::Add => (l.re + r.re, plus(l.im, r.im)),
            BinaryOp::Sub => (l.re - r.re, minus(l.im, r.im)),
            BinaryOp::Mul => {
                let re = minus(Some(l.re.clone() * r.re.clone()), times(&l.im, &r.im)).expect("a product");
                let im = plus(times(&Some(l.re), &r.im), times(&l.im, &Some(r.re)));
                (re, im)
            }
            BinaryOp::Div => match r.im {
                None => (l.re / r.re.clone(), l.im.map(|im| im / r.re)),
                Some(d) => {
                    let c = r.re;
                    let modulus = c.clone() * c.clone() + d.clone() * d.clone();
                    let re = plus(Some(l.re.clone() * c.clone()), times(&l.im, &Some(d.clone()))).expect("a sum");
                    let im = minus(times(&l.im, &Some(c)), Some(l.re * d)).expect("a difference");
                    (re / modulus.clone(), Some(im / modulus))
                }
            },
        };
        Ok(Parts::complex(re, im))
    }

    fn call(&self, func: Func, args: &[Expr], column: usize) -> Result<Parts> {
        let parts: Vec<Parts> = args.iter().map(|a| self.expand(a)).collect::<Result<_>>()?;
        if let Func::Cast(ValueType::C64) = func {
            let arg = parts.into_iter().next().expect("a cast takes one argument");
            if arg.complex {
                return Ok(arg);
            }
            return Ok(Parts::complex(
                Expr::call(Func::Cast(ValueType::F64), vec![arg.re]),
                None,
            ));
        }
        if parts.iter().all(|p| !p.complex) {
            let literal = parts.iter().all(|p| p.literal);
            return Ok(Parts::real(
                Expr::call(func, parts.into_iter().map(|p| p.re).collect()),
                literal,
            ));
        }
        let z = parts.into_iter().next().expect("a complex argument");
        match func {
            Func::Real => Ok(Parts::real(z.re, false)),
            Func::Imag => Ok(Parts::real(z.im.unwrap_or(Expr::Literal(0.0)), false)),
            Func::Conj => Ok(Parts::complex(z.re, z.im.map(|im| -im))),
            Func::Abs => {
                let square = |e: &Expr| e.clone() * e.clone();
                let sum = plus(Some(square(&z.re)), z.im.as_ref().map(square)).expect("a sum");
                Ok(Parts::real(Expr::call(Func::Sqrt, vec![sum]), false))
            }
            Func::Square => self.binary(BinaryOp::Mul, z.clone(), z, column),
            Func::Exp => {
                let scale = Expr::call(Func::Exp, vec![z.re]);
                match z.im {
                    None => Ok(Parts::complex(scale, None)),
                    Some(im) => Ok(Parts::complex(
                        scale.clone() * Expr::call(Func::Cos, vec![im.clone()]),
                        Some(scale * Expr::call(Func::Sin, vec![im])),
                    )),
                }
            }
            other => Err(refused(column, other.name())),
        }
    }
}

/// `sum(var, e)` with the sum taken of each term of `e` apart:
/// `sum(j, a*b - c*d)` is `sum(j, a*b) - sum(j, c*d)`, so that each sum
/// iterates one sparse operand (a part) instead of merging the real and
/// imaginary parts of one tensor, which share their positions.
/// A term that does not read `var` stays in the sum of its neighbours: a
/// sum alone over it would have no access to size its variable.
fn summed(var: &IndexVar, e: Expr) -> Expr {
    let reads = |e: &Expr| e.accesses().iter().any(|a| a.indices.contains(var));
    match e {
        Expr::Binary {
            op: op @ (BinaryOp::Add | BinaryOp::Sub),
            lhs,
            rhs,
        } if reads(&lhs) && reads(&rhs) => Expr::binary(op, summed(var, *lhs), summed(var, *rhs)),
        Expr::Neg(x) if reads(&x) => -summed(var, *x),
        body => Expr::Reduce {
            op: Reduction::Sum,
            var: var.clone(),
            body: Box::new(body),
        },
    }
}

fn refused(column: usize, what: &str) -> EngineError {
    EngineError::Type {
        column,
        message: format!(
            "{what} takes no c64 values (complex values take + - * /, sum, conj, real, imag, abs, exp and square)"
        ),
    }
}

/// `a + b` of parts that may be 0.
fn plus(a: Option<Expr>, b: Option<Expr>) -> Option<Expr> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a + b),
        (a, None) => a,
        (None, b) => b,
    }
}

/// `a - b` of parts that may be 0.
fn minus(a: Option<Expr>, b: Option<Expr>) -> Option<Expr> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a - b),
        (a, None) => a,
        (None, Some(b)) => Some(-b),
    }
}

/// `a * b` of parts that may be 0.
fn times(a: &Option<Expr>, b: &Option<Expr>) -> Option<Expr> {
    Some(a.clone()? * b.clone()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::parse_statement;

    fn parts(text: &str, complex: &[&str]) -> Result<(String, Option<String>)> {
        let stmt = parse_statement(text).unwrap();
        let c64 = |n: &str| {
            Some(if complex.contains(&n) {
                ValueType::C64
            } else {
                ValueType::F64
            })
        };
        let split = split(&stmt, &c64)?.expect("a complex statement");
        Ok((split.re.to_string(), split.im.map(|s| s.to_string())))
    }

    #[test]
    fn quotients_divide_by_the_square_of_the_modulus() {
        let (re, im) = parts("y(i) = a(i) / b(i)", &["a", "b"]).unwrap();
        assert_eq!(
            re,
            "y(i) = (a.re(i) * b.re(i) + a.im(i) * b.im(i)) / (b.re(i) * b.re(i) + b.im(i) * b.im(i))"
        );
        assert_eq!(
            im.unwrap(),
            "y(i) = (a.im(i) * b.re(i) - a.re(i) * b.im(i)) / (b.re(i) * b.re(i) + b.im(i) * b.im(i))"
        );
    }

    #[test]
    fn real_values_enter_through_casts_and_leave_through_parts() {
        let (re, im) = parts("y(i) = A(i,j) * c64(x(j)) + 2", &["A"]).unwrap();
        assert_eq!(re, "y(i) = sum(j, A.re(i,j) * f64(x(j))) + 2");
        assert_eq!(im.unwrap(), "y(i) = sum(j, A.im(i,j) * f64(x(j)))");
        let (re, im) = parts("s = sum(i, abs(z(i)))", &["z"]).unwrap();
        assert_eq!(re, "s = sum(i, sqrt(z.re(i) * z.re(i) + z.im(i) * z.im(i)))");
        assert_eq!(im, None);
        let (re, im) = parts("y(i) += conj(z(i))", &["y", "z"]).unwrap();
        assert_eq!(re, "y(i) = y.re(i) + z.re(i)");
        assert_eq!(im.unwrap(), "y(i) = y.im(i) + -z.im(i)");
    }

    #[test]
    fn what_complex_values_do_not_take_is_refused_with_the_column() {
        let err = parts("y(i) = z(i) * x(i)", &["z"]).unwrap_err().to_string();
        assert!(err.starts_with("column 8:") && err.contains("c64(...)"), "{err}");
        for (text, what) in [
            ("y(i) = sqrt(z(i))", "sqrt"),
            ("y(i) = max(j, A(i,j))", "max(...)"),
            ("y(i) = z(i) < 1", "<"),
        ] {
            let err = parts(text, &["z", "A"]).unwrap_err().to_string();
            assert!(err.contains(&format!("{what} takes no c64 values")), "{text}: {err}");
        }
    }
}
