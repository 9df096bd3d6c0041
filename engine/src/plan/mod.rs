//! Planning and emission: concrete index notation → bytecode.
//!
//! Walks the [`Cin`] tree. At each `forall` it decides which levels of which
//! operands the loop handles (an operand's next level whose variable is the
//! loop's is an *iterator*; deeper levels whose variables are already bound
//! are *located*), builds the loop's merge lattice, chooses how to run it —
//! the universe (every coordinate, locating and matching the rest), one
//! driving iterator, or a k-way merge — and emits the loop (`loops`, or
//! one block op when the loop has a known kernel shape: `blocks`).
//! Assignments compute their value with absent operands as zero and write
//! only where the expression is structurally nonzero (`expr`). Flags known
//! to hold or not at emission time are folded, so code for operands known to
//! be present reads no flags. A readable plan is recorded on the way.

mod block_rows;
mod blocks;
mod chunks;
mod expr;
mod loops;
mod position_loops;
mod positions;
mod runs;
mod search;
mod state;
mod structured;
mod values;
mod windows;

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

use tessera_formats::{Level, LevelFormat, LevelKind};

use crate::bytecode::{BReg, FReg, IReg, Op, Program, Regs};
use crate::cin::{Cin, CinExpr, LoopVar, Lowered, OutputAssembly, Relation, Target, TempId};
use crate::error::{EngineError, Result};
use crate::lattice::{Fills, Lattice, LatticePrinter, MAX_POINTS};
use crate::notation::Reduction;
use state::OperandState;

/// What [`Emitter::jump_unless`] returns when it emits no jump.
const NO_JUMP: usize = usize::MAX;

/// The emitted program and the plan that explains it.
pub struct Planned {
    pub program: Program,
    pub plan: String,
    /// The output is sparse but gets a value at every coordinate (a sum
    /// with a constant or a dense operand): it stores as many entries as
    /// its shape has components.
    pub fills_in: bool,
}

/// One iterator of a loop: a level of an operand iterated by that loop.
#[derive(Clone, Debug)]
struct IterInfo {
    operand: usize,
    level: usize,
    format: LevelFormat,
}

impl IterInfo {
    fn locatable(&self) -> bool {
        self.format.capabilities().locate
    }
    fn full(&self) -> bool {
        self.format.kind == LevelKind::Dense
    }
}

/// Emits a lowered statement, or refuses one whose loop would merge its
/// iterators in more than [`MAX_POINTS`] lattice points.
pub(crate) use chunks::chunking;

