//! [`MapEntities`]: how a component names the entity ids it holds, so that a copy of it can be
//! pointed at the copies of those entities.
//!
//! Cloning a subtree (`World::clone_entity_with` with `with_children`, or `clone_entity_into`
//! another world) makes new entities; a component holding an [`Entity`] (a target, an owner, a
//! list of members) would go on naming the originals. A type registered with
//! [`World::register_map_entities`](crate::World::register_map_entities) has every id it holds
//! replaced by the id of its clone when the entity it names is part of the copy (bevy's
//! `MapEntities`).

use super::Entity;

/// A value holding entity ids that a clone should re-point at the clones of those entities.
///
/// Implement it by calling `map` on every [`Entity`] the value holds (directly or through the
/// impls below for `Option`, `Vec`, `Box` and arrays), and register the component with
/// [`World::register_map_entities`](crate::World::register_map_entities).
///
/// ```
/// # use ecs_core::{Entity, MapEntities};
/// #[derive(Clone)]
/// struct Aim {
///     target: Option<Entity>,
///     range: f32,
/// }
/// impl MapEntities for Aim {
///     fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity) {
///         self.target.map_entities(map);
///     }
/// }
/// ```
pub trait MapEntities {
    /// Replaces every entity id this value holds with `map(id)`.
    fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity);
}

impl MapEntities for Entity {
    fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity) {
        *self = map(*self);
    }
}

impl<T: MapEntities> MapEntities for Option<T> {
    fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity) {
        if let Some(value) = self {
            value.map_entities(map);
        }
    }
}

impl<T: MapEntities> MapEntities for Vec<T> {
    fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity) {
        for value in self {
            value.map_entities(map);
        }
    }
}

impl<T: MapEntities + ?Sized> MapEntities for Box<T> {
    fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity) {
        (**self).map_entities(map);
    }
}

impl<T: MapEntities> MapEntities for [T] {
    fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity) {
        for value in self {
            value.map_entities(map);
        }
    }
}

impl<T: MapEntities, const N: usize> MapEntities for [T; N] {
    fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity) {
        self.as_mut_slice().map_entities(map);
    }
}
