//! Tiering: promotion of hot kernels mid-stream, concurrent runs, forced
//! tiers, specialisation on index widths, and compilation failures that
//! leave kernels interpreted.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::promoting_engine;
use tessera_engine::runtime::{CompileRequest, CompiledKernel, PromotionPolicy, Tier, TierChoice};
use tessera_engine::testing::{random_tensor, EntryKind, Rng};
use tessera_engine::{Engine, EngineError, EvalOptions, Inputs};
use tessera_formats::{CoordinateList, Format, IndexArray, LevelStorage, Tensor};
use tessera_tiers::CraneliftTier;

fn matrix(rng: &mut Rng, shape: &[usize], format: &Format) -> Tensor<f64> {
    random_tensor(rng, shape, EntryKind::Random, format).expect("random matrices pack")
}

fn dense_vector(rng: &mut Rng, n: usize) -> Tensor<f64> {
    random_tensor(rng, &[n], EntryKind::Full, &Format::dense(1)).expect("dense vectors pack")
}

fn tier(name: &str) -> EvalOptions {
    EvalOptions {
        tier: TierChoice::from_name(name),
        ..EvalOptions::default()
    }
}

#[test]
fn promotion_happens_mid_stream_with_results_unchanged() {
    let engine = promoting_engine(PromotionPolicy {
        runs: 3,
        work: u64::MAX,
        first_run_work: u64::MAX,
    });
    let interp = Engine::new();
    let mut rng = Rng::new(5);
    let a = matrix(&mut rng, &[60, 50], &Format::csr());
    let xs: Vec<Tensor<f64>> = (0..40).map(|_| dense_vector(&mut rng, 50)).collect();
    let stmt = "y(i) = A(i,j) * x(j)";
    let mut served = Vec::new();
    for (k, x) in xs.iter().enumerate() {
        let inputs = Inputs::new().with("A", &a).with("x", x);
        let kernel = engine.kernel_for(stmt, &inputs, &EvalOptions::default()).unwrap();
        let y = kernel.run(&inputs).unwrap();
        let want = interp.eval_with(stmt, &inputs, &tier("interp")).unwrap();
        assert_eq!(y.to_dense_vec().unwrap(), want.to_dense_vec().unwrap(), "run {k}");
        served.push(kernel.stats());
        if k == 10 {
            // Let the background compilation land before the later runs.
            assert!(kernel.wait_for_compilation(Duration::from_secs(30)));
        }
    }
    let last = *served.last().unwrap();
    assert!(
        served[..3].iter().all(|s| s.compiled_runs == 0),
        "the first runs are interpreted"
    );
    assert!(
        last.interpreted_runs >= 3 && last.compiled_runs >= 29,
        "later runs are compiled: {last:?}"
    );
    assert_eq!(last.runs, 40);
    assert_eq!(last.compiled_variants, 1);
    assert!(engine.diagnostics().is_empty());
}

#[test]
fn promotion_by_work_compiles_a_kernel_on_large_tensors() {
    let engine = promoting_engine(PromotionPolicy {
        runs: u64::MAX,
        work: 5_000,
        first_run_work: u64::MAX,
    });
    let mut rng = Rng::new(6);
    let a = matrix(&mut rng, &[100, 100], &Format::csr());
    let b = matrix(&mut rng, &[100, 100], &Format::csr());
    let inputs = Inputs::new().with("A", &a).with("B", &b);
    let stmt = "C(i,j) = A(i,k) * B(k,j)";
    let first = engine.eval(stmt, &inputs).unwrap();
    let kernel = engine.kernel_for(stmt, &inputs, &EvalOptions::default()).unwrap();
    assert!(kernel.wait_for_compilation(Duration::from_secs(30)));
    assert!(kernel.is_compiled(), "one run read over 5000 stored values");
    let second = engine.eval(stmt, &inputs).unwrap();
    assert_eq!(first, second);
    assert_eq!(kernel.stats().compiled_runs, 1);
}

