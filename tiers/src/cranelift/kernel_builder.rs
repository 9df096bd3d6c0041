//! The Cranelift instantiation of the block ops' [`KernelBuilder`]:
//! floats are `f64` IR values, a run is an address and the stored type,
//! and a reduction over a range is a rotated loop carrying the sum.

use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Value};
use tessera_engine::block_ops::{KernelBuilder, Length};
use tessera_engine::bytecode::FloatOp;
use tessera_formats::{Builder, Cmp, ValueType};

use super::builder::{input_flags, output_flags, Clif, Slot};

/// A run of values in compiled code: the address of its first value, the
/// values' type, and whether the kernel writes them (a vector temporary,
/// read in program order rather than as an input).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ValuesAt {
    pub base: Value,
    pub ty: ValueType,
    pub written: bool,
}

impl KernelBuilder for Clif<'_> {
    type Float = Value;
    type Run = ValuesAt;

    fn float(&mut self, value: f64) -> Value {
        self.fb.ins().f64const(value)
    }

    fn float_op(&mut self, op: FloatOp, a: Value, b: Value) -> Value {
        let ins = self.fb.ins();
        match op {
            FloatOp::Add => ins.fadd(a, b),
            FloatOp::Sub => ins.fsub(a, b),
            FloatOp::Mul => ins.fmul(a, b),
            FloatOp::Div => ins.fdiv(a, b),
        }
    }

    fn value_run(&mut self, operand: u32, start: Value) -> ValuesAt {
        let values = self.slot(Slot::Values(operand));
        let ty = self.value_type(operand);
        ValuesAt {
            base: self.element(values, start, ty.size() as u8),
            ty,
            written: false,
        }
    }

    fn temp_run(&mut self, temp: u32) -> ValuesAt {
        ValuesAt {
            base: self.slot(Slot::Temp(temp)),
            ty: ValueType::F64,
            written: true,
        }
    }

    fn run_at(&mut self, run: ValuesAt, index: Length<Value>) -> Value {
        let size = run.ty.size() as u8;
        let (addr, offset) = match index {
            Length::Fixed(c) => (run.base, i32::from(size) * c as i32),
            Length::In(c) => (self.element(run.base, c, size), 0),
        };
        if run.written {
            self.fb.ins().load(types::F64, output_flags(), addr, offset)
        } else {
            load_at(self, run.ty, addr, offset)
        }
    }

    fn run_offset(&mut self, run: ValuesAt, by: Value) -> ValuesAt {
        ValuesAt {
            base: self.element(run.base, by, run.ty.size() as u8),
            ..run
        }
    }

    fn add_to_output(&mut self, position: Value, value: Value) {
        let output = self.slot(Slot::Output);
        let addr = self.element(output, position, 8);
        let old = self.fb.ins().load(types::F64, output_flags(), addr, 0);
        let new = self.fb.ins().fadd(old, value);
        self.fb.ins().store(output_flags(), new, addr, 0);
    }

    fn for_range<F>(&mut self, begin: Value, end: Value, mut body: F)
    where
        F: FnMut(&mut Self, Value),
    {
        self.loop_with(
            &[begin],
            &mut |clif, s| clif.compare(Cmp::Lt, s[0], end),
            &mut |clif, s| {
                body(clif, s[0]);
                smallvec::smallvec![clif.fb.ins().iadd_imm_s(s[0], 1)]
            },
        );
    }

    fn fold_range<F>(&mut self, begin: Value, end: Value, init: Value, mut body: F) -> Value
    where
        F: FnMut(&mut Self, Value, Value) -> Value,
    {
        let state = self.loop_with(
            &[begin, init],
            &mut |clif, s| clif.compare(Cmp::Lt, s[0], end),
            &mut |clif, s| {
                let acc = body(clif, s[0], s[1]);
                smallvec::smallvec![clif.fb.ins().iadd_imm_s(s[0], 1), acc]
            },
        );
        state[1]
    }
}

/// The value of type `ty` at `addr + offset` (bytes) of an input, as `f64`.
pub(crate) fn load_at(clif: &mut Clif<'_>, ty: ValueType, addr: Value, offset: i32) -> Value {
    match ty {
        ValueType::F64 => clif.fb.ins().load(types::F64, input_flags(), addr, offset),
        ValueType::F32 => {
            let narrow = clif.fb.ins().load(types::F32, input_flags(), addr, offset);
            clif.fb.ins().fpromote(types::F64, narrow)
        }
        ValueType::Bool => {
            let byte = clif.fb.ins().uload8(types::I32, input_flags(), addr, offset);
            clif.fb.ins().fcvt_from_uint(types::F64, byte)
        }
        // Integers are held as their bits (sign-extended to 64).
        ValueType::I64 => clif.fb.ins().load(types::F64, input_flags(), addr, offset),
        ValueType::I32 => {
            let int = clif.fb.ins().sload32(input_flags(), addr, offset);
            clif.fb.ins().bitcast(types::F64, MemFlagsData::new(), int)
        }
        ValueType::C64 => unreachable!("complex tensors reach kernels as their real and imaginary parts"),
    }
}
