//! Dense updates: a scaled product of dense rows added into a dense row
//! ([`Op::DenseAxpy`], [`Op::TempAxpy`]), once per stored entry of a
//! sparse row ([`Op::RowAxpy`], SpMM's middle loop), or into the output's
//! values on a driver's pattern ([`Op::ValuesAxpy`]).
//!
//! Each component of the target gets its terms in the order of the
//! entries, each term's product taken from the scale in the factors'
//! order, so every tier's bits agree; pairs of lanes only compute two
//! components at once.
//!
//! [`Op::DenseAxpy`]: crate::bytecode::Op::DenseAxpy
//! [`Op::TempAxpy`]: crate::bytecode::Op::TempAxpy
//! [`Op::RowAxpy`]: crate::bytecode::Op::RowAxpy
//! [`Op::ValuesAxpy`]: crate::bytecode::Op::ValuesAxpy

use smallvec::SmallVec;
use tessera_formats::{ArrayRef, Builder, Cmp, IntOp, LevelRef, Param};

use super::{factor_rows, KernelBuilder, Length};
use crate::bytecode::{AxpyFactor, DotFactor, FloatOp, IReg};
use crate::notation::Func;

/// [`Op::DenseAxpy`] and [`Op::TempAxpy`] with their registers read
/// through `reg`: `target[c] += scale * Π factors[c] (* temp[c])` for
/// every `c` below the target's length `len`, each factor's level's
/// extent and the temporary's length (`temp` is its run and length).
///
/// ```
/// use tessera_engine::block_ops::{dense_axpy, KernelBuilder};
/// use tessera_engine::bytecode::DotFactor;
/// use tessera_engine::interp::{DenseCells, Eager, Operands};
/// use tessera_formats::{Builder, LevelRef, LevelStorage};
///
/// // y += 2 * (the second row of a dense 2 x 3 matrix).
/// let mut row = LevelStorage::new(3);
/// row.extent = 3;
/// let levels = [&[LevelStorage::new(2), row][..]];
/// let dense = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
/// let values = [&dense[..]];
/// let mut y = [1.0; 3];
/// let output = DenseCells::new(&mut y, 0);
/// let mut k = Eager::new(Operands { levels: &levels, output, ..Operands::values(&values) });
/// let factor = DotFactor { operand: 0, level: LevelRef { operand: 0, level: 1 }, parent: 0 };
/// let (start, len, scale) = (k.int(0), k.int(3), k.float(2.0));
/// let target = k.output_target(start);
/// // r0 = 1: the second row.
/// dense_axpy(&mut k, (target, len), scale, &[factor], None, &mut |_, _| 1);
/// assert_eq!(y, [9.0, 11.0, 13.0]);
/// ```
///
/// [`Op::DenseAxpy`]: crate::bytecode::Op::DenseAxpy
/// [`Op::TempAxpy`]: crate::bytecode::Op::TempAxpy
pub fn dense_axpy<K: KernelBuilder>(
    k: &mut K,
    (target, len): (K::Target, K::Int),
    scale: K::Float,
    factors: &[DotFactor],
    temp: Option<(K::Run, K::Int)>,
    reg: &mut dyn FnMut(&mut K, IReg) -> K::Int,
) {
    let (mut rows, mut n) = factor_rows(k, factors, len, reg);
    if let Some((run, temp_len)) = temp {
        rows.push(run);
        n = k.min(n, temp_len);
    }
    add_products(k, target, n, scale, &rows);
}

