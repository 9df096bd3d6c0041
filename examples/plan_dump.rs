use tessera::engine::*;
use tessera::formats::*;
fn main() {
    let e = Engine::new();
    let args: Vec<String> = std::env::args().collect();
    let stmt = &args[1];
    let fmts: Vec<(String, Format)> = args[2..].iter().map(|a| {
        let (n, f) = a.split_once(':').unwrap();
        let f = match f { "csr" => Format::csr(), "csc" => Format::csc(), "dense1" => Format::dense(1), "dense2" => Format::dense(2), "sv" => Format::sparse_vector(), "coo" => Format::coo(2), "dcsr" => Format::dcsr(), "hash" => Format::hash_rows(), _ => panic!() };
        (n.to_string(), f)
    }).collect();
    let out = fmts.iter().find(|(n, _)| n == "OUT").map(|(_, f)| f.clone()).unwrap();
    let ins: Vec<(&str, Format)> = fmts.iter().filter(|(n, _)| n != "OUT").map(|(n, f)| (n.as_str(), f.clone())).collect();
    let k = e.compile(stmt, &ins, &out).unwrap();
    println!("{}", k.plan());
    println!("{}", k.program());
}
