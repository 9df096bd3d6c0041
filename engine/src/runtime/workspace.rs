//! A kernel's workspace: values collected by coordinates in any order and
//! handed over sorted, as a dense array with a two-level bitmap of the keys
//! set, or hashed when the coordinates are too many for an array.

use std::cell::Cell;

use hashbrown::HashMap;
use tessera_formats::IndexArray;

use crate::block_ops::{workspace_add, workspace_key, workspace_row};
use crate::interp::{Eager, Operands};
use crate::words::Adder;

/// Workspaces with at most this many slots are dense arrays; larger ones
/// hash their coordinates. (Dense keys then fit 32 bits.)
const DENSE_WORKSPACE_LIMIT: usize = 1 << 22;

/// A dense workspace as compiled kernels see it, adding to it as
/// [`crate::block_ops::workspace_add`] states for every tier.
#[derive(Debug, Clone, Copy)]
pub struct DenseWorkspaceParts {
    pub values: *mut f64,
    /// One bit per key: whether it holds a value.
    pub set: *mut u64,
    /// Keys fit 32 bits: dense workspaces have at most
    /// `DENSE_WORKSPACE_LIMIT` slots.
    pub touched: *mut u32,
    pub count: *mut usize,
    pub strides: *const u64,
}

/// A dense workspace's storage as cells, read and written by the
/// interpreter's builder ([`crate::block_ops::workspace_add`]).
#[derive(Clone, Copy)]
pub struct WorkspaceCells<'b> {
    pub values: &'b [Cell<f64>],
    /// The bitmap of the keys set.
    pub keys: &'b [Cell<u64>],
    pub touched: &'b [Cell<u32>],
    pub count: &'b Cell<usize>,
    pub strides: &'b [u64],
    pub adder: Adder,
}

/// Collects values by coordinates (the workspace's variables), then hands
/// them over sorted.
pub struct Workspace {
    pub extents: Vec<usize>,
    strides: Vec<u64>,
    store: WorkspaceStore,
    /// How values at one key add up.
    pub adder: Adder,
    /// Whether a dense store hands its keys over in increasing order, or
    /// in the order they were first set (for an unordered level).
    sorted: bool,
}

enum WorkspaceStore {
    Dense {
        values: Vec<f64>,
        set: KeySet,
        /// The keys set since the last drain: `touched[..count]`. Sized
        /// for every slot, so compiled kernels append to it in place.
        touched: Box<[u32]>,
        count: usize,
    },
    Hashed(HashMap<u64, f64>),
    Wide(std::collections::BTreeMap<Vec<i64>, f64>),
}

impl Workspace {
    pub fn new(extents: &[usize]) -> Self {
        let mut strides = vec![1u64; extents.len()];
        let mut total: Option<u64> = Some(1);
        for k in (0..extents.len()).rev() {
            strides[k] = total.unwrap_or(0);
            total = total.and_then(|t| t.checked_mul(extents[k] as u64));
        }
        let store = match total {
            Some(t) if t as usize <= DENSE_WORKSPACE_LIMIT => WorkspaceStore::Dense {
                values: vec![0.0; t as usize],
                set: KeySet::new(t as usize),
                touched: vec![0; t as usize].into_boxed_slice(),
                count: 0,
            },
            Some(_) => WorkspaceStore::Hashed(HashMap::new()),
            None => WorkspaceStore::Wide(Default::default()),
        };
        Workspace {
            extents: extents.to_vec(),
            strides,
            store,
            adder: Adder::Float,
            sorted: true,
        }
    }

    /// A fresh, empty workspace of the same extents, adding and handing
    /// keys over as this one does.
    pub fn empty_like(&self) -> Self {
        Workspace {
            adder: self.adder,
            sorted: self.sorted,
            ..Workspace::new(&self.extents)
        }
    }

