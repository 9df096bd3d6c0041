//! Index notation: parsing, printing, building, reduction placement and
//! checking, pinned by text.

use proptest::prelude::*;
use tessera_engine::notation::{
    check, parse_statement, place_reductions, Access, BinaryOp, Expr, IndexSizes, IndexVar, Reduction, Statement,
    FUNCTIONS, MAX_DEPTH, REDUCTIONS,
};
use tessera_engine::EngineError;

fn parse(text: &str) -> Statement {
    parse_statement(text).unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

/// Every form of statement the engine supports, in canonical text.
const CANONICAL: &[&str] = &[
    "y(i) = A(i,j) * x(j)",
    "A(i,j) = B(i,k) * C(k,j)",
    "y(i) = A(i,j) * x(j) + b(i)",
    "r(i) = b(i) - A(i,j) * x(j)",
    "y(i) = A(i,j) + B(i,j)",
    "a = B(i,j,k) * C(i,j,k)",
    "y(i) += A(i,j) * x(j)",
    "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
    "y(i) = -A(i,j) * x(j)",
    "y(i) = -(A(i,j) * x(j))",
    "a = x - -y",
    "a = --x",
    "y(i) = 2 * x(i) + 0.5",
    "y(i) = 1e-7 * x(i) / 1e300",
    "r(i) = b(i) - (c(i) - d(i))",
    "r(i) = b(i) - c(i) - d(i)",
    "r(i) = (a(i) + b(i)) * (c(i) - d(i)) / e(i)",
    "z(i) = x(i) / (y(i) / w(i))",
    "z(i) = x(i) / y(i) / w(i)",
    "z(i) = x(i) * (y(i) * w(i))",
    "a = b",
    "a = 0",
    "A(i,j,k,l,m,n,o,p) = B(i,j,k,l,m,n,o,p) * c",
    "A(j,i) = B(i,j)",
    "y(i) = sum(j, A(i,j) * x(j)) + b(i)",
    "a = sum(i, sum(j, B(i,j))) * 2",
    "y(i) = sum(k, b(i))",
    "y_1(i_0) = A_b2(i_0,_j) * x(_j)",
];

#[test]
fn canonical_text_parses_and_prints_back_unchanged() {
    for text in CANONICAL {
        let stmt = parse(text);
        assert_eq!(stmt.to_string(), *text);
        assert_eq!(parse(&stmt.to_string()), stmt, "{text}");
        let via_from_str: Statement = text.parse().unwrap();
        assert_eq!(via_from_str, stmt);
    }
}

#[test]
fn loose_text_prints_as_canonical_text() {
    let cases = [
        ("  y( i )=A(i , j)*x( j )  ", "y(i) = A(i,j) * x(j)"),
        ("a() = b()", "a = b"),
        ("y(i) = ((A(i,j)) * (x(j)))", "y(i) = A(i,j) * x(j)"),
        ("y(i) = .5*x(i)", "y(i) = 0.5 * x(i)"),
        ("y(i)=1E3*x(i)", "y(i) = 1000 * x(i)"),
        ("y(i) = (A(i,j) * x(j)) + b(i)", "y(i) = A(i,j) * x(j) + b(i)"),
        ("y(i) = 2. * x(i)", "y(i) = 2 * x(i)"),
        ("y(i)\t+=\nx(i)", "y(i) += x(i)"),
        ("y(i) = (-x(i))", "y(i) = -x(i)"),
        ("a = sum ( i , x(i) )", "a = sum(i, x(i))"),
    ];
    for (loose, canonical) in cases {
        assert_eq!(parse(loose).to_string(), canonical, "{loose:?}");
        assert_eq!(parse(loose), parse(canonical), "{loose:?}");
    }
}

#[test]
fn built_ir_equals_parsed_ir() {
    let a = |t: &str, ix: &[&str]| Expr::access(t, ix);
    let cases = [
        (
            "y(i) = A(i,j) * x(j)",
            Statement::assign(Access::new("y", &["i"]), a("A", &["i", "j"]) * a("x", &["j"])),
        ),
        (
            "A(i,j) = B(i,k) * C(k,j)",
            Statement::assign(Access::new("A", &["i", "j"]), a("B", &["i", "k"]) * a("C", &["k", "j"])),
        ),
        (
            "y(i) = A(i,j) * x(j) + b(i)",
            Statement::assign(
                Access::new("y", &["i"]),
                a("A", &["i", "j"]) * a("x", &["j"]) + a("b", &["i"]),
            ),
        ),
        (
            "a = B(i,j,k) * C(i,j,k)",
            Statement::assign(
                Access::new("a", &[]),
                a("B", &["i", "j", "k"]) * a("C", &["i", "j", "k"]),
            ),
        ),
        (
            "y(i) += -A(i,j) * x(j)",
            Statement::add_assign(Access::new("y", &["i"]), -a("A", &["i", "j"]) * a("x", &["j"])),
        ),
        (
            "y(i) = 2 * x(i) - -0.5 / (b(i) - c(i))",
            Statement::assign(
                Access::new("y", &["i"]),
                Expr::lit(2.0) * a("x", &["i"]) - Expr::lit(-0.5) / (a("b", &["i"]) - a("c", &["i"])),
            ),
        ),
        (
            "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
            Statement::assign(
                Access::new("A", &["i", "j"]),
                a("B", &["i", "k", "l"]) * a("C", &["k", "j"]) * a("D", &["l", "j"]),
            ),
        ),
        (
            "y(i) = sum(j, A(i,j) * x(j))",
            Statement::assign(
                Access::new("y", &["i"]),
                Expr::sum("j", a("A", &["i", "j"]) * a("x", &["j"])),
            ),
        ),
        ("a() = b()", Statement::assign(Access::new("a", &[]), a("b", &[]))),
    ];
    for (text, built) in cases {
        assert_eq!(parse(text), built, "{text}");
        assert_eq!(parse(&built.to_string()), built, "{text}");
    }
}

#[test]
fn index_vars_summed_vars_and_accesses_are_in_text_order() {
    let s = parse("A(i,j) = B(i,k,l) * C(k,j) * D(l,j)");
    let names = |vs: Vec<tessera_engine::notation::IndexVar>| -> Vec<String> { vs.into_iter().map(|v| v.0).collect() };
    assert_eq!(names(s.index_vars()), ["i", "j", "k", "l"]);
    assert_eq!(names(s.summed_vars()), ["k", "l"]);
    let tensors: Vec<&str> = s.rhs.accesses().iter().map(|a| a.tensor.as_str()).collect();
    assert_eq!(tensors, ["B", "C", "D"]);
    let s = parse("a = sum(z, x(i)) * y(i)");
    assert_eq!(names(s.index_vars()), ["z", "i"]);
    assert_eq!(names(s.summed_vars()), ["z", "i"]);
}

#[test]
fn reductions_go_around_the_smallest_subexpression_holding_every_occurrence() {
    let cases = [
        ("y(i) = A(i,j) * x(j)", "y(i) = sum(j, A(i,j) * x(j))"),
        ("y(i) = A(i,j) * x(j) + b(i)", "y(i) = sum(j, A(i,j) * x(j)) + b(i)"),
        ("r(i) = b(i) - A(i,j) * x(j)", "r(i) = b(i) - sum(j, A(i,j) * x(j))"),
        ("y(i) = A(i,j) + B(i,j)", "y(i) = sum(j, A(i,j) + B(i,j))"),
        (
            "a = B(i,j,k) * C(i,j,k)",
            "a = sum(i, sum(j, sum(k, B(i,j,k) * C(i,j,k))))",
        ),
        ("A(i,j) = B(i,k) * C(k,j)", "A(i,j) = sum(k, B(i,k) * C(k,j))"),
        (
            "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
            "A(i,j) = sum(l, sum(k, B(i,k,l) * C(k,j)) * D(l,j))",
        ),
        ("y(i) = A(i,j)", "y(i) = sum(j, A(i,j))"),
        ("y(i) = -(A(i,j) * x(j))", "y(i) = -sum(j, A(i,j) * x(j))"),
        (
            "y(i) = A(i,j) * x(j) * B(i,k) * z(k)",
            "y(i) = sum(k, sum(j, A(i,j) * x(j)) * B(i,k) * z(k))",
        ),
        (
            "y(i) = sum(k, A(i,k,j)) * x(j)",
            "y(i) = sum(j, sum(k, A(i,k,j)) * x(j))",
        ),
        ("a = sum(i, x(i)) * sum(i, y(i))", "a = sum(i, x(i)) * sum(i, y(i))"),
        ("y(i) += A(i,j) * x(j)", "y(i) += sum(j, A(i,j) * x(j))"),
        ("y(i) = b(i) + 1", "y(i) = b(i) + 1"),
    ];
    for (text, placed) in cases {
        let s = place_reductions(&parse(text));
        assert_eq!(s.to_string(), placed, "{text}");
        assert_eq!(place_reductions(&s), s, "placement is idempotent: {text}");
        assert_eq!(parse(placed), s, "{text}");
    }
}

// ---------------------------------------------------------------- syntax

fn syntax_error(text: &str) -> (usize, String) {
    match parse_statement(text) {
        Err(EngineError::Syntax { column, message }) => (column, message),
        other => panic!("{text:?}: expected a syntax error, got {other:?}"),
    }
}

#[track_caller]
fn assert_syntax(text: &str, column: usize, message: &str) {
    let (c, m) = syntax_error(text);
    assert_eq!((c, m.as_str()), (column, message), "{text:?}");
}

#[test]
fn empty_input_is_a_syntax_error_at_its_end() {
    let msg = "expected a statement such as y(i) = A(i,j) * x(j), found end of input";
    assert_syntax("", 1, msg);
    assert_syntax("   ", 4, msg);
}

#[test]
fn an_unclosed_access_reports_the_offending_token() {
    assert_syntax(
        "y(i) = A(i,j * x(j)",
        14,
        "expected ')' or ',' after index variable, found '*'",
    );
    assert_syntax(
        "y(i) = A(i j)",
        12,
        "expected ')' or ',' after index variable, found identifier 'j'",
    );
    assert_syntax("y(i) = A(i,)", 12, "expected an index variable after ',', found ')'");
    assert_syntax("y(i) = A(,i)", 10, "expected an index variable or ')', found ','");
    assert_syntax("y(2) = x(i)", 3, "expected an index variable or ')', found number 2");
    assert_syntax("y(i = x(i)", 5, "expected ')' or ',' after index variable, found '='");
}

#[test]
fn trailing_garbage_is_reported_where_it_starts() {
    assert_syntax(
        "y(i) = A(i,j) x(j)",
        15,
        "expected an operator ('+', '-', '*', '/') or end of input, found identifier 'x'",
    );
    assert_syntax(
        "y(i) = x(i) 2",
        13,
        "expected an operator ('+', '-', '*', '/') or end of input, found number 2",
    );
    assert_syntax(
        "y(i) = A(i) += b(i)",
        13,
        "expected an operator ('+', '-', '*', '/') or end of input, found '+='",
    );
}

#[test]
fn unbalanced_parentheses_point_at_the_unmatched_side() {
    assert_syntax(
        "y(i) = (A(i,j) * x(j)",
        22,
        "expected ')' to close the '(' at column 8, found end of input",
    );
    assert_syntax("y(i) = A(i,j) * x(j) )", 22, "found ')' with no matching '('");
    assert_syntax(
        "y(i) = ((x(i)) + 1",
        19,
        "expected ')' to close the '(' at column 8, found end of input",
    );
    assert_syntax(
        "y(i) = A(i,j",
        13,
        "expected ')' or ',' after index variable, found end of input",
    );
}

#[test]
fn the_left_side_must_be_an_access() {
    let lit = "the left side must be a tensor access, found number 2";
    assert_syntax("2 = A(i)", 1, lit);
    assert_syntax("(y(i)) = A(i)", 1, "the left side must be a tensor access, found '('");
    assert_syntax("-y(i) = A(i)", 1, "the left side must be a tensor access, found '-'");
    assert_syntax("y(i) + A(i)", 6, "expected '=' or '+=' after the left side, found '+'");
    assert_syntax(
        "y(i)",
        5,
        "expected '=' or '+=' after the left side, found end of input",
    );
}

#[test]
fn misspelled_add_assign_is_refused_with_a_hint() {
    assert_syntax(
        "y(i) =+ A(i)",
        7,
        "expected an operand after '=', found '+' (did you mean '+='?)",
    );
    assert_syntax(
        "y(i) == A(i)",
        6,
        "expected '=' or '+=' after the left side, found '==' (a comparison; assignment is '=')",
    );
    assert_syntax(
        "y(i) + = A(i)",
        6,
        "expected '=' or '+=' after the left side, found '+'",
    );
}

#[test]
fn missing_operands_are_reported_at_what_follows() {
    let operand =
        "expected an operand (a number, a tensor access, a call such as sqrt(...) or sum(...), or '('), found";
    assert_syntax("y(i) = A(i) +", 14, &format!("{operand} end of input"));
    assert_syntax("y(i) = -", 9, &format!("{operand} end of input"));
    assert_syntax("y(i) = * x(i)", 8, &format!("{operand} '*'"));
    assert_syntax("y(i) = x(i) * / z(i)", 15, &format!("{operand} '/'"));
    assert_syntax("y(i) = ()", 9, &format!("{operand} ')'"));
}

#[test]
fn non_ascii_characters_are_refused_at_their_character_column() {
    // '×' and 'é' are two bytes, '→' three, '🦀' four: the column counts
    // characters.
    assert_syntax(
        "y(i) = A(i,j) × x(j)",
        15,
        "unexpected non-ASCII character '×': statements are written in ASCII",
    );
    assert_syntax(
        "y(i) = é",
        8,
        "unexpected non-ASCII character 'é': statements are written in ASCII",
    );
    assert_syntax(
        "y → x",
        3,
        "unexpected non-ASCII character '→': statements are written in ASCII",
    );
    // The first offending character is reported, not a later one.
    assert_syntax(
        "🦀(i) = x(é)",
        1,
        "unexpected non-ASCII character '🦀': statements are written in ASCII",
    );
    assert_syntax(
        "y(i) =\u{a0}x(i)",
        7,
        "unexpected non-ASCII space U+00A0: statements are written in ASCII",
    );
    // Errors before a non-ASCII character are reported first.
    assert_syntax("y(i) = x(i) ) é", 13, "found ')' with no matching '('");
}

#[test]
fn unknown_characters_and_bad_numbers_are_syntax_errors() {
    assert_syntax("y(i) = A(i) @ b(i)", 13, "unexpected character '@'");
    assert_syntax("y(i) = x(i)\u{0}", 12, "unexpected character '\\0'");
    assert_syntax("y(i) = .", 8, "unexpected character '.'");
    assert_syntax(
        "y(i) = 1e * x(i)",
        10,
        "expected a digit in the exponent of a number, found ' '",
    );
    assert_syntax(
        "y(i) = 2e+",
        11,
        "expected a digit in the exponent of a number, found end of input",
    );
    assert_syntax("y(i) = 1e400 * x(i)", 8, "number 1e400 is too large for f64");
}

#[test]
fn sum_is_a_keyword() {
    let reserved = "'sum' is reserved for reductions, sum(var, expr); it cannot name a tensor";
    assert_syntax("sum(i) = x(i)", 1, reserved);
    assert_syntax("y(i) = sum * x(i)", 8, reserved);
    assert_syntax(
        "y(i) = sum(j A(i,j))",
        14,
        "expected ',' after the index variable of sum, found identifier 'A'",
    );
    assert_syntax(
        "y(i) = sum(2, A(i,j))",
        12,
        "expected an index variable after 'sum(', found number 2",
    );
    assert_syntax(
        "y(i) = sum(j, A(i,j)",
        21,
        "expected ')' to close the 'sum(' at column 8, found end of input",
    );
    // An index variable may be called sum.
    assert_eq!(parse("y(i) = A(i,sum)").to_string(), "y(i) = A(i,sum)");
}

#[test]
fn accesses_of_order_up_to_eight_parse_and_nine_is_refused() {
    parse("a = B(i,j,k,l,m,n,o,p)");
    assert_syntax(
        "a = B(i,j,k,l,m,n,o,p,q)",
        23,
        "B is accessed with more than 8 index variables (tensors have order 0 to 8)",
    );
    assert_syntax(
        "A(i,j,k,l,m,n,o,p,q) = b",
        19,
        "A is accessed with more than 8 index variables (tensors have order 0 to 8)",
    );
}

#[test]
fn nesting_deeper_than_the_limit_is_a_syntax_error_not_a_stack_overflow() {
    let deep = "the expression nests more than 256 levels deep";
    let ok = format!("a = {}b{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
    assert_eq!(parse(&ok).to_string(), "a = b");
    let parens = |n: usize| format!("a = {}b{}", "(".repeat(n), ")".repeat(n));
    // The 257th '(' is at column 5 + 256.
    assert_syntax(&parens(MAX_DEPTH + 1), 5 + MAX_DEPTH, deep);
    assert_syntax(&parens(100_000), 5 + MAX_DEPTH, deep);
    let minus = format!("a = {}b", "-".repeat(100_000));
    assert_syntax(&minus, 5 + MAX_DEPTH, deep);
    // A chain of n binary operators nests n levels.
    let chain = format!("a = b{}", " + b".repeat(100_000));
    assert_syntax(&chain, 7 + 4 * (MAX_DEPTH - 1), deep);
    let sums = format!("a = {}x{}", "sum(i, ".repeat(100_000), ")".repeat(100_000));
    assert_syntax(&sums, 5 + 7 * MAX_DEPTH, deep);
}

// ------------------------------------------------------------- semantics

fn shapes<'a>(given: &'a [(&'a str, &'a [usize])]) -> impl Fn(&str) -> Option<Vec<usize>> + 'a {
    move |name| given.iter().find(|(n, _)| *n == name).map(|(_, s)| s.to_vec())
}

