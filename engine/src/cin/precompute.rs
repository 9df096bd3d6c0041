//! A `precompute` of some of the factors of the right-hand side: they are
//! computed into a vector temporary over the command's variable, summed
//! over the variables only they use, and the rest of the product reads
//! the temporary's component in its loop over the variable.
//!
//! MTTKRP's `A(i,j) = B(i,k,l) * D(l,j) * C(k,j)` with
//! `precompute(B(i,k,l) * D(l,j), j, j, w)` computes, for each `(i,k)`,
//! `w(j) = Σl B(i,k,l)·D(l,j)` over every `j`, then `A(i,j) += w(j)·C(k,j)`:
//! the sum over `l` no longer runs again for each `j`'s factor of `C`.

use std::collections::BTreeSet;

use tessera_formats::{CoordinateRelation, Format, Level, Projection};

use super::LoopVar;
use crate::error::Result;
use crate::notation::{BinaryOp, Expr, IndexVar};
use crate::schedule::apply::Precompute;

/// The right-hand side split by a `precompute` of some of its factors.
pub(super) struct PrecomputedPart {
    /// The product of the precomputed factors.
    pub factors: Expr,
    /// The product of the other factors.
    pub rest: Expr,
    /// The sums only the precomputed factors use: the temporary sums them.
    pub sums: Vec<LoopVar>,
    /// The variable the temporary is a vector over.
    pub index: LoopVar,
}

impl PrecomputedPart {
    /// What the plan says of it: temporary `temp`'s sums, and the loops
    /// around it (`enclosing`).
    pub fn describe(&self, command: &str, temp: usize, enclosing: &BTreeSet<LoopVar>) -> String {
        let names = |vars: &mut dyn Iterator<Item = &LoopVar>| vars.map(LoopVar::name).collect::<Vec<_>>().join(", ");
        let summed = if self.sums.is_empty() {
            String::new()
        } else {
            format!(" summed over {}", names(&mut self.sums.iter()))
        };
        let once = if enclosing.is_empty() {
            "once per run".to_string()
        } else {
            format!("once per ({})", names(&mut enclosing.iter()))
        };
        format!(
            "{command}: t{temp}({index}) holds {}{summed} at every {index}, computed {once}; the rest of the product reads it",
            self.factors,
            index = self.index
        )
    }
}

/// Which factors of `body` (the right-hand side below its top sums
/// `top_sums`) `command` precomputes: `None` when it is all of them (the
/// whole right-hand side, which the output's workspace collects). A sum
/// the schedule's `reorder` puts outside the variable's loop (`outside`)
/// stays outside the temporary, as in TACO's MTTKRP schedule, whose
/// `reorder(i1, i2, k, l, j)` keeps `w(j) = B(i,k,l)·C(k,j)` a product for
/// each `(i,k,l)`.
/// Refused: an expression that is not a product of factors of the
/// right-hand side, and a variable the temporary would not be a vector
/// over (one the factors do not use, or sum over alone).
pub(super) fn precomputed_part(
    command: &Precompute,
    top_sums: &[LoopVar],
    body: &Expr,
    outside: &dyn Fn(&LoopVar) -> bool,
) -> Result<Option<PrecomputedPart>> {
    let mut rest: Vec<&Expr> = body.factors();
    let mut taken: Vec<&Expr> = Vec::new();
    for wanted in command.expr.factors() {
        let text = wanted.to_string();
        let Some(at) = rest.iter().position(|f| f.to_string() == text) else {
            return Err(command.refuse(format!(
                "precompute's expression {} is not a product of factors of the right-hand side {body}: {text} is not one of them",
                command.expr
            )));
        };
        taken.push(rest.remove(at));
    }
    if rest.is_empty() {
        return Ok(None);
    }
    let taken_vars = vars_of(&taken);
    let rest_vars = vars_of(&rest);
    let sums: Vec<LoopVar> = top_sums
        .iter()
        .filter(|v| taken_vars.contains(v) && !rest_vars.contains(v) && !outside(v))
        .cloned()
        .collect();
    let index = LoopVar::Index(IndexVar::new(&command.var));
    if !taken_vars.contains(&index) {
        return Err(command.refuse(format!(
            "precompute over {index}, which {} does not use: its workspace is a vector over one of its variables",
            command.expr
        )));
    }
    if sums.contains(&index) {
        return Err(command.refuse(format!(
            "precompute over {index}, which only {} uses, and sums over: the rest of the product must read the workspace at {index}",
            command.expr
        )));
    }
    Ok(Some(PrecomputedPart {
        factors: product(&taken),
        rest: product(&rest),
        sums,
        index,
    }))
}

/// The default rule: factors whose sum no other factor shares, and whose
/// result depends on one variable only, are precomputed into a vector over
/// it once per run, when the rest of the product loops over another
/// variable, which would compute them again at each of its coordinates
/// (`y(i) = A(i,j) * B(j,k) * x(k)` computes `Σk B(j,k)·x(k)` once per
/// `j`, not once per `(i,j)`). `free` is the output's variables. The
/// vector must be no larger than storage an input already has: one of the
/// precomputed tensors (`input_format` gives their formats) stores its
/// variable in a level whose positions are its coordinates (dense).
pub(super) fn invariant_part(
    top_sums: &[LoopVar],
    body: &Expr,
    free: &[LoopVar],
    input_format: &dyn Fn(&str) -> Option<Format>,
) -> Option<PrecomputedPart> {
    let all = body.factors();
    if all.len() < 2 {
        return None;
    }
    top_sums.iter().find_map(|s| {
        let (taken, rest): (Vec<&Expr>, Vec<&Expr>) = all.iter().partition(|f| vars_of(&[**f]).contains(s));
        if rest.is_empty() {
            return None;
        }
        let (taken_vars, rest_vars) = (vars_of(&taken), vars_of(&rest));
        let sums: Vec<LoopVar> = top_sums
            .iter()
            .filter(|v| taken_vars.contains(v) && !rest_vars.contains(v))
            .cloned()
            .collect();
        let left: Vec<&LoopVar> = taken_vars.iter().filter(|v| !sums.contains(v)).collect();
        let [index] = left.as_slice() else {
            return None;
        };
        let repeats = rest_vars.iter().chain(free).any(|v| v != *index);
        let stored_densely = taken.iter().flat_map(|f| f.accesses()).any(|a| {
            input_format(&a.tensor).is_some_and(|format| {
                format.levels().iter().any(|l| {
                    l.level.coordinate_relation() == CoordinateRelation::Positional
                        && matches!(l.projection, Projection::Mode { mode, .. }
                            if a.indices.get(mode).is_some_and(|v| LoopVar::Index(v.clone()) == **index))
                })
            })
        });
        (repeats && stored_densely && rest_vars.contains(index)).then(|| PrecomputedPart {
            factors: product(&taken),
            rest: product(&rest),
            sums,
            index: (*index).clone(),
        })
    })
}

fn product(factors: &[&Expr]) -> Expr {
    let mut it = factors.iter().map(|f| (*f).clone());
    let first = it.next().expect("a product has a factor");
    it.fold(first, |acc, f| Expr::Binary {
        op: BinaryOp::Mul,
        lhs: Box::new(acc),
        rhs: Box::new(f),
    })
}

/// The free variables of some factors.
fn vars_of(factors: &[&Expr]) -> BTreeSet<LoopVar> {
    factors.iter().flat_map(|f| f.free_vars()).map(LoopVar::Index).collect()
}
