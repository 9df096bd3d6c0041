//! Loops over a block of a split variable's coordinates when a level walks
//! the variable (a schedule's `split(i, i0, i1, 16)` with `i` at a
//! compressed level, as in CSF's first level): the loop over `i1` runs
//! over `i`'s coordinates in block `i0`, `i0·16 .. i0·16 + 16`. Walked
//! levels are cut to the positions whose coordinates lie in the block, by
//! two binary searches of their sorted coordinates per block; levels that
//! locate are located at each coordinate, as in any loop over `i`.

use std::collections::BTreeSet;

use tessera_formats::{Cmp, IntOp, Level, LevelRef};

use super::{Emitter, IterInfo};
use crate::bytecode::{BReg, IReg, Op, Regs};
use crate::cin::{LoopVar, Relation};

/// The block of coordinates of a split variable the loop being emitted runs
/// through: `lo..hi` of `var`'s coordinates, in the loop over `place`.
#[derive(Clone, Debug)]
pub(super) struct CoordinateWindow {
    pub var: LoopVar,
    pub place: LoopVar,
    pub lo: IReg,
    pub hi: IReg,
}

impl Emitter<'_> {
    /// The split variable whose coordinates the loop over `var` walks, when
    /// `var` is a scheduled split's place in a block and an involved
    /// operand's next level walks the split variable (it cannot locate).
    pub(super) fn coordinate_window_of(&self, var: &LoopVar, involved: &BTreeSet<usize>) -> Option<LoopVar> {
        let Some(Relation::WithinBlock { of, .. }) = var.relation() else {
            return None;
        };
        if !self.lowered.provenance.is_scheduled(of) {
            return None;
        }
        let walks = involved.iter().any(|&a| {
            let st = &self.states[a];
            st.done < st.level_vars.len()
                && st.level_vars[st.done] == **of
                && !st.formats[st.done].capabilities().locate
        });
        walks.then(|| (**of).clone())
    }

    /// Opens the block of `of`'s coordinates the loop over `place` runs
    /// through: `lo = blocks·b`, `hi = min(lo + b, n)`.
    pub(super) fn open_coordinate_window(&mut self, place: &LoopVar, of: &LoopVar) {
        let (outer, _, block) = self.lowered.provenance.recovery(of).expect("a split variable");
        let blocks = *self
            .var_regs
            .get(&outer)
            .expect("the lowering puts the blocks' loop outside the loop over their places");
        let (size, lo, hi, n) = (self.block_size(of, block), self.ireg(), self.ireg(), self.ireg());
        let index = self.var_index(of);
        self.ops.push(Op::Dim { dst: n, var: index });
        self.int_op(IntOp::Mul, lo, blocks, size);
        self.int_op(IntOp::Add, hi, lo, size);
        self.int_op(IntOp::Min, hi, hi, n);
        self.coordinate_window = Some(CoordinateWindow {
            var: of.clone(),
            place: place.clone(),
            lo,
            hi,
        });
    }

    /// The window's first coordinate, and `extent` cut to its end, for a
    /// loop over every coordinate of `var` inside the window.
    pub(super) fn window_first_coordinate(&mut self, var: &LoopVar, extent: IReg) -> Option<IReg> {
        let w = self.coordinate_window.clone().filter(|w| w.var == *var)?;
        self.int_op(IntOp::Min, extent, extent, w.hi);
        Some(w.lo)
    }

    /// Cuts a walked iterator's positions `begin..end` to those whose
    /// coordinates lie in the window: from the first coordinate at or past
    /// `lo` to the first at or past `hi` (the level stores its coordinates
    /// in order, which the lowering checked).
    pub(super) fn clamp_to_coordinates(&mut self, it: &IterInfo, begin: IReg, end: IReg) {
        let Some(w) = self.coordinate_window.clone() else {
            return;
        };
        let st = &self.states[it.operand];
        if st.level_vars.get(it.level) != Some(&w.var) || it.format.capabilities().locate {
            return;
        }
        self.cut_to_coordinates(it, (begin, end), (w.lo, w.hi));
    }

    /// Cuts `begin..end`, positions of an ordered level, to those whose
    /// coordinates lie in `lo..hi`: two binary searches.
    pub(super) fn cut_to_coordinates(&mut self, it: &IterInfo, (begin, end): (IReg, IReg), (lo, hi): (IReg, IReg)) {
        let level = LevelRef::new(it.operand, it.level);
        let ancestors = self.ancestors(it.operand, it.level);
        let (low, high) = (self.ireg(), self.ireg());
        self.ops.push(Op::IMove { dst: low, src: begin });
        self.ops.push(Op::IMove { dst: high, src: end });
        let first = self.first_passing(low, high, &mut |e, mid| {
            e.coordinate_at_least(level, &ancestors, mid, lo)
        });
        self.ops.push(Op::IMove { dst: begin, src: first });
        self.ops.push(Op::IMove { dst: high, src: end });
        let last = self.first_passing(first, high, &mut |e, mid| {
            e.coordinate_at_least(level, &ancestors, mid, hi)
        });
        self.ops.push(Op::IMove { dst: end, src: last });
    }

    /// Whether the coordinate stored at `pos` is `target` or past it.
    fn coordinate_at_least(&mut self, level: LevelRef, ancestors: &Regs, pos: IReg, target: IReg) -> BReg {
        let (coord, found, at_least) = (self.ireg(), self.breg(), self.breg());
        self.ops.push(Op::PosAccess {
            level,
            pos,
            ancestors: ancestors.clone(),
            coord,
            found,
        });
        self.ops.push(Op::ICmp {
            op: Cmp::Le,
            dst: at_least,
            a: target,
            b: coord,
        });
        at_least
    }

    /// What the plan says of a loop over a window of coordinates.
    pub(super) fn coordinate_window_note(&self) -> Option<String> {
        let w = self.coordinate_window.as_ref()?;
        let (outer, _, _) = self.lowered.provenance.recovery(&w.var)?;
        Some(format!(
            "the coordinates of {} in block {outer}: walked levels cut to them by two binary searches per block",
            w.var
        ))
    }
}
