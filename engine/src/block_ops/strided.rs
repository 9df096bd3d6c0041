//! Strided row updates, written once: a DIA diagonal or an ELL slot
//! times a vector, added into the rows of a dense output.

use super::{KernelBuilder, Length};
use crate::bytecode::FloatOp;

/// A factor of [`strided_rows`] at row `r`, as a builder reads it.
pub enum StridedRead<K: KernelBuilder> {
    /// `run[r * step]`.
    Run { run: K::Run, step: K::Int },
    /// `run[coords[start + r * step]]`: a value gathered at a coordinate
    /// stored beside the row.
    Gather {
        run: K::Run,
        coords: K::Coords,
        start: K::Int,
        step: K::Int,
    },
}

impl<K: KernelBuilder> Clone for StridedRead<K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K: KernelBuilder> Copy for StridedRead<K> {}

/// For each row `r` in `first..end`: `out[r * out_step] += scale * Π
/// factors(r)`, the product taken left to right from `scale`.
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
/// strided_rows(&mut k, (0, 2), 1.0, &factors, (out, 1));
/// drop(k);
/// assert!(matches!(y, OutputState::Dense { values, .. } if values == [10.0, 200.0, 0.0]));
/// ```
#[inline(always)]
pub fn strided_rows<K: KernelBuilder>(
    k: &mut K,
    (first, end): (K::Int, K::Int),
    scale: K::Float,
    factors: &[StridedRead<K>],
    (out, out_step): (K::Target, K::Int),
) {
    k.for_range(first, end, |k, r| {
        let mut product = scale;
        for &factor in factors {
            let x = match factor {
                StridedRead::Run { run, step } => {
                    let at = k.mul(r, step);
                    k.run_at(run, Length::In(at))
                }
                StridedRead::Gather {
                    run,
                    coords,
                    start,
                    step,
                } => {
                    let at = k.mul(r, step);
                    let at = k.add(start, at);
                    let c = k.coordinate(coords, at);
                    k.run_at(run, Length::In(c))
                }
            };
            product = k.float_op(FloatOp::Mul, product, x);
        }
        let at = k.mul(r, out_step);
        k.add_at(out, Length::In(at), product);
    });
}
