//! What the benchmarks share: random CSR matrices as plain arrays, the
//! hand-written loops every tier is compared with, and kernels of a fresh
//! engine compiled by the Cranelift tier.

// Each bench target uses its own part of this module.
#![allow(dead_code)]

use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use tessera::formats::{Format, IndexArray, LevelStorage, Tensor};
use tessera::{EvalOptions, Inputs, Kernel, TierChoice};

/// A CSR matrix as plain arrays.
pub struct Csr {
    pub rows: usize,
    pub cols: usize,
    pub pos: Vec<u32>,
    pub idx: Vec<u32>,
    pub vals: Vec<f64>,
}

impl Csr {
    /// About `per_row` random distinct columns in each row, sorted.
    pub fn random(rng: &mut SmallRng, rows: usize, cols: usize, per_row: usize) -> Csr {
        let mut pos = Vec::with_capacity(rows + 1);
        let mut idx = Vec::with_capacity(rows * per_row);
        let mut vals = Vec::with_capacity(rows * per_row);
        let mut row: Vec<u32> = Vec::with_capacity(per_row);
        pos.push(0u32);
        for _ in 0..rows {
            row.clear();
            row.extend((0..per_row).map(|_| rng.random_range(0..cols as u32)));
            row.sort_unstable();
            row.dedup();
            idx.extend_from_slice(&row);
            vals.extend(row.iter().map(|_| rng.random_range(-1.0..1.0)));
            pos.push(idx.len() as u32);
        }
        Csr {
            rows,
            cols,
            pos,
            idx,
            vals,
        }
    }

    pub fn tensor(&self) -> Tensor<f64> {
        let dense = LevelStorage::new(self.rows);
        let mut compressed = LevelStorage::new(self.cols);
        compressed.arrays.push(IndexArray::U32(self.pos.clone()));
        compressed.arrays.push(IndexArray::U32(self.idx.clone()));
        Tensor::from_parts(
            &[self.rows, self.cols],
            Format::csr(),
            vec![dense, compressed],
            self.vals.clone(),
        )
        .expect("random CSR arrays are valid")
    }

    pub fn sprs(&self) -> sprs::CsMatI<f64, u32, u32> {
        sprs::CsMatI::new(
            (self.rows, self.cols),
            self.pos.clone(),
            self.idx.clone(),
            self.vals.clone(),
        )
    }

    pub fn nnz(&self) -> usize {
        self.vals.len()
    }
}

pub fn random_dense(rng: &mut SmallRng, shape: &[usize]) -> Tensor<f64> {
    let n = shape.iter().product();
    Tensor::from_dense(shape, (0..n).map(|_| rng.random_range(-1.0..1.0)).collect()).expect("dense tensors pack")
}

/// One thread: the tiers are compared with single-threaded loops (see
/// [`on_threads`] for the parallel runs).
pub fn options(tier: &str, output: Format) -> EvalOptions {
    EvalOptions {
        output_format: Some(output),
        tier: TierChoice::from_name(tier),
        threads: Some(1),
        ..EvalOptions::default()
    }
}

/// `options` on `threads` threads.
pub fn on_threads(options: &EvalOptions, threads: usize) -> EvalOptions {
    EvalOptions {
        threads: Some(threads),
        ..options.clone()
    }
}

/// A kernel of a fresh engine with the Cranelift tier, compiled for `inputs`.
pub fn kernel(statement: &str, inputs: &Inputs<'_>, output: Format) -> (Arc<Kernel>, EvalOptions, EvalOptions) {
    let engine = tessera::engine_with(tessera::PromotionPolicy::NEVER);
    let jit = options("jit", output.clone());
    let interp = options("interp", output);
    let kernel = engine
        .kernel_for(statement, inputs, &jit)
        .expect("the statement compiles");
    kernel.run_with(inputs, &jit).expect("the kernel runs");
    assert!(
        kernel.is_compiled() && engine.diagnostics().is_empty(),
        "{statement} compiles with Cranelift: {:?}",
        engine.diagnostics()
    );
    (kernel, jit, interp)
}

