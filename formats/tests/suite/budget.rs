//! Conversions are refused before allocation beyond the
//! memory budget, and go through within it. (Its own test binary: the
//! budget is global to the process.)

use tessera_formats::budget::set_memory_limit;
use tessera_formats::{Format, FormatError, Tensor};

#[test]
fn conversions_and_dense_arrays_respect_the_memory_limit() {
    let dense = Tensor::from_dense(&[2500, 2000], vec![1.0; 5_000_000]).unwrap();
    set_memory_limit(Some(100 << 20));
    let refused = dense.convert(&Format::csr());
    let permuted = dense.permute(&[1, 0], &Format::dense(2));
    set_memory_limit(None);
    match refused {
        Err(FormatError::TooLarge(m)) => assert!(
            m.contains("converting a tensor of 5000000 stored entries needs 228.9 MiB but the limit is 100.0 MiB"),
            "{m}"
        ),
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(
        matches!(permuted, Err(FormatError::TooLarge(_))),
        "permuting went through"
    );
    // Within the budget the same conversion goes through.
    let csr = dense.convert(&Format::csr()).unwrap();
    assert_eq!(csr.stored(), 5_000_000);
}
