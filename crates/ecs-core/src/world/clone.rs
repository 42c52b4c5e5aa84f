//! Entity cloning: a new entity with clones of another's components, in the same world or in
//! another one, optionally with its whole subtree.
//!
//! A component can be cloned if its type is registered for snapshots (`register_pod` or
//! `register_clone`: the registry already knows how to copy it). A component that is not is
//! left out of the clone, as in bevy; [`CloneOptions::strict`] refuses the clone instead
//! (`CloneError::NotClonable`, naming the type), for code that must not lose a component
//! silently. [`CloneOptions`] can also leave types out (`deny`) or name the only ones to copy
//! (`allow`). Chunk components are never copied (they belong to the chunk). The hierarchy is
//! the engine's:
//! - `Children` (and every relationship's target list) is never copied: the engine keeps it
//!   from the children's side, and copying it would take the children from the original;
//! - in the same world, a clone of a child is a child of the same parent (a sibling);
//! - with [`CloneOptions::with_children`], every descendant is cloned too, depth-first, each
//!   clone a child of its parent's clone: the copy is a subtree of its own;
//! - into another world, relationships of the cloned root are left out (their entity ids name
//!   entities of the source world); the copied subtree is linked within the new world.
//!
//! Entity ids inside components are remapped for types registered with
//! [`World::register_map_entities`]: every clone is spawned first, then the values are
//! inserted, each id naming an entity of the copy replaced by the id of that entity's clone.
//! An id naming an entity outside the copy is kept in the same world (it still names that
//! entity); into another world it would name nothing meaningful, so the clone is refused
//! (`CloneError::OutsideTheCopy`, naming the holder, the component and the id) before anything
//! is spawned. Types not registered that way are copied as they are.
//!
//! Restoring a snapshot into another world needs no remapping: a restore rebuilds the
//! snapshot's entities with the same ids.
//!
//! The clones are made with `spawn` and `insert`, so their hooks, observers and required
//! components run as for any insert.

use std::collections::HashMap;

use std::any::TypeId;

use crate::component::Component;
use crate::entity::map::MapEntities;
use crate::entity::Entity;
use crate::error::CloneError;
use crate::relationship::hierarchy::{ChildOf, Children};
use crate::world::{ClonedValue, World};

/// What [`World::clone_entity_with`] copies.
///
/// ```
/// # use ecs_core::{CloneOptions, World};
/// #[derive(Clone)]
/// struct Name(&'static str);
/// #[derive(Clone)]
/// struct Selected;
/// let mut world = World::new();
/// world.register_clone::<Name>();
/// world.register_clone::<Selected>();
/// let e = world.spawn((Name("tank"), Selected));
/// let copy = world.clone_entity_with(e, &CloneOptions::new().deny::<Selected>()).unwrap();
/// assert_eq!(world.get::<Name>(copy).unwrap().0, "tank");
/// assert!(!world.has::<Selected>(copy));
/// ```
#[derive(Clone, Debug, Default)]
pub struct CloneOptions {
    allow: Option<Vec<TypeId>>,
    deny: Vec<TypeId>,
    children: bool,
    strict: bool,
}

impl CloneOptions {
    /// Every component that can be cloned (the others left out), the entity alone.
    pub fn new() -> Self {
        Self::default()
    }

    /// Copies `T`, and (once any type is allowed) only the allowed types.
    #[must_use]
    pub fn allow<T: Component>(mut self) -> Self {
        self.allow
            .get_or_insert_with(Vec::new)
            .push(TypeId::of::<T>());
        self
    }

