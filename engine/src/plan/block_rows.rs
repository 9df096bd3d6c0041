//! Rows of stored blocks as one op ([`Op::BlockRowsDot`]): a loop driven
//! by a level with a coordinate array (BCSR's block columns) whose body is
//! a [`Op::DenseRowsDot`], and, where that loop's parent is a dense level
//! the enclosing loop runs over (BCSR's block rows), that loop too. Every
//! run's start is affine in the block row, the driver's position and its
//! coordinate (a variable recovered from it, `j = j/b·b + j%b`): the
//! planner locates the runs at synthetic block rows, positions and
//! coordinates 0 and 1 and subtracts, as [`super::runs`] does for rows.

use smallvec::SmallVec;
use tessera_formats::{IntOp, Level, LevelKind, LevelRef};

use super::runs::reduction_of_product;
use super::{Emitter, IterInfo, LoopShape};
use crate::bytecode::{BlockRows, BlockRun, IReg, Op};
use crate::cin::{Cin, LoopVar};

/// The loop over block rows an [`Op::BlockRowsDot`] takes in: its
/// variable is bound to `coord`, the dense level `rows` to its position
/// there.
struct EveryBlockRow {
    coord: IReg,
    rows: LevelRef,
    parent: IReg,
    first: IReg,
    last: IReg,
    /// Sets the level's position for the synthetic block row in `coord`.
    locate: Op,
}

