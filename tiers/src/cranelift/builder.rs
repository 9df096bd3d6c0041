//! The Cranelift instantiation of the staged level functions.
//!
//! [`Clif`] implements [`tessera_formats::Builder`] with Cranelift IR
//! values: integers are `i64` values, booleans the `i8` values `icmp`
//! yields, and `while_loop` builds a header, a body and an exit block. A
//! level function called with it emits its code into the kernel being
//! built — the same implementation the interpreter runs, with no
//! per-format code here.
//!
//! Storage reaches the kernel through one argument: a table of 64-bit
//! words (array base pointers, level extents and parameters, values
//! pointers, loop sizes) that the runtime fills before each call. [`Slots`]
//! records which word holds what as the code asks for it. Each block loads
//! the words it uses itself: values loaded once at entry would live across
//! every loop and call, and the register allocator would spill them and
//! store them back on every iteration; a load from the table is an L1 hit.

use std::collections::HashMap;

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Block, BlockArg, InstBuilder, MemFlagsData, Type, Value};
use cranelift_frontend::{FunctionBuilder, Variable};
use smallvec::SmallVec;
use tessera_engine::notation::{Func, IntOp as ValueIntOp};
use tessera_engine::runtime::StorageSignature;
use tessera_formats::staging::{LoopBody, LoopCond, LoopState};
use tessera_formats::{ArrayRef, Builder, Cmp, IndexWidth, IntOp, LevelRef, Param, ValueType};

/// What one word of the kernel's argument table holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Slot {
    /// Base pointer of an index array.
    Array(ArrayRef),
    /// A level's extent.
    Extent(LevelRef),
    /// A level's `k`-th format-specific parameter.
    Extra(LevelRef, u8),
    /// Base pointer of an input operand's values.
    Values(u32),
    /// Size of a loop variable.
    Dim(u32),
    /// The first coordinate of the outer loop this run covers.
    ChunkBegin,
    /// The end of the coordinates of the outer loop this run covers.
    ChunkEnd,
    /// Base pointer of a dense output's values.
    Output,
    /// A part of the output's dense workspace (all 0 when it has none).
    Workspace(WorkspacePart),
    /// The buffer appended entries wait in (see `translate::APPEND_BATCH`).
    AppendBuffer,
    /// Base pointer of a vector temporary's components (`Program::temps`).
    Temp(u32),
}

/// The parts of a dense workspace a kernel accumulates into in place
/// (`DenseWorkspaceParts` of the runtime).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum WorkspacePart {
    Values,
    Set,
    Touched,
    Count,
    Strides,
}

/// The words of the argument table, in order, and the value each was
/// loaded into.
#[derive(Debug, Default)]
pub(crate) struct Slots {
    pub list: Vec<Slot>,
    index: HashMap<Slot, usize>,
    loaded: HashMap<(Slot, Block), Value>,
}

/// The builder the translation and the level functions emit through.
pub(crate) struct Clif<'a> {
    pub fb: FunctionBuilder<'a>,
    /// The table argument.
    pub table: Value,
    pub slots: Slots,
    /// The block that enters the innermost loop being emitted, ended by its
    /// branch into the loop and dominating it; table words are loaded there,
    /// before that branch.
    pub preheader: Option<Block>,
    signature: StorageSignature,
    /// The type of the output's values, which decides how they add.
    output_type: ValueType,
    /// The number of keys the output's dense workspace has set, while the
    /// kernel adds to it (stored back to the workspace around calls).
    pub touched_count: Option<Variable>,
    /// The first reason the program cannot be compiled, if any.
    pub error: Option<String>,
}

/// Flags of loads from the argument table: it never changes during a run,
/// is aligned and in bounds.
fn table_flags() -> MemFlagsData {
    MemFlagsData::trusted().with_readonly()
}

/// Flags of loads from input storage: read-only during a run, in bounds
/// by validation; not movable (their bounds come from branches). Not
/// `aligned`: vector loads of two `f64`s need only 8-byte alignment.
pub(crate) fn input_flags() -> MemFlagsData {
    MemFlagsData::new().with_notrap().with_readonly()
}

/// Flags of accesses to output storage.
pub(crate) fn output_flags() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

pub(crate) fn block_args(values: &[Value]) -> SmallVec<[BlockArg; 8]> {
    values.iter().map(|&v| BlockArg::Value(v)).collect()
}

impl<'a> Clif<'a> {
    /// The value type of input `operand` in the signature compiled for.
    pub fn value_type(&self, operand: u32) -> tessera_formats::ValueType {
        self.signature.value_type(operand)
    }

