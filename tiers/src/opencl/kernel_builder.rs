//! The OpenCL C instantiation of the block ops' [`KernelBuilder`]: floats
//! are `double` expressions, a run is its values' name and first position,
//! and a reduction over a range is a `for` loop over a `double` local.

use tessera_engine::block_ops::{KernelBuilder, Length};
use tessera_engine::bytecode::FloatOp;
use tessera_engine::notation::{Func, Reduction};
use tessera_formats::{ArrayRef, Builder};

use super::ctext::{double_literal, CText, CVal};
use super::source::{call, combine, output_sum};

impl KernelBuilder for CText {
    type Float = CVal;
    /// A `double2` expression.
    type Pair = CVal;
    /// The values' C name and the run's first position.
    type Run = (CVal, CVal);
    /// The `double` storage's C name and the target's first position.
    type Target = (CVal, CVal);
    type Coords = ArrayRef;

    fn float(&mut self, value: f64) -> CVal {
        self.val(double_literal(value))
    }

    fn coordinates(&mut self, array: ArrayRef) -> ArrayRef {
        array
    }

    fn coordinate(&mut self, coords: ArrayRef, position: CVal) -> CVal {
        self.load(coords, position)
    }

    fn combine(&mut self, reduction: Reduction, a: CVal, b: CVal) -> CVal {
        let (a, b) = (self.text(a), self.text(b));
        self.val(format!("({})", combine(reduction, &a, &b)))
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

    fn float_neg(&mut self, x: CVal) -> CVal {
        let x = self.text(x);
        self.val(format!("(-{x})"))
    }

    fn float_call(&mut self, func: Func, a: CVal, b: CVal) -> CVal {
        let (a, b) = (self.text(a), self.text(b));
        self.val(call(func, &a, &b))
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

    fn splat(&mut self, x: CVal) -> CVal {
        let x = self.text(x);
        self.val(format!("((double2)({x}))"))
    }

    fn pair_op(&mut self, op: FloatOp, a: CVal, b: CVal) -> CVal {
        // C's operators work lane by lane on `double2`.
        self.float_op(op, a, b)
    }

    fn run_pair(&mut self, run: (CVal, CVal), index: Length<CVal>) -> CVal {
        let first = self.run_at(run, index);
        let next = match index {
            Length::Fixed(c) => Length::Fixed(c + 1),
            Length::In(c) => {
                let c = self.text(c);
                Length::In(self.val(format!("({c} + 1)")))
            }
        };
        let second = self.run_at(run, next);
        let (first, second) = (self.text(first), self.text(second));
        self.val(format!("((double2)({first}, {second}))"))
    }

    fn output_target(&mut self, start: CVal) -> (CVal, CVal) {
        let start = self.text(start);
        (self.val("out"), self.val(format!("({start} - out_base)")))
    }

    fn target_offset(&mut self, target: (CVal, CVal), by: CVal) -> (CVal, CVal) {
        self.run_offset(target, by)
    }

    fn add_at(&mut self, target: (CVal, CVal), index: Length<CVal>, value: CVal) {
        let at = self.target_index(target, index);
        let value = self.text(value);
        self.line(format!("{at} += {value};"));
    }

    fn target_pair(&mut self, target: (CVal, CVal), index: Length<CVal>) -> CVal {
        let at = self.target_index(target, index);
        self.val(format!("vload2(0, &{at})"))
    }

    fn set_target_pair(&mut self, target: (CVal, CVal), index: Length<CVal>, pair: CVal) {
        let at = self.target_index(target, index);
        let pair = self.text(pair);
        self.line(format!("vstore2({pair}, 0, &{at});"));
    }

    fn run_offset(&mut self, (values, start): (CVal, CVal), by: CVal) -> (CVal, CVal) {
        let (start, by) = (self.text(start), self.text(by));
        (values, self.val(format!("{start} + {by}")))
    }

    fn add_to_output(&mut self, position: CVal, value: CVal) {
        let (position, value) = (self.text(position), self.text(value));
        self.line(format!("out[{position} - out_base] += {value};"));
    }

    fn for_range_by<F>(&mut self, begin: CVal, end: CVal, step: u32, mut body: F)
    where
        F: FnMut(&mut Self, CVal),
    {
        let i = self.fresh_name("i");
        let (begin, end) = (self.text(begin), self.text(end));
        self.open(format!("for (long {i} = {begin}; {i} < {end}; {i} += {step})"));
        let index = self.val(i);
        body(self, index);
        self.close();
    }

    fn fold_floats<const N: usize, F>(
        &mut self,
        begin: CVal,
        end: CVal,
        step: Length<CVal>,
        init: [CVal; N],
        body: F,
    ) -> [CVal; N]
    where
        F: FnMut(&mut Self, CVal, [CVal; N]) -> [CVal; N],
    {
        self.fold_locals("double", (begin, end, step), init, body)
    }

    fn when<F>(&mut self, cond: CVal, body: F)
    where
        F: FnOnce(&mut Self),
    {
        let cond = self.text(cond);
        self.open(format!("if ({cond})"));
        body(self);
        self.close();
    }

    fn workspace_word(&mut self, index: CVal) -> CVal {
        let index = self.text(index);
        let word = self.local("long", format!("(long)wsk[{index}]"));
        self.val(word)
    }

    fn set_workspace_word(&mut self, index: CVal, word: CVal) {
        let (index, word) = (self.text(index), self.text(word));
        self.line(format!("wsk[{index}] = (ulong)({word});"));
    }

    fn push_touched_key(&mut self, key: CVal) {
        let key = self.text(key);
        self.line(format!("wst[ws_count++] = (uint)({key});"));
    }

    fn add_to_workspace(&mut self, key: CVal, x: CVal) {
        let (key, x) = (self.text(key), self.text(x));
        let at = format!("wsv[{key}]");
        let sum = output_sum(self.output_type, &at, &format!("({x})"));
        self.line(format!("{at} = {sum};"));
    }

    fn workspace_stride(&mut self, d: usize) -> CVal {
        self.val(format!("ws_strides[{d}]"))
    }

    fn fold_pairs<const N: usize, F>(&mut self, begin: CVal, end: CVal, init: [CVal; N], body: F) -> [CVal; N]
    where
        F: FnMut(&mut Self, CVal, [CVal; N]) -> [CVal; N],
    {
        self.fold_locals("double2", (begin, end, Length::Fixed(1)), init, body)
    }
}

impl CText {
    /// A `for` loop over `begin`, `begin + step`, … below `end` carrying
    /// `N` locals of type `ty`: `state = init; state = body(i, state)`.
    fn fold_locals<const N: usize, F>(
        &mut self,
        ty: &str,
        (begin, end, step): (CVal, CVal, Length<CVal>),
        init: [CVal; N],
        mut body: F,
    ) -> [CVal; N]
    where
        F: FnMut(&mut Self, CVal, [CVal; N]) -> [CVal; N],
    {
        let i = self.fresh_name("i");
        let accs: [String; N] = std::array::from_fn(|_| self.fresh_name("acc"));
        for (acc, init) in accs.iter().zip(init) {
            let init = self.text(init);
            self.line(format!("{ty} {acc} = {init};"));
        }
        let (begin, end) = (self.text(begin), self.text(end));
        let step = match step {
            Length::Fixed(1) => format!("{i}++"),
            Length::Fixed(step) => format!("{i} += {step}"),
            Length::In(step) => format!("{i} += {}", self.text(step)),
        };
        self.open(format!("for (long {i} = {begin}; {i} < {end}; {step})"));
        let index = self.val(i);
        let sums = accs.clone().map(|acc| self.val(acc));
        let next = body(self, index, sums);
        // Every next value is computed before any is assigned: each may
        // read any of the sums.
        let next = next.map(|value| {
            let value = self.text(value);
            self.local(ty, value)
        });
        for (acc, next) in accs.iter().zip(&next) {
            self.line(format!("{acc} = {next};"));
        }
        self.close();
        accs.map(|acc| self.val(acc))
    }

    /// The C lvalue of a target's value `index`.
    fn target_index(&mut self, (values, start): (CVal, CVal), index: Length<CVal>) -> String {
        let (values, start) = (self.text(values), self.text(start));
        match index {
            Length::Fixed(0) => format!("{values}[{start}]"),
            Length::Fixed(c) => format!("{values}[{start} + {c}]"),
            Length::In(c) => format!("{values}[{start} + {}]", self.text(c)),
        }
    }
}
