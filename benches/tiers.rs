//! The Cranelift tier against its baselines, each group reporting a ratio:
//! hand-written Rust loops, the interpreter and the `sprs` crate on CSR
//! SpMV (5M nonzeros), SpMM (64 dense columns), CSR add and SpGEMM; the
//! compile latency of SpMV and MTTKRP kernels; and the time from a fresh
//! engine and a statement's text to the result of a 1M-nonzero SpMV.
//!
//! `cargo bench --bench tiers` runs all in a few minutes;
//! `cargo bench --bench tiers -- spmv` one group.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use tessera::engine::runtime::{CompiledKernel, Tier};
use tessera::formats::{CoordinateList, Format, IndexArray, LevelStorage, Tensor};
use tessera::tiers::CraneliftTier;
use tessera::{EvalOptions, Inputs, Kernel, TierChoice};

/// A CSR matrix as plain arrays.
struct Csr {
    rows: usize,
    cols: usize,
    pos: Vec<u32>,
    idx: Vec<u32>,
    vals: Vec<f64>,
}

impl Csr {
    /// About `per_row` random distinct columns in each row, sorted.
    fn random(rng: &mut SmallRng, rows: usize, cols: usize, per_row: usize) -> Csr {
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

    fn tensor(&self) -> Tensor<f64> {
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

    fn sprs(&self) -> sprs::CsMatI<f64, u32, u32> {
        sprs::CsMatI::new(
            (self.rows, self.cols),
            self.pos.clone(),
            self.idx.clone(),
            self.vals.clone(),
        )
    }

    fn nnz(&self) -> usize {
        self.vals.len()
    }
}

fn random_dense(rng: &mut SmallRng, shape: &[usize]) -> Tensor<f64> {
    let n = shape.iter().product();
    Tensor::from_dense(shape, (0..n).map(|_| rng.random_range(-1.0..1.0)).collect()).expect("dense tensors pack")
}

fn options(tier: &str, output: Format) -> EvalOptions {
    EvalOptions {
        output_format: Some(output),
        tier: TierChoice::from_name(tier),
        ..EvalOptions::default()
    }
}

/// A kernel of a fresh engine with the Cranelift tier, compiled for `inputs`.
fn kernel(statement: &str, inputs: &Inputs<'_>, output: Format) -> (Arc<Kernel>, EvalOptions, EvalOptions) {
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

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
}

/// The hand-written baseline: one row at a time, summed in order.
fn spmv_loop(a: &Csr, x: &[f64]) -> Vec<f64> {
    let mut y = vec![0.0; a.rows];
    for (i, yi) in y.iter_mut().enumerate() {
        let (b, e) = (a.pos[i] as usize, a.pos[i + 1] as usize);
        let mut sum = 0.0;
        for (v, &j) in a.vals[b..e].iter().zip(&a.idx[b..e]) {
            sum += v * x[j as usize];
        }
        *yi = sum;
    }
    y
}

fn spmv(c: &mut Criterion) {
    let mut rng = SmallRng::seed_from_u64(1);
    let a = Csr::random(&mut rng, 500_000, 500_000, 10);
    let x = random_dense(&mut rng, &[a.cols]);
    let at = a.tensor();
    let inputs = Inputs::new().with("A", &at).with("x", &x);
    let (k, jit, interp) = kernel("y(i) = A(i,j) * x(j)", &inputs, Format::dense(1));
    let sp = a.sprs();
    let want = spmv_loop(&a, x.values());
    let got = k.run_with(&inputs, &jit).unwrap();
    assert!(got
        .values()
        .iter()
        .zip(&want)
        .all(|(g, w)| (g - w).abs() <= 1e-9 * (1.0 + w.abs())));

    let mut g = c.benchmark_group(format!("spmv_csr_{}nnz", a.nnz()));
    g.throughput(Throughput::Elements(a.nnz() as u64));
    g.bench_function("hand-written", |b| b.iter(|| black_box(spmv_loop(&a, x.values()))));
    g.bench_function("cranelift", |b| {
        b.iter(|| black_box(k.run_with(&inputs, &jit).unwrap()))
    });
    g.bench_function("interpreter", |b| {
        b.iter(|| black_box(k.run_with(&inputs, &interp).unwrap()))
    });
    g.bench_function("sprs", |b| {
        b.iter(|| {
            let mut y = vec![0.0; a.rows];
            sprs::prod::mul_acc_mat_vec_csr(sp.view(), x.values(), &mut y[..]);
            black_box(y)
        })
    });
    g.finish();
}

/// `C = A * B` for CSR `A` and dense row-major `B` of `n` columns.
fn spmm_loop(a: &Csr, b: &[f64], n: usize) -> Vec<f64> {
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

fn spmm(c: &mut Criterion) {
    let mut rng = SmallRng::seed_from_u64(2);
    let n = 64;
    let a = Csr::random(&mut rng, 50_000, 50_000, 10);
    let bt = random_dense(&mut rng, &[a.cols, n]);
    let at = a.tensor();
    let inputs = Inputs::new().with("A", &at).with("B", &bt);
    let (k, jit, interp) = kernel("C(i,j) = A(i,k) * B(k,j)", &inputs, Format::dense(2));
    let want = spmm_loop(&a, bt.values(), n);
    let got = k.run_with(&inputs, &jit).unwrap();
    assert!(got
        .values()
        .iter()
        .zip(&want)
        .all(|(g, w)| (g - w).abs() <= 1e-9 * (1.0 + w.abs())));

    let mut g = c.benchmark_group(format!("spmm_csr_{}nnz_x_dense_{n}", a.nnz()));
    g.throughput(Throughput::Elements((a.nnz() * n) as u64));
    g.bench_function("hand-written", |b| b.iter(|| black_box(spmm_loop(&a, bt.values(), n))));
    g.bench_function("cranelift", |b| {
        b.iter(|| black_box(k.run_with(&inputs, &jit).unwrap()))
    });
    g.bench_function("interpreter", |b| {
        b.iter(|| black_box(k.run_with(&inputs, &interp).unwrap()))
    });
    g.finish();
}

/// `C = A + B` for CSR matrices, a sorted merge of each row.
fn add_loop(a: &Csr, b: &Csr) -> Csr {
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

fn csr_add(c: &mut Criterion) {
    let mut rng = SmallRng::seed_from_u64(3);
    let a = Csr::random(&mut rng, 200_000, 200_000, 10);
    let b = Csr::random(&mut rng, 200_000, 200_000, 10);
    let (at, bt) = (a.tensor(), b.tensor());
    let inputs = Inputs::new().with("A", &at).with("B", &bt);
    let (k, jit, interp) = kernel("C(i,j) = A(i,j) + B(i,j)", &inputs, Format::csr());
    let want = add_loop(&a, &b);
    let got = k.run_with(&inputs, &jit).unwrap();
    assert_eq!(got.values(), &want.vals[..]);

    let mut g = c.benchmark_group(format!("csr_add_{}nnz", a.nnz() + b.nnz()));
    g.throughput(Throughput::Elements((a.nnz() + b.nnz()) as u64));
    g.bench_function("hand-written", |bn| bn.iter(|| black_box(add_loop(&a, &b))));
    g.bench_function("cranelift", |bn| {
        bn.iter(|| black_box(k.run_with(&inputs, &jit).unwrap()))
    });
    g.bench_function("interpreter", |bn| {
        bn.iter(|| black_box(k.run_with(&inputs, &interp).unwrap()))
    });
    g.finish();
}

/// Gustavson's SpGEMM with a dense accumulator; rows of the result sorted.
fn spgemm_loop(a: &Csr, b: &Csr) -> Csr {
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

fn spgemm(c: &mut Criterion) {
    let mut rng = SmallRng::seed_from_u64(4);
    let a = Csr::random(&mut rng, 20_000, 20_000, 10);
    let b = Csr::random(&mut rng, 20_000, 20_000, 10);
    let (at, bt) = (a.tensor(), b.tensor());
    let inputs = Inputs::new().with("A", &at).with("B", &bt);
    let (k, jit, interp) = kernel("C(i,j) = A(i,k) * B(k,j)", &inputs, Format::csr());
    let (sa, sb) = (a.sprs(), b.sprs());
    let want = spgemm_loop(&a, &b);
    let got = k.run_with(&inputs, &jit).unwrap();
    assert_eq!(got.level(1).arrays[1].to_i64_vec().len(), want.idx.len());

    let mut g = c.benchmark_group(format!("spgemm_csr_{}x{}nnz", a.nnz(), b.nnz()));
    g.throughput(Throughput::Elements(want.vals.len() as u64));
    g.bench_function("hand-written", |bn| bn.iter(|| black_box(spgemm_loop(&a, &b))));
    g.bench_function("cranelift", |bn| {
        bn.iter(|| black_box(k.run_with(&inputs, &jit).unwrap()))
    });
    g.bench_function("interpreter", |bn| {
        bn.iter(|| black_box(k.run_with(&inputs, &interp).unwrap()))
    });
    g.bench_function("sprs", |bn| bn.iter(|| black_box(&sa * &sb)));
    g.finish();
}

/// Compile latency of the Cranelift tier alone (the program is planned
/// once; each iteration translates, optimises and maps machine code).
fn compile_latency(c: &mut Criterion) {
    let mut rng = SmallRng::seed_from_u64(5);
    let tier = CraneliftTier::new().expect("Cranelift supports this host");
    let a = Csr::random(&mut rng, 1000, 1000, 10).tensor();
    let x = random_dense(&mut rng, &[1000]);
    let mut b = CoordinateList::new(&[50, 40, 30]);
    for _ in 0..2000 {
        let coords = [
            rng.random_range(0..50),
            rng.random_range(0..40),
            rng.random_range(0..30),
        ];
        b.push(&coords, rng.random_range(-1.0..1.0)).unwrap();
    }
    let b = Tensor::pack(&b, Format::csf(3)).unwrap();
    let (cm, dm) = (random_dense(&mut rng, &[40, 16]), random_dense(&mut rng, &[30, 16]));
    let cases: [(&str, &str, Inputs<'_>, Format); 2] = [
        (
            "spmv",
            "y(i) = A(i,j) * x(j)",
            Inputs::new().with("A", &a).with("x", &x),
            Format::dense(1),
        ),
        (
            "mttkrp",
            "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
            Inputs::new().with("B", &b).with("C", &cm).with("D", &dm),
            Format::dense(2),
        ),
    ];
    let mut g = c.benchmark_group("compile_latency");
    g.sample_size(50);
    for (name, statement, inputs, output) in &cases {
        let engine = tessera::engine();
        let kernel = engine
            .kernel_for(statement, inputs, &options("interp", output.clone()))
            .unwrap();
        let request = kernel.compile_request_for(inputs, &[]).unwrap();
        let compiled: Arc<dyn CompiledKernel> = tier.compile(&request).expect("the kernel compiles");
        drop(compiled);
        g.bench_with_input(BenchmarkId::new("cranelift", name), &request, |bn, r| {
            bn.iter(|| black_box(tier.compile(r).unwrap()))
        });
    }
    g.finish();
}

/// From a fresh engine and the statement's text to the result: parse,
/// plan, compile (or not) and run a 1M-nonzero SpMV. (`tessera eval` adds
/// reading the files and printing.)
fn eval_cold(c: &mut Criterion) {
    let mut rng = SmallRng::seed_from_u64(6);
    let a = Csr::random(&mut rng, 100_000, 100_000, 10).tensor();
    let x = random_dense(&mut rng, &[100_000]);
    let inputs = Inputs::new().with("A", &a).with("x", &x);
    let mut g = c.benchmark_group(format!("eval_cold_spmv_{}nnz", a.stored()));
    for tier in ["jit", "interp"] {
        let opts = options(tier, Format::dense(1));
        g.bench_function(tier, |bn| {
            bn.iter(|| {
                let engine = tessera::engine();
                black_box(engine.eval_with("y(i) = A(i,j) * x(j)", &inputs, &opts).unwrap())
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = spmv, spmm, csr_add, spgemm, compile_latency, eval_cold
}
criterion_main!(benches);
