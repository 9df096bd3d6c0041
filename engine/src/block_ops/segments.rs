//! Inner products over a level's stored positions ([`Op::DotBlock`]).
//!
//! [`Op::DotBlock`]: crate::bytecode::Op::DotBlock

use smallvec::SmallVec;
use tessera_formats::{ArrayRef, LevelRef, Param};

use super::{KernelBuilder, Length};
use crate::bytecode::{DotFactor, FloatOp, IReg};

/// `Σ_{p in begin..end} own[p] · Π factors[c] (· temp[c])`, `c` the
/// coordinate stored at `p` in `coords`: the sum from `0.0` in increasing
/// `p` (scipy's order for a row), each product taken from the position's
/// value in the factors' order. A factor is the dense row of its level
/// below register `parent`; registers are read through `reg`.
///
/// ```
/// use tessera_engine::block_ops::{segment_dot, KernelBuilder};
/// use tessera_engine::bytecode::DotFactor;
/// use tessera_engine::interp::{Eager, Operands};
/// use tessera_formats::{Builder, IndexArray, LevelRef, LevelStorage};
///
/// // A row with values 2 and 3 in columns 1 and 3, times the second row
/// // of a dense 2 x 4 matrix.
/// let mut columns = LevelStorage::new(4);
/// columns.arrays.push(IndexArray::U32(vec![0, 2]));
/// columns.arrays.push(IndexArray::U32(vec![1, 3]));
/// let mut rows = LevelStorage::new(4);
/// rows.extent = 4;
/// let (own, dense) = ([2.0, 3.0], [0.0, 0.0, 0.0, 0.0, 10.0, 20.0, 30.0, 40.0]);
/// let levels = [&[columns][..], &[LevelStorage::new(2), rows][..]];
/// let values = [&own[..], &dense[..]];
/// let mut k = Eager::new(Operands { levels: &levels, ..Operands::values(&values) });
/// let driver = LevelRef { operand: 0, level: 0 };
/// let coords = driver.array(1);
/// let row = DotFactor { operand: 1, level: LevelRef { operand: 1, level: 1 }, parent: 0 };
/// let (begin, end) = (k.int(0), k.int(2));
/// // r0 = 1: the dense matrix's second row.
/// let sum = segment_dot(&mut k, (driver, coords), (begin, end), (&[row], None), &mut |_, _| 1);
/// assert_eq!(sum, 2.0 * 20.0 + 3.0 * 40.0);
/// ```
pub fn segment_dot<K: KernelBuilder>(
    k: &mut K,
    (driver, coords): (LevelRef, ArrayRef),
    (begin, end): (K::Int, K::Int),
    (factors, temp): (&[DotFactor], Option<u32>),
    reg: &mut dyn FnMut(&mut K, IReg) -> K::Int,
) -> K::Float {
    let zero = k.int(0);
    let own = k.value_run(driver.operand, zero);
    let coords = k.coordinates(coords);
    let mut rows: SmallVec<[K::Run; 3]> = SmallVec::new();
    for f in factors {
        let extent = k.param(f.level, Param::Extent);
        let parent = reg(k, f.parent);
        let first = k.mul(parent, extent);
        rows.push(k.value_run(f.operand, first));
    }
    if let Some(t) = temp {
        rows.push(k.temp_run(t));
    }
    let sum = k.float(0.0);
    // One dense row (SpMV's x) gets a body of its own: the interpreter,
    // which runs this as it is called, then loops over one gather instead
    // of over the rows.
    match *rows {
        [x] => k.fold_range(begin, end, sum, |k, p, sum| {
            let c = k.coordinate(coords, p);
            let v = k.run_at(own, Length::In(p));
            let x = k.run_at(x, Length::In(c));
            let prod = k.float_op(FloatOp::Mul, v, x);
            k.float_op(FloatOp::Add, sum, prod)
        }),
        _ => k.fold_range(begin, end, sum, |k, p, sum| {
            let c = k.coordinate(coords, p);
            let mut prod = k.run_at(own, Length::In(p));
            for &row in &rows {
                let x = k.run_at(row, Length::In(c));
                prod = k.float_op(FloatOp::Mul, prod, x);
            }
            k.float_op(FloatOp::Add, sum, prod)
        }),
    }
}
