//! Sparse outputs on the device, in two phases.
//!
//! A kernel that writes entries (appends, merged rows, flushed
//! workspaces) runs twice over the same units of work: first counting each
//! unit's entries (`fill` is 0), then, once the host has turned the counts
//! into offsets, writing each entry's coordinates and value at its unit's
//! offset (`fill` is 1). Units are rows of the outer loop taken in order,
//! so the entries come back in the order one thread would append them,
//! and the runtime assembles them as it assembles any run's.
//!
//! A workspace is dense and per work-item: its values, the bitmaps and the
//! list of keys set that every tier keeps (`block_ops::workspace_add`),
//! which a flush sorts (unless the output's level is unordered) and
//! drains.

use tessera_engine::block_ops::{workspace_add, workspace_key, workspace_row, KernelBuilder};
use tessera_engine::bytecode::CoordinateRun;
use tessera_engine::runtime::rows::RowOp;
use tessera_formats::{Builder, Level, LevelRef};

use super::ctext::{CText, CVal};
use super::source::{freg, reg, Writer};

impl Writer<'_> {
    /// Writes one entry: its coordinates and value at the unit's next
    /// position in the fill phase; counted in both.
    pub(super) fn append(&self, c: &mut CText, coords: &[String], value: &str) {
        let Some(width) = self.entries.width else {
            c.fail("the program appends without a width");
            return;
        };
        if coords.len() != width {
            c.fail("the program's entries disagree on their coordinates");
            return;
        }
        c.open("if (fill)");
        c.line("const long entry_at = offsets[unit] + appended;");
        for (k, coord) in coords.iter().enumerate() {
            c.line(format!("entry_coords[entry_at * {width} + {k}] = {coord};"));
        }
        c.line(format!("entry_values[entry_at] = {value};"));
        c.close();
        c.line("appended++;");
    }

    /// Merges two ordered rows with `op` and appends the result below
    /// `prefix`, with the values `runtime::rows::merge` computes: an entry
    /// in one row only is combined with `0.0`, so zeros keep their signs.
    pub(super) fn merge_rows(
        &self,
        c: &mut CText,
        rows: [(LevelRef, u32, u32); 2],
        op: MergeOp,
        prefix: &[u32],
        block: &[u32],
    ) {
        let [(a, a_begin, a_end), (b, b_begin, b_end)] = rows;
        let prefix: Vec<String> = prefix.iter().map(|&r| reg(r)).collect();
        if !block.is_empty() {
            let rows = [(a, reg(a_begin), reg(a_end)), (b, reg(b_begin), reg(b_end))];
            return self.merge_blocks(c, rows, op, &prefix, block);
        }
        self.merge(
            c,
            [(a, reg(a_begin), reg(a_end)), (b, reg(b_begin), reg(b_end))],
            op,
            &prefix,
        );
    }

    /// Merges two runs of consecutive coordinates with `op` (the union for a
    /// sum or difference, the intersection for a product) and appends each
    /// merged coordinate below `prefix`, the levels below it at the
    /// coordinate plus `shifts`, with the values `runtime::rows::merge_runs`
    /// computes: an entry in one run only is combined with `0.0`.
    pub(super) fn merge_runs(
        &self,
        c: &mut CText,
        runs: &[CoordinateRun; 2],
        op: MergeOp,
        prefix: &[u32],
        shifts: &[u32],
    ) {
        c.open("");
        let [a, b] = runs;
        let (av, bv) = (self.values(c, a.values.operand), self.values(c, b.values.operand));
        c.line(format!(
            "const long a_begin = {}, a_end = {}, a_start = {};",
            reg(a.begin),
            reg(a.end),
            reg(a.values.start)
        ));
        c.line(format!(
            "const long b_begin = {}, b_end = {}, b_start = {};",
            reg(b.begin),
            reg(b.end),
            reg(b.values.start)
        ));
        c.line("const int a_rows = a_begin < a_end, b_rows = b_begin < b_end;");
        if op.0.over_union() {
            c.line("const long from = a_rows && b_rows ? min(a_begin, b_begin) : (a_rows ? a_begin : b_begin);");
            c.line("const long to = a_rows && b_rows ? max(a_end, b_end) : (a_rows ? a_end : b_end);");
        } else {
            c.line("const long from = max(a_begin, b_begin), to = min(a_end, b_end);");
        }
        c.open("for (long x = from; x < to; x++)");
        c.line("const int in_a = a_begin <= x && x < a_end, in_b = b_begin <= x && x < b_end;");
        c.open("if (in_a || in_b)");
        let x = format!("(in_a ? {av}[a_start + x - a_begin] : 0.0)");
        let y = format!("(in_b ? {bv}[b_start + x - b_begin] : 0.0)");
        let value = combined(op, &x, &y);
        let entry: Vec<String> = prefix
            .iter()
            .map(|&r| reg(r))
            .chain(std::iter::once("x".to_string()))
            .chain(shifts.iter().map(|&r| format!("x + {}", reg(r))))
            .collect();
        self.append(c, &entry, &value);
        c.close();
        c.close();
        c.close();
    }

    /// Every row `row` in `first..last` of [`Writer::merge_rows`]: the rows
    /// below the dense levels `a` and `b` (at `parent * extent + row`)
    /// merged and appended below `prefix ++ [row]`.
    pub(super) fn rows_merge(
        &self,
        c: &mut CText,
        rows: [(LevelRef, u32); 2],
        (first, last): (u32, u32),
        op: MergeOp,
        prefix: &[u32],
    ) {
        c.open("");
        c.open(format!("for (long row = r{first}; row < r{last}; row++)"));
        let mut bounds = Vec::new();
        for (level, parent) in rows {
            let below = LevelRef::new(level.operand as usize, level.level as usize + 1);
            let Some(format) = self.format(c, below) else {
                c.close();
                c.close();
                return;
            };
            let extent = self.extent(c, level);
            let position = c.local("long", format!("r{parent} * {extent} + row"));
            let position = c.val(position);
            let (begin, end) = format.pos_iter(c, below, position);
            bounds.push((below, c.text(begin), c.text(end)));
        }
        let prefix: Vec<String> = prefix.iter().map(|&r| reg(r)).chain(["row".to_string()]).collect();
        let [a, b]: [(LevelRef, String, String); 2] = bounds.try_into().expect("two operands");
        self.merge(c, [a, b], op, &prefix);
        c.close();
        c.close();
    }

    /// The merge of [`Writer::merge_rows`], its row bounds and output
    /// prefix given as C expressions.
    fn merge(&self, c: &mut CText, rows: [(LevelRef, String, String); 2], op: MergeOp, prefix: &[String]) {
        c.open("");
        let [(a, a_begin, a_end), (b, b_begin, b_end)] = rows;
        let (ac, av) = (self.coordinates(c, a), self.values(c, a.operand));
        let (bc, bv) = (self.coordinates(c, b), self.values(c, b.operand));
        let entry = |coord: &str| -> Vec<String> {
            prefix
                .iter()
                .cloned()
                .chain(std::iter::once(coord.to_string()))
                .collect()
        };
        c.line(format!("long p = {a_begin}, q = {b_begin};"));
        c.line(format!("const long p_end = {a_end}, q_end = {b_end};"));
        c.open("while (p < p_end && q < q_end)");
        c.line(format!("const long x = (long){ac}[p], y = (long){bc}[q];"));
        if op.0.over_union() {
            c.line("long merged; double value;");
            c.line(format!(
                "if (x == y) {{ merged = x; value = {}; }}",
                combined(op, &format!("{av}[p]"), &format!("{bv}[q]"))
            ));
            c.line(format!(
                "else if (x < y) {{ merged = x; value = {}; }}",
                combined(op, &format!("{av}[p]"), "0.0")
            ));
            c.line(format!(
                "else {{ merged = y; value = {}; }}",
                combined(op, "0.0", &format!("{bv}[q]"))
            ));
            self.append(c, &entry("merged"), "value");
        } else {
            c.open("if (x == y)");
            self.append(c, &entry("x"), &combined(op, &format!("{av}[p]"), &format!("{bv}[q]")));
            c.close();
        }
        c.line("p += x <= y;");
        c.line("q += y <= x;");
        c.close();
        if op.0.over_union() {
            c.open("for (; p < p_end; p++)");
            self.append(
                c,
                &entry(&format!("(long){ac}[p]")),
                &combined(op, &format!("{av}[p]"), "0.0"),
            );
            c.close();
            c.open("for (; q < q_end; q++)");
            self.append(
                c,
                &entry(&format!("(long){bc}[q]")),
                &combined(op, "0.0", &format!("{bv}[q]")),
            );
            c.close();
        }
        c.close();
    }

    /// [`Writer::merge_rows`] of rows whose coordinates each hold a dense
    /// block of `block` sizes (BCSR's block rows): each merged block's
    /// entries appended in the block's order, with the values
    /// `runtime::rows::merge_blocks` computes.
    fn merge_blocks(
        &self,
        c: &mut CText,
        rows: [(LevelRef, String, String); 2],
        op: MergeOp,
        prefix: &[String],
        block: &[u32],
    ) {
        c.open("");
        let [(a, a_begin, a_end), (b, b_begin, b_end)] = rows;
        let (ac, av) = (self.coordinates(c, a), self.values(c, a.operand));
        let (bc, bv) = (self.coordinates(c, b), self.values(c, b.operand));
        let width: u64 = block.iter().map(|&s| u64::from(s)).product();
        c.line(format!("long p = {a_begin}, q = {b_begin};"));
        c.line(format!("const long p_end = {a_end}, q_end = {b_end};"));
        c.open(if op.0.over_union() {
            "while (p < p_end || q < q_end)"
        } else {
            "while (p < p_end && q < q_end)"
        });
        c.line("const int in_a = p < p_end, in_b = q < q_end;");
        c.line(format!(
            "const long x = in_a ? (long){ac}[p] : 0, y = in_b ? (long){bc}[q] : 0;"
        ));
        c.line("const int take_a = in_a && (!in_b || x <= y), take_b = in_b && (!in_a || y <= x);");
        c.line("const long merged = take_a ? x : y;");
        c.open(if op.0.over_union() { "" } else { "if (take_a && take_b)" });
        c.open(format!("for (long t = 0; t < {width}; t++)"));
        c.line(format!("const double u = take_a ? {av}[p * {width} + t] : 0.0;"));
        c.line(format!("const double v = take_b ? {bv}[q * {width} + t] : 0.0;"));
        let mut entry: Vec<String> = prefix.to_vec();
        entry.push("merged".into());
        let mut stride: u64 = width;
        for &size in block {
            stride /= u64::from(size);
            entry.push(format!("(t / {stride}) % {size}"));
        }
        self.append(c, &entry, &combined(op, "u", "v"));
        c.close();
        c.close();
        c.line("p += take_a;");
        c.line("q += take_b;");
        c.close();
        c.close();
    }

    /// Adds a value into the workspace ([`workspace_add`]).
    pub(super) fn workspace_accumulate(&self, c: &mut CText, coords: &[u32], value: u32) {
        c.open("");
        let coords: Vec<CVal> = coords.iter().map(|&r| c.val(reg(r))).collect();
        let key = workspace_key(c, &coords, true);
        let x = c.val(freg(value));
        workspace_add(c, key, x);
        c.close();
    }

    /// For each position `p` of the driver in `begin..end`: the workspace
    /// at `prefix ++ [coordinate]` gets `scale * value[p]`
    /// ([`workspace_row`]).
    pub(super) fn workspace_axpy(
        &self,
        c: &mut CText,
        (driver, begin, end): (LevelRef, u32, u32),
        scale: u32,
        prefix: &[u32],
    ) {
        let Some(format) = self.format(c, driver) else {
            return;
        };
        let Some(slot) = format.coordinate_array() else {
            return c.fail("a workspace row is read from a level without a coordinate array");
        };
        // Refuses values of an operand that is not an input.
        self.values(c, driver.operand);
        c.open("");
        let prefix: Vec<CVal> = prefix.iter().map(|&r| c.val(reg(r))).collect();
        let base = workspace_key(c, &prefix, false);
        let coords = c.coordinates(driver.array(slot));
        let zero = c.int(0);
        let values = c.value_run(driver.operand, zero);
        let (begin, end, scale) = (c.val(reg(begin)), c.val(reg(end)), c.val(freg(scale)));
        workspace_row(c, (coords, values), (begin, end), scale, base);
        c.close();
    }

    /// Appends the workspace's entries below `prefix`, in order of their
    /// coordinates (or, unless `ws_sorted`, as they were first set), and
    /// clears it.
    pub(super) fn workspace_flush(&self, c: &mut CText, prefix: &[u32]) {
        let Some(dims) = self.entries.workspace else {
            // Nothing adds to the workspace: it holds no entries.
            return;
        };
        c.open("");
        let sort = if self.local_workspace {
            "t_sort_keys_local"
        } else {
            "t_sort_keys"
        };
        c.line(format!("if (ws_sorted) {sort}(wst, ws_count);"));
        c.open("for (long t = 0; t < ws_count; t++)");
        c.line("const long key = wst[t];");
        let mut coords: Vec<String> = prefix.iter().map(|&r| reg(r)).collect();
        if dims == 1 {
            coords.push("key".into());
        } else {
            c.line("long rest = key;");
            for k in 0..dims {
                c.line(format!("const long w{k} = rest / ws_strides[{k}];"));
                c.line(format!("rest -= w{k} * ws_strides[{k}];"));
                coords.push(format!("w{k}"));
            }
        }
        c.line("const double value = wsv[key];");
        c.line("wsv[key] = 0.0;");
        c.line("wsk[key >> 6] = 0;");
        self.append(c, &coords, "value");
        c.close();
        c.line("ws_count = 0;");
        c.close();
    }
}

/// A row merge's op and its scales' registers.
pub(super) type MergeOp = (RowOp, Option<[u32; 2]>);

/// The C expression of `x op y`, each side first multiplied by its scale
/// (as `runtime::rows::Combine` computes it).
fn combined((op, scales): MergeOp, x: &str, y: &str) -> String {
    let (x, y) = match scales {
        Some([sa, sb]) => (format!("{} * ({x})", freg(sa)), format!("{} * ({y})", freg(sb))),
        None => (x.to_string(), y.to_string()),
    };
    match op {
        RowOp::Add => format!("{x} + {y}"),
        RowOp::Sub => format!("{x} - {y}"),
        RowOp::Mul => format!("{x} * {y}"),
        RowOp::Max => format!("t_max({x}, {y})"),
        RowOp::Min => format!("t_min({x}, {y})"),
    }
}
