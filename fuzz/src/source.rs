//! Decisions read from the fuzzer's bytes.
//!
//! Every choice a generator makes is one byte (or a few), read in order; a
//! mutation of one byte changes one decision, which is what gives a
//! coverage-guided fuzzer leverage over a seeded PRNG. Once the bytes run
//! out every read is zero, so any input decodes to something, and short
//! inputs to small cases.

/// A cursor over the fuzzer's bytes.
pub struct Source<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Source<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Source { bytes, at: 0 }
    }

    /// The next byte, `0` past the end.
    pub fn byte(&mut self) -> u8 {
        let b = self.bytes.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    /// The next 8 bytes as a little-endian `u64` (zero-filled past the end).
    pub fn u64(&mut self) -> u64 {
        let mut word = [0u8; 8];
        for w in &mut word {
            *w = self.byte();
        }
        u64::from_le_bytes(word)
    }

    /// A number in `0..n` from one byte (`0` when `n` is `0`); `n` should
    /// be at most 256 for every value to be reachable.
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        self.byte() as usize % n
    }

    /// A number in `lo..=hi` (`lo` when `hi <= lo`).
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        if hi <= lo {
            return lo;
        }
        lo + self.below(hi - lo + 1)
    }

    /// `true` with probability about `percent / 100` (one byte).
    pub fn percent(&mut self, percent: u32) -> bool {
        (self.byte() as u32 * 100) < percent * 256
    }

    /// One of `items`.
    ///
    /// # Panics
    /// If `items` is empty.
    pub fn pick<'b, T>(&mut self, items: &'b [T]) -> &'b T {
        assert!(!items.is_empty(), "pick from an empty slice");
        &items[self.below(items.len())]
    }

    /// The bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        self.bytes.get(self.at..).unwrap_or(&[])
    }

    /// Whether every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.at >= self.bytes.len()
    }
}
