//! Merge lattices: which iterators a loop must co-iterate, and in which
//! combinations the loop body has something to compute.
//!
//! Built per loop variable from the expression the loop computes: an
//! access whose level is iterated by this loop is an iterator; anything else
//! (a located level, a value fixed by outer loops, a literal) is the
//! *universe* — the empty point, present at every coordinate. `*` meets
//! lattices (intersection), `+`/`-` join them (union), and `/` joins them
//! with the universe: `a / b` is not zero where `b` is (dense meaning), and
//! the iterators of `a` and `b` are still co-iterated to read their values.
//!
//! Optimizations from the format paper: points that a point with a full
//! iterator makes redundant are pruned, and a lattice whose
//! points all hold the universe or a full iterator is iterated densely.

use std::collections::BTreeSet;
use std::fmt;

use crate::cin::{CinExpr, TempId};
use crate::notation::BinaryOp;

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
    /// iterator an operand contributes at this loop, if any; `temp_body(t)`
    /// is a temporary's expression when it is computed below this loop (its
    /// accesses then take part), `None` when it is already known here.
    /// `None` when the lattice (or a part of it) would have more than
    /// [`MAX_POINTS`] points.
    pub fn build(
        expr: &CinExpr,
        atom: &dyn Fn(usize) -> Option<usize>,
        temp_body: &dyn Fn(TempId) -> Option<CinExpr>,
    ) -> Option<Lattice> {
        let lattice = match expr {
            CinExpr::Access(a) => atom(*a).map_or_else(Lattice::universe, Lattice::iterator),
            CinExpr::Literal(_) => Lattice::universe(),
            CinExpr::Temp(t) => match temp_body(*t) {
                Some(body) => Lattice::build(&body, atom, temp_body)?,
                None => Lattice::universe(),
            },
            CinExpr::Neg(e) => Lattice::build(e, atom, temp_body)?,
            CinExpr::Binary { op, lhs, rhs } => {
                let l = Lattice::build(lhs, atom, temp_body)?;
                let r = Lattice::build(rhs, atom, temp_body)?;
                // Meeting two large lattices forms every pair of points
                // before duplicates go: refuse that before forming them.
                if l.points.len().saturating_mul(r.points.len()) > MAX_POINTS * 64 {
                    return None;
                }
                match op {
                    BinaryOp::Mul => l.meet(&r),
                    BinaryOp::Add | BinaryOp::Sub => l.join(&r),
                    // Every coordinate (the dense meaning), but the
                    // operands' iterators still take part: they must be
                    // co-iterated to read their values.
                    BinaryOp::Div => l.join(&r).join(&Lattice::universe()),
                }
            }
        };
        (lattice.points.len() <= MAX_POINTS).then_some(lattice)
    }
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
