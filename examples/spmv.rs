//! Sparse matrix-vector product on the finite-element mesh graph shipped in
//! `data/4elt.mtx`, in several formats, checked against each other.
//!
//! ```sh
//! cargo run --release --example spmv
//! ```

use tessera::engine::{Engine, EvalOptions, Inputs};
use tessera::formats::{io, Format, Tensor};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/4elt.mtx");
    let entries = io::read_mtx(path)?.entries;
    let n = entries.shape()[1];
    let x = Tensor::from_dense(&[n], (0..n).map(|j| 1.0 + (j % 7) as f64).collect())?;
    let engine = Engine::new();
    let mut reference: Option<Vec<f64>> = None;
    for format in [
        Format::csr(),
        Format::csc(),
        Format::coo(2),
        Format::dcsr(),
        Format::ell(),
        Format::hash_rows(),
    ] {
        let a = Tensor::pack(&entries, format.clone())?;
        let inputs = Inputs::new().with("A", &a).with("x", &x);
        let y = engine.eval_with("y(i) = A(i,j) * x(j)", &inputs, &EvalOptions::default())?;
        let y = y.to_dense_vec()?;
        let checksum: f64 = y.iter().sum();
        match &reference {
            None => reference = Some(y),
            Some(r) => {
                let worst = r.iter().zip(&y).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
                assert!(worst < 1e-9, "{format} disagrees with CSR by {worst}");
            }
        }
        println!("{:>10}: {} stored, sum(y) = {checksum}", format.to_string(), a.stored());
    }
    Ok(())
}
