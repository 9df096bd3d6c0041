//! Where a kernel's results go: a dense array, a streaming assembler that
//! appends entries in order through the output levels' assembly functions,
//! or a workspace that collects out-of-order results and hands them over in
//! order.

use tessera_formats::memory::advise_huge_pages;
use tessera_formats::{
    reserve_moving_elements, Assembly, CoordRun, CoordinateList, CoordinateRelation, Format, Immediate, IndexArray,
    Level, LevelFormat, LevelKind, LevelRef, LevelStorage, Projection, Split, StorageResolver, Tensor, TensorRef,
    MAX_POSITIONS,
};

use super::rows::{with_combine, Combine, Row, RowsBelow, Run};
use super::workspace::{DenseWorkspaceParts, Workspace};
use crate::error::{EngineError, Result};
use crate::words::Adder;

/// The output of one kernel run.
pub enum OutputState {
    Dense {
        shape: Vec<usize>,
        format: Format,
        values: Vec<f64>,
    },
    Append {
        assembler: Assembler,
        workspace: Option<Workspace>,
    },
    Packed {
        shape: Vec<usize>,
        format: Format,
        entries: CoordinateList<f64>,
        workspace: Workspace,
    },
    /// The rows of a dense output one chunk of a parallel run writes.
    Window(DenseWindow),
}

/// Positions `base..base + len` of a dense output's values, written by one
/// chunk of a parallel run while other chunks write theirs.
pub struct DenseWindow {
    ptr: *mut f64,
    base: usize,
    len: usize,
}

// SAFETY: a window is made from a `&mut` sub-slice that no other window
// overlaps ([`DenseWindow::split`]), and is only used while that borrow
// lasts; moving it to another thread moves that exclusive access.
unsafe impl Send for DenseWindow {}

impl DenseWindow {
    /// Splits `values` at `cuts` (increasing positions) into consecutive
    /// windows: `0..cuts[0]`, `cuts[0]..cuts[1]`, ..., the last to the end.
    /// The windows must not outlive the borrow of `values` (the caller
    /// keeps them inside it).
    pub fn split(values: &mut [f64], cuts: &[usize]) -> Vec<DenseWindow> {
        let mut windows = Vec::with_capacity(cuts.len() + 1);
        let mut rest = values;
        let mut base = 0;
        for &cut in cuts {
            let (head, tail) = rest.split_at_mut(cut - base);
            windows.push(DenseWindow {
                ptr: head.as_mut_ptr(),
                base,
                len: head.len(),
            });
            base = cut;
            rest = tail;
        }
        windows.push(DenseWindow {
            ptr: rest.as_mut_ptr(),
            base,
            len: rest.len(),
        });
        windows
    }

    /// The window's values at output positions `start..start + len`.
    fn range_mut(&mut self, start: usize, len: usize) -> &mut [f64] {
        assert!(
            start >= self.base && start + len <= self.base + self.len,
            "a chunk writes only its own rows"
        );
        // SAFETY: in bounds (checked above) of the sub-slice this window
        // holds exclusively; the result borrows the window mutably.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(start - self.base), len) }
    }
}

impl OutputState {
    /// A dense output's `values[pos] += value`, added by `adder`.
    #[inline(always)]
    pub fn accumulate(&mut self, adder: Adder, pos: usize, value: f64) {
        let slot = match self {
            OutputState::Dense { values, .. } => &mut values[pos],
            OutputState::Window(window) => &mut window.range_mut(pos, 1)[0],
            _ => unreachable!("only dense outputs are accumulated in place"),
        };
        adder.add_to(slot, value);
    }

    /// A dense output's values at positions `start..start + len`.
    pub fn dense_range_mut(&mut self, start: usize, len: usize) -> &mut [f64] {
        // An empty run (a loop cut to no rows) may start past the end.
        if len == 0 {
            return &mut [];
        }
        match self {
            OutputState::Dense { values, .. } => &mut values[start..start + len],
            OutputState::Window(window) => window.range_mut(start, len),
            _ => unreachable!("only dense outputs are accumulated in place"),
        }
    }

    /// Where a compiled kernel finds a dense output's position 0 (for a
    /// window, outside it: the kernel writes only the window's positions);
    /// null for other outputs.
    pub fn dense_origin(&mut self) -> *mut f64 {
        match self {
            OutputState::Dense { values, .. } => values.as_mut_ptr(),
            OutputState::Window(window) => window.ptr.wrapping_sub(window.base),
            _ => std::ptr::null_mut(),
        }
    }

    /// A dense output's values this run may write, and the output position
    /// of the first (0, or a window's base); `None` for other outputs. A
    /// tier that copies the values to a device and back uses it.
    pub fn dense_values_mut(&mut self) -> Option<(usize, &mut [f64])> {
        match self {
            OutputState::Dense { values, .. } => Some((0, values.as_mut_slice())),
            OutputState::Window(window) => {
                // SAFETY: the window holds `len` values from `ptr`
                // exclusively; the slice borrows the window mutably.
                let values = unsafe { std::slice::from_raw_parts_mut(window.ptr, window.len) };
                Some((window.base, values))
            }
            _ => None,
        }
    }

    pub fn append(&mut self, coords: &[i64], value: f64) {
        match self {
            OutputState::Append { assembler, .. } => assembler.append(coords, value),
            _ => unreachable!("append targets an appended output"),
        }
    }

    /// Appends entries of `width` coordinates and a value's bits each, in
    /// order: what [`OutputState::append`] does for each.
    pub fn append_entries(&mut self, entries: &[i64], width: usize) {
        match self {
            OutputState::Append { assembler, .. } => assembler.append_entries(entries, width),
            _ => unreachable!("append targets an appended output"),
        }
    }

    /// Adds entries of `width` coordinates and a value's bits each, in
    /// order, as appends and workspace flushes add them: appended to an
    /// assembled output, pushed to a packed one. For a tier that computes
    /// the entries elsewhere (on a device) and hands them over at once.
    pub fn add_entries(&mut self, entries: &[i64], width: usize) {
        match self {
            OutputState::Append { assembler, .. } => assembler.append_entries(entries, width),
            OutputState::Packed { entries: list, .. } => {
                let mut coords: smallvec::SmallVec<[u64; 8]> = smallvec::SmallVec::new();
                for entry in entries.chunks_exact(width + 1) {
                    coords.clear();
                    coords.extend(entry[..width].iter().map(|&c| c as u64));
                    list.push(&coords, f64::from_bits(entry[width] as u64))
                        .expect("entries hold coordinates within the shape");
                }
            }
            _ => unreachable!("entries are added to a sparse output"),
        }
    }

    /// The output's workspace, when it has one.
    pub fn workspace(&self) -> Option<&Workspace> {
        match self {
            OutputState::Append {
                workspace: Some(ws), ..
            }
            | OutputState::Packed { workspace: ws, .. } => Some(ws),
            _ => None,
        }
    }

    /// Appends `a` and `b` merged by `op` below the output coordinates
    /// `prefix`, in order ([`super::rows`]); with a `block`, each of their
    /// coordinates holds a block of those sizes, appended below it
    /// ([`Assembler::append_merged_blocks`]).
    pub fn append_merged(&mut self, prefix: &[i64], (a, b): (Row<'_>, Row<'_>), op: Combine, block: &[u32]) {
        match self {
            OutputState::Append { assembler, .. } if block.is_empty() => assembler.append_merged(prefix, a, b, op),
            OutputState::Append { assembler, .. } => assembler.append_merged_blocks(prefix, a, b, op, block),
            _ => unreachable!("append targets an appended output"),
        }
    }

