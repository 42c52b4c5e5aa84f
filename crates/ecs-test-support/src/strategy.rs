//! Proptest strategies the model tests share, and their case-count config.

use std::ops::RangeInclusive;

use proptest::prelude::*;
use proptest::sample::subsequence;
use proptest::test_runner::Config;

use crate::model::Pick;

/// Picks of live and of pooled handles, weighted `live : stale` (pooled).
pub fn pick(live: u32, stale: u32) -> impl Strategy<Value = Pick> + Clone {
    prop_oneof![
        live => any::<usize>().prop_map(Pick::Live),
        stale => any::<usize>().prop_map(Pick::Any),
    ]
}

/// Picks of live, pooled and forged handles, weighted `live : stale : forged`.
pub fn pick_or_forge(live: u32, stale: u32, forged: u32) -> impl Strategy<Value = Pick> + Clone {
    prop_oneof![
        live => any::<usize>().prop_map(Pick::Live),
        stale => any::<usize>().prop_map(Pick::Any),
        forged => any::<usize>().prop_map(Pick::Forged),
    ]
}

/// Distinct kinds from `avail`, `len` of them, in random order.
pub fn kind_set(avail: &[usize], len: RangeInclusive<usize>) -> impl Strategy<Value = Vec<usize>> {
    subsequence(avail.to_vec(), len).prop_shuffle()
}

/// `cases` cases natively, `miri_cases` under Miri, where the regression file is off too
/// (Miri's isolation forbids it). `PROPTEST_CASES` still overrides the count: the
/// `proptest!` macro passes the config through `contextualize_config`.
pub fn config(cases: u32, miri_cases: u32) -> Config {
    let default = Config::default();
    Config {
        cases: if cfg!(miri) { miri_cases } else { cases },
        failure_persistence: if cfg!(miri) {
            None
        } else {
            default.failure_persistence.clone()
        },
        ..default
    }
}
