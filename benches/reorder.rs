//! Reordering's effect on SpMV and SpMM, as COMET reports it: for each
//! matrix and each ordering, the speedup of the kernel on the reordered
//! inputs over the same kernel on the original ones (above 1 a gain, below
//! 1 a loss), measured in interleaved rounds (each round times the
//! original, an unpermuted copy (the control) and every reordering once,
//! in an order that rotates from round to round; the median of
//! the per-round ratios is reported), with the ordering's own cost in runs
//! of the original SpMV, and bandwidth and profile before and after.
//!
//! `cargo bench --bench reorder -- FILE.mtx ...` (default: data/4elt.mtx);
//! `TESSERA_ROUNDS=n` sets the rounds (default 15), `TESSERA_TIER=interp`
//! measures the interpreter instead of the Cranelift tier. Prints one
//! markdown table.

mod common;

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use common::{kernel, random_dense, rng};
use tessera::engine::reorder::ReorderPlan;
use tessera::formats::io::read_mtx;
use tessera::formats::reorder::{band_profile, Method};
use tessera::formats::{Format, Tensor};
use tessera::{EvalOptions, Inputs, Kernel};

/// Columns of SpMM's dense operand (COMET's SpMM is sparse times dense).
const SPMM_COLUMNS: usize = 32;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs `k` on `inputs` `reps` times; the seconds per run.
fn timed(k: &Kernel, inputs: &Inputs<'_>, options: &EvalOptions, reps: usize) -> f64 {
    let start = Instant::now();
    for _ in 0..reps {
        black_box(k.run_with(inputs, options).expect("the kernel runs"));
    }
    start.elapsed().as_secs_f64() / reps as f64
}

/// One kernel on the original inputs and on each reordering's; the median
/// speedup of each reordering, and the original's median seconds per run.
fn speedups(
    statement: &str,
    output: Format,
    original: &Inputs<'_>,
    reordered: &[Inputs<'_>],
    rounds: usize,
    tier: &str,
) -> (Vec<f64>, f64) {
    let (k, jit, interp) = kernel(statement, original, output);
    let options = if tier == "interp" { interp } else { jit };
    // Enough runs per sample for about 2 ms, so timer resolution is moot.
    let once = timed(&k, original, &options, 1).max(1e-7);
    let reps = ((2e-3 / once) as usize).clamp(1, 1000);
    for r in reordered {
        timed(&k, r, &options, 1);
    }
    // Each round times the original and every reordering once; the order
    // rotates from round to round so that no contender always runs first
    // (or always right after another's data filled the caches).
    let contenders = reordered.len() + 1;
    let mut times = vec![Vec::with_capacity(rounds); contenders];
    for round in 0..rounds {
        for step in 0..contenders {
            let c = (round + step) % contenders;
            let inputs = if c == 0 { original } else { &reordered[c - 1] };
            times[c].push(timed(&k, inputs, &options, reps));
        }
    }
    let base = times[0].clone();
    let ratios: Vec<Vec<f64>> = times[1..]
        .iter()
        .map(|t| base.iter().zip(t).map(|(b, r)| b / r).collect())
        .collect();
    (ratios.into_iter().map(median).collect(), median(base))
}

struct Row {
    /// `None`: the control, an unpermuted copy of the inputs.
    method: Option<Method>,
    plan: ReorderPlan,
    spmv_inputs: Vec<(String, Tensor<f64>)>,
    spmm_inputs: Vec<(String, Tensor<f64>)>,
    permute: Duration,
}

fn inputs_of(tensors: &[(String, Tensor<f64>)]) -> Inputs<'_> {
    let mut inputs = Inputs::new();
    for (n, t) in tensors {
        inputs.insert(n, t);
    }
    inputs
}

