//! Strided updates ([`Op::StridedAxpy`]) with their registers read, run at
//! once or deferred and run together, tile by tile of the output.
//!
//! A DIA matrix times x is one update per diagonal, each adding a product
//! to every row of y: run one after another, each pass reads and writes
//! all of y. Deferred to the end of the loop over diagonals, they run a
//! tile of y at a time, every diagonal's products added to the tile while
//! it stays in cache. Each component still gets the updates' products in
//! the updates' order, so the sums are the ones running them at once makes.
//!
//! [`Op::StridedAxpy`]: crate::bytecode::Op::StridedAxpy

use smallvec::SmallVec;
use tessera_formats::IndexArray;

use super::output::{DenseWindow, OutputState};
use super::parallel::map_in_order;
use crate::block_ops::{strided_rows, Columns, KernelBuilder, StridedRead};
use crate::interp::{Eager, Operands};

/// Output positions a tile of deferred updates covers when the hardware
/// prefetcher can follow every update's streams at once: two kilobytes of
/// y, which stay in the first-level cache while every update adds to
/// them, all the updates' runs advancing together. On a 1M-row stencil
/// (five diagonals, one thread) such tiles took 0.7x the time of running
/// the updates one after another.
const SHORT_TILE: usize = 256;
/// Output positions a tile covers when the updates read more streams than
/// the prefetcher follows: long runs of one update at a time, half a
/// megabyte of y that stays in a core's cache. ELL's slots, each a run of
/// values and one of columns, took 1.6x the time in short tiles; tiles of
/// 512 to 4,096 were slower than either for both.
const LONG_TILE: usize = 65536;
/// Memory streams (runs of values or coordinates, y) that short tiles keep
/// going together: a core's prefetcher follows about a dozen.
const STREAMS_FOLLOWED: usize = 12;
/// Output positions a thread runs in a row: the unit of parallel work,
/// long enough that taking one costs nothing beside running it.
const SPAN: usize = 16384;
/// Updates deferred before they run anyway: deferring more would hold a
/// list as long as an outer loop, for no more reuse of a tile.
const MOST_DEFERRED: usize = 64;

/// A factor of a strided update at row `r`.
#[derive(Debug, Clone, Copy)]
pub enum StridedFactor<'a> {
    /// `values[start + r * step]`.
    Run {
        values: &'a [f64],
        start: usize,
        step: usize,
    },
    /// `values[base + coords[start + r * step] * coord_step]`.
    Gather {
        values: &'a [f64],
        base: usize,
        coords: &'a IndexArray,
        start: usize,
        step: usize,
        coord_step: usize,
    },
}

impl StridedFactor<'_> {
    /// The memory streams the factor reads along its rows.
    fn streams(&self) -> usize {
        match self {
            StridedFactor::Run { .. } => 1,
            StridedFactor::Gather { .. } => 2,
        }
    }

    /// Whether rows follow one another in memory (or there is one row).
    fn unit(&self, rows: usize) -> bool {
        match *self {
            StridedFactor::Run { step, .. } | StridedFactor::Gather { step, .. } => step == 1 || rows <= 1,
        }
    }
}

/// For each row `r < rows`: `out[out_start + r * out_step] += scale * Π
/// factors(r)`, the product taken left to right from `scale`; with
/// `columns`, a row of such products ([`strided_rows`]).
#[derive(Debug, Clone)]
pub struct StridedUpdate<'a> {
    pub rows: usize,
    pub scale: f64,
    pub out_start: usize,
    pub out_step: usize,
    pub factors: SmallVec<[StridedFactor<'a>; 3]>,
    /// Deferred updates with columns run in tiles of whole rows (or at
    /// once, when their rows do not line up).
    pub columns: Option<UpdateColumns>,
}

/// The columns of a [`StridedUpdate`] whose rows hold several products:
/// `count` of them, and the steps from one column to the next of the
/// output and of each factor (`None`: one value per row).
#[derive(Debug, Clone)]
pub struct UpdateColumns {
    pub count: usize,
    pub out_step: usize,
    pub steps: SmallVec<[Option<usize>; 3]>,
}

