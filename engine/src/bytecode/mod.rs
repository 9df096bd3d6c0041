//! The register bytecode: the one input of every tier.
//!
//! The planner emits a [`Program`]; the interpreter runs it, and compiled
//! tiers translate it. Registers are typed (integer, float, boolean) and
//! unbounded in number; control flow is jumps to op indices. Ops that touch
//! storage name a level function of one level of one operand, which each
//! tier runs by instantiating that level's one implementation. `Display`
//! prints one op per line.

use std::fmt;

use smallvec::SmallVec;
use tessera_formats::{Cmp, IntOp, LevelRef, ValueType};

use crate::notation::{Func, Semiring};

pub use crate::runtime::rows::RowOp;
pub use position_loop::{Affine, PositionBody, RowFactor, ScaleFactor};

mod position_loop;

/// An integer register (positions, coordinates, sizes).
pub type IReg = u32;
/// A float register (values).
pub type FReg = u32;
/// A boolean register.
pub type BReg = u32;

/// Registers passed as ancestor coordinates to a level function.
pub type Regs = SmallVec<[IReg; 4]>;

/// Float arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FloatOp {
    Add,
    Sub,
    Mul,
    Div,
}

impl FloatOp {
    /// The op on two floats: IEEE arithmetic, as every tier computes it.
    #[inline(always)]
    pub fn apply(self, x: f64, y: f64) -> f64 {
        match self {
            FloatOp::Add => x + y,
            FloatOp::Sub => x - y,
            FloatOp::Mul => x * y,
            FloatOp::Div => x / y,
        }
    }
}

/// A dense factor of a [`Op::DotBlock`]: operand `operand`'s value at
/// `parent * extent(level) + coord` for each coordinate of the driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DotFactor {
    pub operand: u32,
    pub level: LevelRef,
    pub parent: IReg,
}

/// Consecutive values of operand `operand` from the position in `start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValueRun {
    pub operand: u32,
    pub start: IReg,
}

/// Runs of values of operand `operand`, one per row: row `r` starts at
/// `start + r * step`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StridedRun {
    pub operand: u32,
    pub start: IReg,
    pub step: IReg,
}

impl fmt::Display for StridedRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t{}[r{} + r * r{}]", self.operand, self.start, self.step)
    }
}

/// A run of [`Op::MergeRuns`]: the values at coordinates `begin..end` of
/// a level whose consecutive coordinates sit at consecutive positions, the
/// first at `values.start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoordinateRun {
    pub values: ValueRun,
    pub begin: IReg,
    pub end: IReg,
}

impl fmt::Display for CoordinateRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "t{} r{}..r{} from position r{}",
            self.values.operand, self.begin, self.end, self.values.start
        )
    }
}

/// A run of [`Op::BlockRowsDot`]: in block row `b`, for the driver's
/// position `p` and coordinate `c`, row `r` starts at `start + b *
/// block_step + p * pos_step + c * coord_step + r * row_step`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockRun {
    pub operand: u32,
    pub start: IReg,
    pub block_step: IReg,
    pub row_step: IReg,
    pub pos_step: IReg,
    pub coord_step: IReg,
}

impl fmt::Display for BlockRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "t{}[r{} + b * r{} + p * r{} + c * r{} + r * r{} + k]",
            self.operand, self.start, self.block_step, self.pos_step, self.coord_step, self.row_step
        )
    }
}

/// The block rows an [`Op::BlockRowsDot`] runs, each the driver's
/// positions below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockRows {
    /// One block row, `b = 0`: the driver's positions `begin..end`.
    One { begin: IReg, end: IReg },
    /// Every block row `b` in `first..last` of the dense level `rows`
    /// (positions `parent * extent(rows) + b`), the driver's segment below
    /// each: the loop over block rows in the op, not in the bytecode.
    Every {
        rows: LevelRef,
        parent: IReg,
        first: IReg,
        last: IReg,
    },
}

impl fmt::Display for BlockRows {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlockRows::One { begin, end } => write!(f, "r{begin}..r{end}"),
            BlockRows::Every {
                rows,
                parent,
                first,
                last,
            } => write!(
                f,
                "the segments of block rows b in r{first}..r{last} of t{}.l{} below r{parent}",
                rows.operand, rows.level
            ),
        }
    }
}

/// The columns of an [`Op::StridedAxpy`] whose rows hold several products:
/// `count` of them, and how far the output's and each factor's positions
/// move from one column to the next (`None`: the factor is one value per
/// row, the same for every column). Factors that move come after those
/// that do not, so that a row's product of the others is taken once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StridedColumns {
    pub count: IReg,
    pub out_step: IReg,
    pub steps: SmallVec<[Option<IReg>; 3]>,
}

/// A factor of [`Op::StridedAxpy`] at row `r`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strided {
    /// `values[start + r * step]`.
    Run(StridedRun),
    /// `values[base + coords[start + r * step] * coord_step]`, `coords`
    /// the coordinate array of level `level` (a stored column below each
    /// row); `coord_step` 1 when `None` (the coordinate is the operand's
    /// last, a vector's), else the positions from one coordinate to the
    /// next (a dense matrix's row length).
    Gather {
        operand: u32,
        base: IReg,
        level: LevelRef,
        start: IReg,
        step: IReg,
        coord_step: Option<IReg>,
    },
}

