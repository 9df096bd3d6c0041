//! The scalar ops, walked once for every compiled tier.
//!
//! A compiled tier turns each scalar op (constants, moves, integer and
//! float arithmetic, comparisons, the level functions, value loads) into
//! its own code the same way: read the op's registers, build the result,
//! write the destination. [`scalar_op`] states that once over the tier's
//! [`KernelBuilder`]; the tier gives only its registers and the few
//! primitives only it knows ([`RegisterFile`]). Control flow and block ops
//! stay with each tier, which lays out blocks (Cranelift) or labels
//! (OpenCL C) its own way. The interpreter, which runs ops rather than
//! translating them, executes the same ops on plain registers.

use smallvec::SmallVec;
use tessera_formats::{Level, LevelFormat, LevelRef};

use super::KernelBuilder;
use crate::bytecode::{BReg, FReg, IReg, Op};
use crate::notation::Func;

/// A compiled tier's registers, and what only the tier knows how to
/// build, for [`scalar_op`].
///
/// ```
/// use tessera_engine::block_ops::{scalar_op, RegisterFile, ScalarOp};
/// use tessera_engine::bytecode::Op;
/// use tessera_engine::interp::{Eager, Operands};
/// use tessera_engine::notation::Func;
/// use tessera_formats::{IntOp, LevelFormat, LevelRef};
///
/// // Registers held as plain numbers: the walk then computes as it goes.
/// #[derive(Default)]
/// struct Plain { ints: [i64; 4], floats: [f64; 2], bools: [bool; 2] }
/// impl<'b, 'a> RegisterFile<Eager<'b, 'a>> for Plain {
///     fn int(&mut self, _: &mut Eager<'b, 'a>, r: u32) -> i64 { self.ints[r as usize] }
///     fn set_int(&mut self, _: &mut Eager<'b, 'a>, r: u32, v: i64) { self.ints[r as usize] = v }
///     fn float(&mut self, _: &mut Eager<'b, 'a>, r: u32) -> f64 { self.floats[r as usize] }
///     fn set_float(&mut self, _: &mut Eager<'b, 'a>, r: u32, v: f64) { self.floats[r as usize] = v }
///     fn bool(&mut self, _: &mut Eager<'b, 'a>, r: u32) -> bool { self.bools[r as usize] }
///     fn set_bool(&mut self, _: &mut Eager<'b, 'a>, r: u32, v: bool) { self.bools[r as usize] = v }
///     fn dim(&mut self, _: &mut Eager<'b, 'a>, _: u32) -> i64 { 10 }
///     fn chunk(&mut self, _: &mut Eager<'b, 'a>) -> (i64, i64) { (0, 10) }
///     fn level_format(&mut self, _: &mut Eager<'b, 'a>, _: LevelRef) -> Option<LevelFormat> { None }
///     fn call(&mut self, _: &mut Eager<'b, 'a>, func: Func, a: f64, b: f64) -> f64 { func.apply(&[a, b]) }
///     fn load_value(&mut self, _: &mut Eager<'b, 'a>, _: u32, _: i64) -> Option<f64> { None }
/// }
///
/// let mut k = Eager::new(Operands::values(&[]));
/// let mut regs = Plain::default();
/// let program = [
///     Op::IConst { dst: 0, value: 6 },
///     Op::Dim { dst: 1, var: 0 },
///     Op::IBin { op: IntOp::Mul, dst: 2, a: 0, b: 1 },
/// ];
/// for op in &program {
///     assert_eq!(scalar_op(&mut k, &mut regs, op), ScalarOp::Built);
/// }
/// assert_eq!(regs.ints[2], 60);
/// // Control flow is the tier's own.
/// assert_eq!(scalar_op(&mut k, &mut regs, &Op::Jump { to: 0 }), ScalarOp::NotScalar);
/// ```
pub trait RegisterFile<K: KernelBuilder> {
    fn int(&mut self, k: &mut K, r: IReg) -> K::Int;
    fn set_int(&mut self, k: &mut K, r: IReg, value: K::Int);
    fn float(&mut self, k: &mut K, r: FReg) -> K::Float;
    fn set_float(&mut self, k: &mut K, r: FReg, value: K::Float);
    fn bool(&mut self, k: &mut K, r: BReg) -> K::Bool;
    fn set_bool(&mut self, k: &mut K, r: BReg, value: K::Bool);
    /// The values of integer registers `rs` (a level function's ancestors,
    /// an entry's coordinates).
    fn ints(&mut self, k: &mut K, rs: &[IReg]) -> SmallVec<[K::Int; 4]> {
        rs.iter().map(|&r| self.int(k, r)).collect()
    }
    /// The size of loop variable `var` in this run ([`Op::Dim`]).
    fn dim(&mut self, k: &mut K, var: u32) -> K::Int;
    /// The first and the end coordinate of the outer loop this run covers
    /// ([`Op::Chunk`]).
    fn chunk(&mut self, k: &mut K) -> (K::Int, K::Int);
    /// The format of `level`, or `None` having recorded why the program
    /// cannot be compiled.
    fn level_format(&mut self, k: &mut K, level: LevelRef) -> Option<LevelFormat>;
    /// `func(a, b)`, or `func(a)` for a function of one argument
    /// ([`Func::apply`] defines every value).
    fn call(&mut self, k: &mut K, func: Func, a: K::Float, b: K::Float) -> K::Float;
    /// Input `operand`'s stored value at `pos` as a float register holds
    /// it, or `None` having recorded why the program cannot be compiled.
    fn load_value(&mut self, k: &mut K, operand: u32, pos: K::Int) -> Option<K::Float>;
    /// Opens the scope a level function's code goes in (a C block), so
    /// its locals end with it; nothing by default.
    fn open_scope(&mut self, _k: &mut K) {}
    /// Closes the scope [`open_scope`](Self::open_scope) opened.
    fn close_scope(&mut self, _k: &mut K) {}
}

