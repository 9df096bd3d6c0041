//! Assignments: where an expression is structurally nonzero, and its
//! value with absent operands as zero.

use super::Emitter;
use crate::bytecode::{BReg, FReg, FloatOp, Op, Regs};
use crate::cin::{CinExpr, LoopVar, OutputAssembly, Target, TempId};
use crate::notation::BinaryOp;

impl Emitter<'_> {
    pub(super) fn assign(&mut self, target: &Target, expr: &CinExpr) {
        let nz = self.structural(expr);
        if nz == self.false_reg {
            return;
        }
        let skip = self.jump_unless(nz);
        let value = self.value(expr);
        match target {
            Target::Temp(t) => {
                let (acc, present) = self.temps[t];
                self.ops.push(Op::FBin {
                    op: FloatOp::Add,
                    dst: acc,
                    a: acc,
                    b: value,
                });
                self.ops.push(Op::BConst {
                    dst: present,
                    value: true,
                });
            }
            Target::Output => {
                let out = &self.lowered.output;
                if nz == self.true_reg
                    && self.lowered.assembly != OutputAssembly::Dense
                    && out.vars.iter().all(|v| self.every_coordinate.contains(v))
                {
                    self.fills_in = true;
                }
                // A split variable's coordinate is recovered from its blocks.
                let bound = |e: &mut Self, v: &LoopVar| e.coordinate_of(v).expect("the output's variables are bound");
                if let Some(ws) = self.workspace.clone() {
                    let coords: Regs = ws.iter().map(|v| bound(self, v)).collect();
                    self.ops.push(Op::WorkspaceAccum { coords, value });
                } else if let Some(o) = self.output_operand() {
                    let pos = self.states[o].position();
                    self.ops.push(Op::AccumOutput { pos, value });
                } else {
                    let coords: Regs = out.level_vars().iter().map(|v| bound(self, v)).collect();
                    self.ops.push(Op::Append { coords, value });
                }
            }
        }
        self.patch(skip);
    }

    /// Whether the expression may be nonzero here (operands present).
    pub(super) fn structural(&mut self, expr: &CinExpr) -> BReg {
        match expr {
            CinExpr::Access(a) => self.states[*a].present,
            // Known at emission: folded like any other known flag.
            CinExpr::Literal(v) if *v != 0.0 => self.true_reg,
            CinExpr::Literal(_) => self.false_reg,
            CinExpr::Temp(t) => self.temps[t].1,
            CinExpr::Neg(e) => self.structural(e),
            CinExpr::Binary { op, lhs, rhs } => {
                if *op == BinaryOp::Div {
                    return self.true_reg;
                }
                let l = self.structural(lhs);
                let r = self.structural(rhs);
                if *op == BinaryOp::Mul {
                    return self.and_flags(l, r);
                }
                if l == self.true_reg || r == self.true_reg {
                    return self.true_reg;
                }
                if l == self.false_reg {
                    return r;
                }
                if r == self.false_reg {
                    return l;
                }
                let b = self.breg();
                self.ops.push(Op::BOr { dst: b, a: l, b: r });
                b
            }
        }
    }

    /// The expression's value, absent operands reading as zero.
    pub(super) fn value(&mut self, expr: &CinExpr) -> FReg {
        match expr {
            CinExpr::Access(a) => {
                if let Some(hoisted) = self.states[*a].value {
                    return hoisted;
                }
                let dst = self.freg();
                if self.states[*a].present == self.false_reg {
                    self.ops.push(Op::FConst { dst, value: 0.0 });
                    return dst;
                }
                let st = self.states[*a].clone();
                if st.present != self.true_reg {
                    self.ops.push(Op::FConst { dst, value: 0.0 });
                }
                let skip = self.jump_unless(st.present);
                self.ops.push(Op::LoadValue {
                    operand: *a as u32,
                    pos: st.position(),
                    dst,
                });
                self.patch(skip);
                dst
            }
            CinExpr::Literal(v) => {
                let dst = self.freg();
                self.ops.push(Op::FConst { dst, value: *v });
                dst
            }
            CinExpr::Temp(t) => self.temps[t].0,
            CinExpr::Neg(e) => {
                let a = self.value(e);
                let dst = self.freg();
                self.ops.push(Op::FNeg { dst, a });
                dst
            }
            CinExpr::Binary { op, lhs, rhs } => {
                let a = self.value(lhs);
                let b = self.value(rhs);
                let dst = self.freg();
                let op = match op {
                    BinaryOp::Add => FloatOp::Add,
                    BinaryOp::Sub => FloatOp::Sub,
                    BinaryOp::Mul => FloatOp::Mul,
                    BinaryOp::Div => FloatOp::Div,
                };
                self.ops.push(Op::FBin { op, dst, a, b });
                dst
            }
        }
    }
}

/// `expr` with temporary `temp` replaced by `with`.
pub(super) fn substitute(expr: &CinExpr, temp: TempId, with: &CinExpr) -> CinExpr {
    match expr {
        CinExpr::Temp(t) if *t == temp => with.clone(),
        CinExpr::Neg(e) => CinExpr::Neg(Box::new(substitute(e, temp, with))),
        CinExpr::Binary { op, lhs, rhs } => CinExpr::Binary {
            op: *op,
            lhs: Box::new(substitute(lhs, temp, with)),
            rhs: Box::new(substitute(rhs, temp, with)),
        },
        other => other.clone(),
    }
}
