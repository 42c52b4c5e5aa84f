//! Required components: `A` requires `B` means an entity never holds an `A` without a `B`.
//! Spawning or inserting `A` inserts `B` (made by its constructor) where it is missing,
//! transitively, before `A`'s own `on_add` / `on_insert` hooks run; a `B` the bundle brings is
//! kept. Removing `B` later is allowed (a requirement is about additions, as in bevy).
//!
//! Requirements are checked for cycles when registered. Each missing requirement is inserted
//! with its own `insert`, so it runs its own hooks and requirements.

use std::any::{type_name, TypeId};
use std::sync::Arc;

use crate::component::{Component, ComponentId};
use crate::entity::Entity;
use crate::error::WorldError;
use crate::world::{Required, World};

impl World {
    /// Declares that `A` requires `B`, made with `B::default()` where missing.
    ///
    /// # Errors
    /// [`WorldError::RequiredCycle`] if `B` is `A` or already requires `A`, directly or
    /// through other types; nothing changes then.
    ///
    /// ```
    /// # use ecs_core::World;
    /// #[derive(Default, Debug, PartialEq)]
    /// struct Velocity(f32);
    /// #[derive(Default)]
    /// struct Transform;
    /// #[derive(Default)]
    /// struct Body;
    /// let mut world = World::new();
    /// world.register_required::<Body, Velocity>().unwrap();
    /// world.register_required::<Velocity, Transform>().unwrap(); // transitively
    /// let e = world.spawn((Body,));
    /// assert_eq!(world.get::<Velocity>(e), Ok(&Velocity(0.0)));
    /// assert!(world.has::<Transform>(e));
    /// // A value the bundle brings is kept.
    /// let f = world.spawn((Body, Velocity(2.0)));
    /// assert_eq!(world.get::<Velocity>(f), Ok(&Velocity(2.0)));
    /// // A cycle is refused.
    /// assert!(world.register_required::<Transform, Body>().is_err());
    /// ```
    pub fn register_required<A: Component, B: Component + Default>(
        &mut self,
    ) -> Result<(), WorldError> {
        self.register_required_with::<A, B>(B::default)
    }

    /// Declares that `A` requires `B`, made with `constructor` where missing. Registering the
    /// same pair again replaces the constructor. Entities that hold an `A` already are not
    /// changed.
    ///
    /// # Errors
    /// As [`World::register_required`].
    ///
    /// ```
    /// # use ecs_core::World;
    /// struct Unit;
    /// #[derive(Debug, PartialEq)]
    /// struct Health(u32);
    /// let mut world = World::new();
    /// world.register_required_with::<Unit, Health>(|| Health(100)).unwrap();
    /// let e = world.spawn((Unit,));
    /// assert_eq!(world.get::<Health>(e), Ok(&Health(100)));
    /// ```
    pub fn register_required_with<A: Component, B: Component>(
        &mut self,
        constructor: fn() -> B,
    ) -> Result<(), WorldError> {
        let (a, b) = (TypeId::of::<A>(), TypeId::of::<B>());
        if a == b || self.requires(b, a) {
            return Err(WorldError::RequiredCycle {
                component: type_name::<A>(),
                required: type_name::<B>(),
            });
        }
        let required = Required {
            type_id: b,
            name: type_name::<B>(),
            insert: Arc::new(move |world: &mut World, entity: Entity| {
                let _ = world.insert(entity, (constructor(),));
            }),
        };
        let list = self.callbacks.required.entry(a).or_default();
        match list.iter_mut().find(|r| r.type_id == b) {
            Some(old) => *old = required,
            None => list.push(required),
        }
        self.components.set_hooked(a);
        self.hooks_changed();
        Ok(())
    }

    /// The components `T` requires directly, by type name, in registration order.
    ///
    /// ```
    /// # use ecs_core::World;
    /// #[derive(Default)]
    /// struct B;
    /// struct A;
    /// let mut world = World::new();
    /// world.register_required::<A, B>().unwrap();
    /// assert_eq!(world.required_components::<A>(), [std::any::type_name::<B>()]);
    /// ```
    pub fn required_components<T: Component>(&self) -> Vec<&'static str> {
        self.callbacks
            .required
            .get(&TypeId::of::<T>())
            .map(|list| list.iter().map(|r| r.name).collect())
            .unwrap_or_default()
    }

    /// Whether `from` requires `to`, directly or through other types.
    fn requires(&self, from: TypeId, to: TypeId) -> bool {
        let mut stack = vec![from];
        let mut seen = vec![from];
        while let Some(t) = stack.pop() {
            for r in self.callbacks.required.get(&t).into_iter().flatten() {
                if r.type_id == to {
                    return true;
                }
                if !seen.contains(&r.type_id) {
                    seen.push(r.type_id);
                    stack.push(r.type_id);
                }
            }
        }
        false
    }

    /// Inserts what the types in `added` require and `entity` lacks, in order.
    pub(crate) fn insert_required(&mut self, entity: Entity, added: &[ComponentId]) {
        if self.callbacks.required.is_empty() {
            return;
        }
        for &id in added {
            let Some(list) = self
                .callbacks
                .required
                .get(&self.components.info(id).type_id())
            else {
                continue;
            };
            for required in list.clone() {
                let has = self.location(entity).is_some_and(|loc| {
                    self.components.id_of(required.type_id).is_some_and(|r| {
                        self.archetypes()[loc.archetype.index()]
                            .signature()
                            .contains(r)
                    })
                });
                if !has {
                    (required.insert)(self, entity);
                }
            }
        }
    }
}
