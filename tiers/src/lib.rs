//! Compiled tiers of tessera. They translate the engine's bytecode
//! [`Program`](tessera_engine::bytecode::Program) — the one input of every
//! tier — into native code, and implement the engine's
//! [`Tier`](tessera_engine::runtime::Tier) trait; the facade registers them
//! with an [`Engine`](tessera_engine::Engine).
//!
//! - [`cranelift`]: the CPU tier (`jit`). Level functions are inlined
//!   through the same staged implementation the interpreter runs, here
//!   instantiated with Cranelift IR values.
//! - `opencl` (feature `opencl`): the OpenCL tier, the same staged level
//!   functions instantiated with C expressions, run on an OpenCL device.
//!
//! ```
//! use std::sync::Arc;
//! use tessera_engine::{Engine, EvalOptions, Inputs};
//! use tessera_engine::runtime::TierChoice;
//! use tessera_formats::{CoordinateList, Format, Tensor};
//! use tessera_tiers::CraneliftTier;
//!
//! let engine = Engine::new().with_tier(Arc::new(CraneliftTier::new().unwrap()));
//! let mut entries = CoordinateList::new(&[2, 3]);
//! entries.push(&[0, 1], 2.0).unwrap();
//! entries.push(&[1, 2], 3.0).unwrap();
//! let a = Tensor::pack(&entries, Format::csr()).unwrap();
//! let x = Tensor::from_dense(&[3], vec![1.0, 10.0, 100.0]).unwrap();
//! let options = EvalOptions { tier: TierChoice::Named("jit".into()), ..EvalOptions::default() };
//! let inputs = Inputs::new().with("A", &a).with("x", &x);
//! let y = engine.eval_with("y(i) = A(i,j) * x(j)", &inputs, &options).unwrap();
//! assert_eq!(y.to_dense_vec().unwrap(), vec![20.0, 300.0]);
//! assert!(engine.diagnostics().is_empty());
//! ```

pub mod cranelift;
#[cfg(feature = "opencl")]
pub mod opencl;

/// How a device tier's refusal of a kernel begins when the kernel calls a
/// callback operator (a Rust function the device cannot run): a documented
/// limit, the kernel runs on the jit tier instead. Outside the `opencl`
/// feature, so that checks can name it in any build.
pub const CALLBACK_REFUSAL: &str = "it calls the user-defined operator";

/// Whether `message` (a refusal, or a diagnostic quoting one) is the
/// documented refusal of [`CALLBACK_REFUSAL`].
///
/// ```
/// assert!(tessera_tiers::is_callback_refusal("it calls the user-defined operator `f`"));
/// assert!(!tessera_tiers::is_callback_refusal("the jit tier reads f32 values"));
/// ```
pub fn is_callback_refusal(message: &str) -> bool {
    message.contains(CALLBACK_REFUSAL)
}

pub use cranelift::CraneliftTier;
#[cfg(feature = "opencl")]
pub use opencl::OpenClTier;
