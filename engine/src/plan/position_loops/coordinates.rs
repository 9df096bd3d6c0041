//! Loops over the coordinates of a level that places them by arithmetic
//! (dense and range levels: coordinate `c` below `parent` at `parent ·
//! extent + c`), whose child has one position per parent position (a
//! singleton or offset level): ELL's rows of a slot, DIA's rows of a
//! diagonal. Consecutive coordinates are consecutive positions of the
//! child, so the loop is a walk over a run of the child's positions, and
//! its body is read as a driven loop's ([`DrivenLoop`]), the child the
//! driver.

use smallvec::SmallVec;
use tessera_formats::{Cmp, CoordinateRelation, IntOp, Level, LevelRef};

use super::DrivenLoop;
use crate::bytecode::{CoordinateWalk, IReg, Op, PositionBody, ScaleFactor};
use crate::plan::Emitter;

/// The skeleton of a loop over `level`'s coordinates `coord..end` below
/// `parent`, its child's position and coordinate read at each:
/// `top: more = c < end; exit unless more; (flag = false)*; p = locate
/// level parent c; q.. = pos_iter child p; k = pos_access child q; skip
/// unless found; body; step: (one = 1)? c += one; jump top`.
struct CoordinateLoop {
    level: LevelRef,
    parent: IReg,
    coord: IReg,
    end: IReg,
    /// The child's positions as a driven loop's: cursor `q`, coordinate
    /// `k`, the body, and the registers the skeleton sets besides them.
    child: DrivenLoop,
}

impl CoordinateLoop {
    fn parse(ops: &[Op], top: usize) -> Option<Self> {
        let [Op::ICmp {
            op: Cmp::Lt,
            dst: more,
            a: coord,
            b: end,
        }, Op::JumpIfNot { cond, to: exit }, ..] = ops.get(top..)?
        else {
            return None;
        };
        (cond == more).then_some(())?;
        let mut at = top + 2;
        // Flags a merge's cases would read, reset per coordinate: a body
        // reading one is refused by the reading (it knows no such flag).
        while let Some(Op::BConst { value: false, .. }) = ops.get(at) {
            at += 1;
        }
        let (level, parent, position, located) = match ops.get(at)? {
            Op::Locate {
                level,
                parent,
                coord: c,
                pos,
                found,
                ..
            }
            | Op::CoordAccess {
                level,
                parent,
                coord: c,
                pos,
                found,
                ..
            } if c == coord => (*level, *parent, *pos, *found),
            _ => return None,
        };
        at += 1;
        let mut step = None;
        if let Some(Op::JumpIfNot { cond, to }) = ops.get(at) {
            (*cond == located).then_some(())?;
            step = Some(*to);
            at += 1;
        }
        let [Op::PosIter {
            level: child,
            parent: child_parent,
            begin: cursor,
            end: child_end,
        }, Op::PosAccess {
            level: accessed,
            pos,
            coord: child_coord,
            found,
            ..
        }, Op::JumpIfNot {
            cond: child_found,
            to: child_step,
        }, ..] = ops.get(at..)?
        else {
            return None;
        };
        let below = *child == LevelRef::new(level.operand as usize, level.level as usize + 1);
        let chained = child_parent == &position && accessed == child && pos == cursor && child_found == found;
        (below && chained && step.is_none_or(|s| s == *child_step)).then_some(())?;
        let body = at + 3..*child_step;
        let (one, after) = match ops.get(*child_step..)? {
            [Op::IConst { dst, value: 1 }, Op::IBin {
                op: IntOp::Add,
                dst: c,
                a,
                b,
            }, Op::Jump { to }, ..]
                if c == coord && a == coord && b == dst && *to == top =>
            {
                (Some(*dst), *child_step + 3)
            }
            [Op::IBin {
                op: IntOp::Add,
                dst: c,
                a,
                ..
            }, Op::Jump { to }, ..]
                if c == coord && a == coord && *to == top =>
            {
                (None, *child_step + 2)
            }
            _ => return None,
        };
        (*exit == after && after == ops.len()).then_some(())?;
        let mut skeleton: SmallVec<[IReg; 4]> = SmallVec::from_slice(&[*coord, position, *child_end]);
        skeleton.extend(one);
        Some(CoordinateLoop {
            level,
            parent,
            coord: *coord,
            end: *end,
            child: DrivenLoop {
                driver: *child,
                cursor: *cursor,
                end: *child_end,
                coord: *child_coord,
                body,
                skeleton,
            },
        })
    }
}

impl Emitter<'_> {
    /// [`Self::shortcut_coordinate_loop`] for the loop emitted from `top`
    /// on (over float values), its note put in the plan at `plan_at`.
    pub(in crate::plan) fn note_coordinate_shortcut(
        &mut self,
        float_values: bool,
        top: usize,
        plan_at: usize,
        pad: &str,
    ) {
        if let Some(what) = float_values.then(|| self.shortcut_coordinate_loop(top)).flatten() {
            let note = format!("{pad}  (the interpreter runs the loop as one op: {what})\n");
            self.plan.insert_str(plan_at, &note);
        }
    }

    /// When the coordinate loop just emitted from `from` on walks a run of its
    /// child's positions with a body the interpreter runs as one op, puts
    /// that op before it and says what it does.
    fn shortcut_coordinate_loop(&mut self, from: usize) -> Option<&'static str> {
        // The loop's counter and bounds are set up first: its top is the
        // first op from there that parses as the whole loop.
        let (top, lp) = (from..self.ops.len()).find_map(|top| Some((top, CoordinateLoop::parse(&self.ops, top)?)))?;
        let format = |l: LevelRef| self.states[l.operand as usize].formats[l.level as usize];
        // Every coordinate of a positional level's loop has its position
        // (`parent · extent + c`), so the loop's skipped checks never fail.
        let placed = format(lp.level).coordinate_relation() == CoordinateRelation::Positional;
        let relation = format(lp.child.driver).coordinate_relation();
        if !placed || !matches!(relation, CoordinateRelation::Stored | CoordinateRelation::ShiftedParent) {
            return None;
        }
        let (body, what) = self.straight_line(&lp.child)?;
        // An offset level's coordinates are computed from the rows above,
        // which the shortcut does not keep: only bodies that never read
        // the coordinate (sums of the values) run without them.
        let needs_coordinates = !matches!(
            &body,
            PositionBody::Reduce { scale, .. }
                if scale.iter().all(|f| *f == ScaleFactor::Own) && matches!(scale.len(), 1 | 2)
        );
        if relation == CoordinateRelation::ShiftedParent && needs_coordinates {
            return None;
        }
        let resume = self.ops.len() + 1;
        self.insert_op(
            top,
            Op::PositionLoop {
                driver: lp.child.driver,
                cursor: lp.coord,
                end: lp.end,
                coordinates: Some(CoordinateWalk {
                    level: lp.level,
                    parent: lp.parent,
                }),
                body,
                resume,
            },
        );
        Some(what)
    }
}
