//! The OpenCL C instantiation of the staged level functions.
//!
//! [`CText`] implements [`tessera_formats::Builder`] with C expressions:
//! every value it makes is a fresh local (`long t12 = ...;`) named by its
//! string, so an expression is never repeated however often it is used,
//! and `while_loop` writes a `for (;;)` whose state lives in locals
//! declared before it. A level function called with it writes its C into
//! the kernel being generated — the same implementation the interpreter
//! and Cranelift run, with no per-format code in this tier.
//!
//! Storage reaches the kernel as arguments recorded in [`Args`]: one
//! `__global` pointer per index array and per operand's values, typed by
//! the storage signature, and one table of 64-bit scalars (extents, level
//! parameters, loop sizes).

use tessera_engine::runtime::StorageSignature;
use tessera_formats::staging::{LoopBody, LoopCond, LoopState};
use tessera_formats::{ArrayRef, Builder, Cmp, IndexWidth, IntOp, LevelRef, Param, ValueType};

/// A scalar of the kernel's table of 64-bit parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Scalar {
    /// A level's extent.
    Extent(LevelRef),
    /// A level's `k`-th format-specific parameter.
    Extra(LevelRef, u8),
    /// The size of a loop variable.
    Dim(u32),
}

/// A `__global` pointer argument of the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Pointer {
    /// An index array, of the width the signature gives it.
    Array(ArrayRef, IndexWidth),
    /// An input operand's values.
    Values(u32),
}

/// The kernel's arguments, in the order they are declared and set.
#[derive(Debug, Default, Clone)]
pub(crate) struct Args {
    pub pointers: Vec<Pointer>,
    pub scalars: Vec<Scalar>,
}

impl Args {
    /// The C name of a pointer argument, recording it on first use.
    pub fn pointer(&mut self, pointer: Pointer) -> String {
        let k = match self.pointers.iter().position(|p| *p == pointer) {
            Some(k) => k,
            None => {
                self.pointers.push(pointer);
                self.pointers.len() - 1
            }
        };
        match pointer {
            Pointer::Array(a, _) => format!("a{k}_t{}l{}s{}", a.level.operand, a.level.level, a.slot),
            Pointer::Values(op) => format!("v{k}_t{op}"),
        }
    }

    /// The C expression of a scalar, recording it on first use.
    pub fn scalar(&mut self, scalar: Scalar) -> String {
        let k = match self.scalars.iter().position(|s| *s == scalar) {
            Some(k) => k,
            None => {
                self.scalars.push(scalar);
                self.scalars.len() - 1
            }
        };
        format!("scalars[{k}]")
    }

    /// The C type an index array of this width holds.
    pub fn c_type(width: IndexWidth) -> &'static str {
        match width {
            IndexWidth::U32 => "uint",
            IndexWidth::U64 => "ulong",
            IndexWidth::I64 => "long",
        }
    }
}

/// A C expression made by [`CText`]: a literal or the name of a local
/// (an index into its table of texts; level functions copy values freely).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CVal(u32);

/// The builder the translation and the level functions write C through.
pub(crate) struct CText {
    texts: Vec<String>,
    /// The statements written so far.
    pub code: String,
    pub args: Args,
    signature: StorageSignature,
    /// The type of the output's values, which decides how they add.
    pub output_type: ValueType,
    fresh: usize,
    depth: usize,
    /// The first reason the program cannot be written as OpenCL C.
    pub error: Option<String>,
}

