//! The `pack` property: arbitrary raw level arrays, or arbitrary
//! coordinates and values, give a valid tensor or an error, never a panic;
//! and a tensor that validates never makes a kernel misbehave — on every
//! tier its copies, transpositions, reductions and products agree with the
//! dense reference, and its own functions (unpacking, conversion) work.
//!
//! The first byte chooses how the storage is made:
//! - raw: every level's extent, index arrays (any width, any length, any
//!   values) and parameters, and the values, from the bytes, for
//!   [`Tensor::from_parts`] to validate;
//! - mutated: a packed tensor's storage with a few edits (an element, a
//!   length, a width, a parameter, an extent), validated again;
//! - coordinates: a coordinate list (coordinates possibly out of range)
//!   for [`Tensor::pack`], which must pack every list that is in range.
//!
//! Values include NaN and infinities. The kernels run here keep the
//! reference's dense meaning equal to a sparse kernel's even so: each reads
//! the tensor alone, with itself on the same pattern, or with a dense
//! operand that stores every component finite and nonzero, so no implicit
//! zero ever meets a non-finite value.

use tessera::engine::notation::parse_statement;
use tessera::engine::reference::evaluate;
use tessera::engine::testing::{compare, output_formats, Tolerance};
use tessera::formats::{CoordinateList, Format, FormatError, IndexArray, LevelStorage, Tensor};
use tessera::{EvalOptions, Inputs, TierChoice};

use super::generate::{self, DIVISORS, VALUES};
use super::source::Source;

/// Stored values: the exact small ones, and the non-finite ones.
const SPECIAL_VALUES: [f64; 4] = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0];

/// Index array elements worth trying beyond small numbers.
const SPECIAL_INDICES: [i64; 8] = [-1, i64::MIN, i64::MAX, u32::MAX as i64, 1 << 32, 1 << 31, 63, 64];

/// Largest mode (a zero-sized mode is allowed).
const MAX_DIM: usize = 6;

/// Checks what `data` decodes to.
pub fn check(data: &[u8]) -> Result<(), String> {
    let mut src = Source::new(data);
    let how = src.below(3);
    let order = src.below(5);
    let shape: Vec<usize> = (0..order).map(|_| src.below(MAX_DIM + 1)).collect();
    let format = generate::format(&mut src, &shape);
    let built = super::catch("building the tensor", || match how {
        0 => raw(&mut src, &shape, &format),
        1 => mutated(&mut src, &shape, &format),
        _ => coordinates(&mut src, &shape, &format),
    })?;
    match built? {
        Some(t) => kernels(&mut src, &t).map_err(|e| format!("{}\n  {e}", describe(&t))),
        None => Ok(()),
    }
}

fn value(src: &mut Source<'_>) -> f64 {
    let b = src.byte() as usize;
    if b >= 240 {
        SPECIAL_VALUES[b % SPECIAL_VALUES.len()]
    } else {
        VALUES[b % VALUES.len()]
    }
}

fn index(src: &mut Source<'_>) -> i64 {
    let b = src.byte();
    if b >= 248 {
        SPECIAL_INDICES[b as usize % SPECIAL_INDICES.len()]
    } else {
        i64::from(b % 24)
    }
}

fn array(src: &mut Source<'_>) -> IndexArray {
    let width = src.below(3);
    let len = src.below(20);
    let elements: Vec<i64> = (0..len).map(|_| index(src)).collect();
    match width {
        0 => IndexArray::U32(elements.iter().map(|&e| e as u32).collect()),
        1 => IndexArray::U64(elements.iter().map(|&e| e as u64).collect()),
        _ => IndexArray::I64(elements),
    }
}

/// Raw storage from the bytes, for validation to judge.
fn raw(src: &mut Source<'_>, shape: &[usize], format: &Format) -> Result<Option<Tensor<f64>>, String> {
    let mut levels = Vec::with_capacity(format.levels().len());
    for k in 0..format.levels().len() {
        let extent = match format.level_extent(k, shape) {
            Some(e) if src.percent(90) => e,
            _ => index(src) as usize,
        };
        let mut level = LevelStorage::new(extent);
        for _ in 0..src.below(4) {
            level.arrays.push(array(src));
        }
        for _ in 0..src.below(3) {
            level.params.push(index(src));
        }
        levels.push(level);
    }
    let values: Vec<f64> = (0..src.below(40)).map(|_| value(src)).collect();
    validated(shape, format, levels, values)
}

