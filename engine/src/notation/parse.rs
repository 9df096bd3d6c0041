//! The parser: statement text → [`Statement`], the first stage of the
//! pipeline.
//!
//! Input: text such as `y(i) = A(i,j) * x(j) + b(i)`. Output: the IR of
//! [`super::ir`], or an [`EngineError::Syntax`] with the 1-based character
//! column of the first offending character and what was expected there.
//! The next stage is [`check`](super::check::check).
//!
//! Grammar (whitespace allowed between any two tokens):
//! ```text
//! stmt   := access ('=' | '+=') expr
//! expr   := term (('+' | '-') term)*
//! term   := unary (('*' | '/') unary)*
//! unary  := '-' unary | atom
//! atom   := number | access | '(' expr ')' | 'sum' '(' ident ',' expr ')'
//! access := ident [ '(' [ident (',' ident)*] ')' ]
//! ident  := [A-Za-z_][A-Za-z0-9_]*
//! number := (digits ['.' digits*] | '.' digits) [('e'|'E') ['+'|'-'] digits]
//! ```
//! `sum` is a keyword: it cannot name a tensor. A bare name `a` and `a()`
//! are both scalar accesses. Statements are ASCII; any other character is
//! an error. Accesses have at most [`MAX_ORDER`] index variables, and
//! expressions nest at most [`MAX_DEPTH`] levels (each parenthesis, unary
//! minus, `sum` and binary operator is a level, so a chain `a + b + c`
//! counts two): deeper text is refused, so that no pass over the IR can
//! overflow the stack.

use super::func::{Func, Reduction, FUNCTIONS};
use super::ir::{Access, AssignOp, BinaryOp, Expr, IndexVar, Span, Statement, MAX_ORDER};
use crate::error::{EngineError, Result};

/// The deepest nesting the parser accepts.
pub const MAX_DEPTH: usize = 256;

/// Parses one statement.
///
/// ```
/// use tessera_engine::notation::{parse_statement, Expr, Statement, Access};
/// let stmt = parse_statement("y(i) = A(i,j) * x(j) + b(i)").unwrap();
/// let built = Statement::assign(
///     Access::new("y", &["i"]),
///     Expr::access("A", &["i", "j"]) * Expr::access("x", &["j"]) + Expr::access("b", &["i"]),
/// );
/// assert_eq!(stmt, built);
/// assert_eq!(stmt.to_string(), "y(i) = A(i,j) * x(j) + b(i)");
///
/// let err = parse_statement("y(i) = A(i,j * x(j)").unwrap_err();
/// assert_eq!(err.to_string(), "column 14: expected ')' or ',' after index variable, found '*'");
/// ```
pub fn parse_statement(text: &str) -> Result<Statement> {
    let mut p = Parser {
        pending: None,
        lexer: Lexer::new(text),
    };
    p.statement()
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Tok {
    Ident,
    Number(f64),
    LParen,
    RParen,
    Comma,
    Plus,
    Minus,
    Star,
    Slash,
    /// A comparison or logical operator: `<`, `<=`, `>`, `>=`, `==`, `!=`,
    /// `&&`, `||`.
    Infix(Func),
    Bang,
    Assign,
    AddAssign,
    End,
}

/// A token: its kind, byte range and 1-based character column.
#[derive(Clone, Copy, Debug)]
struct Token {
    tok: Tok,
    start: usize,
    end: usize,
    column: usize,
}

/// Produces tokens on demand, so that errors are reported in text order.
struct Lexer<'a> {
    text: &'a str,
    /// Byte offset of the next unread character.
    pos: usize,
    /// 1-based character column of `pos`.
    column: usize,
    peeked: Option<Token>,
}

fn syntax(column: usize, message: impl Into<String>) -> EngineError {
    EngineError::Syntax {
        column,
        message: message.into(),
    }
}

impl<'a> Lexer<'a> {
    fn new(text: &'a str) -> Self {
        Lexer {
            text,
            pos: 0,
            column: 1,
            peeked: None,
        }
    }

    fn peek(&mut self) -> Result<Token> {
        match self.peeked {
            Some(t) => Ok(t),
            None => {
                let t = self.lex()?;
                self.peeked = Some(t);
                Ok(t)
            }
        }
    }

