//! Format specifications as text, the command line's syntax (`-f A:csr`,
//! `:format A dense,compressed:1,0`): parsed into a [`FormatSpec`] and, once
//! the tensor's order is known, resolved into a [`Format`] through its
//! constructors. `Format` implements `FromStr` for texts that imply their
//! order (`"csr"`, `"bcsr:4x4"`, `"dense:0,1,2"`, a level list).
//!
//! ```
//! use tessera_formats::{spec::FormatSpec, Format};
//!
//! let csr: Format = "csr".parse().unwrap();
//! assert_eq!(csr.levels(), Format::csr().levels());
//! let csc: Format = "dense,compressed:1,0".parse().unwrap();
//! assert_eq!(csc.levels(), Format::csc().levels());
//! // `dense` alone fits any order: resolve it once the order is known.
//! let spec: FormatSpec = "dense".parse().unwrap();
//! assert_eq!(spec.resolve(3).unwrap().levels(), Format::dense(3).levels());
//! assert!("dense".parse::<Format>().unwrap_err().to_string().contains("dense:0,1"));
//! ```
//!
//! Grammar:
//! ```text
//! spec   := named [':' order] | 'bcsr:' R 'x' C | levels [':' order]
//! named  := dense | csr | csc | dcsr | dcsc | coo | ucoo | csf | dia | ell | sv | hash
//! levels := level (',' level)*
//! level  := kind ['(' prop (',' prop)* ')']
//! kind   := dense | compressed | singleton | range | offset | hashed
//! prop   := nonunique | unique | unordered | ordered
//! order  := mode (',' mode)*            level k stores mode order[k]
//! ```
//! A level list ending in `range,offset` stores a matrix by diagonals, its
//! first level over the diagonals (`compressed,range,offset` is DIA, which
//! stores the diagonals that hold entries; `dense,range,offset` stores all
//! `rows + cols - 1`).
//! `dense`, `coo` and `csf` take any order (and a mode order); the matrix
//! formats take order 2, `sv` order 1, `hash` order 1 or 2. Errors name the
//! part of the text at fault.

use std::fmt;
use std::str::FromStr;

use crate::error::FormatError;
use crate::format::{Format, FormatLevel, LevelFormat, LevelKind, Projection};

/// The formats known by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NamedFormat {
    Dense,
    Csr,
    Csc,
    Dcsr,
    Dcsc,
    Coo,
    Ucoo,
    Csf,
    Dia,
    Ell,
    Sv,
    Hash,
}

impl NamedFormat {
    const ALL: [(&'static str, NamedFormat); 12] = [
        ("dense", NamedFormat::Dense),
        ("csr", NamedFormat::Csr),
        ("csc", NamedFormat::Csc),
        ("dcsr", NamedFormat::Dcsr),
        ("dcsc", NamedFormat::Dcsc),
        ("coo", NamedFormat::Coo),
        ("ucoo", NamedFormat::Ucoo),
        ("csf", NamedFormat::Csf),
        ("dia", NamedFormat::Dia),
        ("ell", NamedFormat::Ell),
        ("sv", NamedFormat::Sv),
        ("hash", NamedFormat::Hash),
    ];

    fn from_name(name: &str) -> Option<NamedFormat> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
    }

    fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, f)| *f == self).map_or("?", |(n, _)| n)
    }

    /// Whether a mode order may follow the name.
    fn takes_mode_order(self) -> bool {
        matches!(self, NamedFormat::Dense | NamedFormat::Coo | NamedFormat::Csf)
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Spec {
    Named(NamedFormat, Option<Vec<usize>>),
    Bcsr(usize, usize),
    Levels(Vec<LevelFormat>, Option<Vec<usize>>),
}

/// A parsed format specification, not yet tied to a tensor's order.
///
/// ```
/// use tessera_formats::{spec::FormatSpec, Format};
/// let spec: FormatSpec = "dense,compressed:1,0".parse().unwrap();
/// assert_eq!(spec.resolve(2).unwrap().levels(), Format::csc().levels());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct FormatSpec {
    text: String,
    spec: Spec,
}

