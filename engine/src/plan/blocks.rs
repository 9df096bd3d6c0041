//! Block ops: loops whose whole body is a known kernel shape (a dot
//! product per row, a dense row update) emitted as one bytecode op.

use smallvec::SmallVec;
use tessera_formats::{Assembly, Cmp, Iteration, Level, LevelKind, LevelRef, Projection, Split};

use super::state::OperandState;
use super::{Emitter, LoopShape};
use crate::bytecode::{AxpyFactor, BReg, DotFactor, FReg, FloatOp, IReg, Op, Regs, RowOp, RunLength, ValueRun};
use crate::cin::{Cin, CinExpr, LoopVar, Relation, Target};
use crate::notation::{BinaryOp, Func, Reduction, Times, SEMIRINGS};

impl Emitter<'_> {
    /// The walked iterator of a loop whose body is a product with one factor
    /// from it, when that iterator is a compact, ordered, unique last level
    /// with a coordinate view (its row is read as a block); and the
    /// product's accesses.
    fn row_driver(&self, shape: &LoopShape, expr: &CinExpr) -> Option<(super::IterInfo, Vec<usize>)> {
        let driver = shape.iterators[shape.walked[0]].clone();
        let dst = &self.states[driver.operand];
        let props = driver.format.properties();
        // Below a run of equal parents (COO's rows) the row is the
        // children of the whole run, which follow one another (compact):
        // `bounds` gives them, and the ops run them in order as the loop.
        if !(props.compact && props.ordered && props.unique)
            || driver.level + 1 != dst.level_vars.len()
            || !matches!(driver.format.kind, LevelKind::Compressed | LevelKind::Singleton)
        {
            return None;
        }
        let mut accesses = Vec::new();
        if !product_of_accesses(expr, &mut accesses) || accesses.iter().filter(|&&a| a == driver.operand).count() != 1 {
            return None;
        }
        Some((driver, accesses))
    }

    /// The SpMM fast path one level up: a loop driven by one compact level
    /// whose body is a dense row update (see [`Self::try_dense_axpy`]) of
    /// rows located by the loop's coordinate.
    pub(super) fn try_row_axpy(&mut self, var: &LoopVar, body: &Cin, shape: &LoopShape) -> bool {
        let Some(out) = self.output_operand() else {
            return false;
        };
        if self.workspace.is_some() || shape.universe || shape.walked.len() != 1 {
            return false;
        }
        let Cin::Forall {
            var: inner,
            body: inner_body,
        } = body
        else {
            return false;
        };
        let Cin::Assign {
            target: Target::Output,
            expr,
        } = inner_body.as_ref()
        else {
            return false;
        };
        let Some((driver, accesses)) = self.row_driver(shape, expr) else {
            return false;
        };
        let dst = &self.states[driver.operand];
        let ost = &self.states[out];
        if !ost.next_is_dense_last_at(inner) {
            return false;
        }
        let dense_last_at = |st: &OperandState, k: usize, v: &LoopVar| {
            k + 1 == st.level_vars.len() && st.level_vars[k] == *v && st.formats[k].kind == LevelKind::Dense
        };
        let mut fixed = Vec::new();
        let mut factors: SmallVec<[AxpyFactor; 2]> = SmallVec::new();
        let mut presences = vec![dst.present];
        for &a in &accesses {
            if a == driver.operand {
                continue;
            }
            let st = &self.states[a];
            presences.push(st.present);
            if st.done == st.level_vars.len() {
                fixed.push(a);
            } else if dense_last_at(st, st.done, inner) {
                factors.push(AxpyFactor {
                    operand: a as u32,
                    level: LevelRef::new(a, st.done),
                    parent: st.parent_pos(),
                    via: None,
                });
            } else if st.level_vars[st.done] == *var
                && st.formats[st.done].kind == LevelKind::Dense
                && dense_last_at(st, st.done + 1, inner)
            {
                factors.push(AxpyFactor {
                    operand: a as u32,
                    level: LevelRef::new(a, st.done + 1),
                    parent: st.parent_pos(),
                    via: Some(LevelRef::new(a, st.done)),
                });
            } else {
                return false;
            }
        }
        let (out_level, out_parent) = (LevelRef::new(out, ost.done), ost.parent_pos());
        let skip = self.skip_unless_all(&presences);
        let scale = self.product_of_values(&fixed);
        let (begin, end) = self.bounds(&driver);
        self.ops.push(Op::RowAxpy {
            driver: LevelRef::new(driver.operand, driver.level),
            begin,
            end,
            scale,
            factors,
            out: out_level,
            out_parent,
        });
        self.patch(skip);
        true
    }

    /// The sum, difference or product of two stored rows appended as an
    /// output row: a merge of two compact, ordered, unique last levels
    /// whose body appends `a op b` at the loop's coordinate, the output's
    /// last level. One [`Op::MergeRows`] per row.
    pub(super) fn try_merge_rows(&mut self, var: &LoopVar, body: &Cin, shape: &LoopShape) -> bool {
        if self.workspace.is_some()
            || self.output_operand().is_some()
            || self.lowered.assembly != crate::cin::OutputAssembly::Append
            || shape.universe
            || shape.walked.len() != 2
            || shape.iterators.len() != 2
        {
            return false;
        }
        // Rows of single values, or of blocks: the output's levels below
        // the loop's are dense block levels, looped over inside it.
        let out_vars = self.lowered.output.level_vars();
        let Some(at) = out_vars.iter().position(|v| v == var) else {
            return false;
        };
        let inner = &out_vars[at + 1..];
        let Some(block) = self.output_block(at + 1) else {
            return false;
        };
        // Blocks after the first of a row are appended at once: the row's
        // level must append (hold its coordinates in a run).
        let row_level = self.lowered.output.format.level(at);
        if !block.is_empty() && row_level.capabilities().assembly != Some(Assembly::Append) {
            return false;
        }
        let Some(MergedPair { a, b, op, scales }) = within_loops(body, inner).and_then(|body| self.merged_pair(body))
        else {
            return false;
        };
        let row = |operand: usize| {
            shape
                .iterators
                .iter()
                .find(|it| {
                    it.operand == operand
                        && self.mergeable_row_of_blocks(operand, it.level, inner)
                        && self.states[operand].parent_run_end().is_none()
                })
                .cloned()
        };
        let (Some(row_a), Some(row_b)) = (row(a), row(b)) else {
            return false;
        };
        let Some(prefix) = self.bound_registers(&out_vars[..at]) else {
            return false;
        };
        let (a_begin, a_end) = self.bounds(&row_a);
        let (b_begin, b_end) = self.bounds(&row_b);
        let scales = self.merge_scales(scales);
        self.ops.push(Op::MergeRows {
            a: LevelRef::new(row_a.operand, row_a.level),
            a_begin,
            a_end,
            b: LevelRef::new(row_b.operand, row_b.level),
            b_begin,
            b_end,
            op,
            scales,
            prefix,
            block,
        });
        true
    }

    /// The sizes of the output's levels from `from` on, when each is a
    /// dense level of a block (`Split::Inner`): BCSR's blocks below its
    /// block columns. Empty when there are none.
    fn output_block(&self, from: usize) -> Option<Vec<u32>> {
        self.lowered.output.format.levels()[from..]
            .iter()
            .map(|l| match l.projection {
                Projection::Mode {
                    split: Split::Inner(size),
                    ..
                } if l.level.kind == LevelKind::Dense => u32::try_from(size).ok(),
                _ => None,
            })
            .collect()
    }

    /// Every row of [`Self::try_merge_rows`] at once: a loop over every
    /// coordinate of a dense level of both operands, each with its
    /// mergeable row below, whose body is the merge of the rows into the
    /// output's last two levels. One [`Op::RowsMerge`] for the loop (or
    /// the chunk of a parallel run).
    pub(super) fn try_rows_merge(&mut self, var: &LoopVar, body: &Cin, shape: &LoopShape) -> bool {
        if self.workspace.is_some()
            || self.output_operand().is_some()
            || self.lowered.assembly != crate::cin::OutputAssembly::Append
            || !shape.universe
            || !shape.walked.is_empty()
            || shape.iterators.len() != 2
        {
            return false;
        }
        let Cin::Forall { var: inner, body } = body else {
            return false;
        };
        let Some(MergedPair { a, b, op, scales }) = self.merged_pair(body) else {
            return false;
        };
        // Each operand: a dense level at `var` still to bind, always
        // present, and a mergeable row at `inner` below it.
        let rows_of = |operand: usize| {
            let st = &self.states[operand];
            let fits = st.done + 2 == st.level_vars.len()
                && st.level_vars[st.done] == *var
                && st.level_vars[st.done + 1] == *inner
                && st.formats[st.done].coordinate_relation() == tessera_formats::CoordinateRelation::Positional
                && st.present == self.true_reg
                && st.parent_run_end().is_none()
                && self.mergeable_row(operand, st.done + 1);
            fits.then(|| (LevelRef::new(operand, st.done), st.parent_pos()))
        };
        let (Some((a_rows, a_parent)), Some((b_rows, b_parent))) = (rows_of(a), rows_of(b)) else {
            return false;
        };
        let out_vars = self.lowered.output.level_vars();
        let n = out_vars.len();
        if n < 2 || out_vars[n - 1] != *inner || out_vars[n - 2] != *var {
            return false;
        }
        let Some(prefix) = out_vars[..n - 2]
            .iter()
            .map(|v| self.var_regs.get(v).copied())
            .collect::<Option<Regs>>()
        else {
            return false;
        };
        let (first, last) = match self.chunk_of(var) {
            Some(range) => range,
            None => (self.iconst(0), self.loop_extent(var)),
        };
        let scales = self.merge_scales(scales);
        self.ops.push(Op::RowsMerge {
            a_rows,
            a_parent,
            b_rows,
            b_parent,
            first,
            last,
            op,
            scales,
            prefix,
        });
        true
    }

    /// Whether level `level` of operand `operand` is a row the merges
    /// read: compressed, compact, ordered and unique, and the operand's last.
    fn mergeable_row(&self, operand: usize, level: usize) -> bool {
        self.mergeable_row_of_blocks(operand, level, &[])
    }

    /// [`Self::mergeable_row`] with dense levels over `block` below it
    /// (BCSR's block row, its blocks' values consecutive per position).
    fn mergeable_row_of_blocks(&self, operand: usize, level: usize, block: &[LoopVar]) -> bool {
        let st = &self.states[operand];
        let format = st.formats[level];
        let props = format.properties();
        format.kind == LevelKind::Compressed
            && props.compact
            && props.ordered
            && props.unique
            && st.level_vars[level + 1..] == *block
            && st.formats[level + 1..].iter().all(|f| f.kind == LevelKind::Dense)
    }

    /// The Gustavson row of SpGEMM: a loop driven by one compact last level
    /// whose body adds `scale * value[p]` into the workspace at the loop's
    /// coordinate, every other factor fixed by outer loops. One op scatters
    /// the whole row.
    pub(super) fn try_workspace_axpy(&mut self, var: &LoopVar, body: &Cin, shape: &LoopShape) -> bool {
        let Some(ws) = self.workspace.clone() else {
            return false;
        };
        if shape.universe || shape.walked.len() != 1 || shape.iterators.len() != 1 || ws.last() != Some(var) {
            return false;
        }
        let Cin::Assign {
            target: Target::Output,
            expr,
        } = body
        else {
            return false;
        };
        let Some((driver, accesses)) = self.row_driver(shape, expr) else {
            return false;
        };
        let dst = &self.states[driver.operand];
        let mut fixed = Vec::new();
        let mut presences = vec![dst.present];
        for &a in &accesses {
            if a == driver.operand {
                continue;
            }
            let st = &self.states[a];
            if st.done != st.level_vars.len() {
                return false;
            }
            presences.push(st.present);
            fixed.push(a);
        }
        let Some(prefix) = ws[..ws.len() - 1].iter().map(|v| self.coordinate_of(v)).collect() else {
            return false;
        };
        let skip = self.skip_unless_all(&presences);
        let scale = self.product_of_values(&fixed);
        let (begin, end) = self.bounds(&driver);
        self.ops.push(Op::WorkspaceAxpy {
            driver: LevelRef::new(driver.operand, driver.level),
            begin,
            end,
            scale,
            prefix,
        });
        self.patch(skip);
        true
    }

    /// The SpMM fast path: a loop over every coordinate whose body adds a
    /// product into the dense output's last level, every factor either
    /// fixed by outer loops or a dense last level at this loop.
    pub(super) fn try_dense_axpy(&mut self, var: &LoopVar, body: &Cin, shape: &LoopShape) -> bool {
        // The block covers every coordinate: a chunked loop runs as a loop.
        if self.workspace.is_some() || !shape.universe || !shape.walked.is_empty() || self.chunk_of(var).is_some() {
            return false;
        }
        let Cin::Assign { target, expr } = body else {
            return false;
        };
        // The row it adds into: the dense output's last level, or a vector
        // temporary over this loop's variable that sums.
        let into = match target {
            Target::Output => match self.output_operand() {
                Some(out) if self.states[out].next_is_dense_last_at(var) => {
                    let ost = &self.states[out];
                    RowInto::Output(LevelRef::new(out, ost.done), ost.parent_pos())
                }
                _ => return false,
            },
            Target::TempAt(t, index) if index == var && self.temps[t].reduction == Reduction::Sum => {
                match self.temps[t].vector {
                    Some(temp) => RowInto::Temp(temp),
                    None => return false,
                }
            }
            _ => return false,
        };
        let mut accesses = Vec::new();
        // A temporary is a factor of an update of the output only.
        let temp = match self.product_with_temp(expr, var, &mut accesses) {
            Some(None) => None,
            Some(Some(buffer)) if matches!(into, RowInto::Output(..)) => Some(buffer),
            _ => return false,
        };
        let mut fixed = Vec::new();
        let mut factors: SmallVec<[DotFactor; 2]> = SmallVec::new();
        let mut presences = Vec::new();
        for &a in &accesses {
            let st = &self.states[a];
            presences.push(st.present);
            if st.done == st.level_vars.len() {
                fixed.push(a);
            } else if st.next_is_dense_last_at(var) {
                factors.push(DotFactor {
                    operand: a as u32,
                    level: LevelRef::new(a, st.done),
                    parent: st.parent_pos(),
                });
            } else {
                return false;
            }
        }
        let skip = self.skip_unless_all(&presences);
        let scale = self.product_of_values(&fixed);
        self.ops.push(match into {
            RowInto::Output(out, out_parent) => Op::DenseAxpy {
                scale,
                factors,
                temp,
                out,
                out_parent,
            },
            RowInto::Temp(temp) => Op::TempAxpy { temp, scale, factors },
        });
        self.patch(skip);
        true
    }

    /// The SpMV fast path: a loop over every coordinate of a dense level of
    /// one operand whose body is `out(.., v) += t where t = Σ dot` over that
    /// operand's compact child level, the other factors dense last levels,
    /// the output dense. Runs as one [`Op::RowsDot`].
    pub(super) fn try_rows_dot(&mut self, var: &LoopVar, body: &Cin, shape: &LoopShape) -> bool {
        let Some(out) = self.output_operand() else {
            return false;
        };
        let Some((inner, expr, reduction)) = super::runs::reduction_of_terms(body) else {
            return false;
        };
        if !shape.universe || !shape.walked.is_empty() {
            return false;
        }
        // The semiring whose `⊕` the reduction is and whose `⊗` joins the
        // accesses.
        let mut factors_ops = Vec::new();
        let Some(semiring) = SEMIRINGS.into_iter().find(|s| {
            factors_ops.clear();
            s.plus() == reduction && chain_of_accesses(expr, s.times(), &mut factors_ops)
        }) else {
            return false;
        };
        // Absent entries of the rows must annihilate `⊗` and vanish in
        // `⊕` (max-times over values of any sign has no such zero), and
        // the other factors are stored everywhere: then only the stored
        // entries of each row count.
        let fill = |a: usize| self.lowered.operands[a].fill;
        let stored_everywhere = |a: usize| self.states[a].next_is_dense_last_at(inner);
        let zero = semiring.zero();
        if zero != semiring.plus().identity() || factors_ops.iter().any(|&a| !stored_everywhere(a) && fill(a) != zero) {
            return false;
        }
        let every_row = self.fill_of(&Self::effective(body)) != Some(self.neutral(&Target::Output));
        // The rows operand: a dense level at `var`, then a compact level at `inner`, last.
        let is_rows = |st: &OperandState| {
            st.done + 2 == st.level_vars.len()
                && st.level_vars[st.done] == *var
                && st.formats[st.done].kind == LevelKind::Dense
                && st.level_vars[st.done + 1] == *inner
                && {
                    let f = st.formats[st.done + 1];
                    let p = f.properties();
                    p.compact && p.ordered && p.unique && matches!(f.kind, LevelKind::Compressed)
                }
        };
        let rows_ops: Vec<usize> = factors_ops
            .iter()
            .copied()
            .filter(|&a| is_rows(&self.states[a]))
            .collect();
        let [rows_op] = rows_ops[..] else {
            return false;
        };
        if factors_ops.iter().filter(|&&a| a == rows_op).count() != 1 {
            return false;
        }
        let mut factors: SmallVec<[DotFactor; 2]> = SmallVec::new();
        let mut presences = vec![self.states[rows_op].present];
        for &a in &factors_ops {
            if a == rows_op {
                continue;
            }
            let st = &self.states[a];
            let ok = st.next_is_dense_last_at(inner);
            if !ok {
                return false;
            }
            factors.push(DotFactor {
                operand: a as u32,
                level: LevelRef::new(a, st.done),
                parent: st.parent_pos(),
            });
            presences.push(st.present);
        }
        let ost = &self.states[out];
        if !(ost.done + 1 == ost.level_vars.len() && ost.level_vars[ost.done] == *var) {
            return false;
        }
        let (out_level, out_parent) = (LevelRef::new(out, ost.done), ost.parent_pos());
        let rst = &self.states[rows_op];
        let (rows, parent, driver) = (
            LevelRef::new(rows_op, rst.done),
            rst.parent_pos(),
            LevelRef::new(rows_op, rst.done + 1),
        );
        let skip = self.skip_unless_all(&presences);
        let (first, last) = match self.chunk_of(var) {
            Some(range) => range,
            None => (self.iconst(0), self.loop_extent(var)),
        };
        self.ops.push(Op::RowsDot {
            semiring,
            every_row,
            rows,
            parent,
            first,
            last,
            driver,
            factors,
            out: out_level,
            out_parent,
        });
        self.patch(skip);
        true
    }

    /// An inner product of dense rows: a loop over every coordinate whose
    /// body adds a product of dense last levels into a temporary, as
    /// SDDMM's rank loop or a row of a BCSR block times x. A factor is
    /// located by the loop's coordinate, or by a variable recovered from it
    /// (`j = j/b·b + j%b` in a loop over `j%b`: the run starts at the
    /// block's first coordinate). One [`Op::DenseDot`].
    pub(super) fn try_dense_dot(&mut self, var: &LoopVar, body: &Cin, shape: &LoopShape) -> bool {
        let Cin::Assign {
            target: Target::Temp(t),
            expr,
        } = body
        else {
            return false;
        };
        if self.temps[t].reduction != Reduction::Sum {
            return false;
        }
        // The op covers every coordinate: a chunked loop runs as a loop.
        if !shape.universe || !shape.walked.is_empty() || self.chunk_of(var).is_some() {
            return false;
        }
        let mut accesses = Vec::new();
        if !product_of_accesses(expr, &mut accesses) || accesses.is_empty() {
            return false;
        }
        let block = match var.relation() {
            Some(Relation::WithinBlock { of, block }) => Some((of.as_ref().clone(), *block)),
            _ => None,
        };
        // Each factor: its operand, and where its run starts (the first
        // block's coordinate of a recovered variable, 0 otherwise).
        let mut runs: Vec<(usize, Option<LoopVar>)> = Vec::new();
        let mut presences = Vec::new();
        let mut fixed = Vec::new();
        for &a in &accesses {
            let st = &self.states[a];
            presences.push(st.present);
            if st.done == st.level_vars.len() {
                // Bound by outer loops: one value for the whole row.
                fixed.push(a);
                continue;
            }
            let dense_last =
                st.done + 1 == st.level_vars.len() && st.formats[st.done].kind == tessera_formats::LevelKind::Dense;
            let level_var = &st.level_vars[st.done];
            if dense_last && level_var == var && shape.located.iter().any(|&i| shape.iterators[i].operand == a) {
                runs.push((a, None));
            } else if dense_last && block.as_ref().is_some_and(|(of, _)| of == level_var) {
                runs.push((a, Some(level_var.clone())));
            } else {
                return false;
            }
        }
        if runs.is_empty() {
            return false;
        }
        let (acc, tpresent) = (self.temps[t].value, self.temps[t].present);
        let skip = self.skip_unless_all(&presences);
        let scale = self.product_of_values(&fixed);
        let mut factors: SmallVec<[ValueRun; 2]> = SmallVec::new();
        for (a, recovered) in runs {
            let first = match recovered {
                None => self.iconst(0),
                Some(v) => {
                    let (outer, _, _) = self.lowered.provenance.recovery(&v).expect("a recovered variable");
                    let outer = self.coordinate_of(&outer).expect("its blocks' loop runs outside");
                    let (of, blocking) = block.clone().expect("a recovered run is in a block");
                    let (b, first) = (self.block_size(&of, blocking), self.ireg());
                    self.ops.push(Op::IBin {
                        op: tessera_formats::IntOp::Mul,
                        dst: first,
                        a: outer,
                        b,
                    });
                    first
                }
            };
            let st = self.states[a].clone();
            let (start, found) = (self.ireg(), self.breg());
            let ancestors = self.ancestors(a, st.done);
            self.ops.push(Op::Locate {
                level: LevelRef::new(a, st.done),
                parent: st.parent_pos(),
                ancestors,
                coord: first,
                pos: start,
                found,
            });
            factors.push(ValueRun {
                operand: a as u32,
                start,
            });
        }
        let (zero, n) = (self.iconst(0), self.loop_extent(var));
        let len = match block {
            Some(_) => self.run_length(var),
            None => RunLength::In(n),
        };
        self.ops.push(Op::DenseDot {
            scale,
            factors,
            len,
            acc,
        });
        // The loop assigns the temporary at each coordinate there is.
        self.present_if_nonempty(tpresent, zero, n);
        self.patch(skip);
        true
    }

    /// A temporary a block op summed into is present once the block's
    /// range `begin..end` was not empty (as the loop it replaces would have
    /// assigned it).
    pub(super) fn present_if_nonempty(&mut self, present: BReg, begin: IReg, end: IReg) {
        let nonempty = self.breg();
        self.ops.push(Op::ICmp {
            op: Cmp::Lt,
            dst: nonempty,
            a: begin,
            b: end,
        });
        self.ops.push(Op::BOr {
            dst: present,
            a: present,
            b: nonempty,
        });
    }

    /// The inner product fast path: a loop driven by one compact, ordered,
    /// unique level whose body only adds a product of values into a
    /// temporary, every other factor a dense last level located by the
    /// loop's coordinate.
    pub(super) fn try_dot_block(&mut self, var: &LoopVar, body: &Cin, shape: &LoopShape) -> Option<String> {
        let Cin::Assign {
            target: Target::Temp(t),
            expr,
        } = body
        else {
            return None;
        };
        if self.temps[t].reduction != Reduction::Sum {
            return None;
        }
        if shape.universe || shape.walked.len() != 1 {
            return None;
        }
        let driver = &shape.iterators[shape.walked[0]];
        let dst = &self.states[driver.operand];
        let props = driver.format.properties();
        if !(props.compact && props.ordered && props.unique)
            || driver.format.capabilities().iteration != Iteration::CoordinatePosition
            || driver.level + 1 != dst.level_vars.len()
            || !matches!(driver.format.kind, LevelKind::Compressed | LevelKind::Singleton)
        {
            return None;
        }
        let mut factors_ops = Vec::new();
        // A vector temporary over the loop's variable is one more factor.
        let temp = self.product_with_temp(expr, var, &mut factors_ops)?;
        if factors_ops.iter().filter(|&&a| a == driver.operand).count() != 1 {
            return None;
        }
        let mut factors: SmallVec<[DotFactor; 2]> = SmallVec::new();
        let mut presences = vec![dst.present];
        for &a in &factors_ops {
            if a == driver.operand {
                continue;
            }
            let st = &self.states[a];
            let last = st.level_vars.len();
            let ok = st.done + 1 == last
                && st.level_vars[st.done] == *var
                && st.formats[st.done].kind == LevelKind::Dense
                && shape.located.iter().any(|&i| shape.iterators[i].operand == a);
            if !ok {
                return None;
            }
            factors.push(DotFactor {
                operand: a as u32,
                level: LevelRef::new(a, st.done),
                parent: st.parent_pos(),
            });
            presences.push(st.present);
        }
        let (acc, tpresent) = (self.temps[t].value, self.temps[t].present);
        let skip = self.skip_unless_all(&presences);
        let it = driver.clone();
        let (begin, end) = self.bounds(&it);
        self.ops.push(Op::DotBlock {
            driver: LevelRef::new(it.operand, it.level),
            begin,
            end,
            factors: factors.clone(),
            temp,
            acc,
        });
        self.present_if_nonempty(tpresent, begin, end);
        self.patch(skip);
        Some(format!("{} factors", factors.len() + 1 + usize::from(temp.is_some())))
    }

    /// Whether `expr` is a product of accesses and at most one component
    /// of a vector temporary at `var`: collects the accesses, and gives the
    /// temporary's buffer, if any.
    fn product_with_temp(&self, expr: &CinExpr, var: &LoopVar, out: &mut Vec<usize>) -> Option<Option<u32>> {
        match expr {
            CinExpr::TempAt(t, index) if index == var => self.temps[t].vector.map(Some),
            CinExpr::Binary {
                op: BinaryOp::Mul,
                lhs,
                rhs,
            } => match (
                self.product_with_temp(lhs, var, out)?,
                self.product_with_temp(rhs, var, out)?,
            ) {
                (Some(_), Some(_)) => None,
                (a, b) => Some(a.or(b)),
            },
            other => chain_of_accesses(other, Times::Mul, out).then_some(None),
        }
    }

    /// Emits a jump over what follows unless every flag in `flags` is set;
    /// returns the jump to patch.
    pub(super) fn skip_unless_all(&mut self, flags: &[BReg]) -> usize {
        let mut all = self.true_reg;
        for &p in flags {
            all = self.and_flags(all, p);
        }
        self.jump_unless(all)
    }

    /// The product of the values of fully bound operands (1 for none).
    pub(super) fn product_of_values(&mut self, operands: &[usize]) -> FReg {
        let product = self.freg();
        self.ops.push(Op::FConst {
            dst: product,
            value: 1.0,
        });
        for &a in operands {
            let v = self.value(&CinExpr::Access(a));
            self.ops.push(Op::FBin {
                op: FloatOp::Mul,
                dst: product,
                a: product,
                b: v,
            });
        }
        product
    }

    /// [`merged_pair_shape`] of operands whose fill is 0: a row merge
    /// reads an entry missing from one row as `0.0`. (Other fills change
    /// what the loop visits, `max` with fills of infinity the
    /// intersection.)
    pub(super) fn merged_pair(&self, body: &Cin) -> Option<MergedPair> {
        let pair = merged_pair_shape(body)?;
        let zero = |a: usize| self.lowered.operands[a].fill == 0.0;
        (zero(pair.a) && zero(pair.b)).then_some(pair)
    }

    /// The registers of a merge's scales, loaded here.
    pub(super) fn merge_scales(&mut self, scales: Option<[f64; 2]>) -> Option<[FReg; 2]> {
        scales.map(|scales| {
            scales.map(|value| {
                let dst = self.freg();
                self.ops.push(Op::FConst { dst, value });
                dst
            })
        })
    }
}

