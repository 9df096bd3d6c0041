//! The interpreter (tier 0): runs a bytecode [`Program`] on tensors.
//!
//! Level-function ops call the level's one implementation, instantiated with
//! the [`Eager`] builder (plain integers and floats), so no per-format code
//! lives here; so do the block ops written once for every tier
//! ([`crate::block_ops`]). Inner products run a block at a time
//! ([`Op::DotBlock`]): one dispatch per row, coordinates read as a view of
//! the level's `idx` array.

use crate::words::Adder;
use smallvec::SmallVec;
use tessera_formats::staging::{eval_cmp, eval_int_op};
use tessera_formats::typed::ValueSlice;
use tessera_formats::{Immediate, IndexArray, Level, LevelFormat, LevelRef, LevelStorage};

use crate::block_ops::{
    block_rows_dot, dense_axpy, dense_dot, dense_rows_dot, output_row, row_axpy, rows_dot, segment_dot, value_runs,
    values_axpy, BlockOperands, KernelBuilder, Length, RowsOf,
};
use crate::bytecode::{BlockRows, CoordinateRun, FReg, IReg, Op, Program, Regs, RowOp, Strided};
use crate::runtime::output::OutputState;
use crate::runtime::rows::{Combine, Row, Run};
use crate::runtime::strided::{StridedBatch, StridedFactor, StridedUpdate, UpdateColumns};

mod eager;
mod position_loop;

pub use eager::{DenseCells, Eager, Operands};

/// The storage a program runs on: operand `k`'s level formats, levels and
/// values (inputs first, then the output's levels for dense outputs).
#[derive(Clone)]
pub struct Bindings<'a> {
    pub formats: Vec<&'a [LevelFormat]>,
    pub levels: Vec<&'a [LevelStorage]>,
    /// Operand `k`'s values, of its type: compiled tiers read them as
    /// they are; the interpreter reads `f64` ([`f64s`](Self::f64s)), the
    /// runtime handing it others widened.
    pub values: Vec<ValueSlice<'a>>,
    /// The [`Version`](tessera_formats::Version) of each input's tensor:
    /// equal versions hold equal contents, so a tier may keep a copy of an
    /// input (on a device) and reuse it while the version is the same.
    pub versions: Vec<tessera_formats::Version>,
    /// Size of each loop variable, indexed like `Program::vars`.
    pub dims: Vec<i64>,
    /// The coordinates of the outermost loop this run covers ([`Op::Chunk`]).
    pub chunk: (i64, i64),
    /// Threads the run's ops may use themselves when its loops run whole
    /// (deferred strided updates run their tiles on them); 1 in a chunk.
    pub threads: usize,
}

impl<'a> Bindings<'a> {
    /// Operand `k`'s values, which the interpreter reads: `f64` (the
    /// runtime widens the others before interpreting).
    #[inline(always)]
    pub fn f64s(&self, k: usize) -> &'a [f64] {
        match self.values[k] {
            ValueSlice::F64(v) => v,
            other => unreachable!(
                "the interpreter reads f64 values; operand {k} holds {}",
                other.value_type()
            ),
        }
    }

    /// Whether every operand holds `f64` values.
    pub fn all_f64(&self) -> bool {
        self.values.iter().all(|v| matches!(v, ValueSlice::F64(_)))
    }
}

#[inline(always)]
fn gather(ir: &[i64], regs: &Regs) -> SmallVec<[i64; 4]> {
    regs.iter().map(|&r| ir[r as usize]).collect()
}

/// A row merge's op with its scales read from their registers.
fn combine(op: RowOp, scales: Option<[FReg; 2]>, fr: &[f64]) -> Combine {
    Combine {
        op,
        scales: scales.map(|regs| regs.map(|r| fr[r as usize])),
    }
}

/// The values of a run of consecutive coordinates: none when the run is
/// empty (its start is then no position).
fn run_of<'v>(ir: &[i64], values: &[&'v [f64]], run: CoordinateRun) -> Run<'v> {
    let (begin, end) = (ir[run.begin as usize], ir[run.end as usize]);
    let len = (end - begin).max(0) as usize;
    let values = match len {
        0 => &[][..],
        _ => {
            let start = ir[run.values.start as usize] as usize;
            &values[run.values.operand as usize][start..start + len]
        }
    };
    Run { begin, values }
}

