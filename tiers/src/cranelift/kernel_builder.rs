//! The Cranelift instantiation of the block ops' [`KernelBuilder`]:
//! floats are `f64` IR values, a run is an address and the stored type,
//! and a reduction over a range is a rotated loop carrying the sum.

use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Value};
use smallvec::SmallVec;
use tessera_engine::block_ops::{KernelBuilder, Length};
use tessera_engine::bytecode::FloatOp;
use tessera_engine::notation::{Func, Reduction};
use tessera_formats::{ArrayRef, Builder, Cmp, LoopState, ValueType};

use super::builder::{input_flags, output_flags, Clif, Slot, WorkspacePart};
use super::functions::{self, FunctionCalls};

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
    /// An `f64x2` value.
    type Pair = Value;
    type Run = ValuesAt;
    /// A run of `f64` storage the kernel writes.
    type Target = ValuesAt;
    type Coords = ArrayRef;

    fn float(&mut self, value: f64) -> Value {
        self.fb.ins().f64const(value)
    }

    fn coordinates(&mut self, array: ArrayRef) -> ArrayRef {
        array
    }

    fn coordinate(&mut self, coords: ArrayRef, position: Value) -> Value {
        self.load(coords, position)
    }

    fn combine(&mut self, reduction: Reduction, a: Value, b: Value) -> Value {
        match reduction.func() {
            None => {
                let op = match reduction {
                    Reduction::Prod => FloatOp::Mul,
                    _ => FloatOp::Add,
                };
                self.float_op(op, a, b)
            }
            Some(func) => functions::inline(self, func, a, b).expect("min, max, || and && are inline"),
        }
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

    fn float_neg(&mut self, x: Value) -> Value {
        self.fb.ins().fneg(x)
    }

    fn float_call(&mut self, func: Func, a: Value, b: Value) -> Value {
        let call_conv = self.fb.func.signature.call_conv;
        FunctionCalls::default().emit(self, call_conv, func, a, b)
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
        let (addr, offset) = self.address(run, index);
        if run.written {
            self.fb.ins().load(types::F64, output_flags(), addr, offset)
        } else {
            load_at(self, run.ty, addr, offset)
        }
    }

    fn run_pair(&mut self, run: ValuesAt, index: Length<Value>) -> Value {
        let (addr, offset) = self.address(run, index);
        let flags = if run.written { output_flags() } else { input_flags() };
        load_pair(self, run.ty, flags, addr, offset)
    }

    fn splat(&mut self, x: Value) -> Value {
        self.fb.ins().splat(types::F64X2, x)
    }

    fn pair_op(&mut self, op: FloatOp, a: Value, b: Value) -> Value {
        // The same instructions on vectors, lane by lane.
        self.float_op(op, a, b)
    }

    fn output_target(&mut self, start: Value) -> ValuesAt {
        let output = self.slot(Slot::Output);
        ValuesAt {
            base: self.element(output, start, 8),
            ty: ValueType::F64,
            written: true,
        }
    }

    fn target_offset(&mut self, target: ValuesAt, by: Value) -> ValuesAt {
        self.run_offset(target, by)
    }

    fn add_at(&mut self, target: ValuesAt, index: Length<Value>, value: Value) {
        let (addr, offset) = self.address(target, index);
        let old = self.fb.ins().load(types::F64, output_flags(), addr, offset);
        let new = self.fb.ins().fadd(old, value);
        self.fb.ins().store(output_flags(), new, addr, offset);
    }

    fn target_pair(&mut self, target: ValuesAt, index: Length<Value>) -> Value {
        let (addr, offset) = self.address(target, index);
        self.fb.ins().load(types::F64X2, output_flags(), addr, offset)
    }

    fn set_target_pair(&mut self, target: ValuesAt, index: Length<Value>, pair: Value) {
        let (addr, offset) = self.address(target, index);
        self.fb.ins().store(output_flags(), pair, addr, offset);
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

    fn for_range_by<F>(&mut self, begin: Value, end: Value, step: u32, mut body: F)
    where
        F: FnMut(&mut Self, Value),
    {
        self.loop_with(
            &[begin],
            &mut |clif, s| clif.compare(Cmp::Lt, s[0], end),
            &mut |clif, s| {
                body(clif, s[0]);
                smallvec::smallvec![clif.fb.ins().iadd_imm_s(s[0], i64::from(step))]
            },
        );
    }

    fn fold_pairs<const N: usize, F>(&mut self, begin: Value, end: Value, init: [Value; N], mut body: F) -> [Value; N]
    where
        F: FnMut(&mut Self, Value, [Value; N]) -> [Value; N],
    {
        self.fold_values(begin, end, Length::Fixed(1), init, &mut body)
    }

    fn fold_floats<const N: usize, F>(
        &mut self,
        begin: Value,
        end: Value,
        step: Length<Value>,
        init: [Value; N],
        mut body: F,
    ) -> [Value; N]
    where
        F: FnMut(&mut Self, Value, [Value; N]) -> [Value; N],
    {
        self.fold_values(begin, end, step, init, &mut body)
    }

    fn when<F>(&mut self, cond: Value, body: F)
    where
        F: FnOnce(&mut Self),
    {
        let (then, done) = (self.fb.create_block(), self.fb.create_block());
        self.fb.ins().brif(cond, then, &[], done, &[]);
        self.enter(then);
        body(self);
        self.fb.ins().jump(done, &[]);
        self.enter(done);
    }

    fn workspace_word(&mut self, index: Value) -> Value {
        let at = self.workspace_element(WorkspacePart::Set, index, 8);
        self.fb.ins().load(types::I64, output_flags(), at, 0)
    }

    fn set_workspace_word(&mut self, index: Value, word: Value) {
        let at = self.workspace_element(WorkspacePart::Set, index, 8);
        self.fb.ins().store(output_flags(), word, at, 0);
    }

    fn push_touched_key(&mut self, key: Value) {
        let Some(count) = self.touched_count else {
            return self.fail("a kernel adds to a workspace whose count it does not keep");
        };
        let n = self.fb.use_var(count);
        let at = self.workspace_element(WorkspacePart::Touched, n, 4);
        self.fb.ins().istore32(output_flags(), key, at, 0);
        let next = self.fb.ins().iadd_imm_s(n, 1);
        self.fb.def_var(count, next);
    }

    fn add_to_workspace(&mut self, key: Value, x: Value) {
        let at = self.workspace_element(WorkspacePart::Values, key, 8);
        let old = self.fb.ins().load(types::F64, output_flags(), at, 0);
        let new = self.add_output(old, x);
        self.fb.ins().store(output_flags(), new, at, 0);
    }

    fn workspace_stride(&mut self, d: usize) -> Value {
        let strides = self.slot(Slot::Workspace(WorkspacePart::Strides));
        self.fb.ins().load(types::I64, output_flags(), strides, (d * 8) as i32)
    }
}

/// The body of [`Clif::fold_values`]: the next state from the index and
/// the state.
type FoldBody<'f, 'c, const N: usize> = dyn FnMut(&mut Clif<'c>, Value, [Value; N]) -> [Value; N] + 'f;

impl<'c> Clif<'c> {
    /// The address of element `index`, of `size` bytes, of a part of the
    /// output's dense workspace.
    fn workspace_element(&mut self, part: WorkspacePart, index: Value, size: u8) -> Value {
        let base = self.slot(Slot::Workspace(part));
        self.element(base, index, size)
    }

    /// `state = init; for i in (begin..end).step_by(step) { state =
    /// body(i, state) }; state`, for values of any types.
    fn fold_values<const N: usize>(
        &mut self,
        begin: Value,
        end: Value,
        step: Length<Value>,
        init: [Value; N],
        body: &mut FoldBody<'_, 'c, N>,
    ) -> [Value; N] {
        let mut start: SmallVec<[Value; 8]> = smallvec::smallvec![begin];
        start.extend(init);
        let state = self.loop_with(
            &start,
            &mut |clif, s| clif.compare(Cmp::Lt, s[0], end),
            &mut |clif, s| {
                let acc = std::array::from_fn(|k| s[k + 1]);
                let next = body(clif, s[0], acc);
                let i = match step {
                    Length::Fixed(step) => clif.fb.ins().iadd_imm_s(s[0], i64::from(step)),
                    Length::In(step) => clif.fb.ins().iadd(s[0], step),
                };
                let mut state: LoopState<Value> = smallvec::smallvec![i];
                state.extend(next);
                state
            },
        );
        std::array::from_fn(|k| state[k + 1])
    }

    /// The address of a run's value `index`, as a base and a constant
    /// offset in bytes (a fixed index folds into the offset).
    fn address(&mut self, run: ValuesAt, index: Length<Value>) -> (Value, i32) {
        let size = run.ty.size() as u8;
        match index {
            Length::Fixed(c) => (run.base, i32::from(size) * c as i32),
            Length::In(c) => (self.element(run.base, c, size), 0),
        }
    }
}

/// Two values from `addr + offset` on, of type `ty`, as an `f64x2`: a
/// vector load for `f64`, two loads widened for the others (a wider load
/// could read past the array's end).
pub(crate) fn load_pair(clif: &mut Clif<'_>, ty: ValueType, flags: MemFlagsData, addr: Value, offset: i32) -> Value {
    if ty == ValueType::F64 {
        return clif.fb.ins().load(types::F64X2, flags, addr, offset);
    }
    let size = ty.size() as i32;
    let (a, b) = (load_at(clif, ty, addr, offset), load_at(clif, ty, addr, offset + size));
    let pair = clif.fb.ins().scalar_to_vector(types::F64X2, a);
    clif.fb.ins().insertlane(pair, b, 1)
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
