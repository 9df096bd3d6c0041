//! A row of stored blocks as one op ([`Op::BlockRowsDot`]): a loop driven
//! by a level with a coordinate array (BCSR's block columns) whose body is
//! a [`Op::DenseRowsDot`]. Every run's start is affine in the driver's
//! position (the dense levels below it) and in its coordinate (a variable
//! recovered from it, `j = j/b·b + j%b`): the planner locates the runs at
//! synthetic positions and coordinates 0 and 1 and subtracts, as
//! [`super::runs`] does for rows.

use smallvec::SmallVec;
use tessera_formats::{IntOp, Level};

use super::runs::reduction_of_product;
use super::{Emitter, LoopShape};
use crate::bytecode::{BlockRun, IReg, Op};
use crate::cin::{Cin, LoopVar};

impl Emitter<'_> {
    /// Emits the loop over `var` as one [`Op::BlockRowsDot`] when it fits.
    pub(super) fn try_block_rows_dot(&mut self, var: &LoopVar, body: &Cin, shape: &LoopShape) -> bool {
        let Some(out) = self.output_operand() else {
            return false;
        };
        if shape.universe || shape.walked.len() != 1 || self.workspace.is_some() || self.chunk_of(var).is_some() {
            return false;
        }
        let driver = shape.iterators[shape.walked[0]].clone();
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
        // Every run located at (position, coordinate) = (0, 0), (1, 0) and
        // (0, 1): the start and the two steps.
        let mut located: Vec<[[IReg; 2]; 3]> = Vec::new();
        for (p, c) in [(0, 0), (1, 0), (0, 1)] {
            self.ops.push(Op::IConst { dst: pos, value: p });
            self.ops.push(Op::IConst { dst: coord, value: c });
            for (k, &a) in runs.iter().enumerate() {
                let at = |r: IReg| [(rows.clone(), r), (inner.clone(), zero)];
                let first = self.locate_dense(a, &at(zero));
                let second = self.locate_dense(a, &at(one));
                if p == 0 && c == 0 {
                    located.push([[first, second]; 3]);
                } else {
                    located[k][if p == 1 { 1 } else { 2 }] = [first, second];
                }
            }
        }
        let out_run = {
            let first = self.locate_dense(out, &[(rows.clone(), zero)]);
            let second = self.locate_dense(out, &[(rows.clone(), one)]);
            self.run_between(out, first, second)
        };
        let rows_len = self.run_length(rows);
        let len = self.run_length(inner);
        let mut factors: SmallVec<[BlockRun; 2]> = SmallVec::new();
        let mut shared: SmallVec<[BlockRun; 1]> = SmallVec::new();
        for (k, &a) in runs.iter().enumerate() {
            let [[start, next_row], [at_pos, _], [at_coord, _]] = located[k];
            let run = BlockRun {
                operand: a as u32,
                start,
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
        let (begin, end) = self.bounds(&driver);
        self.ops.push(Op::BlockRowsDot {
            driver: tessera_formats::LevelRef::new(driver.operand, driver.level),
            begin,
            end,
            rows: rows_len,
            len,
            scale,
            factors,
            shared,
            out: out_run,
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
