//! Inner products over a level's stored positions ([`Op::DotBlock`]),
//! in any semiring and for every row of a dense level ([`Op::RowsDot`]).
//!
//! [`Op::DotBlock`]: crate::bytecode::Op::DotBlock
//! [`Op::RowsDot`]: crate::bytecode::Op::RowsDot

use tessera_formats::{ArrayRef, Cmp, IntOp, Level, LevelFormat, LevelRef, Param};

use super::{factor_rows, KernelBuilder, Length};
use crate::bytecode::{DotFactor, FloatOp, IReg};
use crate::notation::{Reduction, Semiring, Times};

/// `Σ_{p in begin..end} own[p] · Π factors[c] (· temp[c])`, `c` the
/// coordinate stored at `p` in `coords`: the sum from `0.0` in increasing
/// `p` (scipy's order for a row), each product taken from the position's
/// value in the factors' order. A factor is the dense row of its level
/// below register `parent`; registers are read through `reg`.
///
/// ```
/// use tessera_engine::block_ops::{segment_dot, KernelBuilder};
/// use tessera_engine::bytecode::DotFactor;
/// use tessera_engine::interp::{Eager, Operands};
/// use tessera_formats::{Builder, IndexArray, LevelRef, LevelStorage};
///
/// // A row with values 2 and 3 in columns 1 and 3, times the second row
/// // of a dense 2 x 4 matrix.
/// let mut columns = LevelStorage::new(4);
/// columns.arrays.push(IndexArray::U32(vec![0, 2]));
/// columns.arrays.push(IndexArray::U32(vec![1, 3]));
/// let mut rows = LevelStorage::new(4);
/// rows.extent = 4;
/// let (own, dense) = ([2.0, 3.0], [0.0, 0.0, 0.0, 0.0, 10.0, 20.0, 30.0, 40.0]);
/// let levels = [&[columns][..], &[LevelStorage::new(2), rows][..]];
/// let values = [&own[..], &dense[..]];
/// let mut k = Eager::new(Operands { levels: &levels, ..Operands::values(&values) });
/// let driver = LevelRef { operand: 0, level: 0 };
/// let coords = driver.array(1);
/// let row = DotFactor { operand: 1, level: LevelRef { operand: 1, level: 1 }, parent: 0 };
/// let (begin, end) = (k.int(0), k.int(2));
/// // r0 = 1: the dense matrix's second row.
/// let sum = segment_dot(&mut k, (driver, coords), (begin, end), (&[row], None), &mut |_, _| 1);
/// assert_eq!(sum, 2.0 * 20.0 + 3.0 * 40.0);
/// ```
pub fn segment_dot<K: KernelBuilder>(
    k: &mut K,
    (driver, coords): (LevelRef, ArrayRef),
    (begin, end): (K::Int, K::Int),
    (factors, temp): (&[DotFactor], Option<u32>),
    reg: &mut dyn FnMut(&mut K, IReg) -> K::Int,
) -> K::Float {
    let zero = k.int(0);
    let own = k.value_run(driver.operand, zero);
    let coords = k.coordinates(coords);
    let (mut rows, _) = factor_rows(k, factors, zero, reg);
    if let Some(t) = temp {
        rows.push(k.temp_run(t));
    }
    semiring_dot(
        k,
        Semiring::PlusTimes,
        (own, coords),
        (begin, end, Length::Fixed(1)),
        &rows,
    )
}

