//! Schedules: commands that transform a statement's concrete index
//! notation without changing its result (paper `001_*`, with TACO's names
//! and argument order).
//!
//! A schedule is written as commands separated by `;`:
//! `reorder(i, k, j); parallelize(i, cpu_threads, no_races)`. The lowering
//! applies each command to the loops it builds and refuses, with the
//! command's column, one that would change the result or that the tensors'
//! storage cannot follow without a conversion.
//!
//! Commands run today: `reorder`, `split` and `divide` (of a variable a
//! level locates, or one a compressed level walks in order), `fuse` (alone,
//! over dense pairs) and `pos` (an operand's positions, or one fibre's, cut
//! into blocks by a `split` or `divide`), `parallelize` over `cpu_threads` or `cpu_vector`,
//! `unroll`, `bound`, and `precompute` of the whole right-hand side over an
//! output variable, or of some factors of its product over one of their
//! variables (a vector temporary, [`crate::cin::Cin::Where`]).

pub(crate) mod apply;
mod parse;
pub(crate) mod positions;
pub(crate) mod tags;

use std::fmt;

use crate::cin::Blocking;

pub use parse::parse_schedule;

/// A schedule: its commands in the order they apply.
///
/// ```
/// use tessera_engine::schedule::{RaceStrategy, Schedule};
///
/// let typed = Schedule::new()
///     .reorder(&["i", "k", "j"])
///     .parallelize("i", RaceStrategy::NoRaces);
/// let parsed: Schedule = "reorder(i,k,j); parallelize(i, cpu_threads, no_races)".parse().unwrap();
/// assert_eq!(typed.to_string(), parsed.to_string());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Schedule {
    commands: Vec<Placed>,
}

/// A command and the 1-based column of the schedule text it starts at (0
/// for commands built in Rust).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    pub command: Command,
    pub column: usize,
}

/// One scheduling command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Loops over these variables nest in this order.
    Reorder(Vec<String>),
    /// `split` and `divide`: the loop over `var` becomes a loop over
    /// `outer` (its blocks) around a loop over `inner` (the place in the
    /// block), `var = outer·b + inner`, the last block cut at the
    /// dimension. `split` gives the block size ([`Blocking::Size`]),
    /// `divide` the number of blocks ([`Blocking::Parts`]; the size
    /// `⌈n / parts⌉` is known at run time).
    Split {
        var: String,
        outer: String,
        inner: String,
        blocking: Blocking,
    },
    /// `expr` is computed over `var` into a workspace named `workspace`
    /// (indexed by `workspace_var`, a new name for the loop over `var`).
    /// The whole right-hand side is assembled into the output from it;
    /// some factors of its product are summed over the variables only they
    /// use into a vector over `var`, which the other factors' loop over
    /// `var` reads.
    Precompute {
        expr: String,
        var: String,
        workspace_var: String,
        workspace: String,
    },
    /// The loops over `outer` and `inner`, directly nested, become one
    /// loop over `fused`, their pairs in the same order. A fused variable
    /// is iterated in an operand's positions ([`Command::Pos`]), or alone
    /// over every pair of coordinates, recovered by division (every level
    /// at the pair must locate, and the output must be dense).
    Fuse {
        outer: String,
        inner: String,
        fused: String,
    },
    /// The loop over `var` (a statement variable or a fused one) runs over
    /// `tensor`'s positions at it, named `pos_var`: the stored entries in
    /// storage order, which a `split` of `pos_var` cuts into blocks of
    /// equal work.
    Pos {
        var: String,
        pos_var: String,
        tensor: String,
    },
    /// The loop over `var` runs its chunks on every core, its output kept
    /// free of races by `races`.
    Parallelize { var: String, races: RaceStrategy },
    /// `parallelize(var, cpu_vector, races)`: the loop over `var` runs in
    /// [`VECTOR_LANES`] lanes. A vector loop has nothing inside it, so its
    /// loop moves innermost (the loops the order put inside it run outside
    /// it), where each pass runs one lane per copy of the body, or a block
    /// op the Cranelift tier runs in SIMD lanes. Each output component gets
    /// its operations in the order the moved loops give it; lanes run in
    /// one thread, so no strategy is needed against races.
    Vectorize { var: String, races: RaceStrategy },
    /// The loop over `var` runs its body `factor` times per trip back to
    /// its test, each copy guarded by its own test.
    Unroll { var: String, factor: usize },
    /// The loop over `var`, named `bound_var` from here on, runs to the
    /// constant `size` (`max_exact`) or to at most `size`
    /// (`max_constraint`); a run whose inputs break the bound is refused.
    Bound {
        var: String,
        bound_var: String,
        size: usize,
        kind: BoundKind,
    },
}

/// How many lanes a `cpu_vector` loop runs per pass: four `f64`s, two
/// SIMD registers of the Cranelift tier's `f64x2`.
pub const VECTOR_LANES: usize = 4;

