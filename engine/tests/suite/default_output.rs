//! The output format chosen when none is given: dense where nearly every
//! coordinate gets a value (a sparse operand summed against a dense one),
//! otherwise sparse, with the reason the plan prints.

use tessera_engine::notation::parse_statement;
use tessera_engine::runtime::default_output;
use tessera_formats::Format;

fn chosen(statement: &str, formats: &[(&str, Format)]) -> (Format, String) {
    let stmt = parse_statement(statement).unwrap();
    let formats: Vec<(String, Format)> = formats.iter().map(|(n, f)| (n.to_string(), f.clone())).collect();
    default_output(&stmt, &formats)
}

#[test]
fn contractions_of_sparse_against_dense_operands_give_dense_results() {
    for (statement, formats) in [
        (
            "y(i) = A(i,j) * x(j)",
            vec![("A", Format::csr()), ("x", Format::dense(1))],
        ),
        (
            "C(i,j) = A(i,k) * X(k,j)",
            vec![("A", Format::csr()), ("X", Format::dense(2))],
        ),
        (
            "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
            vec![("B", Format::csf(3)), ("C", Format::dense(2)), ("D", Format::dense(2))],
        ),
        (
            "y(j) = A(i,j) * x(i)",
            vec![("A", Format::csr()), ("x", Format::dense(1))],
        ),
    ] {
        let (format, why) = chosen(statement, &formats);
        assert!(format.is_dense(), "{statement}: {format} ({why})");
        assert!(why.contains("is summed over the sparse"), "{statement}: {why}");
    }
}

#[test]
fn results_that_keep_the_sparsity_of_their_inputs_stay_sparse() {
    for (statement, formats, want) in [
        // SDDMM: k is summed over the dense factors only; A masks the result.
        (
            "C(i,j) = A(i,j) * U(i,k) * V(j,k)",
            vec![("A", Format::csr()), ("U", Format::dense(2)), ("V", Format::dense(2))],
            "by default like the sparse input A",
        ),
        // TTV: two output modes that no dense operand indexes.
        (
            "A(i,j) = B(i,j,k) * c(k)",
            vec![("B", Format::csf(3)), ("c", Format::dense(1))],
            "sparse by default: B is sparse",
        ),
        (
            "C(i,j) = A(i,k) * B(k,j)",
            vec![("A", Format::csr()), ("B", Format::csr())],
            "by default like the sparse input A",
        ),
    ] {
        let (format, why) = chosen(statement, &formats);
        assert!(!format.is_dense(), "{statement}: {format}");
        assert_eq!(why, want, "{statement}");
    }
}

#[test]
fn scalars_and_all_dense_inputs_say_so() {
    assert_eq!(chosen("s = A(i,j) * A(i,j)", &[("A", Format::csr())]).1, "a scalar");
    let (format, why) = chosen("B(i,j) = A(i,j)", &[("A", Format::dense(2))]);
    assert!(format.is_dense());
    assert_eq!(why, "dense by default: every input is dense");
}
