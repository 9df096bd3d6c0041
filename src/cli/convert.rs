//! `tessera convert IN OUT [-f FORMAT] [--general]`: reads a `.mtx` or
//! `.tns` file, packs it into FORMAT (or the format that suits it), and
//! writes it to another file; prints one line saying what was written.
//!
//! A Matrix Market file is written with the input's comments (where it came
//! from) and, as far as the data still allows, its field and symmetry: a
//! symmetric matrix as its lower triangle, integers as integers, a pattern
//! without values. `--general` writes `real general` instead.

use std::io::Write;
use std::process::ExitCode;

use tessera_formats::io;

use super::args::ConvertArgs;
use super::error::Result;
use super::files::{self, FileKind};
use super::generate::shape_text;
use super::progress::Spinner;
use super::summary::bytes;

/// Runs `tessera convert`.
pub fn run(args: &ConvertArgs, out: &mut dyn Write) -> Result<ExitCode> {
    // Refuse an output name tessera cannot write before reading anything.
    FileKind::of(&args.output, "convert OUTPUT")?;
    let size = std::fs::metadata(&args.input).map_or(0, |m| m.len());
    let spinner = Spinner::for_file(format!("reading {}", args.input.display()), size);
    let file = files::read_entries(&args.input, "convert INPUT")?;
    let format = match &args.format {
        Some(spec) => files::resolve(spec, file.entries.order(), &format!("-f {spec}"))?,
        None => file.natural_format(),
    };
    spinner.say(format!("packing into {format}"));
    let tensor = files::pack(&file.entries, format, "convert")?;
    spinner.say(format!("writing {}", args.output.display()));
    // The header is checked against the data as packed, not trusted: a
    // pattern whose duplicates were summed is no longer a pattern.
    let header = match (&file.header, args.general) {
        (Some(header), false) => header.fitted(&tensor),
        _ => io::MtxHeader::default(),
    };
    files::write_with(
        &args.output,
        &tensor,
        &header,
        &format!("writing {}", args.output.display()),
    )?;
    drop(spinner);
    let nonzeros = tensor
        .first_nonzeros(0)
        .map_or_else(|| tensor.to_coordinates().len(), |shown| shown.count);
    // Written to standard output, the file is the whole output.
    if args.output.as_os_str() == files::STREAM {
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        out,
        "{} -> {}: {}, {} nonzero{}, via {} ({})",
        args.input.display(),
        args.output.display(),
        shape_text(tensor.shape()),
        nonzeros,
        if nonzeros == 1 { "" } else { "s" },
        tensor.format(),
        bytes(tensor.bytes() as u128),
    )?;
    Ok(ExitCode::SUCCESS)
}
