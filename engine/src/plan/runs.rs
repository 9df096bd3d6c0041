//! Block ops over runs of values: loops whose every access walks dense
//! levels, so that its positions move by a fixed step per coordinate. The
//! steps are not derived from formats: the planner locates each access at
//! two coordinates and subtracts, which is exact because a dense level's
//! position is affine in its parent's position and its coordinate, and a
//! recovered variable (`i = i/b·b + i%b`) is affine in its parts.

use smallvec::SmallVec;
use tessera_formats::{CoordinateRelation, IntOp, Iteration, Level, LevelFormat, LevelRef};

use super::{Emitter, LoopShape, OperandState};
use crate::bytecode::{IReg, Op, RunLength, Strided, StridedColumns, StridedRun, ValueRun};
use crate::cin::{Blocking, Cin, CinExpr, LoopVar, Relation, Target};
use crate::notation::Reduction;

/// Where a coordinate of a loop variable comes from while a run's start is
/// located: the loops being replaced are at given coordinates.
type Fixed<'f> = &'f [(LoopVar, IReg)];

impl Emitter<'_> {
    /// Dense rows times dense runs ([`Op::DenseRowsDot`]): a loop over every
    /// coordinate `r` whose body is `out += t where t = Σ_c Π factors`,
    /// the inner loop over every coordinate `c`, every unbound level of the
    /// factors and of the output dense, the factors' last levels at `c`
    /// (or at a variable recovered from it) and the output not depending
    /// on `c`.
    pub(super) fn try_dense_rows_dot(&mut self, var: &LoopVar, body: &Cin, shape: &LoopShape) -> bool {
        let Some(out) = self.output_operand() else {
            return false;
        };
        if !shape.universe || !shape.walked.is_empty() || self.chunk_of(var).is_some() || self.workspace.is_some() {
            return false;
        }
        let Some((inner, expr)) = reduction_of_product(body) else {
            return false;
        };
        let mut accesses = Vec::new();
        if !super::blocks::product_of_accesses(expr, &mut accesses) || accesses.is_empty() {
            return false;
        }
        let mut fixed_values = Vec::new();
        let mut runs = Vec::new();
        for &a in &accesses {
            let st = &self.states[a];
            if st.done == st.level_vars.len() {
                fixed_values.push(a);
            } else if self.walks_dense_levels(a, &[var, inner], Some(inner)) {
                runs.push(a);
            } else {
                return false;
            }
        }
        if runs.is_empty() || !self.walks_dense_levels(out, &[var], None) {
            return false;
        }
        let presences: Vec<_> = accesses.iter().map(|&a| self.states[a].present).collect();
        let skip = self.skip_unless_all(&presences);
        let scale = self.product_of_values(&fixed_values);
        let (zero, one) = (self.iconst(0), self.iconst(1));
        let mut factors: SmallVec<[StridedRun; 2]> = SmallVec::new();
        let mut shared: SmallVec<[ValueRun; 1]> = SmallVec::new();
        for a in runs {
            if self.depends_on(a, var) {
                factors.push(self.strided_run(a, var, Some(inner), zero, one));
            } else {
                let start = self.locate_dense(a, &[(inner.clone(), zero)]);
                shared.push(ValueRun {
                    operand: a as u32,
                    start,
                });
            }
        }
        let out = self.strided_run(out, var, None, zero, one);
        let rows = self.run_length(var);
        let len = self.run_length(inner);
        self.ops.push(Op::DenseRowsDot {
            rows,
            len,
            scale,
            factors,
            shared,
            out,
        });
        self.patch(skip);
        true
    }

    /// Whether every unbound level of operand `a` is dense and its variable
    /// is bound, one of `loops`, or recovered from those; with `along`,
    /// whether the last level runs along it (its variable is `along` or
    /// recovered with `along` as the place in a block) and no other does.
    pub(super) fn walks_dense_levels(&self, a: usize, loops: &[&LoopVar], along: Option<&LoopVar>) -> bool {
        let st = &self.states[a];
        let known = |v: &LoopVar| self.var_regs.contains_key(v) || loops.contains(&v);
        let involves_along = |v: &LoopVar| {
            along.is_some_and(|c| {
                v == c
                    || self
                        .lowered
                        .provenance
                        .recovery(v)
                        .is_some_and(|(_, within, _)| within == *c)
            })
        };
        let last = st.level_vars.len();
        (st.done..last).all(|k| {
            let v = &st.level_vars[k];
            let available = known(v)
                || self
                    .lowered
                    .provenance
                    .recovery(v)
                    .is_some_and(|(outer, within, _)| known(&outer) && known(&within));
            let runs_along = involves_along(v);
            locates_by_position(st.formats[k]) && available && (runs_along == (along.is_some() && k + 1 == last))
        }) && st.done < last
    }

    /// Whether an unbound level of operand `a` is at `v` or at a variable
    /// recovered from it.
    pub(super) fn depends_on(&self, a: usize, v: &LoopVar) -> bool {
        let st = &self.states[a];
        st.level_vars[st.done..].iter().any(|lv| {
            lv == v
                || self
                    .lowered
                    .provenance
                    .recovery(lv)
                    .is_some_and(|(outer, within, _)| outer == *v || within == *v)
        })
    }

    /// The run of operand `a` per coordinate `r` of `rows`: located at
    /// `r = 0` and `r = 1` (with `along`, if any, at 0), the step the
    /// difference.
    fn strided_run(&mut self, a: usize, rows: &LoopVar, along: Option<&LoopVar>, zero: IReg, one: IReg) -> StridedRun {
        let at = |r: IReg| {
            let mut fixed = vec![(rows.clone(), r)];
            fixed.extend(along.map(|c| (c.clone(), zero)));
            fixed
        };
        let start = self.locate_dense(a, &at(zero));
        let next = self.locate_dense(a, &at(one));
        let step = self.ireg();
        self.int_op(IntOp::Sub, step, next, start);
        StridedRun {
            operand: a as u32,
            start,
            step,
        }
    }

    /// The position of operand `a`'s value with its unbound (dense) levels
    /// located at their variables' coordinates, `fixed` overriding loops.
    pub(super) fn locate_dense(&mut self, a: usize, fixed: Fixed<'_>) -> IReg {
        let st = self.states[a].clone();
        let mut parent = st.parent_pos();
        let mut coords: Vec<IReg> = Vec::new();
        for k in 0..st.level_vars.len() {
            let coord = self.coordinate_with(&st.level_vars[k], fixed);
            if k >= st.done {
                let (pos, found) = (self.ireg(), self.breg());
                self.ops.push(Op::Locate {
                    level: LevelRef::new(a, k),
                    parent,
                    ancestors: coords.iter().copied().collect(),
                    coord,
                    pos,
                    found,
                });
                parent = pos;
            }
            coords.push(coord);
        }
        parent
    }

    /// `v`'s coordinate with the loops in `fixed` at their given ones.
    fn coordinate_with(&mut self, v: &LoopVar, fixed: Fixed<'_>) -> IReg {
        if let Some((_, r)) = fixed.iter().find(|(f, _)| f == v) {
            return *r;
        }
        if let Some(&r) = self.var_regs.get(v) {
            return r;
        }
        let (outer, within, block) = self
            .lowered
            .provenance
            .recovery(v)
            .expect("runs are planned over bound or recovered variables");
        let (outer, within) = (
            self.coordinate_with(&outer, fixed),
            self.coordinate_with(&within, fixed),
        );
        let (b, c) = (self.block_size(v, block), self.ireg());
        self.ops.push(Op::IBin {
            op: IntOp::Mul,
            dst: c,
            a: outer,
            b,
        });
        self.int_op(IntOp::Add, c, c, within);
        c
    }

    /// How many coordinates a loop over `v` runs through: a block's size
    /// when `v` is a place in a level's block (known when planning), its
    /// size in the run otherwise (a schedule's last block cut short).
    pub(super) fn run_length(&mut self, v: &LoopVar) -> RunLength {
        if let Some(Relation::WithinBlock {
            block: Blocking::Size(block),
            of,
        }) = v.relation()
        {
            if !self.lowered.provenance.is_scheduled(of) {
                return RunLength::Fixed(*block as u32);
            }
        }
        RunLength::In(self.loop_extent(v))
    }
}

