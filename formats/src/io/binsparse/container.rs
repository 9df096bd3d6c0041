//! The HDF5 container: named one-dimensional arrays in a file's root
//! group, and the descriptor as the root's `binsparse` string attribute.

use std::path::Path;

use hdf5::types::{TypeDescriptor, VarLenAscii, VarLenUnicode};
use hdf5_metno as hdf5;

use super::descriptor::DataType;
use crate::index::IndexArray;

/// An open binsparse file, for reading.
pub(super) struct Container {
    file: hdf5::File,
}

/// An index array as read: signed types are read as `i64`, so that a
/// negative index is seen rather than wrapped.
pub(super) enum Indices {
    Unsigned(Vec<u64>),
    Signed(Vec<i64>),
}

impl Container {
    pub(super) fn open(path: &Path) -> Result<Container, String> {
        let file = hdf5::File::open(path).map_err(|e| format!("not an HDF5 file tessera can open ({e})"))?;
        Ok(Container { file })
    }

    /// The text of the root group's `binsparse` attribute, stored as a
    /// fixed-length string (as the reference C implementation writes it)
    /// or a variable-length one (as h5py does).
    pub(super) fn descriptor(&self) -> Result<String, String> {
        let attr = self.file.attr("binsparse").map_err(|_| {
            "the file's root group has no `binsparse` attribute: it is not a binsparse file".to_string()
        })?;
        let not_text = |e: hdf5::Error| format!("the `binsparse` attribute is not text ({e})");
        let descriptor = attr.dtype().and_then(|t| t.to_descriptor()).map_err(not_text)?;
        match descriptor {
            TypeDescriptor::VarLenUnicode => Ok(attr.read_scalar::<VarLenUnicode>().map_err(not_text)?.to_string()),
            TypeDescriptor::VarLenAscii => Ok(attr.read_scalar::<VarLenAscii>().map_err(not_text)?.to_string()),
            TypeDescriptor::FixedAscii(len) | TypeDescriptor::FixedUnicode(len) => read_fixed_string(&attr, len),
            other => Err(format!("the `binsparse` attribute holds {other}, not text")),
        }
    }

    /// The length of array `name`, or why it cannot be read.
    pub(super) fn len(&self, name: &str) -> Result<usize, String> {
        let dataset = self.dataset(name)?;
        let shape = dataset.shape();
        if shape.len() != 1 {
            return Err(format!(
                "array `{name}` has {} dimensions, binsparse arrays have one",
                shape.len()
            ));
        }
        Ok(shape[0])
    }

    fn dataset(&self, name: &str) -> Result<hdf5::Dataset, String> {
        self.file
            .dataset(name)
            .map_err(|_| format!("the file has no array `{name}`, which its format needs"))
    }

    /// Index array `name`, read by its signedness.
    pub(super) fn indices(&self, name: &str) -> Result<Indices, String> {
        let dataset = self.dataset(name)?;
        let failed = |e: hdf5::Error| format!("array `{name}` cannot be read as integers ({e})");
        match dataset.dtype().and_then(|t| t.to_descriptor()).map_err(failed)? {
            TypeDescriptor::Unsigned(_) => Ok(Indices::Unsigned(dataset.read_raw::<u64>().map_err(failed)?)),
            TypeDescriptor::Integer(_) => Ok(Indices::Signed(dataset.read_raw::<i64>().map_err(failed)?)),
            other => Err(format!("array `{name}` holds {other}, not integers")),
        }
    }

    /// Array `name` as `f64`: floats as they are, integers converted
    /// (refused when one has no exact `f64`), booleans as 0 and 1.
    pub(super) fn values(&self, name: &str, declared: DataType) -> Result<Vec<f64>, String> {
        let dataset = self.dataset(name)?;
        let failed = |e: hdf5::Error| format!("array `{name}` cannot be read as numbers ({e})");
        let inexact = |v: String| {
            format!(
                "array `{name}` holds {v}, which has no exact f64 (tessera's values are f64; convert the values first)"
            )
        };
        match dataset.dtype().and_then(|t| t.to_descriptor()).map_err(failed)? {
            TypeDescriptor::Float(_) => dataset.read_raw::<f64>().map_err(failed),
            TypeDescriptor::Unsigned(_) => {
                let raw = dataset.read_raw::<u64>().map_err(failed)?;
                let truth = declared == DataType::Bool;
                raw.into_iter()
                    .map(|v| match (truth, v) {
                        (true, v) => Ok(f64::from(u8::from(v != 0))),
                        (false, v) if v <= 1 << f64::MANTISSA_DIGITS => Ok(v as f64),
                        (false, v) => Err(inexact(v.to_string())),
                    })
                    .collect()
            }
            TypeDescriptor::Integer(_) => {
                let raw = dataset.read_raw::<i64>().map_err(failed)?;
                raw.into_iter()
                    .map(|v| {
                        if v.unsigned_abs() <= 1 << f64::MANTISSA_DIGITS {
                            Ok(v as f64)
                        } else {
                            Err(inexact(v.to_string()))
                        }
                    })
                    .collect()
            }
            TypeDescriptor::Boolean => Ok(dataset
                .read_raw::<bool>()
                .map_err(failed)?
                .into_iter()
                .map(|b| f64::from(u8::from(b)))
                .collect()),
            other => Err(format!(
                "array `{name}` holds {other}, which tessera's f64 values cannot hold"
            )),
        }
    }
}