/// Runs `program` on `bind`, writing results into `out`.
pub fn run(program: &Program, bind: &Bindings<'_>, out: &mut OutputState) {
    let mut ir = vec![0i64; program.int_regs];
    let mut fr = vec![0f64; program.float_regs];
    let mut br = vec![false; program.bool_regs];
    // Each operand's values, resolved once: the ops index them directly.
    let values: SmallVec<[&[f64]; 4]> = (0..bind.values.len()).map(|k| bind.f64s(k)).collect();
    let mut temps: Vec<Vec<f64>> = program
        .temp_lengths(&bind.dims)
        .into_iter()
        .map(|n| vec![0.0; n])
        .collect();
    let mut strided = StridedBatch::new(bind.threads);
    // A program whose only output op is `Append` hands its entries over in
    // batches (as compiled kernels do), which the assembler takes as runs.
    let batched = program.ops.iter().all(|op| op.only_appends() || !op.touches_output());
    let mut appends = AppendBatch::default();
    let adder = Adder::of(program.value_type);
    let mut b = Immediate::new(Operands {
        levels: &bind.levels,
        ..Operands::values(&values)
    });
    let ops = &program.ops;
    let mut pc = 0usize;
    loop {
        match &ops[pc] {
            Op::IConst { dst, value } => ir[*dst as usize] = *value,
            Op::IMove { dst, src } => ir[*dst as usize] = ir[*src as usize],
            Op::IBin { op, dst, a, b } => ir[*dst as usize] = eval_int_op(*op, ir[*a as usize], ir[*b as usize]),
            Op::ICmp { op, dst, a, b } => br[*dst as usize] = eval_cmp(*op, ir[*a as usize], ir[*b as usize]),
            Op::ISelect { dst, cond, a, b } => {
                ir[*dst as usize] = if br[*cond as usize] {
                    ir[*a as usize]
                } else {
                    ir[*b as usize]
                }
            }
            Op::BConst { dst, value } => br[*dst as usize] = *value,
            Op::BAnd { dst, a, b } => br[*dst as usize] = br[*a as usize] && br[*b as usize],
            Op::BOr { dst, a, b } => br[*dst as usize] = br[*a as usize] || br[*b as usize],
            Op::BNot { dst, a } => br[*dst as usize] = !br[*a as usize],
            Op::Jump { to } => {
                pc = *to;
                continue;
            }
            Op::JumpIf { cond, to } => {
                if br[*cond as usize] {
                    pc = *to;
                    continue;
                }
            }
            Op::JumpIfNot { cond, to } => {
                if !br[*cond as usize] {
                    pc = *to;
                    continue;
                }
            }
            Op::Dim { dst, var } => ir[*dst as usize] = bind.dims[*var as usize],
            Op::Chunk { begin, end } => {
                ir[*begin as usize] = bind.chunk.0;
                ir[*end as usize] = bind.chunk.1;
            }
            Op::CoordIter {
                level,
                ancestors,
                begin,
                end,
            } => {
                let anc = gather(&ir, ancestors);
                let (x, y) = format_of(bind, *level).coord_iter(&mut b, *level, &anc);
                ir[*begin as usize] = x;
                ir[*end as usize] = y;
            }
            Op::CoordAccess {
                level,
                parent,
                ancestors,
                coord,
                pos,
                found,
            } => {
                let anc = gather(&ir, ancestors);
                let (p, f) = format_of(bind, *level).coord_access(
                    &mut b,
                    *level,
                    ir[*parent as usize],
                    &anc,
                    ir[*coord as usize],
                );
                ir[*pos as usize] = p;
                br[*found as usize] = f;
            }
            Op::PosIter {
                level,
                parent,
                begin,
                end,
            } => {
                let (x, y) = format_of(bind, *level).pos_iter(&mut b, *level, ir[*parent as usize]);
                ir[*begin as usize] = x;
                ir[*end as usize] = y;
            }
            Op::PosAccess {
                level,
                pos,
                ancestors,
                coord,
                found,
            } => {
                let anc = gather(&ir, ancestors);
                let (c, f) = format_of(bind, *level).pos_access(&mut b, *level, ir[*pos as usize], &anc);
                ir[*coord as usize] = c;
                br[*found as usize] = f;
            }
            Op::Locate {
                level,
                parent,
                ancestors,
                coord,
                pos,
                found,
            } => {
                let anc = gather(&ir, ancestors);
                let (p, f) =
                    format_of(bind, *level).locate(&mut b, *level, ir[*parent as usize], &anc, ir[*coord as usize]);
                ir[*pos as usize] = p;
                br[*found as usize] = f;
            }
            Op::FConst { dst, value } => fr[*dst as usize] = *value,
            Op::FMove { dst, src } => fr[*dst as usize] = fr[*src as usize],
            Op::FBin { op, dst, a, b } => {
                fr[*dst as usize] = op.apply(fr[*a as usize], fr[*b as usize]);
            }
            Op::FNeg { dst, a } => fr[*dst as usize] = -fr[*a as usize],
            Op::FCall { func, dst, a, b } => fr[*dst as usize] = func.apply(&[fr[*a as usize], fr[*b as usize]]),
            Op::LoadValue { operand, pos, dst } => {
                fr[*dst as usize] = values[*operand as usize][ir[*pos as usize] as usize]
            }
            Op::TempLoad { temp, index, dst } => {
                fr[*dst as usize] = temps[*temp as usize][ir[*index as usize] as usize]
            }
            Op::TempFill { temp, value } => temps[*temp as usize].fill(fr[*value as usize]),
            Op::TempStore { temp, index, value } => {
                temps[*temp as usize][ir[*index as usize] as usize] = fr[*value as usize]
            }
            Op::AccumOutput { pos, value } => out.accumulate(adder, ir[*pos as usize] as usize, fr[*value as usize]),
            Op::PositionLoop {
                driver,
                cursor,
                end,
                coordinates,
                body,
                resume,
            } => {
                let (from, to) = (ir[*cursor as usize], ir[*end as usize].max(ir[*cursor as usize]));
                let positions = match coordinates {
                    None => from as usize..to as usize,
                    Some(walk) => {
                        let extent = bind.levels[walk.level.operand as usize][walk.level.level as usize].extent as i64;
                        let base = ir[walk.parent as usize] * extent;
                        (base + from) as usize..(base + to) as usize
                    }
                };
                let on = (*driver, positions.clone());
                match body {
                    crate::bytecode::PositionBody::Reduce { scale, acc, flag } => {
                        // A sum into registers: the op's only effect.
                        let start = fr[*acc as usize];
                        fr[*acc as usize] = position_loop::reduce(bind, (&ir, &fr), &values, on, scale, start);
                        if let (Some(flag), false) = (flag, positions.is_empty()) {
                            br[*flag as usize] = true;
                        }
                    }
                    crate::bytecode::PositionBody::Scatter { scale, at } => {
                        position_loop::scatter(bind, (&ir, &fr), &values, on, (scale, at), out)
                    }
                    _ => {
                        let batch = batched.then_some(&mut appends);
                        position_loop::run(bind, (&ir, &fr), &values, on, body, out, batch);
                    }
                }
                ir[*cursor as usize] = ir[*end as usize];
                pc = *resume;
                continue;
            }
            Op::RunEnd {
                level,
                pos,
                end,
                coord,
                resume,
            } => {
                let slot = format_of(bind, *level)
                    .coordinate_array()
                    .expect("the planner only emits run ends over levels with a coordinate array");
                let coords = &bind.levels[level.operand as usize][level.level as usize].arrays[slot as usize];
                let (from, to) = (ir[*pos as usize], ir[*end as usize]);
                if from < to {
                    ir[*pos as usize] = coords.run_end(from as usize, to as usize, ir[*coord as usize]) as i64;
                }
                pc = *resume;
                continue;
            }
            Op::Append { coords, value } if batched => appends.push(&ir, coords, fr[*value as usize], out),
            Op::Append { coords, value } => out.append(&gather(&ir, coords), fr[*value as usize]),
            Op::WorkspaceAccum { coords, value } => out.workspace_accumulate(&gather(&ir, coords), fr[*value as usize]),
            Op::WorkspaceFlush { prefix } => out.workspace_flush(&gather(&ir, prefix)),
            Op::DotBlock {
                driver,
                begin,
                end,
                factors,
                temp,
                acc,
            } => {
                let coords = format_of(bind, *driver)
                    .coordinate_array()
                    .map(|slot| driver.array(slot))
                    .expect("the planner only emits dot blocks over levels with a coordinate array");
                let mut k = Immediate::new(Operands {
                    levels: &bind.levels,
                    temps: &temps,
                    ..Operands::values(&values)
                });
                let segment = (ir[*begin as usize], ir[*end as usize]);
                let sum = segment_dot(&mut k, (*driver, coords), segment, (factors, *temp), &mut |_, r| {
                    ir[r as usize]
                });
                fr[*acc as usize] += sum;
            }
            Op::DenseDot {
                scale,
                factors,
                len,
                acc,
            } => {
                let runs = value_runs(&mut b, factors, &mut |_, r| ir[r as usize]);
                let len = len.resolve(|r| ir[r as usize]);
                fr[*acc as usize] += dense_dot(&mut b, fr[*scale as usize], &runs, len);
            }
            Op::StridedAxpy {
                rows,
                scale,
                factors,
                out: out_run,
                columns,
                deferred,
            } => {
                let reg = |r: IReg| ir[r as usize] as usize;
                let update = StridedUpdate {
                    columns: columns.as_ref().map(|c| UpdateColumns {
                        count: ir[c.count as usize].max(0) as usize,
                        out_step: reg(c.out_step),
                        steps: c.steps.iter().map(|step| step.map(reg)).collect(),
                    }),
                    rows: ir[*rows as usize].max(0) as usize,
                    scale: fr[*scale as usize],
                    out_start: reg(out_run.start),
                    out_step: reg(out_run.step),
                    factors: factors
                        .iter()
                        .map(|f| match f {
                            Strided::Run(run) => StridedFactor::Run {
                                values: values[run.operand as usize],
                                start: reg(run.start),
                                step: reg(run.step),
                            },
                            Strided::Gather {
                                operand,
                                base,
                                level,
                                start,
                                step,
                                coord_step,
                            } => StridedFactor::Gather {
                                coord_step: coord_step.map_or(1, reg),
                                values: values[*operand as usize],
                                base: reg(*base),
                                coords: format_of(bind, *level)
                                    .coordinate_view(&bind.levels[level.operand as usize][level.level as usize])
                                    .expect("the planner gathers through levels with coordinate arrays"),
                                start: reg(*start),
                                step: reg(*step),
                            },
                        })
                        .collect(),
                };
                if *deferred {
                    strided.push(update, out);
                } else {
                    update.run_rows(out, 0, update.rows);
                }
            }
            Op::StridedFlush => strided.flush(out),
            Op::BlockRowsDot {
                driver,
                blocks,
                rows,
                len,
                scale,
                factors,
                shared,
                out: out_run,
                out_block_step,
            } => {
                let (rows, n) = (run_length(&ir, rows), run_length(&ir, len));
                if rows == 0 {
                    pc += 1;
                    continue;
                }
                let reg = |r: IReg| ir[r as usize];
                let format = format_of(bind, *driver);
                let ([f], [x]) = (factors.as_slice(), shared.as_slice()) else {
                    let coords = format
                        .coordinate_array()
                        .map(|slot| driver.array(slot))
                        .expect("the planner only walks blocks of levels with a coordinate array");
                    let operands = BlockOperands::new(
                        (*driver, *format),
                        coords,
                        (factors, shared),
                        (*out_run, *out_block_step),
                    );
                    let mut k = Immediate::new(Operands::on_output(&bind.levels, &values, out));
                    // Eagerly, the loop over rows costs less than unrolling.
                    let shape = (Length::In(rows as i64), Length::In(n as i64));
                    block_rows_dot(&mut k, operands, *blocks, shape, fr[*scale as usize], &mut |_, r| {
                        reg(r)
                    });
                    pc += 1;
                    continue;
                };
                // A block times its piece of x, the common shape: loops of
                // constant length for small blocks, the sums in
                // [`block_rows_dot`]'s order.
                let storage = &bind.levels[driver.operand as usize][driver.level as usize];
                let Some(coords) = format.coordinate_view(storage) else {
                    unreachable!("the planner only walks blocks of levels with a coordinate array")
                };
                let out_step = reg(out_run.step) as usize;
                let span = rows_span(rows, out_step, 1);
                let scale = fr[*scale as usize];
                let at = |run: &crate::bytecode::BlockRun, b: i64| BlockStarts {
                    first: reg(run.start) + b * reg(run.block_step),
                    pos_step: reg(run.pos_step),
                    coord_step: reg(run.coord_step),
                };
                let (blocks_values, xs) = (values[f.operand as usize], values[x.operand as usize]);
                let row_step = reg(f.row_step) as usize;
                // The stored blocks at positions `begin..end`, in block row `b`.
                let block_row = |b: i64, (begin, end): (i64, i64), out: &mut OutputState| {
                    let dst = out.dense_range_mut((reg(out_run.start) + b * reg(*out_block_step)) as usize, span);
                    let scaled = (scale, dst, out_step);
                    let block = (blocks_values, at(f, b), row_step);
                    blocks_times_x(coords, begin..end, block, (xs, at(x, b)), (rows, n), scaled);
                };
                match *blocks {
                    BlockRows::One { begin, end } => block_row(0, (reg(begin), reg(end)), out),
                    BlockRows::Every {
                        rows: level,
                        parent,
                        first,
                        last,
                    } => {
                        let extent = bind.levels[level.operand as usize][level.level as usize].extent as i64;
                        for b_row in reg(first)..reg(last) {
                            let segment = format.pos_iter(&mut b, *driver, reg(parent) * extent + b_row);
                            block_row(b_row, segment, out);
                        }
                    }
                }
            }
            Op::DenseRowsDot {
                rows,
                len,
                scale,
                factors,
                shared,
                out: out_run,
            } => {
                let mut k = Immediate::new(Operands::on_output(&bind.levels, &values, out));
                // Eagerly, the loop over rows costs less than unrolling.
                let shape = (
                    Length::In(run_length(&ir, rows) as i64),
                    Length::In(run_length(&ir, len) as i64),
                );
                let operands = (factors.as_slice(), shared.as_slice());
                dense_rows_dot(&mut k, shape, fr[*scale as usize], operands, *out_run, &mut |_, r| {
                    ir[r as usize]
                });
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
                out: out_level,
                out_parent,
            } => {
                let coords = coordinate_array(bind, *driver);
                let format = *format_of(bind, *driver);
                let mut k = Immediate::new(Operands::on_output(&bind.levels, &values, out));
                let rows = RowsOf {
                    level: *rows,
                    parent: *parent,
                    first: *first,
                    last: *last,
                };
                rows_dot(
                    &mut k,
                    (*semiring, *every_row),
                    rows,
                    (*driver, format, coords),
                    factors,
                    (*out_level, *out_parent),
                    &mut |_, r| ir[r as usize],
                );
            }
            Op::DenseAxpy {
                scale,
                factors,
                temp,
                out: out_level,
                out_parent,
            } => {
                let mut k = Immediate::new(Operands {
                    temps: &temps,
                    ..Operands::on_output(&bind.levels, &values, out)
                });
                let row = output_row(&mut k, *out_level, ir[*out_parent as usize]);
                let temp = temp.map(|t| (k.temp_run(t), temps[t as usize].len() as i64));
                dense_axpy(&mut k, row, fr[*scale as usize], factors, temp, &mut |_, r| {
                    ir[r as usize]
                });
            }
            Op::TempAxpy { temp, scale, factors } => {
                let written = &mut temps[*temp as usize];
                let n = written.len() as i64;
                let mut k = Immediate::new(Operands {
                    levels: &bind.levels,
                    output: DenseCells::new(written, 0),
                    ..Operands::values(&values)
                });
                let target = k.output_target(0);
                dense_axpy(&mut k, (target, n), fr[*scale as usize], factors, None, &mut |_, r| {
                    ir[r as usize]
                });
            }
            Op::WorkspaceAxpy {
                driver,
                begin,
                end,
                scale,
                prefix,
            } => {
                let storage = &bind.levels[driver.operand as usize][driver.level as usize];
                let coords = format_of(bind, *driver)
                    .coordinate_view(storage)
                    .expect("the planner only emits workspace rows over levels with a coordinate view");
                let range = ir[*begin as usize] as usize..ir[*end as usize] as usize;
                out.workspace_accumulate_row(
                    &gather(&ir, prefix),
                    coords,
                    values[driver.operand as usize],
                    fr[*scale as usize],
                    range,
                );
            }
            Op::ValuesAxpy {
                driver,
                begin,
                end,
                scale,
                factors,
                map,
            } => {
                // A scaled copy reads no coordinates: its level may have none.
                let coords = coordinates_if_any(bind, *driver);
                let mut k = Immediate::new(Operands::on_output(&bind.levels, &values, out));
                let positions = (ir[*begin as usize], ir[*end as usize]);
                values_axpy(
                    &mut k,
                    (*driver, coords),
                    positions,
                    fr[*scale as usize],
                    factors,
                    *map,
                    &mut |_, r| ir[r as usize],
                );
            }
            Op::RowAxpy {
                driver,
                begin,
                end,
                scale,
                factors,
                out: out_level,
                out_parent,
            } => {
                let coords = coordinate_array(bind, *driver);
                let mut k = Immediate::new(Operands::on_output(&bind.levels, &values, out));
                let row = output_row(&mut k, *out_level, ir[*out_parent as usize]);
                let positions = (ir[*begin as usize], ir[*end as usize]);
                let reg = &mut |_: &mut Eager<'_, '_>, r: IReg| ir[r as usize];
                row_axpy(
                    &mut k,
                    (*driver, coords),
                    positions,
                    fr[*scale as usize],
                    factors,
                    row,
                    reg,
                );
            }
            Op::MergeRuns {
                runs,
                op,
                scales,
                prefix,
                shifts,
            } => {
                let [a, b] = runs.map(|r| run_of(&ir, &values, r));
                let op = combine(*op, *scales, &fr);
                out.append_merged_runs(&gather(&ir, prefix), (a, b), op, &gather(&ir, shifts));
            }
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
                let width = block.iter().map(|&b| b as usize).product::<usize>();
                let row = |level: &LevelRef, begin: &u32, end: &u32| {
                    let storage = &bind.levels[level.operand as usize][level.level as usize];
                    let coords = format_of(bind, *level)
                        .coordinate_view(storage)
                        .expect("the planner only merges rows of levels with a coordinate view");
                    let range = ir[*begin as usize] as usize..ir[*end as usize] as usize;
                    Row::of_blocks(coords, values[level.operand as usize], range, width)
                };
                let rows = (row(a, a_begin, a_end), row(b, b_begin, b_end));
                out.append_merged(&gather(&ir, prefix), rows, combine(*op, *scales, &fr), block);
            }
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
            } => crate::runtime::rows::run_rows_merge(
                bind,
                out,
                [
                    (*a_rows, ir[*a_parent as usize] as usize),
                    (*b_rows, ir[*b_parent as usize] as usize),
                ],
                ir[*first as usize] as usize..ir[*last as usize] as usize,
                combine(*op, *scales, &fr),
                &gather(&ir, prefix),
            ),
            Op::Halt => return appends.flush(out),
        }
        pc += 1;
    }
}

