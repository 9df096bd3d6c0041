//! Kernels of complex statements: the statement's real and imaginary
//! parts ([`crate::notation::complex`]) compiled as two real kernels, which
//! every tier runs as it runs any other. A run splits each complex input
//! into its real and imaginary parts once per version of the tensor (as
//! conversions are kept), runs both kernels on the parts and joins their
//! results into one complex tensor.

use std::sync::{Arc, Mutex};

use tessera_formats::typed::complex_parts;
use tessera_formats::{AnyTensor, Complex64, CoordinateList, Format, Tensor, TensorRef, ValueType, Version};

use super::{indent, InputSpecs, Inputs, Kernel, TierSet};
use crate::error::{EngineError, Result};
use crate::notation::complex::{part_name, split, Part};
use crate::notation::Statement;
use crate::schedule::Schedule;
use crate::EvalOptions;

/// A complex tensor's real and imaginary parts.
type Parts = Arc<(Tensor<f64>, Tensor<f64>)>;

/// A complex input's parts, and the version of the tensor they were made
/// from.
type SplitInput = (Version, Parts);

/// What a kernel of a complex statement has besides the kernel of its real
/// part (the [`Kernel`] holding it).
pub(super) struct ComplexParts {
    /// The statement over complex values.
    pub(super) statement: Statement,
    /// The kernel of the imaginary part, unless it is 0 everywhere.
    imaginary: Option<Kernel>,
    /// The complex inputs, whose parts both kernels read.
    inputs: Vec<String>,
    /// Per complex input, its parts as last split.
    splits: Mutex<Vec<Option<SplitInput>>>,
    /// Whether the result is complex (`real(z(i))` reads complex values
    /// and gives real ones).
    gives_complex: bool,
}

/// The kernel of `stmt` when it computes with complex values: the kernel
/// of its real part, holding that of its imaginary part; `None` for a
/// statement over real values.
pub(super) fn compile(
    stmt: &Statement,
    (formats, fills, types): InputSpecs<'_>,
    output: &Format,
    schedule: &Schedule,
    tiers: Arc<TierSet>,
) -> Result<Option<Kernel>> {
    let type_of = |name: &str| {
        types
            .iter()
            .find(|(n, _)| n == name)
            .map_or(ValueType::F64, |(_, t)| *t)
    };
    let Some(split) = split(stmt, &|name| Some(type_of(name)))? else {
        return Ok(None);
    };
    let complex = |name: &str| type_of(name) == ValueType::C64;
    let parts = |name: &str| [part_name(name, Part::Re), part_name(name, Part::Im)];
    let mut part_formats = Vec::new();
    for (name, format) in formats {
        match complex(name) {
            true => part_formats.extend(parts(name).map(|p| (p, format.clone()))),
            false => part_formats.push((name.clone(), format.clone())),
        }
    }
    // A complex fill is its real part (`Inputs` gives fills in `f64`).
    let part_fills: Vec<(String, f64)> = fills
        .iter()
        .map(|(n, f)| match complex(n) {
            true => (part_name(n, Part::Re), *f),
            false => (n.clone(), *f),
        })
        .collect();
    let part_types: Vec<(String, ValueType)> = types.iter().filter(|(n, _)| !complex(n)).cloned().collect();
    let specs = (&part_formats[..], &part_fills[..], &part_types[..]);
    let mut real = Kernel::compile(&split.re, specs, output, schedule, tiers.clone())?;
    let imaginary = match &split.im {
        Some(im) => Some(Kernel::compile(im, specs, output, schedule, tiers)?),
        None => None,
    };
    let mut plan = format!(
        "complex values: the real and imaginary parts run as real kernels over the parts of {}\nreal part: {}\n{}",
        split.complex_inputs.join(", "),
        split.re,
        indent(real.plan()),
    );
    match &imaginary {
        Some(k) => plan.push_str(&format!("imaginary part: {}\n{}", k.statement(), indent(k.plan()))),
        None if split.complex => plan.push_str("imaginary part: 0 everywhere\n"),
        None => {}
    }
    real.plan = plan;
    if split.complex {
        real.value_type = ValueType::C64;
    }
    real.complex = Some(Box::new(ComplexParts {
        statement: stmt.clone(),
        imaginary,
        splits: Mutex::new(vec![None; split.complex_inputs.len()]),
        inputs: split.complex_inputs,
        gives_complex: split.complex,
    }));
    Ok(Some(real))
}

