//! Golden plans of scheduled kernels: the paper's schedules and a tiling,
//! pinned as text. A change here is a change of plan: read the new one
//! before updating it (`tessera eval ... -s "..." --print plan` shows the
//! same text).

use tessera_engine::schedule::Schedule;
use tessera_engine::Engine;
use tessera_formats::Format;

/// The plan of `statement` over `formats` into `output`, scheduled by
/// `schedule`.
fn plan(statement: &str, formats: &[(&str, Format)], output: Format, schedule: &str) -> String {
    let schedule: Schedule = schedule.parse().expect("the schedule parses");
    Engine::new()
        .compile_scheduled(statement, formats, &output, &schedule)
        .expect("the schedule applies")
        .plan()
        .to_string()
}

fn pinned(text: &str) -> &str {
    text.strip_prefix('\n').unwrap_or(text)
}

/// The paper's CPU SpMV schedule: rows strip-mined into blocks of 32, the
/// blocks run in parallel, each row recovered as `i = i0·32 + i1`.
#[test]
fn the_papers_spmv_schedule_strip_mines_the_rows_into_parallel_blocks() {
    let expected = r#"
schedule: split(i, i0, i1, 32); reorder(i0, i1, j); parallelize(i0, cpu_threads, no_races)
parallelize(i0, cpu_threads, no_races): every core at any size; each chunk writes its own part of the output
loop order: i0, i1, j
derived: i0 = i / 32, the block of i (i = i0·32 + i1, the last block cut at its dimension)
derived: i1 = i % 32, the place of i in its block
output y (dense): dense, accumulated in place
parallel: the loop over i0 splits into chunks of about the same work (stored entries below each coordinate); each writes its own rows of the output; results are the same bits for any number of threads; the schedule asks for every core at any size
forall i0: every coordinate; lattice universe
  forall i1: every coordinate; lattice universe
    where t0 is computed by:
      forall j: iterate A.compressed, locate x.dense; lattice {A.compressed, x.dense}
        (inner products run as blocks of coordinates: 2 factors)
concrete index notation:
  forall i0
    forall i1
      where t0 =
          forall j
            t0 += (A(i,j) * x(j))
      in
        y(i) += t0
"#;
    let got = plan(
        "y(i) = A(i,j) * x(j)",
        &[("A", Format::csr()), ("x", Format::dense(1))],
        Format::dense(1),
        "split(i, i0, i1, 32); reorder(i0, i1, j); parallelize(i0, cpu_threads, no_races)",
    );
    assert_eq!(got, pinned(expected));
}

/// The paper's CPU SpGEMM schedule: Gustavson's order, each row of the
/// product precomputed in a workspace, rows in parallel.
#[test]
fn the_papers_spgemm_schedule_precomputes_each_row_in_a_workspace() {
    let expected = r#"
schedule: reorder(i, k, j); precompute(A(i,k) * B(k,j), j, j, w); parallelize(i, cpu_threads, no_races)
parallelize(i, cpu_threads, no_races): every core at any size; each chunk writes its own part of the output
loop order: i, k, j
note: output C: results for (j) arrive out of order; a workspace collects them
note: precompute(A(i,k) * B(k,j), j, j, w): the workspace the plan makes already collects (j)
output C (csr): assembled by append in order
parallel: the loop over i splits into chunks of about the same work (stored entries below each coordinate); each assembles its own part of the output, and the parts are joined in order; results are the same bits for any number of threads; the schedule asks for every core at any size
forall i: every coordinate, locate A.dense; lattice {A.dense}
  workspace over (j), sorted and assembled into C after:
    forall k: iterate A.compressed, locate B.dense; lattice {A.compressed, B.dense}
      (the interpreter runs the loop as one op: a row scattered into the workspace per stored entry)
      forall j: iterate B.compressed; lattice {B.compressed}
        (runs as one block op: the stored row scattered into the workspace)
concrete index notation:
  forall i
    workspace w(j) assembled into C(i,j)
      forall k
        forall j
          C(i,j) += (A(i,k) * B(k,j))
"#;
    let got = plan(
        "C(i,j) = A(i,k) * B(k,j)",
        &[("A", Format::csr()), ("B", Format::csr())],
        Format::csr(),
        "reorder(i, k, j); precompute(A(i,k) * B(k,j), j, j, w); parallelize(i, cpu_threads, no_races)",
    );
    assert_eq!(got, pinned(expected));
}

