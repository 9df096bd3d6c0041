//! Bytecode → OpenCL C.
//!
//! The program becomes one kernel function. Registers are C locals declared
//! at its top; each op is a few statements (a level function's in a block
//! of its own), and the ops that jumps reach carry labels, so the
//! bytecode's jumps are `goto`s and its loops stay as the planner made
//! them. Scalar ops are the walk every compiled tier shares
//! ([`scalar_op`]) and level functions are written through [`CText`];
//! block ops are loops in the interpreter's order of operations, so the
//! sums round as on the other tiers.
//!
//! [`mapping`] decides how the work spreads over work-items; [`unmapped`]
//! names the ops the tier cannot run on a device yet.

use std::fmt::Write;

use smallvec::SmallVec;
use tessera_engine::block_ops::{
    block_rows_dot, dense_axpy, dense_dot, dense_rows_dot, factor_rows, format_of, output_row, row_axpy, rows_dot,
    scalar_op, segment_dot, semiring_dot, strided_rows, value_runs, values_axpy, BlockOperands, Columns, KernelBuilder,
    Length, RegisterFile, RowsOf, ScalarOp, StridedRead,
};
use tessera_engine::bytecode::{
    AxpyFactor, BReg, BlockRows, BlockRun, ChunkOutput, DotFactor, FReg, IReg, Op, Program, RunLength, Strided,
    StridedColumns, StridedRun, ValueRun,
};
use tessera_engine::notation::{Func, IntOp, Reduction, Semiring};
use tessera_engine::runtime::StorageSignature;
use tessera_formats::{ArrayRef, Builder, Cmp, Level, LevelFormat, LevelRef, ValueType};

use super::ctext::{Args, CText, CVal, Pointer, Scalar};
use super::rows::{RowsKernel, LANES_KERNEL, SPLIT_KERNEL};

/// How a kernel's work is spread over work-items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mapping {
    /// One work-item runs the whole program: outputs that several rows add
    /// into, which work-items could not share without atomics on doubles.
    Single,
    /// One work-item per coordinate of the outermost loop: each writes the
    /// output rows of its coordinate only (a dense output whose first mode
    /// is that loop's variable, or a sparse one assembled in two phases).
    /// Work-items with a workspace of their own are fewer and take the
    /// coordinates in turn.
    ItemPerRow,
    /// Each work-item runs a block of consecutive coordinates of the
    /// outermost loop into a partial output of its own, and the partials
    /// are added in block order: outputs that every row adds into (sums
    /// over the outer loop, as the parallel runtime's partials).
    Partials,
}

impl Mapping {
    /// The mapping in words, as `--print opencl` shows it.
    pub fn describe(self, program: &Program, entries: Entries) -> String {
        let var = program
            .chunking
            .as_ref()
            .and_then(|c| program.vars.get(c.var as usize))
            .map_or("the outer loop", String::as_str);
        let mut text = match (self, entries.workspace) {
            (Mapping::Single, _) => "one work-item runs the whole kernel".to_string(),
            (Mapping::ItemPerRow, None) => format!("one work-item per coordinate of {var}"),
            (Mapping::ItemPerRow, Some(_)) => {
                format!("work-items with a workspace each take coordinates of {var} in turn")
            }
            (Mapping::Partials, _) => {
                format!("each work-item sums a block of coordinates of {var} into a partial output")
            }
        };
        if entries.width.is_some() {
            text.push_str("; entries counted, placed, then written (two phases)");
        }
        text
    }
}

/// How `program` runs on a device.
pub(crate) fn mapping(program: &Program) -> Mapping {
    match &program.chunking {
        // Rows of a pattern output write their own positions, as rows of a
        // dense one write their own values.
        Some(chunking)
            if matches!(
                chunking.output,
                ChunkOutput::DenseRows | ChunkOutput::SparseParts | ChunkOutput::PatternRows { .. }
            ) =>
        {
            Mapping::ItemPerRow
        }
        Some(chunking) if chunking.output == ChunkOutput::DensePartials => Mapping::Partials,
        _ => Mapping::Single,
    }
}

/// Why the tier cannot run `program` on a device, if it cannot:
/// user-defined operators are Rust functions.
pub(crate) fn unmapped(program: &Program) -> Option<String> {
    program.ops.iter().find_map(|op| match op {
        Op::FCall {
            func: func @ Func::User(_),
            ..
        } => Some(format!(
            "{} `{func}`, a Rust function the device cannot run",
            crate::CALLBACK_REFUSAL
        )),
        _ => None,
    })
}

/// What a program writes besides a dense output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Entries {
    /// The coordinates of each entry it writes (appends, merged rows,
    /// flushed workspaces), when it writes entries.
    pub width: Option<usize>,
    /// The number of coordinates of its workspace, when it has one.
    pub workspace: Option<usize>,
}

