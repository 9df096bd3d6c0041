//! `tessera convert IN OUT [-f FORMAT] [-t TYPE] [--general]`: reads a
//! `.mtx` or `.tns` file, packs it into FORMAT (or the format that suits
//! it), and writes it to another file; prints one line saying what was
//! written.
//!
//! A Matrix Market file is written with the input's comments (where it came
//! from) and, as far as the data still allows, its field and symmetry: a
//! symmetric matrix as its lower triangle, integers as integers, a pattern
//! without values. `--general` writes `real general` (`integer general`
//! for integer values, `complex general` for complex ones) instead.
//!
//! Values go through as `f64`, or as the TYPE asked: `i64` and `i32`
//! exactly. An `integer` Matrix Market file holding integers beyond 2^53,
//! which `f64` rounds, is read again as `i64` without being asked. A
//! complex file (a Matrix Market `complex` one, a `.tns` one whose sidecar
//! shows two numbers a value) stays complex: it is read as `c64` unless
//! another type is asked, which it refuses.

use std::io::Write;
use std::process::ExitCode;

use tessera_formats::io::{FileValue, MtxHeader};
use tessera_formats::{AnyTensor, Complex64, Tensor, ValueType};

use super::args::ConvertArgs;
use super::error::{CliError, Result};
use super::files::{self, FileEntries, FileKind};
use super::generate::shape_text;
use super::progress::Spinner;
use super::summary::bytes;
use super::types;

/// Runs `tessera convert`.
pub fn run(args: &ConvertArgs, out: &mut dyn Write) -> Result<ExitCode> {
    // Refuse an output name tessera cannot write before reading anything.
    FileKind::of(&args.output, "convert OUTPUT")?;
    let size = std::fs::metadata(&args.input).map_or(0, |m| m.len());
    let spinner = Spinner::for_file(format!("reading {}", args.input.display()), size);
    let (tensor, header) = read(args, &spinner)?;
    spinner.say(format!("writing {}", args.output.display()));
    // The header is checked against the data as packed, not trusted: a
    // pattern whose duplicates were summed is no longer a pattern.
    let header = match (&header, args.general) {
        (Some(header), false) => files::fitted(header, tensor.as_ref()),
        _ => files::header_for(tensor.value_type()),
    };
    files::write_with(
        &args.output,
        tensor.as_ref(),
        &header,
        &format!("writing {}", args.output.display()),
    )?;
    drop(spinner);
    let nonzeros = types::nonzeros(tensor.as_ref());
    // Written to standard output, the file is the whole output.
    if args.output.as_os_str() == files::STREAM {
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        out,
        "{} -> {}: {}{}, {} nonzero{}, via {} ({})",
        args.input.display(),
        args.output.display(),
        shape_text(tensor.shape()),
        super::session::of_type(tensor.value_type()),
        nonzeros,
        if nonzeros == 1 { "" } else { "s" },
        tensor.format(),
        bytes(types::bytes(tensor.as_ref()) as u128),
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Errors name the input as this.
const INPUT: &str = "convert INPUT";

/// The input's tensor, packed, of the type asked (or the one that keeps
/// its values), and its Matrix Market header if it is one.
fn read(args: &ConvertArgs, spinner: &Spinner) -> Result<(AnyTensor, Option<MtxHeader>)> {
    let complex = files::holds_complex(&args.input, INPUT)?;
    // Unasked, a complex file is read as what it holds.
    let asked = args.value_type.or(complex.then_some(ValueType::C64));
    match asked {
        Some(ty) if complex && ty != ValueType::C64 => Err(CliError::bad(
            INPUT,
            format!(
                "{} holds complex values, which are read as c64, not {ty}: leave out -t, or give -t c64",
                args.input.display()
            ),
        )),
        Some(ValueType::C64) => {
            packed(args, files::read_entries_as::<Complex64>(&args.input, INPUT)?, spinner).map(typed)
        }
        Some(ValueType::I64) => packed(args, files::read_entries_as::<i64>(&args.input, INPUT)?, spinner).map(typed),
        Some(ValueType::I32) => packed(args, files::read_entries_as::<i32>(&args.input, INPUT)?, spinner).map(typed),
        Some(other) => {
            let (tensor, header) = packed(args, files::read_entries(&args.input, INPUT)?, spinner)?;
            Ok((AnyTensor::narrowed(tensor, other), header))
        }
        None => {
            let file = files::read_entries(&args.input, INPUT)?;
            if files::rounded_integers(&file, &args.input) {
                spinner.say(format!("reading {} again as i64", args.input.display()));
                let file = files::read_entries_as::<i64>(&args.input, INPUT)?;
                return packed(args, file, spinner).map(typed);
            }
            packed(args, file, spinner).map(typed)
        }
    }
}

/// A tensor read and its header, the tensor typed at run time.
fn typed<V>((tensor, header): (Tensor<V>, Option<MtxHeader>)) -> (AnyTensor, Option<MtxHeader>)
where
    AnyTensor: From<Tensor<V>>,
{
    (AnyTensor::from(tensor), header)
}

/// The file's entries packed into the format asked (or the one that suits
/// the file), and its Matrix Market header if it is one.
fn packed<V: FileValue>(
    args: &ConvertArgs,
    file: FileEntries<V>,
    spinner: &Spinner,
) -> Result<(Tensor<V>, Option<MtxHeader>)> {
    let format = match &args.format {
        Some(spec) => files::resolve(spec, file.entries.order(), &format!("-f {spec}"))?,
        None => file.natural_format(),
    };
    spinner.say(format!("packing into {format}"));
    let tensor = files::pack(&file.entries, format, "convert")?;
    Ok((tensor, file.header))
}