    /// Refuses to clone, with [`CloneError::NotClonable`] naming the first component that
    /// cannot be cloned, rather than leaving such components out; nothing is spawned then. A
    /// type left out by `deny` or `allow` is not refused.
    ///
    /// ```
    /// # use ecs_core::{CloneError, CloneOptions, World};
    /// struct Handle(u32); // registered for no clone
    /// let mut world = World::new();
    /// world.register_pod::<u32>();
    /// let e = world.spawn((Handle(1), 7u32));
    /// let lenient = world.clone_entity(e).unwrap();
    /// assert!(world.has::<u32>(lenient) && !world.has::<Handle>(lenient));
    /// let strict = world.clone_entity_with(e, &CloneOptions::new().strict());
    /// assert!(matches!(strict, Err(CloneError::NotClonable { .. })));
    /// ```
    #[must_use]
    pub fn strict(mut self) -> Self {
        self.strict = true;
        self
    }

    /// Leaves `T` out (no error if it cannot be cloned).
    #[must_use]
    pub fn deny<T: Component>(mut self) -> Self {
        self.deny.push(TypeId::of::<T>());
        self
    }

    /// Clones the entity's descendants too (following `ChildOf`), each clone a child of its
    /// parent's clone.
    #[must_use]
    pub fn with_children(mut self) -> Self {
        self.children = true;
        self
    }

    fn wants(&self, type_id: TypeId) -> bool {
        !self.deny.contains(&type_id) && self.allow.as_ref().is_none_or(|a| a.contains(&type_id))
    }
}

/// One entity to make: the original, the values to insert, the index (in the plan) of its
/// parent's clone, and the entity ids its values hold, each with the component holding it.
struct PlannedClone {
    source: Entity,
    values: Vec<ClonedValue>,
    parent: Option<usize>,
    held: Vec<(Entity, &'static str)>,
}

impl World {
    /// Records how to clone `T` (called by `register_pod` and `register_clone`).
    /// Keeps the entity-mapping cloner of a type registered with `register_map_entities`.
    pub(crate) fn add_cloner<T: Clone + Component>(&mut self) {
        fn clone_value<T: Clone + Component>(
            world: &World,
            entity: Entity,
            _held: &mut Vec<Entity>,
        ) -> Option<ClonedValue> {
            let value = world.get::<T>(entity).ok()?.clone();
            Some(Box::new(move |world: &mut World, target: Entity, _| {
                let _ = world.insert(target, (value,));
            }))
        }
        self.cloners
            .entry(TypeId::of::<T>())
            .or_insert(clone_value::<T>);
    }

    /// Makes the clones of `T` hold the clones of the entities it names: when an entity is
    /// cloned with its subtree (or a component names an entity cloned with it), each id `T`
    /// holds that names an entity of the copy is replaced by the id of that entity's clone; an
    /// id naming an entity outside the copy is kept in the same world and refused
    /// ([`CloneError::OutsideTheCopy`]) when cloning into another world. Also makes `T`
    /// clonable if it was not registered for snapshots; its snapshot registration, if any, is
    /// unchanged (snapshots restore the same ids, so they need no mapping).
    ///
    /// ```
    /// # use ecs_core::{ChildOf, CloneOptions, Entity, MapEntities, World};
    /// #[derive(Clone)]
    /// struct Aim(Entity);
    /// impl MapEntities for Aim {
    ///     fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity) {
    ///         self.0.map_entities(map);
    ///     }
    /// }
    /// let mut world = World::new();
    /// world.register_map_entities::<Aim>();
    /// let tank = world.spawn(());
    /// let turret = world.spawn((ChildOf(tank),));
    /// world.insert(tank, (Aim(turret),)).unwrap();
    /// let copy = world.clone_entity_with(tank, &CloneOptions::new().with_children()).unwrap();
    /// let copied_turret = world.children(copy)[0];
    /// assert_eq!(world.get::<Aim>(copy).unwrap().0, copied_turret);
    /// assert_eq!(world.get::<Aim>(tank).unwrap().0, turret); // the original is untouched
    /// ```
    pub fn register_map_entities<T: MapEntities + Clone + Component>(&mut self) {
        fn clone_mapped<T: MapEntities + Clone + Component>(
            world: &World,
            entity: Entity,
            held: &mut Vec<Entity>,
        ) -> Option<ClonedValue> {
            let mut value = world.get::<T>(entity).ok()?.clone();
            value.map_entities(&mut |id| {
                held.push(id);
                id
            });
            Some(Box::new(move |world: &mut World, target: Entity, map| {
                value.map_entities(&mut |id| map(id));
                let _ = world.insert(target, (value,));
            }))
        }
        self.register_component::<T>();
        self.cloners.insert(TypeId::of::<T>(), clone_mapped::<T>);
    }