/// What [`scalar_op`] made of an op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarOp {
    /// Its code is built.
    Built,
    /// The tier cannot build it; the register file recorded why.
    Refused,
    /// Not a scalar op: control flow or a block op, the tier's own.
    NotScalar,
}

/// Builds `op` when it is a scalar op, reading and writing its registers
/// through `regs`: the one place a compiled tier's scalar ops are spelled
/// out. See [`RegisterFile`] for an example.
pub fn scalar_op<K: KernelBuilder, R: RegisterFile<K>>(k: &mut K, regs: &mut R, op: &Op) -> ScalarOp {
    match *op {
        Op::IConst { dst, value } => {
            let v = k.int(value);
            regs.set_int(k, dst, v);
        }
        Op::IMove { dst, src } => {
            let v = regs.int(k, src);
            regs.set_int(k, dst, v);
        }
        Op::IBin { op, dst, a, b } => {
            let (x, y) = (regs.int(k, a), regs.int(k, b));
            let v = k.binary(op, x, y);
            regs.set_int(k, dst, v);
        }
        Op::ICmp { op, dst, a, b } => {
            let (x, y) = (regs.int(k, a), regs.int(k, b));
            let v = k.compare(op, x, y);
            regs.set_bool(k, dst, v);
        }
        Op::ISelect { dst, cond, a, b } => {
            let c = regs.bool(k, cond);
            let (x, y) = (regs.int(k, a), regs.int(k, b));
            let v = k.select(c, x, y);
            regs.set_int(k, dst, v);
        }
        Op::BConst { dst, value } => {
            let v = k.bool_const(value);
            regs.set_bool(k, dst, v);
        }
        Op::BAnd { dst, a, b } | Op::BOr { dst, a, b } => {
            let (x, y) = (regs.bool(k, a), regs.bool(k, b));
            let v = match op {
                Op::BAnd { .. } => k.and(x, y),
                _ => k.or(x, y),
            };
            regs.set_bool(k, dst, v);
        }
        Op::BNot { dst, a } => {
            let x = regs.bool(k, a);
            let v = k.not(x);
            regs.set_bool(k, dst, v);
        }
        Op::Dim { dst, var } => {
            let v = regs.dim(k, var);
            regs.set_int(k, dst, v);
        }
        Op::Chunk { begin, end } => {
            let (b, e) = regs.chunk(k);
            regs.set_int(k, begin, b);
            regs.set_int(k, end, e);
        }
        Op::CoordIter {
            level,
            ref ancestors,
            begin,
            end,
        } => {
            return level_function(k, regs, level, |k, regs, f| {
                let ancestors = regs.ints(k, ancestors);
                let (b, e) = f.coord_iter(k, level, &ancestors);
                regs.set_int(k, begin, b);
                regs.set_int(k, end, e);
            })
        }
        Op::CoordAccess {
            level,
            parent,
            ref ancestors,
            coord,
            pos,
            found,
        }
        | Op::Locate {
            level,
            parent,
            ref ancestors,
            coord,
            pos,
            found,
        } => {
            // The same registers either way: `coord_access` on a level
            // iterated by coordinate, or `locate` (random access).
            let locates = matches!(op, Op::Locate { .. });
            return level_function(k, regs, level, |k, regs, f| {
                let ancestors = regs.ints(k, ancestors);
                let (p, c) = (regs.int(k, parent), regs.int(k, coord));
                let (at, stored) = if locates {
                    f.locate(k, level, p, &ancestors, c)
                } else {
                    f.coord_access(k, level, p, &ancestors, c)
                };
                regs.set_int(k, pos, at);
                regs.set_bool(k, found, stored);
            });
        }
        Op::PosIter {
            level,
            parent,
            begin,
            end,
        } => {
            return level_function(k, regs, level, |k, regs, f| {
                let p = regs.int(k, parent);
                let (b, e) = f.pos_iter(k, level, p);
                regs.set_int(k, begin, b);
                regs.set_int(k, end, e);
            })
        }
        Op::PosAccess {
            level,
            pos,
            ref ancestors,
            coord,
            found,
        } => {
            return level_function(k, regs, level, |k, regs, f| {
                let ancestors = regs.ints(k, ancestors);
                let p = regs.int(k, pos);
                let (c, stored) = f.pos_access(k, level, p, &ancestors);
                regs.set_int(k, coord, c);
                regs.set_bool(k, found, stored);
            })
        }
        Op::FConst { dst, value } => {
            let v = k.float(value);
            regs.set_float(k, dst, v);
        }
        Op::FMove { dst, src } => {
            let v = regs.float(k, src);
            regs.set_float(k, dst, v);
        }
        Op::FBin { op, dst, a, b } => {
            let (x, y) = (regs.float(k, a), regs.float(k, b));
            let v = k.float_op(op, x, y);
            regs.set_float(k, dst, v);
        }
        Op::FNeg { dst, a } => {
            let x = regs.float(k, a);
            let v = k.float_neg(x);
            regs.set_float(k, dst, v);
        }
        Op::FCall { func, dst, a, b } => {
            let (x, y) = (regs.float(k, a), regs.float(k, b));
            let v = regs.call(k, func, x, y);
            regs.set_float(k, dst, v);
        }
        Op::LoadValue { operand, pos, dst } => {
            let p = regs.int(k, pos);
            let Some(v) = regs.load_value(k, operand, p) else {
                return ScalarOp::Refused;
            };
            regs.set_float(k, dst, v);
        }
        _ => return ScalarOp::NotScalar,
    }
    ScalarOp::Built
}

