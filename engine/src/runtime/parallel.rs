//! Parallel runs: a program's outermost loop split into chunks of about
//! equal work, run on a rayon pool, their outputs put together in chunk
//! order.
//!
//! **The contract: the same bits for any number of threads.** Chunk
//! boundaries depend only on the data (the stored entries below each
//! coordinate of the outer loop, cut every [`CHUNK_WORK`] units, or finer
//! for a sparse output, by the total) and never
//! on the number of threads; partial results are combined in chunk order,
//! never in the order chunks finish. So `threads = 1`, `2` or `16` give
//! bit-for-bit the same tensor. Outputs whose rows belong to one chunk each
//! (dense rows, sparse parts) are the same whether split or not, so one
//! thread runs them whole; a sum over the outer loop (a partial per chunk)
//! is split the same way on one thread as on many.

use crate::words::Adder;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use hashbrown::HashMap;
use tessera_formats::{Level, LevelFormat, LevelKind, LevelRef, LevelStorage, Tensor};

use super::output::{Assembler, DenseWindow, OutputSizes, OutputState};
use super::progress::Progress;
use super::workspace::Workspace;
use crate::bytecode::{ChunkOutput, Chunking, Program};
use crate::error::{EngineError, Result};
use crate::interp::{self, Bindings};
use crate::runtime::promotion::Tiering;

/// The parts of a kernel's last sparse output assembled in chunks, kept
/// to assemble the next run's parts in: a kernel run again (a benchmark,
/// an iterative method) then fills memory it filled before, instead of
/// faulting fresh pages in and growing arrays in every chunk. Parts above
/// [`SPARE_BYTES`] in all are not kept.
#[derive(Debug, Default)]
pub(crate) struct SpareParts(Mutex<Vec<Tensor<f64>>>);

/// The most memory [`SpareParts`] holds per kernel.
const SPARE_BYTES: usize = 256 << 20;

impl SpareParts {
    /// The parts kept, leaving none: runs at once on other threads
    /// assemble in fresh memory.
    fn take(&self) -> Vec<Tensor<f64>> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Keeps `parts` when they are small enough.
    fn keep(&self, parts: Vec<Tensor<f64>>) {
        let bytes: usize = parts.iter().map(Tensor::bytes).sum();
        if bytes <= SPARE_BYTES {
            *self.0.lock().unwrap_or_else(|p| p.into_inner()) = parts;
        }
    }
}

/// Work units per chunk: a stored entry of the driving operand, or a
/// coordinate of the outer loop, is one unit.
pub const CHUNK_WORK: u64 = 1 << 15;

/// Runs with fewer work units than this use one thread unless told
/// otherwise. Measured on SpMV, the least work per stored entry, with
/// `tessera eval "y(i) = A(i,j) * x(j)" -g A:NxN:0.002 --time 30 --threads
/// 1|2` (median, Cranelift): at 36K entries two threads take 1.26x one
/// thread's time, at 136K 0.82x, at 272K 0.67x.
pub const PARALLEL_FROM: u64 = 1 << 17;

/// A sparse output assembled in parts is cut into at least this many
/// chunks (of at least [`MIN_CHUNK_WORK`] units). Measured on SpGEMM of
/// cage10 (`tessera eval "C(i,j) = A(i,k) * A(k,j)" -f C:csr --threads 2
/// --time 40`, 150K entries, 2.4M products): 5 chunks 6.0–8.7 ms median,
/// 18 chunks 5.2–5.6 ms; a few large chunks leave one thread idle at the
/// end. SpMV, whose rows' work the entries measure, gained nothing from
/// finer chunks on cage10 and bcsstk16 and keeps [`CHUNK_WORK`].
const MIN_CHUNKS: u64 = 32;

/// The least work a chunk of an output cut finer gets: below it, a
/// chunk's own setup (its part of the output) weighs.
const MIN_CHUNK_WORK: u64 = 1 << 10;

/// A sum over the outer loop keeps a partial output per chunk: at most one
/// per this many work units per output value, so the partials cost a
/// fraction of the run.
const WORK_PER_PARTIAL_VALUE: u64 = 4;