    /// Appends `a` and `b` merged by `op` ([`super::rows::merge_runs`]):
    /// runs of consecutive coordinates of the output's level below
    /// `prefix`, each level below that holding one child whose coordinate
    /// is the run's plus its `shifts` entry ([`Assembler::append_run`]).
    /// Runs over the same coordinates (two diagonals of a matrix) are
    /// combined straight into the output's values.
    pub fn append_merged_runs(&mut self, prefix: &[i64], (a, b): (Run<'_>, Run<'_>), op: Combine, shifts: &[i64]) {
        let OutputState::Append { assembler, .. } = self else {
            unreachable!("append targets an appended output")
        };
        if a.begin == b.begin && a.values.len() == b.values.len() {
            let pairs = a.values.iter().zip(b.values);
            with_combine!(op, |f, _union| assembler.append_run(
                prefix,
                a.begin,
                shifts,
                pairs.map(|(&x, &y)| f(x, y))
            ));
            return;
        }
        let mut scratch = std::mem::take(&mut assembler.row_values);
        super::rows::merge_runs(a, b, op, &mut scratch, |first, values| {
            assembler.append_run(prefix, first, shifts, values.iter().copied())
        });
        assembler.row_values = scratch;
    }

    /// [`OutputState::append_merged`] for each row `r` in `rows`, below
    /// `prefix ++ [r]` ([`Assembler::append_merged_rows`]).
    pub fn append_merged_rows(
        &mut self,
        prefix: &[i64],
        rows: std::ops::Range<usize>,
        a: RowsBelow<'_>,
        b: RowsBelow<'_>,
        op: Combine,
    ) {
        match self {
            OutputState::Append { assembler, .. } => assembler.append_merged_rows(prefix, rows, a, b, op),
            _ => unreachable!("append targets an appended output"),
        }
    }

    pub fn workspace_accumulate(&mut self, coords: &[i64], value: f64) {
        match self {
            OutputState::Append {
                workspace: Some(ws), ..
            }
            | OutputState::Packed { workspace: ws, .. } => ws.accumulate(coords, value),
            _ => unreachable!("workspace ops target an output with a workspace"),
        }
    }

    /// [`Workspace::accumulate_row`] on the output's workspace.
    pub fn workspace_accumulate_row(
        &mut self,
        prefix: &[i64],
        coords: &IndexArray,
        values: &[f64],
        scale: f64,
        range: std::ops::Range<usize>,
    ) {
        match self {
            OutputState::Append {
                workspace: Some(ws), ..
            }
            | OutputState::Packed { workspace: ws, .. } => ws.accumulate_row(prefix, coords, values, scale, range),
            _ => unreachable!("workspace ops target an output with a workspace"),
        }
    }

    pub fn workspace_flush(&mut self, prefix: &[i64]) {
        match self {
            OutputState::Append {
                assembler,
                workspace: Some(ws),
            } => {
                // A dense row of the last level is copied at once; other
                // workspaces hand over entry by entry (appends in the open
                // segment still take the assembler's short path).
                let runs = ws.extents.len() == 1 && assembler.runs;
                if runs && ws.drain_dense(|keys, values| assembler.append_row(prefix, keys, values)) {
                    return;
                }
                let mut full: smallvec::SmallVec<[i64; 8]> = prefix.iter().copied().collect();
                ws.drain(|coords, value| {
                    full.truncate(prefix.len());
                    full.extend_from_slice(coords);
                    assembler.append(&full, value)
                })
            }
            OutputState::Packed { entries, workspace, .. } => {
                let mut full: smallvec::SmallVec<[u64; 8]> = smallvec::SmallVec::new();
                workspace.drain(|coords, value| {
                    full.clear();
                    full.extend(prefix.iter().chain(coords).map(|&c| c as u64));
                    // Coordinates come from loops bounded by the shape.
                    entries
                        .push(&full, value)
                        .expect("workspace coordinates are within the shape");
                })
            }
            _ => unreachable!("workspace ops target an output with a workspace"),
        }
    }

    /// Whether the output has a workspace and it is dense.
    pub fn has_dense_workspace(&self) -> bool {
        self.workspace().is_some_and(Workspace::is_dense)
    }

    /// The raw parts of the output's workspace when it is dense, for
    /// compiled kernels that accumulate into it in place (the same effect
    /// as [`workspace_accumulate`](Self::workspace_accumulate)). The
    /// pointers stay valid while this state is not moved or dropped; only
    /// [`workspace_flush`](Self::workspace_flush) may touch the workspace
    /// meanwhile.
    pub fn dense_workspace_parts(&mut self) -> Option<DenseWorkspaceParts> {
        match self {
            OutputState::Append {
                workspace: Some(ws), ..
            }
            | OutputState::Packed { workspace: ws, .. } => ws.dense_parts(),
            _ => None,
        }
    }

    /// The output of a run whose values line up with `pattern`'s
    /// ([`OutputAssembly::OnPattern`](crate::cin::OutputAssembly)): its
    /// levels are a copy of the pattern's.
    pub fn finish_on(self, pattern: TensorRef<'_>) -> Result<Tensor<f64>> {
        match self {
            OutputState::Dense { shape, format, values } => Ok(pattern.on_pattern(&shape, format, values)?),
            _ => unreachable!("an output on a pattern accumulates in place"),
        }
    }

    /// The finished tensor.
    pub fn finish(self) -> Result<Tensor<f64>> {
        match self {
            OutputState::Dense { shape, format, values } => {
                let levels = format
                    .levels()
                    .iter()
                    .enumerate()
                    .map(|(k, _)| LevelStorage::new(format.level_extent(k, &shape).unwrap_or(0)))
                    .collect();
                Ok(Tensor::from_parts(&shape, format, levels, values)?)
            }
            OutputState::Append { assembler, .. } => assembler.finish(),
            OutputState::Packed { format, entries, .. } => Ok(Tensor::pack(&entries, format)?),
            OutputState::Window(_) => unreachable!("a window is part of a dense output, finished with it"),
        }
    }
}

/// `n` zeros for a dense output, on transparent huge pages when large
/// ([`advise_huge_pages`]).
pub fn zeroed_values(n: usize) -> Vec<f64> {
    let values = vec![0.0; n];
    advise_huge_pages(values.as_ptr() as *const u8, n * std::mem::size_of::<f64>());
    values
}

/// Dense storage for the levels of a dense output.
pub fn dense_levels(format: &Format, shape: &[usize]) -> Vec<LevelStorage> {
    (0..format.levels().len())
        .map(|k| LevelStorage::new(format.level_extent(k, shape).unwrap_or(0)))
        .collect()
}

struct OutputLevels<'a>(&'a mut [LevelStorage]);

impl StorageResolver for OutputLevels<'_> {
    fn level(&self, level: LevelRef) -> &LevelStorage {
        &self.0[level.level as usize]
    }
    fn level_mut(&mut self, level: LevelRef) -> &mut LevelStorage {
        &mut self.0[level.level as usize]
    }
}

/// Whether `levels` are a coordinate list's (COO's): one appended
/// non-unique level and singletons below it, the last unique. Each entry
/// appends one coordinate to each of them, so entries in increasing order
/// leave each sorted, and every chain of equal coordinates above a unique
/// level with distinct coordinates below.
fn is_coordinate_list(levels: &[tessera_formats::FormatLevel]) -> bool {
    let appended = |l: &LevelFormat| l.capabilities().assembly == Some(Assembly::Append);
    let singleton = |l: &LevelFormat| appended(l) && l.properties().branchless;
    let Some(((head, tail), (last, middle))) = levels.split_first().zip(levels.split_last()) else {
        return false;
    };
    !tail.is_empty()
        && appended(&head.level)
        && !head.level.unique
        && !head.level.properties().branchless
        && singleton(&last.level)
        && last.level.unique
        && middle[1..].iter().all(|l| singleton(&l.level) && !l.level.unique)
}

