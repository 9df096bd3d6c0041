//! `fuse` and `pos`: variables over an operand's positions, and the loop
//! over their blocks, placed outside the loops that recover each block's
//! coordinates once the lowering has ordered them.

use tessera_formats::{Level, LevelKind};

use super::apply::var_list;
use super::{Command, Schedule};
use crate::cin::{Blocking, Cin, LoopVar, Operand, PositionSpace, Provenance, Relation};
use crate::error::{EngineError, Result};
use crate::notation::{BinaryOp, Expr, Reduction, Statement};

/// A pair `fuse` made: its name, its variables, the command's column, and
/// whether a `pos` iterates it.
struct FusedPair {
    name: String,
    pair: Vec<LoopVar>,
    column: usize,
    iterated: bool,
}

/// Adds the variables the schedule's `pos` commands make: each runs over
/// an operand's positions at the level of its variable, a statement
/// variable or a pair `fuse` made, whose levels must be the operand's
/// first ones. A `fuse` no `pos` iterates collapses its pair into one loop
/// over every pair of coordinates ([`Provenance::fuse`]).
pub(crate) fn apply_positions(
    schedule: &Schedule,
    provenance: &mut Provenance,
    operands: &[Operand],
    output: &Operand,
    statement_vars: &[LoopVar],
) -> Result<()> {
    let mut fused: Vec<FusedPair> = Vec::new();
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
                fused.push(FusedPair {
                    name: name.clone(),
                    pair,
                    column: placed.column,
                    iterated: false,
                });
            }
            Command::Pos { var, pos_var, tensor } => {
                let covers = match (statement_var(var), fused.iter_mut().find(|f| f.name == *var)) {
                    (Some(v), _) => vec![v],
                    (None, Some(f)) => {
                        f.iterated = true;
                        f.pair.clone()
                    }
                    (None, None) => {
                        return Err(refuse(format!(
                            "pos names {var}, which is neither a variable of the statement nor a pair fuse made"
                        )))
                    }
                };
                if statement_var(pos_var).is_some() || fused.iter().any(|f| f.name == *pos_var) {
                    return Err(refuse(format!("pos names {pos_var}, which is already a variable")));
                }
                let readers: Vec<usize> = (0..operands.len()).filter(|&k| operands[k].name == *tensor).collect();
                if readers.is_empty() {
                    return Err(refuse(format!("pos names {tensor}, which the statement does not read")));
                }
                // The operand's levels down to the covered ones: the first
                // ones, or one variable below levels whose loops run
                // outside (the positions of one fibre).
                let depth_of = |k: usize| {
                    let vars = operands[k].level_vars();
                    let depth = vars.iter().position(|v| *v == covers[0])?;
                    let fits = vars[depth..].starts_with(&covers) && (depth == 0 || covers.len() == 1);
                    fits.then_some(depth)
                };
                let Some((k, depth)) = readers.iter().find_map(|&k| depth_of(k).map(|d| (k, d))) else {
                    let op = &operands[readers[0]];
                    let levels = var_list(&op.level_vars());
                    let wanted = var_list(&covers);
                    return Err(refuse(match op.level_vars().iter().position(|v| *v == covers[0]) {
                        Some(depth) if depth > 0 => format!(
                            "pos over {wanted}: {} ({}) has levels over ({levels}); a fused pair's positions are cut from the first level, or one variable's within its fibre",
                            op.name, op.format
                        ),
                        _ => format!(
                            "pos over {wanted}: {} ({}) has levels over ({levels}); its levels must be over {wanted}",
                            op.name, op.format
                        ),
                    }));
                };
                let level = depth + covers.len() - 1;
                let kind = operands[k].format.levels()[level].level.kind;
                if !(kind == LevelKind::Compressed || (kind == LevelKind::Dense && level == 0)) {
                    return Err(refuse(format!(
                        "pos over {}: {}'s level {level} ({}) stores no positions to iterate; pos needs a compressed level (or a dense first one)",
                        var_list(&covers),
                        operands[k].name,
                        operands[k].format.levels()[level].level.name()
                    )));
                }
                let parents = operands[k].level_vars()[..depth].to_vec();
                let fused_name = (covers.len() > 1).then(|| var.clone());
                provenance.add_positions(PositionSpace {
                    var: LoopVar::Derived {
                        name: pos_var.clone(),
                        relation: Relation::Positions { operand: k, level },
                    },
                    operand: k,
                    level,
                    covers,
                    parents,
                    fused: fused_name,
                    column: placed.column,
                });
            }
            _ => {}
        }
    }
    for f in fused.iter().filter(|f| !f.iterated) {
        check_collapse(f, operands, output)?;
        provenance.fuse(&f.pair[0], &f.pair[1], &f.name);
    }
    Ok(())
}