pub fn emit(lowered: &Lowered) -> Result<Planned> {
    let mut e = Emitter::new(lowered);
    let chunking = chunks::chunking(lowered);
    if let Ok((var, _)) = &chunking {
        let (begin, end) = (e.ireg(), e.ireg());
        e.ops.push(Op::Chunk { begin, end });
        e.chunk = Some(chunks::ChunkRange {
            var: var.clone(),
            begin,
            end,
        });
    }
    let cin = lowered.cin.clone();
    e.stmt(&cin, 0);
    if let Some(reason) = e.refused {
        return Err(EngineError::Unsupported(reason));
    }
    // Only updates repeated by an outer loop over no output variable (a
    // DIA matrix's diagonals) add again and again to the same output.
    let outer_loops: Vec<&LoopVar> = match &lowered.cin {
        Cin::Sequence(parts) => parts.iter().filter_map(outer_loop).collect(),
        _ => lowered.order.first().into_iter().collect(),
    };
    let overlapping = outer_loops.iter().any(|v| !lowered.output.vars.contains(v));
    let deferred = overlapping && !e.strided_per_block && runs::defer_strided_updates(&mut e.ops);
    if deferred {
        e.ops.push(Op::StridedFlush);
    }
    e.ops.push(Op::Halt);
    let mut chunking = chunking;
    if let Ok((_, c)) = &mut chunking {
        c.join_bound = c.output == crate::bytecode::ChunkOutput::SparseParts
            && e.ops.iter().any(|op| match op {
                Op::RowsMerge { .. } => true,
                Op::MergeRows { block, .. } => !block.is_empty(),
                _ => false,
            });
    }
    let program = Program {
        ops: e.ops,
        int_regs: e.ni as usize,
        float_regs: e.nf as usize,
        bool_regs: e.nb as usize,
        inputs: lowered.operands.len(),
        vars: lowered.order.iter().map(|v| v.name().to_string()).collect(),
        chunking: chunking.as_ref().ok().map(|(_, c)| c.clone()),
        temps: e.vector_temps,
        value_type: lowered.value_type,
    };
    let mut plan = String::new();
    let names: Vec<&str> = lowered.order.iter().map(LoopVar::name).collect();
    let _ = writeln!(plan, "loop order: {}", names.join(", "));
    for v in &lowered.order {
        if let Some(relation) = v.relation() {
            let _ = writeln!(plan, "derived: {v} = {}", describe(relation, lowered));
        }
    }
    for note in &lowered.notes {
        let _ = writeln!(plan, "note: {note}");
    }
    let _ = writeln!(
        plan,
        "output {} ({}): {}",
        lowered.output.name,
        lowered.output.format,
        match lowered.assembly {
            OutputAssembly::Dense => "dense, accumulated in place".to_string(),
            OutputAssembly::Append if lowered.output.format.levels().iter().all(|l| l.level.ordered) => {
                "assembled by append in order".to_string()
            }
            OutputAssembly::Append => "assembled by append, each fibre's entries together".to_string(),
            OutputAssembly::Packed => "packed from a workspace".to_string(),
            OutputAssembly::OnPattern { operand } => format!(
                "{}'s pattern, values accumulated in place at its positions",
                lowered.operands[operand].name
            ),
        }
    );
    if e.fills_in {
        let _ = writeln!(
            plan,
            "note: output {} fills in: every coordinate gets a value (a constant or a dense operand is added), \
             so it stores every component of its shape; a dense format stores them in less memory",
            lowered.output.name
        );
    }
    match &chunking {
        Ok((var, c)) => {
            let parts = match c.output {
                crate::bytecode::ChunkOutput::DenseRows => "each writes its own rows of the output",
                crate::bytecode::ChunkOutput::PatternRows { .. } => "each writes the values of its own rows' positions",
                crate::bytecode::ChunkOutput::DensePartials => {
                    "each adds into its own partial output, and the partials are added up in chunk order"
                }
                crate::bytecode::ChunkOutput::SparseParts if c.positions.is_some() => {
                    "each assembles its own part of the output, and the parts are joined in order (a row two parts \
                     share is joined into one)"
                }
                crate::bytecode::ChunkOutput::SparseParts => {
                    "each assembles its own part of the output, and the parts are joined in order"
                }
            };
            let work = if c.positions.is_some() {
                "the same number of blocks of positions"
            } else {
                "about the same work (stored entries below each coordinate)"
            };
            let threads = if lowered.every_core {
                "the schedule asks for every core at any size".to_string()
            } else if c.join_bound {
                "by default one thread: the rows' merge writes about as much as it reads, and joining the parts \
                 copies it all again (--threads sets more)"
                    .to_string()
            } else {
                format!(
                    "by default runs reading {} stored values or more use every core, smaller ones one thread",
                    crate::runtime::PARALLEL_FROM
                )
            };
            let _ = writeln!(
                plan,
                "parallel: the loop over {var} splits into chunks of {work}; {parts}; results are the same bits for \
                 any number of threads; {threads}"
            );
        }
        Err(reason) if deferred => {
            let _ = writeln!(
                plan,
                "parallel: the loops run whole ({reason}); the deferred strided updates then run a tile of the \
                 output per thread; results are the same bits for any number of threads; by default runs reading \
                 {} stored values or more use every core, smaller ones one thread",
                crate::runtime::PARALLEL_FROM
            );
        }
        Err(reason) => {
            let _ = writeln!(plan, "parallel: runs on one thread: {reason}");
        }
    }
    plan.push_str(&e.plan);
    if deferred {
        let _ = writeln!(
            plan,
            "the strided updates run together after the loops, a tile of the output at a time (each component \
             gets their products in the same order)"
        );
    }
    Ok(Planned {
        program,
        plan,
        fills_in: e.fills_in,
    })
}

/// The variable of `cin`'s outermost loop, if it starts with one.
fn outer_loop(cin: &Cin) -> Option<&LoopVar> {
    match cin {
        Cin::Forall { var, .. } => Some(var),
        _ => None,
    }
}

/// What a derived variable is, for the plan.
fn describe(relation: &Relation, lowered: &Lowered) -> String {
    match relation {
        Relation::Own { operand, level } => {
            let op = &lowered.operands[*operand];
            format!(
                "the coordinate of {}'s level {level} ({}), which stores no mode; summed",
                op.name,
                op.format.level(*level).name()
            )
        }
        Relation::Diagonal { row, col } => {
            format!("{col} - {row} + |{row}| - 1, the diagonal of ({row}, {col}) its operands store; summed")
        }
        Relation::Blocks { of, block } => {
            let (outer, inner, _) = lowered.provenance.recovery(of).expect("a split variable");
            let cut = if lowered.provenance.is_scheduled(of) {
                ", the last block cut at its dimension"
            } else {
                ""
            };
            format!("{of} / {block}, the block of {of} ({of} = {outer}·{block} + {inner}{cut})")
        }
        Relation::WithinBlock { of, block } => format!("{of} % {block}, the place of {of} in its block"),
        Relation::Fused { outer, inner } => {
            format!("{outer}·|{inner}| + {inner}, a pair fused: {outer} = f / |{inner}|, {inner} = f % |{inner}|")
        }
        Relation::Positions { operand, level } => {
            let op = &lowered.operands[*operand];
            format!(
                "a position of {}'s level {level} ({})",
                op.name,
                op.format.level(*level).name()
            )
        }
    }
}