impl fmt::Display for Strided {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Strided::Run(run) => write!(f, "{run}"),
            Strided::Gather {
                operand,
                base,
                level,
                start,
                step,
                coord_step,
            } => write!(
                f,
                "t{operand}[r{base} + coords t{}.l{}[r{start} + r * r{step}]{}]",
                level.operand,
                level.level,
                coord_step.map(|s| format!(" * r{s}")).unwrap_or_default()
            ),
        }
    }
}

/// The length of a run of values: known when the program is planned (a
/// block's size, which compiled tiers unroll) or read from a register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunLength {
    Fixed(u32),
    In(IReg),
}

impl RunLength {
    /// The length with its register read by `reg`.
    pub fn resolve<I>(self, reg: impl FnOnce(IReg) -> I) -> crate::block_ops::Length<I> {
        match self {
            RunLength::Fixed(n) => crate::block_ops::Length::Fixed(n),
            RunLength::In(r) => crate::block_ops::Length::In(reg(r)),
        }
    }
}

impl fmt::Display for RunLength {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunLength::Fixed(n) => write!(f, "{n}"),
            RunLength::In(r) => write!(f, "r{r}"),
        }
    }
}

/// One bytecode instruction.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    IConst {
        dst: IReg,
        value: i64,
    },
    IMove {
        dst: IReg,
        src: IReg,
    },
    IBin {
        op: IntOp,
        dst: IReg,
        a: IReg,
        b: IReg,
    },
    ICmp {
        op: Cmp,
        dst: BReg,
        a: IReg,
        b: IReg,
    },
    ISelect {
        dst: IReg,
        cond: BReg,
        a: IReg,
        b: IReg,
    },
    BConst {
        dst: BReg,
        value: bool,
    },
    BAnd {
        dst: BReg,
        a: BReg,
        b: BReg,
    },
    BOr {
        dst: BReg,
        a: BReg,
        b: BReg,
    },
    BNot {
        dst: BReg,
        a: BReg,
    },
    Jump {
        to: usize,
    },
    JumpIf {
        cond: BReg,
        to: usize,
    },
    JumpIfNot {
        cond: BReg,
        to: usize,
    },
    /// The size of loop variable `var` in this run.
    Dim {
        dst: IReg,
        var: u32,
    },
    /// The coordinates of the outermost loop this run covers: `begin..end`,
    /// the whole dimension unless the run is one chunk of a parallel run
    /// ([`Program::chunking`]).
    Chunk {
        begin: IReg,
        end: IReg,
    },

    /// `coord_iter`: bounds of the coordinates below the ancestors.
    CoordIter {
        level: LevelRef,
        ancestors: Regs,
        begin: IReg,
        end: IReg,
    },
    /// `coord_access`: position of `coord` below `parent`.
    CoordAccess {
        level: LevelRef,
        parent: IReg,
        ancestors: Regs,
        coord: IReg,
        pos: IReg,
        found: BReg,
    },
    /// `pos_iter`: bounds of the positions below `parent`.
    PosIter {
        level: LevelRef,
        parent: IReg,
        begin: IReg,
        end: IReg,
    },
    /// `pos_access`: coordinate stored at `pos`.
    PosAccess {
        level: LevelRef,
        pos: IReg,
        ancestors: Regs,
        coord: IReg,
        found: BReg,
    },
    /// `locate`: position of `coord` below `parent`, if stored.
    Locate {
        level: LevelRef,
        parent: IReg,
        ancestors: Regs,
        coord: IReg,
        pos: IReg,
        found: BReg,
    },

    FConst {
        dst: FReg,
        value: f64,
    },
    FMove {
        dst: FReg,
        src: FReg,
    },
    FBin {
        op: FloatOp,
        dst: FReg,
        a: FReg,
        b: FReg,
    },
    FNeg {
        dst: FReg,
        a: FReg,
    },
    /// `dst = func(a, b)`, or `func(a)` for a function of one argument
    /// ([`Func::apply`] defines every value).
    FCall {
        func: Func,
        dst: FReg,
        a: FReg,
        b: FReg,
    },
    /// `dst = values[pos]` of an input operand.
    LoadValue {
        operand: u32,
        pos: IReg,
        dst: FReg,
    },

    /// `dst = temps[temp][index]`: a component of a vector temporary (a
    /// `precompute`'s workspace, [`Program::temps`]).
    TempLoad {
        temp: u32,
        index: IReg,
        dst: FReg,
    },
    /// `temps[temp][index] = value`.
    TempStore {
        temp: u32,
        index: IReg,
        value: FReg,
    },
    /// Every component of `temps[temp]` set to `value` (its reduction's
    /// identity, before its producer runs).
    TempFill {
        temp: u32,
        value: FReg,
    },

    /// Dense output: `values[pos] += value`.
    AccumOutput {
        pos: IReg,
        value: FReg,
    },
    /// Appends (or, for the same coordinates as the last, adds) an output
    /// entry; coordinates are in the output's level order.
    Append {
        coords: Regs,
        value: FReg,
    },
    /// Adds `value` at `coords` (the workspace's variables) of the workspace.
    WorkspaceAccum {
        coords: Regs,
        value: FReg,
    },
    /// Assembles the workspace's entries, sorted, below the output
    /// coordinates `prefix`, and clears it.
    WorkspaceFlush {
        prefix: Regs,
    },

    /// `acc += Σ_{p in begin..end} values_driver[p] * Π factors`, reading
    /// coordinates of the driver level as a block: the inner loop of SpMV.
    DotBlock {
        driver: LevelRef,
        begin: IReg,
        end: IReg,
        factors: SmallVec<[DotFactor; 2]>,
        /// A vector temporary over the driver's coordinates: one more factor.
        temp: Option<u32>,
        acc: FReg,
    },
    /// `acc += scale * Σ_{c < len} Π factors[c]`, each factor the values of
    /// an operand from position `start` on: an inner product of dense rows
    /// (SDDMM's rank loop, a row of a BCSR block times a piece of x). The
    /// sum runs from 0.0 in order and is then added to `acc`.
    DenseDot {
        scale: FReg,
        factors: SmallVec<[ValueRun; 2]>,
        len: RunLength,
        acc: FReg,
    },
    /// Dense rows times dense runs: for each `r < rows`, `out[out.start +
    /// r * out.step] += scale * Σ_{c < len} Π factors · Π shared` with
    /// factor `f` read at `f.start + r * f.step + c` and a shared run `s`
    /// at `s.start + c` for every row. A BCSR block times its piece of x
    /// (shared), or a dense matrix times a vector, in one op.
    DenseRowsDot {
        rows: RunLength,
        len: RunLength,
        scale: FReg,
        factors: SmallVec<[StridedRun; 2]>,
        shared: SmallVec<[ValueRun; 1]>,
        out: StridedRun,
    },
    /// [`Op::DenseRowsDot`] for each stored position `p` of the `driver`
    /// level in `blocks` (its coordinate `c`, its block row `b`): a run
    /// starts at `start + b * block_step + p * pos_step + c * coord_step`,
    /// the output at `out.start + b * out_block_step`. The stored blocks
    /// of a BCSR block row times x in one op, or of every block row.
    BlockRowsDot {
        driver: LevelRef,
        blocks: BlockRows,
        rows: RunLength,
        len: RunLength,
        scale: FReg,
        factors: SmallVec<[BlockRun; 2]>,
        shared: SmallVec<[BlockRun; 1]>,
        out: StridedRun,
        out_block_step: IReg,
    },
    /// One product per row: for each `r < rows`, `out[out.start + r *
    /// out.step] += scale * Π factors(r)`. The rows of a DIA diagonal, of an
    /// ELL slot, in one op. With `columns`, a row of products per row: for
    /// each column `c` too, every position further on by `c` times its
    /// column step (a DIA matrix times a dense matrix's rows).
    ///
    /// A `deferred` update may run as late as the next
    /// [`Op::StridedFlush`], together with the others deferred (see
    /// [`crate::runtime::strided`]): nothing between reads the output.
    StridedAxpy {
        rows: IReg,
        scale: FReg,
        factors: SmallVec<[Strided; 3]>,
        out: StridedRun,
        columns: Option<StridedColumns>,
        deferred: bool,
    },
    /// Runs the deferred [`Op::StridedAxpy`] updates.
    StridedFlush,
    /// For each position `p` in `begin..end` of the `driver` level (its
    /// coordinate `c`): `out[p] += scale * value[p] * Π factors[parent *
    /// extent + c]`. An output on the driver's pattern (its values line up
    /// with the driver's positions): a scaled copy of a row of stored
    /// values, each times dense factors gathered at its coordinate. With a
    /// function `map` (of one argument), `out[p] += map(that product)`:
    /// `abs(A(i,j))` on A's pattern.
    ValuesAxpy {
        driver: LevelRef,
        begin: IReg,
        end: IReg,
        scale: FReg,
        factors: SmallVec<[DotFactor; 2]>,
        map: Option<Func>,
    },
    /// Every row of a dense level at once: for each coordinate `c` in
    /// `first..last` of `rows` (below `parent`), the dot block of the
    /// `driver` level's segment below it in `semiring` (`⊕` over the
    /// segment of `⊗` of the values, from `⊕`'s identity), added to the
    /// dense output at `out_parent * extent(out) + c` when the segment is
    /// not empty, or on every row when `every_row`. SpMV in one op, in any
    /// semiring.
    RowsDot {
        semiring: Semiring,
        every_row: bool,
        rows: LevelRef,
        parent: IReg,
        first: IReg,
        last: IReg,
        driver: LevelRef,
        factors: SmallVec<[DotFactor; 2]>,
        out: LevelRef,
        out_parent: IReg,
    },
    /// A dense loop over every coordinate `c` of the loop: `out[out_parent *
    /// extent(out) + c] += scale * Π factors[c] (* temp[c])`, each factor a
    /// dense last level, `temp` a vector temporary over the loop's
    /// variable. The inner loop of SpMM and MTTKRP.
    DenseAxpy {
        scale: FReg,
        factors: SmallVec<[DotFactor; 2]>,
        temp: Option<u32>,
        out: LevelRef,
        out_parent: IReg,
    },
    /// [`Op::DenseAxpy`] into a vector temporary: `temp[c] += scale * Π
    /// factors[c]` for every component `c`. The inner loop of a
    /// `precompute`'s producer (MTTKRP's `w(j) += B(i,k,l) * D(l,j)`).
    TempAxpy {
        temp: u32,
        scale: FReg,
        factors: SmallVec<[DotFactor; 2]>,
    },
    /// For each position `p` of the `driver` level in `begin..end` (its
    /// coordinate `c`), a [`Op::DenseAxpy`] scaled by `scale * value[p]`;
    /// a factor with `via` reads the row at `parent * extent(via) + c`,
    /// one without reads the row at `parent`. The middle loop of SpMM.
    RowAxpy {
        driver: LevelRef,
        begin: IReg,
        end: IReg,
        scale: FReg,
        factors: SmallVec<[AxpyFactor; 2]>,
        out: LevelRef,
        out_parent: IReg,
    },
    /// For each position `p` of the `driver` level in `begin..end` (its
    /// coordinate `c`): the workspace at `prefix ++ [c]` gets `scale *
    /// value[p]`. The inner loop of SpGEMM (a Gustavson row).
    WorkspaceAxpy {
        driver: LevelRef,
        begin: IReg,
        end: IReg,
        scale: FReg,
        prefix: Regs,
    },
    /// Merges the rows `a_begin..a_end` of level `a` and `b_begin..b_end`
    /// of level `b` (compact, ordered, unique last levels) with `op`, and
    /// appends the merged row below the output coordinates `prefix`: the
    /// inner loop of a sparse sum, difference or product of two matrices
    /// (see [`crate::runtime::rows`]). With a `block` (the sizes of dense
    /// levels below both rows and the output's, BCSR's blocks), each
    /// coordinate holds a block of values, combined value by value and
    /// appended below the coordinate in the block's order.
    MergeRows {
        a: LevelRef,
        a_begin: IReg,
        a_end: IReg,
        b: LevelRef,
        b_begin: IReg,
        b_end: IReg,
        op: RowOp,
        /// `op(sa * a, sb * b)` with the registers' scales
        /// ([`crate::runtime::rows::Combine`]).
        scales: Option<[FReg; 2]>,
        prefix: Regs,
        block: Vec<u32>,
    },
    /// Merges two runs of consecutive coordinates with `op` (the union for
    /// a sum or difference, the intersection for a product) and appends
    /// the result below the output coordinates `prefix`, at a level whose
    /// consecutive coordinates sit at consecutive positions; each output
    /// level below it holds one child whose coordinate is the run's plus
    /// its register of `shifts` (see [`crate::runtime::rows::merge_runs`]):
    /// the rows of two DIA tensors' diagonal added into a DIA output.
    MergeRuns {
        runs: [CoordinateRun; 2],
        op: RowOp,
        /// As [`Op::MergeRows`]'s.
        scales: Option<[FReg; 2]>,
        prefix: Regs,
        shifts: Regs,
    },
    /// Every row of a dense level at once: for each coordinate `row` in
    /// `first..last`, the [`Op::MergeRows`] of the compact, ordered,
    /// unique levels below `a_rows` and `b_rows` (dense levels, at
    /// positions `parent * extent + row` below their parents), appended
    /// below the output coordinates `prefix ++ [row]`. A sum of two
    /// matrices in one op.
    RowsMerge {
        a_rows: LevelRef,
        a_parent: IReg,
        b_rows: LevelRef,
        b_parent: IReg,
        first: IReg,
        last: IReg,
        op: RowOp,
        /// As [`Op::MergeRows`]'s.
        scales: Option<[FReg; 2]>,
        prefix: Regs,
    },
    /// An interpreter shortcut for the loop that follows it, which ends
    /// just before `resume`: that loop over the positions `cursor..end` of
    /// the `driver` level (a compact level with a coordinate array), its
    /// `body` run per position in one op instead of a dozen. The
    /// interpreter runs it, leaves `cursor` at `end` as the loop does, and
    /// continues at `resume`; compiled tiers skip it and compile the loop.
    ///
    /// With `coordinates`, the loop runs over the coordinates
    /// `cursor..end` of another level, one that places coordinate `c`
    /// below `parent` at `parent · extent + c` (dense, range), whose child,
    /// the driver, has one position per parent position: the driver's
    /// positions are then those coordinates' positions (ELL's rows of a
    /// slot, DIA's rows of a diagonal).
    PositionLoop {
        driver: LevelRef,
        cursor: IReg,
        end: IReg,
        coordinates: Option<CoordinateWalk>,
        body: PositionBody,
        resume: usize,
    },
    /// An interpreter shortcut for the scan that follows it, which ends
    /// just before `resume`: `while pos < end && coordinate(level, pos) ==
    /// coord { pos += 1 }`, the end of a run of equal coordinates of a
    /// non-unique level (COO's rows), on the level's coordinate array in
    /// one op instead of five per position. Compiled tiers skip it and
    /// compile the scan.
    RunEnd {
        level: LevelRef,
        pos: IReg,
        end: IReg,
        coord: IReg,
        resume: usize,
    },
    Halt,
}

