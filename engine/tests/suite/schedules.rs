//! Scheduled statements: each command alone and in combinations, over
//! several formats and every awkward kind of contents, against the dense
//! reference (and so against the unscheduled kernel, which the other
//! suites hold to it), on any number of threads; and every refusal with
//! its message. The Cranelift tier runs the same table
//! (`tiers/tests/engine_suite.rs` includes this file).

use tessera_engine::schedule::Schedule;
use tessera_engine::testing::{check_scheduled, random_tensor, EntryKind, Rng, Tolerance};
use tessera_engine::{EngineError, Inputs};
use tessera_formats::{Format, Tensor};

/// A scheduled kernel of the table.
struct Case {
    statement: &'static str,
    /// Each operand's name, index variables and format choices.
    operands: Vec<(&'static str, &'static str, Vec<Format>)>,
    outputs: Vec<Format>,
    schedules: &'static [&'static str],
}

fn case(
    statement: &'static str,
    operands: Vec<(&'static str, &'static str, Vec<Format>)>,
    outputs: Vec<Format>,
    schedules: &'static [&'static str],
) -> Case {
    Case {
        statement,
        operands,
        outputs,
        schedules,
    }
}

fn cases() -> Vec<Case> {
    let rows = || vec![Format::csr(), Format::dcsr(), Format::coo(2)];
    let dense = |order| vec![Format::dense(order)];
    vec![
        case(
            "y(i) = A(i,j) * x(j)",
            vec![
                ("A", "ij", rows()),
                ("x", "j", vec![Format::dense(1), Format::sparse_vector()]),
            ],
            vec![Format::dense(1), Format::sparse_vector()],
            &[
                "reorder(i, j)",
                "parallelize(i, cpu_threads, no_races)",
                "reorder(i, j); parallelize(i, cpu_threads, no_races)",
                "parallelize(i, cpu_threads, ignore_races)",
            ],
        ),
        case(
            "y(i) = A(i,j) * x(j)",
            vec![("A", "ij", vec![Format::csr()]), ("x", "j", vec![Format::dense(1), Format::sparse_vector()])],
            vec![Format::dense(1)],
            &[
                "split(i, i0, i1, 4)",
                "split(i, i0, i1, 3); parallelize(i0, cpu_threads, no_races)",
                "split(i, i0, i1, 32); reorder(i0, i1, j); parallelize(i0, cpu_threads, no_races)",
                "divide(i, i0, i1, 3)",
                "divide(i, i0, i1, 4); parallelize(i0, cpu_threads, no_races)",
                "divide(i, i0, i1, 64); parallelize(i0, cpu_threads, no_races)",
            ],
        ),
        case(
            "y(i) = A(i,j) * x(j)",
            vec![("A", "ij", dense(2)), ("x", "j", dense(1))],
            vec![Format::dense(1)],
            &[
                "split(j, j0, j1, 4)",
                "split(j, j0, j1, 5); reorder(j0, i, j1)",
                "split(i, i0, i1, 2); split(j, j0, j1, 3); reorder(i0, j0, i1, j1)",
                "split(j, j0, j1, 4); reorder(j0, i, j1); parallelize(j0, cpu_threads, temporary)",
                "divide(j, j0, j1, 3); reorder(j0, i, j1); parallelize(j0, cpu_threads, atomics)",
                "divide(j, j0, j1, 2); reorder(j1, i, j0)",
                "split(i, i0, i1, 3); reorder(i1, i0, j)",
            ],
        ),
        case(
            "y(i) = A(i,j) * x(j)",
            vec![("A", "ij", vec![Format::csc(), Format::dcsc()]), ("x", "j", dense(1))],
            vec![Format::dense(1)],
            &[
                "parallelize(j, cpu_threads, atomics)",
                "parallelize(j, cpu_threads, temporary)",
                "reorder(j, i); parallelize(j, cpu_threads, ignore_races)",
            ],
        ),
        case(
            "C(i,j) = A(i,k) * B(k,j)",
            vec![("A", "ik", rows()), ("B", "kj", vec![Format::csr(), Format::dense(2)])],
            vec![Format::csr(), Format::dense(2)],
            &[
                "reorder(i, k, j)",
                "reorder(i, k, j); parallelize(i, cpu_threads, no_races)",
                "reorder(i, k, j); precompute(A(i,k) * B(k,j), j, j, w); parallelize(i, cpu_threads, no_races)",
            ],
        ),
        case(
            "C(i,j) = A(i,k) * B(k,j)",
            vec![("A", "ik", vec![Format::csr()]), ("B", "kj", dense(2))],
            vec![Format::dense(2)],
            &[
                "reorder(i, j, k)",
                "reorder(i, j, k); parallelize(i, cpu_threads, no_races)",
                "split(j, j0, j1, 4); reorder(i, j0, k, j1)",
                "split(i, i0, i1, 8); split(j, j0, j1, 4); reorder(i0, j0, i1, k, j1); parallelize(i0, cpu_threads, no_races)",
            ],
        ),
        case(
            "C(i,j) = A(i,k) * B(k,j)",
            vec![("A", "ik", vec![Format::csc()]), ("B", "kj", vec![Format::csr()])],
            vec![Format::dense(2)],
            &["reorder(k, i, j); parallelize(k, cpu_threads, temporary)"],
        ),
        case(
            "A(i,j) = B(i,j) * C(i,k) * D(k,j)",
            vec![("B", "ij", rows()), ("C", "ik", dense(2)), ("D", "kj", dense(2))],
            vec![Format::csr()],
            &["reorder(i, j, k); parallelize(i, cpu_threads, no_races)"],
        ),
        case(
            "A(i,j) = B(i,j) * C(i,k) * D(k,j)",
            vec![("B", "ij", vec![Format::csr()]), ("C", "ik", dense(2)), ("D", "kj", dense(2))],
            vec![Format::csr(), Format::dense(2)],
            &[
                "split(i, i0, i1, 4); parallelize(i0, cpu_threads, no_races)",
                "split(i, i0, i1, 16); reorder(i0, i1, j, k); parallelize(i0, cpu_threads, no_races)",
            ],
        ),
        case(
            "A(i,j) = B(i,j,k) * c(k)",
            vec![("B", "ijk", vec![Format::csf(3)]), ("c", "k", dense(1))],
            vec![Format::csr(), Format::dense(2)],
            &["reorder(i, j, k); parallelize(i, cpu_threads, no_races)"],
        ),
        case(
            "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
            vec![
                ("B", "ikl", vec![Format::csf(3)]),
                ("C", "kj", dense(2)),
                ("D", "lj", dense(2)),
            ],
            vec![Format::dense(2)],
            &[
                "reorder(i, k, l, j); parallelize(i, cpu_threads, no_races)",
                "parallelize(i, cpu_threads, no_races)",
            ],
        ),
        // Splits of variables that compressed levels walk: the loop over
        // the place in a block runs through the block's coordinates, the
        // walked levels cut to them (TACO's CPU MTTKRP on CSF, and rows of
        // DCSR and COO, sparse outputs among them).
        case(
            "y(i) = A(i,j) * x(j)",
            vec![("A", "ij", rows()), ("x", "j", vec![Format::dense(1), Format::sparse_vector()])],
            vec![Format::dense(1), Format::sparse_vector()],
            &[
                "split(i, i0, i1, 4)",
                "split(i, i0, i1, 3); parallelize(i0, cpu_threads, no_races)",
                "split(j, j0, j1, 4)",
                "split(i, i0, i1, 2); split(j, j0, j1, 3)",
                "divide(i, i0, i1, 3); parallelize(i0, cpu_threads, no_races)",
                "split(j, j0, j1, 1); unroll(j1, 2)",
            ],
        ),
        // Blocks of a dense first level's positions with another operand
        // walked at its variable: the walk starts at the block's first
        // coordinate.
        case(
            "a = B(j,i) * (B(j,i) - c(j))",
            vec![("B", "ji", vec![Format::csr()]), ("c", "j", vec![Format::sparse_vector(), Format::dense(1)])],
            vec![Format::dense(0)],
            &[
                "pos(j, jp, B); split(jp, jp0, jp1, 1)",
                "pos(j, jp, B); split(jp, jp0, jp1, 3)",
                "pos(j, jp, B); split(jp, jp0, jp1, 2); parallelize(jp0, cpu_threads, atomics)",
            ],
        ),
        case(
            "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
            vec![
                ("B", "ikl", vec![Format::csf(3)]),
                ("C", "kj", dense(2)),
                ("D", "lj", dense(2)),
            ],
            vec![Format::dense(2)],
            &[
                "split(i, i1, i2, 16); reorder(i1, i2, k, l, j); parallelize(i1, cpu_threads, no_races)",
                "split(i, i1, i2, 3); reorder(i1, i2, k, l, j)",
                "split(k, k0, k1, 2); reorder(i, k0, k1, l, j)",
                "split(i, i0, i1, 2); split(l, l0, l1, 4); reorder(i0, i1, k, l0, j, l1)",
            ],
        ),
        case(
            "A(i,j) = B(i,j,k) * c(k)",
            vec![("B", "ijk", vec![Format::csf(3)]), ("c", "k", dense(1))],
            vec![Format::csr(), Format::dcsr(), Format::dense(2)],
            &[
                "split(i, i0, i1, 4); parallelize(i0, cpu_threads, no_races)",
                "split(j, j0, j1, 3)",
                "split(k, k0, k1, 2)",
            ],
        ),
        case(
            "C(i,j) = A(i,k) * B(k,j)",
            vec![("A", "ik", vec![Format::dcsr()]), ("B", "kj", vec![Format::csr(), Format::dcsr()])],
            vec![Format::csr(), Format::dense(2)],
            &[
                "split(i, i0, i1, 4); reorder(i0, i1, k, j)",
                "split(i, i0, i1, 2); reorder(i0, i1, k, j); parallelize(i0, cpu_threads, no_races)",
            ],
        ),
        case(
            "C(i,j) = A(i,j) + B(i,j)",
            vec![("A", "ij", rows()), ("B", "ij", vec![Format::csr()])],
            vec![Format::csr(), Format::dense(2)],
            &[
                "parallelize(i, cpu_threads, no_races)",
                "precompute(A(i,j) + B(i,j), j, j, w); parallelize(i, cpu_threads, no_races)",
                "precompute(A(i,j) + B(i,j), i, i, w)",
            ],
        ),
        // Precomputes of some of the factors: a vector temporary over the
        // variable, summed over what only those factors use.
        case(
            "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
            vec![
                ("B", "ikl", vec![Format::csf(3), Format::coo(3), Format::dense(3)]),
                ("C", "kj", vec![Format::dense(2), Format::csr()]),
                ("D", "lj", vec![Format::dense(2)]),
            ],
            vec![Format::dense(2), Format::csr()],
            &[
                "precompute(B(i,k,l) * D(l,j), j, j, w)",
                "precompute(D(l,j) * B(i,k,l), j, jw, w); parallelize(i, cpu_threads, no_races)",
                "precompute(C(k,j) * D(l,j), j, j, w)",
                "split(i, i0, i1, 4); precompute(B(i,k,l) * D(l,j), j, j, w); parallelize(i0, cpu_threads, no_races)",
                // TACO's CPU MTTKRP: the reorder keeps k and l outside, so
                // the temporary is a product for each (i,k,l).
                "split(i, i1, i2, 4); reorder(i1, i2, k, l, j); precompute(B(i,k,l) * C(k,j), j, j, w); parallelize(i1, cpu_threads, no_races)",
                "reorder(i, k, l, j); precompute(B(i,k,l) * D(l,j), j, j, w)",
                "bound(j, jb, 64, max_constraint); precompute(B(i,k,l) * D(l,j), jb, jw, w)",
            ],
        ),
        case(
            "y(i) = A(i,j) * B(j,k) * x(k)",
            vec![
                ("A", "ij", rows()),
                ("B", "jk", vec![Format::csr(), Format::dense(2)]),
                ("x", "k", vec![Format::dense(1), Format::sparse_vector()]),
            ],
            vec![Format::dense(1), Format::sparse_vector()],
            &["precompute(B(j,k) * x(k), j, j, w)", "precompute(A(i,j) * B(j,k), k, k, w)"],
        ),
        case(
            "C(i,j) = A(i,k) * B(k,l) * D(l,j)",
            vec![
                ("A", "ik", vec![Format::csr()]),
                ("B", "kl", vec![Format::csr(), Format::dense(2)]),
                ("D", "lj", vec![Format::csr(), Format::dense(2)]),
            ],
            vec![Format::csr(), Format::dense(2)],
            &[
                "precompute(B(k,l) * D(l,j), j, j, w)",
                "precompute(B(k,l) * D(l,j), j, j, w); parallelize(i, cpu_threads, no_races)",
            ],
        ),
        case(
            "y(i) = A(i,j) * x(j)",
            vec![("A", "ij", rows()), ("x", "j", dense(1))],
            vec![Format::dense(1)],
            &[
                "precompute(A(i,j) * x(j), i, i, w)",
                "precompute(A(i,j) * x(j), i, iw, w); split(iw, i0, i1, 3); unroll(i1, 2)",
            ],
        ),
        // Blocks of an operand's positions: the paper's SpMV (figure 4a),
        // rows spanning blocks, blocks of one position, more blocks than
        // threads.
        case(
            "y(i) = A(i,j) * x(j)",
            vec![
                ("A", "ij", vec![Format::csr(), Format::dcsr()]),
                ("x", "j", vec![Format::dense(1), Format::sparse_vector()]),
            ],
            vec![Format::dense(1), Format::sparse_vector()],
            &[
                "fuse(i, j, f); pos(f, fp, A)",
                "fuse(i, j, f); pos(f, fp, A(i,j)); split(fp, fp0, fp1, 16)",
                "fuse(i, j, f); pos(f, fp, A); split(fp, fp0, fp1, 1)",
                "fuse(i, j, f); pos(f, fp, A); split(fp, fp0, fp1, 3); reorder(fp0, fp1)",
                "pos(i, ip, A); split(ip, ip0, ip1, 2)",
            ],
        ),
        case(
            "y(i) = A(i,j) * x(j)",
            vec![("A", "ij", vec![Format::csr(), Format::dcsr()]), ("x", "j", dense(1))],
            vec![Format::dense(1)],
            &[
                "fuse(i, j, f); pos(f, fp, A); split(fp, fp0, fp1, 16); parallelize(fp0, cpu_threads, atomics)",
                "fuse(i, j, f); pos(f, fp, A); split(fp, fp0, fp1, 2); parallelize(fp0, cpu_threads, temporary)",
                "fuse(i, j, f); pos(f, fp, A); divide(fp, fp0, fp1, 5); parallelize(fp0, cpu_threads, ignore_races)",
                "pos(i, ip, A); divide(ip, ip0, ip1, 3); parallelize(ip0, cpu_threads, atomics)",
            ],
        ),
        // Blocks of A's dense first level, located at the coordinates a
        // sparse b walks: b's walk is cut to each block's coordinates.
        case(
            "y(i) = b(i) * A(i,j) * x(j)",
            vec![
                ("b", "i", vec![Format::sparse_vector()]),
                ("A", "ij", vec![Format::csr()]),
                ("x", "j", dense(1)),
            ],
            vec![Format::dense(1), Format::sparse_vector()],
            &[
                "pos(i, ip, A); split(ip, ip0, ip1, 2)",
                "pos(i, ip, A); split(ip, ip0, ip1, 1)",
                "pos(i, ip, A); divide(ip, ip0, ip1, 3); parallelize(ip0, cpu_threads, atomics)",
            ],
        ),
        case(
            "C(i,k) = A(i,j) * B(j,k)",
            vec![("A", "ij", vec![Format::csr(), Format::dcsr()]), ("B", "jk", dense(2))],
            vec![Format::dense(2)],
            &["fuse(i, j, f); pos(f, fp, A); split(fp, fp0, fp1, 4)"],
        ),
        case(
            "C(i,k) = A(i,j) * B(j,k)",
            vec![("A", "ij", vec![Format::csr(), Format::dcsr()]), ("B", "jk", dense(2))],
            vec![Format::dense(2)],
            &["fuse(i, j, f); pos(f, fp, A); split(fp, fp0, fp1, 8); reorder(fp0, fp1, k); parallelize(fp0, cpu_threads, atomics)"],
        ),
        case(
            "A(i,j) = B(i,j,k) * c(k)",
            vec![("B", "ijk", vec![Format::csf(3)]), ("c", "k", dense(1))],
            vec![Format::csr(), Format::dense(2)],
            &[
                "fuse(i, j, f); pos(f, fpos, B); split(fpos, chunk, fpos2, 8); reorder(chunk, fpos2, k)",
                "fuse(i, j, f); pos(f, fpos, B(i,j,k)); split(fpos, chunk, fpos2, 2)",
                // The paper's TTV schedule: parts share rows, never entries.
                "fuse(i, j, f); pos(f, fpos, B); split(fpos, chunk, fpos2, 16); reorder(chunk, fpos2, k); parallelize(chunk, cpu_threads, no_races)",
                "fuse(i, j, f); pos(f, fpos, B); split(fpos, chunk, fpos2, 1); parallelize(chunk, cpu_threads, no_races)",
                "fuse(i, j, f); pos(f, fpos, B); divide(fpos, chunk, fpos2, 7); parallelize(chunk, cpu_threads, atomics)",
            ],
        ),
        case(
            "A(i,j) = B(i,j) * C(i,k) * D(k,j)",
            vec![("B", "ij", vec![Format::csr(), Format::dcsr()]), ("C", "ik", dense(2)), ("D", "kj", dense(2))],
            vec![Format::csr(), Format::dcsr(), Format::dense(2)],
            &[
                "fuse(i, j, f); pos(f, fp, B); split(fp, fp0, fp1, 5)",
                "fuse(i, j, f); pos(f, fp, B); split(fp, fp0, fp1, 3); parallelize(fp0, cpu_threads, no_races)",
            ],
        ),
        // Blocks of each fibre's positions: TACO's SpMM and SDDMM
        // schedules (with and without their cpu_vector), and blocks with
        // dense loops between them and their positions.
        case(
            "C(i,k) = A(i,j) * B(j,k)",
            vec![("A", "ij", vec![Format::csr()]), ("B", "jk", dense(2))],
            vec![Format::dense(2)],
            &[
                "split(i, i0, i1, 16); pos(j, jpos, A(i,j)); split(jpos, jpos0, jpos1, 8); reorder(i0, i1, jpos0, k, jpos1); parallelize(i0, cpu_threads, no_races)",
                "split(i, i0, i1, 16); pos(j, jpos, A(i,j)); split(jpos, jpos0, jpos1, 8); reorder(i0, i1, jpos0, k, jpos1); parallelize(i0, cpu_threads, no_races); parallelize(k, cpu_vector, ignore_races)",
                "split(i, i0, i1, 2); pos(j, jpos, A(i,j)); split(jpos, jpos0, jpos1, 3); reorder(i0, i1, jpos0, k, jpos1); parallelize(k, cpu_vector, no_races)",
            ],
        ),
        // Outputs on an operand's pattern: blocks of each fibre add into
        // the operand's positions (DCSR's rows are not a dense level, so
        // its chunks keep partials, which no_races refuses).
        case(
            "A(i,k) = B(i,k) * (C(i,j) * D(j,k) + C(i,j))",
            vec![("B", "ik", vec![Format::csr()]), ("C", "ij", dense(2)), ("D", "jk", dense(2))],
            vec![Format::csr()],
            &[
                "pos(k, kpos, B); split(kpos, kpos0, kpos1, 2); reorder(i, kpos0, j, kpos1)",
                "split(i, i0, i1, 3); pos(k, kpos, B); split(kpos, kpos0, kpos1, 3); reorder(i0, i1, kpos0, j, kpos1); parallelize(i0, cpu_threads, no_races)",
            ],
        ),
        case(
            "A(i,k) = B(i,k) * (C(i,j) * D(j,k) + C(i,j))",
            vec![("B", "ik", vec![Format::dcsr()]), ("C", "ij", dense(2)), ("D", "jk", dense(2))],
            vec![Format::dcsr()],
            &[
                "pos(k, kpos, B); split(kpos, kpos0, kpos1, 2); reorder(i, kpos0, j, kpos1)",
                "split(i, i0, i1, 3); pos(k, kpos, B); split(kpos, kpos0, kpos1, 3); reorder(i0, i1, kpos0, j, kpos1); parallelize(i0, cpu_threads, atomics)",
            ],
        ),
        // Fused pairs without pos: one loop over every pair of dense
        // coordinates, each recovered by division; split, unrolled and
        // run in parallel.
        case(
            "y(i) = A(i,j) * x(j)",
            vec![("A", "ij", dense(2)), ("x", "j", dense(1))],
            vec![Format::dense(1)],
            &[
                "fuse(i, j, f)",
                "fuse(i, j, f); split(f, f0, f1, 7); parallelize(f0, cpu_threads, atomics)",
                "fuse(i, j, f); parallelize(f, cpu_threads, temporary)",
                "fuse(i, j, f); unroll(f, 3)",
            ],
        ),
        case(
            "C(i,j) = A(i,k) * B(k,j)",
            vec![("A", "ik", dense(2)), ("B", "kj", dense(2))],
            vec![Format::dense(2)],
            &[
                "fuse(i, j, f); parallelize(f, cpu_threads, no_races)",
                "fuse(i, j, f); reorder(f, k)",
                "fuse(j, k, f)",
                "fuse(i, j, f); split(f, f0, f1, 5); parallelize(f0, cpu_threads, atomics)",
                "fuse(i, k, f); split(f, f0, f1, 4); reorder(f0, j, f1)",
            ],
        ),
        case(
            "A(i,j) = B(i,j,k) * c(k)",
            vec![("B", "ijk", dense(3)), ("c", "k", dense(1))],
            vec![Format::dense(2)],
            &["fuse(i, j, f)", "fuse(j, k, f); parallelize(i, cpu_threads, no_races)"],
        ),
        // Vector lanes: a loop the order nests others in moves innermost;
        // an innermost loop (dense, driven, or over a block's positions)
        // runs a copy of its body per lane.
        case(
            "C(i,k) = A(i,j) * B(j,k)",
            vec![("A", "ij", vec![Format::csr(), Format::dcsr()]), ("B", "jk", vec![Format::dense(2), Format::csr()])],
            vec![Format::dense(2)],
            &[
                "reorder(i, k, j); parallelize(k, cpu_vector, ignore_races)",
                "parallelize(k, cpu_vector, ignore_races); parallelize(i, cpu_threads, no_races)",
            ],
        ),
        case(
            "C(i,k) = A(i,j) * B(j,k)",
            vec![("A", "ij", vec![Format::csr(), Format::dcsr()]), ("B", "jk", dense(2))],
            vec![Format::dense(2)],
            &["reorder(i, j, k); parallelize(j, cpu_vector, parallel_reduction)"],
        ),
        case(
            "y(i) = A(i,j) * x(j)",
            vec![
                ("A", "ij", vec![Format::csr(), Format::dcsr()]),
                ("x", "j", vec![Format::dense(1), Format::sparse_vector()]),
            ],
            vec![Format::dense(1), Format::sparse_vector()],
            &["parallelize(j, cpu_vector, parallel_reduction)"],
        ),
        case(
            "C(i,k) = A(i,j) * B(j,k)",
            vec![("A", "ij", vec![Format::csr(), Format::dcsr()]), ("B", "jk", dense(2))],
            vec![Format::dense(2)],
            &[
                "pos(j, jpos, A); split(jpos, jpos0, jpos1, 2)",
                "pos(j, jpos, A); split(jpos, jpos0, jpos1, 1); reorder(jpos0, k, jpos1)",
            ],
        ),
        case(
            "A(i,k) = B(i,k) * C(i,j) * D(j,k)",
            vec![("B", "ik", vec![Format::csr()]), ("C", "ij", dense(2)), ("D", "jk", dense(2))],
            vec![Format::dense(2), Format::csr()],
            &[
                "split(i, i0, i1, 16); pos(k, kpos, B(i,k)); split(kpos, kpos0, kpos1, 8); reorder(i0, i1, kpos0, j, kpos1); parallelize(i0, cpu_threads, no_races)",
                "split(i, i0, i1, 16); pos(k, kpos, B(i,k)); split(kpos, kpos0, kpos1, 8); reorder(i0, i1, kpos0, j, kpos1); parallelize(i0, cpu_threads, no_races); parallelize(kpos1, cpu_vector, parallel_reduction)",
                "split(i, i0, i1, 2); pos(k, kpos, B(i,k)); split(kpos, kpos0, kpos1, 3); reorder(i0, i1, kpos0, j, kpos1); parallelize(kpos1, cpu_vector, ignore_races)",
            ],
        ),
        case(
            "y(i) = A(i,j) * x(j)",
            vec![
                ("A", "ij", vec![Format::csr(), Format::dcsr()]),
                ("x", "j", vec![Format::dense(1), Format::sparse_vector()]),
            ],
            vec![Format::dense(1)],
            &["pos(j, jp, A); split(jp, jp0, jp1, 3)", "pos(j, jp, A); split(jp, jp0, jp1, 2); unroll(j, 2)"],
        ),
        case(
            "A(i,j) = B(i,j,k) * c(k)",
            vec![("B", "ijk", vec![Format::csf(3)]), ("c", "k", dense(1))],
            vec![Format::dense(2)],
            &["pos(k, kp, B); split(kp, kp0, kp1, 2)", "pos(j, jp, B); split(jp, jp0, jp1, 3)"],
        ),
        // Unrolled loops (dense, driven by one level, merges) and bounds.
        case(
            "y(i) = A(i,j) * x(j)",
            vec![("A", "ij", rows()), ("x", "j", vec![Format::dense(1), Format::sparse_vector()])],
            vec![Format::dense(1), Format::sparse_vector()],
            &[
                "unroll(j, 4)",
                "bound(i, ib, 64, max_constraint); unroll(ib, 2); parallelize(ib, cpu_threads, no_races)",
            ],
        ),
        case(
            "y(i) = A(i,j) * x(j)",
            vec![("A", "ij", vec![Format::csr()]), ("x", "j", dense(1))],
            vec![Format::dense(1)],
            &[
                "split(i, i0, i1, 4); unroll(i1, 3)",
                "bound(i, ib, 40, max_constraint); split(ib, i0, i1, 8); unroll(i1, 8)",
            ],
        ),
        case(
            "C(i,j) = A(i,j) + B(i,j)",
            vec![("A", "ij", rows()), ("B", "ij", vec![Format::csr(), Format::dense(2)])],
            vec![Format::csr(), Format::dense(2)],
            &["unroll(j, 3)", "unroll(i, 2); unroll(j, 2)"],
        ),
        case(
            "C(i,k) = A(i,j) * B(j,k)",
            vec![("A", "ij", vec![Format::csr()]), ("B", "jk", dense(2))],
            vec![Format::dense(2)],
            &["unroll(k, 4)", "fuse(i, j, f); pos(f, fp, A); split(fp, fp0, fp1, 8); unroll(k, 8)"],
        ),
    ]
}

