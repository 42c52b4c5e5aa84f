//! The ids every layer names: an archetype's index and a world's identity, and the per-type
//! row-tick setting the registry keeps. They sit at the bottom of the crate (beside `entity`
//! and `error`), so the entity table, the errors, the registry and the query cache can name
//! them without importing the archetype, chunk or world modules that use them.

use std::sync::atomic::{AtomicU64, Ordering};

/// Index of an archetype in its world. Ids are stable: archetypes are never removed.
///
/// ```
/// # use ecs_core::{ArchetypeId, World};
/// let mut world = World::new();
/// let e = world.spawn(());
/// assert_eq!(world.location(e).unwrap().archetype, ArchetypeId::EMPTY);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct ArchetypeId(u32);

impl ArchetypeId {
    /// The archetype of entities with no components.
    ///
    /// ```
    /// # use ecs_core::{ArchetypeId, World};
    /// let world = World::new();
    /// assert!(world.archetypes()[ArchetypeId::EMPTY.index()].signature().is_empty());
    /// ```
    pub const EMPTY: Self = Self(0);
    /// Marks "no archetype" in vacant entity slots.
    pub(crate) const INVALID: Self = Self(u32::MAX);

    pub(crate) fn new(index: usize) -> Self {
        assert!(index < u32::MAX as usize, "too many archetypes");
        Self(index as u32)
    }

    /// Position in [`World::archetypes`](crate::World::archetypes).
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let id = world.location(e).unwrap().archetype;
    /// assert_eq!(world.archetypes()[id.index()].id(), id);
    /// ```
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// Identifies one world, so that cached query state can refuse another world.
///
/// ```
/// # use ecs_core::World;
/// let world = World::new();
/// assert_eq!(world.id(), world.id());
/// assert_ne!(world.id(), World::new().id());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct WorldId(u64);

impl WorldId {
    /// A fresh id, unique in the process.
    pub(crate) fn next() -> Self {
        // A plain std atomic even under loom: ids only need to be unique, not modelled.
        static NEXT_ID: AtomicU64 = AtomicU64::new(0);
        Self(NEXT_ID.fetch_add(1, Ordering::Relaxed))
    }
}

/// Which per-row ticks a component type keeps: none, change ticks, add ticks, or both.
///
/// ```
/// # use ecs_core::RowTicks;
/// let both = RowTicks::CHANGED.union(RowTicks::ADDED);
/// assert!(both.changed() && both.added());
/// assert!(!RowTicks::NONE.changed());
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct RowTicks(u8);

impl RowTicks {
    /// No per-row ticks.
    pub const NONE: Self = Self(0);
    /// Per-row change ticks, for `Changed<T>`.
    pub const CHANGED: Self = Self(1);
    /// Per-row add ticks, for `Added<T>`.
    pub const ADDED: Self = Self(2);

    /// Both sets of marks.
    #[inline]
    pub const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Whether change ticks are kept.
    #[inline]
    pub const fn changed(self) -> bool {
        self.0 & 1 != 0
    }

    /// Whether add ticks are kept.
    #[inline]
    pub const fn added(self) -> bool {
        self.0 & 2 != 0
    }

    /// Whether `self` keeps every mark `other` keeps.
    #[inline]
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
}

/// A world's current change tick, see [`World::change_tick`](crate::World::change_tick).
///
/// ```
/// # use ecs_core::{Tick, World};
/// let world = World::new();
/// let tick: Tick = world.change_tick();
/// assert!(tick >= 1);
/// ```
pub type Tick = u64;
