//! The OpenCL C instantiation of the block ops' [`KernelBuilder`]: floats
//! are `double` expressions, a run is its values' name and first position,
//! and a reduction over a range is a `for` loop over a `double` local.

use tessera_engine::block_ops::{KernelBuilder, Length};
use tessera_engine::bytecode::FloatOp;

use super::ctext::{double_literal, CText, CVal};

impl KernelBuilder for CText {
    type Float = CVal;
    /// The values' C name and the run's first position.
    type Run = (CVal, CVal);

    fn float(&mut self, value: f64) -> CVal {
        self.val(double_literal(value))
    }

    fn float_op(&mut self, op: FloatOp, a: CVal, b: CVal) -> CVal {
        let op = match op {
            FloatOp::Add => "+",
            FloatOp::Sub => "-",
            FloatOp::Mul => "*",
            FloatOp::Div => "/",
        };
        let (a, b) = (self.text(a), self.text(b));
        self.val(format!("({a} {op} {b})"))
    }

    fn value_run(&mut self, operand: u32, start: CVal) -> (CVal, CVal) {
        let values = self.values(operand);
        (self.val(values), start)
    }

    fn temp_run(&mut self, temp: u32) -> (CVal, CVal) {
        (self.val(format!("tmp{temp}")), self.val("0"))
    }

    fn run_at(&mut self, (values, start): (CVal, CVal), index: Length<CVal>) -> CVal {
        let (values, start) = (self.text(values), self.text(start));
        let index = match index {
            Length::Fixed(0) => start,
            Length::Fixed(c) => format!("{start} + {c}"),
            Length::In(c) => format!("{start} + {}", self.text(c)),
        };
        // Read as stored, converted to `double` before any arithmetic.
        self.val(format!("((double){values}[{index}])"))
    }

    fn run_offset(&mut self, (values, start): (CVal, CVal), by: CVal) -> (CVal, CVal) {
        let (start, by) = (self.text(start), self.text(by));
        (values, self.val(format!("{start} + {by}")))
    }

    fn add_to_output(&mut self, position: CVal, value: CVal) {
        let (position, value) = (self.text(position), self.text(value));
        self.line(format!("out[{position} - out_base] += {value};"));
    }

    fn for_range<F>(&mut self, begin: CVal, end: CVal, mut body: F)
    where
        F: FnMut(&mut Self, CVal),
    {
        let i = self.fresh_name("i");
        let (begin, end) = (self.text(begin), self.text(end));
        self.open(format!("for (long {i} = {begin}; {i} < {end}; {i}++)"));
        let index = self.val(i);
        body(self, index);
        self.close();
    }

    fn fold_range<F>(&mut self, begin: CVal, end: CVal, init: CVal, mut body: F) -> CVal
    where
        F: FnMut(&mut Self, CVal, CVal) -> CVal,
    {
        let (acc, i) = (self.fresh_name("acc"), self.fresh_name("i"));
        let (begin, end, init) = (self.text(begin), self.text(end), self.text(init));
        self.line(format!("double {acc} = {init};"));
        self.open(format!("for (long {i} = {begin}; {i} < {end}; {i}++)"));
        let (index, sum) = (self.val(i.clone()), self.val(acc.clone()));
        let next = body(self, index, sum);
        let next = self.text(next);
        self.line(format!("{acc} = {next};"));
        self.close();
        self.val(acc)
    }
}
