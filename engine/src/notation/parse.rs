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
            '=' => Some(Tok::Assign),
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
        if self.lexer.slice(name) == "sum" {
            return Err(reserved_sum(name.column));
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
                                return Err(syntax(
                                    t.column,
                                    format!("expected an index variable after ',', found {}", self.found(t)),
                                ));
                            }
                        }
                        Tok::RParen => {
                            end = sep.end;
                            break;
                        }
                        _ => {
                            return Err(syntax(
                                sep.column,
                                format!("expected ')' or ',' after index variable, found {}", self.found(sep)),
                            ))
                        }
                    }
                },
                _ => {
                    return Err(syntax(
                        t.column,
                        format!("expected an index variable or ')', found {}", self.found(t)),
                    ))
                }
            }
        }
        Ok(Access {
            tensor,
            indices,
            span: Span::new(name.start, end),
        })
    }

    fn expr(&mut self, depth: usize) -> Result<Sub> {
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
        let t = self.lexer.peek()?;
        if t.tok == Tok::Minus {
            self.lexer.next()?;
            let depth = deeper(depth, t.column)?;
            let (e, h) = self.unary(depth)?;
            return Ok((-e, deeper(h, t.column)?));
        }
        self.atom(depth)
    }

    fn atom(&mut self, depth: usize) -> Result<Sub> {
        let t = self.lexer.next()?;
        match t.tok {
            Tok::Number(v) => Ok((Expr::Literal(v), 1)),
            Tok::Ident if self.lexer.slice(t) == "sum" => self.sum(t, depth),
            Tok::Ident => Ok((Expr::Access(self.access_rest(t)?), 1)),
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
                    "expected an operand (a number, a tensor access, sum(...) or '('), found {}",
                    self.found(t)
                ),
            )),
        }
    }

    /// `sum(var, expr)`, after the keyword `kw`.
    fn sum(&mut self, kw: Token, depth: usize) -> Result<Sub> {
        let open = self.lexer.next()?;
        if open.tok != Tok::LParen {
            return Err(reserved_sum(kw.column));
        }
        let depth = deeper(depth, kw.column)?;
        let var = self.lexer.next()?;
        if var.tok != Tok::Ident {
            return Err(syntax(
                var.column,
                format!("expected an index variable after 'sum(', found {}", self.found(var)),
            ));
        }
        let comma = self.lexer.next()?;
        if comma.tok != Tok::Comma {
            return Err(syntax(
                comma.column,
                format!(
                    "expected ',' after the index variable of sum, found {}",
                    self.found(comma)
                ),
            ));
        }
        let (body, h) = self.expr(depth)?;
        let close = self.lexer.next()?;
        if close.tok != Tok::RParen {
            return Err(syntax(
                close.column,
                format!(
                    "expected ')' to close the 'sum(' at column {}, found {}",
                    kw.column,
                    self.found(close)
                ),
            ));
        }
        let sum = Expr::Sum {
            var: IndexVar::new(self.lexer.slice(var)),
            body: Box::new(body),
        };
        Ok((sum, deeper(h, kw.column)?))
    }
}

fn reserved_sum(column: usize) -> EngineError {
    syntax(
        column,
        "'sum' is reserved for sums, sum(var, expr); it cannot name a tensor",
    )
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
