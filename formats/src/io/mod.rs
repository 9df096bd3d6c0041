//! Reading and writing Matrix Market and FROSTT files, and binsparse
//! files (HDF5) with the cargo feature `binsparse`.
//!
//! Readers take a file (or its bytes, for callers that hold them, such as
//! the fuzzer) and give a [`CoordinateList`](crate::CoordinateList), the
//! exchange form that [`Tensor::pack`](crate::Tensor::pack) stores in any
//! format; writers take a [`Tensor`](crate::Tensor). Values are `f64`, or,
//! through the `_as` readers and the writers, `i64` or `i32` exactly
//! ([`FileValue`]): integers beyond 2^53 are never rounded through `f64`;
//! or complex ([`Complex64`](crate::Complex64)): Matrix Market's `complex`
//! field (and `hermitian` symmetry), and in FROSTT files two numbers a
//! value ([`tns`](read_tns_as)); [`mtx_field`] and [`tns_is_complex`] tell
//! a complex file before it is read. Readers accept any
//! bytes without panicking, refuse sizes tessera will not allocate
//! ([`FormatError::TooLarge`](crate::FormatError::TooLarge)), and report
//! malformed input as [`FormatError::Parse`](crate::FormatError::Parse) with
//! the file and line. Writers print each value in the shortest form that
//! reads back to the same bits, and replace a file only once the new one is
//! complete: an interrupted write leaves the old file as it was. A path
//! ending in `.gz` is read and written gzip-compressed.
//!
//! ```no_run
//! use std::path::Path;
//! use tessera_formats::{io, Format, Tensor};
//! let file = io::read_mtx(Path::new("matrix.mtx"))?;
//! let a = Tensor::pack(&file.entries, Format::csr())?;
//! io::write_tns(Path::new("matrix.tns"), &a)?;
//! # Ok::<(), tessera_formats::FormatError>(())
//! ```

#[cfg(feature = "binsparse")]
mod binsparse;
mod mtx;
mod mtx_parallel;
mod replace;
mod text;
mod tns;
mod values;

#[cfg(feature = "binsparse")]
pub use binsparse::{binsparse_can_store, read_binsparse, read_binsparse_file, write_binsparse, BinsparseFile};
pub use mtx::{
    mtx_field, parse_mtx, parse_mtx_as, parse_mtx_field, read_mtx, read_mtx_as, write_mtx, write_mtx_to,
    write_mtx_to_with, write_mtx_with, MtxField, MtxFile, MtxHeader, MtxLayout, MtxSymmetry,
};
pub use replace::replace_file;
pub use text::without_gzip;
pub use tns::{
    parse_tns, parse_tns_as, parse_tns_with_shape, read_tns, read_tns_as, tns_is_complex, write_tns, write_tns_to,
};
pub use values::FileValue;
