//! Bytecode → Cranelift IR.
//!
//! Takes a [`Program`] and the level formats of its operands; emits the body
//! of `fn(table: *const u64, ctx: *mut c_void) -> u32` into a [`Clif`]
//! builder. Registers become Cranelift variables (the frontend builds SSA
//! form) and jump targets become blocks. Scalar ops are the walk every
//! compiled tier shares ([`scalar_op`]): the ones that name a level
//! function call that level's one staged implementation with the Cranelift
//! builder, inlining it. Output ops write a dense output in place or call back into
//! the runtime's output state ([`super::kernel`]); a callback that fails
//! makes the kernel return 1 at once. Inner products ([`Op::DotBlock`],
//! [`Op::RowsDot`]) and dense updates ([`Op::DenseAxpy`], [`Op::RowAxpy`])
//! become loops with the level's coordinate loads inlined.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    types, AbiParam, Block, InstBuilder, MemFlagsData, SigRef, Signature, StackSlot, StackSlotData, StackSlotKind,
    Value,
};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::Variable;
use smallvec::SmallVec;
use tessera_engine::block_ops::{
    add_products, block_rows_dot, dense_axpy, dense_dot, dense_rows_dot, format_of, output_row, row_axpy, rows_dot,
    scalar_op, segment_dot, strided_rows, value_runs, values_axpy, workspace_add, workspace_key, workspace_row,
    BlockOperands, Columns, KernelBuilder, Length, RegisterFile, RowsOf, ScalarOp, StridedRead,
};
use tessera_engine::bytecode::{
    AxpyFactor, BReg, BlockRows, BlockRun, CoordinateRun, DotFactor, FReg, IReg, Op, Program, Regs, RowOp, RunLength,
    Strided, StridedColumns, StridedRun, ValueRun,
};
use tessera_engine::notation::{Func, Semiring};
use tessera_formats::{ArrayRef, Builder, Cmp, IndexWidth, Level, LevelFormat, LevelRef, ValueType};

use super::builder::{output_flags, Clif, Slot, WorkspacePart};
use super::functions::FunctionCalls;
use super::kernel;
use super::kernel_builder::{load_at, ValuesAt};

/// A row merge's op and its scales' registers.
type MergeOp = (RowOp, Option<[FReg; 2]>);

struct Translator<'p> {
    program: &'p Program,
    formats: &'p [Vec<LevelFormat>],
    ctx: Value,
    call_conv: CallConv,
    ivars: Vec<Option<Variable>>,
    fvars: Vec<Option<Variable>>,
    bvars: Vec<Option<Variable>>,
    /// The block that starts at each op index (and one past the end).
    blocks: Vec<Option<Block>>,
    /// Where a flush's prefix coordinates are passed.
    prefix_slot: Option<StackSlot>,
    /// The signature of `kernel::workspace_flush`.
    flush_signature: Option<SigRef>,
    functions: FunctionCalls,
    fail: Option<Block>,
    /// The entries waiting in the append buffer (see [`APPEND_BATCH`]).
    pending_appends: Option<Variable>,
    /// The signature of `kernel::append_batch`.
    batch_signature: Option<SigRef>,
}

/// Entries a kernel buffers before handing them to the runtime's
/// assembler in one call (appends in between cost a few stores).
pub(crate) const APPEND_BATCH: usize = 256;

/// The number of coordinates of the program's appended entries, if it
/// appends: each buffered entry is that many coordinates and the value's
/// bits, one 64-bit word each.
pub(crate) fn append_width(program: &Program) -> Option<usize> {
    program.ops.iter().find_map(|op| match op {
        Op::Append { coords, .. } => Some(coords.len()),
        _ => None,
    })
}

/// Translates `program` into `clif`, whose current block is the entry
/// block. Errors are left in `clif.error`.
pub(crate) fn translate(
    clif: &mut Clif<'_>,
    program: &Program,
    formats: &[Vec<LevelFormat>],
    ctx: Value,
    call_conv: CallConv,
) {
    let n = program.ops.len();
    let mut t = Translator {
        program,
        formats,
        ctx,
        call_conv,
        ivars: Vec::new(),
        fvars: Vec::new(),
        bvars: Vec::new(),
        blocks: vec![None; n + 1],
        prefix_slot: None,
        flush_signature: None,
        functions: FunctionCalls::default(),
        fail: None,
        pending_appends: None,
        batch_signature: None,
    };
    t.find_blocks(clif);
    if clif.error.is_some() {
        return;
    }
    t.body(clif);
}

fn freturn(clif: &mut Clif<'_>, status: i64) {
    let s = clif.fb.ins().iconst(types::I32, status);
    clif.fb.ins().return_(&[s]);
}

