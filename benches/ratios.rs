//! Ratios measured by interleaving: each round times the Cranelift tier,
//! the interpreter, the hand-written loop and `sprs` once each, one after
//! the other, and the report is the median over rounds of each round's
//! ratio. Background load on a shared machine then slows both sides of a
//! ratio alike, which criterion's one-function-after-another groups cannot
//! promise. (`cargo bench --bench tiers` gives the criterion statistics.)
//!
//! The `cranelift 2t` rows run the same kernel on two threads: their ratio
//! to the `cranelift` row is the thread speedup. SpMV's `hand-written 2t`
//! row is the hand-written loop on two threads: the speedup the machine's
//! memory allows a loop that streams its matrix.
//!
//! `semiring` compares min-plus SpMV with plus-times SpMV on one matrix.
//!
//! `types` compares SpMV on one matrix, whose values and x are far larger
//! than the caches, held as `f64`, `f32` and `bool` (a breadth-first
//! search step).
//!
//! `interpreter` compares the interpreter with the Cranelift tier on the
//! kernels whose loops it runs as one op each (TTV, MTTKRP and SDDMM),
//! on a 3rd-order tensor of one or two entries per fibre, as the shipped
//! `wordnet_sense` has, and a matrix of 60 entries per row.
//!
//! `opencl` (with `--features opencl`) compares the OpenCL tier with the
//! Cranelift tier on SpMV, SpMM, SDDMM and SpGEMM; both on every core of
//! the machine, the device's or the CPU's.
//!
//! `cargo bench --bench ratios` runs every workload; `cargo bench --bench
//! ratios -- spgemm` one of them; `TESSERA_ROUNDS=n` sets the rounds.

mod common;

use std::hint::black_box;
use std::time::Instant;

use common::{
    add_loop, bcsr_spmv_loop, block_matrix, dia_spmv_loop, kernel, laplacian2d, on_threads, random_dense, rng,
    spgemm_loop, spmm_loop, spmv_loop, spmv_loop_on_threads, Csr,
};
use tessera::formats::{Format, Tensor};
use tessera::Inputs;

/// The hand-written min-plus SpMV: each row's minimum of `a(i,j) + x(j)`
/// over its stored entries, `+inf` for an empty row.
fn min_plus_loop(a: &Csr, x: &[f64]) -> Vec<f64> {
    (0..a.rows)
        .map(|i| {
            let (b, e) = (a.pos[i] as usize, a.pos[i + 1] as usize);
            a.vals[b..e]
                .iter()
                .zip(&a.idx[b..e])
                .map(|(v, &j)| v + x[j as usize])
                .fold(f64::INFINITY, f64::min)
        })
        .collect()
}

/// One contender of a workload: its name and one run.
type Contender<'a> = (&'static str, Box<dyn FnMut() + 'a>);

