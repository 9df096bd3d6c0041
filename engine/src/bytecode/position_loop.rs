//! The bodies of [`Op::PositionLoop`](super::Op::PositionLoop): what the
//! interpreter does at each position of a loop it runs as one op.

use std::fmt;

use smallvec::SmallVec;
use tessera_formats::LevelRef;

use super::{lv, regs, row_factor, DotFactor, FReg, IReg, Regs};

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
    /// The dot of the `child` level's segment below `p`, as in
    /// [`PositionBody::AppendedDots`], added to the dense output at
    /// position `at` when the segment is not empty: SpMV's loop over the
    /// stored rows of a DCSR matrix, `y(i) = Σ_j A(i,j) * x(j)`.
    AddedDots {
        child: LevelRef,
        factors: SmallVec<[DotFactor; 2]>,
        at: Affine,
    },
    /// The `child` level's segment below `p` run as a loop of its own
    /// with `body`, `c` joining the coordinates of the entries it appends
    /// (before the coordinates of deeper loops) and read as the body's
    /// [`Affine::Outer`]: TTV's and MTTKRP's loops over rows.
    Nested { child: LevelRef, body: Box<PositionBody> },
    /// The [`super::Op::DenseDot`] of dense runs, `0 + scale · Σ_{k <
    /// len} Π runs[k]` (each run `(operand, its first position)`), when
    /// `len > 0` added to the output at position `p` or, with `append`,
    /// appended at `append ++ [c]`: SDDMM's loop over a row, `C(i,j) =
    /// A(i,j) * Σ_k U(i,k) * V(j,k)`.
    DenseDots {
        scale: SmallVec<[ScaleFactor; 2]>,
        runs: SmallVec<[(u32, Affine); 2]>,
        len: Affine,
        append: Option<Regs>,
    },
    /// The [`super::Op::RowAxpy`] of the `child` level's segment below
    /// `p`: for each of its positions `q` (coordinate `l`), the output row
    /// at `out_parent` gets `scale · value[q] · Π factor rows`: MTTKRP's
    /// loop over `k`, `A(i,j) += B(i,k,l) * C(k,j) * D(l,j)`.
    RowUpdates {
        child: LevelRef,
        scale: SmallVec<[ScaleFactor; 2]>,
        factors: SmallVec<[RowFactor; 2]>,
        out: LevelRef,
        out_parent: Affine,
    },
    /// The [`super::Op::WorkspaceAxpy`] of a row of the `rows` level (of
    /// another operand), the one below position `parent`: each of its
    /// entries, times `scale`, added into the workspace at `prefix ++
    /// [its coordinate]`: SpGEMM's loop over a row of A, `C(i,j) +=
    /// A(i,k) * B(k,j)`, one row of B per entry.
    WorkspaceRows {
        rows: LevelRef,
        parent: Affine,
        scale: SmallVec<[ScaleFactor; 2]>,
        prefix: Regs,
    },
    /// `scale` appended at `prefix ++ [c]`: a scaled copy of the stored
    /// values into a sparse result, `C(i,j) = 2 * A(i,j)` into DCSR.
    Copies {
        scale: SmallVec<[ScaleFactor; 2]>,
        prefix: Regs,
    },
    /// `scale` added to the dense output at position `at`: a row
    /// scattered into a dense result, `y(j) += A(i,j) * x(i)`.
    Scatter {
        scale: SmallVec<[ScaleFactor; 2]>,
        at: Affine,
    },
    /// `scale` added, position by position, into the float register `acc`,
    /// and `flag` set once a position was seen: a sum into a scalar, as
    /// `s = Σ A(i,j) * A(i,j)`.
    Reduce {
        scale: SmallVec<[ScaleFactor; 2]>,
        acc: FReg,
        flag: Option<super::BReg>,
    },
}

/// An integer a position loop computes from its coordinate `c`: affine in
/// `c`, because dense levels place positions by arithmetic. Evaluated to a
/// slope and an offset once per run of the loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Affine {
    /// A register the loop does not write.
    Reg(IReg),
    Const(i64),
    /// The loop's coordinate `c`.
    Coordinate,
    /// The coordinate `o` of the position loop around this one, when the
    /// loop is the body of a [`PositionBody::Nested`].
    Outer,
    /// A dimension of the run ([`super::Op::Dim`]).
    Dim(u32),
    /// The position of coordinate `coord` of the dense `level` below
    /// position `parent`: `parent · extent(level) + coord`.
    Dense {
        level: LevelRef,
        parent: Box<Affine>,
        coord: Box<Affine>,
    },
}

/// A factor of a position loop's scale, multiplied in order into 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScaleFactor {
    /// The driver's value at `p`.
    Own,
    /// A register the loop does not write.
    Reg(FReg),
    /// A constant the loop sets (a literal of the statement), by its bits.
    Const(u64),
    /// Operand `operand`'s value at position `at` (of a dense level, found
    /// by arithmetic): `y(j)` in `s = x(i) * A(i,j) * y(j)`.
    Gathered { operand: u32, at: Affine },
}

/// A dense row factor of [`PositionBody::RowUpdates`]: operand `operand`'s
/// row at `parent`, or, with `via`, at `parent · extent(via) + l` (`l`
/// the child's coordinate).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowFactor {
    pub operand: u32,
    pub parent: Affine,
    pub via: Option<LevelRef>,
}

