//! `Op::FCall`: the statement language's functions in Cranelift IR.
//!
//! Functions with an exact machine instruction or a short exact sequence
//! (`sqrt`, `abs`, `min`, `max`, products, comparisons, logic) are emitted
//! inline; the
//! transcendental ones call the very Rust function the interpreter and the
//! reference evaluate ([`Func::apply`]), through one `extern "C"` shim per
//! function, so every tier computes the same bits.

use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::{types, AbiParam, InstBuilder, SigRef, Signature, Value};
use cranelift_codegen::isa::CallConv;
use tessera_engine::notation::Func;
use tessera_formats::ValueType;

use super::builder::Clif;

/// The signatures of the shims, imported into a function once.
#[derive(Default)]
pub(super) struct FunctionCalls {
    signature: Option<SigRef>,
    user_signature: Option<SigRef>,
}

impl FunctionCalls {
    /// `func(x, y)` (`y` is ignored by functions of one argument).
    pub(super) fn emit(&mut self, clif: &mut Clif<'_>, call_conv: CallConv, func: Func, x: Value, y: Value) -> Value {
        if let Some(v) = inline(clif, func, x, y) {
            return v;
        }
        if let Func::User(id) = func {
            // A user-defined operator: its registered function, by number.
            let signature = *self.user_signature.get_or_insert_with(|| {
                let mut sig = Signature::new(call_conv);
                sig.params.push(AbiParam::new(types::I64));
                sig.params.extend([AbiParam::new(types::F64); 2]);
                sig.returns.push(AbiParam::new(types::F64));
                clif.fb.import_signature(sig)
            });
            let callee = clif.fb.ins().iconst(types::I64, call_user as *const () as usize as i64);
            let id = clif.fb.ins().iconst(types::I64, i64::from(id));
            let call = clif.fb.ins().call_indirect(signature, callee, &[id, x, y]);
            return clif.fb.inst_results(call)[0];
        }
        let signature = *self.signature.get_or_insert_with(|| {
            let mut sig = Signature::new(call_conv);
            sig.params.extend([AbiParam::new(types::F64); 2]);
            sig.returns.push(AbiParam::new(types::F64));
            clif.fb.import_signature(sig)
        });
        let callee = clif
            .fb
            .ins()
            .iconst(types::I64, shim(func) as *const () as usize as i64);
        let call = clif.fb.ins().call_indirect(signature, callee, &[x, y]);
        clif.fb.inst_results(call)[0]
    }
}