fn sizes<'a>(given: &'a [(&'a str, usize)]) -> impl Fn(&str) -> Option<usize> + 'a {
    move |var| given.iter().find(|(v, _)| *v == var).map(|&(_, n)| n)
}

fn check_text(text: &str, inputs: &[(&str, &[usize])], given: &[(&str, usize)]) -> Result<IndexSizes, EngineError> {
    check(&parse(text), &shapes(inputs), &sizes(given))
}

const SPMV: &[(&str, &[usize])] = &[("A", &[2, 3]), ("x", &[3]), ("b", &[2])];

#[test]
fn check_infers_sizes_in_first_appearance_order_and_the_output_shape() {
    let s = check_text("y(i) = A(i,j) * x(j) + b(i)", SPMV, &[]).unwrap();
    let all: Vec<(String, usize)> = s.iter().map(|(v, n)| (v.0.clone(), n)).collect();
    assert_eq!(all, [("i".to_owned(), 2), ("j".to_owned(), 3)]);
    assert_eq!(s.output_shape(), &[2]);
    assert_eq!(s.get("j"), Some(3));
    assert_eq!(s.get("k"), None);

    let s = check_text("a = x(j) * x(j)", SPMV, &[]).unwrap();
    assert_eq!(s.output_shape(), &[] as &[usize]);

    let s = check_text("A(j,i) = B(i,j)", &[("B", &[2, 5])], &[]).unwrap();
    assert_eq!(s.output_shape(), &[5, 2]);
}

#[test]
fn unknown_tensors_are_reported_at_their_access() {
    assert_eq!(
        check_text("y(i) = A(i,j) * z(j)", SPMV, &[]),
        Err(EngineError::UnknownTensor {
            name: "z".into(),
            column: 17
        })
    );
    // += reads the left tensor, so it must be given.
    assert_eq!(
        check_text("y(i) += A(i,j) * x(j)", SPMV, &[]),
        Err(EngineError::UnknownTensor {
            name: "y".into(),
            column: 1
        })
    );
    // Built statements report columns in their canonical text.
    let built = Statement::assign(
        Access::new("y", &["i"]),
        Expr::access("A", &["i", "j"]) * Expr::access("q", &["j"]),
    );
    assert_eq!(built.to_string().find("q(j)"), Some(16));
    assert_eq!(
        check(&built, &shapes(SPMV), &sizes(&[])),
        Err(EngineError::UnknownTensor {
            name: "q".into(),
            column: 17
        })
    );
}

#[test]
fn accesses_must_match_the_order_of_their_tensor() {
    assert_eq!(
        check_text("y(i) = x(j) * A(i)", SPMV, &[]),
        Err(EngineError::OrderMismatch {
            tensor: "A".into(),
            expected: 2,
            found: 1,
            column: 15
        })
    );
    assert_eq!(
        check_text("y(i) = b(i)", &[("b", &[2]), ("y", &[2, 2])], &[]),
        Err(EngineError::OrderMismatch {
            tensor: "y".into(),
            expected: 2,
            found: 1,
            column: 1
        })
    );
    assert_eq!(
        check_text("a = x", SPMV, &[]),
        Err(EngineError::OrderMismatch {
            tensor: "x".into(),
            expected: 1,
            found: 0,
            column: 5
        })
    );
}

#[test]
fn an_index_variable_repeated_within_one_access_is_refused() {
    assert_eq!(
        check_text("a = B(i,i)", &[("B", &[2, 2])], &[]),
        Err(EngineError::RepeatedIndex {
            var: "i".into(),
            tensor: "B".into(),
            column: 5
        })
    );
    assert_eq!(
        check_text("A(i,i) = b(i)", &[("b", &[2])], &[]),
        Err(EngineError::RepeatedIndex {
            var: "i".into(),
            tensor: "A".into(),
            column: 1
        })
    );
}

#[test]
fn a_variable_indexing_modes_of_different_sizes_names_both_sites() {
    assert_eq!(
        check_text("y(i) = A(i,j) * x(j)", &[("A", &[2, 3]), ("x", &[4])], &[]),
        Err(EngineError::SizeMismatch {
            var: "j".into(),
            first: "A (mode 1)".into(),
            first_size: 3,
            second: "x (mode 0)".into(),
            second_size: 4
        })
    );
    // A given size must agree with the inputs.
    assert_eq!(
        check_text("y(i) = A(i,j) * x(j)", SPMV, &[("j", 5)]),
        Err(EngineError::SizeMismatch {
            var: "j".into(),
            first: "A (mode 1)".into(),
            first_size: 3,
            second: "the given sizes".into(),
            second_size: 5
        })
    );
    assert!(check_text("y(i) = A(i,j) * x(j)", SPMV, &[("j", 3)]).is_ok());
    // A left tensor that is given must have the right shape.
    let with_y: &[(&str, &[usize])] = &[("A", &[2, 3]), ("x", &[3]), ("y", &[3])];
    assert_eq!(
        check_text("y(i) = A(i,j) * x(j)", with_y, &[]),
        Err(EngineError::SizeMismatch {
            var: "i".into(),
            first: "A (mode 0)".into(),
            first_size: 2,
            second: "y (mode 0)".into(),
            second_size: 3
        })
    );
    assert_eq!(
        check_text("A(i,j) = b(i)", &[("b", &[2]), ("A", &[2, 4])], &[("j", 3)]),
        Err(EngineError::SizeMismatch {
            var: "j".into(),
            first: "the given sizes".into(),
            first_size: 3,
            second: "A (mode 1)".into(),
            second_size: 4
        })
    );
}

#[test]
fn a_variable_no_input_fixes_needs_a_size() {
    assert_eq!(
        check_text("A(i,j) = b(i)", &[("b", &[2])], &[]),
        Err(EngineError::UnknownSize { var: "j".into() })
    );
    let s = check_text("A(i,j) = b(i)", &[("b", &[2])], &[("j", 3)]).unwrap();
    assert_eq!(s.output_shape(), &[2, 3]);
    // From the left tensor, when it is given (always for +=).
    let s = check_text("A(i,j) += b(i)", &[("b", &[2]), ("A", &[2, 4])], &[]).unwrap();
    assert_eq!(s.output_shape(), &[2, 4]);
    let s = check_text("A(i,j) = b(i)", &[("b", &[2]), ("A", &[2, 4])], &[]).unwrap();
    assert_eq!(s.output_shape(), &[2, 4]);
    // A summed variable that no access fixes.
    assert_eq!(
        check_text("y(i) = sum(k, b(i))", SPMV, &[]),
        Err(EngineError::UnknownSize { var: "k".into() })
    );
    assert_eq!(
        check_text("a = 2", &[], &[]).map(|s| s.output_shape().to_vec()),
        Ok(vec![])
    );
}

#[test]
fn a_summed_variable_used_outside_its_sum_is_refused() {
    for text in [
        "y(j) = sum(j, A(j,j2))",
        "y(i) = sum(j, A(i,j)) * x(j)",
        "y(i) = sum(j, sum(j, A(i,j)))",
    ] {
        let inputs: &[(&str, &[usize])] = &[("A", &[3, 3]), ("x", &[3])];
        match check_text(text, inputs, &[]) {
            Err(EngineError::Unsupported(m)) => assert!(m.contains("sum(j, ...)"), "{m}"),
            other => panic!("{text}: {other:?}"),
        }
    }
    // Sibling sums of one variable are fine.
    assert!(check_text("a = sum(j, x(j)) * sum(j, x(j))", SPMV, &[]).is_ok());
}

#[test]
fn check_reports_the_first_structural_error_in_text_order() {
    assert_eq!(
        check_text("y(i) = q(i) * A(i,i)", SPMV, &[]),
        Err(EngineError::UnknownTensor {
            name: "q".into(),
            column: 8
        })
    );
}

// -------------------------------------------------------------- no panic

fn token() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "y", "A", "x", "b", "i", "j", "k", "sum", "(", ")", ",", "=", "+=", "+", "-", "*", "/", "2", ".5", "1e-3",
        "1e", "1e999", " ", "\t", "é", "@", ".", "=+", "()", "(i,j)", "(i)", "min", "max", "sqrt", "atan2", "prod",
        "or", "<", "<=", "==", "!=", "&&", "||", "!", "&", "|", "xor", "sqr",
    ])
}

