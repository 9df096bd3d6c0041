//! [`Op::PositionLoop`](crate::bytecode::Op::PositionLoop): a loop over the
//! positions of a level run as one op, its body in Rust.

use crate::words::Adder;
use std::ops::Range;

use smallvec::SmallVec;
use tessera_formats::{ArrayRef, Immediate, IndexArray, Level, LevelRef, LevelStorage};

use super::{coordinate_array, dense_row, dot_of_runs, format_of, AppendBatch, Bindings, Eager, Operands};
use crate::block_ops::{row_axpy, semiring_dot, KernelBuilder, Length};
use crate::bytecode::{Affine, AxpyFactor, IReg, PositionBody, Regs, ScaleFactor};
use crate::notation::Semiring;
use crate::runtime::output::OutputState;

/// `start` plus, position by position over `positions` of `driver`, the
/// product of `scale`'s factors: a sum into a register.
pub(super) fn reduce(
    bind: &Bindings<'_>,
    (ir, fr): (&[i64], &[f64]),
    values: &[&[f64]],
    (driver, positions): (LevelRef, Range<usize>),
    scale: &[ScaleFactor],
    start: f64,
) -> f64 {
    let regs = Registers { bind, ir, fr, values };
    let own = &values[driver.operand as usize][positions.clone()];
    match regs.scale(scale).as_slice() {
        // A sum of squares, or of the values themselves, as the loop's
        // `acc + (1 · v) · v` and `acc + 1 · v`: multiplying by 1 is exact.
        [Factor::Own, Factor::Own] => own.iter().fold(start, |sum, v| sum + v * v),
        [Factor::Own] => own.iter().fold(start, |sum, v| sum + v),
        many => {
            let (Some(coords), _) = regs.views(driver) else {
                unreachable!("the planner only shortcuts loops over levels with a coordinate array")
            };
            positions
                .zip(own)
                .fold(start, |sum, (p, &v)| sum + scale_at(many, v, coords.get(p), 0))
        }
    }
}

/// Runs `body` at each of `positions` of `driver`; appended entries go
/// through `batch` when the program hands its entries over in batches.
pub(super) fn run(
    bind: &Bindings<'_>,
    (ir, fr): (&[i64], &[f64]),
    values: &[&[f64]],
    (driver, positions): (LevelRef, Range<usize>),
    body: &PositionBody,
    out: &mut OutputState,
    mut batch: Option<&mut AppendBatch>,
) {
    let regs = Registers { bind, ir, fr, values };
    let ready = Ready::new(&regs, driver, body);
    // The entries' coordinates: the innermost body's prefix registers, then
    // one slot per loop, outermost first.
    let mut entry: SmallVec<[i64; 4]> = ready.prefix().iter().map(|&r| ir[r as usize]).collect();
    let first_slot = entry.len();
    entry.resize(first_slot + ready.depth(), 0);
    let operands = (&bind.levels[..], values);
    ready.walk(positions, (&mut entry, first_slot), (0, operands), out, &mut batch);
}

/// What a position loop reads besides its arrays.
struct Registers<'r, 'a> {
    bind: &'r Bindings<'a>,
    ir: &'r [i64],
    fr: &'r [f64],
    values: &'r [&'a [f64]],
}

