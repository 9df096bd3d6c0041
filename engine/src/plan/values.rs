//! Outputs on an operand's pattern written a row at a time
//! ([`Op::ValuesAxpy`]): where the output's values line up with the
//! positions of the level a loop walks (`B(i,j) = 2 * A(i,j)`, `A(i,j) *
//! x(j)` into A's pattern), the loop is one op over the row's positions,
//! no bytecode per stored value.

use smallvec::SmallVec;
use tessera_formats::{CoordinateRelation, IntOp, Iteration, Level, LevelFormat, LevelKind, LevelRef};

use super::{Emitter, LoopShape};
use crate::bytecode::{BReg, DotFactor, FReg, FloatOp, IReg, Op};
use crate::cin::{Cin, LoopVar, OutputAssembly, Target};

/// What an [`Op::ValuesAxpy`] multiplies each stored value by: the
/// product of literals, of values bound outside the loop and of dense
/// factors gathered at the value's coordinate.
struct ValuesUpdate {
    literal: f64,
    fixed: Vec<usize>,
    factors: SmallVec<[DotFactor; 2]>,
    presences: Vec<BReg>,
}

impl Emitter<'_> {
    /// Emits the loop over `var` as one [`Op::ValuesAxpy`] when its body
    /// adds a product of the pattern operand's value, values already bound
    /// and dense last levels at `var` into the output.
    pub(super) fn try_values_axpy(&mut self, var: &LoopVar, body: &Cin, shape: &LoopShape) -> bool {
        if shape.universe || shape.walked.len() != 1 || self.chunk_of(var).is_some() {
            return false;
        }
        let driver = shape.iterators[shape.walked[0]].clone();
        let Some(update) = self.values_update(var, body, &driver) else {
            return false;
        };
        let skip = self.skip_unless_all(&update.presences);
        let scale = self.scale_of(&update);
        let (begin, end) = self.bounds(&driver);
        self.push_values_axpy(&driver, (begin, end), scale, update.factors);
        self.patch(skip);
        true
    }

    /// Emits the loop over `var`, every coordinate of a dense level of
    /// the pattern operand, and the loop inside it as one
    /// [`Op::ValuesAxpy`] over the positions of all its rows (or the
    /// chunk's): the next level is compact, so they follow one another.
    pub(super) fn try_every_values_row(&mut self, var: &LoopVar, body: &Cin, shape: &LoopShape) -> bool {
        let OutputAssembly::OnPattern { operand } = self.lowered.assembly else {
            return false;
        };
        if !shape.universe || !shape.walked.is_empty() || shape.located.len() != 1 {
            return false;
        }
        let rows = shape.iterators[shape.located[0]].clone();
        let st = self.states[operand].clone();
        let Cin::Forall {
            var: inner,
            body: inner_body,
        } = body
        else {
            return false;
        };
        let next = rows.level + 1;
        if rows.operand != operand
            || rows.format.kind != LevelKind::Dense
            || st.parent_run_end().is_some()
            || next >= st.level_vars.len()
            || st.level_vars[next] != *inner
            || !st.formats[next].properties().compact
        {
            return false;
        }
        let driver = super::IterInfo {
            operand,
            level: next,
            format: st.formats[next],
        };
        let Some(update) = self.values_update(inner, inner_body, &driver) else {
            return false;
        };
        let (first, last) = match self.chunk_of(var) {
            Some(range) => range,
            None => (self.iconst(0), self.loop_extent(var)),
        };
        let ancestors = self.ancestors(operand, rows.level);
        let empty = self.exit_unless_lt(first, last);
        let skip = self.skip_unless_all(&update.presences);
        let scale = self.scale_of(&update);
        // The first row's first position and the last row's end.
        let one = self.iconst(1);
        let final_row = self.ireg();
        self.int_op(IntOp::Sub, final_row, last, one);
        let mut ends = [0; 2];
        for (k, row) in [first, final_row].into_iter().enumerate() {
            let (position, found, begin, end) = (self.ireg(), self.breg(), self.ireg(), self.ireg());
            self.ops.push(Op::Locate {
                level: LevelRef::new(operand, rows.level),
                parent: st.parent_pos(),
                ancestors: ancestors.clone(),
                coord: row,
                pos: position,
                found,
            });
            self.ops.push(Op::PosIter {
                level: LevelRef::new(operand, next),
                parent: position,
                begin,
                end,
            });
            ends[k] = if k == 0 { begin } else { end };
        }
        self.push_values_axpy(&driver, (ends[0], ends[1]), scale, update.factors);
        self.patch(skip);
        self.patch(empty);
        true
    }

    /// Emits the loop over `var`, a computed range of the pattern operand
    /// whose consecutive coordinates sit at consecutive positions, each
    /// with one child on every level below (DIA's rows of a diagonal, and
    /// their columns), and the loops inside it as one [`Op::ValuesAxpy`]
    /// over the run's positions, when the body adds the stored value times
    /// literals and values bound outside: `C(i,j) = 2 * A(i,j)` into DIA.
    pub(super) fn try_range_values_run(&mut self, var: &LoopVar, body: &Cin, shape: &LoopShape) -> bool {
        let OutputAssembly::OnPattern { operand } = self.lowered.assembly else {
            return false;
        };
        if shape.universe || shape.walked.len() != 1 || self.chunk_of(var).is_some() {
            return false;
        }
        let range = shape.iterators[shape.walked[0]].clone();
        let st = self.states[operand].clone();
        let positional = |l: LevelFormat| l.coordinate_relation() == CoordinateRelation::Positional;
        let one_child = |l: LevelFormat| {
            let p = l.properties();
            l.coordinate_relation() == CoordinateRelation::ShiftedParent && p.branchless && p.unique
        };
        let below = range.level + 1..st.level_vars.len();
        if range.operand != operand
            || range.format.capabilities().iteration != Iteration::CoordinateValue
            || !positional(range.format)
            || !range.format.unique
            || below.is_empty()
            || !below.clone().all(|k| one_child(st.formats[k]))
        {
            return false;
        }
        let Some(inner) = super::blocks::within_loops(body, &st.level_vars[below.clone()]) else {
            return false;
        };
        let leaf = below.end - 1;
        let driver = super::IterInfo {
            operand,
            level: leaf,
            format: st.formats[leaf],
        };
        let Some(update) = self.values_update(&st.level_vars[leaf], inner, &driver) else {
            return false;
        };
        if !update.factors.is_empty() {
            return false;
        }
        let skip = self.skip_unless_all(&update.presences);
        let scale = self.scale_of(&update);
        // The one-child levels below share the range's positions.
        let run = self.coordinate_run(&range, 0).0;
        let (len, end) = (self.ireg(), self.ireg());
        self.int_op(IntOp::Sub, len, run.end, run.begin);
        self.int_op(IntOp::Add, end, run.values.start, len);
        self.push_values_axpy(&driver, (run.values.start, end), scale, update.factors);
        self.patch(skip);
        true
    }

    /// Whether the loop over `var` driven by `driver` adds a product of
    /// the pattern operand's value (`driver` its last level), literals,
    /// values bound outside it and dense last levels at `var` into the
    /// output; what the product's other factors are.
    fn values_update(&self, var: &LoopVar, body: &Cin, driver: &super::IterInfo) -> Option<ValuesUpdate> {
        let OutputAssembly::OnPattern { operand } = self.lowered.assembly else {
            return None;
        };
        let st = &self.states[operand];
        let last = driver.operand == operand && driver.level + 1 == st.level_vars.len();
        if !last || self.workspace.is_some() || !driver.format.unique || st.parent_run_end().is_some() {
            return None;
        }
        let Cin::Assign {
            target: Target::Output,
            expr,
        } = body
        else {
            return None;
        };
        let (mut accesses, mut literal) = (Vec::new(), 1.0);
        if !super::runs::product_parts(expr, &mut accesses, &mut literal)
            || accesses.iter().filter(|&&a| a == operand).count() != 1
        {
            return None;
        }
        let mut update = ValuesUpdate {
            literal,
            fixed: Vec::new(),
            factors: SmallVec::new(),
            presences: Vec::new(),
        };
        for &a in accesses.iter().filter(|&&a| a != operand) {
            let st = &self.states[a];
            if st.done == st.level_vars.len() {
                update.fixed.push(a);
            } else if st.next_is_dense_last_at(var) {
                update.factors.push(DotFactor {
                    operand: a as u32,
                    level: LevelRef::new(a, st.done),
                    parent: st.parent_pos(),
                });
            } else {
                return None;
            }
            update.presences.push(st.present);
        }
        // Factors are gathered at the stored coordinates, read from the
        // level's array; a scaled copy reads none.
        (update.factors.is_empty() || driver.format.coordinate_array().is_some()).then_some(update)
    }

    /// The product of an update's literals and bound values, in a register.
    fn scale_of(&mut self, update: &ValuesUpdate) -> FReg {
        let scale = self.product_of_values(&update.fixed);
        if update.literal != 1.0 {
            let value = self.freg();
            self.ops.push(Op::FConst {
                dst: value,
                value: update.literal,
            });
            self.ops.push(Op::FBin {
                op: FloatOp::Mul,
                dst: scale,
                a: scale,
                b: value,
            });
        }
        scale
    }

    fn push_values_axpy(
        &mut self,
        driver: &super::IterInfo,
        (begin, end): (IReg, IReg),
        scale: FReg,
        factors: SmallVec<[DotFactor; 2]>,
    ) {
        self.ops.push(Op::ValuesAxpy {
            driver: LevelRef::new(driver.operand, driver.level),
            begin,
            end,
            scale,
            factors,
        });
    }
}