/// The level and parent register whose coordinates a
/// [`Op::PositionLoop`] walks, when it walks coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoordinateWalk {
    pub level: LevelRef,
    pub parent: IReg,
}

/// A factor of [`Op::RowAxpy`]: a dense last level whose row is chosen by
/// the driver's coordinate (`via`) or fixed (`parent`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AxpyFactor {
    pub operand: u32,
    pub level: LevelRef,
    pub parent: IReg,
    pub via: Option<LevelRef>,
}

/// How a program's outermost loop splits into chunks that run in parallel:
/// each chunk runs the whole program with [`Op::Chunk`] set to its range of
/// the loop's coordinates.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunking {
    /// The outermost loop variable (an index into [`Program::vars`]).
    pub var: u32,
    /// The levels the outermost loop iterates (level 0 of inputs): the
    /// positions below them measure each coordinate's work.
    pub drivers: Vec<LevelRef>,
    /// What the chunks' outputs are.
    pub output: ChunkOutput,
    /// The rows of the output's first mode each coordinate of the chunked
    /// variable holds.
    pub rows: ChunkRows,
    /// The chunks merge rows into sparse parts ([`Op::RowsMerge`]): they
    /// write about as much as they read, and joining the parts copies it
    /// all again, so by default the run takes one thread (see
    /// [`crate::runtime::Parallelism::threads`]).
    pub join_bound: bool,
    /// When the chunked variable runs over blocks of an operand's
    /// positions (a schedule's `pos`, split): the level whose positions
    /// are cut, below the operand's first level. A chunk's output rows are
    /// the first level's coordinates its positions lie below, and two
    /// chunks may share a row.
    pub positions: Option<LevelRef>,
}

