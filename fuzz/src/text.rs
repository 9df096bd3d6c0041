//! The text properties: the statement parser and the Matrix Market and
//! FROSTT readers take any bytes and give a result or an error, never a
//! panic; what they accept is consistent.
//!
//! - [`statement`]: a statement that parses prints to a canonical text that
//!   parses back to the same statement and prints the same; checked,
//!   compiled and run (interpreter and reference) on small tensors it never
//!   panics (its value is not compared: arbitrary literals overflow, and
//!   then the order of a sum decides the result).
//! - [`mtx`], [`tns`]: every entry read lies within the shape; the entries
//!   pack into COO (and, when the shape is small, CSR/CSF and dense) with
//!   the same nonzeros; written back and read again they are the same
//!   nonzeros, bit for bit (any NaN equal to any NaN).
//!
//! "Never an allocation beyond a set limit" is checked by the fuzzer's
//! `-malloc_limit_mb`: the readers reserve only what the input's length
//! could fill, so no input of a few kilobytes makes them ask for more.

use std::path::{Path, PathBuf};

use tessera::engine::notation::{parse_statement, Statement};
use tessera::engine::reference::evaluate;
use tessera::engine::testing::named_formats;
use tessera::formats::io::{parse_mtx, parse_tns_with_shape, read_tns, write_mtx_to, write_tns_to};
use tessera::formats::{CoordinateList, Format, Tensor};
use tessera::{Engine, EvalOptions, Inputs, TierChoice};

use super::source::Source;

/// Most components of a tensor packed densely here.
const SMALL: usize = 1 << 12;

/// Most distinct index variables of a statement that is also run.
const RUN_VARS: usize = 6;

/// The parser on `data` (as text, invalid UTF-8 replaced).
pub fn statement(data: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(data);
    let Ok(stmt) = super::catch("parse_statement", || parse_statement(&text))? else {
        return Ok(());
    };
    let printed = stmt.to_string();
    let again = super::catch("parsing the canonical text", || parse_statement(&printed))?
        .map_err(|e| format!("`{text}` prints as `{printed}`, which does not parse: {e}"))?;
    if again != stmt {
        return Err(format!(
            "`{text}` prints as `{printed}`, which parses to another statement:\n  {stmt:?}\n  {again:?}"
        ));
    }
    let reprinted = again.to_string();
    if reprinted != printed {
        return Err(format!("`{printed}` reprints as `{reprinted}`"));
    }
    super::catch("checking and running the statement", || run_statement(&stmt, &printed))?
        .map_err(|e| format!("`{printed}`: {e}"))
}

/// Runs a parsed statement on tensors whose every mode has size 2, each
/// stored in a format chosen by its name, every component stored: the
/// engine and the reference may refuse it, but not panic.
fn run_statement(stmt: &Statement, text: &str) -> Result<(), String> {
    let vars = stmt.index_vars();
    if vars.len() > RUN_VARS {
        return Ok(());
    }
    let mut tensors: Vec<(String, Tensor<f64>)> = Vec::new();
    let mut add = |name: &str, order: usize| {
        if tensors.iter().any(|(n, _)| n == name) {
            return Ok(());
        }
        let shape = vec![2; order];
        let formats = named_formats(&shape);
        let pick = name.bytes().map(usize::from).sum::<usize>() % formats.len();
        let mut list = CoordinateList::new(&shape);
        let mut coords = vec![0u64; order];
        for flat in 0..1usize << order {
            for (m, c) in coords.iter_mut().enumerate() {
                *c = (flat >> (order - 1 - m)) as u64 & 1;
            }
            list.push(&coords, 1.0 + flat as f64).map_err(|e| e.to_string())?;
        }
        let t = Tensor::pack(&list, formats[pick].clone()).map_err(|e| e.to_string())?;
        tensors.push((name.to_string(), t));
        Ok::<(), String>(())
    };
    for a in stmt.rhs.accesses() {
        add(&a.tensor, a.indices.len())?;
    }
    if stmt.op == tessera::engine::notation::AssignOp::AddAssign {
        add(&stmt.lhs.tensor, stmt.lhs.indices.len())?;
    }
    let sizes: Vec<(String, usize)> = vars.iter().map(|v| (v.0.clone(), 2)).collect();
    let size_refs: Vec<(&str, usize)> = sizes.iter().map(|(v, n)| (v.as_str(), *n)).collect();
    let refs: Vec<(&str, &Tensor<f64>)> = tensors.iter().map(|(n, t)| (n.as_str(), t)).collect();
    let _ = evaluate(stmt, &refs, &size_refs);
    let mut inputs = Inputs::new();
    for (n, t) in &refs {
        inputs.insert(n, t);
    }
    let options = EvalOptions {
        output_format: None,
        sizes,
        tier: TierChoice::Interpreter,
        ..EvalOptions::default()
    };
    let _ = Engine::new().eval_with(text, &inputs, &options);
    Ok(())
}

/// The Matrix Market reader on `data`.
pub fn mtx(data: &[u8]) -> Result<(), String> {
    let path = Path::new("fuzz.mtx");
    let Ok(file) = super::catch("parse_mtx", || parse_mtx(data, path))? else {
        return Ok(());
    };
    let list = &file.entries;
    if list.order() != 2 {
        return Err(format!("a matrix of shape {:?}", list.shape()));
    }
    let tensor = packs(list)?;
    // Written back (coordinate layout, or array layout from a dense
    // tensor) and read again: the same nonzeros.
    let mut written = Vec::new();
    for t in [Some(tensor), dense(list)?].into_iter().flatten() {
        written.clear();
        write_mtx_to(&mut written, &t).map_err(|e| format!("writing it as {} failed: {e}", t.format()))?;
        let back = parse_mtx(&written, path).map_err(|e| {
            format!(
                "it does not read back after writing from {}: {e}\n{}",
                t.format(),
                String::from_utf8_lossy(&written)
            )
        })?;
        same_nonzeros(&back.entries, list).map_err(|e| format!("written from {} and read back: {e}", t.format()))?;
    }
    Ok(())
}

