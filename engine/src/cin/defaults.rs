//! Default schedule rules: where the loop order the tensors' storage allows
//! would make a plan blow up, the lowering converts a tensor once per run
//! (cached between runs) instead.
//!
//! - A level that an intersection would walk again for every coordinate
//!   of an enclosing loop its tensor is not indexed by (SpMV with a sparse
//!   `x` merges every row with the whole vector; an inner-product SpGEMM
//!   merges every row with every column of a CSC operand) is made dense
//!   when it is the first (the other tensor then drives and locates it),
//!   or moved to the top (CSC becomes CSR, and SpGEMM runs Gustavson's).
//! - A statement whose order would start at a variable other than the
//!   sparse output's first (`C(i,j) = A(k,i) * A(k,j)`, AᵀA) would collect
//!   the whole result in a workspace and sort it; the order is led by the
//!   output's first variable instead, transposing the inputs that cannot
//!   follow it.
//! - A sum only some factors share, whose result depends on one variable,
//!   is computed into a vector once per run instead of again for every
//!   coordinate of the rest's other loops (`super::precompute`'s
//!   `invariant_part`).

use std::collections::BTreeSet;

use tessera_formats::{Format, Level, LevelFormat, LevelKind};

use super::{CinExpr, LoopVar, Operand, Provenance};
use crate::lattice::{Absence, Fills};
use crate::notation::Annihilators;

/// A scope of the statement: an expression whose accesses are walked by
/// the same loops, and the loops known to enclose it.
pub(super) struct Scope<'a> {
    pub body: &'a CinExpr,
    pub enclosing: BTreeSet<LoopVar>,
}

