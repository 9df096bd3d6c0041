//! Merge lattices: which iterators a loop must co-iterate, and in which
//! combinations the loop body has something to compute.
//!
//! Built per loop variable from the expression the loop computes: an
//! access whose level is iterated by this loop is an iterator; a located
//! level or a value fixed by outer loops is the *universe* — the empty
//! point, present at every coordinate; a literal, which is its own fill,
//! has no points at all.
//!
//! How an operation combines its operands' lattices follows from its
//! algebraic properties and its operands' *fills*, the values they have
//! where nothing is stored ([`fill`]): an operand whose fill annihilates
//! the operation makes the result absent where it is absent. Both operands
//! annihilating meet the lattices (`*`: intersection); one alone keeps its
//! points, with the other co-iterated to read its values; neither joins
//! them (`+`, `-`, `max` of sparse operands: union). Where the whole
//! expression's fill is not what the loop's target holds already (0 for
//! the output, the identity of a reduction), every coordinate has something
//! to compute and the loop adds the universe: `exp(a)`, `a + 1`, `a / b`
//! (`0 / 0` is NaN, the dense meaning).
//!
//! Optimizations from the format paper: points that a point with a full
//! iterator makes redundant are pruned, and a lattice whose
//! points all hold the universe or a full iterator is iterated densely.

use std::collections::BTreeSet;
use std::fmt;

use crate::cin::{CinExpr, TempId};
use crate::notation::Annihilators;

/// Most points a loop's lattice may have. A union of `n` sparse iterators
/// has `2^n - 1` points and planning a loop takes time quadratic in them, so
/// beyond this [`Lattice::build`] gives up (the engine refuses the statement
/// instead of planning for minutes): ten sparse terms added in one loop fit.
pub const MAX_POINTS: usize = 1024;

/// One lattice point: the iterators that must all have a coordinate. The
/// empty point is the universe.
pub type Point = BTreeSet<usize>;

/// A merge lattice: points ordered from the top (all iterators) down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lattice {
    pub points: Vec<Point>,
}

impl Lattice {
    /// The lattice of one iterator.
    pub fn iterator(it: usize) -> Self {
        Lattice {
            points: vec![BTreeSet::from([it])],
        }
    }

    /// The universe: present at every coordinate.
    pub fn universe() -> Self {
        Lattice {
            points: vec![BTreeSet::new()],
        }
    }

    /// The lattice of a constant: no points, as it never differs from its
    /// fill.
    pub fn constant() -> Self {
        Lattice { points: Vec::new() }
    }

    /// Whether the expression is a constant here.
    pub fn is_constant(&self) -> bool {
        self.points.is_empty()
    }

    /// Intersection (`*`).
    pub fn meet(&self, other: &Lattice) -> Lattice {
        let mut points = Vec::new();
        for p in &self.points {
            for q in &other.points {
                points.push(p.union(q).copied().collect());
            }
        }
        Lattice::ordered(points)
    }

    /// Union (`+`, `-`).
    pub fn join(&self, other: &Lattice) -> Lattice {
        let mut points = self.meet(other).points;
        points.extend(self.points.iter().cloned());
        points.extend(other.points.iter().cloned());
        Lattice::ordered(points)
    }

    fn ordered(mut points: Vec<Point>) -> Lattice {
        points.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        points.dedup();
        Lattice { points }
    }

    /// The top point: every iterator of the lattice.
    pub fn top(&self) -> Point {
        self.points.iter().flatten().copied().collect()
    }

    /// Whether the loop must visit every coordinate.
    pub fn has_universe(&self) -> bool {
        self.points.iter().any(BTreeSet::is_empty)
    }

