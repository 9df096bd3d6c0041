//! What the lowering asks of a schedule: the derived variables of
//! `split`, the order constraints of `reorder`, the workspace of
//! `precompute`, and the checks of `parallelize` against the planned
//! loops. `pos` and `fuse` are in [`super::positions`], `unroll` and
//! `bound` in [`super::tags`].

use tessera_formats::{Iteration, Level};

use super::{Command, RaceStrategy, Schedule};
use crate::bytecode::ChunkOutput;
use crate::cin::{Blocking, LoopVar, Lowered, Operand, Provenance};
use crate::error::{EngineError, Result};
use crate::notation::{parse_statement, Expr, IndexVar, Statement};

/// Splits the variables the schedule's `split` commands name. Every level
/// at a split variable must locate it: no loop walks the variable itself
/// any more, only its blocks and its place in them.
pub(crate) fn apply_splits(
    schedule: &Schedule,
    provenance: &mut Provenance,
    operands: &[Operand],
    output: &Operand,
    statement_vars: &[LoopVar],
) -> Result<()> {
    let mut names: Vec<String> = statement_vars.iter().map(|v| v.name().to_string()).collect();
    names.extend(provenance.positions().iter().map(|s| s.var.name().to_string()));
    let fused: Vec<LoopVar> = statement_vars
        .iter()
        .filter_map(|v| provenance.fused_into(v).cloned())
        .collect();
    names.extend(fused.iter().map(|f| f.name().to_string()));
    for placed in schedule.commands() {
        let Command::Split {
            var,
            outer,
            inner,
            blocking,
        } = &placed.command
        else {
            continue;
        };
        let blocking = *blocking;
        let positions = provenance
            .positions()
            .iter()
            .find(|s| s.var.name() == var)
            .map(|s| s.var.clone());
        let command = if matches!(blocking, Blocking::Size(_)) {
            "split"
        } else {
            "divide"
        };
        let refuse = |message: String| EngineError::Schedule {
            column: placed.column,
            message,
        };
        let v = positions
            .or_else(|| fused.iter().find(|f| f.name() == var).cloned())
            .unwrap_or_else(|| LoopVar::Index(IndexVar::new(var)));
        if let Some(f) = provenance.fused_into(&v) {
            return Err(refuse(format!(
                "{command} names {var}, which {f} fuses: {command} {f} instead"
            )));
        }
        if v.relation().is_none() && !statement_vars.contains(&v) {
            return Err(refuse(format!(
                "{command} names {var}, which is not a variable of the statement (its variables: {}); a split variable is not split again yet",
                statement_vars.iter().map(LoopVar::name).collect::<Vec<_>>().join(", ")
            )));
        }
        if let Some(space) = provenance.positions().iter().find(|s| s.covers.contains(&v)) {
            return Err(refuse(format!(
                "{command} names {var}, whose loop recovers the coordinates of {}'s positions: {command} {} instead",
                space.var, space.var
            )));
        }
        for new in [outer, inner] {
            if names.contains(new) {
                return Err(refuse(format!("{command} names {new}, which is already a variable")));
            }
        }
        names.extend([outer.clone(), inner.clone()]);
        check_split_levels(schedule, operands, output, None)?;
        if let Err(block) = provenance.split_by_schedule(&v, outer, inner, blocking) {
            return Err(refuse(format!(
                "the tensors' levels already split {var} into blocks of {block}"
            )));
        }
    }
    Ok(())
}

