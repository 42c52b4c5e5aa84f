//! [`EntityRef`]: a read-only view of one live entity's components, from [`World::entity`].
//!
//! The view holds `&World` and the entity's location, so asking it about several components
//! costs one location lookup in total, and any number of views can be alive at once.

use crate::archetype::Archetype;
use crate::component::{Component, ComponentId};
use crate::entity::{Entity, Location};
use crate::error::EntityError;
use crate::world::World;

/// A read-only view of one live entity: its components by type, and the list of them.
///
/// # Invariants
/// 1. `location` is where `entity` lives in `world` (the `&'w World` borrow keeps it so).
///
/// ```
/// # use ecs_core::World;
/// let mut world = World::new();
/// let e = world.spawn((1u32, 'x'));
/// let view = world.entity(e).unwrap();
/// assert_eq!(view.get::<u32>(), Some(&1));
/// assert!(view.has::<char>() && !view.has::<f32>());
/// assert_eq!(view.component_names().count(), 2);
/// ```
#[derive(Clone, Copy)]
pub struct EntityRef<'w> {
    world: &'w World,
    entity: Entity,
    location: Location,
}

impl World {
    /// A read-only view of `entity`'s components.
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`] for a stale or unknown handle.
    ///
    /// ```
    /// # use ecs_core::{EntityError, World};
    /// let mut world = World::new();
    /// let a = world.spawn((1u32,));
    /// let b = world.spawn((2u32,));
    /// let (va, vb) = (world.entity(a).unwrap(), world.entity(b).unwrap()); // both alive
    /// assert_eq!(va.get::<u32>().unwrap() + vb.get::<u32>().unwrap(), 3);
    /// world.despawn(a).unwrap();
    /// assert!(matches!(world.entity(a), Err(EntityError::NoSuchEntity(_))));
    /// ```
    pub fn entity(&self, entity: Entity) -> Result<EntityRef<'_>, EntityError> {
        let location = self
            .location(entity)
            .ok_or(EntityError::NoSuchEntity(entity))?;
        Ok(EntityRef {
            world: self,
            entity,
            location,
        })
    }
}

impl<'w> EntityRef<'w> {
    /// The entity this view shows.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn(());
    /// assert_eq!(world.entity(e).unwrap().id(), e);
    /// ```
    pub fn id(&self) -> Entity {
        self.entity
    }

    /// Where the entity lives.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u8,));
    /// assert_eq!(world.entity(e).unwrap().location(), world.location(e).unwrap());
    /// ```
    pub fn location(&self) -> Location {
        self.location
    }

    /// The entity's archetype.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u8, 2u16));
    /// assert_eq!(world.entity(e).unwrap().archetype().len(), 1);
    /// ```
    pub fn archetype(&self) -> &'w Archetype {
        &self.world.archetypes()[self.location.archetype.index()]
    }

    /// The entity's `T`, if it has one.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((String::from("name"),));
    /// let view = world.entity(e).unwrap();
    /// assert_eq!(view.get::<String>().map(String::as_str), Some("name"));
    /// assert_eq!(view.get::<u32>(), None);
    /// ```
    pub fn get<T: Component>(&self) -> Option<&'w T> {
        self.world.get::<T>(self.entity).ok()
    }

    /// Whether the entity has a `T`.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// assert!(world.entity(e).unwrap().has::<u32>());
    /// ```
    pub fn has<T: Component>(&self) -> bool {
        self.world
            .component_id::<T>()
            .is_some_and(|id| self.archetype().signature().contains(id))
    }

    /// The ids of the entity's components, in id order.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32, 'x'));
    /// let ids: Vec<_> = world.entity(e).unwrap().component_ids().collect();
    /// assert_eq!(ids, [world.component_id::<u32>().unwrap(), world.component_id::<char>().unwrap()]);
    /// ```
    pub fn component_ids(&self) -> impl ExactSizeIterator<Item = ComponentId> + 'w {
        self.archetype().component_ids()
    }

    /// The type names of the entity's components, in id order.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32, 'x'));
    /// let names: Vec<_> = world.entity(e).unwrap().component_names().collect();
    /// assert_eq!(names, ["u32", "char"]);
    /// ```
    pub fn component_names(&self) -> impl ExactSizeIterator<Item = &'static str> + 'w {
        self.archetype().component_names().map(|(name, _)| name)
    }
}

impl std::fmt::Debug for EntityRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EntityRef")
            .field("entity", &self.entity)
            .field("components", &self.component_names().collect::<Vec<_>>())
            .finish()
    }
}