impl Entries {
    fn of(program: &Program) -> Result<Entries, String> {
        let mut workspace = None;
        for op in &program.ops {
            let dims = match op {
                Op::WorkspaceAccum { coords, .. } => coords.len(),
                Op::WorkspaceAxpy { prefix, .. } => prefix.len() + 1,
                _ => continue,
            };
            if workspace.is_some_and(|d| d != dims) {
                return Err("the program's workspace ops disagree on its coordinates".into());
            }
            workspace = Some(dims);
        }
        let mut width = None;
        for op in &program.ops {
            let entry = match op {
                Op::Append { coords, .. } => coords.len(),
                Op::MergeRows { prefix, block, .. } => prefix.len() + 1 + block.len(),
                Op::MergeRuns { prefix, shifts, .. } => prefix.len() + 1 + shifts.len(),
                Op::RowsMerge { prefix, .. } => prefix.len() + 2,
                Op::WorkspaceFlush { prefix } => match workspace {
                    Some(dims) => prefix.len() + dims,
                    // A workspace nothing adds to (every term absent)
                    // flushes nothing.
                    None => continue,
                },
                _ => continue,
            };
            if width.is_some_and(|w| w != entry) {
                return Err("the program's entries disagree on their coordinates".into());
            }
            width = Some(entry);
        }
        Ok(Entries { width, workspace })
    }
}

/// The OpenCL C of a program: the text, the arguments it reads, how it
/// maps onto work-items and what entries it writes.
pub(crate) struct Source {
    /// Every kernel function, as `--print opencl` shows them.
    pub text: String,
    /// Each kernel function as a program of its own (the prelude and the
    /// function), built when a run first needs it: [`KERNEL_NAME`] first.
    pub programs: Vec<(&'static str, String)>,
    pub args: Args,
    pub mapping: Mapping,
    pub entries: Entries,
    /// The row dot the program is, when it has the row kernels too.
    pub rows: Option<RowsKernel>,
}

/// The name of the kernel function in the source.
pub(crate) const KERNEL_NAME: &str = "tessera_kernel";
/// The same program with its workspace in local memory, for workspaces
/// that fit there.
pub(crate) const LOCAL_WORKSPACE_KERNEL: &str = "tessera_kernel_local";

/// The words of a workspace's bitmap (`kernel::bitmap_words`).
const WORKSPACE_BITMAP_WORDS: &str = "const long ws_key_words = ws_size / 64 + 1;";

/// The kernel's arguments after its pointers, in order; `kernel` sets them
/// in the same order.
const FIXED_ARGUMENTS: &str = "    __global double* restrict out_all,
    const long out_len,
    __global const long* restrict scalars,
    __global long* restrict counts,
    __global const long* restrict offsets,
    __global long* restrict entry_coords,
    __global double* restrict entry_values,
    __global double* restrict ws_values,
    __global ulong* restrict ws_keys,
    __global uint* restrict ws_touched,
    __global const long* restrict ws_strides,
    const long ws_size,
    const int ws_sorted,
    __global double* restrict tmp_all,
    const long tmp_size,
    const long chunk_begin,
    const long chunk_end,
    const long out_base,
    const long split,
    __global long* restrict carry_rows,
    __global double* restrict carry_sums,
    __local double* restrict local_ws_values,
    __local ulong* restrict local_ws_keys,
    __local uint* restrict local_ws_touched,
    const int fill)
";

/// Writes `program` as OpenCL C, or says why it cannot.
pub(crate) fn generate(
    program: &Program,
    formats: &[Vec<LevelFormat>],
    signature: &StorageSignature,
) -> Result<Source, String> {
    if let Some(why) = unmapped(program) {
        return Err(why);
    }
    let mapping = mapping(program);
    let entries = Entries::of(program)?;
    let mut c = CText::new(signature.clone(), program.value_type);
    let mut writer = Writer {
        program,
        formats,
        entries,
        local_workspace: false,
    };
    writer.body(&mut c, mapping);
    let mut kernels = vec![(KERNEL_NAME, std::mem::take(&mut c.code))];
    if entries.workspace.is_some() {
        writer.local_workspace = true;
        writer.body(&mut c, mapping);
        writer.local_workspace = false;
        kernels.push((LOCAL_WORKSPACE_KERNEL, std::mem::take(&mut c.code)));
    }
    let rows = RowsKernel::of(program).filter(|_| mapping == Mapping::ItemPerRow && entries == Entries::default());
    let rows = rows.and_then(|rows| {
        let [lanes, split] = rows.write(&mut writer, &mut c)?;
        kernels.push((LANES_KERNEL, lanes));
        kernels.push((SPLIT_KERNEL, split));
        Some(rows)
    });
    if let Some(error) = c.error {
        return Err(error);
    }
    let mut text = String::new();
    let _ = writeln!(text, "// {}", mapping.describe(program, entries));
    if rows.is_some() {
        let _ = writeln!(
            text,
            "// rows of one dot: also {LANES_KERNEL} (a group of lanes per row) and {SPLIT_KERNEL} \
             (a split over positions), chosen at each run from the rows' lengths"
        );
    }
    if entries.workspace.is_some() {
        let _ = writeln!(
            text,
            "// workspaces that fit the device's local memory: {LOCAL_WORKSPACE_KERNEL}, a work-item per work-group"
        );
    }
    text.push_str(include_str!("prelude.cl"));
    let mut programs = Vec::with_capacity(kernels.len());
    for (name, code) in kernels {
        let mut kernel = String::new();
        let _ = writeln!(kernel, "__kernel void {name}(");
        for (k, pointer) in c.args.pointers.iter().enumerate() {
            let ty = match pointer {
                Pointer::Array(_, width) => Args::c_type(*width),
                Pointer::Values(op) => c.value_c_type(*op),
            };
            let name = c.args.clone().pointer(*pointer);
            let _ = writeln!(kernel, "    __global const {ty}* restrict {name}, // argument {k}");
        }
        kernel.push_str(FIXED_ARGUMENTS);
        kernel.push_str("{\n");
        kernel.push_str(&code);
        kernel.push_str("}\n");
        text.push('\n');
        text.push_str(&kernel);
        programs.push((name, format!("{}\n{kernel}", include_str!("prelude.cl"))));
    }
    Ok(Source {
        text,
        programs,
        args: c.args,
        mapping,
        entries,
        rows,
    })
}