    fn next(&mut self) -> Result<Token> {
        let t = self.peek()?;
        self.peeked = None;
        Ok(t)
    }

    /// The text of a token (tokens are ASCII, so byte slicing is exact).
    fn slice(&self, t: Token) -> &'a str {
        self.text.get(t.start..t.end).unwrap_or("")
    }

    /// How an error message names a token.
    fn describe(&self, t: Token) -> String {
        match t.tok {
            Tok::Ident => format!("identifier '{}'", self.slice(t)),
            Tok::Number(_) => format!("number {}", self.slice(t)),
            Tok::End => "end of input".to_owned(),
            _ => format!("'{}'", self.slice(t)),
        }
    }

    fn byte_at(&self, pos: usize) -> Option<u8> {
        self.text.as_bytes().get(pos).copied()
    }

    /// Advances over ASCII bytes (one column each).
    fn advance(&mut self, bytes: usize) {
        self.pos += bytes;
        self.column += bytes;
    }

    fn lex(&mut self) -> Result<Token> {
        while self.byte_at(self.pos).is_some_and(|b| b.is_ascii_whitespace()) {
            self.advance(1);
        }
        let start = self.pos;
        let column = self.column;
        let token = |tok, end| Token {
            tok,
            start,
            end,
            column,
        };
        let Some(c) = self.text.get(start..).and_then(|rest| rest.chars().next()) else {
            return Ok(token(Tok::End, start));
        };
        if !c.is_ascii() {
            let what = if c.is_whitespace() {
                format!("non-ASCII space U+{:04X}", u32::from(c))
            } else {
                format!("non-ASCII character '{c}'")
            };
            return Err(syntax(
                column,
                format!("unexpected {what}: statements are written in ASCII"),
            ));
        }
        let single = match c {
            '(' => Some(Tok::LParen),
            ')' => Some(Tok::RParen),
            ',' => Some(Tok::Comma),
            '-' => Some(Tok::Minus),
            '*' => Some(Tok::Star),
            '/' => Some(Tok::Slash),
            '=' | '<' | '>' | '!' | '&' | '|' => {
                let next = self.byte_at(start + 1);
                let (tok, len) = match (c, next) {
                    ('=', Some(b'=')) => (Tok::Infix(Func::Eq), 2),
                    ('=', _) => (Tok::Assign, 1),
                    ('<', Some(b'=')) => (Tok::Infix(Func::Le), 2),
                    ('<', _) => (Tok::Infix(Func::Lt), 1),
                    ('>', Some(b'=')) => (Tok::Infix(Func::Ge), 2),
                    ('>', _) => (Tok::Infix(Func::Gt), 1),
                    ('!', Some(b'=')) => (Tok::Infix(Func::Ne), 2),
                    ('!', _) => (Tok::Bang, 1),
                    ('&', Some(b'&')) => (Tok::Infix(Func::And), 2),
                    ('|', Some(b'|')) => (Tok::Infix(Func::Or), 2),
                    _ => {
                        return Err(syntax(
                            column,
                            format!("unexpected character '{c}' (did you mean '{c}{c}'?)"),
                        ))
                    }
                };
                self.advance(len);
                return Ok(token(tok, self.pos));
            }
            '+' if self.byte_at(start + 1) == Some(b'=') => {
                self.advance(2);
                return Ok(token(Tok::AddAssign, self.pos));
            }
            '+' => Some(Tok::Plus),
            _ => None,
        };
        if let Some(tok) = single {
            self.advance(1);
            return Ok(token(tok, self.pos));
        }
        if c.is_ascii_alphabetic() || c == '_' {
            self.skip_while(|b| b.is_ascii_alphanumeric() || b == b'_');
            return Ok(token(Tok::Ident, self.pos));
        }
        if c.is_ascii_digit() || (c == '.' && self.byte_at(start + 1).is_some_and(|b| b.is_ascii_digit())) {
            return self.number(start, column);
        }
        let shown = c.escape_debug();
        Err(syntax(column, format!("unexpected character '{shown}'")))
    }

    fn skip_while(&mut self, keep: impl Fn(u8) -> bool) {
        while self.byte_at(self.pos).is_some_and(&keep) {
            self.advance(1);
        }
    }

    fn number(&mut self, start: usize, column: usize) -> Result<Token> {
        let digit = |b: u8| b.is_ascii_digit();
        self.skip_while(digit);
        if self.byte_at(self.pos) == Some(b'.') {
            self.advance(1);
            self.skip_while(digit);
        }
        if matches!(self.byte_at(self.pos), Some(b'e' | b'E')) {
            self.advance(1);
            if matches!(self.byte_at(self.pos), Some(b'+' | b'-')) {
                self.advance(1);
            }
            if !self.byte_at(self.pos).is_some_and(digit) {
                let found = match self.text.get(self.pos..).and_then(|r| r.chars().next()) {
                    Some(c) => format!("'{}'", c.escape_debug()),
                    None => "end of input".to_owned(),
                };
                return Err(syntax(
                    self.column,
                    format!("expected a digit in the exponent of a number, found {found}"),
                ));
            }
            self.skip_while(digit);
        }
        let text = self.text.get(start..self.pos).unwrap_or("");
        match text.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(Token {
                tok: Tok::Number(v),
                start,
                end: self.pos,
                column,
            }),
            Ok(_) => Err(syntax(column, format!("number {text} is too large for f64"))),
            Err(e) => Err(syntax(column, format!("malformed number {text}: {e}"))),
        }
    }
}