/// A new binsparse file, for writing.
pub(super) struct NewContainer {
    file: hdf5::File,
}

impl NewContainer {
    pub(super) fn create(path: &Path) -> Result<NewContainer, String> {
        let file = hdf5::File::create(path).map_err(|e| format!("cannot create an HDF5 file ({e})"))?;
        Ok(NewContainer { file })
    }

    /// Writes an index array in its own width; gives the type to declare.
    pub(super) fn write_indices(&self, name: &str, array: &IndexArray) -> Result<DataType, String> {
        match array {
            IndexArray::U32(v) => self.write(name, v)?,
            IndexArray::U64(v) => self.write(name, v)?,
            IndexArray::I64(v) => self.write(name, v)?,
        }
        Ok(match array {
            IndexArray::U32(_) => DataType::Int {
                signed: false,
                bits: 32,
            },
            IndexArray::U64(_) => DataType::Int {
                signed: false,
                bits: 64,
            },
            IndexArray::I64(_) => DataType::Int { signed: true, bits: 64 },
        })
    }

    pub(super) fn write<T: hdf5::H5Type>(&self, name: &str, data: &[T]) -> Result<(), String> {
        self.file
            .new_dataset_builder()
            .with_data(data)
            .create(name)
            .map(drop)
            .map_err(|e| format!("cannot write array `{name}` ({e})"))
    }

    /// Stores the descriptor as a fixed-length UTF-8 string attribute, the
    /// form every binsparse reader (h5py, the reference C library) reads.
    pub(super) fn write_descriptor(&self, text: &str) -> Result<(), String> {
        let failed = |e: hdf5::Error| format!("cannot write the `binsparse` attribute ({e})");
        let dtype = hdf5::Datatype::from_descriptor(&TypeDescriptor::FixedUnicode(text.len())).map_err(failed)?;
        let attr = self
            .file
            .new_attr_builder()
            .empty_as(&dtype)
            .shape(())
            .create("binsparse")
            .map_err(failed)?;
        // SAFETY: the buffer holds exactly the attribute's `text.len()`
        // bytes of its one element; HDF5 copies them before returning.
        let status =
            hdf5::sync::sync(|| unsafe { hdf5_metno_sys::h5a::H5Awrite(attr.id(), dtype.id(), text.as_ptr().cast()) });
        if status < 0 {
            return Err("cannot write the `binsparse` attribute".into());
        }
        Ok(())
    }

    /// Writes everything to the file and closes it.
    pub(super) fn close(self) -> Result<(), String> {
        self.file
            .close()
            .map_err(|e| format!("cannot finish the HDF5 file ({e})"))
    }
}

/// A fixed-length string attribute of `len` bytes, its padding removed.
fn read_fixed_string(attr: &hdf5::Attribute, len: usize) -> Result<String, String> {
    let dtype = attr
        .dtype()
        .map_err(|e| format!("the `binsparse` attribute has no type ({e})"))?;
    let mut buffer = vec![0u8; len];
    // SAFETY: the buffer has room for the attribute's one element of
    // `len` bytes, read in the attribute's own type.
    let status =
        hdf5::sync::sync(|| unsafe { hdf5_metno_sys::h5a::H5Aread(attr.id(), dtype.id(), buffer.as_mut_ptr().cast()) });
    if status < 0 {
        return Err("the `binsparse` attribute cannot be read".into());
    }
    let end = buffer.iter().position(|&b| b == 0).unwrap_or(len);
    buffer.truncate(end);
    String::from_utf8(buffer).map_err(|_| "the `binsparse` attribute is not UTF-8 text".into())
}
