//! Execution tiers as the command sees them: the one place that builds an
//! [`Engine`] for a `--tier` choice, names the tier that ran, and produces
//! tier-specific listings (`--print clif`, `--print opencl`).
//!
//! Every subcommand goes through [`engine_for`]; when compiled tiers are
//! registered in the facade, this module is the only one to change.

use std::fmt;

use clap::ValueEnum;
use tessera::{Engine, Inputs, Kernel, TierChoice};

use super::error::{CliError, Result};

/// The `--tier` choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Tier {
    /// The interpreter, promoting hot kernels to the jit tier.
    Auto,
    /// The bytecode interpreter.
    Interp,
    /// Cranelift-compiled native code.
    Jit,
    /// OpenCL kernels on a GPU.
    Opencl,
}

impl Tier {
    pub fn name(self) -> &'static str {
        match self {
            Tier::Auto => "auto",
            Tier::Interp => "interp",
            Tier::Jit => "jit",
            Tier::Opencl => "opencl",
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An engine that runs kernels on `tier`, or why this build cannot.
pub fn engine_for(tier: Tier) -> Result<Engine> {
    #[cfg(feature = "opencl")]
    if tier == Tier::Opencl {
        if let Err(why) = tessera::tiers::OpenClTier::new() {
            return Err(CliError::Unavailable(format!("tier opencl: {why}")));
        }
    }
    let engine = tessera::engine();
    match tier {
        Tier::Auto | Tier::Interp => Ok(engine),
        Tier::Jit | Tier::Opencl if engine.tier_names().iter().any(|t| t == tier.name()) => Ok(engine),
        Tier::Jit | Tier::Opencl => {
            let mut available = vec!["auto".to_string()];
            available.extend(engine.tier_names());
            Err(CliError::TierUnavailable(tier.name(), available.join(", ")))
        }
    }
}

/// How the engine is asked to run kernels for a `--tier` choice.
pub fn tier_choice(tier: Tier) -> TierChoice {
    match tier {
        Tier::Auto => TierChoice::Auto,
        Tier::Interp => TierChoice::Interpreter,
        Tier::Jit => TierChoice::Named(tessera::JIT.to_string()),
        Tier::Opencl => TierChoice::Named(tessera::OPENCL.to_string()),
    }
}

/// The tier that ran `kernel` when `tier` was asked for: `auto` promotes
/// hot kernels to the jit tier.
pub fn tier_that_ran(tier: Tier, kernel: &Kernel) -> Tier {
    match tier {
        Tier::Auto if kernel.is_compiled() => Tier::Jit,
        Tier::Auto => Tier::Interp,
        other => other,
    }
}

/// Cranelift IR of a kernel compiled for these inputs (`--print clif`).
pub fn clif_text(kernel: &Kernel, inputs: &Inputs<'_>, sizes: &[(String, usize)]) -> Result<String> {
    kernel
        .compiled_text_for(inputs, sizes, tessera::JIT)
        .map_err(|e| CliError::Unavailable(format!("--print clif: {e}")))
}

/// OpenCL source of a kernel compiled for these inputs (`--print opencl`).
pub fn opencl_text(kernel: &Kernel, inputs: &Inputs<'_>, sizes: &[(String, usize)]) -> Result<String> {
    if !cfg!(feature = "opencl") {
        return Err(CliError::Unavailable(
            "--print opencl needs the opencl tier: build tessera with `--features opencl`".into(),
        ));
    }
    kernel
        .compiled_text_for(inputs, sizes, tessera::OPENCL)
        .map_err(|e| CliError::Unavailable(format!("--print opencl: {e}")))
}