impl Emitter<'_> {
    /// Emits the loop over `var` as one [`Op::BlockRowsDot`] when it fits.
    pub(super) fn try_block_rows_dot(&mut self, var: &LoopVar, body: &Cin, shape: &LoopShape) -> bool {
        if shape.universe || shape.walked.len() != 1 || self.chunk_of(var).is_some() {
            return false;
        }
        let driver = shape.iterators[shape.walked[0]].clone();
        self.block_rows_dot(var, body, driver, None)
    }

    /// Emits the loop over `var`, every coordinate of a dense level whose
    /// child is a [`Self::try_block_rows_dot`] driver walked by the body's
    /// loop, and that loop, as one [`Op::BlockRowsDot`] over every block
    /// row: BCSR times x with no bytecode per block row.
    pub(super) fn try_every_block_row(&mut self, var: &LoopVar, body: &Cin, shape: &LoopShape) -> bool {
        if !shape.universe || !shape.walked.is_empty() || shape.located.len() != 1 {
            return false;
        }
        let rows_it = shape.iterators[shape.located[0]].clone();
        let a = rows_it.operand;
        let st = self.states[a].clone();
        let Cin::Forall {
            var: blocks,
            body: blocks_body,
        } = body
        else {
            return false;
        };
        // Positions `parent * extent + b`, as the op computes them, and the
        // body's loop driven by this operand's next level alone.
        let driven_alone = self.states.iter().enumerate().all(|(b, other)| {
            b == a || other.done >= other.level_vars.len() || other.level_vars[other.done] != *blocks
        });
        let next = rows_it.level + 1;
        if Some(a) == self.output_operand()
            || rows_it.format.kind != LevelKind::Dense
            || st.parent_run_end().is_some()
            || next >= st.level_vars.len()
            || st.level_vars[next] != *blocks
            || !driven_alone
        {
            return false;
        }
        let (first, last) = match self.chunk_of(var) {
            Some(range) => range,
            None => (self.iconst(0), self.loop_extent(var)),
        };
        // The levels above are bound by the loops outside this one.
        let ancestors = self.ancestors(a, rows_it.level);
        let (coord, position, found) = (self.ireg(), self.ireg(), self.breg());
        let rows = LevelRef::new(a, rows_it.level);
        let every = EveryBlockRow {
            coord,
            rows,
            parent: st.parent_pos(),
            first,
            last,
            locate: Op::Locate {
                level: rows,
                parent: st.parent_pos(),
                ancestors,
                coord,
                pos: position,
                found,
            },
        };
        let (saved_states, saved_vars) = (self.states.clone(), self.var_regs.clone());
        self.var_regs.insert(var.clone(), coord);
        self.states[a].bind(position, None, self.true_reg);
        let driver = IterInfo {
            operand: a,
            level: next,
            format: st.formats[next],
        };
        let done = self.block_rows_dot(blocks, blocks_body, driver, Some(every));
        self.states = saved_states;
        self.var_regs = saved_vars;
        done
    }

    /// One [`Op::BlockRowsDot`] for the loop over `var` driven by
    /// `driver`, in the enclosing loop's block row or, with `every`, in
    /// every block row.
    fn block_rows_dot(&mut self, var: &LoopVar, body: &Cin, driver: IterInfo, every: Option<EveryBlockRow>) -> bool {
        let Some(out) = self.output_operand() else {
            return false;
        };
        if self.workspace.is_some() {
            return false;
        }
        let props = driver.format.properties();
        let dst = &self.states[driver.operand];
        // Every position labelled (compact), once (unique), with its
        // coordinate in an array the op reads.
        let labelled = props.compact && props.unique && driver.format.coordinate_array().is_some();
        if !labelled || dst.parent_run_end().is_some() {
            return false;
        }
        let Cin::Forall {
            var: rows,
            body: rows_body,
        } = body
        else {
            return false;
        };
        let Some((inner, expr)) = reduction_of_product(rows_body) else {
            return false;
        };
        let mut accesses = Vec::new();
        if !super::blocks::product_of_accesses(expr, &mut accesses)
            || accesses.iter().filter(|&&a| a == driver.operand).count() != 1
        {
            return false;
        }
        // Bind the driver's level and the loop's variable to registers the
        // runs are located through, set to synthetic values below.
        let (pos, coord) = (self.ireg(), self.ireg());
        let saved_states = self.states.clone();
        let saved_vars = self.var_regs.clone();
        self.var_regs.insert(var.clone(), coord);
        self.states[driver.operand].bind(pos, None, self.true_reg);
        let restore = |e: &mut Self| {
            e.states = saved_states.clone();
            e.var_regs = saved_vars.clone();
        };
        let mut fixed_values = Vec::new();
        let mut runs = Vec::new();
        for &a in &accesses {
            let st = &self.states[a];
            if st.done == st.level_vars.len() {
                fixed_values.push(a);
            } else if self.walks_dense_levels(a, &[rows, inner], Some(inner)) {
                runs.push(a);
            } else {
                restore(self);
                return false;
            }
        }
        let out_fits = self.walks_dense_levels(out, &[rows], None) && !self.depends_on(out, var);
        if runs.is_empty() || fixed_values.contains(&driver.operand) || !out_fits {
            restore(self);
            return false;
        }
        let presences: Vec<_> = accesses
            .iter()
            .filter(|&&a| a != driver.operand)
            .map(|&a| saved_states[a].present)
            .collect();
        let skip = self.skip_unless_all(&presences);
        let scale = self.product_of_values(&fixed_values);
        let (zero, one) = (self.iconst(0), self.iconst(1));
        // Every run located at (block row, position, coordinate) = (0, 0,
        // 0), (1, 0, 0), (0, 1, 0) and (0, 0, 1): the start and the three
        // steps; the block row stays the enclosing loop's without `every`.
        let points: &[(i64, i64, i64)] = if every.is_some() {
            &[(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)]
        } else {
            &[(0, 0, 0), (0, 1, 0), (0, 0, 1)]
        };
        let mut located: Vec<Vec<[IReg; 2]>> = vec![Vec::new(); runs.len()];
        let mut out_at = Vec::new();
        for &(b, p, c) in points {
            if let Some(every) = &every {
                self.ops.push(Op::IConst {
                    dst: every.coord,
                    value: b,
                });
                self.ops.push(every.locate.clone());
            }
            self.ops.push(Op::IConst { dst: pos, value: p });
            self.ops.push(Op::IConst { dst: coord, value: c });
            for (k, &a) in runs.iter().enumerate() {
                let at = |r: IReg| [(rows.clone(), r), (inner.clone(), zero)];
                let first = self.locate_dense(a, &at(zero));
                let second = self.locate_dense(a, &at(one));
                located[k].push([first, second]);
            }
            if p == 0 && c == 0 {
                let first = self.locate_dense(out, &[(rows.clone(), zero)]);
                let second = self.locate_dense(out, &[(rows.clone(), one)]);
                out_at.push([first, second]);
            }
        }
        let out_run = self.run_between(out, out_at[0][0], out_at[0][1]);
        let out_block_step = match out_at.get(1) {
            Some(&[next_block, _]) => self.difference(next_block, out_at[0][0]),
            None => zero,
        };
        let rows_len = self.run_length(rows);
        let len = self.run_length(inner);
        let mut factors: SmallVec<[BlockRun; 2]> = SmallVec::new();
        let mut shared: SmallVec<[BlockRun; 1]> = SmallVec::new();
        for (k, &a) in runs.iter().enumerate() {
            let at = &located[k];
            let [start, next_row] = at[0];
            let (at_block, at_pos, at_coord) = match at.len() {
                4 => (Some(at[1][0]), at[2][0], at[3][0]),
                _ => (None, at[1][0], at[2][0]),
            };
            let run = BlockRun {
                operand: a as u32,
                start,
                block_step: at_block.map_or(zero, |b| self.difference(b, start)),
                row_step: self.difference(next_row, start),
                pos_step: self.difference(at_pos, start),
                coord_step: self.difference(at_coord, start),
            };
            if self.depends_on(a, rows) {
                factors.push(run);
            } else {
                shared.push(run);
            }
        }
        restore(self);
        let blocks = match every {
            Some(every) => BlockRows::Every {
                rows: every.rows,
                parent: every.parent,
                first: every.first,
                last: every.last,
            },
            None => {
                let (begin, end) = self.bounds(&driver);
                BlockRows::One { begin, end }
            }
        };
        self.ops.push(Op::BlockRowsDot {
            driver: tessera_formats::LevelRef::new(driver.operand, driver.level),
            blocks,
            rows: rows_len,
            len,
            scale,
            factors,
            shared,
            out: out_run,
            out_block_step,
        });
        self.patch(skip);
        true
    }

    /// `a - b` in a new register.
    pub(super) fn difference(&mut self, a: IReg, b: IReg) -> IReg {
        let dst = self.ireg();
        self.ops.push(Op::IBin {
            op: IntOp::Sub,
            dst,
            a,
            b,
        });
        dst
    }
}