impl StridedUpdate<'_> {
    /// Runs the update's rows `first..end` into `out`: the shared op
    /// ([`strided_rows`]), or for the two shapes that dominate DIA and ELL
    /// products, loops over slices with the same arithmetic, which the
    /// compiler vectorizes or keeps free of index checks.
    pub fn run_rows(&self, out: &mut OutputState, first: usize, end: usize) {
        let end = end.min(self.rows);
        if first >= end || self.run_row_slices(out, first, end) || self.run_slices(out, first, end) {
            return;
        }
        // Rows from `first` on, counted from 0: a tile's window of the
        // output may begin past the update's row 0.
        let from = |start: usize, step: usize| start + first * step;
        let reads: SmallVec<[StridedRead<Eager<'_, '_>>; 3]> = self
            .factors
            .iter()
            .map(|f| match *f {
                StridedFactor::Run { values, start, step } => StridedRead::Run {
                    run: (values, from(start, step)),
                    step: step as i64,
                },
                StridedFactor::Gather {
                    values,
                    base,
                    coords,
                    start,
                    step,
                    coord_step,
                } => StridedRead::Gather {
                    run: (values, base),
                    coords,
                    start: from(start, step) as i64,
                    step: step as i64,
                    coord_step: (coord_step != 1).then_some(coord_step as i64),
                },
            })
            .collect();
        let steps: SmallVec<[Option<i64>; 3]> = self
            .columns
            .iter()
            .flat_map(|c| &c.steps)
            .map(|step| step.map(|s| s as i64))
            .collect();
        let columns = self.columns.as_ref().map(|c| Columns {
            count: c.count as i64,
            out_step: c.out_step as i64,
            steps: &steps,
        });
        let mut k = Eager::new(Operands::on_output(&[], &[], out));
        let target = k.output_target(from(self.out_start, self.out_step) as i64);
        strided_rows(
            &mut k,
            (0, (end - first) as i64),
            self.scale,
            &reads,
            (target, self.out_step as i64),
            columns,
        );
    }

    /// [`StridedUpdate::run_rows`] for a diagonal or a slot times a dense
    /// matrix's rows (a row operand's value per row, times a row of values
    /// along the columns, read from a run or gathered at the row's stored
    /// column, into a row of the output): a slice loop per row, with the
    /// shared op's arithmetic.
    fn run_row_slices(&self, out: &mut OutputState, first: usize, end: usize) -> bool {
        let Some(columns) = &self.columns else {
            return false;
        };
        let n = columns.count;
        let (
            [StridedFactor::Run {
                values: a,
                start: sa,
                step: step_a,
            }, rows_of],
            [None, Some(1)],
            1,
        ) = (self.factors.as_slice(), columns.steps.as_slice(), columns.out_step)
        else {
            return false;
        };
        if let StridedFactor::Gather {
            coords: IndexArray::I64(_),
            ..
        } = rows_of
        {
            return false;
        }
        if n == 0 {
            return true;
        }
        let span = (end - first - 1) * self.out_step + n;
        let dst = out.dense_range_mut(self.out_start + first * self.out_step, span);
        let shape = (self.out_step, n, self.scale);
        let scaled = (*a, *sa, *step_a);
        match *rows_of {
            StridedFactor::Run { values, start, step } => {
                add_scaled_rows(dst, shape, scaled, (values, |r| start + r * step), first..end)
            }
            StridedFactor::Gather {
                values,
                base,
                coords,
                start,
                step,
                coord_step,
            } => {
                let gathered = |c: u64| base + c as usize * coord_step;
                match coords {
                    IndexArray::U32(c) => add_scaled_rows(
                        dst,
                        shape,
                        scaled,
                        (values, |r| gathered(c[start + r * step].into())),
                        first..end,
                    ),
                    IndexArray::U64(c) => add_scaled_rows(
                        dst,
                        shape,
                        scaled,
                        (values, |r| gathered(c[start + r * step])),
                        first..end,
                    ),
                    IndexArray::I64(_) => unreachable!("refused above"),
                }
            }
        }
        true
    }

    /// [`StridedUpdate::run_rows`] for a diagonal times a vector, rows side
    /// by side, or a slot's values times values gathered at its columns:
    /// false, doing nothing, for other updates.
    fn run_slices(&self, out: &mut OutputState, first: usize, end: usize) -> bool {
        if self.columns.is_some() {
            return false;
        }
        let rows = end - first;
        let (out_step, scale) = (self.out_step, self.scale);
        let contiguous = out_step == 1 || rows <= 1;
        match self.factors.as_slice() {
            [StridedFactor::Run {
                values: a, start: sa, ..
            }, StridedFactor::Run {
                values: b, start: sb, ..
            }] if contiguous && self.factors.iter().all(|f| f.unit(self.rows)) => {
                let dst = out.dense_range_mut(self.out_start + first * out_step, (rows - 1) * out_step + 1);
                let (a, b) = (&a[sa + first..sa + end], &b[sb + first..sb + end]);
                if scale == 1.0 {
                    // `1 * x` is `x`, bit for bit: one multiply fewer.
                    for ((d, &x), &y) in dst.iter_mut().zip(a).zip(b) {
                        *d += x * y;
                    }
                } else {
                    for ((d, &x), &y) in dst.iter_mut().zip(a).zip(b) {
                        *d += scale * x * y;
                    }
                }
                true
            }
            &[StridedFactor::Run {
                values: a,
                start: sa,
                step: step_a,
            }, StridedFactor::Gather {
                values,
                base,
                coords,
                start,
                step,
                coord_step: 1,
            }] => {
                fn gather<C: Copy + Into<u64>>(
                    dst: &mut [f64],
                    out_step: usize,
                    scale: f64,
                    (a, sa, step_a): (&[f64], usize, usize),
                    (values, base, coords, start, step): (&[f64], usize, &[C], usize, usize),
                    rows: std::ops::Range<usize>,
                ) {
                    let first = rows.start;
                    if (out_step, step_a, step) == (1, 1, 1) {
                        // Rows side by side: slices, no index arithmetic.
                        let n = rows.len();
                        let (a, coords) = (
                            &a[sa + first..sa + first + n],
                            &coords[start + first..start + first + n],
                        );
                        for ((d, &v), &c) in dst[..n].iter_mut().zip(a).zip(coords) {
                            let c: u64 = c.into();
                            *d += scale * v * values[base + c as usize];
                        }
                        return;
                    }
                    for r in rows {
                        let c: u64 = coords[start + r * step].into();
                        dst[(r - first) * out_step] += scale * a[sa + r * step_a] * values[base + c as usize];
                    }
                }
                let a = (a, sa, step_a);
                let dst = out.dense_range_mut(self.out_start + first * out_step, (rows - 1) * out_step + 1);
                match coords {
                    IndexArray::U32(c) => gather(dst, out_step, scale, a, (values, base, c, start, step), first..end),
                    IndexArray::U64(c) => gather(dst, out_step, scale, a, (values, base, c, start, step), first..end),
                    IndexArray::I64(_) => return false,
                }
                true
            }
            _ => false,
        }
    }

    /// The rows whose (first) output positions lie in `lo..hi`.
    fn rows_within(&self, lo: usize, hi: usize) -> (usize, usize) {
        let (start, step) = (self.out_start, self.out_step);
        if step == 1 {
            // The common case, run once per tile: no division.
            let end = hi.saturating_sub(start).min(self.rows);
            return (lo.saturating_sub(start).min(end), end);
        }
        if step == 0 {
            return if (lo..hi).contains(&start) {
                (0, self.rows)
            } else {
                (0, 0)
            };
        }
        let first = lo.saturating_sub(start).div_ceil(step);
        let end = hi.saturating_sub(start).div_ceil(step);
        (first, end.min(self.rows))
    }

    /// The output positions the update writes: `lo..hi`.
    fn span(&self) -> (usize, usize) {
        let row = self
            .columns
            .as_ref()
            .map_or(1, |c| (c.count.max(1) - 1) * c.out_step + 1);
        match self.rows {
            0 => (self.out_start, self.out_start),
            n => (self.out_start, self.out_start + (n - 1) * self.out_step + row),
        }
    }

    /// The output's row length when the update's rows of products lie
    /// whole in the aligned stretches of that length (`Some(1)` for an
    /// update of one product per row).
    fn row_width(&self) -> Option<usize> {
        let Some(columns) = &self.columns else {
            return Some(1);
        };
        let width = self.out_step.max(1);
        (columns.out_step == 1 && columns.count <= width && self.out_start % width == 0).then_some(width)
    }
}

