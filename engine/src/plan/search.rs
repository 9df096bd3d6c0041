//! Binary searches emitted as bytecode, run once per chunk or block: the
//! first position of a range where a monotone test passes.

use tessera_formats::IntOp;

use super::Emitter;
use crate::bytecode::{BReg, IReg, Op};

impl Emitter<'_> {
    /// The first of `low..high` where `passes` holds (`high` when none
    /// does), for a test that fails up to some position and holds from
    /// there on. `low` and `high` are the caller's registers, moved by the
    /// search; `low` holds the answer.
    pub(super) fn first_passing(
        &mut self,
        low: IReg,
        high: IReg,
        passes: &mut dyn FnMut(&mut Self, IReg) -> BReg,
    ) -> IReg {
        let one = self.iconst(1);
        let top = self.label();
        let done = self.exit_unless_lt(low, high);
        let mid = self.ireg();
        self.int_op(IntOp::Add, mid, low, high);
        self.int_op(IntOp::Shr, mid, mid, one);
        let holds = passes(self, mid);
        let fails = self.jump_unless(holds);
        self.ops.push(Op::IMove { dst: high, src: mid });
        self.ops.push(Op::Jump { to: top });
        self.patch(fails);
        self.int_op(IntOp::Add, low, mid, one);
        self.ops.push(Op::Jump { to: top });
        self.patch(done);
        low
    }
}
