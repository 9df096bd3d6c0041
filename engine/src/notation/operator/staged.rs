//! Staged operators: bodies written with tessera's functions, and calls
//! of them written out as those bodies before planning, so that every tier
//! compiles them as it compiles the rest of a statement.
//!
//! A body is an [`Expr`] whose arguments are stand-ins, scalar accesses
//! named `#0`, `#1`, ... (a name no statement can write).

use std::borrow::Cow;

use super::super::func::Func;
use super::super::ir::{Access, Expr, Span, Statement};
use super::super::parse::parse_statement;
use crate::error::{EngineError, Result};

/// The stand-in for argument `k` in a staged body.
pub(super) fn parameter(k: usize) -> Expr {
    Expr::Access(Access {
        tensor: format!("#{k}"),
        indices: Vec::new(),
        span: Span::default(),
    })
}

/// The argument an access stands in for, if it is a stand-in.
fn parameter_of(access: &Access) -> Option<usize> {
    access.indices.is_empty().then_some(())?;
    access.tensor.strip_prefix('#')?.parse().ok()
}

/// `name(x, y) = body` parsed: the name, the arity and the body with the
/// parameters as stand-ins.
pub(super) fn parse_definition(text: &str) -> Result<(String, usize, Expr)> {
    // The name of a function would not parse as the left side: say why.
    let start = text.len() - text.trim_start().len();
    let name = text[start..]
        .split(|c: char| c == '(' || c.is_whitespace())
        .next()
        .unwrap_or_default();
    if Func::from_name(name).is_some() {
        return Err(EngineError::Syntax {
            column: start + 1,
            message: format!("`{name}` is taken by a function or operator (an operator is defined once)"),
        });
    }
    let stmt = parse_statement(text)?;
    let at = |span: Span, message: String| EngineError::Syntax {
        column: span.column(),
        message,
    };
    let lhs = &stmt.lhs;
    if stmt.op != super::super::AssignOp::Assign {
        return Err(at(lhs.span, "an operator is defined with `=`".into()));
    }
    let params = &lhs.indices;
    for (k, p) in params.iter().enumerate() {
        if params[..k].contains(p) {
            return Err(at(lhs.span, format!("parameter {p} is named twice")));
        }
    }
    let names: Vec<&str> = params.iter().map(|p| p.as_str()).collect();
    let mut refused = None;
    let body = substitute(&stmt.rhs, &mut |access| match names
        .iter()
        .position(|&n| n == access.tensor && access.indices.is_empty())
    {
        Some(k) => parameter(k),
        None => {
            refused.get_or_insert_with(|| {
                at(
                    access.span,
                    format!(
                        "the body of {} reads `{}`: it reads only its parameters ({}), as scalars",
                        lhs.tensor,
                        access_text(access),
                        names.join(", ")
                    ),
                )
            });
            Expr::Access(access.clone())
        }
    });
    if let Some(err) = refused {
        return Err(err);
    }
    if has_reduction(&body) {
        return Err(at(
            lhs.span,
            format!("the body of {} has a reduction: operators are scalar", lhs.tensor),
        ));
    }
    Ok((lhs.tensor.clone(), params.len(), body))
}

fn access_text(access: &Access) -> String {
    Statement {
        lhs: access.clone(),
        op: super::super::AssignOp::Assign,
        rhs: Expr::Literal(0.0),
    }
    .to_string()
    .split(" =")
    .next()
    .unwrap_or_default()
    .to_string()
}

/// The body of an operator of `arity` arguments, checked and with its
/// calls of staged operators written out. The error says why it is
/// refused.
pub(super) fn checked_body(body: &Expr, arity: usize) -> std::result::Result<Expr, String> {
    let stray = body
        .accesses()
        .into_iter()
        .find(|a| parameter_of(a).is_none_or(|k| k >= arity));
    if let Some(Access { tensor: name, .. }) = stray {
        return Err(format!(
            "its body reads `{name}`, which is none of its {arity} arguments"
        ));
    }
    if has_reduction(body) {
        return Err("its body has a reduction: operators are scalar".into());
    }
    Ok(inline(body).into_owned())
}

