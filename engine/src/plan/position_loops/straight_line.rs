//! Loop bodies of straight-line code around one block op: the positions
//! they compute are affine in the loop's coordinate (dense levels locate by
//! arithmetic), their scale a product of values, their write guarded by the
//! block's length. Read by evaluating the body's ops symbolically; an op
//! outside that vocabulary leaves the loop as it is.

use std::collections::HashMap;

use smallvec::SmallVec;
use tessera_formats::{Cmp, LevelKind, LevelRef};

use super::DrivenLoop;
use crate::bytecode::{Affine, BReg, FReg, FloatOp, IReg, Op, PositionBody, RowFactor, RunLength, ScaleFactor};
use crate::plan::Emitter;

/// What a float register of the body holds.
#[derive(Clone, PartialEq)]
enum Float {
    Const(f64),
    /// The driver's value at the position.
    Own,
    /// A product, from 1, of these factors.
    Scale(SmallVec<[ScaleFactor; 2]>),
    /// The dense dot's result.
    Dot,
    /// Another operand's value at a position the body computes.
    Gathered(u32, Affine),
}

/// What a boolean register of the body holds.
#[derive(Clone, PartialEq)]
enum Flag {
    True,
    False,
    /// `0 < n`.
    Positive(Affine),
}

/// The body read so far.
struct Reading<'l> {
    lp: &'l DrivenLoop,
    /// Registers some op of the loop writes.
    written_ints: Vec<IReg>,
    written_floats: Vec<FReg>,
    ints: HashMap<IReg, Affine>,
    floats: HashMap<FReg, Float>,
    flags: HashMap<BReg, Flag>,
    /// The child's segment below the position: its level, begin and end.
    segment: Option<(LevelRef, IReg, IReg)>,
    /// A row of another operand's level, below a position the body
    /// computes: the level, that position, begin and end.
    row: Option<(LevelRef, Affine, IReg, IReg)>,
    block: Option<PositionBody>,
    /// The write after a dense dot is guarded by its length.
    guarded: bool,
    wrote: bool,
}