/// What a `bound` promises of its variable's size (the paper's bound
/// types that fix the end of the range).
///
/// ```
/// use tessera_engine::schedule::BoundKind;
///
/// assert!(BoundKind::MaxExact.holds(100, 100));
/// assert!(!BoundKind::MaxExact.holds(99, 100));
/// assert!(BoundKind::MaxConstraint.holds(99, 100));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoundKind {
    /// The variable has exactly this many coordinates: the loop's extent
    /// is a constant in the code.
    MaxExact,
    /// The variable has at most this many coordinates.
    MaxConstraint,
}

impl BoundKind {
    /// The name in the schedule text.
    pub fn name(self) -> &'static str {
        match self {
            BoundKind::MaxExact => "max_exact",
            BoundKind::MaxConstraint => "max_constraint",
        }
    }

    /// Whether a variable of `n` coordinates keeps the bound `size`.
    pub fn holds(self, n: usize, size: usize) -> bool {
        match self {
            BoundKind::MaxExact => n == size,
            BoundKind::MaxConstraint => n <= size,
        }
    }
}

/// How a parallel loop keeps threads from writing the same output
/// component at once (the paper's output race strategies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RaceStrategy {
    /// The loop must be one whose chunks write disjoint parts of the
    /// output; refused otherwise.
    NoRaces,
    /// Threads may add into the same components. tessera gives each chunk
    /// its own partial output and adds the partials in chunk order, which
    /// is what atomics would compute, in the same bits for any number of
    /// threads.
    Atomics,
    /// Each thread accumulates into a temporary of its own, added up after.
    Temporary,
    /// The caller asserts there are no races. Chunks that would add into
    /// one component still get partials, so the result stays right.
    IgnoreRaces,
    /// Lanes of a vector loop reduce into one component together (TACO's
    /// strategy for `cpu_vector`; threads use `temporary` or `atomics`).
    ParallelReduction,
}

impl RaceStrategy {
    /// The name in the schedule text.
    pub fn name(self) -> &'static str {
        match self {
            RaceStrategy::NoRaces => "no_races",
            RaceStrategy::Atomics => "atomics",
            RaceStrategy::Temporary => "temporary",
            RaceStrategy::IgnoreRaces => "ignore_races",
            RaceStrategy::ParallelReduction => "parallel_reduction",
        }
    }

    /// Every strategy, in the order the text lists them.
    pub const ALL: [RaceStrategy; 5] = [
        RaceStrategy::NoRaces,
        RaceStrategy::Atomics,
        RaceStrategy::Temporary,
        RaceStrategy::IgnoreRaces,
        RaceStrategy::ParallelReduction,
    ];
}

impl Schedule {
    /// The empty schedule: the planner's defaults.
    pub fn new() -> Schedule {
        Schedule::default()
    }

    /// Adds `reorder(vars...)`.
    #[must_use]
    pub fn reorder(mut self, vars: &[&str]) -> Schedule {
        self.push(Command::Reorder(vars.iter().map(|v| v.to_string()).collect()));
        self
    }

    /// Adds `split(var, outer, inner, factor)`.
    #[must_use]
    pub fn split(mut self, var: &str, outer: &str, inner: &str, factor: usize) -> Schedule {
        self.push(Command::Split {
            var: var.to_string(),
            outer: outer.to_string(),
            inner: inner.to_string(),
            blocking: Blocking::Size(factor),
        });
        self
    }

    /// Adds `divide(var, outer, inner, parts)`.
    #[must_use]
    pub fn divide(mut self, var: &str, outer: &str, inner: &str, parts: usize) -> Schedule {
        self.push(Command::Split {
            var: var.to_string(),
            outer: outer.to_string(),
            inner: inner.to_string(),
            blocking: Blocking::Parts(parts),
        });
        self
    }

    /// Adds `fuse(outer, inner, fused)`.
    ///
    /// ```
    /// use tessera_engine::schedule::{RaceStrategy, Schedule};
    ///
    /// // The paper's SpMV over A's stored entries, in blocks of 16.
    /// let typed = Schedule::new()
    ///     .fuse("i", "j", "f")
    ///     .pos("f", "p", "A")
    ///     .split("p", "p0", "p1", 16)
    ///     .parallelize("p0", RaceStrategy::Atomics);
    /// let parsed: Schedule = "fuse(i, j, f); pos(f, p, A(i,j)); split(p, p0, p1, 16); parallelize(p0, cpu_threads, atomics)"
    ///     .parse()
    ///     .unwrap();
    /// assert_eq!(typed.to_string(), parsed.to_string());
    /// ```
    #[must_use]
    pub fn fuse(mut self, outer: &str, inner: &str, fused: &str) -> Schedule {
        self.push(Command::Fuse {
            outer: outer.to_string(),
            inner: inner.to_string(),
            fused: fused.to_string(),
        });
        self
    }

