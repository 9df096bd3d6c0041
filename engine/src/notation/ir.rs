//! The index-notation IR: statements such as `y(i) = A(i,j) * x(j)` as a
//! tree of accesses, literals and arithmetic.
//!
//! Input: built directly with [`Expr::access`], [`Expr::lit`], the
//! arithmetic operators and [`Statement::assign`], or produced by
//! [`parse_statement`](super::parse::parse_statement). Output: the
//! [`Statement`] that every later stage of the pipeline (checking, reduction
//! placement, lowering to concrete index notation) takes. Printing a
//! statement gives canonical text that parses back to the same IR.

use std::collections::HashSet;
use std::fmt;
use std::ops;

use super::func::{Annihilators, Func, Reduction};

/// The most modes a tensor access may have.
pub const MAX_ORDER: usize = 8;

/// An index variable, by name.
#[derive(Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct IndexVar(pub String);

impl IndexVar {
    /// An index variable named `name`.
    pub fn new(name: impl Into<String>) -> Self {
        IndexVar(name.into())
    }
    /// The variable's name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for IndexVar {
    fn from(name: &str) -> Self {
        IndexVar(name.to_owned())
    }
}

impl fmt::Display for IndexVar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Byte range of a piece of the statement's text; excluded from equality
/// (`PartialEq` is always true) so parsed and built IR compare equal.
///
/// Statements that parse are pure ASCII (every other character is a syntax
/// error), so a span's byte offsets are also character offsets and
/// [`column`](Self::column) is exact. Statements built with
/// [`Statement::assign`] get the spans of their canonical text
/// (`stmt.to_string()`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    /// The span `start..end`.
    pub fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }
    /// The 1-based column where the span starts.
    pub fn column(&self) -> usize {
        self.start + 1
    }
}

impl PartialEq for Span {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

/// One tensor indexed by index variables: `A(i,j)`, or `a` for a scalar.
#[derive(Clone, Debug, PartialEq)]
pub struct Access {
    pub tensor: String,
    pub indices: Vec<IndexVar>,
    pub span: Span,
}

impl Access {
    /// The access `tensor(indices...)`, with no position in any text.
    pub fn new(tensor: &str, indices: &[&str]) -> Self {
        Access {
            tensor: tensor.to_owned(),
            indices: indices.iter().map(|&v| IndexVar::from(v)).collect(),
            span: Span::default(),
        }
    }
    /// The access's order (number of index variables).
    pub fn order(&self) -> usize {
        self.indices.len()
    }
}

/// A binary arithmetic operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
}

impl BinaryOp {
    /// The operator's symbol in the text.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
        }
    }
    /// `a op b`.
    pub fn apply(self, a: f64, b: f64) -> f64 {
        match self {
            BinaryOp::Add => a + b,
            BinaryOp::Sub => a - b,
            BinaryOp::Mul => a * b,
            BinaryOp::Div => a / b,
        }
    }

    /// The values `z` with `z op y = y op z = z` for every finite `y` (0
    /// for `*`, `±inf` for `+`): an absent operand holding one makes the
    /// result absent, so the lattice intersects. `-` and `/` have none.
    ///
    /// Absent entries annihilate the stored values they meet, as in every
    /// sparse system: a product with an absent factor is 0 even where the
    /// other factor stores an infinity or a NaN (where IEEE's `0 * inf` is
    /// NaN). Where absent meets absent, fills follow IEEE: a 0 fill does
    /// not annihilate an infinite one ([`Absence`](crate::lattice::Absence)).
    pub fn annihilators(self) -> Annihilators {
        match self {
            BinaryOp::Mul => Annihilators::both(&[0.0]),
            BinaryOp::Add => Annihilators::both(&[f64::INFINITY, f64::NEG_INFINITY]),
            BinaryOp::Sub | BinaryOp::Div => Annihilators::NONE,
        }
    }

    /// Binding strength: `*` and `/` bind tighter than `+` and `-`.
    fn precedence(self) -> u8 {
        match self {
            BinaryOp::Add | BinaryOp::Sub => PREC_ADD,
            BinaryOp::Mul | BinaryOp::Div => PREC_MUL,
        }
    }
}