impl CText {
    /// The C type of input `operand`'s values: as stored, read as
    /// `double` wherever the kernel uses them (C converts on load).
    pub fn value_c_type(&self, operand: u32) -> &'static str {
        match self.signature.value_type(operand) {
            ValueType::F64 => "double",
            ValueType::F32 => "float",
            ValueType::I64 => "long",
            ValueType::I32 => "int",
            ValueType::Bool => "uchar",
            ValueType::C64 => unreachable!("complex tensors reach kernels as their real and imaginary parts"),
        }
    }

    /// The value type of input `operand`.
    pub fn value_type(&self, operand: u32) -> ValueType {
        self.signature.value_type(operand)
    }

    pub fn new(signature: StorageSignature, output_type: ValueType) -> Self {
        CText {
            texts: Vec::new(),
            code: String::new(),
            args: Args::default(),
            signature,
            output_type,
            fresh: 0,
            depth: 1,
            error: None,
        }
    }

    /// The value of a C expression (a literal or a local's name).
    pub fn val(&mut self, text: impl Into<String>) -> CVal {
        self.texts.push(text.into());
        CVal(self.texts.len() as u32 - 1)
    }

    /// The C text of a value.
    pub fn text(&self, value: CVal) -> String {
        self.texts[value.0 as usize].clone()
    }

    /// Records why the program cannot be written (the first reason wins).
    pub fn fail(&mut self, why: impl Into<String>) {
        self.error.get_or_insert_with(|| why.into());
    }

    /// Writes one line at the current depth.
    pub fn line(&mut self, text: impl AsRef<str>) {
        for _ in 0..self.depth {
            self.code.push_str("    ");
        }
        self.code.push_str(text.as_ref());
        self.code.push('\n');
    }

    /// Opens a C block (`head {`), the lines after it one level deeper.
    pub fn open(&mut self, head: impl AsRef<str>) {
        self.line(format!("{} {{", head.as_ref()).trim_start());
        self.depth += 1;
    }

    pub fn close(&mut self) {
        self.depth -= 1;
        self.line("}");
    }

    /// A fresh local of type `ty` holding `value`.
    pub fn local(&mut self, ty: &str, value: impl AsRef<str>) -> String {
        let name = format!("t{}", self.fresh);
        self.fresh += 1;
        self.line(format!("{ty} {name} = {};", value.as_ref()));
        name
    }

    /// A fresh local of type `ty` holding `value`, as a value.
    fn local_val(&mut self, ty: &str, value: String) -> CVal {
        let name = self.local(ty, value);
        self.val(name)
    }

    /// A fresh name for a local the caller declares.
    pub fn fresh_name(&mut self, prefix: &str) -> String {
        let name = format!("{prefix}{}", self.fresh);
        self.fresh += 1;
        name
    }

    /// The C name of an index array, typed by the signature.
    pub fn array(&mut self, array: ArrayRef) -> String {
        match self.signature.width(array) {
            Some(width) => self.args.pointer(Pointer::Array(array, width)),
            None => {
                self.fail(format!(
                    "the storage has no array {} of level {} of operand {}",
                    array.slot, array.level.level, array.level.operand
                ));
                "0".into()
            }
        }
    }

    /// The C name of an input operand's values.
    pub fn values(&mut self, operand: u32) -> String {
        self.args.pointer(Pointer::Values(operand))
    }

    /// The C expression of a scalar parameter.
    pub fn scalar(&mut self, scalar: Scalar) -> String {
        self.args.scalar(scalar)
    }
}

/// A C literal of an `i64` (the minimum has no literal of its own).
pub(crate) fn long_literal(value: i64) -> String {
    if value == i64::MIN {
        "(-9223372036854775807L - 1)".into()
    } else {
        format!("{value}L")
    }
}

/// A C literal of an `f64` that reads back as the same bits.
pub(crate) fn double_literal(value: f64) -> String {
    if value.is_nan() || value.is_subnormal() {
        // Its bits exactly: an integer's word is often a NaN or subnormal
        // pattern, which a decimal literal or `NAN` would not keep.
        format!("as_double(0x{:016x}UL)", value.to_bits())
    } else if value.is_infinite() {
        if value > 0.0 { "INFINITY" } else { "(-INFINITY)" }.into()
    } else {
        // Rust prints the shortest text that parses back to the same bits;
        // `{:?}` keeps a `.0` or an exponent, so C reads a double.
        format!("{value:?}")
    }
}

/// `a op b` in C, for 64-bit integers.
pub(crate) fn int_op(op: IntOp, a: &str, b: &str) -> String {
    match op {
        IntOp::Add => format!("{a} + {b}"),
        IntOp::Sub => format!("{a} - {b}"),
        IntOp::Mul => format!("{a} * {b}"),
        // Both sides as `long`: C's `min` has no overload for mixed types.
        IntOp::Min => format!("min((long)({a}), (long)({b}))"),
        IntOp::Max => format!("max((long)({a}), (long)({b}))"),
        IntOp::BitAnd => format!("{a} & {b}"),
        IntOp::BitOr => format!("{a} | {b}"),
        // OpenCL C takes shift amounts modulo the width, as the interpreter.
        IntOp::Shl => format!("(long)((ulong)({a}) << ({b}))"),
        IntOp::Shr => format!("(long)((ulong)({a}) >> ({b}))"),
        IntOp::Div => format!("(({b}) == 0 ? 0 : (long)((ulong)({a}) / (ulong)({b})))"),
        IntOp::Rem => format!("(({b}) == 0 ? 0 : (long)((ulong)({a}) % (ulong)({b})))"),
    }
}

