//! binsparse files: the binary sparse array format of the GraphBLAS
//! community, in its HDF5 container (cargo feature `binsparse`).
//!
//! A binsparse file holds a sparse array's own arrays (`pointers_to_1`,
//! `indices_1`, `values`, …) and a JSON descriptor naming its format. Its
//! formats are trees of dense and sparse levels, which are tessera's
//! dense, compressed and coordinate (compressed over singletons) levels:
//! a file is read into the format it was written in, array for array, and
//! a tensor in such a format is written as it is stored. Named formats
//! (`CSR`, `CSC`, `DCSR`, `DCSC`, `COOR`, `COOC`, `DVEC`, `CVEC`, `DMATR`,
//! `DMATC`) are written by name, others (CSF, say) as level trees.
//!
//! Read as well: integer, boolean and `float32` values (converted to f64,
//! refused when an integer has no exact f64), `iso` values, a `fill`
//! value, and symmetric or skew-symmetric matrices stored as one
//! triangle (expanded). Refused, with the reason: complex values, formats
//! binsparse cannot store (DIA, ELL, BCSR, hashed, unordered levels:
//! convert first), and arrays that disagree with the descriptor.
//!
//! ```no_run
//! use tessera_formats::{io, Format, Tensor};
//! let a = io::read_binsparse("matrix.bsp.h5")?;
//! io::write_binsparse("copy.bsp.h5", &a.convert(&Format::csc())?)?;
//! # Ok::<(), tessera_formats::FormatError>(())
//! ```

mod container;
mod descriptor;

use std::path::Path;

use container::{Container, Indices, NewContainer};
use descriptor::{DataType, Descriptor, Layout, Structure, TreeLevel, Values};

use crate::coordinates::CoordinateList;
use crate::error::{FormatError, Result};
use crate::format::LevelFormat;
use crate::index::IndexArray;
use crate::level::Level;
use crate::levels::compressed::Compressed;
use crate::tensor::{LevelStorage, Tensor};

/// A binsparse file, read: its tensor, in the format the file stores it
/// in, and what the file said.
#[derive(Debug, Clone)]
pub struct BinsparseFile {
    pub tensor: Tensor<f64>,
    /// For people: `binsparse CSR, uint32 indices, float64 values`.
    pub description: String,
}

/// Reads a binsparse file into the format its arrays are in (a CSR file
/// into [`Format::csr`](crate::Format::csr), and so on), validated as
/// [`Tensor::from_parts`] validates.
///
/// Errors: [`FormatError::Binsparse`] naming the file and what is wrong
/// with it, and the tensor's validation errors.
pub fn read_binsparse(path: impl AsRef<Path>) -> Result<Tensor<f64>> {
    read_binsparse_file(path).map(|f| f.tensor)
}

/// [`read_binsparse`], with a description of the file.
pub fn read_binsparse_file(path: impl AsRef<Path>) -> Result<BinsparseFile> {
    let path = path.as_ref();
    let fault = |reason: String| FormatError::Binsparse {
        path: path.to_path_buf(),
        reason,
    };
    let container = Container::open(path).map_err(fault)?;
    let text = container.descriptor().map_err(fault)?;
    let descriptor = Descriptor::parse(&text).map_err(|e| fault(format!("descriptor: {e}")))?;
    let tensor = read_tensor(&container, &descriptor).map_err(|e| match e {
        Read::Fault(reason) => fault(reason),
        Read::Invalid(e) => fault(format!("its arrays are not a valid {}: {e}", format_name(&descriptor))),
    })?;
    let mut index_types: Vec<String> = Vec::new();
    for (_, t) in &descriptor.index_types {
        if !index_types.contains(&t.name()) {
            index_types.push(t.name());
        }
    }
    let mut description = format!("binsparse {}", format_name(&descriptor));
    if !index_types.is_empty() {
        description += &format!(", {} indices", index_types.join("/"));
    }
    let values = match descriptor.values {
        Values::Each(t) => t.name(),
        Values::Iso(t) => format!("iso[{}]", t.name()),
    };
    description += &format!(", {values} values");
    if descriptor.structure != Structure::General {
        description += &format!(", {} (expanded)", descriptor.structure.name());
    }
    Ok(BinsparseFile { tensor, description })
}

fn format_name(descriptor: &Descriptor) -> String {
    descriptor.name.clone().unwrap_or_else(|| {
        descriptor
            .layout
            .format()
            .map_or_else(|_| "level tree".to_string(), |f| format!("level tree ({f})"))
    })
}