/// A level function of `level`'s format, built by `body` in a scope of its
/// own.
fn level_function<K: KernelBuilder, R: RegisterFile<K>>(
    k: &mut K,
    regs: &mut R,
    level: LevelRef,
    body: impl FnOnce(&mut K, &mut R, LevelFormat),
) -> ScalarOp {
    let Some(format) = regs.level_format(k, level) else {
        return ScalarOp::Refused;
    };
    regs.open_scope(k);
    body(k, regs, format);
    regs.close_scope(k);
    ScalarOp::Built
}

/// The format of `level` among `formats` (each operand's level formats),
/// or why a program naming it cannot be compiled.
///
/// ```
/// use tessera_engine::block_ops::format_of;
/// use tessera_formats::{Format, LevelRef};
///
/// let formats = vec![Format::csr().levels().iter().map(|l| l.level).collect::<Vec<_>>()];
/// assert_eq!(format_of(&formats, LevelRef { operand: 0, level: 1 }), Ok(formats[0][1]));
/// assert!(format_of(&formats, LevelRef { operand: 1, level: 0 }).is_err());
/// ```
pub fn format_of(formats: &[Vec<LevelFormat>], level: LevelRef) -> Result<LevelFormat, String> {
    formats
        .get(level.operand as usize)
        .and_then(|levels| levels.get(level.level as usize))
        .copied()
        .ok_or_else(|| {
            format!(
                "the program names level {} of operand {}, which the formats do not have",
                level.level, level.operand
            )
        })
}
