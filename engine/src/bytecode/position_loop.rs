//! The bodies of [`Op::PositionLoop`](super::Op::PositionLoop): what the
//! interpreter does at each position of a loop it runs as one op.

use std::fmt;

use smallvec::SmallVec;
use tessera_formats::LevelRef;

use super::{lv, regs, DotFactor, Regs};

/// What a [`super::Op::PositionLoop`] computes at each position `p` of its
/// driver (coordinate `c`).
#[derive(Debug, Clone, PartialEq)]
pub enum PositionBody {
    /// The [`super::Op::DotBlock`] of the `child` level's segment below `p`
    /// with dense `factors` (their rows fixed for the whole loop),
    /// appended at `prefix ++ [c]` when the segment is not empty: TTV's
    /// loop over fibres, `A(i,j) = Σ_k B(i,j,k) * c(k)`.
    AppendedDots {
        child: LevelRef,
        factors: SmallVec<[DotFactor; 2]>,
        prefix: Regs,
    },
    /// The `child` level's segment below `p` run as a loop of its own
    /// with `body`, `c` joining the coordinates of the entries it appends
    /// (before the coordinates of deeper loops): TTV's loop over rows.
    Nested { child: LevelRef, body: Box<PositionBody> },
}

impl PositionBody {
    /// Whether the body's only effect on the output is appending entries.
    pub fn only_appends(&self) -> bool {
        match self {
            PositionBody::AppendedDots { .. } => true,
            PositionBody::Nested { body, .. } => body.only_appends(),
        }
    }

    /// The level whose segments the body walks below each position.
    pub fn child(&self) -> LevelRef {
        match self {
            PositionBody::AppendedDots { child, .. } | PositionBody::Nested { child, .. } => *child,
        }
    }
}

impl fmt::Display for PositionBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PositionBody::AppendedDots { child, factors, prefix } => {
                let fs: Vec<String> = factors
                    .iter()
                    .map(|x| format!(" * t{}[r{} * extent({}) + coord]", x.operand, x.parent, lv(&x.level)))
                    .collect();
                write!(
                    f,
                    "append {} ++ [c] the dot of {} below p{} unless empty",
                    regs(prefix),
                    lv(child),
                    fs.join("")
                )
            }
            PositionBody::Nested { child, body } => {
                write!(f, "for the positions of {} below p, with c: {body}", lv(child))
            }
        }
    }
}
