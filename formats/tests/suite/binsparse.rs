//! binsparse files (feature `binsparse`): every format binsparse can store
//! round trips through a file on random tensors with the awkward cases;
//! files as other writers make them (h5py's variable-length descriptor,
//! signed and narrow indices, float32, integer and iso values, symmetric
//! triangles, level trees with a swizzle) read as the same tensor; and
//! faulty files and formats binsparse cannot store are refused with the
//! reason, never a panic.

#![cfg(feature = "binsparse")]

use std::path::{Path, PathBuf};

use hdf5_metno as hdf5;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use tessera_formats::io::{read_binsparse, read_binsparse_file, write_binsparse};
use tessera_formats::{CoordinateList, Format, FormatError, LevelFormat, Tensor};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tessera-binsparse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Random entries of `shape`: about `density` of the components, with
/// whole rows left empty and one row much longer than the others.
fn random_entries(rng: &mut SmallRng, shape: &[usize], density: f64) -> CoordinateList<f64> {
    let mut entries = CoordinateList::new(shape);
    let total: usize = shape.iter().product();
    for flat in 0..total {
        let mut rest = flat;
        let mut coords = vec![0u64; shape.len()];
        for (c, &n) in coords.iter_mut().zip(shape).rev() {
            *c = (rest % n) as u64;
            rest /= n;
        }
        let skewed = coords.first() == Some(&0);
        let empty_row = coords.first().is_some_and(|&r| r % 3 == 2);
        let p = if skewed { 0.9 } else { density };
        if !empty_row && rng.random_bool(p) {
            entries.push(&coords, rng.random_range(-4..=4) as f64 * 0.5).unwrap();
        }
    }
    entries
}

fn assert_same(a: &Tensor<f64>, b: &Tensor<f64>, what: &str) {
    assert_eq!(a.shape(), b.shape(), "{what}: shape");
    assert_eq!(a.format(), b.format(), "{what}: format");
    assert_eq!(a.values(), b.values(), "{what}: values");
    assert_eq!(
        a.to_dense_vec().unwrap(),
        b.to_dense_vec().unwrap(),
        "{what}: components"
    );
}

#[test]
fn every_format_binsparse_stores_round_trips_as_it_is_stored() {
    let matrices = [
        Format::csr(),
        Format::csc(),
        Format::dcsr(),
        Format::dcsc(),
        Format::coo(2),
        Format::coo_ordered(&[1, 0]),
        Format::dense(2),
        Format::dense_ordered(&[1, 0]),
        Format::from_levels(&[LevelFormat::compressed(), LevelFormat::dense()], &[0, 1]).unwrap(),
    ];
    let mut rng = SmallRng::seed_from_u64(7);
    let path = scratch("round.bsp.h5");
    for shape in [[0, 0], [1, 1], [0, 5], [6, 1], [9, 7], [31, 40]] {
        for density in [0.0, 0.2, 1.0] {
            let entries = random_entries(&mut rng, &shape, density);
            for format in &matrices {
                let a = Tensor::pack(&entries, format.clone()).unwrap();
                write_binsparse(&path, &a).unwrap();
                let back = read_binsparse(&path).unwrap();
                assert_same(&a, &back, &format!("{format} {shape:?} density {density}"));
            }
        }
    }
    let higher = [
        Format::csf(3),
        Format::coo(3),
        Format::dense(3),
        Format::csf_ordered(&[2, 0, 1]),
    ];
    for format in higher {
        let entries = random_entries(&mut rng, &[4, 5, 6], 0.3);
        let a = Tensor::pack(&entries, format.clone()).unwrap();
        write_binsparse(&path, &a).unwrap();
        assert_same(&a, &read_binsparse(&path).unwrap(), &format.to_string());
    }
    for format in [Format::sparse_vector(), Format::dense(1)] {
        let entries = random_entries(&mut rng, &[17], 0.4);
        let a = Tensor::pack(&entries, format.clone()).unwrap();
        write_binsparse(&path, &a).unwrap();
        assert_same(&a, &read_binsparse(&path).unwrap(), &format.to_string());
    }
    let mut scalar = CoordinateList::new(&[]);
    scalar.push(&[], 2.5).unwrap();
    let s = Tensor::pack(&scalar, Format::dense(0)).unwrap();
    write_binsparse(&path, &s).unwrap();
    assert_same(&s, &read_binsparse(&path).unwrap(), "scalar");
}

