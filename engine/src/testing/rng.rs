//! A small deterministic PRNG (SplitMix64) for the test generators.
//!
//! No dependency, the same stream on every platform, and seedable from a
//! `u64` or from raw bytes, so a failing case is reproduced by its seed and
//! a fuzzer can drive the generators from its input.

/// SplitMix64: a 64-bit state advanced by a constant, output mixed.
///
/// ```
/// use tessera_engine::testing::Rng;
/// let mut a = Rng::new(7);
/// let mut b = Rng::new(7);
/// assert_eq!(a.next_u64(), b.next_u64());
/// assert!(a.below(10) < 10);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator seeded by `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    /// A generator seeded by arbitrary bytes (a fuzzer's input): equal
    /// bytes give equal streams.
    pub fn from_bytes(bytes: &[u8]) -> Rng {
        let mut rng = Rng::new(0x05EE_D0F7_E55E_7A00);
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            rng.state ^= u64::from_le_bytes(word);
            rng.next_u64();
        }
        rng
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`; `0` when `n` is `0`.
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        // Multiply-shift: unbiased enough for test generation.
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }

    /// A number in `lo..=hi` (`lo` when `hi < lo`).
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        if hi <= lo {
            return lo;
        }
        lo + self.below(hi - lo + 1)
    }

    /// `true` with probability `percent / 100`.
    pub fn percent(&mut self, percent: u32) -> bool {
        (self.below(100) as u32) < percent
    }

    /// One of `items`, uniformly.
    ///
    /// # Panics
    /// If `items` is empty.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        assert!(!items.is_empty(), "pick from an empty slice");
        &items[self.below(items.len())]
    }

    /// Shuffles `items` in place (Fisher–Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for k in (1..items.len()).rev() {
            let j = self.below(k + 1);
            items.swap(k, j);
        }
    }

    /// An independent generator split off this one: what it draws does not
    /// shift this one's later draws beyond the one draw that seeds it.
    pub fn fork(&mut self) -> Rng {
        Rng::new(self.next_u64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_is_fixed_by_the_seed() {
        // SplitMix64's published first output for seed 0.
        assert_eq!(Rng::new(0).next_u64(), 0xE220_A839_7B1D_CDAF);
        let a: Vec<u64> = (0..5)
            .map({
                let mut r = Rng::new(42);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..5)
            .map({
                let mut r = Rng::new(42);
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
    }

    #[test]
    fn bounded_draws_stay_in_range_and_cover_it() {
        let mut r = Rng::new(1);
        let mut seen = [false; 5];
        for _ in 0..200 {
            let x = r.below(5);
            seen[x] = true;
            assert!((3..=6).contains(&r.range(3, 6)));
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(r.below(0), 0);
    }

    #[test]
    fn byte_seeds_differ_by_content() {
        assert_eq!(Rng::from_bytes(b"abc"), Rng::from_bytes(b"abc"));
        assert_ne!(Rng::from_bytes(b"abc").next_u64(), Rng::from_bytes(b"abd").next_u64());
    }
}
