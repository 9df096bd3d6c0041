//! Value types of a statement: which type each expression gives, from the
//! types of the tensors it reads.
//!
//! Every tier computes in 64-bit registers. Floats and truth values are
//! `f64` there, where each `f32` and `bool` value is exact; [`typed`]
//! makes that give the typed results. A `bool` expression keeps its values
//! 0 or 1 (its `+` and `sum` become `||` and `or`, its `*` and `prod`
//! become `&&` and `and`), literals are rounded to the type they meet, and
//! the result is rounded to the statement's type once, where it is stored.
//! So an `f32` statement's arithmetic is done in double precision, each
//! sum's terms added without rounding in between.
//!
//! Integers (`i64`, `i32`) are held as their bits ([`tessera_formats::Value::to_word`]) and
//! every operation on them is written as an integer function
//! ([`Func::Int`]): wrapping arithmetic of their type, division by 0 giving
//! 0. A statement's sums, products, minima and maxima compute in its type,
//! so a reduction over integers must be of the statement's type.
//!
//! Operands of different number types meet only through a cast
//! (`f64(b(i))`); otherwise the statement is refused with the column and
//! both types. A `bool` operand meeting a number is that number type's 0 or
//! 1, as in C and numpy: `B(i,j) * (C(i,j) > 0)` masks B.

use std::cell::RefCell;

use tessera_formats::ValueType;

use super::func::{Func, IntOp, Reduction};
use super::ir::{BinaryOp, Expr, Statement};
use crate::error::{EngineError, Result};

/// The types the typer computes with (complex values are split into
/// their parts first: [`super::complex`]).
pub const NUMBER_AND_TRUTH_TYPES: [ValueType; 5] = [
    ValueType::F64,
    ValueType::F32,
    ValueType::I64,
    ValueType::I32,
    ValueType::Bool,
];

/// A statement made ready for register arithmetic, and the type it gives.
#[derive(Clone, Debug, PartialEq)]
pub struct TypedStatement {
    pub statement: Statement,
    pub value_type: ValueType,
}

/// Types `stmt` with `type_of` giving each tensor's type (tensors it does
/// not know are `f64`).
///
/// ```
/// use tessera_engine::notation::{parse_statement, types::typed};
/// use tessera_formats::ValueType;
///
/// let bfs = parse_statement("y(i) = A(i,j) * x(j)").unwrap();
/// let t = typed(&bfs, &|_| Some(ValueType::Bool)).unwrap();
/// assert_eq!(t.value_type, ValueType::Bool);
/// assert_eq!(t.statement.to_string(), "y(i) = or(j, A(i,j) && x(j))");
///
/// let counts = parse_statement("y(i) = A(i,j) * x(j) + 1").unwrap();
/// let t = typed(&counts, &|_| Some(ValueType::I64)).unwrap();
/// assert_eq!(t.statement.to_string(), "y(i) = iadd(sum(j, imul(A(i,j), x(j))), i64(1))");
///
/// let mixed = parse_statement("y(i) = A(i,j) * x(j)").unwrap();
/// let f32_matrix = |n: &str| Some(if n == "A" { ValueType::F32 } else { ValueType::F64 });
/// let err = typed(&mixed, &f32_matrix).unwrap_err().to_string();
/// assert!(err.contains("f32") && err.contains("f64") && err.contains("cast"), "{err}");
/// ```
pub fn typed(stmt: &Statement, type_of: &dyn Fn(&str) -> Option<ValueType>) -> Result<TypedStatement> {
    let checker = Checker {
        type_of,
        reductions: RefCell::new(Vec::new()),
    };
    // Implicit sums made explicit: a sum of truth values is an `or`.
    let stmt = &super::place_reductions(stmt);
    let mut rhs = stmt.rhs.clone();
    let found = checker.visit(&mut rhs)?;
    let mut value_type = found.as_ref().map_or(ValueType::F64, |f| f.ty);
    if let Some(found) = &found {
        let lhs_type = checker.type_of(&stmt.lhs.tensor);
        if stmt.op == super::AssignOp::AddAssign && value_type == ValueType::Bool {
            // Truth values added to numbers are 0 or 1.
            value_type = lhs_type;
            if lhs_type.is_integer() {
                rhs = cast(ValueType::Bool, lhs_type, rhs);
            }
        } else if stmt.op == super::AssignOp::AddAssign && lhs_type != value_type {
            return Err(mismatch(
                stmt.lhs.span.column(),
                "+=",
                (lhs_type, &stmt.lhs.tensor),
                (value_type, &found.from),
            ));
        }
    }
    if found.is_none() {
        round_literals(&mut rhs, value_type, 1)?;
    }
    checker.reductions_compute_in(value_type)?;
    let mut statement = stmt.clone();
    if value_type.is_integer() && stmt.op == super::AssignOp::AddAssign {
        // The left tensor's values are added as integers, not as `+` of
        // floats would add them.
        let old = Expr::Access(stmt.lhs.clone());
        rhs = Expr::call(Func::Int(IntOp::Add, value_type), vec![old, rhs]);
        statement.op = super::AssignOp::Assign;
    }
    statement.rhs = rhs;
    Ok(TypedStatement { statement, value_type })
}

