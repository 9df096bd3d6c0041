//! The OpenCL tier (`opencl`): bytecode → OpenCL C → a device kernel.
//!
//! [`OpenClTier`] implements the engine's [`Tier`]. It writes a
//! [`CompileRequest`]'s program as OpenCL C (`source`), with level
//! functions inlined through their staged implementation instantiated with
//! C expressions (`ctext`) — no per-format code here — and builds it for
//! its device. Work maps onto work-items by rows of the outer loop
//! (`source::Mapping`), and row dots such as SpMV also by lanes per row or
//! a split over positions, chosen at each run from the rows' lengths
//! (`rows`, [`RowMapping`]); sparse outputs are assembled in two phases
//! (`assembly`), with workspaces in local memory where they fit; inputs
//! stay on the device while their tensors are unchanged (`resident`); each
//! run reads back only the results (`kernel`). Each mapping's kernel is a
//! program of its own, built when a run first needs it.
//!
//! What it cannot run on a device — user-defined operators, which are
//! Rust functions — it hands to the Cranelift tier, which the engine
//! reports once; a device that fails to build or run a kernel does the
//! same. The answers are the other tiers'.
//!
//! ```
//! use std::sync::Arc;
//! use tessera_engine::{Engine, EvalOptions, Inputs};
//! use tessera_engine::runtime::TierChoice;
//! use tessera_formats::{CoordinateList, Format, Tensor};
//! use tessera_tiers::OpenClTier;
//!
//! let engine = Engine::new().with_tier(Arc::new(OpenClTier::new().unwrap()));
//! let mut entries = CoordinateList::new(&[2, 3]);
//! entries.push(&[0, 1], 2.0).unwrap();
//! entries.push(&[1, 2], 3.0).unwrap();
//! let a = Tensor::pack(&entries, Format::csr()).unwrap();
//! let x = Tensor::from_dense(&[3], vec![1.0, 10.0, 100.0]).unwrap();
//! let options = EvalOptions { tier: TierChoice::Named("opencl".into()), ..EvalOptions::default() };
//! let inputs = Inputs::new().with("A", &a).with("x", &x);
//! let y = engine.eval_with("y(i) = A(i,j) * x(j)", &inputs, &options).unwrap();
//! assert_eq!(y.to_dense_vec().unwrap(), vec![20.0, 300.0]);
//! ```

mod assembly;
mod ctext;
mod kernel;
mod kernel_builder;
mod resident;
mod rows;
mod source;

pub use rows::RowMapping;

use std::sync::{Arc, Mutex, OnceLock};

use ocl::enums::{DeviceInfo, DeviceInfoResult};
use ocl::flags::DeviceType;
use ocl::{Context, Device, Platform, Queue};
use tessera_engine::runtime::{CompileRequest, CompiledKernel, Tier};

use crate::cranelift::CraneliftTier;
use kernel::{Fallback, OpenClKernel};
use resident::Resident;

/// The name that selects this tier (`--tier opencl`).
pub const NAME: &str = "opencl";

