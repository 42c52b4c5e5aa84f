//! Access sets: which components a query reads and which it writes.
//!
//! A query's access set is computed from its types when its state is built. The same sets let
//! the scheduler decide which systems may run at once: two accesses are compatible iff neither
//! writes what the other touches.

use ecs_core::{ComponentId, Components, Signature};

/// The components one query (or system) reads and writes.
///
/// # Invariants
/// 1. `reads` and `writes` are disjoint: an id written is recorded in `writes` only.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Access {
    reads: Signature,
    writes: Signature,
}

impl Access {
    /// No access.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a shared read of `id`.
    ///
    /// # Errors
    /// If `id` is already written: one query may not hand out `&T` and `&mut T` together.
    pub fn add_read(
        &mut self,
        id: ComponentId,
        components: &Components,
    ) -> Result<(), AccessConflict> {
        if self.writes.contains(id) {
            return Err(AccessConflict {
                component: components.info(id).name(),
            });
        }
        self.reads.insert(id);
        Ok(())
    }

    /// Records an exclusive write of `id`.
    ///
    /// # Errors
    /// If `id` is already read or written.
    pub fn add_write(
        &mut self,
        id: ComponentId,
        components: &Components,
    ) -> Result<(), AccessConflict> {
        if self.writes.contains(id) || self.reads.contains(id) {
            return Err(AccessConflict {
                component: components.info(id).name(),
            });
        }
        self.writes.insert(id);
        Ok(())
    }

    /// Components read (and not written).
    pub fn reads(&self) -> &Signature {
        &self.reads
    }

    /// Components written.
    pub fn writes(&self) -> &Signature {
        &self.writes
    }

    /// Whether `self` and `other` may be used at the same time: neither writes what the
    /// other reads or writes.
    pub fn is_compatible(&self, other: &Self) -> bool {
        self.writes.is_disjoint(&other.reads)
            && self.writes.is_disjoint(&other.writes)
            && other.writes.is_disjoint(&self.reads)
    }

    /// The components on which `self` and `other` conflict (one writes, the other touches).
    pub fn conflicts(&self, other: &Self) -> Signature {
        let mine = self.reads.union(&self.writes);
        let theirs = other.reads.union(&other.writes);
        self.writes
            .intersection(&theirs)
            .union(&other.writes.intersection(&mine))
    }

    /// Adds everything `other` touches; `other`'s writes win over reads.
    pub fn extend(&mut self, other: &Self) {
        self.writes = self.writes.union(&other.writes);
        self.reads = self.reads.union(&other.reads);
        for id in self.writes.iter() {
            self.reads.remove(id);
        }
    }
}

/// A query that would alias a component: `&mut T` together with another access to `T`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccessConflict {
    /// The component's type name.
    pub component: &'static str,
}

impl AccessConflict {
    /// Panics with a message naming the query and the component.
    #[cold]
    #[track_caller]
    pub fn panic(self, query: &str) -> ! {
        let c = self.component;
        panic!(
            "query `{query}` accesses `{c}` mutably together with another access to `{c}`: \
             that would alias a `&mut {c}`"
        )
    }
}

/// An [`Access`] plus the archetype masks of the query that made it, so that two queries
/// whose filters make them disjoint (`With<A>` versus `Without<A>`) are not in conflict.
#[derive(Clone, Debug, Default)]
pub struct FilteredAccess {
    /// What the query reads and writes.
    pub access: Access,
    /// Components every matched archetype has.
    pub required: Signature,
    /// Components no matched archetype has.
    pub excluded: Signature,
}

impl FilteredAccess {
    /// Whether no archetype can match both queries.
    pub fn is_disjoint_from(&self, other: &Self) -> bool {
        !self.required.is_disjoint(&other.excluded) || !other.required.is_disjoint(&self.excluded)
    }

    /// Whether both queries may run at once.
    pub fn is_compatible(&self, other: &Self) -> bool {
        self.access.is_compatible(&other.access) || self.is_disjoint_from(other)
    }
}
