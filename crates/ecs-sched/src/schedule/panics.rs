//! Handling caught panics without starting new ones.
//!
//! A panic payload is a user value: `panic_any(x)` can throw anything, including a value whose
//! own `Drop` panics. Dropping such a payload outside `catch_unwind` starts a second panic (and
//! during an unwind, aborts the process). So every payload the scheduler catches and does not
//! pass on is dropped here, inside `catch_unwind`, and a payload whose drop panics again is
//! leaked rather than allowed to escape.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A caught panic's payload.
pub(crate) type Payload = Box<dyn Any + Send>;

/// Drops a caught payload; if its `Drop` panics, that panic's payload is leaked instead of
/// being dropped too (it could panic again, without end).
pub(crate) fn drop_payload(payload: Payload) {
    if let Err(nested) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(nested);
    }
}

/// Keeps the first of several payloads, dropping the others safely.
pub(crate) fn keep_first(slot: &mut Option<Payload>, payload: Payload) {
    if slot.is_none() {
        *slot = Some(payload);
    } else {
        drop_payload(payload);
    }
}

/// A payload's message, for reports: the `&str` or `String` it holds, or a placeholder.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".to_owned())
}
