//! A sum into a dense output computed term by term.
//!
//! `C(i,j) = A(i,j) + B(i,j)` merges `A` and `B` in one loop nest, which
//! needs both to give their coordinates in one order. Two ELL matrices
//! cannot (a slot is the tensor's own variable: `A`'s third slot of a row
//! and `B`'s are different columns), nor unordered COO beside anything,
//! nor DIA beside CSR; merged, they are converted first. A dense output
//! needs no merge: it is located at any coordinate, so `C += A` then
//! `C += B`, each term by the loops its own formats want, gives the same
//! sum (TACO's sequence statement, `C = A; C += B`). The lowering takes
//! it when it converts fewer tensors than the merged nest.

use tessera_formats::{Format, ValueType};

use super::derived::Provenance;
use super::{Cin, CinExpr, LoopVar, Lowered, OutputAssembly, Relation, Target, TempId};
use crate::notation::{AssignOp, BinaryOp, Expr, Reduction, Statement};

/// The statements `C = term` for each term of `stmt`'s sum, with the sums
/// outside it around each, or `None` when its right side is not a sum or
/// difference of terms that each use every summed variable (a term
/// without one would be added once per coordinate of it).
///
/// `stmt` has its sums placed and named apart; `C += e` is `C = C + e`.
pub(super) fn term_statements(stmt: &Statement, sums: &[LoopVar], body: &Expr) -> Option<Vec<Statement>> {
    let mut terms = Vec::new();
    signed_terms(body.clone(), false, &mut terms);
    if terms.len() < 2 {
        return None;
    }
    terms
        .into_iter()
        .map(|term| {
            let mut used: Vec<&str> = Vec::new();
            term.visit_free(&mut Vec::new(), &mut |v| used.push(v.as_str()));
            if !sums.iter().all(|v| used.contains(&v.name())) {
                return None;
            }
            let rhs = sums.iter().rev().fold(term, |body, v| Expr::Reduce {
                op: Reduction::Sum,
                var: match v {
                    LoopVar::Index(var) => var.clone(),
                    LoopVar::Derived { .. } => unreachable!("a statement sums its own variables"),
                },
                body: Box::new(body),
            });
            Some(Statement {
                lhs: stmt.lhs.clone(),
                op: AssignOp::Assign,
                rhs,
            })
        })
        .collect()
}

/// Whether each term reads a tensor that is not dense and no two terms
/// read the same one: then merging them at every coordinate saves no
/// walk, while each term alone runs the loops (and block ops) of one
/// sparse tensor. Dense tensors are located, not walked, and may be
/// shared (`A(i,j) * x(j) + B(i,j) * x(j)`).
pub(super) fn sparse_apart(terms: &[Statement], format: &dyn Fn(&str) -> Option<Format>) -> bool {
    let mut seen: Vec<&str> = Vec::new();
    terms.iter().all(|term| {
        let mut sparse: Vec<&str> = term
            .rhs
            .accesses()
            .into_iter()
            .map(|a| a.tensor.as_str())
            .filter(|name| format(name).is_some_and(|f| !f.is_dense()))
            .collect();
        sparse.sort_unstable();
        sparse.dedup();
        let fresh = !sparse.is_empty() && sparse.iter().all(|name| !seen.contains(name));
        seen.extend(sparse);
        fresh
    })
}

/// The terms of `e` as a sum, each negated when `negate` (a difference's
/// right side, a negated sum).
fn signed_terms(e: Expr, negate: bool, out: &mut Vec<Expr>) {
    match e {
        Expr::Binary {
            op: BinaryOp::Add,
            lhs,
            rhs,
        } => {
            signed_terms(*lhs, negate, out);
            signed_terms(*rhs, negate, out);
        }
        Expr::Binary {
            op: BinaryOp::Sub,
            lhs,
            rhs,
        } => {
            signed_terms(*lhs, negate, out);
            signed_terms(*rhs, !negate, out);
        }
        Expr::Neg(inner) => signed_terms(*inner, !negate, out),
        term if negate => out.push(Expr::Neg(Box::new(term))),
        term => out.push(term),
    }
}

