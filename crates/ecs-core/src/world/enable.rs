//! Enable bits: the `World` methods that register enableable types and flip an entity's bit
//! (one at a time or many at once). The bit storage and its invariants are `crate::chunk::enable`'s.

use std::any::type_name;

use crate::component::{Component, ComponentId};
use crate::entity::Entity;
use crate::error::ComponentError;
use crate::world::batch_toggle::BatchToggle;
use crate::world::World;

impl World {
    /// Makes `T` enableable: each row holding a `T` gets a bit that [`World::set_enabled`]
    /// flips without moving the row, and queries treat a disabled `T` as absent.
    ///
    /// Call it before `T` is first used (spawned, inserted, queried or registered); calling
    /// it again is a no-op. Cost: one bit per row per chunk and a few atomic operations per
    /// toggle; nothing at all for types never registered this way.
    ///
    /// # Panics
    /// If `T` was already registered as a plain component.
    ///
    /// ```
    /// # use ecs_core::World;
    /// struct Stunned;
    /// let mut world = World::new();
    /// let id = world.register_enableable::<Stunned>();
    /// assert!(world.components().info(id).is_enableable());
    /// assert_eq!(world.register_enableable::<Stunned>(), id);
    /// ```
    pub fn register_enableable<T: Component>(&mut self) -> ComponentId {
        if let Some(id) = self.component_id::<T>() {
            assert!(
                self.components().info(id).is_enableable(),
                "`{}` is already registered as a plain component: register it as enableable \
                 before its first use",
                type_name::<T>()
            );
            return id;
        }
        let (_, components, _) = self.parts_mut();
        let id = components.register::<T>();
        components.set_enableable(id);
        id
    }

    /// Enables or disables `entity`'s `T` without moving its row; returns whether it was
    /// enabled before. Changing the state marks `T` changed (as a write would). O(1).
    ///
    /// # Errors
    /// [`ComponentError::NoSuchEntity`] for a stale handle,
    /// [`ComponentError::MissingComponent`] if the entity has no `T`, and
    /// [`ComponentError::NotEnableable`] if `T` was not registered with
    /// [`World::register_enableable`].
    ///
    /// ```
    /// # use ecs_core::World;
    /// struct Stunned;
    /// let mut world = World::new();
    /// world.register_enableable::<Stunned>();
    /// let e = world.spawn((Stunned,));
    /// assert_eq!(world.set_enabled::<Stunned>(e, false), Ok(true));
    /// assert_eq!(world.is_enabled::<Stunned>(e), Ok(false));
    /// assert!(world.has::<Stunned>(e)); // still there, just off
    /// ```
    pub fn set_enabled<T: Component>(
        &mut self,
        entity: Entity,
        enabled: bool,
    ) -> Result<bool, ComponentError> {
        self.flush();
        let tick = self.change_tick();
        let id = self.component_id::<T>();
        // The common case first, with no `Result` built on the way: a live entity whose
        // archetype has an enableable `T`. Anything else takes `enable_slot`, which names
        // the error.
        if let (Some(id), Some((loc, at))) = (id, self.locate_row(entity)) {
            let arch = &self.archetypes()[loc.archetype.index()];
            if let Some((col, slot)) = arch
                .column(id)
                .and_then(|c| Some((c, arch.enable_slot(c)?)))
            {
                return Ok(self.set_bit(loc.archetype, at, col, slot, enabled, tick));
            }
        }
        let (loc, at, col, slot) = self.enable_slot::<T>(id, entity)?;
        Ok(self.set_bit(loc.archetype, at, col, slot, enabled, tick))
    }

