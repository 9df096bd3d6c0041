//! Row dots on a device: the three ways a sparse matrix-vector product
//! (any semiring, any number of dense factors) spreads over work-items.
//!
//! A program whose whole chunk is one [`Op::RowsDot`] over the chunk's
//! rows — SpMV and its kin, over any level format with positions — gets
//! two kernels besides the one-work-item-per-row kernel every program has:
//!
//! - **lanes per row** (a group of `w` work-items per row, `w` a power of
//!   two up to 64): lane `l` combines the positions `begin + l`,
//!   `begin + l + w`, ..., and the lanes' partials meet in a fixed tree in
//!   local memory. Neighbouring work-items read neighbouring positions: the
//!   reads of a GPU's subgroup coalesce.
//! - **a split over positions** for skewed rows: each work-item takes the
//!   positions `[k * piece, (k + 1) * piece)` of the driver and combines
//!   the rows it meets; a row that crosses a piece's edge leaves a partial
//!   (a carry) per piece, and the host adds each row's carries in position
//!   order. No row holds a work-item longer than a piece.
//!
//! The mapping is chosen at a run from the shape of the whole driver (its
//! rows' mean and longest length, [`RowsShape`], kept per version of the
//! tensor), never from the chunk, and pieces start at multiples of the
//! piece size: so a row is combined in the same order whatever the
//! chunking, and results are the same bits for any number of threads.
//! Rows summed by lanes, and rows a split cuts, combine in another order
//! than the other tiers' (equal within rounding); the other rows give the
//! same bits.

use tessera_engine::bytecode::{Op, Program};
use tessera_engine::interp::{positions_below, Bindings};
use tessera_engine::notation::Semiring;
use tessera_formats::{LevelRef, ValueType};

use super::ctext::CText;
use super::source::{combine, Writer};

/// The kernel of [`RowMapping::Lanes`].
pub(crate) const LANES_KERNEL: &str = "tessera_rows_lanes";
/// The kernel of [`RowMapping::Split`].
pub(crate) const SPLIT_KERNEL: &str = "tessera_rows_split";

/// How a row-dot kernel's rows spread over work-items.
///
/// ```
/// use tessera_tiers::opencl::RowMapping;
/// assert_eq!(RowMapping::default(), RowMapping::Auto);
/// assert!(RowMapping::Lanes(8).is_valid() && !RowMapping::Lanes(3).is_valid());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RowMapping {
    /// Chosen at each run from the rows' lengths and the device.
    #[default]
    Auto,
    /// One work-item per row.
    ItemPerRow,
    /// A group of this many work-items per row (a power of two, at most 64).
    Lanes(u32),
    /// Each work-item takes this many positions of the driver.
    Split { piece: u32 },
}

impl RowMapping {
    /// Whether the mapping can run: lanes a power of two up to a work-group
    /// (64), pieces of at least one position.
    pub fn is_valid(self) -> bool {
        match self {
            RowMapping::Lanes(w) => w.is_power_of_two() && w as usize <= super::kernel::WORK_GROUP,
            RowMapping::Split { piece } => piece > 0,
            RowMapping::Auto | RowMapping::ItemPerRow => true,
        }
    }
}

/// A program that is one row dot over its chunk: what the row kernels and
/// the host need of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RowsKernel {
    /// Where the chunk op is: the ops before it set constants only.
    chunk: usize,
    semiring: Semiring,
    every_row: bool,
    rows: LevelRef,
    driver: LevelRef,
    /// The rows' parent position and the output's, constants of the
    /// program.
    parent: (u32, i64),
    out: LevelRef,
    out_parent: (u32, i64),
}

impl RowsKernel {
    /// The row dot `program` is, if it is one: constants, the chunk, one
    /// [`Op::RowsDot`] over the chunk's rows, and the end; in `f64`.
    pub fn of(program: &Program) -> Option<RowsKernel> {
        use tessera_engine::bytecode::ChunkOutput;
        let chunking = program.chunking.as_ref()?;
        if chunking.output != ChunkOutput::DenseRows || chunking.positions.is_some() {
            return None;
        }
        if program.value_type != ValueType::F64 {
            return None;
        }
        let chunk = program.ops.iter().position(|op| matches!(op, Op::Chunk { .. }))?;
        // Registers start at 0; the ops before the chunk set constants.
        let constant = |reg: u32| {
            program.ops[..chunk]
                .iter()
                .rev()
                .find_map(|op| match *op {
                    Op::IConst { dst, value } if dst == reg => Some(value),
                    _ => None,
                })
                .unwrap_or(0)
        };
        if !program.ops[..chunk]
            .iter()
            .all(|op| matches!(op, Op::IConst { .. } | Op::BConst { .. } | Op::FConst { .. }))
        {
            return None;
        }
        let [Op::Chunk { begin, end }, Op::RowsDot {
            semiring,
            every_row,
            rows,
            parent,
            first,
            last,
            driver,
            out,
            out_parent,
            ..
        }, Op::Halt] = &program.ops[chunk..]
        else {
            return None;
        };
        if (first, last) != (begin, end) || [*parent, *out_parent].iter().any(|r| r == begin || r == end) {
            return None;
        }
        Some(RowsKernel {
            chunk,
            semiring: *semiring,
            every_row: *every_row,
            rows: *rows,
            driver: *driver,
            parent: (*parent, constant(*parent)),
            out: *out,
            out_parent: (*out_parent, constant(*out_parent)),
        })
    }

