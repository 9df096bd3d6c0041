//! Concrete index notation: a statement lowered to loops (`forall`),
//! temporaries computed by inner loops (`where`), and workspaces that collect
//! out-of-order results before they are assembled into the output.
//!
//! Takes a checked [`Statement`](crate::notation::Statement) with explicit
//! sums and the formats of its tensors ([`lower`]); gives a [`Cin`] tree and
//! the [`Operands`] it reads, for the planner. Index variables are
//! [`LoopVar`]s: a statement's own variables, or variables derived from
//! them ([`Relation`]) that loops over structured levels run over.

mod defaults;
mod derived;
mod lower;
mod order;
mod precompute;
mod terms;

pub use derived::{Blocking, PositionSpace, Provenance, Relation, Sizes};
pub use lower::{lower, workspace_unsorted, Lowered, OutputAssembly, VarBound};
pub use order::{choose_order, OrderProblem};

use std::fmt;

use tessera_formats::{Format, FormatLevel};

use crate::notation::{BinaryOp, Func, IndexVar, Reduction};

/// A loop variable: an index variable of the statement, or one derived
/// from it or from a level's storage ([`Relation`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LoopVar {
    Index(IndexVar),
    Derived { name: String, relation: Relation },
}

impl LoopVar {
    pub fn name(&self) -> &str {
        match self {
            LoopVar::Index(v) => v.as_str(),
            LoopVar::Derived { name, .. } => name,
        }
    }

    /// The relation that defines a derived variable.
    pub fn relation(&self) -> Option<&Relation> {
        match self {
            LoopVar::Index(_) => None,
            LoopVar::Derived { relation, .. } => Some(relation),
        }
    }
}

impl fmt::Display for LoopVar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One tensor access of the statement, as the kernel reads it: the tensor
/// given under `name`, converted to `format` when `converted_from` says so.
#[derive(Clone, Debug, PartialEq)]
pub struct Operand {
    pub name: String,
    /// Which access it is: operand `id` of the kernel ([`OUTPUT`] for the
    /// output). Levels that store no mode iterate a variable of their own,
    /// told apart by it.
    pub id: usize,
    /// The index variable of each mode.
    pub vars: Vec<LoopVar>,
    /// The format the kernel iterates.
    pub format: Format,
    /// The value of the components the tensor does not store
    /// ([`Tensor::fill`](tessera_formats::Tensor::fill)).
    pub fill: f64,
    /// The format the caller gives, when the planner converts it first.
    pub converted_from: Option<(Format, String)>,
}

/// The [`Operand::id`] of a kernel's output.
pub const OUTPUT: usize = usize::MAX;

impl Operand {
    /// The loop variable of each level: its mode's variable, a block
    /// coordinate of it, or (for a level that stores no mode) the level's
    /// own variable.
    pub fn level_vars(&self) -> Vec<LoopVar> {
        self.format
            .levels()
            .iter()
            .enumerate()
            .map(|(k, l)| derived::level_var(self, k, l.projection))
            .collect()
    }

    /// The first level whose format and variable pass `test`, with its
    /// variable: where the schedule's checks look for a level at a
    /// variable that cannot do what a command needs.
    ///
    /// ```
    /// use tessera_engine::cin::{LoopVar, Operand};
    /// use tessera_engine::notation::IndexVar;
    /// use tessera_formats::{Format, Level};
    ///
    /// let v = |name: &str| LoopVar::Index(IndexVar::new(name));
    /// let a = Operand { name: "A".into(), id: 0, vars: vec![v("i"), v("j")], format: Format::csr(), fill: 0.0, converted_from: None };
    /// let (level, var) = a.find_level(|l, _| !l.level.capabilities().locate).unwrap();
    /// assert_eq!((level.level.name(), var.name()), ("compressed", "j"));
    /// ```
    pub fn find_level(&self, test: impl Fn(&FormatLevel, &LoopVar) -> bool) -> Option<(FormatLevel, LoopVar)> {
        self.format
            .levels()
            .iter()
            .zip(self.level_vars())
            .find(|(l, v)| test(l, v))
            .map(|(l, v)| (*l, v))
    }
}

/// All operands of a kernel; operand `k` is the `k`-th access on the right.
pub type Operands = Vec<Operand>;

/// A temporary scalar computed by a `where` producer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TempId(pub usize);

/// An expression over operands, literals and temporaries.
#[derive(Clone, Debug, PartialEq)]
pub enum CinExpr {
    Access(usize),
    Literal(f64),
    Temp(TempId),
    /// A vector temporary's component at the current coordinate of the
    /// variable that indexes it (a `precompute`'s workspace).
    TempAt(TempId, LoopVar),
    Neg(Box<CinExpr>),
    Binary {
        op: BinaryOp,
        lhs: Box<CinExpr>,
        rhs: Box<CinExpr>,
    },
    Call {
        func: Func,
        args: Vec<CinExpr>,
    },
    /// `body` combined by `op` over loops below: how a temporary computed
    /// below a loop appears in the expression the loop's lattice is built
    /// from (never emitted).
    Reduced {
        op: Reduction,
        body: Box<CinExpr>,
    },
}

