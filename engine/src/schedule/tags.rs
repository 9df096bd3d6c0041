//! `unroll` and `bound`: tags on loops, which the planner reads as it
//! emits them and the runtime checks before each run.

use super::apply::var_list;
use super::{BoundKind, Command, Schedule};
use tessera_formats::{Level, LevelKind};

use crate::cin::{LoopVar, Operand, VarBound};
use crate::error::{EngineError, Result};

/// Loops a schedule unrolls, with their factors.
type Unrolled = Vec<(LoopVar, usize)>;

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
    notes: &mut Vec<String>,
) -> Result<(Unrolled, Vec<VarBound>)> {
    let (mut unrolled, mut bounds) = (Vec::new(), Vec::new());
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
                    op.format
                        .levels()
                        .iter()
                        .zip(op.level_vars())
                        .find(|(l, lv)| *lv == v && matches!(l.level.kind, LevelKind::Range | LevelKind::Offset))
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
    Ok((unrolled, bounds))
}