/// The list every "unknown format" message repeats.
const EXPECTED: &str = "a named format (dense, csr, csc, dcsr, dcsc, coo, csf, dia, ell, bcsr:RxC, sv, hash) \
     or a level list such as dense,compressed or compressed(nonunique),singleton:1,0";

const LEVELS: &str = "dense, compressed, singleton, range, offset, hashed";

impl FromStr for FormatSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err(format!("empty format: expected {EXPECTED}"));
        }
        let (head, tail) = match text.split_once(':') {
            Some((h, t)) => (h.trim(), Some(t.trim())),
            None => (text, None),
        };
        let spec = if head == "bcsr" {
            let blocks = tail.ok_or("bcsr needs its block size, as in bcsr:4x4")?;
            let (r, c) = parse_block(blocks)?;
            Spec::Bcsr(r, c)
        } else if let Some(named) = NamedFormat::from_name(head) {
            let order = tail.map(parse_mode_order).transpose()?;
            if order.is_some() && !named.takes_mode_order() {
                return Err(format!(
                    "{} has a fixed mode order; give a level list with one instead, as in dense,compressed:1,0",
                    named.name()
                ));
            }
            Spec::Named(named, order)
        } else {
            let levels = split_top_level(head)?
                .into_iter()
                .map(parse_level)
                .collect::<Result<Vec<_>, _>>()?;
            let order = tail.map(parse_mode_order).transpose()?;
            if let Some(order) = &order {
                if order.len() != levels.len() {
                    return Err(format!(
                        "the mode order `{}` names {} modes for {} levels",
                        tail.unwrap_or_default(),
                        order.len(),
                        levels.len()
                    ));
                }
            }
            Spec::Levels(levels, order)
        };
        Ok(FormatSpec {
            text: text.to_string(),
            spec,
        })
    }
}

impl fmt::Display for FormatSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FormatSpec {
    /// The order the text implies, when it does: a matrix format's 2, a
    /// mode order's or a level list's length. `None` for `dense`, `coo`,
    /// `csf` and `hash` without a mode order, which fit several orders.
    pub fn order(&self) -> Option<usize> {
        match &self.spec {
            Spec::Named(_, Some(modes)) => Some(modes.len()),
            Spec::Named(named, None) => match named {
                NamedFormat::Dense | NamedFormat::Coo | NamedFormat::Ucoo | NamedFormat::Csf | NamedFormat::Hash => {
                    None
                }
                NamedFormat::Sv => Some(1),
                _ => Some(2),
            },
            Spec::Bcsr(..) => Some(2),
            Spec::Levels(levels, _) if by_diagonals(levels) => Some(2),
            Spec::Levels(levels, _) => Some(levels.len()),
        }
    }

    /// The format for a tensor of `order` modes, or why there is none.
    pub fn resolve(&self, order: usize) -> Result<Format, String> {
        let format = match &self.spec {
            Spec::Named(named, mode_order) => resolve_named(*named, mode_order.as_deref(), order)?,
            Spec::Bcsr(r, c) => {
                need_order("bcsr", 2, order)?;
                Format::bcsr(*r, *c).map_err(|e| e.to_string())?
            }
            // The parser refuses a mode order of two modes for three levels.
            Spec::Levels(levels, None) if by_diagonals(levels) && order == 2 => {
                let (row, col) = (0, 1);
                let level = |level, projection| FormatLevel { level, projection };
                Format::new(
                    2,
                    vec![
                        level(levels[0], Projection::Diagonal { row, col }),
                        level(levels[1], Projection::mode(row)),
                        level(levels[2], Projection::mode(col)),
                    ],
                )
                .map_err(|e| format!("`{}` cannot store a matrix: {e}", self.text))?
            }
            Spec::Levels(levels, mode_order) => {
                if levels.len() != order {
                    return Err(format!(
                        "the level list `{}` has {} level{}, the tensor has order {order}",
                        self.text,
                        levels.len(),
                        plural(levels.len())
                    ));
                }
                let identity: Vec<usize> = (0..order).collect();
                let mode_order = mode_order.as_deref().unwrap_or(&identity);
                check_permutation(mode_order)?;
                Format::from_levels(levels, mode_order).map_err(|e| match e {
                    FormatError::BadFormat { reason, .. } => {
                        format!("`{}` cannot store a tensor: {reason}", self.text)
                    }
                    other => other.to_string(),
                })?
            }
        };
        Ok(format)
    }
}