/// An expression's type and the tensor (or cast) it comes from, for
/// messages. `None` for expressions of literals only, which take the type
/// of what they meet.
#[derive(Clone, Debug)]
struct Found {
    ty: ValueType,
    from: String,
}

struct Checker<'a> {
    type_of: &'a dyn Fn(&str) -> Option<ValueType>,
    /// The column, operation and terms' type of each arithmetic reduction.
    reductions: RefCell<Vec<(usize, Reduction, ValueType)>>,
}

impl Checker<'_> {
    fn type_of(&self, tensor: &str) -> ValueType {
        (self.type_of)(tensor).unwrap_or_default()
    }

    /// Refuses a reduction over integers in a statement of another type,
    /// and one over floats in an integer statement: a statement's
    /// reductions compute in its type.
    fn reductions_compute_in(&self, ty: ValueType) -> Result<()> {
        for &(column, op, terms) in self.reductions.borrow().iter() {
            if (terms.is_integer() || ty.is_integer()) && terms != ty {
                let cast = if ty.is_integer() { ty } else { ValueType::F64 };
                return Err(EngineError::Type {
                    column,
                    message: format!(
                        "{op}(...) reduces {terms} values in a statement of type {ty}: reductions over integers compute in the statement's type; cast the terms with {cast}(...)"
                    ),
                });
            }
        }
        Ok(())
    }

    fn visit(&self, e: &mut Expr) -> Result<Option<Found>> {
        let column = first_column(e);
        Ok(match e {
            Expr::Access(a) => Some(Found {
                ty: self.type_of(&a.tensor),
                from: a.tensor.clone(),
            }),
            Expr::Literal(_) => None,
            Expr::Neg(inner) => {
                let found = self.visit(inner)?;
                refuse_bool(&found, column, "-")?;
                if let Some(ty) = integer(&found) {
                    let inner = take(inner);
                    *e = Expr::call(Func::Int(IntOp::Neg, ty), vec![inner]);
                }
                found
            }
            Expr::Binary { op, lhs, rhs } => {
                let found = self.same_type(lhs, rhs, column, op.symbol())?;
                let as_func = match found.as_ref().map(|f| f.ty) {
                    Some(ValueType::Bool) => Some(match op {
                        BinaryOp::Add => Func::Or,
                        BinaryOp::Mul => Func::And,
                        BinaryOp::Sub | BinaryOp::Div => return Err(bool_refused(&found, column, op.symbol())),
                    }),
                    Some(ty) if ty.is_integer() => Some(Func::Int(
                        match op {
                            BinaryOp::Add => IntOp::Add,
                            BinaryOp::Sub => IntOp::Sub,
                            BinaryOp::Mul => IntOp::Mul,
                            BinaryOp::Div => IntOp::Div,
                        },
                        ty,
                    )),
                    _ => None,
                };
                if let Some(func) = as_func {
                    let args = vec![take(lhs), take(rhs)];
                    *e = Expr::call(func, args);
                }
                found
            }
            Expr::Call { func, args } => {
                let (found, rewritten) = self.call(*func, args, column)?;
                if let Some(func) = rewritten {
                    *e = Expr::call(func, std::mem::take(args));
                }
                found
            }
            Expr::Reduce { op, body, .. } => {
                let found = self.visit(body)?;
                match op {
                    Reduction::Or | Reduction::And => {
                        truth_of(body, &found);
                        truth()
                    }
                    Reduction::Sum | Reduction::Prod if found.as_ref().is_some_and(|f| f.ty == ValueType::Bool) => {
                        *op = if *op == Reduction::Sum {
                            Reduction::Or
                        } else {
                            Reduction::And
                        };
                        found
                    }
                    _ => {
                        if let Some(f) = &found {
                            self.reductions.borrow_mut().push((column, *op, f.ty));
                        }
                        found
                    }
                }
            }
        })
    }

    /// The type of a call and, where its operands are integers, the
    /// integer function it becomes.
    fn call(&self, func: Func, args: &mut [Expr], column: usize) -> Result<(Option<Found>, Option<Func>)> {
        let two = || EngineError::Internal(format!("{func} takes two arguments"));
        match func {
            Func::Cast(ty) => {
                let mut from = None;
                for a in args.iter_mut() {
                    match self.visit(a)? {
                        None if !ty.is_integer() => round_literals(a, ty, column)?,
                        None => {}
                        Some(found) => from = integer(&Some(found)),
                    }
                }
                let found = Some(Found {
                    ty,
                    from: format!("{}(...)", ty.name()),
                });
                Ok((found, from.map(|int| Func::Int(IntOp::Cast(ty), int))))
            }
            // Truth values of any type.
            Func::And | Func::Or | Func::Xor | Func::Not => {
                for a in args.iter_mut() {
                    let found = self.visit(a)?;
                    truth_of(a, &found);
                }
                Ok((truth(), None))
            }
            Func::Lt | Func::Le | Func::Gt | Func::Ge | Func::Eq | Func::Ne => {
                let [a, b] = args else { return Err(two()) };
                let found = self.same_type(a, b, column, func.name())?;
                let int = integer(&found).zip(func.as_comparison());
                Ok((truth(), int.map(|(ty, cmp)| Func::Int(IntOp::Compare(cmp), ty))))
            }
            Func::Min | Func::Max => {
                let [a, b] = args else { return Err(two()) };
                let found = self.same_type(a, b, column, func.name())?;
                let op = if func == Func::Min { IntOp::Min } else { IntOp::Max };
                Ok((found.clone(), integer(&found).map(|ty| Func::Int(op, ty))))
            }
            // Numbers: floats, and integers for the functions that have
            // an integer meaning.
            _ => {
                let found = match args {
                    [a, b] => self.same_type(a, b, column, func.name())?,
                    _ => {
                        let mut found = None;
                        for a in args.iter_mut() {
                            found = found.or(self.visit(a)?);
                        }
                        found
                    }
                };
                refuse_bool(&found, column, func.name())?;
                let Some(ty) = integer(&found) else {
                    return Ok((found, None));
                };
                let op = match func {
                    Func::Abs => IntOp::Abs,
                    Func::Square => IntOp::Square,
                    Func::Cube => IntOp::Cube,
                    Func::Heaviside => IntOp::Heaviside,
                    Func::Mod => IntOp::Mod,
                    _ => return Err(integer_refused(&found, column, func.name())),
                };
                Ok((found, Some(Func::Int(op, ty))))
            }
        }
    }

    /// The one type of two operands; a side of literals only is rounded to
    /// the other side's type, a truth value meeting an integer is cast to
    /// it.
    fn same_type(&self, a: &mut Expr, b: &mut Expr, column: usize, what: &str) -> Result<Option<Found>> {
        let (fa, fb) = (self.visit(a)?, self.visit(b)?);
        let is_bool = |f: &Found| f.ty == ValueType::Bool;
        match (fa, fb) {
            // A truth value is the number 0 or 1 (as in C and numpy).
            (Some(x), Some(y)) if is_bool(&x) && !is_bool(&y) => {
                cast_truth(a, y.ty);
                Ok(Some(y))
            }
            (Some(x), Some(y)) if is_bool(&y) && !is_bool(&x) => {
                cast_truth(b, x.ty);
                Ok(Some(x))
            }
            (Some(x), Some(y)) if x.ty != y.ty => Err(mismatch(column, what, (x.ty, &x.from), (y.ty, &y.from))),
            (Some(x), None) => {
                round_literals(b, x.ty, column)?;
                Ok(Some(x))
            }
            (None, Some(y)) => {
                round_literals(a, y.ty, column)?;
                Ok(Some(y))
            }
            (x, _) => Ok(x),
        }
    }
}

