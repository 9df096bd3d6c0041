//! An OpenCL kernel at run time: the built program, the arguments it
//! reads, and how its work maps onto work-items.
//!
//! Each run uploads the storage the kernel reads and the dense output,
//! launches one work-item per row (or one in all), and reads the output
//! back. A launch the device refuses runs the same program on the Cranelift
//! kernel compiled beside it, so a device failure never loses an answer.

use std::sync::{Arc, Mutex};

use ocl::{Buffer, MemFlags, OclPrm, Queue};
use tessera_engine::interp::Bindings;
use tessera_engine::runtime::output::OutputState;
use tessera_engine::runtime::{CompiledKernel, StorageSignature};
use tessera_formats::IndexArray;

use super::ctext::{Args, Pointer, Scalar};
use super::source::{Mapping, KERNEL_NAME};

/// A kernel built for an OpenCL device.
pub(crate) struct OpenClKernel {
    pub program: ocl::Program,
    pub queue: Queue,
    pub args: Args,
    pub mapping: Mapping,
    pub signature: StorageSignature,
    pub text: Option<String>,
    /// The Cranelift kernel of the same program, run when the device fails.
    pub jit: Option<Arc<dyn CompiledKernel>>,
    /// Why the device failed, once it has: later runs go to `jit` at once.
    pub failed: Mutex<Option<String>>,
}

/// A buffer of one of the element types the kernel reads.
enum Upload {
    U32(Buffer<u32>),
    U64(Buffer<u64>),
    I64(Buffer<i64>),
    F64(Buffer<f64>),
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

impl OpenClKernel {
    /// Runs the kernel on the device; an error leaves `out` as it was.
    fn launch(&self, bind: &Bindings<'_>, out: &mut OutputState) -> Result<(), String> {
        let (out_base, out_values) = out
            .dense_values_mut()
            .ok_or("the OpenCL tier writes dense outputs only")?;
        let (chunk_begin, chunk_end) = bind.chunk;
        let items = match self.mapping {
            Mapping::Single => 1,
            Mapping::ItemPerRow => (chunk_end - chunk_begin).max(0) as usize,
        };
        if items == 0 {
            return Ok(());
        }
        let queue = &self.queue;
        let read = MemFlags::new().read_only();
        let error = |e: ocl::Error| e.to_string();
        let mut uploads = Vec::with_capacity(self.args.pointers.len());
        for pointer in &self.args.pointers {
            uploads.push(match *pointer {
                Pointer::Array(array, _) => {
                    let storage = &bind.levels[array.level.operand as usize][array.level.level as usize];
                    match &storage.arrays[array.slot as usize] {
                        IndexArray::U32(v) => Upload::U32(upload(queue, v, read).map_err(error)?),
                        IndexArray::U64(v) => Upload::U64(upload(queue, v, read).map_err(error)?),
                        IndexArray::I64(v) => Upload::I64(upload(queue, v, read).map_err(error)?),
                    }
                }
                Pointer::Values(operand) => {
                    Upload::F64(upload(queue, bind.values[operand as usize], read).map_err(error)?)
                }
            });
        }
        let scalars: Vec<i64> = self
            .args
            .scalars
            .iter()
            .map(|scalar| match *scalar {
                Scalar::Extent(l) => bind.levels[l.operand as usize][l.level as usize].extent as i64,
                Scalar::Extra(l, k) => bind.levels[l.operand as usize][l.level as usize].params[k as usize] as i64,
                Scalar::Dim(var) => bind.dims[var as usize],
            })
            .collect();
        let scalars = upload(queue, &scalars, read).map_err(error)?;
        let output = upload(queue, out_values, MemFlags::new().read_write()).map_err(error)?;
        let mut builder = ocl::Kernel::builder();
        builder
            .program(&self.program)
            .name(KERNEL_NAME)
            .queue(queue.clone())
            .global_work_size(items);
        for upload in &uploads {
            match upload {
                Upload::U32(b) => builder.arg(b),
                Upload::U64(b) => builder.arg(b),
                Upload::I64(b) => builder.arg(b),
                Upload::F64(b) => builder.arg(b),
            };
        }
        builder
            .arg(&output)
            .arg(&scalars)
            .arg(chunk_begin)
            .arg(chunk_end)
            .arg(out_base as i64);
        let kernel = builder.build().map_err(error)?;
        // SAFETY: the kernel's arguments are the buffers above, which hold
        // the valid storage the source was generated for (the runtime's
        // contract for `run`), and the output covers every position the
        // chunk writes.
        unsafe { kernel.enq().map_err(error)? };
        if !out_values.is_empty() {
            output.read(&mut *out_values).enq().map_err(error)?;
        }
        Ok(())
    }
}

impl CompiledKernel for OpenClKernel {
    fn signature(&self) -> &StorageSignature {
        &self.signature
    }

    fn text(&self) -> Option<&str> {
        self.text.as_deref()
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
                self.failed.lock().unwrap_or_else(|e| e.into_inner()).as_deref().unwrap_or_default()
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

    fn fallback(&self) -> Option<(&str, &str)> {
        Some((self.tier, &self.reason))
    }
}
