//! Derived index variables: loop variables that are not a mode of the
//! statement, and how the statement's variables are recovered from them.
//!
//! Structured formats iterate such variables: a diagonal level iterates
//! the diagonal `j - i` of the modes it joins (DIA), shared by every
//! operand that stores the same diagonals so that their diagonals merge; a
//! slot level has a variable of its own (ELL); and a block split stores
//! `i / b` and `i % b` (BCSR). Each derived variable names its
//! [`Relation`] to the variables it comes from; [`Provenance`] is the graph
//! of those relations for one statement, which the planner reads to recover
//! a statement variable (`i = (i/b)·b + i%b`) where an access needs it, and
//! the runtime reads to size each loop.

use std::collections::BTreeMap;

use tessera_formats::{Projection, Split};

use super::{LoopVar, Operand};

/// How a derived variable relates to the variables it comes from.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Relation {
    /// The coordinate of level `level` of operand `operand`, a level that
    /// stores no mode (an ELL slot). It runs over the level's extent, and
    /// loops over it sum: each stored entry has one.
    Own { operand: usize, level: usize },
    /// The diagonal of an entry at `(row, col)`: `col - row + |row| - 1`,
    /// the offset shifted to be non-negative (a DIA level's coordinate).
    /// Operands that store the diagonals of the same pair of variables
    /// share it, so their diagonals merge like any level's coordinates;
    /// loops over it sum, each entry lying on one diagonal.
    Diagonal { row: Box<LoopVar>, col: Box<LoopVar> },
    /// `of / block`: the block holding `of`'s coordinate.
    Blocks { of: Box<LoopVar>, block: Blocking },
    /// `of % block`: the place of `of`'s coordinate in its block.
    WithinBlock { of: Box<LoopVar>, block: Blocking },
    /// A position of level `level` of operand `operand` (a schedule's
    /// `pos`): its stored entries down to that level, in storage order.
    /// The loops over the variables of its levels down to it recover the
    /// coordinates, running inside a block of positions when the variable
    /// is split.
    Positions { operand: usize, level: usize },
    /// `outer·n + inner`, `n` the size of `inner` (a schedule's `fuse`
    /// not iterated by a `pos`): one loop over every pair of the two
    /// variables' coordinates, which it recovers by division.
    Fused { outer: Box<LoopVar>, inner: Box<LoopVar> },
}

/// A schedule's `pos`: a variable running over an operand's positions at
/// a level, and the statement variables of its levels down to that level,
/// whose loops recover the coordinates of each position.
///
/// ```
/// use tessera_engine::cin::{Blocking, LoopVar, PositionSpace, Provenance, Relation};
/// use tessera_engine::notation::IndexVar;
///
/// let v = |name: &str| LoopVar::Index(IndexVar::new(name));
/// let p = LoopVar::Derived { name: "p".into(), relation: Relation::Positions { operand: 0, level: 1 } };
/// let mut provenance = Provenance::default();
/// provenance.add_positions(PositionSpace {
///     var: p.clone(),
///     operand: 0,
///     level: 1,
///     covers: vec![v("i"), v("j")],
///     parents: vec![],
///     fused: Some("f".into()),
///     column: 0,
/// });
/// provenance.split_by_schedule(&p, "p0", "p1", Blocking::Size(16)).unwrap();
/// let space = provenance.position_space_named("p1").unwrap();
/// assert_eq!(space.blocks(&provenance).unwrap().name(), "p0");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PositionSpace {
    pub var: LoopVar,
    pub operand: usize,
    pub level: usize,
    pub covers: Vec<LoopVar>,
    /// The variables of the operand's levels above the covered ones, whose
    /// loops run outside: the positions are those of one fibre, cut into
    /// blocks per fibre. Empty when the positions are the whole level's.
    pub parents: Vec<LoopVar>,
    /// The name a `fuse` gave the covered pair, if one did.
    pub fused: Option<String>,
    /// The column of the `pos` command, for its refusals.
    pub column: usize,
}

