//! Error types of the core crate.

use std::fmt;

use crate::entity::Entity;

/// An operation named an entity that is not alive.
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
