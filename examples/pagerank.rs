//! PageRank on the finite-element mesh graph shipped in `data/4elt.mtx`:
//! the kernel is compiled once and run every iteration.
//!
//! ```sh
//! cargo run --release --example pagerank
//! ```

use tessera::engine::{Engine, EvalOptions, Inputs};
use tessera::formats::{io, Format, Tensor};

const DAMPING: f64 = 0.85;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/4elt.mtx");
    let a = Tensor::pack(&io::read_mtx(path)?.entries, Format::csr())?;
    let n = a.shape()[0];
    let engine = Engine::new();

    // Out-degrees, then the transition matrix M(i,j) = A(j,i) / deg(j).
    let deg = engine.eval_with(
        "deg(i) = A(i,j)",
        &Inputs::new().with("A", &a),
        &EvalOptions {
            output_format: Some(Format::dense(1)),
            ..Default::default()
        },
    )?;
    let inv = Tensor::from_dense(
        &[n],
        deg.to_dense_vec()?
            .iter()
            .map(|&d| if d > 0.0 { 1.0 / d } else { 0.0 })
            .collect(),
    )?;
    let m = engine.eval("M(i,j) = A(j,i) * w(j)", &Inputs::new().with("A", &a).with("w", &inv))?;

    let step = engine.compile(
        "p(i) = d * M(i,j) * r(j) + c",
        &[
            ("M", m.format().clone()),
            ("r", Format::dense(1)),
            ("d", Format::dense(0)),
            ("c", Format::dense(0)),
        ],
        &Format::dense(1),
    )?;
    let d = Tensor::from_dense(&[], vec![DAMPING])?;
    let c = Tensor::from_dense(&[], vec![(1.0 - DAMPING) / n as f64])?;
    let mut r = Tensor::from_dense(&[n], vec![1.0 / n as f64; n])?;
    for iteration in 1..=30 {
        let next = step.run(&Inputs::new().with("M", &m).with("r", &r).with("d", &d).with("c", &c))?;
        let change: f64 = next.values().iter().zip(r.values()).map(|(a, b)| (a - b).abs()).sum();
        r = next;
        if iteration % 5 == 0 {
            println!("iteration {iteration:2}: L1 change {change:.3e}");
        }
    }
    let mut ranked: Vec<(usize, f64)> = r.values().iter().copied().enumerate().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    println!("total rank {:.6}", r.values().iter().sum::<f64>());
    for (node, rank) in ranked.iter().take(5) {
        println!("node {node:5}: {rank:.6e}");
    }
    Ok(())
}