#[inline(always)]
/// The positions below `parent` of `level` in `bind`: its `pos_iter`, or
/// for a level iterated by coordinates, `parent * extent..` one extent on
/// (a dense level's positions; `None` for the others).
pub fn positions_below(bind: &Bindings<'_>, level: LevelRef, parent: i64) -> Option<(i64, i64)> {
    let format = format_of(bind, level);
    if format.capabilities().iteration == tessera_formats::Iteration::CoordinatePosition {
        let mut b = Immediate::new(Operands::levels(&bind.levels));
        return Some(format.pos_iter(&mut b, level, parent));
    }
    (format.kind == tessera_formats::LevelKind::Dense).then(|| {
        let extent = bind.levels[level.operand as usize][level.level as usize].extent as i64;
        (parent * extent, (parent + 1) * extent)
    })
}

/// The coordinate stored at `pos` of a first level (its `pos_access`) in
/// `bind`.
pub fn first_level_coordinate(bind: &Bindings<'_>, level: LevelRef, pos: i64) -> i64 {
    let mut b = Immediate::new(Operands::levels(&bind.levels));
    format_of(bind, level).pos_access(&mut b, level, pos, &[]).0
}

/// Appended entries not yet handed to the output: each entry's
/// coordinates, then its value's bits.
#[derive(Default)]
struct AppendBatch {
    words: Vec<i64>,
    width: usize,
}