pub(super) struct Writer<'p> {
    pub program: &'p Program,
    formats: &'p [Vec<LevelFormat>],
    pub entries: Entries,
    /// The workspace is in local memory (the kernel
    /// [`LOCAL_WORKSPACE_KERNEL`]), not global.
    pub local_workspace: bool,
}

/// The reads of a semiring dot over a driver's segment: its values, its
/// coordinates, and each dense factor's row.
pub(super) struct RowDot {
    pub semiring: Semiring,
    own: (CVal, CVal),
    coords: ArrayRef,
    rows: SmallVec<[(CVal, CVal); 3]>,
}

impl RowDot {
    /// Writes the dot over positions `from`, `from + step`, ... below `to`
    /// ([`semiring_dot`]), and returns the local holding it.
    pub fn sum(&self, c: &mut CText, from: &str, to: &str, step: &str) -> String {
        let coords = c.coordinates(self.coords);
        let (from, to) = (c.val(from), c.val(to));
        let step = match step {
            "1" => Length::Fixed(1),
            step => Length::In(c.val(step)),
        };
        let total = semiring_dot(c, self.semiring, (self.own, coords), (from, to, step), &self.rows);
        let total = c.text(total);
        c.local("double", total)
    }
}

pub(super) fn reg(r: u32) -> String {
    format!("r{r}")
}

pub(super) fn freg(r: u32) -> String {
    format!("f{r}")
}

fn breg(r: u32) -> String {
    format!("b{r}")
}

/// `a ⊕ b` of a reduction, in C.
pub(super) fn combine(reduction: Reduction, a: &str, b: &str) -> String {
    match reduction {
        Reduction::Sum => format!("{a} + {b}"),
        Reduction::Prod => format!("{a} * {b}"),
        Reduction::Min => format!("t_min({a}, {b})"),
        Reduction::Max => format!("t_max({a}, {b})"),
        Reduction::Or => format!("t_truth({a} != 0.0 || {b} != 0.0)"),
        Reduction::And => format!("t_truth({a} != 0.0 && {b} != 0.0)"),
    }
}

/// A function's value in C ([`Func::apply`] defines it).
pub(super) fn call(func: Func, a: &str, b: &str) -> String {
    use Func::*;
    let named = |name: &str| format!("{name}({a})");
    match func {
        Sqrt => named("sqrt"),
        Cbrt => named("cbrt"),
        Exp => named("exp"),
        Log => named("log"),
        Log10 => named("log10"),
        Abs => named("fabs"),
        Sin => named("sin"),
        Cos => named("cos"),
        Tan => named("tan"),
        Asin => named("asin"),
        Acos => named("acos"),
        Atan => named("atan"),
        Sinh => named("sinh"),
        Cosh => named("cosh"),
        Tanh => named("tanh"),
        Asinh => named("asinh"),
        Acosh => named("acosh"),
        Atanh => named("atanh"),
        Square => format!("{a} * {a}"),
        Cube => format!("{a} * {a} * {a}"),
        Heaviside => format!("t_truth({a} > 0.0)"),
        Not => format!("t_truth({a} == 0.0)"),
        Pow => format!("pow({a}, {b})"),
        Atan2 => format!("atan2({a}, {b})"),
        Min => format!("t_min({a}, {b})"),
        Max => format!("t_max({a}, {b})"),
        Mod => format!("fmod({a}, {b})"),
        Lt => format!("t_truth({a} < {b})"),
        Le => format!("t_truth({a} <= {b})"),
        Gt => format!("t_truth({a} > {b})"),
        Ge => format!("t_truth({a} >= {b})"),
        Eq => format!("t_truth({a} == {b})"),
        Ne => format!("t_truth({a} != {b})"),
        And => format!("t_truth({a} != 0.0 && {b} != 0.0)"),
        Or => format!("t_truth({a} != 0.0 || {b} != 0.0)"),
        Xor => format!("t_truth(({a} != 0.0) != ({b} != 0.0))"),
        // `unmapped` refuses programs that call one.
        User(_) => "NAN".into(),
        Cast(ValueType::F64 | ValueType::C64) | Real | Conj => a.to_string(),
        Imag => "0.0".into(),
        Cast(ValueType::F32) => format!("(double)(float)({a})"),
        Cast(ValueType::Bool) => format!("t_truth({a} != 0.0)"),
        Cast(ValueType::I64) => format!("as_double(convert_long_sat({a}))"),
        Cast(ValueType::I32) => format!("as_double((long)convert_int_sat({a}))"),
        Int(op, ty) => integer(op, ty, a, b),
    }
}

/// `a + b` as an output of values of type `ty` adds them: in `double`, or
/// wrapping for integers.
pub(super) fn output_sum(ty: ValueType, a: &str, b: &str) -> String {
    if ty.is_integer() {
        integer(IntOp::Add, ty, a, b)
    } else {
        format!("{a} + {b}")
    }
}