impl Emitter<'_> {
    /// The body of `lp` as a [`PositionBody::DenseDots`] or
    /// [`PositionBody::RowUpdates`], when it is straight-line code around
    /// that block op.
    pub(super) fn straight_line(&self, lp: &DrivenLoop) -> Option<(PositionBody, &'static str)> {
        let reading = self.reading(lp, &self.ops[lp.body.clone()])?;
        // Bodies that read the driver's value at each position read it by
        // the position: the driver is its operand's last level.
        let holds_values = self.states[lp.driver.operand as usize].formats.len() == lp.driver.level as usize + 1;
        if !holds_values && !matches!(reading.block, Some(PositionBody::RowUpdates { .. })) {
            return None;
        }
        match reading.block? {
            body @ PositionBody::DenseDots { .. } if reading.wrote && reading.guarded => {
                Some((body, "a dense inner product per stored entry, written at its position"))
            }
            body @ PositionBody::RowUpdates { .. } if !reading.wrote => {
                Some((body, "a dense row update per stored entry of each fibre"))
            }
            body @ PositionBody::WorkspaceRows { .. } if !reading.wrote => {
                Some((body, "a row scattered into the workspace per stored entry"))
            }
            body @ PositionBody::Scatter { .. } => Some((body, "the scaled stored values added into the output")),
            body @ PositionBody::Copies { .. } => Some((body, "the scaled stored values appended")),
            body @ PositionBody::Reduce { .. } => Some((body, "a sum of products of the stored values")),
            _ => None,
        }
    }

    /// The body of `lp` as straight-line code around its child's loop,
    /// shortcut with a body that writes in place ([`PositionBody::Nested`]):
    /// the registers this body sets for the child's are replaced by what
    /// they hold, in terms of this loop's coordinate.
    pub(super) fn nested_straight_line(&self, lp: &DrivenLoop) -> Option<(PositionBody, &'static str)> {
        let ops = &self.ops[lp.body.clone()];
        let at = ops.iter().position(|op| matches!(op, Op::PositionLoop { .. }))?;
        let Op::PositionLoop {
            driver,
            cursor,
            end,
            coordinates: None,
            body,
            resume,
        } = &ops[at]
        else {
            return None;
        };
        // The child's loop runs to this loop's step; a body that appends
        // nests by its coordinates instead (`Self::nested`).
        let in_place = matches!(
            body,
            PositionBody::DenseDots { append: None, .. } | PositionBody::RowUpdates { .. }
        );
        if *resume != lp.body.end || !in_place {
            return None;
        }
        let reading = self.reading(lp, &ops[..at])?;
        if reading.segment != Some((*driver, *cursor, *end)) || reading.block.is_some() {
            return None;
        }
        let body = reading.around(body)?;
        let what = "a dense update per stored entry, for each stored row";
        Some((
            PositionBody::Nested {
                child: *driver,
                body: Box::new(body),
            },
            what,
        ))
    }

    /// `ops`, a part of `lp`'s body, read.
    fn reading<'l>(&self, lp: &'l DrivenLoop, ops: &[Op]) -> Option<Reading<'l>> {
        let (mut written_ints, written_floats) = written(ops)?;
        written_ints.extend(lp.skeleton.iter().copied());
        let mut reading = Reading {
            lp,
            written_ints,
            written_floats,
            ints: HashMap::new(),
            floats: HashMap::new(),
            flags: HashMap::new(),
            segment: None,
            row: None,
            block: None,
            guarded: false,
            wrote: false,
        };
        let kind = |l: &LevelRef| self.states[l.operand as usize].formats[l.level as usize].kind;
        let levels = |operand: u32| self.states[operand as usize].formats.len();
        for op in ops {
            reading.read(op, &kind, &levels)?;
        }
        Some(reading)
    }
}