/// Why a file's arrays did not become a tensor.
enum Read {
    /// The arrays disagree with the descriptor.
    Fault(String),
    /// The tensor they describe is not valid.
    Invalid(FormatError),
}

impl From<String> for Read {
    fn from(reason: String) -> Read {
        Read::Fault(reason)
    }
}

fn read_tensor(container: &Container, d: &Descriptor) -> std::result::Result<Tensor<f64>, Read> {
    let format = d.layout.format()?;
    let extent = |dim: usize| d.shape[d.layout.swizzle[dim]];
    let mut levels = Vec::with_capacity(d.shape.len());
    // Positions of the level above: 1 at the root.
    let mut parents = 1usize;
    for (level, first) in d.layout.levels.iter().zip(d.layout.first_dimensions()) {
        match *level {
            TreeLevel::Dense => {
                levels.push(LevelStorage::new(extent(first)));
                parents = parents.checked_mul(extent(first)).ok_or_else(|| {
                    Read::Invalid(FormatError::TooLarge(format!(
                        "the dense levels of shape {:?}",
                        d.shape
                    )))
                })?;
            }
            TreeLevel::Sparse { rank } => {
                let index_name = |k: usize| format!("indices_{}", first + k);
                let stored = container.len(&index_name(0))?;
                let pos = if first == 0 {
                    // A root sparse level has no pointers: it holds all its tuples.
                    IndexArray::from_u64(vec![0, stored as u64])
                } else {
                    let name = format!("pointers_to_{first}");
                    let len = container.len(&name)?;
                    if len != parents + 1 {
                        return Err(Read::Fault(format!(
                            "array `{name}` has {len} elements; the {parents} positions above it need {}",
                            parents + 1
                        )));
                    }
                    index_array(&name, container.indices(&name)?)?
                };
                let mut arrays = Vec::with_capacity(rank);
                for k in 0..rank {
                    let name = index_name(k);
                    let len = container.len(&name)?;
                    if len != stored {
                        return Err(Read::Fault(format!(
                            "array `{name}` has {len} elements, `{}` has {stored}",
                            index_name(0)
                        )));
                    }
                    arrays.push(index_array(&name, container.indices(&name)?)?);
                }
                let mut arrays = arrays.into_iter();
                let head = arrays.next().expect("a sparse level has rank at least 1");
                levels.push(Compressed::storage(extent(first), pos, head));
                let singleton = LevelFormat::singleton();
                let slot = singleton
                    .coordinate_array()
                    .expect("a singleton level stores its coordinates") as usize;
                for (k, idx) in arrays.enumerate() {
                    let mut storage = singleton.empty_storage(extent(first + 1 + k));
                    storage.arrays[slot] = idx;
                    levels.push(storage);
                }
                parents = stored;
            }
        }
    }
    let values = match d.values {
        Values::Each(t) => {
            let len = container.len("values")?;
            if len != parents {
                return Err(Read::Fault(format!(
                    "array `values` has {len} elements for {parents} stored positions"
                )));
            }
            container.values("values", t)?
        }
        Values::Iso(t) => {
            let one = container.values("values", t)?;
            match one.as_slice() {
                [v] => vec![*v; parents],
                _ => return Err(Read::Fault(format!("iso `values` has {} elements, not one", one.len()))),
            }
        }
    };
    let mut tensor = Tensor::from_parts(&d.shape, format.clone(), levels, values).map_err(Read::Invalid)?;
    if d.structure != Structure::General {
        tensor = expand_triangle(&tensor, d.structure)?;
    }
    if d.fill {
        let fill = container.values("fill_value", DataType::Float { bits: 64 })?;
        match fill.as_slice() {
            [v] => tensor = tensor.with_fill(*v).map_err(Read::Invalid)?,
            _ => {
                return Err(Read::Fault(format!(
                    "`fill_value` has {} elements, not one",
                    fill.len()
                )))
            }
        }
    }
    Ok(tensor)
}

/// An index array with its negative elements refused.
fn index_array(name: &str, indices: Indices) -> std::result::Result<IndexArray, Read> {
    match indices {
        Indices::Unsigned(v) => Ok(IndexArray::from_u64(v)),
        Indices::Signed(v) => match v.iter().position(|&x| x < 0) {
            Some(at) => Err(Read::Fault(format!(
                "array `{name}` has a negative element {} at {at}",
                v[at]
            ))),
            None => Ok(IndexArray::from_u64(v.into_iter().map(|x| x as u64).collect())),
        },
    }
}