/// The hand-written baseline: one row at a time, summed in order.
pub fn spmv_loop(a: &Csr, x: &[f64]) -> Vec<f64> {
    let mut y = vec![0.0; a.rows];
    spmv_rows(a, x, 0, &mut y);
    y
}

/// [`spmv_loop`] on `threads` threads, each given rows of about equal
/// nonzeros, the caller's the last: the speedup the machine itself allows
/// a memory-bound loop, which a tier's speedup is read against.
pub fn spmv_loop_on_threads(a: &Csr, x: &[f64], threads: usize) -> Vec<f64> {
    let mut y = vec![0.0; a.rows];
    let nnz = a.idx.len();
    // `pos[rows]` is `nnz`, above every target: each cut is a row.
    let cuts = (1..threads).map(|t| a.pos.partition_point(|&p| (p as usize) < nnz * t / threads));
    std::thread::scope(|scope| {
        let (mut rest, mut first) = (&mut y[..], 0);
        for cut in cuts {
            let (mine, tail) = rest.split_at_mut(cut - first);
            scope.spawn(move || spmv_rows(a, x, first, mine));
            (rest, first) = (tail, cut);
        }
        spmv_rows(a, x, first, rest);
    });
    y
}

/// `y[r] = (A x)(first + r)` for each row of `y`.
fn spmv_rows(a: &Csr, x: &[f64], first: usize, y: &mut [f64]) {
    for (i, yi) in (first..).zip(y.iter_mut()) {
        let (b, e) = (a.pos[i] as usize, a.pos[i + 1] as usize);
        let mut sum = 0.0;
        for (v, &j) in a.vals[b..e].iter().zip(&a.idx[b..e]) {
            sum += v * x[j as usize];
        }
        *yi = sum;
    }
}

/// `C = A * B` for CSR `A` and dense row-major `B` of `n` columns.
pub fn spmm_loop(a: &Csr, b: &[f64], n: usize) -> Vec<f64> {
    let mut c = vec![0.0; a.rows * n];
    for i in 0..a.rows {
        let row = &mut c[i * n..(i + 1) * n];
        for p in a.pos[i] as usize..a.pos[i + 1] as usize {
            let (v, k) = (a.vals[p], a.idx[p] as usize);
            for (cj, bj) in row.iter_mut().zip(&b[k * n..(k + 1) * n]) {
                *cj += v * bj;
            }
        }
    }
    c
}

/// `C = A + B` for CSR matrices, a sorted merge of each row.
pub fn add_loop(a: &Csr, b: &Csr) -> Csr {
    let mut pos = Vec::with_capacity(a.rows + 1);
    let mut idx = Vec::with_capacity(a.nnz() + b.nnz());
    let mut vals = Vec::with_capacity(a.nnz() + b.nnz());
    pos.push(0u32);
    for i in 0..a.rows {
        let (mut p, pe) = (a.pos[i] as usize, a.pos[i + 1] as usize);
        let (mut q, qe) = (b.pos[i] as usize, b.pos[i + 1] as usize);
        while p < pe || q < qe {
            let ca = if p < pe { a.idx[p] } else { u32::MAX };
            let cb = if q < qe { b.idx[q] } else { u32::MAX };
            let c = ca.min(cb);
            let mut v = 0.0;
            if ca == c {
                v += a.vals[p];
                p += 1;
            }
            if cb == c {
                v += b.vals[q];
                q += 1;
            }
            idx.push(c);
            vals.push(v);
        }
        pos.push(idx.len() as u32);
    }
    Csr {
        rows: a.rows,
        cols: a.cols,
        pos,
        idx,
        vals,
    }
}