impl Reading<'_> {
    /// `body`, the shortcut of a loop inside the part read, with the
    /// registers it reads in terms of this loop's coordinate: None when it
    /// reads one this part sets otherwise.
    fn around(&self, body: &PositionBody) -> Option<PositionBody> {
        let scale = |factors: &SmallVec<[ScaleFactor; 2]>| {
            factors
                .iter()
                .map(|f| match f {
                    ScaleFactor::Reg(r) if self.written_floats.contains(r) => None,
                    ScaleFactor::Gathered { operand, at } => Some(ScaleFactor::Gathered {
                        operand: *operand,
                        at: self.outer(at)?,
                    }),
                    other => Some(other.clone()),
                })
                .collect::<Option<SmallVec<_>>>()
        };
        Some(match body {
            PositionBody::DenseDots {
                scale: factors,
                runs,
                len,
                append: None,
            } => PositionBody::DenseDots {
                scale: scale(factors)?,
                runs: runs
                    .iter()
                    .map(|(operand, start)| Some((*operand, self.outer(start)?)))
                    .collect::<Option<_>>()?,
                len: self.outer(len)?,
                append: None,
            },
            PositionBody::RowUpdates {
                child,
                scale: factors,
                factors: rows,
                out,
                out_parent,
            } => PositionBody::RowUpdates {
                child: *child,
                scale: scale(factors)?,
                factors: rows
                    .iter()
                    .map(|f| {
                        Some(RowFactor {
                            parent: self.outer(&f.parent)?,
                            ..f.clone()
                        })
                    })
                    .collect::<Option<_>>()?,
                out: *out,
                out_parent: self.outer(out_parent)?,
            },
            _ => return None,
        })
    }

    /// An integer of the loop inside, in terms of this loop's coordinate
    /// (its [`Affine::Outer`]).
    fn outer(&self, inner: &Affine) -> Option<Affine> {
        Some(match inner {
            Affine::Reg(r) => self.int(*r)?.as_outer()?,
            Affine::Const(_) | Affine::Dim(_) | Affine::Coordinate => inner.clone(),
            Affine::Outer => return None,
            Affine::Dense { level, parent, coord } => Affine::Dense {
                level: *level,
                parent: Box::new(self.outer(parent)?),
                coord: Box::new(self.outer(coord)?),
            },
        })
    }

    /// A register read by the body, as a function of the coordinate: None
    /// for registers the loop changes in ways that are not affine.
    fn int(&self, r: IReg) -> Option<Affine> {
        if r == self.lp.coord {
            return Some(Affine::Coordinate);
        }
        if let Some(a) = self.ints.get(&r) {
            return Some(a.clone());
        }
        (r != self.lp.cursor && !self.written_ints.contains(&r)).then_some(Affine::Reg(r))
    }

    /// A float register read as a scale: its factors.
    fn scale(&self, r: FReg) -> Option<SmallVec<[ScaleFactor; 2]>> {
        match self.floats.get(&r) {
            Some(Float::Const(one)) if *one == 1.0 => Some(SmallVec::new()),
            // Multiplying by a literal from 1 gives the literal: exact.
            Some(Float::Const(x)) => Some(smallvec::smallvec![ScaleFactor::Const(x.to_bits())]),
            Some(Float::Scale(factors)) => Some(factors.clone()),
            Some(Float::Own) => Some(smallvec::smallvec![ScaleFactor::Own]),
            Some(Float::Gathered(operand, at)) => Some(smallvec::smallvec![ScaleFactor::Gathered {
                operand: *operand,
                at: at.clone(),
            }]),
            None if !self.written_floats.contains(&r) => Some(smallvec::smallvec![ScaleFactor::Reg(r)]),
            _ => None,
        }
    }

    fn read(&mut self, op: &Op, kind: &dyn Fn(&LevelRef) -> LevelKind, levels: &dyn Fn(u32) -> usize) -> Option<()> {
        let lp = self.lp;
        match op {
            Op::IConst { dst, value } => {
                self.ints.insert(*dst, Affine::Const(*value));
            }
            Op::Dim { dst, var } => {
                self.ints.insert(*dst, Affine::Dim(*var));
            }
            Op::Locate {
                level,
                parent,
                coord,
                pos,
                found,
                ..
            } if kind(level) == LevelKind::Dense => {
                let at = Affine::Dense {
                    level: *level,
                    parent: Box::new(self.int(*parent)?),
                    coord: Box::new(self.int(*coord)?),
                };
                self.ints.insert(*pos, at);
                self.flags.insert(*found, Flag::True);
            }
            Op::PosIter {
                level,
                parent,
                begin,
                end,
            } if *parent == lp.cursor && self.segment.is_none() => {
                let below = *level == LevelRef::new(lp.driver.operand as usize, lp.driver.level as usize + 1);
                below.then_some(())?;
                self.segment = Some((*level, *begin, *end));
            }
            Op::PosIter {
                level,
                parent,
                begin,
                end,
            } if self.row.is_none() && level.operand != lp.driver.operand => {
                self.row = Some((*level, self.int(*parent)?, *begin, *end));
            }
            Op::LoadValue { operand, pos, dst } if *pos == lp.cursor => {
                // The driver's own value: the position holds it when the
                // driver is its operand's last level.
                let own = *operand == lp.driver.operand;
                (own && lp.driver.level as usize + 1 == levels(*operand)).then_some(())?;
                self.floats.insert(*dst, Float::Own);
            }
            Op::LoadValue { operand, pos, dst } => {
                let at = self.int(*pos)?;
                self.floats.insert(*dst, Float::Gathered(*operand, at));
            }
            Op::FConst { dst, value } => {
                self.floats.insert(*dst, Float::Const(*value));
            }
            Op::FBin {
                op: FloatOp::Mul,
                dst,
                a,
                b,
            } => {
                // `a · b` is the product from 1 of a's factors then b's
                // when b has one factor at most (multiplying by 1 is exact).
                let mut factors = self.scale(*a)?;
                let last = self.scale(*b)?;
                (last.len() <= 1).then_some(())?;
                factors.extend(last);
                self.floats.insert(*dst, Float::Scale(factors));
            }
            // A flag the loop sets once it has seen a position (a sum's
            // presence): nothing in the body reads it.
            Op::BConst { dst, value: true } if matches!(&self.block, Some(PositionBody::Reduce { flag: None, .. })) => {
                let Some(PositionBody::Reduce { flag, .. }) = &mut self.block else {
                    unreachable!("matched above")
                };
                *flag = Some(*dst);
                self.wrote = true;
            }
            // Other flags start false here (a presence flag the body then
            // ORs into); a flag set true anywhere else may outlive the loop.
            Op::BConst { dst, value: false } => {
                self.flags.insert(*dst, Flag::False);
            }
            // A sum carried from position to position in `acc`, which the
            // body writes nowhere else.
            Op::FBin {
                op: FloatOp::Add,
                dst,
                a,
                b,
            } if dst == a && self.block.is_none() && !self.floats.contains_key(a) => {
                let carried_once = self.written_floats.iter().filter(|&&r| r == *a).count() == 1;
                carried_once.then_some(())?;
                self.block = Some(PositionBody::Reduce {
                    scale: self.scale(*b)?,
                    acc: *a,
                    flag: None,
                });
            }
            Op::ICmp { op: Cmp::Lt, dst, a, b } if self.int(*a) == Some(Affine::Const(0)) => {
                let n = self.int(*b)?;
                self.flags.insert(*dst, Flag::Positive(n));
            }
            Op::BOr { dst, a, b } => {
                let either = match (self.flags.get(a)?, self.flags.get(b)?) {
                    (Flag::False, other) | (other, Flag::False) => other.clone(),
                    _ => return None,
                };
                self.flags.insert(*dst, either);
            }
            Op::DenseDot {
                scale,
                factors,
                len,
                acc,
            } if self.block.is_none()
                && matches!(self.floats.get(acc), Some(Float::Const(zero)) if zero.to_bits() == 0) =>
            {
                let scale = self.scale(*scale)?;
                let runs = factors
                    .iter()
                    .map(|f| Some((f.operand, self.int(f.start)?)))
                    .collect::<Option<_>>()?;
                let len = match len {
                    RunLength::Fixed(n) => Affine::Const(i64::from(*n)),
                    RunLength::In(r) => self.int(*r)?,
                };
                self.floats.insert(*acc, Float::Dot);
                self.block = Some(PositionBody::DenseDots {
                    scale,
                    runs,
                    len,
                    append: None,
                });
            }
            Op::RowAxpy {
                driver,
                begin,
                end,
                scale,
                factors,
                out,
                out_parent,
            } if self.block.is_none() && self.segment == Some((*driver, *begin, *end)) => {
                // A row update's scale is one number for the whole op.
                let scale = self.scale(*scale)?;
                if scale.iter().any(|f| matches!(f, ScaleFactor::Gathered { .. })) {
                    return None;
                }
                let factors = factors
                    .iter()
                    .map(|f| {
                        Some(RowFactor {
                            operand: f.operand,
                            parent: self.int(f.parent)?,
                            via: f.via,
                        })
                    })
                    .collect::<Option<_>>()?;
                self.block = Some(PositionBody::RowUpdates {
                    child: *driver,
                    scale,
                    factors,
                    out: *out,
                    out_parent: self.int(*out_parent)?,
                });
            }
            Op::WorkspaceAxpy {
                driver,
                begin,
                end,
                scale,
                prefix,
            } if self.block.is_none() => {
                let (rows, parent, row_begin, row_end) = self.row.clone()?;
                let invariant = prefix.iter().all(|&r| self.int(r) == Some(Affine::Reg(r)));
                ((rows, row_begin, row_end) == (*driver, *begin, *end) && invariant).then_some(())?;
                self.block = Some(PositionBody::WorkspaceRows {
                    rows,
                    parent,
                    scale: self.scale(*scale)?,
                    prefix: prefix.clone(),
                });
            }
            Op::JumpIfNot { cond, to } if *to == lp.body.end => match (self.flags.get(cond)?, &self.block) {
                (Flag::True, _) => {}
                (Flag::Positive(n), Some(PositionBody::DenseDots { len, .. })) if n == len => self.guarded = true,
                _ => return None,
            },
            Op::AccumOutput { pos, value } if *pos == lp.cursor && self.floats.get(value) == Some(&Float::Dot) => {
                self.wrote = true;
            }
            Op::AccumOutput { pos, value } if self.block.is_none() && !self.wrote && *pos != lp.cursor => {
                self.block = Some(PositionBody::Scatter {
                    scale: self.scale(*value)?,
                    at: self.int(*pos)?,
                });
                self.wrote = true;
            }
            Op::Append { coords, value } if self.block.is_none() && !self.wrote => {
                let (&last, prefix) = coords.split_last()?;
                let invariant = prefix.iter().all(|&r| self.int(r) == Some(Affine::Reg(r)));
                (last == lp.coord && invariant).then_some(())?;
                self.block = Some(PositionBody::Copies {
                    scale: self.scale(*value)?,
                    prefix: prefix.iter().copied().collect(),
                });
                self.wrote = true;
            }
            Op::Append { coords, value } if self.floats.get(value) == Some(&Float::Dot) && !self.wrote => {
                let (&last, prefix) = coords.split_last()?;
                let invariant = prefix.iter().all(|&r| self.int(r) == Some(Affine::Reg(r)));
                let Some(PositionBody::DenseDots { append, .. }) = &mut self.block else {
                    return None;
                };
                (last == lp.coord && invariant).then_some(())?;
                *append = Some(prefix.iter().copied().collect());
                self.wrote = true;
            }
            _ => return None,
        }
        Some(())
    }
}