/// The OpenCL tier on one device.
pub struct OpenClTier {
    context: Context,
    device: Device,
    queue: Queue,
    description: String,
    is_gpu: bool,
    /// The tier that runs what this one cannot.
    jit: Option<CraneliftTier>,
    /// Inputs kept on the device between runs.
    resident: Arc<Resident>,
    /// Work-items with a workspace of their own per launch.
    workspaces: usize,
    /// How row dots (SpMV and its kin) spread over work-items.
    row_mapping: RowMapping,
    /// Launches of each kernel function, by name.
    launches: Arc<Mutex<Vec<(&'static str, u64)>>>,
    /// Bytes of local memory a work-group's workspace may take.
    local_memory: usize,
    /// Workspaces that fit go to local memory (by default on GPUs only: a
    /// CPU device's local memory is its global memory).
    local_workspaces: bool,
}

/// Each device of the platforms installed, with its platform. Listed once
/// per process: ICD loaders are not safe to initialise from two threads
/// at once (two engines made at the same time found no platform).
fn devices() -> Vec<(Platform, Device)> {
    static FOUND: OnceLock<Vec<(Platform, Device)>> = OnceLock::new();
    FOUND.get_or_init(list_devices).clone()
}

fn list_devices() -> Vec<(Platform, Device)> {
    Platform::list()
        .into_iter()
        .flat_map(|platform| {
            Device::list_all(platform)
                .unwrap_or_default()
                .into_iter()
                .map(move |device| (platform, device))
        })
        .collect()
}

fn is_gpu(device: &Device) -> bool {
    matches!(device.info(DeviceInfo::Type), Ok(DeviceInfoResult::Type(t)) if t.contains(DeviceType::GPU))
}

fn has_fp64(device: &Device) -> bool {
    matches!(device.info(DeviceInfo::Extensions), Ok(DeviceInfoResult::Extensions(e)) if e.contains("cl_khr_fp64"))
}

impl OpenClTier {
    /// A tier on the first GPU with double precision, or else the first
    /// other device with it (a CPU implementation such as PoCL). Fails when
    /// no OpenCL platform is installed or no device computes in `f64`
    /// (`cl_khr_fp64`), saying which devices were found.
    pub fn new() -> Result<Self, String> {
        let found = devices();
        if found.is_empty() {
            return Err("no OpenCL device is installed (an OpenCL platform such as PoCL provides one)".into());
        }
        let chosen = found
            .iter()
            .filter(|(_, d)| has_fp64(d))
            .max_by_key(|(_, d)| is_gpu(d))
            .copied();
        let Some((platform, device)) = chosen else {
            let names: Vec<String> = found.iter().map(|(_, d)| d.name().unwrap_or_default()).collect();
            return Err(format!(
                "no OpenCL device computes in double precision (cl_khr_fp64); found: {}",
                names.join(", ")
            ));
        };
        let context = Context::builder()
            .platform(platform)
            .devices(device)
            .build()
            .map_err(|e| format!("OpenCL context on {}: {e}", device.name().unwrap_or_default()))?;
        let queue = Queue::new(&context, device, None).map_err(|e| format!("OpenCL queue: {e}"))?;
        let description = format!(
            "{} ({})",
            device.name().unwrap_or_default().trim(),
            platform.name().unwrap_or_default().trim()
        );
        // A quarter of the device's memory, at most 2 GiB, holds inputs
        // between runs.
        let memory = match device.info(DeviceInfo::GlobalMemSize) {
            Ok(DeviceInfoResult::GlobalMemSize(bytes)) => bytes as usize,
            _ => 0,
        };
        Ok(OpenClTier {
            context,
            device,
            queue,
            description,
            is_gpu: is_gpu(&device),
            jit: CraneliftTier::new().ok(),
            resident: Arc::new(Resident::new((memory / 4).min(2 << 30))),
            // Eight per compute unit keep a CPU's cores and a GPU's units
            // busy; more would only zero more workspaces.
            workspaces: 8 * match device.info(DeviceInfo::MaxComputeUnits) {
                Ok(DeviceInfoResult::MaxComputeUnits(units)) => units.max(1) as usize,
                _ => 1,
            },
            row_mapping: RowMapping::Auto,
            launches: Arc::default(),
            // What the device has, less room for the kernels' own local
            // arrays (a row dot's lane sums).
            local_memory: match device.info(DeviceInfo::LocalMemSize) {
                Ok(DeviceInfoResult::LocalMemSize(bytes)) => (bytes as usize).saturating_sub(LOCAL_RESERVE),
                _ => 0,
            },
            local_workspaces: is_gpu(&device),
        })
    }

    /// This tier with row dots (SpMV and its kin) mapped as `mapping`
    /// rather than chosen at each run from the rows' lengths; a split falls
    /// back to a work-item per row where rows' positions do not follow one
    /// another. Fails for lanes that are not a power of two up to 64, or
    /// empty pieces.
    ///
    /// ```no_run
    /// use tessera_tiers::opencl::RowMapping;
    /// use tessera_tiers::OpenClTier;
    /// let tier = OpenClTier::new().unwrap().with_row_mapping(RowMapping::Lanes(32)).unwrap();
    /// assert!(OpenClTier::new().unwrap().with_row_mapping(RowMapping::Lanes(3)).is_err());
    /// ```
    pub fn with_row_mapping(mut self, mapping: RowMapping) -> Result<Self, String> {
        if !mapping.is_valid() {
            return Err(format!(
                "{mapping:?} cannot map rows: lanes are a power of two up to 64, pieces at least one position"
            ));
        }
        self.row_mapping = mapping;
        Ok(self)
    }

    /// This tier without the Cranelift tier behind it: what it cannot run
    /// on the device fails to compile (the engine then interprets it, and
    /// reports why), and a device that fails to run a kernel panics. For
    /// tests that must see every kernel run on the device.
    pub fn without_fallback(mut self) -> Self {
        self.jit = None;
        self
    }

    /// The device's name and platform.
    pub fn device(&self) -> &str {
        &self.description
    }

    /// The bytes of inputs kept on the device for later runs (each tensor
    /// part once per version of the tensor).
    pub fn resident_bytes(&self) -> usize {
        self.resident.bytes()
    }