    /// The storage of a dense workspace as cells, for the ops that add
    /// into it ([`workspace_add`]); `None` for other stores.
    pub fn dense_cells(&mut self) -> Option<WorkspaceCells<'_>> {
        let WorkspaceStore::Dense {
            values,
            set,
            touched,
            count,
        } = &mut self.store
        else {
            return None;
        };
        Some(WorkspaceCells {
            values: Cell::from_mut(values.as_mut_slice()).as_slice_of_cells(),
            keys: Cell::from_mut(set.words.as_mut_slice()).as_slice_of_cells(),
            touched: Cell::from_mut(&mut touched[..]).as_slice_of_cells(),
            count: Cell::from_mut(count),
            strides: &self.strides,
            adder: self.adder,
        })
    }

    /// Whether the store is a dense array ([`dense_parts`](Self::dense_parts)).
    pub fn is_dense(&self) -> bool {
        matches!(self.store, WorkspaceStore::Dense { .. })
    }

    /// The raw parts of a dense store, for compiled kernels that add into
    /// it in place; `None` for other stores.
    pub fn dense_parts(&mut self) -> Option<DenseWorkspaceParts> {
        let WorkspaceStore::Dense {
            values,
            set,
            touched,
            count,
        } = &mut self.store
        else {
            return None;
        };
        Some(DenseWorkspaceParts {
            values: values.as_mut_ptr(),
            set: set.words.as_mut_ptr(),
            touched: touched.as_mut_ptr(),
            count,
            strides: self.strides.as_ptr(),
        })
    }

    /// Whether the workspace hands its keys over in increasing order (not
    /// [`in_any_order`](Self::in_any_order)).
    pub fn sorted(&self) -> bool {
        self.sorted
    }

    /// The workspace handing a dense store's keys over in the order they
    /// were first set, not sorted: for the one unordered level it fills,
    /// where sorting would be wasted work. Other stores still sort.
    pub fn in_any_order(mut self) -> Self {
        self.sorted = false;
        self
    }

    /// The workspace adding values with `adder`.
    pub fn with_adder(mut self, adder: Adder) -> Self {
        self.adder = adder;
        self
    }

    /// The key of `coords` in a dense or hashed store. A wide store keys by
    /// the coordinates themselves, and its key wraps unused.
    fn key(&self, coords: &[i64]) -> u64 {
        coords
            .iter()
            .zip(&self.strides)
            .fold(0u64, |key, (&c, &s)| key.wrapping_add((c as u64).wrapping_mul(s)))
    }

    pub fn accumulate(&mut self, coords: &[i64], value: f64) {
        if let Some(cells) = self.dense_cells() {
            let mut k = Eager::new(Operands::levels(&[]).with_workspace(cells));
            let key = workspace_key(&mut k, coords, true);
            return workspace_add(&mut k, key, value);
        }
        let key = self.key(coords);
        match &mut self.store {
            WorkspaceStore::Dense { .. } => unreachable!("added to above"),
            WorkspaceStore::Hashed(map) => self.adder.add_to(map.entry(key).or_insert(0.0), value),
            WorkspaceStore::Wide(map) => self.adder.add_to(map.entry(coords.to_vec()).or_insert(0.0), value),
        }
    }

    /// Adds `scale * values[p]` at `prefix ++ [coords[p]]` for each `p` in
    /// `range`: a Gustavson row in one call, the same sums in the same order
    /// as one [`accumulate`](Self::accumulate) per entry.
    pub fn accumulate_row(
        &mut self,
        prefix: &[i64],
        coords: &IndexArray,
        values: &[f64],
        scale: f64,
        range: std::ops::Range<usize>,
    ) {
        if let Some(cells) = self.dense_cells() {
            // The adder a constant in each arm: the loop adds with no
            // dispatch per entry.
            let with = |adder| WorkspaceCells { adder, ..cells };
            let row = (coords, values, scale, range);
            return match cells.adder {
                Adder::Float => add_row(with(Adder::Float), prefix, row),
                Adder::I64 => add_row(with(Adder::I64), prefix, row),
                Adder::I32 => add_row(with(Adder::I32), prefix, row),
            };
        }
        let mut full: smallvec::SmallVec<[i64; 8]> = prefix.iter().copied().collect();
        full.push(0);
        for p in range {
            *full.last_mut().expect("pushed above") = coords.get(p);
            self.accumulate(&full, scale * values[p]);
        }
    }

    /// For a dense workspace: hands its keys, sorted (unless
    /// [`in_any_order`](Self::in_any_order)), and its values to `f`, which
    /// takes the value of each key (leaving zero), and clears the
    /// workspace. Returns false, doing nothing, for other workspaces.
    pub fn drain_dense(&mut self, f: impl FnOnce(&[u32], &mut [f64])) -> bool {
        let WorkspaceStore::Dense {
            values,
            set,
            touched,
            count,
        } = &mut self.store
        else {
            return false;
        };
        let keys = &mut touched[..*count];
        set.drain(keys, self.sorted);
        f(keys, values);
        *count = 0;
        true
    }

    /// Hands over every entry, in coordinate order unless
    /// [`in_any_order`](Self::in_any_order), and clears the workspace.
    pub fn drain(&mut self, mut sink: impl FnMut(&[i64], f64)) {
        // Runs once per flushed row: no allocation for the usual orders.
        let mut coords: smallvec::SmallVec<[i64; 8]> = smallvec::smallvec![0; self.extents.len()];
        let strides = &self.strides;
        let decode = |key: u64, coords: &mut [i64]| {
            if let [only] = coords {
                *only = key as i64;
                return;
            }
            let mut rest = key;
            for (c, &s) in coords.iter_mut().zip(strides) {
                *c = (rest / s.max(1)) as i64;
                rest %= s.max(1);
            }
        };
        match &mut self.store {
            WorkspaceStore::Dense {
                values,
                set,
                touched,
                count,
            } => {
                let keys = &mut touched[..*count];
                set.drain(keys, self.sorted);
                for &key in keys.iter() {
                    let k = key as usize;
                    decode(u64::from(key), &mut coords);
                    sink(&coords, std::mem::take(&mut values[k]));
                }
                *count = 0;
            }
            WorkspaceStore::Hashed(map) => {
                let mut entries: Vec<(u64, f64)> = map.drain().collect();
                entries.sort_unstable_by_key(|e| e.0);
                for (key, v) in entries {
                    decode(key, &mut coords);
                    sink(&coords, v);
                }
            }
            WorkspaceStore::Wide(map) => {
                for (c, v) in std::mem::take(map) {
                    sink(&c, v);
                }
            }
        }
    }
}