impl<'a> Registers<'_, 'a> {
    fn extent(&self, level: LevelRef) -> i64 {
        self.bind.levels[level.operand as usize][level.level as usize].extent as i64
    }

    /// `affine` as a function of the loop's coordinate.
    fn line(&self, affine: &Affine) -> Line {
        match affine {
            Affine::Reg(r) => Line::constant(self.ir[*r as usize]),
            Affine::Const(k) => Line::constant(*k),
            Affine::Coordinate => Line {
                slope: 1,
                ..Line::constant(0)
            },
            Affine::Outer => Line {
                outer: 1,
                ..Line::constant(0)
            },
            Affine::Dim(v) => Line::constant(self.bind.dims[*v as usize]),
            Affine::Dense { level, parent, coord } => {
                let (parent, coord, extent) = (self.line(parent), self.line(coord), self.extent(*level));
                Line {
                    slope: parent.slope * extent + coord.slope,
                    outer: parent.outer * extent + coord.outer,
                    offset: parent.offset * extent + coord.offset,
                }
            }
        }
    }

    /// A scale's factors: the registers' values read, the others left for
    /// each position.
    fn scale(&self, factors: &[ScaleFactor]) -> SmallVec<[Factor<'a>; 2]> {
        factors
            .iter()
            .map(|f| match f {
                ScaleFactor::Own => Factor::Own,
                ScaleFactor::Reg(r) => Factor::Fixed(self.fr[*r as usize]),
                ScaleFactor::Const(bits) => Factor::Fixed(f64::from_bits(*bits)),
                ScaleFactor::Gathered { operand, at } => {
                    Factor::Gathered(self.values[*operand as usize], self.line(at))
                }
            })
            .collect()
    }

    fn views(&self, level: LevelRef) -> (Option<&'a IndexArray>, Option<&'a IndexArray>) {
        let (format, storage) = (
            format_of(self.bind, level),
            &self.bind.levels[level.operand as usize][level.level as usize],
        );
        (format.coordinate_view(storage), format.position_view(storage))
    }

    /// The child's coordinates and positions.
    fn segments(&self, child: LevelRef) -> (&'a IndexArray, &'a IndexArray) {
        let (Some(idx), Some(pos)) = self.views(child) else {
            unreachable!("the planner only shortcuts loops over compressed children")
        };
        (idx, pos)
    }
}

/// `slope · c + outer · o + offset`, of the loop's coordinate `c` and the
/// outer loop's `o`.
#[derive(Clone, Copy)]
struct Line {
    slope: i64,
    outer: i64,
    offset: i64,
}

impl Line {
    fn constant(offset: i64) -> Line {
        Line {
            slope: 0,
            outer: 0,
            offset,
        }
    }
    fn at(self, c: i64, o: i64) -> i64 {
        self.slope * c + self.outer * o + self.offset
    }
}

/// A factor of a scale as a run reads it.
#[derive(Clone, Copy)]
enum Factor<'a> {
    Fixed(f64),
    /// The driver's value at the position.
    Own,
    /// These values at a position of the coordinate.
    Gathered(&'a [f64], Line),
}