/// `⊕` over the positions `p` = `begin`, `begin + step`, … below `end`
/// of `own[p] ⊗ Π rows[c]`, `c` the coordinate stored at `p`: from `⊕`'s
/// identity in increasing `p`, each product taken from the position's
/// value in the rows' order. A minimum, maximum or `||` over consecutive
/// positions runs as two chains (even and odd positions) joined at the
/// end, which halves the latency of `⊕` and gives the same bits in any
/// order.
///
/// ```
/// use tessera_engine::block_ops::{semiring_dot, KernelBuilder, Length};
/// use tessera_engine::interp::{Eager, Operands};
/// use tessera_engine::notation::Semiring;
/// use tessera_formats::{Builder, IndexArray, LevelRef, LevelStorage};
///
/// // A row with values 2, 3 and 1 in columns 0, 2 and 1, plus x there.
/// let mut columns = LevelStorage::new(3);
/// columns.arrays.push(IndexArray::U32(vec![0, 3]));
/// columns.arrays.push(IndexArray::U32(vec![0, 2, 1]));
/// let levels = [&[columns][..]];
/// let (own, x) = ([2.0, 3.0, 1.0], [10.0, 20.0, 30.0]);
/// let values = [&own[..], &x[..]];
/// let mut k = Eager::new(Operands { levels: &levels, ..Operands::values(&values) });
/// let coords = k.coordinates(LevelRef { operand: 0, level: 0 }.array(1));
/// let (own, x) = (k.value_run(0, 0), k.value_run(1, 0));
/// let (begin, end) = (k.int(0), k.int(3));
/// let shortest = semiring_dot(&mut k, Semiring::MinPlus, (own, coords), (begin, end, Length::Fixed(1)), &[x]);
/// assert_eq!(shortest, 12.0);
/// ```
#[inline(always)]
pub fn semiring_dot<K: KernelBuilder>(
    k: &mut K,
    semiring: Semiring,
    (own, coords): (K::Run, K::Coords),
    (begin, end, step): (K::Int, K::Int, Length<K::Int>),
    rows: &[K::Run],
) -> K::Float {
    // Few rows get bodies of their own: the interpreter, which runs this
    // as it is called, then loops over one gather instead of over the
    // rows.
    match *rows {
        [] => dot_of(k, semiring, (own, coords), (begin, end, step), []),
        [x] => dot_of(k, semiring, (own, coords), (begin, end, step), [x]),
        _ => dot_of(k, semiring, (own, coords), (begin, end, step), rows),
    }
}

/// [`semiring_dot`] over rows held in a slice or a fixed-size array.
#[inline(always)]
fn dot_of<K: KernelBuilder, R: AsRef<[K::Run]>>(
    k: &mut K,
    semiring: Semiring,
    (own, coords): (K::Run, K::Coords),
    (begin, end, step): (K::Int, K::Int, Length<K::Int>),
    rows: R,
) -> K::Float {
    let positions = (begin, end, step);
    // The coordinates, when the rows read any.
    let entries = (own, (!rows.as_ref().is_empty()).then_some(coords));
    // Plus-times, the common semiring, with its operations fixed where
    // the loop is written: the interpreter's loop then has no dispatch on
    // the semiring per entry.
    if semiring == Semiring::PlusTimes {
        let term = |k: &mut K, v, c| product_of(k, Times::Mul, v, &rows, c);
        return fold_terms(k, Reduction::Sum, entries, positions, term, |k, a, b| {
            k.float_op(FloatOp::Add, a, b)
        });
    }
    let plus = semiring.plus();
    let term = |k: &mut K, v, c| product_of(k, semiring.times(), v, &rows, c);
    fold_terms(k, plus, entries, positions, term, |k, a, b| k.combine(plus, a, b))
}

