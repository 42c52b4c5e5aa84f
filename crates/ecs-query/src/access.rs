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
/// 2. `borrowed` ⊆ `reads`: the reads that hand out `&T` (a filter's read, such as
///    `Changed<T>` looking at `T`'s change ticks, hands out nothing and cannot alias a write).
/// 3. `reads_all`: an [`EntityRef`](ecs_core::EntityRef) element reads every component of its
///    rows. `add_read_all` refuses an access that writes, and `add_write` one that reads all,
///    so one query never has both (each write would alias); a system's union built with
///    [`Access::extend`] may.
/// 4. `writes_all`: an [`EntityMut`](crate::EntityMut) element may write every component of
///    its rows. One query that writes all touches nothing else (`add_write_all` refuses an
///    access that touches anything, and every `add_*` refuses an access that writes all),
///    except filter reads, which it covers as `writes` covers them.
///
/// ```
/// # use ecs_core::Components;
/// # use ecs_query::Access;
/// let mut components = Components::default();
/// let (a, b) = (components.register::<u32>(), components.register::<char>());
/// let mut access = Access::new();
/// access.add_write(a, &components).unwrap();
/// access.add_read(b, &components).unwrap();
/// assert!(access.writes().contains(a) && access.reads().contains(b));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Access {
    reads: Signature,
    writes: Signature,
    borrowed: Signature,
    reads_all: bool,
    writes_all: bool,
}

/// The name an [`AccessConflict`] gives when the clash is with a whole-entity element
/// ([`EntityRef`](ecs_core::EntityRef) or [`EntityMut`](crate::EntityMut)) rather than one type.
pub const EVERY_COMPONENT: &str = "every component (EntityRef / EntityMut)";

impl Access {
    /// No access.
    ///
    /// ```
    /// # use ecs_query::Access;
    /// let access = Access::new();
    /// assert!(access.reads().is_empty() && access.writes().is_empty());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a shared read of `id`.
    ///
    /// # Errors
    /// If `id` is already written: one query may not hand out `&T` and `&mut T` together.
    ///
    /// ```
    /// # use ecs_core::Components;
    /// # use ecs_query::Access;
    /// let mut components = Components::default();
    /// let id = components.register::<u32>();
    /// let mut access = Access::new();
    /// assert!(access.add_read(id, &components).is_ok());
    /// access.add_write(components.register::<u8>(), &components).unwrap();
    /// assert!(access.add_read(components.register::<u8>(), &components).is_err());
    /// ```
    pub fn add_read(
        &mut self,
        id: ComponentId,
        components: &Components,
    ) -> Result<(), AccessConflict> {
        if self.writes.contains(id) || self.writes_all {
            return Err(AccessConflict {
                component: components.info(id).name(),
            });
        }
        self.reads.insert(id);
        self.borrowed.insert(id);
        Ok(())
    }

    /// Records a read of `id` that hands out no reference (a filter reading `T`'s change
    /// ticks): a scheduler orders it against writers of `T` like any read, but it never
    /// conflicts with the query's own accesses. Already covered if `id` is written.
    ///
    /// ```
    /// # use ecs_core::Components;
    /// # use ecs_query::Access;
    /// let mut components = Components::default();
    /// let id = components.register::<u32>();
    /// let mut access = Access::new();
    /// access.add_filter_read(id);
    /// assert!(access.reads().contains(id));
    /// access.add_write(id, &components).unwrap(); // `(Changed<u32>, RefRW<u32>)` is fine
    /// assert!(access.writes().contains(id) && !access.reads().contains(id));
    /// ```
    pub fn add_filter_read(&mut self, id: ComponentId) {
        if !self.writes.contains(id) && !self.writes_all {
            self.reads.insert(id);
        }
    }

    /// Records an exclusive write of `id`.
    ///
    /// # Errors
    /// If `id` is already written, or read by an element that hands out `&T`.
    ///
    /// ```
    /// # use ecs_core::Components;
    /// # use ecs_query::Access;
    /// let mut components = Components::default();
    /// let id = components.register::<u32>();
    /// let mut access = Access::new();
    /// access.add_read(id, &components).unwrap();
    /// let err = access.add_write(id, &components).unwrap_err();
    /// assert_eq!(err.component, "u32");
    /// ```
    pub fn add_write(
        &mut self,
        id: ComponentId,
        components: &Components,
    ) -> Result<(), AccessConflict> {
        if self.writes.contains(id)
            || self.borrowed.contains(id)
            || self.reads_all
            || self.writes_all
        {
            return Err(AccessConflict {
                component: components.info(id).name(),
            });
        }
        self.reads.remove(id);
        self.writes.insert(id);
        Ok(())
    }

    /// Components read (and not written).
    ///
    /// ```
    /// # use ecs_core::Components;
    /// # use ecs_query::Access;
    /// let mut components = Components::default();
    /// let id = components.register::<u32>();
    /// let mut access = Access::new();
    /// access.add_read(id, &components).unwrap();
    /// assert!(access.reads().contains(id) && !access.writes().contains(id));
    /// ```
    pub fn reads(&self) -> &Signature {
        &self.reads
    }