    /// The inputs whose values the kernel reads: those of the driver and of
    /// the dense factors.
    fn operands(&self, program: &Program) -> Vec<u32> {
        let mut operands = vec![self.driver.operand];
        if let Some(Op::RowsDot { factors, .. }) = program.ops.get(self.chunk + 1) {
            operands.extend(factors.iter().map(|f| f.operand));
        }
        operands
    }

    /// The operand whose version keys the rows' shape.
    pub fn driver_operand(&self) -> usize {
        self.driver.operand as usize
    }

    /// Writes the lanes and split kernels' bodies, each into its own text
    /// (taken from `c`, which the caller has emptied), or nothing when an
    /// input is not held in `f64`.
    pub fn write(&self, writer: &mut Writer<'_>, c: &mut CText) -> Option<[String; 2]> {
        let program = writer.program;
        if self
            .operands(program)
            .iter()
            .any(|&k| c.value_type(k) != ValueType::F64)
        {
            return None;
        }
        self.lanes(writer, c);
        let lanes = std::mem::take(&mut c.code);
        self.split(writer, c);
        let split = std::mem::take(&mut c.code);
        Some([lanes, split])
    }

    /// The ops before the chunk (constants) and the dot's reads.
    fn prologue(&self, writer: &mut Writer<'_>, c: &mut CText) -> Option<super::source::RowDot> {
        c.line("__global double* restrict out = out_all;");
        writer.declare_registers(c);
        for op in &writer.program.ops[..self.chunk] {
            writer.op(c, op);
        }
        let Some(Op::RowsDot { factors, .. }) = writer.program.ops.get(self.chunk + 1) else {
            return None;
        };
        writer.row_dot(c, self.semiring, self.driver, factors)
    }

    /// `split` work-items per row, `64 / split` rows per work-group; every
    /// item of a group meets the same barriers, whatever its row holds.
    fn lanes(&self, writer: &mut Writer<'_>, c: &mut CText) {
        let Some(dot) = self.prologue(writer, c) else {
            return;
        };
        let group = super::kernel::WORK_GROUP;
        let out_at = writer.output_row(c, self.out, self.out_parent.0);
        c.line(format!("__local double lane_sums[{group}];"));
        c.line("const long lanes = split;");
        c.line("const long lid = (long)get_local_id(0);");
        c.line("const long lane = lid % lanes;");
        c.line(format!("const long per_group = {group}L / lanes;"));
        c.line("const long units = max(chunk_end - chunk_begin, 0L);");
        c.open(
            "for (long base = (long)get_group_id(0) * per_group; base < units; \
             base += (long)get_num_groups(0) * per_group)",
        );
        c.line("const long unit = base + lid / lanes;");
        c.line("const long row = chunk_begin + unit;");
        c.line("bool stored = false;");
        let identity = super::ctext::double_literal(self.semiring.plus().identity());
        c.line(format!("double partial = {identity};"));
        c.open("if (unit < units)");
        let (b, e) = writer.row_positions(c, self.rows, self.parent.0, self.driver, "row");
        c.line(format!("stored = {b} < {e};"));
        let from = c.local("long", format!("{b} + lane"));
        let sum = dot.sum(c, &from, &e, "lanes");
        c.line(format!("partial = {sum};"));
        c.close();
        c.line("lane_sums[lid] = partial;");
        c.line("barrier(CLK_LOCAL_MEM_FENCE);");
        c.open("for (long stride = lanes / 2; stride > 0; stride /= 2)");
        let pair = combine(self.semiring.plus(), "lane_sums[lid]", "lane_sums[lid + stride]");
        c.line(format!("if (lane < stride) lane_sums[lid] = {pair};"));
        c.line("barrier(CLK_LOCAL_MEM_FENCE);");
        c.close();
        let written = if self.every_row { "true" } else { "stored" };
        c.line(format!(
            "if (lane == 0 && unit < units && {written}) out[{out_at} + row] += lane_sums[lid];"
        ));
        c.line("barrier(CLK_LOCAL_MEM_FENCE);");
        c.close();
    }