    /// The width of an input's index array in the signature compiled for.
    pub fn width(&self, array: ArrayRef) -> Option<IndexWidth> {
        self.signature.width(array)
    }

    pub fn new(fb: FunctionBuilder<'a>, table: Value, signature: StorageSignature, output_type: ValueType) -> Self {
        Clif {
            fb,
            table,
            slots: Slots::default(),
            preheader: None,
            signature,
            output_type,
            touched_count: None,
            error: None,
        }
    }

    /// `a + b` as the output adds its values: in `f64`, or wrapping for
    /// integers.
    pub fn add_output(&mut self, a: Value, b: Value) -> Value {
        let ty = self.output_type;
        if ty.is_integer() {
            super::functions::inline(self, Func::Int(ValueIntOp::Add, ty), a, b).expect("integer sums are inline")
        } else {
            self.fb.ins().fadd(a, b)
        }
    }

    /// Records why the program cannot be compiled (the first reason wins).
    pub fn fail(&mut self, reason: impl Into<String>) {
        if self.error.is_none() {
            self.error = Some(reason.into());
        }
    }

    /// The value of one word of the argument table. It is loaded at the
    /// end of [`Clif::preheader`] when one is set (once per entry into the
    /// innermost loop being emitted: the word never changes, and the loop
    /// body keeps it in a register), otherwise in the current block; each
    /// place loads a word once.
    pub fn slot(&mut self, slot: Slot) -> Value {
        let block = self.fb.current_block().expect("code is emitted into a block");
        let place = self.preheader.unwrap_or(block);
        if let Some(&v) = self.slots.loaded.get(&(slot, place)) {
            return v;
        }
        let index = *self.slots.index.entry(slot).or_insert_with(|| {
            self.slots.list.push(slot);
            self.slots.list.len() - 1
        });
        let offset = (index * 8) as i32;
        let v = match self.preheader {
            Some(preheader) => {
                let jump = self
                    .fb
                    .func
                    .layout
                    .last_inst(preheader)
                    .expect("a preheader ends in its branch into the loop");
                let mut pos = FuncCursor::new(self.fb.func).at_inst(jump);
                pos.ins().load(types::I64, table_flags(), self.table, offset)
            }
            None => self.fb.ins().load(types::I64, table_flags(), self.table, offset),
        };
        self.slots.loaded.insert((slot, place), v);
        v
    }

    /// `base + index * size`: the address of element `index`.
    pub fn element(&mut self, base: Value, index: Value, size: u8) -> Value {
        let offset = self.fb.ins().ishl_imm_u(index, i64::from(size.trailing_zeros()));
        self.fb.ins().iadd(base, offset)
    }

    /// `state = init; while cond(state) { state = body(state) }; state`,
    /// for state of any types (the types of `init`).
    ///
    /// The loop is rotated — `if cond { do { body } while cond }` — so
    /// each iteration ends in one conditional branch; `cond` is emitted
    /// twice, before the loop and at the end of the body.
    pub fn loop_with(
        &mut self,
        init: &[Value],
        cond: &mut LoopCond<'_, Self, Value, Value>,
        body: &mut LoopBody<'_, Self, Value>,
    ) -> LoopState<Value> {
        let inside = self.fb.create_block();
        let exit = self.fb.create_block();
        for &v in init {
            let ty: Type = self.fb.func.dfg.value_type(v);
            self.fb.append_block_param(inside, ty);
            self.fb.append_block_param(exit, ty);
        }
        let args = block_args(init);
        let c = cond(self, init);
        self.fb.ins().brif(c, inside, &args, exit, &args);
        // The block entering the loop dominates it: table words the loop
        // uses are loaded there, before its branch.
        let entry = self.fb.current_block();
        let outer = std::mem::replace(&mut self.preheader, entry);
        self.fb.switch_to_block(inside);
        let state: LoopState<Value> = self.fb.block_params(inside).iter().copied().collect();
        let next = body(self, &state);
        let args = block_args(&next);
        let c = cond(self, &next);
        self.fb.ins().brif(c, inside, &args, exit, &args);
        self.preheader = outer;
        self.fb.seal_block(inside);
        self.enter(exit);
        self.fb.block_params(exit).iter().copied().collect()
    }

    /// Switches to a block whose predecessors have all been emitted, and
    /// seals it.
    pub fn enter(&mut self, block: Block) {
        self.fb.switch_to_block(block);
        self.fb.seal_block(block);
    }
}

