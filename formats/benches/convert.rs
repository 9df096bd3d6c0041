//! Converting a matrix between formats: `Tensor::convert` from CSR of a
//! 2-D 5-point Laplacian (a 1000 x 1000 grid: 1M rows, 5M entries) to CSC,
//! DIA, ELL and BCSR 4x4, and packing its entries, unsorted, into CSR. All
//! go through the generic packer (the entries listed, put in storage order,
//! packed level by level); scipy's `tocsc`, `todia` and `tobsr` on the
//! same matrix are the bar.
//!
//! `cargo bench -p tessera-formats --bench convert`.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use tessera_formats::{CoordinateList, Format, Tensor};

const GRID: u64 = 1000;

/// The Laplacian's entries, row by row; shuffled when `shuffle`.
fn laplacian(shuffle: bool) -> CoordinateList {
    let n = (GRID * GRID) as usize;
    let mut entries = Vec::with_capacity(5 * n);
    for r in 0..GRID {
        for c in 0..GRID {
            let i = r * GRID + c;
            let neighbours = [
                (r > 0).then(|| i - GRID),
                (c > 0).then(|| i - 1),
                Some(i),
                (c + 1 < GRID).then_some(i + 1),
                (r + 1 < GRID).then_some(i + GRID),
            ];
            for j in neighbours.into_iter().flatten() {
                entries.push(([i, j], if i == j { 4.0 } else { -1.0 }));
            }
        }
    }
    if shuffle {
        entries.shuffle(&mut rand::rngs::SmallRng::seed_from_u64(7));
    }
    let mut list = CoordinateList::new(&[n, n]);
    for (c, v) in entries {
        list.push(&c, v).expect("in range");
    }
    list
}

fn convert(c: &mut Criterion) {
    let csr = Tensor::pack(&laplacian(false), Format::csr()).expect("packs");
    let shuffled = laplacian(true);
    let mut group = c.benchmark_group("convert");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    let targets = [
        ("csc", Format::csc()),
        ("dia", Format::dia()),
        ("ell", Format::ell()),
        ("bcsr4x4", Format::bcsr(4, 4).expect("divides")),
    ];
    for (name, format) in targets {
        group.bench_function(format!("csr_to_{name}"), |b| {
            b.iter(|| csr.convert(&format).expect("converts"))
        });
    }
    group.bench_function("shuffled_to_csr", |b| {
        b.iter(|| Tensor::pack(&shuffled, Format::csr()).expect("packs"))
    });
    group.finish();
}

criterion_group!(benches, convert);
criterion_main!(benches);
