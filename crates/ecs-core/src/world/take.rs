//! Moving components out of the world: [`World::remove_one`] for one component and
//! [`World::take`] for a whole entity's bundle.
//!
//! Both are built on [`World::remove`] and [`World::despawn`], so they keep those operations'
//! guarantees: a failed call changes nothing, and user `Drop` code runs only once the world is
//! consistent again.

use crate::component::bundle::Bundle;
use crate::component::Component;
use crate::entity::Entity;
use crate::error::{ComponentError, EntityError};
use crate::world::World;

impl World {
    /// Removes one component from `entity` and hands it back; shorthand for
    /// `remove::<(T,)>(entity)`.
    ///
    /// Cost: one row move, as [`World::remove`].
    ///
    /// # Errors
    /// [`ComponentError::NoSuchEntity`] for a stale handle, [`ComponentError::MissingComponent`]
    /// if the entity has no `T`; nothing changes then.
    ///
    /// ```
    /// # use ecs_core::{ComponentError, World};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32, 'x'));
    /// assert_eq!(world.remove_one::<char>(e), Ok('x'));
    /// assert!(matches!(world.remove_one::<char>(e), Err(ComponentError::MissingComponent { .. })));
    /// assert!(world.has::<u32>(e));
    /// ```
    pub fn remove_one<T: Component>(&mut self, entity: Entity) -> Result<T, ComponentError> {
        self.remove::<(T,)>(entity).map(|(value,)| value)
    }

    /// Despawns `entity` and hands back its components of `B`; any other components it has
    /// are dropped.
    ///
    /// Cost: a [`World::remove`] of `B` (one row move) followed by a [`World::despawn`].
    ///
    /// # Errors
    /// [`ComponentError::NoSuchEntity`] for a stale handle, [`ComponentError::MissingComponent`]
    /// naming the first type of `B` the entity lacks, and [`ComponentError::DespawnRefused`] if
    /// a relationship's `Refuse` policy protects the entity; in each case nothing changes (the
    /// entity stays alive).
    ///
    /// # Panics
    /// As [`World::remove`]; and if the `Drop` of one of the other components panics, after
    /// the entity is gone (the taken values are then dropped while unwinding).
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32, 'x', String::from("dropped")));
    /// let (n, c) = world.take::<(u32, char)>(e).unwrap();
    /// assert_eq!((n, c), (1, 'x'));
    /// assert!(!world.contains(e));
    /// assert!(world.take::<(u32,)>(e).is_err());
    /// ```
    pub fn take<B: Bundle>(&mut self, entity: Entity) -> Result<B, ComponentError> {
        self.flush();
        // A despawn a relationship refuses must stop the take before anything moves.
        self.check_despawn(entity)?;
        let bundle = self.remove::<B>(entity)?;
        // The remove's hooks may have despawned the entity already; that is the same end.
        match self.despawn_as_consequence(entity) {
            Ok(()) | Err(EntityError::NoSuchEntity(_)) => Ok(bundle),
            Err(err) => Err(err.into()),
        }
    }
}
