//! Chunks of the outermost loop: whether a statement can run in parallel,
//! and the code that keeps one run inside its chunk.
//!
//! A chunk is a range of the outermost loop's coordinates. Every run of the
//! program reads its range with [`Op::Chunk`] (the whole dimension when the
//! run is not split), and the loop over that variable starts and stops
//! there: a dense level's positions are its coordinates, an ordered
//! compressed level is searched for the range's first and last positions.
//! The runtime chooses the ranges ([`crate::runtime`]); the program only
//! obeys them, so every tier runs chunks the same way.

use tessera_formats::{Cmp, IntOp, Level, LevelKind, LevelRef};

use super::{Emitter, IterInfo};
use crate::bytecode::{ChunkOutput, ChunkRows, Chunking, IReg, Op};
use crate::cin::{Blocking, Cin, CinExpr, LoopVar, Lowered, OutputAssembly, Relation, TempId};
use crate::notation::BinaryOp;
use crate::notation::Reduction;

/// The outermost loop variable and the registers of the run's range of it.
#[derive(Clone, Debug)]
pub(super) struct ChunkRange {
    pub var: LoopVar,
    pub begin: IReg,
    pub end: IReg,
}

/// How `lowered` splits into chunks, or why it runs whole.
pub(crate) fn chunking(lowered: &Lowered) -> std::result::Result<(LoopVar, Chunking), String> {
    let var = outer_variable(&lowered.cin)?;
    // A chunk of blocks is a chunk of the rows they hold; a chunk of a
    // fused pair is a range of its pairs; a diagonal or a level's own
    // variable (a slot) is not split yet.
    let rows_of_blocks = match var.relation() {
        None | Some(Relation::Fused { .. }) => None,
        Some(Relation::Blocks { of, .. }) => Some(of.as_ref()),
        Some(_) => {
            return Err(format!(
                "its outer loop runs over {var}, a level's diagonal or own variable, and chunks of those are not supported yet"
            ))
        }
    };
    if workspace_holds(&lowered.cin, var) {
        return Err(format!("its workspace spans {var}, the outer loop"));
    }
    let positions = rows_of_blocks.and_then(|of| match of.relation() {
        Some(Relation::Positions { operand, level }) => Some(LevelRef::new(*operand, *level)),
        _ => None,
    });
    let mut drivers = Vec::new();
    for (k, op) in lowered.operands.iter().enumerate() {
        let vars = op.level_vars();
        if vars.first() != Some(var) {
            continue;
        }
        let level = op.format.levels()[0].level;
        let seekable = level.kind == LevelKind::Dense || (level.kind == LevelKind::Compressed && level.ordered);
        if !seekable {
            return Err(format!(
                "{}'s first level ({}) holds its coordinates in no order",
                op.name,
                level.name()
            ));
        }
        drivers.push(LevelRef::new(k, 0));
    }
    let out = &lowered.output;
    let first = out.level_vars().first().cloned();
    // A fused pair leads when the output's first levels are its parts, in
    // order: its coordinates are then the output's rows.
    let fused_leads = match var.relation() {
        Some(Relation::Fused { outer, inner }) => out.level_vars().starts_with(&[(**outer).clone(), (**inner).clone()]),
        _ => false,
    };
    let leads = fused_leads || first.as_ref() == Some(var) || (first.is_some() && first.as_ref() == rows_of_blocks);
    let output = match lowered.assembly {
        OutputAssembly::Dense if leads => ChunkOutput::DenseRows,
        OutputAssembly::Dense => ChunkOutput::DensePartials,
        // A chunk's positions start at its first row's when rows are a
        // dense or compressed level over the output's first mode (not a
        // block of it).
        OutputAssembly::OnPattern { operand }
            if leads
                && lowered.operands[operand].format.is_per_mode()
                && matches!(
                    lowered.operands[operand].format.levels()[0].level.kind,
                    LevelKind::Dense | LevelKind::Compressed
                ) =>
        {
            ChunkOutput::PatternRows {
                operand: operand as u32,
            }
        }
        OutputAssembly::OnPattern { .. } => ChunkOutput::DensePartials,
        OutputAssembly::Append if positions.is_some() => {
            // Parts share at most the fibre of a row, never an entry: the
            // output's first levels are the positions' variables.
            let space = lowered
                .provenance
                .positions()
                .iter()
                .find(|s| Some(&s.var) == rows_of_blocks)
                .expect("a position space");
            let joinable = out.level_vars().starts_with(&space.covers) && tessera_formats::parts::joinable(&out.format);
            if !joinable {
                return Err(format!(
                    "its blocks of {}'s positions can share entries of the output {} ({}), whose first levels are not over ({}); use a dense output",
                    lowered.operands[space.operand].name,
                    out.name,
                    out.format,
                    space.covers.iter().map(LoopVar::name).collect::<Vec<_>>().join(", ")
                ));
            }
            ChunkOutput::SparseParts
        }
        OutputAssembly::Append => {
            if !leads {
                return Err(format!("the output {}'s first level is not {var}", out.name));
            }
            if !tessera_formats::parts::joinable(&out.format) {
                return Err(format!(
                    "the output {} ({}) has levels whose parts cannot be joined",
                    out.name, out.format
                ));
            }
            ChunkOutput::SparseParts
        }
        OutputAssembly::Packed => return Err(format!("the output {} is packed from a workspace", out.name)),
    };
    let index = lowered.order.iter().position(|v| v == var).expect("ordered") as u32;
    // The output's rows are the chunked variable's coordinates, unless the
    // variable is a block of the output's first mode (a split of it).
    let rows_are_blocks = first.as_ref() != Some(var);
    let rows = match var.relation() {
        Some(Relation::Blocks { of, block }) if rows_are_blocks => ChunkRows {
            block: match block {
                Blocking::Size(b) => *b as u32,
                Blocking::Parts(_) => 0,
            },
            block_at: match block {
                Blocking::Size(_) => None,
                Blocking::Parts(_) => lowered.block_size_dimension(of),
            },
            cut_at: lowered.dimension(of),
            drivers: row_drivers(lowered, of),
        },
        _ => ChunkRows {
            block: 1,
            block_at: None,
            cut_at: None,
            drivers: Vec::new(),
        },
    };
    Ok((
        var.clone(),
        Chunking {
            var: index,
            drivers,
            output,
            rows,
            join_bound: false,
            positions,
        },
    ))
}

