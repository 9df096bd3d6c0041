//! Loops over the levels of structured formats, which the general loops do
//! not walk well: a level whose coordinates are a computed range (DIA's
//! rows below a diagonal), several such levels at once (the rows of two DIA
//! tensors' shared diagonal), and a level with exactly one child per parent
//! (DIA's columns, ELL's and COO's singletons).

use std::collections::BTreeSet;

use tessera_formats::{Assembly, Cmp, CoordinateRelation, IntOp, Iteration, Level, LevelFormat, LevelRef};

use super::{Emitter, IterInfo, LoopShape};
use crate::bytecode::{CoordinateRun, IReg, Op, ValueRun};
use crate::cin::{Cin, LoopVar, OutputAssembly};

impl Emitter<'_> {
    /// How a loop driven by one iterator can run without walking
    /// positions: its level's coordinates are a range, or it has one
    /// child per parent.
    pub(super) fn structured_driver(&self, shape: &LoopShape) -> Option<StructuredDriver> {
        let computed_range = |i: &usize| {
            let format = shape.iterators[*i].format;
            format.capabilities().iteration == Iteration::CoordinateValue && format.properties().unique
        };
        if !shape.universe && shape.walked.len() > 1 && shape.walked.iter().all(computed_range) {
            return Some(StructuredDriver::CoordinateRanges);
        }
        if shape.universe || shape.walked.len() != 1 {
            return None;
        }
        let it = &shape.iterators[shape.walked[0]];
        let props = it.format.properties();
        if it.format.capabilities().iteration == Iteration::CoordinateValue && props.unique {
            return Some(StructuredDriver::CoordinateRange);
        }
        // The format paper's branchless: no coordinate has a sibling, so
        // the parent's one position is the child's.
        let chained = self.states[it.operand].parent_run_end().is_some();
        if props.branchless && props.unique && !chained && self.chunk_of_level(it).is_none() {
            return Some(StructuredDriver::OneChild);
        }
        None
    }

    /// `out = a op b` over the rows of two tensors' shared diagonal, into an
    /// appended output stored the same way ([`Op::MergeRuns`]): the loop's
    /// two walked levels are computed ranges whose consecutive coordinates
    /// sit at consecutive positions, each with one child per position
    /// below (DIA's columns) over the output's variables, and the output's
    /// level at the loop is such a level too, inserted by position.
    pub(super) fn try_merge_runs(&mut self, var: &LoopVar, body: &Cin, shape: &LoopShape) -> bool {
        if self.workspace.is_some()
            || self.output_operand().is_some()
            || self.lowered.assembly != OutputAssembly::Append
            || shape.universe
            || shape.walked.len() != 2
            || shape.iterators.len() != 2
        {
            return false;
        }
        let output = &self.lowered.output;
        let out_vars = output.level_vars();
        let Some(at) = out_vars.iter().position(|v| v == var) else {
            return false;
        };
        let inner = &out_vars[at + 1..];
        let out_level = *output.format.level(at);
        if !positional(out_level)
            || out_level.capabilities().assembly != Some(Assembly::Insert)
            || !(at + 1..out_vars.len()).all(|k| one_child(*output.format.level(k)))
        {
            return false;
        }
        let Some(super::blocks::MergedPair { a, b, op, scales }) =
            super::blocks::within_loops(body, inner).and_then(|body| self.merged_pair(body))
        else {
            return false;
        };
        let run_of = |operand: usize| {
            let it = shape.iterators.iter().find(|it| it.operand == operand)?;
            let st = &self.states[operand];
            let below = it.level + 1..st.level_vars.len();
            let fits = it.format.capabilities().iteration == Iteration::CoordinateValue
                && positional(it.format)
                && it.format.unique
                && st.level_vars[below.clone()] == *inner
                && below.clone().all(|k| one_child(st.formats[k]));
            fits.then(|| it.clone())
        };
        let (Some(a_range), Some(b_range)) = (run_of(a), run_of(b)) else {
            return false;
        };
        let Some(prefix) = self.bound_registers(&out_vars[..at]) else {
            return false;
        };
        let (a_run, a_shifts) = self.coordinate_run(&a_range, inner.len());
        let (b_run, b_shifts) = self.coordinate_run(&b_range, inner.len());
        // The levels below take their shifts from a run that holds rows.
        let a_rows = self.compare(Cmp::Lt, a_run.begin, a_run.end);
        let shifts = a_shifts
            .iter()
            .zip(&b_shifts)
            .map(|(&x, &y)| {
                let dst = self.ireg();
                self.ops.push(Op::ISelect {
                    dst,
                    cond: a_rows,
                    a: x,
                    b: y,
                });
                dst
            })
            .collect();
        let scales = self.merge_scales(scales);
        self.ops.push(Op::MergeRuns {
            runs: [a_run, b_run],
            op,
            scales,
            prefix,
            shifts,
        });
        true
    }

    /// The run of `it`'s computed range below its bound parent (empty when
    /// the operand is absent), and for each of the `below` one-child levels
    /// under it, its coordinate less the run's (0 when the run is empty).
    pub(super) fn coordinate_run(&mut self, it: &IterInfo, below: usize) -> (CoordinateRun, Vec<IReg>) {
        let st = self.states[it.operand].clone();
        let level = LevelRef::new(it.operand, it.level);
        let (begin, end) = self.range_bounds(it);
        let mut ancestors = self.ancestors(it.operand, it.level);
        let start = self.iconst(0);
        let shifts: Vec<IReg> = (0..below).map(|_| self.iconst(0)).collect();
        let rows = self.compare(Cmp::Lt, begin, end);
        let empty = self.jump_unless(rows);
        let found = self.breg();
        self.ops.push(Op::CoordAccess {
            level,
            parent: st.parent_pos(),
            ancestors: ancestors.clone(),
            coord: begin,
            pos: start,
            found,
        });
        ancestors.push(begin);
        for (k, &shift) in shifts.iter().enumerate() {
            let coord = self.ireg();
            self.ops.push(Op::PosAccess {
                level: LevelRef::new(it.operand, it.level + 1 + k),
                pos: start,
                ancestors: ancestors.clone(),
                coord,
                found,
            });
            self.int_op(IntOp::Sub, shift, coord, begin);
            ancestors.push(coord);
        }
        self.patch(empty);
        let run = CoordinateRun {
            values: ValueRun {
                operand: it.operand as u32,
                start,
            },
            begin,
            end,
        };
        (run, shifts)
    }

    /// The bounds of `it`'s computed range below its bound ancestors;
    /// empty when the operand is absent.
    fn range_bounds(&mut self, it: &IterInfo) -> (IReg, IReg) {
        let present = self.states[it.operand].present;
        let (begin, end) = (self.zero_unless(present), self.zero_unless(present));
        let skip = self.jump_unless(present);
        let ancestors = self.ancestors(it.operand, it.level);
        self.ops.push(Op::CoordIter {
            level: LevelRef::new(it.operand, it.level),
            ancestors,
            begin,
            end,
        });
        self.patch(skip);
        (begin, end)
    }

    /// Emits a loop that [`Self::structured_driver`] accepted.
    pub(super) fn emit_structured_loop(
        &mut self,
        how: StructuredDriver,
        var: &LoopVar,
        body: &Cin,
        shape: &LoopShape,
        involved: &BTreeSet<usize>,
        depth: usize,
    ) {
        let it = shape.iterators[shape.walked[0]].clone();
        let coord = self.ireg();
        self.var_regs.insert(var.clone(), coord);
        match how {
            StructuredDriver::CoordinateRange => self.emit_range_loop(&it, coord, body, shape, involved, depth),
            StructuredDriver::CoordinateRanges => self.emit_ranges_loop(coord, body, shape, involved, depth),
            StructuredDriver::OneChild => self.emit_one_child(&it, coord, body, shape, involved, depth),
        }
    }

    /// `for coord in coord_iter(ancestors): pos = coord_access(coord)`.
    fn emit_range_loop(
        &mut self,
        it: &IterInfo,
        coord: crate::bytecode::IReg,
        body: &Cin,
        shape: &LoopShape,
        involved: &BTreeSet<usize>,
        depth: usize,
    ) {
        let level = LevelRef::new(it.operand, it.level);
        let st = self.states[it.operand].clone();
        let (begin, end) = self.range_bounds(it);
        self.ops.push(Op::IMove { dst: coord, src: begin });
        let one = self.iconst(1);
        let top = self.label();
        let exit = self.exit_unless_lt(coord, end);
        let (pos, found) = (self.ireg(), self.breg());
        let ancestors = self.ancestors(it.operand, it.level);
        self.ops.push(Op::CoordAccess {
            level,
            parent: st.parent_pos(),
            ancestors,
            coord,
            pos,
            found,
        });
        let step = super::loops::LoopStep {
            counter: coord,
            one,
            top,
            exit,
        };
        self.body_then_step((it.operand, pos, coord), found, (shape, involved), body, depth, step);
    }

    /// Several computed ranges co-iterated (the rows of two DIA tensors below
    /// their shared diagonal): one loop from the least first coordinate of
    /// a non-empty range to the greatest end, each operand present where its
    /// range holds the coordinate, and the body run where a lattice point's
    /// operands all are. Ranges have no positions to merge by: a coordinate
    /// is located in each by `coord_access`.
    fn emit_ranges_loop(
        &mut self,
        coord: IReg,
        body: &Cin,
        shape: &LoopShape,
        involved: &BTreeSet<usize>,
        depth: usize,
    ) {
        let its: Vec<IterInfo> = shape.walked.iter().map(|&i| shape.iterators[i].clone()).collect();
        let (first, last) = (self.iconst(i64::MAX), self.iconst(0));
        let mut ranges = Vec::new();
        for it in &its {
            let (begin, end) = self.range_bounds(it);
            let (nonempty, start) = (self.compare(Cmp::Lt, begin, end), self.ireg());
            self.ops.push(Op::ISelect {
                dst: start,
                cond: nonempty,
                a: begin,
                b: first,
            });
            self.int_op(IntOp::Min, first, first, start);
            self.int_op(IntOp::Max, last, last, end);
            ranges.push((begin, end));
        }
        self.ops.push(Op::IMove { dst: coord, src: first });
        let one = self.iconst(1);
        let top = self.label();
        let exit = self.exit_unless_lt(coord, last);
        let mut inside = Vec::new();
        for &(begin, end) in &ranges {
            let (from, before) = (self.compare(Cmp::Le, begin, coord), self.compare(Cmp::Lt, coord, end));
            inside.push(self.and_flags(from, before));
        }
        let mut holds = self.false_reg;
        for point in Self::walked_points(shape) {
            let mut all = self.true_reg;
            for k in point {
                all = self.and_flags(all, inside[k]);
            }
            let either = self.breg();
            self.ops.push(Op::BOr {
                dst: either,
                a: holds,
                b: all,
            });
            holds = either;
        }
        let skip = self.jump_unless(holds);
        let saved = self.states.clone();
        for (it, &present) in its.iter().zip(&inside) {
            let st = self.states[it.operand].clone();
            let (pos, found) = (self.ireg(), self.breg());
            let ancestors = self.ancestors(it.operand, it.level);
            self.ops.push(Op::CoordAccess {
                level: LevelRef::new(it.operand, it.level),
                parent: st.parent_pos(),
                ancestors,
                coord,
                pos,
                found,
            });
            self.states[it.operand].bind(pos, None, present);
        }
        self.bind_located(shape, involved, coord);
        self.stmt(body, depth + 1);
        self.states = saved;
        self.patch(skip);
        self.int_op(IntOp::Add, coord, coord, one);
        self.ops.push(Op::Jump { to: top });
        self.patch(exit);
    }

    /// The one child of the parent position: no loop, the body once (when
    /// the operand is present and the position holds a coordinate).
    fn emit_one_child(
        &mut self,
        it: &IterInfo,
        coord: crate::bytecode::IReg,
        body: &Cin,
        shape: &LoopShape,
        involved: &BTreeSet<usize>,
        depth: usize,
    ) {
        let (begin, end) = self.bounds(it);
        let absent = if self.states[it.operand].present == self.true_reg {
            super::NO_JUMP
        } else {
            self.exit_unless_lt(begin, end)
        };
        let found = self.breg();
        let ancestors = self.ancestors(it.operand, it.level);
        self.ops.push(Op::PosAccess {
            level: LevelRef::new(it.operand, it.level),
            pos: begin,
            ancestors,
            coord,
            found,
        });
        let unlabelled = self.jump_unless(found);
        self.states[it.operand].bind(begin, None, self.true_reg);
        self.hoist_value(it.operand);
        self.bind_located(shape, involved, coord);
        self.stmt(body, depth + 1);
        self.patch(unlabelled);
        self.patch(absent);
    }

    /// The chunk range clamping `it`'s positions, when it is the chunked
    /// loop's first level.
    fn chunk_of_level(&self, it: &IterInfo) -> Option<()> {
        let chunk = self.chunk.as_ref()?;
        (it.level == 0 && self.states[it.operand].level_vars.first() == Some(&chunk.var)).then_some(())
    }
}

/// The loops [`Emitter::emit_structured_loop`] emits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum StructuredDriver {
    /// Every coordinate of a computed range, each located.
    CoordinateRange,
    /// Every coordinate of the union of several computed ranges, each
    /// located in the ranges that hold it.
    CoordinateRanges,
    /// The parent's one child, without a loop.
    OneChild,
}

/// A level whose positions are arithmetic in its parent's and its
/// coordinate (dense, DIA's rows of a diagonal).
pub(super) fn positional(l: LevelFormat) -> bool {
    l.coordinate_relation() == CoordinateRelation::Positional
}

/// A level with exactly one child per parent, at the parent's position
/// (DIA's columns).
pub(super) fn one_child(l: LevelFormat) -> bool {
    let p = l.properties();
    l.coordinate_relation() == CoordinateRelation::ShiftedParent && p.branchless && p.unique
}