impl PositionBody {
    /// Whether the body's only effect on the output is appending entries.
    pub fn only_appends(&self) -> bool {
        match self {
            PositionBody::AppendedDots { .. } => true,
            PositionBody::Nested { body, .. } => body.only_appends(),
            PositionBody::DenseDots { append, .. } => append.is_some(),
            PositionBody::Copies { .. } => true,
            PositionBody::AddedDots { .. }
            | PositionBody::RowUpdates { .. }
            | PositionBody::WorkspaceRows { .. }
            | PositionBody::Scatter { .. } => false,
            // A sum into registers leaves the output alone.
            PositionBody::Reduce { .. } => true,
        }
    }

    /// The level whose segments the body walks, if any.
    pub fn child(&self) -> Option<LevelRef> {
        match self {
            PositionBody::AppendedDots { child, .. }
            | PositionBody::AddedDots { child, .. }
            | PositionBody::Nested { child, .. }
            | PositionBody::RowUpdates { child, .. }
            | PositionBody::WorkspaceRows { rows: child, .. } => Some(*child),
            PositionBody::DenseDots { .. }
            | PositionBody::Copies { .. }
            | PositionBody::Scatter { .. }
            | PositionBody::Reduce { .. } => None,
        }
    }
}

impl fmt::Display for PositionBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PositionBody::AppendedDots { child, factors, prefix } => write!(
                f,
                "append {} ++ [c] the dot of {} below p{} unless empty",
                regs(prefix),
                lv(child),
                DotFactors(factors)
            ),
            PositionBody::AddedDots { child, factors, at } => write!(
                f,
                "out[{at}] += the dot of {} below p{} unless empty",
                lv(child),
                DotFactors(factors)
            ),
            PositionBody::Nested { child, body } => {
                write!(f, "for the positions of {} below p, with c: {body}", lv(child))
            }
            PositionBody::DenseDots {
                scale,
                runs,
                len,
                append,
            } => {
                let runs: Vec<String> = runs
                    .iter()
                    .map(|(operand, start)| format!(" * t{operand}[{start} + k]"))
                    .collect();
                match append {
                    Some(prefix) => write!(f, "append {} ++ [c]", regs(prefix))?,
                    None => f.write_str("out[p] +=")?,
                }
                write!(
                    f,
                    " {} * sum for k < {len}:{} unless empty",
                    Scale(scale),
                    runs.join("")
                )
            }
            PositionBody::RowUpdates {
                child,
                scale,
                factors,
                out,
                out_parent,
            } => {
                let fs: Vec<String> = factors
                    .iter()
                    .map(|x| row_factor(x.operand, &x.parent, x.via, "l"))
                    .collect();
                write!(
                    f,
                    "for q, l in {} below p: out[{out_parent} row of {}] += {} * value[q]{}",
                    lv(child),
                    lv(out),
                    Scale(scale),
                    fs.join("")
                )
            }
            PositionBody::WorkspaceRows {
                rows,
                parent,
                scale,
                prefix,
            } => write!(
                f,
                "for q in {} below {parent}: workspace {} ++ [coord] += {} * value[q]",
                lv(rows),
                regs(prefix),
                Scale(scale)
            ),
            PositionBody::Copies { scale, prefix } => write!(f, "append {} ++ [c] {}", regs(prefix), Scale(scale)),
            PositionBody::Scatter { scale, at } => write!(f, "out[{at}] += {}", Scale(scale)),
            PositionBody::Reduce { scale, acc, flag } => {
                write!(f, "f{acc} += {}", Scale(scale))?;
                match flag {
                    Some(flag) => write!(f, ", b{flag} = true"),
                    None => Ok(()),
                }
            }
        }
    }
}

/// A dot's dense factors, each ` * t[parent row + coord]`.
struct DotFactors<'s>(&'s [DotFactor]);

impl fmt::Display for DotFactors<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for x in self.0 {
            write!(f, " * t{}[r{} * extent({}) + coord]", x.operand, x.parent, lv(&x.level))?;
        }
        Ok(())
    }
}

/// A scale's factors, as a product.
struct Scale<'s>(&'s [ScaleFactor]);

impl fmt::Display for Scale<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let factors: Vec<String> = self
            .0
            .iter()
            .map(|x| match x {
                ScaleFactor::Own => "value[p]".to_string(),
                ScaleFactor::Reg(r) => format!("f{r}"),
                ScaleFactor::Const(bits) => format!("{:?}", f64::from_bits(*bits)),
                ScaleFactor::Gathered { operand, at } => format!("t{operand}[{at}]"),
            })
            .collect();
        match factors.is_empty() {
            true => f.write_str("1"),
            false => f.write_str(&factors.join(" * ")),
        }
    }
}

impl fmt::Display for Affine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Affine::Reg(r) => write!(f, "r{r}"),
            Affine::Const(k) => write!(f, "{k}"),
            Affine::Coordinate => f.write_str("c"),
            Affine::Outer => f.write_str("o"),
            Affine::Dim(v) => write!(f, "dim v{v}"),
            Affine::Dense { level, parent, coord } => write!(f, "({parent} * extent({}) + {coord})", lv(level)),
        }
    }
}
