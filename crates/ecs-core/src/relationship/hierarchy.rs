//! The built-in hierarchy: [`ChildOf`] on a child names its parent, and the engine keeps the
//! parent's [`Children`] in step (a [`Relationship`] installed in every world). Despawning a
//! parent despawns its subtree ([`DespawnPolicy::DespawnSources`]).
//!
//! Traversal (the world's `hierarchy` file): [`World::parent`], [`World::children`],
//! [`World::iter_ancestors`], and [`World::iter_descendants`] (depth-first, pre-order) /
//! [`World::iter_descendants_breadth_first`].
//! Children are visited in their list's order (see [`Children`]). A hierarchy with a cycle (made by
//! inserting `ChildOf`s that close one) is not refused by `insert`, but [`World::set_parent`]
//! refuses it, and the iterators stop after `world.len()` entities rather than loop forever.

use std::ops::Deref;

use crate::entity::Entity;
use crate::relationship::{DespawnPolicy, Relationship, RelationshipTarget};
#[cfg(doc)]
use crate::World;

/// Makes an entity the child of another: insert `ChildOf(parent)` and the parent's
/// [`Children`] follows. A value, not part of the archetype: siblings of every parent share
/// one archetype.
///
/// ```
/// # use ecs_core::{ChildOf, World};
/// let mut world = World::new();
/// let tank = world.spawn(());
/// let turret = world.spawn((ChildOf(tank),));
/// assert_eq!(world.children(tank), [turret]);
/// world.despawn(tank).unwrap(); // the turret goes with it
/// assert!(!world.contains(turret));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChildOf(pub Entity);

impl ChildOf {
    /// The parent.
    #[inline]
    pub fn parent(&self) -> Entity {
        self.0
    }
}

/// The children of an entity, in the order they became its children; kept by the engine from
/// the children's [`ChildOf`]. Derefs to `[Entity]`.
///
/// A child leaving keeps the others' order, except when more than 64 children follow it:
/// then the last child takes its place, so that removing one child costs O(1) whatever the
/// fan-out (a root with 100,000 children, despawned one by one). The order is the same on
/// every run and thread count either way.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Children(Vec<Entity>);

impl Deref for Children {
    type Target = [Entity];

    #[inline]
    fn deref(&self) -> &[Entity] {
        &self.0
    }
}

impl Relationship for ChildOf {
    type Target = Children;

    #[inline]
    fn targets(&self) -> &[Entity] {
        std::slice::from_ref(&self.0)
    }

    fn from_target(target: Entity) -> Self {
        ChildOf(target)
    }
}

impl RelationshipTarget for Children {
    type Relationship = ChildOf;
    const ON_DESPAWN: DespawnPolicy = DespawnPolicy::DespawnSources;

    fn from_sources(sources: Vec<Entity>) -> Self {
        Children(sources)
    }

    #[inline]
    fn sources(&self) -> &[Entity] {
        &self.0
    }

    fn sources_mut(&mut self) -> &mut Vec<Entity> {
        &mut self.0
    }
}