impl PositionSpace {
    /// Whether the positions are one fibre's, below loops over the
    /// operand's upper levels.
    pub fn within_fibre(&self) -> bool {
        !self.parents.is_empty()
    }

    /// The loop over the blocks of positions a split made, if one did.
    pub fn blocks(&self, provenance: &Provenance) -> Option<LoopVar> {
        provenance.recovery(&self.var).map(|(outer, _, _)| outer)
    }
}

/// How a variable is cut into blocks: blocks of a size known when
/// planning (a level's blocks, a schedule's `split`), or a number of
/// blocks, whose size `⌈n / parts⌉` is known at run time (`divide`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Blocking {
    Size(usize),
    Parts(usize),
}

impl Blocking {
    /// The block size for a variable of `n` coordinates (at least 1).
    pub fn size(self, n: usize) -> usize {
        match self {
            Blocking::Size(b) => b,
            Blocking::Parts(p) => n.div_ceil(p).max(1),
        }
    }
}

impl std::fmt::Display for Blocking {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Blocking::Size(b) => write!(f, "{b}"),
            Blocking::Parts(p) => write!(f, "⌈n/{p}⌉"),
        }
    }
}

/// The loop variable of level `level` of `op`, whose projection is given.
pub(super) fn level_var(op: &Operand, level: usize, projection: Projection) -> LoopVar {
    let derived = |name: String, relation| LoopVar::Derived { name, relation };
    match projection {
        Projection::Mode { mode, split } => {
            let of = &op.vars[mode];
            match split {
                Split::Whole => of.clone(),
                Split::Outer(block) => derived(format!("{of}/{block}"), blocks(of, Blocking::Size(block))),
                Split::Inner(block) => derived(format!("{of}%{block}"), within(of, Blocking::Size(block))),
            }
        }
        Projection::Diagonal { row, col } => {
            let (row, col) = (&op.vars[row], &op.vars[col]);
            let relation = Relation::Diagonal {
                row: Box::new(row.clone()),
                col: Box::new(col.clone()),
            };
            derived(format!("{col}-{row}"), relation)
        }
        Projection::Slot { .. } => derived(format!("{}.slot", op.name), Relation::Own { operand: op.id, level }),
    }
}

fn blocks(of: &LoopVar, block: Blocking) -> Relation {
    Relation::Blocks {
        of: Box::new(of.clone()),
        block,
    }
}

fn within(of: &LoopVar, block: Blocking) -> Relation {
    Relation::WithinBlock {
        of: Box::new(of.clone()),
        block,
    }
}

/// The derived variables of one statement: which statement variables are
/// split into blocks (and by how much), and which levels have variables of
/// their own.
///
/// ```
/// use tessera_engine::cin::{LoopVar, Operand, Provenance};
/// use tessera_engine::notation::IndexVar;
/// use tessera_formats::Format;
/// let v = |name: &str| LoopVar::Index(IndexVar::new(name));
/// let a = Operand {
///     name: "A".into(),
///     id: 0,
///     vars: vec![v("i"), v("j")],
///     format: Format::bcsr(4, 4).unwrap(),
///     fill: 0.0,
///     converted_from: None,
/// };
/// let p = Provenance::of(&[a]).unwrap();
/// let parts: Vec<String> = p.expand(&v("i")).iter().map(|x| x.to_string()).collect();
/// assert_eq!(parts, ["i/4", "i%4"]);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Provenance {
    /// Statement variables iterated as blocks, with the block size.
    split: BTreeMap<LoopVar, Blocking>,
    /// The names a schedule's `split` gives a variable's blocks and its
    /// place in them (levels' splits are named `i/b` and `i%b`).
    named: BTreeMap<LoopVar, (String, String)>,
    /// Variables of levels that store no mode, in operand order, each once
    /// (operands share a diagonal).
    own: Vec<LoopVar>,
    /// Variables over an operand's positions (`pos`).
    positions: Vec<PositionSpace>,
    /// Variables over pairs of others' coordinates (`fuse` alone).
    fused: Vec<LoopVar>,
}

/// Two operands split one variable into blocks of different sizes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockConflict {
    pub operand: usize,
}