/// [`Workspace::accumulate_row`] on a dense store, through the
/// interpreter's builder.
#[inline(always)]
fn add_row(
    cells: WorkspaceCells<'_>,
    prefix: &[i64],
    (coords, values, scale, range): (&IndexArray, &[f64], f64, std::ops::Range<usize>),
) {
    let mut k = Eager::new(Operands::levels(&[]).with_workspace(cells));
    let base = workspace_key(&mut k, prefix, false);
    let (begin, end) = (range.start as i64, range.end as i64);
    workspace_row(&mut k, (coords, (values, 0)), (begin, end), scale, base);
}

/// The keys a dense workspace holds: one bit per key, and, while a drain
/// runs, one summary bit per word of keys, so that the keys come out in
/// order by visiting only the words that hold some. Adding a key marks
/// only its own bit (`block_ops::workspace_add`): the drain marks the
/// summary from the list of keys.
struct KeySet {
    words: Vec<u64>,
    /// All zero outside a drain.
    summary: Vec<u64>,
}

impl KeySet {
    fn new(slots: usize) -> Self {
        let words = slots.div_ceil(64);
        KeySet {
            words: vec![0; words],
            summary: vec![0; words.div_ceil(64)],
        }
    }

    /// Empties the set, whose keys are exactly those of `keys` (in any
    /// order), leaving `keys` in increasing order when `sorted`.
    fn drain(&mut self, keys: &mut [u32], sorted: bool) {
        if sorted {
            return self.drain_sorted(keys);
        }
        self.clear_words_of(keys);
    }

    /// Clears the words that hold `keys`.
    fn clear_words_of(&mut self, keys: &[u32]) {
        for &key in keys {
            self.words[key as usize / 64] = 0;
        }
    }

