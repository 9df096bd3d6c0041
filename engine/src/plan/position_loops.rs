//! Interpreter shortcuts: a loop over the positions of one level whose body
//! is one block op and an output write, run by the interpreter as one
//! [`Op::PositionLoop`] instead of a dozen ops per position (TTV's loop over
//! fibres of one entry or two). Compiled tiers skip the shortcut and compile
//! the loop, which they run as fast.
//!
//! The shortcut is recognised in the loop the emitter has just written, so
//! it covers exactly the code it stands for: the registers the loop sets are
//! its own, and every other register the body reads is set before the loop.

use smallvec::SmallVec;
use tessera_formats::{Cmp, IntOp, LevelKind, LevelRef};

use super::Emitter;
use crate::bytecode::{Affine, DotFactor, FReg, IReg, Op, PositionBody};

mod coordinates;
mod straight_line;

/// The skeleton of a loop written by `emit_driven_loop`, unrolled once:
/// `top: more = cursor < end; exit unless more; coord, found = pos_access
/// driver cursor; skip unless found; body; step: cursor += one; jump top`.
struct DrivenLoop {
    driver: LevelRef,
    cursor: IReg,
    end: IReg,
    coord: IReg,
    /// The ops of the body: `body.start..step`.
    body: std::ops::Range<usize>,
    /// Registers the loop sets outside its body besides `cursor` and
    /// `coord` (a coordinate loop's own counter and positions): a body
    /// reading one is not read as the driver's loop.
    skeleton: SmallVec<[IReg; 4]>,
}

impl DrivenLoop {
    fn parse(ops: &[Op], top: usize) -> Option<Self> {
        let [Op::ICmp {
            op: Cmp::Lt,
            dst: more,
            a: cursor,
            b: end,
        }, Op::JumpIfNot { cond, to: exit }, Op::PosAccess {
            level: driver,
            pos,
            coord,
            found,
            ..
        }, Op::JumpIfNot {
            cond: found_cond,
            to: step,
        }, ..] = ops.get(top..)?
        else {
            return None;
        };
        let (step, exit) = (*step, *exit);
        let closes = matches!(
            ops.get(step..)?,
            [Op::IBin { op: IntOp::Add, dst, a, .. }, Op::Jump { to }]
                if dst == cursor && a == cursor && *to == top
        );
        let whole = cond == more && pos == cursor && found_cond == found && exit == step + 2 && exit == ops.len();
        (closes && whole).then_some(DrivenLoop {
            driver: *driver,
            cursor: *cursor,
            end: *end,
            coord: *coord,
            body: top + 4..step,
            skeleton: SmallVec::new(),
        })
    }
}

/// The dot of a position's segment that a shortcut body computes
/// ([`Emitter::segment_dot`]), and the op that writes it.
struct SegmentDot<'o> {
    child: LevelRef,
    factors: &'o SmallVec<[DotFactor; 2]>,
    acc: FReg,
    /// Registers the loop itself sets.
    own: [IReg; 4],
    write: &'o Op,
}

impl SegmentDot<'_> {
    /// Whether the factors' rows and `read` hold across the loop: no
    /// register the loop sets, nor `also_set`.
    fn invariant(&self, read: impl Iterator<Item = IReg>, also_set: &[IReg]) -> bool {
        let set = |r: &IReg| self.own.contains(r) || also_set.contains(r);
        self.factors.iter().map(|f| f.parent).chain(read).all(|r| !set(&r))
    }
}