/// For each row `r` in `rows`: the output's `n` values from `(r - first)
/// * out_step` on get `(scale * a[sa + r * step_a]) * values[row_start(r)
/// + c]` for each column `c`, as [`strided_rows`] computes them.
#[inline(always)]
fn add_scaled_rows(
    dst: &mut [f64],
    (out_step, n, scale): (usize, usize, f64),
    (a, sa, step_a): (&[f64], usize, usize),
    (values, row_start): (&[f64], impl Fn(usize) -> usize),
    rows: std::ops::Range<usize>,
) {
    let first = rows.start;
    for r in rows {
        let x = scale * a[sa + r * step_a];
        let row = &values[row_start(r)..][..n];
        let at = (r - first) * out_step;
        for (d, &y) in dst[at..at + n].iter_mut().zip(row) {
            *d += x * y;
        }
    }
}

/// Strided updates deferred until [`StridedBatch::flush`] (or until 64
/// wait), then run tile by tile of the output.
///
/// ```
/// use tessera_engine::runtime::output::OutputState;
/// use tessera_engine::runtime::strided::{StridedBatch, StridedFactor, StridedUpdate};
/// use tessera_formats::Format;
///
/// // y = A x for a DIA matrix A: a diagonal's update adds its values
/// // times x, from `x_start` on, into y from `out_start` on.
/// fn diagonal<'a>(values: &'a [f64], x: &'a [f64], x_start: usize, out_start: usize) -> StridedUpdate<'a> {
///     let factors = [
///         StridedFactor::Run { values, start: 0, step: 1 },
///         StridedFactor::Run { values: x, start: x_start, step: 1 },
///     ];
///     let factors = factors.into_iter().collect();
///     StridedUpdate { rows: values.len(), scale: 1.0, out_start, out_step: 1, factors, columns: None }
/// }
/// let (d0, d1, x) = ([1.0, 2.0, 3.0], [4.0, 5.0], [1.0, 10.0, 100.0]);
/// let mut y = OutputState::Dense { shape: vec![3], format: Format::dense(1), values: vec![0.0; 3] };
/// let mut batch = StridedBatch::new(2);
/// batch.push(diagonal(&d0, &x, 0, 0), &mut y); // the main diagonal
/// batch.push(diagonal(&d1, &x, 1, 0), &mut y); // the one above it
/// batch.flush(&mut y);
/// let OutputState::Dense { values, .. } = y else { unreachable!() };
/// assert_eq!(values, [1.0 + 40.0, 20.0 + 500.0, 300.0]);
/// ```
#[derive(Debug)]
pub struct StridedBatch<'a> {
    updates: Vec<StridedUpdate<'a>>,
    /// Threads the tiles may run on.
    threads: usize,
}

