//! [`QueryCache`]: a world's store of per-query-type state, so that one-shot queries
//! (`world.query::<Q>()` in `ecs-query`) reuse their archetype matching between calls.
//!
//! The core knows nothing about queries: it keeps one type-erased value per type, keyed by the
//! value's [`TypeId`], and hands the cache out beside the archetype list so that an entry can
//! be brought up to date (archetypes are append-only) while the world is exclusively borrowed.
//! There is no interior mutability: entries change only through `&mut World`, and `&World`
//! only reads them.

use std::any::{Any, TypeId};

use crate::component::{RegistryId, TypeIdMap};
use crate::ids::WorldId;

/// Type-erased values keyed by their type, owned by one world.
///
/// # Invariants
/// 1. The entry under `TypeId::of::<S>()` is an `S`.
/// 2. Every entry was built for the world `world` and the registry `registry`: the cache
///    belongs to that world (built with it, never moved to another), and
///    [`World::query_cache_mut`](crate::World::query_cache_mut) empties it before handing
///    it out if the world's registry is no longer `registry` (it cannot be: the world's
///    registry is never replaced, see `World::components_mut`).
///
/// ```
/// # use ecs_core::World;
/// let mut world = World::new();
/// let (cache, _archetypes) = world.query_cache_mut();
/// cache.insert(7u32);
/// assert_eq!(world.query_cache().get::<u32>(), Some(&7));
/// assert_eq!(world.query_cache().get::<i32>(), None);
/// ```
pub struct QueryCache {
    world: WorldId,
    registry: RegistryId,
    entries: TypeIdMap<Box<dyn Any + Send + Sync>>,
}

impl QueryCache {
    /// An empty cache for `world`, whose registry is `registry`.
    pub(crate) fn new(world: WorldId, registry: RegistryId) -> Self {
        Self {
            world,
            registry,
            entries: TypeIdMap::default(),
        }
    }

    /// The world whose entries these are.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let world = World::new();
    /// assert_eq!(world.query_cache().world_id(), world.id());
    /// ```
    pub fn world_id(&self) -> WorldId {
        self.world
    }

    /// The registry whose component ids the entries hold.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let world = World::new();
    /// assert_eq!(world.query_cache().registry_id(), world.components().registry_id());
    /// ```
    pub fn registry_id(&self) -> RegistryId {
        self.registry
    }

    /// The entry of type `S`, if any.
    #[inline]
    pub fn get<S: Any>(&self) -> Option<&S> {
        // `downcast_ref` checks the type again; invariant 1 says it always passes.
        self.entries.get(&TypeId::of::<S>())?.downcast_ref()
    }

    /// The entry of type `S`, mutably, if any.
    #[inline]
    pub fn get_mut<S: Any>(&mut self) -> Option<&mut S> {
        self.entries.get_mut(&TypeId::of::<S>())?.downcast_mut()
    }

    /// Stores `value` as the entry of its type, replacing any previous one.
    pub fn insert<S: Any + Send + Sync>(&mut self, value: S) {
        self.entries.insert(TypeId::of::<S>(), Box::new(value));
    }

    /// Number of entries.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.query_cache_mut().0.insert('a');
    /// world.query_cache_mut().0.insert('b'); // same type: replaced
    /// assert_eq!(world.query_cache().len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the cache has no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Drops every entry.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let (cache, _) = world.query_cache_mut();
    /// cache.insert(1u8);
    /// cache.clear();
    /// assert!(world.query_cache().is_empty());
    /// ```
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Empties the cache unless its entries were built for `registry` (invariant 2).
    pub(crate) fn check_registry(&mut self, registry: RegistryId) {
        if self.registry != registry {
            self.entries.clear();
            self.registry = registry;
        }
    }
}

impl std::fmt::Debug for QueryCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueryCache")
            .field("world", &self.world)
            .field("entries", &self.entries.len())
            .finish()
    }
}