/// The format a text names, when the text implies its order (see
/// [`FormatSpec::order`]); errors name the text and what is wrong.
impl FromStr for Format {
    type Err = FormatError;

    fn from_str(text: &str) -> Result<Format, FormatError> {
        let bad = |reason: String| FormatError::BadFormat {
            format: text.trim().to_string(),
            reason,
        };
        let spec: FormatSpec = text.parse().map_err(bad)?;
        let order = spec.order().ok_or_else(|| {
            bad(format!(
                "`{}` fits tensors of several orders: resolve a FormatSpec with the order, or give a mode order \
                 where the format takes one (as in dense:0,1)",
                spec.text
            ))
        })?;
        spec.resolve(order).map_err(bad)
    }
}

fn resolve_named(named: NamedFormat, mode_order: Option<&[usize]>, order: usize) -> Result<Format, String> {
    let identity: Vec<usize> = (0..order).collect();
    let modes = mode_order.unwrap_or(&identity);
    if modes.len() != order {
        return Err(format!(
            "the mode order of `{}` names {} modes, the tensor has order {order}",
            named.name(),
            modes.len()
        ));
    }
    check_permutation(modes)?;
    if order == 0 && named != NamedFormat::Dense {
        return Err(format!(
            "a scalar has no modes to store as {}: scalars are dense",
            named.name()
        ));
    }
    Ok(match named {
        NamedFormat::Dense => Format::dense_ordered(modes),
        NamedFormat::Coo => Format::coo_ordered(modes),
        NamedFormat::Ucoo if modes.iter().enumerate().all(|(k, &m)| k == m) => Format::coo_unordered(order),
        NamedFormat::Ucoo => return Err("ucoo keeps the modes in their order: it takes no mode order".into()),
        NamedFormat::Csf => Format::csf_ordered(modes),
        NamedFormat::Csr => matrix("csr", order, Format::csr)?,
        NamedFormat::Csc => matrix("csc", order, Format::csc)?,
        NamedFormat::Dcsr => matrix("dcsr", order, Format::dcsr)?,
        NamedFormat::Dcsc => matrix("dcsc", order, Format::dcsc)?,
        NamedFormat::Dia => matrix("dia", order, Format::dia)?,
        NamedFormat::Ell => matrix("ell", order, Format::ell)?,
        NamedFormat::Sv => {
            need_order("sv", 1, order)?;
            Format::sparse_vector()
        }
        NamedFormat::Hash => match order {
            1 => Format::hash_vector(),
            2 => Format::hash_rows(),
            _ => {
                return Err(format!(
                    "hash stores vectors and matrices, the tensor has order {order}"
                ))
            }
        },
    })
}

fn matrix(name: &str, order: usize, make: fn() -> Format) -> Result<Format, String> {
    need_order(name, 2, order)?;
    Ok(make())
}