fn check_round_trip(text: &str) -> Result<(), TestCaseError> {
    if let Ok(stmt) = parse_statement(text) {
        let printed = stmt.to_string();
        let again = parse_statement(&printed);
        prop_assert_eq!(again.as_ref(), Ok(&stmt), "{:?} printed as {:?}", text, printed);
        let placed = place_reductions(&stmt);
        prop_assert_eq!(parse_statement(&placed.to_string()), Ok(placed));
    }
    Ok(())
}

/// Random expressions over a few tensors and variables, literals of every
/// magnitude (negative ones built as negation), every operator and `sum`.
fn expr() -> impl Strategy<Value = Expr> {
    let var = || prop::sample::select(vec!["i", "j", "k"]);
    let access = (
        prop::sample::select(vec!["A", "B", "x", "s"]),
        prop::collection::vec(var(), 0..4),
    )
        .prop_map(|(t, ix)| Expr::access(t, &ix));
    let literal = prop_oneof![
        prop::sample::select(vec![0.0, 1.0, 2.0, 0.5, 1e-3, -3.0]),
        any::<f64>().prop_filter("finite", |v| v.is_finite()),
    ]
    .prop_map(Expr::lit);
    let leaf = prop_oneof![3 => access, 1 => literal];
    leaf.prop_recursive(6, 48, 2, move |inner| {
        prop_oneof![
            inner.clone().prop_map(|e| -e),
            (
                inner.clone(),
                inner.clone(),
                prop::sample::select(vec![BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div]),
            )
                .prop_map(|(l, r, op)| Expr::binary(op, l, r)),
            (var(), inner.clone()).prop_map(|(v, body)| Expr::sum(v, body)),
            (var(), inner.clone(), prop::sample::select(REDUCTIONS.to_vec()))
                // `min(j, e)` with `e` not using `j` reads as a call.
                .prop_filter("the body uses the variable", |(v, body, op)| {
                    !matches!(op, Reduction::Min | Reduction::Max) || body.free_vars().contains(&IndexVar::new(*v))
                })
                .prop_map(|(v, body, op)| Expr::reduce(op, v, body)),
            (prop::sample::select(FUNCTIONS.to_vec()), inner.clone(), inner)
                .prop_map(|(f, a, b)| Expr::call(f, if f.arity() == 1 { vec![a] } else { vec![a, b] })),
        ]
    })
}