/// The output rows below a coordinate of the chunked variable: one, or a
/// block of them when the variable runs over blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkRows {
    /// Rows per coordinate, when known while planning.
    pub block: u32,
    /// The dimension ([`Program::vars`] index) holding the rows per
    /// coordinate when only the run knows them (a schedule's `divide`).
    pub block_at: Option<u32>,
    /// The dimension ([`Program::vars`] index) the last block is cut at,
    /// when a schedule's split may leave it short.
    pub cut_at: Option<u32>,
    /// Levels (level 0 of inputs) whose coordinates are the rows, when the
    /// chunked variable is their blocks: the positions below them measure
    /// each block's work.
    pub drivers: Vec<LevelRef>,
}

/// How the chunks of a parallel run make one output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkOutput {
    /// A dense output whose first level is the chunked variable: each chunk
    /// writes its own rows.
    DenseRows,
    /// A dense output (or a scalar) the chunked variable is summed into:
    /// each chunk fills a partial output, added up in chunk order.
    DensePartials,
    /// A sparse output whose first level is the chunked variable: each
    /// chunk assembles its rows, and the parts are joined in order.
    SparseParts,
    /// An output on operand `operand`'s pattern whose first level is the
    /// chunked variable: each chunk writes the values of its rows'
    /// positions.
    PatternRows { operand: u32 },
}