struct Emitter<'a> {
    lowered: &'a Lowered,
    ops: Vec<Op>,
    ni: u32,
    nf: u32,
    nb: u32,
    states: Vec<OperandState>,
    var_regs: HashMap<LoopVar, IReg>,
    temps: HashMap<TempId, TempState>,
    /// The variable each vector temporary is indexed by ([`Program::temps`]).
    vector_temps: Vec<u32>,
    workspace: Option<Vec<LoopVar>>,
    true_reg: BReg,
    /// A flag known not to hold: operands absent in a merge case.
    false_reg: BReg,
    /// How many copies of the code being emitted there are: each merge by
    /// cases emits its body once per case.
    copies: usize,
    plan: String,
    /// Why the statement cannot be planned; emission stops once it is set.
    refused: Option<String>,
    /// A strided update covers one block of a blocked operand (BCSR's):
    /// updates that short are not deferred, as each deferred update costs
    /// a hand-over to the runtime ([`runs::defer_strided_updates`]).
    strided_per_block: bool,
    /// The enclosing loops that visit every coordinate of their variable.
    every_coordinate: Vec<LoopVar>,
    /// Whether a sparse output gets a value at every coordinate.
    fills_in: bool,
    /// The chunked loop and the registers of the run's range of it.
    chunk: Option<chunks::ChunkRange>,
    /// The block of an operand's positions the loops being emitted run in.
    window: Option<positions::PositionWindow>,
    /// Where the last block of positions' parents began, kept across
    /// blocks.
    position_hint: Option<IReg>,
    /// The first and end positions of the block of a fibre's positions the
    /// loops being emitted run in.
    fibre_block: Option<(IReg, IReg)>,
    /// The block of a split variable's coordinates the loop being emitted
    /// walks.
    coordinate_window: Option<windows::CoordinateWindow>,
}

/// A temporary's registers, how it combines, and its fill once its
/// producer is emitted ([`crate::lattice::fill`]).
#[derive(Clone, Copy, Debug)]
struct TempState {
    value: FReg,
    present: BReg,
    reduction: Reduction,
    fill: Option<f64>,
    /// A vector temporary's buffer ([`Op::TempLoad`]); its components are
    /// not tracked one by one, so `present` holds.
    vector: Option<u32>,
}

/// What one loop does with each iterator.
struct LoopShape {
    iterators: Vec<IterInfo>,
    lattice: Lattice,
    /// Iterators co-iterated (walked in order).
    walked: Vec<usize>,
    /// Iterators located at the loop's coordinate.
    located: Vec<usize>,
    universe: bool,
}

impl<'a> Emitter<'a> {
    fn new(lowered: &'a Lowered) -> Self {
        let mut e = Emitter {
            lowered,
            ops: Vec::new(),
            ni: 0,
            nf: 0,
            nb: 0,
            states: Vec::new(),
            var_regs: HashMap::new(),
            temps: HashMap::new(),
            vector_temps: Vec::new(),
            workspace: None,
            true_reg: 0,
            false_reg: 0,
            copies: 1,
            plan: String::new(),
            refused: None,
            strided_per_block: false,
            every_coordinate: Vec::new(),
            fills_in: false,
            chunk: None,
            window: None,
            position_hint: None,
            fibre_block: None,
            coordinate_window: None,
        };
        e.true_reg = e.breg();
        e.ops.push(Op::BConst {
            dst: e.true_reg,
            value: true,
        });
        e.false_reg = e.breg();
        e.ops.push(Op::BConst {
            dst: e.false_reg,
            value: false,
        });
        let zero = e.ireg();
        e.ops.push(Op::IConst { dst: zero, value: 0 });
        let mut states = Vec::new();
        for op in &lowered.operands {
            states.push(OperandState::new(op, e.true_reg, zero));
        }
        if lowered.assembly == OutputAssembly::Dense {
            states.push(OperandState::new(&lowered.output, e.true_reg, zero));
        }
        e.states = states;
        e
    }

