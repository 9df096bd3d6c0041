//! Random tensors for prototyping without data (`-g NAME:DIMS:DENSITY[:SEED]`,
//! `:gen NAME DIMS DENSITY [SEED]`).
//!
//! Takes a [`GenSpec`] — the shape (`1000x1000`), the fraction of components
//! that are nonzero, and a seed — and gives the entries: exactly
//! `round(density × components)` distinct coordinates, values uniform in
//! (0, 1] (for a tensor asked as `i64` or `i32`, integers from 1 to 9:
//! [`generated_value`]; for `c64`, real and imaginary parts each in (0, 1]:
//! [`GenSpec::generate_complex`]). The same spec and seed give the same
//! tensor on every run and machine (the generator is ChaCha-based
//! `StdRng`). Without a seed, one is derived from the tensor's name, so
//! that runs repeat and two generated tensors differ.

use std::collections::HashSet;
use std::fmt;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tessera_formats::{Complex64, CoordinateList, Format, ValueType};

use super::files::natural_format;

/// Most nonzeros a generated tensor may have: a prototyping tensor, far
/// below what memory holds while the coordinates are drawn.
pub const MAX_GENERATED: usize = 1 << 27;

/// What to generate.
#[derive(Debug, Clone, PartialEq)]
pub struct GenSpec {
    pub shape: Vec<usize>,
    pub density: f64,
    pub seed: Option<u64>,
}

impl GenSpec {
    /// Parses `DIMS:DENSITY[:SEED]`, as in `1000x1000:0.01:7`.
    pub fn parse(text: &str) -> Result<GenSpec, String> {
        let mut parts = text.split(':');
        let dims = parts.next().unwrap_or_default();
        let density = parts
            .next()
            .ok_or_else(|| format!("expected DIMS:DENSITY[:SEED] such as 1000x1000:0.01, found `{text}`"))?;
        let seed = parts.next();
        if let Some(extra) = parts.next() {
            return Err(format!(
                "unexpected `:{extra}` after the seed: expected DIMS:DENSITY[:SEED]"
            ));
        }
        Self::from_parts(dims, density, seed)
    }