impl AppendBatch {
    /// Entries handed over at once.
    const ENTRIES: usize = 1024;

    fn push(&mut self, ir: &[i64], coords: &Regs, value: f64, out: &mut OutputState) {
        self.push_words(coords.iter().map(|&r| ir[r as usize]), value, out);
    }

    /// [`Self::push`] for an entry's coordinates themselves.
    fn push_entry(&mut self, coords: &[i64], value: f64, out: &mut OutputState) {
        // Entries are a few words: a loop, not a call to copy memory.
        self.push_words(coords.iter().copied(), value, out);
    }

    fn push_words(&mut self, coords: impl ExactSizeIterator<Item = i64>, value: f64, out: &mut OutputState) {
        self.width = coords.len();
        // Pushed one by one: `extend` of a slice's words becomes a call to
        // copy memory, which costs more than the two or three words.
        for c in coords {
            self.words.push(c);
        }
        self.words.push(value.to_bits() as i64);
        if self.words.len() >= Self::ENTRIES * (self.width + 1) {
            self.flush(out);
        }
    }

    fn flush(&mut self, out: &mut OutputState) {
        if !self.words.is_empty() {
            out.append_entries(&self.words, self.width);
            self.words.clear();
        }
    }
}

/// The values of a dense last level's row: a factor of a dense update.
fn dense_row<'a>(bind: &Bindings<'a>, ir: &[i64], f: &crate::bytecode::DotFactor) -> &'a [f64] {
    let n = bind.levels[f.level.operand as usize][f.level.level as usize].extent;
    let b = ir[f.parent as usize] as usize * n;
    &bind.f64s(f.operand as usize)[b..b + n]
}