    /// Drops points made redundant by a full iterator: a point `q` without
    /// full iterators goes when another point `p` that holds one needs only
    /// iterators of `q` besides its full ones. Full iterators never run out
    /// before the loop ends, so whenever `q`'s iterators all have
    /// coordinates left, so do `p`'s. (Only such points: in
    /// `b(j) + x(j) * c(j)` with `x` full, `{b}` stays, since `{x, c}` ends
    /// with `c`.)
    pub fn prune_below_full(&self, is_full: &dyn Fn(usize) -> bool) -> Lattice {
        let has_full = |p: &Point| p.iter().any(|&it| is_full(it));
        let points = self
            .points
            .iter()
            .filter(|q| {
                has_full(q)
                    || !self
                        .points
                        .iter()
                        .any(|p| has_full(p) && p.iter().all(|&it| is_full(it) || q.contains(&it)))
            })
            .cloned()
            .collect();
        Lattice { points }
    }

    /// Builds the lattice of `expr` for one loop. `atom(operand)` is the
    /// iterator an operand contributes at this loop, if any; temporaries
    /// are known here (those computed below are [`CinExpr::Reduced`]);
    /// `fills` gives operands' and temporaries' fills ([`fill`]). `None` when the lattice (or a part of it) would have more than
    /// [`MAX_POINTS`] points. The caller adds the universe where the
    /// expression's [`fill`] is not its target's.
    pub fn build(expr: &CinExpr, atom: &dyn Fn(usize) -> Option<usize>, fills: &Fills<'_>) -> Option<Lattice> {
        Lattice::build_with_fill(expr, atom, fills).map(|(lattice, _)| lattice)
    }

    /// The lattice of `expr` and its fill, in one pass.
    fn build_with_fill(
        expr: &CinExpr,
        atom: &dyn Fn(usize) -> Option<usize>,
        fills: &Fills<'_>,
    ) -> Option<(Lattice, Option<f64>)> {
        let build = |e: &CinExpr| Lattice::build_with_fill(e, atom, fills);
        let (lattice, fill) = match expr {
            CinExpr::Access(a) => (
                atom(*a).map_or_else(Lattice::universe, Lattice::iterator),
                Some((fills.operand)(*a)),
            ),
            CinExpr::Literal(v) => (Lattice::constant(), Some(*v)),
            CinExpr::Temp(t) | CinExpr::TempAt(t, _) => (Lattice::universe(), (fills.temp)(*t)),
            CinExpr::Neg(e) => {
                let (lattice, fill) = build(e)?;
                (lattice, fill.map(|v| -v))
            }
            CinExpr::Reduced { op, body } => {
                let (inner, fill) = build(body)?;
                if fill == Some(op.identity()) {
                    (inner, fill)
                } else {
                    (inner.join(&Lattice::universe()), None)
                }
            }
            CinExpr::Binary { op, lhs, rhs } => {
                Lattice::combine(op.annihilators(), build(lhs)?, build(rhs)?, |a, b| op.apply(a, b))?
            }
            CinExpr::Call { func, args } => match args.as_slice() {
                [arg] => {
                    let (lattice, fill) = build(arg)?;
                    (lattice, fill.map(|v| func.apply(&[v])))
                }
                [lhs, rhs] => Lattice::combine(func.annihilators(), build(lhs)?, build(rhs)?, |a, b| {
                    func.apply(&[a, b])
                })?,
                _ => unreachable!("functions take one or two arguments"),
            },
        };
        (lattice.points.len() <= MAX_POINTS).then_some((lattice, fill))
    }