fn need_order(name: &str, wanted: usize, order: usize) -> Result<(), String> {
    if order == wanted {
        return Ok(());
    }
    let what = match wanted {
        1 => "vectors",
        2 => "matrices",
        _ => "tensors",
    };
    Err(format!("{name} stores {what}, the tensor has order {order}"))
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn check_permutation(modes: &[usize]) -> Result<(), String> {
    let n = modes.len();
    let mut seen = vec![false; n];
    for &m in modes {
        if m >= n || std::mem::replace(&mut seen[m], true) {
            let list: Vec<String> = modes.iter().map(usize::to_string).collect();
            return Err(format!(
                "the mode order `{}` is not a permutation of 0..{n}",
                list.join(",")
            ));
        }
    }
    Ok(())
}

/// `RxC` of `bcsr:RxC`, each at least 1.
fn parse_block(text: &str) -> Result<(usize, usize), String> {
    let bad = || format!("bad block size `{text}` in bcsr:{text}: expected ROWSxCOLS such as 4x4, each at least 1");
    let (r, c) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let r: usize = r.trim().parse().map_err(|_| bad())?;
    let c: usize = c.trim().parse().map_err(|_| bad())?;
    if r == 0 || c == 0 {
        return Err(bad());
    }
    Ok((r, c))
}

/// A mode order `1,0`.
fn parse_mode_order(text: &str) -> Result<Vec<usize>, String> {
    text.split(',')
        .map(|m| {
            m.trim().parse::<usize>().map_err(|_| {
                format!(
                    "bad mode `{}` in the mode order `{text}`: expected mode numbers such as 1,0",
                    m.trim()
                )
            })
        })
        .collect()
}

/// Splits `a(x,y),b` at the commas outside parentheses.
fn split_top_level(text: &str) -> Result<Vec<&str>, String> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, ch) in text.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| format!("unbalanced `)` in `{text}`"))?
            }
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(format!("unclosed `(` in `{text}`"));
    }
    parts.push(&text[start..]);
    Ok(parts)
}

/// Whether a level list stores a matrix by diagonals: a level over the
/// diagonals, then a range of rows and their offset columns (DIA is
/// `compressed,range,offset`). Its first level stores no mode.
fn by_diagonals(levels: &[LevelFormat]) -> bool {
    matches!(levels, [_, r, o] if r.kind == LevelKind::Range && o.kind == LevelKind::Offset)
}

