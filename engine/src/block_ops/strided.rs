//! Strided row updates, written once: a DIA diagonal or an ELL slot
//! times a vector or a dense matrix's rows, added into the rows of a
//! dense output.

use smallvec::SmallVec;
use tessera_formats::Cmp;

use super::{add_products, KernelBuilder, Length};
use crate::bytecode::FloatOp;

/// A factor of [`strided_rows`] at row `r`, as a builder reads it.
pub enum StridedRead<K: KernelBuilder> {
    /// `run[r * step]`.
    Run { run: K::Run, step: K::Int },
    /// `run[coords[start + r * step] * coord_step]`: a value gathered at a
    /// coordinate stored beside the row (`coord_step` 1 when `None`).
    Gather {
        run: K::Run,
        coords: K::Coords,
        start: K::Int,
        step: K::Int,
        coord_step: Option<K::Int>,
    },
}

impl<K: KernelBuilder> Clone for StridedRead<K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K: KernelBuilder> Copy for StridedRead<K> {}

/// The columns of [`strided_rows`] whose rows hold several products:
/// `count` of them, the output's step from one column to the next, and
/// each factor's (`None`: one value per row, the same for every column).
pub struct Columns<'a, K: KernelBuilder> {
    pub count: K::Int,
    pub out_step: K::Int,
    pub steps: &'a [Option<K::Int>],
}

/// For each row `r` in `first..end`: `out[r * out_step] += scale * Π
/// factors(r)`, the product taken left to right from `scale`. With
/// `columns`, for each column `c` too, every position further on by `c`
/// times its step: the factors that do not move along the columns are
/// multiplied once per row, then each column's moving ones.
///
/// ```
/// use tessera_engine::block_ops::{strided_rows, KernelBuilder, StridedRead};
/// use tessera_engine::interp::{Eager, Operands};
/// use tessera_engine::runtime::output::OutputState;
/// use tessera_formats::Format;
///
/// // A diagonal above the main one times x, into y: y[r] += d[r] * x[r + 1].
/// let (diagonal, x) = ([1.0, 2.0], [1.0, 10.0, 100.0]);
/// let values = [&diagonal[..], &x[..]];
/// let mut y = OutputState::Dense { shape: vec![3], format: Format::dense(1), values: vec![0.0; 3] };
/// let mut k = Eager::new(Operands::on_output(&[], &values, &mut y));
/// let factors = [
///     StridedRead::Run { run: k.value_run(0, 0), step: 1 },
///     StridedRead::Run { run: k.value_run(1, 1), step: 1 },
/// ];
/// let out = k.output_target(0);
/// strided_rows(&mut k, (0, 2), 1.0, &factors, (out, 1), None);
/// drop(k);
/// assert!(matches!(y, OutputState::Dense { values, .. } if values == [10.0, 200.0, 0.0]));
/// ```
///
/// The same diagonal times the rows of a 3 × 2 matrix X stored by
/// columns (so that a row's values are 3 apart), into Y's rows: `Y[r][c]
/// += d[r] * X[r + 1][c]`.
///
/// ```
/// use tessera_engine::block_ops::{strided_rows, Columns, KernelBuilder, StridedRead};
/// use tessera_engine::interp::{Eager, Operands};
/// use tessera_engine::runtime::output::OutputState;
/// use tessera_formats::Format;
///
/// let (diagonal, x) = ([1.0, 2.0], [1.0, 10.0, 100.0, 2.0, 20.0, 200.0]);
/// let values = [&diagonal[..], &x[..]];
/// let mut y = OutputState::Dense { shape: vec![3, 2], format: Format::dense(2), values: vec![0.0; 6] };
/// let mut k = Eager::new(Operands::on_output(&[], &values, &mut y));
/// let factors = [
///     StridedRead::Run { run: k.value_run(0, 0), step: 1 },
///     StridedRead::Run { run: k.value_run(1, 1), step: 1 },
/// ];
/// let out = k.output_target(0);
/// let columns = Columns { count: 2, out_step: 1, steps: &[None, Some(3)] };
/// strided_rows(&mut k, (0, 2), 1.0, &factors, (out, 2), Some(columns));
/// drop(k);
/// assert!(matches!(y, OutputState::Dense { values, .. } if values == [10.0, 20.0, 200.0, 400.0, 0.0, 0.0]));
/// ```
#[inline(always)]
pub fn strided_rows<K: KernelBuilder>(
    k: &mut K,
    (first, end): (K::Int, K::Int),
    scale: K::Float,
    factors: &[StridedRead<K>],
    (out, out_step): (K::Target, K::Int),
    columns: Option<Columns<'_, K>>,
) {
    let Some(columns) = columns else {
        k.for_range(first, end, |k, r| {
            let product = factors
                .iter()
                .fold(scale, |product, &factor| times(k, product, factor, r, None));
            let at = k.mul(r, out_step);
            k.add_at(out, Length::In(at), product);
        });
        return;
    };
    // The product of the factors that do not move along the columns.
    let row_scale = |k: &mut K, r: K::Int| {
        factors
            .iter()
            .zip(columns.steps)
            .filter(|(_, step)| step.is_none())
            .fold(scale, |row, (&factor, _)| times(k, row, factor, r, None))
    };
    // Rows whose moving factors' columns are side by side (a dense
    // matrix's rows) as the output's are take the vector loop of a dense
    // row update: the same sums, lane by lane. Decided once per op.
    let unit = side_by_side(k, &columns);
    k.when(unit, |k| {
        k.for_range(first, end, |k, r| {
            let row = row_scale(k, r);
            let out_row = k.mul(r, out_step);
            let target = k.target_offset(out, out_row);
            let mut runs: SmallVec<[K::Run; 3]> = SmallVec::new();
            for (&factor, step) in factors.iter().zip(columns.steps) {
                if step.is_some() {
                    let (run, at) = row_of(k, factor, r);
                    runs.push(k.run_offset(run, at));
                }
            }
            add_products(k, target, columns.count, row, &runs);
        });
    });
    let strided = k.not(unit);
    k.when(strided, |k| {
        k.for_range(first, end, |k, r| {
            let row = row_scale(k, r);
            let out_row = k.mul(r, out_step);
            let zero = k.int(0);
            k.for_range(zero, columns.count, |k, c| {
                let mut product = row;
                for (&factor, &step) in factors.iter().zip(columns.steps) {
                    if let Some(step) = step {
                        let along = k.mul(c, step);
                        product = times(k, product, factor, r, Some(along));
                    }
                }
                let along = k.mul(c, columns.out_step);
                let at = k.add(out_row, along);
                k.add_at(out, Length::In(at), product);
            });
        });
    });
}