/// Whether `expr` is a chain of accesses joined by `times`; collects them.
/// Whether `expr` is `times` of accesses of distinct operands (see
/// [`super::runs::product_parts`]); collects them.
fn chain_of_accesses(expr: &CinExpr, times: Times, out: &mut Vec<usize>) -> bool {
    let from = out.len();
    collect_chain(expr, times, out) && super::runs::distinct(&out[from..])
}

fn collect_chain(expr: &CinExpr, times: Times, out: &mut Vec<usize>) -> bool {
    match (expr, times) {
        (CinExpr::Access(a), _) => {
            out.push(*a);
            true
        }
        (
            CinExpr::Binary {
                op: BinaryOp::Mul,
                lhs,
                rhs,
            },
            Times::Mul,
        )
        | (
            CinExpr::Binary {
                op: BinaryOp::Add,
                lhs,
                rhs,
            },
            Times::Add,
        ) => collect_chain(lhs, times, out) && collect_chain(rhs, times, out),
        (CinExpr::Call { func: Func::And, args }, Times::And) => args.iter().all(|a| collect_chain(a, times, out)),
        _ => false,
    }
}

/// The body of the loops over `vars`, nested in that order, when `body`
/// is exactly those loops.
pub(super) fn within_loops<'c>(body: &'c Cin, vars: &[LoopVar]) -> Option<&'c Cin> {
    vars.iter().try_fold(body, |body, v| match body {
        Cin::Forall { var, body } if var == v => Some(body.as_ref()),
        _ => None,
    })
}