/// `target[c] += scale * Π runs[c]` for `c < n`, two components at a
/// time and the last odd one alone: [`dense_axpy`] over runs already
/// resolved.
///
/// ```
/// use tessera_engine::block_ops::{add_products, KernelBuilder};
/// use tessera_engine::interp::{DenseCells, Eager, Operands};
/// use tessera_formats::Builder;
///
/// let (a, b) = ([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]);
/// let values = [&a[..], &b[..]];
/// let mut y = [0.0; 3];
/// let output = DenseCells::new(&mut y, 0);
/// let mut k = Eager::new(Operands { output, ..Operands::values(&values) });
/// let runs = [k.value_run(0, 0), k.value_run(1, 0)];
/// let (start, n, scale) = (k.int(0), k.int(3), k.float(10.0));
/// let target = k.output_target(start);
/// add_products(&mut k, target, n, scale, &runs);
/// assert_eq!(y, [40.0, 100.0, 180.0]);
/// ```
pub fn add_products<K: KernelBuilder>(k: &mut K, target: K::Target, n: K::Int, scale: K::Float, runs: &[K::Run]) {
    // Few runs get bodies of their own: the interpreter, which runs this
    // as it is called, then loops over loads and multiplies rather than
    // over the runs.
    match *runs {
        [] => add_products_of(k, target, n, scale, []),
        [a] => add_products_of(k, target, n, scale, [a]),
        [a, b] => add_products_of(k, target, n, scale, [a, b]),
        _ => add_products_of(k, target, n, scale, runs),
    }
}

/// [`add_products`] over runs held in a slice or a fixed-size array.
fn add_products_of<K: KernelBuilder, R: AsRef<[K::Run]>>(
    k: &mut K,
    target: K::Target,
    n: K::Int,
    scale: K::Float,
    runs: R,
) {
    let runs = runs.as_ref();
    let lanes = k.splat(scale);
    let (zero, even) = (k.int(0), k.int(-2));
    let pairs = k.binary(IntOp::BitAnd, n, even);
    k.for_range_by(zero, pairs, 2, |k, c| {
        let at = Length::In(c);
        let mut prod = lanes;
        for &run in runs {
            let x = k.run_pair(run, at);
            prod = k.pair_op(FloatOp::Mul, prod, x);
        }
        let old = k.target_pair(target, at);
        let new = k.pair_op(FloatOp::Add, old, prod);
        k.set_target_pair(target, at, new);
    });
    k.for_range(pairs, n, |k, c| {
        let at = Length::In(c);
        let mut prod = scale;
        for &run in runs {
            let x = k.run_at(run, at);
            prod = k.float_op(FloatOp::Mul, prod, x);
        }
        k.add_at(target, at, prod);
    });
}

/// [`Op::ValuesAxpy`] with its registers read through `reg`: for each
/// position `p` in `begin..end` of the `driver` level (its coordinate `c`
/// read from `coords`), the dense output's value at `p` gets `scale *
/// value[p] * Π factors[c]`, or `func` of it with a `map`. An output on
/// the driver's pattern.
///
/// ```
/// use tessera_engine::block_ops::{values_axpy, KernelBuilder};
/// use tessera_engine::bytecode::DotFactor;
/// use tessera_engine::interp::{DenseCells, Eager, Operands};
/// use tessera_formats::{Builder, IndexArray, LevelRef, LevelStorage};
///
/// // A row with values 2 and 3 in columns 0 and 2, each times x there.
/// let mut columns = LevelStorage::new(3);
/// columns.arrays.push(IndexArray::U32(vec![0, 2]));
/// columns.arrays.push(IndexArray::U32(vec![0, 2]));
/// let mut dense = LevelStorage::new(3);
/// dense.extent = 3;
/// let levels = [&[columns][..], &[dense][..]];
/// let (own, x) = ([2.0, 3.0], [10.0, 20.0, 30.0]);
/// let values = [&own[..], &x[..]];
/// let mut out = [0.0; 2];
/// let output = DenseCells::new(&mut out, 0);
/// let mut k = Eager::new(Operands { levels: &levels, output, ..Operands::values(&values) });
/// let driver = LevelRef { operand: 0, level: 0 };
/// let factor = DotFactor { operand: 1, level: LevelRef { operand: 1, level: 0 }, parent: 0 };
/// let (begin, end, scale) = (k.int(0), k.int(2), k.float(1.0));
/// // r0 = 0: x's only row.
/// values_axpy(&mut k, (driver, Some(driver.array(1))), (begin, end), scale, &[factor], None, &mut |_, _| 0);
/// assert_eq!(out, [20.0, 90.0]);
/// ```
///
/// [`Op::ValuesAxpy`]: crate::bytecode::Op::ValuesAxpy
pub fn values_axpy<K: KernelBuilder>(
    k: &mut K,
    (driver, coords): (LevelRef, Option<ArrayRef>),
    (begin, end): (K::Int, K::Int),
    scale: K::Float,
    factors: &[DotFactor],
    map: Option<Func>,
    reg: &mut dyn FnMut(&mut K, IReg) -> K::Int,
) {
    let zero = k.int(0);
    let (rows, _) = factor_rows(k, factors, zero, reg);
    let coords = || coords.expect("factors of a stored value are gathered through its coordinate array");
    let len = k.sub(end, begin);
    let target = k.output_target(begin);
    let values = k.value_run(driver.operand, zero);
    let own = k.value_run(driver.operand, begin);
    let own = k.run_within(own, Length::In(len));
    // Few rows get bodies of their own, as in [`add_products`].
    match (&*rows, map) {
        // A scaled copy: no coordinates to read.
        ([], None) => add_products_of(k, target, len, scale, [own]),
        ([], Some(map)) => mapped_copy(k, (target, len), (own, scale), map),
        (&[x], _) => gathered_products(k, (target, len), (values, scale), (coords(), begin), [x], map),
        (&[x, y], _) => gathered_products(k, (target, len), (values, scale), (coords(), begin), [x, y], map),
        _ => gathered_products(k, (target, len), (values, scale), (coords(), begin), &rows[..], map),
    }
}