impl Translator<'_> {
    /// Makes a block at op 0, at every jump target, and after every op that
    /// ends a block.
    fn find_blocks(&mut self, clif: &mut Clif<'_>) {
        let n = self.program.ops.len();
        let mut leader = vec![false; n + 1];
        leader[0] = true;
        leader[n] = true;
        for (pc, op) in self.program.ops.iter().enumerate() {
            match op {
                Op::Jump { to } | Op::JumpIf { to, .. } | Op::JumpIfNot { to, .. } => {
                    if *to >= n {
                        clif.fail(format!("op {pc} jumps to {to}, past the end of the program"));
                        return;
                    }
                    leader[*to] = true;
                    leader[pc + 1] = true;
                }
                Op::Halt => leader[pc + 1] = true,
                _ => {}
            }
        }
        for (pc, &is) in leader.iter().enumerate() {
            if is {
                self.blocks[pc] = Some(clif.fb.create_block());
            }
        }
    }

    fn block(&self, pc: usize) -> Block {
        self.blocks[pc].expect("jump targets and fall-through successors start blocks")
    }

    fn var(vars: &mut Vec<Option<Variable>>, clif: &mut Clif<'_>, r: u32, ty: types::Type) -> Variable {
        let r = r as usize;
        if vars.len() <= r {
            vars.resize(r + 1, None);
        }
        *vars[r].get_or_insert_with(|| clif.fb.declare_var(ty))
    }

    /// The level format of `level`, or a recorded error.
    fn format(&self, clif: &mut Clif<'_>, level: LevelRef) -> Option<LevelFormat> {
        format_of(self.formats, level).map_err(|why| clif.fail(why)).ok()
    }

    /// Base pointer of an input operand's values, or a recorded error.
    /// Operand `operand`'s values, which the op reads as `f64`: row merges
    /// and strided updates (the runtime's code, which reads `f64`); a
    /// program reading other types there is interpreted. Every other op
    /// reads any type ([`typed_values`](Self::typed_values)).
    fn values(&self, clif: &mut Clif<'_>, operand: u32) -> Option<Value> {
        let (values, ty) = self.typed_values(clif, operand)?;
        if ty != ValueType::F64 {
            clif.fail(format!(
                "{} {ty} values in every op but row merges and strided updates (DIA, ELL), and this program reads operand {operand}'s in one",
                super::TYPED_VALUES_REFUSAL
            ));
            return None;
        }
        Some(values)
    }

    /// Operand `operand`'s values and their type.
    fn typed_values(&self, clif: &mut Clif<'_>, operand: u32) -> Option<(Value, ValueType)> {
        if operand as usize >= self.program.inputs {
            clif.fail(format!(
                "the program reads values of operand {operand}, which is not an input"
            ));
            return None;
        }
        Some((clif.slot(Slot::Values(operand)), clif.value_type(operand)))
    }

    fn body(&mut self, clif: &mut Clif<'_>) {
        let accumulates = self.program.ops.iter().any(Op::accumulates_into_workspace);
        if accumulates {
            let count = clif.fb.declare_var(types::I64);
            clif.touched_count = Some(count);
            self.load_touched_count(clif);
        }
        if append_width(self.program).is_some() {
            let pending = clif.fb.declare_var(types::I64);
            let zero = clif.int(0);
            clif.fb.def_var(pending, zero);
            self.pending_appends = Some(pending);
        }
        let first = self.block(0);
        clif.fb.ins().jump(first, &[]);
        let n = self.program.ops.len();
        let seal_at = self.seal_schedule();
        let loops = self.loops();
        // The block that falls into each loop header.
        let mut preheaders: Vec<Option<Block>> = vec![None; n];
        let mut filled = true;
        for (pc, sealed_here) in seal_at.iter().enumerate() {
            if let Some(block) = self.blocks[pc] {
                if !filled {
                    preheaders[pc] = clif.fb.current_block();
                    clif.fb.ins().jump(block, &[]);
                }
                clif.fb.switch_to_block(block);
            }
            clif.preheader = loops[pc].and_then(|header| preheaders[header]);
            // Seal each block once its last predecessor is emitted: the SSA
            // builder then passes values straight through instead of adding
            // block parameters that only regalloc can undo.
            for &b in sealed_here {
                clif.fb.seal_block(self.block(b));
            }
            filled = self.op(clif, pc);
            if clif.error.is_some() {
                return;
            }
        }
        let end = self.block(n);
        if !filled {
            clif.fb.ins().jump(end, &[]);
        }
        clif.preheader = None;
        clif.fb.switch_to_block(end);
        self.finish(clif);
        if let Some(fail) = self.fail {
            clif.fb.switch_to_block(fail);
            freturn(clif, 1);
        }
        clif.fb.seal_all_blocks();
    }

    /// For each op, the header of the innermost loop around it whose only
    /// entry is falling into the header (so the block before the header
    /// dominates the loop): a backward jump from `end` to `header` makes the
    /// loop `header..=end`, and no forward jump may enter its header.
    fn loops(&self) -> Vec<Option<usize>> {
        let ops = &self.program.ops;
        let n = ops.len();
        let mut entered_by_jump = vec![false; n + 1];
        let mut spans = Vec::new();
        for (pc, op) in ops.iter().enumerate() {
            if let Op::Jump { to } | Op::JumpIf { to, .. } | Op::JumpIfNot { to, .. } = op {
                if *to > pc {
                    entered_by_jump[*to] = true;
                } else {
                    spans.push((*to, pc));
                }
            }
        }
        let mut innermost: Vec<Option<usize>> = vec![None; n];
        // Wider loops first, so inner ones overwrite them.
        spans.sort_by_key(|&(header, end)| std::cmp::Reverse(end - header));
        for (header, end) in spans {
            let falls_in = header > 0 && !matches!(ops[header - 1], Op::Jump { .. } | Op::Halt);
            if falls_in && !entered_by_jump[header] {
                for slot in &mut innermost[header..=end] {
                    *slot = Some(header);
                }
            }
        }
        innermost
    }

    /// For each op, the blocks whose predecessors have all been emitted by
    /// the time it is translated: a block's predecessors are the op before
    /// it (falling through) and every jump to it.
    fn seal_schedule(&self) -> Vec<Vec<usize>> {
        let n = self.program.ops.len();
        let mut last_pred: Vec<usize> = (0..=n).map(|pc| pc.saturating_sub(1)).collect();
        for (pc, op) in self.program.ops.iter().enumerate() {
            if let Op::Jump { to } | Op::JumpIf { to, .. } | Op::JumpIfNot { to, .. } = op {
                last_pred[*to] = last_pred[*to].max(pc);
            }
        }
        let mut seal_at = vec![Vec::new(); n];
        for (pc, &last) in last_pred.iter().enumerate().take(n) {
            if self.blocks[pc].is_some() {
                // Predecessors up to op `last` are emitted before op `last + 1`
                // is; a block is never sealed before it is entered.
                let at = (last + 1).max(pc);
                if at < n {
                    seal_at[at].push(pc);
                }
            }
        }
        seal_at
    }

    /// Emits op `pc`; returns whether it ended the block.
    fn op(&mut self, clif: &mut Clif<'_>, pc: usize) -> bool {
        let op = &self.program.ops[pc];
        // A scalar op leaves its block open (a refusal is in `clif.error`).
        if scalar_op(clif, self, op) != ScalarOp::NotScalar {
            return false;
        }
        match op {
            Op::Jump { to } => {
                let target = self.block(*to);
                clif.fb.ins().jump(target, &[]);
                return true;
            }
            Op::JumpIf { cond, to } | Op::JumpIfNot { cond, to } => {
                let c = self.bool(clif, *cond);
                let (target, next) = (self.block(*to), self.block(pc + 1));
                let (yes, no) = match op {
                    Op::JumpIf { .. } => (target, next),
                    _ => (next, target),
                };
                clif.fb.ins().brif(c, yes, &[], no, &[]);
                return true;
            }
            Op::TempLoad { temp, index, dst } => {
                let base = clif.slot(Slot::Temp(*temp));
                let at = self.int(clif, *index);
                let addr = clif.element(base, at, 8);
                let v = clif.fb.ins().load(types::F64, output_flags(), addr, 0);
                self.set_float(clif, *dst, v);
            }
            Op::TempFill { temp, value } => {
                let base = clif.slot(Slot::Temp(*temp));
                let n = self.temp_length(clif, *temp);
                let x = self.float(clif, *value);
                let zero = clif.int(0);
                clif.loop_with(
                    &[zero],
                    &mut |clif, s| clif.compare(Cmp::Lt, s[0], n),
                    &mut |clif, s| {
                        let addr = clif.element(base, s[0], 8);
                        clif.fb.ins().store(output_flags(), x, addr, 0);
                        smallvec::smallvec![clif.fb.ins().iadd_imm_s(s[0], 1)]
                    },
                );
            }
            Op::TempStore { temp, index, value } => {
                let base = clif.slot(Slot::Temp(*temp));
                let at = self.int(clif, *index);
                let x = self.float(clif, *value);
                let addr = clif.element(base, at, 8);
                clif.fb.ins().store(output_flags(), x, addr, 0);
            }
            Op::AccumOutput { pos, value } => {
                let base = clif.slot(Slot::Output);
                let p = self.int(clif, *pos);
                let x = self.float(clif, *value);
                let addr = clif.element(base, p, 8);
                let old = clif.fb.ins().load(types::F64, output_flags(), addr, 0);
                let new = clif.add_output(old, x);
                clif.fb.ins().store(output_flags(), new, addr, 0);
            }
            Op::Append { coords, value } => self.append(clif, coords, *value),
            Op::WorkspaceAccum { coords, value } => self.workspace_accumulate(clif, coords, *value),
            Op::WorkspaceAxpy {
                driver,
                begin,
                end,
                scale,
                prefix,
            } => self.workspace_axpy(clif, *driver, (*begin, *end), *scale, prefix),
            Op::WorkspaceFlush { prefix } => self.flush_workspace(clif, prefix),
            Op::DotBlock {
                driver,
                begin,
                end,
                factors,
                temp,
                acc,
            } => self.dot_block(clif, *driver, (*begin, *end), (factors, *temp), *acc),
            Op::DenseDot {
                scale,
                factors,
                len,
                acc,
            } => self.dense_dot(clif, *scale, factors, *len, *acc),
            Op::StridedAxpy {
                rows,
                scale,
                factors,
                out,
                columns,
                deferred: false,
            } => self.strided_axpy(clif, (*rows, *scale), factors, *out, columns.as_ref()),
            Op::StridedAxpy {
                rows,
                scale,
                factors,
                out,
                columns,
                deferred: true,
            } => self.defer_strided(clif, (*rows, *scale), factors, *out, columns.as_ref()),
            Op::StridedFlush => {
                let none = clif.int(0);
                let (callee, words) = (kernel::strided_flush as *const () as usize, [none]);
                self.call_with_words(clif, callee, &words, 0);
            }
            Op::DenseRowsDot {
                rows,
                len,
                scale,
                factors,
                shared,
                out,
            } => self.dense_rows_dot(clif, (*rows, *len), *scale, (factors, shared), *out),
            Op::BlockRowsDot {
                driver,
                blocks,
                rows,
                len,
                scale,
                factors,
                shared,
                out,
                out_block_step,
            } => self.block_rows_dot(
                clif,
                (*driver, *blocks),
                (*rows, *len),
                *scale,
                (factors, shared),
                (*out, *out_block_step),
            ),
            Op::RowsDot {
                semiring,
                every_row,
                rows,
                parent,
                first,
                last,
                driver,
                factors,
                out,
                out_parent,
            } => self.rows_dot(
                clif,
                RowsOf {
                    level: *rows,
                    parent: *parent,
                    first: *first,
                    last: *last,
                },
                (*semiring, *every_row),
                *driver,
                factors,
                *out,
                *out_parent,
            ),
            Op::DenseAxpy {
                scale,
                factors,
                temp,
                out,
                out_parent,
            } => {
                if self.format(clif, *out).is_some() {
                    let parent = self.int(clif, *out_parent);
                    let row = output_row(clif, *out, parent);
                    self.dense_axpy(clif, row, *scale, factors, *temp);
                }
            }
            Op::TempAxpy { temp, scale, factors } => {
                let target = clif.temp_run(*temp);
                let n = self.temp_length(clif, *temp);
                self.dense_axpy(clif, (target, n), *scale, factors, None);
            }
            Op::ValuesAxpy {
                driver,
                begin,
                end,
                scale,
                factors,
                map,
            } => self.values_axpy(clif, *driver, (*begin, *end), *scale, factors, *map),
            Op::RowAxpy {
                driver,
                begin,
                end,
                scale,
                factors,
                out,
                out_parent,
            } => self.row_axpy(clif, *driver, (*begin, *end), *scale, factors, *out, *out_parent),
            Op::MergeRuns {
                runs,
                op,
                scales,
                prefix,
                shifts,
            } => self.merge_runs(clif, runs, (*op, *scales), prefix, shifts),
            Op::MergeRows {
                a,
                a_begin,
                a_end,
                b,
                b_begin,
                b_end,
                op,
                scales,
                prefix,
                block,
            } => self.merge_rows(
                clif,
                [(*a, *a_begin, *a_end), (*b, *b_begin, *b_end)],
                (*op, *scales),
                prefix,
                block,
            ),
            Op::RowsMerge {
                a_rows,
                a_parent,
                b_rows,
                b_parent,
                first,
                last,
                op,
                scales,
                prefix,
            } => self.rows_merge(
                clif,
                [(*a_rows, *a_parent), (*b_rows, *b_parent)],
                (*first, *last),
                (*op, *scales),
                prefix,
            ),
            // The interpreter's shortcuts: the loop that follows is compiled.
            Op::PositionLoop { .. } | Op::RunEnd { .. } => {}
            Op::Halt => {
                self.finish(clif);
                return true;
            }
            #[allow(unreachable_patterns)]
            other => clif.fail(format!("the Cranelift tier does not translate `{other}` yet")),
        }
        false
    }

    /// `Op::WorkspaceFlush`: calls `kernel::workspace_flush` with the
    /// prefix coordinates (in a stack slot); returns 1 from the kernel when
    /// it fails.
    fn flush_workspace(&mut self, clif: &mut Clif<'_>, prefix: &Regs) {
        let program = self.program;
        let slot = *self.prefix_slot.get_or_insert_with(|| {
            let most = program
                .ops
                .iter()
                .map(|op| match op {
                    Op::WorkspaceFlush { prefix } => prefix.len(),
                    _ => 0,
                })
                .max()
                .unwrap_or(0)
                .max(1);
            clif.fb
                .create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, (most * 8) as u32, 3))
        });
        let sig = self.three_word_callback(clif);
        let addr = clif.fb.ins().stack_addr(types::I64, slot, 0);
        for (k, &r) in prefix.iter().enumerate() {
            let v = self.int(clif, r);
            clif.fb.ins().store(MemFlagsData::trusted(), v, addr, (k * 8) as i32);
        }
        let n = clif.int(prefix.len() as i64);
        let callee = clif.int(kernel::workspace_flush as *const () as usize as i64);
        self.hand_over_appends(clif);
        self.store_touched_count(clif);
        let call = clif.fb.ins().call_indirect(sig, callee, &[self.ctx, addr, n]);
        let status = clif.fb.inst_results(call)[0];
        self.return_if_failed(clif, status);
        self.load_touched_count(clif);
    }

    /// The signature of the runtime calls taking the context and two more
    /// words (`workspace_flush`, `merge_rows`), imported once.
    fn three_word_callback(&mut self, clif: &mut Clif<'_>) -> SigRef {
        let call_conv = self.call_conv;
        *self.flush_signature.get_or_insert_with(|| {
            let mut sig = Signature::new(call_conv);
            sig.params.extend([AbiParam::new(types::I64); 3]);
            sig.returns.push(AbiParam::new(types::I32));
            clif.fb.import_signature(sig)
        })
    }

    /// A merge's scales, their bits, as the last two words of its call
    /// (its code word then carries `kernel::SCALED`).
    fn scale_words(&mut self, clif: &mut Clif<'_>, scales: Option<[FReg; 2]>, words: &mut Vec<Value>) {
        for r in scales.into_iter().flatten() {
            let value = self.float(clif, r);
            words.push(clif.fb.ins().bitcast(types::I64, MemFlagsData::new(), value));
        }
    }

    /// `Op::MergeRows`: calls `kernel::merge_rows` once per row with the
    /// two rows' arrays, ranges and widths, the output prefix, the block
    /// sizes and the scales.
    fn merge_rows(
        &mut self,
        clif: &mut Clif<'_>,
        rows: [(LevelRef, u32, u32); 2],
        (op, scales): MergeOp,
        prefix: &Regs,
        block: &[u32],
    ) {
        let mut words: Vec<Value> = Vec::with_capacity(11 + prefix.len() + block.len());
        let mut code = op.code() | ((block.len() as u64) << 24) | kernel::scaled_flag(scales);
        for (k, (level, begin, end)) in rows.into_iter().enumerate() {
            let Some(coords) = self.coordinates(clif, level) else {
                return;
            };
            let Some(width) = clif.width(coords) else {
                clif.fail(format!(
                    "level {} of operand {} has no coordinates",
                    level.level, level.operand
                ));
                return;
            };
            let Some(values) = self.values(clif, level.operand) else {
                return;
            };
            let width_code: u64 = match width {
                IndexWidth::U32 => 0,
                IndexWidth::U64 => 1,
                IndexWidth::I64 => 2,
            };
            code |= width_code << (8 * (k + 1));
            words.push(clif.slot(Slot::Array(coords)));
            words.push(values);
            words.push(self.int(clif, begin));
            words.push(self.int(clif, end));
        }
        words.push(clif.int(code as i64));
        for &r in prefix {
            words.push(self.int(clif, r));
        }
        for &size in block {
            words.push(clif.int(i64::from(size)));
        }
        self.scale_words(clif, scales, &mut words);
        self.call_with_words(clif, kernel::merge_rows as *const () as usize, &words, prefix.len());
    }

    /// `Op::MergeRuns`: calls `kernel::merge_runs` once per run pair with
    /// each run's values, first position and coordinates, the op, the
    /// output prefix, the shifts of the levels below and the scales.
    fn merge_runs(
        &mut self,
        clif: &mut Clif<'_>,
        runs: &[CoordinateRun; 2],
        (op, scales): MergeOp,
        prefix: &Regs,
        shifts: &Regs,
    ) {
        let mut words: Vec<Value> = Vec::with_capacity(11 + prefix.len() + shifts.len());
        for run in runs {
            let Some(values) = self.values(clif, run.values.operand) else {
                return;
            };
            words.push(values);
            for r in [run.values.start, run.begin, run.end] {
                words.push(self.int(clif, r));
            }
        }
        let code = op.code() | ((shifts.len() as u64) << 24) | kernel::scaled_flag(scales);
        words.push(clif.int(code as i64));
        for &r in prefix.iter().chain(shifts) {
            words.push(self.int(clif, r));
        }
        self.scale_words(clif, scales, &mut words);
        self.call_with_words(clif, kernel::merge_runs as *const () as usize, &words, prefix.len());
    }

    /// `Op::RowsMerge`: calls `kernel::rows_merge` once for the block of
    /// rows, with each operand's rows level and parent position, the rows,
    /// the op, the output prefix and the scales.
    fn rows_merge(
        &mut self,
        clif: &mut Clif<'_>,
        rows: [(LevelRef, u32); 2],
        (first, last): (u32, u32),
        (op, scales): MergeOp,
        prefix: &Regs,
    ) {
        // The runtime's merge reads both rows' values as f64.
        if rows.iter().any(|(level, _)| self.values(clif, level.operand).is_none()) {
            return;
        }
        let mut words: Vec<Value> = Vec::with_capacity(7 + prefix.len());
        for (level, parent) in rows {
            words.push(clif.int(kernel::level_word(level)));
            words.push(self.int(clif, parent));
        }
        words.push(self.int(clif, first));
        words.push(self.int(clif, last));
        words.push(clif.int((op.code() | kernel::scaled_flag(scales)) as i64));
        for &r in prefix {
            words.push(self.int(clif, r));
        }
        self.scale_words(clif, scales, &mut words);
        self.call_with_words(clif, kernel::rows_merge as *const () as usize, &words, prefix.len());
    }

    /// A deferred `Op::StridedAxpy`: hands the update, its registers read,
    /// to the runtime (`kernel::strided_defer`), which runs the deferred
    /// updates together at `Op::StridedFlush`. Once per update (a DIA
    /// diagonal), not per row.
    fn defer_strided(
        &mut self,
        clif: &mut Clif<'_>,
        (rows, scale): (u32, u32),
        factors: &[Strided],
        out: StridedRun,
        columns: Option<&StridedColumns>,
    ) {
        // The runtime's deferred updates read the factors' values as f64.
        let operand = |f: &Strided| match *f {
            Strided::Run(run) => run.operand,
            Strided::Gather { operand, .. } => operand,
        };
        if factors.iter().any(|f| self.values(clif, operand(f)).is_none()) {
            return;
        }
        let scale = self.float(clif, scale);
        let scale = clif.fb.ins().bitcast(types::I64, MemFlagsData::new(), scale);
        let mut words: Vec<Value> = vec![
            self.int(clif, rows),
            scale,
            self.int(clif, out.start),
            self.int(clif, out.step),
            clif.int(factors.len() as i64),
            clif.int(i64::from(columns.is_some())),
            match columns {
                Some(c) => self.int(clif, c.count),
                None => clif.int(0),
            },
            match columns {
                Some(c) => self.int(clif, c.out_step),
                None => clif.int(0),
            },
        ];
        for (k, f) in factors.iter().enumerate() {
            let (kind, operand, start, step, base, level, coord_step) = match *f {
                Strided::Run(run) => (0, run.operand, run.start, run.step, None, None, None),
                Strided::Gather {
                    operand,
                    base,
                    level,
                    start,
                    step,
                    coord_step,
                } => (1, operand, start, step, Some(base), Some(level), coord_step),
            };
            words.push(clif.int(kind));
            words.push(clif.int(i64::from(operand)));
            words.push(self.int(clif, start));
            words.push(self.int(clif, step));
            words.push(match base {
                Some(base) => self.int(clif, base),
                None => clif.int(0),
            });
            words.push(clif.int(level.map_or(0, kernel::level_word)));
            words.push(match coord_step {
                Some(s) => self.int(clif, s),
                None => clif.int(1),
            });
            words.push(match columns.and_then(|c| c.steps[k]) {
                Some(s) => self.int(clif, s),
                None => clif.int(-1),
            });
        }
        self.call_with_words(clif, kernel::strided_defer as *const () as usize, &words, factors.len());
    }

    /// Calls the runtime's `callee(ctx, words, n)` with `words` stored on
    /// the stack, after handing over pending appends; returns from the
    /// kernel when it fails.
    fn call_with_words(&mut self, clif: &mut Clif<'_>, callee: usize, words: &[Value], n: usize) {
        let slot = clif.fb.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            (words.len() * 8) as u32,
            3,
        ));
        let addr = clif.fb.ins().stack_addr(types::I64, slot, 0);
        for (k, &w) in words.iter().enumerate() {
            clif.fb.ins().store(MemFlagsData::trusted(), w, addr, (k * 8) as i32);
        }
        let sig = self.three_word_callback(clif);
        let n = clif.int(n as i64);
        let callee = clif.int(callee as i64);
        self.hand_over_appends(clif);
        let call = clif.fb.ins().call_indirect(sig, callee, &[self.ctx, addr, n]);
        let status = clif.fb.inst_results(call)[0];
        self.return_if_failed(clif, status);
    }

    /// Ends the kernel: hands over what the runtime has not seen yet and
    /// returns 0.
    fn finish(&mut self, clif: &mut Clif<'_>) {
        self.hand_over_appends(clif);
        self.store_touched_count(clif);
        freturn(clif, 0);
    }

    /// Returns 1 from the kernel when a callback's `status` is not 0.
    fn return_if_failed(&mut self, clif: &mut Clif<'_>, status: Value) {
        let fail = *self.fail.get_or_insert_with(|| {
            let b = clif.fb.create_block();
            clif.fb.set_cold_block(b);
            b
        });
        let next = clif.fb.create_block();
        clif.fb.ins().brif(status, fail, &[], next, &[]);
        clif.enter(next);
    }

    /// `Op::Append`: writes the entry into the append buffer, handing the
    /// buffer over when it is full.
    fn append(&mut self, clif: &mut Clif<'_>, coords: &Regs, value: u32) {
        let pending = self.pending_appends.expect("programs that append buffer their entries");
        let stride = (coords.len() + 1) * 8;
        let n = clif.fb.use_var(pending);
        let buffer = clif.slot(Slot::AppendBuffer);
        let row_offset = clif.fb.ins().imul_imm_s(n, stride as i64);
        let row = clif.fb.ins().iadd(buffer, row_offset);
        for (k, &r) in coords.iter().enumerate() {
            let c = self.int(clif, r);
            clif.fb.ins().store(output_flags(), c, row, (k * 8) as i32);
        }
        let v = self.float(clif, value);
        clif.fb.ins().store(output_flags(), v, row, (coords.len() * 8) as i32);
        let n1 = clif.fb.ins().iadd_imm_s(n, 1);
        clif.fb.def_var(pending, n1);
        let full = clif.fb.ins().icmp_imm_u(IntCC::Equal, n1, APPEND_BATCH as i64);
        self.call_append_batch_if(clif, full, n1);
    }

    /// Hands the buffered entries, if any, to the runtime (before any other
    /// callback, so that the output sees everything in program order).
    fn hand_over_appends(&mut self, clif: &mut Clif<'_>) {
        let Some(pending) = self.pending_appends else {
            return;
        };
        let n = clif.fb.use_var(pending);
        self.call_append_batch_if(clif, n, n);
        let zero = clif.int(0);
        clif.fb.def_var(pending, zero);
    }

    /// [`Self::call_append_batch`] on `n` entries when `cond` is not 0.
    fn call_append_batch_if(&mut self, clif: &mut Clif<'_>, cond: Value, n: Value) {
        let hand_over = clif.fb.create_block();
        let join = clif.fb.create_block();
        clif.fb.ins().brif(cond, hand_over, &[], join, &[]);
        clif.enter(hand_over);
        self.call_append_batch(clif, n);
        clif.fb.ins().jump(join, &[]);
        clif.enter(join);
    }

    /// Calls `kernel::append_batch` on the `n` buffered entries and empties
    /// the buffer.
    fn call_append_batch(&mut self, clif: &mut Clif<'_>, n: Value) {
        let pending = self.pending_appends.expect("programs that append buffer their entries");
        let width = append_width(self.program).expect("programs that append have an entry width");
        let sig = *self.batch_signature.get_or_insert_with(|| {
            let mut sig = Signature::new(self.call_conv);
            sig.params.extend([AbiParam::new(types::I64); 4]);
            sig.returns.push(AbiParam::new(types::I32));
            clif.fb.import_signature(sig)
        });
        let buffer = clif.slot(Slot::AppendBuffer);
        let width = clif.int(width as i64);
        let callee = clif.int(kernel::append_batch as *const () as usize as i64);
        self.store_touched_count(clif);
        let call = clif.fb.ins().call_indirect(sig, callee, &[self.ctx, buffer, n, width]);
        let status = clif.fb.inst_results(call)[0];
        self.return_if_failed(clif, status);
        self.load_touched_count(clif);
        let zero = clif.int(0);
        clif.fb.def_var(pending, zero);
    }

    fn load_touched_count(&mut self, clif: &mut Clif<'_>) {
        if let Some(var) = clif.touched_count {
            let at = clif.slot(Slot::Workspace(WorkspacePart::Count));
            let n = clif.fb.ins().load(types::I64, output_flags(), at, 0);
            clif.fb.def_var(var, n);
        }
    }

    fn store_touched_count(&mut self, clif: &mut Clif<'_>) {
        if let Some(var) = clif.touched_count {
            let n = clif.fb.use_var(var);
            let at = clif.slot(Slot::Workspace(WorkspacePart::Count));
            clif.fb.ins().store(output_flags(), n, at, 0);
        }
    }

    /// Adds a value into the dense workspace in place ([`workspace_add`];
    /// the runtime interprets kernels whose workspace is not dense).
    fn workspace_accumulate(&mut self, clif: &mut Clif<'_>, coords: &Regs, value: u32) {
        let coords = self.ints(clif, coords);
        let key = workspace_key(clif, &coords, true);
        let x = self.float(clif, value);
        workspace_add(clif, key, x);
    }

    /// For each position `p` of the driver in `begin..end` (coordinate
    /// `c`): the workspace at `prefix ++ [c]` gets `scale * value[p]`
    /// ([`workspace_row`]).
    fn workspace_axpy(
        &mut self,
        clif: &mut Clif<'_>,
        driver: LevelRef,
        (begin, end): (u32, u32),
        scale: u32,
        prefix: &Regs,
    ) {
        let Some(format) = self.format(clif, driver) else {
            return;
        };
        if self.typed_values(clif, driver.operand).is_none() {
            return;
        }
        let Some(slot) = format.coordinate_array() else {
            return clif.fail("a workspace row is read from a level without a coordinate array");
        };
        let prefix = self.ints(clif, prefix);
        let base = workspace_key(clif, &prefix, false);
        let scale = self.float(clif, scale);
        let (b, e) = (self.int(clif, begin), self.int(clif, end));
        let coords = clif.coordinates(driver.array(slot));
        let zero = clif.int(0);
        let values = clif.value_run(driver.operand, zero);
        workspace_row(clif, (coords, values), (b, e), scale, base);
    }

    /// `acc += Σ_{c < len} scale * Π factors[c]`, summed in order from 0.0
    /// as the interpreter does.
    fn dense_dot(&mut self, clif: &mut Clif<'_>, scale: u32, factors: &[ValueRun], len: RunLength, acc: u32) {
        if factors.iter().any(|f| self.typed_values(clif, f.operand).is_none()) {
            return;
        }
        let runs = value_runs(clif, factors, &mut |clif, r| self.int(clif, r));
        let scale = self.float(clif, scale);
        let len = len.resolve(|r| self.int(clif, r));
        let total = dense_dot(clif, scale, &runs, len);
        let old = self.float(clif, acc);
        let new = clif.fb.ins().fadd(old, total);
        self.set_float(clif, acc, new);
    }

    /// For each row `r`: `out[out.start + r * out.step] += scale * Σ_c Π
    /// factors · Π shared`, factor `f` read from `f.start + r * f.step`, a
    /// shared run the same for every row ([`rows_dot`]).
    fn dense_rows_dot(
        &mut self,
        clif: &mut Clif<'_>,
        (rows, len): (RunLength, RunLength),
        scale: u32,
        (factors, shared): (&[StridedRun], &[ValueRun]),
        out: StridedRun,
    ) {
        let operands = factors
            .iter()
            .map(|f| f.operand)
            .chain(shared.iter().map(|s| s.operand));
        if operands
            .into_iter()
            .any(|operand| self.typed_values(clif, operand).is_none())
        {
            return;
        }
        let shape = (self.length(clif, rows), self.length(clif, len));
        let scale = self.float(clif, scale);
        dense_rows_dot(clif, shape, scale, (factors, shared), out, &mut |clif, r| {
            self.int(clif, r)
        });
    }

    /// [`Self::dense_rows_dot`] for each stored position `p` of `driver`
    /// in `blocks`, its coordinate `c` read from the level's coordinates,
    /// in block row `b`: a run starts at `start + b * block_step + p *
    /// pos_step + c * coord_step`, the output at `out.start + b *
    /// out_block_step`.
    #[allow(clippy::too_many_arguments)]
    fn block_rows_dot(
        &mut self,
        clif: &mut Clif<'_>,
        (driver, blocks): (LevelRef, BlockRows),
        (rows, len): (RunLength, RunLength),
        scale: u32,
        (factors, shared): (&[BlockRun], &[BlockRun]),
        (out, out_block_step): (StridedRun, u32),
    ) {
        let (Some(coords), Some(format)) = (self.coordinates(clif, driver), self.format(clif, driver)) else {
            return;
        };
        if factors
            .iter()
            .chain(shared)
            .any(|run| self.typed_values(clif, run.operand).is_none())
        {
            return;
        }
        let operands = BlockOperands::new((driver, format), coords, (factors, shared), (out, out_block_step));
        let shape = (self.length(clif, rows), self.length(clif, len));
        let scale = self.float(clif, scale);
        block_rows_dot(clif, operands, blocks, shape, scale, &mut |clif, r| self.int(clif, r));
    }

    /// `out[p] += scale * value[p] * Π factors[c]` for each position `p`
    /// of `driver` in `begin..end`, `c` its coordinate: an output on the
    /// driver's pattern ([`Op::ValuesAxpy`]).
    fn values_axpy(
        &mut self,
        clif: &mut Clif<'_>,
        driver: LevelRef,
        (begin, end): (u32, u32),
        scale: u32,
        factors: &[DotFactor],
        map: Option<Func>,
    ) {
        // A scaled copy reads no coordinates: its level may have none.
        let coords = match factors {
            [] => self
                .typed_values(clif, driver.operand)
                .and_then(|_| self.format(clif, driver))
                .map(|f| f.coordinate_array().map(|slot| driver.array(slot))),
            _ => self.walked(clif, driver, factors).map(Some),
        };
        let Some(coords) = coords else {
            return;
        };
        let scale = self.float(clif, scale);
        let positions = (self.int(clif, begin), self.int(clif, end));
        values_axpy(
            clif,
            (driver, coords),
            positions,
            scale,
            factors,
            map,
            &mut |clif, r| self.int(clif, r),
        );
    }

    /// The coordinates of the level an op walks by position, when the
    /// kernel has them, the level's values and every factor's (a failure
    /// is recorded when it does not).
    fn walked(&self, clif: &mut Clif<'_>, driver: LevelRef, factors: &[DotFactor]) -> Option<ArrayRef> {
        let coords = self.coordinates(clif, driver)?;
        let readable = self.typed_values(clif, driver.operand).is_some() && self.readable(clif, factors);
        readable.then_some(coords)
    }

    /// Whether the kernel has the levels and values of every factor (a
    /// failure is recorded when it does not).
    fn readable(&self, clif: &mut Clif<'_>, factors: &[DotFactor]) -> bool {
        factors
            .iter()
            .all(|f| self.format(clif, f.level).is_some() && self.typed_values(clif, f.operand).is_some())
    }

    /// The array of a level's coordinates (one per position), or a
    /// failure naming the level when it has none.
    fn coordinates(&self, clif: &mut Clif<'_>, level: LevelRef) -> Option<ArrayRef> {
        let format = self.format(clif, level)?;
        let coords = format.coordinate_array().map(|slot| level.array(slot));
        if coords.is_none() {
            clif.fail(format!(
                "level {} of operand {} has no coordinate array",
                level.level, level.operand
            ));
        }
        coords
    }

    /// For each row `r < rows`: `out[out.start + r * out.step] += scale * Π
    /// factors(r)`, a factor read at a stepping position or gathered
    /// through a level's coordinates, and with `columns` a row of such
    /// products ([`strided_rows`]).
    fn strided_axpy(
        &mut self,
        clif: &mut Clif<'_>,
        (rows, scale): (u32, u32),
        factors: &[Strided],
        out: StridedRun,
        columns: Option<&StridedColumns>,
    ) {
        let mut reads: SmallVec<[StridedRead<Clif<'_>>; 3]> = SmallVec::new();
        for f in factors {
            let read = match *f {
                Strided::Run(run) => {
                    if self.values(clif, run.operand).is_none() {
                        return;
                    }
                    let (start, step) = (self.int(clif, run.start), self.int(clif, run.step));
                    StridedRead::Run {
                        run: clif.value_run(run.operand, start),
                        step,
                    }
                }
                Strided::Gather {
                    operand,
                    base,
                    level,
                    start,
                    step,
                    coord_step,
                } => {
                    let Some(coords) = self.coordinates(clif, level) else {
                        return;
                    };
                    if self.values(clif, operand).is_none() {
                        return;
                    }
                    let base = self.int(clif, base);
                    StridedRead::Gather {
                        run: clif.value_run(operand, base),
                        coords: clif.coordinates(coords),
                        start: self.int(clif, start),
                        step: self.int(clif, step),
                        coord_step: coord_step.map(|s| self.int(clif, s)),
                    }
                }
            };
            reads.push(read);
        }
        let (out_start, out_step) = (self.int(clif, out.start), self.int(clif, out.step));
        let target = clif.output_target(out_start);
        let scale = self.float(clif, scale);
        let n = self.int(clif, rows);
        let zero = clif.int(0);
        if let Some(columns) = columns {
            let steps: SmallVec<[Option<Value>; 3]> =
                columns.steps.iter().map(|s| s.map(|r| self.int(clif, r))).collect();
            let columns = Columns {
                count: self.int(clif, columns.count),
                out_step: self.int(clif, columns.out_step),
                steps: &steps,
            };
            strided_rows(clif, (zero, n), scale, &reads, (target, out_step), Some(columns));
            return;
        }
        let done = clif.fb.create_block();
        // Runs that all step by one value (a diagonal times x) take the
        // vector loop of a dense row update, with the same sums.
        let runs: SmallVec<[(ValuesAt, Value); 3]> = reads
            .iter()
            .filter_map(|read| match *read {
                StridedRead::Run { run, step } => Some((run, step)),
                StridedRead::Gather { .. } => None,
            })
            .collect();
        if runs.len() == reads.len() {
            let mut unit = clif.fb.ins().icmp_imm_s(IntCC::Equal, out_step, 1);
            for &(_, step) in &runs {
                let one = clif.fb.ins().icmp_imm_s(IntCC::Equal, step, 1);
                unit = clif.fb.ins().band(unit, one);
            }
            let (vector, scalar) = (clif.fb.create_block(), clif.fb.create_block());
            clif.fb.ins().brif(unit, vector, &[], scalar, &[]);
            clif.enter(vector);
            let runs: SmallVec<[ValuesAt; 3]> = runs.iter().map(|&(run, _)| run).collect();
            add_products(clif, target, n, scale, &runs);
            clif.fb.ins().jump(done, &[]);
            clif.enter(scalar);
        }
        strided_rows(clif, (zero, n), scale, &reads, (target, out_step), None);
        clif.fb.ins().jump(done, &[]);
        clif.enter(done);
    }

    /// A run length for the block ops: fixed, or its register's value.
    fn length(&mut self, clif: &mut Clif<'_>, len: RunLength) -> Length<Value> {
        len.resolve(|r| self.int(clif, r))
    }

    /// `acc += Σ_{p in begin..end} values[p] * Π factors`.
    fn dot_block(
        &mut self,
        clif: &mut Clif<'_>,
        driver: LevelRef,
        (begin, end): (u32, u32),
        (factors, temp): (&[DotFactor], Option<u32>),
        acc: u32,
    ) {
        let Some(coords) = self.walked(clif, driver, factors) else {
            return;
        };
        let segment = (self.int(clif, begin), self.int(clif, end));
        let total = segment_dot(clif, (driver, coords), segment, (factors, temp), &mut |clif, r| {
            self.int(clif, r)
        });
        let old = self.float(clif, acc);
        let new = clif.fb.ins().fadd(old, total);
        self.set_float(clif, acc, new);
    }

    /// For each coordinate `c` of the dense level `rows` below `parent`,
    /// the dot product over the driver's segment below position
    /// `parent * extent(rows) + c`, added to the dense output at
    /// `out_parent * extent(out) + c` when the segment is not empty.
    #[allow(clippy::too_many_arguments)]
    #[allow(clippy::too_many_arguments)]
    fn rows_dot(
        &mut self,
        clif: &mut Clif<'_>,
        rows: RowsOf,
        (semiring, every_row): (Semiring, bool),
        driver: LevelRef,
        factors: &[DotFactor],
        out: LevelRef,
        out_parent: u32,
    ) {
        let (Some(_), Some(_), Some(format)) = (
            self.format(clif, rows.level),
            self.format(clif, out),
            self.format(clif, driver),
        ) else {
            return;
        };
        let Some(coords) = self.walked(clif, driver, factors) else {
            return;
        };
        let driver = (driver, format, coords);
        rows_dot(
            clif,
            (semiring, every_row),
            rows,
            driver,
            factors,
            (out, out_parent),
            &mut |clif, r| self.int(clif, r),
        );
    }
}

