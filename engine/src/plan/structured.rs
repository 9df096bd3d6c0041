//! Loops over the levels of structured formats, which the general loops do
//! not walk well: a level whose coordinates are a computed range (DIA's
//! rows below a diagonal) and a level with exactly one child per parent
//! (DIA's columns, ELL's and COO's singletons).

use std::collections::BTreeSet;

use tessera_formats::{Iteration, Level, LevelRef};

use super::{Emitter, IterInfo, LoopShape};
use crate::bytecode::Op;
use crate::cin::{Cin, LoopVar};

impl Emitter<'_> {
    /// How a loop driven by one iterator can run without walking
    /// positions: its level's coordinates are a range, or it has one
    /// child per parent.
    pub(super) fn structured_driver(&self, shape: &LoopShape) -> Option<StructuredDriver> {
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
        // An absent operand has an empty range.
        let (begin, end) = (self.zero_unless(st.present), self.zero_unless(st.present));
        let skip = self.jump_unless(st.present);
        let ancestors = self.ancestors(it.operand, it.level);
        self.ops.push(Op::CoordIter {
            level,
            ancestors,
            begin,
            end,
        });
        self.patch(skip);
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
    /// The parent's one child, without a loop.
    OneChild,
}