/// `target[c] += map(scale * own[c])` for `c` in `0..len`.
fn mapped_copy<K: KernelBuilder>(
    k: &mut K,
    (target, len): (K::Target, K::Int),
    (own, scale): (K::Run, K::Float),
    map: Func,
) {
    let zero = k.int(0);
    k.for_range(zero, len, |k, c| {
        let at = Length::In(c);
        let x = k.run_at(own, at);
        let prod = k.float_op(FloatOp::Mul, scale, x);
        let value = k.float_call(map, prod, prod);
        k.add_at(target, at, value);
    });
}

/// `target[p - first] += scale * values[p] * Π rows[coords[p]]` for `p`
/// in `first..first + len`, or `func` of the product with a `map`.
fn gathered_products<K: KernelBuilder, R: AsRef<[K::Run]>>(
    k: &mut K,
    (target, len): (K::Target, K::Int),
    (values, scale): (K::Run, K::Float),
    (coords, first): (ArrayRef, K::Int),
    rows: R,
    map: Option<Func>,
) {
    let coords = k.coordinates(coords);
    let end = k.add(first, len);
    // A walk over the stored entries: the interpreter reads each width of
    // coordinates in a loop of its own.
    k.fold_entries((coords, values), (first, end), [], |k, p, c, v, []| {
        let i = k.sub(p, first);
        let at = Length::In(i);
        let mut prod = k.float_op(FloatOp::Mul, scale, v);
        for &row in rows.as_ref() {
            let x = k.run_at(row, Length::In(c));
            prod = k.float_op(FloatOp::Mul, prod, x);
        }
        let value = match map {
            Some(func) => k.float_call(func, prod, prod),
            None => prod,
        };
        k.add_at(target, at, value);
        []
    });
}

