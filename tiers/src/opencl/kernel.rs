//! An OpenCL kernel at run time: the built program, the arguments it
//! reads, and how its work maps onto work-items.
//!
//! Each run finds the inputs on the device (or uploads them), copies the
//! dense output there, launches the work-items the mapping asks for, and
//! reads the output (or the entries of a sparse one) back. A launch the
//! device refuses runs the same program on the Cranelift kernel compiled
//! beside it, so a device failure never loses an answer.

use std::sync::{Arc, Mutex};

use ocl::{Buffer, MemFlags, OclPrm, Queue};
use tessera_engine::interp::Bindings;
use tessera_engine::runtime::output::OutputState;
use tessera_engine::runtime::{CompiledKernel, KernelFallback, StorageSignature};
use tessera_formats::typed::ValueSlice;
use tessera_formats::IndexArray;

use super::ctext::{Args, Pointer, Scalar};
use tessera_engine::words::Adder;

use super::resident::{Part, Resident, Upload};
use super::rows::{RowMapping, RowsKernel, RowsShape, LANES_KERNEL, SPLIT_KERNEL};
use super::source::{Entries, Mapping, KERNEL_NAME, LOCAL_WORKSPACE_KERNEL};
use tessera_formats::Version;

/// A kernel built for an OpenCL device.
pub(crate) struct OpenClKernel {
    /// The programs built so far, by the kernel function each holds.
    pub programs: Mutex<Vec<(&'static str, ocl::Program)>>,
    /// Each kernel function's program source (`source::Source::programs`).
    pub sources: Vec<(&'static str, String)>,
    pub context: ocl::Context,
    pub device: ocl::Device,
    pub queue: Queue,
    pub args: Args,
    pub mapping: Mapping,
    pub entries: Entries,
    pub signature: StorageSignature,
    pub text: Option<String>,
    /// The Cranelift kernel of the same program, run when the device fails.
    pub jit: Option<Arc<dyn CompiledKernel>>,
    /// How many work-items with a workspace run at once: enough to fill
    /// the device; each takes rows in turn.
    pub workspaces: usize,
    /// The variable each vector temporary is indexed by (`Program::temps`):
    /// every work-item has its own components of each.
    pub temps: Vec<u32>,
    /// The inputs kept on the device, shared by the tier's kernels.
    pub resident: Arc<Resident>,
    /// Why the device failed, once it has: later runs go to `jit` at once.
    pub failed: Mutex<Option<String>>,
    /// The kernel objects by function name, each made at its first launch
    /// and given new arguments at each (an OpenCL kernel's arguments are
    /// its state, so one launch at a time sets and enqueues it).
    pub kernels: Mutex<Vec<(&'static str, ocl::Kernel)>>,
    /// The row dot the program is, when the source has the row kernels.
    pub rows: Option<RowsKernel>,
    /// The mapping of row dots the tier was asked for.
    pub row_mapping: RowMapping,
    pub is_gpu: bool,
    /// The shape of the last driver seen, by its version.
    pub shape: Mutex<Option<(Version, RowsShape)>>,
    /// Bytes of local memory a work-group's workspace may take (0: every
    /// workspace in global memory).
    pub local_memory: usize,
    /// The tier's count of launches by kernel function.
    pub launches: Arc<Mutex<Vec<(&'static str, u64)>>>,
    /// Workspaces of finished runs, clean (a flush clears what it drains),
    /// for later runs to take instead of zeroing new ones.
    pub workspace_pool: Mutex<Vec<Workspaces>>,
    /// How the output's values add (the program's value type).
    pub adder: Adder,
}

/// The workspaces of a run's work-items, on the device.
pub(crate) struct Workspaces {
    /// Work-items, and slots of each one's workspace.
    items: usize,
    slots: usize,
    values: Buffer<f64>,
    keys: Buffer<u64>,
    touched: Buffer<u32>,
}

/// The words of a workspace of `slots` slots' bitmap, a bit per slot (as
/// the kernel's `ws_key_words`).
fn bitmap_words(slots: usize) -> usize {
    slots / 64 + 1
}

/// A device copy of `data` (one default element when it is empty: OpenCL
/// has no empty buffers).
fn upload<T: OclPrm>(queue: &Queue, data: &[T], flags: MemFlags) -> ocl::Result<Buffer<T>> {
    let placeholder = [T::default()];
    let data = if data.is_empty() { &placeholder[..] } else { data };
    Buffer::<T>::builder()
        .queue(queue.clone())
        .flags(flags)
        .len(data.len())
        .copy_host_slice(data)
        .build()
}

/// The device memory all work-items' workspaces may take together: the
/// number of work-items with a workspace is cut to fit (each then takes
/// several rows in turn).
const WORKSPACE_BUDGET: usize = 256 << 20;

/// Bytes per workspace slot: a value, a touched slot, and at most a byte
/// of the bitmaps.
const WORKSPACE_SLOT_BYTES: usize = 8 + 4 + 1;

/// The most partial outputs of a [`Mapping::Partials`] kernel, and the
/// memory they may take together.
const PARTIALS: usize = 256;
const PARTIALS_BUDGET: usize = 256 << 20;

/// Stored values read per value of the partial outputs, at least: a
/// partial costs its zeroing, its copy back and its addition, which only
/// pays where the rows it takes hold much more work than it has values.
const WORK_PER_PARTIAL_VALUE: usize = 16;

/// Work-items per work-group. Always the same, so that a device that
/// compiles a kernel per work-group size (PoCL does) compiles it once; the
/// items past the last unit find no work.
pub(crate) const WORK_GROUP: usize = 64;

/// The kernel's arguments after its pointers (`source::FIXED_ARGUMENTS`).
struct Fixed {
    out: Buffer<f64>,
    out_len: i64,
    scalars: Buffer<i64>,
    counts: Buffer<i64>,
    offsets: Buffer<i64>,
    entry_coords: Buffer<i64>,
    entry_values: Buffer<f64>,
    ws_values: Buffer<f64>,
    ws_keys: Buffer<u64>,
    ws_touched: Buffer<u32>,
    ws_strides: Buffer<i64>,
    ws_size: i64,
    /// Whether a flush sorts the workspace's keys (0: in the order they
    /// were first set, for an unordered level).
    ws_sorted: i32,
    tmp: Buffer<f64>,
    tmp_size: i64,
    out_base: i64,
    split: i64,
    carry_rows: Buffer<i64>,
    carry_sums: Buffer<f64>,
    /// Slots of the workspace in local memory (1 when it is in global).
    local_slots: usize,
}

/// How one run spreads over work-items.
#[derive(Debug, Clone, Copy)]
struct Launch {
    /// The chunk of the outer loop the run covers.
    chunk: (i64, i64),
    /// Units of work: rows, blocks of rows (partials), or one.
    units: usize,
    /// Work-items and work-group size.
    items: usize,
    group: usize,
    /// The kernel function launched.
    kernel: &'static str,
}

/// The row kernels' arguments of a run: lanes per row or positions per
/// piece (`split`), and the pieces whose carries come back (0 but for a
/// split).
#[derive(Debug, Clone, Copy)]
struct RowLaunch {
    split: i64,
    pieces: usize,
}

fn error(e: ocl::Error) -> String {
    e.to_string()
}

impl OpenClKernel {
    /// Runs the kernel on the device; an error leaves `out` as it was.
    fn launch(&self, bind: &Bindings<'_>, out: &mut OutputState) -> Result<(), String> {
        let units = self.units(bind, out);
        if units == 0 {
            return Ok(());
        }
        let inputs = self.inputs(bind).map_err(error)?;
        let (strides, ws_size, ws_sorted) = self.workspace(out)?;
        let tmp_size: usize = tessera_engine::bytecode::temp_lengths(&self.temps, &bind.dims)
            .iter()
            .sum();
        // A workspace that fits the device's local memory is kept there:
        // each work-group is one work-item with a workspace.
        let local = ws_size > 0 && ws_size * WORKSPACE_SLOT_BYTES <= self.local_memory;
        let global_ws_size = if local { 0 } else { ws_size };
        let item_bytes = global_ws_size * WORKSPACE_SLOT_BYTES + tmp_size * 8;
        let (items, group) = match (self.mapping, item_bytes) {
            (Mapping::Single, _) => (1, 1),
            (Mapping::Partials, _) => (units, 1),
            (Mapping::ItemPerRow, 0) if !local => (units.next_multiple_of(WORK_GROUP), WORK_GROUP),
            // Work-items with a workspace (in either memory) or temporaries
            // each take one work-group of their own, so that their number
            // is not rounded up to a group's.
            (Mapping::ItemPerRow, bytes) => (
                units.min(self.workspaces).min((WORKSPACE_BUDGET / bytes.max(1)).max(1)),
                1,
            ),
        };
        let mut launch = Launch {
            chunk: bind.chunk,
            units,
            items,
            group,
            kernel: if local { LOCAL_WORKSPACE_KERNEL } else { KERNEL_NAME },
        };
        let rows = self.row_launch(bind, &mut launch);
        let queue = &self.queue;
        let (read, write) = (MemFlags::new().read_only(), MemFlags::new().read_write());
        let partials = self.mapping == Mapping::Partials;
        let dense = out.dense_values_mut();
        let (out_base, out_values) = match &dense {
            Some((base, values)) => (*base, &values[..]),
            None => (0, &[][..]),
        };
        let scalars = self.scalars(bind);
        let workspaces = self.take_workspaces(items, global_ws_size).map_err(error)?;
        let fixed = Fixed {
            out: if partials {
                upload(queue, &vec![0f64; units * out_values.len()], write).map_err(error)?
            } else {
                upload(queue, out_values, write).map_err(error)?
            },
            out_len: if partials { out_values.len() as i64 } else { 0 },
            scalars: upload(queue, &scalars, read).map_err(error)?,
            counts: upload(
                queue,
                &vec![0i64; if self.entries.width.is_some() { units } else { 0 }],
                write,
            )
            .map_err(error)?,
            offsets: upload(queue, &[0i64], read).map_err(error)?,
            entry_coords: upload(queue, &[0i64], write).map_err(error)?,
            entry_values: upload(queue, &[0f64], write).map_err(error)?,
            ws_values: workspaces.values.clone(),
            ws_keys: workspaces.keys.clone(),
            ws_touched: workspaces.touched.clone(),
            ws_strides: upload(queue, &strides, read).map_err(error)?,
            ws_size: ws_size as i64,
            ws_sorted: i32::from(ws_sorted),
            tmp: upload(queue, &vec![0f64; items * tmp_size], write).map_err(error)?,
            tmp_size: tmp_size as i64,
            out_base: out_base as i64,
            split: rows.split,
            carry_rows: upload(queue, &vec![0i64; 2 * rows.pieces], write).map_err(error)?,
            carry_sums: upload(queue, &vec![0f64; 2 * rows.pieces], write).map_err(error)?,
            local_slots: if local { ws_size } else { 1 },
        };
        match self.entries.width {
            None => {
                self.enqueue(&inputs, &fixed, launch, 1).map_err(error)?;
                if let Some((base, values)) = dense {
                    read_dense(&fixed.out, values, partials.then_some(units), self.adder)?;
                    if let Some(kernel) = self.rows.as_ref().filter(|_| rows.pieces > 0) {
                        let mut carry_rows = vec![0i64; 2 * rows.pieces];
                        let mut carry_sums = vec![0f64; 2 * rows.pieces];
                        fixed.carry_rows.read(&mut carry_rows).enq().map_err(error)?;
                        fixed.carry_sums.read(&mut carry_sums).enq().map_err(error)?;
                        kernel.add_carries(bind, values, base, &carry_rows, &carry_sums);
                    }
                }
            }
            Some(width) => {
                let words = self.entries(&inputs, fixed, launch, width)?;
                out.add_entries(&words, width);
            }
        }
        // Only a run that finished leaves its workspaces clean.
        self.workspace_pool
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(workspaces);
        Ok(())
    }

    /// For a row dot: the mapping of this run, set on `launch`, and the
    /// row kernels' arguments.
    fn row_launch(&self, bind: &Bindings<'_>, launch: &mut Launch) -> RowLaunch {
        let none = RowLaunch { split: 0, pieces: 0 };
        let Some(rows) = self.rows.as_ref() else {
            return none;
        };
        // A CPU device keeps one work-item per row whatever the shape: no
        // need to measure it.
        if self.row_mapping == RowMapping::Auto && !self.is_gpu {
            return none;
        }
        let Some(shape) = self.shape_of(rows, bind) else {
            return none;
        };
        let mapping = match self.row_mapping {
            RowMapping::Auto => shape.mapping(self.is_gpu),
            // A split needs each row's positions after the last's.
            RowMapping::Split { .. } if !shape.contiguous => RowMapping::ItemPerRow,
            forced => forced,
        };
        match mapping {
            RowMapping::Lanes(lanes) => {
                let per_group = WORK_GROUP / lanes as usize;
                launch.items = launch.units.div_ceil(per_group) * WORK_GROUP;
                launch.group = WORK_GROUP;
                launch.kernel = LANES_KERNEL;
                RowLaunch {
                    split: lanes as i64,
                    pieces: 0,
                }
            }
            RowMapping::Split { piece } => {
                let Some(pieces) = rows.pieces(bind, piece as i64) else {
                    return none;
                };
                launch.items = pieces.next_multiple_of(WORK_GROUP);
                launch.group = WORK_GROUP;
                launch.kernel = SPLIT_KERNEL;
                RowLaunch {
                    split: piece as i64,
                    pieces,
                }
            }
            RowMapping::Auto | RowMapping::ItemPerRow => none,
        }
    }

    /// The shape of `rows`' driver in `bind`: kept for the driver's
    /// version, measured again when it changes.
    fn shape_of(&self, rows: &RowsKernel, bind: &Bindings<'_>) -> Option<RowsShape> {
        let version = bind.versions.get(rows.driver_operand()).copied();
        let mut kept = self.shape.lock().unwrap_or_else(|e| e.into_inner());
        if let (Some(version), Some((seen, shape))) = (version, kept.as_ref()) {
            if *seen == version {
                return Some(*shape);
            }
        }
        let shape = rows.shape(bind)?;
        if let Some(version) = version {
            *kept = Some((version, shape));
        }
        Some(shape)
    }

    /// The built program holding kernel function `name`, built now if no
    /// run has needed it before.
    fn program(&self, name: &'static str) -> ocl::Result<ocl::Program> {
        let mut built = self.programs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, program)) = built.iter().find(|(n, _)| *n == name) {
            return Ok(program.clone());
        }
        let source = self
            .sources
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, text)| text.as_str())
            .ok_or_else(|| ocl::Error::from(format!("the kernel has no function {name}")))?;
        let program = ocl::Program::builder()
            .src(source)
            .devices(self.device)
            .build(&self.context)?;
        built.push((name, program.clone()));
        Ok(program)
    }