/// The FROSTT reader on `data`: the first byte chooses how — the shape
/// from the coordinates, a shape from the next bytes, or a file with a
/// `.dims` sidecar (both written from the bytes) read by [`read_tns`].
pub fn tns(data: &[u8]) -> Result<(), String> {
    let mut src = Source::new(data);
    let how = src.below(3);
    let read = match how {
        0 => super::catch("parse_tns", || {
            parse_tns_with_shape(src.rest(), Path::new("fuzz.tns"), None)
        })?,
        1 => {
            let order = src.below(5);
            let shape: Vec<usize> = (0..order).map(|_| src.below(8)).collect();
            let rest = src.rest();
            super::catch("parse_tns_with_shape", || {
                parse_tns_with_shape(rest, Path::new("fuzz.tns"), Some(&shape))
            })?
        }
        _ => {
            let split = src.below(64);
            let rest = src.rest();
            let (dims, tns) = rest.split_at(split.min(rest.len()));
            let path = scratch_files(dims, tns)?;
            super::catch("read_tns", || read_tns(&path))?
        }
    };
    let Ok(list) = read else {
        return Ok(());
    };
    let tensor = packs(&list)?;
    // Written back with its shape and read again: the same nonzeros.
    let mut written = Vec::new();
    write_tns_to(&mut written, &tensor).map_err(|e| format!("writing it failed: {e}"))?;
    let back = parse_tns_with_shape(&written, Path::new("written.tns"), Some(list.shape()))
        .map_err(|e| format!("it does not read back: {e}\n{}", String::from_utf8_lossy(&written)))?;
    same_nonzeros(&back, &list).map_err(|e| format!("written and read back: {e}"))
}

/// `data` as `fuzz.dims` and `fuzz.tns` in a directory of this process.
fn scratch_files(dims: &[u8], tns: &[u8]) -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("tessera-fuzz-tns-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join("fuzz.tns");
    std::fs::write(dir.join("fuzz.dims"), dims).map_err(|e| e.to_string())?;
    std::fs::write(&path, tns).map_err(|e| e.to_string())?;
    Ok(path)
}

/// Checks that every entry lies within the shape and that the list packs
/// into COO, and into CSF, CSR and dense when the shape is small, with the
/// same nonzeros; returns the COO tensor.
fn packs(list: &CoordinateList<f64>) -> Result<Tensor<f64>, String> {
    let shape = list.shape();
    for (c, _) in list.iter() {
        if c.len() != shape.len() || c.iter().zip(shape).any(|(&c, &d)| c >= d as u64) {
            return Err(format!("the entry {c:?} lies outside the shape {shape:?}"));
        }
    }
    let order = list.order();
    let coo = if order == 0 {
        Format::dense(0)
    } else {
        Format::coo(order)
    };
    let tensor = Tensor::pack(list, coo.clone()).map_err(|e| format!("packing into {coo} failed: {e}"))?;
    let nonzeros = tensor.to_coordinates();
    if order > 0 && is_small(shape) {
        let mut others = vec![Format::csf(order), Format::dense(order)];
        if order == 2 {
            others.push(Format::csr());
        }
        for f in others {
            let t = Tensor::pack(list, f.clone()).map_err(|e| format!("packing into {f} failed: {e}"))?;
            same_nonzeros(&t.to_coordinates(), &nonzeros).map_err(|e| format!("packed into {f}: {e}"))?;
        }
    }
    Ok(tensor)
}

/// Whether every dense level of `shape` (in natural mode order) is small:
/// each prefix product, not only the whole (a mode of size 0 makes the
/// product 0, not the levels above it).
fn is_small(shape: &[usize]) -> bool {
    let mut prefix = 1usize;
    shape.iter().all(|&d| {
        prefix = prefix.saturating_mul(d.max(1));
        prefix <= SMALL
    })
}

/// The list densely, when its shape is small.
fn dense(list: &CoordinateList<f64>) -> Result<Option<Tensor<f64>>, String> {
    if !is_small(list.shape()) {
        return Ok(None);
    }
    let f = Format::dense(list.order());
    Tensor::pack(list, f)
        .map(Some)
        .map_err(|e| format!("packing densely failed: {e}"))
}

/// The same nonzeros (duplicates summed, zeros dropped), bit for bit, any
/// NaN equal to any NaN.
fn same_nonzeros(got: &CoordinateList<f64>, want: &CoordinateList<f64>) -> Result<(), String> {
    if got.shape() != want.shape() {
        return Err(format!("shape {:?}, expected {:?}", got.shape(), want.shape()));
    }
    let canonical = |l: &CoordinateList<f64>| {
        let mut l = l.clone();
        l.canonicalize();
        l.pruned()
    };
    let (got, want) = (canonical(got), canonical(want));
    if got.len() != want.len() {
        return Err(format!("{} nonzeros, expected {}", got.len(), want.len()));
    }
    for ((cg, vg), (cw, vw)) in got.iter().zip(want.iter()) {
        let same = cg == cw && (vg.to_bits() == vw.to_bits() || vg.is_nan() && vw.is_nan());
        if !same {
            return Err(format!("entry {cg:?} = {vg:e}, expected {cw:?} = {vw:e}"));
        }
    }
    Ok(())
}