/// An integer operation on the words `a` and `b` in C, as [`IntOp`]
/// defines it: unsigned arithmetic (C's signed overflow is undefined),
/// wrapped to 32 bits for `i32`; division through the prelude's `t_idiv`
/// and `t_imod`, which never trap.
fn integer(op: IntOp, ty: ValueType, a: &str, b: &str) -> String {
    let (x, y) = (format!("as_long({a})"), format!("as_long({b})"));
    let wrapping = |expr: String| format!("(long)({expr})");
    let int = match op {
        IntOp::Add => wrapping(format!("(ulong){x} + (ulong){y}")),
        IntOp::Sub => wrapping(format!("(ulong){x} - (ulong){y}")),
        IntOp::Mul => wrapping(format!("(ulong){x} * (ulong){y}")),
        IntOp::Div => format!("t_idiv({x}, {y})"),
        IntOp::Mod => format!("t_imod({x}, {y})"),
        IntOp::Neg => wrapping(format!("0UL - (ulong){x}")),
        IntOp::Abs => format!("({x} < 0 ? (long)(0UL - (ulong){x}) : {x})"),
        IntOp::Min => format!("min({x}, {y})"),
        IntOp::Max => format!("max({x}, {y})"),
        IntOp::Square => wrapping(format!("(ulong){x} * (ulong){x}")),
        IntOp::Cube => wrapping(format!("(ulong){x} * (ulong){x} * (ulong){x}")),
        IntOp::Heaviside => format!("(long)({x} > 0)"),
        IntOp::Compare(cmp) => {
            let op = match cmp {
                Cmp::Lt => "<",
                Cmp::Le => "<=",
                Cmp::Gt => ">",
                Cmp::Ge => ">=",
                Cmp::Eq => "==",
                Cmp::Ne => "!=",
            };
            return format!("t_truth({x} {op} {y})");
        }
        IntOp::Cast(ValueType::F64 | ValueType::C64) => return format!("(double){x}"),
        IntOp::Cast(ValueType::F32) => return format!("(double)(float){x}"),
        IntOp::Cast(ValueType::Bool) => return format!("t_truth({x} != 0)"),
        IntOp::Cast(ValueType::I64) => x,
        IntOp::Cast(ValueType::I32) => format!("t_wrap32({x})"),
    };
    if ty == ValueType::I32 {
        format!("as_double(t_wrap32({int}))")
    } else {
        format!("as_double({int})")
    }
}

