//! Index arrays: the `pos`, `idx` and offset arrays that levels store.
//!
//! Unsigned arrays are 32-bit when every value fits and 64-bit beyond; the
//! width is chosen once, when a level is built ([`IndexArray::from_u64`]), and
//! every level function reads both widths through [`IndexArray::get`] or the
//! builder's `load`. Offsets (DIA) are signed and always 64-bit.

use crate::memory::with_capacity_on_huge_pages;

/// The element type of an index array; compiled kernels specialise on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IndexWidth {
    U32,
    U64,
    I64,
}

/// One index array of a level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexArray {
    U32(Vec<u32>),
    U64(Vec<u64>),
    I64(Vec<i64>),
}

impl Default for IndexArray {
    fn default() -> Self {
        IndexArray::U32(Vec::new())
    }
}

/// Room for `additional` more elements in `v`, as [`Vec::reserve`],
/// except that a move copies only the elements: a reallocation copies the
/// whole capacity, which a vector reserved ahead and cut back is mostly
/// made of. True when `v` moved, to memory not yet touched.
///
/// ```
/// let mut v: Vec<u32> = Vec::with_capacity(1000);
/// v.push(7);
/// assert!(tessera_formats::reserve_moving_elements(&mut v, 5000));
/// assert!(v.capacity() >= 5001 && v == [7]);
/// assert!(!tessera_formats::reserve_moving_elements(&mut v, 10));
/// ```
pub fn reserve_moving_elements<T: Copy>(v: &mut Vec<T>, additional: usize) -> bool {
    if v.capacity() - v.len() >= additional {
        return false;
    }
    let mut moved = Vec::with_capacity(v.len() + additional);
    moved.extend_from_slice(v);
    *v = moved;
    true
}

impl IndexArray {
    /// Stores `values` in 32 bits when the largest fits, else in 64.
    pub fn from_u64(values: Vec<u64>) -> Self {
        let max = values.iter().copied().max().unwrap_or(0);
        Self::from_u64_with_bound(values, max)
    }

    /// Like [`from_u64`](Self::from_u64), with a known upper bound on the values
    /// (e.g. the dimension), so that the choice of width does not need a scan.
    pub fn from_u64_with_bound(values: Vec<u64>, bound: u64) -> Self {
        if bound <= u64::from(u32::MAX) {
            IndexArray::U32(values.into_iter().map(|v| v as u32).collect())
        } else {
            IndexArray::U64(values)
        }
    }

    /// Like [`from_u64_with_bound`](Self::from_u64_with_bound), collecting
    /// `values` straight into the chosen width (no 64-bit copy first).
    ///
    /// ```
    /// use tessera_formats::IndexArray;
    /// let a = IndexArray::collect_with_bound([3u64, 1, 4].into_iter(), 10);
    /// assert_eq!(a, IndexArray::U32(vec![3, 1, 4]));
    /// ```
    pub fn collect_with_bound(values: impl Iterator<Item = u64>, bound: u64) -> Self {
        // Room for the values the iterator promises, on huge pages when
        // large (a packed tensor's coordinates).
        let n = values.size_hint().0;
        if bound <= u64::from(u32::MAX) {
            let mut array = with_capacity_on_huge_pages(n);
            array.extend(values.map(|v| v as u32));
            IndexArray::U32(array)
        } else {
            let mut array = with_capacity_on_huge_pages(n);
            array.extend(values);
            IndexArray::U64(array)
        }
    }

    /// Converts `usize` values the same way as [`from_u64`](Self::from_u64).
    pub fn from_usize(values: &[usize], bound: usize) -> Self {
        if bound <= u32::MAX as usize {
            IndexArray::U32(values.iter().map(|&v| v as u32).collect())
        } else {
            IndexArray::U64(values.iter().map(|&v| v as u64).collect())
        }
    }

