//! An application embedding tessera, built without the command's
//! dependencies (`tessera = { version = "0.1", default-features = false }`):
//! a matrix from raw CSR arrays, a statement compiled once and run on new
//! data, the result read entry by entry.
//!
//! ```sh
//! cargo run --example embed --no-default-features
//! ```

use tessera::formats::{Format, Tensor};
use tessera::Inputs;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // [[4, 0, 1], [0, 2, 0], [3, 0, 0]] as scipy's indptr, indices, data.
    let a = Tensor::from_csr([3, 3], &[0, 2, 3, 4], &[0, 2, 1, 0], &[4.0, 1.0, 2.0, 3.0])?;
    let mut x = Tensor::from_dense(&[3], vec![1.0; 3])?;
    let formats = [("A", Format::csr()), ("x", Format::dense(1))];
    let spmv = tessera::engine().compile("y(i) = A(i,j) * x(j)", &formats, &Format::dense(1))?;
    for step in 1..=3 {
        x = spmv.run(&Inputs::new().with("A", &a).with("x", &x))?;
        for (i, value) in x.entries() {
            println!("step {step}: x({}) = {value}", i[0]);
        }
    }
    assert_eq!(x.to_dense_vec()?, vec![107.0, 8.0, 69.0]); // A³ · 1
    Ok(())
}
