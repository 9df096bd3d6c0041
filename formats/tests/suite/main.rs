//! tessera-formats' integration tests, built as one binary: as a binary
//! each, every file linked the crate and instantiated its generic code
//! again, which took most of the test build's time. Each module is one
//! concern, named as the file it was; `cargo test -p tessera-formats
//! --test suite io::` runs one.

mod common;

mod bad_input;
mod binsparse;
mod budget;
mod complex_values;
mod entries;
mod first_nonzeros;
mod fuzz_regressions;
mod get;
mod integer_values;
mod interop;
mod io;
mod level_functions;
mod parts;
mod raw_arrays;
mod reorder;
mod roundtrip;
mod unordered_coo;