fn has_reduction(e: &Expr) -> bool {
    match e {
        Expr::Reduce { .. } => true,
        Expr::Access(_) | Expr::Literal(_) => false,
        Expr::Neg(x) => has_reduction(x),
        Expr::Binary { lhs, rhs, .. } => has_reduction(lhs) || has_reduction(rhs),
        Expr::Call { args, .. } => args.iter().any(has_reduction),
    }
}

/// `e` with every access replaced by what `replace` gives for it.
fn substitute(e: &Expr, replace: &mut impl FnMut(&Access) -> Expr) -> Expr {
    match e {
        Expr::Access(a) => replace(a),
        Expr::Literal(v) => Expr::Literal(*v),
        Expr::Neg(x) => Expr::Neg(Box::new(substitute(x, replace))),
        Expr::Binary { op, lhs, rhs } => Expr::binary(*op, substitute(lhs, replace), substitute(rhs, replace)),
        Expr::Call { func, args } => Expr::call(*func, args.iter().map(|a| substitute(a, replace)).collect()),
        Expr::Reduce { op, var, body } => Expr::Reduce {
            op: *op,
            var: var.clone(),
            body: Box::new(substitute(body, replace)),
        },
    }
}

/// Whether `e` calls a staged operator.
fn calls_staged(e: &Expr) -> bool {
    match e {
        Expr::Access(_) | Expr::Literal(_) => false,
        Expr::Neg(x) | Expr::Reduce { body: x, .. } => calls_staged(x),
        Expr::Binary { lhs, rhs, .. } => calls_staged(lhs) || calls_staged(rhs),
        Expr::Call { func, args } => {
            matches!(func, Func::User(id) if super::staged_body(*id).is_some()) || args.iter().any(calls_staged)
        }
    }
}

/// `e` with every call of a staged operator written out as its body, the
/// arguments in place of its stand-ins (an argument read twice is
/// computed twice).
pub(crate) fn inline(e: &Expr) -> Cow<'_, Expr> {
    if !calls_staged(e) {
        return Cow::Borrowed(e);
    }
    Cow::Owned(match e {
        Expr::Call {
            func: Func::User(id),
            args,
        } if super::staged_body(*id).is_some() => {
            let args: Vec<Expr> = args.iter().map(|a| inline(a).into_owned()).collect();
            let body = super::staged_body(*id).expect("checked above");
            substitute(&body, &mut |a| match parameter_of(a) {
                Some(k) => args[k].clone(),
                None => Expr::Access(a.clone()),
            })
        }
        Expr::Access(_) | Expr::Literal(_) => e.clone(),
        Expr::Neg(x) => Expr::Neg(Box::new(inline(x).into_owned())),
        Expr::Binary { op, lhs, rhs } => Expr::binary(*op, inline(lhs).into_owned(), inline(rhs).into_owned()),
        Expr::Call { func, args } => Expr::call(*func, args.iter().map(|a| inline(a).into_owned()).collect()),
        Expr::Reduce { op, var, body } => Expr::Reduce {
            op: *op,
            var: var.clone(),
            body: Box::new(inline(body).into_owned()),
        },
    })
}

/// `stmt` with its calls of staged operators written out ([`inline`]).
pub(crate) fn inline_statement(stmt: &Statement) -> Cow<'_, Statement> {
    match inline(&stmt.rhs) {
        Cow::Borrowed(_) => Cow::Borrowed(stmt),
        Cow::Owned(rhs) => Cow::Owned(Statement {
            lhs: stmt.lhs.clone(),
            op: stmt.op,
            rhs,
        }),
    }
}

/// A checked body's value on `args`, in `f64`.
pub(super) fn evaluate(body: &Expr, args: &[f64]) -> f64 {
    match body {
        Expr::Access(a) => parameter_of(a).map_or(f64::NAN, |k| args[k]),
        Expr::Literal(v) => *v,
        Expr::Neg(x) => -evaluate(x, args),
        Expr::Binary { op, lhs, rhs } => op.apply(evaluate(lhs, args), evaluate(rhs, args)),
        Expr::Call { func, args: inner } => {
            let values: smallvec::SmallVec<[f64; 2]> = inner.iter().map(|a| evaluate(a, args)).collect();
            func.apply(&values)
        }
        Expr::Reduce { .. } => unreachable!("checked bodies have no reductions"),
    }
}
