//! How to run the integration tests under Miri, and the helper the `par_` tests use.
//!
//! Tests that run on rayon's pool have `par_` in their names. rayon's work-stealing deques use
//! crossbeam-epoch, which Miri flags in two ways that are not about this crate's code (the same
//! reasons crossbeam's own Miri CI uses Tree Borrows and `-Zmiri-ignore-leaks` for its epoch
//! crate):
//! - under Stacked Borrows, a retag in crossbeam-epoch's intrusive list (`IsElement::element_of`)
//!   is reported as undefined behaviour (crossbeam-rs/crossbeam#545); Tree Borrows accepts it;
//! - the epoch collector keeps the records of exited threads and deferred garbage behind tagged
//!   integer pointers, which Miri's leak check reports at exit (crossbeam-rs/crossbeam#579).
//!
//! So the `par_` tests run under Tree Borrows with leaks ignored, and everything else under both
//! models with the leak check on:
//!
//! ```text
//! cargo +nightly miri test -p ecs-query -- --skip par_
//! MIRIFLAGS=-Zmiri-tree-borrows cargo +nightly miri test -p ecs-query -- --skip par_
//! MIRIFLAGS="-Zmiri-tree-borrows -Zmiri-ignore-leaks" cargo +nightly miri test -p ecs-query par_
//! ```

// `in_pool`, where `par_for_each` finds a thread pool Miri accepts, lives in ecs-test-support
// with the other shared test helpers; the tests reach it through this module.
pub use ecs_test_support::in_pool;
