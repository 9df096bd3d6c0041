//! Two stored rows merged into one output row at once: the inner loop of
//! `A(i,j) + B(i,j)`, `A(i,j) - B(j,i)` and `A(i,j) * B(i,j)` over compact,
//! ordered, unique last levels, run by [`Op::MergeRows`] on every tier; and
//! two runs of consecutive coordinates merged (two DIA diagonals' rows,
//! [`Op::MergeRuns`]).
//!
//! The values are exactly those the loop of single entries computes: a
//! coordinate in both rows gets `a op b`; one in a single row of a sum or
//! difference gets that value combined with `0.0` (`a + 0.0`, `0.0 - b`,
//! as the loop does, so that signs of zeros agree); a product keeps only
//! the coordinates in both. Either row may be scaled by a constant first
//! (`2 * A(i,j) + B(j,i)`: [`Combine`]).
//!
//! [`Op::MergeRows`]: crate::bytecode::Op::MergeRows
//! [`Op::MergeRuns`]: crate::bytecode::Op::MergeRuns

use std::cmp::Ordering;
use std::mem::MaybeUninit;

use tessera_formats::{IndexArray, Level, LevelRef};

use super::output::OutputState;
use crate::interp::Bindings;
use crate::notation::func::{maximum, minimum};

/// How two rows combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RowOp {
    /// `a + b` over the union of the rows.
    Add,
    /// `a - b` over the union of the rows.
    Sub,
    /// `a * b` over the intersection of the rows.
    Mul,
    /// `max(a, b)` over the union of the rows ([`maximum`]).
    Max,
    /// `min(a, b)` over the union of the rows ([`minimum`]).
    Min,
}

impl RowOp {
    /// The op's code in compiled kernels' calls.
    pub fn code(self) -> u64 {
        self as u64
    }

    /// `x op y`.
    #[inline]
    pub fn apply(self, x: f64, y: f64) -> f64 {
        match self {
            RowOp::Add => x + y,
            RowOp::Sub => x - y,
            RowOp::Mul => x * y,
            RowOp::Max => maximum(x, y),
            RowOp::Min => minimum(x, y),
        }
    }

    /// Every op.
    pub const ALL: [RowOp; 5] = [RowOp::Add, RowOp::Sub, RowOp::Mul, RowOp::Max, RowOp::Min];

    /// The op of a code made by [`RowOp::code`].
    pub fn from_code(code: u64) -> Option<RowOp> {
        RowOp::ALL.into_iter().find(|op| op.code() == code)
    }

    /// Whether the op combines the union of the rows, a coordinate in one
    /// row only combined with `0.0` for the other (every op but the
    /// product's intersection).
    pub fn over_union(self) -> bool {
        self != RowOp::Mul
    }
}

/// How a merge combines two rows' values: `op(a, b)`, or with `scales`
/// `[sa, sb]`, `op(sa * a, sb * b)` (`2 * A(i,j) + B(j,i)`, `A(i,j) - 0.5 *
/// B(i,j)`). A value missing from one row is read as `0.0` and then
/// scaled, as the loop of single entries reads an absent operand.
///
/// ```
/// use tessera_engine::runtime::rows::{Combine, RowOp};
/// let scaled = Combine { op: RowOp::Add, scales: Some([2.0, -1.0]) };
/// assert_eq!(scaled.apply(3.0, 4.0), 2.0);
/// assert_eq!(Combine::from(RowOp::Sub).apply(3.0, 4.0), -1.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Combine {
    pub op: RowOp,
    pub scales: Option<[f64; 2]>,
}

impl Combine {
    /// `op(sa * x, sb * y)`, or `op(x, y)` without scales.
    #[inline]
    pub fn apply(self, x: f64, y: f64) -> f64 {
        match self.scales {
            None => self.op.apply(x, y),
            Some([sa, sb]) => self.op.apply(sa * x, sb * y),
        }
    }
}

impl From<RowOp> for Combine {
    fn from(op: RowOp) -> Combine {
        Combine { op, scales: None }
    }
}

/// Binds `$f` to the combining function of `$combine` and `$union` to
/// whether it merges the union of the rows, then evaluates `$body` once
/// per op, scaled or not: each loop is compiled with its function
/// inlined (a scaled one through `RowOp::apply` of a constant op), so no
/// entry dispatches on the op or the scales (a call or a branch per entry costs
/// a merge a third of its time).
macro_rules! with_combine {
    ($combine:expr, |$f:ident, $union:ident| $body:expr) => {{
        let combine: $crate::runtime::rows::Combine = $combine;
        with_combine!(@ops combine, $f, $union, $body;
            Add |x: f64, y: f64| x + y,
            Sub |x: f64, y: f64| x - y,
            Mul |x: f64, y: f64| x * y,
            Max $crate::notation::func::maximum,
            Min $crate::notation::func::minimum)
    }};
    (@ops $c:ident, $f:ident, $union:ident, $body:expr; $($op:ident $plain:expr),*) => {
        match ($c.op, $c.scales) {
            $(
                // Unscaled, the function itself: through `RowOp::apply`
                // the sum of A + Aᵀ ran 10% slower.
                ($crate::runtime::rows::RowOp::$op, None) => {
                    let op = $crate::runtime::rows::RowOp::$op;
                    let ($f, $union) = ($plain, op.over_union());
                    $body
                }
                ($crate::runtime::rows::RowOp::$op, Some([sa, sb])) => {
                    let op = $crate::runtime::rows::RowOp::$op;
                    let ($f, $union) = (move |x: f64, y: f64| op.apply(sa * x, sb * y), op.over_union());
                    $body
                }
            )*
        }
    };
}
pub(super) use with_combine;

