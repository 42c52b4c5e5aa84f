//! Where `par_for_each` finds its thread pool, natively and under Miri.
//!
//! Tests that run on rayon's pool have `par_` in their names, so CI can run them under Miri
//! with the flags rayon needs (Tree Borrows, leaks of crossbeam-epoch ignored; see
//! `crates/ecs-query/tests/support/mod.rs` and `.ci/run`).

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
