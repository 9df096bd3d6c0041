//! Iteration order: a total order of the loop variables that every level
//! which must be iterated can follow.
//!
//! Levels that cannot locate (compressed, singleton) give *hard* edges: all
//! variables of the levels above must be bound before the level's own. Temps
//! give hard edges too (a sum's free variables come before its own). Every
//! tensor's level order, including dense and located ones and the output,
//! gives *soft* edges, kept when they do not close a cycle: they make inner
//! loops walk memory in storage order.

use std::collections::BTreeSet;

use super::LoopVar;

/// Hard constraints that no order satisfies: the edges of `operand` closed a
/// cycle with those added before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderProblem {
    pub operand: usize,
}

/// Edges `before -> after` contributed by one source.
pub type Edges = Vec<(LoopVar, LoopVar)>;

/// Chooses an order of `vars`.
///
/// `fixed` edges (temps) must hold; `hard[k]` are operand `k`'s hard edges,
/// refused with [`OrderProblem`] when they cannot hold; `soft` sources are
/// tried in turn. Ties go to the variable earliest in `priority` (free
/// variables first, in the output's order, then summed ones).
pub fn choose_order(
    priority: &[LoopVar],
    fixed: &Edges,
    hard: &[Edges],
    soft: &[Edges],
) -> Result<Vec<LoopVar>, OrderProblem> {
    let mut edges: BTreeSet<(usize, usize)> = BTreeSet::new();
    let index = |v: &LoopVar| {
        priority
            .iter()
            .position(|p| p == v)
            .expect("every variable has a priority")
    };
    for (a, b) in fixed {
        edges.insert((index(a), index(b)));
    }
    for (operand, group) in hard.iter().enumerate() {
        let mut trial = edges.clone();
        trial.extend(group.iter().map(|(a, b)| (index(a), index(b))));
        if topological(priority.len(), &trial).is_none() {
            return Err(OrderProblem { operand });
        }
        edges = trial;
    }
    for group in soft {
        let mut trial = edges.clone();
        trial.extend(group.iter().map(|(a, b)| (index(a), index(b))));
        if topological(priority.len(), &trial).is_some() {
            edges = trial;
        }
    }
    let order = topological(priority.len(), &edges).expect("edges were kept acyclic");
    Ok(order.into_iter().map(|i| priority[i].clone()).collect())
}

/// Whether some order of `vars` satisfies every edge.
pub fn satisfiable(vars: &[LoopVar], edges: &Edges) -> bool {
    let index = |v: &LoopVar| vars.iter().position(|p| p == v);
    let mut indexed = BTreeSet::new();
    for (a, b) in edges {
        if let (Some(a), Some(b)) = (index(a), index(b)) {
            indexed.insert((a, b));
        }
    }
    topological(vars.len(), &indexed).is_some()
}

/// Kahn's algorithm, smallest available index first; `None` on a cycle.
fn topological(n: usize, edges: &BTreeSet<(usize, usize)>) -> Option<Vec<usize>> {
    let mut indegree = vec![0usize; n];
    for &(a, b) in edges {
        if a == b {
            return None;
        }
        indegree[b] += 1;
    }
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(n);
    for _ in 0..n {
        let next = (0..n).find(|&v| !done[v] && indegree[v] == 0)?;
        done[next] = true;
        order.push(next);
        for &(a, b) in edges {
            if a == next {
                indegree[b] -= 1;
            }
        }
    }
    Some(order)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::IndexVar;

    fn v(name: &str) -> LoopVar {
        LoopVar::Index(IndexVar::new(name))
    }

    #[test]
    fn gustavson_order_for_csr_times_csr() {
        let priority = [v("i"), v("j"), v("k")];
        let hard = vec![vec![(v("i"), v("k"))], vec![(v("k"), v("j"))]];
        let order = choose_order(&priority, &vec![], &hard, &[]).unwrap();
        assert_eq!(order, vec![v("i"), v("k"), v("j")]);
    }

    #[test]
    fn conflicting_hard_edges_name_the_operand() {
        let priority = [v("i"), v("j")];
        let hard = vec![vec![(v("i"), v("j"))], vec![(v("j"), v("i"))]];
        assert_eq!(
            choose_order(&priority, &vec![], &hard, &[]),
            Err(OrderProblem { operand: 1 })
        );
    }

    #[test]
    fn soft_edges_that_close_a_cycle_are_dropped() {
        let priority = [v("i"), v("j")];
        let hard = vec![vec![(v("j"), v("i"))]];
        let soft = vec![vec![(v("i"), v("j"))]];
        assert_eq!(
            choose_order(&priority, &vec![], &hard, &soft).unwrap(),
            vec![v("j"), v("i")]
        );
    }
}