/// One row of a stored level: its coordinates and values, in order.
#[derive(Debug, Clone, Copy)]
pub enum Row<'a> {
    U32(&'a [u32], &'a [f64]),
    U64(&'a [u64], &'a [f64]),
    I64(&'a [i64], &'a [f64]),
}

impl<'a> Row<'a> {
    /// Positions `range` of a level's coordinate array and its values.
    pub fn of(coords: &'a IndexArray, values: &'a [f64], range: std::ops::Range<usize>) -> Row<'a> {
        let values = &values[range.clone()];
        match coords {
            IndexArray::U32(c) => Row::U32(&c[range], values),
            IndexArray::U64(c) => Row::U64(&c[range], values),
            IndexArray::I64(c) => Row::I64(&c[range], values),
        }
    }
}

impl Row<'_> {
    /// How many coordinates the row holds.
    pub fn len(&self) -> usize {
        match self {
            Row::U32(c, _) => c.len(),
            Row::U64(c, _) => c.len(),
            Row::I64(c, _) => c.len(),
        }
    }

    /// Whether the row holds no coordinate.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<'a> Row<'a> {
    /// Its values, a block of them per coordinate in a block row.
    fn values(&self) -> &'a [f64] {
        match *self {
            Row::U32(_, v) | Row::U64(_, v) | Row::I64(_, v) => v,
        }
    }

    /// Positions `range` of a level's coordinate array, each holding a
    /// block of `width` values (`values[p * width..(p + 1) * width]` for
    /// position `p`): a block row of BCSR.
    pub fn of_blocks(
        coords: &'a IndexArray,
        values: &'a [f64],
        range: std::ops::Range<usize>,
        width: usize,
    ) -> Row<'a> {
        let values = &values[range.start * width..range.end * width];
        match coords {
            IndexArray::U32(c) => Row::U32(&c[range], values),
            IndexArray::U64(c) => Row::U64(&c[range], values),
            IndexArray::I64(c) => Row::I64(&c[range], values),
        }
    }
}

/// Values at consecutive coordinates `begin..begin + values.len()`: the
/// stored rows of one DIA diagonal, whose positions follow their rows.
#[derive(Debug, Clone, Copy)]
pub struct Run<'a> {
    pub begin: i64,
    pub values: &'a [f64],
}

impl Run<'_> {
    fn end(&self) -> i64 {
        self.begin + self.values.len() as i64
    }

    fn at(&self, coord: i64) -> Option<f64> {
        let k = coord - self.begin;
        (0..self.values.len() as i64)
            .contains(&k)
            .then(|| self.values[k as usize])
    }
}

/// Merges two runs with `op`, handing each stretch of consecutive merged
/// coordinates to `emit` (its first coordinate and values, in order):
/// the union for a sum or difference, an entry in one run combined with
/// `0.0` as the loop of single entries computes it; the intersection for
/// a product. (The output combines runs over the same coordinates, two
/// diagonals of one matrix, value by value without this:
/// [`OutputState::append_merged_runs`].)
///
/// ```
/// use tessera_engine::runtime::rows::{merge_runs, RowOp, Run};
/// let a = Run { begin: 1, values: &[1.0, 2.0] };
/// let b = Run { begin: 2, values: &[10.0, 20.0] };
/// let mut out = vec![];
/// merge_runs(a, b, RowOp::Sub, &mut vec![], |first, v| out.push((first, v.to_vec())));
/// assert_eq!(out, [(1, vec![1.0, -8.0, -20.0])]);
/// ```
pub fn merge_runs(
    a: Run<'_>,
    b: Run<'_>,
    op: impl Into<Combine>,
    scratch: &mut Vec<f64>,
    emit: impl FnMut(i64, &[f64]),
) {
    with_combine!(op.into(), |f, union| merge_runs_with(a, b, (f, union), scratch, emit))
}

/// [`merge_runs`] with the combining function `f`, over the union of the
/// runs when `union`, else over their intersection.
#[inline(always)]
fn merge_runs_with(
    a: Run<'_>,
    b: Run<'_>,
    (f, union): (impl Fn(f64, f64) -> f64, bool),
    scratch: &mut Vec<f64>,
    mut emit: impl FnMut(i64, &[f64]),
) {
    let (from, to) = if union {
        let runs = [a, b].into_iter().filter(|r| !r.values.is_empty());
        let from = runs.clone().map(|r| r.begin).min().unwrap_or(0);
        (from, runs.map(|r| r.end()).max().unwrap_or(0))
    } else {
        (a.begin.max(b.begin), a.end().min(b.end()))
    };
    scratch.clear();
    let mut first = from;
    for c in from..to {
        let value = match (a.at(c), b.at(c)) {
            (Some(x), Some(y)) => Some(f(x, y)),
            (Some(x), None) if union => Some(f(x, 0.0)),
            (None, Some(y)) if union => Some(f(0.0, y)),
            _ => None,
        };
        match value {
            Some(v) => scratch.push(v),
            // A gap between the runs: the stretch before it ends.
            None => {
                if !scratch.is_empty() {
                    emit(first, scratch);
                    scratch.clear();
                }
                first = c + 1;
            }
        }
    }
    if !scratch.is_empty() {
        emit(first, scratch);
    }
}