impl CinExpr {
    /// Whether the expression divides or calls a function anywhere, or
    /// reduces by anything but a sum: then absent operands do not simply
    /// annihilate or add nothing.
    pub fn divides_or_calls(&self) -> bool {
        match self {
            CinExpr::Access(_) | CinExpr::Literal(_) | CinExpr::Temp(_) | CinExpr::TempAt(..) => false,
            CinExpr::Call { .. } => true,
            CinExpr::Neg(e) => e.divides_or_calls(),
            CinExpr::Reduced { op, body } => *op != Reduction::Sum || body.divides_or_calls(),
            CinExpr::Binary { op, lhs, rhs } => {
                *op == crate::notation::BinaryOp::Div || lhs.divides_or_calls() || rhs.divides_or_calls()
            }
        }
    }

    /// The expression with temporary `temp` replaced by `with`.
    pub fn substitute(&self, temp: TempId, with: &CinExpr) -> CinExpr {
        let sub = |e: &CinExpr| Box::new(e.substitute(temp, with));
        match self {
            CinExpr::Temp(t) | CinExpr::TempAt(t, _) if *t == temp => with.clone(),
            CinExpr::Neg(e) => CinExpr::Neg(sub(e)),
            CinExpr::Binary { op, lhs, rhs } => CinExpr::Binary {
                op: *op,
                lhs: sub(lhs),
                rhs: sub(rhs),
            },
            CinExpr::Call { func, args } => CinExpr::Call {
                func: *func,
                args: args.iter().map(|a| a.substitute(temp, with)).collect(),
            },
            CinExpr::Reduced { op, body } => CinExpr::Reduced {
                op: *op,
                body: sub(body),
            },
            other => other.clone(),
        }
    }

    /// Operands read by the expression (not through temporaries).
    pub fn operands(&self, out: &mut Vec<usize>) {
        match self {
            CinExpr::Access(a) => out.push(*a),
            CinExpr::Literal(_) | CinExpr::Temp(_) | CinExpr::TempAt(..) => {}
            CinExpr::Neg(e) => e.operands(out),
            CinExpr::Binary { lhs, rhs, .. } => {
                lhs.operands(out);
                rhs.operands(out);
            }
            CinExpr::Call { args, .. } => args.iter().for_each(|a| a.operands(out)),
            CinExpr::Reduced { body, .. } => body.operands(out),
        }
    }
    /// Temporaries read by the expression.
    pub fn temps(&self, out: &mut Vec<TempId>) {
        match self {
            CinExpr::Temp(t) | CinExpr::TempAt(t, _) => out.push(*t),
            CinExpr::Access(_) | CinExpr::Literal(_) => {}
            CinExpr::Neg(e) => e.temps(out),
            CinExpr::Binary { lhs, rhs, .. } => {
                lhs.temps(out);
                rhs.temps(out);
            }
            CinExpr::Call { args, .. } => args.iter().for_each(|a| a.temps(out)),
            CinExpr::Reduced { body, .. } => body.temps(out),
        }
    }
}

/// Where an assignment writes.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// The statement's output, at the current coordinates of its variables.
    Output,
    /// A temporary, combined from its reduction's identity by the
    /// reduction of its `where`.
    Temp(TempId),
    /// A vector temporary's component at the current coordinate of the
    /// variable that indexes it, combined likewise.
    TempAt(TempId, LoopVar),
}

/// A concrete index notation statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Cin {
    /// `forall var: body`.
    Forall { var: LoopVar, body: Box<Cin> },
    /// `consumer where producer`: the producer computes `temp` first,
    /// combining what it assigns by `reduction`. A temporary with an
    /// `index` is a vector, one component per coordinate of that variable
    /// (a `precompute`'s workspace), which the producer's loops fill and
    /// the consumer's loop over `index` reads.
    Where {
        temp: TempId,
        reduction: Reduction,
        index: Option<LoopVar>,
        producer: Box<Cin>,
        consumer: Box<Cin>,
    },
    /// `body` accumulates the output's `vars` into a workspace, which is then
    /// assembled into the output in the output's order.
    Workspace { vars: Vec<LoopVar>, body: Box<Cin> },
    /// `target += expr`: the output starts at zero, a temporary at its
    /// reduction's identity and combines by it.
    Assign { target: Target, expr: CinExpr },
    /// Statements run one after another, each adding into the same dense
    /// output: a sum computed term by term, each term by loops of its own
    /// ([`lower`]'s choice when its terms' tensors cannot be merged).
    Sequence(Vec<Cin>),
}