#[test]
fn named_formats_are_written_by_name_and_a_fill_is_kept() {
    let path = scratch("named.bsp.h5");
    let mut entries = CoordinateList::new(&[3, 4]);
    entries.push(&[2, 1], 5.0).unwrap();
    entries.push(&[0, 3], -1.0).unwrap();
    for (format, name) in [
        (Format::csr(), "CSR"),
        (Format::dcsc(), "DCSC"),
        (Format::coo(2), "COOR"),
    ] {
        let a = Tensor::pack(&entries, format).unwrap();
        write_binsparse(&path, &a).unwrap();
        let file = read_binsparse_file(&path).unwrap();
        assert!(
            file.description
                .starts_with(&format!("binsparse {name}, uint32 indices")),
            "{}",
            file.description
        );
        assert_eq!(descriptor(&path)["binsparse"]["format"], name);
    }
    let csf = Tensor::pack(&CoordinateList::new(&[2, 2, 2]), Format::csf(3)).unwrap();
    write_binsparse(&path, &csf).unwrap();
    assert_eq!(descriptor(&path)["binsparse"]["format"]["level"], "sparse");
    let filled = Tensor::pack(&entries, Format::csr())
        .unwrap()
        .with_fill(f64::INFINITY)
        .unwrap();
    write_binsparse(&path, &filled).unwrap();
    let back = read_binsparse(&path).unwrap();
    assert_eq!(back.fill(), f64::INFINITY);
    assert_eq!(back.to_dense_vec().unwrap(), filled.to_dense_vec().unwrap());
}

/// The descriptor of a file tessera wrote, parsed.
fn descriptor(path: &Path) -> serde_json::Value {
    let file = hdf5::File::open(path).unwrap();
    let attr = file.attr("binsparse").unwrap();
    let text: hdf5::types::FixedUnicode<4096> = attr.read_scalar().unwrap();
    serde_json::from_str(text.as_str()).unwrap()
}

/// Writes a file as another writer would: `arrays` by name, the
/// descriptor as a variable-length string (h5py's way).
fn foreign_file(name: &str, descriptor: &str, fill: impl FnOnce(&hdf5::File)) -> PathBuf {
    let path = scratch(name);
    let file = hdf5::File::create(&path).unwrap();
    fill(&file);
    let text: hdf5::types::VarLenUnicode = descriptor.parse().unwrap();
    file.new_attr::<hdf5::types::VarLenUnicode>()
        .shape(())
        .create("binsparse")
        .unwrap()
        .write_scalar(&text)
        .unwrap();
    file.close().unwrap();
    path
}

fn dataset<T: hdf5::H5Type>(file: &hdf5::File, name: &str, data: &[T]) {
    file.new_dataset_builder().with_data(data).create(name).unwrap();
}

/// [[1, 0, 2], [0, 0, 0], [0, 3, 0]]
fn expected() -> Vec<f64> {
    vec![1.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.0]
}