impl Provenance {
    /// The derived variables of `operands`' levels. Refuses operands that
    /// split a variable into blocks of another size than an earlier one.
    pub fn of(operands: &[Operand]) -> Result<Provenance, BlockConflict> {
        let mut p = Provenance::default();
        for (k, op) in operands.iter().enumerate() {
            for v in op.level_vars() {
                match v.relation() {
                    Some(Relation::Blocks { of, block }) => match p.split.get(of.as_ref()) {
                        Some(b) if b != block => return Err(BlockConflict { operand: k }),
                        _ => {
                            p.split.insert(of.as_ref().clone(), *block);
                        }
                    },
                    Some(Relation::Own { .. } | Relation::Diagonal { .. }) if !p.own.contains(&v) => {
                        p.own.push(v.clone())
                    }
                    _ => {}
                }
            }
        }
        Ok(p)
    }

    /// Splits `v` into blocks of `block` named `outer`, and its place in
    /// them named `inner`, as a schedule's `split` asks. Refused (with the
    /// block size) when a level already splits `v`.
    pub fn split_by_schedule(
        &mut self,
        v: &LoopVar,
        outer: &str,
        inner: &str,
        block: Blocking,
    ) -> Result<(), Blocking> {
        if let Some(&b) = self.split.get(v) {
            return Err(b);
        }
        self.split.insert(v.clone(), block);
        self.named.insert(v.clone(), (outer.to_string(), inner.to_string()));
        Ok(())
    }

    /// Fuses `outer` and `inner` into one variable named `name`, which
    /// loops run over in place of both ([`Relation::Fused`]).
    pub fn fuse(&mut self, outer: &LoopVar, inner: &LoopVar, name: &str) -> LoopVar {
        let fused = LoopVar::Derived {
            name: name.to_string(),
            relation: Relation::Fused {
                outer: Box::new(outer.clone()),
                inner: Box::new(inner.clone()),
            },
        };
        self.fused.push(fused.clone());
        fused
    }

    /// The fused variable `v` is a part of, if any.
    pub fn fused_into(&self, v: &LoopVar) -> Option<&LoopVar> {
        self.fused.iter().find(|f| match f.relation() {
            Some(Relation::Fused { outer, inner }) => **outer == *v || **inner == *v,
            _ => false,
        })
    }

    /// The fused variable named `name`, if any.
    pub fn fused_named(&self, name: &str) -> Option<&LoopVar> {
        self.fused.iter().find(|f| f.name() == name)
    }

    /// The variables fused pairs are made of: loops do not run over them,
    /// but their sizes recover their coordinates.
    pub fn fused_parts(&self) -> impl Iterator<Item = &LoopVar> {
        self.fused.iter().flat_map(|f| match f.relation() {
            Some(Relation::Fused { outer, inner }) => vec![outer.as_ref(), inner.as_ref()],
            _ => Vec::new(),
        })
    }

    /// Adds a variable over an operand's positions (a schedule's `pos`).
    pub fn add_positions(&mut self, space: PositionSpace) {
        self.positions.push(space);
    }

    /// The variables over operands' positions.
    pub fn positions(&self) -> &[PositionSpace] {
        &self.positions
    }

    /// The position space whose blocks the loop over `var` runs over.
    pub fn position_space_of_blocks(&self, var: &LoopVar) -> Option<&PositionSpace> {
        self.positions.iter().find(|s| s.blocks(self).as_ref() == Some(var))
    }

    /// The position space whose variable, or whose blocks' or places'
    /// variable, is named `name`.
    pub fn position_space_named(&self, name: &str) -> Option<&PositionSpace> {
        self.positions.iter().find(|s| {
            s.var.name() == name
                || s.fused.as_deref() == Some(name)
                || self.named.get(&s.var).is_some_and(|(o, i)| o == name || i == name)
        })
    }

    /// The statement variables a schedule splits, whose last block is cut
    /// at their dimension.
    pub fn scheduled(&self) -> impl Iterator<Item = &LoopVar> {
        self.named.keys()
    }