    /// The lattice and fill of a binary operation with `annihilators`
    /// computing `apply`, from its operands'.
    fn combine(
        annihilators: Annihilators,
        (l, lfill): (Lattice, Option<f64>),
        (r, rfill): (Lattice, Option<f64>),
        apply: impl Fn(f64, f64) -> f64,
    ) -> Option<(Lattice, Option<f64>)> {
        // Meeting two large lattices forms every pair of points before
        // duplicates go: refuse that before forming them.
        if l.points.len().saturating_mul(r.points.len()) > MAX_POINTS * 64 {
            return None;
        }
        let absence = Absence::of_fills(annihilators, lfill, rfill, &apply);
        let fill = absence.fill(lfill, rfill, apply);
        let lattice = match absence {
            // An annihilating constant (`a * 0`) leaves nothing to compute,
            // but the other side's iterators still bind their levels.
            Absence::Both | Absence::Right if r.is_constant() => l,
            Absence::Both | Absence::Left if l.is_constant() => r,
            Absence::Both => l.meet(&r),
            // The annihilating side's points, the other side co-iterated
            // for its values.
            Absence::Left => l.meet(&r.join(&Lattice::universe())),
            Absence::Right => r.meet(&l.join(&Lattice::universe())),
            Absence::Either => l.join(&r),
        };
        Some((lattice, fill))
    }
}

/// The fills of a kernel's operands (their tensors') and of the
/// temporaries known where an expression is analysed.
pub struct Fills<'a> {
    pub operand: &'a dyn Fn(usize) -> f64,
    pub temp: &'a dyn Fn(TempId) -> Option<f64>,
}

impl Fills<'_> {
    /// Every operand's fill 0, no temporary known.
    pub const ZERO: Fills<'static> = Fills {
        operand: &|_| 0.0,
        temp: &|_| None,
    };
}

/// Where a binary operation is absent (has its fill), by which operands
/// are.
///
/// ```
/// use tessera_engine::cin::CinExpr;
/// use tessera_engine::lattice::{Absence, Fills};
/// use tessera_engine::notation::BinaryOp;
/// let (a, b) = (CinExpr::Access(0), CinExpr::Access(1));
/// let times = |x: f64, y: f64| BinaryOp::Mul.apply(x, y);
/// let absence = Absence::of(BinaryOp::Mul.annihilators(), &times, &a, &b, &Fills::ZERO);
/// assert_eq!(absence, Absence::Both);
/// // With b's absent entries +inf, 0 * inf is NaN: only where a is absent.
/// let fills = Fills { operand: &|k| if k == 1 { f64::INFINITY } else { 0.0 }, temp: &|_| None };
/// assert_eq!(Absence::of(BinaryOp::Mul.annihilators(), &times, &a, &b, &fills), Absence::Either);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Absence {
    /// Where either operand is absent: both fills annihilate.
    Both,
    /// Where the left operand is absent: its fill annihilates.
    Left,
    /// Where the right operand is absent.
    Right,
    /// Only where both are.
    Either,
}

impl Absence {
    /// How `lhs op rhs` is absent, for an operation with `annihilators`
    /// computing `apply`.
    pub fn of(
        annihilators: Annihilators,
        apply: &dyn Fn(f64, f64) -> f64,
        lhs: &CinExpr,
        rhs: &CinExpr,
        fills: &Fills<'_>,
    ) -> Absence {
        Absence::of_fills(annihilators, fill(lhs, fills), fill(rhs, fills), apply)
    }

    /// How an operation with `annihilators` computing `apply` is absent,
    /// from its operands' fills. A fill annihilates when it is an
    /// annihilator and stays one against the other side's fill, as IEEE
    /// computes it: `inf + -inf` is NaN, so a `+inf` fill does not
    /// annihilate a `-inf` one, and 0 does not annihilate a NaN fill.
    fn of_fills(
        annihilators: Annihilators,
        lfill: Option<f64>,
        rfill: Option<f64>,
        apply: &dyn Fn(f64, f64) -> f64,
    ) -> Absence {
        let same = |a: f64, b: f64| a == b || a.is_nan() && b.is_nan();
        let kills = |side: &[f64], f: Option<f64>, other: Option<f64>, at: &dyn Fn(f64, f64) -> f64| {
            f.is_some_and(|f| side.contains(&f) && other.is_none_or(|o| same(at(f, o), f)))
        };
        let left = kills(annihilators.left, lfill, rfill, &|l, r| apply(l, r));
        let right = kills(annihilators.right, rfill, lfill, &|r, l| apply(l, r));
        match (left, right) {
            (true, true) => Absence::Both,
            (true, false) => Absence::Left,
            (false, true) => Absence::Right,
            (false, false) => Absence::Either,
        }
    }