/// Assembles an output from entries that arrive in its level order, by the
/// levels' insert and append functions.
pub struct Assembler {
    shape: Vec<usize>,
    format: Format,
    levels: Vec<LevelStorage>,
    /// Coordinates of the last entry, per level.
    current: Vec<i64>,
    /// Position of the last entry, per level.
    positions: Vec<i64>,
    /// Positions appended so far, per level.
    sizes: Vec<i64>,
    /// Parent of the open segment and where it began, per level.
    segment: Vec<(i64, i64)>,
    values: Vec<f64>,
    started: bool,
    /// [`Assembler::appends_runs`], computed once.
    runs: bool,
    /// The format has dense and sorted compressed levels only, so entries
    /// must come in order and inside the shape ([`Assembler::in_order`]).
    tracks_order: bool,
    /// Every entry so far came in order and inside the shape, or (into an
    /// unordered last level) as a row of a workspace's distinct keys: the
    /// arrays are valid as built, and [`Assembler::finish`] need not check
    /// them again. An entry out of order in a format that tracks it is a
    /// fault of the kernel, refused at finish; in other formats it leaves
    /// the check to finish.
    in_order: bool,
    /// The last level is unordered: a row of distinct keys in any order
    /// keeps [`Assembler::in_order`].
    unordered_last: bool,
    /// Every level above the last is dense, and runs are appended: a new
    /// row's place is arithmetic, and [`Assembler::append_entries`] opens
    /// it without leaving the run ([`Assembler::opens_row`]).
    rows_by_arithmetic: bool,
    /// Scratch for [`Assembler::append_entries`], kept between batches.
    run_coords: Vec<u64>,
    /// Scratch for [`Assembler::append_merged`], kept between rows.
    row_values: Vec<f64>,
    /// Scratch for [`Assembler::append_merged_rows`]: each merged row's
    /// coordinate and length.
    row_counts: Vec<(usize, usize)>,
    /// Segments of the last level closed by [`Assembler::opens_row`]
    /// (parent, length), consecutive from position `closed_from`, not yet
    /// written: the level closes them together ([`Assembler::close_segments`]).
    closed: Vec<(usize, usize)>,
    closed_from: usize,
    /// Every level is a coordinate list's ([`Assembler::append_listed`]).
    listed: bool,
    /// Subtracted from the first coordinate: a part of a parallel run holds
    /// rows `origin..` of a dense first level as rows `0..`.
    origin: i64,
    /// How entries of equal coordinates add up.
    pub adder: Adder,
}

impl Assembler {
    pub fn new(format: Format, shape: &[usize]) -> Self {
        let n = format.levels().len();
        let mut levels: Vec<LevelStorage> = (0..n)
            .map(|k| {
                format
                    .level(k)
                    .empty_storage(format.level_extent(k, shape).unwrap_or(0))
            })
            .collect();
        let mut b = Immediate::new(OutputLevels(&mut levels));
        for k in 0..n {
            let lv = LevelRef::new(0, k);
            if format.level(k).capabilities().assembly == Some(Assembly::Append) {
                format.level(k).append_init(&mut b, lv, 0, 0);
            }
        }
        let mut assembler = Assembler {
            runs: false,
            tracks_order: false,
            in_order: false,
            unordered_last: false,
            rows_by_arithmetic: false,
            shape: shape.to_vec(),
            format,
            levels,
            current: vec![-1; n],
            positions: vec![0; n],
            sizes: vec![0; n],
            segment: vec![(-1, 0); n],
            values: Vec::new(),
            started: false,
            run_coords: Vec::new(),
            row_values: Vec::new(),
            row_counts: Vec::new(),
            closed: Vec::new(),
            closed_from: 0,
            origin: 0,
            adder: Adder::Float,
            listed: false,
        };
        assembler.runs = assembler.appends_runs();
        let levels = assembler.format.levels();
        // Positions by arithmetic (dense), or appended in order, one per
        // coordinate (sorted compressed): the levels whose arrays the order
        // of the entries and their bounds make valid.
        let positional = |l: &LevelFormat| l.coordinate_relation() == CoordinateRelation::Positional;
        let appended_unique = |l: &LevelFormat| {
            let props = l.properties();
            l.capabilities().assembly == Some(Assembly::Append) && props.unique && !props.branchless
        };
        // Then, optionally, a coordinate list's levels (COO's).
        let head = levels
            .iter()
            .position(|l| !(positional(&l.level) || appended_unique(&l.level)))
            .unwrap_or(n);
        let listed = is_coordinate_list(&levels[head..]);
        assembler.in_order = head == n || listed;
        assembler.listed = listed && head == 0;
        assembler.tracks_order = assembler.in_order && levels.iter().all(|l| l.level.ordered);
        assembler.unordered_last = levels.last().is_some_and(|l| !l.level.ordered);
        assembler.rows_by_arithmetic =
            assembler.runs && levels[..n.saturating_sub(1)].iter().all(|l| positional(&l.level));
        let rows = assembler.levels[..n.saturating_sub(1)]
            .iter()
            .try_fold(1usize, |rows, l| rows.checked_mul(l.extent));
        if let (true, Some(rows @ 1..=MAX_POSITIONS)) = (assembler.rows_by_arithmetic, rows) {
            // Every row's edge has its slot from the start (as scipy's
            // indptr), rather than one more at each row.
            assembler
                .format
                .level(n - 1)
                .append_init_now(&mut assembler.levels[n - 1], rows);
        }
        assembler
    }

    /// An assembler of the part of the output a chunk of a parallel run
    /// makes, for first-level coordinates `rows` (see
    /// [`tessera_formats::parts`]): a dense first level holds only those
    /// rows, re-based to 0.
    pub fn part(format: Format, shape: &[usize], rows: std::ops::Range<usize>, adder: Adder) -> Self {
        let dense_first = format
            .levels()
            .first()
            .is_some_and(|l| l.level.kind == LevelKind::Dense);
        // The first level's mode, and how many of its coordinates one of
        // the level's holds (a block of them, for BCSR's block rows).
        let mode = format.levels().first().and_then(|l| match l.projection {
            Projection::Mode {
                mode,
                split: Split::Whole,
            } => Some((mode, 1)),
            Projection::Mode {
                mode,
                split: Split::Outer(block),
            } => Some((mode, block)),
            _ => None,
        });
        match (dense_first, mode) {
            (true, Some((mode, block))) => {
                let mut part_shape = shape.to_vec();
                part_shape[mode] = (rows.end * block).min(shape[mode]).saturating_sub(rows.start * block);
                let mut assembler = Assembler::new(format, &part_shape);
                assembler.origin = rows.start as i64;
                assembler.adder = adder;
                assembler
            }
            _ => {
                let mut assembler = Assembler::new(format, shape);
                assembler.adder = adder;
                assembler
            }
        }
    }

    /// The format of the output being assembled.
    pub fn format(&self) -> &Format {
        &self.format
    }