impl Translator<'_> {
    /// `target[c] += scale * Π factors[c] (* temp[c])` for every `c < n`
    /// (and every coordinate of the factors' levels and of the temporary).
    fn dense_axpy(
        &mut self,
        clif: &mut Clif<'_>,
        target: (ValuesAt, Value),
        scale: u32,
        factors: &[DotFactor],
        temp: Option<u32>,
    ) {
        if !self.readable(clif, factors) {
            return;
        }
        let temp = temp.map(|t| (clif.temp_run(t), self.temp_length(clif, t)));
        let scale = self.float(clif, scale);
        dense_axpy(clif, target, scale, factors, temp, &mut |clif, r| self.int(clif, r));
    }

    /// The number of components of vector temporary `temp`.
    fn temp_length(&mut self, clif: &mut Clif<'_>, temp: u32) -> Value {
        match self.program.temps.get(temp as usize) {
            Some(&var) => clif.slot(Slot::Dim(var)),
            None => {
                clif.fail(format!(
                    "the program uses vector temporary {temp}, which it does not have"
                ));
                clif.int(0)
            }
        }
    }

    /// For each position `p` of the driver in `begin..end`, with coordinate
    /// `c`: the output row gets `scale * value[p] * Π factor rows`, a
    /// factor's row being `parent * extent(via) + c` (or `parent`).
    #[allow(clippy::too_many_arguments)]
    fn row_axpy(
        &mut self,
        clif: &mut Clif<'_>,
        driver: LevelRef,
        (begin, end): (u32, u32),
        scale: u32,
        factors: &[AxpyFactor],
        out: LevelRef,
        out_parent: u32,
    ) {
        let Some(coords) = self.walked(clif, driver, &[]) else {
            return;
        };
        let readable = self.format(clif, out).is_some()
            && factors.iter().all(|f| {
                self.format(clif, f.level).is_some()
                    && f.via.is_none_or(|via| self.format(clif, via).is_some())
                    && self.typed_values(clif, f.operand).is_some()
            });
        if !readable {
            return;
        }
        let parent = self.int(clif, out_parent);
        let row = output_row(clif, out, parent);
        let scale = self.float(clif, scale);
        let positions = (self.int(clif, begin), self.int(clif, end));
        row_axpy(
            clif,
            (driver, coords),
            positions,
            scale,
            factors,
            row,
            &mut |clif, r| self.int(clif, r),
        );
    }
}