fn seconds(run: &mut dyn FnMut()) -> f64 {
    let start = Instant::now();
    run();
    start.elapsed().as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs every contender once per round (after one warm-up run each) and
/// prints each one's median time and median ratio to the first.
fn report(workload: &str, rounds: usize, mut contenders: Vec<Contender<'_>>) {
    for (_, run) in contenders.iter_mut() {
        run();
    }
    let mut times = vec![Vec::with_capacity(rounds); contenders.len()];
    for _ in 0..rounds {
        for (k, (_, run)) in contenders.iter_mut().enumerate() {
            times[k].push(seconds(run.as_mut()));
        }
    }
    println!("{workload} ({rounds} rounds):");
    let base = contenders[0].0;
    for (k, (name, _)) in contenders.iter().enumerate() {
        let ratio = median(times[k].iter().zip(&times[0]).map(|(t, b)| t / b).collect());
        println!(
            "  {name:<15} median {:>9.3} ms   {ratio:>5.2} x {base}",
            median(times[k].clone()) * 1e3
        );
    }
}

fn main() {
    let filter: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let wanted = |name: &str| filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str()));
    let rounds = std::env::var("TESSERA_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(25);

    if wanted("spmv") {
        let mut r = rng(1);
        let a = Csr::random(&mut r, 500_000, 500_000, 10);
        let x = random_dense(&mut r, &[a.cols]);
        let at = a.tensor();
        let inputs = Inputs::new().with("A", &at).with("x", &x);
        let (k, jit, interp) = kernel("y(i) = A(i,j) * x(j)", &inputs, Format::dense(1));
        let jit2 = on_threads(&jit, 2);
        let sp = a.sprs();
        report(
            &format!("spmv, {} nonzeros", a.nnz()),
            rounds,
            vec![
                ("hand-written", Box::new(|| drop(black_box(spmv_loop(&a, x.values()))))),
                (
                    "hand-written 2t",
                    Box::new(|| drop(black_box(spmv_loop_on_threads(&a, x.values(), 2)))),
                ),
                ("cranelift", Box::new(|| drop(black_box(k.run_with(&inputs, &jit))))),
                ("cranelift 2t", Box::new(|| drop(black_box(k.run_with(&inputs, &jit2))))),
                (
                    "interpreter",
                    Box::new(|| drop(black_box(k.run_with(&inputs, &interp)))),
                ),
                (
                    "sprs",
                    Box::new(|| {
                        let mut y = vec![0.0; a.rows];
                        sprs::prod::mul_acc_mat_vec_csr(sp.view(), x.values(), &mut y[..]);
                        black_box(y);
                    }),
                ),
            ],
        );
    }
    if wanted("semiring") {
        // Min-plus SpMV (a Bellman-Ford step) against plus-times SpMV on
        // the same matrix: absent entries are +inf, so both visit the
        // stored entries only.
        let mut r = rng(6);
        let a = Csr::random(&mut r, 500_000, 500_000, 10);
        let x = random_dense(&mut r, &[a.cols]);
        let at = a.tensor();
        let inputs = Inputs::new().with("A", &at).with("x", &x);
        let (plus_times, jit, _) = kernel("y(i) = A(i,j) * x(j)", &inputs, Format::dense(1));
        let (distances, lengths) = (
            at.clone().with_fill(f64::INFINITY).expect("a fill"),
            x.clone().with_fill(f64::INFINITY).expect("a fill"),
        );
        let paths = Inputs::new().with("A", &distances).with("x", &lengths);
        let (min_plus, _, _) = kernel("y(i) = min(j, A(i,j) + x(j))", &paths, Format::dense(1));
        report(
            &format!("semiring spmv, {} nonzeros", a.nnz()),
            rounds,
            vec![
                (
                    "plus-times",
                    Box::new(|| drop(black_box(plus_times.run_with(&inputs, &jit)))),
                ),
                (
                    "min-plus",
                    Box::new(|| drop(black_box(min_plus.run_with(&paths, &jit)))),
                ),
                (
                    "hand min-plus",
                    Box::new(|| drop(black_box(min_plus_loop(&a, x.values())))),
                ),
            ],
        );
    }
    if wanted("types") {
        let mut r = rng(7);
        let a = Csr::random(&mut r, 2_000_000, 2_000_000, 10);
        let x = random_dense(&mut r, &[a.cols]);
        let at = a.tensor();
        let (a32, x32) = (at.map_values(|v| v as f32), x.map_values(|v| v as f32));
        let (abool, xbool) = (at.map_values(|v| v != 0.0), x.map_values(|v| v != 0.0));
        let doubles = Inputs::new().with("A", &at).with("x", &x);
        let singles = Inputs::new().with("A", &a32).with("x", &x32);
        let truths = Inputs::new().with("A", &abool).with("x", &xbool);
        let spmv = "y(i) = A(i,j) * x(j)";
        let (f64_kernel, jit, _) = kernel(spmv, &doubles, Format::dense(1));
        let (f32_kernel, _, _) = kernel(spmv, &singles, Format::dense(1));
        let (bool_kernel, _, _) = kernel(spmv, &truths, Format::dense(1));
        report(
            &format!("value types, spmv of {} nonzeros", a.nnz()),
            rounds,
            vec![
                (
                    "f64",
                    Box::new(|| drop(black_box(f64_kernel.run_typed(&doubles, &jit)))),
                ),
                (
                    "f32",
                    Box::new(|| drop(black_box(f32_kernel.run_typed(&singles, &jit)))),
                ),
                (
                    "bool",
                    Box::new(|| drop(black_box(bool_kernel.run_typed(&truths, &jit)))),
                ),
            ],
        );
    }
    if wanted("spmm") {
        let mut r = rng(2);
        let n = 64;
        let a = Csr::random(&mut r, 50_000, 50_000, 10);
        let b = random_dense(&mut r, &[a.cols, n]);
        let at = a.tensor();
        let inputs = Inputs::new().with("A", &at).with("B", &b);
        let (k, jit, interp) = kernel("C(i,j) = A(i,k) * B(k,j)", &inputs, Format::dense(2));
        let jit2 = on_threads(&jit, 2);
        report(
            &format!("spmm, {} nonzeros x {n} columns", a.nnz()),
            rounds,
            vec![
                (
                    "hand-written",
                    Box::new(|| drop(black_box(spmm_loop(&a, b.values(), n)))),
                ),
                ("cranelift", Box::new(|| drop(black_box(k.run_with(&inputs, &jit))))),
                ("cranelift 2t", Box::new(|| drop(black_box(k.run_with(&inputs, &jit2))))),
                (
                    "interpreter",
                    Box::new(|| drop(black_box(k.run_with(&inputs, &interp)))),
                ),
            ],
        );
    }
    if wanted("csr_add") {
        let mut r = rng(3);
        let a = Csr::random(&mut r, 200_000, 200_000, 10);
        let b = Csr::random(&mut r, 200_000, 200_000, 10);
        let (at, bt) = (a.tensor(), b.tensor());
        let inputs = Inputs::new().with("A", &at).with("B", &bt);
        let (k, jit, interp) = kernel("C(i,j) = A(i,j) + B(i,j)", &inputs, Format::csr());
        let jit2 = on_threads(&jit, 2);
        let (sa, sb) = (a.sprs(), b.sprs());
        report(
            &format!("csr_add, {} + {} nonzeros", a.nnz(), b.nnz()),
            rounds.div_ceil(2),
            vec![
                ("hand-written", Box::new(|| drop(black_box(add_loop(&a, &b))))),
                ("cranelift", Box::new(|| drop(black_box(k.run_with(&inputs, &jit))))),
                ("cranelift 2t", Box::new(|| drop(black_box(k.run_with(&inputs, &jit2))))),
                (
                    "interpreter",
                    Box::new(|| drop(black_box(k.run_with(&inputs, &interp)))),
                ),
                ("sprs", Box::new(|| drop(black_box(&sa + &sb)))),
            ],
        );
    }
    if wanted("structured") {
        // SpMV on a 2-D 5-point Laplacian stored as CSR, DIA and ELL, and on
        // a matrix of dense 4 x 4 blocks stored as CSR and BCSR: the
        // structured formats iterated natively, against CSR on the same
        // tier.
        let stencil = laplacian2d(700);
        let blocks = block_matrix(&mut rng(5), 100_000, 4, 0.0002);
        for (name, entries, formats) in [
            (
                "stencil",
                &stencil,
                vec![("csr", Format::csr()), ("dia", Format::dia()), ("ell", Format::ell())],
            ),
            (
                "blocks",
                &blocks,
                vec![("csr", Format::csr()), ("bcsr 4x4", Format::bcsr(4, 4).unwrap())],
            ),
        ] {
            let x = random_dense(&mut rng(6), &[entries.shape()[1]]);
            let tensors: Vec<(&str, Tensor<f64>)> = formats
                .iter()
                .map(|(n, f)| (*n, Tensor::pack(entries, f.clone()).expect("packs")))
                .collect();
            let inputs: Vec<Inputs<'_>> = tensors
                .iter()
                .map(|(_, t)| Inputs::new().with("A", t).with("x", &x))
                .collect();
            let kernels: Vec<_> = inputs
                .iter()
                .map(|i| kernel("y(i) = A(i,j) * x(j)", i, Format::dense(1)))
                .collect();
            let mut contenders: Vec<Contender<'_>> = Vec::new();
            for (((label, _), input), (k, jit, interp)) in tensors.iter().zip(&inputs).zip(&kernels) {
                let cranelift: &'static str = Box::leak(format!("{label} jit").into_boxed_str());
                let interpreter: &'static str = Box::leak(format!("{label} interp").into_boxed_str());
                contenders.push((cranelift, Box::new(move || drop(black_box(k.run_with(input, jit))))));
                contenders.push((
                    interpreter,
                    Box::new(move || drop(black_box(k.run_with(input, interp)))),
                ));
            }
            // The hand-written loops over the same storage, the baseline of
            // each structured format.
            let xv = x.values();
            // A baseline that computes something else measures nothing.
            let agrees = |label: &str, by_hand: Vec<f64>| {
                let k = tensors
                    .iter()
                    .position(|(l, _)| *l == label)
                    .expect("a tensor of that label");
                let (kernel, jit, _) = &kernels[k];
                let y = kernel.run_with(&inputs[k], jit).expect("the kernel runs");
                let close = y
                    .values()
                    .iter()
                    .zip(&by_hand)
                    .all(|(a, b)| (a - b).abs() <= 1e-9 * (1.0 + b.abs()));
                assert!(
                    close && y.values().len() == by_hand.len(),
                    "{label}: the hand-written loop disagrees"
                );
            };
            for (label, t) in &tensors {
                let (rows, cols) = (t.shape()[0], t.shape()[1]);
                if *label == "dia" {
                    let offsets = common::dia_offsets(t);
                    contenders.push((
                        "dia by hand",
                        Box::new(move || drop(black_box(dia_spmv_loop(&offsets, t.values(), rows, cols, xv))))
                            as Box<dyn FnMut()>,
                    ));
                } else if label.starts_with("bcsr") {
                    let array = |k: usize| -> Vec<usize> {
                        let a = &t.level(1).arrays[k];
                        (0..a.len()).map(|p| a.get(p) as usize).collect()
                    };
                    let (pos, crd) = (array(0), array(1));
                    agrees(label, bcsr_spmv_loop(&pos, &crd, t.values(), 4, xv));
                    contenders.push((
                        "bcsr by hand",
                        Box::new(move || drop(black_box(bcsr_spmv_loop(&pos, &crd, t.values(), 4, xv)))),
                    ));
                }
            }
            report(
                &format!("structured spmv ({name}), {} nonzeros", entries.len()),
                rounds,
                contenders,
            );
        }
    }
    if wanted("structured sum") {
        // A + B on a matrix of dense 4 x 4 blocks: two BCSR tensors into
        // BCSR (block rows merged block by block), against CSR + CSR into
        // CSR on the same tier and the hand-written merge of block rows.
        let entries = block_matrix(&mut rng(7), 100_000, 4, 0.0002);
        let bcsr = Format::bcsr(4, 4).unwrap();
        let (a_csr, a_bcsr) = (
            Tensor::pack(&entries, Format::csr()).expect("packs"),
            Tensor::pack(&entries, bcsr.clone()).expect("packs"),
        );
        let csr_in = Inputs::new().with("A", &a_csr).with("B", &a_csr);
        let bcsr_in = Inputs::new().with("A", &a_bcsr).with("B", &a_bcsr);
        let statement = "C(i,j) = A(i,j) + B(i,j)";
        let (csr_kernel, csr_jit, _) = kernel(statement, &csr_in, Format::csr());
        let (bcsr_kernel, bcsr_jit, bcsr_interp) = kernel(statement, &bcsr_in, bcsr);
        let array = |k: usize| -> Vec<usize> {
            let a = &a_bcsr.level(1).arrays[k];
            (0..a.len()).map(|p| a.get(p) as usize).collect()
        };
        let (pos, crd) = (array(0), array(1));
        let by_hand = || common::bsr_add_loop((&pos, &crd, a_bcsr.values()), (&pos, &crd, a_bcsr.values()), 16);
        let sum = bcsr_kernel.run_with(&bcsr_in, &bcsr_jit).expect("the kernel runs");
        assert_eq!(
            sum.values(),
            by_hand().vals.as_slice(),
            "the hand-written loop disagrees"
        );
        report(
            &format!("structured sum (blocks), {} nonzeros", entries.len()),
            rounds,
            vec![
                (
                    "bcsr jit",
                    Box::new(|| drop(black_box(bcsr_kernel.run_with(&bcsr_in, &bcsr_jit)))),
                ),
                (
                    "bcsr interp",
                    Box::new(|| drop(black_box(bcsr_kernel.run_with(&bcsr_in, &bcsr_interp)))),
                ),
                (
                    "csr jit",
                    Box::new(|| drop(black_box(csr_kernel.run_with(&csr_in, &csr_jit)))),
                ),
                ("bcsr by hand", Box::new(|| drop(black_box(by_hand())))),
            ],
        );
    }
    if wanted("structured sum") {
        // A + B on a 2-D 5-point Laplacian: two DIA tensors into DIA (each
        // diagonal's rows merged at once), against CSR + CSR into CSR on
        // the same tier and the hand-written sum of aligned diagonals (what
        // scipy's DIA + DIA does).
        let entries = laplacian2d(700);
        let (a_csr, a_dia) = (
            Tensor::pack(&entries, Format::csr()).expect("packs"),
            Tensor::pack(&entries, Format::dia()).expect("packs"),
        );
        let csr_in = Inputs::new().with("A", &a_csr).with("B", &a_csr);
        let dia_in = Inputs::new().with("A", &a_dia).with("B", &a_dia);
        let statement = "C(i,j) = A(i,j) + B(i,j)";
        let (csr_kernel, csr_jit, _) = kernel(statement, &csr_in, Format::csr());
        let (dia_kernel, dia_jit, dia_interp) = kernel(statement, &dia_in, Format::dia());
        let offsets = common::dia_offsets(&a_dia);
        let rows = a_dia.shape()[0];
        let by_hand = || common::dia_add_loop((&offsets, a_dia.values()), (&offsets, a_dia.values()), rows);
        let sum = dia_kernel.run_with(&dia_in, &dia_jit).expect("the kernel runs");
        assert_eq!(sum.values(), by_hand().1.as_slice(), "the hand-written loop disagrees");
        report(
            &format!("structured sum (diagonals), {} nonzeros", entries.len()),
            rounds,
            vec![
                (
                    "dia jit",
                    Box::new(|| drop(black_box(dia_kernel.run_with(&dia_in, &dia_jit)))),
                ),
                (
                    "dia interp",
                    Box::new(|| drop(black_box(dia_kernel.run_with(&dia_in, &dia_interp)))),
                ),
                (
                    "csr jit",
                    Box::new(|| drop(black_box(csr_kernel.run_with(&csr_in, &csr_jit)))),
                ),
                ("dia by hand", Box::new(|| drop(black_box(by_hand())))),
            ],
        );
    }
    if wanted("spgemm") {
        let mut r = rng(4);
        let a = Csr::random(&mut r, 20_000, 20_000, 10);
        let b = Csr::random(&mut r, 20_000, 20_000, 10);
        let (at, bt) = (a.tensor(), b.tensor());
        let inputs = Inputs::new().with("A", &at).with("B", &bt);
        let (k, jit, interp) = kernel("C(i,j) = A(i,k) * B(k,j)", &inputs, Format::csr());
        let jit2 = on_threads(&jit, 2);
        let (sa, sb) = (a.sprs(), b.sprs());
        report(
            &format!("spgemm, {} x {} nonzeros", a.nnz(), b.nnz()),
            rounds,
            vec![
                ("sprs", Box::new(|| drop(black_box(&sa * &sb)))),
                ("cranelift", Box::new(|| drop(black_box(k.run_with(&inputs, &jit))))),
                ("cranelift 2t", Box::new(|| drop(black_box(k.run_with(&inputs, &jit2))))),
                ("hand-written", Box::new(|| drop(black_box(spgemm_loop(&a, &b))))),
                (
                    "interpreter",
                    Box::new(|| drop(black_box(k.run_with(&inputs, &interp)))),
                ),
            ],
        );
    }
    if wanted("interpreter") {
        interpreter(rounds);
    }
    #[cfg(feature = "opencl")]
    if wanted("opencl") {
        opencl(rounds);
        opencl_rows(rounds);
    }
}