    /// The shape of the output being assembled.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Adds an entry; equal coordinates to the previous entry add up.
    pub fn append(&mut self, coords: &[i64], value: f64) {
        let n = coords.len();
        if n == 0 {
            if self.values.is_empty() {
                self.values.push(0.0);
            }
            self.adder.add_to(&mut self.values[0], value);
            return;
        }
        if self.listed && self.append_listed_one(coords, value) {
            return;
        }
        let last = n - 1;
        // (Compared element by element: a slice comparison calls memcmp.)
        let same_above = || coords[..last].iter().zip(&self.current).all(|(a, b)| a == b);
        if self.runs && self.started && coords[last] != self.current[last] && same_above() {
            // A new coordinate in the open segment of the last level: the
            // levels above keep their positions.
            self.in_order &= coords[last] > self.current[last] && self.inside(last, coords[last]);
            self.values.push(value);
            self.extend_last_coords(CoordRun::Wide(&[coords[last] as u64]));
            return;
        }
        // The first level to append at: the first whose coordinate
        // changed, or a non-unique level above it (its children repeat).
        let mut first = 0;
        if self.started {
            let changed = (0..n).find(|&k| coords[k] != self.current[k]);
            let Some(changed) = changed else {
                // The same coordinates as the last entry: they add up.
                let p = self.positions[n - 1] as usize;
                self.adder.add_to(&mut self.values[p], value);
                return;
            };
            first = (0..changed).find(|&k| !self.format.level(k).unique).unwrap_or(changed);
            self.in_order &= coords[changed] > self.current[changed];
        }
        self.in_order &= (first..n).all(|k| self.inside(k, coords[k]));
        self.started = true;
        let mut b = Immediate::new(OutputLevels(&mut self.levels));
        for k in first..n {
            let level = self.format.level(k);
            let lv = LevelRef::new(0, k);
            let parent = if k == 0 { 0 } else { self.positions[k - 1] };
            let coord = if k == 0 { coords[0] - self.origin } else { coords[k] };
            let pos = match level.capabilities().assembly {
                Some(Assembly::Append) => {
                    let (open_parent, begin) = self.segment[k];
                    if open_parent != parent {
                        if open_parent >= 0 {
                            level.append_edges(&mut b, lv, open_parent, begin, self.sizes[k]);
                        }
                        self.segment[k] = (parent, self.sizes[k]);
                    }
                    let p = self.sizes[k];
                    level.append_coord(&mut b, lv, p, coord);
                    self.sizes[k] += 1;
                    p
                }
                _ => {
                    let (p, _) = level.locate(&mut b, lv, parent, &coords[..k], coord);
                    level.insert_coord(&mut b, lv, p, coord);
                    p
                }
            };
            self.positions[k] = pos;
            self.current[k] = coords[k];
        }
        let p = self.positions[n - 1] as usize;
        if self.values.len() <= p {
            // A new entry holds its value as given (a -0.0 stays -0.0, as
            // on the short path above), whatever came before it.
            self.values.resize(p, 0.0);
            self.values.push(value);
        } else {
            self.adder.add_to(&mut self.values[p], value);
        }
    }

    /// Takes `spare`'s arrays and values (a part of a result of this
    /// format, no longer needed) as this assembler's storage: what it holds
    /// so far is copied into them, and their room is kept. A part filled
    /// again in memory it filled before neither faults pages in nor grows.
    pub fn reuse(&mut self, spare: Tensor<f64>) {
        let (levels, mut values) = spare.into_storage();
        if levels.len() != self.levels.len() {
            return;
        }
        for (level, spare) in self.levels.iter_mut().zip(levels) {
            if level.arrays.len() != spare.arrays.len() {
                continue;
            }
            for (array, spare) in level.arrays.iter_mut().zip(spare.arrays) {
                array.move_into(spare);
            }
        }
        values.clear();
        values.extend_from_slice(&self.values);
        self.values = values;
    }

    /// Reserves room for a result of `sizes` (a capacity hint only).
    pub fn reserve(&mut self, sizes: &OutputSizes) {
        if sizes.arrays.len() != self.levels.len() {
            return;
        }
        // Advice only for fresh room: reused storage got it when it was
        // made.
        for (level, lengths) in self.levels.iter_mut().zip(&sizes.arrays) {
            for (array, &len) in level.arrays.iter_mut().zip(lengths) {
                let room = array.capacity_bytes();
                array.reserve(len.saturating_sub(array.len()));
                if array.capacity_bytes() != room {
                    advise_huge_pages(array.as_ptr(), array.capacity_bytes());
                }
            }
        }
        let room = self.values.capacity();
        self.values.reserve(sizes.values.saturating_sub(self.values.len()));
        if self.values.capacity() != room {
            advise_huge_pages(self.values.as_ptr() as *const u8, self.values.capacity() * 8);
        }
    }

    /// [`Assembler::append`] for entries of `width` coordinates and a
    /// value's bits each. Consecutive entries that only add coordinates to
    /// the open segment of the last level are copied there as one run.
    pub fn append_entries(&mut self, entries: &[i64], width: usize) {
        let stride = width + 1;
        if !self.runs || width == 0 {
            let entries = self.append_listed(entries, width);
            for entry in entries.chunks_exact(stride) {
                self.append(&entry[..width], f64::from_bits(entry[width] as u64));
            }
            return;
        }
        let last = width - 1;
        let mut run = std::mem::take(&mut self.run_coords);
        run.clear();
        let mut entries = entries;
        if width == 2 && self.rows_by_arithmetic {
            entries = self.append_pairs(entries, &mut run);
        }
        for entry in entries.chunks_exact(stride) {
            let (coords, value) = (&entry[..width], f64::from_bits(entry[width] as u64));
            let in_segment = self.started
                && coords[last] > self.current[last]
                && self.inside(last, coords[last])
                && coords[..last].iter().zip(&self.current).all(|(a, b)| a == b);
            if in_segment
                || (self.rows_by_arithmetic && self.started && self.opens_row(&coords[..last], coords[last], run.len()))
            {
                run.push(coords[last] as u64);
                self.values.push(value);
                self.current[last] = coords[last];
            } else {
                self.commit_run(&mut run);
                self.append(coords, value);
            }
        }
        self.commit_run(&mut run);
        self.run_coords = run;
    }