/// The integer type of an expression, if it is one.
fn integer(found: &Option<Found>) -> Option<ValueType> {
    found.as_ref().map(|f| f.ty).filter(|t| t.is_integer())
}

fn take(e: &mut Expr) -> Expr {
    std::mem::replace(e, Expr::Literal(0.0))
}

/// `e` of type `from` as type `to`.
fn cast(from: ValueType, to: ValueType, e: Expr) -> Expr {
    let func = if from.is_integer() {
        Func::Int(IntOp::Cast(to), from)
    } else {
        Func::Cast(to)
    };
    Expr::call(func, vec![e])
}

/// A truth value meeting an integer becomes that integer 0 or 1.
fn cast_truth(e: &mut Expr, ty: ValueType) {
    if ty.is_integer() {
        let inner = take(e);
        *e = cast(ValueType::Bool, ty, inner);
    }
}

/// An integer operand of a logical operation is read as its truth.
fn truth_of(e: &mut Expr, found: &Option<Found>) {
    if let Some(ty) = integer(found) {
        let inner = take(e);
        *e = cast(ty, ValueType::Bool, inner);
    }
}

/// What a comparison or logical operation gives.
fn truth() -> Option<Found> {
    Some(Found {
        ty: ValueType::Bool,
        from: "a truth value".into(),
    })
}

