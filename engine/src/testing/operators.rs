//! User-defined operators for random statements: staged ones (written out
//! into the statement, compiled inline) and callbacks with an explicit
//! iteration algebra (called per entry), each exact on exact arguments and
//! finite on finite ones, as the functions random statements call are.

use std::sync::OnceLock;

use crate::notation::{register_operator, Func, Operator, Region};

/// The operators, registered once per process under names starting with
/// `rand_`.
///
/// ```
/// use tessera_engine::testing::random_operators;
/// let ops = random_operators();
/// assert!(ops.iter().any(|f| f.name() == "rand_absdiff"));
/// assert_eq!(ops, random_operators());
/// ```
pub fn random_operators() -> &'static [Func] {
    static REGISTERED: OnceLock<Vec<Func>> = OnceLock::new();
    REGISTERED.get_or_init(|| {
        let staged = [
            "rand_absdiff(x, y) = abs(x - y)",
            // Where x is and y is not, by value: a difference of sets.
            "rand_masked(x, y) = x * (y == 0)",
            "rand_clip(x) = min(max(x, -1), 1)",
        ]
        .map(|text| Operator::define(text).expect("the definitions parse"));
        let (x, y) = (Region::arg(0), Region::arg(1));
        let callbacks = [
            Operator::binary("rand_meet_add", |a, b| a + b).iterating(x.clone() & y.clone()),
            Operator::binary("rand_minus", |a, _| a).iterating(x & !y),
        ];
        staged
            .into_iter()
            .chain(callbacks)
            .map(|op| register_operator(op).expect("the names are free"))
            .collect()
    })
}
