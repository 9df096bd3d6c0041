//! The fuzz targets' properties, checked in CI without a fuzzer: the same
//! checks (`fuzz/src/`, included below) run on a fixed list of seeds and on
//! every committed corpus file (`fuzz/corpus/<target>/`, which holds the
//! seed inputs and every crash the fuzzer found, kept as a regression).
//!
//! - `differential`: statements on every tier of `tessera::engine()` (the
//!   interpreter and the JIT) against the dense reference, from the
//!   byte-driven decoder and from the testing module's seeded generators;
//! - `pack`: raw storage, mutated storage and coordinate lists → a valid
//!   tensor or an error, valid tensors through kernels on every tier;
//! - `schedule`: random schedules of random statements, refused with a
//!   schedule error or the reference's result on every tier;
//! - `parse_statement`, `read_mtx`, `read_tns`: the corpus files, and four
//!   fixed mutations of each (a bit flipped, truncated, a byte replaced, a
//!   tail repeated).
//!
//! Deterministic and bounded: 1500 seeds per generator (about 9,000 cases),
//! some seconds in release on two cores.
//! `TESSERA_FUZZ_SEEDS=first..end` runs other seeds (a failure names its
//! seed); `TESSERA_FUZZ_TIERS=interp,jit` runs the cases on those tiers
//! only (`scripts/test` runs the OpenCL tier on fewer seeds);
//! `TESSERA_VERBOSE=1` prints each case before running it.

#[path = "../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod fuzz;

use std::path::{Path, PathBuf};

use tessera::engine::testing::{seeds_from_env, Rng};

/// Seeds of the byte-driven and seeded cases per run.
const SEEDS: std::ops::Range<u64> = 0..1500;

/// The seeds to run: `SEEDS`, or `TESSERA_FUZZ_SEEDS`.
fn seeds() -> std::ops::Range<u64> {
    seeds_from_env("TESSERA_FUZZ_SEEDS", SEEDS)
}

fn verbose() -> bool {
    std::env::var_os("TESSERA_VERBOSE").is_some()
}

/// The fuzzer-like input of `seed`: 16 to 400 pseudo-random bytes, the
/// first byte's low bit set to `low_bit` (it chooses the generator).
fn input(seed: u64, low_bit: u8) -> Vec<u8> {
    let mut rng = Rng::new(seed ^ 0xF022_5EED);
    let len = rng.range(16, 400);
    let mut bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
    bytes[0] = (bytes[0] & !1) | low_bit;
    bytes
}

/// The files of `fuzz/corpus/<target>/`, sorted.
fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{} holds no seed inputs", dir.display());
    files
}

/// The corpus files of `target`, each named by its path.
fn corpus_cases(target: &str) -> Vec<(String, Vec<u8>)> {
    corpus(target)
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (format!("corpus file {}", p.display()), bytes)
        })
        .collect()
}

/// Runs `check` on every case; fails listing every failure.
fn check_all(target: &str, cases: &[(String, Vec<u8>)], check: fn(&[u8]) -> Result<(), String>) {
    let mut failures = Vec::new();
    for (name, bytes) in cases {
        if verbose() {
            eprintln!("{target}: {name}");
        }
        if let Err(e) = fuzz::catch(target, || check(bytes)).and_then(|r| r) {
            failures.push(format!("{name}: {e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} {target} cases fail:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn byte_decoded_statements_agree_with_the_reference_on_every_tier() {
    let mut cases = corpus_cases("differential");
    cases.extend(seeds().map(|seed| (format!("decoder seed {seed}"), input(seed, 0))));
    check_all("differential", &cases, fuzz::differential::check);
}

#[test]
fn seeded_random_statements_agree_with_the_reference_on_every_tier() {
    let cases: Vec<_> = seeds()
        .map(|seed| (format!("generator seed {seed}"), input(seed, 1)))
        .collect();
    check_all("differential", &cases, fuzz::differential::check);
}

#[test]
fn random_schedules_are_refused_or_keep_the_result_on_every_tier() {
    let mut cases = corpus_cases("schedule");
    cases.extend(seeds().map(|seed| (format!("schedule seed {seed}"), input(seed.wrapping_add(1 << 32), 1))));
    check_all("schedule", &cases, fuzz::schedule::check);
    // The property must not hold by refusing: many schedules run (most
    // refusals are meant: splits of variables a compressed level walks,
    // unknown names, blocks of positions whose output would be joined).
    let ran = cases
        .iter()
        .filter(|(_, bytes)| fuzz::schedule::run(bytes) == Ok(fuzz::schedule::Outcome::Ran))
        .count();
    assert!(
        ran * 8 >= cases.len(),
        "only {ran} of {} scheduled cases ran",
        cases.len()
    );
}

#[test]
fn every_tier_agrees_on_tensors_that_validate() {
    let mut cases = corpus_cases("pack");
    for seed in seeds() {
        // One of each way of making storage: raw, mutated, coordinates.
        for how in 0..3u8 {
            let mut bytes = input(seed.wrapping_mul(3).wrapping_add(u64::from(how)), 0);
            bytes[0] = how;
            cases.push((format!("pack seed {seed}, way {how}"), bytes));
        }
    }
    check_all("pack", &cases, fuzz::pack::check);
}

#[test]
fn the_parser_and_readers_survive_their_corpora() {
    // Mutations of the corpus files: each with a byte flipped, truncated,
    // or doubled, for a fixed set of positions.
    let mutants = |target: &str| -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        for (k, (name, bytes)) in corpus_cases(target).into_iter().enumerate() {
            let mut rng = Rng::new(k as u64);
            for m in 0..4 {
                let mut b = bytes.clone();
                if !b.is_empty() {
                    let at = rng.below(b.len());
                    match m {
                        0 => b[at] ^= 1 << rng.below(8),
                        1 => b.truncate(at),
                        2 => b[at] = *rng.pick(b"0123456789 -.e\n%#()=+*/,abijNn"),
                        _ => b.extend_from_within(at..),
                    }
                }
                out.push((format!("mutant {m} of {name}"), b));
            }
        }
        out
    };
    for (target, check) in [
        (
            "parse_statement",
            fuzz::text::statement as fn(&[u8]) -> Result<(), String>,
        ),
        ("read_mtx", fuzz::text::mtx),
        ("read_tns", fuzz::text::tns),
    ] {
        let mut cases = corpus_cases(target);
        cases.extend(mutants(target));
        check_all(target, &cases, check);
    }
}
