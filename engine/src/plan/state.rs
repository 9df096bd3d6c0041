//! Compile-time state of one operand while loops are emitted: how many of
//! its levels are bound, and the registers holding their positions.

use tessera_formats::LevelFormat;

use crate::bytecode::{BReg, FReg, IReg};
use crate::cin::{LoopVar, Operand};

#[derive(Clone, Debug)]
pub(super) struct OperandState {
    pub formats: Vec<LevelFormat>,
    pub level_vars: Vec<LoopVar>,
    /// Levels bound so far.
    pub done: usize,
    /// Position register of each bound level.
    pub positions: Vec<IReg>,
    /// For a bound non-unique level, the end of the run of equal coordinates.
    pub run_ends: Vec<Option<IReg>>,
    /// Whether every bound level holds the current coordinates.
    pub present: BReg,
    /// The operand's value, once every level is bound and the value is
    /// known to be stored: loaded there, so inner loops do not reload it.
    pub value: Option<FReg>,
    root: IReg,
}

impl OperandState {
    pub fn new(op: &Operand, always: BReg, root: IReg) -> Self {
        let mut formats: Vec<LevelFormat> = op.format.levels().iter().map(|l| l.level).collect();
        // A coordinate repeated at the last level is another entry with its
        // own value, and there are no children to chain below it: loops
        // visit each position, not runs of equal coordinates.
        if let Some(last) = formats.last_mut() {
            last.unique = true;
        }
        OperandState {
            formats,
            level_vars: op.level_vars(),
            done: 0,
            positions: Vec::new(),
            run_ends: Vec::new(),
            present: always,
            value: None,
            root,
        }
    }

    /// Position of the last bound level (the root position before any).
    pub fn parent_pos(&self) -> IReg {
        self.positions.last().copied().unwrap_or(self.root)
    }

    /// When the last bound level is non-unique, the end of its run.
    pub fn parent_run_end(&self) -> Option<IReg> {
        self.run_ends.last().copied().flatten()
    }

    /// The value position: the position of the last level.
    pub fn position(&self) -> IReg {
        debug_assert_eq!(
            self.done,
            self.level_vars.len(),
            "values are read once every level is bound"
        );
        self.parent_pos()
    }

    /// Whether the next level to bind is the last one, dense, and stores `var`:
    /// a row the block ops read directly.
    pub fn next_is_dense_last_at(&self, var: &LoopVar) -> bool {
        self.done + 1 == self.level_vars.len()
            && self.level_vars[self.done] == *var
            && self.formats[self.done].kind == tessera_formats::LevelKind::Dense
    }

    pub fn bind(&mut self, pos: IReg, run_end: Option<IReg>, present: BReg) {
        self.positions.push(pos);
        self.run_ends.push(run_end);
        self.present = present;
        self.done += 1;
    }
}
