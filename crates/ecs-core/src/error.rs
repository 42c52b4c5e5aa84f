//! Error types of the core crate.

use std::fmt;

use crate::entity::Entity;

/// An operation named an entity that is not alive.
///
/// ```
/// # use ecs_core::{EntityError, World};
/// let mut world = World::new();
/// let e = world.spawn(());
/// world.despawn(e).unwrap();
/// assert_eq!(world.despawn(e), Err(EntityError::NoSuchEntity(e)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EntityError {
    /// The handle is stale (despawned, or from before `clear`) or was never issued.
    NoSuchEntity(Entity),
    /// The entity is the target of a relationship whose policy is `DespawnPolicy::Refuse`,
    /// and some entity still points at it; nothing changed.
    DespawnRefused {
        /// The entity that was to be despawned.
        entity: Entity,
        /// The relationship type (the sources' component) that refuses.
        relationship: &'static str,
        /// How many sources point at it.
        sources: usize,
    },
}

impl fmt::Display for EntityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSuchEntity(e) => write!(f, "no such entity: {e:?}"),
            Self::DespawnRefused {
                entity,
                relationship,
                sources,
            } => write!(
                f,
                "entity {entity:?} cannot be despawned: {sources} entities point at it through \
                 `{relationship}`, whose despawn policy is `Refuse` (remove those first)"
            ),
        }
    }
}

impl std::error::Error for EntityError {}

/// [`World::set_parent`](crate::World::set_parent) refused.
///
/// ```
/// # use ecs_core::{HierarchyError, World};
/// let mut world = World::new();
/// let a = world.spawn(());
/// assert_eq!(world.set_parent(a, a), Err(HierarchyError::Cycle { child: a, parent: a }));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HierarchyError {
    /// The entity is not alive.
    NoSuchEntity(Entity),
    /// `parent` is `child` or one of its descendants.
    Cycle {
        /// The entity that was to get a parent.
        child: Entity,
        /// The parent it was to get.
        parent: Entity,
    },
}

impl fmt::Display for HierarchyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSuchEntity(e) => write!(f, "no such entity: {e:?}"),
            Self::Cycle { child, parent } => write!(
                f,
                "{parent:?} cannot be the parent of {child:?}: it is {child:?} or one of its \
                 descendants, so the hierarchy would have a cycle"
            ),
        }
    }
}

impl std::error::Error for HierarchyError {}

/// [`World::clone_entity`](crate::World::clone_entity) could not clone.
///
/// ```
/// # use ecs_core::{CloneError, CloneOptions, World};
/// struct Handle(u32); // registered neither as pod nor as clone
/// let mut world = World::new();
/// let e = world.spawn((Handle(1),));
/// let err = world.clone_entity_with(e, &CloneOptions::new().strict()).unwrap_err();
/// assert!(matches!(err, CloneError::NotClonable { entity, .. } if entity == e));
/// assert!(err.to_string().contains("Handle"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CloneError {
    /// The entity is not alive.
    NoSuchEntity(Entity),
    /// The entity holds a component registered neither with `register_pod` nor with
    /// `register_clone`, the options are [`strict`](crate::CloneOptions::strict), and they do
    /// not leave it out.
    NotClonable {
        /// The entity.
        entity: Entity,
        /// The component's type name.
        component: &'static str,
    },
    /// Cloning into another world, a component registered with
    /// [`World::register_map_entities`](crate::World::register_map_entities) holds an entity id
    /// naming an entity that is not part of the copy: in the other world it would name nothing
    /// (or an unrelated entity).
    OutsideTheCopy {
        /// The entity holding the component.
        entity: Entity,
        /// The component's type name.
        component: &'static str,
        /// The id it holds.
        held: Entity,
    },
}

impl fmt::Display for CloneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSuchEntity(e) => write!(f, "no such entity: {e:?}"),
            Self::NotClonable { entity, component } => write!(
                f,
                "entity {entity:?} holds `{component}`, which cannot be cloned: register it with \
                 `register_clone` (or `register_pod`), leave it out with `CloneOptions::deny`, or \
                 clone without `CloneOptions::strict`"
            ),
            Self::OutsideTheCopy {
                entity,
                component,
                held,
            } => write!(
                f,
                "entity {entity:?} holds `{component}` naming {held:?}, which is not part of the \
                 copy: cloned into another world the id would name nothing there; clone {held:?} \
                 with it (e.g. `CloneOptions::with_children`) or leave `{component}` out with \
                 `CloneOptions::deny`"
            ),
        }
    }
}

impl std::error::Error for CloneError {}

/// A component access failed.
///
/// ```
/// # use ecs_core::{ComponentError, World};
/// let mut world = World::new();
/// let e = world.spawn((1u32,));
/// let err = world.get::<char>(e).unwrap_err();
/// assert!(matches!(err, ComponentError::MissingComponent { component: "char", .. }));
/// assert!(err.to_string().contains("has no `char` component"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ComponentError {
    /// The handle is stale or was never issued.
    NoSuchEntity(Entity),
    /// The entity is alive but lacks the component.
    MissingComponent {
        /// The entity.
        entity: Entity,
        /// The missing type's name.
        component: &'static str,
    },
    /// The component is not enableable (see `World::register_enableable`).
    NotEnableable {
        /// The type's name.
        component: &'static str,
    },
    /// The type is not a chunk component (see `World::register_chunk_component`).
    NotChunkComponent {
        /// The type's name.
        component: &'static str,
    },
    /// `take` would despawn an entity a `Refuse` relationship protects (see
    /// [`EntityError::DespawnRefused`]); nothing changed.
    DespawnRefused {
        /// The entity.
        entity: Entity,
        /// The relationship type that refuses.
        relationship: &'static str,
        /// How many sources point at it.
        sources: usize,
    },
    /// The component is immutable (a relationship, its target list, or a type made so with
    /// `ComponentHooks::immutable`): change it with `insert`, which runs its hooks.
    Immutable {
        /// The entity.
        entity: Entity,
        /// The type's name.
        component: &'static str,
    },
}

