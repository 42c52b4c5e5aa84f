//! The drop ledger: which [`Tracked`](crate::Tracked) values exist on this test thread.
//!
//! Invariant: every `Tracked` value made is in `live` until its one drop, which moves its id
//! to `dropped`. A drop of a value not live (a double drop, or a bitwise copy dropped) is
//! recorded in `anomalies` rather than panicking inside `Drop`. The world under test runs on
//! the test's thread (single-threaded schedules included), so a thread-local ledger sees all.

use std::cell::RefCell;
use std::collections::BTreeSet;

/// Which `Tracked` values exist, per test thread.
#[derive(Default, Debug)]
pub struct Ledger {
    next_id: u64,
    /// How many values were made.
    pub created: u64,
    /// Ids of the values made and not yet dropped.
    pub live: BTreeSet<u64>,
    /// Ids of the values dropped.
    pub dropped: BTreeSet<u64>,
    /// Double drops and drops of values never created.
    pub anomalies: Vec<String>,
}

impl Ledger {
    /// Records a new value; returns its id.
    pub(crate) fn record_create(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.created += 1;
        self.live.insert(id);
        id
    }

    /// Records the drop of value `id`.
    pub(crate) fn record_drop(&mut self, id: u64) {
        if !self.live.remove(&id) {
            self.anomalies
                .push(format!("tracked value {id} dropped but not live"));
        }
        if !self.dropped.insert(id) {
            self.anomalies
                .push(format!("tracked value {id} dropped twice"));
        }
    }

    /// Asserts no anomaly and exactly `count` live values (what the model holds).
    pub fn assert_live(&self, count: usize) {
        assert_eq!(self.anomalies, Vec::<String>::new());
        assert_eq!(self.live.len(), count, "live tracked values vs the model");
    }

    /// Asserts that every value made was dropped exactly once.
    pub fn assert_balanced(&self) {
        assert_eq!(self.anomalies, Vec::<String>::new());
        assert!(
            self.live.is_empty(),
            "leaked tracked values: {:?}",
            self.live
        );
        assert_eq!(
            self.created,
            self.dropped.len() as u64,
            "created vs dropped"
        );
    }
}

thread_local! {
    static LEDGER: RefCell<Ledger> = RefCell::new(Ledger::default());
}

/// Runs `f` on this thread's ledger.
pub fn ledger<R>(f: impl FnOnce(&mut Ledger) -> R) -> R {
    LEDGER.with_borrow_mut(f)
}
