//! The Cranelift tier against its baselines, each group reporting a ratio:
//! hand-written Rust loops, the interpreter and the `sprs` crate on CSR
//! SpMV (5M nonzeros), SpMM (64 dense columns), CSR add and SpGEMM; the
//! compile latency of SpMV and MTTKRP kernels; and the time from a fresh
//! engine and a statement's text to the result of a 1M-nonzero SpMV.
//!
//! `cargo bench --bench tiers` runs all in a few minutes;
//! `cargo bench --bench tiers -- spmv` one group.

mod common;

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion, Throughput};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use tessera::engine::runtime::{CompiledKernel, Tier};
use tessera::formats::{CoordinateList, Format, Tensor};
use tessera::tiers::CraneliftTier;
use tessera::{EvalOptions, Inputs, Kernel};

use common::{add_loop, kernel, options, random_dense, spgemm_loop, spmm_loop, spmv_loop, Csr};

/// The kernel's runs on the Cranelift tier and on the interpreter.
fn bench_both_tiers(
    g: &mut BenchmarkGroup<'_, WallTime>,
    k: &Kernel,
    inputs: &Inputs<'_>,
    jit: &EvalOptions,
    interp: &EvalOptions,
) {
    g.bench_function("cranelift", |b| b.iter(|| black_box(k.run_with(inputs, jit).unwrap())));
    g.bench_function("interpreter", |b| {
        b.iter(|| black_box(k.run_with(inputs, interp).unwrap()))
    });
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
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
    bench_both_tiers(&mut g, &k, &inputs, &jit, &interp);
    g.bench_function("sprs", |b| {
        b.iter(|| {
            let mut y = vec![0.0; a.rows];
            sprs::prod::mul_acc_mat_vec_csr(sp.view(), x.values(), &mut y[..]);
            black_box(y)
        })
    });
    g.finish();
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
    bench_both_tiers(&mut g, &k, &inputs, &jit, &interp);
    g.finish();
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
    bench_both_tiers(&mut g, &k, &inputs, &jit, &interp);
    g.finish();
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
    bench_both_tiers(&mut g, &k, &inputs, &jit, &interp);
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