    /// One work-item per piece of `split` positions, pieces aligned to
    /// multiples of it. A row is the piece's where it begins (an empty row
    /// at the end is the last piece's); the piece's first row may have
    /// begun before it (its head) and its last may go on after it (its
    /// tail): those two leave carries.
    fn split(&self, writer: &mut Writer<'_>, c: &mut CText) {
        let Some(dot) = self.prologue(writer, c) else {
            return;
        };
        let out_at = writer.output_row(c, self.out, self.out_parent.0);
        let (rows, parent, driver) = (self.rows, self.parent.0, self.driver);
        c.line("const long first = chunk_begin, last = chunk_end;");
        c.line("if (last <= first) return;");
        let (start, _) = writer.row_positions(c, rows, parent, driver, "first");
        let (_, stop) = writer.row_positions(c, rows, parent, driver, "last - 1");
        c.line(format!("const long start = {start}, stop = {stop};"));
        c.line("const long k0 = start / split;");
        c.line("const long pieces = stop > start ? (stop + split - 1) / split - k0 : 1;");
        c.open("for (long unit = (long)get_global_id(0); unit < pieces; unit += (long)get_global_size(0))");
        c.line("const long lo = max((k0 + unit) * split, start);");
        c.line("const long hi = min((k0 + unit + 1) * split, stop);");
        c.line("const bool last_piece = unit == pieces - 1;");
        c.line("carry_rows[2 * unit] = -1; carry_rows[2 * unit + 1] = -1;");
        // The first row beginning at or after `lo`.
        c.line("long low = first, high = last;");
        c.open("while (low < high)");
        c.line("const long mid = low + (high - low) / 2;");
        let (mid_begin, _) = writer.row_positions(c, rows, parent, driver, "mid");
        c.line(format!("if ({mid_begin} < lo) low = mid + 1; else high = mid;"));
        c.close();
        c.line("long row = low;");
        c.open("if (row > first)");
        let (_, head_end) = writer.row_positions(c, rows, parent, driver, "row - 1");
        c.open(format!("if ({head_end} > lo)"));
        let end = c.local("long", format!("min({head_end}, hi)"));
        let sum = dot.sum(c, "lo", &end, "1");
        c.line(format!("carry_rows[2 * unit] = row - 1; carry_sums[2 * unit] = {sum};"));
        c.close();
        c.close();
        c.open("for (; row < last; row++)");
        let (b, e) = writer.row_positions(c, rows, parent, driver, "row");
        c.line(format!("if (!({b} < hi || (last_piece && {b} <= hi))) break;"));
        let end = c.local("long", format!("min({e}, hi)"));
        let sum = dot.sum(c, &b, &end, "1");
        c.open(format!("if ({e} > hi)"));
        c.line(format!(
            "carry_rows[2 * unit + 1] = row; carry_sums[2 * unit + 1] = {sum};"
        ));
        c.line("break;");
        c.close();
        let written = if self.every_row {
            "true".to_string()
        } else {
            format!("{b} < {e}")
        };
        c.line(format!("if ({written}) out[{out_at} + row] += {sum};"));
        c.close();
        c.close();
    }

    /// The shape of the driver's rows below the program's parent: every
    /// row of the rows level, not the chunk's, so that every chunk of a
    /// run chooses the same mapping.
    pub fn shape(&self, bind: &Bindings<'_>) -> Option<RowsShape> {
        let rows = bind.levels[self.rows.operand as usize][self.rows.level as usize].extent as i64;
        let base = self.parent.1 * rows;
        let mut shape = RowsShape {
            rows,
            positions: 0,
            longest: 0,
            contiguous: true,
        };
        let mut previous_end = None;
        for row in 0..rows {
            let (b, e) = positions_below(bind, self.driver, base + row)?;
            shape.positions += (e - b).max(0);
            shape.longest = shape.longest.max(e - b);
            shape.contiguous &= previous_end.is_none_or(|end| end == b) && b <= e;
            previous_end = Some(e);
        }
        Some(shape)
    }

    /// The pieces of `piece` positions a split of the run's chunk has: as
    /// the kernel counts them, from the multiple of `piece` at or before
    /// the chunk's first position.
    pub fn pieces(&self, bind: &Bindings<'_>, piece: i64) -> Option<usize> {
        let (first, last) = bind.chunk;
        if last <= first {
            return Some(0);
        }
        let base = self.parent.1 * bind.levels[self.rows.operand as usize][self.rows.level as usize].extent as i64;
        let (start, _) = positions_below(bind, self.driver, base + first)?;
        let (_, stop) = positions_below(bind, self.driver, base + last - 1)?;
        let k0 = start / piece;
        Some(if stop > start {
            ((stop + piece - 1) / piece - k0) as usize
        } else {
            1
        })
    }