/// The interpreter against the Cranelift tier, one thread each, on TTV,
/// MTTKRP and SDDMM.
fn interpreter(rounds: usize) {
    use rand::Rng;
    let mut r = rng(6);
    let (n, m, l, rank) = (150_000, 120_000, 60, 16);
    let mut entries = tessera::formats::CoordinateList::new(&[n, m, l]);
    for _ in 0..200_000 {
        let at = [
            r.random_range(0..n as u64),
            r.random_range(0..m as u64),
            r.random_range(0..l as u64),
        ];
        entries.push(&at, r.random_range(-1.0..1.0)).expect("inside the tensor");
    }
    let b = Tensor::pack(&entries, Format::csf(3)).expect("packs");
    let c = random_dense(&mut r, &[l]);
    let (cm, dm) = (random_dense(&mut r, &[m, rank]), random_dense(&mut r, &[l, rank]));
    let a = Csr::random(&mut r, 5_000, 5_000, 60);
    let at = a.tensor();
    let (u, v) = (random_dense(&mut r, &[5_000, 32]), random_dense(&mut r, &[5_000, 32]));
    let workloads = [
        (
            "ttv",
            "A(i,j) = B(i,j,k) * c(k)",
            Inputs::new().with("B", &b).with("c", &c),
            Format::csr(),
        ),
        (
            "mttkrp",
            "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
            Inputs::new().with("B", &b).with("C", &cm).with("D", &dm),
            Format::dense(2),
        ),
        (
            "sddmm",
            "C(i,j) = A(i,j) * U(i,k) * V(j,k)",
            Inputs::new().with("A", &at).with("U", &u).with("V", &v),
            Format::csr(),
        ),
    ];
    for (name, statement, inputs, output) in workloads {
        let (k, jit, interp) = kernel(statement, &inputs, output);
        let (jit, interp) = (on_threads(&jit, 1), on_threads(&interp, 1));
        report(
            &format!("interpreter: {name}, {statement}"),
            rounds,
            vec![
                ("cranelift", Box::new(|| drop(black_box(k.run_with(&inputs, &jit))))),
                (
                    "interpreter",
                    Box::new(|| drop(black_box(k.run_with(&inputs, &interp)))),
                ),
            ],
        );
    }
}