/// How many threads a run uses and how it is chunked.
#[derive(Debug, Clone)]
pub struct Parallelism {
    /// Threads, at least 1; `None`: every core when the run has at least
    /// [`PARALLEL_FROM`] units of work, else one; one for a run whose
    /// chunks are [join-bound](crate::bytecode::Chunking::join_bound).
    pub threads: Option<usize>,
    /// Work units per chunk ([`CHUNK_WORK`]); tests make it small to get
    /// many chunks, empty ones and more chunks than rows.
    pub chunk_work: u64,
    /// Checked before each chunk; a cancelled run stops there.
    pub cancel: Option<CancelToken>,
    /// Counts the chunks begun and done.
    pub progress: Option<Progress>,
}

impl Default for Parallelism {
    fn default() -> Self {
        Parallelism {
            threads: None,
            chunk_work: CHUNK_WORK,
            cancel: None,
            progress: None,
        }
    }
}

/// Stops a run between chunks: [`cancel`](Self::cancel) it from any thread
/// (a Ctrl-C handler, a deadline) and the run returns
/// [`EngineError::Cancelled`](crate::EngineError::Cancelled) before its next
/// chunk. A run given a token is split into chunks even on one thread, so
/// it stops within one chunk's work ([`CHUNK_WORK`] stored entries).
///
/// ```
/// use tessera_engine::runtime::CancelToken;
/// use tessera_engine::{Engine, EngineError, EvalOptions, Inputs};
/// use tessera_formats::Tensor;
///
/// let x = Tensor::from_dense(&[3], vec![1.0, 2.0, 3.0]).unwrap();
/// let cancel = CancelToken::new();
/// cancel.cancel();
/// let options = EvalOptions { cancel: Some(cancel.clone()), ..EvalOptions::default() };
/// let run = Engine::new().eval_with("s = x(i) * x(i)", &Inputs::new().with("x", &x), &options);
/// assert!(matches!(run, Err(EngineError::Cancelled)));
/// ```
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<std::sync::atomic::AtomicBool>);

