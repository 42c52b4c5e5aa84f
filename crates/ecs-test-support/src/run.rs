//! Running one case of a model test: the steps, a full check after each, and the drop
//! ledger balanced once the world is gone.

use crate::ledger::{ledger, Ledger};

/// A world under test with its model, driven one operation at a time.
pub trait Steps {
    /// One operation.
    type Op;
    /// Applies `op` to the world and the model, checking every result it hands back.
    fn apply(&mut self, op: &Self::Op);
    /// Compares the world's whole observable state with the model.
    fn check(&mut self);
}

/// Runs one case: a fresh ledger, `make()`, a check, then each op followed by a check; then
/// the harness (and its world) is dropped and every `Tracked` value made must have been
/// dropped exactly once.
pub fn run_case<H: Steps>(make: impl FnOnce() -> H, ops: &[H::Op]) {
    ledger(|l| *l = Ledger::default());
    let mut h = make();
    h.check();
    for op in ops {
        h.apply(op);
        h.check();
    }
    drop(h);
    ledger(|l| l.assert_balanced());
}