/// `term(begin) ⊕ term(begin + step) ⊕ …` below `end`, from `⊕`'s
/// identity, `⊕` being `plus` computed by `combine`, each term given the
/// value `own` holds at its position and the coordinate stored there
/// (when there are `coords`):
/// in order, or as two chains over consecutive positions when `plus` is
/// idempotent.
#[inline(always)]
fn fold_terms<K: KernelBuilder>(
    k: &mut K,
    plus: Reduction,
    (own, coords): (K::Run, Option<K::Coords>),
    (begin, end, step): (K::Int, K::Int, Length<K::Int>),
    term: impl Fn(&mut K, K::Float, K::Int) -> K::Float,
    combine: impl Fn(&mut K, K::Float, K::Float) -> K::Float,
) -> K::Float {
    let at = |k: &mut K, p: K::Int| {
        let c = match coords {
            Some(coords) => k.coordinate(coords, p),
            None => p,
        };
        let v = k.run_at(own, Length::In(p));
        term(k, v, c)
    };
    let identity = k.float(plus.identity());
    let (from, init) = match step {
        Length::Fixed(1) if plus.is_idempotent() => {
            let len = k.sub(end, begin);
            let even = k.int(-2);
            let pairs = k.binary(IntOp::BitAnd, len, even);
            let pairs_end = k.add(begin, pairs);
            let [a, b] = k.fold_floats(begin, pairs_end, Length::Fixed(2), [identity; 2], |k, p, [a, b]| {
                let (t0, next) = (at(k, p), k.add_const(p, 1));
                let t1 = at(k, next);
                [combine(k, a, t0), combine(k, b, t1)]
            });
            (pairs_end, combine(k, a, b))
        }
        _ => (begin, identity),
    };
    let [sum] = match (coords, step) {
        (Some(coords), Length::Fixed(1)) => k.fold_entries((coords, own), (from, end), [init], |k, _, c, v, [sum]| {
            let t = term(k, v, c);
            [combine(k, sum, t)]
        }),
        _ => k.fold_floats(from, end, step, [init], |k, p, [sum]| {
            let t = at(k, p);
            [combine(k, sum, t)]
        }),
    };
    sum
}

/// `value ⊗ Π rows[c]`.
#[inline(always)]
fn product_of<K: KernelBuilder, R: AsRef<[K::Run]>>(
    k: &mut K,
    times: Times,
    value: K::Float,
    rows: &R,
    c: K::Int,
) -> K::Float {
    let mut prod = value;
    for &row in rows.as_ref() {
        let x = k.run_at(row, Length::In(c));
        prod = match times {
            Times::Mul => k.float_op(FloatOp::Mul, prod, x),
            Times::Add => k.float_op(FloatOp::Add, prod, x),
            Times::And => k.combine(Reduction::And, prod, x),
        };
    }
    prod
}

/// The rows of an [`Op::RowsDot`]: coordinates `first..last` of a dense
/// `level` below the position in register `parent`.
///
/// [`Op::RowsDot`]: crate::bytecode::Op::RowsDot
#[derive(Debug, Clone, Copy)]
pub struct RowsOf {
    pub level: LevelRef,
    pub parent: IReg,
    pub first: IReg,
    pub last: IReg,
}