/// A packed tensor's storage with a few edits, validated again.
fn mutated(src: &mut Source<'_>, shape: &[usize], format: &Format) -> Result<Option<Tensor<f64>>, String> {
    let list = generate::entries(src, shape, false);
    let packed = Tensor::pack(&list, format.clone())
        .map_err(|e| format!("packing {} entries of {shape:?} into {format}: {e}", list.len()))?;
    let mut levels = packed.levels().to_vec();
    let mut values = packed.values().to_vec();
    for _ in 0..src.range(1, 3) {
        let nlevels = levels.len();
        let what = src.below(8);
        if nlevels == 0 || what == 7 {
            match src.below(3) {
                0 => values.push(value(src)),
                1 => {
                    values.pop();
                }
                _ => {
                    let n = values.len();
                    if n > 0 {
                        values[src.below(n)] = value(src);
                    }
                }
            }
            continue;
        }
        let level = &mut levels[src.below(nlevels)];
        match what {
            0 => level.extent = index(src) as usize,
            1 => {
                let n = level.params.len();
                let v = index(src);
                if n > 0 {
                    level.params[src.below(n)] = v;
                } else {
                    level.params.push(v);
                }
            }
            _ => {
                let n = level.arrays.len();
                if n == 0 {
                    level.arrays.push(array(src));
                    continue;
                }
                let a = src.below(n);
                let mut elements = level.arrays[a].to_i64_vec();
                match what {
                    2 | 3 => {
                        let len = elements.len();
                        let v = index(src);
                        if len > 0 {
                            elements[src.below(len)] = v;
                        }
                    }
                    4 => elements.push(index(src)),
                    5 => {
                        elements.pop();
                    }
                    _ => {
                        // The same elements in another width.
                        let width = src.below(3);
                        level.arrays[a] = match width {
                            0 => IndexArray::U32(elements.iter().map(|&e| e as u32).collect()),
                            1 => IndexArray::U64(elements.iter().map(|&e| e as u64).collect()),
                            _ => IndexArray::I64(elements),
                        };
                        continue;
                    }
                }
                level.arrays[a] = match level.arrays[a] {
                    IndexArray::U32(_) => IndexArray::U32(elements.iter().map(|&e| e as u32).collect()),
                    IndexArray::U64(_) => IndexArray::U64(elements.iter().map(|&e| e as u64).collect()),
                    IndexArray::I64(_) => IndexArray::I64(elements),
                };
            }
        }
    }
    validated(shape, format, levels, values)
}

/// A coordinate list from the bytes: out-of-range coordinates are refused
/// when pushed; a list in range must pack.
fn coordinates(src: &mut Source<'_>, shape: &[usize], format: &Format) -> Result<Option<Tensor<f64>>, String> {
    let mut list = CoordinateList::new(shape);
    let mut coords = vec![0u64; shape.len()];
    for _ in 0..src.below(30) {
        for (c, &d) in coords.iter_mut().zip(shape) {
            // Now and then one past the end, or far beyond.
            *c = match src.byte() {
                255 => u64::MAX,
                254 => d as u64,
                b => u64::from(b) % (d.max(1) as u64),
            };
        }
        if list.push(&coords, value(src)).is_err() {
            // Refused: out of range (or a zero-sized mode). Fine.
            return Ok(None);
        }
    }
    match Tensor::pack(&list, format.clone()) {
        Ok(t) => Ok(Some(t)),
        Err(e) => Err(format!(
            "packing {} in-range entries of {shape:?} into {format} failed: {e}",
            list.len()
        )),
    }
}

/// The tensor if the storage validates. Validation either accepts or says
/// why not; anything else (a panic) is caught by the caller.
fn validated(
    shape: &[usize],
    format: &Format,
    levels: Vec<LevelStorage>,
    values: Vec<f64>,
) -> Result<Option<Tensor<f64>>, String> {
    match Tensor::from_parts(shape, format.clone(), levels, values) {
        Ok(t) => Ok(Some(t)),
        Err(
            FormatError::TooLarge(_)
            | FormatError::Shape(_)
            | FormatError::InvalidLevel { .. }
            | FormatError::BadFormat { .. },
        ) => Ok(None),
        Err(e) => Err(format!("validation failed with an unexpected error: {e}")),
    }
}