impl Affine {
    /// This loop's integer as seen from a loop inside it: its coordinate
    /// is the inner loop's outer one.
    fn as_outer(&self) -> Option<Affine> {
        Some(match self {
            Affine::Coordinate => Affine::Outer,
            Affine::Outer => return None,
            Affine::Reg(_) | Affine::Const(_) | Affine::Dim(_) => self.clone(),
            Affine::Dense { level, parent, coord } => Affine::Dense {
                level: *level,
                parent: Box::new(parent.as_outer()?),
                coord: Box::new(coord.as_outer()?),
            },
        })
    }
}

/// The integer and float registers `ops` write, or None when an op is not
/// one a straight-line body is read from.
fn written(ops: &[Op]) -> Option<(Vec<IReg>, Vec<FReg>)> {
    let (mut ints, mut floats) = (Vec::new(), Vec::new());
    for op in ops {
        match op {
            Op::IConst { dst, .. } | Op::Dim { dst, .. } => ints.push(*dst),
            Op::Locate { pos, .. } => ints.push(*pos),
            Op::PosIter { begin, end, .. } => ints.extend([*begin, *end]),
            Op::LoadValue { dst, .. } | Op::FConst { dst, .. } | Op::FBin { dst, .. } => floats.push(*dst),
            Op::DenseDot { acc, .. } => floats.push(*acc),
            Op::RowAxpy { .. }
            | Op::WorkspaceAxpy { .. }
            | Op::BConst { .. }
            | Op::ICmp { .. }
            | Op::BOr { .. }
            | Op::JumpIfNot { .. }
            | Op::AccumOutput { .. }
            | Op::Append { .. } => {}
            _ => return None,
        }
    }
    Some((ints, floats))
}
