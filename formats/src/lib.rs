//! Level formats, tensors, packing, validation and file I/O: the foundation
//! of tessera.
//!
//! A tensor's storage is a coordinate hierarchy with one level per
//! [`Format`] level; each level is stored by one of six level formats
//! (dense, compressed, singleton, range, offset, hashed) that all implement
//! the one [`Level`] trait. Level functions are staged over a [`Builder`] so
//! that the interpreter and the compiled tiers share them.

pub mod budget;
pub mod census;
pub mod coordinates;
mod direct;
pub mod error;
pub mod format;
pub mod index;
pub mod interop;
pub mod io;
pub mod level;
pub mod levels;
pub mod memory;
pub mod padding;
pub mod parts;
pub mod properties;
pub mod raw;
pub mod reorder;
mod sorting;
pub mod spec;
pub mod staging;
pub mod tensor;
mod transpose;
pub mod typed;
pub mod value;
pub mod walk;

pub use coordinates::{CoordinateList, MAX_ENTRIES, MAX_POSITIONS};
pub use error::{FormatError, Result};
pub use format::{Format, FormatLevel, LevelFormat, LevelKind, Projection, Split, MAX_DIMENSION};
pub use index::{reserve_moving_elements, CoordRun, IndexArray, IndexWidth};
pub use level::{Footprint, Level, LevelCounts, PackInput, Packed, Segment};
pub use properties::{Assembly, Capabilities, CoordinateRelation, Iteration, Properties};
pub use raw::{CompressedArrays, Compression};
pub use staging::{
    ArrayRef, Builder, Cmp, Immediate, IntOp, LevelRef, LoopBody, LoopCond, LoopState, Param, StorageResolver,
};
pub use tensor::{FirstNonzeros, LevelStorage, Tensor, TensorLevels, Version};
pub use typed::{AnyTensor, Complex64, TensorRef, ValueType};
pub use value::Value;
pub use walk::{Coords, Entries};
