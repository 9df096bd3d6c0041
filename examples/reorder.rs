//! Data reordering in the library: the mesh graph of `data/4elt.mtx`
//! ordered by each method, its bandwidth before and after, and SpMM run on
//! the reordered inputs with the result permuted back — the same answer as
//! the plain run. The permutation is saved and reused, as a later run would.
//!
//! ```sh
//! cargo run --release --example reorder
//! ```

use tessera::engine::reorder::{eval_reordered, eval_with_plan, ReorderPlan};
use tessera::formats::reorder::{band_profile, load_permutations, save_permutations, Method};
use tessera::formats::{io, Format, Tensor};
use tessera::{EvalOptions, Inputs};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/4elt.mtx");
    let entries = io::read_mtx(path)?.entries;
    let n = entries.shape()[1];
    let a = Tensor::pack(&entries, Format::csr())?;
    let x = Tensor::from_dense(&[n, 8], (0..n * 8).map(|k| 1.0 + (k % 5) as f64).collect())?;
    let inputs = Inputs::new().with("A", &a).with("X", &x);
    let statement = "C(i,j) = A(i,k) * X(k,j)";
    let options = EvalOptions {
        output_format: Some(Format::dense(2)),
        ..EvalOptions::default()
    };
    let engine = tessera::engine();
    let plain = engine.eval_with(statement, &inputs, &options)?.to_dense_vec()?;
    println!("4elt: {}", band_profile(&entries)?);

    for method in Method::ALL {
        let run = eval_reordered(&engine, statement, &inputs, &options, method)?;
        let after = band_profile(&run.plan.driver_permutations().apply(&entries)?)?;
        let worst = run
            .result
            .to_dense_vec()?
            .iter()
            .zip(&plain)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-9, "{method} changed the answer by {worst}");
        println!(
            "{method:>7}: {after}; ordering {:?}, permuting {:?}, run {:?}, back {:?}",
            run.plan.ordering_time, run.permute_inputs, run.run, run.restore
        );
    }

    // Save RCM's permutation of A, then reuse it without ordering again.
    let file = std::env::temp_dir().join("4elt-rcm.perm");
    let plan = ReorderPlan::compute(statement, &inputs, Method::Rcm)?;
    save_permutations(&file, plan.driver_permutations(), "rcm of data/4elt.mtx")?;
    let saved = ReorderPlan::with_permutations(statement, &inputs, "A", load_permutations(&file)?)?;
    let again = eval_with_plan(&engine, statement, &inputs, &options, saved)?;
    assert_eq!(
        again.result.to_dense_vec()?,
        eval_with_plan(&engine, statement, &inputs, &options, plan)?
            .result
            .to_dense_vec()?
    );
    println!("a saved permutation ({}) gives the same result", file.display());
    Ok(())
}