impl ComplexParts {
    /// Runs the kernels of the parts (`real` is the real part's) on
    /// `inputs` and joins their results.
    pub(super) fn run(&self, real: &Kernel, inputs: &Inputs<'_>, options: &EvalOptions) -> Result<AnyTensor> {
        let splits = self.split_inputs(inputs)?;
        let mut parts = Inputs::new();
        for (name, tensor) in &inputs.tensors {
            if !self.inputs.contains(name) {
                parts.insert_any(name, *tensor);
            }
        }
        for (name, split) in self.inputs.iter().zip(&splits) {
            parts.insert(&part_name(name, Part::Re), &split.0);
            parts.insert(&part_name(name, Part::Im), &split.1);
        }
        // A part may read none of the tensors that fix a variable's size
        // (the imaginary part of `c64(abs(C(l,i) - C(l,i))) + D(l,k)`
        // reads no C): the parts run with the sizes the whole statement
        // fixes.
        let shape_of = |name: &str| inputs.get(name).map(|t| t.shape().to_vec());
        let size_of = |var: &str| options.sizes.iter().find(|(v, _)| v == var).map(|(_, s)| *s);
        let sizes = crate::notation::check(&self.statement, &shape_of, &size_of)?;
        let mut options = options.clone();
        for (var, size) in sizes.iter() {
            if !options.sizes.iter().any(|(v, _)| v == var.as_str()) {
                options.sizes.push((var.as_str().to_string(), size));
            }
        }
        let options = &options;
        let re = real.run_parts(&parts, options)?;
        if !self.gives_complex {
            return Ok(re);
        }
        let im = match &self.imaginary {
            Some(kernel) => Some(kernel.run_parts(&parts, options)?.into_f64()),
            None => None,
        };
        joined(&re.into_f64(), im.as_ref()).map(AnyTensor::C64)
    }

    /// Each complex input's parts: those split from this version of it
    /// before, or split now and kept.
    fn split_inputs(&self, inputs: &Inputs<'_>) -> Result<Vec<Parts>> {
        let mut cache = self.splits.lock().unwrap_or_else(|e| e.into_inner());
        self.inputs
            .iter()
            .enumerate()
            .map(|(k, name)| {
                let tensor = match inputs.get(name) {
                    Some(TensorRef::C64(t)) => t,
                    Some(other) => {
                        return Err(EngineError::Unsupported(format!(
                            "{name} holds {} values, the kernel was compiled for c64",
                            other.value_type()
                        )))
                    }
                    None => {
                        return Err(EngineError::UnknownTensor {
                            name: name.clone(),
                            column: 0,
                        })
                    }
                };
                if tensor.fill().im != 0.0 {
                    return Err(EngineError::Unsupported(format!(
                        "{name}'s fill {} is not real: complex tensors run with real fills",
                        tensor.fill()
                    )));
                }
                if let Some((version, parts)) = &cache[k] {
                    if *version == tensor.version() {
                        return Ok(parts.clone());
                    }
                }
                let parts = Arc::new(complex_parts(tensor));
                cache[k] = Some((tensor.version(), parts.clone()));
                Ok(parts)
            })
            .collect()
    }
}

/// The complex tensor of real part `re` and imaginary part `im` (0 when
/// `None`): value by value when both are stored alike, otherwise entry by
/// entry, packed into `re`'s format.
fn joined(re: &Tensor<f64>, im: Option<&Tensor<f64>>) -> Result<Tensor<Complex64>> {
    let Some(im) = im else {
        return Ok(re.map_values(Complex64::from));
    };
    let fill = Complex64::new(re.fill(), im.fill());
    if re.format() == im.format() && re.levels() == im.levels() {
        let mut z = re.map_values(Complex64::from);
        for (value, &imaginary) in z.values_mut().iter_mut().zip(im.values()) {
            value.im = imaginary;
        }
        return Ok(z.with_fill(fill)?);
    }
    let mut entries = CoordinateList::new(re.shape());
    let mut push = |coords: &[u64], value: Complex64| entries.push(coords, value);
    for (coords, v) in re.stored_entries().iter() {
        push(coords, Complex64::new(v, 0.0))?;
    }
    for (coords, v) in im.stored_entries().iter() {
        push(coords, Complex64::new(0.0, v))?;
    }
    Ok(Tensor::pack_with_fill(&entries, re.format().clone(), fill)?)
}