impl<'a> StridedBatch<'a> {
    /// An empty batch whose tiles run on up to `threads` threads.
    pub fn new(threads: usize) -> Self {
        StridedBatch {
            updates: Vec::new(),
            threads: threads.max(1),
        }
    }

    /// Defers `update`.
    pub fn push(&mut self, update: StridedUpdate<'a>, out: &mut OutputState) {
        if update.rows > 0 {
            self.updates.push(update);
        }
        if self.updates.len() >= MOST_DEFERRED {
            self.flush(out);
        }
    }

    /// Runs the deferred updates: for each tile of output positions, each
    /// update's rows inside it, in the updates' order. Spans of tiles are
    /// disjoint parts of the output, run on the batch's threads when the
    /// output is whole: the same bits for any number, since every position
    /// gets its updates in the same order however the tiles fall.
    pub fn flush(&mut self, out: &mut OutputState) {
        let threads = self.threads;
        // Tiles and spans hold whole rows of products: they are cut at
        // multiples of the rows' length, the same for every update.
        let mut widths = self.updates.iter().map(StridedUpdate::row_width);
        let first = widths.next().flatten();
        let Some(width) = first.filter(|&w| widths.all(|v| v == Some(w))) else {
            // Rows that would straddle a tile: every update at once, in order.
            for update in &self.updates {
                update.run_rows(out, 0, update.rows);
            }
            self.updates.clear();
            return;
        };
        let (lo, hi) = self
            .updates
            .iter()
            .map(StridedUpdate::span)
            .fold((usize::MAX, 0), |(lo, hi), (a, b)| (lo.min(a), hi.max(b)));
        let streams = 1 + self
            .updates
            .iter()
            .flat_map(|update| &update.factors)
            .map(StridedFactor::streams)
            .sum::<usize>();
        let tile_rows = if streams <= STREAMS_FOLLOWED {
            SHORT_TILE
        } else {
            LONG_TILE
        }
        .div_ceil(width)
            * width;
        let lo = lo - lo % width;
        let run_span = |out: &mut OutputState, (span, end): (usize, usize)| {
            for tile in (span..end).step_by(tile_rows) {
                let tile_end = tile.saturating_add(tile_rows).min(end);
                for update in &self.updates {
                    let (first, last) = update.rows_within(tile, tile_end);
                    update.run_rows(out, first, last);
                }
            }
        };
        let span = SPAN.div_ceil(tile_rows).max(1) * tile_rows;
        let spans: Vec<(usize, usize)> = (lo..hi)
            .step_by(span)
            .map(|start| (start, start.saturating_add(span).min(hi)))
            .collect();
        match out {
            OutputState::Dense { values, .. } if threads > 1 && spans.len() > 1 => {
                let cuts: Vec<usize> = spans[1..].iter().map(|&(start, _)| start).collect();
                let windows = DenseWindow::split(&mut values[..hi], &cuts);
                // (The first window also holds the positions before the
                // first span, which no update writes.)
                let items: Vec<_> = spans.iter().copied().zip(windows).collect();
                map_in_order(threads, items, (None, None), |(span, window)| {
                    run_span(&mut OutputState::Window(window), span)
                })
                .expect("a run that cannot be cancelled runs every span");
            }
            _ => spans.into_iter().for_each(|span| run_span(out, span)),
        }
        self.updates.clear();
    }
}

