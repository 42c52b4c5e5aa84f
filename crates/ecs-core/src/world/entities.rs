//! Entity lifecycle: the `World` methods that create entities ([`World::spawn`], ids reserved
//! through [`World::reserve_entity`] and its lanes, made live by [`World::flush`]), remove them
//! ([`World::despawn`], [`World::clear`]) and say whether and where one lives
//! ([`World::contains`], [`World::location`], [`World::len`]).
//!
//! Invariants kept: every `&mut self` method here flushes pending reservations before it
//! changes anything (`World` invariant 1), and the entity table and archetypes agree on every
//! live entity's row when a method returns (invariant 2). User `Drop` code runs only once they
//! agree, so a panicking `Drop` leaves the world consistent (`clear` empties every archetype
//! even then).

use crate::archetype::rows::RowAddr;
use crate::archetype::Archetype;
use crate::component::bundle::Bundle;
use crate::entity::{Entity, Location};
use crate::error::EntityError;
use crate::ids::ArchetypeId;
use crate::world::World;

impl World {
    /// Creates an entity with the components of `bundle`.
    ///
    /// Cost: one `TypeId` lookup for the bundle's archetype, then one store per component.
    ///
    /// # Panics
    /// If the bundle names a type twice, or its row does not fit in one chunk (the message
    /// names each type and its size).
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32, "name"));
    /// assert_eq!(world.get::<u32>(e), Ok(&1));
    /// ```
    pub fn spawn<B: Bundle>(&mut self, bundle: B) -> Entity {
        self.flush();
        let tick = self.change_tick();
        let entity = self
            .archetypes
            .spawn(&mut self.components, &mut self.entities, bundle, tick);
        if self.components.may_hook::<B>() {
            self.spawned_with_hooks::<B>(entity);
        }
        entity
    }

    /// Reserves an entity id through a shared reference, e.g. from a command buffer in a
    /// parallel system. It becomes a live entity with no components at the next structural
    /// change (any `&mut self` method that adds, moves or removes entities).
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.reserve_entity();
    /// world.flush();
    /// assert!(world.contains(e));
    /// ```
    pub fn reserve_entity(&self) -> Entity {
        self.entities.reserve()
    }

    /// Opens `lanes` id lanes, for systems about to run side by side: the `k`-th id reserved
    /// with [`World::reserve_entity_in_lane`]`(l)` is position `k·lanes + l` of the free list
    /// (from the slot a spawn would take first), then of the indices past the table. So it
    /// depends on the world's state, the lane and `k`, never on thread timing. Flushes pending
    /// reservations first; the next flush (any structural change) closes the lanes, and free
    /// slots no lane reached stay free. The schedule opens a lane per `Commands` parameter
    /// before each parallel segment.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.open_id_lanes(2);
    /// let late = world.reserve_entity_in_lane(1); // reserved first, still lane 1's first id
    /// let early = world.reserve_entity_in_lane(0);
    /// assert!(early.index() < late.index());
    /// world.flush();
    /// assert!(world.contains(early) && world.contains(late));
    /// ```
    pub fn open_id_lanes(&mut self, lanes: u32) {
        self.flush();
        self.entities.open_lanes(lanes);
    }

    /// Reserves an entity id in lane `lane` of [`World::open_id_lanes`] (or, with no such
    /// lane open, as [`World::reserve_entity`] does). It becomes a live, empty entity at the
    /// next structural change.
    #[inline]
    pub fn reserve_entity_in_lane(&self, lane: u32) -> Entity {
        self.entities.reserve_in_lane(lane)
    }

    /// Turns every reserved id into a live, empty entity.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.reserve_entity();
    /// assert!(!world.contains(e));
    /// world.flush();
    /// assert!(world.contains(e));
    /// ```
    #[inline]
    pub fn flush(&mut self) {
        if self.entities.needs_flush() {
            self.flush_reserved();
        }
    }

    #[cold]
    fn flush_reserved(&mut self) {
        let tick = self.change_tick();
        let empty = &mut self.archetypes.as_mut_slice()[ArchetypeId::EMPTY.index()];
        // User code (chunk values of new chunks) runs before any reserved id goes live, so the
        // pushes below cannot panic halfway through the entity table's flush.
        empty.prepare_rows(self.entities.pending());
        self.entities.flush(|entity| {
            let row = empty.push_row(entity, tick).row();
            Location {
                archetype: ArchetypeId::EMPTY,
                row: row as u32,
            }
        });
    }

    /// Removes an entity and drops its components.
    ///
    /// Cost: the archetype's last row moves into the hole (one copy per column, plus its row
    /// ticks and enable bits where the archetype keeps them), then one `Drop` per component
    /// that has one.
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`] for a stale or unknown handle; nothing changes then.
    ///
    /// ```
    /// # use ecs_core::{World, EntityError};
    /// let mut world = World::new();
    /// let e = world.spawn((String::from("x"),));
    /// world.despawn(e).unwrap();
    /// assert_eq!(world.despawn(e), Err(EntityError::NoSuchEntity(e)));
    /// ```
    pub fn despawn(&mut self, entity: Entity) -> Result<(), EntityError> {
        self.flush();
        if self.components.any_hooks() {
            return self.despawn_planned(entity);
        }
        self.despawn_plain(entity)
    }

    /// [`World::despawn_plain`] of an entity located already (`loc` from
    /// [`World::location`], nothing changed since).
    #[inline]
    pub(crate) fn despawn_located(&mut self, entity: Entity, loc: Location) {
        let tick = self.change_tick();
        self.archetypes
            .despawn_located(&mut self.entities, entity, loc, tick);
    }

    /// Whether some column of `arch` holds values with drop glue.
    pub(crate) fn drops_values(&self, arch: &Archetype) -> bool {
        arch.signature()
            .iter()
            .any(|id| self.components.info(id).drop_fn().is_some())
    }

    /// Despawns every entity of `archetype`, hooks aside (a subtree despawn that takes all of
    /// them): ids are freed from the last row to the first, as despawning each from the last
    /// row down would free them, then the rows go at once.
    pub(crate) fn despawn_whole_archetype(&mut self, archetype: ArchetypeId) {
        let arch = &mut self.archetypes.as_mut_slice()[archetype.index()];
        for chunk in arch.chunks().iter().rev() {
            for &entity in chunk.entities().iter().rev() {
                self.entities.free(entity);
            }
        }
        arch.clear();
    }

    /// The despawn itself, hooks aside.
    #[inline]
    pub(crate) fn despawn_plain(&mut self, entity: Entity) -> Result<(), EntityError> {
        let tick = self.change_tick();
        self.archetypes.despawn(&mut self.entities, entity, tick)
    }

    /// Despawns every entity and drops every component; resources stay. Old handles stop
    /// resolving (their slots' generations are bumped). `OnReplace` / `OnRemove` observers run
    /// first, for every entity; entities they spawn then are cleared with the rest (their
    /// deferred spawns find their ids gone and do nothing).
    ///
    /// # Panics
    /// If a component's `Drop` panics, the panic is passed on after every archetype has been
    /// emptied: the world is left empty and consistent, and only the rest of the archetype
    /// whose `Drop` panicked is leaked (a second panic while unwinding aborts, as in `Vec`).
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// world.insert_resource(7u64);
    /// world.clear();
    /// assert!(world.is_empty() && !world.contains(e));
    /// assert_eq!(world.resource::<u64>(), &7);
    /// ```
    pub fn clear(&mut self) {
        self.flush();
        let hook_commands = if self.components.any_hooks() {
            self.hooks_before_clear()
        } else {
            Vec::new()
        };
        self.clear_rows();
        self.finish_hooks(hook_commands);
    }

    fn clear_rows(&mut self) {
        for arch in self.archetypes.as_slice() {
            for chunk in arch.chunks() {
                for &entity in chunk.entities() {
                    self.entities.free(entity);
                }
            }
        }
        // Every slot is free now, so every archetype must end up empty, even if one `Drop`
        // panics: the guard clears the archetypes after the one that panicked.
        struct ClearRest<'a>(std::slice::IterMut<'a, Archetype>);
        impl Drop for ClearRest<'_> {
            fn drop(&mut self) {
                self.0.by_ref().for_each(Archetype::clear);
            }
        }
        let mut rest = ClearRest(self.archetypes.as_mut_slice().iter_mut());
        for arch in rest.0.by_ref() {
            arch.clear();
        }
    }

    /// Whether `entity` is alive. Ids reserved with `reserve_entity` count once flushed.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// assert!(world.contains(e));
    /// world.despawn(e).unwrap();
    /// assert!(!world.contains(e));
    /// ```
    #[inline]
    pub fn contains(&self, entity: Entity) -> bool {
        self.location(entity).is_some()
    }

    /// Number of live entities.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.spawn((1u32,));
    /// world.spawn(('a',));
    /// assert_eq!(world.len(), 2);
    /// ```
    #[inline]
    pub fn len(&self) -> u32 {
        self.entities.len()
    }

    /// Whether no entity is alive.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// assert!(world.is_empty());
    /// world.spawn((1u32,));
    /// assert!(!world.is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.entities.is_empty()
    }

    /// Where `entity` lives, if it is alive: its slot gives the row, and the entity id stored
    /// in that row says whether the handle's generation is current.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let loc = world.location(e).unwrap();
    /// assert_eq!(loc.row, 0);
    /// assert_eq!(world.archetypes()[loc.archetype.index()].len(), 1);
    /// ```
    #[inline]
    pub fn location(&self, entity: Entity) -> Option<Location> {
        self.locate_row(entity).map(|(loc, _)| loc)
    }

    /// [`World::location`] with the row's address, which the generation check computes anyway
    /// and a row move needs: one division per insert or remove instead of two.
    #[inline]
    pub(crate) fn locate_row(&self, entity: Entity) -> Option<(Location, RowAddr)> {
        self.archetypes.locate(&self.entities, entity)
    }

    /// Test hook: sets the generation of a vacant entity slot, so tests can reach generation
    /// retirement without four billion spawns.
    ///
    /// # Panics
    /// If the slot is live or does not exist.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use std::num::NonZeroU32;
    /// let mut world = World::new();
    /// let e = world.spawn(());
    /// world.despawn(e).unwrap();
    /// world.set_slot_generation_for_tests(e.index(), NonZeroU32::new(u32::MAX).unwrap());
    /// assert_eq!(world.spawn(()).generation(), u32::MAX);
    /// ```
    #[doc(hidden)]
    pub fn set_slot_generation_for_tests(&mut self, index: u32, generation: std::num::NonZeroU32) {
        self.flush();
        self.entities.set_generation_for_tests(index, generation);
    }
}
