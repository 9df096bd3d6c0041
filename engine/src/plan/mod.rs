//! Planning and emission: concrete index notation → bytecode.
//!
//! Walks the [`Cin`] tree. At each `forall` it decides which levels of which
//! operands the loop handles (an operand's next level whose variable is the
//! loop's is an *iterator*; deeper levels whose variables are already bound
//! are *located*), builds the loop's merge lattice, chooses how to run it —
//! the universe (every coordinate, locating and matching the rest), one
//! driving iterator, or a k-way merge — and emits the loop. Assignments
//! compute their value with absent operands as zero and write only where
//! the expression is structurally nonzero. A readable plan is recorded on
//! the way.

mod state;

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

use smallvec::SmallVec;
use tessera_formats::{Cmp, IntOp, Iteration, Level, LevelFormat, LevelKind, LevelRef};

use crate::bytecode::{AxpyFactor, BReg, DotFactor, FReg, FloatOp, IReg, Op, Program, Regs};
use crate::cin::{Cin, CinExpr, LoopVar, Lowered, OutputAssembly, Target, TempId};
use crate::error::{EngineError, Result};
use crate::lattice::{Lattice, LatticePrinter, MAX_POINTS};
use crate::notation::BinaryOp;
use state::OperandState;

/// What [`Emitter::jump_unless`] returns when it emits no jump.
const NO_JUMP: usize = usize::MAX;

