//! Inner products of dense runs ([`Op::DenseDot`]).
//!
//! [`Op::DenseDot`]: crate::bytecode::Op::DenseDot

use smallvec::SmallVec;

use super::{KernelBuilder, Length};
use crate::bytecode::{FloatOp, IReg, StridedRun, ValueRun};

/// The runs of an op's operands, their starts read through `reg`.
///
/// ```
/// use tessera_engine::block_ops::{value_runs, KernelBuilder, Length};
/// use tessera_engine::bytecode::ValueRun;
/// use tessera_engine::interp::{Eager, Operands};
///
/// let x = [1.0, 2.0, 3.0];
/// let values = [&x[..]];
/// let mut k = Eager::new(Operands::values(&values));
/// // Register 7 holds the run's start, 1.
/// let runs = value_runs(&mut k, &[ValueRun { operand: 0, start: 7 }], &mut |_, r| if r == 7 { 1 } else { 0 });
/// assert_eq!(k.run_at(runs[0], Length::Fixed(1)), 3.0);
/// ```
pub fn value_runs<K: KernelBuilder>(
    k: &mut K,
    runs: &[ValueRun],
    reg: &mut dyn FnMut(&mut K, IReg) -> K::Int,
) -> SmallVec<[K::Run; 4]> {
    runs.iter()
        .map(|run| {
            let start = reg(k, run.start);
            k.value_run(run.operand, start)
        })
        .collect()
}

/// [`Op::DenseRowsDot`] with its registers read through `reg`: the rows of
/// `factors` (each stepping by its own register) times the `shared` runs,
/// added to the output's run ([`rows_of_dots`]).
///
/// ```
/// use tessera_engine::block_ops::{dense_rows_dot, KernelBuilder, Length};
/// use tessera_engine::bytecode::{StridedRun, ValueRun};
/// use tessera_engine::interp::{DenseCells, Eager, Operands};
///
/// // A dense 2 x 2 matrix [[1, 2], [3, 4]] times x = [10, 100], into y.
/// let (a, x) = ([1.0, 2.0, 3.0, 4.0], [10.0, 100.0]);
/// let values = [&a[..], &x[..]];
/// let mut y = [0.0; 2];
/// let output = DenseCells::new(&mut y, 0);
/// let mut k = Eager::new(Operands { output, ..Operands::values(&values) });
/// // Registers: r0 = 0, r1 = 1, r2 = 2 (a row of A is two values on).
/// let rows = [StridedRun { operand: 0, start: 0, step: 2 }];
/// let shared = [ValueRun { operand: 1, start: 0 }];
/// let out = StridedRun { operand: 2, start: 0, step: 1 };
/// let scale = k.float(1.0);
/// let shape = (Length::Fixed(2), Length::Fixed(2));
/// dense_rows_dot(&mut k, shape, scale, (&rows, &shared), out, &mut |_, r| r as i64);
/// assert_eq!(y, [210.0, 430.0]);
/// ```
///
/// [`Op::DenseRowsDot`]: crate::bytecode::Op::DenseRowsDot
pub fn dense_rows_dot<K: KernelBuilder>(
    k: &mut K,
    shape: (Length<K::Int>, Length<K::Int>),
    scale: K::Float,
    (factors, shared): (&[StridedRun], &[ValueRun]),
    out: StridedRun,
    reg: &mut dyn FnMut(&mut K, IReg) -> K::Int,
) {
    let mut runs: SmallVec<[(K::Run, K::Int); 3]> = SmallVec::new();
    for f in factors {
        let start = reg(k, f.start);
        let run = k.value_run(f.operand, start);
        runs.push((run, reg(k, f.step)));
    }
    let shared = value_runs(k, shared, reg);
    let out = (reg(k, out.start), reg(k, out.step));
    rows_of_dots(k, shape, scale, &runs, &shared, out);
}

/// Runs of at most this many values are unrolled: a BCSR block's row
/// times its piece of x is a few loads and multiplies with no loop.
const MOST_UNROLLED: u32 = 16;

/// `scale * Σ_{c < len} Π runs[c]`: the sum from `0.0` in increasing `c`,
/// each product taken in the runs' order (no runs: the empty product 1).
///
/// ```
/// use tessera_engine::block_ops::{dense_dot, KernelBuilder, Length};
/// use tessera_engine::interp::{DenseCells, Eager, Operands};
///
/// let (a, b) = ([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]);
/// let values = [&a[..], &b[..]];
/// let mut k = Eager::new(Operands::values(&values));
/// let runs = [k.value_run(0, 0), k.value_run(1, 1)];
/// let scale = k.float(2.0);
/// // 2 * (1*5 + 2*6), a run of two read from b's position 1 on.
/// assert_eq!(dense_dot(&mut k, scale, &runs, Length::Fixed(2)), 34.0);
/// assert_eq!(dense_dot(&mut k, scale, &runs, Length::In(2)), 34.0);
/// ```
pub fn dense_dot<K: KernelBuilder>(k: &mut K, scale: K::Float, runs: &[K::Run], len: Length<K::Int>) -> K::Float {
    // Two runs (SDDMM's rank loop, a row times x) get a body of their
    // own: the interpreter, which runs this as it is called, then loops
    // over two loads and a multiply instead of over the runs.
    let sum = match *runs {
        [a, b] => sum_of(k, len, |k, at| {
            let x = k.run_at(a, at);
            let y = k.run_at(b, at);
            k.float_op(FloatOp::Mul, x, y)
        }),
        _ => sum_of(k, len, |k, at| product(k, runs, at, [])),
    };
    k.float_op(FloatOp::Mul, scale, sum)
}