    /// How `v` is cut into blocks, if it is.
    pub fn blocking(&self, v: &LoopVar) -> Option<Blocking> {
        self.split.get(v).copied()
    }

    /// Whether a schedule splits `v`.
    pub fn is_scheduled(&self, v: &LoopVar) -> bool {
        self.named.contains_key(v)
    }

    /// The variables loops run over in place of `v`: its blocks and its
    /// place in them when it is split, itself otherwise.
    pub fn expand(&self, v: &LoopVar) -> Vec<LoopVar> {
        if let Some(fused) = self.fused_into(v) {
            return self.expand(&fused.clone());
        }
        match self.split.get(v) {
            Some(&block) => {
                let (outer, inner) = self.parts(v, block);
                vec![outer, inner]
            }
            None => vec![v.clone()],
        }
    }

    /// The loop variables of `v`'s blocks and of its place in them.
    fn parts(&self, v: &LoopVar, block: Blocking) -> (LoopVar, LoopVar) {
        let (outer, inner) = match self.named.get(v) {
            Some((outer, inner)) => (outer.clone(), inner.clone()),
            None => (format!("{v}/{block}"), format!("{v}%{block}")),
        };
        (
            LoopVar::Derived {
                name: outer,
                relation: blocks(v, block),
            },
            LoopVar::Derived {
                name: inner,
                relation: within(v, block),
            },
        )
    }

    /// Each of `vars` expanded ([`Self::expand`]), in order.
    pub fn expand_all<'v>(&self, vars: impl IntoIterator<Item = &'v LoopVar>) -> Vec<LoopVar> {
        let mut out: Vec<LoopVar> = Vec::new();
        // Both parts of a fused pair expand to the one loop.
        for v in vars.into_iter().flat_map(|v| self.expand(v)) {
            if !out.contains(&v) {
                out.push(v);
            }
        }
        out
    }

    /// Edges between variables, each end expanded.
    pub fn expand_edges(&self, edges: &[(LoopVar, LoopVar)]) -> Vec<(LoopVar, LoopVar)> {
        let mut out = Vec::new();
        for (a, b) in edges {
            for x in self.expand(a) {
                for y in self.expand(b) {
                    if x != y {
                        out.push((x.clone(), y));
                    }
                }
            }
        }
        out
    }

    /// The variables of levels that store no mode.
    pub fn own(&self) -> &[LoopVar] {
        &self.own
    }

    /// Whether any variable is derived.
    pub fn is_empty(&self) -> bool {
        self.split.is_empty() && self.own.is_empty() && self.positions.is_empty()
    }

    /// How to recover a split statement variable: `(blocks, within,
    /// block)` with `v = blocks·block + within`.
    pub fn recovery(&self, v: &LoopVar) -> Option<(LoopVar, LoopVar, Blocking)> {
        let &block = self.split.get(v)?;
        let (outer, inner) = self.parts(v, block);
        Some((outer, inner, block))
    }

    /// The number of coordinates a loop over `v` runs through: a statement
    /// variable's size, the blocks that cover it, a block's size, the
    /// diagonals of two variables, or the extent of the level that owns the
    /// variable.
    pub fn extent(v: &LoopVar, sizes: &Sizes<'_>) -> usize {
        match v.relation() {
            None => (sizes.of_var)(v.name()),
            Some(Relation::Own { operand, level }) => (sizes.level_extent)(*operand, *level),
            Some(Relation::Diagonal { row, col }) => {
                (Provenance::extent(row, sizes) + Provenance::extent(col, sizes)).saturating_sub(1)
            }
            Some(Relation::Positions { operand, level }) => (sizes.level_positions)(*operand, *level),
            Some(Relation::Blocks { of, block }) => {
                let n = Provenance::extent(of, sizes);
                n.div_ceil(block.size(n))
            }
            Some(Relation::WithinBlock { of, block }) => block.size(Provenance::extent(of, sizes)),
            Some(Relation::Fused { outer, inner }) => {
                Provenance::extent(outer, sizes).saturating_mul(Provenance::extent(inner, sizes))
            }
        }
    }
}