/// A compiled statement: ops and register counts. Operand `k < inputs` is
/// the `k`-th access on the right; operand `inputs` is the output.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Program {
    pub ops: Vec<Op>,
    pub int_regs: usize,
    pub float_regs: usize,
    pub bool_regs: usize,
    pub inputs: usize,
    /// Loop variable names, indexed by `Op::Dim::var`.
    pub vars: Vec<String>,
    /// How the program runs in chunks; `None` when it runs whole.
    pub chunking: Option<Chunking>,
    /// The vector temporaries each run keeps for itself: temporary `k`
    /// has one component per coordinate of loop variable `temps[k]`
    /// (indexed like [`Program::vars`]). Their contents start undefined:
    /// the program fills them before it reads them.
    pub temps: Vec<u32>,
    /// How the output and workspaces add values: in `f64`, or as integers
    /// of this type held as their bits (wrapping).
    pub value_type: ValueType,
}

/// The sizes of a block, as a plan and the bytecode print them (`4x4`).
///
/// ```
/// assert_eq!(tessera_engine::bytecode::block_shape(&[2, 3]), "2x3");
/// ```
pub fn block_shape(block: &[u32]) -> String {
    block.iter().map(u32::to_string).collect::<Vec<_>>().join("x")
}

/// The length of each vector temporary `temps` (as [`Program::temps`]) in
/// a run whose loop variables have sizes `dims`: what each tier allocates.
///
/// ```
/// assert_eq!(tessera_engine::bytecode::temp_lengths(&[0, 1], &[3, 16]), vec![3, 16]);
/// ```
pub fn temp_lengths(temps: &[u32], dims: &[i64]) -> Vec<usize> {
    temps.iter().map(|&v| dims[v as usize].max(0) as usize).collect()
}

impl Program {
    /// The length of each vector temporary in a run whose loop variables
    /// have sizes `dims` ([`Program::temps`]).
    ///
    /// ```
    /// use tessera_engine::bytecode::Program;
    ///
    /// let program = Program { temps: vec![1], ..Program::default() };
    /// assert_eq!(program.temp_lengths(&[7, 16]), vec![16]);
    /// ```
    pub fn temp_lengths(&self, dims: &[i64]) -> Vec<usize> {
        temp_lengths(&self.temps, dims)
    }
}

impl Op {
    /// Whether the op adds into the output's workspace.
    pub fn accumulates_into_workspace(&self) -> bool {
        matches!(self, Op::WorkspaceAccum { .. } | Op::WorkspaceAxpy { .. })
    }

    /// Whether the op's only effect on the output is appending entries.
    pub fn only_appends(&self) -> bool {
        match self {
            Op::Append { .. } => true,
            Op::PositionLoop { body, .. } => body.only_appends(),
            _ => false,
        }
    }

