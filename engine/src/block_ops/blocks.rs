//! Stored dense blocks times their pieces of dense operands
//! ([`Op::BlockRowsDot`]): BCSR's SpMV and its kin.
//!
//! [`Op::BlockRowsDot`]: crate::bytecode::Op::BlockRowsDot

use smallvec::SmallVec;
use tessera_formats::{ArrayRef, Level, LevelFormat, LevelRef, Param};

use super::{rows_of_dots, KernelBuilder, Length};
use crate::bytecode::{BlockRows, BlockRun, IReg, StridedRun};

/// A run of [`block_rows_dot`] with its registers read: the values from
/// its start on, and its steps (in values) per position, coordinate, row
/// and block row.
struct Steps<K: KernelBuilder> {
    run: K::Run,
    pos: K::Int,
    coord: K::Int,
    row: K::Int,
    block: K::Int,
}

impl<K: KernelBuilder> Clone for Steps<K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K: KernelBuilder> Copy for Steps<K> {}

/// The op's operands: the level whose stored blocks it walks (each block's
/// column read from its coordinate array), the runs each block multiplies
/// (`factors`, one row after another, and `shared`, the same for every
/// row) and the dense output's run (with its step per block row).
pub struct BlockOperands<'o> {
    pub driver: (LevelRef, LevelFormat),
    pub coords: ArrayRef,
    pub factors: &'o [BlockRun],
    pub shared: &'o [BlockRun],
    pub out: StridedRun,
    pub out_block_step: IReg,
}

impl<'o> BlockOperands<'o> {
    /// The operands of an [`Op::BlockRowsDot`], grouped as its tiers pass
    /// them.
    ///
    /// [`Op::BlockRowsDot`]: crate::bytecode::Op::BlockRowsDot
    pub fn new(
        driver: (LevelRef, LevelFormat),
        coords: ArrayRef,
        (factors, shared): (&'o [BlockRun], &'o [BlockRun]),
        (out, out_block_step): (StridedRun, IReg),
    ) -> Self {
        BlockOperands {
            driver,
            coords,
            factors,
            shared,
            out,
            out_block_step,
        }
    }
}