#[test]
fn files_from_other_writers_read_as_the_same_matrix() {
    let csr = foreign_file(
        "h5py_csr.bsp.h5",
        r#"{"binsparse": {"version": "0.1", "format": "CSR", "shape": [3, 3], "number_of_stored_values": 3,
            "data_types": {"pointers_to_1": "int64", "indices_1": "int32", "values": "float32"}}}"#,
        |f| {
            dataset(f, "pointers_to_1", &[0i64, 2, 2, 3]);
            dataset(f, "indices_1", &[0i32, 2, 1]);
            dataset(f, "values", &[1.0f32, 2.0, 3.0]);
        },
    );
    let a = read_binsparse(&csr).unwrap();
    assert_eq!((a.format(), a.to_dense_vec().unwrap()), (&Format::csr(), expected()));

    let cooc = foreign_file(
        "cooc.bsp.h5",
        r#"{"binsparse": {"format": "COOC", "shape": [3, 3],
            "data_types": {"indices_0": "uint8", "indices_1": "uint16", "values": "int8"}}}"#,
        |f| {
            dataset(f, "indices_0", &[0u8, 1, 2]);
            dataset(f, "indices_1", &[0u16, 2, 0]);
            dataset(f, "values", &[1i8, 3, 2]);
        },
    );
    let a = read_binsparse(&cooc).unwrap();
    assert_eq!(
        (a.format(), a.to_dense_vec().unwrap()),
        (&Format::coo_ordered(&[1, 0]), expected())
    );

    // The CSC equivalent written as a level tree, the swizzle beside the format.
    let tree = foreign_file(
        "tree.bsp.h5",
        r#"{"binsparse": {"swizzle": [1, 0], "shape": [3, 3],
            "format": {"level": "dense", "rank": 1, "subformat": {"level": "sparse", "rank": 1, "subformat": {"level": "element"}}},
            "data_types": {"pointers_to_1": "uint64", "indices_1": "uint64", "values": "float64"}}}"#,
        |f| {
            dataset(f, "pointers_to_1", &[0u64, 1, 2, 3]);
            dataset(f, "indices_1", &[0u64, 2, 0]);
            dataset(f, "values", &[1.0f64, 3.0, 2.0]);
        },
    );
    let a = read_binsparse(&tree).unwrap();
    assert_eq!((a.format(), a.to_dense_vec().unwrap()), (&Format::csc(), expected()));
}

#[test]
fn iso_values_and_stored_triangles_are_expanded() {
    let iso = foreign_file(
        "iso.bsp.h5",
        r#"{"binsparse": {"format": "DCSR", "shape": [3, 3],
            "data_types": {"indices_0": "uint64", "pointers_to_1": "uint64", "indices_1": "uint64", "values": "iso[bint8]"}}}"#,
        |f| {
            dataset(f, "indices_0", &[0u64, 2]);
            dataset(f, "pointers_to_1", &[0u64, 2, 3]);
            dataset(f, "indices_1", &[0u64, 2, 1]);
            dataset(f, "values", &[1u8]);
        },
    );
    let a = read_binsparse(&iso).unwrap();
    assert_eq!(
        a.to_dense_vec().unwrap(),
        vec![1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    );

    // [[1, 2, 0], [2, 0, 4], [0, 4, 6]] as its lower triangle.
    let triangle = |name: &str, structure: &str, rows: &[u64], cols: &[u64], values: &[f64]| {
        let descriptor = format!(
            r#"{{"binsparse": {{"format": "COO", "shape": [3, 3], "structure": "{structure}",
                "data_types": {{"indices_0": "uint64", "indices_1": "uint64", "values": "float64"}}}}}}"#
        );
        foreign_file(name, &descriptor, |f| {
            dataset(f, "indices_0", rows);
            dataset(f, "indices_1", cols);
            dataset(f, "values", values);
        })
    };
    let lower = triangle(
        "sym.bsp.h5",
        "symmetric_lower",
        &[0, 1, 2, 2],
        &[0, 0, 1, 2],
        &[1.0, 2.0, 4.0, 6.0],
    );
    let file = read_binsparse_file(&lower).unwrap();
    assert_eq!(
        file.tensor.to_dense_vec().unwrap(),
        vec![1.0, 2.0, 0.0, 2.0, 0.0, 4.0, 0.0, 4.0, 6.0]
    );
    assert!(
        file.description.contains("symmetric_lower (expanded)"),
        "{}",
        file.description
    );
    let skew = triangle("skew.bsp.h5", "skew_symmetric_upper", &[0, 1], &[1, 2], &[2.0, 4.0]);
    assert_eq!(
        read_binsparse(&skew).unwrap().to_dense_vec().unwrap(),
        vec![0.0, 2.0, 0.0, -2.0, 0.0, 4.0, 0.0, -4.0, 0.0]
    );
    let wrong_half = triangle("half.bsp.h5", "symmetric_upper", &[1], &[0], &[2.0]);
    assert_refused(&wrong_half, "(1, 0) is in the other");
}