    /// Whether the op reads or writes the output (or its workspace).
    pub fn touches_output(&self) -> bool {
        match self {
            Op::AccumOutput { .. }
            | Op::Append { .. }
            | Op::WorkspaceAccum { .. }
            | Op::WorkspaceFlush { .. }
            | Op::DenseRowsDot { .. }
            | Op::BlockRowsDot { .. }
            | Op::StridedAxpy { .. }
            | Op::StridedFlush
            | Op::RowsDot { .. }
            | Op::ValuesAxpy { .. }
            | Op::DenseAxpy { .. }
            | Op::RowAxpy { .. }
            | Op::WorkspaceAxpy { .. }
            | Op::MergeRows { .. }
            | Op::MergeRuns { .. }
            | Op::RowsMerge { .. }
            | Op::PositionLoop { .. } => true,
            Op::RunEnd { .. }
            | Op::IConst { .. }
            | Op::IMove { .. }
            | Op::IBin { .. }
            | Op::ICmp { .. }
            | Op::ISelect { .. }
            | Op::BConst { .. }
            | Op::BAnd { .. }
            | Op::BOr { .. }
            | Op::BNot { .. }
            | Op::Jump { .. }
            | Op::JumpIf { .. }
            | Op::JumpIfNot { .. }
            | Op::Dim { .. }
            | Op::Chunk { .. }
            | Op::CoordIter { .. }
            | Op::CoordAccess { .. }
            | Op::PosIter { .. }
            | Op::PosAccess { .. }
            | Op::Locate { .. }
            | Op::FConst { .. }
            | Op::FMove { .. }
            | Op::FBin { .. }
            | Op::FNeg { .. }
            | Op::FCall { .. }
            | Op::LoadValue { .. }
            | Op::TempLoad { .. }
            | Op::TempStore { .. }
            | Op::TempAxpy { .. }
            | Op::TempFill { .. }
            | Op::DotBlock { .. }
            | Op::DenseDot { .. }
            | Op::Halt => false,
        }
    }
}

impl fmt::Display for FloatOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FloatOp::Add => "fadd",
            FloatOp::Sub => "fsub",
            FloatOp::Mul => "fmul",
            FloatOp::Div => "fdiv",
        })
    }
}

/// A row merge's op as listings show it: `Add`, or `Add of f2·a, f3·b`
/// with scales.
fn merge_op(op: RowOp, scales: Option<[FReg; 2]>) -> String {
    match scales {
        None => format!("{op:?}"),
        Some([a, b]) => format!("{op:?} of f{a}·a, f{b}·b"),
    }
}

fn regs(r: &Regs) -> String {
    let names: Vec<String> = r.iter().map(|x| format!("r{x}")).collect();
    format!("[{}]", names.join(", "))
}

/// A dense row factor of a row update, ` * t<operand>[<its row> row]`: the
/// row at `parent`, or with `via` at `parent · extent(via) + coord`.
fn row_factor(operand: u32, parent: &dyn fmt::Display, via: Option<LevelRef>, coord: &str) -> String {
    match via {
        Some(via) => format!(" * t{operand}[({parent} * extent({}) + {coord}) row]", lv(&via)),
        None => format!(" * t{operand}[{parent} row]"),
    }
}