/// One level `compressed(nonunique)`.
fn parse_level(text: &str) -> Result<LevelFormat, String> {
    let text = text.trim();
    let (kind, props) = match text.split_once('(') {
        Some((kind, rest)) => {
            let props = rest.strip_suffix(')').ok_or_else(|| {
                format!("bad level `{text}`: properties go in parentheses at the end, as in compressed(nonunique)")
            })?;
            (kind.trim(), Some(props))
        }
        None => (text, None),
    };
    let mut level = match kind {
        "dense" => LevelFormat::dense(),
        "compressed" => LevelFormat::compressed(),
        "singleton" => LevelFormat::singleton(),
        "range" => LevelFormat::range(),
        "offset" => LevelFormat::offset(),
        "hashed" => LevelFormat::hashed(),
        "" => return Err(format!("empty format part: expected {EXPECTED}")),
        other => {
            return Err(format!(
                "unknown format or level `{other}`: expected {EXPECTED} (levels: {LEVELS})"
            ))
        }
    };
    for prop in props.into_iter().flat_map(|p| p.split(',')) {
        level = match prop.trim() {
            "nonunique" => level.non_unique(),
            "unique" => LevelFormat { unique: true, ..level },
            "unordered" => level.unordered(),
            "ordered" => LevelFormat { ordered: true, ..level },
            other => {
                return Err(format!(
                    "unknown level property `{other}` in `{text}`: expected nonunique, unique, unordered or ordered"
                ))
            }
        };
    }
    Ok(level)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_parse_from_text_that_implies_their_order() {
        let parse = |t: &str| t.parse::<Format>().map(|f| f.levels().to_vec());
        assert_eq!(parse("csr"), Ok(Format::csr().levels().to_vec()));
        assert_eq!(parse(" dcsc "), Ok(Format::dcsc().levels().to_vec()));
        assert_eq!(parse("sv"), Ok(Format::sparse_vector().levels().to_vec()));
        assert_eq!(parse("bcsr:4x4"), Ok(Format::bcsr(4, 4).unwrap().levels().to_vec()));
        assert_eq!(parse("coo:0,1,2"), Ok(Format::coo(3).levels().to_vec()));
        assert_eq!(parse("dense:1,0"), Ok(Format::dense_ordered(&[1, 0]).levels().to_vec()));
        assert_eq!(
            parse("dense,compressed(unordered)"),
            Ok(
                Format::from_levels(&[LevelFormat::dense(), LevelFormat::compressed().unordered()], &[0, 1])
                    .unwrap()
                    .levels()
                    .to_vec()
            )
        );
        for (text, says) in [
            ("dense", "several orders"),
            ("hash", "several orders"),
            ("csrr", "expected a named format"),
            ("dense,squashed", "squashed"),
            ("bcsr:0x4", "bcsr"),
        ] {
            let err = text.parse::<Format>().unwrap_err().to_string();
            assert!(err.contains(text) && err.contains(says), "{text}: {err}");
        }
    }

    fn resolve(text: &str, order: usize) -> Result<Format, String> {
        text.parse::<FormatSpec>()?.resolve(order)
    }

    #[test]
    fn named_formats_resolve_to_their_constructors() {
        assert_eq!(resolve("csr", 2).unwrap(), Format::csr());
        assert_eq!(resolve("csc", 2).unwrap(), Format::csc());
        assert_eq!(resolve("dense", 3).unwrap(), Format::dense(3));
        assert_eq!(resolve("csf", 3).unwrap(), Format::csf(3));
        assert_eq!(resolve("coo", 2).unwrap(), Format::coo(2));
        assert_eq!(resolve("compressed,range,offset", 2).unwrap(), Format::dia());
        assert_eq!("compressed,range,offset".parse::<Format>().unwrap(), Format::dia());
        assert_eq!(resolve("sv", 1).unwrap(), Format::sparse_vector());
        assert_eq!(resolve("hash", 1).unwrap(), Format::hash_vector());
        assert_eq!(resolve("hash", 2).unwrap(), Format::hash_rows());
        assert_eq!(resolve("dia", 2).unwrap(), Format::dia());
        assert_eq!(resolve("ell", 2).unwrap(), Format::ell());
        assert_eq!(resolve("bcsr:2x4", 2).unwrap(), Format::bcsr(2, 4).unwrap());
        assert_eq!(resolve("dense:1,0", 2).unwrap(), Format::dense_ordered(&[1, 0]));
        assert_eq!(resolve("csf:2,0,1", 3).unwrap(), Format::csf_ordered(&[2, 0, 1]));
    }

    #[test]
    fn level_lists_with_properties_and_mode_orders() {
        let csc = resolve("dense,compressed:1,0", 2).unwrap();
        assert_eq!(csc.levels(), Format::csc().levels());
        let coo = resolve("compressed(nonunique),singleton", 2).unwrap();
        assert_eq!(coo.levels(), Format::coo(2).levels());
        let f = resolve("dense, compressed(unordered, nonunique)", 2).unwrap();
        assert!(!f.level(1).ordered && !f.level(1).unique);
    }

    #[test]
    fn errors_name_the_bad_part() {
        let e = resolve("dense,compresed", 2).unwrap_err();
        assert!(e.contains("`compresed`"), "{e}");
        let e = resolve("foo", 2).unwrap_err();
        assert!(e.contains("unknown format or level `foo`"), "{e}");
        let e = resolve("compressed(nonuniq)", 1).unwrap_err();
        assert!(e.contains("`nonuniq`"), "{e}");
        let e = resolve("csr", 3).unwrap_err();
        assert!(e.contains("csr stores matrices, the tensor has order 3"), "{e}");
        let e = resolve("bcsr:2y2", 2).unwrap_err();
        assert!(e.contains("`2y2`"), "{e}");
        let e = resolve("dense,compressed", 3).unwrap_err();
        assert!(e.contains("2 levels, the tensor has order 3"), "{e}");
        let e = resolve("dense,compressed:0,0", 2).unwrap_err();
        assert!(e.contains("not a permutation"), "{e}");
        let e = resolve("dense,compressed:1,x", 2).unwrap_err();
        assert!(e.contains("bad mode `x`"), "{e}");
        let e = resolve("singleton,dense", 2).unwrap_err();
        assert!(e.contains("singleton"), "{e}");
        let e = resolve("csr:1,0", 2).unwrap_err();
        assert!(e.contains("fixed mode order"), "{e}");
        let e = resolve("compressed(nonunique", 1).unwrap_err();
        assert!(e.contains("unclosed"), "{e}");
    }
}