/// SpMM with the dense columns divided into 4 blocks whose size the run
/// knows, the sparse row walked once per block.
#[test]
fn a_divided_column_loop_tiles_spmm() {
    let expected = r#"
schedule: divide(j, j0, j1, 4); reorder(i, j0, k, j1); parallelize(i, cpu_threads, no_races)
parallelize(i, cpu_threads, no_races): every core at any size; each chunk writes its own part of the output
loop order: i, j0, k, j1
derived: j0 = j / ⌈n/4⌉, the block of j (j = j0·⌈n/4⌉ + j1, the last block cut at its dimension)
derived: j1 = j % ⌈n/4⌉, the place of j in its block
output C (dense): dense, accumulated in place
parallel: the loop over i splits into chunks of about the same work (stored entries below each coordinate); each writes its own rows of the output; results are the same bits for any number of threads; the schedule asks for every core at any size
forall i: every coordinate, locate A.dense, C(out).dense; lattice {A.dense}
  forall j0: every coordinate; lattice universe
    forall k: iterate A.compressed, locate B.dense; lattice {A.compressed, B.dense}
      forall j1: every coordinate; lattice universe
        (all rows run as one block op: a product per row, positions stepping with the row)
concrete index notation:
  forall i
    forall j0
      forall k
        forall j1
          C(i,j) += (A(i,k) * B(k,j))
"#;
    let got = plan(
        "C(i,j) = A(i,k) * B(k,j)",
        &[("A", Format::csr()), ("B", Format::dense(2))],
        Format::dense(2),
        "divide(j, j0, j1, 4); reorder(i, j0, k, j1); parallelize(i, cpu_threads, no_races)",
    );
    assert_eq!(got, pinned(expected));
}