    fn ireg(&mut self) -> IReg {
        self.ni += 1;
        self.ni - 1
    }
    fn freg(&mut self) -> FReg {
        self.nf += 1;
        self.nf - 1
    }
    fn breg(&mut self) -> BReg {
        self.nb += 1;
        self.nb - 1
    }
    fn iconst(&mut self, value: i64) -> IReg {
        let dst = self.ireg();
        self.ops.push(Op::IConst { dst, value });
        dst
    }
    /// A register that a guarded op writes: 0 when `guard` may fail and
    /// the op is skipped.
    fn zero_unless(&mut self, guard: BReg) -> IReg {
        if guard == self.true_reg {
            self.ireg()
        } else {
            self.iconst(0)
        }
    }
    fn label(&self) -> usize {
        self.ops.len()
    }
    /// Emits a jump whose target is patched later; returns its index. A
    /// condition known to hold emits nothing (and its patch does nothing).
    fn jump_unless(&mut self, cond: BReg) -> usize {
        if cond == self.true_reg {
            return NO_JUMP;
        }
        if cond == self.false_reg {
            self.ops.push(Op::Jump { to: usize::MAX });
            return self.ops.len() - 1;
        }
        self.ops.push(Op::JumpIfNot { cond, to: usize::MAX });
        self.ops.len() - 1
    }
    /// A jump, patched later, taken unless `a < b`: the exit of a loop
    /// that runs while `a < b`. Returns its index.
    fn exit_unless_lt(&mut self, a: IReg, b: IReg) -> usize {
        let more = self.compare(tessera_formats::Cmp::Lt, a, b);
        self.jump_unless(more)
    }
    /// `a op b` into a new flag.
    fn compare(&mut self, op: tessera_formats::Cmp, a: IReg, b: IReg) -> BReg {
        let dst = self.breg();
        self.ops.push(Op::ICmp { op, dst, a, b });
        dst
    }
    /// The registers of `vars`' coordinates, when loops outside bind each.
    fn bound_registers(&self, vars: &[LoopVar]) -> Option<Regs> {
        vars.iter().map(|v| self.var_regs.get(v).copied()).collect()
    }
    /// `a && b`, folding flags known to hold.
    fn and_flags(&mut self, a: BReg, b: BReg) -> BReg {
        if a == self.true_reg || b == self.false_reg {
            return b;
        }
        if b == self.true_reg || a == self.false_reg {
            return a;
        }
        let dst = self.breg();
        self.ops.push(Op::BAnd { dst, a, b });
        dst
    }
    fn patch(&mut self, at: usize) {
        if at == NO_JUMP {
            return;
        }
        let here = self.ops.len();
        match &mut self.ops[at] {
            Op::JumpIfNot { to, .. } | Op::JumpIf { to, .. } | Op::Jump { to } => *to = here,
            _ => unreachable!("only jumps are patched"),
        }
    }
    /// `v`'s place in the run's dimensions: the loops', then the split
    /// variables' (see the runtime).
    fn var_index(&self, v: &LoopVar) -> u32 {
        self.lowered.dimension(v).expect("every loop variable is ordered")
    }
    fn output_operand(&self) -> Option<usize> {
        (self.lowered.assembly == OutputAssembly::Dense).then_some(self.lowered.operands.len())
    }

    fn stmt(&mut self, cin: &Cin, depth: usize) {
        if self.refused.is_some() {
            return;
        }
        match cin {
            Cin::Forall { var, body } => self.forall(var, body, depth),
            Cin::Where {
                temp,
                reduction,
                index,
                producer,
                consumer,
            } => {
                let value = self.freg();
                self.ops.push(Op::FConst {
                    dst: value,
                    value: reduction.identity_for(self.lowered.value_type),
                });
                let (present, vector) = match index {
                    Some(index) => (self.true_reg, Some(self.vector_temp(index, value))),
                    None => {
                        let present = self.breg();
                        self.ops.push(Op::BConst {
                            dst: present,
                            value: false,
                        });
                        (present, None)
                    }
                };
                self.temps.insert(
                    *temp,
                    TempState {
                        value,
                        present,
                        reduction: *reduction,
                        fill: None,
                        vector,
                    },
                );
                let pad = "  ".repeat(depth);
                let at = index
                    .as_ref()
                    .map_or(String::new(), |v| format!("({v}), a vector over {v},"));
                match reduction {
                    Reduction::Sum => writeln!(self.plan, "{pad}where t{}{at} is computed by:", temp.0),
                    op => writeln!(self.plan, "{pad}where t{}{at} is the {op} computed by:", temp.0),
                }
                .ok();
                self.stmt(producer, depth + 1);
                let fill = self.fill_of(&CinExpr::Reduced {
                    op: *reduction,
                    body: Box::new(Self::effective(producer)),
                });
                self.temps.get_mut(temp).expect("inserted above").fill = fill;
                self.stmt(consumer, depth);
            }
            Cin::Workspace { vars, body } => {
                let pad = "  ".repeat(depth);
                let names: Vec<&str> = vars.iter().map(LoopVar::name).collect();
                let order = if crate::cin::workspace_unsorted(&self.lowered.output.format, vars.len()) {
                    "unsorted"
                } else {
                    "sorted"
                };
                let _ = writeln!(
                    self.plan,
                    "{pad}workspace over ({}), {order} and assembled into {} after:",
                    names.join(","),
                    self.lowered.output.name
                );
                let saved = self.workspace.replace(vars.clone());
                self.stmt(body, depth + 1);
                self.workspace = saved;
                let outside: Vec<LoopVar> = self
                    .lowered
                    .output
                    .vars
                    .iter()
                    .filter(|v| !vars.contains(v))
                    .cloned()
                    .collect();
                let prefix: Regs = outside
                    .iter()
                    .map(|v| {
                        self.coordinate_of(v)
                            .expect("the loops outside the workspace are bound")
                    })
                    .collect();
                let prefix = self.output_level_order(prefix, vars);
                self.ops.push(Op::WorkspaceFlush { prefix });
            }
            Cin::Assign { target, expr } => self.assign(target, expr),
            Cin::Sequence(parts) => {
                let pad = "  ".repeat(depth);
                for (k, part) in parts.iter().enumerate() {
                    let _ = writeln!(
                        self.plan,
                        "{pad}term {} of {}, added into {} by loops of its own:",
                        k + 1,
                        parts.len(),
                        self.lowered.output.name
                    );
                    self.stmt(part, depth + 1);
                }
            }
        }
    }