/// The coordinate array of a level the planner walks by position.
fn coordinate_array(bind: &Bindings<'_>, level: LevelRef) -> tessera_formats::ArrayRef {
    coordinates_if_any(bind, level).expect("the planner only walks the positions of levels with a coordinate array")
}

/// The level's coordinate array, if it has one.
fn coordinates_if_any(bind: &Bindings<'_>, level: LevelRef) -> Option<tessera_formats::ArrayRef> {
    format_of(bind, level).coordinate_array().map(|slot| level.array(slot))
}

fn format_of<'a>(bind: &Bindings<'a>, level: LevelRef) -> &'a LevelFormat {
    &bind.formats[level.operand as usize][level.level as usize]
}

/// `Σ_{c < n} Π runs[c]`: the block op [`dense_dot`] on runs of slices
/// (with scale 1, which changes no bits), for the interpreter's ops that
/// take one such dot per row ([`Op::DenseRowsDot`], a position loop's).
fn dot_of_runs(runs: &[&[f64]], n: usize) -> f64 {
    let mut k = Immediate::new(Operands::values(&[]));
    let len = Length::In(n as i64);
    match *runs {
        [x, y] => dense_dot(&mut k, 1.0, &[(x, 0), (y, 0)], len),
        _ => {
            let runs: SmallVec<[_; 3]> = runs.iter().map(|&run| (run, 0)).collect();
            dense_dot(&mut k, 1.0, &runs, len)
        }
    }
}

