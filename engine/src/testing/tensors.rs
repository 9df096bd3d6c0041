//! Random tensor contents: coordinate lists of the awkward kinds that break
//! sparse code (empty, one entry, empty rows and columns, duplicates,
//! unsorted input, one heavy row, hypersparse, nearly dense, full).
//!
//! Values are small multiples of 1/4, so sums and products of a few of them
//! are exact in `f64` and engine and reference agree to the last bit unless
//! a kernel is wrong (or the statement divides).

use tessera_formats::{CoordinateList, Format, Tensor};

use super::Rng;

/// The kind of contents [`random_entries`] draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// No entries at all.
    Empty,
    /// Exactly one entry.
    Single,
    /// About a third of the components, uniformly.
    Random,
    /// Entries only in some rows and some columns (mode-0 and mode-1
    /// coordinates from small random subsets), so whole slices are empty.
    EmptySlices,
    /// Entries given two or three times each: packing sums them, and some
    /// sum to an explicit stored zero.
    Duplicates,
    /// Random entries pushed in a shuffled order.
    Unsorted,
    /// One mode-0 slice holds most entries; the rest have one or none.
    Skewed,
    /// One to three entries, whatever the shape.
    Hypersparse,
    /// About nine components in ten.
    DenseIsh,
    /// Every component, each nonzero: safe as a divisor.
    Full,
}

impl EntryKind {
    /// Every kind, for tables that loop over them.
    pub const ALL: [EntryKind; 10] = [
        EntryKind::Empty,
        EntryKind::Single,
        EntryKind::Random,
        EntryKind::EmptySlices,
        EntryKind::Duplicates,
        EntryKind::Unsorted,
        EntryKind::Skewed,
        EntryKind::Hypersparse,
        EntryKind::DenseIsh,
        EntryKind::Full,
    ];

    /// A kind drawn uniformly from [`ALL`](Self::ALL).
    pub fn random(rng: &mut Rng) -> EntryKind {
        *rng.pick(&Self::ALL)
    }
}

/// A small nonzero value: a multiple of 1/4 in `[-3, 3]`.
pub fn random_value(rng: &mut Rng) -> f64 {
    let quarters = rng.range(1, 12) as f64 / 4.0;
    if rng.percent(50) {
        -quarters
    } else {
        quarters
    }
}

/// A shape of `order` modes with every dimension in `1..=max_dim`, ones
/// being likelier than their share (1x1 matrices, one-row slices).
pub fn random_shape(rng: &mut Rng, order: usize, max_dim: usize) -> Vec<usize> {
    (0..order)
        .map(|_| {
            if rng.percent(12) {
                1
            } else {
                rng.range(1, max_dim.max(1))
            }
        })
        .collect()
}

/// Row-major coordinates of component `flat` of `shape`.
fn unflatten(mut flat: usize, shape: &[usize], out: &mut [u64]) {
    for (c, &d) in out.iter_mut().zip(shape).rev() {
        *c = (flat % d) as u64;
        flat /= d;
    }
}