impl Writer<'_> {
    pub(super) fn format(&self, c: &mut CText, level: LevelRef) -> Option<LevelFormat> {
        format_of(self.formats, level).map_err(|why| c.fail(why)).ok()
    }

    /// `a + b` as the output adds its values (the program's value type).
    pub(super) fn add_output(&self, a: &str, b: &str) -> String {
        output_sum(self.program.value_type, a, b)
    }

    /// The C name of an input operand's values.
    pub(super) fn values(&self, c: &mut CText, operand: u32) -> String {
        if operand as usize >= self.program.inputs {
            c.fail(format!(
                "the program reads values of operand {operand}, which is not an input"
            ));
        }
        c.values(operand)
    }

    /// The C name of a level's coordinate array.
    pub(super) fn coordinates(&self, c: &mut CText, level: LevelRef) -> String {
        let Some(format) = self.format(c, level) else {
            return "0".into();
        };
        match format.coordinate_array() {
            Some(slot) => c.array(level.array(slot)),
            None => {
                c.fail(format!(
                    "level {} of operand {} has no coordinate array",
                    level.level, level.operand
                ));
                "0".into()
            }
        }
    }

    pub(super) fn extent(&self, c: &mut CText, level: LevelRef) -> String {
        c.scalar(Scalar::Extent(level))
    }

    /// The kernel's body: a loop over the units of work (one, or a row
    /// each) this work-item takes, each running the program.
    fn body(&mut self, c: &mut CText, mapping: Mapping) {
        let program = self.program;
        // A partial output per work-item, or the one output (`out_len` 0).
        c.line("__global double* restrict out = out_all + (long)get_global_id(0) * out_len;");
        if self.entries.workspace.is_some() && self.local_workspace {
            // A work-group of one work-item, its workspace in local memory,
            // cleared as the launch begins.
            c.line(WORKSPACE_BITMAP_WORDS);
            c.line("__local double* restrict wsv = local_ws_values;");
            c.line("__local ulong* restrict wsk = local_ws_keys;");
            c.line("__local uint* restrict wst = local_ws_touched;");
            c.line("for (long k = 0; k < ws_size; k++) wsv[k] = 0.0;");
            c.line("for (long k = 0; k < ws_key_words; k++) wsk[k] = 0;");
            c.line("long ws_count = 0;");
        } else if self.entries.workspace.is_some() {
            // Each work-item has a workspace of its own.
            c.line(WORKSPACE_BITMAP_WORDS);
            c.line("const long item = (long)get_global_id(0);");
            c.line("__global double* restrict wsv = ws_values + item * ws_size;");
            c.line("__global ulong* restrict wsk = ws_keys + item * ws_key_words;");
            c.line("__global uint* restrict wst = ws_touched + item * ws_size;");
            c.line("long ws_count = 0;");
        }
        // Each work-item has its vector temporaries, one after another.
        let mut offset = "0L".to_string();
        for (k, &var) in program.temps.iter().enumerate() {
            c.line(format!(
                "__global double* restrict tmp{k} = tmp_all + (long)get_global_id(0) * tmp_size + {offset};"
            ));
            let size = c.scalar(Scalar::Dim(var));
            offset = format!("{offset} + {size}");
        }
        match mapping {
            Mapping::Single => c.line("const long units = 1;"),
            Mapping::ItemPerRow => c.line("const long units = max(chunk_end - chunk_begin, 0L);"),
            Mapping::Partials => {
                c.line("const long units = (long)get_global_size(0);");
                c.line("const long block = (max(chunk_end - chunk_begin, 0L) + units - 1) / units;");
            }
        }
        c.open("for (long unit = (long)get_global_id(0); unit < units; unit += (long)get_global_size(0))");
        match mapping {
            Mapping::Single => {
                c.line("const long item_begin = chunk_begin;");
                c.line("const long item_end = chunk_end;");
            }
            Mapping::ItemPerRow => {
                c.line("const long item_begin = chunk_begin + unit;");
                c.line("const long item_end = item_begin + 1;");
            }
            Mapping::Partials => {
                c.line("const long item_begin = min(chunk_begin + unit * block, chunk_end);");
                c.line("const long item_end = min(item_begin + block, chunk_end);");
            }
        }
        self.declare_registers(c);
        if self.entries.width.is_some() {
            c.line("long appended = 0;");
        }
        let n = program.ops.len();
        let mut target = vec![false; n + 1];
        for op in &program.ops {
            if let Op::Jump { to } | Op::JumpIf { to, .. } | Op::JumpIfNot { to, .. } = op {
                match target.get_mut(*to) {
                    Some(t) => *t = true,
                    None => c.fail(format!("a jump leaves the program (to op {to} of {n})")),
                }
            }
        }
        for (pc, op) in program.ops.iter().enumerate() {
            if target[pc] {
                c.line(format!("L{pc}: ;"));
            }
            self.op(c, op);
            if c.error.is_some() {
                return;
            }
        }
        if target[n] {
            c.line(format!("L{n}: ;"));
        }
        c.line("done: ;");
        if self.entries.width.is_some() {
            c.line("if (!fill) counts[unit] = appended;");
        }
        c.close();
    }

    /// The program's registers, as C locals.
    pub(super) fn declare_registers(&self, c: &mut CText) {
        for (kind, prefix, count, init) in [
            ("long", "r", self.program.int_regs, "0L"),
            ("double", "f", self.program.float_regs, "0.0"),
            ("bool", "b", self.program.bool_regs, "false"),
        ] {
            for r in 0..count {
                c.line(format!("{kind} {prefix}{r} = {init};"));
            }
        }
    }

    pub(super) fn op(&mut self, c: &mut CText, op: &Op) {
        if scalar_op(c, self, op) != ScalarOp::NotScalar {
            return;
        }
        match op {
            Op::Jump { to } => c.line(format!("goto L{to};")),
            Op::JumpIf { cond, to } => c.line(format!("if (b{cond}) goto L{to};")),
            Op::JumpIfNot { cond, to } => c.line(format!("if (!b{cond}) goto L{to};")),
            Op::TempLoad { temp, index, dst } => c.line(format!("f{dst} = tmp{temp}[r{index}];")),
            Op::TempStore { temp, index, value } => c.line(format!("tmp{temp}[r{index}] = f{value};")),
            Op::TempFill { temp, value } => {
                let n = self.temp_length(c, *temp);
                c.line(format!("for (long k = 0; k < {n}; k++) tmp{temp}[k] = f{value};"));
            }
            Op::AccumOutput { pos, value } => {
                let at = format!("out[r{pos} - out_base]");
                let sum = self.add_output(&at, &freg(*value));
                c.line(format!("{at} = {sum};"));
            }
            Op::DotBlock {
                driver,
                begin,
                end,
                factors,
                temp,
                acc,
            } => self.dot_block(c, *driver, (*begin, *end), (factors, *temp), *acc),
            Op::DenseDot {
                scale,
                factors,
                len,
                acc,
            } => self.dense_dot(c, *scale, factors, *len, *acc),
            // A work-item runs its updates at once: the same sums as
            // deferring them (which only orders the work by tiles).
            Op::StridedAxpy {
                rows,
                scale,
                factors,
                out,
                columns,
                ..
            } => self.strided_axpy(c, (*rows, *scale), factors, *out, columns.as_ref()),
            Op::StridedFlush => {}
            Op::DenseRowsDot {
                rows,
                len,
                scale,
                factors,
                shared,
                out,
            } => {
                for operand in factors
                    .iter()
                    .map(|f| f.operand)
                    .chain(shared.iter().map(|s| s.operand))
                {
                    self.values(c, operand);
                }
                c.open("");
                let shape = (rows.resolve(|r| c.val(reg(r))), len.resolve(|r| c.val(reg(r))));
                let scale = c.val(freg(*scale));
                dense_rows_dot(c, shape, scale, (factors, shared), *out, &mut |c, r| c.val(reg(r)));
                c.close();
            }
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
                c,
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
                c,
                (*semiring, *every_row),
                RowsOf {
                    level: *rows,
                    parent: *parent,
                    first: *first,
                    last: *last,
                },
                *driver,
                factors,
                (*out, *out_parent),
            ),
            Op::DenseAxpy {
                scale,
                factors,
                temp,
                out,
                out_parent,
            } => {
                c.open("");
                let parent = c.val(reg(*out_parent));
                let row = output_row(c, *out, parent);
                self.dense_axpy(c, row, *scale, factors, *temp);
                c.close();
            }
            Op::TempAxpy { temp, scale, factors } => {
                let target = c.temp_run(*temp);
                let n = self.temp_length(c, *temp);
                let n = c.val(n);
                self.dense_axpy(c, (target, n), *scale, factors, None);
            }
            Op::ValuesAxpy {
                driver,
                begin,
                end,
                scale,
                factors,
                map,
            } => self.values_axpy(c, (*driver, *begin, *end), *scale, factors, *map),
            Op::RowAxpy {
                driver,
                begin,
                end,
                scale,
                factors,
                out,
                out_parent,
            } => self.row_axpy(c, (*driver, *begin, *end), *scale, factors, (*out, *out_parent)),
            Op::Append { coords, value } => {
                let coords: Vec<String> = coords.iter().map(|&r| reg(r)).collect();
                self.append(c, &coords, &freg(*value));
            }
            Op::MergeRuns {
                runs,
                op,
                scales,
                prefix,
                shifts,
            } => self.merge_runs(c, runs, (*op, *scales), prefix, shifts),
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
                c,
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
                c,
                [(*a_rows, *a_parent), (*b_rows, *b_parent)],
                (*first, *last),
                (*op, *scales),
                prefix,
            ),
            Op::WorkspaceAccum { coords, value } => self.workspace_accumulate(c, coords, *value),
            Op::WorkspaceAxpy {
                driver,
                begin,
                end,
                scale,
                prefix,
            } => self.workspace_axpy(c, (*driver, *begin, *end), *scale, prefix),
            Op::WorkspaceFlush { prefix } => self.workspace_flush(c, prefix),
            // The interpreter's shortcuts: the loop that follows is the kernel's.
            Op::PositionLoop { .. } | Op::RunEnd { .. } => {}
            Op::Halt => c.line("goto done;"),
            other => c.fail(format!("the OpenCL tier does not write `{other}` yet")),
        }
    }

    /// `acc += Σ_p own[p] * Π factors[coords[p]]` ([`segment_dot`]).
    fn dot_block(
        &self,
        c: &mut CText,
        driver: LevelRef,
        (begin, end): (u32, u32),
        (factors, temp): (&[DotFactor], Option<u32>),
        acc: u32,
    ) {
        let Some(coords) = self.walked(c, driver, factors) else {
            return;
        };
        c.open("");
        let segment = (c.val(reg(begin)), c.val(reg(end)));
        let total = segment_dot(c, (driver, coords), segment, (factors, temp), &mut |c, r| c.val(reg(r)));
        let total = c.text(total);
        c.line(format!("f{acc} += {total};"));
        c.close();
    }

    /// `acc += scale * Σ_{k < len} Π runs[k]`, the sum from 0.0 in order.
    fn dense_dot(&self, c: &mut CText, scale: u32, factors: &[ValueRun], len: RunLength, acc: u32) {
        for f in factors {
            self.values(c, f.operand);
        }
        c.open("");
        let runs = value_runs(c, factors, &mut |c, r| c.val(reg(r)));
        let scale = c.val(freg(scale));
        let len = len.resolve(|r| c.val(reg(r)));
        let total = dense_dot(c, scale, &runs, len);
        let total = c.text(total);
        c.line(format!("f{acc} += {total};"));
        c.close();
    }

    /// For each row `r < rows`: `out[start + r * step] += scale * Π
    /// factors(r)`, the product taken from `scale` in the factors' order,
    /// and with `columns` a row of such products ([`strided_rows`]).
    fn strided_axpy(
        &self,
        c: &mut CText,
        (rows, scale): (u32, u32),
        factors: &[Strided],
        out: StridedRun,
        columns: Option<&StridedColumns>,
    ) {
        c.open("");
        let mut reads: SmallVec<[StridedRead<CText>; 3]> = SmallVec::new();
        for f in factors {
            let read = match *f {
                Strided::Run(run) => {
                    // Refuses values of an operand that is not an input.
                    self.values(c, run.operand);
                    let start = c.val(reg(run.start));
                    StridedRead::Run {
                        run: c.value_run(run.operand, start),
                        step: c.val(reg(run.step)),
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
                    self.values(c, operand);
                    let Some(coords) = self.format(c, level).and_then(|f| f.coordinate_array()) else {
                        // Records the refusal: the level has no coordinates.
                        self.coordinates(c, level);
                        c.close();
                        return;
                    };
                    let base = c.val(reg(base));
                    StridedRead::Gather {
                        run: c.value_run(operand, base),
                        coords: c.coordinates(level.array(coords)),
                        start: c.val(reg(start)),
                        step: c.val(reg(step)),
                        coord_step: coord_step.map(|s| c.val(reg(s))),
                    }
                }
            };
            reads.push(read);
        }
        let out_start = c.val(reg(out.start));
        let target = c.output_target(out_start);
        let (zero, rows, scale, out_step) = (c.int(0), c.val(reg(rows)), c.val(freg(scale)), c.val(reg(out.step)));
        let steps: SmallVec<[Option<CVal>; 3]> = columns
            .iter()
            .flat_map(|columns| &columns.steps)
            .map(|step| step.map(|r| c.val(reg(r))))
            .collect();
        let columns = columns.map(|columns| Columns {
            count: c.val(reg(columns.count)),
            out_step: c.val(reg(columns.out_step)),
            steps: &steps,
        });
        strided_rows(c, (zero, rows), scale, &reads, (target, out_step), columns);
        c.close();
    }

    /// [`Op::BlockRowsDot`]: the stored blocks times their runs ([`block_rows_dot`]).
    fn block_rows_dot(
        &self,
        c: &mut CText,
        (driver, blocks): (LevelRef, BlockRows),
        (rows, len): (RunLength, RunLength),
        scale: u32,
        (factors, shared): (&[BlockRun], &[BlockRun]),
        (out, out_block_step): (StridedRun, u32),
    ) {
        let Some(format) = self.format(c, driver) else {
            return;
        };
        let Some(coords) = format.coordinate_array().map(|slot| driver.array(slot)) else {
            self.coordinates(c, driver);
            return;
        };
        for run in factors.iter().chain(shared) {
            self.values(c, run.operand);
        }
        c.open("");
        let operands = BlockOperands::new((driver, format), coords, (factors, shared), (out, out_block_step));
        let shape = (rows.resolve(|r| c.val(reg(r))), len.resolve(|r| c.val(reg(r))));
        let scale = c.val(freg(scale));
        block_rows_dot(c, operands, blocks, shape, scale, &mut |c, r| c.val(reg(r)));
        c.close();
    }

    /// `out[p] += scale * value[p] * Π factors[c]` (or `map` of it) for each position `p` of `driver` in `begin..end`, `c` its
    /// coordinate ([`Op::ValuesAxpy`]).
    fn values_axpy(
        &self,
        c: &mut CText,
        (driver, begin, end): (LevelRef, u32, u32),
        scale: u32,
        factors: &[DotFactor],
        map: Option<Func>,
    ) {
        // A scaled copy reads no coordinates: its level may have none.
        let coords = match factors {
            [] => {
                self.values(c, driver.operand);
                self.format(c, driver)
                    .map(|f| f.coordinate_array().map(|slot| driver.array(slot)))
            }
            _ => self.walked(c, driver, factors).map(Some),
        };
        let Some(coords) = coords else {
            return;
        };
        c.open("");
        let positions = (c.val(reg(begin)), c.val(reg(end)));
        let scale = c.val(freg(scale));
        values_axpy(c, (driver, coords), positions, scale, factors, map, &mut |c, r| {
            c.val(reg(r))
        });
        c.close();
    }

    /// The coordinate array of a level the program walks by position, or
    /// a failure naming the level when it has none.
    fn coordinate_array(&self, c: &mut CText, level: LevelRef) -> Option<tessera_formats::ArrayRef> {
        let coords = self
            .format(c, level)
            .and_then(|format| format.coordinate_array())
            .map(|slot| level.array(slot));
        if coords.is_none() {
            // Records why.
            self.coordinates(c, level);
        }
        coords
    }

    /// The coordinates of the level an op walks by position; a failure is
    /// recorded when the program does not have them, the level's values or
    /// a factor's.
    fn walked(&self, c: &mut CText, driver: LevelRef, factors: &[DotFactor]) -> Option<ArrayRef> {
        let coords = self.coordinate_array(c, driver);
        self.values(c, driver.operand);
        self.check_factors(c, factors);
        coords
    }

    /// Records a failure when the program reads factors it does not have.
    fn check_factors(&self, c: &mut CText, factors: &[DotFactor]) {
        for f in factors {
            self.values(c, f.operand);
            self.format(c, f.level);
        }
    }

    /// For each row `c` in `first..last` below `parent`: the semiring's
    /// dot of the driver's segment of that row, added to the dense output
    /// when the segment is not empty (or always, `every_row`).
    fn rows_dot(
        &self,
        c: &mut CText,
        (semiring, every_row): (Semiring, bool),
        rows: RowsOf,
        driver: LevelRef,
        factors: &[DotFactor],
        (out, out_parent): (LevelRef, u32),
    ) {
        let (Some(format), Some(coords)) = (self.format(c, driver), self.walked(c, driver, factors)) else {
            return;
        };
        c.open("");
        let driver = (driver, format, coords);
        rows_dot(
            c,
            (semiring, every_row),
            rows,
            driver,
            factors,
            (out, out_parent),
            &mut |c, r| c.val(reg(r)),
        );
        c.close();
    }

    /// What a dot of a driver's row reads, or nothing when the formats do
    /// not have the driver.
    pub(super) fn row_dot(
        &self,
        c: &mut CText,
        semiring: Semiring,
        driver: LevelRef,
        factors: &[DotFactor],
    ) -> Option<RowDot> {
        let coords = self.walked(c, driver, factors)?;
        let values = c.values(driver.operand);
        let zero = tessera_formats::Builder::int(c, 0);
        let own = (c.val(values), zero);
        let (rows, _) = factor_rows(c, factors, zero, &mut |c, r| c.val(reg(r)));
        Some(RowDot {
            semiring,
            own,
            coords,
            rows,
        })
    }

    /// The positions `(begin, end)` of the driver's segment of row `row`
    /// (a C expression) of level `rows` below register `parent`.
    pub(super) fn row_positions(
        &self,
        c: &mut CText,
        rows: LevelRef,
        parent: u32,
        driver: LevelRef,
        row: &str,
    ) -> (String, String) {
        let Some(format) = self.format(c, driver) else {
            return ("0".into(), "0".into());
        };
        let rows_extent = self.extent(c, rows);
        let position = c.local("long", format!("r{parent} * {rows_extent} + {row}"));
        let position = c.val(position);
        let (b, e) = format.pos_iter(c, driver, position);
        (c.text(b), c.text(e))
    }

    /// Where output row 0 below register `out_parent` is in `out` (the
    /// dense output, offset by the run's `out_base`).
    pub(super) fn output_row(&self, c: &mut CText, out: LevelRef, out_parent: u32) -> String {
        let out_extent = self.extent(c, out);
        c.local("long", format!("r{out_parent} * {out_extent} - out_base"))
    }

    /// `target[k] += scale * Π factors[k] (* temp[k])` for `k < n`.
    fn dense_axpy(
        &self,
        c: &mut CText,
        target: ((CVal, CVal), CVal),
        scale: u32,
        factors: &[DotFactor],
        temp: Option<u32>,
    ) {
        self.check_factors(c, factors);
        let temp = temp.map(|t| {
            let n = self.temp_length(c, t);
            (c.temp_run(t), c.val(n))
        });
        let scale = c.val(freg(scale));
        c.open("");
        dense_axpy(c, target, scale, factors, temp, &mut |c, r| c.val(reg(r)));
        c.close();
    }

    /// The number of components of vector temporary `temp`.
    fn temp_length(&self, c: &mut CText, temp: u32) -> String {
        match self.program.temps.get(temp as usize) {
            Some(&var) => c.scalar(Scalar::Dim(var)),
            None => {
                c.fail(format!(
                    "the program uses vector temporary {temp}, which it does not have"
                ));
                "0".into()
            }
        }
    }

    /// For each position `p` of the driver in `begin..end` (coordinate
    /// `c`): the output row gets `scale * own[p] * Π factor rows`.
    fn row_axpy(
        &self,
        c: &mut CText,
        (driver, begin, end): (LevelRef, u32, u32),
        scale: u32,
        factors: &[AxpyFactor],
        (out, out_parent): (LevelRef, u32),
    ) {
        let Some(coords) = self.walked(c, driver, &[]) else {
            return;
        };
        for f in factors {
            self.values(c, f.operand);
            self.format(c, f.level);
            if let Some(via) = f.via {
                self.format(c, via);
            }
        }
        c.open("");
        let parent = c.val(reg(out_parent));
        let row = output_row(c, out, parent);
        let positions = (c.val(reg(begin)), c.val(reg(end)));
        let scale = c.val(freg(scale));
        row_axpy(c, (driver, coords), positions, scale, factors, row, &mut |c, r| {
            c.val(reg(r))
        });
        c.close();
    }
}