fn refuse_bool(found: &Option<Found>, column: usize, what: &str) -> Result<()> {
    match found {
        Some(f) if f.ty == ValueType::Bool => Err(bool_refused(found, column, what)),
        _ => Ok(()),
    }
}

fn bool_refused(found: &Option<Found>, column: usize, what: &str) -> EngineError {
    let from = found.as_ref().map_or("it", |f| f.from.as_str());
    EngineError::Type {
        column,
        message: format!("{what} takes numbers, not bool ({from}): cast it with f64(...)"),
    }
}

fn integer_refused(found: &Option<Found>, column: usize, what: &str) -> EngineError {
    let (from, ty) = found
        .as_ref()
        .map_or(("it", ValueType::I64), |f| (f.from.as_str(), f.ty));
    EngineError::Type {
        column,
        message: format!("{what} takes floats, not {ty} ({from}): cast it with f64(...)"),
    }
}

fn mismatch(column: usize, what: &str, (a, from_a): (ValueType, &str), (b, from_b): (ValueType, &str)) -> EngineError {
    EngineError::Type {
        column,
        message: format!(
            "{what} meets {from_a}, of type {a}, and {from_b}, of type {b}: cast one to the other's type with {a}(...) or {b}(...)"
        ),
    }
}

/// Rounds every literal of a literals-only expression to `ty`; for an
/// integer type, the expression is computed in `f64` and cast, and must
/// be an integer.
fn round_literals(e: &mut Expr, ty: ValueType, column: usize) -> Result<()> {
    if ty.is_integer() {
        let value = literal_value(e);
        if value.fract() != 0.0 || value.abs() > 2f64.powi(53) {
            return Err(EngineError::Type {
                column,
                message: format!(
                    "{value} meets {ty} values and is not an {ty}: write an integer, or cast with f64(...)"
                ),
            });
        }
        *e = Expr::call(Func::Cast(ty), vec![Expr::Literal(value)]);
        return Ok(());
    }
    match e {
        Expr::Literal(v) => *v = ty.round(*v),
        Expr::Access(_) => {}
        Expr::Neg(inner) => round_literals(inner, ty, column)?,
        Expr::Binary { lhs, rhs, .. } => {
            round_literals(lhs, ty, column)?;
            round_literals(rhs, ty, column)?;
        }
        Expr::Call { args, .. } => {
            for a in args.iter_mut() {
                round_literals(a, ty, column)?;
            }
        }
        Expr::Reduce { body, .. } => round_literals(body, ty, column)?,
    }
    Ok(())
}

/// The value of an expression of literals only, computed in `f64`.
fn literal_value(e: &Expr) -> f64 {
    match e {
        Expr::Literal(v) => *v,
        Expr::Neg(inner) => -literal_value(inner),
        Expr::Binary { op, lhs, rhs } => op.apply(literal_value(lhs), literal_value(rhs)),
        Expr::Call { func, args } => func.apply(&args.iter().map(literal_value).collect::<Vec<_>>()),
        Expr::Access(_) | Expr::Reduce { .. } => f64::NAN,
    }
}