    /// [`Assembler::append_entries`] into a coordinate list (COO), whose
    /// every level takes one coordinate per entry: the entries that follow
    /// the last one in increasing order, inside the shape, are written a
    /// level at a time, each level's coordinates as one run. Returns the
    /// entries from the first that does not (equal to the one before it,
    /// out of order, or the very first), which the caller appends as any.
    fn append_listed<'e>(&mut self, entries: &'e [i64], width: usize) -> &'e [i64] {
        if !self.listed || !self.started || width != self.levels.len() {
            return entries;
        }
        let stride = width + 1;
        let mut last = &self.current[..width];
        let mut taken = 0;
        for entry in entries.chunks_exact(stride) {
            let coords = &entry[..width];
            if coords <= last || !(0..width).all(|k| self.inside(k, coords[k])) {
                break;
            }
            last = coords;
            taken += 1;
        }
        if taken == 0 {
            return entries;
        }
        let last = last.to_vec();
        let taken_entries = || entries.chunks_exact(stride).take(taken);
        let mut run = std::mem::take(&mut self.run_coords);
        for k in 0..width {
            let shift = if k == 0 { self.origin } else { 0 };
            run.clear();
            run.extend(taken_entries().map(|e| (e[k] - shift) as u64));
            self.extend_listed_level(k, CoordRun::Wide(&run));
        }
        self.run_coords = run;
        self.values
            .extend(taken_entries().map(|e| f64::from_bits(e[width] as u64)));
        self.current[..width].copy_from_slice(&last);
        &entries[taken * stride..]
    }

    /// [`Assembler::append_listed`] for one entry of a coordinate list:
    /// false, changing nothing, unless it follows the last one in
    /// increasing order, inside the shape.
    fn append_listed_one(&mut self, coords: &[i64], value: f64) -> bool {
        let n = coords.len();
        debug_assert!(self.listed, "only a coordinate list's entries are listed");
        if !self.started || n != self.levels.len() || coords <= &self.current[..n] {
            return false;
        }
        if !(0..n).all(|k| self.inside(k, coords[k])) {
            return false;
        }
        for (k, &c) in coords.iter().enumerate() {
            let shift = if k == 0 { self.origin } else { 0 };
            self.extend_listed_level(k, CoordRun::Wide(&[(c - shift) as u64]));
        }
        self.values.push(value);
        self.current[..n].copy_from_slice(coords);
        true
    }

    /// Appends `run` to level `k` of a coordinate list, below the last
    /// position of the level above.
    fn extend_listed_level(&mut self, k: usize, run: CoordRun<'_>) {
        let slot = self.format.level(k).coordinate_array().map(usize::from);
        let slot = slot.expect("a coordinate list's levels store their coordinates");
        self.levels[k].arrays[slot].write_run(self.sizes[k] as usize, run);
        self.sizes[k] += run.len() as i64;
        self.positions[k] = self.sizes[k] - 1;
        if k > 0 {
            // A singleton's segment is its parent's one position.
            self.segment[k] = (self.positions[k - 1], self.positions[k]);
        }
    }

    /// [`Assembler::append_entries`] for entries `(row, column, value)`
    /// of a matrix whose rows are placed by arithmetic (CSR), its state
    /// held in locals: each entry extends the open row or opens a later
    /// one, its coordinate joining `run`. Returns the entries from the
    /// first that does neither (out of order, or the very first), which
    /// the caller appends as any.
    fn append_pairs<'e>(&mut self, entries: &'e [i64], run: &mut Vec<u64>) -> &'e [i64] {
        if !self.started {
            return entries;
        }
        let (rows, columns) = (self.levels[0].extent as i64, self.levels[1].extent as i64);
        let (origin, written) = (self.origin, self.sizes[1] as usize);
        let (mut row, mut column) = (self.current[0], self.current[1]);
        let (mut open_parent, mut begin) = self.segment[1];
        let mut done = 0;
        for entry in entries.chunks_exact(3) {
            let (i, j) = (entry[0], entry[1]);
            let later_row = i > row && (0..rows).contains(&(i - origin));
            if !(0..columns).contains(&j) || !(later_row || (i == row && j > column)) {
                break;
            }
            if later_row {
                // Close the open row's segment; the new one starts here.
                let end = written + run.len();
                self.close_segment(open_parent, begin, end);
                (open_parent, begin, row) = (i - origin, end as i64, i);
            }
            column = j;
            run.push(j as u64);
            self.values.push(f64::from_bits(entry[2] as u64));
            done += 3;
        }
        self.current[..2].copy_from_slice(&[row, column]);
        self.positions[0] = row - origin;
        self.segment[1] = (open_parent, begin);
        &entries[done..]
    }

    /// When `(prefix, coord)` is in a later row than the last entry (the
    /// levels above the last differ, and are dense), opens its row: the
    /// levels above take their positions by arithmetic, and the open
    /// segment of the last level, `pending` coordinates past those
    /// written, closes. `coord` then joins the run. False, changing
    /// nothing, for entries out of order.
    fn opens_row(&mut self, prefix: &[i64], coord: i64, pending: usize) -> bool {
        let last = prefix.len();
        let Some(changed) = (0..last).find(|&k| prefix[k] != self.current[k]) else {
            return false;
        };
        if prefix[changed] < self.current[changed]
            || !(changed..last).all(|k| self.inside(k, prefix[k]))
            || !self.inside(last, coord)
        {
            return false;
        }
        for k in changed..last {
            let parent = if k == 0 { 0 } else { self.positions[k - 1] };
            let coord = if k == 0 { prefix[0] - self.origin } else { prefix[k] };
            self.positions[k] = parent * self.levels[k].extent as i64 + coord;
            self.current[k] = prefix[k];
        }
        let end = self.sizes[last] as usize + pending;
        let (open_parent, begin) = self.segment[last];
        self.close_segment(open_parent, begin, end);
        self.segment[last] = (self.positions[last - 1], end as i64);
        true
    }

    /// Whether `coord` is a coordinate of level `k` of the output (the
    /// first level's shifted by the part's origin).
    fn inside(&self, k: usize, coord: i64) -> bool {
        let coord = if k == 0 { coord - self.origin } else { coord };
        (0..self.levels[k].extent as i64).contains(&coord)
    }

    /// Writes the coordinates of a run whose values are already pushed.
    fn commit_run(&mut self, run: &mut Vec<u64>) {
        self.extend_last_coords(CoordRun::Wide(run));
        run.clear();
    }

    /// Whether [`Assembler::append_row`] can copy runs: every level holds
    /// each coordinate once (so entries that differ in the last coordinate
    /// share the positions above it), and the last level is assembled by
    /// append and may hold many children per parent.
    pub fn appends_runs(&self) -> bool {
        let levels = self.format.levels();
        levels.last().is_some_and(|last| {
            let props = last.level.properties();
            last.level.capabilities().assembly == Some(Assembly::Append) && !props.branchless
        }) && levels.iter().all(|l| l.level.unique)
    }

    /// Adds the entries `(prefix, keys[k])`, `keys` distinct and (unless
    /// the last level is unordered) increasing, with the
    /// values taken out of `values` (leaving zeros): the first as
    /// [`Assembler::append`] does, the rest copied into the last level at
    /// once (they share every other level's position). Only when
    /// [`Assembler::appends_runs`].
    pub fn append_row(&mut self, prefix: &[i64], keys: &[u32], values: &mut [f64]) {
        let Some((&first, rest)) = keys.split_first() else {
            return;
        };
        let last = self.levels.len() - 1;
        self.in_order &= if self.unordered_last {
            // A workspace's keys are distinct.
            keys.iter().max().is_some_and(|&k| self.inside(last, i64::from(k)))
        } else {
            // Increasing by the contract (a workspace's sorted drain, the
            // only caller, makes them so): its last key is its largest.
            debug_assert!(keys.windows(2).all(|w| w[0] < w[1]), "a row's keys increase");
            self.inside(last, i64::from(keys[keys.len() - 1]))
        };
        if self.opens_row_at(prefix, i64::from(first)) {
            self.extend_last(
                CoordRun::Narrow(keys),
                keys.iter().map(|&k| std::mem::take(&mut values[k as usize])),
            );
            return;
        }
        let first_value = std::mem::take(&mut values[first as usize]);
        self.append_after(prefix, i64::from(first), first_value);
        self.extend_last(
            CoordRun::Narrow(rest),
            rest.iter().map(|&k| std::mem::take(&mut values[k as usize])),
        );
    }

    /// Appends the block rows `a op b` below `prefix`
    /// ([`super::rows::merge_blocks`]): below each merged coordinate, the
    /// dense levels of sizes `block` hold its block's values in order.
    pub fn append_merged_blocks(&mut self, prefix: &[i64], a: Row<'_>, b: Row<'_>, op: Combine, block: &[u32]) {
        let width = block.iter().map(|&b| b as usize).product::<usize>().max(1);
        let (mut coords, mut values) = (
            std::mem::take(&mut self.run_coords),
            std::mem::take(&mut self.row_values),
        );
        super::rows::merge_blocks(a, b, op, width, &mut coords, &mut values);
        if let Some((&first, rest)) = coords.split_first() {
            let level = prefix.len();
            let mut entry: smallvec::SmallVec<[i64; 8]> = prefix.iter().copied().collect();
            entry.push(first as i64);
            entry.extend(block.iter().map(|_| 0));
            self.append_block(&entry, block, &values[..width]);
            if let Some(&last) = rest.last() {
                self.extend_blocks(level, CoordRun::Wide(rest), block, &values[width..]);
                self.current[level] = last as i64;
            }
        }
        self.run_coords = coords;
        self.row_values = values;
    }

    /// Appends blocks at increasing coordinates `coords` of level `level`
    /// in its open segment, after the block just appended there: the
    /// coordinates copied at once, their blocks' `values` after the
    /// others', leaving the state the last block's last entry would. The
    /// levels below `level` are the dense levels of sizes `block`.
    fn extend_blocks(&mut self, level: usize, coords: CoordRun<'_>, block: &[u32], values: &[f64]) {
        let n = coords.len();
        self.in_order &= self.inside(level, coords.get(n - 1) as i64);
        let start = self.sizes[level] as usize;
        self.format
            .level(level)
            .append_coords(&mut self.levels[level], start, coords);
        self.sizes[level] += n as i64;
        self.positions[level] = self.sizes[level] - 1;
        self.values.extend_from_slice(values);
        self.at_end_of_block(level + 1, block);
        debug_assert_eq!(self.values.len() as i64, self.positions[self.levels.len() - 1] + 1);
    }

    /// Appends a dense block below the coordinates `first` less its last
    /// `block.len()` (which are 0, the block's first entry): the first
    /// entry as [`Assembler::append`] does, the others at the positions
    /// that follow in the dense levels below, leaving the state the
    /// block's last entry would.
    fn append_block(&mut self, first: &[i64], block: &[u32], values: &[f64]) {
        let Some((&first_value, rest)) = values.split_first() else {
            return;
        };
        self.append(first, first_value);
        if rest.is_empty() {
            return;
        }
        let n = first.len();
        debug_assert_eq!(
            self.values.len(),
            self.positions[n - 1] as usize + 1,
            "a block is appended once"
        );
        self.values.extend_from_slice(rest);
        self.at_end_of_block(n - block.len(), block);
    }

    /// Leaves the dense levels `from..` of sizes `block` at the last entry
    /// of the block just appended (its last place in each), as appending
    /// that entry would.
    fn at_end_of_block(&mut self, from: usize, block: &[u32]) {
        for (k, &size) in (from..).zip(block) {
            let last = i64::from(size) - 1;
            self.current[k] = last;
            self.positions[k] = self.positions[k - 1] * i64::from(size) + last;
        }
    }

    /// Appends entries at consecutive coordinates `first..` of level
    /// `prefix.len()` below `prefix`, with `values`: a level whose
    /// consecutive coordinates sit at consecutive positions (DIA's rows),
    /// each level below it holding one child at its parent's position
    /// whose coordinate is the run's plus its entry of `shifts` (DIA's
    /// columns). The first entry as [`Assembler::append`] does, the others'
    /// values at the positions that follow, leaving the state the last
    /// entry would. The run's coordinates follow every entry so far.
    pub fn append_run(
        &mut self,
        prefix: &[i64],
        first: i64,
        shifts: &[i64],
        mut values: impl ExactSizeIterator<Item = f64>,
    ) {
        let rest = values.len().saturating_sub(1);
        let Some(first_value) = values.next() else {
            return;
        };
        let level = prefix.len();
        let mut entry: smallvec::SmallVec<[i64; 8]> = prefix.iter().copied().collect();
        entry.push(first);
        entry.extend(shifts.iter().map(|s| first + s));
        self.append(&entry, first_value);
        if rest == 0 {
            return;
        }
        // The first entry is new and the last value: the others follow it.
        debug_assert_eq!(self.values.len() as i64, self.positions[level] + 1);
        self.values.extend(values);
        let last = first + rest as i64;
        self.in_order &= self.inside(level, last);
        self.current[level] = last;
        self.positions[level] += rest as i64;
        for (k, shift) in (level + 1..).zip(shifts) {
            self.current[k] = last + shift;
            self.positions[k] = self.positions[level];
        }
    }

    /// Appends the row `a op b` below `prefix` ([`super::rows::merge`]):
    /// the first entry as [`Assembler::append`] does (or its row opened by
    /// arithmetic), the rest copied into the last level at once when
    /// [`Assembler::appends_runs`].
    pub fn append_merged(&mut self, prefix: &[i64], a: Row<'_>, b: Row<'_>, op: Combine) {
        let (mut coords, mut values) = (
            std::mem::take(&mut self.run_coords),
            std::mem::take(&mut self.row_values),
        );
        super::rows::merge(a, b, op, &mut coords, &mut values);
        if let Some((&first, rest)) = coords.split_first() {
            if self.runs {
                let last = self.levels.len() - 1;
                self.in_order &=
                    coords.windows(2).all(|w| w[0] < w[1]) && self.inside(last, coords[coords.len() - 1] as i64);
                if self.opens_row_at(prefix, first as i64) {
                    self.extend_last(CoordRun::Wide(&coords), values.iter().copied());
                } else {
                    self.append_after(prefix, first as i64, values[0]);
                    self.extend_last(CoordRun::Wide(rest), values[1..].iter().copied());
                }
            } else {
                for (&c, &v) in coords.iter().zip(&values) {
                    self.append_after(prefix, c as i64, v);
                }
            }
        }
        self.run_coords = coords;
        self.row_values = values;
    }

    /// [`Assembler::append_merged`] for each row `r` in `rows`, below
    /// `prefix ++ [r]`. Where the rows' places are arithmetic
    /// (as for CSR) and they come after the last entry, every
    /// row is merged at once, its edge written by the level and the
    /// coordinates copied in one run.
    pub fn append_merged_rows(
        &mut self,
        prefix: &[i64],
        rows: std::ops::Range<usize>,
        a: RowsBelow<'_>,
        b: RowsBelow<'_>,
        op: Combine,
    ) {
        let n = self.levels.len();
        let fits = self.rows_by_arithmetic
            && self.tracks_order
            && prefix.len() + 2 == n
            && !rows.is_empty()
            && prefix.iter().enumerate().all(|(k, &c)| self.inside(k, c))
            && self.inside(n - 2, rows.start as i64)
            && self.inside(n - 2, rows.end as i64 - 1)
            && self.after_last_row(prefix, rows.start as i64);
        if !fits {
            return self.append_merged_each(prefix, rows, a, b, op);
        }
        self.close_segments();
        let (last, row_level) = (n - 1, n - 2);
        let level = *self.format.level(last);
        let Some(slot) = level.coordinate_array().map(usize::from) else {
            return self.append_merged_each(prefix, rows, a, b, op);
        };
        let start = self.sizes[last] as usize;
        // The levels above the rows' take their positions by arithmetic.
        let mut above: smallvec::SmallVec<[i64; 8]> = smallvec::SmallVec::new();
        for (k, &c) in prefix.iter().enumerate() {
            let c = if k == 0 { c - self.origin } else { c };
            above.push(above.last().map_or(c, |&p| p * self.levels[k].extent as i64 + c));
        }
        let shift = if row_level == 0 { self.origin } else { 0 };
        let row_parent = above.last().copied().unwrap_or(0);
        let first_position = (row_parent * self.levels[row_level].extent as i64 + rows.start as i64 - shift) as usize;
        let mut counts = std::mem::take(&mut self.row_counts);
        counts.clear();
        // The level's coordinate of position `p` is `coords[p]` (that is
        // what its coordinate array means): the merged rows are written
        // there directly, after the positions appended so far. (Both
        // operands' coordinates have the output's width, so they fit.)
        self.make_room(slot, start, a.entries(rows.clone()) + b.entries(rows.clone()));
        let coords = &mut self.levels[last].arrays[slot];
        let merged = super::rows::merge_rows(
            a,
            b,
            rows.clone(),
            op,
            first_position,
            coords,
            &mut self.values,
            &mut counts,
        );
        let Some(largest) = merged else {
            self.row_counts = counts;
            return self.append_merged_each(prefix, rows, a, b, op);
        };
        if let Some(&(last_position, last_count)) = counts.last() {
            let (open_parent, begin) = self.segment[last];
            self.close_segment(open_parent, begin, start);
            self.close_segments();
            level.append_segments_now(&mut self.levels[last], start, &counts);
            let end = start + counts.iter().map(|&(_, count)| count).sum::<usize>();
            self.in_order &= largest < self.levels[last].extent as u64;
            self.positions[..row_level].copy_from_slice(&above);
            self.current[..row_level].copy_from_slice(prefix);
            self.positions[row_level] = last_position as i64;
            self.current[row_level] = (last_position - first_position + rows.start) as i64;
            self.sizes[last] = end as i64;
            self.positions[last] = end as i64 - 1;
            self.current[last] = self.levels[last].arrays[slot].get(end - 1);
            self.segment[last] = (last_position as i64, (end - last_count) as i64);
            self.started = true;
        }
        self.row_counts = counts;
    }

    /// Room for `more` entries after the first `start` in the last level's
    /// coordinate array `slot` and in the values, the array cut to
    /// `start`. Moving them copies their entries, not their spare room (as
    /// growing a vector would: a result's reserved, unfilled arrays are
    /// mostly spare room), and new room is advised onto huge pages.
    fn make_room(&mut self, slot: usize, start: usize, more: usize) {
        let last = self.levels.len() - 1;
        let coords = &mut self.levels[last].arrays[slot];
        coords.truncate(start);
        if coords.reserve_moving_elements(more) {
            advise_huge_pages(coords.as_ptr(), coords.capacity_bytes());
        }
        if reserve_moving_elements(&mut self.values, more) {
            advise_huge_pages(self.values.as_ptr() as *const u8, self.values.capacity() * 8);
        }
    }

    /// [`Assembler::append_merged_rows`] one row at a time.
    fn append_merged_each(
        &mut self,
        prefix: &[i64],
        rows: std::ops::Range<usize>,
        a: RowsBelow<'_>,
        b: RowsBelow<'_>,
        op: Combine,
    ) {
        let n = prefix.len() + 2;
        let mut coords: smallvec::SmallVec<[i64; 8]> = prefix.iter().copied().collect();
        coords.push(0);
        for r in rows {
            coords[n - 2] = r as i64;
            self.append_merged(&coords, a.row(r), b.row(r), op);
        }
    }

    /// Whether the row `(prefix, row)` comes after the last entry's.
    fn after_last_row(&self, prefix: &[i64], row: i64) -> bool {
        if !self.started {
            return true;
        }
        let ours = prefix.iter().copied().chain(std::iter::once(row));
        for (c, &last) in ours.zip(&self.current) {
            if c != last {
                return c > last;
            }
        }
        false
    }

    /// Opens the row of `(prefix, first)` by arithmetic ([`Assembler::opens_row`]),
    /// when the format allows and the row comes after the last entry's; the
    /// caller then appends its coordinates from `first` on.
    fn opens_row_at(&mut self, prefix: &[i64], first: i64) -> bool {
        self.rows_by_arithmetic && self.started && self.opens_row(prefix, first, 0)
    }

    fn append_after(&mut self, prefix: &[i64], coord: i64, value: f64) {
        let mut full: smallvec::SmallVec<[i64; 8]> = prefix.iter().copied().collect();
        full.push(coord);
        self.append(&full, value);
    }

    /// Appends increasing coordinates to the open segment of the last level.
    fn extend_last(&mut self, coords: CoordRun<'_>, values: impl Iterator<Item = f64>) {
        // An appended last level's values are exactly its positions so far.
        debug_assert_eq!(self.values.len() as i64, self.sizes[self.levels.len() - 1]);
        self.values.extend(values);
        self.extend_last_coords(coords);
    }

    /// Closes the last level's segment below `parent` (none when
    /// negative) from `begin` to `end`: written with the others closed
    /// since the last [`Assembler::close_segments`].
    fn close_segment(&mut self, parent: i64, begin: i64, end: usize) {
        if parent < 0 {
            return;
        }
        if self.closed.is_empty() {
            self.closed_from = begin as usize;
        }
        self.closed.push((parent as usize, end - begin as usize));
    }

    /// Writes the segments [`Assembler::opens_row`] closed.
    fn close_segments(&mut self) {
        if let Some(last) = self.levels.len().checked_sub(1).filter(|_| !self.closed.is_empty()) {
            self.format
                .level(last)
                .append_segments_now(&mut self.levels[last], self.closed_from, &self.closed);
            self.closed.clear();
        }
    }

    /// Writes increasing coordinates as the next positions of the open
    /// segment of the last level (their values are pushed already), and
    /// the segments closed before them.
    fn extend_last_coords(&mut self, coords: CoordRun<'_>) {
        self.close_segments();
        if coords.is_empty() {
            return;
        }
        let last = self.levels.len() - 1;
        let start = self.sizes[last] as usize;
        self.format
            .level(last)
            .append_coords(&mut self.levels[last], start, coords);
        self.sizes[last] += coords.len() as i64;
        self.positions[last] = self.sizes[last] - 1;
        self.current[last] = coords.get(coords.len() - 1) as i64;
    }

    pub fn finish(mut self) -> Result<Tensor<f64>> {
        self.close_segments();
        let n = self.levels.len();
        if n == 0 {
            let values = if self.values.is_empty() { vec![0.0] } else { self.values };
            return Ok(Tensor::from_parts(&self.shape, self.format, self.levels, values)?);
        }
        let mut parent_size: i64 = 1;
        let mut sizes = Vec::with_capacity(n);
        for k in 0..n {
            let level = self.format.level(k);
            let lv = LevelRef::new(0, k);
            let size = match level.capabilities().assembly {
                Some(Assembly::Append) => {
                    let (open_parent, begin) = self.segment[k];
                    let storage = &mut self.levels[k];
                    let end = self.sizes[k] as usize;
                    if open_parent >= 0 {
                        level.append_edges_now(storage, open_parent as usize, begin as usize, end);
                    }
                    level.append_finalize_now(storage, parent_size as usize, end);
                    self.sizes[k]
                }
                _ => {
                    let mut b = Immediate::new(OutputLevels(&mut self.levels));
                    let size = level.size(&mut b, lv, parent_size);
                    level.insert_finalize(&mut b, lv, parent_size, size);
                    size
                }
            };
            if size as u64 > MAX_POSITIONS as u64 {
                return Err(EngineError::Format(tessera_formats::FormatError::TooLarge(format!(
                    "the result's level {k} would have {size} positions"
                ))));
            }
            sizes.push(parent_size as usize);
            parent_size = size;
        }
        for (k, &parent) in sizes.iter().enumerate() {
            self.format.level(k).trim(&mut self.levels[k], parent);
        }
        self.values.resize(parent_size as usize, 0.0);
        if self.tracks_order && !self.in_order {
            return Err(EngineError::Internal(format!(
                "the kernel's output entries for {} came out of order or outside the shape {:?}",
                self.format, self.shape
            )));
        }
        if self.in_order {
            // SAFETY: every entry was checked as it came, in order and
            // inside the shape, into dense and sorted compressed levels
            // whose edges are counts summed in order: the invariants
            // `from_parts` checks hold by construction.
            return Ok(unsafe { Tensor::from_parts_unchecked(&self.shape, self.format, self.levels, self.values) });
        }
        Ok(Tensor::from_parts(&self.shape, self.format, self.levels, self.values)?)
    }
}