/// Random entries of a tensor of `shape`, of the given kind. The list is in
/// increasing coordinate order unless the kind says otherwise
/// ([`EntryKind::Unsorted`], [`EntryKind::Duplicates`]). Order-0 shapes
/// give at most one entry (the scalar), except for duplicates. Kinds drawn
/// by density visit every component of `shape`: keep those shapes small
/// (large shapes suit [`EntryKind::Hypersparse`], `Single` and `Empty`).
///
/// ```
/// use tessera_engine::testing::{random_entries, EntryKind, Rng};
/// let mut rng = Rng::new(3);
/// let list = random_entries(&mut rng, &[4, 5], EntryKind::Full);
/// assert_eq!(list.len(), 20);
/// assert!(list.values().iter().all(|&v| v != 0.0));
/// ```
pub fn random_entries(rng: &mut Rng, shape: &[usize], kind: EntryKind) -> CoordinateList<f64> {
    let mut list = CoordinateList::new(shape);
    let total: usize = shape.iter().product();
    if total == 0 {
        return list;
    }
    let mut coords = vec![0u64; shape.len()];
    let push = |list: &mut CoordinateList<f64>, coords: &[u64], v: f64| {
        list.push(coords, v)
            .expect("generated coordinates are within the shape");
    };
    // Components chosen by a per-component coin with `percent` chance.
    let by_density = |rng: &mut Rng, percent: u32, keep: &dyn Fn(&[u64]) -> bool| {
        let mut chosen = Vec::new();
        let mut c = vec![0u64; shape.len()];
        for flat in 0..total {
            unflatten(flat, shape, &mut c);
            if keep(&c) && rng.percent(percent) {
                chosen.push(flat);
            }
        }
        chosen
    };
    let chosen: Vec<usize> = match kind {
        EntryKind::Empty => Vec::new(),
        EntryKind::Single => vec![rng.below(total)],
        EntryKind::Random | EntryKind::Unsorted => by_density(rng, 33, &|_| true),
        EntryKind::EmptySlices => {
            // Keep a random subset of the coordinates of the first two modes.
            let keep_of = |rng: &mut Rng, d: usize| -> Vec<bool> { (0..d).map(|_| rng.percent(40)).collect() };
            let rows = shape.first().map(|&d| keep_of(rng, d)).unwrap_or_default();
            let cols = shape.get(1).map(|&d| keep_of(rng, d)).unwrap_or_default();
            by_density(rng, 60, &|c: &[u64]| {
                c.first().is_none_or(|&r| rows[r as usize]) && c.get(1).is_none_or(|&k| cols[k as usize])
            })
        }
        EntryKind::Duplicates => by_density(rng, 30, &|_| true),
        EntryKind::Skewed => {
            let heavy = if shape.is_empty() {
                0
            } else {
                rng.below(shape[0]) as u64
            };
            let mut chosen = by_density(rng, 85, &|c: &[u64]| c.first().is_none_or(|&r| r == heavy));
            // At most one entry in each other mode-0 slice.
            let slice = total / shape.first().copied().unwrap_or(1).max(1);
            for r in 0..shape.first().copied().unwrap_or(0) as u64 {
                if r != heavy && rng.percent(40) {
                    chosen.push(r as usize * slice + rng.below(slice));
                }
            }
            chosen.sort_unstable();
            chosen
        }
        EntryKind::Hypersparse => {
            let mut chosen: Vec<usize> = (0..rng.range(1, 3)).map(|_| rng.below(total)).collect();
            chosen.sort_unstable();
            chosen.dedup();
            chosen
        }
        EntryKind::DenseIsh => by_density(rng, 90, &|_| true),
        EntryKind::Full => (0..total).collect(),
    };
    match kind {
        EntryKind::Duplicates => {
            let mut entries: Vec<(usize, f64)> = Vec::new();
            for &flat in &chosen {
                let v = random_value(rng);
                match rng.below(3) {
                    // Two halves of one value.
                    0 => {
                        entries.push((flat, v / 2.0));
                        entries.push((flat, v / 2.0));
                    }
                    // A value and its negation: an explicit zero once packed.
                    1 => {
                        entries.push((flat, v));
                        entries.push((flat, -v));
                    }
                    _ => entries.push((flat, v)),
                }
            }
            rng.shuffle(&mut entries);
            for (flat, v) in entries {
                unflatten(flat, shape, &mut coords);
                push(&mut list, &coords, v);
            }
        }
        _ => {
            let mut chosen = chosen;
            if kind == EntryKind::Unsorted {
                rng.shuffle(&mut chosen);
            }
            for flat in chosen {
                unflatten(flat, shape, &mut coords);
                let v = random_value(rng);
                push(&mut list, &coords, v);
            }
        }
    }
    list
}

/// Packs random entries of `kind` into `format`, or says why packing
/// refused them.
pub fn random_tensor(rng: &mut Rng, shape: &[usize], kind: EntryKind, format: &Format) -> Result<Tensor<f64>, String> {
    let entries = random_entries(rng, shape, kind);
    Tensor::pack(&entries, format.clone())
        .map_err(|e| format!("packing {kind:?} entries of shape {shape:?} into {format}: {e}"))
}

