//! The builder trait that level functions are written against.
//!
//! Each level format writes its level functions once, generic over
//! [`Builder`]. A tier instantiates them with its own builder: the
//! interpreter with plain integers ([`Immediate`]: the functions run), the
//! Cranelift tier with IR values (the functions are inlined into a kernel),
//! the OpenCL tier with C expressions. The builder offers only what level
//! functions need: integer arithmetic, comparisons, selects, loads and stores
//! of a level's arrays, its scalar parameters, and structured loops.

use crate::tensor::LevelStorage;
use smallvec::SmallVec;

/// Which level of which tensor operand a level function works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LevelRef {
    pub operand: u32,
    pub level: u32,
}

impl LevelRef {
    pub fn new(operand: usize, level: usize) -> Self {
        LevelRef {
            operand: operand as u32,
            level: level as u32,
        }
    }

    /// The `slot`-th array of this level (e.g. `pos` = 0, `idx` = 1 for compressed).
    pub fn array(self, slot: u8) -> ArrayRef {
        ArrayRef { level: self, slot }
    }
}

/// One index array of one level of one operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArrayRef {
    pub level: LevelRef,
    pub slot: u8,
}

/// The scalar parameters every level has: its extent (the size of the
/// dimension its coordinates index) and up to two format-specific values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Param {
    Extent,
    Extra(u8),
}

/// Integer operations on builder values (two's complement, 64-bit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IntOp {
    Add,
    Sub,
    Mul,
    Min,
    Max,
    BitAnd,
    BitOr,
    /// Shift left, by the amount modulo 64.
    Shl,
    /// Logical shift right, by the amount modulo 64.
    Shr,
    /// Unsigned quotient; 0 when dividing by 0.
    Div,
    /// Unsigned remainder; 0 when dividing by 0.
    Rem,
}

/// Comparisons of builder values (signed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// Loop state threaded through [`Builder::while_loop`].
pub type LoopState<I> = SmallVec<[I; 4]>;

/// The condition of a [`Builder::while_loop`], given the loop state.
pub type LoopCond<'a, B, I, Z> = dyn FnMut(&mut B, &[I]) -> Z + 'a;
/// The body of a [`Builder::while_loop`]: the next loop state.
pub type LoopBody<'a, B, I> = dyn FnMut(&mut B, &[I]) -> LoopState<I> + 'a;

/// What level functions are staged over. See the module documentation.
pub trait Builder {
    /// A 64-bit integer value (a position, coordinate or size).
    type Int: Copy;
    /// A boolean; kept distinct from integers because compiled tiers
    /// represent it differently (Cranelift's `icmp` yields an 8-bit value).
    type Bool: Copy;

    fn int(&mut self, value: i64) -> Self::Int;
    fn bool_const(&mut self, value: bool) -> Self::Bool;
    fn binary(&mut self, op: IntOp, a: Self::Int, b: Self::Int) -> Self::Int;
    fn compare(&mut self, op: Cmp, a: Self::Int, b: Self::Int) -> Self::Bool;
    fn and(&mut self, a: Self::Bool, b: Self::Bool) -> Self::Bool;
    fn or(&mut self, a: Self::Bool, b: Self::Bool) -> Self::Bool;
    fn not(&mut self, a: Self::Bool) -> Self::Bool;
    fn select(&mut self, cond: Self::Bool, then: Self::Int, otherwise: Self::Int) -> Self::Int;

    /// Element `index` of an index array, widened to 64 bits.
    fn load(&mut self, array: ArrayRef, index: Self::Int) -> Self::Int;
    /// Writes element `index` of an output level's array; the array has been
    /// grown to cover `index` with [`grow`](Self::grow).
    fn store(&mut self, array: ArrayRef, index: Self::Int, value: Self::Int);
    /// Makes an output level's array at least `len` long (amortised doubling).
    fn grow(&mut self, array: ArrayRef, len: Self::Int);
    /// A scalar parameter of a level.
    fn param(&mut self, level: LevelRef, param: Param) -> Self::Int;

    /// `state = init; while cond(state) { state = body(state) }; state`.
    fn while_loop(
        &mut self,
        init: &[Self::Int],
        cond: &mut LoopCond<'_, Self, Self::Int, Self::Bool>,
        body: &mut LoopBody<'_, Self, Self::Int>,
    ) -> LoopState<Self::Int>;

    fn add(&mut self, a: Self::Int, b: Self::Int) -> Self::Int {
        self.binary(IntOp::Add, a, b)
    }
    fn sub(&mut self, a: Self::Int, b: Self::Int) -> Self::Int {
        self.binary(IntOp::Sub, a, b)
    }
    fn mul(&mut self, a: Self::Int, b: Self::Int) -> Self::Int {
        self.binary(IntOp::Mul, a, b)
    }
    fn min(&mut self, a: Self::Int, b: Self::Int) -> Self::Int {
        self.binary(IntOp::Min, a, b)
    }
    fn max(&mut self, a: Self::Int, b: Self::Int) -> Self::Int {
        self.binary(IntOp::Max, a, b)
    }
    fn add_const(&mut self, a: Self::Int, c: i64) -> Self::Int {
        let c = self.int(c);
        self.add(a, c)
    }
}