fn int_cc(op: Cmp) -> IntCC {
    match op {
        Cmp::Eq => IntCC::Equal,
        Cmp::Ne => IntCC::NotEqual,
        Cmp::Lt => IntCC::SignedLessThan,
        Cmp::Le => IntCC::SignedLessThanOrEqual,
        Cmp::Gt => IntCC::SignedGreaterThan,
        Cmp::Ge => IntCC::SignedGreaterThanOrEqual,
    }
}

impl Builder for Clif<'_> {
    type Int = Value;
    type Bool = Value;

    fn int(&mut self, value: i64) -> Value {
        self.fb.ins().iconst(types::I64, value)
    }
    fn bool_const(&mut self, value: bool) -> Value {
        self.fb.ins().iconst(types::I8, i64::from(value))
    }
    fn binary(&mut self, op: IntOp, a: Value, b: Value) -> Value {
        if matches!(op, IntOp::Div | IntOp::Rem) {
            // 0 when dividing by 0, as the interpreter's `checked_div`.
            let zero = self.fb.ins().iconst(types::I64, 0);
            let one = self.fb.ins().iconst(types::I64, 1);
            let by_zero = self.fb.ins().icmp(IntCC::Equal, b, zero);
            let divisor = self.fb.ins().select(by_zero, one, b);
            let result = if op == IntOp::Div {
                self.fb.ins().udiv(a, divisor)
            } else {
                self.fb.ins().urem(a, divisor)
            };
            return self.fb.ins().select(by_zero, zero, result);
        }
        let ins = self.fb.ins();
        match op {
            IntOp::Add => ins.iadd(a, b),
            IntOp::Sub => ins.isub(a, b),
            IntOp::Mul => ins.imul(a, b),
            IntOp::Min => ins.smin(a, b),
            IntOp::Max => ins.smax(a, b),
            IntOp::BitAnd => ins.band(a, b),
            IntOp::BitOr => ins.bor(a, b),
            // Cranelift takes shift amounts modulo 64, as the
            // interpreter's `b & 63` does.
            IntOp::Shl => ins.ishl(a, b),
            IntOp::Shr => ins.ushr(a, b),
            IntOp::Div | IntOp::Rem => unreachable!("emitted above"),
        }
    }
    fn compare(&mut self, op: Cmp, a: Value, b: Value) -> Value {
        self.fb.ins().icmp(int_cc(op), a, b)
    }
    fn and(&mut self, a: Value, b: Value) -> Value {
        self.fb.ins().band(a, b)
    }
    fn or(&mut self, a: Value, b: Value) -> Value {
        self.fb.ins().bor(a, b)
    }
    fn not(&mut self, a: Value) -> Value {
        // Booleans are 0 or 1: flip the low bit (`bnot` would give 0xfe).
        self.fb.ins().bxor_imm_u(a, 1)
    }
    fn select(&mut self, cond: Value, then: Value, otherwise: Value) -> Value {
        self.fb.ins().select(cond, then, otherwise)
    }

    fn load(&mut self, array: ArrayRef, index: Value) -> Value {
        let Some(width) = self.width(array) else {
            self.fail(format!(
                "level {} of operand {} has no array {}",
                array.level.level, array.level.operand, array.slot
            ));
            return self.int(0);
        };
        let base = self.slot(Slot::Array(array));
        match width {
            IndexWidth::U32 => {
                let addr = self.element(base, index, 4);
                self.fb.ins().uload32(input_flags(), addr, 0)
            }
            IndexWidth::U64 | IndexWidth::I64 => {
                let addr = self.element(base, index, 8);
                self.fb.ins().load(types::I64, input_flags(), addr, 0)
            }
        }
    }
    fn store(&mut self, _array: ArrayRef, _index: Value, _value: Value) {
        self.fail("compiled kernels do not assemble levels (a level function stores)");
    }
    fn grow(&mut self, _array: ArrayRef, _len: Value) {
        self.fail("compiled kernels do not assemble levels (a level function grows an array)");
    }
    fn param(&mut self, level: LevelRef, param: Param) -> Value {
        match param {
            Param::Extent => self.slot(Slot::Extent(level)),
            Param::Extra(k) => self.slot(Slot::Extra(level, k)),
        }
    }

    fn while_loop(
        &mut self,
        init: &[Value],
        cond: &mut LoopCond<'_, Self, Value, Value>,
        body: &mut LoopBody<'_, Self, Value>,
    ) -> LoopState<Value> {
        self.loop_with(init, cond, body)
    }
}