/// Refuses a split of a variable that some level walks but cannot cut to a
/// block of coordinates: the loop over the place in a block walks such a
/// level through the block's coordinates, found by binary search, so the
/// level must store its coordinates in order, by position. With `order`
/// (once the loops are ordered), the blocks' loop must also run outside the
/// places', and no nested sum may loop over the variable (its loops keep
/// the statement's variables). Checked when the split applies, and again
/// once the lowering has converted the tensors the loop order needed (a
/// conversion may move the variable to such a level).
pub(crate) fn check_split_levels(
    schedule: &Schedule,
    operands: &[Operand],
    output: &Operand,
    order: Option<(&[LoopVar], &Provenance, &[LoopVar])>,
) -> Result<()> {
    for placed in schedule.commands() {
        let Command::Split { var, outer, inner, .. } = &placed.command else {
            continue;
        };
        let v = LoopVar::Index(IndexVar::new(var));
        for op in operands.iter().chain(std::iter::once(output)) {
            let Some((level, _)) = op.find_level(|l, lv| *lv == v && !l.level.capabilities().locate) else {
                continue;
            };
            let refuse = |why: &str| {
                let converted = match &op.converted_from {
                    Some((from, _)) => format!(", converted from {from} for the loop order,"),
                    None => String::new(),
                };
                EngineError::Schedule {
                    column: placed.column,
                    message: format!(
                        "{} ({}){converted} walks {var} through its {} level, {why}",
                        op.name,
                        op.format,
                        level.level.name()
                    ),
                }
            };
            let positional = level.level.capabilities().iteration == Iteration::CoordinatePosition;
            if !positional || !level.level.ordered {
                return Err(refuse(&format!(
                    "which cannot be cut to a block of coordinates: a split needs every level at {var} to locate it, or to store its coordinates in order"
                )));
            }
            if let Some((order, provenance, nested)) = order {
                if nested.contains(&v) {
                    return Err(refuse(
                        "inside a nested sum, whose loops a split does not cut yet: split a variable the nested sums do not loop over",
                    ));
                }
                let (blocks, place, _) = provenance.recovery(&v).expect("a split variable");
                let at = |x: &LoopVar| order.iter().position(|o| o == x);
                if at(&blocks) > at(&place) {
                    return Err(refuse(&format!(
                        "so the loop over {inner} runs through {var}'s coordinates in block {outer}: {outer} comes before {inner} in reorder"
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Refuses a `precompute` whose new name for its workspace's loop is
/// already a variable of the statement (the name would then stand for two
/// loops). Checked on the schedule as written, before names resolve.
pub(crate) fn check_precompute_names(schedule: &Schedule, statement_vars: &[LoopVar]) -> Result<()> {
    for placed in schedule.commands() {
        let Command::Precompute { var, workspace_var, .. } = &placed.command else {
            continue;
        };
        if workspace_var != var && statement_vars.iter().any(|v| v.name() == workspace_var) {
            return Err(EngineError::Schedule {
                column: placed.column,
                message: format!(
                    "precompute names {workspace_var} for its workspace's loop over {var}, but {workspace_var} is already a variable"
                ),
            });
        }
    }
    Ok(())
}

/// A schedule's `precompute`, parsed: the expression it computes into a
/// workspace, its variable (a new name for the workspace's loop is an
/// alias of it, resolved before this), and the command's text and column.
pub(crate) struct Precompute {
    pub expr: Expr,
    pub var: String,
    pub text: String,
    pub column: usize,
}

impl Precompute {
    /// The refusal of this command, with its column.
    pub fn refuse(&self, message: String) -> EngineError {
        EngineError::Schedule {
            column: self.column,
            message,
        }
    }
}

/// The `precompute` of `schedule` (names resolved), if it has one, with
/// its text as `written`. Refused: an expression that does not parse, a
/// workspace named after a tensor of the statement, and a second
/// `precompute` (a statement has one workspace here).
pub(crate) fn precompute_command(
    schedule: &Schedule,
    written: &Schedule,
    stmt: &Statement,
) -> Result<Option<Precompute>> {
    let mut found: Option<Precompute> = None;
    for (placed, as_written) in schedule.commands().iter().zip(written.commands()) {
        let Command::Precompute {
            expr, var, workspace, ..
        } = &placed.command
        else {
            continue;
        };
        let refuse = |message: String| EngineError::Schedule {
            column: placed.column,
            message,
        };
        if let Some(first) = &found {
            return Err(refuse(format!(
                "a second precompute: {} already precomputes, and a statement takes one precompute",
                first.text
            )));
        }
        let parsed = parse_statement(&format!("{workspace} = {expr}")).map_err(|e| {
            let reason = match e {
                EngineError::Syntax { message, .. } => message,
                other => other.to_string(),
            };
            refuse(format!("precompute's expression `{expr}` does not parse: {reason}"))
        })?;
        if stmt.lhs.tensor == *workspace || stmt.rhs.accesses().iter().any(|a| a.tensor == *workspace) {
            return Err(refuse(format!(
                "precompute names its workspace {workspace}, a tensor of the statement"
            )));
        }
        found = Some(Precompute {
            expr: parsed.rhs,
            var: var.clone(),
            text: as_written.command.to_string(),
            column: placed.column,
        });
    }
    Ok(found)
}

/// The output level a `precompute` of the whole right-hand side collects
/// in a workspace: the level of its variable.
pub(crate) fn precompute_level(command: &Precompute, output: &Operand) -> Result<usize> {
    output
        .level_vars()
        .iter()
        .position(|v| v.name() == command.var)
        .ok_or_else(|| {
            command.refuse(format!(
                "precompute over {}, which is not a level of the output {} ({})",
                command.var, output.name, output.format
            ))
        })
}

/// The loops `reorder` commands nest, as `before -> after` edges between
/// consecutive variables, and the column of the last `reorder`. A name is
/// a statement variable or a variable a `split` made.
pub(crate) fn reorder_edges(
    schedule: &Schedule,
    statement_vars: &[LoopVar],
    provenance: &Provenance,
) -> Result<(Vec<(LoopVar, LoopVar)>, usize)> {
    let loops: Vec<LoopVar> = provenance.expand_all(statement_vars);
    let mut edges = Vec::new();
    let mut column = 0;
    for placed in schedule.commands() {
        let Command::Reorder(vars) = &placed.command else {
            continue;
        };
        let refuse = |message: String| EngineError::Schedule {
            column: placed.column,
            message,
        };
        let mut ordered = Vec::new();
        for v in vars {
            // The blocks of an operand's positions run outside everything;
            // a position, or a fused pair, stands for the loops that
            // recover its coordinates.
            if let Some(space) = provenance.position_space_named(v) {
                if space.blocks(provenance).is_some_and(|b| b.name() == v) {
                    // A fibre's blocks run right inside its upper levels'
                    // loops, wherever the list names them.
                    if !ordered.is_empty() && !space.within_fibre() {
                        return Err(refuse(format!(
                            "{v}, the blocks of {}, is the outermost loop: it comes first in reorder",
                            space.var
                        )));
                    }
                } else {
                    ordered.extend(space.covers.iter().cloned());
                }
                continue;
            }
            if let Some(f) = statement_vars
                .iter()
                .find(|s| s.name() == v)
                .and_then(|s| provenance.fused_into(s))
            {
                return Err(refuse(format!("{v} is fused into {f}: reorder {f}")));
            }
            if let Some(split) = statement_vars.iter().find(|s| s.name() == v && !loops.contains(s)) {
                let parts: Vec<String> = provenance.expand(split).iter().map(|p| p.to_string()).collect();
                return Err(refuse(format!(
                    "{v} is split into {}: reorder those",
                    parts.join(" and ")
                )));
            }
            let Some(var) = loops.iter().find(|l| l.name() == v) else {
                let names: Vec<&str> = loops.iter().map(LoopVar::name).collect();
                return Err(refuse(format!(
                    "reorder names {v}, which the statement does not use (its variables: {})",
                    names.join(", ")
                )));
            };
            ordered.push(var.clone());
        }
        edges.extend(ordered.windows(2).map(|w| (w[0].clone(), w[1].clone())));
        column = placed.column;
    }
    // A vector loop runs innermost: the loops the list put inside it run
    // outside it.
    if let Some((lanes, vector_column)) = super::tags::vector_loop(schedule, &loops, provenance)? {
        for edge in &mut edges {
            if edge.0 == lanes {
                *edge = (edge.1.clone(), lanes.clone());
            }
        }
        edges.extend(
            loops
                .iter()
                .filter(|l| **l != lanes)
                .map(|l| (l.clone(), lanes.clone())),
        );
        column = column.max(vector_column);
    }
    // The loops that recover a block of positions' coordinates nest
    // directly, outside every other loop.
    for space in provenance.positions() {
        if space.blocks(provenance).is_none() || space.within_fibre() {
            continue;
        }
        edges.extend(space.covers.windows(2).map(|w| (w[0].clone(), w[1].clone())));
        let last = space.covers.last().expect("a position space covers a variable");
        for other in loops.iter().filter(|l| !space.covers.contains(l)) {
            edges.push((last.clone(), other.clone()));
        }
    }
    Ok((edges, column))
}

/// Checks the schedule's `parallelize` against the lowered statement and
/// returns what the plan says of it: the loop must be the outermost, split
/// by the runtime's chunks, and a loop whose chunks all add into the same
/// output components needs a strategy other than `no_races`.
pub(crate) fn check_parallel(schedule: &Schedule, lowered: &Lowered) -> Result<Option<String>> {
    let schedule = &schedule.resolved();
    let Some((var, races, column)) = schedule.parallel() else {
        return Ok(None);
    };
    let refuse = |message: String| EngineError::Schedule { column, message };
    let order: Vec<&str> = lowered.order.iter().map(LoopVar::name).collect();
    if !order.contains(&var) {
        let hint = match lowered.provenance.position_space_named(var) {
            Some(space) => match space.blocks(&lowered.provenance) {
                Some(blocks) => format!(": the loop over {blocks} runs {}'s blocks", space.var),
                None => format!(": split {} and parallelize its blocks", space.var),
            },
            None => String::new(),
        };
        return Err(refuse(format!(
            "parallelize names {var}, which the statement does not loop over (its loops: {}){hint}",
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
    // Blocks of positions whose variables lead the output write disjoint
    // components: partials keep them apart, and nothing races.
    let disjoint = chunking.positions.is_some()
        && lowered
            .provenance
            .positions()
            .iter()
            .any(|s| lowered.output.level_vars().starts_with(&s.covers));
    if summed && races == RaceStrategy::NoRaces && !disjoint {
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

/// The names of `vars`, separated by commas.
pub(super) fn var_list(vars: &[LoopVar]) -> String {
    vars.iter().map(LoopVar::name).collect::<Vec<_>>().join(", ")
}