    pub fn width(&self) -> IndexWidth {
        match self {
            IndexArray::U32(_) => IndexWidth::U32,
            IndexArray::U64(_) => IndexWidth::U64,
            IndexArray::I64(_) => IndexWidth::I64,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            IndexArray::U32(v) => v.len(),
            IndexArray::U64(v) => v.len(),
            IndexArray::I64(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i` as a signed 64-bit integer (unsigned arrays hold values
    /// below 2^63, which validation guarantees since they index memory).
    #[inline(always)]
    pub fn get(&self, i: usize) -> i64 {
        match self {
            IndexArray::U32(v) => v[i] as i64,
            IndexArray::U64(v) => v[i] as i64,
            IndexArray::I64(v) => v[i],
        }
    }

    /// The first position in `from..end` (clamped to the array) whose
    /// element is not `value`, or the end: the end of a run of equal
    /// elements, as a non-unique level's coordinates hold them.
    ///
    /// ```
    /// use tessera_formats::IndexArray;
    /// let rows = IndexArray::U32(vec![0, 0, 2, 2, 2, 5]);
    /// assert_eq!(rows.run_end(2, 6, 2), 5);
    /// assert_eq!(rows.run_end(2, 4, 2), 4);
    /// assert_eq!(rows.run_end(0, 6, 7), 0);
    /// ```
    pub fn run_end(&self, from: usize, end: usize, value: i64) -> usize {
        fn scan<T: Copy>(v: &[T], from: usize, end: usize, same: impl Fn(T) -> bool) -> usize {
            let end = end.min(v.len());
            let from = from.min(end);
            from + v[from..end].iter().take_while(|&&x| same(x)).count()
        }
        match self {
            IndexArray::U32(v) => scan(v, from, end, |x| i64::from(x) == value),
            IndexArray::U64(v) => scan(v, from, end, |x| x as i64 == value),
            IndexArray::I64(v) => scan(v, from, end, |x| x == value),
        }
    }

    /// The first position in `from..end` whose element is at least
    /// `value`, or `end`: where `value` goes among sorted elements (the
    /// first stored row from a row on, in a compressed level).
    ///
    /// ```
    /// use tessera_formats::IndexArray;
    /// let rows = IndexArray::U32(vec![1, 4, 4, 9]);
    /// assert_eq!(rows.first_at_least(0, 4, 4), 1);
    /// assert_eq!(rows.first_at_least(0, 4, 5), 3);
    /// assert_eq!(rows.first_at_least(0, 4, 10), 4);
    /// assert_eq!(rows.first_at_least(2, 4, 0), 2);
    /// ```
    pub fn first_at_least(&self, from: usize, end: usize, value: i64) -> usize {
        fn search<T: Copy>(v: &[T], from: usize, end: usize, below: impl Fn(T) -> bool) -> usize {
            let end = end.min(v.len());
            let from = from.min(end);
            from + v[from..end].partition_point(|&x| below(x))
        }
        match self {
            IndexArray::U32(v) => search(v, from, end, |x| i64::from(x) < value),
            IndexArray::U64(v) => search(v, from, end, |x| (x as i64) < value),
            IndexArray::I64(v) => search(v, from, end, |x| x < value),
        }
    }

    /// Element `i` as an unsigned index. Only meaningful for unsigned arrays
    /// or non-negative signed values.
    #[inline(always)]
    pub fn get_usize(&self, i: usize) -> usize {
        self.get(i) as usize
    }

    /// All elements as `u64`, for code that is not on a hot path (unsigned
    /// arrays, or signed ones known to be non-negative).
    ///
    /// ```
    /// use tessera_formats::IndexArray;
    /// assert_eq!(IndexArray::from_u64(vec![3, 1]).to_u64_vec(), vec![3, 1]);
    /// ```
    pub fn to_u64_vec(&self) -> Vec<u64> {
        match self {
            IndexArray::U32(v) => v.iter().map(|&x| u64::from(x)).collect(),
            IndexArray::U64(v) => v.clone(),
            IndexArray::I64(v) => v.iter().map(|&x| x as u64).collect(),
        }
    }

    /// All elements as `i64`, for code that is not on a hot path.
    pub fn to_i64_vec(&self) -> Vec<i64> {
        (0..self.len()).map(|i| self.get(i)).collect()
    }

    /// Bytes the array occupies.
    pub fn bytes(&self) -> usize {
        match self {
            IndexArray::U32(v) => v.len() * 4,
            IndexArray::U64(v) => v.len() * 8,
            IndexArray::I64(v) => v.len() * 8,
        }
    }

    /// Base pointer of the array, for compiled kernels that read it directly.
    pub fn as_ptr(&self) -> *const u8 {
        match self {
            IndexArray::U32(v) => v.as_ptr() as *const u8,
            IndexArray::U64(v) => v.as_ptr() as *const u8,
            IndexArray::I64(v) => v.as_ptr() as *const u8,
        }
    }
}

impl IndexArray {
    /// Shortens the array to `len` elements.
    pub fn truncate(&mut self, len: usize) {
        match self {
            IndexArray::U32(v) => v.truncate(len),
            IndexArray::U64(v) => v.truncate(len),
            IndexArray::I64(v) => v.truncate(len),
        }
    }

    /// The bytes the array's allocation holds (its capacity).
    pub fn capacity_bytes(&self) -> usize {
        match self {
            IndexArray::U32(v) => v.capacity() * 4,
            IndexArray::U64(v) => v.capacity() * 8,
            IndexArray::I64(v) => v.capacity() * 8,
        }
    }

    /// Moves the elements into `spare`'s allocation, which the array then
    /// holds, when both have one width (else nothing changes): storage of
    /// an earlier result filled again without fresh memory.
    ///
    /// ```
    /// use tessera_formats::IndexArray;
    ///
    /// let mut a = IndexArray::U32(vec![0, 2]);
    /// a.move_into(IndexArray::U32(Vec::with_capacity(100)));
    /// assert_eq!((a.len(), a.capacity_bytes()), (2, 400));
    /// ```
    pub fn move_into(&mut self, spare: IndexArray) {
        fn moved<T: Copy>(array: &[T], mut spare: Vec<T>) -> Vec<T> {
            spare.clear();
            spare.extend_from_slice(array);
            spare
        }
        *self = match (&*self, spare) {
            (IndexArray::U32(a), IndexArray::U32(s)) => IndexArray::U32(moved(a, s)),
            (IndexArray::U64(a), IndexArray::U64(s)) => IndexArray::U64(moved(a, s)),
            (IndexArray::I64(a), IndexArray::I64(s)) => IndexArray::I64(moved(a, s)),
            _ => return,
        };
    }

    /// Reserves room for `additional` more elements.
    pub fn reserve(&mut self, additional: usize) {
        match self {
            IndexArray::U32(v) => v.reserve(additional),
            IndexArray::U64(v) => v.reserve(additional),
            IndexArray::I64(v) => v.reserve(additional),
        }
    }

    /// Room for `additional` more elements, as [`Vec::reserve`], except
    /// that a move copies only the elements ([`reserve_moving_elements`]).
    /// True when the array moved, to memory not yet touched.
    pub fn reserve_moving_elements(&mut self, additional: usize) -> bool {
        match self {
            IndexArray::U32(v) => reserve_moving_elements(v, additional),
            IndexArray::U64(v) => reserve_moving_elements(v, additional),
            IndexArray::I64(v) => reserve_moving_elements(v, additional),
        }
    }

    /// Grows or shortens the array to `len` elements, new ones 0.
    pub fn resize(&mut self, len: usize) {
        match self {
            IndexArray::U32(v) => v.resize(len, 0),
            IndexArray::U64(v) => v.resize(len, 0),
            IndexArray::I64(v) => v.resize(len, 0),
        }
    }

    /// Stores `value` at `index`, widening a 32-bit array that cannot hold it.
    pub fn set(&mut self, index: usize, value: i64) {
        if let IndexArray::U32(v) = self {
            match u32::try_from(value) {
                Ok(narrow) => return v[index] = narrow,
                Err(_) => self.widen(),
            }
        }
        match self {
            IndexArray::U32(_) => unreachable!("widened above"),
            IndexArray::U64(v) => v[index] = value as u64,
            IndexArray::I64(v) => v[index] = value,
        }
    }

    /// Stores a 32-bit array in 64 bits, for values that will not fit.
    pub fn widen(&mut self) {
        if let IndexArray::U32(v) = self {
            *self = IndexArray::U64(v.iter().map(|&x| u64::from(x)).collect());
        }
    }

    /// Replaces each element in `range` by the sum of it and the one
    /// before it, in order: counts become offsets. The caller makes sure
    /// the sums fit (a 32-bit array is [widened](Self::widen) first).
    ///
    /// ```
    /// use tessera_formats::IndexArray;
    /// let mut pos = IndexArray::U32(vec![0, 2, 0, 3]);
    /// pos.prefix_sums(1..4);
    /// assert_eq!(pos.to_u64_vec(), [0, 2, 2, 5]);
    /// ```
    pub fn prefix_sums(&mut self, range: std::ops::Range<usize>) {
        fn sums<T: Copy + std::ops::Add<Output = T>>(v: &mut [T], range: std::ops::Range<usize>) {
            if range.is_empty() {
                return;
            }
            // The running sum kept in a register: each element waits on
            // an add, not on the store of the one before.
            let mut sum = v[range.start - 1];
            for x in &mut v[range] {
                sum = sum + *x;
                *x = sum;
            }
        }
        match self {
            IndexArray::U32(v) => sums(v, range),
            IndexArray::U64(v) => sums(v, range),
            IndexArray::I64(v) => sums(v, range),
        }
    }

    /// Whether each element is at least the one before it.
    pub fn is_non_decreasing(&self) -> bool {
        fn check<T: PartialOrd>(v: &[T]) -> bool {
            v.windows(2).fold(true, |ok, w| ok & (w[0] <= w[1]))
        }
        match self {
            IndexArray::U32(v) => check(v),
            IndexArray::U64(v) => check(v),
            IndexArray::I64(v) => check(v),
        }
    }

    /// Writes `run` at `at..`, growing the array as needed (its elements
    /// past the run are kept) and widening a 32-bit array once when a
    /// coordinate does not fit.
    pub fn write_run(&mut self, at: usize, run: CoordRun<'_>) {
        fn write<T: Copy + Default>(v: &mut Vec<T>, at: usize, values: impl ExactSizeIterator<Item = T>) {
            if v.len() == at {
                // Appending (the common case): no padding, no overwrite.
                v.extend(values);
                return;
            }
            let end = at + values.len();
            if v.len() < end {
                v.resize(end, T::default());
            }
            for (slot, x) in v[at..end].iter_mut().zip(values) {
                *slot = x;
            }
        }
        if let IndexArray::U32(v) = self {
            match run {
                CoordRun::Narrow(c) if v.len() == at => return v.extend_from_slice(c),
                CoordRun::Narrow(c) => return write(v, at, c.iter().copied()),
                CoordRun::Wide(c) if c.iter().all(|&x| x <= u64::from(u32::MAX)) => {
                    return write(v, at, c.iter().map(|&x| x as u32))
                }
                CoordRun::Wide(_) => self.widen(),
            }
        }
        match self {
            IndexArray::U32(_) => unreachable!("32-bit arrays were written or widened above"),
            IndexArray::U64(v) => write(v, at, (0..run.len()).map(|k| run.get(k))),
            IndexArray::I64(v) => write(v, at, (0..run.len()).map(|k| run.get(k) as i64)),
        }
    }
}

/// A run of coordinates handed to a level at once, 32 or 64 bits wide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoordRun<'a> {
    Narrow(&'a [u32]),
    Wide(&'a [u64]),
}

impl CoordRun<'_> {
    pub fn len(&self) -> usize {
        match self {
            CoordRun::Narrow(c) => c.len(),
            CoordRun::Wide(c) => c.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Coordinate `k`.
    pub fn get(&self, k: usize) -> u64 {
        match self {
            CoordRun::Narrow(c) => u64::from(c[k]),
            CoordRun::Wide(c) => c[k],
        }
    }
}