/// The OpenCL tier against the Cranelift tier (on all cores, since the
/// device runs on all of its own): each statement on the same inputs.
#[cfg(feature = "opencl")]
fn opencl(rounds: usize) {
    let mut r = rng(7);
    let a = Csr::random(&mut r, 200_000, 200_000, 10);
    let at = a.tensor();
    let x = random_dense(&mut r, &[a.cols]);
    let b = random_dense(&mut r, &[a.cols, 32]);
    let (u, v) = (random_dense(&mut r, &[a.rows, 16]), random_dense(&mut r, &[16, a.cols]));
    let small = Csr::random(&mut r, 20_000, 20_000, 10);
    let st = small.tensor();
    let workloads: [(&str, &str, Inputs<'_>, Format); 4] = [
        (
            "spmv",
            "y(i) = A(i,j) * x(j)",
            Inputs::new().with("A", &at).with("x", &x),
            Format::dense(1),
        ),
        (
            "spmm",
            "C(i,j) = A(i,k) * B(k,j)",
            Inputs::new().with("A", &at).with("B", &b),
            Format::dense(2),
        ),
        (
            "sddmm",
            "C(i,j) = A(i,j) * U(i,k) * V(k,j)",
            Inputs::new().with("A", &at).with("U", &u).with("V", &v),
            Format::csr(),
        ),
        (
            "spgemm",
            "C(i,j) = A(i,k) * B(k,j)",
            Inputs::new().with("A", &st).with("B", &st),
            Format::csr(),
        ),
    ];
    for (name, statement, inputs, output) in workloads {
        let (k, jit, _) = kernel(statement, &inputs, output.clone());
        let jit = common::on_threads(&jit, std::thread::available_parallelism().map_or(1, |n| n.get()));
        // One launch over every row: the device spreads the rows over its
        // work-items itself.
        let device = tessera::EvalOptions {
            tier: tessera::TierChoice::Named(tessera::OPENCL.into()),
            threads: Some(1),
            ..jit.clone()
        };
        k.run_with(&inputs, &device).expect("the OpenCL tier runs the kernel");
        report(
            &format!(
                "opencl {name}, {} nonzeros",
                if name == "spgemm" { small.nnz() } else { a.nnz() }
            ),
            rounds,
            vec![
                ("cranelift", Box::new(|| drop(black_box(k.run_with(&inputs, &jit))))),
                ("opencl", Box::new(|| drop(black_box(k.run_with(&inputs, &device))))),
            ],
        );
    }
}

/// The OpenCL tier's mappings of SpMV's rows, each forced, against the one
/// it chooses (first): on rows of equal length, on a matrix with one row of
/// half a million entries among 200k rows of ten (a fifth of the work),
/// and on one whose long row of a million is two thirds of it.
#[cfg(feature = "opencl")]
fn opencl_rows(rounds: usize) {
    use tessera::tiers::opencl::RowMapping;
    let mut r = rng(9);
    let even = Csr::random(&mut r, 200_000, 200_000, 10);
    let skewed = with_long_row(Csr::random(&mut r, 200_000, 1_000_000, 10), 2);
    let dominant = with_long_row(Csr::random(&mut r, 50_000, 1_000_000, 10), 1);
    let mappings = [
        ("chosen", RowMapping::Auto),
        ("item per row", RowMapping::ItemPerRow),
        ("32 lanes", RowMapping::Lanes(32)),
        ("split", RowMapping::Split { piece: 256 }),
    ];
    for (name, a) in [
        ("even rows", &even),
        ("a long row", &skewed),
        ("a dominant row", &dominant),
    ] {
        let at = a.tensor();
        let x = random_dense(&mut r, &[a.cols]);
        let inputs = Inputs::new().with("A", &at).with("x", &x);
        let options = tessera::EvalOptions {
            tier: tessera::TierChoice::Named(tessera::OPENCL.into()),
            threads: Some(1),
            output_format: Some(Format::dense(1)),
            ..tessera::EvalOptions::default()
        };
        let kernels: Vec<_> = mappings
            .iter()
            .map(|&(_, mapping)| {
                let tier = tessera::tiers::OpenClTier::new()
                    .expect("an OpenCL device")
                    .with_row_mapping(mapping)
                    .expect("a valid mapping");
                let engine = tessera::Engine::new()
                    .with_tier(std::sync::Arc::new(tier))
                    .with_promotion(tessera::PromotionPolicy::EAGER);
                let kernel = engine
                    .kernel_for("y(i) = A(i,j) * x(j)", &inputs, &options)
                    .expect("SpMV compiles");
                (engine, kernel)
            })
            .collect();
        report(
            &format!("opencl spmv rows, {name}, {} nonzeros", a.nnz()),
            rounds,
            mappings
                .iter()
                .zip(&kernels)
                .map(|(&(label, _), (_, k))| -> Contender<'_> {
                    (label, Box::new(|| drop(black_box(k.run_with(&inputs, &options)))))
                })
                .collect(),
        );
    }
}

/// `a` with row 7 holding every `step`-th column.
#[cfg(feature = "opencl")]
fn with_long_row(mut a: Csr, step: usize) -> Csr {
    let long: Vec<u32> = (0..a.cols as u32).step_by(step).collect();
    let (b, e) = (a.pos[7] as usize, a.pos[8] as usize);
    let grown = long.len() as i64 - (e - b) as i64;
    a.idx.splice(b..e, long.iter().copied());
    a.vals.splice(b..e, long.iter().map(|&j| (j % 7) as f64 - 3.0));
    for p in &mut a.pos[8..] {
        *p = (*p as i64 + grown) as u32;
    }
    a
}