/// The sum of two block-sparse matrices of the same `width`-value blocks
/// (scipy's `bsr + bsr` before its conversion, TACO's merge of block rows):
/// each block row's stored blocks merged, blocks in both added value by
/// value. Returns the block columns' positions and coordinates and the
/// values.
pub fn bsr_add_loop(a: (&[usize], &[usize], &[f64]), b: (&[usize], &[usize], &[f64]), width: usize) -> Csr {
    let ((ap, ac, av), (bp, bc, bv)) = (a, b);
    let block_rows = ap.len() - 1;
    let mut pos = Vec::with_capacity(block_rows + 1);
    let mut idx = Vec::with_capacity(ac.len() + bc.len());
    let mut vals = Vec::with_capacity(av.len() + bv.len());
    pos.push(0u32);
    for r in 0..block_rows {
        let (mut p, pe) = (ap[r], ap[r + 1]);
        let (mut q, qe) = (bp[r], bp[r + 1]);
        while p < pe || q < qe {
            let ca = if p < pe { ac[p] } else { usize::MAX };
            let cb = if q < qe { bc[q] } else { usize::MAX };
            let c = ca.min(cb);
            let start = vals.len();
            vals.resize(start + width, 0.0);
            let mut add = |from: &[f64], k: &mut usize| {
                let block = &from[*k * width..(*k + 1) * width];
                vals[start..].iter_mut().zip(block).for_each(|(o, v)| *o += v);
                *k += 1;
            };
            if ca == c {
                add(av, &mut p);
            }
            if cb == c {
                add(bv, &mut q);
            }
            idx.push(c as u32);
        }
        pos.push(idx.len() as u32);
    }
    Csr {
        rows: block_rows,
        cols: 0,
        pos,
        idx,
        vals,
    }
}

/// Gustavson's SpGEMM with a dense accumulator; rows of the result sorted.
pub fn spgemm_loop(a: &Csr, b: &Csr) -> Csr {
    let mut acc = vec![0.0; b.cols];
    let mut seen = vec![false; b.cols];
    let mut cols: Vec<u32> = Vec::new();
    let mut pos = Vec::with_capacity(a.rows + 1);
    let mut idx = Vec::new();
    let mut vals = Vec::new();
    pos.push(0u32);
    for i in 0..a.rows {
        for p in a.pos[i] as usize..a.pos[i + 1] as usize {
            let (v, k) = (a.vals[p], a.idx[p] as usize);
            for q in b.pos[k] as usize..b.pos[k + 1] as usize {
                let j = b.idx[q] as usize;
                if !seen[j] {
                    seen[j] = true;
                    cols.push(j as u32);
                }
                acc[j] += v * b.vals[q];
            }
        }
        cols.sort_unstable();
        for &j in &cols {
            idx.push(j);
            vals.push(acc[j as usize]);
            acc[j as usize] = 0.0;
            seen[j as usize] = false;
        }
        cols.clear();
        pos.push(idx.len() as u32);
    }
    Csr {
        rows: a.rows,
        cols: b.cols,
        pos,
        idx,
        vals,
    }
}

/// A seeded generator, so that every bench sees the same matrices.
pub fn rng(seed: u64) -> SmallRng {
    SmallRng::seed_from_u64(seed)
}

/// The 5-point Laplacian of an `n x n` grid (order `n²`), as scipy's
/// `kron(I, T) + kron(S, I)` builds it for `peer_ratio.py make laplacian2d`.
pub fn laplacian2d(n: usize) -> tessera::formats::CoordinateList<f64> {
    let m = n * n;
    let mut entries = tessera::formats::CoordinateList::new(&[m, m]);
    for r in 0..n {
        for c in 0..n {
            let i = r * n + c;
            let mut push = |j: usize, v: f64| entries.push(&[i as u64, j as u64], v).expect("inside the grid");
            if r > 0 {
                push(i - n, -1.0);
            }
            if c > 0 {
                push(i - 1, -1.0);
            }
            push(i, 4.0);
            if c + 1 < n {
                push(i + 1, -1.0);
            }
            if r + 1 < n {
                push(i + n, -1.0);
            }
        }
    }
    entries
}

/// An `n x n` matrix of dense `b x b` blocks placed at random with the
/// given density of blocks, as `peer_ratio.py make blocks` builds it.
pub fn block_matrix(rng: &mut SmallRng, n: usize, b: usize, density: f64) -> tessera::formats::CoordinateList<f64> {
    let nb = n / b;
    let blocks = ((nb * nb) as f64 * density) as usize;
    let mut entries = tessera::formats::CoordinateList::new(&[n, n]);
    let mut seen = std::collections::HashSet::new();
    while seen.len() < blocks {
        let (bi, bj) = (rng.random_range(0..nb), rng.random_range(0..nb));
        if !seen.insert((bi, bj)) {
            continue;
        }
        for i in 0..b {
            for j in 0..b {
                let v = rng.random_range(-1.0..1.0);
                entries
                    .push(&[(bi * b + i) as u64, (bj * b + j) as u64], v)
                    .expect("inside the matrix");
            }
        }
    }
    entries
}

