//! Helpers shared by the integration tests, and how to run them under Miri.
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

/// Runs `f` where `par_for_each` finds its thread pool.
///
/// Natively that is rayon's global pool. Under Miri it is a fresh two-thread pool whose threads
/// are joined before this returns: Miri fails a test binary whose main thread exits while other
/// threads still run, and the global pool's threads never exit. Two threads also keep Miri's
/// interleavings cheap while still running tasks concurrently.
pub fn in_pool<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    if cfg!(miri) {
        rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build_scoped(|thread| thread.run(), |pool| pool.install(f))
            .expect("a two-thread pool")
    } else {
        f()
    }
}