/// The first level an intersection walks again for every coordinate of an
/// enclosing loop over a variable its tensor is not indexed by: the
/// operand and the level. (SpMV with a sparse `x` merges every row with
/// the whole vector; an inner-product SpGEMM with B in CSC merges every row
/// of A with every column of B.)
///
/// When several are, the one walked again under the outermost loop: in an
/// inner product `A(i,k) * B(k,j)` over `i, j, k`, B's columns are walked
/// again for every `i` and A's rows for every `j`; converting B gives
/// Gustavson's order, converting A an outer product.
pub(super) fn rescanned(operands: &[Operand], scopes: &[Scope<'_>], order: &[LoopVar]) -> Option<(usize, usize)> {
    let position = |v: &LoopVar| order.iter().position(|o| o == v);
    let mut found: Vec<(usize, usize, usize)> = Vec::new();
    for scope in scopes {
        let mut direct = Vec::new();
        scope.body.operands(&mut direct);
        for &k in &direct {
            let op = &operands[k];
            let format = &op.format;
            if !format.is_per_mode() || format.stores_as_given() || !in_every_term(scope.body, k, operands) {
                continue;
            }
            let vars = op.level_vars();
            for (level, (l, walked)) in format.levels().iter().zip(&vars).enumerate() {
                if l.level.capabilities().locate || position(walked).is_none() {
                    continue;
                }
                let outermost = scope
                    .enclosing
                    .iter()
                    .filter(|u| !vars.contains(u) && position(u) < position(walked))
                    .filter_map(position)
                    .min();
                // Another tensor walking the same variable could drive the
                // loop, whether it is a factor or a term of a union (the
                // rows of A and B in `(A(i,j) + B(i,j)) * x(j)`).
                let merged_beside = direct.iter().any(|&other| {
                    other != k
                        && operands[other]
                            .level_vars()
                            .iter()
                            .zip(operands[other].format.levels())
                            .any(|(v, l)| v == walked && !l.level.capabilities().locate)
                });
                if let (Some(outermost), true) = (outermost, merged_beside) {
                    found.push((outermost, k, level));
                }
            }
        }
    }
    found.into_iter().min().map(|(_, k, level)| (k, level))
}

/// The format that stops `format`'s level `level` from being walked
/// again per outer coordinate: a first level made dense, so the other
/// tensor drives and locates it (a sparse vector becomes dense, DCSR
/// becomes CSR); a lower level moved to the top, so its loop runs outside
/// the loops over the levels above it (CSC becomes CSR).
///
/// Levels other than unique, ordered dense and compressed ones (COO's
/// repeated coordinates and singletons) become compressed: they only chain
/// in their own order.
pub(super) fn unscanned(format: &Format, level: usize) -> Format {
    let plain = format
        .levels()
        .iter()
        .all(|l| matches!(l.level.kind, LevelKind::Dense | LevelKind::Compressed) && l.level.unique && l.level.ordered);
    let kinds: Vec<LevelFormat> = format
        .levels()
        .iter()
        .map(|l| match l.level.kind {
            _ if plain => l.level,
            LevelKind::Dense => LevelFormat::dense(),
            _ => LevelFormat::compressed(),
        })
        .collect();
    let modes: Vec<usize> = format
        .levels()
        .iter()
        .map(|l| l.projection.mode_index().expect("a per-mode level"))
        .collect();
    if level == 0 {
        if format.order() == 1 {
            return Format::dense(1);
        }
        let mut kinds = kinds;
        kinds[0] = LevelFormat::dense();
        return Format::from_levels(&kinds, &modes).expect("the same modes");
    }
    let mut moved = modes.clone();
    let mode = moved.remove(level);
    moved.insert(0, mode);
    Format::from_levels(&kinds, &moved).expect("the same modes")
}

/// Whether operand `k` is a factor of `expr`: where it is absent, so is
/// `expr` (it has its fill), as for `A` in `A(i,j) * x(j)`, or in
/// `min(j, A(i,j) + x(j))` when A's fill is `+inf`. Loops may then skip
/// where it has no entries. Follows each operation's absence
/// ([`Absence`]) from the operands' fills; a function of one argument is
/// absent where its argument is.
pub(super) fn is_factor(expr: &CinExpr, k: usize, operands: &[Operand]) -> bool {
    absent_where(expr, k, operands, false)
}

/// Whether loops over `expr` meet `k` at every coordinate they visit: it
/// is a factor ([`is_factor`]) or, through sums, a factor of every term
/// (`x` in `A(i,j) * x(j) + B(i,j) * x(j)`). Such a sum still has its
/// fill where `k` is absent, but that fill need not be 0 (`exp(x) - x`),
/// so this says only where `k` is walked, not where the result vanishes.
fn in_every_term(expr: &CinExpr, k: usize, operands: &[Operand]) -> bool {
    absent_where(expr, k, operands, true)
}

/// [`is_factor`], with a sum absent where both sides are when
/// `through_sums`.
fn absent_where(expr: &CinExpr, k: usize, operands: &[Operand], through_sums: bool) -> bool {
    let fills = Fills {
        operand: &|a| operands.get(a).map_or(0.0, |op| op.fill),
        temp: &|_| None,
    };
    let recur = |e: &CinExpr| absent_where(e, k, operands, through_sums);
    let side =
        |annihilators: Annihilators, apply: &dyn Fn(f64, f64) -> f64, lhs: &CinExpr, rhs: &CinExpr| match Absence::of(
            annihilators,
            apply,
            lhs,
            rhs,
            &fills,
        ) {
            Absence::Both => recur(lhs) || recur(rhs),
            Absence::Left => recur(lhs),
            Absence::Right => recur(rhs),
            Absence::Either => through_sums && recur(lhs) && recur(rhs),
        };
    match expr {
        CinExpr::Access(a) => *a == k,
        CinExpr::Neg(e) => recur(e),
        CinExpr::Binary { op, lhs, rhs } => side(op.annihilators(), &|a, b| op.apply(a, b), lhs, rhs),
        CinExpr::Call { func, args } => match args.as_slice() {
            [arg] => recur(arg),
            [lhs, rhs] => side(func.annihilators(), &|a, b| func.apply(&[a, b]), lhs, rhs),
            _ => false,
        },
        CinExpr::Literal(_) | CinExpr::Temp(_) | CinExpr::TempAt(..) | CinExpr::Reduced { .. } => false,
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
    if order.first() == Some(&lead) {
        // A diagonal the output's first level stores leads already.
        return None;
    }
    let first = order.iter().find(|v| top.contains(v))?;
    (*first != lead).then_some(lead)
}
