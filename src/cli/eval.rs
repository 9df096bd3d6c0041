//! `tessera eval STATEMENT [options]`: one statement, from tensors read
//! (`-i`) or generated (`-g`), in the formats asked (`-f`) or chosen by
//! default; prints listings (`--print`), times runs (`--time`), and prints a
//! summary of the result or writes it (`-o`).

use std::io::Write;
use std::process::ExitCode;

use super::args::{EvalArgs, PrintWhat};
use super::error::{CliError, Result};
use super::files::{self, FileKind};
use super::listing::write_listing;
use super::reorder::{self, Request};
use super::repl::define_operator;
use super::session::{from_args, parse, Front, Timing};
use super::summary::{millis, scalar_of, write_summary, SHOWN_NONZEROS};
use tessera_formats::{AnyTensor, ValueType};

/// Runs `tessera eval`.
pub fn run(args: &EvalArgs, out: &mut dyn Write) -> Result<ExitCode> {
    // The operators, the statement and the output file first: their
    // mistakes are found before any file is read.
    for text in &args.defs {
        define_operator(text, &format!("--def {text}"))?;
    }
    let statement = parse(&args.statement)?;
    // A statement the semiring cannot read is refused before any file is.
    if let Some(semiring) = args.semiring {
        semiring.rewrite(&statement).map_err(|source| CliError::Statement {
            statement: args.statement.trim().to_string(),
            source: Box::new(source),
            hint: String::new(),
        })?;
    }
    let text = args.statement.as_str();
    let lhs = statement.lhs.tensor.as_str();
    if let Some(o) = &args.output {
        let context = format!("-o {}:{}", o.name, o.value.display());
        if o.name != lhs {
            return Err(CliError::bad(
                context,
                format!("the statement computes {lhs}, not {}", o.name),
            ));
        }
        let order = statement.lhs.indices.len();
        if FileKind::of(&o.value, &context)? == FileKind::Mtx && order > 2 {
            return Err(CliError::bad(
                context,
                format!("Matrix Market files hold matrices and vectors, {lhs} has order {order}: write a .tns file"),
            ));
        }
    }
    let mentioned = |name: &str| name == lhs || statement.rhs.accesses().iter().any(|a| a.tensor == name);
    for f in &args.tensors.formats {
        if !mentioned(&f.name) {
            return Err(CliError::bad(
                format!("-f {}:{}", f.name, f.value),
                format!("the statement has no tensor {}", f.name),
            ));
        }
    }

    let mut session = from_args(&args.tensors, Front::Eval)?;
    let request = match (&args.reorder, &args.reorder_from) {
        (Some(method), _) => Some(Request::Method(*method)),
        (None, Some(saved)) => Some(Request::Saved(saved)),
        (None, None) => None,
    };
    let reordering = match request {
        Some(request) => Some(reorder::apply_to_session(&mut session, text, request)?),
        None => None,
    };
    session.set_semiring(args.semiring);
    let prepared = session.prepare(text)?;
    if reordering.is_some() && prepared.kernel().value_type() == ValueType::C64 {
        // The result is permuted back in `f64`, which has no imaginary part.
        let asked = match (&args.reorder, &args.reorder_from) {
            (Some(method), _) => format!("--reorder {method}"),
            (None, Some(saved)) => format!("--reorder-from {}", saved.name),
            (None, None) => "--reorder".to_string(),
        };
        return Err(CliError::bad(
            asked,
            format!("{lhs} is computed as c64: reordering permutes real values only"),
        ));
    }
    for &what in &args.print {
        write_listing(out, &session, &prepared, what)?;
        if let (PrintWhat::Plan, Some(r)) = (what, &reordering) {
            write!(out, "{}", r.describe())?;
        }
    }
    let (result, timing) = match args.time {
        Some(n) => {
            let (result, timing) = session.time(&prepared, n as usize)?;
            (result, Some(timing))
        }
        None => (session.run(&prepared)?, None),
    };
    // On stderr: the answer on stdout is right either way.
    for diagnostic in session.new_diagnostics(&prepared) {
        eprintln!("note: {diagnostic}");
    }
    let (result, restore) = match &reordering {
        Some(r) => {
            // Permuted back in `f64`: exact but for an `i64` beyond 2^53.
            let (restored, time) = r.restore(&result.as_f64())?;
            (AnyTensor::narrowed(restored, result.value_type()), Some(time))
        }
        None => (result, None),
    };
    match &args.output {
        Some(o) => {
            // Integer results are written exactly, as `integer` in a
            // Matrix Market file.
            files::write(&o.value, result.as_ref(), &format!("-o {}", o.name))?;
            if result.order() == 0 {
                writeln!(out, "{}", scalar_of(&result))?;
            }
        }
        None => write_summary(out, lhs, &result, SHOWN_NONZEROS)?,
    }
    if let Some(timing) = timing {
        writeln!(out, "{}", timing_line(&timing))?;
    }
    if let (Some(r), Some(time)) = (&reordering, restore) {
        writeln!(out, "{}", r.cost_line(time))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `time: 10 runs on interp: min 1.234 ms, median 1.301 ms (the first includes 0.2 ms compiling)`;
/// runs served by both tiers are counted: `10 runs (2 interpreted, 8 on jit)`.
pub fn timing_line(timing: &Timing) -> String {
    let n = timing.runs.len();
    let compiled = n as u64 - timing.interpreted.min(n as u64);
    let served = if timing.interpreted > 0 && compiled > 0 {
        format!(" ({} interpreted, {compiled} on {})", timing.interpreted, timing.tier)
    } else {
        format!(" on {}", timing.tier)
    };
    let (split, chunks, threads) = timing.split;
    let on = format!("{threads} thread{}", if threads == 1 { "" } else { "s" });
    let parallel = match split {
        0 => String::new(),
        s if s == n as u64 => format!("; each in {} chunks on {on}", chunks / s),
        s => format!("; {s} split into {chunks} chunks on up to {on}"),
    };
    format!(
        "time: {n} run{}{served}: min {}, median {} (the first includes {} compiling){parallel}",
        if n == 1 { "" } else { "s" },
        millis(timing.min()),
        millis(timing.median()),
        millis(timing.compile),
    )
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::cli::engine::Tier;

    fn timing(interpreted: u64) -> Timing {
        Timing {
            runs: vec![
                Duration::from_millis(3),
                Duration::from_millis(1),
                Duration::from_millis(2),
            ],
            compile: Duration::from_micros(200),
            tier: Tier::Jit,
            interpreted,
            split: (0, 0, 0),
        }
    }

    #[test]
    fn the_timing_line_counts_the_runs_each_tier_served() {
        let line = timing_line(&timing(0));
        assert!(
            line.starts_with("time: 3 runs on jit: min 1.000 ms, median 2.000 ms"),
            "{line}"
        );
        let line = timing_line(&timing(1));
        assert!(
            line.starts_with("time: 3 runs (1 interpreted, 2 on jit): min 1.000 ms"),
            "{line}"
        );
    }
}