fn main() {
    let files: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let files = if files.is_empty() {
        vec![concat!(env!("CARGO_MANIFEST_DIR"), "/data/4elt.mtx").to_string()]
    } else {
        files
    };
    let rounds = std::env::var("TESSERA_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(15);
    let tier = std::env::var("TESSERA_TIER").unwrap_or_else(|_| "jit".into());
    println!("tier {tier}, {rounds} interleaved rounds; speedup = original time / reordered time (median of per-round ratios)");
    println!();
    println!("| matrix | shape, nnz | method | bandwidth before → after | profile before → after | ordering cost (original SpMV runs) | permuting inputs (SpMV runs) | SpMV speedup | SpMM speedup |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for file in &files {
        let name = Path::new(file)
            .file_stem()
            .map_or(file.clone(), |s| s.to_string_lossy().into_owned());
        let mut entries = read_mtx(Path::new(file)).expect("the matrix reads").entries;
        entries.canonicalize();
        let (rows, cols) = (entries.shape()[0], entries.shape()[1]);
        let a = Tensor::pack(&entries, Format::csr()).expect("CSR holds it");
        let mut r = rng(7);
        let x = random_dense(&mut r, &[cols]);
        let xm = random_dense(&mut r, &[cols, SPMM_COLUMNS]);
        let spmv = "y(i) = A(i,j) * x(j)";
        let spmm = "C(i,j) = A(i,k) * X(k,j)";
        let spmv_in = Inputs::new().with("A", &a).with("x", &x);
        let spmm_in = Inputs::new().with("A", &a).with("X", &xm);
        let before = band_profile(&entries).expect("a matrix");

        // The control: the same inputs copied, not permuted. Its "speedup"
        // shows what noise and placement alone give.
        let copy = |inputs: &Inputs<'_>, names: [&str; 2]| -> Vec<(String, Tensor<f64>)> {
            names
                .iter()
                .map(|n| (n.to_string(), inputs.get(n).expect("given").to_f64()))
                .collect()
        };
        let mut table: Vec<Row> = vec![Row {
            method: None,
            plan: ReorderPlan::with_permutations(
                spmv,
                &spmv_in,
                "A",
                tessera::formats::reorder::ModePermutations::unchanged(&[rows, cols]),
            )
            .expect("same shape"),
            spmv_inputs: copy(&spmv_in, ["A", "x"]),
            spmm_inputs: copy(&spmm_in, ["A", "X"]),
            permute: Duration::ZERO,
        }];
        for method in Method::ALL {
            let Ok(plan) = ReorderPlan::compute(spmv, &spmv_in, method) else {
                continue; // rcm of a rectangular matrix: refused, reported below
            };
            let start = Instant::now();
            let spmv_inputs = plan.reorder_inputs(&spmv_in).expect("permutes").into_tensors();
            let permute = start.elapsed();
            // The same permutations for SpMM: i and k take A's row and
            // column permutations (k indexes A's columns, as j did).
            let spmm_plan = ReorderPlan::with_permutations(spmm, &spmm_in, "A", plan.driver_permutations().clone())
                .expect("same driver");
            let spmm_inputs = spmm_plan.reorder_inputs(&spmm_in).expect("permutes").into_tensors();
            table.push(Row {
                method: Some(method),
                plan,
                spmv_inputs,
                spmm_inputs,
                permute,
            });
        }
        let spmv_sets: Vec<Inputs<'_>> = table.iter().map(|r| inputs_of(&r.spmv_inputs)).collect();
        let spmm_sets: Vec<Inputs<'_>> = table.iter().map(|r| inputs_of(&r.spmm_inputs)).collect();
        let (spmv_speedups, spmv_time) = speedups(spmv, Format::dense(1), &spmv_in, &spmv_sets, rounds, &tier);
        let (spmm_speedups, _) = speedups(spmm, Format::dense(2), &spmm_in, &spmm_sets, rounds, &tier);
        for (k, row) in table.iter().enumerate() {
            let after_entries = row.plan.driver_permutations().apply(&entries).expect("permutes");
            let after = band_profile(&after_entries).expect("a matrix");
            println!(
                "| {name} | {rows}x{cols}, {} | {} | {} → {} | {} → {} | {:.1} | {:.1} | {:.2} | {:.2} |",
                entries.len(),
                row.method.map_or("none (copy)".to_string(), |m| m.to_string()),
                before.bandwidth,
                after.bandwidth,
                before.profile,
                after.profile,
                row.plan.ordering_time.as_secs_f64() / spmv_time,
                row.permute.as_secs_f64() / spmv_time,
                spmv_speedups[k],
                spmm_speedups[k],
            );
        }
        if rows != cols {
            println!(
                "| {name} | {rows}x{cols}, {} | rcm | refused: not square | | | | | |",
                entries.len()
            );
        }
    }
}