/// `out += t where t = forall inner: t += expr`: the inner loop's variable
/// and `expr`.
pub(super) fn reduction_of_product(body: &Cin) -> Option<(&LoopVar, &CinExpr)> {
    match reduction_of_terms(body) {
        Some((var, expr, Reduction::Sum)) => Some((var, expr)),
        _ => None,
    }
}

/// `out += t where t = forall inner: t ⊕= expr`: the inner loop's
/// variable, `expr` and `⊕`.
pub(super) fn reduction_of_terms(body: &Cin) -> Option<(&LoopVar, &CinExpr, Reduction)> {
    let Cin::Where {
        temp,
        reduction,
        index: None,
        producer,
        consumer,
    } = body
    else {
        return None;
    };
    let Cin::Assign {
        target: Target::Output,
        expr: CinExpr::Temp(t),
    } = consumer.as_ref()
    else {
        return None;
    };
    let Cin::Forall { var, body } = producer.as_ref() else {
        return None;
    };
    match body.as_ref() {
        Cin::Assign {
            target: Target::Temp(t2),
            expr,
        } if t == temp && t2 == temp => Some((var, expr, *reduction)),
        _ => None,
    }
}

/// Whether a level locates a coordinate at `parent · extent + coordinate`
/// (a dense level): its positions are affine in its parent's position and
/// its coordinate, what every run here relies on.
fn locates_by_position(level: LevelFormat) -> bool {
    level.capabilities().locate && level.coordinate_relation() == CoordinateRelation::Positional
}