/// For each stored block at position `p` of `driver` (its coordinate `c`)
/// in block row `b` of `blocks`: the block's rows times the shared runs
/// ([`rows_of_dots`]), a run starting at `start + b * block_step + p *
/// pos_step + c * coord_step` and the output at `out.start + b *
/// out_block_step`. Registers are read through `reg`.
///
/// ```
/// use tessera_engine::block_ops::{block_rows_dot, BlockOperands, KernelBuilder, Length};
/// use tessera_engine::bytecode::{BlockRows, BlockRun, StridedRun};
/// use tessera_engine::interp::{DenseCells, Eager, Operands};
/// use tessera_formats::{Format, IndexArray, Level, LevelRef, LevelStorage};
///
/// // One block row of 1 x 2 blocks: two stored, in block columns 0 and 2.
/// let format = Format::bcsr(1, 2).unwrap().levels()[1].level;
/// let mut columns = LevelStorage::new(3);
/// columns.arrays.push(IndexArray::U32(vec![0, 2]));
/// columns.arrays.push(IndexArray::U32(vec![0, 2]));
/// let levels = [LevelStorage::new(1), columns];
/// let (blocks, x) = ([1.0, 2.0, 3.0, 4.0], [1.0, 10.0, 0.0, 0.0, 100.0, 1000.0]);
/// let (levels, values) = ([&levels[..]], [&blocks[..], &x[..]]);
/// let mut y = [0.0];
/// let output = DenseCells::new(&mut y, 0);
/// let mut k = Eager::new(Operands { levels: &levels, output, ..Operands::values(&values) });
/// // The registers the op reads: r0 = 0, r1 = 1, r2 = 2.
/// let registers = [0, 1, 2];
/// // A block's values: 2 per stored position; its piece of x: 2 per block column.
/// let block = BlockRun { operand: 0, start: 0, block_step: 0, row_step: 2, pos_step: 2, coord_step: 0 };
/// let piece = BlockRun { operand: 1, start: 0, block_step: 0, row_step: 0, pos_step: 0, coord_step: 2 };
/// let driver = LevelRef { operand: 0, level: 1 };
/// let coords = driver.array(format.coordinate_array().unwrap());
/// let out = StridedRun { operand: 0, start: 0, step: 1 };
/// let (factors, shared) = ([block], [piece]);
/// let operands = BlockOperands::new((driver, format), coords, (&factors, &shared), (out, 0));
/// let scale = k.float(1.0);
/// let stored = BlockRows::One { begin: 0, end: 2 };
/// let shape = (Length::Fixed(1), Length::Fixed(2));
/// block_rows_dot(&mut k, operands, stored, shape, scale, &mut |_, r| registers[r as usize]);
/// assert_eq!(y, [(1.0 * 1.0 + 2.0 * 10.0) + (3.0 * 100.0 + 4.0 * 1000.0)]);
/// ```
pub fn block_rows_dot<K: KernelBuilder>(
    k: &mut K,
    operands: BlockOperands<'_>,
    blocks: BlockRows,
    shape: (Length<K::Int>, Length<K::Int>),
    scale: K::Float,
    reg: &mut dyn FnMut(&mut K, IReg) -> K::Int,
) {
    let BlockOperands {
        driver: (driver, format),
        coords,
        factors,
        shared,
        out,
        out_block_step,
    } = operands;
    let coords = k.coordinates(coords);
    let parts: SmallVec<[Steps<K>; 3]> = factors
        .iter()
        .chain(shared)
        .map(|run| {
            let start = reg(k, run.start);
            Steps {
                run: k.value_run(run.operand, start),
                pos: reg(k, run.pos_step),
                coord: reg(k, run.coord_step),
                row: reg(k, run.row_step),
                block: reg(k, run.block_step),
            }
        })
        .collect();
    let (out_start, out_step, out_block_step) = (reg(k, out.start), reg(k, out.step), reg(k, out_block_step));
    // The stored blocks at positions `begin..end`, their output rows from
    // `out_at` on.
    let blocks_of_row = |k: &mut K, parts: &[Steps<K>], out_at: K::Int, (begin, end): (K::Int, K::Int)| {
        k.for_range(begin, end, |k, p| {
            let c = k.coordinate(coords, p);
            let mut runs: SmallVec<[(K::Run, K::Int); 2]> = SmallVec::new();
            let mut shared: SmallVec<[K::Run; 1]> = SmallVec::new();
            for (i, part) in parts.iter().enumerate() {
                let by_pos = k.mul(part.pos, p);
                let by_coord = k.mul(part.coord, c);
                let by = k.add(by_pos, by_coord);
                let run = k.run_offset(part.run, by);
                if i < factors.len() {
                    runs.push((run, part.row));
                } else {
                    shared.push(run);
                }
            }
            rows_of_dots(k, shape, scale, &runs, &shared, (out_at, out_step));
        });
    };
    match blocks {
        BlockRows::One { begin, end } => {
            let segment = (reg(k, begin), reg(k, end));
            blocks_of_row(k, &parts, out_start, segment);
        }
        BlockRows::Every {
            rows,
            parent,
            first,
            last,
        } => {
            let (parent, first, last) = (reg(k, parent), reg(k, first), reg(k, last));
            let extent = k.param(rows, Param::Extent);
            let first_position = k.mul(parent, extent);
            k.for_range(first, last, |k, b| {
                let position = k.add(first_position, b);
                let segment = format.pos_iter(k, driver, position);
                let moved: SmallVec<[Steps<K>; 3]> = parts
                    .iter()
                    .map(|part| {
                        let by = k.mul(part.block, b);
                        Steps {
                            run: k.run_offset(part.run, by),
                            ..*part
                        }
                    })
                    .collect();
                let shift = k.mul(out_block_step, b);
                let out_at = k.add(out_start, shift);
                blocks_of_row(k, &moved, out_at, segment);
            });
        }
    }
}
