//! Lowering: index notation with explicit sums → concrete index notation.
//!
//! 1. `+=` becomes `=` with the old output read as an input.
//! 2. Sums move up through products and negations (`b * Σk c` = `Σk b*c`),
//!    so a sum stays below the root only under `+`, `-` or `/`.
//! 3. Sums left below the root become temporaries computed by `where`
//!    producers, placed as soon as their free variables are bound.
//! 4. An iteration order is chosen ([`choose_order`]); inputs whose levels
//!    cannot follow it, or whose formats cannot be iterated as they are, are
//!    converted first (and the plan says so).
//! 5. Trailing summed loops reduce into a temporary; results that would
//!    reach a sparse output out of order go through a workspace.

use std::collections::BTreeSet;

use tessera_formats::{Format, Level, LevelFormat, LevelKind, ValueType};

use super::defaults::{is_factor, output_lead, rescanned, unscanned, Scope};
use super::derived::{Provenance, Relation};
use super::order::{choose_order, satisfiable, Edges};
use super::precompute::{invariant_part, precomputed_part};
use super::{Cin, CinExpr, LoopVar, Operand, Operands, Target, TempId};
use crate::error::{EngineError, Result};
use crate::notation::{distinct_reductions, place_reductions, AssignOp, BinaryOp, Expr, Reduction, Statement};
use crate::schedule::apply::{
    apply_splits, check_precompute_names, check_split_levels, precompute_command, precompute_level, reorder_edges,
};
use crate::schedule::positions::{apply_positions, place_position_blocks};
use crate::schedule::tags::loop_tags;
use crate::schedule::{Command, Schedule};

/// How the output is assembled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputAssembly {
    /// Every component exists: results are accumulated in place.
    Dense,
    /// Results arrive in the output's order and are appended level by level.
    Append,
    /// The whole result is collected in a workspace and packed at the end
    /// (hashed and structured output formats).
    Packed,
    /// The output takes operand `operand`'s pattern (its levels are copied)
    /// and its values accumulate in place at the operand's positions: a
    /// schedule cuts each of the operand's fibres into blocks that add
    /// their parts of each entry's sum out of order.
    OnPattern { operand: usize },
}

/// A lowered statement and what the planner needs with it.
#[derive(Debug, Clone)]
pub struct Lowered {
    pub cin: Cin,
    pub operands: Operands,
    pub output: Operand,
    pub order: Vec<LoopVar>,
    pub summed: Vec<LoopVar>,
    pub temps: usize,
    pub assembly: OutputAssembly,
    /// Decisions worth reporting: conversions, workspaces.
    pub notes: Vec<String>,
    /// The derived variables among `order`, and how the statement's
    /// variables are recovered from them.
    pub provenance: Provenance,
    /// The schedule parallelizes the outer loop: every core at any size.
    pub every_core: bool,
    /// Loops a schedule's `unroll` unrolls, with their factors.
    pub unrolled: Vec<(LoopVar, usize)>,
    /// The loop a schedule's `cpu_vector` runs in lanes (also in
    /// `unrolled`, with the lanes as its factor): a block op may replace it.
    pub vectorized: Option<LoopVar>,
    /// Sizes a schedule's `bound` fixes, checked before each run.
    pub bounds: Vec<VarBound>,
    /// The format asked for the output, when the kernel assembles it in
    /// `output.format` (per mode, appended in order) and converts it to
    /// this one at the end: a structured output no operand's pattern
    /// gives.
    pub converted_output: Option<Format>,
    /// The type the statement's reductions and the output's sums compute
    /// in (`f64` registers for floats and truth values; integers as their
    /// bits, with wrapping arithmetic). Set by the caller from the typed
    /// statement.
    pub value_type: ValueType,
}

/// A schedule's `bound`: the variable's loop runs to `size` (a constant
/// in the code when exact), and a run whose inputs break it is refused.
#[derive(Debug, Clone, PartialEq)]
pub struct VarBound {
    pub var: LoopVar,
    pub size: usize,
    pub kind: crate::schedule::BoundKind,
    /// The command's text, for the refusal.
    pub command: String,
}

struct Temp {
    vars: Vec<LoopVar>,
    reduction: Reduction,
    body: CinExpr,
    free: BTreeSet<LoopVar>,
    children: Vec<TempId>,
    /// The free variable a `precompute`'s temporary is a vector over: its
    /// producer loops over it too, and the consumer reads its components.
    index: Option<LoopVar>,
}

impl Temp {
    /// The variables bound by the loops around the temporary's `where`.
    fn enclosing(&self) -> BTreeSet<LoopVar> {
        let mut out = self.free.clone();
        if let Some(index) = &self.index {
            out.remove(index);
        }
        out
    }

    /// The loops of its producer: its sums, and its index.
    fn loops(&self) -> Vec<LoopVar> {
        self.vars.iter().chain(self.index.iter()).cloned().collect()
    }
}

struct Lowerer<'a> {
    input_format: &'a dyn Fn(&str) -> Option<Format>,
    input_fill: &'a dyn Fn(&str) -> f64,
    operands: Operands,
    temps: Vec<Temp>,
    /// The schedule's `reorder` edges and the column of its command.
    reorder: (Edges, usize),
}

/// Lowers a checked statement. `input_format` gives the format of each
/// input by name and `input_fill` its fill; `output_format` is the
/// output's; `schedule`'s `reorder` commands constrain the loop order.
pub fn lower(
    stmt: &Statement,
    input_format: &dyn Fn(&str) -> Option<Format>,
    input_fill: &dyn Fn(&str) -> f64,
    output_format: &Format,
    schedule: &Schedule,
) -> Result<Lowered> {
    let lowered = lower_into(stmt, input_format, input_fill, output_format, schedule)?;
    if lowered.assembly != OutputAssembly::Packed || output_format.is_per_mode() {
        return Ok(term_by_term(
            stmt,
            input_format,
            input_fill,
            output_format,
            schedule,
            lowered,
        ));
    }
    // A structured output no operand's pattern gives: appended in its
    // per-mode format (merges and Gustavson rows run as for CSR), or on
    // the pattern of an operand stored so, and converted once at the end,
    // rather than every entry collected in a workspace and sorted. Padding
    // formats keep 0 as their fill.
    let per_mode = natural_per_mode(output_format);
    let mut appended = lower_into(stmt, input_format, input_fill, &per_mode, schedule)?;
    let assembled = matches!(
        appended.assembly,
        OutputAssembly::Append | OutputAssembly::OnPattern { .. }
    );
    if !assembled || appended.output.fill != 0.0 {
        return Ok(lowered);
    }
    appended.notes.push(format!(
        "output {} in {output_format}: assembled as {per_mode} and converted to {output_format} once at the end",
        stmt.lhs.tensor
    ));
    appended.converted_output = Some(output_format.clone());
    Ok(appended)
}

/// `stmt` as an assignment (`C += e` is `C = C + e`) with its sums
/// placed and named apart.
fn explicit_sums(stmt: &Statement) -> Statement {
    let rhs = match stmt.op {
        AssignOp::Assign => stmt.rhs.clone(),
        AssignOp::AddAssign => Expr::Binary {
            op: BinaryOp::Add,
            lhs: Box::new(Expr::Access(stmt.lhs.clone())),
            rhs: Box::new(stmt.rhs.clone()),
        },
    };
    distinct_reductions(&place_reductions(&Statement {
        lhs: stmt.lhs.clone(),
        op: AssignOp::Assign,
        rhs,
    }))
}