/// What defines the inner coordinate of a [`Op::StridedAxpy`] row: the
/// one-child level below the row operand's level at the loop.
#[derive(Clone, Copy, PartialEq, Eq)]
enum InnerCoordinate {
    /// The parent's coordinate shifted (DIA's column): positions located
    /// at it move by a fixed step per row.
    Shifted,
    /// Stored (ELL's column): values located at it are gathered.
    Stored,
}

impl Emitter<'_> {
    /// One product per row ([`Op::StridedAxpy`]): a loop over a range
    /// level's coordinates (DIA's rows below a diagonal) or over every
    /// coordinate (ELL's rows in a slot) whose body adds a product into a
    /// dense output, the product's operands reached through levels whose
    /// positions follow the loop's coordinate ([`CoordinateRelation`]):
    /// the loop's level is positional, the one below it (if any) has one
    /// child per parent, and every other operand is dense.
    pub(super) fn try_strided_axpy(&mut self, var: &LoopVar, body: &Cin, shape: &LoopShape) -> bool {
        let Some(out) = self.output_operand() else {
            return false;
        };
        if self.workspace.is_some() || self.chunk_of(var).is_some() {
            return false;
        }
        let driver = match (shape.universe, shape.walked.as_slice()) {
            (false, [d]) => {
                let it = &shape.iterators[*d];
                let range = it.format.capabilities().iteration == Iteration::CoordinateValue
                    && it.format.coordinate_relation() == CoordinateRelation::Positional
                    && it.format.unique;
                if !range {
                    return false;
                }
                Some(it.operand)
            }
            (true, []) => None,
            _ => return false,
        };
        let Some((inner, columns, expr)) = row_body(body) else {
            return false;
        };
        let mut accesses = Vec::new();
        let mut literal = 1.0;
        if !product_parts(expr, &mut accesses, &mut literal) || accesses.is_empty() {
            return false;
        }
        // The row operand: its level at the loop, then (with an inner
        // loop) its one-child last level at the inner variable.
        let mut row_operand = None;
        let mut inner_kind = None;
        for &a in &accesses {
            let st = &self.states[a];
            if st.done == st.level_vars.len() || st.level_vars[st.done] != *var {
                continue;
            }
            let level = st.formats[st.done];
            let positional = level.coordinate_relation() == CoordinateRelation::Positional;
            let at_loop = match driver {
                Some(d) => d == a,
                None => locates_by_position(level),
            };
            let below = st.formats.get(st.done + 1).copied();
            let child = match (inner, below) {
                (Some(c), Some(f)) if st.done + 2 == st.level_vars.len() && st.level_vars[st.done + 1] == *c => {
                    let p = f.properties();
                    match f.coordinate_relation() {
                        CoordinateRelation::ShiftedParent if p.branchless && p.unique => Some(InnerCoordinate::Shifted),
                        CoordinateRelation::Stored if p.branchless && p.unique && f.coordinate_array().is_some() => {
                            Some(InnerCoordinate::Stored)
                        }
                        _ => None,
                    }
                }
                _ => None,
            };
            if positional && at_loop && child.is_some() && row_operand.is_none() {
                row_operand = Some(a);
                inner_kind = child;
            }
        }
        // Without an inner loop the row operand's level at the loop holds
        // the values; the dense-operand checks below cover it.
        if inner.is_some() && row_operand.is_none() {
            return false;
        }
        if driver.is_some() && driver != row_operand {
            return false;
        }
        // Rows of several products: after an inner coordinate, shifted or
        // stored (a DIA diagonal's or an ELL slot's rows times a dense
        // matrix's rows).
        if columns.is_some() && inner_kind.is_none() {
            return false;
        }
        let mut fixed_values = Vec::new();
        let mut located = Vec::new();
        for &a in &accesses {
            let st = &self.states[a];
            if Some(a) == row_operand {
                continue;
            }
            if st.done == st.level_vars.len() {
                fixed_values.push(a);
                continue;
            }
            let ok = match inner_kind {
                // Gathered: located at the stored coordinate alone, or at it
                // and the column.
                Some(InnerCoordinate::Stored) => {
                    let tail: Vec<&LoopVar> = [inner, columns].into_iter().flatten().collect();
                    let (n, t) = (st.level_vars.len(), tail.len());
                    n >= st.done + t
                        && st.level_vars[n - t..].iter().eq(tail.iter().copied())
                        && st.formats[n - t..].iter().all(|&f| locates_by_position(f))
                        && self.dense_and_known(a, &[], st.done..n - t)
                }
                _ => self.dense_and_known(
                    a,
                    &[Some(var), inner, columns].into_iter().flatten().collect::<Vec<_>>(),
                    st.done..st.level_vars.len(),
                ),
            };
            if !ok {
                return false;
            }
            located.push(a);
        }
        let out_loops: Vec<&LoopVar> = match inner_kind {
            Some(InnerCoordinate::Stored) => [Some(var), columns].into_iter().flatten().collect(),
            _ => [Some(var), inner, columns].into_iter().flatten().collect(),
        };
        // The factors that move along the columns come last: the shared op
        // multiplies the others once per row.
        let moves = |st: &OperandState| columns.is_some_and(|c| st.level_vars.contains(c));
        located.sort_by_key(|&a| moves(&self.states[a]));
        let ost = &self.states[out];
        if !self.dense_and_known(out, &out_loops, ost.done..ost.level_vars.len()) {
            return false;
        }

        let presences: Vec<_> = accesses.iter().map(|&a| self.states[a].present).collect();
        let skip = self.skip_unless_all(&presences);
        let scale = self.product_of_values(&fixed_values);
        if literal != 1.0 {
            let l = self.freg();
            self.ops.push(Op::FConst { dst: l, value: literal });
            self.ops.push(Op::FBin {
                op: crate::bytecode::FloatOp::Mul,
                dst: scale,
                a: l,
                b: scale,
            });
        }
        let (begin, end) = self.row_range(var, driver);
        let rows = self.ireg();
        self.int_op(IntOp::Sub, rows, end, begin);
        let (one, zero) = (self.iconst(1), self.iconst(0));
        let second = self.ireg();
        self.int_op(IntOp::Add, second, begin, one);
        // The row operand's value positions (and inner coordinates) at the
        // first two rows.
        let mut factors: SmallVec<[Strided; 3]> = SmallVec::new();
        let mut inner_at: Vec<IReg> = Vec::new();
        let mut value_at: Vec<IReg> = Vec::new();
        if let Some(r) = row_operand {
            for c in [begin, second] {
                let (pos, coord) = self.row_position(r, c, inner_kind == Some(InnerCoordinate::Shifted));
                value_at.push(pos);
                inner_at.extend(coord);
            }
            factors.push(Strided::Run(self.run_between(r, value_at[0], value_at[1])));
        }
        // The positions at column 0, and each factor's step to column 1.
        let mut column_steps: SmallVec<[Option<IReg>; 3]> = SmallVec::new();
        if row_operand.is_some() {
            column_steps.push(None);
        }
        let column_at = |fixed: &mut Vec<(LoopVar, IReg)>, c: IReg| {
            if let Some(col) = columns {
                fixed.push((col.clone(), c));
            }
        };
        for &a in &located {
            let factor = match (inner_kind, inner) {
                (Some(InnerCoordinate::Stored), Some(c)) => {
                    let at = |coord: IReg, column: IReg| {
                        let mut fixed = vec![(c.clone(), coord)];
                        column_at(&mut fixed, column);
                        fixed
                    };
                    let base = self.locate_dense(a, &at(zero, zero));
                    // A stored inner coordinate comes from the row operand's
                    // one-child level, whose positions the gather steps through.
                    let r = row_operand.expect("a stored inner coordinate has a row operand");
                    let level = LevelRef::new(r, self.states[r].done + 1);
                    let step = self.difference(value_at[1], value_at[0]);
                    let (coord_step, column_step) = match columns {
                        Some(_) => {
                            let (below, beside) = (
                                self.locate_dense(a, &at(one, zero)),
                                self.locate_dense(a, &at(zero, one)),
                            );
                            (Some(self.difference(below, base)), Some(self.difference(beside, base)))
                        }
                        None => (None, None),
                    };
                    column_steps.push(column_step);
                    Strided::Gather {
                        operand: a as u32,
                        base,
                        level,
                        start: value_at[0],
                        step,
                        coord_step,
                    }
                }
                _ => {
                    let at = |k: usize, c: IReg| {
                        let mut fixed = vec![(var.clone(), [begin, second][k])];
                        if let Some(c) = inner {
                            fixed.push((c.clone(), inner_at[k]));
                        }
                        column_at(&mut fixed, c);
                        fixed
                    };
                    let (first, next) = (self.locate_dense(a, &at(0, zero)), self.locate_dense(a, &at(1, zero)));
                    column_steps.push(match moves(&self.states[a]) {
                        true => {
                            let beside = self.locate_dense(a, &at(0, one));
                            Some(self.difference(beside, first))
                        }
                        false => None,
                    });
                    Strided::Run(self.run_between(a, first, next))
                }
            };
            factors.push(factor);
        }
        let out_at = |k: usize, c: IReg| {
            let mut fixed = vec![(var.clone(), [begin, second][k])];
            if let (Some(c), Some(InnerCoordinate::Shifted)) = (inner, inner_kind) {
                fixed.push((c.clone(), inner_at[k]));
            }
            column_at(&mut fixed, c);
            fixed
        };
        let (first, next) = (
            self.locate_dense(out, &out_at(0, zero)),
            self.locate_dense(out, &out_at(1, zero)),
        );
        let columns = match columns {
            Some(col) => {
                let beside = self.locate_dense(out, &out_at(0, one));
                Some(StridedColumns {
                    count: self.loop_extent(col),
                    out_step: self.difference(beside, first),
                    steps: column_steps,
                })
            }
            None => None,
        };
        let out_run = self.run_between(out, first, next);
        self.strided_per_block |= matches!(var.relation(), Some(Relation::WithinBlock { .. }));
        self.ops.push(Op::StridedAxpy {
            rows,
            scale,
            factors,
            out: out_run,
            columns,
            deferred: false,
        });
        self.patch(skip);
        true
    }

    /// The loop's rows: a range level's computed coordinates, or every
    /// coordinate.
    fn row_range(&mut self, var: &LoopVar, driver: Option<usize>) -> (IReg, IReg) {
        match driver {
            Some(a) => {
                let st = self.states[a].clone();
                let (begin, end) = (self.ireg(), self.ireg());
                let ancestors = self.ancestors(a, st.done);
                self.ops.push(Op::CoordIter {
                    level: LevelRef::new(a, st.done),
                    ancestors,
                    begin,
                    end,
                });
                (begin, end)
            }
            None => (self.iconst(0), self.loop_extent(var)),
        }
    }

    /// The row operand's value position at row coordinate `c`, and (when
    /// `shifted`) the inner coordinate there.
    fn row_position(&mut self, a: usize, c: IReg, shifted: bool) -> (IReg, Option<IReg>) {
        let st = self.states[a].clone();
        let level = LevelRef::new(a, st.done);
        let ancestors = self.ancestors(a, st.done);
        let (pos, found) = (self.ireg(), self.breg());
        if st.formats[st.done].capabilities().iteration == Iteration::CoordinateValue
            && !st.formats[st.done].capabilities().locate
        {
            self.ops.push(Op::CoordAccess {
                level,
                parent: st.parent_pos(),
                ancestors: ancestors.clone(),
                coord: c,
                pos,
                found,
            });
        } else {
            self.ops.push(Op::Locate {
                level,
                parent: st.parent_pos(),
                ancestors: ancestors.clone(),
                coord: c,
                pos,
                found,
            });
        }
        if st.done + 1 == st.level_vars.len() {
            return (pos, None);
        }
        // The one child: its position is the first of its parent's.
        let child = LevelRef::new(a, st.done + 1);
        let (first, unused) = (self.ireg(), self.ireg());
        self.ops.push(Op::PosIter {
            level: child,
            parent: pos,
            begin: first,
            end: unused,
        });
        if !shifted {
            return (first, None);
        }
        let (coord, found) = (self.ireg(), self.breg());
        let mut ancestors = ancestors;
        ancestors.push(c);
        self.ops.push(Op::PosAccess {
            level: child,
            pos: first,
            ancestors,
            coord,
            found,
        });
        (first, Some(coord))
    }

    /// The run of operand `a`'s values from `first`, stepping to `next`.
    pub(super) fn run_between(&mut self, a: usize, first: IReg, next: IReg) -> StridedRun {
        StridedRun {
            operand: a as u32,
            start: first,
            step: self.difference(next, first),
        }
    }

    /// Whether levels `levels` of operand `a` are dense, their variables
    /// bound, among `loops`, or recovered from those.
    fn dense_and_known(&self, a: usize, loops: &[&LoopVar], levels: std::ops::Range<usize>) -> bool {
        let st = &self.states[a];
        let known = |v: &LoopVar| self.var_regs.contains_key(v) || loops.contains(&v);
        levels.clone().all(|k| {
            let v = &st.level_vars[k];
            locates_by_position(st.formats[k])
                && (known(v)
                    || self
                        .lowered
                        .provenance
                        .recovery(v)
                        .is_some_and(|(outer, within, _)| known(&outer) && known(&within)))
        })
    }
}