struct Parser<'a> {
    lexer: Lexer<'a>,
    /// An operand already read (a call's first argument, once it is known
    /// not to stand alone), which the next `atom` returns.
    pending: Option<Sub>,
}

/// An expression and the height of its tree.
type Sub = (Expr, usize);

impl Parser<'_> {
    fn found(&self, t: Token) -> String {
        self.lexer.describe(t)
    }

    fn statement(&mut self) -> Result<Statement> {
        let first = self.lexer.peek()?;
        let lhs = match first.tok {
            Tok::Ident => self.access_or_sum_keyword()?,
            Tok::End => {
                return Err(syntax(
                    first.column,
                    "expected a statement such as y(i) = A(i,j) * x(j), found end of input",
                ))
            }
            _ => {
                return Err(syntax(
                    first.column,
                    format!("the left side must be a tensor access, found {}", self.found(first)),
                ))
            }
        };
        let t = self.lexer.next()?;
        let op = match t.tok {
            Tok::Assign => AssignOp::Assign,
            Tok::AddAssign => AssignOp::AddAssign,
            Tok::Infix(Func::Eq) => {
                return Err(syntax(
                    t.column,
                    "expected '=' or '+=' after the left side, found '==' (a comparison; assignment is '=')",
                ))
            }
            _ => {
                return Err(syntax(
                    t.column,
                    format!("expected '=' or '+=' after the left side, found {}", self.found(t)),
                ))
            }
        };
        let after = self.lexer.peek()?;
        if op == AssignOp::Assign && after.tok == Tok::Plus && after.start == t.end {
            return Err(syntax(
                after.column,
                "expected an operand after '=', found '+' (did you mean '+='?)",
            ));
        }
        let (rhs, _) = self.expr(0)?;
        let t = self.lexer.peek()?;
        match t.tok {
            Tok::End => Ok(Statement { lhs, op, rhs }),
            Tok::RParen => Err(syntax(t.column, "found ')' with no matching '('")),
            _ => Err(syntax(
                t.column,
                format!(
                    "expected an operator ('+', '-', '*', '/') or end of input, found {}",
                    self.found(t)
                ),
            )),
        }
    }

    /// An access on the left side, where `sum` is refused.
    fn access_or_sum_keyword(&mut self) -> Result<Access> {
        let name = self.lexer.next()?;
        if let Some(e) = reserved(self.lexer.slice(name), name.column) {
            return Err(e);
        }
        self.access_rest(name)
    }

    /// The rest of an access whose name token `name` was just read.
    fn access_rest(&mut self, name: Token) -> Result<Access> {
        let tensor = self.lexer.slice(name).to_owned();
        let mut indices = Vec::new();
        let mut end = name.end;
        if self.lexer.peek()?.tok == Tok::LParen {
            self.lexer.next()?;
            let mut t = self.lexer.next()?;
            match t.tok {
                Tok::RParen => end = t.end,
                Tok::Ident => loop {
                    if indices.len() == MAX_ORDER {
                        return Err(syntax(
                            t.column,
                            format!(
                                "{tensor} is accessed with more than {MAX_ORDER} index variables (tensors have order 0 to {MAX_ORDER})"
                            ),
                        ));
                    }
                    indices.push(IndexVar::new(self.lexer.slice(t)));
                    let sep = self.lexer.next()?;
                    match sep.tok {
                        Tok::Comma => {
                            t = self.lexer.next()?;
                            if t.tok != Tok::Ident {
                                return Err(self.not_an_index(name, t, "expected an index variable after ','"));
                            }
                        }
                        Tok::RParen => {
                            end = sep.end;
                            break;
                        }
                        _ => return Err(self.not_an_index(name, sep, "expected ')' or ',' after index variable")),
                    }
                },
                _ => return Err(self.not_an_index(name, t, "expected an index variable or ')'")),
            }
        }
        Ok(Access {
            tensor,
            indices,
            span: Span::new(name.start, end),
        })
    }

    /// An expression: `||` binds loosest, then `&&`, then comparisons,
    /// then `+ -`, then `* /`, then the prefix `-` and `!`.
    fn expr(&mut self, depth: usize) -> Result<Sub> {
        self.infix(depth, 1)
    }

    /// The infix level `level` (1 `||`, 2 `&&`, 3 comparisons) and below.
    fn infix(&mut self, depth: usize, level: u8) -> Result<Sub> {
        if level > 3 {
            return self.additive(depth);
        }
        let (mut lhs, mut height) = self.infix(depth, level + 1)?;
        loop {
            let t = self.lexer.peek()?;
            let func = match t.tok {
                Tok::Infix(f) if f.infix_precedence() == Some(level) => f,
                _ => return Ok((lhs, height)),
            };
            self.lexer.next()?;
            let (rhs, h) = self.infix(depth, level + 1)?;
            height = deeper(height.max(h), t.column)?;
            lhs = Expr::call(func, vec![lhs, rhs]);
        }
    }

    fn additive(&mut self, depth: usize) -> Result<Sub> {
        let (mut lhs, mut height) = self.term(depth)?;
        loop {
            let t = self.lexer.peek()?;
            let op = match t.tok {
                Tok::Plus => BinaryOp::Add,
                Tok::Minus => BinaryOp::Sub,
                _ => return Ok((lhs, height)),
            };
            self.lexer.next()?;
            let (rhs, h) = self.term(depth)?;
            height = deeper(height.max(h), t.column)?;
            lhs = Expr::binary(op, lhs, rhs);
        }
    }

    fn term(&mut self, depth: usize) -> Result<Sub> {
        let (mut lhs, mut height) = self.unary(depth)?;
        loop {
            let t = self.lexer.peek()?;
            let op = match t.tok {
                Tok::Star => BinaryOp::Mul,
                Tok::Slash => BinaryOp::Div,
                _ => return Ok((lhs, height)),
            };
            self.lexer.next()?;
            let (rhs, h) = self.unary(depth)?;
            height = deeper(height.max(h), t.column)?;
            lhs = Expr::binary(op, lhs, rhs);
        }
    }

    fn unary(&mut self, depth: usize) -> Result<Sub> {
        if self.pending.is_some() {
            return self.atom(depth);
        }
        let t = self.lexer.peek()?;
        if t.tok == Tok::Minus {
            self.lexer.next()?;
            let depth = deeper(depth, t.column)?;
            let (e, h) = self.unary(depth)?;
            return Ok((-e, deeper(h, t.column)?));
        }
        if t.tok == Tok::Bang {
            self.lexer.next()?;
            let depth = deeper(depth, t.column)?;
            let (e, h) = self.unary(depth)?;
            return Ok((Expr::call(Func::Not, vec![e]), deeper(h, t.column)?));
        }
        self.atom(depth)
    }

    fn atom(&mut self, depth: usize) -> Result<Sub> {
        if let Some(read) = self.pending.take() {
            return Ok(read);
        }
        let t = self.lexer.next()?;
        match t.tok {
            Tok::Number(v) => Ok((Expr::Literal(v), 1)),
            Tok::Ident => self.ident_atom(t, depth),
            Tok::LParen => {
                let (e, h) = self.expr(deeper(depth, t.column)?)?;
                let close = self.lexer.next()?;
                if close.tok != Tok::RParen {
                    return Err(syntax(
                        close.column,
                        format!(
                            "expected ')' to close the '(' at column {}, found {}",
                            t.column,
                            self.found(close)
                        ),
                    ));
                }
                Ok((e, h))
            }
            _ => Err(syntax(
                t.column,
                format!(
                    "expected an operand (a number, a tensor access, a call such as sqrt(...) or sum(...), or '('), found {}",
                    self.found(t)
                ),
            )),
        }
    }

    /// A call after the name `kw`: a function, `sqrt(e)` or `max(a, b)`,
    /// or a reduction, `sum(j, e)` or `min(j, e)`. `min` and `max` are
    /// reductions when their first argument is a bare name that the second
    /// uses as an index variable.
    fn call(&mut self, kw: Token, depth: usize) -> Result<Sub> {
        let name = self.lexer.slice(kw);
        let open = self.lexer.next()?;
        if open.tok != Tok::LParen {
            return Err(reserved(name, kw.column).expect("a reserved name"));
        }
        let depth = deeper(depth, kw.column)?;
        let func = Func::from_name(name);
        let reduction = Reduction::from_name(name);
        let first_token = self.lexer.peek()?;
        let mut args = Vec::new();
        let mut height = 0;
        // A name alone before ',' is a reduction's variable (any name, a
        // reserved one too) or a scalar tensor: read it apart.
        let mut bare_var = None;
        if first_token.tok == Tok::Ident {
            self.lexer.next()?;
            if self.lexer.peek()?.tok == Tok::Comma {
                bare_var = Some(IndexVar::new(self.lexer.slice(first_token)));
            } else {
                self.pending = Some(self.ident_atom(first_token, depth)?);
            }
        }
        loop {
            let (arg, h) = match (&bare_var, args.is_empty()) {
                (Some(var), true) => (
                    Expr::Access(Access {
                        tensor: var.0.clone(),
                        indices: Vec::new(),
                        span: Span::new(first_token.start, first_token.end),
                    }),
                    1,
                ),
                _ => self.expr(depth)?,
            };
            args.push(arg);
            height = height.max(h);
            let sep = self.lexer.next()?;
            match sep.tok {
                Tok::Comma => continue,
                Tok::RParen => break,
                _ if args.len() == 1 && func.is_none() => {
                    return Err(syntax(
                        sep.column,
                        format!(
                            "expected ',' after the index variable of {name}, found {}",
                            self.found(sep)
                        ),
                    ))
                }
                _ => {
                    let most = func.map_or(2, Func::arity);
                    let expected = if args.len() >= most { "')'" } else { "',' or ')'" };
                    return Err(syntax(
                        sep.column,
                        format!(
                            "expected {expected} to close the '{name}(' at column {}, found {}",
                            kw.column,
                            self.found(sep)
                        ),
                    ));
                }
            }
        }
        if let Some(op) = reduction {
            let used = |var: &IndexVar| {
                let mut found = false;
                if let Some(body) = args.get(1) {
                    body.visit_vars(&mut |v| found |= v == var);
                }
                found
            };
            let is_reduction = match (&bare_var, func) {
                (Some(var), Some(_)) => args.len() == 2 && used(var),
                (_, None) => true,
                (None, Some(_)) => false,
            };
            if is_reduction {
                let Some(var) = bare_var else {
                    return Err(syntax(
                        first_token.column,
                        format!(
                            "expected an index variable after '{name}(', found {}",
                            self.found(first_token)
                        ),
                    ));
                };
                if args.len() != 2 {
                    return Err(syntax(
                        kw.column,
                        format!("{name} takes an index variable and an expression, {name}(j, expr)"),
                    ));
                }
                let body = args.pop().expect("two arguments");
                return Ok((
                    Expr::Reduce {
                        op,
                        var,
                        body: Box::new(body),
                    },
                    deeper(height, kw.column)?,
                ));
            }
        }
        let func = func.expect("a reserved name is a function or a reduction");
        if let Some(e) = bare_var.and_then(|v| reserved(&v.0, first_token.column)) {
            return Err(e);
        }
        if args.len() != func.arity() {
            let wanted = match func.arity() {
                1 => "one argument".to_string(),
                n => format!("{n} arguments"),
            };
            return Err(syntax(
                kw.column,
                format!("{name} takes {wanted}, found {}", args.len()),
            ));
        }
        Ok((Expr::call(func, args), deeper(height, kw.column)?))
    }

    /// The operand that starts with the name `t`: a call or an access.
    fn ident_atom(&mut self, t: Token, depth: usize) -> Result<Sub> {
        if is_reserved(self.lexer.slice(t)) {
            self.call(t, depth)
        } else {
            Ok((Expr::Access(self.access_rest(t)?), 1))
        }
    }

    /// The error for a name followed by `(` and something that is not an
    /// index variable: an unknown function, or a malformed access.
    fn not_an_index(&self, name: Token, found: Token, expected: &str) -> EngineError {
        let tensor = self.lexer.slice(name);
        let near = nearest_function(tensor);
        // `foo(b(i))`, `foo(!a)`: an expression where indices go.
        let looks_like_call = matches!(found.tok, Tok::LParen | Tok::Bang);
        if looks_like_call {
            let hint = match near {
                Some(near) => format!("did you mean '{near}'?"),
                None => "`tessera eval --help` lists the functions".to_string(),
            };
            return syntax(name.column, format!("unknown function '{tensor}' ({hint})"));
        }
        syntax(found.column, format!("{expected}, found {}", self.found(found)))
    }
}