/// The right-hand side of a statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Access(Access),
    Literal(f64),
    Neg(Box<Expr>),
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// A function or operator beyond `+ - * /`: `sqrt(a)`, `max(a, b)`,
    /// `a < b`, `a && b`, `!a`.
    Call {
        func: Func,
        args: Vec<Expr>,
    },
    /// `body` combined over every value of `var` by `op`: `sum(j, ...)`,
    /// `min(j, ...)`. Implicit sums are made explicit by `place_reductions`.
    /// (`min` and `max` over a variable their body does not use print as
    /// the functions of two arguments, which is what such text reads as.)
    Reduce {
        op: Reduction,
        var: IndexVar,
        body: Box<Expr>,
    },
}

impl Expr {
    /// The access `tensor(indices...)` as an expression.
    pub fn access(tensor: &str, indices: &[&str]) -> Expr {
        Expr::Access(Access::new(tensor, indices))
    }

    /// A numeric literal. The text has no negative literals (`-2` is
    /// negation applied to `2`), so a negative `value` gives
    /// `Neg(Literal(-value))`, exactly what parsing its text gives.
    /// Non-finite values print as `inf`/`NaN`, which do not parse.
    pub fn lit(value: f64) -> Expr {
        if value.is_sign_negative() && !value.is_nan() {
            Expr::Neg(Box::new(Expr::Literal(-value)))
        } else {
            Expr::Literal(value)
        }
    }

    /// `sum(var, body)`: the sum of `body` over every value of `var`.
    pub fn sum(var: &str, body: Expr) -> Expr {
        Expr::reduce(Reduction::Sum, var, body)
    }

    /// `op(var, body)`: `body` combined over every value of `var`, as in
    /// `min(j, B(i,j) + c(j))`.
    pub fn reduce(op: Reduction, var: &str, body: Expr) -> Expr {
        Expr::Reduce {
            op,
            var: IndexVar::from(var),
            body: Box::new(body),
        }
    }

    /// `func(args...)`, or the operator `func` applied to `args`.
    pub fn call(func: Func, args: Vec<Expr>) -> Expr {
        Expr::Call { func, args }
    }

