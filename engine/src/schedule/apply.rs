//! What the lowering asks of a schedule: the derived variables of
//! `split`, the order constraints of `reorder`, the checks of
//! `parallelize` against the planned loops, and the refusal of commands
//! tessera does not run yet.

use tessera_formats::{Level, LevelKind};

use super::{BoundKind, Command, RaceStrategy, Schedule};
use crate::bytecode::ChunkOutput;
use crate::cin::{Blocking, LoopVar, Lowered, Operand, PositionSpace, Provenance, Relation};
use crate::error::{EngineError, Result};
use crate::notation::{parse_statement, BinaryOp, Expr, IndexVar, Reduction, Statement};

/// Loops a schedule unrolls, with their factors.
type Unrolled = Vec<(LoopVar, usize)>;

/// The most copies of a body the unrolls of one schedule may make
/// together: each copy is emitted, so the code grows with the product.
const MOST_UNROLLED_COPIES: usize = 256;

/// The loops `unroll` and `bound` tag, each a loop of `order`.
/// A bound may name a statement variable a split replaced.
pub(crate) fn loop_tags(
    schedule: &Schedule,
    order: &[LoopVar],
    statement_vars: &[LoopVar],
    notes: &mut Vec<String>,
) -> Result<(Unrolled, Vec<crate::cin::VarBound>)> {
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
                unrolled.push((find(var, order, "no loop runs over")?, *factor));
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
                bounds.push(crate::cin::VarBound {
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

/// Adds the variables the schedule's `pos` commands make: each runs over
/// an operand's positions at the level of its variable, a statement
/// variable or a pair `fuse` made, whose levels must be the operand's
/// first ones. A `fuse` no `pos` iterates is refused.
pub(crate) fn apply_positions(
    schedule: &Schedule,
    provenance: &mut Provenance,
    operands: &[Operand],
    statement_vars: &[LoopVar],
) -> Result<()> {
    let mut fused: Vec<(String, Vec<LoopVar>, usize, bool)> = Vec::new();
    let statement_var = |name: &str| statement_vars.iter().find(|v| v.name() == name).cloned();
    for placed in schedule.commands() {
        let refuse = |message: String| EngineError::Schedule {
            column: placed.column,
            message,
        };
        match &placed.command {
            Command::Fuse {
                outer,
                inner,
                fused: name,
            } => {
                let mut pair = Vec::new();
                for v in [outer, inner] {
                    let Some(var) = statement_var(v) else {
                        return Err(refuse(format!(
                            "fuse names {v}, which is not a variable of the statement (its variables: {})",
                            var_list(statement_vars)
                        )));
                    };
                    pair.push(var);
                }
                if statement_var(name).is_some() {
                    return Err(refuse(format!("fuse names {name}, which is already a variable")));
                }
                fused.push((name.clone(), pair, placed.column, false));
            }
            Command::Pos { var, pos_var, tensor } => {
                let covers = match (statement_var(var), fused.iter_mut().find(|f| f.0 == *var)) {
                    (Some(v), _) => vec![v],
                    (None, Some(f)) => {
                        f.3 = true;
                        f.1.clone()
                    }
                    (None, None) => {
                        return Err(refuse(format!(
                            "pos names {var}, which is neither a variable of the statement nor a pair fuse made"
                        )))
                    }
                };
                if statement_var(pos_var).is_some() || fused.iter().any(|f| f.0 == *pos_var) {
                    return Err(refuse(format!("pos names {pos_var}, which is already a variable")));
                }
                let readers: Vec<usize> = (0..operands.len()).filter(|&k| operands[k].name == *tensor).collect();
                if readers.is_empty() {
                    return Err(refuse(format!("pos names {tensor}, which the statement does not read")));
                }
                let Some(&k) = readers.iter().find(|&&k| operands[k].level_vars().starts_with(&covers)) else {
                    let op = &operands[readers[0]];
                    let levels = var_list(&op.level_vars());
                    let wanted = var_list(&covers);
                    return Err(refuse(match op.level_vars().iter().position(|v| *v == covers[0]) {
                        Some(depth) if depth > 0 => format!(
                            "pos over {wanted}: {} ({}) has levels over ({levels}), and the loops over its first {depth} would run outside the positions; fuse them with it (fuse(i, j, f); pos(f, fp, {tensor}))",
                            op.name, op.format
                        ),
                        _ => format!(
                            "pos over {wanted}: {} ({}) has levels over ({levels}); its first levels must be over {wanted}",
                            op.name, op.format
                        ),
                    }));
                };
                let level = covers.len() - 1;
                let kind = operands[k].format.levels()[level].level.kind;
                if !(kind == LevelKind::Compressed || (kind == LevelKind::Dense && level == 0)) {
                    return Err(refuse(format!(
                        "pos over {}: {}'s level {level} ({}) stores no positions to iterate; pos needs a compressed level (or a dense first one)",
                        var_list(&covers),
                        operands[k].name,
                        operands[k].format.levels()[level].level.name()
                    )));
                }
                let fused_name = (covers.len() > 1).then(|| var.clone());
                provenance.add_positions(PositionSpace {
                    var: LoopVar::Derived {
                        name: pos_var.clone(),
                        relation: Relation::Positions { operand: k, level },
                    },
                    operand: k,
                    level,
                    covers,
                    fused: fused_name,
                    column: placed.column,
                });
            }
            _ => {}
        }
    }
    if let Some((name, pair, column, _)) = fused.iter().find(|f| !f.3) {
        return Err(EngineError::Schedule {
            column: *column,
            message: format!(
                "fuse({}, {name}) makes a pair no pos iterates: tessera runs a fused pair over an operand's positions (pos({name}, {name}pos, A))",
                var_list(pair)
            ),
        });
    }
    Ok(())
}

fn var_list(vars: &[LoopVar]) -> String {
    vars.iter().map(LoopVar::name).collect::<Vec<_>>().join(", ")
}

/// Whether the expression is zero wherever `tensor` is: a product with it
/// as a factor, negated or summed. Then iterating `tensor`'s positions
/// visits every component that can be nonzero.
pub(crate) fn annihilated_by(e: &Expr, tensor: &str) -> bool {
    match e {
        Expr::Access(a) => a.tensor == tensor,
        Expr::Neg(x) => annihilated_by(x, tensor),
        Expr::Binary {
            op: BinaryOp::Mul,
            lhs,
            rhs,
        } => annihilated_by(lhs, tensor) || annihilated_by(rhs, tensor),
        Expr::Reduce {
            op: Reduction::Sum,
            body,
            ..
        } => annihilated_by(body, tensor),
        _ => false,
    }
}

/// Puts the loop over the blocks of a split position space outside the
/// loops over its covered variables, which must be the outermost loops in
/// order. The operand's positions must hold every component that can be
/// nonzero: the statement is zero wherever the operand is, and sums are
/// its only reductions (a row whose positions span two blocks is summed in
/// two parts).
pub(crate) fn place_position_blocks(
    provenance: &Provenance,
    operands: &[Operand],
    statement: &Statement,
    cin: crate::cin::Cin,
    order: &mut Vec<LoopVar>,
    notes: &mut Vec<String>,
) -> Result<crate::cin::Cin> {
    let mut cin = cin;
    let mut placed_blocks = false;
    for space in provenance.positions() {
        let refuse = |message: String| EngineError::Schedule {
            column: space.column,
            message,
        };
        let op = &operands[space.operand];
        let covered = var_list(&space.covers);
        let Some(blocks) = space.blocks(provenance) else {
            notes.push(format!(
                "{}: {}'s positions in storage order, as the loops over ({covered}) walk them",
                space.var, op.name
            ));
            continue;
        };
        if placed_blocks {
            return Err(refuse(format!(
                "a second split position space ({}): tessera runs the blocks of one operand's positions",
                space.var
            )));
        }
        if !order.starts_with(&space.covers) {
            return Err(refuse(format!(
                "the blocks of {} run outside the loops over ({covered}), which must be the outermost loops; the loops nest {}",
                space.var,
                var_list(order)
            )));
        }
        if let Some(reduction) = non_sum_reduction(&statement.rhs) {
            return Err(refuse(format!(
                "the statement reduces by {reduction}: a block of positions holds part of a fibre, and only sums add up in parts"
            )));
        }
        if op.fill != 0.0 || !annihilated_by(&statement.rhs, &op.name) {
            return Err(refuse(format!(
                "{} is not a factor of every term of {} (with a fill of 0), so components outside its positions could be nonzero",
                op.name, statement.rhs
            )));
        }
        if holds_workspace(&cin) {
            return Err(refuse(format!(
                "the output is collected in a workspace, and a fibre whose positions span two blocks of {} would be assembled twice; use a dense output, or one whose entries arrive in order",
                space.var
            )));
        }
        notes.push(format!(
            "{}: {}'s stored entries (positions of its level {}, {}) in storage order, cut into blocks that {} numbers; the loops over ({covered}) recover each block's coordinates",
            space.var,
            op.name,
            space.level,
            op.format.level(space.level).name(),
            blocks
        ));
        order.insert(0, blocks.clone());
        cin = crate::cin::Cin::Forall {
            var: blocks,
            body: Box::new(cin),
        };
        placed_blocks = true;
    }
    Ok(cin)
}

fn holds_workspace(cin: &crate::cin::Cin) -> bool {
    use crate::cin::Cin;
    match cin {
        Cin::Workspace { .. } => true,
        Cin::Forall { body, .. } => holds_workspace(body),
        Cin::Where { producer, consumer, .. } => holds_workspace(producer) || holds_workspace(consumer),
        Cin::Assign { .. } => false,
    }
}

/// A reduction of the expression that is not a sum, if any.
fn non_sum_reduction(e: &Expr) -> Option<Reduction> {
    match e {
        Expr::Reduce {
            op: Reduction::Sum,
            body,
            ..
        } => non_sum_reduction(body),
        Expr::Reduce { op, .. } => Some(*op),
        Expr::Neg(x) => non_sum_reduction(x),
        Expr::Binary { lhs, rhs, .. } => non_sum_reduction(lhs).or_else(|| non_sum_reduction(rhs)),
        Expr::Call { args, .. } => args.iter().find_map(non_sum_reduction),
        Expr::Access(_) | Expr::Literal(_) => None,
    }
}

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
        let v = positions.unwrap_or_else(|| LoopVar::Index(IndexVar::new(var)));
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
        check_split_levels(schedule, operands, output)?;
        if let Err(block) = provenance.split_by_schedule(&v, outer, inner, blocking) {
            return Err(refuse(format!(
                "the tensors' levels already split {var} into blocks of {block}"
            )));
        }
    }
    Ok(())
}

/// Refuses a split of a variable that some level walks without locating
/// it: no loop walks the variable itself once it is split. Checked when
/// the split applies, and again once the lowering has converted the
/// tensors the loop order needed (a conversion may move the variable to
/// such a level).
pub(crate) fn check_split_levels(schedule: &Schedule, operands: &[Operand], output: &Operand) -> Result<()> {
    for placed in schedule.commands() {
        let Command::Split { var, .. } = &placed.command else {
            continue;
        };
        let v = LoopVar::Index(IndexVar::new(var));
        for op in operands.iter().chain(std::iter::once(output)) {
            let walker = op
                .format
                .levels()
                .iter()
                .zip(op.level_vars())
                .find(|(l, lv)| *lv == v && !l.level.capabilities().locate);
            if let Some((level, _)) = walker {
                let converted = match &op.converted_from {
                    Some((from, _)) => format!(", converted from {from} for the loop order,"),
                    None => String::new(),
                };
                return Err(EngineError::Schedule {
                    column: placed.column,
                    message: format!(
                        "{} ({}){converted} walks {var} through its {} level, which cannot locate a coordinate: a split needs every level at {var} to locate it",
                        op.name,
                        op.format,
                        level.level.name()
                    ),
                });
            }
        }
    }
    Ok(())
}

/// The output level a `precompute` collects in a workspace: the level of
/// its variable, and the command's text and column. tessera precomputes the
/// whole right-hand side over a variable of the output, keeping the
/// variable's name; anything else is refused with the reason.
pub(crate) fn precompute_level(
    schedule: &Schedule,
    stmt: &Statement,
    output: &Operand,
) -> Result<Option<(usize, String)>> {
    let mut found = None;
    for placed in schedule.commands() {
        let Command::Precompute {
            expr,
            var,
            workspace_var,
            workspace,
        } = &placed.command
        else {
            continue;
        };
        let refuse = |message: String| EngineError::Schedule {
            column: placed.column,
            message,
        };
        let parsed = parse_statement(&format!("{workspace} = {expr}")).map_err(|e| {
            let reason = match e {
                EngineError::Syntax { message, .. } => message,
                other => other.to_string(),
            };
            refuse(format!("precompute's expression `{expr}` does not parse: {reason}"))
        })?;
        if parsed.rhs.to_string() != stmt.rhs.to_string() {
            return Err(refuse(format!(
                "precompute of a part of the right-hand side ({expr}) is not run yet: tessera precomputes the whole of it, {}",
                stmt.rhs
            )));
        }
        if workspace_var != var {
            return Err(refuse(format!(
                "precompute renames {var} to {workspace_var}, which tessera does not run yet: write precompute({expr}, {var}, {var}, {workspace})"
            )));
        }
        if stmt.lhs.tensor == *workspace || stmt.rhs.accesses().iter().any(|a| a.tensor == *workspace) {
            return Err(refuse(format!(
                "precompute names its workspace {workspace}, a tensor of the statement"
            )));
        }
        let level = output
            .level_vars()
            .iter()
            .position(|v| v.name() == var)
            .ok_or_else(|| {
                refuse(format!(
                    "precompute over {var}, which is not a level of the output {} ({})",
                    output.name, output.format
                ))
            })?;
        found = Some((level, placed.command.to_string()));
    }
    Ok(found)
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
                    if !ordered.is_empty() {
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
    // The loops that recover a block of positions' coordinates nest
    // directly, outside every other loop.
    for space in provenance.positions() {
        if space.blocks(provenance).is_none() {
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
