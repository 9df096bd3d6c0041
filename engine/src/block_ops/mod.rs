//! Block ops written once, for every tier, and the scalar ops walked once
//! for every compiled tier ([`scalar_op`]).
//!
//! A block op (an inner product of dense runs, say) is one bytecode op
//! that does a loop's worth of work. Written against [`KernelBuilder`], it
//! runs on every tier the way level functions do: the interpreter's
//! builder computes as it is called, the Cranelift builder emits IR and
//! the OpenCL builder emits C. So the op's order of operations, which
//! decides its rounding, is stated once and every tier's bits agree.
//!
//! [`KernelBuilder`] extends the formats' integer [`Builder`] with what
//! block ops need beyond level functions: floats, the operands' values
//! read as runs, and a reduction over a range of integers.

use smallvec::SmallVec;
use tessera_formats::{ArrayRef, Builder, LevelRef, Param};

use crate::bytecode::{DotFactor, FloatOp, IReg};
use crate::notation::{Func, Reduction};

mod axpy;
mod blocks;
mod dot;
mod scalars;
mod segments;
mod strided;
mod workspace;

pub use axpy::{add_products, dense_axpy, row_axpy, values_axpy};
pub use blocks::{block_rows_dot, BlockOperands};
pub use dot::{dense_dot, dense_rows_dot, rows_of_dots, value_runs};
pub use scalars::{format_of, scalar_op, RegisterFile, ScalarOp};
pub use segments::{rows_dot, segment_dot, semiring_dot, RowsOf};
pub use strided::{strided_rows, Columns, StridedRead};
pub use workspace::{workspace_add, workspace_key, workspace_row};

/// The builder block ops are written against: the formats' staged integer
/// [`Builder`] plus floats and the operands' values.
///
/// A run is an input operand's values from a position on; reading it at an
/// index converts the stored type to `f64` (the kernels compute in `f64`).
///
/// ```
/// use tessera_engine::block_ops::{KernelBuilder, Length};
/// use tessera_engine::bytecode::FloatOp;
///
/// // `Σ_{c < n} run[c] * run[c]`, stated once for every tier.
/// fn square_sum<K: KernelBuilder>(k: &mut K, run: K::Run, n: K::Int) -> K::Float {
///     let zero = k.float(0.0);
///     let begin = k.int(0);
///     k.fold_range(begin, n, zero, |k, c, sum| {
///         let x = k.run_at(run, Length::In(c));
///         let square = k.float_op(FloatOp::Mul, x, x);
///         k.float_op(FloatOp::Add, sum, square)
///     })
/// }
/// # let _ = square_sum::<tessera_engine::interp::Eager<'_, '_>>;
/// ```
pub trait KernelBuilder: Builder {
    /// A 64-bit float.
    type Float: Copy;
    /// Two 64-bit floats, computed lane by lane (`f64x2` in compiled code).
    type Pair: Copy;
    /// A run of an input operand's values.
    type Run: Copy;
    /// Where a block op adds its results: a run of `f64` storage the
    /// kernel writes (the dense output, a vector temporary).
    type Target: Copy;
    /// A level's coordinate array, resolved once before a loop reads it
    /// at every position.
    type Coords: Copy;