impl Emitter<'_> {
    /// When the driven loop just emitted at `top` has a body the
    /// interpreter runs as one op, puts that op before it and says what it
    /// does.
    pub(super) fn shortcut_position_loop(&mut self, top: usize) -> Option<&'static str> {
        let lp = DrivenLoop::parse(&self.ops, top)?;
        let kind = |l: LevelRef| self.states[l.operand as usize].formats[l.level as usize].kind;
        if !matches!(kind(lp.driver), LevelKind::Compressed | LevelKind::Singleton) {
            return None;
        }
        let (body, what) = self
            .appended_dots(&lp)
            .or_else(|| self.added_dots(&lp))
            .or_else(|| self.nested(&lp))
            .or_else(|| self.straight_line(&lp))
            .or_else(|| self.nested_straight_line(&lp))?;
        if body.child().is_some_and(|child| kind(child) != LevelKind::Compressed) {
            return None;
        }
        let resume = self.ops.len() + 1;
        self.insert_op(
            top,
            Op::PositionLoop {
                driver: lp.driver,
                cursor: lp.cursor,
                end: lp.end,
                coordinates: None,
                body,
                resume,
            },
        );
        Some(what)
    }

    /// `acc = 0; present = false; begin, end = pos_iter child cursor; acc
    /// += dot child begin..end * factors; present |= begin < end; skip
    /// unless present;` then `write`, the one op that writes `acc`, read
    /// by [`SegmentDot`]'s caller.
    fn segment_dot<'o>(&'o self, lp: &DrivenLoop, ops: &'o [Op]) -> Option<SegmentDot<'o>> {
        let [Op::FConst { dst: acc, value }, Op::BConst {
            dst: present,
            value: false,
        }, Op::PosIter {
            level: child,
            parent,
            begin,
            end,
        }, Op::DotBlock {
            driver: dotted,
            begin: dot_begin,
            end: dot_end,
            factors,
            temp: None,
            acc: dot_acc,
        }, Op::ICmp {
            op: Cmp::Lt,
            dst: nonempty,
            a: cmp_begin,
            b: cmp_end,
        }, Op::BOr {
            dst: either,
            a: was,
            b: now,
        }, Op::JumpIfNot { cond: writes, to: skip }, write] = ops
        else {
            return None;
        };
        let below = *child == LevelRef::new(lp.driver.operand as usize, lp.driver.level as usize + 1);
        let segment = parent == &lp.cursor && dotted == child && (dot_begin, dot_end) == (begin, end);
        let flag = (cmp_begin, cmp_end) == (begin, end) && (either, was, now) == (present, present, nonempty);
        let guarded = writes == present && *skip == lp.body.end;
        // `acc = 0.0` exactly: the shortcut's sum starts from +0.0.
        let from_zero = value.to_bits() == 0 && dot_acc == acc;
        (below && segment && flag && guarded && from_zero).then_some(SegmentDot {
            child: *child,
            factors,
            acc: *acc,
            own: [lp.cursor, lp.coord, *begin, *end],
            write,
        })
    }

    /// A [`Self::segment_dot`] appended: `append prefix ++ [coord] acc`.
    fn appended_dots(&self, lp: &DrivenLoop) -> Option<(PositionBody, &'static str)> {
        let dot = self.segment_dot(lp, &self.ops[lp.body.clone()])?;
        let Op::Append { coords, value } = dot.write else {
            return None;
        };
        let (&last, prefix) = coords.split_last()?;
        let invariant = dot.invariant(prefix.iter().copied(), &[]);
        (*value == dot.acc && last == lp.coord && invariant).then(|| {
            let body = PositionBody::AppendedDots {
                child: dot.child,
                factors: dot.factors.clone(),
                prefix: SmallVec::from_slice(prefix),
            };
            (body, "a dot product per stored fibre, appended")
        })
    }

    /// `at = locate out parent coord;` then a [`Self::segment_dot`] added
    /// into the dense output, `out[at] += acc`: DCSR's SpMV, or TTV on CSF
    /// into a dense matrix.
    fn added_dots(&self, lp: &DrivenLoop) -> Option<(PositionBody, &'static str)> {
        let [Op::Locate {
            level: out,
            parent: out_parent,
            coord: located,
            pos: at,
            ..
        }, rest @ ..] = &self.ops[lp.body.clone()]
        else {
            return None;
        };
        let dot = self.segment_dot(lp, rest)?;
        let Op::AccumOutput { pos, value } = dot.write else {
            return None;
        };
        let dense_out = Some(out.operand as usize) == self.output_operand()
            && self.states[out.operand as usize].formats[out.level as usize].kind == LevelKind::Dense;
        let written = (pos, *value) == (at, dot.acc) && located == &lp.coord;
        let invariant = dot.invariant([*out_parent].into_iter(), &[*at]);
        (dense_out && written && invariant).then(|| {
            let body = PositionBody::AddedDots {
                child: dot.child,
                factors: dot.factors.clone(),
                at: Affine::Dense {
                    level: *out,
                    parent: Box::new(Affine::Reg(*out_parent)),
                    coord: Box::new(Affine::Coordinate),
                },
            };
            (body, "a dot product per stored fibre, added into the output")
        })
    }

    /// `begin, end = pos_iter child cursor; one = 1;` then the child's own
    /// loop, shortcut, whose appended entries end with this loop's
    /// coordinate and the child's.
    fn nested(&self, lp: &DrivenLoop) -> Option<(PositionBody, &'static str)> {
        let [Op::PosIter {
            level: child,
            parent,
            begin,
            end,
        }, Op::IConst { value: 1, .. }, Op::PositionLoop {
            driver,
            cursor,
            end: inner_end,
            coordinates: None,
            body,
            resume,
        }, ..] = &self.ops[lp.body.clone()]
        else {
            return None;
        };
        let below = *child == LevelRef::new(lp.driver.operand as usize, lp.driver.level as usize + 1);
        let segment = parent == &lp.cursor && driver == child && (cursor, inner_end) == (begin, end);
        if !(below && segment && *resume == lp.body.end) {
            return None;
        }
        let body = Self::coordinate_joined(body, lp.coord, &[lp.cursor, lp.coord, *begin, *end])?;
        let what = "a dot product per stored fibre, appended, for each stored row";
        Some((
            PositionBody::Nested {
                child: *child,
                body: Box::new(body),
            },
            what,
        ))
    }

    /// `body` with the coordinate in `coord`, last of the registers its
    /// entries start with, taken from the loop around it instead; None
    /// unless the body reads none of that loop's registers `own`.
    fn coordinate_joined(body: &PositionBody, coord: IReg, own: &[IReg]) -> Option<PositionBody> {
        match body {
            PositionBody::AppendedDots { child, factors, prefix } => {
                let (&last, outer) = prefix.split_last()?;
                let invariant = factors
                    .iter()
                    .map(|f| f.parent)
                    .chain(outer.iter().copied())
                    .all(|r| !own.contains(&r));
                (last == coord && invariant).then(|| PositionBody::AppendedDots {
                    child: *child,
                    factors: factors.clone(),
                    prefix: SmallVec::from_slice(outer),
                })
            }
            PositionBody::Nested { child, body } => Some(PositionBody::Nested {
                child: *child,
                body: Box::new(Self::coordinate_joined(body, coord, own)?),
            }),
            // Bodies that do not append take no coordinates; copies of
            // the values append only at their own loop's.
            PositionBody::AddedDots { .. }
            | PositionBody::DenseDots { .. }
            | PositionBody::Copies { .. }
            | PositionBody::RowUpdates { .. }
            | PositionBody::WorkspaceRows { .. }
            | PositionBody::Scatter { .. }
            | PositionBody::Reduce { .. } => None,
        }
    }

    /// Inserts `op` at `at`, moving the ops from there on one place later
    /// and every jump into them with them.
    pub(super) fn insert_op(&mut self, at: usize, op: Op) {
        for existing in &mut self.ops {
            match existing {
                // Jumps still to be patched point nowhere yet.
                Op::Jump { to } | Op::JumpIf { to, .. } | Op::JumpIfNot { to, .. } if (at..usize::MAX).contains(to) => {
                    *to += 1
                }
                Op::PositionLoop { resume, .. } | Op::RunEnd { resume, .. } if *resume >= at => *resume += 1,
                _ => {}
            }
        }
        self.ops.insert(at, op);
    }
}