    /// The prefix coordinates in the output's level order.
    fn output_level_order(&mut self, prefix: Regs, ws: &[LoopVar]) -> Regs {
        if self.lowered.assembly == OutputAssembly::Packed {
            return prefix;
        }
        let outside: Vec<LoopVar> = self
            .lowered
            .output
            .level_vars()
            .into_iter()
            .filter(|v| !ws.contains(v))
            .collect();
        outside
            .iter()
            .map(|v| {
                self.coordinate_of(v)
                    .expect("the loops outside the workspace are bound")
            })
            .collect()
    }

    /// Operands read by `cin` (through any temporaries it computes).
    fn operands_in(cin: &Cin, out: &mut BTreeSet<usize>) {
        match cin {
            Cin::Forall { body, .. } | Cin::Workspace { body, .. } => Self::operands_in(body, out),
            Cin::Where { producer, consumer, .. } => {
                Self::operands_in(producer, out);
                Self::operands_in(consumer, out);
            }
            Cin::Assign { expr, .. } => {
                let mut v = Vec::new();
                expr.operands(&mut v);
                out.extend(v);
            }
            Cin::Sequence(parts) => parts.iter().for_each(|p| Self::operands_in(p, out)),
        }
    }

    /// The expression `cin` computes, with temporaries it computes itself
    /// replaced by their producers' expressions: a sum whose absent terms
    /// vanish as its terms, any other reduction as [`CinExpr::Reduced`].
    fn effective(cin: &Cin) -> CinExpr {
        match cin {
            Cin::Forall { body, .. } | Cin::Workspace { body, .. } => Self::effective(body),
            Cin::Assign { expr, .. } => expr.clone(),
            Cin::Where {
                temp,
                reduction,
                producer,
                consumer,
                ..
            } => {
                let terms = Self::effective(producer);
                let plain = *reduction == Reduction::Sum && crate::lattice::fill(&terms, &Fills::ZERO) == Some(0.0);
                let with = if plain {
                    terms
                } else {
                    CinExpr::Reduced {
                        op: *reduction,
                        body: Box::new(terms),
                    }
                };
                Self::effective(consumer).substitute(*temp, &with)
            }
            Cin::Sequence(parts) => parts
                .iter()
                .map(Self::effective)
                .reduce(|lhs, rhs| CinExpr::Binary {
                    op: crate::notation::BinaryOp::Add,
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs),
                })
                .unwrap_or(CinExpr::Literal(0.0)),
        }
    }

    /// Where `cin`'s results go: the target of its last assignment.
    fn target(cin: &Cin) -> &Target {
        match cin {
            Cin::Forall { body, .. } | Cin::Workspace { body, .. } => Self::target(body),
            Cin::Where { consumer, .. } => Self::target(consumer),
            Cin::Sequence(parts) => Self::target(parts.last().expect("a sequence of terms")),
            Cin::Assign { target, .. } => target,
        }
    }

    /// What `target` holds where nothing is assigned: 0 in the output, a
    /// temporary's identity.
    fn neutral(&self, target: &Target) -> f64 {
        match target {
            Target::Output => self.lowered.output.fill,
            Target::Temp(t) | Target::TempAt(t, _) => self
                .temps
                .get(t)
                .map_or(0.0, |s| s.reduction.identity_for(self.lowered.value_type)),
        }
    }

    /// A new vector temporary over `index`, each component set to
    /// `identity`'s value each time the temporary's `where` runs (as a
    /// dense workspace is cleared).
    fn vector_temp(&mut self, index: &LoopVar, identity: FReg) -> u32 {
        let temp = self.vector_temps.len() as u32;
        self.vector_temps.push(self.var_index(index));
        self.ops.push(Op::TempFill { temp, value: identity });
        temp
    }

    /// Whether `expr` of absent operands is what `target` holds where
    /// nothing is assigned. Integers compare by their bits: the word of
    /// `i64::MIN` is `-0.0`, which `==` takes for 0.
    fn holds_neutral(&self, expr: &CinExpr, target: &Target) -> bool {
        let (fill, neutral) = (self.fill_of(expr), self.neutral(target));
        match fill {
            Some(f) if self.lowered.value_type.is_integer() => f.to_bits() == neutral.to_bits(),
            Some(f) => f == neutral,
            None => false,
        }
    }

    /// `expr`'s fill with the temporaries known here.
    fn fill_of(&self, expr: &CinExpr) -> Option<f64> {
        self.with_fills(|fills| crate::lattice::fill(expr, fills))
    }

    /// Calls `f` with the operands' fills and those of the temporaries
    /// known here.
    fn with_fills<R>(&self, f: impl FnOnce(&Fills<'_>) -> R) -> R {
        f(&Fills {
            operand: &|a| self.lowered.operands.get(a).map_or(0.0, |op| op.fill),
            temp: &|t| self.temps.get(&t).and_then(|s| s.fill),
        })
    }

    fn forall(&mut self, var: &LoopVar, body: &Cin, depth: usize) {
        let mut involved = BTreeSet::new();
        Self::operands_in(body, &mut involved);
        // A loop of a vector temporary's producer writes no output.
        let writes_output = body.any(&|c| {
            matches!(
                c,
                Cin::Assign {
                    target: Target::Output,
                    ..
                }
            )
        });
        if let Some(out) = self.output_operand().filter(|_| writes_output) {
            involved.insert(out);
        }
        let saved: Vec<OperandState> = self.states.clone();
        let (saved_window, saved_hint) = (self.window.clone(), self.position_hint);
        let saved_coordinates = self.coordinate_window.clone();
        self.start_position_blocks(var);
        self.open_position_window(var);
        let outer_vars: BTreeSet<LoopVar> = self.var_regs.keys().cloned().collect();
        // A loop over a split variable's place in a block, where a level
        // walks the variable, runs over the variable's coordinates in the
        // block: its iterators are the levels of the split variable.
        let windowed = self.coordinate_window_of(var, &involved);
        if let Some(of) = &windowed {
            self.open_coordinate_window(var, of);
        }
        let walk = windowed.as_ref().unwrap_or(var);

        // Iterators: an operand's next level, when it stores this variable.
        let mut iterators = Vec::new();
        let mut iterator_of: HashMap<usize, usize> = HashMap::new();
        for &a in &involved {
            let st = &self.states[a];
            if st.done < st.level_vars.len() && st.level_vars[st.done] == *walk {
                iterator_of.insert(a, iterators.len());
                iterators.push(IterInfo {
                    operand: a,
                    level: st.done,
                    format: st.formats[st.done],
                });
            }
        }
        let expr = Self::effective(body);
        let lattice = self.with_fills(|fills| Lattice::build(&expr, &|a| iterator_of.get(&a).copied(), fills));
        let Some(lattice) = lattice else {
            self.refused = Some(format!(
                "the loop over {var} would merge {} iterators in more than {MAX_POINTS} combinations \
                 (lattice points); split the statement into smaller ones",
                iterators.len()
            ));
            self.states = saved;
            return;
        };
        // Every iterator of an input must take part in the lattice, or its
        // level would never be bound.
        debug_assert!(
            iterators
                .iter()
                .enumerate()
                .all(|(i, it)| Some(it.operand) == self.output_operand() || lattice.top().contains(&i)),
            "an input iterator is missing from the lattice of loop {var}"
        );
        // Every coordinate has something to compute where the expression
        // of absent operands is not what its target holds already.
        let lattice = if self.holds_neutral(&expr, Self::target(body)) && !lattice.is_constant() {
            lattice
        } else {
            lattice.join(&Lattice::universe())
        };
        let lattice = lattice.prune_below_full(&|it| iterators[it].full());
        let shape = self.shape(var, iterators, lattice, windowed.is_some());
        if shape.universe {
            self.every_coordinate.push(walk.clone());
        }

        let pad = "  ".repeat(depth);
        let names: Vec<String> = shape.iterators.iter().map(|it| self.iterator_name(it)).collect();
        let describe =
            |set: &[usize]| -> String { set.iter().map(|&i| names[i].clone()).collect::<Vec<_>>().join(", ") };
        let mut line = format!("{pad}forall {var}: ");
        if shape.universe {
            let _ = write!(line, "every coordinate");
        } else if shape.walked.len() == 1 {
            let _ = write!(line, "iterate {}", describe(&shape.walked));
        } else {
            let _ = write!(line, "merge {}", describe(&shape.walked));
        }
        if shape.universe && !shape.walked.is_empty() {
            let _ = write!(line, ", matching {}", describe(&shape.walked));
        }
        if !shape.located.is_empty() {
            let _ = write!(line, ", locate {}", describe(&shape.located));
        }
        let _ = write!(
            line,
            "; lattice {}",
            LatticePrinter {
                lattice: &shape.lattice,
                names: &names
            }
        );
        let _ = writeln!(self.plan, "{line}");
        if let Some(note) = self.position_window_note(var) {
            let _ = writeln!(self.plan, "{pad}  ({note})");
        }
        if windowed.is_some() {
            if let Some(note) = self.coordinate_window_note() {
                let _ = writeln!(self.plan, "{pad}  ({note})");
            }
        }

        // Block ops add products whose absent factors are 0 (rows of dot
        // products check the fills of their semiring themselves).
        // An unrolled loop is emitted as a loop, whatever block op would
        // replace it.
        let unrolled = self.unrolls_within(var, body);
        // A window of coordinates, or a loop over every coordinate inside a
        // block of positions, is emitted as a loop: block ops would run over
        // the whole dimension or the levels' whole segments.
        let cut_universe = shape.universe && self.in_position_window(var);
        // Block ops compute in f64: integer kernels run their loops.
        let float_values = !self.lowered.value_type.is_integer();
        let block_ops = float_values
            && self.lowered.operands.iter().all(|op| op.fill == 0.0)
            && !unrolled
            && windowed.is_none()
            && !cut_universe;
        // Ops over whole rows walk every row's positions themselves.
        let whole_rows = !self.in_position_window(var)
            && !unrolled
            && windowed.is_none()
            && !Self::holds_position_blocks(body, self.lowered);
        if self.unroll_factor(var) > 1 {
            let what = if self.lowered.vectorized.as_ref() == Some(var) {
                "vector lanes"
            } else {
                "unrolled"
            };
            let _ = writeln!(
                self.plan,
                "{pad}  ({what}: {} copies of the body per test)",
                self.unroll_factor(var)
            );
        }
        if float_values && self.try_fibre_blocks(var, body, depth) {
            // The plan line above says what the blocks' loop does.
        } else if whole_rows && block_ops && !shape.universe && self.try_strided_axpy(var, body, &shape) {
            let _ = writeln!(self.plan, "{pad}  {}", strided_rows_note(&self.ops));
        } else if whole_rows && block_ops && self.try_merge_runs(var, body, &shape) {
            let _ = writeln!(
                self.plan,
                "{pad}  (runs as one block op: the two computed ranges merged into an output range)"
            );
        } else if whole_rows && block_ops && self.try_values_run(var, body, &shape) {
            let _ = writeln!(
                self.plan,
                "{pad}  (runs as one block op: the stored values below it, scaled, written at their positions)"
            );
        } else if whole_rows && block_ops && self.try_values_run_sum(var, body, &shape) {
            let _ = writeln!(
                self.plan,
                "{pad}  (runs as one block op: a sum of products of the stored values below it)"
            );
        } else if let Some(how) = self.structured_driver(&shape).filter(|_| whole_rows) {
            let _ = writeln!(
                self.plan,
                "{pad}  ({})",
                match how {
                    structured::StructuredDriver::CoordinateRange => "its coordinates are a computed range",
                    structured::StructuredDriver::CoordinateRanges =>
                        "its coordinates are the union of computed ranges, each located in the ranges that hold it",
                    structured::StructuredDriver::OneChild => "one child per parent position: no loop",
                }
            );
            let (plan_at, top) = (self.plan.len(), self.label());
            self.emit_structured_loop(how, walk, body, &shape, &involved, depth);
            self.note_coordinate_shortcut(float_values, top, plan_at, &pad);
        } else if whole_rows && block_ops && self.try_every_block_row(var, body, &shape) {
            let _ = writeln!(
                self.plan,
                "{pad}  (all block rows run as one block op: dense rows times dense runs per stored block)"
            );
        } else if whole_rows && block_ops && self.try_block_rows_dot(var, body, &shape) {
            let _ = writeln!(
                self.plan,
                "{pad}  (all stored blocks run as one block op: dense rows times dense runs per block)"
            );
        } else if whole_rows && block_ops && self.try_every_values_row(var, body, &shape) {
            let _ = writeln!(
                self.plan,
                "{pad}  (all rows run as one block op: their stored values, scaled, written at their positions)"
            );
        } else if block_ops && self.try_values_axpy(var, body, &shape) {
            let _ = writeln!(
                self.plan,
                "{pad}  (runs as one block op: the row's stored values, scaled, written at their positions)"
            );
        } else if whole_rows && block_ops && self.try_rows_merge(var, body, &shape) {
            let _ = writeln!(
                self.plan,
                "{pad}  (all rows run as one block op: each row's two stored rows merged into an output row)"
            );
        } else if block_ops && self.try_row_axpy(var, body, &shape) {
            let _ = writeln!(
                self.plan,
                "{pad}  (runs as one block op: a dense row update per stored coordinate)"
            );
        } else if block_ops && self.try_merge_rows(var, body, &shape) {
            let merged = match self.ops.last() {
                Some(Op::MergeRows { block, .. }) if !block.is_empty() => format!(
                    "the two stored rows of {} blocks merged block by block into an output row",
                    crate::bytecode::block_shape(block)
                ),
                _ => "the two stored rows merged into an output row".to_string(),
            };
            let _ = writeln!(self.plan, "{pad}  (runs as one block op: {merged})");
        } else if block_ops && self.try_workspace_axpy(var, body, &shape) {
            let _ = writeln!(
                self.plan,
                "{pad}  (runs as one block op: the stored row scattered into the workspace)"
            );
        } else if block_ops && self.try_dense_axpy(var, body, &shape) {
            let _ = writeln!(self.plan, "{pad}  (runs as one dense block op)");
        } else if whole_rows && float_values && self.try_rows_dot(var, body, &shape) {
            let _ = writeln!(
                self.plan,
                "{pad}  (all rows run as one block op: a dot product per row)"
            );
        } else if whole_rows && block_ops && self.try_dense_rows_dot(var, body, &shape) {
            let _ = writeln!(
                self.plan,
                "{pad}  (all rows run as one block op: dense rows times dense runs)"
            );
        } else if block_ops && self.try_dense_dot(var, body, &shape) {
            let _ = writeln!(
                self.plan,
                "{pad}  (runs as one block op: an inner product of dense rows)"
            );
        } else if let Some(done) = block_ops.then(|| self.try_dot_block(var, body, &shape)).flatten() {
            let _ = writeln!(
                self.plan,
                "{pad}  (inner products run as blocks of coordinates: {done})"
            );
        } else if whole_rows && block_ops && shape.universe && self.try_strided_axpy(var, body, &shape) {
            let _ = writeln!(self.plan, "{pad}  {}", strided_rows_note(&self.ops));
        } else if !shape.universe && shape.walked.len() == 1 && Self::drives_alone(&shape.iterators[shape.walked[0]]) {
            let plan_at = self.plan.len();
            let top = self.emit_driven_loop(walk, body, &shape, &involved, depth);
            if let Some(what) = float_values.then(|| self.shortcut_position_loop(top)).flatten() {
                let note = format!("{pad}  (the interpreter runs the loop as one op: {what})\n");
                self.plan.insert_str(plan_at, &note);
            }
        } else if !unrolled && self.merges_by_cases(&shape, body) {
            self.emit_merge_loops(walk, body, &shape, &involved, depth);
        } else {
            let (plan_at, top) = (self.plan.len(), self.label());
            self.emit_loop(walk, body, &shape, &involved, depth);
            self.note_coordinate_shortcut(float_values, top, plan_at, &pad);
        }
        if shape.universe {
            self.every_coordinate.pop();
        }
        self.states = saved;
        self.window = saved_window;
        self.position_hint = saved_hint;
        self.coordinate_window = saved_coordinates;
        self.var_regs.retain(|v, _| outer_vars.contains(v));
    }

    fn iterator_name(&self, it: &IterInfo) -> String {
        if Some(it.operand) == self.output_operand() {
            format!("{}(out).{}", self.lowered.output.name, it.format.name())
        } else {
            format!("{}.{}", self.lowered.operands[it.operand].name, it.format.name())
        }
    }

    /// Chooses how the loop runs its iterators.
    fn shape(&self, var: &LoopVar, iterators: Vec<IterInfo>, lattice: Lattice, windowed: bool) -> LoopShape {
        let all: Vec<usize> = (0..iterators.len()).collect();
        let universe_shape = |iterators: Vec<IterInfo>, lattice: Lattice| {
            let (located, walked): (Vec<usize>, Vec<usize>) = all.iter().partition(|&&i| iterators[i].locatable());
            LoopShape {
                iterators,
                lattice,
                walked,
                located,
                universe: true,
            }
        };
        // A point made of full iterators only (or none: the universe) covers
        // every coordinate; intersections with a full level just locate it.
        let needs_universe = lattice.points.iter().any(|p| p.iter().all(|&i| iterators[i].full()));
        if needs_universe {
            return universe_shape(iterators, lattice);
        }
        let order_free = self.lowered.summed.contains(var)
            || matches!(
                self.lowered.assembly,
                OutputAssembly::Dense | OutputAssembly::OnPattern { .. }
            )
            || self.workspace.is_some();
        let top = lattice.top();
        if lattice.points.len() == 1 {
            let (located, walked): (Vec<usize>, Vec<usize>) = top.iter().partition(|&&i| iterators[i].locatable());
            if !walked.is_empty() {
                return LoopShape {
                    iterators,
                    lattice,
                    walked,
                    located,
                    universe: false,
                };
            }
            // Every iterator can locate: drive by one (in hash order when
            // that order cannot show), locate the rest.
            // The driver walks positions, so it is not a full level (a
            // point of full levels only ran over the universe above).
            // Inside a window of coordinates, a level that locates is not
            // cut by coordinate: it is located at each of the window's.
            let driver = located.iter().position(|&i| !iterators[i].full());
            if let (true, false, Some(d)) = (order_free, windowed, driver) {
                let mut located = located;
                let driver = located.remove(d);
                return LoopShape {
                    iterators,
                    lattice,
                    walked: vec![driver],
                    located,
                    universe: false,
                };
            }
            return universe_shape(iterators, lattice);
        }
        if top.iter().any(|&i| !iterators[i].format.ordered) {
            return universe_shape(iterators, lattice);
        }
        // Full levels hold every coordinate: merge the others and locate
        // them (some point holds a non-full iterator, or the loop would run
        // over the universe above).
        let walked: Vec<usize> = top.iter().copied().filter(|&i| !iterators[i].full()).collect();
        let located = all.iter().copied().filter(|i| !walked.contains(i)).collect();
        LoopShape {
            iterators,
            lattice,
            walked,
            located,
            universe: false,
        }
    }
}

/// The plan's line for the strided update last emitted into `ops`.
fn strided_rows_note(ops: &[Op]) -> &'static str {
    let columns = ops.iter().rev().find_map(|op| match op {
        Op::StridedAxpy { columns, .. } => Some(columns.is_some()),
        _ => None,
    });
    match columns {
        Some(true) => {
            "(all rows run as one block op: a row of products per row, one per column, positions stepping with the row)"
        }
        _ => "(all rows run as one block op: a product per row, positions stepping with the row)",
    }
}
