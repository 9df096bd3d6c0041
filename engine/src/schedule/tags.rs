//! `unroll`, `bound` and `cpu_vector`: tags on loops, which the planner
//! reads as it emits them and the runtime checks before each run.

use tessera_formats::{Level, LevelKind};

use super::apply::var_list;
use super::{BoundKind, Command, Schedule, VECTOR_LANES};
use crate::cin::{LoopVar, Operand, Provenance, VarBound};
use crate::error::{EngineError, Result};

/// Loops a schedule unrolls, with their factors.
type Unrolled = Vec<(LoopVar, usize)>;

/// The loop a `parallelize(v, cpu_vector, ...)` runs in lanes, and the
/// command's column: a loop of `loops`, or the loop over the variable whose
/// positions `v` names (a `pos` variable, or the place in its blocks).
pub(crate) fn vector_loop(
    schedule: &Schedule,
    loops: &[LoopVar],
    provenance: &Provenance,
) -> Result<Option<(LoopVar, usize)>> {
    let mut found = None;
    for placed in schedule.commands() {
        let Command::Vectorize { var, .. } = &placed.command else {
            continue;
        };
        let refuse = |message: String| EngineError::Schedule {
            column: placed.column,
            message,
        };
        if found.is_some() {
            return Err(refuse(format!(
                "{}: one loop runs in vector lanes per statement",
                placed.command
            )));
        }
        let lanes = match provenance.position_space_named(var) {
            Some(space) if space.blocks(provenance).is_some_and(|b| b.name() == var) => {
                return Err(refuse(format!(
                    "{}: {var} numbers blocks of {}'s positions; vector lanes run over the positions in a block",
                    placed.command, space.var
                )))
            }
            Some(space) => space.covers.last().cloned(),
            None => loops.iter().find(|l| l.name() == var).cloned(),
        };
        let lanes = lanes.ok_or_else(|| {
            refuse(format!(
                "{} names {var}, which the statement does not loop over (its loops: {})",
                placed.command,
                var_list(loops)
            ))
        })?;
        found = Some((lanes, placed.column));
    }
    Ok(found)
}

/// The most copies of a body the unrolls of one schedule may make
/// together: each copy is emitted, so the code grows with the product.
const MOST_UNROLLED_COPIES: usize = 256;

/// The loops `unroll` and `bound` tag, each a loop of `order`.
/// A bound may name a statement variable a split replaced. A loop over a
/// DIA level (rows below a diagonal, columns beside them) runs as its own
/// structured loop, which is not unrolled.
pub(crate) fn loop_tags(
    schedule: &Schedule,
    order: &[LoopVar],
    statement_vars: &[LoopVar],
    operands: &[Operand],
    provenance: &Provenance,
    notes: &mut Vec<String>,
) -> Result<(Unrolled, Vec<VarBound>, Option<LoopVar>)> {
    let (mut unrolled, mut bounds) = (Vec::new(), Vec::new());
    let vectorized = match vector_loop(schedule, order, provenance)? {
        None => None,
        Some((v, column)) => {
            // The reorder edges put it last; the tensors' storage order may
            // still keep a loop inside it.
            if order.last() != Some(&v) {
                let inside = &order[order.iter().position(|o| *o == v).map_or(0, |p| p + 1)..];
                return Err(EngineError::Schedule {
                    column,
                    message: format!(
                        "a cpu_vector loop runs innermost, and the loop over {v} must stay outside {} (the loops nest {})",
                        var_list(inside),
                        var_list(order)
                    ),
                });
            }
            notes.push(format!(
                "the loop over {v} runs in {VECTOR_LANES} vector lanes: innermost, a copy of its body per lane, or a block op in SIMD lanes"
            ));
            unrolled.push((v.clone(), VECTOR_LANES));
            Some(v)
        }
    };
    for placed in schedule.commands() {
        let find = |var: &str, among: &[LoopVar], what: &str| {
            among
                .iter()
                .find(|v| v.name() == var)
                .cloned()
                .ok_or_else(|| EngineError::Schedule {
                    column: placed.column,
                    message: format!(
                        "{} names {var}, which {what} (the loops: {})",
                        placed.command,
                        var_list(order)
                    ),
                })
        };
        match &placed.command {
            Command::Unroll { var, factor } => {
                let v = find(var, order, "no loop runs over")?;
                let ranged = operands.iter().find_map(|op| {
                    op.find_level(|l, lv| *lv == v && matches!(l.level.kind, LevelKind::Range | LevelKind::Offset))
                        .map(|(l, _)| (op, l.level.name()))
                });
                if let Some((op, level)) = ranged {
                    return Err(EngineError::Schedule {
                        column: placed.column,
                        message: format!(
                            "{}: {} ({}) runs {var} through its {level} level, whose coordinates are computed from the diagonal's: that loop is not unrolled",
                            placed.command, op.name, op.format
                        ),
                    });
                }
                unrolled.push((v, *factor));
                let copies: usize = unrolled.iter().map(|(_, f)| *f).product();
                if copies > MOST_UNROLLED_COPIES {
                    return Err(EngineError::Schedule {
                        column: placed.column,
                        message: format!(
                            "the unrolls copy a loop's body {copies} times, more than the {MOST_UNROLLED_COPIES} tessera emits"
                        ),
                    });
                }
            }
            Command::Bound { var, size, kind, .. } => {
                let known: Vec<LoopVar> = order.iter().chain(statement_vars).cloned().collect();
                let var = find(var, &known, "is neither a loop nor a variable of the statement")?;
                let promise = match kind {
                    BoundKind::MaxExact if order.contains(&var) => format!("the loop over {var} runs to the constant {size}, and a run whose {var} has another size is refused"),
                    BoundKind::MaxExact => format!("a run whose {var} has another size than {size} is refused"),
                    BoundKind::MaxConstraint => format!("a run whose {var} has more than {size} coordinates is refused"),
                };
                notes.push(format!("{}: {promise}", placed.command));
                bounds.push(VarBound {
                    var,
                    size: *size,
                    kind: *kind,
                    command: placed.command.to_string(),
                });
            }
            _ => {}
        }
    }
    Ok((unrolled, bounds, vectorized))
}