    /// Adds `pos(var, pos_var, tensor)`.
    #[must_use]
    pub fn pos(mut self, var: &str, pos_var: &str, tensor: &str) -> Schedule {
        self.push(Command::Pos {
            var: var.to_string(),
            pos_var: pos_var.to_string(),
            tensor: tensor.to_string(),
        });
        self
    }

    /// Adds `precompute(expr, var, workspace_var, workspace)`: `expr`, the
    /// whole right-hand side or some factors of its product, computed over
    /// `var` into a workspace first.
    ///
    /// ```
    /// use tessera_engine::schedule::Schedule;
    /// use tessera_engine::Engine;
    /// use tessera_formats::Format;
    ///
    /// // MTTKRP with Σl B(i,k,l)·D(l,j) computed into a vector over j.
    /// let schedule = Schedule::new().precompute("B(i,k,l) * D(l,j)", "j", "j", "w");
    /// let formats = [("B", Format::csf(3)), ("C", Format::dense(2)), ("D", Format::dense(2))];
    /// let kernel = Engine::new()
    ///     .compile_scheduled("A(i,j) = B(i,k,l) * C(k,j) * D(l,j)", &formats, &Format::dense(2), &schedule)
    ///     .unwrap();
    /// assert!(kernel.plan().contains("t0(j) holds B(i,k,l) * D(l,j) summed over l"));
    /// ```
    #[must_use]
    pub fn precompute(mut self, expr: &str, var: &str, workspace_var: &str, workspace: &str) -> Schedule {
        self.push(Command::Precompute {
            expr: expr.to_string(),
            var: var.to_string(),
            workspace_var: workspace_var.to_string(),
            workspace: workspace.to_string(),
        });
        self
    }

    /// Adds `unroll(var, factor)`.
    ///
    /// ```
    /// use tessera_engine::schedule::Schedule;
    ///
    /// let s = Schedule::new().split("i", "i0", "i1", 8).unroll("i1", 8);
    /// assert_eq!(s.to_string(), "split(i, i0, i1, 8); unroll(i1, 8)");
    /// ```
    #[must_use]
    pub fn unroll(mut self, var: &str, factor: usize) -> Schedule {
        self.push(Command::Unroll {
            var: var.to_string(),
            factor,
        });
        self
    }

    /// Adds `bound(var, bound_var, size, kind)`.
    #[must_use]
    pub fn bound(mut self, var: &str, bound_var: &str, size: usize, kind: BoundKind) -> Schedule {
        self.push(Command::Bound {
            var: var.to_string(),
            bound_var: bound_var.to_string(),
            size,
            kind,
        });
        self
    }

    /// The schedule with the names `bound` gives variables replaced by the
    /// variables' own in the commands after it: a bound variable is the
    /// variable, its loop tagged.
    ///
    /// ```
    /// use tessera_engine::schedule::{BoundKind, Schedule};
    ///
    /// let s = Schedule::new().bound("i", "ib", 64, BoundKind::MaxConstraint).unroll("ib", 2);
    /// assert_eq!(s.resolved().to_string(), "bound(i, ib, 64, max_constraint); unroll(i, 2)");
    /// let p: Schedule = "precompute(A(i,j) * x(j), i, iw, w); unroll(iw, 2)".parse().unwrap();
    /// assert_eq!(p.resolved().to_string(), "precompute(A(i,j) * x(j), i, i, w); unroll(i, 2)");
    /// ```
    pub fn resolved(&self) -> Schedule {
        let mut aliases: Vec<(String, String)> = Vec::new();
        let mut commands = Vec::with_capacity(self.commands.len());
        for placed in &self.commands {
            let name = |v: &String| {
                aliases
                    .iter()
                    .rev()
                    .find(|(alias, _)| alias == v)
                    .map_or_else(|| v.clone(), |(_, of)| of.clone())
            };
            let command = match &placed.command {
                Command::Reorder(vars) => Command::Reorder(vars.iter().map(name).collect()),
                Command::Split {
                    var,
                    outer,
                    inner,
                    blocking,
                } => Command::Split {
                    var: name(var),
                    outer: outer.clone(),
                    inner: inner.clone(),
                    blocking: *blocking,
                },
                Command::Fuse { outer, inner, fused } => Command::Fuse {
                    outer: name(outer),
                    inner: name(inner),
                    fused: fused.clone(),
                },
                Command::Pos { var, pos_var, tensor } => Command::Pos {
                    var: name(var),
                    pos_var: pos_var.clone(),
                    tensor: tensor.clone(),
                },
                Command::Precompute {
                    expr,
                    var,
                    workspace_var,
                    workspace,
                } => {
                    // The workspace's loop is the loop over `var`: a new
                    // name for it.
                    let var = name(var);
                    if *workspace_var != var {
                        aliases.push((workspace_var.clone(), var.clone()));
                    }
                    Command::Precompute {
                        expr: expr.clone(),
                        var: var.clone(),
                        workspace_var: var,
                        workspace: workspace.clone(),
                    }
                }
                Command::Parallelize { var, races } => Command::Parallelize {
                    var: name(var),
                    races: *races,
                },
                Command::Vectorize { var, races } => Command::Vectorize {
                    var: name(var),
                    races: *races,
                },
                Command::Unroll { var, factor } => Command::Unroll {
                    var: name(var),
                    factor: *factor,
                },
                Command::Bound {
                    var,
                    bound_var,
                    size,
                    kind,
                } => {
                    let var = name(var);
                    aliases.push((bound_var.clone(), var.clone()));
                    Command::Bound {
                        var,
                        bound_var: bound_var.clone(),
                        size: *size,
                        kind: *kind,
                    }
                }
            };
            commands.push(Placed {
                command,
                column: placed.column,
            });
        }
        Schedule { commands }
    }