/// Whether `name` is a function or reduction, and so cannot name a tensor.
fn is_reserved(name: &str) -> bool {
    Func::from_name(name).is_some() || Reduction::from_name(name).is_some()
}

/// The error for a reserved name used as a tensor.
fn reserved(name: &str, column: usize) -> Option<EngineError> {
    let what = if Reduction::from_name(name).is_some() && Func::from_name(name).is_none() {
        format!("'{name}' is reserved for reductions, {name}(var, expr)")
    } else if is_reserved(name) {
        format!("'{name}' is a function, {name}(...)")
    } else {
        return None;
    };
    Some(syntax(column, format!("{what}; it cannot name a tensor")))
}

/// The function or reduction whose name is nearest `name`, if any is
/// near enough to be a typo of it.
fn nearest_function(name: &str) -> Option<&'static str> {
    let names = FUNCTIONS
        .into_iter()
        .filter(|f| f.is_called())
        .map(Func::name)
        .chain(super::func::REDUCTIONS.into_iter().map(Reduction::name));
    names
        .map(|n| (strsim::levenshtein(n, name), n))
        .filter(|&(d, n)| d <= 2 && d < n.len())
        .min()
        .map(|(_, n)| n)
}

/// One more level of nesting, refused beyond [`MAX_DEPTH`].
fn deeper(depth: usize, column: usize) -> Result<usize> {
    if depth >= MAX_DEPTH {
        return Err(syntax(
            column,
            format!("the expression nests more than {MAX_DEPTH} levels deep"),
        ));
    }
    Ok(depth + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(text: &str) -> usize {
        match parse_statement(text) {
            Err(EngineError::Syntax { column, .. }) => column,
            other => panic!("{text:?} gave {other:?}"),
        }
    }

    #[test]
    fn numbers_in_every_accepted_form_parse_to_their_value() {
        for (text, v) in [
            ("2", 2.0),
            ("0.5", 0.5),
            ("1e-3", 1e-3),
            (".5", 0.5),
            ("1.", 1.0),
            ("2E+2", 200.0),
        ] {
            let s = parse_statement(&format!("a = {text}")).unwrap();
            assert_eq!(s.rhs, Expr::Literal(v), "{text}");
        }
    }

    #[test]
    fn malformed_numbers_are_refused_where_they_go_wrong() {
        assert_eq!(column("a = 1e"), 7);
        assert_eq!(column("a = 1e+x"), 8);
        assert_eq!(column("a = 1e999"), 5);
        assert_eq!(column("a = ."), 5);
    }

    #[test]
    fn left_deep_chains_count_toward_the_depth_limit() {
        let ok = format!("a = b{}", " + b".repeat(MAX_DEPTH - 1));
        assert!(parse_statement(&ok).is_ok());
        let too_deep = format!("a = b{}", " + b".repeat(MAX_DEPTH));
        assert!(parse_statement(&too_deep).is_err());
    }
}