/// The offsets of a DIA tensor's stored diagonals: its diagonal level's
/// coordinates less `rows - 1`.
pub fn dia_offsets(t: &Tensor<f64>) -> Vec<i64> {
    let diagonals = &t.level(0).arrays[1];
    let shift = t.shape()[0] as i64 - 1;
    (0..diagonals.len()).map(|d| diagonals.get(d) - shift).collect()
}

/// The hand-written sum of two DIA matrices of `rows` rows (offsets and
/// `rows` values per diagonal): the union of their offsets, each diagonal
/// the sum of the two aligned diagonals (a copy where one has none), as
/// scipy's DIA + DIA computes it.
pub fn dia_add_loop(a: (&[i64], &[f64]), b: (&[i64], &[f64]), rows: usize) -> (Vec<i64>, Vec<f64>) {
    let ((ao, av), (bo, bv)) = (a, b);
    let (mut offsets, mut values) = (Vec::new(), Vec::with_capacity(av.len().max(bv.len())));
    let (mut p, mut q) = (0, 0);
    while p < ao.len() || q < bo.len() {
        let (x, y) = (
            ao.get(p).copied().unwrap_or(i64::MAX),
            bo.get(q).copied().unwrap_or(i64::MAX),
        );
        let offset = x.min(y);
        let (a_rows, b_rows) = (p * rows..(p + 1) * rows, q * rows..(q + 1) * rows);
        match (x == offset, y == offset) {
            (true, true) => values.extend(av[a_rows].iter().zip(&bv[b_rows]).map(|(s, t)| s + t)),
            (true, false) => values.extend(av[a_rows].iter().map(|s| s + 0.0)),
            _ => values.extend(bv[b_rows].iter().map(|t| 0.0 + t)),
        }
        p += usize::from(x == offset);
        q += usize::from(y == offset);
        offsets.push(offset);
    }
    (offsets, values)
}

/// The hand-written DIA product: for each diagonal, the rows it covers,
/// `y[i] += values[d * rows + i] * x[i + offset]` (DIA's layout in tessera:
/// one row-long run of values per diagonal).
pub fn dia_spmv_loop(offsets: &[i64], values: &[f64], rows: usize, cols: usize, x: &[f64]) -> Vec<f64> {
    let mut y = vec![0.0; rows];
    for (d, &offset) in offsets.iter().enumerate() {
        let first = (-offset).max(0) as usize;
        let last = (rows as i64).min(cols as i64 - offset).max(first as i64) as usize;
        let diagonal = &values[d * rows + first..d * rows + last];
        let xs = &x[(first as i64 + offset) as usize..(last as i64 + offset) as usize];
        for ((yi, &a), &xj) in y[first..last].iter_mut().zip(diagonal).zip(xs) {
            *yi += a * xj;
        }
    }
    y
}

/// The hand-written BCSR product with `b x b` blocks: `pos`/`crd` over
/// block rows and block columns, each block's values row-major.
pub fn bcsr_spmv_loop(pos: &[usize], crd: &[usize], values: &[f64], b: usize, x: &[f64]) -> Vec<f64> {
    let block_rows = pos.len() - 1;
    let mut y = vec![0.0; block_rows * b];
    for ib in 0..block_rows {
        let out = &mut y[ib * b..ib * b + b];
        for p in pos[ib]..pos[ib + 1] {
            let block = &values[p * b * b..(p + 1) * b * b];
            let xs = &x[crd[p] * b..crd[p] * b + b];
            for (r, yr) in out.iter_mut().enumerate() {
                *yr += block[r * b..r * b + b].iter().zip(xs).map(|(a, v)| a * v).sum::<f64>();
            }
        }
    }
    y
}