impl fmt::Display for ComponentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSuchEntity(e) => write!(f, "no such entity: {e:?}"),
            Self::MissingComponent { entity, component } => {
                write!(f, "entity {entity:?} has no `{component}` component")
            }
            Self::NotEnableable { component } => {
                write!(f, "`{component}` is not an enableable component")
            }
            Self::NotChunkComponent { component } => {
                write!(f, "`{component}` is not a chunk component")
            }
            Self::Immutable { entity, component } => write!(
                f,
                "`{component}` of entity {entity:?} is immutable: change it with `insert`, \
                 which runs its hooks"
            ),
            Self::DespawnRefused {
                entity,
                relationship,
                sources,
            } => EntityError::DespawnRefused {
                entity: *entity,
                relationship,
                sources: *sources,
            }
            .fmt(f),
        }
    }
}

impl std::error::Error for ComponentError {}

impl From<EntityError> for ComponentError {
    fn from(err: EntityError) -> Self {
        match err {
            EntityError::NoSuchEntity(e) => Self::NoSuchEntity(e),
            EntityError::DespawnRefused {
                entity,
                relationship,
                sources,
            } => Self::DespawnRefused {
                entity,
                relationship,
                sources,
            },
        }
    }
}

/// A world could not be built as asked.
///
/// ```
/// # use ecs_core::{World, WorldError};
/// let err = World::with_chunk_size(1000).unwrap_err();
/// assert_eq!(err, WorldError::InvalidChunkSize(1000));
/// assert!(err.to_string().starts_with("invalid chunk size 1000"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WorldError {
    /// `with_chunk_size` takes a power of two from 4 KiB to 1 MiB.
    InvalidChunkSize(usize),
    /// `ChunkPolicy::MinRows(0)`: a chunk holds at least one row.
    ZeroMinRows,
    /// `set_column_alignment` takes a power of two from 1 to 4096.
    InvalidColumnAlignment(usize),
    /// `set_chunk_size_for` came after the archetype was created, so its chunks are sized.
    ArchetypeExists(crate::ArchetypeId),
    /// `set_component_hooks` (or a relationship's registration) for a type that has hooks.
    HooksAlreadySet {
        /// The type's name.
        component: &'static str,
    },
    /// `set_component_hooks` for a type some entity already holds: its `on_add` never ran.
    HooksAfterUse {
        /// The type's name.
        component: &'static str,
    },
    /// `register_required` would make a type require itself, directly or through others.
    RequiredCycle {
        /// The type that was to require another.
        component: &'static str,
        /// The type it was to require, which already requires it (perhaps through others).
        required: &'static str,
    },
}

impl fmt::Display for WorldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidChunkSize(size) => write!(
                f,
                "invalid chunk size {size}: expected a power of two from 4096 to 1048576 bytes"
            ),
            Self::ZeroMinRows => {
                f.write_str("invalid chunk policy: `MinRows` needs at least 1 row")
            }
            Self::InvalidColumnAlignment(bytes) => write!(
                f,
                "invalid column alignment {bytes}: expected a power of two from 1 to 4096 bytes"
            ),
            Self::ArchetypeExists(id) => write!(
                f,
                "archetype {} already exists, so its chunk size is fixed",
                id.index()
            ),
            Self::HooksAlreadySet { component } => {
                write!(f, "`{component}` already has component hooks")
            }
            Self::HooksAfterUse { component } => write!(
                f,
                "`{component}` is already held by an entity: install its hooks before first use"
            ),
            Self::RequiredCycle {
                component,
                required,
            } => write!(
                f,
                "`{component}` cannot require `{required}`: `{required}` already requires \
                 `{component}` (directly or through other types), so spawning either would never end"
            ),
        }
    }
}

impl std::error::Error for WorldError {}

/// An archetype whose single row does not fit in one chunk.
///
/// ```
/// # use ecs_core::RowTooLarge;
/// let err = RowTooLarge {
///     components: vec![("Big", 20_000)],
///     chunk_size: 16_384,
///     row_bytes: 20_008,
/// };
/// assert!(err.to_string().contains("20008 bytes"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowTooLarge {
    /// `(type name, size)` of every column.
    pub components: Vec<(&'static str, usize)>,
    /// The chunk size in bytes.
    pub chunk_size: usize,
    /// Bytes one row needs: entity id, values and alignment padding between columns.
    pub row_bytes: usize,
}

impl fmt::Display for RowTooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "one row of (")?;
        for (i, (name, size)) in self.components.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}{name}: {size} B")?;
        }
        write!(
            f,
            ") needs {} bytes with its entity id and alignment padding, more than a {}-byte chunk holds",
            self.row_bytes, self.chunk_size
        )
    }
}

impl std::error::Error for RowTooLarge {}
