//! [`panic_message`]: run a closure that must panic and get its message, for tests that check
//! a panic names the right type or entity.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `f`, which must panic, and returns its message (`""` for a payload that is neither a
/// `String` nor a `&str`).
///
/// # Panics
/// If `f` returns normally.
pub fn panic_message(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("expected a panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}
