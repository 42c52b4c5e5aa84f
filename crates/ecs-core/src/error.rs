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
}

impl fmt::Display for EntityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSuchEntity(e) => write!(f, "no such entity: {e:?}"),
        }
    }
}

impl std::error::Error for EntityError {}

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
}

impl fmt::Display for ComponentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSuchEntity(e) => write!(f, "no such entity: {e:?}"),
            Self::MissingComponent { entity, component } => {
                write!(f, "entity {entity:?} has no `{component}` component")
            }
        }
    }
}

impl std::error::Error for ComponentError {}

impl From<EntityError> for ComponentError {
    fn from(err: EntityError) -> Self {
        match err {
            EntityError::NoSuchEntity(e) => Self::NoSuchEntity(e),
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
}

impl fmt::Display for WorldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidChunkSize(size) => write!(
                f,
                "invalid chunk size {size}: expected a power of two from 4096 to 1048576 bytes"
            ),
        }
    }
}

impl std::error::Error for WorldError {}
