//! Orders of entries: which permutation puts a list of entries in the
//! order a format stores them, in linear time where the keys allow.

/// The indices `0..keys.len()` in increasing order of their keys, equal
/// keys in index order: a radix sort of (key, index) pairs.
pub(crate) fn order_by_key(keys: impl ExactSizeIterator<Item = u64>) -> Vec<usize> {
    let mut keyed: Vec<(u64, usize)> = keys.enumerate().map(|(e, k)| (k, e)).collect();
    radsort::sort_by_key(&mut keyed, |&(k, _)| k);
    keyed.into_iter().map(|(_, e)| e).collect()
}

/// The indices `0..column.len()` in increasing order of `column`, whose
/// values are below `extent`, equal values in index order: a counting
/// sort, one pass to count and one to place.
pub(crate) fn order_by_column(column: &[u64], extent: usize) -> Vec<usize> {
    let mut starts = bucket_starts(column.iter().map(|&c| c as usize), extent);
    let mut order = vec![0usize; column.len()];
    for (e, &c) in column.iter().enumerate() {
        let slot = &mut starts[c as usize];
        order[*slot] = e;
        *slot += 1;
    }
    order
}

/// Where each of `buckets` buckets starts once the keys are counted into
/// them (`starts[b]..starts[b + 1]` holds bucket `b`): the first pass of a
/// counting sort, and a compressed level's positions.
pub(crate) fn bucket_starts(keys: impl Iterator<Item = usize>, buckets: usize) -> Vec<usize> {
    let mut starts = vec![0usize; buckets + 1];
    for k in keys {
        starts[k + 1] += 1;
    }
    for b in 1..starts.len() {
        starts[b] += starts[b - 1];
    }
    starts
}

/// How many distinct values `column` holds, its values below `extent`: a
/// table of `extent` flags when that is about the column's size, a hash
/// set otherwise (an absurd extent allocates nothing).
pub(crate) fn distinct_count(column: &[u64], extent: usize) -> usize {
    if extent <= 2 * column.len() + 4096 {
        let mut seen = vec![false; extent];
        column
            .iter()
            .filter(|&&c| !std::mem::replace(&mut seen[c as usize], true))
            .count()
    } else {
        column.iter().collect::<hashbrown::HashSet<_>>().len()
    }
}

/// Whether the entries, one column per key part, are in lexicographic
/// order of `columns`.
pub(crate) fn in_order(columns: &[&[u64]], n: usize) -> bool {
    in_order_by(columns, n, |e| e)
}

/// Whether entries `entry(0), entry(1), ...` are in lexicographic order
/// of `columns`.
pub(crate) fn in_order_by(columns: &[&[u64]], n: usize, entry: impl Fn(usize) -> usize) -> bool {
    (1..n).all(|k| {
        let (a, b) = (entry(k - 1), entry(k));
        for col in columns {
            if col[a] != col[b] {
                return col[a] < col[b];
            }
        }
        true
    })
}

/// For entries in order of `first`: each run of equal `first` values
/// stably sorted by `second` (block rows into blocks).
pub(crate) fn order_within_runs(first: &[u64], second: &[u64]) -> Vec<usize> {
    let n = first.len();
    let mut order: Vec<usize> = (0..n).collect();
    let mut start = 0;
    while start < n {
        let end = start + first[start..].iter().take_while(|&&c| c == first[start]).count();
        order[start..end].sort_by_key(|&e| second[e]);
        start = end;
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_are_stable_and_sorted() {
        let keys = [5u64, 1, 5, 0, 1 << 40, 1, 0];
        let order = order_by_key(keys.iter().copied());
        assert_eq!(order, vec![3, 6, 1, 5, 0, 2, 4]);
        let column = [2u64, 0, 2, 1, 0];
        assert_eq!(order_by_column(&column, 3), vec![1, 4, 3, 0, 2]);
        assert!(in_order(&[&[0, 0, 1], &[1, 2, 0]], 3));
        assert!(!in_order(&[&[0, 0, 1], &[2, 1, 0]], 3));
        assert_eq!(
            order_within_runs(&[0, 0, 0, 1, 1], &[2, 1, 2, 1, 0]),
            vec![1, 0, 2, 4, 3]
        );
        assert!(order_by_key(std::iter::empty()).is_empty());
        assert!(order_by_column(&[], 0).is_empty());
    }
}