    /// `lhs op rhs`.
    pub fn binary(op: BinaryOp, lhs: Expr, rhs: Expr) -> Expr {
        Expr::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        }
    }

    /// The factors of a product, in order; any other expression is one
    /// factor.
    ///
    /// ```
    /// use tessera_engine::notation::parse_statement;
    ///
    /// let s = parse_statement("A(i,j) = B(i,k) * (C(k,l) * d(l)) + 1").unwrap();
    /// let texts = |e: &tessera_engine::notation::Expr| e.factors().iter().map(|f| f.to_string()).collect::<Vec<_>>();
    /// assert_eq!(texts(&s.rhs), vec!["B(i,k) * (C(k,l) * d(l)) + 1"]);
    /// let product = parse_statement("A(i,j) = B(i,k) * (C(k,l) * d(l))").unwrap();
    /// assert_eq!(texts(&product.rhs), vec!["B(i,k)", "C(k,l)", "d(l)"]);
    /// ```
    pub fn factors(&self) -> Vec<&Expr> {
        match self {
            Expr::Binary {
                op: BinaryOp::Mul,
                lhs,
                rhs,
            } => {
                let mut out = lhs.factors();
                out.extend(rhs.factors());
                out
            }
            other => vec![other],
        }
    }

    /// Every access, in text order.
    pub fn accesses(&self) -> Vec<&Access> {
        let mut out = Vec::new();
        self.visit_accesses(&mut |a| out.push(a));
        out
    }

    fn visit_accesses<'a>(&'a self, visit: &mut impl FnMut(&'a Access)) {
        match self {
            Expr::Access(a) => visit(a),
            Expr::Literal(_) => {}
            Expr::Neg(e) => e.visit_accesses(visit),
            Expr::Binary { lhs, rhs, .. } => {
                lhs.visit_accesses(visit);
                rhs.visit_accesses(visit);
            }
            Expr::Call { args, .. } => args.iter().for_each(|a| a.visit_accesses(visit)),
            Expr::Reduce { body, .. } => body.visit_accesses(visit),
        }
    }

    fn accesses_mut(&mut self, visit: &mut impl FnMut(&mut Access)) {
        match self {
            Expr::Access(a) => visit(a),
            Expr::Literal(_) => {}
            Expr::Neg(e) => e.accesses_mut(visit),
            Expr::Binary { lhs, rhs, .. } => {
                lhs.accesses_mut(visit);
                rhs.accesses_mut(visit);
            }
            Expr::Call { args, .. } => args.iter_mut().for_each(|a| a.accesses_mut(visit)),
            Expr::Reduce { body, .. } => body.accesses_mut(visit),
        }
    }

    /// Every index variable in text order (repeats included): the indices
    /// of accesses and the variables of `sum(var, ...)`.
    pub(crate) fn visit_vars<'a>(&'a self, visit: &mut impl FnMut(&'a IndexVar)) {
        match self {
            Expr::Access(a) => a.indices.iter().for_each(&mut *visit),
            Expr::Literal(_) => {}
            Expr::Neg(e) => e.visit_vars(visit),
            Expr::Binary { lhs, rhs, .. } => {
                lhs.visit_vars(visit);
                rhs.visit_vars(visit);
            }
            Expr::Call { args, .. } => args.iter().for_each(|a| a.visit_vars(visit)),
            Expr::Reduce { var, body, .. } => {
                visit(var);
                body.visit_vars(visit);
            }
        }
    }

    /// The index variables that occur outside every `sum` binding them, in
    /// first-appearance order, each once.
    pub fn free_vars(&self) -> Vec<IndexVar> {
        let mut out = Distinct::default();
        self.visit_free(&mut Vec::new(), &mut |v| out.add(v));
        out.list
    }

    /// Visits every free occurrence of an index variable, in text order;
    /// `bound` holds the variables of the enclosing sums.
    pub(crate) fn visit_free<'a>(&'a self, bound: &mut Vec<&'a IndexVar>, visit: &mut impl FnMut(&'a IndexVar)) {
        match self {
            Expr::Access(a) => {
                for v in &a.indices {
                    if !bound.contains(&v) {
                        visit(v);
                    }
                }
            }
            Expr::Literal(_) => {}
            Expr::Neg(e) => e.visit_free(bound, visit),
            Expr::Binary { lhs, rhs, .. } => {
                lhs.visit_free(bound, visit);
                rhs.visit_free(bound, visit);
            }
            Expr::Call { args, .. } => args.iter().for_each(|a| a.visit_free(bound, visit)),
            Expr::Reduce { var, body, .. } => {
                bound.push(var);
                body.visit_free(bound, visit);
                bound.pop();
            }
        }
    }

    fn precedence(&self) -> u8 {
        match self {
            Expr::Binary { op, .. } => op.precedence(),
            Expr::Neg(_) => PREC_UNARY,
            Expr::Literal(v) if v.is_sign_negative() && !v.is_nan() => PREC_UNARY,
            Expr::Call { func, .. } if *func == Func::Not => PREC_UNARY,
            Expr::Call { func, .. } => func.infix_precedence().unwrap_or(PREC_ATOM),
            Expr::Access(_) | Expr::Literal(_) | Expr::Reduce { .. } => PREC_ATOM,
        }
    }
}

impl ops::Add for Expr {
    type Output = Expr;
    fn add(self, rhs: Expr) -> Expr {
        Expr::binary(BinaryOp::Add, self, rhs)
    }
}

impl ops::Sub for Expr {
    type Output = Expr;
    fn sub(self, rhs: Expr) -> Expr {
        Expr::binary(BinaryOp::Sub, self, rhs)
    }
}

impl ops::Mul for Expr {
    type Output = Expr;
    fn mul(self, rhs: Expr) -> Expr {
        Expr::binary(BinaryOp::Mul, self, rhs)
    }
}

impl ops::Div for Expr {
    type Output = Expr;
    fn div(self, rhs: Expr) -> Expr {
        Expr::binary(BinaryOp::Div, self, rhs)
    }
}

impl ops::Neg for Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        Expr::Neg(Box::new(self))
    }
}

/// `=` or `+=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AssignOp {
    /// `=`: the result replaces the left tensor's values.
    Assign,
    /// `+=`: the result is added to the left tensor's current values.
    AddAssign,
}