fn statement() -> impl Strategy<Value = Statement> {
    (
        prop::sample::select(vec![vec![], vec!["i"], vec!["i", "j"]]),
        any::<bool>(),
        expr(),
    )
        .prop_map(|(ix, add, rhs)| {
            let lhs = Access::new("y", &ix);
            if add {
                Statement::add_assign(lhs, rhs)
            } else {
                Statement::assign(lhs, rhs)
            }
        })
}

/// An edit of a statement's text: delete, insert or replace at a position.
#[derive(Debug, Clone)]
enum Edit {
    Delete(usize),
    Insert(usize, &'static str),
    Replace(usize, &'static str),
}

fn apply(text: &str, edit: &Edit) -> String {
    let chars: Vec<char> = text.chars().collect();
    let at = |k: usize| k % (chars.len() + 1);
    let (before, after, piece) = match *edit {
        Edit::Delete(k) => (at(k), (at(k) + 1).min(chars.len()), ""),
        Edit::Insert(k, t) => (at(k), at(k), t),
        Edit::Replace(k, t) => (at(k), (at(k) + 1).min(chars.len()), t),
    };
    let mut out: String = chars[..before].iter().collect();
    out.push_str(piece);
    out.extend(&chars[after..]);
    out
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        any::<usize>().prop_map(Edit::Delete),
        (any::<usize>(), token()).prop_map(|(k, t)| Edit::Insert(k, t)),
        (any::<usize>(), token()).prop_map(|(k, t)| Edit::Replace(k, t)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn built_statements_print_as_text_that_parses_back_to_them(stmt in statement()) {
        let text = stmt.to_string();
        prop_assert_eq!(parse_statement(&text), Ok(stmt.clone()), "{}", text);
    }

    #[test]
    fn edited_statements_parse_or_fail_cleanly_and_round_trip(
        stmt in statement(),
        edits in prop::collection::vec(edit(), 1..4),
    ) {
        let mut text = stmt.to_string();
        for e in &edits {
            text = apply(&text, e);
        }
        check_round_trip(&text)?;
    }

    #[test]
    fn the_parser_never_panics_on_arbitrary_text(text in "\\PC{0,60}|[ -~]{0,60}") {
        check_round_trip(&text)?;
    }

    #[test]
    fn statements_from_grammar_tokens_parse_or_fail_cleanly_and_round_trip(
        lhs in prop::sample::select(vec!["y(i)", "a", "A(i,j)", "a()", "y(i) +"]),
        op in prop::sample::select(vec!["=", "+="]),
        tokens in prop::collection::vec(token(), 0..24),
    ) {
        let text = format!("{lhs} {op} {}", tokens.concat());
        check_round_trip(&text)?;
        let spaced = format!("{lhs}{op}{}", tokens.join(" "));
        check_round_trip(&spaced)?;
    }
}

/// `leaves` terms `A(i,jK) * x(jK)` added as a balanced tree.
fn balanced_sum(first: usize, leaves: usize) -> String {
    if leaves == 1 {
        return format!("A(i,j{first}) * x(j{first})");
    }
    let half = leaves / 2;
    format!(
        "({} + {})",
        balanced_sum(first, half),
        balanced_sum(first + half, leaves - half)
    )
}

#[test]
fn huge_statements_are_handled_in_near_linear_time() {
    let n = 1 << 15;
    let text = format!("y(i) = {}", balanced_sum(0, n));
    let start = std::time::Instant::now();
    let stmt = parse(&text);
    assert_eq!(stmt.index_vars().len(), n + 1);
    assert_eq!(stmt.summed_vars().len(), n);
    let placed = place_reductions(&stmt);
    let printed = placed.to_string();
    assert!(printed.starts_with("y(i) = sum(j0, A(i,j0) * x(j0)) + sum(j1, A(i,j1) * x(j1))"));
    let shape = |t: &str| match t {
        "A" => Some(vec![2, 3]),
        "x" => Some(vec![3]),
        _ => None,
    };
    let sizes = check(&stmt, &shape, &|_| None).unwrap();
    assert_eq!(sizes.len(), n + 1);
    // Quadratic passes take minutes here; linear ones well under a second.
    assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
}