/// `Σ_{c < len} term(c)`, from `0.0` in increasing `c`; unrolled when the
/// length is fixed and short.
fn sum_of<K: KernelBuilder>(
    k: &mut K,
    len: Length<K::Int>,
    mut term: impl FnMut(&mut K, Length<K::Int>) -> K::Float,
) -> K::Float {
    let zero = k.float(0.0);
    match len {
        Length::Fixed(n) if n <= MOST_UNROLLED => (0..n).fold(zero, |sum, c| {
            let t = term(k, Length::Fixed(c));
            k.float_op(FloatOp::Add, sum, t)
        }),
        len => {
            let (begin, end) = (k.int(0), len.value(k));
            k.fold_range(begin, end, zero, |k, c, sum| {
                let t = term(k, Length::In(c));
                k.float_op(FloatOp::Add, sum, t)
            })
        }
    }
}

/// Blocks of at most this many values are unrolled whole, the shared
/// runs' values loaded once for every row (a 4 x 4 block has 16).
const MOST_UNROLLED_BLOCK: u32 = 64;

/// For each row `r < rows`: `out[out_start + r * out_step] += scale *
/// Σ_{c < len} Π runs · Π shared`, a run `(run, step)` read from `r *
/// step` values on and a shared run the same for every row: each row's
/// sum is [`dense_dot`]'s over the runs then the shared runs. A dense
/// matrix times a vector ([`Op::DenseRowsDot`]), or a BCSR block times its
/// piece of x (each block of [`Op::BlockRowsDot`]).
///
/// ```
/// use tessera_engine::block_ops::{rows_of_dots, KernelBuilder, Length};
/// use tessera_engine::interp::{DenseCells, Eager, Operands};
/// use tessera_formats::Builder;
///
/// // A 2 x 2 block [[1, 2], [3, 4]] times x = [10, 100], into y.
/// let (block, x) = ([1.0, 2.0, 3.0, 4.0], [10.0, 100.0]);
/// let values = [&block[..], &x[..]];
/// let mut y = [0.0; 2];
/// let output = DenseCells::new(&mut y, 0);
/// let mut k = Eager::new(Operands { output, ..Operands::values(&values) });
/// let (rows, x) = (k.value_run(0, 0), k.value_run(1, 0));
/// let (scale, two, zero, one) = (k.float(1.0), k.int(2), k.int(0), k.int(1));
/// rows_of_dots(&mut k, (Length::Fixed(2), Length::Fixed(2)), scale, &[(rows, two)], &[x], (zero, one));
/// assert_eq!(y, [210.0, 430.0]);
/// ```
///
/// [`Op::DenseRowsDot`]: crate::bytecode::Op::DenseRowsDot
/// [`Op::BlockRowsDot`]: crate::bytecode::Op::BlockRowsDot
pub fn rows_of_dots<K: KernelBuilder>(
    k: &mut K,
    (rows, len): (Length<K::Int>, Length<K::Int>),
    scale: K::Float,
    runs: &[(K::Run, K::Int)],
    shared: &[K::Run],
    (out_start, out_step): (K::Int, K::Int),
) {
    let row_runs = |k: &mut K, r: K::Int| {
        let mut moved: SmallVec<[K::Run; 4]> = SmallVec::new();
        for &(run, step) in runs {
            let by = k.mul(r, step);
            moved.push(k.run_offset(run, by));
        }
        moved
    };
    let add_row = |k: &mut K, r: K::Int, total: K::Float| {
        let shift = k.mul(r, out_step);
        let at = k.add(out_start, shift);
        k.add_to_output(at, total);
    };
    match (rows, len) {
        (Length::Fixed(rows), Length::Fixed(n)) if rows * n <= MOST_UNROLLED_BLOCK => {
            // Shared run `s`'s value `c` at `s * n + c`.
            let mut preloaded: SmallVec<[K::Float; 16]> = SmallVec::new();
            for &run in shared {
                for c in 0..n {
                    preloaded.push(k.run_at(run, Length::Fixed(c)));
                }
            }
            for r in 0..rows {
                let r = k.int(r.into());
                let moved = row_runs(k, r);
                let zero = k.float(0.0);
                let sum = (0..n).fold(zero, |sum, c| {
                    let loaded = (0..shared.len()).map(|s| preloaded[s * n as usize + c as usize]);
                    let prod = product(k, &moved, Length::Fixed(c), loaded);
                    k.float_op(FloatOp::Add, sum, prod)
                });
                let total = k.float_op(FloatOp::Mul, scale, sum);
                add_row(k, r, total);
            }
        }
        (rows, len) => {
            let (first, rows) = (k.int(0), rows.value(k));
            k.for_range(first, rows, |k, r| {
                let mut moved = row_runs(k, r);
                moved.extend_from_slice(shared);
                let total = dense_dot(k, scale, &moved, len);
                add_row(k, r, total);
            });
        }
    }
}

/// `Π runs[at] · Π extra`, taken left to right (no factors: the empty
/// product 1).
fn product<K: KernelBuilder>(
    k: &mut K,
    runs: &[K::Run],
    at: Length<K::Int>,
    extra: impl IntoIterator<Item = K::Float>,
) -> K::Float {
    let mut prod = None;
    let mut times = |k: &mut K, x| {
        prod = Some(match prod {
            None => x,
            Some(p) => k.float_op(FloatOp::Mul, p, x),
        })
    };
    for &run in runs {
        let x = k.run_at(run, at);
        times(k, x);
    }
    for x in extra {
        times(k, x);
    }
    prod.unwrap_or_else(|| k.float(1.0))
}