/// Two operands' rows merged: `op(sa * a, sb * b)` with `scales`, else
/// `op(a, b)` ([`crate::runtime::rows::Combine`]).
pub(super) struct MergedPair {
    pub a: usize,
    pub b: usize,
    pub op: RowOp,
    pub scales: Option<[f64; 2]>,
}

/// `out = a op b` (or `op(a, b)`) of two different operands' accesses,
/// each possibly scaled by a literal (`2 * A(i,j)`, `A(i,j) * 0.5`), `op`
/// one a row merge computes: the body of [`Emitter::try_merge_rows`].
pub(super) fn merged_pair_shape(body: &Cin) -> Option<MergedPair> {
    let Cin::Assign {
        target: Target::Output,
        expr,
    } = body
    else {
        return None;
    };
    let (op, lhs, rhs) = match expr {
        CinExpr::Binary { op, lhs, rhs } => {
            let op = match op {
                BinaryOp::Add => RowOp::Add,
                BinaryOp::Sub => RowOp::Sub,
                BinaryOp::Mul => RowOp::Mul,
                BinaryOp::Div => return None,
            };
            (op, lhs.as_ref(), rhs.as_ref())
        }
        CinExpr::Call { func, args } => {
            let op = match func {
                Func::Max => RowOp::Max,
                Func::Min => RowOp::Min,
                _ => return None,
            };
            let [lhs, rhs] = args.as_slice() else {
                return None;
            };
            (op, lhs, rhs)
        }
        _ => return None,
    };
    let ((a, scale_a), (b, scale_b)) = (scaled_access(lhs)?, scaled_access(rhs)?);
    let scales = (scale_a.is_some() || scale_b.is_some()).then(|| [scale_a.unwrap_or(1.0), scale_b.unwrap_or(1.0)]);
    (a != b).then_some(MergedPair { a, b, op, scales })
}