    /// Workspaces of `slots` slots for each of `items` work-items, zeroed:
    /// a finished run's, or new.
    fn take_workspaces(&self, items: usize, slots: usize) -> ocl::Result<Workspaces> {
        let mut pool = self.workspace_pool.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(at) = pool.iter().position(|w| (w.items, w.slots) == (items, slots)) {
            return Ok(pool.swap_remove(at));
        }
        drop(pool);
        let (queue, write) = (&self.queue, MemFlags::new().read_write());
        let keys = bitmap_words(slots);
        Ok(Workspaces {
            items,
            slots,
            values: upload(queue, &vec![0f64; items * slots], write)?,
            keys: upload(queue, &vec![0u64; items * keys], write)?,
            touched: upload(queue, &vec![0u32; items * slots], write)?,
        })
    }

    /// The units of work of a run: rows of the chunk, one, or blocks of
    /// rows (as many partial outputs as the work pays for and their memory
    /// allows; a function of the chunk alone, so that the sums round the
    /// same on every run of it).
    fn units(&self, bind: &Bindings<'_>, out: &mut OutputState) -> usize {
        let rows = (bind.chunk.1 - bind.chunk.0).max(0) as usize;
        match self.mapping {
            Mapping::Single => 1,
            Mapping::ItemPerRow => rows,
            Mapping::Partials => {
                let len = out.dense_values_mut().map_or(0, |(_, v)| v.len()).max(1);
                let work: usize = bind.values.iter().map(|v| v.len()).sum();
                rows.min(PARTIALS)
                    .min(PARTIALS_BUDGET / (len * 8))
                    .min(work / (WORK_PER_PARTIAL_VALUE * len))
                    .max(1)
            }
        }
    }