    /// Parses the three parts separately (the REPL's `:gen x 100 0.5 7`).
    pub fn from_parts(dims: &str, density: &str, seed: Option<&str>) -> Result<GenSpec, String> {
        let shape = dims
            .split(['x', 'X'])
            .map(|d| {
                d.trim().parse::<usize>().map_err(|_| {
                    format!(
                        "bad dimension `{}` in `{dims}`: expected sizes such as 1000x1000",
                        d.trim()
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if shape.len() > tessera_engine::notation::MAX_ORDER {
            return Err(format!(
                "`{dims}` has {} modes, tessera handles at most {}",
                shape.len(),
                tessera_engine::notation::MAX_ORDER
            ));
        }
        let density: f64 = density
            .trim()
            .parse()
            .ok()
            .filter(|d: &f64| (0.0..=1.0).contains(d))
            .ok_or_else(|| format!("bad density `{density}`: expected a number from 0 to 1, such as 0.01"))?;
        let seed = seed
            .map(|s| {
                s.trim()
                    .parse::<u64>()
                    .map_err(|_| format!("bad seed `{s}`: expected a non-negative integer"))
            })
            .transpose()?;
        Ok(GenSpec { shape, density, seed })
    }

    /// Components of the tensor, if they can be counted.
    fn components(&self) -> Option<u128> {
        self.shape.iter().try_fold(1u128, |acc, &d| acc.checked_mul(d as u128))
    }

    /// Whether every component is nonzero (the tensor is stored dense by default).
    pub fn is_full(&self) -> bool {
        self.density >= 1.0
    }

    /// The format a generated tensor gets when none is asked for.
    pub fn natural_format(&self) -> Format {
        natural_format(self.shape.len(), self.is_full())
    }

    /// Number of nonzeros the tensor will have.
    pub fn nonzeros(&self) -> Result<usize, String> {
        let total = self.components().ok_or_else(|| self.too_large())?;
        let nnz = (self.density * total as f64).round() as u128;
        let nnz = nnz.min(total);
        usize::try_from(nnz)
            .ok()
            .filter(|&n| n <= MAX_GENERATED)
            .ok_or_else(|| self.too_large())
    }

    fn too_large(&self) -> String {
        format!(
            "{} at density {} has more than {MAX_GENERATED} nonzeros, the most tessera generates",
            shape_text(&self.shape),
            self.density
        )
    }

    /// The entries, with the seed given or derived from `name`.
    pub fn generate(&self, name: &str) -> Result<CoordinateList<f64>, String> {
        let nnz = self.nonzeros()?;
        let total = self.components().ok_or_else(|| self.too_large())?;
        // At the peak, each nonzero is a chosen position in a hash set and
        // then a sorted array (about 40 bytes), and an entry of the list
        // (8 bytes per coordinate and the value); packing needs about as
        // much again.
        let per_entry = 48 + 16 * self.shape.len() as u128;
        tessera_formats::budget::check_allocation(
            &format!("generating {name} ({self}, {nnz} nonzeros)"),
            nnz as u128 * per_entry,
        )
        .map_err(|e| e.to_string())?;
        let mut rng = StdRng::seed_from_u64(self.seed_for(name));
        let positions = if (nnz as u128) * 4 >= total {
            select_sequentially(&mut rng, total, nnz)
        } else {
            select_scattered(&mut rng, total, nnz)
        };
        let mut list = CoordinateList::with_capacity(&self.shape, nnz).map_err(|e| e.to_string())?;
        let mut coords = vec![0u64; self.shape.len()];
        for p in positions {
            let mut rest = p;
            for (c, &d) in coords.iter_mut().zip(&self.shape).rev() {
                *c = (rest % d as u128) as u64;
                rest /= d as u128;
            }
            // Values in (0, 1]: never an explicit zero.
            let value = 1.0 - rng.random::<f64>();
            list.push(&coords, value).map_err(|e| e.to_string())?;
        }
        Ok(list)
    }

    /// The seed given, or the one derived from `name`.
    fn seed_for(&self, name: &str) -> u64 {
        self.seed.unwrap_or_else(|| name_seed(name))
    }

    /// The entries of a `c64` tensor: the coordinates and real parts of
    /// [`generate`](Self::generate) (those an `f64` tensor of the same
    /// spec and seed gets), and imaginary parts in (0, 1] drawn, entry by
    /// entry, from a second generator seeded with the seed xor
    /// [`IMAGINARY_SEED`]: the same tensor on every run, with parts that do
    /// not repeat the real ones.
    pub fn generate_complex(&self, name: &str) -> Result<CoordinateList<Complex64>, String> {
        let real = self.generate(name)?;
        // The complex entries are made beside the real ones: their
        // coordinates again and 16 bytes a value.
        let per_entry = 16 + 8 * self.shape.len() as u128;
        tessera_formats::budget::check_allocation(
            &format!("generating {name} as c64 ({self}, {} nonzeros)", real.len()),
            real.len() as u128 * per_entry,
        )
        .map_err(|e| e.to_string())?;
        let mut rng = StdRng::seed_from_u64(self.seed_for(name) ^ IMAGINARY_SEED);
        let mut list = CoordinateList::with_capacity(&self.shape, real.len()).map_err(|e| e.to_string())?;
        for (coords, re) in real.iter() {
            let im = 1.0 - rng.random::<f64>();
            list.push(coords, Complex64::new(re, im)).map_err(|e| e.to_string())?;
        }
        Ok(list)
    }
}

/// What the seed of a generated `c64` tensor's imaginary parts differs from
/// the real parts' seed by (xor): 2^64 over the golden ratio, the usual
/// constant for deriving one seed from another.
pub const IMAGINARY_SEED: u64 = 0x9e37_79b9_7f4a_7c15;

impl fmt::Display for GenSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at density {}", shape_text(&self.shape), self.density)?;
        if let Some(seed) = self.seed {
            write!(f, ", seed {seed}")?;
        }
        Ok(())
    }
}

/// The largest value a generated tensor of an integer type holds.
pub const LARGEST_GENERATED_INTEGER: f64 = 9.0;

/// A generated value `v`, in (0, 1], as a tensor of type `ty` gets it:
/// itself for `f64`, `f32` and `bool` (rounded when stored), and for `i64`
/// and `i32` an integer from 1 to 9, ⌈9v⌉ — rounding `v` toward zero would
/// make every value 0, and integer kernels on generated data would compute
/// nothing but zeros.
pub fn generated_value(v: f64, ty: ValueType) -> f64 {
    if ty.is_integer() {
        (v * LARGEST_GENERATED_INTEGER)
            .ceil()
            .clamp(1.0, LARGEST_GENERATED_INTEGER)
    } else {
        v
    }
}

/// `1000 x 1000`, `15606`, or `scalar`.
pub fn shape_text(shape: &[usize]) -> String {
    if shape.is_empty() {
        return "scalar".into();
    }
    shape.iter().map(usize::to_string).collect::<Vec<_>>().join(" x ")
}

/// A seed from a name (FNV-1a), so unseeded runs repeat.
fn name_seed(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// `k` of the positions `0..n`, in increasing order, by selection sampling
/// (Knuth's algorithm S): linear in `n`, for dense selections.
fn select_sequentially(rng: &mut StdRng, n: u128, k: usize) -> Vec<u128> {
    let mut chosen = Vec::with_capacity(k);
    let mut t = 0u128;
    while chosen.len() < k {
        let needed = (k - chosen.len()) as f64;
        let left = (n - t) as f64;
        if left * rng.random::<f64>() < needed {
            chosen.push(t);
        }
        t += 1;
    }
    chosen
}

/// `k` distinct positions of `0..n`, sorted, by Floyd's algorithm: linear in
/// `k`, for sparse selections.
fn select_scattered(rng: &mut StdRng, n: u128, k: usize) -> Vec<u128> {
    let mut chosen: HashSet<u128> = HashSet::with_capacity(k);
    for j in n - k as u128..n {
        let t = rng.random_range(0..=j);
        if !chosen.insert(t) {
            chosen.insert(j);
        }
    }
    let mut positions: Vec<u128> = chosen.into_iter().collect();
    positions.sort_unstable();
    positions
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_tensors_have_the_asked_nonzeros_and_repeat() {
        let spec = GenSpec::parse("30x40:0.1:7").unwrap();
        let a = spec.generate("A").unwrap();
        assert_eq!(a.shape(), &[30, 40]);
        assert_eq!(a.len(), 120);
        assert!(a.is_canonical());
        assert!(a.values().iter().all(|&v| v > 0.0 && v <= 1.0));
        assert_eq!(a, spec.generate("B").unwrap(), "a seed fixes the tensor");
        let unseeded = GenSpec::parse("30x40:0.5").unwrap();
        assert_ne!(unseeded.generate("A").unwrap(), unseeded.generate("B").unwrap());
        assert_eq!(unseeded.generate("A").unwrap().len(), 600);
        let full = GenSpec::parse("5x6:1").unwrap();
        assert_eq!(full.generate("x").unwrap().len(), 30);
        assert!(full.is_full());
    }

    #[test]
    fn generated_integers_are_1_to_9_and_never_0() {
        let spec = GenSpec::parse("50x50:0.5:3").unwrap();
        let values: Vec<f64> = spec
            .generate("A")
            .unwrap()
            .values()
            .iter()
            .map(|&v| generated_value(v, ValueType::I32))
            .collect();
        assert!(values.iter().all(|&v| v.fract() == 0.0 && (1.0..=9.0).contains(&v)));
        for k in 1..=9 {
            assert!(values.contains(&f64::from(k)), "{k} is never generated");
        }
        assert_eq!(generated_value(1e-300, ValueType::I64), 1.0);
        assert_eq!(generated_value(1.0, ValueType::I64), 9.0);
        assert_eq!(generated_value(0.25, ValueType::F32), 0.25);
    }

    #[test]
    fn generated_complex_values_keep_the_real_tensor_and_add_imaginary_parts() {
        let spec = GenSpec::parse("20x30:0.2:5").unwrap();
        let real = spec.generate("A").unwrap();
        let complex = spec.generate_complex("A").unwrap();
        assert_eq!(complex.len(), real.len());
        for ((c, v), (rc, rv)) in complex.iter().zip(real.iter()) {
            assert_eq!((c, v.re), (rc, rv));
            assert!(v.im > 0.0 && v.im <= 1.0);
        }
        assert!(complex.values().iter().any(|v| v.im != v.re));
        assert_eq!(complex, spec.generate_complex("B").unwrap(), "a seed fixes the tensor");
        let unseeded = GenSpec::parse("20x30:0.2").unwrap();
        assert_ne!(
            unseeded.generate_complex("A").unwrap(),
            unseeded.generate_complex("B").unwrap()
        );
    }

    #[test]
    fn bad_specs_name_the_bad_part() {
        assert!(GenSpec::parse("10x1O:0.1").unwrap_err().contains("`1O`"));
        assert!(GenSpec::parse("10:1.5").unwrap_err().contains("`1.5`"));
        assert!(GenSpec::parse("10").unwrap_err().contains("DIMS:DENSITY"));
        assert!(GenSpec::parse("10:0.5:x").unwrap_err().contains("`x`"));
        let huge = GenSpec::parse("100000000x100000000x100000000:1").unwrap();
        assert!(huge.nonzeros().unwrap_err().contains("more than"));
    }
}