/// An access, or an access times a constant (either way round): the
/// operand and the constant.
fn scaled_access(expr: &CinExpr) -> Option<(usize, Option<f64>)> {
    match expr {
        CinExpr::Access(a) => Some((*a, None)),
        CinExpr::Binary {
            op: BinaryOp::Mul,
            lhs,
            rhs,
        } => match (lhs.as_ref(), rhs.as_ref()) {
            (c, CinExpr::Access(a)) | (CinExpr::Access(a), c) => Some((*a, Some(constant(c)?))),
            _ => None,
        },
        _ => None,
    }
}

/// The value of a literal or a negated literal (`-2` parses as `-(2)`,
/// which the loop computes as the same number).
fn constant(expr: &CinExpr) -> Option<f64> {
    match expr {
        CinExpr::Literal(c) => Some(*c),
        CinExpr::Neg(e) => constant(e).map(|c| -c),
        _ => None,
    }
}

/// Where a dense row update adds: a row of the dense output's last level
/// (the level and its parent's position), or a vector temporary.
#[derive(Clone, Copy)]
enum RowInto {
    Output(LevelRef, IReg),
    Temp(u32),
}

/// Whether `expr` is a product of accesses; collects them.
pub(super) fn product_of_accesses(expr: &CinExpr, out: &mut Vec<usize>) -> bool {
    chain_of_accesses(expr, Times::Mul, out)
}
