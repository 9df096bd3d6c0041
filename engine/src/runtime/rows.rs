//! Two stored rows merged into one output row at once: the inner loop of
//! `A(i,j) + B(i,j)`, `A(i,j) - B(j,i)` and `A(i,j) * B(i,j)` over compact,
//! ordered, unique last levels, run by [`Op::MergeRows`] on every tier.
//!
//! The values are exactly those the loop of single entries computes: a
//! coordinate in both rows gets `a op b`; one in a single row of a sum or
//! difference gets that value combined with `0.0` (`a + 0.0`, `0.0 - b`,
//! as the loop does, so that signs of zeros agree); a product keeps only
//! the coordinates in both.
//!
//! [`Op::MergeRows`]: crate::bytecode::Op::MergeRows

use tessera_formats::IndexArray;

/// How two rows combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RowOp {
    /// `a + b` over the union of the rows.
    Add,
    /// `a - b` over the union of the rows.
    Sub,
    /// `a * b` over the intersection of the rows.
    Mul,
}

impl RowOp {
    /// The op's code in compiled kernels' calls.
    pub fn code(self) -> u64 {
        self as u64
    }

    /// The op of a code made by [`RowOp::code`].
    pub fn from_code(code: u64) -> Option<RowOp> {
        [RowOp::Add, RowOp::Sub, RowOp::Mul]
            .into_iter()
            .find(|op| op.code() == code)
    }
}

/// One row of a stored level: its coordinates and values, in order.
#[derive(Debug, Clone, Copy)]
pub enum Row<'a> {
    U32(&'a [u32], &'a [f64]),
    U64(&'a [u64], &'a [f64]),
    I64(&'a [i64], &'a [f64]),
}

impl<'a> Row<'a> {
    /// Positions `range` of a level's coordinate array and its values.
    pub fn of(coords: &'a IndexArray, values: &'a [f64], range: std::ops::Range<usize>) -> Row<'a> {
        let values = &values[range.clone()];
        match coords {
            IndexArray::U32(c) => Row::U32(&c[range], values),
            IndexArray::U64(c) => Row::U64(&c[range], values),
            IndexArray::I64(c) => Row::I64(&c[range], values),
        }
    }
}