/// The two worked examples of the specification, with its arrays, read as
/// the matrices its tables show.
#[test]
fn the_specifications_examples_read_as_its_tables() {
    let iso = foreign_file(
        "spec_iso.bsp.h5",
        r#"{"binsparse": {"shape": [5, 5],
            "format": {"level": "dense", "rank": 1, "subformat": {"level": "sparse", "rank": 1, "subformat": {"level": "element"}}},
            "data_types": {"pointers_to_1": "uint64", "indices_1": "uint64", "values": "iso[int8]"}}}"#,
        |f| {
            dataset(f, "pointers_to_1", &[0u64, 1, 3, 3, 5, 6]);
            dataset(f, "indices_1", &[3u64, 1, 4, 1, 2, 3]);
            dataset(f, "values", &[7i8]);
        },
    );
    let a = read_binsparse(&iso).unwrap();
    #[rustfmt::skip]
    let table = vec![
        0., 0., 0., 7., 0.,
        0., 7., 0., 0., 7.,
        0., 0., 0., 0., 0.,
        0., 7., 7., 0., 0.,
        0., 0., 0., 7., 0.,
    ];
    assert_eq!((a.format(), a.to_dense_vec().unwrap()), (&Format::csr(), table));

    let symmetric = foreign_file(
        "spec_symmetric.bsp.h5",
        r#"{"binsparse": {"format": "CSR", "shape": [5, 5], "structure": "symmetric_lower",
            "data_types": {"pointers_to_1": "uint64", "indices_1": "uint64", "values": "int8"}}}"#,
        |f| {
            dataset(f, "pointers_to_1", &[0u64, 1, 3, 5, 7, 9]);
            dataset(f, "indices_1", &[0u64, 0, 1, 0, 2, 1, 3, 2, 4]);
            dataset(f, "values", &[1i8, 2, 9, 7, 2, 2, 3, 3, 7]);
        },
    );
    #[rustfmt::skip]
    let table = vec![
        1., 2., 7., 0., 0.,
        2., 9., 0., 2., 0.,
        7., 0., 2., 0., 3.,
        0., 2., 0., 3., 0.,
        0., 0., 3., 0., 7.,
    ];
    assert_eq!(read_binsparse(&symmetric).unwrap().to_dense_vec().unwrap(), table);
}

fn assert_refused(path: &Path, says: &str) {
    match read_binsparse(path) {
        Err(e @ FormatError::Binsparse { .. }) => {
            let text = e.to_string();
            assert!(text.contains(says), "expected `{says}` in: {text}");
            assert!(text.starts_with(&path.display().to_string()), "names the file: {text}");
        }
        other => panic!(
            "{}: expected a binsparse error with `{says}`, got {other:?}",
            path.display()
        ),
    }
}

