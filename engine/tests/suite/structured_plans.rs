//! Golden plans: how structured formats are iterated natively, pinned as
//! text. A change here is a change of plan: read the new one before
//! updating it (`--print plan` shows the same text).

use tessera_engine::Engine;
use tessera_formats::Format;

/// The plan of SpMV with `A` in `a`, `x` dense; the leading newline of the
/// expected text is dropped.
fn spmv_plan(a: Format) -> String {
    let formats = [("A", a), ("x", Format::dense(1))];
    Engine::new()
        .compile("y(i) = A(i,j) * x(j)", &formats, &Format::dense(1))
        .unwrap()
        .plan()
        .to_string()
}

fn pinned(text: &str) -> &str {
    text.strip_prefix('\n').unwrap_or(text)
}

/// DIA: a loop over the stored diagonals (the variable `j-i`), the rows of
/// each as a computed range, the column computed (j = i + offset) with no
/// loop.
#[test]
fn dia_spmv_loops_over_diagonals_then_a_range_of_rows() {
    let expected = r#"
loop order: j-i, i, j
derived: j-i = j - i + |i| - 1, the diagonal of (i, j) its operands store; summed
output y (dense): dense, accumulated in place
parallel: the loops run whole (its outer loop runs over j-i, a level's diagonal or own variable, and chunks of those are not supported yet); the deferred strided updates then run a tile of the output per thread; results are the same bits for any number of threads; by default runs reading 131072 stored values or more use every core, smaller ones one thread
forall j-i: iterate A.compressed; lattice {A.compressed}
  forall i: iterate A.range; lattice {A.range}
    (all rows run as one block op: a product per row, positions stepping with the row)
the strided updates run together after the loops, a tile of the output at a time (each component gets their products in the same order)
concrete index notation:
  forall j-i
    forall i
      where t0 =
          forall j
            t0 += (A(i,j) * x(j))
      in
        y(i) += t0
"#;
    assert_eq!(spmv_plan(Format::dia()), pinned(expected));
}

/// ELL: a loop over the slots, every row of each, the column stored; the
/// slots' updates deferred and run a tile of y at a time, on every thread.
#[test]
fn ell_spmv_loops_over_slots_then_rows() {
    let expected = r#"
loop order: A.slot, i, j
derived: A.slot = the coordinate of A's level 0 (dense), which stores no mode; summed
output y (dense): dense, accumulated in place
parallel: the loops run whole (its outer loop runs over A.slot, a level's diagonal or own variable, and chunks of those are not supported yet); the deferred strided updates then run a tile of the output per thread; results are the same bits for any number of threads; by default runs reading 131072 stored values or more use every core, smaller ones one thread
forall A.slot: every coordinate, locate A.dense; lattice {A.dense}
  forall i: every coordinate, locate A.dense, y(out).dense; lattice {A.dense}
    (all rows run as one block op: a product per row, positions stepping with the row)
the strided updates run together after the loops, a tile of the output at a time (each component gets their products in the same order)
concrete index notation:
  forall A.slot
    forall i
      where t0 =
          forall j
            t0 += (A(i,j) * x(j))
      in
        y(i) += t0
"#;
    assert_eq!(spmv_plan(Format::ell()), pinned(expected));
}

/// BCSR: loops over the blocks of i and j and over the places in a block;
/// x and y are located at the recovered i and j. Every block row runs in
/// one op, with no bytecode per block row.
#[test]
fn bcsr_spmv_loops_over_blocks_and_places_in_them() {
    let expected = r#"
loop order: i/4, j/4, i%4, j%4
derived: i/4 = i / 4, the block of i (i = i/4·4 + i%4)
derived: j/4 = j / 4, the block of j (j = j/4·4 + j%4)
derived: i%4 = i % 4, the place of i in its block
derived: j%4 = j % 4, the place of j in its block
output y (dense): dense, accumulated in place
parallel: the loop over i/4 splits into chunks of about the same work (stored entries below each coordinate); each writes its own rows of the output; results are the same bits for any number of threads; by default runs reading 131072 stored values or more use every core, smaller ones one thread
forall i/4: every coordinate, locate A.dense; lattice {A.dense}
  (all block rows run as one block op: dense rows times dense runs per stored block)
concrete index notation:
  forall i/4
    forall j/4
      forall i%4
        where t0 =
            forall j%4
              t0 += (A(i,j) * x(j))
        in
          y(i) += t0
"#;
    assert_eq!(spmv_plan(Format::bcsr(4, 4).unwrap()), pinned(expected));
}

/// Blocks stored as a DCSR of dense 2 x 2 blocks (a composition no named
/// format has): the same derived variables as BCSR, the block rows walked
/// by a compressed level.
#[test]
fn blocked_dcsr_spmv_loops_over_stored_blocks() {
    use tessera_formats::{FormatLevel, LevelFormat, Projection, Split};
    let level = |level, mode, split| FormatLevel {
        level,
        projection: Projection::Mode { mode, split },
    };
    let blocked = Format::new(
        2,
        vec![
            level(LevelFormat::compressed(), 0, Split::Outer(2)),
            level(LevelFormat::compressed(), 1, Split::Outer(2)),
            level(LevelFormat::dense(), 0, Split::Inner(2)),
            level(LevelFormat::dense(), 1, Split::Inner(2)),
        ],
    )
    .unwrap();
    let expected = r#"
loop order: i/2, j/2, i%2, j%2
derived: i/2 = i / 2, the block of i (i = i/2·2 + i%2)
derived: j/2 = j / 2, the block of j (j = j/2·2 + j%2)
derived: i%2 = i % 2, the place of i in its block
derived: j%2 = j % 2, the place of j in its block
output y (dense): dense, accumulated in place
parallel: the loop over i/2 splits into chunks of about the same work (stored entries below each coordinate); each writes its own rows of the output; results are the same bits for any number of threads; by default runs reading 131072 stored values or more use every core, smaller ones one thread
forall i/2: iterate A.compressed; lattice {A.compressed}
  forall j/2: iterate A.compressed; lattice {A.compressed}
    (all stored blocks run as one block op: dense rows times dense runs per block)
concrete index notation:
  forall i/2
    forall j/2
      forall i%2
        where t0 =
            forall j%2
              t0 += (A(i,j) * x(j))
        in
          y(i) += t0
"#;
    assert_eq!(spmv_plan(blocked), pinned(expected));
}

/// A DIA output in the format of a DIA factor takes its pattern: the
/// diagonals are iterated natively and the values written at A's
/// positions, with no conversion and no workspace to sort: a diagonal's
/// rows, and the columns below them, are one run of values.
#[test]
fn dia_output_of_a_dia_factor_takes_its_pattern() {
    let expected = r#"
loop order: j-i, i, j
derived: j-i = j - i + |i| - 1, the diagonal of (i, j) its operands store; summed
note: output B takes A's pattern: its values accumulate in place at A's positions
output B (dia): A's pattern, values accumulated in place at its positions
parallel: runs on one thread: its outer loop runs over j-i, a level's diagonal or own variable, and chunks of those are not supported yet
forall j-i: iterate A.compressed; lattice {A.compressed}
  forall i: iterate A.range; lattice {A.range}
    (runs as one block op: the stored values below it, scaled, written at their positions)
concrete index notation:
  forall j-i
    forall i
      forall j
        B(i,j) += (2 * A(i,j))
"#;
    let plan = Engine::new()
        .compile("B(i,j) = 2 * A(i,j)", &[("A", Format::dia())], &Format::dia())
        .unwrap()
        .plan()
        .to_string();
    assert_eq!(plan, pinned(expected));
}

/// Two DIA tensors share their diagonal variable `j-i`: their stored
/// diagonals merge by offset, the rows of each diagonal are merged as one
/// op into the DIA output's diagonal, appended for each of the union.
/// Nothing is converted.
#[test]
fn dia_plus_dia_merges_their_diagonals_into_dia() {
    let formats = [("A", Format::dia()), ("B", Format::dia())];
    let plan = Engine::new()
        .compile("C(i,j) = A(i,j) + B(i,j)", &formats, &Format::dia())
        .unwrap()
        .plan()
        .to_string();
    let head = r#"
loop order: j-i, i, j
derived: j-i = j - i + |i| - 1, the diagonal of (i, j) its operands store; summed
output C (dia): assembled by append in order
parallel: runs on one thread: its outer loop runs over j-i, a level's diagonal or own variable, and chunks of those are not supported yet
forall j-i: merge A.compressed, B.compressed; lattice {A.compressed, B.compressed} > {A.compressed} > {B.compressed}
  forall i: merge A.range, B.range; lattice {A.range, B.range} > {A.range} > {B.range}
    (runs as one block op: the two computed ranges merged into an output range)
"#;
    assert!(plan.starts_with(pinned(head)), "{plan}");
    assert!(!plan.contains("convert"), "{plan}");
}

/// The same statement into another structured format cannot take A's
/// own pattern: A is converted to CSR, the output is assembled as CSR on
/// the converted A's pattern and converted to ELL once at the end, as the
/// plan says; a sum of two converted operands is appended as CSR. The
/// results are the reference's.
#[test]
fn structured_output_of_another_format_is_assembled_as_csr_and_converted() {
    let engine = Engine::new();
    let kernel = engine
        .compile("B(i,j) = 2 * A(i,j)", &[("A", Format::dia())], &Format::ell())
        .unwrap();
    let plan = kernel.plan().to_string();
    assert!(plan.contains("convert A from dia to csr"), "{plan}");
    assert!(
        plan.contains("output B in ell: assembled as csr and converted to ell once at the end"),
        "{plan}"
    );
    assert!(
        plan.contains("output B (csr): A's pattern, values accumulated in place at its positions"),
        "{plan}"
    );
    assert_eq!(kernel.output_format(), &Format::ell());
    let sum = engine
        .compile(
            "B(i,j) = A(i,j) + C(i,j)",
            &[("A", Format::dia()), ("C", Format::dia())],
            &Format::ell(),
        )
        .unwrap();
    let plan = sum.plan().to_string();
    assert!(
        plan.contains("output B in ell: assembled as csr and converted to ell once at the end"),
        "{plan}"
    );
    assert!(plan.contains("output B (csr): assembled by append in order"), "{plan}");
    let mut rng = tessera_engine::testing::Rng::new(43);
    for kind in tessera_engine::testing::EntryKind::ALL {
        let a = tessera_engine::testing::random_tensor(&mut rng, &[7, 9], kind, &Format::dia()).unwrap();
        let c = tessera_engine::testing::random_tensor(&mut rng, &[7, 9], kind, &Format::dia()).unwrap();
        for (statement, inputs) in [
            ("B(i,j) = 2 * A(i,j)", vec![("A", &a)]),
            ("B(i,j) = A(i,j) + C(i,j)", vec![("A", &a), ("C", &c)]),
        ] {
            tessera_engine::testing::check_statement(&engine, statement, &inputs, Some(&Format::ell()), &[])
                .unwrap_or_else(|e| panic!("{statement}, {kind:?}: {e}"));
        }
    }
}

/// Two BCSR tensors of the same blocks: the block rows located, the
/// stored blocks of both merged, the places in a block located in both;
/// neither is converted.
#[test]
fn bcsr_plus_bcsr_merges_their_blocks() {
    let formats = [
        ("A", Format::bcsr(4, 4).unwrap()),
        ("B", Format::bcsr(4, 4).unwrap()),
        ("x", Format::dense(1)),
    ];
    let plan = Engine::new()
        .compile("y(i) = (A(i,j) + B(i,j)) * x(j)", &formats, &Format::dense(1))
        .unwrap()
        .plan()
        .to_string();
    assert!(!plan.contains("convert"), "{plan}");
    assert!(
        plan.contains(
            "forall j/4: merge A.compressed, B.compressed; lattice {A.compressed, B.compressed} > {A.compressed} > {B.compressed}"
        ),
        "{plan}"
    );
}

/// Two BCSR tensors of the same blocks into BCSR: no conversion, and no
/// workspace; the block rows' stored blocks merged by one op per block
/// row, each output block appended with its values; one thread by
/// default, as for other merges (joining parts would copy it all again).
#[test]
fn bcsr_plus_bcsr_into_bcsr_merges_block_rows_in_one_op() {
    let expected = r#"
loop order: i/4, j/4, i%4, j%4
derived: i/4 = i / 4, the block of i (i = i/4·4 + i%4)
derived: j/4 = j / 4, the block of j (j = j/4·4 + j%4)
derived: i%4 = i % 4, the place of i in its block
derived: j%4 = j % 4, the place of j in its block
output C (bcsr:4x4): assembled by append in order
parallel: the loop over i/4 splits into chunks of about the same work (stored entries below each coordinate); each assembles its own part of the output, and the parts are joined in order; results are the same bits for any number of threads; by default one thread: the rows' merge writes about as much as it reads, and joining the parts copies it all again (--threads sets more)
forall i/4: every coordinate, locate A.dense, B.dense; lattice {A.dense, B.dense} > {A.dense} > {B.dense}
  forall j/4: merge A.compressed, B.compressed; lattice {A.compressed, B.compressed} > {A.compressed} > {B.compressed}
    (runs as one block op: the two stored rows of 4x4 blocks merged block by block into an output row)
concrete index notation:
  forall i/4
    forall j/4
      forall i%4
        forall j%4
          C(i,j) += (A(i,j) + B(i,j))
"#;
    let bcsr = Format::bcsr(4, 4).unwrap();
    let plan = Engine::new()
        .compile(
            "C(i,j) = A(i,j) + B(i,j)",
            &[("A", bcsr.clone()), ("B", bcsr.clone())],
            &bcsr,
        )
        .unwrap()
        .plan()
        .to_string();
    assert_eq!(plan, pinned(expected));
}

/// Two BCSR tensors into a dense matrix: the loops follow the blocks
/// (block rows, block columns, then the places in a block), so each block
/// row's stored blocks are walked once, not once per row of the block as
/// the output's row-major order alone would have them.
#[test]
fn bcsr_times_bcsr_into_dense_walks_each_block_row_once() {
    let bcsr = Format::bcsr(4, 4).unwrap();
    let plan = Engine::new()
        .compile(
            "C(i,j) = A(i,j) * B(i,j)",
            &[("A", bcsr.clone()), ("B", bcsr)],
            &Format::dense(2),
        )
        .unwrap()
        .plan()
        .to_string();
    assert!(plan.starts_with("loop order: i/4, j/4, i%4, j%4\n"), "{plan}");
    assert!(!plan.contains("convert"), "{plan}");
}

/// Two ELL matrices into a dense output: their slots are their own
/// variables (A's third slot of a row and B's hold different columns), so
/// one loop nest could not merge them; the sum is computed term by term,
/// each term's slots and rows scattered into the output by loops of its
/// own, and neither is converted.
#[test]
fn ell_plus_ell_into_dense_runs_term_by_term() {
    let expected = r#"
loop order: A.slot, i, j, B.slot
derived: A.slot = the coordinate of A's level 0 (dense), which stores no mode; summed
derived: B.slot = the coordinate of B's level 0 (dense), which stores no mode; summed
note: the sum is computed term by term, each term's loops adding into C: one loop nest would merge tensors whose formats give no common order
output C (dense): dense, accumulated in place
parallel: runs on one thread: its sum is computed term by term, and the terms' outer loops differ
term 1 of 2, added into C by loops of its own:
  forall A.slot: every coordinate, locate A.dense; lattice {A.dense}
    forall i: every coordinate, locate A.dense, C(out).dense; lattice {A.dense}
      forall j: iterate A.singleton; lattice {A.singleton}
        (one child per parent position: no loop)
term 2 of 2, added into C by loops of its own:
  forall B.slot: every coordinate, locate B.dense; lattice {B.dense}
    forall i: every coordinate, locate B.dense, C(out).dense; lattice {B.dense}
      forall j: iterate B.singleton; lattice {B.singleton}
        (one child per parent position: no loop)
concrete index notation:
  forall A.slot
    forall i
      forall j
        C(i,j) += A(i,j)
  then
  forall B.slot
    forall i
      forall j
        C(i,j) += B(i,j)
"#;
    let formats = [("A", Format::ell()), ("B", Format::ell())];
    let plan = Engine::new()
        .compile("C(i,j) = A(i,j) + B(i,j)", &formats, &Format::dense(2))
        .unwrap()
        .plan()
        .to_string();
    assert_eq!(plan, pinned(expected));
}

/// Two SpMVs added into one vector read different sparse matrices: each
/// runs as its own dot-per-row block op rather than the rows of both being
/// merged at every column, and the chunks of rows cut both terms alike.
#[test]
fn two_products_into_one_vector_run_term_by_term_in_chunks_of_rows() {
    let expected = r#"
loop order: i, j
note: the sum is computed term by term, each term's loops adding into y: its terms read different sparse tensors, each walked once by loops of its own rather than merged at every coordinate
output y (dense): dense, accumulated in place
parallel: the loop over i splits into chunks of about the same work (stored entries below each coordinate); each writes its own rows of the output; results are the same bits for any number of threads; by default runs reading 131072 stored values or more use every core, smaller ones one thread
term 1 of 2, added into y by loops of its own:
  forall i: every coordinate, locate A.dense, y(out).dense; lattice {A.dense}
    (all rows run as one block op: a dot product per row)
term 2 of 2, added into y by loops of its own:
  forall i: every coordinate, locate B.dense, y(out).dense; lattice {B.dense}
    (all rows run as one block op: a dot product per row)
"#;
    let formats = [("A", Format::csr()), ("B", Format::csr()), ("x", Format::dense(1))];
    let plan = Engine::new()
        .compile("y(i) = A(i,j) * x(j) + B(i,j) * x(j)", &formats, &Format::dense(1))
        .unwrap()
        .plan()
        .to_string();
    assert!(plan.starts_with(pinned(expected)), "{plan}");
}

/// The interpreter runs a loop over a slot's rows (ELL) or a diagonal's
/// rows (DIA) as one op when its body is a sum or a scatter of the stored
/// values: the rows' positions are consecutive, so the loop is a walk over
/// a run of the stored values (ELL column sums 281 -> 19 ms, DIA sum of
/// squares 251 -> 4.3 ms on the 1M-row stencil). A body that reads the row
/// itself (row sums) keeps its loop.
#[test]
fn interpreter_walks_the_rows_of_a_slot_or_a_diagonal_as_one_op() {
    let shortcut = "(the interpreter runs the loop as one op:";
    for (statement, format, output, walked) in [
        ("y(j) = A(i,j)", Format::ell(), Format::dense(1), true),
        ("s = A(i,j)", Format::ell(), Format::dense(0), true),
        ("s = A(i,j) * A(i,j)", Format::dia(), Format::dense(0), true),
        ("y(i) = A(i,j)", Format::ell(), Format::dense(1), false),
        ("y(j) = A(i,j)", Format::dia(), Format::dense(1), false),
    ] {
        let plan = Engine::new()
            .compile(statement, &[("A", format.clone())], &output)
            .unwrap()
            .plan()
            .to_string();
        assert_eq!(plan.contains(shortcut), walked, "{statement} on {format}:\n{plan}");
    }
}

/// DIA times a dense matrix: each diagonal's rows run as one op, a row of
/// products per row (its value times a row of X, into a row of C), with no
/// bytecode per stored entry: on a 490,000-row stencil times 4 columns the
/// interpreter took 20x the compiled tier's time with it, 1.0-1.6x
/// without. ELL's slots likewise, the row of X gathered at the stored
/// column (24x before, 1.1x after). The updates run together, a tile of
/// whole rows of C at a time (on the stencil times 32 columns, 0.75x the
/// time of one diagonal after another), on every thread.
#[test]
fn dia_and_ell_times_a_dense_matrix_update_rows_of_products_in_one_op() {
    let expected = r#"
loop order: k-i, i, k, j
derived: k-i = k - i + |i| - 1, the diagonal of (i, k) its operands store; summed
output C (dense): dense, accumulated in place
parallel: the loops run whole (its outer loop runs over k-i, a level's diagonal or own variable, and chunks of those are not supported yet); the deferred strided updates then run a tile of the output per thread; results are the same bits for any number of threads; by default runs reading 131072 stored values or more use every core, smaller ones one thread
forall k-i: iterate A.compressed; lattice {A.compressed}
  forall i: iterate A.range; lattice {A.range}
    (all rows run as one block op: a row of products per row, one per column, positions stepping with the row)
the strided updates run together after the loops, a tile of the output at a time (each component gets their products in the same order)
concrete index notation:
  forall k-i
    forall i
      forall k
        forall j
          C(i,j) += (A(i,k) * X(k,j))
"#;
    let plan = |a: Format| {
        let formats = [("A", a), ("X", Format::dense(2))];
        let kernel = Engine::new()
            .compile("C(i,j) = A(i,k) * X(k,j)", &formats, &Format::dense(2))
            .unwrap();
        kernel.plan().to_string()
    };
    assert_eq!(plan(Format::dia()), pinned(expected));
    let rows = "(all rows run as one block op: a row of products per row, one per column";
    assert!(plan(Format::ell()).contains(rows), "{}", plan(Format::ell()));
}