    /// The device buffers of the arrays and values the kernel reads:
    /// inputs kept on the device by version (uploaded when new), anything
    /// else (the output's own levels) copied for the run.
    fn inputs(&self, bind: &Bindings<'_>) -> ocl::Result<Vec<Upload>> {
        let (queue, read) = (&self.queue, MemFlags::new().read_only());
        let mut uploads = Vec::with_capacity(self.args.pointers.len());
        for pointer in &self.args.pointers {
            let (operand, part) = match *pointer {
                Pointer::Array(array, _) => (
                    array.level.operand,
                    Part::Array {
                        level: array.level.level,
                        slot: array.slot,
                    },
                ),
                Pointer::Values(operand) => (operand, Part::Values),
            };
            let (bytes, copy): (usize, Box<dyn Fn() -> ocl::Result<Upload>>) = match part {
                Part::Array { level, slot } => {
                    let array = &bind.levels[operand as usize][level as usize].arrays[slot as usize];
                    let copy: Box<dyn Fn() -> ocl::Result<Upload>> = match array {
                        IndexArray::U32(v) => Box::new(|| Ok(Upload::U32(upload(queue, v, read)?))),
                        IndexArray::U64(v) => Box::new(|| Ok(Upload::U64(upload(queue, v, read)?))),
                        IndexArray::I64(v) => Box::new(|| Ok(Upload::I64(upload(queue, v, read)?))),
                    };
                    (array.bytes(), copy)
                }
                Part::Values => {
                    let values = bind.values[operand as usize];
                    let bytes = values.len() * values.value_type().size();
                    let copy: Box<dyn Fn() -> ocl::Result<Upload>> = match values {
                        ValueSlice::F64(v) => Box::new(move || Ok(Upload::F64(upload(queue, v, read)?))),
                        ValueSlice::F32(v) => Box::new(move || Ok(Upload::F32(upload(queue, v, read)?))),
                        ValueSlice::I64(v) => Box::new(move || Ok(Upload::I64(upload(queue, v, read)?))),
                        ValueSlice::I32(v) => Box::new(move || Ok(Upload::I32(upload(queue, v, read)?))),
                        ValueSlice::C64(_) => {
                            unreachable!("complex tensors reach kernels as their real and imaginary parts")
                        }
                        ValueSlice::Bool(v) => {
                            // SAFETY: a bool is one byte holding 0 or 1.
                            let bytes: &[u8] = unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), v.len()) };
                            Box::new(move || Ok(Upload::U8(upload(queue, bytes, read)?)))
                        }
                    };
                    (bytes, copy)
                }
            };
            uploads.push(match bind.versions.get(operand as usize) {
                Some(&version) => self.resident.get_or_upload((version, part), bytes, copy)?,
                None => copy()?,
            });
        }
        Ok(uploads)
    }

    /// The values of the kernel's scalar table for this run.
    fn scalars(&self, bind: &Bindings<'_>) -> Vec<i64> {
        self.args
            .scalars
            .iter()
            .map(|scalar| match *scalar {
                Scalar::Extent(l) => bind.levels[l.operand as usize][l.level as usize].extent as i64,
                Scalar::Extra(l, k) => bind.levels[l.operand as usize][l.level as usize].params[k as usize],
                Scalar::Dim(var) => bind.dims[var as usize],
            })
            .collect()
    }

    /// The strides and slots of a work-item's workspace (row-major, as the
    /// runtime's), and whether it hands its keys over sorted; nothing when
    /// the program has none.
    fn workspace(&self, out: &OutputState) -> Result<(Vec<i64>, usize, bool), String> {
        if self.entries.workspace.is_none() {
            return Ok((Vec::new(), 0, true));
        }
        let workspace = out
            .workspace()
            .ok_or("the program adds to a workspace the output does not have")?;
        let extents = &workspace.extents;
        let mut strides = vec![1i64; extents.len()];
        for k in (0..extents.len().saturating_sub(1)).rev() {
            strides[k] = strides[k + 1] * extents[k + 1] as i64;
        }
        Ok((strides, extents.iter().product::<usize>().max(1), workspace.sorted()))
    }

    /// Runs the two phases of a kernel that writes entries: counts per
    /// unit, offsets, then the entries themselves; returns them as the
    /// runtime takes them (each entry's `width` coordinates, then its
    /// value's bits).
    fn entries(&self, inputs: &[Upload], fixed: Fixed, launch: Launch, width: usize) -> Result<Vec<i64>, String> {
        let (queue, write) = (&self.queue, MemFlags::new().read_write());
        self.enqueue(inputs, &fixed, launch, 0).map_err(error)?;
        let mut counts = vec![0i64; launch.units];
        fixed.counts.read(&mut counts).enq().map_err(error)?;
        let mut offsets = Vec::with_capacity(launch.units);
        let mut total = 0i64;
        for &count in &counts {
            offsets.push(total);
            total += count;
        }
        if total == 0 {
            return Ok(Vec::new());
        }
        let total = total as usize;
        let fixed = Fixed {
            offsets: upload(queue, &offsets, MemFlags::new().read_only()).map_err(error)?,
            entry_coords: Buffer::<i64>::builder()
                .queue(queue.clone())
                .flags(write)
                .len(total * width.max(1))
                .build()
                .map_err(error)?,
            entry_values: Buffer::<f64>::builder()
                .queue(queue.clone())
                .flags(write)
                .len(total)
                .build()
                .map_err(error)?,
            ..fixed
        };
        self.enqueue(inputs, &fixed, launch, 1).map_err(error)?;
        let mut coords = vec![0i64; total * width.max(1)];
        let mut values = vec![0f64; total];
        fixed.entry_coords.read(&mut coords).enq().map_err(error)?;
        fixed.entry_values.read(&mut values).enq().map_err(error)?;
        let mut words = Vec::with_capacity(total * (width + 1));
        for (entry, value) in coords.chunks_exact(width.max(1)).zip(&values) {
            words.extend_from_slice(&entry[..width]);
            words.push(value.to_bits() as i64);
        }
        Ok(words)
    }

    /// Launches `items` work-items over the chunk, in phase `fill`: the
    /// kernel object is made once and given this launch's arguments.
    fn enqueue(&self, uploads: &[Upload], fixed: &Fixed, launch: Launch, fill: i32) -> ocl::Result<()> {
        let args = arguments(uploads, fixed, launch.chunk, fill);
        let mut kept = self.kernels.lock().unwrap_or_else(|e| e.into_inner());
        let at = match kept.iter().position(|(name, _)| *name == launch.kernel) {
            Some(at) => at,
            None => {
                let program = self.program(launch.kernel)?;
                let mut builder = ocl::Kernel::builder();
                builder.program(&program).name(launch.kernel).queue(self.queue.clone());
                for arg in &args {
                    arg.declare(&mut builder);
                }
                kept.push((launch.kernel, builder.build()?));
                kept.len() - 1
            }
        };
        let kernel = &kept[at].1;
        let mut launches = self.launches.lock().unwrap_or_else(|e| e.into_inner());
        match launches.iter_mut().find(|(name, _)| *name == launch.kernel) {
            Some((_, count)) => *count += 1,
            None => launches.push((launch.kernel, 1)),
        }
        drop(launches);
        for (index, arg) in args.iter().enumerate() {
            arg.set(kernel, index as u32)?;
        }
        // SAFETY: the kernel's arguments are the buffers above, which hold
        // the valid storage the source was generated for (the runtime's
        // contract for `run`); the output, counts, entries and workspaces
        // cover every position the units write.
        unsafe {
            kernel
                .cmd()
                .global_work_size(launch.items)
                .local_work_size(launch.group)
                .enq()
        }
    }
}

