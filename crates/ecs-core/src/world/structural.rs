//! Structural changes of one entity: the `World` methods that add components to it
//! ([`World::insert`], [`World::insert_one`]) or take them away ([`World::remove`]), each moving
//! the entity's row along a cached edge of the archetype graph when its set of types changes.
//!
//! Invariants kept: each flushes pending reservations first (`World` invariant 1); a failed call
//! changes nothing; hooks run around the `*_plain` change (`world/hooks.rs`), and overwritten
//! values are dropped only once the entity table and archetypes agree again (invariant 2).

use crate::component::bundle::Bundle;
use crate::component::Component;
use crate::entity::Entity;
use crate::error::{ComponentError, EntityError};
use crate::world::World;

impl World {
    /// Adds the components of `bundle` to `entity`, overwriting (and dropping) any it already
    /// has. Adding new types moves the entity to another archetype along a cached edge.
    ///
    /// Cost: one `TypeId` lookup of the edge (the first insert of `B` from an archetype also
    /// hashes the target signature). Overwriting only: one store per component. Adding types:
    /// one row move, a copy per column of the entity plus a store per new component, and the
    /// source archetype's last row copied into the hole.
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`] for a stale handle; `bundle` is dropped, nothing changes.
    ///
    /// # Panics
    /// As [`World::spawn`].
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// world.insert(e, (2u32, 'x')).unwrap();
    /// assert_eq!(world.get::<u32>(e), Ok(&2));
    /// assert_eq!(world.get::<char>(e), Ok(&'x'));
    /// ```
    pub fn insert<B: Bundle>(&mut self, entity: Entity, bundle: B) -> Result<(), EntityError> {
        self.flush();
        let parked = self.components.may_hook::<B>() && self.before_insert::<B>(entity);
        self.insert_plain(entity, bundle)?;
        // Checked again: this insert may have registered the first hooked type (and
        // `before_insert` may have found `B` free of hooks).
        if parked || self.components.may_hook::<B>() {
            self.after_insert::<B>(entity, parked);
        }
        Ok(())
    }

    /// The insert itself, hooks aside.
    #[inline(always)]
    pub(crate) fn insert_plain<B: Bundle>(
        &mut self,
        entity: Entity,
        bundle: B,
    ) -> Result<(), EntityError> {
        let tick = self.change_tick();
        let replaced = self.archetypes.insert(
            &mut self.components,
            &mut self.entities,
            entity,
            bundle,
            tick,
        )?;
        // The world is consistent; overwritten values may now run their `Drop`.
        drop(replaced);
        Ok(())
    }

    /// Adds or overwrites one component; shorthand for `insert(entity, (component,))`.
    ///
    /// # Errors
    /// As [`World::insert`].
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// world.insert_one(e, 'x').unwrap();
    /// assert_eq!(world.get::<char>(e), Ok(&'x'));
    /// ```
    pub fn insert_one<T: Component>(
        &mut self,
        entity: Entity,
        component: T,
    ) -> Result<(), EntityError> {
        self.insert(entity, (component,))
    }

    /// Removes the components of `B` from `entity` and hands them back (nothing is dropped).
    ///
    /// Cost: one `TypeId` lookup of the edge, then one row move (a copy per kept column, a read
    /// per removed one, and the source archetype's last row copied into the hole).
    ///
    /// # Errors
    /// [`ComponentError::NoSuchEntity`] for a stale handle, and
    /// [`ComponentError::MissingComponent`] naming the first type of `B` the entity lacks; in
    /// both cases nothing changes.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32, 2.0f32));
    /// assert_eq!(world.remove::<(f32,)>(e), Ok((2.0,)));
    /// assert!(world.remove::<(f32,)>(e).is_err());
    /// ```
    pub fn remove<B: Bundle>(&mut self, entity: Entity) -> Result<B, ComponentError> {
        self.flush();
        let parked = self.components.may_hook::<B>() && self.before_remove::<B>(entity);
        let values = self.remove_plain::<B>(entity)?;
        if parked {
            self.after_change();
        }
        Ok(values)
    }

    /// The remove itself, hooks aside.
    #[inline(always)]
    pub(crate) fn remove_plain<B: Bundle>(&mut self, entity: Entity) -> Result<B, ComponentError> {
        let tick = self.change_tick();
        self.archetypes
            .remove(&mut self.components, &mut self.entities, entity, tick)
    }
}