/// What a run knows of sizes, for [`Provenance::extent`]: each statement
/// variable's size, and each operand level's extent and number of
/// positions.
///
/// ```
/// use tessera_engine::cin::{Blocking, LoopVar, Provenance, Relation, Sizes};
///
/// let p = LoopVar::Derived { name: "p".into(), relation: Relation::Positions { operand: 0, level: 1 } };
/// let blocks = LoopVar::Derived {
///     name: "p0".into(),
///     relation: Relation::Blocks { of: Box::new(p), block: Blocking::Size(16) },
/// };
/// let sizes = Sizes { of_var: &|_| 0, level_extent: &|_, _| 0, level_positions: &|_, _| 100 };
/// assert_eq!(Provenance::extent(&blocks, &sizes), 7);
/// ```
pub struct Sizes<'a> {
    pub of_var: &'a dyn Fn(&str) -> usize,
    pub level_extent: &'a dyn Fn(usize, usize) -> usize,
    pub level_positions: &'a dyn Fn(usize, usize) -> usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::IndexVar;
    use tessera_formats::Format;

    fn op(name: &str, id: usize, vars: &[&str], format: Format) -> Operand {
        Operand {
            name: name.into(),
            id,
            vars: vars.iter().map(|v| LoopVar::Index(IndexVar::new(*v))).collect(),
            format,
            fill: 0.0,
            converted_from: None,
        }
    }

    #[test]
    fn block_levels_split_their_modes_and_recover_them() {
        let a = op("A", 0, &["i", "j"], Format::bcsr(4, 2).unwrap());
        let names: Vec<String> = a.level_vars().iter().map(|v| v.to_string()).collect();
        assert_eq!(names, ["i/4", "j/2", "i%4", "j%2"]);
        let p = Provenance::of(&[a]).unwrap();
        let i = LoopVar::Index(IndexVar::new("i"));
        let (outer, inner, block) = p.recovery(&i).unwrap();
        assert_eq!((outer.name(), inner.name(), block), ("i/4", "i%4", Blocking::Size(4)));
        let level = |_: usize, _: usize| unreachable!();
        let sizes = Sizes {
            of_var: &|_| 10,
            level_extent: &level,
            level_positions: &level,
        };
        assert_eq!(Provenance::extent(&outer, &sizes), 3);
        assert_eq!(Provenance::extent(&inner, &sizes), 4);
    }

    #[test]
    fn diagonals_are_shared_and_slots_are_variables_of_their_operand() {
        let a = op("A", 0, &["i", "j"], Format::dia());
        let b = op("B", 1, &["i", "j"], Format::ell());
        let c = op("C", 2, &["i", "j"], Format::dia());
        let t = op("T", 3, &["j", "i"], Format::dia());
        let p = Provenance::of(&[a.clone(), b, c, t]).unwrap();
        let names: Vec<&str> = p.own().iter().map(LoopVar::name).collect();
        assert_eq!(
            names,
            ["j-i", "B.slot", "i-j"],
            "A and C share their diagonals, T's run the other way"
        );
        let level = |operand: usize, level: usize| 10 * operand + level + 7;
        let var_size = |name: &str| if name == "i" { 4 } else { 6 };
        let sizes = Sizes {
            of_var: &var_size,
            level_extent: &level,
            level_positions: &|_, _| unreachable!(),
        };
        assert_eq!(Provenance::extent(&p.own()[0], &sizes), 9, "4 + 6 - 1 diagonals");
        assert_eq!(Provenance::extent(&p.own()[1], &sizes), 17);
        assert_eq!(a.level_vars()[1].name(), "i");
    }

    #[test]
    fn different_blocks_of_one_variable_conflict() {
        let a = op("A", 0, &["i", "j"], Format::bcsr(2, 2).unwrap());
        let b = op("B", 1, &["i", "j"], Format::bcsr(4, 2).unwrap());
        assert_eq!(Provenance::of(&[a, b]), Err(BlockConflict { operand: 1 }));
    }
}