/// One argument of a launch.
enum Arg<'a> {
    U8(&'a Buffer<u8>),
    U32(&'a Buffer<u32>),
    U64(&'a Buffer<u64>),
    I64(&'a Buffer<i64>),
    F64(&'a Buffer<f64>),
    F32(&'a Buffer<f32>),
    I32(&'a Buffer<i32>),
    Long(i64),
    Int(i32),
    /// Local memory of this many elements for each work-group.
    LocalF64(usize),
    LocalU64(usize),
    LocalU32(usize),
}

/// A launch's arguments in the kernel's order: the pointers the program
/// reads, then `source::FIXED_ARGUMENTS`.
fn arguments<'a>(uploads: &'a [Upload], fixed: &'a Fixed, chunk: (i64, i64), fill: i32) -> Vec<Arg<'a>> {
    let mut args: Vec<Arg<'a>> = uploads
        .iter()
        .map(|upload| match upload {
            Upload::U32(b) => Arg::U32(b),
            Upload::U64(b) => Arg::U64(b),
            Upload::I64(b) => Arg::I64(b),
            Upload::F64(b) => Arg::F64(b),
            Upload::F32(b) => Arg::F32(b),
            Upload::I32(b) => Arg::I32(b),
            Upload::U8(b) => Arg::U8(b),
        })
        .collect();
    args.extend([
        Arg::F64(&fixed.out),
        Arg::Long(fixed.out_len),
        Arg::I64(&fixed.scalars),
        Arg::I64(&fixed.counts),
        Arg::I64(&fixed.offsets),
        Arg::I64(&fixed.entry_coords),
        Arg::F64(&fixed.entry_values),
        Arg::F64(&fixed.ws_values),
        Arg::U64(&fixed.ws_keys),
        Arg::U32(&fixed.ws_touched),
        Arg::I64(&fixed.ws_strides),
        Arg::Long(fixed.ws_size),
        Arg::Int(fixed.ws_sorted),
        Arg::F64(&fixed.tmp),
        Arg::Long(fixed.tmp_size),
        Arg::Long(chunk.0),
        Arg::Long(chunk.1),
        Arg::Long(fixed.out_base),
        Arg::Long(fixed.split),
        Arg::I64(&fixed.carry_rows),
        Arg::F64(&fixed.carry_sums),
        Arg::LocalF64(fixed.local_slots),
        Arg::LocalU64(bitmap_words(fixed.local_slots)),
        Arg::LocalU32(fixed.local_slots),
        Arg::Int(fill),
    ]);
    args
}

impl Arg<'_> {
    /// Declares the argument's type to a kernel being made; every launch
    /// sets its value.
    fn declare(&self, builder: &mut ocl::builders::KernelBuilder<'_>) {
        match self {
            Arg::U8(_) => builder.arg(None::<&Buffer<u8>>),
            Arg::U32(_) => builder.arg(None::<&Buffer<u32>>),
            Arg::U64(_) => builder.arg(None::<&Buffer<u64>>),
            Arg::I64(_) => builder.arg(None::<&Buffer<i64>>),
            Arg::F64(_) => builder.arg(None::<&Buffer<f64>>),
            Arg::F32(_) => builder.arg(None::<&Buffer<f32>>),
            Arg::I32(_) => builder.arg(None::<&Buffer<i32>>),
            Arg::Long(_) => builder.arg(0i64),
            Arg::Int(_) => builder.arg(0i32),
            Arg::LocalF64(n) => builder.arg_local::<f64>(*n),
            Arg::LocalU64(n) => builder.arg_local::<u64>(*n),
            Arg::LocalU32(n) => builder.arg_local::<u32>(*n),
        };
    }

    fn set(&self, kernel: &ocl::Kernel, index: u32) -> ocl::Result<()> {
        match *self {
            Arg::U8(b) => kernel.set_arg(index, b),
            Arg::U32(b) => kernel.set_arg(index, b),
            Arg::U64(b) => kernel.set_arg(index, b),
            Arg::I64(b) => kernel.set_arg(index, b),
            Arg::F64(b) => kernel.set_arg(index, b),
            Arg::F32(b) => kernel.set_arg(index, b),
            Arg::I32(b) => kernel.set_arg(index, b),
            Arg::Long(v) => kernel.set_arg(index, v),
            Arg::Int(v) => kernel.set_arg(index, v),
            Arg::LocalF64(n) => set_local::<f64>(kernel, index, n),
            Arg::LocalU64(n) => set_local::<u64>(kernel, index, n),
            Arg::LocalU32(n) => set_local::<u32>(kernel, index, n),
        }
    }
}

/// Sets a local-memory argument to `len` elements for each work-group
/// (`ocl`'s typed setter takes buffers and scalars only).
fn set_local<T: OclPrm>(kernel: &ocl::Kernel, index: u32, len: usize) -> ocl::Result<()> {
    ocl::core::set_kernel_arg(kernel.as_core(), index, ocl::core::ArgVal::local::<T>(&len)).map_err(Into::into)
}

/// Reads a dense output back: the values, or `partials` partial outputs
/// added to it in block order by `adder`.
fn read_dense(buffer: &Buffer<f64>, values: &mut [f64], partials: Option<usize>, adder: Adder) -> Result<(), String> {
    if values.is_empty() {
        return Ok(());
    }
    let Some(parts) = partials else {
        return buffer.read(values).enq().map_err(error);
    };
    let mut all = vec![0f64; parts * values.len()];
    buffer.read(&mut all).enq().map_err(error)?;
    for part in all.chunks_exact(values.len()) {
        for (value, &p) in values.iter_mut().zip(part) {
            adder.add_to(value, p);
        }
    }
    Ok(())
}

impl CompiledKernel for OpenClKernel {
    fn signature(&self) -> &StorageSignature {
        &self.signature
    }

    fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    fn fallback(&self) -> Option<KernelFallback> {
        let failed = self.failed.lock().unwrap_or_else(|e| e.into_inner());
        let why = failed.as_ref()?;
        Some(KernelFallback {
            tier: super::NAME.into(),
            runs_on: crate::cranelift::NAME.into(),
            reason: format!("the device failed to run the kernel: {why}"),
        })
    }

    unsafe fn run(&self, bind: &Bindings<'_>, out: &mut OutputState) {
        let device_failed = self.failed.lock().unwrap_or_else(|e| e.into_inner()).is_some();
        if !device_failed {
            match self.launch(bind, out) {
                Ok(()) => return,
                Err(why) => *self.failed.lock().unwrap_or_else(|e| e.into_inner()) = Some(why),
            }
        }
        match &self.jit {
            // SAFETY: the caller's contract is the one this kernel's own
            // `run` has, and the jit kernel was compiled from the same
            // request.
            Some(jit) => unsafe { jit.run(bind, out) },
            None => panic!(
                "the OpenCL device failed to run a kernel and no other tier can: {}",
                self.failed
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .as_deref()
                    .unwrap_or_default()
            ),
        }
    }
}

/// A kernel the OpenCL tier handed to another tier, and why.
pub(crate) struct Fallback {
    pub inner: Arc<dyn CompiledKernel>,
    pub tier: &'static str,
    pub reason: String,
    pub text: Option<String>,
}

impl CompiledKernel for Fallback {
    fn signature(&self) -> &StorageSignature {
        self.inner.signature()
    }

    fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    unsafe fn run(&self, bind: &Bindings<'_>, out: &mut OutputState) {
        // SAFETY: the same contract, for a kernel of the same request.
        unsafe { self.inner.run(bind, out) }
    }

    fn fallback(&self) -> Option<KernelFallback> {
        Some(KernelFallback {
            tier: super::NAME.into(),
            runs_on: self.tier.into(),
            reason: self.reason.clone(),
        })
    }
}
