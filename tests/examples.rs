//! The examples run as tests: each asserts its own results (the graph
//! algorithms check BFS levels against shortest-path distances).

#[path = "../examples/graphs.rs"]
mod graphs;

#[test]
fn graph_algorithms_on_the_shipped_graph_agree() {
    graphs::main().expect("the graph example runs");
}