/// The variable of the loop `cin`'s chunks cut, or why it has none.
fn outer_variable(cin: &Cin) -> std::result::Result<&LoopVar, String> {
    match cin {
        Cin::Forall { var, .. } => Ok(var),
        // A full reduction: each chunk's run adds its part of the sum into
        // its partial output, which is right when the output is the sum
        // times factors that do not depend on it.
        Cin::Where {
            temp,
            reduction: Reduction::Sum,
            index: None,
            producer,
            consumer,
        } => match (producer.as_ref(), consumer.as_ref()) {
            (Cin::Forall { var, .. }, Cin::Assign { expr, .. }) if scales(expr, *temp) => Ok(var),
            _ => Err("the statement's result is not a sum over its outer loop".into()),
        },
        Cin::Where { index: Some(index), .. } => Err(format!(
            "a vector over {index} is precomputed before the outer loop, which chunks would each compute again"
        )),
        // Terms computed one after another: a chunk runs each term's loops
        // over its own range, when every term's outer loop is the same.
        Cin::Sequence(parts) => {
            let vars = parts
                .iter()
                .map(outer_variable)
                .collect::<std::result::Result<Vec<_>, _>>()?;
            match vars.split_first() {
                Some((first, rest)) if rest.iter().all(|v| v == first) => Ok(first),
                _ => Err("its sum is computed term by term, and the terms' outer loops differ".into()),
            }
        }
        _ => Err("the statement has no outer loop".into()),
    }
}

