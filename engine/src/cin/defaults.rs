//! Default schedule rules: where the loop order the tensors' storage allows
//! would make a plan blow up, the lowering converts a tensor once per run
//! (cached between runs) instead.
//!
//! - A sparse vector that an intersection would walk again for every
//!   coordinate of an enclosing loop it is not indexed by (SpMV with a
//!   sparse `x` merges every row with the whole vector) is made dense, so
//!   the other tensor drives and locates it.
//! - A statement whose order would start at a variable other than the
//!   sparse output's first (`C(i,j) = A(k,i) * A(k,j)`, AᵀA) would collect
//!   the whole result in a workspace and sort it; the order is led by the
//!   output's first variable instead, transposing the inputs that cannot
//!   follow it.

use std::collections::BTreeSet;

use tessera_formats::Level;

use super::{CinExpr, LoopVar, Operand, Provenance};
use crate::notation::BinaryOp;

/// A scope of the statement: an expression whose accesses are walked by
/// the same loops, and the loops known to enclose it.
pub(super) struct Scope<'a> {
    pub body: &'a CinExpr,
    pub enclosing: BTreeSet<LoopVar>,
}

/// The first sparse vector an intersection walks again for every
/// coordinate of an enclosing loop over a variable it is not indexed by.
pub(super) fn rescanned_vector(operands: &[Operand], scopes: &[Scope<'_>], order: &[LoopVar]) -> Option<usize> {
    let position = |v: &LoopVar| order.iter().position(|o| o == v);
    scopes.iter().find_map(|scope| {
        let mut direct = Vec::new();
        scope.body.operands(&mut direct);
        direct.iter().copied().find(|&k| {
            let op = &operands[k];
            let format = &op.format;
            if format.order() != 1
                || !format.is_per_mode()
                || format.stores_as_given()
                || format.levels()[0].level.capabilities().locate
                || !is_factor(scope.body, k)
            {
                return false;
            }
            let walked = &op.level_vars()[0];
            let enclosed = scope
                .enclosing
                .iter()
                .any(|u| u != walked && position(u) < position(walked));
            let merged_beside = direct.iter().any(|&other| {
                other != k
                    && is_factor(scope.body, other)
                    && operands[other]
                        .level_vars()
                        .iter()
                        .zip(operands[other].format.levels())
                        .any(|(v, l)| v == walked && !l.level.capabilities().locate)
            });
            enclosed && merged_beside
        })
    })
}

/// Whether access `k` is a factor of `expr`: `expr` is zero wherever the
/// access is (a product or negation of it; a quotient is not, as division
/// keeps its dense meaning).
pub(super) fn is_factor(expr: &CinExpr, k: usize) -> bool {
    match expr {
        CinExpr::Access(a) => *a == k,
        CinExpr::Neg(e) => is_factor(e, k),
        CinExpr::Binary {
            op: BinaryOp::Mul,
            lhs,
            rhs,
        } => is_factor(lhs, k) || is_factor(rhs, k),
        _ => false,
    }
}

/// The variable that should lead the order instead of `order`'s first,
/// when a sparse output of two or more levels, appended in order, would
/// otherwise be collected whole in a workspace: the output's first level
/// variable, if the loops of `top` (the statement's loops outside any
/// `where`) do not start with it.
pub(super) fn output_lead(
    output: &Operand,
    provenance: &Provenance,
    appended: bool,
    top: &[LoopVar],
    order: &[LoopVar],
) -> Option<LoopVar> {
    let level_vars = output.level_vars();
    if !appended || level_vars.len() < 2 {
        return None;
    }
    // A split first variable leads by its blocks.
    let lead = provenance.expand(&level_vars[0]).swap_remove(0);
    let first = order.iter().find(|v| top.contains(v))?;
    (*first != lead).then_some(lead)
}