/// `whole`, or the statement's sum computed term by term into its dense
/// output ([`terms`](super::terms)) when that converts fewer tensors.
fn term_by_term(
    stmt: &Statement,
    input_format: &dyn Fn(&str) -> Option<Format>,
    input_fill: &dyn Fn(&str) -> f64,
    output_format: &Format,
    schedule: &Schedule,
    whole: Lowered,
) -> Lowered {
    let conversions = |l: &Lowered| l.operands.iter().filter(|o| o.converted_from.is_some()).count();
    if !schedule.is_empty() || !output_format.is_dense() {
        return whole;
    }
    let explicit = explicit_sums(stmt);
    let (sums, body) = peel(hoist(explicit.rhs.clone()));
    let Some(statements) = super::terms::term_statements(&explicit, &sums, &body) else {
        return whole;
    };
    let apart = super::terms::sparse_apart(&statements, input_format);
    if conversions(&whole) == 0 && !apart {
        return whole;
    }
    let Some(parts) = statements
        .iter()
        .map(|term| lower_into(term, input_format, input_fill, output_format, schedule).ok())
        .collect::<Option<Vec<Lowered>>>()
    else {
        return whole;
    };
    let converted = parts.iter().map(conversions).sum::<usize>();
    let why = if converted < conversions(&whole) {
        "one loop nest would merge tensors whose formats give no common order"
    } else if converted == conversions(&whole) && apart {
        "its terms read different sparse tensors, each walked once by loops of its own rather than merged at every coordinate"
    } else {
        return whole;
    };
    let note = format!(
        "the sum is computed term by term, each term's loops adding into {}: {why}",
        stmt.lhs.tensor
    );
    super::terms::joined(parts, vec![note]).unwrap_or(whole)
}