#[cfg(test)]
mod tests {
    use tessera_formats::Format;

    use super::*;
    use crate::testing::Rng;

    fn dense(n: usize) -> OutputState {
        OutputState::Dense {
            shape: vec![n],
            format: Format::dense(1),
            values: vec![0.0; n],
        }
    }

    fn values(out: OutputState) -> Vec<f64> {
        match out {
            OutputState::Dense { values, .. } => values,
            _ => unreachable!("made dense"),
        }
    }

    /// Deferred updates, flushed tile by tile, leave the bits that running
    /// each at once leaves: overlapping runs (diagonals), steps of 0, 1 and
    /// 3, gathers, runs across tile edges, empty updates, and more updates
    /// than are ever deferred at once.
    #[test]
    fn deferred_updates_give_the_bits_of_updates_run_at_once() {
        let mut rng = Rng::new(5);
        let uniform = |rng: &mut Rng| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
        let n = 3 * LONG_TILE + 17;
        let data: Vec<f64> = (0..2 * n).map(|_| uniform(&mut rng)).collect();
        let coords = IndexArray::U32((0..n as u32).map(|k| (k * 7) % n as u32).collect());
        let mut updates = Vec::new();
        for k in 0..MOST_DEFERRED + 9 {
            let out_step = [1, 1, 3, 0][k % 4];
            let most = (n - 1).checked_div(out_step).unwrap_or(50);
            let rows = [0, 1, most / 2, most][k % 4].min(most);
            let out_start = rng.below(n - rows.saturating_sub(1) * out_step);
            let start = rng.below(n);
            let mut factors: SmallVec<[StridedFactor<'_>; 3]> = smallvec::smallvec![StridedFactor::Run {
                values: &data,
                start,
                step: 1,
            }];
            if k % 3 == 0 {
                factors.push(StridedFactor::Gather {
                    values: &data,
                    base: 3,
                    coords: &coords,
                    start: 0,
                    step: 1,
                    coord_step: 1,
                });
            } else {
                factors.push(StridedFactor::Run {
                    values: &data,
                    start: rng.below(n),
                    step: 0,
                });
            }
            updates.push(StridedUpdate {
                rows,
                scale: 2.0 * uniform(&mut rng),
                out_start,
                out_step,
                factors,
                columns: None,
            });
        }
        // Rows of products (a diagonal times a matrix's rows of 5 values
        // into rows of 5, or of 3 of them): deferred in tiles of whole
        // rows; and, after an update whose rows do not start at a row of
        // the output, at once.
        let width = 5;
        let rows_of = |k: usize, rng: &mut Rng| {
            let count = [width, 3, 0][k % 3];
            let rows = rng.below(n / width - 1);
            let out_row = rng.below(n / width - rows);
            let factors: SmallVec<[StridedFactor<'_>; 3]> = smallvec::smallvec![
                StridedFactor::Run {
                    values: &data,
                    start: rng.below(n),
                    step: 1,
                },
                StridedFactor::Run {
                    values: &data,
                    start: rng.below(n),
                    step: width,
                },
            ];
            StridedUpdate {
                rows,
                scale: uniform(rng),
                out_start: out_row * width,
                out_step: width,
                factors,
                columns: Some(UpdateColumns {
                    count,
                    out_step: 1,
                    steps: smallvec::smallvec![None, Some(1)],
                }),
            }
        };
        let aligned: Vec<StridedUpdate<'_>> = (0..7).map(|k| rows_of(k, &mut rng)).collect();
        let mut unaligned = aligned.clone();
        unaligned[3].out_start += 1;
        for updates in [&aligned, &unaligned] {
            assert_deferred_bits(updates, n, "rows of products");
        }
        // A few updates run in short tiles, many (more streams than the
        // prefetcher follows) in long ones.
        for count in [4, updates.len()] {
            assert_deferred_bits(&updates[..count], n, &format!("{count} updates"));
        }
    }

    /// `updates` deferred and flushed on 1, 2 and 3 threads leave the bits
    /// of running each at once.
    fn assert_deferred_bits(updates: &[StridedUpdate<'_>], n: usize, what: &str) {
        let mut at_once = dense(n);
        for u in updates {
            u.run_rows(&mut at_once, 0, u.rows);
        }
        let want = values(at_once);
        assert!(want.iter().any(|&v| v != 0.0), "{what}: the updates write something");
        for threads in [1, 2, 3] {
            let mut deferred = dense(n);
            let mut batch = StridedBatch::new(threads);
            for u in updates {
                batch.push(u.clone(), &mut deferred);
            }
            batch.flush(&mut deferred);
            let got = values(deferred);
            assert!(
                want.iter().zip(&got).all(|(a, b)| a.to_bits() == b.to_bits()),
                "{what} deferred on {threads} threads changed bits"
            );
        }
    }
}
