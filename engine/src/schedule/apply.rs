//! What the lowering asks of a schedule: the order constraints of
//! `reorder`, the checks of `parallelize` against the planned loops, and
//! the refusal of commands tessera does not run yet.

use super::{Command, RaceStrategy, Schedule};
use crate::bytecode::ChunkOutput;
use crate::cin::{LoopVar, Lowered};
use crate::error::{EngineError, Result};
use crate::notation::IndexVar;

/// The loops `reorder` commands nest, as `before -> after` edges between
/// consecutive variables, and the column of the last `reorder`. Refuses a
/// command of the paper tessera does not run yet, and a variable the
/// statement does not use.
pub(crate) fn reorder_edges(
    schedule: &Schedule,
    statement_vars: &[LoopVar],
) -> Result<(Vec<(LoopVar, LoopVar)>, usize)> {
    let mut edges = Vec::new();
    let mut column = 0;
    for placed in schedule.commands() {
        match &placed.command {
            Command::Reorder(vars) => {
                let mut loops = Vec::new();
                for v in vars {
                    let var = LoopVar::Index(IndexVar::new(v));
                    if !statement_vars.contains(&var) {
                        let names: Vec<&str> = statement_vars.iter().map(LoopVar::name).collect();
                        return Err(EngineError::Schedule {
                            column: placed.column,
                            message: format!(
                                "reorder names {v}, which the statement does not use (its variables: {})",
                                names.join(", ")
                            ),
                        });
                    }
                    loops.push(var);
                }
                edges.extend(loops.windows(2).map(|w| (w[0].clone(), w[1].clone())));
                column = placed.column;
            }
            Command::Parallelize { .. } => {}
            Command::Unsupported { name, .. } => {
                return Err(EngineError::Schedule {
                    column: placed.column,
                    message: format!("{name} is not run by tessera yet (the commands run today: reorder, parallelize)"),
                })
            }
        }
    }
    Ok((edges, column))
}

/// Checks the schedule's `parallelize` against the lowered statement and
/// returns what the plan says of it: the loop must be the outermost, split
/// by the runtime's chunks, and a loop whose chunks all add into the same
/// output components needs a strategy other than `no_races`.
pub(crate) fn check_parallel(schedule: &Schedule, lowered: &Lowered) -> Result<Option<String>> {
    let Some((var, races, column)) = schedule.parallel() else {
        return Ok(None);
    };
    let refuse = |message: String| EngineError::Schedule { column, message };
    let order: Vec<&str> = lowered.order.iter().map(LoopVar::name).collect();
    if !order.contains(&var) {
        return Err(refuse(format!(
            "parallelize names {var}, which the statement does not loop over (its loops: {})",
            order.join(", ")
        )));
    }
    let (outer, chunking) = crate::plan::chunking(lowered)
        .map_err(|reason| refuse(format!("the loop over {var} cannot run in parallel: {reason}")))?;
    if outer.name() != var {
        return Err(refuse(format!(
            "only the outermost loop runs in parallel, and the loops nest {}: reorder({var}, ...) first",
            order.join(", ")
        )));
    }
    let summed = chunking.output == ChunkOutput::DensePartials;
    if summed && races == RaceStrategy::NoRaces {
        return Err(refuse(format!(
            "chunks of the loop over {var} all add into the same components of {}: no_races would race; use temporary or atomics",
            lowered.output.name
        )));
    }
    let how = if summed {
        "each chunk adds into a temporary of its own, added up in chunk order (the same bits for any number of threads)"
    } else {
        "each chunk writes its own part of the output"
    };
    Ok(Some(format!(
        "parallelize({var}, cpu_threads, {}): every core at any size; {how}",
        races.name()
    )))
}
