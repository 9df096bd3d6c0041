//! A compiled kernel at run time: its machine code, the layout of its
//! argument table, and the output callbacks the code calls.
//!
//! Before each call the runtime's [`Bindings`] are flattened into the
//! table the code reads (one 64-bit word per [`Slot`]). A dense workspace
//! is accumulated into in place; sparse outputs are assembled by the
//! runtime's [`OutputState`] through `extern "C"` callbacks; a panic in a callback never unwinds through machine code: it
//! is caught, the callback returns 1, the kernel returns at once, and the
//! panic resumes in Rust — the same panic the interpreter would raise.

use std::any::Any;
use std::ffi::c_void;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use cranelift_jit::JITModule;
use smallvec::SmallVec;
use tessera_engine::bytecode::temp_lengths;
use tessera_engine::interp::Bindings;
use tessera_engine::runtime::output::OutputState;
use tessera_engine::runtime::rows::{run_rows_merge, Combine, Row, RowOp, Run};
use tessera_engine::runtime::strided::{StridedBatch, StridedFactor, StridedUpdate, UpdateColumns};
use tessera_engine::runtime::workspace::DenseWorkspaceParts;
use tessera_engine::runtime::{CompiledKernel, StorageSignature};
use tessera_formats::{Level, LevelRef};

use super::builder::{Slot, WorkspacePart};
use super::translate::APPEND_BATCH;

/// `fn(table, ctx) -> status`: 0 when the kernel ran to its end, 1 when an
/// output callback failed.
pub(crate) type KernelFn = unsafe extern "C" fn(*const u64, *mut c_void) -> u32;

/// A kernel compiled by the Cranelift tier.
pub(crate) struct CraneliftKernel {
    pub code: KernelFn,
    pub slots: Vec<Slot>,
    pub signature: StorageSignature,
    pub text: Option<String>,
    /// The coordinates per appended entry, when the program appends.
    pub append_width: Option<usize>,
    /// The variable each vector temporary is indexed by (`Program::temps`):
    /// each run allocates their components.
    pub temps: Vec<u32>,
    /// Owns the code's memory; freed when the kernel is dropped (no run can
    /// be in progress then: runs hold an `Arc` of the kernel).
    pub module: Mutex<Option<JITModule>>,
}

impl Drop for CraneliftKernel {
    fn drop(&mut self) {
        let module = self.module.get_mut().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(module) = module {
            // SAFETY: the kernel is being dropped, so its code is neither
            // running nor reachable any more.
            unsafe { module.free_memory() };
        }
    }
}

/// One word of the argument table.
fn word(
    slot: Slot,
    bind: &Bindings<'_>,
    output: u64,
    workspace: Option<DenseWorkspaceParts>,
    append_buffer: &mut [u64],
    temps: &mut [Vec<f64>],
) -> u64 {
    match slot {
        Slot::Array(a) => {
            bind.levels[a.level.operand as usize][a.level.level as usize].arrays[a.slot as usize].as_ptr() as u64
        }
        Slot::Extent(l) => bind.levels[l.operand as usize][l.level as usize].extent as u64,
        Slot::Extra(l, k) => bind.levels[l.operand as usize][l.level as usize].params[k as usize] as u64,
        Slot::Values(op) => bind.values[op as usize].as_ptr() as u64,
        Slot::Dim(var) => bind.dims[var as usize] as u64,
        Slot::ChunkBegin => bind.chunk.0 as u64,
        Slot::ChunkEnd => bind.chunk.1 as u64,
        Slot::Output => output,
        Slot::Workspace(part) => workspace.map_or(0, |w| match part {
            WorkspacePart::Values => w.values as u64,
            WorkspacePart::Set => w.set as u64,
            WorkspacePart::Touched => w.touched as u64,
            WorkspacePart::Count => w.count as u64,
            WorkspacePart::Strides => w.strides as u64,
        }),
        Slot::AppendBuffer => append_buffer.as_mut_ptr() as u64,
        Slot::Temp(k) => temps[k as usize].as_mut_ptr() as u64,
    }
}

impl CompiledKernel for CraneliftKernel {
    fn signature(&self) -> &StorageSignature {
        &self.signature
    }

    fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    unsafe fn run(&self, bind: &Bindings<'_>, out: &mut OutputState) {
        let output = out.dense_origin() as u64;
        let workspace = out.dense_workspace_parts();
        let mut append_buffer = match self.append_width {
            Some(width) => vec![0u64; APPEND_BATCH * (width + 1)],
            None => Vec::new(),
        };
        let mut temps: Vec<Vec<f64>> = temp_lengths(&self.temps, &bind.dims)
            .into_iter()
            .map(|n| vec![0.0; n])
            .collect();
        let table: SmallVec<[u64; 32]> = self
            .slots
            .iter()
            .map(|&s| word(s, bind, output, workspace, &mut append_buffer, &mut temps))
            .collect();
        let mut ctx = CallContext {
            out,
            bind,
            strided: StridedBatch::new(bind.threads),
            panic: None,
        };
        // SAFETY: the caller guarantees that `bind` is valid storage of the
        // formats and signature the code was compiled for; the table holds
        // exactly the words the code reads; `ctx` outlives the call.
        let status = unsafe { (self.code)(table.as_ptr(), &mut ctx as *mut CallContext<'_, '_> as *mut c_void) };
        if let Some(panic) = ctx.panic.take() {
            resume_unwind(panic);
        }
        debug_assert_eq!(status, 0, "a kernel stops early only when a callback failed");
    }
}

/// What the output callbacks receive as `ctx`.
struct CallContext<'o, 'b> {
    out: &'o mut OutputState,
    /// The run's inputs, for callbacks that read whole levels.
    bind: &'o Bindings<'b>,
    /// Deferred strided updates (`Op::StridedAxpy` marked deferred).
    strided: StridedBatch<'b>,
    /// The panic a callback caught; the kernel has returned by the time it
    /// is resumed.
    panic: Option<Box<dyn Any + Send>>,
}

/// Runs `f` on the output and the coordinates the kernel passed, catching
/// a panic: 0 on success, 1 after a panic.
///
/// # Safety
/// `ctx` is the context [`CraneliftKernel::run`] passed to the kernel, and
/// `coords` points at `n` coordinates.
unsafe fn output_call(ctx: *mut c_void, coords: *const i64, n: usize, f: impl FnOnce(&mut OutputState, &[i64])) -> u32 {
    // SAFETY: see the function's contract.
    let coords = unsafe { std::slice::from_raw_parts(coords, n) };
    unsafe { guarded(ctx, |ctx| f(ctx.out, coords)) }
}

/// Runs `f` on the kernel's context, catching a panic: 0 on success, 1
/// after a panic (kept in the context, resumed once the kernel returns).
///
/// # Safety
/// `ctx` is the context [`CraneliftKernel::run`] passed to the kernel.
unsafe fn guarded(ctx: *mut c_void, f: impl FnOnce(&mut CallContext<'_, '_>)) -> u32 {
    // SAFETY: see the function's contract; nothing else borrows it now.
    let ctx = unsafe { &mut *(ctx as *mut CallContext<'_, '_>) };
    match catch_unwind(AssertUnwindSafe(|| f(&mut *ctx))) {
        Ok(()) => 0,
        Err(panic) => {
            ctx.panic = Some(panic);
            1
        }
    }
}