/// The paper's figure 4a SpMV: the stored entries cut into blocks of 16
/// of equal work, each block's rows found by search, the rows a block cuts
/// summed in parts into per-chunk partials.
#[test]
fn the_papers_position_space_spmv_cuts_the_entries_into_blocks() {
    let expected = r#"
schedule: fuse(i, j, f); pos(f, p, A); split(p, p0, p1, 16); parallelize(p0, cpu_threads, atomics)
parallelize(p0, cpu_threads, atomics): every core at any size; each chunk adds into a temporary of its own, added up in chunk order (the same bits for any number of threads)
loop order: p0, i, j
derived: p0 = p / 16, the block of p (p = p0·16 + p1, the last block cut at its dimension)
note: p: A's stored entries (positions of its level 1, compressed) in storage order, cut into blocks that p0 numbers; the loops over (i, j) recover each block's coordinates
output y (dense): dense, accumulated in place
parallel: the loop over p0 splits into chunks of the same number of blocks of positions; each adds into its own partial output, and the partials are added up in chunk order; results are the same bits for any number of threads; the schedule asks for every core at any size
forall p0: every coordinate; lattice universe
  forall i: every coordinate, locate A.dense, y(out).dense; lattice {A.dense}
    (only the coordinates whose A positions meet the block: two searches per block, galloping from the last block's)
    where t0 is computed by:
      forall j: iterate A.compressed, locate x.dense; lattice {A.compressed, x.dense}
        (A's positions cut to the block)
        (inner products run as blocks of coordinates: 2 factors)
concrete index notation:
  forall p0
    forall i
      where t0 =
          forall j
            t0 += (A(i,j) * x(j))
      in
        y(i) += t0
"#;
    let got = plan(
        "y(i) = A(i,j) * x(j)",
        &[("A", Format::csr()), ("x", Format::dense(1))],
        Format::dense(1),
        "fuse(i, j, f); pos(f, p, A); split(p, p0, p1, 16); parallelize(p0, cpu_threads, atomics)",
    );
    assert_eq!(got, pinned(expected));
}

/// The paper's CPU TTV schedule: blocks of B's (i, j) positions run in
/// parallel, each assembling a part of the CSR output; parts sharing a row
/// are joined into it.
#[test]
fn the_papers_ttv_schedule_runs_blocks_of_positions_into_joined_parts() {
    let expected = r#"
schedule: fuse(i, j, f); pos(f, fpos, B); split(fpos, chunk, fpos2, 16); reorder(chunk, fpos2, k); parallelize(chunk, cpu_threads, no_races)
parallelize(chunk, cpu_threads, no_races): every core at any size; each chunk writes its own part of the output
loop order: chunk, i, j, k
derived: chunk = fpos / 16, the block of fpos (fpos = chunk·16 + fpos2, the last block cut at its dimension)
note: fpos: B's stored entries (positions of its level 1, compressed) in storage order, cut into blocks that chunk numbers; the loops over (i, j) recover each block's coordinates
output A (csr): assembled by append in order
parallel: the loop over chunk splits into chunks of the same number of blocks of positions; each assembles its own part of the output, and the parts are joined in order (a row two parts share is joined into one); results are the same bits for any number of threads; the schedule asks for every core at any size
forall chunk: every coordinate; lattice universe
  forall i: iterate B.compressed; lattice {B.compressed}
    (only the coordinates whose B positions meet the block: two searches per block, galloping from the last block's)
    forall j: iterate B.compressed; lattice {B.compressed}
      (B's positions cut to the block)
      (the interpreter runs the loop as one op: a dot product per stored fibre, appended)
      where t0 is computed by:
        forall k: iterate B.compressed, locate c.dense; lattice {B.compressed, c.dense}
          (inner products run as blocks of coordinates: 2 factors)
concrete index notation:
  forall chunk
    forall i
      forall j
        where t0 =
            forall k
              t0 += (B(i,j,k) * c(k))
        in
          A(i,j) += t0
"#;
    let got = plan(
        "A(i,j) = B(i,j,k) * c(k)",
        &[("B", Format::csf(3)), ("c", Format::dense(1))],
        Format::csr(),
        "fuse(i, j, f); pos(f, fpos, B); split(fpos, chunk, fpos2, 16); reorder(chunk, fpos2, k); parallelize(chunk, cpu_threads, no_races)",
    );
    assert_eq!(got, pinned(expected));
}

/// A bound, a split of the bound variable and an unrolled place in the
/// block.
#[test]
fn bound_and_unroll_tag_their_loops() {
    let expected = r#"
schedule: bound(i, ib, 5, max_exact); split(ib, i0, i1, 4); unroll(i1, 4)
loop order: i0, i1, j
derived: i0 = i / 4, the block of i (i = i0·4 + i1, the last block cut at its dimension)
derived: i1 = i % 4, the place of i in its block
note: bound(i, ib, 5, max_exact): a run whose i has another size than 5 is refused
output y (dense): dense, accumulated in place
parallel: the loop over i0 splits into chunks of about the same work (stored entries below each coordinate); each writes its own rows of the output; results are the same bits for any number of threads; by default runs reading 131072 stored values or more use every core, smaller ones one thread
forall i0: every coordinate; lattice universe
  forall i1: every coordinate; lattice universe
    (unrolled: 4 copies of the body per test)
    where t0 is computed by:
      forall j: iterate A.compressed, locate x.dense; lattice {A.compressed, x.dense}
        (inner products run as blocks of coordinates: 2 factors)
concrete index notation:
  forall i0
    forall i1
      where t0 =
          forall j
            t0 += (A(i,j) * x(j))
      in
        y(i) += t0
"#;
    let got = plan(
        "y(i) = A(i,j) * x(j)",
        &[("A", Format::csr()), ("x", Format::dense(1))],
        Format::dense(1),
        "bound(i, ib, 5); split(ib, i0, i1, 4); unroll(i1, 4)",
    );
    assert_eq!(got, pinned(expected));
}

/// TACO's CPU SpMM schedule without its `cpu_vector`: each row's stored
/// entries in blocks of 8, the dense loop over the output's columns
/// between a block and its positions.
#[test]
fn tacos_spmm_schedule_cuts_each_row_into_blocks_of_positions() {
    let expected = r#"
schedule: split(i, i0, i1, 16); pos(j, jpos, A); split(jpos, jpos0, jpos1, 8); reorder(i0, i1, jpos0, k, jpos1); parallelize(i0, cpu_threads, no_races)
parallelize(i0, cpu_threads, no_races): every core at any size; each chunk writes its own part of the output
loop order: i0, i1, jpos0, k, j
derived: i0 = i / 16, the block of i (i = i0·16 + i1, the last block cut at its dimension)
derived: i1 = i % 16, the place of i in its block
derived: jpos0 = jpos / 8, the block of jpos (jpos = jpos0·8 + jpos1, the last block cut at its dimension)
note: jpos: the positions of each fibre of A's level 1 (compressed), cut into blocks that jpos0 numbers, inside the loops over (i0, i1); the loop over j runs over each block's positions
output C (dense): dense, accumulated in place
parallel: the loop over i0 splits into chunks of about the same work (stored entries below each coordinate); each writes its own rows of the output; results are the same bits for any number of threads; the schedule asks for every core at any size
forall i0: every coordinate; lattice universe
  forall i1: every coordinate; lattice universe
    forall jpos0: every coordinate; lattice universe
      (blocks of the positions of each fibre of A: a block's first position steps through the fibre)
      forall k: every coordinate, locate C(out).dense; lattice universe
        where t0 is computed by:
          forall j: iterate A.compressed, locate B.dense; lattice {A.compressed, B.dense}
            (A's positions cut to the block)
concrete index notation:
  forall i0
    forall i1
      forall jpos0
        forall k
          where t0 =
              forall j
                t0 += (A(i,j) * B(j,k))
          in
            C(i,k) += t0
"#;
    let got = plan(
        "C(i,k) = A(i,j) * B(j,k)",
        &[("A", Format::csr()), ("B", Format::dense(2))],
        Format::dense(2),
        "split(i, i0, i1, 16); pos(j, jpos, A(i,j)); split(jpos, jpos0, jpos1, 8); reorder(i0, i1, jpos0, k, jpos1); parallelize(i0, cpu_threads, no_races)",
    );
    assert_eq!(got, pinned(expected));
}

/// TACO's CPU SpMM schedule as written: its `cpu_vector` moves the loop
/// over the output's columns inside the block's positions, where each
/// position's row update runs as one block op.
#[test]
fn tacos_spmm_schedule_with_cpu_vector_runs_row_updates_per_position() {
    let expected = r#"
schedule: split(i, i0, i1, 16); pos(j, jpos, A); split(jpos, jpos0, jpos1, 8); reorder(i0, i1, jpos0, k, jpos1); parallelize(i0, cpu_threads, no_races); parallelize(k, cpu_vector, ignore_races)
parallelize(i0, cpu_threads, no_races): every core at any size; each chunk writes its own part of the output
loop order: i0, i1, jpos0, j, k
derived: i0 = i / 16, the block of i (i = i0·16 + i1, the last block cut at its dimension)
derived: i1 = i % 16, the place of i in its block
derived: jpos0 = jpos / 8, the block of jpos (jpos = jpos0·8 + jpos1, the last block cut at its dimension)
note: jpos: the positions of each fibre of A's level 1 (compressed), cut into blocks that jpos0 numbers, inside the loops over (i0, i1); the loop over j runs over each block's positions
note: the loop over k runs in 4 vector lanes: innermost, a copy of its body per lane, or a block op in SIMD lanes
output C (dense): dense, accumulated in place
parallel: the loop over i0 splits into chunks of about the same work (stored entries below each coordinate); each writes its own rows of the output; results are the same bits for any number of threads; the schedule asks for every core at any size
forall i0: every coordinate; lattice universe
  forall i1: every coordinate; lattice universe
    forall jpos0: every coordinate; lattice universe
      (blocks of the positions of each fibre of A: a block's first position steps through the fibre)
      forall j: iterate A.compressed, locate B.dense; lattice {A.compressed, B.dense}
        (A's positions cut to the block)
        (runs as one block op: a dense row update per stored coordinate)
concrete index notation:
  forall i0
    forall i1
      forall jpos0
        forall j
          forall k
            C(i,k) += (A(i,j) * B(j,k))
"#;
    let got = plan(
        "C(i,k) = A(i,j) * B(j,k)",
        &[("A", Format::csr()), ("B", Format::dense(2))],
        Format::dense(2),
        "split(i, i0, i1, 16); pos(j, jpos, A(i,j)); split(jpos, jpos0, jpos1, 8); reorder(i0, i1, jpos0, k, jpos1); parallelize(i0, cpu_threads, no_races); parallelize(k, cpu_vector, ignore_races)",
    );
    assert_eq!(got, pinned(expected));
}

/// TACO's CPU MTTKRP schedule on CSF, as written: the loop over a block's
/// places runs through the block's coordinates of B's first level, and
/// `B(i,k,l)·C(k,j)` fills a vector over `j` for each `(i,k,l)`.
#[test]
fn tacos_mttkrp_schedule_walks_each_block_of_a_compressed_level() {
    let expected = r#"
schedule: split(i, i1, i2, 16); reorder(i1, i2, k, l, j); precompute(B(i,k,l) * C(k,j), j, j, w); parallelize(i1, cpu_threads, no_races)
parallelize(i1, cpu_threads, no_races): every core at any size; each chunk writes its own part of the output
loop order: i1, i2, k, l, j
derived: i1 = i / 16, the block of i (i = i1·16 + i2, the last block cut at its dimension)
derived: i2 = i % 16, the place of i in its block
note: precompute(B(i,k,l) * C(k,j), j, j, w): t0(j) holds B(i,k,l) * C(k,j) at every j, computed once per (i, k, l); the rest of the product reads it
output A (dense): dense, accumulated in place
parallel: the loop over i1 splits into chunks of about the same work (stored entries below each coordinate); each writes its own rows of the output; results are the same bits for any number of threads; the schedule asks for every core at any size
forall i1: every coordinate; lattice universe
  forall i2: iterate B.compressed; lattice {B.compressed}
    (the coordinates of i in block i1: walked levels cut to them by two binary searches per block)
    forall k: iterate B.compressed, locate C.dense; lattice {B.compressed, C.dense}
      forall l: iterate B.compressed, locate D.dense; lattice {B.compressed, D.dense}
        where t0(j), a vector over j, is computed by:
          forall j: every coordinate, locate C.dense; lattice {C.dense}
            (runs as one dense block op)
        forall j: every coordinate, locate D.dense, A(out).dense; lattice {D.dense}
          (runs as one dense block op)
concrete index notation:
  forall i1
    forall i2
      forall k
        forall l
          where t0(j) =
              forall j
                t0(j) += (B(i,k,l) * C(k,j))
          in
            forall j
              A(i,j) += (t0(j) * D(l,j))
"#;
    let got = plan(
        "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
        &[("B", Format::csf(3)), ("C", Format::dense(2)), ("D", Format::dense(2))],
        Format::dense(2),
        "split(i, i1, i2, 16); reorder(i1, i2, k, l, j); precompute(B(i,k,l) * C(k,j), j, j, w); parallelize(i1, cpu_threads, no_races)",
    );
    assert_eq!(got, pinned(expected));
}

/// TACO's CPU SDDMM schedule as written, into its CSR output: the output
/// takes B's pattern, and each block adds into B's positions.
#[test]
fn tacos_sddmm_schedule_writes_at_the_operands_positions() {
    let expected = r#"
schedule: split(i, i0, i1, 16); pos(k, kpos, B); split(kpos, kpos0, kpos1, 8); reorder(i0, i1, kpos0, j, kpos1); parallelize(i0, cpu_threads, no_races); parallelize(kpos1, cpu_vector, parallel_reduction)
parallelize(i0, cpu_threads, no_races): every core at any size; each chunk writes its own part of the output
loop order: i0, i1, kpos0, j, k
derived: i0 = i / 16, the block of i (i = i0·16 + i1, the last block cut at its dimension)
derived: i1 = i % 16, the place of i in its block
derived: kpos0 = kpos / 8, the block of kpos (kpos = kpos0·8 + kpos1, the last block cut at its dimension)
note: output A takes B's pattern: its values accumulate in place at B's positions
note: kpos: the positions of each fibre of B's level 1 (compressed), cut into blocks that kpos0 numbers, inside the loops over (i0, i1); the loop over k runs over each block's positions
note: the loop over k runs in 4 vector lanes: innermost, a copy of its body per lane, or a block op in SIMD lanes
output A (csr): B's pattern, values accumulated in place at its positions
parallel: the loop over i0 splits into chunks of about the same work (stored entries below each coordinate); each writes the values of its own rows' positions; results are the same bits for any number of threads; the schedule asks for every core at any size
forall i0: every coordinate; lattice universe
  forall i1: every coordinate; lattice universe
    forall kpos0: every coordinate; lattice universe
      (blocks of the positions of each fibre of B: a block's first position steps through the fibre)
      forall j: every coordinate, locate C.dense, D.dense; lattice {C.dense, D.dense}
        forall k: iterate B.compressed, locate D.dense; lattice {B.compressed, D.dense}
          (B's positions cut to the block)
          (vector lanes: 4 copies of the body per test)
          (runs as one block op: the row's stored values, scaled, written at their positions)
concrete index notation:
  forall i0
    forall i1
      forall kpos0
        forall j
          forall k
            A(i,k) += ((B(i,k) * C(i,j)) * D(j,k))
"#;
    let got = plan(
        "A(i,k) = B(i,k) * C(i,j) * D(j,k)",
        &[("B", Format::csr()), ("C", Format::dense(2)), ("D", Format::dense(2))],
        Format::csr(),
        "split(i, i0, i1, 16); pos(k, kpos, B(i,k)); split(kpos, kpos0, kpos1, 8); reorder(i0, i1, kpos0, j, kpos1); parallelize(i0, cpu_threads, no_races); parallelize(kpos1, cpu_vector, parallel_reduction)",
    );
    assert_eq!(got, pinned(expected));
}

/// MTTKRP with some factors precomputed: for each `(i,k)`, a vector
/// temporary over `j` takes `Σl B(i,k,l)·D(l,j)` (one dense row update per
/// `l`), and one more row update adds it times `C(k,j)` into `A`'s row.
#[test]
fn a_precompute_of_some_factors_fills_a_vector_over_its_variable() {
    let expected = r#"
schedule: precompute(B(i,k,l) * D(l,j), j, jw, w); parallelize(i, cpu_threads, no_races)
parallelize(i, cpu_threads, no_races): every core at any size; each chunk writes its own part of the output
loop order: i, k, l, j
note: precompute(B(i,k,l) * D(l,j), j, jw, w): t0(j) holds B(i,k,l) * D(l,j) summed over l at every j, computed once per (i, k); the rest of the product reads it
output A (dense): dense, accumulated in place
parallel: the loop over i splits into chunks of about the same work (stored entries below each coordinate); each writes its own rows of the output; results are the same bits for any number of threads; the schedule asks for every core at any size
forall i: iterate B.compressed; lattice {B.compressed}
  forall k: iterate B.compressed, locate C.dense; lattice {B.compressed, C.dense}
    where t0(j), a vector over j, is computed by:
      forall l: iterate B.compressed, locate D.dense; lattice {B.compressed, D.dense}
        forall j: every coordinate, locate D.dense; lattice {D.dense}
          (runs as one dense block op)
    forall j: every coordinate, locate C.dense, A(out).dense; lattice {C.dense}
      (runs as one dense block op)
concrete index notation:
  forall i
    forall k
      where t0(j) =
          forall l
            forall j
              t0(j) += (B(i,k,l) * D(l,j))
      in
        forall j
          A(i,j) += (t0(j) * C(k,j))
"#;
    let got = plan(
        "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
        &[("B", Format::csf(3)), ("C", Format::dense(2)), ("D", Format::dense(2))],
        Format::dense(2),
        "precompute(B(i,k,l) * D(l,j), j, jw, w); parallelize(i, cpu_threads, no_races)",
    );
    assert_eq!(got, pinned(expected));
}
