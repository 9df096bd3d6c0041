//! Runs of an operand's stored values. Outputs on its pattern written a
//! row at a time ([`Op::ValuesAxpy`]): where the output's values line up
//! with the positions of the level a loop walks (`B(i,j) = 2 * A(i,j)`,
//! `A(i,j) * x(j)` into A's pattern), the loop is one op over the row's
//! positions, no bytecode per stored value. Sums of its values over such
//! runs are one [`Op::DenseDot`].

use smallvec::SmallVec;
use tessera_formats::{IntOp, Iteration, Level, LevelFormat, LevelKind, LevelRef, ValueType};

use super::{Emitter, LoopShape};
use crate::bytecode::{BReg, DotFactor, FReg, FloatOp, IReg, Op, Regs, RunLength, ValueRun};
use crate::cin::{Cin, CinExpr, LoopVar, OutputAssembly, Target};
use crate::notation::{Func, Reduction};

/// What an [`Op::ValuesAxpy`] multiplies each stored value by: the
/// product of literals, of values bound outside the loop and of dense
/// factors gathered at the value's coordinate; and the function of one
/// argument it then applies, if any.
struct ValuesUpdate {
    literal: f64,
    fixed: Vec<usize>,
    factors: SmallVec<[DotFactor; 2]>,
    presences: Vec<BReg>,
    map: Option<Func>,
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
        self.push_values_axpy(&driver, (begin, end), scale, update.factors, update.map);
        self.patch(skip);
        true
    }

    /// Emits the loop over `var`, every coordinate of a dense level of
    /// the pattern operand or the positions of a compressed one, and the
    /// loops inside it as one [`Op::ValuesAxpy`] over the values of all
    /// its rows (or the chunk's): the next level is compact, and any below
    /// it dense (BCSR's blocks), so they follow one another. CSR's and
    /// DCSR's scaled copies.
    pub(super) fn try_every_values_row(&mut self, var: &LoopVar, body: &Cin, shape: &LoopShape) -> bool {
        let OutputAssembly::OnPattern { operand } = self.lowered.assembly else {
            return false;
        };
        let rows = match (shape.universe, shape.walked.as_slice(), shape.located.as_slice()) {
            (true, [], &[located]) => shape.iterators[located].clone(),
            (false, &[walked], []) => shape.iterators[walked].clone(),
            _ => return false,
        };
        let st = self.states[operand].clone();
        let Cin::Forall {
            var: inner,
            body: inner_body,
        } = body
        else {
            return false;
        };
        let next = rows.level + 1;
        let rows_fit = match rows.format.kind {
            LevelKind::Dense => shape.universe,
            LevelKind::Compressed => rows.format.unique,
            _ => false,
        };
        if rows.operand != operand
            || !rows_fit
            || st.parent_run_end().is_some()
            || next >= st.level_vars.len()
            || st.level_vars[next] != *inner
            || !st.formats[next].properties().compact
        {
            return false;
        }
        // Dense levels below (BCSR's blocks) hold their values in order
        // too: the loops over them are part of the run.
        let below = next + 1..st.level_vars.len();
        if !below.clone().all(|k| dense(st.formats[k])) {
            return false;
        }
        let Some(values_body) = super::blocks::within_loops(inner_body, &st.level_vars[below.clone()]) else {
            return false;
        };
        let leaf = st.level_vars.len() - 1;
        let driver = super::IterInfo {
            operand,
            level: leaf,
            format: st.formats[leaf],
        };
        let Some(update) = self.values_update(&st.level_vars[leaf], values_body, &driver) else {
            return false;
        };
        let ancestors = self.ancestors(operand, rows.level);
        let one = self.iconst(1);
        // The first and the final row's positions, and their coordinates
        // (read only by the dense levels below, as 0 where unknown).
        let (empty, first, final_row) = if shape.universe {
            let (first, last) = match self.chunk_of(var) {
                Some(range) => range,
                None => (self.iconst(0), self.loop_extent(var)),
            };
            let empty = self.exit_unless_lt(first, last);
            let final_row = self.ireg();
            self.int_op(IntOp::Sub, final_row, last, one);
            let [first, final_row] = [first, final_row].map(|row| {
                let (position, found) = (self.ireg(), self.breg());
                self.ops.push(Op::Locate {
                    level: LevelRef::new(operand, rows.level),
                    parent: st.parent_pos(),
                    ancestors: ancestors.clone(),
                    coord: row,
                    pos: position,
                    found,
                });
                (position, row)
            });
            (empty, first, final_row)
        } else {
            let (begin, end) = self.bounds(&rows);
            let empty = self.exit_unless_lt(begin, end);
            let last = self.ireg();
            self.int_op(IntOp::Sub, last, end, one);
            let zero = self.iconst(0);
            (empty, (begin, zero), (last, zero))
        };
        let skip = self.skip_unless_all(&update.presences);
        let scale = self.scale_of(&update);
        // The first row's first value and the final row's end.
        let mut ends = [0; 2];
        for (k, (position, row)) in [first, final_row].into_iter().enumerate() {
            let (begin, end) = (self.ireg(), self.ireg());
            self.ops.push(Op::PosIter {
                level: LevelRef::new(operand, next),
                parent: position,
                begin,
                end,
            });
            let mut above = ancestors.clone();
            above.push(row);
            ends[k] = self.first_value_below(operand, (next, if k == 0 { begin } else { end }), above);
        }
        self.push_values_axpy(&driver, (ends[0], ends[1]), scale, update.factors, update.map);
        self.patch(skip);
        self.patch(empty);
        true
    }

    /// Emits the loop over `var`, a level of the pattern operand with only
    /// dense and one-child levels below it, and the loops inside it as one
    /// [`Op::ValuesAxpy`] over the values below the loop's positions, when
    /// the body adds the stored value times literals and values bound
    /// outside: those values are one run of positions. The level is walked
    /// by position (BCSR's blocks of a block row: `C(i,j) = 2 * A(i,j)`
    /// into BCSR), or a computed range whose consecutive coordinates sit at
    /// consecutive positions (DIA's rows of a diagonal).
    pub(super) fn try_values_run(&mut self, var: &LoopVar, body: &Cin, shape: &LoopShape) -> bool {
        let OutputAssembly::OnPattern { operand } = self.lowered.assembly else {
            return false;
        };
        if shape.universe || shape.walked.len() != 1 || self.chunk_of(var).is_some() {
            return false;
        }
        let walked = shape.iterators[shape.walked[0]].clone();
        if walked.operand != operand {
            return false;
        }
        let Some(below) = self.dense_below(&walked) else {
            return false;
        };
        let st = self.states[operand].clone();
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
        let (first, end) = self.values_run(&walked);
        self.push_values_axpy(&driver, (first, end), scale, update.factors, update.map);
        self.patch(skip);
        true
    }

    /// A sum of products of the values of one operand (read any number of
    /// times) and values bound outside, over a loop that walks the
    /// positions of a level of that operand with only dense and one-child
    /// levels below (as [`Self::try_values_run`] finds them), into a
    /// temporary: one
    /// [`Op::DenseDot`] over the run of values below the loop's positions.
    /// The sum of squares of a BCSR matrix, `s = A(i,j) * A(i,j)`, a block
    /// row at a time.
    pub(super) fn try_values_run_sum(&mut self, var: &LoopVar, body: &Cin, shape: &LoopShape) -> bool {
        if shape.universe || shape.walked.len() != 1 || self.chunk_of(var).is_some() || self.workspace.is_some() {
            return false;
        }
        let walked = shape.iterators[shape.walked[0]].clone();
        let operand = walked.operand;
        // A computed range's sums (DIA's) are the interpreter's position
        // loops already, and compile as loops.
        if walked.format.capabilities().iteration == Iteration::CoordinateValue {
            return false;
        }
        let Some(below) = self.dense_below(&walked) else {
            return false;
        };
        let st = self.states[operand].clone();
        let Some(Cin::Assign {
            target: Target::Temp(t),
            expr,
        }) = super::blocks::within_loops(body, &st.level_vars[below])
        else {
            return false;
        };
        if self.temps[t].reduction != Reduction::Sum {
            return false;
        }
        let (mut accesses, mut literal) = (Vec::new(), 1.0);
        if !super::runs::collect_product_parts(expr, &mut accesses, &mut literal) {
            return false;
        }
        let reads = accesses.iter().filter(|&&a| a == operand).count();
        let fixed: Vec<usize> = accesses.iter().copied().filter(|&a| a != operand).collect();
        if reads == 0
            || fixed
                .iter()
                .any(|&a| self.states[a].done != self.states[a].level_vars.len())
        {
            return false;
        }
        let presences: Vec<BReg> = accesses.iter().map(|&a| self.states[a].present).collect();
        let (acc, tpresent) = (self.temps[t].value, self.temps[t].present);
        let skip = self.skip_unless_all(&presences);
        let update = ValuesUpdate {
            literal,
            fixed,
            factors: SmallVec::new(),
            presences,
            map: None,
        };
        let scale = self.scale_of(&update);
        let (first, end) = self.values_run(&walked);
        let len = self.ireg();
        self.int_op(IntOp::Sub, len, end, first);
        let run = ValueRun {
            operand: operand as u32,
            start: first,
        };
        self.ops.push(Op::DenseDot {
            scale,
            factors: std::iter::repeat_n(run, reads).collect(),
            len: RunLength::In(len),
            acc,
        });
        // The loop assigns the temporary at each position there is.
        self.present_if_nonempty(tpresent, first, end);
        self.patch(skip);
        true
    }

    /// The levels below the level `walked` walks when each is dense or
    /// has one child, and the walked level's positions (or, walked as a
    /// computed range, its coordinates) are unique and its operand's
    /// values below them follow one another ([`Self::values_run`]).
    fn dense_below(&self, walked: &super::IterInfo) -> Option<std::ops::Range<usize>> {
        use super::structured::{one_child, positional};
        let st = &self.states[walked.operand];
        let range = walked.format.capabilities().iteration == Iteration::CoordinateValue;
        let below = walked.level + 1..st.level_vars.len();
        let fits = st.parent_run_end().is_none()
            && walked.format.unique
            && (!range || positional(walked.format))
            && !below.is_empty()
            && below.clone().all(|k| dense(st.formats[k]) || one_child(st.formats[k]));
        fits.then_some(below)
    }

    /// The positions of the values below the positions `walked` walks
    /// (accepted by [`Self::dense_below`]): one run, from the first
    /// position's first value to the end's.
    fn values_run(&mut self, walked: &super::IterInfo) -> (IReg, IReg) {
        let operand = walked.operand;
        let range = walked.format.capabilities().iteration == Iteration::CoordinateValue;
        let (first, end) = if range {
            let run = self.coordinate_run(walked, 0).0;
            let (len, end) = (self.ireg(), self.ireg());
            self.int_op(IntOp::Sub, len, run.end, run.begin);
            self.int_op(IntOp::Add, end, run.values.start, len);
            (run.values.start, end)
        } else {
            self.bounds(walked)
        };
        let above = self.ancestors(operand, walked.level);
        (
            self.first_value_below(operand, (walked.level, first), above.clone()),
            self.first_value_below(operand, (walked.level, end), above),
        )
    }

    /// The position of the first value below position `position` of the
    /// pattern operand's level `level`, every level below it dense or
    /// with one child: each dense level's coordinate 0 located in turn.
    /// Its position is arithmetic in the parent's, which may be one past
    /// the last, and the coordinates above it are not read: `above`, the
    /// coordinates of the levels above `level`, and 0 for the rest.
    fn first_value_below(&mut self, operand: usize, (level, position): (usize, IReg), above: Regs) -> IReg {
        let st = self.states[operand].clone();
        let zero = self.iconst(0);
        let mut ancestors = above;
        ancestors.push(zero);
        let mut parent = position;
        for k in level + 1..st.level_vars.len() {
            if dense(st.formats[k]) {
                let (pos, found) = (self.ireg(), self.breg());
                self.ops.push(Op::Locate {
                    level: LevelRef::new(operand, k),
                    parent,
                    ancestors: ancestors.clone(),
                    coord: zero,
                    pos,
                    found,
                });
                parent = pos;
            }
            // A level with one child shares its parent's position.
            ancestors.push(zero);
        }
        parent
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
        let (expr, map) = self.mapped_product(expr)?;
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
            map,
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

    /// `expr`, or the argument of the function of one argument it applies
    /// to a product (`abs(A(i,j))`, `square(2 * A(i,j))`) and that
    /// function. Only on f64 values; never a user-defined operator, which
    /// would call back into the runtime per value.
    fn mapped_product<'e>(&self, expr: &'e CinExpr) -> Option<(&'e CinExpr, Option<Func>)> {
        let CinExpr::Call { func, args } = expr else {
            return Some((expr, None));
        };
        if matches!(func, Func::User(_)) || self.lowered.value_type != ValueType::F64 {
            return None;
        }
        match args.as_slice() {
            [x] if func.arity() == 1 => Some((x, Some(*func))),
            _ => None,
        }
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
        map: Option<Func>,
    ) {
        self.ops.push(Op::ValuesAxpy {
            driver: LevelRef::new(driver.operand, driver.level),
            begin,
            end,
            scale,
            factors,
            map,
        });
    }
}

/// A dense level: every coordinate, at positions by arithmetic.
fn dense(l: LevelFormat) -> bool {
    super::structured::positional(l) && l.kind == LevelKind::Dense
}
