//! Loops inside a block of an operand's positions (a schedule's `pos`,
//! split): the block is `lo..hi` of the positions of one level, and the
//! loops over the variables of that level and the level above recover the
//! coordinates of exactly those positions. The level's own iterator is cut
//! to `lo..hi`; the level above runs only over the parents whose segments
//! meet the block, found by binary search once per block. Every tier runs
//! the same ops, so every tier iterates blocks of positions the same way.

use tessera_formats::{Cmp, IntOp, Level, LevelKind, LevelRef};

use super::{Emitter, IterInfo};
use crate::bytecode::{IReg, Op};
use crate::cin::{Cin, LoopVar, PositionSpace};

/// The block of positions the loops below a position-block loop run in.
#[derive(Clone, Debug)]
pub(super) struct PositionWindow {
    pub operand: usize,
    /// The level whose positions are cut.
    pub level: usize,
    /// The statement variables of the levels down to `level`.
    pub covers: Vec<LoopVar>,
    pub lo: IReg,
    pub hi: IReg,
}

impl Emitter<'_> {
    /// The position space whose blocks the loop over `var`'s outermost
    /// covered variable runs inside, once the blocks' loop is bound.
    fn split_space_led_by(&self, var: &LoopVar) -> Option<(PositionSpace, LoopVar)> {
        let provenance = &self.lowered.provenance;
        provenance.positions().iter().find_map(|space| {
            let blocks = space.blocks(provenance)?;
            (space.covers.first() == Some(var) && self.var_regs.contains_key(&blocks)).then(|| (space.clone(), blocks))
        })
    }

    /// The loop over the blocks of one fibre's positions, when `var` is
    /// such a loop: it steps a block's first position through the fibre's
    /// segment, and the loop over the fibre's variable inside runs over
    /// the block's positions. Returns whether it emitted the loop.
    pub(super) fn try_fibre_blocks(&mut self, var: &LoopVar, body: &Cin, depth: usize) -> bool {
        let provenance = &self.lowered.provenance;
        let Some(space) = provenance
            .position_space_of_blocks(var)
            .filter(|s| s.within_fibre())
            .cloned()
        else {
            return false;
        };
        let (_, _, block) = provenance.recovery(&space.var).expect("a split position space");
        let size = self.block_size(&space.var, block);
        let st = &self.states[space.operand];
        let it = IterInfo {
            operand: space.operand,
            level: space.level,
            format: st.formats[space.level],
        };
        let (begin, end) = self.bounds(&it);
        let (coord, lo, hi) = (self.ireg(), self.ireg(), self.ireg());
        self.var_regs.insert(var.clone(), coord);
        self.ops.push(Op::IConst { dst: coord, value: 0 });
        self.ops.push(Op::IMove { dst: lo, src: begin });
        let one = self.iconst(1);
        let top = self.label();
        let exit = self.exit_unless_lt(lo, end);
        self.block_end(hi, lo, size, end);
        self.fibre_block = Some((lo, hi));
        self.stmt(body, depth + 1);
        self.fibre_block = None;
        self.ops.push(Op::IMove { dst: lo, src: hi });
        self.int_op(IntOp::Add, coord, coord, one);
        self.ops.push(Op::Jump { to: top });
        self.patch(exit);
        true
    }

    /// `hi = min(lo + size, limit)`: where a block starting at `lo` ends.
    fn block_end(&mut self, hi: IReg, lo: IReg, size: IReg, limit: IReg) {
        self.int_op(IntOp::Add, hi, lo, size);
        self.int_op(IntOp::Min, hi, hi, limit);
    }

    /// Opens the block of positions of the current position-block loop
    /// when the loop over `var` is the first its positions' loops run
    /// (the block's bounds are computed once, before it).
    pub(super) fn open_position_window(&mut self, var: &LoopVar) {
        let Some((space, blocks)) = self.split_space_led_by(var) else {
            return;
        };
        if space.within_fibre() {
            let (lo, hi) = self
                .fibre_block
                .expect("a fibre's block is open inside its blocks' loop");
            self.window = Some(PositionWindow {
                operand: space.operand,
                level: space.level,
                covers: space.covers.clone(),
                lo,
                hi,
            });
            return;
        }
        let (_, _, block) = self
            .lowered
            .provenance
            .recovery(&space.var)
            .expect("a split position space");
        let size = self.block_size(&space.var, block);
        let total = self.ireg();
        let index = self
            .lowered
            .dimension(&space.var)
            .expect("a split variable has a dimension");
        self.ops.push(Op::Dim { dst: total, var: index });
        let (lo, hi) = (self.ireg(), self.ireg());
        let block_reg = self.var_regs[&blocks];
        self.int_op(IntOp::Mul, lo, block_reg, size);
        self.block_end(hi, lo, size, total);
        self.window = Some(PositionWindow {
            operand: space.operand,
            level: space.level,
            covers: space.covers.clone(),
            lo,
            hi,
        });
    }

    /// What the plan says of a loop inside a block of positions.
    pub(super) fn position_window_note(&self, var: &LoopVar) -> Option<String> {
        if let Some(space) = self
            .lowered
            .provenance
            .position_space_of_blocks(var)
            .filter(|s| s.within_fibre())
        {
            return Some(format!(
                "blocks of the positions of each fibre of {}: a block's first position steps through the fibre",
                self.lowered.operands[space.operand].name
            ));
        }
        let w = self.window.as_ref()?;
        let name = &self.lowered.operands[w.operand].name;
        let at = w.covers.iter().position(|v| v == var)?;
        let coordinates = w.level == 0 && self.states[w.operand].formats[0].kind == LevelKind::Dense;
        Some(if at + 1 == w.covers.len() && coordinates {
            format!("{name}'s positions cut to the block, which are its coordinates: other operands' ordered levels cut to them by two binary searches per block")
        } else if at + 1 == w.covers.len() {
            format!("{name}'s positions cut to the block")
        } else {
            format!("only the coordinates whose {name} positions meet the block: two searches per block, galloping from the last block's")
        })
    }

    /// Whether `body` holds a loop over blocks of positions: ops that walk
    /// whole rows on their own would skip its cuts.
    pub(super) fn holds_position_blocks(body: &Cin, lowered: &crate::cin::Lowered) -> bool {
        body.any(
            &|c| matches!(c, Cin::Forall { var, .. } if lowered.provenance.position_space_of_blocks(var).is_some()),
        )
    }

    /// Whether operands `a` and `b` have the same positions: the same
    /// tensor in the same format (a tensor the statement reads twice), so
    /// a block of one's positions cuts the other's alike.
    pub(super) fn same_positions(&self, a: usize, b: usize) -> bool {
        let operands = &self.lowered.operands;
        a == b
            || (a < operands.len()
                && b < operands.len()
                && operands[a].name == operands[b].name
                && operands[a].format.levels() == operands[b].format.levels()
                && operands[a].level_vars() == operands[b].level_vars())
    }

    /// Whether the loop over `var` runs inside a block of positions: block
    /// ops that walk whole rows on their own do not apply to it.
    pub(super) fn in_position_window(&self, var: &LoopVar) -> bool {
        self.window.as_ref().is_some_and(|w| w.covers.contains(var))
    }

    /// Cuts an iterator's position bounds to the block of positions: the
    /// cut level to `lo..hi`, the level above it to the parents whose
    /// segments meet the block. Another operand's ordered level over the
    /// block's variable, when the block cuts a dense first level (whose
    /// positions are its coordinates), is cut to the coordinates `lo..hi`:
    /// a loop it drives, locating the cut operand, then runs over the
    /// block's coordinates only, not over all of them in every block.
    pub(super) fn clamp_to_window(&mut self, it: &IterInfo, begin: IReg, end: IReg) {
        let Some(w) = self.window.clone() else {
            return;
        };
        if !self.same_positions(it.operand, w.operand) {
            if self.cuts_to_window_coordinates(it, &w) {
                self.cut_to_coordinates(it, (begin, end), (w.lo, w.hi));
            }
            return;
        }
        if it.level == w.level {
            self.int_op(IntOp::Max, begin, begin, w.lo);
            self.int_op(IntOp::Min, end, end, w.hi);
        } else if it.level + 1 == w.level {
            self.parents_meeting_window(&w, begin, end);
        }
    }

    /// Whether [`Self::clamp_to_window`] cuts another operand's iterator
    /// `it` to the block's coordinates: the block cuts a dense first level
    /// (its positions `lo..hi` are the coordinates `lo..hi` of its one
    /// variable), and `it` walks that variable in order.
    pub(super) fn cuts_to_window_coordinates(&self, it: &IterInfo, w: &PositionWindow) -> bool {
        !self.same_positions(it.operand, w.operand)
            && w.level == 0
            && w.covers.len() == 1
            && self.states[w.operand].formats[0].kind == LevelKind::Dense
            && self.states[it.operand].level_vars.get(it.level) == w.covers.first()
            && it.format.properties().ordered
    }

    /// Whether position `pos` of level `level` of operand `a`, just
    /// located, lies in the block of positions, when the block cuts that
    /// level: a loop that iterates another operand and locates the cut
    /// one (an intersection driven by the sparser operand) must skip the
    /// positions outside the block, which `clamp_to_window` cuts only
    /// from the cut operand's own iterator.
    pub(super) fn window_holds(&mut self, a: usize, level: usize, pos: IReg) -> Option<crate::bytecode::BReg> {
        let w = self.window.clone()?;
        if level != w.level || !self.same_positions(a, w.operand) {
            return None;
        }
        let from = self.compare(Cmp::Le, w.lo, pos);
        let below = self.compare(Cmp::Lt, pos, w.hi);
        Some(self.and_flags(from, below))
    }

    /// The coordinates a loop over every coordinate of `var` runs
    /// through inside the block of positions, `(first, end)`, when `var`
    /// is the first covered variable: the coordinates of the block's
    /// positions at `var`'s level (of the parents meeting the block, for a
    /// fused pair). A dense first level's positions are its coordinates;
    /// another level's are read at the first and last position. `end` is
    /// the loop's extent, cut in place.
    pub(super) fn window_coordinates(&mut self, var: &LoopVar, extent: IReg) -> Option<IReg> {
        let w = self.window.clone()?;
        if w.covers.first() != Some(var) {
            return None;
        }
        let first_level = w.level + 1 - w.covers.len();
        let (begin, end) = (self.ireg(), self.ireg());
        if first_level == w.level {
            self.ops.push(Op::IMove { dst: begin, src: w.lo });
            self.ops.push(Op::IMove { dst: end, src: w.hi });
        } else {
            // The parents: a dense first level's every coordinate, or the
            // positions of another first level.
            if self.states[w.operand].formats[first_level].kind == LevelKind::Dense {
                self.ops.push(Op::IConst { dst: begin, value: 0 });
                self.ops.push(Op::IMove { dst: end, src: extent });
            } else {
                self.ops.push(Op::PosIter {
                    level: LevelRef::new(w.operand, first_level),
                    parent: self.states[w.operand].parent_pos(),
                    begin,
                    end,
                });
            }
            self.parents_meeting_window(&w, begin, end);
        }
        let format = self.states[w.operand].formats[first_level];
        if first_level == 0 && format.kind == LevelKind::Dense {
            self.int_op(IntOp::Min, extent, extent, end);
            return Some(begin);
        }
        // Sorted coordinates: the first position's, to one past the last's.
        let first = self.iconst(0);
        let empty = self.exit_unless_lt(begin, end);
        let level = LevelRef::new(w.operand, first_level);
        let ancestors = self.ancestors(w.operand, first_level);
        let (last, found, one) = (self.ireg(), self.breg(), self.iconst(1));
        self.ops.push(Op::PosAccess {
            level,
            pos: begin,
            ancestors: ancestors.clone(),
            coord: first,
            found,
        });
        self.int_op(IntOp::Sub, end, end, one);
        self.ops.push(Op::PosAccess {
            level,
            pos: end,
            ancestors,
            coord: last,
            found,
        });
        self.int_op(IntOp::Add, last, last, one);
        self.int_op(IntOp::Min, extent, extent, last);
        let done = self.ops.len();
        self.ops.push(Op::Jump { to: usize::MAX });
        self.patch(empty);
        self.ops.push(Op::IConst { dst: extent, value: 0 });
        self.patch(done);
        Some(first)
    }

    /// Starts a hint for the loop over `var` when it runs over the blocks
    /// of a position space: the first parent of the last block, where the
    /// next block's search starts (blocks ascend within a run).
    pub(super) fn start_position_blocks(&mut self, var: &LoopVar) {
        if self.lowered.provenance.position_space_of_blocks(var).is_some() {
            let hint = self.ireg();
            self.ops.push(Op::IConst { dst: hint, value: 0 });
            self.position_hint = Some(hint);
        }
    }

    /// Narrows `begin..end`, positions of the level above the cut one, to
    /// those whose segments meet `lo..hi`: from the first whose segment
    /// ends past `lo` to the first whose segment starts at `hi` or later.
    /// Both searches gallop from where the previous block's began, so a
    /// block costs about the logarithm of the parents it spans.
    fn parents_meeting_window(&mut self, w: &PositionWindow, begin: IReg, end: IReg) {
        let child = LevelRef::new(w.operand, w.level);
        let from = match self.position_hint {
            Some(hint) => {
                let from = self.ireg();
                self.int_op(IntOp::Max, from, begin, hint);
                from
            }
            None => begin,
        };
        let first = self.first_parent_where(child, from, end, w.lo, SegmentEdge::EndsAfter);
        if let Some(hint) = self.position_hint {
            self.ops.push(Op::IMove { dst: hint, src: first });
        }
        let last = self.first_parent_where(child, first, end, w.hi, SegmentEdge::StartsAtOrAfter);
        self.ops.push(Op::IMove { dst: begin, src: first });
        self.ops.push(Op::IMove { dst: end, src: last });
    }

    /// Whether parent `q`'s segment of `child` passes `target` as `edge`
    /// says.
    fn segment_passes(&mut self, child: LevelRef, q: IReg, target: IReg, edge: SegmentEdge) -> crate::bytecode::BReg {
        let (seg_begin, seg_end) = (self.ireg(), self.ireg());
        self.ops.push(Op::PosIter {
            level: child,
            parent: q,
            begin: seg_begin,
            end: seg_end,
        });
        let passes = self.breg();
        self.ops.push(match edge {
            SegmentEdge::EndsAfter => Op::ICmp {
                op: Cmp::Lt,
                dst: passes,
                a: target,
                b: seg_end,
            },
            SegmentEdge::StartsAtOrAfter => Op::ICmp {
                op: Cmp::Le,
                dst: passes,
                a: target,
                b: seg_begin,
            },
        });
        passes
    }

    /// The first parent position in `begin..end` whose segment of `child`
    /// passes `target` as `edge` says (`end` when none does): probes at
    /// `begin`, then 1, 3, 7, ... past it until one passes, then a binary
    /// search of the last stretch.
    fn first_parent_where(&mut self, child: LevelRef, begin: IReg, end: IReg, target: IReg, edge: SegmentEdge) -> IReg {
        let (low, high, step, probe) = (self.ireg(), self.ireg(), self.ireg(), self.ireg());
        let one = self.iconst(1);
        self.ops.push(Op::IMove { dst: low, src: begin });
        self.ops.push(Op::IMove { dst: step, src: one });
        // Gallop: every parent before `low` fails.
        let gallop = self.label();
        self.int_op(IntOp::Add, probe, low, step);
        self.int_op(IntOp::Sub, probe, probe, one);
        let past_end = self.exit_unless_lt(probe, end);
        let passes = self.segment_passes(child, probe, target, edge);
        let failed = self.jump_unless(passes);
        self.int_op(IntOp::Add, high, probe, one);
        let found = self.ops.len();
        self.ops.push(Op::Jump { to: usize::MAX });
        self.patch(failed);
        self.int_op(IntOp::Add, low, probe, one);
        self.int_op(IntOp::Add, step, step, step);
        self.ops.push(Op::Jump { to: gallop });
        self.patch(past_end);
        self.ops.push(Op::IMove { dst: high, src: end });
        let search = self.label();
        self.ops[found] = Op::Jump { to: search };
        // Binary search of `low..high`, whose last parent passes (or is `end`).
        self.first_passing(low, high, &mut |e, mid| e.segment_passes(child, mid, target, edge))
    }
}

/// Which edge of a segment a parent search tests.
#[derive(Clone, Copy)]
enum SegmentEdge {
    EndsAfter,
    StartsAtOrAfter,
}