/// A comparison's C operator.
pub(crate) fn comparison(op: Cmp) -> &'static str {
    match op {
        Cmp::Eq => "==",
        Cmp::Ne => "!=",
        Cmp::Lt => "<",
        Cmp::Le => "<=",
        Cmp::Gt => ">",
        Cmp::Ge => ">=",
    }
}

impl Builder for CText {
    type Int = CVal;
    type Bool = CVal;

    fn int(&mut self, value: i64) -> CVal {
        self.val(long_literal(value))
    }

    fn bool_const(&mut self, value: bool) -> CVal {
        self.val(if value { "true" } else { "false" })
    }

    fn binary(&mut self, op: IntOp, a: CVal, b: CVal) -> CVal {
        let (a, b) = (self.text(a), self.text(b));
        self.local_val("long", int_op(op, &a, &b))
    }

    fn compare(&mut self, op: Cmp, a: CVal, b: CVal) -> CVal {
        let (a, b) = (self.text(a), self.text(b));
        self.local_val("bool", format!("{a} {} {b}", comparison(op)))
    }

    fn and(&mut self, a: CVal, b: CVal) -> CVal {
        let (a, b) = (self.text(a), self.text(b));
        self.local_val("bool", format!("{a} && {b}"))
    }

    fn or(&mut self, a: CVal, b: CVal) -> CVal {
        let (a, b) = (self.text(a), self.text(b));
        self.local_val("bool", format!("{a} || {b}"))
    }

    fn not(&mut self, a: CVal) -> CVal {
        let a = self.text(a);
        self.local_val("bool", format!("!{a}"))
    }

    fn select(&mut self, cond: CVal, then: CVal, otherwise: CVal) -> CVal {
        let (cond, then, otherwise) = (self.text(cond), self.text(then), self.text(otherwise));
        self.local_val("long", format!("{cond} ? {then} : {otherwise}"))
    }

    fn load(&mut self, array: ArrayRef, index: CVal) -> CVal {
        let name = self.array(array);
        let index = self.text(index);
        self.local_val("long", format!("(long){name}[{index}]"))
    }

    fn store(&mut self, _array: ArrayRef, _index: CVal, _value: CVal) {
        self.fail("the OpenCL tier does not assemble a level's arrays on the device");
    }

    fn grow(&mut self, _array: ArrayRef, _len: CVal) {
        self.fail("the OpenCL tier does not assemble a level's arrays on the device");
    }

    fn param(&mut self, level: LevelRef, param: Param) -> CVal {
        let scalar = match param {
            Param::Extent => Scalar::Extent(level),
            Param::Extra(k) => Scalar::Extra(level, k),
        };
        let text = self.scalar(scalar);
        self.val(text)
    }

    fn while_loop(
        &mut self,
        init: &[CVal],
        cond: &mut LoopCond<'_, Self, CVal, CVal>,
        body: &mut LoopBody<'_, Self, CVal>,
    ) -> LoopState<CVal> {
        let state: LoopState<CVal> = init
            .iter()
            .map(|&value| {
                let name = self.fresh_name("s");
                let value = self.text(value);
                self.line(format!("long {name} = {value};"));
                self.val(name)
            })
            .collect();
        self.open("for (;;)");
        let keep_going = cond(self, &state);
        let keep_going = self.text(keep_going);
        self.line(format!("if (!({keep_going})) break;"));
        let next = body(self, &state);
        // The next state is computed from the current one in full before
        // any of it is overwritten.
        let staged: Vec<String> = next
            .iter()
            .map(|&value| {
                let value = self.text(value);
                self.local("long", value)
            })
            .collect();
        for (&name, value) in state.iter().zip(&staged) {
            let name = self.text(name);
            self.line(format!("{name} = {value};"));
        }
        self.close();
        state
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_read_back_as_the_same_values() {
        assert_eq!(double_literal(0.1), "0.1");
        assert_eq!(double_literal(-0.0), "-0.0");
        assert_eq!(double_literal(1e300), "1e300");
        assert_eq!(double_literal(f64::NEG_INFINITY), "(-INFINITY)");
        assert_eq!(long_literal(i64::MIN), "(-9223372036854775807L - 1)");
        assert_eq!(long_literal(-3), "-3L");
    }
}