    /// Writes the keys, which are exactly those of `keys` (in any order),
    /// into `keys` in increasing order, and empties the set. Marking the
    /// summary from `keys`, then visiting it and the words it marks, takes
    /// about `summary + 3 n` steps; sorting takes about `n log n`: the
    /// cheaper is chosen.
    fn drain_sorted(&mut self, keys: &mut [u32]) {
        let n = keys.len();
        let log = (usize::BITS - n.leading_zeros()) as usize;
        if self.summary.len() + 3 * n <= n * log {
            for &key in keys.iter() {
                let w = key as usize / 64;
                self.summary[w / 64] |= 1 << (w % 64);
            }
            let mut k = 0;
            for (s, summary) in self.summary.iter_mut().enumerate() {
                let mut marked = std::mem::take(summary);
                while marked != 0 {
                    let w = s * 64 + marked.trailing_zeros() as usize;
                    marked &= marked - 1;
                    let mut bits = std::mem::take(&mut self.words[w]);
                    while bits != 0 {
                        keys[k] = (w * 64) as u32 + bits.trailing_zeros();
                        k += 1;
                        bits &= bits - 1;
                    }
                }
            }
            debug_assert_eq!(k, n, "the set holds exactly the touched keys");
        } else {
            keys.sort_unstable();
            self.clear_words_of(keys);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::testing::Rng;

    /// Adds `entries` to a fresh workspace and drains it.
    fn drained(extents: &[usize], entries: &[(Vec<i64>, f64)]) -> Vec<(Vec<i64>, f64)> {
        let mut ws = Workspace::new(extents);
        for (coords, v) in entries {
            ws.accumulate(coords, *v);
        }
        let mut out = Vec::new();
        ws.drain(|c, v| out.push((c.to_vec(), v)));
        out
    }

    #[test]
    fn workspaces_hand_over_sums_in_coordinate_order_whether_sorted_or_scanned() {
        let mut rng = Rng::new(11);
        // Few keys in many slots are sorted; many keys in few words are
        // scanned; both, and every kind of store, must agree.
        for (extents, count) in [
            (vec![5000], 3),
            (vec![5000], 4000),
            (vec![70], 50),
            (vec![40, 90], 30),
            (vec![40, 90], 3000),
            (vec![1 << 23], 20),
            (vec![1 << 40, 1 << 40], 20),
        ] {
            for _ in 0..3 {
                let entries: Vec<(Vec<i64>, f64)> = (0..count)
                    .map(|_| {
                        let coords = extents.iter().map(|&e| rng.below(e.min(1 << 20)) as i64).collect();
                        (coords, rng.below(9) as f64 - 4.0)
                    })
                    .collect();
                let mut want: BTreeMap<Vec<i64>, f64> = BTreeMap::new();
                for (c, v) in &entries {
                    *want.entry(c.clone()).or_insert(0.0) += v;
                }
                let want: Vec<(Vec<i64>, f64)> = want.into_iter().collect();
                assert_eq!(
                    drained(&extents, &entries),
                    want,
                    "extents {extents:?}, {count} entries"
                );
            }
        }
    }

    #[test]
    fn a_scattered_row_adds_what_one_accumulate_per_entry_adds() {
        let mut rng = Rng::new(5);
        // Dense, hashed and wide stores; 32- and 64-bit coordinates.
        for extents in [vec![300], vec![7, 300], vec![1 << 23], vec![1 << 40, 1 << 40]] {
            let last = *extents.last().expect("one extent at least");
            let n = 200;
            let coords: Vec<u64> = (0..n).map(|_| rng.below(last.min(1 << 20)) as u64).collect();
            let values: Vec<f64> = (0..n).map(|_| rng.below(9) as f64 - 4.0).collect();
            let prefix: Vec<i64> = extents[..extents.len() - 1]
                .iter()
                .map(|&e| rng.below(e) as i64)
                .collect();
            let (scale, range) = (1.5, 20..170);
            for index in [
                IndexArray::U32(coords.iter().map(|&c| c as u32).collect()),
                IndexArray::U64(coords.clone()),
            ] {
                let mut by_row = Workspace::new(&extents);
                by_row.accumulate(&[&prefix[..], &[3]].concat(), 0.25);
                by_row.accumulate_row(&prefix, &index, &values, scale, range.clone());
                let mut by_entry = Workspace::new(&extents);
                by_entry.accumulate(&[&prefix[..], &[3]].concat(), 0.25);
                for p in range.clone() {
                    by_entry.accumulate(&[&prefix[..], &[coords[p] as i64]].concat(), scale * values[p]);
                }
                let (mut got, mut want) = (Vec::new(), Vec::new());
                by_row.drain(|c, v| got.push((c.to_vec(), v)));
                by_entry.drain(|c, v| want.push((c.to_vec(), v)));
                assert_eq!(got, want, "extents {extents:?}");
                assert!(got.len() > 50, "extents {extents:?}: the row set {} keys", got.len());
            }
        }
    }

    #[test]
    fn a_drained_workspace_is_empty_and_reusable() {
        let mut ws = Workspace::new(&[300]);
        for k in 0..300 {
            ws.accumulate(&[k], 1.0);
        }
        ws.drain(|_, _| {});
        ws.accumulate(&[7], 2.0);
        let mut out = Vec::new();
        ws.drain(|c, v| out.push((c[0], v)));
        assert_eq!(out, vec![(7, 2.0)]);
    }
}