/// Checks a `fuse` no `pos` iterates: one loop runs over every pair of
/// the two variables' coordinates, so every level at them must locate,
/// and the output must be dense (each pair adds into its component,
/// whichever variable is summed).
fn check_collapse(f: &FusedPair, operands: &[Operand], output: &Operand) -> Result<()> {
    let refuse = |message: String| EngineError::Schedule {
        column: f.column,
        message,
    };
    let command = format!("fuse({}, {})", var_list(&f.pair), f.name);
    for op in operands.iter().chain(std::iter::once(output)) {
        if let Some((level, v)) = op.find_level(|l, v| f.pair.contains(v) && !l.level.capabilities().locate) {
            return Err(refuse(format!(
                "{command} runs one loop over every pair of coordinates, locating each, and {} ({}) walks {v} through its {} level, which cannot locate: pos({}, {}pos, {}) iterates its positions instead",
                op.name,
                op.format,
                level.level.name(),
                f.name,
                f.name,
                op.name
            )));
        }
    }
    if !output.format.is_dense() {
        return Err(refuse(format!(
            "{command} without pos adds each pair into its component of the output, which must be dense ({} is {})",
            output.name, output.format
        )));
    }
    Ok(())
}

/// Why blocks of `op`'s positions could not add up the statement in
/// parts, if they could not: a block holds part of a fibre, so only sums
/// add up, and the statement must be zero wherever `op` is (a factor of
/// every term, with a fill of 0).
fn check_blocks_sum(op: &Operand, statement: &Statement) -> std::result::Result<(), String> {
    if let Some(reduction) = non_sum_reduction(&statement.rhs) {
        return Err(format!(
            "the statement reduces by {reduction}: a block of positions holds part of a fibre, and only sums add up in parts"
        ));
    }
    if op.fill != 0.0 || !annihilated_by(&statement.rhs, &op.name) {
        return Err(format!(
            "{} is not a factor of every term of {} (with a fill of 0), so components outside its positions could be nonzero",
            op.name, statement.rhs
        ));
    }
    Ok(())
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
    dense_output: bool,
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
        if space.within_fibre() {
            cin = place_fibre_blocks(provenance, space, op, statement, dense_output, cin, order, notes)?;
            placed_blocks = true;
            continue;
        }
        if !order.starts_with(&space.covers) {
            return Err(refuse(format!(
                "the blocks of {} run outside the loops over ({covered}), which must be the outermost loops; the loops nest {}",
                space.var,
                var_list(order)
            )));
        }
        check_blocks_sum(op, statement).map_err(refuse)?;
        if cin.any(&|c| matches!(c, Cin::Workspace { .. })) {
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

/// Places the loop over the blocks of one fibre's positions right inside
/// the loops over the operand's upper levels (and any loop a `reorder`
/// puts between them and the fibre's). Each fibre is cut into blocks of its
/// own; the statement must be zero wherever the operand is, reduce by sums,
/// and write a dense output, which takes each block's part of a sum.
#[allow(clippy::too_many_arguments)]
fn place_fibre_blocks(
    provenance: &Provenance,
    space: &PositionSpace,
    op: &Operand,
    statement: &Statement,
    dense_output: bool,
    cin: Cin,
    order: &mut Vec<LoopVar>,
    notes: &mut Vec<String>,
) -> Result<Cin> {
    let refuse = |message: String| EngineError::Schedule {
        column: space.column,
        message,
    };
    let (blocks, _, blocking) = provenance.recovery(&space.var).expect("a split position space");
    if !matches!(blocking, Blocking::Size(_)) {
        return Err(refuse(format!(
            "{} runs over the positions of each fibre of {}, whose lengths differ: split it into blocks of a size, not a number of parts",
            space.var, op.name
        )));
    }
    check_blocks_sum(op, statement).map_err(refuse)?;
    if !dense_output {
        return Err(refuse(format!(
            "the blocks of {} add each fibre's sums in parts, which a sparse output would receive out of order; use a dense output, or one stored as {} is (its pattern)",
            space.var, op.name
        )));
    }
    // Right after the last loop over an upper level (or a part of one).
    let parents: Vec<LoopVar> = provenance.expand_all(&space.parents);
    let at = order.iter().rposition(|v| parents.contains(v)).map_or(0, |p| p + 1);
    let next = order[at].clone();
    notes.push(format!(
        "{}: the positions of each fibre of {}'s level {} ({}), cut into blocks that {blocks} numbers, inside the loops over ({}); the loop over {} runs over each block's positions",
        space.var,
        op.name,
        space.level,
        op.format.level(space.level).name(),
        var_list(&parents),
        var_list(&space.covers)
    ));
    order.insert(at, blocks.clone());
    Ok(wrap_loop(cin, &next, &blocks))
}

/// `cin` with the loop over `var` inside a new loop over `outer`.
fn wrap_loop(cin: Cin, var: &LoopVar, outer: &LoopVar) -> Cin {
    match cin {
        Cin::Forall { var: v, body } if v == *var => Cin::Forall {
            var: outer.clone(),
            body: Box::new(Cin::Forall { var: v, body }),
        },
        Cin::Forall { var: v, body } => Cin::Forall {
            var: v,
            body: Box::new(wrap_loop(*body, var, outer)),
        },
        Cin::Where {
            temp,
            reduction,
            index,
            producer,
            consumer,
        } => Cin::Where {
            temp,
            reduction,
            index,
            producer: Box::new(wrap_loop(*producer, var, outer)),
            consumer: Box::new(wrap_loop(*consumer, var, outer)),
        },
        Cin::Workspace { vars, body } => Cin::Workspace {
            vars,
            body: Box::new(wrap_loop(*body, var, outer)),
        },
        Cin::Sequence(parts) => Cin::Sequence(parts.into_iter().map(|p| wrap_loop(p, var, outer)).collect()),
        assign @ Cin::Assign { .. } => assign,
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
