//! Dropping many user values when any `Drop` may panic.
//!
//! Rust aborts the process when a destructor panics while another panic is unwinding, which is
//! exactly what dropping a `Vec` of values does if two of their `Drop`s panic. Containers of
//! user values that the world drops in bulk (chunk component values, queued commands) drop
//! them here instead: one at a time, each under `catch_unwind`, so every value is dropped
//! (the drop ledger balances) and the first panic is reported after the rest are gone.

use std::any::Any;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// A caught panic's payload.
pub type PanicPayload = Box<dyn Any + Send>;

/// Drops every item, each under `catch_unwind`, and returns the first panic's payload (later
/// payloads are dropped, and leaked if their own `Drop` panics).
///
/// ```
/// # use ecs_core::drop_each;
/// struct Loud;
/// impl Drop for Loud {
///     fn drop(&mut self) { panic!("loud"); }
/// }
/// let first = drop_each(vec![Loud, Loud, Loud]); // no abort: each drop is caught
/// assert_eq!(first.unwrap().downcast_ref::<&str>(), Some(&"loud"));
/// ```
pub fn drop_each<T>(items: impl IntoIterator<Item = T>) -> Option<PanicPayload> {
    let mut first = None;
    for item in items {
        keep_first_panic(
            &mut first,
            catch_unwind(AssertUnwindSafe(move || drop(item))),
        );
    }
    first
}

/// Records one step of a run that goes on past panics: `first` keeps the first panic, and a
/// later one's payload is dropped (leaked if its own `Drop` panics), so the run reports one.
pub(crate) fn keep_first_panic(first: &mut Option<PanicPayload>, step: Result<(), PanicPayload>) {
    if let Err(payload) = step {
        if first.is_none() {
            *first = Some(payload);
        } else {
            forget_payload(payload);
        }
    }
}

/// Continues the panic of `payload`, unless this thread is already unwinding: then a second
/// panic would abort, so the payload is dropped instead (the first panic carries on).
///
/// ```
/// # use ecs_core::{drop_each, resume_unless_unwinding};
/// resume_unless_unwinding(drop_each(vec![1, 2, 3])); // nothing panicked: returns
/// ```
pub fn resume_unless_unwinding(payload: Option<PanicPayload>) {
    let Some(payload) = payload else { return };
    if std::thread::panicking() {
        forget_payload(payload);
    } else {
        resume_unwind(payload);
    }
}

/// Drops a payload; one whose own `Drop` panics is leaked rather than allowed to escape.
fn forget_payload(payload: PanicPayload) {
    if let Err(nested) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(nested);
    }
}