impl AssignOp {
    /// The operator's symbol in the text.
    pub fn symbol(self) -> &'static str {
        match self {
            AssignOp::Assign => "=",
            AssignOp::AddAssign => "+=",
        }
    }
}

/// One statement: `lhs = rhs` or `lhs += rhs`.
#[derive(Clone, Debug, PartialEq)]
pub struct Statement {
    pub lhs: Access,
    pub op: AssignOp,
    pub rhs: Expr,
}

impl Statement {
    /// `lhs = rhs`. Spans are set to positions in the canonical text.
    pub fn assign(lhs: Access, rhs: Expr) -> Statement {
        Statement::built(lhs, AssignOp::Assign, rhs)
    }

    /// `lhs += rhs`. Spans are set to positions in the canonical text.
    pub fn add_assign(lhs: Access, rhs: Expr) -> Statement {
        Statement::built(lhs, AssignOp::AddAssign, rhs)
    }

    fn built(lhs: Access, op: AssignOp, rhs: Expr) -> Statement {
        let mut stmt = Statement { lhs, op, rhs };
        let mut spans = Vec::new();
        let mut text = String::new();
        write_statement(&mut text, &stmt, &mut spans);
        let mut spans = spans.into_iter();
        let mut assign = |a: &mut Access| {
            if let Some(span) = spans.next() {
                a.span = span;
            }
        };
        assign(&mut stmt.lhs);
        stmt.rhs.accesses_mut(&mut assign);
        stmt
    }

    /// Every distinct index variable, in order of first appearance in the
    /// text (left side first, then the right side, `sum` variables included).
    pub fn index_vars(&self) -> Vec<IndexVar> {
        let mut out = Distinct::default();
        self.lhs.indices.iter().for_each(|v| out.add(v));
        self.rhs.visit_vars(&mut |v| out.add(v));
        out.list
    }

    /// The index variables that occur on the right but not on the left, in
    /// order of first appearance: the ones summed over.
    pub fn summed_vars(&self) -> Vec<IndexVar> {
        let mut out = Distinct::default();
        self.lhs.indices.iter().for_each(|v| {
            out.seen.insert(v);
        });
        self.rhs.visit_vars(&mut |v| out.add(v));
        out.list
    }
}

/// Distinct variables in order of first appearance (hashed, so that huge
/// statements stay linear).
#[derive(Default)]
struct Distinct<'a> {
    seen: HashSet<&'a IndexVar>,
    list: Vec<IndexVar>,
}

impl<'a> Distinct<'a> {
    fn add(&mut self, v: &'a IndexVar) {
        if self.seen.insert(v) {
            self.list.push(v.clone());
        }
    }
}

const PREC_ADD: u8 = 4;
const PREC_MUL: u8 = 5;
const PREC_UNARY: u8 = 6;
const PREC_ATOM: u8 = 7;

/// Writes canonical text, recording the span of every access in text order.
fn write_statement(out: &mut String, stmt: &Statement, spans: &mut Vec<Span>) {
    write_access(out, &stmt.lhs, spans);
    out.push(' ');
    out.push_str(stmt.op.symbol());
    out.push(' ');
    write_expr(out, &stmt.rhs, 0, spans);
}

fn write_access(out: &mut String, a: &Access, spans: &mut Vec<Span>) {
    let start = out.len();
    out.push_str(&a.tensor);
    if !a.indices.is_empty() {
        out.push('(');
        for (k, v) in a.indices.iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            out.push_str(&v.0);
        }
        out.push(')');
    }
    spans.push(Span::new(start, out.len()));
}

/// Writes `e`, parenthesized when it binds less tightly than `min_prec`
/// requires.
fn write_expr(out: &mut String, e: &Expr, min_prec: u8, spans: &mut Vec<Span>) {
    let parens = e.precedence() < min_prec;
    if parens {
        out.push('(');
    }
    match e {
        Expr::Access(a) => write_access(out, a, spans),
        Expr::Literal(v) => write_number(out, *v),
        Expr::Neg(x) => {
            out.push('-');
            write_expr(out, x, PREC_UNARY, spans);
        }
        Expr::Binary { op, lhs, rhs } => {
            let p = op.precedence();
            // Left-associative: a right operand of equal precedence needs
            // parentheses to keep its grouping.
            write_expr(out, lhs, p, spans);
            out.push(' ');
            out.push_str(op.symbol());
            out.push(' ');
            write_expr(out, rhs, p + 1, spans);
        }
        Expr::Call { func, args } => write_call(out, *func, args, spans),
        Expr::Reduce { op, var, body } => {
            out.push_str(op.name());
            out.push('(');
            out.push_str(&var.0);
            out.push_str(", ");
            write_expr(out, body, 0, spans);
            out.push(')');
        }
    }
    if parens {
        out.push(')');
    }
}