/// Random tensors for a table's trial: `reads` names each tensor and its
/// index variables (`("B", "ij")`); each variable gets one size from
/// `size`, each tensor the trial's turn of the named formats of its shape
/// ([`named_formats`](super::named_formats)) and of the entry kinds, so
/// that a table's trials go through every format and every awkward kind.
///
/// ```
/// use tessera_engine::testing::{rotated_tensors, Rng};
/// let mut rng = Rng::new(1);
/// let t = rotated_tensors(&mut rng, &[("A", "ij"), ("x", "j")], 3, &mut |rng| rng.range(1, 6));
/// assert_eq!(t[0].1.shape()[1], t[1].1.shape()[0]);
/// ```
pub fn rotated_tensors(
    rng: &mut Rng,
    reads: &[(&str, &str)],
    trial: usize,
    size: &mut dyn FnMut(&mut Rng) -> usize,
) -> Vec<(String, Tensor<f64>)> {
    let mut sizes: Vec<(char, usize)> = Vec::new();
    let mut tensors = Vec::new();
    for (o, (name, vars)) in reads.iter().enumerate() {
        let shape: Vec<usize> = vars
            .chars()
            .map(|v| match sizes.iter().find(|(s, _)| *s == v) {
                Some(&(_, n)) => n,
                None => {
                    let n = size(rng);
                    sizes.push((v, n));
                    n
                }
            })
            .collect();
        let formats = super::named_formats(&shape);
        let format = &formats[(trial + 5 * o) % formats.len()];
        let kind = EntryKind::ALL[(trial + 3 * o) % EntryKind::ALL.len()];
        let tensor = random_tensor(rng, &shape, kind, format).expect("named formats pack every kind");
        tensors.push((name.to_string(), tensor));
    }
    tensors
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dense(list: &CoordinateList<f64>) -> Vec<f64> {
        let mut l = list.clone();
        l.canonicalize();
        Tensor::pack(&l, Format::dense(list.order()))
            .unwrap()
            .to_dense_vec()
            .unwrap()
    }

    #[test]
    fn every_kind_gives_entries_within_the_shape() {
        let mut rng = Rng::new(9);
        for shape in [vec![], vec![1], vec![7], vec![1, 1], vec![5, 6], vec![3, 2, 4]] {
            for kind in EntryKind::ALL {
                let list = random_entries(&mut rng, &shape, kind);
                assert_eq!(list.shape(), &shape[..]);
                let n: usize = shape.iter().product();
                match kind {
                    EntryKind::Empty => assert!(list.is_empty()),
                    EntryKind::Single => assert_eq!(list.len(), 1),
                    EntryKind::Full => {
                        assert_eq!(list.len(), n);
                        assert!(dense(&list).iter().all(|&v| v != 0.0));
                    }
                    EntryKind::Hypersparse => assert!((1..=3).contains(&list.len())),
                    _ => {}
                }
            }
        }
    }

    #[test]
    fn unsorted_and_duplicate_kinds_are_not_canonical() {
        let mut rng = Rng::new(5);
        let shuffled = (0..20)
            .map(|_| random_entries(&mut rng, &[8, 8], EntryKind::Unsorted))
            .any(|l| !l.is_canonical());
        let repeated = (0..20)
            .map(|_| random_entries(&mut rng, &[8, 8], EntryKind::Duplicates))
            .any(|l| !l.is_canonical());
        assert!(shuffled && repeated);
    }

    #[test]
    fn skewed_puts_most_entries_in_one_row() {
        let mut rng = Rng::new(11);
        let list = random_entries(&mut rng, &[10, 40], EntryKind::Skewed);
        let mut per_row = [0usize; 10];
        for (c, _) in list.iter() {
            per_row[c[0] as usize] += 1;
        }
        let max = *per_row.iter().max().unwrap();
        assert!(max >= 20 && per_row.iter().filter(|&&n| n > 1).count() == 1);
    }
}
