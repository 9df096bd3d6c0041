//! The output format chosen when the caller gives none, and why: what
//! `--print plan` prints and what [`Engine::eval`](super::Engine::eval) uses.
//!
//! Dense when every input is dense, and — as scipy's `sparse @ dense` is
//! dense — when a sum runs over a sparse and a dense operand and the result
//! has at most one mode that no dense operand indexes (SpMV, SpMM, MTTKRP):
//! such a result has a value at nearly every coordinate, and a sparse
//! format would store a coordinate beside each one. Otherwise sparse (a
//! result such as TTV's or SDDMM's keeps the sparsity of its sparse inputs).

use std::collections::BTreeSet;

use tessera_formats::Format;

use crate::notation::{IndexVar, Statement};

/// The default output format of `stmt` with inputs in `formats` (by
/// name), and the reason, as the plan prints it.
///
/// ```
/// use tessera_engine::notation::parse_statement;
/// use tessera_engine::runtime::default_output;
/// use tessera_formats::Format;
///
/// let spmv = parse_statement("y(i) = A(i,j) * x(j)").unwrap();
/// let formats = [("A".to_string(), Format::csr()), ("x".to_string(), Format::dense(1))];
/// let (format, why) = default_output(&spmv, &formats);
/// assert!(format.is_dense(), "{why}");
/// ```
pub fn default_output(stmt: &Statement, formats: &[(String, Format)]) -> (Format, String) {
    let order = stmt.lhs.indices.len();
    let format_of = |name: &str| formats.iter().find(|(n, _)| n == name).map(|(_, f)| f);
    let is_dense = |name: &str| format_of(name).is_none_or(Format::is_dense);
    if order == 0 {
        return (Format::dense(0), "a scalar".into());
    }
    if formats.iter().all(|(_, f)| f.is_dense()) {
        let why = if formats.is_empty() {
            "dense by default: no inputs"
        } else {
            "dense by default: every input is dense"
        };
        return (Format::dense(order), why.into());
    }
    let accesses = stmt.rhs.accesses();
    let output: BTreeSet<&IndexVar> = stmt.lhs.indices.iter().collect();
    let indexed_by = |v: &IndexVar, dense: bool| {
        accesses
            .iter()
            .filter(|a| is_dense(&a.tensor) == dense && a.indices.contains(v))
            .map(|a| a.tensor.as_str())
            .next()
    };
    let summed: BTreeSet<&IndexVar> = accesses
        .iter()
        .flat_map(|a| a.indices.iter())
        .filter(|v| !output.contains(v))
        .collect();
    let contraction = summed
        .iter()
        .find_map(|v| Some((v, indexed_by(v, false)?, indexed_by(v, true)?)));
    let sparse_modes = output.iter().filter(|v| indexed_by(v, true).is_none()).count();
    if let (Some((v, sparse, dense)), true) = (contraction, sparse_modes <= 1) {
        return (
            Format::dense(order),
            format!(
                "dense by default: {v} is summed over the sparse {sparse} and the dense {dense}, \
                 so nearly every coordinate gets a value (as scipy's sparse @ dense is dense)"
            ),
        );
    }
    let sparse: Vec<&str> = formats
        .iter()
        .filter(|(_, f)| !f.is_dense())
        .map(|(n, _)| n.as_str())
        .collect();
    let like = formats
        .iter()
        .find(|(_, f)| !f.is_dense() && f.order() == order && f.is_per_mode());
    if let Some((name, format)) = like {
        return (format.clone(), format!("by default like the sparse input {name}"));
    }
    (
        super::default_output_format(order, false),
        format!("sparse by default: {}", list_is(&sparse)),
    )
}

/// `A is sparse` / `A and B are sparse`.
fn list_is(names: &[&str]) -> String {
    match names {
        [one] => format!("{one} is sparse"),
        [init @ .., last] => format!("{} and {last} are sparse", init.join(", ")),
        [] => "no input is sparse".to_string(),
    }
}