/// [`Op::RowsDot`] with its registers read through `reg`: for each row
/// `c` of `rows`, the [`semiring_dot`] of the `driver`'s segment below it
/// (its coordinates in `coords`) times the dense `factors`, added to the
/// dense output at `out_parent * extent(out) + c` when the segment is not
/// empty (or on every row, `every_row`). SpMV in any semiring.
///
/// ```
/// use tessera_engine::block_ops::{rows_dot, RowsOf};
/// use tessera_engine::bytecode::DotFactor;
/// use tessera_engine::interp::{DenseCells, Eager, Operands};
/// use tessera_engine::notation::Semiring;
/// use tessera_formats::{Format, IndexArray, LevelRef, LevelStorage};
///
/// // CSR [[2, 0], [0, 0], [1, 3]] times x = [10, 100].
/// let format = Format::csr();
/// let mut rows = LevelStorage::new(3);
/// rows.extent = 3;
/// let mut columns = LevelStorage::new(2);
/// columns.arrays.push(IndexArray::U32(vec![0, 1, 1, 3]));
/// columns.arrays.push(IndexArray::U32(vec![0, 0, 1]));
/// let mut xs = LevelStorage::new(2);
/// xs.extent = 2;
/// let levels = [&[rows, columns][..], &[xs][..], &[LevelStorage::new(3)][..]];
/// let (own, x) = ([2.0, 1.0, 3.0], [10.0, 100.0]);
/// let values = [&own[..], &x[..]];
/// let mut y = [0.5; 3];
/// let output = DenseCells::new(&mut y, 0);
/// let mut k = Eager::new(Operands { levels: &levels, output, ..Operands::values(&values) });
/// let driver = LevelRef { operand: 0, level: 1 };
/// let driver_format = format.levels()[1].level;
/// let coords = driver.array(1);
/// let factor = DotFactor { operand: 1, level: LevelRef { operand: 1, level: 0 }, parent: 0 };
/// let out = LevelRef { operand: 2, level: 0 };
/// // Registers: r0 = 0, r1 = 3 (rows 0..3 below position 0).
/// let registers = [0, 3];
/// let rows_of = RowsOf { level: LevelRef { operand: 0, level: 0 }, parent: 0, first: 0, last: 1 };
/// let driver = (driver, driver_format, coords);
/// rows_dot(&mut k, (Semiring::PlusTimes, false), rows_of, driver, &[factor], (out, 0), &mut |_, r| registers[r as usize]);
/// // The empty row keeps its value.
/// assert_eq!(y, [20.5, 0.5, 310.5]);
/// ```
///
/// [`Op::RowsDot`]: crate::bytecode::Op::RowsDot
pub fn rows_dot<K: KernelBuilder>(
    k: &mut K,
    (semiring, every_row): (Semiring, bool),
    rows: RowsOf,
    (driver, format, coords): (LevelRef, LevelFormat, ArrayRef),
    factors: &[DotFactor],
    (out, out_parent): (LevelRef, IReg),
    reg: &mut dyn FnMut(&mut K, IReg) -> K::Int,
) {
    let extent = k.param(rows.level, Param::Extent);
    let parent = reg(k, rows.parent);
    let first_position = k.mul(parent, extent);
    let (first, last) = (reg(k, rows.first), reg(k, rows.last));
    let out_extent = k.param(out, Param::Extent);
    let out_parent = reg(k, out_parent);
    // The output from row `first` on: a chunk's output holds its rows
    // alone.
    let out_first = k.mul(out_parent, out_extent);
    let out_start = k.add(out_first, first);
    let target = k.output_target(out_start);
    let zero = k.int(0);
    let own = k.value_run(driver.operand, zero);
    let coords = k.coordinates(coords);
    let (factor_rows, _) = factor_rows(k, factors, zero, reg);
    let walk = RowWalk {
        every_row,
        rows: (first_position, first, last),
        driver: (driver, format),
        own: (own, coords),
        target,
    };
    // The semiring and the number of rows decided once, outside the loop
    // over rows: the interpreter, which runs this as it is called, then
    // spends nothing on them per row.
    match (factor_rows.as_slice(), semiring) {
        (&[x], Semiring::PlusTimes) => rows_dot_of(k, walk, Semiring::PlusTimes, [x]),
        (&[x], _) => rows_dot_of(k, walk, semiring, [x]),
        (rows, _) => rows_dot_of(k, walk, semiring, rows),
    }
}

/// What [`rows_dot`] walks and where it adds, its registers read.
struct RowWalk<K: KernelBuilder> {
    every_row: bool,
    /// The rows' first position and the coordinates `first..last`.
    rows: (K::Int, K::Int, K::Int),
    driver: (LevelRef, LevelFormat),
    own: (K::Run, K::Coords),
    target: K::Target,
}

/// [`rows_dot`] in `semiring` (a constant one is fixed where the loop is
/// written) over `factor_rows`.
#[inline(always)]
fn rows_dot_of<K: KernelBuilder, R: AsRef<[K::Run]>>(k: &mut K, walk: RowWalk<K>, semiring: Semiring, factor_rows: R) {
    let RowWalk {
        every_row,
        rows: (first_position, first, last),
        driver: (driver, format),
        own,
        target,
    } = walk;
    k.for_range(first, last, |k, c| {
        let position = k.add(first_position, c);
        let (b, e) = format.pos_iter(k, driver, position);
        let add = |k: &mut K| {
            let total = dot_of(k, semiring, own, (b, e, Length::Fixed(1)), &factor_rows);
            let row = k.sub(c, first);
            k.add_at(target, Length::In(row), total);
        };
        if every_row {
            add(k);
        } else {
            let stored = k.compare(Cmp::Lt, b, e);
            k.when(stored, add);
        }
    });
}