/// The dense first levels whose coordinates are `rows`, a variable split
/// into the blocks the outer loop runs over.
fn row_drivers(lowered: &Lowered, rows: &LoopVar) -> Vec<LevelRef> {
    lowered
        .operands
        .iter()
        .enumerate()
        .filter(|(_, op)| op.level_vars().first() == Some(rows) && op.format.levels()[0].level.kind == LevelKind::Dense)
        .map(|(k, _)| LevelRef::new(k, 0))
        .collect()
}

/// Whether `expr` is `temp` times factors without it: a sum of parts in
/// `temp` gives the sum of the parts' results.
fn scales(expr: &CinExpr, temp: TempId) -> bool {
    let free = |e: &CinExpr| !mentions(e, temp);
    match expr {
        CinExpr::Temp(t) => *t == temp,
        CinExpr::Neg(e) => scales(e, temp),
        CinExpr::Binary {
            op: BinaryOp::Mul,
            lhs,
            rhs,
        } => (scales(lhs, temp) && free(rhs)) || (free(lhs) && scales(rhs, temp)),
        CinExpr::Binary {
            op: BinaryOp::Div,
            lhs,
            rhs,
        } => scales(lhs, temp) && free(rhs),
        _ => false,
    }
}

fn mentions(expr: &CinExpr, temp: TempId) -> bool {
    match expr {
        CinExpr::Temp(t) | CinExpr::TempAt(t, _) => *t == temp,
        CinExpr::Access(_) | CinExpr::Literal(_) => false,
        CinExpr::Neg(e) => mentions(e, temp),
        CinExpr::Binary { lhs, rhs, .. } => mentions(lhs, temp) || mentions(rhs, temp),
        CinExpr::Call { args, .. } => args.iter().any(|a| mentions(a, temp)),
        CinExpr::Reduced { body, .. } => mentions(body, temp),
    }
}

/// Whether a workspace of `cin` is indexed by `var`.
fn workspace_holds(cin: &Cin, var: &LoopVar) -> bool {
    cin.any(&|c| matches!(c, Cin::Workspace { vars, .. } if vars.contains(var)))
}

impl Emitter<'_> {
    /// The run's range of `var` when `var` is the chunked loop.
    pub(super) fn chunk_of(&self, var: &LoopVar) -> Option<(IReg, IReg)> {
        self.chunk.as_ref().filter(|c| c.var == *var).map(|c| (c.begin, c.end))
    }

    /// Narrows the position bounds of a first-level iterator of the chunked
    /// loop to the positions of the run's coordinates.
    pub(super) fn clamp_to_chunk(&mut self, it: &IterInfo, begin: IReg, end: IReg) {
        let Some(chunk) = self.chunk.clone() else {
            return;
        };
        if it.level != 0 || self.states[it.operand].level_vars.first() != Some(&chunk.var) {
            return;
        }
        if it.format.kind == LevelKind::Dense {
            // Below the root, a dense level's positions are its coordinates.
            self.int_op(IntOp::Max, begin, begin, chunk.begin);
            self.int_op(IntOp::Min, end, end, chunk.end);
            return;
        }
        let level = LevelRef::new(it.operand, 0);
        let first = self.seek(level, begin, end, chunk.begin);
        let last = self.seek(level, first, end, chunk.end);
        self.ops.push(Op::IMove { dst: begin, src: first });
        self.ops.push(Op::IMove { dst: end, src: last });
    }

    /// The first position in `begin..end` of an ordered level whose
    /// coordinate is at least `target` (`end` when none is): a binary
    /// search, run once per chunk.
    fn seek(&mut self, level: LevelRef, begin: IReg, end: IReg, target: IReg) -> IReg {
        let (low, high) = (self.ireg(), self.ireg());
        self.ops.push(Op::IMove { dst: low, src: begin });
        self.ops.push(Op::IMove { dst: high, src: end });
        self.first_passing(low, high, &mut |e, mid| {
            let (coord, found) = (e.ireg(), e.breg());
            e.ops.push(Op::PosAccess {
                level,
                pos: mid,
                ancestors: Default::default(),
                coord,
                found,
            });
            let reached = e.breg();
            e.ops.push(Op::ICmp {
                op: Cmp::Ge,
                dst: reached,
                a: coord,
                b: target,
            });
            reached
        })
    }
}