    /// The operation's fill.
    fn fill(self, lfill: Option<f64>, rfill: Option<f64>, apply: impl Fn(f64, f64) -> f64) -> Option<f64> {
        match self {
            Absence::Both | Absence::Left => lfill,
            Absence::Right => rfill,
            Absence::Either => Some(apply(lfill?, rfill?)),
        }
    }
}

/// The value of `expr` where none of its operands is stored: its *fill*.
/// An operand's is its tensor's fill, a literal is its own value, and a
/// temporary known here has its reduction's identity where no term was
/// combined, when absent terms vanish ([`Fills`]). `None` when the value
/// varies.
///
/// ```
/// use tessera_engine::cin::CinExpr;
/// use tessera_engine::lattice::{fill, Fills};
/// use tessera_engine::notation::Func;
/// let exp = CinExpr::Call { func: Func::Exp, args: vec![CinExpr::Access(0)] };
/// assert_eq!(fill(&exp, &Fills::ZERO), Some(1.0));
/// let distances = Fills { operand: &|_| f64::INFINITY, temp: &|_| None };
/// assert_eq!(fill(&exp, &distances), Some(f64::INFINITY));
/// ```
pub fn fill(expr: &CinExpr, fills: &Fills<'_>) -> Option<f64> {
    Lattice::build_with_fill(expr, &|_| None, fills).and_then(|(_, fill)| fill)
}

/// Prints points with iterator names.
pub struct LatticePrinter<'a> {
    pub lattice: &'a Lattice,
    pub names: &'a [String],
}

impl fmt::Display for LatticePrinter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let points: Vec<String> = self
            .lattice
            .points
            .iter()
            .map(|p| {
                if p.is_empty() {
                    "universe".to_string()
                } else {
                    let names: Vec<&str> = p.iter().map(|&it| self.names[it].as_str()).collect();
                    format!("{{{}}}", names.join(", "))
                }
            })
            .collect();
        write!(f, "{}", points.join(" > "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn product_of_two_iterators_is_one_point() {
        let l = Lattice::iterator(0).meet(&Lattice::iterator(1));
        assert_eq!(l.points, vec![BTreeSet::from([0, 1])]);
    }

    #[test]
    fn sum_of_two_iterators_has_three_points() {
        let l = Lattice::iterator(0).join(&Lattice::iterator(1));
        assert_eq!(
            l.points,
            vec![BTreeSet::from([0, 1]), BTreeSet::from([0]), BTreeSet::from([1])]
        );
    }

    #[test]
    fn universe_is_the_identity_of_meet_and_absorbs_join() {
        let it = Lattice::iterator(3);
        assert_eq!(it.meet(&Lattice::universe()), it);
        assert!(it.join(&Lattice::universe()).has_universe());
    }

    #[test]
    fn pruning_below_a_full_iterator_keeps_points_that_merge_it() {
        let l = Lattice::iterator(0).join(&Lattice::iterator(1));
        let pruned = l.prune_below_full(&|it| it == 0);
        assert_eq!(pruned.points, vec![BTreeSet::from([0, 1]), BTreeSet::from([0])]);
    }

    #[test]
    fn pruning_keeps_points_a_full_factor_of_a_product_does_not_cover() {
        // b + x * c with x (1) full: after c (2) runs out, b (0) goes on.
        let l = Lattice::iterator(0).join(&Lattice::iterator(1).meet(&Lattice::iterator(2)));
        let pruned = l.prune_below_full(&|it| it == 1);
        assert_eq!(
            pruned.points,
            vec![BTreeSet::from([0, 1, 2]), BTreeSet::from([1, 2]), BTreeSet::from([0])]
        );
    }
}