impl CancelToken {
    pub fn new() -> Self {
        CancelToken::default()
    }
    /// Asks the runs holding this token to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
    /// Whether [`cancel`](Self::cancel) was called since the last
    /// [`reset`](Self::reset).
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
    /// Makes the token usable for the next run.
    pub fn reset(&self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

/// One chunk's run: a compiled kernel or the interpreter, on the chunk's
/// bindings and output.
pub(crate) type RunChunk<'r> = dyn Fn(&Bindings<'_>, &mut OutputState) + Sync + 'r;

/// The result of a run split into chunks.
pub(crate) enum Joined {
    /// The chunks wrote into the run's output: finish it.
    InPlace,
    /// The sparse output assembled in parts and joined.
    Tensor(Tensor<f64>),
}

/// Runs `program` on `bind` in chunks of its outer loop when it has one,
/// each chunk by `run`, with `parallelism`.
pub(crate) fn run(
    program: &Program,
    bind: &Bindings<'_>,
    out: &mut OutputState,
    parallelism: Parallelism,
    run: &RunChunk<'_>,
    counts: &Tiering,
    (last_output, spares): (Option<&OutputSizes>, &SpareParts),
) -> Result<Joined> {
    let cancel = parallelism.cancel.as_ref();
    let cancelled = || cancel.is_some_and(CancelToken::is_cancelled);
    if cancelled() {
        return Err(EngineError::Cancelled);
    }
    let progress = parallelism.progress.as_ref();
    let work = total_work(bind);
    let Some(chunking) = &program.chunking else {
        // Loops that run whole; ops that split their own work may use
        // threads.
        let mut whole = bind.clone();
        whole.threads = parallelism
            .threads
            .unwrap_or_else(|| if work >= PARALLEL_FROM { default_threads() } else { 1 })
            .max(1);
        progress.inspect(|p| p.begin(1));
        run(&whole, out);
        progress.inspect(|p| p.advance());
        return Ok(Joined::InPlace);
    };
    let dim = bind.dims[chunking.var as usize];
    let threads = parallelism
        .threads
        .unwrap_or_else(|| {
            // Measured on `C(i,j) = A(i,j) + B(j,i)` into CSR (`--time 30
            // --tier jit --threads 1|2`): two threads take 1.37x one
            // thread's time on 4elt (92K entries), 1.11x on bcsstk16
            // (290K) and 1.0x on a 1M-row Laplacian (5M): a join-bound run
            // gains nothing from a second core at any size.
            if work >= PARALLEL_FROM && !chunking.join_bound {
                default_threads()
            } else {
                1
            }
        })
        .max(1);
    let whole = |out: &mut OutputState| {
        let mut whole = bind.clone();
        whole.chunk = (0, dim);
        progress.inspect(|p| p.begin(1));
        run(&whole, out);
        progress.inspect(|p| p.advance());
        Ok(Joined::InPlace)
    };
    let mut unit = parallelism.chunk_work.max(1);
    if chunking.output == ChunkOutput::DensePartials {
        let values = match out {
            OutputState::Dense { values, .. } => values.len().max(1) as u64,
            _ => unreachable!("partial outputs are dense"),
        };
        let most = (work / (WORK_PER_PARTIAL_VALUE * values)).max(1);
        unit = unit.max(work.div_ceil(most));
    } else if threads == 1 && cancel.is_none() && progress.is_none() {
        return whole(out);
    } else if chunking.output == ChunkOutput::SparseParts {
        // A sparse output's rows come out the same however they are cut:
        // cut them finer, so that threads share the work evenly when a
        // row's work (its products, not its entries) differs from row to
        // row.
        unit = unit.min((work / MIN_CHUNKS).max(MIN_CHUNK_WORK));
    }
    let ranges = chunk_ranges(chunking, bind, dim, unit);
    if ranges.len() <= 1 {
        return whole(out);
    }
    counts.count_split(ranges.len(), threads);
    progress.inspect(|p| p.begin(ranges.len() as u64));
    let chunk_bind = |range: &Range<i64>| {
        let mut b = bind.clone();
        b.chunk = (range.start, range.end);
        b
    };
    match chunking.output {
        ChunkOutput::DenseRows | ChunkOutput::PatternRows { .. } => {
            let values = match out {
                OutputState::Dense { values, .. } => values,
                _ => unreachable!("rows written in place are a dense output or one on a pattern"),
            };
            let rows = output_rows(chunking, bind, dim);
            // Where each chunk's first row starts in the values: rows of
            // equal length, or the first position of the row in the
            // pattern's last level.
            let start = |row: i64| match chunking.output {
                ChunkOutput::PatternRows { operand } => {
                    first_position(bind.formats[operand as usize], bind.levels[operand as usize], row)
                }
                _ => row as usize * (values.len() / rows.max(1) as usize),
            };
            let cuts: Vec<usize> = ranges[1..]
                .iter()
                .map(|r| start(first_row(chunking, bind, r.start, rows)))
                .collect();
            let windows = DenseWindow::split(values, &cuts);
            let items: Vec<_> = ranges.iter().zip(windows).collect();
            map_in_order(threads, items, (cancel, progress), |(range, window)| {
                run(&chunk_bind(range), &mut OutputState::Window(window));
            })?;
            Ok(Joined::InPlace)
        }
        ChunkOutput::DensePartials => {
            let (shape, format, total) = match out {
                OutputState::Dense { shape, format, values } => (shape.clone(), format.clone(), values),
                _ => unreachable!("partial outputs are dense"),
            };
            let partials: Vec<Vec<f64>> =
                map_in_order(threads, ranges.iter().collect(), (cancel, progress), |range| {
                    let mut partial = OutputState::Dense {
                        shape: shape.clone(),
                        format: format.clone(),
                        values: super::output::zeroed_values(total.len()),
                    };
                    run(&chunk_bind(range), &mut partial);
                    match partial {
                        OutputState::Dense { values, .. } => values,
                        _ => unreachable!("made dense above"),
                    }
                })?;
            for partial in partials {
                let adder = Adder::of(program.value_type);
                total.iter_mut().zip(partial).for_each(|(t, p)| adder.add_to(t, p));
            }
            Ok(Joined::InPlace)
        }
        ChunkOutput::SparseParts => {
            let (format, shape, template) = match out {
                OutputState::Append { assembler, workspace } => (
                    assembler.format().clone(),
                    assembler.shape().to_vec(),
                    workspace.as_ref(),
                ),
                _ => unreachable!("sparse parts are appended"),
            };
            // Chunks have about the same work, so about the same share of
            // a result like the last one (a quarter more, for the spread).
            let share = last_output.map(|sizes| sizes.scaled(1.25 / ranges.len() as f64));
            // Workspaces are large and left empty by each chunk: reused.
            let workspaces: Mutex<Vec<Workspace>> = Mutex::new(Vec::new());
            let (part_rows, continues) = match chunking.positions {
                Some(cut) => {
                    let first_mode = format.mode_order().and_then(|o| o.first().copied()).unwrap_or(0);
                    position_rows(chunking, bind, cut, &ranges, shape[first_mode] as i64)
                }
                None => {
                    let total = output_rows(chunking, bind, dim);
                    let rows = ranges
                        .iter()
                        .map(|r| {
                            first_row(chunking, bind, r.start, total) as usize
                                ..first_row(chunking, bind, r.end, total) as usize
                        })
                        .collect();
                    (rows, vec![false; ranges.len() - 1])
                }
            };
            // The last run's parts, one per chunk of this run when their
            // number is the same (their rows are then the same too).
            let mut spare: Vec<Option<Tensor<f64>>> = spares.take().into_iter().map(Some).collect();
            spare.resize_with(ranges.len(), || None);
            let items: Vec<_> = ranges.iter().zip(part_rows).zip(spare).collect();
            let parts: Vec<Result<Tensor<f64>>> =
                map_in_order(threads, items, (cancel, progress), |((range, rows), spare)| {
                    let workspace = template.map(|template| {
                        let reused = workspaces.lock().unwrap_or_else(|p| p.into_inner()).pop();
                        reused.unwrap_or_else(|| template.empty_like())
                    });
                    let mut assembler = Assembler::part(format.clone(), &shape, rows, Adder::of(program.value_type));
                    if let Some(spare) = spare {
                        assembler.reuse(spare);
                    }
                    if let Some(share) = &share {
                        assembler.reserve(share);
                    }
                    let mut part = OutputState::Append { assembler, workspace };
                    run(&chunk_bind(range), &mut part);
                    match part {
                        OutputState::Append { assembler, workspace } => {
                            if let Some(w) = workspace {
                                workspaces.lock().unwrap_or_else(|p| p.into_inner()).push(w);
                            }
                            assembler.finish()
                        }
                        _ => unreachable!("made appended above"),
                    }
                })?;
            let parts = parts.into_iter().collect::<Result<Vec<_>>>()?;
            // The join copies the parts into place in parallel, on this
            // run's threads.
            let joined =
                pool(threads).install(|| tessera_formats::parts::join_sharing(format, &shape, &parts, &continues))?;
            spares.keep(parts);
            Ok(Joined::Tensor(joined))
        }
    }
}

/// The output rows of each chunk of blocks of positions of level `cut`,
/// and whether each chunk's last row continues into the next: a chunk
/// holds the rows from its first position's (the first chunk from row 0)
/// to its last position's, and the empty rows up to the next chunk's
/// first (the last chunk to `rows`).
fn position_rows(
    chunking: &Chunking,
    bind: &Bindings<'_>,
    cut: LevelRef,
    ranges: &[Range<i64>],
    rows: i64,
) -> (Vec<Range<usize>>, Vec<bool>) {
    let parents = LevelRef::new(cut.operand as usize, 0);
    let (first_parent, end_parent) = interp::positions_below(bind, parents, 0).unwrap_or((0, 0));
    let total = chunking.rows.cut_at.map_or(0, |at| bind.dims[at as usize]);
    let block = rows_per_coordinate(chunking, bind).max(1);
    let dense = bind.formats[cut.operand as usize][0].kind == LevelKind::Dense;
    let coordinate = |q: i64| {
        if dense {
            q
        } else {
            interp::first_level_coordinate(bind, parents, q)
        }
    };
    // The first parent whose segment passes `p` as `passes` says.
    let first_parent_where = |p: i64, passes: &dyn Fn((i64, i64), i64) -> bool| {
        let (mut low, mut high) = (first_parent, end_parent);
        while low < high {
            let mid = low + (high - low) / 2;
            let segment = interp::positions_below(bind, cut, mid).unwrap_or((0, 0));
            if passes(segment, p) {
                high = mid;
            } else {
                low = mid + 1;
            }
        }
        low
    };
    // The rows of each chunk's first and last positions: the first level's
    // own positions, or the parents of the cut level's.
    let spans: Vec<(i64, i64)> = ranges
        .iter()
        .map(|r| {
            let (lo, hi) = ((r.start * block).min(total), (r.end * block).min(total));
            let (first, last) = if cut.level == 0 {
                (first_parent + lo, first_parent + hi - 1)
            } else {
                (
                    first_parent_where(lo, &|(_, end), p| end > p),
                    first_parent_where(hi, &|(begin, _), p| begin >= p) - 1,
                )
            };
            if lo >= hi || first > last {
                (i64::MAX, i64::MIN)
            } else {
                (coordinate(first), coordinate(last))
            }
        })
        .collect();
    let n = ranges.len();
    let starts: Vec<i64> = (0..n).map(|k| if k == 0 { 0 } else { spans[k].0.min(rows) }).collect();
    let mut parts = Vec::with_capacity(n);
    let mut continues = Vec::with_capacity(n.saturating_sub(1));
    for k in 0..n {
        let end = if k + 1 == n {
            rows
        } else {
            let end = (spans[k].1.saturating_add(1)).max(starts[k + 1]).max(starts[k]);
            continues.push(end > starts[k + 1]);
            end
        };
        parts.push(starts[k] as usize..end as usize);
    }
    (parts, continues)
}

/// The rows of the output's first mode, when the chunked variable has
/// `dim` coordinates.
fn output_rows(chunking: &Chunking, bind: &Bindings<'_>, dim: i64) -> i64 {
    match chunking.rows.cut_at {
        Some(var) => bind.dims[var as usize],
        None => dim * rows_per_coordinate(chunking, bind),
    }
}

/// The output rows below one coordinate of the chunked variable.
fn rows_per_coordinate(chunking: &Chunking, bind: &Bindings<'_>) -> i64 {
    match chunking.rows.block_at {
        Some(var) => bind.dims[var as usize],
        None => i64::from(chunking.rows.block),
    }
}

/// The first output row of the chunked variable's coordinate `c`.
fn first_row(chunking: &Chunking, bind: &Bindings<'_>, c: i64, rows: i64) -> i64 {
    (c * rows_per_coordinate(chunking, bind)).min(rows)
}

/// The first position of row `row` in the last level of an operand whose
/// pattern an output takes: its levels are dense, or have position and
/// coordinate views with unique, ordered coordinates. Below a compressed
/// first level (DCSR's), the position is the first stored row's from `row`
/// on.
fn first_position(formats: &[LevelFormat], levels: &[LevelStorage], row: i64) -> usize {
    let top = match (
        formats[0].position_view(&levels[0]),
        formats[0].coordinate_view(&levels[0]),
    ) {
        (Some(segments), Some(coordinates)) => {
            coordinates.first_at_least(segments.get_usize(0), segments.get_usize(1), row)
        }
        _ => row as usize,
    };
    formats
        .iter()
        .zip(levels)
        .skip(1)
        .fold(top, |p, (format, level)| match format.position_view(level) {
            Some(segments) => segments.get_usize(p),
            // A dense level: `extent` children per parent.
            None => p * level.extent,
        })
}

/// The stored values of every operand: the run's work in units.
fn total_work(bind: &Bindings<'_>) -> u64 {
    bind.values.iter().map(|v| v.len() as u64).sum()
}

/// The number of cores, as rayon counts them.
pub(crate) fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `f` of each item, in the items' order, on `threads` threads: the
/// caller's and `threads - 1` of a pool. Items are taken in order by
/// whichever thread is free, and each result lands in its item's slot, so
/// the order never depends on timing. The caller works from the start
/// instead of waiting for a pool thread to wake (which costs tens of
/// microseconds on a virtual machine): a small run may be done before the
/// helpers are up. Pools are made once per size and shared by every engine,
/// so callers on many threads share the same workers.
pub(crate) fn map_in_order<I: Send, T: Send>(
    threads: usize,
    items: Vec<I>,
    (cancel, progress): (Option<&CancelToken>, Option<&Progress>),
    f: impl Fn(I) -> T + Sync + Send,
) -> Result<Vec<T>> {
    let cancelled = || cancel.is_some_and(CancelToken::is_cancelled);
    let f = |item: I| {
        let result = f(item);
        progress.inspect(|p| p.advance());
        result
    };
    if threads <= 1 || items.len() <= 1 {
        let mut results = Vec::with_capacity(items.len());
        for item in items {
            if cancelled() {
                return Err(EngineError::Cancelled);
            }
            results.push(f(item));
        }
        return Ok(results);
    }
    let n = items.len();
    let items: Vec<Mutex<Option<I>>> = items.into_iter().map(|i| Mutex::new(Some(i))).collect();
    let results: Vec<Mutex<Option<T>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let work = || loop {
        let k = next.fetch_add(1, Ordering::Relaxed);
        if k >= n || cancelled() {
            break;
        }
        let item = items[k].lock().unwrap_or_else(|p| p.into_inner()).take();
        let result = f(item.expect("each item is taken once"));
        *results[k].lock().unwrap_or_else(|p| p.into_inner()) = Some(result);
    };
    let helpers = (threads - 1).min(n - 1);
    pool(threads - 1).in_place_scope(|scope| {
        for _ in 0..helpers {
            scope.spawn(|_| work());
        }
        work();
    });
    // Every item ran unless the run was cancelled.
    results
        .into_iter()
        .map(|r| r.into_inner().unwrap_or_else(|p| p.into_inner()))
        .collect::<Option<Vec<T>>>()
        .ok_or(EngineError::Cancelled)
}

/// The pool of `threads` threads, made on first use.
fn pool(threads: usize) -> Arc<rayon::ThreadPool> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let mut pools = POOLS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    pools
        .entry(threads)
        .or_insert_with(|| {
            Arc::new(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .thread_name(|k| format!("tessera-{k}"))
                    .build()
                    .expect("a thread pool can be started"),
            )
        })
        .clone()
}

