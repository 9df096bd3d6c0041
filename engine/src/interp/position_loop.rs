//! [`Op::PositionLoop`](crate::bytecode::Op::PositionLoop): a loop over the
//! positions of a level run as one op, its body in Rust.

use std::ops::Range;

use smallvec::SmallVec;
use tessera_formats::{IndexArray, Level, LevelRef};

use super::{dense_row, format_of, segment_dot, AppendBatch, Bindings};
use crate::bytecode::{PositionBody, Regs};
use crate::runtime::output::OutputState;

/// Runs `body` at each of `positions` of `driver`; appended entries go
/// through `batch` when the program hands its entries over in batches.
pub(super) fn run(
    bind: &Bindings<'_>,
    ir: &[i64],
    values: &[&[f64]],
    (driver, positions): (LevelRef, Range<usize>),
    body: &PositionBody,
    out: &mut OutputState,
    mut batch: Option<&mut AppendBatch>,
) {
    let ready = Ready::new(bind, ir, values, driver, body);
    // The entries' coordinates: the innermost body's prefix registers, then
    // one slot per loop, outermost first.
    let mut entry: SmallVec<[i64; 4]> = ready.prefix.iter().map(|&r| ir[r as usize]).collect();
    let first_slot = entry.len();
    entry.resize(first_slot + ready.depth(), 0);
    ready.walk(positions, &mut entry, first_slot, out, &mut batch);
}

/// A body with every array it reads looked up, once per run of the op.
struct Ready<'p> {
    /// The driver's coordinates.
    coords: &'p IndexArray,
    /// The child's positions: its segment below each driver position.
    pos: &'p IndexArray,
    /// The innermost body's prefix registers.
    prefix: &'p Regs,
    kind: ReadyKind<'p>,
}

enum ReadyKind<'p> {
    AppendedDots {
        idx: &'p IndexArray,
        own: &'p [f64],
        rows: SmallVec<[&'p [f64]; 3]>,
    },
    Nested(Box<Ready<'p>>),
}

impl<'p> Ready<'p> {
    fn new(bind: &Bindings<'p>, ir: &[i64], values: &[&'p [f64]], driver: LevelRef, body: &'p PositionBody) -> Self {
        let view = |level: LevelRef| {
            let (format, storage) = (
                format_of(bind, level),
                &bind.levels[level.operand as usize][level.level as usize],
            );
            (format.coordinate_view(storage), format.position_view(storage))
        };
        let (Some(coords), _) = view(driver) else {
            unreachable!("the planner only shortcuts loops over levels with a coordinate array")
        };
        let child = body.child();
        let (Some(idx), Some(pos)) = view(child) else {
            unreachable!("the planner only shortcuts loops over compressed children")
        };
        let (prefix, kind) = match body {
            PositionBody::AppendedDots { factors, prefix, .. } => {
                let rows = factors.iter().map(|f| dense_row(bind, ir, f)).collect();
                let own = values[child.operand as usize];
                (prefix, ReadyKind::AppendedDots { idx, own, rows })
            }
            PositionBody::Nested { body, .. } => {
                let inner = Ready::new(bind, ir, values, child, body);
                (inner.prefix, ReadyKind::Nested(Box::new(inner)))
            }
        };
        Ready {
            coords,
            pos,
            prefix,
            kind,
        }
    }

    /// Coordinate slots the body fills: one per loop.
    fn depth(&self) -> usize {
        match &self.kind {
            ReadyKind::AppendedDots { .. } => 1,
            ReadyKind::Nested(inner) => 1 + inner.depth(),
        }
    }

    /// The body at `positions`, this loop's coordinate written at
    /// `entry[slot]`.
    fn walk(
        &self,
        positions: Range<usize>,
        entry: &mut [i64],
        slot: usize,
        out: &mut OutputState,
        batch: &mut Option<&mut AppendBatch>,
    ) {
        match &self.kind {
            ReadyKind::AppendedDots { idx, own, rows } => {
                for p in positions {
                    let (begin, end) = (self.pos.get_usize(p), self.pos.get_usize(p + 1));
                    if begin == end {
                        continue;
                    }
                    // As the loop's `acc = 0; acc += dot`: a -0.0 sum reads 0.0.
                    let sum = 0.0 + segment_dot(idx, begin, &own[begin..end], rows);
                    entry[slot] = self.coords.get(p);
                    match batch.as_deref_mut() {
                        Some(batch) => batch.push_entry(entry, sum, out),
                        None => out.append(entry, sum),
                    }
                }
            }
            ReadyKind::Nested(inner) => {
                for p in positions {
                    entry[slot] = self.coords.get(p);
                    let below = self.pos.get_usize(p)..self.pos.get_usize(p + 1);
                    inner.walk(below, entry, slot + 1, out, batch);
                }
            }
        }
    }
}