    fn float(&mut self, value: f64) -> Self::Float;
    /// The coordinate array `array`, for [`KernelBuilder::coordinate`].
    fn coordinates(&mut self, array: ArrayRef) -> Self::Coords;
    /// The coordinate stored at `position`.
    fn coordinate(&mut self, coords: Self::Coords, position: Self::Int) -> Self::Int;
    fn float_op(&mut self, op: FloatOp, a: Self::Float, b: Self::Float) -> Self::Float;
    /// `-x`: the sign flipped, of zeros and NaNs too.
    fn float_neg(&mut self, x: Self::Float) -> Self::Float;
    /// `func(a, b)` ([`Func::apply`] defines it; `b` is ignored by a
    /// function of one argument). Never a user-defined operator.
    fn float_call(&mut self, func: Func, a: Self::Float, b: Self::Float) -> Self::Float;
    /// `a ⊕ b` of `reduction` ([`Reduction::combine`] defines it).
    fn combine(&mut self, reduction: Reduction, a: Self::Float, b: Self::Float) -> Self::Float;
    /// Input `operand`'s values from position `start` on.
    fn value_run(&mut self, operand: u32, start: Self::Int) -> Self::Run;
    /// The values of vector temporary `temp` (`f64` storage the kernel
    /// itself writes, so no compiled tier may read it as an input).
    fn temp_run(&mut self, temp: u32) -> Self::Run;
    /// The run's value at `index` (a constant index lets compiled tiers
    /// fold it into the address), as `f64`.
    fn run_at(&mut self, run: Self::Run, index: Length<Self::Int>) -> Self::Float;
    /// The run, of which the op reads only the first `len` values: the
    /// interpreter checks the bounds once here rather than at every read;
    /// compiled tiers read runs unchecked and return it as it is.
    fn run_within(&mut self, run: Self::Run, _len: Length<Self::Int>) -> Self::Run {
        run
    }
    /// The run `by` values further on.
    fn run_offset(&mut self, run: Self::Run, by: Self::Int) -> Self::Run;
    /// `out[position] += value` in a dense `f64` output (block ops run in
    /// float programs only).
    fn add_to_output(&mut self, position: Self::Int, value: Self::Float);
    /// Both lanes of `x`.
    fn splat(&mut self, x: Self::Float) -> Self::Pair;
    /// `op` on each lane.
    fn pair_op(&mut self, op: FloatOp, a: Self::Pair, b: Self::Pair) -> Self::Pair;
    /// The run's values at `index` and `index + 1`, as `f64`.
    fn run_pair(&mut self, run: Self::Run, index: Length<Self::Int>) -> Self::Pair;
    /// The dense output from position `start` on.
    fn output_target(&mut self, start: Self::Int) -> Self::Target;
    /// The target `by` values further on.
    fn target_offset(&mut self, target: Self::Target, by: Self::Int) -> Self::Target;
    /// `target[index] += value`.
    fn add_at(&mut self, target: Self::Target, index: Length<Self::Int>, value: Self::Float);
    /// The target's values at `index` and `index + 1`.
    fn target_pair(&mut self, target: Self::Target, index: Length<Self::Int>) -> Self::Pair;
    /// Stores `pair` at `index` and `index + 1` of the target.
    fn set_target_pair(&mut self, target: Self::Target, index: Length<Self::Int>, pair: Self::Pair);
    /// How many pairs a block op may keep in registers across a loop (a
    /// tile of an output row): compiled code leaves registers for the
    /// loop's products; the interpreter's Rust loops hold more, which
    /// halves its work per entry.
    fn tile_pairs(&self) -> usize {
        4
    }
    /// `for i in begin..end { body(i) }`.
    fn for_range<F>(&mut self, begin: Self::Int, end: Self::Int, body: F)
    where
        F: FnMut(&mut Self, Self::Int),
    {
        self.for_range_by(begin, end, 1, body)
    }
    /// `for i in (begin..end).step_by(step) { body(i) }`.
    fn for_range_by<F>(&mut self, begin: Self::Int, end: Self::Int, step: u32, body: F)
    where
        F: FnMut(&mut Self, Self::Int);
    /// [`KernelBuilder::fold_range`] carrying `N` pairs.
    fn fold_pairs<const N: usize, F>(
        &mut self,
        begin: Self::Int,
        end: Self::Int,
        init: [Self::Pair; N],
        body: F,
    ) -> [Self::Pair; N]
    where
        F: FnMut(&mut Self, Self::Int, [Self::Pair; N]) -> [Self::Pair; N];
    /// `acc = init; for i in begin..end { acc = body(i, acc) }; acc`.
    fn fold_range<F>(&mut self, begin: Self::Int, end: Self::Int, init: Self::Float, mut body: F) -> Self::Float
    where
        F: FnMut(&mut Self, Self::Int, Self::Float) -> Self::Float,
    {
        let [acc] = self.fold_floats(begin, end, Length::Fixed(1), [init], |k, i, [acc]| [body(k, i, acc)]);
        acc
    }
    /// [`KernelBuilder::fold_range`] carrying `N` floats, over `begin`,
    /// `begin + step`, … below `end`.
    fn fold_floats<const N: usize, F>(
        &mut self,
        begin: Self::Int,
        end: Self::Int,
        step: Length<Self::Int>,
        init: [Self::Float; N],
        body: F,
    ) -> [Self::Float; N]
    where
        F: FnMut(&mut Self, Self::Int, [Self::Float; N]) -> [Self::Float; N];
    /// `acc = init; for p in begin..end { acc = body(p, coords[p],
    /// values[p], acc) }; acc`: a walk over stored entries, each with its
    /// position, coordinate and value.
    fn fold_entries<const N: usize, F>(
        &mut self,
        (coords, values): (Self::Coords, Self::Run),
        (begin, end): (Self::Int, Self::Int),
        init: [Self::Float; N],
        mut body: F,
    ) -> [Self::Float; N]
    where
        F: FnMut(&mut Self, Self::Int, Self::Int, Self::Float, [Self::Float; N]) -> [Self::Float; N],
    {
        self.fold_floats(begin, end, Length::Fixed(1), init, |k, p, acc| {
            let c = k.coordinate(coords, p);
            let v = k.run_at(values, Length::In(p));
            body(k, p, c, v, acc)
        })
    }
    /// `if cond { body() }`.
    fn when<F>(&mut self, cond: Self::Bool, body: F)
    where
        F: FnOnce(&mut Self);
    /// Word `index` of the bitmap of keys of the output's dense workspace
    /// ([`workspace_add`]).
    fn workspace_word(&mut self, index: Self::Int) -> Self::Int;
    /// Stores `word` at `index` of the workspace's bitmap of keys.
    fn set_workspace_word(&mut self, index: Self::Int, word: Self::Int);
    /// Appends `key` to the workspace's list of the keys set.
    fn push_touched_key(&mut self, key: Self::Int);
    /// `values[key] += x` in the workspace, adding as the output adds.
    fn add_to_workspace(&mut self, key: Self::Int, x: Self::Float);
    /// The workspace's stride of its coordinate `d`.
    fn workspace_stride(&mut self, d: usize) -> Self::Int;
}

