//! Traversal and editing of the built-in hierarchy (`ChildOf` / `Children`, declared in the
//! `hierarchy` module): parents, children, ancestors and descendants, and `set_parent`.

use std::collections::VecDeque;
use std::iter::FusedIterator;

use crate::entity::Entity;
use crate::error::{EntityError, HierarchyError};
use crate::relationship::hierarchy::{ChildOf, Children};
use crate::world::World;

impl World {
    /// Installs the hierarchy's upkeep; every world is built with it.
    pub(crate) fn with_hierarchy(mut self) -> Self {
        self.register_relationship::<ChildOf>()
            .expect("a new world has no hooks yet");
        self
    }

    /// The parent of `entity` (its [`ChildOf`]), if it has one.
    ///
    /// ```
    /// # use ecs_core::{ChildOf, World};
    /// let mut world = World::new();
    /// let root = world.spawn(());
    /// let leaf = world.spawn((ChildOf(root),));
    /// assert_eq!(world.parent(leaf), Some(root));
    /// assert_eq!(world.parent(root), None);
    /// ```
    #[inline]
    pub fn parent(&self, entity: Entity) -> Option<Entity> {
        self.get::<ChildOf>(entity).ok().map(ChildOf::parent)
    }

    /// The children of `entity`, in the order they joined (empty if it has none).
    #[inline]
    pub fn children(&self, entity: Entity) -> &[Entity] {
        self.relationship_sources::<Children>(entity)
    }

    /// Makes `child` a child of `parent` (inserts `ChildOf(parent)`, leaving its old parent).
    ///
    /// # Errors
    /// [`HierarchyError::NoSuchEntity`] if either is not alive, and
    /// [`HierarchyError::Cycle`] if `parent` is `child` or one of its descendants; nothing
    /// changes then.
    ///
    /// ```
    /// # use ecs_core::{HierarchyError, World};
    /// let mut world = World::new();
    /// let (a, b) = (world.spawn(()), world.spawn(()));
    /// world.set_parent(b, a).unwrap();
    /// assert_eq!(world.set_parent(a, b), Err(HierarchyError::Cycle { child: a, parent: b }));
    /// ```
    pub fn set_parent(&mut self, child: Entity, parent: Entity) -> Result<(), HierarchyError> {
        for entity in [child, parent] {
            if !self.contains(entity) {
                return Err(HierarchyError::NoSuchEntity(entity));
            }
        }
        if parent == child || self.iter_ancestors(parent).any(|a| a == child) {
            return Err(HierarchyError::Cycle { child, parent });
        }
        self.insert(child, (ChildOf(parent),))
            .map_err(|_| HierarchyError::NoSuchEntity(child))
    }

    /// Makes `child` a root (removes its [`ChildOf`]); returns its old parent.
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`] if `child` is not alive.
    pub fn remove_parent(&mut self, child: Entity) -> Result<Option<Entity>, EntityError> {
        if !self.contains(child) {
            return Err(EntityError::NoSuchEntity(child));
        }
        Ok(self.remove::<(ChildOf,)>(child).ok().map(|(c,)| c.0))
    }

    /// The parent of `entity`, its parent, and so on up to the root.
    ///
    /// ```
    /// # use ecs_core::{ChildOf, World};
    /// let mut world = World::new();
    /// let a = world.spawn(());
    /// let b = world.spawn((ChildOf(a),));
    /// let c = world.spawn((ChildOf(b),));
    /// assert_eq!(world.iter_ancestors(c).collect::<Vec<_>>(), [b, a]);
    /// ```
    pub fn iter_ancestors(&self, entity: Entity) -> Ancestors<'_> {
        Ancestors {
            world: self,
            at: entity,
            budget: self.len(),
        }
    }

    /// Every descendant of `entity` (not itself), depth-first: a child, then its subtree,
    /// then its next sibling.
    ///
    /// ```
    /// # use ecs_core::{ChildOf, World};
    /// let mut world = World::new();
    /// let root = world.spawn(());
    /// let a = world.spawn((ChildOf(root),));
    /// let b = world.spawn((ChildOf(root),));
    /// let a1 = world.spawn((ChildOf(a),));
    /// assert_eq!(world.iter_descendants(root).collect::<Vec<_>>(), [a, a1, b]);
    /// assert_eq!(world.iter_descendants_breadth_first(root).collect::<Vec<_>>(), [a, b, a1]);
    /// ```
    pub fn iter_descendants(&self, entity: Entity) -> Descendants<'_> {
        let mut stack: Vec<Entity> = self.children(entity).to_vec();
        stack.reverse();
        Descendants {
            world: self,
            stack,
            budget: self.len(),
        }
    }

    /// Every descendant of `entity` (not itself), breadth-first: its children, then their
    /// children, and so on.
    pub fn iter_descendants_breadth_first(&self, entity: Entity) -> DescendantsBreadthFirst<'_> {
        DescendantsBreadthFirst {
            world: self,
            queue: self.children(entity).iter().copied().collect(),
            budget: self.len(),
        }
    }
}

/// [`World::iter_ancestors`].
pub struct Ancestors<'w> {
    world: &'w World,
    at: Entity,
    budget: u32,
}

impl Iterator for Ancestors<'_> {
    type Item = Entity;

    fn next(&mut self) -> Option<Entity> {
        self.budget = self.budget.checked_sub(1)?;
        self.at = self.world.parent(self.at)?;
        Some(self.at)
    }
}

impl FusedIterator for Ancestors<'_> {}

/// [`World::iter_descendants`].
pub struct Descendants<'w> {
    world: &'w World,
    /// Entities still to visit, the next on top.
    stack: Vec<Entity>,
    budget: u32,
}

impl Iterator for Descendants<'_> {
    type Item = Entity;

    fn next(&mut self) -> Option<Entity> {
        self.budget = self.budget.checked_sub(1)?;
        let next = self.stack.pop()?;
        self.stack
            .extend(self.world.children(next).iter().rev().copied());
        Some(next)
    }
}

impl FusedIterator for Descendants<'_> {}

/// [`World::iter_descendants_breadth_first`].
pub struct DescendantsBreadthFirst<'w> {
    world: &'w World,
    queue: VecDeque<Entity>,
    budget: u32,
}

impl Iterator for DescendantsBreadthFirst<'_> {
    type Item = Entity;

    fn next(&mut self) -> Option<Entity> {
        self.budget = self.budget.checked_sub(1)?;
        let next = self.queue.pop_front()?;
        self.queue.extend(self.world.children(next).iter().copied());
        Some(next)
    }
}

impl FusedIterator for DescendantsBreadthFirst<'_> {}