    /// Adds `parallelize(var, cpu_threads, races)`.
    #[must_use]
    pub fn parallelize(mut self, var: &str, races: RaceStrategy) -> Schedule {
        self.push(Command::Parallelize {
            var: var.to_string(),
            races,
        });
        self
    }

    /// Adds `parallelize(var, cpu_vector, races)`.
    ///
    /// ```
    /// use tessera_engine::schedule::{RaceStrategy, Schedule};
    ///
    /// let s = Schedule::new().vectorize("k", RaceStrategy::IgnoreRaces);
    /// assert_eq!(s.to_string(), "parallelize(k, cpu_vector, ignore_races)");
    /// ```
    #[must_use]
    pub fn vectorize(mut self, var: &str, races: RaceStrategy) -> Schedule {
        self.push(Command::Vectorize {
            var: var.to_string(),
            races,
        });
        self
    }

    fn push(&mut self, command: Command) {
        self.commands.push(Placed { command, column: 0 });
    }

    /// The commands, in order.
    pub fn commands(&self) -> &[Placed] {
        &self.commands
    }

    /// Whether the schedule has no command.
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    /// The column of the first command that makes a variable named
    /// `name` (0 when none does).
    pub(crate) fn column_naming(&self, name: &str) -> usize {
        self.commands
            .iter()
            .find(|p| match &p.command {
                Command::Fuse { fused, .. } => fused == name,
                Command::Split { outer, inner, .. } => outer == name || inner == name,
                Command::Pos { pos_var, .. } => pos_var == name,
                _ => false,
            })
            .map_or(0, |p| p.column)
    }

    /// The `parallelize` command, if any (the last one wins).
    pub fn parallel(&self) -> Option<(&str, RaceStrategy, usize)> {
        self.commands.iter().rev().find_map(|p| match &p.command {
            Command::Parallelize { var, races } => Some((var.as_str(), *races, p.column)),
            _ => None,
        })
    }
}

impl std::str::FromStr for Schedule {
    type Err = crate::EngineError;
    fn from_str(text: &str) -> crate::Result<Schedule> {
        parse_schedule(text)
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Command::Reorder(vars) => write!(f, "reorder({})", vars.join(", ")),
            Command::Split {
                var,
                outer,
                inner,
                blocking: Blocking::Size(factor),
            } => write!(f, "split({var}, {outer}, {inner}, {factor})"),
            Command::Split {
                var,
                outer,
                inner,
                blocking: Blocking::Parts(parts),
            } => write!(f, "divide({var}, {outer}, {inner}, {parts})"),
            Command::Fuse { outer, inner, fused } => write!(f, "fuse({outer}, {inner}, {fused})"),
            Command::Pos { var, pos_var, tensor } => write!(f, "pos({var}, {pos_var}, {tensor})"),
            Command::Parallelize { var, races } => {
                write!(f, "parallelize({var}, cpu_threads, {})", races.name())
            }
            Command::Precompute {
                expr,
                var,
                workspace_var,
                workspace,
            } => write!(f, "precompute({expr}, {var}, {workspace_var}, {workspace})"),
            Command::Vectorize { var, races } => {
                write!(f, "parallelize({var}, cpu_vector, {})", races.name())
            }
            Command::Unroll { var, factor } => write!(f, "unroll({var}, {factor})"),
            Command::Bound {
                var,
                bound_var,
                size,
                kind,
            } => write!(f, "bound({var}, {bound_var}, {size}, {})", kind.name()),
        }
    }
}

/// The canonical text: commands separated by `; `. Kernels are cached by it.
impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, p) in self.commands.iter().enumerate() {
            if k > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{}", p.command)?;
        }
        Ok(())
    }
}