/// The chunks of the outer loop's coordinates `0..dim`: consecutive,
/// covering every coordinate, each with about `unit` units of work.
pub(crate) fn chunk_ranges(chunking: &Chunking, bind: &Bindings<'_>, dim: i64, unit: u64) -> Vec<Range<i64>> {
    let largest = |levels: &[LevelRef]| {
        levels
            .iter()
            .copied()
            .max_by_key(|d| bind.values[d.operand as usize].len())
    };
    let cuts = match (largest(&chunking.drivers), largest(&chunking.rows.drivers)) {
        (Some(driver), _) => driver_cuts(bind, driver, dim, unit),
        // Cuts between rows, moved to the block holding the row.
        (None, Some(driver)) => {
            let rows = output_rows(chunking, bind, dim);
            let block = rows_per_coordinate(chunking, bind).max(1);
            let mut cuts: Vec<i64> = driver_cuts(bind, driver, rows, unit)
                .into_iter()
                .map(|row| row / block)
                .collect();
            cuts.dedup();
            cuts
        }
        (None, None) => {
            // No input stores the outer loop: spread the work evenly.
            let per_row = (total_work(bind) / dim.max(1) as u64).max(1);
            let rows = (unit / per_row).max(1) as i64;
            (1..).map(|k| k * rows).take_while(|&c| c < dim).collect()
        }
    };
    let mut ranges = Vec::with_capacity(cuts.len() + 1);
    let mut start = 0;
    for cut in cuts {
        if cut > start && cut < dim {
            ranges.push(start..cut);
            start = cut;
        }
    }
    ranges.push(start..dim);
    ranges
}

