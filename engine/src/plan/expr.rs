//! Assignments: where an expression may differ from its fill (its value
//! with every operand absent), and its value with absent operands as zero.

use super::{Emitter, TempState};
use crate::bytecode::{BReg, FReg, FloatOp, Op, Regs};
use crate::cin::{CinExpr, LoopVar, OutputAssembly, Target};
use crate::lattice::Absence;
use crate::notation::{Annihilators, BinaryOp, Reduction};

impl Emitter<'_> {
    pub(super) fn assign(&mut self, target: &Target, expr: &CinExpr) {
        // Where the expression of absent operands is not what the target
        // holds, every coordinate the loops visit is assigned.
        let nz = if self.holds_neutral(expr, target) {
            self.structural(expr)
        } else {
            self.true_reg
        };
        if nz == self.false_reg {
            return;
        }
        let skip = self.jump_unless(nz);
        let value = self.value(expr);
        match target {
            Target::TempAt(t, index) => {
                let TempState { reduction, vector, .. } = self.temps[t];
                let temp = vector.expect("a vector temporary's where is emitted first");
                let at = self
                    .coordinate_of(index)
                    .expect("the producer's loops bind the temporary's index");
                let acc = self.freg();
                self.ops.push(Op::TempLoad {
                    temp,
                    index: at,
                    dst: acc,
                });
                self.combine(reduction, acc, value);
                self.ops.push(Op::TempStore {
                    temp,
                    index: at,
                    value: acc,
                });
            }
            Target::Temp(t) => {
                let TempState {
                    value: acc,
                    present,
                    reduction,
                    ..
                } = self.temps[t];
                self.combine(reduction, acc, value);
                self.ops.push(Op::BConst {
                    dst: present,
                    value: true,
                });
            }
            Target::Output => {
                let out = &self.lowered.output;
                if nz == self.true_reg
                    && self.lowered.assembly == OutputAssembly::Append
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
                } else if let OutputAssembly::OnPattern { operand } = self.lowered.assembly {
                    // The output's values line up with the operand's.
                    let pos = self.states[operand].position();
                    self.ops.push(Op::AccumOutput { pos, value });
                } else {
                    let coords: Regs = out.level_vars().iter().map(|v| bound(self, v)).collect();
                    self.ops.push(Op::Append { coords, value });
                }
            }
        }
        self.patch(skip);
    }

    /// `acc = acc ⊕ value` for a temporary reduced by `reduction`.
    pub(super) fn combine(&mut self, reduction: Reduction, acc: FReg, value: FReg) {
        match (reduction, reduction.func_for(self.lowered.value_type)) {
            (_, Some(func)) => self.ops.push(Op::FCall {
                func,
                dst: acc,
                a: acc,
                b: value,
            }),
            (Reduction::Prod, None) => self.ops.push(Op::FBin {
                op: FloatOp::Mul,
                dst: acc,
                a: acc,
                b: value,
            }),
            _ => self.ops.push(Op::FBin {
                op: FloatOp::Add,
                dst: acc,
                a: acc,
                b: value,
            }),
        }
    }

    /// Whether the expression may differ from its fill here: false only
    /// where it certainly has its fill (operands absent).
    pub(super) fn structural(&mut self, expr: &CinExpr) -> BReg {
        match expr {
            CinExpr::Access(a) => self.states[*a].present,
            // A literal is its own fill.
            CinExpr::Literal(_) => self.false_reg,
            CinExpr::TempAt(t, _) => self.temps[t].present,
            CinExpr::Temp(t) => match self.temps[t].fill {
                Some(_) => self.temps[t].present,
                None => self.true_reg,
            },
            CinExpr::Neg(e) => self.structural(e),
            CinExpr::Reduced { .. } => unreachable!("reduced expressions are only analysed"),
            CinExpr::Binary { op, lhs, rhs } => self.structural_of(op.annihilators(), &|a, b| op.apply(a, b), lhs, rhs),
            CinExpr::Call { func, args } => match args.as_slice() {
                [arg] => self.structural(arg),
                [lhs, rhs] => self.structural_of(func.annihilators(), &|a, b| func.apply(&[a, b]), lhs, rhs),
                _ => unreachable!("functions take one or two arguments"),
            },
        }
    }

    /// [`Self::structural`] of a binary operation with `annihilators`.
    fn structural_of(
        &mut self,
        annihilators: Annihilators,
        apply: &dyn Fn(f64, f64) -> f64,
        lhs: &CinExpr,
        rhs: &CinExpr,
    ) -> BReg {
        let absence = self.with_fills(|fills| Absence::of(annihilators, apply, lhs, rhs, fills));
        let l = self.structural(lhs);
        let r = self.structural(rhs);
        match absence {
            Absence::Both => self.and_flags(l, r),
            Absence::Left => l,
            Absence::Right => r,
            Absence::Either => {
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

    /// The expression's value, absent operands reading as their fills.
    pub(super) fn value(&mut self, expr: &CinExpr) -> FReg {
        match expr {
            CinExpr::Access(a) => {
                if let Some(hoisted) = self.states[*a].value {
                    return hoisted;
                }
                let dst = self.freg();
                let fill = self.lowered.operands.get(*a).map_or(0.0, |op| op.fill);
                if self.states[*a].present == self.false_reg {
                    self.ops.push(Op::FConst { dst, value: fill });
                    return dst;
                }
                let st = self.states[*a].clone();
                if st.present != self.true_reg {
                    self.ops.push(Op::FConst { dst, value: fill });
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
            CinExpr::Temp(t) => self.temps[t].value,
            CinExpr::TempAt(t, index) => {
                let temp = self.temps[t]
                    .vector
                    .expect("a vector temporary's where is emitted first");
                let at = self
                    .coordinate_of(index)
                    .expect("the consumer's loops bind the temporary's index");
                let dst = self.freg();
                self.ops.push(Op::TempLoad { temp, index: at, dst });
                dst
            }
            CinExpr::Reduced { .. } => unreachable!("reduced expressions are only analysed"),
            CinExpr::Call { func, args } => {
                let a = self.value(&args[0]);
                let b = match args.get(1) {
                    Some(rhs) => self.value(rhs),
                    None => a,
                };
                let dst = self.freg();
                self.ops.push(Op::FCall { func: *func, dst, a, b });
                dst
            }
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