/// The product, from 1, of a scale's factors at a position whose value
/// is `own` and coordinate `c`, below the outer coordinate `o`.
#[inline(always)]
fn scale_at(factors: &[Factor<'_>], own: f64, c: i64, o: i64) -> f64 {
    factors.iter().fold(1.0, |s, f| {
        s * match *f {
            Factor::Fixed(x) => x,
            Factor::Own => own,
            Factor::Gathered(values, at) => values[at.at(c, o) as usize],
        }
    })
}

/// A scale resolved for a walk: the usual product of constants around the
/// driver's value (`2 · v`, `v · x(j)`) with no dispatch over factors;
/// any other factor by factor ([`scale_at`]).
enum Scale<'a> {
    /// `(before · own) · after`, `before` the product of the constants
    /// before the value taken from 1 and `after` the one constant after
    /// it, if any: what [`scale_at`] takes.
    Around {
        before: f64,
        after: Option<f64>,
    },
    Factors(SmallVec<[Factor<'a>; 2]>),
}

impl<'a> Scale<'a> {
    fn new(factors: SmallVec<[Factor<'a>; 2]>) -> Self {
        let fixed = |f: &Factor<'_>| match *f {
            Factor::Fixed(x) => Some(x),
            _ => None,
        };
        let Some(own) = factors.iter().position(|f| matches!(f, Factor::Own)) else {
            return Scale::Factors(factors);
        };
        let before: Option<f64> = factors[..own].iter().map(fixed).try_fold(1.0, |s, x| Some(s * x?));
        let after = match &factors[own + 1..] {
            [] => Some(None),
            [one] => fixed(one).map(Some),
            _ => None,
        };
        match (before, after) {
            (Some(before), Some(after)) => Scale::Around { before, after },
            _ => Scale::Factors(factors),
        }
    }

    /// The scale at a position whose value is `own` and coordinate `c`,
    /// below the outer coordinate `o`.
    #[inline(always)]
    fn at(&self, own: f64, c: i64, o: i64) -> f64 {
        match *self {
            Scale::Around { before, after: None } => before * own,
            Scale::Around {
                before,
                after: Some(after),
            } => before * own * after,
            Scale::Factors(ref factors) => scale_at(factors, own, c, o),
        }
    }

    /// Runs `body` with [`Self::at`] as a function chosen here, once: a
    /// loop of one shape with no dispatch per entry. The functions give
    /// [`Self::at`]'s bits (`1 · v` is `v` exactly).
    #[inline(always)]
    fn chosen(&self, body: impl ScaledLoop) {
        match *self {
            Scale::Around { before, after: None } => body.run(|v, _, _| before * v),
            Scale::Around {
                before: 1.0,
                after: Some(after),
            } => body.run(|v, _, _| v * after),
            Scale::Around {
                before,
                after: Some(after),
            } => body.run(|v, _, _| before * v * after),
            Scale::Factors(ref factors) => body.run(|v, c, o| scale_at(factors, v, c, o)),
        }
    }
}

/// A loop that takes its scale as a function of a position's value,
/// coordinate and outer coordinate, so that [`Scale::chosen`] picks the
/// scale's shape once for the loop, not per entry.
trait ScaledLoop {
    fn run(self, scale: impl Fn(f64, i64, i64) -> f64);
}

/// How many positions ahead a row update asks for the rows it will read.
const ROWS_AHEAD: usize = 4;

/// Asks the processor to bring `values[at]` into its cache. Rows read by
/// a coordinate miss it, and the work between two positions is too long
/// for the processor to run ahead to the next row by itself.
#[inline(always)]
fn prefetch(values: &[f64], at: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(x) = values.get(at) {
        // SAFETY: a prefetch reads nothing and cannot fault, and SSE, which
        // it needs, is part of x86-64.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>((x as *const f64).cast()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (values, at);
}

/// The operands' levels and values (as `f64`), which the block ops a
/// walk runs read.
type Storage<'s, 'a> = (&'s [&'a [LevelStorage]], &'s [&'a [f64]]);

/// A body with every array it reads looked up, once per run of the op.
struct Ready<'p> {
    /// The driver's coordinates.
    coords: &'p IndexArray,
    kind: ReadyKind<'p>,
}

/// Where a segment's dot goes.
enum DotInto<'p> {
    /// Appended at the registers' coordinates, then the loop's.
    Append(&'p Regs),
    /// Added into the dense output at a position of the coordinate.
    Add(Line),
}

