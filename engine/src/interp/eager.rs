//! The interpreter's builder: level functions and block ops run as they
//! are called, on plain integers and floats ([`Eager`]).

use std::cell::Cell;

use tessera_formats::{ArrayRef, Immediate, IndexArray, LevelRef, LevelStorage, StorageResolver};

use crate::block_ops::{KernelBuilder, Length};
use crate::bytecode::FloatOp;
use crate::notation::{Func, Reduction};
use crate::runtime::output::OutputState;
use crate::runtime::workspace::WorkspaceCells;

/// What a program reads, resolved for the interpreter: each operand's
/// levels and its values as `f64`, and the part of a dense output a block
/// op adds into (cells, so the builder stays a shared view).
#[derive(Clone, Copy)]
pub struct Operands<'b, 'a> {
    pub levels: &'b [&'a [LevelStorage]],
    pub values: &'b [&'a [f64]],
    pub output: DenseCells<'b>,
    /// The program's vector temporaries.
    pub temps: &'b [Vec<f64>],
    /// The output's dense workspace, for the ops that add into it.
    pub workspace: Option<WorkspaceCells<'b>>,
}

/// Positions `first..first + cells.len()` of a dense output, as cells.
#[derive(Clone, Copy, Default)]
pub struct DenseCells<'b> {
    pub cells: &'b [Cell<f64>],
    pub first: i64,
}

impl<'b> DenseCells<'b> {
    /// The values of positions `first..`, borrowed as cells.
    pub fn new(values: &'b mut [f64], first: i64) -> Self {
        DenseCells {
            cells: Cell::from_mut(values).as_slice_of_cells(),
            first,
        }
    }
}

impl<'b, 'a> Operands<'b, 'a> {
    /// Operands with levels alone (level functions).
    pub fn levels(levels: &'b [&'a [LevelStorage]]) -> Self {
        Operands {
            levels,
            values: &[],
            output: DenseCells::default(),
            temps: &[],
            workspace: None,
        }
    }

    /// The same operands, their ops adding into `workspace`.
    pub fn with_workspace(self, workspace: WorkspaceCells<'b>) -> Self {
        Operands {
            workspace: Some(workspace),
            ..self
        }
    }

    /// Operands with levels and values whose ops add into the dense
    /// output `out` (or its window).
    ///
    /// ```
    /// use tessera_engine::block_ops::{KernelBuilder, Length};
    /// use tessera_engine::interp::{Eager, Operands};
    /// use tessera_engine::runtime::output::OutputState;
    /// use tessera_formats::Format;
    ///
    /// let mut out = OutputState::Dense { shape: vec![2], format: Format::dense(1), values: vec![1.0, 2.0] };
    /// let mut k = Eager::new(Operands::on_output(&[], &[], &mut out));
    /// let target = k.output_target(0);
    /// k.add_at(target, Length::Fixed(1), 5.0);
    /// drop(k);
    /// assert!(matches!(out, OutputState::Dense { values, .. } if values == [1.0, 7.0]));
    /// ```
    pub fn on_output(levels: &'b [&'a [LevelStorage]], values: &'b [&'a [f64]], out: &'b mut OutputState) -> Self {
        let (first, cells) = out.dense_values_mut().expect("block ops add into a dense output");
        Operands {
            levels,
            values,
            output: DenseCells::new(cells, first as i64),
            temps: &[],
            workspace: None,
        }
    }

    /// Operands with values and no levels or output (block ops that only
    /// read values).
    pub fn values(values: &'b [&'a [f64]]) -> Self {
        Operands {
            levels: &[],
            values,
            output: DenseCells::default(),
            temps: &[],
            workspace: None,
        }
    }

    /// The workspace the ops add into.
    #[inline(always)]
    fn workspace(&self) -> &WorkspaceCells<'b> {
        self.workspace
            .as_ref()
            .expect("workspace ops run with the output's dense workspace")
    }
}

/// The interpreter's builder: level functions and block ops run as they
/// are called, on plain integers and floats.
pub type Eager<'b, 'a> = Immediate<Operands<'b, 'a>>;