    /// A new entity with a clone of every component of `entity` that can be cloned (registered
    /// with `register_pod` or `register_clone`; the others are left out, see
    /// [`CloneOptions::strict`] to refuse instead, and the module docs of `world/clone.rs` for
    /// the hierarchy); shorthand for `clone_entity_with(entity, &CloneOptions::new())`.
    ///
    /// # Errors
    /// [`CloneError::NoSuchEntity`]; nothing is spawned then.
    ///
    /// ```
    /// # use ecs_core::{ChildOf, World};
    /// let mut world = World::new();
    /// world.register_pod::<u32>();
    /// let tank = world.spawn(());
    /// let turret = world.spawn((ChildOf(tank), 7u32));
    /// let second = world.clone_entity(turret).unwrap();
    /// assert_eq!(world.get::<u32>(second), Ok(&7));
    /// assert_eq!(world.children(tank), [turret, second]); // a sibling
    /// ```
    pub fn clone_entity(&mut self, entity: Entity) -> Result<Entity, CloneError> {
        self.clone_entity_with(entity, &CloneOptions::new())
    }

    /// [`World::clone_entity`] with options: which types, and whether the subtree too.
    ///
    /// # Errors
    /// As [`World::clone_entity`], for the entity or any descendant cloned.
    ///
    /// ```
    /// # use ecs_core::{ChildOf, CloneOptions, World};
    /// let mut world = World::new();
    /// world.register_pod::<u8>();
    /// let root = world.spawn((0u8,));
    /// let kid = world.spawn((ChildOf(root), 1u8));
    /// world.spawn((ChildOf(kid), 2u8));
    /// let copy = world.clone_entity_with(root, &CloneOptions::new().with_children()).unwrap();
    /// let values: Vec<u8> = world.iter_descendants(copy).map(|e| *world.get::<u8>(e).unwrap()).collect();
    /// assert_eq!(values, [1, 2]);
    /// assert_eq!(world.children(root), [kid]); // the original keeps its own
    /// world.check_invariants();
    /// ```
    pub fn clone_entity_with(
        &mut self,
        entity: Entity,
        options: &CloneOptions,
    ) -> Result<Entity, CloneError> {
        let plan = self.plan_clone(entity, options, true)?;
        let root_parent = self
            .parent(entity)
            .filter(|_| options.wants(TypeId::of::<ChildOf>()));
        Ok(make_clones(self, plan, root_parent))
    }

    /// Clones `entity` (and with the options, its subtree) into `target`, another world;
    /// returns the clone's id there. Relationships of the cloned root are left out.
    ///
    /// # Errors
    /// As [`World::clone_entity`], and [`CloneError::OutsideTheCopy`] when a component
    /// registered with [`World::register_map_entities`] names an entity that is not copied;
    /// nothing is spawned then.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.register_clone::<String>();
    /// let e = world.spawn((String::from("prefab"),));
    /// let mut other = World::new();
    /// let copy = world.clone_entity_into(e, &mut other, &Default::default()).unwrap();
    /// assert_eq!(other.get::<String>(copy).unwrap(), "prefab");
    /// ```
    pub fn clone_entity_into(
        &self,
        entity: Entity,
        target: &mut World,
        options: &CloneOptions,
    ) -> Result<Entity, CloneError> {
        let plan = self.plan_clone(entity, options, false)?;
        let copied: std::collections::HashSet<Entity> = plan.iter().map(|p| p.source).collect();
        for planned in &plan {
            if let Some(&(held, component)) =
                planned.held.iter().find(|(held, _)| !copied.contains(held))
            {
                return Err(CloneError::OutsideTheCopy {
                    entity: planned.source,
                    component,
                    held,
                });
            }
        }
        Ok(make_clones(target, plan, None))
    }