/// The emitted program and the plan that explains it.
pub struct Planned {
    pub program: Program,
    pub plan: String,
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
pub fn emit(lowered: &Lowered) -> Result<Planned> {
    let mut e = Emitter::new(lowered);
    let cin = lowered.cin.clone();
    e.stmt(&cin, 0);
    if let Some(reason) = e.refused {
        return Err(EngineError::Unsupported(reason));
    }
    e.ops.push(Op::Halt);
    let program = Program {
        ops: e.ops,
        int_regs: e.ni as usize,
        float_regs: e.nf as usize,
        bool_regs: e.nb as usize,
        inputs: lowered.operands.len(),
        vars: lowered.order.iter().map(|v| v.name().to_string()).collect(),
    };
    let mut plan = String::new();
    let names: Vec<&str> = lowered.order.iter().map(LoopVar::name).collect();
    let _ = writeln!(plan, "loop order: {}", names.join(", "));
    for note in &lowered.notes {
        let _ = writeln!(plan, "note: {note}");
    }
    let _ = writeln!(
        plan,
        "output {} ({}): {}",
        lowered.output.name,
        lowered.output.format,
        match lowered.assembly {
            OutputAssembly::Dense => "dense, accumulated in place",
            OutputAssembly::Append => "assembled by append in order",
            OutputAssembly::Packed => "packed from a workspace",
        }
    );
    plan.push_str(&e.plan);
    Ok(Planned { program, plan })
}

struct Emitter<'a> {
    lowered: &'a Lowered,
    ops: Vec<Op>,
    ni: u32,
    nf: u32,
    nb: u32,
    states: Vec<OperandState>,
    var_regs: HashMap<LoopVar, IReg>,
    temps: HashMap<TempId, (FReg, BReg)>,
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
            workspace: None,
            true_reg: 0,
            false_reg: 0,
            copies: 1,
            plan: String::new(),
            refused: None,
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
    fn var_index(&self, v: &LoopVar) -> u32 {
        self.lowered
            .order
            .iter()
            .position(|o| o == v)
            .expect("every loop variable is ordered") as u32
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
                producer,
                consumer,
            } => {
                let value = self.freg();
                let present = self.breg();
                self.ops.push(Op::FConst { dst: value, value: 0.0 });
                self.ops.push(Op::BConst {
                    dst: present,
                    value: false,
                });
                self.temps.insert(*temp, (value, present));
                let pad = "  ".repeat(depth);
                let _ = writeln!(self.plan, "{pad}where t{} is computed by:", temp.0);
                self.stmt(producer, depth + 1);
                self.stmt(consumer, depth);
            }
            Cin::Workspace { vars, body } => {
                let pad = "  ".repeat(depth);
                let names: Vec<&str> = vars.iter().map(LoopVar::name).collect();
                let _ = writeln!(
                    self.plan,
                    "{pad}workspace over ({}), sorted and assembled into {} after:",
                    names.join(","),
                    self.lowered.output.name
                );
                let saved = self.workspace.replace(vars.clone());
                self.stmt(body, depth + 1);
                self.workspace = saved;
                let prefix: Regs = self
                    .lowered
                    .output
                    .vars
                    .iter()
                    .filter(|v| !vars.contains(v))
                    .map(|v| self.var_regs[v])
                    .collect();
                let prefix = self.output_level_order(prefix, vars);
                self.ops.push(Op::WorkspaceFlush { prefix });
            }
            Cin::Assign { target, expr } => self.assign(target, expr),
        }
    }

    /// The prefix coordinates in the output's level order.
    fn output_level_order(&self, prefix: Regs, ws: &[LoopVar]) -> Regs {
        if self.lowered.assembly == OutputAssembly::Packed {
            return prefix;
        }
        self.lowered
            .output
            .level_vars()
            .iter()
            .filter(|v| !ws.contains(v))
            .map(|v| self.var_regs[v])
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
        }
    }

    /// The expression `cin` computes, with temporaries it computes itself
    /// replaced by their producers' expressions.
    fn effective(cin: &Cin) -> CinExpr {
        match cin {
            Cin::Forall { body, .. } | Cin::Workspace { body, .. } => Self::effective(body),
            Cin::Assign { expr, .. } => expr.clone(),
            Cin::Where {
                temp,
                producer,
                consumer,
            } => substitute(&Self::effective(consumer), *temp, &Self::effective(producer)),
        }
    }

    fn forall(&mut self, var: &LoopVar, body: &Cin, depth: usize) {
        let mut involved = BTreeSet::new();
        Self::operands_in(body, &mut involved);
        if let Some(out) = self.output_operand() {
            involved.insert(out);
        }
        let saved: Vec<OperandState> = self.states.clone();
        let mut bound: BTreeSet<LoopVar> = self.var_regs.keys().cloned().collect();
        bound.insert(var.clone());

        // Iterators: an operand's next level, when it stores this variable.
        let mut iterators = Vec::new();
        let mut iterator_of: HashMap<usize, usize> = HashMap::new();
        for &a in &involved {
            let st = &self.states[a];
            if st.done < st.level_vars.len() && st.level_vars[st.done] == *var {
                iterator_of.insert(a, iterators.len());
                iterators.push(IterInfo {
                    operand: a,
                    level: st.done,
                    format: st.formats[st.done],
                });
            }
        }
        let expr = Self::effective(body);
        let Some(lattice) = Lattice::build(&expr, &|a| iterator_of.get(&a).copied(), &|_| None) else {
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
        let lattice = lattice.prune_below_full(&|it| iterators[it].full());
        let shape = self.shape(var, iterators, lattice);

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

        if self.try_row_axpy(var, body, &shape) {
            let _ = writeln!(
                self.plan,
                "{pad}  (runs as one block op: a dense row update per stored coordinate)"
            );
        } else if self.try_dense_axpy(var, body, &shape) {
            let _ = writeln!(self.plan, "{pad}  (runs as one dense block op)");
        } else if self.try_rows_dot(var, body, &shape) {
            let _ = writeln!(
                self.plan,
                "{pad}  (all rows run as one block op: a dot product per row)"
            );
        } else if let Some(done) = self.try_dot_block(var, body, &shape) {
            let _ = writeln!(
                self.plan,
                "{pad}  (inner products run as blocks of coordinates: {done})"
            );
        } else if !shape.universe && shape.walked.len() == 1 && shape.iterators[shape.walked[0]].format.unique {
            self.emit_driven_loop(var, body, &shape, &involved, depth);
        } else if self.merges_by_cases(&shape, body) {
            self.emit_merge_loops(var, body, &shape, &involved, depth);
        } else {
            self.emit_loop(var, body, &shape, &involved, depth);
        }
        self.states = saved;
        self.var_regs.remove(var);
    }

    fn iterator_name(&self, it: &IterInfo) -> String {
        if Some(it.operand) == self.output_operand() {
            format!("{}(out).{}", self.lowered.output.name, it.format.name())
        } else {
            format!("{}.{}", self.lowered.operands[it.operand].name, it.format.name())
        }
    }

    /// Chooses how the loop runs its iterators.
    fn shape(&self, var: &LoopVar, iterators: Vec<IterInfo>, lattice: Lattice) -> LoopShape {
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
            || self.lowered.assembly == OutputAssembly::Dense
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
            let driver = located.iter().position(|&i| !iterators[i].full());
            if let (true, Some(d)) = (order_free, driver) {
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

    /// Position bounds of an iterator below its parent (empty when the
    /// operand is absent).
    fn bounds(&mut self, it: &IterInfo) -> (IReg, IReg) {
        let st = self.states[it.operand].clone();
        let (begin, end) = (self.zero_unless(st.present), self.zero_unless(st.present));
        let skip = self.jump_unless(st.present);
        let level = LevelRef::new(it.operand, it.level);
        let parent = st.parent_pos();
        match st.parent_run_end() {
            None => self.ops.push(Op::PosIter {
                level,
                parent,
                begin,
                end,
            }),
            Some(run_end) => {
                // Chained iterator: children of the whole run of equal parents.
                let last = self.ireg();
                let one = self.iconst(1);
                self.ops.push(Op::IBin {
                    op: IntOp::Sub,
                    dst: last,
                    a: run_end,
                    b: one,
                });
                let unused = self.ireg();
                self.ops.push(Op::PosIter {
                    level,
                    parent,
                    begin,
                    end: unused,
                });
                let unused2 = self.ireg();
                self.ops.push(Op::PosIter {
                    level,
                    parent: last,
                    begin: unused2,
                    end,
                });
            }
        }
        self.patch(skip);
        (begin, end)
    }

    fn ancestors(&self, operand: usize, level: usize) -> Regs {
        self.states[operand].level_vars[..level]
            .iter()
            .map(|v| self.var_regs[v])
            .collect()
    }

    fn emit_loop(&mut self, var: &LoopVar, body: &Cin, shape: &LoopShape, involved: &BTreeSet<usize>, depth: usize) {
        let coord = self.ireg();
        self.var_regs.insert(var.clone(), coord);
        let walked: Vec<IterInfo> = shape.walked.iter().map(|&i| shape.iterators[i].clone()).collect();
        let mut cursors = Vec::new();
        for it in &walked {
            let (begin, end) = self.bounds(it);
            cursors.push((begin, end));
        }
        let dim = if shape.universe {
            let d = self.ireg();
            let vi = self.var_index(var);
            self.ops.push(Op::Dim { dst: d, var: vi });
            self.ops.push(Op::IConst { dst: coord, value: 0 });
            Some(d)
        } else {
            None
        };
        let top = self.label();
        // Continue while some lattice point still has all its walked iterators.
        let ok: Vec<BReg> = cursors
            .iter()
            .map(|&(cur, end)| {
                let b = self.breg();
                self.ops.push(Op::ICmp {
                    op: Cmp::Lt,
                    dst: b,
                    a: cur,
                    b: end,
                });
                b
            })
            .collect();
        let go = self.breg();
        if let Some(d) = dim {
            self.ops.push(Op::ICmp {
                op: Cmp::Lt,
                dst: go,
                a: coord,
                b: d,
            });
        } else {
            self.ops.push(Op::BConst { dst: go, value: false });
            let walked_sets: Vec<Vec<usize>> = shape
                .lattice
                .points
                .iter()
                .map(|point| {
                    shape
                        .walked
                        .iter()
                        .enumerate()
                        .filter(|(_, i)| point.contains(i))
                        .map(|(k, _)| k)
                        .collect()
                })
                .collect();
            for (p, pw) in walked_sets.iter().enumerate() {
                // A point whose walked iterators include another point's
                // adds nothing to the disjunction: that point is alive too.
                let covered = walked_sets
                    .iter()
                    .enumerate()
                    .any(|(q, other)| q != p && other.len() < pw.len() && other.iter().all(|k| pw.contains(k)));
                if pw.is_empty() || covered {
                    continue;
                }
                let mut all = self.true_reg;
                for &k in pw {
                    all = self.and_flags(all, ok[k]);
                }
                self.ops.push(Op::BOr { dst: go, a: go, b: all });
            }
        }
        let exit = self.jump_unless(go);

        // Coordinates of the walked iterators; absent ones read as "none".
        let mut coords = Vec::new();
        let mut founds = Vec::new();
        for (k, it) in walked.iter().enumerate() {
            let c = self.iconst(i64::MAX);
            let found = self.breg();
            self.ops.push(Op::BConst {
                dst: found,
                value: false,
            });
            let skip = self.jump_unless(ok[k]);
            let ancestors = self.ancestors(it.operand, it.level);
            self.ops.push(Op::PosAccess {
                level: LevelRef::new(it.operand, it.level),
                pos: cursors[k].0,
                ancestors,
                coord: c,
                found,
            });
            self.patch(skip);
            // An unlabeled position (empty bucket) has no coordinate.
            let none = self.iconst(i64::MAX);
            self.ops.push(Op::ISelect {
                dst: c,
                cond: found,
                a: c,
                b: none,
            });
            coords.push(c);
            founds.push(found);
        }
        if dim.is_none() {
            // The merged coordinate: the smallest.
            self.ops.push(Op::IConst {
                dst: coord,
                value: i64::MAX,
            });
            for &c in &coords {
                self.ops.push(Op::IBin {
                    op: IntOp::Min,
                    dst: coord,
                    a: coord,
                    b: c,
                });
            }
        }
        let mut matched = Vec::new();
        let mut run_ends = Vec::new();
        let any = self.breg();
        self.ops.push(Op::BConst { dst: any, value: false });
        for (k, it) in walked.iter().enumerate() {
            let m = self.breg();
            self.ops.push(Op::ICmp {
                op: Cmp::Eq,
                dst: m,
                a: coords[k],
                b: coord,
            });
            self.ops.push(Op::BAnd {
                dst: m,
                a: m,
                b: founds[k],
            });
            self.ops.push(Op::BOr { dst: any, a: any, b: m });
            matched.push(m);
            // A non-unique level: the run of positions with this coordinate.
            let run_end = if !it.format.unique {
                let e = self.ireg();
                let one = self.iconst(1);
                self.ops.push(Op::IBin {
                    op: IntOp::Add,
                    dst: e,
                    a: cursors[k].0,
                    b: one,
                });
                let skip = self.jump_unless(m);
                let scan = self.label();
                let more = self.breg();
                self.ops.push(Op::ICmp {
                    op: Cmp::Lt,
                    dst: more,
                    a: e,
                    b: cursors[k].1,
                });
                let stop = self.jump_unless(more);
                let next = self.ireg();
                let nf = self.breg();
                let ancestors = self.ancestors(it.operand, it.level);
                self.ops.push(Op::PosAccess {
                    level: LevelRef::new(it.operand, it.level),
                    pos: e,
                    ancestors,
                    coord: next,
                    found: nf,
                });
                let same = self.breg();
                self.ops.push(Op::ICmp {
                    op: Cmp::Eq,
                    dst: same,
                    a: next,
                    b: coord,
                });
                let stop2 = self.jump_unless(same);
                self.ops.push(Op::IBin {
                    op: IntOp::Add,
                    dst: e,
                    a: e,
                    b: one,
                });
                self.ops.push(Op::Jump { to: scan });
                self.patch(stop);
                self.patch(stop2);
                self.patch(skip);
                Some(e)
            } else {
                None
            };
            run_ends.push(run_end);
        }
        // In a merge, a step where only empty buckets were seen does nothing.
        let skip_body = if dim.is_none() {
            Some(self.jump_unless(any))
        } else {
            None
        };

        // Bind the walked iterators' levels.
        for (k, it) in walked.iter().enumerate() {
            let st_present = self.states[it.operand].present;
            let present = self.and_flags(st_present, matched[k]);
            let st = &mut self.states[it.operand];
            st.bind(cursors[k].0, run_ends[k], present);
            self.hoist_value(it.operand);
        }
        self.bind_located(shape, involved, coord);

        self.stmt(body, depth + 1);

        if let Some(s) = skip_body {
            self.patch(s);
        }
        // Advance the iterators that produced this coordinate (and empty buckets).
        for (k, _it) in walked.iter().enumerate() {
            let step = self.breg();
            let empty = self.breg();
            self.ops.push(Op::BNot {
                dst: empty,
                a: founds[k],
            });
            self.ops.push(Op::BAnd {
                dst: empty,
                a: empty,
                b: ok[k],
            });
            self.ops.push(Op::BOr {
                dst: step,
                a: matched[k],
                b: empty,
            });
            let skip = self.jump_unless(step);
            match run_ends[k] {
                Some(e) => self.ops.push(Op::IMove {
                    dst: cursors[k].0,
                    src: e,
                }),
                None => {
                    let one = self.iconst(1);
                    self.ops.push(Op::IBin {
                        op: IntOp::Add,
                        dst: cursors[k].0,
                        a: cursors[k].0,
                        b: one,
                    });
                }
            }
            self.patch(skip);
        }
        if dim.is_some() {
            let one = self.iconst(1);
            self.ops.push(Op::IBin {
                op: IntOp::Add,
                dst: coord,
                a: coord,
                b: one,
            });
        }
        self.ops.push(Op::Jump { to: top });
        self.patch(exit);
    }

    /// Binds the loop's located iterators at `coord`, then every deeper
    /// level of an involved operand whose variable is bound by now.
    fn bind_located(&mut self, shape: &LoopShape, involved: &BTreeSet<usize>, coord: IReg) {
        let located: Vec<IterInfo> = shape.located.iter().map(|&i| shape.iterators[i].clone()).collect();
        for it in &located {
            self.locate_level(it.operand, it.level, coord);
        }
        let pending: Vec<usize> = involved
            .iter()
            .copied()
            .filter(|&a| self.states[a].done < self.states[a].level_vars.len())
            .collect();
        for a in pending {
            loop {
                let st = &self.states[a];
                if st.done >= st.level_vars.len() {
                    break;
                }
                let v = st.level_vars[st.done].clone();
                let Some(&c) = self.var_regs.get(&v) else {
                    break;
                };
                let level = st.done;
                self.locate_level(a, level, c);
            }
        }
    }

    /// A loop driven by one unique iterator: walk its positions and run the
    /// body at each labelled one. The common case (a row of CSR, a fibre of
    /// CSF) without the bookkeeping of a merge.
    fn emit_driven_loop(
        &mut self,
        var: &LoopVar,
        body: &Cin,
        shape: &LoopShape,
        involved: &BTreeSet<usize>,
        depth: usize,
    ) {
        let coord = self.ireg();
        self.var_regs.insert(var.clone(), coord);
        let it = shape.iterators[shape.walked[0]].clone();
        let (cursor, end) = self.bounds(&it);
        let one = self.iconst(1);
        let top = self.label();
        let more = self.breg();
        self.ops.push(Op::ICmp {
            op: Cmp::Lt,
            dst: more,
            a: cursor,
            b: end,
        });
        let exit = self.jump_unless(more);
        let found = self.breg();
        let ancestors = self.ancestors(it.operand, it.level);
        self.ops.push(Op::PosAccess {
            level: LevelRef::new(it.operand, it.level),
            pos: cursor,
            ancestors,
            coord,
            found,
        });
        // An unlabelled position (an empty bucket) holds no coordinate.
        let skip = self.jump_unless(found);
        // The loop runs only when the operand is present (its bounds are
        // empty otherwise) and the body only at labelled positions.
        self.states[it.operand].bind(cursor, None, self.true_reg);
        self.hoist_value(it.operand);
        self.bind_located(shape, involved, coord);
        self.stmt(body, depth + 1);
        self.patch(skip);
        self.ops.push(Op::IBin {
            op: IntOp::Add,
            dst: cursor,
            a: cursor,
            b: one,
        });
        self.ops.push(Op::Jump { to: top });
        self.patch(exit);
    }

    /// Loads an input's value as soon as all its levels are bound and it is
    /// known to be stored, for the code below to use.
    fn hoist_value(&mut self, a: usize) {
        let st = &self.states[a];
        if a >= self.lowered.operands.len() || st.done < st.level_vars.len() || st.present != self.true_reg {
            return;
        }
        let pos = st.position();
        let dst = self.freg();
        self.ops.push(Op::LoadValue {
            operand: a as u32,
            pos,
            dst,
        });
        self.states[a].value = Some(dst);
    }

    /// Whether a merge runs as one loop per lattice point with a case per
    /// point below it: its iterators label every position in order, once
    /// each, and the lattice is small (the body is emitted once per case).
    fn merges_by_cases(&self, shape: &LoopShape, body: &Cin) -> bool {
        // Nested merges multiply their cases: bound the copies of any body.
        const MOST_COPIES: usize = 16;
        // The loop of a point ignores the iterators outside it. That is
        // right when they could only have been annihilated (an iterator of
        // the point ran out), not under a quotient, which is computed
        // wherever its operands are (division has the dense meaning).
        !Self::effective(body).has_division()
            && !shape.universe
            && shape.walked.len() >= 2
            && shape.lattice.points.len() <= MOST_COPIES
            && self.copies * Self::cases(&Self::walked_points(shape)) <= MOST_COPIES
            && shape.walked.iter().all(|&i| {
                let props = shape.iterators[i].format.properties();
                props.compact && props.ordered && props.unique
            })
    }

    /// The bodies a merge by cases emits: one per point and point below it.
    fn cases(points: &[Vec<usize>]) -> usize {
        points
            .iter()
            .map(|p| points.iter().filter(|q| q.iter().all(|k| p.contains(k))).count())
            .sum()
    }

    /// The walked iterators (indices into `shape.walked`) of each lattice
    /// point, distinct, largest first.
    fn walked_points(shape: &LoopShape) -> Vec<Vec<usize>> {
        let mut sets: Vec<Vec<usize>> = Vec::new();
        for point in &shape.lattice.points {
            let set: Vec<usize> = (0..shape.walked.len())
                .filter(|&k| point.contains(&shape.walked[k]))
                .collect();
            if !set.is_empty() && !sets.contains(&set) {
                sets.push(set);
            }
        }
        sets.sort_by_key(|set| std::cmp::Reverse(set.len()));
        sets
    }

    /// A merge as the merge-lattice paper runs it: one loop per lattice
    /// point while all of its iterators have positions left, and in it one
    /// case per point below it, tried largest first. Each case's body knows
    /// which operands are present, so it reads no flags.
    fn emit_merge_loops(
        &mut self,
        var: &LoopVar,
        body: &Cin,
        shape: &LoopShape,
        involved: &BTreeSet<usize>,
        depth: usize,
    ) {
        let coord = self.ireg();
        self.var_regs.insert(var.clone(), coord);
        let walked: Vec<IterInfo> = shape.walked.iter().map(|&i| shape.iterators[i].clone()).collect();
        let cursors: Vec<(IReg, IReg)> = walked.iter().map(|it| self.bounds(it)).collect();
        let one = self.iconst(1);
        let points = Self::walked_points(shape);
        let outer_copies = self.copies;
        self.copies *= Self::cases(&points);
        for point in &points {
            let top = self.label();
            let mut alive = self.true_reg;
            for &k in point {
                let more = self.breg();
                self.ops.push(Op::ICmp {
                    op: Cmp::Lt,
                    dst: more,
                    a: cursors[k].0,
                    b: cursors[k].1,
                });
                alive = self.and_flags(alive, more);
            }
            let exit = self.jump_unless(alive);
            let mut coords = Vec::new();
            for &k in point {
                let (c, found) = (self.ireg(), self.breg());
                let ancestors = self.ancestors(walked[k].operand, walked[k].level);
                self.ops.push(Op::PosAccess {
                    level: LevelRef::new(walked[k].operand, walked[k].level),
                    pos: cursors[k].0,
                    ancestors,
                    coord: c,
                    found,
                });
                coords.push(c);
            }
            self.ops.push(Op::IMove {
                dst: coord,
                src: coords[0],
            });
            for &c in &coords[1..] {
                self.ops.push(Op::IBin {
                    op: IntOp::Min,
                    dst: coord,
                    a: coord,
                    b: c,
                });
            }
            let mut matched = vec![self.false_reg; walked.len()];
            for (&k, &c) in point.iter().zip(&coords) {
                if point.len() == 1 {
                    matched[k] = self.true_reg;
                    continue;
                }
                let m = self.breg();
                self.ops.push(Op::ICmp {
                    op: Cmp::Eq,
                    dst: m,
                    a: c,
                    b: coord,
                });
                matched[k] = m;
            }
            let mut done = Vec::new();
            let cases: Vec<&Vec<usize>> = points.iter().filter(|q| q.iter().all(|k| point.contains(k))).collect();
            for (c, case) in cases.iter().enumerate() {
                let mut holds = self.true_reg;
                for &k in case.iter() {
                    holds = self.and_flags(holds, matched[k]);
                }
                let next_case = self.jump_unless(holds);
                let saved = self.states.clone();
                for (k, it) in walked.iter().enumerate() {
                    // In this case the case's iterators are at the
                    // coordinate; another of the loop's is known not to be
                    // when it would have completed an earlier case, and may
                    // or may not be otherwise (a point need not list every
                    // iterator that can be present, e.g. under a division).
                    let st_present = self.states[it.operand].present;
                    let completes_earlier = |k: usize| {
                        cases[..c]
                            .iter()
                            .any(|earlier| earlier.iter().all(|j| *j == k || case.contains(j)))
                    };
                    let present = if case.contains(&k) {
                        st_present
                    } else if !point.contains(&k) || completes_earlier(k) {
                        self.false_reg
                    } else {
                        self.and_flags(st_present, matched[k])
                    };
                    self.states[it.operand].bind(cursors[k].0, None, present);
                    self.hoist_value(it.operand);
                }
                self.bind_located(shape, involved, coord);
                self.stmt(body, depth + 1);
                self.states = saved;
                self.ops.push(Op::Jump { to: usize::MAX });
                done.push(self.ops.len() - 1);
                self.patch(next_case);
            }
            for at in done {
                self.patch(at);
            }
            // Advance the iterators at the merged coordinate.
            for &k in point {
                let skip = self.jump_unless(matched[k]);
                self.ops.push(Op::IBin {
                    op: IntOp::Add,
                    dst: cursors[k].0,
                    a: cursors[k].0,
                    b: one,
                });
                self.patch(skip);
            }
            self.ops.push(Op::Jump { to: top });
            self.patch(exit);
        }
        self.copies = outer_copies;
    }

    /// Locates level `level` of operand `a` at coordinate `coord`.
    fn locate_level(&mut self, a: usize, level: usize, coord: IReg) {
        let st = self.states[a].clone();
        let pos = self.zero_unless(st.present);
        let found = self.breg();
        if st.present != self.true_reg {
            self.ops.push(Op::BConst {
                dst: found,
                value: false,
            });
        }
        let skip = self.jump_unless(st.present);
        let ancestors = self.ancestors(a, level);
        self.ops.push(Op::Locate {
            level: LevelRef::new(a, level),
            parent: st.parent_pos(),
            ancestors,
            coord,
            pos,
            found,
        });
        self.patch(skip);
        // A full level holds every coordinate: locating cannot miss.
        let present = if st.formats[level].properties().full {
            st.present
        } else {
            self.and_flags(st.present, found)
        };
        self.states[a].bind(pos, None, present);
        self.hoist_value(a);
    }

    /// The SpMM fast path one level up: a loop driven by one compact level
    /// whose body is a dense row update (see [`Self::try_dense_axpy`]) of
    /// rows located by the loop's coordinate.
    fn try_row_axpy(&mut self, var: &LoopVar, body: &Cin, shape: &LoopShape) -> bool {
        let Some(out) = self.output_operand() else {
            return false;
        };
        if self.workspace.is_some() || shape.universe || shape.walked.len() != 1 {
            return false;
        }
        let Cin::Forall {
            var: inner,
            body: inner_body,
        } = body
        else {
            return false;
        };
        let Cin::Assign {
            target: Target::Output,
            expr,
        } = inner_body.as_ref()
        else {
            return false;
        };
        let driver = shape.iterators[shape.walked[0]].clone();
        let dst = &self.states[driver.operand];
        let props = driver.format.properties();
        if !(props.compact && props.ordered && props.unique)
            || driver.level + 1 != dst.level_vars.len()
            || dst.parent_run_end().is_some()
            || !matches!(driver.format.kind, LevelKind::Compressed | LevelKind::Singleton)
        {
            return false;
        }
        let mut accesses = Vec::new();
        if !product_of_accesses(expr, &mut accesses) || accesses.iter().filter(|&&a| a == driver.operand).count() != 1 {
            return false;
        }
        let ost = &self.states[out];
        if !ost.next_is_dense_last_at(inner) {
            return false;
        }
        let dense_last_at = |st: &OperandState, k: usize, v: &LoopVar| {
            k + 1 == st.level_vars.len() && st.level_vars[k] == *v && st.formats[k].kind == LevelKind::Dense
        };
        let mut fixed = Vec::new();
        let mut factors: SmallVec<[AxpyFactor; 2]> = SmallVec::new();
        let mut presences = vec![dst.present];
        for &a in &accesses {
            if a == driver.operand {
                continue;
            }
            let st = &self.states[a];
            presences.push(st.present);
            if st.done == st.level_vars.len() {
                fixed.push(a);
            } else if dense_last_at(st, st.done, inner) {
                factors.push(AxpyFactor {
                    operand: a as u32,
                    level: LevelRef::new(a, st.done),
                    parent: st.parent_pos(),
                    via: None,
                });
            } else if st.level_vars[st.done] == *var
                && st.formats[st.done].kind == LevelKind::Dense
                && dense_last_at(st, st.done + 1, inner)
            {
                factors.push(AxpyFactor {
                    operand: a as u32,
                    level: LevelRef::new(a, st.done + 1),
                    parent: st.parent_pos(),
                    via: Some(LevelRef::new(a, st.done)),
                });
            } else {
                return false;
            }
        }
        let (out_level, out_parent) = (LevelRef::new(out, ost.done), ost.parent_pos());
        let skip = self.skip_unless_all(&presences);
        let scale = self.product_of_values(&fixed);
        let (begin, end) = self.bounds(&driver);
        self.ops.push(Op::RowAxpy {
            driver: LevelRef::new(driver.operand, driver.level),
            begin,
            end,
            scale,
            factors,
            out: out_level,
            out_parent,
        });
        self.patch(skip);
        true
    }

    /// The SpMM fast path: a loop over every coordinate whose body adds a
    /// product into the dense output's last level, every factor either
    /// fixed by outer loops or a dense last level at this loop.
    fn try_dense_axpy(&mut self, var: &LoopVar, body: &Cin, shape: &LoopShape) -> bool {
        let Some(out) = self.output_operand() else {
            return false;
        };
        if self.workspace.is_some() || !shape.universe || !shape.walked.is_empty() {
            return false;
        }
        let Cin::Assign {
            target: Target::Output,
            expr,
        } = body
        else {
            return false;
        };
        let mut accesses = Vec::new();
        if !product_of_accesses(expr, &mut accesses) {
            return false;
        }
        let ost = &self.states[out];
        if !ost.next_is_dense_last_at(var) {
            return false;
        }
        let mut fixed = Vec::new();
        let mut factors: SmallVec<[DotFactor; 2]> = SmallVec::new();
        let mut presences = Vec::new();
        for &a in &accesses {
            let st = &self.states[a];
            presences.push(st.present);
            if st.done == st.level_vars.len() {
                fixed.push(a);
            } else if st.next_is_dense_last_at(var) {
                factors.push(DotFactor {
                    operand: a as u32,
                    level: LevelRef::new(a, st.done),
                    parent: st.parent_pos(),
                });
            } else {
                return false;
            }
        }
        let (out_level, out_parent) = (LevelRef::new(out, ost.done), ost.parent_pos());
        let skip = self.skip_unless_all(&presences);
        let scale = self.product_of_values(&fixed);
        self.ops.push(Op::DenseAxpy {
            scale,
            factors,
            out: out_level,
            out_parent,
        });
        self.patch(skip);
        true
    }

    /// The SpMV fast path: a loop over every coordinate of a dense level of
    /// one operand whose body is `out(.., v) += t where t = Σ dot` over that
    /// operand's compact child level, the other factors dense last levels,
    /// the output dense. Runs as one [`Op::RowsDot`].
    fn try_rows_dot(&mut self, var: &LoopVar, body: &Cin, shape: &LoopShape) -> bool {
        let Some(out) = self.output_operand() else {
            return false;
        };
        let Cin::Where {
            temp,
            producer,
            consumer,
        } = body
        else {
            return false;
        };
        let Cin::Assign {
            target: Target::Output,
            expr: CinExpr::Temp(t),
        } = consumer.as_ref()
        else {
            return false;
        };
        let Cin::Forall {
            var: inner,
            body: inner_body,
        } = producer.as_ref()
        else {
            return false;
        };
        let Cin::Assign {
            target: Target::Temp(t2),
            expr,
        } = inner_body.as_ref()
        else {
            return false;
        };
        if t != temp || t2 != temp || !shape.universe || !shape.walked.is_empty() {
            return false;
        }
        let mut factors_ops = Vec::new();
        if !product_of_accesses(expr, &mut factors_ops) {
            return false;
        }
        // The rows operand: a dense level at `var`, then a compact level at `inner`, last.
        let is_rows = |st: &OperandState| {
            st.done + 2 == st.level_vars.len()
                && st.level_vars[st.done] == *var
                && st.formats[st.done].kind == LevelKind::Dense
                && st.level_vars[st.done + 1] == *inner
                && {
                    let f = st.formats[st.done + 1];
                    let p = f.properties();
                    p.compact && p.ordered && p.unique && matches!(f.kind, LevelKind::Compressed)
                }
        };
        let rows_ops: Vec<usize> = factors_ops
            .iter()
            .copied()
            .filter(|&a| is_rows(&self.states[a]))
            .collect();
        let [rows_op] = rows_ops[..] else {
            return false;
        };
        if factors_ops.iter().filter(|&&a| a == rows_op).count() != 1 {
            return false;
        }
        let mut factors: SmallVec<[DotFactor; 2]> = SmallVec::new();
        let mut presences = vec![self.states[rows_op].present];
        for &a in &factors_ops {
            if a == rows_op {
                continue;
            }
            let st = &self.states[a];
            let ok = st.next_is_dense_last_at(inner);
            if !ok {
                return false;
            }
            factors.push(DotFactor {
                operand: a as u32,
                level: LevelRef::new(a, st.done),
                parent: st.parent_pos(),
            });
            presences.push(st.present);
        }
        let ost = &self.states[out];
        if !(ost.done + 1 == ost.level_vars.len() && ost.level_vars[ost.done] == *var) {
            return false;
        }
        let (out_level, out_parent) = (LevelRef::new(out, ost.done), ost.parent_pos());
        let rst = &self.states[rows_op];
        let (rows, parent, driver) = (
            LevelRef::new(rows_op, rst.done),
            rst.parent_pos(),
            LevelRef::new(rows_op, rst.done + 1),
        );
        let skip = self.skip_unless_all(&presences);
        self.ops.push(Op::RowsDot {
            rows,
            parent,
            driver,
            factors,
            out: out_level,
            out_parent,
        });
        self.patch(skip);
        true
    }

    /// The inner product fast path: a loop driven by one compact, ordered,
    /// unique level whose body only adds a product of values into a
    /// temporary, every other factor a dense last level located by the
    /// loop's coordinate.
    fn try_dot_block(&mut self, var: &LoopVar, body: &Cin, shape: &LoopShape) -> Option<String> {
        let Cin::Assign {
            target: Target::Temp(t),
            expr,
        } = body
        else {
            return None;
        };
        if shape.universe || shape.walked.len() != 1 {
            return None;
        }
        let driver = &shape.iterators[shape.walked[0]];
        let dst = &self.states[driver.operand];
        let props = driver.format.properties();
        if !(props.compact && props.ordered && props.unique)
            || driver.format.capabilities().iteration != Iteration::CoordinatePosition
            || driver.level + 1 != dst.level_vars.len()
            || dst.parent_run_end().is_some()
            || !matches!(driver.format.kind, LevelKind::Compressed | LevelKind::Singleton)
        {
            return None;
        }
        let mut factors_ops = Vec::new();
        if !product_of_accesses(expr, &mut factors_ops)
            || factors_ops.iter().filter(|&&a| a == driver.operand).count() != 1
        {
            return None;
        }
        let mut factors: SmallVec<[DotFactor; 2]> = SmallVec::new();
        let mut presences = vec![dst.present];
        for &a in &factors_ops {
            if a == driver.operand {
                continue;
            }
            let st = &self.states[a];
            let last = st.level_vars.len();
            let ok = st.done + 1 == last
                && st.level_vars[st.done] == *var
                && st.formats[st.done].kind == LevelKind::Dense
                && shape.located.iter().any(|&i| shape.iterators[i].operand == a);
            if !ok {
                return None;
            }
            factors.push(DotFactor {
                operand: a as u32,
                level: LevelRef::new(a, st.done),
                parent: st.parent_pos(),
            });
            presences.push(st.present);
        }
        let (acc, tpresent) = self.temps[t];
        let skip = self.skip_unless_all(&presences);
        let it = driver.clone();
        let (begin, end) = self.bounds(&it);
        self.ops.push(Op::DotBlock {
            driver: LevelRef::new(it.operand, it.level),
            begin,
            end,
            factors: factors.clone(),
            acc,
        });
        let nonempty = self.breg();
        self.ops.push(Op::ICmp {
            op: Cmp::Lt,
            dst: nonempty,
            a: begin,
            b: end,
        });
        self.ops.push(Op::BOr {
            dst: tpresent,
            a: tpresent,
            b: nonempty,
        });
        self.patch(skip);
        Some(format!("{} factors", factors.len() + 1))
    }

    /// Emits a jump over what follows unless every flag in `flags` is set;
    /// returns the jump to patch.
    fn skip_unless_all(&mut self, flags: &[BReg]) -> usize {
        let mut all = self.true_reg;
        for &p in flags {
            all = self.and_flags(all, p);
        }
        self.jump_unless(all)
    }

    /// The product of the values of fully bound operands (1 for none).
    fn product_of_values(&mut self, operands: &[usize]) -> FReg {
        let product = self.freg();
        self.ops.push(Op::FConst {
            dst: product,
            value: 1.0,
        });
        for &a in operands {
            let v = self.value(&CinExpr::Access(a));
            self.ops.push(Op::FBin {
                op: FloatOp::Mul,
                dst: product,
                a: product,
                b: v,
            });
        }
        product
    }

    fn assign(&mut self, target: &Target, expr: &CinExpr) {
        let nz = self.structural(expr);
        if nz == self.false_reg {
            return;
        }
        let skip = self.jump_unless(nz);
        let value = self.value(expr);
        match target {
            Target::Temp(t) => {
                let (acc, present) = self.temps[t];
                self.ops.push(Op::FBin {
                    op: FloatOp::Add,
                    dst: acc,
                    a: acc,
                    b: value,
                });
                self.ops.push(Op::BConst {
                    dst: present,
                    value: true,
                });
            }
            Target::Output => {
                let out = &self.lowered.output;
                if let Some(ws) = &self.workspace {
                    let coords: Regs = ws.iter().map(|v| self.var_regs[v]).collect();
                    self.ops.push(Op::WorkspaceAccum { coords, value });
                } else if let Some(o) = self.output_operand() {
                    let pos = self.states[o].position();
                    self.ops.push(Op::AccumOutput { pos, value });
                } else {
                    let coords: Regs = out.level_vars().iter().map(|v| self.var_regs[v]).collect();
                    self.ops.push(Op::Append { coords, value });
                }
            }
        }
        self.patch(skip);
    }

    /// Whether the expression may be nonzero here (operands present).
    fn structural(&mut self, expr: &CinExpr) -> BReg {
        match expr {
            CinExpr::Access(a) => self.states[*a].present,
            CinExpr::Literal(v) => {
                let b = self.breg();
                self.ops.push(Op::BConst {
                    dst: b,
                    value: *v != 0.0,
                });
                b
            }
            CinExpr::Temp(t) => self.temps[t].1,
            CinExpr::Neg(e) => self.structural(e),
            CinExpr::Binary { op, lhs, rhs } => {
                if *op == BinaryOp::Div {
                    return self.true_reg;
                }
                let l = self.structural(lhs);
                let r = self.structural(rhs);
                if *op == BinaryOp::Mul {
                    return self.and_flags(l, r);
                }
                if l == self.true_reg || r == self.true_reg {
                    return self.true_reg;
                }
                if l == self.false_reg {
                    return r;
                }
                if r == self.false_reg {
                    return l;
                }
                let b = self.breg();
                self.ops.push(Op::BOr { dst: b, a: l, b: r });
                b
            }
        }
    }

    /// The expression's value, absent operands reading as zero.
    fn value(&mut self, expr: &CinExpr) -> FReg {
        match expr {
            CinExpr::Access(a) => {
                if let Some(hoisted) = self.states[*a].value {
                    return hoisted;
                }
                let dst = self.freg();
                if self.states[*a].present == self.false_reg {
                    self.ops.push(Op::FConst { dst, value: 0.0 });
                    return dst;
                }
                let st = self.states[*a].clone();
                if st.present != self.true_reg {
                    self.ops.push(Op::FConst { dst, value: 0.0 });
                }
                let skip = self.jump_unless(st.present);
                self.ops.push(Op::LoadValue {
                    operand: *a as u32,
                    pos: st.position(),
                    dst,
                });
                self.patch(skip);
                dst
            }
            CinExpr::Literal(v) => {
                let dst = self.freg();
                self.ops.push(Op::FConst { dst, value: *v });
                dst
            }
            CinExpr::Temp(t) => self.temps[t].0,
            CinExpr::Neg(e) => {
                let a = self.value(e);
                let dst = self.freg();
                self.ops.push(Op::FNeg { dst, a });
                dst
            }
            CinExpr::Binary { op, lhs, rhs } => {
                let a = self.value(lhs);
                let b = self.value(rhs);
                let dst = self.freg();
                let op = match op {
                    BinaryOp::Add => FloatOp::Add,
                    BinaryOp::Sub => FloatOp::Sub,
                    BinaryOp::Mul => FloatOp::Mul,
                    BinaryOp::Div => FloatOp::Div,
                };
                self.ops.push(Op::FBin { op, dst, a, b });
                dst
            }
        }
    }
}

/// Whether `expr` is a product of accesses; collects them.
fn product_of_accesses(expr: &CinExpr, out: &mut Vec<usize>) -> bool {
    match expr {
        CinExpr::Access(a) => {
            out.push(*a);
            true
        }
        CinExpr::Binary {
            op: BinaryOp::Mul,
            lhs,
            rhs,
        } => product_of_accesses(lhs, out) && product_of_accesses(rhs, out),
        _ => false,
    }
}

/// `expr` with temporary `temp` replaced by `with`.
fn substitute(expr: &CinExpr, temp: TempId, with: &CinExpr) -> CinExpr {
    match expr {
        CinExpr::Temp(t) if *t == temp => with.clone(),
        CinExpr::Neg(e) => CinExpr::Neg(Box::new(substitute(e, temp, with))),
        CinExpr::Binary { op, lhs, rhs } => CinExpr::Binary {
            op: *op,
            lhs: Box::new(substitute(lhs, temp, with)),
            rhs: Box::new(substitute(rhs, temp, with)),
        },
        other => other.clone(),
    }
}