/// Whether the output's and every moving factor's columns sit side by
/// side.
fn side_by_side<K: KernelBuilder>(k: &mut K, columns: &Columns<'_, K>) -> K::Bool {
    let one = k.int(1);
    let mut unit = k.compare(Cmp::Eq, columns.out_step, one);
    for step in columns.steps.iter().flatten() {
        let side = k.compare(Cmp::Eq, *step, one);
        unit = k.and(unit, side);
    }
    unit
}

/// The run `factor` reads row `r` from, and where in it: row `r` of a
/// run, or the row a gather's stored coordinate picks.
#[inline(always)]
fn row_of<K: KernelBuilder>(k: &mut K, factor: StridedRead<K>, r: K::Int) -> (K::Run, K::Int) {
    match factor {
        StridedRead::Run { run, step } => (run, k.mul(r, step)),
        StridedRead::Gather {
            run,
            coords,
            start,
            step,
            coord_step,
        } => {
            let at = k.mul(r, step);
            let at = k.add(start, at);
            let c = k.coordinate(coords, at);
            let c = match coord_step {
                Some(s) => k.mul(c, s),
                None => c,
            };
            (run, c)
        }
    }
}

/// `product * factor(r)`, read `along` positions further on.
#[inline(always)]
fn times<K: KernelBuilder>(
    k: &mut K,
    product: K::Float,
    factor: StridedRead<K>,
    r: K::Int,
    along: Option<K::Int>,
) -> K::Float {
    let (run, at) = row_of(k, factor, r);
    let at = match along {
        Some(along) => k.add(at, along),
        None => at,
    };
    let x = k.run_at(run, Length::In(at));
    k.float_op(FloatOp::Mul, product, x)
}