impl Cin {
    /// Whether `pred` holds of this statement or of any statement in it.
    ///
    /// ```
    /// use tessera_engine::cin::{Cin, CinExpr, LoopVar, Target};
    /// use tessera_engine::notation::IndexVar;
    ///
    /// let j = LoopVar::Index(IndexVar::new("j"));
    /// let body = Cin::Assign { target: Target::Output, expr: CinExpr::Literal(1.0) };
    /// let cin = Cin::Forall { var: j.clone(), body: Box::new(body) };
    /// assert!(cin.any(&|c| matches!(c, Cin::Forall { var, .. } if *var == j)));
    /// assert!(!cin.any(&|c| matches!(c, Cin::Workspace { .. })));
    /// ```
    pub fn any(&self, pred: &dyn Fn(&Cin) -> bool) -> bool {
        pred(self)
            || match self {
                Cin::Forall { body, .. } | Cin::Workspace { body, .. } => body.any(pred),
                Cin::Where { producer, consumer, .. } => producer.any(pred) || consumer.any(pred),
                Cin::Sequence(parts) => parts.iter().any(|p| p.any(pred)),
                Cin::Assign { .. } => false,
            }
    }
}

/// Printing context: operand names and variables.
pub struct CinPrinter<'a> {
    pub cin: &'a Cin,
    pub operands: &'a [Operand],
    pub output: &'a Operand,
}

impl CinPrinter<'_> {
    fn expr(&self, e: &CinExpr, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match e {
            CinExpr::Access(a) => access(&self.operands[*a], f),
            CinExpr::Literal(v) => write!(f, "{v}"),
            CinExpr::Temp(t) => write!(f, "t{}", t.0),
            CinExpr::TempAt(t, index) => write!(f, "t{}({index})", t.0),
            CinExpr::Neg(e) => {
                write!(f, "-(")?;
                self.expr(e, f)?;
                write!(f, ")")
            }
            CinExpr::Binary { op, lhs, rhs } => {
                write!(f, "(")?;
                self.expr(lhs, f)?;
                write!(f, " {} ", op.symbol())?;
                self.expr(rhs, f)?;
                write!(f, ")")
            }
            CinExpr::Call { func, args } => {
                write!(f, "{func}(")?;
                for (k, a) in args.iter().enumerate() {
                    if k > 0 {
                        write!(f, ", ")?;
                    }
                    self.expr(a, f)?;
                }
                write!(f, ")")
            }
            CinExpr::Reduced { op, body } => {
                write!(f, "{op}(")?;
                self.expr(body, f)?;
                write!(f, ")")
            }
        }
    }

    fn stmt(&self, s: &Cin, depth: usize, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pad = "  ".repeat(depth);
        match s {
            Cin::Forall { var, body } => {
                writeln!(f, "{pad}forall {var}")?;
                self.stmt(body, depth + 1, f)
            }
            Cin::Where {
                temp,
                reduction,
                index,
                producer,
                consumer,
            } => {
                let at = index.as_ref().map_or(String::new(), |v| format!("({v})"));
                match reduction {
                    Reduction::Sum => writeln!(f, "{pad}where t{}{at} =", temp.0)?,
                    op => writeln!(f, "{pad}where t{}{at} = {op} of", temp.0)?,
                }
                self.stmt(producer, depth + 2, f)?;
                writeln!(f, "{pad}in")?;
                self.stmt(consumer, depth + 1, f)
            }
            Cin::Workspace { vars, body } => {
                let names: Vec<&str> = vars.iter().map(LoopVar::name).collect();
                write!(f, "{pad}workspace w({}) assembled into ", names.join(","))?;
                access(self.output, f)?;
                writeln!(f)?;
                self.stmt(body, depth + 1, f)
            }
            Cin::Sequence(parts) => {
                for (k, part) in parts.iter().enumerate() {
                    if k > 0 {
                        writeln!(f, "{pad}then")?;
                    }
                    self.stmt(part, depth, f)?;
                }
                Ok(())
            }
            Cin::Assign { target, expr } => {
                write!(f, "{pad}")?;
                match target {
                    Target::Output => access(self.output, f)?,
                    Target::Temp(t) => write!(f, "t{}", t.0)?,
                    Target::TempAt(t, index) => write!(f, "t{}({index})", t.0)?,
                }
                write!(f, " += ")?;
                self.expr(expr, f)?;
                writeln!(f)
            }
        }
    }
}

fn access(op: &Operand, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let vars: Vec<&str> = op.vars.iter().map(LoopVar::name).collect();
    if vars.is_empty() {
        write!(f, "{}", op.name)
    } else {
        write!(f, "{}({})", op.name, vars.join(","))
    }
}

impl fmt::Display for CinPrinter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.stmt(self.cin, 0, f)
    }
}