/// `func(x, y)` as instructions, for the functions machine code has
/// (`None` for the others, which call their shim).
pub(super) fn inline(clif: &mut Clif<'_>, func: Func, x: Value, y: Value) -> Option<Value> {
    {
        let truth = |clif: &mut Clif<'_>, flag: Value| {
            let one = clif.fb.ins().f64const(1.0);
            let zero = clif.fb.ins().f64const(0.0);
            clif.fb.ins().select(flag, one, zero)
        };
        let nonzero = |clif: &mut Clif<'_>, v: Value| {
            let zero = clif.fb.ins().f64const(0.0);
            clif.fb.ins().fcmp(FloatCC::NotEqual, v, zero)
        };
        let compare = |clif: &mut Clif<'_>, cc: FloatCC| {
            let flag = clif.fb.ins().fcmp(cc, x, y);
            truth(clif, flag)
        };
        Some(match func {
            Func::Sqrt => clif.fb.ins().sqrt(x),
            Func::Abs => clif.fb.ins().fabs(x),
            Func::Min => min(clif, x, y),
            // max(x, y) = -min(-x, -y), exactly (NaN and signed zeros too).
            Func::Max => {
                let (nx, ny) = (clif.fb.ins().fneg(x), clif.fb.ins().fneg(y));
                let m = min(clif, nx, ny);
                clif.fb.ins().fneg(m)
            }
            Func::Square => clif.fb.ins().fmul(x, x),
            Func::Cube => {
                let square = clif.fb.ins().fmul(x, x);
                clif.fb.ins().fmul(square, x)
            }
            Func::Lt => compare(clif, FloatCC::LessThan),
            Func::Le => compare(clif, FloatCC::LessThanOrEqual),
            Func::Gt => compare(clif, FloatCC::GreaterThan),
            Func::Ge => compare(clif, FloatCC::GreaterThanOrEqual),
            Func::Eq => compare(clif, FloatCC::Equal),
            Func::Ne => compare(clif, FloatCC::NotEqual),
            Func::Heaviside => {
                let zero = clif.fb.ins().f64const(0.0);
                let flag = clif.fb.ins().fcmp(FloatCC::GreaterThan, x, zero);
                truth(clif, flag)
            }
            Func::Not => {
                let zero = clif.fb.ins().f64const(0.0);
                let flag = clif.fb.ins().fcmp(FloatCC::Equal, x, zero);
                truth(clif, flag)
            }
            Func::And | Func::Or | Func::Xor => {
                let (a, b) = (nonzero(clif, x), nonzero(clif, y));
                let flag = match func {
                    Func::And => clif.fb.ins().band(a, b),
                    Func::Or => clif.fb.ins().bor(a, b),
                    _ => clif.fb.ins().bxor(a, b),
                };
                truth(clif, flag)
            }
            Func::Cast(ValueType::F64) => x,
            Func::Cast(ValueType::F32) => {
                let narrow = clif.fb.ins().fdemote(types::F32, x);
                clif.fb.ins().fpromote(types::F64, narrow)
            }
            Func::Cast(ValueType::Bool) => {
                let flag = nonzero(clif, x);
                truth(clif, flag)
            }
            _ => return None,
        })
    }
}

/// `min(x, y)` as [`Func::apply`] has it (NaN from either side, -0 below
/// +0), without branches. Cranelift's `fmin` lowers with branches on x86;
/// here two pseudo-minimums (`x < y ? x : y`, one `minsd` each) are or-ed:
/// they agree where the operands are ordered and differ; where they are
/// equal, the or keeps a sign bit (-0); where one is NaN, the or of a NaN
/// with anything is a NaN.
fn min(clif: &mut Clif<'_>, x: Value, y: Value) -> Value {
    let x_first = clif.fb.ins().fcmp(FloatCC::LessThan, x, y);
    let a = clif.fb.ins().select(x_first, x, y);
    let y_first = clif.fb.ins().fcmp(FloatCC::LessThan, y, x);
    let b = clif.fb.ins().select(y_first, y, x);
    clif.fb.ins().bor(a, b)
}

type Shim = extern "C" fn(f64, f64) -> f64;

/// A user-defined operator's value. A panic in it must not unwind into
/// machine code: it aborts the process, as a panic in any `extern "C"`
/// function does.
extern "C" fn call_user(id: u64, x: f64, y: f64) -> f64 {
    Func::User(id as u16).apply(&[x, y])
}

/// The shim that computes `func` as [`Func::apply`] does.
fn shim(func: Func) -> Shim {
    macro_rules! shims {
        ($($name:ident),* ; $user:ident) => {
            match func {
                $(Func::$name => {
                    extern "C" fn call(x: f64, y: f64) -> f64 {
                        Func::$name.apply(&[x, y])
                    }
                    call
                })*
                Func::$user(_) => unreachable!("user-defined operators call call_user"),
                Func::Cast(_) => unreachable!("casts are inline"),
            }
        };
    }
    shims!(
        Sqrt, Cbrt, Exp, Log, Log10, Abs, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Tanh, Asinh, Acosh, Atanh,
        Square, Cube, Heaviside, Not, Pow, Atan2, Min, Max, Mod, Lt, Le, Gt, Ge, Eq, Ne, And, Or, Xor;
        User
    )
}