/// [`output_call`] for callbacks that also read the run's inputs.
///
/// # Safety
/// As for [`output_call`].
unsafe fn bound_call(
    ctx: *mut c_void,
    coords: *const i64,
    n: usize,
    f: impl FnOnce(&Bindings<'_>, &mut OutputState, &[i64]),
) -> u32 {
    // SAFETY: see the function's contract.
    let bind = unsafe { (*(ctx as *mut CallContext<'_, '_>)).bind };
    unsafe { output_call(ctx, coords, n, |out, coords| f(bind, out, coords)) }
}

/// Appends `count` buffered entries: each `width` coordinates then the
/// value's bits, one word each.
pub(crate) unsafe extern "C" fn append_batch(ctx: *mut c_void, entries: *const u64, count: usize, width: usize) -> u32 {
    // SAFETY: called only by kernels, with their context and a buffer of
    // `count` entries of `width + 1` words.
    let words = unsafe { std::slice::from_raw_parts(entries as *const i64, count * (width + 1)) };
    unsafe { guarded(ctx, |ctx| ctx.out.append_entries(words, width)) }
}

/// The bit of a merge call's code word that says the call's last two
/// words are its scales' bits (`Combine::scales`).
pub(crate) const SCALED: u64 = 1 << 32;

/// [`SCALED`] when a merge has scales.
pub(crate) fn scaled_flag(scales: Option<[u32; 2]>) -> u64 {
    if scales.is_some() {
        SCALED
    } else {
        0
    }
}

/// The two scale words a code word with [`SCALED`] says follow.
fn scale_words(code: u64) -> usize {
    if code & SCALED != 0 {
        2
    } else {
        0
    }
}

/// The combination a merge call's code word and scale words give.
fn combine_of(code: u64, scales: &[i64]) -> Combine {
    Combine {
        op: RowOp::from_code(code & 0xff).expect("the translator writes a row op's code"),
        scales: (code & SCALED != 0).then(|| [f64::from_bits(scales[0] as u64), f64::from_bits(scales[1] as u64)]),
    }
}

/// `Op::MergeRows`: `args` holds, for each of the two rows, its coordinate
/// array, its values, and its position range; then a code word (the
/// `RowOp` code, each row's `IndexWidth` in the next bytes, the number of
/// block sizes in the fourth, and [`SCALED`]); then the `n` prefix
/// coordinates, the block sizes (each coordinate's block of values,
/// `Op::MergeRows`) and the scales.
pub(crate) unsafe extern "C" fn merge_rows(ctx: *mut c_void, args: *const i64, n: usize) -> u32 {
    // SAFETY: called only by kernels, with their context and the words
    // above, whose arrays are the rows' levels of valid input tensors and
    // whose ranges are positions of those levels.
    let code = unsafe { *args.add(8) } as u64;
    let sizes = ((code >> 24) & 0xff) as usize;
    let words = unsafe { std::slice::from_raw_parts(args, 9 + n + sizes + scale_words(code)) };
    let block: smallvec::SmallVec<[u32; 4]> = words[9 + n..9 + n + sizes].iter().map(|&s| s as u32).collect();
    let width = block.iter().map(|&s| s as usize).product::<usize>();
    let row = |k: usize| {
        let [coords, values, begin, end] = [words[4 * k], words[4 * k + 1], words[4 * k + 2], words[4 * k + 3]];
        let (begin, len) = (begin as usize, (end - begin) as usize);
        // SAFETY: see above; `begin..end` lies within the coordinates, and
        // its blocks of `width` values within the values.
        unsafe {
            let values = std::slice::from_raw_parts((values as *const f64).add(begin * width), len * width);
            match (code >> (8 * (k + 1))) & 0xff {
                0 => Row::U32(
                    std::slice::from_raw_parts((coords as *const u32).add(begin), len),
                    values,
                ),
                1 => Row::U64(
                    std::slice::from_raw_parts((coords as *const u64).add(begin), len),
                    values,
                ),
                _ => Row::I64(
                    std::slice::from_raw_parts((coords as *const i64).add(begin), len),
                    values,
                ),
            }
        }
    };
    let (a, b) = (row(0), row(1));
    let op = combine_of(code, &words[9 + n + sizes..]);
    // SAFETY: `ctx` is the kernel's context; the prefix follows the code.
    unsafe {
        output_call(ctx, args.add(9), n, |out, prefix| {
            out.append_merged(prefix, (a, b), op, &block)
        })
    }
}

/// `Op::MergeRuns`: `args` holds, for each of the two runs, its values,
/// the position of its first coordinate and its coordinates' bounds; then
/// the `RowOp` code (the number of shifts in bits 24..32, and [`SCALED`]),
/// the `n` prefix coordinates, the shifts and the scales.
pub(crate) unsafe extern "C" fn merge_runs(ctx: *mut c_void, args: *const i64, n: usize) -> u32 {
    // SAFETY: called only by kernels, with their context and the words
    // above, whose values are valid inputs' and whose non-empty runs lie
    // within them.
    let code = unsafe { *args.add(8) } as u64;
    let shifts = ((code >> 24) & 0xff) as usize;
    let words = unsafe { std::slice::from_raw_parts(args, 9 + n + shifts + scale_words(code)) };
    let run = |k: usize| {
        let [values, start, begin, end] = [words[4 * k], words[4 * k + 1], words[4 * k + 2], words[4 * k + 3]];
        let len = (end - begin).max(0) as usize;
        // SAFETY: see above; an empty run reads nothing.
        let values = match len {
            0 => &[][..],
            _ => unsafe { std::slice::from_raw_parts((values as *const f64).add(start as usize), len) },
        };
        Run { begin, values }
    };
    let (a, b) = (run(0), run(1));
    let op = combine_of(code, &words[9 + n + shifts..]);
    let shifts = &words[9 + n..9 + n + shifts];
    // SAFETY: `ctx` is the kernel's context; the prefix follows the code.
    unsafe {
        output_call(ctx, args.add(9), n, |out, prefix| {
            out.append_merged_runs(prefix, (a, b), op, shifts)
        })
    }
}

/// A level named in one word of a runtime call: `operand << 32 | level`.
pub(crate) fn level_word(level: LevelRef) -> i64 {
    (i64::from(level.operand) << 32) | i64::from(level.level)
}

/// The level a [`level_word`] names.
fn level_of_word(word: i64) -> LevelRef {
    LevelRef {
        operand: (word >> 32) as u32,
        level: word as u32,
    }
}

/// `Op::RowsMerge`: `args` holds, for each operand, its rows level (a
/// [`level_word`]) and its parent's position; then the first and last
/// row, the `RowOp` code (and [`SCALED`]), the `n` prefix coordinates and
/// the scales.
pub(crate) unsafe extern "C" fn rows_merge(ctx: *mut c_void, args: *const i64, n: usize) -> u32 {
    // SAFETY: called only by kernels, with their context and the words above.
    let code = unsafe { *args.add(6) } as u64;
    let words = unsafe { std::slice::from_raw_parts(args, 7 + n + scale_words(code)) };
    let rows = [
        (level_of_word(words[0]), words[1] as usize),
        (level_of_word(words[2]), words[3] as usize),
    ];
    let range = words[4] as usize..words[5] as usize;
    let op = combine_of(code, &words[7 + n..]);
    // SAFETY: `ctx` is the kernel's context; the prefix follows the code.
    unsafe {
        bound_call(ctx, args.add(7), n, |bind, out, prefix| {
            run_rows_merge(bind, out, rows, range, op, prefix)
        })
    }
}

/// A deferred `Op::StridedAxpy`: `args` holds the rows, the scale's bits,
/// the output run's start and step, the number of factors, whether the
/// update has columns, their count and the output's step along them, then
/// for each of the `n` factors eight words: its kind (0 a run, 1 a
/// gather), operand, start, step, base, level (a [`level_word`]) and
/// coordinate step (gathers only), and its step along the columns (-1 for
/// none).
pub(crate) unsafe extern "C" fn strided_defer(ctx: *mut c_void, args: *const i64, n: usize) -> u32 {
    // SAFETY: called only by kernels, with their context and the words above.
    let words = unsafe { std::slice::from_raw_parts(args, 8 + 8 * n) };
    let run = |ctx: &mut CallContext<'_, '_>| {
        let bind = ctx.bind;
        let factors = words[8..]
            .chunks_exact(8)
            .map(|f| {
                let (operand, start, step) = (f[1] as usize, f[2] as usize, f[3] as usize);
                let values = bind.f64s(operand);
                match f[0] {
                    0 => StridedFactor::Run { values, start, step },
                    _ => {
                        let level = level_of_word(f[5]);
                        let (op, k) = (level.operand as usize, level.level as usize);
                        StridedFactor::Gather {
                            values,
                            base: f[4] as usize,
                            coords: bind.formats[op][k]
                                .coordinate_view(&bind.levels[op][k])
                                .expect("the planner gathers through levels with coordinate arrays"),
                            start,
                            step,
                            coord_step: f[6] as usize,
                        }
                    }
                }
            })
            .collect();
        let update = StridedUpdate {
            rows: words[0].max(0) as usize,
            scale: f64::from_bits(words[1] as u64),
            out_start: words[2] as usize,
            out_step: words[3] as usize,
            factors,
            columns: (words[5] != 0).then(|| UpdateColumns {
                count: words[6].max(0) as usize,
                out_step: words[7] as usize,
                steps: words[8..]
                    .chunks_exact(8)
                    .map(|f| (f[7] >= 0).then_some(f[7] as usize))
                    .collect(),
            }),
        };
        ctx.strided.push(update, ctx.out);
    };
    // SAFETY: `ctx` is the kernel's context.
    unsafe { guarded(ctx, run) }
}

/// `Op::StridedFlush`: runs the deferred strided updates.
pub(crate) unsafe extern "C" fn strided_flush(ctx: *mut c_void, _: *const i64, _: usize) -> u32 {
    // SAFETY: called only by kernels, with their context.
    unsafe { guarded(ctx, |ctx| ctx.strided.flush(ctx.out)) }
}

pub(crate) unsafe extern "C" fn workspace_flush(ctx: *mut c_void, prefix: *const i64, n: usize) -> u32 {
    // SAFETY: called only by kernels, with their context and coordinates.
    unsafe { output_call(ctx, prefix, n, |out, c| out.workspace_flush(c)) }
}