/// The lengths of a result's arrays, per level, and of its values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSizes {
    arrays: Vec<Vec<usize>>,
    values: usize,
}

impl OutputSizes {
    /// Each length times `fraction`, rounded up: a part's share.
    pub fn scaled(&self, fraction: f64) -> Self {
        let scale = |n: usize| (n as f64 * fraction).ceil() as usize;
        OutputSizes {
            arrays: self
                .arrays
                .iter()
                .map(|level| level.iter().map(|&n| scale(n)).collect())
                .collect(),
            values: scale(self.values),
        }
    }

    pub fn of(tensor: &Tensor<f64>) -> Self {
        OutputSizes {
            arrays: (0..tensor.format().levels().len())
                .map(|k| tensor.level(k).arrays.iter().map(|a| a.len()).collect())
                .collect(),
            values: tensor.values().len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;

    /// Random in-order entries of `shape`: rows left empty, some long.
    fn sorted_entries(rng: &mut Rng, shape: &[usize]) -> Vec<(Vec<i64>, f64)> {
        let total: usize = shape.iter().product();
        let mut out = Vec::new();
        for flat in 0..total {
            let mut rest = flat;
            let mut coords = vec![0i64; shape.len()];
            for (c, &n) in coords.iter_mut().zip(shape).rev() {
                *c = (rest % n) as i64;
                rest /= n;
            }
            if rng.below(4) == 0 && coords[0] % 3 != 1 {
                out.push((coords, rng.below(9) as f64 - 4.0));
            }
        }
        out
    }

    fn packed(shape: &[usize], format: &Format, entries: &[(Vec<i64>, f64)]) -> Tensor<f64> {
        let mut list = tessera_formats::CoordinateList::new(shape);
        for (c, v) in entries {
            let c: Vec<u64> = c.iter().map(|&x| x as u64).collect();
            list.push(&c, *v).unwrap();
        }
        Tensor::pack(&list, format.clone()).unwrap()
    }

    /// Entries handed over in batches (rows opened by arithmetic where the
    /// levels above the last are dense), one by one, or as a part of a
    /// parallel run's rows, all give the tensor packing gives.
    #[test]
    fn assembled_outputs_are_the_packed_tensors() {
        use tessera_formats::LevelFormat;
        let mut rng = Rng::new(5);
        let dense_dense_compressed = Format::from_levels(
            &[LevelFormat::dense(), LevelFormat::dense(), LevelFormat::compressed()],
            &[0, 1, 2],
        )
        .unwrap();
        let dense_coo = Format::from_levels(
            &[
                LevelFormat::dense(),
                LevelFormat::compressed().non_unique(),
                LevelFormat::singleton(),
            ],
            &[0, 1, 2],
        )
        .unwrap();
        let cases = [
            (vec![7, 9], Format::csr()),
            (vec![7, 9], Format::dcsr()),
            (vec![7, 9], Format::csc()),
            (vec![1, 1], Format::csr()),
            (vec![0, 4], Format::csr()),
            (vec![4, 3, 5], dense_dense_compressed),
            (vec![4, 3, 5], Format::csf(3)),
            // Coordinate lists, appended a level at a time, and below a
            // dense level.
            (vec![7, 9], Format::coo(2)),
            (vec![1, 1], Format::coo(2)),
            (vec![4, 3, 5], Format::coo(3)),
            (vec![4, 3, 5], dense_coo),
        ];
        for (shape, format) in cases {
            let order = format.mode_order().unwrap();
            let mut entries: Vec<(Vec<i64>, f64)> = sorted_entries(&mut rng, &shape)
                .into_iter()
                .map(|(c, v)| (order.iter().map(|&m| c[m]).collect(), v))
                .collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            let want = packed(&shape, &format, &{
                let mut by_mode = entries.clone();
                for (c, _) in &mut by_mode {
                    let mut natural = vec![0; c.len()];
                    for (k, &m) in order.iter().enumerate() {
                        natural[m] = c[k];
                    }
                    *c = natural;
                }
                by_mode
            });
            let words: Vec<i64> = entries
                .iter()
                .flat_map(|(c, v)| c.iter().copied().chain([v.to_bits() as i64]))
                .collect();
            let width = shape.len();
            for batch in [1, 3, 1000] {
                let mut a = Assembler::new(format.clone(), &shape);
                for chunk in words.chunks((width + 1) * batch) {
                    a.append_entries(chunk, width);
                }
                let got = a.finish().unwrap();
                assert!(
                    crate::testing::same_bits(&got, &want),
                    "{format} {shape:?} in batches of {batch}"
                );
            }
            let mut one_by_one = Assembler::new(format.clone(), &shape);
            for (c, v) in &entries {
                one_by_one.append(c, *v);
            }
            assert!(
                crate::testing::same_bits(&one_by_one.finish().unwrap(), &want),
                "{format} one by one"
            );
        }
    }

    /// Entries with the coordinates of the one before add up, in a batch
    /// as one by one, whether a row was opened by arithmetic or not.
    #[test]
    fn repeated_entries_in_a_batch_add_up() {
        let entries = [
            (0, 1, 1.0),
            (0, 1, 2.0),
            (1, 0, 3.0),
            (1, 0, 4.0),
            (1, 2, 0.5),
            (3, 3, 5.0),
            (3, 3, -5.0),
        ];
        let words: Vec<i64> = entries
            .iter()
            .flat_map(|&(i, j, v): &(i64, i64, f64)| [i, j, v.to_bits() as i64])
            .collect();
        for (format, batch) in [Format::csr(), Format::coo(2)]
            .iter()
            .flat_map(|f| [(f, 1), (f, 2), (f, 7)])
        {
            let mut a = Assembler::new(format.clone(), &[4, 4]);
            for chunk in words.chunks(3 * batch) {
                a.append_entries(chunk, 2);
            }
            let got = a.finish().unwrap();
            let want = [
                (vec![0, 1], 3.0),
                (vec![1, 0], 7.0),
                (vec![1, 2], 0.5),
                (vec![3, 3], 0.0),
            ];
            assert!(
                crate::testing::same_bits(&got, &packed(&[4, 4], format, &want)),
                "{format} in batches of {batch}"
            );
        }
    }

    /// Entries out of order are not trusted: the finished output is
    /// checked, and refused.
    #[test]
    fn entries_out_of_order_are_refused_at_finish() {
        for format in [Format::csr(), Format::dcsr(), Format::coo(2)] {
            let mut a = Assembler::new(format.clone(), &[3, 4]);
            let words: Vec<i64> = [(1, 2), (1, 0), (2, 1)]
                .iter()
                .flat_map(|&(i, j)| [i, j, 1f64.to_bits() as i64])
                .collect();
            a.append_entries(&words, 2);
            assert!(a.finish().is_err(), "{format}: out of order within a row");
            let mut b = Assembler::new(format.clone(), &[3, 4]);
            b.append(&[2, 0], 1.0);
            b.append(&[1, 3], 1.0);
            assert!(b.finish().is_err(), "{format}: a row after a later one");
            let mut c = Assembler::new(format.clone(), &[3, 4]);
            c.append(&[0, 1], 1.0);
            c.append(&[0, 4], 1.0);
            assert!(c.finish().is_err(), "{format}: a column outside the shape");
        }
    }
}