/// A run length's value in this run.
fn run_length(ir: &[i64], len: &crate::bytecode::RunLength) -> usize {
    match len {
        crate::bytecode::RunLength::Fixed(n) => *n as usize,
        crate::bytecode::RunLength::In(r) => ir[*r as usize].max(0) as usize,
    }
}

/// The values `rows` rows `step` apart, each `n` long, span.
fn rows_span(rows: usize, step: usize, n: usize) -> usize {
    if rows == 0 {
        0
    } else {
        (rows - 1) * step + n
    }
}

/// Where an [`Op::BlockRowsDot`] run's block starts: at `first + p *
/// pos_step + c * coord_step` for the driver's position `p` and
/// coordinate `c`.
#[derive(Clone, Copy)]
struct BlockStarts {
    first: i64,
    pos_step: i64,
    coord_step: i64,
}

impl BlockStarts {
    #[inline(always)]
    fn at(&self, p: usize, c: usize) -> usize {
        (self.first + p as i64 * self.pos_step + c as i64 * self.coord_step) as usize
    }
}

/// For each stored block at positions `range` (its coordinate read from
/// `coords`): `dst[r * out_step] += scale * Σ_k block[r * row_step + k] *
/// x[k]` for its `rows` rows of `n`. The sums run in the order of
/// [`RowsDot::add_into`], so the bits are the compiled tiers'; small
/// square blocks get loops of constant length.
fn blocks_times_x(
    coords: &IndexArray,
    range: std::ops::Range<i64>,
    (blocks, block_at, row_step): (&[f64], BlockStarts, usize),
    (x, x_at): (&[f64], BlockStarts),
    (rows, n): (usize, usize),
    (scale, dst, out_step): (f64, &mut [f64], usize),
) {
    #[inline(always)]
    fn dot<const N: usize>(row: &[f64], x: &[f64]) -> f64 {
        let (row, x): (&[f64; N], &[f64; N]) = (row[..N].try_into().unwrap(), x[..N].try_into().unwrap());
        let mut sum = 0.0;
        for k in 0..N {
            sum += row[k] * x[k];
        }
        sum
    }
    fn run<const N: usize>(
        coord: impl Fn(usize) -> usize,
        range: std::ops::Range<usize>,
        (blocks, block_at, row_step): (&[f64], BlockStarts, usize),
        (x, x_at): (&[f64], BlockStarts),
        (rows, n): (usize, usize),
        (scale, dst, out_step): (f64, &mut [f64], usize),
    ) {
        for p in range {
            let c = coord(p);
            let (block, x) = (&blocks[block_at.at(p, c)..], &x[x_at.at(p, c)..]);
            for r in 0..rows {
                let row = &block[r * row_step..];
                let sum = if N > 0 {
                    dot::<N>(row, x)
                } else {
                    row[..n].iter().zip(&x[..n]).fold(0.0, |sum, (a, b)| sum + a * b)
                };
                dst[r * out_step] += scale * sum;
            }
        }
    }
    fn by_width(
        coord: impl Fn(usize) -> usize,
        range: std::ops::Range<usize>,
        blocks: (&[f64], BlockStarts, usize),
        x: (&[f64], BlockStarts),
        sizes: (usize, usize),
        out: (f64, &mut [f64], usize),
    ) {
        match sizes.1 {
            2 => run::<2>(coord, range, blocks, x, sizes, out),
            3 => run::<3>(coord, range, blocks, x, sizes, out),
            4 => run::<4>(coord, range, blocks, x, sizes, out),
            8 => run::<8>(coord, range, blocks, x, sizes, out),
            _ => run::<0>(coord, range, blocks, x, sizes, out),
        }
    }
    let range = range.start as usize..range.end as usize;
    let blocks = (blocks, block_at, row_step);
    let out = (scale, dst, out_step);
    match coords {
        IndexArray::U32(c) => by_width(|p| c[p] as usize, range, blocks, (x, x_at), (rows, n), out),
        IndexArray::U64(c) => by_width(|p| c[p] as usize, range, blocks, (x, x_at), (rows, n), out),
        IndexArray::I64(c) => by_width(|p| c[p] as usize, range, blocks, (x, x_at), (rows, n), out),
    }
}