/// The body of a row loop: `out += expr`, possibly through one inner loop
/// (`forall c: out += expr`, or `out += t where t = forall c: t += expr`)
/// and then a loop over columns (`forall c: forall j: out += expr`); the
/// inner loop's variable, the columns' and `expr`.
fn row_body(body: &Cin) -> Option<(Option<&LoopVar>, Option<&LoopVar>, &CinExpr)> {
    fn assigned(body: &Cin) -> Option<&CinExpr> {
        match body {
            Cin::Assign {
                target: Target::Output,
                expr,
            } => Some(expr),
            _ => None,
        }
    }
    match body {
        Cin::Assign {
            target: Target::Output,
            expr,
        } => Some((None, None, expr)),
        Cin::Forall { var, body } => match body.as_ref() {
            Cin::Forall { var: columns, body } => assigned(body).map(|expr| (Some(var), Some(columns), expr)),
            body => assigned(body).map(|expr| (Some(var), None, expr)),
        },
        _ => reduction_of_product(body).map(|(var, expr)| (Some(var), None, expr)),
    }
}

/// Whether `expr` is a product of accesses of distinct operands and
/// literals; collects the accesses and multiplies the literals into
/// `literal`. (Block ops read each operand's value once: an operand read
/// twice, `B(i,j) * B(i,j)`, is a square they would not compute.)
pub(super) fn product_parts(expr: &CinExpr, accesses: &mut Vec<usize>, literal: &mut f64) -> bool {
    let from = accesses.len();
    collect_product_parts(expr, accesses, literal) && distinct(&accesses[from..])
}