/// [`Op::RowAxpy`] with its registers read through `reg`: for each
/// position `p` in `begin..end` of the `driver` level (its coordinate `c`
/// read from `coords`), the target's `n` components get `scale *
/// value[p] * Π factor rows`, a factor's row being `parent * extent(via)
/// + c` of its values (or `parent` without `via`), `n` values long.
///
/// Whole tiles of the target ([`KernelBuilder::tile_pairs`] pairs) stay
/// in registers while every entry adds to them, each component still
/// getting the entries' products in order, so the tiles' width changes no
/// bit.
///
/// ```
/// use tessera_engine::block_ops::{row_axpy, KernelBuilder};
/// use tessera_engine::bytecode::AxpyFactor;
/// use tessera_engine::interp::{DenseCells, Eager, Operands};
/// use tessera_formats::{Builder, IndexArray, LevelRef, LevelStorage};
///
/// // A row with values 2 and 3 in columns 0 and 1, times the rows of a
/// // dense 2 x 2 matrix B: y = 2 * B[0] + 3 * B[1].
/// let mut columns = LevelStorage::new(2);
/// columns.arrays.push(IndexArray::U32(vec![0, 2]));
/// columns.arrays.push(IndexArray::U32(vec![0, 1]));
/// let mut rows = LevelStorage::new(2);
/// rows.extent = 2;
/// let levels = [&[columns][..], &[rows][..]];
/// let (own, b) = ([2.0, 3.0], [1.0, 10.0, 100.0, 1000.0]);
/// let values = [&own[..], &b[..]];
/// let mut y = [0.0; 2];
/// let output = DenseCells::new(&mut y, 0);
/// let mut k = Eager::new(Operands { levels: &levels, output, ..Operands::values(&values) });
/// let driver = LevelRef { operand: 0, level: 0 };
/// let factor = AxpyFactor { operand: 1, level: LevelRef { operand: 1, level: 0 }, parent: 0, via: Some(LevelRef { operand: 1, level: 0 }) };
/// let (begin, end, n, scale) = (k.int(0), k.int(2), k.int(2), k.float(1.0));
/// let target = k.output_target(begin);
/// row_axpy(&mut k, (driver, driver.array(1)), (begin, end), scale, &[factor], (target, n), &mut |_, _| 0);
/// assert_eq!(y, [302.0, 3020.0]);
/// ```
///
/// [`Op::RowAxpy`]: crate::bytecode::Op::RowAxpy
pub fn row_axpy<K: KernelBuilder>(
    k: &mut K,
    (driver, coords): (LevelRef, ArrayRef),
    (begin, end): (K::Int, K::Int),
    scale: K::Float,
    factors: &[AxpyFactor],
    (target, n): (K::Target, K::Int),
    reg: &mut dyn FnMut(&mut K, IReg) -> K::Int,
) {
    let mut part = |k: &mut K, f: &AxpyFactor| RowFactor {
        operand: f.operand,
        parent: reg(k, f.parent),
        via: f.via.map(|via| k.param(via, Param::Extent)),
    };
    // A factor's row for coordinate `c`, the components of window `from`.
    let row_of = |k: &mut K, RowFactor { operand, parent, via }: RowFactor<K>, c: K::Int, from: Window<K>| {
        let row = match via {
            Some(extent) => {
                let first = k.mul(parent, extent);
                k.add(first, c)
            }
            None => parent,
        };
        let first = k.mul(row, n);
        let first = k.add(first, from.0);
        let run = k.value_run(operand, first);
        k.run_within(run, from.1)
    };
    let walk = Walk {
        driver,
        coords,
        positions: (begin, end),
        scale,
        target,
        n,
    };
    // One or two factors (SpMM, MTTKRP) get rows of their own: the
    // interpreter, which runs this as it is called, then builds no list
    // of rows per entry, nor of factors per call.
    match factors {
        [a] => {
            let a = part(k, a);
            row_updates(k, walk, |k, c, from| [row_of(k, a, c, from)])
        }
        [a, b] => {
            let (a, b) = (part(k, a), part(k, b));
            row_updates(k, walk, |k, c, from| [row_of(k, a, c, from), row_of(k, b, c, from)])
        }
        _ => {
            let parts: SmallVec<[RowFactor<K>; 4]> = factors.iter().map(|f| part(k, f)).collect();
            row_updates(k, walk, |k, c, from| {
                parts
                    .iter()
                    .map(|&part| row_of(k, part, c, from))
                    .collect::<SmallVec<[K::Run; 4]>>()
            })
        }
    }
}

/// A factor of [`row_axpy`], its registers read: its operand, its parent
/// row and the extent of its `via` level.
struct RowFactor<K: KernelBuilder> {
    operand: u32,
    parent: K::Int,
    via: Option<K::Int>,
}

