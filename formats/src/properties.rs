//! Level properties and capabilities (format paper §3.2–§3.4, Table 1).

use std::fmt;

/// The five properties a level may declare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Properties {
    /// Every coordinate of the dimension is present under each parent.
    pub full: bool,
    /// Siblings are in increasing order (and runs of duplicate parents are
    /// ordered by their parents' positions).
    pub ordered: bool,
    /// No two siblings share a coordinate.
    pub unique: bool,
    /// Every coordinate has no siblings and every parent has a child.
    pub branchless: bool,
    /// No unlabeled positions between coordinates.
    pub compact: bool,
}

impl fmt::Display for Properties {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let flags = [
            (self.full, "full"),
            (self.ordered, "ordered"),
            (self.unique, "unique"),
            (self.branchless, "branchless"),
            (self.compact, "compact"),
        ];
        let on: Vec<&str> = flags.iter().filter(|(b, _)| *b).map(|(_, n)| *n).collect();
        write!(f, "{}", on.join(","))
    }
}

/// How a level's coordinates are iterated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Iteration {
    /// `coord_iter` / `coord_access`: iterate candidate coordinates.
    CoordinateValue,
    /// `pos_iter` / `pos_access`: iterate stored positions.
    CoordinatePosition,
}

/// How a level's positions and coordinates follow from those above it,
/// for planners that compute many at once instead of one by one. Each
/// level states its own; the planner never names a level format.
///
/// ```
/// use tessera_formats::{CoordinateRelation, Level, LevelFormat};
/// assert_eq!(LevelFormat::offset().coordinate_relation(), CoordinateRelation::ShiftedParent);
/// assert_eq!(LevelFormat::compressed().coordinate_relation(), CoordinateRelation::Opaque);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CoordinateRelation {
    /// Nothing a planner can compute ahead.
    Opaque,
    /// Below one parent, coordinate `c` is at position `parent · extent + c`
    /// (dense, range): consecutive coordinates sit at consecutive positions.
    Positional,
    /// One child per parent, at the parent's position, whose coordinate is
    /// the parent's coordinate plus an amount fixed by the levels above the
    /// parent (DIA's columns: `j = i + offset[d]`).
    ShiftedParent,
    /// One child per parent, at the parent's position, its coordinate read
    /// from the level's coordinate array (ELL's and COO's singletons).
    Stored,
}

/// How an output level is assembled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Assembly {
    /// `insert_coord` at a position found by `locate` (any order).
    Insert,
    /// `append_coord` / `append_edges` (coordinates in order).
    Append,
}

/// What a level can do (Table 1 of the format paper).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Capabilities {
    pub iteration: Iteration,
    pub locate: bool,
    pub assembly: Option<Assembly>,
}