/// The rows below a dense level of a stored operand: row `r` is the
/// segment `positions[base + r]..positions[base + r + 1]` of the compact,
/// ordered, unique level below, whose coordinates are `coords`.
#[derive(Debug, Clone, Copy)]
pub struct RowsBelow<'a> {
    pub positions: &'a IndexArray,
    pub coords: &'a IndexArray,
    pub values: &'a [f64],
    /// The position of row 0: the dense level's parent times its extent.
    pub base: usize,
}

impl<'a> RowsBelow<'a> {
    /// The rows below the dense level `rows` of a bound operand, whose
    /// parent is at position `parent`; `None` when the level below has no
    /// position or coordinate array.
    pub fn of(bind: &Bindings<'a>, rows: LevelRef, parent: usize) -> Option<RowsBelow<'a>> {
        let (operand, level) = (rows.operand as usize, rows.level as usize);
        let below = (
            bind.formats[operand].get(level + 1)?,
            bind.levels[operand].get(level + 1)?,
        );
        Some(RowsBelow {
            positions: below.0.position_view(below.1)?,
            coords: below.0.coordinate_view(below.1)?,
            values: bind.f64s(operand),
            base: parent * bind.levels[operand][level].extent,
        })
    }

    /// The positions of row `r` in the level below.
    #[inline]
    pub fn range(&self, r: usize) -> std::ops::Range<usize> {
        self.positions.get_usize(self.base + r)..self.positions.get_usize(self.base + r + 1)
    }

    /// How many entries rows `rows` hold.
    pub fn entries(&self, rows: std::ops::Range<usize>) -> usize {
        match rows.is_empty() {
            true => 0,
            false => self.range(rows.end - 1).end - self.range(rows.start).start,
        }
    }

    /// Row `r`.
    pub fn row(&self, r: usize) -> Row<'a> {
        Row::of(self.coords, self.values, self.range(r))
    }
}

/// Runs [`Op::RowsMerge`] on `bind`: rows `rows` below the dense levels
/// `a` and `b` (each with its parent's position) merged with `op` and
/// appended below `prefix ++ [row]`. The interpreter and compiled tiers
/// call it once per block of rows.
///
/// [`Op::RowsMerge`]: crate::bytecode::Op::RowsMerge
pub fn run_rows_merge(
    bind: &Bindings<'_>,
    out: &mut OutputState,
    [a, b]: [(LevelRef, usize); 2],
    rows: std::ops::Range<usize>,
    op: Combine,
    prefix: &[i64],
) {
    let below = |(level, parent): (LevelRef, usize)| {
        RowsBelow::of(bind, level, parent)
            .expect("the planner merges rows only below levels with position and coordinate arrays")
    };
    out.append_merged_rows(prefix, rows, below(a), below(b), op);
}

/// Merges `a` and `b` with `op` into `coords` and `values` (cleared first).
pub fn merge(a: Row<'_>, b: Row<'_>, op: impl Into<Combine>, coords: &mut Vec<u64>, values: &mut Vec<f64>) {
    coords.clear();
    values.clear();
    merge_after(a, b, op.into(), coords, values);
}

/// Merges rows whose coordinates each hold a block of `width` values
/// ([`Row::of_blocks`]) with `op` into `coords` and `values` (cleared
/// first): a block in both rows gets `a op b` value by value, a block in
/// one row of a sum or difference its values combined with `0.0`, as the
/// loop over the blocks' entries computes them.
///
/// ```
/// use tessera_engine::runtime::rows::{merge_blocks, RowOp, Row};
/// // Blocks of two values at coordinates [1, 4] and [4].
/// let a = Row::U32(&[1, 4], &[1.0, 2.0, 3.0, 4.0]);
/// let b = Row::U64(&[4], &[10.0, 20.0]);
/// let (mut coords, mut values) = (vec![], vec![]);
/// merge_blocks(a, b, RowOp::Sub, 2, &mut coords, &mut values);
/// assert_eq!(coords, [1, 4]);
/// assert_eq!(values, [1.0, 2.0, -7.0, -16.0]);
/// ```
pub fn merge_blocks(
    a: Row<'_>,
    b: Row<'_>,
    op: impl Into<Combine>,
    width: usize,
    coords: &mut Vec<u64>,
    values: &mut Vec<f64>,
) {
    let op: Combine = op.into();
    coords.clear();
    values.clear();
    assert!(
        a.values().len() == a.len() * width && b.values().len() == b.len() * width,
        "a block row holds a block of values per coordinate"
    );
    let most = if op.op.over_union() {
        a.len() + b.len()
    } else {
        a.len().min(b.len())
    };
    coords.reserve(most);
    values.reserve(most * width);
    // Signed coordinates are below 2^63 (validated), so they convert.
    let wide = |c: &[i64]| -> Vec<u64> { c.iter().map(|&x| x as u64).collect() };
    match (a, b) {
        (Row::U32(ac, av), Row::U32(bc, bv)) => merge_blocks_typed((ac, av), (bc, bv), op, width, coords, values),
        (Row::U32(ac, av), Row::U64(bc, bv)) => merge_blocks_typed((ac, av), (bc, bv), op, width, coords, values),
        (Row::U64(ac, av), Row::U32(bc, bv)) => merge_blocks_typed((ac, av), (bc, bv), op, width, coords, values),
        (Row::U64(ac, av), Row::U64(bc, bv)) => merge_blocks_typed((ac, av), (bc, bv), op, width, coords, values),
        (Row::I64(ac, av), other) => merge_blocks(Row::U64(&wide(ac), av), other, op, width, coords, values),
        (other, Row::I64(bc, bv)) => merge_blocks(other, Row::U64(&wide(bc), bv), op, width, coords, values),
    }
}