/// Merges `a` and `b` with `op` into `coords` and `values` (cleared first).
pub fn merge(a: Row<'_>, b: Row<'_>, op: RowOp, coords: &mut Vec<u64>, values: &mut Vec<f64>) {
    coords.clear();
    values.clear();
    fn typed<A: Copy + Into<u64>, B: Copy + Into<u64>>(
        (ac, av): (&[A], &[f64]),
        (bc, bv): (&[B], &[f64]),
        op: RowOp,
        coords: &mut Vec<u64>,
        values: &mut Vec<f64>,
    ) {
        // The op is fixed for the row: one loop per op, each inlined.
        match op {
            RowOp::Add => union(ac, av, bc, bv, |a, b| a + b, coords, values),
            RowOp::Sub => union(ac, av, bc, bv, |a, b| a - b, coords, values),
            RowOp::Mul => intersection(ac, av, bc, bv, coords, values),
        }
    }
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn union<A: Copy + Into<u64>, B: Copy + Into<u64>>(
        ac: &[A],
        av: &[f64],
        bc: &[B],
        bv: &[f64],
        f: impl Fn(f64, f64) -> f64,
        coords: &mut Vec<u64>,
        values: &mut Vec<f64>,
    ) {
        assert!(
            ac.len() == av.len() && bc.len() == bv.len(),
            "a row has a value per coordinate"
        );
        let most = ac.len() + bc.len();
        coords.reserve(most);
        values.reserve(most);
        let (cs, vs) = (
            &mut coords.spare_capacity_mut()[..most],
            &mut values.spare_capacity_mut()[..most],
        );
        let (mut p, mut q, mut n) = (0, 0, 0);
        // SAFETY: p < ac.len() == av.len() and q < bc.len() == bv.len() by
        // the loop conditions (asserted above); n <= p + q < most, the
        // spare room's length. The merge runs at every stored entry of two
        // matrices: bounds checks there cost a third of its time.
        unsafe {
            while p < ac.len() && q < bc.len() {
                let (x, y) = ((*ac.get_unchecked(p)).into(), (*bc.get_unchecked(q)).into());
                let (c, v) = if x == y {
                    (x, f(*av.get_unchecked(p), *bv.get_unchecked(q)))
                } else if x < y {
                    (x, f(*av.get_unchecked(p), 0.0))
                } else {
                    (y, f(0.0, *bv.get_unchecked(q)))
                };
                cs.get_unchecked_mut(n).write(c);
                vs.get_unchecked_mut(n).write(v);
                n += 1;
                p += usize::from(x <= y);
                q += usize::from(y <= x);
            }
        }
        for (&c, &v) in ac[p..].iter().zip(&av[p..]) {
            cs[n].write(c.into());
            vs[n].write(f(v, 0.0));
            n += 1;
        }
        for (&c, &v) in bc[q..].iter().zip(&bv[q..]) {
            cs[n].write(c.into());
            vs[n].write(f(0.0, v));
            n += 1;
        }
        // SAFETY: the first `n` spare slots were written above (coords and
        // values were empty: cleared by `merge`).
        unsafe {
            coords.set_len(n);
            values.set_len(n);
        }
    }
    fn intersection<A: Copy + Into<u64>, B: Copy + Into<u64>>(
        ac: &[A],
        av: &[f64],
        bc: &[B],
        bv: &[f64],
        coords: &mut Vec<u64>,
        values: &mut Vec<f64>,
    ) {
        let (mut p, mut q) = (0, 0);
        while p < ac.len() && q < bc.len() {
            let (x, y) = (ac[p].into(), bc[q].into());
            if x == y {
                coords.push(x);
                values.push(av[p] * bv[q]);
            }
            p += usize::from(x <= y);
            q += usize::from(y <= x);
        }
    }
    // Signed coordinates are below 2^63 (validated), so they convert.
    let wide = |c: &[i64]| -> Vec<u64> { c.iter().map(|&x| x as u64).collect() };
    match (a, b) {
        (Row::U32(ac, av), Row::U32(bc, bv)) => typed((ac, av), (bc, bv), op, coords, values),
        (Row::U32(ac, av), Row::U64(bc, bv)) => typed((ac, av), (bc, bv), op, coords, values),
        (Row::U64(ac, av), Row::U32(bc, bv)) => typed((ac, av), (bc, bv), op, coords, values),
        (Row::U64(ac, av), Row::U64(bc, bv)) => typed((ac, av), (bc, bv), op, coords, values),
        (Row::I64(ac, av), other) => merge(Row::U64(&wide(ac), av), other, op, coords, values),
        (other, Row::I64(bc, bv)) => merge(other, Row::U64(&wide(bc), bv), op, coords, values),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_rows_hold_the_values_the_entry_loop_computes() {
        let a = (vec![1u32, 4, 6], vec![1.0, -0.0, 3.0]);
        let b = (vec![0u64, 4, 7], vec![2.0, 5.0, -0.0]);
        let (mut c, mut v) = (Vec::new(), Vec::new());
        let rows = || (Row::U32(&a.0, &a.1), Row::U64(&b.0, &b.1));
        merge(rows().0, rows().1, RowOp::Add, &mut c, &mut v);
        assert_eq!(c, vec![0, 1, 4, 6, 7]);
        assert_eq!(v, vec![2.0, 1.0, 5.0, 3.0, 0.0]);
        assert!(v[4].is_sign_positive(), "0.0 + -0.0 is 0.0");
        merge(rows().0, rows().1, RowOp::Sub, &mut c, &mut v);
        assert_eq!(v, vec![-2.0, 1.0, -5.0, 3.0, 0.0]);
        merge(rows().0, rows().1, RowOp::Mul, &mut c, &mut v);
        assert_eq!((c.as_slice(), v.as_slice()), ([4u64].as_slice(), [-0.0].as_slice()));
        assert!(v[0].is_sign_negative());
    }
}