fn run(cases: &[Case]) {
    let engine = crate::suite_engine();
    let mut failures = Vec::new();
    let mut checked = 0;
    for (c, case) in cases.iter().enumerate() {
        let mut combos: Vec<Vec<&Format>> = vec![Vec::new()];
        for (_, _, formats) in &case.operands {
            combos = combos
                .into_iter()
                .flat_map(|prefix| {
                    formats.iter().map(move |f| {
                        let mut p = prefix.clone();
                        p.push(f);
                        p
                    })
                })
                .collect();
        }
        for (k, formats) in combos.iter().enumerate() {
            for output in &case.outputs {
                for text in case.schedules {
                    let schedule: Schedule = text.parse().expect("the table's schedules parse");
                    for t in 0..4u64 {
                        let seed = ((c as u64) << 32) | ((k as u64) << 16) | t;
                        let mut rng = Rng::new(seed);
                        let mut sizes: Vec<(char, usize)> = Vec::new();
                        let mut size = |v: char, rng: &mut Rng| match sizes.iter().find(|(s, _)| *s == v) {
                            Some(&(_, n)) => n,
                            None => {
                                let n = if t == 0 { rng.range(20, 40) } else { rng.range(1, 9) };
                                sizes.push((v, n));
                                n
                            }
                        };
                        let mut tensors: Vec<(&str, Tensor<f64>)> = Vec::new();
                        for (o, ((name, vars, _), format)) in case.operands.iter().zip(formats).enumerate() {
                            let shape: Vec<usize> = vars.chars().map(|v| size(v, &mut rng)).collect();
                            let kind = EntryKind::ALL[(t as usize + 3 * o) % EntryKind::ALL.len()];
                            let tensor = random_tensor(&mut rng, &shape, kind, format).expect("random tensor");
                            tensors.push((name, tensor));
                        }
                        let inputs: Vec<(&str, &Tensor<f64>)> = tensors.iter().map(|(n, t)| (*n, t)).collect();
                        match check_scheduled(
                            &engine,
                            case.statement,
                            &inputs,
                            Some(output),
                            &[],
                            Tolerance::default(),
                            &schedule,
                        ) {
                            Ok(()) => checked += 1,
                            Err(e) => failures.push(format!("`{text}`, seed {seed:#x}: {e}")),
                        }
                    }
                }
            }
        }
    }
    eprintln!("{checked} scheduled checks");
    assert!(checked > 300, "only {checked} checks ran");
    assert!(
        failures.is_empty(),
        "{} scheduled checks differ:\n{}",
        failures.len(),
        failures.iter().take(20).cloned().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn scheduled_kernels_match_the_reference_on_any_number_of_threads() {
    run(&cases());
}

/// The refusal `schedule` meets on `statement` over `inputs`.
fn refusal(statement: &str, inputs: &[(&str, Format)], output: Format, schedule: &str) -> String {
    let schedule: Schedule = match schedule.parse() {
        Ok(s) => s,
        Err(e) => return e.to_string(),
    };
    match crate::suite_engine().compile_scheduled(statement, inputs, &output, &schedule) {
        Ok(kernel) => panic!("`{schedule}` on {statement} was accepted:\n{}", kernel.plan()),
        Err(e @ EngineError::Schedule { .. }) => e.to_string(),
        Err(other) => panic!("`{schedule}` on {statement}: not a schedule error: {other}"),
    }
}

fn hashed_rows() -> Format {
    use tessera_formats::LevelFormat;
    Format::from_levels(&[LevelFormat::hashed(), LevelFormat::compressed()], &[0, 1]).unwrap()
}

#[test]
fn an_exact_bound_is_a_constant_and_inputs_that_break_a_bound_are_refused() {
    let engine = crate::suite_engine();
    let formats = [("A", Format::csr()), ("x", Format::dense(1))];
    let mut rng = Rng::new(7);
    let a = random_tensor(&mut rng, &[12, 9], EntryKind::ALL[0], &Format::csr()).unwrap();
    let x = random_tensor(&mut rng, &[9], EntryKind::ALL[0], &Format::dense(1)).unwrap();
    for (text, holds) in [
        ("bound(i, ib, 12)", true),
        (
            "bound(i, ib, 12, max_exact); split(ib, i0, i1, 5); bound(i1, i1b, 5)",
            true,
        ),
        ("bound(i, ib, 13, max_constraint)", true),
        ("bound(i, ib, 11, max_constraint)", false),
        ("bound(j, jb, 10)", false),
    ] {
        let schedule: Schedule = text.parse().unwrap();
        let kernel = engine
            .compile_scheduled("y(i) = A(i,j) * x(j)", &formats, &Format::dense(1), &schedule)
            .unwrap();
        let run = kernel.run(&Inputs::new().with("A", &a).with("x", &x));
        if holds {
            let plain = engine
                .compile("y(i) = A(i,j) * x(j)", &formats, &Format::dense(1))
                .unwrap()
                .run(&Inputs::new().with("A", &a).with("x", &x))
                .unwrap();
            assert_eq!(
                run.unwrap().to_dense_vec().unwrap(),
                plain.to_dense_vec().unwrap(),
                "{text}"
            );
        } else {
            let message = run.unwrap_err().to_string();
            assert!(message.contains("does not hold for these inputs"), "{text}: {message}");
        }
    }
    let exact: Schedule = "bound(i, ib, 12)".parse().unwrap();
    let kernel = engine
        .compile_scheduled("y(i) = A(i,j) * x(j)", &formats, &Format::dense(1), &exact)
        .unwrap();
    assert!(
        kernel.plan().contains("the loop over i runs to the constant 12"),
        "{}",
        kernel.plan()
    );
}

#[test]
fn every_refusal_says_why() {
    let spmv = "y(i) = A(i,j) * x(j)";
    let csr = || vec![("A", Format::csr()), ("x", Format::dense(1))];
    let csc = || vec![("A", Format::csc()), ("x", Format::dense(1))];
    for (statement, inputs, output, schedule, message) in [
        (
            spmv,
            csr(),
            Format::dense(1),
            "reorder(i, k)",
            "schedule, column 1: reorder names k, which the statement does not use (its variables: i, j)",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "parallelize(i, cpu_threads, no_races); reorder(j, i)",
            "schedule, column 40: A (csr) is walked i before j, and reorder puts j first: convert A to a format that stores j first",
        ),
        (
            "y(i) = A(i,j) * x(j) + b(i)",
            vec![("A", Format::csc()), ("x", Format::dense(1)), ("b", Format::dense(1))],
            Format::dense(1),
            "reorder(j, i)",
            "schedule, column 1: reorder puts the sum over j outside the loop over i, which its terms depend on: the sum would leave its scope",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "parallelize(k, cpu_threads, no_races)",
            "schedule, column 1: parallelize names k, which the statement does not loop over (its loops: i, j)",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "parallelize(j, cpu_threads, temporary)",
            "schedule, column 1: only the outermost loop runs in parallel, and the loops nest i, j: reorder(j, ...) first",
        ),
        (
            spmv,
            csc(),
            Format::dense(1),
            "parallelize(j, cpu_threads, no_races)",
            "schedule, column 1: chunks of the loop over j all add into the same components of y: no_races would race; use temporary or atomics",
        ),
        (
            spmv,
            vec![("A", hashed_rows()), ("x", Format::dense(1))],
            Format::dense(1),
            "parallelize(i, cpu_threads, no_races)",
            "schedule, column 1: the loop over i cannot run in parallel: A's first level (hashed) holds its coordinates in no order",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "split(i, i0, i1, 4); unroll(i, 4)",
            "schedule, column 22: unroll(i, 4) names i, which no loop runs over (the loops: i0, i1, j)",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "unroll(i, 16); unroll(j, 17)",
            "schedule, column 16: the unrolls copy a loop's body 272 times, more than the 256 tessera emits",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "unroll(j, 100000000)",
            "schedule, column 1: the unrolls copy a loop's body 100000000 times, more than the 256 tessera emits",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "bound(k, kb, 4)",
            "schedule, column 1: bound(k, kb, 4, max_exact) names k, which is neither a loop nor a variable of the statement (the loops: i, j)",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "fuse(i, j, f)",
            "schedule, column 1: fuse(i, j, f) runs one loop over every pair of coordinates, locating each, and A (csr) walks j through its compressed level, which cannot locate: pos(f, fpos, A) iterates its positions instead",
        ),
        (
            "C(i,j) = A(i,k) * B(k,j)",
            vec![("A", Format::dense(2)), ("B", Format::dense(2))],
            Format::dense(2),
            "fuse(i, j, f); split(i, i0, i1, 2)",
            "schedule, column 16: split names i, which f fuses: split f instead",
        ),
        (
            "C(i,j) = A(i,k) * B(k,j)",
            vec![("A", Format::dense(2)), ("B", Format::dense(2))],
            Format::dense(2),
            "fuse(i, j, f); reorder(j, k)",
            "schedule, column 16: j is fused into f: reorder f",
        ),
        (
            "a = cos(B(i,k))",
            vec![("B", Format::dense(2))],
            Format::dense(0),
            "fuse(i, k, f)",
            "schedule, column 1: i, which f fuses, is a loop of a nested sum, whose loops a fuse does not reach yet: fuse variables the nested sums do not loop over",
        ),
        (
            "A(i,j) = B(i,j,k) * c(k)",
            vec![("B", Format::csf(3)), ("c", Format::dense(1))],
            Format::dense(2),
            "fuse(j, k, f); pos(f, fp, B)",
            "schedule, column 16: pos over j, k: B (csf) has levels over (i, j, k); a fused pair's positions are cut from the first level, or one variable's within its fibre",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "pos(j, jp, A); divide(jp, jp0, jp1, 2)",
            "schedule, column 1: jp runs over the positions of each fibre of A, whose lengths differ: split it into blocks of a size, not a number of parts",
        ),
        (
            spmv,
            csr(),
            Format::sparse_vector(),
            "pos(j, jp, A); split(jp, jp0, jp1, 2)",
            "schedule, column 1: the blocks of jp add each fibre's sums in parts, which a sparse output would receive out of order; use a dense output, or one stored as A is (its pattern)",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "fuse(i, j, f); pos(f, fp, x)",
            "schedule, column 16: pos over i, j: x (dense) has levels over (j); its levels must be over i, j",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "fuse(i, j, f); pos(f, fp, B)",
            "schedule, column 16: pos names B, which the statement does not read",
        ),
        (
            spmv,
            vec![("A", Format::dense(2)), ("x", Format::dense(1))],
            Format::dense(1),
            "fuse(i,j,f); pos(f,fp,A)",
            "schedule, column 14: pos over i, j: A's level 1 (dense) stores no positions to iterate; pos needs a compressed level (or a dense first one)",
        ),
        (
            "y(i) = A(i,j) * x(j) + b(i)",
            vec![("A", Format::csr()), ("x", Format::dense(1)), ("b", Format::dense(1))],
            Format::dense(1),
            "fuse(i, j, f); pos(f, fp, A); split(fp, fp0, fp1, 4)",
            "schedule, column 16: A is not a factor of every term of sum(j, A(i,j) * x(j)) + b(i) (with a fill of 0), so components outside its positions could be nonzero",
        ),
        (
            "y(i) = min(j, A(i,j) * x(j))",
            csr(),
            Format::dense(1),
            "fuse(i, j, f); pos(f, fp, A); split(fp, fp0, fp1, 4)",
            "schedule, column 16: the statement reduces by min: a block of positions holds part of a fibre, and only sums add up in parts",
        ),
        (
            "C(i,k) = A(i,j) * B(j,k)",
            vec![("A", Format::csr()), ("B", Format::dense(2))],
            Format::csr(),
            "fuse(i, j, f); pos(f, fp, A); split(fp, fp0, fp1, 4)",
            "schedule, column 16: the output is collected in a workspace, and a fibre whose positions span two blocks of fp would be assembled twice; use a dense output, or one whose entries arrive in order",
        ),
        (
            spmv,
            csr(),
            Format::sparse_vector(),
            "fuse(i, j, f); pos(f, fp, A); split(fp, fp0, fp1, 8); parallelize(fp0, cpu_threads, atomics)",
            "schedule, column 55: the loop over fp0 cannot run in parallel: its blocks of A's positions can share entries of the output y (sv), whose first levels are not over (i, j); use a dense output",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "fuse(i,j,f); pos(f,fp,A); split(fp,fp0,fp1,4); parallelize(fp0, cpu_threads, no_races)",
            "schedule, column 48: chunks of the loop over fp0 all add into the same components of y: no_races would race; use temporary or atomics",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "fuse(i, j, f); pos(f, fp, A); split(fp, fp0, fp1, 4); reorder(i, fp0)",
            "schedule, column 55: fp0, the blocks of fp, is the outermost loop: it comes first in reorder",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "fuse(i, j, f); pos(f, fp, A); split(fp, fp0, fp1, 4); fuse(i, j, g); pos(g, gp, A); split(gp, gp0, gp1, 2)",
            "schedule, column 70: a second split position space (gp): tessera runs the blocks of one operand's positions",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "fuse(i, k, f)",
            "schedule, column 1: fuse names k, which is not a variable of the statement (its variables: i, j)",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "fuse(i, j, f); pos(q, qp, A)",
            "schedule, column 16: pos names q, which is neither a variable of the statement nor a pair fuse made",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "fuse(i, j, f); pos(f, i, A)",
            "schedule, column 16: pos names i, which is already a variable",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "fuse(i, j, f); pos(f, fp, A); split(fp, i, fp1, 4)",
            "schedule, column 31: split names i, which is already a variable",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "fuse(i, j, f); pos(f, fp, A); split(fp, fp0, fp1, 4); parallelize(fp, cpu_threads, atomics)",
            "schedule, column 55: parallelize names fp, which the statement does not loop over (its loops: fp0, i, j): the loop over fp0 runs fp's blocks",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "split(i, i0, i1, 2); fuse(i, j, f); pos(f, fp, A); split(fp, fp0, fp1, 4)",
            "schedule, column 1: split names i, whose loop recovers the coordinates of fp's positions: split fp instead",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "precompute(A(i,j) * z(j), i, i, w)",
            "schedule, column 1: precompute's expression A(i,j) * z(j) is not a product of factors of the right-hand side A(i,j) * x(j): z(j) is not one of them",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "precompute(x(j), i, i, w)",
            "schedule, column 1: precompute over i, which x(j) does not use: its workspace is a vector over one of its variables",
        ),
        (
            "y(i) = A(i,j) * B(j,k) * x(k)",
            vec![("A", Format::csr()), ("B", Format::csr()), ("x", Format::dense(1))],
            Format::dense(1),
            "precompute(B(j,k) * x(k), k, k, w)",
            "schedule, column 1: precompute over k, which only B(j,k) * x(k) uses, and sums over: the rest of the product must read the workspace at k",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "precompute(A(i,j) * x(j), i, i, w); precompute(x(j), j, j, v)",
            "schedule, column 37: a second precompute: precompute(A(i,j) * x(j), i, i, w) already precomputes, and a statement takes one precompute",
        ),
        (
            spmv,
            vec![("A", Format::dense(2)), ("x", Format::dense(1))],
            Format::dense(1),
            "split(j, j0, j1, 4); precompute(x(j), j, j, w)",
            "schedule, column 22: precompute over j, which the loops run as j0, j1: a workspace is a vector over one loop's variable",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "precompute(A(i,j) * x(j), i, j, w)",
            "schedule, column 1: precompute names j for its workspace's loop over i, but j is already a variable",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "precompute(A(i,j) * x(j), j, j, w)",
            "schedule, column 1: precompute over j, which is not a level of the output y (dense)",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "precompute(A(i,j) * x(j), i, i, x)",
            "schedule, column 1: precompute names its workspace x, a tensor of the statement",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "precompute(A(i,j) * , i, i, w)",
            "schedule, column 1: precompute's expression `A(i,j) *` does not parse: expected an operand (a number, a tensor access, a call such as sqrt(...) or sum(...), or '('), found end of input",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "split(j, j0, j1, 4); reorder(i, j1, j0)",
            "schedule, column 1: A (csr) walks j through its compressed level, so the loop over j1 runs through j's coordinates in block j0: j0 comes before j1 in reorder",
        ),
        (
            spmv,
            csr(),
            Format::sparse_vector(),
            "split(i, i0, i1, 4); reorder(i1, i0, j)",
            "schedule, column 1: y (sv) walks i through its compressed level, so the loop over i1 runs through i's coordinates in block i0: i0 comes before i1 in reorder",
        ),
        (
            spmv,
            vec![("A", Format::coo_unordered(2)), ("x", Format::dense(1))],
            Format::dense(1),
            "split(i, i0, i1, 4)",
            "schedule, column 1: A (ucoo) walks i through its compressed level, which cannot be cut to a block of coordinates: a split needs every level at i to locate it, or to store its coordinates in order",
        ),
        (
            "a = cos(B(i,k))",
            vec![("B", Format::dcsc())],
            Format::dense(0),
            "split(k, k0, k1, 4)",
            "schedule, column 1: B (dcsc) walks k through its compressed level, inside a nested sum, whose loops a split does not cut yet: split a variable the nested sums do not loop over",
        ),
        (
            spmv,
            vec![("A", Format::dia()), ("x", Format::dense(1))],
            Format::dense(1),
            "unroll(j, 4)",
            "schedule, column 1: unroll(j, 4): A (dia) runs j through its offset level, whose coordinates are computed from the diagonal's: that loop is not unrolled",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "parallelize(i, cpu_vector, ignore_races)",
            "schedule, column 1: A (csr) is walked i before j, and reorder puts j first: convert A to a format that stores j first",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "parallelize(j, cpu_vector, ignore_races); parallelize(i, cpu_vector, ignore_races)",
            "schedule, column 43: parallelize(i, cpu_vector, ignore_races): one loop runs in vector lanes per statement",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "pos(j, jp, A); split(jp, jp0, jp1, 4); parallelize(jp0, cpu_vector, ignore_races)",
            "schedule, column 40: parallelize(jp0, cpu_vector, ignore_races): jp0 numbers blocks of jp's positions; vector lanes run over the positions in a block",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "parallelize(q, cpu_vector, ignore_races)",
            "schedule, column 1: parallelize(q, cpu_vector, ignore_races) names q, which the statement does not loop over (its loops: i, j)",
        ),
        (
            // Two tensors: one tensor read at the same indices is one
            // operand, which the planner converts to fit the schedule.
            "A(m,k,i,j) = B(i,m,k) * C(i,m,k)",
            vec![
                ("B", "dense,hashed,compressed:2,1,0".parse::<Format>().unwrap()),
                ("C", "dense,hashed,compressed:2,1,0".parse::<Format>().unwrap()),
            ],
            Format::dense(4),
            "split(m, m0o, m0i, 9); reorder(j, m0i, k, m0o, i)",
            "schedule, column 24: B (dense,compressed,compressed:1,2,0) must be walked m0o before k, and the schedule's loops nest j, m0i, k, m0o, i",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "split(i, i0, i1, 4); reorder(i, j)",
            "schedule, column 22: i is split into i0 and i1: reorder those",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "split(i, j, i1, 4)",
            "schedule, column 1: split names j, which is already a variable",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "split(q, q0, q1, 4)",
            "schedule, column 1: split names q, which is not a variable of the statement (its variables: i, j); a split variable is not split again yet",
        ),
        (
            spmv,
            vec![("A", Format::bcsr(4, 4).unwrap()), ("x", Format::dense(1))],
            Format::dense(1),
            "split(i, i0, i1, 4)",
            "schedule, column 1: the tensors' levels already split i into blocks of 4",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "split(i, i0, i1, 4); parallelize(i1, cpu_threads, no_races)",
            "schedule, column 22: only the outermost loop runs in parallel, and the loops nest i0, i1, j: reorder(i1, ...) first",
        ),
        (
            spmv,
            csr(),
            Format::dense(1),
            "split(i, i0, i1, 0)",
            "schedule, column 18: a split factor of 0",
        ),
    ] {
        assert_eq!(refusal(statement, &inputs, output, schedule), message, "{schedule}");
    }
}

#[test]
fn the_plan_shows_the_schedule_and_kernels_are_cached_by_it() {
    let engine = crate::suite_engine();
    let formats = [("A", Format::csr()), ("x", Format::dense(1))];
    let output = Format::dense(1);
    let statement = "y(i) = A(i,j) * x(j)";
    let plain = engine.compile(statement, &formats, &output).unwrap();
    let schedule: Schedule = "parallelize(i, cpu_threads, no_races)".parse().unwrap();
    let scheduled = engine
        .compile_scheduled(statement, &formats, &output, &schedule)
        .unwrap();
    assert!(
        !std::sync::Arc::ptr_eq(&plain, &scheduled),
        "the schedule is part of the kernel's key"
    );
    let again = engine
        .compile_scheduled(statement, &formats, &output, &schedule)
        .unwrap();
    assert!(std::sync::Arc::ptr_eq(&scheduled, &again), "one kernel per schedule");
    let plan = scheduled.plan();
    assert!(
        plan.contains("schedule: parallelize(i, cpu_threads, no_races)\n"),
        "{plan}"
    );
    assert!(
        plan.contains("parallelize(i, cpu_threads, no_races): every core at any size; each chunk writes its own part of the output"),
        "{plan}"
    );
    assert!(!plain.plan().contains("schedule:"), "{}", plain.plan());
}
/// Blocks of a dense first level's positions start past its first
/// coordinate: another operand walked at the same variable (here `c`, with
/// entries before the second block) must start there too, not at its own
/// first entry.
#[test]
fn a_walk_beside_a_block_of_positions_starts_at_the_block() {
    use tessera_formats::CoordinateList;
    let mut b = CoordinateList::new(&[4, 1]);
    for (row, v) in [(0u64, 1.5), (1, 2.5), (2, -0.5), (3, 0.75)] {
        b.push(&[row, 0], v).unwrap();
    }
    let mut c = CoordinateList::new(&[4]);
    for (j, v) in [(1u64, -0.75), (2, -0.5), (3, -3.0)] {
        c.push(&[j], v).unwrap();
    }
    let b = Tensor::pack(&b, Format::csr()).unwrap();
    let c = Tensor::pack(&c, Format::sparse_vector()).unwrap();
    for text in [
        "pos(j, jp, B); split(jp, jp0, jp1, 3)",
        "pos(j, jp, B); split(jp, jp0, jp1, 1)",
    ] {
        let schedule: Schedule = text.parse().unwrap();
        check_scheduled(
            &crate::suite_engine(),
            "a = B(j,i) * (B(j,i) - c(j))",
            &[("B", &b), ("c", &c)],
            Some(&Format::dense(0)),
            &[],
            Tolerance::default(),
            &schedule,
        )
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    }
}

/// A loop over every coordinate inside a block of positions runs over the
/// coordinates of the block's positions: a dense level's positions, or a
/// compressed level's coordinates read at the block's ends (not its
/// positions taken as coordinates), and no block op runs over the whole
/// dimension in its place.
#[test]
fn loops_over_every_coordinate_in_a_block_run_over_the_blocks_coordinates() {
    use tessera_formats::CoordinateList;
    let vector = |n: usize, entries: &[(u64, f64)], format: Format| {
        let mut list = CoordinateList::new(&[n]);
        for &(i, v) in entries {
            list.push(&[i], v).unwrap();
        }
        Tensor::pack(&list, format).unwrap()
    };
    let dense = vector(9, &[(0, 0.5), (1, -1.75), (8, 1.5)], Format::dense(1));
    let b = vector(6, &[(0, 0.5), (4, 2.0)], Format::sparse_vector());
    let c = vector(6, &[(1, 1.0), (3, -2.0), (4, 0.5)], Format::sparse_vector());
    let engine = crate::suite_engine();
    for (statement, inputs, output, text) in [
        (
            "a = B(i) * B(i)",
            vec![("B", &dense)],
            Format::dense(0),
            "pos(i, ip, B); split(ip, ip0, ip1, 1)",
        ),
        (
            "A(i) = (B(i) - tanh(C(i))) * C(i) * C(i)",
            vec![("B", &b), ("C", &c)],
            Format::dense(1),
            "pos(i, ip, C); split(ip, ip0, ip1, 1)",
        ),
        (
            "A(i) = (B(i) - tanh(C(i))) * C(i) * C(i)",
            vec![("B", &b), ("C", &c)],
            Format::sparse_vector(),
            "pos(i, ip, C); split(ip, ip0, ip1, 2)",
        ),
    ] {
        let schedule: Schedule = text.parse().unwrap();
        check_scheduled(
            &engine,
            statement,
            &inputs,
            Some(&output),
            &[],
            Tolerance::default(),
            &schedule,
        )
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    }
}