/// The whole matrix of which `triangle` is the stored half: each entry off
/// the diagonal is mirrored (negated for skew symmetry), in the same format.
fn expand_triangle(triangle: &Tensor<f64>, structure: Structure) -> std::result::Result<Tensor<f64>, Read> {
    let (lower, negate) = match structure {
        Structure::General => return Ok(triangle.clone()),
        Structure::Symmetric { lower } => (lower, false),
        Structure::SkewSymmetric { lower } => (lower, true),
    };
    if triangle.shape()[0] != triangle.shape()[1] {
        return Err(Read::Fault(format!(
            "structure `{}` needs a square matrix, the shape is {:?}",
            structure.name(),
            triangle.shape()
        )));
    }
    let stored = triangle.stored_entries();
    let mut whole = CoordinateList::with_capacity(triangle.shape(), 2 * stored.len()).map_err(Read::Invalid)?;
    for (coords, value) in stored.iter() {
        let (i, j) = (coords[0], coords[1]);
        let outside = if lower { i < j } else { i > j };
        if outside {
            return Err(Read::Fault(format!(
                "structure `{}` stores one triangle, but ({i}, {j}) is in the other",
                structure.name()
            )));
        }
        if negate && i == j && value != 0.0 {
            return Err(Read::Fault(format!(
                "structure `{}` has zeros on its diagonal, but ({i}, {i}) is {value}",
                structure.name()
            )));
        }
        whole.push(&[i, j], value).map_err(Read::Invalid)?;
        if i != j {
            whole
                .push(&[j, i], if negate { -value } else { value })
                .map_err(Read::Invalid)?;
        }
    }
    Tensor::pack(&whole, triangle.format().clone()).map_err(Read::Invalid)
}

/// Whether binsparse can store a tensor in `format` as it is: dense,
/// sorted compressed and sorted coordinate levels, each storing a whole
/// mode. [`write_binsparse`] refuses the others.
///
/// ```
/// use tessera_formats::{io, Format};
/// assert!(io::binsparse_can_store(&Format::csc()));
/// assert!(!io::binsparse_can_store(&Format::dia()));
/// ```
pub fn binsparse_can_store(format: &crate::Format) -> bool {
    Layout::of_format(format).is_ok()
}

/// Writes `tensor` as a binsparse file, its arrays as they are stored:
/// index arrays in their own width (`uint32` or `uint64`), values as
/// `float64`, a nonzero fill as `fill_value`. The file is written beside
/// `path` and renamed over it once complete, so an interrupted write
/// leaves the old file as it was.
///
/// Errors: [`FormatError::Binsparse`] when binsparse cannot store the
/// tensor's format (DIA, ELL, BCSR, hashed or unordered levels: convert
/// it first, say to CSR), or when the file cannot be written.
pub fn write_binsparse(path: impl AsRef<Path>, tensor: &Tensor<f64>) -> Result<()> {
    let path = path.as_ref();
    let fault = |reason: String| FormatError::Binsparse {
        path: path.to_path_buf(),
        reason,
    };
    let layout = Layout::of_format(tensor.format()).map_err(fault)?;
    super::replace::replace_by_path(path, |temporary| {
        write_arrays(temporary, tensor, &layout).map_err(fault)
    })
}

fn write_arrays(path: &Path, tensor: &Tensor<f64>, layout: &Layout) -> std::result::Result<(), String> {
    let file = NewContainer::create(path)?;
    let mut index_types = Vec::new();
    for (level, first) in layout.levels.iter().zip(layout.first_dimensions()) {
        let TreeLevel::Sparse { rank } = *level else {
            continue;
        };
        let (pos, _) = Compressed::arrays(tensor.level(first)).ok_or("a compressed level without its arrays")?;
        if first > 0 {
            let name = format!("pointers_to_{first}");
            index_types.push((name.clone(), file.write_indices(&name, pos)?));
        }
        // The sparse level's coordinates: its compressed level's and its singletons'.
        for k in first..first + rank {
            let idx = tensor
                .format()
                .level(k)
                .coordinate_array()
                .and_then(|slot| tensor.level(k).arrays.get(slot as usize))
                .ok_or("a sparse level without its coordinates")?;
            let name = format!("indices_{k}");
            index_types.push((name.clone(), file.write_indices(&name, idx)?));
        }
    }
    file.write("values", tensor.values())?;
    let fill = tensor.fill();
    let has_fill = fill != 0.0;
    if has_fill {
        file.write("fill_value", &[fill])?;
    }
    let text = Descriptor::json(layout, tensor.shape(), &index_types, tensor.values().len(), has_fill);
    file.write_descriptor(&text)?;
    file.close()
}