#[test]
fn concurrent_runs_from_several_threads_agree() {
    let engine = Arc::new(promoting_engine(PromotionPolicy {
        runs: 2,
        work: u64::MAX,
        first_run_work: u64::MAX,
    }));
    let mut rng = Rng::new(7);
    let a = Arc::new(matrix(&mut rng, &[40, 30], &Format::csr()));
    let b = Arc::new(matrix(&mut rng, &[30, 20], &Format::dcsr()));
    let x = Arc::new(dense_vector(&mut rng, 30));
    let interp = Engine::new();
    let inputs = Inputs::new().with("A", &a).with("B", &b).with("x", &x);
    let want_y = interp
        .eval_with("y(i) = A(i,j) * x(j)", &inputs, &tier("interp"))
        .unwrap();
    let want_c = interp
        .eval_with("C(i,j) = A(i,k) * B(k,j)", &inputs, &tier("interp"))
        .unwrap();
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let (engine, a, b, x) = (engine.clone(), a.clone(), b.clone(), x.clone());
            let (want_y, want_c) = (want_y.clone(), want_c.clone());
            std::thread::spawn(move || {
                let inputs = Inputs::new().with("A", &a).with("B", &b).with("x", &x);
                for k in 0..25 {
                    let y = engine.eval("y(i) = A(i,j) * x(j)", &inputs).unwrap();
                    assert_eq!(y, want_y, "thread {t} run {k}");
                    let c = engine.eval("C(i,j) = A(i,k) * B(k,j)", &inputs).unwrap();
                    assert_eq!(c.levels(), want_c.levels(), "thread {t} run {k}");
                    assert_eq!(c.values(), want_c.values(), "thread {t} run {k}");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("no thread panics");
    }
    assert!(engine.wait_for_compilations(Duration::from_secs(30)));
    // The compilations may land after the threads' last runs (the runs are
    // short): one more run of each kernel is then served compiled.
    let inputs = Inputs::new().with("A", &a).with("B", &b).with("x", &x);
    assert_eq!(engine.eval("y(i) = A(i,j) * x(j)", &inputs).unwrap(), want_y);
    let c = engine.eval("C(i,j) = A(i,k) * B(k,j)", &inputs).unwrap();
    assert_eq!(c.values(), want_c.values());
    let stats = engine.stats();
    assert_eq!(stats.runs, 202);
    assert_eq!(stats.compiled_variants, 2, "each kernel compiled once: {stats:?}");
    assert!(stats.compiled_runs >= 2, "{stats:?}");
    assert!(engine.diagnostics().is_empty());
}

#[test]
fn forced_jit_compiles_before_the_first_run_and_interp_never_compiles() {
    let engine = promoting_engine(PromotionPolicy::default());
    let mut rng = Rng::new(8);
    let a = matrix(&mut rng, &[20, 20], &Format::csc());
    let x = dense_vector(&mut rng, 20);
    let inputs = Inputs::new().with("A", &a).with("x", &x);
    let stmt = "y(i) = A(i,j) * x(j)";
    for _ in 0..10 {
        engine.eval_with(stmt, &inputs, &tier("interp")).unwrap();
    }
    let kernel = engine.kernel_for(stmt, &inputs, &EvalOptions::default()).unwrap();
    assert!(kernel.wait_for_compilation(Duration::from_secs(30)));
    assert_eq!(kernel.stats().compiled_variants, 0, "--tier interp never compiles");
    let y = engine.eval_with(stmt, &inputs, &tier("jit")).unwrap();
    let stats = kernel.stats();
    assert_eq!(
        (stats.compiled_variants, stats.compiled_runs),
        (1, 1),
        "--tier jit compiles up front"
    );
    assert_eq!(y, engine.eval_with(stmt, &inputs, &tier("interp")).unwrap());
}

#[test]
fn an_unknown_tier_is_refused_with_the_available_ones() {
    let engine = promoting_engine(PromotionPolicy::default());
    let x = Tensor::from_dense(&[2], vec![1.0, 2.0]).unwrap();
    let inputs = Inputs::new().with("x", &x);
    let err = engine.eval_with("y(i) = x(i)", &inputs, &tier("opencl")).unwrap_err();
    match err {
        EngineError::Unsupported(m) => {
            assert!(m.starts_with("tier opencl is not available"), "{m}");
            assert!(m.contains("interp") && m.contains("jit"), "{m}");
        }
        other => panic!("unexpected error {other:?}"),
    }
    assert_eq!(engine.tier_names(), vec!["interp".to_string(), "jit".to_string()]);
}

/// A CSR matrix whose index arrays are 64-bit although its values fit in
/// 32 bits: a valid tensor of another storage signature.
fn wide_csr(narrow: &Tensor<f64>) -> Tensor<f64> {
    let levels: Vec<LevelStorage> = narrow
        .levels()
        .iter()
        .map(|l| {
            let mut wide = l.clone();
            for a in wide.arrays.iter_mut() {
                *a = IndexArray::U64(a.to_i64_vec().into_iter().map(|v| v as u64).collect());
            }
            wide
        })
        .collect();
    Tensor::from_parts(
        narrow.shape(),
        narrow.format().clone(),
        levels,
        narrow.values().to_vec(),
    )
    .unwrap()
}

#[test]
fn kernels_specialise_on_index_widths() {
    let engine = promoting_engine(PromotionPolicy::EAGER);
    let mut rng = Rng::new(9);
    let narrow = matrix(&mut rng, &[30, 25], &Format::csr());
    let wide = wide_csr(&narrow);
    assert!(matches!(wide.level(1).arrays[1], IndexArray::U64(_)));
    let x = dense_vector(&mut rng, 25);
    let stmt = "y(i) = A(i,j) * x(j)";
    let y_narrow = engine
        .eval(stmt, &Inputs::new().with("A", &narrow).with("x", &x))
        .unwrap();
    let y_wide = engine
        .eval(stmt, &Inputs::new().with("A", &wide).with("x", &x))
        .unwrap();
    assert_eq!(y_narrow, y_wide);
    let kernel = engine
        .kernel_for(
            stmt,
            &Inputs::new().with("A", &wide).with("x", &x),
            &EvalOptions::default(),
        )
        .unwrap();
    let stats = kernel.stats();
    assert_eq!(
        (stats.compiled_variants, stats.compiled_runs, stats.interpreted_runs),
        (2, 2, 0)
    );
    let clif = kernel.compiled_text("jit").unwrap();
    assert!(
        clif.contains("load.i64") && !clif.contains("uload32"),
        "the latest run's arrays are 64-bit:\n{clif}"
    );
}

#[test]
fn clif_text_shows_the_inlined_level_functions() {
    let engine = promoting_engine(PromotionPolicy::default());
    let mut rng = Rng::new(10);
    let a = matrix(&mut rng, &[8, 8], &Format::csr());
    let x = dense_vector(&mut rng, 8);
    let inputs = Inputs::new().with("A", &a).with("x", &x);
    let dense = EvalOptions {
        output_format: Some(Format::dense(1)),
        ..EvalOptions::default()
    };
    let kernel = engine.kernel_for("y(i) = A(i,j) * x(j)", &inputs, &dense).unwrap();
    assert!(
        matches!(kernel.compiled_text("jit"), Err(EngineError::Unsupported(_))),
        "no run yet"
    );
    let text = kernel.compiled_text_for(&inputs, &[], "jit").unwrap();
    assert!(text.starts_with("function "), "{text}");
    // pos_iter of the compressed level: two 32-bit loads of `pos`.
    assert!(text.matches("uload32").count() >= 2, "{text}");
    assert!(text.contains("fmul") && text.contains("fadd"), "{text}");
    assert!(
        !text.contains("call"),
        "SpMV into a dense vector calls no runtime function:\n{text}"
    );
    // A sparse output is assembled through callbacks into the runtime.
    let sparse_output = EvalOptions {
        output_format: Some(Format::sparse_vector()),
        ..EvalOptions::default()
    };
    let sparse = engine
        .kernel_for("y(i) = A(i,j) * x(j)", &inputs, &sparse_output)
        .unwrap();
    let text = sparse.compiled_text_for(&inputs, &[], "jit").unwrap();
    assert!(text.contains("call_indirect"), "{text}");
    let opencl = kernel.compiled_text_for(&inputs, &[], "opencl");
    assert!(matches!(opencl, Err(EngineError::Unsupported(m)) if m.contains("opencl")));
}

/// A tier whose compiler always fails, or panics.
struct Broken {
    panics: bool,
    attempts: AtomicUsize,
}

impl Tier for Broken {
    fn name(&self) -> &str {
        "broken"
    }
    fn compile(&self, _request: &CompileRequest) -> Result<Arc<dyn CompiledKernel>, String> {
        self.attempts.fetch_add(1, Ordering::SeqCst);
        if self.panics {
            panic!("the broken tier panics");
        }
        Err("the broken tier cannot compile anything".into())
    }
}

#[test]
fn failed_compilations_are_reported_once_and_the_kernel_stays_interpreted() {
    for panics in [false, true] {
        let broken = Arc::new(Broken {
            panics,
            attempts: AtomicUsize::new(0),
        });
        let engine = Engine::new().with_tier(broken.clone()).with_promotion(PromotionPolicy {
            runs: 1,
            work: u64::MAX,
            first_run_work: u64::MAX,
        });
        let mut l = CoordinateList::new(&[3, 3]);
        l.push(&[0, 1], 2.0).unwrap();
        l.push(&[2, 2], 3.0).unwrap();
        let a = Tensor::pack(&l, Format::csr()).unwrap();
        let x = Tensor::from_dense(&[3], vec![1.0, 10.0, 100.0]).unwrap();
        let inputs = Inputs::new().with("A", &a).with("x", &x);
        for k in 0..10 {
            let options = if k % 2 == 0 { tier("auto") } else { tier("broken") };
            let y = engine.eval_with("y(i) = A(i,j) * x(j)", &inputs, &options).unwrap();
            assert_eq!(y.to_dense_vec().unwrap(), vec![20.0, 0.0, 300.0]);
            engine.wait_for_compilations(Duration::from_secs(30));
        }
        let diagnostics = engine.diagnostics();
        assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
        assert_eq!(broken.attempts.load(Ordering::SeqCst), 1, "never retried");
        let message = diagnostics[0].to_string();
        assert!(
            message.contains("tier broken could not compile `y(i) = A(i,j) * x(j)`"),
            "{message}"
        );
        assert!(
            message.contains(if panics { "panicked" } else { "cannot compile anything" }),
            "{message}"
        );
        assert_eq!(engine.stats().interpreted_runs, 10);
    }
}

#[test]
fn the_engine_and_its_kernels_are_send_and_sync() {
    fn shared<T: Send + Sync>() {}
    shared::<Engine>();
    shared::<tessera_engine::Kernel>();
    shared::<CraneliftTier>();
}

#[test]
fn a_run_reading_many_stored_values_is_compiled_before_it_runs() {
    let policy = PromotionPolicy {
        first_run_work: 2_000,
        ..PromotionPolicy::default()
    };
    let engine = promoting_engine(policy);
    let mut rng = Rng::new(12);
    let stmt = "C(i,j) = A(i,j) + B(j,i)";
    let small_a = matrix(&mut rng, &[10, 10], &Format::csr());
    let small_b = matrix(&mut rng, &[10, 10], &Format::csc());
    let small = Inputs::new().with("A", &small_a).with("B", &small_b);
    let kernel = engine.kernel_for(stmt, &small, &EvalOptions::default()).unwrap();
    let want = Engine::new().eval_with(stmt, &small, &tier("interp")).unwrap();
    assert_eq!(kernel.run(&small).unwrap(), want);
    assert_eq!(kernel.stats().interpreted_runs, 1, "a small run is interpreted");
    assert!(!kernel.is_compiled());

    let a = matrix(&mut rng, &[80, 80], &Format::csr());
    let b = matrix(&mut rng, &[80, 80], &Format::csc());
    let large = Inputs::new().with("A", &a).with("B", &b);
    assert!(a.stored() + b.stored() >= 2_000, "the inputs are large enough");
    let want = Engine::new().eval_with(stmt, &large, &tier("interp")).unwrap();
    assert_eq!(kernel.run(&large).unwrap(), want);
    let stats = kernel.stats();
    assert_eq!(
        (stats.interpreted_runs, stats.compiled_runs),
        (1, 1),
        "the large run ran compiled: {stats:?}"
    );
}

/// The Cranelift tier under another name, taking runs of at least `from`
/// stored values (as a GPU tier takes large runs), counting compilations.
struct Large {
    inner: CraneliftTier,
    from: u64,
    compiled: AtomicUsize,
}

impl Tier for Large {
    fn name(&self) -> &str {
        "large"
    }
    fn compile(&self, request: &CompileRequest) -> Result<Arc<dyn CompiledKernel>, String> {
        self.compiled.fetch_add(1, Ordering::SeqCst);
        self.inner.compile(request)
    }
    fn takes(&self, work: u64) -> bool {
        work >= self.from
    }
}

#[test]
fn auto_promotes_large_runs_to_the_tier_that_takes_them() {
    let large = Arc::new(Large {
        inner: CraneliftTier::new().unwrap(),
        from: 1000,
        compiled: AtomicUsize::new(0),
    });
    let jit = Arc::new(CraneliftTier::new().unwrap());
    // Compiled before the first run of any size, by the tier the run's
    // work chooses.
    let engine = || {
        Engine::new()
            .with_tier(jit.clone())
            .with_tier(large.clone())
            .with_promotion(PromotionPolicy {
                runs: 1,
                work: u64::MAX,
                first_run_work: 0,
            })
    };
    let run = |n: usize| {
        let mut rng = Rng::new(n as u64);
        let a = matrix(&mut rng, &[n, n], &Format::csr());
        let x = dense_vector(&mut rng, n);
        let inputs = Inputs::new().with("A", &a).with("x", &x);
        let engine = engine();
        let y = engine
            .eval_with("y(i) = A(i,j) * x(j)", &inputs, &tier("auto"))
            .unwrap();
        let want = Engine::new().eval("y(i) = A(i,j) * x(j)", &inputs).unwrap();
        assert_eq!(y.to_dense_vec().unwrap(), want.to_dense_vec().unwrap());
        assert!(engine.diagnostics().is_empty());
    };
    run(4);
    assert_eq!(
        large.compiled.load(Ordering::SeqCst),
        0,
        "a small run goes to the first tier"
    );
    // x alone holds 2000 stored values.
    run(2000);
    assert_eq!(
        large.compiled.load(Ordering::SeqCst),
        1,
        "a large run goes to the tier that takes it"
    );
}