/// The translator's variables as the registers of the scalar ops' walk.
impl<'c> RegisterFile<Clif<'c>> for Translator<'_> {
    fn int(&mut self, clif: &mut Clif<'c>, r: IReg) -> Value {
        let v = Self::var(&mut self.ivars, clif, r, types::I64);
        clif.fb.use_var(v)
    }
    fn set_int(&mut self, clif: &mut Clif<'c>, r: IReg, value: Value) {
        let v = Self::var(&mut self.ivars, clif, r, types::I64);
        clif.fb.def_var(v, value);
    }
    fn float(&mut self, clif: &mut Clif<'c>, r: FReg) -> Value {
        let v = Self::var(&mut self.fvars, clif, r, types::F64);
        clif.fb.use_var(v)
    }
    fn set_float(&mut self, clif: &mut Clif<'c>, r: FReg, value: Value) {
        let v = Self::var(&mut self.fvars, clif, r, types::F64);
        clif.fb.def_var(v, value);
    }
    fn bool(&mut self, clif: &mut Clif<'c>, r: BReg) -> Value {
        let v = Self::var(&mut self.bvars, clif, r, types::I8);
        clif.fb.use_var(v)
    }
    fn set_bool(&mut self, clif: &mut Clif<'c>, r: BReg, value: Value) {
        let v = Self::var(&mut self.bvars, clif, r, types::I8);
        clif.fb.def_var(v, value);
    }
    fn dim(&mut self, clif: &mut Clif<'c>, var: u32) -> Value {
        clif.slot(Slot::Dim(var))
    }
    fn chunk(&mut self, clif: &mut Clif<'c>) -> (Value, Value) {
        (clif.slot(Slot::ChunkBegin), clif.slot(Slot::ChunkEnd))
    }
    fn level_format(&mut self, clif: &mut Clif<'c>, level: LevelRef) -> Option<LevelFormat> {
        self.format(clif, level)
    }
    fn call(&mut self, clif: &mut Clif<'c>, func: Func, a: Value, b: Value) -> Value {
        self.functions.emit(clif, self.call_conv, func, a, b)
    }
    fn load_value(&mut self, clif: &mut Clif<'c>, operand: u32, pos: Value) -> Option<Value> {
        let (base, ty) = self.typed_values(clif, operand)?;
        Some(load_value(clif, ty, base, pos))
    }
}

/// Value `index` of an input's `values` of type `ty`, as `f64` (every
/// `f32` and `bool` is exact in it).
fn load_value(clif: &mut Clif<'_>, ty: ValueType, values: Value, index: Value) -> Value {
    let addr = clif.element(values, index, ty.size() as u8);
    load_at(clif, ty, addr, 0)
}