/// Resolves array and parameter references to actual storage, for the
/// [`Immediate`] builder.
pub trait StorageResolver {
    fn level(&self, level: LevelRef) -> &LevelStorage;
    /// Mutable access for stores; read-only resolvers never receive stores
    /// because access level functions do not store.
    fn level_mut(&mut self, level: LevelRef) -> &mut LevelStorage;
}

/// The builder whose values are plain integers: level functions run as they
/// are called. This is the interpreter's instantiation.
pub struct Immediate<R> {
    pub storage: R,
}

impl<R: StorageResolver> Immediate<R> {
    pub fn new(storage: R) -> Self {
        Immediate { storage }
    }
}

impl<R: StorageResolver> Builder for Immediate<R> {
    type Int = i64;
    type Bool = bool;

    #[inline(always)]
    fn int(&mut self, value: i64) -> i64 {
        value
    }
    #[inline(always)]
    fn bool_const(&mut self, value: bool) -> bool {
        value
    }
    #[inline(always)]
    fn binary(&mut self, op: IntOp, a: i64, b: i64) -> i64 {
        eval_int_op(op, a, b)
    }
    #[inline(always)]
    fn compare(&mut self, op: Cmp, a: i64, b: i64) -> bool {
        eval_cmp(op, a, b)
    }
    #[inline(always)]
    fn and(&mut self, a: bool, b: bool) -> bool {
        a && b
    }
    #[inline(always)]
    fn or(&mut self, a: bool, b: bool) -> bool {
        a || b
    }
    #[inline(always)]
    fn not(&mut self, a: bool) -> bool {
        !a
    }
    #[inline(always)]
    fn select(&mut self, cond: bool, then: i64, otherwise: i64) -> i64 {
        if cond {
            then
        } else {
            otherwise
        }
    }
    #[inline(always)]
    fn load(&mut self, array: ArrayRef, index: i64) -> i64 {
        self.storage.level(array.level).arrays[array.slot as usize].get(index as usize)
    }
    fn store(&mut self, array: ArrayRef, index: i64, value: i64) {
        let storage = self.storage.level_mut(array.level);
        storage.arrays[array.slot as usize].set(index as usize, value);
    }
    fn grow(&mut self, array: ArrayRef, len: i64) {
        let storage = self.storage.level_mut(array.level);
        let arr = &mut storage.arrays[array.slot as usize];
        // Exactly to `len`: the vector's own capacity doubles, so growth
        // stays amortised without writing (and faulting in) unused slots.
        let len = len as usize;
        if arr.len() < len {
            arr.resize(len);
        }
    }
    #[inline(always)]
    fn param(&mut self, level: LevelRef, param: Param) -> i64 {
        let storage = self.storage.level(level);
        match param {
            Param::Extent => storage.extent as i64,
            Param::Extra(k) => storage.params[k as usize],
        }
    }
    fn while_loop(
        &mut self,
        init: &[i64],
        cond: &mut LoopCond<'_, Self, i64, bool>,
        body: &mut LoopBody<'_, Self, i64>,
    ) -> LoopState<i64> {
        let mut state: LoopState<i64> = init.iter().copied().collect();
        while cond(self, &state) {
            state = body(self, &state);
        }
        state
    }
}

/// Integer semantics shared by every tier (the interpreter's definition).
///
/// ```
/// use tessera_formats::staging::eval_int_op;
/// use tessera_formats::IntOp;
///
/// assert_eq!(eval_int_op(IntOp::Div, 17, 5), 3);
/// assert_eq!(eval_int_op(IntOp::Rem, 17, 5), 2);
/// // Dividing by 0 gives 0 on every tier, never a trap.
/// assert_eq!(eval_int_op(IntOp::Div, 17, 0), 0);
/// assert_eq!(eval_int_op(IntOp::Rem, 17, 0), 0);
/// ```
#[inline(always)]
pub fn eval_int_op(op: IntOp, a: i64, b: i64) -> i64 {
    match op {
        IntOp::Add => a.wrapping_add(b),
        IntOp::Sub => a.wrapping_sub(b),
        IntOp::Mul => a.wrapping_mul(b),
        IntOp::Min => a.min(b),
        IntOp::Max => a.max(b),
        IntOp::BitAnd => a & b,
        IntOp::BitOr => a | b,
        IntOp::Shl => ((a as u64) << (b as u64 & 63)) as i64,
        IntOp::Shr => ((a as u64) >> (b as u64 & 63)) as i64,
        IntOp::Div => (a as u64).checked_div(b as u64).unwrap_or(0) as i64,
        IntOp::Rem => (a as u64).checked_rem(b as u64).unwrap_or(0) as i64,
    }
}

/// Comparison semantics shared by every tier.
#[inline(always)]
pub fn eval_cmp(op: Cmp, a: i64, b: i64) -> bool {
    match op {
        Cmp::Eq => a == b,
        Cmp::Ne => a != b,
        Cmp::Lt => a < b,
        Cmp::Le => a <= b,
        Cmp::Gt => a > b,
        Cmp::Ge => a >= b,
    }
}
