//! The Cranelift tier (`jit`): bytecode → Cranelift IR → machine code.
//!
//! [`CraneliftTier`] implements the engine's [`Tier`]: it translates a
//! [`CompileRequest`]'s program (`translate`), inlining level functions
//! through their staged implementation instantiated with Cranelift values
//! (`builder`), compiles it in its own JIT module and returns a kernel
//! (`kernel`) specialised on the request's index widths. Compiled code
//! does no bounds checks: tensors are valid by construction, and the
//! runtime checks formats and index widths before it calls a kernel.

mod builder;
mod functions;
mod kernel;
mod kernel_builder;
mod translate;

use std::sync::{Arc, Mutex};

use cranelift_codegen::ir::{types, AbiParam, UserFuncName};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};
use tessera_engine::runtime::{CompileRequest, CompiledKernel, Tier};

use builder::Clif;
use kernel::{CraneliftKernel, KernelFn};

/// The name that selects this tier (`--tier jit`).
pub const NAME: &str = "jit";

/// How the tier's refusal of a kernel begins when one of its row merges or
/// strided updates reads `f32` or `bool` values (the runtime's code those
/// ops call reads `f64`): a documented limit, the kernel interpreted.
pub const TYPED_VALUES_REFUSAL: &str = "the jit tier reads";

/// Whether `message` (a compilation failure, or a diagnostic quoting one)
/// is the documented refusal of [`TYPED_VALUES_REFUSAL`].
pub fn is_typed_values_refusal(message: &str) -> bool {
    message.contains(TYPED_VALUES_REFUSAL)
}

/// The Cranelift CPU tier. Cheap to share: compilations on several threads
/// use the one target description.
pub struct CraneliftTier {
    isa: OwnedTargetIsa,
}

impl CraneliftTier {
    /// A tier for the host CPU, optimising for speed. Fails on hosts
    /// Cranelift does not support (or that are not 64-bit).
    pub fn new() -> Result<Self, String> {
        let mut flags = settings::builder();
        let set = |flags: &mut settings::Builder, name: &str, value: &str| {
            flags
                .set(name, value)
                .map_err(|e| format!("cranelift setting {name}={value}: {e}"))
        };
        set(&mut flags, "opt_level", "speed")?;
        // Code lives in its own mapping, called through a pointer.
        set(&mut flags, "use_colocated_libcalls", "false")?;
        set(&mut flags, "is_pic", "false")?;
        let verify = if cfg!(debug_assertions) { "true" } else { "false" };
        set(&mut flags, "enable_verifier", verify)?;
        let isa = cranelift_native::builder()
            .map_err(|e| format!("this host is not supported by Cranelift: {e}"))?
            .finish(settings::Flags::new(flags))
            .map_err(|e| format!("cranelift cannot target this host: {e}"))?;
        if isa.pointer_type() != types::I64 {
            return Err("the Cranelift tier needs a 64-bit host".into());
        }
        Ok(CraneliftTier { isa })
    }
}

impl Tier for CraneliftTier {
    fn name(&self) -> &str {
        NAME
    }

    fn compile(&self, request: &CompileRequest) -> Result<Arc<dyn CompiledKernel>, String> {
        let mut module = JITModule::new(JITBuilder::with_isa(self.isa.clone(), default_libcall_names()));
        let mut sig = module.make_signature();
        sig.params.push(AbiParam::new(types::I64));
        sig.params.push(AbiParam::new(types::I64));
        sig.returns.push(AbiParam::new(types::I32));
        let id = module
            .declare_function("tessera_kernel", Linkage::Local, &sig)
            .map_err(|e| e.to_string())?;
        let call_conv = sig.call_conv;
        let mut ctx = module.make_context();
        ctx.func.signature = sig;
        ctx.func.name = UserFuncName::user(0, id.as_u32());
        let mut fctx = FunctionBuilderContext::new();
        let slots = {
            let mut fb = FunctionBuilder::new(&mut ctx.func, &mut fctx);
            let entry = fb.create_block();
            fb.append_block_params_for_function_params(entry);
            fb.switch_to_block(entry);
            fb.seal_block(entry);
            let (table, call_ctx) = (fb.block_params(entry)[0], fb.block_params(entry)[1]);
            let mut clif = Clif::new(fb, table, request.signature.clone(), request.program.value_type);
            translate::translate(&mut clif, &request.program, &request.formats, call_ctx, call_conv);
            if let Some(error) = clif.error {
                return Err(error);
            }
            clif.fb.finalize(module.target_config());
            clif.slots.list
        };
        let text = request.keep_text.then(|| ctx.func.display().to_string());
        module
            .define_function(id, &mut ctx)
            .map_err(|e| format!("cranelift rejected the kernel: {e:?}"))?;
        module
            .finalize_definitions()
            .map_err(|e| format!("cranelift could not finalize the kernel: {e}"))?;
        let code = module.get_finalized_function(id);
        // SAFETY: the function was declared with this signature:
        // `(i64, i64) -> i32` in the host's default calling convention.
        let code = unsafe { std::mem::transmute::<*const u8, KernelFn>(code) };
        Ok(Arc::new(CraneliftKernel {
            code,
            slots,
            signature: request.signature.clone(),
            text,
            append_width: translate::append_width(&request.program),
            temps: request.program.temps.clone(),
            module: Mutex::new(Some(module)),
        }))
    }
}