/// Where to cut the outer loop for chunks of `unit` work, measured on the
/// driving operand's first level: a position's work is the positions
/// before it plus the entries of the next level below them (the entries of
/// a compact level are contiguous, so this counts are read, not summed).
fn driver_cuts(bind: &Bindings<'_>, driver: LevelRef, dim: i64, unit: u64) -> Vec<i64> {
    let Some((first, end)) = interp::positions_below(bind, driver, 0).filter(|(first, end)| first < end) else {
        return Vec::new();
    };
    let levels = bind.formats[driver.operand as usize].len();
    let child = (levels > 1)
        .then(|| LevelRef::new(driver.operand as usize, 1))
        .filter(|&c| interp::positions_below(bind, c, first).is_some());
    let below = |p: i64| child.map_or(0, |c| interp::positions_below(bind, c, p).map_or(0, |r| r.0));
    let base = below(first);
    let work = |p: i64| (p - first) as u64 + (below(p) - base) as u64;
    let last = child.and_then(|c| interp::positions_below(bind, c, end - 1));
    let total = work(end - 1) + last.map_or(0, |(b, e)| (e - b) as u64) + 1;
    let dense = bind.formats[driver.operand as usize][0].kind == LevelKind::Dense;
    let mut cuts = Vec::new();
    let mut target = unit;
    let mut low = first;
    while target < total {
        // The first position whose work reaches the target.
        let mut high = end;
        while low < high {
            let mid = low + (high - low) / 2;
            if work(mid) < target {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        if low >= end {
            break;
        }
        let coordinate = if dense {
            low
        } else {
            interp::first_level_coordinate(bind, driver, low)
        };
        cuts.push(coordinate.min(dim));
        target = work(low) + unit;
        low += 1;
    }
    cuts
}