impl<K: KernelBuilder> Clone for RowFactor<K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K: KernelBuilder> Copy for RowFactor<K> {}

/// The components of a row an update reads: from the first on, so many.
type Window<K> = (<K as Builder>::Int, Length<<K as Builder>::Int>);

/// The entries [`row_axpy`] walks and the row it adds into, its
/// registers read.
struct Walk<K: KernelBuilder> {
    driver: LevelRef,
    coords: ArrayRef,
    positions: (K::Int, K::Int),
    scale: K::Float,
    target: K::Target,
    /// The target's length, and the factor rows'.
    n: K::Int,
}

impl<K: KernelBuilder> Clone for Walk<K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K: KernelBuilder> Copy for Walk<K> {}

/// [`row_axpy`] with each entry's factor rows from `rows_at(c, window)`,
/// in tiles as wide as the builder keeps.
fn row_updates<K: KernelBuilder, R: AsRef<[K::Run]>>(
    k: &mut K,
    walk: Walk<K>,
    rows_at: impl Fn(&mut K, K::Int, Window<K>) -> R,
) {
    match k.tile_pairs() {
        8 => tiled_row_updates::<K, R, 8>(k, walk, rows_at),
        _ => tiled_row_updates::<K, R, 4>(k, walk, rows_at),
    }
}

/// [`row_updates`] in tiles of `PAIRS` pairs.
fn tiled_row_updates<K: KernelBuilder, R: AsRef<[K::Run]>, const PAIRS: usize>(
    k: &mut K,
    walk: Walk<K>,
    rows_at: impl Fn(&mut K, K::Int, Window<K>) -> R,
) {
    let Walk {
        driver,
        coords,
        positions: (begin, end),
        scale,
        target,
        n,
    } = walk;
    let tile_len = 2 * PAIRS as u32;
    let zero = k.int(0);
    let own = k.value_run(driver.operand, zero);
    let coords = k.coordinates(coords);
    // The entry at `p`: its coordinate and `scale * value[p]`.
    let entry = |k: &mut K, p: K::Int| {
        let c = k.coordinate(coords, p);
        let v = k.run_at(own, Length::In(p));
        (c, k.float_op(FloatOp::Mul, scale, v))
    };
    let tile_mask = k.int(-i64::from(tile_len));
    let tiled = k.binary(IntOp::BitAnd, n, tile_mask);
    k.for_range_by(zero, tiled, tile_len, |k, t| {
        let tile = k.target_offset(target, t);
        let first = k.target_pair(tile, Length::Fixed(0));
        let mut init = [first; PAIRS];
        for (j, pair) in init.iter_mut().enumerate().skip(1) {
            *pair = k.target_pair(tile, Length::Fixed(2 * j as u32));
        }
        let sums = k.fold_pairs(begin, end, init, |k, p, mut sums| {
            let (c, s) = entry(k, p);
            let lanes = k.splat(s);
            let rows = rows_at(k, c, (t, Length::Fixed(tile_len)));
            for (j, sum) in sums.iter_mut().enumerate() {
                let mut prod = lanes;
                for &row in rows.as_ref() {
                    let x = k.run_pair(row, Length::Fixed(2 * j as u32));
                    prod = k.pair_op(FloatOp::Mul, prod, x);
                }
                *sum = k.pair_op(FloatOp::Add, *sum, prod);
            }
            sums
        });
        for (j, sum) in sums.into_iter().enumerate() {
            k.set_target_pair(tile, Length::Fixed(2 * j as u32), sum);
        }
    });
    // The components past the last whole tile, entry by entry; no pass
    // over the entries when there are none.
    let rest = k.sub(n, tiled);
    let tail = k.target_offset(target, tiled);
    let some = k.compare(Cmp::Gt, rest, zero);
    let last = k.select(some, end, begin);
    k.for_range(begin, last, |k, p| {
        let (c, s) = entry(k, p);
        let rows = rows_at(k, c, (tiled, Length::In(rest)));
        add_products(k, tail, rest, s, rows.as_ref());
    });
}