impl<'b, 'a> KernelBuilder for Eager<'b, 'a> {
    type Float = f64;
    type Pair = [f64; 2];
    /// The values and the run's first position.
    type Run = (&'b [f64], usize);
    /// The output's cells from the target's first position on.
    type Target = &'b [Cell<f64>];
    type Coords = &'b IndexArray;

    #[inline(always)]
    fn float(&mut self, value: f64) -> f64 {
        value
    }
    #[inline(always)]
    fn coordinates(&mut self, array: ArrayRef) -> &'b IndexArray {
        let levels: &'b [&'a [LevelStorage]] = self.storage.levels;
        &levels[array.level.operand as usize][array.level.level as usize].arrays[array.slot as usize]
    }
    #[inline(always)]
    fn coordinate(&mut self, coords: &'b IndexArray, position: i64) -> i64 {
        coords.get(position as usize)
    }
    #[inline(always)]
    fn float_op(&mut self, op: FloatOp, a: f64, b: f64) -> f64 {
        op.apply(a, b)
    }
    #[inline(always)]
    fn float_neg(&mut self, x: f64) -> f64 {
        -x
    }
    #[inline(always)]
    fn float_call(&mut self, func: Func, a: f64, b: f64) -> f64 {
        func.apply(&[a, b])
    }
    #[inline(always)]
    fn combine(&mut self, reduction: Reduction, a: f64, b: f64) -> f64 {
        reduction.combine(a, b)
    }
    #[inline(always)]
    fn value_run(&mut self, operand: u32, start: i64) -> (&'b [f64], usize) {
        (self.storage.values[operand as usize], start as usize)
    }
    #[inline(always)]
    fn temp_run(&mut self, temp: u32) -> (&'b [f64], usize) {
        (&self.storage.temps[temp as usize], 0)
    }
    #[inline(always)]
    fn run_at(&mut self, (values, start): (&'b [f64], usize), index: Length<i64>) -> f64 {
        values[start + index_of(index)]
    }
    #[inline(always)]
    fn run_within(&mut self, (values, start): (&'b [f64], usize), len: Length<i64>) -> (&'b [f64], usize) {
        (&values[start..start + index_of(len)], 0)
    }
    #[inline(always)]
    fn run_offset(&mut self, (values, start): (&'b [f64], usize), by: i64) -> (&'b [f64], usize) {
        (values, (start as i64 + by) as usize)
    }
    #[inline(always)]
    fn add_to_output(&mut self, position: i64, value: f64) {
        let output = self.storage.output;
        let cell = &output.cells[(position - output.first) as usize];
        cell.set(cell.get() + value);
    }
    fn tile_pairs(&self) -> usize {
        8
    }
    #[inline(always)]
    fn splat(&mut self, x: f64) -> [f64; 2] {
        [x, x]
    }
    #[inline(always)]
    fn pair_op(&mut self, op: FloatOp, a: [f64; 2], b: [f64; 2]) -> [f64; 2] {
        [op.apply(a[0], b[0]), op.apply(a[1], b[1])]
    }
    #[inline(always)]
    fn run_pair(&mut self, (values, start): (&'b [f64], usize), index: Length<i64>) -> [f64; 2] {
        let at = start + index_of(index);
        [values[at], values[at + 1]]
    }
    #[inline(always)]
    fn output_target(&mut self, start: i64) -> &'b [Cell<f64>] {
        let output = self.storage.output;
        &output.cells[(start - output.first) as usize..]
    }
    #[inline(always)]
    fn target_offset(&mut self, target: &'b [Cell<f64>], by: i64) -> &'b [Cell<f64>] {
        &target[by as usize..]
    }
    #[inline(always)]
    fn add_at(&mut self, target: &'b [Cell<f64>], index: Length<i64>, value: f64) {
        let cell = &target[index_of(index)];
        cell.set(cell.get() + value);
    }
    #[inline(always)]
    fn target_pair(&mut self, target: &'b [Cell<f64>], index: Length<i64>) -> [f64; 2] {
        let at = index_of(index);
        [target[at].get(), target[at + 1].get()]
    }
    #[inline(always)]
    fn set_target_pair(&mut self, target: &'b [Cell<f64>], index: Length<i64>, pair: [f64; 2]) {
        let at = index_of(index);
        target[at].set(pair[0]);
        target[at + 1].set(pair[1]);
    }
    #[inline(always)]
    fn for_range_by<F>(&mut self, begin: i64, end: i64, step: u32, mut body: F)
    where
        F: FnMut(&mut Self, i64),
    {
        // A plain loop: the body is inlined into it (an iterator adaptor's
        // fold left it a call per element).
        let mut i = begin;
        while i < end {
            body(self, i);
            i += i64::from(step);
        }
    }
    #[inline(always)]
    fn fold_pairs<const N: usize, F>(&mut self, begin: i64, end: i64, init: [[f64; 2]; N], mut body: F) -> [[f64; 2]; N]
    where
        F: FnMut(&mut Self, i64, [[f64; 2]; N]) -> [[f64; 2]; N],
    {
        let (mut acc, mut i) = (init, begin);
        while i < end {
            acc = body(self, i, acc);
            i += 1;
        }
        acc
    }
    #[inline(always)]
    fn fold_floats<const N: usize, F>(
        &mut self,
        begin: i64,
        end: i64,
        step: Length<i64>,
        init: [f64; N],
        mut body: F,
    ) -> [f64; N]
    where
        F: FnMut(&mut Self, i64, [f64; N]) -> [f64; N],
    {
        let step = index_of(step) as i64;
        let (mut acc, mut i) = (init, begin);
        while i < end {
            acc = body(self, i, acc);
            i += step;
        }
        acc
    }
    #[inline(always)]
    fn fold_entries<const N: usize, F>(
        &mut self,
        (coords, (values, start)): (&'b IndexArray, (&'b [f64], usize)),
        (begin, end): (i64, i64),
        init: [f64; N],
        mut body: F,
    ) -> [f64; N]
    where
        F: FnMut(&mut Self, i64, i64, f64, [f64; N]) -> [f64; N],
    {
        // One loop per width of coordinates, each zipping typed slices
        // checked once here instead of at every read.
        let range = begin as usize..end as usize;
        let values = &values[start + range.start..start + range.end];
        match coords {
            IndexArray::U32(v) => walk_entries(self, (&v[range], i64::from), values, begin, init, &mut body),
            IndexArray::U64(v) => walk_entries(self, (&v[range], |c| c as i64), values, begin, init, &mut body),
            IndexArray::I64(v) => walk_entries(self, (&v[range], |c| c), values, begin, init, &mut body),
        }
    }
    #[inline(always)]
    fn workspace_word(&mut self, index: i64) -> i64 {
        self.storage.workspace().keys[index as usize].get() as i64
    }
    #[inline(always)]
    fn set_workspace_word(&mut self, index: i64, word: i64) {
        self.storage.workspace().keys[index as usize].set(word as u64);
    }
    #[inline(always)]
    fn push_touched_key(&mut self, key: i64) {
        let workspace = self.storage.workspace();
        let n = workspace.count.get();
        workspace.touched[n].set(key as u32);
        workspace.count.set(n + 1);
    }
    #[inline(always)]
    fn add_to_workspace(&mut self, key: i64, x: f64) {
        let workspace = self.storage.workspace();
        let cell = &workspace.values[key as usize];
        cell.set(workspace.adder.add(cell.get(), x));
    }
    #[inline(always)]
    fn workspace_stride(&mut self, d: usize) -> i64 {
        self.storage.workspace().strides[d] as i64
    }
    #[inline(always)]
    fn when<F>(&mut self, cond: bool, body: F)
    where
        F: FnOnce(&mut Self),
    {
        if cond {
            body(self);
        }
    }
}

/// [`KernelBuilder::fold_entries`] over coordinates of one width and
/// their values, the first at position `first`.
#[inline(always)]
fn walk_entries<K, I: Copy, const N: usize>(
    k: &mut K,
    (coords, wide): (&[I], impl Fn(I) -> i64),
    values: &[f64],
    first: i64,
    init: [f64; N],
    body: &mut impl FnMut(&mut K, i64, i64, f64, [f64; N]) -> [f64; N],
) -> [f64; N] {
    let (mut acc, mut p) = (init, first);
    for (&c, &v) in coords.iter().zip(values) {
        acc = body(k, p, wide(c), v, acc);
        p += 1;
    }
    acc
}

/// An index as a slice index.
#[inline(always)]
fn index_of(index: Length<i64>) -> usize {
    match index {
        Length::Fixed(c) => c as usize,
        Length::In(c) => c as usize,
    }
}

impl StorageResolver for Operands<'_, '_> {
    #[inline(always)]
    fn level(&self, level: LevelRef) -> &LevelStorage {
        &self.levels[level.operand as usize][level.level as usize]
    }
    fn level_mut(&mut self, _level: LevelRef) -> &mut LevelStorage {
        unreachable!("kernels never store into input levels")
    }
}
