//! Random formats: every named format of an order, and random per-level
//! compositions (dense, compressed ordered or not, compressed(nonunique)
//! over singletons, hashed; any mode order) that [`Format::new`] accepts.

use tessera_formats::{Format, LevelFormat, LevelKind};

use super::Rng;

/// Every named format that stores tensors of `shape`: dense in every mode
/// order, COO and CSF in every mode order (up to order 3; natural and
/// reversed beyond), the matrix formats (CSR, CSC, DCSR, DCSC, hash rows,
/// DIA, ELL, BCSR with every block size up to 3x3 that divides the shape)
/// and the vector formats (sparse, hash).
pub fn named_formats(shape: &[usize]) -> Vec<Format> {
    let order = shape.len();
    let mut out = Vec::new();
    for modes in mode_orders(order) {
        out.push(Format::dense_ordered(&modes));
    }
    if order == 0 {
        return out;
    }
    for modes in mode_orders(order) {
        out.push(Format::coo_ordered(&modes));
        out.push(Format::csf_ordered(&modes));
    }
    match order {
        1 => {
            out.push(Format::sparse_vector());
            out.push(Format::hash_vector());
        }
        2 => {
            out.extend([
                Format::csr(),
                Format::csc(),
                Format::dcsr(),
                Format::dcsc(),
                Format::hash_rows(),
                Format::dia(),
                Format::ell(),
            ]);
            for r in 1..=3 {
                for c in 1..=3 {
                    if shape[0] % r == 0 && shape[1] % c == 0 && (r, c) != (1, 1) {
                        if let Ok(f) = Format::bcsr(r, c) {
                            out.push(f);
                        }
                    }
                }
            }
        }
        _ => {}
    }
    out.dedup();
    out
}

/// The mode orders worth trying for `order` modes: all of them up to order
/// 3, natural, reversed and one rotation beyond.
pub fn mode_orders(order: usize) -> Vec<Vec<usize>> {
    let natural: Vec<usize> = (0..order).collect();
    if order <= 3 {
        let mut all = Vec::new();
        permutations(&natural, &mut Vec::new(), &mut all);
        return all;
    }
    let reversed: Vec<usize> = natural.iter().rev().copied().collect();
    let mut rotated = natural.clone();
    rotated.rotate_left(1);
    vec![natural, reversed, rotated]
}

fn permutations(rest: &[usize], prefix: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    if rest.is_empty() {
        out.push(prefix.clone());
        return;
    }
    for k in 0..rest.len() {
        let mut r = rest.to_vec();
        let m = r.remove(k);
        prefix.push(m);
        permutations(&r, prefix, out);
        prefix.pop();
    }
}

/// A random mode order of `order` modes.
pub fn random_mode_order(rng: &mut Rng, order: usize) -> Vec<usize> {
    let mut modes: Vec<usize> = (0..order).collect();
    rng.shuffle(&mut modes);
    modes
}

/// A random per-mode composition for tensors of `shape`: each level dense,
/// compressed (ordered or not), hashed, or a run of compressed(nonunique) over singletons
/// (a COO segment), in a random mode order; redrawn until [`Format::new`]
/// accepts it (a few tries, then CSF).
pub fn random_composition(rng: &mut Rng, order: usize) -> Format {
    for _ in 0..32 {
        let mut levels: Vec<LevelFormat> = Vec::with_capacity(order);
        while levels.len() < order {
            let left = order - levels.len();
            match rng.below(6) {
                0 => levels.push(LevelFormat::dense()),
                1 | 2 => levels.push(LevelFormat::compressed()),
                3 => levels.push(LevelFormat::hashed()),
                4 => levels.push(LevelFormat::compressed().unordered()),
                _ => {
                    // A COO run to the bottom or of random length.
                    let run = if rng.percent(50) { left } else { rng.range(1, left) };
                    if run == 1 {
                        levels.push(LevelFormat::compressed());
                        continue;
                    }
                    levels.push(LevelFormat::compressed().non_unique());
                    for k in 1..run {
                        let s = LevelFormat::singleton();
                        levels.push(if k + 1 < run { s.non_unique() } else { s });
                    }
                }
            }
        }
        let modes = random_mode_order(rng, order);
        if let Ok(f) = Format::from_levels(&levels, &modes) {
            return f;
        }
    }
    Format::csf(order)
}

/// A random format for tensors of `shape`: half the time a named format,
/// otherwise a random composition. Order-0 tensors are always dense.
pub fn random_format(rng: &mut Rng, shape: &[usize]) -> Format {
    if shape.is_empty() {
        return Format::dense(0);
    }
    if rng.percent(50) {
        let named = named_formats(shape);
        rng.pick(&named).clone()
    } else {
        random_composition(rng, shape.len())
    }
}

/// Whether a format stores every component (no sparse level): the kind an
/// all-dense input keeps.
pub fn is_all_dense(format: &Format) -> bool {
    format.levels().iter().all(|l| l.level.kind == LevelKind::Dense)
}

/// Formats that may hold a result of `shape`: dense (natural and reversed),
/// CSF/COO/hash as the order allows, CSR/CSC/DCSR/DCSC for matrices, sparse
/// and hash vectors; structured formats (DIA, ELL, BCSR) too.
pub fn output_formats(shape: &[usize]) -> Vec<Format> {
    named_formats(shape)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{random_tensor, EntryKind};

    #[test]
    fn named_formats_pack_every_kind() {
        let mut rng = Rng::new(2);
        for shape in [vec![], vec![5], vec![4, 6], vec![1, 1], vec![2, 3, 2], vec![2, 1, 2, 2]] {
            for f in named_formats(&shape) {
                for kind in EntryKind::ALL {
                    random_tensor(&mut rng, &shape, kind, &f).unwrap();
                }
            }
        }
    }

    #[test]
    fn random_compositions_are_valid_and_varied() {
        let mut rng = Rng::new(4);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..200 {
            let order = rng.range(1, 4);
            let f = random_composition(&mut rng, order);
            assert_eq!(f.order(), order);
            let shape = vec![3; order];
            random_tensor(&mut rng, &shape, EntryKind::Duplicates, &f).unwrap();
            seen.insert(f.to_string());
        }
        assert!(seen.len() > 40, "only {} distinct formats", seen.len());
    }
}
