//! tessera: sparse tensor algebra in index notation, over any sparse format.
//!
//! The facade wires the crates together: [`formats`] (level formats,
//! tensors, file I/O), [`engine`](mod@engine) (statements → bytecode → the interpreter,
//! the kernel cache and tiering) and [`tiers`] (compiled tiers). [`engine()`]
//! builds an [`Engine`] with every compiled tier of this build registered,
//! so hot kernels are promoted to native code.
//!
//! Cargo features: `cli` (default) builds the `tessera` command and its
//! dependencies (clap, rustyline, indicatif, ctrlc, png); an application
//! embedding the library turns it off with `default-features = false`
//! (`examples/embed.rs`). `sprs` and `ndarray` add conversions between
//! [`formats::Tensor`] and those crates' matrices and arrays.
//!
//! ```
//! use tessera::formats::{CoordinateList, Format, Tensor};
//! use tessera::{EvalOptions, Inputs, TierChoice};
//!
//! let mut entries = CoordinateList::new(&[2, 3]);
//! entries.push(&[0, 1], 2.0).unwrap();
//! entries.push(&[1, 2], 3.0).unwrap();
//! let a = Tensor::pack(&entries, Format::csr()).unwrap();
//! let x = Tensor::from_dense(&[3], vec![1.0, 10.0, 100.0]).unwrap();
//! let inputs = Inputs::new().with("A", &a).with("x", &x);
//!
//! let engine = tessera::engine();
//! // Compile with Cranelift before running (`--tier jit`).
//! let options = EvalOptions { tier: TierChoice::Named("jit".into()), ..EvalOptions::default() };
//! let kernel = engine.kernel_for("y(i) = A(i,j) * x(j)", &inputs, &options).unwrap();
//! let y = kernel.run_with(&inputs, &options).unwrap();
//! assert_eq!(y.to_dense_vec().unwrap(), vec![20.0, 300.0]);
//! assert!(tessera::clif_text(&kernel).unwrap().contains("function"));
//! ```

use std::sync::Arc;

pub use tessera_engine as engine;
pub use tessera_formats as formats;
pub use tessera_tiers as tiers;

pub use tessera_engine::runtime::{KernelStats, PromotionPolicy, TierChoice, TierDiagnostic};
pub use tessera_engine::{Engine, EngineError, EvalOptions, Inputs, Kernel};

/// The name of the Cranelift tier (`--tier jit`).
pub const JIT: &str = tessera_tiers::cranelift::NAME;

/// The name of the OpenCL tier (`--tier opencl`, built with the feature
/// `opencl`).
pub const OPENCL: &str = "opencl";

/// An engine with every compiled tier of this build registered (the
/// Cranelift tier, `jit`, and with the feature `opencl` the OpenCL tier
/// when a device with double precision is installed) and the default
/// [`PromotionPolicy`]. Automatic promotion goes to the OpenCL tier for
/// large runs when its device is a GPU, and to the Cranelift tier
/// otherwise. A tier this host cannot run is left out, and
/// [`Engine::tier_names`] says so.
pub fn engine() -> Engine {
    engine_with(PromotionPolicy::default())
}

/// [`engine()`] with a promotion policy.
pub fn engine_with(policy: PromotionPolicy) -> Engine {
    let mut engine = Engine::new().with_promotion(policy);
    if let Ok(tier) = tessera_tiers::CraneliftTier::new() {
        engine = engine.with_tier(Arc::new(tier));
    }
    #[cfg(feature = "opencl")]
    if let Ok(tier) = tessera_tiers::OpenClTier::new() {
        engine = engine.with_tier(Arc::new(tier));
    }
    engine
}

/// The Cranelift IR of a kernel (`--print clif`), compiled for the index
/// widths of its latest run.
pub fn clif_text(kernel: &Kernel) -> Result<String, EngineError> {
    kernel.compiled_text(JIT)
}
