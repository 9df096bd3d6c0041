//! Loops: how a `forall` walks its iterators — every coordinate, one
//! driving iterator, a merge with flags, or a merge by lattice cases — and
//! how the levels it binds are located.

use std::collections::BTreeSet;

use tessera_formats::{Cmp, IntOp, Level, LevelRef};

use super::{Emitter, IterInfo, LoopShape};
use crate::bytecode::{BReg, IReg, Op, Regs};
use crate::cin::{Blocking, Cin, LoopVar, Relation};
use crate::schedule::BoundKind;

impl Emitter<'_> {
    /// Position bounds of an iterator below its parent (empty when the
    /// operand is absent).
    pub(super) fn bounds(&mut self, it: &IterInfo) -> (IReg, IReg) {
        let st = self.states[it.operand].clone();
        let (begin, end) = (self.zero_unless(st.present), self.zero_unless(st.present));
        let skip = self.jump_unless(st.present);
        let level = LevelRef::new(it.operand, it.level);
        let parent = st.parent_pos();
        match st.parent_run_end() {
            None => self.ops.push(Op::PosIter {
                level,
                parent,
                begin,
                end,
            }),
            Some(run_end) => {
                // Chained iterator: children of the whole run of equal parents.
                let last = self.ireg();
                let one = self.iconst(1);
                self.int_op(IntOp::Sub, last, run_end, one);
                let unused = self.ireg();
                self.ops.push(Op::PosIter {
                    level,
                    parent,
                    begin,
                    end: unused,
                });
                let unused2 = self.ireg();
                self.ops.push(Op::PosIter {
                    level,
                    parent: last,
                    begin: unused2,
                    end,
                });
            }
        }
        self.patch(skip);
        self.clamp_to_chunk(it, begin, end);
        self.clamp_to_window(it, begin, end);
        self.clamp_to_coordinates(it, begin, end);
        (begin, end)
    }

    /// The register holding `v`'s coordinate: its loop's, or recovered from
    /// the loops over its blocks (`v = blocks·b + within`) once both run.
    /// Recovered where it is asked for, not kept: the code asking may be
    /// one of several cases of a merge, which run on different paths.
    pub(super) fn coordinate_of(&mut self, v: &LoopVar) -> Option<IReg> {
        if let Some(&c) = self.var_regs.get(v) {
            return Some(c);
        }
        if let Some(fused) = self.lowered.provenance.fused_into(v).cloned() {
            return self.fused_part(&fused, v);
        }
        let (outer, inner, block) = self.lowered.provenance.recovery(v)?;
        let (&outer, &inner) = (self.var_regs.get(&outer)?, self.var_regs.get(&inner)?);
        let (scale, c) = (self.block_size(v, block), self.ireg());
        self.int_op(IntOp::Mul, c, outer, scale);
        self.int_op(IntOp::Add, c, c, inner);
        Some(c)
    }

    /// `v`'s coordinate, a part of the fused `fused = outer·n + inner`:
    /// `fused / n` or `fused % n`, `n` the inner variable's size.
    fn fused_part(&mut self, fused: &LoopVar, v: &LoopVar) -> Option<IReg> {
        let Some(Relation::Fused { outer, inner }) = fused.relation() else {
            return None;
        };
        let f = self.coordinate_of(fused)?;
        let (n, c) = (self.ireg(), self.ireg());
        let index = self.var_index(inner);
        self.ops.push(Op::Dim { dst: n, var: index });
        let op = if **outer == *v { IntOp::Div } else { IntOp::Rem };
        self.int_op(op, c, f, n);
        Some(c)
    }

    /// The size of the blocks `of` is cut into: a constant, or (for a
    /// schedule's `divide`) the run's, which the runtime puts after the
    /// split variables' dimensions.
    pub(super) fn block_size(&mut self, of: &LoopVar, block: Blocking) -> IReg {
        match block {
            Blocking::Size(b) => self.iconst(b as i64),
            Blocking::Parts(_) => {
                let index = self.lowered.block_size_dimension(of).expect("a divided variable");
                let size = self.ireg();
                self.ops.push(Op::Dim { dst: size, var: index });
                size
            }
        }
    }

    /// The number of coordinates a loop over `var` runs through in this
    /// run: its dimension, cut where a schedule's split leaves the last
    /// block short.
    pub(super) fn loop_extent(&mut self, var: &LoopVar) -> IReg {
        let d = self.ireg();
        let exact = self
            .lowered
            .bounds
            .iter()
            .find(|b| b.var == *var && b.kind == BoundKind::MaxExact);
        match exact {
            // Checked before the run: a constant the tiers fold.
            Some(bound) => self.ops.push(Op::IConst {
                dst: d,
                value: bound.size as i64,
            }),
            None => {
                let vi = self.var_index(var);
                self.ops.push(Op::Dim { dst: d, var: vi });
            }
        }
        self.cut_last_block(var, d);
        d
    }

    /// Cuts `d`, the extent of a loop over a variable a schedule's split
    /// made, where the split variable's last block is short: a loop over
    /// the place in a block inside its block's loop runs to
    /// `min(b, n - blocks·b)`; a loop over the blocks inside the place's
    /// loop skips the last block when the place lies past its end.
    fn cut_last_block(&mut self, var: &LoopVar, d: IReg) {
        let (of, block, within) = match var.relation() {
            Some(Relation::WithinBlock { of, block }) => (of, *block, true),
            Some(Relation::Blocks { of, block }) => (of, *block, false),
            _ => return,
        };
        if !self.lowered.provenance.is_scheduled(of) {
            return;
        }
        let (outer, inner, _) = self.lowered.provenance.recovery(of).expect("a split variable");
        let other = if within { outer } else { inner };
        let Some(&other) = self.var_regs.get(&other) else {
            return;
        };
        let (n, start, scale) = (self.ireg(), self.ireg(), self.block_size(of, block));
        let vi = self.var_index(of);
        self.ops.push(Op::Dim { dst: n, var: vi });
        if within {
            self.int_op(IntOp::Mul, start, other, scale);
            self.int_op(IntOp::Sub, n, n, start);
            self.int_op(IntOp::Min, d, d, n);
            return;
        }
        // The last block starts at (d - 1)·b and holds n - (d - 1)·b places.
        let (one, last, fewer, inside) = (self.iconst(1), self.ireg(), self.ireg(), self.breg());
        self.int_op(IntOp::Sub, last, d, one);
        self.int_op(IntOp::Mul, start, last, scale);
        self.int_op(IntOp::Sub, n, n, start);
        self.ops.push(Op::ICmp {
            op: Cmp::Lt,
            dst: inside,
            a: other,
            b: n,
        });
        self.int_op(IntOp::Sub, fewer, d, one);
        self.ops.push(Op::ISelect {
            dst: d,
            cond: inside,
            a: d,
            b: fewer,
        });
    }

    /// `dst = a op b`.
    pub(super) fn int_op(&mut self, op: IntOp, dst: IReg, a: IReg, b: IReg) {
        self.ops.push(Op::IBin { op, dst, a, b });
    }

    pub(super) fn ancestors(&mut self, operand: usize, level: usize) -> Regs {
        let vars = self.states[operand].level_vars[..level].to_vec();
        vars.iter()
            .map(|v| {
                self.coordinate_of(v)
                    .expect("the variables above a level are bound first")
            })
            .collect()
    }

    /// The loop's coordinate register (bound to `var`), its walked
    /// iterators and their position bounds.
    fn start_walk(&mut self, var: &LoopVar, shape: &LoopShape) -> (IReg, Vec<IterInfo>, Vec<(IReg, IReg)>) {
        let coord = self.ireg();
        self.var_regs.insert(var.clone(), coord);
        let walked: Vec<IterInfo> = shape.walked.iter().map(|&i| shape.iterators[i].clone()).collect();
        let cursors = walked.iter().map(|it| self.bounds(it)).collect();
        (coord, walked, cursors)
    }

    pub(super) fn emit_loop(
        &mut self,
        var: &LoopVar,
        body: &Cin,
        shape: &LoopShape,
        involved: &BTreeSet<usize>,
        depth: usize,
    ) {
        let (coord, walked, cursors) = self.start_walk(var, shape);
        let dim = if shape.universe {
            let d = self.loop_extent(var);
            match self.chunk_of(var) {
                Some((begin, end)) => {
                    self.ops.push(Op::IMove { dst: coord, src: begin });
                    self.int_op(IntOp::Min, d, d, end);
                }
                None => match self.window_coordinates(var, d) {
                    Some(first) => {
                        // The loop starts inside the block of positions:
                        // other operands' walked levels start there too
                        // (`bounds` cut them already when the block's
                        // positions are coordinates).
                        let w = self.window.clone().expect("a block of positions is open");
                        for (it, &cursor) in walked.iter().zip(&cursors) {
                            if !self.same_positions(it.operand, w.operand) && !self.cuts_to_window_coordinates(it, &w) {
                                self.cut_to_coordinates(it, cursor, (first, d));
                            }
                        }
                        self.ops.push(Op::IMove { dst: coord, src: first });
                    }
                    None => match self.window_first_coordinate(var, d) {
                        Some(first) => self.ops.push(Op::IMove { dst: coord, src: first }),
                        None => self.ops.push(Op::IConst { dst: coord, value: 0 }),
                    },
                },
            }
            Some(d)
        } else {
            None
        };
        let top = self.label();
        let mut exits = Vec::new();
        for copy in 0..self.unroll_factor(var) {
            let (plan_len, states) = (self.plan.len(), self.states.clone());
            // Continue while some lattice point still has all its walked iterators.
            let ok: Vec<BReg> = cursors
                .iter()
                .map(|&(cur, end)| {
                    let b = self.breg();
                    self.ops.push(Op::ICmp {
                        op: Cmp::Lt,
                        dst: b,
                        a: cur,
                        b: end,
                    });
                    b
                })
                .collect();
            let go = self.breg();
            if let Some(d) = dim {
                self.ops.push(Op::ICmp {
                    op: Cmp::Lt,
                    dst: go,
                    a: coord,
                    b: d,
                });
            } else {
                self.ops.push(Op::BConst { dst: go, value: false });
                let walked_sets: Vec<Vec<usize>> = shape
                    .lattice
                    .points
                    .iter()
                    .map(|point| {
                        shape
                            .walked
                            .iter()
                            .enumerate()
                            .filter(|(_, i)| point.contains(i))
                            .map(|(k, _)| k)
                            .collect()
                    })
                    .collect();
                for (p, pw) in walked_sets.iter().enumerate() {
                    // A point whose walked iterators include another point's
                    // adds nothing to the disjunction: that point is alive too.
                    let covered = walked_sets
                        .iter()
                        .enumerate()
                        .any(|(q, other)| q != p && other.len() < pw.len() && other.iter().all(|k| pw.contains(k)));
                    if pw.is_empty() || covered {
                        continue;
                    }
                    let mut all = self.true_reg;
                    for &k in pw {
                        all = self.and_flags(all, ok[k]);
                    }
                    self.ops.push(Op::BOr { dst: go, a: go, b: all });
                }
            }
            let exit = self.jump_unless(go);

            // Coordinates of the walked iterators; absent ones read as "none".
            let mut coords = Vec::new();
            let mut founds = Vec::new();
            for (k, it) in walked.iter().enumerate() {
                let c = self.iconst(i64::MAX);
                let found = self.breg();
                self.ops.push(Op::BConst {
                    dst: found,
                    value: false,
                });
                let skip = self.jump_unless(ok[k]);
                let ancestors = self.ancestors(it.operand, it.level);
                self.ops.push(Op::PosAccess {
                    level: LevelRef::new(it.operand, it.level),
                    pos: cursors[k].0,
                    ancestors,
                    coord: c,
                    found,
                });
                self.patch(skip);
                // An unlabeled position (empty bucket) has no coordinate.
                let none = self.iconst(i64::MAX);
                self.ops.push(Op::ISelect {
                    dst: c,
                    cond: found,
                    a: c,
                    b: none,
                });
                coords.push(c);
                founds.push(found);
            }
            if dim.is_none() {
                // The merged coordinate: the smallest.
                self.ops.push(Op::IConst {
                    dst: coord,
                    value: i64::MAX,
                });
                for &c in &coords {
                    self.int_op(IntOp::Min, coord, coord, c);
                }
            }
            let mut matched = Vec::new();
            let mut run_ends = Vec::new();
            let any = self.breg();
            self.ops.push(Op::BConst { dst: any, value: false });
            for (k, it) in walked.iter().enumerate() {
                let m = self.breg();
                self.ops.push(Op::ICmp {
                    op: Cmp::Eq,
                    dst: m,
                    a: coords[k],
                    b: coord,
                });
                self.ops.push(Op::BAnd {
                    dst: m,
                    a: m,
                    b: founds[k],
                });
                self.ops.push(Op::BOr { dst: any, a: any, b: m });
                matched.push(m);
                // A non-unique level: the run of positions with this coordinate.
                let run_end = (!it.format.unique).then(|| self.run_end(it, cursors[k], coord, Some(m)));
                run_ends.push(run_end);
            }
            // In a merge, a step where only empty buckets were seen does nothing.
            let skip_body = if dim.is_none() {
                Some(self.jump_unless(any))
            } else {
                None
            };

            // Bind the walked iterators' levels.
            for (k, it) in walked.iter().enumerate() {
                let st_present = self.states[it.operand].present;
                let present = self.and_flags(st_present, matched[k]);
                let st = &mut self.states[it.operand];
                st.bind(cursors[k].0, run_ends[k], present);
                self.hoist_value(it.operand);
            }
            self.bind_located(shape, involved, coord);

            self.stmt(body, depth + 1);

            if let Some(s) = skip_body {
                self.patch(s);
            }
            // Advance the iterators that produced this coordinate (and empty buckets).
            for (k, _it) in walked.iter().enumerate() {
                let step = self.breg();
                let empty = self.breg();
                self.ops.push(Op::BNot {
                    dst: empty,
                    a: founds[k],
                });
                self.ops.push(Op::BAnd {
                    dst: empty,
                    a: empty,
                    b: ok[k],
                });
                self.ops.push(Op::BOr {
                    dst: step,
                    a: matched[k],
                    b: empty,
                });
                let skip = self.jump_unless(step);
                match run_ends[k] {
                    Some(e) => self.ops.push(Op::IMove {
                        dst: cursors[k].0,
                        src: e,
                    }),
                    None => {
                        let one = self.iconst(1);
                        self.int_op(IntOp::Add, cursors[k].0, cursors[k].0, one);
                    }
                }
                self.patch(skip);
            }
            if dim.is_some() {
                let one = self.iconst(1);
                self.int_op(IntOp::Add, coord, coord, one);
            }
            exits.push(exit);
            self.end_unrolled_copy(copy, plan_len, states);
        }
        self.ops.push(Op::Jump { to: top });
        for exit in exits {
            self.patch(exit);
        }
    }

    /// Binds the loop's located iterators at `coord`, then every deeper
    /// level of an involved operand whose variable is bound by now.
    pub(super) fn bind_located(&mut self, shape: &LoopShape, involved: &BTreeSet<usize>, coord: IReg) {
        let located: Vec<IterInfo> = shape.located.iter().map(|&i| shape.iterators[i].clone()).collect();
        for it in &located {
            self.locate_level(it.operand, it.level, coord);
        }
        let pending: Vec<usize> = involved
            .iter()
            .copied()
            .filter(|&a| self.states[a].done < self.states[a].level_vars.len())
            .collect();
        for a in pending {
            loop {
                let st = &self.states[a];
                if st.done >= st.level_vars.len() {
                    break;
                }
                let (v, level) = (st.level_vars[st.done].clone(), st.done);
                let Some(c) = self.coordinate_of(&v) else {
                    break;
                };
                self.locate_level(a, level, c);
            }
        }
    }

    /// The end of the run of positions of `it`'s non-unique level from
    /// `cursor` (below `end`) whose coordinate is `coord`: a scan from the
    /// next position, run only when `when` holds (the position is the
    /// loop's coordinate). The interpreter runs it on the level's
    /// coordinate array as one op ([`Op::RunEnd`]) when there is one.
    fn run_end(&mut self, it: &IterInfo, (cursor, end): (IReg, IReg), coord: IReg, when: Option<BReg>) -> IReg {
        let e = self.ireg();
        let one = self.iconst(1);
        self.int_op(IntOp::Add, e, cursor, one);
        let skip = when.map(|m| self.jump_unless(m));
        let scan = self.label();
        let more = self.breg();
        self.ops.push(Op::ICmp {
            op: Cmp::Lt,
            dst: more,
            a: e,
            b: end,
        });
        let stop = self.jump_unless(more);
        let (next, next_found, same) = (self.ireg(), self.breg(), self.breg());
        let ancestors = self.ancestors(it.operand, it.level);
        self.ops.push(Op::PosAccess {
            level: LevelRef::new(it.operand, it.level),
            pos: e,
            ancestors,
            coord: next,
            found: next_found,
        });
        self.ops.push(Op::ICmp {
            op: Cmp::Eq,
            dst: same,
            a: next,
            b: coord,
        });
        let differs = self.jump_unless(same);
        self.int_op(IntOp::Add, e, e, one);
        self.ops.push(Op::Jump { to: scan });
        self.patch(stop);
        self.patch(differs);
        if let Some(skip) = skip {
            self.patch(skip);
        }
        if Self::scans_coordinates(it) {
            let resume = self.ops.len() + 1;
            let level = LevelRef::new(it.operand, it.level);
            self.insert_op(
                scan,
                Op::RunEnd {
                    level,
                    pos: e,
                    end,
                    coord,
                    resume,
                },
            );
        }
        e
    }

    /// Whether the coordinates of `it`'s level are its coordinate array,
    /// position by position (a run's end is then a scan of the array).
    fn scans_coordinates(it: &IterInfo) -> bool {
        it.format.coordinate_array().is_some() && it.format.properties().compact
    }

    /// Whether [`Self::emit_driven_loop`] walks `it` when it is the loop's
    /// only walked iterator: position by position when unique, run by run
    /// when its coordinates are an array.
    pub(super) fn drives_alone(it: &IterInfo) -> bool {
        it.format.unique || Self::scans_coordinates(it)
    }

    /// A loop driven by one iterator: walk its positions and run the body
    /// at each labelled one. The common case (a row of CSR, a fibre of
    /// CSF) without the bookkeeping of a merge. A non-unique level whose
    /// coordinates are an array (COO's rows) is walked run by run of equal
    /// coordinates, the body run once per run. Returns the index of the
    /// loop's test.
    pub(super) fn emit_driven_loop(
        &mut self,
        var: &LoopVar,
        body: &Cin,
        shape: &LoopShape,
        involved: &BTreeSet<usize>,
        depth: usize,
    ) -> usize {
        let coord = self.ireg();
        self.var_regs.insert(var.clone(), coord);
        let it = shape.iterators[shape.walked[0]].clone();
        let (cursor, end) = self.bounds(&it);
        let one = self.iconst(1);
        let top = self.label();
        let mut exits = Vec::new();
        for copy in 0..self.unroll_factor(var) {
            let (plan_len, states) = (self.plan.len(), self.states.clone());
            let more = self.breg();
            self.ops.push(Op::ICmp {
                op: Cmp::Lt,
                dst: more,
                a: cursor,
                b: end,
            });
            exits.push(self.jump_unless(more));
            let found = self.breg();
            let ancestors = self.ancestors(it.operand, it.level);
            self.ops.push(Op::PosAccess {
                level: LevelRef::new(it.operand, it.level),
                pos: cursor,
                ancestors,
                coord,
                found,
            });
            let run_end = (!it.format.unique).then(|| self.run_end(&it, (cursor, end), coord, None));
            // An unlabelled position (an empty bucket) holds no coordinate.
            // The loop runs only when the operand is present (its bounds are
            // empty otherwise) and the body only at labelled positions.
            self.body_and_advance(
                (it.operand, cursor, coord),
                (found, run_end),
                (shape, involved),
                body,
                depth,
                (cursor, one),
            );
            self.end_unrolled_copy(copy, plan_len, states);
        }
        self.ops.push(Op::Jump { to: top });
        for exit in exits {
            self.patch(exit);
        }
        top
    }

    /// How many copies of its body the loop over `var` runs per trip back
    /// to its test (a schedule's `unroll`; 1 otherwise).
    pub(super) fn unroll_factor(&self, var: &LoopVar) -> usize {
        // A window's loop runs over the split variable, in place of the
        // place in its block the schedule names.
        let var = match &self.coordinate_window {
            Some(w) if w.var == *var => &w.place,
            _ => var,
        };
        self.lowered
            .unrolled
            .iter()
            .find(|(v, _)| v == var)
            .map_or(1, |&(_, factor)| factor)
    }

    /// Whether the loop over `var` or a loop in `body` is unrolled: block
    /// ops that would replace the loops do not apply then.
    pub(super) fn unrolls_within(&self, var: &LoopVar, body: &Cin) -> bool {
        // A vector loop's lanes may be a block op's SIMD lanes instead.
        let unrolled = |v: &LoopVar| self.unroll_factor(v) > 1 && self.lowered.vectorized.as_ref() != Some(v);
        unrolled(var) || body.any(&|c| matches!(c, Cin::Forall { var, .. } if unrolled(var)))
    }

    /// Ends copy `copy` of an unrolled loop's iteration: the next copy
    /// starts from the same operand states, and the plan describes the
    /// body once.
    fn end_unrolled_copy(&mut self, copy: usize, plan_len: usize, states: Vec<super::OperandState>) {
        if copy > 0 {
            self.plan.truncate(plan_len);
        }
        self.states = states;
    }

    /// The body of a loop driven by one level of `operand`: that level
    /// bound at `pos` (the loop's coordinate `coord`), the located levels
    /// bound, the body run unless `found` fails; then `step` advances and
    /// loops.
    pub(super) fn body_then_step(
        &mut self,
        (operand, pos, coord): (usize, IReg, IReg),
        found: BReg,
        (shape, involved): (&LoopShape, &BTreeSet<usize>),
        body: &Cin,
        depth: usize,
        step: LoopStep,
    ) {
        self.body_and_advance(
            (operand, pos, coord),
            (found, None),
            (shape, involved),
            body,
            depth,
            (step.counter, step.one),
        );
        self.ops.push(Op::Jump { to: step.top });
        self.patch(step.exit);
    }

    /// [`Self::body_then_step`] without the jump back: the body, then
    /// `counter += one`.
    fn body_and_advance(
        &mut self,
        (operand, pos, coord): (usize, IReg, IReg),
        (found, run_end): (BReg, Option<IReg>),
        (shape, involved): (&LoopShape, &BTreeSet<usize>),
        body: &Cin,
        depth: usize,
        (counter, one): (IReg, IReg),
    ) {
        let skip = self.jump_unless(found);
        self.states[operand].bind(pos, run_end, self.true_reg);
        self.hoist_value(operand);
        self.bind_located(shape, involved, coord);
        self.stmt(body, depth + 1);
        self.patch(skip);
        match run_end {
            // The next run; a run ends past its first position.
            Some(end) => self.ops.push(Op::IMove { dst: counter, src: end }),
            None => self.int_op(IntOp::Add, counter, counter, one),
        }
    }

    /// Loads an input's value as soon as all its levels are bound and it is
    /// known to be stored, for the code below to use.
    pub(super) fn hoist_value(&mut self, a: usize) {
        let st = &self.states[a];
        if a >= self.lowered.operands.len() || st.done < st.level_vars.len() || st.present != self.true_reg {
            return;
        }
        let pos = st.position();
        let dst = self.freg();
        self.ops.push(Op::LoadValue {
            operand: a as u32,
            pos,
            dst,
        });
        self.states[a].value = Some(dst);
    }

    /// Whether a merge runs as one loop per lattice point with a case per
    /// point below it: its iterators label every position in order, once
    /// each, and the lattice is small (the body is emitted once per case).
    pub(super) fn merges_by_cases(&self, shape: &LoopShape, body: &Cin) -> bool {
        // Nested merges multiply their cases: bound the copies of any body.
        const MOST_COPIES: usize = 16;
        // The loop of a point ignores the iterators outside it. That is
        // right when they could only have been annihilated (an iterator of
        // the point ran out), not under a quotient, which is computed
        // wherever its operands are (division has the dense meaning).
        !Self::effective(body).divides_or_calls()
            && !shape.universe
            && shape.walked.len() >= 2
            && shape.lattice.points.len() <= MOST_COPIES
            && self.copies * Self::cases(&Self::walked_points(shape)) <= MOST_COPIES
            && shape.walked.iter().all(|&i| {
                let props = shape.iterators[i].format.properties();
                props.compact && props.ordered && props.unique
            })
    }

    /// The bodies a merge by cases emits: one per point and point below it.
    pub(super) fn cases(points: &[Vec<usize>]) -> usize {
        points
            .iter()
            .map(|p| points.iter().filter(|q| q.iter().all(|k| p.contains(k))).count())
            .sum()
    }

    /// The walked iterators (indices into `shape.walked`) of each lattice
    /// point, distinct, largest first.
    pub(super) fn walked_points(shape: &LoopShape) -> Vec<Vec<usize>> {
        let mut sets: Vec<Vec<usize>> = Vec::new();
        for point in &shape.lattice.points {
            let set: Vec<usize> = (0..shape.walked.len())
                .filter(|&k| point.contains(&shape.walked[k]))
                .collect();
            if !set.is_empty() && !sets.contains(&set) {
                sets.push(set);
            }
        }
        sets.sort_by_key(|set| std::cmp::Reverse(set.len()));
        sets
    }

    /// A merge as the merge-lattice paper runs it: one loop per lattice
    /// point while all of its iterators have positions left, and in it one
    /// case per point below it, tried largest first. Each case's body knows
    /// which operands are present, so it reads no flags.
    pub(super) fn emit_merge_loops(
        &mut self,
        var: &LoopVar,
        body: &Cin,
        shape: &LoopShape,
        involved: &BTreeSet<usize>,
        depth: usize,
    ) {
        let (coord, walked, cursors) = self.start_walk(var, shape);
        let one = self.iconst(1);
        let points = Self::walked_points(shape);
        let outer_copies = self.copies;
        self.copies *= Self::cases(&points);
        for point in &points {
            let top = self.label();
            let mut alive = self.true_reg;
            for &k in point {
                let more = self.breg();
                self.ops.push(Op::ICmp {
                    op: Cmp::Lt,
                    dst: more,
                    a: cursors[k].0,
                    b: cursors[k].1,
                });
                alive = self.and_flags(alive, more);
            }
            let exit = self.jump_unless(alive);
            let mut coords = Vec::new();
            for &k in point {
                let (c, found) = (self.ireg(), self.breg());
                let ancestors = self.ancestors(walked[k].operand, walked[k].level);
                self.ops.push(Op::PosAccess {
                    level: LevelRef::new(walked[k].operand, walked[k].level),
                    pos: cursors[k].0,
                    ancestors,
                    coord: c,
                    found,
                });
                coords.push(c);
            }
            self.ops.push(Op::IMove {
                dst: coord,
                src: coords[0],
            });
            for &c in &coords[1..] {
                self.int_op(IntOp::Min, coord, coord, c);
            }
            let mut matched = vec![self.false_reg; walked.len()];
            for (&k, &c) in point.iter().zip(&coords) {
                if point.len() == 1 {
                    matched[k] = self.true_reg;
                    continue;
                }
                let m = self.breg();
                self.ops.push(Op::ICmp {
                    op: Cmp::Eq,
                    dst: m,
                    a: c,
                    b: coord,
                });
                matched[k] = m;
            }
            let mut done = Vec::new();
            let cases: Vec<&Vec<usize>> = points.iter().filter(|q| q.iter().all(|k| point.contains(k))).collect();
            for (c, case) in cases.iter().enumerate() {
                let mut holds = self.true_reg;
                for &k in case.iter() {
                    holds = self.and_flags(holds, matched[k]);
                }
                let next_case = self.jump_unless(holds);
                let saved = self.states.clone();
                for (k, it) in walked.iter().enumerate() {
                    // In this case the case's iterators are at the
                    // coordinate; another of the loop's is known not to be
                    // when it would have completed an earlier case, and may
                    // or may not be otherwise (a point need not list every
                    // iterator that can be present, e.g. under a division).
                    let st_present = self.states[it.operand].present;
                    let completes_earlier = |k: usize| {
                        cases[..c]
                            .iter()
                            .any(|earlier| earlier.iter().all(|j| *j == k || case.contains(j)))
                    };
                    let present = if case.contains(&k) {
                        st_present
                    } else if !point.contains(&k) || completes_earlier(k) {
                        self.false_reg
                    } else {
                        self.and_flags(st_present, matched[k])
                    };
                    self.states[it.operand].bind(cursors[k].0, None, present);
                    self.hoist_value(it.operand);
                }
                self.bind_located(shape, involved, coord);
                self.stmt(body, depth + 1);
                self.states = saved;
                self.ops.push(Op::Jump { to: usize::MAX });
                done.push(self.ops.len() - 1);
                self.patch(next_case);
            }
            for at in done {
                self.patch(at);
            }
            // Advance the iterators at the merged coordinate.
            for &k in point {
                let skip = self.jump_unless(matched[k]);
                self.int_op(IntOp::Add, cursors[k].0, cursors[k].0, one);
                self.patch(skip);
            }
            self.ops.push(Op::Jump { to: top });
            self.patch(exit);
        }
        self.copies = outer_copies;
    }

    /// Locates level `level` of operand `a` at coordinate `coord`.
    pub(super) fn locate_level(&mut self, a: usize, level: usize, coord: IReg) {
        let st = self.states[a].clone();
        let pos = self.zero_unless(st.present);
        let found = self.breg();
        if st.present != self.true_reg {
            self.ops.push(Op::BConst {
                dst: found,
                value: false,
            });
        }
        let skip = self.jump_unless(st.present);
        let ancestors = self.ancestors(a, level);
        self.ops.push(Op::Locate {
            level: LevelRef::new(a, level),
            parent: st.parent_pos(),
            ancestors,
            coord,
            pos,
            found,
        });
        self.patch(skip);
        // A full level holds every coordinate: locating cannot miss.
        let present = if st.formats[level].properties().full {
            st.present
        } else {
            self.and_flags(st.present, found)
        };
        let present = match self.window_holds(a, level, pos) {
            Some(inside) => self.and_flags(present, inside),
            None => present,
        };
        self.states[a].bind(pos, None, present);
        self.hoist_value(a);
    }
}

/// How a loop moves on: `counter += one`, back to `top`; `exit` is the
/// jump out of it, patched after the loop.
pub(super) struct LoopStep {
    pub counter: IReg,
    pub one: IReg,
    pub top: usize,
    pub exit: usize,
}