/// The column of the expression's first access (1 when it has none).
fn first_column(e: &Expr) -> usize {
    e.accesses().first().map_or(1, |a| a.span.column())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::parse_statement;

    fn types(f32s: &'static [&'static str], bools: &'static [&'static str]) -> impl Fn(&str) -> Option<ValueType> {
        move |n| {
            Some(if f32s.contains(&n) {
                ValueType::F32
            } else if bools.contains(&n) {
                ValueType::Bool
            } else {
                ValueType::F64
            })
        }
    }

    fn typed_text(
        text: &str,
        f32s: &'static [&'static str],
        bools: &'static [&'static str],
    ) -> Result<(String, ValueType)> {
        let t = typed(&parse_statement(text).unwrap(), &types(f32s, bools))?;
        Ok((t.statement.to_string(), t.value_type))
    }

    #[test]
    fn comparisons_and_logic_give_bool_and_casts_give_their_type() {
        assert_eq!(typed_text("m(i) = a(i) > b(i)", &[], &[]).unwrap().1, ValueType::Bool);
        assert_eq!(
            typed_text("m(i) = a(i) && b(i)", &["a"], &[]).unwrap().1,
            ValueType::Bool
        );
        assert_eq!(
            typed_text("y(i) = f64(a(i)) * b(i)", &["a"], &[]).unwrap().1,
            ValueType::F64
        );
        assert_eq!(typed_text("y(i) = f32(b(i))", &[], &[]).unwrap().1, ValueType::F32);
        assert_eq!(typed_text("y(i) = sqrt(a(i))", &["a"], &[]).unwrap().1, ValueType::F32);
        assert_eq!(typed_text("y = 2", &[], &[]).unwrap().1, ValueType::F64);
    }

    #[test]
    fn bool_arithmetic_becomes_logic() {
        let (text, ty) = typed_text("y(i) = sum(j, A(i,j) * x(j)) + m(i)", &[], &["A", "x", "m"]).unwrap();
        assert_eq!(ty, ValueType::Bool);
        assert_eq!(text, "y(i) = or(j, A(i,j) && x(j)) || m(i)");
        assert_eq!(
            typed_text("y(i) = prod(j, A(i,j))", &[], &["A"]).unwrap().0,
            "y(i) = and(j, A(i,j))"
        );
    }

    #[test]
    fn literals_take_the_type_they_meet() {
        let (text, _) = typed_text("y(i) = a(i) * 0.1", &["a"], &[]).unwrap();
        assert_eq!(text, format!("y(i) = a(i) * {}", f64::from(0.1f32)));
        let (text, _) = typed_text("y(i) = max(m(i), 2)", &[], &["m"]).unwrap();
        assert_eq!(text, "y(i) = max(m(i), 1)");
    }

    #[test]
    fn mixed_types_are_refused_with_the_column_and_both_types() {
        let err = typed_text("y(i) = A(i,j) * x(j)", &["A"], &[]).unwrap_err().to_string();
        assert!(err.starts_with("column 8:"), "{err}");
        assert!(
            err.contains("A, of type f32") && err.contains("x, of type f64"),
            "{err}"
        );
        let err = typed_text("y(i) = a(i) < b(i)", &["a"], &[]).unwrap_err().to_string();
        assert!(err.contains("f32") && err.contains("f64"), "{err}");
        let err = typed_text("y(i) += a(i)", &["a"], &[]).unwrap_err().to_string();
        assert!(err.contains("+=") && err.contains("f32"), "{err}");
        assert_eq!(typed_text("y(i) += a(i) > 0", &[], &[]).unwrap().1, ValueType::F64);
    }

    #[test]
    fn truth_values_are_numbers_beside_numbers() {
        let (text, ty) = typed_text("A(i,j) = B(i,j) * (C(i,j) > b(j))", &[], &[]).unwrap();
        assert_eq!(
            (text.as_str(), ty),
            ("A(i,j) = B(i,j) * (C(i,j) > b(j))", ValueType::F64)
        );
        assert_eq!(
            typed_text("y(i) = a(i) * m(i)", &["a"], &["m"]).unwrap().1,
            ValueType::F32
        );
        assert_eq!(
            typed_text("y(i) = m(i) - a(i)", &["a"], &["m"]).unwrap().1,
            ValueType::F32
        );
    }

    #[test]
    fn numbers_only_operations_refuse_bool() {
        for text in [
            "y(i) = sqrt(m(i))",
            "y(i) = m(i) - n(i)",
            "y(i) = -m(i)",
            "y(i) = m(i) / n(i)",
        ] {
            let err = typed_text(text, &[], &["m", "n"]).unwrap_err().to_string();
            assert!(err.contains("bool") && err.contains("cast"), "{text}: {err}");
        }
    }
}
