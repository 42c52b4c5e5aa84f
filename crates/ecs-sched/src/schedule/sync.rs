//! The executor's synchronisation primitives, in one place: std's normally, loom's under
//! `--cfg loom` so that the model tests in `tests/loom.rs` explore every interleaving of the
//! dependency counters.

#[cfg(loom)]
pub use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
#[cfg(loom)]
pub use loom::sync::Mutex;

#[cfg(not(loom))]
pub use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
#[cfg(not(loom))]
pub use std::sync::Mutex;