    /// Records a shared read of every component (an [`EntityRef`](ecs_core::EntityRef)
    /// element): it conflicts with any write.
    ///
    /// # Errors
    /// If the access already writes a component (named in the error).
    ///
    /// ```
    /// # use ecs_core::Components;
    /// # use ecs_query::Access;
    /// let mut components = Components::default();
    /// let id = components.register::<u32>();
    /// let (mut all, mut w) = (Access::new(), Access::new());
    /// all.add_read_all(&components).unwrap();
    /// assert!(all.reads_all() && all.add_write(id, &components).is_err());
    /// w.add_write(id, &components).unwrap();
    /// assert!(!all.is_compatible(&w));
    /// assert_eq!(all.conflicts(&w).iter().collect::<Vec<_>>(), [id]);
    /// ```
    pub fn add_read_all(&mut self, components: &Components) -> Result<(), AccessConflict> {
        if let Some(id) = self.writes.iter().next() {
            return Err(AccessConflict {
                component: components.info(id).name(),
            });
        }
        if self.writes_all {
            return Err(AccessConflict {
                component: EVERY_COMPONENT,
            });
        }
        self.reads_all = true;
        Ok(())
    }

    /// Records an exclusive write of every component (an [`EntityMut`](crate::EntityMut)
    /// element): it conflicts with anything that touches a component.
    ///
    /// # Errors
    /// If the access already reads or writes a component (named in the error; a read of every
    /// component is named [`EVERY_COMPONENT`]). Filter reads (`Changed<T>`) are no conflict.
    ///
    /// ```
    /// # use ecs_core::Components;
    /// # use ecs_query::Access;
    /// let mut components = Components::default();
    /// let id = components.register::<u32>();
    /// let (mut all, mut r) = (Access::new(), Access::new());
    /// all.add_filter_read(id);
    /// all.add_write_all(&components).unwrap();
    /// assert!(all.writes_all() && all.add_read(id, &components).is_err());
    /// r.add_read(id, &components).unwrap();
    /// assert!(!all.is_compatible(&r) && all.is_compatible(&Access::new()));
    /// assert_eq!(all.conflicts(&r).iter().collect::<Vec<_>>(), [id]);
    /// ```
    pub fn add_write_all(&mut self, components: &Components) -> Result<(), AccessConflict> {
        if let Some(id) = self.borrowed.iter().chain(self.writes.iter()).next() {
            return Err(AccessConflict {
                component: components.info(id).name(),
            });
        }
        if self.reads_all || self.writes_all {
            return Err(AccessConflict {
                component: EVERY_COMPONENT,
            });
        }
        self.writes_all = true;
        Ok(())
    }

    /// Whether every component may be written ([`Access::add_write_all`]).
    ///
    /// ```
    /// # use ecs_query::Access;
    /// assert!(!Access::new().writes_all());
    /// ```
    pub fn writes_all(&self) -> bool {
        self.writes_all
    }

    /// Whether the access writes nothing: no component, and not every component.
    ///
    /// ```
    /// # use ecs_core::Components;
    /// # use ecs_query::Access;
    /// let components = Components::default();
    /// let mut access = Access::new();
    /// assert!(access.is_read_only());
    /// access.add_write_all(&components).unwrap();
    /// assert!(!access.is_read_only());
    /// ```
    pub fn is_read_only(&self) -> bool {
        !self.writes_all && self.writes.is_empty()
    }

    /// Whether the access touches any component at all.
    fn touches_any(&self) -> bool {
        self.reads_all || self.writes_all || !self.reads.is_empty() || !self.writes.is_empty()
    }

    /// Whether every component is read ([`Access::add_read_all`]).
    ///
    /// ```
    /// # use ecs_query::Access;
    /// assert!(!Access::new().reads_all());
    /// ```
    pub fn reads_all(&self) -> bool {
        self.reads_all
    }

    /// Components written.
    ///
    /// ```
    /// # use ecs_core::Components;
    /// # use ecs_query::Access;
    /// let mut components = Components::default();
    /// let id = components.register::<u32>();
    /// let mut access = Access::new();
    /// access.add_write(id, &components).unwrap();
    /// assert!(access.writes().contains(id) && !access.reads().contains(id));
    /// ```
    pub fn writes(&self) -> &Signature {
        &self.writes
    }

    /// Whether `self` and `other` may be used at the same time: neither writes what the
    /// other reads or writes.
    ///
    /// ```
    /// # use ecs_core::Components;
    /// # use ecs_query::Access;
    /// let mut components = Components::default();
    /// let id = components.register::<u32>();
    /// let (mut r1, mut r2, mut w) = (Access::new(), Access::new(), Access::new());
    /// r1.add_read(id, &components).unwrap();
    /// r2.add_read(id, &components).unwrap();
    /// w.add_write(id, &components).unwrap();
    /// assert!(r1.is_compatible(&r2) && !r1.is_compatible(&w));
    /// ```
    pub fn is_compatible(&self, other: &Self) -> bool {
        // Writing everything meets anything the other side touches.
        if (self.writes_all && other.touches_any()) || (other.writes_all && self.touches_any()) {
            return false;
        }
        self.writes.is_disjoint(&other.reads)
            && self.writes.is_disjoint(&other.writes)
            && other.writes.is_disjoint(&self.reads)
            // Reading everything meets any write.
            && (!self.reads_all || other.writes.is_empty())
            && (!other.reads_all || self.writes.is_empty())
    }