    /// Adds the carries a split left (a row and its partial per piece's
    /// head and tail, `-1` for none) to the output, each row's combined in
    /// position order first.
    pub fn add_carries(&self, bind: &Bindings<'_>, values: &mut [f64], out_base: usize, rows: &[i64], sums: &[f64]) {
        let extent = bind.levels[self.out.operand as usize][self.out.level as usize].extent as i64;
        let at = |row: i64| (self.out_parent.1 * extent + row) as usize - out_base;
        let plus = self.semiring.plus();
        let mut current: Option<(i64, f64)> = None;
        for (&row, &sum) in rows.iter().zip(sums).filter(|(&row, _)| row >= 0) {
            current = match current {
                Some((r, total)) if r == row => Some((r, plus.combine(total, sum))),
                Some((r, total)) => {
                    values[at(r)] += total;
                    Some((row, sum))
                }
                None => Some((row, sum)),
            };
        }
        if let Some((r, total)) = current {
            values[at(r)] += total;
        }
    }
}

/// The lengths of a driver's rows: what the mapping is chosen from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RowsShape {
    pub rows: i64,
    pub positions: i64,
    pub longest: i64,
    /// Each row's positions follow the last's (a compressed level): a
    /// split over positions needs it.
    pub contiguous: bool,
}

/// A row this much longer than the mean (and at least
/// [`SPLIT_LONGEST`] positions) would hold one work-item, or one group of
/// lanes, far longer than the rest: the positions are split instead.
const SKEW: i64 = 16;
const SPLIT_LONGEST: i64 = 1024;
/// Positions per work-item of a split: a few hundred, as merge-based SpMV
/// gives each thread.
const SPLIT_PIECE: u32 = 256;
/// Mean row length from which a GPU gives each row a group of lanes.
const LANES_FROM: i64 = 4;

impl RowsShape {
    /// The mapping for rows of this shape on a GPU (`gpu`) or a CPU device.
    /// A CPU device runs a work-item's loop fastest: on PoCL (two cores)
    /// lanes measured 9-20x and splits 1.1-1.4x one work-item per row, even
    /// on a row holding two thirds of the positions, so it keeps that.
    ///
    /// The same shape always gives the same mapping.
    pub fn mapping(&self, gpu: bool) -> RowMapping {
        if !gpu {
            return RowMapping::ItemPerRow;
        }
        let mean = self.positions / self.rows.max(1);
        if self.contiguous && self.longest >= SPLIT_LONGEST && self.longest >= SKEW * mean.max(1) {
            return RowMapping::Split { piece: SPLIT_PIECE };
        }
        if mean >= LANES_FROM {
            // The largest power of two not above the mean, up to a GPU's
            // 32-wide subgroup.
            let lanes = 1u32 << (63 - mean.leading_zeros()).min(5);
            return RowMapping::Lanes(lanes);
        }
        RowMapping::ItemPerRow
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(rows: i64, positions: i64, longest: i64) -> RowsShape {
        RowsShape {
            rows,
            positions,
            longest,
            contiguous: true,
        }
    }

    #[test]
    fn skewed_rows_split_and_long_rows_get_lanes_on_a_gpu() {
        // A stencil: five per row.
        assert_eq!(shape(1000, 5000, 5).mapping(true), RowMapping::Lanes(4));
        assert_eq!(shape(1000, 5000, 5).mapping(false), RowMapping::ItemPerRow);
        // Long rows: a full subgroup each.
        assert_eq!(shape(100, 100_000, 1500).mapping(true), RowMapping::Lanes(32));
        // Short rows: one item each.
        assert_eq!(shape(1000, 2000, 3).mapping(true), RowMapping::ItemPerRow);
        // One row of 100k among short ones splits on a GPU; a CPU device
        // keeps one work-item per row.
        let skewed = shape(10_000, 130_000, 100_000);
        assert_eq!(skewed.mapping(true), RowMapping::Split { piece: SPLIT_PIECE });
        assert_eq!(skewed.mapping(false), RowMapping::ItemPerRow);
        // A split needs each row's positions to follow the last's.
        let scattered = RowsShape {
            contiguous: false,
            ..skewed
        };
        assert_eq!(scattered.mapping(true), RowMapping::Lanes(8));
        assert_eq!(shape(0, 0, 0).mapping(true), RowMapping::ItemPerRow);
    }
}
