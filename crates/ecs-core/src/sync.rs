//! The atomics the core uses, in one place, so that `--cfg loom` can swap in loom's
//! model-checked versions for the entity-reservation model tests.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicI64, AtomicU64, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
