//! `Op::FCall`: the statement language's functions in Cranelift IR.
//!
//! Functions with an exact machine instruction or a short exact sequence
//! (`sqrt`, `abs`, `min`, `max`, products, comparisons, logic) are emitted
//! inline; the
//! transcendental ones call the very Rust function the interpreter and the
//! reference evaluate ([`Func::apply`]), through one `extern "C"` shim per
//! function, so every tier computes the same bits.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, AbiParam, InstBuilder, MemFlagsData, SigRef, Signature, Value};
use cranelift_codegen::isa::CallConv;
use tessera_engine::notation::{Func, IntOp};
use tessera_formats::{Cmp, ValueType};

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
            Func::Cast(ValueType::F64 | ValueType::C64) | Func::Real | Func::Conj => x,
            Func::Imag => clif.fb.ins().f64const(0.0),
            Func::Cast(ValueType::F32) => {
                let narrow = clif.fb.ins().fdemote(types::F32, x);
                clif.fb.ins().fpromote(types::F64, narrow)
            }
            Func::Cast(ValueType::Bool) => {
                let flag = nonzero(clif, x);
                truth(clif, flag)
            }
            Func::Cast(ValueType::I64) => {
                let int = clif.fb.ins().fcvt_to_sint_sat(types::I64, x);
                word(clif, int)
            }
            Func::Cast(ValueType::I32) => {
                let narrow = clif.fb.ins().fcvt_to_sint_sat(types::I32, x);
                let int = clif.fb.ins().sextend(types::I64, narrow);
                word(clif, int)
            }
            Func::Int(op, ty) => integer(clif, op, ty, x, y),
            _ => return None,
        })
    }
}

/// The register word (an `f64`) holding the bits of the integer `int`.
fn word(clif: &mut Clif<'_>, int: Value) -> Value {
    clif.fb.ins().bitcast(types::F64, MemFlagsData::new(), int)
}

/// The integer whose bits the register word `w` holds.
fn int_of(clif: &mut Clif<'_>, w: Value) -> Value {
    clif.fb.ins().bitcast(types::I64, MemFlagsData::new(), w)
}

/// `op` of the integers of type `ty` held in the words `x` and `y`, as
/// [`IntOp`] defines it: computed in 64 bits and, for `i32`, wrapped to 32
/// (sign-extended back), which gives `i32`'s wrapping results.
fn integer(clif: &mut Clif<'_>, op: IntOp, ty: ValueType, x: Value, y: Value) -> Value {
    let (a, b) = (int_of(clif, x), int_of(clif, y));
    let truth = |clif: &mut Clif<'_>, flag: Value| {
        let one = clif.fb.ins().f64const(1.0);
        let zero = clif.fb.ins().f64const(0.0);
        clif.fb.ins().select(flag, one, zero)
    };
    let int = match op {
        IntOp::Add => clif.fb.ins().iadd(a, b),
        IntOp::Sub => clif.fb.ins().isub(a, b),
        IntOp::Mul => clif.fb.ins().imul(a, b),
        IntOp::Div | IntOp::Mod => divide(clif, op, a, b),
        IntOp::Neg => clif.fb.ins().ineg(a),
        IntOp::Abs => clif.fb.ins().iabs(a),
        IntOp::Min => clif.fb.ins().smin(a, b),
        IntOp::Max => clif.fb.ins().smax(a, b),
        IntOp::Square => clif.fb.ins().imul(a, a),
        IntOp::Cube => {
            let square = clif.fb.ins().imul(a, a);
            clif.fb.ins().imul(square, a)
        }
        IntOp::Heaviside => {
            let flag = clif.fb.ins().icmp_imm_s(IntCC::SignedGreaterThan, a, 0);
            clif.fb.ins().uextend(types::I64, flag)
        }
        IntOp::Compare(cmp) => {
            let cc = match cmp {
                Cmp::Lt => IntCC::SignedLessThan,
                Cmp::Le => IntCC::SignedLessThanOrEqual,
                Cmp::Gt => IntCC::SignedGreaterThan,
                Cmp::Ge => IntCC::SignedGreaterThanOrEqual,
                Cmp::Eq => IntCC::Equal,
                Cmp::Ne => IntCC::NotEqual,
            };
            let flag = clif.fb.ins().icmp(cc, a, b);
            return truth(clif, flag);
        }
        IntOp::Cast(ValueType::F64 | ValueType::C64) => return clif.fb.ins().fcvt_from_sint(types::F64, a),
        IntOp::Cast(ValueType::F32) => {
            let narrow = clif.fb.ins().fcvt_from_sint(types::F32, a);
            return clif.fb.ins().fpromote(types::F64, narrow);
        }
        IntOp::Cast(ValueType::Bool) => {
            let flag = clif.fb.ins().icmp_imm_s(IntCC::NotEqual, a, 0);
            return truth(clif, flag);
        }
        IntOp::Cast(ValueType::I64) => a,
        IntOp::Cast(ValueType::I32) => wrap32(clif, a),
    };
    let int = if ty == ValueType::I32 { wrap32(clif, int) } else { int };
    word(clif, int)
}

/// `v` wrapped to 32 bits and sign-extended back.
fn wrap32(clif: &mut Clif<'_>, v: Value) -> Value {
    let narrow = clif.fb.ins().ireduce(types::I32, v);
    clif.fb.ins().sextend(types::I64, narrow)
}

/// `a / b` or `a % b` without a trap: 0 when `b` is 0, and for `b = -1`
/// the quotient `-a` (wrapping) and the remainder 0.
fn divide(clif: &mut Clif<'_>, op: IntOp, a: Value, b: Value) -> Value {
    let zero_divisor = clif.fb.ins().icmp_imm_s(IntCC::Equal, b, 0);
    let minus_one = clif.fb.ins().icmp_imm_s(IntCC::Equal, b, -1);
    let special = clif.fb.ins().bor(zero_divisor, minus_one);
    let one = clif.fb.ins().iconst(types::I64, 1);
    let divisor = clif.fb.ins().select(special, one, b);
    let zero = clif.fb.ins().iconst(types::I64, 0);
    let (result, by_minus_one) = if op == IntOp::Div {
        (clif.fb.ins().sdiv(a, divisor), clif.fb.ins().ineg(a))
    } else {
        (clif.fb.ins().srem(a, divisor), zero)
    };
    let result = clif.fb.ins().select(minus_one, by_minus_one, result);
    clif.fb.ins().select(zero_divisor, zero, result)
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
                Func::Cast(_) | Func::Int(..) | Func::Real | Func::Imag | Func::Conj => {
                    unreachable!("casts, parts and integer operations are inline")
                }
            }
        };
    }
    shims!(
        Sqrt, Cbrt, Exp, Log, Log10, Abs, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Tanh, Asinh, Acosh, Atanh,
        Square, Cube, Heaviside, Not, Pow, Atan2, Min, Max, Mod, Lt, Le, Gt, Ge, Eq, Ne, And, Or, Xor;
        User
    )
}