    /// The components on which `self` and `other` conflict (one writes, the other touches).
    /// Empty for a conflict between whole-entity elements alone (an `EntityMut` against an
    /// `EntityRef`), which names no type: callers report [`EVERY_COMPONENT`] then.
    ///
    /// ```
    /// # use ecs_core::Components;
    /// # use ecs_query::Access;
    /// let mut components = Components::default();
    /// let (a, b) = (components.register::<u32>(), components.register::<u8>());
    /// let (mut x, mut y) = (Access::new(), Access::new());
    /// x.add_write(a, &components).unwrap();
    /// x.add_read(b, &components).unwrap();
    /// y.add_read(a, &components).unwrap();
    /// y.add_read(b, &components).unwrap();
    /// assert_eq!(x.conflicts(&y).iter().collect::<Vec<_>>(), [a]);
    /// ```
    pub fn conflicts(&self, other: &Self) -> Signature {
        let mine = self.reads.union(&self.writes);
        let theirs = other.reads.union(&other.writes);
        let mut out = self
            .writes
            .intersection(&theirs)
            .union(&other.writes.intersection(&mine));
        // Reading everything conflicts with each of the other side's writes.
        if self.reads_all {
            out = out.union(&other.writes);
        }
        if other.reads_all {
            out = out.union(&self.writes);
        }
        // Writing everything conflicts with everything the other side touches.
        if self.writes_all {
            out = out.union(&theirs);
        }
        if other.writes_all {
            out = out.union(&mine);
        }
        out
    }

    /// Adds everything `other` touches; `other`'s writes win over reads.
    ///
    /// ```
    /// # use ecs_core::Components;
    /// # use ecs_query::Access;
    /// let mut components = Components::default();
    /// let id = components.register::<u32>();
    /// let (mut x, mut y) = (Access::new(), Access::new());
    /// x.add_read(id, &components).unwrap();
    /// y.add_write(id, &components).unwrap();
    /// x.extend(&y);
    /// assert!(x.writes().contains(id) && !x.reads().contains(id));
    /// ```
    pub fn extend(&mut self, other: &Self) {
        self.writes = self.writes.union(&other.writes);
        self.reads = self.reads.union(&other.reads);
        self.borrowed = self.borrowed.union(&other.borrowed);
        self.reads_all |= other.reads_all;
        self.writes_all |= other.writes_all;
        for id in self.writes.iter() {
            self.reads.remove(id);
            self.borrowed.remove(id);
        }
    }
}

/// A query that would alias a component: `&mut T` together with another access to `T`.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{QueryState, RefRO, RefRW, WorldQuery};
/// let mut world = World::new();
/// let state = (world.register_component::<u32>(), world.register_component::<u32>());
/// type Aliased = (RefRW<u32>, RefRO<u32>);
/// let err = QueryState::<Aliased>::compute_access(&state, &(), world.components());
/// assert_eq!(err.unwrap_err().component, "u32");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccessConflict {
    /// The component's type name.
    pub component: &'static str,
}

impl AccessConflict {
    /// Panics with a message naming the query and the component.
    ///
    /// ```
    /// # use ecs_query::AccessConflict;
    /// let conflict = AccessConflict { component: "u32" };
    /// let caught = std::panic::catch_unwind(|| conflict.panic("MyQuery"));
    /// assert!(caught.is_err());
    /// ```
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
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{QueryState, RefRW, With};
/// let mut world = World::new();
/// let state = QueryState::<RefRW<u32>, With<char>>::new(&mut world);
/// let char_id = world.component_id::<char>().unwrap();
/// assert!(state.access().required.contains(char_id));
/// ```
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
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRW, With, Without};
    /// let mut world = World::new();
    /// let a = QueryState::<RefRW<u32>, With<char>>::new(&mut world);
    /// let b = QueryState::<RefRW<u32>, Without<char>>::new(&mut world);
    /// assert!(a.access().is_disjoint_from(b.access()));
    /// ```
    pub fn is_disjoint_from(&self, other: &Self) -> bool {
        !self.required.is_disjoint(&other.excluded) || !other.required.is_disjoint(&self.excluded)
    }

    /// Whether both queries may run at once.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRO, RefRW, With, Without};
    /// let mut world = World::new();
    /// let a = QueryState::<RefRW<u32>, With<char>>::new(&mut world);
    /// let b = QueryState::<RefRW<u32>, Without<char>>::new(&mut world);
    /// let c = QueryState::<RefRO<u32>>::new(&mut world);
    /// assert!(a.access().is_compatible(b.access()));
    /// assert!(!a.access().is_compatible(c.access()));
    /// ```
    pub fn is_compatible(&self, other: &Self) -> bool {
        self.access.is_compatible(&other.access) || self.is_disjoint_from(other)
    }
}