/// Writes a call `f(a, b)`, a prefix `!a` or an infix `a < b`.
fn write_call(out: &mut String, func: Func, args: &[Expr], spans: &mut Vec<Span>) {
    if func == Func::Not {
        out.push('!');
        write_expr(out, &args[0], PREC_UNARY, spans);
    } else if let Some(p) = func.infix_precedence() {
        write_expr(out, &args[0], p, spans);
        out.push(' ');
        out.push_str(func.name());
        out.push(' ');
        write_expr(out, &args[1], p + 1, spans);
    } else {
        out.push_str(func.name());
        out.push('(');
        for (k, a) in args.iter().enumerate() {
            if k > 0 {
                out.push_str(", ");
            }
            // A first argument that is a bare name used as an index
            // variable by the second would read as a reduction over it.
            let bare = k == 0 && args.len() == 2 && is_bare_var_of(a, &args[1]);
            write_expr(out, a, if bare { PREC_ATOM + 1 } else { 0 }, spans);
        }
        out.push(')');
    }
}

/// Whether `a` is a scalar access whose name `rest` uses as an index
/// variable.
fn is_bare_var_of(a: &Expr, rest: &Expr) -> bool {
    let Expr::Access(access) = a else { return false };
    let mut found = false;
    rest.visit_vars(&mut |v| found |= access.indices.is_empty() && v.0 == access.tensor);
    found
}

/// The shortest text that parses back to `v`: plain decimals for ordinary
/// magnitudes, exponent notation for very small or large ones. Non-finite
/// values print as `inf`/`NaN`, which do not parse.
fn write_number(out: &mut String, v: f64) {
    use std::fmt::Write;
    let a = v.abs();
    let plain = v == 0.0 || (1e-5..1e16).contains(&a);
    // Writing to a String cannot fail.
    let _ = if plain {
        write!(out, "{v}")
    } else {
        write!(out, "{v:e}")
    };
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        write_expr(&mut s, self, 0, &mut Vec::new());
        f.write_str(&s)
    }
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        write_access(&mut s, self, &mut Vec::new());
        f.write_str(&s)
    }
}

impl fmt::Display for Statement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        write_statement(&mut s, self, &mut Vec::new());
        f.write_str(&s)
    }
}

impl std::str::FromStr for Statement {
    type Err = crate::error::EngineError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        super::parse::parse_statement(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_statement_spans_point_into_its_canonical_text() {
        let s = Statement::assign(
            Access::new("y", &["i"]),
            Expr::access("A", &["i", "j"]) * Expr::access("x", &["j"]),
        );
        let text = s.to_string();
        assert_eq!(text, "y(i) = A(i,j) * x(j)");
        let spans: Vec<Span> = std::iter::once(s.lhs.span)
            .chain(s.rhs.accesses().iter().map(|a| a.span))
            .collect();
        let pieces: Vec<&str> = spans.iter().map(|s| &text[s.start..s.end]).collect();
        assert_eq!(pieces, ["y(i)", "A(i,j)", "x(j)"]);
    }

    #[test]
    fn numbers_print_in_their_shortest_round_trip_form() {
        let text = |v: f64| Expr::Literal(v).to_string();
        assert_eq!(text(2.0), "2");
        assert_eq!(text(0.5), "0.5");
        assert_eq!(text(1e-3), "0.001");
        assert_eq!(text(1e-7), "1e-7");
        assert_eq!(text(1e300), "1e300");
        assert_eq!(text(0.1 + 0.2), "0.30000000000000004");
    }

    #[test]
    fn negative_literals_are_built_as_negation() {
        assert_eq!(Expr::lit(-2.0), -Expr::lit(2.0));
        assert_eq!(Expr::lit(-2.0).to_string(), "-2");
    }
}
