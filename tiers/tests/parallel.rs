//! Parallel kernels on the Cranelift tier and from many threads at once:
//! compiled chunks give the interpreter's bits, and eight threads sharing
//! one engine, each running split kernels while they are promoted, get
//! unchanged answers.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::promoting_engine;
use tessera_engine::runtime::{PromotionPolicy, TierChoice};
use tessera_engine::testing::{random_tensor, same_bits, EntryKind, Rng};
use tessera_engine::{Engine, EvalOptions, Inputs};
use tessera_formats::{Format, Tensor};

/// The kernels: a dense vector, a sum over the outer loop, sparse parts
/// with and without a workspace, a merge.
const KERNELS: [(&str, OutputFormat); 5] = [
    ("y(i) = A(i,j) * x(j)", || Format::dense(1)),
    ("z(j) = A(i,j) * w(i)", || Format::dense(1)),
    ("C(i,j) = A(i,k) * B(k,j)", Format::csr),
    ("D(i,j) = A(i,j) + B(j,i)", Format::dcsr),
    ("s = A(i,j) * B(i,j)", || Format::dense(0)),
];

/// Makes a kernel's output format (formats are not `const`).
type OutputFormat = fn() -> Format;

struct Data {
    a: Tensor<f64>,
    b: Tensor<f64>,
    x: Tensor<f64>,
    w: Tensor<f64>,
}

impl Data {
    fn new(seed: u64) -> Data {
        let mut rng = Rng::new(seed);
        Data {
            a: random_tensor(&mut rng, &[120, 120], EntryKind::Random, &Format::csr()).unwrap(),
            b: random_tensor(&mut rng, &[120, 120], EntryKind::Skewed, &Format::csr()).unwrap(),
            x: random_tensor(&mut rng, &[120], EntryKind::Full, &Format::dense(1)).unwrap(),
            w: random_tensor(&mut rng, &[120], EntryKind::Full, &Format::dense(1)).unwrap(),
        }
    }
    fn inputs(&self) -> Inputs<'_> {
        Inputs::new()
            .with("A", &self.a)
            .with("B", &self.b)
            .with("x", &self.x)
            .with("w", &self.w)
    }
}

fn options(output: Format, threads: usize, tier: TierChoice) -> EvalOptions {
    EvalOptions {
        output_format: Some(output),
        threads: Some(threads),
        chunk_work: Some(40),
        tier,
        ..EvalOptions::default()
    }
}

#[test]
fn compiled_chunks_give_the_interpreted_bits_on_any_number_of_threads() {
    let data = Data::new(3);
    let jit = common::jit_engine();
    let interp = Engine::new();
    for (statement, output) in KERNELS {
        let want = interp
            .eval_with(
                statement,
                &data.inputs(),
                &options(output(), 1, TierChoice::Interpreter),
            )
            .unwrap();
        for threads in [1, 2, 7] {
            let before = jit.stats().split_runs;
            let got = jit
                .eval_with(statement, &data.inputs(), &options(output(), threads, TierChoice::Auto))
                .unwrap();
            assert!(same_bits(&got, &want), "{statement} on {threads} threads, compiled");
            // Every run splits but a one-thread run whose chunks would each
            // own their rows of the output: it runs whole, to the same bits.
            let sums_over_rows = statement.starts_with('z') || statement.starts_with('s');
            let split = jit.stats().split_runs - before;
            assert_eq!(
                split,
                u64::from(threads > 1 || sums_over_rows),
                "{statement} on {threads} threads"
            );
        }
    }
    let stats = jit.stats();
    assert_eq!(stats.interpreted_runs, 0, "{stats:?}");
    assert_eq!((stats.split_runs, stats.most_threads), (12, 7), "{stats:?}");
}

#[test]
fn eight_threads_share_one_engine_while_its_parallel_kernels_are_promoted() {
    let engine = Arc::new(promoting_engine(PromotionPolicy {
        runs: 6,
        work: u64::MAX,
        first_run_work: u64::MAX,
    }));
    let data = Arc::new(Data::new(5));
    let interp = Engine::new();
    let want: Arc<Vec<Tensor<f64>>> = Arc::new(
        KERNELS
            .iter()
            .map(|(statement, output)| {
                interp
                    .eval_with(
                        statement,
                        &data.inputs(),
                        &options(output(), 1, TierChoice::Interpreter),
                    )
                    .unwrap()
            })
            .collect(),
    );
    let workers: Vec<_> = (0..8)
        .map(|t| {
            let (engine, data, want) = (engine.clone(), data.clone(), want.clone());
            std::thread::spawn(move || {
                for run in 0..12 {
                    for (k, (statement, output)) in KERNELS.iter().enumerate() {
                        let threads = 1 + (t + run + k) % 3;
                        let got = engine
                            .eval_with(statement, &data.inputs(), &options(output(), threads, TierChoice::Auto))
                            .unwrap();
                        assert!(
                            same_bits(&got, &want[k]),
                            "thread {t}, run {run}: {statement} on {threads} threads"
                        );
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("no thread panics");
    }
    assert!(engine.wait_for_compilations(Duration::from_secs(60)));
    let stats = engine.stats();
    assert_eq!(stats.runs, 8 * 12 * KERNELS.len() as u64);
    assert_eq!(
        stats.compiled_variants,
        KERNELS.len(),
        "each kernel compiled once: {stats:?}"
    );
    assert!(stats.split_runs > 0, "{stats:?}");
    assert!(engine.diagnostics().is_empty(), "{:?}", engine.diagnostics());
    // Compiled now, every kernel still gives the same bits.
    for (k, (statement, output)) in KERNELS.iter().enumerate() {
        let got = engine
            .eval_with(statement, &data.inputs(), &options(output(), 3, TierChoice::Auto))
            .unwrap();
        assert!(same_bits(&got, &want[k]), "{statement} after promotion");
    }
    assert!(engine.stats().compiled_runs >= KERNELS.len() as u64);
}