/// What a valid tensor must survive: its own functions, then kernels on
/// every tier against the reference.
fn kernels(src: &mut Source<'_>, t: &Tensor<f64>) -> Result<(), String> {
    let shape = t.shape().to_vec();
    let order = shape.len();
    // Unpacking: every stored component within the shape, and the same
    // nonzeros after conversion to COO and (when small) dense.
    let (stored, nonzeros) = super::catch("unpacking", || (t.stored_entries(), t.to_coordinates()))?;
    for (c, _) in stored.iter() {
        if c.iter().zip(&shape).any(|(&c, &d)| c >= d as u64) {
            return Err(format!("a stored component at {c:?} lies outside the shape {shape:?}"));
        }
    }
    let target = if order == 0 {
        Format::dense(0)
    } else {
        Format::coo(order)
    };
    let converted = super::catch("conversion", || t.convert(&target))?
        .map_err(|e| format!("converting to {target} failed: {e}"))?;
    same_entries(&converted.to_coordinates(), &nonzeros).map_err(|e| format!("after conversion to {target}: {e}"))?;

    // Kernels: the tensor is `T`, its modes the variables v0, v1, ...
    let vars: Vec<String> = (0..order).map(|m| format!("v{m}")).collect();
    let access = |vars: &[String]| {
        if vars.is_empty() {
            String::new()
        } else {
            format!("({})", vars.join(","))
        }
    };
    let all = access(&vars);
    let reversed: Vec<String> = vars.iter().rev().cloned().collect();
    let reversed_shape: Vec<usize> = shape.iter().rev().copied().collect();
    let mut statements: Vec<(String, Vec<usize>)> = vec![
        (format!("A{all} = T{all}"), shape.clone()),
        (format!("a = T{all}"), vec![]),
        (format!("A{all} = T{all} * T{all} + T{all}"), shape.clone()),
    ];
    if order >= 2 {
        statements.push((format!("A{} = T{all}", access(&reversed)), reversed_shape));
    }
    // A product with a dense vector along the last mode (every component
    // stored, finite and nonzero).
    let x_len = shape.last().copied().unwrap_or(0);
    let x_values: Vec<f64> = (0..x_len).map(|_| *src.pick(&DIVISORS)).collect();
    let x = Tensor::from_dense(&[x_len], x_values).map_err(|e| e.to_string())?;
    if order >= 1 {
        let kept = access(&vars[..order - 1]);
        statements.push((
            format!("A{kept} = T{all} * x({})", vars[order - 1]),
            shape[..order - 1].to_vec(),
        ));
    }
    let inputs = [("T", t), ("x", &x)];
    let engine = tessera::engine();
    for (text, out_shape) in &statements {
        let formats = output_formats(out_shape);
        let output = src.pick(&formats).clone();
        run_everywhere(&engine, text, &inputs, &output).map_err(|e| format!("`{text}` into {output}: {e}"))?;
    }
    let diagnostics = engine.diagnostics();
    if !diagnostics.is_empty() {
        let all: Vec<String> = diagnostics.iter().map(|d| d.to_string()).collect();
        return Err(all.join("; "));
    }
    Ok(())
}

/// Runs `text` on every tier and checks each result against the reference.
fn run_everywhere(
    engine: &tessera::Engine,
    text: &str,
    tensors: &[(&str, &Tensor<f64>)],
    output: &Format,
) -> Result<(), String> {
    let stmt = parse_statement(text).map_err(|e| format!("does not parse: {e}"))?;
    let used: Vec<(&str, &Tensor<f64>)> = tensors
        .iter()
        .filter(|(n, _)| stmt.rhs.accesses().iter().any(|a| a.tensor == *n))
        .copied()
        .collect();
    let reference = super::catch("the reference", || evaluate(&stmt, &used, &[]))?
        .map_err(|e| format!("the reference refuses it: {e}"))?;
    let mut inputs = Inputs::new();
    for (n, t) in &used {
        inputs.insert(n, t);
    }
    for tier in super::tiers(engine) {
        let options = EvalOptions {
            output_format: Some(output.clone()),
            sizes: Vec::new(),
            tier: TierChoice::Named(tier.clone()),
            ..EvalOptions::default()
        };
        let result = super::catch(&format!("tier {tier}"), || engine.eval_with(text, &inputs, &options))?
            .map_err(|e| format!("tier {tier} refuses it: {e}"))?;
        compare(&result, &reference, Tolerance::default()).map_err(|e| format!("tier {tier}: {e}"))?;
    }
    Ok(())
}

/// Equal coordinate lists, NaN equal to NaN.
fn same_entries(a: &CoordinateList<f64>, b: &CoordinateList<f64>) -> Result<(), String> {
    if a.shape() != b.shape() || a.len() != b.len() {
        return Err(format!(
            "{} entries of shape {:?}, expected {} of {:?}",
            a.len(),
            a.shape(),
            b.len(),
            b.shape()
        ));
    }
    for ((ca, va), (cb, vb)) in a.iter().zip(b.iter()) {
        let same = ca == cb && (va == vb || va.is_nan() && vb.is_nan());
        if !same {
            return Err(format!("entry {ca:?} = {va}, expected {cb:?} = {vb}"));
        }
    }
    Ok(())
}

/// The tensor's format, shape and raw storage: enough for a regression test.
fn describe(t: &Tensor<f64>) -> String {
    format!(
        "T: {} {:?}: levels {:?}, values {:?}",
        t.format(),
        t.shape(),
        t.levels(),
        t.values()
    )
}