/// The kernel's C variables (`r3`, `f0`, `b2`) as the registers of the
/// scalar ops' walk.
impl RegisterFile<CText> for Writer<'_> {
    fn int(&mut self, c: &mut CText, r: IReg) -> CVal {
        c.val(reg(r))
    }
    fn set_int(&mut self, c: &mut CText, r: IReg, value: CVal) {
        let value = c.text(value);
        c.line(format!("{} = {value};", reg(r)));
    }
    fn float(&mut self, c: &mut CText, r: FReg) -> CVal {
        c.val(freg(r))
    }
    fn set_float(&mut self, c: &mut CText, r: FReg, value: CVal) {
        let value = c.text(value);
        c.line(format!("{} = {value};", freg(r)));
    }
    fn bool(&mut self, c: &mut CText, r: BReg) -> CVal {
        c.val(breg(r))
    }
    fn set_bool(&mut self, c: &mut CText, r: BReg, value: CVal) {
        let value = c.text(value);
        c.line(format!("{} = {value};", breg(r)));
    }
    fn dim(&mut self, c: &mut CText, var: u32) -> CVal {
        let size = c.scalar(Scalar::Dim(var));
        c.val(size)
    }
    fn chunk(&mut self, c: &mut CText) -> (CVal, CVal) {
        (c.val("item_begin"), c.val("item_end"))
    }
    fn level_format(&mut self, c: &mut CText, level: LevelRef) -> Option<LevelFormat> {
        self.format(c, level)
    }
    fn call(&mut self, c: &mut CText, func: Func, a: CVal, b: CVal) -> CVal {
        let (a, b) = (c.text(a), c.text(b));
        c.val(call(func, &a, &b))
    }
    fn load_value(&mut self, c: &mut CText, operand: u32, pos: CVal) -> Option<CVal> {
        let values = self.values(c, operand);
        let value = format!("{values}[{}]", c.text(pos));
        // Integers are held as their bits (sign-extended to 64).
        Some(c.val(if c.value_type(operand).is_integer() {
            format!("as_double((long){value})")
        } else {
            value
        }))
    }
    fn open_scope(&mut self, c: &mut CText) {
        c.open("");
    }
    fn close_scope(&mut self, c: &mut CText) {
        c.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workspace_nothing_adds_to_flushes_no_entries() {
        let program = Program {
            ops: vec![Op::WorkspaceFlush {
                prefix: Default::default(),
            }],
            ..Program::default()
        };
        assert!(unmapped(&program).is_none());
        assert_eq!(Entries::of(&program).unwrap(), Entries::default());
    }
}
