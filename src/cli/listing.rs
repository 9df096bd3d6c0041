//! What `--print` and the REPL's `:plan`, `:lattice` and `:bytecode` show
//! of a compiled statement: the formats chosen and the plan, the merge
//! lattice of each loop, the bytecode, or a tier's own code.

use std::io::Write;

use super::args::PrintWhat;
use super::engine::{clif_text, opencl_text};
use super::error::Result;
use super::session::{Prepared, Session};

/// Writes the listing `what` of `prepared`.
pub fn write_listing(out: &mut dyn Write, session: &Session, prepared: &Prepared, what: PrintWhat) -> Result<()> {
    let kernel = prepared.kernel();
    match what {
        PrintWhat::Plan => {
            write!(out, "{}", session.describe(prepared))?;
            write!(out, "{}", ensure_newline(kernel.plan()))?;
        }
        PrintWhat::Lattice => write!(out, "{}", lattices(kernel.plan()))?,
        PrintWhat::Bytecode => write!(out, "{}", ensure_newline(&kernel.program().to_string()))?,
        PrintWhat::Clif => write!(
            out,
            "{}",
            session.with_inputs(prepared, |inputs, sizes| clif_text(kernel, inputs, sizes))?
        )?,
        PrintWhat::Opencl => write!(
            out,
            "{}",
            session.with_inputs(prepared, |inputs, sizes| opencl_text(kernel, inputs, sizes))?
        )?,
    }
    Ok(())
}

/// The loop headers of a plan with their lattices: `forall j: lattice {…}`,
/// indented as in the plan, under the term they compute when a sum is
/// computed term by term (`term 1 of 2, …:`).
pub fn lattices(plan: &str) -> String {
    let mut text = String::new();
    for line in plan.lines() {
        if line.trim_start().starts_with("term ") && line.contains(" added into ") {
            text.push_str(line.trim_end());
            text.push('\n');
            continue;
        }
        let Some(at) = line.find("lattice") else {
            continue;
        };
        let head = line.split(':').next().unwrap_or_default();
        text.push_str(head);
        text.push_str(": ");
        text.push_str(line[at..].trim_end());
        text.push('\n');
    }
    if text.is_empty() {
        text.push_str("no loops: the statement has no lattice\n");
    }
    text
}

fn ensure_newline(text: &str) -> String {
    if text.ends_with('\n') {
        text.to_string()
    } else {
        format!("{text}\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lattice_lines_of_a_sum_computed_term_by_term_stay_under_their_term() {
        let plan = "loop order: A.slot, i, j, B.slot\nterm 1 of 2, added into C by loops of its own:\n  forall A.slot: every coordinate, locate A.dense; lattice {A.dense}\nterm 2 of 2, added into C by loops of its own:\n  forall B.slot: every coordinate, locate B.dense; lattice {B.dense}\n";
        assert_eq!(
            lattices(plan),
            "term 1 of 2, added into C by loops of its own:\n  forall A.slot: lattice {A.dense}\nterm 2 of 2, added into C by loops of its own:\n  forall B.slot: lattice {B.dense}\n"
        );
    }

    #[test]
    fn lattice_lines_keep_their_loop_and_indent() {
        let plan = "loop order: i, j\nforall i: every coordinate, locate A.dense; lattice {A.dense}\n  forall j: iterate A.compressed; lattice {A.compressed, x.dense}\n";
        assert_eq!(
            lattices(plan),
            "forall i: lattice {A.dense}\n  forall j: lattice {A.compressed, x.dense}\n"
        );
    }
}