/// [`merge_blocks`] for one width of each row's coordinates; the op is
/// fixed for the row: one loop per op, each inlined.
fn merge_blocks_typed<A: Coord, B: Coord>(
    a: (&[A], &[f64]),
    b: (&[B], &[f64]),
    op: Combine,
    width: usize,
    coords: &mut Vec<u64>,
    values: &mut Vec<f64>,
) {
    with_combine!(op, |f, union| merge_blocks_with(
        a,
        b,
        width,
        !union,
        f,
        (coords, values)
    ))
}

/// [`merge_blocks`] with `f`, over the intersection of the rows when
/// `both`, else over their union.
#[inline(always)]
fn merge_blocks_with<A: Coord, B: Coord>(
    (ac, av): (&[A], &[f64]),
    (bc, bv): (&[B], &[f64]),
    width: usize,
    both: bool,
    f: impl Fn(f64, f64) -> f64,
    (coords, values): (&mut Vec<u64>, &mut Vec<f64>),
) {
    let block = |values: &[f64], k: usize| -> std::ops::Range<usize> {
        debug_assert!(values.len() >= (k + 1) * width);
        k * width..(k + 1) * width
    };
    let (mut p, mut q) = (0, 0);
    while p < ac.len() && q < bc.len() {
        let (x, y) = (ac[p].wide(), bc[q].wide());
        match x.cmp(&y) {
            Ordering::Equal => {
                coords.push(x);
                let (u, v) = (&av[block(av, p)], &bv[block(bv, q)]);
                values.extend(u.iter().zip(v).map(|(&u, &v)| f(u, v)));
                p += 1;
                q += 1;
            }
            Ordering::Less => {
                if !both {
                    coords.push(x);
                    values.extend(av[block(av, p)].iter().map(|&u| f(u, 0.0)));
                }
                p += 1;
            }
            Ordering::Greater => {
                if !both {
                    coords.push(y);
                    values.extend(bv[block(bv, q)].iter().map(|&v| f(0.0, v)));
                }
                q += 1;
            }
        }
    }
    if both {
        return;
    }
    // A block in one row only: kept, combined with zeros.
    for (k, c) in ac.iter().enumerate().skip(p) {
        coords.push(c.wide());
        values.extend(av[block(av, k)].iter().map(|&u| f(u, 0.0)));
    }
    for (k, c) in bc.iter().enumerate().skip(q) {
        coords.push(c.wide());
        values.extend(bv[block(bv, k)].iter().map(|&v| f(0.0, v)));
    }
}

/// Merges row `r` of `a` and of `b` with `op` for each `r` in `rows`,
/// appending each merged row's coordinates and values to `coords` and
/// `values`, and `(out_first + r - rows.start, its length)` to `counts`
/// when it is not empty: a block of rows in one call, inlined for the
/// width of the positions and of the coordinates (the caller makes room
/// for the block's entries first: rows that each made room for their own
/// would outgrow a result's exact size near its end and copy it all).
/// Returns the largest coordinate written (0 for none); `None`, doing
/// nothing, when the operands' or the output's widths differ (or are
/// signed, read from files that store them): the caller then merges row
/// by row.
///
/// ```
/// use tessera_engine::runtime::rows::{merge_rows, RowOp, RowsBelow};
/// use tessera_formats::IndexArray;
/// // Rows 0 and 1 of [[1, 0, 2], [0, 0, 0]] and of [[0, 5, 1], [0, 0, 7]].
/// let (a_pos, a_crd) = (IndexArray::U32(vec![0, 2, 2]), IndexArray::U32(vec![0, 2]));
/// let (b_pos, b_crd) = (IndexArray::U32(vec![0, 2, 3]), IndexArray::U32(vec![1, 2, 2]));
/// let a = RowsBelow { positions: &a_pos, coords: &a_crd, values: &[1.0, 2.0], base: 0 };
/// let b = RowsBelow { positions: &b_pos, coords: &b_crd, values: &[5.0, 1.0, 7.0], base: 0 };
/// let (mut coords, mut values, mut counts) = (IndexArray::U32(vec![]), vec![], vec![]);
/// let largest = merge_rows(a, b, 0..2, RowOp::Add, 10, &mut coords, &mut values, &mut counts);
/// assert_eq!(largest, Some(2));
/// assert_eq!(coords.to_u64_vec(), [0, 1, 2, 2]);
/// assert_eq!(values, [1.0, 5.0, 3.0, 7.0]);
/// assert_eq!(counts, [(10, 3), (11, 1)]);
/// ```
#[allow(clippy::too_many_arguments)]
pub fn merge_rows(
    a: RowsBelow<'_>,
    b: RowsBelow<'_>,
    rows: std::ops::Range<usize>,
    op: impl Into<Combine>,
    out_first: usize,
    coords: &mut IndexArray,
    values: &mut Vec<f64>,
    counts: &mut Vec<(usize, usize)>,
) -> Option<u64> {
    use IndexArray::{U32, U64};
    let op: Combine = op.into();
    let ((av, base_a), (bv, base_b)) = ((a.values, a.base), (b.values, b.base));
    let (a_rows, b_rows) = (
        base_a + rows.start..base_a + rows.end + 1,
        base_b + rows.start..base_b + rows.end + 1,
    );
    macro_rules! block {
        ($ap:expr, $ac:expr, $bp:expr, $bc:expr, $out:expr) => {
            merge_block(
                (&$ap[a_rows], $ac, av),
                (&$bp[b_rows], $bc, bv),
                out_first,
                op,
                ($out, values, counts),
            )
        };
    }
    if rows.is_empty() {
        return Some(0);
    }
    match (a.positions, a.coords, b.positions, b.coords, coords) {
        (U32(ap), U32(ac), U32(bp), U32(bc), U32(out)) => Some(block!(ap, ac, bp, bc, out)),
        (U64(ap), U32(ac), U64(bp), U32(bc), U32(out)) => Some(block!(ap, ac, bp, bc, out)),
        (U32(ap), U64(ac), U32(bp), U64(bc), U64(out)) => Some(block!(ap, ac, bp, bc, out)),
        (U64(ap), U64(ac), U64(bp), U64(bc), U64(out)) => Some(block!(ap, ac, bp, bc, out)),
        _ => None,
    }
}