fn lv(l: &LevelRef) -> String {
    format!("t{}.l{}", l.operand, l.level)
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::IConst { dst, value } => write!(f, "r{dst} = {value}"),
            Op::IMove { dst, src } => write!(f, "r{dst} = r{src}"),
            Op::IBin { op, dst, a, b } => write!(f, "r{dst} = {} r{a}, r{b}", format!("{op:?}").to_lowercase()),
            Op::ICmp { op, dst, a, b } => write!(f, "b{dst} = {} r{a}, r{b}", format!("{op:?}").to_lowercase()),
            Op::ISelect { dst, cond, a, b } => write!(f, "r{dst} = select b{cond}, r{a}, r{b}"),
            Op::BConst { dst, value } => write!(f, "b{dst} = {value}"),
            Op::BAnd { dst, a, b } => write!(f, "b{dst} = and b{a}, b{b}"),
            Op::BOr { dst, a, b } => write!(f, "b{dst} = or b{a}, b{b}"),
            Op::BNot { dst, a } => write!(f, "b{dst} = not b{a}"),
            Op::Jump { to } => write!(f, "jump @{to}"),
            Op::JumpIf { cond, to } => write!(f, "jump_if b{cond} @{to}"),
            Op::JumpIfNot { cond, to } => write!(f, "jump_unless b{cond} @{to}"),
            Op::Dim { dst, var } => write!(f, "r{dst} = dim v{var}"),
            Op::Chunk { begin, end } => write!(f, "r{begin}, r{end} = chunk"),
            Op::CoordIter {
                level,
                ancestors,
                begin,
                end,
            } => {
                write!(f, "r{begin}, r{end} = coord_iter {} {}", lv(level), regs(ancestors))
            }
            Op::CoordAccess {
                level,
                parent,
                ancestors,
                coord,
                pos,
                found,
            } => write!(
                f,
                "r{pos}, b{found} = coord_access {} r{parent} {} r{coord}",
                lv(level),
                regs(ancestors)
            ),
            Op::PosIter {
                level,
                parent,
                begin,
                end,
            } => {
                write!(f, "r{begin}, r{end} = pos_iter {} r{parent}", lv(level))
            }
            Op::PosAccess {
                level,
                pos,
                ancestors,
                coord,
                found,
            } => write!(
                f,
                "r{coord}, b{found} = pos_access {} r{pos} {}",
                lv(level),
                regs(ancestors)
            ),
            Op::Locate {
                level,
                parent,
                ancestors,
                coord,
                pos,
                found,
            } => write!(
                f,
                "r{pos}, b{found} = locate {} r{parent} {} r{coord}",
                lv(level),
                regs(ancestors)
            ),
            Op::FConst { dst, value } => write!(f, "f{dst} = {value:?}"),
            Op::FMove { dst, src } => write!(f, "f{dst} = f{src}"),
            Op::FBin { op, dst, a, b } => write!(f, "f{dst} = {op} f{a}, f{b}"),
            Op::FCall { func, dst, a, b } if func.arity() == 1 => write!(f, "f{dst} = call {func} f{a}"),
            Op::FCall { func, dst, a, b } => write!(f, "f{dst} = call {func} f{a}, f{b}"),
            Op::FNeg { dst, a } => write!(f, "f{dst} = fneg f{a}"),
            Op::LoadValue { operand, pos, dst } => write!(f, "f{dst} = value t{operand}[r{pos}]"),
            Op::TempLoad { temp, index, dst } => write!(f, "f{dst} = w{temp}[r{index}]"),
            Op::TempStore { temp, index, value } => write!(f, "w{temp}[r{index}] = f{value}"),
            Op::TempFill { temp, value } => write!(f, "w{temp}[..] = f{value}"),
            Op::AccumOutput { pos, value } => write!(f, "out[r{pos}] += f{value}"),
            Op::Append { coords, value } => write!(f, "append {} f{value}", regs(coords)),
            Op::WorkspaceAccum { coords, value } => {
                write!(f, "workspace {} += f{value}", regs(coords))
            }
            Op::WorkspaceFlush { prefix } => write!(f, "flush workspace below {}", regs(prefix)),
            Op::DotBlock {
                driver,
                begin,
                end,
                factors,
                temp,
                acc,
            } => {
                let mut fs: Vec<String> = factors
                    .iter()
                    .map(|x| format!("t{}[r{} * extent({}) + coord]", x.operand, x.parent, lv(&x.level)))
                    .collect();
                fs.extend(temp.map(|t| format!("w{t}[coord]")));
                write!(
                    f,
                    "f{acc} += dot {} r{begin}..r{end} * {}",
                    lv(driver),
                    if fs.is_empty() { "1".into() } else { fs.join(" * ") }
                )
            }
            Op::DenseDot {
                scale,
                factors,
                len,
                acc,
            } => {
                let fs: Vec<String> = factors
                    .iter()
                    .map(|x| format!(" * t{}[r{} + c]", x.operand, x.start))
                    .collect();
                write!(f, "f{acc} += dense dot for c < {len}: f{scale}{}", fs.join(""))
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
            } => {
                let fs: Vec<String> = factors.iter().chain(shared).map(|x| format!(" * {x}")).collect();
                let out_at = match blocks {
                    BlockRows::One { .. } => format!("r{}", out.start),
                    BlockRows::Every { .. } => format!("r{} + b * r{out_block_step}", out.start),
                };
                write!(
                    f,
                    "for p in {blocks} of {} (c its coordinate), r < {rows}: out[{out_at} + r * r{}] += \
                     dense dot for k < {len}: f{scale}{}",
                    lv(driver),
                    out.step,
                    fs.join("")
                )
            }
            Op::StridedAxpy {
                rows,
                scale,
                factors,
                out,
                columns,
                deferred,
            } => {
                let across = |k: usize| match columns.as_ref().and_then(|c| c.steps[k]) {
                    Some(step) => format!(" (+ c * r{step})"),
                    None => String::new(),
                };
                let fs: Vec<String> = factors
                    .iter()
                    .enumerate()
                    .map(|(k, x)| format!(" * {x}{}", across(k)))
                    .collect();
                let (loops, out_across) = match columns {
                    Some(c) => (format!(", c < r{}", c.count), format!(" + c * r{}", c.out_step)),
                    None => (String::new(), String::new()),
                };
                write!(
                    f,
                    "{}for r < r{rows}{loops}: out[r{} + r * r{}{out_across}] += f{scale}{}",
                    if *deferred { "deferred " } else { "" },
                    out.start,
                    out.step,
                    fs.join("")
                )
            }
            Op::StridedFlush => write!(f, "run deferred strided updates"),
            Op::ValuesAxpy {
                driver,
                begin,
                end,
                scale,
                factors,
                map,
            } => {
                let fs: Vec<String> = factors
                    .iter()
                    .map(|x| format!(" * t{}[r{} * extent({}) + coord]", x.operand, x.parent, lv(&x.level)))
                    .collect();
                let product = format!("f{scale} * t{}[p]{}", driver.operand, fs.join(""));
                let value = match map {
                    None => product,
                    Some(func) => format!("{func}({product})"),
                };
                write!(f, "for p in r{begin}..r{end} of {}: out[p] += {value}", lv(driver))
            }
            Op::DenseRowsDot {
                rows,
                len,
                scale,
                factors,
                shared,
                out,
            } => {
                let fs: Vec<String> = factors
                    .iter()
                    .map(|x| format!(" * t{}[r{} + r * r{} + c]", x.operand, x.start, x.step))
                    .chain(shared.iter().map(|x| format!(" * t{}[r{} + c]", x.operand, x.start)))
                    .collect();
                write!(
                    f,
                    "for r < {rows}: out[r{} + r * r{}] += dense dot for c < {len}: f{scale}{}",
                    out.start,
                    out.step,
                    fs.join("")
                )
            }
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
            } => {
                let fs: Vec<String> = factors
                    .iter()
                    .map(|x| format!("t{}[r{} * extent({}) + coord]", x.operand, x.parent, lv(&x.level)))
                    .collect();
                let semiring = match semiring {
                    Semiring::PlusTimes => String::new(),
                    other => format!(" in {other}"),
                };
                let every = if *every_row { ", every row" } else { "" };
                write!(
                    f,
                    "rows r{first}..r{last} of {} below r{parent}: out[r{out_parent} * extent({}) + row] += dot{semiring} {} * {}{every}",
                    lv(rows),
                    lv(out),
                    lv(driver),
                    if fs.is_empty() { "1".into() } else { fs.join(" * ") }
                )
            }
            Op::TempAxpy { temp, scale, factors } => {
                let fs: Vec<String> = factors
                    .iter()
                    .map(|x| format!(" * t{}[r{} * extent({}) + c]", x.operand, x.parent, lv(&x.level)))
                    .collect();
                write!(f, "for c: w{temp}[c] += f{scale}{}", fs.join(""))
            }
            Op::DenseAxpy {
                scale,
                factors,
                temp,
                out,
                out_parent,
            } => {
                let mut fs: Vec<String> = factors
                    .iter()
                    .map(|x| format!(" * t{}[r{} * extent({}) + c]", x.operand, x.parent, lv(&x.level)))
                    .collect();
                fs.extend(temp.map(|t| format!(" * w{t}[c]")));
                write!(
                    f,
                    "for c: out[r{out_parent} * extent({}) + c] += f{scale}{}",
                    lv(out),
                    fs.join("")
                )
            }
            Op::RowAxpy {
                driver,
                begin,
                end,
                scale,
                factors,
                out,
                out_parent,
            } => {
                let fs: Vec<String> = factors
                    .iter()
                    .map(|x| row_factor(x.operand, &format!("r{}", x.parent), x.via, "coord"))
                    .collect();
                write!(
                    f,
                    "for p in {} r{begin}..r{end}: out[r{out_parent} row of {}] += f{scale} * value[p]{}",
                    lv(driver),
                    lv(out),
                    fs.join("")
                )
            }
            Op::WorkspaceAxpy {
                driver,
                begin,
                end,
                scale,
                prefix,
            } => write!(
                f,
                "for p in {} r{begin}..r{end}: workspace {} ++ [coord] += f{scale} * value[p]",
                lv(driver),
                regs(prefix)
            ),
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
            } => {
                write!(
                    f,
                    "append below {}: merge {} {} r{a_begin}..r{a_end}, {} r{b_begin}..r{b_end}",
                    regs(prefix),
                    merge_op(*op, *scales),
                    lv(a),
                    lv(b)
                )?;
                match block.is_empty() {
                    true => Ok(()),
                    false => write!(f, ", blocks of {}", block_shape(block)),
                }
            }
            Op::MergeRuns {
                runs: [a, b],
                op,
                scales,
                prefix,
                shifts,
            } => write!(
                f,
                "append below {}: merge {} {a}, {b}, levels below shifted by {}",
                regs(prefix),
                merge_op(*op, *scales),
                regs(shifts)
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
            } => write!(
                f,
                "rows r{first}..r{last}: append below {} ++ [row]: merge {} the row below {} r{a_parent}, the row below {} r{b_parent}",
                regs(prefix),
                merge_op(*op, *scales),
                lv(a_rows),
                lv(b_rows)
            ),
            Op::PositionLoop {
                driver,
                cursor,
                end,
                coordinates: None,
                body,
                resume,
            } => write!(
                f,
                "interpreter: for p in {} r{cursor}..r{end}: {body}; then @{resume}",
                lv(driver)
            ),
            Op::PositionLoop {
                driver,
                cursor,
                end,
                coordinates: Some(walk),
                body,
                resume,
            } => write!(
                f,
                "interpreter: for p in {} at the positions of {} below r{} over coordinates r{cursor}..r{end}: {body}; then @{resume}",
                lv(driver),
                lv(&walk.level),
                walk.parent
            ),
            Op::RunEnd {
                level,
                pos,
                end,
                coord,
                resume,
            } => write!(
                f,
                "interpreter: r{pos} = end of the run of r{coord} in {} below r{end}; then @{resume}",
                lv(level)
            ),
            Op::Halt => write!(f, "halt"),
        }
    }
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "; {} inputs, {} int, {} float, {} bool registers; vars: {}",
            self.inputs,
            self.int_regs,
            self.float_regs,
            self.bool_regs,
            self.vars
                .iter()
                .enumerate()
                .map(|(k, v)| format!("v{k}={v}"))
                .collect::<Vec<_>>()
                .join(" ")
        )?;
        if !self.temps.is_empty() {
            let temps: Vec<String> = self
                .temps
                .iter()
                .enumerate()
                .map(|(k, v)| format!("w{k}(v{v})"))
                .collect();
            writeln!(f, "; vector temporaries: {}", temps.join(" "))?;
        }
        for (k, op) in self.ops.iter().enumerate() {
            writeln!(f, "{k:4}  {op}")?;
        }
        Ok(())
    }
}