/// Whether no operand repeats among `accesses`.
pub(super) fn distinct(accesses: &[usize]) -> bool {
    accesses.iter().enumerate().all(|(k, a)| !accesses[..k].contains(a))
}

/// [`product_parts`] that keeps an operand read more than once, for ops
/// that read each factor's value on its own ([`Op::DenseDot`]).
pub(super) fn collect_product_parts(expr: &CinExpr, accesses: &mut Vec<usize>, literal: &mut f64) -> bool {
    match expr {
        CinExpr::Access(a) => {
            accesses.push(*a);
            true
        }
        CinExpr::Literal(v) => {
            *literal *= v;
            true
        }
        CinExpr::Binary {
            op: crate::notation::BinaryOp::Mul,
            lhs,
            rhs,
        } => collect_product_parts(lhs, accesses, literal) && collect_product_parts(rhs, accesses, literal),
        _ => false,
    }
}

/// Defers the strided update of a program that repeats it in a loop and
/// touches the output nowhere else (a DIA matrix times x: one update per
/// diagonal, the caller checks that the loop is over no output
/// variable), so that the updates run together, a tile of the output at a
/// time ([`crate::runtime::strided`]); the caller flushes them at the end.
/// Whether it did. Updates that gather (an ELL slot's columns) are
/// deferred too: in long tiles (the runtime picks the tile by how many
/// streams the updates read), SpMV on a 1M-row Laplacian in ELL took
/// 0.87x the time of its slots run one after another, and its tiles run
/// on every thread.
pub(super) fn defer_strided_updates(ops: &mut [Op]) -> bool {
    let mut strided = (0..ops.len()).filter(|&k| matches!(ops[k], Op::StridedAxpy { .. }));
    let (Some(at), None) = (strided.next(), strided.next()) else {
        return false;
    };
    let alone = ops
        .iter()
        .all(|op| matches!(op, Op::StridedAxpy { .. }) || !op.touches_output());
    let repeated = ops[at..].iter().any(|op| matches!(op, Op::Jump { to } if *to <= at));
    if !(alone && repeated) {
        return false;
    }
    if let Op::StridedAxpy { deferred, .. } = &mut ops[at] {
        *deferred = true;
    }
    true
}