/// The terms' lowerings as one: their loop nests in sequence, their
/// operands, temporaries and loop variables numbered one after another.
/// `None` when two terms split a variable into blocks of different sizes
/// (one loop variable cannot recover both).
pub(super) fn joined(parts: Vec<Lowered>, mut notes: Vec<String>) -> Option<Lowered> {
    let output = parts.first()?.output.clone();
    let (mut operands, mut cins, mut order, mut summed, mut temps) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), 0);
    let count = parts.len();
    for (k, part) in parts.into_iter().enumerate() {
        let shift = Shift {
            operands: operands.len(),
            temps,
        };
        for mut op in part.operands {
            op.id += shift.operands;
            operands.push(op);
        }
        cins.push(shift.cin(part.cin));
        for (from, into) in [(part.order, &mut order), (part.summed, &mut summed)] {
            for v in from {
                let v = shift.var(v);
                if !into.contains(&v) {
                    into.push(v);
                }
            }
        }
        temps += part.temps;
        notes.extend(
            part.notes
                .into_iter()
                .map(|n| format!("term {} of {count}: {n}", k + 1)),
        );
    }
    let provenance = Provenance::of(&operands).ok()?;
    Some(Lowered {
        cin: Cin::Sequence(cins),
        operands,
        output,
        order,
        summed,
        temps,
        assembly: OutputAssembly::Dense,
        notes,
        provenance,
        every_core: false,
        unrolled: Vec::new(),
        vectorized: None,
        bounds: Vec::new(),
        converted_output: None,
        value_type: ValueType::F64,
    })
}

/// How far one term's operands and temporaries move when its lowering
/// joins the others'.
struct Shift {
    operands: usize,
    temps: usize,
}

impl Shift {
    fn temp(&self, t: TempId) -> TempId {
        TempId(t.0 + self.temps)
    }

    /// `v` with the operands its relation names moved (an ELL slot is its
    /// operand's own variable).
    fn var(&self, v: LoopVar) -> LoopVar {
        let LoopVar::Derived { name, relation } = v else {
            return v;
        };
        let boxed = |v: Box<LoopVar>| Box::new(self.var(*v));
        let relation = match relation {
            Relation::Own { operand, level } => Relation::Own {
                operand: operand + self.operands,
                level,
            },
            Relation::Positions { operand, level } => Relation::Positions {
                operand: operand + self.operands,
                level,
            },
            Relation::Diagonal { row, col } => Relation::Diagonal {
                row: boxed(row),
                col: boxed(col),
            },
            Relation::Blocks { of, block } => Relation::Blocks { of: boxed(of), block },
            Relation::WithinBlock { of, block } => Relation::WithinBlock { of: boxed(of), block },
            Relation::Fused { outer, inner } => Relation::Fused {
                outer: boxed(outer),
                inner: boxed(inner),
            },
        };
        LoopVar::Derived { name, relation }
    }

    fn expr(&self, e: CinExpr) -> CinExpr {
        let boxed = |e: Box<CinExpr>| Box::new(self.expr(*e));
        match e {
            CinExpr::Access(a) => CinExpr::Access(a + self.operands),
            CinExpr::Literal(v) => CinExpr::Literal(v),
            CinExpr::Temp(t) => CinExpr::Temp(self.temp(t)),
            CinExpr::TempAt(t, v) => CinExpr::TempAt(self.temp(t), self.var(v)),
            CinExpr::Neg(e) => CinExpr::Neg(boxed(e)),
            CinExpr::Binary { op, lhs, rhs } => CinExpr::Binary {
                op,
                lhs: boxed(lhs),
                rhs: boxed(rhs),
            },
            CinExpr::Call { func, args } => CinExpr::Call {
                func,
                args: args.into_iter().map(|a| self.expr(a)).collect(),
            },
            CinExpr::Reduced { op, body } => CinExpr::Reduced { op, body: boxed(body) },
        }
    }

    fn cin(&self, c: Cin) -> Cin {
        let boxed = |c: Box<Cin>| Box::new(self.cin(*c));
        match c {
            Cin::Forall { var, body } => Cin::Forall {
                var: self.var(var),
                body: boxed(body),
            },
            Cin::Where {
                temp,
                reduction,
                index,
                producer,
                consumer,
            } => Cin::Where {
                temp: self.temp(temp),
                reduction,
                index: index.map(|v| self.var(v)),
                producer: boxed(producer),
                consumer: boxed(consumer),
            },
            Cin::Workspace { vars, body } => Cin::Workspace {
                vars: vars.into_iter().map(|v| self.var(v)).collect(),
                body: boxed(body),
            },
            Cin::Assign { target, expr } => Cin::Assign {
                target: match target {
                    Target::Output => Target::Output,
                    Target::Temp(t) => Target::Temp(self.temp(t)),
                    Target::TempAt(t, v) => Target::TempAt(self.temp(t), self.var(v)),
                },
                expr: self.expr(expr),
            },
            Cin::Sequence(parts) => Cin::Sequence(parts.into_iter().map(|p| self.cin(p)).collect()),
        }
    }
}