/// The rows of one operand in a block: the positions of its rows' edges
/// (one more than the rows), its coordinates and its values.
type BlockRows<'a, P, C> = (&'a [P], &'a [C], &'a [f64]);

/// [`merge_rows`] for one width of positions `P` and coordinates `C`:
/// one loop per op, each inlined.
#[inline(always)]
fn merge_block<P: Coord, C: Coord + Ord>(
    a: BlockRows<'_, P, C>,
    b: BlockRows<'_, P, C>,
    out_first: usize,
    op: Combine,
    out: (&mut Vec<C>, &mut Vec<f64>, &mut Vec<(usize, usize)>),
) -> u64 {
    with_combine!(op, |f, union| merge_block_with(a, b, out_first, out, |a, b, room| {
        if union {
            union_into(a, b, f, room)
        } else {
            intersection_into(a, b, f, room)
        }
    }))
}

/// Room to write entries in: the spare capacity after a row's
/// coordinates and after its values.
type Room<'a, O> = (&'a mut [MaybeUninit<O>], &'a mut [MaybeUninit<f64>]);

/// [`merge_block`] with the rows combined by `combine` ([`union_into`] or
/// [`intersection_into`]), which writes a merged row at the start of the
/// room it is given and returns its length: every slot it counts is
/// written, which the unsafe code here relies on. The block's room is made once and its rows written one after
/// another: rows of a few entries each (a stencil's) would otherwise pay
/// for a vector's bookkeeping per row.
#[inline(always)]
fn merge_block_with<P: Coord, C: Coord + Ord>(
    (ap, ac, av): BlockRows<'_, P, C>,
    (bp, bc, bv): BlockRows<'_, P, C>,
    out_first: usize,
    (coords, values, counts): (&mut Vec<C>, &mut Vec<f64>, &mut Vec<(usize, usize)>),
    combine: impl Fn((&[C], &[f64]), (&[C], &[f64]), Room<'_, C>) -> usize,
) -> u64 {
    let rows = ap.len() - 1;
    let span = |p: &[P]| (p[rows].wide() as usize).saturating_sub(p[0].wide() as usize);
    let most = span(ap) + span(bp);
    counts.reserve(rows);
    coords.reserve(most);
    values.reserve(most);
    let (cs, vs) = (
        &mut coords.spare_capacity_mut()[..most],
        &mut values.spare_capacity_mut()[..most],
    );
    let (mut n, mut largest) = (0, 0);
    for r in 0..rows {
        let ra = ap[r].wide() as usize..ap[r + 1].wide() as usize;
        let rb = bp[r].wide() as usize..bp[r + 1].wide() as usize;
        let written = combine(
            (&ac[ra.clone()], &av[ra]),
            (&bc[rb.clone()], &bv[rb]),
            (&mut cs[n..], &mut vs[n..]),
        );
        if written > 0 {
            // SAFETY: `combine` wrote the `written` slots after `n`.
            let last = unsafe { cs[n + written - 1].assume_init() };
            // A merged row increases: its last coordinate is its largest.
            largest = largest.max(last.wide());
            counts.push((out_first + r, written));
            n += written;
        }
    }
    // SAFETY: the first `n` spare slots were written above, right after
    // the elements already there.
    unsafe {
        coords.set_len(coords.len() + n);
        values.set_len(values.len() + n);
    }
    largest
}

/// A stored coordinate type.
trait Coord: Copy {
    fn wide(self) -> u64;
    /// `c` as this type; the caller knows it fits.
    fn narrow(c: u64) -> Self;
}

impl Coord for u32 {
    #[inline(always)]
    fn wide(self) -> u64 {
        u64::from(self)
    }
    #[inline(always)]
    fn narrow(c: u64) -> Self {
        c as u32
    }
}

impl Coord for u64 {
    #[inline(always)]
    fn wide(self) -> u64 {
        self
    }
    #[inline(always)]
    fn narrow(c: u64) -> Self {
        c
    }
}

/// [`merge`] without clearing: the merged row is appended.
fn merge_after(a: Row<'_>, b: Row<'_>, op: Combine, coords: &mut Vec<u64>, values: &mut Vec<f64>) {
    // Signed coordinates are below 2^63 (validated), so they convert.
    let wide = |c: &[i64]| -> Vec<u64> { c.iter().map(|&x| x as u64).collect() };
    match (a, b) {
        (Row::U32(ac, av), Row::U32(bc, bv)) => merge_typed((ac, av), (bc, bv), op, coords, values),
        (Row::U32(ac, av), Row::U64(bc, bv)) => merge_typed((ac, av), (bc, bv), op, coords, values),
        (Row::U64(ac, av), Row::U32(bc, bv)) => merge_typed((ac, av), (bc, bv), op, coords, values),
        (Row::U64(ac, av), Row::U64(bc, bv)) => merge_typed((ac, av), (bc, bv), op, coords, values),
        (Row::I64(ac, av), other) => merge_after(Row::U64(&wide(ac), av), other, op, coords, values),
        (other, Row::I64(bc, bv)) => merge_after(other, Row::U64(&wide(bc), bv), op, coords, values),
    }
}

/// One row merged with `op`, appended to `coords` and `values`.
#[inline(always)]
fn merge_typed<A: Coord, B: Coord, O: Coord>(
    a: (&[A], &[f64]),
    b: (&[B], &[f64]),
    op: Combine,
    coords: &mut Vec<O>,
    values: &mut Vec<f64>,
) {
    // The op is fixed for the row: one loop per op, each inlined.
    with_combine!(op, |f, union_of_rows| if union_of_rows {
        union(a, b, f, coords, values)
    } else {
        intersection(a, b, f, coords, values)
    })
}

/// Appends the merge `combine` writes ([`union_into`],
/// [`intersection_into`]) of rows of `most` entries at most.
#[inline(always)]
fn append_merged<O: Coord>(
    most: usize,
    coords: &mut Vec<O>,
    values: &mut Vec<f64>,
    combine: impl FnOnce(Room<'_, O>) -> usize,
) {
    coords.reserve(most);
    values.reserve(most);
    let n = combine((
        &mut coords.spare_capacity_mut()[..most],
        &mut values.spare_capacity_mut()[..most],
    ));
    // SAFETY: `combine` wrote the first `n` spare slots, right after the
    // elements already there.
    unsafe {
        coords.set_len(coords.len() + n);
        values.set_len(values.len() + n);
    }
}

#[inline(always)]
fn union<A: Coord, B: Coord, O: Coord>(
    a: (&[A], &[f64]),
    b: (&[B], &[f64]),
    f: impl Fn(f64, f64) -> f64,
    coords: &mut Vec<O>,
    values: &mut Vec<f64>,
) {
    append_merged(a.0.len() + b.0.len(), coords, values, |room| union_into(a, b, f, room));
}

/// Writes the union of two rows, each coordinate's values combined by
/// `f` (a value missing from one row is `0.0`), at the start of `room`;
/// returns its length.
#[inline(always)]
fn union_into<A: Coord, B: Coord, O: Coord>(
    (ac, av): (&[A], &[f64]),
    (bc, bv): (&[B], &[f64]),
    f: impl Fn(f64, f64) -> f64,
    (cs, vs): Room<'_, O>,
) -> usize {
    let most = ac.len() + bc.len();
    assert!(
        ac.len() == av.len() && bc.len() == bv.len() && cs.len() >= most && vs.len() >= most,
        "a row has a value per coordinate, and the room holds both rows"
    );
    let (mut p, mut q, mut n) = (0, 0, 0);
    // SAFETY: p < ac.len() == av.len() and q < bc.len() == bv.len() by
    // the loop conditions (asserted above); n <= p + q < most, within the
    // room. The merge runs at every stored entry of two matrices: bounds
    // checks there cost a third of its time.
    unsafe {
        while p < ac.len() && q < bc.len() {
            let (x, y) = ((*ac.get_unchecked(p)).wide(), (*bc.get_unchecked(q)).wide());
            // Each case advances its own rows: branches the processor
            // predicts (rows of a matrix and its transpose mostly agree)
            // and runs ahead of, where computing the next positions from
            // the comparison would make every load wait for the last.
            let (c, v) = match x.cmp(&y) {
                Ordering::Equal => {
                    let v = f(*av.get_unchecked(p), *bv.get_unchecked(q));
                    p += 1;
                    q += 1;
                    (x, v)
                }
                Ordering::Less => {
                    let v = f(*av.get_unchecked(p), 0.0);
                    p += 1;
                    (x, v)
                }
                Ordering::Greater => {
                    let v = f(0.0, *bv.get_unchecked(q));
                    q += 1;
                    (y, v)
                }
            };
            cs.get_unchecked_mut(n).write(O::narrow(c));
            vs.get_unchecked_mut(n).write(v);
            n += 1;
        }
        // The rest of one row: n + its length <= most, as above.
        while p < ac.len() {
            cs.get_unchecked_mut(n).write(O::narrow((*ac.get_unchecked(p)).wide()));
            vs.get_unchecked_mut(n).write(f(*av.get_unchecked(p), 0.0));
            (p, n) = (p + 1, n + 1);
        }
        while q < bc.len() {
            cs.get_unchecked_mut(n).write(O::narrow((*bc.get_unchecked(q)).wide()));
            vs.get_unchecked_mut(n).write(f(0.0, *bv.get_unchecked(q)));
            (q, n) = (q + 1, n + 1);
        }
    }
    n
}

#[inline(always)]
fn intersection<A: Coord, B: Coord, O: Coord>(
    a: (&[A], &[f64]),
    b: (&[B], &[f64]),
    f: impl Fn(f64, f64) -> f64,
    coords: &mut Vec<O>,
    values: &mut Vec<f64>,
) {
    append_merged(a.0.len().min(b.0.len()), coords, values, |room| {
        intersection_into(a, b, f, room)
    });
}

/// Writes the intersection of two rows, each coordinate's values
/// combined by `f`, at the start of `room`; returns its length.
#[inline(always)]
fn intersection_into<A: Coord, B: Coord, O: Coord>(
    (ac, av): (&[A], &[f64]),
    (bc, bv): (&[B], &[f64]),
    f: impl Fn(f64, f64) -> f64,
    (cs, vs): Room<'_, O>,
) -> usize {
    let (mut p, mut q, mut n) = (0, 0, 0);
    while p < ac.len() && q < bc.len() {
        let (x, y) = (ac[p].wide(), bc[q].wide());
        // Branches, as in `union_into`.
        match x.cmp(&y) {
            Ordering::Equal => {
                cs[n].write(O::narrow(x));
                vs[n].write(f(av[p], bv[q]));
                (p, q, n) = (p + 1, q + 1, n + 1);
            }
            Ordering::Less => p += 1,
            Ordering::Greater => q += 1,
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_rows_hold_the_values_the_entry_loop_computes() {
        let a = (vec![1u32, 4, 6], vec![1.0, -0.0, 3.0]);
        let b = (vec![0u64, 4, 7], vec![2.0, 5.0, -0.0]);
        let (mut c, mut v) = (Vec::new(), Vec::new());
        let rows = || (Row::U32(&a.0, &a.1), Row::U64(&b.0, &b.1));
        merge(rows().0, rows().1, RowOp::Add, &mut c, &mut v);
        assert_eq!(c, vec![0, 1, 4, 6, 7]);
        assert_eq!(v, vec![2.0, 1.0, 5.0, 3.0, 0.0]);
        assert!(v[4].is_sign_positive(), "0.0 + -0.0 is 0.0");
        merge(rows().0, rows().1, RowOp::Sub, &mut c, &mut v);
        assert_eq!(v, vec![-2.0, 1.0, -5.0, 3.0, 0.0]);
        merge(rows().0, rows().1, RowOp::Mul, &mut c, &mut v);
        assert_eq!((c.as_slice(), v.as_slice()), ([4u64].as_slice(), [-0.0].as_slice()));
        assert!(v[0].is_sign_negative());
        // An entry of one row meets 0.0: max(-0.0, 0.0) is 0.0, and
        // min(0.0, -0.0) is -0.0, signs as IEEE 754-2019 orders zeros.
        merge(rows().0, rows().1, RowOp::Max, &mut c, &mut v);
        assert_eq!(c, vec![0, 1, 4, 6, 7]);
        assert_eq!(v, vec![2.0, 1.0, 5.0, 3.0, 0.0]);
        assert!(v[4].is_sign_positive(), "max(0.0, -0.0) is 0.0");
        merge(rows().0, rows().1, RowOp::Min, &mut c, &mut v);
        assert_eq!(c, vec![0, 1, 4, 6, 7]);
        assert_eq!(v, vec![0.0, 0.0, -0.0, 0.0, -0.0]);
        let signs: Vec<bool> = v.iter().map(|x| x.is_sign_negative()).collect();
        assert_eq!(signs, [false, false, true, false, true]);
    }

    /// A scaled merge reads a value missing from one row as `0.0` and then
    /// scales it, as the loop of single entries evaluates `2 * A(i,j) -
    /// -3 * B(i,j)` with B absent (`-3 * 0.0` is `-0.0`): every op, the
    /// row merges, block merges and run merges alike.
    #[test]
    fn scaled_merges_scale_each_side_before_combining_as_the_entry_loop_does() {
        let a = (vec![1u32, 4], vec![-0.0, 3.0]);
        let b = (vec![0u64, 4], vec![2.0, 0.5]);
        let (mut c, mut v) = (Vec::new(), Vec::new());
        for op in RowOp::ALL {
            let scaled = Combine {
                op,
                scales: Some([2.0, -3.0]),
            };
            let entry = |x: Option<f64>, y: Option<f64>| op.apply(2.0 * x.unwrap_or(0.0), -3.0 * y.unwrap_or(0.0));
            let want: Vec<(u64, f64)> = match op.over_union() {
                true => vec![
                    (0, entry(None, Some(2.0))),
                    (1, entry(Some(-0.0), None)),
                    (4, entry(Some(3.0), Some(0.5))),
                ],
                false => vec![(4, entry(Some(3.0), Some(0.5)))],
            };
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            let want_coords: Vec<u64> = want.iter().map(|e| e.0).collect();
            let want_values: Vec<f64> = want.iter().map(|e| e.1).collect();
            merge(Row::U32(&a.0, &a.1), Row::U64(&b.0, &b.1), scaled, &mut c, &mut v);
            assert_eq!((&c, bits(&v)), (&want_coords, bits(&want_values)), "{op:?}");
            merge_blocks(Row::U32(&a.0, &a.1), Row::U64(&b.0, &b.1), scaled, 1, &mut c, &mut v);
            assert_eq!(
                (&c, bits(&v)),
                (&want_coords, bits(&want_values)),
                "{op:?}, blocks of one"
            );
            // Runs: a at 1..3, b at 0..2.
            let mut runs = Vec::new();
            let (ra, rb) = (Run { begin: 1, values: &a.1 }, Run { begin: 0, values: &b.1 });
            merge_runs(ra, rb, scaled, &mut Vec::new(), |first, v| runs.push((first, bits(v))));
            let want_runs = match op.over_union() {
                true => vec![(
                    0,
                    bits(&[
                        entry(None, Some(2.0)),
                        entry(Some(-0.0), Some(0.5)),
                        entry(Some(3.0), None),
                    ]),
                )],
                false => vec![(1, bits(&[entry(Some(-0.0), Some(0.5))]))],
            };
            assert_eq!(runs, want_runs, "{op:?}, runs");
        }
    }

    /// Random rows as a compressed level of `rows` rows over `cols`
    /// columns: empty rows, full rows and everything between.
    fn random_rows(rng: &mut crate::testing::Rng, rows: usize, cols: u64) -> (Vec<u64>, Vec<u64>, Vec<f64>) {
        let (mut pos, mut crd, mut vals) = (vec![0], vec![], vec![]);
        for _ in 0..rows {
            let keep = [0, 1, 2, cols as usize][rng.below(4)];
            for c in 0..cols {
                if rng.below(cols as usize) < keep {
                    crd.push(c);
                    vals.push([-0.0, 1.5, -2.0, 0.25][rng.below(4)]);
                }
            }
            pos.push(crd.len() as u64);
        }
        (pos, crd, vals)
    }

    #[test]
    fn a_block_of_merged_rows_is_each_row_merged_in_turn() {
        let mut rng = crate::testing::Rng::new(7);
        for case in 0..60 {
            let (rows, cols) = (1 + rng.below(12), 1 + rng.below(70) as u64);
            let (a, b) = (random_rows(&mut rng, rows, cols), random_rows(&mut rng, rows, cols));
            // The block: rows `first..end` of both, after some entries
            // already in the output.
            let first = rng.below(rows);
            let end = first + rng.below(rows - first + 1);
            let wide = case % 2 == 0;
            let index = |v: &[u64]| {
                if wide {
                    IndexArray::from_u64_with_bound(v.to_vec(), u64::MAX)
                } else {
                    IndexArray::U32(v.iter().map(|&x| x as u32).collect())
                }
            };
            let (ap, ac, bp, bc) = (index(&a.0), index(&a.1), index(&b.0), index(&b.1));
            for op in RowOp::ALL {
                let below = |positions, coords, values| RowsBelow {
                    positions,
                    coords,
                    values,
                    base: 0,
                };
                let (mut coords, mut values, mut counts) = (index(&[5, 9]), vec![3.0, 4.0], vec![]);
                let largest = merge_rows(
                    below(&ap, &ac, &a.2),
                    below(&bp, &bc, &b.2),
                    first..end,
                    op,
                    100,
                    &mut coords,
                    &mut values,
                    &mut counts,
                );
                let (mut want_coords, mut want_values, mut want_counts) = (vec![5, 9], vec![3.0, 4.0], vec![]);
                let (mut row_coords, mut row_values) = (vec![], vec![]);
                for r in first..end {
                    let (ra, rb) = (
                        a.0[r] as usize..a.0[r + 1] as usize,
                        b.0[r] as usize..b.0[r + 1] as usize,
                    );
                    let (row_a, row_b) = (
                        Row::U64(&a.1[ra.clone()], &a.2[ra]),
                        Row::U64(&b.1[rb.clone()], &b.2[rb]),
                    );
                    merge(row_a, row_b, op, &mut row_coords, &mut row_values);
                    if !row_coords.is_empty() {
                        want_counts.push((100 + r - first, row_coords.len()));
                    }
                    want_coords.extend(&row_coords);
                    want_values.extend(&row_values);
                }
                let want_largest = want_coords[2..].iter().copied().max().unwrap_or(0);
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                let what = format!("case {case}, {op:?}, rows {first}..{end}");
                assert_eq!(largest, Some(want_largest), "{what}");
                assert_eq!(coords.to_u64_vec(), want_coords, "{what}");
                assert_eq!(bits(&values), bits(&want_values), "{what}");
                assert_eq!(counts, want_counts, "{what}");
            }
        }
    }

    #[test]
    fn merged_runs_are_stretches_of_the_values_the_entry_loop_computes() {
        let runs = |a: &[f64], b: &[f64], (ab, bb): (i64, i64), op| {
            let mut out = Vec::new();
            let (a, b) = (Run { begin: ab, values: a }, Run { begin: bb, values: b });
            merge_runs(a, b, op, &mut Vec::new(), |first, v| out.push((first, v.to_vec())));
            out
        };
        // Apart: two stretches, the gap between them not written.
        let apart = runs(&[1.0, 2.0], &[5.0], (0, 3), RowOp::Sub);
        assert_eq!(apart, [(0, vec![1.0, 2.0]), (3, vec![-5.0])]);
        // Overlapping: one stretch; a product keeps the overlap only.
        let (a, b) = ([1.0, 2.0, 3.0], [10.0, 20.0]);
        assert_eq!(runs(&a, &b, (0, 1), RowOp::Add), [(0, vec![1.0, 12.0, 23.0])]);
        assert_eq!(runs(&a, &b, (0, 1), RowOp::Mul), [(1, vec![20.0, 60.0])]);
        assert_eq!(runs(&a, &b, (0, 5), RowOp::Mul), []);
        // One run empty: the other combined with 0.0, signs as the loop's.
        let one = runs(&[], &[-0.0, 4.0], (9, 2), RowOp::Sub);
        assert_eq!(one, [(2, vec![0.0, -4.0])]);
        assert!(one[0].1[0].is_sign_positive(), "0.0 - -0.0 is 0.0");
        assert_eq!(runs(&[], &[], (0, 0), RowOp::Add), []);
    }
}