/// [`lower`] into `output_format` as it is.
fn lower_into(
    stmt: &Statement,
    input_format: &dyn Fn(&str) -> Option<Format>,
    input_fill: &dyn Fn(&str) -> f64,
    output_format: &Format,
    schedule: &Schedule,
) -> Result<Lowered> {
    let lhs = &stmt.lhs;
    if output_format.order() != lhs.indices.len() {
        return Err(EngineError::OrderMismatch {
            tensor: lhs.tensor.clone(),
            expected: output_format.order(),
            found: lhs.indices.len(),
            column: lhs.span.column(),
        });
    }
    let explicit = explicit_sums(stmt);
    let free: Vec<LoopVar> = lhs.indices.iter().cloned().map(LoopVar::Index).collect();
    let statement_vars = stmt_vars(&explicit);
    check_precompute_names(schedule, &statement_vars)?;
    let resolved = schedule.resolved();
    let precompute = precompute_command(&resolved, schedule, stmt)?;
    let schedule = &resolved;
    let mut lowerer = Lowerer {
        input_format,
        input_fill,
        operands: Vec::new(),
        temps: Vec::new(),
        reorder: (Vec::new(), 0),
    };
    let (top_vars, body) = peel(hoist(explicit.rhs.clone()));
    let mut notes = Vec::new();
    let part = match &precompute {
        Some(command) => {
            // The variables a `reorder` lists before the precompute's.
            let outside = |v: &LoopVar| {
                schedule.commands().iter().any(|placed| match &placed.command {
                    Command::Reorder(vars) => {
                        let at = |name: &str| vars.iter().position(|x| x == name);
                        matches!((at(v.name()), at(&command.var)), (Some(a), Some(b)) if a < b)
                    }
                    _ => false,
                })
            };
            precomputed_part(command, &top_vars, &body, &outside)?
        }
        // A schedule is taken as written; structured formats derive
        // variables a vector temporary cannot be indexed by.
        None if schedule.is_empty()
            && stmt
                .rhs
                .accesses()
                .iter()
                .all(|a| input_format(&a.tensor).is_some_and(|f| f.is_per_mode())) =>
        {
            invariant_part(&top_vars, &body, &free, input_format)
        }
        None => None,
    };
    let (top_vars, body, root_temps) = match part {
        None => {
            let (body, temps) = lowerer.expr(&body)?;
            (top_vars, body, temps)
        }
        Some(part) => {
            let temp = lowerer.push_temp(
                part.sums.clone(),
                Reduction::Sum,
                &part.factors,
                Some(part.index.clone()),
            )?;
            let command = precompute.as_ref().map_or(
                "precomputed by default, not again for each coordinate of the other loops",
                |c| c.text.as_str(),
            );
            notes.push(part.describe(command, temp.0, &lowerer.temps[temp.0].enclosing()));
            let (rest, mut temps) = lowerer.expr(&part.rest)?;
            temps.insert(0, temp);
            let body = CinExpr::Binary {
                op: BinaryOp::Mul,
                lhs: Box::new(CinExpr::TempAt(temp, part.index)),
                rhs: Box::new(rest),
            };
            let top: Vec<LoopVar> = top_vars.into_iter().filter(|v| !part.sums.contains(v)).collect();
            (top, body, temps)
        }
    };
    lowerer.convert_unsupported((output_format, &free), &body, &mut notes);

    // A sparse output takes the fill of what it is assigned, so that the
    // coordinates where every operand is absent need not be computed (the
    // minimum of no paths is +inf); a dense output, or one that pads, or
    // one summed into over outer loops, keeps 0.
    let output_fill = match (top_vars.is_empty(), output_format.is_dense() || output_format.pads()) {
        (true, false) => {
            let fills = crate::lattice::Fills {
                operand: &|a| lowerer.operands[a].fill,
                temp: &|_| None,
            };
            crate::lattice::fill(&lowerer.reduced(&body), &fills).unwrap_or(0.0)
        }
        _ => 0.0,
    };
    let output = Operand {
        name: lhs.tensor.clone(),
        id: super::OUTPUT,
        vars: free.clone(),
        format: output_format.clone(),
        fill: output_fill,
        converted_from: None,
    };
    let mut stmt_summed: Vec<LoopVar> = Vec::new();
    for v in stmt_vars(&explicit) {
        if !free.contains(&v) && !stmt_summed.contains(&v) {
            stmt_summed.push(v);
        }
    }
    // Derived variables replace the statement's where structured levels
    // split them, and levels that store no mode add their own, which are
    // summed. An operand whose levels the order cannot follow is converted
    // and the variables derived again.
    let top_loops: Vec<LoopVar> = free.iter().chain(top_vars.iter()).cloned().collect();
    let mut unscanned_operands: Vec<usize> = Vec::new();
    let (provenance, order, summed) = loop {
        let mut provenance = lowerer.provenance(&mut notes);
        apply_positions(schedule, &mut provenance, &lowerer.operands, &output, &statement_vars)?;
        apply_splits(schedule, &mut provenance, &lowerer.operands, &output, &statement_vars)?;
        lowerer.reorder = reorder_edges(schedule, &statement_vars, &provenance)?;
        let mut priority = provenance.expand_all(&free);
        // A loop over a pair fused from a free and a summed variable is
        // not a sum: each pair adds into its own component.
        let mut summed: Vec<LoopVar> = provenance
            .expand_all(&stmt_summed)
            .into_iter()
            .filter(|v| !priority.contains(v))
            .collect();
        summed.extend(provenance.own().iter().cloned());
        for v in &summed {
            if !priority.contains(v) {
                priority.push(v.clone());
            }
        }
        let order = match lowerer.order(&priority, &output, &provenance, None, &mut notes)? {
            Ok(order) => order,
            Err(structured) => {
                lowerer.convert(
                    structured,
                    "its levels cannot follow the loop order the other tensors need".into(),
                    &mut notes,
                );
                continue;
            }
        };
        // Converting another operand for its blocks or for the order can
        // leave it walking what a structured operand splits: convert that
        // one too.
        let nested_sums = !lowerer.temps.is_empty();
        let structured = (0..lowerer.operands.len()).find_map(|k| {
            structured_problem(k, &lowerer.operands, (output_format, &free), &body, nested_sums).map(|r| (k, r))
        });
        if let Some((k, reason)) = structured {
            lowerer.convert(k, reason, &mut notes);
            continue;
        }
        // A tensor is converted for this once per level at most (DCSC
        // becomes DCSR, then CSR), so conversions cannot undo each other.
        let rescan = rescanned(&lowerer.operands, &lowerer.scopes(&body, &top_loops), &order).filter(|(k, _)| {
            unscanned_operands.iter().filter(|c| *c == k).count() < lowerer.operands[*k].format.levels().len()
        });
        if let Some((k, level)) = rescan {
            let target = unscanned(&lowerer.operands[k].format, level);
            let reason = if level == 0 {
                "an intersection would walk it again for every coordinate of an outer loop; dense, it is located"
            } else {
                "an intersection would walk its fibres again for every coordinate of an outer loop; this order walks them once"
            };
            lowerer.convert_to(k, target, reason.into(), &mut notes);
            unscanned_operands.push(k);
            continue;
        }
        let top = provenance.expand_all(&top_loops);
        let appended = appendable(&output, &order) && !output_format.is_dense();
        let user_ordered = !lowerer.reorder.0.is_empty();
        let order = match output_lead(&output, &provenance, appended && !user_ordered, &top, &order) {
            Some(lead) => lowerer.led_order(&priority, &output, &provenance, &lead, order, &mut notes)?,
            None => order,
        };
        break (provenance, order, summed);
    };
    // A schedule's order that no conversion could make a tensor follow
    // (a split's parts around another loop) is refused, not planned with
    // a level located that cannot locate.
    let at = |v: &LoopVar| order.iter().position(|o| o == v);
    for op in &lowerer.operands {
        let broken = provenance
            .expand_edges(&hard_edges(op))
            .into_iter()
            .find(|(a, b)| matches!((at(a), at(b)), (Some(x), Some(y)) if x > y));
        if let Some((above, below)) = broken {
            return Err(EngineError::Schedule {
                column: lowerer.reorder.1,
                message: format!(
                    "{} ({}) must be walked {above} before {below}, and the schedule's loops nest {}",
                    op.name,
                    op.format,
                    order.iter().map(LoopVar::name).collect::<Vec<_>>().join(", ")
                ),
            });
        }
    }
    let nested: Vec<LoopVar> = lowerer.temps.iter().flat_map(Temp::loops).collect();
    if let Some(index) = lowerer.temps.iter().find_map(|t| t.index.as_ref()) {
        if provenance.expand(index) != [index.clone()] {
            let command = precompute
                .as_ref()
                .expect("the default precomputes over per-mode formats only, whose variables are not derived");
            return Err(command.refuse(format!(
                "precompute over {index}, which the loops run as {}: a workspace is a vector over one loop's variable",
                provenance
                    .expand(index)
                    .iter()
                    .map(LoopVar::name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    if let Some(part) = provenance.fused_parts().find(|v| nested.contains(v)) {
        let fused = provenance.fused_into(part).expect("a part of a fused pair");
        return Err(EngineError::Schedule {
            column: schedule.column_naming(fused.name()),
            message: format!(
                "{part}, which {fused} fuses, is a loop of a nested sum, whose loops a fuse does not reach yet: fuse variables the nested sums do not loop over"
            ),
        });
    }
    check_split_levels(
        schedule,
        &lowerer.operands,
        &output,
        Some((&order, &provenance, &nested)),
    )?;
    let position = |v: &LoopVar| order.iter().position(|o| o == v).expect("ordered variable");

    let mut chain: Vec<LoopVar> = provenance.expand_all(free.iter().chain(top_vars.iter()));
    chain.extend(provenance.own().iter().cloned());
    chain.sort_by_key(|v| position(v));
    chain.dedup();

    let pattern = pattern_source(&provenance, &lowerer.operands, &output).or_else(|| {
        (0..lowerer.operands.len()).find(|&k| {
            takes_pattern(
                k,
                &lowerer.operands,
                (output_format, &free),
                &body,
                !schedule.is_empty(),
            )
        })
    });
    let assembly = if output_format.is_dense() {
        OutputAssembly::Dense
    } else if let Some(operand) = pattern {
        notes.push(format!(
            "output {} takes {}'s pattern: its values accumulate in place at {}'s positions",
            lhs.tensor, lowerer.operands[operand].name, lowerer.operands[operand].name
        ));
        OutputAssembly::OnPattern { operand }
    } else if appendable(&output, &order) {
        OutputAssembly::Append
    } else {
        OutputAssembly::Packed
    };
    // Where a workspace starts, if one is needed: the depth of the loops
    // before it, and the output levels whose variables those loops bind.
    let workspace_from: Option<(usize, usize)> = match assembly {
        OutputAssembly::Dense | OutputAssembly::OnPattern { .. } => None,
        OutputAssembly::Packed => {
            notes.push(format!(
                "output {} in {}: collected in a workspace and packed at the end",
                lhs.tensor, output_format
            ));
            Some((0, 0))
        }
        OutputAssembly::Append => {
            let level_vars = output.level_vars();
            // Levels whose variables lead the loops, in order (a split
            // variable by its blocks, then its place in them).
            let (mut at, mut in_order) = (0, 0);
            for v in &level_vars {
                let parts = provenance.expand(v);
                if !chain[at..].starts_with(&parts) {
                    break;
                }
                at += parts.len();
                in_order += 1;
            }
            if in_order == level_vars.len() {
                None
            } else {
                let rest: Vec<&str> = level_vars[in_order..].iter().map(LoopVar::name).collect();
                let unsorted = workspace_unsorted(output_format, rest.len());
                notes.push(format!(
                    "output {}: results for ({}) arrive out of order; a workspace collects them{}",
                    lhs.tensor,
                    rest.join(","),
                    if unsorted {
                        " and hands them over unsorted, as the unordered level takes them"
                    } else {
                        ""
                    }
                ));
                Some((at, in_order))
            }
        }
    };
    let whole = match (&precompute, lowerer.temps.iter().any(|t| t.index.is_some())) {
        (Some(command), false) => Some((precompute_level(command, &output)?, command.text.clone())),
        _ => None,
    };
    let workspace_from = match whole {
        None => workspace_from,
        Some((level, command)) => {
            let level_vars = output.level_vars();
            let rest: Vec<&str> = level_vars[level..].iter().map(LoopVar::name).collect();
            match (assembly, workspace_from) {
                (OutputAssembly::OnPattern { .. }, _) => {
                    notes.push(format!(
                        "{command}: the output takes an operand's pattern, so results accumulate in place, as in a dense workspace"
                    ));
                    None
                }
                (OutputAssembly::Dense, _) => {
                    notes.push(format!(
                        "{command}: the output is dense, so results accumulate in place, as in a dense workspace"
                    ));
                    None
                }
                (_, Some((depth, q))) if q <= level => {
                    notes.push(format!(
                        "{command}: the workspace the plan makes already collects ({})",
                        rest.join(",")
                    ));
                    Some((depth, q))
                }
                _ => {
                    notes.push(format!(
                        "{command}: results for ({}) are collected in a workspace and assembled into {} from it",
                        rest.join(","),
                        lhs.tensor
                    ));
                    let depth = provenance.expand_all(&level_vars[..level]).len();
                    Some((depth, level))
                }
            }
        }
    };
    // A packed output's workspace holds whole coordinates in mode order (the
    // order of the coordinate list it is packed from); structured formats
    // have no per-level variables at all.
    let workspace_vars = workspace_from.map(|(_, q)| match assembly {
        OutputAssembly::Packed => output.vars.clone(),
        _ => output.level_vars()[q..].to_vec(),
    });
    // Trailing summed loops reduce into a temporary (`t += ...; out += t`).
    let reduce_from = {
        let mut r = chain.len();
        while r > 0 && summed.contains(&chain[r - 1]) {
            r -= 1;
        }
        (r < chain.len()).then_some(r)
    };
    let builder = ChainBuilder {
        temps: &lowerer.temps,
        order: &order,
        provenance: &provenance,
    };
    let mut next_temp = lowerer.temps.len();
    let cin = builder.build(
        &chain,
        0,
        &root_temps,
        &BTreeSet::new(),
        body,
        workspace_from.map(|(depth, _)| (depth, workspace_vars.clone().unwrap_or_default())),
        reduce_from.map(|r| (r, Reduction::Sum)),
        &mut next_temp,
    );
    let mut order = order;
    let cin = place_position_blocks(
        &provenance,
        &lowerer.operands,
        &explicit,
        matches!(assembly, OutputAssembly::Dense | OutputAssembly::OnPattern { .. }),
        cin,
        &mut order,
        &mut notes,
    )?;
    let (unrolled, bounds, vectorized) = loop_tags(
        schedule,
        &order,
        &statement_vars,
        &lowerer.operands,
        &provenance,
        &mut notes,
    )?;
    Ok(Lowered {
        cin,
        operands: lowerer.operands,
        output,
        order,
        summed,
        temps: next_temp,
        assembly,
        notes,
        provenance,
        every_core: schedule.parallel().is_some(),
        unrolled,
        vectorized,
        bounds,
        converted_output: None,
        value_type: ValueType::F64,
    })
}

impl Lowered {
    /// The variables whose extents a run's dimensions hold, in order: the
    /// loops', then the statement variables a schedule splits (their last
    /// block ends there). Their block sizes follow
    /// ([`Self::block_size_dimension`]).
    pub fn dimension_vars(&self) -> impl Iterator<Item = &LoopVar> {
        self.order
            .iter()
            .chain(self.provenance.scheduled())
            .chain(self.provenance.fused_parts())
    }

    /// Where `v`'s extent is among the run's dimensions.
    pub fn dimension(&self, v: &LoopVar) -> Option<u32> {
        self.dimension_vars().position(|d| d == v).map(|k| k as u32)
    }

    /// Where the block size of `v`, a variable a schedule splits, is among
    /// the run's dimensions.
    pub fn block_size_dimension(&self, v: &LoopVar) -> Option<u32> {
        let k = self.provenance.scheduled().position(|s| s == v)?;
        Some((self.dimension_vars().count() + k) as u32)
    }
}

/// Whether `output` can be appended to in the loops of `order`: a
/// streamable format whose levels' variables are all loops (an output
/// split into blocks is, beside an operand split alike).
fn appendable(output: &Operand, order: &[LoopVar]) -> bool {
    streamable(&output.format) && (output.format.is_per_mode() || output.level_vars().iter().all(|v| order.contains(v)))
}

/// Whether a workspace over the last `levels` levels of an output of
/// `format` hands its keys over unsorted: it fills one unordered level, row
/// by row, which takes them as they first came.
pub fn workspace_unsorted(format: &Format, levels: usize) -> bool {
    levels == 1 && format.levels().last().is_some_and(|l| !l.level.ordered)
}

/// Output formats the streaming assembler can append to: each level stores
/// a mode or a block of one and is dense, compressed or singleton (ordered
/// or not: entries come in order, which an unordered level also takes), or
/// stores diagonals over range and offset levels (DIA).
fn streamable(format: &Format) -> bool {
    use tessera_formats::Projection;
    format.levels().iter().all(|l| {
        let kind_fits = match l.level.kind {
            LevelKind::Dense => l.level.ordered,
            LevelKind::Compressed | LevelKind::Singleton => true,
            LevelKind::Range | LevelKind::Offset => true,
            LevelKind::Hashed => false,
        };
        kind_fits && matches!(l.projection, Projection::Mode { .. } | Projection::Diagonal { .. })
    })
}

/// Every variable of a statement, in order of first appearance.
fn stmt_vars(stmt: &Statement) -> Vec<LoopVar> {
    fn walk(e: &Expr, out: &mut Vec<LoopVar>) {
        match e {
            Expr::Access(a) => {
                for v in &a.indices {
                    let v = LoopVar::Index(v.clone());
                    if !out.contains(&v) {
                        out.push(v);
                    }
                }
            }
            Expr::Literal(_) => {}
            Expr::Neg(e) => walk(e, out),
            Expr::Binary { lhs, rhs, .. } => {
                walk(lhs, out);
                walk(rhs, out);
            }
            Expr::Call { args, .. } => args.iter().for_each(|a| walk(a, out)),
            Expr::Reduce { var, body, .. } => {
                let v = LoopVar::Index(var.clone());
                if !out.contains(&v) {
                    out.push(v);
                }
                walk(body, out);
            }
        }
    }
    let mut out: Vec<LoopVar> = stmt.lhs.indices.iter().cloned().map(LoopVar::Index).collect();
    walk(&stmt.rhs, &mut out);
    out
}

/// Moves sums up through products and negations (other reductions stay:
/// `min` does not distribute over a product with a negative factor).
fn hoist(e: Expr) -> Expr {
    const SUM: Reduction = Reduction::Sum;
    match e {
        Expr::Neg(inner) => match hoist(*inner) {
            Expr::Reduce { op: SUM, var, body } => Expr::Reduce {
                op: SUM,
                var,
                body: Box::new(hoist(Expr::Neg(body))),
            },
            other => Expr::Neg(Box::new(other)),
        },
        Expr::Binary {
            op: BinaryOp::Mul,
            lhs,
            rhs,
        } => match (hoist(*lhs), hoist(*rhs)) {
            (Expr::Reduce { op: SUM, var, body }, r) => Expr::Reduce {
                op: SUM,
                var,
                body: Box::new(hoist(Expr::Binary {
                    op: BinaryOp::Mul,
                    lhs: body,
                    rhs: Box::new(r),
                })),
            },
            (l, Expr::Reduce { op: SUM, var, body }) => Expr::Reduce {
                op: SUM,
                var,
                body: Box::new(hoist(Expr::Binary {
                    op: BinaryOp::Mul,
                    lhs: Box::new(l),
                    rhs: body,
                })),
            },
            (l, r) => Expr::Binary {
                op: BinaryOp::Mul,
                lhs: Box::new(l),
                rhs: Box::new(r),
            },
        },
        Expr::Binary { op, lhs, rhs } => Expr::Binary {
            op,
            lhs: Box::new(hoist(*lhs)),
            rhs: Box::new(hoist(*rhs)),
        },
        Expr::Call { func, args } => Expr::Call {
            func,
            args: args.into_iter().map(hoist).collect(),
        },
        Expr::Reduce { op, var, body } => Expr::Reduce {
            op,
            var,
            body: Box::new(hoist(*body)),
        },
        other => other,
    }
}

/// Splits the sums at the top from the expression below them.
fn peel(e: Expr) -> (Vec<LoopVar>, Expr) {
    let (vars, _, body) = peel_reductions(e, Reduction::Sum);
    (vars, body)
}

/// Splits the reductions by `op` at the top from the expression below
/// them; the whole nest is one reduction over all their variables.
fn peel_reductions(e: Expr, op: Reduction) -> (Vec<LoopVar>, Reduction, Expr) {
    let mut vars = Vec::new();
    let mut e = e;
    loop {
        match e {
            Expr::Reduce { op: o, var, body } if o == op => {
                vars.push(LoopVar::Index(var));
                e = *body;
            }
            other => return (vars, op, other),
        }
    }
}

impl Lowerer<'_> {
    /// `expr` with each temporary replaced by the reduction that computes
    /// it ([`CinExpr::Reduced`]), for analysing the whole expression.
    fn reduced(&self, expr: &CinExpr) -> CinExpr {
        let mut temps = Vec::new();
        expr.temps(&mut temps);
        temps.into_iter().fold(expr.clone(), |e, t| {
            let temp = &self.temps[t.0];
            let with = CinExpr::Reduced {
                op: temp.reduction,
                body: Box::new(self.reduced(&temp.body)),
            };
            e.substitute(t, &with)
        })
    }

    /// Converts an expression without top sums; inner sums become temps.
    /// Returns the temps created directly in this scope.
    fn expr(&mut self, e: &Expr) -> Result<(CinExpr, Vec<TempId>)> {
        let mut here = Vec::new();
        let out = self.expr_into(e, &mut here)?;
        Ok((out, here))
    }

    fn expr_into(&mut self, e: &Expr, here: &mut Vec<TempId>) -> Result<CinExpr> {
        Ok(match e {
            Expr::Access(a) => {
                let format = (self.input_format)(&a.tensor).ok_or_else(|| EngineError::UnknownTensor {
                    name: a.tensor.clone(),
                    column: a.span.column(),
                })?;
                if format.order() != a.indices.len() {
                    return Err(EngineError::OrderMismatch {
                        tensor: a.tensor.clone(),
                        expected: format.order(),
                        found: a.indices.len(),
                        column: a.span.column(),
                    });
                }
                let vars: Vec<LoopVar> = a.indices.iter().cloned().map(LoopVar::Index).collect();
                // The same tensor at the same indices again (`A(i,j) *
                // A(i,j)`) reads the same operand: one iterator, one value,
                // where two would be merged with each other.
                if let Some(same) = self.operands.iter().position(|o| o.name == a.tensor && o.vars == vars) {
                    return Ok(CinExpr::Access(same));
                }
                self.operands.push(Operand {
                    name: a.tensor.clone(),
                    id: self.operands.len(),
                    vars,
                    format,
                    fill: (self.input_fill)(&a.tensor),
                    converted_from: None,
                });
                CinExpr::Access(self.operands.len() - 1)
            }
            Expr::Literal(v) => CinExpr::Literal(*v),
            Expr::Neg(inner) => CinExpr::Neg(Box::new(self.expr_into(inner, here)?)),
            Expr::Binary { op, lhs, rhs } => CinExpr::Binary {
                op: *op,
                lhs: Box::new(self.expr_into(lhs, here)?),
                rhs: Box::new(self.expr_into(rhs, here)?),
            },
            Expr::Call { func, args } => CinExpr::Call {
                func: *func,
                args: args.iter().map(|a| self.expr_into(a, here)).collect::<Result<_>>()?,
            },
            Expr::Reduce { op, .. } => {
                let (vars, reduction, body) = peel_reductions(hoist(e.clone()), *op);
                let id = self.push_temp(vars, reduction, &body, None)?;
                here.push(id);
                CinExpr::Temp(id)
            }
        })
    }

    /// A temporary that combines `body` by `reduction` over `vars`; with
    /// an `index`, a vector over it.
    fn push_temp(
        &mut self,
        vars: Vec<LoopVar>,
        reduction: Reduction,
        body: &Expr,
        index: Option<LoopVar>,
    ) -> Result<TempId> {
        let (body, children) = self.expr(body)?;
        // Free variables: those of the operands the body reads directly,
        // and those its inner temps leave free (the operands inside an
        // inner temp may use variables that temp sums over, which are not
        // free here).
        let mut direct = Vec::new();
        body.operands(&mut direct);
        let mut free = BTreeSet::new();
        for &a in &direct {
            free.extend(self.operands[a].vars.iter().cloned());
        }
        for c in &children {
            free.extend(self.temps[c.0].free.iter().cloned());
        }
        for v in &vars {
            free.remove(v);
        }
        self.temps.push(Temp {
            vars,
            reduction,
            body,
            free,
            children,
            index,
        });
        Ok(TempId(self.temps.len() - 1))
    }

    /// Converts inputs whose formats the planner cannot iterate as they are,
    /// and structured inputs the rest of the statement cannot iterate with.
    fn convert_unsupported(&mut self, output: (&Format, &[LoopVar]), root: &CinExpr, notes: &mut Vec<String>) {
        for k in 0..self.operands.len() {
            if let Some(reason) = iteration_problem(&self.operands[k].format) {
                self.convert(k, reason, notes);
            }
        }
        // A conversion changes what the other operands meet: repeat until
        // every structured operand left can be iterated as it is.
        let nested_sums = !self.temps.is_empty();
        while let Some((k, reason)) = (0..self.operands.len())
            .find_map(|k| structured_problem(k, &self.operands, output, root, nested_sums).map(|r| (k, r)))
        {
            self.convert(k, reason, notes);
        }
    }

    /// Converts operand `k` to the per-mode format of its order, saying why.
    fn convert(&mut self, k: usize, reason: String, notes: &mut Vec<String>) {
        let target = natural_per_mode(&self.operands[k].format);
        self.convert_to(k, target, reason, notes);
    }

    /// Converts operand `k` to `target`, saying why.
    fn convert_to(&mut self, k: usize, target: Format, reason: String, notes: &mut Vec<String>) {
        let op = &mut self.operands[k];
        notes.push(format!(
            "convert {} from {} to {}: {}",
            op.name, op.format, target, reason
        ));
        op.converted_from.get_or_insert((op.format.clone(), reason));
        op.format = target;
    }

    /// The refusal of a `reorder` that moves a sum out of its scope.
    fn out_of_scope(&self) -> EngineError {
        let user = &self.reorder.0;
        let ahead = |a: &LoopVar, b: &LoopVar| user.iter().any(|(x, y)| x == a && y == b);
        let reversed = self.temps.iter().find_map(|t| {
            t.free
                .iter()
                .find_map(|f| t.vars.iter().find(|v| ahead(v, f)).map(|v| (v.clone(), f.clone())))
        });
        let message = match reversed {
            Some((summed, free)) => format!(
                "reorder puts the sum over {summed} outside the loop over {free}, which its terms depend on: the sum would leave its scope"
            ),
            None => "reorder moves a sum out of its scope (the loops over its terms' variables)".into(),
        };
        EngineError::Schedule {
            column: self.reorder.1,
            message,
        }
    }

    /// The refusal of a `reorder` that operand `k`'s storage cannot follow.
    fn storage_conflict(&self, k: usize) -> EngineError {
        let op = &self.operands[k];
        let user = &self.reorder.0;
        let later = |a: &LoopVar, b: &LoopVar| user.iter().any(|(x, y)| x == b && y == a);
        let broken = hard_edges(op).into_iter().find(|(a, b)| later(a, b));
        let message = match broken {
            Some((a, b)) => format!(
                "{} ({}) is walked {a} before {b}, and reorder puts {b} first: convert {} to a format that stores {b} first",
                op.name, op.format, op.name
            ),
            None => format!(
                "{} ({}) cannot be walked in this order without a conversion",
                op.name, op.format
            ),
        };
        EngineError::Schedule {
            column: self.reorder.1,
            message,
        }
    }

    /// The order led by `lead`, converting inputs that cannot follow it, in
    /// place of `order`; `order` itself (and nothing converted) when no
    /// order can start at `lead`.
    fn led_order(
        &mut self,
        priority: &[LoopVar],
        output: &Operand,
        provenance: &Provenance,
        lead: &LoopVar,
        order: Vec<LoopVar>,
        notes: &mut Vec<String>,
    ) -> Result<Vec<LoopVar>> {
        let operands = self.operands.clone();
        let noted = notes.len();
        match self.order(priority, output, provenance, Some(lead), notes) {
            Ok(Ok(led)) => {
                notes.push(format!(
                    "loop order starts at {lead}, as output {} does: in the order {} the whole result would be collected and sorted",
                    output.name,
                    order.iter().map(LoopVar::name).collect::<Vec<_>>().join(",")
                ));
                Ok(led)
            }
            _ => {
                self.operands = operands;
                notes.truncate(noted);
                Ok(order)
            }
        }
    }

    /// The scopes of the statement: the body at the root, enclosed by the
    /// loops of `top`, and each temporary's, enclosed by its free variables.
    fn scopes<'a>(&'a self, root: &'a CinExpr, top: &[LoopVar]) -> Vec<Scope<'a>> {
        let mut scopes = vec![Scope {
            body: root,
            enclosing: top.iter().cloned().collect(),
        }];
        scopes.extend(self.temps.iter().map(|t| Scope {
            body: &t.body,
            enclosing: t.enclosing(),
        }));
        scopes
    }

    /// The derived variables of the operands, converting any whose blocks
    /// differ from an earlier operand's.
    fn provenance(&mut self, notes: &mut Vec<String>) -> Provenance {
        loop {
            match Provenance::of(&self.operands) {
                Ok(p) => return p,
                Err(conflict) => self.convert(
                    conflict.operand,
                    "its blocks split a variable that another tensor splits into blocks of another size".into(),
                    notes,
                ),
            }
        }
    }

    /// Chooses the iteration order, converting inputs whose levels fight it.
    /// `Ok(Err(k))`: structured operand `k` cannot follow any order the
    /// others allow, and must be converted before variables are derived
    /// again.
    fn order(
        &mut self,
        priority: &[LoopVar],
        output: &Operand,
        provenance: &Provenance,
        lead: Option<&LoopVar>,
        notes: &mut Vec<String>,
    ) -> Result<std::result::Result<Vec<LoopVar>, usize>> {
        let mut fixed: Edges = Vec::new();
        for t in &self.temps {
            for f in &t.enclosing() {
                for v in t.loops() {
                    fixed.push((f.clone(), v));
                }
            }
        }
        let mut fixed = provenance.expand_edges(&fixed);
        let unscheduled = fixed.clone();
        if !self.reorder.0.is_empty() {
            fixed.extend(provenance.expand_edges(&self.reorder.0));
            if !satisfiable(priority, &fixed) {
                return Err(self.out_of_scope());
            }
        }
        if let Some(lead) = lead {
            fixed.extend(
                priority
                    .iter()
                    .filter(|v| *v != lead)
                    .map(|v| (lead.clone(), v.clone())),
            );
        }
        let mut reorder: Vec<bool> = vec![false; self.operands.len()];
        loop {
            let hard: Vec<Edges> = self
                .operands
                .iter()
                .zip(&reorder)
                .map(|(op, &skip)| {
                    if skip {
                        Vec::new()
                    } else {
                        provenance.expand_edges(&hard_edges(op))
                    }
                })
                .collect();
            // A structured output is packed at the end: its order binds no
            // loop. A dense output is written anywhere at no cost: the
            // operands that walk levels come first, so that its order
            // (`i/4, i%4` before `j/4` for blocks) cannot make one walk a
            // level again for each coordinate of a loop outside it.
            let dense_output = output.format.is_dense();
            let walks = |op: &Operand| op.format.levels().iter().any(|l| !l.level.capabilities().locate);
            let edges_of = |op: &Operand| provenance.expand_edges(&consecutive_edges(op));
            let mut soft = Vec::new();
            if dense_output {
                soft.extend(self.operands.iter().filter(|op| walks(op)).map(edges_of));
            }
            if output.format.is_per_mode() {
                soft.push(edges_of(output));
            }
            soft.extend(
                self.operands
                    .iter()
                    .filter(|op| !(dense_output && walks(op)))
                    .map(edges_of),
            );
            match choose_order(priority, &fixed, &hard, &soft) {
                Ok(order) => {
                    for (k, op) in self.operands.iter_mut().enumerate() {
                        if reorder[k] {
                            let target = reordered(op, &order, provenance);
                            notes.push(format!(
                                "convert {} from {} to {}: its levels do not follow the loop order {}",
                                op.name,
                                op.format,
                                target,
                                order.iter().map(LoopVar::name).collect::<Vec<_>>().join(",")
                            ));
                            op.converted_from
                                .get_or_insert((op.format.clone(), "loop order".into()));
                            op.format = target;
                        }
                    }
                    return Ok(Ok(order));
                }
                Err(problem)
                    if !self.reorder.0.is_empty() && choose_order(priority, &unscheduled, &hard, &[]).is_ok() =>
                {
                    return Err(self.storage_conflict(problem.operand));
                }
                Err(problem) if !self.operands[problem.operand].format.is_per_mode() => {
                    return Ok(Err(problem.operand));
                }
                Err(problem) if !reorder[problem.operand] => reorder[problem.operand] = true,
                Err(problem) => {
                    // Converting the operand did not help: the temporaries'
                    // own constraints conflict. Refuse rather than loop.
                    return Err(EngineError::Unsupported(format!(
                        "no loop order satisfies the nesting of the statement's sums (at {})",
                        self.operands[problem.operand].name
                    )));
                }
            }
        }
    }
}

/// Why a format cannot be iterated by the planner as it is, if it cannot.
fn iteration_problem(format: &Format) -> Option<String> {
    let levels = format.levels();
    for (k, l) in levels.iter().enumerate() {
        let level = &l.level;
        let caps = level.capabilities();
        if !level.ordered && !caps.locate && !format.stores_as_given() {
            return Some(format!("level {k} is unordered and cannot locate"));
        }
        // Unordered COO's last level repeats (duplicates kept), and its
        // children chain without order: its loops only ever walk it alone
        // ([`unordered_problem`]), into a dense output that sums repeats.
        let repeats_as_given = k + 1 == levels.len() && format.stores_as_given();
        if !(level.unique || repeats_as_given) {
            let child_chains = levels.get(k + 1).is_some_and(|c| {
                let p = c.level.properties();
                p.compact
                    && (p.ordered || format.stores_as_given())
                    && c.level.capabilities().iteration == tessera_formats::Iteration::CoordinatePosition
            });
            if !child_chains {
                return Some(format!("level {k} repeats coordinates and its child cannot be chained"));
            }
        }
    }
    None
}

/// Why operand `k`, stored in a structured format (levels that are not
/// one per mode), cannot be iterated as it is in this statement, if it
/// cannot. Its loops run over derived variables (a diagonal, a slot,
/// blocks); every other tensor must then reach those modes by locating
/// them, not by walking its own levels beside them.
fn structured_problem(
    k: usize,
    operands: &[Operand],
    (output, output_vars): (&Format, &[LoopVar]),
    root: &CinExpr,
    nested_sums: bool,
) -> Option<String> {
    let op = &operands[k];
    if op.format.stores_as_given() {
        return unordered_problem(k, operands, output, root, nested_sums);
    }
    if op.format.is_per_mode() {
        return None;
    }
    if op.fill != 0.0 {
        // Loops over its derived variables visit what it stores; the
        // components it does not store take its fill, which a product or
        // a sum over its slots cannot give.
        return Some(format!(
            "its fill is {}, which the components it does not store take, and loops over its {} levels visit only what it stores",
            op.fill, op.format
        ));
    }
    // Another tensor whose levels split the same variables alike (BCSR
    // beside BCSR of the same blocks) is merged with it level by level,
    // every derived variable's loop driven by both.
    let level_vars = op.level_vars();
    let merged_alike = |o: &Operand| o.id != op.id && o.level_vars() == level_vars;
    let has_own = level_vars
        .iter()
        .any(|v| matches!(v.relation(), Some(Relation::Own { .. })));
    let partners_merge = !has_own
        && operands
            .iter()
            .enumerate()
            .all(|(j, o)| j == k || merged_alike(o) || is_factor(root, j, operands));
    // Loops over diagonals visit only the stored ones, and below each only
    // its rows: every term must read a tensor stored on those diagonals.
    let on_diagonals = level_vars
        .iter()
        .any(|v| matches!(v.relation(), Some(Relation::Diagonal { .. })));
    let fills = crate::lattice::Fills {
        operand: &|a| operands.get(a).map_or(0.0, |o| o.fill),
        temp: &|_| None,
    };
    if on_diagonals {
        let on_them = |a: usize| (a == k || operands.get(a).is_some_and(merged_alike)).then_some(a);
        let terms_read_them = crate::lattice::Lattice::build(root, &on_them, &fills).is_some_and(|l| !l.has_universe());
        if !terms_read_them {
            return Some("the statement adds terms that do not read it".into());
        }
    }
    // Loops over diagonals, slots or blocks visit only what it stores: the
    // statement must be zero where it stores nothing (no constant term, no
    // `exp` of it, no `sum(m, f64(!A(m,i)))`).
    if crate::lattice::fill(root, &fills) != Some(0.0) {
        return Some(format!(
            "the statement is not zero where it stores nothing, and loops over its {} levels visit only what it stores",
            op.format
        ));
    }
    if !is_factor(root, k, operands) && !partners_merge {
        // Loops over its derived variables visit its entries only: a term
        // without it would be summed once per diagonal, or skipped in
        // blocks it does not store.
        return Some("the statement adds terms that do not read it".into());
    }
    // An output split into the same blocks is assembled block by block
    // beside it: its padding zeros fill blocks the output stores anyway.
    let output_alike = !has_own && output.levels() == op.format.levels() && output_vars == op.vars.as_slice();
    if !output.is_dense() && !output_alike && !takes_pattern(k, operands, (output, output_vars), root, false) {
        return Some(format!(
            "the output is sparse, and the zeros {} stores as padding would become stored entries of it",
            op.format
        ));
    }
    if nested_sums {
        return Some("structured levels are iterated natively in statements whose sums are all outermost".into());
    }
    // A tensor sharing its modes inside a sum or difference (`B * (C - D)`)
    // would merge with its levels in more than one lattice point.
    let shares = |o: &Operand| o.vars.iter().any(|v| op.vars.contains(v));
    if let Some(other) = operands
        .iter()
        .enumerate()
        .find(|(j, o)| *j != k && shares(o) && !is_factor(root, *j, operands) && !merged_alike(o))
    {
        return Some(format!(
            "{} meets it inside a sum or difference, which loops over {}'s levels cannot merge",
            other.1.name, op.name
        ));
    }
    let distinct: BTreeSet<&LoopVar> = op.vars.iter().collect();
    if distinct.len() != op.vars.len() {
        return Some("one variable indexes two of its modes".into());
    }
    // Loops over a diagonal or an own variable run outside the statement
    // variables' loops: another tensor walking one of those would be walked
    // again for every diagonal or slot.
    let outside_modes = level_vars
        .iter()
        .any(|v| matches!(v.relation(), Some(Relation::Own { .. } | Relation::Diagonal { .. })));
    let derived: Vec<&LoopVar> = op
        .vars
        .iter()
        .filter(|v| {
            outside_modes
                || level_vars
                    .iter()
                    .any(|lv| matches!(lv.relation(), Some(Relation::Blocks { of, .. }) if of.as_ref() == *v))
        })
        .collect();
    let others: Vec<Operand> = operands.iter().filter(|o| !merged_alike(o)).cloned().collect();
    walker_beside(op, &others, &derived).map(|(other, level, v)| {
        format!(
            "{other} walks {v} through its {level} level, which loops over {}'s {} levels cannot follow",
            op.name, op.format
        )
    })
}

/// The first other operand that walks one of `vars` (through a level that
/// cannot locate) rather than locating it: its name, the level's name and
/// the variable.
fn walker_beside(op: &Operand, operands: &[Operand], vars: &[&LoopVar]) -> Option<(String, &'static str, LoopVar)> {
    operands.iter().filter(|o| o.id != op.id).find_map(|other| {
        other
            .format
            .levels()
            .iter()
            .zip(other.level_vars())
            .find(|(l, v)| vars.contains(&v) && !l.level.capabilities().locate)
            .map(|(l, v)| (other.name.clone(), l.level.name(), v))
    })
}

/// Why operand `k`, stored as given (unordered COO), cannot be walked as it
/// is, if it cannot. Its coordinates come in no order, so no loop may merge
/// it with another tensor or append to a sparse output: it must be walked
/// alone, into a dense output, the others locating its modes.
fn unordered_problem(
    k: usize,
    operands: &[Operand],
    output: &Format,
    root: &CinExpr,
    nested_sums: bool,
) -> Option<String> {
    let op = &operands[k];
    if !output.is_dense() {
        return Some("its entries come in no order, and a sparse output is assembled in order".into());
    }
    if nested_sums || !is_factor(root, k, operands) {
        return Some("its entries come in no order, and the statement merges it with other terms".into());
    }
    let vars: Vec<&LoopVar> = op.vars.iter().collect();
    walker_beside(op, operands, &vars).map(|(other, level, v)| {
        format!("its entries come in no order, and {other} walks {v} through its {level} level beside it")
    })
}

/// The per-mode format an unsupported format is converted to: dense stays
/// dense, matrices become CSR, others CSF, in natural mode order.
fn natural_per_mode(format: &Format) -> Format {
    let order = format.order();
    if format.levels().iter().all(|l| l.level.kind == LevelKind::Dense) {
        return Format::dense(order);
    }
    match order {
        2 => Format::csr(),
        1 => Format::sparse_vector(),
        _ => Format::csf(order),
    }
}

/// The same level formats with modes reordered to follow `order` (a split
/// variable where its place in a block is: both its loops bind it).
fn reordered(op: &Operand, order: &[LoopVar], provenance: &Provenance) -> Format {
    let mut modes: Vec<usize> = (0..op.vars.len()).collect();
    modes.sort_by_key(|&m| {
        provenance
            .expand(&op.vars[m])
            .last()
            .and_then(|v| order.iter().position(|o| o == v))
    });
    let kinds: Vec<LevelFormat> = op.format.levels().iter().map(|l| l.level).collect();
    Format::from_levels(&kinds, &modes).unwrap_or_else(|_| Format::csf_ordered(&modes))
}

/// Levels that cannot locate need every variable above them bound first.
fn hard_edges(op: &Operand) -> Edges {
    let vars = op.level_vars();
    let mut edges = Vec::new();
    for (k, l) in op.format.levels().iter().enumerate() {
        if !l.level.capabilities().locate {
            for above in &vars[..k] {
                edges.push((above.clone(), vars[k].clone()));
            }
        }
    }
    edges
}

/// The operand whose pattern a sparse output takes
/// ([`OutputAssembly::OnPattern`]): one whose fibres a schedule cuts into
/// blocks (`pos` within a fibre, split), stored as the output is (dense
/// or compressed levels, over the output's variables in order) and bound
/// as given. The blocks' checks make the statement zero
/// wherever the operand is.
fn pattern_source(provenance: &Provenance, operands: &[Operand], output: &Operand) -> Option<usize> {
    let space = provenance
        .positions()
        .iter()
        .find(|s| s.within_fibre() && s.blocks(provenance).is_some())?;
    let op = &operands[space.operand];
    let levels = op.format.levels();
    let shaped = matches!(levels[0].level.kind, LevelKind::Dense | LevelKind::Compressed)
        && levels
            .iter()
            .all(|l| l.level.unique && (l.level.kind == LevelKind::Compressed || l.level.full));
    (shaped
        && op.converted_from.is_none()
        && op.fill == 0.0
        && levels == output.format.levels()
        && op.level_vars() == output.level_vars())
    .then_some(space.operand)
}

/// Whether a sparse output takes operand `k`'s pattern
/// ([`OutputAssembly::OnPattern`]): `k` is stored as the output is, over
/// the output's variables in order, bound as given, and a factor of a
/// statement that is 0 wherever `k` is 0 or absent, so that the output
/// stores what `k` stores and its values are written in place at `k`'s
/// positions, with no assembly.
/// - A structured `k` (`B(i,j) = 2 * A(i,j)` in DIA) is iterated by its
///   own levels, which visit each of its positions once; its padding
///   zeros stay zeros.
/// - A per-mode `k` needs no schedule (a schedule's blocks of positions
///   have a rule of their own), a dense or compressed first level (rows
///   a chunk can start at: CSR's, DCSR's), unique ordered levels, and
///   every other operand locating the variables `k` stores, so that the
///   loops visit each of `k`'s entries once and nothing else (SDDMM's
///   `A(i,j) * U(i,k) * V(j,k)`, scaling, a mask of a dense tensor).
fn takes_pattern(
    k: usize,
    operands: &[Operand],
    (output, output_vars): (&Format, &[LoopVar]),
    root: &CinExpr,
    scheduled: bool,
) -> bool {
    let op = &operands[k];
    let levels = op.format.levels();
    let fills = crate::lattice::Fills {
        operand: &|a| operands.get(a).map_or(0.0, |o| o.fill),
        temp: &|_| None,
    };
    let shared = op.fill == 0.0
        && stored_as_output(op, output, output_vars)
        && is_factor(root, k, operands)
        && crate::lattice::fill(root, &fills) == Some(0.0);
    if !shared {
        return false;
    }
    if !op.format.is_per_mode() {
        // Another tensor split alike is merged with it level by level: the
        // result is their intersection, appended as merged, rather than
        // every block of `k` stored with zeros where the other has none.
        let level_vars = op.level_vars();
        return !operands
            .iter()
            .enumerate()
            .any(|(j, other)| j != k && other.level_vars() == level_vars);
    }
    let others_locate = operands.iter().enumerate().all(|(j, other)| {
        j == k
            || other
                .format
                .levels()
                .iter()
                .zip(other.level_vars())
                .all(|(l, v)| !op.vars.contains(&v) || l.level.capabilities().locate)
    });
    !scheduled
        && !levels.is_empty()
        && matches!(levels[0].level.kind, LevelKind::Dense | LevelKind::Compressed)
        && levels.iter().all(|l| l.level.unique && l.level.ordered)
        && others_locate
}

/// Whether operand `op` stores its levels as an output of `format` over
/// `vars` (in mode order) does: the same levels over the same variables,
/// level by level. Per-mode formats may store their modes in another
/// order: `C(j,i) = 2 * A(i,j)` into CSR takes the pattern of A converted
/// to CSC, whose levels are C's.
fn stored_as_output(op: &Operand, format: &Format, vars: &[LoopVar]) -> bool {
    if op.format.levels() == format.levels() && op.vars == vars {
        return true;
    }
    let (Some(order), true) = (format.mode_order(), op.format.is_per_mode()) else {
        return false;
    };
    let output_level_vars: Vec<LoopVar> = order.iter().map(|&m| vars[m].clone()).collect();
    op.format.levels().len() == format.levels().len()
        && op
            .format
            .levels()
            .iter()
            .zip(format.levels())
            .all(|(a, b)| a.level == b.level)
        && op.level_vars() == output_level_vars
}

/// The storage order of a tensor, as soft edges.
fn consecutive_edges(op: &Operand) -> Edges {
    let vars = op.level_vars();
    vars.windows(2).map(|w| (w[0].clone(), w[1].clone())).collect()
}

struct ChainBuilder<'a> {
    temps: &'a [Temp],
    order: &'a [LoopVar],
    provenance: &'a Provenance,
}

impl ChainBuilder<'_> {
    /// Builds `forall chain[d..]` around `leaf_expr` assigned to the output,
    /// placing the temps of this scope as early as their free variables
    /// allow, the workspace at depth `workspace.0`, and the reduction of
    /// trailing summed loops at depth `reduce_from`.
    #[allow(clippy::too_many_arguments)]
    fn build(
        &self,
        chain: &[LoopVar],
        d: usize,
        temps: &[TempId],
        outer: &BTreeSet<LoopVar>,
        leaf_expr: CinExpr,
        workspace: Option<(usize, Vec<LoopVar>)>,
        reduce_from: Option<(usize, Reduction)>,
        next_temp: &mut usize,
    ) -> Cin {
        let bound: BTreeSet<LoopVar> = outer.iter().cloned().chain(chain[..d].iter().cloned()).collect();
        // A variable is bound once the loops it is recovered from are.
        let placement = |t: &TempId| -> usize {
            let free = &self.temps[t.0].enclosing();
            (0..=chain.len())
                .find(|&depth| {
                    free.iter().all(|v| {
                        outer.contains(v)
                            || self
                                .provenance
                                .expand(v)
                                .iter()
                                .all(|p| outer.contains(p) || chain[..depth].contains(p))
                    })
                })
                .unwrap_or(chain.len())
        };
        let here: Vec<TempId> = temps.iter().copied().filter(|t| placement(t) == d).collect();
        let later: Vec<TempId> = temps.iter().copied().filter(|t| placement(t) > d).collect();

        let inner = if let Some((_, op)) = reduce_from.filter(|&(r, _)| r == d) {
            // out += r where r = forall chain[d..]: r += expr
            let reduction = TempId(*next_temp);
            *next_temp += 1;
            let producer = self.build(&chain[d..], 0, &later, &bound, leaf_expr, None, None, next_temp);
            let producer = retarget(producer, Target::Temp(reduction));
            Cin::Where {
                temp: reduction,
                reduction: op,
                index: None,
                producer: Box::new(producer),
                consumer: Box::new(Cin::Assign {
                    target: Target::Output,
                    expr: CinExpr::Temp(reduction),
                }),
            }
        } else if d == chain.len() {
            Cin::Assign {
                target: Target::Output,
                expr: leaf_expr,
            }
        } else {
            Cin::Forall {
                var: chain[d].clone(),
                body: Box::new(self.build(
                    chain,
                    d + 1,
                    &later,
                    outer,
                    leaf_expr,
                    workspace.clone(),
                    reduce_from,
                    next_temp,
                )),
            }
        };
        let mut stmt = inner;
        for t in here.iter().rev() {
            let temp = &self.temps[t.0];
            let mut vars = temp.loops();
            vars.sort_by_key(|v| self.order.iter().position(|o| o == v));
            // A scalar sum collects its loops in a partial of its own, which
            // the block ops for sums match; other reductions, and a vector's
            // components, combine into the temporary directly.
            let partial = temp.index.is_none() && temp.reduction == Reduction::Sum && !vars.is_empty();
            // A vector's sums inside its index's loop collect each
            // component in a partial of their own likewise.
            let after_index = temp
                .index
                .as_ref()
                .and_then(|index| vars.iter().position(|v| v == index))
                .map(|p| p + 1)
                .filter(|&p| p < vars.len() && temp.reduction == Reduction::Sum);
            let producer = self.build(
                &vars,
                0,
                &temp.children,
                &bound,
                temp.body.clone(),
                None,
                match after_index {
                    Some(p) => Some((p, temp.reduction)),
                    None => partial.then_some((0, temp.reduction)),
                },
                next_temp,
            );
            let target = match &temp.index {
                Some(index) => Target::TempAt(*t, index.clone()),
                None => Target::Temp(*t),
            };
            let producer = if partial {
                // The reduction built by the partial ends in `out += r`: make it `t += r`.
                retarget_consumer(producer, target)
            } else {
                retarget(producer, target)
            };
            stmt = Cin::Where {
                temp: *t,
                reduction: temp.reduction,
                index: temp.index.clone(),
                producer: Box::new(producer),
                consumer: Box::new(stmt),
            };
        }
        match workspace {
            Some((q, vars)) if q == d => Cin::Workspace {
                vars,
                body: Box::new(stmt),
            },
            _ => stmt,
        }
    }
}

/// Makes every output assignment of `cin` write `target` instead.
fn retarget(cin: Cin, target: Target) -> Cin {
    match cin {
        Cin::Assign {
            target: Target::Output,
            expr,
        } => Cin::Assign { target, expr },
        Cin::Assign { .. } => cin,
        Cin::Forall { var, body } => Cin::Forall {
            var,
            body: Box::new(retarget(*body, target)),
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
            producer,
            consumer: Box::new(retarget(*consumer, target)),
        },
        Cin::Workspace { vars, body } => Cin::Workspace {
            vars,
            body: Box::new(retarget(*body, target)),
        },
        Cin::Sequence(parts) => Cin::Sequence(parts.into_iter().map(|p| retarget(p, target.clone())).collect()),
    }
}

/// Like [`retarget`], for a reduction whose final `out += r` moves to `target`.
fn retarget_consumer(cin: Cin, target: Target) -> Cin {
    retarget(cin, target)
}
