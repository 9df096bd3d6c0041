use tessera_engine::reference::evaluate;
use tessera_engine::*;
use tessera_formats::*;

fn mat(shape: &[usize], entries: &[(u64, u64, f64)], f: Format) -> Tensor {
    let mut l = CoordinateList::new(shape);
    for &(i, j, v) in entries {
        l.push(&[i, j], v).unwrap();
    }
    Tensor::pack(&l, f).unwrap()
}

fn close(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x - y).abs() <= 1e-9 * (1.0 + x.abs().max(y.abs())) || (x.is_nan() && y.is_nan()))
}

#[test]
fn smoke() {
    let e = Engine::new();
    let entries = [(0, 1, 2.0), (1, 2, 3.0), (2, 0, 4.0), (2, 2, 5.0), (3, 3, 1.5)];
    let x = Tensor::from_dense(&[4], vec![1.0, 10.0, 100.0, 1000.0]).unwrap();
    let b = Tensor::pack(
        &{
            let mut l = CoordinateList::new(&[4]);
            l.push(&[1], 7.0).unwrap();
            l.push(&[3], 9.0).unwrap();
            l
        },
        Format::sparse_vector(),
    )
    .unwrap();
    for f in [
        Format::csr(),
        Format::csc(),
        Format::dcsr(),
        Format::coo(2),
        Format::dense(2),
        Format::hash_rows(),
        Format::dia(),
        Format::ell(),
        Format::bcsr(2, 2).unwrap(),
    ] {
        let a = mat(&[4, 4], &entries, f.clone());
        let c = mat(&[4, 4], &[(0, 0, 1.0), (1, 2, -1.0), (3, 1, 2.0)], Format::csr());
        let inputs = Inputs::new().with("A", &a).with("x", &x).with("b", &b).with("C", &c);
        for stmt in [
            "y(i) = A(i,j) * x(j)",
            "y(i) = A(i,j) * x(j) + b(i)",
            "r(i) = b(i) - A(i,j) * x(j)",
            "Z(i,j) = A(i,k) * C(k,j)",
            "Z(i,j) = A(i,j) + C(i,j)",
            "Z(i,j) = A(i,j) - C(j,i)",
            "Z(i,j) = A(j,i)",
            "s = A(i,j) * C(i,j)",
            "Z(i,j) = 2 * A(i,j)",
        ] {
            for out in [
                None,
                Some(Format::dense(2)),
                Some(Format::csr()),
                Some(Format::coo(2)),
                Some(Format::dcsr()),
            ] {
                let stmt_parsed = tessera_engine::notation::parse_statement(stmt).unwrap();
                let order = stmt_parsed.lhs.indices.len();
                let out = out.filter(|o| o.order() == order);
                let opts = EvalOptions {
                    output_format: out.clone(),
                    ..Default::default()
                };
                let got = e
                    .eval_with(stmt, &inputs, &opts)
                    .unwrap_or_else(|err| panic!("{f} {stmt} {out:?}: {err}"));
                let refv = evaluate(&stmt_parsed, &[("A", &a), ("x", &x), ("b", &b), ("C", &c)], &[]).unwrap();
                let gotv = got.to_dense_vec().unwrap();
                assert!(
                    close(&gotv, &refv.values),
                    "{f} {stmt} {out:?}: got {gotv:?} want {:?}",
                    refv.values
                );
            }
        }
    }
}

#[test]
fn dense_block_paths_match_reference() {
    let e = Engine::new();
    let b = mat(
        &[5, 4],
        &[(0, 1, 2.0), (1, 2, 3.0), (2, 0, 4.0), (2, 2, 5.0), (4, 3, 1.5)],
        Format::csr(),
    );
    let d = Tensor::from_dense(&[4, 3], (0..12).map(|v| v as f64 - 3.0).collect()).unwrap();
    let mut l3 = CoordinateList::new(&[3, 4, 5]);
    for (i, k, m, v) in [(0, 1, 2, 1.0), (0, 1, 4, 2.0), (2, 3, 0, -1.0), (2, 0, 0, 4.0)] {
        l3.push(&[i, k, m], v).unwrap();
    }
    let t3 = Tensor::pack(&l3, Format::csf(3)).unwrap();
    let c = Tensor::from_dense(&[4, 3], (0..12).map(|v| v as f64 * 0.5).collect()).unwrap();
    let dd = Tensor::from_dense(&[5, 3], (0..15).map(|v| 1.0 + v as f64).collect()).unwrap();
    let x = Tensor::from_dense(&[4], vec![1.0, -2.0, 3.0, 0.5]).unwrap();
    let s = Tensor::from_dense(&[], vec![3.0]).unwrap();
    let inputs = [
        ("B", &b),
        ("D", &d),
        ("T", &t3),
        ("C", &c),
        ("E", &dd),
        ("x", &x),
        ("s", &s),
    ];
    let mut ins = Inputs::new();
    for (n, t) in inputs {
        ins.insert(n, t);
    }
    for stmt in [
        "A(i,j) = B(i,k) * D(k,j)",
        "A(i,j) = s * B(i,k) * D(k,j)",
        "A(i,j) = T(i,k,l) * C(k,j) * E(l,j)",
        "y(i) = B(i,j) * x(j)",
        "y(i) = s * B(i,j) * x(j)",
        "y(i) = B(i,j) * x(j) * x(j)",
    ] {
        let parsed = tessera_engine::notation::parse_statement(stmt).unwrap();
        let got = e.eval(stmt, &ins).unwrap().to_dense_vec().unwrap();
        let want = evaluate(&parsed, &inputs, &[]).unwrap();
        assert!(close(&got, &want.values), "{stmt}: got {got:?} want {:?}", want.values);
    }
}