    /// This tier with workspaces in the device's local memory where they
    /// fit (`true`; the default on GPUs), or always in global memory
    /// (`false`; the default on CPU devices, whose local memory is their
    /// global memory).
    ///
    /// ```no_run
    /// let tier = tessera_tiers::OpenClTier::new().unwrap().with_local_workspaces(true);
    /// ```
    pub fn with_local_workspaces(mut self, local: bool) -> Self {
        self.local_workspaces = local;
        self
    }

    /// How many times this tier's kernels have launched the kernel function
    /// `name`: `tessera_kernel` (every program's), `tessera_kernel_local` (its
    /// workspace in local memory), `tessera_rows_lanes` or
    /// `tessera_rows_split` (row dots, [`RowMapping`]). Counts the launches
    /// of a sparse output's two phases apart.
    pub fn launches(&self, name: &str) -> u64 {
        let launches = self.launches.lock().unwrap_or_else(|e| e.into_inner());
        launches.iter().find(|(n, _)| *n == name).map_or(0, |(_, count)| *count)
    }

    /// Whether the device is a GPU (not a CPU implementation of OpenCL).
    pub fn is_gpu(&self) -> bool {
        self.is_gpu
    }

    /// Hands `request` to the Cranelift tier, saying why.
    fn fall_back(&self, request: &CompileRequest, reason: String) -> Result<Arc<dyn CompiledKernel>, String> {
        let Some(jit) = &self.jit else {
            return Err(reason);
        };
        let inner = jit.compile(request)?;
        let text = request.keep_text.then(|| {
            format!(
                "// not run on OpenCL: {reason}; it runs on the {} tier:\n{}",
                crate::cranelift::NAME,
                inner.text().unwrap_or_default()
            )
        });
        Ok(Arc::new(Fallback {
            inner,
            tier: crate::cranelift::NAME,
            reason,
            text,
        }))
    }
}

/// Why the OpenCL tier hands `program` to another tier, if it does: what
/// it cannot run on a device (user-defined operators, Rust functions).
///
/// ```
/// use tessera_engine::bytecode::Program;
/// assert!(tessera_tiers::opencl::unmapped(&Program::default()).is_none());
/// ```
pub fn unmapped(program: &tessera_engine::bytecode::Program) -> Option<String> {
    source::unmapped(program)
}

/// Bytes of a device's local memory left to the kernels' own arrays.
const LOCAL_RESERVE: usize = 1024;

/// Stored values a run reads from which automatic promotion prefers a GPU:
/// about 12 MB of input, against a launch's tens of microseconds. An
/// estimate: no GPU was at hand to measure it.
const GPU_WORK: u64 = 1 << 20;

impl Tier for OpenClTier {
    fn name(&self) -> &str {
        NAME
    }

    /// Large runs on a GPU; never on a CPU device, which the Cranelift tier
    /// serves better.
    fn takes(&self, work: u64) -> bool {
        self.is_gpu && work >= GPU_WORK
    }

    fn compile(&self, request: &CompileRequest) -> Result<Arc<dyn CompiledKernel>, String> {
        let source = match source::generate(&request.program, &request.formats, &request.signature) {
            Ok(source) => source,
            Err(reason) => return self.fall_back(request, reason),
        };
        // The kernel every program has is built now, so that a device that
        // cannot build it leaves the kernel to another tier at once; the
        // other mappings' kernels are built when a run first needs them.
        let program = match ocl::Program::builder()
            .src(source.programs[0].1.as_str())
            .devices(self.device)
            .build(&self.context)
        {
            Ok(program) => program,
            Err(e) => {
                return self.fall_back(request, format!("the device could not build the kernel: {e}"));
            }
        };
        let jit = match &self.jit {
            Some(jit) => Some(jit.compile(request)?),
            None => None,
        };
        Ok(Arc::new(OpenClKernel {
            programs: Mutex::new(vec![(source.programs[0].0, program)]),
            sources: source.programs,
            context: self.context.clone(),
            device: self.device,
            queue: self.queue.clone(),
            args: source.args,
            mapping: source.mapping,
            entries: source.entries,
            signature: request.signature.clone(),
            text: request.keep_text.then_some(source.text),
            jit,
            resident: self.resident.clone(),
            workspaces: self.workspaces,
            temps: request.program.temps.clone(),
            failed: Mutex::new(None),
            kernels: Mutex::new(Vec::new()),
            rows: source.rows,
            row_mapping: self.row_mapping,
            is_gpu: self.is_gpu,
            shape: Mutex::new(None),
            launches: self.launches.clone(),
            local_memory: if self.local_workspaces { self.local_memory } else { 0 },
            workspace_pool: Mutex::new(Vec::new()),
            adder: tessera_engine::words::Adder::of(request.program.value_type),
        }))
    }
}