enum ReadyKind<'p> {
    SegmentDots {
        pos: &'p IndexArray,
        idx: &'p IndexArray,
        own: &'p [f64],
        /// The factors' rows as the block op reads them (from their
        /// first value).
        rows: SmallVec<[(&'p [f64], usize); 3]>,
        into: DotInto<'p>,
    },
    Nested {
        pos: &'p IndexArray,
        inner: Box<Ready<'p>>,
    },
    DenseDots {
        own: &'p [f64],
        scale: Scale<'p>,
        runs: SmallVec<[(&'p [f64], Line); 2]>,
        len: Line,
        append: Option<&'p Regs>,
    },
    RowUpdates {
        pos: &'p IndexArray,
        /// The child level and its coordinate array, which the block op
        /// walks.
        child: (LevelRef, ArrayRef),
        scale: f64,
        /// The factors as the block op reads them: factor `k`'s parent row
        /// in register `k`, the value of `parents[k]`.
        factors: SmallVec<[AxpyFactor; 2]>,
        parents: SmallVec<[Line; 2]>,
        /// The factors' values whose row is the parent itself (read by the
        /// fibre's coordinate, so asked for ahead).
        ahead: SmallVec<[(&'p [f64], Line); 2]>,
        out_extent: usize,
        out_parent: Line,
    },
    Copies {
        own: &'p [f64],
        scale: Scale<'p>,
        prefix: &'p Regs,
    },
    WorkspaceRows {
        own: &'p [f64],
        pos: &'p IndexArray,
        idx: &'p IndexArray,
        values: &'p [f64],
        parent: Line,
        scale: Scale<'p>,
        prefix: SmallVec<[i64; 4]>,
    },
}

impl<'p> Ready<'p> {
    fn new(regs: &Registers<'_, 'p>, driver: LevelRef, body: &'p PositionBody) -> Self {
        let (Some(coords), _) = regs.views(driver) else {
            unreachable!("the planner only shortcuts loops over levels with a coordinate array")
        };
        let kind = match body {
            PositionBody::AppendedDots { child, factors, .. } | PositionBody::AddedDots { child, factors, .. } => {
                let (idx, pos) = regs.segments(*child);
                let rows = factors.iter().map(|f| (dense_row(regs.bind, regs.ir, f), 0)).collect();
                let own = regs.values[child.operand as usize];
                let into = match body {
                    PositionBody::AddedDots { at, .. } => DotInto::Add(regs.line(at)),
                    PositionBody::AppendedDots { prefix, .. } => DotInto::Append(prefix),
                    _ => unreachable!("matched above"),
                };
                ReadyKind::SegmentDots {
                    pos,
                    idx,
                    own,
                    rows,
                    into,
                }
            }
            PositionBody::Nested { child, body } => ReadyKind::Nested {
                pos: regs.segments(*child).1,
                inner: Box::new(Ready::new(regs, *child, body)),
            },
            PositionBody::DenseDots {
                scale,
                runs,
                len,
                append,
            } => ReadyKind::DenseDots {
                append: append.as_ref(),
                own: regs.values[driver.operand as usize],
                scale: Scale::new(regs.scale(scale)),
                runs: runs
                    .iter()
                    .map(|(operand, start)| (regs.values[*operand as usize], regs.line(start)))
                    .collect(),
                len: regs.line(len),
            },
            PositionBody::RowUpdates {
                child,
                scale,
                factors,
                out,
                out_parent,
            } => {
                let (_, pos) = regs.segments(*child);
                // No factor of the scale is the driver's value (it is not
                // a last level): the scale is one number.
                let scale = scale_at(&regs.scale(scale), f64::NAN, 0, 0);
                ReadyKind::RowUpdates {
                    pos,
                    child: (*child, coordinate_array(regs.bind, *child)),
                    scale,
                    factors: factors
                        .iter()
                        .enumerate()
                        .map(|(k, f)| AxpyFactor {
                            operand: f.operand,
                            level: *child,
                            parent: k as IReg,
                            via: f.via,
                        })
                        .collect(),
                    parents: factors.iter().map(|f| regs.line(&f.parent)).collect(),
                    ahead: factors
                        .iter()
                        .filter(|f| f.via.is_none())
                        .map(|f| (regs.values[f.operand as usize], regs.line(&f.parent)))
                        .collect(),
                    out_extent: regs.extent(*out) as usize,
                    out_parent: regs.line(out_parent),
                }
            }
            PositionBody::WorkspaceRows {
                rows,
                parent,
                scale,
                prefix,
            } => {
                let (idx, pos) = regs.segments(*rows);
                ReadyKind::WorkspaceRows {
                    own: regs.values[driver.operand as usize],
                    pos,
                    idx,
                    values: regs.values[rows.operand as usize],
                    parent: regs.line(parent),
                    scale: Scale::new(regs.scale(scale)),
                    prefix: prefix.iter().map(|&r| regs.ir[r as usize]).collect(),
                }
            }
            PositionBody::Reduce { .. } => unreachable!("the interpreter sums into registers without a walk"),
            PositionBody::Scatter { .. } => unreachable!("the interpreter scatters without a walk"),
            PositionBody::Copies { scale, prefix } => ReadyKind::Copies {
                own: regs.values[driver.operand as usize],
                scale: Scale::new(regs.scale(scale)),
                prefix,
            },
        };
        Ready { coords, kind }
    }

    /// The registers the entries this body appends start with.
    fn prefix(&self) -> &[u32] {
        match &self.kind {
            ReadyKind::SegmentDots {
                into: DotInto::Append(prefix),
                ..
            }
            | ReadyKind::DenseDots {
                append: Some(prefix), ..
            }
            | ReadyKind::Copies { prefix, .. } => prefix,
            ReadyKind::Nested { inner, .. } => inner.prefix(),
            ReadyKind::SegmentDots {
                into: DotInto::Add(_), ..
            }
            | ReadyKind::DenseDots { append: None, .. }
            | ReadyKind::RowUpdates { .. }
            | ReadyKind::WorkspaceRows { .. } => &[],
        }
    }

    /// Coordinate slots the body fills: one per loop.
    fn depth(&self) -> usize {
        match &self.kind {
            ReadyKind::Nested { inner, .. } => 1 + inner.depth(),
            _ => 1,
        }
    }

    /// The body at `positions` below the outer loop's coordinate `o`, this
    /// loop's coordinate written at `entry[slot]`.
    fn walk(
        &self,
        positions: Range<usize>,
        (entry, slot): (&mut [i64], usize),
        (o, operands): (i64, Storage<'_, '_>),
        out: &mut OutputState,
        batch: &mut Option<&mut AppendBatch>,
    ) {
        match &self.kind {
            ReadyKind::SegmentDots {
                pos,
                idx,
                own,
                rows,
                into,
            } => {
                // The block op on slices resolved once, by a builder made
                // once for the walk.
                let mut k = Immediate::new(Operands::values(&[]));
                for p in positions {
                    let (begin, end) = (pos.get(p), pos.get(p + 1));
                    if begin == end {
                        continue;
                    }
                    let segment = (begin, end, Length::Fixed(1));
                    let dot = semiring_dot(&mut k, Semiring::PlusTimes, ((own, 0), idx), segment, rows);
                    // As the loop's `acc = 0; acc += dot`: a -0.0 sum reads 0.0.
                    let sum = 0.0 + dot;
                    let c = self.coords.get(p);
                    match into {
                        DotInto::Add(at) => out.accumulate(Adder::Float, at.at(c, o) as usize, sum),
                        DotInto::Append(_) => {
                            entry[slot] = c;
                            match batch.as_deref_mut() {
                                Some(batch) => batch.push_entry(entry, sum, out),
                                None => out.append(entry, sum),
                            }
                        }
                    }
                }
            }
            ReadyKind::Nested { pos, inner } => {
                for p in positions {
                    let c = self.coords.get(p);
                    entry[slot] = c;
                    let below = pos.get_usize(p)..pos.get_usize(p + 1);
                    inner.walk(below, (entry, slot + 1), (c, operands), out, batch);
                }
            }
            ReadyKind::DenseDots {
                own,
                scale,
                runs,
                len,
                append,
            } => {
                for p in positions {
                    let c = self.coords.get(p);
                    let n = len.at(c, o).max(0) as usize;
                    if n == 0 {
                        continue;
                    }
                    let run = |&(values, start): &(&'p [f64], Line)| &values[start.at(c, o) as usize..];
                    let dot = match runs.as_slice() {
                        [a, b] => dot_of_runs(&[run(a), run(b)], n),
                        many => dot_of_runs(&many.iter().map(run).collect::<SmallVec<[&[f64]; 3]>>(), n),
                    };
                    // As the loop's `acc = 0; acc += scale · dot`, then its write.
                    let value = 0.0 + scale.at(own[p], c, o) * dot;
                    match append {
                        None => out.accumulate(Adder::Float, p, value),
                        Some(_) => {
                            entry[slot] = c;
                            match batch.as_deref_mut() {
                                Some(batch) => batch.push_entry(entry, value, out),
                                None => out.append(entry, value),
                            }
                        }
                    }
                }
            }
            ReadyKind::RowUpdates {
                pos,
                child,
                scale,
                factors,
                parents,
                ahead,
                out_extent: n,
                out_parent,
            } => {
                // The block op, one fibre at a time, on a builder made once
                // for the walk.
                let (levels, values) = operands;
                let mut k = Immediate::new(Operands::on_output(levels, values, out));
                // Later positions of the level, in this walk or the next
                // (a fibre often holds one entry: the walk is short).
                let (last, len) = (self.coords.len(), *n as i64);
                for p in positions {
                    let c = self.coords.get(p);
                    // The rows a later position reads by its coordinate.
                    if p + ROWS_AHEAD < last {
                        let later = self.coords.get(p + ROWS_AHEAD);
                        for &(values, parent) in ahead {
                            prefetch(values, parent.at(later, o) as usize * n);
                        }
                    }
                    let target = k.output_target(out_parent.at(c, o) * len);
                    let segment = (pos.get(p), pos.get(p + 1));
                    let reg = &mut |_: &mut Eager<'_, '_>, r: IReg| parents[r as usize].at(c, o);
                    row_axpy(&mut k, *child, segment, *scale, factors, (target, len), reg);
                }
            }
            ReadyKind::Copies { own, scale, .. } => {
                for p in positions {
                    let c = self.coords.get(p);
                    entry[slot] = c;
                    let value = scale.at(own[p], c, o);
                    match batch.as_deref_mut() {
                        Some(batch) => batch.push_entry(entry, value, out),
                        None => out.append(entry, value),
                    }
                }
            }
            ReadyKind::WorkspaceRows {
                own,
                pos,
                idx,
                values,
                parent,
                scale,
                prefix,
            } => {
                for p in positions {
                    let c = self.coords.get(p);
                    let below = parent.at(c, o) as usize;
                    let row = pos.get_usize(below)..pos.get_usize(below + 1);
                    out.workspace_accumulate_row(prefix, idx, values, scale.at(own[p], c, o), row);
                }
            }
        }
    }
}

/// Adds each of `positions`' scaled values of `driver` into the dense
/// output at `at` of its coordinate: a row of `y(j) += A(i,j) · x(i)`.
/// A scatter appends nothing, so it keeps no entry and skips a walk's
/// setup; it is never nested in another position loop, so it has no outer
/// coordinate.
pub(super) fn scatter(
    bind: &Bindings<'_>,
    (ir, fr): (&[i64], &[f64]),
    values: &[&[f64]],
    (driver, positions): (LevelRef, Range<usize>),
    (scale, at): (&[ScaleFactor], &Affine),
    out: &mut OutputState,
) {
    let regs = Registers { bind, ir, fr, values };
    let (Some(coords), _) = regs.views(driver) else {
        unreachable!("the planner only shortcuts loops over levels with a coordinate array")
    };
    // The output's values once, not a dispatch per entry.
    let Some((base, dst)) = out.dense_values_mut() else {
        unreachable!("only dense outputs are accumulated in place")
    };
    let at = regs.line(at);
    let own = &values[driver.operand as usize][positions.clone()];
    Scale::new(regs.scale(scale)).chosen(ScatterRow {
        coords,
        positions,
        own,
        // The output's position as `slope · c + start`.
        into: (dst, at.slope, at.at(0, 0) - base as i64),
    });
}

/// The loop of [`scatter`], its scale chosen once by [`Scale::chosen`].
struct ScatterRow<'s> {
    coords: &'s IndexArray,
    positions: Range<usize>,
    own: &'s [f64],
    into: (&'s mut [f64], i64, i64),
}

impl ScaledLoop for ScatterRow<'_> {
    #[inline(always)]
    fn run(self, scale: impl Fn(f64, i64, i64) -> f64) {
        scatter_by(self.coords, self.positions, self.own, self.into, |v, c| scale(v, c, 0));
    }
}

/// `dst[slope · c + start] += term(v, c)` for each coordinate `c` at
/// `positions` and its value `v`, on the coordinates' own width.
#[inline(always)]
fn scatter_by(
    coords: &IndexArray,
    positions: Range<usize>,
    own: &[f64],
    (dst, slope, start): (&mut [f64], i64, i64),
    term: impl Fn(f64, i64) -> f64,
) {
    fn typed<I: Copy>(
        coords: &[I],
        wide: fn(I) -> i64,
        own: &[f64],
        dst: &mut [f64],
        (slope, start): (i64, i64),
        term: impl Fn(f64, i64) -> f64,
    ) {
        for (&c, &v) in coords.iter().zip(own) {
            let c = wide(c);
            dst[(slope * c + start) as usize] += term(v, c);
        }
    }
    match coords {
        IndexArray::U32(c) => typed(&c[positions], i64::from, own, dst, (slope, start), term),
        IndexArray::U64(c) => typed(&c[positions], |c| c as i64, own, dst, (slope, start), term),
        IndexArray::I64(c) => typed(&c[positions], |c| c, own, dst, (slope, start), term),
    }
}