    /// The clones to make, root first, then (with `children`) the descendants depth-first.
    fn plan_clone(
        &self,
        root: Entity,
        options: &CloneOptions,
        same_world: bool,
    ) -> Result<Vec<PlannedClone>, CloneError> {
        if !self.contains(root) {
            return Err(CloneError::NoSuchEntity(root));
        }
        let mut plan = Vec::new();
        let mut pending = vec![(root, None)];
        while let Some((entity, parent)) = pending.pop() {
            let index = plan.len();
            let mut held = Vec::new();
            let values =
                self.clone_values(entity, options, same_world && parent.is_none(), &mut held)?;
            plan.push(PlannedClone {
                source: entity,
                values,
                parent,
                held,
            });
            if options.children {
                for &child in self.children(entity).iter().rev() {
                    pending.push((child, Some(index)));
                }
            }
        }
        Ok(plan)
    }

    /// Clones of the components of `entity` the options want, in component-id order. The
    /// hierarchy's own components are left to [`make_clones`]; other relationships are kept
    /// only where their ids stay meaningful (`keep_relationships`). The entity ids the values
    /// hold go to `held`, each with its component's name.
    fn clone_values(
        &self,
        entity: Entity,
        options: &CloneOptions,
        keep_relationships: bool,
        held: &mut Vec<(Entity, &'static str)>,
    ) -> Result<Vec<ClonedValue>, CloneError> {
        let loc = self
            .location(entity)
            .ok_or(CloneError::NoSuchEntity(entity))?;
        let mut values = Vec::new();
        let mut ids = Vec::new();
        for id in self.archetypes()[loc.archetype.index()].signature().iter() {
            let info = self.components().info(id);
            let type_id = info.type_id();
            if type_id == TypeId::of::<ChildOf>() || type_id == TypeId::of::<Children>() {
                continue;
            }
            if !options.wants(type_id) || info.is_chunk_component() {
                continue;
            }
            if let Some(hooks) = self.callbacks.hooks.get(&type_id) {
                if hooks.relationship_target || (hooks.relationship && !keep_relationships) {
                    continue;
                }
            }
            match self.cloners.get(&type_id) {
                Some(clone) => {
                    values.extend(clone(self, entity, &mut ids));
                    held.extend(ids.drain(..).map(|id| (id, info.name())));
                }
                None if options.strict => {
                    return Err(CloneError::NotClonable {
                        entity,
                        component: info.name(),
                    })
                }
                None => {}
            }
        }
        Ok(values)
    }
}

/// Spawns the planned clones in `world`, all of them first (so every value can be mapped to
/// the clones), then in plan order inserts each one's values and links it under its parent's
/// clone (the root under `root_parent`, if any); returns the root's clone.
fn make_clones(world: &mut World, plan: Vec<PlannedClone>, root_parent: Option<Entity>) -> Entity {
    let made: Vec<Entity> = plan.iter().map(|_| world.spawn(())).collect();
    let clone_of: HashMap<Entity, Entity> = plan
        .iter()
        .zip(&made)
        .map(|(planned, &clone)| (planned.source, clone))
        .collect();
    let map = |id: Entity| clone_of.get(&id).copied().unwrap_or(id);
    for (index, planned) in plan.into_iter().enumerate() {
        let clone = made[index];
        for value in planned.values {
            value(world, clone, &map);
        }
        let parent = match planned.parent {
            Some(i) => Some(made[i]),
            None => root_parent,
        };
        if let Some(parent) = parent {
            let _ = world.insert(clone, (ChildOf(parent),));
        }
    }
    made[0]
}
