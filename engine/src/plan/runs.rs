//! Block ops over runs of values: loops whose every access walks dense
//! levels, so that its positions move by a fixed step per coordinate. The
//! steps are not derived from formats: the planner locates each access at
//! two coordinates and subtracts, which is exact because a dense level's
//! position is affine in its parent's position and its coordinate, and a
//! recovered variable (`i = i/b·b + i%b`) is affine in its parts.

use smallvec::SmallVec;
use tessera_formats::{IntOp, LevelKind, LevelRef};

use super::{Emitter, LoopShape};
use crate::bytecode::{IReg, Op, RunLength, StridedRun};
use crate::cin::{Cin, CinExpr, LoopVar, Relation, Target};

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
        for a in runs {
            factors.push(self.strided_run(a, var, Some(inner), zero, one));
        }
        let out = self.strided_run(out, var, None, zero, one);
        let rows = self.run_length(var);
        let len = self.run_length(inner);
        self.ops.push(Op::DenseRowsDot {
            rows,
            len,
            scale,
            factors,
            out,
        });
        self.patch(skip);
        true
    }

    /// Whether every unbound level of operand `a` is dense and its variable
    /// is bound, one of `loops`, or recovered from those; with `along`,
    /// whether the last level runs along it (its variable is `along` or
    /// recovered with `along` as the place in a block) and no other does.
    fn walks_dense_levels(&self, a: usize, loops: &[&LoopVar], along: Option<&LoopVar>) -> bool {
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
            st.formats[k].kind == LevelKind::Dense && available && (runs_along == (along.is_some() && k + 1 == last))
        }) && st.done < last
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
        self.ops.push(Op::IBin {
            op: IntOp::Sub,
            dst: step,
            a: next,
            b: start,
        });
        StridedRun {
            operand: a as u32,
            start,
            step,
        }
    }

    /// The position of operand `a`'s value with its unbound (dense) levels
    /// located at their variables' coordinates, `fixed` overriding loops.
    fn locate_dense(&mut self, a: usize, fixed: Fixed<'_>) -> IReg {
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
        let (b, c) = (self.iconst(block as i64), self.ireg());
        self.ops.push(Op::IBin {
            op: IntOp::Mul,
            dst: c,
            a: outer,
            b,
        });
        self.ops.push(Op::IBin {
            op: IntOp::Add,
            dst: c,
            a: c,
            b: within,
        });
        c
    }

    /// How many coordinates a loop over `v` runs through: a block's size
    /// when `v` is a place in a block (known when planning), its size in
    /// the run otherwise.
    pub(super) fn run_length(&mut self, v: &LoopVar) -> RunLength {
        if let Some(Relation::WithinBlock { block, .. }) = v.relation() {
            return RunLength::Fixed(*block as u32);
        }
        let n = self.ireg();
        let vi = self.var_index(v);
        self.ops.push(Op::Dim { dst: n, var: vi });
        RunLength::In(n)
    }
}

/// `out += t where t = forall inner: t += expr`: the inner loop's variable
/// and `expr`.
fn reduction_of_product(body: &Cin) -> Option<(&LoopVar, &CinExpr)> {
    let Cin::Where {
        temp,
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
        } if t == temp && t2 == temp => Some((var, expr)),
        _ => None,
    }
}