/// A length or an index known when the kernel is built (`Fixed`) or only
/// when it runs (`In`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Length<I> {
    Fixed(u32),
    In(I),
}

impl<I: Copy> Length<I> {
    /// The length as a builder integer.
    pub fn value<B: Builder<Int = I>>(self, b: &mut B) -> I {
        match self {
            Length::Fixed(n) => b.int(n.into()),
            Length::In(n) => n,
        }
    }
}

/// The dense row of each factor (its level's row below its `parent`
/// register), read through `reg`, and the fewest components any of them
/// and `len` have.
///
/// ```
/// use tessera_engine::block_ops::{factor_rows, KernelBuilder, Length};
/// use tessera_engine::bytecode::DotFactor;
/// use tessera_engine::interp::{Eager, Operands};
/// use tessera_formats::{Builder, LevelRef, LevelStorage};
///
/// // The second row of a dense 2 x 3 matrix.
/// let mut row = LevelStorage::new(3);
/// row.extent = 3;
/// let levels = [&[LevelStorage::new(2), row][..]];
/// let dense = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
/// let values = [&dense[..]];
/// let mut k = Eager::new(Operands { levels: &levels, ..Operands::values(&values) });
/// let factor = DotFactor { operand: 0, level: LevelRef { operand: 0, level: 1 }, parent: 0 };
/// let len = k.int(10);
/// // r0 = 1.
/// let (rows, n) = factor_rows(&mut k, &[factor], len, &mut |_, _| 1);
/// assert_eq!((k.run_at(rows[0], Length::Fixed(2)), n), (6.0, 3));
/// ```
pub fn factor_rows<K: KernelBuilder>(
    k: &mut K,
    factors: &[DotFactor],
    mut len: K::Int,
    reg: &mut dyn FnMut(&mut K, IReg) -> K::Int,
) -> (SmallVec<[K::Run; 3]>, K::Int) {
    let mut rows = SmallVec::new();
    for f in factors {
        let extent = k.param(f.level, Param::Extent);
        let parent = reg(k, f.parent);
        let first = k.mul(parent, extent);
        rows.push(k.value_run(f.operand, first));
        len = k.min(len, extent);
    }
    (rows, len)
}

/// Row `parent` of the dense output's level `out`, as a target, and its
/// length: where a dense update adds a row.
///
/// ```
/// use tessera_engine::block_ops::{output_row, KernelBuilder, Length};
/// use tessera_engine::interp::{DenseCells, Eager, Operands};
/// use tessera_formats::{Builder, LevelRef, LevelStorage};
///
/// // A dense 2 x 3 output; its second row.
/// let mut row = LevelStorage::new(3);
/// row.extent = 3;
/// let levels = [&[LevelStorage::new(2), row][..]];
/// let mut y = [0.0; 6];
/// let output = DenseCells::new(&mut y, 0);
/// let mut k = Eager::new(Operands { levels: &levels, output, ..Operands::values(&[]) });
/// let parent = k.int(1);
/// let (target, n) = output_row(&mut k, LevelRef { operand: 0, level: 1 }, parent);
/// let one = k.float(1.0);
/// k.add_at(target, Length::Fixed(2), one);
/// assert_eq!((n, y), (3, [0.0, 0.0, 0.0, 0.0, 0.0, 1.0]));
/// ```
pub fn output_row<K: KernelBuilder>(k: &mut K, out: LevelRef, parent: K::Int) -> (K::Target, K::Int) {
    let n = k.param(out, Param::Extent);
    let start = k.mul(parent, n);
    (k.output_target(start), n)
}