    /// Enables or disables `T` of every entity in `entities` without moving rows; returns how
    /// many changed state. Changing a row's state marks `T` changed there, as
    /// [`World::set_enabled`] does. Faster than a loop of `set_enabled`: `T` is looked up once
    /// and each archetype's column and enable slot once per run of entities in it.
    ///
    /// All entities are checked before any bit is touched: on an error nothing changed.
    /// An entity listed twice is set twice (the second time it does not count as changed).
    ///
    /// # Errors
    /// As [`World::set_enabled`], for the first entity in `entities` that fails; the error
    /// names it.
    ///
    /// ```
    /// # use ecs_core::{ComponentError, World};
    /// struct Stunned;
    /// let mut world = World::new();
    /// world.register_enableable::<Stunned>();
    /// let es: Vec<_> = (0..4).map(|_| world.spawn((Stunned,))).collect();
    /// world.set_enabled::<Stunned>(es[0], false).unwrap();
    /// assert_eq!(world.set_enabled_many::<Stunned>(&es, false), Ok(3));
    /// assert!(es.iter().all(|&e| world.is_enabled::<Stunned>(e) == Ok(false)));
    /// // A bad entity anywhere in the list: nothing changes, and the error names it.
    /// let plain = world.spawn((1u8,));
    /// let err = world.set_enabled_many::<Stunned>(&[es[0], plain], true);
    /// assert!(matches!(err, Err(ComponentError::MissingComponent { entity, .. }) if entity == plain));
    /// assert_eq!(world.is_enabled::<Stunned>(es[0]), Ok(false));
    /// ```
    pub fn set_enabled_many<T: Component>(
        &mut self,
        entities: &[Entity],
        enabled: bool,
    ) -> Result<usize, ComponentError> {
        self.flush();
        let tick = self.change_tick();
        let Some(id) = self.component_id::<T>() else {
            // No archetype has a `T`: the first entity, if any, fails.
            if let Some(&entity) = entities.first() {
                self.enable_slot::<T>(None, entity)?;
            }
            return Ok(0);
        };
        let (table, _, archetypes) = self.parts_mut();
        BatchToggle::new(archetypes.as_mut_slice(), id, type_name::<T>(), enabled)
            .apply(table, entities, tick)
    }

    /// Sets the enable bit of the row at `at` (of archetype `arch`) in `slot`, stamping
    /// column `col` changed there if the bit flips; returns the previous bit.
    #[inline(always)]
    fn set_bit(
        &mut self,
        arch: crate::ArchetypeId,
        at: crate::archetype::rows::RowAddr,
        col: usize,
        slot: usize,
        enabled: bool,
        tick: u64,
    ) -> bool {
        let (_, _, archetypes) = self.parts_mut();
        let arch = &mut archetypes.as_mut_slice()[arch.index()];
        let bit = 1u64 << (at.r() % 64);
        let word = arch
            .chunk_mut(at.chunk())
            .enable_bits_mut()
            .get_mut(slot)
            .word_mut(at.r() / 64);
        let was = *word & bit != 0;
        if was != enabled {
            *word ^= bit;
            // Enabling or disabling is a change of `T`: of this row only.
            arch.stamp_row(at, &[col as u32], false, tick);
        }
        was
    }

    /// The entity's location and row address, `T`'s column in its archetype and `T`'s enable
    /// slot there, with `T`'s id `id` looked up by the caller. One division (the row address).
    #[inline]
    fn enable_slot<T: Component>(
        &self,
        id: Option<ComponentId>,
        entity: Entity,
    ) -> Result<
        (
            crate::Location,
            crate::archetype::rows::RowAddr,
            usize,
            usize,
        ),
        ComponentError,
    > {
        let (loc, at) = self
            .locate_row(entity)
            .ok_or(ComponentError::NoSuchEntity(entity))?;
        let arch = &self.archetypes()[loc.archetype.index()];
        let (col, slot) = arch.enable_column(id, entity, type_name::<T>())?;
        Ok((loc, at, col, slot))
    }

    /// Whether `entity`'s `T` is enabled. O(1).
    ///
    /// # Errors
    /// As [`World::set_enabled`].
    ///
    /// ```
    /// # use ecs_core::{ComponentError, World};
    /// struct Stunned;
    /// let mut world = World::new();
    /// world.register_enableable::<Stunned>();
    /// let e = world.spawn((Stunned,));
    /// assert_eq!(world.is_enabled::<Stunned>(e), Ok(true));
    /// let plain = world.spawn((1u32,));
    /// assert!(matches!(world.is_enabled::<u32>(plain), Err(ComponentError::NotEnableable { .. })));
    /// ```
    pub fn is_enabled<T: Component>(&self, entity: Entity) -> Result<bool, ComponentError> {
        let (loc, _, slot) = self.enable_slot_of::<T>(entity)?;
        let arch = &self.archetypes()[loc.archetype.index()];
        let (c, r) = arch.split_row(loc.row as usize);
        Ok(arch.chunks()[c].enable_bits().get(slot).get(r))
    }

    /// The entity's location, `T`'s column in its archetype and `T`'s enable slot there.
    #[inline]
    fn enable_slot_of<T: Component>(
        &self,
        entity: Entity,
    ) -> Result<(crate::Location, usize, usize), ComponentError> {
        let loc = self
            .location(entity)
            .ok_or(ComponentError::NoSuchEntity(entity))?;
        let arch = &self.archetypes()[loc.archetype.index()];
        let (col, slot) = arch.enable_column(self.component_id::<T>(), entity, type_name::<T>())?;
        Ok((loc, col, slot))
    }
}