#[test]
fn faulty_files_are_refused_with_the_reason() {
    let csr = |name: &str, ptr: &[i64], idx: &[i64], values: &[f64]| {
        let (ptr, idx, values) = (ptr.to_vec(), idx.to_vec(), values.to_vec());
        foreign_file(
            name,
            r#"{"binsparse": {"format": "CSR", "shape": [2, 3],
                "data_types": {"pointers_to_1": "int64", "indices_1": "int64", "values": "float64"}}}"#,
            move |f| {
                dataset(f, "pointers_to_1", &ptr);
                dataset(f, "indices_1", &idx);
                dataset(f, "values", &values);
            },
        )
    };
    assert_refused(
        &csr("short.h5", &[0, 1], &[0], &[1.0]),
        "`pointers_to_1` has 2 elements; the 2 positions above it need 3",
    );
    assert_refused(
        &csr("negative.h5", &[0, 1, 1], &[-1], &[1.0]),
        "negative element -1 at 0",
    );
    assert_refused(&csr("outside.h5", &[0, 1, 1], &[3], &[1.0]), "not a valid CSR");
    assert_refused(&csr("unsorted.h5", &[0, 2, 2], &[2, 0], &[1.0, 2.0]), "not a valid CSR");
    assert_refused(
        &csr("values.h5", &[0, 1, 1], &[0], &[1.0, 2.0]),
        "`values` has 2 elements for 1 stored positions",
    );
    let missing = foreign_file(
        "missing.h5",
        r#"{"binsparse": {"format": "CSR", "shape": [2, 3], "data_types": {"values": "float64"}}}"#,
        |f| dataset(f, "values", &[1.0f64]),
    );
    assert_refused(&missing, "no array `indices_1`");
    let complex = foreign_file(
        "complex.h5",
        r#"{"binsparse": {"format": "DVEC", "shape": [1], "data_types": {"values": "complex[float64]"}}}"#,
        |f| dataset(f, "values", &[1.0f64, 0.0]),
    );
    assert_refused(&complex, "tessera's values are real");
    let inexact = foreign_file(
        "big.h5",
        r#"{"binsparse": {"format": "DVEC", "shape": [1], "data_types": {"values": "int64"}}}"#,
        |f| dataset(f, "values", &[(1i64 << 53) + 1]),
    );
    assert_refused(&inexact, "has no exact f64");

    let absurd = foreign_file(
        "absurd.h5",
        r#"{"binsparse": {"format": "DMATR", "shape": [1099511627776, 1099511627776], "data_types": {"values": "float64"}}}"#,
        |f| dataset(f, "values", &[1.0f64]),
    );
    assert_refused(&absurd, "refusing to allocate");
    let huge_rows = foreign_file(
        "rows.h5",
        r#"{"binsparse": {"format": "CSR", "shape": [1000000000000, 2],
            "data_types": {"pointers_to_1": "uint64", "indices_1": "uint64", "values": "float64"}}}"#,
        |f| {
            dataset(f, "pointers_to_1", &[0u64, 0]);
            dataset(f, "indices_1", &[0u64; 0]);
            dataset(f, "values", &[0f64; 0]);
        },
    );
    assert_refused(
        &huge_rows,
        "`pointers_to_1` has 2 elements; the 1000000000000 positions above it need 1000000000001",
    );

    let plain = scratch("plain.h5");
    let file = hdf5::File::create(&plain).unwrap();
    dataset(&file, "values", &[1.0f64]);
    file.close().unwrap();
    assert_refused(&plain, "no `binsparse` attribute");
    let text = scratch("text.h5");
    std::fs::write(&text, "%%MatrixMarket matrix coordinate real general\n").unwrap();
    assert_refused(&text, "not an HDF5 file");
    assert_refused(&scratch("absent.h5"), "not an HDF5 file");
}

#[test]
fn formats_binsparse_cannot_store_are_refused_and_the_old_file_kept() {
    let path = scratch("kept.bsp.h5");
    let mut entries = CoordinateList::new(&[4, 4]);
    entries.push(&[1, 2], 3.0).unwrap();
    let csr = Tensor::pack(&entries, Format::csr()).unwrap();
    write_binsparse(&path, &csr).unwrap();
    for format in [
        Format::dia(),
        Format::ell(),
        Format::bcsr(2, 2).unwrap(),
        Format::hash_rows(),
    ] {
        let a = Tensor::pack(&entries, format.clone()).unwrap();
        let err = write_binsparse(&path, &a).unwrap_err().to_string();
        assert!(
            err.contains("binsparse cannot store format") && err.contains("convert to csr"),
            "{format}: {err}"
        );
        assert_same(&csr, &read_binsparse(&path).unwrap(), "the old file");
    }
}
