//! Graph algorithms as tensor statements on the shipped graph
//! (`data/4elt.mtx`, a finite-element mesh): breadth-first search over
//! `bool` tensors (the or-and semiring), single-source shortest paths (Bellman-Ford) in
//! min-plus, and triangle counting as a masked product and a sum. The
//! first two must agree: every edge weighs 1, so a vertex's distance is
//! its BFS level.
//!
//! ```sh
//! cargo run --release --example graphs [-- path/to/graph.mtx]
//! ```

use tessera::engine::notation::{parse_statement, Semiring};
use tessera::formats::io::read_mtx;
use tessera::formats::{AnyTensor, CoordinateList, Format, Tensor};
use tessera::{EvalOptions, Inputs};

type Error = Box<dyn std::error::Error>;

pub fn main() -> Result<(), Error> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/data/4elt.mtx").to_string());
    let file = read_mtx(&path)?;
    let n = file.entries.shape()[0];
    // A(i,j): the edge from j to i, of weight 1.
    let mut edges = CoordinateList::new(&[n, n]);
    for (c, _) in file.entries.iter() {
        edges.push(c, 1.0)?;
        edges.push(&[c[1], c[0]], 1.0)?;
    }
    // Edges given in both directions are summed: every weight is 1 again.
    let mut a = Tensor::pack(&edges, Format::csr())?;
    a.values_mut().fill(1.0);
    let edges = a.to_coordinates();
    println!("{path}: {n} vertices, {} edges", a.stored());

    let started = std::time::Instant::now();
    let levels = breadth_first_levels(&a, 0)?;
    println!("bfs: {:.1?}", started.elapsed());
    let started = std::time::Instant::now();
    let distances = shortest_paths(&a, 0)?;
    println!("sssp: {:.1?}", started.elapsed());
    let reached = levels.iter().filter(|l| l.is_some()).count();
    let deepest = levels.iter().flatten().max().copied().unwrap_or(0);
    println!("bfs from 0: {reached} vertices reached, {deepest} levels deep");
    for (v, (level, distance)) in levels.iter().zip(&distances).enumerate() {
        let level = level.map_or(f64::INFINITY, |l| l as f64);
        assert_eq!(level, *distance, "vertex {v}: BFS level {level}, distance {distance}");
    }
    println!("sssp from 0: every distance equals the BFS level");
    let started = std::time::Instant::now();
    let count = triangles(&edges)?;
    println!("triangles: {count} ({:.1?})", started.elapsed());
    assert_eq!(count, triangles_by_adjacency(&edges) as f64);
    println!("triangles: the count equals the adjacency lists' count");
    Ok(())
}

/// Each vertex's BFS level from `source` (`None`: unreached). Each step
/// is one statement over `bool` tensors: the next frontier is what the
/// frontier reaches (`*` and the sum over `j` are `&&` and `or` for truth
/// values) and was not visited.
fn breadth_first_levels(a: &Tensor<f64>, source: u64) -> Result<Vec<Option<usize>>, Error> {
    let n = a.shape()[0];
    let engine = tessera::engine();
    let a = a.map_values(|w| w != 0.0);
    let mut frontier = CoordinateList::new(&[n]);
    frontier.push(&[source], true)?;
    // Dense vectors of truth values: each step is a pull over every row
    // (one op), with nothing converted between steps.
    let mut frontier = Tensor::pack(&frontier, Format::dense(1))?;
    let mut visited = frontier.clone();
    let dense = EvalOptions {
        output_format: Some(Format::dense(1)),
        ..EvalOptions::default()
    };
    let mut levels = vec![None; n];
    levels[source as usize] = Some(0);
    for level in 1.. {
        let inputs = Inputs::new().with("A", &a).with("f", &frontier).with("v", &visited);
        let AnyTensor::Bool(next) = engine.eval_typed_with("n(i) = A(i,j) * f(j) && !v(i)", &inputs, &dense)? else {
            return Err("truth values give truth values".into());
        };
        let found: Vec<u64> = next.entries().filter(|(_, v)| *v).map(|(c, _)| c[0]).collect();
        if found.is_empty() {
            break;
        }
        for &v in &found {
            levels[v as usize] = Some(level);
        }
        let inputs = Inputs::new().with("v", &visited).with("n", &next);
        let AnyTensor::Bool(seen) = engine.eval_typed_with("w(i) = v(i) + n(i)", &inputs, &dense)? else {
            return Err("truth values give truth values".into());
        };
        visited = seen;
        frontier = next;
    }
    Ok(levels)
}

/// Bellman-Ford from `source`: `d(i) = min(d(i), min(j, A(i,j) + d(j)))`
/// until nothing changes, on tensors whose absent entries are `+inf`.
fn shortest_paths(a: &Tensor<f64>, source: u64) -> Result<Vec<f64>, Error> {
    let n = a.shape()[0];
    let engine = tessera::engine();
    let weights = a.clone().with_fill(f64::INFINITY)?;
    let mut start = CoordinateList::new(&[n]);
    start.push(&[source], 0.0)?;
    // Distances are dense (every vertex has one, +inf until reached): the
    // kernel then locates them, and nothing is converted between steps.
    let mut d = Tensor::pack_with_fill(&start, Format::dense(1), f64::INFINITY)?;
    let relax = Semiring::MinPlus
        .rewrite(&parse_statement("e(i) = A(i,j) * d(j) + d(i)")?)?
        .to_string();
    let options = EvalOptions {
        output_format: Some(Format::dense(1)),
        ..EvalOptions::default()
    };
    loop {
        let next = engine.eval_with(&relax, &Inputs::new().with("A", &weights).with("d", &d), &options)?;
        if next.values() == d.values() {
            return Ok(next.to_dense_vec()?);
        }
        d = next;
    }
}

/// Triangles of the undirected graph whose edges (both directions) are
/// `edges`: with `L` its strictly lower triangle, each triangle `i > k > j`
/// is counted once by `sum(i,j,k, L(i,j) * L(i,k) * L(k,j))`.
fn triangles(edges: &CoordinateList<f64>) -> Result<f64, Error> {
    let n = edges.shape()[0];
    let mut lower = CoordinateList::new(&[n, n]);
    for (c, v) in edges.iter() {
        if c[0] > c[1] {
            lower.push(c, v)?;
        }
    }
    let l = Tensor::pack(&lower, Format::csr())?;
    let t = tessera::engine().eval("t = L(i,j) * L(i,k) * L(k,j)", &Inputs::new().with("L", &l))?;
    Ok(t.values()[0])
}

/// The same count from sorted adjacency lists, `j < k < i` with all three
/// edges: what the statement must agree with.
fn triangles_by_adjacency(edges: &CoordinateList<f64>) -> usize {
    let n = edges.shape()[0];
    let mut below: Vec<Vec<u64>> = vec![Vec::new(); n];
    for (c, _) in edges.iter() {
        if c[0] > c[1] {
            below[c[0] as usize].push(c[1]);
        }
    }
    for list in &mut below {
        list.sort_unstable();
    }
    let mut count = 0;
    for i in 0..n {
        for &k in &below[i] {
            count += below[k as usize]
                .iter()
                .filter(|j| below[i].binary_search(j).is_ok())
                .count();
        }
    }
    count
}
